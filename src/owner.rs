//! Which process owns a directory repromin made, and whether that process is still alive.
//!
//! A directory that must be cleaned up after a crash (a staging directory of
//! [`crate::export`]) holds an owner file written by the process that made it: its pid, its
//! start time in clock ticks since boot (field 22 of `/proc/PID/stat`), the boot id, the PID
//! namespace and the host name. A later run reads it back strictly and asks
//! [`Owner::state`]: the owner is dead when no process has its pid, when the process with
//! its pid started at another time (the pid was reused) or is a zombie, or when the machine
//! it ran on (same host name) has rebooted since. When none of this can be known (another
//! PID namespace, another machine, an unreadable `/proc`), the answer is
//! [`OwnerState::Unknown`], and the directory must be left alone.
//!
//! A leaf module: it reads `/proc` and nothing of the crate.

use std::fmt;

/// The first line of an owner file, naming its format.
const MAGIC: &str = "repromin-owner v1";

/// The longest owner file that is read back (a valid one is far shorter).
pub(crate) const MAX_OWNER_LEN: u64 = 1024;

/// The longest host name recorded (Linux allows 64 bytes).
const MAX_HOST_LEN: usize = 64;

/// The host name recorded when the real one cannot be read or is not a plain token.
const NO_HOST: &str = "-";

/// The identity of one process, as written to an owner file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Owner {
    /// Its process id in `pidns`.
    pub pid: u32,
    /// Its start time in clock ticks since boot.
    pub start: u64,
    /// The boot id of the machine it ran on (`/proc/sys/kernel/random/boot_id`).
    pub boot: String,
    /// The inode number of its PID namespace.
    pub pidns: u64,
    /// The host name of the machine, or `-` when unknown.
    pub host: String,
}

/// Whether an owner is still running.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OwnerState {
    /// The process is running: what it owns is in use.
    Alive,
    /// The process has ended: what it owns is abandoned.
    Dead,
    /// It cannot be told from here, for the reason given.
    Unknown(String),
}

/// Why the current process could not be described.
#[derive(Debug, thiserror::Error)]
#[error("cannot read `{path}` to identify this process")]
pub(crate) struct IdentityError {
    path: &'static str,
    #[source]
    source: std::io::Error,
}

fn read_proc(path: &'static str) -> Result<String, IdentityError> {
    std::fs::read_to_string(path).map_err(|source| IdentityError { path, source })
}

fn invalid(path: &'static str, what: &str) -> IdentityError {
    IdentityError {
        path,
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string()),
    }
}

/// The boot id of this machine.
fn boot_id() -> Result<String, IdentityError> {
    const PATH: &str = "/proc/sys/kernel/random/boot_id";
    let text = read_proc(PATH)?;
    let id = text.trim_end_matches('\n');
    if valid_boot(id) {
        Ok(id.to_string())
    } else {
        Err(invalid(PATH, "not a boot id"))
    }
}

/// The inode number of this process's PID namespace.
fn pid_namespace() -> Result<u64, IdentityError> {
    const PATH: &str = "/proc/self/ns/pid";
    let link = std::fs::read_link(PATH).map_err(|source| IdentityError { path: PATH, source })?;
    link.to_str()
        .and_then(|l| l.strip_prefix("pid:["))
        .and_then(|l| l.strip_suffix(']'))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| invalid(PATH, "not a PID namespace"))
}

/// The host name, or [`NO_HOST`] when it is unreadable or not a plain token.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim_end_matches('\n').to_string())
        .filter(|h| valid_host(h) && h != NO_HOST)
        .unwrap_or_else(|| NO_HOST.to_string())
}

fn valid_boot(id: &str) -> bool {
    id.len() == 36
        && id.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        })
}

fn valid_host(host: &str) -> bool {
    !host.is_empty() && host.len() <= MAX_HOST_LEN && host.bytes().all(|b| b.is_ascii_graphic())
}

/// What `/proc/PID/stat` says about a process: its state letter and start time.
#[derive(Debug, PartialEq, Eq)]
struct Stat {
    state: char,
    start: u64,
}

/// Parses `/proc/PID/stat`. The command name (field 2) is in parentheses and may itself
/// hold spaces and parentheses, so fields are counted from the last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let after = &text[text.rfind(')')? + 1..];
    let mut fields = after.split_ascii_whitespace();
    // Field 3 is the state; the start time is field 22.
    let state = fields.next()?;
    let mut chars = state.chars();
    let state = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    let start = fields.nth(18)?.parse().ok()?;
    Some(Stat { state, start })
}

fn decimal<T: std::str::FromStr>(text: &str) -> Option<T> {
    let canonical = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if canonical { text.parse().ok() } else { None }
}

impl Owner {
    /// The current process.
    ///
    /// # Errors
    /// `/proc` cannot be read or says something unexpected.
    pub(crate) fn current() -> Result<Owner, IdentityError> {
        const STAT: &str = "/proc/self/stat";
        let stat = parse_stat(&read_proc(STAT)?).ok_or_else(|| invalid(STAT, "unexpected"))?;
        Ok(Owner {
            pid: std::process::id(),
            start: stat.start,
            boot: boot_id()?,
            pidns: pid_namespace()?,
            host: host_name(),
        })
    }

    /// The owner file's text (see [`Owner::parse`]).
    pub(crate) fn to_text(&self) -> String {
        format!(
            "{MAGIC}\npid {}\nstart {}\nboot {}\npidns {}\nhost {}\n",
            self.pid, self.start, self.boot, self.pidns, self.host
        )
    }

    /// Reads an owner file's text back: exactly the lines [`Owner::to_text`] writes, in its
    /// order, each value in its canonical form, and nothing else.
    pub(crate) fn parse(text: &str) -> Option<Owner> {
        let body = text.strip_suffix('\n')?;
        let mut lines = body.split('\n');
        if lines.next()? != MAGIC {
            return None;
        }
        let mut field = |key: &str| {
            lines
                .next()
                .and_then(|line| line.strip_prefix(key))
                .and_then(|rest| rest.strip_prefix(' '))
        };
        let pid = decimal::<u32>(field("pid")?).filter(|&p| p > 0)?;
        let start = decimal(field("start")?)?;
        let boot = field("boot")?.to_string();
        let pidns = decimal(field("pidns")?)?;
        let host = field("host")?.to_string();
        if lines.next().is_some() || !valid_boot(&boot) || !valid_host(&host) {
            return None;
        }
        Some(Owner {
            pid,
            start,
            boot,
            pidns,
            host,
        })
    }

    /// Whether this owner is still running, as seen by `here`, the current process.
    pub(crate) fn state(&self, here: &Owner) -> OwnerState {
        if self.boot != here.boot {
            return if self.host != NO_HOST && self.host == here.host {
                OwnerState::Dead
            } else {
                OwnerState::Unknown(format!(
                    "it was made on host `{}` in another boot, and this is host `{}`",
                    self.host, here.host
                ))
            };
        }
        if self.pidns != here.pidns {
            return OwnerState::Unknown(format!(
                "it was made by process {} of another PID namespace",
                self.pid
            ));
        }
        let path = format!("/proc/{}/stat", self.pid);
        match std::fs::read_to_string(&path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => OwnerState::Dead,
            Err(err) => OwnerState::Unknown(format!("cannot read `{path}`: {err}")),
            Ok(text) => match parse_stat(&text) {
                None => OwnerState::Unknown(format!("cannot parse `{path}`")),
                Some(stat) if stat.start != self.start => OwnerState::Dead,
                Some(Stat {
                    state: 'Z' | 'X', ..
                }) => OwnerState::Dead,
                Some(_) => OwnerState::Alive,
            },
        }
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "process {}", self.pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOT: &str = "05f0826f-7108-4ea2-bddc-b230ea3efbc2";

    fn sample() -> Owner {
        Owner {
            pid: 4242,
            start: 1_100_323,
            boot: BOOT.into(),
            pidns: 4_026_531_836,
            host: "build-7".into(),
        }
    }

    #[test]
    fn an_owner_file_reads_back_to_the_same_owner() {
        let owner = sample();
        let text = owner.to_text();
        assert_eq!(
            text,
            format!(
                "repromin-owner v1\npid 4242\nstart 1100323\nboot {BOOT}\npidns 4026531836\nhost build-7\n"
            )
        );
        assert_eq!(Owner::parse(&text), Some(owner));
        let me = Owner::current().unwrap();
        assert_eq!(Owner::parse(&me.to_text()), Some(me));
    }

    #[test]
    fn anything_but_the_exact_owner_format_is_not_an_owner() {
        let good = sample().to_text();
        let bad = [
            String::new(),
            good.trim_end().to_string(),
            format!("{good}\n"),
            format!("{good}extra 1\n"),
            good.replace("v1", "v2"),
            good.replace("pid 4242", "pid 04242"),
            good.replace("pid 4242", "pid 0"),
            good.replace("pid 4242", "pid +4242"),
            good.replace("pid 4242", "pid  4242"),
            good.replace("pid 4242", "pid 99999999999"),
            good.replace("start 1100323", "start -1"),
            good.replace("start 1100323\n", ""),
            good.replace(BOOT, "05f0826f"),
            good.replace(BOOT, &BOOT.to_uppercase()),
            good.replace("host build-7", "host build 7"),
            good.replace("host build-7", "host "),
            good.replace('\n', "\r\n"),
            good.replace("pidns", "ns"),
        ];
        for text in bad {
            assert_eq!(Owner::parse(&text), None, "{text:?}");
        }
    }

    #[test]
    fn the_stat_line_is_read_past_a_command_name_with_spaces_and_parentheses() {
        let line = "11276 (a) b) R) S 11272 11272 2142 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 1100323 3133440 363";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                state: 'S',
                start: 1_100_323
            })
        );
        assert_eq!(parse_stat("11276 (cat) R 1 2"), None);
        assert_eq!(parse_stat("no parenthesis"), None);
    }

    #[test]
    fn a_running_process_is_alive_and_an_ended_or_reused_pid_is_dead() {
        let me = Owner::current().unwrap();
        assert_eq!(me.state(&me), OwnerState::Alive);
        // The same pid with another start time: the pid was reused by another process.
        let reused = Owner {
            start: me.start + 1,
            ..me.clone()
        };
        assert_eq!(reused.state(&me), OwnerState::Dead);
        // A process that has ended and been reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        child.wait().unwrap();
        let ended = Owner {
            pid,
            start: stat
                .ok()
                .and_then(|s| parse_stat(&s))
                .map_or(0, |s| s.start),
            ..me.clone()
        };
        assert_eq!(ended.state(&me), OwnerState::Dead);
    }

    #[test]
    fn a_zombie_is_dead() {
        let me = Owner::current().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not reaped yet: it stays a zombie until `wait`.
        let path = format!("/proc/{pid}/stat");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let stat = loop {
            let stat = parse_stat(&std::fs::read_to_string(&path).unwrap()).unwrap();
            if stat.state == 'Z' || std::time::Instant::now() > deadline {
                break stat;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        assert_eq!(stat.state, 'Z');
        let zombie = Owner {
            pid,
            start: stat.start,
            ..me.clone()
        };
        assert_eq!(zombie.state(&me), OwnerState::Dead);
        child.wait().unwrap();
    }

    #[test]
    fn another_boot_is_dead_only_on_the_same_known_host() {
        let me = Owner::current().unwrap();
        let other_boot = "00000000-0000-4000-8000-000000000000".to_string();
        let rebooted = Owner {
            boot: other_boot.clone(),
            host: "build-7".into(),
            ..me.clone()
        };
        let here = Owner {
            host: "build-7".into(),
            ..me.clone()
        };
        assert_eq!(rebooted.state(&here), OwnerState::Dead);
        let elsewhere = Owner {
            host: "build-8".into(),
            ..rebooted.clone()
        };
        assert!(matches!(elsewhere.state(&here), OwnerState::Unknown(_)));
        let nameless = Owner {
            host: NO_HOST.into(),
            ..rebooted
        };
        let here = Owner {
            host: NO_HOST.into(),
            ..me
        };
        assert!(matches!(nameless.state(&here), OwnerState::Unknown(_)));
    }

    #[test]
    fn another_pid_namespace_cannot_be_told() {
        let me = Owner::current().unwrap();
        let foreign = Owner {
            pidns: me.pidns + 1,
            pid: 1,
            ..me.clone()
        };
        assert!(matches!(foreign.state(&me), OwnerState::Unknown(_)));
    }
}
