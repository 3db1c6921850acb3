//! Probes whose cost grows with the change, not with the tree: an overlay mount per run.
//!
//! A `Layers` belongs to one worker. For each run it writes, into a fresh *upper*
//! directory, only what the run's tree has that differs from the *lower* directory (the
//! session's clean copy of the accepted state, in which no command ever runs): the files,
//! links and directories that differ, with their modes and times, and an overlay whiteout
//! for each entry the run's tree lacks. The command's child then enters a mount namespace
//! of its own, mounts the overlay of the two on the worker's tree directory and runs there
//! (see `Mount::enter`). Everything the command writes lands in the upper directory, by
//! the kernel, whatever the command does through the mount, so undoing the run is removing
//! that directory: nothing is looked up per entry of the tree, before or after the run.
//!
//! The tree directory itself stays empty on the host's side. After each run it is checked
//! to be still empty: a command that unmounted its tree, or left its namespace, and wrote
//! there ends the reduction with an error rather than answering for a tree it did not run
//! on (see `Layers::clear`).
//!
//! Each run gets upper and work directories of its own (numbered), so that a process that
//! outlived its run and still holds the old mount can never write into a later run's tree.
//!
//! The layers are used only where they work: when the session starts, each worker mounts
//! an overlay once in a child, with the best of `EXTRA_OPTIONS` the kernel takes
//! (`redirect_dir=on`, so that a command can rename directories as it could in a plain
//! one, and `volatile`, so that no run waits for its layer to reach the disk); when that
//! fails (no overlay filesystem, no privilege to mount, a path the mount options cannot
//! spell), the worker falls back to delta application on a plain copy
//! (`crate::workspace`), and says why through `Layers::record`.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::stat::{Mode, SFlag, makedev, mknod};

use crate::tree::{Entry, Meta, Node, Tree, TreeError, io_err, parent_of};
use crate::workspace::{remove_any, set_times, write_entry};

/// Whether the runs of a reduction went through an overlay, for its report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct OverlayRecord {
    /// Whether every run of the passes and the holdout saw its tree through an overlay.
    pub used: bool,
    /// Why not, when not used.
    pub reason: Option<String>,
}

/// Whether a worker's runs go through an overlay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LayerState {
    /// Not tried yet.
    Untried,
    /// Every run mounts an overlay.
    On,
    /// Runs use a plain copy; the reason the overlay could not be used.
    Off(String),
}

/// The overlay layers of one worker: where its numbered upper and work directories go.
#[derive(Debug)]
pub(crate) struct Layers {
    dir: PathBuf,
    serial: u64,
    live: Option<PathBuf>,
    state: LayerState,
    /// The mount options beyond the layers: the first of [`EXTRA_OPTIONS`] the kernel took.
    extra: &'static str,
    /// Removes each run's layer while the next run goes on.
    reaper: crate::reaper::Reaper,
}

/// The options each run's overlay asks for beyond its layers, best first; the session
/// keeps the first the kernel accepts.
///
/// - `redirect_dir=on` lets a command rename a directory of the lower layer, as it could in
///   a plain tree.
/// - `volatile` (Linux 5.10) leaves out every sync of the upper layer, which is thrown away
///   after the run anyway. Without it, the unmount at the end of each run syncs the whole
///   file system the layers are on: on a journaled ext4, about 0.8 ms a run.
const EXTRA_OPTIONS: [&str; 4] = [
    ",redirect_dir=on,volatile",
    ",redirect_dir=on",
    ",volatile",
    "",
];

/// What the leader of one run mounts, prepared before it starts so that entering it
/// allocates nothing.
#[derive(Clone, Debug)]
pub(crate) struct Mount {
    target: CString,
    options: CString,
}

impl Mount {
    /// Enters a mount namespace of its own, mounts the overlay on the tree directory and
    /// moves into it. Runs in the leader between its start and exec: system calls only, on
    /// strings made before it started.
    ///
    /// # Errors
    /// The system call that failed.
    pub(crate) fn enter(&self) -> io::Result<()> {
        unshare(CloneFlags::CLONE_NEWNS).map_err(io::Error::from)?;
        // Nothing mounted here may reach the namespace repromin runs in.
        mount(
            None::<&std::ffi::CStr>,
            c"/",
            None::<&std::ffi::CStr>,
            MsFlags::MS_REC | MsFlags::MS_PRIVATE,
            None::<&std::ffi::CStr>,
        )
        .map_err(io::Error::from)?;
        mount(
            Some(c"overlay"),
            self.target.as_c_str(),
            Some(c"overlay"),
            MsFlags::empty(),
            Some(self.options.as_c_str()),
        )
        .map_err(io::Error::from)?;
        // The working directory was entered before the mount covered it.
        nix::unistd::chdir(self.target.as_c_str()).map_err(io::Error::from)
    }
}

/// Why runs cannot use the overlay; the report gives it as the overlay's reason.
#[derive(Debug, thiserror::Error)]
enum Unusable {
    /// A path is not UTF-8.
    #[error("{} is not UTF-8", .0.display())]
    NotUtf8(PathBuf),
    /// A path the mount options cannot hold.
    #[error(
        "{0} cannot be written in overlay mount options (a relative path, or one holding `,`, `:` or `\\`)"
    )]
    OptionPath(String),
    /// A path holds a NUL byte.
    #[error("{} holds a NUL", .0.display())]
    Nul(PathBuf),
    /// The mount point could not be made.
    #[error("create directory {}", .0.display())]
    CreateDir(PathBuf, #[source] io::Error),
    /// Mounting failed in the child.
    #[error("mounting an overlay failed")]
    Mount(#[source] io::Error),
    /// Staging a layer or clearing the mount point failed.
    #[error(transparent)]
    Tree(#[from] TreeError),
}

/// A path as the overlay's mount options can hold it: absolute, and free of the
/// characters that separate options and layers.
fn option_path(path: &Path) -> Result<String, Unusable> {
    let text = path
        .to_str()
        .ok_or_else(|| Unusable::NotUtf8(path.to_path_buf()))?;
    if !path.is_absolute() || text.contains([',', ':', '\\', '\n']) {
        return Err(Unusable::OptionPath(text.to_string()));
    }
    Ok(text.to_string())
}

fn c_path(path: &Path) -> Result<CString, Unusable> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| Unusable::Nul(path.to_path_buf()))
}

impl Layers {
    /// Layers kept under `dir` (created on first use).
    pub(crate) fn new(dir: PathBuf) -> Layers {
        Layers {
            dir,
            serial: 0,
            live: None,
            state: LayerState::Untried,
            extra: EXTRA_OPTIONS[0],
            reaper: crate::reaper::Reaper::new(),
        }
    }

    /// Layers that are never used: every run goes to the plain copy, for `reason`.
    pub(crate) fn off(reason: &str) -> Layers {
        Layers {
            state: LayerState::Off(reason.to_string()),
            ..Layers::new(PathBuf::new())
        }
    }

    /// The state as the report gives it.
    pub(crate) fn record(&self) -> OverlayRecord {
        match &self.state {
            LayerState::On => OverlayRecord {
                used: true,
                reason: None,
            },
            LayerState::Off(reason) => OverlayRecord {
                used: false,
                reason: Some(reason.clone()),
            },
            LayerState::Untried => OverlayRecord {
                used: false,
                reason: Some("no run needed a tree".to_string()),
            },
        }
    }

    /// Whether runs at `at` over `lower` can use the overlay: decided on the first call, by
    /// mounting one in a child.
    pub(crate) fn usable(&mut self, lower: &Path, model: &Tree, at: &Path) -> bool {
        if self.state == LayerState::Untried {
            self.state = match self.try_mount(lower, model, at) {
                Ok(()) => LayerState::On,
                Err(reason) => LayerState::Off(crate::with_causes(&reason)),
            };
        }
        self.state == LayerState::On
    }

    fn try_mount(&mut self, lower: &Path, model: &Tree, at: &Path) -> Result<(), Unusable> {
        option_path(lower)?;
        option_path(&self.dir)?;
        remove_any(at)?;
        fs::create_dir_all(at).map_err(|e| Unusable::CreateDir(at.to_path_buf(), e))?;
        let mut last = None;
        for extra in EXTRA_OPTIONS {
            self.extra = extra;
            let mount = self.stage(lower, model, model, at)?;
            // The child runs repromin's own image, whatever became of its file since.
            let mut child = Command::new("/proc/self/exe");
            child
                .arg("--version")
                .current_dir(at)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            // SAFETY: `enter` makes system calls only, on strings made before the fork.
            #[expect(
                unsafe_code,
                reason = "the probe mounts in the forked child, as a run's leader does"
            )]
            unsafe {
                child.pre_exec(move || mount.enter());
            }
            let spawned = child.spawn().and_then(|mut c| c.wait());
            let cleared = self.clear(at);
            match (spawned, cleared) {
                (Ok(_), Ok(())) => return Ok(()),
                (Err(err), _) => last = Some(Unusable::Mount(err)),
                (_, Err(err)) => return Err(err.into()),
            }
        }
        Err(last.unwrap_or(Unusable::Mount(io::Error::other("no mount options to try"))))
    }

    /// Writes a fresh upper directory holding what `target` has that differs from `model`
    /// (what `lower` holds), and returns the mount that shows `target` at `at`.
    ///
    /// # Errors
    /// I/O failures writing the layer, naming the path.
    pub(crate) fn stage(
        &mut self,
        lower: &Path,
        model: &Tree,
        target: &Tree,
        at: &Path,
    ) -> Result<Mount, TreeError> {
        if let Some(live) = self.live.take() {
            self.reaper.remove(live)?;
        }
        self.serial += 1;
        let layer = self.dir.join(self.serial.to_string());
        remove_any(&layer)?;
        let upper = layer.join("u");
        let work = layer.join("w");
        fs::create_dir_all(&upper).map_err(io_err("create directory", &upper))?;
        fs::create_dir(&work).map_err(io_err("create directory", &work))?;
        self.live = Some(layer);
        write_difference(&upper, model, target)?;
        let options = format!(
            "lowerdir={},upperdir={},workdir={}{}",
            option_path(lower).map_err(|_| bad_path(lower))?,
            option_path(&upper).map_err(|_| bad_path(&upper))?,
            option_path(&work).map_err(|_| bad_path(&work))?,
            self.extra,
        );
        Ok(Mount {
            target: c_path(at).map_err(|_| bad_path(at))?,
            options: CString::new(options).map_err(|_| bad_path(&upper))?,
        })
    }

    /// Hands the last run's layer to the reaper (it is removed while the next run goes on)
    /// and checks that the tree directory `at` is still empty on this side of the mount.
    ///
    /// # Errors
    /// I/O failures, and [`TreeError::Escaped`] when something was written at `at` itself
    /// (it is removed).
    pub(crate) fn clear(&mut self, at: &Path) -> Result<(), TreeError> {
        if let Some(live) = self.live.take() {
            self.reaper.remove(live)?;
        }
        let mut found = None;
        for item in fs::read_dir(at).map_err(io_err("list", at))? {
            let item = item.map_err(io_err("list", at))?;
            found.get_or_insert_with(|| item.path());
            remove_any(&item.path())?;
        }
        match found {
            Some(path) => Err(TreeError::Escaped { path }),
            None => Ok(()),
        }
    }
}

fn bad_path(path: &Path) -> TreeError {
    TreeError::Io {
        action: "mount an overlay on",
        path: path.to_path_buf(),
        source: io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path cannot be written in overlay mount options",
        ),
    }
}

/// An entry to write in the upper layer: its path, what the candidate holds there, and
/// what the lower layer holds there, if anything.
type Write<'t> = (&'t str, &'t Entry, Option<&'t Entry>);

/// Writes into `upper` every entry of `target` that differs from `model`, a whiteout for
/// every entry of `model` that `target` lacks, and the mode and time of every directory it
/// wrote in (the root always: the merged root shows the upper one's).
fn write_difference(upper: &Path, model: &Tree, target: &Tree) -> Result<(), TreeError> {
    // Directories of `upper` made here, whose mode and time are set last.
    let mut made: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    // Paths whose whole subtree of `model` is hidden already (whited out, or replaced by a
    // non-directory, or by a directory over a non-directory).
    let mut covered: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let is_covered = |covered: &std::collections::HashSet<&str>, path: &str| {
        let mut p = parent_of(path);
        while !p.is_empty() {
            if covered.contains(p) {
                return true;
            }
            p = parent_of(p);
        }
        false
    };
    // Only what differs: the walk skips the parts of the two maps that are shared.
    for item in model.entries.diff(&target.entries) {
        let (gone, write): (Option<&str>, Option<Write<'_>>) = match item {
            imbl::ordmap::DiffItem::Remove(h, _) => (Some(&**h), None),
            imbl::ordmap::DiffItem::Add(w, we) => (None, Some((&**w, we, None))),
            imbl::ordmap::DiffItem::Update {
                old: (_, he),
                new: (w, we),
            } => (None, Some((&**w, we, Some(he)))),
        };
        if let Some(path) = gone {
            if is_covered(&covered, path) {
                continue;
            }
            make_parents(upper, target, path, &mut made)?;
            let full = upper.join(path);
            mknod(&full, SFlag::S_IFCHR, Mode::empty(), makedev(0, 0)).map_err(|errno| {
                TreeError::Io {
                    action: "create an overlay whiteout at",
                    path: full.clone(),
                    source: io::Error::from(errno),
                }
            })?;
            covered.insert(path);
        }
        if let Some((path, entry, had)) = write {
            make_parents(upper, target, path, &mut made)?;
            let full = upper.join(path);
            write_entry(&full, entry)?;
            match entry.node {
                Node::Dir => {
                    made.insert(path);
                    // A directory over a lower non-directory is not merged with anything.
                    if had.is_some_and(|h| !matches!(h.node, Node::Dir)) {
                        covered.insert(path);
                    }
                }
                _ => {
                    set_times(&full, &entry.meta)?;
                    if had.is_some_and(|h| matches!(h.node, Node::Dir)) {
                        covered.insert(path);
                    }
                }
            }
        }
    }
    for path in made.iter().rev() {
        if let Some(entry) = target.entries.get(*path) {
            set_dir_meta(&upper.join(path), &entry.meta)?;
        }
    }
    set_dir_meta(upper, &target.root)
}

/// Makes, in `upper`, the directories above `path` that it does not hold yet.
fn make_parents<'t>(
    upper: &Path,
    target: &'t Tree,
    path: &str,
    made: &mut std::collections::BTreeSet<&'t str>,
) -> Result<(), TreeError> {
    let parent = parent_of(path);
    if parent.is_empty() || made.contains(parent) {
        return Ok(());
    }
    let Some((key, _)) = target.entries.get_key_value(parent) else {
        return Ok(());
    };
    make_parents(upper, target, parent, made)?;
    let full = upper.join(parent);
    match fs::create_dir(&full) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(source) => {
            return Err(TreeError::Io {
                action: "create directory",
                path: full,
                source,
            });
        }
    }
    made.insert(key);
    Ok(())
}

fn set_dir_meta(path: &Path, meta: &Meta) -> Result<(), TreeError> {
    fs::set_permissions(path, fs::Permissions::from_mode(meta.mode))
        .map_err(io_err("set permissions of", path))?;
    set_times(path, meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{CommandSpec, run_confined};
    use crate::tree::scan_exact;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    /// Usable layers for runs at `at` over `lower`, or `None` where this machine cannot
    /// mount an overlay (the test then says so and skips; under `CI` it fails).
    fn layers_or_skip(base: &Path, lower: &Path, model: &Tree, at: &Path) -> Option<Layers> {
        let mut layers = Layers::new(base.join("layers"));
        if layers.usable(lower, model, at) {
            return Some(layers);
        }
        let reason = layers.record().reason.unwrap_or_default();
        crate::test_skip::require_tool("an overlay mount", Err(reason));
        None
    }

    /// Runs `script` through the runner, in `at`, shown through `mount`.
    fn run(at: &Path, tmp: &Path, mount: &Mount, script: &str) -> crate::runner::RunOutcome {
        let spec = CommandSpec {
            argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
            env: Vec::new(),
            memory: None,
        };
        fs::create_dir_all(tmp).unwrap();
        let never = AtomicBool::new(false);
        run_confined(
            &spec,
            at,
            tmp,
            Duration::from_secs(30),
            &never,
            None,
            Some(mount),
        )
        .unwrap()
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// The accepted tree (written at `lower`) and a candidate that differs from it in every
    /// way an entry can: bytes, mode, a deleted file and directory, a new directory, a
    /// directory become a file, a file become a directory, a link's target, and a
    /// directory's time.
    fn lower_and_target(base: &Path) -> (PathBuf, Tree, Tree) {
        let lower = base.join("lower");
        for (rel, text) in [
            ("a.txt", "a\n"),
            ("pkg/b.py", "b = 1\n"),
            ("pkg/deep/c.py", "c = 1\n"),
            ("gone/x.txt", "x\n"),
            ("kind/y.txt", "y\n"),
            ("file", "f\n"),
            ("run.sh", "#!/bin/sh\n"),
        ] {
            write(&lower, rel, text);
        }
        fs::set_permissions(lower.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("a.txt", lower.join("link")).unwrap();
        let want = base.join("want");
        for (rel, text) in [
            ("a.txt", "changed\n"),
            ("pkg/b.py", "b = 1\n"),
            ("new/dir/n.txt", "n\n"),
            ("kind", "now a file\n"),
            ("file/inside.txt", "now a directory\n"),
            ("run.sh", "#!/bin/sh\n"),
        ] {
            write(&want, rel, text);
        }
        fs::create_dir_all(want.join("pkg/deep")).unwrap();
        std::os::unix::fs::symlink("pkg/b.py", want.join("link")).unwrap();
        let model = scan_exact(&lower).unwrap();
        let mut target = scan_exact(&want).unwrap();
        // Unchanged entries keep the accepted tree's times, as a candidate does.
        for (path, entry) in &model.entries {
            if let Some(t) = target.entries.get_mut(path)
                && t.node == entry.node
                && path.as_ref() != "run.sh"
            {
                t.meta = entry.meta;
            }
        }
        (lower, model, target)
    }

    /// A temporary directory with the accepted tree at `lower`, a candidate, the run's tree
    /// directory and `TMPDIR`, and layers that can mount there.
    struct Fixture {
        base: tempfile::TempDir,
        lower: PathBuf,
        model: Tree,
        target: Tree,
        at: PathBuf,
        tmp: PathBuf,
        layers: Layers,
    }

    /// The fixture, or `None` where this machine cannot mount an overlay (see
    /// [`layers_or_skip`]).
    fn fixture() -> Option<Fixture> {
        let base = tempfile::tempdir().unwrap();
        let (lower, model, target) = lower_and_target(base.path());
        let at = base.path().join("run").join("tree");
        let tmp = base.path().join("tmp");
        let layers = layers_or_skip(base.path(), &lower, &model, &at)?;
        Some(Fixture {
            base,
            lower,
            model,
            target,
            at,
            tmp,
            layers,
        })
    }

    #[test]
    fn a_run_sees_exactly_its_tree_and_the_next_run_none_of_its_writes() {
        let Some(Fixture {
            base,
            lower,
            model,
            target,
            at,
            tmp,
            mut layers,
        }) = fixture()
        else {
            return;
        };
        let base = base.path();
        let view = |n: u32| base.join(format!("view{n}"));
        let mount = layers.stage(&lower, &model, &target, &at).unwrap();
        let script = format!(
            "cp -a . '{}' && echo junk > a.txt && rm -rf run.sh pkg/deep && mkdir made \
             && touch made/f new/dir/m && chmod 700 pkg && ln -s a.txt more && mv new renamed",
            view(1).display()
        );
        let outcome = run(&at, &tmp, &mount, &script);
        assert_eq!(outcome.termination, crate::runner::Termination::Exited(0));
        layers.clear(&at).unwrap();
        assert_eq!(
            scan_exact(&view(1)).unwrap().fingerprint(),
            target.fingerprint(),
            "the run saw another tree"
        );
        assert_eq!(
            scan_exact(&lower).unwrap().fingerprint(),
            model.fingerprint(),
            "the run changed the accepted tree"
        );
        // What a run shows, copied out with every mode and time.
        let mut seen = |tree: &Tree, n: u32| {
            let mount = layers.stage(&lower, &model, tree, &at).unwrap();
            run(
                &at,
                &tmp,
                &mount,
                &format!("cp -a . '{}'", view(n).display()),
            );
            layers.clear(&at).unwrap();
            scan_exact(&view(n)).unwrap().fingerprint()
        };
        assert_eq!(
            seen(&target, 2),
            target.fingerprint(),
            "the next run saw what the last one wrote"
        );
        // The accepted tree itself, shown through an empty layer.
        assert_eq!(seen(&model, 3), model.fingerprint());
        assert_eq!(fs::read_dir(&at).unwrap().count(), 0);
    }

    #[test]
    fn a_run_s_layer_is_never_synced_where_the_kernel_can_leave_it_out() {
        let Some(mut fixture) = fixture() else {
            return;
        };
        // This kernel is 5.10 or later (the CI machine's is): it takes every option.
        let layers = &mut fixture.layers;
        assert_eq!(layers.extra, EXTRA_OPTIONS[0], "{:?}", layers.record());
        let seen = fixture.base.path().join("mountinfo");
        let at = &fixture.at;
        let mount = layers
            .stage(&fixture.lower, &fixture.model, &fixture.target, at)
            .unwrap();
        run(
            at,
            &fixture.tmp,
            &mount,
            &format!("cat /proc/self/mountinfo > '{}'", seen.display()),
        );
        layers.clear(at).unwrap();
        let mountinfo = fs::read_to_string(&seen).unwrap();
        let line = mountinfo
            .lines()
            .find(|l| l.split(' ').nth(4) == Some(at.to_str().unwrap()))
            .unwrap_or_else(|| panic!("the run's tree is not a mount:\n{mountinfo}"));
        // Newer kernels show `volatile` as `fsync=volatile`.
        for options in [&["volatile", "fsync=volatile"][..], &["redirect_dir=on"]] {
            assert!(
                line.split([' ', ',']).any(|o| options.contains(&o)),
                "{options:?} is not among the overlay's options: {line}"
            );
        }
    }

    #[test]
    fn a_command_that_unmounts_its_tree_and_writes_there_is_caught() {
        let Some(Fixture {
            base: _base,
            lower,
            model,
            target,
            at,
            tmp,
            mut layers,
        }) = fixture()
        else {
            return;
        };
        let mount = layers.stage(&lower, &model, &target, &at).unwrap();
        let at_text = at.display().to_string();
        let outcome = run(
            &at,
            &tmp,
            &mount,
            &format!("cd / && umount '{at_text}' && echo stray > '{at_text}/a.txt'"),
        );
        assert_eq!(outcome.termination, crate::runner::Termination::Exited(0));
        match layers.clear(&at) {
            Err(TreeError::Escaped { path }) => assert_eq!(path, at.join("a.txt")),
            other => panic!("a write beneath the mount went unnoticed: {other:?}"),
        }
        // What it wrote is gone, and the next run is clean again.
        layers.clear(&at).unwrap();
        let mount = layers.stage(&lower, &model, &target, &at).unwrap();
        let outcome = run(&at, &tmp, &mount, "test \"$(cat a.txt)\" = changed");
        assert_eq!(outcome.termination, crate::runner::Termination::Exited(0));
        layers.clear(&at).unwrap();
    }

    #[test]
    fn paths_the_mount_options_cannot_spell_turn_the_overlay_off() {
        let base = tempfile::tempdir().unwrap();
        let lower = base.path().join("a,b");
        fs::create_dir_all(&lower).unwrap();
        let model = scan_exact(&lower).unwrap();
        let mut layers = Layers::new(base.path().join("layers"));
        assert!(!layers.usable(&lower, &model, &base.path().join("at")));
        let record = layers.record();
        assert!(!record.used);
        assert!(record.reason.unwrap_or_default().contains("a,b"));
    }
}
