//! SIGINT/SIGTERM: kill the children of every live supervisor, remove scratch directories,
//! exit with 130/143. The handler runs as a Tokio task (not in signal context), so it may lock
//! and allocate; the only code that runs where async-signal-safety matters is the pre-exec hook
//! in [`sys::die_with_parent`](super::sys::die_with_parent).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use super::lock;
use super::stop::kill_now;
use super::supervisor::{ALL, Registry, Supervisor};

static HANDLERS_INSTALLED: Mutex<bool> = Mutex::new(false);
/// Scratch directories to remove when a signal ends the process.
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

impl Supervisor {
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
