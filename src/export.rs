//! Publishing a reduction: the payload tree at OUTPUT and its sidecar `OUTPUT.repromin/`.
//!
//! Both are first written into staging directories in OUTPUT's parent (so the final step is
//! a rename within one file system), the payload is scanned back and its fingerprint must
//! equal the reduction's, and then each is moved into place with
//! `renameat2(RENAME_NOREPLACE)`, which fails rather than replace anything that appeared in
//! the meantime. If the sidecar cannot be published, the payload is taken back, so a run
//! publishes both or neither. The sidecar holds `report.json` and `REPROMIN.md`; it is
//! beside the payload, not in it, so it never changes the payload's fingerprint.

use std::fs;
use std::path::{Path, PathBuf};

use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};

use crate::reduce::{ReduceError, Reduction};
use crate::report::{self, Report};
use crate::tree::{TreeError, scan_exact};
use crate::workspace::{remove_any, write_fresh};

/// `OUTPUT.repromin`, the sidecar directory beside OUTPUT.
pub fn sidecar_path(output: &Path) -> PathBuf {
    let mut name = output
        .file_name()
        .map(std::ffi::OsStr::to_os_string)
        .unwrap_or_default();
    name.push(".repromin");
    output.with_file_name(name)
}

/// The directory OUTPUT will be created in.
pub fn parent_dir(output: &Path) -> PathBuf {
    match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn rename_noreplace(from: &Path, to: &Path) -> Result<(), TreeError> {
    renameat2(AT_FDCWD, from, AT_FDCWD, to, RenameFlags::RENAME_NOREPLACE).map_err(|errno| {
        TreeError::Io {
            action: "publish",
            path: to.to_path_buf(),
            source: std::io::Error::from(errno),
        }
    })
}

/// Removes a staging directory when dropped, unless it was published.
struct Staging(Option<PathBuf>);

impl Drop for Staging {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = remove_any(&path);
        }
    }
}

/// Where a publication landed.
#[derive(Clone, Debug)]
pub struct Published {
    /// The payload directory.
    pub output: PathBuf,
    /// The sidecar directory.
    pub sidecar: PathBuf,
    /// The report as written.
    pub report: Report,
}

/// Publishes `reduction` at `output` and `output.repromin/`.
///
/// # Errors
/// OUTPUT or the sidecar exists, the staged copy does not match, or I/O fails. Nothing is
/// left behind on error.
pub fn publish(
    reduction: &Reduction,
    options: &crate::reduce::ReduceOptions,
) -> Result<Published, ReduceError> {
    let output = &options.output;
    let sidecar = sidecar_path(output);
    for path in [output, &sidecar] {
        if fs::symlink_metadata(path).is_ok() {
            return Err(ReduceError::OutputExists(path.clone()));
        }
    }
    let parent = parent_dir(output);
    let stage_root = tempfile::Builder::new()
        .prefix(".repromin-staging-")
        .tempdir_in(&parent)
        .map_err(|source| TreeError::Io {
            action: "create a staging directory in",
            path: parent.clone(),
            source,
        })?;
    let payload = stage_root.path().join("payload");
    write_fresh(&reduction.tree, &payload)?;
    let staged = scan_exact(&payload)?.fingerprint();
    if staged != reduction.fingerprint {
        return Err(ReduceError::Unfaithful {
            expected: reduction.fingerprint.to_string(),
            found: staged.to_string(),
        });
    }
    let meta = stage_root.path().join("meta");
    fs::create_dir(&meta).map_err(|source| TreeError::Io {
        action: "create directory",
        path: meta.clone(),
        source,
    })?;
    let report = report::build(reduction, options);
    let json = report::to_json(&report);
    let markdown = report::to_markdown(&report);
    for (name, text) in [("report.json", json), ("REPROMIN.md", markdown)] {
        let path = meta.join(name);
        fs::write(&path, text).map_err(|source| TreeError::Io {
            action: "write",
            path: path.clone(),
            source,
        })?;
    }
    rename_noreplace(&payload, output)?;
    let published = Staging(Some(output.clone()));
    if let Err(err) = rename_noreplace(&meta, &sidecar) {
        // Take the payload back so that nothing is half-published.
        let mut published = published;
        if rename_noreplace(output, &payload).is_ok() {
            published.0 = None;
        }
        return Err(err.into());
    }
    let mut published = published;
    published.0 = None;
    drop(stage_root);
    Ok(Published {
        output: output.clone(),
        sidecar,
        report,
    })
}
