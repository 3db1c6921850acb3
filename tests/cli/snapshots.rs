//! Snapshots of what a reduction publishes: report.json (redacted) and REPROMIN.md.

use crate::util::{Area, run, stderr};

#[test]
fn report_json_and_repromin_md() {
    // The report shows the tracer at work: without strace it would say `unavailable`.
    if !crate::speed::strace_works() {
        return;
    }
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let o = run(
        &[
            "reduce", "proj", "out", "--jobs", "1", "--level", "lines", "--", "python3", "run.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let sidecar = area.path("out.repromin");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sidecar.join("report.json")).unwrap())
            .unwrap();
    // The format, not the search: the counters of the reduction and its timeouts change
    // whenever a pass is tuned, and other tests check them.
    insta::assert_json_snapshot!("report_json", report, {
        ".tool" => "[tool]",
        ".baseline[].duration_ms" => "[ms]",
        ".final_validation.duration_ms" => "[ms]",
        ".reduce_ms" => "[ms]",
        ".probe_time.prepare_ms" => "[ms]",
        ".probe_time.command_ms" => "[ms]",
        ".probe_time.clean_up_ms" => "[ms]",
        ".probe_time.commit_ms" => "[ms]",
        ".execution.timeout_ms" => "[ms]",
        ".execution.final_timeout_ms" => "[timeout]",
        ".attempts" => "[count]",
        ".accepted_mutations" => "[count]",
        ".cache_hits" => "[count]",
        ".oracle_samples" => "[count]",
        ".phase_statistics[].passes" => "[count]",
        ".phase_statistics[].attempts" => "[count]",
        ".phase_statistics[].no_op" => "[count]",
        ".phase_statistics[].unparsable" => "[count]",
        ".phase_statistics[].recalled" => "[count]",
        ".phase_statistics[].rejected" => "[count]",
        ".phase_statistics[].accepted" => "[count]",
        ".phase_statistics[].superseded" => "[count]",
        ".phase_statistics[].aborted" => "[count]",
        ".phase_statistics[].oracle_samples" => "[count]",
        ".phase_statistics[].cache_hits" => "[count]",
        ".phase_statistics[].oracle_sample_uses" => "[count]",
        ".phase_statistics[].bytes_removed" => "[count]",
        ".phase_statistics[].entries_removed" => "[count]",
        ".phase_statistics[].samples_saved" => "[count]",
        ".phase_statistics[].early_acceptances" => "[count]",
        ".phase_statistics[].early_rejections" => "[count]",
        ".phase_statistics[].wall_ms" => "[ms]",
        ".phase_statistics[].oracle_ms" => "[ms]",
        ".source.tree_sha256_v2" => "[mtime-dependent]",
        ".output.tree_sha256_v2" => "[mtime-dependent]",
    });
    let md = std::fs::read_to_string(sidecar.join("REPROMIN.md")).unwrap();
    let md = regex::Regex::new(r"`[0-9a-f]{64}`")
        .unwrap()
        .replace_all(&md, "[..]");
    let md = regex::Regex::new(r"(time in passes:|The commands took|work around them) [\d.]+ s")
        .unwrap()
        .replace_all(&md, "$1 [s]");
    let md = md.replace(&area.dir.path().display().to_string(), "[AREA]");
    insta::assert_snapshot!("repromin_md", md);
}
