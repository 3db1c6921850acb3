//! `peers`: repromin and the installed peer reducers on the same cases and oracles, each
//! in a fresh copy, and the Markdown tables of the results.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use regex::Regex;
use repromin::runner::Termination;

use crate::cases::{Case, load_cases};
use crate::process::{
    copy_tree, counter_len, describe_status, measure, read_tree, run_limited, sh_quote,
    write_executable,
};
use crate::tools::{Installed, Tool, detect};
use crate::{PeerOpts, Res};

pub(crate) struct Row {
    pub(crate) tool: Tool,
    pub(crate) jobs: u32,
    pub(crate) wall: Duration,
    pub(crate) calls: u64,
    pub(crate) bytes: Option<u64>,
    pub(crate) files: Option<u64>,
    pub(crate) exited: bool,
    pub(crate) exit_note: String,
    pub(crate) valid: Option<bool>,
    pub(crate) expected: Option<bool>,
    /// Time and calls at which the final size was first seen (pollable tools).
    pub(crate) final_seen: Option<(Duration, u64)>,
    pub(crate) note: String,
}

pub(crate) struct CaseReport {
    pub(crate) case: Case,
    /// The oracle's time per call on the input.
    pub(crate) oracle: Duration,
    /// The machine's own speed-up for this oracle: the same runs on the input one at a
    /// time, then as many at a time as repromin's highest `--jobs` (when it has two).
    pub(crate) machine: Option<f64>,
    pub(crate) rows: Vec<Row>,
    pub(crate) skipped: Vec<String>,
}

pub(crate) struct PeerReport {
    pub(crate) cases: Vec<CaseReport>,
    pub(crate) installed: Vec<(Tool, String)>,
    pub(crate) missing: Vec<(String, String)>,
    pub(crate) timeout_s: u64,
    pub(crate) jobs: Vec<u32>,
}

pub(crate) fn peers(cases_dir: &Path, opts: &PeerOpts) -> Res<PeerReport> {
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
        let hi = opts.jobs.iter().copied().max().unwrap_or(1);
        let machine = if hi > 1 && opts.jobs.len() > 1 {
            let factor = machine_speedup(&case, hi)?;
            eprintln!(
                "{}: the oracle {hi} at a time: {factor:.2}x one at a time",
                case.name
            );
            Some(factor)
        } else {
            None
        };
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
            machine,
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

pub(crate) fn opt(v: Option<u64>) -> String {
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
pub(crate) const REDUCE_ARGS: [&str; 6] = [
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
            // The file itself is SOURCE, as a C-Vise user would give it.
            fs::copy(input.join(file), work.join(file))?;
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
            sh_quote(&match (tool, &case.json.repromin_command) {
                (Tool::Repromin, Some(script)) => case.dir.join(script),
                _ => case.oracle.clone(),
            })?
        ),
    )?;

    // C-Vise refuses a test case path with a directory in it; every tool runs in `work`.
    let target_rel = target.strip_prefix(&work)?.to_path_buf();
    let jobs_s = jobs.to_string();
    let mut cmd = Command::new(&found.program);
    match tool {
        Tool::Repromin => {
            let args: Vec<&str> = match case.single_file() {
                Some(file) => ["reduce", file]
                    .into_iter()
                    .chain(REDUCE_ARGS[2..].iter().copied())
                    .collect(),
                None => REDUCE_ARGS.to_vec(),
            };
            if case.json.repromin_command.is_some() {
                // The failing command itself: repromin learns the failure's identity.
                cmd.args(args.iter().filter(|a| !matches!(**a, "--exit-code" | "0")));
            } else {
                cmd.args(&args);
            }
            if let Some(level) = opts.repromin_level.as_ref() {
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

/// Runs of the oracle behind [`machine_speedup`], per stream.
const SPEEDUP_RUNS: u32 = 6;

/// The machine's own speed-up for the case's oracle: `SPEEDUP_RUNS × at_once` runs on
/// fresh copies of the input, one at a time, then `at_once` at a time; the first wall time
/// over the second.
fn machine_speedup(case: &Case, at_once: u32) -> Res<f64> {
    let input = case.dir.join("input");
    let input = match case.single_file() {
        Some(file) => input.join(file),
        None => input,
    };
    let runs = SPEEDUP_RUNS * at_once;
    let started = std::time::Instant::now();
    for _ in 0..runs {
        timed_oracle(case, &input)?;
    }
    let one = started.elapsed();
    let started = std::time::Instant::now();
    let failed = std::thread::scope(|scope| {
        let streams: Vec<_> = (0..at_once)
            .map(|_| {
                scope.spawn(|| {
                    (0..SPEEDUP_RUNS)
                        .map(|_| {
                            timed_oracle(case, &input)
                                .map(|_| ())
                                .map_err(|e| e.to_string())
                        })
                        .find_map(Result::err)
                })
            })
            .collect();
        streams.into_iter().find_map(|s| {
            s.join()
                .unwrap_or_else(|_| Some("a stream panicked".into()))
        })
    });
    if let Some(why) = failed {
        return Err(why.into());
    }
    let parallel = started.elapsed();
    Ok(one.as_secs_f64() / parallel.as_secs_f64())
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

pub(crate) fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
}

pub(crate) fn thousands(n: u64) -> String {
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
    pub(crate) fn write_markdown(&self, md: &mut String, opts: &PeerOpts) {
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
            if let Some(machine) = self.machine {
                let _ = writeln!(
                    md,
                    "The oracle {} at a time on this machine: {machine:.2}x; repromin reaches {:.0} % of that.",
                    s.hi,
                    100.0 * s.factor / machine
                );
            }
        }
        let _ = writeln!(md);
    }

    pub(crate) fn repromin(&self, jobs: u32) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.tool == Tool::Repromin && r.jobs == jobs)
    }

    /// repromin's speed-up from the lowest to the highest jobs value, when both ran.
    pub(crate) fn speedup(&self, jobs: &[u32]) -> Option<Speedup> {
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

pub(crate) struct Speedup {
    pub(crate) lo: u32,
    pub(crate) hi: u32,
    pub(crate) lo_wall: f64,
    pub(crate) hi_wall: f64,
    pub(crate) factor: f64,
}
