//! The files pass: hierarchical deletion of files and directories, level by level, each
//! with the lines of other files that reference it (see [`super::references`]).

use crate::reduce::edits::Mutation;
use crate::reduce::error::ReduceError;
use crate::reduce::minimise::first_window;
use crate::reduce::pass::{
    Elements, NeededShare, Pass, PassContext, PassResult, PassState, file_state, minimise,
    minimise_then,
};
use crate::reduce::session::{Candidate, Session};
use crate::tree::{Node, RelPath};

use super::references::references_to;

/// Hierarchical deletion of files and directories.
#[derive(Debug, Default)]
pub(crate) struct Files {
    state: PassState,
    /// Whether the first run's trace (or its absence) was dealt with.
    traced: bool,
}

/// Trees of at most this many entries are not traced (see [`Files::untouched`]).
const SMALL_TREE: usize = 4;

/// The children of one directory, as a list to minimise.
struct Paths(Vec<RelPath>);

impl Elements for Paths {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn weight(&self, session: &Session, i: usize) -> u64 {
        session.current.weight(&self.0[i]) + 1
    }

    fn candidate(&self, session: &Session, chunk: &[usize], _: &[usize]) -> Option<Candidate> {
        let paths: Vec<RelPath> = chunk.iter().map(|&i| self.0[i].clone()).collect();
        let mut label = describe_removal(&paths);
        // The lines that name what goes (`mod x;`, `#include "x.h"`, `import x`) go too.
        // So do a name a longer import takes of it, and the defaults and keyword arguments
        // that name what the removed imports bound (set to `None` or `null`).
        let references = references_to(&session.current, &paths);
        let mut parts = vec![Mutation::Remove(paths)];
        let lines: usize = references.iter().map(|e| e.lines).sum();
        let defaults: usize = references.iter().map(|e| e.defaults).sum();
        if lines > 0 {
            label.push_str(&format!(
                " with {lines} line{} that reference{} it",
                if lines == 1 { "" } else { "s" },
                if lines == 1 { "s" } else { "" }
            ));
        }
        if defaults > 0 {
            label.push_str(&format!(
                " and {defaults} value{} that name{} what {} imported",
                if defaults == 1 { "" } else { "s" },
                if defaults == 1 { "s" } else { "" },
                if lines == 1 { "it" } else { "they" }
            ));
        }
        for edit in references {
            let Some((data, _)) = file_state(session, &edit.path) else {
                continue;
            };
            parts.push(edit.mutation(data.len()));
        }
        let mutation = if parts.len() == 1 {
            parts.pop()?
        } else {
            Mutation::Union(parts)
        };
        Some(Candidate { label, mutation })
    }

    fn remove(&mut self, _: &Session, gone: &[usize]) {
        let mut i = 0;
        self.0.retain(|_| {
            i += 1;
            gone.binary_search(&(i - 1)).is_err()
        });
    }
}

impl Files {
    /// The first run's first search: the run under the tracer, then every entry it did not
    /// touch in one candidate, then (when that fails) the list of those entries minimised.
    /// Returns the commits, or `None` when the session must stop.
    fn untouched(
        &mut self,
        session: &mut Session,
        ctx: &PassContext,
    ) -> Result<Option<u64>, ReduceError> {
        let Some(strace) = &ctx.strace else {
            return Ok(Some(0));
        };
        if session.current.entries.len() <= SMALL_TREE {
            // The files pass tries each of these few entries anyway: a traced run would
            // cost more commands than it could save.
            session.set_access_record(crate::reduce::access::TraceRecord::untraced("small-tree"));
            return Ok(Some(0));
        }
        let Some(access) = session.trace_access(self.name(), strace)? else {
            return Ok(Some(0));
        };
        let roots = access.untouched_roots(&session.current, |p| ctx.protected(p));
        if roots.is_empty() {
            return Ok(Some(0));
        }
        let all: Vec<usize> = (0..roots.len()).collect();
        let mut list = Paths(roots);
        let Some(mut whole) = list.candidate(session, &all, &[]) else {
            return Ok(Some(0));
        };
        whole.label = format!("{} that the failing run never touched", whole.label);
        let Some(done) = session.try_window(self.name(), vec![whole])? else {
            return Ok(None);
        };
        if done.first().copied().unwrap_or(false) {
            return Ok(Some(1));
        }
        if list.len() == 1 {
            return Ok(Some(0));
        }
        minimise(
            session,
            self.name(),
            ctx.minimiser,
            &mut self.state.needed,
            &mut list,
        )
    }
}

fn describe_removal(paths: &[RelPath]) -> String {
    match paths {
        [one] => format!("delete {one}"),
        [first, .., last] => format!("delete {} entries, {first} to {last}", paths.len()),
        [] => "delete nothing".to_string(),
    }
}

impl Pass for Files {
    fn name(&self) -> &'static str {
        "files"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let mut result = PassResult::default();
        if !self.traced {
            self.traced = true;
            match self.untouched(session, ctx)? {
                Some(n) => result.accepted += n,
                None => return Ok(self.state.result(result.accepted)),
            }
        }
        loop {
            let mut round = 0;
            let mut queue: std::collections::VecDeque<String> = std::collections::VecDeque::new();
            queue.push_back(String::new());
            while let Some(dir) = queue.pop_front() {
                if !dir.is_empty() && !session.current.entries.contains_key(dir.as_str()) {
                    continue;
                }
                let children = |session: &Session, dir: &str| -> Vec<RelPath> {
                    session
                        .current
                        .children(dir)
                        .into_iter()
                        .filter(|p| !ctx.protected(p))
                        .collect()
                };
                // After this directory, the next one in the queue, else its own first
                // subdirectory: what runs ahead of its last window.
                let then = |session: &Session, share: NeededShare| {
                    let next = queue.front().cloned().or_else(|| {
                        session
                            .current
                            .children(&dir)
                            .into_iter()
                            .find_map(|child| {
                                matches!(
                                    session.current.entries.get(&child).map(|e| &e.node),
                                    Some(Node::Dir)
                                )
                                .then(|| child.to_string())
                            })
                    });
                    next.map(|next| {
                        let list = Paths(children(session, &next));
                        first_window(session, ctx.minimiser, share, &list, &[list.len()])
                    })
                    .unwrap_or_default()
                };
                let Some(n) = minimise_then(
                    session,
                    self.name(),
                    ctx.minimiser,
                    &mut self.state.needed,
                    &mut Paths(children(session, &dir)),
                    Some(&then),
                )?
                else {
                    result.accepted += round;
                    return Ok(self.state.result(result.accepted));
                };
                round += n;
                for child in session.current.children(&dir) {
                    if matches!(
                        session.current.entries.get(&child).map(|e| &e.node),
                        Some(Node::Dir)
                    ) {
                        queue.push_back(child.to_string());
                    }
                }
            }
            result.accepted += round;
            if round == 0 {
                return Ok(self.state.result(result.accepted));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::pass::tests::{context, counts_by_jobs};

    #[test]
    fn the_next_directory_s_first_window_runs_ahead_of_a_directory_s_last() {
        // Two directories of one needed file each: five commands (both directories, then
        // each, then each directory's file). With two workers, the top level's first
        // window runs ahead of its next round's, and `d1`'s only window (one command)
        // runs `d2`'s beside it, which then answers from the cache.
        let counts = counts_by_jobs(
            &[
                ("d1", ""),
                ("d1/a.txt", "a\n"),
                ("d2", ""),
                ("d2/b.txt", "b\n"),
            ],
            "test -f d1/a.txt && test -f d2/b.txt",
            &context(false),
            || Box::new(Files::default()),
        );
        assert_eq!(counts, [(5, 0, 0, 5), (5, 2, 2, 5)]);
    }
}
