//! The declarations pass: deletes each declaration (top-level, then each member: a variant,
//! field, method or associated constant) together with the references it would leave
//! dangling.
//!
//! Deleting a declaration fails when its name is still used: an enum variant goes only with
//! the match arms that name it. The [`Declarations`] pass
//! therefore deletes it with, in every file, the smallest syntax element (or, in a file
//! without a grammar, the line) around each whole-word use of its name.
//!
//! The same coupling for parameters: a parameter its function's body never names goes with
//! the argument each call passes for it ([`crate::reduce::syntax::unused_parameters`]),
//! which neither the parameter's deletion nor the argument's allows alone.

use std::collections::HashSet;
use std::ops::Range;

use crate::reduce::edits::Mutation;
use crate::reduce::error::ReduceError;
use crate::reduce::identifiers::UseIndex;
use crate::reduce::pass::{
    NeededShare, Pass, PassContext, PassResult, Then, UNION_WINDOW, complement, file_state,
    line_ranges, per_file_ahead,
};
use crate::reduce::session::{Candidate, Session};
use crate::reduce::syntax;
use crate::tree::{Node, RelPath, Tree};

use super::references::FileCuts;

/// Uses of one name beyond which a declaration is not offered with them: a name used that
/// often is rarely removable, and the cut would be most of the tree.
const MAX_USES: usize = 64;

/// Where each identifier occurs in one state of the tree, and the syntax levels of the files
/// that hold a use, parsed once per state.
struct Uses<'t> {
    tree: &'t Tree,
    at: UseIndex<'t>,
    levels: std::collections::HashMap<&'t RelPath, Option<syntax::Levels>>,
}

impl<'t> Uses<'t> {
    fn new(tree: &'t Tree) -> Uses<'t> {
        Uses {
            tree,
            at: UseIndex::new(tree),
            levels: std::collections::HashMap::new(),
        }
    }

    /// The cuts that delete the declaration at `range` of `path`, named `name`, with every
    /// use of the name: per file, its digest and the ranges to cut (the smallest syntax node
    /// around each use, or its line). `None` when the name is used nowhere else (the syntax
    /// pass already tries the declaration alone) or more than [`MAX_USES`] times.
    fn cuts(&mut self, path: &RelPath, range: &Range<usize>, name: &str) -> Option<FileCuts> {
        let uses: Vec<(&RelPath, Range<usize>)> = self
            .at
            .get(name)?
            .iter()
            .filter(|(file, r)| !(*file == path && range.start <= r.start && r.end <= range.end))
            .cloned()
            .collect();
        if uses.is_empty() || uses.len() > MAX_USES {
            return None;
        }
        let mut by_file: std::collections::BTreeMap<&RelPath, Vec<Range<usize>>> =
            std::collections::BTreeMap::new();
        by_file.entry(path).or_default().push(range.clone());
        for (file, r) in uses {
            let Some(Node::File { data, .. }) = self.tree.entries.get(file).map(|e| &e.node) else {
                continue;
            };
            let levels = self.levels.entry(file).or_insert_with(|| {
                syntax::lang_for_file(file, data)
                    .and_then(|l| syntax::deletion_levels(l, data).ok())
            });
            let cut = levels
                .as_ref()
                .and_then(|levels| syntax::smallest_enclosing(levels, &r))
                .or_else(|| {
                    line_ranges(data)
                        .into_iter()
                        .find(|l| l.start <= r.start && r.end <= l.end)
                })?;
            by_file.entry(file).or_default().push(cut);
        }
        let mut out = Vec::new();
        for (file, cut) in by_file {
            if let Some(Node::File { digest, .. }) = self.tree.entries.get(file).map(|e| &e.node) {
                out.push((file.clone(), *digest, cut));
            }
        }
        Some(out)
    }
}

/// Deletes each declaration (top-level or member) together with the uses of its name.
#[derive(Debug, Default)]
pub(crate) struct Declarations;

impl Declarations {
    /// The declarations of one file, in windows, until each name was tried once; `None`
    /// when the session stopped. `after` gives what the pass tries after this file.
    fn file(
        session: &mut Session,
        phase: &str,
        path: &RelPath,
        after: &Then<'_>,
    ) -> Result<Option<u64>, ReduceError> {
        let mut tried: HashSet<String> = HashSet::new();
        let mut accepted = 0;
        // With runs ahead, the window after this one too (from the same parse and index):
        // what runs ahead if this one commits nothing.
        let count = if session.runs_ahead() { 2 } else { 1 };
        loop {
            let Some(windows) = Declarations::windows(session, path, &tried, count) else {
                return Ok(Some(accepted));
            };
            let mut windows = windows.into_iter();
            let Some((candidates, names)) = windows.next() else {
                return Ok(Some(accepted));
            };
            tried.extend(names);
            if candidates.is_empty() {
                return Ok(Some(accepted));
            }
            // After the file's last window, what the pass tries next.
            let ahead = match windows.next() {
                Some((next, _)) if !next.is_empty() => next,
                _ if count > 1 => after(session, NeededShare::default()),
                _ => Vec::new(),
            };
            let Some(done) = session.try_window_ahead(phase, candidates, ahead)? else {
                return Ok(None);
            };
            accepted += done.iter().filter(|c| **c).count() as u64;
        }
    }

    /// Up to `count` successive windows of `path`'s declarations on the current tree, each
    /// of up to [`UNION_WINDOW`] declarations whose names are not in `tried` nor in an
    /// earlier window, each declaration with its uses, and with the names the window looked
    /// at (a name used nowhere else is looked at and skipped); after the declarations, the
    /// parameters only their callers need, each with its arguments (see
    /// [`Declarations::with_arguments`]). A window is empty when no name is left. `None`
    /// when the file is gone or cannot be parsed.
    fn windows(
        session: &Session,
        path: &RelPath,
        tried: &HashSet<String>,
        count: usize,
    ) -> Option<Vec<(Vec<Candidate>, Vec<String>)>> {
        let (data, _) = file_state(session, path)?;
        let lang = syntax::lang_for_file(path, &data)?;
        let mut declared = syntax::declarations(lang, &data).ok()?;
        // Then the members (variants, fields, methods): a member still matched or
        // constructed somewhere can go only with those uses.
        declared.extend(syntax::member_declarations(lang, &data).unwrap_or_default());
        // Then each parameter its function's body never names, with the arguments the
        // calls pass for it, looked at under the name `function(parameter)`.
        let unused = syntax::unused_parameters(lang, &data).unwrap_or_default();
        let mut uses_of = Uses::new(&session.current);
        // Each file that calls one of them, parsed once.
        let mut sites: std::collections::HashMap<RelPath, Option<syntax::CallSites>> =
            std::collections::HashMap::new();
        let mut seen: HashSet<String> = tried.clone();
        let mut windows = Vec::with_capacity(count);
        for _ in 0..count {
            let mut candidates = Vec::new();
            let mut looked: Vec<String> = Vec::new();
            for (range, name) in &declared {
                if candidates.len() == UNION_WINDOW || !seen.insert(name.clone()) {
                    continue;
                }
                looked.push(name.clone());
                if let Some(candidate) =
                    Declarations::with_uses(session, &mut uses_of, path, range, name)
                {
                    candidates.push(candidate);
                }
            }
            // One parameter of a function per window: two neighbours cut together would
            // leave the comma between them (`f(a, )`), where one after the other leaves
            // none. The next waits for the next window, on the tree this one left.
            let mut functions: HashSet<&str> = HashSet::new();
            for param in &unused {
                let key = format!("{}({})", param.function, param.name);
                if candidates.len() == UNION_WINDOW
                    || functions.contains(param.function.as_str())
                    || !seen.insert(key.clone())
                {
                    continue;
                }
                looked.push(key);
                if let Some(candidate) =
                    Declarations::with_arguments(session, &uses_of, &mut sites, path, lang, param)
                {
                    functions.insert(&param.function);
                    candidates.push(candidate);
                }
            }
            windows.push((candidates, looked));
        }
        Some(windows)
    }

    /// The candidate that deletes the parameter `param` of `path` with the argument each
    /// call of its function passes for it, in every file of the same language that names
    /// the function; `None` when no call passes one (the syntax pass tries the parameter
    /// alone) or a call cannot be read (a spread before it).
    fn with_arguments(
        session: &Session,
        uses_of: &Uses<'_>,
        sites: &mut std::collections::HashMap<RelPath, Option<syntax::CallSites>>,
        path: &RelPath,
        lang: syntax::Lang,
        param: &syntax::Unused,
    ) -> Option<Candidate> {
        let uses = uses_of.at.get(&param.function)?;
        if uses.len() > MAX_USES {
            return None;
        }
        let files: std::collections::BTreeSet<&RelPath> = uses
            .iter()
            .map(|(file, _)| *file)
            .filter(|file| {
                file_state(session, file).and_then(|(data, _)| syntax::lang_for_file(file, &data))
                    == Some(lang)
            })
            .collect();
        let mut cuts: std::collections::BTreeMap<&RelPath, Vec<Range<usize>>> =
            std::collections::BTreeMap::new();
        cuts.entry(path).or_default().push(param.range.clone());
        let mut arguments = 0;
        for file in files {
            let calls = sites.entry(file.clone()).or_insert_with(|| {
                let (data, _) = file_state(session, file)?;
                syntax::CallSites::new(lang, data).ok()
            });
            let found = calls
                .as_ref()?
                .cuts(&param.function, param.index, &param.name)?;
            arguments += found.len();
            cuts.entry(file).or_default().extend(found);
        }
        if arguments == 0 {
            return None;
        }
        let mut by_file: FileCuts = Vec::new();
        for (file, mut cut) in cuts {
            let (_, digest) = file_state(session, file)?;
            cut.sort_by_key(|r| r.start);
            if cut.windows(2).any(|w| w[0].end > w[1].start) {
                return None;
            }
            by_file.push((file.clone(), digest, cut));
        }
        Some(Candidate {
            mutation: cut_mutation(session, by_file),
            label: format!(
                "parameter {} of {} in {path} with {arguments} argument{}",
                param.name,
                param.function,
                if arguments == 1 { "" } else { "s" }
            ),
        })
    }

    /// The candidate that deletes the declaration `name` at `range` of `path` with every
    /// use of the name; `None` when it has none elsewhere or too many.
    fn with_uses(
        session: &Session,
        uses_of: &mut Uses<'_>,
        path: &RelPath,
        range: &Range<usize>,
        name: &str,
    ) -> Option<Candidate> {
        let cuts = uses_of.cuts(path, range, name)?;
        let uses: usize = cuts.iter().map(|(_, _, c)| c.len()).sum::<usize>() - 1;
        Some(Candidate {
            mutation: cut_mutation(session, cuts),
            label: format!(
                "declaration {name} of {path} with {uses} use{}",
                if uses == 1 { "" } else { "s" }
            ),
        })
    }
}

/// The union of `cuts`, each file keeping what its cuts leave of its current content.
fn cut_mutation(session: &Session, cuts: FileCuts) -> Mutation {
    let mut parts = Vec::new();
    for (file, digest, cut) in cuts {
        let Some((now, _)) = file_state(session, &file) else {
            continue;
        };
        parts.push(Mutation::Keep {
            path: file,
            expect: digest,
            keep: complement(now.len(), &cut),
        });
    }
    Mutation::Union(parts)
}

impl Pass for Declarations {
    fn name(&self) -> &'static str {
        "declarations"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let first = |session: &Session, path: &RelPath, _| {
            Declarations::windows(session, path, &HashSet::new(), 1)
                .and_then(|mut windows| windows.pop())
                .map(|(first, _)| first)
                .unwrap_or_default()
        };
        per_file_ahead(session, ctx, false, &first, |session, path, after| {
            Declarations::file(session, name, path, after)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::pass::tests::{context, counts_by_jobs};

    #[test]
    fn the_next_file_s_first_window_runs_ahead_of_a_file_s_last() {
        // Two files, each declaring a function it calls, all needed. Each file's search
        // is one window of one command; with two workers, the second file's runs beside
        // the first's and then answers from the cache.
        let counts = counts_by_jobs(
            &[
                ("a.py", "def fa():\n    pass\nfa()\n"),
                ("b.py", "def fb():\n    pass\nfb()\n"),
            ],
            "grep -q 'def fa' a.py && grep -q 'def fb' b.py",
            &context(false),
            || Box::new(Declarations),
        );
        assert_eq!(counts, [(2, 0, 0, 2), (2, 1, 1, 2)]);
    }
}
