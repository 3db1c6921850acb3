//! `all`: everything, written as one document, with the table of design targets.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::time::Instant;

use crate::bytes::{bytes_bench, write_bytes};
use crate::overhead::{OverheadRow, overhead, write_overhead};
use crate::peers::{CaseReport, PeerReport, Row, opt, peers, thousands, yes_no};
use crate::tools::Tool;
use crate::{OverheadOpts, PeerOpts, Res, emit};

const BEGIN: &str = "<!-- results:begin (written by `cargo bench --bench harness -- all`) -->";
const END: &str = "<!-- results:end -->";

pub(crate) fn all(cases_dir: &Path, opts: &PeerOpts, ov: &OverheadOpts, out: &Path) -> Res<()> {
    let started = Instant::now();
    let report = peers(cases_dir, opts)?;
    let overhead_rows = overhead(ov, &opts.repromin)?;
    let bytes_rows = bytes_bench()?;

    let mut md = String::new();
    let _ = writeln!(md, "{BEGIN}\n");
    let _ = writeln!(md, "## Results\n");
    let _ = writeln!(md, "{}\n", machine_line());
    let _ = writeln!(md, "## Targets\n");
    write_targets(&mut md, &report, &overhead_rows);
    let _ = writeln!(md, "## Peers, case by case\n");
    report.write_markdown(&mut md, opts);
    let _ = writeln!(md, "## Per-probe overhead\n");
    write_overhead(&mut md, &overhead_rows, ov);
    let _ = writeln!(md, "## The bytes engine in process\n");
    write_bytes(&mut md, &bytes_rows);
    let _ = writeln!(
        md,
        "(The whole run took {:.0} s.)\n",
        started.elapsed().as_secs_f64()
    );
    let _ = write!(md, "{END}");

    let doc = match fs::read_to_string(out) {
        Ok(old) => match (old.find(BEGIN), old.find(END)) {
            (Some(b), Some(e)) if b < e => {
                format!("{}{md}{}", &old[..b], &old[e + END.len()..])
            }
            _ => format!("{old}\n{md}\n"),
        },
        Err(_) => format!("# Benchmarks\n\n{md}\n"),
    };
    emit(Some(out), &doc)
}

pub(crate) fn machine_line() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let load = fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into());
    format!("Machine: {cpus} CPUs ({model}); load average {load} when the run ended.")
}

pub(crate) fn write_targets(md: &mut String, report: &PeerReport, overhead_rows: &[OverheadRow]) {
    let _ = writeln!(md, "| target | measured | met |");
    let _ = writeln!(md, "| --- | --- | --- |");
    let mark = |ok: bool| if ok { "**met**" } else { "not met" };
    let hi = report.jobs.iter().copied().max().unwrap_or(1);
    for cr in &report.cases {
        let t = &cr.case.json.targets;
        let Some(row) = cr.repromin(hi) else {
            continue;
        };
        let name = &cr.case.name;
        if let Some(max) = t.max_bytes {
            let b = row.bytes.unwrap_or(u64::MAX);
            let ok = b <= max && row.valid == Some(true);
            let _ = writeln!(
                md,
                "| {name}: at most {max} bytes | {} bytes (-j{hi}) | {} |",
                row.bytes.map_or("-".into(), thousands),
                mark(ok)
            );
        }
        if let Some(max) = t.max_calls {
            let _ = writeln!(
                md,
                "| {name}: at most {max} oracle calls | {} calls (-j{hi}) | {} |",
                row.calls,
                mark(row.calls <= max)
            );
        }
        if let Some(max) = t.max_files {
            let f = row.files.unwrap_or(u64::MAX);
            let _ = writeln!(
                md,
                "| {name}: at most {max} files | {} files, {} bytes (-j{hi}) | {} |",
                opt(row.files),
                row.bytes.map_or("-".into(), thousands),
                mark(f <= max && row.valid == Some(true))
            );
        }
        if t.faster_than_peers {
            let mine = best_time(cr, Tool::Repromin);
            let mut slower_than = Vec::new();
            let mut peers_seen = 0;
            for tool in PEERS {
                if let Some(theirs) = best_time(cr, tool) {
                    peers_seen += 1;
                    if mine.is_none_or(|m| m >= theirs) {
                        slower_than.push(format!("{} {theirs:.1} s", tool.name()));
                    }
                }
            }
            let measured = match (mine, slower_than.is_empty()) {
                (Some(m), true) => format!("repromin {m:.1} s, faster than all {peers_seen} peers"),
                (Some(m), false) => format!(
                    "repromin {m:.1} s; not faster than {}",
                    slower_than.join(", ")
                ),
                (None, _) => "repromin did not run".into(),
            };
            let _ = writeln!(
                md,
                "| {name}: less wall time than every peer | {measured} | {} |",
                mark(mine.is_some() && slower_than.is_empty() && peers_seen > 0)
            );
        }
        if let Some(line) = smallest_and_fastest(cr, row, hi) {
            let _ = writeln!(md, "{line}");
        }
        if t.expected {
            let all: Vec<String> = cr
                .rows
                .iter()
                .filter(|r| r.tool == Tool::Repromin)
                .map(|r| format!("-j{}: {}", r.jobs, yes_no(r.expected)))
                .collect();
            let ok = cr
                .rows
                .iter()
                .filter(|r| r.tool == Tool::Repromin)
                .all(|r| r.expected == Some(true));
            let _ = writeln!(
                md,
                "| {name}: reaches the expected output | {} | {} |",
                all.join(", "),
                mark(ok)
            );
        }
    }
    for cr in &report.cases {
        if let Some(s) = cr.speedup(&report.jobs) {
            let oracle_ms = cr.oracle.as_secs_f64() * 1000.0;
            let machine = cr.machine.unwrap_or(f64::NAN);
            let met = if oracle_ms > SPEEDUP_ORACLE_MS {
                mark(s.factor >= 0.9 * machine)
            } else {
                "not a target (oracle under 50 ms)"
            };
            let _ = writeln!(
                md,
                "| {}: -j{} at least 90 % of the oracle's own {}-at-a-time speed-up (oracle {oracle_ms:.0} ms) | {:.2}x ({:.1} s -> {:.1} s) against {machine:.2}x | {met} |",
                cr.case.name, s.hi, s.hi, s.factor, s.lo_wall, s.hi_wall,
            );
        }
    }
    for r in overhead_rows.iter().filter(|r| r.files >= 10_000) {
        let _ = writeln!(
            md,
            "| per-probe overhead under 10% on {} files | {:.2} ms per probe vs {:.2} ms bare: {:.0}% | {} |",
            thousands(r.files as u64),
            r.per_probe_ms,
            r.bare_ms,
            r.overhead_pct,
            mark(r.overhead_pct < 10.0)
        );
    }
    let _ = writeln!(md);
}

/// Every tool but repromin.
const PEERS: [Tool; 5] = [
    Tool::Cvise,
    Tool::Creduce,
    Tool::Picire,
    Tool::Lithium,
    Tool::Shrinkray,
];

/// The speed-up target applies to cases whose oracle takes longer than this.
const SPEEDUP_ORACLE_MS: f64 = 50.0;

/// The target row "no larger than the best peer, and faster than every peer reaching that
/// size": `None` when no peer gave a result that is still interesting.
fn smallest_and_fastest(cr: &CaseReport, row: &Row, hi: u32) -> Option<String> {
    let peer_rows: Vec<&Row> = cr
        .rows
        .iter()
        .filter(|r| r.tool != Tool::Repromin && r.valid == Some(true))
        .collect();
    let best_peer = peer_rows.iter().filter_map(|r| r.bytes).min()?;
    let best_tools: Vec<&str> = {
        let mut names: Vec<&str> = peer_rows
            .iter()
            .filter(|r| r.bytes == Some(best_peer))
            .map(|r| r.tool.name())
            .collect();
        names.dedup();
        names
    };
    let name = &cr.case.name;
    // A repromin result that is missing or no longer interesting fails the target; it is
    // never left out of the table.
    let (Some(mine_bytes), Some(mine_time)) = (
        row.bytes.filter(|_| row.valid == Some(true)),
        best_time(cr, Tool::Repromin),
    ) else {
        return Some(format!(
            "| {name}: no larger than the best peer, faster than every peer reaching that size | no interesting result from repromin (-j{hi}) against {} bytes | not met |",
            thousands(best_peer)
        ));
    };
    let size_ok = mine_bytes <= best_peer;
    // The peers whose result is at least as small as repromin's, with their best time.
    let mut rivals = Vec::new();
    for tool in PEERS {
        let reached = cr.rows.iter().any(|r| {
            r.tool == tool && r.valid == Some(true) && r.bytes.is_some_and(|b| b <= mine_bytes)
        });
        if reached && let Some(t) = best_time(cr, tool) {
            rivals.push((tool.name(), t));
        }
    }
    let slower: Vec<String> = rivals
        .iter()
        .filter(|(_, t)| mine_time >= *t)
        .map(|(n, t)| format!("{n} {t:.1} s"))
        .collect();
    let time_text = if rivals.is_empty() {
        "no peer reaches that size".to_string()
    } else if slower.is_empty() {
        format!(
            "{mine_time:.1} s, faster than {}",
            rivals
                .iter()
                .map(|(n, t)| format!("{n} {t:.1} s"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        format!("{mine_time:.1} s; not faster than {}", slower.join(", "))
    };
    let mark = |ok: bool| if ok { "**met**" } else { "not met" };
    Some(format!(
        "| {name}: no larger than the best peer, faster than every peer reaching that size | {} bytes (-j{hi}) against {} bytes ({}); {time_text} | {} |",
        thousands(mine_bytes),
        thousands(best_peer),
        best_tools.join(", "),
        mark(size_ok && slower.is_empty())
    ))
}

/// A tool's best time on a case: its wall time when it exited by itself, else the time
/// its final size was first seen (or the limit).
fn best_time(cr: &CaseReport, tool: Tool) -> Option<f64> {
    cr.rows
        .iter()
        .filter(|r| r.tool == tool && r.valid == Some(true))
        .map(|r| match (r.exited, r.final_seen) {
            (false, Some((t, _))) => t.as_secs_f64(),
            _ => r.wall.as_secs_f64(),
        })
        .min_by(f64::total_cmp)
}
