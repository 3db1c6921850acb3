//! Removing what a run left behind off the probe's path: a thread of its own removes the
//! directories it is handed, in order, while the next run goes on.
//!
//! A run's overlay layer (its upper and work directories) is only removed after the run,
//! and nothing reads it again, so waiting for its removal before the next probe only
//! lengthens the probe. The thread keeps the first error it meets; the next call hands it
//! to the caller, so a layer that cannot be removed still stops the reduction, one probe
//! later. Finishing (or dropping the reaper) waits until everything handed over is gone.

use std::path::PathBuf;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::tree::TreeError;
use crate::workspace::remove_any;

/// The thread that removes directories, and the first error it met.
#[derive(Debug)]
pub(crate) struct Reaper {
    send: Option<Sender<PathBuf>>,
    thread: Option<JoinHandle<()>>,
    failed: Arc<Mutex<Option<TreeError>>>,
}

impl Reaper {
    /// A reaper whose thread starts on the first removal.
    pub(crate) fn new() -> Reaper {
        Reaper {
            send: None,
            thread: None,
            failed: Arc::new(Mutex::new(None)),
        }
    }

    /// Hands `path` (a file or a directory, with everything under it) to the thread; where
    /// no thread can be started, removes it here.
    ///
    /// # Errors
    /// The first removal that failed since the last call, or this one when it is removed
    /// here.
    pub(crate) fn remove(&mut self, path: PathBuf) -> Result<(), TreeError> {
        self.take_failure()?;
        if self.send.is_none() {
            self.start();
        }
        match &self.send {
            Some(send) => match send.send(path) {
                Ok(()) => Ok(()),
                Err(returned) => remove_any(&returned.0),
            },
            None => remove_any(&path),
        }
    }

    /// Waits until everything handed over is removed.
    ///
    /// # Errors
    /// The first removal that failed.
    pub(crate) fn finish(&mut self) -> Result<(), TreeError> {
        self.send = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.take_failure()
    }

    fn take_failure(&self) -> Result<(), TreeError> {
        match self
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    fn start(&mut self) {
        let (send, receive) = channel::<PathBuf>();
        let failed = self.failed.clone();
        let thread = std::thread::Builder::new()
            .name("repromin-reaper".into())
            .spawn(move || {
                for path in receive {
                    if let Err(error) = remove_any(&path) {
                        failed
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .get_or_insert(error);
                    }
                }
            });
        if let Ok(thread) = thread {
            self.send = Some(send);
            self.thread = Some(thread);
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_handed_over_is_gone_once_finished() {
        let dir = tempfile::tempdir().unwrap();
        let mut reaper = Reaper::new();
        let mut paths = Vec::new();
        for i in 0..50 {
            let layer = dir.path().join(i.to_string());
            std::fs::create_dir_all(layer.join("u/deep")).unwrap();
            std::fs::write(layer.join("u/deep/file"), b"x").unwrap();
            std::fs::create_dir_all(layer.join("w/work")).unwrap();
            reaper.remove(layer.clone()).unwrap();
            paths.push(layer);
        }
        reaper.finish().unwrap();
        for path in paths {
            assert!(!path.exists(), "{} is still there", path.display());
        }
    }

    #[test]
    fn a_removal_that_fails_is_the_error_of_a_later_call_and_of_finish() {
        // No one may unlink a file of procfs, root included, and nothing is lost trying.
        let mut reaper = Reaper::new();
        reaper.remove(PathBuf::from("/proc/version")).unwrap();
        reaper.finish().unwrap_err();
        let mut reaper = Reaper::new();
        reaper.remove(PathBuf::from("/proc/version")).unwrap();
        // The thread has met the error by the time another path can be handed over.
        let later = (0..200).find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            reaper
                .remove(PathBuf::from("/nonexistent/repromin-reaper"))
                .err()
        });
        let error = later.expect("the failed removal is reported by a later call");
        assert!(error.to_string().contains("/proc/version"), "{error}");
        reaper.finish().unwrap();
    }
}
