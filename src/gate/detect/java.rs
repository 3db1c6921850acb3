//! Java: Maven (`pom.xml`) and Gradle (`build.gradle`, `build.gradle.kts`), read from their
//! JUnit XML reports (Surefire's `TEST-*.xml`, Gradle's `build/test-results`).
//!
//! Both tools write one XML file per test class, and name classes, not files; the command
//! runs the selected classes (`-Dtest=A,B` or `--tests A --tests B`, from the selected
//! files' names), then gathers every class report into one `<testsuites>` document at
//! `{report}`. The JUnit reader ties a class back to its file under `src/test/java/`.
//! Test failures do not stop the tool (`-Dmaven.test.failure.ignore=true`, `--continue`);
//! a build that fails leaves no class report, and the run's exit status and output say
//! why.

use super::detection::{Detection, Read, config};
use crate::gate::config::ReportFormat;

const TESTS: [&str; 4] = [
    "**/src/test/java/**/*Test.java",
    "**/src/test/java/**/*Tests.java",
    "**/src/test/java/**/Test*.java",
    "**/src/test/java/**/*TestCase.java",
];
const CARRY: [&str; 1] = ["**/src/test/resources/**"];

/// The selected files' class names, comma-separated, in `$classes`.
const CLASSES: &str = "classes=$(for f in {tests}; do basename \"$f\" .java; done | paste -sd, -)";

/// Maven's error lines, up to its help footer, without the `[ERROR]` prefix or colours.
const MAVEN_ERRORS: &str =
    "sed -n 's/\\x1b\\[[0-9;]*m//g; /\\[ERROR\\] -> \\[Help/q; s/^\\[ERROR\\] \\{0,1\\}//p'";
/// Gradle's first lines (under `-q` it prints little but errors).
const GRADLE_ERRORS: &str = "head -n 40";

/// The shell that runs `run` on the selected classes and gathers the class reports under
/// `dir` into `{report}`.
///
/// Earlier class reports are removed first (base runs twice in one tree). The tool's
/// output is kept in `{report}.log` and shown. When the tool fails (a test that does not
/// compile, a build error), each selected class that has no report gets a `<testsuite>`
/// whose `<error>` holds the tool's error lines (`errors` reads them from the log): the
/// reader makes it its file's load error, so a test calling a method the base lacks reads
/// as the compiler's `cannot find symbol`.
fn run_and_gather(run: &str, dir: &str, errors: &str) -> String {
    let reports = format!("find . -path '*/{dir}/TEST-*.xml' -type f");
    let missing = format!(
        "if [ $status -ne 0 ]; then for c in $(echo \"$classes\" | tr , ' '); do \
         [ -n \"$(find . -path '*/{dir}/*' \\( -name \"TEST-$c.xml\" -o -name \"TEST-*.$c.xml\" \\) | head -n 1)\" ] || \
         {{ echo \"<testsuite name=\\\"$c\\\"><error message=\\\"the build failed (exit $status) before $c ran\\\">\"; \
         {errors} {{report}}.log | tr -d '\\000-\\010\\013\\014\\016-\\037' | sed 's/&/\\&amp;/g; s/</\\&lt;/g; s/>/\\&gt;/g'; \
         echo '</error></testsuite>'; }}; done; fi"
    );
    format!(
        "{CLASSES}; {reports} -delete; {run} > {{report}}.log 2>&1; status=$?; cat {{report}}.log; \
         {{ echo '<testsuites>'; {reports} | sort | while read -r f; do sed '1{{/^<?xml/d}}' \"$f\"; done; \
         {missing}; echo '</testsuites>'; }} > {{report}}; exit $status"
    )
}

/// The Java defaults, or `None` when there is neither Maven nor Gradle.
pub(super) fn detect(files: &[String], _read: Read<'_>) -> Option<Detection> {
    let has = |name: &str| files.iter().any(|f| f == name);
    if has("pom.xml") {
        let wrapper = if has("mvnw") { "./mvnw" } else { "mvn" };
        let run = format!(
            "{wrapper} -B -q test -Dtest=\"$classes\" -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false -Dmaven.test.failure.ignore=true"
        );
        let command = run_and_gather(&run, "target/surefire-reports", MAVEN_ERRORS);
        let install = format!("{wrapper} -B -q -DskipTests test-compile");
        return Some(Detection {
            config: config(&TESTS, &CARRY, &[&install], &command, ReportFormat::Junit),
            ecosystem: "java",
            notes: vec![format!(
                "pom.xml: Maven ({wrapper}), the selected classes through Surefire, read from its JUnit XML"
            )],
            workspace: None,
        });
    }
    if has("build.gradle") || has("build.gradle.kts") {
        let wrapper = if has("gradlew") {
            "./gradlew"
        } else {
            "gradle"
        };
        let run = format!(
            "args=$(echo \"$classes\" | tr ',' '\\n' | sed 's/^/--tests /' | paste -sd' ' -); {wrapper} -q test --continue $args"
        );
        let command = run_and_gather(&run, "build/test-results/test", GRADLE_ERRORS);
        let install = format!("{wrapper} -q testClasses");
        return Some(Detection {
            config: config(&TESTS, &CARRY, &[&install], &command, ReportFormat::Junit),
            ecosystem: "java",
            notes: vec![format!(
                "build.gradle: Gradle ({wrapper}), the selected classes, read from its JUnit XML"
            )],
            workspace: None,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::detect::tests::files;

    #[test]
    fn maven_and_gradle_run_the_selected_classes_and_gather_their_reports() {
        let none = |_: &str| String::new();
        let found = detect(&files(&["pom.xml", "mvnw"]), &none).unwrap();
        assert_eq!(
            found.config.install,
            ["./mvnw -B -q -DskipTests test-compile"]
        );
        let command = &found.config.command;
        assert!(command.starts_with(
            "classes=$(for f in {tests}; do basename \"$f\" .java; done | paste -sd, -); find . -path '*/target/surefire-reports/TEST-*.xml' -type f -delete; ./mvnw -B -q test -Dtest=\"$classes\""
        ));
        assert!(command.contains(
            "find . -path '*/target/surefire-reports/TEST-*.xml' -type f | sort | while read -r f; do sed '1{/^<?xml/d}' \"$f\"; done; "
        ));
        assert!(command.contains(
            "<error message=\\\"the build failed (exit $status) before $c ran\\\">\"; sed -n "
        ));
        assert!(command.ends_with("echo '</testsuites>'; } > {report}; exit $status"));
        let found = detect(&files(&["build.gradle.kts"]), &none).unwrap();
        let command = &found.config.command;
        assert!(command.contains(
            "find . -path '*/build/test-results/test/TEST-*.xml' -type f -delete; args="
        ));
        assert!(command.contains("gradle -q test --continue $args > {report}.log 2>&1"));
        assert!(command.contains("head -n 40 {report}.log"));
        assert!(detect(&files(&["Makefile"]), &none).is_none());
    }
}
