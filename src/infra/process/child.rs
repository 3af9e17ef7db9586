//! One child: what to launch ([`Spec`]), how it is started (leader of its own process group,
//! parent-death signal, output captured), the handle callers hold ([`Managed`]), and how groups
//! of children are stopped (SIGTERM, grace, SIGKILL) and reaped (also the zombies of our groups
//! re-parented to us as a child subreaper).

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::log::{LogRing, STDERR, STDOUT, spawn_reader};
use super::procfs::{ProcStat, descendants_in, proc_table};
use super::{lock, sys, watchdog};

/// How long `wait_exit` waits, after the leader exited, for the output readers to drain.
const DRAIN_WAIT: Duration = Duration::from_millis(250);

/// What to launch.
#[derive(Clone, Debug, Default)]
pub struct Spec {
    /// Used in error messages ("cannot start `<name>`").
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// What the configuration names for this child: added to (and overriding) the part of
    /// evalgate's environment every child gets ([`super::env`]); nothing else is inherited.
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// Give the child a pipe as stdin (otherwise `/dev/null`) and hand it and stdout to the
    /// caller ([`Managed::take_stdio`]) instead of capturing stdout; for stdio MCP servers.
    /// Stderr is always captured. The write end stays open until taken or the last handle is
    /// dropped, so servers that exit on stdin EOF keep running.
    pub stdio: bool,
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

pub(super) struct Slot {
    /// The leader's pid, which is also the process group id.
    pub(super) pid: u32,
    state: Mutex<ChildState>,
    /// Leader reaped and no live member left: never signal this group again.
    finished: AtomicBool,
    /// Descendants seen outside the group (`setsid`), as (pid, start time).
    escaped: Mutex<Vec<(u32, u64)>>,
    /// The mark in this child's environment ([`super::owner`]).
    mark: String,
    /// Adopted orphans already read and found not to carry `mark`, as (pid, start time).
    foreign: Mutex<Vec<(u32, u64)>>,
    log: Arc<Mutex<LogRing>>,
}

impl Slot {
    pub(super) fn finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }

    /// Non-blocking check of the leader; reaps it if it has exited.
    pub(super) fn poll_exit(&self) -> Option<(Option<ExitStatus>, String)> {
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

    /// Records the orphans evalgate adopted (as a child subreaper) that carry this child's
    /// mark, and their descendants: what escaped the group and outlived its parent.
    pub(super) fn adopt(&self, table: &[ProcStat]) {
        let me = std::process::id();
        let mut found = Vec::new();
        {
            let escaped = lock(&self.escaped);
            let mut foreign = lock(&self.foreign);
            for p in table {
                let key = (p.pid, p.start);
                if p.dead
                    || p.ppid != me
                    || p.pid == self.pid
                    || escaped.contains(&key)
                    || foreign.contains(&key)
                {
                    continue;
                }
                if super::owner::marks_of(p.pid).contains(&self.mark) {
                    found.push(*p);
                } else {
                    foreign.push(key);
                }
            }
            foreign.retain(|k| table.iter().any(|p| (p.pid, p.start) == *k));
        }
        self.note(
            found
                .into_iter()
                .flat_map(|p| std::iter::once(p).chain(descendants_in(table, p.pid))),
        );
    }

    /// Adds `procs` to the escaped ones, each once.
    fn note(&self, procs: impl IntoIterator<Item = ProcStat>) {
        let mut escaped = lock(&self.escaped);
        for p in procs {
            if !escaped.contains(&(p.pid, p.start)) {
                escaped.push((p.pid, p.start));
            }
        }
    }

    /// Records descendants of the leader that left its process group.
    pub(super) fn note_escaped(&self, table: Option<&[ProcStat]>) {
        let Some(table) = table else { return };
        self.adopt(table);
        if self.poll_exit().is_some() {
            // The leader is reaped: its pid no longer names our process, so its "children"
            // could be anyone's. (Its own children were re-parented when it exited.)
            return;
        }
        self.note(
            descendants_in(table, self.pid)
                .into_iter()
                .filter(|p| p.pgrp != self.pid),
        );
    }

    pub(super) fn signal(&self, sig: Signal, table: Option<&[ProcStat]>) {
        if self.finished() {
            return;
        }
        let _ = sys::signal_group(self.pid, Some(sig));
        if let Some(table) = table {
            for &(pid, start) in lock(&self.escaped).iter() {
                if table
                    .iter()
                    .any(|p| p.pid == pid && p.start == start && !p.dead)
                {
                    let _ = sys::signal_pid(pid, Some(sig));
                }
            }
        }
    }

    /// Reaps what can be reaped and reports whether this child is completely gone (marking it
    /// finished if so).
    pub(super) fn settle(&self, table: Option<&[ProcStat]>) -> bool {
        if self.finished() {
            return true;
        }
        if let Some(table) = table {
            self.adopt(table);
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
                sys::signal_group(self.pid, None).is_ok()
                    || escaped
                        .iter()
                        .any(|&(pid, _)| sys::signal_pid(pid, None).is_ok())
            }
        };
        let gone = self.poll_exit().is_some() && !alive;
        if gone && !self.finished.swap(true, Ordering::SeqCst) {
            watchdog::note('-', self.pid);
        }
        gone
    }
}

/// Makes a short-lived helper started outside a [`super::Supervisor`] (a synchronous check that
/// must run before any runtime exists) die with evalgate: its own process group, and killed by
/// the kernel when evalgate goes, even by SIGKILL. The caller still waits for it and kills it
/// on its own time limit.
pub fn die_with_evalgate(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = Pid::this();
    cmd.process_group(0);
    // SAFETY: the closure runs in the forked child before exec. `die_with_parent` makes only
    // async-signal-safe system calls (prctl, getppid, getpid, kill) through nix's thin,
    // allocation-free wrappers, and its error is a bare errno (see `sys`).
    unsafe {
        cmd.pre_exec(move || sys::die_with_parent(parent));
    }
}

/// Starts `spec` (labelled `label` in errors) as the leader of a new process group, with its
/// output readers running. The caller registers the returned slot with its supervisor.
pub(super) fn start(spec: &Spec, label: &str) -> anyhow::Result<Arc<Slot>> {
    let (mark, marks) = super::owner::next_mark();
    // a relative program with a directory part (`bin/mcpproxy`, `./proxy`) names a file from
    // evalgate's own directory, not from the child's (a launch runs in its scratch directory)
    let program = match spec.program.components().count() > 1 && spec.program.is_relative() {
        true => std::path::absolute(&spec.program)?,
        false => spec.program.clone(),
    };
    let mut cmd = Command::new(program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(super::env::for_child())
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(super::owner::VAR, marks)
        .stdin(if spec.stdio {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    // its own process group, and killed by the kernel when evalgate goes
    die_with_evalgate(cmd.as_std_mut());
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {label} ({})", spec.program.display()))?;
    let Some(pid) = child.id() else {
        let _ = child.start_kill();
        bail!("cannot start {label}: it vanished before its pid could be read");
    };

    let log = Arc::new(Mutex::new(LogRing::default()));
    if let Some(err) = child.stderr.take() {
        spawn_reader(err, STDERR, log.clone());
    }
    if !spec.stdio
        && let Some(out) = child.stdout.take()
    {
        spawn_reader(out, STDOUT, log.clone());
    }
    Ok(Arc::new(Slot {
        pid,
        state: Mutex::new(ChildState { child, exit: None }),
        finished: AtomicBool::new(false),
        escaped: Mutex::new(Vec::new()),
        mark,
        foreign: Mutex::new(Vec::new()),
        log,
    }))
}

/// Handle to one spawned child. Cheap to clone; dropping it does not stop the child (the
/// [`Supervisor`](super::Supervisor) does).
#[derive(Clone)]
pub struct Managed {
    pub(super) slot: Arc<Slot>,
}

impl Managed {
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
        let mut exit = None;
        poll_until(timeout, 1, 20, || {
            exit = self.try_exited();
            exit.is_some()
        })
        .await;
        let exit = exit?;
        let drained = || lock(&self.slot.log).readers == 0;
        poll_until(DRAIN_WAIT, 2, 2, drained).await;
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

    /// The child's stdin and stdout, once, if it was spawned with [`Spec::stdio`] (the two are
    /// taken together, so stdin is there only while stdout is).
    pub fn take_stdio(&self) -> Option<(ChildStdin, ChildStdout)> {
        let mut st = lock(&self.slot.state);
        Some((st.child.stdin.take()?, st.child.stdout.take()?))
    }
}

/// After `SIGKILL`, how long `shutdown`/`terminate` wait for the kernel to finish the job.
pub(super) const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long the synchronous kill (a dropped supervisor, a signal) spends reaping after `SIGKILL`.
const KILL_NOW_REAP: Duration = Duration::from_millis(250);

fn settle_all(slots: &[Arc<Slot>]) -> bool {
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
async fn poll_until(
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
