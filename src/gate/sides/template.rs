//! The test command template: its placeholders, the files a run's template refers to, and
//! where a run's report is read from.
//!
//! `{tests}` is the selected files, `{report}` the path the report is written to,
//! `{test_targets}` the Cargo targets of the selected `tests/` files (`--test NAME`, with
//! `-p PACKAGE` for each package when a workspace member's file is among them),
//! `{packages}` the Go packages (`./DIR`), `{node_reporter}` repromin's node:test reporter
//! and `{nextest_config}` a cargo-nextest tool configuration (profile `repromin`: no fail
//! fast, no retries, JUnit written where the run reads it).

use std::path::{Path, PathBuf};

use crate::gate::config::ReportFormat;
use crate::gate::readers::Format;

/// Shell-quotes one argument.
pub(crate) use crate::text::shell_quote as quote;

/// The nextest profile of `{nextest_config}`.
const NEXTEST_PROFILE: &str = "repromin";

/// The longest command a rerun selects tests by id with: the command is one argument of
/// `sh -c`, and Linux refuses a single argument over 128 KiB (`E2BIG`, "Argument list too
/// long"). Past it, the rerun runs the files.
const MAX_COMMAND_BYTES: usize = 96 * 1024;

/// The files one run's template refers to, in the run's own directory.
pub(crate) struct RunFiles {
    /// Where the report is read from.
    pub(crate) report: PathBuf,
    node_reporter: PathBuf,
    nextest_config: PathBuf,
    nextest_store: PathBuf,
}

impl RunFiles {
    /// The files of a run in `dir` whose report is in `format`.
    pub(crate) fn new(dir: &Path, format: ReportFormat) -> Self {
        let nextest_store = dir.join("nextest");
        let report = match format {
            ReportFormat::Junit => dir.join("report.xml"),
            ReportFormat::Cargo => nextest_store.join(NEXTEST_PROFILE).join("junit.xml"),
            _ => dir.join("report.json"),
        };
        RunFiles {
            report,
            node_reporter: dir.join("repromin-node-reporter.mjs"),
            nextest_config: dir.join("repromin-nextest.toml"),
            nextest_store,
        }
    }

    /// Removes what an earlier run in the same directory left and writes the files the
    /// template names.
    ///
    /// # Errors
    /// A file cannot be removed or written.
    pub(crate) fn prepare(&self, template: &str) -> std::io::Result<()> {
        crate::workspace::remove_any(&self.report).map_err(std::io::Error::other)?;
        if template.contains("{node_reporter}") {
            std::fs::write(
                &self.node_reporter,
                crate::gate::readers::node_test::REPORTER,
            )?;
        }
        if template.contains("{nextest_config}") {
            std::fs::write(&self.nextest_config, self.nextest_toml())?;
        }
        Ok(())
    }

    /// The tool configuration: the store in the run's directory (so the JUnit lands at
    /// [`RunFiles::report`] whatever the project's target directory), and a profile that
    /// runs every test once.
    fn nextest_toml(&self) -> String {
        let store = toml_edit::value(self.nextest_store.display().to_string());
        format!(
            "[store]\ndir = {}\n\n[profile.{NEXTEST_PROFILE}]\nfail-fast = false\nretries = 0\n\n[profile.{NEXTEST_PROFILE}.junit]\npath = \"junit.xml\"\n",
            store.to_string().trim()
        )
    }

    /// Expands `template` for the selected `tests` of the tree at `tree` (read for the
    /// package names of workspace members).
    pub(crate) fn expand(&self, template: &str, tests: &[String], tree: &Path) -> String {
        let quoted: Vec<String> = tests.iter().map(|t| quote(t)).collect();
        let path = |p: &Path| quote(&p.display().to_string());
        template
            .replace("{tests}", &quoted.join(" "))
            .replace("{report}", &path(&self.report))
            .replace("{test_targets}", &test_targets(tests, tree))
            .replace("{packages}", &go_packages(tests))
            .replace("{node_reporter}", &path(&self.node_reporter))
            .replace(
                "{nextest_config}",
                &quote(&format!(
                    "{NEXTEST_PROFILE}:{}",
                    self.nextest_config.display()
                )),
            )
    }

    /// Expands `template` to run only the tests `ids` of the files `tests`, where the runner
    /// selects tests by id and the template says which runner it is: pytest's node ids
    /// (`FILE::NAME`) in place of `{tests}`, `go test -run '^(NAME|…)$'` (top-level names,
    /// each with all its subtests). `None` for any other runner, and for a command longer
    /// than [`MAX_COMMAND_BYTES`] (thousands of ids): its reruns run the files.
    pub(crate) fn expand_ids(
        &self,
        template: &str,
        format: ReportFormat,
        tests: &[String],
        ids: &[(&str, &str)],
        tree: &Path,
    ) -> Option<String> {
        if !selects_by_id(template, format) {
            return None;
        }
        let command = match format {
            ReportFormat::Junit => {
                let mut nodes: Vec<String> = Vec::new();
                for (file, name) in ids {
                    let node = quote(&format!("{file}::{name}"));
                    if !nodes.contains(&node) {
                        nodes.push(node);
                    }
                }
                // NUL cannot be in a command: it marks where the node ids go.
                let expanded = self.expand(&template.replace("{tests}", "\u{0}"), tests, tree);
                expanded.replace('\u{0}', &nodes.join(" "))
            }
            ReportFormat::GoTestJson => {
                let mut names: Vec<String> = Vec::new();
                for (_, name) in ids {
                    let top = name.split('/').next().unwrap_or(name);
                    let escaped = regex::escape(top);
                    if !names.contains(&escaped) {
                        names.push(escaped);
                    }
                }
                let pattern = format!("^(?:{})$", names.join("|"));
                // A rerun is a new trial: never a result from go's test cache.
                let uncached = if template.contains("-count=") {
                    ""
                } else {
                    " -count=1"
                };
                format!(
                    "{} -run {}{uncached}",
                    self.expand(template, tests, tree),
                    quote(&pattern)
                )
            }
            _ => return None,
        };
        (command.len() <= MAX_COMMAND_BYTES).then_some(command)
    }

    /// The reader and where its bytes are: the report file, or `None` for the command's
    /// output. A `cargo` run reads nextest's JUnit when nextest wrote it and the output as
    /// `cargo test` text otherwise (`cargo test` ran, or the build failed: its compile
    /// errors are in the output).
    pub(crate) fn source(&self, format: ReportFormat, template: &str) -> (Format, Option<&Path>) {
        let reader = match format {
            ReportFormat::Junit => Format::Junit,
            ReportFormat::VitestJson => Format::VitestJson,
            ReportFormat::JestJson => Format::JestJson,
            ReportFormat::Libtest => Format::LibtestPlain,
            ReportFormat::GoTestJson => Format::GoTestJson,
            ReportFormat::NodeTest => Format::NodeTest,
            ReportFormat::Cargo => {
                return if std::fs::symlink_metadata(&self.report).is_ok() {
                    (Format::Junit, Some(&self.report))
                } else {
                    (Format::LibtestPlain, None)
                };
            }
        };
        let file = template
            .contains("{report}")
            .then_some(self.report.as_path());
        (reader, file)
    }
}

/// Whether reruns of a `template` writing `format` can select tests by id: pytest (JUnit,
/// the files in `{tests}`) and `go test -json`.
pub(crate) fn selects_by_id(template: &str, format: ReportFormat) -> bool {
    match format {
        ReportFormat::Junit => template.contains("pytest") && template.contains("{tests}"),
        ReportFormat::GoTestJson => template.contains("go test"),
        _ => false,
    }
}

/// The Cargo test target of a test file: its package directory (`""` for the root) and the
/// target's name, for `DIR/tests/NAME.rs` and `DIR/tests/NAME/main.rs`.
pub(crate) fn rust_target(path: &str) -> Option<(&str, &str)> {
    let (dir, rest) = match path.strip_prefix("tests/") {
        Some(rest) => ("", rest),
        None => {
            let at = path.find("/tests/")?;
            (&path[..at], &path[at + "/tests/".len()..])
        }
    };
    let name = rest
        .strip_suffix("/main.rs")
        .or_else(|| rest.strip_suffix(".rs"))
        .filter(|n| !n.is_empty() && !n.contains('/'))?;
    Some((dir, name))
}

/// `--test NAME` for each target, and `-p PACKAGE` for each package when a workspace
/// member's target is among them (a package whose name cannot be read is left out, and so
/// are its targets: its files then have no results).
fn test_targets(tests: &[String], tree: &Path) -> String {
    let targets: Vec<(&str, &str)> = tests.iter().filter_map(|t| rust_target(t)).collect();
    let mut packages: Vec<String> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let members = targets.iter().any(|(dir, _)| !dir.is_empty());
    for (dir, name) in &targets {
        if members {
            let Some(package) = package_name(tree, dir) else {
                continue;
            };
            let arg = format!("-p {}", quote(&package));
            if !packages.contains(&arg) {
                packages.push(arg);
            }
        }
        let arg = format!("--test {}", quote(name));
        if !names.contains(&arg) {
            names.push(arg);
        }
    }
    packages.extend(names);
    packages.join(" ")
}

/// The `[package] name` of `DIR/Cargo.toml` in the tree.
fn package_name(tree: &Path, dir: &str) -> Option<String> {
    let manifest = if dir.is_empty() {
        tree.join("Cargo.toml")
    } else {
        tree.join(dir).join("Cargo.toml")
    };
    let text = std::fs::read_to_string(manifest).ok()?;
    let doc: toml_edit::DocumentMut = text.parse().ok()?;
    doc.get("package")?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

/// `./DIR` for each directory holding a selected file.
fn go_packages(tests: &[String]) -> String {
    let mut packages: Vec<String> = Vec::new();
    for t in tests {
        let dir = crate::tree::parent_of(t);
        let pkg = if dir.is_empty() {
            "./".to_string()
        } else {
            format!("./{dir}")
        };
        let pkg = quote(&pkg);
        if !packages.contains(&pkg) {
            packages.push(pkg);
        }
    }
    packages.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_with_quoting() {
        let tests = vec![
            "tests/test a.py".to_string(),
            "tests/lib.rs".to_string(),
            "tests/it/main.rs".to_string(),
        ];
        let files = RunFiles::new(Path::new("/r"), ReportFormat::Junit);
        let out = files.expand(
            "run {tests} --out {report} {test_targets} {packages} {node_reporter} {nextest_config}",
            &tests,
            Path::new("/nowhere"),
        );
        assert_eq!(
            out,
            "run 'tests/test a.py' tests/lib.rs tests/it/main.rs --out /r/report.xml --test lib --test it ./tests ./tests/it /r/repromin-node-reporter.mjs repromin:/r/repromin-nextest.toml"
        );
    }

    #[test]
    fn reruns_select_pytest_node_ids_and_go_test_names_unless_the_command_grows_too_long() {
        let files = RunFiles::new(Path::new("/r"), ReportFormat::Junit);
        let tests = vec!["tests/test_a.py".to_string()];
        let ids = [
            ("tests/test_a.py", "TestX::test_y[1-2]"),
            ("tests/test_a.py", "test z"),
            ("tests/test_a.py", "test z"),
        ];
        let nowhere = Path::new("/nowhere");
        assert_eq!(
            files
                .expand_ids(
                    "python -m pytest -q --junitxml={report} {tests}",
                    ReportFormat::Junit,
                    &tests,
                    &ids,
                    nowhere
                )
                .as_deref(),
            Some(
                "python -m pytest -q --junitxml=/r/report.xml 'tests/test_a.py::TestX::test_y[1-2]' 'tests/test_a.py::test z'"
            )
        );
        // Thousands of ids, a command `sh -c` could not take: the files.
        let names: Vec<String> = (0..4000)
            .map(|i| format!("test_spec[{i}-True-keep]"))
            .collect();
        let many: Vec<(&str, &str)> = names
            .iter()
            .map(|n| ("tests/test_a.py", n.as_str()))
            .collect();
        assert_eq!(
            files.expand_ids(
                "python -m pytest -q --junitxml={report} {tests}",
                ReportFormat::Junit,
                &tests,
                &many,
                nowhere
            ),
            None
        );
        // Another JUnit runner, and pytest without {tests}: the files.
        for template in ["jest {tests}", "python -m pytest"] {
            assert_eq!(
                files.expand_ids(template, ReportFormat::Junit, &tests, &ids, nowhere),
                None
            );
        }
        let go = [
            ("a/b_test.go", "TestParse/empty"),
            ("a/b_test.go", "TestParse/x"),
            ("a/b_test.go", "TestQ"),
        ];
        let files = RunFiles::new(Path::new("/r"), ReportFormat::GoTestJson);
        assert_eq!(
            files
                .expand_ids(
                    "go test -json {packages}",
                    ReportFormat::GoTestJson,
                    &["a/b_test.go".to_string()],
                    &go,
                    nowhere
                )
                .as_deref(),
            Some("go test -json ./a -run '^(?:TestParse|TestQ)$' -count=1")
        );
    }

    #[test]
    fn workspace_members_are_named_by_package() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path();
        std::fs::write(
            tree.join("Cargo.toml"),
            "[workspace]\nmembers = [\"data-url\", \"url\"]\n",
        )
        .unwrap();
        for (member, name) in [("data-url", "data-url"), ("url", "url ext")] {
            std::fs::create_dir_all(tree.join(member)).unwrap();
            std::fs::write(
                tree.join(member).join("Cargo.toml"),
                format!("[package]\nname = \"{name}\"\n"),
            )
            .unwrap();
        }
        let tests = |names: &[&str]| names.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        let targets = |names: &[&str]| test_targets(&tests(names), tree);
        assert_eq!(
            targets(&["data-url/tests/wpt.rs"]),
            "-p data-url --test wpt"
        );
        assert_eq!(
            targets(&[
                "data-url/tests/wpt.rs",
                "url/tests/wpt.rs",
                "url/tests/unit/main.rs"
            ]),
            "-p data-url -p 'url ext' --test wpt --test unit"
        );
        // A member whose manifest has no name: its target is left out.
        assert_eq!(
            targets(&["gone/tests/a.rs", "data-url/tests/b.rs"]),
            "-p data-url --test b"
        );
        // The root package alone needs no -p.
        assert_eq!(targets(&["tests/a.rs", "tests/common/mod.rs"]), "--test a");
        assert_eq!(
            rust_target("data-url/tests/wpt.rs"),
            Some(("data-url", "wpt"))
        );
        assert_eq!(rust_target("a/b/tests/it/main.rs"), Some(("a/b", "it")));
        assert_eq!(rust_target("tests/common/mod.rs"), None);
        assert_eq!(rust_target("src/tests.rs"), None);
    }

    #[test]
    fn a_cargo_run_reads_nextest_junit_when_written_and_the_output_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let files = RunFiles::new(dir.path(), ReportFormat::Cargo);
        files
            .prepare("cargo nextest run --tool-config-file {nextest_config}")
            .unwrap();
        let config = std::fs::read_to_string(dir.path().join("repromin-nextest.toml")).unwrap();
        let parsed: toml_edit::DocumentMut = config.parse().unwrap();
        assert_eq!(
            parsed["store"]["dir"].as_str(),
            Some(dir.path().join("nextest").display().to_string().as_str())
        );
        assert_eq!(
            parsed["profile"]["repromin"]["retries"].as_integer(),
            Some(0)
        );
        let template = "x";
        assert!(matches!(
            files.source(ReportFormat::Cargo, template),
            (Format::LibtestPlain, None)
        ));
        std::fs::create_dir_all(files.report.parent().unwrap()).unwrap();
        std::fs::write(&files.report, "<testsuites/>").unwrap();
        assert!(matches!(
            files.source(ReportFormat::Cargo, template),
            (Format::Junit, Some(_))
        ));
        // A later run in the same directory does not read this one's report.
        files.prepare(template).unwrap();
        assert!(!files.report.exists());
    }
}
