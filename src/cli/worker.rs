//! `repromin worker`: its arguments and its entry point, a call into
//! [`crate::remote::bot::serve`].

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::Args;

use super::render::{remote_exit, render_remote_error};
use crate::console::Console;
use crate::exit_code::Exit;
use crate::remote::{BotOptions, RemoteConfig};

/// Arguments of `worker`.
#[derive(Debug, Args, Clone)]
pub struct WorkerArgs {
    /// The cluster's endpoint: the server that runs the Remote Workers API (Bots service)
    /// and the storage of REAPI v2; `grpc://HOST:PORT` or `http://HOST:PORT` for plain
    /// HTTP/2, `grpcs://HOST:PORT` or `https://HOST:PORT` for TLS.
    #[arg(long, value_name = "URL")]
    pub remote: String,

    /// With a TLS endpoint, trust the certificate authorities in this PEM file instead of
    /// the system's.
    #[arg(long, value_name = "FILE")]
    pub remote_ca: Option<std::path::PathBuf>,

    /// Send this header with every call to the cluster (`NAME=VALUE`; repeatable).
    #[arg(long, value_name = "NAME=VALUE", value_parser = super::runner_args::parse_header)]
    pub remote_header: Vec<(String, String)>,

    /// The instance name to work for; empty (the default) for the default instance.
    #[arg(long, value_name = "NAME", default_value = "")]
    pub remote_instance: String,

    /// The timeout of an action that gives none, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    pub default_timeout: u64,
}

/// Serves leases until SIGINT or SIGTERM.
pub(super) fn worker_command(args: &WorkerArgs, interrupt: &AtomicBool) -> Exit {
    let console = Console::new(true);
    let config = RemoteConfig {
        tls_ca: args.remote_ca.clone(),
        headers: args.remote_header.clone(),
        ..RemoteConfig::new(&args.remote, &args.remote_instance)
    };
    let options = BotOptions {
        default_timeout: Duration::from_secs(args.default_timeout),
    };
    match crate::remote::serve(&config, options, interrupt) {
        Ok(()) => Exit::Ok,
        Err(err) => {
            render_remote_error(&console, &err);
            remote_exit(&err)
        }
    }
}
