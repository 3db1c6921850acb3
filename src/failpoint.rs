//! Failpoints: named points where a test can hold the process, to kill the real binary at
//! an exact step. They exist only in a build with the `failpoints` feature, which only the
//! test suite turns on (`cargo test --features failpoints`); in any other build [`pause`]
//! is empty and no environment variable is read.
//!
//! In a build with the feature, `REPROMIN_FAILPOINT=POINT` makes the process print
//! `repromin: failpoint: paused at POINT` on stderr when it reaches POINT, and wait there
//! until it is killed, or, when `REPROMIN_FAILPOINT_RESUME=FILE` is set too, until FILE
//! exists, and then goes on. The points are listed in docs/reliability.md ("Failpoints").

/// The environment variable that names the point to pause at.
#[cfg(feature = "failpoints")]
const VARIABLE: &str = "REPROMIN_FAILPOINT";

/// The environment variable that names a file whose creation ends the pause.
#[cfg(feature = "failpoints")]
const RESUME: &str = "REPROMIN_FAILPOINT_RESUME";

/// Waits here when [`VARIABLE`] names `point`: until killed, or until the file [`RESUME`]
/// names exists.
#[cfg(feature = "failpoints")]
pub(crate) fn pause(point: &'static str) {
    if std::env::var_os(VARIABLE).is_some_and(|p| p == point) {
        crate::console::Console::new(true).err(&format!("repromin: failpoint: paused at {point}"));
        let resume = std::env::var_os(RESUME).map(std::path::PathBuf::from);
        loop {
            match &resume {
                Some(file) if file.exists() => return,
                Some(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
                None => std::thread::sleep(std::time::Duration::from_secs(3600)),
            }
        }
    }
}

/// Nothing: this build has no failpoints.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub(crate) fn pause(_point: &'static str) {}
