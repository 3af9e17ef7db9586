//! The last line of defence against orphans: a tiny helper process (`evalgate __watchdog`) that
//! outlives a SIGKILLed evalgate and kills the process groups evalgate had not finished.
//!
//! Every supervised child already gets a parent-death signal, but that reaches only the child
//! itself: whatever it forked in the background (a proxy's upstream servers, a daemon of a stdio
//! server) stays alive when evalgate is killed with SIGKILL, which no handler can catch. So
//! evalgate tells the watchdog, over a pipe, each process group it starts (`+PGID`) and each it
//! has seen end (`-PGID`). When the pipe closes — evalgate exited, normally or not — the watchdog
//! SIGKILLs the groups still listed (plus SIGCONT, for stopped ones) and exits. On a normal exit
//! the list is empty and it exits at once (after a sweep for marked processes: none are left
//! after a clean exit); [`finish`] waits for that, so no helper outlives a
//! run that ended cleanly.
//!
//! The watchdog is started only by the real binary ([`enable`] from `main`), never by a test
//! harness calling the library, and only by the commands that launch processes.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::infra::own_binary::own_binary;
use nix::sys::signal::Signal;

/// The hidden command line argument that runs [`run`].
pub const ARG: &str = "__watchdog";

static ALLOWED: AtomicBool = AtomicBool::new(false);
static PIPE: Mutex<Option<(Child, ChildStdin)>> = Mutex::new(None);

/// Lets [`start`] launch the helper (the binary's `main` calls this; library users do not).
pub fn enable() {
    ALLOWED.store(true, Ordering::SeqCst);
}

/// Starts the helper once, if enabled. Failure is not fatal: evalgate still cleans up on every
/// exit it can see; only the SIGKILL case loses the helper's protection.
pub fn start() {
    if !ALLOWED.load(Ordering::SeqCst) {
        return;
    }
    let mut pipe = super::lock(&PIPE);
    if pipe.is_some() {
        return;
    }
    let Ok(exe) = own_binary() else {
        return;
    };
    let child = Command::new(exe)
        .arg(ARG)
        .arg(super::owner::run_token())
        .env_clear()
        .envs(super::env::for_child())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // its own group: a terminal's Ctrl-C to evalgate's group must not take it down first
        .process_group(0)
        .spawn();
    if let Ok(mut child) = child
        && let Some(stdin) = child.stdin.take()
    {
        *pipe = Some((child, stdin));
    }
}

/// Tells the helper that group `pgid` started (`+`) or ended (`-`).
pub(super) fn note(sign: char, pgid: u32) {
    if let Some((_, stdin)) = super::lock(&PIPE).as_mut() {
        let _ = writeln!(stdin, "{sign}{pgid}");
        let _ = stdin.flush();
    }
}

/// Closes the pipe and waits (bounded) for the helper to exit, so it does not outlive evalgate.
pub fn finish() {
    let Some((mut child, stdin)) = super::lock(&PIPE).take() else {
        return;
    };
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The helper's main loop: collect groups until EOF, then kill those still listed, then every
/// process marked as a child of the run named by the next argument ([`super::owner`]): the
/// descendants that escaped their group with `setsid()` and were re-parented when evalgate
/// and their parent died.
pub fn run() -> i32 {
    let token = std::env::args().nth(2).unwrap_or_default();
    let mut live = BTreeSet::new();
    let pgid = |id: &str| id.trim().parse::<u32>().ok();
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        if let Some(id) = line.strip_prefix('+').and_then(pgid) {
            live.insert(id);
        } else if let Some(id) = line.strip_prefix('-').and_then(pgid) {
            live.remove(&id);
        }
    }
    for &pgid in &live {
        let _ = super::sys::signal_group(pgid, Some(Signal::SIGKILL));
        let _ = super::sys::signal_group(pgid, Some(Signal::SIGCONT));
    }
    if !token.is_empty() {
        sweep(&token);
    }
    0
}

/// SIGKILLs every live process marked as a child of run `token`, until a pass finds none
/// (a marked process may fork while the others die; bounded: at most 50 passes).
fn sweep(token: &str) {
    let me = std::process::id();
    for _ in 0..50 {
        let Some(table) = super::procfs::proc_table() else {
            return;
        };
        let mut hit = false;
        for p in table.iter().filter(|p| !p.dead && p.pid != me) {
            // a mark of run `token`: `<token>.<n>`, any child of that run
            let of_run = |m: &String| m.strip_prefix(token).is_some_and(|n| n.starts_with('.'));
            if super::owner::marks_of(p.pid).iter().any(of_run) {
                let _ = super::sys::signal_pid(p.pid, Some(Signal::SIGKILL));
                let _ = super::sys::signal_pid(p.pid, Some(Signal::SIGCONT));
                hit = true;
            }
        }
        if !hit {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
