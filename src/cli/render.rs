//! Errors as the user sees them: the exit code of each typed error, by one exhaustive
//! `match` per error type (the codes are documented in [`crate::exit_code`]), and the text
//! printed for it, with its causes and a hint where one helps.

use super::config::ConfigError;
use super::generate::ManError;
use crate::console::Console;
use crate::demo::DemoError;
use crate::exit_code::Exit;
use crate::oracle::OracleError;
use crate::reduce::ReduceError;
use crate::remote::RemoteError;
use crate::runner::RunnerError;
use crate::tree::TreeError;

/// The exit code for an error of `reduce` or `doctor`.
pub fn exit_for(err: &ReduceError) -> Exit {
    match err {
        ReduceError::Tree(err) => tree_exit(err),
        ReduceError::Runner(err) => runner_exit(err),
        ReduceError::Oracle(err) => oracle_exit(err),
        ReduceError::Invalid(_) => Exit::Usage,
        ReduceError::OutputExists(_)
        | ReduceError::OutputNotOurs { .. }
        | ReduceError::SidecarNotOurs { .. } => Exit::OutputExists,
        ReduceError::ConfidenceSpent { .. } | ReduceError::ConfidenceTooLow { .. } => {
            Exit::ConfidenceSpent
        }
        ReduceError::Report(_) => Exit::Error,
        ReduceError::Trivial => Exit::Trivial,
        ReduceError::BaselineOverMemory { .. } => Exit::NotFailing,
        ReduceError::Unfaithful { .. } | ReduceError::Internal(_) => Exit::Error,
        ReduceError::FinalNotReproducing { .. } => Exit::FinalNotReproducing,
        ReduceError::HoldoutPlan(_) | ReduceError::HoldoutEvaluation(_) => Exit::HoldoutFailed,
        ReduceError::Interrupted | ReduceError::SessionInterrupted => Exit::Interrupted,
        ReduceError::Session(err) => session_exit(err),
        ReduceError::Container(err) => container_exit(err),
        ReduceError::Remote(err) => remote_exit(err),
    }
}

/// The exit code for a container runner that cannot be used.
fn container_exit(err: &crate::container::ContainerError) -> Exit {
    use crate::container::ContainerError;
    match err {
        ContainerError::Options(_) => Exit::Usage,
        ContainerError::NoCli { .. }
        | ContainerError::NoEngine { .. }
        | ContainerError::NoImage { .. }
        | ContainerError::BadImageId { .. }
        | ContainerError::Owner(_) => Exit::Error,
    }
}

/// The exit code for a refused `--config` file or its combination with the command line.
pub fn config_exit(err: &ConfigError) -> Exit {
    match err {
        ConfigError::Read { .. } => Exit::Io,
        ConfigError::TooLarge { .. }
        | ConfigError::Syntax { .. }
        | ConfigError::Invalid { .. }
        | ConfigError::WithOption { .. }
        | ConfigError::Expansion { .. } => Exit::Usage,
    }
}

/// Prints a refused `--config` file or combination, with its causes.
pub(crate) fn render_config_error(console: &Console, err: &ConfigError) {
    let mut text = format!("error: {}", with_causes(err));
    if let ConfigError::Invalid { .. } | ConfigError::Syntax { .. } = err {
        text.push_str(
            "

hint: docs/config-schema.md lists every key, its type and its default",
        );
    }
    console.err(&text);
}

/// The exit code for an error of `demo`.
pub fn demo_exit(err: &DemoError) -> Exit {
    match err {
        DemoError::Reduce(err) => exit_for(err),
        DemoError::Tree(err) => tree_exit(err),
        DemoError::GitMissing(_) => Exit::Io,
        DemoError::Git { .. } => Exit::Usage,
    }
}

/// The exit code for a man page of `man` that could not be rendered or written.
pub fn man_exit(err: &ManError) -> Exit {
    match err {
        ManError::Render { .. } => Exit::Error,
        ManError::CreateDir { .. } | ManError::Write { .. } => Exit::Io,
    }
}

fn tree_exit(err: &TreeError) -> Exit {
    match err {
        TreeError::Io { .. } => Exit::Io,
        TreeError::BadRelPath { .. }
        | TreeError::Missing { .. }
        | TreeError::NotADirectory { .. }
        | TreeError::NotASource { .. }
        | TreeError::RootSymlink { .. }
        | TreeError::KeepMissing { .. } => Exit::Usage,
        TreeError::Special { .. }
        | TreeError::NotAFile { .. }
        | TreeError::Hardlink { .. }
        | TreeError::EscapingSymlink { .. }
        | TreeError::NonUtf8Name { .. }
        | TreeError::Escaped { .. }
        | TreeError::Gitignore { .. } => Exit::Error,
    }
}

fn runner_exit(err: &RunnerError) -> Exit {
    match err {
        RunnerError::Spawn { .. } | RunnerError::Setup { .. } | RunnerError::EmptyCommand => {
            Exit::Error
        }
    }
}

fn oracle_exit(err: &OracleError) -> Exit {
    match err {
        OracleError::BadRegex(_)
        | OracleError::Conflict(_)
        | OracleError::AmbiguousExpect { .. } => Exit::Usage,
        OracleError::BaselineNotFailing {
            timed_out: true, ..
        } => Exit::BaselineTimeout,
        OracleError::BaselineNotFailing {
            timed_out: false, ..
        }
        | OracleError::NoSignature { .. } => Exit::NotFailing,
        OracleError::Flaky { .. } => Exit::Flaky,
    }
}

/// The exit code for an error of `worker`: 2 for a URL that is not one, 1 otherwise.
pub fn remote_exit(err: &RemoteError) -> Exit {
    match err {
        RemoteError::BadUrl { .. } | RemoteError::BadHeader { .. } | RemoteError::Ca { .. } => {
            Exit::Usage
        }
        RemoteError::Connect { .. }
        | RemoteError::Runtime(_)
        | RemoteError::Rpc { .. }
        | RemoteError::Unsupported { .. }
        | RemoteError::Blob { .. }
        | RemoteError::Decode { .. }
        | RemoteError::Protocol(_)
        | RemoteError::Lost(_)
        | RemoteError::NotDone { .. }
        | RemoteError::Failed { .. }
        | RemoteError::Inputs(_)
        | RemoteError::UnsafeInput(_)
        | RemoteError::Runner(_) => Exit::Error,
    }
}

/// Prints an error of `worker` with its causes.
pub(crate) fn render_remote_error(console: &Console, err: &RemoteError) {
    console.err(&format!("error: {}", with_causes(err)));
}

/// An error followed by its causes, each after `: `.
pub use crate::with_causes;

/// Prints an error with its causes and a hint where one helps.
pub fn render_error(console: &Console, err: &ReduceError) {
    // A remote option that cannot be used is the option's fault, not the cluster's.
    if let ReduceError::Remote(remote) = err
        && remote_exit(remote) == Exit::Usage
    {
        render_remote_error(console, remote);
        return;
    }
    let mut text = format!("error: {}", with_causes(err));
    let hint = match err {
        ReduceError::Oracle(OracleError::NoSignature { output_tail }) => Some(format!(
            "the output has no line that identifies a failure{}\n\
             hint: say what the failure is with --expect REGEX or --signature TEXT, require an \
             exact status with --exit-code N or --process-failure, or accept any failure with \
             --any-failure",
            show_tail(output_tail)
        )),
        ReduceError::Oracle(OracleError::BaselineNotFailing { output_tail, .. }) => Some(format!(
            "the command must show the failure on SOURCE as it is{}",
            show_tail(output_tail)
        )),
        ReduceError::FinalNotReproducing { .. } => Some(
            "the same tree gave another result when run again: the command depends on \
             something outside the tree (state it keeps, time, order, load); make it \
             deterministic, or run each candidate more than once with --candidate-runs"
                .to_string(),
        ),
        ReduceError::BaselineOverMemory { .. } => Some(
            "raise --memory, or leave it out; under rlimit-as each process's address space is \
             limited, and an allocation failure in the output (MemoryError, std::bad_alloc, \
             Cannot allocate memory, ...) counts as going over (see docs/reduce.md)"
                .to_string(),
        ),
        ReduceError::Trivial => Some(
            "the command also fails when every file is deleted: make the oracle more specific \
             (--expect, --signature) or pass --allow-trivial"
                .to_string(),
        ),
        ReduceError::Runner(RunnerError::Spawn { .. }) => Some(
            "check that the command after `--` exists and is on PATH; it runs with the copy of \
             the tree as its working directory"
                .to_string(),
        ),
        _ => None,
    };
    if let Some(hint) = hint {
        text.push_str("\n\n");
        text.push_str(&hint);
    }
    console.err(&text);
}

/// Prints an error of `demo`: a reduction's error as [`render_error`] does.
pub(crate) fn render_demo_error(console: &Console, err: &DemoError) {
    match err {
        DemoError::Reduce(err) => render_error(console, err),
        DemoError::Tree(_) | DemoError::GitMissing(_) | DemoError::Git { .. } => {
            console.err(&format!("error: {}", with_causes(err)));
        }
    }
}

fn show_tail(tail: &str) -> String {
    if tail.trim().is_empty() {
        "; it printed nothing".to_string()
    } else {
        let indented: Vec<String> = tail.lines().map(|l| format!("  | {l}")).collect();
        format!("; the end of its output:\n{}", indented.join("\n"))
    }
}

fn session_exit(err: &crate::reduce::durable::SessionError) -> Exit {
    use crate::reduce::durable::SessionError as E;
    match err {
        E::ResumeWithoutSession
        | E::Exists(_)
        | E::NotEmpty(_)
        | E::Missing(_)
        | E::Changed { .. }
        | E::SourceChanged { .. } => Exit::Usage,
        E::Tree(err) => tree_exit(err),
        E::State(_) | E::Damaged { .. } | E::Diverged { .. } | E::Io { .. } | E::Unsafe(_) => {
            Exit::Error
        }
    }
}
