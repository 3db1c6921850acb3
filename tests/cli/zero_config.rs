//! Repositories without `.github/repromin.json`: the detected defaults end to end, on real
//! temp repositories with real pytest and node, and the configuration the judge says it
//! used.

use crate::util::{GitRepo, gate_run, require_tool, tool_runs};

/// Whether `program arg` runs and succeeds (`go version` has no `--version`).
fn tool_runs_with(program: &str, arg: &str) -> Result<(), String> {
    match std::process::Command::new(program).arg(arg).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("`{program} {arg}` exited with {}", o.status)),
        Err(e) => Err(format!("`{program}` cannot be started: {e}")),
    }
}

/// A test that imports a package declared only in a PEP 735 group collects, because the
/// group is installed: without it, the test's import fails on both sides.
#[test]
fn python_test_dependencies_of_a_dependency_group_are_installed() {
    if !require_tool("python3", tool_runs("python3")) {
        return;
    }
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\npythonpath = [\".\"]\n\n[dependency-groups]\nlint = [\"ruff\"]\ntest = [\"six\"]\n",
            ),
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            ("tests/test_old.py", "def test_old():\n    assert True\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (
                "tests/test_calc.py",
                "import six\nfrom calc import add\n\n\ndef test_add():\n    assert six.PY3 and add(2, 3) == 5\n",
            ),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert!(
        table.contains(
            "configuration: detected python at the merge base: pytest in a .venv (the project \
             is not installable: no pyproject.toml [project] or setup.py); test dependencies: \
             [dependency-groups] test (six)"
        ),
        "{table}"
    );
}

/// node:test behind a wrapper script, named by no manifest string the old detection read:
/// the test files' imports decide it.
#[test]
fn node_test_behind_a_wrapper_is_detected_from_the_imports() {
    if !require_tool("node", tool_runs("node")) || !require_tool("npm", tool_runs("npm")) {
        return;
    }
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (
                "package.json",
                "{\"name\":\"calc\",\"type\":\"module\",\"private\":true,\"scripts\":{\"test\":\"bnt\"}}\n",
            ),
            ("src/calc.js", "export function add(a, b) {\n  return a - b;\n}\n"),
            (
                "test/old.test.js",
                "import test from 'node:test';\nimport assert from 'node:assert';\n\ntest('old', () => assert.ok(true));\n",
            ),
            (".gitignore", "node_modules\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("src/calc.js", "export function add(a, b) {\n  return a + b;\n}\n"),
            (
                "test/add.test.js",
                "import test from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../src/calc.js';\n\ntest('adds', () => assert.strictEqual(add(2, 3), 5));\n",
            ),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert!(
        table.contains("test runner node:test: 1 test files of 1 read import node:test"),
        "{table}"
    );
}

/// A Go module without configuration: `go test -json` on the packages of the selected
/// tests.
#[test]
fn go_module_fix_is_reproduced_with_detected_defaults() {
    if !require_tool("go", tool_runs_with("go", "version")) {
        return;
    }
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            ("go.mod", "module example.com/calc\n\ngo 1.19\n"),
            (
                "calc/calc.go",
                "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
            ),
            (
                "calc/old_test.go",
                "package calc\n\nimport \"testing\"\n\nfunc TestOld(t *testing.T) {}\n",
            ),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("calc/calc.go", "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"),
            (
                "calc/add_test.go",
                "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"2+3\")\n\t}\n}\n",
            ),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["tests"][0]["name"], "TestAdd", "{line}");
    assert!(table.contains("configuration: detected go"), "{table}");
}
