//! The JSON Schemas in schemas/: each a valid draft 2020-12 schema with no remote
//! reference; every line, report and configuration that repromin writes or accepts and the
//! docs show validates against its schema; and the lines and configurations repromin
//! refuses are refused by the schema too, wherever a schema can say the rule.
//!
//! `line` and `report` of util.rs check every line and report the other tests read through
//! [`check_line`] and [`check_report`], so a writer that drifts from its schema fails them.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

use crate::util::{Area, PYTEST_CONFIG, report, run, stderr};

/// The four schemas, by file name under schemas/.
const SCHEMAS: [&str; 4] = [
    "line.schema.json",
    "report.schema.json",
    "repo-config.schema.json",
    "reduce-config.schema.json",
];

/// Where the schemas are published (`$id`), as the docs link them.
const PUBLISHED: &str = "https://raw.githubusercontent.com/repromin/repromin/main/schemas/";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn schema(name: &str) -> Value {
    read_json(&root().join("schemas").join(name))
}

fn compile(name: &str) -> Validator {
    jsonschema::draft202012::new(&schema(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn validator(name: &'static str) -> &'static Validator {
    static LINE: OnceLock<Validator> = OnceLock::new();
    static REPORT: OnceLock<Validator> = OnceLock::new();
    static REPO: OnceLock<Validator> = OnceLock::new();
    static REDUCE: OnceLock<Validator> = OnceLock::new();
    let cell = match name {
        "line.schema.json" => &LINE,
        "report.schema.json" => &REPORT,
        "repo-config.schema.json" => &REPO,
        "reduce-config.schema.json" => &REDUCE,
        other => panic!("no schema {other}"),
    };
    cell.get_or_init(|| compile(name))
}

/// What the schema finds wrong with `value`, one line each; empty when it is valid.
fn errors(name: &'static str, value: &Value) -> Vec<String> {
    validator(name)
        .iter_errors(value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

fn assert_valid(name: &'static str, value: &Value, what: &str) {
    let found = errors(name, value);
    assert!(
        found.is_empty(),
        "{what} does not validate against schemas/{name}:\n{}\n{value}",
        found.join("\n")
    );
}

/// Every object in `value` (the value itself included), as JSON pointers.
fn objects(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                objects(
                    v,
                    format!("{at}/{}", key.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
            out.push(at);
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                objects(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A key the writer does not write, added to any object of `value`, is refused: the key
/// sets are exact at every level, as repromin's readers have them. Returns how many
/// objects were tried.
fn every_object_refuses_an_unknown_key(name: &'static str, value: &Value) -> usize {
    let mut found = Vec::new();
    objects(value, String::new(), &mut found);
    for at in &found {
        let mut v = value.clone();
        let object = v.pointer_mut(at).and_then(Value::as_object_mut).unwrap();
        object.insert("unknownKey".into(), 1.into());
        assert!(
            !errors(name, &v).is_empty(),
            "an unknown key at `{at}` is accepted by {name}"
        );
    }
    found.len()
}

/// Checks a decoded `repromin/v1` line against schemas/line.schema.json.
pub(crate) fn check_line(line: &Value) {
    assert_valid("line.schema.json", line, "a repromin/v1 line");
}

/// Checks a decoded report.json against schemas/report.schema.json.
pub(crate) fn check_report(report: &Value) {
    assert_valid("report.schema.json", report, "a report.json");
}

fn doc(name: &str) -> String {
    std::fs::read_to_string(root().join(name)).unwrap()
}

/// Every fenced block of `text` whose info string starts with `tag`: (info string, body).
fn fenced(text: &str, tag: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut info: Option<String> = None;
    let mut body = String::new();
    for line in text.lines() {
        match &info {
            None => {
                if let Some(rest) = line.trim_start().strip_prefix("```")
                    && rest.starts_with(tag)
                {
                    info = Some(rest.to_string());
                    body.clear();
                }
            }
            Some(open) if line.trim() == "```" => {
                blocks.push((open.clone(), std::mem::take(&mut body)));
                info = None;
            }
            Some(_) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    assert!(info.is_none(), "an unclosed ```{tag} block");
    blocks
}

#[test]
fn the_schemas_are_draft_2020_12_with_ids_titles_and_no_remote_reference() {
    fn refs(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    if key == "$ref" {
                        out.push(v.as_str().unwrap_or_default().to_string());
                    }
                    refs(v, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let mut listed: Vec<String> = std::fs::read_dir(root().join("schemas"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    listed.sort();
    let mut expected = SCHEMAS.map(str::to_string).to_vec();
    expected.sort();
    assert_eq!(listed, expected);
    for name in SCHEMAS {
        let s = schema(name);
        jsonschema::meta::validate(&s).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            s["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert_eq!(s["$id"], format!("{PUBLISHED}{name}"), "{name}");
        for key in ["title", "description"] {
            assert!(
                s[key].as_str().is_some_and(|t| !t.is_empty()),
                "{name}: {key}"
            );
        }
        assert_eq!(s["type"], "object", "{name}");
        assert_eq!(s["additionalProperties"], false, "{name}");
        let mut found = Vec::new();
        refs(&s, &mut found);
        for r in found {
            assert!(
                r.starts_with("#/$defs/"),
                "{name}: a $ref outside the file: {r}"
            );
        }
        // Written as `serde_json` pretty-prints it, so that a hand edit keeps one layout.
        let text = std::fs::read_to_string(root().join("schemas").join(name)).unwrap();
        assert_eq!(
            text,
            format!("{}\n", serde_json::to_string_pretty(&s).unwrap()),
            "{name}"
        );
    }
}

/// Refusals of `repromin line` that a JSON Schema cannot express, by a part of their
/// message: the spelling of the text (whitespace, key order, duplicate keys, how a number
/// is written) and the rules that compare one value with another or count a list.
const BEYOND_A_SCHEMA: [&str; 10] = [
    "whitespace outside strings",
    "entries of class",
    "duplicate key",
    "out of order",
    "must be a non-negative integer, found 1.0",
    "must be a decimal number with at most 6 fraction digits",
    "more than",
    "but tests lists",
    "but regressions.tests lists",
    "certificate.holdout.passes (",
];

/// The text after the `repromin/v1 ` prefix, decoded, when it is JSON at all.
fn line_json(line: &str) -> Option<Value> {
    serde_json::from_str(line.strip_prefix("repromin/v1 ")?).ok()
}

#[test]
fn the_documented_lines_validate_and_the_refused_ones_are_refused_where_a_schema_can_say_it() {
    let text = doc("docs/line-schema.md");
    let blocks = fenced(&text, "text ");
    let (mut valid, mut refused, mut beyond) = (0, 0, vec![0; BEYOND_A_SCHEMA.len()]);
    for (info, body) in &blocks {
        let line = body.trim_end_matches('\n');
        if info == "text valid" {
            repromin::gate::line::parse_line(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let json = line_json(line).unwrap();
            check_line(&json);
            every_object_refuses_an_unknown_key("line.schema.json", &json);
            valid += 1;
            continue;
        }
        let Some(message) = info.strip_prefix("text invalid: ") else {
            panic!("a block tagged {info}");
        };
        assert!(repromin::gate::line::parse_line(line).is_err(), "{line}");
        let Some(json) = line_json(line) else {
            // Not JSON after the prefix, or another prefix: nothing for a schema to read.
            continue;
        };
        let found = errors("line.schema.json", &json);
        match BEYOND_A_SCHEMA.iter().position(|b| message.contains(b)) {
            // The list is exact: a rule it names is one the schema lets through.
            Some(i) => {
                assert!(
                    found.is_empty(),
                    "refused by the schema too, so not beyond it ({message}): {found:?}"
                );
                beyond[i] += 1;
            }
            None => {
                assert!(
                    !found.is_empty(),
                    "repromin refuses it ({message}), the schema does not: {line}"
                );
                refused += 1;
            }
        }
    }
    assert!(valid >= 15, "{valid} valid examples");
    assert!(refused >= 25, "{refused} refusals the schema shares");
    for (rule, n) in BEYOND_A_SCHEMA.iter().zip(&beyond) {
        assert!(*n > 0, "no example is refused for `{rule}`");
    }
}

#[test]
fn every_line_the_docs_show_that_the_parser_reads_validates() {
    let mut checked = 0;
    let mut names: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| format!("docs/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.push("README.md".into());
    for name in names {
        for line in doc(&name).lines() {
            let line = line.trim();
            let Some(start) = line.find("repromin/v1 {") else {
                continue;
            };
            let line = line[start..].trim_end_matches('`');
            if repromin::gate::line::parse_line(line).is_ok() {
                check_line(&line_json(line).unwrap());
                checked += 1;
            }
        }
    }
    assert!(checked >= 17, "{checked} lines");
}

/// A JSON block of the docs, by what it is: which schema reads it.
fn schema_of(value: &Value) -> Option<&'static str> {
    let map = value.as_object()?;
    if map.contains_key("version") && map.contains_key("command") {
        Some("repo-config.schema.json")
    } else if map.contains_key("schema_version") && map.contains_key("tool") {
        Some("report.schema.json")
    } else if map.contains_key("schema_version") {
        Some("reduce-config.schema.json")
    } else {
        // A mutation spec (gate.md) has no schema of its own.
        assert!(
            map.contains_key("mutations"),
            "an unknown JSON block: {value}"
        );
        None
    }
}

#[test]
fn every_json_block_of_the_docs_validates_against_its_schema() {
    let mut seen = std::collections::BTreeMap::new();
    let mut names: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| format!("docs/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    names.push("README.md".into());
    for name in &names {
        for (info, body) in fenced(&doc(name), "json") {
            if info != "json" {
                continue;
            }
            let value: Value =
                serde_json::from_str(&body).unwrap_or_else(|e| panic!("{name}: {e}"));
            if let Some(schema) = schema_of(&value) {
                assert_valid(schema, &value, &format!("a block of {name}"));
                every_object_refuses_an_unknown_key(schema, &value);
                *seen.entry(schema).or_insert(0) += 1;
            }
        }
    }
    assert_eq!(seen.get("report.schema.json"), Some(&1), "{seen:?}");
    assert!(seen.get("repo-config.schema.json") >= Some(&3), "{seen:?}");
    assert!(
        seen.get("reduce-config.schema.json") >= Some(&4),
        "{seen:?}"
    );
}

/// The keys of the table under the heading that starts with `heading`: the first cell of
/// each row, without its backquotes.
fn table_keys(text: &str, heading: &str) -> std::collections::BTreeSet<String> {
    let at = text
        .find(&format!("\n{heading}"))
        .unwrap_or_else(|| panic!("no heading {heading}"));
    text[at + 1..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(key, _)| key.to_string())
        .collect()
}

fn property_names(schema: &Value) -> std::collections::BTreeSet<String> {
    schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn the_configuration_schemas_have_exactly_the_documented_keys() {
    let repo = schema("repo-config.schema.json");
    let text = doc("docs/repo-config.md");
    assert_eq!(property_names(&repo), table_keys(&text, "## Schema v1"));
    let reduce = schema("reduce-config.schema.json");
    let text = doc("docs/config-schema.md");
    assert_eq!(property_names(&reduce), table_keys(&text, "### Top level"));
    for section in [
        "oracle",
        "sampling",
        "runner",
        "input",
        "reduction",
        "semantic",
        "budgets",
    ] {
        assert_eq!(
            property_names(&reduce["properties"][section]),
            table_keys(&text, &format!("### `{section}`")),
            "{section}"
        );
    }
}

fn with_key(text: &str, key: &str, value: Value) -> Value {
    let mut v: Value = serde_json::from_str(text).unwrap();
    v.as_object_mut().unwrap().insert(key.to_string(), value);
    v
}

#[test]
fn the_repository_configuration_schema_refuses_what_the_gate_refuses() {
    const GOOD: &str = r#"{"version":1,"tests":["tests/**/*.py"],"command":"pytest --junitxml={report} {tests}","report":"junit"}"#;
    let name = "repo-config.schema.json";
    let good: Value = serde_json::from_str(GOOD).unwrap();
    assert_valid(name, &good, "the smallest configuration");
    assert_valid(
        name,
        &serde_json::from_str(PYTEST_CONFIG).unwrap(),
        "PYTEST_CONFIG",
    );
    let named = with_key(GOOD, "$schema", format!("{PUBLISHED}{name}").into());
    assert_valid(name, &named, "a configuration naming its schema");
    let refused = [
        with_key(GOOD, "extra", 1.into()),
        with_key(GOOD, "$schema", 1.into()),
        with_key(GOOD, "version", 2.into()),
        with_key(GOOD, "tests", serde_json::json!([])),
        with_key(GOOD, "tests", "t".into()),
        with_key(GOOD, "report", "tap".into()),
        with_key(GOOD, "command", " ".into()),
        with_key(GOOD, "timeouts", serde_json::json!({"build": 0})),
        with_key(GOOD, "timeouts", serde_json::json!({"test": 2_592_001})),
        with_key(GOOD, "timeouts", serde_json::json!({"tset": 1})),
        with_key(GOOD, "memory_mb", 10.into()),
        with_key(GOOD, "container", serde_json::json!({})),
        with_key(
            GOOD,
            "container",
            serde_json::json!({"image": "i", "pull": true}),
        ),
        with_key(
            GOOD,
            "container",
            serde_json::json!({"image": "--privileged"}),
        ),
        with_key(
            GOOD,
            "container",
            serde_json::json!({"image": "i", "pids_limit": 2}),
        ),
        with_key(
            GOOD,
            "container",
            serde_json::json!({"image": "i", "tmpfs_mb": 0}),
        ),
        with_key(GOOD, "flaky", serde_json::json!({"error_rate": 0.9})),
        with_key(GOOD, "flaky", serde_json::json!({"max_reruns": 65})),
        with_key(GOOD, "sandbox", serde_json::json!({"network": "yes"})),
        with_key(GOOD, "regressions", serde_json::json!({"all": true})),
    ];
    for value in refused {
        assert!(!errors(name, &value).is_empty(), "accepted: {value}");
    }
}

#[test]
fn the_reduce_configuration_schema_refuses_what_the_command_line_refuses() {
    const GOOD: &str = r#"{"schema_version":1,"command":["sh","-c","exit 1"]}"#;
    let name = "reduce-config.schema.json";
    assert_valid(
        name,
        &serde_json::from_str(&crate::config::document()).unwrap(),
        "the config tests' document",
    );
    let named = with_key(GOOD, "$schema", format!("{PUBLISHED}{name}").into());
    assert_valid(name, &named, "a document naming its schema");
    let section = |key: &str, value: Value| with_key(GOOD, key, value);
    let refused = [
        with_key(GOOD, "verbose", true.into()),
        with_key(GOOD, "$schema", 1.into()),
        with_key(GOOD, "schema_version", 2.into()),
        with_key(GOOD, "schema_version", "1".into()),
        with_key(GOOD, "command", serde_json::json!([])),
        with_key(GOOD, "command", serde_json::json!([""])),
        section("oracle", serde_json::json!({"exit_code": 125})),
        section("oracle", serde_json::json!({"exit_code": 256})),
        section("oracle", serde_json::json!({"signature": "  "})),
        section(
            "oracle",
            serde_json::json!({"any_failure": true, "expect": "x"}),
        ),
        section(
            "oracle",
            serde_json::json!({"process_failure": true, "exit_code": 1}),
        ),
        section("sampling", serde_json::json!({"baseline_runs": 1})),
        section("sampling", serde_json::json!({"confidence": 1})),
        section("sampling", serde_json::json!({"run_confidence": 0.8})),
        section("sampling", serde_json::json!({"holdout_runs": 2001})),
        section("runner", serde_json::json!({"cores": 2})),
        section("runner", serde_json::json!({"jobs": 0})),
        section("runner", serde_json::json!({"timeout": "soon"})),
        section("runner", serde_json::json!({"env": {"1A": "x"}})),
        section("runner", serde_json::json!({"runner": "vm"})),
        section("runner", serde_json::json!({"docker_tmpfs": "256"})),
        section("runner", serde_json::json!({"docker_cpus": 0})),
        section("runner", serde_json::json!({"memory": 1024})),
        section("runner", serde_json::json!({"memory": "lots"})),
        section("input", serde_json::json!({"ignore_names": ["a/b"]})),
        section("reduction", serde_json::json!({"passes": []})),
        section(
            "reduction",
            serde_json::json!({"passes": ["lines", "words"]}),
        ),
        section(
            "reduction",
            serde_json::json!({"passes": ["lines"], "level": "chars"}),
        ),
        section("semantic", serde_json::json!({"calls": 1001})),
        section("budgets", serde_json::json!({"max_duration": 5})),
    ];
    for value in refused {
        assert!(!errors(name, &value).is_empty(), "accepted: {value}");
    }
    // null is the default where a key may be left out, in the schema as in repromin.
    let nulls = section(
        "reduction",
        serde_json::json!({"passes": null, "level": null, "minimiser": null}),
    );
    assert_valid(name, &nulls, "nulls");
}

#[test]
fn a_real_report_validates_and_a_drifted_one_does_not() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let o = run(
        &[
            "reduce", "--level", "lines", "proj", "proj.min", "--env", "APP=1", "--", "python3",
            "run.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // `report` checks it against the schema.
    let r = report(&area.path("proj.min"));
    assert_eq!(r["execution"]["env_names"], serde_json::json!(["APP"]));
    assert!(every_object_refuses_an_unknown_key("report.schema.json", &r) > 20);
    // A field the writer drops, adds or renames, or a value outside its vocabulary, fails.
    let name = "report.schema.json";
    let mut drifted = Vec::new();
    for (path, value) in [
        ("/execution/jobs", Value::Null),
        ("/ended_by", "done".into()),
        ("/edits/0/op", "remove".into()),
        ("/source/tree_sha256_v2", "ABC".into()),
        ("/execution/trace/outcome", "maybe".into()),
        ("/oracle/mode", "learned-signature+".into()),
    ] {
        let mut v = r.clone();
        *v.pointer_mut(path).unwrap_or_else(|| panic!("{path}")) = value;
        drifted.push(v);
    }
    let mut v = r.clone();
    v["execution"]
        .as_object_mut()
        .unwrap()
        .remove("containment");
    drifted.push(v);
    let mut v = r.clone();
    v["phase_statistics"][0]["retried"] = 0.into();
    drifted.push(v);
    for v in drifted {
        assert!(!errors(name, &v).is_empty(), "accepted a drifted report");
    }
}

#[test]
fn a_configuration_naming_its_schema_runs_the_gate_as_before() {
    let (repo, _base) = crate::gate::python_base();
    let config = PYTEST_CONFIG.replacen(
        '{',
        &format!("{{\n  \"$schema\": \"{PUBLISHED}repo-config.schema.json\","),
        1,
    );
    assert_valid(
        "repo-config.schema.json",
        &serde_json::from_str(&config).unwrap(),
        "the configuration",
    );
    let named = repo.commit(&[(".github/repromin.json", &config)], "name the schema");
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
    // `gate_run` checks the line against its schema.
    let (line, table) = crate::util::gate_run(&repo, &named, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
}

#[test]
fn a_reduce_configuration_naming_its_schema_is_read_as_before() {
    let area = Area::new();
    area.write("proj", &[("a.txt", "one\ntwo\n")]);
    let named = with_key(
        r#"{"schema_version":1,"command":["sh","-c","grep -q two a.txt || exit 0; exit 3"],"oracle":{"exit_code":3}}"#,
        "$schema",
        format!("{PUBLISHED}reduce-config.schema.json").into(),
    );
    assert_valid("reduce-config.schema.json", &named, "the document");
    std::fs::write(area.path("reduce.json"), named.to_string()).unwrap();
    let o = run(
        &["doctor", "proj", "--config", "reduce.json"],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let other = with_key(&named.to_string(), "$comment", "x".into());
    std::fs::write(area.path("reduce.json"), other.to_string()).unwrap();
    let o = run(
        &["doctor", "proj", "--config", "reduce.json"],
        area.dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("$comment: unknown key"),
        "{}",
        stderr(&o)
    );
}
