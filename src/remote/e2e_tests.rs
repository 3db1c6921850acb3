//! End to end: a private BuildGrid, a bot of this crate serving it on a thread, and the
//! client running trees there.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::*;
use crate::runner::{CommandSpec, Termination};
use crate::test_buildgrid::BuildGrid;
use crate::tree::{Entries, Entry, Meta, Node, Tree};

/// A BuildGrid with one bot, and a client of it. Dropping it stops the bot and checks that
/// it ended cleanly.
struct Cluster {
    remote: Remote,
    stop: Arc<AtomicBool>,
    bot: Option<JoinHandle<Result<(), RemoteError>>>,
    grid: BuildGrid,
}

impl Cluster {
    fn start() -> Option<Cluster> {
        Cluster::on(BuildGrid::start()?)
    }

    /// With a header sent on every call, as a hosted service's key would be.
    fn on(grid: BuildGrid) -> Option<Cluster> {
        let config = RemoteConfig {
            tls_ca: grid.ca.clone(),
            headers: vec![("x-repromin-test".into(), "a key".into())],
            ..RemoteConfig::new(&grid.url, "")
        };
        let stop = Arc::new(AtomicBool::new(false));
        let bot = {
            let stop = stop.clone();
            let config = config.clone();
            std::thread::spawn(move || serve(&config, BotOptions::default(), &stop))
        };
        let remote = Remote::connect(&config).expect("the client connects");
        Some(Cluster {
            remote,
            stop,
            bot: Some(bot),
            grid,
        })
    }

    fn run(&self, tree: &Tree, script: &str, timeout: Duration, cache: CachePolicy) -> RemoteRun {
        let spec = CommandSpec {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            env: vec![("GREETING".into(), "hi".into())],
            memory: None,
        };
        self.remote
            .run(tree, &spec, timeout, cache, &AtomicBool::new(false))
            .unwrap_or_else(|err| {
                panic!(
                    "remote run: {}\nBuildGrid's log:\n{}",
                    crate::with_causes(&err),
                    self.grid.log()
                )
            })
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(bot) = self.bot.take() {
            let ended = bot.join().expect("the bot thread does not panic");
            if !std::thread::panicking() {
                ended.expect("the bot ends cleanly");
            }
        }
    }
}

/// Runs `spec` on `tree` once: at most 60 s, never from the cache, never interrupted.
fn run_argv(remote: &Remote, tree: &Tree, spec: &CommandSpec) -> Result<RemoteRun, RemoteError> {
    let never = AtomicBool::new(false);
    remote.run(
        tree,
        spec,
        Duration::from_secs(60),
        CachePolicy::Skip,
        &never,
    )
}

fn tree(items: &[(&str, Node, u32)]) -> Tree {
    let mut entries = Entries::new();
    for (path, node, mode) in items {
        entries.insert(
            std::sync::Arc::from(*path),
            Entry {
                node: node.clone(),
                meta: Meta {
                    mode: *mode,
                    mtime_ns: 0,
                },
            },
        );
    }
    Tree {
        root: Meta {
            mode: 0o755,
            mtime_ns: 0,
        },
        entries,
    }
}

fn file(data: &[u8]) -> Node {
    Node::file(std::sync::Arc::from(data))
}

#[test]
fn a_remote_run_gives_exit_code_and_output_and_the_cache_answers_only_when_allowed() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let t = tree(&[
        (
            "run.sh",
            file(b"#!/bin/sh\necho \"$GREETING from run.sh\"\n"),
            0o755,
        ),
        ("sub", Node::Dir, 0o755),
        ("sub/msg.txt", file(b"hello\n"), 0o644),
        (
            "sub/link",
            Node::Symlink {
                target: "msg.txt".into(),
            },
            0,
        ),
    ]);
    let script = "./run.sh; cat sub/link; echo oops >&2; exit 3";
    let first = cluster.run(&t, script, Duration::from_secs(60), CachePolicy::Use);
    assert_eq!(first.outcome.termination, Termination::Exited(3));
    assert_eq!(
        String::from_utf8_lossy(&first.outcome.output),
        "hi from run.sh\nhello\noops\n"
    );
    assert!(!first.cached);
    let again = cluster.run(&t, script, Duration::from_secs(60), CachePolicy::Use);
    assert!(
        again.cached,
        "the same cacheable action is answered from the cache"
    );
    assert_eq!(again.outcome.termination, Termination::Exited(3));
    assert_eq!(again.outcome.output, first.outcome.output);
    for _ in 0..2 {
        let skipped = cluster.run(&t, script, Duration::from_secs(60), CachePolicy::Skip);
        assert!(!skipped.cached, "CachePolicy::Skip runs again");
        assert_eq!(skipped.outcome.termination, Termination::Exited(3));
        assert_eq!(skipped.outcome.output, first.outcome.output);
    }
}

#[test]
fn a_remote_run_past_its_timeout_is_timed_out() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let t = tree(&[]);
    let start = Instant::now();
    let run = cluster.run(
        &t,
        "echo started; sleep 60",
        Duration::from_secs(2),
        CachePolicy::Skip,
    );
    assert_eq!(run.outcome.termination, Termination::TimedOut);
    assert!(
        start.elapsed() < Duration::from_secs(40),
        "{:?}",
        start.elapsed()
    );
    // The bot serves the next action after the one it ended.
    let next = cluster.run(&t, "exit 0", Duration::from_secs(60), CachePolicy::Skip);
    assert_eq!(next.outcome.termination, Termination::Exited(0));
}

#[test]
fn clones_of_one_client_run_from_several_threads_at_once() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let outputs: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let cluster = &cluster;
                let remote = cluster.remote.clone();
                scope.spawn(move || {
                    let t = tree(&[("n", file(format!("{i}\n").as_bytes()), 0o644)]);
                    let spec = CommandSpec {
                        argv: vec!["cat".into(), "n".into()],
                        env: Vec::new(),
                        memory: None,
                    };
                    let run = run_argv(&remote, &t, &spec).unwrap_or_else(|e| {
                        panic!("{}\n{}", crate::with_causes(&e), cluster.grid.log())
                    });
                    assert_eq!(run.outcome.termination, Termination::Exited(0));
                    String::from_utf8_lossy(&run.outcome.output).into_owned()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    assert_eq!(outputs, ["0\n", "1\n", "2\n"]);
}

#[test]
fn blobs_over_a_batch_go_through_bytestream_both_ways() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let big: Vec<u8> = (0..6_000_000u32).map(|i| (i % 251) as u8).collect();
    let t = tree(&[("big.bin", file(&big), 0o644)]);
    let run = cluster.run(
        &t,
        "cat big.bin; cat big.bin >&2",
        Duration::from_secs(120),
        CachePolicy::Skip,
    );
    assert_eq!(run.outcome.termination, Termination::Exited(0));
    assert_eq!(run.outcome.output.len(), 2 * big.len());
    assert!(run.outcome.output[..big.len()] == big[..]);
    assert!(run.outcome.output[big.len()..] == big[..]);
}

#[test]
fn an_input_root_with_a_symlink_out_of_it_is_refused_by_the_worker() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let t = tree(&[
        ("d", Node::Dir, 0o755),
        (
            "d/out",
            Node::Symlink {
                target: "../../outside".into(),
            },
            0,
        ),
    ]);
    let spec = CommandSpec {
        argv: vec!["true".into()],
        env: Vec::new(),
        memory: None,
    };
    let err = run_argv(&cluster.remote, &t, &spec).expect_err("the worker refuses the action");
    let text = crate::with_causes(&err);
    assert!(
        text.starts_with("the remote execution failed: status 9: ")
            && text.contains("the path `d/../../outside`, which leads out of the root"),
        "{text}"
    );
    // The worker goes on serving.
    let t = tree(&[]);
    let next = cluster.run(&t, "exit 0", Duration::from_secs(60), CachePolicy::Skip);
    assert_eq!(next.outcome.termination, Termination::Exited(0));
}

/// Whether a process whose command line holds `marker` runs.
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").is_ok_and(|items| {
        items.flatten().any(|item| {
            std::fs::read(item.path().join("cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
        })
    })
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_cancelled_operation_has_its_command_ended_by_the_worker() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let marker = format!("cancel-me-{}", std::process::id());
    let script = format!("sleep 300; : {marker}");
    std::thread::scope(|scope| {
        let client = scope.spawn(|| {
            let spec = CommandSpec {
                argv: vec!["sh".into(), "-c".into(), script.clone()],
                env: Vec::new(),
                memory: None,
            };
            cluster.remote.run(
                &tree(&[]),
                &spec,
                Duration::from_secs(600),
                CachePolicy::Skip,
                &AtomicBool::new(false),
            )
        });
        wait_for("the command starts", Duration::from_secs(60), || {
            running(&marker)
        });
        let operations = cluster.grid.operations();
        assert_eq!(operations.len(), 1, "{operations:?}");
        cluster.grid.cancel(&operations[0]);
        wait_for("the command ends", Duration::from_secs(30), || {
            !running(&marker)
        });
        let ended = client.join().expect("the client does not panic");
        assert!(
            ended.is_err(),
            "a cancelled operation is an error: {ended:?}"
        );
    });
    // The worker goes on serving.
    let next = cluster.run(
        &tree(&[]),
        "exit 0",
        Duration::from_secs(60),
        CachePolicy::Skip,
    );
    assert_eq!(next.outcome.termination, Termination::Exited(0));
}

#[test]
fn an_unreachable_cluster_is_a_clear_error() {
    let err = Remote::connect(&RemoteConfig::new("http://127.0.0.1:9", ""))
        .expect_err("nothing listens on port 9");
    let text = crate::with_causes(&err);
    assert!(
        text.starts_with("cannot reach the remote execution service at http://127.0.0.1:9"),
        "{text}"
    );
    let err = Remote::connect(&RemoteConfig::new("not a url", "")).expect_err("not a URL");
    assert!(matches!(err, RemoteError::BadUrl { .. }), "{err:?}");
}

#[test]
fn a_cluster_that_speaks_tls_runs_trees_for_a_client_that_trusts_its_authority() {
    let Some(grid) = BuildGrid::start_tls() else {
        return;
    };
    assert!(grid.url.starts_with("https://"), "{}", grid.url);
    let url = grid.url.clone();
    let ca = grid.ca.clone().expect("a TLS grid has an authority");
    let cluster = Cluster::on(grid).expect("the cluster");
    let t = tree(&[("f", file(b"over TLS\n"), 0o644)]);
    let run = cluster.run(&t, "cat f", Duration::from_secs(60), CachePolicy::Skip);
    assert_eq!(run.outcome.termination, Termination::Exited(0));
    assert_eq!(run.outcome.output, b"over TLS\n");
    // The system's authorities do not vouch for the test's own.
    let err = Remote::connect(&RemoteConfig::new(&url, "")).expect_err("an unknown authority");
    assert!(matches!(err, RemoteError::Connect { .. }), "{err:?}");
    // Bazel's spelling of a TLS endpoint is the same endpoint.
    let grpcs = url.replace("https://", "grpcs://");
    let config = RemoteConfig {
        tls_ca: Some(ca.clone()),
        ..RemoteConfig::new(&grpcs, "")
    };
    Remote::connect(&config).expect("grpcs:// connects with the authority");
    // A plain client cannot talk to it.
    let plain = url.replace("https://", "http://");
    assert!(Remote::connect(&RemoteConfig::new(&plain, "")).is_err());
    // An authority file that cannot be read is named.
    let config = RemoteConfig {
        tls_ca: Some(ca.with_file_name("missing.pem")),
        ..RemoteConfig::new(&url, "")
    };
    let err = Remote::connect(&config).expect_err("no such file");
    assert!(
        crate::with_causes(&err).starts_with("cannot read the certificate authorities in "),
        "{err}"
    );
}

#[test]
fn a_header_grpc_cannot_carry_is_refused_before_connecting() {
    for (name, value, says) in [
        ("bad name", "v", "not a header name"),
        ("x-key", "line\nbreak", "cannot carry"),
        ("x-key-bin", "v", "binary"),
    ] {
        let config = RemoteConfig {
            headers: vec![(name.into(), value.into())],
            ..RemoteConfig::new("http://127.0.0.1:9", "")
        };
        let err = Remote::connect(&config).expect_err("a bad header");
        let text = crate::with_causes(&err);
        assert!(
            text.starts_with(&format!("the header `{name}` cannot be sent: "))
                && text.contains(says),
            "{text}"
        );
    }
}
