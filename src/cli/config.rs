//! `--config FILE` for `reduce` and `doctor`: a `schema_version: 1` JSON document that owns
//! every semantic option (the command, oracle, sampling, runner, input selection, passes and
//! budgets), documented in `docs/config-schema.md`.
//!
//! The file is read once, before the options are turned into [`crate::reduce::ReduceOptions`]:
//! [`expand`] checks it (exact key sets, no duplicate key anywhere, typed values, the
//! cross-field rules) and expands every field into the explicit flag it stands for. The
//! expanded command line is parsed by clap and validated like a typed one, so there is one
//! path downstream and reports record the effective values, never the file's path or text.
//! There is no precedence: a semantic option on the command line beside `--config` is
//! refused by name. Placement options (SOURCE, OUTPUT, session placement and resumption) and
//! output controls stay on the command line. `doctor` validates the whole document but
//! expands only what its preflight uses (everything but the budgets).

use std::ffi::OsString;
use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use clap::parser::ValueSource;

use super::args::{ContainerCliArg, LevelArg, MinimiserArg, PassArg, RunnerArg, parse_duration};

/// The version of the document this repromin reads.
pub(super) const SCHEMA_VERSION: u64 = 1;

/// The largest configuration file read, in bytes.
pub(super) const MAX_BYTES: u64 = 1024 * 1024;

/// Arguments of `reduce` and `doctor` that are not semantic options: where the tree comes
/// from and goes, where a session lives and whether it resumes, and what is shown. They stay
/// on the command line beside `--config`; every other argument is owned by the file.
const PLACEMENT: &[&str] = &[
    "source",
    "output",
    "config",
    "session",
    "resume",
    "no_progress",
];

/// Why a configuration file, or its combination with the command line, is refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be opened or read.
    #[error("cannot read the configuration file `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is over `MAX_BYTES`.
    #[error("the configuration file `{}` is over {MAX_BYTES} bytes", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// Not JSON.
    #[error("the configuration file `{}` is not valid JSON: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A key or value the schema refuses: unknown, duplicate, missing, mistyped, out of
    /// range, another version, or a cross-field rule broken.
    #[error("the configuration file `{}`: {key}: {problem}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key's path, e.g. `sampling.candidate_runs`.
        key: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A semantic option was given on the command line beside `--config`.
    #[error(
        "--config cannot be combined with {option}: the configuration file owns every semantic \
         option (only SOURCE, OUTPUT, session placement and output controls stay on the \
         command line)"
    )]
    WithOption {
        /// The option, as typed (`--jobs`, or `-- CMD` for the command).
        option: String,
    },
    /// The options expanded from the file were refused by the command-line parser (a value
    /// the checks here let through).
    #[error(
        "the options expanded from the configuration file `{}` were refused: {message}",
        path.display()
    )]
    Expansion {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

/// The type of a field's value, and how it expands.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A boolean, default `false`; `true` adds the flag.
    Switch,
    /// A boolean, default `true`; `false` adds the flag.
    InverseSwitch,
    /// An integer in `min..=max`; `null` allowed when `nullable`.
    Count { min: u64, max: u64, nullable: bool },
    /// An exit status 0-255 other than 125, or `null`.
    ExitCode,
    /// A number strictly between 0 and 1; `null` allowed when `nullable`.
    Rate { nullable: bool },
    /// A duration string (`30s`, `500ms`, `2m`, `1h`), or `null`.
    Duration,
    /// A regular expression, or `null`.
    Regex,
    /// A string that is not blank, or `null`.
    Text,
    /// One of a clap value enum's names, or `null`.
    Choice(fn() -> Vec<String>),
    /// A non-empty array of pass names, or `null`.
    Passes,
    /// An array of basenames.
    Basenames,
    /// An array of paths relative to SOURCE.
    RelPaths,
    /// An array of file paths.
    Files,
    /// An object of `NAME: VALUE` strings.
    Env,
    /// A size with a unit (`256m`, `2g`), or `null`.
    Size,
    /// A number of CPUs from 0.01 to 1024, or `null`.
    Cpus,
}

/// One key of the schema: where it lives, the flag it expands to, its type.
#[derive(Clone, Copy, Debug)]
struct Field {
    section: &'static str,
    key: &'static str,
    flag: &'static str,
    kind: Kind,
    /// Whether `doctor` uses it (it validates every field either way).
    doctor: bool,
}

const fn field(section: &'static str, key: &'static str, flag: &'static str, kind: Kind) -> Field {
    Field {
        section,
        key,
        flag,
        kind,
        doctor: true,
    }
}

/// The names a clap value enum accepts.
fn names<T: ValueEnum>() -> Vec<String> {
    T::value_variants()
        .iter()
        .filter_map(ValueEnum::to_possible_value)
        .map(|p| p.get_name().to_string())
        .collect()
}

fn level_names() -> Vec<String> {
    names::<LevelArg>()
}

fn minimiser_names() -> Vec<String> {
    names::<MinimiserArg>()
}

fn runner_names() -> Vec<String> {
    names::<RunnerArg>()
}

fn container_cli_names() -> Vec<String> {
    names::<ContainerCliArg>()
}

/// The sections, in document order.
const SECTIONS: &[&str] = &[
    "oracle",
    "sampling",
    "runner",
    "input",
    "reduction",
    "semantic",
    "budgets",
];

/// Every key of every section, in document order.
const FIELDS: &[Field] = &[
    field("oracle", "expect", "--expect", Kind::Regex),
    field("oracle", "signature", "--signature", Kind::Text),
    field("oracle", "exit_code", "--exit-code", Kind::ExitCode),
    field(
        "oracle",
        "process_failure",
        "--process-failure",
        Kind::Switch,
    ),
    field("oracle", "any_failure", "--any-failure", Kind::Switch),
    field("oracle", "allow_trivial", "--allow-trivial", Kind::Switch),
    field(
        "sampling",
        "baseline_runs",
        "--baseline-runs",
        Kind::Count {
            min: 2,
            max: u64::MAX,
            nullable: false,
        },
    ),
    field(
        "sampling",
        "min_baseline_passes",
        "--min-baseline-passes",
        Kind::Count {
            min: 1,
            max: u64::MAX,
            nullable: true,
        },
    ),
    field(
        "sampling",
        "min_baseline_rate",
        "--min-baseline-rate",
        Kind::Rate { nullable: true },
    ),
    field(
        "sampling",
        "candidate_runs",
        "--candidate-runs",
        Kind::Count {
            min: 1,
            max: u64::MAX,
            nullable: false,
        },
    ),
    field(
        "sampling",
        "min_candidate_passes",
        "--min-candidate-passes",
        Kind::Count {
            min: 1,
            max: u64::MAX,
            nullable: true,
        },
    ),
    field(
        "sampling",
        "min_candidate_rate",
        "--min-candidate-rate",
        Kind::Rate { nullable: true },
    ),
    field(
        "sampling",
        "confidence",
        "--confidence",
        Kind::Rate { nullable: false },
    ),
    field(
        "sampling",
        "run_confidence",
        "--run-confidence",
        Kind::Rate { nullable: true },
    ),
    field(
        "sampling",
        "holdout_runs",
        "--holdout-runs",
        Kind::Count {
            min: 0,
            max: u64::MAX,
            nullable: false,
        },
    ),
    field(
        "sampling",
        "min_holdout_rate",
        "--min-holdout-rate",
        Kind::Rate { nullable: false },
    ),
    field(
        "sampling",
        "holdout_confidence",
        "--holdout-confidence",
        Kind::Rate { nullable: false },
    ),
    field("runner", "timeout", "--timeout", Kind::Duration),
    field(
        "runner",
        "jobs",
        "--jobs",
        Kind::Count {
            min: 1,
            max: crate::reduce::MAX_JOBS as u64,
            nullable: true,
        },
    ),
    field("runner", "env", "--env", Kind::Env),
    field("runner", "overlay", "--no-overlay", Kind::InverseSwitch),
    field("runner", "runner", "--runner", Kind::Choice(runner_names)),
    field("runner", "image", "--image", Kind::Text),
    field(
        "runner",
        "container_cli",
        "--container-cli",
        Kind::Choice(container_cli_names),
    ),
    field("runner", "docker_network", "--docker-network", Kind::Switch),
    field(
        "runner",
        "docker_pids_limit",
        "--docker-pids-limit",
        Kind::Count {
            min: 8,
            max: 4_194_304,
            nullable: true,
        },
    ),
    field("runner", "docker_tmpfs", "--docker-tmpfs", Kind::Size),
    field("runner", "docker_cpus", "--docker-cpus", Kind::Cpus),
    field("runner", "docker_memory", "--docker-memory", Kind::Size),
    field(
        "runner",
        "docker_workspace_limit",
        "--docker-workspace-limit",
        Kind::Size,
    ),
    field("input", "ignore_names", "--ignore", Kind::Basenames),
    field("input", "ignore_paths", "--ignore-path", Kind::RelPaths),
    field("input", "keep_paths", "--keep", Kind::RelPaths),
    field("input", "gitignore", "--gitignore", Kind::Switch),
    field("input", "gitignore_files", "--gitignore-file", Kind::Files),
    field(
        "input",
        "gitignore_recursive",
        "--gitignore-recursive",
        Kind::Switch,
    ),
    field("reduction", "passes", "--passes", Kind::Passes),
    field("reduction", "level", "--level", Kind::Choice(level_names)),
    field(
        "reduction",
        "minimiser",
        "--minimiser",
        Kind::Choice(minimiser_names),
    ),
    field(
        "reduction",
        "syntax_guard",
        "--no-syntax-guard",
        Kind::InverseSwitch,
    ),
    field("reduction", "settle", "--no-settle", Kind::InverseSwitch),
    field("reduction", "stubs", "--no-stubs", Kind::InverseSwitch),
    field("reduction", "trace", "--no-trace", Kind::InverseSwitch),
    field("semantic", "endpoint", "--semantic-endpoint", Kind::Text),
    field("semantic", "model", "--semantic-model", Kind::Text),
    field("semantic", "timeout", "--semantic-timeout", Kind::Duration),
    field(
        "semantic",
        "calls",
        "--semantic-calls",
        Kind::Count {
            min: 1,
            max: 1000,
            nullable: true,
        },
    ),
    Field {
        doctor: false,
        ..field(
            "budgets",
            "max_attempts",
            "--max-attempts",
            Kind::Count {
                min: 0,
                max: u64::MAX,
                nullable: true,
            },
        )
    },
    Field {
        doctor: false,
        ..field("budgets", "max_duration", "--max-duration", Kind::Duration)
    },
];

/// A JSON value that keeps every key of an object, duplicates included, in order.
#[derive(Debug)]
enum Node {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl<'de> serde::Deserialize<'de> for Node {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> serde::de::Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Node, E> {
        serde_json::Number::from_f64(v)
            .map(Node::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::String(v))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Node>()? {
            entries.push((key, value));
        }
        Ok(Node::Object(entries))
    }
}

impl Node {
    /// The value in words, for "expected …, found …".
    fn describe(&self) -> String {
        match self {
            Node::Null => "null".into(),
            Node::Bool(b) => b.to_string(),
            Node::Number(n) => n.to_string(),
            Node::String(s) if s.chars().count() > 40 => {
                let head: String = s.chars().take(40).collect();
                format!("the string \"{head}…\"")
            }
            Node::String(s) => format!("the string {s:?}"),
            Node::Array(_) => "an array".into(),
            Node::Object(_) => "an object".into(),
        }
    }
}

/// A refusal before the file's path is attached: the key's path and the problem.
type Refusal = (String, String);

fn refuse(key: impl Into<String>, problem: impl Into<String>) -> Refusal {
    (key.into(), problem.into())
}

fn expected(key: &str, what: &str, found: &Node) -> Refusal {
    refuse(key, format!("expected {what}, found {}", found.describe()))
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// The first key that occurs twice in one object, anywhere in the document.
fn find_duplicate(node: &Node, path: &str) -> Option<Refusal> {
    match node {
        Node::Object(entries) => {
            for (i, (key, value)) in entries.iter().enumerate() {
                if entries[..i].iter().any(|(k, _)| k == key) {
                    return Some(refuse(
                        join(path, key),
                        "duplicate key (each key may appear once)",
                    ));
                }
                if let Some(found) = find_duplicate(value, &join(path, key)) {
                    return Some(found);
                }
            }
            None
        }
        Node::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| find_duplicate(item, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// The entries of an object whose keys must all be in `known`.
fn object<'a>(node: &'a Node, path: &str, known: &[&str]) -> Result<&'a [(String, Node)], Refusal> {
    let Node::Object(entries) = node else {
        return Err(expected(
            if path.is_empty() { "(document)" } else { path },
            "an object",
            node,
        ));
    };
    if let Some((key, _)) = entries.iter().find(|(k, _)| !known.contains(&k.as_str())) {
        return Err(refuse(
            join(path, key),
            format!("unknown key (known here: {})", known.join(", ")),
        ));
    }
    Ok(entries)
}

fn get<'a>(entries: &'a [(String, Node)], key: &str) -> Option<&'a Node> {
    entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// A checked value.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Bool(bool),
    Int(u64),
    Signed(i64),
    Float(f64),
    Text(String),
    List(Vec<String>),
    Pairs(Vec<(String, String)>),
}

/// An array of strings; `what` says what the array holds.
fn strings(node: &Node, path: &str, what: &str) -> Result<Vec<String>, Refusal> {
    let Node::Array(items) = node else {
        return Err(expected(path, &format!("an array of {what}"), node));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Node::String(s) => Ok(s.clone()),
            other => Err(expected(&format!("{path}[{i}]"), "a string", other)),
        })
        .collect()
}

fn env_name_ok(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Checks one present value against its field's type; `None` for `null` where allowed.
fn check(field: &Field, node: &Node, path: &str) -> Result<Option<Value>, Refusal> {
    let nullable = match field.kind {
        Kind::Count { nullable, .. } | Kind::Rate { nullable } => nullable,
        Kind::ExitCode
        | Kind::Duration
        | Kind::Regex
        | Kind::Text
        | Kind::Choice(_)
        | Kind::Passes
        | Kind::Size
        | Kind::Cpus => true,
        Kind::Switch
        | Kind::InverseSwitch
        | Kind::Basenames
        | Kind::RelPaths
        | Kind::Files
        | Kind::Env => false,
    };
    if matches!(node, Node::Null) && nullable {
        return Ok(None);
    }
    let value = match field.kind {
        Kind::Switch | Kind::InverseSwitch => match node {
            Node::Bool(b) => Value::Bool(*b),
            other => return Err(expected(path, "true or false", other)),
        },
        Kind::Count { min, max, .. } => {
            let what = if max == u64::MAX {
                format!("an integer of at least {min}")
            } else {
                format!("an integer from {min} to {max}")
            };
            match node {
                Node::Number(n) => match n.as_u64() {
                    Some(v) if (min..=max).contains(&v) => Value::Int(v),
                    _ => return Err(expected(path, &what, node)),
                },
                other => return Err(expected(path, &what, other)),
            }
        }
        Kind::ExitCode => {
            let what = "an exit status from 0 to 255";
            match node {
                Node::Number(n) => match n.as_i64() {
                    Some(125) => {
                        return Err(refuse(
                            path,
                            "125 is not allowed: exit status 125 means \"cannot tell\"",
                        ));
                    }
                    Some(v) if (0..=255).contains(&v) => Value::Signed(v),
                    _ => return Err(expected(path, what, node)),
                },
                other => return Err(expected(path, what, other)),
            }
        }
        Kind::Rate { .. } => {
            let what = "a number between 0 and 1, exclusive";
            match node {
                Node::Number(n) => match n.as_f64() {
                    Some(v) if v > 0.0 && v < 1.0 => Value::Float(v),
                    _ => return Err(expected(path, what, node)),
                },
                other => return Err(expected(path, what, other)),
            }
        }
        Kind::Duration => {
            let what = "a duration such as \"30s\", \"500ms\", \"2m\" or \"1h\"";
            match node {
                Node::String(s) => match parse_duration(s) {
                    Ok(_) => Value::Text(s.clone()),
                    Err(e) => return Err(refuse(path, e.to_string())),
                },
                other => return Err(expected(path, what, other)),
            }
        }
        Kind::Regex => match node {
            Node::String(s) => match regex::Regex::new(s) {
                Ok(_) => Value::Text(s.clone()),
                Err(e) => {
                    return Err(refuse(path, format!("not a valid regular expression: {e}")));
                }
            },
            other => return Err(expected(path, "a regular expression (a string)", other)),
        },
        Kind::Text => match node {
            Node::String(s) if !s.trim().is_empty() => Value::Text(s.clone()),
            other => return Err(expected(path, "a string that is not blank", other)),
        },
        Kind::Choice(values) => {
            let values = values();
            let what = format!("one of \"{}\"", values.join("\", \""));
            match node {
                Node::String(s) if values.contains(s) => Value::Text(s.clone()),
                other => return Err(expected(path, &what, other)),
            }
        }
        Kind::Passes => {
            let known = names::<PassArg>();
            let what = format!("a pass name (\"{}\")", known.join("\", \""));
            let list = strings(node, path, "pass names")?;
            if list.is_empty() {
                return Err(refuse(
                    path,
                    "expected at least one pass, found an empty array",
                ));
            }
            if let Some(i) = list.iter().position(|p| !known.contains(p)) {
                return Err(refuse(
                    format!("{path}[{i}]"),
                    format!("expected {what}, found the string {:?}", list[i]),
                ));
            }
            Value::List(list)
        }
        Kind::Basenames => {
            let list = strings(node, path, "basenames (strings)")?;
            if let Some(i) = list.iter().position(|n| n.is_empty() || n.contains('/')) {
                return Err(refuse(
                    format!("{path}[{i}]"),
                    format!(
                        "expected a basename (no `/`; use input.ignore_paths for paths), found {:?}",
                        list[i]
                    ),
                ));
            }
            Value::List(list)
        }
        Kind::RelPaths => {
            let list = strings(node, path, "paths relative to SOURCE (strings)")?;
            for (i, item) in list.iter().enumerate() {
                if let Err(e) = crate::tree::parse_rel_path(item) {
                    return Err(refuse(format!("{path}[{i}]"), e.to_string()));
                }
            }
            Value::List(list)
        }
        Kind::Files => {
            let list = strings(node, path, "file paths (strings)")?;
            if let Some(i) = list.iter().position(String::is_empty) {
                return Err(refuse(
                    format!("{path}[{i}]"),
                    "expected a file path, found an empty string",
                ));
            }
            Value::List(list)
        }
        Kind::Size => match node {
            Node::String(s) => match super::args::parse_size(s) {
                Ok(_) => Value::Text(s.clone()),
                Err(e) => return Err(refuse(path, e)),
            },
            other => return Err(expected(path, "a size such as \"256m\" or \"2g\"", other)),
        },
        Kind::Cpus => {
            let what = "a number of CPUs from 0.01 to 1024";
            match node {
                Node::Number(n) => match n.as_f64() {
                    Some(v) if (0.01..=1024.0).contains(&v) => Value::Float(v),
                    _ => return Err(expected(path, what, node)),
                },
                other => return Err(expected(path, what, other)),
            }
        }
        Kind::Env => {
            let Node::Object(entries) = node else {
                return Err(expected(path, "an object of NAME: \"VALUE\" strings", node));
            };
            let mut pairs = Vec::new();
            for (name, value) in entries {
                let at = join(path, name);
                if !env_name_ok(name) {
                    return Err(refuse(
                        at,
                        "a variable name must match [A-Za-z_][A-Za-z0-9_]*",
                    ));
                }
                match value {
                    Node::String(v) => pairs.push((name.clone(), v.clone())),
                    other => return Err(expected(&at, "a string", other)),
                }
            }
            Value::Pairs(pairs)
        }
    };
    Ok(Some(value))
}

/// A checked document: the command and each field given a value, in [`FIELDS`] order.
#[derive(Debug)]
struct Document {
    command: Vec<String>,
    values: Vec<(&'static Field, Value)>,
}

impl Document {
    fn value(&self, section: &str, key: &str) -> Option<&Value> {
        self.values
            .iter()
            .find(|(f, _)| f.section == section && f.key == key)
            .map(|(_, v)| v)
    }

    fn is_true(&self, section: &str, key: &str) -> bool {
        self.value(section, key) == Some(&Value::Bool(true))
    }

    fn count(&self, section: &str, key: &str) -> Option<u64> {
        match self.value(section, key) {
            Some(Value::Int(n)) => Some(*n),
            _ => None,
        }
    }

    /// The explicit flags the document stands for; `doctor` leaves out what its preflight
    /// does not use.
    fn tokens(&self, for_doctor: bool) -> Vec<String> {
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
fn parse_document(text: &str) -> Result<Document, ParseFailure> {
    let root: Node = serde_json::from_str(text).map_err(|e| ParseFailure::Syntax(e.to_string()))?;
    check_document(&root).map_err(ParseFailure::Invalid)
}

enum ParseFailure {
    Syntax(String),
    Invalid(Refusal),
}

fn check_document(root: &Node) -> Result<Document, Refusal> {
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
    let mut known = vec!["schema_version", "command"];
    known.extend_from_slice(SECTIONS);
    let top = object(root, "", &known)?;
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
fn cross_field(doc: &Document) -> Result<(), Refusal> {
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

/// Reads `path` once, up to [`MAX_BYTES`] (a pipe such as `<(…)` works too).
fn read(path: &Path) -> Result<String, ConfigError> {
    let read_error = |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    String::from_utf8(bytes).map_err(|_| ConfigError::Syntax {
        path: path.to_path_buf(),
        message: "it is not UTF-8".into(),
    })
}

/// Checks a configuration document given as text; `path` is only for messages.
fn parse_text(path: &Path, text: &str) -> Result<Document, ConfigError> {
    parse_document(text).map_err(|failure| match failure {
        ParseFailure::Syntax(message) => ConfigError::Syntax {
            path: path.to_path_buf(),
            message,
        },
        ParseFailure::Invalid((key, problem)) => ConfigError::Invalid {
            path: path.to_path_buf(),
            key,
            problem,
        },
    })
}

/// When the `reduce` or `doctor` of `matches` has `--config FILE`: refuses a semantic
/// option beside it, reads and checks the file, and returns `argv` with the file's options
/// expanded into explicit flags and its command after `--`. `None` without `--config`.
///
/// # Errors
/// A [`ConfigError`] naming the option, the file or the key.
pub(super) fn expand(
    argv: &[OsString],
    command: &clap::Command,
    matches: &clap::ArgMatches,
) -> Result<Option<Vec<OsString>>, ConfigError> {
    let Some((name, sub)) = matches.subcommand() else {
        return Ok(None);
    };
    if name != "reduce" && name != "doctor" {
        return Ok(None);
    }
    let Some(path) = sub.get_one::<PathBuf>("config") else {
        return Ok(None);
    };
    if let Some(definition) = command.find_subcommand(name) {
        for arg in definition.get_arguments() {
            let id = arg.get_id().as_str();
            if PLACEMENT.contains(&id) || sub.value_source(id) != Some(ValueSource::CommandLine) {
                continue;
            }
            let option = match arg.get_long() {
                Some(long) => format!("--{long}"),
                None if arg.is_last_set() => {
                    "`-- CMD` (the command is the file's `command`)".into()
                }
                None => arg.get_id().to_string(),
            };
            return Err(ConfigError::WithOption { option });
        }
    }
    let text = read(path)?;
    let doc = parse_text(path, &text)?;
    // The subcommand is the first argument after the program: `repromin` has no options of
    // its own that take a value.
    let at = argv
        .iter()
        .skip(1)
        .position(|a| a == name)
        .map_or(argv.len(), |i| i + 2);
    let mut out: Vec<OsString> = argv[..at].to_vec();
    out.extend(doc.tokens(name == "doctor").into_iter().map(OsString::from));
    out.extend_from_slice(&argv[at..]);
    // A bare `--` with nothing after it (the command is not on the command line) already
    // ends the options.
    if out.last().is_none_or(|last| last != "--") {
        out.push("--".into());
    }
    out.extend(doc.command.iter().map(OsString::from));
    Ok(Some(out))
}

/// For an error of a run whose options came from a configuration file: the keys of the
/// flags its message names, e.g. `--min-candidate-rate is sampling.min_candidate_rate`.
pub(super) fn keys_named_in(message: &str) -> Option<String> {
    let mut found: Vec<String> = Vec::new();
    for field in FIELDS {
        let named = message.match_indices(field.flag).any(|(at, _)| {
            let after = message[at + field.flag.len()..].chars().next();
            after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-'))
        });
        if named {
            found.push(format!("{} is {}.{}", field.flag, field.section, field.key));
        }
    }
    if found.is_empty() {
        None
    } else {
        Some(format!(
            "hint: these options come from the configuration file: {}",
            found.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests;
