//! `--help` is part of the documentation: snapshot it.

use crate::util::{Area, run, stdout};

fn help(args: &[&str]) -> String {
    let area = Area::new();
    let o = run(args, area.dir.path());
    assert!(o.status.success());
    stdout(&o)
}

#[test]
fn top_level_help() {
    insta::assert_snapshot!(help(&["--help"]));
}

#[test]
fn reduce_help() {
    insta::assert_snapshot!(help(&["reduce", "--help"]));
}

#[test]
fn doctor_help() {
    insta::assert_snapshot!(help(&["doctor", "--help"]));
}

#[test]
fn exec_help() {
    insta::assert_snapshot!(help(&["exec", "--help"]));
}

#[test]
fn judge_help() {
    insta::assert_snapshot!(help(&["judge", "--help"]));
}

#[test]
fn run_help() {
    insta::assert_snapshot!(help(&["run", "--help"]));
}

#[test]
fn line_help() {
    insta::assert_snapshot!(help(&["line", "--help"]));
}

#[test]
fn demo_help() {
    insta::assert_snapshot!(help(&["demo", "--help"]));
}

#[test]
fn worker_help() {
    insta::assert_snapshot!(help(&["worker", "--help"]));
}
