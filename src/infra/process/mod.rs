//! Child-process supervision: one [`Supervisor`] owns every process evalgate launches.
//!
//! Every child is started as the leader of a new process group (`setpgid(0, 0)` in the child),
//! so the group id equals the child's pid and everything the child forks stays in that group
//! unless it deliberately leaves it. Stopping a child therefore signals the whole group, which
//! takes grandchildren (a proxy's upstream servers) down with it:
//!
//! * [`Supervisor::shutdown`] / [`Managed::terminate`]: `SIGTERM` (+ `SIGCONT`, so stopped
//!   processes can act on it) to each group, wait up to `grace` for every member to be gone,
//!   then `SIGKILL`, then reap.
//! * Dropping the last [`Supervisor`] clone sends `SIGKILL` to each group, then reaps for a
//!   short bounded time (blocking, never panics), so an early `?` return or a panic does not
//!   leave processes behind.
//! * [`Supervisor::install_signal_handlers`]: on `SIGINT`/`SIGTERM` (seen by a tokio task,
//!   not in signal-handler context), the same `SIGKILL` and reap for every live supervisor's
//!   children, then exit with 130/143. Because children lead their own groups, a
//!   terminal's Ctrl-C reaches only evalgate, so this handler is what stops them.
//!
//! Descendants that escape the group (`setsid`) are found through `/proc` parent links while
//! their parent is still alive and are signalled individually (identified by pid *and* start
//! time, so a recycled pid is never hit). Once their parent is gone they are found by the mark
//! every child carries in its environment ([`owner`]): evalgate, a child subreaper, adopts the
//! orphans and stops those marked as a child's with that child (at the latest when the
//! supervisor shuts down); after a SIGKILL of evalgate the [`watchdog`] kills every process
//! marked with this run. A group is only signalled while it can still hold a
//! process of ours: once the leader is reaped and the group is observed empty, its slot is
//! marked finished and never signalled again.
//!
//! Zombies: the leader is reaped through tokio's `Child`. Grandchildren that outlive their
//! parent are re-parented to the nearest "child subreaper" or to PID 1; if that is a minimal
//! init that never reaps (some containers and sandboxes), they stay zombies forever. Call
//! [`become_child_subreaper`] once at startup to have them re-parented to evalgate instead;
//! the supervisor then reaps every zombie of its own groups.
//!
//! Exceptions, each deliberate: the [`watchdog`] helper (it must outlive a SIGKILLed evalgate,
//! so no supervisor of ours may own it) and the jq-filter probe in `sut::mapping` (a bounded,
//! synchronous self-exec that evalgate kills and waits for after its own 3 s limit). Stdio MCP
//! servers are started here too: `mcp` spawns them with [`Spec::stdio`] and hands
//! [`Managed::take_stdio`] to rmcp (rmcp's own child-process transport is not even compiled in).

use std::sync::{Mutex, MutexGuard};

mod child;
pub mod env;
mod log;
pub mod owner;
mod procfs;
mod supervisor;
mod sys;
pub mod watchdog;

pub use child::{Managed, Spec, die_with_evalgate};
pub use procfs::descendants;
pub use supervisor::Supervisor;
pub use sys::{become_child_subreaper, hide_from_children};

/// Locks a mutex, ignoring poisoning: these locks guard plain data that stays consistent, and
/// the kill paths must keep working while a panic unwinds.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
