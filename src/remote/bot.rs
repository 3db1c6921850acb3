//! `repromin worker`: a bot of the Remote Workers API (Bots service, v1test2), one lease at
//! a time.
//!
//! The bot opens a session (its id: the host name, the process id and a counter), then
//! calls UpdateBotSession in a loop: each call echoes the leases it holds with their state
//! and waits a few seconds for new work. A new lease is marked ACTIVE; its action is laid
//! out in a fresh scratch directory and run with [`crate::runner::run`] (its own process
//! group, the action's timeout, the output cap, the worker's environment plus the
//! command's variables) while the bot keeps calling in; a lease the server drops or
//! cancels meanwhile has its command ended. The output is stored and the lease completed
//! with an `ActionResult` (exit code, stdout, execution metadata) and status OK, or
//! DEADLINE_EXCEEDED for a run that timed out; an action that cannot be laid out or
//! started completes with FAILED_PRECONDITION and the reason. The scratch directory goes
//! after each action. `stop` ends the loop (a running command is ended, its lease left to
//! the server to hand out again).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use googleapis_tonic_google_devtools_remoteworkers_v1test2::google::devtools::remoteworkers::v1test2 as rw;
use googleapis_tonic_google_devtools_remoteworkers_v1test2::google::rpc::Status;
use prost::Message as _;
use rw::bots_client::BotsClient;

use super::bot_run::{self, timestamp};
use super::cas::Cas;
use super::conn::{
    Conn, DEADLINE_EXCEEDED, FAILED_PRECONDITION, RESOURCE_EXHAUSTED, RemoteConfig, type_url,
};
use super::error::RemoteError;
use super::merkle;
use crate::runner::Termination;

/// How long one UpdateBotSession may wait for work (the server answers a little sooner).
const POLL: Duration = Duration::from_secs(5);

/// How often a bot with a running command calls in.
const HEARTBEAT: Duration = Duration::from_secs(1);

/// How often `stop` is looked at while waiting.
const STOP_CHECK: Duration = Duration::from_millis(50);

/// Failed calls in a row after which the bot gives up.
const MAX_FAILURES: usize = 30;

/// How the bot works.
#[derive(Clone, Debug)]
pub struct BotOptions {
    /// The timeout of an action that gives none.
    pub default_timeout: Duration,
}

impl Default for BotOptions {
    fn default() -> BotOptions {
        BotOptions {
            default_timeout: Duration::from_secs(3600),
        }
    }
}

/// A bot id unique on this host: host name, process id and how many bots this process
/// started before.
fn bot_id() -> String {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let host = if host.is_empty() {
        "localhost".to_string()
    } else {
        host
    };
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    format!("repromin-{host}-{}-{n}", std::process::id())
}

/// Waits until `stop` is set.
async fn stopped(stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(STOP_CHECK).await;
    }
}

/// `work`, or `None` when `stop` is set first.
async fn or_stop<F: Future>(stop: &AtomicBool, work: F) -> Option<F::Output> {
    tokio::select! {
        out = work => Some(out),
        () = stopped(stop) => None,
    }
}

struct Bot<'a> {
    conn: Conn,
    bots: BotsClient<super::conn::Channel>,
    session: rw::BotSession,
    stop: &'a AtomicBool,
    options: BotOptions,
    failures: usize,
}

/// Runs a bot against `config` until `stop` is set.
///
/// # Errors
/// The cluster cannot be reached or refuses the session, or its calls keep failing.
pub fn serve(
    config: &RemoteConfig,
    options: BotOptions,
    stop: &AtomicBool,
) -> Result<(), RemoteError> {
    let conn = Conn::open(config)?;
    let bots = BotsClient::new(conn.channel.clone()).max_decoding_message_size(usize::MAX);
    let mut bot = Bot {
        conn,
        bots,
        session: rw::BotSession {
            bot_id: bot_id(),
            status: rw::BotStatus::Ok as i32,
            ..Default::default()
        },
        stop,
        options,
        failures: 0,
    };
    bot.create()?;
    let mut done: Vec<rw::Lease> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        // The leases of the server's last answer (CreateBotSession's too).
        let fresh = bot.session.leases.iter().find(|lease| {
            lease.state == rw::LeaseState::Pending as i32
                || lease.state == rw::LeaseState::Active as i32
        });
        if let Some(lease) = fresh.cloned()
            && let Some(completed) = bot.work(lease)?
        {
            done.push(completed);
        }
        bot.session.leases = std::mem::take(&mut done);
        let sent = bot.session.leases.clone();
        if !bot.update()? {
            // Not delivered: report the completed leases again, take nothing new.
            done = sent;
            bot.session.leases.clear();
        }
    }
    Ok(())
}

impl Bot<'_> {
    fn create(&mut self) -> Result<(), RemoteError> {
        let mut request = tonic::Request::new(rw::CreateBotSessionRequest {
            parent: self.conn.instance.clone(),
            bot_session: Some(self.session.clone()),
        });
        request.set_timeout(POLL);
        let call = self.bots.create_bot_session(request);
        match self.conn.runtime.block_on(or_stop(self.stop, call)) {
            None => Ok(()),
            Some(Ok(session)) => {
                self.session = session.into_inner();
                Ok(())
            }
            Some(Err(source)) => Err(RemoteError::Rpc {
                call: "CreateBotSession",
                source,
            }),
        }
    }

    /// Sends the session and takes the server's answer; `false` when the call failed (or
    /// `stop` came first) and should be made again.
    fn update(&mut self) -> Result<bool, RemoteError> {
        let mut request = tonic::Request::new(rw::UpdateBotSessionRequest {
            name: self.session.name.clone(),
            bot_session: Some(self.session.clone()),
            update_mask: None,
        });
        request.set_timeout(POLL);
        let call = self.bots.update_bot_session(request);
        match self.conn.runtime.block_on(or_stop(self.stop, call)) {
            None => Ok(false),
            Some(Ok(session)) => {
                self.session = session.into_inner();
                self.failures = 0;
                Ok(true)
            }
            // The long poll ran out: nothing to do.
            Some(Err(status)) if status.code() == tonic::Code::DeadlineExceeded => Ok(false),
            Some(Err(source)) => {
                self.failures += 1;
                if self.failures >= MAX_FAILURES {
                    return Err(RemoteError::Rpc {
                        call: "UpdateBotSession",
                        source,
                    });
                }
                std::thread::sleep(HEARTBEAT);
                Ok(false)
            }
        }
    }

    fn cas(&self) -> Cas<'_> {
        Cas {
            channel: self.conn.channel.clone(),
            instance: &self.conn.instance,
            batch_limit: self.conn.batch_limit,
        }
    }

    /// Runs one lease; the completed lease to report, or `None` when it was cancelled or
    /// `stop` came.
    fn work(&mut self, mut lease: rw::Lease) -> Result<Option<rw::Lease>, RemoteError> {
        lease.state = rw::LeaseState::Active as i32;
        let mut meta = re::ExecutedActionMetadata {
            worker: self.session.bot_id.clone(),
            worker_start_timestamp: Some(timestamp(SystemTime::now())),
            input_fetch_start_timestamp: Some(timestamp(SystemTime::now())),
            ..Default::default()
        };
        let payload = lease.payload.clone().unwrap_or_default();
        let default_timeout = self.options.default_timeout;
        let prepared = self.conn.runtime.block_on(async {
            let cas = self.cas();
            let action = bot_run::action(&cas, &payload).await?;
            bot_run::prepare(&cas, &action, default_timeout).await
        });
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(err) => {
                return Ok(Some(complete(lease, None, FAILED_PRECONDITION, &err)));
            }
        };
        meta.input_fetch_completed_timestamp = Some(timestamp(SystemTime::now()));
        meta.execution_start_timestamp = Some(timestamp(SystemTime::now()));
        let cancel = Arc::new(AtomicBool::new(false));
        let run = std::thread::scope(|scope| {
            let handle = scope.spawn(|| bot_run::execute(&prepared, &cancel));
            let mut cancelled = false;
            while !handle.is_finished() {
                if self.stop.load(Ordering::Relaxed) {
                    cancel.store(true, Ordering::Relaxed);
                    cancelled = true;
                    break;
                }
                let beat = Instant::now();
                self.session.leases = vec![lease.clone()];
                if matches!(self.update(), Ok(true)) && !self.holds(&lease) {
                    cancel.store(true, Ordering::Relaxed);
                    cancelled = true;
                    break;
                }
                while !handle.is_finished() && beat.elapsed() < HEARTBEAT {
                    std::thread::sleep(STOP_CHECK);
                }
            }
            let run = handle.join();
            (run, cancelled)
        });
        meta.execution_completed_timestamp = Some(timestamp(SystemTime::now()));
        let (run, cancelled) = run;
        if cancelled {
            drop(prepared);
            return Ok(None);
        }
        let outcome = match run {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(err)) => {
                let err = RemoteError::Runner(err);
                return Ok(Some(complete(lease, None, FAILED_PRECONDITION, &err)));
            }
            Err(_) => {
                let err = RemoteError::Protocol("a command thread that panicked".to_string());
                return Ok(Some(complete(lease, None, FAILED_PRECONDITION, &err)));
            }
        };
        drop(prepared);
        meta.output_upload_start_timestamp = Some(timestamp(SystemTime::now()));
        let output = bot_run::reported_output(&outcome);
        let stdout = merkle::digest_of(&output);
        let stored = self.conn.runtime.block_on(async {
            let cas = self.cas();
            cas.upload(&[(stdout.clone(), &output[..])]).await
        });
        if let Err(err) = stored {
            return Ok(Some(complete(lease, None, FAILED_PRECONDITION, &err)));
        }
        meta.output_upload_completed_timestamp = Some(timestamp(SystemTime::now()));
        meta.worker_completed_timestamp = Some(timestamp(SystemTime::now()));
        let (exit_code, code) = match outcome.termination {
            Termination::Exited(code) => (code, 0),
            Termination::Signaled(signal) => (128 + signal, 0),
            Termination::TimedOut => (124, DEADLINE_EXCEEDED),
            Termination::OutputOverflow => (137, 0),
            Termination::Interrupted => return Ok(None),
            Termination::MemoryLimit | Termination::WorkspaceLimit | Termination::OverMemory => {
                (137, RESOURCE_EXHAUSTED)
            }
        };
        let result = re::ActionResult {
            exit_code,
            stdout_digest: Some(stdout),
            execution_metadata: Some(meta),
            ..Default::default()
        };
        lease.state = rw::LeaseState::Completed as i32;
        lease.result = Some(prost_types::Any {
            type_url: type_url("ActionResult"),
            value: result.encode_to_vec(),
        });
        lease.status = Some(Status {
            code,
            message: if code == 0 {
                String::new()
            } else {
                outcome.termination.describe()
            },
            details: Vec::new(),
        });
        Ok(Some(lease))
    }

    /// Whether the server's last answer still gives this bot `lease`, not cancelled.
    fn holds(&self, lease: &rw::Lease) -> bool {
        self.session
            .leases
            .iter()
            .any(|l| l.id == lease.id && l.state != rw::LeaseState::Cancelled as i32)
    }
}

/// `lease` completed with the status `code` and `err` as its message.
fn complete(
    mut lease: rw::Lease,
    result: Option<prost_types::Any>,
    code: i32,
    err: &RemoteError,
) -> rw::Lease {
    lease.state = rw::LeaseState::Completed as i32;
    lease.result = result;
    lease.status = Some(Status {
        code,
        message: crate::with_causes(err),
        details: Vec::new(),
    });
    lease
}
