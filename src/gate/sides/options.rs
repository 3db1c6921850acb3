//! What a side is and what `exec` needs to run one: plain values shared by the sides.

use std::path::PathBuf;
use std::time::Duration;

use crate::gate::config::RepoConfig;
use crate::gate::mutants as spec;

/// The default deadline of a side.
pub(crate) const DEFAULT_BUDGET: Duration = Duration::from_secs(18 * 60);
/// The default deadline of the mutants side.
pub(crate) const MUTANTS_BUDGET: Duration = Duration::from_secs(13 * 60);
/// Which side to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// The merge base with the head's tests laid over it, tested twice.
    Base,
    /// The head, tested once.
    Head,
    /// The merge base with the head's tests laid over it, mutated by the pull request's
    /// specs one mutation at a time.
    Mutants,
    /// The merge base with the head's tests laid over it, reduced for the first selected
    /// test that failed on base.
    Reduce,
}

impl Side {
    /// The report names this side writes.
    pub(crate) fn reports(self) -> &'static [&'static str] {
        match self {
            Side::Base => &["base", "base-rerun"],
            Side::Head => &["head"],
            Side::Mutants => &[spec::SIDE],
            Side::Reduce => &["reduce"],
        }
    }

    /// The commit the side checks out.
    pub(crate) fn commit<'a>(self, base: &'a str, head: &'a str) -> &'a str {
        match self {
            Side::Base | Side::Mutants | Side::Reduce => base,
            Side::Head => head,
        }
    }

    /// The side's default deadline.
    pub(crate) fn default_budget(self) -> Duration {
        match self {
            Side::Base | Side::Head | Side::Reduce => DEFAULT_BUDGET,
            Side::Mutants => MUTANTS_BUDGET,
        }
    }
}

/// What `exec` needs.
#[derive(Clone, Debug)]
pub(crate) struct ExecOptions {
    /// The repository.
    pub repo: PathBuf,
    /// The merge base (full SHA).
    pub base: String,
    /// The head (full SHA).
    pub head: String,
    /// Where the reports go.
    pub out: PathBuf,
    /// Which side.
    pub side: Side,
    /// Run head test code on base as this user, in namespaces.
    pub sandbox_user: Option<String>,
    /// The side's deadline.
    pub budget: Duration,
    /// A trusted local configuration (never from the pull request).
    pub local_config: Option<(RepoConfig, String)>,
    /// The container CLI that runs the commands when the configuration names a
    /// `container` image.
    pub container_cli: crate::container::ContainerCli,
    /// The base side's candidates, when they are known before the head side runs (`run`):
    /// the head side then reruns only those of them that pass at head.
    pub base_candidates: Option<crate::gate::flaky::BaseCandidates>,
    /// Also run the suite and report it, for the regressions (`--regressions`; the
    /// configuration's `regressions` asks for it too).
    pub regressions: bool,
}
