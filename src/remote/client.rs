//! One remote run: the input root and the `Command` and `Action` stored, the action
//! executed, its operation followed until it is done, and the result turned into a
//! [`RunOutcome`].

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use bazel_remote_apis::google::longrunning::operations_client::OperationsClient;
use bazel_remote_apis::google::longrunning::{CancelOperationRequest, Operation, operation};
use bazel_remote_apis::google::protobuf as pb;
use prost::Message as _;
use re::execution_client::ExecutionClient;

use super::cas::Cas;
use super::conn::{Conn, DEADLINE_EXCEEDED, RemoteConfig};
use super::error::RemoteError;
use super::merkle;
use crate::runner::{CommandSpec, OUTPUT_CAP, RunOutcome, Termination};

/// How often an interrupt is looked for while a run is under way.
const INTERRUPT_CHECK: Duration = Duration::from_millis(50);

/// How often in a row a stream that ended before its operation was done, without a word
/// of it, is followed again. A stream that brought news resets the count: some servers end
/// a stream after a while on purpose.
const WAITS: usize = 2;

/// Whether a run may be answered from, and stored in, the action cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachePolicy {
    /// A cached result is taken; a new result is cached.
    Use,
    /// The cache is neither looked up nor written (`skip_cache_lookup`, `do_not_cache`).
    Skip,
}

/// The result of one remote run.
#[derive(Clone, Debug)]
pub struct RemoteRun {
    /// How the command ended, its output (stdout then stderr) and its duration.
    pub outcome: RunOutcome,
    /// Whether the action cache answered.
    pub cached: bool,
}

/// A client of a remote execution cluster. Clones share one connection.
#[derive(Clone)]
pub struct Remote {
    conn: Arc<Conn>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("instance", &self.conn.instance)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// Connects and checks GetCapabilities (SHA-256 digests, execution enabled).
    ///
    /// # Errors
    /// A bad URL, no connection, a refused call, or a cluster lacking what is needed.
    pub fn connect(config: &RemoteConfig) -> Result<Remote, RemoteError> {
        Ok(Remote {
            conn: Arc::new(Conn::open(config)?),
        })
    }

    /// Runs `command` with `tree` as its input root and working directory, killed after
    /// `timeout`. When `interrupt` is set meanwhile, the operation is cancelled and the
    /// outcome is [`Termination::Interrupted`]; when it is not done within `timeout` plus
    /// the configured [`RemoteConfig::wait`], it is cancelled and the run is an error.
    ///
    /// # Errors
    /// The cluster cannot be reached, a blob cannot be stored or read, the operation is
    /// lost or not done in time, or it ends with a status other than OK or
    /// DEADLINE_EXCEEDED (a run that timed out is a
    /// [`Termination::TimedOut`](crate::runner::Termination::TimedOut) outcome).
    pub fn run(
        &self,
        tree: &crate::tree::Tree,
        command: &crate::runner::CommandSpec,
        timeout: Duration,
        cache: CachePolicy,
        interrupt: &AtomicBool,
    ) -> Result<RemoteRun, RemoteError> {
        run(&self.conn, tree, command, timeout, cache, interrupt)
    }
}

/// The `Command` of `spec`: its argv, its environment sorted by name, the input root as
/// working directory.
fn command(spec: &CommandSpec) -> re::Command {
    let mut env: Vec<(String, String)> = spec.env.clone();
    env.sort_by(|a, b| a.0.cmp(&b.0));
    // A later override of the same name wins, as it does locally.
    env.reverse();
    env.dedup_by(|a, b| a.0 == b.0);
    env.reverse();
    re::Command {
        arguments: spec.argv.clone(),
        environment_variables: env
            .into_iter()
            .map(|(name, value)| re::command::EnvironmentVariable { name, value })
            .collect(),
        working_directory: String::new(),
        ..Default::default()
    }
}

/// A [`Duration`] as the protobuf message.
pub(super) fn duration(d: Duration) -> pb::Duration {
    pb::Duration {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

fn between(start: Option<&pb::Timestamp>, end: Option<&pb::Timestamp>) -> Option<Duration> {
    let (start, end) = (start?, end?);
    let nanos = |t: &pb::Timestamp| i128::from(t.seconds) * 1_000_000_000 + i128::from(t.nanos);
    let span = nanos(end) - nanos(start);
    (span >= 0).then(|| Duration::from_nanos(u64::try_from(span).unwrap_or(u64::MAX)))
}

/// How a run ended before its result came.
enum Cut {
    /// `interrupt` was set.
    Interrupted,
    /// The operation was not done within the action's timeout plus the wait.
    TooLong,
}

fn run(
    conn: &Conn,
    tree: &crate::tree::Tree,
    spec: &CommandSpec,
    timeout: Duration,
    cache: CachePolicy,
    interrupt: &AtomicBool,
) -> Result<RemoteRun, RemoteError> {
    let start = Instant::now();
    let cas = Cas {
        channel: conn.channel.clone(),
        instance: &conn.instance,
        batch_limit: conn.batch_limit,
    };
    let root = merkle::input_root(tree);
    let (command_digest, command_bytes) = merkle::encoded(&command(spec));
    let skip = cache == CachePolicy::Skip;
    let action = re::Action {
        command_digest: Some(command_digest.clone()),
        input_root_digest: Some(root.root.clone()),
        timeout: Some(duration(timeout)),
        do_not_cache: skip,
        ..Default::default()
    };
    let (action_digest, action_bytes) = merkle::encoded(&action);
    let mut blobs: Vec<(re::Digest, &[u8])> = root
        .blobs
        .iter()
        .map(|(d, b)| (d.clone(), &b[..]))
        .collect();
    blobs.push((command_digest, &command_bytes));
    blobs.push((action_digest.clone(), &action_bytes));
    // The operation's name once the cluster gave it, for a cancel.
    let name = RefCell::new(String::new());
    let limit = timeout.saturating_add(conn.wait);
    let response = conn.runtime.block_on(async {
        let work = async {
            cas.upload(&blobs).await?;
            execute(conn, action_digest, skip, &name).await
        };
        let cut = async {
            let deadline = Instant::now() + limit;
            loop {
                if interrupt.load(Ordering::Relaxed) {
                    return Cut::Interrupted;
                }
                if Instant::now() >= deadline {
                    return Cut::TooLong;
                }
                tokio::time::sleep(INTERRUPT_CHECK).await;
            }
        };
        tokio::select! {
            done = work => Ok(done),
            cut = cut => Err(cut),
        }
    });
    let response = match response {
        Ok(done) => done?,
        Err(cut) => {
            let name = name.take();
            if !name.is_empty() {
                // Best effort: the cluster may already be done with it.
                let _ = conn.runtime.block_on(cancel(conn, &name));
            }
            return match cut {
                Cut::Interrupted => Ok(RemoteRun {
                    outcome: RunOutcome {
                        termination: Termination::Interrupted,
                        output: Vec::new(),
                        duration: start.elapsed(),
                    },
                    cached: false,
                }),
                Cut::TooLong => Err(RemoteError::NotDone {
                    name,
                    waited: start.elapsed(),
                }),
            };
        }
    };
    let status = response.status.clone().unwrap_or_default();
    if status.code != 0 && status.code != DEADLINE_EXCEEDED {
        return Err(RemoteError::Failed {
            code: status.code,
            message: status.message,
        });
    }
    let result = response.result.unwrap_or_default();
    let (output, overflow) = conn.runtime.block_on(output(&cas, &result))?;
    let termination = if status.code == DEADLINE_EXCEEDED {
        Termination::TimedOut
    } else if overflow {
        Termination::OutputOverflow
    } else {
        Termination::Exited(result.exit_code)
    };
    let meta = result.execution_metadata.as_ref();
    let duration = meta
        .and_then(|m| {
            between(
                m.execution_start_timestamp.as_ref(),
                m.execution_completed_timestamp.as_ref(),
            )
            .or_else(|| {
                between(
                    m.worker_start_timestamp.as_ref(),
                    m.worker_completed_timestamp.as_ref(),
                )
            })
        })
        .unwrap_or_else(|| start.elapsed());
    Ok(RemoteRun {
        outcome: RunOutcome {
            termination,
            output,
            duration,
        },
        cached: response.cached_result,
    })
}

/// Stdout then stderr, at most [`OUTPUT_CAP`] bytes; whether there was more.
async fn output(cas: &Cas<'_>, result: &re::ActionResult) -> Result<(Vec<u8>, bool), RemoteError> {
    let mut output = Vec::new();
    let mut overflow = false;
    for (raw, digest) in [
        (&result.stdout_raw, &result.stdout_digest),
        (&result.stderr_raw, &result.stderr_digest),
    ] {
        let room = OUTPUT_CAP - output.len();
        let part = match digest {
            Some(digest) if raw.is_empty() && digest.size_bytes > 0 => {
                cas.read_one(digest, room.saturating_add(1)).await?
            }
            _ => raw.clone(),
        };
        if part.len() > room {
            output.extend_from_slice(&part[..room]);
            overflow = true;
            break;
        }
        output.extend_from_slice(&part);
    }
    Ok((output, overflow))
}

/// Asks the cluster to cancel the operation `name`, waiting at most a few seconds.
async fn cancel(conn: &Conn, name: &str) -> Result<(), tonic::Status> {
    let mut client = OperationsClient::new(conn.channel.clone());
    let mut request = tonic::Request::new(CancelOperationRequest {
        name: name.to_string(),
    });
    request.set_timeout(Duration::from_secs(5));
    client.cancel_operation(request).await.map(|_| ())
}

/// Executes the action and follows its operation until it is done; `named` gets the
/// operation's name as soon as it is known.
async fn execute(
    conn: &Conn,
    action_digest: re::Digest,
    skip_cache_lookup: bool,
    named: &RefCell<String>,
) -> Result<re::ExecuteResponse, RemoteError> {
    let mut client =
        ExecutionClient::new(conn.channel.clone()).max_decoding_message_size(usize::MAX);
    let stream = client
        .execute(re::ExecuteRequest {
            instance_name: conn.instance.clone(),
            skip_cache_lookup,
            action_digest: Some(action_digest),
            ..Default::default()
        })
        .await
        .map_err(|source| RemoteError::Rpc {
            call: "Execute",
            source,
        })?
        .into_inner();
    let (mut done, _) = follow(stream, "Execute", named).await?;
    let mut waits = 0;
    while done.is_none() {
        let name = named.borrow().clone();
        if name.is_empty() || waits == WAITS {
            return Err(RemoteError::Lost(name));
        }
        waits += 1;
        let stream = client
            .wait_execution(re::WaitExecutionRequest { name })
            .await
            .map_err(|source| RemoteError::Rpc {
                call: "WaitExecution",
                source,
            })?
            .into_inner();
        let news;
        (done, news) = follow(stream, "WaitExecution", named).await?;
        if news {
            waits = 0;
        }
    }
    let operation = done.unwrap_or_default();
    match operation.result {
        Some(operation::Result::Response(any)) => re::ExecuteResponse::decode(&any.value[..])
            .map_err(|source| RemoteError::Decode {
                what: "ExecuteResponse",
                source,
            }),
        Some(operation::Result::Error(status)) => Err(RemoteError::Failed {
            code: status.code,
            message: status.message,
        }),
        None => Err(RemoteError::Protocol(format!(
            "the operation `{}` done without a result",
            operation.name
        ))),
    }
}

/// Reads operations until one is done or the stream ends: the done one, and whether the
/// stream brought any. `named` holds the operation's name once one came.
async fn follow(
    mut stream: tonic::Streaming<Operation>,
    call: &'static str,
    named: &RefCell<String>,
) -> Result<(Option<Operation>, bool), RemoteError> {
    let mut news = false;
    loop {
        match stream.message().await {
            Ok(Some(operation)) => {
                news = true;
                if !operation.name.is_empty() && *named.borrow() != operation.name {
                    named.replace(operation.name.clone());
                }
                if operation.done {
                    return Ok((Some(operation), news));
                }
            }
            Ok(None) => return Ok((None, news)),
            // A stream cut off after the operation was named is followed again.
            Err(_) if !named.borrow().is_empty() => return Ok((None, news)),
            Err(source) => return Err(RemoteError::Rpc { call, source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_sorts_its_environment_and_runs_in_the_input_root() {
        let spec = CommandSpec {
            argv: vec!["sh".into(), "-c".into(), "true".into()],
            env: vec![
                ("B".into(), "1".into()),
                ("A".into(), "2".into()),
                ("B".into(), "3".into()),
            ],
            memory: None,
        };
        let command = command(&spec);
        assert_eq!(command.arguments, spec.argv);
        let env: Vec<(&str, &str)> = command
            .environment_variables
            .iter()
            .map(|v| (v.name.as_str(), v.value.as_str()))
            .collect();
        assert_eq!(env, [("A", "2"), ("B", "3")]);
        assert_eq!(command.working_directory, "");
    }
}
