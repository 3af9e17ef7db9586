//! Processes that escape their process group with `setsid()` do not outlive evalgate (issue 37,
//! item 8): not the child of a `[[scanner]]` after a successful run, not the grandchild of the
//! system under test after evalgate is SIGKILLed. Before, both lived on (re-parented to this
//! test process, a child subreaper, or to PID 1). A binary of its own: it becomes a child
//! subreaper, so an escapee would be re-parented here and seen.

mod common;

use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Kills the escapee whatever the test's outcome (a failing test must not leave it running).
struct Escapee(Option<u32>);

impl Drop for Escapee {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

/// The pid written to `file`, waiting (bounded) for it to appear.
fn pid_in(file: &Path, limit: Duration) -> u32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(start.elapsed() < limit, "{} never written", file.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether `pid` runs (not gone, not a zombie); a zombie of ours is reaped.
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next())
                .unwrap_or("");
            !matches!(state, "Z" | "X")
        }
    }
}

/// Asserts `pid` stops running within 5 s.
fn assert_gone(pid: u32, what: &str) {
    let start = Instant::now();
    while running(pid) {
        let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{what}: the escapee {pid} ({}) survived",
            cmd.replace('\0', " ")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_scanner_child_that_left_with_setsid_is_stopped_after_a_successful_run() {
    evalgate::infra::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let d = tempdir();
    let dir = d.path();
    let pidfile = dir.join("escapee.pid");
    let batch = root().join("tests/fixtures/scanners/batch.py");
    let script = format!(
        "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > {:?}; exec python3 {:?} none \"$1\"",
        pidfile.display().to_string(),
        batch.display().to_string()
    );
    std::fs::write(
        dir.join("evalgate.toml"),
        format!(
            "detectors = [\"scanner\"]\n\n[[scanner]]\nname = \"escaper\"\ncommand = [\"sh\", \"-c\", {script:?}, \"sh\", \"{{file}}\"]\nfilter = '.findings[]? | {{tool: .tool, severity: .level}}'\n"
        ),
    )
    .unwrap();
    let o = evalgate(dir, &["security", "--no-baseline", "--out", "r", "-q"]);
    let pid = pid_in(&pidfile, Duration::from_secs(1));
    let _guard = Escapee(Some(pid));
    assert_eq!(code(&o), 0, "stdout {} stderr {}", stdout(&o), stderr(&o));
    assert_gone(pid, "after a successful scanner run");
}

#[test]
fn a_grandchild_of_the_system_under_test_that_left_with_setsid_dies_with_a_sigkilled_evalgate() {
    evalgate::infra::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let d = tempdir();
    let dir = d.path();
    let pidfile = dir.join("escapee.pid");
    std::fs::write(
        dir.join("evalgate.toml"),
        format!(
            "[sut]\nkind = \"mcp\"\n\n[sut.mcp]\ncommand = [\"python3\", {:?}, \"setsid\", \"a:b\", \"0\"]\nenv = {{ ESCAPEE_PID = {:?} }}\n",
            root().join("tests/fixtures/faulty_mcp.py").display().to_string(),
            pidfile.display().to_string()
        ),
    )
    .unwrap();
    let mut c = evalgate_command(
        dir,
        &[
            "retrieval",
            "--no-baseline",
            "--out",
            "r",
            "-q",
            "--timeout",
            "60",
        ],
    );
    let mut child = c
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // the server is up, its escapee started, and its first search hangs
    let pid = pid_in(&pidfile, Duration::from_secs(30));
    let _guard = Escapee(Some(pid));
    std::thread::sleep(Duration::from_millis(500));
    assert!(running(pid));
    child.kill().unwrap();
    let _ = child.wait();
    assert_gone(pid, "after evalgate was SIGKILLed");
    assert_no_survivors("after evalgate was SIGKILLed");
}
