//! Lines and results shared by the tests of the line's modules: the schema doc's examples
//! and small builders of valid results.

use super::*;

pub(super) const HEAD: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
pub(super) const BASE: &str = "1f0e3d9c8b7a69584736251403f2e1d0c9b8a796";
/// The first valid example of the schema doc.
pub(super) const VALID: &str = r#"repromin/v1 {"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796","verdict":"reproduced","error":null,"configEdited":false,"counts":{"reproduces":1,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0},"tests":[{"file":"tests/test_parse.py","name":"TestParse::test_empty_input","class":"reproduces","base":"failed","rerun":"failed","head":"passed"},{"file":"tests/test_parse.py","name":"TestParse::test_ascii","class":"passes-on-base","base":"passed","rerun":"passed","head":"passed"}],"deletedTests":["tests/test_old.py"],"notCollected":[],"truncated":false,"certificate":null}"#;

/// The first certificate example of the schema doc: [`VALID`] with a
/// `certified` certificate.
pub(super) const CERT_VALID: &str = r#"repromin/v1 {"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796","verdict":"reproduced","error":null,"configEdited":false,"counts":{"reproduces":1,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0},"tests":[{"file":"tests/test_parse.py","name":"TestParse::test_empty_input","class":"reproduces","base":"failed","rerun":"failed","head":"passed"},{"file":"tests/test_parse.py","name":"TestParse::test_ascii","class":"passes-on-base","base":"passed","rerun":"passed","head":"passed"}],"deletedTests":["tests/test_old.py"],"notCollected":[],"truncated":false,"certificate":{"verdict":"certified","error":null,"test":{"file":"tests/test_parse.py","name":"TestParse::test_empty_input"},"before":{"files":12,"bytes":48213},"after":{"files":1,"bytes":412},"contentSha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","holdout":{"runs":30,"passes":29,"rate":0.8,"confidence":0.95,"lowerBound":0.851404,"requiredPasses":28}}}"#;

pub(super) fn sub(from: &str, to: &str) -> String {
    sub_in(VALID, from, to)
}

pub(super) fn sub_in(line: &str, from: &str, to: &str) -> String {
    assert!(line.contains(from), "`{from}` is not in the valid line");
    line.replacen(from, to, 1)
}

pub(super) fn test(name: &str, class: TestClass) -> TestLine {
    let (base, head) = match class {
        TestClass::Reproduces => (SideStatus::Failed, SideStatus::Passed),
        TestClass::PassesOnBase => (SideStatus::Passed, SideStatus::Passed),
        TestClass::NewApi => (SideStatus::LoadError, SideStatus::Passed),
        TestClass::FailsOnHead => (SideStatus::Failed, SideStatus::Failed),
        TestClass::NotRun => (SideStatus::Skipped, SideStatus::Absent),
        TestClass::Flaky => (SideStatus::Failed, SideStatus::Passed),
    };
    let file = "tests/test_x.py".to_owned();
    TestLine {
        file,
        name: name.into(),
        class,
        base,
        rerun: base,
        head,
        runs: (class == TestClass::Flaky).then_some(crate::gate::line::Runs {
            base_failed: 2,
            base_runs: 3,
            head_passed: 1,
            head_runs: 1,
        }),
    }
}

pub(super) fn result(tests: Vec<TestLine>) -> ResultLine {
    let counts = Counts::from_tests(&tests);
    ResultLine {
        head: HEAD.into(),
        merge_base: BASE.into(),
        verdict: counts.implied_verdict(),
        error: None,
        config_edited: false,
        counts,
        tests,
        deleted_tests: vec![],
        not_collected: vec![],
        truncated: false,
        certificate: None,
        mutants: None,
        regressions: None,
    }
}

/// The certificate of [`CERT_VALID`], about a test `name`.
pub(super) fn certified(name: &str) -> Certificate {
    Certificate {
        verdict: CertificateVerdict::Certified,
        error: None,
        test: Some(CertTest {
            file: "tests/test_parse.py".into(),
            name: name.into(),
        }),
        before: Some(TreeSize {
            files: 12,
            bytes: 48213,
        }),
        after: Some(TreeSize {
            files: 1,
            bytes: 412,
        }),
        content_sha256: Some(
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".into(),
        ),
        holdout: Some(Holdout {
            runs: 30,
            passes: 29,
            rate: 0.8,
            confidence: 0.95,
            lower_bound: 0.851404,
            required_passes: 28,
        }),
    }
}

pub(super) fn hold(c: &mut Certificate) -> &mut Holdout {
    c.holdout.as_mut().expect("a holdout")
}

/// The first mutants example of the schema doc: a pull request of tests
/// alone whose spec's second mutant survived.
pub(super) const MUT_VALID: &str = r#"repromin/v1 {"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796","verdict":"vacuous","error":null,"configEdited":false,"counts":{"reproduces":0,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0},"tests":[{"file":"tests/test_parse.py","name":"TestParse::test_quotes","class":"passes-on-base","base":"passed","rerun":"passed","head":"passed"}],"deletedTests":[],"notCollected":[],"truncated":false,"certificate":null,"mutants":{"verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}]}}"#;

pub(super) fn mutants_of(r: &mut ResultLine) -> &mut Mutants {
    r.mutants.as_mut().expect("a mutants field")
}
