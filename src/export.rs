//! Publishing a reduction: the payload tree at OUTPUT and its sidecar `OUTPUT.repromin/`,
//! so that a crash at any instant leaves nothing visible or a state the next run completes
//! or removes.
//!
//! [`publish`] prepares everything in a staging directory `.repromin-staging-*` in OUTPUT's
//! parent, so that the final steps are renames within one file system:
//!
//! 1. the staging directory gets an owner file first (pid, start time, boot id, PID
//!    namespace, host; see `crate::owner`), then the payload, which is scanned back and
//!    must have the reduction's fingerprint, then the sidecar's `report.json` and
//!    `REPROMIN.md`;
//! 2. a publication record `publishing` is written beside them, naming OUTPUT and the
//!    payload's fingerprint, and the file system is synced;
//! 3. the payload is renamed to OUTPUT, then the sidecar to `OUTPUT.repromin`, each with
//!    `renameat2(RENAME_NOREPLACE)`, which fails rather than replace anything that appeared
//!    in the meantime (if the sidecar cannot be published, the payload is taken back);
//! 4. the staging directory is removed.
//!
//! A crash before step 3 leaves only the staging directory, with no record or with its
//! payload still inside: nothing was published. A crash between the two renames leaves
//! OUTPUT without its sidecar, and a record that says which tree was published there.
//! [`recover`], run at the start of the next `reduce`, looks at every staging directory in
//! OUTPUT's parent whose owner file is valid and names a process that has ended: it removes
//! those that published nothing or everything, and completes a half-published one by
//! publishing the sidecar the dead run had prepared, once OUTPUT's recomputed fingerprint
//! equals the record's. An OUTPUT that no longer matches is never touched. Directories
//! without a valid owner file, of live processes, or of processes that cannot be told
//! (another PID namespace or machine) are left alone. Every case is reported as a
//! [`Recovered`] whose text says what was found and done.
//!
//! The sidecar is beside the payload, not in it, so it never changes the payload's
//! fingerprint.
//!
//! When SOURCE was a single file, the payload is that file, published as a file at OUTPUT
//! by the same steps; its fingerprint is the one-file tree's (the file under its source
//! name, [`crate::tree::read_file_tree`]), and the record names the file as well.
//!
//! Each step of the protocol is a failpoint (`publish:POINT`, `src/failpoint.rs`), so that
//! the crash tests can kill a test build there.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use crate::output_layout::{parent_dir, sidecar_path};

use crate::output_layout::{
    OutputLayout, PROGRESS_SVG, REPORT_JSON, REPORT_MARKDOWN, STAGED_PAYLOAD, STAGED_SIDECAR,
    STAGING_JOURNAL, STAGING_OWNER, STAGING_PREFIX,
};
use crate::owner::{MAX_OWNER_LEN, Owner, OwnerState};
use crate::reduce::{ReduceError, Reduction};
use crate::report::{self, Report};
use crate::text::hex;
use crate::tree::{Fingerprint, SourceKind, Tree, TreeError, read_file_tree, scan_exact};
use crate::with_causes;
use crate::workspace::{remove_any, set_times, write_entry, write_fresh};

/// The first line of the publication record.
const JOURNAL_MAGIC: &str = "repromin-publishing v1";

/// The longest publication record that is read back.
const MAX_JOURNAL_LEN: u64 = 4096;

/// The longest sidecar file compared during recovery.
const MAX_SIDECAR_FILE: u64 = 256 << 20;

/// `renameat2(from, to, RENAME_NOREPLACE)`. Called through libc, which declares it for
/// glibc and musl alike (nix wraps it for glibc only, and the release binaries are static
/// musl builds).
#[expect(
    unsafe_code,
    reason = "renameat2 through libc: nix wraps it for glibc only, and the release is musl"
)]
fn rename_noreplace(from: &Path, to: &Path) -> Result<(), TreeError> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt as _;
    let failed = |source: std::io::Error| TreeError::Io {
        action: "publish",
        path: to.to_path_buf(),
        source,
    };
    let c = |path: &Path| {
        CString::new(path.as_os_str().as_bytes())
            .map_err(|_| failed(std::io::Error::from(std::io::ErrorKind::InvalidInput)))
    };
    let (from_c, to_c) = (c(from)?, c(to)?);
    // SAFETY: both paths are NUL-terminated strings that live across the call; the call
    // reads them and nothing else.
    let rc = unsafe {
        nix::libc::renameat2(
            nix::libc::AT_FDCWD,
            from_c.as_ptr(),
            nix::libc::AT_FDCWD,
            to_c.as_ptr(),
            nix::libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(failed(std::io::Error::last_os_error()))
    }
}

/// A publication rename's failure: [`ReduceError::OutputExists`] when `to` came into
/// being since OUTPUT was checked (another run published there first), as if it had been
/// there from the start.
fn lost_race(err: TreeError, to: &Path) -> ReduceError {
    match err {
        TreeError::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists => {
            ReduceError::OutputExists(to.to_path_buf())
        }
        err => err.into(),
    }
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> TreeError {
    let path = path.to_path_buf();
    move |source| TreeError::Io {
        action,
        path,
        source,
    }
}

/// Flushes the directory `dir` itself (its entries) to disk.
fn sync_dir(dir: &Path) -> Result<(), TreeError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_error("sync", dir))
}

/// Flushes the whole file system that holds `dir`, so that everything written in the
/// staging directory is on disk before the first rename makes any of it visible.
fn sync_file_system(dir: &Path) -> Result<(), TreeError> {
    let handle = fs::File::open(dir).map_err(io_error("open", dir))?;
    nix::unistd::syncfs(&handle).map_err(|errno| TreeError::Io {
        action: "sync the file system of",
        path: dir.to_path_buf(),
        source: std::io::Error::from(errno),
    })
}

/// The staging directory, removed when dropped (on success and on every error alike).
struct Staging(PathBuf);

impl Staging {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = remove_staging(&self.0);
    }
}

/// Removes a staging directory, its owner file last: a kill part way leaves either a
/// directory whose owner file still says whose it is (which [`recover`] judges as usual)
/// or an empty directory (which [`recover`] removes once it is [`EMPTY_STAGING_AGE`] old).
fn remove_staging(staging: &Path) -> Result<(), TreeError> {
    let entries = match fs::read_dir(staging) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(_) => return remove_any(staging),
    };
    for entry in entries {
        let entry = entry.map_err(io_error("list", staging))?;
        if entry.file_name() != STAGING_OWNER {
            remove_any(&entry.path())?;
        }
    }
    remove_any(&staging.join(STAGING_OWNER))?;
    crate::failpoint::pause("publish:staging-owner-removed");
    remove_any(staging)
}

/// How old an empty staging directory must be before [`recover`] removes it: a run writes
/// its owner file right after creating the directory, so only a run killed between the two,
/// or while removing its staging directory, leaves one empty for longer.
const EMPTY_STAGING_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether `staging` (whose metadata is `meta`) is an empty directory last changed at least
/// [`EMPTY_STAGING_AGE`] ago.
fn abandoned_empty(staging: &Path, meta: &fs::Metadata) -> bool {
    let old = meta
        .modified()
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .is_some_and(|age| age >= EMPTY_STAGING_AGE);
    old && fs::read_dir(staging).is_ok_and(|mut entries| entries.next().is_none())
}

/// The publication record: the payload of this staging directory is being renamed to
/// `output` (a name in the staging directory's parent) and has `fingerprint`; `file` is the
/// source name of the one file a file payload is (`None` for a tree).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Journal {
    output: OsString,
    file: Option<String>,
    fingerprint: Fingerprint,
}

/// The name of the one file the payload is, when SOURCE was a file: the final tree must hold
/// exactly that file.
fn payload_file(reduction: &Reduction) -> Result<Option<String>, ReduceError> {
    if reduction.preflight.source_kind == SourceKind::Directory {
        return Ok(None);
    }
    let mut entries = reduction.tree.entries.iter();
    match (entries.next(), entries.next()) {
        (Some((name, entry)), None) if entry.node.data().is_some() => Ok(Some(name.to_string())),
        _ => Err(ReduceError::Internal(
            "the reduction of a single file does not hold that one file",
        )),
    }
}

/// Writes the payload of `tree` at `path`: the file named `file` itself, or the tree.
fn write_payload(tree: &Tree, file: Option<&str>, path: &Path) -> Result<(), TreeError> {
    match file.and_then(|name| tree.entries.get(name)) {
        Some(entry) => {
            write_entry(path, entry)?;
            set_times(path, &entry.meta)
        }
        None => write_fresh(tree, path),
    }
}

/// Reads a payload back as the tree it stands for: the one-file tree of `file`, or a tree.
fn read_payload(path: &Path, file: Option<&str>) -> Result<Tree, TreeError> {
    match file {
        Some(name) => read_file_tree(path, name),
        None => scan_exact(path),
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2)
        || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

impl Journal {
    fn to_text(&self) -> String {
        let file = self
            .file
            .as_ref()
            .map_or_else(String::new, |f| format!("file {}\n", hex(f.as_bytes())));
        format!(
            "{JOURNAL_MAGIC}\noutput {}\n{file}fingerprint {}\n",
            hex(self.output.as_bytes()),
            self.fingerprint
        )
    }

    /// Exactly what [`Journal::to_text`] writes; the name must be one plain file name.
    fn parse(text: &str) -> Option<Journal> {
        let mut lines = text.strip_suffix('\n')?.split('\n');
        if lines.next()? != JOURNAL_MAGIC {
            return None;
        }
        let plain = |name: &[u8]| {
            !name.is_empty()
                && name != b"."
                && name != b".."
                && !name.contains(&b'/')
                && !name.contains(&0)
        };
        let output = unhex(lines.next()?.strip_prefix("output ")?)?;
        let mut line = lines.next()?;
        let file = match line.strip_prefix("file ") {
            Some(name) => {
                let name = String::from_utf8(unhex(name)?).ok()?;
                if !plain(name.as_bytes()) {
                    return None;
                }
                line = lines.next()?;
                Some(name)
            }
            None => None,
        };
        let fingerprint: [u8; 32] = unhex(line.strip_prefix("fingerprint ")?)?.try_into().ok()?;
        if lines.next().is_some() || !plain(&output) {
            return None;
        }
        Some(Journal {
            output: OsString::from_vec(output),
            file,
            fingerprint: Fingerprint(fingerprint),
        })
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

/// Publishes `reduction` at `output` and `output.repromin/`, by the protocol of this
/// module's documentation.
///
/// # Errors
/// OUTPUT or the sidecar exists, the staged copy does not match, or I/O fails. Nothing is
/// left behind on error; after a crash, [`recover`] cleans up.
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
    let Some(output_name) = output.file_name().map(OsStr::to_os_string) else {
        return Err(crate::reduce::InvalidOption::OutputName(output.clone()).into());
    };
    let stage = Staging(
        tempfile::Builder::new()
            .prefix(STAGING_PREFIX)
            .tempdir_in(&parent)
            .map_err(io_error("create a staging directory in", &parent))?
            .keep(),
    );
    // Without an identity (no /proc), the directory is still cleaned up on every error;
    // only after a crash would it be left for the user, with a message saying so.
    if let Ok(owner) = Owner::current() {
        let path = stage.path().join(STAGING_OWNER);
        fs::write(&path, owner.to_text()).map_err(io_error("write", &path))?;
    }
    let payload = stage.path().join(STAGED_PAYLOAD);
    let file = payload_file(reduction)?;
    write_payload(&reduction.tree, file.as_deref(), &payload)?;
    let staged = read_payload(&payload, file.as_deref())?.fingerprint();
    if staged != reduction.fingerprint {
        return Err(ReduceError::Unfaithful {
            expected: reduction.fingerprint.to_string(),
            found: staged.to_string(),
        });
    }
    let meta = stage.path().join(STAGED_SIDECAR);
    fs::create_dir(&meta).map_err(io_error("create directory", &meta))?;
    let gitignore_contents: Vec<Vec<u8>> = report::gitignore_sources(reduction, options)
        .iter()
        .map(|file| fs::read(file).unwrap_or_default())
        .collect();
    let report = report::build(reduction, options, &gitignore_contents);
    let json = report::to_json(&report).map_err(ReduceError::Report)?;
    let markdown = report::to_markdown(&report);
    let progress = report::progress_svg(reduction);
    for (name, text) in [
        (REPORT_JSON, json),
        (REPORT_MARKDOWN, markdown),
        (PROGRESS_SVG, progress),
    ] {
        let path = meta.join(name);
        fs::write(&path, text).map_err(io_error("write", &path))?;
    }
    crate::failpoint::pause("publish:staged");
    let journal = Journal {
        output: output_name,
        file,
        fingerprint: staged,
    };
    let record = stage.path().join(STAGING_JOURNAL);
    fs::write(&record, journal.to_text()).map_err(io_error("write", &record))?;
    sync_file_system(stage.path())?;
    crate::failpoint::pause("publish:before-payload");
    rename_noreplace(&payload, &output).map_err(|err| lost_race(err, &output))?;
    crate::failpoint::pause("publish:after-payload");
    if let Err(err) = rename_noreplace(&meta, &sidecar) {
        // Take the payload back so that nothing is half-published; failing that, remove it
        // (it is the tree just renamed there).
        if rename_noreplace(&output, &payload).is_err() {
            let _ = remove_any(&output);
        }
        return Err(lost_race(err, &sidecar));
    }
    // Both are published: a failure to flush the parent is no reason to report failure.
    let _ = sync_dir(&parent);
    crate::failpoint::pause("publish:after-sidecar");
    drop(stage);
    Ok(Published {
        output,
        sidecar,
        report,
    })
}

/// For a resumed session: the publication this session made already, when OUTPUT
/// exists. OUTPUT is reused only when its recomputed fingerprint equals the result's; a
/// missing sidecar is rebuilt; an existing one must describe OUTPUT. `None` when there is
/// no OUTPUT yet.
///
/// # Errors
/// An OUTPUT that is another tree, a sidecar that describes another tree, or I/O.
pub fn already_published(
    reduction: &Reduction,
    options: &crate::reduce::ReduceOptions,
) -> Result<Option<Published>, ReduceError> {
    let OutputLayout {
        output, sidecar, ..
    } = OutputLayout::new(&options.output);
    if fs::symlink_metadata(&output).is_err() {
        return Ok(None);
    }
    let file = payload_file(reduction)?;
    let found = read_payload(&output, file.as_deref())?.fingerprint();
    if found != reduction.fingerprint {
        return Err(ReduceError::OutputNotOurs {
            output,
            found: found.to_string(),
            expected: reduction.fingerprint.to_string(),
        });
    }
    let gitignore_contents: Vec<Vec<u8>> = report::gitignore_sources(reduction, options)
        .iter()
        .map(|file| fs::read(file).unwrap_or_default())
        .collect();
    let report = report::build(reduction, options, &gitignore_contents);
    if fs::symlink_metadata(&sidecar).is_err() {
        let parent = sidecar.parent().unwrap_or(Path::new("."));
        let stage = tempfile::Builder::new()
            .prefix(STAGING_PREFIX)
            .tempdir_in(parent)
            .map_err(io_error("create a staging directory in", parent))?;
        let meta = stage.path().join(STAGED_SIDECAR);
        fs::create_dir(&meta).map_err(io_error("create directory", &meta))?;
        for (name, text) in [
            (
                REPORT_JSON,
                report::to_json(&report).map_err(ReduceError::Report)?,
            ),
            (REPORT_MARKDOWN, report::to_markdown(&report)),
            (PROGRESS_SVG, report::progress_svg(reduction)),
        ] {
            let path = meta.join(name);
            fs::write(&path, text).map_err(io_error("write", &path))?;
        }
        rename_noreplace(&meta, &sidecar).map_err(|err| lost_race(err, &sidecar))?;
    } else if !sidecar_files(&sidecar).is_some_and(|files| describes(&files, &found)) {
        return Err(ReduceError::SidecarNotOurs { sidecar, output });
    }
    Ok(Some(Published {
        output,
        sidecar,
        report,
    }))
}

/// What [`recover`] found in one staging directory and what it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recovered {
    /// A dead run's staging directory from before anything was published: removed.
    Discarded {
        /// The staging directory.
        staging: PathBuf,
        /// The run that made it.
        owner: String,
    },
    /// A dead run had published both OUTPUT and its sidecar: its staging directory was
    /// removed.
    Finished {
        /// The staging directory.
        staging: PathBuf,
        /// The run that made it.
        owner: String,
        /// The published OUTPUT.
        output: PathBuf,
    },
    /// A dead run had published OUTPUT but not its sidecar; OUTPUT's fingerprint equals
    /// the one it recorded, so the sidecar it had prepared was published and its staging
    /// directory removed.
    Completed {
        /// The staging directory.
        staging: PathBuf,
        /// The run that made it.
        owner: String,
        /// The OUTPUT now complete.
        output: PathBuf,
        /// Its fingerprint.
        fingerprint: String,
    },
    /// A dead run had published OUTPUT, which still has the recorded fingerprint, but its
    /// prepared sidecar is incomplete: OUTPUT was taken back and removed with the staging
    /// directory.
    TakenBack {
        /// The staging directory.
        staging: PathBuf,
        /// The run that made it.
        owner: String,
        /// The OUTPUT taken back.
        output: PathBuf,
    },
    /// A dead run had published OUTPUT without its sidecar, but OUTPUT is gone or no longer
    /// the tree it published: OUTPUT was left as it is and the staging directory removed.
    Abandoned {
        /// The staging directory.
        staging: PathBuf,
        /// The run that made it.
        owner: String,
        /// The OUTPUT it had published.
        output: PathBuf,
        /// What is there now.
        found: String,
    },
    /// An empty staging directory, left by a run killed while removing it (or right
    /// after creating it): removed.
    Empty {
        /// The staging directory.
        staging: PathBuf,
    },
    /// A staging directory that is left as it is, for the reason given.
    LeftAlone {
        /// The staging directory.
        staging: PathBuf,
        /// Why it is left alone and what the user can do.
        reason: String,
    },
}

impl Recovered {
    /// Whether the user should act (a directory was left alone).
    pub fn is_warning(&self) -> bool {
        matches!(self, Recovered::LeftAlone { .. })
    }
}

impl fmt::Display for Recovered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recovered::Discarded { staging, owner } => write!(
                f,
                "removed `{}`, left by an interrupted run ({owner}) that had published nothing",
                staging.display()
            ),
            Recovered::Finished {
                staging,
                owner,
                output,
            } => write!(
                f,
                "removed `{}`, left by a run ({owner}) that had finished publishing `{}`",
                staging.display(),
                output.display()
            ),
            Recovered::Completed {
                staging,
                owner,
                output,
                fingerprint,
            } => write!(
                f,
                "completed the publication of `{}` by an interrupted run ({owner}): its tree \
                 still has the recorded fingerprint {fingerprint}, so the sidecar `{}` that \
                 run had prepared was published from `{}`, which was removed",
                output.display(),
                sidecar_path(output).display(),
                staging.display()
            ),
            Recovered::TakenBack {
                staging,
                owner,
                output,
            } => write!(
                f,
                "took back `{}`, which an interrupted run ({owner}) had published without its \
                 sidecar: the sidecar it had prepared in `{}` is incomplete, so both were removed",
                output.display(),
                staging.display()
            ),
            Recovered::Abandoned {
                staging,
                owner,
                output,
                found,
            } => write!(
                f,
                "removed `{}`, left by an interrupted run ({owner}) that had published `{}` \
                 but not its sidecar; `{}` {found}, so it was left as it is",
                staging.display(),
                output.display(),
                output.display()
            ),
            Recovered::Empty { staging } => write!(
                f,
                "removed `{}`, an empty staging directory left by an interrupted run",
                staging.display()
            ),
            Recovered::LeftAlone { staging, reason } => {
                write!(f, "left `{}` alone: {reason}", staging.display())
            }
        }
    }
}

/// Cleans up after runs that died while publishing into OUTPUT's parent: every staging
/// directory there is examined as this module's documentation says, and what was found and
/// done is returned, one entry per directory that was not in use by a live run.
///
/// # Errors
/// OUTPUT's parent exists but cannot be listed. A staging directory that cannot be cleaned
/// up is reported as [`Recovered::LeftAlone`], not as an error.
pub fn recover(output: &Path) -> Result<Vec<Recovered>, ReduceError> {
    let parent = parent_dir(output);
    let entries = match fs::read_dir(&parent) {
        Ok(entries) => entries,
        // Validation reports a missing parent.
        Err(err)
            if err.kind() == std::io::ErrorKind::NotFound
                || err.kind() == std::io::ErrorKind::NotADirectory =>
        {
            return Ok(Vec::new());
        }
        Err(err) => return Err(io_error("list", &parent)(err).into()),
    };
    let mut stagings = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_error("list", &parent))?;
        if entry
            .file_name()
            .as_bytes()
            .starts_with(STAGING_PREFIX.as_bytes())
        {
            stagings.push(beside(output, &entry.file_name()));
        }
    }
    stagings.sort();
    let here = Owner::current();
    Ok(stagings
        .into_iter()
        .filter_map(|staging| {
            let here = match &here {
                Ok(here) => here,
                Err(err) => {
                    return Some(Recovered::LeftAlone {
                        staging,
                        reason: format!(
                            "{}, so whether the run that made it is alive cannot be told",
                            with_causes(err)
                        ),
                    });
                }
            };
            examine(&staging, here).unwrap_or_else(|err| {
                Some(Recovered::LeftAlone {
                    staging: staging.clone(),
                    reason: format!(
                        "{}; remove it if no repromin run is publishing there",
                        with_causes(&err)
                    ),
                })
            })
        })
        .collect())
}

/// The entry `name` in the directory that holds `path`, spelled as the user spelled `path`
/// (a bare name when `path` is one).
fn beside(path: &Path, name: &OsStr) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.join(name),
        _ => PathBuf::from(name),
    }
}

/// What to do with one staging directory; `None` when its run is alive.
fn examine(staging: &Path, here: &Owner) -> Result<Option<Recovered>, TreeError> {
    let left_alone = |reason: &str| {
        Ok(Some(Recovered::LeftAlone {
            staging: staging.to_path_buf(),
            reason: reason.to_string(),
        }))
    };
    let meta = fs::symlink_metadata(staging).map_err(io_error("read", staging))?;
    if !meta.is_dir() {
        return left_alone("it is not a directory, so it is not a staging directory of repromin");
    }
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return left_alone("it belongs to another user");
    }
    let owner = crate::safe_fs::read_capped(&staging.join(STAGING_OWNER), MAX_OWNER_LEN)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| Owner::parse(&text));
    let Some(owner) = owner else {
        // A run killed between removing its owner file and its directory (or between
        // creating the directory and writing the file) left it empty: nothing in it can be
        // anyone's, and `remove_dir` refuses if anything has appeared since.
        if abandoned_empty(staging, &meta) {
            fs::remove_dir(staging).map_err(io_error("remove", staging))?;
            return Ok(Some(Recovered::Empty {
                staging: staging.to_path_buf(),
            }));
        }
        return left_alone(
            "it has no valid owner file, so it cannot be known to be an abandoned staging \
             directory of repromin; remove it if no repromin run is publishing there",
        );
    };
    match owner.state(here) {
        OwnerState::Alive => return Ok(None),
        OwnerState::Unknown(why) => {
            return left_alone(&format!(
                "{why}, so whether {owner} is still publishing cannot be told; remove it if \
                 no repromin run is publishing there"
            ));
        }
        OwnerState::Dead => {}
    }
    let owner = owner.to_string();
    let parent = parent_dir(staging);
    let payload = staging.join(STAGED_PAYLOAD);
    let prepared = staging.join(STAGED_SIDECAR);
    let exists = |path: &Path| fs::symlink_metadata(path).is_ok();
    let record = crate::safe_fs::read_capped(&staging.join(STAGING_JOURNAL), MAX_JOURNAL_LEN);
    let journal = match record {
        // The payload is renamed only after the record is written and synced: without
        // one, or with the payload still here, nothing was published.
        Err(crate::safe_fs::SafeFsError::NotFound { .. }) => None,
        _ if exists(&payload) => None,
        Err(err) => {
            return left_alone(&format!(
                "its publication record is unreadable ({}), so what {owner} published \
                 cannot be told; remove it once you have checked its parent directory",
                with_causes(&err)
            ));
        }
        Ok(bytes) => match String::from_utf8(bytes)
            .ok()
            .and_then(|t| Journal::parse(&t))
        {
            Some(journal) => Some(journal),
            None => {
                return left_alone(&format!(
                    "its publication record is not valid, so what {owner} published cannot \
                     be told; remove it once you have checked its parent directory"
                ));
            }
        },
    };
    let Some(journal) = journal else {
        remove_staging(staging)?;
        return Ok(Some(Recovered::Discarded {
            staging: staging.to_path_buf(),
            owner,
        }));
    };
    let output = beside(staging, &journal.output);
    if !exists(&prepared) {
        remove_staging(staging)?;
        return Ok(Some(Recovered::Finished {
            staging: staging.to_path_buf(),
            owner,
            output,
        }));
    }
    // The payload is at OUTPUT, the sidecar is still here.
    let found = match read_payload(&output, journal.file.as_deref()) {
        Ok(tree) if tree.fingerprint() == journal.fingerprint => None,
        Ok(tree) => Some(format!(
            "has changed since (fingerprint {} recorded, {} found)",
            journal.fingerprint,
            tree.fingerprint()
        )),
        Err(_) if !exists(&output) => Some("is gone".to_string()),
        Err(err) => Some(format!(
            "is no longer the tree it published ({})",
            with_causes(&err)
        )),
    };
    if let Some(found) = found {
        remove_staging(staging)?;
        return Ok(Some(Recovered::Abandoned {
            staging: staging.to_path_buf(),
            owner,
            output,
            found,
        }));
    }
    let sidecar = sidecar_path(&output);
    let expected = sidecar_files(&prepared)
        .filter(|files| describes(files, &journal.fingerprint))
        .ok_or(());
    match (expected, exists(&sidecar)) {
        (Ok(expected), true) => {
            if sidecar_files(&sidecar).as_ref() == Some(&expected) {
                remove_staging(staging)?;
                return Ok(Some(Recovered::Finished {
                    staging: staging.to_path_buf(),
                    owner,
                    output,
                }));
            }
            left_alone(&format!(
                "{owner} published `{}` but not its sidecar, and `{}` now exists with other \
                 contents than the report that run prepared; move `{}` away and run again to \
                 complete the publication, or remove this directory to keep things as they are",
                output.display(),
                sidecar.display(),
                sidecar.display()
            ))
        }
        (Ok(_), false) => {
            rename_noreplace(&prepared, &sidecar)?;
            let _ = sync_dir(&parent);
            remove_staging(staging)?;
            Ok(Some(Recovered::Completed {
                staging: staging.to_path_buf(),
                owner,
                output,
                fingerprint: journal.fingerprint.to_string(),
            }))
        }
        (Err(()), _) => {
            // The sidecar is prepared before the record is written, so this is not a state
            // publication leaves; OUTPUT is verifiably the dead run's tree, take it back.
            rename_noreplace(&output, &payload)?;
            remove_staging(staging)?;
            Ok(Some(Recovered::TakenBack {
                staging: staging.to_path_buf(),
                owner,
                output,
            }))
        }
    }
}

/// The two files of a sidecar directory, when it holds exactly them as regular files.
fn sidecar_files(dir: &Path) -> Option<[Vec<u8>; 2]> {
    let mut names: Vec<OsString> = fs::read_dir(dir)
        .ok()?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .ok()?;
    // The picture is not evidence of what the sidecar describes, and may be absent.
    names.retain(|name| name != PROGRESS_SVG);
    names.sort();
    let mut wanted = [OsString::from(REPORT_JSON), OsString::from(REPORT_MARKDOWN)];
    wanted.sort();
    if names != wanted {
        return None;
    }
    let read = |name| crate::safe_fs::read_capped(&dir.join(name), MAX_SIDECAR_FILE).ok();
    Some([read(REPORT_JSON)?, read(REPORT_MARKDOWN)?])
}

/// Whether the sidecar's `report.json` describes a published tree with `fingerprint`.
fn describes(files: &[Vec<u8>; 2], fingerprint: &Fingerprint) -> bool {
    serde_json::from_slice::<serde_json::Value>(&files[0])
        .ok()
        .is_some_and(|report| {
            report["output"]["tree_sha256_v2"].as_str() == Some(&fingerprint.to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An owner that has ended: this process's identity with another start time, as when
    /// its pid has been reused.
    fn dead() -> Owner {
        let me = Owner::current().unwrap();
        Owner {
            start: me.start + 1,
            ..me
        }
    }

    fn make_staging(parent: &Path, name: &str, owner: Option<&str>) -> PathBuf {
        let dir = parent.join(format!("{STAGING_PREFIX}{name}"));
        fs::create_dir(&dir).unwrap();
        if let Some(text) = owner {
            fs::write(dir.join(STAGING_OWNER), text).unwrap();
        }
        dir
    }

    fn write_tree(dir: &Path, files: &[(&str, &str)]) {
        fs::create_dir_all(dir).unwrap();
        for (name, text) in files {
            fs::write(dir.join(name), text).unwrap();
        }
    }

    /// A staging directory of a dead run caught between its two renames: its payload is at
    /// `parent/out`, its record names it, its prepared sidecar is still inside.
    fn half_published(parent: &Path) -> (PathBuf, Fingerprint) {
        let staging = make_staging(parent, "half", Some(&dead().to_text()));
        let out = parent.join("out");
        write_tree(&out, &[("a.txt", "BUG\n")]);
        let fingerprint = scan_exact(&out).unwrap().fingerprint();
        let report = format!("{{\"output\": {{\"tree_sha256_v2\": \"{fingerprint}\"}}}}\n");
        write_tree(
            &staging.join(STAGED_SIDECAR),
            &[(REPORT_JSON, &report), (REPORT_MARKDOWN, "# note\n")],
        );
        let journal = Journal {
            output: "out".into(),
            file: None,
            fingerprint,
        };
        fs::write(staging.join(STAGING_JOURNAL), journal.to_text()).unwrap();
        (staging, fingerprint)
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_publication_record_reads_back_exactly() {
        let journal = Journal {
            output: OsString::from_vec(b"shop.min\xff".to_vec()),
            file: None,
            fingerprint: Fingerprint([7; 32]),
        };
        let text = journal.to_text();
        assert_eq!(
            text,
            format!(
                "repromin-publishing v1\noutput 73686f702e6d696eff\nfingerprint {}\n",
                "07".repeat(32)
            )
        );
        assert_eq!(Journal::parse(&text), Some(journal));
        for bad in [
            text.trim_end().to_string(),
            format!("{text}more\n"),
            text.replace("73686f702e6d696eff", "73686F702e6d696eff"),
            text.replace("73686f702e6d696eff", "2e2e"),
            text.replace("73686f702e6d696eff", "612f62"),
            text.replace("73686f702e6d696eff", ""),
            text.replace(&"07".repeat(32), &"07".repeat(31)),
            text.replace("v1", "v2"),
        ] {
            assert_eq!(Journal::parse(&bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_publication_record_of_a_file_names_the_file() {
        let journal = Journal {
            output: "crash.min.c".into(),
            file: Some("crash.c".to_string()),
            fingerprint: Fingerprint([7; 32]),
        };
        let text = journal.to_text();
        assert_eq!(
            text,
            format!(
                "repromin-publishing v1\noutput 63726173682e6d696e2e63\nfile 63726173682e63\nfingerprint {}\n",
                "07".repeat(32)
            )
        );
        assert_eq!(Journal::parse(&text), Some(journal));
        for bad in [
            text.replace("63726173682e63\n", "612f62\n"),
            text.replace("63726173682e63\n", "\n"),
            text.replace("63726173682e63\n", "ff\n"),
            text.replace("file ", "files "),
        ] {
            assert_eq!(Journal::parse(&bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_half_published_file_gets_its_sidecar_and_a_changed_one_is_left_alone() {
        for edited in [false, true] {
            let parent = tempfile::tempdir().unwrap();
            let p = parent.path();
            let staging = make_staging(p, "half", Some(&dead().to_text()));
            let out = p.join("out.c");
            fs::write(&out, "int nextHi;\n").unwrap();
            let fingerprint = read_file_tree(&out, "crash.c").unwrap().fingerprint();
            let report = format!("{{\"output\": {{\"tree_sha256_v2\": \"{fingerprint}\"}}}}\n");
            write_tree(
                &staging.join(STAGED_SIDECAR),
                &[(REPORT_JSON, &report), (REPORT_MARKDOWN, "# note\n")],
            );
            let journal = Journal {
                output: "out.c".into(),
                file: Some("crash.c".to_string()),
                fingerprint,
            };
            fs::write(staging.join(STAGING_JOURNAL), journal.to_text()).unwrap();
            if edited {
                fs::write(&out, "edited\n").unwrap();
            }
            let found = recover(&out).unwrap();
            if edited {
                assert!(
                    matches!(&found[..], [Recovered::Abandoned { .. }]),
                    "{found:#?}"
                );
                assert_eq!(names(p), ["out.c"]);
                assert_eq!(fs::read_to_string(&out).unwrap(), "edited\n");
            } else {
                assert!(
                    matches!(&found[..], [Recovered::Completed { .. }]),
                    "{found:#?}"
                );
                assert_eq!(names(p), ["out.c", "out.c.repromin"]);
            }
        }
    }

    #[test]
    fn a_staging_directory_of_a_live_process_is_left_alone_silently() {
        let parent = tempfile::tempdir().unwrap();
        let me = Owner::current().unwrap();
        let staging = make_staging(parent.path(), "live", Some(&me.to_text()));
        write_tree(&staging.join(STAGED_PAYLOAD), &[("a.txt", "x")]);
        let found = recover(&parent.path().join("out")).unwrap();
        assert_eq!(found, []);
        assert_eq!(names(&staging), [STAGING_OWNER, STAGED_PAYLOAD]);
    }

    #[test]
    fn a_directory_without_a_valid_owner_file_is_left_alone() {
        let parent = tempfile::tempdir().unwrap();
        let p = parent.path();
        let valid = dead().to_text();
        make_staging(p, "none", None);
        make_staging(p, "garbled", Some("repromin-owner v1\npid 1\n"));
        make_staging(p, "extra", Some(&format!("{valid}x\n")));
        // A symlink in place of the owner file is not read through.
        let linked = make_staging(p, "linked", None);
        fs::write(p.join("elsewhere"), &valid).unwrap();
        std::os::unix::fs::symlink(p.join("elsewhere"), linked.join(STAGING_OWNER)).unwrap();
        for dir in ["none", "garbled", "extra", "linked"] {
            write_tree(
                &p.join(format!("{STAGING_PREFIX}{dir}")).join("user"),
                &[("data", "keep")],
            );
        }
        let found = recover(&p.join("out")).unwrap();
        assert_eq!(found.len(), 4, "{found:#?}");
        for item in &found {
            assert!(item.is_warning(), "{item}");
            assert!(item.to_string().contains("no valid owner file"), "{item}");
        }
        for dir in ["extra", "garbled", "linked", "none"] {
            let data = p.join(format!("{STAGING_PREFIX}{dir}/user/data"));
            assert_eq!(fs::read_to_string(data).unwrap(), "keep");
        }
    }

    #[test]
    fn entries_that_are_not_directories_are_left_alone_and_not_followed() {
        let parent = tempfile::tempdir().unwrap();
        let p = parent.path();
        fs::write(p.join(format!("{STAGING_PREFIX}file")), "mine").unwrap();
        // A dead run's staging directory elsewhere, reached through a symlink.
        let away = tempfile::tempdir().unwrap();
        let target = make_staging(away.path(), "target", Some(&dead().to_text()));
        std::os::unix::fs::symlink(&target, p.join(format!("{STAGING_PREFIX}link"))).unwrap();
        let found = recover(&p.join("out")).unwrap();
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(found.iter().all(Recovered::is_warning), "{found:#?}");
        assert!(target.join(STAGING_OWNER).is_file());
        assert_eq!(
            fs::read_to_string(p.join(format!("{STAGING_PREFIX}file"))).unwrap(),
            "mine"
        );
    }

    #[test]
    fn a_dead_run_that_published_nothing_is_removed() {
        let parent = tempfile::tempdir().unwrap();
        let p = parent.path();
        // No record: killed while staging.
        let early = make_staging(p, "early", Some(&dead().to_text()));
        write_tree(&early.join(STAGED_PAYLOAD).join("ro"), &[("a.txt", "x")]);
        fs::set_permissions(
            early.join(STAGED_PAYLOAD).join("ro"),
            std::os::unix::fs::PermissionsExt::from_mode(0o555),
        )
        .unwrap();
        // A record, but the payload is still here: killed before the first rename.
        let (late, _) = half_published(p);
        fs::rename(p.join("out"), late.join(STAGED_PAYLOAD)).unwrap();
        let found = recover(&p.join("out")).unwrap();
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found
                .iter()
                .all(|f| matches!(f, Recovered::Discarded { .. })),
            "{found:#?}"
        );
        assert_eq!(names(p), Vec::<String>::new());
    }

    #[test]
    fn a_half_published_output_that_still_matches_gets_its_prepared_sidecar() {
        let parent = tempfile::tempdir().unwrap();
        let p = parent.path();
        let (staging, fingerprint) = half_published(p);
        let prepared = fs::read(staging.join(STAGED_SIDECAR).join(REPORT_JSON)).unwrap();
        let found = recover(&p.join("out")).unwrap();
        assert_eq!(
            found,
            [Recovered::Completed {
                staging,
                owner: dead().to_string(),
                output: p.join("out"),
                fingerprint: fingerprint.to_string(),
            }]
        );
        assert_eq!(names(p), ["out", "out.repromin"]);
        assert_eq!(
            fs::read(p.join("out.repromin").join(REPORT_JSON)).unwrap(),
            prepared
        );
        assert_eq!(
            scan_exact(&p.join("out")).unwrap().fingerprint(),
            fingerprint
        );
    }

    #[test]
    fn a_half_published_output_that_changed_is_never_touched() {
        let parent = tempfile::tempdir().unwrap();
        let p = parent.path();
        half_published(p);
        fs::write(p.join("out/a.txt"), "edited by the user\n").unwrap();
        let found = recover(&p.join("out")).unwrap();
        assert!(
            matches!(&found[..], [Recovered::Abandoned { found, .. }] if found.starts_with("has changed since")),
            "{found:#?}"
        );
        assert_eq!(names(p), ["out"]);
        assert_eq!(
            fs::read_to_string(p.join("out/a.txt")).unwrap(),
            "edited by the user\n"
        );
    }

    #[test]
    fn an_existing_sidecar_must_equal_the_prepared_one() {
        let parent = tempfile::tempdir().unwrap();
        let p = parent.path();
        let (staging, _) = half_published(p);
        write_tree(
            &p.join("out.repromin"),
            &[(REPORT_JSON, "{}"), (REPORT_MARKDOWN, "# note\n")],
        );
        let found = recover(&p.join("out")).unwrap();
        assert!(
            matches!(&found[..], [Recovered::LeftAlone { reason, .. }] if reason.contains("other contents")),
            "{found:#?}"
        );
        assert_eq!(
            names(p),
            [staging_name(&staging), "out".into(), "out.repromin".into()]
        );
        // The same contents: the publication was complete after all.
        fs::copy(
            staging.join(STAGED_SIDECAR).join(REPORT_JSON),
            p.join("out.repromin").join(REPORT_JSON),
        )
        .unwrap();
        let found = recover(&p.join("out")).unwrap();
        assert!(
            matches!(&found[..], [Recovered::Finished { .. }]),
            "{found:#?}"
        );
        assert_eq!(names(p), ["out", "out.repromin"]);
    }

    fn staging_name(path: &Path) -> String {
        path.file_name().unwrap().to_string_lossy().to_string()
    }

    #[test]
    fn a_half_published_output_whose_sidecar_is_incomplete_is_taken_back() {
        let parent = tempfile::tempdir().unwrap();
        let p = parent.path();
        let (staging, _) = half_published(p);
        fs::remove_file(staging.join(STAGED_SIDECAR).join(REPORT_MARKDOWN)).unwrap();
        let found = recover(&p.join("out")).unwrap();
        assert!(
            matches!(&found[..], [Recovered::TakenBack { .. }]),
            "{found:#?}"
        );
        assert_eq!(names(p), Vec::<String>::new());
    }
}
