//! Python: a virtual environment with pytest, the project installed in it, and the test
//! dependencies the project declares, so that a test importing `freezegun` or `hypothesis`
//! collects on both sides.
//!
//! The test dependencies are taken from the first of these that the merge base has:
//! 1. a PEP 735 `[dependency-groups]` group named `test`, `tests` or `dev` (with its
//!    `include-group`s), installed by name;
//! 2. a `[project.optional-dependencies]` extra named `test`, `tests`, `testing` or `dev`,
//!    installed with the project (`-e '.[test]'`);
//! 3. `tests/requirements.txt`, `requirements-test.txt` (and the `tests`, `dev`,
//!    `test-requirements.txt`, `requirements_test.txt` spellings), or `requirements/*.txt`
//!    files that name pytest, installed with `-r`;
//! 4. the `deps` of tox's `[testenv]` (or its first `[testenv:py…]`), in `tox.ini` or in
//!    pyproject.toml's `legacy_tox_ini`;
//! 5. a Poetry group (`[tool.poetry.group.test.dependencies]`, `tests`, `dev`, or the old
//!    `[tool.poetry.dev-dependencies]`) or a PDM `[tool.pdm.dev-dependencies]` group,
//!    installed by name (Poetry's version constraints are not pip's, so they are dropped).
//!
//! pyproject.toml is read with `toml_edit`; a file that does not parse is said so in the
//! notes and skipped.

use toml_edit::{DocumentMut, Item};

use super::detection::{Detection, Read, config};
use crate::gate::config::ReportFormat;
use crate::text::shell_quote;

/// Group and extra names that hold test dependencies, in order of preference.
const GROUPS: [&str; 3] = ["test", "tests", "dev"];
const EXTRAS: [&str; 4] = ["test", "tests", "testing", "dev"];
const REQUIREMENTS: [&str; 8] = [
    "tests/requirements.txt",
    "test/requirements.txt",
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements_test.txt",
    "test-requirements.txt",
    "requirements-dev.txt",
    "dev-requirements.txt",
];
const PIP: &str = ".venv/bin/python -m pip install -q";

/// The Python defaults, or `None` when nothing Python is there.
pub(super) fn detect(files: &[String], read: Read<'_>) -> Option<Detection> {
    let has = |name: &str| files.iter().any(|f| f == name);
    let markers = [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "pytest.ini",
        "tox.ini",
    ];
    let python = markers.iter().any(|f| has(f))
        || files.iter().any(|f| {
            let base = f.rsplit('/').next().unwrap_or(f);
            base.ends_with(".py") && (base.starts_with("test_") || base.ends_with("_test.py"))
        });
    if !python {
        return None;
    }
    let mut notes = Vec::new();
    let pyproject = if has("pyproject.toml") {
        match read("pyproject.toml").parse::<DocumentMut>() {
            Ok(doc) => Some(doc),
            Err(err) => {
                let first = err.to_string();
                let first = first.lines().next().unwrap_or("").to_string();
                notes.push(format!("pyproject.toml does not parse ({first}): not read"));
                None
            }
        }
    } else {
        None
    };
    let installable = has("setup.py")
        || pyproject
            .as_ref()
            .is_some_and(|doc| doc.get("project").is_some() || doc.get("build-system").is_some());
    let mut install = vec![
        "[ -d .venv ] || python3 -m venv .venv".to_string(),
        format!("{PIP} pytest"),
    ];
    let deps = test_dependencies(files, read, pyproject.as_ref(), installable);
    match (&deps, installable) {
        (Some(TestDeps::Extra(extra)), _) => {
            install.push(format!("{PIP} -e {}", shell_quote(&format!(".[{extra}]"))));
        }
        (_, true) => install.push(format!("{PIP} -e .")),
        (_, false) => {}
    }
    match &deps {
        Some(TestDeps::Packages { packages, .. }) if !packages.is_empty() => {
            let words: Vec<String> = packages.iter().map(|p| shell_quote(p)).collect();
            install.push(format!("{PIP} {}", words.join(" ")));
        }
        Some(TestDeps::Requirements(paths)) => {
            for path in paths {
                install.push(format!("{PIP} -r {}", shell_quote(path)));
            }
        }
        _ => {}
    }
    notes.push(if installable {
        "pytest in a .venv, with the project installed in it".to_string()
    } else {
        "pytest in a .venv (the project is not installable: no pyproject.toml [project] or setup.py)"
            .to_string()
    });
    notes.push(match &deps {
        Some(deps) => format!("test dependencies: {}", deps.describe()),
        None => {
            "no test dependencies declared (no test group, extra or requirements file)".to_string()
        }
    });
    let install: Vec<&str> = install.iter().map(String::as_str).collect();
    let config = config(
        &["**/test_*.py", "**/*_test.py"],
        &[
            "**/conftest.py",
            "tests/**/*.json",
            "tests/**/*.txt",
            "tests/**/data/**",
        ],
        &install,
        ".venv/bin/python -m pytest -p no:cacheprovider -q --junitxml={report} {tests}",
        ReportFormat::Junit,
    );
    Some(Detection {
        config,
        ecosystem: "python",
        notes,
        workspace: None,
    })
}

/// Where the test dependencies come from.
#[derive(Debug, PartialEq, Eq)]
enum TestDeps {
    /// Requirement strings to install by name, and where they were declared.
    Packages {
        /// The requirements.
        packages: Vec<String>,
        /// The table and group they came from.
        source: String,
    },
    /// An extra of the project.
    Extra(String),
    /// Requirement files.
    Requirements(Vec<String>),
}

impl TestDeps {
    fn describe(&self) -> String {
        match self {
            TestDeps::Packages { packages, source } => {
                format!("{source} ({})", packages.join(", "))
            }
            TestDeps::Extra(extra) => format!("the project's extra [{extra}]"),
            TestDeps::Requirements(paths) => paths.join(", "),
        }
    }
}

/// PEP 503 normalisation, which PEP 735 group and extra names follow.
fn normalise(name: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            dash = true;
        } else {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// The entry of `table` whose normalised name is `wanted`.
fn entry<'a>(table: Option<&'a Item>, wanted: &str) -> Option<(&'a str, &'a Item)> {
    table?
        .as_table_like()?
        .iter()
        .find(|(key, _)| normalise(key) == wanted)
}

fn test_dependencies(
    files: &[String],
    read: Read<'_>,
    pyproject: Option<&DocumentMut>,
    installable: bool,
) -> Option<TestDeps> {
    let doc = pyproject.map(DocumentMut::as_item);
    let at = |path: &[&str]| -> Option<&Item> {
        let mut item = doc?;
        for key in path {
            item = item.get(key)?;
        }
        Some(item)
    };
    let groups = at(&["dependency-groups"]);
    for name in GROUPS {
        if let Some((key, _)) = entry(groups, name) {
            let mut packages = Vec::new();
            group_requirements(groups, key, &mut packages, 0);
            return Some(TestDeps::Packages {
                packages,
                source: format!("[dependency-groups] {key}"),
            });
        }
    }
    if installable {
        let extras = at(&["project", "optional-dependencies"]);
        for name in EXTRAS {
            if let Some((key, _)) = entry(extras, name) {
                return Some(TestDeps::Extra(key.to_string()));
            }
        }
    }
    let has = |name: &str| files.iter().any(|f| f == name);
    let mut requirements: Vec<String> = REQUIREMENTS
        .iter()
        .filter(|name| has(name))
        .map(|name| (*name).to_string())
        .collect();
    requirements.extend(
        files
            .iter()
            .filter(|f| {
                f.strip_prefix("requirements/")
                    .is_some_and(|n| !n.contains('/') && n.ends_with(".txt"))
                    && read(f).contains("pytest")
            })
            .cloned(),
    );
    if !requirements.is_empty() {
        return Some(TestDeps::Requirements(requirements));
    }
    // tox's own file, or the same text kept in pyproject.toml as `legacy_tox_ini`.
    let tox = if has("tox.ini") {
        read("tox.ini")
    } else {
        at(&["tool", "tox", "legacy_tox_ini"])
            .and_then(Item::as_str)
            .unwrap_or_default()
            .to_string()
    };
    if !tox.is_empty() {
        let packages = tox_deps(&tox);
        if !packages.is_empty() {
            return Some(TestDeps::Packages {
                packages,
                source: "tox's [testenv] deps".into(),
            });
        }
    }
    let poetry = at(&["tool", "poetry", "group"]);
    for name in GROUPS {
        if let Some((key, group)) = entry(poetry, name) {
            return Some(TestDeps::Packages {
                packages: poetry_names(group.get("dependencies")),
                source: format!("[tool.poetry.group.{key}.dependencies]"),
            });
        }
    }
    if let Some(legacy) = at(&["tool", "poetry", "dev-dependencies"]) {
        return Some(TestDeps::Packages {
            packages: poetry_names(Some(legacy)),
            source: "[tool.poetry.dev-dependencies]".into(),
        });
    }
    let pdm = at(&["tool", "pdm", "dev-dependencies"]);
    for name in GROUPS {
        if let Some((key, group)) = entry(pdm, name) {
            return Some(TestDeps::Packages {
                packages: strings(group),
                source: format!("[tool.pdm.dev-dependencies] {key}"),
            });
        }
    }
    None
}

/// The strings of an array item.
fn strings(item: &Item) -> Vec<String> {
    item.as_array()
        .map(|array| {
            array
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A PEP 735 group's requirements, following `{include-group = "…"}` (cycles end at a
/// small depth).
fn group_requirements(groups: Option<&Item>, name: &str, out: &mut Vec<String>, depth: usize) {
    if depth > 8 {
        return;
    }
    let Some((_, group)) = entry(groups, &normalise(name)) else {
        return;
    };
    let Some(array) = group.as_array() else {
        return;
    };
    for value in array {
        if let Some(requirement) = value.as_str() {
            if !out.iter().any(|r| r == requirement) {
                out.push(requirement.to_string());
            }
        } else if let Some(include) = value
            .as_inline_table()
            .and_then(|t| t.get("include-group"))
            .and_then(|v| v.as_str())
        {
            group_requirements(groups, include, out, depth + 1);
        }
    }
}

/// The package names of a Poetry dependency table, without `python` and without versions.
fn poetry_names(table: Option<&Item>) -> Vec<String> {
    table
        .and_then(Item::as_table_like)
        .map(|t| {
            t.iter()
                .map(|(name, _)| name.to_string())
                .filter(|name| name != "python")
                .collect()
        })
        .unwrap_or_default()
}

/// The plain requirements of the `deps` of tox's `[testenv]`, or of the first
/// `[testenv:py…]` or `[testenv:test…]` when there is no plain one (factor-conditional
/// lines, option lines and substitutions other than `{toxinidir}/` are left out).
fn tox_deps(ini: &str) -> Vec<String> {
    let mut in_testenv = false;
    let mut in_deps = false;
    let mut out = Vec::new();
    for line in ini.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            let named = ["[testenv:py", "[testenv:test"]
                .iter()
                .any(|p| trimmed.starts_with(p));
            in_testenv = trimmed == "[testenv]" || (named && out.is_empty());
            in_deps = false;
            continue;
        }
        if !in_testenv {
            continue;
        }
        let continuation = line.starts_with([' ', '\t']);
        let value = if continuation && in_deps {
            trimmed
        } else if let Some((key, value)) = trimmed.split_once('=') {
            in_deps = key.trim() == "deps";
            if !in_deps {
                continue;
            }
            value.trim()
        } else {
            in_deps = false;
            continue;
        };
        let value = value.replace("{toxinidir}/", "");
        if value.is_empty() || value.starts_with('#') || value.contains('{') {
            continue;
        }
        if let Some(file) = value.strip_prefix("-r") {
            out.push("-r".to_string());
            out.push(file.trim().to_string());
            continue;
        }
        if value.starts_with('-')
            || value
                .split_whitespace()
                .next()
                .is_some_and(|w| w.ends_with(':'))
        {
            continue;
        }
        out.push(value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::detect::tests::{files, reader};

    fn detect_with(names: &[&str], contents: &[(&str, &str)]) -> Detection {
        let read = reader(contents);
        detect(&files(names), &read).unwrap()
    }

    #[test]
    fn a_dependency_group_is_installed_by_name_with_its_includes() {
        let pyproject = r#"
[project]
name = "x"
[dependency-groups]
lint = ["ruff"]
Test = ["freezegun>=1", {include-group = "typing"}, "pytest"]
typing = ["mypy; python_version >= '3.9'"]
"#;
        let found = detect_with(
            &["pyproject.toml", "tests/test_a.py", "requirements-dev.txt"],
            &[("pyproject.toml", pyproject)],
        );
        assert_eq!(
            found.config.install,
            [
                "[ -d .venv ] || python3 -m venv .venv",
                ".venv/bin/python -m pip install -q pytest",
                ".venv/bin/python -m pip install -q -e .",
                ".venv/bin/python -m pip install -q 'freezegun>=1' 'mypy; python_version >= '\\''3.9'\\''' pytest",
            ]
        );
        assert!(
            found.notes[1].contains("[dependency-groups] Test (freezegun>=1,"),
            "{:?}",
            found.notes
        );
    }

    #[test]
    fn an_extra_is_installed_with_the_project() {
        let pyproject = "[project]\nname='x'\n[project.optional-dependencies]\ndocs=['sphinx']\ntesting=['hypothesis']\n";
        let found = detect_with(&["pyproject.toml"], &[("pyproject.toml", pyproject)]);
        assert_eq!(
            found.config.install[2],
            ".venv/bin/python -m pip install -q -e '.[testing]'"
        );
        assert_eq!(found.config.install.len(), 3);
        assert!(found.notes[1].contains("extra [testing]"));
    }

    #[test]
    fn requirement_files_tox_poetry_and_pdm_are_read_in_turn() {
        let found = detect_with(
            &[
                "setup.py",
                "requirements/base.txt",
                "requirements/ci.txt",
                "test-requirements.txt",
            ],
            &[
                ("requirements/ci.txt", "pytest\npytest-cov\n"),
                ("requirements/base.txt", "six\n"),
            ],
        );
        assert_eq!(
            &found.config.install[3..],
            [
                ".venv/bin/python -m pip install -q -r test-requirements.txt",
                ".venv/bin/python -m pip install -q -r requirements/ci.txt",
            ]
        );
        let tox = "[tox]\nenvlist = py3\n[testenv]\ndeps =\n    pytest\n    py38: old\n    -r{toxinidir}/req.txt\n    freezegun\ncommands = pytest\n";
        let found = detect_with(&["setup.py", "tox.ini"], &[("tox.ini", tox)]);
        assert_eq!(
            found.config.install[3],
            ".venv/bin/python -m pip install -q pytest -r req.txt freezegun"
        );
        let legacy = "[project]\nname='x'\n[tool.tox]\nlegacy_tox_ini = \"\"\"\n[testenv:py{38,39}]\ndeps = -r tests/reqs.txt\n\"\"\"\n";
        let found = detect_with(&["pyproject.toml"], &[("pyproject.toml", legacy)]);
        assert_eq!(
            found.config.install[3],
            ".venv/bin/python -m pip install -q -r tests/reqs.txt"
        );
        let found = detect_with(&["setup.py", "tests/requirements.txt"], &[]);
        assert_eq!(
            found.config.install[3],
            ".venv/bin/python -m pip install -q -r tests/requirements.txt"
        );
        let poetry = "[tool.poetry]\nname='x'\n[tool.poetry.group.dev.dependencies]\npython='^3.9'\npytest-mock='^3'\n[build-system]\nrequires=['poetry-core']\n";
        let found = detect_with(&["pyproject.toml"], &[("pyproject.toml", poetry)]);
        assert_eq!(
            found.config.install[3],
            ".venv/bin/python -m pip install -q pytest-mock"
        );
        let pdm = "[tool.pdm.dev-dependencies]\ntest=['pytest-asyncio>=0.21']\n";
        let found = detect_with(&["pyproject.toml"], &[("pyproject.toml", pdm)]);
        assert_eq!(
            found.config.install.len(),
            3,
            "not installable: {:?}",
            found.config.install
        );
        assert_eq!(
            found.config.install[2],
            ".venv/bin/python -m pip install -q 'pytest-asyncio>=0.21'"
        );
    }

    #[test]
    fn a_broken_pyproject_and_no_declared_dependencies_are_said() {
        let found = detect_with(
            &["pyproject.toml", "setup.py"],
            &[("pyproject.toml", "[project\n")],
        );
        assert!(
            found.notes[0].starts_with("pyproject.toml does not parse"),
            "{:?}",
            found.notes
        );
        assert!(
            found
                .notes
                .last()
                .unwrap()
                .starts_with("no test dependencies declared")
        );
        assert_eq!(found.config.install.len(), 3);
        assert!(detect(&files(&["README.md", "main.py"]), &|_: &str| String::new()).is_none());
    }

    #[test]
    fn names_are_normalised_as_pep_503_says() {
        assert_eq!(normalise("Dev_Tests"), "dev-tests");
        assert_eq!(normalise("a..b--c"), "a-b-c");
    }
}
