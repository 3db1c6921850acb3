//! `repromin reduce` end to end on real trees, real commands and real processes.

use std::path::Path;

use repromin::exit_code::Exit;

use crate::fixtures::{C_COMMAND, PYTHON_ERROR};
use crate::util::{Area, changes, files, processes_with, report, run, sh_in, stderr, stdout};

fn source_fingerprint(path: &Path) -> String {
    let (tree, _) = repromin::tree::scan(path, &repromin::tree::IgnoreRules::default()).unwrap();
    tree.fingerprint().to_string()
}

#[test]
fn python_project_keeps_only_what_the_named_exception_needs() {
    let area = Area::new();
    let src = area.fixture("python-parse-error", "proj");
    let before = source_fingerprint(&src);
    let out = area.path("proj.min");
    let o = run(
        &[
            "reduce", "--level", "lines", "proj", "proj.min", "--jobs", "2", "--", "python3",
            "run.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "proj.min");
    let kept = files(&out);
    let names: Vec<&str> = kept.keys().map(String::as_str).collect();
    assert_eq!(names, ["lib/parser.py", "run.py"], "{kept:#?}");
    // Only the lines the failure needs are left.
    let parser = &kept["lib/parser.py"];
    assert!(!parser.contains("def dump"), "{parser}");
    assert!(!parser.contains("A settings parser"), "{parser}");
    assert!(kept["run.py"].lines().count() <= 2, "{}", kept["run.py"]);
    // The published tree fails the same way.
    let (code, output) = sh_in(&out, "python3 run.py");
    assert_eq!(code, 1);
    assert!(output.contains(PYTHON_ERROR), "{output}");
    // The source is untouched.
    assert_eq!(source_fingerprint(&src), before);
    let r = report(&out);
    assert_eq!(r["ended_by"], "fixed-point");
    assert_eq!(
        r["oracle"]["signature"],
        "lib.parser.ParseError: missing '=' in item N: 'gamma'"
    );
    assert_eq!(r["source"]["files"], 7);
    assert_eq!(r["output"]["files"], 2);
    assert_eq!(r["source"]["tree_sha256_v2"], before.as_str());
}

#[test]
fn accounting_identities_hold_in_every_phase() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let o = run(
        &[
            "reduce", "--level", "lines", "proj", "out", "--", "python3", "run.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report(&area.path("out"));
    let phases = r["phase_statistics"].as_array().unwrap();
    assert_eq!(phases.len(), 10);
    let mut accepted = 0;
    for p in phases {
        let n = |k: &str| p[k].as_u64().unwrap();
        assert_eq!(
            n("attempts"),
            n("no_op") + n("rejected") + n("accepted") + n("superseded") + n("aborted"),
            "{p}"
        );
        assert_eq!(
            n("oracle_sample_uses"),
            n("oracle_samples") + n("cache_hits"),
            "{p}"
        );
        accepted += n("accepted");
    }
    assert_eq!(accepted, r["accepted_mutations"].as_u64().unwrap());
    assert_eq!(r["events"].as_array().unwrap().len() as u64, accepted);
}

#[test]
fn c_tree_with_gcc_oracle_reduces_and_still_builds_and_fails() {
    let area = Area::new();
    area.fixture("c-checksum", "c");
    let o = run(
        &[
            "reduce", "--level", "lines", "c", "c.min", "--", "sh", "-c", C_COMMAND,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = area.path("c.min");
    let kept = files(&out);
    // `main.c` holds the check that fails; the sum it checks may be hoisted into it.
    assert!(kept.contains_key("src/main.c"), "{kept:#?}");
    assert!(!kept.contains_key("src/fmt.c"), "{kept:#?}");
    assert!(!kept.contains_key("README"));
    let (code, output) = sh_in(&out, &format!("TMPDIR=$(mktemp -d); {C_COMMAND}"));
    assert_eq!(code, 2, "{output}");
    // Digits are normalised, so any wrong total is the same failure.
    assert!(output.contains("fatal: checksum mismatch: got"), "{output}");
}

#[test]
fn deleting_a_closing_brace_is_a_different_failure_and_is_rejected() {
    let area = Area::new();
    area.fixture("c-checksum", "c");
    // Without the syntax guard the line pass really offers the oracle the brace deletions,
    // which compile errors (a different failure) must turn down.
    let o = run(
        &[
            "reduce",
            "c",
            "c.min",
            "--passes",
            "lines",
            "--no-syntax-guard",
            "--",
            "sh",
            "-c",
            C_COMMAND,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("c.min"));
    for (path, text) in &kept {
        assert_eq!(
            text.matches('{').count(),
            text.matches('}').count(),
            "{path} lost a brace:\n{text}"
        );
    }
    // The line pass did try brace deletions (no cut was skipped as unparsable) and the
    // oracle turned them down.
    let r = report(&area.path("c.min"));
    assert_eq!(r["phase_statistics"][0]["phase"], "lines");
    assert_eq!(
        r["phase_statistics"][0]["unparsable"], 0,
        "the guard skipped a cut"
    );
    assert!(r["phase_statistics"][0]["rejected"].as_u64().unwrap() > 0);
    assert!(kept["src/main.c"].contains("int main"));
}

#[test]
fn jobs_one_and_two_publish_byte_identical_trees() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    for (jobs, name) in [("1", "one"), ("2", "two")] {
        let o = run(
            &[
                "reduce", "--level", "lines", "proj", name, "--jobs", jobs, "--", "python3",
                "run.py",
            ],
            area.dir.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(files(&area.path("one")), files(&area.path("two")));
    assert_eq!(
        report(&area.path("one"))["output"]["tree_content_sha256_v1"],
        report(&area.path("two"))["output"]["tree_content_sha256_v1"]
    );
}

#[test]
fn nothing_a_probe_creates_leaks_into_the_next_and_no_process_survives() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let log = area.path("leaks.log");
    let script = format!(
        "if [ -e made-by-probe ] || [ -e build ] || [ -n \"$(ls -A \"$TMPDIR\")\" ] || grep -q PROBE-MARK run.py; \
         then echo leak >> {log}; fi; \
         touch made-by-probe \"$TMPDIR/scratch\"; mkdir -p build; echo obj > build/out.o; \
         echo '# PROBE-MARK' >> run.py; sleep 41.25 & (sleep 41.5 &); python3 run.py",
        log = log.display()
    );
    let o = run(
        &[
            "reduce", "--level", "lines", "proj", "out", "--", "sh", "-c", &script,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !log.exists(),
        "a probe saw another probe's files: {}",
        std::fs::read_to_string(&log).unwrap()
    );
    let kept = files(&area.path("out"));
    assert!(
        !kept.contains_key("made-by-probe") && !kept.contains_key("build/out.o"),
        "{kept:#?}"
    );
    assert!(
        processes_with("sleep 41.25").is_empty(),
        "{:?}",
        processes_with("sleep 41.25")
    );
    assert!(
        processes_with("sleep 41.5").is_empty(),
        "{:?}",
        processes_with("sleep 41.5")
    );
}

#[test]
fn strays_in_nested_directories_and_in_place_rewrites_never_reach_the_next_probe() {
    let area = Area::new();
    let lines: String = (0..20).map(|i| format!("filler {i}\n")).collect();
    area.write(
        "proj",
        &[
            ("src/main.txt", &format!("needle\n{lines}")),
            ("lib/deep/data.txt", "aaaa\n"),
            ("lib/deep/more.txt", &lines),
            ("lib/other.txt", &lines),
        ],
    );
    let log = area.path("leaks.log");
    // Each probe looks for what an earlier one left, then rewrites a file in place with
    // bytes of the same length and creates entries inside existing directories.
    let script = format!(
        "if [ -e lib/deep/stray ] || [ -e lib/deep/newdir ] || [ -e lib/stray ] \
           || grep -q bbbb lib/deep/data.txt 2>/dev/null; then echo leak >> {log}; fi; \
         if [ \"$(cat lib/deep/data.txt 2>/dev/null)\" = aaaa ]; then printf 'bbbb\\n' 1<> lib/deep/data.txt; fi; \
         mkdir -p lib/deep/newdir && touch lib/deep/stray lib/deep/newdir/f lib/stray; \
         grep -q needle src/main.txt",
        log = log.display()
    );
    let o = run(
        &[
            "reduce",
            "--level",
            "lines",
            "proj",
            "out",
            "--exit-code",
            "0",
            "--",
            "sh",
            "-c",
            &script,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !log.exists(),
        "a probe saw another probe's changes: {}",
        std::fs::read_to_string(&log).unwrap()
    );
    let kept = files(&area.path("out"));
    assert_eq!(
        kept.keys().map(String::as_str).collect::<Vec<_>>(),
        ["src/main.txt"],
        "{kept:#?}"
    );
}

#[test]
fn output_over_64_mib_is_a_resource_failure_that_never_passes() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    area.write("proj", &[("guard.txt", "keep me\n")]);
    let script =
        "if [ ! -e guard.txt ]; then head -c 70000000 /dev/zero | tr '\\0' x; fi; python3 run.py";
    let o = run(
        &[
            "reduce", "proj", "out", "--passes", "files", "--", "sh", "-c", script,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(files(&area.path("out")).contains_key("guard.txt"));
}

#[test]
fn a_hanging_candidate_times_out_and_is_rejected() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    area.write("proj", &[("guard.txt", "keep me\n")]);
    let script = "if [ ! -e guard.txt ]; then sleep 299.25; fi; python3 run.py";
    let start = std::time::Instant::now();
    let o = run(
        &[
            "reduce",
            "proj",
            "out",
            "--timeout",
            "2s",
            "--passes",
            "files",
            "--",
            "sh",
            "-c",
            script,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(files(&area.path("out")).contains_key("guard.txt"));
    assert!(start.elapsed() < std::time::Duration::from_secs(120));
    // A killed process can take a moment to leave the process table on a loaded machine;
    // a leaked one would stay for five minutes. The odd duration tells it from any other
    // `sleep` on the machine.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !processes_with("sleep 299.25").is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        processes_with("sleep 299.25").is_empty(),
        "{:?}",
        processes_with("sleep 299.25")
    );
}

#[test]
fn max_attempts_ends_on_a_state_that_reproduces() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let o = run(
        &[
            "reduce",
            "--level",
            "lines",
            "proj",
            "out",
            "--max-attempts",
            "5",
            "--",
            "python3",
            "run.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report(&area.path("out"));
    assert_eq!(r["ended_by"], "max-attempts");
    assert_eq!(r["execution"]["budget_exhausted"], true);
    assert!(r["attempts"].as_u64().unwrap() <= 5);
    let (_, output) = sh_in(&area.path("out"), "python3 run.py");
    assert!(output.contains(PYTHON_ERROR), "{output}");
}

#[test]
fn ctrl_c_publishes_the_last_accepted_state() {
    // Under load the baseline can take longer than the first wait; an interrupt during the
    // baseline publishes nothing (exit 130), so try again with a longer wait.
    for wait in [4, 12, 30] {
        let area = Area::new();
        area.fixture("python-parse-error", "proj");
        let mut child = std::process::Command::new(crate::util::bin())
            .args([
                "reduce",
                "--level",
                "lines",
                "proj",
                "out",
                "--jobs",
                "1",
                "--",
                "sh",
                "-c",
                "sleep 0.2; python3 run.py",
            ])
            .current_dir(area.dir.path())
            .env_remove("CI")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_secs(wait));
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let status = child.wait().unwrap();
        if status.code() == Some(Exit::Interrupted as i32) {
            assert!(
                !area.path("out").exists(),
                "nothing is published before the baseline"
            );
            continue;
        }
        assert!(status.success(), "{status:?}");
        let r = report(&area.path("out"));
        assert!(
            r["ended_by"] == "interrupted" || r["ended_by"] == "fixed-point",
            "{}",
            r["ended_by"]
        );
        let (_, output) = sh_in(&area.path("out"), "python3 run.py");
        assert!(output.contains(PYTHON_ERROR), "{output}");
        assert!(processes_with("sleep 0.2").is_empty());
        if r["ended_by"] == "interrupted" {
            return;
        }
    }
    panic!("the reduction was never interrupted in its passes");
}

#[test]
fn keep_and_ignore_rules_shape_the_tree() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    area.write(
        "proj",
        &[
            ("node_modules/x/index.js", "module.exports = 1;\n"),
            ("notes.log", "log\n"),
            (".gitignore", "*.log\n"),
        ],
    );
    let o = run(
        &[
            "reduce",
            "--level",
            "lines",
            "proj",
            "out",
            "--keep",
            "docs/notes.md",
            "--gitignore",
            "--ignore-path",
            "data",
            "--",
            "python3",
            "run.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("out"));
    assert!(kept.contains_key("docs/notes.md"), "{kept:#?}");
    assert!(!kept.contains_key("node_modules/x/index.js"));
    assert!(!kept.contains_key("notes.log"));
    assert!(!kept.contains_key("data/sample.txt"));
    let r = report(&area.path("out"));
    assert_eq!(r["execution"]["keep_paths"][0], "docs/notes.md");
    assert_eq!(r["execution"]["ignored_paths"][0], "data");
    assert!(r["execution"]["gitignore_sha256"].is_string());
}

#[test]
fn env_values_are_used_but_never_written() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let o = run(
        &[
            "reduce",
            "--level",
            "lines",
            "proj",
            "out",
            "--env",
            "SECRET_TOKEN=hunter2-value",
            "--",
            "sh",
            "-c",
            "test \"${#SECRET_TOKEN}\" = 13 && python3 run.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let sidecar = area.path("out.repromin");
    for name in ["report.json", "REPROMIN.md"] {
        let text = std::fs::read_to_string(sidecar.join(name)).unwrap();
        assert!(!text.contains("hunter2-value"), "{name} holds the value");
    }
    let r = report(&area.path("out"));
    assert_eq!(r["execution"]["env_names"][0], "SECRET_TOKEN");
    assert_eq!(r["execution"]["env_sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn exit_code_zero_supports_interestingness_scripts() {
    let area = Area::new();
    area.write(
        "t",
        &[
            (
                "a.c",
                "int keep_me(void);\nint other(void);\nint third(void);\n",
            ),
            ("b.c", "int unrelated(void);\n"),
        ],
    );
    let o = run(
        &[
            "reduce",
            "t",
            "t.min",
            "--exit-code",
            "0",
            "--",
            "sh",
            "-c",
            "grep -q keep_me a.c",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("t.min"));
    assert_eq!(kept.len(), 1);
    // A tree this small goes on to tokens and characters at the defaults: the word is all
    // the script needs.
    assert_eq!(kept["a.c"], "keep_me");
}

#[test]
fn process_failure_keeps_the_same_signal() {
    let area = Area::new();
    area.write(
        "t",
        &[
            ("crash.flag", "1\n"),
            ("abort.flag", "1\n"),
            ("noise.txt", "x\n"),
        ],
    );
    // SIGSEGV while crash.flag exists; otherwise SIGABRT while abort.flag exists.
    let script = "if [ -e crash.flag ]; then kill -SEGV $$; elif [ -e abort.flag ]; then kill -ABRT $$; fi; exit 0";
    let o = run(
        &[
            "reduce",
            "--level",
            "lines",
            "t",
            "t.min",
            "--process-failure",
            "--",
            "sh",
            "-c",
            script,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("t.min"));
    assert_eq!(kept.keys().collect::<Vec<_>>(), ["crash.flag"]);
    let r = report(&area.path("t.min"));
    assert_eq!(r["oracle"]["termination"]["kind"], "signaled");
    assert_eq!(r["oracle"]["termination"]["value"], 11);
}

#[test]
fn an_output_named_tmp_does_not_collide_with_the_runs_temporary_directory() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let o = run(
        &[
            "reduce", "--level", "lines", "proj", "tmp", "--", "python3", "run.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(files(&area.path("tmp")).contains_key("run.py"));
}

/// A module of 24 functions, one of which raises; `main.py` calls three of them.
fn many_functions() -> String {
    let mut text = String::from("import sys\n\n");
    for i in 0..24 {
        text.push_str(&format!(
            "def f{i}(x):\n    if x > {i}:\n        y = x * {i}\n        return y + 1\n    return {i}\n\n"
        ));
    }
    text.replace(
        "def f17(x):\n    if x > 17:",
        "def f17(x):\n    if x > 17:\n        raise ValueError('too big')",
    )
}

#[test]
fn blocks_delete_whole_functions_in_few_probes() {
    let area = Area::new();
    let module = many_functions();
    area.write(
        "proj",
        &[
            ("lib.py", &module),
            (
                "main.py",
                "import lib\nlib.f3(0)\nlib.f11(0)\nlib.f17(99)\n",
            ),
        ],
    );
    let attempts = |passes: &str, out: &str| {
        let o = run(
            &[
                "reduce", "proj", out, "--passes", passes, "--", "python3", "main.py",
            ],
            area.dir.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let kept = files(&area.path(out));
        let r = report(&area.path(out));
        (kept, r["attempts"].as_u64().unwrap())
    };
    let (kept, with_blocks) = attempts("blocks", "by-blocks");
    let lib = &kept["lib.py"];
    // Only the called functions are left, whole, with their headers.
    for f in ["def f3(x):", "def f11(x):", "def f17(x):"] {
        assert!(lib.contains(f), "{lib}");
    }
    assert!(lib.contains("raise ValueError('too big')"), "{lib}");
    assert_eq!(lib.matches("def ").count(), 3, "{lib}");
    assert!(!lib.contains("import sys"), "{lib}");
    let (_, with_lines) = attempts("lines", "by-lines");
    assert!(
        with_blocks < with_lines,
        "blocks took {with_blocks} attempts, lines {with_lines}"
    );
}

#[test]
fn manifests_lose_entries_through_their_parser_and_stay_valid() {
    let area = Area::new();
    let pyproject = "[project]\nname = \"demo\"\nversion = \"1.0\"\ndependencies = [\n    \"requests>=2\",\n    \"click\",\n    \"rich\",\n]\n\n[project.optional-dependencies]\ntest = [\"pytest\"]\n\n[tool.demo]\nflag = true\nother = 3\n\n[tool.black]\nline-length = 100\n";
    let script = "import tomllib\nd = tomllib.load(open('pyproject.toml', 'rb'))\nif d['tool']['demo']['flag'] and 'click' in d['project']['dependencies']:\n    raise SystemExit('boom: ' + d['project']['name'])\n";
    area.write(
        "proj",
        &[("pyproject.toml", pyproject), ("main.py", script)],
    );
    reduce_manifests(&area);
    let kept = files(&area.path("out"));
    let toml = &kept["pyproject.toml"];
    assert_eq!(
        toml,
        "[project]\nname = \"demo\"\ndependencies = [\n    \"click\",\n]\n\n[tool.demo]\nflag = true\n\n",
        "{toml}"
    );
    let r = report(&area.path("out"));
    assert_eq!(r["phase_statistics"][0]["phase"], "manifests");
    // Still valid TOML, and the same failure.
    still_fails(&area);
}

#[test]
fn a_package_json_loses_its_unneeded_members_in_chunks_and_stays_valid() {
    let area = Area::new();
    // Sixteen members besides name and version; the failure needs only `exports`, in the
    // middle, so the members after it go too, and with them the comma it had.
    let mut members: Vec<String> = (1..=8).map(|i| format!("  \"before{i}\": {i}")).collect();
    members.push("  \"exports\": \"./x.js\"".to_string());
    members.push(
        "  \"scripts\": {\n    \"test\": \"vitest\",\n    \"lint\": \"eslint\"\n  }".to_string(),
    );
    members.extend((1..=6).map(|i| format!("  \"after{i}\": [{i}, {i}]")));
    let package = format!(
        "{{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\",\n{}\n}}\n",
        members.join(",\n")
    );
    let script = "import json\nd = json.load(open('package.json'))\nif d.get('exports') == './x.js':\n    raise SystemExit('boom: ' + d['name'])\n";
    area.write("proj", &[("package.json", &package), ("main.py", script)]);
    reduce_manifests(&area);
    let kept = files(&area.path("out"));
    assert_eq!(
        kept["package.json"],
        "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\",\n  \"exports\": \"./x.js\"\n}\n",
    );
    // Chunks, not one command per member: fewer commands than the 16 members.
    let r = report(&area.path("out"));
    let attempts = r["attempts"].as_u64().unwrap();
    assert!(attempts < 16, "{attempts} attempts");
    still_fails(&area);
}

/// Reduces `proj` to `out` with the manifests pass alone, against `python3 main.py`
/// failing with `boom: demo`.
fn reduce_manifests(area: &Area) {
    let o = run(
        &[
            "reduce",
            "proj",
            "out",
            "--passes",
            "manifests",
            "--expect",
            "boom: demo",
            "--",
            "python3",
            "main.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The reduced tree `out` still parses and fails the same way.
fn still_fails(area: &Area) {
    let (code, output) = sh_in(&area.path("out"), "python3 main.py");
    assert_eq!(code, 1);
    assert!(output.contains("boom: demo"), "{output}");
}

#[test]
fn a_file_goes_together_with_the_lines_that_reference_it() {
    let area = Area::new();
    area.write(
        "proj",
        &[
            ("src/main.c", "#include <stdio.h>\n#include \"util.h\"\n#include \"extra/more.h\"\nint main(void) {\n    fprintf(stderr, \"fatal: broken\\n\");\n    return 3;\n}\n"),
            ("src/util.h", "int util(int x);\n"),
            ("src/extra/more.h", "int more(void);\n"),
            (
                "app/main.py",
                "import helpers.text\nfrom helpers import numbers\nraise SystemExit('fatal: py broken')\n",
            ),
            ("app/helpers/__init__.py", ""),
            ("app/helpers/text.py", "def upper(s):\n    return s.upper()\n"),
            ("app/helpers/numbers.py", "ONE = 1\n"),
        ],
    );
    // A build failure is another failure (exit 9), so the C file must keep compiling.
    let script =
        "gcc -o \"$TMPDIR/p\" src/main.c || exit 9; \"$TMPDIR/p\"; cd app && python3 main.py";
    let o = run(
        &[
            "reduce",
            "proj",
            "out",
            "--passes",
            "files",
            "--expect",
            "(?s)fatal: broken.*fatal: py broken",
            "--",
            "sh",
            "-c",
            script,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("out"));
    let names: Vec<&str> = kept.keys().map(String::as_str).collect();
    // Only deletions that took their `#include` and `import` lines with them could succeed.
    assert_eq!(names, ["app/main.py", "src/main.c"], "{kept:#?}");
    assert!(
        !kept["src/main.c"].contains("util.h"),
        "{}",
        kept["src/main.c"]
    );
    assert!(kept["src/main.c"].contains("#include <stdio.h>"));
    assert_eq!(
        kept["app/main.py"],
        "raise SystemExit('fatal: py broken')\n"
    );
    let changes = changes(&report(&area.path("out")));
    assert!(
        changes.iter().any(|c| c.contains("that reference")),
        "{changes:#?}"
    );
}

#[test]
fn a_module_goes_with_the_names_and_defaults_that_bind_it() {
    let area = Area::new();
    area.write(
        "proj",
        &[
            (
                "app/main.py",
                "from lib import cached, keys\n\n@cached(key=keys.typed)\ndef f():\n    return keys.typed()\n\nraise SystemExit('fatal: broken')\n",
            ),
            (
                "app/lib/__init__.py",
                "from . import keys\n\ndef cached(key=keys.hashkey):\n    return lambda fn: fn\n",
            ),
            ("app/lib/keys.py", "def hashkey():\n    pass\n\ndef typed():\n    pass\n"),
        ],
    );
    let o = run(
        &[
            "reduce",
            "proj",
            "out",
            "--passes",
            "files",
            "--expect",
            "fatal: broken",
            "--",
            "sh",
            "-c",
            "cd app && python3 main.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("out"));
    let names: Vec<&str> = kept.keys().map(String::as_str).collect();
    // `keys.py` can only go with the name taken out of the import, the decorator's argument
    // and the default emptied: each of them alone leaves a NameError or an ImportError.
    assert_eq!(names, ["app/lib/__init__.py", "app/main.py"], "{kept:#?}");
    assert_eq!(
        kept["app/main.py"],
        "from lib import cached\n\n@cached(key=None)\ndef f():\n    return keys.typed()\n\nraise SystemExit('fatal: broken')\n"
    );
    assert_eq!(
        kept["app/lib/__init__.py"],
        "\ndef cached(key=None):\n    return lambda fn: fn\n"
    );
    let changes = changes(&report(&area.path("out")));
    assert!(
        changes.iter().any(|c| c
            == "delete app/lib/keys.py with 2 lines that reference it and 2 values that name what they imported"),
        "{changes:#?}"
    );
}

#[test]
fn a_parameter_only_its_callers_need_goes_with_their_arguments() {
    let area = Area::new();
    area.write(
        "proj",
        &[
            (
                "lib.py",
                "def check(value, mode, verbose=False):\n    raise SystemExit('fatal: ' + value)\n",
            ),
            (
                "main.py",
                "from lib import check\n\ncheck('broken', 'fast', verbose=True)\n",
            ),
        ],
    );
    let o = run(
        &[
            "reduce",
            "proj",
            "out",
            "--passes",
            "declarations",
            "--expect",
            "fatal: broken",
            "--",
            "python3",
            "main.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("out"));
    // Neither the parameter nor the argument can go alone: a TypeError either way.
    assert_eq!(
        kept["lib.py"],
        "def check(value):\n    raise SystemExit('fatal: ' + value)\n"
    );
    assert_eq!(
        kept["main.py"],
        "from lib import check\n\ncheck('broken')\n"
    );
    let changes = changes(&report(&area.path("out")));
    assert!(
        changes
            .iter()
            .any(|c| c == "parameter mode of check in lib.py with 1 argument"),
        "{changes:#?}"
    );
}

#[test]
fn syntax_nodes_go_with_their_separators() {
    let area = Area::new();
    area.write(
        "proj",
        &[(
            "main.py",
            "import os, sys\nconfig = {'a': 1, 'b': [2, 3], 'key': 'boom', 'c': 3}\nprint(len(config), os.sep)\nraise ValueError(config['key'])\n",
        )],
    );
    let o = run(
        &[
            "reduce", "proj", "out", "--passes", "syntax", "--", "python3", "main.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("out"));
    assert_eq!(
        kept["main.py"], "config = {'key': 'boom'}\nraise ValueError(config['key'])\n",
        "{}",
        kept["main.py"]
    );
}

#[test]
fn hoist_replaces_a_one_line_expression_by_the_child_that_fails() {
    let area = Area::new();
    area.write(
        "proj",
        &[("main.py", "print(len(str(missing_name + 1)))\n")],
    );
    // Each call and the sum are replaced by the one child that still raises the NameError:
    // with the tokens pass on, a line is searched node by node, not only in groups.
    let o = run(
        &[
            "reduce",
            "proj",
            "out",
            "--passes",
            "hoist,tokens",
            "--",
            "python3",
            "main.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("out"));
    assert_eq!(kept["main.py"], "missing_name\n", "{}", kept["main.py"]);
}

/// Reduces `proj` into `out` with the options `options` and the oracle `oracle` (exit 0 is
/// interesting), asserts the reduction published, and returns the result's `file`.
fn reduce_with(area: &Area, out: &str, options: &[&str], oracle: &[&str], file: &str) -> String {
    let mut args = vec!["reduce", "proj", out];
    args.extend_from_slice(options);
    args.extend_from_slice(&["--exit-code", "0", "--"]);
    args.extend_from_slice(oracle);
    let o = run(&args, area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    files(&area.path(out))[file].clone()
}

#[test]
fn the_syntax_guard_keeps_files_parsing_unless_turned_off() {
    let area = Area::new();
    area.write(
        "proj",
        &[(
            "mark.c",
            "int f(void) {\n    int x = 1;\n    return MARK;\n}\n",
        )],
    );
    // The oracle only looks for a word, so it would take any text that holds it.
    let reduce = |out: &str, extra: &[&str]| {
        let options = [&["--passes", "lines"][..], extra].concat();
        let oracle = ["grep", "-q", "MARK", "mark.c"];
        let kept = reduce_with(&area, out, &options, &oracle, "mark.c");
        let lines = report(&area.path(out))["phase_statistics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["phase"] == "lines")
            .cloned()
            .unwrap();
        (kept, lines["unparsable"].as_u64().unwrap())
    };
    let (guarded, skipped) = reduce("guarded", &[]);
    // The smallest text that still parses: the function stays around its statement.
    assert_eq!(guarded, "int f(void) {\n    return MARK;\n}\n");
    assert!(skipped > 0, "no cut was skipped");
    let (free, skipped) = reduce("free", &["--no-syntax-guard"]);
    assert_eq!(free, "    return MARK;\n");
    assert_eq!(skipped, 0);
}

/// A C file whose failure needs one name of one line: `gcc -c` must accept it and the name
/// must stay.
const NEXT_HI: &str = "typedef int Int32;\nstatic Int32 helper(Int32 a) { return a + 1; }\nInt32 nextHi[3] = {1, 2, 3};\n";
const NEXT_HI_ORACLE: &str = "gcc -c a.c -o \"$TMPDIR/a.o\" && grep -q '\\<nextHi\\>' a.c";

fn reduce_next_hi(area: &Area, name: &str, extra: &[&str]) -> String {
    let mut args = vec!["reduce", "src", name, "--exit-code", "0"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "sh", "-c", NEXT_HI_ORACLE]);
    let o = run(&args, area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    files(&area.path(name))["a.c"].clone()
}

#[test]
fn tokens_and_chars_cut_inside_a_line_and_do_not_depend_on_jobs() {
    let area = Area::new();
    area.write("src", &[("a.c", NEXT_HI)]);
    let lines = reduce_next_hi(&area, "lines", &["--level", "lines"]);
    let tokens = reduce_next_hi(&area, "tokens", &["--level", "tokens"]);
    let one = reduce_next_hi(&area, "one", &["--level", "chars", "--jobs", "1"]);
    let two = reduce_next_hi(&area, "two", &["--level", "chars", "--jobs", "2"]);
    insta::assert_debug_snapshot!((&lines, &tokens, &one), @r#"
    (
        "typedef int Int32;\nInt32 nextHi[3] = {};\n",
        "nextHi;\n",
        "nextHi;",
    )
    "#);
    assert_eq!(one, two);
    assert_eq!(files(&area.path("one")), files(&area.path("two")));
    let (r1, r2) = (report(&area.path("one")), report(&area.path("two")));
    assert_eq!(
        r1["output"]["tree_content_sha256_v1"],
        r2["output"]["tree_content_sha256_v1"]
    );
    assert_eq!(r1["events"], r2["events"]);
    let changes: Vec<String> = r1["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}: {}",
                e["phase"].as_str().unwrap(),
                e["change"].as_str().unwrap()
            )
        })
        .collect();
    insta::assert_debug_snapshot!(changes, @r#"
    [
        "syntax: body at line 2 of a.c",
        "syntax: node at line 2 of a.c",
        "syntax: 3 nodes at lines 2-2 of a.c",
        "rename: rename Int32 to a",
        "tokens: 1 token at line 1 of a.c",
        "tokens: union of 2 changes",
        "tokens: 1 token at line 1 of a.c",
        "tokens: 3 tokens at line 2 of a.c",
        "tokens: union of 2 changes",
        "prelude: strip blank and comment lines of a.c",
        "chars: 1 character at line 1 of a.c",
    ]
    "#);
    let passes: Vec<&str> = r1["execution"]["passes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    assert_eq!(passes[passes.len() - 3..], ["tokens", "chars", "rewrite"]);
}

#[test]
fn level_and_passes_cannot_be_combined() {
    let area = Area::new();
    area.write("src", &[("a.c", NEXT_HI)]);
    let o = run(
        &[
            "reduce", "src", "out", "--level", "chars", "--passes", "lines", "--", "true",
        ],
        area.dir.path(),
    );
    assert_eq!(o.status.code(), Some(Exit::Usage as i32), "{}", stderr(&o));
    assert!(stderr(&o).contains("--level"), "{}", stderr(&o));
}

#[test]
fn unwrap_leaves_a_body_without_what_wraps_it() {
    let area = Area::new();
    area.write(
        "proj",
        &[(
            "conf.txt",
            "section a {\n    key = 1\n    nested {\n        needle\n    }\n}\n",
        )],
    );
    // The oracle takes `needle` at any indentation.
    let reduce = |out: &str, passes: &str| {
        let oracle = ["grep", "-q", "^ *needle$", "conf.txt"];
        reduce_with(&area, out, &["--passes", passes], &oracle, "conf.txt")
    };
    // Deleting lines cannot dedent; unwrapping takes both braces and the indentation.
    assert_eq!(reduce("by-lines", "lines"), "        needle\n");
    assert_eq!(reduce("unwrapped", "unwrap"), "key = 1\nneedle\n");
    let changes = changes(&report(&area.path("unwrapped")));
    assert!(
        changes.iter().any(|c| c.starts_with("unwrap at")),
        "{changes:#?}"
    );
}

/// Reduces `file` of `proj` in `area` with `oracle` (a shell script) twice: without the
/// declarations pass, then with it. Returns both ends and whether the second committed
/// the change labelled `change`.
fn without_and_with_declarations(
    area: &Area,
    file: &str,
    oracle: &str,
    change: &str,
) -> (String, String, bool) {
    let reduce = |out: &str, passes: &str| {
        reduce_with(
            area,
            out,
            &["--passes", passes],
            &["sh", "-c", oracle],
            file,
        )
    };
    let alone = reduce("alone", "syntax,lines");
    let coupled = reduce("coupled", "syntax,declarations,lines");
    let changes = changes(&report(&area.path("coupled")));
    let committed = changes.iter().any(|c| c == change);
    (alone, coupled, committed)
}

#[test]
fn a_declaration_goes_together_with_the_uses_of_its_name() {
    let area = Area::new();
    // With -Werror, the helper cannot go while its call stays (implicit declaration) and
    // the call cannot go first (an unused static function): only both at once.
    area.write(
        "proj",
        &[(
            "a.c",
            "static int helper(int x) { return x + 1; }\nint MARK;\nvoid api(int v) {\n    helper(v);\n    MARK = v;\n}\n",
        )],
    );
    // No chunk of lines or of sibling nodes holds both without `int MARK;` or `MARK = v;`.
    let oracle = "gcc -Wall -Werror -c a.c -o \"$TMPDIR/a.o\" && grep -q 'MARK = v' a.c";
    let (alone, coupled, committed) =
        without_and_with_declarations(&area, "a.c", oracle, "declaration helper of a.c with 1 use");
    assert!(alone.contains("helper"), "{alone}");
    assert_eq!(coupled, "int MARK;\nvoid api(int v) {\n    MARK = v;\n}\n");
    assert!(committed);
}

#[test]
fn an_enum_variant_goes_together_with_the_match_arm_that_names_it() {
    let area = Area::new();
    // The variant cannot go while its arm names it, nor the arm while the variant exists
    // (the match is no longer exhaustive): only both at once.
    area.write(
        "proj",
        &[(
            "main.rs",
            "enum Shape {\n    Circle,\n    Square,\n}\nfn describe(s: Shape) -> &'static str {\n    match s {\n        Shape::Circle => \"round\",\n        Shape::Square => \"square\",\n    }\n}\nfn main() {\n    println!(\"{}\", describe(Shape::Circle));\n}\n",
        )],
    );
    let oracle = "rustc --edition 2021 -o \"$TMPDIR/m\" main.rs && \"$TMPDIR/m\" | grep -qx round";
    let (alone, coupled, committed) = without_and_with_declarations(
        &area,
        "main.rs",
        oracle,
        "declaration Square of main.rs with 1 use",
    );
    assert!(alone.contains("Square"), "{alone}");
    assert!(!coupled.contains("Square"), "{coupled}");
    assert!(coupled.contains("Shape::Circle => \"round\""), "{coupled}");
    assert!(committed);
}

#[test]
fn cdd_and_halving_reach_the_same_1_minimal_result_and_cdd_probes_less_on_sparse_input() {
    let area = Area::new();
    let text: String = (0..120).map(|i| format!("line {i}\n")).collect();
    area.write("proj", &[("a.txt", &text)]);
    // Three lines of 120 are needed.
    let oracle = "grep -qx 'line 7' a.txt && grep -qx 'line 64' a.txt && grep -qx 'line 111' a.txt";
    let reduce = |out: &str, minimiser: &str| {
        let options = ["--passes", "lines", "--minimiser", minimiser];
        (
            reduce_with(&area, out, &options, &["sh", "-c", oracle], "a.txt"),
            report(&area.path(out))["attempts"].as_u64().unwrap(),
        )
    };
    let (cdd, cdd_attempts) = reduce("cdd", "cdd");
    let (halving, halving_attempts) = reduce("halving", "halving");
    assert_eq!(cdd, "line 7\nline 64\nline 111\n");
    assert_eq!(halving, cdd);
    assert!(
        cdd_attempts < halving_attempts,
        "cdd {cdd_attempts} attempts, halving {halving_attempts}"
    );
}

#[test]
fn replacements_rename_identifiers_across_files_and_empty_literals_with_each_listed() {
    let area = Area::new();
    area.write(
        "proj",
        &[
            (
                "shapes.py",
                "GREETING = 'a long greeting nobody reads'\n\n\ndef rectangle_area(width_of_side, height_of_side):\n    return width_of_side * height_of_side\n",
            ),
            (
                "main.py",
                "from shapes import rectangle_area, GREETING\n\nprint(rectangle_area(6, 7), GREETING)\n",
            ),
        ],
    );
    let o = run(
        &[
            "reduce",
            "proj",
            "out",
            "--level",
            "tokens",
            "--exit-code",
            "0",
            "--",
            "sh",
            "-c",
            "python3 main.py | grep -q '^42 '",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = area.path("out");
    let kept = files(&out);
    let all: String = kept.values().cloned().collect();
    // The long names are gone from both files at once; the string is empty.
    for long in [
        "rectangle_area",
        "width_of_side",
        "height_of_side",
        "GREETING",
        "nobody",
    ] {
        assert!(!all.contains(long), "{long} left: {kept:#?}");
    }
    assert!(
        kept["shapes.py"].contains("''") || kept["shapes.py"].contains("\"\""),
        "{kept:#?}"
    );
    let (code, output) = sh_in(&out, "python3 main.py");
    assert_eq!(code, 0);
    assert!(output.starts_with("42 "), "{output}");
    // Every replacement is listed with the hash of what it replaced, and the listed edits
    // rebuild the published tree from the source.
    let r = report(&out);
    let edits: Vec<repromin::reduce::edits::Edit> =
        serde_json::from_value(r["edits"].clone()).unwrap();
    assert!(
        edits
            .iter()
            .any(|e| matches!(e, repromin::reduce::edits::Edit::Replace { .. })),
        "{edits:?}"
    );
    let (source, _) =
        repromin::tree::scan(&area.path("proj"), &repromin::tree::IgnoreRules::default()).unwrap();
    let rebuilt = repromin::gate::certificate::apply_edits(&source, &edits).unwrap();
    assert_eq!(
        rebuilt.content_fingerprint().to_string(),
        r["output"]["tree_content_sha256_v1"].as_str().unwrap()
    );
    let phases = r["phase_statistics"].as_array().unwrap();
    let accepted = |name: &str| {
        phases
            .iter()
            .find(|p| p["phase"] == name)
            .map_or(0, |p| p["accepted"].as_u64().unwrap())
    };
    assert!(
        accepted("rename") > 0 && accepted("literals") > 0,
        "{phases:#?}"
    );
}
