//! Samples and checks shared by the syntax tests, and the tests of the module's API as a whole:
//! broken, empty, odd, deep, oversized and slow inputs, and random deletions.

use std::ops::Range;
use std::time::Duration;

use super::lang::parse;
use super::*;

pub(super) const PYTHON: &str = r#"import os
from collections import OrderedDict, defaultdict

@dataclass
class Point:
    x: int = 0
    y: int = 0

    def norm(self, scale):
        return (self.x ** 2 + self.y ** 2) * scale


def combine(alpha, beta, gamma=3):
    values = [1, 2, 3]
    total = sum(values)  # running total
    result = compute(alpha, beta, gamma)
    if total > 2:
        print(total)
    return result


x = foo(bar(1))
"#;

pub(super) const RUST: &str = r#"use std::collections::HashMap;
use std::fmt::{self, Display};

#[derive(Debug, Clone)]
pub struct Point {
    x: i32,
    y: i32,
}

impl Point {
    /// Squared length.
    pub fn norm(&self, scale: i32) -> i32 {
        (self.x * self.x + self.y * self.y) * scale
    }
}

fn combine(alpha: i32, beta: i32, gamma: i32) -> i32 {
    let values = vec![1, 2, 3];
    let arr = [4, 5, 6];
    let total: i32 = arr.iter().sum();
    let result = compute(alpha, beta, gamma);
    if total > 2 {
        println!("{}", total);
    }
    result
}
"#;

pub(super) const JAVASCRIPT: &str = r#"import fs from "fs";
import { join, resolve } from "path";

class Point {
  constructor(x, y) {
    this.x = x;
    this.y = y;
  }
  norm(scale) {
    return (this.x * this.x + this.y * this.y) * scale;
  }
}

function combine(alpha, beta, gamma) {
  const values = [1, 2, 3];
  const total = values.reduce((a, b) => a + b, 0); // sum
  const result = compute(alpha, beta, gamma);
  if (total > 2) {
    console.log(total);
  }
  return result;
}

export { combine, Point };
"#;

pub(super) const TYPESCRIPT: &str = r#"import { readFileSync } from "fs";
import type { Config } from "./config";

interface Shape {
  area(): number;
  name: string;
}

export class Point implements Shape {
  private x: number;
  private y: number;
  name = "point";
  constructor(x: number, y: number) {
    this.x = x;
    this.y = y;
  }
  area(): number {
    return 0;
  }
}

function combine(alpha: number, beta: string, gamma: boolean): number {
  const values: number[] = [1, 2, 3];
  const result = compute(alpha, beta, gamma);
  if (values.length > 2) {
    console.log(result);
  }
  return result;
}
"#;

pub(super) const TSX: &str = r#"import React from "react";
import { useState, useEffect } from "react";

type Props = { title: string; count: number };

export function Panel({ title, count }: Props) {
  const [open, setOpen] = useState(false);
  const items = [1, 2, 3];
  const label = format(title, count, open);
  return (
    <div className="panel" id="main">
      <h1>{label}</h1>
      <ul>{items.map((i) => <li key={i}>{i}</li>)}</ul>
    </div>
  );
}

class Store {
  value = 0;
  bump(by: number) {
    this.value += by;
  }
}
"#;

pub(super) const JAVA: &str = r#"package demo;

import java.util.List;
import java.util.ArrayList;

public class Point {
    private int x;
    private int y;

    public Point(int x, int y) {
        this.x = x;
        this.y = y;
    }

    @Override
    public int combine(int alpha, int beta, int gamma) {
        int[] values = {1, 2, 3};
        List<Integer> list = new ArrayList<>();
        int result = compute(alpha, beta, gamma);
        if (result > 2) {
            System.out.println(result);
        }
        return result;
    }

    static int compute(int a, int b, int c) { return a + b + c; }
}
"#;

pub(super) const GO: &str = r#"package main

import (
	"fmt"
	"strings"
)

type Point struct {
	X int
	Y int
}

func (p Point) Norm(scale int) int {
	return (p.X*p.X + p.Y*p.Y) * scale
}

func combine(alpha int, beta string, gamma bool) int {
	values := []int{1, 2, 3}
	result := compute(alpha, beta, gamma)
	if result > 2 {
		fmt.Println(strings.ToUpper("x"), values)
	}
	return result
}
"#;

pub(super) const C: &str = r#"#include <stdio.h>
#include <stdlib.h>

struct point {
    int x;
    int y;
};

/* Adds three numbers. */
static int compute(int a, int b, int c) { return a + b + c; }

int combine(int alpha, int beta, int gamma) {
    int values[] = {1, 2, 3};
    int result = compute(alpha, beta, gamma);
    if (result > 2) {
        printf("%d\n", result);
    }
    return result;
}
"#;

pub(super) const CPP: &str = r#"#include <vector>
#include <string>

namespace geo {
class Point {
public:
    Point(int x, int y) : x_(x), y_(y) {}
    int norm(int scale) const { return (x_ * x_ + y_ * y_) * scale; }
private:
    int x_;
    int y_;
};
}

int combine(int alpha, int beta, int gamma) {
    std::vector<int> values = {1, 2, 3};
    int result = compute(alpha, beta, gamma);
    if (result > 2) {
        std::printf("%d\n", result);
    }
    return result;
}
"#;

pub(super) fn samples() -> Vec<(Lang, &'static str)> {
    vec![
        (Lang::Python, PYTHON),
        (Lang::Rust, RUST),
        (Lang::JavaScript, JAVASCRIPT),
        (Lang::TypeScript, TYPESCRIPT),
        (Lang::Tsx, TSX),
        (Lang::Java, JAVA),
        (Lang::Go, GO),
        (Lang::C, C),
        (Lang::Cpp, CPP),
    ]
}

pub(super) fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("utf-8 output")
}

/// Every single deletion, as (level, group, index, text after deleting).
pub(super) fn single_deletions(lang: Lang, src: &str) -> Vec<(usize, usize, usize, String)> {
    let levels = deletion_levels(lang, src.as_bytes()).expect("levels");
    let mut out = Vec::new();
    for (d, groups) in levels.iter().enumerate() {
        for (g, group) in groups.iter().enumerate() {
            for (i, r) in group.iter().enumerate() {
                out.push((d, g, i, text(apply_deletion(src.as_bytes(), r))));
            }
        }
    }
    out
}

pub(super) fn assert_deletion(lang: Lang, src: &str, from: &str, to: &str) {
    assert_eq!(
        src.matches(from).count(),
        1,
        "{lang}: {from:?} must occur once"
    );
    let expected = src.replacen(from, to, 1);
    let found = single_deletions(lang, src)
        .into_iter()
        .any(|(_, _, _, out)| out == expected);
    assert!(found, "{lang}: no deletion turns {from:?} into {to:?}");
}

pub(super) fn assert_no_deletion(lang: Lang, src: &str, from: &str, to: &str) {
    let expected = src.replacen(from, to, 1);
    let found = single_deletions(lang, src)
        .into_iter()
        .any(|(_, _, _, out)| out == expected);
    assert!(!found, "{lang}: a deletion turns {from:?} into {to:?}");
}

pub(super) fn assert_replacement(lang: Lang, src: &str, range: &str, with: &str) {
    let reps = replacements(lang, src.as_bytes()).expect("replacements");
    let found = reps
        .iter()
        .any(|r| &src[r.range.clone()] == range && &src[r.with.clone()] == with);
    assert!(found, "{lang}: no replacement of {range:?} by {with:?}");
    let out = src.replacen(range, with, 1);
    assert!(
        parses_cleanly(lang, out.as_bytes()).expect("parse"),
        "{lang}: {out}"
    );
}

pub(super) fn is_separator_overlap(src: &[u8], overlap: Range<usize>) -> bool {
    let bytes = &src[overlap];
    matches!(bytes.first(), Some(b',' | b';')) && bytes[1..].iter().all(u8::is_ascii_whitespace)
}

/// Bounds, order, disjointness, char boundaries and nesting of levels.
pub(super) fn check_structure(lang: Lang, src: &[u8]) {
    let levels = deletion_levels(lang, src).expect("levels");
    let utf8 = std::str::from_utf8(src).ok();
    for (d, groups) in levels.iter().enumerate() {
        assert!(!groups.is_empty(), "{lang}: level {d} is empty");
        // The groups of one level never overlap: their elements form one list.
        let mut spans: Vec<(usize, usize)> = groups
            .iter()
            .filter_map(|g| Some((g.first()?.start, g.iter().map(|r| r.end).max()?)))
            .collect();
        spans.sort_unstable();
        for pair in spans.windows(2) {
            assert!(
                pair[0].1 <= pair[1].0,
                "{lang}: groups {:?} and {:?} of level {d} overlap",
                pair[0],
                pair[1]
            );
        }
        for group in groups {
            assert!(!group.is_empty(), "{lang}: empty group at level {d}");
            for (i, r) in group.iter().enumerate() {
                assert!(
                    r.start < r.end && r.end <= src.len(),
                    "{lang}: bad range {r:?}"
                );
                if let Some(s) = utf8 {
                    assert!(
                        s.is_char_boundary(r.start) && s.is_char_boundary(r.end),
                        "{lang}: {r:?}"
                    );
                }
                if i == 0 {
                    continue;
                }
                let prev = &group[i - 1];
                assert!(
                    prev.start < r.start && prev.end < r.end,
                    "{lang}: unsorted {prev:?} {r:?}"
                );
                if r.start < prev.end {
                    assert_eq!(
                        i,
                        group.len() - 1,
                        "{lang}: only the last element may overlap"
                    );
                    assert!(
                        is_separator_overlap(src, r.start..prev.end),
                        "{lang}: overlap {:?} is not a separator",
                        String::from_utf8_lossy(&src[r.start..prev.end])
                    );
                }
            }
            if d > 0 {
                let lo = group.iter().map(|r| r.start).min().unwrap_or(0);
                let hi = group.iter().map(|r| r.end).max().unwrap_or(0);
                let inside = levels[d - 1]
                    .iter()
                    .flatten()
                    .any(|e| e.start <= lo && hi <= e.end);
                assert!(
                    inside,
                    "{lang}: group {group:?} at level {d} is not inside a level {} element",
                    d - 1
                );
            }
        }
    }
}

#[test]
fn broken_input_still_yields_candidates() {
    let broken = [
        (
            Lang::Python,
            "def f(x:\n    return [1, 2\nclass A:\n    pass\n",
        ),
        (Lang::Rust, "fn f( { let x = ; }\nstruct S { a: u8, }\n"),
        (
            Lang::JavaScript,
            "function f( { return [1, 2; }\nconst a = 1;\n",
        ),
        (
            Lang::TypeScript,
            "interface I { a: ; }\nlet x: number = ;\nf(1, 2);\n",
        ),
        (Lang::Tsx, "const e = <div><span></div>;\nf(1, 2);\n"),
        (Lang::Java, "class A { void f( { g(1, 2); }\n"),
        (Lang::Go, "package main\nfunc f( {\n\tg(1, 2)\n}\n"),
        (
            Lang::C,
            "int f(int a, { return a +; }\nint g(int b) { return b; }\n",
        ),
        (Lang::Cpp, "class A { int x; void f( }; int y = {1, 2};\n"),
    ];
    for (lang, src) in broken {
        assert!(
            !parses_cleanly(lang, src.as_bytes()).expect("parse"),
            "{lang}: should have errors"
        );
        let levels = deletion_levels(lang, src.as_bytes()).expect("levels");
        assert!(!levels.is_empty(), "{lang}: no candidates for broken input");
        check_structure(lang, src.as_bytes());
        let reps = replacements(lang, src.as_bytes()).expect("replacements");
        for r in reps {
            let _ = r.apply(src.as_bytes());
        }
    }
}

#[test]
fn missing_nodes_count_as_errors() {
    assert!(!parses_cleanly(Lang::C, b"int main(void) { return 0 }\n").expect("parse"));
    assert!(!parses_cleanly(Lang::Java, b"class A { void f() { g() } }\n").expect("parse"));
    assert!(parses_cleanly(Lang::C, b"int main(void) { return 0; }\n").expect("parse"));
}

#[test]
fn empty_input_gives_nothing() {
    for lang in Lang::ALL {
        assert!(
            deletion_levels(lang, b"").expect("levels").is_empty(),
            "{lang}"
        );
        assert!(
            replacements(lang, b"").expect("replacements").is_empty(),
            "{lang}"
        );
        assert!(parses_cleanly(lang, b"").expect("parse"), "{lang}");
    }
}

#[test]
fn odd_bytes_do_not_panic() {
    let inputs: [&[u8]; 6] = [
        b"\xff\xfe\x00garbage(1, 2)\n",
        b"x = \"\xc3\x28\"\nf(a, b)\n",
        b"\n\n\n",
        b"((((((((",
        b"}}}}]]]))",
        "f(é, ü, 名)\n// ünïcödé 🎉\n".as_bytes(),
    ];
    for lang in Lang::ALL {
        for src in inputs {
            let levels = deletion_levels(lang, src).expect("levels");
            for r in levels.iter().flatten().flatten() {
                assert!(r.end <= src.len());
                let _ = apply_deletion(src, r);
            }
            for r in replacements(lang, src).expect("replacements") {
                let _ = r.apply(src);
            }
            let _ = parses_cleanly(lang, src).expect("parse");
        }
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 5000;
    let src = format!("x = {}1{}\n", "[".repeat(depth), "]".repeat(depth));
    let levels = deletion_levels(Lang::Python, src.as_bytes()).expect("levels");
    assert!(levels.len() > 100);
    let reps = replacements(Lang::Python, src.as_bytes()).expect("replacements");
    assert!(!reps.is_empty());
}

#[test]
fn oversized_input_is_refused() {
    let src = vec![b' '; MAX_INPUT_BYTES + 1];
    for result in [
        deletion_levels(Lang::C, &src).map(|_| ()),
        replacements(Lang::C, &src).map(|_| ()),
        parses_cleanly(Lang::C, &src).map(|_| ()),
    ] {
        match result {
            Err(SyntaxError::TooLarge { size, limit }) => {
                assert_eq!((size, limit), (MAX_INPUT_BYTES + 1, MAX_INPUT_BYTES));
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
    }
}

#[test]
fn parse_is_cancelled_after_the_timeout() {
    let src = "f(1, 2, 3);\n".repeat(2000);
    match parse(Lang::C, src.as_bytes(), Duration::ZERO) {
        Err(e @ SyntaxError::Timeout { .. }) => {
            assert!(e.to_string().contains("did not finish"))
        }
        other => panic!(
            "expected a timeout, got {:?}",
            other.map(|t| t.root_node().kind())
        ),
    }
    assert!(parse(Lang::C, src.as_bytes(), PARSE_TIMEOUT).is_ok());
}

use crate::test_rng::XorShift;

#[test]
fn random_subsets_keep_utf8() {
    let unicode =
        "# café ☕\ndef grüß(α, β, γ):\n    s = ['é', 'ü', '名前']\n    return f(α, β, γ)  # 🎉\n";
    let mut inputs = samples();
    inputs.push((Lang::Python, unicode));
    inputs.push((
        Lang::JavaScript,
        "const ñ = ['é', 'ü', \"名\"]; // ✓\nf(ñ, 'ß', `ü`);\n",
    ));
    inputs.push((
        Lang::Rust,
        "fn é() { let v = ['é', 'ü', '名']; g(\"ß\", v, 1); } // ✓\n",
    ));
    let mut rng = XorShift::new(0x9E37_79B9_7F4A_7C15);
    for (lang, src) in inputs {
        let levels = deletion_levels(lang, src.as_bytes()).expect("levels");
        for group in levels.iter().flatten() {
            for _ in 0..20 {
                let selected: Vec<usize> = (0..group.len())
                    .filter(|_| rng.next_u64() & 1 == 0)
                    .collect();
                let out = apply_deletions(src.as_bytes(), group, &selected);
                assert!(out.len() <= src.len());
                assert!(
                    String::from_utf8(out).is_ok(),
                    "{lang}: {selected:?} of {group:?}"
                );
            }
        }
        for r in replacements(lang, src.as_bytes()).expect("replacements") {
            assert!(
                String::from_utf8(r.apply(src.as_bytes())).is_ok(),
                "{lang}: {r:?}"
            );
        }
    }
}

#[test]
fn random_ranges_never_panic() {
    let mut rng = XorShift::new(42);
    let src = PYTHON.as_bytes();
    for _ in 0..500 {
        let len = usize::try_from(rng.next_u64() % 2000).unwrap_or(0);
        let a = usize::try_from(rng.next_u64() % 2000).unwrap_or(0);
        let b = usize::try_from(rng.next_u64() % 2000).unwrap_or(0);
        let group: Vec<Range<usize>> = vec![a..b, b..a, len..len + 3];
        let _ = apply_deletions(src, &group, &[0, 1, 2]);
        let _ = Replacement {
            range: a..b,
            with: b..a,
        }
        .apply(src);
    }
}

#[test]
fn the_smallest_enclosing_range_is_the_innermost_deletable_node() {
    let src = "def f():\n    a = helper(1)\n    return a\n";
    let levels = deletion_levels(Lang::Python, src.as_bytes()).expect("levels");
    let at = src.find("helper").expect("helper");
    let r = smallest_enclosing(&levels, &(at..at + 6)).expect("a range");
    assert_eq!(&src[r], "    a = helper(1)\n");
}

#[test]
fn a_top_level_item_can_give_way_to_a_comment_it_holds() {
    let cases = [
        (
            Lang::Rust,
            "struct A {\n    x: u8,\n    /* keep */\n}\nfn f() {}\n",
            "struct A {\n    x: u8,\n    /* keep */\n}",
            "/* keep */",
        ),
        (
            Lang::Python,
            "class A:\n    x = 1\n    # keep\n    y = 2\n",
            "class A:\n    x = 1\n    # keep\n    y = 2",
            "# keep",
        ),
        (
            Lang::JavaScript,
            "function f() {\n  g(); // keep\n}\n",
            "function f() {\n  g(); // keep\n}",
            "// keep",
        ),
        (
            Lang::C,
            "struct s { int a; /* keep */ };\n",
            "struct s { int a; /* keep */ }",
            "/* keep */",
        ),
    ];
    for (lang, src, item, comment) in cases {
        assert_replacement(lang, src, item, comment);
    }
    // Not below the top level, and not where something else can stand in for the item.
    let src = "impl A {\n    fn f() {\n        // deep\n    }\n}\n";
    let reps = replacements(Lang::Rust, src.as_bytes()).expect("replacements");
    assert!(
        reps.iter()
            .all(|r| !src[r.with.clone()].starts_with("// deep") || r.range.start == 0),
        "{reps:?}"
    );
    assert!(
        reps.iter()
            .any(|r| r.range.start == 0 && &src[r.with.clone()] == "// deep"),
        "the top-level impl holds the comment: {reps:?}"
    );
    let src = "x = f(1)  # note\n";
    let reps = replacements(Lang::Python, src.as_bytes()).expect("replacements");
    assert!(
        reps.iter().all(|r| &src[r.with.clone()] != "# note"),
        "{reps:?}"
    );
}

#[test]
fn the_search_leaves_out_the_parameters_the_body_still_uses() {
    let cases = [
        (
            Lang::Python,
            "def f(a, b, c=a, d: int = 1):\n    return a + d\ng = lambda x, y: x\n",
            vec!["a, ", "b, ", "c=a, ", ", d: int = 1", "x, ", ", y"],
            vec!["b, ", "c=a, ", ", y"],
        ),
        (
            Lang::C,
            "int f(int a, long b, char c) { return c; }\nint g(int a, long b, char c);\n",
            vec!["long b, ", ", char c", "long b, ", ", char c"],
            vec!["long b, ", "long b, ", ", char c"],
        ),
        (
            Lang::JavaScript,
            "function f(a, b) { return b; }\n",
            vec!["a, ", ", b"],
            vec!["a, "],
        ),
    ];
    for (lang, src, all, searched) in cases {
        let params = |levels: Levels| -> Vec<String> {
            levels
                .iter()
                .flatten()
                .flatten()
                .map(|r| src[r.clone()].to_string())
                .filter(|t| all.contains(&t.as_str()))
                .collect()
        };
        let every = params(deletion_levels(lang, src.as_bytes()).expect("levels"));
        assert_eq!(every, all, "{lang}");
        let left = params(search_levels(lang, src.as_bytes()).expect("levels"));
        assert_eq!(left, searched, "{lang}");
    }
}

#[test]
fn the_search_leaves_out_the_value_a_rust_function_returns() {
    let src = "fn f() -> u8 {\n    let x = 1;\n    x\n}\nfn g() {\n    h(2)\n}\nfn k() -> () { h(3) }\nfn s() -> u8 { todo!() }\nfn c() -> u8 {\n    let y = || { h(4) };\n    y()\n}\n";
    let texts = |levels: Levels| -> Vec<String> {
        let mut texts: Vec<String> = levels
            .iter()
            .flatten()
            .flatten()
            .map(|r| src[r.clone()].trim().to_string())
            .collect();
        texts.sort();
        texts.dedup();
        texts
    };
    let every = texts(deletion_levels(Lang::Rust, src.as_bytes()).expect("levels"));
    let searched = texts(search_levels(Lang::Rust, src.as_bytes()).expect("levels"));
    for tail in ["x", "todo!()", "y()"] {
        assert!(every.contains(&tail.to_string()), "{tail}: {every:?}");
        assert!(
            !searched.contains(&tail.to_string()),
            "{tail}: {searched:?}"
        );
    }
    // The statements before it, the tails of functions that return `()` and of a closure
    // stay offered.
    for kept in ["let x = 1;", "h(2)", "h(3)", "h(4)", "let y = || { h(4) };"] {
        assert!(searched.contains(&kept.to_string()), "{kept}: {searched:?}");
    }
}
