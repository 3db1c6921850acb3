//! Runs in containers through the Docker CLI (or podman's compatible one), with no SDK.
//!
//! [`Container::prepare`] checks that the engine answers, resolves the image reference to
//! its `sha256:` id (the image must be local: nothing is ever pulled) and removes the
//! containers that a repromin process which is gone left behind. [`ContainerRuns`] is a
//! `Confinement`: it turns each run into one `docker run` of that id, hardened (no new
//! privileges, every capability dropped, no network unless asked, a PID limit, a bounded
//! `/tmp` tmpfs, optional CPU and memory limits with swap capped with memory), with the
//! run's tree bind-mounted at `/workspace` (the reducer) or at its own path (the gate).
//!
//! Each container's name is fixed from the run's own directory before `docker run`, and
//! labelled with the owning process, so cleanup never depends on a cidfile: when a run did
//! not end on its own (a timeout, an interrupt, a signal, the output cap, the workspace
//! monitor) the client is ended by the runner and the container removed with
//! `docker rm -f`, retried for a bounded settling period. Containers of a repromin killed
//! with SIGKILL are removed by the next one's [`Container::prepare`].
//!
//! A workspace that grows over its limit (a host-side monitor of the bind mount's logical
//! size) and exit status 137 under a memory limit end the run as resource failures
//! ([`Termination::WorkspaceLimit`], [`Termination::MemoryLimit`]), never as oracle passes.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::owner::{Owner, OwnerState};
use crate::runner::{self, CommandSpec, Confinement, RunOutcome, Termination};

/// The label every container repromin starts carries; its value names the owner process.
pub const OWNER_LABEL: &str = "io.repromin.owner";

/// Where the reducer's tree is mounted in its containers, and their working directory.
pub const WORKSPACE: &str = "/workspace";

/// The default PID limit of a container.
pub const DEFAULT_PIDS_LIMIT: u32 = 512;

/// The default size of a container's `/tmp` tmpfs, in bytes (256 MiB).
pub const DEFAULT_TMPFS_BYTES: u64 = 256 * 1024 * 1024;

/// How long an engine query (`info`, `image inspect`, `ps`, `rm`) may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(120);

/// How long removing a container is retried while the engine settles.
const REMOVE_SETTLING: Duration = Duration::from_secs(30);

/// How often the workspace monitor measures the bind mount.
const MONITOR_PERIOD: Duration = Duration::from_millis(200);

/// The container command line programs repromin can drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContainerCli {
    /// `docker`.
    Docker,
    /// `podman`, whose CLI is compatible for everything used here.
    Podman,
}

impl ContainerCli {
    /// The program's name.
    pub fn program(self) -> &'static str {
        match self {
            ContainerCli::Docker => "docker",
            ContainerCli::Podman => "podman",
        }
    }
}

impl fmt::Display for ContainerCli {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.program())
    }
}

/// What a user asks of the container runner.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ContainerOptions {
    /// The container CLI.
    pub cli: ContainerCli,
    /// The image reference as given (a name, a name:tag, or an id).
    pub image: String,
    /// Give the containers a network (none by default).
    pub network: bool,
    /// The most processes a container may have.
    pub pids_limit: u32,
    /// The size of `/tmp` (a tmpfs), in bytes.
    pub tmpfs_bytes: u64,
    /// A CPU limit, in CPUs.
    pub cpus: Option<f64>,
    /// A memory limit in bytes; swap is capped with it.
    pub memory_bytes: Option<u64>,
    /// The most bytes the mounted tree may hold while a command runs.
    pub workspace_limit: Option<u64>,
}

impl ContainerOptions {
    /// The defaults for `image` run by `cli`.
    pub fn new(cli: ContainerCli, image: impl Into<String>) -> ContainerOptions {
        ContainerOptions {
            cli,
            image: image.into(),
            network: false,
            pids_limit: DEFAULT_PIDS_LIMIT,
            tmpfs_bytes: DEFAULT_TMPFS_BYTES,
            cpus: None,
            memory_bytes: None,
            workspace_limit: None,
        }
    }

    /// Refuses values no engine would take.
    ///
    /// # Errors
    /// The value and why.
    pub fn validate(&self) -> Result<(), ContainerError> {
        let bad = |what: String| Err(ContainerError::Options(what));
        if self.image.trim().is_empty() || self.image.starts_with('-') {
            return bad(format!("image `{}` is not an image reference", self.image));
        }
        if self
            .image
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
        {
            return bad(format!(
                "image {:?} contains whitespace or a control character",
                self.image
            ));
        }
        if self.pids_limit < 8 {
            return bad(format!(
                "a PID limit of {} is too small (at least 8)",
                self.pids_limit
            ));
        }
        if self.tmpfs_bytes < 1024 * 1024 {
            return bad("a /tmp under 1 MiB is too small".into());
        }
        if let Some(cpus) = self.cpus
            && !(0.01..=1024.0).contains(&cpus)
        {
            return bad(format!(
                "a CPU limit of {cpus} is not between 0.01 and 1024"
            ));
        }
        if let Some(memory) = self.memory_bytes
            && memory < 6 * 1024 * 1024
        {
            return bad("a memory limit under 6 MiB is too small for any engine".into());
        }
        if self.workspace_limit == Some(0) {
            return bad("a workspace limit of 0 bytes leaves no room for the tree".into());
        }
        Ok(())
    }
}

/// Why the container runner cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    /// A bad option value.
    #[error("container options: {0}")]
    Options(String),
    /// The CLI is not installed.
    #[error("the container CLI `{cli}` cannot be started (is it installed and on PATH?)")]
    NoCli {
        /// The CLI.
        cli: ContainerCli,
        /// Why.
        #[source]
        source: runner::RunnerError,
    },
    /// The engine does not answer.
    #[error("the {cli} engine does not answer (`{cli} info` {how}): {output}")]
    NoEngine {
        /// The CLI.
        cli: ContainerCli,
        /// How `info` ended.
        how: String,
        /// Its output's last lines, escaped.
        output: String,
    },
    /// The image is not on this machine.
    #[error(
        "image `{image}` is not in the local {cli} image store (nothing is pulled: `{cli} pull {image}` or build it first): {output}"
    )]
    NoImage {
        /// The CLI.
        cli: ContainerCli,
        /// The reference.
        image: String,
        /// The engine's answer, escaped.
        output: String,
    },
    /// The engine answered something that is not an image id.
    #[error("`{cli} image inspect {image}` gave no image id: {output}")]
    BadImageId {
        /// The CLI.
        cli: ContainerCli,
        /// The reference.
        image: String,
        /// The answer, escaped.
        output: String,
    },
    /// This process's identity (for the containers' owner label) cannot be read.
    #[error("cannot label containers with their owner: {0}")]
    Owner(String),
}

/// A container runner that is ready: the engine answered and the image is resolved.
#[derive(Clone, Debug)]
pub struct Container {
    options: ContainerOptions,
    image_id: String,
    owner: String,
}

/// What a report records of the container runner.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainerRecord {
    /// The CLI that ran the containers.
    pub cli: ContainerCli,
    /// The image reference as given.
    pub image: String,
    /// Its `sha256:` id, by which every container ran.
    pub image_id: String,
    /// Whether the containers had a network.
    pub network: bool,
    /// The PID limit.
    pub pids_limit: u32,
    /// The size of `/tmp`, in bytes.
    pub tmpfs_bytes: u64,
    /// The CPU limit.
    pub cpus: Option<f64>,
    /// The memory (and memory plus swap) limit, in bytes.
    pub memory_bytes: Option<u64>,
    /// The workspace limit, in bytes.
    pub workspace_limit: Option<u64>,
}

/// Runs one engine command and returns how it ended and its output.
fn query(cli: ContainerCli, args: &[&str]) -> Result<RunOutcome, ContainerError> {
    let mut argv = vec![cli.program().to_string()];
    argv.extend(args.iter().map(|a| (*a).to_string()));
    let spec = CommandSpec {
        argv,
        env: Vec::new(),
        memory: None,
    };
    let never = AtomicBool::new(false);
    runner::run(
        &spec,
        Path::new("/"),
        &std::env::temp_dir(),
        QUERY_TIMEOUT,
        &never,
    )
    .map_err(|source| ContainerError::NoCli { cli, source })
}

/// The last lines of an engine's output, escaped for a message.
fn quote(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    let mut quoted: String = tail.escape_debug().collect();
    if quoted.len() > 600 {
        let mut cut = 600;
        while !quoted.is_char_boundary(cut) {
            cut -= 1;
        }
        quoted.truncate(cut);
        quoted.push('…');
    }
    if quoted.is_empty() {
        "(no output)".into()
    } else {
        quoted
    }
}

/// A `sha256:` image id from an `image inspect --format {{.Id}}` answer (docker prints it
/// with the prefix, podman without).
fn image_id(output: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(output).ok()?.trim();
    let hex = text.strip_prefix("sha256:").unwrap_or(text);
    (hex.len() == 64
        && hex
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
    .then(|| format!("sha256:{hex}"))
}

/// The owner label's value: the owner file's lines joined by `;`.
fn owner_label(owner: &Owner) -> String {
    owner.to_text().trim_end_matches('\n').replace('\n', ";")
}

/// An owner label read back.
fn parse_owner_label(value: &str) -> Option<Owner> {
    Owner::parse(&format!("{}\n", value.replace(';', "\n")))
}

impl Container {
    /// Checks that the engine answers and that the image is local, resolves it to its id,
    /// and removes containers that dead repromin processes left.
    ///
    /// # Errors
    /// Bad options, no CLI, no engine, no such local image.
    pub fn prepare(options: &ContainerOptions) -> Result<Container, ContainerError> {
        options.validate()?;
        let cli = options.cli;
        // A field of the engine's own answer: the CLI alone cannot give it.
        let field = match cli {
            ContainerCli::Docker => "{{.ServerVersion}}",
            ContainerCli::Podman => "{{.Version.Version}}",
        };
        let info = query(cli, &["info", "--format", field])?;
        if info.termination != Termination::Exited(0) {
            return Err(ContainerError::NoEngine {
                cli,
                how: info.termination.describe(),
                output: quote(&info.output),
            });
        }
        let image_id = Self::resolve(options)?;
        let owner = Owner::current().map_err(|e| ContainerError::Owner(e.to_string()))?;
        let container = Container {
            options: options.clone(),
            image_id,
            owner: owner_label(&owner),
        };
        container.sweep(&owner);
        Ok(container)
    }

    /// The image's `sha256:` id, from the local store only.
    ///
    /// # Errors
    /// No such local image, or an answer that is not an id.
    pub fn resolve(options: &ContainerOptions) -> Result<String, ContainerError> {
        let cli = options.cli;
        let inspect = query(
            cli,
            &[
                "image",
                "inspect",
                "--format",
                "{{.Id}}",
                "--",
                &options.image,
            ],
        )?;
        if inspect.termination != Termination::Exited(0) {
            return Err(ContainerError::NoImage {
                cli,
                image: options.image.clone(),
                output: quote(&inspect.output),
            });
        }
        image_id(&inspect.output).ok_or_else(|| ContainerError::BadImageId {
            cli,
            image: options.image.clone(),
            output: quote(&inspect.output),
        })
    }

    /// A runner from a record that a prepared one wrote (see [`Container::record`]), with no
    /// engine call: the image is not resolved again, its recorded id runs.
    ///
    /// # Errors
    /// Text that is not such a record, or values no engine would take.
    pub fn from_json(text: &str) -> Result<Container, ContainerError> {
        let record: ContainerRecord = serde_json::from_str(text)
            .map_err(|e| ContainerError::Options(format!("not a container record: {e}")))?;
        if image_id(record.image_id.as_bytes()).as_deref() != Some(record.image_id.as_str()) {
            return Err(ContainerError::Options(format!(
                "`{}` is not a sha256 image id",
                record.image_id
            )));
        }
        let options = ContainerOptions {
            cli: record.cli,
            image: record.image,
            network: record.network,
            pids_limit: record.pids_limit,
            tmpfs_bytes: record.tmpfs_bytes,
            cpus: record.cpus,
            memory_bytes: record.memory_bytes,
            workspace_limit: record.workspace_limit,
        };
        options.validate()?;
        let owner = Owner::current().map_err(|e| ContainerError::Owner(e.to_string()))?;
        Ok(Container {
            options,
            image_id: record.image_id,
            owner: owner_label(&owner),
        })
    }

    /// The options.
    pub fn options(&self) -> &ContainerOptions {
        &self.options
    }

    /// The resolved image id.
    pub fn image_id(&self) -> &str {
        &self.image_id
    }

    /// What a report records.
    pub fn record(&self) -> ContainerRecord {
        let o = &self.options;
        ContainerRecord {
            cli: o.cli,
            image: o.image.clone(),
            image_id: self.image_id.clone(),
            network: o.network,
            pids_limit: o.pids_limit,
            tmpfs_bytes: o.tmpfs_bytes,
            cpus: o.cpus,
            memory_bytes: o.memory_bytes,
            workspace_limit: o.workspace_limit,
        }
    }

    /// Removes every labelled container whose owner is a repromin process that is gone.
    /// Containers of live processes, or of owners that cannot be checked from here (another
    /// host or PID namespace), are left alone.
    fn sweep(&self, here: &Owner) {
        // docker's `ps` template has a `Label` function; podman's has the labels as a map.
        let label = match self.options.cli {
            ContainerCli::Docker => format!("{{{{.Label \"{OWNER_LABEL}\"}}}}"),
            ContainerCli::Podman => format!("{{{{index .Labels \"{OWNER_LABEL}\"}}}}"),
        };
        let Ok(listed) = query(
            self.options.cli,
            &[
                "ps",
                "-a",
                "--filter",
                &format!("label={OWNER_LABEL}"),
                "--format",
                &format!("{{{{.Names}}}}\t{label}"),
            ],
        ) else {
            return;
        };
        if listed.termination != Termination::Exited(0) {
            return;
        }
        let text = String::from_utf8_lossy(&listed.output);
        for line in text.lines() {
            let Some((name, label)) = line.split_once('\t') else {
                continue;
            };
            let dead = parse_owner_label(label.trim())
                .is_some_and(|owner| owner.state(here) == OwnerState::Dead);
            if dead && name.starts_with("repromin-") {
                self.remove(name);
            }
        }
    }

    /// The command that removes the container `name` at once: podman's `rm -f` would
    /// otherwise give it ten seconds after SIGTERM, which a shell as PID 1 ignores.
    fn remove_args(cli: ContainerCli, name: &str) -> Vec<&str> {
        match cli {
            ContainerCli::Docker => vec!["rm", "-f", "--", name],
            ContainerCli::Podman => vec!["rm", "-f", "--time", "0", "--", name],
        }
    }

    /// Removes the container `name`, retrying while the engine settles, until it is gone or
    /// the settling period is over.
    fn remove(&self, name: &str) {
        let cli = self.options.cli;
        let until = Instant::now() + REMOVE_SETTLING;
        loop {
            let _ = query(cli, &Self::remove_args(cli, name));
            let gone = query(
                cli,
                &[
                    "ps",
                    "-a",
                    "--filter",
                    &format!("name=^{name}$"),
                    "--format",
                    "{{.Names}}",
                ],
            )
            .is_ok_and(|ps| {
                ps.termination == Termination::Exited(0)
                    && !String::from_utf8_lossy(&ps.output)
                        .lines()
                        .any(|l| l.trim() == name)
            });
            if gone || Instant::now() >= until {
                return;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// Where a run's tree appears inside its container.
#[derive(Clone, Debug)]
pub enum Mount {
    /// At [`WORKSPACE`], the same path for every candidate (the reducer).
    Workspace,
    /// At its own host path, with these other directories at theirs too (the gate, whose
    /// commands name the run's report files by their host paths).
    SamePaths(Vec<PathBuf>),
}

/// Every run in a container of one prepared [`Container`].
#[derive(Debug)]
pub struct ContainerRuns {
    container: Container,
    mount: Mount,
    user: Option<(u32, u32)>,
}

impl ContainerRuns {
    /// Runs in `container`, with the tree mounted as `mount` says, as this process's user.
    pub fn new(container: Container, mount: Mount) -> ContainerRuns {
        let user = Some((
            nix::unistd::getuid().as_raw(),
            nix::unistd::getgid().as_raw(),
        ));
        ContainerRuns {
            container,
            mount,
            user,
        }
    }

    /// The same runs as the user `uid`:`gid` (the gate's sandbox user).
    #[must_use]
    pub fn as_user(self, uid: u32, gid: u32) -> ContainerRuns {
        ContainerRuns {
            user: Some((uid, gid)),
            ..self
        }
    }

    /// The prepared container.
    pub fn container(&self) -> &Container {
        &self.container
    }

    /// The container name of the run whose temporary directory is `tmpdir`: fixed from that
    /// directory and the owner, so it is known before the container starts.
    pub fn name(&self, tmpdir: &Path) -> String {
        let mut hash = Sha256::new();
        hash.update(self.container.owner.as_bytes());
        hash.update([0]);
        hash.update(tmpdir.as_os_str().as_encoded_bytes());
        let digest = hash.finalize();
        let hex = crate::text::hex(&digest[..10]);
        format!("repromin-{}-{hex}", std::process::id())
    }

    fn volume(host: &Path, inside: &Path) -> String {
        format!("{}:{}:rw", host.display(), inside.display())
    }
}

/// The logical size of the files under `dir`, stopping as soon as it is over `limit`.
fn size_over(dir: &Path, limit: u64) -> bool {
    let mut total: u64 = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(items) = std::fs::read_dir(&dir) else {
            continue;
        };
        for item in items.flatten() {
            let Ok(meta) = item.metadata() else { continue };
            if meta.is_dir() {
                stack.push(item.path());
            } else {
                total = total.saturating_add(meta.len());
                if total > limit {
                    return true;
                }
            }
        }
    }
    false
}

impl Confinement for ContainerRuns {
    fn hand_over(&self, _cwd: &Path, _tmpdir: &Path) {}

    fn wrap(&self, spec: &CommandSpec, cwd: &Path, tmpdir: &Path) -> CommandSpec {
        let o = &self.container.options;
        let mut argv: Vec<String> = vec![
            o.cli.program().into(),
            "run".into(),
            "--rm".into(),
            "--pull".into(),
            "never".into(),
            "--name".into(),
            self.name(tmpdir),
            "--label".into(),
            format!("{OWNER_LABEL}={}", self.container.owner),
            "--security-opt".into(),
            "no-new-privileges".into(),
            "--cap-drop".into(),
            "all".into(),
            "--pids-limit".into(),
            o.pids_limit.to_string(),
            "--tmpfs".into(),
            format!("/tmp:rw,nosuid,nodev,size={},mode=1777", o.tmpfs_bytes),
        ];
        if !o.network {
            argv.extend(["--network".into(), "none".into()]);
        }
        if let Some(cpus) = o.cpus {
            argv.extend(["--cpus".into(), format!("{cpus}")]);
        }
        if let Some(memory) = o.memory_bytes {
            argv.extend([
                "--memory".into(),
                memory.to_string(),
                "--memory-swap".into(),
                memory.to_string(),
            ]);
        }
        if let Some((uid, gid)) = self.user {
            argv.extend(["--user".into(), format!("{uid}:{gid}")]);
        }
        let workdir = match &self.mount {
            Mount::Workspace => {
                argv.extend(["--volume".into(), Self::volume(cwd, Path::new(WORKSPACE))]);
                PathBuf::from(WORKSPACE)
            }
            Mount::SamePaths(others) => {
                argv.extend(["--volume".into(), Self::volume(cwd, cwd)]);
                for dir in others {
                    if dir != cwd {
                        argv.extend(["--volume".into(), Self::volume(dir, dir)]);
                    }
                }
                cwd.to_path_buf()
            }
        };
        argv.extend(["--workdir".into(), workdir.display().to_string()]);
        // HOME and the explicit variables only; the values reach the client through its
        // environment, never its command line.
        argv.extend(["--env".into(), "HOME=/tmp".into()]);
        for (name, _) in &spec.env {
            argv.extend(["--env".into(), name.clone()]);
        }
        argv.push(self.container.image_id.clone());
        argv.extend(spec.argv.iter().cloned());
        CommandSpec {
            argv,
            env: spec.env.clone(),
            memory: None,
        }
    }

    fn take_back(&self, _cwd: &Path, _tmpdir: &Path) {}

    fn watches(&self) -> bool {
        self.container.options.workspace_limit.is_some()
    }

    fn watch(&self, cwd: &Path, tmpdir: &Path, done: &AtomicBool) -> Option<Termination> {
        let limit = self.container.options.workspace_limit?;
        while !done.load(Ordering::SeqCst) {
            if size_over(cwd, limit) {
                // The container may not have started yet: keep ending it until the run is over.
                let name = self.name(tmpdir);
                while !done.load(Ordering::SeqCst) {
                    let cli = self.container.options.cli;
                    let _ = query(cli, &Container::remove_args(cli, &name));
                    std::thread::sleep(MONITOR_PERIOD);
                }
                return Some(Termination::WorkspaceLimit);
            }
            std::thread::sleep(MONITOR_PERIOD);
        }
        None
    }

    fn settle(&self, _cwd: &Path, tmpdir: &Path, mut outcome: RunOutcome) -> RunOutcome {
        match outcome.termination {
            Termination::Exited(137) if self.container.options.memory_bytes.is_some() => {
                outcome.termination = Termination::MemoryLimit;
            }
            Termination::Exited(_) => {}
            _ => self.container.remove(&self.name(tmpdir)),
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_ids_are_read_with_or_without_their_prefix() {
        let hex = "3bc5c4d08dbc10d0ae2dca64c8b16320c70bffacbe737c11a66f122fa95aeda4";
        assert_eq!(image_id(hex.as_bytes()), Some(format!("sha256:{hex}")));
        assert_eq!(
            image_id(format!("sha256:{hex}\n").as_bytes()),
            Some(format!("sha256:{hex}"))
        );
        assert_eq!(image_id(b"sha256:abc"), None);
        assert_eq!(image_id(hex.to_uppercase().as_bytes()), None);
        assert_eq!(image_id(format!("{hex}\n{hex}").as_bytes()), None);
    }

    #[test]
    fn owner_labels_read_back_to_the_same_owner() {
        let owner = Owner::current().unwrap();
        let label = owner_label(&owner);
        assert!(!label.contains('\n'));
        let back = parse_owner_label(&label).unwrap();
        assert_eq!(back.to_text(), owner.to_text());
        assert!(parse_owner_label("pid 1").is_none());
    }

    #[test]
    fn options_no_engine_would_take_are_refused() {
        let ok = ContainerOptions::new(ContainerCli::Podman, "localhost/x:1");
        assert!(ok.validate().is_ok());
        for bad in [
            ContainerOptions::new(ContainerCli::Docker, ""),
            ContainerOptions::new(ContainerCli::Docker, "--privileged"),
            ContainerOptions::new(ContainerCli::Docker, "a b"),
            ContainerOptions {
                pids_limit: 1,
                ..ok.clone()
            },
            ContainerOptions {
                cpus: Some(f64::NAN),
                ..ok.clone()
            },
            ContainerOptions {
                memory_bytes: Some(1024),
                ..ok.clone()
            },
            ContainerOptions {
                workspace_limit: Some(0),
                ..ok.clone()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_size_monitor_counts_files_below_every_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/f"), vec![0u8; 3000]).unwrap();
        std::fs::write(dir.path().join("g"), vec![0u8; 3000]).unwrap();
        assert!(size_over(dir.path(), 5999));
        assert!(!size_over(dir.path(), 6000));
    }
}
