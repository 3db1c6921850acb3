//! `reduce --remote`: a real BuildGrid, real `repromin worker` bots, a real pytest failure.
//! The reduction on the cluster publishes what the local one does; a second identical one
//! is answered by the action cache for its probes, while its holdout runs all execute.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::test_buildgrid::BuildGrid;
use crate::util::{Area, bin, clean_env, files, report, run, stderr};

/// `repromin worker` processes, killed when dropped.
struct Workers(Vec<Child>);

impl Workers {
    fn start(url: &str, count: usize) -> Workers {
        Workers(
            (0..count)
                .map(|_| {
                    let mut command = Command::new(bin());
                    command
                        .args(["worker", "--remote", url])
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::null());
                    clean_env(&mut command);
                    command.spawn().unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

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
    let _workers = Workers::start(&grid.url, 2);
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
