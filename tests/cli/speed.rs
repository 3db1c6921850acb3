//! The levers of speed on real trees: the file-access tracer, the settle state, the
//! stubs of the syntax pass and runs through an overlay. Each may only propose candidates or skip searches; none may make a probe answer for a tree it did not
//! run on, and the result must be what a run without them reaches.

use crate::util::{Area, files, report, require_tool, run, run_env, stderr, tool_runs};

/// Whether `strace` can trace here; without it the tracer tests skip, except under
/// `CI`, where `.ci/run` installs it.
pub(crate) fn strace_works() -> bool {
    let traced = std::process::Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "--", "true"])
        .output();
    let available = match traced {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "`strace -f true` exited with {}: {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("`strace` cannot be started: {e}")),
    };
    require_tool("strace", available)
}

/// A tree where the failure reads `a.txt` and nothing else, with much it never touches.
fn untouched_tree(area: &Area) {
    let mut entries: Vec<(String, String)> = vec![
        (
            "run.sh".into(),
            "grep -q needle a.txt && { echo 'Error: needle found' >&2; exit 1; }\nexit 0\n".into(),
        ),
        ("a.txt".into(), "hay\nneedle\nhay\n".into()),
    ];
    for i in 0..12 {
        entries.push((format!("docs/page{i}.md"), format!("page {i}\n")));
        entries.push((format!("src/mod{i}.txt"), format!("module {i}\n")));
    }
    let entries: Vec<(&str, &str)> = entries
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    area.write("proj", &entries);
}

#[test]
fn the_tracer_deletes_everything_the_run_never_touched_in_its_first_probe() {
    if !strace_works() {
        return;
    }
    let area = Area::new();
    untouched_tree(&area);
    let o = run(
        &[
            "reduce", "proj", "out", "--passes", "files", "--", "sh", "run.sh",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("out"));
    let names: Vec<&str> = kept.keys().map(String::as_str).collect();
    assert_eq!(names, ["a.txt", "run.sh"]);
    let r = report(&area.path("out"));
    let trace = &r["execution"]["trace"];
    assert_eq!(trace["outcome"], "used", "{trace}");
    assert_eq!(trace["untouched"], 2, "{trace}");
    let first = &r["events"][0];
    assert_eq!(first["index"], 1);
    assert!(
        first["change"]
            .as_str()
            .unwrap()
            .ends_with("that the failing run never touched"),
        "{first}"
    );
    // The one cut took both directories: the files pass had nothing left to search in them.
    assert_eq!(r["events"].as_array().unwrap().len(), 1, "{}", r["events"]);
}

#[test]
fn an_untouched_entry_the_failure_needs_stays_because_the_oracle_decides() {
    if !strace_works() {
        return;
    }
    let area = Area::new();
    // The failure needs three entries in `data/`, which it only lists: none is opened or
    // looked up, so the tracer calls them untouched, and the cut of them must fail.
    let mut entries = vec![(
        "run.sh",
        "n=$(ls data | wc -l)\n[ \"$n\" -ge 3 ] && { echo 'Error: a full directory' >&2; exit 1; }\nexit 0\n",
    )];
    let names = [
        "data/a",
        "data/b",
        "data/c",
        "data/d",
        "data/e",
        "notes.txt",
    ];
    for name in names {
        entries.push((name, "x\n"));
    }
    area.write("proj", &entries);
    let o = run(
        &[
            "reduce", "proj", "out", "--passes", "files", "--", "sh", "run.sh",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = files(&area.path("out"));
    let data = kept.keys().filter(|p| p.starts_with("data/")).count();
    assert_eq!(data, 3, "{kept:#?}");
    assert!(!kept.contains_key("notes.txt"), "{kept:#?}");
    let r = report(&area.path("out"));
    assert_eq!(r["execution"]["trace"]["outcome"], "used");
    // The published tree fails the same way when run on its own.
    let (code, output) = crate::util::sh_in(&area.path("out"), "sh run.sh");
    assert_eq!(code, 1);
    assert!(output.contains("Error: a full directory"), "{output}");
}

#[test]
fn no_trace_runs_nothing_under_the_tracer_and_reaches_the_same_tree() {
    let area = Area::new();
    untouched_tree(&area);
    let o = run(
        &[
            "reduce",
            "proj",
            "out",
            "--passes",
            "files",
            "--no-trace",
            "--",
            "sh",
            "run.sh",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report(&area.path("out"));
    assert_eq!(r["execution"]["trace"]["outcome"], "off");
    assert_eq!(r["execution"]["trace"]["touched"], 0);
    let names: Vec<String> = files(&area.path("out")).into_keys().collect();
    assert_eq!(names, ["a.txt", "run.sh"]);
    for event in r["events"].as_array().unwrap() {
        assert!(
            !event["change"].as_str().unwrap().contains("never touched"),
            "{event}"
        );
    }
}

/// `a.txt`'s line `X` is needed only while `b.txt` holds `KEEP`, and no identifier links
/// the two files: the settle state skips `a.txt` after `KEEP` goes, and only the
/// confirming round finds that `X` can go too. The failure names `a.txt`, so it is
/// searched first. The script is outside the tree, so no pass cuts it. Returns its path.
fn settle_tree(area: &Area) -> String {
    area.write("proj", &[("a.txt", "X\n"), ("b.txt", "KEEP\nother\n")]);
    area.write(
        "script",
        &[(
            "run.sh",
            "[ -f a.txt ] && [ -f b.txt ] || exit 0\nif grep -q KEEP b.txt; then grep -q '^X$' a.txt || exit 0; fi\necho 'Error: boom in a.txt' >&2\nexit 1\n",
        )],
    );
    area.path("script/run.sh").display().to_string()
}

#[test]
fn the_confirming_round_finds_what_the_settle_state_skipped() {
    let area = Area::new();
    let script = settle_tree(&area);
    let mut reports = Vec::new();
    for (out, extra) in [("settled", None), ("unsettled", Some("--no-settle"))] {
        let mut args = vec!["reduce", "proj", out, "--passes", "lines"];
        args.extend(extra);
        args.extend(["--", "sh", script.as_str()]);
        let o = run(&args, area.dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        reports.push(report(&area.path(out)));
    }
    let with = files(&area.path("settled"));
    let without = files(&area.path("unsettled"));
    assert_eq!(with["a.txt"], "", "{with:#?}");
    assert_eq!(with, without);
    assert_eq!(reports[0]["execution"]["settle"], true);
    assert_eq!(reports[1]["execution"]["settle"], false);
    // The pass ran once more than without settle: the confirming round.
    let passes = |r: &serde_json::Value| r["phase_statistics"][0]["passes"].as_u64().unwrap();
    assert_eq!(passes(&reports[0]), passes(&reports[1]) + 1, "{reports:?}");
}

/// As [`settle_tree`], with one more line in `a.txt` that goes in the first round: `a.txt`
/// is then searched again after `KEEP` went, and the cut of `X` is answered from the memory
/// of failed cuts (no identifier links it to `KEEP`). That search settles `a.txt` on the
/// final tree; the confirming round must still run the cut.
#[test]
fn the_confirming_round_runs_the_cuts_a_settled_search_answered_from_memory() {
    let area = Area::new();
    let script = settle_tree(&area);
    area.write("proj", &[("a.txt", "X\ny\n")]);
    let o = run(
        &[
            "reduce", "proj", "out", "--passes", "lines", "--", "sh", &script,
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report(&area.path("out"));
    assert_eq!(r["phase_statistics"][0]["recalled"], 1, "{r:#?}");
    let out = files(&area.path("out"));
    assert_eq!(out["a.txt"], "", "{out:#?}");
}

/// A Python file whose `needed` must still return 42 and whose `other` must still return
/// `Y`, and a second file that names `Y` and can go. The failure names `a.py`, so the
/// syntax pass searches it first: `needed`'s stub fails there. Deleting `b.py`'s `Y`
/// then takes an occurrence of a name `a.py` holds, so `a.py` is searched again, and that
/// search proposes the same stub, which is answered from the memory of failed cuts (no
/// name it holds lost a use); the confirming round runs it once more. The result is the
/// one reached without the memory.
#[test]
fn a_stub_that_failed_is_answered_from_memory_in_the_next_search() {
    if !require_tool("python3", tool_runs("python3")) {
        return;
    }
    let area = Area::new();
    area.write(
        "proj",
        &[
            (
                "a.py",
                "Y = 5\n\n\ndef needed():\n    return 41 + 1\n\n\ndef other():\n    return Y\n",
            ),
            ("b.py", "Y\n"),
        ],
    );
    area.write(
        "script",
        &[(
            "run.sh",
            "if python3 -c 'import a, sys; sys.exit(0 if (a.needed(), a.other()) == (42, 5) else 3)' 2>/dev/null; then\n  echo 'Error: boom in a.py' >&2; exit 1\nfi\nexit 0\n",
        )],
    );
    let script = area.path("script/run.sh").display().to_string();
    let trace = area.path("trace.tsv").display().to_string();
    let mut trees = Vec::new();
    for (out, extra) in [("settled", None), ("unsettled", Some("--no-settle"))] {
        let mut args = vec!["reduce", "proj", out, "--passes", "syntax", "--no-trace"];
        args.extend(extra);
        args.extend(["--", "sh", script.as_str()]);
        let env: &[(&str, &str)] = if extra.is_none() {
            &[("REPROMIN_TRACE", trace.as_str())]
        } else {
            &[]
        };
        let o = run_env(&args, area.dir.path(), env);
        assert!(o.status.success(), "{}", stderr(&o));
        trees.push(files(&area.path(out)));
    }
    assert_eq!(trees[0], trees[1]);
    assert_eq!(trees[0]["b.py"], "", "{:#?}", trees[0]);
    assert!(trees[0]["a.py"].contains("41 + 1"), "{:#?}", trees[0]);
    let log = std::fs::read_to_string(&trace).unwrap();
    let stub = |how: &str| {
        log.lines()
            .filter(|l| l.starts_with(&format!("syntax\t{how}\tbody at line 5 of a.py")))
            .count()
    };
    assert!(stub("recalled-fail") >= 1, "{log}");
    // Run in the first search, and in the confirming round, which recalls nothing.
    assert!(stub("fail") + stub("ahead-fail") >= 2, "{log}");
    // The trace counts the failures before each run: the first run had none, the last
    // one at least that first.
    let failed_before: Vec<u32> = log
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| {
            matches!(
                f[..],
                [
                    "syntax",
                    "fail" | "ahead-fail",
                    "body at line 5 of a.py",
                    ..
                ]
            )
        })
        .map(|f| f[3].parse().unwrap())
        .collect();
    assert_eq!(failed_before.first(), Some(&0), "{log}");
    assert!(failed_before.last().is_some_and(|n| *n >= 1), "{log}");
}

#[test]
fn settling_saves_commands_on_a_python_project_and_publishes_the_same_tree() {
    let area = Area::new();
    repromin::write_demo_project(&area.path("shop")).unwrap();
    let mut trees = Vec::new();
    let mut samples = Vec::new();
    for (out, extra) in [("settled", None), ("unsettled", Some("--no-settle"))] {
        let mut args = vec!["reduce", "shop", out, "--no-trace", "--jobs", "2"];
        // What settling saves is in the passes down to lines.
        args.extend(["--level", "lines"]);
        args.extend(extra);
        args.extend(["--", "python3", "main.py"]);
        let o = run(&args, area.dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        trees.push(files(&area.path(out)));
        let r = report(&area.path(out));
        let recalled: u64 = r["phase_statistics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["recalled"].as_u64().unwrap())
            .sum();
        samples.push((r["oracle_samples"].as_u64().unwrap(), recalled));
    }
    assert_eq!(trees[0], trees[1]);
    assert!(samples[0].0 < samples[1].0, "{samples:?}");
    // Cuts that failed before were answered from the memory, and only with settle on.
    assert!(samples[0].1 > 0, "{samples:?}");
    assert_eq!(samples[1].1, 0, "{samples:?}");
}

/// Runs the reduce side's oracle (`repromin check-test`) on the crate in `dir`, keeping
/// cargo's build directory under `target_root` between runs.
fn check_cargo_test(dir: &std::path::Path, target_root: &std::path::Path) -> (i32, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_repromin"))
        .args(["check-test", "--format", "libtest", "--file", "tests/t.rs"])
        .args(["--name", "answer_is_two", "--cargo-target-root"])
        .arg(target_root)
        .args(["--", "cargo test --offline --no-fail-fast --test t"])
        .current_dir(dir)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code().unwrap_or(-1), text)
}

/// The test of the crates below: `answer::value()` must be 2, and is not.
const ANSWER_TEST: &str = "#[test]\nfn answer_is_two() {\n    assert_eq!(answer::value(), 2, \"the answer is off\");\n}\n";

/// Writes the crate `answer` of `files` (with [`ANSWER_TEST`] as `tests/t.rs`) in `area`,
/// and checks that the reduce side's oracle finds its test failing, twice (the first run
/// asks cargo which packages are the tree's, the second goes by what the first
/// remembered). Returns the crate and the build directories' root.
fn failing_answer_crate(
    area: &Area,
    files: &[(&str, &str)],
) -> (std::path::PathBuf, std::path::PathBuf) {
    let mut files = files.to_vec();
    files.push(("tests/t.rs", ANSWER_TEST));
    let dir = area.write("crate", &files);
    let root = area.path("cargo-target");
    std::fs::create_dir_all(&root).unwrap();
    for _ in 0..2 {
        let (code, text) = check_cargo_test(&dir, &root);
        assert_eq!(code, 1, "{text}");
        assert!(text.contains("the answer is off"), "{text}");
    }
    (dir, root)
}

#[test]
fn a_build_directory_kept_between_probes_never_answers_for_changed_sources() {
    if !require_tool("cargo", tool_runs("cargo")) {
        return;
    }
    let area = Area::new();
    let (dir, root) = failing_answer_crate(
        &area,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"answer\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("src/lib.rs", "pub fn value() -> i32 {\n    1\n}\n"),
        ],
    );
    assert_a_cut_is_built_again(&dir, &root, "src/lib.rs");
}

/// Cuts `value` out of `file` of the crate in `dir` (the build then breaks), writing the
/// file back with its old modification time as repromin's workspaces do, and checks that
/// the next probe builds from the cut: a build keyed on timestamps would find it up to
/// date and answer as before.
fn assert_a_cut_is_built_again(dir: &std::path::Path, root: &std::path::Path, file: &str) {
    let lib = dir.join(file);
    let mtime = std::fs::metadata(&lib).unwrap().modified().unwrap();
    std::fs::write(&lib, "pub fn other() -> i32 {\n    1\n}\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&lib)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let (code, text) = check_cargo_test(dir, root);
    assert!(
        !text.contains("the answer is off"),
        "a stale build answered: {text}"
    );
    assert!(text.contains("cannot find function"), "{code}: {text}");
}

#[test]
fn a_path_dependency_in_the_tree_that_is_no_workspace_member_is_never_answered_stale() {
    if !require_tool("cargo", tool_runs("cargo")) {
        return;
    }
    let area = Area::new();
    let (dir, root) = failing_answer_crate(
        &area,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"answer\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ninner = { path = \"inner\" }\n\n[workspace]\nexclude = [\"inner\"]\n",
            ),
            (
                "src/lib.rs",
                "pub fn value() -> i32 {\n    inner::value()\n}\n",
            ),
            (
                "inner/Cargo.toml",
                "[package]\nname = \"inner\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("inner/src/lib.rs", "pub fn value() -> i32 {\n    1\n}\n"),
        ],
    );
    // `inner` is no member of the workspace, but its sources are in the tree.
    assert_a_cut_is_built_again(&dir, &root, "inner/src/lib.rs");
}

#[test]
fn a_small_tree_is_not_traced_and_costs_no_more_commands() {
    let area = Area::new();
    area.write("proj", &[("a.txt", "hay\nneedle\nhay\n")]);
    let script = "grep -q needle a.txt && { echo 'Error: needle found' >&2; exit 1; }; exit 0";
    let mut samples = Vec::new();
    for (out, extra) in [("traced", None), ("untraced", Some("--no-trace"))] {
        let mut args = vec!["reduce", "proj", out, "--passes", "files,lines"];
        args.extend(extra);
        args.extend(["--", "sh", "-c", script]);
        let o = run(&args, area.dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let r = report(&area.path(out));
        samples.push(r["oracle_samples"].as_u64().unwrap());
        if extra.is_none() {
            assert_eq!(r["execution"]["trace"]["outcome"], "small-tree");
        }
    }
    assert_eq!(samples[0], samples[1]);
    assert_eq!(files(&area.path("traced"))["a.txt"], "needle\n");
}

#[test]
fn the_single_nodes_of_many_small_groups_share_one_window() {
    // Six functions whose one statement calls `int` with one argument: each argument list
    // is a group of one node. Tried one group at a time, a window would hold one
    // candidate and leave the second worker idle; batched, one window holds several.
    let area = Area::new();
    let mut src = String::new();
    for i in 1..=6 {
        src += &format!("def f{i}():\n    return int({i})\n");
    }
    src += "def unused():\n    return 0\n";
    src += "print(f1() + f2() + f3() + f4() + f5() + f6())\n";
    area.write("proj", &[("main.py", &src)]);
    let trace = area.path("trace.tsv");
    let reduce = |out: &str, jobs: &str| {
        let o = run_env(
            &[
                "reduce",
                "proj",
                out,
                "--jobs",
                jobs,
                "--passes",
                "syntax",
                "--exit-code",
                "0",
                "--",
                "sh",
                "-c",
                "test \"$(python3 main.py)\" = 21",
            ],
            area.dir.path(),
            &[("REPROMIN_TRACE", trace.to_str().unwrap())],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        files(&area.path(out))
    };
    let two = reduce("out2", "2");
    let text = std::fs::read_to_string(&trace).unwrap();
    // Windows of the syntax pass, as the labels of their candidates.
    let mut windows: Vec<Vec<String>> = Vec::new();
    // Each candidate's label with the start of what it cuts.
    let mut cuts: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        match fields.as_slice() {
            ["syntax", "window", _] => windows.push(Vec::new()),
            ["syntax", _, label, _failed_before, cut] => {
                if let Some(w) = windows.last_mut() {
                    w.push((*label).to_string());
                }
                cuts.push(((*label).to_string(), (*cut).to_string()));
            }
            _ => {}
        }
    }
    let body =
        |label: &String| (1..=6).any(|i| label == &format!("node at line {} of main.py", 2 * i));
    assert!(
        windows
            .iter()
            .any(|w| w.iter().filter(|l| body(l)).count() >= 2),
        "no window held the nodes of two function bodies: {windows:?}"
    );
    // The trace says what each cut takes (a line's break shows as `⏎`): the argument
    // of the first body's call, and the last statement with its line's end.
    let cut = |label: &str, text: &str| cuts.iter().any(|(l, c)| l == label && c == text);
    assert!(cut("node at line 2 of main.py", "1"), "{cuts:?}");
    assert!(
        cut(
            "node at line 15 of main.py",
            "print(f1() + f2() + f3() + f4() + f5() + f6())\u{23ce}"
        ),
        "{cuts:?}"
    );
    // The same tree as one worker reaches: the unused function went, nothing else.
    let one = reduce("out1", "1");
    assert_eq!(one, two);
    let kept = &two["main.py"];
    assert!(
        !kept.contains("unused") && kept.contains("int(6)"),
        "{kept}"
    );
    // Two workers ran candidates ahead where a window left one idle; one never does.
    let ahead = |out: &str| -> u64 {
        let r = report(&area.path(out));
        let phases = r["phase_statistics"].as_array().unwrap();
        phases
            .iter()
            .map(|p| p["ran_ahead"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(ahead("out1"), 0);
    assert!(ahead("out2") > 0);
}

/// `helper` is on the failure's path but what it does is not: its body can become a stub.
/// `boom`'s cannot, since the failure is raised there.
const STUB_PROJECT: &str = "def helper(x):\n    total = 0\n    for i in range(x):\n        total += i * i\n    return total\n\n\ndef boom():\n    helper(3)\n    raise ValueError(\"boom\")\n\n\nboom()\n";

#[test]
fn a_function_body_the_failure_does_not_need_becomes_a_stub_in_one_command() {
    if !require_tool("python3", tool_runs("python3")) {
        return;
    }
    let area = Area::new();
    area.write("proj", &[("main.py", STUB_PROJECT)]);
    let mut changes = Vec::new();
    for (out, extra) in [("stubbed", None), ("unstubbed", Some("--no-stubs"))] {
        let mut args = vec!["reduce", "proj", out, "--no-trace", "--jobs", "1"];
        // What stubs change is at lines; characters would only add minutes.
        args.extend(["--level", "lines"]);
        args.extend(extra);
        args.extend(["--", "python3", "main.py"]);
        let o = run(&args, area.dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let r = report(&area.path(out));
        assert_eq!(r["execution"]["stubs"], extra.is_none());
        let events: Vec<String> = r["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["change"].as_str().unwrap().to_string())
            .collect();
        changes.push(events);
        // What is published fails the same way when run on its own.
        let (code, output) = crate::util::sh_in(&area.path(out), "python3 main.py");
        assert_eq!(code, 1, "{output}");
        assert!(output.contains("ValueError: boom"), "{output}");
    }
    let stubbed: Vec<&String> = changes[0]
        .iter()
        .filter(|c| c.starts_with("body at line"))
        .collect();
    assert_eq!(
        stubbed.len(),
        1,
        "helper's body, and not boom's: {:#?}",
        changes[0]
    );
    assert!(stubbed[0].ends_with("line 2 of main.py"), "{stubbed:?}");
    assert!(
        !changes[1].iter().any(|c| c.starts_with("body")),
        "{:#?}",
        changes[1]
    );
    // Both end on the same tree: the stub goes with the function once its call went.
    assert_eq!(files(&area.path("stubbed")), files(&area.path("unstubbed")));
}

/// A tree whose failure is one line of `keep.txt`, with an oracle that pollutes its tree
/// on every run (build outputs, an appended line, a deleted file, a changed mode) and
/// fails differently (exit 3) when it finds what an earlier run left.
fn polluting_tree(area: &Area) {
    let mut entries: Vec<(String, String)> = vec![
        ("keep.txt".into(), "hay\nneedle\nhay\n".into()),
        ("sub/deep/gone.txt".into(), "gone\n".into()),
    ];
    for i in 0..8 {
        entries.push((format!("pkg/m{i}.txt"), format!("module {i}\n")));
    }
    let entries: Vec<(&str, &str)> = entries
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    area.write("tree", &entries);
    std::fs::write(
        area.path("oracle.sh"),
        "if [ -e build ] || grep -q junk keep.txt 2>/dev/null; then echo stale; exit 3; fi\n\
         mkdir -p build/obj && echo o > build/obj/o && echo junk >> keep.txt 2>/dev/null\n\
         rm -rf sub/deep; chmod 700 pkg 2>/dev/null\n\
         grep -q needle keep.txt && { echo 'Error: needle found' >&2; exit 1; }\nexit 0\n",
    )
    .unwrap();
}

#[test]
fn runs_through_an_overlay_leave_nothing_for_the_next_and_publish_what_plain_copies_do() {
    let area = Area::new();
    polluting_tree(&area);
    let mut trees = Vec::new();
    let mut samples = Vec::new();
    for (out, extra) in [("overlay", None), ("copies", Some("--no-overlay"))] {
        let oracle = area.path("oracle.sh");
        let mut args = vec!["reduce", "tree", out, "--exit-code", "1", "--jobs", "2"];
        args.extend(extra);
        args.extend(["--", "/bin/sh", oracle.to_str().unwrap()]);
        let o = run(&args, area.dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        trees.push(files(&area.path(out)));
        let r = report(&area.path(out));
        samples.push(r["oracle_samples"].as_u64().unwrap());
        let overlay = &r["execution"]["overlay"];
        if extra.is_some() {
            assert_eq!(overlay["used"], false);
            assert_eq!(overlay["reason"], "--no-overlay");
        } else if overlay["used"] != true {
            // Mounting needs root on Linux: .ci/run runs as root.
            let why = overlay["reason"].as_str().unwrap_or_default().to_string();
            if !require_tool("an overlay mount", Err(why)) {
                return;
            }
        }
    }
    assert_eq!(trees[0], trees[1]);
    assert_eq!(samples[0], samples[1]);
    let only: std::collections::BTreeMap<String, String> =
        [("keep.txt".to_string(), "needle".to_string())].into();
    assert_eq!(trees[0], only);
}

/// The report says where the time of the passes' runs went: each command's own time
/// (here at least the 50 ms every run sleeps) and repromin's work around it, which with one
/// worker all falls within the passes' wall time.
#[test]
fn the_report_says_where_the_time_of_the_runs_went() {
    let area = Area::new();
    area.write(
        "proj",
        &[("a.txt", "hay\nneedle\nhay\nstraw\n"), ("b.txt", "more\n")],
    );
    // The script is outside the tree, so that no candidate takes its sleep out.
    let script = area.path("run.sh");
    std::fs::write(
        &script,
        "sleep 0.05\ngrep -q needle a.txt || exit 0\necho 'Error: needle' >&2\nexit 1\n",
    )
    .unwrap();
    let script = script.to_str().unwrap();
    let o = run(
        &["reduce", "proj", "out", "--jobs", "1", "--", "sh", script],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report(&area.path("out"));
    let ms = |field: &str| r["probe_time"][field].as_u64().unwrap();
    let runs = r["oracle_samples"].as_u64().unwrap();
    assert!(runs >= 3, "{runs} runs");
    assert!(
        ms("command_ms") >= 50 * runs,
        "{runs} runs: {}",
        r["probe_time"]
    );
    // None of the commands' time is counted as repromin's: its own work on two small
    // files is far below their sleeps.
    let own = ms("prepare_ms") + ms("clean_up_ms") + ms("commit_ms");
    assert!(own < ms("command_ms"), "{}", r["probe_time"]);
    let sum = ms("prepare_ms") + ms("command_ms") + ms("clean_up_ms") + ms("commit_ms");
    assert!(
        sum <= r["reduce_ms"].as_u64().unwrap(),
        "{} of {}",
        r["probe_time"],
        r["reduce_ms"]
    );
}
