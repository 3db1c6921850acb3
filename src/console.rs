//! The only place that prints: data on stdout, messages and progress on stderr.
//!
//! Progress (an indicatif spinner with the pass, what is left, commands run, cache hits and
//! elapsed time) is drawn, through the [`Observer`] a reduction is given, only when stderr is a terminal, `CI` is unset and `--no-progress`
//! was not given, so CI logs and redirected output never contain it.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// What a reduction shows of its progress: told after every window of candidates.
pub trait Observer: Send {
    /// Called after every window.
    fn update(&mut self, phase: &str, session: &SessionView);
}

/// A read-only summary of a reduction, for progress display.
pub struct SessionView {
    /// Entries left.
    pub entries: u64,
    /// Regular-file bytes left.
    pub bytes: u64,
    /// Commands run so far.
    pub oracle_samples: u64,
    /// Cache hits so far.
    pub cache_hits: u64,
    /// Commits so far.
    pub accepted: u64,
}

/// Where output goes.
#[derive(Clone, Copy, Debug)]
pub struct Console {
    progress: bool,
}

impl Console {
    /// A console; progress only when stderr is an interactive terminal outside CI.
    pub fn new(no_progress: bool) -> Console {
        let progress =
            !no_progress && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
        Console { progress }
    }

    /// Prints data on stdout; a closed pipe (`| head`) is not an error.
    pub fn out(&self, text: &str) {
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), "{text}");
    }

    /// Prints bytes on stdout as they are, with no newline added (a generated script or
    /// page ends in its own); a closed pipe is not an error.
    pub fn out_raw(&self, bytes: &[u8]) {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(bytes).and_then(|()| stdout.flush());
    }

    /// Prints a message on stderr.
    pub fn err(&self, text: &str) {
        eprintln!("{text}");
    }

    /// A progress observer for a reduction, when progress is on.
    pub fn observer(&self) -> Option<Box<dyn Observer>> {
        if !self.progress {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Some(Box::new(Progress {
            bar,
            start: Instant::now(),
        }))
    }
}

struct Progress {
    bar: ProgressBar,
    start: Instant,
}

impl Observer for Progress {
    fn update(&mut self, phase: &str, view: &SessionView) {
        self.bar.set_message(format!(
            "{phase}: {} entries, {} bytes left · {} runs · {} cache hits · {} commits · {:.0}s",
            view.entries,
            view.bytes,
            view.oracle_samples,
            view.cache_hits,
            view.accepted,
            self.start.elapsed().as_secs_f64()
        ));
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
