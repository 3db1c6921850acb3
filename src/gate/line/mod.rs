//! The `repromin/v1` result line: the one machine-readable line that a gate
//! run prints, `repromin/v1 ` and then a compact JSON object, at most
//! [`MAX_LINE_BYTES`] bytes in all. Every object has a fixed key set in a
//! fixed order, and the line must agree with itself: the verdict with the
//! counts, the listed tests with the counts, `error` with the verdict, the
//! reduce side's [`Certificate`] with itself, and the mutation check's
//! [`Mutants`] verdict with its results.
//! [`parse_line`] refuses any line that breaks a rule, [`format_line`]
//! refuses to write one and drops list entries, in a fixed order, when a
//! result would not fit. `docs/line-schema.md` is the schema.
//!
//! - `types`: the result and its parts; `rules`: the limits, key sets and checks;
//! - `parse`: the strict parser; `format`: the formatter and its fitting to 4 KB;
//! - `pretty`: the rendering for people.

mod format;
mod parse;
mod pretty;
mod rules;
mod types;

#[cfg(test)]
mod fixtures;

pub(crate) use format::the_tests_that_can_fit;
pub use format::{format_line, truncate_to_fit};
pub(crate) use format::{respelt, skeleton};
pub use parse::parse_line;
pub use pretty::pretty;
pub use rules::{
    CERT_DID_NOT_FIT, LineError, MAX_ERROR_CHARS, MAX_LINE_BYTES, PREFIX, clip, clip_error,
};
pub use types::{
    CertTest, Certificate, CertificateVerdict, Counts, Holdout, MutantLine, MutantOutcome, Mutants,
    MutantsVerdict, RegressionTest, Regressions, ResultLine, Runs, SideStatus, TestClass, TestLine,
    TreeSize, Verdict,
};

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::format::render;
    use super::*;

    #[test]
    fn valid_lines_parse() {
        let r = parse_line(VALID).expect("valid");
        assert_eq!(
            (r.verdict, r.tests.len(), r.counts.total()),
            (Verdict::Reproduced, 2, 2)
        );
        assert_eq!(r.deleted_tests, ["tests/test_old.py"]);
        assert_eq!(format_line(&r).as_deref(), Ok(VALID));
        assert_eq!(parse_line(&format!("{VALID}\n")), Ok(r.clone()));
        // A truncated `reproduced` line may list no test at all.
        let mut none = r.clone();
        (none.tests, none.truncated) = (vec![], true);
        assert_eq!(parse_line(&render(&none)), Ok(none));
        // An error line may carry any counts.
        let error = "\"verdict\":\"error\",\"error\":\"head run timed out\"";
        let line = sub("\"verdict\":\"reproduced\",\"error\":null", error);
        assert_eq!(parse_line(&line).map(|r| r.counts.reproduces), Ok(1));
        // Escapes decode to the same names the formatter writes plainly.
        let line = sub("TestParse::test_empty_input", r#"A::t\u00e9st\/\"q\"\n"#);
        assert_eq!(
            parse_line(&line).map(|r| r.tests[0].name.clone()),
            Ok("A::tést/\"q\"\n".into())
        );
        assert_eq!(TestClass::NAMES, TestClass::ALL.map(|c| c.as_str()));
    }

    #[test]
    fn certificate_lines_parse() {
        use CertificateVerdict as V;
        let r = parse_line(CERT_VALID).expect("valid");
        assert_eq!(
            r.certificate,
            Some(certified("TestParse::test_empty_input"))
        );
        assert_eq!(format_line(&r).as_deref(), Ok(CERT_VALID));
        // Other spellings of the same values; the writer writes them shortest.
        for (from, to, written) in [
            ("\"rate\":0.8", "\"rate\":0.800000", "\"rate\":0.8,"),
            (
                "\"lowerBound\":0.851404",
                "\"lowerBound\":1.0",
                "\"lowerBound\":1,",
            ),
            (
                "\"lowerBound\":0.851404",
                "\"lowerBound\":0.000",
                "\"lowerBound\":0,",
            ),
            (
                "\"contentSha256\"",
                "\"content\\u0053ha256\"",
                "\"contentSha256\"",
            ),
        ] {
            let back = parse_line(&sub_in(CERT_VALID, from, to)).expect(to);
            assert!(
                format_line(&back).is_ok_and(|l| l.contains(written)),
                "{to}"
            );
        }
        // What the rules allow round-trips, the line's own rules ignoring
        // the certificate.
        let mut good = result(vec![test("t", TestClass::Reproduces)]);
        good.certificate = Some(certified("t"));
        type Mutation = fn(&mut ResultLine);
        fn cert(r: &mut ResultLine) -> &mut Certificate {
            r.certificate.as_mut().expect("a certificate")
        }
        let fine: [Mutation; 12] = [
            |r| (r.verdict, r.error) = (Verdict::Error, Some("boom".into())),
            |r| hold(cert(r)).rate = 0.000001,
            |r| hold(cert(r)).confidence = 0.999999,
            |r| hold(cert(r)).lower_bound = 0.0,
            |r| hold(cert(r)).lower_bound = 1.0,
            |r| (cert(r).verdict, cert(r).error) = (V::Error, Some(String::new())),
            |r| (cert(r).verdict, cert(r).holdout) = (V::NotCertified, None),
            |r| (cert(r).verdict, hold(cert(r)).passes) = (V::NotCertified, 27),
            |r| (cert(r).verdict, cert(r).test) = (V::BudgetExhausted, None),
            |r| (cert(r).verdict, hold(cert(r)).passes) = (V::BudgetExhausted, 0),
            |r| {
                (cert(r).verdict, cert(r).after) = (
                    V::BudgetExhausted,
                    Some(TreeSize {
                        files: 99,
                        bytes: 1 << 40,
                    }),
                )
            },
            |r| {
                let c = cert(r);
                (c.verdict, c.test, c.before, c.after) = (V::BudgetExhausted, None, None, None);
                (c.content_sha256, c.holdout) = (None, None);
            },
        ];
        for mutate in fine {
            let mut r = good.clone();
            mutate(&mut r);
            let line = format_line(&r).expect("formats");
            assert_eq!(parse_line(&line), Ok(r));
        }
        assert_eq!(V::NAMES, V::ALL.map(|v| v.as_str()));
        assert_eq!(V::from_name("budget-exhausted"), Some(V::BudgetExhausted));
    }

    #[test]
    fn mutants_lines_round_trip() {
        let r = parse_line(MUT_VALID).expect("valid");
        assert_eq!(format_line(&r).as_deref(), Ok(MUT_VALID));
        let m = r.mutants.as_ref().expect("a mutants field");
        assert_eq!(m.verdict, MutantsVerdict::NotKilled);
        assert_eq!(
            m.results[1].failed.as_deref(),
            Some(&["TestParse::test_ascii".to_string()][..])
        );
        // Every outcome and verdict round-trips, `failed` only where it belongs.
        let mut all = r.clone();
        mutants_of(&mut all).results = MutantOutcome::ALL
            .iter()
            .enumerate()
            .map(|(i, o)| MutantLine {
                spec: "tests/test_parse.mutations.json".into(),
                name: format!("m{i}"),
                outcome: *o,
                failed: o
                    .lists_failed()
                    .then(|| vec!["A::\"b\"".into(), "c\u{1}".into()]),
            })
            .collect();
        let error = Mutants {
            verdict: MutantsVerdict::Error,
            results: vec![],
            error: Some("`tests/test_parse.mutations.json` has no test file beside it".into()),
        };
        let mut errored = r.clone();
        errored.mutants = Some(error);
        let mut killed = r.clone();
        mutants_of(&mut killed).results.truncate(1);
        mutants_of(&mut killed).verdict = MutantsVerdict::Killed;
        // A mutant that no test caught lists no failed test, and says so.
        let mut uncaught = r.clone();
        mutants_of(&mut uncaught).results[1].failed = Some(Vec::new());
        let mut shown = String::new();
        for x in [&r, &all, &errored, &killed, &uncaught] {
            let line = format_line(x).expect("formats");
            assert_eq!(parse_line(&line).as_ref(), Ok(x));
            shown.push_str(&line);
            shown.push('\n');
            shown.push_str(&pretty(x));
            shown.push('\n');
        }
        // No field at all is a line without the check.
        let mut none = r.clone();
        none.mutants = None;
        let line = format_line(&none).expect("formats");
        assert!(line.ends_with("\"certificate\":null}") && !line.contains("mutants"));
        insta::assert_snapshot!(shown);
        assert_eq!(MutantOutcome::NAMES, MutantOutcome::ALL.map(|o| o.as_str()));
    }

    /// Blocks of `docs/line-schema.md` tagged `text valid` must parse and
    /// format back unchanged; blocks tagged `text invalid: MSG` must be
    /// refused with an error that contains MSG once backquotes are removed.
    #[test]
    fn schema_doc_examples() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/line-schema.md");
        let doc = std::fs::read_to_string(path).expect("read the schema doc");
        let (mut valid, mut invalid) = (0, 0);
        let mut lines = doc.lines();
        while let Some(fence) = lines.next() {
            let Some(tag) = fence.strip_prefix("```text ") else {
                continue;
            };
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            assert_eq!(body.len(), 1, "an example block holds one line: {fence}");
            if tag == "valid" {
                let r = parse_line(body[0]).unwrap_or_else(|e| panic!("{e}: {}", body[0]));
                assert_eq!(format_line(&r).as_deref(), Ok(body[0]));
                valid += 1;
            } else if let Some(want) = tag.strip_prefix("invalid: ") {
                let e = parse_line(body[0])
                    .expect_err(body[0])
                    .to_string()
                    .replace('`', "");
                assert!(e.contains(want), "wanted {want}, got {e}: {}", body[0]);
                invalid += 1;
            } else {
                panic!("unknown example tag: {fence}");
            }
        }
        assert!(
            valid >= 5 && invalid >= 20,
            "{valid} valid, {invalid} invalid examples"
        );
        assert!(doc.contains(VALID), "VALID is the doc's first example");
        assert!(doc.contains(CERT_VALID), "CERT_VALID is a doc example");
        assert!(doc.contains(MUT_VALID), "MUT_VALID is a doc example");
    }
}
