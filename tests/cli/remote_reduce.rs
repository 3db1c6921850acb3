//! `reduce --remote`: a real BuildGrid, real `repromin worker` bots, a real pytest failure.
//! The reduction on the cluster publishes what the local one does; a second identical one
//! is answered by the action cache for its probes, while its holdout runs all execute. A
//! worker killed in the middle of a probe loses nothing: the cluster hands the probe to
//! another, or, with no other, the reduction stops with an error and publishes nothing.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::remote_workers::Worker;
use crate::test_buildgrid::BuildGrid;
use crate::util::{Area, bin, clean_env, files, output_within, report, run, stderr};

/// A package with a bug, the test that finds it, and files the failure does not need.
fn pytest_tree(area: &Area) -> std::path::PathBuf {
    area.write(
        "src",
        &[
            (
                "calc.py",
                "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
            ),
            (
                "test_calc.py",
                "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
            ),
            ("README.md", "A calculator.\n"),
            ("util/strings.py", "def shout(s):\n    return s.upper()\n"),
        ],
    )
}

fn reduce(source: &Path, out: &Path, cwd: &Path, remote: Option<&str>) -> serde_json::Value {
    let (source, out) = (source.to_str().unwrap(), out.to_str().unwrap());
    // The tracer runs only here (strace cannot follow a run on the cluster): off in both,
    // so that both propose the same candidates.
    let mut args = vec![
        "reduce",
        source,
        out,
        "--no-progress",
        "--no-trace",
        "--holdout-runs",
        "4",
        "--min-holdout-rate",
        "0.4",
        // A few probes are enough to compare: both runs stop after the same ones.
        "--max-attempts",
        "10",
    ];
    if let Some(url) = remote {
        args.extend(["--remote", url, "--remote-jobs", "2"]);
    } else {
        args.extend(["--jobs", "2"]);
    }
    args.extend([
        "--",
        "python3",
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "test_calc.py",
    ]);
    let out_path = Path::new(out);
    let done = run(&args, cwd);
    assert!(done.status.success(), "{}", stderr(&done));
    report(out_path)
}

#[test]
fn a_remote_reduction_publishes_what_a_local_one_does_and_the_cache_answers_a_second() {
    if !crate::test_skip::require_tool("pytest", crate::util::tool_runs("pytest")) {
        return;
    }
    let Some(grid) = BuildGrid::start() else {
        return;
    };
    let _workers = Worker::start_many(&grid.url, 2);
    let area = Area::new();
    let source = pytest_tree(&area);
    let local = reduce(&source, &area.path("local"), area.dir.path(), None);
    let first = reduce(
        &source,
        &area.path("remote1"),
        area.dir.path(),
        Some(&grid.url),
    );
    assert_eq!(files(&area.path("remote1")), files(&area.path("local")));
    assert_eq!(first["events"], local["events"]);
    assert_eq!(first["edits"], local["edits"]);
    assert_eq!(first["execution"]["runner"], "remote");
    assert_eq!(local["execution"]["runner"], "host");
    let remote = &first["execution"]["remote"];
    assert_eq!(remote["url"], grid.url.as_str());
    assert!(remote["executed"].as_u64().unwrap() >= 5, "{remote}");
    // The second: every probe the first ran is answered by the action cache; the final
    // check and the 4 holdout runs execute again.
    let second = reduce(
        &source,
        &area.path("remote2"),
        area.dir.path(),
        Some(&grid.url),
    );
    assert_eq!(files(&area.path("remote2")), files(&area.path("local")));
    let remote = &second["execution"]["remote"];
    assert!(remote["cache_hits"].as_u64().unwrap() > 0, "{remote}");
    assert_eq!(remote["executed"].as_u64().unwrap(), 5, "{remote}");
    assert_eq!(second["holdout"]["runs"], 4);
}

#[test]
fn an_unreachable_cluster_ends_the_reduction_with_an_error() {
    let area = Area::new();
    let source = area.write("src", &[("a.txt", "x\n")]);
    let done = run(
        &[
            "reduce",
            source.to_str().unwrap(),
            area.path("out").to_str().unwrap(),
            "--remote",
            "http://127.0.0.1:9",
            "--",
            "grep",
            "-q",
            "x",
            "a.txt",
        ],
        area.dir.path(),
    );
    assert_eq!(done.status.code(), Some(1), "{}", stderr(&done));
    assert!(stderr(&done).contains("127.0.0.1:9"), "{}", stderr(&done));
    assert!(!area.path("out").exists());
}

#[test]
fn remote_options_that_cannot_work_are_refused() {
    let area = Area::new();
    let source = area.write("src", &[("a.txt", "x\n")]);
    let (src, out) = (
        source.to_str().unwrap().to_string(),
        area.path("out").to_str().unwrap().to_string(),
    );
    for (extra, says) in [
        (&["--remote", "127.0.0.1:50051"][..], "is not an endpoint"),
        (&["--remote", "ftp://host:1"][..], "is not an endpoint"),
        (
            &["--remote", "http://127.0.0.1:9", "--remote-ca", "ca.pem"][..],
            "--remote-ca is for a TLS endpoint",
        ),
        (
            &[
                "--remote",
                "https://127.0.0.1:9",
                "--remote-header",
                "novalue",
            ][..],
            "`novalue` is not NAME=VALUE",
        ),
        (
            &[
                "--remote",
                "https://127.0.0.1:9",
                "--remote-ca",
                "missing.pem",
            ][..],
            "cannot read the certificate authorities in missing.pem",
        ),
        (
            &["--remote-header", "x-key=v"][..],
            "--remote-header is for a remote cluster",
        ),
        (
            &["--remote-ca", "ca.pem"][..],
            "--remote-ca is for a remote cluster",
        ),
        (
            &["--remote", "http://127.0.0.1:9", "--memory", "64m"][..],
            "--memory is for runs on this machine",
        ),
        (
            &[
                "--remote",
                "http://127.0.0.1:9",
                "--runner",
                "docker",
                "--image",
                "x",
            ][..],
            "cannot be combined with --runner docker",
        ),
    ] {
        let mut args = vec!["reduce", &src, &out];
        args.extend(extra);
        args.extend(["--", "true"]);
        let done = run(&args, area.dir.path());
        assert_eq!(done.status.code(), Some(2), "{extra:?}: {}", stderr(&done));
        assert!(stderr(&done).contains(says), "{extra:?}: {}", stderr(&done));
    }
}

/// A tree whose failure needs one line of `a.txt`, and a command that notes each of its
/// runs in `marks` (outside the tree) before taking half a second.
fn marked_tree(area: &Area) -> (std::path::PathBuf, std::path::PathBuf) {
    let source = area.write(
        "src",
        &[
            ("a.txt", "keep\nneedle\nkeep\n"),
            ("b.txt", "noise\n"),
            ("c/d.txt", "more noise\n"),
        ],
    );
    (source, area.path("marks"))
}

/// `reduce` of `marked_tree`, its runs placed by `place` (`--remote ...` or `--jobs 1`),
/// as a command to start.
fn marked_reduce(source: &Path, out: &Path, marks: &Path, place: &[&str]) -> Command {
    let mut command = Command::new(bin());
    clean_env(&mut command);
    command.args([
        "reduce",
        source.to_str().unwrap(),
        out.to_str().unwrap(),
        "--no-progress",
        "--holdout-runs",
        "4",
        "--min-holdout-rate",
        "0.4",
        "--exit-code",
        "3",
    ]);
    command.args(place).args([
        "--env",
        &format!("MARKS={}", marks.display()),
        "--",
        "sh",
        "-c",
        "echo run >> \"$MARKS\"; sleep 0.5; grep -q needle a.txt && exit 3; exit 0",
    ]);
    command
}

/// How many runs the command has started.
fn marked(marks: &Path) -> usize {
    std::fs::read_to_string(marks).map_or(0, |text| text.lines().count())
}

/// Waits (at most 60 s) until `marks` holds at least `runs` runs.
fn wait_for_runs(marks: &Path, runs: usize) {
    let start = Instant::now();
    while marked(marks) < runs {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the reduction made {} runs in 60 s, not {runs}",
            marked(marks)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What [`kill_mid_probe`] leaves to look at.
struct Killed {
    area: Area,
    grid: BuildGrid,
    source: std::path::PathBuf,
    out: std::path::PathBuf,
    done: std::process::Output,
}

/// Reduces `marked_tree` on a fresh cluster with one worker and `--remote-wait wait`,
/// kills that worker (SIGKILL) once the fourth run has started (the baseline and the
/// empty tree are behind it: that run is a probe), and starts another when `take_over`.
fn kill_mid_probe(wait: &str, take_over: bool) -> Option<Killed> {
    let grid = BuildGrid::start()?;
    let area = Area::new();
    let (source, marks) = marked_tree(&area);
    let first = Worker::start(&grid.url);
    let out = area.path("out");
    let place = [
        "--remote",
        &grid.url,
        "--remote-jobs",
        "1",
        "--remote-wait",
        wait,
    ];
    let reduction = marked_reduce(&source, &out, &marks, &place);
    let done = std::thread::scope(|scope| {
        let reduction = scope.spawn(|| output_within(reduction, Duration::from_secs(300)));
        wait_for_runs(&marks, 4);
        first.kill();
        let second = take_over.then(|| Worker::start(&grid.url));
        let done = reduction.join().expect("the reduction thread");
        drop(second);
        done
    });
    Some(Killed {
        area,
        grid,
        source,
        out,
        done,
    })
}

#[test]
fn a_worker_killed_mid_probe_has_the_probe_run_by_another_and_the_result_is_unchanged() {
    let Some(killed) = kill_mid_probe("5m", true) else {
        return;
    };
    let Killed {
        area,
        grid,
        source,
        out,
        done,
    } = killed;
    assert!(
        done.status.success(),
        "{}\nBuildGrid's log:\n{}",
        stderr(&done),
        grid.log()
    );
    // The same result as here, where nothing was lost.
    let local = area.path("local");
    let here = marked_reduce(
        &source,
        &local,
        &area.path("local-marks"),
        &["--jobs", "1", "--no-trace"],
    );
    let done_here = output_within(here, Duration::from_secs(120));
    assert!(done_here.status.success(), "{}", stderr(&done_here));
    assert_eq!(files(&out), files(&local));
    assert_eq!(report(&out)["edits"], report(&local)["edits"]);
    // The cluster gave up on the killed worker and handed its probe to the other.
    assert_eq!(grid.retried().len(), 1, "{:?}", grid.retried());
}

#[test]
fn a_worker_killed_mid_probe_with_none_to_take_over_stops_the_reduction_unpublished() {
    let Some(Killed {
        grid, out, done, ..
    }) = kill_mid_probe("3s", false)
    else {
        return;
    };
    assert_eq!(done.status.code(), Some(1), "{}", stderr(&done));
    let err = stderr(&done);
    assert!(
        err.contains("was not done after") && err.contains("it was cancelled"),
        "{err}"
    );
    assert!(!out.exists(), "nothing is published on a lost result");
    assert!(grid.unfinished().is_empty(), "{:?}", grid.unfinished());
}

#[test]
fn an_interrupted_remote_reduction_cancels_its_operation() {
    let Some(grid) = BuildGrid::start() else {
        return;
    };
    let _worker = Worker::start(&grid.url);
    let area = Area::new();
    let source = area.write("src", &[("a.txt", "x\n")]);
    let marks = area.path("marks");
    let mut command = Command::new(bin());
    clean_env(&mut command);
    command.args([
        "reduce",
        source.to_str().unwrap(),
        area.path("out").to_str().unwrap(),
        "--no-progress",
        "--remote",
        &grid.url,
        "--env",
        &format!("MARKS={}", marks.display()),
        "--",
        "sh",
        "-c",
        "echo run >> \"$MARKS\"; sleep 300",
    ]);
    let done = std::thread::scope(|scope| {
        let reduction = scope.spawn(|| output_within(command, Duration::from_secs(60)));
        wait_for_runs(&marks, 1);
        let needle = format!("MARKS={}", marks.display());
        let (pid, _) = crate::util::processes_where(|dir| {
            let line = std::fs::read(dir.join("cmdline")).unwrap_or_default();
            let line = String::from_utf8_lossy(&line);
            line.starts_with(bin().to_str().unwrap()) && line.contains(&needle)
        })
        .into_iter()
        .next()
        .expect("the reduction's process");
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGINT,
        );
        reduction.join().expect("the reduction thread")
    });
    assert_eq!(done.status.code(), Some(130), "{}", stderr(&done));
    assert!(grid.unfinished().is_empty(), "{:?}", grid.unfinished());
}

#[test]
fn remote_credentials_stay_on_the_command_line_beside_a_configuration_file() {
    let area = Area::new();
    let source = area.write("src", &[("a.txt", "x\n")]);
    let config = area.path("reduce.json");
    std::fs::write(
        &config,
        r#"{"schema_version": 1, "command": ["grep", "-q", "x", "a.txt"],
            "runner": {"remote": "http://127.0.0.1:9"}}"#,
    )
    .unwrap();
    let done = run(
        &[
            "reduce",
            source.to_str().unwrap(),
            area.path("out").to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--remote-header",
            "x-api-key=secret",
        ],
        area.dir.path(),
    );
    // The file's cluster is tried (and is not there), with the header from the command line.
    assert_eq!(done.status.code(), Some(1), "{}", stderr(&done));
    assert!(
        stderr(&done).contains("cannot reach the remote execution service at http://127.0.0.1:9"),
        "{}",
        stderr(&done)
    );
    assert!(!stderr(&done).contains("secret"), "{}", stderr(&done));
}
