//! Runs of the command outside the session's workers: each in a fresh copy of the tree,
//! as the baseline and the empty-tree check run before any worker exists (or, with
//! `--remote`, the baseline on the cluster, `--jobs` at a time).

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::container::ContainerRuns;
use crate::reduce::error::ReduceError;
use crate::reduce::options::ReduceOptions;
use crate::runner::{self, RunDirs, RunOutcome, Termination};
use crate::signature::Normalizer;
use crate::tree::Tree;
use crate::workspace::write_fresh;

/// The basename a tree is given inside each run's wrapper directory.
pub(super) fn basename(options: &ReduceOptions) -> String {
    options
        .output
        .file_name()
        .or_else(|| options.source.file_name())
        .map_or_else(|| "tree".to_string(), |n| n.to_string_lossy().to_string())
}

/// Runs the command once on `tree` in a fresh directory `scratch/name`.
pub(super) fn run_fresh(
    tree: &Tree,
    options: &ReduceOptions,
    scratch: &Path,
    name: &str,
    timeout: Duration,
    interrupt: &AtomicBool,
    container: Option<&ContainerRuns>,
) -> Result<(RunOutcome, Normalizer), ReduceError> {
    let dirs = RunDirs::new(scratch, name, &basename(options));
    crate::workspace::remove_any(&dirs.wrapper)?;
    write_fresh(tree, &dirs.tree)?;
    dirs.fresh_tmp()?;
    let normalizer = Normalizer::new(&[
        dirs.wrapper.display().to_string(),
        dirs.tmp.display().to_string(),
    ]);
    let outcome = runner::run_confined(
        &options.command,
        &dirs.tree,
        &dirs.tmp,
        timeout,
        interrupt,
        container.map(|c| c as &dyn runner::Confinement),
        None,
    )?;
    crate::workspace::remove_any(&dirs.wrapper)?;
    Ok((outcome, normalizer))
}

/// The baseline's `options.baseline_runs` runs, `options.jobs` at a time, each in a
/// fresh copy of its own, in order of their names (`baseline1`, `baseline2`, ...): what
/// the first run printed is what the oracle learns from, whichever ended first.
///
/// # Errors
/// A run that cannot be set up or started; [`ReduceError::Interrupted`] when one was.
pub(super) fn baselines_at_once(
    tree: &Tree,
    options: &ReduceOptions,
    scratch: &Path,
    timeout: Duration,
    interrupt: &AtomicBool,
    remote: Option<&crate::remote::Remote>,
) -> Result<Vec<(RunOutcome, Normalizer)>, ReduceError> {
    let count = options.baseline_runs;
    let jobs = options.jobs.max(1);
    let mut runs = Vec::with_capacity(count);
    let mut start = 0;
    while start < count {
        let end = (start + jobs).min(count);
        let batch: Vec<Result<(RunOutcome, Normalizer), ReduceError>> =
            std::thread::scope(|scope| {
                let handles: Vec<_> = (start..end)
                    .map(|i| {
                        scope.spawn(move || match remote {
                            // Independent runs: never an answer from the action cache.
                            Some(remote) => remote
                                .run(
                                    tree,
                                    &options.command,
                                    timeout,
                                    crate::remote::CachePolicy::Skip,
                                    interrupt,
                                )
                                .map(|run| (run.outcome, Normalizer::new(&[])))
                                .map_err(ReduceError::from),
                            None => {
                                let name = format!("baseline{}", i + 1);
                                run_fresh(tree, options, scratch, &name, timeout, interrupt, None)
                            }
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or(Err(ReduceError::Internal("a baseline run's thread died")))
                    })
                    .collect()
            });
        for run in batch {
            let run = run?;
            if run.0.termination == Termination::Interrupted {
                return Err(ReduceError::Interrupted);
            }
            runs.push(run);
        }
        start = end;
    }
    Ok(runs)
}
