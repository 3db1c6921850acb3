//! The plan: from the diff between the merge base and head, which tests run, which support
//! files are carried onto the base, which tests the pull request deletes, which paths the
//! base overlay removes, and which paths are source.
//!
//! Renames keep their identity: an exact rename of a test (R100) selects nothing, a partial
//! rename runs the new path and removes the old one from the overlay. Every path that is not
//! test material (both sides of a source rename, deleted source files) is source.
//!
//! Mutation specs (`**/*.mutations.json`) and changesets (`.changeset/*.md`) are test
//! material too: a spec is listed in `mutations` and never carried or run, a changeset is
//! listed nowhere. A diff whose `source` is empty changes tests alone.

use serde::Serialize;

use crate::gate::config::{CONFIG_PATH, ConfigError, Origin, RepoConfig};
use crate::gate::git::{Change, Repo};

/// How the name of a mutation spec ends: `<test file minus extension>.mutations.json`.
pub(crate) const SPEC_SUFFIX: &str = ".mutations.json";

/// Whether `path` is a mutation spec (`**/*.mutations.json`).
pub(crate) fn is_spec(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.len() > SPEC_SUFFIX.len() && name.ends_with(SPEC_SUFFIX)
}

/// Whether `path` is a changeset note (`.changeset/*.md`).
pub(crate) fn is_changeset(path: &str) -> bool {
    path.strip_prefix(".changeset/")
        .is_some_and(|name| !name.contains('/') && name.len() > 3 && name.ends_with(".md"))
}

/// What the gate does for one pull request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Added or changed tests to run, sorted.
    pub tests: Vec<String>,
    /// Support files to lay over the base with the tests, sorted.
    pub carry: Vec<String>,
    /// Tests the pull request deletes.
    pub deleted_tests: Vec<String>,
    /// Paths to remove from the base overlay (old sides of partial test renames, deleted
    /// carried files).
    pub overlay_removals: Vec<String>,
    /// Mutation specs the pull request adds or changes, sorted.
    pub mutations: Vec<String>,
    /// Every changed path that is not test material.
    pub source: Vec<String>,
    /// The head changes the configuration (which is read from the merge base regardless).
    pub config_edited: bool,
}

impl Plan {
    /// Whether the pull request changes test material alone (`source` is empty).
    pub fn test_only(&self) -> bool {
        self.source.is_empty()
    }

    /// Whether the mutation check applies: test material alone, with a spec added or
    /// changed.
    pub fn checks_mutants(&self) -> bool {
        self.test_only() && !self.mutations.is_empty()
    }
}

/// The plan plus the configuration it was made with.
#[derive(Clone, Debug)]
pub struct Planned {
    /// The plan.
    pub plan: Plan,
    /// The configuration.
    pub config: RepoConfig,
    /// Where it came from.
    pub origin: Origin,
}

/// Computes the plan from `changes` with `config`.
///
/// # Errors
/// A bad glob.
pub(crate) fn plan_changes(changes: &[Change], config: &RepoConfig) -> Result<Plan, ConfigError> {
    let globs = config.globs("configuration")?;
    let mut plan = Plan {
        tests: Vec::new(),
        carry: Vec::new(),
        deleted_tests: Vec::new(),
        overlay_removals: Vec::new(),
        mutations: Vec::new(),
        source: Vec::new(),
        config_edited: false,
    };
    for change in changes {
        if change.old == CONFIG_PATH || change.new == CONFIG_PATH {
            plan.config_edited = true;
        }
        // Specs and changesets are test material whatever the globs say.
        let is_note = |p: &str| is_spec(p) || is_changeset(p);
        let is_test = |p: &str| !is_note(p) && globs.is_test(p);
        let is_carry = |p: &str| !is_note(p) && !globs.is_test(p) && globs.is_carry(p);
        match change.status {
            'D' if is_note(&change.old) => {}
            'D' => {
                if is_test(&change.old) {
                    plan.deleted_tests.push(change.old.clone());
                    plan.overlay_removals.push(change.old.clone());
                } else if is_carry(&change.old) {
                    plan.overlay_removals.push(change.old.clone());
                    if globs.is_runtime(&change.old) {
                        plan.source.push(change.old.clone());
                    }
                } else {
                    plan.source.push(change.old.clone());
                }
            }
            'R' if change.score == 100 && is_test(&change.old) && is_test(&change.new) => {
                // Same content under a new name: nothing new to prove.
            }
            'R' | 'C' | 'A' | 'M' | 'T' => {
                let new = &change.new;
                if is_spec(new) {
                    plan.mutations.push(new.clone());
                } else if is_changeset(new) {
                    // Test material that is listed nowhere.
                } else if is_test(new) {
                    plan.tests.push(new.clone());
                } else if is_carry(new) {
                    plan.carry.push(new.clone());
                    if globs.is_runtime(new) {
                        plan.source.push(new.clone());
                    }
                } else {
                    plan.source.push(new.clone());
                }
                if change.status == 'R' {
                    let old = &change.old;
                    if is_note(old) {
                        // Nothing to remove: specs and changesets are never laid over.
                    } else if is_test(old) || is_carry(old) {
                        plan.overlay_removals.push(old.clone());
                    } else {
                        plan.source.push(old.clone());
                    }
                }
            }
            _ => plan.source.push(change.new.clone()),
        }
    }
    for list in [
        &mut plan.tests,
        &mut plan.carry,
        &mut plan.deleted_tests,
        &mut plan.overlay_removals,
        &mut plan.mutations,
        &mut plan.source,
    ] {
        list.sort();
        list.dedup();
    }
    Ok(plan)
}

/// Plans the pull request `base..head` in `repo`, with the merge base's configuration (or
/// `local`, a trusted configuration given on the command line).
///
/// # Errors
/// git fails, or the configuration is invalid.
pub(crate) fn plan(
    repo: &Repo,
    base: &str,
    head: &str,
    local: Option<(RepoConfig, String)>,
) -> Result<Planned, ConfigError> {
    let (config, origin) = match local {
        Some((config, path)) => (config, Origin::Local(path)),
        None => crate::gate::config::load(repo, base)?,
    };
    let changes = repo.name_status(base, head)?;
    let plan = plan_changes(&changes, &config)?;
    Ok(Planned {
        plan,
        config,
        origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(status: char, score: u32, old: &str, new: &str) -> Change {
        Change {
            status,
            score,
            old: old.into(),
            new: new.into(),
        }
    }

    fn config() -> RepoConfig {
        RepoConfig::parse(
            r#"{"version":1,"tests":["tests/**/test_*.py"],"carry":["tests/**/conftest.py","tests/data/**"],"runtime":["tests/data/plugin.py"],"command":"c","report":"junit"}"#,
            "t",
        )
        .unwrap()
    }

    #[test]
    fn renames_keep_their_identity() {
        let plan = plan_changes(
            &[
                change('M', 0, "src/a.py", "src/a.py"),
                change('A', 0, "tests/test_new.py", "tests/test_new.py"),
                change('R', 100, "tests/test_old.py", "tests/test_moved.py"),
                change('R', 87, "tests/test_p.py", "tests/test_q.py"),
                change('D', 0, "tests/test_gone.py", "tests/test_gone.py"),
                change('A', 0, "tests/conftest.py", "tests/conftest.py"),
                change('M', 0, "tests/data/plugin.py", "tests/data/plugin.py"),
                change('R', 90, "src/x.py", "src/y.py"),
                change('M', 0, ".github/repromin.json", ".github/repromin.json"),
            ],
            &config(),
        )
        .unwrap();
        assert_eq!(plan.tests, ["tests/test_new.py", "tests/test_q.py"]);
        assert_eq!(plan.carry, ["tests/conftest.py", "tests/data/plugin.py"]);
        assert_eq!(plan.deleted_tests, ["tests/test_gone.py"]);
        assert_eq!(
            plan.overlay_removals,
            ["tests/test_gone.py", "tests/test_p.py"]
        );
        assert_eq!(
            plan.source,
            [
                ".github/repromin.json",
                "src/a.py",
                "src/x.py",
                "src/y.py",
                "tests/data/plugin.py"
            ]
        );
        assert!(plan.config_edited);
        assert!(plan.mutations.is_empty() && !plan.test_only());
    }

    #[test]
    fn specs_and_changesets_are_test_material() {
        let plan = plan_changes(
            &[
                change('M', 0, "tests/test_a.py", "tests/test_a.py"),
                change(
                    'A',
                    0,
                    "tests/test_a.mutations.json",
                    "tests/test_a.mutations.json",
                ),
                change(
                    'M',
                    0,
                    "tests/data/x.mutations.json",
                    "tests/data/x.mutations.json",
                ),
                change(
                    'A',
                    0,
                    ".changeset/quiet-cats.md",
                    ".changeset/quiet-cats.md",
                ),
                change(
                    'D',
                    0,
                    "tests/old.mutations.json",
                    "tests/old.mutations.json",
                ),
            ],
            &config(),
        )
        .unwrap();
        assert_eq!(plan.tests, ["tests/test_a.py"]);
        assert_eq!(
            plan.mutations,
            ["tests/data/x.mutations.json", "tests/test_a.mutations.json"]
        );
        assert!(plan.carry.is_empty() && plan.source.is_empty());
        assert!(plan.test_only() && plan.checks_mutants());
        // One source path and the check no longer applies.
        let plan = plan_changes(
            &[
                change(
                    'A',
                    0,
                    "tests/test_a.mutations.json",
                    "tests/test_a.mutations.json",
                ),
                change('M', 0, "src/a.py", "src/a.py"),
                change('A', 0, "docs/notes.md", "docs/notes.md"),
                change('A', 0, ".changeset/a/b.md", ".changeset/a/b.md"),
            ],
            &config(),
        )
        .unwrap();
        assert_eq!(
            plan.source,
            [".changeset/a/b.md", "docs/notes.md", "src/a.py"]
        );
        assert!(!plan.checks_mutants());
        assert!(!is_spec(".mutations.json") && !is_spec("tests/.mutations.json"));
        assert!(is_spec("a.test.mutations.json"));
    }
}
