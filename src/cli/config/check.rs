//! The checks of one value against its field: exact key sets, no duplicate key, typed
//! values; each refusal names the key.

use super::node::Node;
use super::schema::{Field, Kind, names};
use crate::cli::runner_args::{parse_duration, parse_size};
use crate::reduce::PassName;

/// A refusal before the file's path is attached: the key's path and the problem.
pub(super) type Refusal = (String, String);

pub(super) fn refuse(key: impl Into<String>, problem: impl Into<String>) -> Refusal {
    (key.into(), problem.into())
}

pub(super) fn expected(key: &str, what: &str, found: &Node) -> Refusal {
    refuse(key, format!("expected {what}, found {}", found.describe()))
}

pub(super) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// The first key that occurs twice in one object, anywhere in the document.
pub(super) fn find_duplicate(node: &Node, path: &str) -> Option<Refusal> {
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
pub(super) fn object<'a>(
    node: &'a Node,
    path: &str,
    known: &[&str],
) -> Result<&'a [(String, Node)], Refusal> {
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

pub(super) fn get<'a>(entries: &'a [(String, Node)], key: &str) -> Option<&'a Node> {
    entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// A checked value.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Value {
    Bool(bool),
    Int(u64),
    Signed(i64),
    Float(f64),
    Text(String),
    List(Vec<String>),
    Pairs(Vec<(String, String)>),
}

/// An array of strings; `what` says what the array holds.
pub(super) fn strings(node: &Node, path: &str, what: &str) -> Result<Vec<String>, Refusal> {
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

pub(super) fn env_name_ok(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Checks one present value against its field's type; `None` for `null` where allowed.
pub(super) fn check(field: &Field, node: &Node, path: &str) -> Result<Option<Value>, Refusal> {
    let nullable = match field.kind {
        Kind::Count { nullable, .. } | Kind::Rate { nullable } => nullable,
        Kind::ExitCode
        | Kind::Duration
        | Kind::Regex
        | Kind::Text
        | Kind::Choice(_)
        | Kind::Passes
        | Kind::Size
        | Kind::Memory
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
            let known = names::<PassName>();
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
            Node::String(s) => match parse_size(s) {
                Ok(_) => Value::Text(s.clone()),
                Err(e) => return Err(refuse(path, e.to_string())),
            },
            other => return Err(expected(path, "a size such as \"256m\" or \"2g\"", other)),
        },
        Kind::Memory => {
            let what = "a memory size such as \"512M\" or \"1.5GiB\", or a number of bytes";
            let text = match node {
                Node::String(s) => s.clone(),
                Node::Number(n) => match n.as_u64() {
                    Some(v) => v.to_string(),
                    None => return Err(expected(path, what, node)),
                },
                other => return Err(expected(path, what, other)),
            };
            match crate::runner::parse_memory_size(&text) {
                Ok(_) => Value::Text(text),
                Err(e) => return Err(refuse(path, e.to_string())),
            }
        }
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
