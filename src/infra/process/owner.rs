//! Who started a process, written into its environment: every child the supervisor starts
//! carries `EVALGATE_OWNER`, a list of marks `<run>.<n>` (the run: evalgate's pid and start
//! time; `n`: the child's number in this run), after any marks it inherited from an evalgate
//! that started this one. A descendant that left its process group with `setsid()` keeps the
//! mark (an environment is inherited through fork and exec) even after its parent died and it
//! was re-parented: evalgate (a child subreaper) finds the orphans it adopted by their mark and
//! stops them with the child they came from, and the [`watchdog`](super::watchdog) finds the
//! marked processes of a SIGKILLed evalgate wherever they were re-parented.
//!
//! What it cannot find: a descendant that cleared or rewrote its environment, or one whose
//! `/proc/PID/environ` evalgate may not read (another user's, a non-dumpable process).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The variable holding the marks.
pub const VAR: &str = "EVALGATE_OWNER";

/// This evalgate's run token: `<pid>-<start time in clock ticks>` (unique on the host).
pub fn run_token() -> &'static str {
    static TOKEN: OnceLock<String> = OnceLock::new();
    TOKEN.get_or_init(|| {
        let pid = std::process::id();
        let start = super::procfs::read_stat(pid).map_or(0, |s| s.start);
        format!("{pid}-{start}")
    })
}

/// A fresh mark for the next child, and the variable's value to give it (inherited marks
/// first).
pub fn next_mark() -> (String, String) {
    static N: AtomicU64 = AtomicU64::new(0);
    let mark = format!("{}.{}", run_token(), N.fetch_add(1, Ordering::Relaxed));
    let value = match std::env::var(VAR) {
        Ok(v) if !v.trim().is_empty() => format!("{} {mark}", v.trim()),
        _ => mark.clone(),
    };
    (mark, value)
}

/// The marks in process `pid`'s environment (empty when it has none or cannot be read).
pub fn marks_of(pid: u32) -> Vec<String> {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return Vec::new();
    };
    let prefix = format!("{VAR}=");
    env.split(|&b| b == 0)
        .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
        .map(|v| {
            String::from_utf8_lossy(v)
                .split_ascii_whitespace()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
