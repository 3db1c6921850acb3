//! The release and the action's installer, as far as they run here: dist/package.sh and
//! dist/checksums.sh on this machine's target; the release workflow run step by step from
//! its file (each target's build stood in by the binary `cargo test` built, the attestation
//! checked against its checksums file, `gh release create` recorded); and the action
//! installing a release served from 127.0.0.1 against checksums pinned in a test copy of
//! the action, refusing a replaced asset, and choosing the source build where it must.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::{Event, Finished, Job, printed_line, root, text, yaml};
use crate::util::{GitRepo, require_tool, tool_runs};

/// The version in Cargo.toml, which names every asset.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The targets the release builds, and so the ones the action installs a binary for.
const TARGETS: [&str; 2] = ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"];

/// The target the action picks on the test runner's Linux/X64.
const LINUX_X64: &str = "x86_64-unknown-linux-musl";

/// This machine's target triple, as rustc names it.
fn host_target() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let out = Command::new(rustc).arg("-vV").output().unwrap();
    text(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_string()
}

/// A copy of the binary `cargo test` built, in `dir`, without its debug sections (a
/// quarter of the size, so that packaging it takes a second or two): a stand-in for a
/// release build.
fn built_binary(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let out = dir.join("repromin");
    let stripped = Command::new("strip")
        .arg("-o")
        .arg(&out)
        .arg(crate::util::bin())
        .status();
    if !stripped.is_ok_and(|s| s.success()) {
        std::fs::copy(crate::util::bin(), &out).unwrap();
    }
    out
}

fn sh(program: &Path, args: &[&str], cwd: &Path) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// Runs `dist/package.sh` of the tree at `tree`; returns the archive's path.
fn package(tree: &Path, target: &str, binary: &Path, outdir: &Path) -> PathBuf {
    let o = sh(
        &tree.join("dist/package.sh"),
        &[
            target,
            &binary.display().to_string(),
            &outdir.display().to_string(),
        ],
        tree,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    PathBuf::from(text(&o.stdout).trim())
}

/// The entries of a `.tar.gz`, sorted.
fn entries(archive: &Path) -> Vec<String> {
    let o = Command::new("tar")
        .arg("-tzf")
        .arg(archive)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut names: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    names.sort();
    names
}

fn sha256(file: &Path) -> String {
    let o = Command::new("sha256sum").arg(file).output().unwrap();
    assert!(o.status.success());
    text(&o.stdout)[..64].to_string()
}

/// `sha256sum -c SHA256SUMS` in `dir`.
fn check_sums(dir: &Path) -> Output {
    Command::new("sha256sum")
        .args(["--strict", "-c", "SHA256SUMS"])
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Unpacks `archive` into `dir` and runs the packaged `repromin --version`.
fn packaged_version(archive: &Path, dir: &Path, name: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let o = Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let bin = dir.join(name).join("repromin");
    let mode = std::fs::metadata(&bin).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755, "{}", bin.display());
    let o = Command::new(&bin).arg("--version").output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// Copies the files of the repository named in `paths` (files or directories) to `dest`.
fn copy_tree(paths: &[&str], dest: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    for path in paths {
        let o = Command::new("cp")
            .arg("-R")
            .arg(root().join(path))
            .arg(dest.join(path))
            .output()
            .unwrap();
        assert!(o.status.success(), "cp {path}: {}", text(&o.stderr));
    }
}

#[test]
fn the_packaging_script_makes_the_release_archive_and_its_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let binary = built_binary(&dir.path().join("build"));
    let target = host_target();
    let name = format!("repromin-v{VERSION}-{target}");
    let out = dir.path().join("out");

    let archive = package(&root(), &target, &binary, &out);
    assert_eq!(archive, out.join(format!("{name}.tar.gz")));
    // One directory: the binary, the README, and the licence files and changelog that the
    // repository has (none of these yet, on some branches).
    let mut expected = vec![
        format!("{name}/"),
        format!("{name}/README.md"),
        format!("{name}/repromin"),
    ];
    for entry in std::fs::read_dir(root()).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().to_string();
        if file.starts_with("LICENSE") || file == "CHANGELOG.md" {
            expected.push(format!("{name}/{file}"));
        }
    }
    // The JSON Schemas, as the repository holds them.
    expected.push(format!("{name}/schemas/"));
    for entry in std::fs::read_dir(root().join("schemas")).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().to_string();
        expected.push(format!("{name}/schemas/{file}"));
    }
    assert!(expected.contains(&format!("{name}/schemas/line.schema.json")));
    // The completions and the man pages, as the binary itself writes them.
    expected.push(format!("{name}/complete/"));
    for file in [
        "repromin.bash",
        "_repromin",
        "repromin.fish",
        "repromin.elv",
        "_repromin.ps1",
    ] {
        expected.push(format!("{name}/complete/{file}"));
    }
    expected.push(format!("{name}/man/"));
    let pages = dir.path().join("pages");
    let o = Command::new(&binary)
        .args(["man", "--dir"])
        .arg(&pages)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    for page in std::fs::read_dir(&pages).unwrap() {
        let page = page.unwrap().file_name().to_string_lossy().to_string();
        expected.push(format!("{name}/man/{page}"));
    }
    assert!(expected.contains(&format!("{name}/man/repromin-reduce.1")));
    expected.sort();
    assert_eq!(entries(&archive), expected);
    let unpacked = dir.path().join("unpacked");
    assert_eq!(
        packaged_version(&archive, &unpacked, &name),
        format!("repromin {VERSION}\n")
    );
    assert_eq!(
        std::fs::read(unpacked.join(&name).join("README.md")).unwrap(),
        std::fs::read(root().join("README.md")).unwrap()
    );
    let bash = Command::new(&binary)
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert_eq!(
        std::fs::read(unpacked.join(&name).join("complete/repromin.bash")).unwrap(),
        bash.stdout
    );
    assert_eq!(
        std::fs::read(unpacked.join(&name).join("schemas/line.schema.json")).unwrap(),
        std::fs::read(root().join("schemas/line.schema.json")).unwrap()
    );
    assert_eq!(
        std::fs::read(unpacked.join(&name).join("man/repromin-reduce.1")).unwrap(),
        std::fs::read(pages.join("repromin-reduce.1")).unwrap()
    );

    // SHA256SUMS over every asset, in sha256sum's own format.
    let second = package(&root(), "aarch64-unknown-linux-musl", &binary, &out);
    let o = sh(
        &root().join("dist/checksums.sh"),
        &[&out.display().to_string()],
        &root(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    let mut lines: Vec<(String, String)> = [&second, &archive]
        .iter()
        .map(|a| {
            let file = a.file_name().unwrap().to_string_lossy().to_string();
            (file.clone(), format!("{}  {file}", sha256(a)))
        })
        .collect();
    lines.sort();
    let lines: Vec<String> = lines.into_iter().map(|(_, line)| line).collect();
    assert_eq!(sums, format!("{}\n", lines.join("\n")));
    let o = check_sums(&out);
    assert!(o.status.success(), "{}", text(&o.stdout));
    // The check is real: an asset changed after the fact fails it.
    let mut bytes = std::fs::read(&archive).unwrap();
    bytes.push(0);
    std::fs::write(&archive, bytes).unwrap();
    let o = check_sums(&out);
    assert!(!o.status.success(), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains(&format!("{name}.tar.gz: FAILED")));

    // In a tree with licence files and a changelog (and another Markdown file): the
    // version is that tree's Cargo.toml's, and the licences and changelog go in, the
    // rest stays out.
    let tree = dir.path().join("tree");
    copy_tree(&["Cargo.toml", "README.md", "dist"], &tree);
    let manifest = std::fs::read_to_string(tree.join("Cargo.toml")).unwrap();
    std::fs::write(
        tree.join("Cargo.toml"),
        manifest.replacen(
            &format!("version = \"{VERSION}\""),
            "version = \"9.8.7\"",
            1,
        ),
    )
    .unwrap();
    for file in ["LICENSE-MIT", "LICENSE-APACHE", "CHANGELOG.md", "NOTES.md"] {
        std::fs::write(tree.join(file), file).unwrap();
    }
    let archive = package(&tree, &target, &binary, &dir.path().join("out2"));
    let name = format!("repromin-v9.8.7-{target}");
    assert_eq!(
        archive.file_name().unwrap().to_string_lossy(),
        format!("{name}.tar.gz")
    );
    let top: Vec<String> = entries(&archive)
        .into_iter()
        .filter(|e| !e.contains("/complete/") && !e.contains("/man/"))
        .collect();
    assert_eq!(
        top,
        [
            "/",
            "/CHANGELOG.md",
            "/LICENSE-APACHE",
            "/LICENSE-MIT",
            "/README.md",
            "/repromin"
        ]
        .map(|e| format!("{name}{e}"))
    );

    // What is not a target or not a binary is refused.
    let script = root().join("dist/package.sh");
    let outdir = dir.path().join("out3").display().to_string();
    let o = sh(
        &script,
        &["x86_64 linux", &binary.display().to_string(), &outdir],
        &root(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let o = sh(&script, &[&target, "README.md", &outdir], &root());
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("is not an executable file"));
    let o = sh(
        &root().join("dist/checksums.sh"),
        &[&dir.path().join("empty").display().to_string()],
        &root(),
    );
    assert!(!o.status.success());
}

/// A git repository holding what the release workflow reads (Cargo.toml, README.md and
/// dist/, executable bits and all), with the tag `v{VERSION}`.
fn tagged_repository() -> (GitRepo, String) {
    let repo = GitRepo::new();
    copy_tree(&["Cargo.toml", "README.md", "dist"], repo.path());
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "release"]);
    repo.git(&["tag", &format!("v{VERSION}")]);
    let sha = repo.git(&["rev-parse", "HEAD"]);
    (repo, sha)
}

fn push_of_tag(repo: &GitRepo, sha: &str, tag: &str, artifacts: &Path) -> Event {
    Event {
        values: BTreeMap::from(
            [
                ("github.ref_name", tag),
                ("github.sha", sha),
                ("github.token", "token"),
                ("github.repository", "owner/project"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string())),
        ),
        origin: repo.path().to_path_buf(),
        artifacts: artifacts.to_path_buf(),
    }
}

/// The steps of the build job that set up this machine (apt-get, rustup) are left out.
fn no_machine_setup(name: &str, _: &mut BTreeMap<String, String>) -> bool {
    !["Install musl-tools", "Set up Rust"].contains(&name)
}

#[test]
fn the_release_workflow_packages_attests_and_publishes_every_target() {
    let dir = tempfile::tempdir().unwrap();
    let binary = built_binary(dir.path());
    let (repo, sha) = tagged_repository();
    let artifacts = tempfile::tempdir().unwrap();
    let tag = format!("v{VERSION}");
    let event = push_of_tag(&repo, &sha, &tag, artifacts.path());
    let workflow = yaml(&root().join("workflows/release.yml"));
    assert_eq!(workflow["jobs"]["release"]["needs"], "build");

    let matrix = workflow["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap();
    let targets: Vec<&str> = matrix
        .iter()
        .map(|m| m["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, TARGETS);
    for entry in matrix {
        let mut job = Job::new();
        job.stand_in = binary.clone();
        job.matrix = entry
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        let (finished, runs) = job.run(
            &event,
            &workflow,
            "build",
            &BTreeMap::new(),
            &no_machine_setup,
        );
        assert_eq!(finished.result, "success");
        let target = &job.matrix["target"];
        assert_eq!(
            text(&runs["Check that the binary runs"].output.stdout),
            format!("repromin {VERSION}\n")
        );
        let asset = format!("repromin-v{VERSION}-{target}.tar.gz");
        assert!(
            artifacts
                .path()
                .join(format!("repromin-{target}"))
                .join(&asset)
                .is_file(),
            "{asset}"
        );
    }

    let needs = BTreeMap::from([(
        "build".to_string(),
        Finished {
            result: "success",
            outputs: BTreeMap::new(),
        },
    )]);
    let mut job = Job::new();
    let (finished, runs) = job.run(&event, &workflow, "release", &needs, &|_, _| true);
    assert_eq!(finished.result, "success");
    let assets = job.temp.join("assets");
    let mut names: Vec<String> = TARGETS
        .iter()
        .map(|t| format!("repromin-v{VERSION}-{t}.tar.gz"))
        .collect();
    names.sort();
    // SHA256SUMS lists every archive and checks; the attestation covers each of them.
    let o = check_sums(&assets);
    assert!(o.status.success(), "{}", text(&o.stdout));
    let sums = std::fs::read_to_string(assets.join("SHA256SUMS")).unwrap();
    let listed: Vec<&str> = sums.lines().map(|l| &l[66..]).collect();
    assert_eq!(listed, names);
    assert_eq!(
        text(&runs["Write SHA256SUMS"].output.stdout),
        sums,
        "the log shows the checksums"
    );
    assert_eq!(job.attested, names);
    // The release: the tag, every archive and SHA256SUMS.
    let call: Vec<String> = std::fs::read_to_string(job.temp.join("gh-call"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        call[..9],
        [
            "release",
            "create",
            &tag,
            "--repo",
            "owner/project",
            "--verify-tag",
            "--title",
            &format!("repromin {tag}"),
            "--generate-notes",
        ]
    );
    let mut uploaded: Vec<String> = call[9..]
        .iter()
        .map(|f| {
            let path = Path::new(f);
            assert_eq!(path.parent().unwrap(), assets);
            path.file_name().unwrap().to_string_lossy().to_string()
        })
        .collect();
    uploaded.sort();
    let mut expected = names.clone();
    expected.insert(0, "SHA256SUMS".to_string());
    assert_eq!(uploaded, expected);
    // What was released runs.
    let name = format!("repromin-v{VERSION}-{LINUX_X64}");
    assert_eq!(
        packaged_version(
            &assets.join(format!("{name}.tar.gz")),
            &dir.path().join("x"),
            &name
        ),
        format!("repromin {VERSION}\n")
    );

    // A tag that is not Cargo.toml's version builds nothing.
    let artifacts = tempfile::tempdir().unwrap();
    let event = push_of_tag(&repo, &sha, "v9.9.9", artifacts.path());
    let mut job = Job::new();
    job.may_fail = true;
    job.matrix = BTreeMap::from([
        ("target".to_string(), LINUX_X64.to_string()),
        ("runner".to_string(), "ubuntu-24.04".to_string()),
    ]);
    let (finished, runs) = job.run(
        &event,
        &workflow,
        "build",
        &BTreeMap::new(),
        &no_machine_setup,
    );
    assert_eq!(finished.result, "failure");
    let check = &runs["Check the tag against Cargo.toml"];
    assert!(
        text(&check.output.stderr).contains(&format!("the tag v9.9.9 is not v{VERSION}")),
        "{}",
        text(&check.output.stderr)
    );
    assert!(!runs.contains_key("Package"));
    assert_eq!(std::fs::read_dir(artifacts.path()).unwrap().count(), 0);
}

/// `python3 -m http.server` on 127.0.0.1 and a port of its choosing, ended on drop.
struct Server {
    child: Child,
    _stdout: BufReader<ChildStdout>,
    url: String,
}

impl Server {
    fn serve(dir: &Path) -> Server {
        let mut child = Command::new("python3")
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .arg("--directory")
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let port: u16 = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("python3 -m http.server said: {line}"));
        Server {
            child,
            _stdout: stdout,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A release of `VERSION` served from 127.0.0.1 (the directory `v{VERSION}/` with the
/// archive for Linux/X64 and SHA256SUMS), and a copy of the action that pins its
/// checksums as dist/checksums/v{VERSION}.sha256: what a release leaves, made as
/// docs/ci.md says it is made.
struct ServedRelease {
    dir: tempfile::TempDir,
    action: PathBuf,
    asset: PathBuf,
    server: Server,
}

impl ServedRelease {
    fn new() -> ServedRelease {
        let dir = tempfile::tempdir().unwrap();
        let action = dir.path().join("action");
        copy_tree(
            &[
                "action.yml",
                "action",
                "dist",
                "Cargo.toml",
                "Cargo.lock",
                "src",
                "README.md",
            ],
            &action,
        );
        let pins = action.join("dist/checksums");
        std::fs::remove_dir_all(&pins).unwrap();
        std::fs::create_dir(&pins).unwrap();
        let served = dir.path().join("served");
        let release = served.join(format!("v{VERSION}"));
        let binary = built_binary(&dir.path().join("build"));
        let asset = package(&action, LINUX_X64, &binary, &release);
        let o = sh(
            &action.join("dist/checksums.sh"),
            &[&release.display().to_string()],
            &action,
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        std::fs::copy(
            release.join("SHA256SUMS"),
            pins.join(format!("v{VERSION}.sha256")),
        )
        .unwrap();
        let server = Server::serve(&served);
        ServedRelease {
            dir,
            action,
            asset,
            server,
        }
    }

    /// A job whose action is the copy and whose downloads go to the server.
    fn job(&self) -> Job {
        let mut job = Job::new();
        job.action_path = self.action.clone();
        job.env
            .insert("REPROMIN_RELEASE_URL".into(), self.server.url.clone());
        job
    }
}

/// Whether curl, which the action's installer downloads with, is here.
fn curl_available() -> bool {
    require_tool("curl", tool_runs("curl"))
}

/// A repository and the `with:` of a judge step on it whose reports are missing: the
/// judge then prints one `error` line, which shows the binary the action chose ran.
fn judge_inputs() -> (GitRepo, BTreeMap<String, String>) {
    let repo = GitRepo::new();
    let base = repo.commit(&[("a.txt", "a\n")], "base");
    let head = repo.commit(&[("a.txt", "b\n")], "head");
    let missing = repo.path().join("missing").display().to_string();
    let with = BTreeMap::from(
        [
            ("command", "judge"),
            ("base", &base),
            ("head", &head),
            ("repo", &repo.path().display().to_string()),
            ("base-report", &missing),
            ("head-report", &missing),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    (repo, with)
}

/// Every file named `repromin` under `dir`, and every installer directory left there.
fn installed_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().to_string();
            if name == "repromin" || name.starts_with("repromin-install.") {
                found.push(entry.path());
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
        }
    }
    found
}

#[test]
fn the_action_installs_the_pinned_release_binary_in_seconds() {
    if !curl_available() {
        return;
    }
    let release = ServedRelease::new();
    let (_repo, with) = judge_inputs();
    let mut job = release.job();
    // Nothing is built: a stand-in that does not exist would fail the run step.
    job.stand_in = release.dir.path().join("no-build");
    let start = Instant::now();
    let run = job.action(&with);
    let took = start.elapsed();
    assert!(run.failed.is_none());
    assert_eq!(run.ran, ["Install repromin", "Run repromin"]);
    assert_eq!(run.outputs["install"], "binary");
    let bin = PathBuf::from(&run.outputs["bin"]);
    assert!(
        bin.starts_with(&job.temp) && bin.ends_with("bin/repromin"),
        "{}",
        bin.display()
    );
    let o = Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(text(&o.stdout), format!("repromin {VERSION}\n"));
    // It says what it did, with the checksum it checked.
    let said = text(&run.steps["install"].output.stderr);
    assert!(
        said.contains(&format!(
            "repromin: installed the release binary v{VERSION} for {LINUX_X64} \
             (repromin-v{VERSION}-{LINUX_X64}.tar.gz, SHA-256 {}",
            sha256(&release.asset)
        )),
        "{said}"
    );
    assert_eq!(run.steps["install"].outputs["version"], VERSION, "{said}");
    // The run step ran the installed binary.
    let line = printed_line(&run.steps["run"]);
    assert_eq!(line["verdict"], "error", "{line}");
    assert!(took < Duration::from_secs(30), "installing took {took:?}");
}

#[test]
fn the_action_refuses_a_replaced_release_asset() {
    if !curl_available() {
        return;
    }
    let release = ServedRelease::new();
    let (_repo, with) = judge_inputs();
    let pinned = sha256(&release.asset);
    // A convincing replacement: the same name and layout, another binary.
    let fake_dir = release.dir.path().join("fake");
    std::fs::create_dir_all(&fake_dir).unwrap();
    let fake = fake_dir.join("repromin");
    // A binary of another build: it says the same version and writes its own pages.
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\ncase $1 in\n  man) echo page > \"$3/repromin.1\" ;;\n  \
             completions) echo complete ;;\n  *) echo repromin {VERSION} ;;\nesac\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let replacement = package(&release.action, LINUX_X64, &fake, &fake_dir.join("out"));
    std::fs::copy(&replacement, &release.asset).unwrap();
    let replaced = sha256(&release.asset);
    assert_ne!(pinned, replaced);

    let mut job = release.job();
    job.may_fail = true;
    let run = job.action(&with);
    assert_eq!(run.failed.as_deref(), Some("install"));
    assert_eq!(run.ran, ["Install repromin"]);
    let install = &run.steps["install"];
    assert!(!install.output.status.success());
    let said = text(&install.output.stderr);
    assert!(
        said.contains(&format!(
            "SHA-256 mismatch for repromin-v{VERSION}-{LINUX_X64}.tar.gz from {}/v{VERSION}/\
             repromin-v{VERSION}-{LINUX_X64}.tar.gz: expected {pinned} \
             (dist/checksums/v{VERSION}.sha256), got {replaced}",
            release.server.url
        )),
        "{said}"
    );
    assert!(said.contains("it was not installed"), "{said}");
    assert!(!install.outputs.contains_key("bin"));
    assert_eq!(installed_files(&job.temp), Vec::<PathBuf>::new());

    // An asset that is not there is an error too, never a silent source build.
    std::fs::remove_file(&release.asset).unwrap();
    let mut job = release.job();
    job.may_fail = true;
    let run = job.action(&with);
    assert_eq!(run.failed.as_deref(), Some("install"));
    let said = text(&run.steps["install"].output.stderr);
    assert!(
        said.contains(&format!(
            "cannot download {}/v{VERSION}/repromin-v{VERSION}-{LINUX_X64}.tar.gz",
            release.server.url
        )),
        "{said}"
    );
    assert_eq!(installed_files(&job.temp), Vec::<PathBuf>::new());
}

/// A case of the source build: its name, the action's directory (the served release's
/// copy when `None`), the action's inputs and the job's variables, and the reason the
/// installer must give.
type SourceCase<'a> = (
    &'a str,
    Option<&'a Path>,
    &'a [(&'a str, &'a str)],
    &'a [(&'a str, &'a str)],
    String,
);

#[test]
fn the_action_builds_from_source_where_no_binary_is_pinned_or_asked_for() {
    if !curl_available() {
        return;
    }
    let release = ServedRelease::new();
    let (_repo, judge) = judge_inputs();
    // A copy of the action with no checksums pinned, and one whose own version has moved
    // on past the newest pinned release.
    let unpinned = release.dir.path().join("unpinned");
    copy_tree(
        &[
            "action.yml",
            "action",
            "dist",
            "Cargo.toml",
            "Cargo.lock",
            "src",
        ],
        &unpinned,
    );
    for entry in std::fs::read_dir(unpinned.join("dist/checksums")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sha256") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let moved_on = release.dir.path().join("moved-on");
    copy_tree(&["action.yml", "action", "Cargo.lock", "src"], &moved_on);
    let o = Command::new("cp")
        .arg("-R")
        .arg(release.action.join("dist"))
        .arg(moved_on.join("dist"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    std::fs::write(
        moved_on.join("Cargo.toml"),
        manifest.replacen(
            &format!("version = \"{VERSION}\""),
            "version = \"99.0.0\"",
            1,
        ),
    )
    .unwrap();

    let cases: [SourceCase; 5] = [
        (
            "install: source",
            None,
            &[("install", "source")],
            &[],
            "the install input is source".to_string(),
        ),
        (
            "a version with no pinned checksums",
            None,
            &[("version", "v9.9.9")],
            &[],
            format!(
                "this action pins no checksums for v9.9.9 (dist/checksums/v9.9.9.sha256); \
                 its source is v{VERSION}"
            ),
        ),
        (
            "a 32-bit Arm runner",
            None,
            &[],
            &[("RUNNER_ARCH", "ARM")],
            "no release binary is built for Linux/ARM".to_string(),
        ),
        (
            "no checksums pinned at all",
            Some(&unpinned),
            &[],
            &[],
            "this action pins no release checksums yet (dist/checksums/)".to_string(),
        ),
        (
            "an action newer than its newest pinned release",
            Some(&moved_on),
            &[],
            &[],
            format!(
                "the newest release pinned here, v{VERSION}, is not the action's own \
                 version v99.0.0"
            ),
        ),
    ];
    for (case, action, with, env, reason) in cases {
        let mut job = release.job();
        if let Some(action) = action {
            job.action_path = action.to_path_buf();
        }
        for (k, v) in env {
            job.env.insert((*k).to_string(), (*v).to_string());
        }
        let mut inputs = judge.clone();
        for (k, v) in with {
            inputs.insert((*k).to_string(), (*v).to_string());
        }
        let run = job.action(&inputs);
        assert!(run.failed.is_none(), "{case}");
        assert_eq!(run.outputs["install"], "source", "{case}");
        assert_eq!(
            run.ran,
            [
                "Install repromin",
                "Key the build on repromin's source",
                "Restore the repromin binary",
                "Build repromin",
                "Save the repromin binary",
                "Run repromin"
            ],
            "{case}"
        );
        assert_eq!(run.steps["install"].outputs["reason"], reason, "{case}");
        let said = text(&run.steps["install"].output.stderr);
        assert_eq!(
            said,
            format!("repromin: building repromin from the action's own source: {reason}\n"),
            "{case}"
        );
        assert_eq!(run.outputs["bin"], job.stand_in.display().to_string());
        assert_eq!(
            printed_line(&run.steps["run"])["verdict"],
            "error",
            "{case}"
        );
        assert_eq!(installed_files(&job.temp), Vec::<PathBuf>::new(), "{case}");
    }

    // Inputs that are neither are errors, not a guess.
    for (with, message) in [
        (
            ("install", "both"),
            "the install input must be binary or source, not 'both'",
        ),
        (
            ("version", "../v1"),
            "the version input must be a version such as 0.1.0, not '../v1'",
        ),
    ] {
        let mut job = release.job();
        job.may_fail = true;
        let mut inputs = judge.clone();
        inputs.insert(with.0.to_string(), with.1.to_string());
        let run = job.action(&inputs);
        assert_eq!(run.failed.as_deref(), Some("install"));
        let said = text(&run.steps["install"].output.stderr);
        assert!(said.contains(message), "{said}");
    }

    // A runner that is not Linux gets neither a binary nor a source build that cannot
    // compile there, but an error that says why, at once, even when source is asked for.
    for (os, install) in [
        ("macOS", "binary"),
        ("macOS", "source"),
        ("Windows", "binary"),
    ] {
        let mut job = release.job();
        job.may_fail = true;
        job.env.insert("RUNNER_OS".to_string(), os.to_string());
        let mut inputs = judge.clone();
        inputs.insert("install".to_string(), install.to_string());
        let run = job.action(&inputs);
        assert_eq!(run.failed.as_deref(), Some("install"), "{os} {install}");
        assert_eq!(run.ran, ["Install repromin"], "{os} {install}");
        let said = text(&run.steps["install"].output.stderr);
        assert!(
            said.contains("repromin runs on Linux runners only") && said.contains(os),
            "{said}"
        );
        assert_eq!(installed_files(&job.temp), Vec::<PathBuf>::new());
    }
}

/// cargo-binstall's metadata names the archives the release publishes: for each released
/// target, and for the glibc hosts it points at them, the URL and the binary's path inside
/// are those `dist/package.sh` writes.
#[test]
fn the_binstall_metadata_names_the_released_archives() {
    let manifest: toml_edit::DocumentMut = std::fs::read_to_string(root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let binstall = &manifest["package"]["metadata"]["binstall"];
    let render = |template: &str, target: &str| {
        template
            .replace("{ repo }", "https://github.com/repromin/repromin")
            .replace("{ version }", VERSION)
            .replace("{ target }", target)
            .replace("{ bin }", "repromin")
            .replace("{ binary-ext }", "")
    };
    let hosts = [
        ("x86_64-unknown-linux-musl", "x86_64-unknown-linux-musl"),
        ("aarch64-unknown-linux-musl", "aarch64-unknown-linux-musl"),
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl"),
        ("aarch64-unknown-linux-gnu", "aarch64-unknown-linux-musl"),
    ];
    for (host, released) in hosts {
        assert!(TARGETS.contains(&released));
        let spec = binstall["overrides"]
            .get(host)
            .filter(|o| o.get("pkg-url").is_some())
            .unwrap_or(binstall);
        let url = render(spec["pkg-url"].as_str().unwrap(), host);
        let bin_dir = render(spec["bin-dir"].as_str().unwrap(), host);
        let name = format!("repromin-v{VERSION}-{released}");
        assert_eq!(
            url,
            format!(
                "https://github.com/repromin/repromin/releases/download/v{VERSION}/{name}.tar.gz"
            ),
            "{host}"
        );
        assert_eq!(bin_dir, format!("{name}/repromin"), "{host}");
    }
    assert_eq!(binstall["pkg-fmt"].as_str(), Some("tgz"));
}
