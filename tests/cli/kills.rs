//! What a SIGKILL of repromin leaves behind: no process of the command, and no scratch
//! directory or git worktree after the next start. Real processes, real SIGKILL.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::util::{
    Area, GitRepo, SANDBOX_USER, bin, output_within, processes_with, sandbox, stderr,
};

/// A number no other process on the machine has in its command line: `sleep 1000.TAG`
/// names one process of one test.
fn tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{}{nanos:09}", std::process::id())
}

/// A repromin started in the background with `TMPDIR` set to `tmp`.
/// Starts `reduce src OUTPUT -- sh -c SCRIPT` in `cwd` (see [`start`]).
fn start_reduce(output: &str, script: &str, cwd: &Path, tmp: &Path, prefix: &[&str]) -> Child {
    let args = [
        "reduce",
        "src",
        output,
        "--no-progress",
        "--",
        "sh",
        "-c",
        script,
    ];
    start(&args, cwd, tmp, prefix)
}

/// repromin (behind `prefix`, a wrapper program and its arguments) with `args`, run in
/// `cwd` with `TMPDIR` set to `tmp`.
fn command(args: &[&str], cwd: &Path, tmp: &Path, prefix: &[&str]) -> Command {
    let mut command = match prefix.split_first() {
        Some((program, rest)) => {
            let mut c = Command::new(program);
            c.args(rest).arg(bin());
            c
        }
        None => Command::new(bin()),
    };
    command
        .args(args)
        .current_dir(cwd)
        .env("TMPDIR", tmp)
        .env_remove("CI")
        .stdin(Stdio::null());
    command
}

fn start(args: &[&str], cwd: &Path, tmp: &Path, prefix: &[&str]) -> Child {
    let mut command = command(args, cwd, tmp, prefix);
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    command.spawn().unwrap()
}

/// Runs repromin to its end with `TMPDIR` set to `tmp`.
fn finish(args: &[&str], cwd: &Path, tmp: &Path, prefix: &[&str]) -> std::process::Output {
    output_within(command(args, cwd, tmp, prefix), Duration::from_secs(300))
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGKILLs `child` and reaps it.
fn sigkill(child: &mut Child) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
}

/// Whether a process with `needle` in its command line is still there, after giving the
/// kernel a moment to deliver the signals that end it.
fn survives(needle: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if processes_with(needle).is_empty() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Ends the processes with `needle` in their command line, so that a failing test leaves
/// nothing behind.
fn clean_up(needle: &str) {
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if pid != std::process::id() as i32 && String::from_utf8_lossy(&cmdline).contains(needle) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

/// The entries of the temp dir `tmp` named `repromin-…`.
pub(crate) fn scratch_dirs(tmp: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("repromin-"))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// The scratch directory under `tmp` whose marker names process `pid`.
fn scratch_of(tmp: &Path, pid: u32) -> PathBuf {
    let mut found = Vec::new();
    for dir in scratch_dirs(tmp) {
        let text = std::fs::read_to_string(dir.join(".repromin-scratch")).unwrap_or_default();
        if text.lines().any(|l| l == format!("pid {pid}")) {
            found.push(dir);
        }
    }
    assert_eq!(
        found.len(),
        1,
        "one marked scratch directory of {pid}: {found:?}"
    );
    found.remove(0)
}

/// The id of the guardian that the repromin `pid` started.
fn guardian_of(pid: u32) -> u32 {
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1))
            .unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("repromin-guardian")
            && ppid == pid.to_string()
        {
            return entry.file_name().to_string_lossy().parse().unwrap();
        }
    }
    panic!("repromin {pid} has no guardian");
}

/// An area with a tree `src` and an empty temp dir `tmp`.
fn area_with_tree() -> (Area, PathBuf, PathBuf) {
    let area = Area::new();
    let src = area.write("src", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let tmp = area.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    (area, src, tmp)
}

#[test]
fn a_killed_reduce_leaves_no_process_and_its_scratch_goes_at_the_next_start() {
    let (area, _src, tmp) = area_with_tree();
    let t = tag();
    // A directory that is not repromin's, though named like one.
    let foreign = tmp.join("repromin-foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("keep"), "x").unwrap();
    let started = |name: &str| area.path(name);
    let hang = |name: &str, n: u32| {
        format!(
            "sleep 1000.{t}{n} & touch {}; sleep 1001.{t}{n}",
            started(name).display()
        )
    };
    let killed_cmd = hang("killed", 1);
    let mut killed = start_reduce("out1", &killed_cmd, area.dir.path(), &tmp, &[]);
    let live_cmd = hang("live", 2);
    let mut live = start_reduce("out2", &live_cmd, area.dir.path(), &tmp, &[]);
    wait_for("the commands", || {
        started("killed").exists() && started("live").exists()
    });
    let killed_scratch = scratch_of(&tmp, killed.id());
    let live_scratch = scratch_of(&tmp, live.id());
    sigkill(&mut killed);
    // The shell, its foreground child and its background child.
    let left = if survives(&format!("{t}1")) {
        processes_with(&format!("{t}1"))
    } else {
        Vec::new()
    };
    clean_up(&format!("{t}1"));
    assert!(left.is_empty(), "outlived repromin: {left:?}");
    assert!(
        !processes_with(&format!("sleep 1001.{t}2")).is_empty(),
        "the other run's command was ended"
    );
    assert!(killed_scratch.exists(), "nothing has swept yet");
    // The next start sweeps the dead run's scratch, and only that.
    let o = finish(
        &["doctor", "src", "--", "sh", "-c", "echo boom; exit 1"],
        area.dir.path(),
        &tmp,
        &[],
    );
    assert!(!killed_scratch.exists(), "{}", stderr(&o));
    assert_eq!(
        scratch_dirs(&tmp),
        vec![foreign.clone(), live_scratch.clone()]
    );
    assert!(foreign.join("keep").exists());
    sigkill(&mut live);
    let left = survives(&format!("{t}2"));
    clean_up(&format!("{t}2"));
    assert!(!left, "the second command outlived repromin");
    finish(
        &["doctor", "src", "--", "sh", "-c", "echo boom; exit 1"],
        area.dir.path(),
        &tmp,
        &[],
    );
    assert_eq!(scratch_dirs(&tmp), vec![foreign]);
}

#[test]
fn the_leader_dies_with_repromin_even_without_the_guardian() {
    let (area, _src, tmp) = area_with_tree();
    let t = tag();
    let flag = area.path("started");
    let script = format!("touch {}; exec sleep 1002.{t}", flag.display());
    let mut child = start_reduce("out", &script, area.dir.path(), &tmp, &[]);
    wait_for("the command", || flag.exists());
    let guardian = guardian_of(child.id());
    kill(Pid::from_raw(guardian as i32), Signal::SIGKILL).unwrap();
    sigkill(&mut child);
    let left = survives(&format!("sleep 1002.{t}"));
    clean_up(&t);
    assert!(!left, "the command outlived repromin");
}

/// `setpriv` as the unprivileged user `nobody` when the tests run as root.
fn unprivileged() -> Option<Vec<&'static str>> {
    if !nix::unistd::geteuid().is_root() {
        return Some(Vec::new());
    }
    let found = Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let why = "running as root, it is missing to drop privileges";
    if !crate::util::require_tool("setpriv", if found { Ok(()) } else { Err(why.into()) }) {
        return None;
    }
    Some(vec![
        "setpriv",
        "--reuid",
        "65534",
        "--regid",
        "65534",
        "--clear-groups",
        "--",
    ])
}

#[test]
fn a_scratch_directory_made_read_only_is_removed_when_not_root() {
    let Some(prefix) = unprivileged() else {
        return;
    };
    let (area, _src, tmp) = area_with_tree();
    let t = tag();
    // Everything the unprivileged user needs: the tree readable, the temp dir and a
    // directory for the signal its own.
    let signals = area.path("signals");
    std::fs::create_dir(&signals).unwrap();
    std::fs::set_permissions(area.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if nix::unistd::geteuid().is_root() {
        for dir in [&tmp, &signals, &area.dir.path().to_path_buf()] {
            nix::unistd::chown(dir.as_path(), Some(65534.into()), Some(65534.into())).unwrap();
        }
    }
    // The command makes its whole scratch directory read-only, files and directories.
    let lock_up = "mkdir -p \"$TMPDIR/d/e\" && touch \"$TMPDIR/d/e/f\" && chmod -R a-w ../../..";
    // A run that ends: its scratch directory is removed on the way out.
    let o = finish(
        &[
            "doctor",
            "src",
            "--",
            "sh",
            "-c",
            &format!("{lock_up}; exit 1"),
        ],
        area.dir.path(),
        &tmp,
        &prefix,
    );
    assert_eq!(scratch_dirs(&tmp), Vec::<PathBuf>::new(), "{}", stderr(&o));
    // A run that is killed: the next start removes it.
    let flag = signals.join("started");
    let script = format!("{lock_up} && touch {}; sleep 1003.{t}", flag.display());
    let mut child = start_reduce("out", &script, area.dir.path(), &tmp, &prefix);
    wait_for("the command", || flag.exists());
    let scratch = scratch_of(&tmp, child.id());
    let mode = std::fs::metadata(&scratch).unwrap().permissions().mode();
    assert_eq!(mode & 0o222, 0, "the scratch directory is read-only");
    sigkill(&mut child);
    let left = survives(&format!("sleep 1003.{t}"));
    clean_up(&t);
    assert!(!left, "the command outlived repromin");
    let o = finish(
        &["doctor", "src", "--", "sh", "-c", "echo boom; exit 1"],
        area.dir.path(),
        &tmp,
        &prefix,
    );
    assert_eq!(scratch_dirs(&tmp), Vec::<PathBuf>::new(), "{}", stderr(&o));
}

/// A repository whose install step hangs in the first side that takes `lock`, and whose
/// head adds a test; returns it with the merge base and the head.
fn hanging_install_repo(
    lock: &Path,
    flag: &Path,
    t: &str,
    test: &str,
) -> (GitRepo, String, String) {
    let install = format!(
        "if mkdir {} 2>/dev/null; then touch {}; sleep 1004.{t}; fi",
        lock.display(),
        flag.display()
    );
    let config = serde_json::json!({
        "version": 1,
        "tests": ["tests/t_*.sh"],
        "install": [install],
        "command": test,
        "report": "junit",
    })
    .to_string();
    let repo = GitRepo::new();
    let base = repo.commit(&[(".github/repromin.json", &config)], "base");
    let head = repo.commit(&[("tests/t_a.sh", "true\n")], "test");
    (repo, base, head)
}

pub(crate) fn exec_args<'a>(
    side: &'a str,
    out: &'a str,
    base: &'a str,
    head: &'a str,
    repo: &'a str,
) -> Vec<&'a str> {
    vec![
        "exec", "--side", side, "--out", out, "--base", base, "--head", head, "--repo", repo,
    ]
}

/// The worktrees git has registered besides the main one.
pub(crate) fn worktrees(repo: &GitRepo) -> Vec<String> {
    repo.git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .filter(|p| Path::new(p) != repo.path())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_killed_exec_leaves_no_process_and_the_next_exec_prunes_its_worktree() {
    let (area, _src, tmp) = area_with_tree();
    let t = tag();
    let (lock, flag) = (area.path("lock"), area.path("started"));
    let (repo, base, head) = hanging_install_repo(&lock, &flag, &t, "sh {tests} > {report}");
    let repo_path = repo.path().display().to_string();
    let out = |name: &str| {
        let dir = area.path(name);
        std::fs::create_dir(&dir).unwrap();
        dir.display().to_string()
    };
    let out_a = out("out-a");
    let mut killed = start(
        &exec_args("base", &out_a, &base, &head, &repo_path),
        repo.path(),
        &tmp,
        &[],
    );
    wait_for("the install step", || flag.exists());
    let scratch = scratch_of(&tmp, killed.id());
    let registered = worktrees(&repo);
    assert_eq!(registered.len(), 1, "{registered:?}");
    assert!(
        Path::new(&registered[0]).starts_with(&scratch),
        "{registered:?}"
    );
    // Another side, while the first one runs, leaves its worktree and scratch alone.
    let out_b = out("out-b");
    let o = finish(
        &exec_args("head", &out_b, &base, &head, &repo_path),
        repo.path(),
        &tmp,
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(worktrees(&repo), registered);
    assert!(
        Path::new(&registered[0])
            .join(".github/repromin.json")
            .exists()
    );
    assert_eq!(scratch_dirs(&tmp), vec![scratch.clone()]);
    sigkill(&mut killed);
    let left = survives(&format!("sleep 1004.{t}"));
    clean_up(&t);
    assert!(!left, "the install step outlived repromin");
    assert_eq!(worktrees(&repo), registered, "nothing has pruned yet");
    // The next side sweeps the dead side's scratch and forgets its worktree.
    let out_c = out("out-c");
    let o = finish(
        &exec_args("base", &out_c, &base, &head, &repo_path),
        repo.path(),
        &tmp,
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(worktrees(&repo), Vec::<String>::new());
    assert_eq!(scratch_dirs(&tmp), Vec::<PathBuf>::new());
}

#[test]
fn a_sandboxed_test_dies_with_repromin_even_without_the_guardian() {
    if !sandbox() {
        return;
    }
    let (area, _src, tmp) = area_with_tree();
    let t = tag();
    let signals = crate::util::tempdir_seen_by_the_sandbox();
    let flag = signals.path().join("started");
    // The test runs as the sandbox user; a child it leaves in the background, and one
    // that leaves the process group, die with the namespace.
    let test = format!(
        "sleep 1005.{t} & setsid sleep 1006.{t} & touch {}; sleep 1007.{t}",
        flag.display()
    );
    let (repo, base, head) = hanging_install_repo(&area.path("lock"), &area.path("x"), &t, &test);
    // The install step does not hang: the lock is taken.
    std::fs::create_dir(area.path("lock")).unwrap();
    let repo_path = repo.path().display().to_string();
    let out = area.path("out");
    std::fs::create_dir(&out).unwrap();
    let out = out.display().to_string();
    let mut args = exec_args("base", &out, &base, &head, &repo_path);
    args.extend(["--sandbox-user", SANDBOX_USER]);
    let mut child = start(&args, repo.path(), &tmp, &[]);
    wait_for("the sandboxed test", || flag.exists());
    let guardian = guardian_of(child.id());
    kill(Pid::from_raw(guardian as i32), Signal::SIGKILL).unwrap();
    sigkill(&mut child);
    let left: Vec<String> = (5..=7)
        .map(|n| format!("sleep 100{n}.{t}"))
        .filter(|needle| survives(needle))
        .collect();
    clean_up(&t);
    assert!(left.is_empty(), "outlived repromin: {left:?}");
}

#[test]
fn a_command_that_repromin_was_starting_when_killed_dies_with_its_children() {
    if !crate::util::failpoints() {
        return;
    }
    let (area, _src, tmp) = area_with_tree();
    let t = tag();
    let flag = area.path("started");
    let err = area.path("stderr");
    // The command leaves a child in the background. The hook holds repromin just after it
    // has started the command, before it does anything else about it; it is killed there.
    let script = format!("sleep 1008.{t} & touch {}; wait", flag.display());
    let args = [
        "reduce",
        "src",
        "out",
        "--no-progress",
        "--",
        "sh",
        "-c",
        &script,
    ]
    .map(String::from);
    let env = [
        ("TMPDIR", tmp.display().to_string()),
        (crate::util::FAILPOINT, "run:spawned".to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v));
    let mut child = crate::crash::spawn(&args, area.dir.path(), &env, &err);
    wait_for("repromin held after starting the command", || {
        let text = std::fs::read_to_string(&err).unwrap_or_default();
        text.contains(&crate::util::paused_at("run:spawned")) && flag.exists()
    });
    sigkill(&mut child);
    let left = survives(&format!("sleep 1008.{t}"));
    clean_up(&t);
    assert!(!left, "the command's child outlived repromin");
}

#[test]
fn a_repromin_that_a_command_starts_leaves_no_guardian_for_the_outer_one_to_reap() {
    // The gate's reduce side runs `repromin check-test` as its command, and reaps what its
    // commands leave behind as their subreaper. The inner repromin must take its own
    // guardian with it: a guardian left to the outer one is a zombie per probe.
    let (area, _src, tmp) = area_with_tree();
    let counts = area.path("zombies");
    let script = format!(
        "{bin} check-test --format junit --file t.py --name t --timeout-ms 20000 -- true \
         >/dev/null 2>&1; sleep 0.3; \
         awk -v p=\"$PPID\" '$3 == \"Z\" && $4 == p' /proc/[0-9]*/stat 2>/dev/null \
         | wc -l >> {counts}; exit 1",
        bin = bin().display(),
        counts = counts.display()
    );
    let o = finish(
        &[
            "reduce",
            "src",
            "out",
            "--no-progress",
            "--jobs",
            "1",
            "--allow-trivial",
            "--exit-code",
            "1",
            "--max-attempts",
            "4",
            "--",
            "sh",
            "-c",
            &script,
        ],
        area.dir.path(),
        &tmp,
        &[],
    );
    let seen = std::fs::read_to_string(&counts).unwrap_or_default();
    let per_run: Vec<u32> = seen.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert!(per_run.len() >= 3, "{per_run:?}: {}", stderr(&o));
    assert!(
        per_run.iter().all(|&n| n == 0),
        "zombies under the outer repromin, run by run: {per_run:?}"
    );
}

/// A daemon a probe starts in a session of its own (`setsid`, out of the run's process
/// group) is gone when the reduction ends, where each run has a cgroup; the report says
/// which containment the runs had.
#[test]
fn a_daemon_a_probe_starts_is_gone_when_the_reduction_ends() {
    let (area, _src, tmp) = area_with_tree();
    let t = tag();
    let script = format!("setsid sh -c 'sleep 1011.{t}' >/dev/null 2>&1 & exit 1");
    let o = finish(
        &[
            "reduce",
            "src",
            "out",
            "--no-progress",
            "--jobs",
            "1",
            "--allow-trivial",
            "--exit-code",
            "1",
            "--max-attempts",
            "3",
            "--",
            "sh",
            "-c",
            &script,
        ],
        area.dir.path(),
        &tmp,
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(area.path("out.repromin/report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let containment = report["execution"]["containment"].clone();
    let daemons = processes_with(&format!("sleep 1011.{t}"));
    clean_up(&t);
    if containment == "process-group" {
        // No cgroup here: the documented limitation, said in the report.
        crate::util::require_tool(
            "a cgroup of repromin's own",
            Err("no writable cgroup2 hierarchy".into()),
        );
        return;
    }
    assert_eq!(containment, "cgroup", "{report}");
    assert!(daemons.is_empty(), "outlived the reduction: {daemons:?}");
}
