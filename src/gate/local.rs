//! `run`: the local mode of the gate. It runs the base and head sides (and the mutants side
//! when it applies) into one reports directory, judges, and when the verdict is reproduced
//! runs the reduce side and judges again with its certificate.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crate::gate::classify::{Classified, Verdict};
use crate::gate::config::RepoConfig;
use crate::gate::encode::{Outcome, SideReport};
use crate::gate::flaky::BaseCandidates;
use crate::gate::git::Repo;
use crate::gate::judge::{self, JudgeInput, Judgement, judge, judge_error};
use crate::gate::line;
use crate::gate::mutants;
use crate::gate::plan;
use crate::gate::sides::{self, ExecOptions, Side, WriteReportError, reduce};

/// Where `run` puts the reports.
enum OutDir {
    Temp(crate::scratch::Scratch),
    Kept(PathBuf),
}

impl OutDir {
    fn path(&self) -> &Path {
        match self {
            OutDir::Temp(dir) => dir.path(),
            OutDir::Kept(dir) => dir,
        }
    }
}

/// What `run` needs.
#[derive(Clone, Debug)]
pub(crate) struct RunInput {
    /// The repository.
    pub repo: PathBuf,
    /// The merge base.
    pub base: String,
    /// The head.
    pub head: String,
    /// A trusted local configuration.
    pub local_config: Option<(RepoConfig, String)>,
    /// Sandbox user for the sides that run the head's tests on the merge base (base,
    /// mutants, reduce).
    pub sandbox_user: Option<String>,
    /// The container CLI, when the configuration names a `container` image.
    pub container_cli: crate::container::ContainerCli,
    /// Per-side deadline.
    pub budget: std::time::Duration,
    /// The mutants side's deadline.
    pub mutants_budget: std::time::Duration,
    /// Also run the reduce side and certify its result.
    pub reduce: bool,
    /// Holdout runs of the reduce side.
    pub holdout_runs: u64,
    /// Where to keep the reports (a directory that does not exist yet).
    pub reports: Option<PathBuf>,
    /// Also run the suite on both sides, for the regressions.
    pub regressions: bool,
}

/// Runs both sides and the judge in one process.
pub(crate) fn run(input: &RunInput, interrupt: &std::sync::Arc<AtomicBool>) -> Judgement {
    let made = match &input.reports {
        // Kept: the directory must be new, so nothing of an earlier run is read or lost.
        Some(dir) => std::fs::create_dir(dir).map(|()| OutDir::Kept(dir.clone())),
        None => crate::scratch::Scratch::new("run").map(OutDir::Temp),
    };
    let out = match made {
        Ok(dir) => dir,
        Err(err) => {
            return Judgement {
                line: judge::error_line(
                    &input.head,
                    &input.base,
                    &format!(
                        "cannot create the reports directory: {}",
                        crate::with_causes(&err)
                    ),
                    false,
                ),
                classified: Classified {
                    verdict: Verdict::Error,
                    error: None,
                    rows: Vec::new(),
                    not_collected: Vec::new(),
                },
                configuration: None,
                failures: Vec::new(),
            };
        }
    };
    let mut base_candidates = None;
    for side in [Side::Base, Side::Head] {
        let options = ExecOptions {
            repo: input.repo.clone(),
            base: input.base.clone(),
            head: input.head.clone(),
            out: out.path().to_path_buf(),
            side,
            sandbox_user: input.sandbox_user.clone(),
            container_cli: input.container_cli,
            budget: input.budget,
            local_config: input.local_config.clone(),
            base_candidates: base_candidates.take(),
            regressions: input.regressions,
        };
        match sides::exec(&options, interrupt) {
            Err(err) => return write_failed(input, &err),
            // The head side reruns only what can still reproduce.
            Ok(reports) => base_candidates = Some(candidates_of(&reports)),
        }
    }
    // The mutants side applies only to tests alone with a spec; the judge plans again.
    let repo = Repo::new(&input.repo);
    let planned = plan::plan(&repo, &input.base, &input.head, input.local_config.clone());
    let mutants_ran = planned.is_ok_and(|p| p.plan.checks_mutants());
    if mutants_ran {
        let options = ExecOptions {
            repo: input.repo.clone(),
            base: input.base.clone(),
            head: input.head.clone(),
            out: out.path().to_path_buf(),
            side: Side::Mutants,
            sandbox_user: input.sandbox_user.clone(),
            container_cli: input.container_cli,
            budget: input.mutants_budget,
            local_config: input.local_config.clone(),
            base_candidates: None,
            regressions: false,
        };
        if let Err(err) = sides::exec(&options, interrupt) {
            return write_failed(input, &err);
        }
    }
    let report = |name: &str| Some(out.path().join(format!("{name}.report")));
    let judged = |reduce_report: Option<PathBuf>| {
        judge(&JudgeInput {
            repo: input.repo.clone(),
            base: input.base.clone(),
            head: input.head.clone(),
            base_report: report("base"),
            rerun_report: report("base-rerun"),
            head_report: report("head"),
            reduce_report,
            mutants_report: report(mutants::SIDE).filter(|_| mutants_ran),
            local_config: input.local_config.clone(),
        })
    };
    let first = judged(None);
    // Only a reproduced verdict has a test worth certifying.
    if !input.reduce || first.line.verdict != line::Verdict::Reproduced {
        return first;
    }
    let options = ExecOptions {
        repo: input.repo.clone(),
        base: input.base.clone(),
        head: input.head.clone(),
        out: out.path().to_path_buf(),
        side: Side::Reduce,
        sandbox_user: input.sandbox_user.clone(),
        container_cli: input.container_cli,
        budget: input.budget,
        local_config: input.local_config.clone(),
        base_candidates: None,
        regressions: false,
    };
    let base_report = out.path().join("base.report");
    let head_report = out.path().join("head.report");
    let reduced = reduce::reduce_side(
        &reduce::ReduceSide {
            options: &options,
            base_report: &base_report,
            head_report: Some(&head_report),
            holdout_runs: input.holdout_runs,
            test: first_reproducing(&first.classified),
        },
        interrupt,
    );
    if let Err(err) = reduced {
        return write_failed(input, &err);
    }
    judged(report("reduce"))
}

/// The first test, in path then name order, that the judgement says reproduces.
fn first_reproducing(classified: &Classified) -> Option<(String, String)> {
    classified
        .rows
        .iter()
        .filter(|row| row.class == crate::gate::line::TestClass::Reproduces)
        .map(|row| (row.file.clone(), row.name.clone()))
        .min()
}

/// The base side's candidates, from its two reports and its reruns (none when either is
/// not a report).
fn candidates_of(reports: &[(String, SideReport)]) -> BaseCandidates {
    let report = |name: &str| {
        reports.iter().find_map(|(n, r)| match &r.outcome {
            Outcome::Report { report, .. } if n == name => Some((report, &r.reruns)),
            _ => None,
        })
    };
    match (report("base"), report("base-rerun")) {
        (Some((base, _)), Some((rerun, reruns))) => BaseCandidates::new(base, rerun, reruns),
        _ => BaseCandidates::default(),
    }
}

/// The error judgement when a side's report could not be written.
fn write_failed(input: &RunInput, err: &WriteReportError) -> Judgement {
    let message = crate::with_causes(err);
    judge_error(&input.head, &input.base, &message)
}
