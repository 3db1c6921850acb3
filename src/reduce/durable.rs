//! Durable sessions: `reduce --session DIR` keeps the reduction's evidence in DIR, and
//! `--resume` continues it after a crash, a kill or Ctrl-C.
//!
//! DIR holds:
//! - `state.json` (schema 3): the source fingerprint (`tree-sha256-v2`), the reduction's
//!   identity (every option that can change what is run or accepted, the environment's
//!   names and a digest of its values, the rule files' digests, and the versioned
//!   strategy), the original start, the status, and the accepted state (fingerprint,
//!   commits, attempts, completed passes). Written to a temporary file and renamed, after
//!   the baseline, after every accepted mutation, after each completed pass and at the end.
//! - `journal.jsonl`: every command result the reduction used, in order, appended and
//!   synced before it is used: the baseline runs (with their output, from which the
//!   oracle is learnt again, so the signature is the saved one), the empty-tree check,
//!   each window of candidates, the candidate families allocated before a window runs,
//!   the final validation, and each holdout slot, marked in flight before its command
//!   starts.
//! - `workspace/current`: the accepted tree at the last completed pass, promoted with a
//!   swap (`workspace/next` then renamed) that resume repairs or rolls back.
//!
//! Resume replays: the reduction runs again from the source, and every command result
//! the journal holds is answered from it instead of being run, so the same candidates are
//! accepted in the same order and the run continues, live, where the journal ends. With a
//! deterministic command the published tree is the one an uninterrupted run publishes,
//! byte for byte. A result that does not match its place in the replay (another candidate
//! tree) stops the resume: the journal is not this reduction's. A holdout slot whose
//! command was started but whose result was never written is a non-pass; the next slot
//! follows, and no slot is sampled twice. Families allocated to a window whose results
//! were never written are spent: the window runs again under new ones.

use crate::container::ContainerRecord;
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub use crate::reduce::error::SessionError;
use crate::reduce::options::ReduceOptions;
use crate::runner::Termination;
use crate::text::hex;
use crate::tree::{Fingerprint, Tree};

/// The schema of `state.json`.
pub const STATE_SCHEMA: u32 = 3;
/// The reduction strategy whose replay a journal records: a journal of another strategy
/// cannot be replayed and is refused.
pub const STRATEGY: &str = "repromin-reduce/1";

const STATE: &str = "state.json";
const JOURNAL: &str = "journal.jsonl";

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SessionError + use<> {
    let path = path.to_path_buf();
    move |source| SessionError::Io {
        action,
        path,
        source,
    }
}

/// One command result, as the reduction used it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Record {
    /// A baseline run.
    Baseline {
        /// How it ended.
        termination: Termination,
        /// Its wall time.
        duration_ms: u64,
        /// Its output, base64.
        output: String,
        /// The run's own directories, hidden by the normaliser.
        roots: Vec<String>,
    },
    /// The empty-tree check.
    Empty {
        /// Whether the empty tree reproduced.
        pass: bool,
    },
    /// Candidate families allocated before a window ran (run-wide confidence).
    Allocate {
        /// Families allocated so far, this window's included.
        families: u64,
    },
    /// A window of candidates, in candidate order.
    Window {
        /// Their answers.
        answers: Vec<SavedAnswer>,
    },
    /// The final validation.
    Final {
        /// How it ended.
        termination: Termination,
        /// Its wall time.
        duration_ms: u64,
        /// Whether the oracle accepted it.
        pass: bool,
        /// Why not.
        reason: String,
    },
    /// A holdout slot whose command is about to start.
    HoldoutStart {
        /// 0-based slot.
        slot: u64,
    },
    /// A holdout slot's result.
    HoldoutEnd {
        /// 0-based slot.
        slot: u64,
        /// Whether the oracle accepted it.
        pass: bool,
        /// The process died inside the slot; counted as a non-pass.
        interrupted: bool,
    },
}

impl Record {
    fn kind(&self) -> &'static str {
        match self {
            Record::Baseline { .. } => "a baseline run",
            Record::Empty { .. } => "the empty-tree check",
            Record::Allocate { .. } => "a family allocation",
            Record::Window { .. } => "a window of candidates",
            Record::Final { .. } => "the final validation",
            Record::HoldoutStart { .. } => "a holdout slot's start",
            Record::HoldoutEnd { .. } => "a holdout slot's result",
        }
    }
}

/// A candidate's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedAnswer {
    /// The candidate tree's fingerprint.
    pub fingerprint: String,
    /// Whether the oracle accepted it.
    pub pass: bool,
    /// How the last sample ended.
    pub termination: Termination,
    /// The samples' summed wall time.
    pub duration_ms: u64,
    /// Samples run.
    pub samples: u64,
    /// Planned samples not run.
    pub saved: u64,
    /// Accepted early.
    pub early_accept: bool,
    /// Rejected early.
    pub early_reject: bool,
}

/// Encodes output for a baseline record.
pub fn encode_output(output: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(output)
}

/// Decodes a baseline record's output.
///
/// # Errors
/// Text that is not base64.
pub fn decode_output(text: &str) -> Result<Vec<u8>, SessionError> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| SessionError::State(format!("a baseline output is not base64: {e}")))
}

/// The longest journal line read back: a baseline record, whose output (at most
/// [`crate::runner::OUTPUT_CAP`] bytes) is base64, plus room for the rest of the record.
const MAX_RECORD_LEN: u64 = (crate::runner::OUTPUT_CAP as u64).div_ceil(3) * 4 + (1 << 20);

/// The journal: what was recorded (replayed first, read one record at a time), then
/// appends.
pub struct Journal {
    path: PathBuf,
    file: File,
    /// The recorded lines still to replay, and the next record read from them.
    reader: std::io::BufReader<File>,
    ahead: Option<Record>,
    /// How many records the journal held when it was opened.
    recorded: usize,
    cursor: usize,
}

/// Reads the next line of `reader` into `line` (cleared first), never more than
/// [`MAX_RECORD_LEN`] bytes of it: the bytes read, 0 at the end.
fn read_line(
    reader: &mut std::io::BufReader<File>,
    line: &mut Vec<u8>,
    number: usize,
    path: &Path,
) -> Result<usize, SessionError> {
    line.clear();
    let n = reader
        .by_ref()
        .take(MAX_RECORD_LEN + 1)
        .read_until(b'\n', line)
        .map_err(io("read", path))?;
    if n as u64 > MAX_RECORD_LEN {
        return Err(SessionError::Damaged {
            line: number,
            reason: format!("the line is longer than {MAX_RECORD_LEN} bytes"),
        });
    }
    Ok(n)
}

impl Journal {
    /// Opens (or creates) `DIR/journal.jsonl`, never through a symlink and only as a
    /// regular file. A last line without its newline (the process died writing it) is
    /// cut off; any other line that does not parse is an error. The records are checked
    /// here one line at a time and read again one at a time as they are replayed, so
    /// memory holds one line whatever the journal's size.
    ///
    /// # Errors
    /// I/O, a symlink or other non-regular file, or a damaged or oversized line.
    fn open(dir: &Path) -> Result<Journal, SessionError> {
        let path = dir.join(JOURNAL);
        let file = crate::safe_fs::open_append(&path, 0o644).map_err(SessionError::Unsafe)?;
        let read = crate::safe_fs::open_regular(&path).map_err(SessionError::Unsafe)?;
        let mut reader = std::io::BufReader::new(read);
        let mut recorded = 0;
        let mut good_len = 0u64;
        let mut line = Vec::new();
        loop {
            let n = read_line(&mut reader, &mut line, recorded + 1, &path)?;
            if n == 0 || line.last() != Some(&b'\n') {
                break; // the end, or a torn line: the process died writing it
            }
            serde_json::from_slice::<Record>(&line).map_err(|e| SessionError::Damaged {
                line: recorded + 1,
                reason: e.to_string(),
            })?;
            recorded += 1;
            good_len += n as u64;
        }
        file.set_len(good_len).map_err(io("truncate", &path))?;
        reader
            .seek(std::io::SeekFrom::Start(0))
            .map_err(io("read", &path))?;
        let mut journal = Journal {
            path,
            file,
            reader,
            ahead: None,
            recorded,
            cursor: 0,
        };
        journal.read_ahead()?;
        Ok(journal)
    }

    /// Reads the record after the cursor, if the journal holds one.
    fn read_ahead(&mut self) -> Result<(), SessionError> {
        self.ahead = None;
        if self.cursor >= self.recorded {
            return Ok(());
        }
        let number = self.cursor + 1;
        let mut line = Vec::new();
        read_line(&mut self.reader, &mut line, number, &self.path)?;
        let record = serde_json::from_slice(&line).map_err(|e| SessionError::Damaged {
            line: number,
            reason: e.to_string(),
        })?;
        self.ahead = Some(record);
        Ok(())
    }

    /// Whether every recorded result has been replayed.
    pub fn replayed_all(&self) -> bool {
        self.cursor >= self.recorded
    }

    /// The next recorded result, if it is of the kind `want` accepts; `Ok(None)` once the
    /// journal is replayed; an error when it holds something else there.
    ///
    /// # Errors
    /// [`SessionError::Diverged`].
    pub fn next(
        &mut self,
        expected: &str,
        want: impl Fn(&Record) -> bool,
    ) -> Result<Option<Record>, SessionError> {
        let Some(record) = &self.ahead else {
            return Ok(None);
        };
        if !want(record) {
            return Err(SessionError::Diverged {
                record: self.cursor + 1,
                expected: expected.to_string(),
                found: record.kind().to_string(),
            });
        }
        let record = self.ahead.take();
        self.cursor += 1;
        self.read_ahead()?;
        Ok(record)
    }

    /// Peeks at the next recorded result.
    pub fn peek(&self) -> Option<&Record> {
        self.ahead.as_ref()
    }

    /// Appends a result and syncs it to disk before it is used.
    ///
    /// # Errors
    /// I/O.
    pub fn append(&mut self, record: &Record) -> Result<(), SessionError> {
        let mut line =
            serde_json::to_vec(record).map_err(|e| SessionError::State(e.to_string()))?;
        line.push(b'\n');
        crate::failpoint::pause("session:journal-append");
        self.file
            .write_all(&line)
            .and_then(|()| self.file.sync_data())
            .map_err(io("append to", &self.path))
    }

    /// The 1-based number of the next record: where a divergence is reported.
    pub fn position(&self) -> usize {
        self.cursor + 1
    }
}

/// The saved state (`state.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    /// [`STATE_SCHEMA`].
    pub schema: u32,
    /// [`STRATEGY`].
    pub strategy: String,
    /// The source's `tree-sha256-v2`.
    pub source_fingerprint: String,
    /// The settings that decide the result, by option.
    pub identity: BTreeMap<String, Value>,
    /// When the reduction started (milliseconds since the epoch): `--max-duration` counts
    /// from here across resumes.
    pub started_unix_ms: u64,
    /// `baseline`, `reducing`, `final`, `holdout`, then `reduced`, `certified`,
    /// `not_certified` or `aborted`.
    pub status: String,
    /// The accepted tree's `tree-sha256-v2`.
    pub accepted_fingerprint: Option<String>,
    /// Commits so far.
    pub accepted_mutations: u64,
    /// Candidates tried so far.
    pub attempts: u64,
    /// Passes completed, in order (a pass may complete more than once: the worklist).
    pub completed_passes: Vec<String>,
    /// How many times the session was resumed.
    pub resumes: u64,
    /// The signature learnt from the baseline (checked again on resume).
    #[serde(default)]
    pub signature: Option<String>,
    /// How each baseline run ended.
    #[serde(default)]
    pub baseline: Vec<String>,
    /// The innermost frames learnt with the signature (checked again on resume), each as
    /// `function (path)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<Vec<String>>,
}

impl State {
    /// Whether the session ended.
    pub fn terminal(&self) -> bool {
        matches!(
            self.status.as_str(),
            "reduced" | "certified" | "not_certified" | "aborted"
        )
    }
}

/// A session directory in use.
pub struct Durable {
    dir: PathBuf,
    /// The state as last written.
    pub state: State,
    /// The journal.
    pub journal: Journal,
}

/// The settings that decide a reduction's result, by the option that sets each.
///
/// # Errors
/// A rule file that cannot be read.
pub fn identity(
    options: &ReduceOptions,
    container: Option<&ContainerRecord>,
) -> Result<BTreeMap<String, Value>, SessionError> {
    let mut id = BTreeMap::new();
    let mut put = |key: &str, value: Value| {
        id.insert(key.to_string(), value);
    };
    // A container runner: its CLI, the image reference, the id it resolved to when the
    // session started (a resume resolves the reference again) and the container limits.
    // The host runner adds nothing, so sessions started before containers existed resume.
    if let Some(c) = container {
        put(
            "--runner",
            json!({
                "runner": "docker",
                "--container-cli": c.cli,
                "--image": c.image,
                "--docker-network": c.network,
                "--docker-pids-limit": c.pids_limit,
                "--docker-tmpfs": c.tmpfs_bytes,
                "--docker-cpus": c.cpus,
                "--docker-memory": c.memory_bytes,
                "--docker-workspace-limit": c.workspace_limit,
            }),
        );
        put("the image id", json!(c.image_id));
    }
    put("the command", json!(options.command.argv));
    // Only when given, so that sessions started before the option existed resume.
    if let Some(bytes) = options.command.memory {
        put("--memory", json!(bytes));
    }
    // A single file as SOURCE; a directory adds nothing, so that sessions started before
    // files were accepted resume.
    if crate::tree::source_kind(&options.source).ok() == Some(crate::tree::SourceKind::File) {
        put("SOURCE", json!("a single file"));
    }
    let mut names: Vec<&str> = options
        .command
        .env
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    names.sort_unstable();
    let mut env = options.command.env.clone();
    env.sort();
    let mut digest = Sha256::new();
    for (k, v) in &env {
        digest.update(k.as_bytes());
        digest.update([0]);
        digest.update(v.as_bytes());
        digest.update([0]);
    }
    put(
        "--env",
        json!({"names": names, "sha256": hex(&digest.finalize())}),
    );
    let oracle = &options.oracle;
    put("--expect", json!(oracle.expect));
    put("--signature", json!(oracle.signature));
    put("--exit-code", json!(oracle.exit_code));
    put("--process-failure", json!(oracle.process_failure));
    put("--any-failure", json!(oracle.any_failure));
    if oracle.no_frames {
        put("--no-frames", json!(true));
    }
    let rules = &options.rules;
    put("--ignore", json!(rules.names));
    put("--ignore-path", json!(rules.paths));
    let mut files = Vec::new();
    for file in &rules.gitignore_files {
        let bytes = fs::read(file).map_err(io("read", file))?;
        files.push(
            json!({"path": file.display().to_string(), "sha256": hex(&Sha256::digest(&bytes))}),
        );
    }
    put("--gitignore", json!(files));
    put("--gitignore-recursive", json!(rules.gitignore_recursive));
    put("--keep", json!(rules.keep));
    put(
        "--timeout",
        json!(
            options
                .timeout
                .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX))
        ),
    );
    put("--baseline-runs", json!(options.baseline_runs));
    put("--allow-trivial", json!(options.allow_trivial));
    put("--max-attempts", json!(options.max_attempts));
    put(
        "--max-duration",
        json!(options.max_duration.map(|d| d.as_secs_f64())),
    );
    put("--passes", json!(options.passes));
    // Only when the run chooses its level, so that sessions started before it could resume.
    if options.level == crate::reduce::options::LevelChoice::Auto {
        put("--level", json!("chosen by the run"));
    }
    put("--minimiser", json!(options.minimiser));
    put("--syntax-guard", json!(options.syntax_guard));
    put("--min-baseline-passes", json!(options.min_baseline_passes));
    put("--min-baseline-rate", json!(options.min_baseline_rate));
    let s = options.sampling;
    put("--candidate-runs", json!(s.runs));
    put("--min-candidate-passes", json!(s.min_passes));
    put("--min-candidate-rate", json!(s.rate));
    put("--confidence", json!(s.confidence));
    put("--run-confidence", json!(s.run_confidence));
    put("--holdout-runs", json!(options.holdout_runs));
    put("--min-holdout-rate", json!(options.min_holdout_rate));
    put("--holdout-confidence", json!(options.holdout_confidence));
    put("--reserve-runs", json!(options.reserve_runs));
    Ok(id)
}

/// The first setting whose value differs between a recorded identity and the current one.
fn first_difference(
    was: &BTreeMap<String, Value>,
    now: &BTreeMap<String, Value>,
) -> Option<SessionError> {
    let fields = was
        .keys()
        .chain(now.keys().filter(|k| !was.contains_key(*k)));
    for field in fields {
        let (a, b) = (was.get(field), now.get(field));
        if a != b {
            let show =
                |v: Option<&Value>| v.map_or_else(|| "not recorded".to_string(), Value::to_string);
            return Some(SessionError::Changed {
                field: field.clone(),
                was: show(a),
                now: show(b),
            });
        }
    }
    None
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Durable {
    /// Starts a new session in `dir` (created; it must be new or empty).
    ///
    /// # Errors
    /// A directory that holds a session or anything else, or I/O.
    pub fn create(
        dir: &Path,
        options: &ReduceOptions,
        source: &Tree,
        container: Option<&ContainerRecord>,
    ) -> Result<Durable, SessionError> {
        if dir.join(STATE).exists() {
            return Err(SessionError::Exists(dir.to_path_buf()));
        }
        match fs::read_dir(dir) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(SessionError::NotEmpty(dir.to_path_buf()));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                fs::create_dir_all(dir).map_err(io("create", dir))?;
            }
            Err(e) => return Err(io("read", dir)(e)),
        }
        let state = State {
            schema: STATE_SCHEMA,
            strategy: STRATEGY.to_string(),
            source_fingerprint: source.fingerprint().to_string(),
            identity: identity(options, container)?,
            started_unix_ms: now_ms(),
            status: "baseline".to_string(),
            accepted_fingerprint: None,
            accepted_mutations: 0,
            attempts: 0,
            completed_passes: Vec::new(),
            resumes: 0,
            signature: None,
            frames: None,
            baseline: Vec::new(),
        };
        write_state(dir, &state)?;
        let journal = Journal::open(dir)?;
        Ok(Durable {
            dir: dir.to_path_buf(),
            state,
            journal,
        })
    }

    /// Opens the session in `dir` to resume it, after checking that the options and the
    /// source are the ones it was started with (each changed option is named).
    ///
    /// # Errors
    /// No session, another schema or strategy, a changed option or source, a damaged
    /// journal, or I/O.
    pub fn resume(
        dir: &Path,
        options: &ReduceOptions,
        source: &Tree,
        container: Option<&ContainerRecord>,
    ) -> Result<Durable, SessionError> {
        let path = dir.join(STATE);
        let text = match fs::read(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Killed while its first state was written: nothing ran yet, so the
                // session starts now.
                if never_started(dir) {
                    remove(&dir.join("state.json.tmp"))?;
                    remove(&dir.join(JOURNAL))?;
                    return Durable::create(dir, options, source, container);
                }
                return Err(SessionError::Missing(dir.to_path_buf()));
            }
            Err(e) => return Err(io("read", &path)(e)),
        };
        let raw: Value =
            serde_json::from_slice(&text).map_err(|e| SessionError::State(e.to_string()))?;
        let schema = raw.get("schema").and_then(Value::as_u64);
        if schema != Some(u64::from(STATE_SCHEMA)) {
            return Err(SessionError::State(format!(
                "schema {} (this repromin reads schema {STATE_SCHEMA})",
                schema.map_or_else(|| "missing".to_string(), |s| s.to_string())
            )));
        }
        let mut state: State =
            serde_json::from_value(raw).map_err(|e| SessionError::State(e.to_string()))?;
        if state.strategy != STRATEGY {
            return Err(SessionError::State(format!(
                "strategy `{}` (this repromin replays `{STRATEGY}`)",
                state.strategy
            )));
        }
        if let Some(changed) = first_difference(&state.identity, &identity(options, container)?) {
            return Err(changed);
        }
        let fingerprint = source.fingerprint().to_string();
        if fingerprint != state.source_fingerprint {
            return Err(SessionError::SourceChanged {
                was: state.source_fingerprint.clone(),
                now: fingerprint,
            });
        }
        repair_swap(dir)?;
        let journal = Journal::open(dir)?;
        state.resumes += 1;
        let durable = Durable {
            dir: dir.to_path_buf(),
            state,
            journal,
        };
        durable.write_state()?;
        Ok(durable)
    }

    /// Records the baseline's evidence; on resume, checks that the replayed baseline gives
    /// the signature the session recorded.
    ///
    /// # Errors
    /// Another signature than the recorded one, or I/O.
    pub fn baseline_learned(
        &mut self,
        signature: Option<&str>,
        frames: Option<Vec<String>>,
        baseline: Vec<String>,
    ) -> Result<(), SessionError> {
        if !self.state.baseline.is_empty() {
            if self.state.signature.as_deref() != signature
                || self.state.frames != frames
                || self.state.baseline != baseline
            {
                return Err(SessionError::Diverged {
                    record: 1,
                    expected: format!(
                        "the recorded baseline ({}), signature {:?} and frames {:?}",
                        self.state.baseline.join(", "),
                        self.state.signature,
                        self.state.frames
                    ),
                    found: format!(
                        "({}), signature {signature:?} and frames {frames:?}",
                        baseline.join(", ")
                    ),
                });
            }
            return Ok(());
        }
        self.state.signature = signature.map(str::to_string);
        self.state.frames = frames;
        self.state.baseline = baseline;
        self.write_state()
    }

    /// What is left of `max_duration`, counted from the session's original start.
    pub fn remaining(&self, max_duration: Duration) -> Duration {
        let spent = now_ms().saturating_sub(self.state.started_unix_ms);
        max_duration.saturating_sub(Duration::from_millis(spent))
    }

    /// Writes `state.json` through a temporary file and a rename.
    ///
    /// # Errors
    /// I/O.
    pub fn write_state(&self) -> Result<(), SessionError> {
        write_state(&self.dir, &self.state)
    }

    /// Records the accepted state and writes it.
    ///
    /// # Errors
    /// I/O.
    pub fn checkpoint(
        &mut self,
        status: &str,
        accepted: &Fingerprint,
        commits: u64,
        attempts: u64,
    ) -> Result<(), SessionError> {
        self.state.status = status.to_string();
        self.state.accepted_fingerprint = Some(accepted.to_string());
        self.state.accepted_mutations = commits;
        self.state.attempts = attempts;
        self.write_state()
    }

    /// Promotes `tree` to `workspace/current` with a swap: written whole to
    /// `workspace/next`, then the old one moved aside, the new one renamed in, the old
    /// one removed.
    ///
    /// # Errors
    /// I/O.
    pub fn promote(&self, tree: &Tree) -> Result<(), SessionError> {
        let ws = self.dir.join("workspace");
        fs::create_dir_all(&ws).map_err(io("create", &ws))?;
        let next = ws.join("next");
        let current = ws.join("current");
        let old = ws.join("old");
        remove(&next)?;
        crate::workspace::write_fresh(tree, &next)?;
        crate::failpoint::pause("session:swap-written");
        if current.exists() {
            fs::rename(&current, &old).map_err(io("rename", &current))?;
        }
        crate::failpoint::pause("session:swap-moved-aside");
        fs::rename(&next, &current).map_err(io("rename", &next))?;
        remove(&old)
    }

    /// The session directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Writes `DIR/state.json` through a temporary file and a rename.
fn write_state(dir: &Path, state: &State) -> Result<(), SessionError> {
    let path = dir.join(STATE);
    let tmp = dir.join("state.json.tmp");
    let mut text =
        serde_json::to_vec_pretty(state).map_err(|e| SessionError::State(e.to_string()))?;
    text.push(b'\n');
    let mut file = File::create(&tmp).map_err(io("write", &tmp))?;
    file.write_all(&text)
        .and_then(|()| file.sync_all())
        .map_err(io("write", &tmp))?;
    crate::failpoint::pause("session:state-rename");
    fs::rename(&tmp, &path).map_err(io("rename", &tmp))?;
    Ok(())
}

/// Whether `dir` exists and holds only what a session's start leaves when killed before
/// its first state was written: nothing, a temporary state file, an empty journal.
fn never_started(dir: &Path) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().all(|entry| {
        let name = entry.file_name();
        name == "state.json.tmp"
            || (name == JOURNAL && entry.metadata().is_ok_and(|m| m.len() == 0))
    })
}

fn remove(path: &Path) -> Result<(), SessionError> {
    Ok(crate::workspace::remove_any(path)?)
}

/// Repairs a promotion cut short: with `current` gone and `old` there, the swap is rolled
/// back (`old` is the last complete tree); a `next` left over is removed, and so is an
/// `old` whose successor is in place.
fn repair_swap(dir: &Path) -> Result<(), SessionError> {
    let ws = dir.join("workspace");
    let (current, old, next) = (ws.join("current"), ws.join("old"), ws.join("next"));
    if !current.exists() && old.exists() {
        fs::rename(&old, &current).map_err(io("rename", &old))?;
    }
    remove(&next)?;
    remove(&old)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_is_cut_and_a_damaged_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = Journal::open(dir.path()).unwrap();
        journal.append(&Record::Empty { pass: false }).unwrap();
        journal.append(&Record::Allocate { families: 3 }).unwrap();
        drop(journal);
        let path = dir.path().join(JOURNAL);
        let mut text = fs::read(&path).unwrap();
        text.extend_from_slice(b"{\"kind\":\"empty\",\"pa");
        fs::write(&path, &text).unwrap();
        let mut journal = Journal::open(dir.path()).unwrap();
        assert_eq!(journal.recorded, 2);
        assert_eq!(
            journal
                .next("the empty-tree check", |r| matches!(
                    r,
                    Record::Empty { .. }
                ))
                .unwrap(),
            Some(Record::Empty { pass: false })
        );
        let err = journal
            .next("a window of candidates", |r| {
                matches!(r, Record::Window { .. })
            })
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the session's journal does not match this reduction at record 2: expected a window of candidates, found a family allocation"
        );
        journal.append(&Record::Empty { pass: true }).unwrap();
        drop(journal);
        // The torn line is gone, the new record follows the good ones.
        let journal = Journal::open(dir.path()).unwrap();
        assert_eq!(journal.recorded, 3);
        fs::write(&path, b"{\"kind\":\"empty\",\"pass\":true}\nnot json\n{}\n").unwrap();
        let err = Journal::open(dir.path()).err().unwrap();
        assert!(
            err.to_string()
                .starts_with("the session's journal is damaged at line 2"),
            "{err}"
        );
    }

    /// Every setting that decides the result is named when it changes.
    #[test]
    fn each_setting_of_the_identity_is_named_when_it_changes() {
        use crate::reduce::options::{Minimiser, PassName};
        let dir = tempfile::tempdir().unwrap();
        let rules = dir.path().join("rules");
        fs::write(&rules, "*.o\n").unwrap();
        let mut base = ReduceOptions::new("src".into(), "out".into(), vec!["sh".into()]);
        base.rules.gitignore_files.push(rules.clone());
        let was = identity(&base, None).unwrap();
        type Change = Box<dyn Fn(&mut ReduceOptions)>;
        let changes: Vec<(&str, Change)> = vec![
            (
                "the command",
                Box::new(|o| o.command.argv.push("-x".into())),
            ),
            (
                "--env",
                Box::new(|o| o.command.env.push(("A".into(), "1".into()))),
            ),
            ("--expect", Box::new(|o| o.oracle.expect = Some("x".into()))),
            (
                "--signature",
                Box::new(|o| o.oracle.signature = Some("x".into())),
            ),
            ("--exit-code", Box::new(|o| o.oracle.exit_code = Some(3))),
            (
                "--process-failure",
                Box::new(|o| o.oracle.process_failure = true),
            ),
            ("--any-failure", Box::new(|o| o.oracle.any_failure = true)),
            ("--ignore", Box::new(|o| o.rules.names.push("x".into()))),
            (
                "--ignore-path",
                Box::new(|o| o.rules.paths.push("x".into())),
            ),
            ("--gitignore", Box::new(|o| o.rules.gitignore_files.clear())),
            (
                "--gitignore-recursive",
                Box::new(|o| o.rules.gitignore_recursive = true),
            ),
            ("--keep", Box::new(|o| o.rules.keep.push("x".into()))),
            (
                "--timeout",
                Box::new(|o| o.timeout = Some(Duration::from_secs(5))),
            ),
            ("--baseline-runs", Box::new(|o| o.baseline_runs = 3)),
            ("--allow-trivial", Box::new(|o| o.allow_trivial = true)),
            ("--max-attempts", Box::new(|o| o.max_attempts = Some(9))),
            (
                "--max-duration",
                Box::new(|o| o.max_duration = Some(Duration::from_secs(9))),
            ),
            ("--passes", Box::new(|o| o.passes = vec![PassName::Lines])),
            (
                "--minimiser",
                Box::new(|o| o.minimiser = Minimiser::Halving),
            ),
            (
                "--syntax-guard",
                Box::new(|o| o.syntax_guard = !o.syntax_guard),
            ),
            (
                "--min-baseline-passes",
                Box::new(|o| o.min_baseline_passes = Some(1)),
            ),
            (
                "--min-baseline-rate",
                Box::new(|o| o.min_baseline_rate = Some(0.5)),
            ),
            ("--candidate-runs", Box::new(|o| o.sampling.runs = 3)),
            (
                "--min-candidate-passes",
                Box::new(|o| o.sampling.min_passes = 2),
            ),
            (
                "--min-candidate-rate",
                Box::new(|o| o.sampling.rate = Some(0.5)),
            ),
            ("--confidence", Box::new(|o| o.sampling.confidence = 0.9)),
            (
                "--run-confidence",
                Box::new(|o| o.sampling.run_confidence = Some(0.9)),
            ),
            ("--holdout-runs", Box::new(|o| o.holdout_runs = 30)),
            ("--min-holdout-rate", Box::new(|o| o.min_holdout_rate = 0.5)),
            (
                "--holdout-confidence",
                Box::new(|o| o.holdout_confidence = 0.5),
            ),
            ("--reserve-runs", Box::new(|o| o.reserve_runs = 2)),
        ];
        assert_eq!(changes.len(), was.len(), "every identity field is tried");
        for (field, change) in changes {
            let mut options = base.clone();
            change(&mut options);
            let err = first_difference(&was, &identity(&options, None).unwrap()).unwrap();
            assert!(
                matches!(&err, SessionError::Changed { field: f, .. } if f == field),
                "{field}: {err}"
            );
        }
        // The rule file's content, not only its path.
        fs::write(&rules, "*.a\n").unwrap();
        let err = first_difference(&was, &identity(&base, None).unwrap()).unwrap();
        assert!(err.to_string().contains("--gitignore was"), "{err}");
        assert!(first_difference(&was, &was).is_none());
        // Jobs and where things go are not part of it.
        let mut other = base.clone();
        other.jobs = 7;
        other.output = "elsewhere".into();
        other.session = Some("s".into());
        fs::write(&rules, "*.o\n").unwrap();
        assert!(first_difference(&was, &identity(&other, None).unwrap()).is_none());
        // The container runner: a host session resumed in a container names the runner; an
        // image reference that now resolves to another id names the id.
        let record = crate::container::ContainerRecord {
            cli: crate::container::ContainerCli::Podman,
            image: "localhost/app:1".into(),
            image_id: format!("sha256:{}", "a".repeat(64)),
            network: false,
            pids_limit: 512,
            tmpfs_bytes: 1 << 28,
            cpus: None,
            memory_bytes: None,
            workspace_limit: None,
        };
        let err = first_difference(&was, &identity(&other, Some(&record)).unwrap()).unwrap();
        assert!(err.to_string().contains("--runner"), "{err}");
        let in_container = identity(&other, Some(&record)).unwrap();
        let drifted = crate::container::ContainerRecord {
            image_id: format!("sha256:{}", "b".repeat(64)),
            ..record
        };
        let err =
            first_difference(&in_container, &identity(&other, Some(&drifted)).unwrap()).unwrap();
        assert!(
            matches!(&err, SessionError::Changed { field, .. } if field == "the image id"),
            "{err}"
        );
    }

    #[test]
    fn a_directory_left_before_the_first_state_never_started() {
        let dir = tempfile::tempdir().unwrap();
        assert!(never_started(dir.path()));
        fs::write(dir.path().join("state.json.tmp"), "{").unwrap();
        fs::write(dir.path().join(JOURNAL), "").unwrap();
        assert!(never_started(dir.path()));
        fs::write(dir.path().join(JOURNAL), "{}\n").unwrap();
        assert!(!never_started(dir.path()));
        assert!(!never_started(&dir.path().join("absent")));
    }

    #[test]
    fn a_swap_cut_short_is_rolled_back_or_finished() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("workspace");
        fs::create_dir_all(ws.join("old")).unwrap();
        fs::write(ws.join("old/a"), "old").unwrap();
        fs::create_dir_all(ws.join("next")).unwrap();
        repair_swap(dir.path()).unwrap();
        assert_eq!(fs::read_to_string(ws.join("current/a")).unwrap(), "old");
        assert!(!ws.join("next").exists() && !ws.join("old").exists());
        fs::create_dir_all(ws.join("old")).unwrap();
        repair_swap(dir.path()).unwrap();
        assert!(ws.join("current/a").exists() && !ws.join("old").exists());
    }
}
