//! The `repromin/v1` result line: the one machine-readable line that a gate
//! run prints, `repromin/v1 ` and then a compact JSON object, at most
//! [`MAX_LINE_BYTES`] bytes in all. Every object has a fixed key set in a
//! fixed order, and the line must agree with itself: the verdict with the
//! counts, the listed tests with the counts, `error` with the verdict.
//! [`parse_line`] refuses any line that breaks a rule, [`format_line`]
//! refuses to write one and drops list entries, in a fixed order, when a
//! result would not fit. `docs/line-schema.md` is the schema.

use std::collections::HashSet;
use std::fmt::{self, Write as _};

/// The prefix of every v1 line, its trailing space included.
pub const PREFIX: &str = "repromin/v1 ";
/// The most bytes a line may have, prefix included, trailing newline not.
pub const MAX_LINE_BYTES: usize = 4096;
/// The most characters (Unicode scalar values) that `error` may have.
pub const MAX_ERROR_CHARS: usize = 300;

/// Values spelled as fixed strings on the line.
trait Named: Copy + 'static {
    const ALL: &'static [Self];
    fn name(&self) -> &'static str;
}

macro_rules! named_enum {
    ($(#[$doc:meta])* $ty:ident[$n:literal] { $($(#[$vdoc:meta])* $var:ident = $s:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $ty { $($(#[$vdoc])* $var,)+ }

        impl $ty {
            /// Every value, in schema order.
            pub const ALL: [$ty; $n] = [$($ty::$var,)+];
            /// The spelling of every value, in schema order.
            pub const NAMES: [&'static str; $n] = [$($s,)+];

            /// The spelling of this value on the line.
            pub fn as_str(&self) -> &'static str {
                match self { $($ty::$var => $s,)+ }
            }

            /// The value spelled `s` on the line, if there is one.
            pub fn from_name(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }

        impl Named for $ty {
            const ALL: &'static [Self] = &$ty::ALL;
            fn name(&self) -> &'static str { self.as_str() }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

named_enum! {
    /// The overall outcome of a gate run.
    Verdict[5] {
        /// Some test fails on the merge base and passes on head.
        Reproduced = "reproduced",
        /// Nothing reproduces, but some test needs API that the base lacks.
        Unproven = "unproven",
        /// Tests ran, but none of them shows what the change does.
        Vacuous = "vacuous",
        /// No test was selected or found.
        NoTests = "no-tests",
        /// The gate itself failed; `error` says why.
        Error = "error",
    }
}

named_enum! {
    /// What one test shows about the change.
    TestClass[5] {
        /// Fails on the merge base (and on the rerun there), passes on head.
        Reproduces = "reproduces",
        /// Already passes on the merge base.
        PassesOnBase = "passes-on-base",
        /// Cannot load or run on the merge base: it uses new API.
        NewApi = "new-api",
        /// Does not pass on head.
        FailsOnHead = "fails-on-head",
        /// Was selected but did not run.
        NotRun = "not-run",
    }
}

named_enum! {
    /// How a test came out in one run: base, base rerun or head.
    SideStatus[5] {
        /// It passed.
        Passed = "passed",
        /// It failed.
        Failed = "failed",
        /// It was skipped.
        Skipped = "skipped",
        /// No report of that run listed it.
        Absent = "absent",
        /// Its file could not be loaded or collected.
        LoadError = "load-error",
    }
}

/// The `certificate` slot, reserved for a later schema revision. It has no
/// value yet, so a v1 line can only carry `null` there; the revision that
/// fills it gives this type its variants and the parser a branch for them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Certificate {}

/// How many tests fall in each class. The counts cover every test, also
/// when the line lists only some of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Tests of class `reproduces`.
    pub reproduces: u64,
    /// Tests of class `passes-on-base`.
    pub passes_on_base: u64,
    /// Tests of class `new-api`.
    pub new_api: u64,
    /// Tests of class `fails-on-head`.
    pub fails_on_head: u64,
    /// Tests of class `not-run`.
    pub not_run: u64,
}

impl Counts {
    fn from_fn(mut f: impl FnMut(TestClass) -> u64) -> Self {
        Counts {
            reproduces: f(TestClass::Reproduces),
            passes_on_base: f(TestClass::PassesOnBase),
            new_api: f(TestClass::NewApi),
            fails_on_head: f(TestClass::FailsOnHead),
            not_run: f(TestClass::NotRun),
        }
    }

    /// The counts of the given tests, class by class.
    pub fn from_tests(tests: &[TestLine]) -> Self {
        Counts::from_fn(|c| tests.iter().filter(|t| t.class == c).count() as u64)
    }

    /// The count of one class.
    pub fn get(&self, class: TestClass) -> u64 {
        match class {
            TestClass::Reproduces => self.reproduces,
            TestClass::PassesOnBase => self.passes_on_base,
            TestClass::NewApi => self.new_api,
            TestClass::FailsOnHead => self.fails_on_head,
            TestClass::NotRun => self.not_run,
        }
    }

    /// The sum of the five counts, in a type wide enough never to overflow.
    pub fn total(&self) -> u128 {
        TestClass::ALL.map(|c| u128::from(self.get(c))).iter().sum()
    }

    /// The verdict these counts call for unless the gate failed: `no-tests`
    /// when the total is 0, else `reproduced` when `reproduces > 0`, else
    /// `unproven` when `new-api > 0`, else `vacuous`.
    pub fn implied_verdict(&self) -> Verdict {
        match (self.total(), self.reproduces, self.new_api) {
            (0, _, _) => Verdict::NoTests,
            (_, 1.., _) => Verdict::Reproduced,
            (_, _, 1..) => Verdict::Unproven,
            _ => Verdict::Vacuous,
        }
    }
}

/// One entry of `tests`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestLine {
    /// The test's file as selected, e.g. `tests/test_x.py`.
    pub file: String,
    /// The test's name in its file, e.g. `Cls::test_y`.
    pub name: String,
    /// What the test shows.
    pub class: TestClass,
    /// Its outcome on the merge base.
    pub base: SideStatus,
    /// Its outcome on the rerun on the merge base.
    pub rerun: SideStatus,
    /// Its outcome on head.
    pub head: SideStatus,
}

/// A whole `repromin/v1` result, as one line carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultLine {
    /// The head commit: a full 40-character lowercase hex SHA.
    pub head: String,
    /// The merge base: a full 40-character lowercase hex SHA.
    pub merge_base: String,
    /// The outcome.
    pub verdict: Verdict,
    /// Why the gate failed; present exactly when the verdict is `error`.
    pub error: Option<String>,
    /// Whether the change edits test or CI configuration.
    pub config_edited: bool,
    /// Tests per class, covering every test.
    pub counts: Counts,
    /// The tests; only some of them when `truncated`.
    pub tests: Vec<TestLine>,
    /// Test files that the change deletes.
    pub deleted_tests: Vec<String>,
    /// Selected paths that no test report listed.
    pub not_collected: Vec<String>,
    /// Whether entries were dropped from the lists to fit the size limit.
    pub truncated: bool,
    /// Reserved; always `None` in v1.
    pub certificate: Option<Certificate>,
}

/// Why a line or a result was refused. Object paths are empty for the top
/// level and otherwise like `counts` or `tests[2]`; field paths are like
/// `head`, `counts.new-api` or `tests[2].class`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The line does not start with `repromin/v1 `.
    #[error("line does not start with `repromin/v1 `")]
    MissingPrefix,
    /// A `repromin/` line of another version (the version, e.g. `v2`).
    #[error("unsupported version `{0}`: only `repromin/v1` lines can be read")]
    UnsupportedVersion(String),
    /// A line over [`MAX_LINE_BYTES`] (its length without the newline).
    #[error("line is {0} bytes, over the {MAX_LINE_BYTES}-byte limit")]
    TooLong(usize),
    /// Whitespace between JSON tokens (its byte offset in the line).
    #[error("whitespace outside strings at byte {0}: the JSON must be compact")]
    Whitespace(usize),
    /// Not one well-formed JSON object (byte offset, what is wrong there).
    #[error("invalid JSON at byte {0}: {1}")]
    Json(usize, String),
    /// A key that the schema does not have there (key, object path).
    #[error("unknown key `{0}`{at}", at = in_object(.1))]
    UnknownKey(String, String),
    /// A key given twice (key, object path).
    #[error("duplicate key `{0}`{at}", at = in_object(.1))]
    DuplicateKey(String, String),
    /// A required key that is absent (key, object path).
    #[error("missing key `{0}`{at}", at = in_object(.1))]
    MissingKey(&'static str, String),
    /// Keys out of schema order (key found, key expected, object path).
    #[error("key `{0}` out of order{at}: expected `{1}`", at = in_object(.2))]
    OutOfOrder(String, &'static str, String),
    /// A value of the wrong JSON type (field path, wanted, found).
    #[error("`{0}` must be {1}, found {2}")]
    WrongType(String, &'static str, &'static str),
    /// A negative, fractional or too large count (field path, number).
    #[error("`{0}` must be a non-negative integer, found `{1}`")]
    BadCount(String, String),
    /// A SHA that is not 40 lowercase hex digits (`head` or `mergeBase`).
    #[error("`{0}` must be a full 40-character lowercase hex SHA")]
    BadSha(&'static str),
    /// A verdict, class or status outside its set (field path, value, set).
    #[error("unknown value `{v}` for `{0}`: expected one of {2}", v = printable(.1))]
    UnknownValue(String, String, String),
    /// Verdict `error` without a message.
    #[error("`error` must be a string when `verdict` is `error`")]
    ErrorMissing,
    /// A message with another verdict (that verdict).
    #[error("`error` must be null when `verdict` is `{0}`")]
    ErrorUnexpected(Verdict),
    /// A message over [`MAX_ERROR_CHARS`] (its length in characters).
    #[error("`error` is {0} characters, over the {MAX_ERROR_CHARS}-character limit")]
    ErrorTooLong(usize),
    /// A verdict that the counts do not call for (verdict, called for).
    #[error("verdict `{0}` contradicts `counts`, which call for `{1}`")]
    VerdictMismatch(Verdict, Verdict),
    /// More entries of a class than its count (class, entries, count).
    #[error("`tests` lists {1} entries of class `{0}` but `counts.{0}` is {2}")]
    TooManyEntries(TestClass, usize, u64),
    /// Not truncated, yet not every test listed (entries, total count).
    #[error("`truncated` is false but `tests` lists {0} entries while the counts total {1}")]
    NotAllListed(usize, u128),
    /// A `certificate` other than null.
    #[error("`certificate` must be null in repromin/v1 (a later revision fills it)")]
    CertificateNotNull,
}

fn in_object(object: &str) -> String {
    match object {
        "" => String::new(),
        _ => format!(" in `{object}`"),
    }
}

impl ResultLine {
    /// Checks every rule of the schema that is not about the JSON text;
    /// [`parse_line`] and [`format_line`] both apply it.
    pub fn validate(&self) -> Result<(), LineError> {
        for (field, sha) in [("head", &self.head), ("mergeBase", &self.merge_base)] {
            if sha.len() != 40 || !sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                return Err(LineError::BadSha(field));
            }
        }
        match (self.verdict, &self.error) {
            (Verdict::Error, None) => return Err(LineError::ErrorMissing),
            (Verdict::Error, Some(msg)) if msg.chars().count() > MAX_ERROR_CHARS => {
                return Err(LineError::ErrorTooLong(msg.chars().count()));
            }
            (Verdict::Error, Some(_)) => {}
            (verdict, Some(_)) => return Err(LineError::ErrorUnexpected(verdict)),
            (verdict, None) if verdict != self.counts.implied_verdict() => {
                let implied = self.counts.implied_verdict();
                return Err(LineError::VerdictMismatch(verdict, implied));
            }
            (_, None) => {}
        }
        for class in TestClass::ALL {
            let listed = self.tests.iter().filter(|t| t.class == class).count();
            let count = self.counts.get(class);
            if listed as u128 > u128::from(count) {
                return Err(LineError::TooManyEntries(class, listed, count));
            }
        }
        if !self.truncated && self.tests.len() as u128 != self.counts.total() {
            let (listed, total) = (self.tests.len(), self.counts.total());
            return Err(LineError::NotAllListed(listed, total));
        }
        if let Some(c) = &self.certificate {
            match *c {}
        }
        Ok(())
    }
}

/// Cuts `message` to at most [`MAX_ERROR_CHARS`] characters, ending a cut
/// message with `…`, so that it can go in `error`.
pub fn clip_error(message: &str) -> String {
    if message.chars().count() <= MAX_ERROR_CHARS {
        return message.to_owned();
    }
    let mut out: String = message.chars().take(MAX_ERROR_CHARS - 1).collect();
    out.push('…');
    out
}

// ---------------------------------------------------------------- parsing

/// A JSON value that keeps every member of an object, in order and with
/// duplicates, so that the schema check sees the keys as written. Numbers
/// are kept as text: integers in decimal, any other number as Rust's `{:?}`
/// of its `f64` value.
enum Json {
    Null,
    Bool(bool),
    Num(String),
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
            Json::Num(_) => "a number",
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
        Ok(Json::Num(n.to_string()))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Num(n.to_string()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Json, E> {
        Ok(Json::Num(format!("{n:?}")))
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

/// Refuses JSON whitespace outside strings.
fn check_compact(json: &str) -> Result<(), LineError> {
    let (mut in_string, mut escaped) = (false, false);
    for (i, b) in json.bytes().enumerate() {
        match b {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b' ' | b'\t' | b'\n' | b'\r' if !in_string => {
                return Err(LineError::Whitespace(PREFIX.len() + i));
            }
            _ => {}
        }
    }
    Ok(())
}

const TOP_KEYS: [&str; 11] = [
    "head",
    "mergeBase",
    "verdict",
    "error",
    "configEdited",
    "counts",
    "tests",
    "deletedTests",
    "notCollected",
    "truncated",
    "certificate",
];
const TEST_KEYS: [&str; 6] = ["file", "name", "class", "base", "rerun", "head"];

/// The values of an object whose keys must be exactly `keys`, in order.
/// Reports a repeated key first, then an unknown one, then a missing one,
/// then the first key out of place.
fn fields<'j, const N: usize>(
    v: &'j Json,
    path: &str,
    keys: [&'static str; N],
) -> Result<[&'j Json; N], LineError> {
    let Json::Obj(m) = v else {
        return Err(wrong(v, path, "an object"));
    };
    let mut seen = HashSet::new();
    if let Some((k, _)) = m.iter().find(|(k, _)| !seen.insert(k.as_str())) {
        return Err(LineError::DuplicateKey(k.clone(), path.to_owned()));
    }
    if let Some((k, _)) = m.iter().find(|(k, _)| !keys.contains(&k.as_str())) {
        return Err(LineError::UnknownKey(k.clone(), path.to_owned()));
    }
    if let Some(k) = keys.iter().find(|k| !seen.contains(**k)) {
        return Err(LineError::MissingKey(k, path.to_owned()));
    }
    let mut out = [&NULL; N];
    for ((slot, (key, value)), expected) in out.iter_mut().zip(m).zip(keys) {
        if key != expected {
            return Err(LineError::OutOfOrder(
                key.clone(),
                expected,
                path.to_owned(),
            ));
        }
        *slot = value;
    }
    Ok(out)
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
    let Json::Num(raw) = v else {
        return Err(wrong(v, field, "a non-negative integer"));
    };
    match raw.parse::<u64>() {
        Ok(n) if raw.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(LineError::BadCount(field.to_owned(), raw.clone())),
    }
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
    let [file, name, class, base, rerun, head] = fields(v, path, TEST_KEYS)?;
    Ok(TestLine {
        file: string(file, &format!("{path}.file"))?,
        name: string(name, &format!("{path}.name"))?,
        class: named(class, &format!("{path}.class"))?,
        base: named(base, &format!("{path}.base"))?,
        rerun: named(rerun, &format!("{path}.rerun"))?,
        head: named(head, &format!("{path}.head"))?,
    })
}

fn decode(json: &Json) -> Result<ResultLine, LineError> {
    let [
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
    ] = fields(json, "", TOP_KEYS)?;
    let error = match error {
        Json::Null => None,
        Json::Str(s) => Some(s.clone()),
        other => return Err(wrong(other, "error", "null or a string")),
    };
    let counts = fields(c, "counts", TestClass::NAMES)?;
    let mut n = [0; 5];
    for (i, key) in TestClass::NAMES.iter().enumerate() {
        n[i] = count(counts[i], &format!("counts.{key}"))?;
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
        certificate: match cert {
            Json::Null => None,
            _ => return Err(LineError::CertificateNotNull),
        },
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
    check_compact(json)?;
    let value = serde_json::from_str::<Json>(json).map_err(|e| {
        let msg = e.to_string();
        let msg = msg
            .rsplit_once(" at line ")
            .map_or(msg.as_str(), |(m, _)| m);
        LineError::Json(PREFIX.len() + e.column().saturating_sub(1), msg.to_owned())
    })?;
    if !matches!(value, Json::Obj(_)) {
        return Err(LineError::Json(PREFIX.len(), "expected an object".into()));
    }
    decode(&value)
}

// ---------------------------------------------------------------- formatting

/// `s` as a JSON string: `"`, `\` and control characters escaped, the
/// rest as UTF-8. (Encoding a `str` cannot fail.)
fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn test_json(t: &TestLine) -> String {
    let (file, name) = (json_str(&t.file), json_str(&t.name));
    let (class, base, rerun, head) = (t.class, t.base, t.rerun, t.head);
    format!(
        "{{\"file\":{file},\"name\":{name},\"class\":\"{class}\",\
         \"base\":\"{base}\",\"rerun\":\"{rerun}\",\"head\":\"{head}\"}}"
    )
}

/// Writes the line as it stands, without checks or truncation.
fn render(r: &ResultLine) -> String {
    let strings = |l: &[String]| l.iter().map(|s| json_str(s)).collect::<Vec<_>>().join(",");
    let tests: Vec<String> = r.tests.iter().map(test_json).collect();
    let counts = TestClass::ALL.map(|c| format!("\"{c}\":{}", r.counts.get(c)));
    if let Some(c) = &r.certificate {
        match *c {}
    }
    format!(
        "{PREFIX}{{\"head\":{},\"mergeBase\":{},\"verdict\":\"{}\",\"error\":{},\
         \"configEdited\":{},\"counts\":{{{}}},\"tests\":[{}],\"deletedTests\":[{}],\
         \"notCollected\":[{}],\"truncated\":{},\"certificate\":null}}",
        json_str(&r.head),
        json_str(&r.merge_base),
        r.verdict,
        r.error.as_deref().map_or("null".to_owned(), json_str),
        r.config_edited,
        counts.join(","),
        tests.join(","),
        strings(&r.deleted_tests),
        strings(&r.not_collected),
        r.truncated,
    )
}

/// Checks `result` and drops entries until its line fits; returns the
/// result as written and its line.
fn fit(result: &ResultLine) -> Result<(ResultLine, String), LineError> {
    result.validate()?;
    let line = render(result);
    if line.len() <= MAX_LINE_BYTES {
        return Ok((result.clone(), line));
    }
    // The length once `truncated` is true (`true` is a byte shorter). At
    // least one entry goes, even when that byte alone would make it fit.
    let mut len = line.len() - usize::from(!result.truncated);
    let mut dropped = false;
    let mut out = result.clone();
    out.truncated = true;
    let repro = |i: &usize| result.tests[*i].class == TestClass::Reproduces;
    let n = result.tests.len();
    let order = (0..n)
        .rev()
        .filter(|i| !repro(i))
        .chain((0..n).rev().filter(repro));
    let mut keep = vec![true; n];
    let mut kept = n;
    for i in order {
        if dropped && len <= MAX_LINE_BYTES {
            break;
        }
        len -= test_json(&result.tests[i]).len() + usize::from(kept > 1);
        (kept, keep[i], dropped) = (kept - 1, false, true);
    }
    let mut flags = keep.iter();
    out.tests.retain(|_| flags.next() == Some(&true));
    for list in [&mut out.deleted_tests, &mut out.not_collected] {
        while !dropped || len > MAX_LINE_BYTES {
            let Some(s) = list.pop() else { break };
            len -= json_str(&s).len() + usize::from(!list.is_empty());
            dropped = true;
        }
    }
    let line = render(&out);
    if line.len() > MAX_LINE_BYTES {
        return Err(LineError::TooLong(line.len()));
    }
    Ok((out, line))
}

/// The result exactly as [`format_line`] writes it: `result` itself when
/// its line fits, else a copy with entries dropped and `truncated` set.
pub fn truncate_to_fit(result: &ResultLine) -> Result<ResultLine, LineError> {
    fit(result).map(|(r, _)| r)
}

/// Writes the compact line for `result`, without a newline, refusing any
/// result that [`parse_line`] would refuse. A line that would be over
/// [`MAX_LINE_BYTES`] loses entries one at a time, last first: `tests`
/// entries of other classes than `reproduces`, then `reproduces` entries,
/// then `deletedTests`, then `notCollected`, until it fits; `truncated`
/// becomes true and the counts stay as they are.
pub fn format_line(result: &ResultLine) -> Result<String, LineError> {
    fit(result).map(|(_, line)| line)
}

// ---------------------------------------------------------------- pretty

fn printable(s: &str) -> String {
    let shown = |c: char| {
        if c.is_control() {
            c.escape_default().to_string()
        } else {
            c.to_string()
        }
    };
    s.chars().map(shown).collect()
}

/// A rendering of a result for people, over several lines: verdict, SHAs,
/// counts, a table of the listed tests and the two path lists. Control
/// characters in names and messages are shown escaped.
pub fn pretty(result: &ResultLine) -> String {
    let r = result;
    let mut out = format!("verdict:        {}\n", r.verdict);
    if let Some(msg) = &r.error {
        out += &format!("error:          {}\n", printable(msg));
    }
    let counts = TestClass::ALL.map(|c| format!("{c} {}", r.counts.get(c)));
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
        let test = printable(&format!("{}::{}", t.file, t.name));
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const BASE: &str = "1f0e3d9c8b7a69584736251403f2e1d0c9b8a796";
    /// The first valid example of the schema doc.
    const VALID: &str = r#"repromin/v1 {"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796","verdict":"reproduced","error":null,"configEdited":false,"counts":{"reproduces":1,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0},"tests":[{"file":"tests/test_parse.py","name":"TestParse::test_empty_input","class":"reproduces","base":"failed","rerun":"failed","head":"passed"},{"file":"tests/test_parse.py","name":"TestParse::test_ascii","class":"passes-on-base","base":"passed","rerun":"passed","head":"passed"}],"deletedTests":["tests/test_old.py"],"notCollected":[],"truncated":false,"certificate":null}"#;

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
"certificate":null ⟹ "certificate":{} ⟹ `certificate` must be null in repromin/v1
"certificate":null ⟹ "certificate":false ⟹ `certificate` must be null
"#;

    fn sub(from: &str, to: &str) -> String {
        assert!(VALID.contains(from), "`{from}` is not in the valid line");
        VALID.replacen(from, to, 1)
    }

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
        for case in REFUSALS.lines().filter(|l| !l.is_empty()) {
            let parts: Vec<&str> = case.splitn(3, " ⟹ ").collect();
            assert_eq!(parts.len(), 3, "bad case: {case}");
            let to = parts[1]
                .replace('␍', "\r")
                .replace('␊', "\n")
                .replace('␉', "\t");
            refused(&sub(parts[0], &to.replace('␁', "\u{1}")), parts[2]);
        }
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

    fn test(name: &str, class: TestClass) -> TestLine {
        let (base, head) = match class {
            TestClass::Reproduces => (SideStatus::Failed, SideStatus::Passed),
            TestClass::PassesOnBase => (SideStatus::Passed, SideStatus::Passed),
            TestClass::NewApi => (SideStatus::LoadError, SideStatus::Passed),
            TestClass::FailsOnHead => (SideStatus::Failed, SideStatus::Failed),
            TestClass::NotRun => (SideStatus::Skipped, SideStatus::Absent),
        };
        let file = "tests/test_x.py".to_owned();
        TestLine {
            file,
            name: name.into(),
            class,
            base,
            rerun: base,
            head,
        }
    }

    fn result(tests: Vec<TestLine>) -> ResultLine {
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
        }
    }

    #[test]
    fn formatter_refuses_what_the_parser_refuses() {
        let good = result(vec![test("t", TestClass::Reproduces)]);
        type Mutation = fn(&mut ResultLine);
        let bad: [(Mutation, &str); 7] = [
            (|r| r.head = "4b825dc".into(), "`head` must"),
            (|r| r.merge_base = BASE.to_uppercase(), "`mergeBase`"),
            (|r| r.tests[0].class = TestClass::NewApi, "`new-api`"),
            (|r| r.error = Some("x".into()), "`error` must be null"),
            (|r| r.verdict = Verdict::Error, "`error` must be a"),
            (|r| r.counts.not_run = 4, "`truncated` is false"),
            (|r| r.counts.reproduces = 0, "verdict `reproduced`"),
        ];
        for (mutate, want) in bad {
            let mut r = good.clone();
            mutate(&mut r);
            let e = format_line(&r).expect_err(want);
            assert!(e.to_string().contains(want), "wanted {want}, got {e}");
            assert_eq!(parse_line(&render(&r)).map(|_| ()), Err(e));
        }
        assert!(format_line(&good).is_ok());
    }

    /// A small deterministic generator (xorshift) for round-trip tests.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        fn text(&mut self, max: u64) -> String {
            const BITS: [&str; 20] = [
                "a", "Z", "_", "::", "/", " ", "\"", "\\", "\n", "\t", "\u{0}", "\u{1f}", "\u{7f}",
                "é", "✓", "🦀", "\u{2028}", "[", "{", "}",
            ];
            let len = self.below(max + 1);
            (0..len).map(|_| BITS[self.below(20) as usize]).collect()
        }

        fn result(&mut self) -> ResultLine {
            let big = self.below(4) == 0;
            let (n, width) = if big {
                (self.below(400), 120)
            } else {
                (self.below(8), 12)
            };
            let mut tests = vec![];
            for _ in 0..n {
                let mut t = test(&self.text(width), TestClass::ALL[self.below(5) as usize]);
                t.file = format!("tests/{}.py", self.text(width / 4));
                t.rerun = SideStatus::ALL[self.below(5) as usize];
                tests.push(t);
            }
            let mut r = result(tests);
            r.config_edited = self.below(2) == 0;
            let lists = if big { 60 } else { 3 };
            r.deleted_tests = (0..self.below(lists)).map(|_| self.text(width)).collect();
            r.not_collected = (0..self.below(lists)).map(|_| self.text(width)).collect();
            if self.below(5) == 0 {
                (r.verdict, r.error) = (Verdict::Error, Some(clip_error(&self.text(400))));
            }
            r
        }
    }

    /// Whether `part` keeps a prefix of the entries of `whole` that `pred` picks.
    fn keeps_prefix<T: PartialEq>(whole: &[T], part: &[T], pred: impl Fn(&T) -> bool) -> bool {
        let w: Vec<&T> = whole.iter().filter(|t| pred(t)).collect();
        let p: Vec<&T> = part.iter().filter(|t| pred(t)).collect();
        w.starts_with(&p)
    }

    #[test]
    fn generated_results_round_trip() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut cut = 0;
        for _ in 0..400 {
            let x = rng.result();
            let line = format_line(&x).expect("formats");
            assert!(line.len() <= MAX_LINE_BYTES && !line.contains('\n'));
            let back = parse_line(&line).expect("parses");
            assert_eq!(Ok(&back), truncate_to_fit(&x).as_ref());
            assert_eq!(format_line(&back).as_deref(), Ok(line.as_str()));
            assert_eq!(
                (back.counts, back.verdict, &back.error),
                (x.counts, x.verdict, &x.error)
            );
            if render(&x).len() <= MAX_LINE_BYTES {
                assert_eq!(back, x);
                continue;
            }
            cut += 1;
            let repro = |t: &TestLine| t.class == TestClass::Reproduces;
            let size =
                |r: &ResultLine| r.tests.len() + r.deleted_tests.len() + r.not_collected.len();
            assert!(back.truncated && size(&back) < size(&x));
            assert!(keeps_prefix(&x.tests, &back.tests, repro));
            assert!(keeps_prefix(&x.tests, &back.tests, |t| !repro(t)));
            let kept_repro = back.tests.iter().filter(|t| repro(t)).count();
            if kept_repro < x.tests.iter().filter(|t| repro(t)).count() {
                assert!(back.tests.iter().all(repro), "others go before reproduces");
            }
            assert!(x.deleted_tests.starts_with(&back.deleted_tests));
            assert!(x.not_collected.starts_with(&back.not_collected));
            assert!(back.deleted_tests == x.deleted_tests || back.tests.is_empty());
            assert!(back.not_collected == x.not_collected || back.deleted_tests.is_empty());
        }
        assert!(cut > 20, "only {cut} results needed truncating");
    }

    #[test]
    fn five_hundred_long_tests_keep_reproduces_first() {
        let class = |i: usize| match i % 50 {
            7 => TestClass::Reproduces,
            _ => TestClass::ALL[1 + i % 4],
        };
        let tests = (0..500).map(|i| test(&format!("{i:03}{}", "n".repeat(97)), class(i)));
        let x = result(tests.collect());
        let line = format_line(&x).expect("formats");
        assert!(line.len() <= MAX_LINE_BYTES);
        let back = parse_line(&line).expect("parses");
        assert!(back.truncated);
        assert_eq!((back.counts, back.counts.reproduces), (x.counts, 10));
        let (repro, others): (Vec<&TestLine>, Vec<&TestLine>) = back
            .tests
            .iter()
            .partition(|t| t.class == TestClass::Reproduces);
        assert_eq!(repro.len(), 10, "every reproduces entry is kept");
        let first: Vec<&TestLine> = x
            .tests
            .iter()
            .filter(|t| t.class != TestClass::Reproduces)
            .collect();
        assert!(!others.is_empty() && first.starts_with(&others));
    }

    #[test]
    fn path_lists_go_after_tests() {
        let mut x = result(vec![test(&"r".repeat(3000), TestClass::Reproduces)]);
        x.deleted_tests = (0..80)
            .map(|i| format!("tests/deleted_{i:02}_{}.py", "d".repeat(40)))
            .collect();
        x.not_collected = vec!["tests/nc.py".into()];
        let back = parse_line(&format_line(&x).expect("formats")).expect("parses");
        assert!(back.truncated && back.tests.is_empty());
        assert!(!back.deleted_tests.is_empty() && back.deleted_tests.len() < 80);
        assert_eq!(back.not_collected, x.not_collected);
        // A test that no line can hold is dropped, even a `reproduces` one.
        let huge = result(vec![test(&"r".repeat(5000), TestClass::Reproduces)]);
        let back = parse_line(&format_line(&huge).expect("formats")).expect("parses");
        assert!(back.truncated && back.tests.is_empty() && back.counts.reproduces == 1);
    }

    #[test]
    fn the_limit_is_inclusive() {
        let mut x = result(vec![]);
        let room = MAX_LINE_BYTES - render(&x).len() - 2;
        x.not_collected = vec!["p".repeat(room)];
        let line = format_line(&x).expect("formats");
        assert_eq!(
            (line.len(), parse_line(&line)),
            (MAX_LINE_BYTES, Ok(x.clone()))
        );
        x.not_collected[0].push('p');
        assert_eq!(parse_line(&render(&x)), Err(LineError::TooLong(4097)));
        let back = parse_line(&format_line(&x).expect("formats")).expect("parses");
        assert!(back.truncated && back.not_collected.is_empty());
    }

    #[test]
    fn the_largest_fixed_part_fits() {
        let mut x = result(vec![]);
        (x.verdict, x.error) = (Verdict::Error, Some("\u{1}".repeat(MAX_ERROR_CHARS)));
        x.counts = Counts::from_fn(|_| u64::MAX);
        x.truncated = true;
        x.deleted_tests = vec!["d".repeat(5000)];
        x.not_collected = vec!["n".repeat(5000)];
        let line = format_line(&x).expect("formats");
        assert_eq!(line.len(), 2233, "the longest line with empty lists");
        let back = parse_line(&line).expect("parses");
        assert!(back.deleted_tests.is_empty() && back.not_collected.is_empty());
        assert_eq!(back.counts, x.counts);
        assert_eq!(
            clip_error(&"é".repeat(1000)).chars().count(),
            MAX_ERROR_CHARS
        );
        assert_eq!(clip_error("short"), "short");
    }

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
        assert!(!text.contains('\u{1b}'));
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
    }
}
