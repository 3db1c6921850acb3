//! Writing a side's reports: each replaces whatever is at its path, never through a
//! symlink.

use std::path::Path;

use super::error::WriteReportError;

/// Writes `out/NAME.report`, replacing whatever is there (never through a symlink).
///
/// # Errors
/// `out` cannot be made, or the file cannot be replaced or written.
pub(crate) fn write_report(out: &Path, name: &str, text: &str) -> Result<(), WriteReportError> {
    write_file(&out.join(format!("{name}.report")), text)
}

/// Writes `path`, replacing whatever is there (never through a symlink); its directory is
/// made if missing.
pub(crate) fn write_file(path: &Path, text: &str) -> Result<(), WriteReportError> {
    let failed = |source| WriteReportError {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    crate::workspace::remove_any(path).map_err(|e| failed(std::io::Error::other(e)))?;
    crate::safe_fs::write_new(path, text.as_bytes()).map_err(|e| failed(e.into()))
}
