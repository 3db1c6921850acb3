//! A single file as SOURCE: reduced as a one-file tree whose command finds the file under
//! its own name in its working directory, published as a file at OUTPUT with the sidecar
//! beside it, by the same no-replace publication, recovery and sessions as a tree.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use repromin::exit_code::Exit;

use crate::util::{
    Area, bin, clean_env, kill_when_paused, redact, report, require_tool, run, stderr, stdout,
    tool_runs,
};

/// A C file whose interesting property is that it still compiles and still names `nextHi`
/// (as in C-Vise's and Shrink Ray's examples).
const C_SOURCE: &str = r#"#include <stdio.h>
#include <string.h>

struct span { int lo; int hi; };

static int table[32];

static int helper(int x) { return x * 3 + 1; }

int nextHi(struct span *s, int step) {
  int i;
  for (i = 0; i < 32; i++)
    table[i] = helper(i);
  if (s->hi + step > s->lo)
    return s->hi + step;
  return s->lo;
}

static void report(const char *name, int value) {
  printf("%s=%d\n", name, value);
}

int main(void) {
  struct span s = { 1, 2 };
  report("next", nextHi(&s, 4));
  return 0;
}
"#;

/// The interestingness script, next to the file and outside the one-file tree: exit 0
/// when interesting.
const C_TEST: &str = "#!/bin/sh\ngcc -c crash.c && grep -q nextHi crash.c\n";

/// A Python script that raises one specific exception after some unrelated work.
const PY_SOURCE: &str = r#"DEFAULTS = {"retries": 3, "timeout": 10}


def load(text):
    return dict(item.split("=") for item in text.split(","))


class Settings:
    def __init__(self, data):
        self.data = dict(DEFAULTS)
        self.data.update(data)

    def require(self, key):
        if key not in self.data:
            raise LookupError("setting %r is required" % key)
        return self.data[key]


def describe(settings):
    return ", ".join("%s=%s" % kv for kv in sorted(settings.data.items()))


def main():
    settings = Settings(load("name=demo,mode=fast"))
    print(describe(settings))
    print(settings.require("endpoint"))


main()
"#;

/// A text file for the quick tests: the failure is `BUG 7` in it.
fn notes() -> String {
    (1..=12)
        .map(|i| format!("line {i}\nBUG {i}\n"))
        .collect::<String>()
}

/// The check for [`notes`], a script beside the file (run as `./check.sh`).
const CHECK: &str =
    "#!/bin/sh\ngrep -q 'BUG 7' notes.txt || exit 0\necho 'error: BUG 7 seen'\nexit 3\n";

fn write_executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The area with `notes.txt` and `check.sh`.
fn notes_area() -> Area {
    let area = Area::new();
    area.write(".", &[("notes.txt", &notes())]);
    write_executable(&area.path("check.sh"), CHECK);
    area
}

fn notes_args<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["reduce", "notes.txt", out, "--jobs", "2", "--no-progress"];
    args.extend_from_slice(&["--expect", "error: BUG 7 seen"]);
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "./check.sh"]);
    args
}

/// The fingerprint of the file at `path` as the one-file tree of `name`.
fn file_fingerprint(path: &Path, name: &str) -> String {
    repromin::tree::read_file_tree(path, name)
        .unwrap()
        .fingerprint()
        .to_string()
}

/// Checks that `out` is a published file of source name `name` with its sidecar beside it,
/// and returns its report.
fn published_file(out: &Path, name: &str) -> serde_json::Value {
    let meta = std::fs::symlink_metadata(out).unwrap();
    assert!(meta.is_file(), "{} is not a file", out.display());
    let mut sidecar = out.file_name().unwrap().to_os_string();
    sidecar.push(".repromin");
    let sidecar = out.with_file_name(sidecar);
    assert!(sidecar.join("REPROMIN.md").is_file());
    let report = report(out);
    assert_eq!(report["source_kind"], "file");
    assert_eq!(report["file_name"], name);
    assert_eq!(report["output"]["files"], 1);
    assert_eq!(report["output"]["dirs"], 0);
    assert_eq!(
        report["output"]["tree_sha256_v2"],
        file_fingerprint(out, name).as_str()
    );
    report
}

/// Runs `script` in a fresh directory that holds `file` as `name`: its exit code and output.
fn rerun(file: &Path, name: &str, program: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(file, dir.path().join(name)).unwrap();
    let o = Command::new(program[0])
        .args(&program[1..])
        .current_dir(dir.path())
        .output()
        .unwrap();
    (o.status.code(), format!("{}{}", stdout(&o), stderr(&o)))
}

#[test]
fn a_c_file_reduces_with_gcc_to_a_smaller_file_that_still_compiles() {
    if !require_tool("gcc", tool_runs("gcc")) {
        return;
    }
    let area = Area::new();
    area.write(".", &[("crash.c", C_SOURCE)]);
    write_executable(&area.path("test.sh"), C_TEST);
    let o = run(
        &[
            "reduce",
            "crash.c",
            "crash.min.c",
            "--exit-code",
            "0",
            "--jobs",
            "2",
            "--no-progress",
            "--",
            "./test.sh",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(area.path("crash.c")).unwrap(),
        C_SOURCE
    );
    let out = area.path("crash.min.c");
    let report = published_file(&out, "crash.c");
    let reduced = std::fs::read_to_string(&out).unwrap();
    assert!(reduced.contains("nextHi"), "{reduced}");
    assert!(reduced.len() * 4 < C_SOURCE.len(), "{reduced}");
    assert_eq!(report["output"]["bytes"], reduced.len());
    // The script was found from the directory it was given in.
    assert_eq!(
        report["command"][0],
        area.path("test.sh").display().to_string()
    );
    let script = area.path("test.sh").display().to_string();
    assert_eq!(rerun(&out, "crash.c", &[&script]).0, Some(0));
}

#[test]
fn a_python_file_reduces_to_a_smaller_file_raising_the_same_exception() {
    if !require_tool("python3", tool_runs("python3")) {
        return;
    }
    let area = Area::new();
    area.write(".", &[("crash.py", PY_SOURCE)]);
    let o = run(
        &[
            "reduce",
            "crash.py",
            "small.py",
            "--jobs",
            "2",
            "--no-progress",
            "--",
            "python3",
            "-S",
            "crash.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = area.path("small.py");
    let report = published_file(&out, "crash.py");
    assert_eq!(report["oracle"]["mode"], "learned-signature");
    let reduced = std::fs::read_to_string(&out).unwrap();
    assert!(reduced.len() * 2 < PY_SOURCE.len(), "{reduced}");
    let (code, output) = rerun(&out, "crash.py", &["python3", "-S", "crash.py"]);
    assert_eq!(code, Some(1), "{output}");
    assert!(
        output.contains("LookupError: setting 'endpoint' is required"),
        "{output}"
    );
}

#[test]
fn an_existing_output_file_or_directory_is_never_overwritten() {
    let area = notes_area();
    area.write(".", &[("out.txt", "mine\n")]);
    area.write("outdir", &[("keep.txt", "mine too\n")]);
    for (out, code) in [
        ("out.txt", Exit::OutputExists),
        ("outdir", Exit::OutputExists),
    ] {
        let o = run(&notes_args(out, &[]), area.dir.path());
        assert_eq!(o.status.code(), Some(code as i32), "{}", stderr(&o));
        if out == "out.txt" {
            insta::assert_snapshot!(redact(&stderr(&o), &area), @"error: `out.txt` already exists; repromin never overwrites an output");
        }
    }
    assert_eq!(
        std::fs::read_to_string(area.path("out.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(
        std::fs::read_to_string(area.path("outdir/keep.txt")).unwrap(),
        "mine too\n"
    );
    assert!(!area.path("out.txt.repromin").exists());
}

#[test]
fn a_text_file_reduces_to_its_one_line_and_a_symlink_to_a_file_is_followed() {
    let area = notes_area();
    std::os::unix::fs::symlink("notes.txt", area.path("link.txt")).unwrap();
    let o = run(&notes_args("out.txt", &[]), area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    published_file(&area.path("out.txt"), "notes.txt");
    // A small file goes on to characters at the defaults: the line's end goes too.
    assert_eq!(
        std::fs::read_to_string(area.path("out.txt")).unwrap(),
        "BUG 7"
    );
    // Through a link, the file keeps the link's name.
    let check = area.path("check.sh").display().to_string();
    let o = run(
        &[
            "reduce",
            "link.txt",
            "out2.txt",
            "--no-progress",
            "--expect",
            "BUG 7",
            "--",
            "sh",
            "-c",
            &format!("cp link.txt notes.txt && {check}"),
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    published_file(&area.path("out2.txt"), "link.txt");
}

#[test]
fn tree_options_and_sources_that_are_no_file_are_refused_by_name() {
    let area = notes_area();
    let o = run(&notes_args("out.txt", &["--ignore", "x"]), area.dir.path());
    assert_eq!(o.status.code(), Some(Exit::Usage as i32));
    insta::assert_snapshot!(redact(&stderr(&o), &area), @"error: --ignore selects entries of a directory tree, and SOURCE `notes.txt` is a single file");
    let o = run(&notes_args("out.txt", &["--gitignore"]), area.dir.path());
    assert_eq!(o.status.code(), Some(Exit::Usage as i32));
    assert!(
        stderr(&o).contains("--gitignore selects entries"),
        "{}",
        stderr(&o)
    );
    let o = run(
        &notes_args("out.txt", &["--keep", "other"]),
        area.dir.path(),
    );
    assert_eq!(o.status.code(), Some(Exit::Usage as i32));
    assert!(
        stderr(&o).contains("keep path `other` does not exist"),
        "{}",
        stderr(&o)
    );
    std::os::unix::fs::symlink("nowhere", area.path("dangling")).unwrap();
    std::os::unix::fs::symlink("/dev/null", area.path("device")).unwrap();
    for (source, what) in [
        ("dangling", "symbolic link to nothing"),
        ("device", "symbolic link to a character device"),
    ] {
        let o = run(
            &["reduce", source, "out.txt", "--", "./check.sh"],
            area.dir.path(),
        );
        assert_eq!(o.status.code(), Some(Exit::Usage as i32));
        assert_eq!(
            stderr(&o).trim(),
            format!("error: `{source}` is a {what}; SOURCE must be a directory or a regular file")
        );
    }
    assert!(!area.path("out.txt").exists());
}

#[test]
fn doctor_accepts_a_single_file_and_writes_nothing() {
    let area = notes_area();
    let before = crate::util::files(area.dir.path());
    let o = run(
        &[
            "doctor",
            "notes.txt",
            "--jobs",
            "2",
            "--expect",
            "error: BUG 7 seen",
            "--",
            "./check.sh",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = redact(&stdout(&o), &area);
    let text = regex::Regex::new(r"(sha256-v\d: )[0-9a-f]{64}|in \d+ ms|candidate: [\d.]+ s")
        .unwrap()
        .replace_all(&text, "$1[..]");
    insta::assert_snapshot!(text, @r"
    source: notes.txt
    single file: each run finds it as `notes.txt`, alone in its working directory; published as a file
    tree: 1 files, 0 directories, 0 symlinks, 162 bytes
    tree-sha256-v2: [..]
    tree-content-sha256-v1: [..]
    command: [AREA]/check.sh
    baseline run 1: exit 3 [..]
    baseline run 2: exit 3 [..]
    oracle: expect
    timeout per [..] (derived)
    empty tree: does not reproduce (good)
    passes: prelude, manifests, syntax, declarations, blocks, lines, unwrap, hoist, literals
    level: chosen by the run: tokens, then chars, follow once these reach their fixed point, while their estimated cost fits
    minimiser: cdd
    jobs: 2
    ");
    assert_eq!(crate::util::files(area.dir.path()), before);
}

/// Starts a reduction held at the failpoint `point`, its stderr piped.
fn start_held(area: &Area, args: &[&str], point: &str) -> Child {
    let mut command = Command::new(bin());
    command
        .args(args)
        .current_dir(area.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    clean_env(&mut command);
    command.env(crate::util::FAILPOINT, point);
    command.spawn().unwrap()
}

/// The entries of the area that are staging directories.
fn stagings(area: &Area) -> Vec<String> {
    std::fs::read_dir(area.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(".repromin-staging-"))
        .collect()
}

#[test]
fn a_publication_killed_between_its_renames_is_completed_by_the_next_run() {
    if !crate::util::failpoints() {
        return;
    }
    let area = notes_area();
    let plain = run(&notes_args("plain.txt", &[]), area.dir.path());
    assert!(plain.status.success(), "{}", stderr(&plain));
    let want = std::fs::read(area.path("plain.txt")).unwrap();

    // Killed before anything was published: the next run discards it and publishes.
    let args = notes_args("early.txt", &[]);
    kill_when_paused(
        &mut start_held(&area, &args, "publish:staged"),
        "publish:staged",
    );
    assert_eq!(stagings(&area).len(), 1);
    assert!(!area.path("early.txt").exists());
    let next = run(&args, area.dir.path());
    assert!(next.status.success(), "{}", stderr(&next));
    assert!(
        stderr(&next).contains("had published nothing"),
        "{}",
        stderr(&next)
    );
    published_file(&area.path("early.txt"), "notes.txt");
    assert_eq!(std::fs::read(area.path("early.txt")).unwrap(), want);

    // Killed with the file at OUTPUT and its sidecar still staged: the next run publishes
    // the sidecar the killed run prepared, then refuses to overwrite the result.
    let args = notes_args("out.txt", &[]);
    kill_when_paused(
        &mut start_held(&area, &args, "publish:after-payload"),
        "publish:after-payload",
    );
    assert!(area.path("out.txt").is_file());
    assert!(!area.path("out.txt.repromin").exists());
    let next = run(&args, area.dir.path());
    assert_eq!(
        next.status.code(),
        Some(Exit::OutputExists as i32),
        "{}",
        stderr(&next)
    );
    assert!(
        stderr(&next).contains("completed the publication of `out.txt`"),
        "{}",
        stderr(&next)
    );
    assert!(stagings(&area).is_empty(), "{:?}", stagings(&area));
    published_file(&area.path("out.txt"), "notes.txt");
    assert_eq!(std::fs::read(area.path("out.txt")).unwrap(), want);
}

#[test]
fn a_file_session_killed_while_publishing_resumes_and_binds_its_source() {
    if !crate::util::failpoints() {
        return;
    }
    let area = notes_area();
    let plain = run(&notes_args("plain.txt", &["--no-trace"]), area.dir.path());
    assert!(plain.status.success(), "{}", stderr(&plain));
    let want = std::fs::read(area.path("plain.txt")).unwrap();

    let args = notes_args("out.txt", &["--session", "sess"]);
    kill_when_paused(
        &mut start_held(&area, &args, "publish:after-payload"),
        "publish:after-payload",
    );
    let mut resume = args.clone();
    resume.insert(resume.len() - 2, "--resume");
    let resumed = run(&resume, area.dir.path());
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    published_file(&area.path("out.txt"), "notes.txt");
    assert_eq!(std::fs::read(area.path("out.txt")).unwrap(), want);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(area.path("sess/state.json")).unwrap()).unwrap();
    assert_eq!(state["identity"]["SOURCE"], "a single file");

    // The same name as a directory, or the file with other contents: refused.
    let mut again = resume.clone();
    again[2] = "out2.txt";
    std::fs::rename(area.path("notes.txt"), area.path("notes.bak")).unwrap();
    area.write("notes.txt", &[("notes.txt", &notes())]);
    let refused = run(&again, area.dir.path());
    assert_eq!(refused.status.code(), Some(Exit::Usage as i32));
    assert!(
        stderr(&refused).contains("SOURCE was \"a single file\", now not recorded"),
        "{}",
        stderr(&refused)
    );
    std::fs::remove_dir_all(area.path("notes.txt")).unwrap();
    std::fs::write(area.path("notes.txt"), format!("{}extra\n", notes())).unwrap();
    let refused = run(&again, area.dir.path());
    assert_eq!(refused.status.code(), Some(Exit::Usage as i32));
    assert!(
        stderr(&refused).contains("the source tree changed since the session started"),
        "{}",
        stderr(&refused)
    );
    assert!(!area.path("out2.txt").exists());
}
