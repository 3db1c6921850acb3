//! The guardian: the process that ends the running groups when repromin is killed.
//!
//! A SIGKILLed repromin runs no code, and the parent-death signal reaches only the group
//! leader, so a command's children would go on running. The guardian is `/bin/sh` running
//! [`SCRIPT`] in a process group of its own, started once per process with the first run.
//! Its stdin is a pipe whose only write end repromin holds (close-on-exec, so no command
//! inherits it). A command's leader writes `+PGID` itself, between its start and exec (see
//! [`line`]), so that its group is listed before the command's first instruction runs,
//! even when repromin dies while it is still starting the command; the run writes `-PGID`
//! when the group has been ended. A leader that is starting holds a copy of the write end
//! until it executes the command, so end-of-file never comes before its line. When the
//! pipe reaches end-of-file, because repromin has exited or died, the guardian sends
//! SIGKILL to every group still listed and exits. On a normal exit the list is empty and
//! it just exits; [`finish`] makes that happen before repromin exits, and reaps it, so a
//! repromin started by another repromin (a probe's `check-test`) leaves no guardian behind
//! for the outer one, its subreaper, to collect.
//!
//! Lines are shorter than `PIPE_BUF`, so writes from several threads never interleave. A
//! guardian that cannot be started, or that has died, leaves the runs as they were before
//! it: the leader still dies with repromin.

use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
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
    stdin: Mutex<OwnedFd>,
    /// The guardian itself, reaped by [`finish`].
    child: Mutex<Option<Child>>,
}

/// The most bytes of one line: a sign, a process id and a newline.
pub(super) const LINE_MAX: usize = 16;

/// Writes `SIGN PID \n` (`+123\n`) into `buf` and returns its length, without allocating:
/// a leader calls it between its start and exec.
pub(super) fn line(sign: u8, pid: i32, buf: &mut [u8; LINE_MAX]) -> usize {
    let mut digits = [0u8; LINE_MAX];
    let mut n = pid.unsigned_abs();
    let mut count = 0;
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        count += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf[0] = sign;
    for i in 0..count {
        buf[1 + i] = digits[count - 1 - i];
    }
    buf[1 + count] = b'\n';
    count + 2
}

impl Guardian {
    fn send(&self, line: &str) {
        if let Ok(stdin) = self.stdin.lock() {
            // A guardian that is gone gives EPIPE (SIGPIPE is ignored by the Rust runtime);
            // the runs then go on without it. Lines are shorter than `PIPE_BUF`: one write.
            let _ = nix::unistd::write(&*stdin, line.as_bytes());
        }
    }

    /// A copy of the write end of its stdin (close-on-exec), on which a starting leader
    /// lists its group; made before the leader starts, which takes no lock. `None` when
    /// the lock or the copy fails: the leader then lists nothing, as with no guardian.
    pub(super) fn leader_end(&self) -> Option<OwnedFd> {
        self.stdin.lock().ok()?.try_clone().ok()
    }

    /// Takes a group that has been ended off the list.
    pub(super) fn forget(&self, pgid: Pid) {
        self.send(&format!("-{pgid}\n"));
    }
}

/// The process's guardian, started on the first call; `None` when it cannot be started.
pub(super) fn get() -> Option<&'static Guardian> {
    GUARDIAN.get_or_init(start).as_ref()
}

static GUARDIAN: OnceLock<Option<Guardian>> = OnceLock::new();

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
    let stdin = OwnedFd::from(child.stdin.take()?);
    // Waited for only by `finish`: otherwise it exits when repromin is gone, and whoever
    // inherits it reaps it.
    Some(Guardian {
        stdin: Mutex::new(stdin),
        child: Mutex::new(Some(child)),
    })
}

/// Ends the guardian, if one was started, when no run is left: its stdin is replaced by
/// `/dev/null` (the pipe reaches end-of-file, and a leader started later writes its line
/// nowhere), and it is reaped within a second. Called as repromin exits.
pub(crate) fn finish() {
    let Some(guardian) = GUARDIAN.get().and_then(Option::as_ref) else {
        return;
    };
    let Ok(mut child) = guardian.child.lock() else {
        return;
    };
    let Some(mut process) = child.take() else {
        return;
    };
    let Ok(mut stdin) = guardian.stdin.lock() else {
        return;
    };
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    // The descriptor keeps its number (a leader may still hold it): it now refers to
    // /dev/null (still close-on-exec), and the pipe's last write end is closed.
    if nix::unistd::dup3(&null, &mut stdin, nix::fcntl::OFlag::O_CLOEXEC).is_err() {
        return;
    }
    drop(stdin);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while std::time::Instant::now() < until {
        match process.try_wait() {
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(2)),
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_formatted_without_allocating_as_format_would() {
        for pid in [0, 7, 10, 48213, 4_194_304, i32::MAX] {
            let mut buf = [0u8; LINE_MAX];
            let len = line(b'+', pid, &mut buf);
            assert_eq!(&buf[..len], format!("+{pid}\n").as_bytes());
        }
    }
}
