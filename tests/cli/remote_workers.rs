//! `repromin worker` processes for the remote tests: started against a cluster, stopped
//! with SIGTERM or killed outright, and killed if a test ends without stopping them.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{bin, clean_env};

/// A `repromin worker` process.
pub(crate) struct Worker(Option<Child>);

impl Worker {
    /// Starts one against `url`; its stderr is kept for [`Worker::stop`].
    pub(crate) fn start(url: &str) -> Worker {
        let mut command = Command::new(bin());
        command
            .args(["worker", "--remote", url])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        clean_env(&mut command);
        Worker(Some(command.spawn().expect("repromin worker starts")))
    }

    /// `count` of them.
    pub(crate) fn start_many(url: &str, count: usize) -> Vec<Worker> {
        (0..count).map(|_| Worker::start(url)).collect()
    }

    /// SIGTERM, then the exit status and stderr (within 20 s).
    pub(crate) fn stop(mut self) -> (Option<i32>, String) {
        use std::io::Read as _;
        let mut child = self.0.take().expect("running");
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("repromin worker did not stop within 20 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            let _ = pipe.read_to_string(&mut err);
        }
        (status.code(), err)
    }

    /// SIGKILL, as a machine that goes away would: the worker says nothing to the cluster,
    /// and the command it was running is left behind.
    pub(crate) fn kill(mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
