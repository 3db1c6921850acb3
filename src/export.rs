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

pub use crate::output_layout::{parent_dir, sidecar_path};

use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};

use crate::output_layout::{
    OutputLayout, REPORT_JSON, REPORT_MARKDOWN, STAGED_PAYLOAD, STAGED_SIDECAR, STAGING_PREFIX,
};
use crate::reduce::{ReduceError, Reduction};
use crate::report::{self, Report};
use crate::tree::{TreeError, scan_exact};
use crate::workspace::{remove_any, write_fresh};

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
    let layout = OutputLayout::new(&options.output);
    if let Some(existing) = layout.existing() {
        return Err(ReduceError::OutputExists(existing.to_path_buf()));
    }
    let OutputLayout {
        output,
        sidecar,
        parent,
    } = layout;
    let output = &output;
    let stage_root = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(&parent)
        .map_err(|source| TreeError::Io {
            action: "create a staging directory in",
            path: parent.clone(),
            source,
        })?;
    let payload = stage_root.path().join(STAGED_PAYLOAD);
    write_fresh(&reduction.tree, &payload)?;
    let staged = scan_exact(&payload)?.fingerprint();
    if staged != reduction.fingerprint {
        return Err(ReduceError::Unfaithful {
            expected: reduction.fingerprint.to_string(),
            found: staged.to_string(),
        });
    }
    let meta = stage_root.path().join(STAGED_SIDECAR);
    fs::create_dir(&meta).map_err(|source| TreeError::Io {
        action: "create directory",
        path: meta.clone(),
        source,
    })?;
    let gitignore_contents: Vec<Vec<u8>> = report::gitignore_sources(reduction, options)
        .iter()
        .map(|file| fs::read(file).unwrap_or_default())
        .collect();
    let report = report::build(reduction, options, &gitignore_contents);
    let json = report::to_json(&report);
    let markdown = report::to_markdown(&report);
    for (name, text) in [(REPORT_JSON, json), (REPORT_MARKDOWN, markdown)] {
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
