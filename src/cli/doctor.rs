//! `repromin doctor`: its arguments, and the preflight a reduction would start with,
//! reported as text.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::{Arg, Args};

use super::args::{PassesArgs, ReductionArgs, build_options};
use crate::reduce::{self, ReduceError};

/// `--passes` in the words of a reduction that would run (`reduce` has its own).
const PASSES_HELP: &str = "The passes that would run, comma-separated [default: the passes of --level, or those \
     the run chooses]";

/// `--level` in the words of a reduction that would run.
const LEVEL_HELP: &str = "How fine the cuts would go: `lines`, `tokens` or `chars` (see \
     `reduce --help`) [default: chosen by the run, from lines on]. Cannot be combined with \
     --passes";

/// The options of [`PassesArgs`] in the words of `doctor`; the rest as they are. In place, so
/// that the arguments keep their order (which completion scripts follow).
fn doctor_wording(arg: Arg) -> Arg {
    match arg.get_id().as_str() {
        "passes" => arg.help(PASSES_HELP),
        "level" => arg.help(LEVEL_HELP),
        _ => arg,
    }
}

/// `repromin doctor`.
#[derive(Debug, Args, Clone)]
#[command(mut_args(doctor_wording))]
pub struct DoctorArgs {
    /// The directory tree or the single file a reduction would start from.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The failing command. With --config, the command is in the file.
    #[arg(last = true, required_unless_present = "config", value_name = "CMD")]
    pub command: Vec<String>,

    /// Read the command and every semantic option from this schema_version 1 JSON file (see
    /// docs/config-schema.md): all of it is validated, what the preflight uses is applied.
    /// Beside it, the command line gives only SOURCE: any other option, and `-- CMD`, is
    /// refused.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[command(flatten)]
    /// The oracle, the input, how the command runs, and sampling (the baseline's sampling
    /// options are applied; the rest are validated).
    pub reduction: ReductionArgs,

    #[command(flatten)]
    /// The passes that would run.
    pub passes: PassesArgs,
}

/// Runs `doctor` and returns its report.
pub(super) fn doctor(
    args: &DoctorArgs,
    interrupt: &Arc<AtomicBool>,
) -> Result<String, ReduceError> {
    let name = args
        .source
        .file_name()
        .map_or_else(|| "tree".into(), std::ffi::OsStr::to_os_string);
    let options = build_options(
        args.source.clone(),
        PathBuf::from(name),
        &args.command,
        &args.reduction,
        &args.passes,
    )?;
    reduce::validate(&options, false)?;
    let scratch =
        crate::scratch::Scratch::new("doctor").map_err(|source| crate::tree::TreeError::Io {
            action: "create a scratch directory in",
            path: std::env::temp_dir(),
            source,
        })?;
    let pre = reduce::preflight(&options, scratch.path(), interrupt)?;
    let size = pre.tree.size();
    let summary = pre.oracle.summary();
    let mut out = String::new();
    let _ = writeln!(out, "source: {}", options.source.display());
    if pre.source_kind == crate::tree::SourceKind::File
        && let Some(name) = pre.tree.entries.keys().next()
    {
        let _ = writeln!(
            out,
            "single file: each run finds it as `{name}`, alone in its working directory; \
             published as a file"
        );
    }
    let _ = writeln!(
        out,
        "tree: {} files, {} directories, {} symlinks, {} bytes",
        size.files, size.dirs, size.symlinks, size.bytes
    );
    let _ = writeln!(out, "tree-sha256-v2: {}", pre.tree.fingerprint());
    let _ = writeln!(
        out,
        "tree-content-sha256-v1: {}",
        pre.tree.content_fingerprint()
    );
    if !pre.scan.ignored.is_empty() {
        let _ = writeln!(out, "left out: {}", pre.scan.ignored.join(", "));
    }
    let _ = writeln!(out, "command: {}", options.command.argv.join(" "));
    if let Some(bytes) = options.command.memory {
        let _ = writeln!(
            out,
            "memory: at most {} per run, limited by {}",
            crate::runner::format_size(bytes),
            crate::runner::memory_mechanism().name()
        );
    }
    if let Some(c) = &pre.container {
        let _ = writeln!(
            out,
            "runner: containers of {} through {} ({}), tree at /workspace, network {}",
            c.image,
            c.cli,
            c.image_id,
            if c.network { "on" } else { "off" }
        );
    }
    if let Some(s) = &options.semantic {
        // Whether a token is set, never the token.
        let token =
            std::env::var_os(crate::reduce::semantic::TOKEN_ENV).is_some_and(|t| !t.is_empty());
        let _ = writeln!(
            out,
            "semantic: model {} at {} (timeout {:?}, at most {} calls), {}",
            s.model,
            s.endpoint,
            s.timeout,
            s.max_calls,
            if token {
                "with the bearer token of REPROMIN_SEMANTIC_TOKEN"
            } else {
                "without a token (REPROMIN_SEMANTIC_TOKEN is not set)"
            }
        );
    }
    if let Some(e) = &pre.baseline_evidence {
        let _ = writeln!(
            out,
            "baseline sample: {} of {} runs showed the failure (signature from run {}; {} of the {} after it)",
            e.passes, e.runs, e.discovery_run, e.rate_passes, e.rate_samples
        );
    }
    for (i, run) in pre.baseline.iter().enumerate() {
        let _ = writeln!(
            out,
            "baseline run {}: {} in {} ms",
            i + 1,
            run.termination.describe(),
            run.duration_ms
        );
    }
    let _ = writeln!(out, "oracle: {}", summary.mode);
    if let Some(sig) = &summary.signature {
        let source = summary.signature_source.as_deref().unwrap_or("given");
        let _ = writeln!(out, "signature ({source}): {sig}");
    }
    if let Some(frames) = &summary.frames {
        let _ = writeln!(
            out,
            "frames (innermost first): {}",
            crate::oracle::frames::describe(frames)
        );
    }
    let _ = writeln!(
        out,
        "timeout per candidate: {:.1} s{}",
        pre.timeout.as_secs_f64(),
        if options.timeout.is_some() {
            ""
        } else {
            " (derived)"
        }
    );
    match pre.trivial {
        None => {
            let _ = writeln!(
                out,
                "empty tree: nothing can be deleted (every entry is kept)"
            );
        }
        Some(false) => {
            let _ = writeln!(out, "empty tree: does not reproduce (good)");
        }
        Some(true) => {
            let _ = writeln!(out, "empty tree: REPRODUCES (allowed by --allow-trivial)");
        }
    }
    if !pre.named.is_empty() {
        let _ = writeln!(
            out,
            "files named in the failure, reduced first: {}",
            pre.named.join(", ")
        );
    }
    // A one-file tree has no files pass (see reduce::run_reduction).
    let passes: Vec<String> = options
        .passes
        .iter()
        .filter(|p| {
            **p != reduce::PassName::Files || pre.source_kind == crate::tree::SourceKind::Directory
        })
        .map(|p| format!("{p:?}").to_lowercase())
        .collect();
    let _ = writeln!(out, "passes: {}", passes.join(", "));
    if options.level == reduce::LevelChoice::Auto {
        let _ = writeln!(
            out,
            "level: chosen by the run: tokens, then chars, follow once these reach their fixed \
             point, while their estimated cost fits"
        );
    }
    let minimiser = match options.minimiser {
        reduce::minimise::Minimiser::Cdd => "cdd",
        reduce::minimise::Minimiser::Halving => "halving",
    };
    let _ = writeln!(out, "minimiser: {minimiser}");
    let _ = write!(out, "jobs: {}", options.jobs);
    Ok(out)
}
