//! The harness itself: its timeout kills a hung command instead of waiting for it, and a
//! test that cannot run is listed as skipped, or fails under `CI`.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::test_skip::SKIPS_ENV;
use crate::util::{output_within, processes_with, require_tool};

#[test]
fn a_hung_command_is_killed_at_the_timeout_and_fails_naming_it() {
    // A marker no other process has, so the survivor check below sees only this group.
    let marker = format!("600.{}", std::process::id());
    let mut command = Command::new("sh");
    command.args(["-c", &format!("sleep {marker} & sleep {marker}; wait")]);
    let start = Instant::now();
    let failure = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        output_within(command, Duration::from_secs(2))
    }))
    .expect_err("a command that sleeps 600 s finished within 2 s");
    let elapsed = start.elapsed();
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    let message = failure
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("\"sh\"") && message.contains(&marker) && message.contains("2s"),
        "{message}"
    );
    // The whole group died, the backgrounded sleep too.
    std::thread::sleep(Duration::from_millis(200));
    let survivors = processes_with(&format!("sleep {marker}"));
    assert!(survivors.is_empty(), "{survivors:?}");
}

#[test]
fn a_command_that_finishes_in_time_gives_its_output() {
    let mut command = Command::new("sh");
    command.args(["-c", "echo out; echo err >&2; exit 3"]);
    let o = output_within(command, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(o.stdout, b"out\n");
    assert_eq!(o.stderr, b"err\n");
}

/// Set in the runs of the test binary that the skip test starts: the test then skips.
const SKIP_PROBE: &str = "REPROMIN_TEST_SKIP_PROBE";

#[test]
fn a_skip_is_listed_with_its_reason_and_fails_under_ci() {
    const NAME: &str = "harness::a_skip_is_listed_with_its_reason_and_fails_under_ci";
    if std::env::var_os(SKIP_PROBE).is_some() {
        assert!(!require_tool("a probe", Err("it is told to skip".into())));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("skips.txt");
    // This test again, alone, as cargo-nextest runs each test.
    let again = |ci: Option<&str>| {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", NAME, "--nocapture"])
            .env(SKIP_PROBE, "1")
            .env(SKIPS_ENV, &list)
            .env_remove("CI");
        if let Some(ci) = ci {
            command.env("CI", ci);
        }
        let o = output_within(command, Duration::from_secs(60));
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (o.status.success(), said)
    };
    let listed = format!("{NAME}: a probe: it is told to skip\n");

    // Outside CI (and where `CI` is `false`) the skip passes, printed and listed with the
    // test's name and why; each skip adds its line.
    let (passed, said) = again(None);
    assert!(passed, "{said}");
    assert!(said.contains(&format!("skipped: {listed}")), "{said}");
    assert_eq!(std::fs::read_to_string(&list).unwrap(), listed);
    let (passed, said) = again(Some("false"));
    assert!(passed, "{said}");
    assert_eq!(std::fs::read_to_string(&list).unwrap(), listed.repeat(2));

    // Under CI the same test fails, naming what it needs, and lists nothing.
    std::fs::remove_file(&list).unwrap();
    let (passed, said) = again(Some("true"));
    assert!(!passed, "{said}");
    assert!(
        said.contains("a probe is required under CI (.ci/run provides it): it is told to skip"),
        "{said}"
    );
    assert!(!list.exists());
}
