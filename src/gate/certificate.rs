//! The reduced-tree certificate: the reduce report and the judge's check of it.
//!
//! The reduce side (`crate::gate::sides::reduce`) reduces the base-plus-overlay tree for
//! the first test that fails on base and runs a holdout on the frozen result. Its report
//! carries the reduction as an edit set against the
//! base-plus-overlay tree (never a copy of the files), both sizes, the content fingerprint,
//! the test, the signature, how the reduction ended and the holdout counts.
//!
//! The judge checks what it can without running code: it rebuilds the reduced tree from git
//! objects (the merge base's tree, the head's overlaid files) plus the edit set, and its
//! recomputed `tree-content-sha256-v1` must equal the report's; the edits are deletions and
//! replacements each listed with the SHA-256 of the bytes it replaces (at most
//! [`crate::reduce::edits::REPLACEMENTS_MAX`] of at most
//! [`crate::reduce::edits::REPLACED_BYTES_MAX`] bytes in all); the holdout gate is recomputed from the counts; the test must be in the plan and
//! reproduce. The certificate has its own verdict and never changes the main one.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::gate::classify::Classified;
use crate::gate::encode::{DecodeError, INFLATED_CAP, REDUCE_REPORT_CAP};
use crate::gate::git::{GitError, Repo};
use crate::gate::line::TestClass;
use crate::gate::plan::{Plan, Planned};
use crate::reduce::edits::Edit;
use crate::tree::{Entry, Meta, Node, Tree};

/// Why the reduced tree cannot be rebuilt from git and the edit set.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// A git call failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// A deletion names a path the tree lacks.
    #[error("the edit set deletes `{path}`, which is not in the tree")]
    DeleteMissing {
        /// The path.
        path: String,
    },
    /// A cut names a path the tree lacks.
    #[error("the edit set cuts `{path}`, which is not a file of the tree")]
    CutMissing {
        /// The path.
        path: String,
    },
    /// A cut names a path that is not a regular file.
    #[error("the edit set cuts `{path}`, which is not a regular file")]
    CutNotRegular {
        /// The path.
        path: String,
    },
    /// A cut's byte range is out of order or out of range.
    #[error("the edit set cuts `{path}` at {start}..{end}, out of order or out of range")]
    EditOutOfRange {
        /// The path.
        path: String,
        /// Start of the range.
        start: usize,
        /// End of the range.
        end: usize,
    },
    /// A replacement's hash is not that of the bytes it says it replaces.
    #[error(
        "the edit set replaces `{path}` at {start}..{end}, but those bytes of the tree do not have the SHA-256 it names"
    )]
    ReplaceMismatch {
        /// The path.
        path: String,
        /// Start of the range.
        start: usize,
        /// End of the range.
        end: usize,
    },
    /// The edit set carries more replacements than a certificate may.
    #[error(
        "the edit set carries {count} replacements of {bytes} bytes in all; a certificate may carry at most {} of at most {} bytes",
        crate::reduce::edits::REPLACEMENTS_MAX,
        crate::reduce::edits::REPLACED_BYTES_MAX
    )]
    TooManyReplacements {
        /// Replacements.
        count: usize,
        /// Their bytes in all.
        bytes: usize,
    },
}

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
///
/// # Errors
/// The report or its marker cannot be encoded.
pub fn encode(report: &ReduceReport) -> Result<String, crate::gate::encode::EncodeError> {
    let json = crate::gate::encode::to_json(report)?;
    let text = crate::gate::encode::encode_json(&json)?;
    if text.len() <= REDUCE_REPORT_CAP && json.len() <= INFLATED_CAP {
        return Ok(text);
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
pub fn rebuild(repo: &Repo, base: &str, head: &str, plan: &Plan) -> Result<Tree, CertificateError> {
    let meta = Meta {
        mode: 0o755,
        mtime_ns: 0,
    };
    let mut files: BTreeMap<String, (String, Vec<u8>)> = BTreeMap::new();
    for (path, mode) in repo.ls_tree(base)? {
        if mode == "160000" || builtin_ignored(&path) {
            continue;
        }
        let data = repo.blob(base, &path)?.unwrap_or_default();
        files.insert(path, (mode, data));
    }
    let head_modes: BTreeMap<String, String> = repo.ls_tree(head)?.into_iter().collect();
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
        if let Some(data) = repo.blob(head, path)? {
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
    // A symlink that leads out of the tree is no entry the reduce side holds: it stayed in
    // place there, outside the reduction.
    let outside: Vec<Arc<str>> = tree
        .entries
        .iter()
        .filter_map(|(path, entry)| match &entry.node {
            Node::Symlink { target } => Some((path, target)),
            _ => None,
        })
        .filter(|(path, target)| {
            !crate::tree::link_resolves_inside(path, target, |p| match tree.entries.get(p) {
                Some(Entry {
                    node: Node::Symlink { target },
                    ..
                }) => Some(target.as_str()),
                _ => None,
            })
        })
        .map(|(path, _)| path.clone())
        .collect();
    for path in outside {
        tree.entries.remove(&path);
    }
    Ok(tree)
}

/// Applies an edit set of deletions and listed replacements to `tree`.
///
/// # Errors
/// An edit that names a missing path, an out-of-range or overlapping byte range, a
/// replacement whose SHA-256 does not match what it replaces, or more replacements than a
/// certificate may carry.
pub fn apply_edits(tree: &Tree, edits: &[Edit]) -> Result<Tree, CertificateError> {
    let mut out = tree.clone();
    // Per file: each range, with the SHA-256 and text of its replacement if it is one.
    type Cut<'a> = (usize, usize, Option<(&'a str, &'a str)>);
    let mut cuts: BTreeMap<String, Vec<Cut>> = BTreeMap::new();
    let (mut count, mut bytes) = (0usize, 0usize);
    for edit in edits {
        match edit {
            Edit::Delete { path } => {
                if !out.entries.contains_key(path.as_str()) {
                    return Err(CertificateError::DeleteMissing { path: path.clone() });
                }
                out.remove_subtree(path);
            }
            Edit::DeleteBytes { path, start, end } => {
                cuts.entry(path.clone())
                    .or_default()
                    .push((*start, *end, None));
            }
            Edit::Replace {
                path,
                start,
                end,
                sha256,
                with,
            } => {
                count += 1;
                bytes = bytes.saturating_add(with.len());
                cuts.entry(path.clone()).or_default().push((
                    *start,
                    *end,
                    Some((sha256.as_str(), with.as_str())),
                ));
            }
        }
    }
    if count > crate::reduce::edits::REPLACEMENTS_MAX
        || bytes > crate::reduce::edits::REPLACED_BYTES_MAX
    {
        return Err(CertificateError::TooManyReplacements { count, bytes });
    }
    for (path, ranges) in cuts {
        let Some(entry) = out.entries.get_mut(path.as_str()) else {
            return Err(CertificateError::CutMissing { path });
        };
        let Some(data) = entry.node.data().cloned() else {
            return Err(CertificateError::CutNotRegular { path });
        };
        let mut kept = Vec::with_capacity(data.len());
        let mut at = 0;
        for (start, end, replace) in ranges {
            if start < at || end <= start || end > data.len() {
                return Err(CertificateError::EditOutOfRange { path, start, end });
            }
            kept.extend_from_slice(&data[at..start]);
            if let Some((sha256, with)) = replace {
                let found = crate::tree::Fingerprint(Sha256::digest(&data[start..end]).into());
                if found.to_string() != sha256 {
                    return Err(CertificateError::ReplaceMismatch { path, start, end });
                }
                kept.extend_from_slice(with.as_bytes());
            }
            at = end;
        }
        kept.extend_from_slice(&data[at..]);
        entry.node = Node::file(Arc::from(kept));
    }
    Ok(out)
}

/// The size of a tree as a report carries it.
pub(crate) fn size_of(tree: &Tree) -> Size {
    let size = tree.size();
    Size {
        files: size.files,
        bytes: size.bytes,
    }
}

/// The most holdout runs a reduce report may count (see [`crate::stats::MAX_PLAN_RUNS`]).
pub const HOLDOUT_RUNS_MAX: u64 = crate::stats::MAX_PLAN_RUNS;

/// A holdout value as the line carries it: at most 6 decimals.
fn round6(x: f64) -> f64 {
    (x * 1e6).floor() / 1e6
}

/// Checks a report's holdout counts before anything is computed from them: the runs under
/// [`HOLDOUT_RUNS_MAX`], no more passes than runs, a rate and a confidence of at most 6
/// decimals.
fn check_holdout_counts(counts: &HoldoutCounts) -> Result<(), String> {
    if counts.runs > HOLDOUT_RUNS_MAX {
        return Err(format!(
            "the reduce report's holdout `runs` is {}, over the cap of {HOLDOUT_RUNS_MAX}",
            counts.runs
        ));
    }
    if counts.passes > counts.runs {
        return Err("the holdout reports more passes than runs".into());
    }
    if round6(counts.rate) != counts.rate || round6(counts.confidence) != counts.confidence {
        return Err("the holdout rate and confidence must have at most 6 decimals".into());
    }
    Ok(())
}

/// The judge's check of a reduce report (`text`, or why it could not be read): the line's
/// certificate.
pub fn verify(
    repo: &Repo,
    base: &str,
    head: &str,
    planned: &Planned,
    classified: &Classified,
    text: Result<String, impl std::fmt::Display>,
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
        Err(err) => return error(err.to_string()),
    };
    let report = match decode(&text) {
        Ok(report) => report,
        Err(err) => return error(crate::with_causes(&err)),
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
    // Every count is bounded before anything is computed from it: the exact holdout gate
    // grows with the square of the runs.
    if let Some(counts) = &reduced.holdout
        && let Err(message) = check_holdout_counts(counts)
    {
        return error(message);
    }
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
        Err(err) => return error(err.to_string()),
    };
    if size_of(&original) != reduced.before {
        return error(
            "the reduce report's size before does not match the base-plus-overlay tree".into(),
        );
    }
    let rebuilt = match apply_edits(&original, &reduced.edits) {
        Ok(tree) => tree,
        Err(err) => return error(err.to_string()),
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
    let plan = match crate::stats::HoldoutPlan::new(counts.runs, counts.rate, counts.confidence) {
        Ok(plan) => plan,
        Err(err) => {
            return error(format!(
                "the holdout plan is unusable: {}",
                crate::with_causes(&err)
            ));
        }
    };
    let result = match crate::stats::holdout_result(&plan, counts.passes) {
        Ok(result) => result,
        Err(err) => {
            return error(format!(
                "the holdout cannot be evaluated: {}",
                crate::with_causes(&err)
            ));
        }
    };
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
            lower_bound: round6(result.lower_bound),
            required_passes: result.required_passes,
        }),
    };
    // Whatever the report claims, the certificate must be one the line can carry.
    match certificate.validate() {
        Ok(()) => certificate,
        Err(err) => error(format!(
            "the certificate is inconsistent: {}",
            crate::with_causes(&err)
        )),
    }
}
