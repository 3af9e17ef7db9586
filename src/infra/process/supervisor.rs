//! The owner: a [`Supervisor`] registers every child it spawns and stops them all on
//! `shutdown` or when its last clone is dropped.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use anyhow::bail;

use super::child::{self, Managed, Slot, Spec};
use super::stop::{kill_now, stop};
use super::{lock, watchdog};

/// The children of a supervisor and its clones; dropped with the last clone, it kills them.
#[derive(Default)]
pub(super) struct Registry {
    pub(super) slots: Vec<Arc<Slot>>,
    /// Set by the signal handler: spawning afterwards kills the new child at once.
    pub(super) closed: bool,
}

impl Drop for Registry {
    fn drop(&mut self) {
        kill_now(&self.slots);
    }
}

/// Every supervisor alive in this process, for the signal handler.
pub(super) static ALL: Mutex<Vec<Weak<Mutex<Registry>>>> = Mutex::new(Vec::new());

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
}
