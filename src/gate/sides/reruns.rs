//! A side's reruns of its candidates (see [`crate::gate::flaky`]): round after round, the
//! tests still agreeing with the side run again, by id where the runner allows, until each
//! has had the reruns planned for their number, has disagreed once, or the caps are
//! reached.
//!
//! A round starts only while `flaky.max_rerun_seconds` have not passed since the first one
//! and the side's deadline leaves a whole time limit for it, so no rerun is cut short by a
//! cap: a run that times out on its own limit fails its tests, as a first run does. A test
//! that a run by id did not report is run again by its file in the same round.
//!
//! A file whose two base runs both timed out (a hang) is rerun under
//! `flaky.hang_rerun_seconds` (60) rather than the whole `timeouts.test`, so the reruns of a fix of a hang fit the side's
//! deadline. Each rerun records its limit and its duration, and the judge counts a pass on
//! head only when it took no longer than the shortest limit a base rerun failed under, so
//! both sides' reruns measure the same event ("passes within the limit").

use std::time::{Duration, Instant};

use crate::gate::config::RepoConfig;
use crate::gate::encode::Rerun;
use crate::gate::flaky::{self, TestId};
use crate::gate::line::SideStatus;

use super::common::{RunPlace, rerun};
use super::error::SideError;

/// Reruns `candidates` on the side of `place` until each stops agreeing with `want`
/// (`failed` on base, `passed` on head) or has had the reruns planned for `plan_for`
/// candidates; the reruns in the order they ran. `name` names the runs' scratch
/// directories.
///
/// # Errors
/// A rerun could not be started, its report cannot be read, or the side was interrupted.
pub(super) fn rerun_candidates(
    name: &str,
    want: SideStatus,
    candidates: Vec<TestId>,
    plan_for: usize,
    config: &RepoConfig,
    place: &RunPlace<'_>,
) -> Result<Vec<Rerun>, SideError> {
    let planned = flaky::planned(plan_for, &config.flaky);
    let cap = Duration::from_secs(config.flaky.max_rerun_seconds);
    let started = Instant::now();
    let mut open = candidates;
    let mut reruns = Vec::new();
    for round in 1..=planned {
        // A hang is rerun under a shorter limit.
        let timeout = if open.iter().any(TestId::is_whole_file) {
            place
                .timeout
                .min(Duration::from_secs(config.flaky.hang_rerun_seconds))
        } else {
            place.timeout
        };
        let place = &RunPlace { timeout, ..*place };
        let room = place.deadline.left() >= place.timeout;
        if open.is_empty() || started.elapsed() >= cap || !room {
            break;
        }
        let mut this_round = Vec::new();
        // A file known only as a whole is rerun as a file, and so is the rest of its round.
        let mut by_id = !open.iter().any(TestId::is_whole_file);
        let mut ask = open.clone();
        for attempt in ["", "-files"] {
            if ask.is_empty() {
                break;
            }
            let files = files_of(&ask);
            let ids: Vec<(&str, &str)> = ask
                .iter()
                .map(|id| (id.file.as_str(), id.name.as_str()))
                .collect();
            let run_name = format!("{name}-{round}{attempt}");
            let began = Instant::now();
            let (exit_code, report, selected_by_id) =
                rerun(&run_name, config, &files, &ids, by_id, place)?;
            let duration_ms = millis(began.elapsed());
            let run = Rerun {
                exit_code,
                report: flaky::keep_only(&report, &ask),
                limit_ms: Some(millis(place.timeout)),
                duration_ms: Some(duration_ms),
            };
            // Tests a run by id left out are run by their files.
            let index = flaky::RerunIndex::new(&run);
            let missing: Vec<TestId> = ask
                .iter()
                .filter(|id| index.status(id) == SideStatus::Absent)
                .cloned()
                .collect();
            this_round.push(run);
            if !selected_by_id {
                break;
            }
            (ask, by_id) = (missing, false);
        }
        // A test stays open while every run of this round that reported it agreed.
        let indexes: Vec<flaky::RerunIndex<'_>> =
            this_round.iter().map(flaky::RerunIndex::new).collect();
        open.retain(|id| {
            let statuses = indexes
                .iter()
                .map(|index| index.status(id))
                .filter(|status| *status != SideStatus::Absent);
            let mut any = false;
            for status in statuses {
                if status != want {
                    return false;
                }
                any = true;
            }
            any
        });
        drop(indexes);
        reruns.extend(this_round);
    }
    Ok(reruns)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The files of `ids`, each once, in order.
fn files_of(ids: &[TestId]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ids.iter()
        .filter(|id| seen.insert(id.file.as_str()))
        .map(|id| id.file.clone())
        .collect()
}
