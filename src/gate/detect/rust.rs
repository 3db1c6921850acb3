//! Rust: the integration tests under `tests/` of the root package and of every workspace
//! member (a directory with its own `Cargo.toml`), run with cargo-nextest when `cargo
//! nextest` runs on the machine, and with `cargo test` otherwise.
//!
//! The choice is made by the command itself, on the machine that runs it, so the judge and
//! the sides agree on the configuration whatever each machine has; the `cargo` report
//! format reads nextest's JUnit when the run wrote it and the output as `cargo test` text
//! otherwise (also when the build failed: its compile errors are load errors there).

use super::detection::{Detection, config};
use crate::gate::config::ReportFormat;

/// The test command: nextest where it runs, else `cargo test`.
const COMMAND: &str = "if cargo nextest --version >/dev/null 2>&1; then cargo nextest run --no-fail-fast --tool-config-file {nextest_config} --profile repromin {test_targets}; else cargo test --no-fail-fast {test_targets}; fi";

/// The data file extensions carried for tests that read them.
const DATA: [&str; 3] = ["json", "txt", "toml"];

/// The Rust defaults for a repository whose file list is `files` (with `Cargo.toml`).
pub(super) fn detect(files: &[String]) -> Detection {
    let mut dirs = vec![String::new()];
    let mut members = Vec::new();
    for file in files {
        let Some(dir) = file.strip_suffix("/Cargo.toml") else {
            continue;
        };
        let has_tests = files
            .iter()
            .any(|f| f.starts_with(&format!("{dir}/tests/")));
        if has_tests {
            dirs.push(format!("{}/", globset::escape(dir)));
            members.push(dir.to_string());
        }
    }
    let mut tests = Vec::new();
    let mut carry = Vec::new();
    for dir in &dirs {
        tests.push(format!("{dir}tests/*.rs"));
        tests.push(format!("{dir}tests/**/*.rs"));
        carry.extend(DATA.iter().map(|ext| format!("{dir}tests/**/*.{ext}")));
    }
    let tests: Vec<&str> = tests.iter().map(String::as_str).collect();
    let carry: Vec<&str> = carry.iter().map(String::as_str).collect();
    let mut notes = vec![
        "Cargo.toml: cargo-nextest where `cargo nextest` runs (its JUnit), else cargo test (its libtest output)"
            .to_string(),
    ];
    if !members.is_empty() {
        notes.push(format!(
            "the tests/ of workspace members {} too, each run with -p PACKAGE",
            members.join(", ")
        ));
    }
    Detection {
        config: config(
            &tests,
            &carry,
            &["cargo fetch --quiet"],
            COMMAND,
            ReportFormat::Cargo,
        ),
        ecosystem: "rust",
        notes,
        workspace: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::detect::tests::files;

    #[test]
    fn workspace_members_with_tests_are_selected_too() {
        let found = detect(&files(&[
            "Cargo.toml",
            "data-url/Cargo.toml",
            "data-url/tests/wpt.rs",
            "data-url/tests/data-urls.json",
            "idna/Cargo.toml",
            "idna/src/lib.rs",
            "odd[1]/Cargo.toml",
            "odd[1]/tests/a.rs",
        ]));
        assert_eq!(
            found.config.tests,
            [
                "tests/*.rs",
                "tests/**/*.rs",
                "data-url/tests/*.rs",
                "data-url/tests/**/*.rs",
                "odd[[]1[]]/tests/*.rs",
                "odd[[]1[]]/tests/**/*.rs"
            ]
        );
        assert!(
            found
                .config
                .carry
                .contains(&"data-url/tests/**/*.json".to_string())
        );
        assert_eq!(found.config.report, ReportFormat::Cargo);
        assert_eq!(
            found.notes[1],
            "the tests/ of workspace members data-url, odd[1] too, each run with -p PACKAGE"
        );
        let globs = globset::Glob::new(&found.config.tests[4]).unwrap();
        assert!(globs.compile_matcher().is_match("odd[1]/tests/a.rs"));
    }
}
