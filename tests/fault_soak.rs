//! Fault injection end to end, the cases tests/faults.rs does not cover (an upstream replay that
//! dies on start, slow answers, truncated and invalid JSON-RPC, a server that exits mid-call,
//! SIGTERM), then 100 repeated failing runs: every one ends with a named failure, a partial
//! report and exit code 3, and no child process survives any of them.
//! One test in its own binary, so the process-table check sees only its own children.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// A scenario: evalgate.toml contents, extra args, extra env.
struct Case {
    name: &'static str,
    toml: String,
    args: Vec<&'static str>,
    env: Vec<(&'static str, &'static str)>,
}

fn proxy(fault: &'static str, extra: &[&'static str]) -> Case {
    let mut args = vec!["--sut", "reference"];
    args.extend_from_slice(extra);
    Case {
        name: fault,
        toml: String::new(),
        args,
        env: vec![("EVALGATE_PROXY_FAULT", fault)],
    }
}

fn stdio(mode: &'static str, after: u32) -> Case {
    Case {
        name: mode,
        toml: faulty_mcp_toml(mode, after),
        args: vec!["--timeout", "1"],
        env: vec![],
    }
}

/// Runs one failing case; returns the partial report.
fn run(dir: &Path, c: &Case) -> Value {
    std::fs::write(dir.join("evalgate.toml"), &c.toml).unwrap();
    let _ = std::fs::remove_dir_all(dir.join("r"));
    let mut args = QUICK_RETRIEVAL.to_vec();
    args.extend_from_slice(&c.args);
    let o = evalgate_env(dir, &args, &c.env);
    assert_eq!(
        code(&o),
        3,
        "{}: stdout {} stderr {}",
        c.name,
        stdout(&o),
        stderr(&o)
    );
    assert_no_survivors(c.name);
    let r = read_json(&dir.join("r/report.json"));
    assert_eq!(r["gate"]["verdict"], "error", "{}", c.name);
    assert!(
        r["failure"]["kind"].is_string(),
        "{}: {}",
        c.name,
        r["failure"]
    );
    r
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs --features fault-injection"
)]
fn every_injected_fault_is_named_exit_3_partial_and_100_failing_runs_leave_no_process_behind() {
    evalgate::infra::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let d = tempdir();
    let dir = d.path();

    // an upstream that dies as it starts: the catalog never completes, the proxy's log says why
    let mut dead = proxy("none", &[]);
    dead.name = "replay exits on start";
    dead.toml = "[sut.launch]\nready_timeout = 6\n".into();
    dead.env = vec![("EVALGATE_REPLAY_FAULT", "exit-on-start=time")];
    let r = run(dir, &dead);
    assert_eq!(r["failure"]["kind"], "timeout");
    let ctx = r["failure"]["context"].as_str().unwrap();
    assert!(ctx.contains("time:convert_time"), "{ctx}");
    assert!(ctx.contains("upstream \"time\" failed"), "{ctx}");

    // slow answers beyond the per-request limit
    let r = run(dir, &proxy("slow=3000", &["--timeout", "1"]));
    assert_eq!(r["failure"]["kind"], "timeout");
    assert!(r["failure"]["context"].as_str().unwrap().contains("query"));

    // a truncated JSON-RPC line after 178 good answers (128 go to the catalog probe, the rest
    // are the first 50 queries): bounded by the timeout, what came before is kept
    let r = run(dir, &stdio("truncated", 178));
    assert!(
        ["timeout", "crashed", "garbage"].contains(&r["failure"]["kind"].as_str().unwrap()),
        "{}",
        r["failure"]
    );
    let seen = r["retrieval"]["observations"]["runs"][0]["queries"]
        .as_array()
        .map_or(0, |q| q.len());
    // (up to 4 queries are in flight when the fault comes; those are not kept)
    assert!(
        (46..=50).contains(&seen),
        "answers before the fault are kept: {seen}"
    );

    // a line that is JSON but not JSON-RPC
    let r = run(dir, &stdio("invalid", 0));
    assert!(
        ["timeout", "crashed", "garbage"].contains(&r["failure"]["kind"].as_str().unwrap()),
        "{}",
        r["failure"]
    );

    // the server process exits in the middle of a call
    let r = run(dir, &stdio("exit", 2));
    assert_eq!(r["failure"]["kind"], "crashed", "{}", r["failure"]);

    // SIGTERM during a run: exit 143, nothing left behind
    std::fs::write(dir.join("evalgate.toml"), "").unwrap();
    let child = std::process::Command::new(evalgate_bin())
        .args([
            "retrieval",
            "--sut",
            "reference",
            "--no-baseline",
            "--out",
            "term",
            "-q",
            "--timeout",
            "60",
        ])
        .current_dir(dir)
        .env("EVALGATE_PROXY_FAULT", "hang-after=1")
        .env("EVALGATE_DATASETS", root().join("datasets/v0"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let start = Instant::now();
    while evalgate::infra::process::descendants(pid).len() < 15 {
        assert!(start.elapsed() < Duration::from_secs(60), "never came up");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_survivors("SIGTERM");

    // 100 failing runs, cycling through the faults: every one exit 3, none leaves a process
    let cycle = [
        proxy("crash-after=1", &[]),
        proxy("garbage-after=1", &[]),
        proxy("hang-after=1", &["--timeout", "1"]),
        stdio("truncated", 0),
        stdio("invalid", 0),
        stdio("exit", 0),
        stdio("exit", 5),
    ];
    let start = Instant::now();
    let mut kinds = std::collections::BTreeMap::new();
    for i in 0..100 {
        let r = run(dir, &cycle[i % cycle.len()]);
        *kinds
            .entry(r["failure"]["kind"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    eprintln!(
        "100 failing runs in {:.1} s: {kinds:?}",
        start.elapsed().as_secs_f64()
    );
    assert_eq!(kinds.values().sum::<i32>(), 100);
}
