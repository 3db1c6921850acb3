//! The rendering of a `repromin/v1` result for people, over several lines, that
//! `repromin line` prints.

use std::fmt::Write as _;

use super::rules::{decimal, printable};
use super::types::ResultLine;

/// A rendering of a result for people, over several lines: verdict, SHAs,
/// counts, a table of the listed tests, the two path lists, the
/// certificate and the mutation check. Control characters in names and
/// messages are shown escaped.
pub fn pretty(result: &ResultLine) -> String {
    let r = result;
    let mut out = format!("verdict:        {}\n", r.verdict);
    if let Some(msg) = &r.error {
        out += &format!("error:          {}\n", printable(msg));
    }
    let counts: Vec<String> = r.counts.shown().map(|(c, n)| format!("{c} {n}")).collect();
    let _ = write!(
        out,
        "head:           {}\nmerge base:     {}\nconfig edited:  {}\n\
         counts:         {} (total {})\ntests:          {} of {} listed{}\n",
        r.head,
        r.merge_base,
        if r.config_edited { "yes" } else { "no" },
        counts.join(", "),
        r.counts.total(),
        r.tests.len(),
        r.counts.total(),
        if r.truncated { " (line truncated)" } else { "" },
    );
    let row = |c: &str, b: &str, rr: &str, h: &str, test: &str| {
        format!("  {c:<14}  {b:<10}  {rr:<10}  {h:<10}  {test}\n")
    };
    if !r.tests.is_empty() {
        out += &row("CLASS", "BASE", "RERUN", "HEAD", "TEST");
    }
    for t in &r.tests {
        let runs = t.runs.map(|runs| format!(" ({runs})")).unwrap_or_default();
        let test = printable(&format!("{}::{}{runs}", t.file, t.name));
        out += &row(
            t.class.as_str(),
            t.base.as_str(),
            t.rerun.as_str(),
            t.head.as_str(),
            &test,
        );
    }
    for (title, list) in [
        ("deleted tests", &r.deleted_tests),
        ("not collected", &r.not_collected),
    ] {
        if !list.is_empty() {
            out += &format!("{title}:\n");
            list.iter()
                .for_each(|p| out += &format!("  {}\n", printable(p)));
        }
    }
    if let Some(c) = &r.certificate {
        out += &format!("certificate:    {}\n", c.verdict);
        let mut field = |key: &str, value: String| {
            let _ = writeln!(out, "  {:<14}{value}", format!("{key}:"));
        };
        if let Some(msg) = &c.error {
            field("error", printable(msg));
        }
        if let Some(t) = &c.test {
            field("test", printable(&format!("{}::{}", t.file, t.name)));
        }
        for (key, size) in [("before", c.before), ("after", c.after)] {
            if let Some(s) = size {
                field(key, format!("files {}, bytes {}", s.files, s.bytes));
            }
        }
        if let Some(sha) = &c.content_sha256 {
            field("sha256", printable(sha));
        }
        if let Some(h) = &c.holdout {
            let (rate, conf) = (decimal(h.rate), decimal(h.confidence));
            field(
                "holdout",
                format!(
                    "{} of {} runs passed, {} required (rate {rate}, confidence {conf}, \
                     lower bound {})",
                    h.passes,
                    h.runs,
                    h.required_passes,
                    decimal(h.lower_bound)
                ),
            );
        }
    }
    if let Some(m) = &r.mutants {
        out += &format!("mutants:        {}\n", m.verdict);
        if let Some(msg) = &m.error {
            let _ = writeln!(out, "  error:        {}", printable(msg));
        }
        for x in &m.results {
            let failed = x.failed.as_ref().map_or_else(String::new, |f| {
                if f.is_empty() {
                    return " (no test failed)".to_string();
                }
                let names: Vec<String> = f.iter().map(|n| printable(n)).collect();
                format!(" (failed: {})", names.join(", "))
            });
            let mutation = printable(&format!("{}::{}", x.spec, x.name));
            let _ = writeln!(out, "  {:<14}  {mutation}{failed}", x.outcome.as_str());
        }
    }
    if let Some(g) = &r.regressions {
        let _ = writeln!(
            out,
            "regressions:    {} ({} listed)",
            g.count,
            g.tests.len()
        );
        for t in &g.tests {
            let _ = writeln!(out, "  {}", printable(&format!("{}::{}", t.file, t.name)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::line::fixtures::*;
    use crate::gate::line::*;

    #[test]
    fn pretty_shows_the_result() {
        let mut r = parse_line(VALID).expect("valid");
        r.tests[1].name = "B::\u{1b}[31mred".into();
        let text = pretty(&r);
        let wants = [
            "verdict:        reproduced\n",
            &format!("head:           {HEAD}\n"),
            &format!("merge base:     {BASE}\n"),
            "counts:         reproduces 1, passes-on-base 1, new-api 0, fails-on-head 0, not-run 0 (total 2)",
            "tests:          2 of 2 listed\n",
            "  reproduces      failed      failed      passed      tests/test_parse.py::TestParse::test_empty_input\n",
            "tests/test_parse.py::B::\\u{1b}[31mred",
            "deleted tests:\n  tests/test_old.py\n",
        ];
        for want in wants {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        assert!(!text.contains('\u{1b}') && !text.contains("certificate"));
        let text = pretty(&parse_line(CERT_VALID).expect("valid"));
        let wants = [
            "certificate:    certified\n",
            "  test:         tests/test_parse.py::TestParse::test_empty_input\n",
            "  before:       files 12, bytes 48213\n",
            "  after:        files 1, bytes 412\n",
            "  sha256:       9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n",
            "  holdout:      29 of 30 runs passed, 28 required \
             (rate 0.8, confidence 0.95, lower bound 0.851404)\n",
        ];
        for want in wants {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        assert!(!text.contains("  error:"));
        let mut r = parse_line(CERT_VALID).expect("valid");
        r.certificate = Some(Certificate {
            verdict: CertificateVerdict::Error,
            error: Some("reducer \u{7}crashed".into()),
            test: None,
            before: None,
            after: None,
            content_sha256: None,
            holdout: None,
        });
        let text = pretty(&r);
        assert!(
            text.ends_with("certificate:    error\n  error:        reducer \\u{7}crashed\n"),
            "{text}"
        );
    }
}
