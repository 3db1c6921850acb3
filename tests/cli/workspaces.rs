//! Node workspaces without `.github/repromin.json`: a test that imports a sibling package
//! whose built output git ignores runs once the detected build step has built that package,
//! and only that package, on both sides.

use crate::util::{GitRepo, gate_run, gate_run_env, require_tool, tool_runs, vitest_modules};

/// `lib`'s build script: copies `src/index.js` to the git-ignored `dist/index.js`, which
/// is what `require('lib')` loads.
const LIB_BUILD: &str = "const fs = require('node:fs');\nfs.mkdirSync('dist', { recursive: true });\nfs.copyFileSync('src/index.js', 'dist/index.js');\n";

/// An npm workspace: `packages/app` tests `packages/lib` through its built `dist/`, and
/// `packages/broken`, which no test needs, fails to build (as the root's `build`, which
/// the root's `test` script runs first, would). Nothing outside the workspace is
/// installed, so `npm install` links the packages without a network.
fn npm_workspace() -> (GitRepo, String) {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (
                "package.json",
                "{\"name\":\"mono\",\"private\":true,\"workspaces\":[\"packages/*\"],\"scripts\":{\"build\":\"npm run build --workspaces\",\"test\":\"npm run build && node --test\"}}\n",
            ),
            (
                "packages/lib/package.json",
                "{\"name\":\"lib\",\"version\":\"1.0.0\",\"main\":\"dist/index.js\",\"scripts\":{\"build\":\"node build.js\"}}\n",
            ),
            ("packages/lib/build.js", LIB_BUILD),
            (
                "packages/lib/src/index.js",
                "exports.add = (a, b) => a - b;\n",
            ),
            (
                "packages/app/package.json",
                "{\"name\":\"app\",\"version\":\"1.0.0\",\"private\":true,\"dependencies\":{\"lib\":\"1.0.0\"}}\n",
            ),
            (
                "packages/app/test/old.test.js",
                "const test = require('node:test');\nconst assert = require('node:assert');\n\ntest('old', () => assert.ok(true));\n",
            ),
            (
                "packages/broken/package.json",
                "{\"name\":\"broken\",\"version\":\"1.0.0\",\"scripts\":{\"build\":\"echo broken build >&2; exit 1\"}}\n",
            ),
            (".gitignore", "node_modules\ndist\npackage-lock.json\n"),
        ],
        "base",
    );
    (repo, base)
}

/// The fix in lib's source with a test in app that imports `lib`: reproduced, with lib
/// built on each side (on base before the test lands) and the broken package never built.
#[test]
fn a_test_importing_a_sibling_package_is_reproduced_once_it_is_built() {
    if !require_tool("node", tool_runs("node")) || !require_tool("npm", tool_runs("npm")) {
        return;
    }
    let (repo, base) = npm_workspace();
    let head = repo.commit(
        &[
            ("packages/lib/src/index.js", "exports.add = (a, b) => a + b;\n"),
            (
                "packages/app/test/add.test.js",
                "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('lib');\n\ntest('adds', () => assert.strictEqual(add(2, 3), 5));\n",
            ),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["tests"][0]["name"], "adds", "{line}");
    for said in [
        "npm workspace (package.json workspaces): 3 packages, 2 with a build script",
        "the root's `build` before the tests is not run in a workspace",
        "the selected tests need the workspace packages `lib`; built in dependency order with their own build scripts: `lib`",
    ] {
        assert!(table.contains(said), "{said}:\n{table}");
    }
}

/// A test at the root, outside every package, that imports app's source by a relative
/// path: that source requires `lib`, so lib is built on each side although the test names
/// no package and sits in none.
#[test]
fn a_root_test_importing_a_package_s_source_by_path_gets_its_dependencies_built() {
    if !require_tool("node", tool_runs("node")) || !require_tool("npm", tool_runs("npm")) {
        return;
    }
    let (repo, _) = npm_workspace();
    let base = repo.commit(
        &[(
            "packages/app/src/sum.js",
            "const { add } = require('lib');\nexports.sum = (xs) => xs.reduce(add, 0);\n",
        )],
        "app sums",
    );
    let head = repo.commit(
        &[
            ("packages/lib/src/index.js", "exports.add = (a, b) => a + b;\n"),
            (
                "test/sum.test.js",
                "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('../packages/app/src/sum.js');\n\ntest('sums', () => assert.strictEqual(sum([1, 2, 3]), 6));\n",
            ),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["tests"][0]["name"], "sums", "{line}");
    let said = "the selected tests need the workspace packages `lib`; built in dependency order with their own build scripts: `lib`";
    assert!(table.contains(said), "{said}:\n{table}");
}

/// An ES module build script that copies `src/index.js` to `dist/index.js`, after
/// importing `dependency` when one is given: it fails unless that was built first.
fn esm_build(dependency: Option<&str>) -> String {
    let import = dependency.map_or(String::new(), |d| format!("import '{d}';\n"));
    format!(
        "{import}import fs from 'node:fs';\nfs.mkdirSync('dist', {{ recursive: true }});\nfs.copyFileSync('src/index.js', 'dist/index.js');\n"
    )
}

/// A scoped ES module workspace run by vitest: app's test imports only app's own source,
/// which imports `@acme/lib`, which depends on `@acme/core`. Both are built, core first
/// (lib's build imports it), found through app's dependencies. vitest is the one
/// `.ci/run` installs under `target/test-node`, reached through `PATH`, as the detected
/// command looks in the workspace's `node_modules/.bin` first and finds none there.
#[test]
fn packages_needed_through_the_test_s_own_package_are_built_in_dependency_order() {
    let Some(modules) = vitest_modules() else {
        return;
    };
    if !require_tool("npm", tool_runs("npm")) {
        return;
    }
    let manifest = |name: &str, deps: &str, build: bool| {
        let scripts = if build {
            ",\"main\":\"dist/index.js\",\"scripts\":{\"build\":\"node build.js\"}"
        } else {
            ""
        };
        format!(
            "{{\"name\":\"{name}\",\"version\":\"1.0.0\",\"type\":\"module\",\"dependencies\":{{{deps}}}{scripts}}}\n"
        )
    };
    let core = manifest("@acme/core", "", true);
    let lib = manifest("@acme/lib", "\"@acme/core\":\"1.0.0\"", true);
    let app = manifest("@acme/app", "\"@acme/lib\":\"1.0.0\"", false);
    let (core_build, lib_build) = (esm_build(None), esm_build(Some("@acme/core")));
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (
                "package.json",
                "{\"name\":\"mono\",\"private\":true,\"type\":\"module\",\"workspaces\":[\"packages/*\"]}\n",
            ),
            ("packages/core/package.json", &core),
            ("packages/core/build.js", &core_build),
            (
                "packages/core/src/index.js",
                "export const zero = () => 0;\n",
            ),
            ("packages/lib/package.json", &lib),
            ("packages/lib/build.js", &lib_build),
            (
                "packages/lib/src/index.js",
                "import { zero } from '@acme/core';\nexport const add = (a, b) => zero() + a - b;\n",
            ),
            ("packages/app/package.json", &app),
            (
                "packages/app/src/sum.js",
                "import { add } from '@acme/lib';\nexport const sum = (xs) => xs.reduce(add, 0);\n",
            ),
            (
                "packages/app/test/old.test.js",
                "import { test, expect } from 'vitest';\ntest('old', () => expect(1).toBe(1));\n",
            ),
            (".gitignore", "node_modules\ndist\npackage-lock.json\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            (
                "packages/lib/src/index.js",
                "import { zero } from '@acme/core';\nexport const add = (a, b) => zero() + a + b;\n",
            ),
            (
                "packages/app/test/sum.test.js",
                "import { test, expect } from 'vitest';\nimport { sum } from '../src/sum.js';\n\ntest('sums', () => expect(sum([1, 2, 3])).toBe(6));\n",
            ),
        ],
        "fix",
    );
    let path = format!(
        "{}:{}",
        modules.join(".bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (line, table) = gate_run_env(&repo, &base, &head, &[], &[("PATH", &path)]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["tests"][0]["name"], "sums", "{line}");
    for said in [
        "test runner vitest",
        "the selected tests need the workspace packages `@acme/core`, `@acme/lib`; built in dependency order with their own build scripts: `@acme/core`, `@acme/lib`",
    ] {
        assert!(table.contains(said), "{said}:\n{table}");
    }
}
