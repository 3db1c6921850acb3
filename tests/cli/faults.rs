//! Smaller faults, each with the case that showed it: exit codes and messages that must say
//! what happened, and inputs that must be refused without being buffered or followed.

use repromin::exit_code::Exit;

use crate::util::{Area, run, stderr};

#[test]
fn a_deterministic_baseline_that_never_shows_the_required_output_is_not_failing() {
    let area = Area::new();
    area.write("src", &[("a.txt", "a\n")]);
    let command = ["--", "sh", "-c", "echo 'ValueError: boom' >&2; exit 1"];
    for (option, value) in [("--expect", "KeyError"), ("--signature", "KeyError")] {
        let mut args = vec!["reduce", "src", "out", option, value];
        args.extend_from_slice(&command);
        let o = run(&args, area.dir.path());
        let err = stderr(&o);
        assert_eq!(
            o.status.code(),
            Some(Exit::NotFailing as i32),
            "{option}: {err}"
        );
        assert!(
            err.contains("does not fail the way the oracle requires") && !err.contains("flaky"),
            "{option}: {err}"
        );
        assert!(!area.path("out").exists());
    }
}

/// A reduction that publishes at once: the command fails while `a.txt` has `BUG`.
const BUG_SCRIPT: &str = "if grep -q BUG a.txt; then echo 'error: BUG in a.txt'; exit 1; fi";

/// The `.repromin-staging-*` entries of the area's top directory.
fn stagings(area: &Area) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(area.dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".repromin-staging-")
        })
        .collect();
    found.sort();
    found
}

/// Sets `dir`'s modification time `seconds` into the past.
fn age(dir: &std::path::Path, seconds: u64) {
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(seconds);
    std::fs::File::open(dir)
        .unwrap()
        .set_modified(then)
        .unwrap();
}

/// `reduce src out` on the area, where `out` exists already: recovery runs, then the
/// run stops at OUTPUT (exit 7). Its stderr.
fn recover_only(area: &Area) -> String {
    let o = run(
        &["reduce", "src", "out", "--", "sh", "-c", BUG_SCRIPT],
        area.dir.path(),
    );
    assert_eq!(
        o.status.code(),
        Some(Exit::OutputExists as i32),
        "{}",
        stderr(&o)
    );
    stderr(&o)
}

#[test]
fn an_empty_staging_directory_left_by_a_killed_run_is_removed_by_the_next_run() {
    let area = Area::new();
    area.write("src", &[("a.txt", "BUG\n")]);
    area.write("out", &[("a.txt", "BUG\n")]);
    let empty = area.path(".repromin-staging-k1Lled");
    std::fs::create_dir(&empty).unwrap();
    // Just made, it could be a live run's that has not written its owner file yet.
    let err = recover_only(&area);
    assert!(
        err.contains("warning: left `.repromin-staging-k1Lled` alone"),
        "{err}"
    );
    assert!(empty.exists());
    age(&empty, 120);
    let err = recover_only(&area);
    assert!(
        err.contains(
            "note: removed `.repromin-staging-k1Lled`, an empty staging directory left by an interrupted run"
        ) && !err.contains("warning"),
        "{err}"
    );
    assert!(stagings(&area).is_empty());
    // A directory of that name with anything in it is never removed without an owner.
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("keep"), "mine").unwrap();
    age(&empty, 120);
    let err = recover_only(&area);
    assert!(err.contains("warning: left"), "{err}");
    assert_eq!(std::fs::read_to_string(empty.join("keep")).unwrap(), "mine");
}

#[test]
fn a_run_killed_while_removing_its_staging_directory_leaves_it_empty_for_the_next_run() {
    if !crate::util::failpoints() {
        return;
    }
    let area = Area::new();
    area.write("src", &[("a.txt", "BUG\n")]);
    let point = "publish:staging-owner-removed";
    let mut command = std::process::Command::new(crate::util::bin());
    command
        .args(["reduce", "src", "out", "--", "sh", "-c", BUG_SCRIPT])
        .current_dir(area.dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    crate::util::clean_env(&mut command);
    command.env(crate::util::FAILPOINT, point);
    let mut child = command.spawn().unwrap();
    crate::util::kill_when_paused(&mut child, point);
    // Published; the staging directory's owner file went last, so it is empty.
    assert!(area.path("out.repromin/report.json").exists());
    let left = stagings(&area);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(std::fs::read_dir(&left[0]).unwrap().count(), 0);
    age(&left[0], 120);
    let err = recover_only(&area);
    assert!(
        err.contains("an empty staging directory left by an interrupted run"),
        "{err}"
    );
    assert!(stagings(&area).is_empty());
}

/// `reduce src out --session sess` on the area (with `--resume` when `resume`), its
/// command failing while `a.txt` has `BUG`.
fn session_args(resume: bool) -> Vec<&'static str> {
    let mut args = vec!["reduce", "src", "out", "--session", "sess"];
    if resume {
        args.push("--resume");
    }
    args.extend_from_slice(&["--", "sh", "-c", BUG_SCRIPT]);
    args
}

/// A finished session in `sess` (and its result in `out`).
fn finished_session() -> Area {
    let area = Area::new();
    area.write("src", &[("a.txt", "BUG\n"), ("b.txt", "noise\n")]);
    let o = run(&session_args(false), area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    area
}

#[test]
fn a_resume_refuses_a_journal_that_is_a_symlink_and_never_writes_through_it() {
    let area = finished_session();
    let journal = area.path("sess/journal.jsonl");
    let outside = area.path("elsewhere.jsonl");
    let mut text = std::fs::read(&journal).unwrap();
    // A torn last line: a resume cuts it off, so it would truncate the link's target.
    text.extend_from_slice(b"{\"kind\":\"emp");
    std::fs::write(&outside, &text).unwrap();
    std::fs::remove_file(&journal).unwrap();
    std::os::unix::fs::symlink(&outside, &journal).unwrap();
    let o = run(&session_args(true), area.dir.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(Exit::Error as i32), "{err}");
    assert!(err.contains("journal.jsonl` is a symbolic link"), "{err}");
    assert_eq!(
        std::fs::read(&outside).unwrap(),
        text,
        "the target was written"
    );
}

/// Runs the binary with `args` in `dir` and returns its exit status and the highest
/// resident set size (`VmHWM`, in KiB) seen while it ran.
fn peak_memory(args: &[&str], dir: &std::path::Path) -> (std::process::ExitStatus, u64) {
    let mut command = std::process::Command::new(crate::util::bin());
    command
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    crate::util::clean_env(&mut command);
    let mut child = command.spawn().unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            let hwm = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
            peak = peak.max(hwm.unwrap_or(0));
        }
        if let Some(status) = child.try_wait().unwrap() {
            return (status, peak);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

#[test]
fn a_resume_reads_its_journal_a_line_at_a_time() {
    let area = finished_session();
    let journal = area.path("sess/journal.jsonl");
    // 160 MB of well-formed records after the session's own: a baseline record whose
    // output is 8 MiB of base64, twenty times.
    let output = "QUFB".repeat(2 << 20);
    let record = format!(
        "{{\"kind\":\"baseline\",\"termination\":{{\"kind\":\"exited\",\"value\":1}},\"duration_ms\":1,\"output\":\"{output}\",\"roots\":[]}}\n"
    );
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap();
    for _ in 0..20 {
        std::io::Write::write_all(&mut file, record.as_bytes()).unwrap();
    }
    drop(file);
    let (_, peak_kib) = peak_memory(&session_args(true), area.dir.path());
    assert!(
        peak_kib < 80 << 10,
        "a resume over a 160 MB journal peaked at {peak_kib} KiB"
    );
}

#[test]
fn a_reduction_that_loses_the_race_for_output_exits_as_if_it_had_existed() {
    if !crate::util::failpoints() {
        return;
    }
    use std::io::BufRead;
    let area = Area::new();
    area.write("src", &[("a.txt", "BUG\n")]);
    let point = "publish:before-payload";
    let go = area.path("go");
    let mut command = std::process::Command::new(crate::util::bin());
    command
        .args(["reduce", "src", "out", "--", "sh", "-c", BUG_SCRIPT])
        .current_dir(area.dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    crate::util::clean_env(&mut command);
    command.env(crate::util::FAILPOINT, point);
    command.env("REPROMIN_FAILPOINT_RESUME", &go);
    let mut child = command.spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let paused = crate::util::paused_at(point);
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if line == paused {
            break;
        }
        seen.push(line);
    }
    assert!(area.path("src").exists(), "{seen:?}");
    // Another run publishes OUTPUT after this one checked it and before its rename.
    area.write("out", &[("theirs.txt", "theirs\n")]);
    std::fs::write(&go, "").unwrap();
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = child.wait().unwrap();
    let err = rest.join("\n");
    assert_eq!(status.code(), Some(Exit::OutputExists as i32), "{err}");
    assert!(
        err.contains("`out` already exists; repromin never overwrites an output"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(area.path("out/theirs.txt")).unwrap(),
        "theirs\n"
    );
    assert!(!area.path("out.repromin").exists());
    assert!(stagings(&area).is_empty());
}

#[test]
fn a_source_that_is_a_link_to_a_directory_is_said_to_be_a_link() {
    let area = Area::new();
    area.write("real", &[("a.txt", "BUG\n")]);
    std::os::unix::fs::symlink(area.path("real"), area.path("src")).unwrap();
    let o = run(
        &["reduce", "src", "out", "--", "sh", "-c", BUG_SCRIPT],
        area.dir.path(),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(Exit::Usage as i32), "{err}");
    assert!(
        err.contains("`src` is a symbolic link") && !err.contains("not a directory"),
        "{err}"
    );
    assert!(!area.path("out").exists());
}

/// A `repromin/v1` line that `line` accepts.
fn valid_line() -> String {
    format!(
        "repromin/v1 {{\"head\":\"{a}\",\"mergeBase\":\"{b}\",\"verdict\":\"no-tests\",\"error\":null,\"configEdited\":false,\"counts\":{{\"reproduces\":0,\"passes-on-base\":0,\"new-api\":0,\"fails-on-head\":0,\"not-run\":0}},\"tests\":[],\"deletedTests\":[],\"notCollected\":[],\"truncated\":false,\"certificate\":null}}",
        a = "a".repeat(40),
        b = "b".repeat(40)
    )
}

/// Runs `repromin line` with `write` feeding its stdin; its exit status, stdout and the
/// highest resident set size seen (KiB).
fn line_with(
    write: impl FnOnce(&mut std::process::ChildStdin) + Send + 'static,
) -> (Option<i32>, String, u64) {
    let mut command = std::process::Command::new(crate::util::bin());
    command
        .arg("line")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    crate::util::clean_env(&mut command);
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || write(&mut stdin));
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
        text
    });
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let code = loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            let hwm = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
            peak = peak.max(hwm.unwrap_or(0));
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let _ = writer.join();
    (code, reader.join().unwrap(), peak)
}

#[test]
fn the_line_command_refuses_an_oversized_line_without_reading_it_whole() {
    let valid = valid_line();
    let (code, out, peak_kib) = line_with(move |stdin| {
        use std::io::Write as _;
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..200 {
            if stdin.write_all(&chunk).is_err() {
                return;
            }
        }
        let _ = stdin.write_all(format!("\n{valid}\n").as_bytes());
    });
    assert_eq!(code, Some(Exit::Error as i32), "{out}");
    assert!(
        out.contains("line 1 refused: line is more than 4096 bytes, over the 4096-byte limit"),
        "{out}"
    );
    assert!(out.contains("no-tests"), "line 2 is checked too: {out}");
    assert!(peak_kib < 64 << 10, "a 200 MB line took {peak_kib} KiB");
}

#[test]
fn the_line_command_calls_a_bare_carriage_return_by_its_name() {
    let valid = valid_line();
    for input in [format!("{valid}\r"), format!("{valid}\rx\n")] {
        let (code, out, _) = line_with(move |stdin| {
            use std::io::Write as _;
            stdin.write_all(input.as_bytes()).unwrap();
        });
        assert_eq!(code, Some(Exit::Error as i32), "{out}");
        assert!(
            out.contains("line 1 refused: it holds a bare carriage return")
                && !out.contains("\\r\\n"),
            "{out}"
        );
    }
    let (_, out, _) = line_with(move |stdin| {
        use std::io::Write as _;
        stdin
            .write_all(format!("{}\r\n", valid_line()).as_bytes())
            .unwrap();
    });
    assert!(out.contains("line 1 refused: it ends in \\r\\n"), "{out}");
}

#[test]
fn an_oversized_report_is_said_to_be_its_real_size() {
    let (repo, base) = crate::gate::python_base();
    let head = repo.commit(
        &[
            ("calc.py", crate::gate::CALC_FIXED),
            (
                "tests/test_calc.py",
                "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
            ),
        ],
        "fix",
    );
    let out = tempfile::tempdir().unwrap();
    let (big, small) = (
        out.path().join("base.report"),
        out.path().join("head.report"),
    );
    std::fs::write(&big, "A".repeat(1_000_000)).unwrap();
    std::fs::write(&small, "A".repeat(1_000_000)).unwrap();
    let (b, h, r) = (
        big.display().to_string(),
        small.display().to_string(),
        repo.path().display().to_string(),
    );
    let o = run(
        &[
            "judge",
            "--base-report",
            &b,
            "--head-report",
            &h,
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &r,
        ],
        repo.path(),
    );
    let line = crate::util::line(&crate::util::stdout(&o));
    let error = line["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("is 1000000 bytes, over the 240000-character cap"),
        "{line}"
    );
}
