//! Node: the package manager from the lockfile, and the test runner from what the test
//! files import, then the manifest.
//!
//! The runner is decided by the first evidence that names one:
//! 1. the imports of the merge base's test files (`vitest`, `@jest/globals`, `node:test`,
//!    `mocha`, `ava`, `tap`), the most common one winning;
//! 2. the `test` script (`vitest`, `jest`, `node --test` also behind a wrapper such as
//!    `c8 node --test`, `borp` or `bnt`, `mocha`, `ava`, `tap`);
//! 3. `devDependencies` and `dependencies`;
//! 4. a jest configuration file (jest's globals need no import);
//! 5. otherwise node:test, which ships with Node.
//!
//! Coverage is turned off in the commands (`--coverage=false`, `--coverage.enabled=false`),
//! because a coverage threshold fails a run of a few tests and jest then writes no report.

use serde_json::Value;

use super::detection::{Detection, Read, config};
use super::workspace::{self, Found, Manager};
use crate::gate::config::ReportFormat;
use crate::gate::config::Unsupported;

/// The test files read for their imports, at most.
const READ_AT_MOST: usize = 40;

/// A JavaScript test runner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runner {
    Vitest,
    Jest,
    NodeTest,
    Mocha,
    Ava,
    Tap,
}

impl Runner {
    const ALL: [Runner; 6] = [
        Runner::Vitest,
        Runner::Jest,
        Runner::NodeTest,
        Runner::Mocha,
        Runner::Ava,
        Runner::Tap,
    ];

    fn name(self) -> &'static str {
        match self {
            Runner::Vitest => "vitest",
            Runner::Jest => "jest",
            Runner::NodeTest => "node:test",
            Runner::Mocha => "mocha",
            Runner::Ava => "ava",
            Runner::Tap => "tap",
        }
    }

    /// Whether a test file's text imports this runner.
    fn imported_by(self, text: &str) -> bool {
        let modules: &[&str] = match self {
            Runner::Vitest => &["vitest"],
            Runner::Jest => &["@jest/globals"],
            Runner::NodeTest => &["node:test"],
            Runner::Mocha => &["mocha"],
            Runner::Ava => &["ava"],
            Runner::Tap => &["tap"],
        };
        modules.iter().any(|m| {
            ['\'', '"'].iter().any(|q| {
                let quoted = format!("{q}{m}{q}");
                text.match_indices(&quoted).any(|(at, _)| {
                    let before = text[..at].trim_end();
                    before.ends_with("from")
                        || before.ends_with("require(")
                        || before.ends_with("import")
                })
            })
        })
    }

    /// Whether a `test` script runs this runner.
    fn run_by_script(self, script: &str) -> bool {
        let words: Vec<&str> = script
            .split(|c: char| c.is_whitespace() || matches!(c, '&' | ';' | '|' | '(' | ')'))
            .filter(|w| !w.is_empty())
            .collect();
        let has_word = |w: &str| {
            words
                .iter()
                .any(|x| *x == w || x.ends_with(&format!("/{w}")))
        };
        match self {
            Runner::Vitest => has_word("vitest"),
            Runner::Jest => has_word("jest"),
            Runner::NodeTest => {
                words.windows(2).any(|p| p[0] == "node" && p[1] == "--test")
                    || has_word("borp")
                    || has_word("bnt")
            }
            Runner::Mocha => has_word("mocha"),
            Runner::Ava => has_word("ava"),
            Runner::Tap => has_word("tap"),
        }
    }

    /// The package whose dependency declares this runner.
    fn package(self) -> Option<&'static str> {
        match self {
            Runner::Vitest => Some("vitest"),
            Runner::Jest => Some("jest"),
            Runner::NodeTest => None,
            Runner::Mocha => Some("mocha"),
            Runner::Ava => Some("ava"),
            Runner::Tap => Some("tap"),
        }
    }
}

/// Whether `path` looks like a JavaScript or TypeScript test file.
fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let script = [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx"]
        .iter()
        .any(|ext| name.ends_with(ext));
    script
        && !path.contains("node_modules/")
        && (name.contains(".test.")
            || name.contains(".spec.")
            || path.starts_with("test/")
            || path.starts_with("tests/")
            || path.contains("/__tests__/")
            || path.starts_with("__tests__/"))
        && !path.contains("/fixtures/")
}

/// The runner and the sentence that says why.
fn runner(files: &[String], read: Read<'_>, manifest: &Value) -> (Runner, String) {
    let mut counts = [0usize; Runner::ALL.len()];
    let mut read_files = 0;
    for file in files.iter().filter(|f| is_test_file(f)).take(READ_AT_MOST) {
        read_files += 1;
        let text = read(file);
        for (i, runner) in Runner::ALL.iter().enumerate() {
            if runner.imported_by(&text) {
                counts[i] += 1;
            }
        }
    }
    if let Some((i, n)) = counts
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .max_by_key(|(i, n)| (**n, usize::MAX - i))
    {
        let runner = Runner::ALL[i];
        return (
            runner,
            format!(
                "{} test files of {read_files} read import {}",
                n,
                quote_module(runner)
            ),
        );
    }
    let script = manifest
        .pointer("/scripts/test")
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Some(runner) = Runner::ALL.into_iter().find(|r| r.run_by_script(script)) {
        return (runner, format!("the test script runs it: `{script}`"));
    }
    for table in ["devDependencies", "dependencies"] {
        for runner in Runner::ALL {
            if let Some(package) = runner.package()
                && manifest.pointer(&format!("/{table}/{package}")).is_some()
            {
                return (runner, format!("package.json {table} has {package}"));
            }
        }
    }
    let jest_config = files.iter().find(|f| {
        let name = f.rsplit('/').next().unwrap_or(f);
        name.starts_with("jest.config.")
    });
    if let Some(file) = jest_config {
        return (Runner::Jest, format!("{file} configures it"));
    }
    if manifest.get("jest").is_some() {
        return (Runner::Jest, "package.json has a jest key".into());
    }
    (
        Runner::NodeTest,
        "no test runner is named anywhere, and node:test ships with Node".into(),
    )
}

fn quote_module(runner: Runner) -> &'static str {
    match runner {
        Runner::Jest => "@jest/globals",
        other => other.name(),
    }
}

/// The install command from the lockfile, a sentence that says which, and the package
/// manager it runs.
fn install(files: &[String], read: Read<'_>, manifest: &Value) -> (String, String, Manager) {
    let has = |name: &str| files.iter().any(|f| f == name);
    let pinned = |manager: &str| {
        manifest
            .get("packageManager")
            .and_then(Value::as_str)
            .and_then(|pm| pm.strip_prefix(&format!("{manager}@")))
            .map(|v| v.split('+').next().unwrap_or(v).to_string())
            .filter(|v| {
                !v.is_empty()
                    && v.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b".-".contains(&b))
            })
    };
    if has("pnpm-lock.yaml") {
        let (version, why) = match pinned("pnpm") {
            Some(v) => (v.clone(), format!("packageManager pins pnpm@{v}")),
            None => {
                let lock = read("pnpm-lock.yaml");
                let lockfile = lock
                    .lines()
                    .find_map(|l| l.strip_prefix("lockfileVersion:"))
                    .map(|v| v.trim().trim_matches(['\'', '"']).to_string())
                    .unwrap_or_default();
                let major = match lockfile.split('.').next().unwrap_or("") {
                    "9" => "10",
                    "6" => "8",
                    "5" => "7",
                    _ => "10",
                };
                (
                    major.to_string(),
                    format!(
                        "pnpm-lock.yaml is lockfile version {lockfile:?}, which pnpm {major} reads"
                    ),
                )
            }
        };
        return (
            format!("npx -y pnpm@{version} install --frozen-lockfile"),
            format!("pnpm {version} ({why})"),
            Manager::Pnpm(version),
        );
    }
    if has("yarn.lock") {
        let berry = has(".yarnrc.yml") || read("yarn.lock").contains("__metadata:");
        if berry {
            let version = pinned("yarn").unwrap_or_else(|| "stable".into());
            return (
                format!("corepack yarn@{version} install --immutable"),
                format!("yarn {version} through corepack (a yarn berry lockfile)"),
                Manager::YarnBerry(version),
            );
        }
        return (
            "npx -y yarn@1 install --frozen-lockfile".into(),
            "yarn 1 (a classic yarn.lock)".into(),
            Manager::YarnClassic,
        );
    }
    if has("package-lock.json") {
        return (
            "npm ci --no-audit --no-fund".into(),
            "npm ci (package-lock.json)".into(),
            Manager::Npm,
        );
    }
    (
        "npm install --no-audit --no-fund".into(),
        "npm install (no lockfile)".into(),
        Manager::Npm,
    )
}

/// The scripts that must run before the tests: `pretest`, and each `npm run X` (or pnpm's
/// or yarn's) that the `test` script runs before its runner, as in
/// `npm run generate && node --test`. A script that runs the `runner` itself (`npm run
/// test:unit` where `test:unit` is `borp …`) is the tests, not a step before them, and so
/// ends the list as the runner does. Run as the build step, with npm, which runs any
/// package manager's scripts. In a workspace, the root's build scripts (`build`,
/// `build:…`, `prebuild`) are left out and named in the sentence: the packages the tests
/// need are built on their own ([`workspace`]).
fn before_tests(
    manifest: &Value,
    runner: Runner,
    in_workspace: bool,
) -> Option<(Option<String>, String)> {
    let scripts = manifest.get("scripts")?;
    let has = |name: &str| scripts.get(name).and_then(Value::as_str).is_some();
    let runs_the_tests = |name: &str| {
        scripts
            .get(name)
            .and_then(Value::as_str)
            .is_some_and(|script| runner.run_by_script(script))
    };
    let mut names: Vec<String> = Vec::new();
    if has("pretest") {
        names.push("pretest".into());
    }
    let test = scripts.get("test").and_then(Value::as_str).unwrap_or("");
    for part in test.split("&&").map(str::trim) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let name = match words.as_slice() {
            ["npm" | "pnpm" | "yarn", "run" | "run-script", name] | ["pnpm" | "yarn", name] => {
                Some(*name)
            }
            _ => None,
        };
        match name {
            // The runner, through a script of its own.
            Some(name) if runs_the_tests(name) => break,
            Some(name) if name != "test" && has(name) && !names.iter().any(|n| n == name) => {
                names.push(name.to_string());
            }
            Some(_) => {}
            // The runner: what follows it runs after the tests.
            None => break,
        }
    }
    if names.is_empty() {
        return None;
    }
    let safe = |n: &String| {
        n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b":._-".contains(&b))
    };
    names.retain(safe);
    let is_build = |n: &String| n == "build" || n == "prebuild" || n.starts_with("build:");
    let left_out: Vec<String> = if in_workspace {
        names.iter().filter(|n| is_build(n)).cloned().collect()
    } else {
        Vec::new()
    };
    names.retain(|n| !left_out.contains(n));
    let quoted = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut said = Vec::new();
    if !names.is_empty() {
        said.push(format!("before the tests, the scripts {}", quoted(&names)));
    }
    if !left_out.is_empty() {
        let verb = if left_out.len() == 1 { "is" } else { "are" };
        said.push(format!(
            "the root's {} before the tests {verb} not run in a workspace",
            quoted(&left_out)
        ));
    }
    let command: Vec<String> = names
        .iter()
        .map(|n| format!("npm run --silent {n}"))
        .collect();
    let command = (!command.is_empty()).then(|| command.join(" && "));
    Some((command, said.join("; ")))
}

/// The Node defaults.
///
/// # Errors
/// The runner is one with no zero-config support (ava, tap).
pub(super) fn detect(files: &[String], read: Read<'_>) -> Result<Detection, Unsupported> {
    let manifest: Value = serde_json::from_str(&read("package.json")).unwrap_or(Value::Null);
    let (runner, why) = runner(files, read, &manifest);
    let (install, installed, manager) = install(files, read, &manifest);
    let workspace = workspace::detect(files, read, &manifest, manager);
    let script_tests = [
        "**/*.test.ts",
        "**/*.test.js",
        "**/*.test.mts",
        "**/*.test.mjs",
        "**/*.test.cjs",
        "**/*.test.tsx",
        "**/*.test.jsx",
        "**/*.spec.ts",
        "**/*.spec.js",
        "**/*.spec.mjs",
        "**/*.spec.tsx",
        "**/__tests__/**/*.ts",
        "**/__tests__/**/*.js",
        "**/__tests__/**/*.tsx",
    ];
    let dir_tests = [
        "test/*.js",
        "test/*.mjs",
        "test/*.cjs",
        "test/*.ts",
        "test/*.mts",
        "tests/*.js",
        "tests/*.mjs",
        "tests/*.cjs",
        "tests/*.ts",
        "tests/*.mts",
    ];
    let mut tests: Vec<&str> = script_tests.to_vec();
    if matches!(runner, Runner::NodeTest | Runner::Mocha) {
        tests.extend(dir_tests);
    }
    let carry = [
        "test/**/fixtures/**",
        "tests/**/fixtures/**",
        "test/**/*.json",
        "tests/**/*.json",
        "**/__fixtures__/**",
    ];
    let (command, report) = match runner {
        Runner::Vitest => (
            "PATH=\"$PWD/node_modules/.bin:$PATH\" vitest run --coverage.enabled=false --reporter=junit --outputFile={report} {tests}",
            ReportFormat::Junit,
        ),
        Runner::Jest => (
            "PATH=\"$PWD/node_modules/.bin:$PATH\" jest --ci --coverage=false --json --outputFile={report} {tests}",
            ReportFormat::JestJson,
        ),
        Runner::NodeTest => (
            "node --test --test-reporter={node_reporter} --test-reporter-destination={report} {tests}",
            ReportFormat::NodeTest,
        ),
        Runner::Mocha => (
            "PATH=\"$PWD/node_modules/.bin:$PATH\" mocha --reporter xunit --reporter-option output={report} {tests}",
            ReportFormat::Junit,
        ),
        Runner::Ava | Runner::Tap => {
            return Err(Unsupported {
                ecosystem: "node",
                reason: format!(
                    "the tests run with {} ({why}), which has no zero-config report",
                    runner.name()
                ),
            });
        }
    };
    let mut config = config(&tests, &carry, &[&install], command, report);
    let mut notes = vec![
        format!("test runner {}: {why}", runner.name()),
        format!("install with {installed}"),
    ];
    let workspace = match workspace {
        Found::None => None,
        Found::Ignored(why) => {
            notes.push(format!("workspace ignored: {why}"));
            None
        }
        Found::Workspace(workspace, said) => {
            notes.push(said);
            Some(workspace)
        }
    };
    if let Some((build, said)) = before_tests(&manifest, runner, workspace.is_some()) {
        config.build = build;
        if !said.is_empty() {
            notes.push(said);
        }
    }
    Ok(Detection {
        config,
        ecosystem: "node",
        notes,
        workspace,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::detect::tests::{files, reader};

    fn detect_with(names: &[&str], contents: &[(&str, &str)]) -> Result<Detection, Unsupported> {
        let read = reader(contents);
        detect(&files(names), &read)
    }

    #[test]
    fn the_runner_comes_from_the_test_files_imports_first() {
        let found = detect_with(
            &[
                "package.json",
                "test/a.js",
                "test/b.mjs",
                "test/fixtures/x.js",
            ],
            &[
                (
                    "package.json",
                    r#"{"scripts":{"test":"bnt"},"devDependencies":{"vitest":"3"}}"#,
                ),
                ("test/a.js", "const { test } = require('node:test')\n"),
                (
                    "test/b.mjs",
                    "import test from \"node:test\";\nimport { vi } from 'vitest-like'\n",
                ),
            ],
        )
        .unwrap();
        assert_eq!(found.config.report, ReportFormat::NodeTest);
        assert_eq!(
            found.notes[0],
            "test runner node:test: 2 test files of 2 read import node:test"
        );
        assert!(found.config.tests.iter().any(|t| t == "test/*.js"));
    }

    #[test]
    fn a_wrapped_node_test_script_and_dependencies_decide_without_imports() {
        for (script, want) in [
            ("c8 node --test test/", ReportFormat::NodeTest),
            ("borp --coverage", ReportFormat::NodeTest),
            ("tsc && vitest run", ReportFormat::Junit),
            ("jest --coverage", ReportFormat::JestJson),
        ] {
            let manifest = format!(r#"{{"scripts":{{"test":"{script}"}}}}"#);
            let found = detect_with(&["package.json"], &[("package.json", &manifest)]).unwrap();
            assert_eq!(found.config.report, want, "{script}");
            assert!(found.notes[0].contains(script), "{:?}", found.notes);
        }
        let found = detect_with(
            &["package.json"],
            &[("package.json", r#"{"devDependencies":{"jest":"29"}}"#)],
        )
        .unwrap();
        assert!(found.config.command.contains("--coverage=false"));
        assert_eq!(
            found.notes[0],
            "test runner jest: package.json devDependencies has jest"
        );
        let found = detect_with(&["package.json", "jest.config.js", "src/a.test.js"], &[]).unwrap();
        assert_eq!(found.config.report, ReportFormat::JestJson);
        let found = detect_with(&["package.json"], &[("package.json", "{}")]).unwrap();
        assert_eq!(found.config.report, ReportFormat::NodeTest);
        let found = detect_with(
            &["package.json"],
            &[("package.json", r#"{"devDependencies":{"vitest":"3"}}"#)],
        )
        .unwrap();
        assert!(found.config.command.contains("--coverage.enabled=false"));
    }

    #[test]
    fn scripts_the_test_script_runs_first_are_the_build() {
        let manifest = r#"{"scripts":{"generate":"node gen.js","pretest":"tsc","test":"npm run generate && node --test && npm run lint","lint":"eslint ."}}"#;
        let found = detect_with(&["package.json"], &[("package.json", manifest)]).unwrap();
        assert_eq!(
            found.config.build.as_deref(),
            Some("npm run --silent pretest && npm run --silent generate")
        );
        assert_eq!(
            found.notes[2],
            "before the tests, the scripts `pretest`, `generate`"
        );
        // A script that runs the runner is the tests: it and what follows are not built.
        let chained = r#"{"scripts":{"generate":"node gen.js","test":"npm run generate && npm run test:unit && npm run test:typescript","test:unit":"borp -C --check-coverage --lines 100","test:typescript":"tstyche"}}"#;
        let found = detect_with(&["package.json"], &[("package.json", chained)]).unwrap();
        assert_eq!(
            found.config.build.as_deref(),
            Some("npm run --silent generate")
        );
        let only = r#"{"scripts":{"test":"npm run test:unit && npm run test:typescript","test:unit":"borp -C","test:typescript":"tstyche"}}"#;
        let found = detect_with(&["package.json"], &[("package.json", only)]).unwrap();
        assert_eq!(found.config.build, None);
        let plain = r#"{"scripts":{"test":"vitest run"}}"#;
        let found = detect_with(&["package.json"], &[("package.json", plain)]).unwrap();
        assert_eq!(found.config.build, None);
    }

    #[test]
    fn in_a_workspace_the_root_build_is_left_to_the_packages() {
        let manifest = r#"{"workspaces":["packages/*"],"scripts":{"build":"npm run build -ws","generate":"node gen.js","test":"npm run build && npm run generate && vitest run"}}"#;
        let found = detect_with(
            &["package.json", "packages/lib/package.json"],
            &[
                ("package.json", manifest),
                (
                    "packages/lib/package.json",
                    r#"{"name":"lib","scripts":{"build":"tsc"}}"#,
                ),
            ],
        )
        .unwrap();
        assert_eq!(
            found.config.build.as_deref(),
            Some("npm run --silent generate")
        );
        assert_eq!(
            found.notes[2..],
            [
                "npm workspace (package.json workspaces): 1 package, 1 with a build script; the root's build is not run, only the packages the selected tests need are built",
                "before the tests, the scripts `generate`; the root's `build` before the tests is not run in a workspace",
            ]
        );
        let workspace = found.workspace.unwrap();
        assert_eq!(workspace.packages[0].name, "lib");
        let ignored = detect_with(
            &["package.json", "pnpm-lock.yaml"],
            &[("package.json", manifest)],
        )
        .unwrap();
        assert!(ignored.workspace.is_none());
        assert_eq!(
            ignored.notes[2],
            "workspace ignored: package.json has workspaces, but pnpm reads them only from pnpm-workspace.yaml"
        );
        assert_eq!(
            ignored.config.build.as_deref(),
            Some("npm run --silent build && npm run --silent generate")
        );
    }

    #[test]
    fn ava_and_tap_are_refused_with_the_reason() {
        let err = detect_with(
            &["package.json", "test.js"],
            &[("package.json", r#"{"scripts":{"test":"ava"}}"#)],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "node project: the tests run with ava (the test script runs it: `ava`), which has no zero-config report; give the commands in .github/repromin.json"
        );
    }

    #[test]
    fn the_package_manager_follows_the_pin_the_lockfile_and_berry() {
        let pnpm = |manifest: &str, lock: &str| {
            detect_with(
                &["package.json", "pnpm-lock.yaml"],
                &[("package.json", manifest), ("pnpm-lock.yaml", lock)],
            )
            .unwrap()
        };
        let found = pnpm(
            r#"{"packageManager":"pnpm@10.28.0+sha512.abc"}"#,
            "lockfileVersion: '9.0'\n",
        );
        assert_eq!(
            found.config.install,
            ["npx -y pnpm@10.28.0 install --frozen-lockfile"]
        );
        assert!(found.notes[1].contains("pins pnpm@10.28.0"));
        let found = pnpm("{}", "lockfileVersion: '6.0'\n");
        assert_eq!(
            found.config.install,
            ["npx -y pnpm@8 install --frozen-lockfile"]
        );
        let found = pnpm(
            r#"{"packageManager":"pnpm@$(reboot)"}"#,
            "lockfileVersion: 5.4\n",
        );
        assert_eq!(
            found.config.install,
            ["npx -y pnpm@7 install --frozen-lockfile"]
        );
        let found = detect_with(
            &["package.json", "yarn.lock"],
            &[
                ("package.json", r#"{"packageManager":"yarn@4.5.0"}"#),
                ("yarn.lock", "__metadata:\n  version: 8\n"),
            ],
        )
        .unwrap();
        assert_eq!(
            found.config.install,
            ["corepack yarn@4.5.0 install --immutable"]
        );
        let found = detect_with(&["package.json", "yarn.lock"], &[]).unwrap();
        assert_eq!(
            found.config.install,
            ["npx -y yarn@1 install --frozen-lockfile"]
        );
    }
}
