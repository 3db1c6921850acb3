//! `reduce --config FILE` and `doctor --config FILE`: the file stands for the flags it
//! expands to, and every refusal names the option, the file or the key.

use repromin::exit_code::Exit;

use crate::util::{Area, redact, run, stderr, stdout};

/// A small tree: the failure needs `boom` in `src/app.txt` and `lib/keep.txt` (kept by
/// rule); `build/` and `docs/gen/` are left out by rules.
fn tree(area: &Area) {
    area.write(
        "proj",
        &[
            ("src/app.txt", "alpha\nbeta boom gamma\ndelta\n"),
            ("src/other.txt", "one\ntwo\n"),
            ("lib/keep.txt", "kept\n"),
            ("build/out.txt", "boom\n"),
            ("docs/gen/page.txt", "boom\n"),
            ("README", "read me\n"),
        ],
    );
}

/// The failing command: needs `boom` in src/app.txt and its environment variable.
const SCRIPT: &str =
    "grep -q boom src/app.txt && test \"$MODE\" = strict && echo \"boom: found\" >&2 && exit 3";

/// The flags and the configuration document for the same reduction.
fn flags() -> Vec<&'static str> {
    vec![
        "--expect",
        "boom: found",
        "--exit-code",
        "3",
        "--baseline-runs",
        "3",
        "--min-baseline-passes",
        "3",
        "--candidate-runs",
        "2",
        "--min-candidate-passes",
        "2",
        "--holdout-runs",
        "3",
        "--min-holdout-rate",
        "0.5",
        "--holdout-confidence",
        "0.5",
        "--timeout",
        "20s",
        "--jobs",
        "1",
        "--env",
        "MODE=strict",
        "--ignore",
        "build",
        "--ignore-path",
        "docs/gen",
        "--keep",
        "lib/keep.txt",
        "--level",
        "tokens",
        "--minimiser",
        "halving",
        "--no-syntax-guard",
        "--max-attempts",
        "500",
        "--max-duration",
        "10m",
    ]
}

pub(crate) fn document() -> String {
    serde_json::json!({
        "schema_version": 1,
        "command": ["sh", "-c", SCRIPT],
        "oracle": {"expect": "boom: found", "exit_code": 3},
        "sampling": {
            "baseline_runs": 3, "min_baseline_passes": 3,
            "candidate_runs": 2, "min_candidate_passes": 2,
            "holdout_runs": 3, "min_holdout_rate": 0.5, "holdout_confidence": 0.5
        },
        "runner": {"timeout": "20s", "jobs": 1, "env": {"MODE": "strict"}},
        "input": {"ignore_names": ["build"], "ignore_paths": ["docs/gen"],
                  "keep_paths": ["lib/keep.txt"]},
        "reduction": {"level": "tokens", "minimiser": "halving", "syntax_guard": false},
        "budgets": {"max_attempts": 500, "max_duration": "10m"}
    })
    .to_string()
}

/// `report.json` beside `out` as text, with every field of a time (`*_ms`) left out.
fn report_without_times(area: &Area, out: &str) -> String {
    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                map.retain(|k, _| !k.ends_with("_ms"));
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(area.path(&format!("{out}.repromin/report.json"))).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    strip(&mut value);
    serde_json::to_string_pretty(&value).unwrap()
}

/// `REPROMIN.md` beside `out`, with its times left out.
fn md_without_times(area: &Area, out: &str) -> String {
    let text = std::fs::read_to_string(area.path(&format!("{out}.repromin/REPROMIN.md"))).unwrap();
    regex::Regex::new(r"(time in passes:|The commands took|work around them) [\d.]+ s")
        .unwrap()
        .replace_all(&text, "$1 [s]")
        .to_string()
}

#[test]
fn a_config_file_and_the_equivalent_flags_give_the_same_report() {
    let area = Area::new();
    tree(&area);
    let mut args = vec!["reduce", "proj", "out"];
    args.extend(flags());
    args.extend(["--", "sh", "-c", SCRIPT]);
    let o = run(&args, area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let by_flags = report_without_times(&area, "out");
    let tree_by_flags = crate::util::files(&area.path("out"));
    let md_by_flags = md_without_times(&area, "out");
    // The same names again, so that the recorded paths match.
    std::fs::rename(area.path("out"), area.path("by-flags")).unwrap();
    std::fs::rename(area.path("out.repromin"), area.path("by-flags.repromin")).unwrap();

    std::fs::write(area.path("reduce.json"), document()).unwrap();
    let o = run(
        &[
            "reduce",
            "proj",
            "out",
            "--config",
            "reduce.json",
            "--no-progress",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "out");
    let by_config = report_without_times(&area, "out");
    assert_eq!(by_config, by_flags);
    assert_eq!(crate::util::files(&area.path("out")), tree_by_flags);
    assert_eq!(md_without_times(&area, "out"), md_by_flags);
    // The run was the one asked for, and the report holds no trace of the file.
    let report: serde_json::Value = serde_json::from_str(&by_config).unwrap();
    assert_eq!(
        report["execution"]["env_names"],
        serde_json::json!(["MODE"])
    );
    assert_eq!(report["execution"]["max_attempts"], 500);
    assert_eq!(report["holdout"]["runs"], 3);
    assert_eq!(report["execution"]["passes"].as_array().unwrap().len(), 12);
    assert_eq!(
        tree_by_flags.keys().collect::<Vec<_>>(),
        ["lib/keep.txt", "src/app.txt"]
    );
    // Neither the report nor REPROMIN.md names the file.
    for text in [
        by_config.as_str(),
        &std::fs::read_to_string(area.path("out.repromin/REPROMIN.md")).unwrap(),
    ] {
        assert!(!text.contains("reduce.json"), "{text}");
    }
}

/// Runs `args` in `area`; it must be refused with `code` and write nothing. Returns the
/// redacted stderr.
fn refused(area: &Area, args: &[&str], code: Exit) -> String {
    let before = crate::util::files(area.dir.path());
    let o = run(args, area.dir.path());
    assert_eq!(o.status.code(), Some(code as i32), "{}", stderr(&o));
    assert_eq!(
        crate::util::files(area.dir.path()),
        before,
        "something was written"
    );
    redact(&stderr(&o), area)
}

#[test]
fn a_semantic_option_beside_the_file_is_refused_by_name() {
    let area = Area::new();
    tree(&area);
    std::fs::write(area.path("reduce.json"), document()).unwrap();
    let err = refused(
        &area,
        &[
            "reduce",
            "proj",
            "out",
            "--config",
            "reduce.json",
            "--jobs",
            "2",
        ],
        Exit::Usage,
    );
    insta::assert_snapshot!(err, @"error: --config cannot be combined with --jobs: the configuration file owns every semantic option (only SOURCE, OUTPUT, session placement and output controls stay on the command line)");
    // A switch, and the same on doctor.
    let err = refused(
        &area,
        &[
            "doctor",
            "proj",
            "--allow-trivial",
            "--config",
            "reduce.json",
        ],
        Exit::Usage,
    );
    assert!(
        err.contains("cannot be combined with --allow-trivial"),
        "{err}"
    );
    // Even a flag given with its default value.
    let err = refused(
        &area,
        &[
            "reduce",
            "proj",
            "out",
            "--config=reduce.json",
            "--candidate-runs=1",
        ],
        Exit::Usage,
    );
    assert!(
        err.contains("cannot be combined with --candidate-runs"),
        "{err}"
    );
}

#[test]
fn a_command_beside_the_file_is_refused() {
    let area = Area::new();
    tree(&area);
    std::fs::write(area.path("reduce.json"), document()).unwrap();
    let err = refused(
        &area,
        &[
            "reduce",
            "proj",
            "out",
            "--config",
            "reduce.json",
            "--",
            "sh",
            "-c",
            "exit 1",
        ],
        Exit::Usage,
    );
    insta::assert_snapshot!(err, @"error: --config cannot be combined with `-- CMD` (the command is the file's `command`): the configuration file owns every semantic option (only SOURCE, OUTPUT, session placement and output controls stay on the command line)");
}

#[test]
fn an_invalid_file_is_refused_naming_the_key() {
    let area = Area::new();
    tree(&area);
    let doc = document().replace(r#""jobs":1"#, r#""jobs":1,"cores":2"#);
    assert!(doc.contains("cores"));
    std::fs::write(area.path("reduce.json"), doc).unwrap();
    let err = refused(
        &area,
        &["reduce", "proj", "out", "--config", "reduce.json"],
        Exit::Usage,
    );
    insta::assert_snapshot!(err, @r"
    error: the configuration file `reduce.json`: runner.cores: unknown key (known here: timeout, jobs, env, memory, overlay, runner, image, container_cli, docker_network, docker_pids_limit, docker_tmpfs, docker_cpus, docker_memory, docker_workspace_limit, remote, remote_instance, remote_jobs, remote_wait)

    hint: docs/config-schema.md lists every key, its type and its default
    ");
    std::fs::write(area.path("reduce.json"), "{\"schema_version\": 1,\n").unwrap();
    let err = refused(
        &area,
        &["doctor", "proj", "--config", "reduce.json"],
        Exit::Usage,
    );
    assert!(
        err.contains("`reduce.json` is not valid JSON: EOF while parsing a value at line 2"),
        "{err}"
    );
    let err = refused(
        &area,
        &["reduce", "proj", "out", "--config", "missing.json"],
        Exit::Io,
    );
    insta::assert_snapshot!(err, @"error: cannot read the configuration file `missing.json`: No such file or directory (os error 2)");
}

#[test]
fn a_value_refused_after_expansion_names_its_key() {
    let area = Area::new();
    tree(&area);
    // Valid on its own, but a 0.99 rate cannot pass with one run per candidate.
    let doc = serde_json::json!({
        "schema_version": 1,
        "command": ["sh", "-c", SCRIPT],
        "sampling": {"min_candidate_rate": 0.99}
    });
    std::fs::write(area.path("reduce.json"), doc.to_string()).unwrap();
    let err = refused(
        &area,
        &["reduce", "proj", "out", "--config", "reduce.json"],
        Exit::Usage,
    );
    insta::assert_snapshot!(err, @r"
    error: --min-candidate-rate 0.99 cannot pass with 1 candidate runs at confidence 0.95: add runs

    hint: these options come from the configuration file: --min-candidate-rate is sampling.min_candidate_rate
    ");
}

#[test]
fn doctor_validates_the_whole_file_and_uses_what_its_preflight_needs() {
    let area = Area::new();
    tree(&area);
    // Budgets are not doctor's, but an invalid one is still refused.
    let doc = document().replace(r#""max_duration":"10m""#, r#""max_duration":"0s""#);
    assert!(doc.contains("0s"));
    std::fs::write(area.path("reduce.json"), doc).unwrap();
    let err = refused(
        &area,
        &["doctor", "proj", "--config", "reduce.json"],
        Exit::Usage,
    );
    assert!(
        err.contains("`reduce.json`: budgets.max_duration: `0s` must be a positive duration"),
        "{err}"
    );
    // A valid file gives what the same flags give.
    std::fs::write(area.path("reduce.json"), document()).unwrap();
    let o = run(
        &["doctor", "proj", "--config", "reduce.json"],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let by_config = stdout(&o);
    let mut args = vec!["doctor", "proj"];
    let reduce_flags = flags();
    let budgets = reduce_flags
        .iter()
        .position(|f| *f == "--max-attempts")
        .unwrap();
    args.extend(&reduce_flags[..budgets]);
    args.extend(["--", "sh", "-c", SCRIPT]);
    let o = run(&args, area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let times = regex::Regex::new(r"in \d+ ms").unwrap();
    assert_eq!(
        times.replace_all(&by_config, "in [..]"),
        times.replace_all(&stdout(&o), "in [..]")
    );
    assert!(by_config.contains("oracle: expect"), "{by_config}");
    assert!(by_config.contains("jobs: 1"), "{by_config}");
}
