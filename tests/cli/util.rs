//! The harness: build fixture trees and git repositories in temp dirs, run the real binary
//! under a timeout that kills it, redact output, and decide whether a test whose tool is
//! missing is skipped (locally, and listed as skipped) or fails (under `CI`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub(crate) fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_repromin"))
}

/// Starts `command`, whose program this process has just written. Another test's fork
/// can hold the written file open for the moment before its exec, and while it does the
/// kernel refuses to run the file (`ETXTBSY`); that passes, so this tries again.
pub(crate) fn spawn_written(command: &mut Command) -> std::process::Child {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match command.spawn() {
            Err(e)
                if e.kind() == std::io::ErrorKind::ExecutableFileBusy
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            started => return started.unwrap(),
        }
    }
}

/// A scratch area holding a source tree and room for outputs.
pub(crate) struct Area {
    pub dir: tempfile::TempDir,
}

impl Area {
    pub(crate) fn new() -> Area {
        Area {
            dir: tempfile::Builder::new()
                .prefix("repromin-test-")
                .tempdir()
                .unwrap(),
        }
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Copies a fixture case's input to `root` (relative to the area).
    pub(crate) fn fixture(&self, case: &str, root: &str) -> PathBuf {
        crate::fixtures::copy(case, &self.path(root))
    }

    /// Writes files (path, contents) under `root` (relative to the area).
    pub(crate) fn write(&self, root: &str, files: &[(&str, &str)]) -> PathBuf {
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
pub(crate) const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs the binary with `args`, a clean environment and an outer timeout.
pub(crate) fn run(args: &[&str], cwd: &Path) -> Output {
    run_env(args, cwd, &[])
}

pub(crate) fn run_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(bin());
    command.args(args).current_dir(cwd).stdin(Stdio::null());
    clean_env(&mut command);
    for (k, v) in env {
        command.env(k, v);
    }
    output_within(command, RUN_TIMEOUT)
}

/// Runs `exec --side SIDE` of `repo` (`base` to `head`) into `out` with `extra` arguments,
/// and returns what it did.
pub(crate) fn exec_side(
    repo: &GitRepo,
    side: &str,
    out: &Path,
    (base, head): (&str, &str),
    extra: &[&str],
) -> Output {
    let out_path = out.display().to_string();
    let repo_path = repo.path().display().to_string();
    let mut args = vec![
        "exec", "--side", side, "--out", &out_path, "--base", base, "--head", head, "--repo",
        &repo_path,
    ];
    args.extend_from_slice(extra);
    run(&args, repo.path())
}

/// Runs the base side of `repo` (`base` to `head`) into a new output directory, and
/// returns that directory with the reduce side's command for it, run by `program` (the
/// binary under test, or a copy of it) with `extra` arguments, in a clean environment.
pub(crate) fn base_then_reduce_side(
    program: &Path,
    repo: &GitRepo,
    (base, head): (&str, &str),
    extra: &[&str],
) -> (tempfile::TempDir, Command) {
    let out = tempfile::tempdir().unwrap();
    let out_path = out.path().display().to_string();
    let repo_path = repo.path().display().to_string();
    let o = exec_side(repo, "base", out.path(), (base, head), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut command = Command::new(program);
    command
        .args([
            "exec",
            "--side",
            "reduce",
            "--out",
            &out_path,
            "--base-report",
        ])
        .arg(out.path().join("base.report"))
        .args(["--base", base, "--head", head, "--repo", &repo_path])
        .args(extra)
        .current_dir(repo.path())
        .stdin(Stdio::null());
    clean_env(&mut command);
    (out, command)
}

/// Removes from `command`'s environment what would change repromin's behaviour: its own
/// variables (`REPROMIN…`, failpoints included), GitHub's and `CI`.
pub(crate) fn clean_env(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.starts_with("REPROMIN") || text.starts_with("GITHUB_") || text == "CI" {
            command.env_remove(&name);
        }
    }
}

/// Runs `command` in its own process group with stdout and stderr piped, and returns its
/// output. A command still running after `timeout` has its whole process group killed and
/// fails the test with a message naming the command, so a hang cannot stall the suite.
pub(crate) fn output_within(mut command: Command, timeout: Duration) -> Output {
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

/// `repromin line` with `input` on its standard input.
pub(crate) fn line_command(input: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(bin())
        .arg("line")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Replaces the area's path with `[AREA]` and temp dirs with `[TMP]`.
pub(crate) fn redact(text: &str, area: &Area) -> String {
    let area_path = area.dir.path().display().to_string();
    let text = text.replace(&area_path, "[AREA]");
    let tmp = regex::Regex::new(r"/tmp/repromin-[A-Za-z0-9_.-]+").unwrap();
    tmp.replace_all(&text, "[TMP]").to_string()
}

/// All regular files under `root` with their contents.
pub(crate) fn files(root: &Path) -> BTreeMap<String, String> {
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
pub(crate) fn sh_in(dir: &Path, script: &str) -> (i32, String) {
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
pub(crate) fn report(output: &Path) -> serde_json::Value {
    let mut name = output.file_name().unwrap().to_os_string();
    name.push(".repromin");
    let path = output.with_file_name(name).join("report.json");
    let report = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    crate::schemas::check_report(&report);
    report
}

/// The `change` of every commit in a report, in order.
pub(crate) fn changes(report: &serde_json::Value) -> Vec<String> {
    report["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["change"].as_str().unwrap().to_string())
        .collect()
}

/// Processes whose command line contains `needle`.
pub(crate) fn processes_with(needle: &str) -> Vec<String> {
    processes_where(|dir| {
        let bytes = std::fs::read(dir.join("cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&bytes)
            .replace('\0', " ")
            .contains(needle)
    })
    .into_iter()
    .map(|(_, cmdline)| cmdline)
    .collect()
}

/// Live processes (zombies left out) for which `pick`, given their `/proc/PID`, holds: their
/// ids and command lines.
pub(crate) fn processes_where(pick: impl Fn(&Path) -> bool) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(bytes) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'));
        if !zombie && pick(&entry.path()) {
            found.push((pid, String::from_utf8_lossy(&bytes).replace('\0', " ")));
        }
    }
    found
}

/// Under `CI` a missing tool fails the test; elsewhere the test is recorded as skipped in
/// the skip list that `.ci/run` prints (`src/test_skip.rs`) and the caller returns early.
pub(crate) use crate::test_skip::require_tool;

/// Whether `program --version` runs.
pub(crate) fn tool_runs(program: &str) -> Result<(), String> {
    match Command::new(program).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("`{program} --version` exited with {}", o.status)),
        Err(e) => Err(format!("`{program}` cannot be started: {e}")),
    }
}

/// The one `repromin/v1` line of a gate command's stdout, decoded.
pub(crate) fn line(out: &str) -> serde_json::Value {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {out}");
    let json = lines[0]
        .strip_prefix("repromin/v1 ")
        .unwrap_or_else(|| panic!("{out}"));
    let line = serde_json::from_str(json).unwrap();
    crate::schemas::check_line(&line);
    line
}

/// A git repository in a temp dir, committed to step by step.
pub(crate) struct GitRepo {
    pub dir: tempfile::TempDir,
}

impl GitRepo {
    pub(crate) fn new() -> GitRepo {
        let dir = tempfile::Builder::new()
            .prefix("repromin-gate-")
            .tempdir()
            .unwrap();
        let repo = GitRepo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.email", "t@example.com"]);
        repo.git(&["config", "user.name", "t"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Writes files (an empty content deletes the file) and commits; returns the commit.
    pub(crate) fn commit(&self, files: &[(&str, &str)], message: &str) -> String {
        for (path, text) in files {
            let full = self.path().join(path);
            if text.is_empty() {
                let _ = std::fs::remove_file(&full);
            } else {
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(&full, text).unwrap();
            }
        }
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    pub(crate) fn mv(&self, from: &str, to: &str) {
        self.git(&["mv", from, to]);
    }
}

/// A pytest configuration that uses the machine's pytest (no venv, no install).
pub(crate) const PYTEST_CONFIG: &str = r#"{
  "version": 1,
  "tests": ["tests/**/test_*.py"],
  "carry": ["tests/**/conftest.py"],
  "command": "python3 -m pytest -p no:cacheprovider -q --junitxml={report} {tests}",
  "report": "junit"
}
"#;

/// A shell test runner that writes JUnit (`sh run_tests.sh REPORT TESTS...`), one test
/// `check` per file, a failure typed as an assertion.
pub(crate) const SH_RUNNER: &str = r#"report=$1; shift
out="<testsuites>"
for t in "$@"; do
  if sh "$t"; then
    out="$out<testsuite name=\"$t\"><testcase classname=\"$t\" name=\"check\" file=\"$t\"/></testsuite>"
  else
    out="$out<testsuite name=\"$t\"><testcase classname=\"$t\" name=\"check\" file=\"$t\"><failure message=\"failed\" type=\"AssertionError\"/></testcase></testsuite>"
  fi
done
printf '%s</testsuites>\n' "$out" > "$report"
"#;

/// The user the sandbox tests run their side as.
pub(crate) const SANDBOX_USER: &str = "repromin-sbx";

/// Whether this machine can run the gate's sandbox: root (for namespaces and the sandbox
/// user) and the tools the sandbox and its tests use. Reads only; creates nothing.
pub(crate) fn sandbox_available() -> Result<(), String> {
    if !nix::unistd::getuid().is_root() {
        return Err("the sandbox needs root to switch users and create namespaces".into());
    }
    for tool in [
        "unshare", "setpriv", "mount", "ip", "useradd", "gzip", "base64",
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Err(format!("`{tool}` is not installed"));
        }
    }
    Ok(())
}

/// A temporary directory that a sandboxed run sees too, for a test to hear from it:
/// sandboxed runs have their own empty `/tmp`, `/var/tmp` and `/dev/shm`, so it is made in
/// `/run` (the sandbox tests run as root), and open to everyone.
pub(crate) fn tempdir_seen_by_the_sandbox() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("repromin-test-")
        .tempdir_in("/run")
        .expect("a directory in /run");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
        .expect("chmod 777");
    dir
}

/// The opt-in that lets the tests change the machine beyond their temp dirs: create the
/// system user [`SANDBOX_USER`] and import the container tests' images. Without it
/// (`REPROMIN_TEST_HOST_CHANGES=1`) a test that would need either skips, or fails under
/// `CI`. `.ci/run` sets it and removes the user and the images that the suite created.
pub(crate) const HOST_CHANGES_ENV: &str = "REPROMIN_TEST_HOST_CHANGES";

/// Whether the tests may do `what` to the machine (see [`HOST_CHANGES_ENV`]).
pub(crate) fn host_changes(what: &str) -> Result<(), String> {
    if std::env::var(HOST_CHANGES_ENV).is_ok_and(|v| v == "1") {
        Ok(())
    } else {
        Err(format!("{what} needs {HOST_CHANGES_ENV}=1"))
    }
}

/// Creates [`SANDBOX_USER`] unless it exists, when the tests may ([`host_changes`]); once per
/// test process, so that the tests of one process do not race `useradd` (those of other
/// processes may: the user is looked for again after a failure).
pub(crate) fn ensure_sandbox_user() -> Result<(), String> {
    static CREATED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    CREATED
        .get_or_init(|| {
            let exists = || matches!(nix::unistd::User::from_name(SANDBOX_USER), Ok(Some(_)));
            if exists() {
                return Ok(());
            }
            host_changes(&format!("creating the system user {SANDBOX_USER}"))?;
            let out = Command::new("useradd")
                .args([
                    "--system",
                    "--no-create-home",
                    "--shell",
                    "/usr/sbin/nologin",
                    SANDBOX_USER,
                ])
                .output()
                .map_err(|e| format!("cannot run useradd: {e}"))?;
            // Another test process may have created it meanwhile.
            if exists() {
                Ok(())
            } else {
                Err(format!(
                    "useradd {SANDBOX_USER} failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
        })
        .clone()
}

/// Whether a sandbox test can run (see [`require_tool`]); when it can, the sandbox user
/// exists.
pub(crate) fn sandbox() -> bool {
    require_tool(
        "the sandbox",
        sandbox_available().and_then(|()| ensure_sandbox_user()),
    )
}

/// The vitest that `.ci/run` installs under `target/test-node`, if a test can use it (see
/// [`require_tool`]).
pub(crate) fn vitest_modules() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-node/node_modules");
    let found = if dir.join(".bin/vitest").exists() {
        Ok(())
    } else {
        Err("it is not installed under target/test-node".to_string())
    };
    require_tool("vitest", found).then_some(dir)
}

/// A vitest repository whose merge base has a bug in `src/calc.js`; `modules` is linked
/// in as its `node_modules`.
pub(crate) fn node_repo(modules: &Path, reporter: &str, report: &str) -> (GitRepo, String) {
    let config = format!(
        r#"{{"version":1,"tests":["test/**/*.test.js"],"install":["ln -s {} node_modules"],"command":"node_modules/.bin/vitest run --reporter={reporter} --outputFile={{report}} {{tests}}","report":"{report}"}}"#,
        modules.display()
    );
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", &config),
            (
                "package.json",
                "{\"name\":\"calc\",\"type\":\"module\",\"private\":true}\n",
            ),
            (
                "src/calc.js",
                "export function add(a, b) {\n  return a - b;\n}\n",
            ),
            (".gitignore", "node_modules\n"),
        ],
        "base",
    );
    (repo, base)
}

/// Runs `repromin run --no-reduce` on `base..head` of `repo` with `extra` options and
/// returns (the line, decoded; stderr, where `run` shows its table). The reduce side has
/// tests of its own (certificate.rs); here it would only add time.
pub(crate) fn gate_run(
    repo: &GitRepo,
    base: &str,
    head: &str,
    extra: &[&str],
) -> (serde_json::Value, String) {
    gate_run_env(repo, base, head, extra, &[])
}

/// The arguments of `repromin run` without its reduce side, on `base` and `head` of the
/// repository at `repo`.
pub(crate) fn no_reduce_args<'a>(base: &'a str, head: &'a str, repo: &'a str) -> [&'a str; 8] {
    [
        "run",
        "--no-reduce",
        "--base",
        base,
        "--head",
        head,
        "--repo",
        repo,
    ]
}

/// [`gate_run`] with `env` added to the environment `run` (and so every side's command)
/// inherits.
pub(crate) fn gate_run_env(
    repo: &GitRepo,
    base: &str,
    head: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (serde_json::Value, String) {
    let path = repo.path().display().to_string();
    let mut args = no_reduce_args(base, head, &path).to_vec();
    args.extend_from_slice(extra);
    let o = run_env(&args, repo.path(), env);
    assert!(o.status.success(), "{}", stderr(&o));
    (line(&stdout(&o)), stderr(&o))
}

/// The variable that holds a test build of repromin at a failpoint (`src/failpoint.rs`).
pub(crate) const FAILPOINT: &str = "REPROMIN_FAILPOINT";

/// The line a test build prints on stderr when a failpoint holds it at `point`.
pub(crate) fn paused_at(point: &str) -> String {
    format!("repromin: failpoint: paused at {point}")
}

/// Whether the binary under test has failpoints, which only a build with the `failpoints`
/// feature has (`cargo test --features failpoints`, as `.ci/run` runs the suite). Without
/// them a test that holds repromin at a failpoint fails under `CI` and is skipped, saying
/// why, elsewhere.
pub(crate) fn failpoints() -> bool {
    let built = if cfg!(feature = "failpoints") {
        Ok(())
    } else {
        Err("the binary was built without the `failpoints` feature: run `cargo test --features failpoints`".to_string())
    };
    require_tool("failpoints", built)
}

/// Waits until `child` (its stderr piped) says that a failpoint holds it at `point`
/// ([`FAILPOINT`]), then kills it with SIGKILL and reaps it; panics with what it printed
/// when it never gets there. Returns how it ended.
pub(crate) fn kill_when_paused(
    child: &mut std::process::Child,
    point: &str,
) -> std::process::ExitStatus {
    use std::io::BufRead;
    let pipe = child.stderr.take().expect("stderr piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let wanted = paused_at(point);
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    let mut seen = Vec::new();
    let kill = |child: &mut std::process::Child| {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        child.wait().expect("reaped")
    };
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
            Ok(line) if line == wanted => return kill(child),
            Ok(line) => seen.push(line),
            Err(_) => {
                kill(child);
                panic!(
                    "repromin never paused at {point}; its stderr:\n{}",
                    seen.join("\n")
                );
            }
        }
    }
}
