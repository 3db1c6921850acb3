//! `reduce --memory SIZE`: every run of the command is limited, a candidate that goes over
//! the limit is a resource failure and never the failure kept, and a baseline over it is an
//! error of its own.

use repromin::exit_code::Exit;

use crate::util::{Area, files, report, run, stderr};

/// The limit the tests give: far below what the commands allocate when they go over it.
const LIMIT: &str = "200M";

/// A command that fails with `Error: boom` when `keep.txt` is there, and first allocates
/// and touches 512 MiB when `big.txt` is not.
const GREEDY: &str = "test -e keep.txt || exit 0\n\
     test -e big.txt || python3 -c 'b = b\"x\" * (512 << 20); print(len(b))'\n\
     echo 'Error: boom' >&2\n\
     exit 1\n";

fn tree(area: &Area) {
    area.write(
        "src",
        &[
            ("keep.txt", "kept\n"),
            ("big.txt", "without me the command needs 512 MiB\n"),
            ("other.txt", "not needed\n"),
        ],
    );
}

#[test]
fn a_candidate_over_the_memory_limit_is_a_resource_failure_never_the_failure() {
    let area = Area::new();
    tree(&area);
    // Without a limit, deleting big.txt keeps the failure: the command only grows.
    let o = run(
        &[
            "reduce",
            "src",
            "free",
            "--no-progress",
            "--",
            "sh",
            "-c",
            GREEDY,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept: Vec<String> = files(&area.path("free")).into_keys().collect();
    assert_eq!(kept, ["keep.txt"], "{}", stderr(&o));
    assert!(
        report(&area.path("free"))["execution"]
            .get("memory")
            .is_none()
    );
    // With one, every candidate without big.txt goes over it and is refused.
    let o = run(
        &[
            "reduce",
            "src",
            "limited",
            "--no-progress",
            "--memory",
            LIMIT,
            "--",
            "sh",
            "-c",
            GREEDY,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept: Vec<String> = files(&area.path("limited")).into_keys().collect();
    assert_eq!(kept, ["big.txt", "keep.txt"], "{}", stderr(&o));
    let r = report(&area.path("limited"));
    let memory = &r["execution"]["memory"];
    assert_eq!(memory["limit_bytes"], 200 << 20, "{memory}");
    let mechanism = memory["mechanism"].as_str().unwrap_or_default();
    assert!(["cgroup", "rlimit-as"].contains(&mechanism), "{mechanism}");
    let md = std::fs::read_to_string(area.path("limited.repromin/REPROMIN.md")).unwrap();
    assert!(
        md.contains(&format!(
            "within 200 MiB of memory: every run was limited by {mechanism}"
        )),
        "{md}"
    );
}

#[test]
fn a_baseline_over_the_memory_limit_is_an_error_naming_the_limit() {
    let area = Area::new();
    tree(&area);
    let greedy = "test -e keep.txt || exit 0; python3 -c 'b = b\"x\" * (512 << 20)'; \
                  echo 'Error: boom' >&2; exit 1";
    let o = run(
        &[
            "reduce", "src", "out", "--memory", LIMIT, "--", "sh", "-c", greedy,
        ],
        area.dir.path(),
    );
    assert_eq!(o.status.code(), Some(i32::from(Exit::NotFailing.code())));
    let err = stderr(&o);
    assert!(
        err.contains("the command needs more than --memory 200 MiB: baseline run 1 went over it"),
        "{err}"
    );
    assert!(err.contains("raise --memory"), "{err}");
    assert!(!area.path("out").exists());
    // Within a limit it fits in, the same command reduces.
    let o = run(
        &[
            "doctor", "src", "--memory", "1.5GiB", "--", "sh", "-c", greedy,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        text.contains("memory: at most 1.5 GiB per run, limited by "),
        "{text}"
    );
}

#[test]
fn a_memory_limit_that_is_not_one_is_a_usage_error() {
    let area = Area::new();
    tree(&area);
    for (value, problem) in [
        ("2X", "`2X` has an unknown unit `x`"),
        ("1M", "`1M` is out of range"),
        ("lots", "`lots` is not a size"),
        ("4194304.5", "`4194304.5` is not a whole number of bytes"),
    ] {
        let o = run(
            &["reduce", "src", "out", "--memory", value, "--", "true"],
            area.dir.path(),
        );
        assert_eq!(
            o.status.code(),
            Some(i32::from(Exit::Usage.code())),
            "{value}"
        );
        let err = stderr(&o);
        assert!(err.contains("--memory is not a memory limit"), "{err}");
        assert!(err.contains(problem), "{value}: {err}");
    }
    let o = run(
        &[
            "reduce", "src", "out", "--runner", "docker", "--image", "any", "--memory", "1G", "--",
            "true",
        ],
        area.dir.path(),
    );
    assert_eq!(o.status.code(), Some(i32::from(Exit::Usage.code())));
    assert!(stderr(&o).contains("--docker-memory"), "{}", stderr(&o));
}

#[test]
fn the_configuration_file_s_memory_is_the_option() {
    let area = Area::new();
    tree(&area);
    let config = |memory: &str| {
        let path = area.path("c.json");
        std::fs::write(
            &path,
            format!(
                r#"{{"schema_version": 1, "command": ["sh", "-c", "test -e keep.txt || exit 0; echo 'Error: boom' >&2; exit 1"], "runner": {{"memory": {memory}}}}}"#
            ),
        )
        .unwrap();
        run(&["doctor", "src", "--config", "c.json"], area.dir.path())
    };
    let o = config("209715200");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("memory: at most 200 MiB per run"), "{text}");
    let o = config(r#""1.5g""#);
    assert!(String::from_utf8_lossy(&o.stdout).contains("at most 1.5 GiB"));
    let o = config(r#""2X""#);
    assert_eq!(o.status.code(), Some(i32::from(Exit::Usage.code())));
    assert!(stderr(&o).contains("runner.memory"), "{}", stderr(&o));
}
