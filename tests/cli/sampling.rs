//! Sampling options of `reduce` and `doctor`: flaky commands under statistical gates.

use repromin::exit_code::Exit;

use crate::util::{Area, files, report, run, stderr, stdout};

/// Without guard.txt the failure shows only about 70% of the time.
const FLAKY_WITHOUT_GUARD: &str = "if [ ! -e guard.txt ] && [ $(od -An -N1 -tu1 /dev/urandom) -lt 77 ]; then echo fine; exit 0; fi; python3 run.py";

#[test]
fn candidate_rate_gates_keep_what_a_flaky_failure_needs() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    area.write("proj", &[("guard.txt", "keep me\n")]);
    let o = run(
        &[
            "reduce",
            "proj",
            "out",
            "--passes",
            "files",
            "--candidate-runs",
            "30",
            "--min-candidate-rate",
            "0.9",
            "--holdout-runs",
            "30",
            "--",
            "sh",
            "-c",
            FLAKY_WITHOUT_GUARD,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("out"));
    assert!(kept.contains_key("guard.txt"), "{kept:#?}");
    assert!(!kept.contains_key("docs/notes.md"), "{kept:#?}");
    let r = report(&area.path("out"));
    let files_phase = &r["phase_statistics"][0];
    assert!(
        files_phase["early_rejections"].as_u64().unwrap() > 0,
        "{files_phase}"
    );
    assert!(files_phase["samples_saved"].as_u64().unwrap() > 0);
    assert_eq!(r["execution"]["sampling"]["candidate_runs"], 30);
    assert_eq!(
        r["execution"]["sampling"]["iid_assumption"],
        "required, not verified"
    );
    assert_eq!(r["holdout"]["runs"], 30);
    assert_eq!(r["holdout"]["passes"], 30);
    assert_eq!(r["holdout"]["certified"], true);
    assert_eq!(r["holdout"]["required_passes"], 30);
    // No cache while sampling: old results never stand in for new trials.
    assert_eq!(files_phase["cache_hits"], 0);
}

#[test]
fn plans_that_cannot_pass_are_refused_up_front() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    for (args, want) in [
        (vec!["--holdout-runs", "20"], "the holdout plan cannot pass"),
        (
            vec!["--candidate-runs", "20", "--min-candidate-rate", "0.9"],
            "cannot pass with 20 candidate runs",
        ),
        (
            vec!["--min-candidate-passes", "3"],
            "--min-candidate-passes must be between 1 and --candidate-runs (1)",
        ),
        (
            vec!["--confidence", "1.5"],
            "--confidence must be between 0 and 1",
        ),
        (
            vec!["--run-confidence", "0.9"],
            "--run-confidence needs --min-candidate-rate",
        ),
    ] {
        let mut all = vec!["reduce", "--level", "lines", "proj", "out"];
        all.extend(args);
        all.extend(["--", "python3", "run.py"]);
        let o = run(&all, area.dir.path());
        assert_eq!(o.status.code(), Some(Exit::Usage as i32), "{all:?}");
        assert!(stderr(&o).contains(want), "{all:?}: {}", stderr(&o));
        assert!(!area.path("out").exists());
    }
}

#[test]
fn run_wide_confidence_fails_closed_when_its_alpha_is_spent() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let o = run(
        &[
            "reduce",
            "--level",
            "lines",
            "proj",
            "out",
            "--candidate-runs",
            "40",
            "--min-candidate-rate",
            "0.9",
            "--run-confidence",
            "0.95",
            "--",
            "python3",
            "run.py",
        ],
        area.dir.path(),
    );
    assert_eq!(
        o.status.code(),
        Some(Exit::ConfidenceSpent as i32),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("run-wide confidence is spent at candidate family 2"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn baseline_sampling_accepts_a_flaky_baseline_only_as_far_as_asked() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let counter = area.path("count");
    // Reproduces on every other run, deterministically.
    let script = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); echo $((n+1)) > {c}; [ $((n % 2)) -eq 1 ] && exit 0; python3 run.py",
        c = counter.display()
    );
    let doctor = |extra: &[&str]| {
        let _ = std::fs::remove_file(&counter);
        // Counted in a file outside the tree: one run at a time.
        let mut args = vec!["doctor", "proj", "--baseline-runs", "4", "--jobs", "1"];
        args.extend_from_slice(extra);
        args.extend(["--", "sh", "-c", &script]);
        run(&args, area.dir.path())
    };
    let o = doctor(&[]);
    assert_eq!(
        o.status.code(),
        Some(Exit::Flaky as i32),
        "all runs must agree by default: {}",
        stderr(&o)
    );
    let o = doctor(&["--min-baseline-passes", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("baseline sample: 2 of 4 runs showed the failure (signature from run 1; 1 of the 3 after it)"), "{}", stdout(&o));
    let o = doctor(&["--min-baseline-passes", "3"]);
    assert_eq!(o.status.code(), Some(Exit::Flaky as i32));
    assert!(
        stderr(&o).contains("only 2 of 4 baseline runs"),
        "{}",
        stderr(&o)
    );
}
