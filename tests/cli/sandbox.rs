//! What a test run under `--sandbox-user` can reach: its own loopback interface but not the
//! host's listeners, and its own empty temporary directories but not the host's. Each
//! probe is a real test file of a real repository, run by the base side as the sandbox
//! user, and the host checks afterwards that nothing reached it.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;

use crate::util::{GitRepo, SANDBOX_USER, SH_RUNNER, require_tool, run, sandbox, tool_runs};

/// The sh tests' configuration, with `extra` JSON members.
fn config(extra: &str) -> String {
    format!(
        r#"{{"version":1,"tests":["tests/t_*.sh"],"command":"sh run_tests.sh {{report}} {{tests}}","report":"junit"{extra}}}"#
    )
}

/// The statuses of the base side's first run, by test file.
fn base_statuses(out: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(out.join("base.report")).unwrap();
    let cap = repromin::gate::encode::TEST_REPORT_CAP;
    let report = repromin::gate::encode::decode(&text, "base", cap).unwrap();
    let repromin::gate::encode::Outcome::Report { report, .. } = report.outcome else {
        panic!("no report: {:?}", report.outcome);
    };
    report
        .files
        .iter()
        .map(|f| {
            let status = f.tests.first().map_or("none".to_string(), |t| {
                format!("{:?}", t.status).to_lowercase()
            });
            (f.path.clone(), status)
        })
        .collect()
}

/// Runs the base side of a pull request that adds `tests` (sh test files) in the sandbox.
fn base_side(config: &str, tests: &[(&str, String)]) -> (Vec<(String, String)>, String) {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", config),
            ("run_tests.sh", SH_RUNNER),
        ],
        "base",
    );
    let files: Vec<(&str, &str)> = tests.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let head = repo.commit(&files, "tests");
    let out = tempfile::tempdir().unwrap();
    let out_path = out.path().join("out");
    let out_arg = out_path.display().to_string();
    let repo_path = repo.path().display().to_string();
    let o = run(
        &[
            "exec",
            "--side",
            "base",
            "--out",
            &out_arg,
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &repo_path,
            "--sandbox-user",
            SANDBOX_USER,
        ],
        repo.path(),
    );
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{stderr}");
    (base_statuses(&out_path), stderr)
}

/// A python one-liner, as an sh test line.
fn python(code: &str) -> String {
    format!("python3 -c {}\n", shell(code))
}

fn shell(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[test]
fn a_sandboxed_test_reaches_its_own_loopback_but_not_the_hosts_listeners_or_tmp() {
    if !sandbox() || !require_tool("python3", tool_runs("python3")) {
        return;
    }
    // A listener on the host's loopback, which no sandboxed run may reach.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // A file in the host's /tmp, which no sandboxed run may see, and one it tries to leave.
    let secret = tempfile::Builder::new()
        .prefix("repromin-sandbox-secret-")
        .tempfile_in("/tmp")
        .unwrap();
    let secret_path = secret.path().display().to_string();
    let left = format!("/tmp/repromin-sandbox-left-{}", std::process::id());
    let _ = std::fs::remove_file(&left);
    let tests = [
        (
            "tests/t_host_listener.sh",
            format!(
                "! {}",
                python(&format!(
                    "import socket; socket.create_connection((\"127.0.0.1\", {port}), 3)"
                ))
            ),
        ),
        (
            "tests/t_own_server.sh",
            python(
                "import socket\ns = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1)\nc = socket.create_connection(s.getsockname(), 3); a, _ = s.accept(); c.sendall(b\"hi\"); assert a.recv(2) == b\"hi\"",
            ),
        ),
        (
            "tests/t_host_tmp.sh",
            format!("[ ! -e {} ]\n", shell(&secret_path)),
        ),
        (
            "tests/t_leave_tmp.sh",
            format!(
                "touch {left} && [ -e {left} ] && touch \"$TMPDIR/mine\" && [ -e \"$TMPDIR/mine\" ]\n"
            ),
        ),
    ];
    let (statuses, stderr) = base_side(&config(""), &tests);
    for (file, _) in &tests {
        assert!(
            statuses.contains(&((*file).to_string(), "passed".to_string())),
            "{file}: {statuses:?}\n{stderr}"
        );
    }
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the host's listener was reached: {other:?}"),
    }
    assert!(
        !Path::new(&left).exists(),
        "a sandboxed run left {left} in the host's /tmp"
    );

    // `sandbox.network` keeps the host's network: the same test now reaches the listener.
    let (statuses, stderr) = base_side(&config(r#","sandbox":{"network":true}"#), &tests[..1]);
    assert_eq!(
        statuses,
        [("tests/t_host_listener.sh".to_string(), "failed".to_string())],
        "{stderr}"
    );
    assert!(listener.accept().is_ok(), "the listener was not reached");
}
