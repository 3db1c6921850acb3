//! The strict parser of the `repromin/v1` line: [`parse_line`] reads the JSON with every
//! member kept in order, duplicates included, so that it can refuse unknown, missing,
//! repeated and reordered keys, then checks the line's own rules.

use std::collections::HashSet;
use std::fmt;

use super::rules::{
    CERT_KEYS, HOLDOUT_KEYS, LineError, MAX_LINE_BYTES, PREFIX, RUNS_KEYS, TEST_KEYS, TOP_KEYS,
    printable,
};
use super::types::{
    CertTest, Certificate, Counts, Holdout, MutantLine, Mutants, Named, RegressionTest,
    Regressions, ResultLine, Runs, TestClass, TestLine, TreeSize,
};

/// duplicates, so that the schema check sees the keys as written. Numbers
/// are kept as text twice: their value (integers in decimal, any other
/// number as Rust's `{:?}` of its `f64` value) and their spelling.
enum Json {
    Null,
    Bool(bool),
    Num(String, String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

static NULL: Json = Json::Null;

impl Json {
    fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Num(..) => "a number",
            Json::Str(_) => "a string",
            Json::Arr(_) => "an array",
            Json::Obj(_) => "an object",
        }
    }
}

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

/// Builds a [`Json`] from serde_json's events, which come in text order,
/// repeated keys included.
struct JsonVisitor;

impl<'de> serde::de::Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Num(n.to_string(), String::new()))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Num(n.to_string(), String::new()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Json, E> {
        Ok(Json::Num(format!("{n:?}"), String::new()))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::Str(s.to_owned()))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Arr(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry()? {
            members.push(member);
        }
        Ok(Json::Obj(members))
    }
}

/// Refuses JSON whitespace outside strings. Returns the spelling of every
/// number token, in text order, which serde_json does not keep.
fn check_compact(json: &str) -> Result<Vec<&str>, LineError> {
    let (mut in_string, mut escaped) = (false, false);
    let (mut numbers, mut number) = (Vec::new(), None);
    for (i, b) in json.bytes().enumerate() {
        if let Some(start) = number {
            if matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                continue;
            }
            numbers.push(&json[start..i]);
            number = None;
        }
        match b {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b' ' | b'\t' | b'\n' | b'\r' if !in_string => {
                return Err(LineError::Whitespace(PREFIX.len() + i));
            }
            b'0'..=b'9' | b'-' if !in_string => number = Some(i),
            _ => {}
        }
    }
    numbers.extend(number.map(|start| &json[start..]));
    Ok(numbers)
}

/// Gives the numbers of `v` their spellings. serde_json reports values in
/// text order, so the tree's numbers, walked in order, are the tokens.
fn spell<'s>(v: &mut Json, spellings: &mut impl Iterator<Item = &'s str>) {
    match v {
        Json::Num(_, s) => *s = spellings.next().unwrap_or_default().to_owned(),
        Json::Arr(items) => items.iter_mut().for_each(|v| spell(v, spellings)),
        Json::Obj(members) => members.iter_mut().for_each(|(_, v)| spell(v, spellings)),
        _ => {}
    }
}

/// The values of an object whose keys must be exactly `keys`, in order.
/// Reports a repeated key first, then an unknown one, then a missing one,
/// then the first key out of place.
fn fields<'j, const N: usize>(
    v: &'j Json,
    path: &str,
    keys: [&'static str; N],
) -> Result<[&'j Json; N], LineError> {
    fields_opt(v, path, keys, []).map(|(values, [])| values)
}

/// Like [`fields`], with optional keys that may follow the required ones,
/// each at most once and in the order given.
fn fields_opt<'j, const N: usize, const M: usize>(
    v: &'j Json,
    path: &str,
    keys: [&'static str; N],
    optional: [&'static str; M],
) -> Result<([&'j Json; N], [Option<&'j Json>; M]), LineError> {
    let Json::Obj(m) = v else {
        return Err(wrong(v, path, "an object"));
    };
    let mut seen = HashSet::new();
    if let Some((k, _)) = m.iter().find(|(k, _)| !seen.insert(k.as_str())) {
        return Err(LineError::DuplicateKey(k.clone(), path.to_owned()));
    }
    let known = |k: &str| keys.contains(&k) || optional.contains(&k);
    if let Some((k, _)) = m.iter().find(|(k, _)| !known(k)) {
        return Err(LineError::UnknownKey(k.clone(), path.to_owned()));
    }
    if let Some(k) = keys.iter().find(|k| !seen.contains(**k)) {
        return Err(LineError::MissingKey(k, path.to_owned()));
    }
    let present = optional.iter().copied().filter(|k| seen.contains(k));
    let expected = keys.iter().copied().chain(present);
    let mut out = [&NULL; N];
    let mut extra = [None; M];
    for ((key, value), expected) in m.iter().zip(expected) {
        if key != expected {
            return Err(LineError::OutOfOrder(
                key.clone(),
                expected,
                path.to_owned(),
            ));
        }
        if let Some(i) = keys.iter().position(|k| *k == key.as_str()) {
            out[i] = value;
        } else if let Some(i) = optional.iter().position(|k| *k == key.as_str()) {
            extra[i] = Some(value);
        }
    }
    Ok((out, extra))
}

fn wrong(v: &Json, field: &str, expected: &'static str) -> LineError {
    LineError::WrongType(field.to_owned(), expected, v.kind())
}

fn string(v: &Json, field: &str) -> Result<String, LineError> {
    match v {
        Json::Str(s) => Ok(s.clone()),
        _ => Err(wrong(v, field, "a string")),
    }
}

fn boolean(v: &Json, field: &str) -> Result<bool, LineError> {
    match v {
        Json::Bool(b) => Ok(*b),
        _ => Err(wrong(v, field, "a boolean")),
    }
}

fn count(v: &Json, field: &str) -> Result<u64, LineError> {
    let Json::Num(raw, _) = v else {
        return Err(wrong(v, field, "a non-negative integer"));
    };
    match raw.parse::<u64>() {
        Ok(n) if raw.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(LineError::BadCount(field.to_owned(), raw.clone())),
    }
}

/// A fraction: digits with at most six after the dot, no sign, no exponent.
/// Its range is checked by [`Holdout::validate`].
fn fraction(v: &Json, field: &str) -> Result<f64, LineError> {
    let Json::Num(_, spelling) = v else {
        return Err(wrong(v, field, "a number"));
    };
    let digits = spelling.split_once('.').map_or(0, |(_, f)| f.len());
    let plain = spelling.bytes().all(|b| b == b'.' || b.is_ascii_digit());
    match spelling.parse::<f64>() {
        Ok(x) if plain && digits <= 6 => Ok(x),
        _ => Err(LineError::BadDecimal(field.to_owned(), spelling.clone())),
    }
}

/// `read(v)`, or `None` when `v` is null; a wrong type of `field` itself
/// is reported as wanting `want`.
fn or_null<T>(
    v: &Json,
    field: &str,
    want: &'static str,
    read: impl FnOnce(&Json) -> Result<T, LineError>,
) -> Result<Option<T>, LineError> {
    if let Json::Null = v {
        return Ok(None);
    }
    read(v).map(Some).map_err(|e| match e {
        LineError::WrongType(f, _, found) if f == field => LineError::WrongType(f, want, found),
        e => e,
    })
}

fn named<T: Named>(v: &Json, field: &str) -> Result<T, LineError> {
    let s = string(v, field)?;
    T::ALL
        .iter()
        .copied()
        .find(|x| x.name() == s)
        .ok_or_else(|| {
            let allowed: Vec<String> = T::ALL.iter().map(|x| format!("`{}`", x.name())).collect();
            LineError::UnknownValue(field.to_owned(), s, allowed.join(", "))
        })
}

fn array<'j>(v: &'j Json, field: &str) -> Result<&'j [Json], LineError> {
    match v {
        Json::Arr(items) => Ok(items),
        _ => Err(wrong(v, field, "an array")),
    }
}

fn strings(v: &Json, field: &str) -> Result<Vec<String>, LineError> {
    let items = array(v, field)?.iter().enumerate();
    items
        .map(|(i, s)| string(s, &format!("{field}[{i}]")))
        .collect()
}

fn test_line(v: &Json, path: &str) -> Result<TestLine, LineError> {
    let ([file, name, class, base, rerun, head], [runs]) =
        fields_opt(v, path, TEST_KEYS, ["runs"])?;
    Ok(TestLine {
        file: string(file, &format!("{path}.file"))?,
        name: string(name, &format!("{path}.name"))?,
        class: named(class, &format!("{path}.class"))?,
        base: named(base, &format!("{path}.base"))?,
        rerun: named(rerun, &format!("{path}.rerun"))?,
        head: named(head, &format!("{path}.head"))?,
        runs: runs
            .map(|r| test_runs(r, &format!("{path}.runs")))
            .transpose()?,
    })
}

fn test_runs(v: &Json, path: &str) -> Result<Runs, LineError> {
    let [base_failed, base_runs, head_passed, head_runs] = fields(v, path, RUNS_KEYS)?;
    let n = |v: &Json, key: &str| count(v, &format!("{path}.{key}"));
    Ok(Runs {
        base_failed: n(base_failed, "baseFailed")?,
        base_runs: n(base_runs, "baseRuns")?,
        head_passed: n(head_passed, "headPassed")?,
        head_runs: n(head_runs, "headRuns")?,
    })
}

fn cert_test(v: &Json) -> Result<Option<CertTest>, LineError> {
    const P: &str = "certificate.test";
    or_null(v, P, "null or an object", |v| {
        let [file, name] = fields(v, P, ["file", "name"])?;
        let file = string(file, &format!("{P}.file"))?;
        let name = string(name, &format!("{P}.name"))?;
        Ok(CertTest { file, name })
    })
}

fn tree_size(v: &Json, path: &str) -> Result<Option<TreeSize>, LineError> {
    or_null(v, path, "null or an object", |v| {
        let [files, bytes] = fields(v, path, ["files", "bytes"])?;
        let files = count(files, &format!("{path}.files"))?;
        let bytes = count(bytes, &format!("{path}.bytes"))?;
        Ok(TreeSize { files, bytes })
    })
}

fn holdout(v: &Json) -> Result<Option<Holdout>, LineError> {
    const P: &str = "certificate.holdout";
    or_null(v, P, "null or an object", |v| {
        let [runs, passes, rate, conf, lower, required] = fields(v, P, HOLDOUT_KEYS)?;
        let n = |v: &Json, key: &str| count(v, &format!("{P}.{key}"));
        let x = |v: &Json, key: &str| fraction(v, &format!("{P}.{key}"));
        Ok(Holdout {
            runs: n(runs, "runs")?,
            passes: n(passes, "passes")?,
            rate: x(rate, "rate")?,
            confidence: x(conf, "confidence")?,
            lower_bound: x(lower, "lowerBound")?,
            required_passes: n(required, "requiredPasses")?,
        })
    })
}

fn certificate(v: &Json) -> Result<Option<Certificate>, LineError> {
    let text = |v: &Json, field: &str| or_null(v, field, "null or a string", |v| string(v, field));
    or_null(v, "certificate", "null or an object", |v| {
        let [verdict, error, test, before, after, sha, hold] = fields(v, "certificate", CERT_KEYS)?;
        Ok(Certificate {
            verdict: named(verdict, "certificate.verdict")?,
            error: text(error, "certificate.error")?,
            test: cert_test(test)?,
            before: tree_size(before, "certificate.before")?,
            after: tree_size(after, "certificate.after")?,
            content_sha256: text(sha, "certificate.contentSha256")?,
            holdout: holdout(hold)?,
        })
    })
}

fn mutant_line(v: &Json, path: &str) -> Result<MutantLine, LineError> {
    let ([spec, name, outcome], [failed]) =
        fields_opt(v, path, ["spec", "name", "outcome"], ["failed"])?;
    let field = |key: &str| format!("{path}.{key}");
    Ok(MutantLine {
        spec: string(spec, &field("spec"))?,
        name: string(name, &field("name"))?,
        outcome: named(outcome, &field("outcome"))?,
        failed: failed.map(|f| strings(f, &field("failed"))).transpose()?,
    })
}

fn mutants(v: &Json) -> Result<Mutants, LineError> {
    const P: &str = "mutants";
    let ([verdict, results], [error]) = fields_opt(v, P, ["verdict", "results"], ["error"])?;
    let results = array(results, "mutants.results")?.iter().enumerate();
    let results = results.map(|(i, r)| mutant_line(r, &format!("mutants.results[{i}]")));
    Ok(Mutants {
        verdict: named(verdict, "mutants.verdict")?,
        results: results.collect::<Result<_, _>>()?,
        error: error.map(|e| string(e, "mutants.error")).transpose()?,
    })
}

fn regressions(v: &Json) -> Result<Regressions, LineError> {
    const P: &str = "regressions";
    let [count_value, tests] = fields(v, P, ["count", "tests"])?;
    let tests = array(tests, "regressions.tests")?.iter().enumerate();
    let tests = tests.map(|(i, t)| {
        let path = format!("regressions.tests[{i}]");
        let [file, name] = fields(t, &path, ["file", "name"])?;
        Ok(RegressionTest {
            file: string(file, &format!("{path}.file"))?,
            name: string(name, &format!("{path}.name"))?,
        })
    });
    Ok(Regressions {
        count: count(count_value, "regressions.count")?,
        tests: tests.collect::<Result<_, _>>()?,
    })
}

fn decode(json: &Json) -> Result<ResultLine, LineError> {
    let (
        [
            head,
            base,
            verdict,
            error,
            edited,
            c,
            t,
            dt,
            nc,
            truncated,
            cert,
        ],
        [muts, regs],
    ) = fields_opt(json, "", TOP_KEYS, ["mutants", "regressions"])?;
    let error = match error {
        Json::Null => None,
        Json::Str(s) => Some(s.clone()),
        other => return Err(wrong(other, "error", "null or a string")),
    };
    let always = TestClass::ALWAYS_COUNTED.map(|c| c.as_str());
    let (counts, [flaky]) = fields_opt(c, "counts", always, ["flaky"])?;
    let mut n = [0; TestClass::ALL.len()];
    for (i, key) in always.iter().enumerate() {
        n[i] = count(counts[i], &format!("counts.{key}"))?;
    }
    if let Some(flaky) = flaky {
        n[TestClass::Flaky as usize] = count(flaky, "counts.flaky")?;
        if n[TestClass::Flaky as usize] == 0 {
            return Err(LineError::ZeroFlaky);
        }
    }
    let tests = array(t, "tests")?.iter().enumerate();
    let tests = tests.map(|(i, t)| test_line(t, &format!("tests[{i}]")));
    let result = ResultLine {
        head: string(head, "head")?,
        merge_base: string(base, "mergeBase")?,
        verdict: named(verdict, "verdict")?,
        error,
        config_edited: boolean(edited, "configEdited")?,
        counts: Counts::from_fn(|c| n[c as usize]),
        tests: tests.collect::<Result<_, _>>()?,
        deleted_tests: strings(dt, "deletedTests")?,
        not_collected: strings(nc, "notCollected")?,
        truncated: boolean(truncated, "truncated")?,
        certificate: certificate(cert)?,
        mutants: muts.map(mutants).transpose()?,
        regressions: regs.map(regressions).transpose()?,
    };
    result.validate()?;
    Ok(result)
}

/// Reads one `repromin/v1` line (one trailing `\n` is allowed), refusing
/// any line that breaks the schema in `docs/line-schema.md`.
pub fn parse_line(line: &str) -> Result<ResultLine, LineError> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let Some(json) = line.strip_prefix(PREFIX) else {
        let version = line
            .strip_prefix("repromin/v")
            .and_then(|v| v.split_once(' '));
        return Err(match version {
            Some((v, _)) if v.len() < 16 => {
                LineError::UnsupportedVersion(format!("v{}", printable(v)))
            }
            _ => LineError::MissingPrefix,
        });
    };
    if line.len() > MAX_LINE_BYTES {
        return Err(LineError::TooLong(line.len()));
    }
    let spellings = check_compact(json)?;
    let mut value = serde_json::from_str::<Json>(json).map_err(|e| {
        let msg = e.to_string();
        let msg = msg
            .rsplit_once(" at line ")
            .map_or(msg.as_str(), |(m, _)| m);
        LineError::Json(PREFIX.len() + e.column().saturating_sub(1), msg.to_owned())
    })?;
    if !matches!(value, Json::Obj(_)) {
        return Err(LineError::Json(PREFIX.len(), "expected an object".into()));
    }
    spell(&mut value, &mut spellings.into_iter());
    decode(&value)
}

// ---------------------------------------------------------------- formatting

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::line::fixtures::*;

    /// One refusal a line: `FROM ⟹ TO ⟹ MESSAGE`. The first FROM in VALID
    /// becomes TO, and the error must contain MESSAGE. In TO, `␍`, `␊`, `␉`
    /// and `␁` stand for a carriage return, newline, tab and U+0001.
    const REFUSALS: &str = r#"
repromin/v1  ⟹  ⟹ line does not start with `repromin/v1 `
repromin/v1  ⟹ repromin v1  ⟹ line does not start with
repromin/v1  ⟹ repromin/v1 ⟹ line does not start with
repromin/v1  ⟹ repromin/v2  ⟹ unsupported version `v2`: only `repromin/v1` lines
repromin/v1  ⟹ repromin/v1.1  ⟹ unsupported version `v1.1`
repromin/v1 { ⟹ repromin/v1  { ⟹ whitespace outside strings at byte 12
{"head": ⟹ { "head": ⟹ whitespace outside strings at byte 13
,"verdict" ⟹ , "verdict" ⟹ whitespace outside strings at byte
"verdict": ⟹ "verdict":  ⟹ whitespace outside strings
"certificate":null} ⟹ "certificate":null}  ⟹ whitespace outside strings at byte 638
"certificate":null} ⟹ "certificate":null}␍␊ ⟹ whitespace outside strings at byte 638
"certificate":null} ⟹ "certificate":null}␊␊ ⟹ whitespace outside strings at byte 638
"certificate":null} ⟹ "certificate":null}␉ ⟹ whitespace outside strings at byte 638
:[{ ⟹ :[␉{ ⟹ whitespace outside strings at byte 271
TestParse:: ⟹ Test␁Parse:: ⟹ invalid JSON at byte 313: control character (\u0000-\u001F) found while parsing a string
{"file":"tests/test_parse.py","name":"TestParse::test_empty_input" ⟹ ["tests/test_parse.py" ⟹ invalid JSON
"certificate":null} ⟹ "certificate":null}} ⟹ invalid JSON at byte 638: trailing characters
"certificate":null} ⟹ "certificate":null ⟹ invalid JSON at byte 636: EOF while parsing an object
repromin/v1 { ⟹ repromin/v1 [{ ⟹ invalid JSON at byte 638: EOF while parsing a list
"notCollected":[] ⟹ "notCollected":[,] ⟹ invalid JSON at byte 599: expected value
"notCollected":[] ⟹ "notCollected":["a",] ⟹ invalid JSON at byte 603: trailing comma
"notCollected":[] ⟹ "notCollected":['a'] ⟹ invalid JSON at byte 599: expected value
"notCollected":[] ⟹ "notCollected":[[]] ⟹ `notCollected[0]` must be a string, found an array
"tests/test_old.py"] ⟹ "tests/test_old.py] ⟹ invalid JSON
"tests/test_old.py" ⟹ "tests/\ud800.py" ⟹ invalid JSON at byte 575: unexpected end of hex escape
TestParse::test_empty_input ⟹ TestParse::test\qinput ⟹ invalid JSON at byte 325: invalid escape
"not-run":0 ⟹ "not-run":01 ⟹ invalid JSON at byte 260: invalid number
"not-run":0 ⟹ "not-run":1e400 ⟹ invalid JSON at byte 263: number out of range
"truncated":false ⟹ "truncated":fals ⟹ invalid JSON at byte 617: expected ident
"configEdited" ⟹ "configEdit" ⟹ unknown key `configEdit`
{"reproduces" ⟹ {"foo":0,"reproduces" ⟹ unknown key `foo` in `counts`
{"file" ⟹ {"path" ⟹ unknown key `path` in `tests[0]`
"error":null, ⟹  ⟹ missing key `error`
,"certificate":null ⟹  ⟹ missing key `certificate`
,"not-run":0 ⟹  ⟹ missing key `not-run` in `counts`
,"rerun":"failed" ⟹  ⟹ missing key `rerun` in `tests[0]`
{"head": ⟹ {"head":"x","head": ⟹ duplicate key `head`
"not-run":0 ⟹ "not-run":0,"not-run":0 ⟹ duplicate key `not-run` in `counts`
"class":"reproduces" ⟹ "class":"reproduces","class":"reproduces" ⟹ duplicate key `class` in `tests[0]`
"notCollected":[] ⟹ "notCollected":[],"notCollected":[] ⟹ duplicate key `notCollected`
"mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796","verdict":"reproduced" ⟹ "verdict":"reproduced","mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796" ⟹ key `verdict` out of order: expected `mergeBase`
"new-api":0,"fails-on-head":0 ⟹ "fails-on-head":0,"new-api":0 ⟹ key `fails-on-head` out of order in `counts`: expected `new-api`
"file":"tests/test_parse.py","name":"TestParse::test_empty_input" ⟹ "name":"TestParse::test_empty_input","file":"tests/test_parse.py" ⟹ key `name` out of order in `tests[0]`: expected `file`
"truncated":false,"certificate":null ⟹ "certificate":null,"truncated":false ⟹ key `certificate` out of order: expected `truncated`
"configEdited":false ⟹ "configEdited":"false" ⟹ `configEdited` must be a boolean, found a string
"verdict":"reproduced" ⟹ "verdict":1 ⟹ `verdict` must be a string, found a number
"error":null ⟹ "error":false ⟹ `error` must be null or a string, found a boolean
"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904" ⟹ "head":null ⟹ `head` must be a string, found null
"deletedTests":["tests/test_old.py"] ⟹ "deletedTests":{"a":1} ⟹ `deletedTests` must be an array, found an object
"notCollected":[] ⟹ "notCollected":[1] ⟹ `notCollected[0]` must be a string, found a number
"truncated":false ⟹ "truncated":0 ⟹ `truncated` must be a boolean, found a number
"counts":{"reproduces":1,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0} ⟹ "counts":[1,1,0,0,0] ⟹ `counts` must be an object, found an array
{"file":"tests/test_parse.py","name":"TestParse::test_empty_input","class":"reproduces","base":"failed","rerun":"failed","head":"passed"} ⟹ "x" ⟹ `tests[0]` must be an object, found a string
"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904" ⟹ "head":"4b825dc" ⟹ `head` must be a full 40-character lowercase hex SHA
4b825dc642cb6eb9a060e54bf8d69288fbee4904 ⟹ 4B825DC642CB6EB9A060E54BF8D69288FBEE4904 ⟹ `head` must be a full 40-character lowercase hex SHA
1f0e3d9c8b7a69584736251403f2e1d0c9b8a796 ⟹ 1f0e3d9c8b7a69584736251403f2e1d0c9b8a7961 ⟹ `mergeBase` must be a full 40-character
1f0e3d9c8b7a69584736251403f2e1d0c9b8a796 ⟹ 1f0e3d9c8b7a69584736251403f2e1d0c9b8a79g ⟹ `mergeBase` must be a full 40-character
"passes-on-base":1 ⟹ "passes-on-base":-1 ⟹ `counts.passes-on-base` must be a non-negative integer, found `-1`
"passes-on-base":1 ⟹ "passes-on-base":1.0 ⟹ must be a non-negative integer, found `1.0`
"passes-on-base":1 ⟹ "passes-on-base":1e0 ⟹ must be a non-negative integer, found `1.0`
"not-run":0 ⟹ "not-run":-0 ⟹ `counts.not-run` must be a non-negative integer, found `-0.0`
"not-run":0 ⟹ "not-run":18446744073709551616 ⟹ found `1.8446744073709552e19`
"passes-on-base":1 ⟹ "passes-on-base":"1" ⟹ `counts.passes-on-base` must be a non-negative integer, found a string
"verdict":"reproduced" ⟹ "verdict":"passed" ⟹ unknown value `passed` for `verdict`: expected one of `reproduced`, `unproven`, `vacuous`, `no-tests`, `error`
"class":"reproduces" ⟹ "class":"Reproduces" ⟹ unknown value `Reproduces` for `tests[0].class`
"rerun":"failed" ⟹ "rerun":"flaky" ⟹ unknown value `flaky` for `tests[0].rerun`
"head":"passed" ⟹ "head":"error" ⟹ unknown value `error` for `tests[0].head`
"error":null ⟹ "error":"boom" ⟹ `error` must be null when `verdict` is `reproduced`
"verdict":"reproduced" ⟹ "verdict":"error" ⟹ `error` must be a string when `verdict` is `error`
"verdict":"reproduced" ⟹ "verdict":"vacuous" ⟹ verdict `vacuous` contradicts `counts`, which call for `reproduced`
"verdict":"reproduced" ⟹ "verdict":"no-tests" ⟹ verdict `no-tests` contradicts `counts`
"verdict":"reproduced" ⟹ "verdict":"unproven" ⟹ verdict `unproven` contradicts `counts`
"reproduces":1 ⟹ "reproduces":0 ⟹ verdict `reproduced` contradicts `counts`, which call for `vacuous`
"reproduces":1,"passes-on-base":1 ⟹ "reproduces":2,"passes-on-base":0 ⟹ `tests` lists 1 entries of class `passes-on-base` but `counts.passes-on-base` is 0
"not-run":0 ⟹ "not-run":1 ⟹ `truncated` is false but `tests` lists 2 entries while the counts total 3
"not-run":0 ⟹ "not-run":0,"flaky":0 ⟹ `counts.flaky` must be absent when it is 0
"certificate":null} ⟹ "certificate":null,"regressions":{"count":1,"tests":[]}} ⟹ `truncated` is false but `regressions.tests` lists 0 entries while `regressions.count` is 1
"certificate":null} ⟹ "certificate":null,"regressions":{"count":0,"tests":[{"file":"a","name":"b"}]}} ⟹ `regressions.tests` lists 1 entries but `regressions.count` is 0
"certificate":null} ⟹ "certificate":null,"regressions":null} ⟹ `regressions` must be an object, found null
"certificate":null} ⟹ "certificate":null,"regressions":{"tests":[],"count":0}} ⟹ key `tests` out of order in `regressions`: expected `count`
"certificate":null} ⟹ "certificate":null,"regressions":{"count":1,"tests":[{"name":"b","file":"a"}]}} ⟹ key `name` out of order in `regressions.tests[0]`: expected `file`
"certificate":null} ⟹ "certificate":null,"regressions":{"count":-1,"tests":[]}} ⟹ `regressions.count` must be a non-negative integer
"not-run":0 ⟹ "flaky":1,"not-run":0 ⟹ key `flaky` out of order in `counts`: expected `not-run`
"reproduces":1,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0 ⟹ "reproduces":0,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0,"flaky":1 ⟹ verdict `reproduced` contradicts `counts`, which call for `flaky`
"verdict":"reproduced" ⟹ "verdict":"flaky" ⟹ verdict `flaky` contradicts `counts`, which call for `reproduced`
"class":"reproduces" ⟹ "class":"flaky" ⟹ `tests[0].runs` must be present when `tests[0].class` is `flaky`
"rerun":"failed","head":"passed"} ⟹ "rerun":"failed","head":"passed","runs":{"baseFailed":1,"baseRuns":2,"headPassed":1,"headRuns":1}} ⟹ `tests[0].runs` must be absent when `tests[0].class` is `reproduces`
"rerun":"failed","head":"passed"} ⟹ "rerun":"failed","head":"passed","runs":null} ⟹ `tests[0].runs` must be an object, found null
"class":"reproduces","base":"failed","rerun":"failed","head":"passed"} ⟹ "class":"flaky","base":"failed","rerun":"failed","head":"passed","runs":{"baseFailed":3,"baseRuns":2,"headPassed":1,"headRuns":1}} ⟹ `tests[0].runs.baseFailed` is 3, more than the 2 runs beside it
"class":"reproduces","base":"failed","rerun":"failed","head":"passed"} ⟹ "class":"flaky","base":"failed","rerun":"failed","head":"passed","runs":{"baseFailed":2,"baseRuns":2,"headRuns":1,"headPassed":1}} ⟹ key `headRuns` out of order in `tests[0].runs`: expected `headPassed`
"class":"reproduces","base":"failed","rerun":"failed","head":"passed"} ⟹ "class":"flaky","base":"failed","rerun":"failed","head":"passed","runs":{"baseFailed":2,"baseRuns":2,"headPassed":-1,"headRuns":1}} ⟹ `tests[0].runs.headPassed` must be a non-negative integer
"certificate":null ⟹ "certificate":{} ⟹ missing key `verdict` in `certificate`
"certificate":null ⟹ "certificate":false ⟹ `certificate` must be null or an object, found a boolean
"certificate":null ⟹ "certificate":[] ⟹ `certificate` must be null or an object, found an array
"#;

    /// Refusals like [`REFUSALS`], made from [`CERT_VALID`].
    const CERT_REFUSALS: &str = r#"
"certificate":{"verdict" ⟹ "certificate":{"kind":"x","verdict" ⟹ unknown key `kind` in `certificate`
,"holdout":{"runs":30,"passes":29,"rate":0.8,"confidence":0.95,"lowerBound":0.851404,"requiredPasses":28} ⟹  ⟹ missing key `holdout` in `certificate`
"verdict":"certified" ⟹ "verdict":"certified","verdict":"certified" ⟹ duplicate key `verdict` in `certificate`
"test":{"file":"tests/test_parse.py","name":"TestParse::test_empty_input"},"before":{"files":12,"bytes":48213} ⟹ "before":{"files":12,"bytes":48213},"test":{"file":"tests/test_parse.py","name":"TestParse::test_empty_input"} ⟹ key `before` out of order in `certificate`: expected `test`
"name":"TestParse::test_empty_input"} ⟹ "name":"TestParse::test_empty_input","x":1} ⟹ unknown key `x` in `certificate.test`
"test":{"file":"tests/test_parse.py", ⟹ "test":{ ⟹ missing key `file` in `certificate.test`
"before":{"files":12,"bytes":48213} ⟹ "before":{"bytes":48213,"files":12} ⟹ key `bytes` out of order in `certificate.before`: expected `files`
"after":{"files":1,"bytes":412} ⟹ "after":{"files":1} ⟹ missing key `bytes` in `certificate.after`
"after":{"files":1,"bytes":412} ⟹ "after":{"files":1,"bytes":412,"dirs":0} ⟹ unknown key `dirs` in `certificate.after`
"rate":0.8,"confidence":0.95 ⟹ "confidence":0.95,"rate":0.8 ⟹ key `confidence` out of order in `certificate.holdout`: expected `rate`
"requiredPasses":28 ⟹ "requiredPasses":28,"requiredPasses":28 ⟹ duplicate key `requiredPasses` in `certificate.holdout`
,"lowerBound":0.851404 ⟹  ⟹ missing key `lowerBound` in `certificate.holdout`
"verdict":"certified" ⟹ "verdict":"Certified" ⟹ unknown value `Certified` for `certificate.verdict`: expected one of `certified`, `not-certified`, `budget-exhausted`, `error`
"verdict":"certified" ⟹ "verdict":null ⟹ `certificate.verdict` must be a string, found null
"certified","error":null ⟹ "certified","error":7 ⟹ `certificate.error` must be null or a string, found a number
"test":{"file":"tests/test_parse.py","name":"TestParse::test_empty_input"} ⟹ "test":["tests/test_parse.py"] ⟹ `certificate.test` must be null or an object, found an array
"test":{"file":"tests/test_parse.py" ⟹ "test":{"file":null ⟹ `certificate.test.file` must be a string, found null
"name":"TestParse::test_empty_input"} ⟹ "name":1} ⟹ `certificate.test.name` must be a string, found a number
"before":{"files":12,"bytes":48213} ⟹ "before":"12 files" ⟹ `certificate.before` must be null or an object, found a string
"files":12 ⟹ "files":-1 ⟹ `certificate.before.files` must be a non-negative integer, found `-1`
"bytes":48213 ⟹ "bytes":4.8213e4 ⟹ `certificate.before.bytes` must be a non-negative integer, found `48213.0`
"bytes":412 ⟹ "bytes":"412" ⟹ `certificate.after.bytes` must be a non-negative integer, found a string
"runs":30 ⟹ "runs":30.5 ⟹ `certificate.holdout.runs` must be a non-negative integer, found `30.5`
"runs":30 ⟹ "runs":18446744073709551616 ⟹ `certificate.holdout.runs` must be a non-negative integer, found `1.8446744073709552e19`
"contentSha256":"9f86 ⟹ "contentSha256":"9F86 ⟹ `certificate.contentSha256` must be 64 lowercase hex digits
f00a08" ⟹ f00a0" ⟹ `certificate.contentSha256` must be 64 lowercase hex digits
f00a08" ⟹ f00a08a" ⟹ `certificate.contentSha256` must be 64 lowercase hex digits
"contentSha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" ⟹ "contentSha256":true ⟹ `certificate.contentSha256` must be null or a string, found a boolean
"holdout":{"runs":30,"passes":29,"rate":0.8,"confidence":0.95,"lowerBound":0.851404,"requiredPasses":28} ⟹ "holdout":0 ⟹ `certificate.holdout` must be null or an object, found a number
"rate":0.8 ⟹ "rate":"0.8" ⟹ `certificate.holdout.rate` must be a number, found a string
"lowerBound":0.851404 ⟹ "lowerBound":null ⟹ `certificate.holdout.lowerBound` must be a number, found null
"rate":0.8 ⟹ "rate":8e-1 ⟹ `certificate.holdout.rate` must be a decimal number with at most 6 fraction digits, no exponent and no sign, found `8e-1`
"rate":0.8 ⟹ "rate":0.8E0 ⟹ `certificate.holdout.rate` must be a decimal number with at most 6 fraction digits, no exponent and no sign, found `0.8E0`
"rate":0.8 ⟹ "rate":0.8e+0 ⟹ found `0.8e+0`
"rate":0.8 ⟹ "rate":0.8000001 ⟹ `certificate.holdout.rate` must be a decimal number with at most 6 fraction digits, no exponent and no sign, found `0.8000001`
"rate":0.8 ⟹ "rate":0.8000000 ⟹ found `0.8000000`
"rate":0.8 ⟹ "rate":-0.8 ⟹ `certificate.holdout.rate` must be a decimal number with at most 6 fraction digits, no exponent and no sign, found `-0.8`
"lowerBound":0.851404 ⟹ "lowerBound":-0 ⟹ `certificate.holdout.lowerBound` must be a decimal number with at most 6 fraction digits, no exponent and no sign, found `-0`
"rate":0.8 ⟹ "rate":0 ⟹ `certificate.holdout.rate` must be in (0, 1), found `0.0`
"rate":0.8 ⟹ "rate":1 ⟹ `certificate.holdout.rate` must be in (0, 1), found `1.0`
"confidence":0.95 ⟹ "confidence":1.000000 ⟹ `certificate.holdout.confidence` must be in (0, 1), found `1.0`
"confidence":0.95 ⟹ "confidence":0.000000 ⟹ `certificate.holdout.confidence` must be in (0, 1), found `0.0`
"lowerBound":0.851404 ⟹ "lowerBound":1.5 ⟹ `certificate.holdout.lowerBound` must be in [0, 1], found `1.5`
"lowerBound":0.851404 ⟹ "lowerBound":10 ⟹ `certificate.holdout.lowerBound` must be in [0, 1], found `10.0`
"lowerBound":0.851404 ⟹ "lowerBound":1.000001 ⟹ must be in [0, 1], found `1.000001`
"passes":29 ⟹ "passes":31 ⟹ `certificate.holdout.passes` is 31, more than `certificate.holdout.runs` (30)
"requiredPasses":28 ⟹ "requiredPasses":31 ⟹ `certificate.holdout.requiredPasses` is 31, more than `certificate.holdout.runs` (30)
"passes":29 ⟹ "passes":27 ⟹ `certificate.verdict` is `certified` but `certificate.holdout.passes` (27) is below `certificate.holdout.requiredPasses` (28)
"verdict":"certified" ⟹ "verdict":"not-certified" ⟹ `certificate.verdict` is `not-certified` but `certificate.holdout.passes` (29) reaches `certificate.holdout.requiredPasses` (28)
"verdict":"certified","error":null ⟹ "verdict":"not-certified","error":null ⟹ reaches
"certified","error":null ⟹ "certified","error":"boom" ⟹ `certificate.error` must be null when `certificate.verdict` is `certified`
"verdict":"certified","error":null ⟹ "verdict":"budget-exhausted","error":"" ⟹ `certificate.error` must be null when `certificate.verdict` is `budget-exhausted`
"verdict":"certified" ⟹ "verdict":"error" ⟹ `certificate.error` must be a string when `certificate.verdict` is `error`
"test":{"file":"tests/test_parse.py","name":"TestParse::test_empty_input"} ⟹ "test":null ⟹ `certificate.test` must not be null when `certificate.verdict` is `certified`
"before":{"files":12,"bytes":48213} ⟹ "before":null ⟹ `certificate.before` must not be null when
"after":{"files":1,"bytes":412} ⟹ "after":null ⟹ `certificate.after` must not be null when
"contentSha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" ⟹ "contentSha256":null ⟹ `certificate.contentSha256` must not be null when
"holdout":{"runs":30,"passes":29,"rate":0.8,"confidence":0.95,"lowerBound":0.851404,"requiredPasses":28} ⟹ "holdout":null ⟹ `certificate.holdout` must not be null when `certificate.verdict` is `certified`
"after":{"files":1 ⟹ "after":{"files":13 ⟹ `certificate.after.files` is 13, more than `certificate.before.files` (12)
"bytes":412 ⟹ "bytes":48214 ⟹ `certificate.after.bytes` is 48214, more than `certificate.before.bytes` (48213)
"#;

    fn refused(line: &str, want: &str) {
        match parse_line(line) {
            Ok(_) => panic!("accepted: {line:?}"),
            Err(e) => assert!(
                e.to_string().contains(want),
                "{line}\n want {want}\n got  {e}"
            ),
        }
    }

    #[test]
    fn every_refusal_has_its_message() {
        for (line, table) in [(VALID, REFUSALS), (CERT_VALID, CERT_REFUSALS)] {
            for case in table.lines().filter(|l| !l.is_empty()) {
                let parts: Vec<&str> = case.splitn(3, " ⟹ ").collect();
                assert_eq!(parts.len(), 3, "bad case: {case}");
                let to = parts[1]
                    .replace('␍', "\r")
                    .replace('␊', "\n")
                    .replace('␉', "\t");
                refused(&sub_in(line, parts[0], &to.replace('␁', "\u{1}")), parts[2]);
            }
        }
        let error = format!("\"verdict\":\"error\",\"error\":\"{}\"", "é".repeat(301));
        refused(
            &sub_in(
                CERT_VALID,
                "\"verdict\":\"certified\",\"error\":null",
                &error,
            ),
            "`certificate.error` is 301 characters, over the 300-character limit",
        );
        let long = sub("TestParse::test_ascii", &"x".repeat(4000));
        refused(
            &long,
            &format!("line is {} bytes, over the 4096-byte limit", long.len()),
        );
        let error = format!("\"verdict\":\"error\",\"error\":\"{}\"", "é".repeat(301));
        let line = sub("\"verdict\":\"reproduced\",\"error\":null", &error);
        refused(
            &line,
            "`error` is 301 characters, over the 300-character limit",
        );
        let deep = format!("\"notCollected\":{}{}", "[".repeat(1000), "]".repeat(1000));
        refused(
            &sub("\"notCollected\":[]", &deep),
            "recursion limit exceeded",
        );
    }

    /// Refusals made from [`MUT_VALID`]: what is changed, then `FROM ⟹ TO`.
    const MUT_REFUSALS: &str = r#"
unknown key beside it ⟹ ,"mutants":{"verdict":"not-killed" ⟹ ,"mutants":null,"x":{"verdict":"not-killed"
null value ⟹ "mutants":{"verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}]} ⟹ "mutants":null
before the certificate ⟹ "certificate":null,"mutants":{"verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}]} ⟹ "mutants":{"verdict":"not-killed","results":[]},"certificate":null
twice ⟹ "certificate":null, ⟹ "certificate":null,"mutants":{"verdict":"error","results":[],"error":"x"},
unknown key ⟹ {"verdict":"not-killed" ⟹ {"kind":"x","verdict":"not-killed"
missing results ⟹ "not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}] ⟹ "not-killed"
reordered ⟹ "verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}] ⟹ "results":[],"verdict":"not-killed"
error before results ⟹ "verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}] ⟹ "verdict":"error","error":"x","results":[]
unknown verdict ⟹ "verdict":"not-killed" ⟹ "verdict":"survived"
unknown outcome ⟹ "outcome":"killed" ⟹ "outcome":"dead"
entry key unknown ⟹ "outcome":"killed"} ⟹ "outcome":"killed","line":3}
entry key reordered ⟹ {"spec":"tests/test_parse.mutations.json","name":"drop-quote" ⟹ {"name":"drop-quote","spec":"tests/test_parse.mutations.json"
failed not an array ⟹ "failed":["TestParse::test_ascii"] ⟹ "failed":"TestParse::test_ascii"
failed on killed ⟹ "outcome":"killed"} ⟹ "outcome":"killed","failed":[]}
no failed on survived ⟹ ,"failed":["TestParse::test_ascii"] ⟹ 
killed over survived ⟹ "verdict":"not-killed" ⟹ "verdict":"killed"
not-killed over all killed ⟹ "outcome":"survived","failed":["TestParse::test_ascii"] ⟹ "outcome":"killed"
twice the same mutant ⟹ "name":"off-by-one" ⟹ "name":"drop-quote"
error without message ⟹ "verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}] ⟹ "verdict":"error","results":[]
error with results ⟹ "mutants":{"verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}]} ⟹ "mutants":{"verdict":"error","results":[{"spec":"a","name":"b","outcome":"killed"}],"error":"boom"}
message without error ⟹ "failed":["TestParse::test_ascii"]}]} ⟹ "failed":["TestParse::test_ascii"]}],"error":"boom"}
message not a string ⟹ "verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}] ⟹ "verdict":"error","results":[],"error":null
"#;

    #[test]
    fn mutants_refusals_name_their_rule() {
        let mut out = String::new();
        for case in MUT_REFUSALS.lines().filter(|l| !l.is_empty()) {
            let parts: Vec<&str> = case.splitn(3, " ⟹ ").collect();
            assert_eq!(parts.len(), 3, "bad case: {case}");
            let line = sub_in(MUT_VALID, parts[1], parts[2]);
            let err = parse_line(&line).expect_err(parts[0]);
            out.push_str(&format!("{}: {err}\n", parts[0]));
        }
        let long = format!(
            "\"verdict\":\"error\",\"results\":[],\"error\":\"{}\"",
            "é".repeat(301)
        );
        let from = &MUT_VALID[MUT_VALID
            .find("\"verdict\":\"not-killed\"")
            .expect("verdict")..];
        let from = &from[..from.len() - 2];
        let err = parse_line(&sub_in(MUT_VALID, from, &long)).expect_err("too long");
        out.push_str(&format!("301-character message: {err}\n"));
        insta::assert_snapshot!(out);
    }
}
