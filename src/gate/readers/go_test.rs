//! The event stream of `go test -json`, and the map from Go packages to the selected
//! `_test.go` files that gotestsum's JUnit also needs.

use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use super::common::{
    Builder, Files, Format, MAX_MESSAGE, ReadError, json_position, malformed, regex,
};
use crate::gate::test_report::Status;

pub(super) static GO_MARKER: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP))"));

/// Maps Go package import paths to the selected `_test.go` files of their directories.
///
/// The module path is guessed once per report: the package and directory sharing the most
/// trailing path segments fix both the module path and the directory the module lives in.
/// Without such a pair, a selected file at the root makes the shortest package the root one.
pub(super) struct GoMap {
    /// (directory, file) for every selected `_test.go` file, in path order.
    files: Vec<(String, String)>,
    /// The module path and the module's directory in the tree, once known.
    module: Option<(String, String)>,
}

impl GoMap {
    pub(super) fn new<'p>(files: &Files, packages: impl Iterator<Item = &'p str>) -> Self {
        let parent = |f: &str| f.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let tests = files.pick(|f| f.ends_with("_test.go"));
        let files: Vec<_> = tests.into_iter().map(|f| (parent(&f), f)).collect();
        // Drops the last `n` segments of a path.
        let head = |s: &str, n: usize| s.rsplitn(n + 1, '/').nth(n).unwrap_or("").to_string();
        let mut best: Option<(usize, String, String)> = None;
        let mut shortest: Option<&str> = None;
        for pkg in packages.filter(|p| !p.is_empty() && !p.contains(char::is_whitespace)) {
            shortest = shortest.filter(|s| s.len() <= pkg.len()).or(Some(pkg));
            let p: Vec<&str> = pkg.rsplit('/').collect();
            for (dir, _) in files.iter().filter(|(d, _)| !d.is_empty()) {
                let d: Vec<&str> = dir.rsplit('/').collect();
                let n = p.iter().zip(&d).take_while(|(a, b)| a == b).count();
                if n > 0 && best.as_ref().is_none_or(|(m, ..)| n > *m) {
                    best = Some((n, head(pkg, n), head(dir, n)));
                }
            }
        }
        let root_file = files.iter().any(|(d, _)| d.is_empty());
        let module = match best {
            Some((_, module, dir)) => Some((module, dir)),
            None if root_file => shortest.map(|s| (s.to_string(), String::new())),
            None => None,
        };
        GoMap { files, module }
    }

    pub(super) fn package_files(&self, pkg: &str) -> Vec<String> {
        let Some((module, base)) = &self.module else {
            return Vec::new();
        };
        let rel = match pkg.strip_prefix(module.as_str()) {
            Some(r) if module.is_empty() || r.is_empty() || r.starts_with('/') => {
                r.strip_prefix('/').unwrap_or(r)
            }
            _ => return Vec::new(),
        };
        let dir = format!("{base}/{rel}");
        let hit = self
            .files
            .iter()
            .filter(|(d, _)| d == dir.trim_matches('/'));
        hit.map(|(_, f)| f.clone()).collect()
    }
}

// JUnit XML ----------------------------------------------------------------------------------
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct GoEvent {
    action: String,
    package: Option<String>,
    import_path: Option<String>,
    test: Option<String>,
    output: Option<String>,
    failed_build: Option<String>,
}

#[derive(Default)]
pub(super) struct GoPackage {
    /// Test name, then its outcome and its output.
    tests: Vec<(String, (Option<Status>, String))>,
    failed: bool,
    build_failed: bool,
    undefined: Option<String>,
}

impl GoPackage {
    fn build_output(&mut self, line: &str) {
        self.build_failed |= line.contains("[build failed]") || line.contains("[setup failed]");
        if line.contains("undefined:") && self.undefined.is_none() {
            self.undefined = Some(line.trim().to_string());
        }
    }
}

/// The value stored under `key`, added in order when new.
pub(super) fn entry<'v, T: Default>(v: &'v mut Vec<(String, T)>, key: &str) -> &'v mut T {
    let i = match v.iter().position(|(k, _)| k == key) {
        Some(i) => i,
        None => {
            v.push((key.to_string(), T::default()));
            v.len() - 1
        }
    };
    &mut v[i].1
}

/// `go test -json`. A package's tests all go to the first selected `_test.go` file of its
/// directory (the stream does not say which file holds a test), and its other selected
/// files are listed with no tests of their own, so that none of them counts as missing; a
/// failed build becomes the load error of every selected file of the package, with the
/// first `undefined:` line.
pub(super) fn read_go_json(text: &str, files: &Files) -> Result<Builder, ReadError> {
    let mut packages: Vec<(String, GoPackage)> = Vec::new();
    let mut plain_package = String::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim().trim_start_matches('\u{feff}');
        if !line.starts_with('{') {
            // Older go versions print build errors as plain text on stderr.
            if let Some(header) = line.strip_prefix("# ") {
                plain_package = header.split(' ').next().unwrap_or(header).to_string();
            } else if !plain_package.is_empty() {
                entry(&mut packages, &plain_package).build_output(line);
            }
            continue;
        }
        let event: GoEvent = serde_json::from_str(line)
            .map_err(|e| malformed(Format::GoTestJson, json_position(&e, n + 1)))?;
        let raw = event.package.or(event.import_path).unwrap_or_default();
        let name = raw.split(' ').next().unwrap_or(&raw);
        if name.is_empty() {
            continue;
        }
        let pkg = entry(&mut packages, name);
        let output = event.output.as_deref().unwrap_or("");
        match (event.action.as_str(), event.test) {
            ("build-output", _) | ("output", None) => pkg.build_output(output),
            ("build-fail", _) => pkg.build_failed = true,
            ("fail", None) => {
                pkg.failed = true;
                pkg.build_failed |= event.failed_build.is_some();
            }
            (action, Some(test)) => {
                let (status, log) = entry(&mut pkg.tests, &test);
                match action {
                    "pass" => *status = Some(Status::Passed),
                    "fail" => *status = Some(Status::Failed),
                    "skip" => *status = Some(Status::Skipped),
                    "output" if log.len() < MAX_MESSAGE && !GO_MARKER.is_match(output) => {
                        log.push_str(output)
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let go = GoMap::new(files, packages.iter().map(|(n, _)| n.as_str()));
    let mut out = Builder::default();
    for (name, pkg) in &packages {
        let targets = go.package_files(name);
        let Some(first) = targets.first() else {
            continue;
        };
        // A failed build: an event says so, or (go 1.19 to 1.23) the plain
        // `FAIL\tPKG [build failed]` line, with no `fail` event at all.
        if pkg.build_failed || (pkg.failed && pkg.undefined.is_some()) {
            out.load_errors(&targets, pkg.undefined.as_deref().unwrap_or("build failed"));
            continue;
        }
        for (test, (status, log)) in &pkg.tests {
            // A test that started but never finished (a panic, a timeout) counts as failed.
            let status = status.unwrap_or(Status::Failed);
            let log = Some(log.clone()).filter(|_| status == Status::Failed);
            out.test(first, test.clone(), status, log.into_iter().collect());
        }
        if !pkg.tests.is_empty() {
            for other in &targets[1..] {
                out.file(other);
            }
        }
    }
    Ok(out)
}
