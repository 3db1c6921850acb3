//! Publication under SIGKILL: a test build of the binary is held inside publication by a
//! failpoint (`REPROMIN_FAILPOINT`), killed, and the next `repromin reduce` with the same OUTPUT
//! must clean up or complete what it finds, say so, and leave no staging directory, no
//! partial OUTPUT and the source unchanged.

use std::path::Path;
use std::process::{Command, Stdio};

use repromin::exit_code::Exit;

use crate::util::{Area, bin, clean_env, files, kill_when_paused, redact, report, run, stderr};

/// A failure the reducer narrows to one line of one file in a few runs.
const SCRIPT: &str = "if grep -q BUG a.txt; then echo 'error: BUG in a.txt'; exit 1; fi";

fn source(area: &Area) -> std::path::PathBuf {
    area.write(
        "src",
        &[
            ("a.txt", "one\nBUG\ntwo\n"),
            ("b.txt", "noise\n"),
            ("dir/c.txt", "more noise\n"),
        ],
    )
}

fn reduce_args() -> Vec<&'static str> {
    vec!["reduce", "src", "out", "--", "sh", "-c", SCRIPT]
}

fn fingerprint(path: &Path) -> String {
    repromin::tree::scan_exact(path)
        .unwrap()
        .fingerprint()
        .to_string()
}

/// Names in the area's top directory that start with `.repromin-staging-`.
fn stagings(area: &Area) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(area.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(".repromin-staging-"))
        .collect();
    names.sort();
    names
}

/// Runs `reduce` held at the failpoint `point`, waits until it says it is paused there,
/// and kills it with SIGKILL. Returns its pid.
fn kill_at(area: &Area, point: &str) -> u32 {
    let mut command = Command::new(bin());
    command
        .args(reduce_args())
        .current_dir(area.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    clean_env(&mut command);
    command.env(crate::util::FAILPOINT, point);
    let mut child = command.spawn().unwrap();
    let pid = child.id();
    let status = kill_when_paused(&mut child, point);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    pid
}

/// The next run's stderr with the area, the staging directory's random part, the dead
/// run's pid and fingerprints replaced by placeholders.
fn shown(text: &str, area: &Area, pid: u32) -> String {
    let text = redact(text, area);
    let text = regex::Regex::new(r"\.repromin-staging-[A-Za-z0-9]+")
        .unwrap()
        .replace_all(&text, ".repromin-staging-[ID]")
        .to_string();
    let text = regex::Regex::new("[0-9a-f]{64}")
        .unwrap()
        .replace_all(&text, "[FINGERPRINT]")
        .to_string();
    text.replace(&format!("process {pid})"), "process [PID])")
}

/// The published pair is whole: the payload has the fingerprint its report records.
fn assert_published(area: &Area) {
    let out = area.path("out");
    let r = report(&out);
    assert_eq!(r["output"]["tree_sha256_v2"], fingerprint(&out).as_str());
    assert!(area.path("out.repromin/REPROMIN.md").is_file());
    assert_eq!(files(&out).keys().collect::<Vec<_>>(), ["a.txt"]);
}

#[test]
fn a_kill_before_the_payload_is_renamed_publishes_nothing_and_the_next_run_cleans_up() {
    if !crate::util::failpoints() {
        return;
    }
    for point in ["publish:staged", "publish:before-payload"] {
        let area = Area::new();
        let src = source(&area);
        let before = fingerprint(&src);
        let pid = kill_at(&area, point);
        // Killed there: only the staging directory is visible.
        assert!(!area.path("out").exists(), "{point}");
        assert!(!area.path("out.repromin").exists(), "{point}");
        assert_eq!(stagings(&area).len(), 1, "{point}");
        let o = run(&reduce_args(), area.dir.path());
        assert!(o.status.success(), "{point}: {}", stderr(&o));
        let err = shown(&stderr(&o), &area, pid);
        let first = err.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            "note: removed `.repromin-staging-[ID]`, left by an interrupted run (process [PID]) that had published nothing",
            "{point}"
        );
        assert_published(&area);
        assert!(stagings(&area).is_empty(), "{point}: {:?}", stagings(&area));
        assert_eq!(fingerprint(&src), before, "{point}");
    }
}

#[test]
fn a_kill_between_the_renames_is_completed_by_the_next_run() {
    if !crate::util::failpoints() {
        return;
    }
    let area = Area::new();
    let src = source(&area);
    let before = fingerprint(&src);
    let pid = kill_at(&area, "publish:after-payload");
    // Killed there: the payload is at OUTPUT, its sidecar still in staging.
    assert!(area.path("out").is_dir());
    assert!(!area.path("out.repromin").exists());
    assert_eq!(stagings(&area).len(), 1);
    let o = run(&reduce_args(), area.dir.path());
    assert_eq!(o.status.code(), Some(Exit::OutputExists as i32));
    insta::assert_snapshot!(shown(&stderr(&o), &area, pid), @r"
    note: completed the publication of `out` by an interrupted run (process [PID]): its tree still has the recorded fingerprint [FINGERPRINT], so the sidecar `out.repromin` that run had prepared was published from `.repromin-staging-[ID]`, which was removed
    error: `out` already exists; repromin never overwrites an output
    ");
    assert_published(&area);
    assert!(stagings(&area).is_empty(), "{:?}", stagings(&area));
    assert_eq!(fingerprint(&src), before);
}

#[test]
fn a_kill_after_both_renames_leaves_a_whole_output_and_the_next_run_cleans_up() {
    if !crate::util::failpoints() {
        return;
    }
    let area = Area::new();
    let src = source(&area);
    let before = fingerprint(&src);
    let pid = kill_at(&area, "publish:after-sidecar");
    assert_published(&area);
    assert_eq!(stagings(&area).len(), 1);
    let o = run(&reduce_args(), area.dir.path());
    assert_eq!(o.status.code(), Some(Exit::OutputExists as i32));
    insta::assert_snapshot!(shown(&stderr(&o), &area, pid), @r"
    note: removed `.repromin-staging-[ID]`, left by a run (process [PID]) that had finished publishing `out`
    error: `out` already exists; repromin never overwrites an output
    ");
    assert_published(&area);
    assert!(stagings(&area).is_empty(), "{:?}", stagings(&area));
    assert_eq!(fingerprint(&src), before);
}

#[test]
fn an_output_changed_after_a_kill_between_the_renames_is_never_touched() {
    if !crate::util::failpoints() {
        return;
    }
    let area = Area::new();
    source(&area);
    let pid = kill_at(&area, "publish:after-payload");
    std::fs::write(area.path("out/mine.txt"), "the user's own file\n").unwrap();
    let o = run(&reduce_args(), area.dir.path());
    assert_eq!(o.status.code(), Some(Exit::OutputExists as i32));
    insta::assert_snapshot!(shown(&stderr(&o), &area, pid), @r"
    note: removed `.repromin-staging-[ID]`, left by an interrupted run (process [PID]) that had published `out` but not its sidecar; `out` has changed since (fingerprint [FINGERPRINT] recorded, [FINGERPRINT] found), so it was left as it is
    error: `out` already exists; repromin never overwrites an output
    ");
    assert_eq!(
        std::fs::read_to_string(area.path("out/mine.txt")).unwrap(),
        "the user's own file\n"
    );
    assert!(!area.path("out.repromin").exists());
    assert!(stagings(&area).is_empty(), "{:?}", stagings(&area));
}

#[test]
fn a_staging_name_without_an_owner_file_is_left_alone_with_a_warning() {
    let area = Area::new();
    source(&area);
    area.write(".repromin-staging-mine", &[("notes.txt", "keep me\n")]);
    let o = run(&reduce_args(), area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let err = redact(&stderr(&o), &area);
    insta::assert_snapshot!(err.lines().next().unwrap_or_default(), @"warning: left `.repromin-staging-mine` alone: it has no valid owner file, so it cannot be known to be an abandoned staging directory of repromin; remove it if no repromin run is publishing there");
    assert_eq!(
        std::fs::read_to_string(area.path(".repromin-staging-mine/notes.txt")).unwrap(),
        "keep me\n"
    );
    assert_published(&area);
    assert_eq!(stagings(&area), [".repromin-staging-mine"]);
}

/// No variable holds a build without failpoints: the old test hook's
/// (`REPROMIN_TEST_PAUSE_AT`) holds no build at all, and a build without the `failpoints`
/// feature, as a release is, has no failpoint that [`crate::util::FAILPOINT`] could name.
#[test]
fn no_variable_holds_a_build_without_failpoints() {
    let area = Area::new();
    source(&area);
    let mut command = Command::new(bin());
    command
        .args(reduce_args())
        .current_dir(area.dir.path())
        .stdin(Stdio::null());
    clean_env(&mut command);
    command.env("REPROMIN_TEST_PAUSE_AT", "publish:staged");
    if !cfg!(feature = "failpoints") {
        command.env(crate::util::FAILPOINT, "publish:staged");
    }
    let o = crate::util::output_within(command, std::time::Duration::from_secs(300));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("paused at"), "{}", stderr(&o));
    assert_published(&area);
}
