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

use super::{Detection, Read, config};
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

/// Gathers the class reports under `dir` into `{report}`.
fn gather(dir: &str) -> String {
    format!(
        "{{ echo '<testsuites>'; find . -path '*/{dir}/TEST-*.xml' -type f | sort | while read -r f; do sed '1{{/^<?xml/d}}' \"$f\"; done; echo '</testsuites>'; }} > {{report}}"
    )
}

/// The Java defaults, or `None` when there is neither Maven nor Gradle.
pub(super) fn detect(files: &[String], _read: Read<'_>) -> Option<Detection> {
    let has = |name: &str| files.iter().any(|f| f == name);
    if has("pom.xml") {
        let wrapper = if has("mvnw") { "./mvnw" } else { "mvn" };
        let command = format!(
            "{CLASSES}; {wrapper} -B -q test -Dtest=\"$classes\" -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false -Dmaven.test.failure.ignore=true; status=$?; {}; exit $status",
            gather("target/surefire-reports")
        );
        let install = format!("{wrapper} -B -q -DskipTests test-compile");
        return Some(Detection {
            config: config(&TESTS, &CARRY, &[&install], &command, ReportFormat::Junit),
            ecosystem: "java",
            notes: vec![format!(
                "pom.xml: Maven ({wrapper}), the selected classes through Surefire, read from its JUnit XML"
            )],
        });
    }
    if has("build.gradle") || has("build.gradle.kts") {
        let wrapper = if has("gradlew") {
            "./gradlew"
        } else {
            "gradle"
        };
        let command = format!(
            "{CLASSES}; args=$(echo \"$classes\" | tr ',' '\\n' | sed 's/^/--tests /' | paste -sd' ' -); {wrapper} -q test --continue $args; status=$?; {}; exit $status",
            gather("build/test-results/test")
        );
        let install = format!("{wrapper} -q testClasses");
        return Some(Detection {
            config: config(&TESTS, &CARRY, &[&install], &command, ReportFormat::Junit),
            ecosystem: "java",
            notes: vec![format!(
                "build.gradle: Gradle ({wrapper}), the selected classes, read from its JUnit XML"
            )],
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
        assert!(found.config.command.starts_with(
            "classes=$(for f in {tests}; do basename \"$f\" .java; done | paste -sd, -); ./mvnw -B -q test -Dtest=\"$classes\""
        ));
        assert!(found.config.command.contains(
            "find . -path '*/target/surefire-reports/TEST-*.xml' -type f | sort | while read -r f; do sed '1{/^<?xml/d}' \"$f\"; done; echo '</testsuites>'; } > {report}; exit $status"
        ));
        let found = detect(&files(&["build.gradle.kts"]), &none).unwrap();
        assert!(
            found
                .config
                .command
                .contains("gradle -q test --continue $args")
        );
        assert!(detect(&files(&["Makefile"]), &none).is_none());
    }
}
