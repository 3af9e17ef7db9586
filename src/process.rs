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
//! * [`Supervisor::kill_all_now`]: `SIGKILL` to each group, then a short bounded reap. Safe to
//!   call from `Drop`, panic unwinding and signal handlers; it never panics.
//! * Dropping the last [`Supervisor`] clone runs `kill_all_now`, so an early `?` return or a
//!   panic does not leave processes behind.
//! * [`Supervisor::install_signal_handlers`]: on `SIGINT`/`SIGTERM`, kill every live
//!   supervisor's children and exit with 130/143. Because children lead their own groups, a
//!   terminal's Ctrl-C reaches only evalgate, so this handler is what stops them.
//!
//! Descendants that escape the group (`setsid`) are found through `/proc` parent links while
//! their parent is still alive and are signalled individually (identified by pid *and* start
//! time, so a recycled pid is never hit). A group is only signalled while it can still hold a
//! process of ours: once the leader is reaped and the group is observed empty, its slot is
//! marked finished and never signalled again.
//!
//! Zombies: the leader is reaped through tokio's `Child`. Grandchildren that outlive their
//! parent are re-parented to the nearest "child subreaper" or to PID 1; if that is a minimal
//! init that never reaps (some containers and sandboxes), they stay zombies forever. Call
//! [`become_child_subreaper`] once at startup to have them re-parented to evalgate instead;
//! the supervisor then reaps every zombie of its own groups.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

pub mod watchdog;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Bytes of output kept per stream (stdout, stderr) for [`Managed::log_tail`].
const LOG_CAP: usize = 64 * 1024;
/// Longer lines are split into pieces of this size.
const MAX_LINE: usize = 4 * 1024;
/// After `SIGKILL`, how long `shutdown`/`terminate` wait for the kernel to finish the job.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long `kill_all_now` (synchronous) spends reaping after `SIGKILL`.
const KILL_NOW_REAP: Duration = Duration::from_millis(250);
/// How long `wait_exit` waits, after the leader exited, for the output readers to drain.
const DRAIN_WAIT: Duration = Duration::from_millis(250);

/// Raw system calls. The crate has no `libc` dependency, so the few functions used here are
/// declared by hand; each matches its POSIX / Linux prototype (`pid_t` and `int` are `i32`
/// on every Linux target).
mod sys {
    use std::ffi::c_int;
    use std::io;

    #[cfg_attr(not(test), allow(dead_code))]
    pub const SIGINT: c_int = 2;
    pub const SIGKILL: c_int = 9;
    pub const SIGTERM: c_int = 15;
    #[cfg(target_os = "linux")]
    pub const SIGCONT: c_int = 18;
    #[cfg(not(target_os = "linux"))]
    pub const SIGCONT: c_int = 19;
    const WNOHANG: c_int = 1;
    #[cfg(target_os = "linux")]
    const PR_SET_CHILD_SUBREAPER: c_int = 36;
    #[cfg(target_os = "linux")]
    const PR_SET_PDEATHSIG: c_int = 1;

    unsafe extern "C" {
        fn kill(pid: c_int, sig: c_int) -> c_int;
        fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
        #[cfg(target_os = "linux")]
        fn prctl(option: c_int, ...) -> c_int;
        fn getppid() -> c_int;
        fn getpid() -> c_int;
    }

    /// In a freshly forked child (before exec): SIGKILL this process when the thread that
    /// forked it dies, so a child outlives a SIGKILLed evalgate by no more than a moment. If the
    /// parent is already gone (re-parented before the call), the child kills itself at once.
    /// Async-signal-safe: two system calls, no allocation.
    #[cfg(target_os = "linux")]
    pub fn die_with_parent(parent: c_int) -> io::Result<()> {
        // SAFETY: PR_SET_PDEATHSIG reads one integer argument (passed as `unsigned long`) and
        // only changes a flag on the calling process; getppid and kill take integers only.
        unsafe {
            if prctl(PR_SET_PDEATHSIG, SIGKILL as std::ffi::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            if getppid() != parent {
                kill(getpid(), SIGKILL);
            }
        }
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    pub fn die_with_parent(_parent: c_int) -> io::Result<()> {
        Ok(())
    }

    fn raw_kill(target: c_int, sig: c_int) -> io::Result<()> {
        // SAFETY: `kill` takes two integers, touches no memory of ours and is thread- and
        // async-signal-safe. The callers below guarantee `target` is never 0 or -1 (which
        // would mean "our own group" / "every process we may signal").
        if unsafe { kill(target, sig) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn checked(id: u32, min: u32) -> io::Result<c_int> {
        match c_int::try_from(id) {
            Ok(v) if id >= min => Ok(v),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("refusing to signal id {id}"),
            )),
        }
    }

    /// Sends `sig` (0 = existence check) to one process.
    pub fn signal_pid(pid: u32, sig: c_int) -> io::Result<()> {
        raw_kill(checked(pid, 2)?, sig)
    }

    /// Sends `sig` (0 = existence check) to every process in group `pgid`.
    pub fn signal_group(pgid: u32, sig: c_int) -> io::Result<()> {
        raw_kill(-checked(pgid, 2)?, sig)
    }

    /// Reaps `pid` if it is an exited child of ours. Only called for zombies adopted from a
    /// supervised group, never for a pid some other code spawned and will wait for.
    pub fn reap(pid: u32) -> bool {
        let Ok(pid) = checked(pid, 2) else {
            return false;
        };
        let mut status: c_int = 0;
        // SAFETY: `status` is a valid, writable `int` for the duration of the call; WNOHANG
        // makes the call non-blocking; a positive pid limits it to that one process.
        unsafe { waitpid(pid, &mut status, WNOHANG) == pid }
    }

    #[cfg(target_os = "linux")]
    pub fn set_child_subreaper() -> io::Result<()> {
        // SAFETY: PR_SET_CHILD_SUBREAPER reads one integer argument (passed as `unsigned
        // long`, as the variadic prototype expects) and only changes a flag on this process.
        if unsafe { prctl(PR_SET_CHILD_SUBREAPER, 1 as std::ffi::c_ulong) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn set_child_subreaper() -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "child subreapers are Linux-only",
        ))
    }
}

/// Locks a mutex, ignoring poisoning: these locks guard plain data that stays consistent, and
/// the kill paths must keep working while a panic unwinds.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ---------------------------------------------------------------------------------------------
// /proc

/// The fields of `/proc/<pid>/stat` this module uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ProcStat {
    pid: u32,
    ppid: u32,
    pgrp: u32,
    /// `Z` (zombie) or `X` (dead): no longer running, only waiting to be reaped.
    dead: bool,
    /// Start time in clock ticks since boot; with the pid it identifies a process uniquely.
    start: u64,
}

fn parse_stat(s: &str) -> Option<ProcStat> {
    // "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses, so split at
    // the last ')'.
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let pid = s[..open].trim().parse().ok()?;
    let mut fields = s.get(close + 1..)?.split_ascii_whitespace();
    let state = fields.next()?; // field 3
    let ppid = fields.next()?.parse().ok()?; // field 4
    let pgrp = fields.next()?.parse().ok()?; // field 5
    let start = fields.nth(16)?.parse().ok()?; // field 22
    Some(ProcStat {
        pid,
        ppid,
        pgrp,
        dead: matches!(state, "Z" | "X" | "x"),
        start,
    })
}

fn read_stat(pid: u32) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every process visible in `/proc`, or `None` if `/proc` cannot be read.
fn proc_table() -> Option<Vec<ProcStat>> {
    let dir = std::fs::read_dir("/proc").ok()?;
    let table: Vec<ProcStat> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(read_stat)
        .collect();
    (!table.is_empty()).then_some(table)
}

fn descendants_in(table: &[ProcStat], pid: u32) -> Vec<ProcStat> {
    let mut children: HashMap<u32, Vec<&ProcStat>> = HashMap::new();
    for p in table.iter().filter(|p| !p.dead && p.pid != pid) {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut out = Vec::new();
    let mut queue = VecDeque::from([pid]);
    while let Some(parent) = queue.pop_front() {
        for &c in children.get(&parent).map(Vec::as_slice).unwrap_or_default() {
            out.push(*c);
            queue.push_back(c.pid);
        }
    }
    out
}

/// Pids of all live (non-zombie) descendants of `pid`, found by walking the parent links in
/// `/proc/*/stat`. Empty if `/proc` is unavailable. For tests and diagnostics.
pub fn descendants(pid: u32) -> Vec<u32> {
    proc_table()
        .map(|t| descendants_in(&t, pid).iter().map(|p| p.pid).collect())
        .unwrap_or_default()
}

/// Makes this process a "child subreaper" (Linux `PR_SET_CHILD_SUBREAPER`): orphaned
/// descendants are re-parented to it instead of PID 1. The supervisor then sees (through
/// [`descendants`]) grandchildren whose parent died, and reaps the zombies of its groups
/// itself, which matters where PID 1 never reaps. Process-wide and irreversible; call once,
/// early in `main`. Orphans not from a supervised group are not reaped (they stay zombies
/// until evalgate exits), so other code that spawns processes is unaffected.
pub fn become_child_subreaper() -> io::Result<()> {
    sys::set_child_subreaper()
}

// ---------------------------------------------------------------------------------------------
// Output capture

const STDOUT: usize = 0;
const STDERR: usize = 1;

#[derive(Default)]
struct StreamLog {
    /// Complete lines, oldest first, each with its global sequence number.
    lines: VecDeque<(u64, String)>,
    bytes: usize,
    /// The line being received (no newline yet) and its sequence number.
    partial: Vec<u8>,
    partial_seq: Option<u64>,
}

/// The last [`LOG_CAP`] bytes of each stream, as lines in arrival order across streams.
#[derive(Default)]
struct LogRing {
    next_seq: u64,
    streams: [StreamLog; 2],
}

impl LogRing {
    fn push(&mut self, stream: usize, mut data: &[u8]) {
        while !data.is_empty() {
            self.open_line(stream);
            let s = &mut self.streams[stream];
            let room = MAX_LINE - s.partial.len();
            let newline = data.iter().position(|&b| b == b'\n');
            match newline {
                Some(i) if i <= room => {
                    s.partial.extend_from_slice(&data[..i]);
                    data = &data[i + 1..];
                    self.end_line(stream);
                }
                _ if data.len() >= room => {
                    s.partial.extend_from_slice(&data[..room]);
                    data = &data[room..];
                    self.end_line(stream);
                }
                _ => {
                    s.partial.extend_from_slice(data);
                    data = &[];
                }
            }
        }
    }

    fn open_line(&mut self, stream: usize) {
        if self.streams[stream].partial_seq.is_none() {
            self.streams[stream].partial_seq = Some(self.next_seq);
            self.next_seq += 1;
        }
    }

    fn end_line(&mut self, stream: usize) {
        self.open_line(stream);
        let s = &mut self.streams[stream];
        let seq = s.partial_seq.take().unwrap_or_default();
        let mut line = String::from_utf8_lossy(&s.partial).into_owned();
        s.partial.clear();
        if line.ends_with('\r') {
            line.pop();
        }
        s.bytes += line.len() + 1;
        s.lines.push_back((seq, line));
        while s.bytes > LOG_CAP {
            match s.lines.pop_front() {
                Some((_, old)) => s.bytes -= old.len() + 1,
                None => break,
            }
        }
    }

    /// End of stream: keep an unterminated last line.
    fn finish(&mut self, stream: usize) {
        if !self.streams[stream].partial.is_empty() {
            self.end_line(stream);
        }
        self.streams[stream].partial_seq = None;
    }

    fn tail(&self, n: usize) -> String {
        let mut all: Vec<(u64, std::borrow::Cow<'_, str>)> = Vec::new();
        for s in &self.streams {
            let skip = s.lines.len().saturating_sub(n);
            all.extend(
                s.lines
                    .iter()
                    .skip(skip)
                    .map(|(q, l)| (*q, l.as_str().into())),
            );
            if let (Some(q), false) = (s.partial_seq, s.partial.is_empty()) {
                all.push((q, String::from_utf8_lossy(&s.partial)));
            }
        }
        all.sort_by_key(|(q, _)| *q);
        let skip = all.len().saturating_sub(n);
        let lines: Vec<&str> = all[skip..].iter().map(|(_, l)| l.as_ref()).collect();
        lines.join("\n")
    }
}

fn spawn_reader<R>(mut reader: R, stream: usize, log: Arc<Mutex<LogRing>>, open: Arc<AtomicUsize>)
where
    R: AsyncRead + Unpin + Send + 'static,
{
    open.fetch_add(1, Ordering::SeqCst);
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => lock(&log).push(stream, &buf[..n]),
            }
        }
        lock(&log).finish(stream);
        open.fetch_sub(1, Ordering::SeqCst);
    });
}

// ---------------------------------------------------------------------------------------------
// One child

/// What to launch.
#[derive(Clone, Debug, Default)]
pub struct Spec {
    /// Used in error messages ("cannot start <name>").
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Added to (and overriding) the inherited environment.
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// Give the child a pipe as stdin (otherwise `/dev/null`). The write end stays open until
    /// taken with [`Managed::take_stdio`] or the last handle is dropped, so servers that exit
    /// on stdin EOF keep running.
    pub stdin_piped: bool,
    /// Hand stdout to the caller ([`Managed::take_stdio`]) instead of capturing it; for stdio
    /// MCP servers (set `stdin_piped` too). Stderr is always captured.
    pub take_stdout: bool,
}

impl Spec {
    pub fn new(name: impl Into<String>, program: impl Into<PathBuf>) -> Self {
        Spec {
            name: name.into(),
            program: program.into(),
            ..Spec::default()
        }
    }
}

struct ChildState {
    child: Child,
    /// Set once the leader has been reaped: its status (if known) and a description.
    exit: Option<(Option<ExitStatus>, String)>,
}

struct Slot {
    name: String,
    /// The leader's pid, which is also the process group id.
    pid: u32,
    state: Mutex<ChildState>,
    /// Leader reaped and no live member left: never signal this group again.
    finished: AtomicBool,
    /// Descendants seen outside the group (`setsid`), as (pid, start time).
    escaped: Mutex<Vec<(u32, u64)>>,
    log: Arc<Mutex<LogRing>>,
    readers_open: Arc<AtomicUsize>,
}

impl Slot {
    fn finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }

    /// Non-blocking check of the leader; reaps it if it has exited.
    fn poll_exit(&self) -> Option<(Option<ExitStatus>, String)> {
        let mut st = lock(&self.state);
        if st.exit.is_none() {
            st.exit = match st.child.try_wait() {
                Ok(Some(status)) => Some((Some(status), status.to_string())),
                Ok(None) => None,
                Err(e) => Some((None, format!("exit status unavailable: {e}"))),
            };
        }
        st.exit.clone()
    }

    /// Records descendants of the leader that left its process group.
    fn note_escaped(&self, table: Option<&[ProcStat]>) {
        let Some(table) = table else { return };
        if self.poll_exit().is_some() {
            // The leader is reaped: its pid no longer names our process, so its "children"
            // could be anyone's. (Its own children were re-parented when it exited.)
            return;
        }
        let mut escaped = lock(&self.escaped);
        for p in descendants_in(table, self.pid) {
            if p.pgrp != self.pid && !escaped.contains(&(p.pid, p.start)) {
                escaped.push((p.pid, p.start));
            }
        }
    }

    fn signal(&self, sig: std::ffi::c_int, table: Option<&[ProcStat]>) {
        if self.finished() {
            return;
        }
        let _ = sys::signal_group(self.pid, sig);
        if let Some(table) = table {
            for &(pid, start) in lock(&self.escaped).iter() {
                if table
                    .iter()
                    .any(|p| p.pid == pid && p.start == start && !p.dead)
                {
                    let _ = sys::signal_pid(pid, sig);
                }
            }
        }
    }

    /// Reaps what can be reaped and reports whether this child is completely gone (marking it
    /// finished if so).
    fn settle(&self, table: Option<&[ProcStat]>) -> bool {
        if self.finished() {
            return true;
        }
        let escaped = lock(&self.escaped).clone();
        let ours = |p: &ProcStat| p.pgrp == self.pid || escaped.contains(&(p.pid, p.start));
        let alive = match table {
            Some(table) => {
                let me = std::process::id();
                for p in table {
                    // Zombies of our groups that were re-parented to us (subreaper or PID 1).
                    // The leader itself belongs to tokio and is reaped by `poll_exit`.
                    if p.dead && p.ppid == me && p.pid != self.pid && ours(p) {
                        sys::reap(p.pid);
                    }
                }
                table.iter().any(|p| !p.dead && ours(p))
            }
            None => {
                sys::signal_group(self.pid, 0).is_ok()
                    || escaped
                        .iter()
                        .any(|&(pid, _)| sys::signal_pid(pid, 0).is_ok())
            }
        };
        let leader_gone = self.poll_exit().is_some();
        if leader_gone && !alive {
            if !self.finished.swap(true, Ordering::SeqCst) {
                watchdog::note('-', self.pid);
            }
            true
        } else {
            false
        }
    }
}

fn settle_all(slots: &[Arc<Slot>]) -> bool {
    let table = proc_table();
    slots
        .iter()
        .fold(true, |done, s| s.settle(table.as_deref()) & done)
}

fn signal_all(slots: &[Arc<Slot>], sigs: &[std::ffi::c_int]) {
    let table = proc_table();
    for s in slots {
        s.note_escaped(table.as_deref());
        for &sig in sigs {
            s.signal(sig, table.as_deref());
        }
    }
}

/// `now + d`, saturating far in the future instead of overflowing on huge durations.
fn deadline_after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
}

async fn wait_settled(slots: &[Arc<Slot>], limit: Duration) -> bool {
    let deadline = deadline_after(limit);
    let mut pause = Duration::from_millis(2);
    loop {
        if settle_all(slots) {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(Duration::from_millis(25));
    }
}

/// SIGTERM, wait up to `grace`, SIGKILL, reap.
async fn stop(slots: Vec<Arc<Slot>>, grace: Duration) {
    let slots: Vec<Arc<Slot>> = slots.into_iter().filter(|s| !s.finished()).collect();
    if slots.is_empty() {
        return;
    }
    signal_all(&slots, &[sys::SIGTERM, sys::SIGCONT]);
    if wait_settled(&slots, grace).await {
        return;
    }
    signal_all(&slots, &[sys::SIGKILL]);
    wait_settled(&slots, KILL_WAIT).await;
}

/// SIGKILL and a short, bounded, blocking reap. Never panics.
fn kill_now(slots: &[Arc<Slot>]) {
    let slots: Vec<Arc<Slot>> = slots.iter().filter(|s| !s.finished()).cloned().collect();
    if slots.is_empty() {
        return;
    }
    signal_all(&slots, &[sys::SIGKILL]);
    let deadline = Instant::now() + KILL_NOW_REAP;
    while !settle_all(&slots) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Handle to one spawned child. Cheap to clone; dropping it does not stop the child (the
/// [`Supervisor`] does).
#[derive(Clone)]
pub struct Managed {
    slot: Arc<Slot>,
}

impl std::fmt::Debug for Managed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Managed")
            .field("name", &self.slot.name)
            .field("pid", &self.slot.pid)
            .finish()
    }
}

impl Managed {
    /// The child's pid, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.slot.pid
    }

    pub fn name(&self) -> &str {
        &self.slot.name
    }

    /// Non-blocking: `Some(description)` (e.g. "exit status: 3", "signal: 9 (SIGKILL)") once
    /// the child has exited. Its own children may still be running.
    pub fn try_exited(&self) -> Option<String> {
        self.slot.poll_exit().map(|(_, desc)| desc)
    }

    /// Like [`Managed::try_exited`], with the raw status for callers that need the code.
    pub fn try_exit_status(&self) -> Option<ExitStatus> {
        self.slot.poll_exit().and_then(|(status, _)| status)
    }

    /// Waits up to `timeout` for the child to exit. On exit, also waits briefly for its
    /// output to be drained so that [`Managed::log_tail`] includes the last lines.
    pub async fn wait_exit(&self, timeout: Duration) -> Option<String> {
        let deadline = deadline_after(timeout);
        let mut pause = Duration::from_millis(1);
        let exit = loop {
            if let Some(exit) = self.try_exited() {
                break exit;
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(Duration::from_millis(20));
        };
        let drain_deadline = Instant::now() + DRAIN_WAIT;
        while self.slot.readers_open.load(Ordering::SeqCst) > 0 && Instant::now() < drain_deadline {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        Some(exit)
    }

    /// The last `n` lines the child (and anything sharing its pipes) wrote to stderr and, if
    /// captured, stdout, in arrival order. The two pipes are read independently, so the
    /// interleaving of lines written to both within a few milliseconds is best effort.
    pub fn log_tail(&self, n: usize) -> String {
        lock(&self.slot.log).tail(n)
    }

    /// Stops this child's process group: SIGTERM, wait up to `grace`, SIGKILL, reap.
    pub async fn terminate(&self, grace: Duration) {
        stop(vec![self.slot.clone()], grace).await;
    }

    /// The child's stdin and stdout, once, if it was spawned with both `stdin_piped` and
    /// `take_stdout`.
    pub fn take_stdio(&self) -> Option<(ChildStdin, ChildStdout)> {
        let mut st = lock(&self.slot.state);
        if st.child.stdin.is_none() || st.child.stdout.is_none() {
            return None;
        }
        Some((st.child.stdin.take()?, st.child.stdout.take()?))
    }
}

// ---------------------------------------------------------------------------------------------
// Supervisor

#[derive(Default)]
struct Registry {
    slots: Vec<Arc<Slot>>,
    /// Set by `Drop` and the signal handler: spawning afterwards kills the new child at once.
    closed: bool,
}

struct Inner {
    registry: Mutex<Registry>,
}

impl Inner {
    fn snapshot(&self, close: bool) -> Vec<Arc<Slot>> {
        let mut reg = lock(&self.registry);
        reg.closed |= close;
        reg.slots.clone()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let reg = self.registry.get_mut().unwrap_or_else(|e| e.into_inner());
        reg.closed = true;
        kill_now(&reg.slots);
    }
}

/// Every supervisor alive in this process, for the signal handler.
static ALL: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());
static HANDLERS_INSTALLED: Mutex<bool> = Mutex::new(false);
/// Scratch directories to remove when a signal ends the process.
static SCRATCH: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Owns every child process it spawns. Clones share the same children; when the last clone
/// is dropped, every remaining child group is killed.
#[derive(Clone)]
pub struct Supervisor {
    inner: Arc<Inner>,
}

impl Default for Supervisor {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = lock(&self.inner.registry).slots.len();
        f.debug_struct("Supervisor").field("children", &n).finish()
    }
}

impl Supervisor {
    pub fn new() -> Self {
        let inner = Arc::new(Inner {
            registry: Mutex::new(Registry::default()),
        });
        let mut all = lock(&ALL);
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(&inner));
        Supervisor { inner }
    }

    /// Starts `spec` as the leader of a new process group. Stderr (and stdout unless
    /// `take_stdout`) is captured for [`Managed::log_tail`]. Must be called inside a Tokio
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
        if lock(&self.inner.registry).closed {
            bail!("cannot start {label}: evalgate is shutting down");
        }
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .process_group(0)
            .stdin(if spec.stdin_piped {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        let parent = std::process::id() as std::ffi::c_int;
        // SAFETY: the closure runs in the forked child before exec and only makes
        // async-signal-safe system calls (prctl, getppid, kill); it allocates nothing.
        unsafe {
            cmd.pre_exec(move || sys::die_with_parent(parent));
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start {label} ({})", spec.program.display()))?;
        let Some(pid) = child.id() else {
            let _ = child.start_kill();
            bail!("cannot start {label}: it vanished before its pid could be read");
        };

        let log = Arc::new(Mutex::new(LogRing::default()));
        let readers_open = Arc::new(AtomicUsize::new(0));
        if let Some(err) = child.stderr.take() {
            spawn_reader(err, STDERR, log.clone(), readers_open.clone());
        }
        if !spec.take_stdout
            && let Some(out) = child.stdout.take()
        {
            spawn_reader(out, STDOUT, log.clone(), readers_open.clone());
        }
        let slot = Arc::new(Slot {
            name: label.clone(),
            pid,
            state: Mutex::new(ChildState { child, exit: None }),
            finished: AtomicBool::new(false),
            escaped: Mutex::new(Vec::new()),
            log,
            readers_open,
        });

        let mut reg = lock(&self.inner.registry);
        if reg.closed {
            drop(reg);
            kill_now(std::slice::from_ref(&slot));
            bail!("cannot start {label}: evalgate is shutting down");
        }
        reg.slots.retain(|s| !s.finished());
        reg.slots.push(slot.clone());
        watchdog::note('+', pid);
        Ok(Managed { slot })
    }

    /// Stops every live child's process group: SIGTERM, wait up to `grace` for all members to
    /// be gone, SIGKILL the rest, reap. The supervisor stays usable.
    pub async fn shutdown(&self, grace: Duration) {
        stop(self.inner.snapshot(false), grace).await;
        lock(&self.inner.registry).slots.retain(|s| !s.finished());
    }

    /// SIGKILL to every live child group, then a short bounded reap. Blocking, never panics;
    /// usable from `Drop`, panic paths and signal handlers. The supervisor stays usable.
    pub fn kill_all_now(&self) {
        kill_now(&self.inner.snapshot(false));
    }

    /// On SIGINT or SIGTERM: kill the children of every live supervisor in the process and
    /// exit with 130 or 143. Installed once per process (later calls do nothing); must be
    /// called inside a Tokio runtime, and only works while that runtime runs. Problems are
    /// reported on stderr, not returned, since running without the handler is still possible.
    /// Also removes `dir` if evalgate is stopped by SIGINT/SIGTERM (a directory already gone is
    /// skipped).
    pub fn remove_on_signal(dir: &std::path::Path) {
        lock(&SCRATCH).push(dir.to_path_buf());
    }

    pub fn install_signal_handlers(&self) {
        use tokio::signal::unix::{SignalKind, signal};
        let mut installed = lock(&HANDLERS_INSTALLED);
        if *installed {
            return;
        }
        if tokio::runtime::Handle::try_current().is_err() {
            eprintln!("warning: signal handlers not installed: no Tokio runtime");
            return;
        }
        let (mut int, mut term) = match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(int), Ok(term)) => (int, term),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("warning: signal handlers not installed: {e}");
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
            let sups: Vec<Arc<Inner>> = lock(&ALL).iter().filter_map(Weak::upgrade).collect();
            for sup in &sups {
                kill_now(&sup.snapshot(true));
            }
            // exit() runs no destructors: remove the scratch directories (scratch configs
            // hold API keys) that a normal end would have removed
            for dir in lock(&SCRATCH).drain(..) {
                let _ = std::fs::remove_dir_all(dir);
            }
            eprintln!("evalgate: {name} received, child processes stopped");
            std::process::exit(code);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    const HELPER_ENV: &str = "EVALGATE_PROCESS_SIGNAL_HELPER";

    fn init() {
        // Orphaned grandchildren must come back to us to be reaped: PID 1 may never reap.
        become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    }

    fn sh(name: &str, script: &str) -> Spec {
        Spec {
            args: vec!["-c".into(), script.into()],
            ..Spec::new(name, "/bin/sh")
        }
    }

    /// Running (not a zombie) and present in /proc.
    fn running(pid: u32) -> bool {
        read_stat(pid).is_some_and(|p| !p.dead)
    }

    fn gone(pid: u32) -> bool {
        !Path::new(&format!("/proc/{pid}")).exists()
    }

    async fn eventually(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + limit;
        while !cond() {
            assert!(Instant::now() < deadline, "timed out waiting for: {what}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn wait_for_line(m: &Managed, line: &str) {
        let what = format!("{} to print {line:?}", m.name());
        eventually(&what, Duration::from_secs(10), || {
            m.log_tail(1000).lines().any(|l| l == line)
        })
        .await;
    }

    /// Waits until `pid` has `n` live descendants and returns them.
    async fn wait_descendants(pid: u32, n: usize) -> Vec<u32> {
        let mut found = Vec::new();
        eventually("grandchildren to start", Duration::from_secs(10), || {
            found = descendants(pid);
            found.len() >= n
        })
        .await;
        found
    }

    #[test]
    fn parse_stat_handles_odd_command_names() {
        let line =
            "4242 (we ird) (x)) S 1 4240 4240 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
        let p = parse_stat(line).unwrap();
        assert_eq!(
            (p.pid, p.ppid, p.pgrp, p.dead, p.start),
            (4242, 1, 4240, false, 987654)
        );
        let z = parse_stat(&line.replace(") S ", ") Z ")).unwrap();
        assert!(z.dead);
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn log_ring_is_bounded_keeps_order_and_partial_lines() {
        let mut ring = LogRing::default();
        ring.push(STDERR, b"e1\ne2\n");
        ring.push(STDOUT, b"o1\n");
        ring.push(STDERR, b"e3 no newline yet");
        assert_eq!(ring.tail(3), "e2\no1\ne3 no newline yet");
        ring.push(STDERR, b" done\r\n");
        assert_eq!(ring.tail(1), "e3 no newline yet done");

        for i in 0..20_000 {
            ring.push(STDERR, format!("noise line {i}\n").as_bytes());
        }
        let s = &ring.streams[STDERR];
        assert!(s.bytes <= LOG_CAP, "{} bytes kept", s.bytes);
        assert_eq!(ring.tail(2), "noise line 19998\nnoise line 19999");
        assert_eq!(
            ring.streams[STDOUT].lines.len(),
            1,
            "stdout budget is separate"
        );

        ring.push(STDOUT, &vec![b'x'; MAX_LINE * 2 + 10]);
        ring.finish(STDOUT);
        let tail = ring.tail(3);
        let lens: Vec<usize> = tail.lines().map(str::len).collect();
        assert_eq!(lens, vec![MAX_LINE, MAX_LINE, 10]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn shutdown_kills_grandchildren() {
        init();
        let sup = Supervisor::new();
        let m = sup
            .spawn(sh("tree", "sleep 300 & sleep 300 & wait"))
            .unwrap();
        let grandkids = wait_descendants(m.pid(), 2).await;
        let mut all = grandkids.clone();
        all.push(m.pid());
        let mine = descendants(std::process::id());
        assert!(
            all.iter().all(|p| mine.contains(p)),
            "{all:?} not in {mine:?}"
        );

        sup.shutdown(Duration::from_secs(2)).await;

        let mine = descendants(std::process::id());
        assert!(
            all.iter().all(|p| !mine.contains(p)),
            "{all:?} still in {mine:?}"
        );
        // Reaped right away, not just dead: nothing left in /proc.
        for p in &all {
            assert!(gone(*p), "/proc/{p} still exists: {:?}", read_stat(*p));
        }
        assert!(
            m.try_exited().unwrap().contains("SIGTERM"),
            "{:?}",
            m.try_exited()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn descendant_that_left_the_group_is_killed_too() {
        init();
        let sup = Supervisor::new();
        let m = sup
            .spawn(sh("escaper", "setsid sleep 300 & sleep 300 & wait"))
            .unwrap();
        let mut kids = Vec::new();
        eventually(
            "a grandchild to leave the group",
            Duration::from_secs(10),
            || {
                kids = descendants(m.pid());
                let out = kids
                    .iter()
                    .filter(|p| read_stat(**p).is_some_and(|s| s.pgrp != m.pid()));
                kids.len() == 2 && out.count() == 1
            },
        )
        .await;

        sup.shutdown(Duration::from_secs(2)).await;
        for p in kids.iter().chain([&m.pid()]) {
            assert!(gone(*p), "/proc/{p} still exists: {:?}", read_stat(*p));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn child_ignoring_sigterm_is_killed_after_grace() {
        init();
        let sup = Supervisor::new();
        let m = sup
            .spawn(sh(
                "stubborn",
                r#"trap "" TERM; sleep 300 & echo ready; wait"#,
            ))
            .unwrap();
        wait_for_line(&m, "ready").await;
        let grandkids = wait_descendants(m.pid(), 1).await;

        let grace = Duration::from_millis(400);
        let started = Instant::now();
        m.terminate(grace).await;
        let took = started.elapsed();

        assert!(
            took >= grace,
            "TERM was not ignored? stopped after {took:?}"
        );
        assert!(took < grace + KILL_WAIT, "took {took:?}");
        assert_eq!(m.try_exited().as_deref(), Some("signal: 9 (SIGKILL)"));
        for p in grandkids.iter().chain([&m.pid()]) {
            assert!(gone(*p), "/proc/{p} still exists: {:?}", read_stat(*p));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_the_supervisor_kills_its_children() {
        init();
        let sup = Supervisor::new();
        let clone = sup.clone();
        let m = sup.spawn(sh("dropped", "sleep 300 & wait")).unwrap();
        let mut pids = wait_descendants(m.pid(), 1).await;
        pids.push(m.pid());

        drop(sup);
        assert!(pids.iter().all(|p| running(*p)), "a clone still owns them");
        drop(clone);

        for p in &pids {
            assert!(!running(*p), "{p} survived the drop");
        }
        eventually(
            "the drop to reap everything",
            Duration::from_secs(2),
            || pids.iter().all(|p| gone(*p)),
        )
        .await;
        assert_eq!(m.try_exited().as_deref(), Some("signal: 9 (SIGKILL)"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panic_kills_the_children() {
        init();
        let handle = tokio::runtime::Handle::current();
        let (tx, rx) = std::sync::mpsc::channel();
        let outcome = std::thread::spawn(move || {
            let _rt = handle.enter();
            let sup = Supervisor::new();
            let m = sup.spawn(sh("panicky", "sleep 300 & wait")).unwrap();
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut pids = descendants(m.pid());
            while pids.is_empty() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
                pids = descendants(m.pid());
            }
            pids.push(m.pid());
            tx.send(pids).unwrap();
            panic!("deliberate panic while children run");
        })
        .join();
        assert!(outcome.is_err());
        let pids = rx.recv().unwrap();
        assert_eq!(pids.len(), 2, "{pids:?}");
        for p in &pids {
            assert!(!running(*p), "{p} survived the panic");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn crashed_child_reports_exit_code_and_log_tail() {
        init();
        let sup = Supervisor::new();
        let m = sup
            .spawn(sh(
                "crasher",
                // The pipes are read independently: the pause makes the cross-stream order
                // deterministic for the last assertion.
                "echo to-stdout; sleep 0.2; for i in 1 2 3 4 5; do echo line$i >&2; done; exit 3",
            ))
            .unwrap();
        let exit = m.wait_exit(Duration::from_secs(10)).await;
        assert_eq!(exit.as_deref(), Some("exit status: 3"));
        assert_eq!(m.try_exited().as_deref(), Some("exit status: 3"));
        assert_eq!(m.try_exit_status().and_then(|s| s.code()), Some(3));
        assert_eq!(m.log_tail(2), "line4\nline5");
        assert_eq!(m.log_tail(100).lines().next(), Some("to-stdout"));

        let segv = sup.spawn(sh("segv", "kill -SEGV $$")).unwrap();
        let exit = segv.wait_exit(Duration::from_secs(10)).await.unwrap();
        assert!(exit.starts_with("signal: 11 (SIGSEGV)"), "{exit}");

        let live = sup.spawn(sh("live", "sleep 300")).unwrap();
        assert_eq!(live.try_exited(), None);
        assert_eq!(live.wait_exit(Duration::from_millis(50)).await, None);
        let quick = sup.spawn(sh("quick", "exit 0")).unwrap();
        let exit = quick.wait_exit(Duration::MAX).await;
        assert_eq!(exit.as_deref(), Some("exit status: 0"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn take_stdio_talks_to_the_child() {
        init();
        let sup = Supervisor::new();
        let m = sup
            .spawn(Spec {
                stdin_piped: true,
                take_stdout: true,
                ..Spec::new("cat", "cat")
            })
            .unwrap();
        let (mut stdin, stdout) = m.take_stdio().expect("pipes");
        assert!(m.take_stdio().is_none(), "pipes can be taken once");
        let mut lines = BufReader::new(stdout).lines();
        for word in ["hello", "world"] {
            stdin
                .write_all(format!("{word}\n").as_bytes())
                .await
                .unwrap();
            stdin.flush().await.unwrap();
            let echoed = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
                .await
                .expect("echo in time")
                .unwrap();
            assert_eq!(echoed.as_deref(), Some(word));
        }
        drop(stdin);
        let exit = m.wait_exit(Duration::from_secs(10)).await;
        assert_eq!(exit.as_deref(), Some("exit status: 0"));

        let captured = sup.spawn(Spec::new("echo", "echo")).unwrap();
        assert!(captured.take_stdio().is_none(), "stdout was not requested");
        let err = sup
            .spawn(Spec::new("missing", "/nonexistent/program"))
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("cannot start missing"),
            "{err:#}"
        );
    }

    /// Runs only when re-executed by `signal_handler_kills_children_and_exits` below.
    #[test]
    fn signal_helper() {
        if std::env::var_os(HELPER_ENV).is_none() {
            return;
        }
        init();
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let sup = Supervisor::new();
            let m = sup
                .spawn(sh("victim", "sleep 300 & sleep 300 & wait"))
                .unwrap();
            let mut pids = wait_descendants(m.pid(), 2).await;
            pids.push(m.pid());
            sup.install_signal_handlers();
            let list: Vec<String> = pids.iter().map(u32::to_string).collect();
            println!("PIDS {}", list.join(" "));
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn signal_handler_kills_children_and_exits() {
        init();
        let exe = std::env::current_exe().unwrap();
        for (sig, code) in [(sys::SIGTERM, 143), (sys::SIGINT, 130)] {
            let sup = Supervisor::new();
            let helper = sup
                .spawn(Spec {
                    args: ["--exact", "process::tests::signal_helper", "--nocapture"]
                        .map(String::from)
                        .to_vec(),
                    env: vec![(HELPER_ENV.into(), "1".into())],
                    stdin_piped: true,
                    take_stdout: true,
                    ..Spec::new("signal helper", &exe)
                })
                .unwrap();
            let (_stdin, stdout) = helper.take_stdio().unwrap();
            let mut lines = BufReader::new(stdout).lines();
            let pids: Vec<u32> = tokio::time::timeout(Duration::from_secs(20), async {
                while let Some(line) = lines.next_line().await.unwrap() {
                    if let Some(rest) = line.strip_prefix("PIDS ") {
                        return rest.split(' ').map(|p| p.parse().unwrap()).collect();
                    }
                }
                panic!("helper ended early: {}", helper.log_tail(20));
            })
            .await
            .expect("helper to start");
            assert_eq!(pids.len(), 3);
            assert!(pids.iter().all(|p| running(*p)));

            sys::signal_pid(helper.pid(), sig).unwrap();
            let exit = helper.wait_exit(Duration::from_secs(20)).await;
            assert_eq!(
                helper.try_exit_status().and_then(|s| s.code()),
                Some(code),
                "{exit:?}; {}",
                helper.log_tail(20)
            );
            assert!(helper.log_tail(5).contains("child processes stopped"));
            for p in &pids {
                assert!(!running(*p), "{p} survived the helper's signal handler");
            }
        }
    }
}
