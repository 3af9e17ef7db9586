//! The owner: a [`Supervisor`] registers every child it spawns and stops them all on
//! `shutdown`, when its last clone is dropped, or on SIGINT/SIGTERM: then it kills the children
//! of every live supervisor, removes scratch directories and exits with 130/143. The handler
//! runs as a Tokio task (not in signal context), so it may lock and allocate; the only code that
//! runs where async-signal-safety matters is the pre-exec hook in
//! [`sys::die_with_parent`](super::sys::die_with_parent).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use anyhow::bail;

use super::child::{self, Managed, Slot, Spec, kill_now, stop};
use super::{lock, watchdog};

/// The children of a supervisor and its clones; dropped with the last clone, it kills them.
#[derive(Default)]
struct Registry {
    slots: Vec<Arc<Slot>>,
    /// Set by the signal handler: spawning afterwards kills the new child at once.
    closed: bool,
}

impl Drop for Registry {
    fn drop(&mut self) {
        kill_now(&self.slots);
    }
}

/// Every supervisor alive in this process, for the signal handler.
static ALL: Mutex<Vec<Weak<Mutex<Registry>>>> = Mutex::new(Vec::new());
static HANDLERS_INSTALLED: Mutex<bool> = Mutex::new(false);
/// Scratch directories to remove when a signal ends the process.
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Owns every child process it spawns. Clones share the same children; when the last clone
/// is dropped, every remaining child group is killed.
#[derive(Clone)]
pub struct Supervisor {
    registry: Arc<Mutex<Registry>>,
}

impl Default for Supervisor {
    fn default() -> Self {
        Self::new()
    }
}

impl Supervisor {
    pub fn new() -> Self {
        let registry = Arc::new(Mutex::new(Registry::default()));
        let mut all = lock(&ALL);
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(&registry));
        Supervisor { registry }
    }

    /// Starts `spec` as the leader of a new process group. Stderr (and stdout unless
    /// `stdio`) is captured for [`Managed::log_tail`]. Must be called inside a Tokio
    /// runtime.
    pub fn spawn(&self, spec: Spec) -> anyhow::Result<Managed> {
        let label = if spec.name.is_empty() {
            spec.program.display().to_string()
        } else {
            spec.name.clone()
        };
        if tokio::runtime::Handle::try_current().is_err() {
            bail!("cannot start {label}: process supervision needs a Tokio runtime");
        }
        if lock(&self.registry).closed {
            bail!("cannot start {label}: evalgate is shutting down");
        }
        let slot = child::start(&spec, &label)?;
        tracing::debug!(
            "started {label} (pid {}): {} {:?}",
            slot.pid,
            spec.program.display(),
            spec.args
        );

        let mut reg = lock(&self.registry);
        if reg.closed {
            drop(reg);
            kill_now(std::slice::from_ref(&slot));
            bail!("cannot start {label}: evalgate is shutting down");
        }
        reg.slots.retain(|s| !s.finished());
        reg.slots.push(slot.clone());
        watchdog::note('+', slot.pid);
        Ok(Managed { slot })
    }

    /// Stops every live child's process group: SIGTERM, wait up to `grace` for all members to
    /// be gone, SIGKILL the rest, reap. The supervisor stays usable.
    pub async fn shutdown(&self, grace: Duration) {
        let slots = lock(&self.registry).slots.clone();
        stop(slots, grace).await;
        lock(&self.registry).slots.retain(|s| !s.finished());
    }

    /// Also removes `dir` if evalgate is stopped by SIGINT/SIGTERM (a directory already gone is
    /// skipped).
    pub fn remove_on_signal(dir: &Path) {
        lock(&SCRATCH).push(dir.to_path_buf());
    }

    /// On SIGINT or SIGTERM: kill the children of every live supervisor in the process and
    /// exit with 130 or 143. Installed once per process (later calls do nothing); must be
    /// called inside a Tokio runtime, and only works while that runtime runs. Problems are
    /// reported on stderr, not returned, since running without the handler is still possible.
    pub fn install_signal_handlers(&self) {
        use tokio::signal::unix::{SignalKind, signal};
        let mut installed = lock(&HANDLERS_INSTALLED);
        if *installed {
            return;
        }
        if tokio::runtime::Handle::try_current().is_err() {
            crate::errln!("warning: signal handlers not installed: no Tokio runtime");
            return;
        }
        let (mut int, mut term) = match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(int), Ok(term)) => (int, term),
            (Err(e), _) | (_, Err(e)) => {
                crate::errln!("warning: signal handlers not installed: {e}");
                return;
            }
        };
        *installed = true;
        tokio::spawn(async move {
            // `recv` yields None only when the runtime shuts down; that is no reason to exit.
            let (name, code) = tokio::select! {
                Some(()) = int.recv() => ("SIGINT", 130),
                Some(()) = term.recv() => ("SIGTERM", 143),
                else => return,
            };
            let sups: Vec<Arc<Mutex<Registry>>> =
                lock(&ALL).iter().filter_map(Weak::upgrade).collect();
            for sup in &sups {
                let slots = {
                    let mut reg = lock(sup);
                    reg.closed = true;
                    reg.slots.clone()
                };
                kill_now(&slots);
            }
            // exit() runs no destructors: remove the scratch directories (scratch configs
            // hold API keys) that a normal end would have removed
            for dir in lock(&SCRATCH).drain(..) {
                let _ = std::fs::remove_dir_all(dir);
            }
            crate::errln!("evalgate: {name} received, child processes stopped");
            std::process::exit(code);
        });
    }
}
