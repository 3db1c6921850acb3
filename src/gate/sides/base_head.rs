//! The base and head sides: install and build at the side's commit, lay the head's tests
//! over the base, then run the tests (`base` and `base-rerun`, or `head`), then rerun the
//! tests that could reproduce (`reruns`).

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::gate::config::RepoConfig;
use crate::gate::encode::{Outcome, SideReport};
use crate::gate::git::Repo;
use crate::gate::line::SideStatus;
use crate::gate::plan::Planned;
use crate::gate::test_report::TestReport;

use super::common::{
    Deadline, Isolation, RunPlace, install_and_build, overlay_tree, side_container, side_sandbox,
    test_run, with_worktree,
};
use super::error::SideError;
use super::options::{ExecOptions, Side};
use super::reruns::rerun_candidates;
use crate::gate::regressions::suite_run;

/// Runs the base or head side: its reports by name.
pub(super) fn run_side(
    options: &ExecOptions,
    commit: &str,
    interrupt: &AtomicBool,
) -> Result<Vec<(String, SideReport)>, SideError> {
    let deadline = Deadline(Instant::now() + options.budget);
    // Nothing the workflow step left open reaches the test code.
    crate::runner::seal_inherited_descriptors().map_err(SideError::Descriptors)?;
    let repo = Repo::new(&options.repo);
    repo.commit(&options.base)?;
    repo.commit(&options.head)?;
    let Planned { plan, config, .. } = crate::gate::plan::plan(
        &repo,
        &options.base,
        &options.head,
        options.local_config.clone(),
    )?;
    if plan.tests.is_empty() {
        return Ok(options
            .side
            .reports()
            .iter()
            .map(|name| {
                let report = SideReport {
                    v: crate::gate::encode::VERSION,
                    side: (*name).to_string(),
                    commit: commit.to_string(),
                    outcome: Outcome::Skipped {
                        reason: "the pull request changes no test".into(),
                    },
                    reruns: Vec::new(),
                    suite: None,
                };
                ((*name).to_string(), report)
            })
            .collect());
    }
    // The suite, when regressions are asked for: read from the head's tree before the
    // worktree is made.
    let suite = if options.regressions || config.regressions.is_some() {
        let globs = config.suite_globs("configuration")?;
        Some(crate::gate::regressions::suite_files(
            &repo,
            &options.head,
            &globs,
        )?)
    } else {
        None
    };
    let sandbox = side_sandbox(options)?.map(|s| s.with_network(config.sandbox.network));
    let container = side_container(&config, options)?;
    let isolation = Isolation {
        sandbox: sandbox.as_ref(),
        container: container.as_ref(),
    };
    with_worktree(&repo, commit, sandbox.is_some(), |tree, scratch| {
        install_and_build(
            &config,
            tree,
            scratch,
            &deadline,
            interrupt,
            container.as_ref(),
        )?;
        if options.side == Side::Base {
            overlay_tree(&repo, &options.head, &plan, tree)?;
        }
        let place = RunPlace {
            tree,
            scratch,
            isolation,
            timeout: Duration::from_secs(config.timeouts.test),
            deadline: &deadline,
            interrupt,
        };
        let mut reports = Vec::new();
        for name in options.side.reports() {
            deadline.check()?;
            let outcome = test_run(name, &config, &plan.tests, &place);
            let report = match outcome {
                Ok(outcome) => SideReport {
                    v: crate::gate::encode::VERSION,
                    side: (*name).to_string(),
                    commit: commit.to_string(),
                    outcome,
                    reruns: Vec::new(),
                    suite: None,
                },
                Err(err) => {
                    SideReport::error_with(name, commit, crate::with_causes(&err), err.detail())
                }
            };
            reports.push(((*name).to_string(), report));
        }
        rerun_side(options, &config, &place, &mut reports)?;
        if let Some(suite) = &suite {
            run_suite(options.side, &config, suite, &place, &mut reports)?;
        }
        Ok(reports)
    })
}

/// Runs the suite `files` and adds the run to the side's first report (`base` or `head`),
/// unless that report is an error marker.
fn run_suite(
    side: Side,
    config: &RepoConfig,
    files: &[String],
    place: &RunPlace<'_>,
    reports: &mut [(String, SideReport)],
) -> Result<(), SideError> {
    let Some((_, first)) = reports.first_mut() else {
        return Ok(());
    };
    if !matches!(first.outcome, Outcome::Report { .. }) {
        return Ok(());
    }
    if files.is_empty() {
        first.suite = Some(suite_run(Some(0), &TestReport::default()));
        return Ok(());
    }
    let name = if side == Side::Base {
        "base-suite"
    } else {
        "head-suite"
    };
    place.deadline.check()?;
    if let Outcome::Report { exit_code, report } = test_run(name, config, files, place)? {
        first.suite = Some(suite_run(exit_code, &report));
    }
    Ok(())
}

/// Reruns the side's candidates and adds the reruns to its last report (`base-rerun` or
/// `head`); nothing when a run gave no report.
fn rerun_side(
    options: &ExecOptions,
    config: &RepoConfig,
    place: &RunPlace<'_>,
    reports: &mut [(String, SideReport)],
) -> Result<(), SideError> {
    let report_of = |report: &SideReport| match &report.outcome {
        Outcome::Report { report, .. } => Some(report.clone()),
        _ => None,
    };
    let runs: Vec<Option<TestReport>> = reports.iter().map(|(_, r)| report_of(r)).collect();
    let (candidates, plan_for, want) = match (options.side, runs.as_slice()) {
        (Side::Base, [Some(base), Some(rerun)]) => {
            let candidates = crate::gate::flaky::base_candidates(base, rerun);
            let n = candidates.len();
            (candidates, n, SideStatus::Failed)
        }
        (Side::Head, [Some(head)]) => {
            let known = options.base_candidates.as_ref();
            let (candidates, n) = crate::gate::flaky::head_candidates(head, known);
            (candidates, n, SideStatus::Passed)
        }
        _ => return Ok(()),
    };
    let Some((name, last)) = reports.last_mut() else {
        return Ok(());
    };
    last.reruns = rerun_candidates(name, want, candidates, plan_for, config, place)?;
    Ok(())
}
