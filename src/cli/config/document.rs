//! A whole document checked (the command, every section, the cross-field rules) into the
//! explicit flags it stands for.

use super::check::{
    Refusal, Value, check, expected, find_duplicate, get, join, object, refuse, strings,
};
use super::node::Node;
use super::schema::{FIELDS, Field, Kind, SCHEMA_VERSION, SECTIONS};

/// A checked document: the command and each field given a value, in [`FIELDS`] order.
#[derive(Debug)]
pub(super) struct Document {
    pub(super) command: Vec<String>,
    pub(super) values: Vec<(&'static Field, Value)>,
}

impl Document {
    pub(super) fn value(&self, section: &str, key: &str) -> Option<&Value> {
        self.values
            .iter()
            .find(|(f, _)| f.section == section && f.key == key)
            .map(|(_, v)| v)
    }

    pub(super) fn is_true(&self, section: &str, key: &str) -> bool {
        self.value(section, key) == Some(&Value::Bool(true))
    }

    pub(super) fn count(&self, section: &str, key: &str) -> Option<u64> {
        match self.value(section, key) {
            Some(Value::Int(n)) => Some(*n),
            _ => None,
        }
    }

    /// The explicit flags the document stands for; `doctor` leaves out what its preflight
    /// does not use.
    pub(super) fn tokens(&self, for_doctor: bool) -> Vec<String> {
        let mut out = Vec::new();
        for (field, value) in &self.values {
            if for_doctor && !field.doctor {
                continue;
            }
            let flag = field.flag;
            match (field.kind, value) {
                (Kind::Switch, Value::Bool(true)) | (Kind::InverseSwitch, Value::Bool(false)) => {
                    out.push(flag.to_string());
                }
                (_, Value::Bool(_)) => {}
                (_, Value::Int(n)) => out.push(format!("{flag}={n}")),
                (_, Value::Signed(n)) => out.push(format!("{flag}={n}")),
                (_, Value::Float(x)) => out.push(format!("{flag}={x}")),
                (_, Value::Text(s)) => out.push(format!("{flag}={s}")),
                (Kind::Passes, Value::List(list)) => {
                    out.push(format!("{flag}={}", list.join(",")));
                }
                (_, Value::List(list)) => out.extend(list.iter().map(|s| format!("{flag}={s}"))),
                (_, Value::Pairs(pairs)) => {
                    out.extend(pairs.iter().map(|(n, v)| format!("{flag}={n}={v}")));
                }
            }
        }
        out
    }
}

/// Checks a whole document.
pub(super) fn parse_document(text: &str) -> Result<Document, ParseFailure> {
    let root: Node = serde_json::from_str(text).map_err(|e| ParseFailure::Syntax(e.to_string()))?;
    check_document(&root).map_err(ParseFailure::Invalid)
}

pub(super) enum ParseFailure {
    Syntax(String),
    Invalid(Refusal),
}

pub(super) fn check_document(root: &Node) -> Result<Document, Refusal> {
    if let Some(dup) = find_duplicate(root, "") {
        return Err(dup);
    }
    let Node::Object(top) = root else {
        return Err(expected("(document)", "an object", root));
    };
    // The version first: a document of another version is refused as such, not for the
    // keys this version does not know.
    match get(top, "schema_version") {
        None => {
            return Err(refuse(
                "schema_version",
                format!("missing (this repromin reads schema_version {SCHEMA_VERSION})"),
            ));
        }
        Some(Node::Number(n)) if n.as_u64() == Some(SCHEMA_VERSION) => {}
        Some(Node::Number(n)) => {
            return Err(refuse(
                "schema_version",
                format!("unsupported version {n} (this repromin reads version {SCHEMA_VERSION})"),
            ));
        }
        Some(other) => return Err(expected("schema_version", "the integer 1", other)),
    }
    // `$schema` names the document's JSON Schema for editors; repromin reads nothing from it.
    let mut known = vec!["$schema", "schema_version", "command"];
    known.extend_from_slice(SECTIONS);
    let top = object(root, "", &known)?;
    if let Some(node) = get(top, "$schema")
        && !matches!(node, Node::String(_))
    {
        return Err(expected(
            "$schema",
            "a string (the URL or path of a JSON Schema)",
            node,
        ));
    }
    let command = match get(top, "command") {
        None => {
            return Err(refuse(
                "command",
                "missing (the command to run, as an argv array)",
            ));
        }
        Some(node) => strings(node, "command", "strings (argv)")?,
    };
    match command.first() {
        None => {
            return Err(refuse(
                "command",
                "expected at least one element, found an empty array",
            ));
        }
        Some(program) if program.is_empty() => {
            return Err(refuse("command[0]", "the program is an empty string"));
        }
        Some(_) => {}
    }
    let mut values = Vec::new();
    for section in SECTIONS {
        let Some(node) = get(top, section) else {
            continue;
        };
        let keys: Vec<&str> = FIELDS
            .iter()
            .filter(|f| f.section == *section)
            .map(|f| f.key)
            .collect();
        let entries = object(node, section, &keys)?;
        for field in FIELDS.iter().filter(|f| f.section == *section) {
            if let Some(node) = get(entries, field.key)
                && let Some(value) = check(field, node, &join(section, field.key))?
            {
                values.push((field, value));
            }
        }
    }
    let doc = Document { command, values };
    cross_field(&doc)?;
    Ok(doc)
}

/// The rules between fields (the same ones the flags have).
pub(super) fn cross_field(doc: &Document) -> Result<(), Refusal> {
    let given = |section: &str, key: &str| doc.value(section, key).is_some();
    if doc.is_true("oracle", "any_failure") {
        for other in ["expect", "signature", "exit_code"] {
            if given("oracle", other) {
                return Err(refuse(
                    "oracle.any_failure",
                    format!("cannot be combined with oracle.{other}"),
                ));
            }
        }
        if doc.is_true("oracle", "process_failure") {
            return Err(refuse(
                "oracle.any_failure",
                "cannot be combined with oracle.process_failure",
            ));
        }
    }
    if doc.is_true("oracle", "process_failure") && given("oracle", "exit_code") {
        return Err(refuse(
            "oracle.process_failure",
            "cannot be combined with oracle.exit_code",
        ));
    }
    if given("reduction", "passes") && given("reduction", "level") {
        return Err(refuse(
            "reduction.level",
            "cannot be combined with reduction.passes (give one of them)",
        ));
    }
    let baseline_runs = doc.count("sampling", "baseline_runs").unwrap_or(2);
    if let Some(k) = doc.count("sampling", "min_baseline_passes")
        && k > baseline_runs
    {
        return Err(refuse(
            "sampling.min_baseline_passes",
            format!("{k} is more than sampling.baseline_runs ({baseline_runs})"),
        ));
    }
    let candidate_runs = doc.count("sampling", "candidate_runs").unwrap_or(1);
    if let Some(k) = doc.count("sampling", "min_candidate_passes")
        && k > candidate_runs
    {
        return Err(refuse(
            "sampling.min_candidate_passes",
            format!("{k} is more than sampling.candidate_runs ({candidate_runs})"),
        ));
    }
    if given("sampling", "run_confidence") && !given("sampling", "min_candidate_rate") {
        return Err(refuse(
            "sampling.run_confidence",
            "needs sampling.min_candidate_rate",
        ));
    }
    Ok(())
}
