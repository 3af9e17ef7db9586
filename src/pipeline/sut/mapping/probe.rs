//! A filter that never ends (`def f: f; f`) or recurses until the stack is gone (`def f: [f];
//! f`) would hang evalgate or abort it without a report. Before a user's filter is used it runs
//! once, in a child process of evalgate's own binary, on small inputs (`null`, `{}`, `[]`, `""`):
//! one that does not finish within [`LIMIT`] or dies is refused as bad input.

use serde_json::json;
use std::io::Read;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The hidden first argument that makes the binary a probe.
pub const ARG: &str = "__evalgate-jq-probe";
/// How long the probe may take.
pub const LIMIT: Duration = Duration::from_secs(3);

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Called by the command line's entry point: this process is evalgate's binary, which can
/// run itself as a probe (a library user or a unit test cannot, so nothing is probed there).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// The probe process: compiles and runs the filter given as the next argument on the
/// sample inputs; exit 0 when every run finished (an error is a finish too).
pub fn run(filter: &str) -> i32 {
    let Ok(m) = super::Mapper::new(filter, super::IdStyle::Auto) else {
        return 0;
    };
    for input in [json!(null), json!({}), json!([]), json!("")] {
        let _ = m.run(&input);
    }
    0
}

/// Whether this process can run itself as a probe or a [`worker`](super::worker).
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Runs the probe; `Err` says why the filter is refused.
pub fn check(filter: &str) -> Result<(), String> {
    if !ENABLED.load(Ordering::Relaxed) {
        return Ok(());
    }
    // a filter that never ends must not outlive an evalgate that is killed meanwhile
    let spawned = super::self_exec(ARG, filter).and_then(|mut cmd| {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
    });
    let Ok(mut child) = spawned else {
        return Ok(());
    };
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) if st.success() => return Ok(()),
            Ok(Some(st)) => {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = (&mut e).take(4096).read_to_string(&mut err);
                }
                let why = if err.contains("overflow") {
                    "it recursed without end (stack overflow)".to_string()
                } else {
                    format!("it crashed ({st})")
                };
                return Err(format!(
                    "{why} when run on null, {{}}, [] or \"\"; a recursive `def` needs a case that stops"
                ));
            }
            Ok(None) if start.elapsed() < LIMIT => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "it did not finish within {} s on null, {{}}, [] or \"\" (a filter that never ends, such as `def f: f; f`)",
                    LIMIT.as_secs()
                ));
            }
            Err(_) => return Ok(()),
        }
    }
}
