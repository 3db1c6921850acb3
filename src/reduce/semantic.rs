//! The semantic seam: a backend that proposes edits of the current tree (an LLM, say),
//! whose proposals go through the same session as every deterministic pass, so the oracle
//! alone decides what is kept.
//!
//! A [`Backend`] has a name and a `propose` call. The default is no backend at all: the
//! reduction is then exactly what it is without the seam. The built-in [`HttpBackend`]
//! speaks the OpenAI-compatible chat protocol to an explicit endpoint and model; its bearer
//! token comes only from the `REPROMIN_SEMANTIC_TOKEN` environment variable, never from the
//! command line, and is never written anywhere. Every proposed path is checked as a safe
//! relative path of a file (or entry, for a deletion) of the current tree before any
//! candidate is built; answers are bounded in size and time. Accepted edits are ordinary
//! replacement and deletion edits, listed in the report like every other.

use std::io::Read as _;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use crate::reduce::edits::{Mutation, REPLACED_BYTES_MAX};
use crate::reduce::error::ReduceError;
pub use crate::reduce::options::SemanticOptions;
use crate::reduce::pass::{Pass, PassContext, PassResult};
use crate::reduce::session::{Candidate, Session};
use crate::tree::{Node, RelPath};

/// The environment variable the bearer token is read from.
pub const TOKEN_ENV: &str = "REPROMIN_SEMANTIC_TOKEN";
/// The most bytes of an answer that are read; a longer answer is refused.
pub const RESPONSE_BYTES_MAX: u64 = 1024 * 1024;
/// The most file bytes sent in one request (the largest files are left out first).
pub const CONTEXT_BYTES_MAX: usize = 256 * 1024;
/// The most edits one answer may propose.
pub const EDITS_MAX: usize = 64;

/// What the report says of the semantic seam (never the token).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SemanticRecord {
    /// The backend's name.
    pub backend: String,
    /// The model.
    pub model: String,
    /// The endpoint.
    pub endpoint: String,
    /// Calls made.
    pub calls: u64,
    /// Edits proposed in answers that passed validation.
    pub proposed_edits: u64,
    /// Edits committed.
    pub accepted_edits: u64,
    /// Answers refused (unreachable endpoint, bad status, too large, malformed, unsafe
    /// path), each with why, the first ten kept.
    pub refused: Vec<String>,
}

/// A proposed edit of the current tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProposedEdit {
    /// The file's whole new content.
    Replace {
        /// Relative path of a file of the current tree.
        path: String,
        /// Its new content.
        content: String,
    },
    /// Delete the entry (a directory with everything below it).
    Delete {
        /// Relative path of an entry of the current tree.
        path: String,
    },
}

/// Why a backend's answer was refused.
#[derive(Debug, thiserror::Error)]
pub enum SemanticError {
    /// The request failed (connection, timeout, TLS).
    #[error("the request to the semantic endpoint failed: {0}")]
    Request(String),
    /// The endpoint answered with another status than 200.
    #[error("the semantic endpoint answered HTTP {0}")]
    Status(u16),
    /// The answer is larger than [`RESPONSE_BYTES_MAX`].
    #[error("the semantic endpoint's answer is larger than {RESPONSE_BYTES_MAX} bytes")]
    TooLarge,
    /// The answer is not what the protocol says.
    #[error("the semantic endpoint's answer is malformed: {0}")]
    Malformed(String),
    /// A proposed path is not a safe relative path of the tree.
    #[error("the semantic endpoint proposed an unsafe or unknown path {0:?}")]
    Path(String),
}

/// The current tree, as a backend sees it.
pub struct State<'a> {
    /// Text files, path and content, smallest first, within [`CONTEXT_BYTES_MAX`].
    pub files: Vec<(&'a str, &'a str)>,
    /// The failure's signature, as the oracle learnt it.
    pub signature: &'a str,
}

/// A proposer of edits.
pub trait Backend: Send {
    /// Its name in reports.
    fn name(&self) -> &'static str;
    /// Edits to try on `state`, one proposal per inner list.
    ///
    /// # Errors
    /// Why the answer was refused.
    fn propose(&mut self, state: &State<'_>) -> Result<Vec<Vec<ProposedEdit>>, SemanticError>;
}

/// The OpenAI-compatible chat backend.
pub struct HttpBackend {
    options: SemanticOptions,
    token: Option<String>,
    agent: ureq::Agent,
}

impl HttpBackend {
    /// A backend for `options`, with the token of [`TOKEN_ENV`] if it is set.
    pub fn new(options: SemanticOptions) -> HttpBackend {
        let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty());
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(options.timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            // The token goes to the endpoint named, not through a proxy the environment
            // happens to name.
            .proxy(None)
            .build()
            .into();
        HttpBackend {
            options,
            token,
            agent,
        }
    }
}

const INSTRUCTIONS: &str = "You help reduce a failing program to the smallest program that \
still fails the same way. You are given the failure's signature and the files of the \
current tree. Propose edits that make the tree smaller while keeping the failure: delete \
files that do not matter, or give a file's whole new, shorter content. Answer with one JSON \
object and nothing else: {\"edits\": [{\"path\": \"relative/path\", \"replace\": \"new \
content\"}, {\"path\": \"other/path\", \"delete\": true}]}. Use only paths of the given \
files.";

impl Backend for HttpBackend {
    fn name(&self) -> &'static str {
        "openai-chat"
    }

    fn propose(&mut self, state: &State<'_>) -> Result<Vec<Vec<ProposedEdit>>, SemanticError> {
        let mut prompt = format!("Failure signature: {}\n", state.signature);
        for (path, content) in &state.files {
            prompt.push_str(&format!("\n=== {path}\n{content}\n"));
        }
        let body = serde_json::json!({
            "model": self.options.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": prompt},
            ],
        });
        let mut request = self
            .agent
            .post(&self.options.endpoint)
            .header("Content-Type", "application/json");
        if let Some(token) = &self.token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        let mut response = request
            .send(body.to_string())
            .map_err(|e| SemanticError::Request(e.to_string()))?;
        let status = response.status().as_u16();
        if status != 200 {
            return Err(SemanticError::Status(status));
        }
        let mut bytes = Vec::new();
        response
            .body_mut()
            .as_reader()
            .take(RESPONSE_BYTES_MAX + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| SemanticError::Request(e.to_string()))?;
        if bytes.len() as u64 > RESPONSE_BYTES_MAX {
            return Err(SemanticError::TooLarge);
        }
        Ok(vec![parse_answer(&bytes)?])
    }
}

/// One item of an answer's `edits`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Item {
    path: String,
    #[serde(default)]
    replace: Option<String>,
    #[serde(default)]
    delete: Option<bool>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    edits: Vec<Item>,
}

/// The edits of a chat completion: `choices[0].message.content` is a JSON object
/// `{"edits": [...]}` (optionally inside one Markdown code fence).
///
/// # Errors
/// [`SemanticError::Malformed`] for anything else.
pub fn parse_answer(bytes: &[u8]) -> Result<Vec<ProposedEdit>, SemanticError> {
    let malformed = |why: &str| SemanticError::Malformed(why.to_string());
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| SemanticError::Malformed(e.to_string()))?;
    let content = value
        .pointer("/choices/0/message/content")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| malformed("no choices[0].message.content string"))?;
    let trimmed = content.trim();
    let inner = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|t| t.strip_suffix("```"))
        .unwrap_or(trimmed);
    let answer: Answer = serde_json::from_str(inner.trim()).map_err(|e| {
        SemanticError::Malformed(format!("the content is not an edits object: {e}"))
    })?;
    if answer.edits.len() > EDITS_MAX {
        return Err(malformed("more edits than one answer may propose"));
    }
    answer
        .edits
        .into_iter()
        .map(|item| match (item.replace, item.delete) {
            (Some(content), None) => Ok(ProposedEdit::Replace {
                path: item.path,
                content,
            }),
            (None, Some(true)) => Ok(ProposedEdit::Delete { path: item.path }),
            _ => Err(malformed(
                "an edit needs exactly one of `replace` or `delete: true`",
            )),
        })
        .collect()
}

/// The range of `old` that differs from `new` once their common prefix and suffix are set
/// aside, and the range of `new` that replaces it; both end on character boundaries of
/// `new`, so the replacement is text.
pub fn changed_middle(old: &[u8], new: &str) -> (Range<usize>, Range<usize>) {
    let bytes = new.as_bytes();
    let mut prefix = old.iter().zip(bytes).take_while(|(a, b)| a == b).count();
    while !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let mut suffix = old[prefix..]
        .iter()
        .rev()
        .zip(bytes[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    while !new.is_char_boundary(bytes.len() - suffix) {
        suffix -= 1;
    }
    (prefix..old.len() - suffix, prefix..bytes.len() - suffix)
}

/// Whether `path` is a plain relative path: no absolute path, no empty, `.` or `..`
/// component, no backslash or control character.
pub fn safe_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.chars().any(char::is_control)
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// The seam as a reducer pass: it asks the backend, validates each proposal against the
/// current tree, and tries the valid ones as candidates; it stops after a call whose
/// proposals commit nothing, or at the call budget.
pub(crate) struct Semantic {
    backend: Box<dyn Backend>,
    max_calls: u64,
    record: Arc<Mutex<SemanticRecord>>,
    signature: String,
}

impl Semantic {
    /// The pass around `backend`, reporting into `record`.
    pub(crate) fn new(
        backend: Box<dyn Backend>,
        max_calls: u64,
        record: Arc<Mutex<SemanticRecord>>,
        signature: String,
    ) -> Semantic {
        Semantic {
            backend,
            max_calls,
            record,
            signature,
        }
    }

    fn note(&self, f: impl FnOnce(&mut SemanticRecord)) {
        if let Ok(mut record) = self.record.lock() {
            f(&mut record);
        }
    }

    /// The candidate of one proposal, or why it is refused.
    fn candidate(
        session: &Session,
        ctx: &PassContext,
        edits: &[ProposedEdit],
    ) -> Result<Option<Candidate>, SemanticError> {
        let mut parts = Vec::new();
        let mut removed = Vec::new();
        let mut inserted = 0;
        for edit in edits {
            match edit {
                ProposedEdit::Delete { path } => {
                    if !safe_path(path)
                        || !session.current.entries.contains_key(path.as_str())
                        || ctx.protected(path)
                    {
                        return Err(SemanticError::Path(path.clone()));
                    }
                    removed.push(RelPath::from(path.as_str()));
                }
                ProposedEdit::Replace { path, content } => {
                    let Some(Node::File { data, digest }) = (safe_path(path)
                        && !ctx.protected(path))
                    .then(|| session.current.entries.get(path.as_str()))
                    .flatten()
                    .map(|e| &e.node) else {
                        return Err(SemanticError::Path(path.clone()));
                    };
                    // Only the part that changes is replaced.
                    let (range, with) = changed_middle(data, content);
                    let with = &content.as_bytes()[with];
                    inserted += with.len();
                    let mutation = if range.is_empty() && with.is_empty() {
                        continue;
                    } else if range.is_empty() {
                        // A pure insertion makes nothing smaller.
                        return Ok(None);
                    } else if with.is_empty() {
                        let mut keep = vec![0..range.start, range.end..data.len()];
                        keep.retain(|r| !r.is_empty());
                        Mutation::Keep {
                            path: RelPath::from(path.as_str()),
                            expect: *digest,
                            keep,
                        }
                    } else {
                        Mutation::Replace {
                            path: RelPath::from(path.as_str()),
                            expect: *digest,
                            keep: None,
                            replace: vec![(range, Arc::from(with))],
                        }
                    };
                    parts.push(mutation);
                }
            }
        }
        if !removed.is_empty() {
            parts.push(Mutation::Remove(removed));
        }
        if parts.is_empty() || inserted > REPLACED_BYTES_MAX {
            return Ok(None);
        }
        Ok(Some(Candidate {
            mutation: Mutation::union(&parts),
            label: format!("{} semantic edits", edits.len()),
        }))
    }
}

impl Pass for Semantic {
    fn name(&self) -> &'static str {
        "semantic"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let mut accepted = 0;
        loop {
            let calls = self.record.lock().map_or(u64::MAX, |r| r.calls);
            if calls >= self.max_calls {
                break;
            }
            let mut files: Vec<(&str, &str)> = session
                .current
                .entries
                .iter()
                .filter_map(|(path, entry)| match &entry.node {
                    Node::File { data, .. } => Some((&**path, std::str::from_utf8(data).ok()?)),
                    _ => None,
                })
                .collect();
            files.sort_by_key(|(p, c)| (c.len(), *p));
            let mut total = 0;
            files.retain(|(_, c)| {
                total += c.len();
                total <= CONTEXT_BYTES_MAX
            });
            let answer = self.backend.propose(&State {
                files,
                signature: &self.signature,
            });
            self.note(|r| r.calls += 1);
            let proposals = match answer {
                Ok(p) => p,
                Err(e) => {
                    self.note(|r| refuse(r, &e));
                    break;
                }
            };
            let mut candidates = Vec::new();
            let mut sizes = Vec::new();
            for edits in &proposals {
                match Semantic::candidate(session, ctx, edits) {
                    Ok(Some(c)) => {
                        sizes.push(edits.len() as u64);
                        self.note(|r| r.proposed_edits += edits.len() as u64);
                        candidates.push(c);
                    }
                    Ok(None) => {}
                    Err(e) => self.note(|r| refuse(r, &e)),
                }
            }
            if candidates.is_empty() {
                break;
            }
            let before = session.commits();
            let Some(committed) = session.try_window(self.name(), candidates)? else {
                break;
            };
            let edits: u64 = committed
                .iter()
                .zip(&sizes)
                .filter(|(c, _)| **c)
                .map(|(_, n)| n)
                .sum();
            self.note(|r| r.accepted_edits += edits);
            let commits = session.commits() - before;
            if commits == 0 {
                break;
            }
            accepted += commits;
        }
        Ok(PassResult {
            accepted,
            unparsable: 0,
        })
    }
}

fn refuse(record: &mut SemanticRecord, e: &SemanticError) {
    if record.refused.len() < 10 {
        record.refused.push(e.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(content: &str) -> Vec<u8> {
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn answers_are_read_strictly() {
        let edits = parse_answer(&chat(
            "```json\n{\"edits\": [{\"path\": \"a.py\", \"replace\": \"x\"}, {\"path\": \"b\", \"delete\": true}]}\n```",
        ))
        .unwrap();
        assert_eq!(
            edits,
            vec![
                ProposedEdit::Replace {
                    path: "a.py".into(),
                    content: "x".into()
                },
                ProposedEdit::Delete { path: "b".into() }
            ]
        );
        for bad in [
            b"not json".to_vec(),
            b"{\"choices\": []}".to_vec(),
            chat("sure! here are the edits"),
            chat("{\"edits\": [{\"path\": \"a\"}]}"),
            chat("{\"edits\": [{\"path\": \"a\", \"replace\": \"x\", \"delete\": true}]}"),
            chat("{\"edits\": [{\"path\": \"a\", \"delete\": false}]}"),
            chat("{\"edits\": [{\"path\": \"a\", \"rename\": \"b\"}]}"),
            chat("{\"edits\": [], \"extra\": 1}"),
        ] {
            assert!(
                matches!(parse_answer(&bad), Err(SemanticError::Malformed(_))),
                "{}",
                String::from_utf8_lossy(&bad)
            );
        }
    }

    #[test]
    fn only_the_changed_middle_is_replaced_and_it_is_whole_characters() {
        let cut = |old: &str, new: &str| {
            let (r, w) = changed_middle(old.as_bytes(), new);
            (old[r].to_string(), new[w].to_string())
        };
        assert_eq!(
            cut("let x = 1234;\n", "let x = 0;\n"),
            ("1234".into(), "0".into())
        );
        assert_eq!(cut("abc", "abc"), (String::new(), String::new()));
        assert_eq!(cut("a = \"é\"", "a = \"è\""), ("é".into(), "è".into()));
        assert_eq!(cut("xéy", "xy"), ("é".into(), String::new()));
        assert_eq!(cut("aaaa", "aa"), ("aa".into(), String::new()));
    }

    #[test]
    fn only_plain_relative_paths_are_safe() {
        for good in ["a.py", "src/x/y.c", ".github/w.yml", "a..b"] {
            assert!(safe_path(good), "{good}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "./a",
            "a/",
            "a\\b",
            "a\nb",
        ] {
            assert!(!safe_path(bad), "{bad:?}");
        }
    }
}
