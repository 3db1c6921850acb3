//! Repositories without `.github/repromin.json`: the detected defaults end to end, on real
//! temp repositories with real pytest and node, and the configuration the judge says it
//! used.

use crate::util::{GitRepo, gate_run, gate_run_env, require_tool, tool_runs, vitest_modules};

/// Whether `program arg` runs and succeeds (`go version` has no `--version`).
pub(crate) fn tool_runs_with(program: &str, arg: &str) -> Result<(), String> {
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

/// A pinned pnpm whose install fails on the lockfile: the error names the step, the
/// package manager at its pinned version and pnpm's first error line.
#[test]
fn an_install_failure_names_the_package_manager_its_version_and_the_error() {
    if !require_tool("npm", tool_runs("npm")) {
        return;
    }
    let repo = GitRepo::new();
    let package = r#"{"name":"calc","private":true,"packageManager":"pnpm@9.15.0","devDependencies":{"vitest":"3"}}"#;
    let base = repo.commit(
        &[
            ("package.json", package),
            // A lockfile that names no dependency: `--frozen-lockfile` refuses it.
            ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n"),
            (
                "test/a.test.js",
                "import { test, expect } from 'vitest';\ntest('a', () => expect(1).toBe(1));\n",
            ),
        ],
        "base",
    );
    let head = repo.commit(
        &[(
            "test/b.test.js",
            "import { test, expect } from 'vitest';\ntest('b', () => expect(2).toBe(2));\n",
        )],
        "a test",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "error", "{line}\n{table}");
    let error = line["error"].as_str().unwrap();
    assert!(error.contains("install failed"), "{error}");
    assert!(error.contains("pnpm@9.15.0"), "{error}");
    assert!(
        error.contains("specifiers in the lockfile"),
        "the first error line of pnpm: {error}"
    );
    assert!(
        table.contains("install with pnpm 9.15.0 (packageManager pins pnpm@9.15.0)"),
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

/// Debian's local Maven repository: the plugins `mvn test` needs and JUnit 4, packaged by
/// `maven`, `libsurefire-java`, `libmaven-compiler-plugin-java`,
/// `libmaven-resources-plugin-java` and `junit4` (`.ci/run` installs them). Maven Central
/// may be out of reach, so the runs read this repository alone.
const MAVEN_REPO: &str = "/usr/share/maven-repo";

/// Whether `mvn` runs and Debian's repository holds what [`maven_repo`]'s pom uses.
fn maven_offline() -> Result<(), String> {
    tool_runs_with("mvn", "-v")?;
    let pieces = [
        "org/apache/maven/plugins/maven-surefire-plugin/2.22.3",
        "org/apache/maven/plugins/maven-compiler-plugin/3.10.1",
        "org/apache/maven/plugins/maven-resources-plugin/3.3.0",
        "junit/junit/4.13.2",
    ];
    match pieces
        .iter()
        .find(|p| !std::path::Path::new(MAVEN_REPO).join(p).is_dir())
    {
        Some(missing) => Err(format!("{MAVEN_REPO}/{missing} is missing")),
        None => Ok(()),
    }
}

/// The environment that makes Maven read Debian's repository instead of Maven Central:
/// the detected command is the project's own `mvn`, and `MAVEN_OPTS` reaches it.
const MAVEN_ENV: [(&str, &str); 1] = [("MAVEN_OPTS", "-Dmaven.repo.local=/usr/share/maven-repo")];

/// A Maven project whose merge base has a bug in `Calc.add` and one passing test class.
fn maven_repo() -> (GitRepo, String) {
    let pom = r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>calc</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.source>17</maven.compiler.source>
    <maven.compiler.target>17</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>2.22.3</version>
      </plugin>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.10.1</version>
      </plugin>
      <plugin>
        <artifactId>maven-resources-plugin</artifactId>
        <version>3.3.0</version>
      </plugin>
    </plugins>
  </build>
</project>
"#;
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            ("pom.xml", pom),
            ("src/main/java/example/Calc.java", CALC_BUG),
            ("src/test/java/example/OneTest.java", ONE_TEST),
            (".gitignore", "target/\n"),
        ],
        "base",
    );
    (repo, base)
}

const ONE_TEST: &str = "package example;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class OneTest {\n    @Test\n    public void one() {\n        assertEquals(1, Calc.one());\n    }\n}\n";

const CALC_BUG: &str = "package example;\n\npublic class Calc {\n    public static int one() {\n        return 1;\n    }\n\n    public static int add(int a, int b) {\n        return a - b;\n    }\n}\n";

/// A Maven project without configuration: Surefire runs the selected test classes, and
/// its report ties each test back to its file under `src/test/java/` (two files, so no
/// test is attributed by run).
#[test]
fn maven_fix_is_reproduced_with_detected_defaults() {
    if !require_tool("maven with Debian's repository", maven_offline()) {
        return;
    }
    let (repo, base) = maven_repo();
    let head = repo.commit(
        &[
            (
                "src/main/java/example/Calc.java",
                &CALC_BUG.replace("a - b", "a + b"),
            ),
            (
                "src/test/java/example/AddTest.java",
                "package example;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class AddTest {\n    @Test\n    public void adds() {\n        assertEquals(5, Calc.add(2, 3));\n    }\n}\n",
            ),
            (
                "src/test/java/example/OneTest.java",
                &ONE_TEST.replace(
                    "    }\n}\n",
                    "    }\n\n    @Test\n    public void addsZero() {\n        assertEquals(1, Calc.add(1, 0));\n    }\n}\n",
                ),
            ),
        ],
        "fix",
    );
    let (line, table) = gate_run_env(&repo, &base, &head, &[], &MAVEN_ENV);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    let mut rows: Vec<String> = line["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("{} {} {}", t["file"], t["name"], t["class"]))
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            r#""src/test/java/example/AddTest.java" "adds" "reproduces""#,
            r#""src/test/java/example/OneTest.java" "addsZero" "passes-on-base""#,
            r#""src/test/java/example/OneTest.java" "one" "passes-on-base""#,
        ],
        "{line}"
    );
    assert!(
        table.contains(
            "configuration: detected java at the merge base: pom.xml: Maven (mvn), the \
             selected classes through Surefire, read from its JUnit XML"
        ),
        "{table}"
    );
}

/// A fix that adds the method its test calls: the test does not compile on base, and the
/// compiler's `cannot find symbol` makes it a new API, not a reproduction.
#[test]
fn maven_test_of_a_new_method_is_a_new_api() {
    if !require_tool("maven with Debian's repository", maven_offline()) {
        return;
    }
    let (repo, base) = maven_repo();
    let head = repo.commit(
        &[
            (
                "src/main/java/example/Calc.java",
                &CALC_BUG.replace(
                    "    public static int add",
                    "    public static int twice(int a) {\n        return 2 * a;\n    }\n\n    public static int add",
                ),
            ),
            (
                "src/test/java/example/TwiceTest.java",
                "package example;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class TwiceTest {\n    @Test\n    public void doubles() {\n        assertEquals(6, Calc.twice(3));\n    }\n}\n",
            ),
        ],
        "feature",
    );
    let (line, table) = gate_run_env(&repo, &base, &head, &[], &MAVEN_ENV);
    assert_eq!(line["verdict"], "unproven", "{line}\n{table}");
    assert_eq!(line["tests"][0]["class"], "new-api", "{line}");
}

/// A vitest config whose coverage threshold a run of the pull request's tests alone cannot
/// meet: with coverage on, head exits 1 with every test passed and the verdict would be
/// `error`. The detected command turns coverage off. `.ci/run` installs vitest and its v8
/// coverage provider under `target/test-node`; the `pretest` script links them in (the
/// detected build step runs it).
#[test]
fn vitest_coverage_threshold_does_not_fail_the_run() {
    let Some(modules) = vitest_modules() else {
        return;
    };
    let provider = modules.join("@vitest/coverage-v8/package.json");
    let found = if provider.is_file() {
        Ok(())
    } else {
        Err("@vitest/coverage-v8 is not installed under target/test-node".to_string())
    };
    if !require_tool("vitest's v8 coverage", found) {
        return;
    }
    let package = format!(
        "{{\"name\":\"calc\",\"type\":\"module\",\"private\":true,\"scripts\":{{\"pretest\":\"rm -rf node_modules && ln -s {} node_modules\",\"test\":\"vitest run\"}}}}\n",
        modules.display()
    );
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            ("package.json", &package),
            (
                "vitest.config.js",
                "export default {\n  test: {\n    coverage: {\n      enabled: true,\n      provider: 'v8',\n      include: ['src/**'],\n      thresholds: { lines: 100 },\n    },\n  },\n};\n",
            ),
            (
                "src/calc.js",
                "export function add(a, b) {\n  return a - b;\n}\n\nexport function sub(a, b) {\n  return a - b;\n}\n",
            ),
            (
                "test/sub.test.js",
                "import { it, expect } from 'vitest';\nimport { sub } from '../src/calc.js';\n\nit('subtracts', () => {\n  expect(sub(3, 2)).toBe(1);\n});\n",
            ),
            (".gitignore", "node_modules\ncoverage\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            (
                "src/calc.js",
                "export function add(a, b) {\n  return a + b;\n}\n\nexport function sub(a, b) {\n  return a - b;\n}\n",
            ),
            (
                "test/add.test.js",
                "import { it, expect } from 'vitest';\nimport { add } from '../src/calc.js';\n\nit('adds', () => {\n  expect(add(2, 3)).toBe(5);\n});\n",
            ),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["tests"][0]["name"], "adds", "{line}");
    assert!(table.contains("configuration: detected node"), "{table}");
    assert!(table.contains("test runner vitest"), "{table}");
}
