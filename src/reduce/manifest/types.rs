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
    /// Where the deleted item sits in a comma-separated list, if it is one: what deleting
    /// several items together needs (see [`merged_deletion`]).
    pub slot: Option<ListSlot>,
}

/// An item's place in a comma-separated list (a JSON array or object, a TOML array or
/// inline table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListSlot {
    /// The list, named by where its first item starts (no two lists of a file share it).
    pub list: usize,
    /// The item's position in the list, from 0, counting items that are never offered.
    pub index: usize,
    /// Whether it is the list's last item with no comma after it, whose deletion takes the
    /// comma before it (a last item with a comma of its own, as TOML arrays allow, takes
    /// that one, like any other item).
    pub last: bool,
    /// Where the comma between the item and the one before it is.
    pub comma_before: Option<usize>,
}

/// What deleting the edits `chosen` of one file together deletes: their ranges, and, for
/// each list whose last item goes, the comma before the run of items that goes with it.
///
/// Each item's own deletion takes one comma (the one after it, or the one before it for
/// the last item), so the ranges of the last items of a list alone leave the comma after
/// the item before them (`[1, 2, 3]` without 2 and 3 would be `[1, ]`): that comma goes
/// too. The result is sorted and disjoint.
pub(crate) fn merged_deletion<'a>(
    chosen: impl IntoIterator<Item = &'a ManifestEdit>,
) -> Vec<Range<usize>> {
    let chosen: Vec<&ManifestEdit> = chosen.into_iter().collect();
    let mut ranges: Vec<Range<usize>> = chosen
        .iter()
        .flat_map(|e| e.delete.iter().cloned())
        .collect();
    for tail in chosen.iter().filter_map(|e| e.slot).filter(|s| s.last) {
        // Walk back over the items of the list that go with its last one.
        let mut first = tail;
        while let Some(before) = first.index.checked_sub(1).and_then(|index| {
            chosen
                .iter()
                .filter_map(|e| e.slot)
                .find(|s| s.list == tail.list && s.index == index)
        }) {
            first = before;
        }
        if let Some(comma) = first.comma_before {
            ranges.push(comma..comma + 1);
        }
    }
    crate::reduce::edits::normalise(ranges)
}

impl ManifestEdit {
    /// Returns a copy of `src` with this edit's ranges removed (ranges past the end are clamped).
    pub(crate) fn apply(&self, src: &[u8]) -> Vec<u8> {
        without(src, &self.delete)
    }
}

/// A copy of `src` without the sorted ranges `delete` (ranges past the end are clamped):
/// what an edit, or several merged by [`merged_deletion`], leaves.
pub(crate) fn without(src: &[u8], delete: &[Range<usize>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len());
    let mut pos = 0;
    for range in delete {
        let start = range.start.clamp(pos, src.len());
        let end = range.end.clamp(start, src.len());
        out.extend_from_slice(&src[pos..start]);
        pos = end;
    }
    out.extend_from_slice(&src[pos..]);
    out
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
    pub(super) fn push(&mut self, level: usize, label: String, delete: Vec<Range<usize>>) {
        self.push_item(level, label, delete, None);
    }

    /// [`Levels::push`] for an item of a comma-separated list, at `slot` in it.
    pub(super) fn push_item(
        &mut self,
        level: usize,
        label: String,
        mut delete: Vec<Range<usize>>,
        slot: Option<ListSlot>,
    ) {
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
            slot,
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
    let commas = list_commas(b, items, comment);
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

/// Where the comma after each item of a list is (`None` for an item with none after it).
fn list_commas(b: &[u8], items: &[Range<usize>], comment: Option<u8>) -> Vec<Option<usize>> {
    items
        .iter()
        .map(|r| {
            let p = skip_trivia(b, r.end, comment);
            (b.get(p) == Some(&b',')).then_some(p)
        })
        .collect()
}

/// Each item's [`ListSlot`] in the list `items` (as for [`list_deletions`]).
pub(super) fn list_slots(b: &[u8], items: &[Range<usize>], comment: Option<u8>) -> Vec<ListSlot> {
    let commas = list_commas(b, items, comment);
    let list = items.first().map_or(0, |r| r.start);
    (0..items.len())
        .map(|index| ListSlot {
            list,
            index,
            last: index + 1 == items.len() && commas[index].is_none(),
            comma_before: index.checked_sub(1).and_then(|i| commas[i]),
        })
        .collect()
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
