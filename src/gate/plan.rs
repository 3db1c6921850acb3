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

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::gate::config::{CONFIG_PATH, ConfigError, Origin, RepoConfig};
use crate::gate::detect::workspace::Workspace;
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
    /// Data files under a test directory that the pull request adds or changes (carried
    /// with the tests). When no test file changes, they select the tests that read them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub data: Vec<String>,
    /// Whether `tests` were selected through `data` rather than changed themselves: then
    /// only the test ids that name a changed data file are judged, when any does.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub selected_by_data: bool,
}

/// Directory names that hold tests and their data.
const TEST_DIRS: [&str; 4] = ["test", "tests", "__tests__", "testdata"];

/// The directory of `path` up to and including its first test directory (`tests/`,
/// `pkg/test/`), when it has one above the file.
fn test_root(path: &str) -> Option<&str> {
    let mut end = 0;
    for part in path.split('/') {
        let next = end + part.len();
        if next >= path.len() {
            return None;
        }
        if TEST_DIRS.contains(&part) {
            return Some(&path[..=next]);
        }
        end = next + 1;
    }
    None
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
        data: Vec::new(),
        selected_by_data: false,
    };
    for change in changes {
        if change.old == CONFIG_PATH || change.new == CONFIG_PATH {
            plan.config_edited = true;
        }
        // Specs and changesets are test material whatever the globs say.
        let is_note = |p: &str| is_spec(p) || is_changeset(p);
        let is_test = |p: &str| !is_note(p) && globs.is_test(p);
        // Anything else under a test directory is test material, carried like `carry`;
        // what is not code there is data, which can select the tests that read it.
        let is_data =
            |p: &str| !is_note(p) && !globs.is_test(p) && test_root(p).is_some() && !is_code(p);
        let is_carry = |p: &str| {
            !is_note(p) && !globs.is_test(p) && (globs.is_carry(p) || test_root(p).is_some())
        };
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
                    if is_data(new) && !globs.is_runtime(new) {
                        plan.data.push(new.clone());
                    }
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
        &mut plan.data,
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
    let (mut config, mut origin, workspace) = match local {
        Some((config, path)) => (config, Origin::Local(path), None),
        None => {
            let loaded = crate::gate::detect::load(repo, base)?;
            (loaded.config, loaded.origin, loaded.workspace)
        }
    };
    let changes = repo.name_status(base, head)?;
    let mut plan = plan_changes(&changes, &config)?;
    if plan.tests.is_empty() && !plan.data.is_empty() {
        let (files, read) = repo.files_and_text(head)?;
        plan.tests = consumers(&plan.data, &files, &config, &read)?;
        plan.selected_by_data = !plan.tests.is_empty();
    }
    if let Some(workspace) = workspace
        && !plan.tests.is_empty()
    {
        workspace_builds(repo, head, &plan, &workspace, &mut config, &mut origin)?;
    }
    check_links(repo, base, head, &plan)?;
    Ok(Planned {
        plan,
        config,
        origin,
    })
}

/// The symlinks of `commit`'s tree: path to target.
fn links_of(repo: &Repo, commit: &str) -> Result<HashMap<String, String>, ConfigError> {
    let mut links = HashMap::new();
    for (path, mode) in repo.ls_tree(commit)? {
        if mode == LINK_MODE {
            let target = repo.blob(commit, &path)?.unwrap_or_default();
            links.insert(path, String::from_utf8_lossy(&target).into_owned());
        }
    }
    Ok(links)
}

/// git's mode of a symlink.
const LINK_MODE: &str = "120000";

/// Checks that every file a verdict depends on comes from the commits: no test, carried
/// file or data file of `plan` is a symlink that leaves the tree (an absolute target, or a
/// `..` above the root, directly or through the tree's other links), neither at head (the
/// head side) nor on the merge base with the head's files laid over it (the base, mutants
/// and reduce sides). Every side plans through [`plan`], and so does the judge: a pull
/// request that breaks the rule is an `error` naming the link, whichever side looks. The
/// rule is the tree model's ([`crate::tree::link_resolves_inside`]), which the reduce side
/// applies again to the whole tree it reduces.
///
/// # Errors
/// [`ConfigError::LinkLeavesTree`] for the first such link, or git fails.
fn check_links(repo: &Repo, base: &str, head: &str, plan: &Plan) -> Result<(), ConfigError> {
    let laid: HashSet<&str> = plan
        .tests
        .iter()
        .chain(&plan.carry)
        .map(String::as_str)
        .collect();
    let mut depends: Vec<&str> = laid
        .iter()
        .copied()
        .chain(plan.data.iter().map(String::as_str))
        .collect();
    depends.sort_unstable();
    depends.dedup();
    let head_modes: HashMap<String, String> = repo.ls_tree(head)?.into_iter().collect();
    if !depends
        .iter()
        .any(|path| head_modes.get(*path).is_some_and(|mode| mode == LINK_MODE))
    {
        return Ok(());
    }
    let at_head = links_of(repo, head)?;
    let at_base = links_of(repo, base)?;
    let removed: HashSet<&str> = plan.overlay_removals.iter().map(String::as_str).collect();
    // The merge base with the head's tests and carried files laid over it, as
    // `overlay_tree` writes it: a laid file is the head's, a directory above one is a real
    // directory, a removal is gone, anything else is the base's.
    let overlaid = |path: &str| -> Option<&str> {
        if laid.contains(path) {
            return at_head.get(path).map(String::as_str);
        }
        let dir = format!("{path}/");
        if removed.contains(path) || laid.iter().any(|laid| laid.starts_with(&dir)) {
            return None;
        }
        at_base.get(path).map(String::as_str)
    };
    for path in depends {
        let Some(target) = at_head.get(path) else {
            continue;
        };
        let inside_head =
            crate::tree::link_resolves_inside(path, target, |p| at_head.get(p).map(String::as_str));
        if !inside_head || !crate::tree::link_resolves_inside(path, target, overlaid) {
            return Err(ConfigError::LinkLeavesTree {
                path: path.to_string(),
                target: target.escape_debug().to_string(),
                place: if inside_head {
                    "on the merge base with the pull request's tests laid over it"
                } else {
                    "at head"
                },
            });
        }
    }
    Ok(())
}

/// The build step of a detected Node workspace: the packages the selected tests need
/// (read at head, as they run on both sides), built before the root's scripts that run
/// before the tests; what was chosen is added to the detection's notes.
///
/// # Errors
/// A test file cannot be read.
fn workspace_builds(
    repo: &Repo,
    head: &str,
    plan: &Plan,
    workspace: &Workspace,
    config: &mut RepoConfig,
    origin: &mut Origin,
) -> Result<(), ConfigError> {
    let mut texts = std::collections::HashMap::new();
    for test in &plan.tests {
        let bytes = repo.blob(head, test)?.unwrap_or_default();
        texts.insert(test.as_str(), String::from_utf8_lossy(&bytes).into_owned());
    }
    let read = |path: &str| texts.get(path).cloned().unwrap_or_default();
    let builds = workspace.builds(&plan.tests, &read);
    config.build = match (builds.command, config.build.take()) {
        (Some(packages), Some(root)) => Some(format!("{packages} && {root}")),
        (packages, root) => packages.or(root),
    };
    if let Origin::Detected { notes, .. } = origin {
        notes.push(builds.note);
    }
    Ok(())
}

/// Whether `path` is source code by its extension (a test helper, not data).
fn is_code(path: &str) -> bool {
    const CODE: [&str; 14] = [
        "py", "js", "mjs", "cjs", "ts", "mts", "cts", "tsx", "jsx", "rs", "go", "java", "kt", "rb",
    ];
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| CODE.contains(&ext))
}

/// The most test files a data change selects.
const MAX_CONSUMERS: usize = 50;

/// The test files that read the changed data files: per data file, the test files in its
/// test directory's tree that name its directory or its file name, or, when none does,
/// every test file of that tree.
///
/// # Errors
/// A bad glob.
pub(crate) fn consumers(
    data: &[String],
    files: &[String],
    config: &RepoConfig,
    read: &dyn Fn(&str) -> String,
) -> Result<Vec<String>, ConfigError> {
    let globs = config.globs("configuration")?;
    // Each test file is read once, however many data files ask about it.
    let mut texts: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
    let mut selected = Vec::new();
    for file in data {
        let Some(root) = test_root(file) else {
            continue;
        };
        let tree: Vec<&String> = files
            .iter()
            .filter(|f| f.starts_with(root) && globs.is_test(f) && !is_spec(f))
            .collect();
        let dir = crate::tree::parent_of(file);
        let dir_name = dir.rsplit('/').next().unwrap_or(dir);
        let name = file.rsplit('/').next().unwrap_or(file);
        let naming: Vec<&String> = tree
            .iter()
            .copied()
            .filter(|t| {
                let text = texts.entry(t.as_str()).or_insert_with(|| read(t));
                (!dir_name.is_empty()
                    && dir != root.trim_end_matches('/')
                    && text.contains(dir_name))
                    || text.contains(name)
            })
            .collect();
        let chosen = if naming.is_empty() { tree } else { naming };
        selected.extend(chosen.into_iter().cloned());
    }
    selected.sort();
    selected.dedup();
    selected.truncate(MAX_CONSUMERS);
    Ok(selected)
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

    #[test]
    fn data_under_a_test_directory_is_carried_and_selects_its_readers() {
        assert_eq!(test_root("tests/cases/a.json"), Some("tests/"));
        assert_eq!(test_root("pkg/test/data/x.txt"), Some("pkg/test/"));
        assert_eq!(test_root("tests"), None);
        assert_eq!(test_root("src/a.json"), None);
        let config = config();
        let changes = [
            change('A', 0, "", "tests/cases/neg.json"),
            change('M', 0, "", "tests/helpers.py"),
            change('M', 0, "", "src/calc.py"),
        ];
        let plan = plan_changes(&changes, &config).unwrap();
        assert!(plan.tests.is_empty());
        assert_eq!(plan.carry, ["tests/cases/neg.json", "tests/helpers.py"]);
        assert_eq!(plan.data, ["tests/cases/neg.json"], "code is not data");
        assert_eq!(plan.source, ["src/calc.py"]);
        let files: Vec<String> = [
            "tests/test_cases.py",
            "tests/test_other.py",
            "other/tests/test_far.py",
        ]
        .map(String::from)
        .to_vec();
        let read = |path: &str| {
            if path == "tests/test_cases.py" {
                "CASES = HERE / 'cases'".to_string()
            } else {
                String::new()
            }
        };
        let picked = consumers(&plan.data, &files, &config, &read).unwrap();
        assert_eq!(picked, ["tests/test_cases.py"]);
        let nobody = |_: &str| String::new();
        let picked = consumers(&plan.data, &files, &config, &nobody).unwrap();
        assert_eq!(picked, ["tests/test_cases.py", "tests/test_other.py"]);
    }
}
