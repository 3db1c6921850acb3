//! The command line: clap definitions, turning arguments into library options, rendering
//! errors and mapping them to exit codes. Nothing else in the crate uses clap.

mod args;
mod config;
mod doctor;
mod gate;
mod generate;
mod render;
mod runner_args;
mod worker;

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

use crate::console::Console;
use crate::output_layout::REPORT_JSON;
use crate::reduce;

pub use crate::exit_code::Exit;
pub use args::ReduceArgs;
pub use config::ConfigError;
pub use doctor::DoctorArgs;
pub use generate::ManError;
pub use render::{
    config_exit, demo_exit, exit_for, man_exit, remote_exit, render_error, with_causes,
};
pub use worker::WorkerArgs;

use render::render_demo_error;

/// Repromin: prove that a pull request's test reproduces its bug, and reduce a failing tree
/// to what the failure needs.
#[derive(Debug, Parser)]
#[command(name = "repromin", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Reduce a directory tree or a single file against a failing command and publish the
    /// minimal one.
    ///
    /// The command runs in a copy of the tree, never in SOURCE; a single file is copied
    /// alone into a directory, under its own name. A cut is kept only when the same failure
    /// survives. OUTPUT must not exist; the report goes to OUTPUT.repromin/.
    Reduce(ReduceArgs),
    /// Check that a reduction could start: validate, run the baseline, show the signature.
    ///
    /// Writes nothing.
    Doctor(DoctorArgs),
    /// Run one worker side of the pull-request gate and write its encoded reports.
    ///
    /// Plans the diff, adds a detached worktree at the side's commit, installs and builds
    /// there before any head file lands, lays the head's tests over the base (base side),
    /// runs the tests (twice on base) and writes the reports. The mutants side, for a pull
    /// request that changes tests alone with a mutation spec, runs the specs' tests on the
    /// merge base once, then under each mutation in turn. Prints nothing on success and
    /// always exits 0: failures become error markers that the judge reports.
    Exec(gate::ExecArgs),
    /// Read the side reports plus git and print one `repromin/v1` line.
    ///
    /// Runs no code of either commit. With --mutants-report, a pull request that changes
    /// tests alone and adds or changes a mutation spec gets a mutants field. Exits 0 unless
    /// --require is given.
    Judge(gate::JudgeArgs),
    /// Run every side and the judge locally: the line on stdout, a table on stderr.
    Run(gate::RunArgs),
    /// Validate `repromin/v1` lines read on stdin; print each pretty, or why it is refused.
    Line,
    /// The reduce side's oracle: run one test and exit 1 if it fails (internal).
    #[command(hide = true)]
    CheckTest(gate::CheckArgs),
    /// Build a small project with a real bug in a temporary directory and reduce it.
    Demo,
    /// Print a shell completion script on stdout.
    ///
    /// For bash: `repromin completions bash > ~/.local/share/bash-completion/completions/repromin`.
    /// docs/install.md says where zsh, fish, elvish and PowerShell look for theirs.
    Completions(generate::CompletionsArgs),
    /// Print the man page (roff) on stdout, or write one page per command with --dir.
    ///
    /// Read it with `repromin man | man -l -`; install every page with
    /// `repromin man --dir ~/.local/share/man/man1`.
    Man(generate::ManArgs),
    /// Serve a remote execution cluster as a worker: take its actions and run them here.
    ///
    /// A bot of the Remote Workers API (the Bots service of BuildGrid and others) that
    /// runs one action at a time: the action's input root is laid out in a fresh scratch
    /// directory, its command runs with its own process group, the action's timeout and
    /// the 64 MiB output cap, in this process's environment plus the command's variables;
    /// stdout and stderr come back together as stdout. Runs until SIGINT or SIGTERM, then
    /// exits 0; exits 1 when the cluster cannot be reached or keeps failing, 2 for a URL
    /// that is not one. docs/remote.md shows how to start a cluster to try it.
    Worker(WorkerArgs),
}

/// Parses `args` and runs the command.
///
/// A `reduce` or `doctor` with `--config FILE` is parsed twice: once as typed, to find the
/// file and refuse semantic options beside it, then with the file's options expanded into
/// explicit flags (see `config.rs`), so what follows sees one ordinary command line.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let argv: Vec<OsString> = args.into_iter().collect();
    let definition = Cli::command();
    let clap_error = |err: clap::Error| -> ExitCode {
        let _ = err.print();
        if err.use_stderr() {
            Exit::Usage.into()
        } else {
            Exit::Ok.into()
        }
    };
    let mut matches = match definition.clone().try_get_matches_from(&argv) {
        Ok(matches) => matches,
        Err(err) => return clap_error(err),
    };
    match config::expand(&argv, &definition, &matches) {
        Ok(None) => {}
        Ok(Some(expanded)) => match definition.try_get_matches_from(&expanded) {
            Ok(m) => matches = m,
            Err(err) => {
                let text = err.render().to_string();
                let first = text.lines().next().unwrap_or_default();
                let err = ConfigError::Expansion {
                    path: config_path(&matches),
                    message: first.strip_prefix("error: ").unwrap_or(first).to_string(),
                };
                render::render_config_error(&Console::new(true), &err);
                return config_exit(&err).into();
            }
        },
        Err(err) => {
            render::render_config_error(&Console::new(true), &err);
            return config_exit(&err).into();
        }
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(err) => return clap_error(err),
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(signal, interrupt.clone());
    }
    match cli.command {
        Command::Reduce(args) => reduce_command(&args, &interrupt).into(),
        Command::Doctor(args) => doctor_command(&args, &interrupt).into(),
        Command::Exec(args) => gate::exec_command(&args, &interrupt).into(),
        Command::Judge(args) => gate::judge_command(&args, &interrupt).into(),
        Command::Run(args) => gate::run_command(&args, &interrupt).into(),
        Command::Line => gate::line_command().into(),
        Command::CheckTest(args) => gate::check_command(&args).into(),
        Command::Demo => demo_command(&interrupt).into(),
        Command::Completions(args) => completions_command(&args).into(),
        Command::Man(args) => man_command(&args).into(),
        Command::Worker(args) => worker::worker_command(&args, &interrupt).into(),
    }
}

/// The `--config` path of the `reduce` or `doctor` of `matches`.
fn config_path(matches: &clap::ArgMatches) -> std::path::PathBuf {
    matches
        .subcommand()
        .and_then(|(_, sub)| sub.get_one::<std::path::PathBuf>("config").cloned())
        .unwrap_or_default()
}

/// Prints `err`; when the options came from a configuration file, also which of its keys
/// the flags the message names are.
fn render_with_config(console: &Console, err: &reduce::ReduceError, config: bool) {
    render_error(console, err);
    if config && let Some(hint) = config::keys_named_in(&err.to_string()) {
        console.err(&format!("\n{hint}"));
    }
}

fn reduce_command(args: &ReduceArgs, interrupt: &Arc<AtomicBool>) -> Exit {
    let console = Console::new(args.no_progress);
    let config = args.config.is_some();
    let options = match args.to_options() {
        Ok(options) => options,
        Err(err) => {
            render_with_config(&console, &err, config);
            return exit_for(&err);
        }
    };
    // Runs that died while publishing into the same directory are cleaned up (or their
    // publication completed) before this one checks that OUTPUT is free.
    match crate::export::recover(&options.output) {
        Ok(found) => {
            for item in found {
                let kind = if item.is_warning() { "warning" } else { "note" };
                console.err(&format!("{kind}: {item}"));
            }
        }
        Err(err) => {
            render_error(&console, &err);
            return exit_for(&err);
        }
    }
    let result = reduce::reduce(&options, interrupt, console.observer()).and_then(|reduction| {
        if options.resume
            && let Some(published) = crate::export::already_published(&reduction, &options)?
        {
            console.err("note: this session had published its result already");
            return Ok(published);
        }
        crate::export::publish(&reduction, &options)
    });
    if let (
        Err(reduce::ReduceError::Interrupted | reduce::ReduceError::SessionInterrupted),
        Some(dir),
    ) = (&result, &options.session)
    {
        console.err(&format!(
            "the session is saved in {}; resume it with:\n  {}",
            dir.display(),
            resume_command()
        ));
    }
    match result {
        Ok(published) => {
            let r = &published.report;
            console.err(&format!(
                "reduced {} files, {} bytes to {} files, {} bytes ({}; {} commands, {} cache hits, {:.1} s)\nreport: {}",
                r.source.files,
                r.source.bytes,
                r.output.files,
                r.output.bytes,
                r.ended_by,
                r.oracle_samples,
                r.cache_hits,
                r.reduce_ms as f64 / 1000.0,
                published.sidecar.join(REPORT_JSON).display()
            ));
            console.out(&published.output.display().to_string());
            Exit::Ok
        }
        Err(err) => {
            render_with_config(&console, &err, config);
            exit_for(&err)
        }
    }
}

fn doctor_command(args: &DoctorArgs, interrupt: &Arc<AtomicBool>) -> Exit {
    let console = Console::new(true);
    let config = args.config.is_some();
    match doctor::doctor(args, interrupt) {
        Ok(text) => {
            console.out(&text);
            Exit::Ok
        }
        Err(err) => {
            render_with_config(&console, &err, config);
            exit_for(&err)
        }
    }
}

fn demo_command(interrupt: &Arc<AtomicBool>) -> Exit {
    let console = Console::new(false);
    match crate::demo::run(&console, interrupt) {
        Ok(summary) => {
            console.out(&summary.gate);
            Exit::Ok
        }
        Err(err) => {
            render_demo_error(&console, &err);
            demo_exit(&err)
        }
    }
}

fn completions_command(args: &generate::CompletionsArgs) -> Exit {
    Console::new(true).out_raw(&generate::completions(
        args.shell,
        &Cli::command(),
        "repromin",
    ));
    Exit::Ok
}

fn man_command(args: &generate::ManArgs) -> Exit {
    let console = Console::new(true);
    let result = match &args.dir {
        None => generate::man_page(Cli::command()).map(|page| console.out_raw(&page)),
        Some(dir) => generate::write_pages(Cli::command(), dir).map(|paths| {
            for path in paths {
                console.out(&path.display().to_string());
            }
        }),
    };
    match result {
        Ok(()) => Exit::Ok,
        Err(err) => {
            console.err(&format!("error: {}", with_causes(&err)));
            man_exit(&err)
        }
    }
}

/// The command line of this run with `--resume` added (once), shell-quoted.
fn resume_command() -> String {
    let mut args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--resume") {
        let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
        args.insert(at, "--resume".to_string());
    }
    args.iter()
        .map(|a| crate::text::shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::OracleError;
    use crate::reduce::ReduceError;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_timed_out_baseline_has_its_own_exit_code() {
        let baseline = |timed_out| {
            ReduceError::Oracle(OracleError::BaselineNotFailing {
                reason: "timed out".into(),
                timed_out,
                output_tail: String::new(),
            })
        };
        assert_eq!(exit_for(&baseline(true)), Exit::BaselineTimeout);
        assert_eq!(exit_for(&baseline(false)), Exit::NotFailing);
        let final_tree = ReduceError::FinalNotReproducing {
            reason: "exit 0 (the command did not fail)".into(),
        };
        assert_eq!(exit_for(&final_tree), Exit::FinalNotReproducing);
    }

    #[test]
    fn command_lines_parse_or_are_refused() {
        let ok = [
            "repromin reduce src out -- sh -c true",
            "repromin reduce src out --jobs 2 --timeout 5s --keep a/b -- make",
            "repromin doctor src --expect boom -- ./run",
            "repromin demo",
        ];
        for line in ok {
            let parsed = Cli::try_parse_from(line.split(' '));
            assert!(parsed.is_ok(), "{line}: {parsed:?}");
        }
        let bad = [
            "repromin reduce src out",
            "repromin reduce src -- x",
            "repromin reduce src out --jobs x -- y",
            "repromin frobnicate",
        ];
        for line in bad {
            assert!(Cli::try_parse_from(line.split(' ')).is_err(), "{line}");
        }
    }
}
