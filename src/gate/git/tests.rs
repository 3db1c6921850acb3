//! Tests of the git reads against repositories built in temp dirs with the git command line,
//! which stays the reference for what a diff, a tree listing and a blob are.

use std::path::Path;
use std::process::Command;

use std::os::unix::ffi::OsStrExt;

use super::error::escape_path;
use super::*;

#[test]
fn name_status_parses_renames_copies_and_odd_names() {
    let out = b"M\0src/a b.py\0R100\0tests/old.py\0tests/new.py\0R087\0t/x.py\0t/y.py\0D\0gone\tx\0A\0\xc3\xa9.py\0";
    let changes = parse_name_status(out).unwrap();
    assert_eq!(changes.len(), 5);
    assert_eq!(changes[0].new, "src/a b.py");
    assert_eq!((changes[1].status, changes[1].score), ('R', 100));
    assert_eq!(
        (changes[2].old.as_str(), changes[2].new.as_str()),
        ("t/x.py", "t/y.py")
    );
    assert_eq!(changes[3].new, "gone\tx");
    assert_eq!(changes[4].new, "é.py");
    assert!(parse_name_status(b"X\0a\0").is_none());
}

#[test]
fn full_shas_only() {
    assert!(is_full_sha(&"a".repeat(40)));
    assert!(!is_full_sha(&"a".repeat(39)));
    assert!(!is_full_sha(&"A".repeat(40)));
}

/// Runs git in `dir` with a clean `GIT_*` environment and returns its stdout.
fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let mut command = Command::new("git");
    command
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .current_dir(dir);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn text(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap().trim().to_string()
}

/// What a tree holds at one commit.
enum Entry<'a> {
    File(&'a [u8]),
    Exec(&'a [u8]),
    Link(&'a str),
    Gitlink(&'a str),
}

/// A scratch repository.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("repromin-git-")
            .tempdir()
            .unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        Scratch { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Replaces the whole tree with `entries` and commits it; returns the commit.
    fn commit(&self, entries: &[(&[u8], Entry<'_>)]) -> String {
        use std::os::unix::ffi::OsStrExt;
        for item in std::fs::read_dir(self.path()).unwrap() {
            let item = item.unwrap();
            if item.file_name() == ".git" {
                continue;
            }
            let path = item.path();
            if item.file_type().unwrap().is_dir() {
                std::fs::remove_dir_all(path).unwrap();
            } else {
                std::fs::remove_file(path).unwrap();
            }
        }
        let mut execs = Vec::new();
        let mut gitlinks = Vec::new();
        for (name, entry) in entries {
            let full = self.path().join(std::ffi::OsStr::from_bytes(name));
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            match entry {
                Entry::File(bytes) => std::fs::write(&full, bytes).unwrap(),
                Entry::Exec(bytes) => {
                    std::fs::write(&full, bytes).unwrap();
                    execs.push(name.to_vec());
                }
                Entry::Link(target) => std::os::unix::fs::symlink(target, &full).unwrap(),
                Entry::Gitlink(sha) => gitlinks.push((name.to_vec(), sha.to_string())),
            }
        }
        git(self.path(), &["add", "-A"]);
        for name in execs {
            let name = std::ffi::OsStr::from_bytes(&name)
                .to_str()
                .unwrap()
                .to_string();
            git(self.path(), &["update-index", "--chmod=+x", "--", &name]);
        }
        for (name, sha) in gitlinks {
            let name = String::from_utf8(name).unwrap();
            let info = format!("160000,{sha},{name}");
            git(
                self.path(),
                &["update-index", "--add", "--cacheinfo", &info],
            );
        }
        git(self.path(), &["commit", "-q", "--allow-empty", "-m", "c"]);
        text(git(self.path(), &["rev-parse", "HEAD"]))
    }

    /// What `git diff -M --name-status -z` says, parsed.
    fn cli_name_status(&self, base: &str, head: &str) -> Vec<Change> {
        let out = git(
            self.path(),
            &[
                "-c",
                "core.quotePath=false",
                "diff",
                "-M",
                "--name-status",
                "-z",
                "--no-ext-diff",
                base,
                head,
                "--",
            ],
        );
        parse_name_status(&out).unwrap()
    }
}

fn lines(prefix: &str, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| format!("{prefix} line number {i}\n"))
        .collect::<String>()
        .into_bytes()
}

fn binary(seed: u8, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| {
            if i % 7 == 0 {
                0
            } else {
                (i as u8).wrapping_mul(seed)
            }
        })
        .collect()
}

const SUB_A: &str = "1111111111111111111111111111111111111111";
const SUB_B: &str = "2222222222222222222222222222222222222222";

/// A base and a head that differ in every way a diff can show.
fn every_change() -> (Scratch, String, String) {
    let scratch = Scratch::new();
    let partial = lines("partial", 20);
    let mut partial_edited = partial.clone();
    partial_edited.extend_from_slice(b"one more line\n");
    let util = lines("util", 20);
    let util_edited = [&util[..], b"util tail 1\nutil tail 2\nutil tail 3\n"].concat();
    let exact = lines("exact", 5);
    let bin = binary(3, 200);
    let bin_edited = [&bin[..], b"\0tail"].concat();
    let big_bin = binary(5, 1000);
    let mut big_bin_edited = big_bin.clone();
    big_bin_edited[500] ^= 0xff;
    let crlf = "a\r\nb\r\nc\r\n".repeat(10).into_bytes();
    let lf = "a\nb\nc\n".repeat(10).into_bytes();
    let twin = lines("twin", 4);
    let tc = lines("typechange", 3);
    let copy = lines("copy", 6);
    let run = b"#!/bin/sh\necho run\n".to_vec();
    let mode = lines("mode", 3);
    let base = scratch.commit(&[
        (b"mod.txt", Entry::File(b"one\ntwo\nthree\n")),
        (b"del.txt", Entry::File(b"gone\n")),
        (b"ren/exact.txt", Entry::File(&exact)),
        (b"partial_old.py", Entry::File(&partial)),
        (b"dir1/util.py", Entry::File(&util)),
        (b"small_old.txt", Entry::File(b"a\nb\n")),
        (b"exec.sh", Entry::File(b"#!/bin/sh\necho hi\n")),
        (b"exec2.sh", Entry::File(b"#!/bin/sh\necho two\n")),
        (b"link_change", Entry::Link("mod.txt")),
        (b"file_to_link", Entry::File(b"target\n")),
        (b"bin.dat", Entry::File(&bin)),
        (b"bin_old.dat", Entry::File(&big_bin)),
        (b"crlf.txt", Entry::File(&crlf)),
        (b"empty_a", Entry::File(b"")),
        (b"sub", Entry::Gitlink(SUB_A)),
        (b"d", Entry::File(b"d is a file\n")),
        (b"e/y.txt", Entry::File(b"e is a directory\n")),
        (b"copy_src.txt", Entry::File(&copy)),
        (b"twin1/same.txt", Entry::File(&twin)),
        (b"twin2/same.txt", Entry::File(&twin)),
        (b"tc.txt", Entry::File(&tc)),
        (b"a/b", Entry::File(b"a slash b\n")),
        (b"run_old.sh", Entry::Exec(&run)),
        (b"m_old.txt", Entry::File(&mode)),
    ]);
    let head = scratch.commit(&[
        (b"mod.txt", Entry::File(b"one\n2\nthree\n")),
        (b"moved/exact.txt", Entry::File(&exact)),
        (b"partial_new.py", Entry::File(&partial_edited)),
        (b"dir2/util.py", Entry::File(&util_edited)),
        (b"small_new.txt", Entry::File(b"x\ny\n")),
        (b"exec.sh", Entry::Exec(b"#!/bin/sh\necho hi\n")),
        (b"exec2.sh", Entry::Exec(b"#!/bin/sh\necho 2\n")),
        (b"link_change", Entry::Link("del.txt")),
        (b"file_to_link", Entry::Link("mod.txt")),
        (b"link_new", Entry::Link("exact.txt")),
        (b"bin.dat", Entry::File(&bin_edited)),
        (b"bin_new.dat", Entry::File(&big_bin_edited)),
        (b"lf.txt", Entry::File(&lf)),
        (b"empty_b", Entry::File(b"")),
        (b"empty_c", Entry::File(b"")),
        (b"sub", Entry::Gitlink(SUB_B)),
        (b"sub_added", Entry::Gitlink(SUB_A)),
        (b"d/x.txt", Entry::File(b"d is a directory\n")),
        (b"e", Entry::File(b"e is a file\n")),
        (b"copy_src.txt", Entry::File(&copy)),
        (b"copy_dst.txt", Entry::File(&copy)),
        (b"twin3/same.txt", Entry::File(&twin)),
        (b"tc.txt", Entry::Link("mod.txt")),
        (b"tc_moved.txt", Entry::File(&tc)),
        (b"a/b", Entry::File(b"a slash b\n")),
        (b"a.b", Entry::File(b"a dot b\n")),
        (b"a0", Entry::File(b"a zero\n")),
        (b"with space.txt", Entry::File(b"space\n")),
        ("é.txt".as_bytes(), Entry::File(b"accent\n")),
        (b"new\nline.txt", Entry::File(b"newline\n")),
        (b"tab\there.txt", Entry::File(b"tab\n")),
        (b"run_new.sh", Entry::Exec(&run)),
        (b"m_new.txt", Entry::Exec(&mode)),
    ]);
    (scratch, base, head)
}

fn show(changes: &[Change]) -> Vec<String> {
    changes
        .iter()
        .map(|c| format!("{}{:03} {:?} {:?}", c.status, c.score, c.old, c.new))
        .collect()
}

#[test]
fn name_status_pins_every_kind_of_change() {
    let (scratch, base, head) = every_change();
    let repo = Repo::new(scratch.path());
    let changes = repo.name_status(&base, &head).unwrap();
    let expected = vec![
        "A000 \"a.b\" \"a.b\"",
        "A000 \"a0\" \"a0\"",
        "M000 \"bin.dat\" \"bin.dat\"",
        "R093 \"bin_old.dat\" \"bin_new.dat\"",
        "A000 \"copy_dst.txt\" \"copy_dst.txt\"",
        "D000 \"d\" \"d\"",
        "A000 \"d/x.txt\" \"d/x.txt\"",
        "D000 \"del.txt\" \"del.txt\"",
        "R091 \"dir1/util.py\" \"dir2/util.py\"",
        "A000 \"e\" \"e\"",
        "D000 \"e/y.txt\" \"e/y.txt\"",
        "R100 \"empty_a\" \"empty_b\"",
        "A000 \"empty_c\" \"empty_c\"",
        "M000 \"exec.sh\" \"exec.sh\"",
        "M000 \"exec2.sh\" \"exec2.sh\"",
        "T000 \"file_to_link\" \"file_to_link\"",
        "R066 \"crlf.txt\" \"lf.txt\"",
        "M000 \"link_change\" \"link_change\"",
        "A000 \"link_new\" \"link_new\"",
        "R100 \"m_old.txt\" \"m_new.txt\"",
        "M000 \"mod.txt\" \"mod.txt\"",
        "R100 \"ren/exact.txt\" \"moved/exact.txt\"",
        "A000 \"new\\nline.txt\" \"new\\nline.txt\"",
        "R096 \"partial_old.py\" \"partial_new.py\"",
        "R100 \"run_old.sh\" \"run_new.sh\"",
        "A000 \"small_new.txt\" \"small_new.txt\"",
        "D000 \"small_old.txt\" \"small_old.txt\"",
        "M000 \"sub\" \"sub\"",
        "A000 \"sub_added\" \"sub_added\"",
        "A000 \"tab\\there.txt\" \"tab\\there.txt\"",
        "T000 \"tc.txt\" \"tc.txt\"",
        "A000 \"tc_moved.txt\" \"tc_moved.txt\"",
        "D000 \"twin2/same.txt\" \"twin2/same.txt\"",
        "R100 \"twin1/same.txt\" \"twin3/same.txt\"",
        "A000 \"with space.txt\" \"with space.txt\"",
        "A000 \"é.txt\" \"é.txt\"",
    ];
    assert_eq!(show(&changes), expected, "{:#?}", show(&changes));
    assert_eq!(changes, scratch.cli_name_status(&base, &head));
}

/// The seeded generator of the differential test.
use crate::test_rng::XorShift as Rng;

/// A file's text: lines from a small pool (so files share lines), sometimes CRLF, sometimes
/// without a last newline, sometimes one long line.
fn random_text(rng: &mut Rng) -> Vec<u8> {
    let n = 1 + rng.below(30);
    let eol: &[u8] = if rng.below(6) == 0 { b"\r\n" } else { b"\n" };
    let mut out = Vec::new();
    for _ in 0..n {
        let line = rng.below(40);
        if rng.below(15) == 0 {
            out.extend(std::iter::repeat_n(b'x', 70 + line));
        } else {
            out.extend(format!("line {line} of the pool").bytes());
        }
        out.extend_from_slice(eol);
    }
    if rng.below(4) == 0 {
        out.truncate(out.len() - eol.len());
    }
    out
}

/// `text` with some lines replaced, added or dropped.
fn edit(rng: &mut Rng, text: &[u8]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = text
        .split_inclusive(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(lines.len() + 1);
        match rng.below(3) {
            0 if at < lines.len() => {
                lines.remove(at);
            }
            1 if at < lines.len() => {
                lines[at] = format!("edited {}\n", rng.next_u64() % 50).into_bytes()
            }
            _ => lines.insert(
                at,
                format!("inserted {}\n", rng.next_u64() % 50).into_bytes(),
            ),
        }
    }
    lines.concat()
}

#[test]
fn name_status_matches_git_on_random_renames() {
    let dirs = ["", "a/", "b/", "a/deep/"];
    let names = ["x.py", "y.py", "util.rs", "z.txt", "w.md"];
    for seed in 1..=40u64 {
        let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let scratch = Scratch::new();
        let mut base: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for _ in 0..4 + rng.below(10) {
            let path = format!(
                "{}{}{}",
                dirs[rng.below(4)],
                rng.below(3),
                names[rng.below(5)]
            );
            if base.iter().any(|(p, _)| *p == path.as_bytes()) {
                continue;
            }
            let text = if !base.is_empty() && rng.below(5) == 0 {
                base[rng.below(base.len())].1.clone()
            } else {
                random_text(&mut rng)
            };
            base.push((path.into_bytes(), text));
        }
        let mut head: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for (path, text) in &base {
            let text = match rng.below(6) {
                0 => continue,
                1 => edit(&mut rng, text),
                _ => text.clone(),
            };
            let path = match rng.below(3) {
                0 => {
                    let name = if rng.below(2) == 0 {
                        basename_of(path).to_vec()
                    } else {
                        names[rng.below(5)].as_bytes().to_vec()
                    };
                    [dirs[rng.below(4)].as_bytes(), b"r", &name].concat()
                }
                _ => path.clone(),
            };
            if !head.iter().any(|(p, _)| *p == path) {
                head.push((path, text));
            }
        }
        for _ in 0..rng.below(3) {
            let path = format!("{}new{}", dirs[rng.below(4)], names[rng.below(5)]).into_bytes();
            if !head.iter().any(|(p, _)| *p == path) {
                head.push((path, random_text(&mut rng)));
            }
        }
        let as_entries =
            |files: &[(Vec<u8>, Vec<u8>)]| -> Vec<(Vec<u8>, Vec<u8>)> { files.to_vec() };
        let base_files = as_entries(&base);
        let head_files = as_entries(&head);
        let commit = |files: &[(Vec<u8>, Vec<u8>)]| {
            let entries: Vec<(&[u8], Entry<'_>)> = files
                .iter()
                .map(|(p, t)| (p.as_slice(), Entry::File(t.as_slice())))
                .collect();
            scratch.commit(&entries)
        };
        let b = commit(&base_files);
        let h = commit(&head_files);
        let repo = Repo::new(scratch.path());
        assert_eq!(
            show(&repo.name_status(&b, &h).unwrap()),
            show(&scratch.cli_name_status(&b, &h)),
            "seed {seed}"
        );
    }
}

fn basename_of(path: &[u8]) -> &[u8] {
    path.rsplit(|b| *b == b'/').next().unwrap_or(path)
}

#[test]
fn ls_tree_and_blob_pin_every_kind_of_entry() {
    let (scratch, base, head) = every_change();
    let repo = Repo::new(scratch.path());
    let tree: Vec<String> = repo
        .ls_tree(&head)
        .unwrap()
        .into_iter()
        .map(|(path, mode)| format!("{mode} {path:?}"))
        .collect();
    let expected = vec![
        "100644 \"a.b\"",
        "100644 \"a/b\"",
        "100644 \"a0\"",
        "100644 \"bin.dat\"",
        "100644 \"bin_new.dat\"",
        "100644 \"copy_dst.txt\"",
        "100644 \"copy_src.txt\"",
        "100644 \"d/x.txt\"",
        "100644 \"dir2/util.py\"",
        "100644 \"e\"",
        "100644 \"empty_b\"",
        "100644 \"empty_c\"",
        "100755 \"exec.sh\"",
        "100755 \"exec2.sh\"",
        "120000 \"file_to_link\"",
        "100644 \"lf.txt\"",
        "120000 \"link_change\"",
        "120000 \"link_new\"",
        "100755 \"m_new.txt\"",
        "100644 \"mod.txt\"",
        "100644 \"moved/exact.txt\"",
        "100644 \"new\\nline.txt\"",
        "100644 \"partial_new.py\"",
        "100755 \"run_new.sh\"",
        "100644 \"small_new.txt\"",
        "160000 \"sub\"",
        "160000 \"sub_added\"",
        "100644 \"tab\\there.txt\"",
        "120000 \"tc.txt\"",
        "100644 \"tc_moved.txt\"",
        "100644 \"twin3/same.txt\"",
        "100644 \"with space.txt\"",
        "100644 \"é.txt\"",
    ];
    assert_eq!(tree, expected, "{tree:#?}");
    let blob = |commit: &str, path: &str| match repo.blob(commit, path) {
        Ok(Some(bytes)) => format!("{:?}", String::from_utf8_lossy(&bytes)),
        Ok(None) => "none".to_string(),
        Err(_) => "error".to_string(),
    };
    let probes = [
        blob(&head, "mod.txt"),
        blob(&head, "link_new"),
        blob(&head, "e"),
        blob(&base, "e"),
        blob(&head, "d"),
        blob(&head, "sub"),
        blob(&head, "missing"),
        blob(&"0".repeat(40), "mod.txt"),
        blob("nonsense", "mod.txt"),
        blob(&head, "new\nline.txt"),
        blob(&head, "é.txt"),
        blob(&head, "with space.txt"),
        blob(&base, "empty_a"),
    ];
    let expected = vec![
        "\"one\\n2\\nthree\\n\"",
        "\"exact.txt\"",
        "\"e is a file\\n\"",
        "error",
        "error",
        "none",
        "none",
        "none",
        "none",
        "\"newline\\n\"",
        "\"accent\\n\"",
        "\"space\\n\"",
        "\"\"",
    ];
    assert_eq!(probes.to_vec(), expected, "{probes:#?}");
}

#[test]
fn a_path_that_is_not_utf8_is_an_error_naming_it() {
    let scratch = Scratch::new();
    let base = scratch.commit(&[(b"ok.txt", Entry::File(b"ok\n"))]);
    let head = scratch.commit(&[
        (b"ok.txt", Entry::File(b"ok\n")),
        (b"bad\xff name.txt", Entry::File(b"latin-1\n")),
    ]);
    let repo = Repo::new(scratch.path());
    let message = "the path \"bad\\xff name.txt\" is not valid UTF-8";
    let err = repo.name_status(&base, &head).unwrap_err();
    assert_eq!(err.to_string(), message);
    assert_eq!(repo.ls_tree(&head).unwrap_err().to_string(), message);
    // Unchanged, it does not matter to the diff.
    let later = scratch.commit(&[
        (b"ok.txt", Entry::File(b"ok 2\n")),
        (b"bad\xff name.txt", Entry::File(b"latin-1\n")),
    ]);
    let changes = repo.name_status(&head, &later).unwrap();
    assert_eq!(show(&changes), ["M000 \"ok.txt\" \"ok.txt\""]);
    assert_eq!(escape_path(b"a\\b\n\xc3\xa9\xc3"), "a\\\\b\\né\\xc3");
}

#[test]
fn a_missing_commit_or_repository_is_named() {
    let scratch = Scratch::new();
    let base = scratch.commit(&[(b"ok.txt", Entry::File(b"ok\n"))]);
    let repo = Repo::new(scratch.path());
    assert_eq!(repo.commit(&base).unwrap(), base);
    let missing = "0".repeat(40);
    let dir = escape_path(scratch.path().as_os_str().as_bytes());
    assert_eq!(
        repo.commit(&missing).unwrap_err().to_string(),
        format!("`{missing}` names no commit in the git repository at {dir}")
    );
    assert_eq!(
        repo.commit(&base[..12]).unwrap_err().to_string(),
        format!("`{}` is not a full 40-character commit id", &base[..12])
    );
    let tree = text(git(scratch.path(), &["rev-parse", "HEAD^{tree}"]));
    assert!(matches!(
        repo.commit(&tree),
        Err(GitError::UnknownRevision { .. })
    ));
    assert_eq!(repo.merge_base(&base, &base).unwrap(), base);
    let nowhere = scratch.path().join("no such dir");
    let err = Repo::new(&nowhere).commit(&base).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "cannot open the git repository at {}: ",
            nowhere.display()
        )),
        "{err}"
    );
}
