//! The shared vocabulary of the manifest readers: the kinds of manifest, the edits they propose,
//! the errors they report, and the candidate levels and line scanning every format's reader uses.

use std::ops::Range;

/// One proposed deletion: the byte ranges of the manifest to delete (sorted, disjoint), and a label for reports
/// such as "dependency `serde` of Cargo.toml" or "item 3 of `files` in package.json".
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManifestEdit {
    /// Human-readable description of what the deletion removes. Item numbers in labels count from 1.
    pub label: String,
    /// Byte ranges to delete: sorted, disjoint, non-empty, within the source and on UTF-8 character boundaries.
    pub delete: Vec<Range<usize>>,
}

impl ManifestEdit {
    /// Returns a copy of `src` with this edit's ranges removed (ranges past the end are clamped).
    pub(crate) fn apply(&self, src: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(src.len());
        let mut pos = 0;
        for range in &self.delete {
            let start = range.start.clamp(pos, src.len());
            let end = range.end.clamp(start, src.len());
            out.extend_from_slice(&src[pos..start]);
            pos = end;
        }
        out.extend_from_slice(&src[pos..]);
        out
    }
}

/// The kinds of manifest this module understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ManifestKind {
    /// Cargo's `Cargo.toml`.
    CargoToml,
    /// Python's `pyproject.toml`.
    PyprojectToml,
    /// Pipenv's `Pipfile` (TOML).
    Pipfile,
    /// A pip requirements or constraints file (`requirements.txt`, `requirements-dev.in`, ...).
    Requirements,
    /// npm's `package.json`.
    PackageJson,
    /// PHP Composer's `composer.json`.
    ComposerJson,
    /// Go's `go.mod`.
    GoMod,
    /// Go's `go.work`.
    GoWork,
    /// Maven's `pom.xml`.
    PomXml,
    /// An MSBuild project or import (`*.csproj`, `*.fsproj`, `*.vbproj`, `*.props`, `*.targets`).
    MsBuild,
    /// Bundler's `Gemfile` (Ruby).
    Gemfile,
}

impl ManifestKind {
    /// The name used for this kind in labels and errors, such as "Cargo.toml" or "MSBuild project".
    pub(crate) fn display_name(self) -> &'static str {
        match self {
            ManifestKind::CargoToml => "Cargo.toml",
            ManifestKind::PyprojectToml => "pyproject.toml",
            ManifestKind::Pipfile => "Pipfile",
            ManifestKind::Requirements => "requirements file",
            ManifestKind::PackageJson => "package.json",
            ManifestKind::ComposerJson => "composer.json",
            ManifestKind::GoMod => "go.mod",
            ManifestKind::GoWork => "go.work",
            ManifestKind::PomXml => "pom.xml",
            ManifestKind::MsBuild => "MSBuild project",
            ManifestKind::Gemfile => "Gemfile",
        }
    }
}

/// Why [`candidates`] produced no candidates for a file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ManifestError {
    /// The file is not UTF-8.
    #[error("{kind} is not valid UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 {
        /// Display name of the manifest kind.
        kind: &'static str,
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The file does not parse as its kind.
    #[error("{kind} does not parse: {message}")]
    Parse {
        /// Display name of the manifest kind.
        kind: &'static str,
        /// Byte offset of the problem, when the parser reports one.
        offset: Option<usize>,
        /// The parser's description of the problem.
        message: String,
    },
    /// The file parses but lacks the structure its kind requires (for example a package.json whose
    /// top-level value is not an object, or a pom.xml whose root element is not `project`).
    #[error("{kind} is not a valid manifest: {message}")]
    Shape {
        /// Display name of the manifest kind.
        kind: &'static str,
        /// What is missing or unexpected.
        message: String,
    },
    /// The grammar a reader parses with could not be loaded.
    #[error("{kind} grammar could not be loaded")]
    Grammar {
        /// Display name of the manifest kind.
        kind: &'static str,
        /// Why the parser refused the grammar.
        #[source]
        source: tree_sitter::LanguageError,
    },
    /// The file is refused for safety: XML with a DOCTYPE or ENTITY declaration.
    #[error("{kind} refused: {reason}")]
    Refused {
        /// Display name of the manifest kind.
        kind: &'static str,
        /// Why the file is refused.
        reason: &'static str,
    },
}

/// Candidate levels being built for one file.
pub(super) struct Levels<'a> {
    src: &'a str,
    levels: Vec<Vec<ManifestEdit>>,
    pub(super) protected: Vec<Range<usize>>,
}

impl<'a> Levels<'a> {
    pub(super) fn new(src: &'a str) -> Self {
        Levels {
            src,
            levels: Vec::new(),
            protected: Vec::new(),
        }
    }

    /// Adds a candidate unless it is empty, out of bounds, off a character boundary, or touches a
    /// protected range.
    pub(super) fn push(&mut self, level: usize, label: String, mut delete: Vec<Range<usize>>) {
        delete.retain(|r| r.start < r.end);
        delete.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(delete.len());
        for range in delete {
            match merged.last_mut() {
                Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
                _ => merged.push(range),
            }
        }
        if merged.is_empty()
            || merged.iter().any(|r| {
                r.end > self.src.len()
                    || !self.src.is_char_boundary(r.start)
                    || !self.src.is_char_boundary(r.end)
            })
            || merged
                .iter()
                .any(|r| self.protected.iter().any(|p| overlaps(r, p)))
        {
            return;
        }
        if self.levels.len() <= level {
            self.levels.resize_with(level + 1, Vec::new);
        }
        self.levels[level].push(ManifestEdit {
            label,
            delete: merged,
        });
    }

    pub(super) fn finish(self) -> Vec<Vec<ManifestEdit>> {
        self.levels
            .into_iter()
            .filter(|l| !l.is_empty())
            .map(|mut l| {
                l.sort_by_key(|e| e.delete.first().map_or(0, |r| r.start));
                l
            })
            .collect()
    }
}

pub(super) fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Start of the line containing `pos`.
pub(super) fn line_start(b: &[u8], pos: usize) -> usize {
    let pos = pos.min(b.len());
    b[..pos]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1)
}

/// Position just after the newline ending the line containing `pos` (or the end of input).
pub(super) fn line_end(b: &[u8], pos: usize) -> usize {
    let pos = pos.min(b.len());
    b[pos..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |i| pos + i + 1)
}

/// Whether only spaces and tabs precede `pos` on its line.
pub(super) fn only_blanks_before(b: &[u8], pos: usize) -> bool {
    let pos = pos.min(b.len());
    b[line_start(b, pos)..pos]
        .iter()
        .all(|&c| c == b' ' || c == b'\t')
}

/// Whether the rest of the line from `pos` holds only blanks and, if `comment` is given, a comment
/// starting with that marker.
pub(super) fn rest_is_trivia(b: &[u8], pos: usize, comment: Option<&[u8]>) -> bool {
    let mut p = pos.min(b.len());
    while p < b.len() {
        match b[p] {
            b' ' | b'\t' | b'\r' => p += 1,
            b'\n' => return true,
            _ => return comment.is_some_and(|m| b[p..].starts_with(m)),
        }
    }
    true
}

/// Skips whitespace, newlines and (when `comment` is given) comments running to the end of line.
pub(super) fn skip_trivia(b: &[u8], pos: usize, comment: Option<u8>) -> usize {
    let mut p = pos.min(b.len());
    while p < b.len() {
        match b[p] {
            b' ' | b'\t' | b'\r' | b'\n' => p += 1,
            c if Some(c) == comment => p = line_end(b, p),
            _ => break,
        }
    }
    p
}

/// Moves a line start `start` up over the comment lines (starting with `marker` after indentation)
/// directly above it, never above `floor`. Everything between `floor` and `start` must be
/// whitespace or comments.
pub(super) fn extend_over_comments(b: &[u8], start: usize, floor: usize, marker: &[u8]) -> usize {
    let mut start = start;
    while start > 0 && start > floor {
        let prev = line_start(b, start - 1);
        if prev < floor {
            break;
        }
        if b[prev..start].trim_ascii_start().starts_with(marker) {
            start = prev;
        } else {
            break;
        }
    }
    start
}

/// Deletion ranges for each item of a comma-separated list (`[a, b]`, `{ k = v, ... }`, JSON
/// arrays and objects). `items` are the items' own spans in order; `comment` is the comment marker
/// allowed between items. Each deletion takes the item's comma: the following one, or the preceding
/// one for the last item. An item alone on its line(s) is deleted with its whole lines.
pub(super) fn list_deletions(
    b: &[u8],
    items: &[Range<usize>],
    comment: Option<u8>,
) -> Vec<Vec<Range<usize>>> {
    let marker = comment.map(|c| [c]);
    let marker = marker.as_ref().map(|m| &m[..]);
    let commas: Vec<Option<usize>> = items
        .iter()
        .map(|r| {
            let p = skip_trivia(b, r.end, comment);
            (b.get(p) == Some(&b',')).then_some(p)
        })
        .collect();
    let n = items.len();
    let mut out = Vec::with_capacity(n);
    for (i, item) in items.iter().enumerate() {
        let tail = commas[i].map_or(item.end, |c| c + 1);
        let own_line = only_blanks_before(b, item.start) && rest_is_trivia(b, tail, marker);
        let whole = line_start(b, item.start)..line_end(b, tail);
        let ranges = if i + 1 < n {
            let next = items[i + 1].start;
            // Up to the next item, or to the start of its line when it has a line of its own
            // (that line is its deletion's, which may share only the comma with this one).
            let end = if only_blanks_before(b, next) {
                line_start(b, next).max(tail)
            } else {
                next
            };
            match commas[i] {
                Some(_) if own_line => vec![whole],
                _ => vec![item.start..end],
            }
        } else if let Some(c) = commas[i] {
            if own_line {
                vec![whole]
            } else {
                vec![item.start..c + 1]
            }
        } else if i == 0 {
            if own_line {
                vec![whole]
            } else {
                vec![item.start..item.end]
            }
        } else if let Some(prev_comma) = commas[i - 1] {
            // A comment after the comma stays: the previous item's deletion may take it,
            // and the two may share nothing but the comma.
            let commented = comment.is_some_and(|c| b[prev_comma..item.start].contains(&c));
            if own_line {
                vec![prev_comma..prev_comma + 1, whole]
            } else if commented {
                vec![prev_comma..prev_comma + 1, item.start..item.end]
            } else {
                vec![prev_comma..item.end]
            }
        } else {
            Vec::new()
        };
        out.push(ranges);
    }
    out
}

pub(super) fn parse_error(
    kind: ManifestKind,
    offset: Option<usize>,
    message: String,
) -> ManifestError {
    ManifestError::Parse {
        kind: kind.display_name(),
        offset,
        message,
    }
}

pub(super) fn line_number(b: &[u8], pos: usize) -> usize {
    b[..pos.min(b.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}
