//! Entry points for the fuzz targets in `fuzz/` (cargo-fuzz, nightly), not a stable API.
//!
//! Each function takes the fuzzer's bytes, feeds them to one parser of untrusted input and
//! checks what an accepted input must satisfy. It returns `Err` with what is broken when a
//! parser accepts an input it should have refused, or produces a value that breaks its own
//! promises; a panic or a hang is a finding too. Refusing an input is always fine. The fuzz
//! targets panic on `Err`; the unit tests run every function over the committed seed
//! corpora in `fuzz/corpus/`, so the checks themselves are exercised by `cargo test`.
//!
//! | function | parser | an accepted input must |
//! | --- | --- | --- |
//! | [`line`] | `gate::line::parse_line` | format back to the same bytes, up to the spelling of escapes and numbers |
//! | [`decode`] | `gate::encode` (base64, gzip, JSON) | be exactly what the writer writes for the decoded value |
//! | [`junit`], [`js_json`], [`libtest`], [`go_test`], [`node_test`] | `gate::readers` | give normalised, unique, in-tree paths and trimmed, capped messages |
//! | [`repo_config`] | `gate::config::RepoConfig::parse` | keep every documented rule and limit, and read back the same |
//! | [`mutation_spec`] | `gate::mutants::parse_spec` | keep every documented rule of a spec |
//! | [`manifest`] | `reduce::manifest::candidates` | give well-formed ranges, each leaving a file that still parses, alone and merged with others of its level |
//! | [`semantic_answer`] | `reduce::semantic::parse_answer` and `safe_path` | carry at most 64 edits, each path it calls safe made of normal components only |
//! | [`frames`] | `oracle::frames::parse` and `Block::frames` (a failing command's output) | give ordered, disjoint blocks inside the output, each with at most three frames whose paths are relative, inside the tree and free of line numbers |
//! | [`edits`] | `gate::certificate::apply_edits` (a reduce report's edit set) | stay within the bound, change only listed files, and give each the size its edits say |
//! | [`access_log`] | `reduce::access::parse` (a strace log the traced command may have written to) | touch only normal relative paths under the root, each with its ancestors |
//! | [`workspace`] | `gate::detect::pnpm_workspace::packages` (pnpm-workspace.yaml at the merge base) and `gate::detect::imports::imported_packages` (the head's test files) | give one-line, trimmed, non-empty globs; give sorted, unique package names that name themselves |
//! | [`references`] | `reduce::passes::references::references_to` (the lines and defaults a deleted module takes with it, read from the tree's source) | give sorted, disjoint, in-bounds edits, cuts on whole lines, each file still UTF-8 |

use std::io::Write as _;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::gate::config::{MAX_TIMEOUT_SECS, RepoConfig};
use crate::gate::encode::{SideReport, TEST_REPORT_CAP, decode_value, encode_value};
use crate::gate::line::{format_line, parse_line, pretty, respelt, skeleton};
use crate::gate::readers::{Format, ReadContext};
use crate::gate::test_report::{Status, TestReport};
use crate::reduce::manifest::{ManifestKind, candidates, check};

pub use crate::reduce::manifest::check::Violation;

/// What an accepted input broke.
pub type Broken = Result<(), Violation>;

/// The strict line parser: an accepted line formats back to itself once escapes and
/// numbers are spelt as the writer spells them, byte for byte outside strings and numbers,
/// and the formatted line parses to the same result.
///
/// # Errors
/// What the accepted line broke.
pub fn line(data: &[u8]) -> Broken {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let Ok(result) = parse_line(text) else {
        return Ok(());
    };
    let text = text.strip_suffix('\n').unwrap_or(text);
    let written = format_line(&result)
        .map_err(|e| Violation::from(format!("accepted, but not writable: {e}")))?;
    let Some(respelt) = respelt(text) else {
        return Err(Violation::from(
            "accepted, but not one JSON value after the prefix",
        ));
    };
    if written != respelt || skeleton(&written) != skeleton(text) {
        return Err(Violation::from(format!(
            "accepted line formats differently\n   read: {text}\nwritten: {written}"
        )));
    }
    if parse_line(&written).as_ref() != Ok(&result) {
        return Err(Violation::from(format!(
            "the formatted line reads differently: {written}"
        )));
    }
    let _ = pretty(&result);
    Ok(())
}

/// The report decoder. The first byte picks the report type (bits 0-1: side, mutants or
/// reduce report) and the layer the rest of the bytes stand for (bits 2-3): 0, the encoded
/// text itself; 1, the gzip stream (base64 is applied here); 2, the JSON (gzip at the
/// writer's level and base64 are applied here); 3, the JSON compressed at the level in bits
/// 4-7, which the decoder must refuse unless it is the writer's. An accepted report must
/// encode to exactly the text it was read from.
///
/// # Errors
/// What the accepted report broke.
pub fn decode(data: &[u8]) -> Broken {
    let Some((&selector, rest)) = data.split_first() else {
        return Ok(());
    };
    let text = match (selector >> 2) & 3 {
        0 => match std::str::from_utf8(rest) {
            Ok(text) => text.to_owned(),
            Err(_) => return Ok(()),
        },
        1 => STANDARD.encode(rest),
        2 => STANDARD.encode(gzip(rest, 9)),
        _ => STANDARD.encode(gzip(rest, u32::from(selector >> 4) % 10)),
    };
    let written = match selector & 3 {
        0 | 3 => decode_value::<SideReport>(&text, "base", TEST_REPORT_CAP)
            .ok()
            .and_then(|r| encode_value(&r).ok()),
        1 => crate::gate::mutants::decode(&text)
            .ok()
            .and_then(|r| encode_value(&r).ok()),
        _ => crate::gate::certificate::decode(&text)
            .ok()
            .and_then(|r| encode_value(&r).ok()),
    };
    match written {
        Some(written) if written != text.strip_suffix('\n').unwrap_or(&text) => {
            Err(Violation::from(format!(
                "accepted a report the writer does not write\n   read: {text}\nwritten: {written}"
            )))
        }
        _ => Ok(()),
    }
}

fn gzip(bytes: &[u8], level: u32) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
    let _ = gz.write_all(bytes);
    gz.finish().unwrap_or_default()
}

/// The root the readers' fuzz targets read reports for.
const ROOT: &str = "/root/repo";

/// The selected test files the readers' fuzz targets map results onto: those of the
/// readers' own tests, one kind of test file of each ecosystem at least.
const SELECTED: [&str; 22] = [
    "cmd/main_test.go",
    "core/src/test/java/com/example/FooTest.java",
    "go/api/api_test.go",
    "go/root_test.go",
    "pkg/util/join_test.go",
    "pkg/util/split_test.go",
    "pkg/util/util_test.go",
    "src/calc.test.js",
    "src/bad.test.js",
    "test/a.test.mjs",
    "test/a.test.ts",
    "test/b.test.mjs",
    "test/base.test.ts",
    "tests/lib.rs",
    "tests/other.rs",
    "tests/serde.rs",
    "tests/serde/main.rs",
    "tests/test_cachedmethod.py",
    "tests/test_tlru.py",
    "tests/test_version.rs",
    "tests/test_x.py",
    "tests/x.py",
];

fn read_report(format: Format, data: &[u8]) -> Broken {
    let selected: Vec<String> = SELECTED.iter().map(|s| (*s).to_owned()).collect();
    let ctx = ReadContext {
        root: ROOT,
        selected: &selected,
    };
    match crate::gate::readers::read(format, data, &ctx) {
        Ok(report) => check_report(&report),
        Err(_) => Ok(()),
    }
}

/// What every reader promises of a report it returns.
fn check_report(report: &TestReport) -> Broken {
    let mut paths = std::collections::HashSet::new();
    for file in &report.files {
        let path = &file.path;
        let normal = !path.is_empty()
            && !path.starts_with('/')
            && path.split('/').all(|s| !matches!(s, "" | "." | ".."));
        if !normal {
            return Err(Violation::from(format!(
                "a path that is not normalised: {path:?}"
            )));
        }
        if !paths.insert(path) {
            return Err(Violation::from(format!(
                "the file {path:?} is listed twice"
            )));
        }
        let messages = file.tests.iter().flat_map(|t| &t.messages);
        for message in file.load_error.iter().chain(messages) {
            if message.len() > 2048 || message.trim() != message {
                return Err(Violation::from(format!(
                    "a message not trimmed and capped: {message:?}"
                )));
            }
            if message.contains(&format!("{ROOT}/")) {
                return Err(Violation::from(format!(
                    "a message that names the root: {message:?}"
                )));
            }
        }
        for test in &file.tests {
            if test.error_type.is_some() && test.status != Status::Failed {
                return Err(Violation::from(format!(
                    "an error type on a test that did not fail: {test:?}"
                )));
            }
        }
    }
    let json = serde_json::to_vec(report).map_err(|e| Violation::from(e.to_string()))?;
    let back: TestReport =
        serde_json::from_slice(&json).map_err(|e| Violation::from(e.to_string()))?;
    if &back != report {
        return Err(Violation::from(
            "the report does not read back the same as JSON",
        ));
    }
    Ok(())
}

/// The JUnit XML reader.
///
/// # Errors
/// What the accepted report broke.
pub fn junit(data: &[u8]) -> Broken {
    read_report(Format::Junit, data)
}

/// The vitest and jest JSON reader; the first byte picks which (even: vitest).
///
/// # Errors
/// What the accepted report broke.
pub fn js_json(data: &[u8]) -> Broken {
    let Some((&selector, rest)) = data.split_first() else {
        return Ok(());
    };
    let format = if selector % 2 == 0 {
        Format::VitestJson
    } else {
        Format::JestJson
    };
    read_report(format, rest)
}

/// The reader of `cargo test`'s plain output.
///
/// # Errors
/// What the accepted report broke.
pub fn libtest(data: &[u8]) -> Broken {
    read_report(Format::LibtestPlain, data)
}

/// The `go test -json` reader.
///
/// # Errors
/// What the accepted report broke.
pub fn go_test(data: &[u8]) -> Broken {
    read_report(Format::GoTestJson, data)
}

/// The reader of repromin's node:test reporter.
///
/// # Errors
/// What the accepted report broke.
pub fn node_test(data: &[u8]) -> Broken {
    read_report(Format::NodeTest, data)
}

/// The repository configuration: an accepted configuration keeps the schema's rules, its
/// timeouts can be used as deadlines, and it reads back the same once written.
///
/// # Errors
/// What the accepted configuration broke.
pub fn repo_config(data: &[u8]) -> Broken {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let Ok(config) = RepoConfig::parse(text, "fuzz") else {
        return Ok(());
    };
    if config.version != 1 || config.tests.is_empty() || config.command.trim().is_empty() {
        return Err(Violation::from(format!(
            "accepted without a version, tests or command: {config:?}"
        )));
    }
    let t = &config.timeouts;
    for secs in [t.install, t.build, t.test] {
        let usable = secs.checked_mul(1000).is_some()
            && Instant::now()
                .checked_add(Duration::from_secs(secs))
                .is_some();
        if !(1..=MAX_TIMEOUT_SECS).contains(&secs) || !usable {
            return Err(Violation::from(format!(
                "accepted a timeout of {secs} seconds"
            )));
        }
    }
    let json = serde_json::to_string(&config).map_err(|e| Violation::from(e.to_string()))?;
    match RepoConfig::parse(&json, "fuzz") {
        Ok(back) if back == config => Ok(()),
        other => Err(Violation::from(format!(
            "written back as {json}, it reads as {other:?}"
        ))),
    }
}

/// The mutation-spec parser: an accepted spec keeps every documented rule.
///
/// # Errors
/// The rule the accepted spec broke.
pub fn mutation_spec(data: &[u8]) -> Broken {
    use crate::gate::mutants::{MAX_MUTATIONS, MAX_NAME_CHARS, MAX_TEXT_CHARS, VERSION};
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let Ok(spec) = crate::gate::mutants::parse_spec(text) else {
        return Ok(());
    };
    let n = spec.mutations.len();
    if spec.v != VERSION || !(1..=MAX_MUTATIONS).contains(&n) {
        return Err(Violation::from(format!(
            "version {} with {n} mutations",
            spec.v
        )));
    }
    let mut names = std::collections::HashSet::new();
    for m in &spec.mutations {
        let chars = |s: &str| s.chars().count();
        let path = &m.file;
        let normal = !path.contains('\\')
            && !path.chars().any(char::is_control)
            && path.split('/').all(|s| !matches!(s, "" | "." | ".."));
        let mut kills = std::collections::HashSet::new();
        let fine = (1..=MAX_NAME_CHARS).contains(&chars(&m.name))
            && names.insert(&m.name)
            && !m.find.is_empty()
            && chars(&m.find) <= MAX_TEXT_CHARS
            && chars(&m.replace) <= MAX_TEXT_CHARS
            && m.find != m.replace
            && normal
            && !m.kills.is_empty()
            && m.kills.iter().all(|k| !k.is_empty() && kills.insert(k));
        if !fine {
            return Err(Violation::from(format!(
                "accepted a mutation that breaks a rule: {m:?}"
            )));
        }
    }
    Ok(())
}

/// The failure blocks of a command's output and their frames, with `/w/tree` as the tree.
/// Blocks come in order, never overlap and lie inside the output; each keeps at most
/// [`crate::oracle::frames::MAX_FRAMES`] frames, whose paths are relative, without `..`,
/// `:` (line numbers, URLs) or a temporary directory's placeholder.
///
/// # Errors
/// What the blocks or frames broke.
pub fn frames(data: &[u8]) -> Broken {
    use crate::oracle::frames::{MAX_FRAMES, TreeRoots, parse};
    let text = String::from_utf8_lossy(data);
    let normalizer = crate::signature::Normalizer::new(&["/w/tree".to_string()]);
    let prefixes = ["<tmp>".to_string()];
    let roots = TreeRoots {
        normalizer: &normalizer,
        prefixes: &prefixes,
    };
    let lines = text.split('\n').count();
    let mut end = 0;
    for block in parse(&text) {
        if block.lines.start < end
            || block.lines.start >= block.lines.end
            || block.lines.end > lines
        {
            return Err(Violation::from(format!(
                "block {:?} after line {end} of {lines}",
                block.lines
            )));
        }
        end = block.lines.end;
        let frames = block.frames(roots);
        if frames.len() > MAX_FRAMES {
            return Err(Violation::from(format!("{} frames", frames.len())));
        }
        for frame in frames {
            let path = frame.path.unwrap_or_default();
            if path.starts_with('/')
                || path.contains(':')
                || path.contains("<tmp>")
                || path.split('/').any(|c| c == "..")
            {
                return Err(Violation::from(format!("frame path {path:?}")));
            }
        }
    }
    Ok(())
}

/// The readers of a Node workspace: the first byte picks `pnpm-workspace.yaml`'s
/// `packages:` list (even) or the packages a test file imports (odd). An accepted
/// `packages:` list holds non-empty globs of one trimmed line each; the imported packages
/// are sorted and unique, and each is a package name that names itself.
///
/// # Errors
/// What the accepted input broke.
pub fn workspace(data: &[u8]) -> Broken {
    use crate::gate::detect::{imports, pnpm_workspace};
    let Some((selector, rest)) = data.split_first() else {
        return Ok(());
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return Ok(());
    };
    if selector % 2 == 0 {
        let Ok(globs) = pnpm_workspace::packages(text) else {
            return Ok(());
        };
        for glob in globs {
            if glob.is_empty() || glob.contains(['\n', '\r', '\t']) || glob.trim() != glob {
                return Err(Violation::from(format!("accepted the glob {glob:?}")));
            }
        }
        return Ok(());
    }
    let names = imports::imported_packages(text);
    if names.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Violation::from(format!(
            "names not sorted and unique: {names:?}"
        )));
    }
    for name in &names {
        if imports::package_of(name).as_deref() != Some(name.as_str()) {
            return Err(Violation::from(format!(
                "`{name}` does not name itself as a package"
            )));
        }
    }
    Ok(())
}

/// Every manifest kind, in the order the first byte of [`manifest`]'s input picks them.
const KINDS: [ManifestKind; 11] = [
    ManifestKind::CargoToml,
    ManifestKind::PyprojectToml,
    ManifestKind::Pipfile,
    ManifestKind::Requirements,
    ManifestKind::PackageJson,
    ManifestKind::ComposerJson,
    ManifestKind::GoMod,
    ManifestKind::GoWork,
    ManifestKind::PomXml,
    ManifestKind::MsBuild,
    ManifestKind::Gemfile,
];

/// The manifest readers: the first byte picks the kind (modulo 11, in the order of
/// `crate::reduce::manifest`'s `ManifestKind`), the rest is the file. Accepted files give
/// well-formed candidates, and each candidate applied alone leaves a file that still parses
/// as its kind with its required keys.
///
/// # Errors
/// What the candidates broke.
pub fn manifest(data: &[u8]) -> Broken {
    let Some((&selector, src)) = data.split_first() else {
        return Ok(());
    };
    let kind = KINDS[usize::from(selector) % KINDS.len()];
    let Ok(levels) = candidates(kind, src) else {
        return Ok(());
    };
    let text = std::str::from_utf8(src)
        .map_err(|_| Violation::from("accepted a file that is not UTF-8"))?;
    check::shape(text, &levels)?;
    check::each_applies(kind, text, &levels)?;
    check::runs_apply(kind, text, &levels)
}

/// A semantic backend's answer: the bytes are the HTTP body of a chat completion. An
/// accepted answer carries at most [`crate::reduce::semantic::EDITS_MAX`] edits, and every
/// path of it that `safe_path` accepts is relative with normal components only (no root,
/// no `.` or `..`), as the standard library reads it.
///
/// # Errors
/// What the accepted answer broke.
pub fn semantic_answer(data: &[u8]) -> Broken {
    use crate::reduce::semantic::{EDITS_MAX, ProposedEdit, parse_answer, safe_path};
    use std::path::{Component, Path};
    let Ok(edits) = parse_answer(data) else {
        return Ok(());
    };
    if edits.len() > EDITS_MAX {
        return Err(Violation::from(format!("accepted {} edits", edits.len())));
    }
    for edit in &edits {
        let (ProposedEdit::Replace { path, .. } | ProposedEdit::Delete { path }) = edit;
        if safe_path(path)
            && !Path::new(path)
                .components()
                .all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(Violation::from(format!("called {path:?} safe")));
        }
    }
    Ok(())
}

/// The file-access tracer's log reader: the log is written by a process the traced
/// command can reach, so any bytes may be there. Every path it reports touched is a
/// relative path of normal components (never absolute, never `.` or `..`, never empty),
/// and its parent is touched too.
///
/// # Errors
/// What the reading broke.
pub fn access_log(data: &[u8]) -> Broken {
    let text = String::from_utf8_lossy(data);
    let access = crate::reduce::access::parse(&text, std::path::Path::new("/w/tree"));
    for path in access.paths() {
        if path.is_empty()
            || path.starts_with('/')
            || path
                .split('/')
                .any(|c| c.is_empty() || c == "." || c == "..")
        {
            return Err(Violation::from(format!("touched {path:?}")));
        }
        let parent = crate::tree::parent_of(path);
        if !parent.is_empty() && !access.touched(parent) {
            return Err(Violation::from(format!(
                "touched {path:?} but not its parent"
            )));
        }
    }
    Ok(())
}

/// The judge's rebuild of a certified tree: the bytes are a JSON array of edits (as a reduce
/// report carries them) applied to a fixed tree. An accepted edit set stays within the
/// replacement bound, deletes only what exists, leaves every file it does not name as it
/// was, and gives each file it cuts the size its ranges and replacements say.
///
/// # Errors
/// What the accepted edit set broke.
pub fn edits(data: &[u8]) -> Broken {
    use crate::reduce::edits::{Edit, REPLACED_BYTES_MAX, REPLACEMENTS_MAX};
    let Ok(edits) = serde_json::from_slice::<Vec<Edit>>(data) else {
        return Ok(());
    };
    let original = edits_tree();
    let Ok(rebuilt) = crate::gate::certificate::apply_edits(&original, &edits) else {
        return Ok(());
    };
    let mut sizes: std::collections::BTreeMap<&str, isize> = std::collections::BTreeMap::new();
    let (mut count, mut bytes) = (0, 0);
    for edit in &edits {
        let (path, change) = match edit {
            Edit::Delete { .. } => continue,
            Edit::DeleteBytes { path, start, end } => (path, -(end - start).cast_signed()),
            Edit::Replace {
                path,
                start,
                end,
                with,
                ..
            } => {
                count += 1;
                bytes += with.len();
                (path, with.len().cast_signed() - (end - start).cast_signed())
            }
        };
        *sizes.entry(path.as_str()).or_default() += change;
    }
    if count > REPLACEMENTS_MAX || bytes > REPLACED_BYTES_MAX {
        return Err(Violation::from(format!(
            "accepted {count} replacements of {bytes} bytes"
        )));
    }
    for (path, entry) in &rebuilt.entries {
        let Some(before) = original.entries.get(path) else {
            return Err(Violation::from(format!(
                "the rebuilt tree has `{path}`, which the original lacks"
            )));
        };
        let (Some(old), Some(new)) = (before.node.data(), entry.node.data()) else {
            continue;
        };
        let want = old.len().cast_signed() + sizes.get(&**path).copied().unwrap_or(0);
        if new.len().cast_signed() != want {
            return Err(Violation::from(format!(
                "`{path}` has {} bytes, its edits say {want}",
                new.len()
            )));
        }
    }
    Ok(())
}

/// What the files pass takes with a deleted module: the bytes are files, each after a line
/// `=== PATH`; the first file is deleted, and `references_to` gives, for each other file,
/// the lines to cut and the names and defaults to replace. Every edit of a file must lie
/// inside it, the cuts on whole lines, no two edits may share a byte, and the file must
/// stay UTF-8.
///
/// # Errors
/// What the edits broke.
pub fn references(data: &[u8]) -> Broken {
    use crate::tree::{Entry, Meta, Node, Tree};
    use std::sync::Arc;
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let meta = Meta {
        mode: 0o644,
        mtime_ns: 0,
    };
    let mut tree = Tree::empty(meta);
    let mut first = None;
    for part in text.split("=== ").skip(1) {
        let (path, body) = part.split_once('\n').unwrap_or((part, ""));
        let path = path.trim();
        let safe = !path.is_empty()
            && path
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if !safe || tree.entries.contains_key(path) {
            continue;
        }
        let mut dir = String::new();
        for component in path
            .split('/')
            .collect::<Vec<_>>()
            .split_last()
            .map_or(&[][..], |(_, d)| d)
        {
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(component);
            tree.entries.insert(
                Arc::from(dir.as_str()),
                Entry {
                    node: Node::Dir,
                    meta,
                },
            );
        }
        let node = Node::file(Arc::from(body.as_bytes()));
        tree.entries.insert(Arc::from(path), Entry { node, meta });
        first.get_or_insert_with(|| path.to_string());
    }
    let Some(gone) = first else {
        return Ok(());
    };
    for edit in crate::reduce::passes::references::references_to(&tree, &[Arc::from(gone.as_str())])
    {
        let Some(data) = tree.entries.get(&edit.path).and_then(|e| e.node.data()) else {
            return Err(Violation::from(format!(
                "an edit of `{}`, which is no file",
                edit.path
            )));
        };
        for r in &edit.cut {
            let starts_line = r.start == 0 || data.get(r.start - 1) == Some(&b'\n');
            let ends_line = r.end == data.len() || data.get(r.end - 1) == Some(&b'\n');
            if !starts_line || !ends_line {
                return Err(Violation::from(format!(
                    "`{}`: cut {r:?} is not whole lines",
                    edit.path
                )));
            }
        }
        // Applied as the files pass applies it: out-of-bounds or overlapping edits are
        // refused there.
        let path = edit.path.clone();
        let mutation = edit.mutation(data.len());
        let after = match crate::reduce::edits::EditSet::default().apply(&tree, &tree, &mutation) {
            Ok((_, after)) => after,
            Err(stale) => {
                return Err(Violation::from(format!(
                    "`{path}`: the edit does not apply: {stale:?}"
                )));
            }
        };
        let out = after.entries.get(&path).and_then(|e| e.node.data());
        if out.is_none_or(|d| std::str::from_utf8(d).is_err()) {
            return Err(Violation::from(format!("`{path}` is no longer UTF-8")));
        }
    }
    Ok(())
}

/// The tree the [`edits`] target edits: two files in a directory and one at the root.
fn edits_tree() -> crate::tree::Tree {
    use crate::tree::{Entry, Meta, Node, Tree};
    use std::sync::Arc;
    let meta = Meta {
        mode: 0o644,
        mtime_ns: 0,
    };
    let mut tree = Tree::empty(meta);
    let files: [(&str, Option<&[u8]>); 4] = [
        ("src", None),
        ("src/a.c", Some(b"int main(void) { return 12345; }\n")),
        ("src/b.py", Some(b"print('hello')\n")),
        ("README", Some(b"words\n")),
    ];
    for (path, data) in files {
        let node = data.map_or(Node::Dir, |d| Node::file(Arc::from(d)));
        tree.entries.insert(Arc::from(path), Entry { node, meta });
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    type Target = fn(&[u8]) -> Broken;

    const TARGETS: [(&str, Target); 16] = [
        ("line", line),
        ("decode", decode),
        ("junit", junit),
        ("js_json", js_json),
        ("libtest", libtest),
        ("go_test", go_test),
        ("node_test", node_test),
        ("repo_config", repo_config),
        ("mutation_spec", mutation_spec),
        ("manifest", manifest),
        ("edits", edits),
        ("semantic_answer", semantic_answer),
        ("access_log", access_log),
        ("references", references),
        ("workspace", workspace),
        ("frames", frames),
    ];

    /// Every committed seed of every fuzz target passes its target's checks, and most of
    /// each corpus is accepted by its parser, so the fuzzers start from inputs that reach
    /// the checks.
    #[test]
    fn seed_corpora_pass_their_checks() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus");
        for (name, target) in TARGETS {
            let dir = std::path::Path::new(root).join(name);
            let mut seeds = 0;
            for entry in std::fs::read_dir(&dir).expect("a seed corpus") {
                let path = entry.expect("a seed").path();
                let data = std::fs::read(&path).expect("a readable seed");
                if let Err(e) = target(&data) {
                    panic!("{}: {e}", path.display());
                }
                seeds += 1;
            }
            assert!(seeds >= 3, "{name}: only {seeds} seeds");
        }
    }
}
