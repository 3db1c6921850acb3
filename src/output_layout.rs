//! Where a reduction's result lives on disk: the payload OUTPUT, its sidecar
//! `OUTPUT.repromin/` with `report.json` and `REPROMIN.md`, and the staging directory
//! `.repromin-staging-*` in OUTPUT's parent where both are prepared (with the owner file and
//! the publication record that let a later run clean up after a crash).
//!
//! A leaf module of paths and names only: validation ([`crate::reduce::validate`]) checks the
//! layout before anything runs, and [`crate::export`] fills it in.

use std::path::{Path, PathBuf};

/// The suffix that names the sidecar: `OUTPUT` + `.repromin`.
pub(crate) const SIDECAR_SUFFIX: &str = ".repromin";
/// The prefix of the staging directory made in OUTPUT's parent.
pub(crate) const STAGING_PREFIX: &str = ".repromin-staging-";
/// The payload's name inside the staging directory.
pub(crate) const STAGED_PAYLOAD: &str = "payload";
/// The sidecar's name inside the staging directory.
pub(crate) const STAGED_SIDECAR: &str = "meta";
/// The owner file in the staging directory: which process made it ([`crate::owner`]).
pub(crate) const STAGING_OWNER: &str = "owner";
/// The record, in the staging directory, that the payload is about to be renamed to OUTPUT.
pub(crate) const STAGING_JOURNAL: &str = "publishing";
/// The machine-readable report in the sidecar.
pub(crate) const REPORT_JSON: &str = "report.json";
/// The report for people in the sidecar.
pub(crate) const REPORT_MARKDOWN: &str = "REPROMIN.md";
/// The picture of the reduction's course in the sidecar.
pub(crate) const PROGRESS_SVG: &str = "progress.svg";

/// The paths of one output: the payload, its sidecar and the directory both go in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OutputLayout {
    /// The payload directory, OUTPUT.
    pub output: PathBuf,
    /// The sidecar directory, `OUTPUT.repromin`.
    pub sidecar: PathBuf,
    /// The directory OUTPUT is created in (also where staging happens).
    pub parent: PathBuf,
}

impl OutputLayout {
    /// The layout of `output`.
    pub(crate) fn new(output: &Path) -> OutputLayout {
        OutputLayout {
            output: output.to_path_buf(),
            sidecar: sidecar_path(output),
            parent: parent_dir(output),
        }
    }

    /// The payload and the sidecar, in the order they are checked and published.
    pub(crate) fn targets(&self) -> [&PathBuf; 2] {
        [&self.output, &self.sidecar]
    }

    /// The first of OUTPUT and its sidecar that already exists (as anything, even a
    /// dangling symlink).
    pub(crate) fn existing(&self) -> Option<&Path> {
        self.targets()
            .into_iter()
            .find(|path| std::fs::symlink_metadata(path).is_ok())
            .map(PathBuf::as_path)
    }
}

/// `OUTPUT.repromin`, the sidecar directory beside OUTPUT.
pub fn sidecar_path(output: &Path) -> PathBuf {
    let mut name = output
        .file_name()
        .map(std::ffi::OsStr::to_os_string)
        .unwrap_or_default();
    name.push(SIDECAR_SUFFIX);
    output.with_file_name(name)
}

/// The directory OUTPUT will be created in.
pub fn parent_dir(output: &Path) -> PathBuf {
    match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sidecar_and_parent_sit_beside_the_output() {
        let layout = OutputLayout::new(Path::new("work/shop.min"));
        assert_eq!(layout.sidecar, Path::new("work/shop.min.repromin"));
        assert_eq!(layout.parent, Path::new("work"));
        let bare = OutputLayout::new(Path::new("out"));
        assert_eq!(bare.sidecar, Path::new("out.repromin"));
        assert_eq!(bare.parent, Path::new("."));
    }
}
