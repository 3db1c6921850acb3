//! The reduced-tree certificate: the reduce side that makes it and the judge's check.
//!
//! `exec --side reduce` takes the base tree with the head's tests overlaid, picks the first
//! selected test (path, then name order) that failed on base, and reduces the tree so that
//! this test still fails with the same normalised signature. It then runs a holdout on the
//! frozen result. Its report carries the reduction as an edit set against the
//! base-plus-overlay tree (never a copy of the files), both sizes, the content fingerprint,
//! the test, the signature, how the reduction ended and the holdout counts.
//!
//! The judge checks what it can without running code: it rebuilds the reduced tree from git
//! objects (the merge base's tree, the head's overlaid files) plus the edit set, and its
//! recomputed `tree-content-sha256-v1` must equal the report's; the edits are deletions only;
//! the holdout gate is recomputed from the counts; the test must be in the plan and
//! reproduce. The certificate has its own verdict and never changes the main one.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::gate::classify::Classified;
use crate::gate::config::ReportFormat;
use crate::gate::encode::{DecodeError, INFLATED_CAP, Outcome, REDUCE_REPORT_CAP, SideReport};
use crate::gate::git::Repo;
use crate::gate::line::TestClass;
use crate::gate::plan::{Plan, Planned};
use crate::gate::test_report::Status;
use crate::reduce::edits::Edit;
use crate::tree::{Entry, Meta, Node, Tree};

/// Holdout runs by default. With a target rate of 0.9 at confidence 0.95, fewer than 29
/// runs cannot pass even when every run reproduces (0.9^28 > 0.05), so the default is 30.
pub const HOLDOUT_RUNS: u64 = 30;
/// The default holdout target pass rate.
pub const HOLDOUT_RATE: f64 = 0.9;
/// The default holdout confidence.
pub const HOLDOUT_CONFIDENCE: f64 = 0.95;

/// Tree size in a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Size {
    /// Regular files.
    pub files: u64,
    /// Regular-file bytes.
    pub bytes: u64,
}

/// Holdout counts in a report.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoldoutCounts {
    /// Runs made.
    pub runs: u64,
    /// Runs that reproduced.
    pub passes: u64,
    /// Target pass rate.
    pub rate: f64,
    /// Confidence.
    pub confidence: f64,
}

/// A reduction as the reduce side reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reduced {
    /// The test file.
    pub file: String,
    /// The test's full name.
    pub name: String,
    /// The failure signature the reduction kept.
    pub signature: Option<String>,
    /// The reduced tree as edits against the base-plus-overlay tree.
    pub edits: Vec<Edit>,
    /// Size before.
    pub before: Size,
    /// Size after.
    pub after: Size,
    /// `tree-content-sha256-v1` of the reduced tree (what the judge checks).
    pub content_sha256: String,
    /// `tree-sha256-v2` of the reduced tree as the reduce side held it (metadata included;
    /// recorded, not checkable from git).
    pub tree_sha256_v2: String,
    /// Candidates tried.
    pub attempts: u64,
    /// Commits.
    pub accepted: u64,
    /// `fixed-point`, `max-attempts`, `max-duration` or `interrupted`.
    pub ended_by: String,
    /// Holdout counts (`None` when the holdout could not run).
    pub holdout: Option<HoldoutCounts>,
    /// Commands run by the reduction.
    pub oracle_samples: u64,
    /// Wall time of the reduction in milliseconds.
    pub reduce_ms: u64,
}

/// The reduce side's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ReduceOutcome {
    /// A reduction.
    Reduced(Box<Reduced>),
    /// It failed.
    Error {
        /// What failed.
        message: String,
    },
    /// Nothing to reduce (no test fails on base).
    Skipped {
        /// Why.
        reason: String,
    },
}

/// The encoded reduce report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReduceReport {
    /// Format version (1).
    pub v: u32,
    /// Always `reduce`.
    pub side: String,
    /// The merge base.
    pub commit: String,
    /// What happened.
    pub outcome: ReduceOutcome,
}

/// Encodes under the reduce cap; over it, an error marker saying so.
pub fn encode(report: &ReduceReport) -> String {
    let text = crate::gate::encode::encode_value(report);
    if text.len() <= REDUCE_REPORT_CAP
        && serde_json::to_vec(report).map_or(0, |j| j.len()) <= INFLATED_CAP
    {
        return text;
    }
    crate::gate::encode::encode_value(&ReduceReport {
        v: 1,
        side: "reduce".into(),
        commit: report.commit.clone(),
        outcome: ReduceOutcome::Error {
            message: format!(
                "the reduce report is {} characters encoded, over the {REDUCE_REPORT_CAP}-character cap",
                text.len()
            ),
        },
    })
}

/// Decodes a reduce report.
///
/// # Errors
/// Over the cap or malformed.
pub fn decode(text: &str) -> Result<ReduceReport, DecodeError> {
    let report: ReduceReport =
        crate::gate::encode::decode_value(text, "reduce", REDUCE_REPORT_CAP)?;
    let malformed = |reason: String| DecodeError::Malformed {
        side: "reduce".into(),
        reason,
    };
    if report.v != 1 || report.side != "reduce" {
        return Err(malformed("not a version 1 reduce report".into()));
    }
    Ok(report)
}

/// The first selected test, in path then name order, that failed on base.
pub fn pick_test(plan: &Plan, base: &SideReport) -> Option<(String, String)> {
    let Outcome::Report { report, .. } = &base.outcome else {
        return None;
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
                .map(|t| (f.path.clone(), t.name.clone()))
        })
        .collect();
    failing.sort();
    failing.into_iter().next()
}

/// Whether a relative path has a component the reducer always leaves out.
fn builtin_ignored(path: &str) -> bool {
    path.split('/')
        .any(|part| crate::tree::BUILTIN_IGNORED.contains(&part))
}

/// Rebuilds the base-plus-overlay tree from git objects: the merge base's files, the
/// head's tests and carried files over them, the overlay removals gone; directories from
/// the paths; entries with a built-in ignored component left out, as the reducer does.
///
/// # Errors
/// git fails.
pub fn rebuild(repo: &Repo, base: &str, head: &str, plan: &Plan) -> Result<Tree, String> {
    let meta = Meta {
        mode: 0o755,
        mtime_ns: 0,
    };
    let mut files: BTreeMap<String, (String, Vec<u8>)> = BTreeMap::new();
    for (path, mode) in repo.ls_tree(base).map_err(|e| e.to_string())? {
        if mode == "160000" || builtin_ignored(&path) {
            continue;
        }
        let data = repo
            .blob(base, &path)
            .map_err(|e| e.to_string())?
            .unwrap_or_default();
        files.insert(path, (mode, data));
    }
    let head_modes: BTreeMap<String, String> = repo
        .ls_tree(head)
        .map_err(|e| e.to_string())?
        .into_iter()
        .collect();
    for path in &plan.overlay_removals {
        if !plan.tests.contains(path) && !plan.carry.contains(path) {
            let below = format!("{path}/");
            files.retain(|p, _| p != path && !p.starts_with(&below));
        }
    }
    for path in plan.tests.iter().chain(&plan.carry) {
        if builtin_ignored(path) {
            continue;
        }
        if let Some(data) = repo.blob(head, path).map_err(|e| e.to_string())? {
            let mode = head_modes
                .get(path)
                .cloned()
                .unwrap_or_else(|| "100644".into());
            files.insert(path.clone(), (mode, data));
        }
    }
    let mut tree = Tree::empty(meta);
    for (path, (mode, data)) in files {
        let mut dir = String::new();
        for part in crate::tree::parent_of(&path)
            .split('/')
            .filter(|p| !p.is_empty())
        {
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(part);
            tree.entries
                .entry(Arc::from(dir.as_str()))
                .or_insert(Entry {
                    node: Node::Dir,
                    meta,
                });
        }
        let node = if mode == "120000" {
            Node::Symlink {
                target: String::from_utf8_lossy(&data).to_string(),
            }
        } else {
            Node::file(Arc::from(data))
        };
        tree.entries
            .insert(Arc::from(path.as_str()), Entry { node, meta });
    }
    Ok(tree)
}

/// Applies an edit set of deletions to `tree`.
///
/// # Errors
/// An edit that names a missing path, an out-of-range or overlapping byte range.
pub fn apply_edits(tree: &Tree, edits: &[Edit]) -> Result<Tree, String> {
    let mut out = tree.clone();
    let mut cuts: BTreeMap<String, Vec<(usize, usize)>> = BTreeMap::new();
    for edit in edits {
        match edit {
            Edit::Delete { path } => {
                if !out.entries.contains_key(path.as_str()) {
                    return Err(format!(
                        "the edit set deletes `{path}`, which is not in the tree"
                    ));
                }
                out.remove_subtree(path);
            }
            Edit::DeleteBytes { path, start, end } => {
                cuts.entry(path.clone()).or_default().push((*start, *end));
            }
        }
    }
    for (path, ranges) in cuts {
        let Some(entry) = out.entries.get_mut(path.as_str()) else {
            return Err(format!(
                "the edit set cuts `{path}`, which is not a file of the tree"
            ));
        };
        let Some(data) = entry.node.data().cloned() else {
            return Err(format!(
                "the edit set cuts `{path}`, which is not a regular file"
            ));
        };
        let mut kept = Vec::with_capacity(data.len());
        let mut at = 0;
        for (start, end) in ranges {
            if start < at || end <= start || end > data.len() {
                return Err(format!(
                    "the edit set cuts `{path}` at {start}..{end}, out of order or out of range"
                ));
            }
            kept.extend_from_slice(&data[at..start]);
            at = end;
        }
        kept.extend_from_slice(&data[at..]);
        entry.node = Node::file(Arc::from(kept));
    }
    Ok(out)
}

fn size_of(tree: &Tree) -> Size {
    let size = tree.size();
    Size {
        files: size.files,
        bytes: size.bytes,
    }
}

/// The judge's check of a reduce report: the line's certificate.
pub fn verify(
    repo: &Repo,
    base: &str,
    head: &str,
    planned: &Planned,
    classified: &Classified,
    text: Result<String, String>,
) -> crate::gate::line::Certificate {
    use crate::gate::line::{CertTest, Certificate, CertificateVerdict, Holdout, TreeSize};
    let error = |message: String| Certificate {
        verdict: CertificateVerdict::Error,
        error: Some(crate::gate::line::clip_error(&message)),
        test: None,
        before: None,
        after: None,
        content_sha256: None,
        holdout: None,
    };
    let text = match text {
        Ok(text) => text,
        Err(message) => return error(message),
    };
    let report = match decode(&text) {
        Ok(report) => report,
        Err(err) => return error(err.to_string()),
    };
    if report.commit != base {
        return error(format!(
            "the reduce report is for commit {}, not {base}",
            report.commit
        ));
    }
    let reduced = match report.outcome {
        ReduceOutcome::Reduced(reduced) => reduced,
        ReduceOutcome::Error { message } => return error(format!("reduce: {message}")),
        ReduceOutcome::Skipped { reason } => return error(format!("reduce was skipped: {reason}")),
    };
    if !planned.plan.tests.contains(&reduced.file) {
        return error(format!(
            "the certified test file `{}` is not in the plan",
            reduced.file
        ));
    }
    let reproduces = classified.rows.iter().any(|r| {
        r.file == reduced.file && r.name == reduced.name && r.class == TestClass::Reproduces
    });
    if !reproduces {
        return error(format!(
            "the certified test `{}` does not reproduce",
            reduced.name
        ));
    }
    let original = match rebuild(repo, base, head, &planned.plan) {
        Ok(tree) => tree,
        Err(message) => return error(message),
    };
    if size_of(&original) != reduced.before {
        return error(
            "the reduce report's size before does not match the base-plus-overlay tree".into(),
        );
    }
    let rebuilt = match apply_edits(&original, &reduced.edits) {
        Ok(tree) => tree,
        Err(message) => return error(message),
    };
    let fingerprint = rebuilt.content_fingerprint().to_string();
    if fingerprint != reduced.content_sha256 {
        return error(format!(
            "the edit set rebuilds a tree with tree-content-sha256-v1 {fingerprint}, not {}",
            reduced.content_sha256
        ));
    }
    if size_of(&rebuilt) != reduced.after {
        return error("the reduce report's size after does not match the rebuilt tree".into());
    }
    let test = Some(CertTest {
        file: reduced.file.clone(),
        name: reduced.name.clone(),
    });
    let before = Some(TreeSize {
        files: reduced.before.files,
        bytes: reduced.before.bytes,
    });
    let after = Some(TreeSize {
        files: reduced.after.files,
        bytes: reduced.after.bytes,
    });
    let Some(counts) = reduced.holdout else {
        return Certificate {
            verdict: CertificateVerdict::NotCertified,
            error: None,
            test,
            before,
            after,
            content_sha256: Some(fingerprint),
            holdout: None,
        };
    };
    if counts.passes > counts.runs {
        return error("the holdout reports more passes than runs".into());
    }
    let plan = match crate::stats::HoldoutPlan::new(counts.runs, counts.rate, counts.confidence) {
        Ok(plan) => plan,
        Err(err) => return error(format!("the holdout plan is unusable: {err}")),
    };
    let result = match crate::stats::holdout_result(&plan, counts.passes) {
        Ok(result) => result,
        Err(err) => return error(format!("the holdout cannot be evaluated: {err}")),
    };
    let round = |x: f64| (x * 1e6).floor() / 1e6;
    if round(counts.rate) != counts.rate || round(counts.confidence) != counts.confidence {
        return error("the holdout rate and confidence must have at most 6 decimals".into());
    }
    let verdict = if reduced.ended_by != "fixed-point" {
        CertificateVerdict::BudgetExhausted
    } else if result.certified {
        CertificateVerdict::Certified
    } else {
        CertificateVerdict::NotCertified
    };
    let certificate = Certificate {
        verdict,
        error: None,
        test,
        before,
        after,
        content_sha256: Some(fingerprint),
        holdout: Some(Holdout {
            runs: counts.runs,
            passes: counts.passes,
            rate: counts.rate,
            confidence: counts.confidence,
            lower_bound: round(result.lower_bound),
            required_passes: result.required_passes,
        }),
    };
    // Whatever the report claims, the certificate must be one the line can carry.
    match certificate.validate() {
        Ok(()) => certificate,
        Err(err) => error(format!("the certificate is inconsistent: {err}")),
    }
}

/// What the reduce side needs beyond the exec options.
pub struct ReduceSide<'a> {
    /// The exec options (side, commits, out, budget).
    pub options: &'a crate::gate::exec::ExecOptions,
    /// The base side's report.
    pub base_report: &'a Path,
    /// Holdout runs.
    pub holdout_runs: u64,
}

/// Runs the reduce side and writes `reduce.report`. Never fails: errors become markers.
pub fn reduce_side(side: &ReduceSide, interrupt: &Arc<AtomicBool>) -> ReduceReport {
    let base = side.options.base.clone();
    let outcome = match run_reduce_side(side, interrupt) {
        Ok(outcome) => outcome,
        Err(message) => ReduceOutcome::Error { message },
    };
    let report = ReduceReport {
        v: 1,
        side: "reduce".into(),
        commit: base,
        outcome,
    };
    let _ = std::fs::create_dir_all(&side.options.out);
    let path = side.options.out.join("reduce.report");
    let _ = crate::workspace::remove_any(&path);
    let _ = std::fs::write(&path, encode(&report));
    report
}

fn run_reduce_side(
    side: &ReduceSide,
    interrupt: &Arc<AtomicBool>,
) -> Result<ReduceOutcome, String> {
    let options = side.options;
    let started = Instant::now();
    let repo = Repo::new(&options.repo);
    repo.commit(&options.base).map_err(|e| e.to_string())?;
    repo.commit(&options.head).map_err(|e| e.to_string())?;
    let planned = crate::gate::plan::plan(
        &repo,
        &options.base,
        &options.head,
        options.local_config.clone(),
    )
    .map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(side.base_report).map_err(|e| {
        format!(
            "cannot read the base report `{}`: {e}",
            side.base_report.display()
        )
    })?;
    let base_report =
        crate::gate::encode::decode(&text, "base", crate::gate::encode::TEST_REPORT_CAP)
            .map_err(|e| e.to_string())?;
    let Some((file, name)) = pick_test(&planned.plan, &base_report) else {
        return Ok(ReduceOutcome::Skipped {
            reason: "no selected test fails on base".into(),
        });
    };
    let config = &planned.config;
    let scratch = tempfile::Builder::new()
        .prefix("repromin-reduce-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    // One worktree per job, each with its own installed environment (an editable install
    // or node_modules points at its own directory, so it cannot be shared or copied).
    let jobs = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, 4);
    let tree_dirs: Vec<std::path::PathBuf> = (0..jobs)
        .map(|i| scratch.path().join(format!("tree{i}")))
        .collect();
    let result = (|| -> Result<ReduceOutcome, String> {
        let mut prepared = Vec::new();
        for (i, tree_dir) in tree_dirs.iter().enumerate() {
            repo.add_worktree(tree_dir, &options.base)
                .map_err(|e| e.to_string())?;
            prepared.push(prepare_tree(
                &repo,
                options,
                &planned,
                tree_dir,
                &scratch.path().join(format!("tmp-setup{i}")),
                interrupt,
            )?);
        }
        let unmanaged = prepared[0].1.clone();
        let tree_dir = tree_dirs[0].clone();
        let rules = crate::tree::IgnoreRules {
            paths: unmanaged.clone(),
            ..crate::tree::IgnoreRules::default()
        };
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut argv = vec![
            exe.display().to_string(),
            "check-test".into(),
            "--format".into(),
            format_name(config.report).into(),
            "--file".into(),
            file.clone(),
            "--name".into(),
            name.clone(),
            "--timeout-ms".into(),
            (config.timeouts.test * 1000).to_string(),
        ];
        if config.report == crate::gate::config::ReportFormat::Libtest
            || config.command.split_whitespace().any(|w| w == "cargo")
        {
            // Dependencies stay built between runs; the tree's own packages do not.
            argv.push("--cargo-target-root".into());
            argv.push(scratch.path().join("cargo-target").display().to_string());
        }
        argv.push("--".into());
        argv.push(config.command.clone());
        let mut reduce_options = crate::reduce::ReduceOptions::new(
            tree_dir.clone(),
            scratch.path().join("unused"),
            argv,
        );
        reduce_options.rules = rules;
        reduce_options.jobs = jobs;
        reduce_options.timeout = Some(Duration::from_secs(config.timeouts.test));
        let spent = started.elapsed();
        // The holdout runs after the passes; the passes stop early enough for it (twice the
        // last baseline run's duration per holdout run), and a minute stays for the rest.
        let left = options.budget.saturating_sub(spent);
        reduce_options.max_duration = Some(
            left.saturating_sub(Duration::from_secs(60))
                .max(Duration::from_secs(1)),
        );
        reduce_options.reserve_runs = side.holdout_runs;
        let mut workers = Vec::new();
        for (i, ((model, unmanaged), tree_dir)) in prepared.into_iter().zip(&tree_dirs).enumerate()
        {
            let dirs = crate::runner::RunDirs {
                wrapper: scratch.path().join(format!("w{i}")),
                tree: tree_dir.clone(),
                tmp: scratch.path().join(format!("w{i}")).join("tmp"),
            };
            let workspace = crate::workspace::Workspace::adopt(tree_dir.clone(), &model, unmanaged)
                .map_err(|e| e.to_string())?;
            workers.push(crate::reduce::session::Worker::adopted(dirs, workspace));
        }
        let (reduction, mut session) = crate::reduce::run_reduction(
            &reduce_options,
            scratch.path(),
            crate::reduce::Place::Adopted(workers),
            interrupt,
            None,
        )
        .map_err(|e| e.to_string())?;
        // For people: how each pass spent its time (the judge never reads it).
        if let Ok(text) = serde_json::to_string_pretty(&reduction.phases) {
            let _ = std::fs::write(side.options.out.join("reduce-phases.json"), text);
        }
        // The holdout: fixed tree, fixed oracle, planned once; it never steers anything.
        // Its runs are spread over the workers, each in its own prepared worktree.
        let passes = session
            .sample_current(side.holdout_runs)
            .map_err(|e| e.to_string())?;
        let ended_by = match reduction.stopped {
            None => "fixed-point",
            Some(crate::reduce::StopReason::MaxAttempts) => "max-attempts",
            Some(crate::reduce::StopReason::MaxDuration) => "max-duration",
            Some(crate::reduce::StopReason::Interrupted) => "interrupted",
        };
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
            holdout: Some(HoldoutCounts {
                runs: side.holdout_runs,
                passes,
                rate: HOLDOUT_RATE,
                confidence: HOLDOUT_CONFIDENCE,
            }),
            oracle_samples: reduction.phases.iter().map(|p| p.oracle_samples).sum(),
            reduce_ms: reduction.reduce_ms,
        })))
    })();
    for tree_dir in &tree_dirs {
        repo.remove_worktree(tree_dir);
    }
    result
}

/// Installs and builds in a fresh worktree of the merge base, then lays the head's tests
/// over it; returns the base-plus-overlay tree and the paths install created (the
/// environment, never reduced and never touched).
fn prepare_tree(
    repo: &Repo,
    options: &crate::gate::exec::ExecOptions,
    planned: &Planned,
    tree_dir: &Path,
    tmp: &Path,
    interrupt: &AtomicBool,
) -> Result<(Tree, Vec<String>), String> {
    let config = &planned.config;
    // What git put there, before install adds anything.
    let (before_install, _) = crate::tree::scan(tree_dir, &crate::tree::IgnoreRules::default())
        .map_err(|e| e.to_string())?;
    std::fs::create_dir_all(tmp).map_err(|e| e.to_string())?;
    for command in config.install.iter().chain(config.build.iter()) {
        crate::gate::exec::shell_step(
            "install",
            command,
            tree_dir,
            tmp,
            Duration::from_secs(config.timeouts.install),
            interrupt,
        )
        .map_err(|f| f.0)?;
    }
    // Only the top-most new paths are needed: nothing below them is looked at.
    let mut unmanaged = Vec::new();
    new_paths(tree_dir, "", &before_install, &mut unmanaged).map_err(|e| e.to_string())?;
    crate::gate::exec::overlay_tree(repo, &options.head, &planned.plan, tree_dir)
        .map_err(|f| f.0)?;
    let rules = crate::tree::IgnoreRules {
        paths: unmanaged.clone(),
        ..crate::tree::IgnoreRules::default()
    };
    let (model, _) = crate::tree::scan(tree_dir, &rules).map_err(|e| e.to_string())?;
    Ok((model, unmanaged))
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

/// The configuration name of a report format.
pub fn format_name(format: ReportFormat) -> &'static str {
    match format {
        ReportFormat::Junit => "junit",
        ReportFormat::VitestJson => "vitest-json",
        ReportFormat::JestJson => "jest-json",
        ReportFormat::Libtest => "libtest",
        ReportFormat::GoTestJson => "go-test-json",
        ReportFormat::NodeTest => "node-test",
    }
}
