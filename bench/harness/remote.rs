//! `remote`: one real-tree reduction on a Remote Execution API cluster with 1, 2, 4, ...
//! workers, beside the same reduction run here, to show how it scales with the cluster's
//! slots and what the round trip costs a run.
//!
//! The cluster is a private BuildGrid (the tests' own, `src/test_buildgrid.rs`: it needs
//! `REPROMIN_TEST_BGD` and `REPROMIN_TEST_POSTGRES`, see .ci/run), started afresh for every
//! row so that no row is answered by an earlier one's action cache; its workers are
//! `repromin worker` processes on this machine. Every run passes `--no-trace`: the tracer
//! follows only runs on this machine, and without it the local and the remote runs propose
//! the same candidates.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use clap::Args;

use crate::Res;
use crate::cases::{Case, load_cases};
use crate::reduce_once::reduce_once;
use crate::test_buildgrid::BuildGrid;

#[derive(Args, Clone)]
pub(crate) struct RemoteOpts {
    /// Only the cases whose directory name contains one of these (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "cachetools")]
    cases: Vec<String>,
    /// The worker counts, comma-separated; each is also the run's `--remote-jobs`.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    workers: Vec<usize>,
    /// Wall-time limit per run, in seconds.
    #[arg(long, default_value_t = 900)]
    timeout_s: u64,
    /// Every run stops after this many candidates (`--max-attempts`), so that all rows do
    /// the same work: the same candidates in the same order. 0 runs each reduction to its
    /// end.
    #[arg(long, default_value_t = 300)]
    max_attempts: u64,
}

/// `repromin worker` processes, ended when dropped.
struct Workers(Vec<Child>);

impl Workers {
    fn start(binary: &Path, url: &str, count: usize) -> Res<Workers> {
        let mut children = Vec::new();
        for _ in 0..count {
            children.push(
                Command::new(binary)
                    .args(["worker", "--remote", url])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()?,
            );
        }
        Ok(Workers(children))
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What one reduction did.
struct Row {
    how: String,
    wall: f64,
    attempts: u64,
    executed: Option<u64>,
    bytes: u64,
}

/// Runs `binary` on `case` once in a fresh copy with `place` (the options that say where
/// the commands run), without the tracer and stopped after `max_attempts` candidates.
fn run_once(
    binary: &Path,
    case: &Case,
    place: &[String],
    max_attempts: u64,
    timeout: Duration,
) -> Res<Row> {
    let mut options = vec!["--no-trace".to_string()];
    if max_attempts > 0 {
        options.extend(["--max-attempts".into(), max_attempts.to_string()]);
    }
    options.extend(place.iter().cloned());
    let reduced = reduce_once(binary, case, &options, timeout)?;
    let report = &reduced.report;
    Ok(Row {
        how: String::new(),
        wall: reduced.wall,
        attempts: report["attempts"].as_u64().unwrap_or(0),
        executed: report["execution"]["remote"]["executed"].as_u64(),
        bytes: report["output"]["bytes"].as_u64().unwrap_or(0),
    })
}

/// Runs every case here at `-j1` and `-j2`, then on a fresh cluster with each worker
/// count, and returns the Markdown table.
pub(crate) fn remote(cases_dir: &Path, binary: &Path, opts: &RemoteOpts) -> Res<String> {
    if opts.workers.is_empty() || opts.workers.contains(&0) {
        return Err("--workers takes positive counts".into());
    }
    let timeout = Duration::from_secs(opts.timeout_s);
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| case | where | wall s | speed-up over 1 worker | candidates | runs executed | \
         s per run | final bytes |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for case in load_cases(cases_dir, &opts.cases)? {
        let mut rows = Vec::new();
        for jobs in [1, 2] {
            eprintln!("{}: here, --jobs {jobs} ...", case.name);
            let place = vec!["--jobs".to_string(), jobs.to_string()];
            let mut row = run_once(binary, &case, &place, opts.max_attempts, timeout)?;
            row.how = format!("here, `--jobs {jobs}`");
            rows.push(row);
        }
        let mut one_worker = None;
        for &count in &opts.workers {
            eprintln!("{}: {count} remote workers ...", case.name);
            let grid = BuildGrid::start().ok_or(
                "no BuildGrid: set REPROMIN_TEST_BGD and REPROMIN_TEST_POSTGRES (see .ci/run)",
            )?;
            let _workers = Workers::start(binary, &grid.url, count)?;
            let place = vec![
                "--remote".to_string(),
                grid.url.clone(),
                "--remote-jobs".to_string(),
                count.to_string(),
            ];
            let mut row = run_once(binary, &case, &place, opts.max_attempts, timeout)?;
            row.how = format!("{count} remote worker{}", if count == 1 { "" } else { "s" });
            one_worker.get_or_insert(row.wall);
            rows.push(row);
        }
        for row in &rows {
            let speed_up = match (row.executed, one_worker) {
                (Some(_), Some(one)) => format!("{:.2}x", one / row.wall),
                _ => "-".to_string(),
            };
            let runs = row.executed.unwrap_or(row.attempts);
            let _ = writeln!(
                md,
                "| {} | {} | {:.1} | {speed_up} | {} | {} | {:.3} | {} |",
                case.name,
                row.how,
                row.wall,
                row.attempts,
                row.executed
                    .map_or_else(|| "-".to_string(), |n| n.to_string()),
                row.wall / runs.max(1) as f64,
                row.bytes,
            );
        }
    }
    Ok(md)
}
