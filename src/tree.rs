//! The closed tree model that every reduction works on.
//!
//! A [`Tree`] holds directories, regular files with exactly one link, and relative symlinks
//! that resolve inside the tree. Everything else (FIFOs, sockets, devices, hardlinked files,
//! absolute or escaping symlinks, names that are not UTF-8) is refused while scanning, with an
//! error that names the path, because a reducer that silently copied such an entry could
//! certify a tree whose behaviour it never observed.
//!
//! Scanning applies the ignore rules ([`IgnoreRules`]): built-in generated directory names,
//! exact basenames, exact relative paths, gitignore-style rule files (through the `ignore`
//! crate's matcher) and keep paths, which win over every ignore rule.
//!
//! Two fingerprints identify a tree:
//! - `tree-sha256-v2` covers paths, entry kinds, permission modes, modification times in
//!   nanoseconds, file contents and symlink targets, plus the root directory's own metadata.
//!   It is the identity published, journaled and used to check that an accepted candidate
//!   was reapplied exactly.
//! - A [`TreeKey`], from a [`SetHash`] of the entries, is the identity inside one run (the
//!   cache of answers, the accepted tree, the window): it moves with a change at the cost of
//!   the change, where the fingerprints hash every entry.
//! - `tree-content-sha256-v1` covers paths, entry kinds, file bytes and symlink targets only,
//!   so it survives transports (such as git) that do not keep metadata.
//!
//! Both hash a typed stream: every field is a one-byte tag, a 64-bit little-endian length and
//! the bytes, after a domain-separation header; entries come in byte order of their paths.

mod error;
mod ignore;
mod key;
mod model;
mod scan;
mod source;

pub use error::TreeError;
pub(crate) use error::io_err;
pub use ignore::{BUILTIN_IGNORED, IgnoreRules};
pub use key::{SetHash, TreeKey};
pub use model::{
    Entries, Entry, Fingerprint, Kind, Meta, Node, RelPath, Size, Tree, parent_of, parse_rel_path,
};
pub use scan::{ScanReport, link_resolves_inside, meta_of, read_entry, scan, scan_exact};
pub use source::{
    FILE_TREE_ROOT, SourceKind, file_name, one_file_tree, read_file_tree, scan_source, source_kind,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::sync::Arc;

    use scan::symlink_stays_inside;

    fn file(data: &str, mtime: i128) -> Entry {
        Entry {
            node: Node::file(Arc::from(data.as_bytes())),
            meta: Meta {
                mode: 0o644,
                mtime_ns: mtime,
            },
        }
    }

    fn dir(mode: u32, mtime: i128) -> Entry {
        Entry {
            node: Node::Dir,
            meta: Meta {
                mode,
                mtime_ns: mtime,
            },
        }
    }

    fn link(target: &str, mtime: i128) -> Entry {
        Entry {
            node: Node::Symlink {
                target: target.into(),
            },
            meta: Meta {
                mode: 0,
                mtime_ns: mtime,
            },
        }
    }

    #[test]
    fn the_fingerprints_of_a_fixed_tree_do_not_change() {
        let mut tree = Tree::empty(Meta {
            mode: 0o755,
            mtime_ns: 1_700_000_000_123_456_789,
        });
        tree.entries.insert(Arc::from("d"), dir(0o700, -5));
        tree.entries
            .insert(Arc::from("d/a.txt"), file("alpha\n", 42));
        tree.entries.insert(Arc::from("d/empty"), file("", 0));
        tree.entries.insert(Arc::from("link"), link("d/a.txt", 7));
        // The same values as an independent implementation of the two formats (Python's
        // hashlib over the same typed, length-prefixed fields), so the formats of published
        // fingerprints cannot drift.
        assert_eq!(
            tree.fingerprint().to_string(),
            "1b1d1e2bcbdbf2fa2ca9a756f340ffd97fda3a57dd97aefeb982b8756db69ae9"
        );
        assert_eq!(
            tree.content_fingerprint().to_string(),
            "2321c14f6398c1fdc69cb7a40aacfa527b4791e2dbd49c38b8101a089e130e79"
        );
    }

    #[test]
    fn the_size_of_a_changed_tree_is_counted_over_what_changed() {
        let mut base = Tree::empty(dir(0o755, 0).meta);
        for i in 0..500 {
            base.entries.insert(
                Arc::from(format!("d{}/f{i}", i % 7)),
                file(&"x".repeat(i), 0),
            );
        }
        for d in 0..7 {
            base.entries
                .insert(Arc::from(format!("d{d}")), dir(0o755, 0));
        }
        // A clone that shares the map, changed in a few places of every kind.
        let mut changed = base.clone();
        changed.remove_subtree("d3");
        changed
            .entries
            .insert(Arc::from("d1/f8"), file("longer than before", 5));
        changed.entries.insert(Arc::from("d9"), dir(0o755, 0));
        changed.entries.insert(Arc::from("d9/l"), link("a", 0));
        changed.entries.insert(Arc::from("d0/f0"), link("a", 0));
        assert_eq!(base.size_of(base.size(), &changed), changed.size());
        assert_eq!(changed.size_of(changed.size(), &base), base.size());
        // Two maps built apart (nothing shared) count the same.
        let apart = Tree {
            root: base.root,
            entries: changed
                .entries
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        assert_eq!(base.size_of(base.size(), &apart), changed.size());
        assert_eq!(base.size_of(base.size(), &base), base.size());
    }

    #[test]
    fn children_are_listed_past_siblings_that_sort_inside_a_directory_s_range() {
        // `a.txt`, `a-b` and `a+` sort between `a` and `a/`; `a0` right after `a/...`.
        let mut tree = Tree::empty(Meta {
            mode: 0o755,
            mtime_ns: 0,
        });
        let dir = Entry {
            node: Node::Dir,
            meta: Meta {
                mode: 0o755,
                mtime_ns: 0,
            },
        };
        for path in [
            "a", "a+", "a-b", "a.txt", "a/b", "a/b/c", "a/b.txt", "a/b0", "a/c", "a0", "b", "b/a",
            "b/a/x", "b/a/y", "b/a0", "c.txt",
        ] {
            let entry = if ["a", "a/b", "b", "b/a"].contains(&path) {
                dir.clone()
            } else {
                file(path, 0)
            };
            tree.entries.insert(Arc::from(path), entry);
        }
        for dir in ["", "a", "a/b", "b", "b/a", "c.txt", "zz"] {
            let naive: Vec<RelPath> = tree
                .entries
                .keys()
                .filter(|p| parent_of(p) == dir)
                .cloned()
                .collect();
            assert_eq!(tree.children(dir), naive, "children of {dir:?}");
        }
        let root: Vec<String> = tree.children("").iter().map(|p| p.to_string()).collect();
        assert_eq!(root, ["a", "a+", "a-b", "a.txt", "a0", "b", "c.txt"]);
    }

    fn sample() -> Tree {
        let mut tree = Tree::empty(Meta {
            mode: 0o755,
            mtime_ns: 1,
        });
        tree.entries.insert(Arc::from("a"), dir(0o755, 2));
        tree.entries.insert(Arc::from("a/x.txt"), file("x", 3));
        tree.entries.insert(Arc::from("b.txt"), file("b", 4));
        tree
    }

    #[test]
    fn full_fingerprint_covers_metadata_but_content_fingerprint_does_not() {
        let tree = sample();
        let mut touched = tree.clone();
        touched.entries.get_mut("b.txt").unwrap().meta.mtime_ns = 99;
        assert_ne!(tree.fingerprint(), touched.fingerprint());
        assert_eq!(tree.content_fingerprint(), touched.content_fingerprint());
        let mut edited = tree.clone();
        *edited.entries.get_mut("b.txt").unwrap() = file("B", 4);
        assert_ne!(tree.content_fingerprint(), edited.content_fingerprint());
        let mut root_changed = tree.clone();
        root_changed.root.mode = 0o700;
        assert_ne!(tree.fingerprint(), root_changed.fingerprint());
    }

    #[test]
    fn fingerprints_separate_fields_so_paths_and_contents_cannot_be_shifted() {
        let mut one = Tree::empty(Meta {
            mode: 0,
            mtime_ns: 0,
        });
        one.entries.insert(Arc::from("ab"), file("c", 0));
        let mut two = one.clone();
        two.entries.clear();
        two.entries.insert(Arc::from("a"), file("bc", 0));
        assert_ne!(one.content_fingerprint(), two.content_fingerprint());
    }

    #[test]
    fn descendants_and_children_follow_paths_not_prefixes() {
        let mut tree = sample();
        tree.entries.insert(Arc::from("a.txt"), file("n", 0));
        let below: Vec<_> = tree.descendants("a").map(|(p, _)| p.to_string()).collect();
        assert_eq!(below, ["a/x.txt"]);
        let top: Vec<_> = tree.children("").iter().map(|p| p.to_string()).collect();
        assert_eq!(top, ["a", "a.txt", "b.txt"]);
        assert_eq!(tree.weight("a"), 1);
        tree.remove_subtree("a");
        assert!(!tree.entries.contains_key("a/x.txt"));
        assert!(tree.entries.contains_key("a.txt"));
    }

    #[test]
    fn symlink_targets_must_stay_inside() {
        assert!(symlink_stays_inside("a/link", "../b"));
        assert!(symlink_stays_inside("link", "a/./b"));
        assert!(!symlink_stays_inside("link", "../b"));
        assert!(!symlink_stays_inside("a/link", "../../b"));
        assert!(!symlink_stays_inside("link", "/etc/passwd"));
    }

    #[test]
    fn links_resolve_through_the_trees_other_links() {
        let links = [
            ("lib", "../out"),
            ("up", "a/.."),
            ("loop", "loop"),
            ("d", "/abs"),
        ];
        let target_of = |p: &str| links.iter().find(|(l, _)| *l == p).map(|(_, t)| *t);
        assert!(link_resolves_inside("t/x", "../up/f", target_of));
        assert!(link_resolves_inside("t/x", "../a/f", target_of));
        assert!(!link_resolves_inside("t/x", "/etc/passwd", target_of));
        assert!(!link_resolves_inside("t/x", "../../f", target_of));
        assert!(!link_resolves_inside("t/x", "../lib/f", target_of));
        assert!(!link_resolves_inside("t/x", "../d/f", target_of));
        assert!(!link_resolves_inside("t/x", "../loop", target_of));
        assert!(!link_resolves_inside("t/x", "", target_of));
    }

    #[test]
    fn relative_paths_are_checked() {
        assert_eq!(parse_rel_path("a/b/").unwrap(), "a/b");
        assert!(parse_rel_path("/a").is_err());
        assert!(parse_rel_path("a/../b").is_err());
        assert!(parse_rel_path("").is_err());
        assert!(parse_rel_path("a//b").is_err());
    }

    #[test]
    fn scan_refuses_special_files_hardlinks_and_escaping_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("ok.txt"), "ok").unwrap();
        assert_eq!(
            scan(root, &IgnoreRules::default()).unwrap().0.entries.len(),
            1
        );

        fs::hard_link(root.join("ok.txt"), root.join("alias.txt")).unwrap();
        let err = scan(root, &IgnoreRules::default()).unwrap_err();
        assert!(matches!(err, TreeError::Hardlink { links: 2, .. }), "{err}");
        fs::remove_file(root.join("alias.txt")).unwrap();

        std::os::unix::fs::symlink("../outside", root.join("esc")).unwrap();
        let err = scan(root, &IgnoreRules::default()).unwrap_err();
        assert!(err.to_string().contains("esc"), "{err}");
        fs::remove_file(root.join("esc")).unwrap();

        // Each link looks harmless alone, but `esc` goes through `d/up`, which is `..`.
        fs::create_dir(root.join("d")).unwrap();
        std::os::unix::fs::symlink("..", root.join("d/up")).unwrap();
        std::os::unix::fs::symlink("d/up/..", root.join("esc")).unwrap();
        let err = scan(root, &IgnoreRules::default()).unwrap_err();
        assert!(matches!(err, TreeError::EscapingSymlink { .. }), "{err}");
        fs::remove_file(root.join("esc")).unwrap();
        std::os::unix::fs::symlink("d/up/ok.txt", root.join("fine")).unwrap();
        assert!(scan(root, &IgnoreRules::default()).is_ok());
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        assert!(scan(root, &IgnoreRules::default()).is_err());
        fs::remove_file(root.join("loop")).unwrap();

        nix::unistd::mkfifo(&root.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = scan(root, &IgnoreRules::default()).unwrap_err();
        assert!(err.to_string().contains("is a FIFO"), "{err}");
    }

    #[test]
    fn scan_applies_builtin_names_paths_gitignore_and_keep() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["src", "node_modules/x", "build", "docs/gen"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        fs::write(root.join("src/a.rs"), "a").unwrap();
        fs::write(root.join("src/a.log"), "log").unwrap();
        fs::write(root.join("node_modules/x/i.js"), "i").unwrap();
        fs::write(root.join("build/out"), "o").unwrap();
        fs::write(root.join("docs/gen/page"), "p").unwrap();
        fs::write(root.join("rules"), "*.log\nbuild/\n").unwrap();
        let rules = IgnoreRules {
            paths: vec!["docs/gen".into()],
            gitignore_files: vec![root.join("rules")],
            keep: vec!["src/a.log".into()],
            ..IgnoreRules::default()
        };
        let (tree, report) = scan(root, &rules).unwrap();
        let paths: Vec<_> = tree.entries.keys().map(|p| p.to_string()).collect();
        assert_eq!(paths, ["docs", "rules", "src", "src/a.log", "src/a.rs"]);
        assert_eq!(report.ignored, ["build", "docs/gen", "node_modules"]);
    }

    #[test]
    fn nested_gitignore_rules_apply_only_in_their_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::write(root.join("sub/.gitignore"), "*.tmp\n").unwrap();
        fs::write(root.join("sub/x.tmp"), "x").unwrap();
        fs::write(root.join("y.tmp"), "y").unwrap();
        let rules = IgnoreRules {
            gitignore_recursive: true,
            ..IgnoreRules::default()
        };
        let (tree, _) = scan(root, &rules).unwrap();
        assert!(tree.entries.contains_key("y.tmp"));
        assert!(!tree.entries.contains_key("sub/x.tmp"));
    }

    #[test]
    fn a_file_source_is_the_tree_of_that_one_file_under_its_own_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("crash.c"), "int x;\n").unwrap();
        std::os::unix::fs::symlink("crash.c", root.join("link.c")).unwrap();
        std::os::unix::fs::symlink(".", root.join("here")).unwrap();
        let (tree, report, kind) =
            scan_source(&root.join("crash.c"), &IgnoreRules::default()).unwrap();
        assert_eq!(kind, SourceKind::File);
        assert!(report.ignored.is_empty());
        assert_eq!(tree.root, FILE_TREE_ROOT);
        assert_eq!(
            tree.entries.keys().map(|k| &**k).collect::<Vec<_>>(),
            ["crash.c"]
        );
        // Read back from anywhere, under the same name, it is the same tree.
        let copy = tempfile::tempdir().unwrap();
        let out = copy.path().join("out.c");
        crate::workspace::write_entry(&out, &tree.entries["crash.c"]).unwrap();
        crate::workspace::set_times(&out, &tree.entries["crash.c"].meta).unwrap();
        assert_eq!(read_file_tree(&out, "crash.c").unwrap(), tree);
        // Through a link, the file keeps the link's name; a link to a directory is refused.
        let (linked, _, _) = scan_source(&root.join("link.c"), &IgnoreRules::default()).unwrap();
        assert_eq!(
            linked.entries.keys().map(|k| &**k).collect::<Vec<_>>(),
            ["link.c"]
        );
        assert!(matches!(
            source_kind(&root.join("here")),
            Err(TreeError::RootSymlink { .. })
        ));
        assert_eq!(source_kind(root).unwrap(), SourceKind::Directory);
        let keep = IgnoreRules {
            keep: vec!["other".to_string()],
            ..IgnoreRules::default()
        };
        assert!(matches!(
            scan_source(&root.join("crash.c"), &keep),
            Err(TreeError::KeepMissing { .. })
        ));
        assert!(matches!(
            read_file_tree(root, "crash.c"),
            Err(TreeError::NotAFile { .. })
        ));
    }
}
