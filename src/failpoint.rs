//! Failpoints: named points where a test can hold the process, to kill the real binary at
//! an exact step. They exist only in a build with the `failpoints` feature, which only the
//! test suite turns on (`cargo test --features failpoints`); in any other build [`pause`]
//! is empty and no environment variable is read.
//!
//! In a build with the feature, `REPROMIN_FAILPOINT=POINT` makes the process print
//! `repromin: failpoint: paused at POINT` on stderr when it reaches POINT, and wait there
//! until it is killed. The points are listed in docs/reliability.md ("Failpoints").

/// The environment variable that names the point to pause at.
#[cfg(feature = "failpoints")]
const VARIABLE: &str = "REPROMIN_FAILPOINT";

/// Waits here until killed when [`VARIABLE`] names `point`.
#[cfg(feature = "failpoints")]
pub(crate) fn pause(point: &'static str) {
    if std::env::var_os(VARIABLE).is_some_and(|p| p == point) {
        crate::console::Console::new(true).err(&format!("repromin: failpoint: paused at {point}"));
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

/// Nothing: this build has no failpoints.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub(crate) fn pause(_point: &'static str) {}
