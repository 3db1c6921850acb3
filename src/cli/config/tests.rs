//! The schema's rules, each refused with a message naming the key; the documentation's
//! examples; and that every semantic flag has a key.

use std::ffi::OsString;
use std::path::Path;

use clap::{CommandFactory as _, Parser as _};

use super::*;
use crate::cli::{Cli, Command};

/// A valid document with every section, one key of each type.
const GOOD: &str = r#"{
  "schema_version": 1,
  "command": ["sh", "-c", "exit 1"],
  "oracle": {"expect": "boom", "allow_trivial": false},
  "sampling": {"baseline_runs": 3, "min_baseline_passes": 3, "candidate_runs": 2,
               "min_candidate_passes": 1, "confidence": 0.9, "holdout_runs": 0},
  "runner": {"timeout": "5s", "jobs": 1, "env": {"A": "1", "B_2": "x=y"}},
  "input": {"ignore_names": ["build"], "ignore_paths": ["docs/gen"], "keep_paths": ["a.py"],
            "gitignore": false, "gitignore_files": [], "gitignore_recursive": false},
  "reduction": {"level": "tokens", "minimiser": "halving", "syntax_guard": false},
  "budgets": {"max_attempts": 0, "max_duration": "2m"}
}"#;

fn parse(text: &str) -> Result<Document, String> {
    parse_text(Path::new("c.json"), text).map_err(|e| e.to_string())
}

/// `GOOD` with `from` replaced by `to` (which must occur).
fn with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

#[test]
fn a_document_expands_into_the_flags_it_stands_for() {
    let doc = parse(GOOD).unwrap();
    assert_eq!(doc.command, ["sh", "-c", "exit 1"]);
    let reduce = [
        "--expect=boom",
        "--baseline-runs=3",
        "--min-baseline-passes=3",
        "--candidate-runs=2",
        "--min-candidate-passes=1",
        "--confidence=0.9",
        "--holdout-runs=0",
        "--timeout=5s",
        "--jobs=1",
        "--env=A=1",
        "--env=B_2=x=y",
        "--ignore=build",
        "--ignore-path=docs/gen",
        "--keep=a.py",
        "--level=tokens",
        "--minimiser=halving",
        "--no-syntax-guard",
        "--max-attempts=0",
        "--max-duration=2m",
    ];
    assert_eq!(doc.tokens(false), reduce);
    // doctor: everything but the budgets.
    assert_eq!(doc.tokens(true), reduce[..reduce.len() - 2]);
}

#[test]
fn the_schema_refuses_each_rule_naming_the_key() {
    let cases: Vec<(&str, String)> = vec![
        ("not JSON", "{".into()),
        ("not an object", "[1]".into()),
        ("missing version", with(r#""schema_version": 1,"#, "")),
        (
            "version 2",
            with(r#""schema_version": 1"#, r#""schema_version": 2"#),
        ),
        (
            "version as a string",
            with(r#""schema_version": 1"#, r#""schema_version": "1""#),
        ),
        (
            "unknown top-level key",
            with(
                r#""schema_version": 1"#,
                r#""schema_version": 1, "verbose": true"#,
            ),
        ),
        (
            "unknown section key",
            with(r#""jobs": 1"#, r#""jobs": 1, "cores": 2"#),
        ),
        (
            "schema not a string",
            with(
                r#""schema_version": 1"#,
                r#""$schema": 1, "schema_version": 1"#,
            ),
        ),
        (
            "unknown key beside a schema",
            with(
                r#""schema_version": 1"#,
                r#""$schema": "reduce-config.schema.json", "$comment": "x", "schema_version": 1"#,
            ),
        ),
        (
            "duplicate top-level key",
            with(
                r#""schema_version": 1"#,
                r#""schema_version": 1, "schema_version": 1"#,
            ),
        ),
        (
            "duplicate section key",
            with(r#""jobs": 1"#, r#""jobs": 1, "jobs": 2"#),
        ),
        (
            "duplicate section",
            with(r#""budgets""#, r#""oracle": {}, "budgets""#),
        ),
        (
            "duplicate env name",
            with(r#""A": "1""#, r#""A": "1", "A": "2""#),
        ),
        (
            "missing command",
            with(r#""command": ["sh", "-c", "exit 1"],"#, ""),
        ),
        (
            "command as a string",
            with(r#"["sh", "-c", "exit 1"]"#, r#""sh -c 'exit 1'""#),
        ),
        ("empty command", with(r#"["sh", "-c", "exit 1"]"#, "[]")),
        (
            "empty program",
            with(r#"["sh", "-c", "exit 1"]"#, r#"[""]"#),
        ),
        ("command element", with(r#""-c""#, "2")),
        (
            "section not an object",
            with(
                r#""oracle": {"expect": "boom", "allow_trivial": false}"#,
                r#""oracle": []"#,
            ),
        ),
        (
            "switch as a string",
            with(r#""allow_trivial": false"#, r#""allow_trivial": "no""#),
        ),
        (
            "switch null",
            with(r#""allow_trivial": false"#, r#""allow_trivial": null"#),
        ),
        (
            "count as a string",
            with(r#""candidate_runs": 2"#, r#""candidate_runs": "2""#),
        ),
        (
            "count zero",
            with(r#""candidate_runs": 2"#, r#""candidate_runs": 0"#),
        ),
        (
            "count fractional",
            with(r#""candidate_runs": 2"#, r#""candidate_runs": 2.0"#),
        ),
        (
            "count negative",
            with(r#""holdout_runs": 0"#, r#""holdout_runs": -1"#),
        ),
        (
            "count null where required",
            with(r#""candidate_runs": 2"#, r#""candidate_runs": null"#),
        ),
        (
            "one baseline run",
            with(r#""baseline_runs": 3"#, r#""baseline_runs": 1"#),
        ),
        (
            "jobs over the limit",
            with(r#""jobs": 1"#, r#""jobs": 257"#),
        ),
        (
            "rate of 1",
            with(r#""confidence": 0.9"#, r#""confidence": 1"#),
        ),
        (
            "rate of 0",
            with(r#""confidence": 0.9"#, r#""confidence": 0"#),
        ),
        (
            "rate as a string",
            with(r#""confidence": 0.9"#, r#""confidence": "90%""#),
        ),
        (
            "exit code 125",
            with(r#""expect": "boom""#, r#""exit_code": 125"#),
        ),
        (
            "exit code 256",
            with(r#""expect": "boom""#, r#""exit_code": 256"#),
        ),
        (
            "bad regex",
            with(r#""expect": "boom""#, r#""expect": "(unclosed""#),
        ),
        (
            "blank signature",
            with(r#""expect": "boom""#, r#""signature": "  ""#),
        ),
        (
            "duration without unit sense",
            with(r#""timeout": "5s""#, r#""timeout": "5 weeks""#),
        ),
        (
            "duration as a number",
            with(r#""timeout": "5s""#, r#""timeout": 5"#),
        ),
        (
            "duration zero",
            with(r#""max_duration": "2m""#, r#""max_duration": "0s""#),
        ),
        (
            "unknown level",
            with(r#""level": "tokens""#, r#""level": "words""#),
        ),
        (
            "unknown minimiser",
            with(r#""minimiser": "halving""#, r#""minimiser": "ddmin""#),
        ),
        (
            "unknown pass",
            with(r#""level": "tokens""#, r#""passes": ["files", "leaves"]"#),
        ),
        (
            "empty pass list",
            with(r#""level": "tokens""#, r#""passes": []"#),
        ),
        (
            "env not an object",
            with(r#"{"A": "1", "B_2": "x=y"}"#, r#"["A=1"]"#),
        ),
        ("env bad name", with(r#""B_2""#, r#""2B""#)),
        ("env value not a string", with(r#""A": "1""#, r#""A": 1"#)),
        (
            "ignore name with a slash",
            with(r#"["build"]"#, r#"["a/build"]"#),
        ),
        (
            "keep path absolute",
            with(r#"["a.py"]"#, r#"["/etc/passwd"]"#),
        ),
        ("keep path escaping", with(r#"["a.py"]"#, r#"["../a.py"]"#)),
        (
            "gitignore file empty",
            with(r#""gitignore_files": []"#, r#""gitignore_files": [""]"#),
        ),
        ("list as a string", with(r#"["docs/gen"]"#, r#""docs/gen""#)),
        (
            "any_failure with expect",
            with(r#""allow_trivial": false"#, r#""any_failure": true"#),
        ),
        (
            "any_failure with process_failure",
            with(
                r#""expect": "boom""#,
                r#""any_failure": true, "process_failure": true"#,
            ),
        ),
        (
            "process_failure with exit_code",
            with(
                r#""expect": "boom""#,
                r#""process_failure": true, "exit_code": 3"#,
            ),
        ),
        (
            "passes with level",
            with(
                r#""level": "tokens""#,
                r#""level": "tokens", "passes": ["files"]"#,
            ),
        ),
        (
            "min baseline passes over runs",
            with(r#""min_baseline_passes": 3"#, r#""min_baseline_passes": 4"#),
        ),
        (
            "min candidate passes over runs",
            with(
                r#""min_candidate_passes": 1"#,
                r#""min_candidate_passes": 3"#,
            ),
        ),
        (
            "run confidence without a rate",
            with(
                r#""confidence": 0.9"#,
                r#""confidence": 0.9, "run_confidence": 0.8"#,
            ),
        ),
    ];
    let mut out = String::new();
    for (name, text) in &cases {
        match parse(text) {
            Ok(doc) => panic!("{name}: accepted as {doc:?}"),
            Err(e) => out.push_str(&format!("{name}: {e}\n")),
        }
    }
    insta::assert_snapshot!(out);
}

#[test]
fn a_schema_key_names_the_schema_and_changes_nothing() {
    let named = with(
        r#""schema_version": 1"#,
        r#""$schema": "https://raw.githubusercontent.com/repromin/repromin/main/schemas/reduce-config.schema.json", "schema_version": 1"#,
    );
    let doc = parse(&named).unwrap();
    let plain = parse(GOOD).unwrap();
    assert_eq!(doc.command, plain.command);
    assert_eq!(doc.tokens(false), plain.tokens(false));
}

#[test]
fn null_means_the_default_where_the_flag_is_optional() {
    let text = r#"{"schema_version": 1, "command": ["x"],
        "oracle": {"expect": null, "signature": null, "exit_code": null},
        "sampling": {"min_baseline_passes": null, "min_baseline_rate": null,
                     "min_candidate_passes": null, "min_candidate_rate": null,
                     "run_confidence": null},
        "runner": {"timeout": null, "jobs": null},
        "reduction": {"passes": null, "level": null, "minimiser": null},
        "budgets": {"max_attempts": null, "max_duration": null},
        "input": {}}"#;
    let doc = parse(text).unwrap();
    assert!(doc.tokens(false).is_empty(), "{:?}", doc.tokens(false));
}

/// Each `json` block of docs/config-schema.md.
fn doc_examples() -> Vec<String> {
    let doc = include_str!("../../../docs/config-schema.md");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```json") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(current.is_none(), "an unclosed json block");
    blocks
}

#[test]
fn the_documented_examples_are_valid_and_pass_the_command_line_checks() {
    let examples = doc_examples();
    assert_eq!(
        examples.len(),
        4,
        "the json blocks of docs/config-schema.md"
    );
    let source = tempfile::tempdir().unwrap();
    for example in examples {
        let doc = parse(&example).unwrap_or_else(|e| panic!("{e}\n{example}"));
        // The expansion parses, and the options it gives pass the validation a run does
        // before its first command.
        let mut argv: Vec<OsString> = vec!["repromin".into(), "reduce".into()];
        argv.extend(doc.tokens(false).into_iter().map(OsString::from));
        argv.push(source.path().into());
        argv.push("out".into());
        argv.push("--".into());
        argv.extend(doc.command.iter().map(OsString::from));
        let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{e}\n{example}"));
        let Command::Reduce(args) = cli.command else {
            panic!("not a reduce")
        };
        let options = args.to_options().unwrap();
        crate::reduce::validate(&options, false).unwrap_or_else(|e| panic!("{e}\n{example}"));
    }
}

#[test]
fn every_key_is_documented_with_its_flag() {
    let doc = include_str!("../../../docs/config-schema.md");
    for field in FIELDS {
        let heading = format!("### `{}`", field.section);
        let at = doc
            .find(&heading)
            .unwrap_or_else(|| panic!("no section {heading}"));
        let section = &doc[at..];
        let section = &section[..section[4..].find("\n#").map_or(section.len(), |e| e + 4)];
        let row = section
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` |", field.key)))
            .unwrap_or_else(|| panic!("{}.{} has no row", field.section, field.key));
        assert!(
            row.contains(&format!("`{}", field.flag)),
            "{}.{}: the row does not name {}",
            field.section,
            field.key,
            field.flag
        );
    }
}

#[test]
fn every_semantic_option_of_reduce_and_doctor_has_a_key() {
    let cli = Cli::command();
    for name in ["reduce", "doctor"] {
        let sub = cli.find_subcommand(name).unwrap();
        for arg in sub.get_arguments() {
            let id = arg.get_id().as_str();
            if PLACEMENT.contains(&id) || arg.is_last_set() {
                continue;
            }
            let long = format!("--{}", arg.get_long().unwrap_or(id));
            let field = FIELDS.iter().find(|f| f.flag == long);
            assert!(
                field.is_some(),
                "{name} {long} has no key in the configuration schema"
            );
        }
    }
    // And each key's flag exists (on reduce; doctor lacks only the budgets).
    let reduce = cli.find_subcommand("reduce").unwrap();
    let doctor = cli.find_subcommand("doctor").unwrap();
    for field in FIELDS {
        let has = |c: &clap::Command| {
            c.get_arguments()
                .any(|a| a.get_long().is_some_and(|l| format!("--{l}") == field.flag))
        };
        assert!(has(reduce), "{} is not a reduce flag", field.flag);
        assert_eq!(has(doctor), field.doctor, "{} on doctor", field.flag);
    }
}

#[test]
fn a_rejected_expansion_hint_names_the_keys() {
    assert_eq!(
        keys_named_in("--min-candidate-rate 0.99 cannot pass with 1 candidate runs"),
        Some(
            "hint: these options come from the configuration file: --min-candidate-rate is \
             sampling.min_candidate_rate"
                .into()
        )
    );
    // `--ignore` is not named by `--ignore-path`.
    assert_eq!(
        keys_named_in("--ignore-path `..` is bad"),
        Some(
            "hint: these options come from the configuration file: --ignore-path is \
             input.ignore_paths"
                .into()
        )
    );
    assert_eq!(keys_named_in("`proj` does not exist"), None);
}

#[test]
fn the_expanded_command_line_keeps_placement_and_ends_with_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(
        &path,
        r#"{"schema_version": 1, "command": ["sh", "-c", "exit 1"], "runner": {"jobs": 1}}"#,
    )
    .unwrap();
    let os = |items: &[&str]| -> Vec<OsString> { items.iter().map(OsString::from).collect() };
    let file = path.to_str().unwrap();
    let definition = Cli::command();
    // A program named like the subcommand, and a bare `--` with nothing after it.
    for (given, expanded) in [
        (
            os(&[
                "reduce",
                "reduce",
                "src",
                "out",
                "--config",
                file,
                "--no-progress",
            ]),
            os(&[
                "reduce",
                "reduce",
                "--jobs=1",
                "src",
                "out",
                "--config",
                file,
                "--no-progress",
                "--",
                "sh",
                "-c",
                "exit 1",
            ]),
        ),
        (
            os(&["repromin", "doctor", "src", "--config", file, "--"]),
            os(&[
                "repromin", "doctor", "--jobs=1", "src", "--config", file, "--", "sh", "-c",
                "exit 1",
            ]),
        ),
    ] {
        let matches = definition.clone().try_get_matches_from(&given).unwrap();
        assert_eq!(
            expand(&given, &definition, &matches).unwrap(),
            Some(expanded)
        );
    }
    // Without --config, nothing changes.
    let plain = os(&["repromin", "reduce", "src", "out", "--", "true"]);
    let matches = definition.clone().try_get_matches_from(&plain).unwrap();
    assert_eq!(expand(&plain, &definition, &matches).unwrap(), None);
}
