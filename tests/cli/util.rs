//! The harness: build fixture trees in temp dirs, run the real binary, redact output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_repromin"))
}

/// A scratch area holding a source tree and room for outputs.
pub struct Area {
    pub dir: tempfile::TempDir,
}

impl Area {
    pub fn new() -> Area {
        Area {
            dir: tempfile::Builder::new()
                .prefix("repromin-test-")
                .tempdir()
                .unwrap(),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Copies a fixture case's input to `root` (relative to the area).
    pub fn fixture(&self, case: &str, root: &str) -> PathBuf {
        crate::fixtures::copy(case, &self.path(root))
    }

    /// Writes files (path, contents) under `root` (relative to the area).
    pub fn write(&self, root: &str, files: &[(&str, &str)]) -> PathBuf {
        let base = self.path(root);
        for (path, text) in files {
            let full = base.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, text).unwrap();
        }
        std::fs::create_dir_all(&base).unwrap();
        base
    }
}

/// How long one run of the binary may take before the harness kills it.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs the binary with `args`, a clean environment and an outer timeout.
pub fn run(args: &[&str], cwd: &Path) -> Output {
    run_env(args, cwd, &[])
}

pub fn run_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(bin());
    command.args(args).current_dir(cwd).stdin(Stdio::null());
    for (name, _) in std::env::vars() {
        if name.starts_with("REPROMIN") || name.starts_with("GITHUB_") || name == "CI" {
            command.env_remove(name);
        }
    }
    for (k, v) in env {
        command.env(k, v);
    }
    output_within(command, RUN_TIMEOUT)
}

/// Runs `command` in its own process group with stdout and stderr piped, and returns its
/// output. A command still running after `timeout` has its whole process group killed and
/// fails the test with a message naming the command, so a hang cannot stall the suite.
pub fn output_within(mut command: Command, timeout: Duration) -> Output {
    use std::io::Read;
    use std::os::unix::process::CommandExt;

    let shown = format!("{command:?}");
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                let group = nix::unistd::Pid::from_raw(child.id() as i32);
                let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait();
                panic!("{shown} did not finish within {timeout:?}; its process group was killed");
            }
            Err(e) => panic!("cannot wait for {shown}: {e}"),
        }
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Replaces the area's path with `[AREA]` and temp dirs with `[TMP]`.
pub fn redact(text: &str, area: &Area) -> String {
    let area_path = area.dir.path().display().to_string();
    let text = text.replace(&area_path, "[AREA]");
    let tmp = regex::Regex::new(r"/tmp/repromin-[A-Za-z0-9_.-]+").unwrap();
    tmp.replace_all(&text, "[TMP]").to_string()
}

/// All regular files under `root` with their contents.
pub fn files(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut items: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    items.sort();
    for path in items {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        if meta.is_dir() {
            walk(root, &path, out);
        } else {
            out.insert(
                rel,
                String::from_utf8_lossy(&std::fs::read(&path).unwrap()).to_string(),
            );
        }
    }
}

/// Runs `argv` in `dir` and returns (status, combined output).
pub fn sh_in(dir: &Path, script: &str) -> (i32, String) {
    let out = Command::new("sh")
        .args(["-c", &format!("{script} 2>&1")])
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

/// Reads the report beside `output`.
pub fn report(output: &Path) -> serde_json::Value {
    let mut name = output.file_name().unwrap().to_os_string();
    name.push(".repromin");
    let path = output.with_file_name(name).join("report.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The `change` of every commit in a report, in order.
pub fn changes(report: &serde_json::Value) -> Vec<String> {
    report["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["change"].as_str().unwrap().to_string())
        .collect()
}

/// Processes whose command line contains `needle`.
pub fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = entry.path().join("cmdline");
        if let Ok(bytes) = std::fs::read(&cmdline) {
            let text = String::from_utf8_lossy(&bytes).replace('\0', " ");
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'));
            if text.contains(needle) && !zombie {
                found.push(text);
            }
        }
    }
    found
}
