//! One `repromin reduce` of a case in a fresh copy: the steps `compare` and `remote` share.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use repromin::runner::{CommandSpec, Termination};

use crate::Res;
use crate::cases::Case;
use crate::peers::REDUCE_ARGS;
use crate::process::copy_tree;

/// What one reduction did: its wall time in seconds and its report.
pub(crate) struct Reduced {
    pub(crate) wall: f64,
    pub(crate) report: serde_json::Value,
}

/// Copies `case`'s input into a temporary directory, reduces it there with `binary` and
/// `options` (placed before `-- /bin/sh ORACLE`), killed after `timeout`, and reads its
/// report. A run that does not exit 0 is an error naming `binary`, the case and the
/// options, with the last lines of its output.
pub(crate) fn reduce_once(
    binary: &Path,
    case: &Case,
    options: &[String],
    timeout: Duration,
) -> Res<Reduced> {
    let tmp = tempfile::Builder::new()
        .prefix(&format!("repromin-bench-{}-", case.name))
        .tempdir()?;
    let work = tmp.path().join("work");
    let private_tmp = tmp.path().join("tmp");
    std::fs::create_dir_all(&private_tmp)?;
    copy_tree(&case.dir.join("input"), &work.join("input"))?;
    let mut argv: Vec<String> = std::iter::once(binary.to_string_lossy().into_owned())
        .chain(REDUCE_ARGS.iter().map(|a| (*a).to_string()))
        .collect();
    argv.extend(options.iter().cloned());
    argv.extend(["--".into(), "/bin/sh".into()]);
    argv.push(case.oracle.to_string_lossy().into_owned());
    let spec = CommandSpec {
        argv,
        env: Vec::new(),
        memory: None,
    };
    let never = AtomicBool::new(false);
    let outcome = repromin::runner::run(&spec, &work, &private_tmp, timeout, &never)?;
    if outcome.termination != Termination::Exited(0) {
        let text = String::from_utf8_lossy(&outcome.output);
        let tail: Vec<&str> = text.lines().rev().take(3).collect();
        return Err(format!(
            "{} on {} ({}): {}: {}",
            binary.display(),
            case.name,
            options.join(" "),
            outcome.termination.describe(),
            tail.join(" | ")
        )
        .into());
    }
    let report = std::fs::read_to_string(work.join("out.repromin/report.json"))?;
    Ok(Reduced {
        wall: outcome.duration.as_secs_f64(),
        report: serde_json::from_str(&report)?,
    })
}
