//! The command-line grammar of every subcommand as a table: each valid command line parses,
//! and each invalid one fails with the `clap::error::ErrorKind` it must give.

use clap::Parser as _;
use clap::error::ErrorKind;
use repromin::cli::{Cli, Command};

const SHAS: &[&str] = &["--base", "b", "--head", "h"];

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("repromin").chain(args.iter().copied()))
}

/// `args` with the two commits every gate command needs appended.
fn with_shas(args: &[&'static str]) -> Vec<&'static str> {
    args.iter().chain(SHAS).copied().collect()
}

#[test]
fn valid_command_lines_parse() {
    let valid: Vec<Vec<&str>> = vec![
        vec!["reduce", "src", "out", "--", "sh", "-c", "exit 1"],
        vec![
            "reduce",
            "src",
            "out",
            "--jobs",
            "2",
            "--timeout",
            "30s",
            "--",
            "false",
        ],
        vec![
            "reduce", "src", "out", "-j", "1", "--level", "tokens", "--", "false",
        ],
        vec![
            "reduce",
            "src",
            "out",
            "--passes",
            "files,lines",
            "--",
            "false",
        ],
        vec![
            "reduce",
            "src",
            "out",
            "--exit-code",
            "-1",
            "--any-failure",
            "--",
            "false",
        ],
        vec![
            "reduce",
            "src",
            "out",
            "--keep",
            "a",
            "--keep",
            "b",
            "--no-syntax-guard",
            "--",
            "false",
        ],
        vec![
            "reduce",
            "src",
            "out",
            "--max-duration",
            "10m",
            "--max-attempts",
            "5",
            "--",
            "false",
        ],
        vec![
            "reduce",
            "src",
            "out",
            "--candidate-runs",
            "3",
            "--min-candidate-rate",
            "0.5",
            "--",
            "false",
        ],
        vec!["doctor", "src", "--", "python3", "run.py"],
        // With --config the command is in the file (what may stand beside it is checked
        // after parsing: tests/cli/config.rs).
        vec!["reduce", "src", "out", "--config", "c.json"],
        vec!["reduce", "src", "out", "--config=c.json", "--no-progress"],
        vec!["doctor", "src", "--config", "c.json"],
        vec![
            "doctor", "src", "--expect", "Error", "--level", "chars", "--", "false",
        ],
        with_shas(&["exec", "--side", "base", "--out", "o"]),
        with_shas(&[
            "exec",
            "--side",
            "head",
            "--out",
            "o",
            "--sandbox-user",
            "u",
        ]),
        with_shas(&[
            "exec",
            "--side",
            "mutants",
            "--out",
            "o",
            "--budget-ms",
            "10",
        ]),
        with_shas(&[
            "exec",
            "--side",
            "reduce",
            "--out",
            "o",
            "--base-report",
            "b.report",
        ]),
        with_shas(&["judge", "--base-report", "b", "--head-report", "h"]),
        with_shas(&[
            "judge",
            "--base-report",
            "b",
            "--head-report",
            "h",
            "--require",
            "reproduced",
        ]),
        with_shas(&[
            "judge",
            "--base-report",
            "b",
            "--base-rerun-report",
            "r",
            "--head-report",
            "h",
            "--require",
            "no-tests",
        ]),
        with_shas(&["run"]),
        with_shas(&[
            "run",
            "--no-reduce",
            "--repo",
            "r",
            "--require",
            "vacuous",
            "--holdout-runs",
            "3",
        ]),
        vec!["line"],
        vec!["demo"],
    ];
    for args in valid {
        if let Err(e) = parse(&args) {
            panic!("{args:?} does not parse: {e}");
        }
    }
    // The subcommand is the one named.
    assert!(matches!(
        parse(&["line"]),
        Ok(Cli {
            command: Command::Line
        })
    ));
    assert!(matches!(
        parse(&["demo"]),
        Ok(Cli {
            command: Command::Demo
        })
    ));
}

#[test]
fn invalid_command_lines_give_their_error_kind() {
    use ErrorKind::*;
    let invalid: Vec<(Vec<&str>, ErrorKind)> = vec![
        // The top level.
        (vec![], DisplayHelpOnMissingArgumentOrSubcommand),
        (vec!["frobnicate"], InvalidSubcommand),
        (vec!["--frobnicate"], UnknownArgument),
        (vec!["--help"], DisplayHelp),
        (vec!["-h"], DisplayHelp),
        (vec!["--version"], DisplayVersion),
        (vec!["-V"], DisplayVersion),
        // reduce
        (vec!["reduce", "--help"], DisplayHelp),
        (vec!["reduce"], MissingRequiredArgument),
        (vec!["reduce", "src", "out"], MissingRequiredArgument),
        (vec!["reduce", "src", "out", "--config"], InvalidValue),
        (vec!["doctor", "src"], MissingRequiredArgument),
        (
            vec!["reduce", "src", "--", "false"],
            MissingRequiredArgument,
        ),
        (
            vec!["reduce", "src", "out", "--frob", "--", "false"],
            UnknownArgument,
        ),
        (
            vec!["reduce", "src", "out", "--jobs", "x", "--", "false"],
            ValueValidation,
        ),
        (
            vec!["reduce", "src", "out", "-j", "-1", "--", "false"],
            UnknownArgument,
        ),
        (
            vec!["reduce", "src", "out", "--timeout", "soon", "--", "false"],
            ValueValidation,
        ),
        (
            vec!["reduce", "src", "out", "--max-duration", "x", "--", "false"],
            ValueValidation,
        ),
        (
            vec!["reduce", "src", "out", "--exit-code", "one", "--", "false"],
            ValueValidation,
        ),
        (
            vec!["reduce", "src", "out", "--level", "words", "--", "false"],
            InvalidValue,
        ),
        (
            vec![
                "reduce",
                "src",
                "out",
                "--passes",
                "files,nope",
                "--",
                "false",
            ],
            InvalidValue,
        ),
        (
            vec!["reduce", "src", "out", "--minimiser", "nope", "--", "false"],
            InvalidValue,
        ),
        (
            vec![
                "reduce", "src", "out", "--level", "tokens", "--passes", "lines", "--", "false",
            ],
            ArgumentConflict,
        ),
        (
            vec!["reduce", "src", "out", "--jobs", "--", "false"],
            InvalidValue,
        ),
        // doctor
        (vec!["doctor", "--help"], DisplayHelp),
        (vec!["doctor"], MissingRequiredArgument),
        (vec!["doctor", "src"], MissingRequiredArgument),
        (vec!["doctor", "src", "out", "--", "false"], UnknownArgument),
        (
            vec!["doctor", "src", "--frob", "--", "false"],
            UnknownArgument,
        ),
        (
            vec!["doctor", "src", "--jobs", "x", "--", "false"],
            ValueValidation,
        ),
        (
            vec![
                "doctor", "src", "--level", "chars", "--passes", "files", "--", "false",
            ],
            ArgumentConflict,
        ),
        // exec
        (vec!["exec", "--help"], DisplayHelp),
        (vec!["exec"], MissingRequiredArgument),
        (with_shas(&["exec", "--out", "o"]), MissingRequiredArgument),
        (
            with_shas(&["exec", "--side", "base"]),
            MissingRequiredArgument,
        ),
        (
            vec!["exec", "--side", "base", "--out", "o", "--base", "b"],
            MissingRequiredArgument,
        ),
        (
            with_shas(&["exec", "--side", "nope", "--out", "o"]),
            InvalidValue,
        ),
        (
            with_shas(&["exec", "--side", "reduce", "--out", "o"]),
            MissingRequiredArgument,
        ),
        (
            with_shas(&["exec", "--side", "base", "--out", "o", "--budget-ms", "x"]),
            ValueValidation,
        ),
        (
            with_shas(&["exec", "--side", "base", "--out", "o", "--frob"]),
            UnknownArgument,
        ),
        // judge
        (vec!["judge", "--help"], DisplayHelp),
        (vec!["judge"], MissingRequiredArgument),
        (
            with_shas(&["judge", "--base-report", "b"]),
            MissingRequiredArgument,
        ),
        (
            with_shas(&["judge", "--head-report", "h"]),
            MissingRequiredArgument,
        ),
        (
            with_shas(&[
                "judge",
                "--base-report",
                "b",
                "--head-report",
                "h",
                "--require",
                "nope",
            ]),
            InvalidValue,
        ),
        (
            with_shas(&[
                "judge",
                "--base-report",
                "b",
                "--head-report",
                "h",
                "--frob",
            ]),
            UnknownArgument,
        ),
        // run
        (vec!["run", "--help"], DisplayHelp),
        (vec!["run"], MissingRequiredArgument),
        (vec!["run", "--base", "b"], MissingRequiredArgument),
        (with_shas(&["run", "--require", "nope"]), InvalidValue),
        (with_shas(&["run", "--holdout-runs", "x"]), ValueValidation),
        (with_shas(&["run", "--frob"]), UnknownArgument),
        (with_shas(&["run", "extra"]), UnknownArgument),
        // line
        (vec!["line", "--help"], DisplayHelp),
        (vec!["line", "--frob"], UnknownArgument),
        (vec!["line", "extra"], UnknownArgument),
        // demo
        (vec!["demo", "--help"], DisplayHelp),
        (vec!["demo", "--frob"], UnknownArgument),
        (vec!["demo", "extra"], UnknownArgument),
    ];
    let mut wrong = Vec::new();
    for (args, kind) in invalid {
        match parse(&args) {
            Ok(_) => wrong.push(format!("{args:?} parses; expected {kind:?}")),
            Err(e) if e.kind() != kind => {
                wrong.push(format!("{args:?} gives {:?}; expected {kind:?}", e.kind()));
            }
            Err(_) => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
