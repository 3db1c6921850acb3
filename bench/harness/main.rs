//! Benchmark harness for repromin (`cargo bench --bench harness -- SUBCOMMAND ...`).
//!
//! - `peers CASES_DIR`: repromin and the installed peer reducers (C-Vise, C-Reduce,
//!   picire, Lithium, Shrink Ray) on the same cases and oracles, each in a fresh copy;
//! - `overhead`: repromin's per-probe cost on trees of many small files against the bare
//!   spawn of the same oracle command;
//! - `bytes`: in-process throughput of `repromin::bytes`, with allocations counted;
//! - `compare CASES_DIR --binary NAME=PATH ...`: repromin binaries side by side on the same
//!   fixed number of probes of real-tree reductions;
//! - `remote CASES_DIR`: a real-tree reduction here and on a private BuildGrid with 1, 2, 4
//!   `repromin worker`s (`--remote`);
//! - `all CASES_DIR --out docs/benchmarks.md`: everything, written as one document.
//!
//! The peers are run as external programs only, through repromin's own runner
//! ([`repromin::runner`]). See docs/benchmarks.md.
//!
//! This file parses the command line and dispatches; each part is a module of its own
//! (`peers`, `overhead`, `bytes`, `compare`, `all`), on shared ones for the cases
//! (`cases`), the reducers (`tools`) and files and processes (`process`).

use std::error::Error;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod all;
mod bytes;
mod cases;
mod compare;
#[path = "../../tests/counting_alloc.rs"]
mod counting_alloc;
mod overhead;
mod peers;
mod process;
mod reduce_once;
mod remote;
// The private BuildGrid of the remote-execution tests, and how a missing one is reported.
#[allow(dead_code)]
#[path = "../../src/test_buildgrid.rs"]
mod test_buildgrid;
#[allow(dead_code)]
#[path = "../../src/test_skip.rs"]
mod test_skip;
mod tools;

use all::{all, machine_line, write_targets};
use bytes::{bytes_bench, write_bytes};
use overhead::{overhead, write_overhead};
use peers::peers;

type Res<T> = Result<T, Box<dyn Error>>;

// ---------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------

#[derive(Parser)]
#[command(name = "harness", about = "repromin's benchmark harness")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run repromin and the installed peers on every case of CASES_DIR.
    Peers {
        /// Directory of cases (each with input/, oracle.sh, optional case.json).
        cases_dir: PathBuf,
        #[command(flatten)]
        opts: PeerOpts,
        /// Write the Markdown tables here (default: stdout).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Per-probe cost of repromin against the bare spawn of the same oracle.
    Overhead {
        #[command(flatten)]
        opts: OverheadOpts,
        /// The repromin binary.
        #[arg(long, default_value_os_t = default_repromin())]
        repromin: PathBuf,
    },
    /// In-process throughput of repromin::bytes, with allocations counted.
    Bytes,
    /// repromin binaries side by side: the same fixed number of probes on each case.
    Compare {
        /// Directory of cases.
        cases_dir: PathBuf,
        #[command(flatten)]
        opts: compare::CompareOpts,
    },
    /// A real-tree reduction here and on a private BuildGrid with 1, 2, 4 workers.
    Remote {
        /// Directory of cases.
        cases_dir: PathBuf,
        #[command(flatten)]
        opts: remote::RemoteOpts,
        /// The repromin binary (it is also the workers').
        #[arg(long, default_value_os_t = default_repromin())]
        repromin: PathBuf,
    },
    /// Everything, written as one Markdown document.
    All {
        /// Directory of cases.
        cases_dir: PathBuf,
        #[command(flatten)]
        opts: PeerOpts,
        #[command(flatten)]
        overhead: OverheadOpts,
        /// The document to write; results replace the part between the results markers.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Args, Clone)]
struct PeerOpts {
    /// Tools to run, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "repromin,cvise,creduce,picire,lithium,shrinkray"
    )]
    tools: Vec<String>,
    /// repromin's parallelism values, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    jobs: Vec<u32>,
    /// The peers' parallelism values, comma-separated (default: those of `--jobs`).
    #[arg(long, value_delimiter = ',')]
    peer_jobs: Vec<u32>,
    /// Wall-time limit per tool run, in seconds; a run still going is killed.
    #[arg(long, default_value_t = 300)]
    timeout_s: u64,
    /// Only the cases whose directory name contains one of these (comma-separated).
    #[arg(long, value_delimiter = ',')]
    cases: Vec<String>,
    /// The repromin binary.
    #[arg(long, default_value_os_t = default_repromin())]
    repromin: PathBuf,
    /// repromin's `--level` (`lines`, `tokens`, `chars`); its default when not given.
    #[arg(long)]
    repromin_level: Option<String>,
    /// Keep each run's temp directory (printed) for inspection.
    #[arg(long)]
    keep_temp: bool,
}

#[derive(Args, Clone)]
struct OverheadOpts {
    /// Tree sizes, in files, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    files: Vec<usize>,
    /// Probes per measurement (each one runs the command on the whole tree and commits:
    /// about 2 ms on 10,000 files on tmpfs in December 2026).
    #[arg(long, default_value_t = 50)]
    probes: u64,
}

fn default_repromin() -> PathBuf {
    match option_env!("CARGO_BIN_EXE_repromin") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/repromin"),
    }
}

fn main() -> ExitCode {
    // `cargo bench` appends `--bench` to the arguments of a harness = false target.
    let args = std::env::args_os().filter(|a| a != "--bench");
    let cli = Cli::parse_from(args);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("harness: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Res<()> {
    match cli.command {
        Cmd::Peers {
            cases_dir,
            opts,
            out,
        } => {
            let report = peers(&cases_dir, &opts)?;
            let mut md = String::new();
            let _ = writeln!(md, "{}\n", machine_line());
            let _ = writeln!(md, "### Targets\n");
            write_targets(&mut md, &report, &[]);
            report.write_markdown(&mut md, &opts);
            emit(out.as_deref(), &md)
        }
        Cmd::Overhead { opts, repromin } => {
            let rows = overhead(&opts, &repromin)?;
            let mut md = String::new();
            write_overhead(&mut md, &rows, &opts);
            emit(None, &md)
        }
        Cmd::Bytes => {
            let rows = bytes_bench()?;
            let mut md = String::new();
            write_bytes(&mut md, &rows);
            emit(None, &md)
        }
        Cmd::Compare { cases_dir, opts } => emit(None, &compare::compare(&cases_dir, &opts)?),
        Cmd::Remote {
            cases_dir,
            opts,
            repromin,
        } => emit(None, &remote::remote(&cases_dir, &repromin, &opts)?),
        Cmd::All {
            cases_dir,
            opts,
            overhead: ov,
            out,
        } => all(&cases_dir, &opts, &ov, &out),
    }
}

fn emit(out: Option<&Path>, text: &str) -> Res<()> {
    match out {
        Some(path) => {
            fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}
