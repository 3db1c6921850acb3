//! Snapshots of what a reduction publishes: report.json (redacted) and REPROMIN.md.

use crate::util::{Area, run, stderr};

#[test]
fn report_json_and_repromin_md() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let o = run(
        &[
            "reduce", "proj", "out", "--jobs", "1", "--", "python3", "run.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let sidecar = area.path("out.repromin");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sidecar.join("report.json")).unwrap())
            .unwrap();
    insta::assert_json_snapshot!("report_json", report, {
        ".tool" => "[tool]",
        ".baseline[].duration_ms" => "[ms]",
        ".final_validation.duration_ms" => "[ms]",
        ".reduce_ms" => "[ms]",
        ".execution.timeout_ms" => "[ms]",
        ".phase_statistics[].wall_ms" => "[ms]",
        ".phase_statistics[].oracle_ms" => "[ms]",
        ".source.tree_sha256_v2" => "[mtime-dependent]",
        ".output.tree_sha256_v2" => "[mtime-dependent]",
    });
    let md = std::fs::read_to_string(sidecar.join("REPROMIN.md")).unwrap();
    let md = regex::Regex::new(r"`[0-9a-f]{64}`|time in passes: [\d.]+ s")
        .unwrap()
        .replace_all(&md, "[..]");
    let md = md.replace(&area.dir.path().display().to_string(), "[AREA]");
    insta::assert_snapshot!("repromin_md", md);
}
