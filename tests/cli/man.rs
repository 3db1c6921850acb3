//! `repromin man`: the pages are generated from the clap definitions and snapshotted like
//! `--help`; groff checks that they render.

use std::path::Path;
use std::process::Command;

use repromin::exit_code::Exit;

use crate::util::{Area, require_tool, run, stderr, stdout, tool_runs};

/// The version appears in every page's header; snapshots should not change with it.
fn without_version(text: &str) -> String {
    text.replace(env!("CARGO_PKG_VERSION"), "[VERSION]")
}

/// The page `repromin man` prints (it must succeed and say nothing else).
fn main_page() -> String {
    let area = Area::new();
    let o = run(&["man"], area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    stdout(&o)
}

#[test]
fn man_page() {
    insta::assert_snapshot!(without_version(&main_page()));
}

/// The pages of `repromin man --dir DIR`, by file name, and what it printed.
fn pages(area: &Area, dir: &str) -> (Vec<String>, String) {
    let o = run(&["man", "--dir", dir], area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(area.path(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    (names, stdout(&o))
}

#[test]
fn man_dir_writes_one_page_per_visible_command_and_lists_them() {
    let area = Area::new();
    let (names, printed) = pages(&area, "share/man/man1");
    assert_eq!(
        names,
        [
            "repromin-completions.1",
            "repromin-demo.1",
            "repromin-doctor.1",
            "repromin-exec.1",
            "repromin-judge.1",
            "repromin-line.1",
            "repromin-man.1",
            "repromin-reduce.1",
            "repromin-run.1",
            "repromin-worker.1",
            "repromin.1",
        ]
    );
    insta::assert_snapshot!(printed, @r"
    share/man/man1/repromin.1
    share/man/man1/repromin-reduce.1
    share/man/man1/repromin-doctor.1
    share/man/man1/repromin-exec.1
    share/man/man1/repromin-judge.1
    share/man/man1/repromin-run.1
    share/man/man1/repromin-line.1
    share/man/man1/repromin-demo.1
    share/man/man1/repromin-completions.1
    share/man/man1/repromin-man.1
    share/man/man1/repromin-worker.1
    ");
    let read = |name: &str| std::fs::read_to_string(area.path("share/man/man1").join(name));
    assert_eq!(read("repromin.1").unwrap(), main_page());
    let reduce = read("repromin-reduce.1").unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        reduce.starts_with(&format!(
            ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n.TH repromin-reduce 1  \"repromin {version}\""
        )),
        "{reduce}"
    );
    for option in ["\\-\\-no\\-trace", "\\-\\-session", ".SH SAMPLING"] {
        assert!(reduce.contains(option), "{option} is missing");
    }
}

#[test]
fn man_dir_replaces_the_pages_it_finds() {
    let area = Area::new();
    area.write("man", &[("repromin.1", "stale"), ("other.1", "kept")]);
    pages(&area, "man");
    assert_eq!(
        std::fs::read_to_string(area.path("man/repromin.1")).unwrap(),
        main_page()
    );
    assert_eq!(
        std::fs::read_to_string(area.path("man/other.1")).unwrap(),
        "kept"
    );
}

#[test]
fn man_dir_that_cannot_be_created_is_an_io_error() {
    let area = Area::new();
    area.write(".", &[("taken", "a file")]);
    let o = run(&["man", "--dir", "taken/man1"], area.dir.path());
    assert_eq!(o.status.code(), Some(Exit::Io as i32));
    assert_eq!(stdout(&o), "");
    insta::assert_snapshot!(stderr(&o), @"error: cannot create taken/man1: Not a directory (os error 20)");
}

#[test]
fn man_dir_never_writes_through_a_symlink() {
    let area = Area::new();
    area.write(".", &[("victim", "keep me\n")]);
    std::fs::create_dir(area.path("man1")).unwrap();
    std::os::unix::fs::symlink(area.path("victim"), area.path("man1/repromin.1")).unwrap();
    let o = run(&["man", "--dir", "man1"], area.dir.path());
    assert_eq!(o.status.code(), Some(Exit::Io as i32));
    assert!(
        stderr(&o).contains("cannot write man1/repromin.1"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(area.path("victim")).unwrap(),
        "keep me\n"
    );
}

/// groff's warnings (all of them, `-ww`) about `page`, formatted as man(1) does.
fn groff_warnings(page: &Path) -> String {
    let o = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .arg(page)
        .output()
        .unwrap();
    assert!(o.status.success(), "groff {}: {o:?}", page.display());
    stderr(&o)
}

#[test]
fn every_page_renders_without_a_groff_warning() {
    if !require_tool("groff", tool_runs("groff")) {
        return;
    }
    let area = Area::new();
    let (names, _) = pages(&area, "man1");
    for name in names {
        let warnings = groff_warnings(&area.path("man1").join(&name));
        assert_eq!(warnings, "", "{name}");
    }
}
