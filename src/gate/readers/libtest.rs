//! The plain text that stable `cargo test` prints: results by target, failure sections,
//! and compile errors as load errors of the target's test files.

use std::sync::LazyLock;

use regex::Regex;

use super::common::{Builder, Files, MAX_MESSAGE, regex};
use crate::gate::test_report::Status;

pub(super) static RUNNING: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*Running (\S.*?)(?: \(.*\))?$"));
pub(super) static TEST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^test (.+?)(?: - should panic)? \.\.\. (ok|FAILED|ignored)(?:, .*)?$")
});
pub(super) static SECTION: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^---- (.+) (?:stdout|stderr) ----$"));
pub(super) static COMPILE_ERROR: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^error(?:\[E\d{4}\])?: "));
pub(super) static COULD_NOT: LazyLock<Regex> =
    LazyLock::new(|| regex(r#"^error: could not compile `[^`]+`(?: \(test "([^"]+)"\))?"#));
pub(super) static SECTION_END: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(---- |failures:$|test result:)"));
pub(super) static ARROW: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*--> (.+?):\d+:\d+$"));

/// The file of a `Running` line such as `tests/x.rs (target/debug/deps/x-hash)`; `unittests`
/// targets give `None`. A path that names the tail of one selected file stands for that
/// file (cargo names a workspace member's target from the member's directory); a tail of
/// several selected files stands for none of them (`None`): which package ran is unknown.
pub(super) fn libtest_target(source: &str, files: &Files) -> Option<String> {
    let path = files
        .normalize(source)
        .filter(|_| !source.starts_with("unittests "))?;
    match files
        .pick(|f| f == path || f.ends_with(&format!("/{path}")))
        .as_slice()
    {
        [one] => Some(one.clone()),
        [] => Some(path),
        _ => None,
    }
}

/// Adds a `---- NAME stdout ----` section to the failed test NAME of the target's file.
pub(super) fn attach(
    out: &mut Builder,
    target: &Option<Option<String>>,
    section: Option<(String, String)>,
) {
    let (Some(Some(path)), Some((name, body))) = (target, section) else {
        return;
    };
    let tests = &mut out.file(path).tests;
    let failed = tests
        .iter_mut()
        .rev()
        .find(|t| t.name == name && t.status == Status::Failed);
    if let Some(t) = failed.filter(|_| !body.trim().is_empty()) {
        t.messages.push(body);
    }
}

/// `cargo test` text. Results belong to the file of the last `Running` line; unit tests and
/// doc tests are dropped. Compile errors, which all come before the first `Running` line,
/// become load errors of the failed target's file, or of every selected `tests/*.rs` file
/// when the target is not named.
pub(super) fn read_libtest(text: &str, files: &Files) -> Builder {
    let mut out = Builder::default();
    // None before the first `Running` line; then the current target's file, if it maps.
    let mut target: Option<Option<String>> = None;
    let mut section: Option<(String, String)> = None;
    // Compile errors not yet tied to a target: (first line, `-->` location).
    let mut pending: Vec<(String, Option<String>)> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if let Some((_, body)) = section.as_mut() {
            if !SECTION_END.is_match(line) {
                if body.len() < MAX_MESSAGE {
                    body.push_str(line);
                    body.push('\n');
                }
                continue;
            }
            attach(&mut out, &target, section.take());
        }
        if let Some(c) = RUNNING.captures(line) {
            target = Some(libtest_target(&c[1], files));
        } else if line.trim_start().starts_with("Doc-tests ") {
            target = Some(None);
        } else if let (Some(Some(path)), Some(c)) = (&target, TEST_LINE.captures(line)) {
            let status = match &c[2] {
                "ok" => Status::Passed,
                "FAILED" => Status::Failed,
                _ => Status::Skipped,
            };
            out.test(path, c[1].to_string(), status, Vec::new());
        } else if let Some(c) = SECTION.captures(line).filter(|_| target.is_some()) {
            section = Some((c[1].to_string(), String::new()));
        } else if target.is_some() {
            continue;
        } else if let Some(c) = COULD_NOT.captures(line) {
            // Everything is compiled before the first test binary runs.
            let message = pending.first().map_or(line, |(m, _)| m.as_str());
            let mut hit = c
                .get(1)
                .map(|n| files.rust_target(n.as_str()))
                .unwrap_or_default();
            if hit.is_empty() {
                let at = pending
                    .iter()
                    .filter_map(|(_, at)| files.normalize(at.as_deref()?));
                hit = at.filter(|p| files.selected.contains(p)).collect();
            }
            if hit.is_empty() {
                hit = files.rust_tests();
            }
            out.load_errors(&hit, message);
            pending.clear();
        } else if COMPILE_ERROR.is_match(line) && !line.starts_with("error: aborting") {
            pending.push((line.to_string(), None));
        } else if let (Some(c), Some((_, at @ None))) = (ARROW.captures(line), pending.last_mut()) {
            *at = Some(c[1].to_string());
        }
    }
    attach(&mut out, &target, section);
    // Compiler diagnostics without a "could not compile" line: the target is unknown.
    if let Some((message, _)) = pending.iter().find(|(_, at)| at.is_some()) {
        out.load_errors(&files.rust_tests(), message);
    }
    out
}
