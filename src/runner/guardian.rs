//! The guardian: the process that ends the running groups when repromin is killed.
//!
//! A SIGKILLed repromin runs no code, and the parent-death signal reaches only the group
//! leader, so a command's children would go on running. The guardian is `/bin/sh` running
//! [`SCRIPT`] in a process group of its own, started once per process with the first run.
//! Its stdin is a pipe whose only write end repromin holds (close-on-exec, so no command
//! inherits it). Each run writes `+PGID` when its group starts and `-PGID` when the group
//! has been ended. When the pipe reaches end-of-file, because repromin has exited or died,
//! the guardian sends SIGKILL to every group still listed and exits. On a normal exit the
//! list is empty and it just exits.
//!
//! Lines are shorter than `PIPE_BUF`, so writes from several threads never interleave. A
//! guardian that cannot be started, or that has died, leaves the runs as they were before
//! it: the leader still dies with repromin.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use nix::unistd::Pid;

/// The guardian's program: a set of group ids kept as a space-delimited string, and a
/// SIGKILL to each one left when stdin closes.
const SCRIPT: &str = r#"g=' '
while IFS= read -r l; do
  p=${l#?}
  case $l in
    +*) g="$g$p " ;;
    -*) case $g in *" $p "*) g="${g% $p *} ${g#* $p }" ;; esac ;;
  esac
done
for p in $g; do kill -s KILL -- "-$p" 2>/dev/null; done
"#;

/// The write end of the guardian's stdin.
pub(super) struct Guardian {
    stdin: Mutex<ChildStdin>,
}

impl Guardian {
    fn send(&self, line: &str) {
        if let Ok(mut stdin) = self.stdin.lock() {
            // A guardian that is gone gives EPIPE (SIGPIPE is ignored by the Rust runtime);
            // the runs then go on without it.
            let _ = stdin.write_all(line.as_bytes());
        }
    }

    /// Lists a group that has started.
    pub(super) fn watch(&self, pgid: Pid) {
        self.send(&format!("+{pgid}\n"));
    }

    /// Takes a group that has been ended off the list.
    pub(super) fn forget(&self, pgid: Pid) {
        self.send(&format!("-{pgid}\n"));
    }
}

/// The process's guardian, started on the first call; `None` when it cannot be started.
pub(super) fn get() -> Option<&'static Guardian> {
    static GUARDIAN: OnceLock<Option<Guardian>> = OnceLock::new();
    GUARDIAN.get_or_init(start).as_ref()
}

fn start() -> Option<Guardian> {
    let mut child = Command::new("/bin/sh")
        .args(["-c", SCRIPT, "repromin-guardian"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/")
        // Its own group: a signal meant for repromin's group (a terminal's Ctrl-C, a
        // `kill -- -PGID`) must not end it before it has done its work.
        .process_group(0)
        .spawn()
        .ok()?;
    let stdin = child.stdin.take()?;
    // Never waited for: it exits only when repromin is gone, and whoever inherits it
    // reaps it.
    drop(child);
    Some(Guardian {
        stdin: Mutex::new(stdin),
    })
}
