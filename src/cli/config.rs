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
use std::io::Read as _;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;

mod check;
mod document;
mod node;
mod schema;

use document::{Document, ParseFailure, parse_document};
use schema::FIELDS;

/// The largest configuration file read, in bytes.
pub(super) const MAX_BYTES: u64 = 1024 * 1024;

/// Arguments of `reduce` and `doctor` that are not semantic options: where the tree comes
/// from and goes, where a session lives and whether it resumes, what is shown, and the
/// credentials for a remote cluster (a header may carry a key, which does not belong in a
/// file that tends to be committed, and the authority file goes with it). They stay on the
/// command line beside `--config`; every other argument is owned by the file.
const PLACEMENT: &[&str] = &[
    "source",
    "output",
    "config",
    "session",
    "resume",
    "no_progress",
    "remote_ca",
    "remote_header",
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
