//! A configured filter runs in a child process of evalgate's own binary, bounded: the start-up
//! [`probe`](super::probe) runs it on small inputs only, and a filter can pass it and still
//! explode on a real answer (`[range(1e9)]`, `def f: [., .] | f; f` under a condition on the
//! answer's shape). In evalgate's own process that is an abort (out of memory: no report) or a
//! hang. In the worker, memory is capped ([`MEMORY`], `RLIMIT_AS`), every application has a
//! time limit ([`LIMIT`]) and the answer's size is capped ([`MAX_ANSWER`]): an explosion is the
//! worker's death or its silence, which the caller turns into a failed mapping of that answer
//! (the system under test failed, exit 3, with the partial report), never evalgate's abort.
//!
//! Protocol: one JSON payload per line on the worker's stdin; one line back per payload,
//! `{"ok": [outputs]}` or `{"err": "message"}`. The worker is started on first use, lives as
//! long as its [`Mapper`](super::Mapper) (stdin EOF ends it), dies with evalgate (parent-death
//! signal), and is restarted after a failure. It is not a supervised child (like the probe, it
//! is synchronous and bounded by evalgate's own limits) and takes no environment beyond the
//! allow-list.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// The hidden first argument that makes the binary a filter worker.
pub const ARG: &str = "__evalgate-jq-worker";
/// How long one application of the filter may take.
pub const LIMIT: Duration = Duration::from_secs(10);
/// The worker's address-space limit.
pub const MEMORY: u64 = 1 << 30;
/// The largest answer (the filter's outputs as JSON) read back.
pub const MAX_ANSWER: usize = crate::infra::http::MAX_ANSWER;

/// The worker process: compiles the filter given as the next argument, caps its own memory,
/// then answers each payload line. Exit 0 at stdin EOF.
pub fn run(filter: &str) -> i32 {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_AS, MEMORY, MEMORY);
    let Ok(compiled) = super::jaq::compile(filter) else {
        return 2;
    };
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return 0 };
        let answer = match serde_json::from_str::<Value>(&line) {
            Err(e) => serde_json::json!({ "err": format!("the payload is not JSON: {e}") }),
            Ok(payload) => match super::jaq::run(&compiled, &payload, super::MAX_RESULTS) {
                Ok(values) => serde_json::json!({ "ok": values }),
                Err(e) => serde_json::json!({ "err": e }),
            },
        };
        let mut text = answer.to_string();
        if text.len() > MAX_ANSWER {
            text = serde_json::json!({
                "err": format!("the filter's outputs are larger than {} MiB", MAX_ANSWER >> 20)
            })
            .to_string();
        }
        // compact JSON: one line, never a workflow command (it starts with `{`)
        crate::outln!("{text}");
    }
    0
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
}

impl Running {
    fn start(filter: &str) -> std::io::Result<Running> {
        let mut child = super::self_exec(ARG, filter)?
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("the worker's pipes are missing"));
        };
        let (tx, answers) = mpsc::channel();
        std::thread::spawn(move || {
            // each line bounded: a line over the cap ends the reading (the worker is broken)
            let mut r = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                let n = std::io::Read::take(&mut r, MAX_ANSWER as u64 + 1024)
                    .read_until(b'\n', &mut line)
                    .unwrap_or(0);
                let sent = |line: &[u8]| tx.send(String::from_utf8_lossy(line).into_owned());
                if n == 0 || !line.ends_with(b"\n") || sent(&line).is_err() {
                    return;
                }
            }
        });
        Ok(Running {
            child,
            stdin,
            answers,
        })
    }

    fn stop(mut self) -> String {
        let _ = self.child.kill();
        self.child
            .wait()
            .map_or_else(|e| e.to_string(), |st| st.to_string())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The worker of one [`Mapper`](super::Mapper), shared by its clones; applications are one at
/// a time.
#[derive(Clone)]
pub struct Worker {
    filter: Arc<str>,
    running: Arc<Mutex<Option<Running>>>,
}

impl Worker {
    /// A worker for `filter` when evalgate's binary can run one (the command line enabled the
    /// [`probe`](super::probe)); `None` in a library user or a unit test.
    pub fn for_filter(filter: &str) -> Option<Worker> {
        super::probe::enabled().then(|| Worker {
            filter: filter.into(),
            running: Arc::default(),
        })
    }

    /// Applies the filter to `payload` in the worker: its outputs, or why there are none.
    pub fn apply(&self, payload: &Value) -> Result<Vec<Value>, String> {
        let mut guard = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(
                Running::start(&self.filter)
                    .map_err(|e| format!("cannot start the filter's worker process: {e}"))?,
            );
        }
        let w = guard.as_mut().expect("started above");
        let line = payload.to_string();
        let sent = writeln!(w.stdin, "{line}").and_then(|_| w.stdin.flush());
        let answer = match sent {
            Ok(()) => w.answers.recv_timeout(LIMIT),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(text) => {
                let v: Value = serde_json::from_str(&text)
                    .map_err(|e| format!("the filter's worker answered garbage: {e}"))?;
                match (v.get("ok"), v.get("err")) {
                    (Some(Value::Array(values)), _) => Ok(values.clone()),
                    (_, Some(Value::String(e))) => Err(e.clone()),
                    _ => Err("the filter's worker answered garbage".into()),
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = guard.take().map(Running::stop);
                Err(format!(
                    "it did not finish within {} s on this answer (stopped; a filter that runs away on some shape of answer)",
                    LIMIT.as_secs()
                ))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = guard.take().map(Running::stop).unwrap_or_default();
                Err(format!(
                    "it exploded on this answer: it needed more than {} MiB of memory or crashed ({status}); evalgate stopped it",
                    MEMORY >> 20
                ))
            }
        }
    }
}
