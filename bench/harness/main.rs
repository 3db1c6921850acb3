//! Benchmark harness for repromin (`cargo bench --bench harness -- SUBCOMMAND ...`).
//!
//! - `peers CASES_DIR`: repromin and the installed peer reducers (C-Vise, C-Reduce,
//!   picire, Lithium, Shrink Ray) on the same cases and oracles, each in a fresh copy;
//! - `overhead`: repromin's per-probe cost on trees of many small files against the bare
//!   spawn of the same oracle command;
//! - `bytes`: in-process throughput of `repromin::bytes`, with allocations counted;
//! - `compare CASES_DIR --binary NAME=PATH ...`: repromin binaries side by side on the same
//!   fixed number of probes of real-tree reductions;
//! - `all CASES_DIR --out docs/benchmarks.md`: everything, written as one document.
//!
//! The peers are run as external programs only, through repromin's own runner
//! ([`repromin::runner`]). See docs/benchmarks.md.

use std::collections::BTreeMap;
use std::error::Error;
use std::fmt::Write as _;
use std::fs;
use std::hint::black_box;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use regex::Regex;
use repromin::bytes::{Interesting, Limits, Settings, Storage, reduce};
use repromin::runner::{CommandSpec, Termination};

mod compare;
#[path = "../../tests/counting_alloc.rs"]
mod counting_alloc;

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

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

#[derive(Default, serde::Deserialize)]
#[serde(default)]
struct CaseJson {
    description: String,
    /// For single-file cases: the file under input/.
    file: Option<String>,
    /// Relative path (from the case directory) of an exact expected output: a file for
    /// single-file cases, a directory for trees.
    expected: Option<String>,
    /// Relative path (in the output) -> regex that the whole file must match.
    expected_regex: BTreeMap<String, String>,
    /// Design targets checked for repromin.
    targets: Targets,
    /// repromin's `--level` for this case, unless `--repromin-level` is given.
    repromin_level: Option<String>,
}

#[derive(Default, serde::Deserialize, Clone)]
#[serde(default)]
struct Targets {
    max_bytes: Option<u64>,
    max_files: Option<u64>,
    max_calls: Option<u64>,
    faster_than_peers: bool,
    expected: bool,
}

struct Case {
    name: String,
    dir: PathBuf,
    oracle: PathBuf,
    json: CaseJson,
    input_bytes: u64,
    input_files: u64,
}

impl Case {
    fn single_file(&self) -> Option<&str> {
        self.json.file.as_deref()
    }

    fn has_expectation(&self) -> bool {
        self.json.expected.is_some() || !self.json.expected_regex.is_empty()
    }
}

fn load_cases(dir: &Path, filter: &[String]) -> Res<Vec<Case>> {
    let entries =
        fs::read_dir(dir).map_err(|e| format!("cannot read cases dir {}: {e}", dir.display()))?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.join("oracle.sh").is_file() && path.join("input").exists() {
            dirs.push(path);
        }
    }
    dirs.sort();
    let mut cases = Vec::new();
    for path in dirs {
        let name = file_name(&path);
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let json_path = path.join("case.json");
        let json: CaseJson = if json_path.is_file() {
            let text = fs::read_to_string(&json_path)?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json_path.display()))?
        } else {
            CaseJson::default()
        };
        if let Some(file) = &json.file
            && !path.join("input").join(file).is_file()
        {
            return Err(format!("{}: input/{file} is not a file", path.display()).into());
        }
        let (input_bytes, input_files) = match &json.file {
            Some(file) => measure(&path.join("input").join(file))?,
            None => measure(&path.join("input"))?,
        };
        cases.push(Case {
            name,
            oracle: path.join("oracle.sh"),
            dir: path,
            json,
            input_bytes,
            input_files,
        });
    }
    if cases.is_empty() {
        return Err(format!(
            "no case (a directory with input/ and oracle.sh) in {}",
            dir.display()
        )
        .into());
    }
    Ok(cases)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tool {
    Repromin,
    Cvise,
    Creduce,
    Picire,
    Lithium,
    Shrinkray,
}

impl Tool {
    fn parse(name: &str) -> Option<Tool> {
        Some(match name {
            "repromin" => Tool::Repromin,
            "cvise" => Tool::Cvise,
            "creduce" => Tool::Creduce,
            "picire" => Tool::Picire,
            "lithium" => Tool::Lithium,
            "shrinkray" => Tool::Shrinkray,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Tool::Repromin => "repromin",
            Tool::Cvise => "cvise",
            Tool::Creduce => "creduce",
            Tool::Picire => "picire",
            Tool::Lithium => "lithium",
            Tool::Shrinkray => "shrinkray",
        }
    }

    /// Whether the tool reduces a directory tree (the others take one file).
    fn reduces_trees(self) -> bool {
        matches!(self, Tool::Repromin | Tool::Shrinkray)
    }

    /// Whether the tool has a parallel mode.
    fn parallel(self) -> bool {
        self != Tool::Lithium
    }

    /// Whether the file being reduced only ever holds accepted states while the tool
    /// runs, so that polling its size shows the best size reached so far.
    fn pollable(self) -> bool {
        matches!(self, Tool::Cvise | Tool::Creduce | Tool::Shrinkray)
    }
}

/// A tool found on this machine.
struct Installed {
    tool: Tool,
    program: PathBuf,
    version: String,
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| {
            p.metadata()
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

fn first_line_of(program: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())?
        .trim()
        .to_string();
    out.status.success().then_some(line)
}

/// Finds a tool, or says why it is not available.
fn detect(tool: Tool, repromin: &Path) -> Result<Installed, String> {
    let (program, version) = match tool {
        Tool::Repromin => {
            if !repromin.is_file() {
                return Err(format!(
                    "{} not found: run `cargo build --release` first",
                    repromin.display()
                ));
            }
            let v = first_line_of(repromin, &["--version"]).unwrap_or_else(|| "repromin".into());
            (repromin.to_path_buf(), v)
        }
        Tool::Lithium => {
            let python = find_on_path("python3").ok_or("python3 not on PATH")?;
            let probe = "import importlib.metadata as m, lithium; print('lithium-reducer', m.version('lithium-reducer'))";
            let v = first_line_of(&python, &["-c", probe])
                .ok_or("not installed (python3 cannot import lithium)")?;
            (python, v)
        }
        _ => {
            let program = find_on_path(tool.name()).ok_or("not installed (not on PATH)")?;
            let v = first_line_of(&program, &["--version"])
                .ok_or_else(|| format!("`{} --version` failed", program.display()))?;
            (program, v)
        }
    };
    Ok(Installed {
        tool,
        program,
        version,
    })
}

// ---------------------------------------------------------------------------
// File helpers
// ---------------------------------------------------------------------------

fn copy_tree(src: &Path, dst: &Path) -> Res<()> {
    let meta = fs::symlink_metadata(src)?;
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(fs::read_link(src)?, dst)?;
    } else if meta.is_dir() {
        fs::create_dir_all(dst)?;
        let mut entries: Vec<_> = fs::read_dir(src)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            copy_tree(&entry.path(), &dst.join(entry.file_name()))?;
        }
    } else {
        fs::copy(src, dst)?;
    }
    Ok(())
}

/// (bytes, files) of a file or a tree; symlinks count as files of zero bytes.
fn measure(path: &Path) -> Res<(u64, u64)> {
    let meta = fs::symlink_metadata(path)?;
    if meta.is_dir() {
        let mut total = (0, 0);
        for entry in fs::read_dir(path)? {
            let (b, f) = measure(&entry?.path())?;
            total.0 += b;
            total.1 += f;
        }
        Ok(total)
    } else if meta.file_type().is_symlink() {
        Ok((0, 1))
    } else {
        Ok((meta.len(), 1))
    }
}

/// Relative path -> contents of every file of a tree.
fn read_tree(root: &Path) -> Res<BTreeMap<String, Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) -> Res<()> {
        for entry in fs::read_dir(dir)? {
            let path = entry?.path();
            let meta = fs::symlink_metadata(&path)?;
            if meta.is_dir() {
                walk(root, &path, out)?;
            } else {
                let rel = path.strip_prefix(root)?.to_string_lossy().into_owned();
                let data = if meta.file_type().is_symlink() {
                    fs::read_link(&path)?
                        .to_string_lossy()
                        .into_owned()
                        .into_bytes()
                } else {
                    fs::read(&path)?
                };
                out.insert(rel, data);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out)?;
    Ok(out)
}

fn counter_len(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn sh_quote(path: &Path) -> Res<String> {
    let s = path.to_str().ok_or("non-UTF-8 path")?;
    if s.contains('\'') {
        return Err(format!("path with a quote: {s}").into());
    }
    Ok(format!("'{s}'"))
}

fn write_executable(path: &Path, text: &str) -> Res<()> {
    fs::write(path, text)?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))?;
    Ok(())
}

// ---------------------------------------------------------------------------
// Running a process under a wall-time limit
// ---------------------------------------------------------------------------

struct Finished {
    wall: Duration,
    /// `None` when the run was killed at the limit.
    status: Option<Termination>,
    /// Smallest size seen while polling, with the time and oracle calls when first seen.
    best: Option<(u64, Duration, u64)>,
}

/// Runs `cmd` (its program, arguments, environment and working directory; `TMPDIR` from
/// its environment) through repromin's runner: its own process group, stdin from
/// `/dev/null`, output captured (and written to `log`), whatever it leaves behind ended.
/// At `limit` the group gets SIGTERM, and SIGKILL `grace` later. While it runs, polls
/// `poll` (a file or tree) for its size.
fn run_limited(
    cmd: &Command,
    log: Option<&Path>,
    limit: Duration,
    grace: Duration,
    counter: &Path,
    poll: Option<&Path>,
) -> Res<Finished> {
    let lossy = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
    let env: Vec<(String, String)> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((lossy(k), lossy(v?))))
        .collect();
    let tmpdir = env
        .iter()
        .find(|(k, _)| k == "TMPDIR")
        .map_or_else(std::env::temp_dir, |(_, v)| PathBuf::from(v));
    let cwd = cmd.get_current_dir().unwrap_or(Path::new("."));
    let started = tempfile::NamedTempFile::new()?;
    // The leader writes its id (its group's id) first, so that the group can be sent
    // SIGTERM at the limit; the runner's own timeout is the SIGKILL `grace` later.
    let mut argv = vec![
        "/bin/sh".to_string(),
        "-c".to_string(),
        "echo $$ > \"$0\" && exec \"$@\"".to_string(),
        started.path().to_string_lossy().into_owned(),
        lossy(cmd.get_program()),
    ];
    argv.extend(cmd.get_args().map(lossy));
    let spec = CommandSpec { argv, env };
    let never = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let start = Instant::now();
    let mut best: Option<(u64, Duration, u64)> = None;
    let mut killed_at = None;
    let outcome = std::thread::scope(|scope| {
        let run = scope.spawn(|| {
            let outcome = repromin::runner::run(&spec, cwd, &tmpdir, limit + grace, &never);
            done.store(true, Ordering::SeqCst);
            outcome
        });
        let mut last_poll = Instant::now() - Duration::from_secs(1);
        while !done.load(Ordering::SeqCst) {
            if let Some(path) = poll
                && last_poll.elapsed() >= Duration::from_millis(100)
            {
                last_poll = Instant::now();
                if let Ok((bytes, _)) = measure(path)
                    && best.is_none_or(|(b, _, _)| bytes < b)
                {
                    best = Some((bytes, start.elapsed(), counter_len(counter)));
                }
            }
            if killed_at.is_none() && start.elapsed() >= limit {
                killed_at = Some(start.elapsed());
                if let Ok(pid) = fs::read_to_string(started.path())
                    && let Ok(pid) = pid.trim().parse::<i32>()
                {
                    let _ = killpg(Pid::from_raw(pid), Signal::SIGTERM);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        run.join()
    })
    .map_err(|_| "the run's thread panicked")?
    .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    if let Some(log) = log {
        fs::write(log, &outcome.output)?;
    }
    let (wall, status) = match killed_at {
        Some(wall) => (wall, None),
        None if outcome.termination == Termination::TimedOut => (outcome.duration, None),
        None => (outcome.duration, Some(outcome.termination)),
    };
    Ok(Finished { wall, status, best })
}

fn describe_status(status: Termination) -> String {
    match status {
        Termination::Exited(0) => "yes".into(),
        Termination::Exited(code) => format!("yes (exit {code})"),
        Termination::Signaled(sig) => format!("yes (signal {sig})"),
        other => format!("yes ({})", other.describe()),
    }
}

// ---------------------------------------------------------------------------
// peers
// ---------------------------------------------------------------------------

struct Row {
    tool: Tool,
    jobs: u32,
    wall: Duration,
    calls: u64,
    bytes: Option<u64>,
    files: Option<u64>,
    exited: bool,
    exit_note: String,
    valid: Option<bool>,
    expected: Option<bool>,
    /// Time and calls at which the final size was first seen (pollable tools).
    final_seen: Option<(Duration, u64)>,
    note: String,
}

struct CaseReport {
    case: Case,
    /// The oracle's time per call on the input.
    oracle: Duration,
    rows: Vec<Row>,
    skipped: Vec<String>,
}

struct PeerReport {
    cases: Vec<CaseReport>,
    installed: Vec<(Tool, String)>,
    missing: Vec<(String, String)>,
    timeout_s: u64,
    jobs: Vec<u32>,
}

fn peers(cases_dir: &Path, opts: &PeerOpts) -> Res<PeerReport> {
    let cases = load_cases(cases_dir, &opts.cases)?;
    let mut tools = Vec::new();
    let mut missing = Vec::new();
    for name in &opts.tools {
        let tool = Tool::parse(name).ok_or_else(|| format!("unknown tool {name}"))?;
        match detect(tool, &opts.repromin) {
            Ok(found) => {
                eprintln!(
                    "{}: {} ({})",
                    tool.name(),
                    found.version,
                    found.program.display()
                );
                tools.push(found);
            }
            Err(why) if tool == Tool::Repromin => return Err(why.into()),
            Err(why) => {
                eprintln!("{}: skipped: {why}", tool.name());
                missing.push((name.clone(), why));
            }
        }
    }
    if opts.jobs.is_empty() || opts.jobs.contains(&0) || opts.peer_jobs.contains(&0) {
        return Err("--jobs and --peer-jobs need positive values".into());
    }
    let mut reports = Vec::new();
    for case in cases {
        let oracle = oracle_time(&case)?;
        eprintln!(
            "{}: oracle {:.0} ms per call on the input",
            case.name,
            oracle.as_secs_f64() * 1000.0
        );
        let mut rows = Vec::new();
        let mut skipped = Vec::new();
        for found in &tools {
            if case.single_file().is_none() && !found.tool.reduces_trees() {
                let why = match found.tool {
                    Tool::Cvise => "; C-Vise 2.7 also refuses test-case paths with a directory",
                    Tool::Creduce => {
                        "; C-Reduce runs the test with the files flattened into one directory"
                    }
                    _ => "",
                };
                skipped.push(format!(
                    "{}: not run (it reduces single files; this case is a tree{why})",
                    found.tool.name()
                ));
                continue;
            }
            let jobs_list = if found.tool == Tool::Repromin || opts.peer_jobs.is_empty() {
                &opts.jobs
            } else {
                &opts.peer_jobs
            };
            // A tool without a parallel mode runs once, at -j1.
            let serial = [1];
            let jobs_list = if found.tool.parallel() {
                jobs_list
            } else {
                if jobs_list != &serial[..] {
                    skipped.push(format!(
                        "{}: run at -j1 only (no parallel mode)",
                        found.tool.name()
                    ));
                }
                &serial[..]
            };
            for &jobs in jobs_list {
                eprint!("{} {} -j{jobs} ... ", case.name, found.tool.name());
                let _ = std::io::stderr().flush();
                let row = run_one(&case, found, jobs, opts)?;
                eprintln!(
                    "{:.1} s, {} calls, {} bytes, {} files{}",
                    row.wall.as_secs_f64(),
                    row.calls,
                    opt(row.bytes),
                    opt(row.files),
                    if row.exited { "" } else { ", killed" }
                );
                rows.push(row);
            }
        }
        reports.push(CaseReport {
            case,
            oracle,
            rows,
            skipped,
        });
    }
    Ok(PeerReport {
        cases: reports,
        installed: tools.iter().map(|t| (t.tool, t.version.clone())).collect(),
        missing,
        timeout_s: opts.timeout_s,
        jobs: opts.jobs.clone(),
    })
}

fn list(values: &[u32]) -> String {
    values
        .iter()
        .map(|j| j.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn opt(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

const LITHIUM_CONDITION: &str = r#"# Lithium interestingness condition written by repromin's benchmark harness:
# the test case is interesting when the case's oracle (through the counting
# wrapper) exits 0 in the directory that holds the file.
import subprocess

WRAPPER = __WRAPPER__
WORKDIR = __WORKDIR__


def interesting(cond_args, temp_prefix):
    run = subprocess.run(
        ["/bin/sh", WRAPPER],
        cwd=WORKDIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return run.returncode == 0
"#;

fn py_str(path: &Path) -> Res<String> {
    Ok(serde_json::to_string(
        path.to_str().ok_or("non-UTF-8 path")?,
    )?)
}

/// How the harness calls repromin on a case, in the run's `work/` directory, before its
/// options and `-- CMD`.
const REDUCE_ARGS: [&str; 6] = [
    "reduce",
    "input",
    "out",
    "--exit-code",
    "0",
    "--no-progress",
];

fn run_one(case: &Case, found: &Installed, jobs: u32, opts: &PeerOpts) -> Res<Row> {
    let tool = found.tool;
    let tmp = tempfile::Builder::new()
        .prefix(&format!("repromin-bench-{}-{}-", case.name, tool.name()))
        .tempdir()?;
    let base = tmp.path().to_path_buf();
    let work = base.join("work");
    let private_tmp = base.join("tmp");
    fs::create_dir_all(&work)?;
    fs::create_dir_all(&private_tmp)?;
    let counter = base.join("counter");
    fs::write(&counter, b"")?;
    let log_path = base.join("tool.log");

    // The copy being reduced, and where the result is read afterwards.
    let input = case.dir.join("input");
    let target: PathBuf = match (tool, case.single_file()) {
        (Tool::Repromin, Some(file)) => {
            fs::create_dir_all(work.join("input"))?;
            fs::copy(input.join(file), work.join("input").join(file))?;
            work.join("out")
        }
        (Tool::Repromin, None) => {
            copy_tree(&input, &work.join("input"))?;
            work.join("out")
        }
        (_, Some(file)) => {
            fs::copy(input.join(file), work.join(file))?;
            work.join(file)
        }
        (_, None) => {
            copy_tree(&input, &work.join("input"))?;
            work.join("input")
        }
    };

    // The counting wrapper: one byte per call, appended with O_APPEND (`>>`).
    let enter = if tool == Tool::Shrinkray && case.single_file().is_none() {
        "cd input || exit 1\n" // Shrink Ray puts a copy of the directory in the test's cwd.
    } else {
        ""
    };
    let wrapper = base.join("oracle-wrapper.sh");
    write_executable(
        &wrapper,
        &format!(
            "#!/bin/sh\nprintf x >> {}\nPATH={}\nexport PATH\n{enter}exec /bin/sh {}\n",
            sh_quote(&counter)?,
            sh_quote(Path::new(oracle_path()))?,
            sh_quote(&case.oracle)?
        ),
    )?;

    // C-Vise refuses a test case path with a directory in it; every tool runs in `work`.
    let target_rel = target.strip_prefix(&work)?.to_path_buf();
    let jobs_s = jobs.to_string();
    let mut cmd = Command::new(&found.program);
    match tool {
        Tool::Repromin => {
            cmd.args(REDUCE_ARGS);
            if let Some(level) = opts
                .repromin_level
                .as_ref()
                .or(case.json.repromin_level.as_ref())
            {
                cmd.args(["--level", level]);
            }
            cmd.args(["--jobs", &jobs_s, "--", "/bin/sh"]).arg(&wrapper);
        }
        Tool::Cvise | Tool::Creduce => {
            cmd.args(["--n", &jobs_s, "--tidy"])
                .arg(&wrapper)
                .arg(&target_rel);
        }
        Tool::Picire => {
            cmd.arg(format!("--input={}", target.display()))
                .arg(format!("--test={}", wrapper.display()))
                .arg("--atom=line")
                .arg(format!("--out={}", base.join("picire-out").display()));
            if jobs > 1 {
                cmd.args(["--parallel", "--jobs", &jobs_s]);
            }
        }
        Tool::Lithium => {
            let condition = base.join("lithium_condition.py");
            let text = LITHIUM_CONDITION
                .replace("__WRAPPER__", &py_str(&wrapper)?)
                .replace("__WORKDIR__", &py_str(&work)?);
            fs::write(&condition, text)?;
            cmd.args(["-m", "lithium", "--lines"])
                .arg(&condition)
                .arg(&target);
        }
        Tool::Shrinkray => {
            cmd.args(["--ui", "basic", "--no-llm", "--no-history"])
                .args(["--input-type", "basename", "--parallelism", &jobs_s])
                .arg(&wrapper)
                .arg(&target_rel);
        }
    }
    cmd.current_dir(&work).env("TMPDIR", &private_tmp);

    let limit = Duration::from_secs(opts.timeout_s);
    // repromin publishes its last accepted state on SIGTERM; give it time to.
    let grace = Duration::from_secs(30);
    let poll = tool.pollable().then_some(target.as_path());
    let finished = run_limited(&cmd, Some(&log_path), limit, grace, &counter, poll)?;
    let calls = counter_len(&counter);

    // Where the result is.
    let result: Option<PathBuf> = match (tool, case.single_file()) {
        (Tool::Repromin, Some(file)) => Some(target.join(file)),
        (Tool::Picire, Some(file)) => Some(base.join("picire-out").join(file)),
        _ => Some(target.clone()),
    }
    .filter(|p| p.exists());
    let (bytes, files) = match &result {
        Some(p) => {
            let (b, f) = measure(p)?;
            (Some(b), Some(f))
        }
        None => (None, None),
    };

    let mut note = String::new();
    if tool == Tool::Repromin
        && let Ok(text) = fs::read_to_string(work.join("out.repromin/report.json"))
        && let Ok(report) = serde_json::from_str::<serde_json::Value>(&text)
    {
        let _ = write!(
            note,
            "ended by {}; {} candidates, {} cache hits",
            report["ended_by"].as_str().unwrap_or("?"),
            report["attempts"],
            report["cache_hits"]
        );
    }
    let exited = finished.status.is_some();
    let exit_note = match finished.status {
        Some(status) => describe_status(status),
        None => format!("no (killed at {} s)", opts.timeout_s),
    };
    if let Some(status) = finished.status
        && status != Termination::Exited(0)
    {
        let text = fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(3).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        eprintln!("\n  {} log tail: {}", tool.name(), tail.join(" | "));
    }

    let (valid, expected) = match &result {
        Some(p) => (Some(still_interesting(case, p)?), check_expected(case, p)?),
        None => (None, None),
    };
    let final_seen = match (finished.best, bytes) {
        (Some((b, t, c)), Some(fin)) if b == fin && fin < case.input_bytes => Some((t, c)),
        _ => None,
    };
    if opts.keep_temp {
        let kept = tmp.keep();
        eprintln!("  kept {}", kept.display());
    }
    Ok(Row {
        tool,
        jobs,
        wall: finished.wall,
        calls,
        bytes,
        files,
        exited,
        exit_note,
        valid,
        expected,
        final_seen,
        note,
    })
}

/// The `PATH` every oracle runs with, whichever tool calls it: the harness's own, with the
/// real interpreter's directory first when `python3` on it is a pyenv shim. A shim costs
/// about 100 ms a call, and a tool that is itself started through a shim (picire, Lithium)
/// hands its oracle a `PATH` without it, so without this the tools would be timed on
/// different oracles.
fn oracle_path() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let path = std::env::var("PATH").unwrap_or_default();
        let resolved = Command::new("/bin/sh")
            .args(["-c", "command -v python3"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        if !resolved.contains("/shims/") {
            return path;
        }
        let real = Command::new("pyenv")
            .args(["which", "python3"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        match real.as_deref().and_then(|r| Path::new(r).parent()) {
            Some(dir) => {
                eprintln!(
                    "python3 is a pyenv shim: oracles run with {} first on PATH",
                    dir.display()
                );
                format!("{}:{path}", dir.display())
            }
            None => path,
        }
    })
}

/// Runs the real oracle once on a fresh copy of a result (not counted).
fn still_interesting(case: &Case, result: &Path) -> Res<bool> {
    Ok(timed_oracle(case, result)?.0)
}

/// The oracle's time per call on the case's input: the median of three runs on fresh
/// copies (not counted).
fn oracle_time(case: &Case) -> Res<Duration> {
    let input = case.dir.join("input");
    let input = match case.single_file() {
        Some(file) => input.join(file),
        None => input,
    };
    let mut times = Vec::new();
    for _ in 0..3 {
        times.push(timed_oracle(case, &input)?.1);
    }
    times.sort();
    Ok(times[1])
}

/// Runs the real oracle once on a fresh copy of a file or tree: whether it exited 0, and
/// its wall time.
fn timed_oracle(case: &Case, result: &Path) -> Res<(bool, Duration)> {
    let tmp = tempfile::Builder::new()
        .prefix("repromin-bench-check-")
        .tempdir()?;
    let root = tmp.path().join("root");
    match case.single_file() {
        Some(file) => {
            fs::create_dir_all(&root)?;
            fs::copy(result, root.join(file))?;
        }
        None => copy_tree(result, &root)?,
    }
    let counter = tmp.path().join("unused-counter");
    let mut cmd = Command::new("/bin/sh");
    cmd.arg(&case.oracle)
        .current_dir(&root)
        .env("TMPDIR", tmp.path())
        .env("PATH", oracle_path());
    let finished = run_limited(
        &cmd,
        None,
        Duration::from_secs(120),
        Duration::from_secs(2),
        &counter,
        None,
    )?;
    Ok((
        finished.status == Some(Termination::Exited(0)),
        finished.wall,
    ))
}

/// Whether a result matches the case's expected output; `None` without an expectation.
fn check_expected(case: &Case, result: &Path) -> Res<Option<bool>> {
    if !case.has_expectation() {
        return Ok(None);
    }
    let actual: BTreeMap<String, Vec<u8>> = match case.single_file() {
        Some(file) => BTreeMap::from([(file.to_string(), fs::read(result)?)]),
        None => read_tree(result)?,
    };
    if let Some(rel) = &case.json.expected {
        let path = case.dir.join(rel);
        let expected: BTreeMap<String, Vec<u8>> = match case.single_file() {
            Some(file) => BTreeMap::from([(file.to_string(), fs::read(&path)?)]),
            None => read_tree(&path)?,
        };
        if expected != actual {
            return Ok(Some(false));
        }
    }
    for (rel, pattern) in &case.json.expected_regex {
        let re = Regex::new(&format!(r"\A(?:{pattern})\z"))
            .map_err(|e| format!("{}: bad expected_regex for {rel}: {e}", case.name))?;
        let text = actual.get(rel).map(|d| String::from_utf8_lossy(d));
        if !text.is_some_and(|t| re.is_match(&t)) {
            return Ok(Some(false));
        }
    }
    Ok(Some(true))
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

impl PeerReport {
    fn write_markdown(&self, md: &mut String, opts: &PeerOpts) {
        let _ = writeln!(md, "### Tools\n");
        for (tool, version) in &self.installed {
            let _ = writeln!(md, "- {}: {version}", tool.name());
        }
        for (name, why) in &self.missing {
            let _ = writeln!(md, "- {name}: skipped, {why}");
        }
        let _ = writeln!(
            md,
            "\nEach run: a fresh temp copy, repromin at `--jobs` {}, the peers at {}, killed at {} s if still running.\n",
            list(&opts.jobs),
            list(if opts.peer_jobs.is_empty() {
                &opts.jobs
            } else {
                &opts.peer_jobs
            }),
            self.timeout_s
        );
        for report in &self.cases {
            report.write_markdown(md, &self.jobs);
        }
    }
}

impl CaseReport {
    fn write_markdown(&self, md: &mut String, jobs: &[u32]) {
        let case = &self.case;
        let _ = writeln!(md, "### {}\n", case.name);
        if !case.json.description.is_empty() {
            let _ = writeln!(md, "{}\n", case.json.description);
        }
        let _ = writeln!(
            md,
            "Input: {} {}, {} bytes. Oracle: {:.0} ms per call on the input.\n",
            thousands(case.input_files),
            if case.input_files == 1 {
                "file"
            } else {
                "files"
            },
            thousands(case.input_bytes),
            self.oracle.as_secs_f64() * 1000.0
        );
        let _ = writeln!(
            md,
            "| tool | jobs | wall s | oracle calls | ms per call | final bytes | files | exited | still interesting | expected output | final size first seen | notes |"
        );
        let _ = writeln!(
            md,
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- |"
        );
        for row in &self.rows {
            let seen = row.final_seen.map_or("-".to_string(), |(t, c)| {
                format!("{:.1} s, {} calls", t.as_secs_f64(), thousands(c))
            });
            let _ = writeln!(
                md,
                "| {} | {} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                row.tool.name(),
                row.jobs,
                row.wall.as_secs_f64(),
                thousands(row.calls),
                if row.calls == 0 {
                    "-".to_string()
                } else {
                    format!("{:.0}", row.wall.as_secs_f64() * 1000.0 / row.calls as f64)
                },
                row.bytes.map_or("-".into(), thousands),
                opt(row.files),
                row.exit_note,
                yes_no(row.valid),
                if case.has_expectation() {
                    yes_no(row.expected)
                } else {
                    "-"
                },
                seen,
                row.note
            );
        }
        if !self.skipped.is_empty() {
            let _ = writeln!(md);
            for line in &self.skipped {
                let _ = writeln!(md, "- {line}");
            }
        }
        if let Some(s) = self.speedup(jobs) {
            let _ = writeln!(
                md,
                "\nrepromin -j{} vs -j{}: {:.2}x ({:.1} s -> {:.1} s).",
                s.hi, s.lo, s.factor, s.lo_wall, s.hi_wall
            );
        }
        let _ = writeln!(md);
    }

    fn repromin(&self, jobs: u32) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.tool == Tool::Repromin && r.jobs == jobs)
    }

    /// repromin's speed-up from the lowest to the highest jobs value, when both ran.
    fn speedup(&self, jobs: &[u32]) -> Option<Speedup> {
        let lo = *jobs.iter().min()?;
        let hi = *jobs.iter().max()?;
        if lo == hi {
            return None;
        }
        let a = self.repromin(lo)?;
        let b = self.repromin(hi)?;
        Some(Speedup {
            lo,
            hi,
            lo_wall: a.wall.as_secs_f64(),
            hi_wall: b.wall.as_secs_f64(),
            factor: a.wall.as_secs_f64() / b.wall.as_secs_f64(),
        })
    }
}

struct Speedup {
    lo: u32,
    hi: u32,
    lo_wall: f64,
    hi_wall: f64,
    factor: f64,
}

// ---------------------------------------------------------------------------
// overhead
// ---------------------------------------------------------------------------

struct OverheadRow {
    files: usize,
    probes: u64,
    bare_ms: f64,
    short_wall: f64,
    short_calls: u64,
    long_wall: f64,
    long_calls: u64,
    per_probe_ms: f64,
    overhead_pct: f64,
    /// The same difference taken over the reports' `reduce_ms` (the passes alone), which
    /// leaves out the copy in, the baseline, the export and the clean-up: on an ext4
    /// without a journal those fixed costs depend on what the run before deleted.
    loop_probe_ms: f64,
    loop_overhead_pct: f64,
    /// Per probe, from the reports' `probe_time` (the long run's less the short one's):
    /// preparing the tree, the command, cleaning up around it, the commit, in ms.
    split: [f64; 4],
    /// The same command spawned the bare way but through `fork` (a hook before `exec`
    /// that does nothing), and with a hook that gives it what kernel-enforced undo needs
    /// at the least, a mount namespace of its own with an overlay of the tree (see
    /// [`hooked_spawns`]): ms per spawn each; `None` where this process cannot mount.
    floor_ms: Option<(f64, f64)>,
}

/// The fields of a report's `probe_time`, in the order of [`OverheadRow::split`].
const PROBE_TIME: [&str; 4] = ["prepare_ms", "command_ms", "clean_up_ms", "commit_ms"];

/// Lays out `n` small two-line files, 100 per directory.
fn generate_tree(root: &Path, n: usize) -> Res<()> {
    for i in 0..n {
        let dir = root.join(format!("d{:03}", i / 100));
        if i % 100 == 0 {
            fs::create_dir_all(&dir)?;
        }
        fs::write(
            dir.join(format!("f{:02}.txt", i % 100)),
            format!("alpha {i}\nbeta\n"),
        )?;
    }
    Ok(())
}

fn overhead(opts: &OverheadOpts, repromin: &Path) -> Res<Vec<OverheadRow>> {
    if !repromin.is_file() {
        return Err(format!(
            "{} not found: run `cargo build --release` first",
            repromin.display()
        )
        .into());
    }
    if opts.probes == 0 {
        return Err("--probes must be positive".into());
    }
    let mut rows = Vec::new();
    for &n in &opts.files {
        let tmp = tempfile::Builder::new()
            .prefix("repromin-bench-overhead-")
            .tempdir()?;
        let base = tmp.path();
        let tree = base.join("tree");
        generate_tree(&tree, n)?;
        let counter = base.join("counter");
        let oracle = base.join("oracle.sh");
        // The trivial oracle: count the call, say "interesting".
        write_executable(
            &oracle,
            &format!("#!/bin/sh\nprintf x >> {}\nexit 0\n", sh_quote(&counter)?),
        )?;

        // Bare: the same command, run by repromin's runner as a probe runs it (own process
        // group, stdin from /dev/null, output captured), in the same tree, one after
        // another, with nothing else of repromin around it.
        eprint!("overhead {n} files: bare spawn x{} ... ", opts.probes);
        let spec = CommandSpec {
            argv: vec!["/bin/sh".into(), oracle.to_string_lossy().into_owned()],
            env: Vec::new(),
        };
        let never = AtomicBool::new(false);
        let start = Instant::now();
        for _ in 0..opts.probes {
            let out = repromin::runner::run(&spec, &tree, base, Duration::from_secs(60), &never)?;
            if out.termination != Termination::Exited(0) {
                return Err("the trivial oracle failed".into());
            }
        }
        let bare_ms = start.elapsed().as_secs_f64() * 1000.0 / opts.probes as f64;
        eprintln!("{bare_ms:.2} ms each");
        eprint!(
            "overhead {n} files: forked spawn, then in a namespace with an overlay, x{} each ... ",
            opts.probes
        );
        let floor_ms =
            match hooked_spawns(&tree, &oracle, base, opts.probes, false).and_then(|fork| {
                Ok((
                    fork,
                    hooked_spawns(&tree, &oracle, base, opts.probes, true)?,
                ))
            }) {
                Ok((fork, floor)) => {
                    eprintln!("{fork:.2} and {floor:.2} ms each");
                    Some((fork, floor))
                }
                Err(e) => {
                    eprintln!("skipped: {e}");
                    None
                }
            };

        let reduce_run = |attempts: u64, out: &str| -> Res<(f64, u64, f64, [f64; 4])> {
            fs::write(&counter, b"")?;
            let mut cmd = Command::new(repromin);
            cmd.args(["reduce", "tree", out, "--exit-code", "0", "--allow-trivial"])
                .args(["--passes", "lines", "--jobs", "1", "--no-progress"])
                .args(["--max-attempts", &attempts.to_string(), "--", "/bin/sh"])
                .arg(&oracle)
                .current_dir(base)
                .env("TMPDIR", base);
            let finished = run_limited(
                &cmd,
                None,
                Duration::from_secs(3600),
                Duration::from_secs(30),
                &counter,
                None,
            )?;
            match finished.status {
                Some(Termination::Exited(0)) => {}
                other => return Err(format!("repromin reduce failed: {other:?}").into()),
            }
            let report = base.join(format!("{out}.repromin")).join("report.json");
            let text =
                fs::read_to_string(&report).map_err(|e| format!("{}: {e}", report.display()))?;
            let report: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", report.display()))?;
            let loop_ms = report["reduce_ms"]
                .as_f64()
                .ok_or("the report has no reduce_ms")?;
            let mut split = [0.0; 4];
            for (slot, field) in split.iter_mut().zip(PROBE_TIME) {
                *slot = report["probe_time"][field]
                    .as_f64()
                    .ok_or_else(|| format!("the report has no probe_time.{field}"))?;
            }
            Ok((
                finished.wall.as_secs_f64(),
                counter_len(&counter),
                loop_ms,
                split,
            ))
        };
        eprint!("overhead {n} files: repromin, 1 probe ... ");
        let (short_wall, short_calls, short_loop, short_split) = reduce_run(1, "out-short")?;
        eprintln!("{short_wall:.2} s, {short_calls} calls");
        eprint!(
            "overhead {n} files: repromin, {} probes ... ",
            opts.probes + 1
        );
        let (long_wall, long_calls, long_loop, long_split) =
            reduce_run(opts.probes + 1, "out-long")?;
        eprintln!("{long_wall:.2} s, {long_calls} calls");
        let extra = long_calls.saturating_sub(short_calls).max(1);
        let per_probe_ms = (long_wall - short_wall) * 1000.0 / extra as f64;
        let loop_probe_ms = (long_loop - short_loop) / extra as f64;
        rows.push(OverheadRow {
            files: n,
            probes: extra,
            bare_ms,
            short_wall,
            short_calls,
            long_wall,
            long_calls,
            per_probe_ms,
            overhead_pct: (per_probe_ms - bare_ms) / bare_ms * 100.0,
            loop_probe_ms,
            loop_overhead_pct: (loop_probe_ms - bare_ms) / bare_ms * 100.0,
            split: std::array::from_fn(|i| (long_split[i] - short_split[i]) / extra as f64),
            floor_ms,
        });
    }
    Ok(rows)
}

/// `probes` spawns of `/bin/sh ORACLE` in `tree` as the bare rows spawn it, but with a
/// hook in the child before `exec` (so the standard library forks rather than using
/// `posix_spawn`). With `isolate`, the hook gives the command what any probe whose undo
/// the kernel enforces pays at the least: a mount namespace of its own, its mounts made
/// private, and an overlay of `tree` (a fresh, empty upper layer, made before the clock
/// starts) mounted on it; the namespace and the mount go when the command exits, before
/// its exit is reported. Without, the hook does nothing. Nothing of repromin runs: the
/// difference is the floor under its per-probe cost. Milliseconds per spawn; an error
/// where the overlay cannot be mounted (no privilege, no overlay).
fn hooked_spawns(tree: &Path, oracle: &Path, base: &Path, probes: u64, isolate: bool) -> Res<f64> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let layers = base.join("floor-layers");
    let target = CString::new(tree.as_os_str().as_bytes())?;
    // The mount options of each spawn, naming its own upper and work directories, made
    // before the clock starts; the first, untimed spawn gets a pair of its own.
    let mut options = Vec::new();
    for i in 0..=probes {
        let (upper, work) = (layers.join(format!("u{i}")), layers.join(format!("w{i}")));
        if isolate {
            fs::create_dir_all(&upper)?;
            fs::create_dir_all(&work)?;
        }
        options.push(CString::new(format!(
            "lowerdir={},upperdir={},workdir={},volatile",
            tree.display(),
            upper.display(),
            work.display()
        ))?);
    }
    let spawn = |options: &CString| -> Res<()> {
        let target = target.clone();
        let options = options.clone();
        let mut cmd = Command::new("/bin/sh");
        cmd.arg(oracle)
            .current_dir(tree)
            .stdin(Stdio::null())
            .process_group(0);
        // SAFETY: between fork and exec the child makes system calls only, on strings
        // made before the fork.
        #[expect(
            unsafe_code,
            reason = "the floor under a probe: a mount namespace and an overlay entered \
                      between fork and exec, as repromin's leader does"
        )]
        unsafe {
            cmd.pre_exec(move || {
                use nix::mount::{MsFlags, mount};
                if !isolate {
                    return Ok(());
                }
                nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS)?;
                mount(
                    None::<&std::ffi::CStr>,
                    c"/",
                    None::<&std::ffi::CStr>,
                    MsFlags::MS_REC | MsFlags::MS_PRIVATE,
                    None::<&std::ffi::CStr>,
                )?;
                mount(
                    Some(c"overlay"),
                    target.as_c_str(),
                    Some(c"overlay"),
                    MsFlags::empty(),
                    Some(options.as_c_str()),
                )?;
                nix::unistd::chdir(target.as_c_str())?;
                Ok(())
            });
        }
        let out = cmd.output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("the oracle failed: {:?}", out.status).into())
        }
    };
    // One spawn first, untimed: it says whether mounting works here at all.
    let (first, timed) = options.split_first().ok_or("no probes")?;
    spawn(first).map_err(|e| format!("cannot run the command in a namespace: {e}"))?;
    let start = Instant::now();
    for options in timed {
        spawn(options)?;
    }
    let ms = start.elapsed().as_secs_f64() * 1000.0 / probes as f64;
    if isolate {
        fs::remove_dir_all(&layers)?;
    }
    Ok(ms)
}

fn write_overhead(md: &mut String, rows: &[OverheadRow], opts: &OverheadOpts) {
    let _ = writeln!(
        md,
        "Oracle: `/bin/sh oracle.sh` that appends one byte to a counter and exits 0. \
         repromin: `reduce --exit-code 0 --allow-trivial --passes lines --jobs 1 --max-attempts K`, \
         run with K = 1 and K = {}; per probe = (wall(K={}) - wall(K=1)) / (extra oracle calls); \
         in the passes: the same over the reports' `reduce_ms`, which leaves out the fixed \
         costs (copy in, baseline, export, clean-up).\n",
        opts.probes + 1,
        opts.probes + 1
    );
    let _ = writeln!(
        md,
        "| files | probes | bare spawn ms | repromin K=1: wall s (calls) | repromin K={}: wall s (calls) | repromin per probe ms | overhead | in the passes: per probe ms | overhead |",
        opts.probes + 1
    );
    let _ = writeln!(
        md,
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {:.2} | {:.2} ({}) | {:.2} ({}) | {:.2} | {:.0}% | {:.2} | {:.0}% |",
            thousands(r.files as u64),
            r.probes,
            r.bare_ms,
            r.short_wall,
            r.short_calls,
            r.long_wall,
            r.long_calls,
            r.per_probe_ms,
            r.overhead_pct,
            r.loop_probe_ms,
            r.loop_overhead_pct
        );
    }
    let _ = writeln!(
        md,
        "\nWhere a probe's time goes, from the reports' `probe_time` (the same difference, per \
         probe, in ms): the tree shown to the run, the command (its start, overlay mount and \
         namespace included, to its group's end), the clean-up around it, the commit, and the \
         rest of the passes' time (the search: making, keying and choosing candidates).\n"
    );
    let _ = writeln!(
        md,
        "| files | bare spawn | prepare | command | clean-up | commit | search | per probe |"
    );
    let _ = writeln!(
        md,
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for r in rows {
        let [prepare, command, clean_up, commit] = r.split;
        let search = r.loop_probe_ms - (prepare + command + clean_up + commit);
        let _ = writeln!(
            md,
            "| {} | {:.3} | {prepare:.3} | {command:.3} | {clean_up:.3} | {commit:.3} | {search:.3} | {:.3} |",
            thousands(r.files as u64),
            r.bare_ms,
            r.loop_probe_ms
        );
    }
    let _ = writeln!(
        md,
        "\nThe floor under a probe: the same command spawned through `fork` (a hook before \
         `exec` that does nothing), and with a hook that gives it only what kernel-enforced \
         undo needs (a mount namespace of its own and an overlay of the tree with an empty \
         upper layer, both gone when it exits); nothing of repromin runs. *Isolation* is the \
         difference, in ms and as a share of the bare spawn: no probe that the kernel keeps \
         from writing into the tree costs less over the bare spawn.\n"
    );
    let _ = writeln!(
        md,
        "| files | bare spawn | forked spawn | in a namespace with an overlay | isolation | isolation / bare spawn | repromin per probe |"
    );
    let _ = writeln!(md, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in rows {
        match r.floor_ms {
            Some((fork, floor)) => {
                let _ = writeln!(
                    md,
                    "| {} | {:.3} | {fork:.3} | {floor:.3} | {:.3} | {:.0}% | {:.3} |",
                    thousands(r.files as u64),
                    r.bare_ms,
                    floor - fork,
                    (floor - fork) / r.bare_ms * 100.0,
                    r.loop_probe_ms
                );
            }
            None => {
                let _ = writeln!(
                    md,
                    "| {} | {:.3} | not measured: no overlay here | | | | {:.3} |",
                    thousands(r.files as u64),
                    r.bare_ms,
                    r.loop_probe_ms
                );
            }
        }
    }
    let _ = writeln!(md);
}

// ---------------------------------------------------------------------------
// bytes
// ---------------------------------------------------------------------------

struct BytesRow {
    name: &'static str,
    input_len: usize,
    final_len: usize,
    attempts: u64,
    runs: u32,
    secs: f64,
    candidates_per_s: f64,
    mb_per_s: f64,
    allocations: u64,
}

/// Deterministic text-like bytes: words and newlines.
fn text_input(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..len)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if i % 61 == 60 {
                b'\n'
            } else if state.is_multiple_of(7) {
                b' '
            } else {
                b'a' + (state % 26) as u8
            }
        })
        .collect()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

type OracleFn = fn(&[u8]) -> bool;

fn bytes_bench() -> Res<Vec<BytesRow>> {
    let mut needle_4k = text_input(4096);
    needle_4k[1000..1006].copy_from_slice(b"NEEDLE");
    needle_4k[3000..3003].copy_from_slice(b"PIN");
    let mut needle_64k = text_input(65536);
    needle_64k[16000..16006].copy_from_slice(b"NEEDLE");
    needle_64k[48000..48003].copy_from_slice(b"PIN");
    let big = text_input(1 << 20);
    let small = text_input(16384);

    fn needles(c: &[u8]) -> bool {
        contains(c, b"NEEDLE") && contains(c, b"PIN")
    }
    fn at_least_1000(c: &[u8]) -> bool {
        c.len() >= 1000
    }
    fn only_whole(c: &[u8]) -> bool {
        c.len() == 16384
    }
    let workloads: [(&'static str, &Vec<u8>, OracleFn); 4] = [
        ("needles, 4 KiB", &needle_4k, needles),
        ("needles, 64 KiB", &needle_64k, needles),
        ("length >= 1000, 1 MiB", &big, at_least_1000),
        ("rejects all, 16 KiB", &small, only_whole),
    ];

    let mut rows = Vec::new();
    for (name, input, oracle) in workloads {
        let mut storage = Storage::new(Limits {
            max_input_bytes: input.len(),
        })
        .map_err(|e| format!("storage: {e}"))?;
        storage.activate().map_err(|e| format!("storage: {e}"))?;
        let settings = Settings::default();
        let mut runs = 0u32;
        let mut total_attempts = 0u64;
        let mut total_bytes = 0u64;
        let mut total_allocations = 0u64;
        let mut final_len = 0usize;
        let mut attempts = 0u64;
        let start = Instant::now();
        while runs < 3 || start.elapsed() < Duration::from_secs(1) {
            // Bytes copied into candidates: every call but the first, which gets the
            // input itself.
            let mut assembled = 0u64;
            let mut first = true;
            let (outcome, allocations, _) = counting_alloc::counted(|| {
                let result = reduce(&mut storage, input, &settings, |c| {
                    if !std::mem::take(&mut first) {
                        assembled += c.len() as u64;
                    }
                    Ok::<Interesting, std::convert::Infallible>(oracle(black_box(c)).into())
                });
                result.map(|o| (o.bytes.len(), o.attempts))
            });
            let (len, n) = outcome.map_err(|e| format!("{name}: {e:?}"))?;
            final_len = len;
            attempts = n;
            total_attempts += n;
            total_bytes += assembled;
            total_allocations += allocations as u64;
            runs += 1;
        }
        let secs = start.elapsed().as_secs_f64();
        eprintln!("bytes {name}: {runs} runs in {secs:.2} s");
        rows.push(BytesRow {
            name,
            input_len: input.len(),
            final_len,
            attempts,
            runs,
            secs,
            candidates_per_s: total_attempts as f64 / secs,
            mb_per_s: total_bytes as f64 / secs / 1e6,
            allocations: total_allocations,
        });
    }
    Ok(rows)
}

fn write_bytes(md: &mut String, rows: &[BytesRow]) {
    let _ = writeln!(
        md,
        "| workload | input bytes | final bytes | candidates per run | runs | candidates/s | MB assembled/s | allocations in the loop |"
    );
    let _ = writeln!(
        md,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {:.0} | {} |",
            r.name,
            thousands(r.input_len as u64),
            thousands(r.final_len as u64),
            thousands(r.attempts),
            r.runs,
            thousands(r.candidates_per_s as u64),
            r.mb_per_s,
            r.allocations
        );
    }
    let total: f64 = rows.iter().map(|r| r.secs).sum();
    let _ = writeln!(
        md,
        "\n({total:.1} s in all; the oracle's own time is included.)\n"
    );
}

// ---------------------------------------------------------------------------
// all
// ---------------------------------------------------------------------------

const BEGIN: &str = "<!-- results:begin (written by `cargo bench --bench harness -- all`) -->";
const END: &str = "<!-- results:end -->";

fn all(cases_dir: &Path, opts: &PeerOpts, ov: &OverheadOpts, out: &Path) -> Res<()> {
    let started = Instant::now();
    let report = peers(cases_dir, opts)?;
    let overhead_rows = overhead(ov, &opts.repromin)?;
    let bytes_rows = bytes_bench()?;

    let mut md = String::new();
    let _ = writeln!(md, "{BEGIN}\n");
    let _ = writeln!(md, "## Results\n");
    let _ = writeln!(md, "{}\n", machine_line());
    let _ = writeln!(md, "## Targets\n");
    write_targets(&mut md, &report, &overhead_rows);
    let _ = writeln!(md, "## Peers, case by case\n");
    report.write_markdown(&mut md, opts);
    let _ = writeln!(md, "## Per-probe overhead\n");
    write_overhead(&mut md, &overhead_rows, ov);
    let _ = writeln!(md, "## The bytes engine in process\n");
    write_bytes(&mut md, &bytes_rows);
    let _ = writeln!(
        md,
        "(The whole run took {:.0} s.)\n",
        started.elapsed().as_secs_f64()
    );
    let _ = write!(md, "{END}");

    let doc = match fs::read_to_string(out) {
        Ok(old) => match (old.find(BEGIN), old.find(END)) {
            (Some(b), Some(e)) if b < e => {
                format!("{}{md}{}", &old[..b], &old[e + END.len()..])
            }
            _ => format!("{old}\n{md}\n"),
        },
        Err(_) => format!("# Benchmarks\n\n{md}\n"),
    };
    emit(Some(out), &doc)
}

fn machine_line() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let load = fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into());
    format!("Machine: {cpus} CPUs ({model}); load average {load} when the run ended.")
}

fn write_targets(md: &mut String, report: &PeerReport, overhead_rows: &[OverheadRow]) {
    let _ = writeln!(md, "| target | measured | met |");
    let _ = writeln!(md, "| --- | --- | --- |");
    let mark = |ok: bool| if ok { "**met**" } else { "not met" };
    let hi = report.jobs.iter().copied().max().unwrap_or(1);
    for cr in &report.cases {
        let t = &cr.case.json.targets;
        let Some(row) = cr.repromin(hi) else {
            continue;
        };
        let name = &cr.case.name;
        if let Some(max) = t.max_bytes {
            let b = row.bytes.unwrap_or(u64::MAX);
            let ok = b <= max && row.valid == Some(true);
            let _ = writeln!(
                md,
                "| {name}: at most {max} bytes | {} bytes (-j{hi}) | {} |",
                row.bytes.map_or("-".into(), thousands),
                mark(ok)
            );
        }
        if let Some(max) = t.max_calls {
            let _ = writeln!(
                md,
                "| {name}: at most {max} oracle calls | {} calls (-j{hi}) | {} |",
                row.calls,
                mark(row.calls <= max)
            );
        }
        if let Some(max) = t.max_files {
            let f = row.files.unwrap_or(u64::MAX);
            let _ = writeln!(
                md,
                "| {name}: at most {max} files | {} files, {} bytes (-j{hi}) | {} |",
                opt(row.files),
                row.bytes.map_or("-".into(), thousands),
                mark(f <= max && row.valid == Some(true))
            );
        }
        if t.faster_than_peers {
            let mine = best_time(cr, Tool::Repromin);
            let mut slower_than = Vec::new();
            let mut peers_seen = 0;
            for tool in PEERS {
                if let Some(theirs) = best_time(cr, tool) {
                    peers_seen += 1;
                    if mine.is_none_or(|m| m >= theirs) {
                        slower_than.push(format!("{} {theirs:.1} s", tool.name()));
                    }
                }
            }
            let measured = match (mine, slower_than.is_empty()) {
                (Some(m), true) => format!("repromin {m:.1} s, faster than all {peers_seen} peers"),
                (Some(m), false) => format!(
                    "repromin {m:.1} s; not faster than {}",
                    slower_than.join(", ")
                ),
                (None, _) => "repromin did not run".into(),
            };
            let _ = writeln!(
                md,
                "| {name}: less wall time than every peer | {measured} | {} |",
                mark(mine.is_some() && slower_than.is_empty() && peers_seen > 0)
            );
        }
        if let Some(line) = smallest_and_fastest(cr, row, hi) {
            let _ = writeln!(md, "{line}");
        }
        if t.expected {
            let all: Vec<String> = cr
                .rows
                .iter()
                .filter(|r| r.tool == Tool::Repromin)
                .map(|r| format!("-j{}: {}", r.jobs, yes_no(r.expected)))
                .collect();
            let ok = cr
                .rows
                .iter()
                .filter(|r| r.tool == Tool::Repromin)
                .all(|r| r.expected == Some(true));
            let _ = writeln!(
                md,
                "| {name}: reaches the expected output | {} | {} |",
                all.join(", "),
                mark(ok)
            );
        }
    }
    for cr in &report.cases {
        if let Some(s) = cr.speedup(&report.jobs) {
            let oracle_ms = cr.oracle.as_secs_f64() * 1000.0;
            let met = if oracle_ms > SPEEDUP_ORACLE_MS {
                mark(s.factor >= 1.7)
            } else {
                "not a target (oracle under 50 ms)"
            };
            let _ = writeln!(
                md,
                "| {}: -j{} at least 1.7x faster than -j{} (oracle {oracle_ms:.0} ms) | {:.2}x ({:.1} s -> {:.1} s) | {met} |",
                cr.case.name, s.hi, s.lo, s.factor, s.lo_wall, s.hi_wall,
            );
        }
    }
    for r in overhead_rows.iter().filter(|r| r.files >= 10_000) {
        let _ = writeln!(
            md,
            "| per-probe overhead under 10% on {} files | {:.2} ms per probe vs {:.2} ms bare: {:.0}% | {} |",
            thousands(r.files as u64),
            r.per_probe_ms,
            r.bare_ms,
            r.overhead_pct,
            mark(r.overhead_pct < 10.0)
        );
    }
    let _ = writeln!(md);
}

/// Every tool but repromin.
const PEERS: [Tool; 5] = [
    Tool::Cvise,
    Tool::Creduce,
    Tool::Picire,
    Tool::Lithium,
    Tool::Shrinkray,
];

/// The speed-up target applies to cases whose oracle takes longer than this.
const SPEEDUP_ORACLE_MS: f64 = 50.0;

/// The target row "no larger than the best peer, and faster than every peer reaching that
/// size": `None` when no peer gave a result that is still interesting.
fn smallest_and_fastest(cr: &CaseReport, row: &Row, hi: u32) -> Option<String> {
    let peer_rows: Vec<&Row> = cr
        .rows
        .iter()
        .filter(|r| r.tool != Tool::Repromin && r.valid == Some(true))
        .collect();
    let best_peer = peer_rows.iter().filter_map(|r| r.bytes).min()?;
    let best_tools: Vec<&str> = {
        let mut names: Vec<&str> = peer_rows
            .iter()
            .filter(|r| r.bytes == Some(best_peer))
            .map(|r| r.tool.name())
            .collect();
        names.dedup();
        names
    };
    let name = &cr.case.name;
    // A repromin result that is missing or no longer interesting fails the target; it is
    // never left out of the table.
    let (Some(mine_bytes), Some(mine_time)) = (
        row.bytes.filter(|_| row.valid == Some(true)),
        best_time(cr, Tool::Repromin),
    ) else {
        return Some(format!(
            "| {name}: no larger than the best peer, faster than every peer reaching that size | no interesting result from repromin (-j{hi}) against {} bytes | not met |",
            thousands(best_peer)
        ));
    };
    let size_ok = mine_bytes <= best_peer;
    // The peers whose result is at least as small as repromin's, with their best time.
    let mut rivals = Vec::new();
    for tool in PEERS {
        let reached = cr.rows.iter().any(|r| {
            r.tool == tool && r.valid == Some(true) && r.bytes.is_some_and(|b| b <= mine_bytes)
        });
        if reached && let Some(t) = best_time(cr, tool) {
            rivals.push((tool.name(), t));
        }
    }
    let slower: Vec<String> = rivals
        .iter()
        .filter(|(_, t)| mine_time >= *t)
        .map(|(n, t)| format!("{n} {t:.1} s"))
        .collect();
    let time_text = if rivals.is_empty() {
        "no peer reaches that size".to_string()
    } else if slower.is_empty() {
        format!(
            "{mine_time:.1} s, faster than {}",
            rivals
                .iter()
                .map(|(n, t)| format!("{n} {t:.1} s"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        format!("{mine_time:.1} s; not faster than {}", slower.join(", "))
    };
    let mark = |ok: bool| if ok { "**met**" } else { "not met" };
    Some(format!(
        "| {name}: no larger than the best peer, faster than every peer reaching that size | {} bytes (-j{hi}) against {} bytes ({}); {time_text} | {} |",
        thousands(mine_bytes),
        thousands(best_peer),
        best_tools.join(", "),
        mark(size_ok && slower.is_empty())
    ))
}

/// A tool's best time on a case: its wall time when it exited by itself, else the time
/// its final size was first seen (or the limit).
fn best_time(cr: &CaseReport, tool: Tool) -> Option<f64> {
    cr.rows
        .iter()
        .filter(|r| r.tool == tool && r.valid == Some(true))
        .map(|r| match (r.exited, r.final_seen) {
            (false, Some((t, _))) => t.as_secs_f64(),
            _ => r.wall.as_secs_f64(),
        })
        .min_by(f64::total_cmp)
}
