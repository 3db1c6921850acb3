//! The reduce side: `exec --side reduce` takes the base tree with the head's tests
//! overlaid, picks the first selected test (path, then name order) that failed on base, and
//! reduces the tree so that this test still fails with the same normalised signature. It
//! then runs a holdout on the frozen result, and writes `reduce.report`
//! ([`crate::gate::certificate`]) with the reduction as an edit set.
//!
//! Like the base side, it installs and builds each worktree before any file of the head
//! lands on it. With a sandbox user, every later run (the baseline, each candidate, the
//! holdout: `repromin check-test` and the tests it starts) runs in the base side's sandbox,
//! and the report is written by this process, outside it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::gate::certificate::{
    HOLDOUT_CONFIDENCE, HOLDOUT_RATE, HoldoutCounts, ReduceOutcome, ReduceReport, Reduced, encode,
    size_of,
};
use crate::gate::config::ReportFormat;
use crate::gate::encode::{Outcome, SideReport};
use crate::gate::git::Repo;
use crate::gate::plan::{Plan, Planned};
use crate::gate::sandbox::SandboxRuns;
use crate::gate::test_report::Status;
use crate::runner::Confinement;
use crate::tree::{Entry, Node, Tree};

use super::common::{Deadline, scratch_dir, side_sandbox};
use super::error::{SideError, WriteReportError};
use super::options::ExecOptions;

/// `reduce-time.json`, for people: where the reduction's time went.
#[derive(serde::Serialize)]
struct ReduceTime {
    /// The workers.
    jobs: usize,
    /// The commands the passes ran.
    commands: u64,
    /// The passes' wall time.
    reduce_ms: u64,
    /// The commands' time and repromin's work around them, summed over the workers.
    probe_time: crate::report::ProbeTimeRecord,
}

/// What the reduce side keeps of its deadline to write its report once the holdout stops.
const HOLDOUT_MARGIN: Duration = Duration::from_secs(5);

/// The first selected test, in path then name order, that failed on base, and passed on
/// head when the head side's report is given.
pub(crate) fn pick_test(
    plan: &Plan,
    base: &SideReport,
    head: Option<&SideReport>,
) -> Option<(String, String)> {
    let Outcome::Report { report, .. } = &base.outcome else {
        return None;
    };
    let passed_on_head = |file: &str, name: &str| match head.map(|h| &h.outcome) {
        None => true,
        Some(Outcome::Report { report, .. }) => report.files.iter().any(|f| {
            f.path == file
                && f.tests
                    .iter()
                    .any(|t| t.name == name && t.status == Status::Passed)
        }),
        Some(_) => false,
    };
    let mut failing: Vec<(String, String)> = report
        .files
        .iter()
        .filter(|f| plan.tests.contains(&f.path) && f.load_error.is_none())
        .flat_map(|f| {
            f.tests
                .iter()
                .filter(|t| t.status == Status::Failed)
                .filter(|t| {
                    !t.messages
                        .iter()
                        .any(|m| crate::gate::classify::names_missing_symbol(m))
                })
                .filter(|t| passed_on_head(&f.path, &t.name))
                .map(|t| (f.path.clone(), t.name.clone()))
        })
        .collect();
    failing.sort();
    failing.into_iter().next()
}

/// What the reduce side needs beyond the exec options.
pub(crate) struct ReduceSide<'a> {
    /// The exec options (side, commits, out, budget).
    pub options: &'a ExecOptions,
    /// The base side's report.
    pub base_report: &'a Path,
    /// The head side's report, if the caller has it: the test is then one that passed on
    /// head too.
    pub head_report: Option<&'a Path>,
    /// Holdout runs.
    pub holdout_runs: u64,
    /// The test to reduce for, when the caller has judged already (`run`: the first test
    /// that reproduces, so that a flaky one that fails first on base is passed over);
    /// otherwise the first selected test that failed on base.
    pub test: Option<(String, String)>,
}

/// Runs the reduce side and writes `reduce.report`. Every failure of the side becomes an
/// error report.
///
/// # Errors
/// The report could not be written.
pub(crate) fn reduce_side(
    side: &ReduceSide,
    interrupt: &Arc<AtomicBool>,
) -> Result<ReduceReport, WriteReportError> {
    let base = side.options.base.clone();
    let outcome = match run_reduce_side(side, interrupt) {
        Ok(outcome) => outcome,
        Err(err) => ReduceOutcome::Error {
            message: crate::with_causes(&err),
        },
    };
    write_reduce_report(&side.options.out, base, outcome)
}

/// Writes the error marker `reduce.report` of a reduce side that could not start (an
/// unusable local configuration).
///
/// # Errors
/// The marker could not be written.
pub(crate) fn write_error_marker(
    out: &Path,
    commit: &str,
    message: &str,
) -> Result<(), WriteReportError> {
    let outcome = ReduceOutcome::Error {
        message: message.to_string(),
    };
    write_reduce_report(out, commit.to_string(), outcome).map(drop)
}

fn write_reduce_report(
    out: &Path,
    commit: String,
    outcome: ReduceOutcome,
) -> Result<ReduceReport, WriteReportError> {
    let report = ReduceReport {
        v: 1,
        side: "reduce".into(),
        commit,
        outcome,
    };
    super::write::write_report(out, "reduce", encode(&report))?;
    Ok(report)
}

fn run_reduce_side(
    side: &ReduceSide,
    interrupt: &Arc<AtomicBool>,
) -> Result<ReduceOutcome, SideError> {
    let options = side.options;
    let started = Instant::now();
    // Nothing the workflow step left open reaches the test code.
    crate::runner::seal_inherited_descriptors().map_err(SideError::Descriptors)?;
    // A sandbox user that cannot be used is an error before anything runs.
    let sandbox = side_sandbox(options)?;
    let repo = Repo::new(&options.repo);
    repo.commit(&options.base)?;
    repo.commit(&options.head)?;
    let planned = crate::gate::plan::plan(
        &repo,
        &options.base,
        &options.head,
        options.local_config.clone(),
    )?;
    let base_report = read_side_report(side.base_report, "base", &options.base)?;
    let head_report = match side.head_report {
        Some(path) => Some(read_side_report(path, "head", &options.head)?),
        None => None,
    };
    let mut hung = super::hang::pick_hang(&planned.plan, &base_report, head_report.as_ref());
    let picked = side
        .test
        .clone()
        .or_else(|| pick_test(&planned.plan, &base_report, head_report.as_ref()));
    // A test whose file hung on base (or, with no test that failed, the first file that
    // hung) is certified as a hang: which of its tests hangs alone is found below.
    hung.retain(|(path, _)| picked.as_ref().is_none_or(|(file, _)| file == path));
    let hang = hung.into_iter().next();
    let picked = picked.or_else(|| {
        hang.as_ref()
            .map(|(file, names)| (file.clone(), names[0].clone()))
    });
    let Some((file, mut name)) = picked else {
        let reason = if head_report.is_some() {
            "no selected test fails on base and passes on head"
        } else {
            "no selected test fails on base"
        };
        return Ok(ReduceOutcome::Skipped {
            reason: reason.into(),
        });
    };
    let config = &planned.config;
    // With a container, the container is the sandbox: check-test (the oracle, repromin
    // itself) runs on the host and starts the test command in a container, as the base
    // side does.
    let container = super::common::side_container(config, options)?;
    let sandbox = if container.is_some() { None } else { sandbox }
        .map(|s| s.with_network(config.sandbox.network));
    let scratch = scratch_dir("reduce-side", sandbox.is_some())?;
    // One worktree per job, each with its own installed environment (an editable install
    // or node_modules points at its own directory, so it cannot be shared or copied).
    let jobs = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, 4);
    let tree_dirs: Vec<std::path::PathBuf> = (0..jobs)
        .map(|i| scratch.path().join(format!("tree{i}")))
        .collect();
    // Making the scratch directory swept those of killed runs; forget their worktrees.
    repo.prune_worktrees();
    let result = (|| -> Result<ReduceOutcome, SideError> {
        for tree_dir in &tree_dirs {
            repo.add_worktree(tree_dir, &options.base)?;
        }
        // The worktrees install at the same time: an install waits on the network and
        // the disk as much as it computes, and the reduction cannot start before all are
        // ready.
        let deadline = Deadline(started + options.budget);
        let prepared = std::thread::scope(|scope| {
            let installs: Vec<_> = tree_dirs
                .iter()
                .enumerate()
                .map(|(i, tree_dir)| {
                    let (repo, planned, deadline) = (&repo, &planned, &deadline);
                    let tmp = scratch.path().join(format!("tmp-setup{i}"));
                    let container = container.as_ref();
                    scope.spawn(move || {
                        prepare_tree(
                            repo,
                            options,
                            planned,
                            tree_dir,
                            &tmp,
                            (interrupt, deadline),
                            container,
                        )
                    })
                })
                .collect();
            installs
                .into_iter()
                .map(|install| {
                    install
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect::<Result<Vec<_>, SideError>>()
        })?;
        let unmanaged = prepared[0].1.clone();
        let tree_dir = tree_dirs[0].clone();
        let rules = crate::tree::IgnoreRules {
            paths: unmanaged.clone(),
            ..crate::tree::IgnoreRules::default()
        };
        // The oracle command runs a copy of repromin inside the scratch directory: the
        // sandbox user may not reach the runner's own, and a binary replaced on disk while
        // the side runs (a rebuild) must not change, or break, the oracle mid-reduction.
        let exe = copy_of_self(scratch.path())?;
        let mut shared = Vec::new();
        let mut argv = vec![
            exe.display().to_string(),
            "check-test".into(),
            "--format".into(),
            config.report.name().into(),
            "--file".into(),
            file.clone(),
            "--timeout-ms".into(),
            (config.timeouts.test * 1000).to_string(),
        ];
        let hang_limit = hang.as_ref().map(|_| {
            super::hang::hang_limit(
                head_report.as_ref(),
                Duration::from_secs(config.flaky.hang_rerun_seconds),
            )
        });
        if let Some(limit) = hang_limit {
            argv.push("--hang-after-ms".into());
            argv.push(limit.as_millis().to_string());
        }
        if config.report == ReportFormat::Libtest
            || config.command.split_whitespace().any(|w| w == "cargo")
        {
            // Dependencies stay built between runs; the tree's own packages do not.
            let root = scratch.path().join("cargo-target");
            std::fs::create_dir_all(&root)?;
            argv.push("--cargo-target-root".into());
            argv.push(root.display().to_string());
            shared.push(root);
        }
        if let Some(container) = &container {
            argv.push("--container".into());
            argv.push(serde_json::to_string(&container.record()).map_err(std::io::Error::other)?);
        }
        argv.push("--".into());
        argv.push(config.command.clone());
        // With a sandbox, every run of the test code from here on (a hang's probes, the
        // reducer's baseline, each candidate, the holdout) runs in it, its tree, its TMPDIR
        // and the shared build directory handed to the sandbox user for the run.
        let confinement: Option<Arc<dyn Confinement>> = sandbox.clone().map(|sandbox| {
            // The oracle's program is read in the run's private /tmp.
            let shown = exe.parent().map(Path::to_path_buf).into_iter().collect();
            Arc::new(SandboxRuns::new(sandbox, shared).showing(shown)) as Arc<dyn Confinement>
        });
        if let (Some((_, names)), Some(limit)) = (&hang, hang_limit) {
            let by_id = super::template::selects_by_id(&config.command, config.report);
            let probe = (tree_dirs[0].as_path(), scratch.path().join("hang-probe"));
            let found = super::hang::find_hanging(
                &argv,
                names,
                by_id,
                (probe.0, &probe.1),
                limit,
                confinement.as_deref(),
                interrupt,
            )?;
            let Some(hanging) = found else {
                return Ok(ReduceOutcome::Skipped {
                    reason: format!(
                        "the test file `{file}` hung on base, but none of its tests that passed \
                         on head runs past {} s alone",
                        limit.as_secs()
                    ),
                });
            };
            name = hanging;
        }
        let mut reduce_options = crate::reduce::ReduceOptions::new(
            tree_dir.clone(),
            scratch.path().join("unused"),
            super::hang::naming(&argv, &name),
        );
        reduce_options.rules = rules;
        // The test's file is never deleted: without it the test cannot run, so no such cut
        // could pass, nor any chunk of the files pass that holds it. That file alone may
        // fail the same way (a test that needs nothing of the tree): then it is the
        // minimal tree, not a command that cannot tell.
        reduce_options.rules.keep.push(file.clone());
        reduce_options.allow_trivial = true;
        // What the install wrote inside the tree's own directories (a version file in the
        // package) stays in place through every run: no cut may take its directory away.
        reduce_options.pinned = unmanaged
            .iter()
            .filter(|p| p.contains('/'))
            .cloned()
            .collect();
        reduce_options.jobs = jobs;
        // A candidate's time limit follows the runs (three times the slowest baseline run,
        // at least ten seconds, then the accepted runs), as a plain reduction's does: a cut
        // that makes the test hang costs seconds, not the whole `timeouts.test`, which
        // check-test still holds every test run to. The holdout gets that limit back.
        reduce_options.timeout = None;
        let spent = started.elapsed();
        // The holdout runs after the passes; the passes stop early enough for it (twice the
        // last baseline run's duration per holdout run), and a minute stays for the rest.
        let left = options.budget.saturating_sub(spent);
        reduce_options.max_duration = Some(
            left.saturating_sub(Duration::from_secs(60))
                .max(Duration::from_secs(1)),
        );
        reduce_options.reserve_runs = side.holdout_runs;
        // In a container, strace would trace check-test and the engine's client, not the
        // test.
        reduce_options.trace = container.is_none();
        let mut workers = Vec::new();
        for (i, ((model, unmanaged), tree_dir)) in prepared.into_iter().zip(&tree_dirs).enumerate()
        {
            let wrapper = scratch.path().join(format!("w{i}"));
            std::fs::create_dir_all(&wrapper)?;
            std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))?;
            let dirs = crate::runner::RunDirs {
                tmp: wrapper.join("tmp"),
                wrapper,
                tree: tree_dir.clone(),
            };
            let workspace =
                crate::workspace::Workspace::adopt(tree_dir.clone(), &model, unmanaged)?;
            let worker = crate::reduce::session::Worker::adopted(dirs, workspace);
            workers.push(match &confinement {
                Some(confinement) => worker.confined(confinement.clone()),
                None => worker,
            });
        }
        let (reduction, mut session) = crate::reduce::run_reduction(
            &reduce_options,
            scratch.path(),
            crate::reduce::Place::Adopted(workers),
            interrupt,
            None,
            None,
        )?;
        // For people: how each pass spent its time (the judge never reads it, so a failure
        // to write it does not fail the side).
        if let Ok(text) = serde_json::to_string_pretty(&reduction.phases) {
            let _ = super::write::write_file(&side.options.out.join("reduce-phases.json"), &text);
        }
        // And where the passes' time went: the commands, and repromin's own work around
        // them (the tool's share of a real tree's reduction).
        let time = ReduceTime {
            jobs,
            commands: reduction.phases.iter().map(|p| p.oracle_samples).sum(),
            reduce_ms: reduction.reduce_ms,
            probe_time: crate::report::ProbeTimeRecord::of(reduction.probe_time),
        };
        if let Ok(text) = serde_json::to_string_pretty(&time) {
            let _ = super::write::write_file(&side.options.out.join("reduce-time.json"), &text);
        }
        // The holdout: fixed tree, fixed oracle, planned once; it never steers anything.
        // Its runs are spread over the workers, each in its own prepared worktree. It stops
        // on SIGINT or SIGTERM and at the side's deadline (less a moment to write the
        // report): a holdout cut short is no holdout.
        let deadline = started + options.budget.saturating_sub(HOLDOUT_MARGIN);
        // A hang's runs end at its limit inside check-test: the holdout leaves them room.
        let holdout_limit = Duration::from_secs(config.timeouts.test)
            .max(hang_limit.map_or(Duration::ZERO, |limit| limit * 2));
        session.limit_runs_to(holdout_limit);
        let sampled = session.sample_current(side.holdout_runs, interrupt, Some(deadline))?;
        let interrupted = interrupt.load(std::sync::atomic::Ordering::SeqCst);
        let ended_by = match reduction.stopped {
            _ if interrupted => "interrupted",
            None => "fixed-point",
            Some(crate::reduce::StopReason::MaxAttempts) => "max-attempts",
            Some(crate::reduce::StopReason::MaxDuration) => "max-duration",
            Some(crate::reduce::StopReason::Interrupted) => "interrupted",
        };
        let holdout = (!sampled.cut).then_some(HoldoutCounts {
            runs: side.holdout_runs,
            passes: sampled.passes,
            rate: HOLDOUT_RATE,
            confidence: HOLDOUT_CONFIDENCE,
        });
        Ok(ReduceOutcome::Reduced(Box::new(Reduced {
            file,
            name,
            signature: reduction.oracle.signature.clone(),
            edits: reduction.edits.clone(),
            before: size_of(&reduction.preflight.tree),
            after: size_of(&reduction.tree),
            content_sha256: reduction.tree.content_fingerprint().to_string(),
            tree_sha256_v2: reduction.fingerprint.to_string(),
            attempts: reduction.attempts,
            accepted: reduction.events.len() as u64,
            ended_by: ended_by.into(),
            holdout,
            oracle_samples: reduction.phases.iter().map(|p| p.oracle_samples).sum(),
            reduce_ms: reduction.reduce_ms,
        })))
    })();
    for tree_dir in &tree_dirs {
        repo.remove_worktree(tree_dir);
    }
    result
}

/// A copy of the running repromin at `scratch/bin/repromin`, which anyone may run (the
/// sandbox user runs it as the oracle command; it cannot change it).
fn copy_of_self(scratch: &Path) -> Result<PathBuf, SideError> {
    let bin = scratch.join("bin");
    std::fs::create_dir_all(&bin)?;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755))?;
    let exe = bin.join("repromin");
    // The running image itself, even when its file was replaced or removed since it
    // started.
    let running = Path::new("/proc/self/exe");
    let source = if running.exists() {
        running.to_path_buf()
    } else {
        std::env::current_exe()?
    };
    std::fs::copy(source, &exe)?;
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755))?;
    Ok(exe)
}

/// Installs and builds in a fresh worktree of the merge base, then lays the head's tests
/// over it; returns the base-plus-overlay tree and the paths install created (the
/// environment, never reduced and never touched).
fn prepare_tree(
    repo: &Repo,
    options: &ExecOptions,
    planned: &Planned,
    tree_dir: &Path,
    tmp: &Path,
    (interrupt, deadline): (&AtomicBool, &Deadline),
    container: Option<&crate::container::Container>,
) -> Result<(Tree, Vec<String>), SideError> {
    let config = &planned.config;
    // What git put there, before install adds anything. A symlink that leads out of the
    // tree (a test fixture linking to `/none`) is no entry the reducer can hold: it stays
    // in place, never cut, like the environment.
    let mut outside = Vec::new();
    let before_install = scan_leaving_outside_links(tree_dir, &mut outside)?;
    std::fs::create_dir_all(tmp)?;
    for command in config.install.iter().chain(config.build.iter()) {
        super::common::shell_step(
            "install",
            command,
            tree_dir,
            tmp,
            deadline.limit(Duration::from_secs(config.timeouts.install))?,
            interrupt,
            container,
        )?;
    }
    // Only the top-most new paths are needed: nothing below them is looked at.
    let mut unmanaged = Vec::new();
    new_paths(tree_dir, "", &before_install, &mut unmanaged)?;
    // The worktree's link to its repository stays too: a test may ask git (a version read
    // from the tags), and the worktree is removed through it.
    if std::fs::symlink_metadata(tree_dir.join(".git")).is_ok() {
        unmanaged.push(".git".into());
    }
    super::common::overlay_tree(repo, &options.head, &planned.plan, tree_dir)?;
    let model = scan_leaving_outside_links(tree_dir, &mut unmanaged)?;
    Ok((model, unmanaged))
}

/// Scans `dir` without the `left` paths, adding to them each symlink that leads out of the
/// tree (see [`crate::tree::link_resolves_inside`]) until none is left; the judge's
/// rebuild of the tree from git leaves the same links out.
fn scan_leaving_outside_links(dir: &Path, left: &mut Vec<String>) -> Result<Tree, SideError> {
    loop {
        let rules = crate::tree::IgnoreRules {
            paths: left.clone(),
            ..crate::tree::IgnoreRules::default()
        };
        match crate::tree::scan(dir, &rules) {
            Ok((tree, _)) => return Ok(tree),
            Err(crate::tree::TreeError::EscapingSymlink { path, target }) => {
                let rel = path
                    .strip_prefix(dir)
                    .ok()
                    .and_then(Path::to_str)
                    .map(str::to_string)
                    .filter(|rel| !left.contains(rel));
                let Some(rel) = rel else {
                    return Err(crate::tree::TreeError::EscapingSymlink { path, target }.into());
                };
                left.push(rel);
            }
            Err(err) => return Err(err.into()),
        }
    }
}

/// Collects the top-most paths under `dir` that `known` does not hold, without following
/// or judging symlinks (an installed environment may link anywhere).
fn new_paths(root: &Path, rel: &str, known: &Tree, out: &mut Vec<String>) -> std::io::Result<()> {
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    for name in names {
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if name == ".git" && rel.is_empty() {
            continue;
        }
        match known.entries.get(path.as_str()) {
            None => out.push(path),
            Some(Entry {
                node: Node::Dir, ..
            }) => {
                if std::fs::symlink_metadata(root.join(&path))?.is_dir() {
                    new_paths(root, &path, known, out)?;
                }
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The `side` report at `path`, which must be of `commit`: read within the test report's
/// cap, decoded strictly.
fn read_side_report(path: &Path, side: &str, commit: &str) -> Result<SideReport, SideError> {
    let cap = crate::gate::encode::TEST_REPORT_CAP as u64 + 2;
    let text = crate::safe_fs::read_prefix_to_string(path, cap).map_err(|e| SideError::Report {
        side: side.to_string(),
        path: path.to_path_buf(),
        source: e.into(),
    })?;
    let report = crate::gate::encode::decode(&text, side, crate::gate::encode::TEST_REPORT_CAP)?;
    if report.commit != commit {
        return Err(SideError::ReportCommit {
            side: side.to_string(),
            path: path.to_path_buf(),
            found: report.commit,
            expected: commit.to_string(),
        });
    }
    Ok(report)
}
