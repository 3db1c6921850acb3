//! Readers that turn the reports of test runners into the gate's normalised [`TestReport`]:
//! JUnit XML (pytest, vitest, jest-junit, cargo-nextest, Maven Surefire, gotestsum), the JSON
//! reports of vitest and jest, the plain text of `cargo test`, and `go test -json`. Every path
//! a report names goes through [`normalize_path`]: it is resolved lexically against the
//! worktree root and kept only when it lies under that root, so a report can never make the
//! gate talk about a file outside the tree. Nothing here touches the filesystem. Formats that
//! carry no file paths are mapped onto the test files the runner was asked to run
//! ([`ReadContext::selected`]); results that map to no file are dropped, not reported.
//! Messages are trimmed, cut to 2 KB, and rid of every `ROOT/` prefix so that runs in two
//! worktrees read alike.
//!
//! This module owns [`Format`], [`ReadContext`], [`ReadError`], [`normalize_path`] and the
//! dispatch [`read`]; [`junit`], [`vitest_json`], [`libtest`], [`go_test`] and [`node_test`]
//! each read one kind of report.

mod common;
pub(crate) mod go_test;
pub(crate) mod junit;
pub(crate) mod libtest;
pub(crate) mod node_test;
pub(crate) mod vitest_json;

use crate::gate::test_report::TestReport;
use go_test::read_go_json;
use junit::read_junit;
use libtest::read_libtest;
use vitest_json::read_js_json;

use common::{Files, utf8};
pub(crate) use common::{Format, ReadContext, ReadError};

/// Reads one report of `format` from `bytes`.
///
/// Results that cannot be tied to a file under `ctx.root` are dropped; only a document that
/// does not parse as `format` at all is an error.
pub(crate) fn read(
    format: Format,
    bytes: &[u8],
    ctx: &ReadContext,
) -> Result<TestReport, ReadError> {
    let files = Files::new(ctx);
    let report = match format {
        Format::Junit => read_junit(bytes, &files)?,
        Format::VitestJson | Format::JestJson => read_js_json(format, bytes, &files)?,
        Format::LibtestPlain => read_libtest(&String::from_utf8_lossy(bytes), &files),
        Format::GoTestJson => read_go_json(utf8(format, bytes)?, &files)?,
        Format::NodeTest => node_test::read(bytes, ctx)?,
    };
    Ok(report.finish(ctx.root))
}

#[cfg(test)]
mod tests {
    use super::common::{MAX_MESSAGE, clip, without_root};
    use super::*;
    use common::{Problem, normalize_path};

    const ROOT: &str = "/root/repo";

    fn run(format: Format, input: &str, selected: &[&str]) -> Result<TestReport, ReadError> {
        let selected: Vec<String> = selected.iter().map(|s| s.to_string()).collect();
        read(
            format,
            input.as_bytes(),
            &ReadContext {
                root: ROOT,
                selected: &selected,
            },
        )
    }

    /// Reads `input` and compares a one-line-per-entry outline of the result with `want`:
    /// `path` (with ` !! ` and the load error's first line), then `  Status name` per test
    /// (with ` | ` and the first line of the first message).
    fn check(format: Format, input: &str, selected: &[&str], want: &str) -> TestReport {
        let report = run(format, input, selected).unwrap();
        let first = |m: &str| m.lines().next().unwrap_or("").to_string();
        let mut out = String::new();
        for f in &report.files {
            let load = f.load_error.as_deref().map(|e| format!(" !! {}", first(e)));
            out += &format!("{}{}\n", f.path, load.unwrap_or_default());
            for t in &f.tests {
                let msg = t.messages.first().map(|m| format!(" | {}", first(m)));
                out += &format!("  {:?} {}{}\n", t.status, t.name, msg.unwrap_or_default());
            }
        }
        assert_eq!(out, want);
        report
    }

    /// Removing the root can join another root from the text around it: that one goes too.
    #[test]
    fn a_root_that_a_removal_joins_is_removed_too() {
        let prefix = "/root/repo/";
        assert_eq!(without_root("a /root/rep/root/repo/o/b c", prefix), "a b c");
        assert_eq!(
            without_root("/root/r/root/rep/root/repo/o/epo/x", prefix),
            "x"
        );
        // Past the window nothing is read: the cut may leave a piece of a root, never one.
        let long = format!("{}{}", "/root/repo/".repeat(10_000), "tail");
        assert!(!without_root(&long, prefix).contains("/root/repo"));
    }

    /// A message is trimmed after its cut as well: a cut that lands after a space leaves
    /// no trailing whitespace.
    #[test]
    fn clipped_messages_end_trimmed() {
        let message = format!("  {} tail  ", "a".repeat(MAX_MESSAGE - 1));
        assert_eq!(clip(&message), "a".repeat(MAX_MESSAGE - 1));
        let message = format!("{}\n\t é", "b".repeat(MAX_MESSAGE - 3));
        assert_eq!(clip(&message), "b".repeat(MAX_MESSAGE - 3));
        assert_eq!(clip(" x "), "x");
    }

    #[test]
    fn normalizes_paths_under_root_only() {
        let n = |path| normalize_path(ROOT, path).unwrap_or_default();
        assert_eq!(n("/root/repo/test/a.test.ts"), "test/a.test.ts");
        assert_eq!(n("./tests/../tests/x.py"), "tests/x.py");
        assert_eq!(
            normalize_path("/root/repo/", "a//b/./c.rs").unwrap(),
            "a/b/c.rs"
        );
        for path in [
            "/root/repo/../evil/x.test.ts",
            "../r/x.rs",
            "/root/repository/x",
        ] {
            assert_eq!(normalize_path(ROOT, path), None, "{path}");
        }
        for path in ["/etc/passwd", "/root/repo", "."] {
            assert_eq!(normalize_path(ROOT, path), None, "{path}");
        }
        assert_eq!(normalize_path("relative", "x.rs"), None);
    }

    const PYTEST: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5" time="0.210" timestamp="2025-03-02T10:11:12.000000+00:00" hostname="ci"><testcase classname="tests.test_cachedmethod.AutospecTest" name="test_autospec_no_warnings" time="0.001" /><testcase classname="tests.test_cachedmethod" name="test_module_level" time="0.002"><failure message="assert 1 == 2">def test_module_level():
&gt;       assert 1 == 2
E       assert 1 == 2

tests/test_cachedmethod.py:41: AssertionError</failure></testcase><testcase classname="tests.test_cachedmethod.AutospecTest" name="test_slow" time="0.000"><skipped type="pytest.skip" message="slow">tests/test_cachedmethod.py:50: slow</skipped></testcase><testcase classname="" name="tests.test_tlru" time="0.000"><error message="collection failure">ImportError while importing test module '/root/repo/tests/test_tlru.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.12/importlib/__init__.py:90: in import_module
    return _bootstrap._gcd_import(name[level:], package)
tests/test_tlru.py:3: in &lt;module&gt;
    from cachetools import TLRUCache
E   ImportError: cannot import name 'TLRUCache' from 'cachetools' (/root/repo/src/cachetools/__init__.py)</error></testcase></testsuite></testsuites>"#;

    #[test]
    fn pytest_classes_module_functions_and_collection_errors() {
        let want = "tests/test_cachedmethod.py
  Passed AutospecTest::test_autospec_no_warnings
  Failed test_module_level | assert 1 == 2
  Skipped AutospecTest::test_slow
tests/test_tlru.py !! ImportError: cannot import name 'TLRUCache' from 'cachetools' (src/cachetools/__init__.py)
";
        let sel = ["tests/test_cachedmethod.py", "tests/test_tlru.py"];
        let r = check(Format::Junit, PYTEST, &sel, want);
        let m = &r.files[0].tests[1].messages[0];
        assert!(m.starts_with("assert 1 == 2\ndef test_module_level():\n>       assert 1 =="));
        // The crash line names the exception, even past the cut of a long traceback.
        let types: Vec<Option<&str>> = r.files[0]
            .tests
            .iter()
            .map(|t| t.error_type.as_deref())
            .collect();
        assert_eq!(types, [None, Some("AssertionError"), None]);
        let long = PYTEST
            .replace(
                "E       assert 1 == 2\n",
                &format!("{}E       TypeError: no\n", "E   x\n".repeat(3000)),
            )
            .replace(": AssertionError</failure>", ": TypeError</failure>");
        let r = run(Format::Junit, &long, &sel).unwrap();
        assert_eq!(r.files[0].tests[1].error_type.as_deref(), Some("TypeError"));
        assert!(r.files[0].tests[1].messages[0].len() <= MAX_MESSAGE);
        // Without the "collection failure" marker, the module name plus ImportError suffices.
        let bare = PYTEST.replace("collection failure", "");
        let r = run(Format::Junit, &bare, &sel).unwrap();
        assert!(
            r.files[1]
                .load_error
                .as_deref()
                .unwrap()
                .starts_with("ImportError: cannot")
        );
        // xunit1 adds a file attribute; one outside the root is dropped.
        let xml = r#"<testsuites><testsuite name="pytest" tests="2"><testcase classname="tests.test_x.TestA" name="test_b" file="tests/test_x.py" line="4" time="0.1"/><testcase classname="x" name="y" file="/tmp/elsewhere/test_y.py"/></testsuite></testsuites>"#;
        let want = "tests/test_x.py\n  Passed TestA::test_b\n";
        check(Format::Junit, xml, &[], want);
        let xunit1 = PYTEST.replace(
            r#"name="tests.test_tlru""#,
            r#"name="tests.test_tlru" file="tests/test_tlru.py""#,
        );
        let want = "tests/test_tlru.py !! ImportError: cannot import name 'TLRUCache' from 'cachetools' (src/cachetools/__init__.py)\n";
        check(Format::Junit, &xunit1, &[], want);
        assert!(
            r.files[1]
                .load_error
                .as_deref()
                .unwrap()
                .starts_with("ImportError: cannot")
        );
    }

    #[test]
    fn vitest_and_jest_junit() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="3" failures="2" errors="0" time="0.52">
    <testsuite name="test/base.test.ts" timestamp="2025-03-02T10:11:12.345Z" hostname="ci" tests="2" failures="1" errors="0" skipped="0" time="0.011">
        <testcase classname="test/base.test.ts" name="base &gt; adds" time="0.002"/>
        <testcase classname="test/base.test.ts" name="base &gt; nested &gt; subtracts" time="0.004">
            <failure message="expected 3 to be 4 // Object.is equality" type="AssertionError">
AssertionError: expected 3 to be 4 // Object.is equality
 ❯ test/base.test.ts:9:15
            </failure>
        </testcase>
    </testsuite>
    <testsuite name="test/broken.test.ts" timestamp="2025-03-02T10:11:12.345Z" hostname="ci" tests="1" failures="1" errors="0" skipped="0" time="0">
        <testcase classname="test/broken.test.ts" name="test/broken.test.ts" time="0">
            <failure message="Failed to load url ./missing (resolved id: ./missing) in /root/repo/test/broken.test.ts. Does the file exist?" type="Error">
Error: Failed to load url ./missing (resolved id: ./missing) in /root/repo/test/broken.test.ts. Does the file exist?
 ❯ loadAndTransform node_modules/vite/dist/node/chunks/dep.js:51969:17
            </failure>
        </testcase>
    </testsuite>
    <testsuite name="test/hooks.test.ts" tests="0" failures="1">
        <error message="beforeAll failed">Error: boom</error>
    </testsuite>
    <testsuite name="test/base.test.ts" tests="1">
        <testcase classname="test/base.test.ts" name="late" time="0"><skipped/></testcase>
    </testsuite>
    <testsuite name="../outside/x.test.ts" tests="1"><testcase classname="../outside/x.test.ts" name="sneaky"/></testsuite>
    <testsuite name="/root/repo/../evil/y.test.ts" tests="1"><testcase classname="/root/repo/../evil/y.test.ts" name="sneaky"/></testsuite>
</testsuites>"#;
        let want = "test/base.test.ts
  Passed base > adds
  Failed base > nested > subtracts | expected 3 to be 4 // Object.is equality
  Skipped late
test/broken.test.ts !! Failed to load url ./missing (resolved id: ./missing) in test/broken.test.ts. Does the file exist?
test/hooks.test.ts !! beforeAll failed
";
        let r = check(Format::Junit, xml, &[], want);
        let m = &r.files[0].tests[1].messages[0];
        assert!(m.ends_with(
            "\nAssertionError: expected 3 to be 4 // Object.is equality\n ❯ test/base.test.ts:9:15"
        ));
        assert_eq!(
            r.files[0].tests[1].error_type.as_deref(),
            Some("AssertionError")
        );
        assert_eq!(
            r.files[0].tests[0].error_type, None,
            "a passed test has no type"
        );
        let xml = r#"<testsuites name="jest tests" tests="3" failures="0"><testsuite name="Calculator" errors="0" failures="0" skipped="0" timestamp="2025-03-02T10:11:12" time="0.4" tests="2" file="/root/repo/src/calc.test.js"><testcase classname="Calculator adds" name="Calculator adds" time="0.001"></testcase><testcase classname="Calculator divides" name="Calculator divides" time="0"><skipped/></testcase></testsuite><testsuite name="No file" tests="1"><testcase classname="No file x" name="No file x"/></testsuite></testsuites>"#;
        let want = "src/calc.test.js\n  Passed Calculator adds\n  Skipped Calculator divides\n";
        check(Format::Junit, xml, &["src/calc.test.js"], want);
        // jest-junit's default and node's junit reporter name no file at all: a run of one
        // file is attributed to it, a run of several to none (each is then run alone).
        let xml = r#"<testsuites name="jest tests"><testsuite name="Calculator" tests="2"><testcase classname="Calculator adds" name="Calculator adds"/><testcase classname="Calculator divides" name="Calculator divides"><failure message="boom"/></testcase></testsuite></testsuites>"#;
        let want =
            "src/calc.test.js\n  Passed Calculator adds\n  Failed Calculator divides | boom\n";
        check(Format::Junit, xml, &["src/calc.test.js"], want);
        check(
            Format::Junit,
            xml,
            &["src/calc.test.js", "src/b.test.js"],
            "",
        );
    }

    #[test]
    fn nextest_binary_ids_map_to_test_files() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="5" failures="1" errors="0" uuid="4a7e0c29-8b7c-4e0e-9b1f-3d1c1b9a8f77" timestamp="2025-03-02T10:11:12.345+00:00" time="0.031">
    <testsuite name="semver" tests="1" disabled="0" errors="0" failures="0">
        <testcase name="version::tests::parse_basic" classname="semver" timestamp="2025-03-02T10:11:12.350+00:00" time="0.002"></testcase>
    </testsuite>
    <testsuite name="semver::test_version" tests="2" disabled="0" errors="0" failures="1">
        <testcase name="test_parse" classname="semver::test_version" timestamp="2025-03-02T10:11:12.351+00:00" time="0.003"></testcase>
        <testcase name="parse::rejects_empty" classname="semver::test_version" timestamp="2025-03-02T10:11:12.352+00:00" time="0.004">
            <failure type="test failure with exit code 101">thread 'parse::rejects_empty' panicked at tests/test_version.rs:30:5:
assertion failed: Version::parse("").is_err()</failure>
        </testcase>
    </testsuite>
    <testsuite name="semver::serde" tests="1" disabled="0" errors="0" failures="0">
        <testcase name="roundtrip" classname="semver::serde" time="0.001"></testcase>
    </testsuite>
    <testsuite name="semver::bin/semver" tests="1"><testcase name="cli" classname="semver::bin/semver"/></testsuite>
</testsuites>"#;
        let want = "tests/test_version.rs
  Passed test_parse
  Failed parse::rejects_empty | thread 'parse::rejects_empty' panicked at tests/test_version.rs:30:5:
tests/serde/main.rs
  Passed roundtrip
";
        let sel = ["tests/test_version.rs", "tests/serde/main.rs"];
        check(Format::Junit, xml, &sel, want);
        // `serde` targets in two packages: which one `semver::serde` is, is not guessed.
        let sel = [
            "tests/test_version.rs",
            "a/tests/serde.rs",
            "b/tests/serde.rs",
        ];
        let want = "tests/test_version.rs
  Passed test_parse
  Failed parse::rejects_empty | thread 'parse::rejects_empty' panicked at tests/test_version.rs:30:5:
";
        check(Format::Junit, xml, &sel, want);
    }

    #[test]
    fn surefire_and_gotestsum_junit() {
        let surefire = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="3.0.2" name="com.example.FooTest" time="0.05" tests="2" errors="0" skipped="0" failures="1"><properties><property name="java.version" value="21"/></properties><testcase name="adds" classname="com.example.FooTest" time="0.01"/><testcase name="fails" classname="com.example.FooTest$Nested" time="0"><failure message="expected: &lt;1&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <1> but was: <2>
	at com.example.FooTest.fails(FooTest.java:12)]]></failure></testcase></testsuite>"#;
        let want = "core/src/test/java/com/example/FooTest.java
  Passed adds
  Failed Nested > fails | expected: <1> but was: <2>
";
        let sel = ["core/src/test/java/com/example/FooTest.java"];
        let r = check(Format::Junit, surefire, &sel, want);
        assert!(r.files[0].tests[1].messages[0].contains("\norg.opentest4j.AssertionFailed"));
        let gotestsum = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="1" errors="0" time="0.012">
	<testsuite tests="2" failures="1" time="0.004" name="example.com/m/pkg/util" timestamp="2025-03-02T10:11:12Z">
		<properties><property name="go.version" value="go1.22.1 linux/amd64"></property></properties>
		<testcase classname="example.com/m/pkg/util" name="TestJoin" time="0.000"></testcase>
		<testcase classname="example.com/m/pkg/util" name="TestSplit" time="0.000"><failure message="Failed" type="">=== RUN   TestSplit&#xA;    split_test.go:14: got 2 parts&#xA;--- FAIL: TestSplit (0.00s)&#xA;</failure></testcase>
	</testsuite>
	<testsuite tests="1" failures="1" time="0" name="example.com/m/cmd">
		<testcase classname="example.com/m/cmd" name="TestMain" time="0"><failure message="Failed" type=""># example.com/m/cmd [example.com/m/cmd.test]&#xA;cmd/main_test.go:9:2: undefined: run&#xA;FAIL	example.com/m/cmd [build failed]</failure></testcase>
	</testsuite>
</testsuites>"#;
        let want = "pkg/util/join_test.go
  Passed TestJoin
  Failed TestSplit | Failed
cmd/main_test.go !! cmd/main_test.go:9:2: undefined: run
";
        let sel = [
            "pkg/util/split_test.go",
            "pkg/util/join_test.go",
            "cmd/main_test.go",
        ];
        let r = check(Format::Junit, gotestsum, &sel, want);
        assert!(r.files[0].tests[1].messages[0].contains("split_test.go:14: got 2 parts"));
    }

    #[test]
    fn junit_refuses_doctype_and_reports_malformed_xml() {
        let err = |xml: &str| run(Format::Junit, xml, &[]).unwrap_err().to_string();
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><testsuites/>"#;
        assert_eq!(
            err(bomb),
            "JUnit XML: DOCTYPE/ENTITY declarations are refused"
        );
        assert_eq!(err("<testsuites><!entity x 'y'></testsuites>"), err(bomb));
        let e = err("<testsuites><testsuite name=\"a\"></testcase></testsuites>");
        assert!(e.starts_with("malformed JUnit XML at byte 32: "), "{e}");
        assert_eq!(
            err("<html/>"),
            "not a JUnit XML report: root element is <html>"
        );
        assert_eq!(err(""), "not a JUnit XML report: no <testsuite> element");
        let e = run(Format::Junit, "<testsuites name=\"\u{e9}\"/>", &[]).map(|_| ());
        assert_eq!(e, Ok(()));
        let ctx = ReadContext {
            root: ROOT,
            selected: &[],
        };
        let e = read(Format::Junit, b"<testsuites name=\"\xff\"/>", &ctx);
        assert_eq!(e.unwrap_err().problem, Problem::NotUtf8(18));
    }

    const VITEST_JSON: &str = r#"{"numTotalTestSuites":4,"numPassedTestSuites":2,"numFailedTestSuites":2,"numPendingTestSuites":0,"numTotalTests":4,"numPassedTests":2,"numFailedTests":1,"numPendingTests":1,"numTodoTests":0,"startTime":1740910272345,"success":false,"testResults":[
{"assertionResults":[{"ancestorTitles":["base"],"fullName":"base adds","status":"passed","title":"adds","duration":1.2,"failureMessages":[],"location":{"line":4,"column":3},"meta":{}},
{"ancestorTitles":["base","nested"],"fullName":"base nested subtracts","status":"failed","title":"subtracts","duration":2.5,"failureMessages":["AssertionError: expected 3 to be 4 // Object.is equality\n    at /root/repo/test/base.test.ts:9:15"],"meta":{}},
{"ancestorTitles":[],"fullName":"top level","status":"skipped","title":"top level","failureMessages":[],"meta":{}},
{"ancestorTitles":["base"],"fullName":"base later","status":"todo","title":"later","failureMessages":null,"meta":{}}],
"startTime":1740910272400,"endTime":1740910272410,"status":"failed","message":"","name":"/root/repo/test/base.test.ts"},
{"assertionResults":[],"startTime":1740910272400,"endTime":1740910272400,"status":"failed","message":"Failed to load url ./missing (resolved id: ./missing) in /root/repo/test/broken.test.ts. Does the file exist?","name":"/root/repo/test/broken.test.ts"},
{"assertionResults":[{"ancestorTitles":[],"fullName":"x","status":"passed","title":"x","failureMessages":[]}],"status":"passed","message":"","name":"/root/repo/../evil/x.test.ts"},
{"assertionResults":[],"status":"passed","message":"","name":"/tmp/other/y.test.ts"}]}"#;

    #[test]
    fn vitest_and_jest_json() {
        let want = "test/base.test.ts
  Passed base > adds
  Failed base > nested > subtracts | AssertionError: expected 3 to be 4 // Object.is equality
  Skipped top level
  Skipped base > later
test/broken.test.ts !! Failed to load url ./missing (resolved id: ./missing) in test/broken.test.ts. Does the file exist?
";
        let r = check(Format::VitestJson, VITEST_JSON, &[], want);
        assert!(r.files[0].tests[1].messages[0].ends_with("\n    at test/base.test.ts:9:15"));
        let json = r#"{"numFailedTestSuites":1,"numFailedTests":1,"numPassedTestSuites":0,"numPassedTests":1,"numPendingTests":1,"numTotalTests":3,"success":false,"testResults":[
{"assertionResults":[{"ancestorTitles":["Calculator"],"duration":3,"failureDetails":[],"failureMessages":[],"fullName":"Calculator adds","invocations":1,"location":null,"numPassingAsserts":1,"retryReasons":[],"status":"passed","title":"adds"},
{"ancestorTitles":["Calculator"],"duration":1,"failureDetails":[{}],"failureMessages":["Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 2\nReceived: 3\n    at Object.toBe (/root/repo/src/calc.test.js:9:22)"],"fullName":"Calculator divides","invocations":1,"location":null,"numPassingAsserts":0,"retryReasons":[],"status":"failed","title":"divides"},
{"ancestorTitles":["Calculator"],"failureMessages":[],"fullName":"Calculator later","status":"pending","title":"later"}],
"endTime":1740910272999,"message":"  ● Calculator › divides\n\n    expect(received).toBe(expected)","name":"/root/repo/src/calc.test.js","startTime":1740910272500,"status":"failed","summary":""},
{"assertionResults":[],"coverage":{},"endTime":0,"message":"  ● Test suite failed to run\n\n    Cannot find module './missing' from 'src/bad.test.js'","name":"/root/repo/src/bad.test.js","startTime":0,"status":"failed","summary":""}],"wasInterrupted":false}"#;
        let want = "src/calc.test.js
  Passed Calculator > adds
  Failed Calculator > divides | Error: expect(received).toBe(expected) // Object.is equality
  Skipped Calculator > later
src/bad.test.js !! ● Test suite failed to run
";
        let r = check(Format::JestJson, json, &[], want);
        let load = r.files[1].load_error.as_deref().unwrap();
        assert!(load.ends_with("Cannot find module './missing' from 'src/bad.test.js'"));
    }

    #[test]
    fn json_errors_name_the_format() {
        let err = |f, json| run(f, json, &[]).unwrap_err().to_string();
        let e = err(Format::VitestJson, r#"{"numTotalTests": 3}"#);
        assert_eq!(e, "not a vitest JSON report: missing testResults");
        let e = err(Format::JestJson, r#"{"testResults": [{"name": "a"#);
        assert_eq!(
            e,
            "malformed jest JSON at line 1 column 28: EOF while parsing a string"
        );
        let e = err(Format::JestJson, r#"{"testResults": {"name": 1}}"#);
        assert!(e.starts_with("not a jest JSON report: testResults: invalid type"));
    }

    const CARGO_TEST: &str = "   Compiling semver v1.0.23 (/root/repo)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 2.31s
     Running unittests src/lib.rs (target/debug/deps/semver-6f1d2a3b4c5d6e7f)

running 1 test
test version::tests::parse_basic ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/test_version.rs (target/debug/deps/test_version-0123abcd4567ef89)

running 5 tests
test parse::empty ... ok
test parse::slow ... ignored, needs network
test parse::prerelease ... FAILED
test compare::ordering ... ok
test parse::overflow - should panic ... ok

failures:

---- parse::prerelease stdout ----

thread 'parse::prerelease' panicked at tests/test_version.rs:42:5:
assertion `left == right` failed
  left: \"1.0.0\"
 right: \"1.0.0-alpha\"
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    parse::prerelease

test result: FAILED. 3 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/serde.rs (target/debug/deps/serde-89abcdef01234567)

running 1 test
test roundtrip ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running ../elsewhere/tests/x.rs (target/debug/deps/x-0123abcd4567ef89)

running 1 test
test sneaky ... ok

   Doc-tests semver

running 1 test
test src/lib.rs - Version::parse (line 12) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.12s

error: test failed, to rerun pass `--test test_version`
";

    #[test]
    fn libtest_plain_targets_ignored_and_failure_messages() {
        let want = "tests/test_version.rs
  Passed parse::empty
  Skipped parse::slow
  Failed parse::prerelease | thread 'parse::prerelease' panicked at tests/test_version.rs:42:5:
  Passed compare::ordering
  Passed parse::overflow
tests/serde.rs
  Passed roundtrip
";
        let sel = ["tests/test_version.rs", "tests/serde.rs"];
        let r = check(Format::LibtestPlain, CARGO_TEST, &sel, want);
        let m = &r.files[0].tests[2].messages;
        assert_eq!(m.len(), 1);
        assert!(m[0].contains(
            "\nassertion `left == right` failed\n  left: \"1.0.0\"\n right: \"1.0.0-alpha\"\n"
        ));
        assert!(m[0].ends_with("to display a backtrace"));
    }

    /// Cargo names a workspace member's target from the member's directory: the one
    /// selected file with that tail is it; two are ambiguous and get nothing.
    #[test]
    fn libtest_member_targets_map_to_their_one_file_and_never_to_a_namesake() {
        let out = "     Running tests/wpt.rs (target/debug/deps/wpt-0123abcd4567ef89)

running 2 tests
test a ... ok
test b ... FAILED

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
";
        let want = "data-url/tests/wpt.rs\n  Passed a\n  Failed b\n";
        check(Format::LibtestPlain, out, &["data-url/tests/wpt.rs"], want);
        check(
            Format::LibtestPlain,
            out,
            &["data-url/tests/wpt.rs", "url/tests/wpt.rs"],
            "",
        );
        check(
            Format::LibtestPlain,
            out,
            &["tests/wpt.rs", "url/tests/wpt.rs"],
            "",
        );
    }

    #[test]
    fn libtest_compile_errors_become_load_errors() {
        let out = "   Compiling strsim v0.11.1 (/root/repo)
error[E0425]: cannot find function `foo` in crate `strsim`
 --> tests/lib.rs:3:13
  |
3 |     strsim::foo(\"a\", \"b\");
  |             ^^^ not found in `strsim`

For more information about this error, try `rustc --explain E0425`.
error: could not compile `strsim` (test \"lib\") due to 1 previous error
warning: build failed, waiting for other jobs to finish...
";
        let sel = ["tests/lib.rs", "tests/other.rs"];
        let want = "tests/lib.rs !! error[E0425]: cannot find function `foo` in crate `strsim`\n";
        check(Format::LibtestPlain, out, &sel, want);
        let unknown = "error[E0432]: unresolved import `strsim::bar`\n --> src/lib.rs:1:5\n";
        let e = "error[E0432]: unresolved import `strsim::bar`";
        let want = format!("tests/lib.rs !! {e}\ntests/other.rs !! {e}\n");
        check(Format::LibtestPlain, unknown, &sel, &want);
    }

    const GO_JSON: &str = r##"{"Time":"2025-03-02T10:11:12.1Z","Action":"start","Package":"example.com/m/pkg/util"}
{"Time":"2025-03-02T10:11:12.2Z","Action":"run","Package":"example.com/m/pkg/util","Test":"TestJoin"}
{"Time":"2025-03-02T10:11:12.2Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestJoin","Output":"=== RUN   TestJoin\n"}
{"Time":"2025-03-02T10:11:12.2Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestJoin","Output":"--- PASS: TestJoin (0.00s)\n"}
{"Time":"2025-03-02T10:11:12.2Z","Action":"pass","Package":"example.com/m/pkg/util","Test":"TestJoin","Elapsed":0}
{"Time":"2025-03-02T10:11:12.3Z","Action":"run","Package":"example.com/m/pkg/util","Test":"TestSplit"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestSplit","Output":"=== RUN   TestSplit\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"run","Package":"example.com/m/pkg/util","Test":"TestSplit/empty"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestSplit/empty","Output":"=== RUN   TestSplit/empty\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestSplit/empty","Output":"    split_test.go:21: got [\"\"], want []\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestSplit/empty","Output":"--- FAIL: TestSplit/empty (0.00s)\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"fail","Package":"example.com/m/pkg/util","Test":"TestSplit/empty","Elapsed":0}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestSplit","Output":"--- FAIL: TestSplit (0.00s)\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"fail","Package":"example.com/m/pkg/util","Test":"TestSplit","Elapsed":0}
{"Time":"2025-03-02T10:11:12.3Z","Action":"run","Package":"example.com/m/pkg/util","Test":"TestWindows"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestWindows","Output":"    util_test.go:30: windows only\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"skip","Package":"example.com/m/pkg/util","Test":"TestWindows","Elapsed":0}
{"Time":"2025-03-02T10:11:12.4Z","Action":"output","Package":"example.com/m/pkg/util","Output":"FAIL\n"}
{"Time":"2025-03-02T10:11:12.4Z","Action":"fail","Package":"example.com/m/pkg/util","Elapsed":0.01}
{"ImportPath":"example.com/m/cmd [example.com/m/cmd.test]","Action":"build-output","Output":"# example.com/m/cmd [example.com/m/cmd.test]\n"}
{"ImportPath":"example.com/m/cmd [example.com/m/cmd.test]","Action":"build-output","Output":"cmd/main_test.go:9:2: undefined: run\n"}
{"ImportPath":"example.com/m/cmd [example.com/m/cmd.test]","Action":"build-fail"}
{"Time":"2025-03-02T10:11:12.5Z","Action":"start","Package":"example.com/m/cmd"}
{"Time":"2025-03-02T10:11:12.5Z","Action":"output","Package":"example.com/m/cmd","Output":"FAIL\texample.com/m/cmd [build failed]\n"}
{"Time":"2025-03-02T10:11:12.5Z","Action":"fail","Package":"example.com/m/cmd","Elapsed":0,"FailedBuild":"example.com/m/cmd [example.com/m/cmd.test]"}
{"Time":"2025-03-02T10:11:12.6Z","Action":"pass","Package":"example.com/m/other","Test":"TestElsewhere"}
"##;

    #[test]
    fn go_test_json_pass_fail_subtests_and_build_failure() {
        let want = "pkg/util/split_test.go
  Passed TestJoin
  Failed TestSplit
  Failed TestSplit/empty | split_test.go:21: got [\"\"], want []
  Skipped TestWindows
pkg/util/util_test.go
cmd/main_test.go !! cmd/main_test.go:9:2: undefined: run
";
        // The package's second selected file is listed, with no tests of its own.
        let sel = [
            "pkg/util/split_test.go",
            "pkg/util/util_test.go",
            "cmd/main_test.go",
        ];
        check(Format::GoTestJson, GO_JSON, &sel, want);
    }

    #[test]
    fn go_test_json_old_stderr_build_errors_and_module_in_subdirectory() {
        let out = "# example.com/m [example.com/m.test]
./root_test.go:5:2: undefined: Helper
{\"Action\":\"output\",\"Package\":\"example.com/m\",\"Output\":\"FAIL\\texample.com/m [build failed]\\n\"}
{\"Action\":\"fail\",\"Package\":\"example.com/m\",\"Elapsed\":0}
{\"Action\":\"pass\",\"Package\":\"example.com/m/api\",\"Test\":\"TestAPI\"}
";
        let want = "go/root_test.go !! ./root_test.go:5:2: undefined: Helper\ngo/api/api_test.go\n  Passed TestAPI\n";
        let sel = ["go/root_test.go", "go/api/api_test.go"];
        check(Format::GoTestJson, out, &sel, want);
        // go 1.19 to 1.23: the failed build is plain text only, with no `fail` event.
        let plain = "# example.com/m/p [example.com/m/p.test]
p/x_test.go:5:28: undefined: Missing
FAIL\texample.com/m/p [build failed]
";
        let want = "p/x_test.go !! p/x_test.go:5:28: undefined: Missing\n";
        check(Format::GoTestJson, plain, &["p/x_test.go"], want);
        let broken = "{\"Action\":\"run\"}\n{\"Action\":";
        let e = run(Format::GoTestJson, broken, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed go test -json output at line 2 column 10: EOF while parsing a value"
        );
    }

    #[test]
    fn damaged_input_never_panics() {
        let inputs = [PYTEST, VITEST_JSON, CARGO_TEST, GO_JSON];
        let formats = [
            Format::Junit,
            Format::VitestJson,
            Format::LibtestPlain,
            Format::GoTestJson,
        ];
        let sel = [
            "tests/test_tlru.py",
            "tests/test_version.rs",
            "pkg/util/split_test.go",
        ];
        for (input, format) in inputs.into_iter().zip(formats) {
            for cut in (0..input.len())
                .step_by(7)
                .filter(|&i| input.is_char_boundary(i))
            {
                let mut damaged = input[..cut].to_string();
                damaged.push_str(&input[cut..].replacen('"', "<", 1));
                let _ = run(format, &input[..cut], &sel);
                let _ = run(format, &damaged, &sel);
            }
        }
    }
}
