//! Child-process supervision: one [`Supervisor`] owns every process evalgate launches. How this
//! fits with the watchdog and the owner mark: docs/systems-under-test.md and SECURITY.md.
//!
//! Every child leads a new process group (group id = its pid), so stopping it signals the whole
//! group and takes grandchildren (a proxy's upstreams) down with it:
//! * [`Supervisor::shutdown`] / [`Managed::terminate`]: `SIGTERM` (+ `SIGCONT`, so stopped
//!   processes can act on it), wait up to `grace` for the group to be empty, `SIGKILL`, reap.
//! * Dropping the last [`Supervisor`] clone `SIGKILL`s each group and reaps for a bounded time,
//!   so an early `?` return or a panic leaves nothing behind.
//! * [`Supervisor::install_signal_handlers`]: on `SIGINT`/`SIGTERM`, the same for every live
//!   supervisor, then exit 130/143. Children lead their own groups, so a terminal's Ctrl-C
//!   reaches only evalgate: this handler is what stops them.
//!
//! Escapees (`setsid`) are found through `/proc` parent links (pid *and* start time, so a
//! recycled pid is never hit), then by the [`owner`] mark once their parent is gone; after a
//! SIGKILL of evalgate the [`watchdog`] kills them. A group observed empty after its leader is
//! reaped is never signalled again. [`become_child_subreaper`] at startup makes evalgate reap
//! orphans that a minimal init (some containers) would leave as zombies forever.
//!
//! Exceptions, each deliberate: the [`watchdog`] (it must outlive a SIGKILLed evalgate) and the
//! jq-filter probe in `sut::mapping` (a bounded synchronous self-exec, killed after 3 s). Stdio
//! MCP servers are spawned here with [`Spec::stdio`]; [`Managed::take_stdio`] goes to rmcp.

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
