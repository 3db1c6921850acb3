//! The container runner against a real engine: podman with runc, as `.ci/run` installs it,
//! with test images imported from a static busybox (no registry is reachable). Where the
//! engine cannot run a container, or the test image is missing and the tests may not import
//! it (`REPROMIN_TEST_HOST_CHANGES`, see `util::host_changes`), the tests skip (listed as
//! skipped), or fail under `CI`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use crate::util::{Area, files, host_changes, report, require_tool, run_env, stderr};

/// The image every test runs: a static busybox with its applets linked.
pub(crate) const IMAGE: &str = "localhost/repromin-test:busybox";

/// The engine's settings for this machine, given per command (`CONTAINERS_CONF`) rather
/// than in /etc/containers: runc with the cgroupfs manager (crun fails on the hybrid cgroup
/// layout), and no default ulimits (raising RLIMIT_NOFILE is not permitted here).
const CONTAINERS_CONF: &str = "[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = \"cgroupfs\"\nruntime = \"runc\"\n";

/// The environment every podman call of the tests, repromin's included, runs with.
pub(crate) fn podman_env() -> Vec<(&'static str, String)> {
    vec![("CONTAINERS_CONF", conf_path().display().to_string())]
}

fn conf_path() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("repromin-podman.conf")
}

/// Runs `podman ARGS` with the test settings and returns (success, combined output).
pub(crate) fn podman(args: &[&str]) -> (bool, String) {
    let out = Command::new("podman")
        .args(args)
        .envs(podman_env())
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) => (
            o.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        ),
        Err(e) => (false, format!("cannot start podman: {e}")),
    }
}

/// Imports `root` (a directory) as the image `tag`.
fn import(root: &Path, tag: &str) -> Result<(), String> {
    let tar = root.with_extension("tar");
    let status = Command::new("tar")
        .arg("-C")
        .arg(root)
        .arg("-cf")
        .arg(&tar)
        .arg(".")
        .status()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !status.success() {
        return Err("tar failed".into());
    }
    let (ok, out) = podman(&["import", &tar.display().to_string(), tag]);
    if ok {
        Ok(())
    } else {
        Err(format!("podman import failed: {out}"))
    }
}

/// A busybox root: the static binary and a link for each of its applets.
fn busybox_root(dir: &Path, extra: Option<(&str, &str)>) -> Result<PathBuf, String> {
    let busybox = ["/bin/busybox", "/usr/bin/busybox"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists())
        .ok_or("no static busybox (Debian's busybox-static)")?;
    let root = dir.join("root");
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
    std::fs::copy(busybox, bin.join("busybox")).map_err(|e| e.to_string())?;
    let list = Command::new(busybox)
        .arg("--list")
        .output()
        .map_err(|e| e.to_string())?;
    for applet in String::from_utf8_lossy(&list.stdout).lines() {
        if applet != "busybox" && !applet.is_empty() {
            let _ = std::os::unix::fs::symlink("busybox", bin.join(applet));
        }
    }
    for dir in ["tmp", "workspace", "etc"] {
        std::fs::create_dir_all(root.join(dir)).map_err(|e| e.to_string())?;
    }
    if let Some((path, text)) = extra {
        std::fs::write(root.join(path), text).map_err(|e| e.to_string())?;
    }
    Ok(root)
}

/// Builds `tag` from a busybox root, with one extra file when given (another image id).
pub(crate) fn build_image(tag: &str, extra: Option<(&str, &str)>) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = busybox_root(dir.path(), extra)?;
    import(&root, tag)
}

/// Whether podman runs containers here: the settings written, the test image built once
/// and a container run from it.
fn engine() -> Result<(), String> {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    READY
        .get_or_init(|| {
            match Command::new("podman").arg("--version").output() {
                Ok(o) if o.status.success() => {}
                Ok(o) => return Err(format!("`podman --version` exited with {}", o.status)),
                Err(e) => return Err(format!("`podman` cannot be started: {e}")),
            }
            // Written whole and renamed: other test processes may be reading it.
            let written = conf_path().with_extension(format!("conf.{}", std::process::id()));
            std::fs::write(&written, CONTAINERS_CONF).map_err(|e| e.to_string())?;
            std::fs::rename(&written, conf_path()).map_err(|e| e.to_string())?;
            if !podman(&["image", "exists", IMAGE]).0 {
                host_changes(&format!("importing the test image {IMAGE}"))?;
                build_image(IMAGE, None)?;
            }
            let (ok, out) = podman(&["run", "--rm", IMAGE, "/bin/sh", "-c", "echo ok"]);
            if ok && out.contains("ok") {
                Ok(())
            } else {
                Err(format!("podman cannot run a container here: {out}"))
            }
        })
        .clone()
}

/// Whether the test can run (see [`require_tool`]).
pub(crate) fn have_engine() -> bool {
    require_tool("podman", engine())
}

/// Held shared by every test that starts a repromin with the container runner, and alone
/// by the one that leaves a container behind on purpose: such a repromin first removes the
/// containers of owners that have died, so a test running beside it would remove the
/// container before it is looked for. A lock on a file (`flock`), so that it holds between
/// the tests of one process (`cargo test`) and between test processes (cargo-nextest).
fn sweeps(how: FlockArg) -> Flock<std::fs::File> {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("repromin-containers.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    Flock::lock(file, how).unwrap_or_else(|(_, e)| panic!("cannot lock {}: {e}", path.display()))
}

fn beside_others() -> Flock<std::fs::File> {
    sweeps(FlockArg::LockShared)
}

/// The arguments that run a reduction's commands in the test image.
const IN_CONTAINER: [&str; 6] = [
    "--runner",
    "docker",
    "--container-cli",
    "podman",
    "--image",
    IMAGE,
];

fn reduce(area: &Area, extra: &[&str], script: &str) -> std::process::Output {
    let mut args = vec!["reduce", "src", "out", "--no-progress", "-j", "2"];
    args.extend_from_slice(extra);
    args.extend(["--", "sh", "-c", script]);
    let env = podman_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    run_env(&args, area.dir.path(), &env)
}

/// The names of the containers that the repromin process `pid` started and left.
fn containers_of(pid: u32) -> Vec<String> {
    let (_, out) = podman(&[
        "ps",
        "-a",
        "--filter",
        "label=io.repromin.owner",
        "--format",
        "{{.Names}}",
    ]);
    out.lines()
        .filter(|name| name.starts_with(&format!("repromin-{pid}-")))
        .map(str::to_string)
        .collect()
}

const TREE: &[(&str, &str)] = &[
    ("a.txt", "alpha\nbeta\n"),
    ("b.txt", "gamma\nthe BUG is here\ndelta\n"),
    ("c.txt", "epsilon\n"),
    ("sub/d.txt", "zeta\neta\n"),
];

/// The failure: a file that holds `BUG`.
const FAILS: &str =
    r#"cat *.txt sub/*.txt 2>/dev/null | grep -q BUG || exit 0; echo "error: BUG found"; exit 1"#;

#[test]
fn a_reduction_in_a_container_reaches_the_same_tree_as_on_the_host() {
    if !have_engine() {
        return;
    }
    let _sweeps = beside_others();
    let host = Area::new();
    host.write("src", TREE);
    let out = reduce(&host, &[], FAILS);
    assert!(out.status.success(), "{}", stderr(&out));

    let area = Area::new();
    area.write("src", TREE);
    // Inside, the tree is at /workspace, HOME is /tmp, only --env reaches the command, and
    // there is no network but the loopback; a run that sees otherwise does not fail.
    let checks = r#"test "$PWD" = /workspace && test "$HOME" = /tmp && test -z "$LEAKED" && test "$GIVEN" = yes && test "$(ls /sys/class/net)" = lo || exit 0; "#;
    let mut args = IN_CONTAINER.to_vec();
    args.extend(["--env", "GIVEN=yes"]);
    let mut env = podman_env();
    env.push(("LEAKED", "from the host".into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut argv = vec!["reduce", "src", "out", "--no-progress", "-j", "2"];
    argv.extend(args);
    let script = format!("{checks}{FAILS}");
    argv.extend(["--", "sh", "-c", &script]);
    let out = run_env(&argv, area.dir.path(), &env);
    assert!(out.status.success(), "{}", stderr(&out));

    assert_eq!(files(&area.path("out")), files(&host.path("out")));
    assert_eq!(
        files(&area.path("out")).keys().collect::<Vec<_>>(),
        ["b.txt"]
    );
    let report = report(&area.path("out"));
    let execution = &report["execution"];
    assert_eq!(execution["runner"], "docker");
    let container = &execution["container"];
    assert_eq!(container["cli"], "podman");
    assert_eq!(container["image"], IMAGE);
    let (_, id) = podman(&["image", "inspect", "--format", "{{.Id}}", IMAGE]);
    assert_eq!(
        container["image_id"],
        format!("sha256:{}", id.trim().trim_start_matches("sha256:"))
    );
    assert_eq!(container["network"], false);
    assert_eq!(
        report["execution"]["env_names"],
        serde_json::json!(["GIVEN"])
    );
    assert!(!serde_json::to_string(&report).unwrap().contains("\"yes\""));
}

#[test]
fn a_run_over_the_memory_limit_is_a_resource_failure_not_the_failure() {
    if !have_engine() {
        return;
    }
    let _sweeps = beside_others();
    let area = Area::new();
    area.write("src", TREE);
    area.write("src", &[("needed.txt", "keeps the memory low\n")]);
    // Without needed.txt the command prints the failure, then allocates past the limit and
    // is killed (exit 137): the output matches, the run must still not count.
    let script = format!(
        r#"if [ ! -e needed.txt ]; then echo "error: BUG found"; x=$(head -c 300000000 /dev/zero | tr '\0' a); fi; {FAILS}"#
    );
    let mut args = IN_CONTAINER.to_vec();
    args.extend(["--docker-memory", "48m"]);
    let out = reduce(&area, &args, &script);
    assert!(out.status.success(), "{}", stderr(&out));
    let kept: Vec<String> = files(&area.path("out")).into_keys().collect();
    assert_eq!(kept, ["b.txt", "needed.txt"]);
    assert_eq!(
        report(&area.path("out"))["execution"]["container"]["memory_bytes"],
        48 * 1024 * 1024
    );
}

#[test]
fn a_tree_grown_over_the_workspace_limit_is_a_resource_failure() {
    if !have_engine() {
        return;
    }
    let _sweeps = beside_others();
    let area = Area::new();
    area.write("src", TREE);
    area.write("src", &[("needed.txt", "keeps the tree small\n")]);
    // Without needed.txt the command writes 40 MB into the tree, then shows the failure.
    let script = format!(
        r#"if [ ! -e needed.txt ]; then dd if=/dev/zero of=big bs=1048576 count=40 2>/dev/null; sleep 2; fi; {FAILS}"#
    );
    let mut args = IN_CONTAINER.to_vec();
    args.extend(["--docker-workspace-limit", "10m"]);
    let out = reduce(&area, &args, &script);
    assert!(out.status.success(), "{}", stderr(&out));
    let kept: Vec<String> = files(&area.path("out")).into_keys().collect();
    assert_eq!(kept, ["b.txt", "needed.txt"]);
}

#[test]
fn a_hung_command_is_timed_out_and_its_container_removed() {
    if !have_engine() {
        return;
    }
    let _sweeps = beside_others();
    let area = Area::new();
    area.write("src", TREE);
    area.write("src", &[("needed.txt", "keeps it from hanging\n")]);
    // Without needed.txt the command hangs (busybox sh as PID 1 ignores SIGTERM, so the
    // client alone cannot end it).
    let script = format!(r#"[ -e needed.txt ] || sleep 600; {FAILS}"#);
    let mut args = IN_CONTAINER.to_vec();
    args.extend(["--timeout", "3s"]);
    let mut command = Command::new(crate::util::bin());
    let mut argv = vec!["reduce", "src", "out", "--no-progress", "-j", "2"];
    argv.extend(args);
    argv.extend(["--", "sh", "-c", &script]);
    command
        .args(&argv)
        .current_dir(area.dir.path())
        .envs(podman_env())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    crate::util::clean_env(&mut command);
    let child = command.spawn().unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let kept: Vec<String> = files(&area.path("out")).into_keys().collect();
    assert_eq!(kept, ["b.txt", "needed.txt"]);
    assert_eq!(containers_of(pid), Vec::<String>::new());
}

#[test]
fn containers_of_a_killed_repromin_are_removed_by_the_next_one() {
    if !have_engine() {
        return;
    }
    let _alone = sweeps(FlockArg::LockExclusive);
    let area = Area::new();
    area.write("src", TREE);
    let mut command = Command::new(crate::util::bin());
    let mut argv = vec!["reduce", "src", "out", "--no-progress"];
    argv.extend(IN_CONTAINER);
    argv.extend(["--", "sh", "-c", "sleep 600"]);
    command
        .args(&argv)
        .current_dir(area.dir.path())
        .envs(podman_env())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    crate::util::clean_env(&mut command);
    let mut child = command.spawn().unwrap();
    let pid = child.id();
    // The baseline's container is up: repromin is killed and cannot clean up.
    let deadline = Instant::now() + Duration::from_secs(120);
    while containers_of(pid).is_empty() {
        assert!(Instant::now() < deadline, "no container was started");
        std::thread::sleep(Duration::from_millis(200));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let left = containers_of(pid);
    assert_eq!(
        left.len(),
        1,
        "the killed run's container is left: {left:?}"
    );

    // The next repromin with the container runner removes it before it runs anything.
    let other = Area::new();
    other.write("src", TREE);
    let mut args = vec!["doctor", "src"];
    args.extend(IN_CONTAINER);
    args.extend(["--", "sh", "-c", FAILS]);
    let env = podman_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = run_env(&args, other.dir.path(), &env);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(containers_of(pid), Vec::<String>::new());
    let said = crate::util::stdout(&out);
    assert!(
        said.contains(&format!(
            "runner: containers of {IMAGE} through podman (sha256:"
        )),
        "{said}"
    );
}

#[test]
fn a_resume_refuses_an_image_reference_that_now_names_another_image() {
    if !have_engine() {
        return;
    }
    if !require_tool("podman", host_changes("importing test images")) {
        return;
    }
    let _sweeps = beside_others();
    let tag = format!("localhost/repromin-test:drift-{}", std::process::id());
    build_image(&tag, Some(("etc/version", "1\n"))).unwrap();
    let area = Area::new();
    area.write("src", TREE);
    let session = area.path("session");
    let session = session.display().to_string();
    let args = [
        "--runner",
        "docker",
        "--container-cli",
        "podman",
        "--image",
        &tag,
        "--session",
        &session,
    ];
    let out = reduce(&area, &args, FAILS);
    let (_, first) = podman(&["image", "inspect", "--format", "{{.Id}}", &tag]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The same reference now names another image: the resume is refused before anything
    // runs, naming the image id.
    build_image(&tag, Some(("etc/version", "2\n"))).unwrap();
    let mut resume = args.to_vec();
    resume.push("--resume");
    let out = reduce(&area, &resume, FAILS);
    let _ = podman(&["rmi", "-f", &tag]);
    let _ = podman(&["rmi", "-f", first.trim()]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("the image id"), "{err}");
    assert!(err.contains("sha256:"), "{err}");
}

#[test]
fn a_missing_image_or_engine_is_named_and_nothing_runs() {
    if !have_engine() {
        return;
    }
    let _sweeps = beside_others();
    let area = Area::new();
    area.write("src", TREE);
    let out = reduce(
        &area,
        &[
            "--runner",
            "docker",
            "--container-cli",
            "podman",
            "--image",
            "localhost/repromin-test:no-such-tag",
        ],
        FAILS,
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("image `localhost/repromin-test:no-such-tag` is not in the local podman image store (nothing is pulled"),
        "{err}"
    );
    assert!(!area.path("out").exists());
    // A CLI that is not there is named.
    let out = run_env(
        &[
            "reduce", "src", "out", "--runner", "docker", "--image", IMAGE, "--", "true",
        ],
        area.dir.path(),
        &[("PATH", "/nonexistent")],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the container CLI `docker` cannot be started"),
        "{}",
        stderr(&out)
    );
    assert!(!area.path("out").exists());
    // The options that only containers take are refused on the host.
    let out = reduce(&area, &["--docker-memory", "1g"], FAILS);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--docker-memory applies to containers"));
    let out = reduce(&area, &["--runner", "docker"], FAILS);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--runner docker needs --image"));
    let out = reduce(
        &area,
        &[
            "--runner",
            "docker",
            "--image",
            IMAGE,
            "--docker-memory",
            "512",
        ],
        FAILS,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("needs a unit"), "{}", stderr(&out));
}

/// A test runner in shell that writes JUnit with a `file` attribute per test case, and
/// refuses to run anywhere but in a container without a network.
const RUN_TESTS: &str = r#"report=$1; shift
test "$(ls /sys/class/net)" = lo || { echo "not in a container: $(ls /sys/class/net)"; exit 3; }
{
  echo '<testsuites><testsuite name="shell">'
  for t in "$@"; do
    n=$(basename "$t" .sh)
    if sh "$t" >/dev/null 2>&1; then
      echo "<testcase classname=\"shell\" name=\"$n\" file=\"$t\"/>"
    else
      echo "<testcase classname=\"shell\" name=\"$n\" file=\"$t\"><failure message=\"$t failed\"/></testcase>"
    fi
  done
  echo '</testsuite></testsuites>'
} > "$report"
"#;

#[test]
fn the_gate_runs_its_sides_in_the_container_the_configuration_names() {
    if !have_engine() {
        return;
    }
    let _sweeps = beside_others();
    let repo = crate::util::GitRepo::new();
    let config = format!(
        r#"{{"version": 1, "tests": ["tests/*.sh"], "install": ["test \"$(ls /sys/class/net)\" = lo"], "command": "sh run-tests.sh {{report}} {{tests}}", "report": "junit", "container": {{"image": "{IMAGE}"}}}}"#
    );
    let base = repo.commit(
        &[
            (".github/repromin.json", &config),
            ("run-tests.sh", RUN_TESTS),
            ("lib.sh", "add() { echo $(($1 - $2)); }\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("lib.sh", "add() { echo $(($1 + $2)); }\n"),
            ("tests/test_add.sh", ". ./lib.sh\n[ \"$(add 2 3)\" = 5 ]\n"),
        ],
        "fix add",
    );
    let env = podman_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (line, err) =
        crate::util::gate_run_env(&repo, &base, &head, &["--container-cli", "podman"], &env);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{err}");
    // The reduce side: check-test runs on the host and its test runs in the container.
    let path = repo.path().display().to_string();
    let out = run_env(
        &[
            "run",
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &path,
            "--container-cli",
            "podman",
        ],
        repo.path(),
        &env,
    );
    let line = crate::util::line(&crate::util::stdout(&out));
    assert_eq!(line["certificate"]["verdict"], "certified", "{line}");

    // On the host the runner refuses to run: the container is what made it pass.
    let without = config.replace(&format!(r#", "container": {{"image": "{IMAGE}"}}"#), "");
    let repo2 = crate::util::GitRepo::new();
    let base = repo2.commit(
        &[
            (".github/repromin.json", &without),
            ("run-tests.sh", RUN_TESTS),
            ("lib.sh", "add() { echo $(($1 - $2)); }\n"),
        ],
        "base",
    );
    let head = repo2.commit(
        &[
            ("lib.sh", "add() { echo $(($1 + $2)); }\n"),
            ("tests/test_add.sh", ". ./lib.sh\n[ \"$(add 2 3)\" = 5 ]\n"),
        ],
        "fix add",
    );
    let (line, _) = crate::util::gate_run_env(&repo2, &base, &head, &[], &env);
    assert_eq!(line["verdict"], "error", "{line}");
}

#[test]
fn a_config_file_runs_the_reduction_in_a_container() {
    if !have_engine() {
        return;
    }
    let _sweeps = beside_others();
    let area = Area::new();
    area.write("src", TREE);
    let config = serde_json::json!({
        "schema_version": 1,
        "command": ["sh", "-c", format!(r#"test "$PWD" = /workspace || exit 0; {FAILS}"#)],
        "runner": {
            "runner": "docker",
            "container_cli": "podman",
            "image": IMAGE,
            "docker_memory": "256m",
            "docker_pids_limit": 64
        }
    });
    std::fs::write(area.path("reduce.json"), config.to_string()).unwrap();
    let env = podman_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = run_env(
        &[
            "reduce",
            "src",
            "out",
            "--no-progress",
            "--config",
            "reduce.json",
        ],
        area.dir.path(),
        &env,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let container = &report(&area.path("out"))["execution"]["container"];
    assert_eq!(container["memory_bytes"], 256 * 1024 * 1024);
    assert_eq!(container["pids_limit"], 64);
    assert_eq!(
        files(&area.path("out")).keys().collect::<Vec<_>>(),
        ["b.txt"]
    );
}
