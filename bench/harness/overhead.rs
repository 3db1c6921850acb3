//! `overhead`: repromin's per-probe cost on trees of many small files against the bare
//! spawn of the same oracle command.

use std::fmt::Write as _;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use repromin::runner::{CommandSpec, Termination};

use crate::peers::thousands;
use crate::process::{counter_len, run_limited, sh_quote, write_executable};
use crate::{OverheadOpts, Res};

pub(crate) struct OverheadRow {
    pub(crate) files: usize,
    pub(crate) probes: u64,
    pub(crate) bare_ms: f64,
    pub(crate) short_wall: f64,
    pub(crate) short_calls: u64,
    pub(crate) long_wall: f64,
    pub(crate) long_calls: u64,
    pub(crate) per_probe_ms: f64,
    pub(crate) overhead_pct: f64,
    /// The same difference taken over the reports' `reduce_ms` (the passes alone), which
    /// leaves out the copy in, the baseline, the export and the clean-up: on an ext4
    /// without a journal those fixed costs depend on what the run before deleted.
    pub(crate) loop_probe_ms: f64,
    pub(crate) loop_overhead_pct: f64,
    /// Per probe, from the reports' `probe_time` (the long run's less the short one's):
    /// preparing the tree, the command, cleaning up around it, the commit, in ms.
    pub(crate) split: [f64; 4],
    /// The same command spawned the bare way but through `fork` (a hook before `exec`
    /// that does nothing), and with a hook that gives it what kernel-enforced undo needs
    /// at the least, a mount namespace of its own with an overlay of the tree (see
    /// [`hooked_spawns`]): ms per spawn each; `None` where this process cannot mount.
    pub(crate) floor_ms: Option<(f64, f64)>,
}

/// The fields of a report's `probe_time`, in the order of [`OverheadRow::split`].
const PROBE_TIME: [&str; 4] = ["prepare_ms", "command_ms", "clean_up_ms", "commit_ms"];

/// Lays out `n` small two-line files, 100 per directory.
fn generate_tree(root: &Path, n: usize) -> Res<()> {
    for i in 0..n {
        let dir = root.join(format!("d{:03}", i / 100));
        if i % 100 == 0 {
            fs::create_dir_all(&dir)?;
        }
        fs::write(
            dir.join(format!("f{:02}.txt", i % 100)),
            format!("alpha {i}\nbeta\n"),
        )?;
    }
    Ok(())
}

pub(crate) fn overhead(opts: &OverheadOpts, repromin: &Path) -> Res<Vec<OverheadRow>> {
    if !repromin.is_file() {
        return Err(format!(
            "{} not found: run `cargo build --release` first",
            repromin.display()
        )
        .into());
    }
    if opts.probes == 0 {
        return Err("--probes must be positive".into());
    }
    let mut rows = Vec::new();
    for &n in &opts.files {
        let tmp = tempfile::Builder::new()
            .prefix("repromin-bench-overhead-")
            .tempdir()?;
        let base = tmp.path();
        let tree = base.join("tree");
        generate_tree(&tree, n)?;
        let counter = base.join("counter");
        let oracle = base.join("oracle.sh");
        // The trivial oracle: count the call, say "interesting".
        write_executable(
            &oracle,
            &format!("#!/bin/sh\nprintf x >> {}\nexit 0\n", sh_quote(&counter)?),
        )?;

        // Bare: the same command, run by repromin's runner as a probe runs it (own process
        // group, stdin from /dev/null, output captured), in the same tree, one after
        // another, with nothing else of repromin around it.
        eprint!("overhead {n} files: bare spawn x{} ... ", opts.probes);
        let spec = CommandSpec {
            argv: vec!["/bin/sh".into(), oracle.to_string_lossy().into_owned()],
            env: Vec::new(),
            memory: None,
        };
        let never = AtomicBool::new(false);
        let start = Instant::now();
        for _ in 0..opts.probes {
            let out = repromin::runner::run(&spec, &tree, base, Duration::from_secs(60), &never)?;
            if out.termination != Termination::Exited(0) {
                return Err("the trivial oracle failed".into());
            }
        }
        let bare_ms = start.elapsed().as_secs_f64() * 1000.0 / opts.probes as f64;
        eprintln!("{bare_ms:.2} ms each");
        eprint!(
            "overhead {n} files: forked spawn, then in a namespace with an overlay, x{} each ... ",
            opts.probes
        );
        let floor_ms =
            match hooked_spawns(&tree, &oracle, base, opts.probes, false).and_then(|fork| {
                Ok((
                    fork,
                    hooked_spawns(&tree, &oracle, base, opts.probes, true)?,
                ))
            }) {
                Ok((fork, floor)) => {
                    eprintln!("{fork:.2} and {floor:.2} ms each");
                    Some((fork, floor))
                }
                Err(e) => {
                    eprintln!("skipped: {e}");
                    None
                }
            };

        let reduce_run = |attempts: u64, out: &str| -> Res<(f64, u64, f64, [f64; 4])> {
            fs::write(&counter, b"")?;
            let mut cmd = Command::new(repromin);
            cmd.args(["reduce", "tree", out, "--exit-code", "0", "--allow-trivial"])
                .args(["--passes", "lines", "--jobs", "1", "--no-progress"])
                .args(["--max-attempts", &attempts.to_string(), "--", "/bin/sh"])
                .arg(&oracle)
                .current_dir(base)
                .env("TMPDIR", base);
            let finished = run_limited(
                &cmd,
                None,
                Duration::from_secs(3600),
                Duration::from_secs(30),
                &counter,
                None,
            )?;
            match finished.status {
                Some(Termination::Exited(0)) => {}
                other => return Err(format!("repromin reduce failed: {other:?}").into()),
            }
            let report = base.join(format!("{out}.repromin")).join("report.json");
            let text =
                fs::read_to_string(&report).map_err(|e| format!("{}: {e}", report.display()))?;
            let report: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", report.display()))?;
            let loop_ms = report["reduce_ms"]
                .as_f64()
                .ok_or("the report has no reduce_ms")?;
            let mut split = [0.0; 4];
            for (slot, field) in split.iter_mut().zip(PROBE_TIME) {
                *slot = report["probe_time"][field]
                    .as_f64()
                    .ok_or_else(|| format!("the report has no probe_time.{field}"))?;
            }
            Ok((
                finished.wall.as_secs_f64(),
                counter_len(&counter),
                loop_ms,
                split,
            ))
        };
        eprint!("overhead {n} files: repromin, 1 probe ... ");
        let (short_wall, short_calls, short_loop, short_split) = reduce_run(1, "out-short")?;
        eprintln!("{short_wall:.2} s, {short_calls} calls");
        eprint!(
            "overhead {n} files: repromin, {} probes ... ",
            opts.probes + 1
        );
        let (long_wall, long_calls, long_loop, long_split) =
            reduce_run(opts.probes + 1, "out-long")?;
        eprintln!("{long_wall:.2} s, {long_calls} calls");
        let extra = long_calls.saturating_sub(short_calls).max(1);
        let per_probe_ms = (long_wall - short_wall) * 1000.0 / extra as f64;
        let loop_probe_ms = (long_loop - short_loop) / extra as f64;
        rows.push(OverheadRow {
            files: n,
            probes: extra,
            bare_ms,
            short_wall,
            short_calls,
            long_wall,
            long_calls,
            per_probe_ms,
            overhead_pct: (per_probe_ms - bare_ms) / bare_ms * 100.0,
            loop_probe_ms,
            loop_overhead_pct: (loop_probe_ms - bare_ms) / bare_ms * 100.0,
            split: std::array::from_fn(|i| (long_split[i] - short_split[i]) / extra as f64),
            floor_ms,
        });
    }
    Ok(rows)
}

/// `probes` spawns of `/bin/sh ORACLE` in `tree` as the bare rows spawn it, but with a
/// hook in the child before `exec` (so the standard library forks rather than using
/// `posix_spawn`). With `isolate`, the hook gives the command what any probe whose undo
/// the kernel enforces pays at the least: a mount namespace of its own, its mounts made
/// private, and an overlay of `tree` (a fresh, empty upper layer, made before the clock
/// starts) mounted on it; the namespace and the mount go when the command exits, before
/// its exit is reported. Without, the hook does nothing. Nothing of repromin runs: the
/// difference is the floor under its per-probe cost. Milliseconds per spawn; an error
/// where the overlay cannot be mounted (no privilege, no overlay).
fn hooked_spawns(tree: &Path, oracle: &Path, base: &Path, probes: u64, isolate: bool) -> Res<f64> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let layers = base.join("floor-layers");
    let target = CString::new(tree.as_os_str().as_bytes())?;
    // The mount options of each spawn, naming its own upper and work directories, made
    // before the clock starts; the first, untimed spawn gets a pair of its own.
    let mut options = Vec::new();
    for i in 0..=probes {
        let (upper, work) = (layers.join(format!("u{i}")), layers.join(format!("w{i}")));
        if isolate {
            fs::create_dir_all(&upper)?;
            fs::create_dir_all(&work)?;
        }
        options.push(CString::new(format!(
            "lowerdir={},upperdir={},workdir={},volatile",
            tree.display(),
            upper.display(),
            work.display()
        ))?);
    }
    let spawn = |options: &CString| -> Res<()> {
        let target = target.clone();
        let options = options.clone();
        let mut cmd = Command::new("/bin/sh");
        cmd.arg(oracle)
            .current_dir(tree)
            .stdin(Stdio::null())
            .process_group(0);
        // SAFETY: between fork and exec the child makes system calls only, on strings
        // made before the fork.
        #[expect(
            unsafe_code,
            reason = "the floor under a probe: a mount namespace and an overlay entered \
                      between fork and exec, as repromin's leader does"
        )]
        unsafe {
            cmd.pre_exec(move || {
                use nix::mount::{MsFlags, mount};
                if !isolate {
                    return Ok(());
                }
                nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS)?;
                mount(
                    None::<&std::ffi::CStr>,
                    c"/",
                    None::<&std::ffi::CStr>,
                    MsFlags::MS_REC | MsFlags::MS_PRIVATE,
                    None::<&std::ffi::CStr>,
                )?;
                mount(
                    Some(c"overlay"),
                    target.as_c_str(),
                    Some(c"overlay"),
                    MsFlags::empty(),
                    Some(options.as_c_str()),
                )?;
                nix::unistd::chdir(target.as_c_str())?;
                Ok(())
            });
        }
        let out = cmd.output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("the oracle failed: {:?}", out.status).into())
        }
    };
    // One spawn first, untimed: it says whether mounting works here at all.
    let (first, timed) = options.split_first().ok_or("no probes")?;
    spawn(first).map_err(|e| format!("cannot run the command in a namespace: {e}"))?;
    let start = Instant::now();
    for options in timed {
        spawn(options)?;
    }
    let ms = start.elapsed().as_secs_f64() * 1000.0 / probes as f64;
    if isolate {
        fs::remove_dir_all(&layers)?;
    }
    Ok(ms)
}

pub(crate) fn write_overhead(md: &mut String, rows: &[OverheadRow], opts: &OverheadOpts) {
    let _ = writeln!(
        md,
        "Oracle: `/bin/sh oracle.sh` that appends one byte to a counter and exits 0. \
         repromin: `reduce --exit-code 0 --allow-trivial --passes lines --jobs 1 --max-attempts K`, \
         run with K = 1 and K = {}; per probe = (wall(K={}) - wall(K=1)) / (extra oracle calls); \
         in the passes: the same over the reports' `reduce_ms`, which leaves out the fixed \
         costs (copy in, baseline, export, clean-up).\n",
        opts.probes + 1,
        opts.probes + 1
    );
    let _ = writeln!(
        md,
        "| files | probes | bare spawn ms | repromin K=1: wall s (calls) | repromin K={}: wall s (calls) | repromin per probe ms | overhead | in the passes: per probe ms | overhead |",
        opts.probes + 1
    );
    let _ = writeln!(
        md,
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {:.2} | {:.2} ({}) | {:.2} ({}) | {:.2} | {:.0}% | {:.2} | {:.0}% |",
            thousands(r.files as u64),
            r.probes,
            r.bare_ms,
            r.short_wall,
            r.short_calls,
            r.long_wall,
            r.long_calls,
            r.per_probe_ms,
            r.overhead_pct,
            r.loop_probe_ms,
            r.loop_overhead_pct
        );
    }
    let _ = writeln!(
        md,
        "\nWhere a probe's time goes, from the reports' `probe_time` (the same difference, per \
         probe, in ms): the tree shown to the run, the command (its start, overlay mount and \
         namespace included, to its group's end), the clean-up around it, the commit, and the \
         rest of the passes' time (the search: making, keying and choosing candidates).\n"
    );
    let _ = writeln!(
        md,
        "| files | bare spawn | prepare | command | clean-up | commit | search | per probe |"
    );
    let _ = writeln!(
        md,
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for r in rows {
        let [prepare, command, clean_up, commit] = r.split;
        let search = r.loop_probe_ms - (prepare + command + clean_up + commit);
        let _ = writeln!(
            md,
            "| {} | {:.3} | {prepare:.3} | {command:.3} | {clean_up:.3} | {commit:.3} | {search:.3} | {:.3} |",
            thousands(r.files as u64),
            r.bare_ms,
            r.loop_probe_ms
        );
    }
    let _ = writeln!(
        md,
        "\nThe floor under a probe: the same command spawned through `fork` (a hook before \
         `exec` that does nothing), and with a hook that gives it only what kernel-enforced \
         undo needs (a mount namespace of its own and an overlay of the tree with an empty \
         upper layer, both gone when it exits); nothing of repromin runs. *Isolation* is the \
         difference, in ms and as a share of the bare spawn: no probe that the kernel keeps \
         from writing into the tree costs less over the bare spawn.\n"
    );
    let _ = writeln!(
        md,
        "| files | bare spawn | forked spawn | in a namespace with an overlay | isolation | isolation / bare spawn | repromin per probe |"
    );
    let _ = writeln!(md, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in rows {
        match r.floor_ms {
            Some((fork, floor)) => {
                let _ = writeln!(
                    md,
                    "| {} | {:.3} | {fork:.3} | {floor:.3} | {:.3} | {:.0}% | {:.3} |",
                    thousands(r.files as u64),
                    r.bare_ms,
                    floor - fork,
                    (floor - fork) / r.bare_ms * 100.0,
                    r.loop_probe_ms
                );
            }
            None => {
                let _ = writeln!(
                    md,
                    "| {} | {:.3} | not measured: no overlay here | | | | {:.3} |",
                    thousands(r.files as u64),
                    r.bare_ms,
                    r.loop_probe_ms
                );
            }
        }
    }
    let _ = writeln!(md);
}
