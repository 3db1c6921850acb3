//! How fine `repromin reduce` goes: chosen by the run without `--level`, forced with it, and
//! the rewrite pass that ends a tiny file's search.

use crate::util::{Area, files, report, require_tool, run, stderr, tool_runs};

/// A C file whose only `nextHi` is a macro: deletions alone end on `#define nextHi`.
const SOURCE: &str = "#define nextHi\nint main(void) { return 0; }\n";
/// Interesting while the file compiles (C89 allows a declaration without a type) and still
/// names `nextHi`.
const ORACLE: &str = "gcc -std=gnu89 -fsyntax-only a.c && grep -q '\\<nextHi\\>' a.c";

fn reduce(area: &Area, out: &str, extra: &[&str]) -> (String, serde_json::Value) {
    let mut args = vec!["reduce", "src", out, "--exit-code", "0", "--no-progress"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "sh", "-c", ORACLE]);
    let o = run(&args, area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path(out));
    (kept["a.c"].clone(), report(&area.path(out)))
}

#[test]
fn a_small_file_goes_on_to_characters_and_a_rewrite_at_the_defaults() {
    if !require_tool("gcc", tool_runs("gcc")) {
        return;
    }
    let area = Area::new();
    area.write("src", &[("a.c", SOURCE)]);
    let (kept, r) = reduce(&area, "auto", &[]);
    // One deleted run (`#define `) and one inserted token (`;`): half of what deletions reach.
    assert_eq!(kept, "nextHi;", "{r:#}");
    let level = &r["execution"]["level"];
    assert_eq!(level["how"], "auto", "{level:#}");
    assert_eq!(level["level"], "chars", "{level:#}");
    let steps = level["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{level:#}");
    assert_eq!(steps[0]["level"], "tokens");
    assert_eq!(steps[1]["level"], "chars");
    assert!(steps.iter().all(|s| s["ran"] == true), "{level:#}");
    assert!(
        steps[1]["reason"]
            .as_str()
            .unwrap()
            .contains("within the runs a small input is always given"),
        "{level:#}"
    );
    let passes = r["execution"]["passes"].as_array().unwrap();
    assert!(passes.contains(&"rewrite".into()), "{passes:?}");
    let rewrites: Vec<&serde_json::Value> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["phase"] == "rewrite")
        .collect();
    assert_eq!(rewrites.len(), 1, "{:#}", r["events"]);
    let md = std::fs::read_to_string(area.path("auto.repromin/REPROMIN.md")).unwrap();
    assert!(md.contains("Level: chars, chosen by the run."), "{md}");
}

#[test]
fn a_given_level_is_kept_and_said() {
    if !require_tool("gcc", tool_runs("gcc")) {
        return;
    }
    let area = Area::new();
    area.write("src", &[("a.c", SOURCE)]);
    let (kept, r) = reduce(&area, "tokens", &["--level", "tokens"]);
    assert_eq!(kept.trim_end(), "#define nextHi", "{r:#}");
    let level = &r["execution"]["level"];
    assert_eq!(level["how"], "given", "{level:#}");
    assert_eq!(level["level"], "tokens", "{level:#}");
    assert!(level["steps"].as_array().unwrap().is_empty());
    let passes = r["execution"]["passes"].as_array().unwrap();
    assert!(!passes.contains(&"chars".into()), "{passes:?}");
    let (_, r) = reduce(&area, "lines", &["--passes", "lines"]);
    assert_eq!(r["execution"]["level"]["how"], "passes");
    assert_eq!(r["execution"]["level"]["level"], "lines");
}

#[test]
fn a_slow_command_on_what_lines_leave_stops_at_lines() {
    if !require_tool("gcc", tool_runs("gcc")) {
        return;
    }
    let area = Area::new();
    // What the failure needs is a line of 2,400 bytes, and each run takes a second: tokens
    // would take about 3,700 runs (more than a small input is always given), 1,850 s at
    // two a time, over the minute allowed.
    let long = "A".repeat(2400);
    area.write(
        "src",
        &[(
            "a.c",
            &format!("#define nextHi {long}\nint main(void) {{ return 0; }}\n"),
        )],
    );
    let oracle = format!("sleep 1; {ORACLE} && grep -q 'nextHi A\\{{2400\\}}' a.c");
    let args = [
        "reduce",
        "src",
        "out",
        "--exit-code",
        "0",
        "--no-progress",
        "--jobs",
        "2",
        "--",
        "sh",
        "-c",
        &oracle,
    ];
    let o = run(&args, area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report(&area.path("out"));
    let level = &r["execution"]["level"];
    assert_eq!(level["how"], "auto", "{level:#}");
    assert_eq!(level["level"], "lines", "{level:#}");
    let steps = level["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{level:#}");
    assert_eq!(steps[0]["level"], "tokens");
    assert_eq!(steps[0]["ran"], false);
    assert!(
        steps[0]["reason"]
            .as_str()
            .unwrap()
            .contains("over the default allowance"),
        "{level:#}"
    );
    let passes = r["execution"]["passes"].as_array().unwrap();
    assert!(!passes.contains(&"tokens".into()), "{passes:?}");
}
