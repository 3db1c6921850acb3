//! What `run` and the demo show people: the line as printed (with a fallback when it cannot
//! be formatted) and a readable table of the classification.

use std::fmt::Write as _;

use crate::gate::judge::{Judgement, error_line};
use crate::gate::line;

/// Formats the judgement's line, falling back to an error line if it cannot be formatted.
pub(crate) fn format(judgement: &Judgement) -> String {
    match line::format_line(&judgement.line) {
        Ok(text) => text,
        Err(err) => {
            let fallback = error_line(
                &judgement.line.head,
                &judgement.line.merge_base,
                &format!(
                    "the result could not be formatted: {}",
                    crate::with_causes(&err)
                ),
                judgement.line.config_edited,
            );
            line::format_line(&fallback).unwrap_or_else(|_| {
                format!("repromin/v1 {{\"error\":\"{}\"}}", "unformattable result")
            })
        }
    }
}

/// A readable table of the classification, for `run`'s stderr.
pub(crate) fn table(judgement: &Judgement) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<10} {:<10} {:<10} {:<15} test",
        "base", "rerun", "head", "class"
    );
    for row in &judgement.classified.rows {
        let _ = writeln!(
            out,
            "{:<10} {:<10} {:<10} {:<15} {}::{}{}",
            row.base.as_str(),
            row.rerun.as_str(),
            row.head.as_str(),
            row.class.as_str(),
            row.file,
            row.name,
            row.runs
                .or(row.evidence)
                .map(|runs| format!(" ({runs})"))
                .unwrap_or_default()
        );
    }
    if let Some(configuration) = &judgement.configuration {
        let _ = writeln!(out, "configuration: {configuration}");
    }
    for (side, failure) in &judgement.failures {
        let _ = writeln!(
            out,
            "{side}: {} `{}` ended with {} after {} ms; the end of its output:",
            failure.step, failure.command, failure.how, failure.duration_ms
        );
        // Indented, so no line of it can be taken for the result line.
        for line in failure.shown_tail() {
            let _ = writeln!(out, "  | {line}");
        }
    }
    if let Some(g) = &judgement.line.regressions {
        for t in &g.tests {
            let _ = writeln!(out, "regression {}::{}", t.file, t.name);
        }
        let _ = writeln!(out, "regressions: {}", g.count);
    }
    let _ = write!(out, "verdict: {}", judgement.line.verdict.as_str());
    if let Some(err) = &judgement.line.error {
        let _ = write!(out, " ({err})");
    }
    if let Some(m) = &judgement.line.mutants {
        for r in &m.results {
            let _ = write!(
                out,
                "\nmutant {:<11} {}::{}",
                r.outcome.as_str(),
                r.spec,
                r.name
            );
            match &r.failed {
                Some(failed) if failed.is_empty() => out.push_str(" (no test failed)"),
                Some(failed) => {
                    let _ = write!(out, " (failed: {})", failed.join(", "));
                }
                None => {}
            }
        }
        let _ = write!(out, "\nmutants: {}", m.verdict.as_str());
        if let Some(err) = &m.error {
            let _ = write!(out, " ({err})");
        }
    }
    out
}
