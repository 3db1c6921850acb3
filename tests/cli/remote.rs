//! `repromin worker` against a private BuildGrid: actions the library's client sends are
//! run by the worker process; the worker stops cleanly on SIGTERM; an unreachable or
//! malformed endpoint is a clear error.

use std::time::Duration;

use repromin::remote::{CachePolicy, Remote, RemoteConfig};
use repromin::runner::{CommandSpec, Termination};

use crate::remote_workers::Worker;
use crate::test_buildgrid::BuildGrid;
use crate::util::{Area, run, stderr};

#[test]
fn remote_worker_runs_the_clients_actions_and_stops_on_sigterm() {
    let Some(grid) = BuildGrid::start() else {
        return;
    };
    let worker = Worker::start(&grid.url);
    let area = Area::new();
    let dir = area.write("src", &[("msg.txt", "from the input root\n")]);
    let (tree, _) =
        repromin::tree::scan(&dir, &repromin::tree::IgnoreRules::default()).expect("scan the tree");
    let remote = Remote::connect(&RemoteConfig::new(&grid.url, "")).expect("the client connects");
    let spec = CommandSpec {
        argv: vec![
            "sh".into(),
            "-c".into(),
            "cat msg.txt; echo \"$X\" >&2; exit 3".into(),
        ],
        env: vec![("X".into(), "set by the command".into())],
        memory: None,
    };
    let ran = remote
        .run(
            &tree,
            &spec,
            Duration::from_secs(60),
            CachePolicy::Skip,
            &std::sync::atomic::AtomicBool::new(false),
        )
        .unwrap_or_else(|e| panic!("{}\n{}", repromin::with_causes(&e), grid.log()));
    assert_eq!(ran.outcome.termination, Termination::Exited(3));
    assert_eq!(
        String::from_utf8_lossy(&ran.outcome.output),
        "from the input root\nset by the command\n"
    );
    assert!(!ran.cached);
    let (code, err) = worker.stop();
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn remote_worker_with_an_unreachable_cluster_exits_1_with_the_reason() {
    let area = Area::new();
    let out = run(
        &["worker", "--remote", "http://127.0.0.1:9"],
        area.dir.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(
            "error: cannot reach the remote execution service at http://127.0.0.1:9: "
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn remote_worker_with_a_url_that_is_not_one_is_a_usage_error() {
    let area = Area::new();
    let out = run(&["worker", "--remote", "not a url"], area.dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("`not a url` is not a remote execution endpoint"));
}
