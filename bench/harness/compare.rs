//! `compare`: two or more repromin binaries on the same real-tree cases, each making the
//! same fixed number of probes (`--max-attempts`), in turns, several times over: the wall
//! time of each binary, its spread, and its difference from the first binary's.
//!
//! A reduction of a real tree takes minutes on 2 shared cores; a fixed number of probes
//! keeps each run short while every run still copies the tree in, runs the baseline and
//! probes through the passes as a whole reduction does. The binaries take turns within
//! each repetition, the first one moving round, so that a slow spell of the machine falls
//! on every binary alike.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use crate::Res;
use crate::cases::{Case, load_cases};
use crate::reduce_once::reduce_once;

#[derive(Args, Clone)]
pub(crate) struct CompareOpts {
    /// The binaries, as NAME=PATH; the first is the one the others are compared with.
    #[arg(long = "binary", value_name = "NAME=PATH", required = true)]
    binaries: Vec<String>,
    /// Only the cases whose directory name contains one of these (comma-separated).
    #[arg(long, value_delimiter = ',')]
    cases: Vec<String>,
    /// Candidates each run tries (`--max-attempts`).
    #[arg(long, default_value_t = 30)]
    max_attempts: u64,
    /// repromin's `--jobs`.
    #[arg(long, default_value_t = 2)]
    jobs: u32,
    /// Runs of each binary on each case.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Wall-time limit per run, in seconds.
    #[arg(long, default_value_t = 900)]
    timeout_s: u64,
}

/// One binary's runs on one case.
struct Series {
    name: String,
    walls: Vec<f64>,
    attempts: Vec<u64>,
}

/// Mean and sample standard deviation.
fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = if values.len() > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// Runs `binary` on `case` once, in a fresh copy: the wall time and the candidates tried.
fn run_once(binary: &Path, case: &Case, opts: &CompareOpts) -> Res<(f64, u64)> {
    let options = [
        "--jobs".to_string(),
        opts.jobs.to_string(),
        "--max-attempts".to_string(),
        opts.max_attempts.to_string(),
    ];
    let reduced = reduce_once(binary, case, &options, Duration::from_secs(opts.timeout_s))?;
    let attempts = reduced.report["attempts"].as_u64().unwrap_or(0);
    Ok((reduced.wall, attempts))
}

/// Runs every binary on every case `--reps` times and returns the Markdown table.
pub(crate) fn compare(cases_dir: &Path, opts: &CompareOpts) -> Res<String> {
    let binaries: Vec<(String, PathBuf)> = opts
        .binaries
        .iter()
        .map(|b| match b.split_once('=') {
            Some((name, path)) => Ok((name.to_string(), PathBuf::from(path))),
            None => Err(format!("--binary {b}: expected NAME=PATH")),
        })
        .collect::<Result<_, _>>()?;
    if opts.reps == 0 {
        return Err("--reps must be positive".into());
    }
    let cases = load_cases(cases_dir, &opts.cases)?;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "Each run: `repromin reduce input out --exit-code 0 --no-progress --jobs {} \
         --max-attempts {} -- /bin/sh oracle.sh` in a fresh copy; {} runs of each binary, \
         in turns.\n",
        opts.jobs, opts.max_attempts, opts.reps
    );
    let _ = writeln!(
        md,
        "| case | binary | candidates | wall s, mean | sd | min | max | against {} |",
        binaries[0].0
    );
    let _ = writeln!(
        md,
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for case in &cases {
        let mut series: Vec<Series> = binaries
            .iter()
            .map(|(name, _)| Series {
                name: name.clone(),
                walls: Vec::new(),
                attempts: Vec::new(),
            })
            .collect();
        for rep in 0..opts.reps {
            for turn in 0..binaries.len() {
                let i = (rep + turn) % binaries.len();
                let (name, path) = &binaries[i];
                eprint!("compare {} {name}, run {} ... ", case.name, rep + 1);
                let (wall, attempts) = run_once(path, case, opts)?;
                eprintln!("{wall:.2} s, {attempts} candidates");
                series[i].walls.push(wall);
                series[i].attempts.push(attempts);
            }
        }
        let (base_mean, base_sd) = mean_sd(&series[0].walls);
        let n = opts.reps as f64;
        for s in &series {
            let (mean, sd) = mean_sd(&s.walls);
            let min = s.walls.iter().copied().fold(f64::INFINITY, f64::min);
            let max = s.walls.iter().copied().fold(0.0, f64::max);
            let attempts: Vec<String> = s.attempts.iter().map(u64::to_string).collect();
            let against = if s.name == series[0].name {
                "-".to_string()
            } else {
                // The difference of the means, with twice its standard error.
                let diff = (mean - base_mean) / base_mean * 100.0;
                let se = (sd * sd / n + base_sd * base_sd / n).sqrt() / base_mean * 100.0;
                format!("{diff:+.1}% ± {:.1}%", 2.0 * se)
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {mean:.2} | {sd:.2} | {min:.2} | {max:.2} | {against} |",
                case.name,
                s.name,
                attempts.join(", ")
            );
        }
    }
    let _ = writeln!(
        md,
        "\n*against*: the difference of the mean wall times, ± twice its standard error."
    );
    Ok(md)
}
