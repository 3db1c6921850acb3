//! The file-access tracer: which entries of the tree the failing run opens, lists or
//! looks up.
//!
//! Before the first search, the reducer runs the command once more under `strace -f`
//! (ptrace: it needs no privilege beyond tracing its own children, works in the sandbox
//! and in any language) and reads the paths of every file system call. An entry that no
//! call named, and that has no named entry below it, is *untouched*. The files pass offers
//! the deletion of every untouched entry as its very first candidate, and of each
//! directory's untouched entries before it searches that directory: one probe where a
//! search would take dozens. The trace only proposes; the oracle decides every cut, so a
//! path the trace missed (a read through a memory map of a file opened elsewhere, a file
//! found by another name) costs one failed probe, never a wrong result.
//!
//! The trace is read over-approximately: every quoted string of a call and every path that
//! `-y` prints for a descriptor counts, relative strings are resolved against the root,
//! the process's working directory (followed through `chdir`, `fchdir` and forks) and any
//! directory descriptor on the same line, and every ancestor of a touched path is touched.
//! A log that cannot be read, or is larger than `LOG_CAP`, gives no trace at all.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Component, Path, PathBuf};

use crate::tree::{RelPath, Tree};

/// The largest trace log read; a larger one gives no trace.
pub(crate) const LOG_CAP: u64 = 512 * 1024 * 1024;

/// The system calls traced: every call that takes a path, process creation (to follow
/// working directories), directory listings and `fchdir`.
const TRACE_SET: &str = "trace=%file,%process,getdents,getdents64,fchdir";

/// What the traced run touched, as paths relative to the tree's root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    touched: HashSet<String>,
}

/// Why the trace was or was not used, for the report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TraceRecord {
    /// The tracer (`strace`).
    pub tool: String,
    /// `used`, `off` (`--no-trace`), `unavailable` (no working strace, or the runs are
    /// in a container), `not-reproducing` (the traced run did not fail the same way) or
    /// `unreadable` (the log could not be read, or was too large).
    pub outcome: String,
    /// Entries of the tree the run touched (0 when the trace was not used).
    pub touched: u64,
    /// Entries no call named, at their top-most point: the first candidate.
    pub untouched: u64,
}

impl TraceRecord {
    /// The record of a reduction that traced nothing, and why (`outcome`).
    pub fn untraced(outcome: &str) -> TraceRecord {
        TraceRecord {
            tool: "strace".into(),
            outcome: outcome.into(),
            touched: 0,
            untouched: 0,
        }
    }
}

impl Access {
    /// Whether a call named `path` or something below it.
    pub fn touched(&self, path: &str) -> bool {
        self.touched.contains(path)
    }

    /// The untouched entries of `tree` at their top-most point: untouched, under a touched
    /// directory (or at the root), and not `protected`.
    pub fn untouched_roots(&self, tree: &Tree, protected: impl Fn(&str) -> bool) -> Vec<RelPath> {
        tree.entries
            .keys()
            .filter(|p| !self.touched(p) && !protected(p))
            .filter(|p| {
                let parent = crate::tree::parent_of(p);
                parent.is_empty() || self.touched(parent)
            })
            .cloned()
            .collect()
    }

    /// Every touched path, in no particular order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.touched.iter().map(String::as_str)
    }

    /// How many entries of `tree` were touched.
    pub fn count_touched(&self, tree: &Tree) -> u64 {
        tree.entries.keys().filter(|p| self.touched(p)).count() as u64
    }

    fn mark(&mut self, rel: &str) {
        let mut path = rel;
        loop {
            if path.is_empty() || !self.touched.insert(path.to_string()) {
                return;
            }
            path = crate::tree::parent_of(path);
        }
    }
}

/// The `strace` to use: the first on `PATH` that answers `-V`.
pub fn strace() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path)
        .map(|dir| dir.join("strace"))
        .find(|p| p.is_file())?;
    let answers = std::process::Command::new(&found)
        .arg("-V")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    answers.then_some(found)
}

/// Makes `dir` a new empty directory that the run's user (the sandbox user, in the gate)
/// may write the log into; whatever was there goes first.
///
/// # Errors
/// The directory cannot be removed, made or opened up.
pub fn fresh_dir(dir: &Path) -> Result<(), crate::tree::TreeError> {
    use std::os::unix::fs::PermissionsExt;
    let io = |action: &'static str| {
        move |source| crate::tree::TreeError::Io {
            action,
            path: dir.to_path_buf(),
            source,
        }
    };
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("remove")(e)),
    }
    std::fs::create_dir_all(dir).map_err(io("create"))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777))
        .map_err(io("set permissions of"))
}

/// `argv` run under `strace`, which writes its log to `log`. The tracer runs as a
/// grandchild (`-D`): the command stays the leader of its process group, so the run ends
/// when the command does, not when the last background process it left does.
pub fn wrap(strace: &Path, log: &Path, argv: &[String]) -> Vec<String> {
    let mut out = vec![
        strace.display().to_string(),
        "-D".into(),
        "-f".into(),
        "-qq".into(),
        "-y".into(),
        "-e".into(),
        TRACE_SET.into(),
        "-o".into(),
        log.display().to_string(),
        "--".into(),
    ];
    out.extend(argv.iter().cloned());
    out
}

/// Reads the log at `log` (never through a symlink) of a run in `root`.
///
/// # Errors
/// The log cannot be opened or read, or is larger than `LOG_CAP`.
pub fn read(log: &Path, root: &Path) -> Result<Access, std::io::Error> {
    let file = crate::safe_fs::open_regular(log).map_err(std::io::Error::other)?;
    let mut reader = BufReader::new(file.take(LOG_CAP + 1));
    let mut parser = Parser::new(root);
    let mut line = Vec::new();
    let mut total = 0u64;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > LOG_CAP {
            return Err(std::io::Error::other(format!(
                "the trace log is larger than {LOG_CAP} bytes"
            )));
        }
        parser.line(&String::from_utf8_lossy(&line));
    }
    Ok(parser.access)
}

/// Reads a log held in memory (tests and fuzzing).
pub fn parse(log: &str, root: &Path) -> Access {
    let mut parser = Parser::new(root);
    for line in log.lines() {
        parser.line(line);
    }
    parser.access
}

struct Parser {
    roots: Vec<PathBuf>,
    root: PathBuf,
    cwd: HashMap<u64, PathBuf>,
    access: Access,
}

impl Parser {
    fn new(root: &Path) -> Parser {
        let mut roots = vec![normalize(root)];
        if let Ok(real) = std::fs::canonicalize(root)
            && !roots.contains(&real)
        {
            roots.push(real);
        }
        Parser {
            root: roots[0].clone(),
            roots,
            cwd: HashMap::new(),
            access: Access::default(),
        }
    }

    fn line(&mut self, line: &str) {
        let line = line.trim_end();
        let (pid, rest) = match line.split_once(' ') {
            Some((pid, rest)) if pid.bytes().all(|b| b.is_ascii_digit()) => {
                (pid.parse::<u64>().unwrap_or(0), rest.trim_start())
            }
            _ => (0, line),
        };
        let call = call_name(rest);
        let strings = quoted(rest);
        let fds = descriptor_paths(rest);
        let cwd = self
            .cwd
            .get(&pid)
            .cloned()
            .unwrap_or_else(|| self.root.clone());
        let ok = result(rest);
        match call {
            "chdir" if ok == Some(0) => {
                if let Some(dir) = strings.first() {
                    self.cwd.insert(pid, normalize(&cwd.join(dir)));
                }
            }
            "fchdir" if ok == Some(0) => {
                if let Some(dir) = fds.first() {
                    self.cwd.insert(pid, normalize(Path::new(dir)));
                }
            }
            "clone" | "clone3" | "fork" | "vfork" => {
                if let Some(child) = ok.filter(|c| *c > 0) {
                    self.cwd.insert(child.unsigned_abs(), cwd.clone());
                }
            }
            _ => {}
        }
        for fd in &fds {
            self.touch(Path::new(fd));
        }
        for s in &strings {
            let p = Path::new(s);
            if p.is_absolute() {
                self.touch(p);
                continue;
            }
            self.touch(&cwd.join(p));
            self.touch(&self.root.join(p));
            for fd in &fds {
                self.touch(&Path::new(fd).join(p));
            }
        }
    }

    fn touch(&mut self, path: &Path) {
        let path = normalize(path);
        for root in &self.roots {
            if let Ok(rel) = path.strip_prefix(root) {
                let rel = rel.to_string_lossy();
                if !rel.is_empty() {
                    let rel = rel.into_owned();
                    self.access.mark(&rel);
                }
                return;
            }
        }
    }
}

/// The call's name: what comes before the first `(`, or the name in `<... NAME resumed>`.
fn call_name(rest: &str) -> &str {
    if let Some(resumed) = rest.strip_prefix("<... ") {
        return resumed.split_whitespace().next().unwrap_or("");
    }
    rest.split('(').next().unwrap_or("").trim()
}

/// The return value after the last ` = `, when it is a number.
fn result(rest: &str) -> Option<i64> {
    let (_, after) = rest.rsplit_once(" = ")?;
    after.split_whitespace().next()?.parse().ok()
}

/// The strings of a line, with strace's C escapes undone; a string strace cut short
/// (`"..."...`) is kept as far as it goes.
fn quoted(line: &str) -> Vec<String> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let mut s = Vec::new();
        i += 1;
        while i < bytes.len() && bytes[i] != b'"' {
            if bytes[i] == b'\\' && i + 1 < bytes.len() {
                i += 1;
                match bytes[i] {
                    b'n' => s.push(b'\n'),
                    b't' => s.push(b'\t'),
                    b'r' => s.push(b'\r'),
                    b'v' => s.push(0x0b),
                    b'f' => s.push(0x0c),
                    b'x' if i + 2 < bytes.len() => {
                        let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                        if let Ok(b) = u8::from_str_radix(hex, 16) {
                            s.push(b);
                            i += 2;
                        }
                    }
                    b'0'..=b'7' => {
                        let mut value = 0u32;
                        let mut n = 0;
                        while n < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                            value = value * 8 + u32::from(bytes[i] - b'0');
                            i += 1;
                            n += 1;
                        }
                        i -= 1;
                        s.push(u8::try_from(value & 0xff).unwrap_or(0));
                    }
                    other => s.push(other),
                }
            } else {
                s.push(bytes[i]);
            }
            i += 1;
        }
        i += 1;
        out.push(String::from_utf8_lossy(&s).into_owned());
    }
    out
}

/// The paths `-y` prints for descriptors: `3</some/path>`.
fn descriptor_paths(line: &str) -> Vec<String> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'<'
            && bytes[i + 1] == b'/'
            && i > 0
            && bytes[i - 1].is_ascii_digit()
            && let Some(end) = line[i + 1..].find('>')
        {
            out.push(line[i + 1..i + 1 + end].to_string());
            i += end + 2;
            continue;
        }
        i += 1;
    }
    out
}

/// `path` with `.` and `..` resolved lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_name_paths_relative_to_the_working_directory_and_descriptors() {
        let log = r#"100 execve("/usr/bin/python3", ["python3", "main.py"], 0x7ffd /* 9 vars */) = 0
100 openat(AT_FDCWD, "shop/cart.py", O_RDONLY|O_CLOEXEC) = 3</w/tree/shop/cart.py>
100 newfstatat(AT_FDCWD, "/w/tree/shop/../lib", {st_mode=S_IFDIR|0755, st_size=4096, ...}, 0) = 0
100 clone(child_stack=NULL, flags=CLONE_CHILD_SETTID|SIGCHLD) = 101
101 chdir("docs") = 0
101 openat(AT_FDCWD, "guide.md", O_RDONLY) = -1 ENOENT (No such file or directory)
100 getdents64(4</w/tree/data>, 0x5555 /* 3 entries */, 32768) = 80
100 openat(5</w/tree/pkg>, "mod\x2epy", O_RDONLY) = 6</w/tree/pkg/mod.py>
100 openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = 3</etc/passwd>
100 +++ exited with 1 +++
"#;
        let access = parse(log, Path::new("/w/tree"));
        for path in [
            "main.py",
            "shop",
            "shop/cart.py",
            "lib",
            "docs",
            "docs/guide.md",
            "data",
            "pkg",
            "pkg/mod.py",
        ] {
            assert!(access.touched(path), "{path} should be touched");
        }
        for path in [
            "shop/util.py",
            "data/a.csv",
            "README.md",
            "guide.md/x",
            "etc",
        ] {
            assert!(!access.touched(path), "{path} should be untouched");
        }
    }

    #[test]
    fn a_path_outside_the_root_or_a_lookalike_prefix_touches_nothing() {
        let log = "1 openat(AT_FDCWD, \"/w/tree2/a\", O_RDONLY) = 3\n\
                   1 openat(AT_FDCWD, \"../outside\", O_RDONLY) = 3\n";
        let access = parse(log, Path::new("/w/tree"));
        assert!(access.touched.is_empty(), "{:?}", access.touched);
    }

    #[test]
    fn untouched_roots_are_top_most_and_skip_protected_paths() {
        let meta = crate::tree::Meta {
            mode: 0o644,
            mtime_ns: 0,
        };
        let mut tree = Tree::empty(meta);
        for (p, dir) in [
            ("a", true),
            ("a/x.py", false),
            ("a/y.py", false),
            ("b", true),
            ("b/z.py", false),
            ("c.txt", false),
            ("keep.txt", false),
        ] {
            let node = if dir {
                crate::tree::Node::Dir
            } else {
                crate::tree::Node::file(std::sync::Arc::from(&b"x"[..]))
            };
            tree.entries
                .insert(p.into(), crate::tree::Entry { node, meta });
        }
        let access = parse(
            "1 openat(AT_FDCWD, \"a/x.py\", O_RDONLY) = 3\n",
            Path::new("/r"),
        );
        let roots = access.untouched_roots(&tree, |p| p == "keep.txt");
        let roots: Vec<&str> = roots.iter().map(|p| &**p).collect();
        assert_eq!(roots, ["a/y.py", "b", "c.txt"]);
    }
}
