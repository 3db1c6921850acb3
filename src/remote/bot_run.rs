//! One action on the worker: its `Command` and input root read from the storage and laid
//! out in a fresh scratch directory (names checked: no absolute or `..` paths, no symlink
//! that leads out of the root), the command run with the local runner, its output stored.
//!
//! The runner captures stdout and stderr together, in arrival order, so the worker reports
//! them as one stdout and an empty stderr: a client that joins the two sees what a local
//! run shows. Output over [`OUTPUT_CAP`] is reported as the captured bytes and one byte
//! more, so that the client sees that it was over.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use bazel_remote_apis::google::protobuf as pb;

use super::cas::{Cas, key};
use super::error::RemoteError;
use crate::runner::{CommandSpec, OUTPUT_CAP, RunOutcome};

/// An action ready to run: where, what, for how long; the scratch directory goes with it.
pub(super) struct Prepared {
    /// Held until the action is done: dropping it removes the directory.
    _scratch: crate::scratch::Scratch,
    pub(super) cwd: PathBuf,
    pub(super) tmp: PathBuf,
    pub(super) spec: CommandSpec,
    pub(super) timeout: Duration,
}

/// A time as the protobuf message.
pub(super) fn timestamp(time: SystemTime) -> pb::Timestamp {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    pb::Timestamp {
        seconds: i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(since.subsec_nanos()).unwrap_or(0),
    }
}

fn decode<M: prost::Message + Default>(what: &'static str, data: &[u8]) -> Result<M, RemoteError> {
    M::decode(data).map_err(|source| RemoteError::Decode { what, source })
}

/// The action of a lease's payload: an `Action`, or the `Digest` of one.
pub(super) async fn action(
    cas: &Cas<'_>,
    payload: &prost_types::Any,
) -> Result<re::Action, RemoteError> {
    if payload.type_url.ends_with(".Action") {
        return decode("Action", &payload.value);
    }
    if payload.type_url.ends_with(".Digest") {
        let digest: re::Digest = decode("action digest", &payload.value)?;
        let data = cas.read_one(&digest, usize::MAX).await?;
        return decode("Action", &data);
    }
    Err(RemoteError::Protocol(format!(
        "a lease whose payload is a `{}`",
        payload.type_url
    )))
}

/// One name of a `Directory`: a single path component.
fn check_name(name: &str) -> Result<(), RemoteError> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(RemoteError::UnsafeInput(format!("the name `{name}`")));
    }
    Ok(())
}

/// A relative path of components that stays inside the root, or an error naming it.
fn inside(path: &str) -> Result<PathBuf, RemoteError> {
    let mut parts: Vec<&str> = Vec::new();
    if path.starts_with('/') {
        return Err(RemoteError::UnsafeInput(format!(
            "the absolute path `{path}`"
        )));
    }
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(RemoteError::UnsafeInput(format!(
                        "the path `{path}`, which leads out of the root"
                    )));
                }
            }
            other => parts.push(other),
        }
    }
    Ok(parts.iter().collect())
}

/// What an input root holds, read from the storage.
#[derive(Default)]
struct Layout {
    dirs: Vec<PathBuf>,
    files: Vec<(PathBuf, re::Digest, bool)>,
    symlinks: Vec<(PathBuf, String)>,
}

/// Reads every `Directory` of the input root, checking each name.
async fn layout(cas: &Cas<'_>, root: &re::Digest) -> Result<Layout, RemoteError> {
    let mut layout = Layout::default();
    let mut level: Vec<(PathBuf, re::Digest)> = vec![(PathBuf::new(), root.clone())];
    while !level.is_empty() {
        let digests: Vec<re::Digest> = level.iter().map(|(_, d)| d.clone()).collect();
        let blobs = cas.read(&digests).await?;
        let mut next = Vec::new();
        for (path, digest) in level {
            let data = blobs.get(&key(&digest)).ok_or_else(|| {
                RemoteError::Protocol(format!("no answer for the directory {}", digest.hash))
            })?;
            let dir: re::Directory = decode("Directory", data)?;
            let mut names = HashSet::new();
            let mut fresh = |name: &str| -> Result<PathBuf, RemoteError> {
                check_name(name)?;
                if !names.insert(name.to_string()) {
                    return Err(RemoteError::UnsafeInput(format!("the name `{name}` twice")));
                }
                Ok(path.join(name))
            };
            for file in &dir.files {
                let digest = file.digest.clone().unwrap_or_default();
                layout
                    .files
                    .push((fresh(&file.name)?, digest, file.is_executable));
            }
            for link in &dir.symlinks {
                let at = fresh(&link.name)?;
                let parent = at.parent().map(Path::to_path_buf).unwrap_or_default();
                let joined = if parent.as_os_str().is_empty() {
                    link.target.clone()
                } else {
                    format!("{}/{}", parent.to_string_lossy(), link.target)
                };
                if link.target.is_empty() || link.target.starts_with('/') {
                    return Err(RemoteError::UnsafeInput(format!(
                        "the symlink `{}` to `{}`",
                        at.display(),
                        link.target
                    )));
                }
                inside(&joined)?;
                layout.symlinks.push((at, link.target.clone()));
            }
            for sub in &dir.directories {
                let at = fresh(&sub.name)?;
                layout.dirs.push(at.clone());
                next.push((at, sub.digest.clone().unwrap_or_default()));
            }
        }
        level = next;
    }
    Ok(layout)
}

fn io(source: std::io::Error) -> RemoteError {
    RemoteError::Inputs(source)
}

/// Reads the action's command and input root and lays them out in a fresh scratch
/// directory.
pub(super) async fn prepare(
    cas: &Cas<'_>,
    action: &re::Action,
    default_timeout: Duration,
) -> Result<Prepared, RemoteError> {
    let command_digest = action.command_digest.clone().unwrap_or_default();
    let command: re::Command =
        decode("Command", &cas.read_one(&command_digest, usize::MAX).await?)?;
    let root = action.input_root_digest.clone().unwrap_or_default();
    let layout = layout(cas, &root).await?;
    let scratch = crate::scratch::Scratch::new("worker").map_err(io)?;
    let tree = scratch.path().join("root");
    let tmp = scratch.path().join("tmp");
    std::fs::create_dir(&tree).map_err(io)?;
    std::fs::create_dir(&tmp).map_err(io)?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
    for dir in &layout.dirs {
        std::fs::create_dir(tree.join(dir)).map_err(io)?;
    }
    let digests: Vec<re::Digest> = layout.files.iter().map(|(_, d, _)| d.clone()).collect();
    let blobs: HashMap<_, Vec<u8>> = cas.read(&digests).await?;
    for (path, digest, executable) in &layout.files {
        let data = blobs.get(&key(digest)).ok_or_else(|| {
            RemoteError::Protocol(format!("no answer for the file blob {}", digest.hash))
        })?;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(if *executable { 0o755 } else { 0o644 })
            .open(tree.join(path))
            .map_err(io)?;
        file.write_all(data).map_err(io)?;
    }
    for (path, target) in &layout.symlinks {
        std::os::unix::fs::symlink(target, tree.join(path)).map_err(io)?;
    }
    let cwd = tree.join(inside(&command.working_directory)?);
    let timeout = action
        .timeout
        .as_ref()
        .map(|t| {
            Duration::from_secs(u64::try_from(t.seconds).unwrap_or(0))
                + Duration::from_nanos(u64::try_from(t.nanos).unwrap_or(0))
        })
        .filter(|t| !t.is_zero())
        .unwrap_or(default_timeout);
    let spec = CommandSpec {
        argv: command.arguments.clone(),
        env: command
            .environment_variables
            .iter()
            .map(|v| (v.name.clone(), v.value.clone()))
            .collect(),
        memory: None,
    };
    Ok(Prepared {
        _scratch: scratch,
        cwd,
        tmp,
        spec,
        timeout,
    })
}

/// Runs a prepared action; `cancel` ends it early.
pub(super) fn execute(
    prepared: &Prepared,
    cancel: &AtomicBool,
) -> Result<RunOutcome, crate::runner::RunnerError> {
    crate::runner::run(
        &prepared.spec,
        &prepared.cwd,
        &prepared.tmp,
        prepared.timeout,
        cancel,
    )
}

/// The output to report for `outcome`: what was captured, one byte more when it was cut.
pub(super) fn reported_output(outcome: &RunOutcome) -> Vec<u8> {
    let mut output = outcome.output.clone();
    if outcome.termination == crate::runner::Termination::OutputOverflow
        && output.len() >= OUTPUT_CAP
    {
        output.push(b'\n');
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_the_root_are_refused() {
        assert!(inside("a/../b").is_ok());
        assert_eq!(inside("").ok(), Some(PathBuf::new()));
        assert!(inside("../x").is_err());
        assert!(inside("a/../../x").is_err());
        assert!(inside("/etc").is_err());
        assert!(check_name("..").is_err());
        assert!(check_name("a/b").is_err());
        assert!(check_name("").is_err());
        assert!(check_name("ok").is_ok());
    }
}
