//! A memory limit for each run (`reduce --memory SIZE`): a run that goes over it ends as
//! `Termination::OverMemory`, a resource failure, never the failure a reduction keeps.
//!
//! Two mechanisms, chosen once per process ([`mechanism`]):
//!
//! - **`cgroup`**: the run's own cgroup (see `cgroup`) gets `memory.max` set to the limit
//!   and `memory.swap.max` to 0, so the command cannot swap instead. This needs the memory
//!   controller for the children of repromin's cgroup (`memory` in that cgroup's
//!   `cgroup.subtree_control`; repromin enables it there when the kernel lets it, as in the
//!   root cgroup). The kernel counts the whole run, every process it started, and kills a
//!   process of it when the run needs more; a run whose `memory.events` shows `oom` or
//!   `oom_kill` above 0 went over the limit.
//! - **`rlimit-as`**: elsewhere, each process of the run gets `RLIMIT_AS` (its address
//!   space) set to the limit before the command's first instruction, and its children
//!   inherit it. The limit is per process, and an allocation past it fails rather than
//!   killing anything, so a run went over it when its output shows one of the well-known
//!   allocation failures ([`ALLOCATION_FAILURES`]: Python's `MemoryError`, Rust's
//!   `memory allocation of N bytes failed`, C++'s `std::bad_alloc`, node's `JavaScript heap
//!   out of memory`, Go's `runtime: out of memory`, Java's `OutOfMemoryError`, the C
//!   library's `Cannot allocate memory`, …), or when the peak resident memory of its leader
//!   (`wait4`, which counts the processes the leader waited for) came within a tenth of the
//!   limit. A program that ignores a small failed allocation far below that and crashes
//!   some other way is not recognised; runtimes that reserve much more address space than
//!   they use (the JVM, Go, node) need a limit well above what they use.
//!
//! A run under the cgroup mechanism whose cgroup cannot be limited (the controller went
//! away) falls back to `RLIMIT_AS` for that run.

use std::fs;
use std::io::{self, Write as _};
use std::path::Path;
use std::sync::{LazyLock, OnceLock};

use regex::bytes::RegexSet;

/// The smallest limit accepted: below it no shell or interpreter starts.
pub const MIN_LIMIT: u64 = 4 << 20;

/// How runs' memory is limited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryMechanism {
    /// `memory.max` of the run's cgroup: the whole run together.
    Cgroup,
    /// `RLIMIT_AS` of each process of the run.
    RlimitAs,
}

impl MemoryMechanism {
    /// Its name in reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            MemoryMechanism::Cgroup => "cgroup",
            MemoryMechanism::RlimitAs => "rlimit-as",
        }
    }
}

/// What a report records of `--memory`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MemoryRecord {
    /// The limit, in bytes.
    pub limit_bytes: u64,
    /// How it is enforced.
    pub mechanism: MemoryMechanism,
}

impl MemoryRecord {
    /// The record of a limit of `limit_bytes`, enforced as this process does.
    #[must_use]
    pub fn of(limit_bytes: u64) -> MemoryRecord {
        MemoryRecord {
            limit_bytes,
            mechanism: mechanism(),
        }
    }
}

/// How this process limits its runs' memory: by their cgroups where each run has one and
/// the memory controller is available to them, else by `RLIMIT_AS`. Decided once.
#[must_use]
pub fn mechanism() -> MemoryMechanism {
    static MECHANISM: OnceLock<MemoryMechanism> = OnceLock::new();
    *MECHANISM.get_or_init(|| match super::cgroup::base() {
        Some(base) if controller_for_children(base) => MemoryMechanism::Cgroup,
        _ => MemoryMechanism::RlimitAs,
    })
}

/// Whether the children of the cgroup at `base` get the memory controller: already listed
/// in its `cgroup.subtree_control`, or enabled there now (which the kernel allows only
/// where it offers the controller and `base` holds no process, or is the root).
fn controller_for_children(base: &Path) -> bool {
    let listed = |file: &str| {
        fs::read_to_string(base.join(file))
            .is_ok_and(|text| text.split_whitespace().any(|c| c == "memory"))
    };
    if listed("cgroup.subtree_control") {
        return true;
    }
    listed("cgroup.controllers")
        && write(&base.join("cgroup.subtree_control"), "+memory").is_ok()
        && listed("cgroup.subtree_control")
}

fn write(path: &Path, text: &str) -> io::Result<()> {
    fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(text.as_bytes())
}

/// How one run's memory is limited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Applied {
    /// Its cgroup's `memory.max`.
    Cgroup,
    /// `RLIMIT_AS` of its processes, this many bytes.
    RlimitAs(u64),
}

impl Applied {
    /// The `RLIMIT_AS` the leader sets before its exec, if any.
    pub(super) fn rlimit_as(self) -> Option<u64> {
        match self {
            Applied::RlimitAs(bytes) => Some(bytes),
            Applied::Cgroup => None,
        }
    }
}

/// Limits a run to `limit` bytes: the cgroup at `cgroup` (the run's, not yet holding a
/// process) where this process limits by cgroups and the limit can be written there, else
/// `RLIMIT_AS`. `None` without a limit.
pub(super) fn apply(limit: Option<u64>, cgroup: Option<&Path>) -> Option<Applied> {
    let bytes = limit?;
    if mechanism() == MemoryMechanism::Cgroup
        && let Some(dir) = cgroup
        && limit_cgroup(dir, bytes).is_ok()
    {
        return Some(Applied::Cgroup);
    }
    Some(Applied::RlimitAs(bytes))
}

/// Sets `memory.max` of the cgroup at `dir` to `bytes`, with no swap and the whole cgroup
/// killed together when the kernel kills one of it; enables the controller for the
/// children of `dir`'s parent first when it is not (a parent made again since).
fn limit_cgroup(dir: &Path, bytes: u64) -> io::Result<()> {
    if let Some(parent) = dir.parent() {
        let control = parent.join("cgroup.subtree_control");
        let enabled = fs::read_to_string(&control)?
            .split_whitespace()
            .any(|c| c == "memory");
        if !enabled {
            write(&control, "+memory")?;
        }
    }
    write(&dir.join("memory.max"), &bytes.to_string())?;
    // Absent where the kernel has no swap accounting: then there is no swap to cap.
    match write(&dir.join("memory.swap.max"), "0") {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        other => other?,
    }
    let _ = write(&dir.join("memory.oom.group"), "1");
    Ok(())
}

/// Whether the kernel killed in, or refused memory to, a run limited by its cgroup at
/// `dir` (read before the cgroup is removed).
pub(super) fn cgroup_oom(applied: Option<Applied>, dir: Option<&Path>) -> bool {
    applied == Some(Applied::Cgroup)
        && dir.is_some_and(|dir| {
            fs::read_to_string(dir.join("memory.events"))
                .is_ok_and(|events| oom_events(&events) > 0)
        })
}

/// Whether a run limited as `applied` went over its limit: by the out-of-memory events of
/// its cgroup ([`cgroup_oom`]); under `RLIMIT_AS`, by an allocation failure in its `output`,
/// or by the `peak` resident memory of its leader and the processes it waited for, when
/// that came within a tenth of the limit (the address space holds at least that much, so
/// the next allocation had little room left).
pub(super) fn over(
    applied: Option<Applied>,
    output: &[u8],
    cgroup_oom: bool,
    peak: Option<u64>,
) -> bool {
    match applied {
        None => false,
        Some(Applied::Cgroup) => cgroup_oom,
        Some(Applied::RlimitAs(limit)) => {
            allocation_failed(output) || peak.is_some_and(|p| p >= limit - limit / 10)
        }
    }
}

/// The `oom` and `oom_kill` counts of a cgroup's `memory.events`, summed.
pub(super) fn oom_events(events: &str) -> u64 {
    events
        .lines()
        .filter_map(|line| line.split_once(' '))
        .filter(|(key, _)| matches!(*key, "oom" | "oom_kill"))
        .filter_map(|(_, count)| count.trim().parse::<u64>().ok())
        .sum()
}

/// The allocation failures of the common runtimes, as they print them (each a regular
/// expression over the output's bytes).
pub const ALLOCATION_FAILURES: &[&str] = &[
    // Python: the last line of the traceback (`MemoryError` or `MemoryError: ...`).
    r"(?m)^MemoryError\b",
    // Rust's default allocation error handler.
    r"memory allocation of \d+ bytes failed",
    // C++: the uncaught exception, as libstdc++ and libc++ name it.
    r"std::bad_alloc",
    // node (V8).
    r"JavaScript heap out of memory",
    r"Fatal process (?:out of memory|OOM)",
    // Go.
    r"(?m)^(?:fatal error: )?runtime: (?:out of memory|cannot allocate memory)",
    // Java, and a JVM that cannot start in the limit.
    r"java\.lang\.OutOfMemoryError",
    r"insufficient memory for the Java Runtime Environment",
    r"Could not reserve enough space for",
    // Ruby.
    r"NoMemoryError",
    // ENOMEM as the C library words it (a shell's fork, a tool's error), GCC's and bash's.
    r"(?i)cannot allocate memory",
    r"virtual memory exhausted",
    r"out of memory allocating \d+ bytes",
    r"xmalloc: .*: cannot allocate",
];

/// Whether `output` shows an allocation failure (see [`ALLOCATION_FAILURES`]).
pub(super) fn allocation_failed(output: &[u8]) -> bool {
    static SET: LazyLock<Option<RegexSet>> =
        LazyLock::new(|| RegexSet::new(ALLOCATION_FAILURES).ok());
    SET.as_ref().is_some_and(|set| set.is_match(output))
}

/// Why a memory size was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemorySizeError {
    /// Not a number with an optional unit.
    #[error("`{0}` is not a size: write it as 512M, 2G, 1.5GiB or a number of bytes")]
    NotASize(String),
    /// A unit that is not one of B, K, M, G and T.
    #[error("`{text}` has an unknown unit `{unit}`: use B, K, M, G or T (powers of 1024)")]
    Unit {
        /// The whole value.
        text: String,
        /// The unit given.
        unit: String,
    },
    /// A fraction of a byte.
    #[error("`{0}` is not a whole number of bytes")]
    Fraction(String),
    /// Below [`MIN_LIMIT`], or over 64 bits.
    #[error("`{0}` is out of range: a memory limit is between 4 MiB and 16 EiB")]
    Range(String),
}

/// Parses a memory size: a number of bytes (`268435456`), or a number, possibly with a
/// fraction, and a unit in powers of 1024 (`512M`, `2g`, `1.5GiB`; `K`, `KB` and `KiB` are
/// the same, and so for `M`, `G` and `T`).
///
/// # Errors
/// A [`MemorySizeError`] naming the value.
pub fn parse_size(text: &str) -> Result<u64, MemorySizeError> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let not_a_size = || MemorySizeError::NotASize(text.to_string());
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty()
        || !fraction.bytes().all(|b| b.is_ascii_digit())
        || number.ends_with('.')
    {
        return Err(not_a_size());
    }
    let shift: u32 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(MemorySizeError::Unit {
                text: text.to_string(),
                unit: other.to_string(),
            });
        }
    };
    let out_of_range = || MemorySizeError::Range(text.to_string());
    // Exact: (whole.fraction) * 2^shift, in integers.
    let digits = format!("{whole}{fraction}");
    if digits.len() > 30 {
        return Err(out_of_range());
    }
    let scaled: u128 = digits.parse().map_err(|_| not_a_size())?;
    let scale = 10u128.pow(u32::try_from(fraction.len()).map_err(|_| out_of_range())?);
    let bytes = scaled << shift;
    if !bytes.is_multiple_of(scale) {
        return Err(MemorySizeError::Fraction(text.to_string()));
    }
    u64::try_from(bytes / scale)
        .ok()
        .filter(|&b| b >= MIN_LIMIT)
        .ok_or_else(out_of_range)
}

/// `bytes` for people: `200 MiB`, `1.5 GiB`, or a number of bytes.
#[must_use]
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        let one = 1u64 << shift;
        if bytes >= one {
            // Shown exactly when it is a whole number of tenths of the unit.
            let tenths = u128::from(bytes) * 10;
            if tenths % u128::from(one) == 0 {
                let tenths = tenths / u128::from(one);
                return if tenths % 10 == 0 {
                    format!("{} {unit}", tenths / 10)
                } else {
                    format!("{}.{} {unit}", tenths / 10, tenths % 10)
                };
            }
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_and_without_units() {
        let mib = 1u64 << 20;
        assert_eq!(parse_size("512M"), Ok(512 * mib));
        assert_eq!(parse_size("512m"), Ok(512 * mib));
        assert_eq!(parse_size("200MB"), Ok(200 * mib));
        assert_eq!(parse_size("2G"), Ok(2048 * mib));
        assert_eq!(parse_size("1.5GiB"), Ok(1536 * mib));
        assert_eq!(parse_size(" 1.5 GiB "), Ok(1536 * mib));
        assert_eq!(parse_size("0.5t"), Ok(512 * 1024 * mib));
        assert_eq!(parse_size("268435456"), Ok(256 * mib));
        assert_eq!(parse_size("268435456b"), Ok(256 * mib));
        assert_eq!(parse_size("4096K"), Ok(4 * mib));
        assert_eq!(parse_size(".5G"), Ok(512 * mib));
    }

    #[test]
    fn bad_sizes_are_refused_naming_the_value() {
        for text in ["", "M", "lots", "1.2.3G", "1.G", "-5M", "1e9"] {
            assert!(
                matches!(
                    parse_size(text),
                    Err(MemorySizeError::NotASize(_) | MemorySizeError::Unit { .. })
                ),
                "{text}: {:?}",
                parse_size(text)
            );
        }
        assert_eq!(
            parse_size("2X"),
            Err(MemorySizeError::Unit {
                text: "2X".into(),
                unit: "x".into()
            })
        );
        assert_eq!(
            parse_size("4194304.5"),
            Err(MemorySizeError::Fraction("4194304.5".into()))
        );
        for text in [
            "0",
            "0M",
            "3M",
            "4194303",
            "16777216T",
            "99999999999999999999999999G",
        ] {
            assert_eq!(
                parse_size(text),
                Err(MemorySizeError::Range(text.into())),
                "{text}"
            );
        }
        let message = parse_size("2X").unwrap_err().to_string();
        assert!(
            message.contains("`2X`") && message.contains("unit"),
            "{message}"
        );
    }

    #[test]
    fn sizes_are_shown_in_their_unit() {
        assert_eq!(format_size(200 << 20), "200 MiB");
        assert_eq!(format_size(1536 << 20), "1.5 GiB");
        assert_eq!(format_size(4 << 20), "4 MiB");
        assert_eq!(format_size(1000), "1000 bytes");
        assert_eq!(format_size((1 << 20) + 1), "1048577 bytes");
    }

    #[test]
    fn memory_events_count_oom_and_oom_kill() {
        let calm = "low 0\nhigh 0\nmax 12\noom 0\noom_kill 0\noom_group_kill 0\n";
        assert_eq!(oom_events(calm), 0);
        let killed = "low 0\nhigh 0\nmax 40\noom 1\noom_kill 1\noom_group_kill 1\n";
        assert_eq!(oom_events(killed), 2);
        assert_eq!(oom_events("oom_kill 3"), 3);
        assert_eq!(oom_events(""), 0);
    }

    #[test]
    fn the_allocation_failures_of_common_runtimes_are_recognised() {
        for output in [
            "Traceback (most recent call last):\n  File \"t.py\", line 1\nMemoryError\n",
            "Traceback (most recent call last):\nMemoryError: cannot grow\n",
            "memory allocation of 1073741824 bytes failed\n",
            "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n",
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n",
            "# Fatal process out of memory: Failed to reserve virtual memory for CodeRange\n",
            "fatal error: runtime: out of memory\n",
            "runtime: out of memory: cannot allocate 1073741824-byte block\n",
            "fatal error: runtime: cannot allocate memory\n",
            "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n",
            "sh: fork: Cannot allocate memory\n",
            "head: cannot allocate memory\n",
            "virtual memory exhausted: Cannot allocate memory\n",
            "cc1: out of memory allocating 65536 bytes after a total of 0 bytes\n",
            "failed to allocate memory (NoMemoryError)\n",
        ] {
            assert!(allocation_failed(output.as_bytes()), "{output}");
        }
        for output in [
            "Traceback (most recent call last):\nValueError: bad\n",
            "error: MemoryErrors are rare\n",
            "thread 'main' panicked at src/main.rs:2:5:\nindex out of bounds\n",
            "Segmentation fault (core dumped)\n",
            "",
        ] {
            assert!(!allocation_failed(output.as_bytes()), "{output}");
        }
    }

    #[test]
    fn a_run_goes_over_its_limit_by_its_mechanism_s_evidence() {
        let rlimit = Some(Applied::RlimitAs(200 << 20));
        assert!(over(rlimit, b"MemoryError\n", false, None));
        assert!(!over(rlimit, b"ValueError\n", false, Some(20 << 20)));
        assert!(!over(None, b"MemoryError\n", true, Some(1 << 40)));
        // Within a tenth of the limit, whatever the output says.
        assert!(over(rlimit, b"ValueError\n", false, Some(180 << 20)));
        assert!(!over(rlimit, b"ValueError\n", false, Some((180 << 20) - 1)));
        // A cgroup's counters, as its directory shows them.
        let dir = tempfile::tempdir().unwrap();
        let cgroup = Some(Applied::Cgroup);
        let events = dir.path().join("memory.events");
        std::fs::write(&events, "oom 0\noom_kill 0\n").unwrap();
        assert!(!cgroup_oom(cgroup, Some(dir.path())));
        assert!(!cgroup_oom(cgroup, None));
        std::fs::write(&events, "oom 1\noom_kill 1\n").unwrap();
        assert!(cgroup_oom(cgroup, Some(dir.path())));
        assert!(!cgroup_oom(rlimit, Some(dir.path())));
        assert!(over(cgroup, b"", true, None));
        assert!(!over(cgroup, b"", false, Some(1 << 40)));
        // The output alone is no evidence under a cgroup's limit.
        assert!(!over(cgroup, b"MemoryError\n", false, None));
    }
}
