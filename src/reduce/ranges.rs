//! Byte ranges of one file's content: its lines, and what is left outside a cut. A leaf, so
//! that the session, the block model and the passes share it without importing one another.

use std::ops::Range;

/// The byte ranges of each line, newline included.
pub(crate) fn line_ranges(data: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, byte) in data.iter().enumerate() {
        if *byte == b'\n' {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < data.len() {
        out.push(start..data.len());
    }
    out
}

/// The ranges of `0..len` outside `cut` (sorted, disjoint).
pub(crate) fn complement(len: usize, cut: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut sorted = cut.to_vec();
    sorted.sort_by_key(|r| r.start);
    let mut out = Vec::new();
    let mut at = 0;
    for r in sorted {
        if r.start > at {
            out.push(at..r.start);
        }
        at = at.max(r.end);
    }
    if at < len {
        out.push(at..len);
    }
    out
}
