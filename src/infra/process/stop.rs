//! Stopping and reaping whole process groups: SIGTERM, grace, SIGKILL, and reaping the zombies
//! of our groups (also those re-parented to us as a child subreaper).

use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::child::Slot;
use super::procfs::proc_table;

/// After `SIGKILL`, how long `shutdown`/`terminate` wait for the kernel to finish the job.
pub(super) const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long the synchronous kill (a dropped supervisor, a signal) spends reaping after `SIGKILL`.
const KILL_NOW_REAP: Duration = Duration::from_millis(250);

pub(super) fn settle_all(slots: &[Arc<Slot>]) -> bool {
    let table = proc_table();
    slots
        .iter()
        .fold(true, |done, s| s.settle(table.as_deref()) & done)
}

fn signal_all(slots: &[Arc<Slot>], sigs: &[Signal]) {
    let table = proc_table();
    for s in slots {
        s.note_escaped(table.as_deref());
        for &sig in sigs {
            s.signal(sig, table.as_deref());
        }
    }
}

/// Whether `done` holds within `limit`: asked at once, then after pauses that start at
/// `pause_ms` and double up to `max_ms`. A huge `limit` saturates instead of overflowing.
pub(super) async fn poll_until(
    limit: Duration,
    pause_ms: u64,
    max_ms: u64,
    mut done: impl FnMut() -> bool,
) -> bool {
    let now = Instant::now();
    let deadline = now
        .checked_add(limit)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
    let mut pause = Duration::from_millis(pause_ms);
    loop {
        if done() {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(Duration::from_millis(max_ms));
    }
}

/// SIGTERM, wait up to `grace`, SIGKILL, reap.
pub(super) async fn stop(slots: Vec<Arc<Slot>>, grace: Duration) {
    let slots: Vec<Arc<Slot>> = slots.into_iter().filter(|s| !s.finished()).collect();
    if slots.is_empty() {
        return;
    }
    signal_all(&slots, &[Signal::SIGTERM, Signal::SIGCONT]);
    if poll_until(grace, 2, 25, || settle_all(&slots)).await {
        return;
    }
    signal_all(&slots, &[Signal::SIGKILL]);
    poll_until(KILL_WAIT, 2, 25, || settle_all(&slots)).await;
}

/// SIGKILL and a short, bounded, blocking reap. Never panics.
pub(super) fn kill_now(slots: &[Arc<Slot>]) {
    let slots: Vec<Arc<Slot>> = slots.iter().filter(|s| !s.finished()).cloned().collect();
    if slots.is_empty() {
        return;
    }
    signal_all(&slots, &[Signal::SIGKILL]);
    let deadline = Instant::now() + KILL_NOW_REAP;
    while !settle_all(&slots) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
}
