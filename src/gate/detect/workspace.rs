//! Node workspaces (npm, pnpm, yarn): which workspace packages the selected tests need
//! built, and the commands that build them.
//!
//! A test that imports another package of its workspace loads that package's entry point,
//! which is often built output (`dist/`) that git ignores. The merge base's workspace is
//! read at detection: the globs of `workspaces` in the root package.json (an array, or
//! `{"packages": [...]}`), or of `packages:` in `pnpm-workspace.yaml` for pnpm
//! ([`super::pnpm_workspace`]); each directory with a package.json that a glob matches
//! (and no `!` glob excludes) is a package with its name, whether it has a `build` script,
//! and the workspace packages its `dependencies`, `devDependencies` and
//! `optionalDependencies` name.
//!
//! Once the tests are known, [`Workspace::builds`] takes the packages their text imports
//! by a bare specifier ([`super::imports`]) and the workspace dependencies of the package
//! each test file sits in or imports source from by a relative path (a test at the root
//! that imports `../packages/app/src/index` loads app's dependencies through that source),
//! closes them over the dependencies, and builds those with a `build` script, dependencies
//! first, each with its own script through the package manager. The root's build is never
//! run: it builds every package, and one that is broken and unrelated to the tests would
//! sink the run.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::Value;

use super::imports::{imported_packages, relative_specifiers};
use crate::text::shell_quote;

/// The most packages a workspace is read with; more are ignored, and said so.
const MAX_PACKAGES: usize = 1000;

/// The most names a note lists before it says how many more there are.
const NOTE_NAMES: usize = 8;

/// The package manager, as the lockfile says, with the version the install runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Manager {
    /// npm.
    Npm,
    /// pnpm through `npx -y pnpm@VERSION`.
    Pnpm(String),
    /// yarn berry through `corepack yarn@VERSION`.
    YarnBerry(String),
    /// yarn 1 through `npx -y yarn@1`.
    YarnClassic,
}

impl Manager {
    /// The command that runs the `build` script of the workspace package `name`.
    fn build(&self, name: &str) -> String {
        let name = shell_quote(name);
        match self {
            Manager::Npm => format!("npm run build --workspace {name}"),
            Manager::Pnpm(version) => format!("npx -y pnpm@{version} --filter {name} run build"),
            Manager::YarnBerry(version) => {
                format!("corepack yarn@{version} workspace {name} run build")
            }
            Manager::YarnClassic => format!("npx -y yarn@1 workspace {name} run build"),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Manager::Npm => "npm",
            Manager::Pnpm(_) => "pnpm",
            Manager::YarnBerry(_) | Manager::YarnClassic => "yarn",
        }
    }
}

/// One package of the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Package {
    /// Its name (package.json `name`).
    pub name: String,
    /// Its directory, repository-relative.
    pub dir: String,
    /// Whether it has a `build` script.
    pub build: bool,
    /// The workspace packages it depends on, sorted.
    pub deps: Vec<String>,
}

/// The workspace of the merge base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Workspace {
    /// The package manager that runs the builds.
    pub manager: Manager,
    /// Its packages, by directory.
    pub packages: Vec<Package>,
}

/// What [`detect`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// No workspace is declared.
    None,
    /// A workspace is declared but cannot be used; why.
    Ignored(String),
    /// The workspace, and what was seen, for the notes.
    Workspace(Workspace, String),
}

/// The workspace declared at the root, read with `read` from the merge base's `files`.
pub(crate) fn detect(
    files: &[String],
    read: &dyn Fn(&str) -> String,
    root: &Value,
    manager: Manager,
) -> Found {
    let declared = root.get("workspaces");
    let has_yaml = files.iter().any(|f| f == "pnpm-workspace.yaml");
    let (globs, source) = match (&manager, has_yaml, declared) {
        (Manager::Pnpm(_), true, _) => {
            match super::pnpm_workspace::packages(&read("pnpm-workspace.yaml")) {
                Ok(globs) => (globs, "pnpm-workspace.yaml"),
                Err(err) => return Found::Ignored(format!("{err}: not read")),
            }
        }
        (Manager::Pnpm(_), false, Some(_)) => {
            return Found::Ignored(
                "package.json has workspaces, but pnpm reads them only from pnpm-workspace.yaml"
                    .into(),
            );
        }
        (_, _, Some(value)) => match workspace_globs(value) {
            Some(globs) => (globs, "package.json workspaces"),
            None => {
                return Found::Ignored(
                    "package.json workspaces is neither a list of globs nor {\"packages\": [...]}"
                        .into(),
                );
            }
        },
        (_, true, None) => {
            return Found::Ignored(format!(
                "pnpm-workspace.yaml, but the lockfile is {}'s, which does not read it",
                manager.name()
            ));
        }
        (_, false, None) => return Found::None,
    };
    if globs.is_empty() {
        return Found::Ignored(format!("{source} lists no package"));
    }
    let (include, exclude) = match compile(&globs) {
        Ok(sets) => sets,
        Err(err) => return Found::Ignored(format!("{source}: {err}")),
    };
    let mut dirs: Vec<&str> = files
        .iter()
        .filter_map(|f| f.strip_suffix("/package.json"))
        .filter(|dir| !dir.split('/').any(|part| part == "node_modules"))
        .filter(|dir| include.is_match(dir) && !exclude.is_match(dir))
        .collect();
    dirs.sort_unstable();
    let mut said = Vec::new();
    if dirs.len() > MAX_PACKAGES {
        said.push(format!(
            "only the first {MAX_PACKAGES} of {} packages are read",
            dirs.len()
        ));
        dirs.truncate(MAX_PACKAGES);
    }
    let mut packages: Vec<(Package, Value)> = Vec::new();
    for dir in dirs {
        let path = format!("{dir}/package.json");
        let Ok(manifest) = serde_json::from_str::<Value>(&read(&path)) else {
            said.push(format!("{path} does not parse and is left out"));
            continue;
        };
        let Some(name) = manifest.get("name").and_then(Value::as_str) else {
            continue;
        };
        if packages.iter().any(|(p, _)| p.name == name) {
            said.push(format!("{path} repeats the name `{name}` and is left out"));
            continue;
        }
        let build = manifest
            .pointer("/scripts/build")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty());
        let package = Package {
            name: name.to_string(),
            dir: dir.to_string(),
            build,
            deps: Vec::new(),
        };
        packages.push((package, manifest));
    }
    let names: Vec<String> = packages.iter().map(|(p, _)| p.name.clone()).collect();
    let packages: Vec<Package> = packages
        .into_iter()
        .map(|(mut package, manifest)| {
            let mut deps: Vec<String> = ["dependencies", "devDependencies", "optionalDependencies"]
                .iter()
                .filter_map(|table| manifest.get(*table).and_then(Value::as_object))
                .flat_map(|table| table.keys())
                .filter(|dep| **dep != package.name && names.contains(dep))
                .cloned()
                .collect();
            deps.sort();
            deps.dedup();
            package.deps = deps;
            package
        })
        .collect();
    let with_build = packages.iter().filter(|p| p.build).count();
    let count = match packages.len() {
        1 => "1 package".to_string(),
        n => format!("{n} packages"),
    };
    let mut note = format!(
        "{} workspace ({source}): {count}, {with_build} with a build script; the root's build is not run, only the packages the selected tests need are built",
        manager.name(),
    );
    for s in said {
        note.push_str("; ");
        note.push_str(&s);
    }
    Found::Workspace(Workspace { manager, packages }, note)
}

/// The globs of package.json `workspaces`: an array of strings, or an object whose
/// `packages` is one (yarn's form).
fn workspace_globs(value: &Value) -> Option<Vec<String>> {
    let list = match value {
        Value::Array(list) => list,
        Value::Object(map) => map.get("packages")?.as_array()?,
        _ => return None,
    };
    list.iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// The including and the excluding (`!`) globs, matched against package directories.
fn compile(globs: &[String]) -> Result<(GlobSet, GlobSet), globset::Error> {
    let mut include = GlobSetBuilder::new();
    let mut exclude = GlobSetBuilder::new();
    for glob in globs {
        let (set, glob) = match glob.strip_prefix('!') {
            Some(rest) => (&mut exclude, rest),
            None => (&mut include, glob.as_str()),
        };
        let glob = glob.trim_start_matches("./").trim_end_matches('/');
        set.add(GlobBuilder::new(glob).literal_separator(true).build()?);
    }
    Ok((include.build()?, exclude.build()?))
}

/// The repository-relative path that `spec`, a relative import of the file `from`, names,
/// without `.` and `..` parts; `None` when it climbs out of the repository.
fn resolve(from: &str, spec: &str) -> Option<String> {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for part in spec.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// The builds the selected tests need, and what was chosen, for the notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Builds {
    /// The build step: each needed package's build, dependencies first; `None` when no
    /// needed package has a build script.
    pub command: Option<String>,
    /// What was chosen and why, one sentence.
    pub note: String,
}

impl Workspace {
    /// The package whose directory holds `path`, the innermost one.
    fn enclosing(&self, path: &str) -> Option<&Package> {
        self.packages
            .iter()
            .filter(|p| {
                path.strip_prefix(p.dir.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
            })
            .max_by_key(|p| p.dir.len())
    }

    fn package(&self, name: &str) -> Option<&Package> {
        self.packages.iter().find(|p| p.name == name)
    }

    /// The packages the tests need: those their text (`read`) imports by name or by a
    /// relative path to the package's directory, the dependencies of the package each
    /// sits in, and those of a package whose files a test imports by a relative path
    /// (`../../packages/app/src/index`: that source loads app's dependencies), with all
    /// their workspace dependencies; dependencies before their dependents, ties in name
    /// order. A dependency cycle is cut where the walk meets it again.
    pub(crate) fn needed(&self, tests: &[String], read: &dyn Fn(&str) -> String) -> Vec<&Package> {
        let mut roots: Vec<&str> = Vec::new();
        for test in tests {
            let text = read(test);
            for name in imported_packages(&text) {
                if let Some(p) = self.package(&name) {
                    roots.push(p.name.as_str());
                }
            }
            if let Some(home) = self.enclosing(test) {
                roots.extend(home.deps.iter().map(String::as_str));
            }
            for target in relative_specifiers(&text)
                .iter()
                .filter_map(|spec| resolve(test, spec))
            {
                if let Some(p) = self.packages.iter().find(|p| p.dir == target) {
                    roots.push(p.name.as_str());
                } else if let Some(source) = self.enclosing(&target) {
                    roots.extend(source.deps.iter().map(String::as_str));
                }
            }
        }
        roots.sort_unstable();
        roots.dedup();
        let mut order: Vec<&Package> = Vec::new();
        let mut entered: Vec<&str> = Vec::new();
        for root in roots {
            self.visit(root, &mut entered, &mut order);
        }
        order
    }

    /// Depth first: `name`'s dependencies, then `name`.
    fn visit<'a>(&'a self, name: &str, entered: &mut Vec<&'a str>, order: &mut Vec<&'a Package>) {
        let Some(package) = self.package(name) else {
            return;
        };
        if entered.contains(&package.name.as_str()) {
            return;
        }
        entered.push(&package.name);
        for dep in &package.deps {
            self.visit(dep, entered, order);
        }
        order.push(package);
    }

    /// The build step for `tests` (read with `read`, at head: the tests that run on both
    /// sides), and the sentence that says what it builds.
    pub(crate) fn builds(&self, tests: &[String], read: &dyn Fn(&str) -> String) -> Builds {
        let needed = self.needed(tests, read);
        if needed.is_empty() {
            return Builds {
                command: None,
                note: "the selected tests need no workspace package".into(),
            };
        }
        let built: Vec<&Package> = needed.iter().copied().filter(|p| p.build).collect();
        let list = |packages: &[&Package]| {
            let mut names: Vec<String> = packages
                .iter()
                .take(NOTE_NAMES)
                .map(|p| format!("`{}`", p.name))
                .collect();
            if packages.len() > NOTE_NAMES {
                names.push(format!("{} more", packages.len() - NOTE_NAMES));
            }
            names.join(", ")
        };
        let need = format!(
            "the selected tests need the workspace packages {}",
            list(&needed)
        );
        if built.is_empty() {
            return Builds {
                command: None,
                note: format!("{need}, none with a build script"),
            };
        }
        let command: Vec<String> = built.iter().map(|p| self.manager.build(&p.name)).collect();
        Builds {
            command: Some(command.join(" && ")),
            note: format!(
                "{need}; built in dependency order with their own build scripts: {}",
                list(&built)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_string()).collect()
    }

    fn reader<'a>(contents: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> String + 'a {
        move |path: &str| {
            contents
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, t)| (*t).to_string())
                .unwrap_or_default()
        }
    }

    const MONOREPO: [(&str, &str); 7] = [
        (
            "packages/app/package.json",
            r#"{"name":"app","dependencies":{"@acme/ui":"*","left-pad":"1"},"scripts":{"build":"tsc"}}"#,
        ),
        (
            "packages/ui/package.json",
            r#"{"name":"@acme/ui","dependencies":{"@acme/core":"workspace:*"},"scripts":{"build":"tsc"}}"#,
        ),
        (
            "packages/core/package.json",
            r#"{"name":"@acme/core","devDependencies":{"@acme/config":"*"},"scripts":{"build":"node build.js"}}"#,
        ),
        ("packages/config/package.json", r#"{"name":"@acme/config"}"#),
        (
            "packages/broken/package.json",
            r#"{"name":"broken","scripts":{"build":"exit 1"}}"#,
        ),
        (
            "packages/app/test/ui.test.js",
            "import { render } from '../src/render.js';\n",
        ),
        (
            "tools/check.test.js",
            "const core = require('@acme/core/internal');\nimport x from 'left-pad';\n",
        ),
    ];

    const FILES: [&str; 9] = [
        "package.json",
        "packages/app/package.json",
        "packages/ui/package.json",
        "packages/core/package.json",
        "packages/config/package.json",
        "packages/broken/package.json",
        "packages/app/test/ui.test.js",
        "tools/check.test.js",
        "node_modules/x/package.json",
    ];

    fn workspace(root: &str, manager: Manager) -> Found {
        let read = reader(&MONOREPO);
        let root: Value = serde_json::from_str(root).unwrap();
        detect(&files(&FILES), &read, &root, manager)
    }

    fn found(root: &str, manager: Manager) -> Workspace {
        match workspace(root, manager) {
            Found::Workspace(ws, _) => ws,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn packages_come_from_the_globs_with_their_workspace_dependencies() {
        let Found::Workspace(ws, note) =
            workspace(r#"{"workspaces":["packages/*"]}"#, Manager::Npm)
        else {
            panic!()
        };
        let names: Vec<&str> = ws.packages.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            ["app", "broken", "@acme/config", "@acme/core", "@acme/ui"]
        );
        assert_eq!(ws.packages[0].deps, ["@acme/ui"]);
        assert_eq!(ws.packages[3].deps, ["@acme/config"]);
        assert!(!ws.packages[2].build);
        assert_eq!(
            note,
            "npm workspace (package.json workspaces): 5 packages, 4 with a build script; the root's build is not run, only the packages the selected tests need are built"
        );
        let ws = found(
            r#"{"workspaces":{"packages":["./packages/*/","!packages/broken"]}}"#,
            Manager::YarnClassic,
        );
        assert_eq!(ws.packages.len(), 4);
    }

    #[test]
    fn the_needed_packages_are_built_dependencies_first() {
        let ws = found(r#"{"workspaces":["packages/*"]}"#, Manager::Npm);
        let read = reader(&MONOREPO);
        // The test in app imports nothing by name: app's dependencies are needed.
        let tests = files(&["packages/app/test/ui.test.js"]);
        let order: Vec<&str> = ws
            .needed(&tests, &read)
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(order, ["@acme/config", "@acme/core", "@acme/ui"]);
        let builds = ws.builds(&tests, &read);
        assert_eq!(
            builds.command.as_deref(),
            Some("npm run build --workspace @acme/core && npm run build --workspace @acme/ui")
        );
        assert_eq!(
            builds.note,
            "the selected tests need the workspace packages `@acme/config`, `@acme/core`, `@acme/ui`; built in dependency order with their own build scripts: `@acme/core`, `@acme/ui`"
        );
        // A test outside every package, importing one by a subpath.
        let tests = files(&["tools/check.test.js"]);
        let builds = ws.builds(&tests, &read);
        assert_eq!(
            builds.command.as_deref(),
            Some("npm run build --workspace @acme/core")
        );
        // A test outside every package, importing app's source and ui's directory by
        // relative paths: app's dependencies and ui itself are needed.
        let read_relative = reader(&[
            (
                "tests/app.test.js",
                "import { render } from '../packages/app/src/render.js';\n",
            ),
            (
                "tests/deep/ui.test.js",
                "const ui = require('../../packages/ui');\nrequire('../../../outside');\n",
            ),
        ]);
        let order = |tests: &[&str]| -> Vec<String> {
            ws.needed(&files(tests), &read_relative)
                .iter()
                .map(|p| p.name.clone())
                .collect()
        };
        assert_eq!(
            order(&["tests/app.test.js"]),
            ["@acme/config", "@acme/core", "@acme/ui"]
        );
        assert_eq!(
            order(&["tests/deep/ui.test.js"]),
            ["@acme/config", "@acme/core", "@acme/ui"]
        );
        let none = ws.builds(&files(&["packages/config/x.test.js"]), &read);
        assert_eq!(none.command, None);
        assert_eq!(none.note, "the selected tests need no workspace package");
    }

    #[test]
    fn relative_imports_resolve_from_the_test_s_directory() {
        for (from, spec, want) in [
            (
                "tests/core/app.test.ts",
                "../../packages/app/src/index",
                Some("packages/app/src/index"),
            ),
            ("tests/a.test.js", "./helpers/../b.js", Some("tests/b.js")),
            ("a.test.js", "./packages/x", Some("packages/x")),
            ("a.test.js", "..", None),
            ("tests/a.test.js", "../../x", None),
        ] {
            assert_eq!(resolve(from, spec).as_deref(), want, "{from} {spec}");
        }
    }

    #[test]
    fn each_manager_runs_the_package_s_own_script() {
        let read = reader(&MONOREPO);
        let tests = files(&["tools/check.test.js"]);
        for (manager, want) in [
            (
                Manager::Pnpm("9.1.0".into()),
                "npx -y pnpm@9.1.0 --filter @acme/core run build",
            ),
            (
                Manager::YarnBerry("stable".into()),
                "corepack yarn@stable workspace @acme/core run build",
            ),
            (
                Manager::YarnClassic,
                "npx -y yarn@1 workspace @acme/core run build",
            ),
        ] {
            let mut ws = found(r#"{"workspaces":["packages/*"]}"#, Manager::Npm);
            ws.manager = manager;
            assert_eq!(ws.builds(&tests, &read).command.as_deref(), Some(want));
        }
    }

    #[test]
    fn a_dependency_cycle_is_cut_and_ties_go_by_name() {
        let package = |name: &str, deps: &[&str]| Package {
            name: name.into(),
            dir: format!("p/{name}"),
            build: true,
            deps: deps.iter().map(|d| (*d).to_string()).collect(),
        };
        let ws = Workspace {
            manager: Manager::Npm,
            packages: vec![
                package("a", &["b"]),
                package("b", &["c"]),
                package("c", &["a"]),
                package("d", &[]),
                package("t", &["d", "a"]),
            ],
        };
        let read = |_: &str| String::new();
        let order: Vec<&str> = ws
            .needed(&files(&["p/t/x.test.js"]), &read)
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(order, ["c", "b", "a", "d"]);
    }

    #[test]
    fn workspaces_that_cannot_be_used_say_why() {
        let read = reader(&[
            ("pnpm-workspace.yaml", "packages:\n  - !bad\n"),
            ("packages/a/package.json", "{"),
        ]);
        let with_yaml = files(&["package.json", "pnpm-workspace.yaml"]);
        let pnpm = Manager::Pnpm("10".into());
        let root = serde_json::json!({});
        assert_eq!(
            detect(&with_yaml, &read, &root, pnpm.clone()),
            Found::Ignored(
                "pnpm-workspace.yaml, line 2: an item that starts with a YAML indicator (quote it): not read"
                    .into()
            )
        );
        let listed = serde_json::json!({"workspaces": ["packages/*"]});
        assert!(matches!(
            detect(&files(&["package.json"]), &read, &listed, pnpm),
            Found::Ignored(why) if why.contains("only from pnpm-workspace.yaml")
        ));
        assert!(matches!(
            detect(&with_yaml, &read, &root, Manager::Npm),
            Found::Ignored(why) if why.contains("the lockfile is npm's")
        ));
        for bad in [
            serde_json::json!({"workspaces": "packages/*"}),
            serde_json::json!({"workspaces": [1]}),
        ] {
            assert!(matches!(
                detect(&files(&["package.json"]), &read, &bad, Manager::Npm),
                Found::Ignored(why) if why.contains("neither a list")
            ));
        }
        let empty = serde_json::json!({"workspaces": []});
        assert_eq!(
            detect(&files(&["package.json"]), &read, &empty, Manager::Npm),
            Found::Ignored("package.json workspaces lists no package".into())
        );
        let bad_glob = serde_json::json!({"workspaces": ["a/[b"]});
        assert!(matches!(
            detect(&files(&["package.json"]), &read, &bad_glob, Manager::Npm),
            Found::Ignored(_)
        ));
        let broken = files(&["package.json", "packages/a/package.json"]);
        let Found::Workspace(ws, note) = detect(&broken, &read, &listed, Manager::Npm) else {
            panic!()
        };
        assert!(ws.packages.is_empty());
        assert!(note.ends_with("packages/a/package.json does not parse and is left out"));
        assert_eq!(detect(&broken, &read, &root, Manager::Npm), Found::None);
    }
}
