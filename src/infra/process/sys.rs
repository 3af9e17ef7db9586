//! The few system calls the supervisor makes, through `nix` (no hand-declared FFI, no literal
//! signal numbers). The wrappers taking a pid refuse ids that would widen a signal's reach: 0
//! and 1 (and anything beyond `i32`) never reach `kill`/`killpg`/`waitpid`.
//!
//! Async-signal-safety: [`die_with_parent`] runs in a freshly forked child before `exec`, where
//! only async-signal-safe system calls are allowed and nothing may allocate. The `nix` functions
//! it uses (`prctl::set_pdeathsig`, `unistd::getppid`, `unistd::getpid`, `signal::kill`) are thin
//! wrappers: one libc call each, then a read of `errno`; they take and return plain integers
//! (`Pid`, `Signal`, `Errno`) and never allocate. Keep it that way: no `format!`, no `io::Error`
//! with a message, no logging on that path.

use std::io;

use nix::sys::signal::{self, Signal};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

/// In a freshly forked child (before exec): SIGKILL this process when the thread that forked it
/// dies, so a child outlives a SIGKILLed evalgate by no more than a moment. If the parent is
/// already gone (re-parented before the call), the child kills itself at once.
/// Async-signal-safe: system calls only, no allocation (an error is a bare `errno`).
#[cfg(target_os = "linux")]
pub fn die_with_parent(parent: Pid) -> io::Result<()> {
    use nix::sys::prctl;
    use nix::unistd::{getpid, getppid};

    prctl::set_pdeathsig(Signal::SIGKILL).map_err(io::Error::from)?;
    if getppid() != parent {
        let _ = signal::kill(getpid(), Signal::SIGKILL);
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn die_with_parent(_parent: Pid) -> io::Result<()> {
    Ok(())
}

/// `id` as a pid, if it is at least 2 (never "our own group", init, or "every process").
fn checked(id: u32) -> io::Result<Pid> {
    match i32::try_from(id) {
        Ok(v) if v >= 2 => Ok(Pid::from_raw(v)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to signal id {id}"),
        )),
    }
}

/// Sends `sig` (`None` = existence check) to one process.
pub fn signal_pid(pid: u32, sig: Option<Signal>) -> io::Result<()> {
    signal::kill(checked(pid)?, sig).map_err(io::Error::from)
}

/// Sends `sig` (`None` = existence check) to every process in group `pgid`.
pub fn signal_group(pgid: u32, sig: Option<Signal>) -> io::Result<()> {
    signal::killpg(checked(pgid)?, sig).map_err(io::Error::from)
}

/// Reaps `pid` if it is an exited child of ours (non-blocking). Only called for zombies adopted
/// from a supervised group, never for a pid some other code spawned and will wait for.
pub fn reap(pid: u32) -> bool {
    let Ok(pid) = checked(pid) else {
        return false;
    };
    // a positive pid limits the call to that one process; WNOHANG makes it non-blocking
    matches!(waitpid(pid, Some(WaitPidFlag::WNOHANG)), Ok(status) if status.pid() == Some(pid))
}

/// Makes this process a "child subreaper" (Linux `PR_SET_CHILD_SUBREAPER`): orphaned
/// descendants are re-parented to it instead of PID 1. The supervisor then sees (through
/// [`descendants`](super::descendants)) grandchildren whose parent died, and reaps the zombies
/// of its groups itself, which matters where PID 1 never reaps. Process-wide and irreversible; call once,
/// early in `main`. Orphans not from a supervised group are not reaped (they stay zombies
/// until evalgate exits), so other code that spawns processes is unaffected.
#[cfg(target_os = "linux")]
pub fn become_child_subreaper() -> io::Result<()> {
    nix::sys::prctl::set_child_subreaper(true).map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
pub fn become_child_subreaper() -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "child subreapers are Linux-only",
    ))
}

/// Makes evalgate non-dumpable: its `/proc/PID/environ`, memory and file descriptors become
/// unreadable to other processes of the same user, so a child (code from the pull request)
/// cannot read the tokens in evalgate's environment there. A child's own exec makes it
/// dumpable again. Best effort: an error leaves evalgate as it was.
#[cfg(target_os = "linux")]
pub fn hide_from_children() {
    let _ = nix::sys::prctl::set_dumpable(false);
}

#[cfg(not(target_os = "linux"))]
pub fn hide_from_children() {}
