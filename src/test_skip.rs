//! How a test that cannot run on this machine says so, shared by the unit tests and the
//! integration tests (tests/cli includes this file).
//!
//! Under `CI` (set, and neither empty, `0` nor `false`, as CI services set it) `.ci/run` has
//! installed every tool and granted what the tests need, so a test that cannot run fails.
//! Elsewhere it skips: it prints `skipped: …` and appends a line `TEST: WHAT: WHY` to the
//! skip list, so that a skip is never counted as a plain pass without a trace. The list is
//! the file `REPROMIN_TEST_SKIPS` names, or `test-skips.txt` in the target directory
//! (`target/test-skips.txt`); `.ci/run` empties it before the tests and prints it after.

use std::io::Write;
use std::path::PathBuf;

/// Names the file of the skip list.
pub(crate) const SKIPS_ENV: &str = "REPROMIN_TEST_SKIPS";

/// Whether the tests run in CI, where a test that cannot run is a failure.
pub(crate) fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Whether the running test can use `what`: `available` says why not when it cannot. Under
/// `CI` that fails the test; elsewhere the skip is printed and recorded (see the module
/// documentation) and the caller returns early, or leaves out the part that needs `what`.
pub(crate) fn require_tool(what: &str, available: Result<(), String>) -> bool {
    match available {
        Ok(()) => true,
        Err(why) if in_ci() => panic!("{what} is required under CI (.ci/run provides it): {why}"),
        Err(why) => {
            record(what, &why);
            false
        }
    }
}

/// [`require_tool`] for a test that needs root; `why` says what for.
pub(crate) fn require_root(why: &str) -> bool {
    let root = nix::unistd::geteuid().is_root();
    require_tool("root", if root { Ok(()) } else { Err(why.to_string()) })
}

/// The running test's name: libtest runs each test on a thread named after it (under
/// cargo-nextest too, one test per process).
fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|name| *name != "main")
        .unwrap_or("a test")
        .to_string()
}

/// The skip list's file: `REPROMIN_TEST_SKIPS`, or `test-skips.txt` in the target directory
/// (a test binary is `TARGET/PROFILE/deps/NAME`).
fn list() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(SKIPS_ENV) {
        return Some(PathBuf::from(path));
    }
    let exe = std::env::current_exe().ok()?;
    Some(exe.ancestors().nth(3)?.join("test-skips.txt"))
}

/// Prints the skip and appends it to the skip list, one line per write so that tests in
/// other processes appending at the same time do not interleave within a line.
fn record(what: &str, why: &str) {
    let line = format!("{}: {what}: {}\n", test_name(), why.replace('\n', " "));
    eprint!("skipped: {line}");
    let Some(path) = list() else {
        panic!("no skip list to record this skip in (set {SKIPS_ENV}): {line}");
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(e) = written {
        panic!("cannot record this skip in {}: {e}: {line}", path.display());
    }
}
