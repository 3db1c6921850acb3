//! `completions` and `man`: shell completion scripts (clap_complete) and man pages
//! (clap_mangen) generated from the clap definitions, so they cannot drift from the parser.
//!
//! Both take the definition as an argument rather than importing it from the parent module:
//! `cli/mod.rs` owns `Cli` and hands its `clap::Command` down.

use std::path::{Path, PathBuf};

use clap::Args;
use clap_complete::Shell;

/// `repromin completions`.
#[derive(Debug, Args, Clone)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

/// `repromin man`.
#[derive(Debug, Args, Clone)]
pub struct ManArgs {
    /// Instead of printing the main page, write one page per command into DIR (created if
    /// missing; pages already there are replaced, never through a symlink): repromin.1,
    /// repromin-reduce.1, ...
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// A man page that could not be rendered or written.
#[derive(Debug, thiserror::Error)]
pub enum ManError {
    /// Rendering into memory failed (clap_mangen reports it as an I/O error).
    #[error("cannot render the man page of {command}")]
    Render {
        /// The command whose page it is.
        command: String,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// The directory could not be created.
    #[error("cannot create {}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// A page could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The page's path.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
}

/// The completion script of `command` for `shell`, for a binary called `bin`.
///
/// clap_complete offers every subcommand, hidden ones included, so the script is generated
/// from a copy of `command` that leaves them out (`check-test` is internal).
pub(super) fn completions(shell: Shell, command: &clap::Command, bin: &'static str) -> Vec<u8> {
    let mut visible = clap::Command::new(bin)
        .version(env!("CARGO_PKG_VERSION"))
        .about(command.get_about().cloned().unwrap_or_default())
        .args(command.get_arguments().cloned())
        .subcommands(
            command
                .get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .cloned(),
        );
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut visible, bin, &mut script);
    script
}

/// The main man page of `command` (section 1, roff): synopsis, options and the list of
/// subcommands, each of which has a page of its own ([`write_pages`]).
pub(super) fn man_page(command: clap::Command) -> Result<Vec<u8>, ManError> {
    let command = built(command);
    let source = source(&command);
    render(command, &source)
}

/// Writes the main page and one page per visible subcommand, at every depth, into `dir`;
/// returns the paths written, the main page first.
pub(super) fn write_pages(command: clap::Command, dir: &Path) -> Result<Vec<PathBuf>, ManError> {
    let command = built(command);
    let source = source(&command);
    let mut pages = Vec::new();
    collect_pages(command, &source, &mut pages)?;
    std::fs::create_dir_all(dir).map_err(|source| ManError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::with_capacity(pages.len());
    for (name, page) in pages {
        let path = dir.join(name);
        crate::safe_fs::write_file(&path, &page).map_err(|err| ManError::Write {
            path: path.clone(),
            source: err.into(),
        })?;
        written.push(path);
    }
    Ok(written)
}

/// `command` as the man pages see it: without the `help` subcommand (each page lists the
/// options, `--help` among them) and built, so that subcommands carry their full display
/// names (`repromin-reduce`).
fn built(command: clap::Command) -> clap::Command {
    let mut command = command.disable_help_subcommand(true);
    command.build();
    command
}

/// What every page's header names as its source: the program and its version (a
/// subcommand has no version of its own).
fn source(command: &clap::Command) -> String {
    format!(
        "{} {}",
        command.get_name(),
        command.get_version().unwrap_or_default()
    )
}

/// The page of `command`, then those of its visible subcommands, as (file name, roff).
fn collect_pages(
    command: clap::Command,
    source: &str,
    pages: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), ManError> {
    let subcommands: Vec<clap::Command> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .cloned()
        .collect();
    let name = clap_mangen::Man::new(command.clone()).get_filename();
    pages.push((name, render(command, source)?));
    for sub in subcommands {
        collect_pages(sub, source, pages)?;
    }
    Ok(())
}

fn render(command: clap::Command, source: &str) -> Result<Vec<u8>, ManError> {
    let shown = command
        .get_display_name()
        .unwrap_or(command.get_name())
        .to_string();
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .source(source)
        .render(&mut page)
        .map_err(|source| ManError::Render {
            command: shown,
            source,
        })?;
    Ok(page)
}
