//! The mutants side: checks the specs like the judge, prepares the merge base like the base
//! side, runs the specs' test files once as a baseline, then applies each mutation in turn:
//! it writes the mutated text (never through a symlink), rebuilds, runs the spec's test
//! file, writes the merge base's text back and rebuilds again. With a sandbox user, every
//! build and test run from the baseline on runs in the sandbox, since head test code has
//! run in the tree by then.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::gate::encode::Outcome;
use crate::gate::git::Repo;
use crate::gate::mutants::{self, MutantResult, MutantRun, MutantsOutcome, MutantsReport};
use crate::safe_fs::overwrite_inside;

use super::common::{
    Deadline, Isolation, RunPlace, build_step, install_and_build, overlay_tree, side_container,
    side_sandbox, test_run, with_worktree,
};
use super::error::SideError;
use super::options::ExecOptions;

/// The mutants side: checks the specs like the judge, prepares the merge base like the base
/// side, runs the baseline, then each mutation in turn.
pub(super) fn run_mutants(
    options: &ExecOptions,
    interrupt: &AtomicBool,
) -> Result<MutantsReport, SideError> {
    let deadline = Deadline(Instant::now() + options.budget);
    // Nothing the workflow step left open reaches the test code.
    crate::runner::seal_inherited_descriptors().map_err(SideError::Descriptors)?;
    let repo = Repo::new(&options.repo);
    let base = options.base.as_str();
    repo.commit(base)?;
    repo.commit(&options.head)?;
    let planned =
        crate::gate::plan::plan(&repo, base, &options.head, options.local_config.clone())?;
    let skipped = |reason: &str| {
        let reason = reason.to_string();
        Ok(MutantsReport::new(base, MutantsOutcome::Skipped { reason }))
    };
    if !planned.plan.test_only() {
        return skipped("the pull request changes more than tests");
    }
    if planned.plan.mutations.is_empty() {
        return skipped("the pull request adds or changes no mutation spec");
    }
    let specs = mutants::load_specs(&repo, base, &options.head, &planned)?;
    let (plan, config) = (&planned.plan, &planned.config);
    let mut tests: Vec<String> = specs.iter().map(|s| s.test.clone()).collect();
    tests.sort();
    tests.dedup();
    let sandbox = side_sandbox(options)?.map(|s| s.with_network(config.sandbox.network));
    let container = side_container(config, options)?;
    let isolation = Isolation {
        sandbox: sandbox.as_ref(),
        container: container.as_ref(),
    };
    with_worktree(&repo, base, sandbox.is_some(), |tree, scratch| {
        install_and_build(
            config,
            tree,
            scratch,
            &deadline,
            interrupt,
            container.as_ref(),
        )?;
        overlay_tree(&repo, &options.head, plan, tree)?;
        let test_limit = || deadline.limit(Duration::from_secs(config.timeouts.test));
        let build_limit = || deadline.limit(Duration::from_secs(config.timeouts.build));
        let place = |timeout| RunPlace {
            tree,
            scratch,
            isolation,
            timeout,
            deadline: &deadline,
            interrupt,
        };
        let baseline =
            test_run("baseline", config, &tests, &place(test_limit()?)).unwrap_or_else(|err| {
                Outcome::Error {
                    message: crate::with_causes(&err),
                    detail: err.detail(),
                }
            });
        let mut runs = Vec::new();
        if matches!(baseline, Outcome::Report { .. }) {
            let mut index = 0;
            for spec in &specs {
                for (m, base_text) in &spec.mutations {
                    index += 1;
                    let name = format!("mutant-{index}");
                    let mutated = base_text.replacen(&m.find, &m.replace, 1);
                    overwrite_inside(tree, &m.file, mutated.as_bytes())?;
                    let built = match &config.build {
                        Some(build) => build_step(
                            &name,
                            build,
                            tree,
                            scratch,
                            isolation,
                            build_limit()?,
                            interrupt,
                        ),
                        None => Ok(()),
                    };
                    let result = match built {
                        Err(err) => MutantResult::Unbuilt {
                            message: crate::with_causes(&err),
                        },
                        Ok(()) => {
                            let one = std::slice::from_ref(&spec.test);
                            let limit = test_limit()?;
                            match test_run(&name, config, one, &place(limit)) {
                                Ok(Outcome::Report { exit_code, report }) => {
                                    MutantResult::Tested { exit_code, report }
                                }
                                Ok(_) => MutantResult::Error {
                                    message: "no report".into(),
                                },
                                Err(err) => MutantResult::Error {
                                    message: crate::with_causes(&err),
                                },
                            }
                        }
                    };
                    overwrite_inside(tree, &m.file, base_text.as_bytes())?;
                    if let Some(build) = &config.build {
                        build_step(
                            &name,
                            build,
                            tree,
                            scratch,
                            isolation,
                            build_limit()?,
                            interrupt,
                        )
                        .map_err(|err| SideError::Rebuild {
                            file: m.file.clone(),
                            source: Box::new(err),
                        })?;
                    }
                    runs.push(MutantRun {
                        spec: spec.path.clone(),
                        name: m.name.clone(),
                        result,
                    });
                }
            }
        }
        // A run cut short by the deadline is not a result: the side overran.
        deadline.check()?;
        Ok(MutantsReport::new(
            base,
            MutantsOutcome::Ran { baseline, runs },
        ))
    })
}
