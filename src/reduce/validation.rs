//! The checks of a reduction's options before anything runs: ranges, combinations that
//! cannot work, sampling and holdout plans that cannot pass, and where the source and the
//! output are.

use crate::reduce::error::ReduceError;
use crate::reduce::invalid::InvalidOption;
use crate::reduce::options::ReduceOptions;
use crate::tree::{SourceKind, TreeError};

/// The most candidates run at once (each one a workspace copy of the tree).
pub const MAX_JOBS: usize = 256;

/// Checks options before anything runs: those that need no I/O beyond looking at paths.
///
/// # Errors
/// A usage error naming the problem.
pub fn validate(options: &ReduceOptions, for_export: bool) -> Result<(), ReduceError> {
    if options.jobs == 0 {
        return Err(InvalidOption::NoJobs.into());
    }
    if options.jobs > MAX_JOBS {
        return Err(InvalidOption::TooManyJobs {
            jobs: options.jobs,
            max: MAX_JOBS,
        }
        .into());
    }
    if options.baseline_runs < 2 {
        return Err(InvalidOption::BaselineRuns.into());
    }
    if let Some(s) = &options.semantic {
        if !(s.endpoint.starts_with("http://") || s.endpoint.starts_with("https://")) {
            return Err(InvalidOption::SemanticEndpoint(s.endpoint.clone()).into());
        }
        if s.model.trim().is_empty() {
            return Err(InvalidOption::SemanticModel.into());
        }
        if options.session.is_some() {
            return Err(InvalidOption::SemanticSession.into());
        }
    }
    if options.command.argv.is_empty() {
        return Err(InvalidOption::NoCommand.into());
    }
    if let Some(remote) = &options.remote {
        let endpoint = ["grpc://", "http://", "grpcs://", "https://"]
            .iter()
            .find_map(|scheme| remote.url.strip_prefix(scheme));
        if endpoint.is_none_or(|rest| rest.is_empty() || rest.contains(['/', ' '])) {
            return Err(InvalidOption::RemoteUrl(remote.url.clone()).into());
        }
        if remote.tls_ca.is_some() && !remote.is_tls() {
            return Err(InvalidOption::RemoteCaWithoutTls.into());
        }
        if options.container.is_some() {
            return Err(InvalidOption::RemoteWithContainer.into());
        }
        if options.command.memory.is_some() {
            return Err(InvalidOption::MemoryRemote.into());
        }
    }
    if options.passes.is_empty() {
        return Err(InvalidOption::NoPass.into());
    }
    options.oracle.validate()?;
    validate_sampling(options)?;
    if crate::tree::source_kind(&options.source)? == SourceKind::File {
        tree_only(options)?;
    }
    if for_export {
        let layout = crate::output_layout::OutputLayout::new(&options.output);
        // A resumed session may have published already: the export decides what an
        // existing output means then.
        if let Some(existing) = layout.existing().filter(|_| !options.resume) {
            return Err(ReduceError::OutputExists(existing.to_path_buf()));
        }
        let parent = layout.parent;
        if !parent.is_dir() {
            return Err(InvalidOption::OutputParent(parent.to_path_buf()).into());
        }
        let source = std::fs::canonicalize(&options.source).map_err(|source| TreeError::Io {
            action: "resolve",
            path: options.source.clone(),
            source,
        })?;
        let parent = std::fs::canonicalize(&parent).unwrap_or(parent);
        if parent.starts_with(&source) {
            return Err(InvalidOption::OutputInsideSource(options.source.clone()).into());
        }
    }
    Ok(())
}

/// Refuses the options that select entries of a directory when SOURCE is a single file:
/// they have nothing to select.
fn tree_only(options: &ReduceOptions) -> Result<(), ReduceError> {
    let rules = &options.rules;
    let given = [
        ("--ignore", !rules.names.is_empty()),
        ("--ignore-path", !rules.paths.is_empty()),
        (
            "--gitignore or --gitignore-file",
            !rules.gitignore_files.is_empty(),
        ),
        ("--gitignore-recursive", rules.gitignore_recursive),
    ];
    match given.into_iter().find(|(_, given)| *given) {
        Some((option, _)) => Err(InvalidOption::TreeOnly {
            option,
            file: options.source.clone(),
        }
        .into()),
        None => Ok(()),
    }
}

/// Refuses `runs` of `name` over [`crate::stats::MAX_PLAN_RUNS`], before any plan of them is
/// computed.
fn plan_runs(name: &'static str, runs: u64) -> Result<(), ReduceError> {
    let max = crate::stats::MAX_PLAN_RUNS;
    if runs > max {
        return Err(InvalidOption::TooManyRuns { name, runs, max }.into());
    }
    Ok(())
}

fn in_unit(name: &'static str, value: f64) -> Result<(), ReduceError> {
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(InvalidOption::NotInUnit { name, value }.into())
    }
}

/// Checks the sampling and holdout plans before anything runs: a plan that cannot pass
/// even when every sample reproduces is refused.
fn validate_sampling(options: &ReduceOptions) -> Result<(), ReduceError> {
    let runs = options.baseline_runs as u64;
    if let Some(k) = options.min_baseline_passes
        && (k == 0 || k > runs)
    {
        return Err(InvalidOption::MinBaselinePasses { runs }.into());
    }
    let s = options.sampling;
    in_unit("--confidence", s.confidence)?;
    if let Some(rate) = options.min_baseline_rate {
        in_unit("--min-baseline-rate", rate)?;
        plan_runs("--baseline-runs", runs)?;
        // One baseline sample discovers the signature and does not count for the rate.
        if crate::stats::required_passes(runs.saturating_sub(1).max(1), rate, s.confidence)
            .ok()
            .flatten()
            .is_none()
        {
            return Err(InvalidOption::BaselineRate {
                rate,
                runs,
                confidence: s.confidence,
            }
            .into());
        }
    }
    if s.runs == 0 {
        return Err(InvalidOption::CandidateRuns.into());
    }
    if s.min_passes == 0 || s.min_passes > s.runs {
        return Err(InvalidOption::MinCandidatePasses { runs: s.runs }.into());
    }
    if let Some(rate) = s.rate {
        in_unit("--min-candidate-rate", rate)?;
        plan_runs("--candidate-runs", s.runs)?;
        let confidence = match s.run_confidence {
            Some(c) => {
                in_unit("--run-confidence", c)?;
                crate::stats::family_confidence(1, s.confidence, c)
                    .map_err(InvalidOption::RunConfidence)?
            }
            None => s.confidence,
        };
        if crate::stats::required_passes(s.runs, rate, confidence)
            .ok()
            .flatten()
            .is_none()
        {
            return Err(InvalidOption::CandidateRate {
                rate,
                runs: s.runs,
                confidence,
            }
            .into());
        }
    } else if s.run_confidence.is_some() {
        return Err(InvalidOption::RunConfidenceAlone.into());
    }
    if options.holdout_runs > 0 {
        plan_runs("--holdout-runs", options.holdout_runs)?;
        in_unit("--min-holdout-rate", options.min_holdout_rate)?;
        in_unit("--holdout-confidence", options.holdout_confidence)?;
        crate::stats::HoldoutPlan::new(
            options.holdout_runs,
            options.min_holdout_rate,
            options.holdout_confidence,
        )
        .map_err(InvalidOption::Holdout)?;
    }
    Ok(())
}
