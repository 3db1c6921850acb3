//! A [`Tree`] as a REAPI input root: one `Directory` message per directory, its files,
//! directories and symlinks each sorted by name, files executable when their mode has an
//! execute bit; the digest of a message is the SHA-256 of its encoding.

use std::collections::HashMap;
use std::sync::Arc;

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use sha2::{Digest as _, Sha256};

use crate::tree::{Node, Tree};

/// The input root: its digest, and every blob it is made of (files and directory messages),
/// each once.
pub(super) struct InputRoot {
    /// The root directory's digest.
    pub(super) root: re::Digest,
    /// The blobs by hash.
    pub(super) blobs: Vec<(re::Digest, Arc<[u8]>)>,
}

/// The digest of a SHA-256 and a length.
pub(super) fn digest(hash: &[u8; 32], len: usize) -> re::Digest {
    let mut text = String::with_capacity(64);
    for byte in hash {
        text.push_str(&format!("{byte:02x}"));
    }
    re::Digest {
        hash: text,
        size_bytes: i64::try_from(len).unwrap_or(i64::MAX),
    }
}

/// The digest of `data`.
pub(super) fn digest_of(data: &[u8]) -> re::Digest {
    digest(&Sha256::digest(data).into(), data.len())
}

/// A message encoded, with its digest.
pub(super) fn encoded<M: prost::Message>(message: &M) -> (re::Digest, Vec<u8>) {
    let bytes = message.encode_to_vec();
    (digest_of(&bytes), bytes)
}

/// The parent directory and the name of a relative path.
fn split(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

/// Builds the input root of `tree`.
pub(super) fn input_root(tree: &Tree) -> InputRoot {
    let mut dirs: HashMap<String, re::Directory> = HashMap::new();
    dirs.insert(String::new(), re::Directory::default());
    let mut blobs: Vec<(re::Digest, Arc<[u8]>)> = Vec::new();
    let mut seen: HashMap<String, ()> = HashMap::new();
    // Every directory, those only implied by a deeper path included.
    for (path, _) in tree.entries.iter() {
        let mut rest: &str = path;
        while let Some((parent, _)) = rest.rsplit_once('/') {
            dirs.entry(parent.to_string()).or_default();
            rest = parent;
        }
    }
    for (path, entry) in tree.entries.iter() {
        let (parent, name) = split(path);
        match &entry.node {
            Node::Dir => {
                dirs.entry(path.to_string()).or_default();
            }
            Node::File { data, digest: hash } => {
                let file_digest = digest(hash, data.len());
                if seen.insert(file_digest.hash.clone(), ()).is_none() {
                    blobs.push((file_digest.clone(), data.clone()));
                }
                dirs.entry(parent.to_string())
                    .or_default()
                    .files
                    .push(re::FileNode {
                        name: name.to_string(),
                        digest: Some(file_digest),
                        is_executable: entry.meta.mode & 0o111 != 0,
                        node_properties: None,
                    });
            }
            Node::Symlink { target } => {
                dirs.entry(parent.to_string())
                    .or_default()
                    .symlinks
                    .push(re::SymlinkNode {
                        name: name.to_string(),
                        target: target.clone(),
                        node_properties: None,
                    });
            }
        }
    }
    // Deepest first, so that every directory's children are done before it.
    let mut order: Vec<String> = dirs.keys().cloned().collect();
    order.sort_by_key(|path| {
        let depth = if path.is_empty() {
            0
        } else {
            path.matches('/').count() + 1
        };
        std::cmp::Reverse(depth)
    });
    let mut root = None;
    for path in order {
        let Some(mut dir) = dirs.remove(&path) else {
            continue;
        };
        dir.files.sort_by(|a, b| a.name.cmp(&b.name));
        dir.directories.sort_by(|a, b| a.name.cmp(&b.name));
        dir.symlinks.sort_by(|a, b| a.name.cmp(&b.name));
        let (dir_digest, bytes) = encoded(&dir);
        if seen.insert(dir_digest.hash.clone(), ()).is_none() {
            blobs.push((dir_digest.clone(), Arc::from(bytes)));
        }
        if path.is_empty() {
            root = Some(dir_digest);
        } else {
            let (parent, name) = split(&path);
            dirs.entry(parent.to_string())
                .or_default()
                .directories
                .push(re::DirectoryNode {
                    name: name.to_string(),
                    digest: Some(dir_digest),
                });
        }
    }
    let root = root.unwrap_or_else(|| encoded(&re::Directory::default()).0);
    InputRoot { root, blobs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Entry, Meta};
    use prost::Message as _;

    fn meta(mode: u32) -> Meta {
        Meta { mode, mtime_ns: 0 }
    }

    fn tree(items: &[(&str, Node, u32)]) -> Tree {
        let mut entries = crate::tree::Entries::new();
        for (path, node, mode) in items {
            entries.insert(
                Arc::from(*path),
                Entry {
                    node: node.clone(),
                    meta: meta(*mode),
                },
            );
        }
        Tree {
            root: meta(0o755),
            entries,
        }
    }

    fn file(text: &str) -> Node {
        Node::file(Arc::from(text.as_bytes()))
    }

    fn directory(root: &InputRoot, digest: &re::Digest) -> re::Directory {
        let (_, data) = root
            .blobs
            .iter()
            .find(|(d, _)| d == digest)
            .expect("the directory's blob is there");
        re::Directory::decode(&data[..]).expect("a Directory message")
    }

    /// The digests of the same `Directory` messages built and encoded by another
    /// implementation (BuildGrid's generated Python protobuf classes).
    #[test]
    fn a_known_tree_has_the_digests_of_another_implementation() {
        let t = tree(&[
            ("b.sh", file("#!/bin/sh\necho hi\n"), 0o755),
            ("a.txt", file("hello\n"), 0o644),
            ("sub", Node::Dir, 0o755),
            ("sub/z.txt", file("z\n"), 0o644),
            (
                "link",
                Node::Symlink {
                    target: "sub/z.txt".to_string(),
                },
                0,
            ),
        ]);
        let root = input_root(&t);
        assert_eq!(
            root.root.hash,
            "b214e5b06d3022c5af75ba4e26658a1ab05df7cb1babf7ef45b6ced777f3978d"
        );
        assert_eq!(root.root.size_bytes, 255);
        let top = directory(&root, &root.root);
        assert_eq!(
            top.directories[0].digest.as_ref().map(|d| d.hash.as_str()),
            Some("0efb8f5602657e1aecb3715b40677b5a8f6e49f73e57e42958607796317a2434")
        );
    }

    #[test]
    fn children_are_sorted_by_name_and_the_execute_bit_is_kept() {
        let t = tree(&[
            ("z.txt", file("z"), 0o644),
            ("A.txt", file("a"), 0o600),
            ("m.sh", file("m"), 0o700),
            ("d2", Node::Dir, 0o755),
            ("d1", Node::Dir, 0o755),
            ("d1/x", file("x"), 0o644),
        ]);
        let root = input_root(&t);
        let top = directory(&root, &root.root);
        let names: Vec<&str> = top.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["A.txt", "m.sh", "z.txt"]);
        let dirs: Vec<&str> = top.directories.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(dirs, ["d1", "d2"]);
        let exec: Vec<bool> = top.files.iter().map(|f| f.is_executable).collect();
        assert_eq!(exec, [false, true, false]);
        let d1 = directory(&root, top.directories[0].digest.as_ref().expect("digest"));
        assert_eq!(d1.files[0].name, "x");
        assert_eq!(d1.files[0].digest, Some(digest_of(b"x")));
        let d2 = directory(&root, top.directories[1].digest.as_ref().expect("digest"));
        assert_eq!(d2, re::Directory::default());
    }

    #[test]
    fn equal_contents_are_one_blob() {
        let t = tree(&[
            ("a", file("same"), 0o644),
            ("b", file("same"), 0o644),
            ("d", Node::Dir, 0o755),
            ("e", Node::Dir, 0o755),
        ]);
        let root = input_root(&t);
        // One file blob, one empty directory, one root.
        assert_eq!(root.blobs.len(), 3);
    }

    #[test]
    fn the_empty_tree_is_the_empty_directory() {
        let root = input_root(&tree(&[]));
        assert_eq!(
            root.root.hash,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(root.root.size_bytes, 0);
    }
}
