//! Durable sessions: a reduction killed with SIGKILL (at timed instants and at the test
//! hook's points: a journal append, a state write, the promotion swap, a holdout slot,
//! publication) and resumed publishes what an uninterrupted run publishes; a resume with
//! another setting or source is refused, naming it.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use repromin::exit_code::Exit;

use crate::util::{Area, bin, clean_env, files, kill_when_paused, report, run_env, stderr};

/// A failure in one line of one file of ten; each run takes a little time.
/// Every run is counted in `$COUNT_FILE` (set for the repromin process and inherited; not
/// a setting of the reduction).
const SCRIPT: &str = "echo run >> \"$COUNT_FILE\"; grep -q 'BUG 7' f7.txt 2>/dev/null || exit 0; sleep 0.1; echo 'error: BUG 7 seen'; exit 3";

fn source(area: &Area) {
    let texts: Vec<(String, String)> = (1..=10)
        .map(|i| {
            (
                format!("f{i}.txt"),
                format!("one {i}\ntwo {i}\nBUG {i}\nthree {i}\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    area.write("src", &refs);
}

fn args(out: &str, session: Option<&str>, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["reduce", "src", out, "--jobs", "1", "--no-progress"];
    args.extend_from_slice(&["--expect", "error: BUG 7 seen"]);
    if let Some(dir) = session {
        args.extend_from_slice(&["--session", dir]);
    }
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "sh", "-c", SCRIPT]);
    args.into_iter().map(String::from).collect()
}

/// `args` with `--resume` before the command.
fn with_resume(args: &[String]) -> Vec<String> {
    let mut args = args.to_vec();
    let at = args.iter().position(|a| a == "--").unwrap();
    args.insert(at, "--resume".into());
    args
}

fn start(area: &Area, args: &[String], pause: Option<&str>, count: &str) -> Child {
    let mut command = Command::new(bin());
    command
        .args(args)
        .current_dir(area.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    clean_env(&mut command);
    command.env("COUNT_FILE", area.path(count));
    if let Some(point) = pause {
        command.env(crate::util::FAILPOINT, point);
    }
    command.spawn().unwrap()
}

fn sigkill(child: &mut Child) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let _ = child.wait();
}

/// A report without what differs between two runs of the same reduction: times, paths.
fn comparable(mut value: serde_json::Value) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                map.retain(|k, _| {
                    !(k.ends_with("_ms")
                        || k.ends_with("_seconds")
                        || k.ends_with("_path")
                        || k == "duration")
                });
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

fn run_args(area: &Area, args: &[String]) -> std::process::Output {
    run_counted(area, args, "count")
}

fn run_counted(area: &Area, args: &[String], count: &str) -> std::process::Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let file = area.path(count).display().to_string();
    run_env(&refs, area.dir.path(), &[("COUNT_FILE", &file)])
}

/// Runs of the command counted in `count` so far.
fn runs(area: &Area, count: &str) -> usize {
    std::fs::read_to_string(area.path(count))
        .unwrap_or_default()
        .lines()
        .count()
}

/// Killed at timed instants and inside a journal append, a state write, the promotion
/// swap and publication, then resumed: the same tree and report as without the kill.
#[test]
fn a_session_killed_anywhere_resumes_to_the_uninterrupted_result() {
    if !crate::util::failpoints() {
        return;
    }
    let area = Area::new();
    source(&area);
    // A durable session runs without the tracer (its resumed run must propose the same
    // candidates): so does the run it is compared with.
    let plain = run_counted(&area, &args("plain", None, &["--no-trace"]), "count-plain");
    assert!(plain.status.success(), "{}", stderr(&plain));
    let plain_runs = runs(&area, "count-plain");
    let want_tree = files(&area.path("plain"));
    let want_report = comparable(report(&area.path("plain")));
    assert_eq!(want_tree.len(), 1, "{want_tree:?}");

    let kills: Vec<(String, Option<&str>, u64)> = vec![
        ("hook-append".into(), Some("session:journal-append"), 0),
        ("hook-state".into(), Some("session:state-rename"), 0),
        ("hook-swap".into(), Some("session:swap-moved-aside"), 0),
        ("hook-publish".into(), Some("publish:after-payload"), 0),
        ("at-300".into(), None, 300),
        ("at-900".into(), None, 900),
        ("at-1500".into(), None, 1500),
        ("at-2400".into(), None, 2400),
    ];
    for (name, pause, delay) in kills {
        let (out, dir) = (format!("out-{name}"), format!("sess-{name}"));
        let session_args = args(&out, Some(&dir), &[]);
        let count = format!("count-{name}");
        let mut child = start(&area, &session_args, pause, &count);
        match pause {
            Some(point) => {
                kill_when_paused(&mut child, point);
            }
            None => {
                std::thread::sleep(Duration::from_millis(delay));
                sigkill(&mut child);
            }
        }
        let resume = with_resume(&session_args);
        let before = runs(&area, &count);
        let resumed = run_counted(&area, &resume, &count);
        assert!(resumed.status.success(), "{name}: {}", stderr(&resumed));
        // What the journal holds is replayed, not run again: at most the window in flight
        // at the kill (eight candidates) runs twice.
        let total = runs(&area, &count);
        assert!(
            total <= plain_runs + 8,
            "{name}: {total} runs, {plain_runs} without the kill"
        );
        if pause == Some("publish:after-payload") {
            assert_eq!(
                total, before,
                "{name}: a resume after the reduction runs nothing"
            );
        }
        assert_eq!(files(&area.path(&out)), want_tree, "{name}");
        assert_eq!(
            comparable(report(&area.path(&out))),
            want_report,
            "{name}: {}",
            stderr(&resumed)
        );
        // A terminal session resumed again publishes nothing new and changes nothing.
        let again = run_args(&area, &resume);
        assert!(again.status.success(), "{name}: {}", stderr(&again));
        assert!(
            stderr(&again).contains("this session had published its result already"),
            "{}",
            stderr(&again)
        );
    }
}

/// A holdout slot whose command was started when the process died is a non-pass on
/// resume, and the next slot follows: no slot is sampled twice.
#[test]
fn a_holdout_slot_cut_short_counts_as_a_non_pass_and_is_never_resampled() {
    if !crate::util::failpoints() {
        return;
    }
    let area = Area::new();
    source(&area);
    let holdout = ["--holdout-runs", "6", "--min-holdout-rate", "0.2"];
    let session_args = args("out", Some("sess"), &holdout);
    let mut child = start(&area, &session_args, Some("session:holdout-slot"), "count");
    kill_when_paused(&mut child, "session:holdout-slot");
    let resume = with_resume(&session_args);
    let resumed = run_args(&area, &resume);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let holdout = &report(&area.path("out"))["holdout"];
    assert_eq!(holdout["runs"], 6, "{holdout}");
    assert_eq!(holdout["passes"], 5, "{holdout}");
    let journal = std::fs::read_to_string(area.path("sess/journal.jsonl")).unwrap();
    let starts = journal.matches(r#""kind":"holdout-start""#).count();
    assert_eq!(starts, 6, "{journal}");
    assert!(
        journal.contains(r#""slot":0,"pass":false,"interrupted":true"#),
        "{journal}"
    );
}

/// Resuming with another setting, another source, or no session is refused before any
/// command runs, naming what differs.
#[test]
fn a_resume_with_other_settings_or_source_is_refused_naming_them() {
    let area = Area::new();
    source(&area);
    let first = run_args(&area, &args("out", Some("sess"), &["--max-attempts", "3"]));
    assert!(first.status.success(), "{}", stderr(&first));
    let resume = |extra: &[&str]| run_args(&area, &with_resume(&args("out2", Some("sess"), extra)));
    let changed = resume(&["--max-attempts", "4"]);
    assert_eq!(changed.status.code(), Some(i32::from(Exit::Usage.code())));
    assert!(
        stderr(&changed).contains("--max-attempts was 3, now 4"),
        "{}",
        stderr(&changed)
    );
    let changed = resume(&["--max-attempts", "3", "--timeout", "30"]);
    assert!(
        stderr(&changed).contains("--timeout was null, now 30000"),
        "{}",
        stderr(&changed)
    );
    std::fs::write(area.path("src/f1.txt"), "changed\n").unwrap();
    let changed = resume(&["--max-attempts", "3"]);
    assert_eq!(changed.status.code(), Some(i32::from(Exit::Usage.code())));
    assert!(
        stderr(&changed).contains("the source tree changed since the session started"),
        "{}",
        stderr(&changed)
    );
    let fresh = run_args(&area, &args("out3", Some("sess"), &["--max-attempts", "3"]));
    assert!(
        stderr(&fresh).contains("already holds a session: add --resume"),
        "{}",
        stderr(&fresh)
    );
    let missing = run_args(
        &area,
        &with_resume(&args("out4", Some("nothing-here"), &[])),
    );
    assert!(
        stderr(&missing).contains("holds no session to resume"),
        "{}",
        stderr(&missing)
    );
    assert!(!Path::new(&area.path("out2")).exists());
}

/// Ctrl-C in a session publishes nothing, saves the state and prints the command that
/// resumes it; that command finishes the reduction.
#[test]
fn ctrl_c_in_a_session_prints_the_command_that_resumes_it() {
    let area = Area::new();
    source(&area);
    let plain = run_args(&area, &args("plain", None, &[]));
    assert!(plain.status.success(), "{}", stderr(&plain));
    let session_args = args("out", Some("sess"), &[]);
    let mut child = start(&area, &session_args, None, "count");
    let journal = area.path("sess/journal.jsonl");
    let deadline = Instant::now() + Duration::from_secs(60);
    // Past the baseline and the empty-tree check: reducing.
    while std::fs::read_to_string(&journal)
        .unwrap_or_default()
        .lines()
        .count()
        < 4
    {
        assert!(
            Instant::now() < deadline,
            "the session never got to reducing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut text).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(i32::from(Exit::Interrupted.code())),
        "{text}"
    );
    assert!(!area.path("out").exists(), "{text}");
    let state = std::fs::read_to_string(area.path("sess/state.json")).unwrap();
    assert!(state.contains(r#""status": "interrupted""#), "{state}");
    let line = text
        .lines()
        .skip_while(|l| !l.ends_with("resume it with:"))
        .nth(1)
        .unwrap_or_else(|| panic!("no resume command: {text}"))
        .trim()
        .to_string();
    assert!(line.contains(" --session sess --resume "), "{line}");
    // The printed command, run by a shell as a user would paste it, finishes the job.
    let mut shell = Command::new("sh");
    shell.arg("-c").arg(&line).current_dir(area.dir.path());
    clean_env(&mut shell);
    shell.env("COUNT_FILE", area.path("count"));
    let resumed = shell.output().unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(files(&area.path("out")), files(&area.path("plain")));
}

/// With run-wide confidence, the families allocated to a window that was running when the
/// process died are spent: the resumed window runs under new ones.
#[test]
fn families_allocated_before_a_crash_are_spent() {
    if !crate::util::failpoints() {
        return;
    }
    let area = Area::new();
    source(&area);
    let sampling = [
        "--candidate-runs",
        "3",
        "--min-candidate-rate",
        "0.05",
        "--run-confidence",
        "0.9",
        // Three runs a candidate allow the families of the passes down to lines.
        "--level",
        "lines",
    ];
    let session_args = args("out", Some("sess"), &sampling);
    let mut child = start(&area, &session_args, Some("session:allocated"), "count");
    kill_when_paused(&mut child, "session:allocated");
    let resume = with_resume(&session_args);
    let resumed = run_args(&area, &resume);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let journal = std::fs::read_to_string(area.path("sess/journal.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first = records
        .iter()
        .position(|r| r["kind"] == "allocate")
        .unwrap();
    let (spent, fresh) = (&records[first], &records[first + 1]);
    assert_eq!(fresh["kind"], "allocate", "{journal}");
    let spent = spent["families"].as_u64().unwrap();
    assert_eq!(fresh["families"].as_u64().unwrap(), 2 * spent, "{journal}");
    assert_eq!(records[first + 2]["kind"], "window", "{journal}");
    // The first commit's family comes after the spent ones.
    let events = &report(&area.path("out"))["events"];
    assert!(events[0]["family"].as_u64().unwrap() > spent, "{events}");
}

/// The campaign behind the figures in docs/reliability.md: `REPROMIN_SESSION_KILLS`
/// sessions (default 40), each killed with SIGKILL at a random instant of an
/// uninterrupted run's duration, its resume killed again half the time, then resumed to
/// the end; each must publish the uninterrupted tree and report. `REPROMIN_SESSION_SEED`
/// replays a seed.
/// `cargo test --test cli session::session_kill_campaign -- --ignored --nocapture`
#[test]
#[ignore = "a campaign of minutes; run by hand for the figures"]
fn session_kill_campaign() {
    let kills: usize = std::env::var("REPROMIN_SESSION_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let seed = std::env::var("REPROMIN_SESSION_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    let mut rng = crate::crash::Rng(seed);
    let area = Area::new();
    source(&area);
    let timer = Instant::now();
    // A durable session runs without the tracer (its resumed run must propose the same
    // candidates): so does the run it is compared with.
    let plain = run_counted(&area, &args("plain", None, &["--no-trace"]), "count-plain");
    let life = timer.elapsed();
    assert!(plain.status.success(), "{}", stderr(&plain));
    let want_tree = files(&area.path("plain"));
    let want_report = comparable(report(&area.path("plain")));
    let (mut twice, mut identical, mut replayed_runs) = (0, 0, 0usize);
    let mut problems = Vec::new();
    for i in 0..kills {
        let (out, dir, count) = (format!("out{i}"), format!("sess{i}"), format!("count{i}"));
        let session_args = args(&out, Some(&dir), &[]);
        let resume = with_resume(&session_args);
        let mut child = start(&area, &session_args, None, &count);
        std::thread::sleep(life.mul_f64(rng.fraction()));
        sigkill(&mut child);
        if rng.below(2) == 0 {
            twice += 1;
            let mut again = start(&area, &resume, None, &count);
            std::thread::sleep(life.mul_f64(rng.fraction() * 0.5));
            sigkill(&mut again);
        }
        // Killed before it made its directory: there is nothing to resume, and a user
        // starts it again.
        let again = if area.path(&dir).exists() {
            &resume
        } else {
            &session_args
        };
        let resumed = run_counted(&area, again, &count);
        let same = resumed.status.success()
            && files(&area.path(&out)) == want_tree
            && comparable(report(&area.path(&out))) == want_report;
        if same {
            identical += 1;
        } else {
            problems.push(format!("kill {i}: {}", stderr(&resumed)));
        }
        replayed_runs += runs(&area, &count);
    }
    eprintln!(
        "session kill campaign, seed {seed}: {kills} sessions killed at random instants of a {:.1} s run ({twice} of them killed again while resuming), {kills} resumed, {identical} identical to the uninterrupted run; {replayed_runs} command runs in all, {} for as many uninterrupted runs",
        life.as_secs_f64(),
        runs(&area, "count-plain") * kills
    );
    assert!(problems.is_empty(), "seed {seed}:\n{}", problems.join("\n"));
}

/// A published session resumed again: a missing sidecar is rebuilt, an OUTPUT that is
/// another tree is refused and left as it is.
#[test]
fn publication_is_idempotent_and_never_takes_another_tree_for_its_own() {
    let area = Area::new();
    source(&area);
    let session_args = args("out", Some("sess"), &[]);
    let first = run_args(&area, &session_args);
    assert!(first.status.success(), "{}", stderr(&first));
    let want = report(&area.path("out"));
    let resume = with_resume(&session_args);
    std::fs::remove_dir_all(area.path("out.repromin")).unwrap();
    let again = run_args(&area, &resume);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(
        comparable(report(&area.path("out"))),
        comparable(want),
        "the rebuilt sidecar"
    );
    let only = std::fs::read_dir(area.path("out"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    std::fs::write(only.path(), "edited\n").unwrap();
    let refused = run_args(&area, &resume);
    assert_eq!(
        refused.status.code(),
        Some(i32::from(Exit::OutputExists.code()))
    );
    assert!(
        stderr(&refused).contains("exists and is not this session's result"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(std::fs::read_to_string(only.path()).unwrap(), "edited\n");
}

/// `--max-duration` counts from the session's first start: a session resumed after its
/// budget ran out stops at once (and still publishes a state that reproduces).
#[test]
fn max_duration_counts_from_the_first_start() {
    if !crate::util::failpoints() {
        return;
    }
    let area = Area::new();
    source(&area);
    let session_args = args("out", Some("sess"), &["--max-duration", "60s"]);
    let mut child = start(
        &area,
        &session_args,
        Some("session:journal-append"),
        "count",
    );
    kill_when_paused(&mut child, "session:journal-append");
    // The session started 61 s ago.
    let path = area.path("sess/state.json");
    let mut state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let started = state["started_unix_ms"].as_u64().unwrap();
    state["started_unix_ms"] = (started - 61_000).into();
    std::fs::write(&path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
    let resume = with_resume(&session_args);
    let resumed = run_args(&area, &resume);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let r = report(&area.path("out"));
    assert_eq!(r["ended_by"], "max-duration", "{}", stderr(&resumed));
    assert_eq!(r["accepted_mutations"], 0);
}

/// A crash can leave the journal at any record, or in the middle of one: resumed from
/// prefixes of a finished session's journal (whole records, and a record cut in half), the
/// reduction publishes the same tree and report.
#[test]
fn a_resume_from_any_point_of_the_journal_gives_the_same_result() {
    let area = Area::new();
    source(&area);
    let session_args = args("out", Some("sess"), &[]);
    let first = run_args(&area, &session_args);
    assert!(first.status.success(), "{}", stderr(&first));
    let want_tree = files(&area.path("out"));
    let want_report = comparable(report(&area.path("out")));
    let journal = std::fs::read_to_string(area.path("sess/journal.jsonl")).unwrap();
    let lines: Vec<&str> = journal.lines().collect();
    let n = lines.len();
    let mut points: Vec<usize> = (0..=8).map(|i| i * n / 8).collect();
    points.dedup();
    for (i, k) in points.into_iter().enumerate() {
        let dir = format!("sess-{i}");
        let copy = Command::new("cp")
            .args(["-a", "sess", &dir])
            .current_dir(area.dir.path())
            .status()
            .unwrap();
        assert!(copy.success());
        let mut text: String = lines[..k].iter().map(|l| format!("{l}\n")).collect();
        if k < n && i % 2 == 1 {
            // The next record, cut in half by the crash.
            text.push_str(&lines[k][..lines[k].len() / 2]);
        }
        std::fs::write(area.path(&format!("{dir}/journal.jsonl")), text).unwrap();
        let out = format!("out-{i}");
        let resume = with_resume(&args(&out, Some(&dir), &[]));
        let resumed = run_args(&area, &resume);
        assert!(resumed.status.success(), "{k} of {n}: {}", stderr(&resumed));
        assert_eq!(files(&area.path(&out)), want_tree, "{k} of {n}");
        assert_eq!(
            comparable(report(&area.path(&out))),
            want_report,
            "{k} of {n}"
        );
    }
}
