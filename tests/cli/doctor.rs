//! `repromin doctor`: the preflight, which writes nothing.

use repromin::exit_code::Exit;

use crate::util::{Area, redact, run, stderr, stdout};

#[test]
fn doctor_shows_the_learned_signature_and_plan_and_writes_nothing() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let before = crate::util::files(area.dir.path());
    let o = run(
        &["doctor", "proj", "--jobs", "2", "--", "python3", "run.py"],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = redact(&stdout(&o), &area);
    let text = regex::Regex::new(r"(sha256-v\d: )[0-9a-f]{64}|in \d+ ms|candidate: [\d.]+ s")
        .unwrap()
        .replace_all(&text, "$1[..]");
    insta::assert_snapshot!(text, @r"
    source: proj
    tree: 7 files, 3 directories, 0 symlinks, 1155 bytes
    tree-sha256-v2: [..]
    tree-content-sha256-v1: [..]
    command: python3 run.py
    baseline run 1: exit 1 [..]
    baseline run 2: exit 1 [..]
    oracle: learned-signature
    signature (learned): lib.parser.ParseError: missing '=' in item N: 'gamma'
    frames (innermost first): parse (lib/parser.py) < <module> (run.py)
    timeout per [..] (derived)
    empty tree: does not reproduce (good)
    files named in the failure, reduced first: lib/parser.py, run.py
    passes: files, prelude, manifests, syntax, declarations, blocks, lines, unwrap, hoist, literals
    level: chosen by the run: tokens, then chars, follow once these reach their fixed point, while their estimated cost fits
    minimiser: cdd
    jobs: 2
    ");
    assert_eq!(crate::util::files(area.dir.path()), before);
}

#[test]
fn doctor_reports_a_baseline_that_passes() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let o = run(&["doctor", "proj", "--", "true"], area.dir.path());
    assert_eq!(o.status.code(), Some(Exit::NotFailing as i32));
}

/// The baseline's runs go `--jobs` at a time, each in a copy of its own: with two jobs,
/// each of the two runs counts both marks (each run's mark stays a second before and half
/// a second after it counts); one at a time, each counts its own only.
#[test]
fn the_baseline_runs_jobs_at_a_time() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    for jobs in ["2", "1"] {
        let marks = area.path(&format!("marks{jobs}"));
        std::fs::create_dir(&marks).unwrap();
        let log = area.path(&format!("seen{jobs}"));
        let script = format!(
            "touch {m}/$$; sleep 1; ls {m} | wc -l >> {l}; sleep 0.5; rm {m}/$$; python3 run.py",
            m = marks.display(),
            l = log.display()
        );
        let o = run(
            &["doctor", "proj", "--jobs", jobs, "--", "sh", "-c", &script],
            area.dir.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let seen: Vec<u32> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        // Two baseline runs, then the empty tree's run alone.
        let want = if jobs == "2" { [2, 2, 1] } else { [1, 1, 1] };
        assert_eq!(seen, want, "--jobs {jobs}");
    }
}
