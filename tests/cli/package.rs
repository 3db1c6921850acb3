//! The published crate: `cargo install repromin` builds from what `cargo package` puts in
//! it, so it must hold every file the build reads, and none of the test data, fuzzing
//! corpora and benchmark inputs that only a clone of the repository needs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The listed files may weigh at most this much, uncompressed. Today they weigh about
/// 3.1 MiB: src/ (2.6 MiB, the remote-execution client and worker among it) and docs/
/// (0.5 MiB). The bound leaves room for the code and the documentation to grow, and fails
/// when a tree of test data, a corpus or a benchmark input is swept in, so that such a
/// change is made on purpose: leave the files out in `include` (Cargo.toml), or raise the
/// bound here and say why. (crates.io refuses crates over 10 MiB compressed; ours
/// compresses to under 1 MiB.)
const MAX_TOTAL_BYTES: u64 = 4 * 1024 * 1024;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files `cargo package` would put in the crate, relative to the root.
fn packaged() -> BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let o = Command::new(cargo)
        .args(["package", "--list", "--locked", "--allow-dirty"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cargo package --list: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Every file under `dir`, relative to the root, with `/` separators.
fn files_under(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            let rel = path.strip_prefix(root()).unwrap();
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The files that `include_str!` and `include_bytes!` in src/ name, relative to the root.
fn embedded_files() -> Vec<String> {
    let mut sources = Vec::new();
    files_under(&root().join("src"), &mut sources);
    let include = regex::Regex::new(r#"include_(?:str|bytes)!\(\s*"([^"]+)"\s*\)"#).unwrap();
    let mut found = Vec::new();
    for source in sources.iter().filter(|s| s.ends_with(".rs")) {
        let text = std::fs::read_to_string(root().join(source)).unwrap();
        for capture in include.captures_iter(&text) {
            let dir = Path::new(source).parent().unwrap();
            let mut parts: Vec<&str> = dir.to_str().unwrap().split('/').collect();
            for part in capture[1].split('/') {
                match part {
                    ".." => {
                        parts.pop();
                    }
                    "." => {}
                    part => parts.push(part),
                }
            }
            found.push(parts.join("/"));
        }
    }
    found
}

#[test]
fn the_crate_holds_what_the_build_and_the_docs_need() {
    let listed = packaged();
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "README.md",
        "CHANGELOG.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "src/main.rs",
        "src/lib.rs",
        "docs/reduce.md",
        // Read by a unit test of src/gate/line through CARGO_MANIFEST_DIR.
        "docs/line-schema.md",
    ] {
        assert!(listed.contains(needed), "{needed} is not packaged");
    }
    let mut sources = Vec::new();
    files_under(&root().join("src"), &mut sources);
    for source in &sources {
        assert!(listed.contains(source), "{source} is not packaged");
    }
    let embedded = embedded_files();
    // The node:test reporter the gate writes out, and the docs the unit tests check.
    for known in [
        "src/gate/readers/node_reporter.mjs",
        "docs/config-schema.md",
    ] {
        assert!(embedded.iter().any(|e| e == known), "{known}: {embedded:?}");
    }
    for file in &embedded {
        assert!(listed.contains(file), "{file} is embedded but not packaged");
    }
}

#[test]
fn the_crate_leaves_out_tests_fixtures_fuzzing_and_benchmarks() {
    let listed = packaged();
    let left_out = [
        "tests/",
        "fixtures/",
        "fuzz/",
        "bench/",
        "target/",
        "workflows/",
        ".ci/",
        "schemas/",
        ".github/",
        "action.yml",
        ".gitignore",
    ];
    for file in &listed {
        for prefix in left_out {
            assert!(!file.starts_with(prefix), "{file} is packaged");
        }
    }
}

#[test]
fn the_crate_stays_small() {
    let listed = packaged();
    let mut total = 0;
    for file in &listed {
        // cargo writes these two itself when it packages.
        if file == ".cargo_vcs_info.json" || file == "Cargo.toml.orig" {
            continue;
        }
        let meta = std::fs::metadata(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        total += meta.len();
    }
    assert!(
        total <= MAX_TOTAL_BYTES,
        "the packaged files weigh {total} bytes, over the bound of {MAX_TOTAL_BYTES}"
    );
}
