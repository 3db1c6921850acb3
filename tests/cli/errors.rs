//! Bad input: each gets a clear error, a documented exit code, and nothing is written.

use repromin::exit_code::Exit;

use crate::util::{Area, redact, run, stderr};

/// Runs a reduce that must fail, and checks that nothing was published.
fn refused(area: &Area, args: &[&str]) -> (i32, String) {
    let before: Vec<_> = std::fs::read_dir(area.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let o = run(args, area.dir.path());
    let after: Vec<_> = std::fs::read_dir(area.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        before.len(),
        after.len(),
        "something was written: {after:?}"
    );
    (o.status.code().unwrap_or(-1), redact(&stderr(&o), area))
}

#[test]
fn an_existing_output_is_never_overwritten() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    area.write("out", &[("precious.txt", "mine")]);
    let (code, err) = refused(&area, &["reduce", "proj", "out", "--", "python3", "run.py"]);
    assert_eq!(code, Exit::OutputExists as i32);
    insta::assert_snapshot!(err, @"error: `out` already exists; repromin never overwrites an output");
    assert_eq!(
        std::fs::read_to_string(area.path("out/precious.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn an_existing_sidecar_is_never_overwritten() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    area.write("out.repromin", &[("report.json", "{}")]);
    let (code, err) = refused(&area, &["reduce", "proj", "out", "--", "python3", "run.py"]);
    assert_eq!(code, Exit::OutputExists as i32);
    assert!(err.contains("`out.repromin` already exists"), "{err}");
}

#[test]
fn a_missing_or_special_source_is_refused() {
    let area = Area::new();
    let (code, err) = refused(&area, &["reduce", "nope", "out", "--", "true"]);
    assert_eq!(code, Exit::Usage as i32);
    insta::assert_snapshot!(err, @"error: `nope` does not exist");
    area.write("x", &[]);
    nix::unistd::mkfifo(&area.path("x/q"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (code, err) = refused(&area, &["reduce", "x/q", "out", "--", "true"]);
    assert_eq!(code, Exit::Usage as i32);
    insta::assert_snapshot!(err, @"error: `x/q` is a FIFO; SOURCE must be a directory or a regular file");
}

#[test]
fn special_files_hardlinks_and_escaping_symlinks_are_refused_by_name() {
    let area = Area::new();
    let src = area.fixture("python-parse-error", "proj");
    nix::unistd::mkfifo(&src.join("lib/queue"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (code, err) = refused(&area, &["reduce", "proj", "out", "--", "python3", "run.py"]);
    assert_eq!(code, Exit::Error as i32);
    insta::assert_snapshot!(err, @"error: `proj/lib/queue` is a FIFO; only directories, regular files and relative symlinks inside the tree are supported");
    std::fs::remove_file(src.join("lib/queue")).unwrap();

    std::fs::hard_link(src.join("run.py"), area.path("alias.py")).unwrap();
    let o = run(
        &["reduce", "proj", "out", "--", "python3", "run.py"],
        area.dir.path(),
    );
    assert_eq!(o.status.code(), Some(Exit::Error as i32));
    assert!(
        redact(&stderr(&o), &area).contains("`proj/run.py` has 2 hard links"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(area.path("alias.py")).unwrap();

    std::os::unix::fs::symlink("../../etc/passwd", src.join("lib/passwd")).unwrap();
    let (code, err) = refused(&area, &["reduce", "proj", "out", "--", "python3", "run.py"]);
    assert_eq!(code, Exit::Error as i32);
    assert!(
        err.contains("symlink `proj/lib/passwd` points to `../../etc/passwd`, outside the tree"),
        "{err}"
    );
}

#[test]
fn a_baseline_that_does_not_fail_is_refused() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let (code, err) = refused(
        &area,
        &["reduce", "proj", "out", "--", "sh", "-c", "echo all good"],
    );
    assert_eq!(code, Exit::NotFailing as i32);
    insta::assert_snapshot!(err, @r"
    error: the baseline does not fail the way the oracle requires: exit 0 (the command did not fail)

    the command must show the failure on SOURCE as it is; the end of its output:
      | all good
    ");
}

#[test]
fn a_baseline_printing_one_huge_line_is_quoted_by_its_last_bytes_only() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    for (script, what) in [
        (
            "head -c 100000000 /dev/zero | tr '\\0' x; echo END",
            "over the output cap",
        ),
        (
            "head -c 3000000 /dev/zero | tr '\\0' x; echo END",
            "under the output cap",
        ),
    ] {
        let (code, err) = refused(&area, &["reduce", "proj", "out", "--", "sh", "-c", script]);
        assert_eq!(code, Exit::NotFailing as i32, "{what}");
        assert!(err.len() < 6000, "{what}: {} bytes of stderr", err.len());
        assert!(err.contains(" bytes cut]…xxx"), "{what}: {err}");
    }
}

#[test]
fn a_final_tree_that_stops_reproducing_is_named_and_nothing_is_published() {
    let area = Area::new();
    area.write(
        "proj",
        &[
            ("a.txt", "a"),
            ("b.txt", "b"),
            ("c.txt", "c"),
            ("d.txt", "d"),
        ],
    );
    std::fs::create_dir(area.path("seen")).unwrap();
    // Fails with the same error on every tree with `a.txt` it has not seen; a smaller tree
    // seen once already passes: so every candidate reproduces, but the final check of the result
    // does not.
    let script = format!(
        "[ -e a.txt ] || exit 0; \
         h=$(cat $(find . -type f | sort) | cksum | tr ' ' _); n=$(find . -type f | wc -l); \
         if [ -e {seen}/$h ] && [ $n -lt 4 ]; then exit 0; fi; \
         touch {seen}/$h; echo 'KeyError: boom'; exit 1",
        seen = area.path("seen").display()
    );
    let (code, err) = refused(
        &area,
        &[
            "reduce", "proj", "out", "--jobs", "1", "--", "sh", "-c", &script,
        ],
    );
    assert_eq!(code, Exit::FinalNotReproducing as i32, "{err}");
    insta::assert_snapshot!(err, @r"
    error: the final tree no longer reproduces the failure seen during reduction: exit 0 (the command did not fail); nothing was written

    the same tree gave another result when run again: the command depends on something outside the tree (state it keeps, time, order, load); make it deterministic, or run each candidate more than once with --candidate-runs
    ");
    assert!(!area.path("out").exists() && !area.path("out.repromin").exists());
}

#[test]
fn a_flaky_baseline_is_refused_with_both_signatures() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let counter = area.path("count");
    let script = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); echo $((n+1)) > {c}; \
         if [ $n -eq 0 ]; then echo 'KeyError: first'; else echo 'IndexError: second'; fi; exit 1",
        c = counter.display()
    );
    // The runs count through a file outside the tree: one at a time, or two baseline runs
    // at once could both read 0.
    let o = run(
        &[
            "reduce", "proj", "out", "--jobs", "1", "--", "sh", "-c", &script,
        ],
        area.dir.path(),
    );
    assert_eq!(o.status.code(), Some(Exit::Flaky as i32));
    insta::assert_snapshot!(redact(&stderr(&o), &area), @"error: the baseline is flaky: run 1 gave `KeyError: first` but run 2 gave `IndexError: second`");
    assert!(!area.path("out").exists());
}

#[test]
fn an_unlearnable_failure_asks_for_an_explicit_oracle() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let (code, err) = refused(&area, &["reduce", "proj", "out", "--", "false"]);
    assert_eq!(code, Exit::NotFailing as i32);
    insta::assert_snapshot!(err, @r"
    error: no failure signature could be learned from the baseline output

    the output has no line that identifies a failure; it printed nothing
    hint: say what the failure is with --expect REGEX or --signature TEXT, require an exact status with --exit-code N or --process-failure, or accept any failure with --any-failure
    ");
}

#[test]
fn an_oracle_that_accepts_the_empty_tree_is_refused() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let (code, err) = refused(
        &area,
        &["reduce", "proj", "out", "--any-failure", "--", "false"],
    );
    assert_eq!(code, Exit::Trivial as i32);
    assert!(err.contains("the oracle accepts the empty tree"), "{err}");
    assert!(err.contains("--allow-trivial"), "{err}");
}

#[test]
fn invalid_options_are_usage_errors() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let (code, err) = refused(
        &area,
        &["reduce", "proj", "out", "--expect", "(", "--", "true"],
    );
    assert_eq!(code, Exit::Usage as i32);
    assert!(
        err.starts_with("error: invalid --expect regular expression: regex parse error"),
        "{err}"
    );
    let (code, err) = refused(
        &area,
        &["reduce", "proj", "out", "--jobs", "0", "--", "true"],
    );
    assert_eq!(code, Exit::Usage as i32);
    insta::assert_snapshot!(err, @"error: --jobs must be at least 1");
    // Extreme numbers are usage errors naming the accepted range, never a panic or an abort.
    for jobs in ["18446744073709551615", "1000000000"] {
        let (code, err) = refused(
            &area,
            &["reduce", "proj", "out", "--jobs", jobs, "--", "true"],
        );
        assert_eq!(code, Exit::Usage as i32, "{err}");
        assert!(err.contains("must be between 1 and 256"), "{err}");
    }
    for (flag, value) in [
        ("--timeout", "18446744073709551615s"),
        ("--max-duration", "18446744073709551615s"),
        ("--timeout", "0.0001s"),
    ] {
        let (code, err) = refused(&area, &["reduce", "proj", "out", flag, value, "--", "true"]);
        assert_eq!(code, Exit::Usage as i32, "{err}");
        assert!(err.contains("between 1ms and 720h"), "{err}");
    }
    for (flag, value, says) in [
        ("--exit-code", "256", "between 0 and 255"),
        ("--exit-code", "-1", "between 0 and 255"),
        ("--signature", " ", "--signature is blank"),
    ] {
        let (code, err) = refused(&area, &["reduce", "proj", "out", flag, value, "--", "true"]);
        assert_eq!(code, Exit::Usage as i32, "{err}");
        assert!(err.contains(says), "{err}");
    }
    let (code, err) = refused(
        &area,
        &["reduce", "proj", "out", "--keep", "../x", "--", "true"],
    );
    assert_eq!(code, Exit::Usage as i32);
    insta::assert_snapshot!(err, @"error: invalid relative path `../x`: it may not contain `..`");
    let (code, _) = refused(
        &area,
        &["reduce", "proj", "out", "--exit-code", "125", "--", "true"],
    );
    assert_eq!(code, Exit::Usage as i32);
    let (code, err) = refused(&area, &["reduce", "proj", "proj/inside", "--", "true"]);
    assert_eq!(code, Exit::Usage as i32);
    assert!(err.contains("outside the source tree"), "{err}");
}

#[test]
fn a_command_that_is_not_found_is_named() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let (code, err) = refused(
        &area,
        &["reduce", "proj", "out", "--", "no-such-tool-xyz", "a"],
    );
    assert_eq!(code, Exit::Error as i32);
    insta::assert_snapshot!(err, @r"
    error: cannot run `no-such-tool-xyz`: No such file or directory (os error 2)

    check that the command after `--` exists and is on PATH; it runs with the copy of the tree as its working directory
    ");
}

#[test]
fn a_baseline_that_times_out_is_refused() {
    let area = Area::new();
    area.fixture("python-parse-error", "proj");
    let (code, err) = refused(
        &area,
        &[
            "reduce",
            "proj",
            "out",
            "--timeout",
            "500ms",
            "--",
            "sh",
            "-c",
            "sleep 30",
        ],
    );
    assert_eq!(code, Exit::BaselineTimeout as i32);
    assert!(
        err.starts_with("error: the baseline does not fail the way the oracle requires: timed out"),
        "{err}"
    );
}
