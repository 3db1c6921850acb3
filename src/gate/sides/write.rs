//! Writing a side's reports: each replaces whatever is at its path, whole (a rename),
//! never through a symlink.

use std::path::Path;

use super::error::WriteReportError;
use crate::gate::encode::EncodeError;

/// Writes `out/NAME.report`, replacing whatever is there (never through a symlink).
///
/// # Errors
/// The report could not be encoded, `out` cannot be made, or the file cannot be replaced
/// or written.
pub(crate) fn write_report(
    out: &Path,
    name: &str,
    text: Result<String, EncodeError>,
) -> Result<(), WriteReportError> {
    let path = out.join(format!("{name}.report"));
    match text {
        Ok(text) => write_file(&path, &text),
        Err(err) => Err(WriteReportError {
            path,
            source: err.into(),
        }),
    }
}

/// Writes `path`, replacing whatever is there (never through a symlink); its directory is
/// made if missing. The text goes to a new file beside it that is then renamed over it, so
/// a reader finds the whole report or none, whenever the writer dies.
pub(crate) fn write_file(path: &Path, text: &str) -> Result<(), WriteReportError> {
    let failed = |source: std::io::Error| WriteReportError {
        path: path.to_path_buf(),
        source: source.into(),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let other = |e| failed(std::io::Error::other(e));
    crate::workspace::remove_any(&tmp).map_err(other)?;
    crate::safe_fs::write_new(&tmp, text.as_bytes()).map_err(|e| failed(e.into()))?;
    // A directory cannot be renamed over; anything else (a symlink among them) is replaced
    // as a name, never followed.
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        crate::workspace::remove_any(path).map_err(other)?;
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        failed(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_replaces_files_links_and_directories_whole_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "keep").unwrap();
        write_report(&out, "base", Ok("one".into())).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("base.report")).unwrap(),
            "one"
        );
        write_report(&out, "base", Ok("two".into())).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("base.report")).unwrap(),
            "two"
        );
        // A symlink at the path is replaced, never followed.
        std::os::unix::fs::symlink(&outside, out.join("head.report")).unwrap();
        write_report(&out, "head", Ok("three".into())).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        let meta = std::fs::symlink_metadata(out.join("head.report")).unwrap();
        assert!(meta.is_file());
        // A directory at the path is replaced too.
        std::fs::create_dir_all(out.join("mutants.report/x")).unwrap();
        write_report(&out, "mutants", Ok("four".into())).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("mutants.report")).unwrap(),
            "four"
        );
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["base.report", "head.report", "mutants.report"]);
    }
}
