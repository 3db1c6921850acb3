//! The harness itself: its timeout kills a hung command instead of waiting for it, and
//! tools the suite needs are required under `CI`.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::{output_within, processes_with};

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
