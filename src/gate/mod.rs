//! The pull-request gate: does the PR's test prove its fix?
//!
//! The gate runs the PR's added or changed tests on the merge base (with the PR's non-test
//! changes left out and its tests laid over the base) and at head. A test that fails on base
//! and passes on head reproduces the bug. Worker sides ([`exec`]) write encoded reports; the
//! [`judge`] reads only those reports plus git, runs no code of either commit, and prints one
//! strict [`line`].
//!
//! - [`git`]: the git calls; [`config`]: `.github/repromin.json` and detected defaults;
//! - [`plan`]: the diff into tests, carried files, removals and source;
//! - [`exec`]: one side; [`readers`]: test reports into [`test_report::TestReport`];
//! - [`encode`]: side reports as job outputs; [`classify`]: classes and the verdict;
//! - [`mutants`]: mutation specs of pull requests that change tests alone;
//! - [`line`]: the `repromin/v1` line, formatter and strict parser.

pub mod certificate;
pub mod check;
pub mod classify;
pub mod config;
pub mod encode;
pub mod exec;
pub mod git;
pub mod github;
pub mod line;
pub mod mutants;
pub use readers::node_test;
pub mod plan;
pub mod readers;
pub mod test_report;

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use classify::{Classified, SideInput, SideInputError, Verdict};
use config::RepoConfig;
use encode::TEST_REPORT_CAP;
use git::Repo;

/// What the judge reads.
#[derive(Clone, Debug)]
pub struct JudgeInput {
    /// The repository (for git only).
    pub repo: PathBuf,
    /// The merge base.
    pub base: String,
    /// The head.
    pub head: String,
    /// `base.report`.
    pub base_report: Option<PathBuf>,
    /// `base-rerun.report`.
    pub rerun_report: Option<PathBuf>,
    /// `head.report`.
    pub head_report: Option<PathBuf>,
    /// `reduce.report`, for the certificate.
    pub reduce_report: Option<PathBuf>,
    /// `mutants.report`, for a pull request of tests alone that adds or changes a spec.
    pub mutants_report: Option<PathBuf>,
    /// A trusted local configuration.
    pub local_config: Option<(RepoConfig, String)>,
}

/// The judge's result: the line and what it was made from.
#[derive(Clone, Debug)]
pub struct Judgement {
    /// The line's content.
    pub line: line::ResultLine,
    /// The classification behind it.
    pub classified: Classified,
}

const ZERO_SHA: &str = "0000000000000000000000000000000000000000";

fn certificate_cap() -> usize {
    encode::REDUCE_REPORT_CAP
}

/// Reads a report file of at most `cap` characters (plus a newline): a regular file, never
/// through a symlink.
fn read_bounded(path: &Path, cap: usize, side: &str) -> Result<String, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
        .map_err(|e| format!("cannot read the {side} report `{}`: {e}", path.display()))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(format!(
            "the {side} report `{}` is not a regular file",
            path.display()
        ));
    }
    let mut text = String::new();
    file.take(cap as u64 + 2)
        .read_to_string(&mut text)
        .map_err(|e| format!("the {side} report is malformed: {e}"))?;
    Ok(text)
}

/// Reads one report file under the cap: a regular file, never through a symlink.
fn read_side(path: Option<&Path>, side: &str) -> SideInput {
    let Some(path) = path else {
        return Err(SideInputError::Missing { side: side.into() });
    };
    let text = read_bounded(path, TEST_REPORT_CAP, side)
        .map_err(|message| SideInputError::Unreadable { message })?;
    Ok(encode::decode(&text, side, TEST_REPORT_CAP)?)
}

fn clip(message: &str) -> String {
    let one_line: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    line::clip(&one_line, line::MAX_ERROR_CHARS, "...")
}

fn error_line(head: &str, base: &str, message: &str, config_edited: bool) -> line::ResultLine {
    let sha = |s: &str| {
        if git::is_full_sha(s) {
            s.to_string()
        } else {
            ZERO_SHA.to_string()
        }
    };
    line::ResultLine {
        head: sha(head),
        merge_base: sha(base),
        verdict: line::Verdict::Error,
        error: Some(clip(message)),
        config_edited,
        counts: line::Counts::default(),
        tests: Vec::new(),
        deleted_tests: Vec::new(),
        not_collected: Vec::new(),
        truncated: false,
        certificate: None,
        mutants: None,
    }
}

/// An error judgement for a problem found before judging (a bad option).
pub fn judge_error(head: &str, base: &str, message: &str) -> Judgement {
    Judgement {
        line: error_line(head, base, message, false),
        classified: Classified {
            verdict: Verdict::Error,
            error: Some(message.to_string()),
            rows: Vec::new(),
            not_collected: Vec::new(),
        },
    }
}

/// Judges a pull request from its reports and git. Never fails: every problem is an error
/// verdict.
pub fn judge(input: &JudgeInput) -> Judgement {
    let empty = Classified {
        verdict: Verdict::Error,
        error: None,
        rows: Vec::new(),
        not_collected: Vec::new(),
    };
    let repo = Repo::new(&input.repo);
    for sha in [&input.base, &input.head] {
        if let Err(err) = repo.commit(sha) {
            return Judgement {
                line: error_line(&input.head, &input.base, &err.to_string(), false),
                classified: empty,
            };
        }
    }
    let planned = match plan::plan(&repo, &input.base, &input.head, input.local_config.clone()) {
        Ok(planned) => planned,
        Err(err) => {
            return Judgement {
                line: error_line(&input.head, &input.base, &err.to_string(), false),
                classified: empty,
            };
        }
    };
    let base = read_side(input.base_report.as_deref(), "base");
    let rerun = read_side(input.rerun_report.as_deref(), "base-rerun");
    let head = read_side(input.head_report.as_deref(), "head");
    // A report must be for the commit it claims to be for.
    let check = |side: SideInput, want: &str| -> SideInput {
        let report = side?;
        if report.commit == want {
            Ok(report)
        } else {
            Err(SideInputError::WrongCommit {
                side: report.side,
                commit: report.commit,
                expected: want.to_string(),
            })
        }
    };
    let base = check(base, &input.base);
    let rerun = check(rerun, &input.base);
    let head = check(head, &input.head);
    let classified = classify::classify(&planned.plan.tests, &base, &rerun, &head);
    let counts = line::Counts::tally(classified.rows.iter().map(|row| row.class));
    let tests = classified
        .rows
        .iter()
        .map(|row| line::TestLine {
            file: row.file.clone(),
            name: row.name.clone(),
            class: row.class,
            base: row.base,
            rerun: row.rerun,
            head: row.head,
        })
        .collect();
    let certificate = input.reduce_report.as_deref().map(|path| {
        let text = read_bounded(path, certificate_cap(), "reduce");
        certificate::verify(&repo, &input.base, &input.head, &planned, &classified, text)
    });
    let mutants = planned
        .plan
        .checks_mutants()
        .then(|| judge_mutants(&repo, input, &planned));
    let result = line::ResultLine {
        head: input.head.clone(),
        merge_base: input.base.clone(),
        verdict: classified.verdict,
        error: classified.error.as_deref().map(clip),
        config_edited: planned.plan.config_edited,
        counts,
        tests,
        deleted_tests: planned.plan.deleted_tests.clone(),
        not_collected: classified.not_collected.clone(),
        truncated: false,
        certificate,
        mutants,
    };
    Judgement {
        line: result,
        classified,
    }
}

/// The mutation check: the specs read at head and checked against the merge base, and
/// the mutants side's report.
fn judge_mutants(repo: &Repo, input: &JudgeInput, planned: &plan::Planned) -> line::Mutants {
    let specs = match mutants::load_specs(repo, &input.base, &input.head, planned) {
        Ok(specs) => specs,
        Err(message) => return mutants::classify(&[], Err(message), &input.base),
    };
    let report = match input.mutants_report.as_deref() {
        None => Err(format!("no {} report was given", mutants::SIDE)),
        Some(path) => read_bounded(path, TEST_REPORT_CAP, mutants::SIDE)
            .and_then(|text| mutants::decode(&text).map_err(|e| e.to_string())),
    };
    mutants::classify(&specs, report, &input.base)
}

/// Formats the judgement's line, falling back to an error line if it cannot be formatted.
pub fn format(judgement: &Judgement) -> String {
    match line::format_line(&judgement.line) {
        Ok(text) => text,
        Err(err) => {
            let fallback = error_line(
                &judgement.line.head,
                &judgement.line.merge_base,
                &format!("the result could not be formatted: {err}"),
                judgement.line.config_edited,
            );
            line::format_line(&fallback).unwrap_or_else(|_| {
                format!("repromin/v1 {{\"error\":\"{}\"}}", "unformattable result")
            })
        }
    }
}

/// A readable table of the classification, for `run`'s stderr.
pub fn table(judgement: &Judgement) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<10} {:<10} {:<10} {:<15} test",
        "base", "rerun", "head", "class"
    );
    for row in &judgement.classified.rows {
        let _ = writeln!(
            out,
            "{:<10} {:<10} {:<10} {:<15} {}::{}",
            row.base.as_str(),
            row.rerun.as_str(),
            row.head.as_str(),
            row.class.as_str(),
            row.file,
            row.name
        );
    }
    let _ = write!(out, "verdict: {}", judgement.line.verdict.as_str());
    if let Some(err) = &judgement.line.error {
        let _ = write!(out, " ({err})");
    }
    if let Some(m) = &judgement.line.mutants {
        for r in &m.results {
            let _ = write!(
                out,
                "\nmutant {:<11} {}::{}",
                r.outcome.as_str(),
                r.spec,
                r.name
            );
            match &r.failed {
                Some(failed) if failed.is_empty() => out.push_str(" (no test failed)"),
                Some(failed) => {
                    let _ = write!(out, " (failed: {})", failed.join(", "));
                }
                None => {}
            }
        }
        let _ = write!(out, "\nmutants: {}", m.verdict.as_str());
        if let Some(err) = &m.error {
            let _ = write!(out, " ({err})");
        }
    }
    out
}

/// Where `run` puts the reports.
enum OutDir {
    Temp(tempfile::TempDir),
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
pub struct RunInput {
    /// The repository.
    pub repo: PathBuf,
    /// The merge base.
    pub base: String,
    /// The head.
    pub head: String,
    /// A trusted local configuration.
    pub local_config: Option<(RepoConfig, String)>,
    /// Sandbox user for the base side.
    pub sandbox_user: Option<String>,
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
}

/// Runs both sides and the judge in one process.
pub fn run(input: &RunInput, interrupt: &std::sync::Arc<AtomicBool>) -> Judgement {
    let made = match &input.reports {
        // Kept: the directory must be new, so nothing of an earlier run is read or lost.
        Some(dir) => std::fs::create_dir(dir).map(|()| OutDir::Kept(dir.clone())),
        None => tempfile::Builder::new()
            .prefix("repromin-run-")
            .tempdir()
            .map(OutDir::Temp),
    };
    let out = match made {
        Ok(dir) => dir,
        Err(err) => {
            return Judgement {
                line: error_line(
                    &input.head,
                    &input.base,
                    &format!("cannot create the reports directory: {err}"),
                    false,
                ),
                classified: Classified {
                    verdict: Verdict::Error,
                    error: None,
                    rows: Vec::new(),
                    not_collected: Vec::new(),
                },
            };
        }
    };
    for side in [exec::Side::Base, exec::Side::Head] {
        let options = exec::ExecOptions {
            repo: input.repo.clone(),
            base: input.base.clone(),
            head: input.head.clone(),
            out: out.path().to_path_buf(),
            side,
            sandbox_user: input.sandbox_user.clone(),
            budget: input.budget,
            local_config: input.local_config.clone(),
        };
        exec::exec(&options, interrupt);
    }
    // The mutants side applies only to tests alone with a spec; the judge plans again.
    let repo = Repo::new(&input.repo);
    let planned = plan::plan(&repo, &input.base, &input.head, input.local_config.clone());
    let mutants_ran = planned.is_ok_and(|p| p.plan.checks_mutants());
    if mutants_ran {
        let options = exec::ExecOptions {
            repo: input.repo.clone(),
            base: input.base.clone(),
            head: input.head.clone(),
            out: out.path().to_path_buf(),
            side: exec::Side::Mutants,
            sandbox_user: input.sandbox_user.clone(),
            budget: input.mutants_budget,
            local_config: input.local_config.clone(),
        };
        exec::exec(&options, interrupt);
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
    let options = exec::ExecOptions {
        repo: input.repo.clone(),
        base: input.base.clone(),
        head: input.head.clone(),
        out: out.path().to_path_buf(),
        side: exec::Side::Base,
        sandbox_user: None,
        budget: input.budget,
        local_config: input.local_config.clone(),
    };
    let base_report = out.path().join("base.report");
    certificate::reduce_side(
        &certificate::ReduceSide {
            options: &options,
            base_report: &base_report,
            holdout_runs: input.holdout_runs,
        },
        interrupt,
    );
    judged(report("reduce"))
}
