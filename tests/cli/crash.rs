//! The crash-test harness: the real binary, killed with SIGKILL at random instants of its
//! life, again and again; after each kill, what it left and the next run are checked.
//!
//! - `reduce` (with `--jobs 2`, on a small tree with a real failing command): killed at a
//!   random instant between its start and its end, or, every fourth kill, while the test
//!   hook holds it at a random point of publication. After the next `reduce` with the same
//!   arguments has recovered: OUTPUT is absent or whole (its fingerprint is its report's,
//!   its sidecar complete, its files those of an uninterrupted run), no staging directory
//!   is left beside it, no scratch directory in the run's own `TMPDIR`, no process of the
//!   killed run lives, SOURCE is unchanged, and the next run succeeded: it published (exit
//!   0), or, when the killed run had published, refused the existing OUTPUT (exit 7), and
//!   then a run into a fresh OUTPUT publishes.
//! - `exec --side base` and `exec --side reduce` on a small git repository with a shell test
//!   runner: after a kill, no process lives, every report left is whole, and the next `exec`
//!   writes the same reports as an uninterrupted run and exits 0, leaving no scratch
//!   directory, no registered worktree, and the repository's work tree and refs unchanged.
//!
//! Every command of a run waits on a hold (see [`HOLD_VAR`]) that the harness sets just
//! before a kill, so that a command of the killed run cannot end by itself: one still
//! there after the grace period was not ended by repromin.
//!
//! The full runs (100 kills each) are ignored by default; a few kills of each run in the
//! suite. `REPROMIN_CRASH_KILLS` sets a full run's number of kills, and
//! `REPROMIN_CRASH_SEED` replays the seed that a run printed. See docs/reliability.md.

use std::collections::BTreeMap;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use repromin::exit_code::Exit;
use repromin::gate::{certificate, encode};

use crate::kills::{exec_args, scratch_dirs, worktrees};
use crate::util::{
    Area, GitRepo, SH_RUNNER, bin, clean_env, files, processes_where, run_env, stderr,
};

/// The number of kills of a full run.
const KILLS_VAR: &str = "REPROMIN_CRASH_KILLS";
/// The seed to replay.
const SEED_VAR: &str = "REPROMIN_CRASH_SEED";
/// The variable that marks every process of one killed run: repromin passes its
/// environment on to the commands it runs, to git and to its guardian.
const MARK_VAR: &str = "REPROMIN_CRASH_MARK";
/// The log the commands append a line to when they start (and, in a gate side, end).
const LOG_VAR: &str = "CRASH_LOG";
/// A file that, while it exists, holds every command at the end of its wait, in a
/// subshell (a child of the command's leader, so that ending the leader alone does not
/// end it). The harness makes it just before a kill: a command of the killed run cannot
/// then end by itself.
const HOLD_VAR: &str = "CRASH_HOLD";
/// How long a process of a killed run may take to die.
const GRACE: Duration = Duration::from_secs(5);

/// SplitMix64: the kill plan is a function of the seed.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A fraction in [0, 1).
    pub(crate) fn fraction(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One harness run: its kills, seed and tallies.
struct Campaign {
    what: &'static str,
    kills: usize,
    seed: u64,
    rng: Rng,
    phases: BTreeMap<String, usize>,
    failures: Vec<String>,
    started: Instant,
    area: Area,
    /// The lives of uninterrupted runs (the first one, then every next run that ran to
    /// its end): kills are spread over their median.
    lives: Vec<Duration>,
}

impl Campaign {
    /// `kills` kills (a full run: `REPROMIN_CRASH_KILLS`, else `kills`), with the seed of
    /// `REPROMIN_CRASH_SEED` or a new one, printed.
    fn new(what: &'static str, kills: usize, full: bool) -> Campaign {
        let var = |name: &str| std::env::var(name).ok().map(|v| v.trim().to_string());
        let kills = match var(KILLS_VAR).filter(|_| full) {
            Some(text) => text
                .parse()
                .unwrap_or_else(|_| panic!("{KILLS_VAR}={text} is not a number")),
            None => kills,
        };
        let seed = match var(SEED_VAR) {
            Some(text) => text
                .parse()
                .unwrap_or_else(|_| panic!("{SEED_VAR}={text} is not a number")),
            None => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64;
                nanos ^ u64::from(std::process::id()).rotate_left(32)
            }
        };
        eprintln!("crash test of {what}: {kills} kills, seed {seed} (replay: {SEED_VAR}={seed})");
        Campaign {
            what,
            kills,
            seed,
            rng: Rng(seed),
            phases: BTreeMap::new(),
            failures: Vec::new(),
            started: Instant::now(),
            area: Area::new(),
            lives: Vec::new(),
        }
    }

    /// How long an uninterrupted run lives: the median of those seen so far.
    fn life(&self) -> Duration {
        let mut lives = self.lives.clone();
        lives.sort();
        lives.get(lives.len() / 2).copied().unwrap_or_default()
    }

    /// A random instant of a life.
    fn instant(&mut self) -> Duration {
        self.life().mul_f64(self.rng.fraction())
    }

    /// Runs the binary to its end; a success counts as a life.
    fn run_to_end(&mut self, args: &[String], cwd: &Path, env: &[(String, String)]) -> Output {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let started = Instant::now();
        let o = run_env(&args, cwd, &refs(env));
        if o.status.success() {
            self.lives.push(started.elapsed());
        }
        o
    }

    /// The directory of kill `i`, with its own temp dir: `(dir, tmp)`.
    fn iteration(&self, i: usize) -> (PathBuf, PathBuf) {
        let dir = self.area.path(&format!("kill-{i:03}"));
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        (dir, tmp)
    }

    /// A value that no other process on the machine has in its environment.
    fn mark(&self, i: usize) -> String {
        format!("{}-{}-{i}", std::process::id(), self.seed)
    }

    fn record(&mut self, i: usize, phase: &str, problems: Vec<String>) {
        *self.phases.entry(phase.to_string()).or_default() += 1;
        for problem in problems {
            eprintln!("kill {i} ({phase}): {problem}");
            self.failures.push(format!("kill {i} ({phase}): {problem}"));
        }
    }

    /// Prints the figures; fails with every problem found, keeping the area to look at.
    fn finish(self) {
        eprintln!(
            "crash test of {}: {} kills in {:.0} s (a run lives {:.2} s), seed {}, {} problems; kills per phase:",
            self.what,
            self.kills,
            self.started.elapsed().as_secs_f64(),
            self.life().as_secs_f64(),
            self.seed,
            self.failures.len()
        );
        for (phase, n) in &self.phases {
            eprintln!("  {n:>4}  {phase}");
        }
        if !self.failures.is_empty() {
            let kept = self.area.dir.keep();
            panic!(
                "{} problems (seed {}; the runs are kept in {}):\n{}",
                self.failures.len(),
                self.seed,
                kept.display(),
                self.failures.join("\n")
            );
        }
    }
}

/// Starts the binary in a process group of its own, with its stderr in `stderr`.
pub(crate) fn spawn(args: &[String], cwd: &Path, env: &[(String, String)], stderr: &Path) -> Child {
    let mut command = Command::new(bin());
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(stderr).unwrap())
        .process_group(0);
    clean_env(&mut command);
    for (name, value) in env {
        command.env(name, value);
    }
    command.spawn().unwrap()
}

/// The live processes whose environment has `MARK_VAR=mark`: ids and command lines.
fn marked(mark: &str) -> Vec<(i32, String)> {
    let needle = format!("{MARK_VAR}={mark}");
    processes_where(|dir| {
        std::fs::read(dir.join("environ"))
            .unwrap_or_default()
            .split(|b| *b == 0)
            .any(|var| var == needle.as_bytes())
    })
}

/// Holds every command of a run that reaches its wait from now on, then SIGKILLs `child`
/// (unless it has ended and been reaped) and reaps it. A command of the killed run that
/// is still there later was not ended by repromin's mechanisms, however short its life
/// would have been without the hold.
fn sigkill(child: &mut Child, hold: &Path) -> ExitStatus {
    std::fs::write(hold, "").unwrap();
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
    child.wait().unwrap()
}

/// Kills `child` after `delay`; whether it had ended by itself before.
fn kill_after(child: &mut Child, hold: &Path, delay: Duration) -> bool {
    std::thread::sleep(delay);
    sigkill(child, hold).signal() != Some(Signal::SIGKILL as i32)
}

/// Kills `child` once its stderr says that a failpoint holds it at `point`.
fn kill_when_paused(
    child: &mut Child,
    hold: &Path,
    stderr: &Path,
    point: &str,
) -> Result<(), String> {
    let wanted = crate::util::paused_at(point);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let text = std::fs::read_to_string(stderr).unwrap_or_default();
        if text.lines().any(|l| l == wanted) {
            sigkill(child, hold);
            return Ok(());
        }
        let ended = child.try_wait().unwrap().is_some();
        if ended || Instant::now() > deadline {
            sigkill(child, hold);
            return Err(format!("never paused at {point}; its stderr:\n{text}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The processes of run `mark` still there after [`GRACE`]. Then the hold is lifted and
/// they are killed, so that a failure leaves nothing running.
fn survivors(mark: &str, hold: &Path) -> Vec<String> {
    let until = Instant::now() + GRACE;
    let mut left = marked(mark);
    while !left.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
        left = marked(mark);
    }
    std::fs::remove_file(hold).unwrap();
    for (pid, _) in &left {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    left.into_iter()
        .map(|(pid, cmdline)| format!("{pid} {cmdline}"))
        .collect()
}

/// The `repromin-…` entries of `tmp`, with the process their marker names.
fn scratch_left(tmp: &Path) -> Vec<String> {
    scratch_dirs(tmp)
        .iter()
        .map(|dir| {
            let marker = std::fs::read_to_string(dir.join(".repromin-scratch")).unwrap_or_default();
            let owner = marker
                .lines()
                .find(|l| l.starts_with("pid "))
                .unwrap_or("no marker");
            format!("{} ({owner})", dir.display())
        })
        .collect()
}

/// The environment of a run: its own temp dir, the log its commands write, and the hold
/// (`hold` beside the log).
fn env_of(tmp: &Path, log: &Path) -> Vec<(String, String)> {
    vec![
        ("TMPDIR".to_string(), tmp.display().to_string()),
        (LOG_VAR.to_string(), log.display().to_string()),
        (
            HOLD_VAR.to_string(),
            log.with_file_name("hold").display().to_string(),
        ),
    ]
}

fn refs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn code(o: &std::process::Output) -> String {
    o.status
        .code()
        .map_or_else(|| format!("{}", o.status), |c| c.to_string())
}

// The reduction.

/// A command that fails while `main.txt` has `BUG` and `lib/m2.txt` has `line 3`; each run
/// logs its working directory and takes a moment, so that kills land inside runs too.
const REDUCE_SCRIPT: &str = "echo \"$PWD\" >> \"$CRASH_LOG\"; \
     (sleep 0.05; while [ -e \"$CRASH_HOLD\" ]; do sleep 0.01; done); \
     if grep -q BUG main.txt && grep -q 'line 3' lib/m2.txt; then \
     echo 'error: BUG in main.txt'; exit 1; fi";

/// The failpoints of publication.
const POINTS: [&str; 4] = [
    "publish:staged",
    "publish:before-payload",
    "publish:after-payload",
    "publish:after-sidecar",
];

fn reduce_args(output: &Path) -> Vec<String> {
    let output = output.display().to_string();
    let args = [
        "reduce",
        "src",
        &output,
        "--jobs",
        "2",
        "--no-progress",
        "--",
        "sh",
        "-c",
        REDUCE_SCRIPT,
    ];
    args.map(String::from).to_vec()
}

/// What an uninterrupted reduction gives.
struct Expected {
    payload: BTreeMap<String, String>,
    sidecar: Vec<String>,
    commands: usize,
}

/// The file names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|items| {
            items
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn fingerprint(path: &Path) -> Result<String, String> {
    repromin::tree::scan_exact(path)
        .map(|tree| tree.fingerprint().to_string())
        .map_err(|e| format!("cannot scan {}: {e}", path.display()))
}

/// Whether `output` is whole: its sidecar complete, its fingerprint its report's, its
/// files those of an uninterrupted run.
fn whole(output: &Path, expected: &Expected) -> Result<(), String> {
    if !output.is_dir() {
        return Err(format!("{} is missing", output.display()));
    }
    let mut name = output.file_name().unwrap().to_os_string();
    name.push(".repromin");
    let sidecar = output.with_file_name(name);
    if names(&sidecar) != expected.sidecar {
        return Err(format!(
            "the sidecar has {:?}, not {:?}",
            names(&sidecar),
            expected.sidecar
        ));
    }
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sidecar.join("report.json")).unwrap_or_default())
            .map_err(|e| format!("report.json does not parse: {e}"))?;
    let found = fingerprint(output)?;
    if report["output"]["tree_sha256_v2"] != found.as_str() {
        return Err(format!(
            "the fingerprint of OUTPUT is {found}, its report says {}",
            report["output"]["tree_sha256_v2"]
        ));
    }
    if files(output) != expected.payload {
        return Err(format!(
            "OUTPUT holds {:?}, an uninterrupted run {:?}",
            files(output),
            expected.payload
        ));
    }
    Ok(())
}

/// Where in its life the killed reduction was, from what it left: OUTPUT or a staging
/// directory, else the runs its command logged (`baseline1`, `baseline2` and `empty` are
/// the baseline's; the last of an uninterrupted run's commands is the final check).
fn reduce_phase(dir: &Path, log: &Path, expected: &Expected) -> &'static str {
    let publishing = names(dir)
        .iter()
        .any(|n| n == "out" || n.starts_with(".repromin-staging-"));
    if publishing {
        return "publication";
    }
    let runs = log_lines(log);
    let baseline = |line: &String| {
        line.split('/')
            .any(|part| ["baseline1", "baseline2", "empty"].contains(&part))
    };
    if runs.is_empty() {
        "start (before the baseline)"
    } else if runs.iter().all(baseline) {
        "baseline"
    } else if runs.len() >= expected.commands {
        "final check"
    } else {
        "passes"
    }
}

/// A source tree of a few files.
fn reduce_source(area: &Area) -> PathBuf {
    let numbered = (1..=12).map(|n| format!("line {n}\n")).collect::<String>();
    area.write(
        "src",
        &[
            ("main.txt", "import lib\nfirst\nBUG here\nlast\n"),
            ("lib/m1.txt", &numbered),
            ("lib/m2.txt", &numbered),
            ("lib/m3.txt", &numbered),
            ("lib/m4.txt", &numbered),
            ("docs/readme.md", "doc\nmore\n"),
        ],
    )
}

/// Kills a reduction `kills` times and checks each time.
fn reduce_campaign(kills: usize, full: bool) {
    if !crate::util::failpoints() {
        return;
    }
    let mut campaign = Campaign::new("reduce", kills, full);
    let src = reduce_source(&campaign.area);
    let root = campaign.area.dir.path().to_path_buf();
    let source_before = (files(&src), fingerprint(&src).unwrap());

    // An uninterrupted run: what every published OUTPUT must be, and how long a life is.
    let calibration = campaign.area.path("calibration");
    let tmp = calibration.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = calibration.join("out");
    let log = calibration.join("log");
    let o = campaign.run_to_end(&reduce_args(&out), &root, &env_of(&tmp, &log));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut sidecar = out.file_name().unwrap().to_os_string();
    sidecar.push(".repromin");
    let expected = Expected {
        payload: files(&out),
        sidecar: names(&out.with_file_name(sidecar)),
        commands: log_lines(&log).len(),
    };
    eprintln!(
        "an uninterrupted run: {} commands in {:.2} s",
        expected.commands,
        campaign.life().as_secs_f64()
    );

    for i in 0..campaign.kills {
        let (dir, tmp) = campaign.iteration(i);
        let out = dir.join("out");
        let log = dir.join("log");
        let hold = dir.join("hold");
        let args = reduce_args(&out);
        let mark = campaign.mark(i);
        let point = (i % 4 == 3).then(|| POINTS[campaign.rng.below(POINTS.len())]);
        let delay = campaign.instant();
        let mut env = env_of(&tmp, &log);
        env.push((MARK_VAR.to_string(), mark.clone()));
        if let Some(point) = point {
            env.push((crate::util::FAILPOINT.to_string(), point.to_string()));
        }
        let killed_err = dir.join("killed.stderr");
        let mut child = spawn(&args, &root, &env, &killed_err);
        let pid = child.id();
        let mut problems = Vec::new();
        let phase = match point {
            Some(point) => {
                if let Err(why) = kill_when_paused(&mut child, &hold, &killed_err, point) {
                    problems.push(why);
                }
                format!("publication (held at {point})")
            }
            None if kill_after(&mut child, &hold, delay) => "ended before the kill".to_string(),
            None => reduce_phase(&dir, &log, &expected).to_string(),
        };
        let left = survivors(&mark, &hold);
        if !left.is_empty() {
            problems.push(format!("outlived repromin {pid}: {left:?}"));
        }
        let published = out.symlink_metadata().is_ok();

        // The next run, with the same arguments.
        let next = campaign.run_to_end(&args, &root, &env_of(&tmp, &dir.join("next.log")));
        let wanted = if published {
            Exit::OutputExists as i32
        } else {
            0
        };
        if next.status.code() != Some(wanted) {
            problems.push(format!(
                "the next run exited with {}, not {wanted}; its stderr:\n{}",
                code(&next),
                stderr(&next)
            ));
        }
        if let Err(why) = whole(&out, &expected) {
            problems.push(format!("after the next run: {why}"));
        }
        let staging: Vec<String> = names(&dir)
            .into_iter()
            .filter(|n| n.starts_with(".repromin-staging-"))
            .collect();
        if !staging.is_empty() {
            problems.push(format!("left beside OUTPUT: {staging:?}"));
        }
        let scratch = scratch_left(&tmp);
        if !scratch.is_empty() {
            problems.push(format!("left in TMPDIR: {scratch:?}"));
        }
        let source_after = (files(&src), fingerprint(&src).unwrap_or_default());
        if source_after != source_before {
            problems.push("SOURCE changed".to_string());
        }
        if published {
            // The killed run's result stands; a run into a fresh OUTPUT publishes.
            let fresh = dir.join("fresh");
            let o = campaign.run_to_end(
                &reduce_args(&fresh),
                &root,
                &env_of(&tmp, &dir.join("fresh.log")),
            );
            if !o.status.success() {
                problems.push(format!(
                    "a run into a fresh OUTPUT exited with {}: {}",
                    code(&o),
                    stderr(&o)
                ));
            }
            if let Err(why) = whole(&fresh, &expected) {
                problems.push(format!("the fresh OUTPUT: {why}"));
            }
        }
        let when = match point {
            Some(point) => format!("held at {point}"),
            None => format!("at {} ms", delay.as_millis()),
        };
        eprintln!("kill {i}: {when}, {phase}; {} problems", problems.len());
        campaign.record(i, &phase, problems);
    }
    campaign.finish();
}

#[test]
fn a_reduction_killed_at_random_instants_loses_and_leaves_nothing() {
    reduce_campaign(5, false);
}

#[test]
#[ignore = "the full crash test (100 kills, minutes): see docs/reliability.md"]
fn crash_test_reduce() {
    reduce_campaign(100, true);
}

// The gate's sides.

/// The install step and the test command log a line each; both take a moment.
const EXEC_INSTALL: &str = "echo install >> \"$CRASH_LOG\"; \
     (sleep 0.2; while [ -e \"$CRASH_HOLD\" ]; do sleep 0.01; done)";
const EXEC_COMMAND: &str = "echo test >> \"$CRASH_LOG\"; \
     (sleep 0.1; while [ -e \"$CRASH_HOLD\" ]; do sleep 0.01; done); \
     sh run_tests.sh {report} {tests}; echo end >> \"$CRASH_LOG\"";

/// Holdout runs of the reduce side.
const HOLDOUT_RUNS: usize = 5;

/// A repository whose merge base has a bug in `calc.sh` and whose head fixes it and adds
/// two tests, one of which fails on the base; returns it with the base and the head.
fn exec_repo() -> (GitRepo, String, String) {
    let config = serde_json::json!({
        "version": 1,
        "tests": ["tests/t_*.sh"],
        "install": [EXEC_INSTALL],
        "command": EXEC_COMMAND,
        "report": "junit",
    })
    .to_string();
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", &config),
            ("run_tests.sh", SH_RUNNER),
            (
                "calc.sh",
                "add() { echo $(($1 - $2)); }\nmul() { echo $(($1 * $2)); }\n",
            ),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            (
                "calc.sh",
                "add() { echo $(($1 + $2)); }\nmul() { echo $(($1 * $2)); }\n",
            ),
            ("tests/t_add.sh", ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ]\n"),
            ("tests/t_mul.sh", ". ./calc.sh\n[ \"$(mul 2 3)\" = 6 ]\n"),
        ],
        "fix add, with tests",
    );
    (repo, base, head)
}

/// The repository's work tree, refs and HEAD: what no side may change.
fn repo_state(repo: &GitRepo) -> String {
    let mut state = String::new();
    for args in [
        &["rev-parse", "HEAD"][..],
        &["symbolic-ref", "HEAD"],
        &["for-each-ref", "--format=%(refname) %(objectname)"],
        &[
            "status",
            "--porcelain=v1",
            "--ignored",
            "--untracked-files=all",
        ],
        &["stash", "list"],
    ] {
        state.push_str(&repo.git(args));
        state.push('\n');
    }
    for (path, text) in files(repo.path()) {
        if !path.starts_with(".git/") {
            state.push_str(&format!("{path}\n{text}\n"));
        }
    }
    state
}

/// A report of `out`, decoded, with what changes from run to run left out; `Err` when it
/// is not a whole report.
fn exec_report(out: &Path, name: &str) -> Result<serde_json::Value, String> {
    let path = out.join(name);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))?;
    let value = match name.strip_suffix(".report") {
        Some("reduce") => certificate::decode(&text)
            .map(|r| serde_json::to_value(r).unwrap())
            .map_err(|e| format!("{name}: {e}"))?,
        Some(side) => encode::decode(&text, side, encode::TEST_REPORT_CAP)
            .map(|r| serde_json::to_value(r).unwrap())
            .map_err(|e| format!("{name}: {e}"))?,
        None => serde_json::from_str::<serde_json::Value>(&text)
            .map(|_| serde_json::Value::Null)
            .map_err(|e| format!("{name} is not JSON: {e}"))?,
    };
    let mut value = value;
    if let Some(outcome) = value
        .get_mut("outcome")
        .and_then(serde_json::Value::as_object_mut)
    {
        // Times, counts that depend on the timing of parallel runs, and the fingerprint
        // that covers modification times (`content_sha256` covers the tree itself).
        for volatile in ["reduce_ms", "attempts", "oracle_samples", "tree_sha256_v2"] {
            outcome.remove(volatile);
        }
    }
    // How long each rerun took.
    if let Some(reruns) = value
        .get_mut("reruns")
        .and_then(serde_json::Value::as_array_mut)
    {
        for rerun in reruns
            .iter_mut()
            .filter_map(serde_json::Value::as_object_mut)
        {
            rerun.remove("duration_ms");
        }
    }
    Ok(value)
}

/// Every report in `out`, decoded.
fn exec_reports(out: &Path) -> Result<BTreeMap<String, serde_json::Value>, String> {
    names(out)
        .into_iter()
        .map(|name| exec_report(out, &name).map(|value| (name, value)))
        .collect()
}

/// Where in its life the killed side was, from its log.
fn exec_phase(side: &str, log: &Path, runs: usize) -> String {
    let lines = log_lines(log);
    let count = |what: &str| lines.iter().filter(|l| *l == what).count();
    let (tests, ends) = (count("test"), count("end"));
    if lines.is_empty() {
        return "start (plan, worktree)".into();
    }
    if tests == 0 {
        return "install".into();
    }
    if side == "base" {
        // Two runs, `base` and `base-rerun`, then the reruns of the candidates; a run's
        // report is read after its `end`.
        return if ends < 2 {
            format!("test run {tests}")
        } else if ends < runs {
            format!("rerun {}", tests - 2)
        } else {
            "after the tests (reports, worktree removal)".into()
        };
    }
    if tests <= runs - HOLDOUT_RUNS {
        "reduction".into()
    } else if ends < runs {
        "holdout".into()
    } else {
        "after the last run (report, worktrees removal)".into()
    }
}

/// Kills `exec --side SIDE` `kills` times and checks each time.
fn exec_campaign(side: &'static str, kills: usize, full: bool) {
    let what = if side == "base" {
        "exec --side base"
    } else {
        "exec --side reduce"
    };
    let mut campaign = Campaign::new(what, kills, full);
    let (repo, base, head) = exec_repo();
    let repo_path = repo.path().display().to_string();
    let state_before = repo_state(&repo);
    let args_for = |out: &Path, base_report: &str| -> Vec<String> {
        let out = out.display().to_string();
        let mut args: Vec<String> = exec_args(side, &out, &base, &head, &repo_path)
            .into_iter()
            .map(String::from)
            .collect();
        if side == "reduce" {
            args.extend([
                "--base-report".to_string(),
                base_report.to_string(),
                "--holdout-runs".to_string(),
                HOLDOUT_RUNS.to_string(),
            ]);
        }
        args
    };

    // Uninterrupted runs: the base side's report (the reduce side's input), then the
    // side's own reports and life.
    let calibration = campaign.area.path("calibration");
    let tmp = calibration.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let base_out = calibration.join("base");
    let base_report = base_out.join("base.report").display().to_string();
    let base_out_path = base_out.display().to_string();
    let base_args: Vec<String> = exec_args("base", &base_out_path, &base, &head, &repo_path)
        .into_iter()
        .map(String::from)
        .collect();
    let base_env = env_of(&tmp, &calibration.join("base.log"));
    let o = campaign.run_to_end(&base_args, repo.path(), &base_env);
    assert!(o.status.success(), "{}", stderr(&o));
    // The base side's run is no life of the reduce side.
    campaign.lives.clear();
    let out = calibration.join("out");
    let log = calibration.join("log");
    let o = campaign.run_to_end(
        &args_for(&out, &base_report),
        repo.path(),
        &env_of(&tmp, &log),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = exec_reports(&out).unwrap();
    let runs = log_lines(&log).iter().filter(|l| *l == "test").count();
    eprintln!(
        "an uninterrupted run: {runs} test runs in {:.2} s; reports {:?}",
        campaign.life().as_secs_f64(),
        expected.keys().collect::<Vec<_>>()
    );
    if side == "base" {
        let failed = &expected["base.report"]["outcome"]["report"]["files"][0]["tests"][0];
        assert_eq!(failed["status"], "failed", "{expected:?}");
    } else {
        assert_eq!(
            expected["reduce.report"]["outcome"]["kind"], "reduced",
            "{expected:?}"
        );
    }

    for i in 0..campaign.kills {
        let (dir, tmp) = campaign.iteration(i);
        let out = dir.join("out");
        let log = dir.join("log");
        let hold = dir.join("hold");
        let args = args_for(&out, &base_report);
        let mark = campaign.mark(i);
        let delay = campaign.instant();
        let mut env = env_of(&tmp, &log);
        env.push((MARK_VAR.to_string(), mark.clone()));
        let mut child = spawn(&args, repo.path(), &env, &dir.join("killed.stderr"));
        let pid = child.id();
        let phase = if kill_after(&mut child, &hold, delay) {
            "ended before the kill".to_string()
        } else {
            exec_phase(side, &log, runs)
        };
        let mut problems = Vec::new();
        let left = survivors(&mark, &hold);
        if !left.is_empty() {
            problems.push(format!("outlived repromin {pid}: {left:?}"));
        }
        if let Err(why) = exec_reports(&out) {
            problems.push(format!("a partial report was left: {why}"));
        }
        let next = campaign.run_to_end(&args, repo.path(), &env_of(&tmp, &dir.join("next.log")));
        if !next.status.success() || !next.stderr.is_empty() {
            problems.push(format!(
                "the next run exited with {}; its stderr:\n{}",
                code(&next),
                stderr(&next)
            ));
        }
        match exec_reports(&out) {
            Ok(reports) if reports == expected => {}
            Ok(reports) => problems.push(format!(
                "the next run wrote {reports:?}, an uninterrupted run {expected:?}"
            )),
            Err(why) => problems.push(format!("the next run's reports: {why}")),
        }
        let scratch = scratch_left(&tmp);
        if !scratch.is_empty() {
            problems.push(format!("left in TMPDIR: {scratch:?}"));
        }
        let registered = worktrees(&repo);
        let admin = names(&repo.path().join(".git/worktrees"));
        if !registered.is_empty() || !admin.is_empty() {
            problems.push(format!(
                "worktrees left: {registered:?}, in .git/worktrees: {admin:?}"
            ));
        }
        if repo_state(&repo) != state_before {
            problems.push("the repository's work tree or refs changed".to_string());
        }
        eprintln!(
            "kill {i}: at {} ms, {phase}; {} problems",
            delay.as_millis(),
            problems.len()
        );
        campaign.record(i, &phase, problems);
    }
    campaign.finish();
}

#[test]
fn gate_sides_killed_at_random_instants_leave_nothing() {
    exec_campaign("base", 3, false);
    exec_campaign("reduce", 2, false);
}

#[test]
#[ignore = "the full crash test (100 kills, minutes): see docs/reliability.md"]
fn crash_test_exec_base() {
    exec_campaign("base", 100, true);
}

#[test]
#[ignore = "the full crash test (100 kills, minutes): see docs/reliability.md"]
fn crash_test_exec_reduce() {
    exec_campaign("reduce", 100, true);
}
