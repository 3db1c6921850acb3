//! Where a reduction's commands run: on the host, in containers (`--runner docker`), or on
//! a Remote Execution API cluster (`--remote`); the arguments, their translation, and the
//! parsers of durations and sizes they and the others share.

use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::reduce::{InvalidOption, ReduceError};

/// Where the command runs: on the host, or in a container (see docs/containers.md).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Container")]
pub struct ContainerArgs {
    /// Run the command on the host (`host`), or in a container of --image through the
    /// Docker CLI (`docker`), with the tree mounted at /workspace.
    #[arg(long, value_enum, value_name = "RUNNER", default_value_t = RunnerArg::Host)]
    pub runner: RunnerArg,

    /// The image the containers run: a reference that is already in the local image store
    /// (nothing is pulled). It is resolved to its sha256 id once, and every container runs
    /// that id.
    #[arg(long, value_name = "REF")]
    pub image: Option<String>,

    /// The container CLI: `docker` or `podman` (whose CLI is compatible).
    #[arg(long, value_enum, value_name = "CLI", default_value_t = ContainerCliArg::Docker)]
    pub container_cli: ContainerCliArg,

    /// Give the containers a network (they have none by default).
    #[arg(long)]
    pub docker_network: bool,

    /// The most processes a container may run.
    #[arg(long, value_name = "N", default_value_t = crate::container::DEFAULT_PIDS_LIMIT)]
    pub docker_pids_limit: u32,

    /// The size of the containers' /tmp (a tmpfs), e.g. 256m, 1g.
    #[arg(long, value_name = "SIZE", default_value = "256m", value_parser = parse_size)]
    pub docker_tmpfs: u64,

    /// Limit each container to this many CPUs, e.g. 1.5.
    #[arg(long, value_name = "CPUS")]
    pub docker_cpus: Option<f64>,

    /// Limit each container's memory, swap included, e.g. 512m, 2g. A run the limit kills
    /// (exit 137) is a resource failure, never the failure.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub docker_memory: Option<u64>,

    /// End a run whose tree grows over this size while it runs, e.g. 1g (a resource failure,
    /// never the failure).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub docker_workspace_limit: Option<u64>,
}

/// `--runner` values.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum RunnerArg {
    /// On the host.
    Host,
    /// In containers, through the Docker CLI (or podman's).
    Docker,
}

/// `--container-cli` values.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ContainerCliArg {
    /// The docker CLI.
    Docker,
    /// The podman CLI.
    Podman,
}

impl From<ContainerCliArg> for crate::container::ContainerCli {
    fn from(cli: ContainerCliArg) -> Self {
        match cli {
            ContainerCliArg::Docker => crate::container::ContainerCli::Docker,
            ContainerCliArg::Podman => crate::container::ContainerCli::Podman,
        }
    }
}

impl ContainerArgs {
    /// The container runner these arguments ask for: none for the host.
    pub(super) fn to_options(
        &self,
    ) -> Result<Option<crate::container::ContainerOptions>, ReduceError> {
        use crate::container::{ContainerCli, ContainerOptions};
        let host_only = [
            (self.docker_network, "--docker-network"),
            (self.docker_cpus.is_some(), "--docker-cpus"),
            (self.docker_memory.is_some(), "--docker-memory"),
            (
                self.docker_workspace_limit.is_some(),
                "--docker-workspace-limit",
            ),
            (
                self.docker_pids_limit != crate::container::DEFAULT_PIDS_LIMIT,
                "--docker-pids-limit",
            ),
            (
                self.docker_tmpfs != crate::container::DEFAULT_TMPFS_BYTES,
                "--docker-tmpfs",
            ),
            (
                self.container_cli != ContainerCliArg::Docker,
                "--container-cli",
            ),
        ];
        match (self.runner, &self.image) {
            (RunnerArg::Host, None) => {
                if let Some((_, flag)) = host_only.iter().find(|(given, _)| *given) {
                    return Err(InvalidOption::ContainerFlag(flag).into());
                }
                Ok(None)
            }
            (RunnerArg::Host, Some(_)) => Err(InvalidOption::ImageWithoutDocker.into()),
            (RunnerArg::Docker, None) => Err(InvalidOption::DockerWithoutImage.into()),
            (RunnerArg::Docker, Some(image)) => {
                let cli: ContainerCli = self.container_cli.into();
                let options = ContainerOptions {
                    network: self.docker_network,
                    pids_limit: self.docker_pids_limit,
                    tmpfs_bytes: self.docker_tmpfs,
                    cpus: self.docker_cpus,
                    memory_bytes: self.docker_memory,
                    workspace_limit: self.docker_workspace_limit,
                    ..ContainerOptions::new(cli, image.clone())
                };
                options.validate()?;
                Ok(Some(options))
            }
        }
    }
}

/// Where the probes and holdout runs execute when not here: a cluster speaking the Remote
/// Execution API v2 (see docs/remote.md).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Remote execution")]
pub struct RemoteArgs {
    /// Run every command on this Remote Execution API v2 endpoint instead of here
    /// (`grpc://HOST:PORT` or `http://HOST:PORT` for plain HTTP/2, `grpcs://HOST:PORT` or
    /// `https://HOST:PORT` for TLS; BuildGrid, Buildbarn, NativeLink or a hosted service).
    /// Each candidate's tree is uploaded as a Merkle tree (only the blobs the cluster
    /// lacks); deterministic probes may be answered by its action cache, holdout runs and
    /// the baseline's never are.
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,

    /// The instance name to address on the endpoint (empty by default).
    #[arg(long, value_name = "NAME", requires = "remote", default_value = "")]
    pub remote_instance: String,

    /// How many commands to keep running on the cluster at once, in place of --jobs (the
    /// cluster's slots, not this machine's cores).
    #[arg(long, value_name = "N", requires = "remote")]
    pub remote_jobs: Option<usize>,

    /// How long a run may take on the cluster beyond its own timeout (queued with no free
    /// worker, or its worker lost and the action handed out again) before the reduction
    /// stops with an error naming the operation.
    #[arg(long, value_name = "DURATION", requires = "remote", value_parser = parse_duration, default_value = "15m")]
    pub remote_wait: Duration,

    /// With a TLS endpoint, trust the certificate authorities in this PEM file instead of
    /// the system's (a cluster with a certificate of its own).
    #[arg(long, value_name = "FILE")]
    pub remote_ca: Option<std::path::PathBuf>,

    /// Send this header with every call to the cluster, such as a hosted service's API key
    /// (`x-buildbuddy-api-key=KEY`) or `authorization=Bearer TOKEN`. Repeatable. Never
    /// written to a report.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_header)]
    pub remote_header: Vec<(String, String)>,
}

impl RemoteArgs {
    /// The remote options these arguments ask for: none to run here.
    ///
    /// # Errors
    /// A cluster's credentials (`--remote-ca`, `--remote-header`) with no cluster. They
    /// may sit beside a `--config` whose file names the cluster, so clap cannot require
    /// `--remote` beside them.
    pub(super) fn to_options(&self) -> Result<Option<crate::reduce::RemoteOptions>, ReduceError> {
        let Some(url) = self.remote.clone() else {
            if self.remote_ca.is_some() {
                return Err(InvalidOption::RemoteCredentials("--remote-ca").into());
            }
            if !self.remote_header.is_empty() {
                return Err(InvalidOption::RemoteCredentials("--remote-header").into());
            }
            return Ok(None);
        };
        Ok(Some(crate::reduce::RemoteOptions {
            wait: self.remote_wait,
            tls_ca: self.remote_ca.clone(),
            headers: self.remote_header.clone(),
            ..crate::reduce::RemoteOptions::new(&url, &self.remote_instance)
        }))
    }
}

/// Parses `NAME=VALUE` (split at the first `=`); the name must not be empty.
pub(super) fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("`{text}` is not NAME=VALUE")),
    }
}

/// Why a duration on the command line was refused.
#[derive(Debug, thiserror::Error)]
pub(super) enum DurationError {
    /// The number part does not parse.
    #[error("`{0}` is not a duration (try 30s, 500ms, 2m)")]
    NotANumber(String),
    /// The unit is not one of ms, s, m and h.
    #[error("unknown unit `{unit}` in `{text}` (use ms, s, m or h)")]
    UnknownUnit {
        /// The unit given.
        unit: String,
        /// The whole value.
        text: String,
    },
    /// Zero, negative or not finite.
    #[error("`{0}` must be a positive duration")]
    NotPositive(String),
    /// Below a millisecond or above the longest duration accepted.
    #[error("`{0}` is out of range: a duration is between 1ms and 720h")]
    OutOfRange(String),
}

/// The longest duration accepted: 30 days.
const MAX_DURATION_SECS: f64 = 720.0 * 3600.0;

/// Parses `30`, `30s`, `500ms`, `2m`, `1h`, `1.5s`.
pub(super) fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| DurationError::NotANumber(text.to_string()))?;
    let factor = match unit.trim() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" => 0.001,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(DurationError::UnknownUnit {
                unit: other.to_string(),
                text: text.to_string(),
            });
        }
    };
    let secs = value * factor;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(DurationError::NotPositive(text.to_string()));
    }
    // Below a millisecond would round to no time at all; far above a month, deadlines
    // computed from it overflow the clock.
    if !(0.001..=MAX_DURATION_SECS).contains(&secs) {
        return Err(DurationError::OutOfRange(text.to_string()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a size with a unit: `512k`, `256m`, `2g` (powers of 1024; `kb`, `mib` and the
/// like are accepted too). A bare number is refused: its unit would be a guess.
pub(super) fn parse_size(text: &str) -> Result<u64, BadSize> {
    let t = text.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: u64 = number
        .parse()
        .map_err(|_| BadSize::NotASize(text.to_string()))?;
    let shift = match unit {
        "" => return Err(BadSize::NoUnit(text.to_string())),
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(BadSize::Unit(text.to_string())),
    };
    value
        .checked_mul(1u64 << shift)
        .filter(|&bytes| bytes > 0)
        .ok_or_else(|| BadSize::Range(text.to_string()))
}

/// A size option that is not one.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum BadSize {
    /// No number first.
    #[error("`{0}` is not a size: write it as 512m or 2g")]
    NotASize(String),
    /// A bare number.
    #[error("`{0}` needs a unit: {0}m, {0}k or {0}g")]
    NoUnit(String),
    /// Not k, m or g.
    #[error("`{0}` has an unknown unit: use k, m or g")]
    Unit(String),
    /// Zero, or over 64 bits.
    #[error("`{0}` is out of range")]
    Range(String),
}
