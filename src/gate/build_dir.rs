//! The cargo build directory each worker of the reduce side keeps between runs.
//!
//! Cargo decides freshness by modification times, and the reducer restores the original
//! times of the files it rewrites, so an artifact built from an earlier tree could pass for
//! fresh. Before every run, the freshness records (`<profile>/.fingerprint/<package>-<hash>`)
//! of every package whose sources are in the tree are therefore removed: cargo compiles them
//! again from the sources the run holds (rustc's incremental cache, which compares file
//! contents, makes that quick). The records of packages from outside the tree (a registry, a
//! git source) stay, so those are built once.
//!
//! Which records are whose is asked of `cargo metadata` once, before the first run; after
//! it, what the run left is classified and kept beside the build directory ([`Kept`]), and
//! every later run removes each record that is not a known outside package's without
//! asking cargo again (about 20 ms a run). A record that
//! appears and is neither a known outside package's nor named like one of the tree's
//! packages (a dependency built with other features after a manifest cut, a package
//! renamed by a cut) makes the next run ask again. A record nobody has classified is
//! removed: the only error this can make is a rebuild.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::runner::{self, CommandSpec, Termination};

/// Why the build directory of a worker cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BuildDirError {
    /// It could not be made.
    #[error("cannot create the build directory `{}`", dir.display())]
    Create {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It could not be emptied.
    #[error("cannot empty the build directory `{}`", dir.display())]
    Empty {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What a worker's build directory remembers between runs, in `<dir>.kept.json` beside it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Kept {
    /// The names of the packages whose sources are in the tree, as cargo last listed them.
    pub(crate) tree: Vec<String>,
    /// The freshness records (relative to the build directory) of packages from outside
    /// the tree: the only records that survive from one run to the next.
    pub(crate) outside: BTreeSet<String>,
}

/// One worker's build directory, prepared for a run.
pub(crate) struct BuildDir {
    /// The directory (`CARGO_TARGET_DIR`).
    pub(crate) dir: PathBuf,
    /// What it remembered before the run (`None`: nothing usable).
    kept: Option<Kept>,
    /// The tree's packages, when cargo was asked before this run.
    asked: Option<Vec<String>>,
}

/// How to ask cargo about the tree in the working directory.
pub(crate) struct Cargo<'a> {
    /// The tree.
    pub(crate) cwd: &'a Path,
    /// The run's temporary directory.
    pub(crate) tmp: &'a Path,
    /// Time limit of one question.
    pub(crate) timeout: Duration,
    /// Stop flag.
    pub(crate) never: &'a AtomicBool,
}

impl Cargo<'_> {
    /// The names of the packages whose sources are in the tree: every package `cargo
    /// metadata` lists without a source (path packages, workspace members or not), or,
    /// when the dependency graph cannot be resolved offline, the workspace members. `None`
    /// when cargo cannot tell.
    fn tree_packages(&self, dir: &Path) -> Option<Vec<String>> {
        let ask = |no_deps: bool| -> Option<Vec<String>> {
            let mut argv = vec!["cargo", "metadata", "--format-version", "1", "--offline"];
            if no_deps {
                argv.push("--no-deps");
            }
            let metadata = CommandSpec {
                argv: argv.into_iter().map(String::from).collect(),
                env: vec![("CARGO_TARGET_DIR".to_string(), dir.display().to_string())],
                memory: None,
            };
            let output = runner::run(&metadata, self.cwd, self.tmp, self.timeout, self.never)
                .ok()
                .filter(|o| o.termination == Termination::Exited(0))?;
            // Cargo's JSON is the last line; warnings may come before it.
            let text = String::from_utf8_lossy(&output.output).to_string();
            let line = text.lines().rev().find(|l| l.starts_with('{'))?;
            let value: serde_json::Value = serde_json::from_str(line).ok()?;
            let names = value
                .get("packages")?
                .as_array()?
                .iter()
                .filter(|p| p.get("source").is_none_or(serde_json::Value::is_null))
                .filter_map(|p| p.get("name")?.as_str().map(str::to_string))
                .collect();
            Some(names)
        };
        ask(false).or_else(|| ask(true))
    }
}

/// Whether `record` (a path ending in `<package>-<16 hex digits>`) is the record of one of
/// the packages `names`.
fn is_record_of(record: &str, names: &[String]) -> bool {
    let file = record.rsplit('/').next().unwrap_or(record);
    names.iter().any(|name| {
        file.strip_prefix(name.as_str())
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|hash| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
    })
}

/// Every freshness record in `dir`, relative to it. Profiles sit at `dir/<profile>`, or
/// `dir/<target triple>/<profile>` when cross-building.
fn records(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut found = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((at, depth)) = stack.pop() {
        for entry in std::fs::read_dir(&at)? {
            let entry = entry?;
            if !entry.file_type()?.is_dir() {
                continue;
            }
            let path = entry.path();
            if entry.file_name() == ".fingerprint" {
                for record in std::fs::read_dir(&path)? {
                    let record = record?.path();
                    if let Ok(rel) = record.strip_prefix(dir) {
                        found.push(rel.to_string_lossy().into_owned());
                    }
                }
            } else if depth < 2 {
                stack.push((path, depth + 1));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Removes the records of `dir` that `keep` says to remove.
fn remove_records(dir: &Path, keep: impl Fn(&str) -> bool) -> std::io::Result<()> {
    for record in records(dir)? {
        if !keep(&record) {
            std::fs::remove_dir_all(dir.join(&record))?;
        }
    }
    Ok(())
}

/// Where the build directory `dir` keeps its [`Kept`].
fn kept_path(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_os_string();
    name.push(".kept.json");
    PathBuf::from(name)
}

/// What `dir` remembered; `None` when nothing, or nothing readable.
fn read_kept(dir: &Path) -> Option<Kept> {
    let text = std::fs::read(kept_path(dir)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Writes what `dir` remembers, whole or not at all.
fn write_kept(dir: &Path, kept: &Kept) -> std::io::Result<()> {
    let path = kept_path(dir);
    let mut part = path.as_os_str().to_os_string();
    part.push(".part");
    let part = PathBuf::from(part);
    std::fs::write(
        &part,
        serde_json::to_vec(kept).map_err(std::io::Error::other)?,
    )?;
    std::fs::rename(&part, &path)
}

/// The build directory of the worker running in `cargo.cwd`, under `root`, with every
/// record removed but those of known outside packages (see the module documentation).
pub(crate) fn prepare(root: &Path, cargo: &Cargo<'_>) -> Result<BuildDir, BuildDirError> {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(cargo.cwd.as_os_str().as_encoded_bytes());
    let name = crate::text::hex(&digest[..8]);
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).map_err(|source| BuildDirError::Create {
        dir: dir.clone(),
        source,
    })?;
    let kept = read_kept(&dir);
    let (asked, cleaned) = match &kept {
        Some(kept) => (
            None,
            remove_records(&dir, |r| kept.outside.contains(r)).is_ok(),
        ),
        None => {
            let asked = cargo.tree_packages(&dir);
            let cleaned = asked
                .as_ref()
                .is_some_and(|names| remove_records(&dir, |r| !is_record_of(r, names)).is_ok());
            (asked, cleaned)
        }
    };
    if !cleaned {
        // Whatever cannot be cleaned goes entirely, and what it remembered with it.
        let _ = std::fs::remove_file(kept_path(&dir));
        std::fs::remove_dir_all(&dir)
            .and_then(|()| std::fs::create_dir_all(&dir))
            .map_err(|source| BuildDirError::Empty {
                dir: dir.clone(),
                source,
            })?;
        return Ok(BuildDir {
            dir,
            kept: None,
            asked: None,
        });
    }
    Ok(BuildDir { dir, kept, asked })
}

impl BuildDir {
    /// After the run: remembers the records of outside packages the run left, asking cargo
    /// which packages are the tree's when a record appeared that nothing classifies. What
    /// cannot be remembered is asked again before the next run.
    pub(crate) fn remember(self, cargo: &Cargo<'_>) {
        let Ok(found) = records(&self.dir) else {
            return;
        };
        let before = self.kept.unwrap_or_default();
        let tree = match self.asked {
            Some(names) => names,
            None => {
                let unknown = found
                    .iter()
                    .any(|r| !before.outside.contains(r) && !is_record_of(r, &before.tree));
                if !unknown {
                    return;
                }
                match cargo.tree_packages(&self.dir) {
                    Some(names) => names,
                    None => return,
                }
            }
        };
        let mut outside = before.outside;
        outside.extend(found.into_iter().filter(|r| !is_record_of(r, &tree)));
        let kept = Kept { tree, outside };
        if write_kept(&self.dir, &kept).is_err() {
            let _ = std::fs::remove_file(kept_path(&self.dir));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_belongs_to_a_package_by_its_whole_name_and_hash() {
        let names = vec!["semver".to_string()];
        assert!(is_record_of(
            "debug/.fingerprint/semver-0123456789abcdef",
            &names
        ));
        assert!(!is_record_of(
            "debug/.fingerprint/semver-x-0123456789abcdef",
            &names
        ));
        assert!(!is_record_of("debug/.fingerprint/semver-0123", &names));
        assert!(!is_record_of(
            "debug/.fingerprint/serde-0123456789abcdef",
            &names
        ));
    }

    #[test]
    fn only_the_records_of_known_outside_packages_survive_a_prepared_run() {
        let root = tempfile::tempdir().unwrap();
        let tree = tempfile::tempdir().unwrap();
        let never = AtomicBool::new(false);
        let cargo = Cargo {
            cwd: tree.path(),
            tmp: tree.path(),
            timeout: Duration::from_secs(60),
            never: &never,
        };
        // A directory that remembers `dep` as outside and `mine` as the tree's.
        let first = prepare(root.path(), &cargo).unwrap();
        let dir = first.dir.clone();
        let record = |name: &str| format!("debug/.fingerprint/{name}-0123456789abcdef");
        for name in ["dep", "mine", "stranger"] {
            std::fs::create_dir_all(dir.join(record(name))).unwrap();
        }
        write_kept(
            &dir,
            &Kept {
                tree: vec!["mine".into()],
                outside: [record("dep")].into_iter().collect(),
            },
        )
        .unwrap();
        let again = prepare(root.path(), &cargo).unwrap();
        assert_eq!(again.dir, dir);
        assert_eq!(records(&dir).unwrap(), [record("dep")]);
        // A record nothing classifies, left by the run, makes it ask cargo; where cargo
        // cannot tell (no Cargo.toml here), nothing new is remembered.
        std::fs::create_dir_all(dir.join(record("stranger"))).unwrap();
        again.remember(&cargo);
        let kept = read_kept(&dir).unwrap();
        assert_eq!(kept.outside, [record("dep")].into_iter().collect());
        // What cannot be read is forgotten and asked for again.
        std::fs::write(kept_path(&dir), b"{").unwrap();
        assert!(prepare(root.path(), &cargo).unwrap().kept.is_none());
    }
}
