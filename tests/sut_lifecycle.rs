//! The lifecycle of a system under test, end to end with real programs nobody here wrote:
//! `sleep` (coreutils) as a stdio server that never answers `initialize`; the real dehydrator
//! proxy (PyPI, tests/setup-mcp-servers.sh) started through a shell that forks background
//! children, run to success, to a gate failure, and killed with SIGTERM and SIGKILL — no
//! process survives any of them; and a slowly warming index (the reference proxy with an
//! upstream that takes seconds to start) measured with the same numbers as a warm one.
//!
//! One test in its own binary: the no-survivor checks see only this binary's children.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The background children the wrapped proxy forks: one stays its child, one is orphaned at
/// once (its parent subshell exits), so it is re-parented away from the proxy.
const FORKS: &str = "(sleep 7919 &); sleep 7920 &";

/// examples/dehydrator/evalgate.toml with the proxy started through `sh -c` that forks first.
fn forking_dehydrator(dir: &Path) -> PathBuf {
    let example = std::fs::read_to_string(root().join("examples/dehydrator/evalgate.toml"))
        .unwrap()
        .replace(
            "command = [\"dehydrator-mcp\"]",
            &format!("command = [\"sh\", \"-c\", \"{FORKS} exec dehydrator-mcp\"]"),
        );
    assert!(
        example.contains("sh\", \"-c\""),
        "the example's command line changed"
    );
    let p = dir.join("forking.toml");
    std::fs::write(&p, example).unwrap();
    p
}

fn eval_command(dir: &Path, bin: &Path, config: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(evalgate_bin());
    c.args(["retrieval", "--config", config.to_str().unwrap()])
        .args(["--robustness", "off", "-q"])
        .args(extra)
        .current_dir(dir)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("EVALGATE_DATASETS", root().join("datasets/v0"))
        .env_remove("EVALGATE_PROXY_FAULT")
        .env_remove("EVALGATE_REPLAY_FAULT")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Starts a run, waits until the forked `sleep 7920` is alive under it, sends `signal`.
fn kill_mid_run(dir: &Path, bin: &Path, config: &Path, signal: &str) -> std::process::Output {
    let child = eval_command(dir, bin, config, &["--no-baseline", "--out", signal])
        .spawn()
        .unwrap();
    let pid = child.id();
    let start = Instant::now();
    loop {
        let forked = evalgate::infra::process::descendants(pid)
            .into_iter()
            .any(|p| {
                std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| c.starts_with("sleep\u{0}7920"))
            });
        if forked {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never came up");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    child.wait_with_output().unwrap()
}

fn metrics(r: &Value) -> Value {
    r["retrieval"]["metrics"].clone()
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs --features fault-injection"
)]
fn no_wait_unbounded_no_child_survives_and_a_warming_index_is_waited_for() {
    evalgate::infra::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let d = tempdir();
    let dir = d.path();

    // 1. a stdio server that never answers initialize (`sleep`): exit 3 within the timeout,
    //    and -q still prints the cause on one line
    std::fs::write(
        dir.join("mute.toml"),
        "[sut]\nkind = \"mcp\"\n\n[sut.mcp]\ncommand = [\"sleep\", \"3600\"]\n",
    )
    .unwrap();
    let started = Instant::now();
    let o = evalgate_env(
        dir,
        &[
            "retrieval",
            "--config",
            "mute.toml",
            "--no-baseline",
            "--robustness",
            "off",
            "--timeout",
            "2",
            "--out",
            "mute",
            "-q",
        ],
        &[],
    );
    let took = started.elapsed();
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "-q prints the cause on one line: {err}");
    assert!(lines[0].starts_with("SYSTEM UNDER TEST FAILED: "), "{err}");
    assert!(lines[0].contains("initialize"), "{err}");
    let r = read_json(&dir.join("mute/report.json"));
    assert_eq!(r["failure"]["kind"], "timeout", "{}", r["failure"]);
    assert_no_survivors("a server that never answers initialize");

    // 2. a SUT answering every search with nothing: never a number. Its catalog is empty
    //    (exit 3 naming that); told to measure a partial catalog anyway, all-empty answers are
    //    exit 3 on their own
    let faulty = root().join("tests/fixtures/faulty_mcp.py");
    let empty = format!(
        "[sut]\nkind = \"mcp\"\n\n[sut.mcp]\ncommand = [\"python3\", {:?}, \"ok\", \"\"]\n",
        faulty.display().to_string()
    );
    std::fs::write(dir.join("empty.toml"), &empty).unwrap();
    std::fs::write(
        dir.join("empty-partial.toml"),
        format!(
            "{empty}\n[sut.catalog]\nallow_partial = true\n\n[sut.launch]\nready_timeout = 3\n"
        ),
    )
    .unwrap();
    for (config, needle) in [
        ("empty.toml", "0/112 tools"),
        ("empty-partial.toml", "answers was empty"),
    ] {
        let o = evalgate_env(
            dir,
            &[
                "retrieval",
                "--config",
                config,
                "--no-baseline",
                "--robustness",
                "off",
                "--out",
                "empty",
                "-q",
            ],
            &[],
        );
        assert_eq!(code(&o), 3, "{config}: {}", stderr(&o));
        let r = read_json(&dir.join("empty/report.json"));
        let detail = r["failure"].to_string();
        assert!(detail.contains(needle), "{config}: {detail}");
        assert_eq!(r["gate"]["verdict"], "error");
    }
    assert_no_survivors("an all-empty system");

    // 3. a slowly warming index: the reference proxy serves at once and connects its upstreams
    //    in the background; `github` (the largest server) takes 6 s to start. The coverage probe
    //    waits for it, and the numbers equal a warm run's.
    let proxy = format!(
        "[sut]\nkind = \"launch\"\nname = \"reference\"\n\n[sut.launch]\ncommand = [{:?}, \"proxy\", \"--mcpproxy-config\", \"{{config}}\", \"--listen\", \"{{listen}}\"]\n\n[sut.catalog]\ncheck = \"search\"\n",
        evalgate_bin().display().to_string()
    );
    std::fs::write(dir.join("reference.toml"), proxy).unwrap();
    let args = |out: &'static str| {
        [
            "retrieval",
            "--config",
            "reference.toml",
            "--no-baseline",
            "--robustness",
            "off",
            "--out",
            out,
        ]
    };
    let o = evalgate_env(dir, &args("warm"), &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let warm = read_json(&dir.join("warm/report.json"));
    let started = Instant::now();
    let o = evalgate_env(
        dir,
        &args("cold"),
        &[("EVALGATE_REPLAY_FAULT", "slow-start=github:6")],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(started.elapsed() >= Duration::from_secs(6));
    let err = stderr(&o);
    assert!(
        err.contains("catalog probe round 2"),
        "the probe saw the cold index and waited: {err}"
    );
    let cold = read_json(&dir.join("cold/report.json"));
    assert_eq!(metrics(&cold), metrics(&warm));
    assert_eq!(retrieved_lists(&cold), retrieved_lists(&warm));
    assert_eq!(cold["retrieval"]["catalog"]["seen"], 112);
    assert!(cold["retrieval"]["catalog"]["rounds"].as_u64().unwrap() >= 3);
    assert_no_survivors("the reference proxy");

    // 4. a proxy (the real dehydrator) that forks background children: nothing survives a
    //    success, a gate failure, SIGTERM or SIGKILL of evalgate
    let bin = installed_in("dehydrator", "bin", "dehydrator-mcp");
    let config = forking_dehydrator(dir);
    let o = eval_command(dir, &bin, &config, &["--no-baseline", "--out", "ok"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "-q prints nothing on success");
    assert_no_survivors("after success");

    // the embedded retriever's v0 baseline is above dehydrator: a gate failure, exit 1, and -q
    // names each failed check on its own line, then the verdict
    let baseline = root().join("baselines/v0.json");
    let o = eval_command(
        dir,
        &bin,
        &config,
        &["--baseline", baseline.to_str().unwrap(), "--out", "fail"],
    )
    .output()
    .unwrap();
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.is_empty());
    let (verdict, checks) = err
        .lines()
        .collect::<Vec<_>>()
        .split_last()
        .map(|(v, c)| (*v, c.to_vec()))
        .unwrap();
    assert!(
        checks.iter().all(|l| l.starts_with("FAILED ")),
        "one line per failed check: {err}"
    );
    assert!(verdict.starts_with("verdict: fail"), "{err}");
    assert!(err.contains("FAILED retrieval Recall@5"), "{err}");
    assert_no_survivors("after a gate failure");

    let o = kill_mid_run(dir, &bin, &config, "TERM");
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert_no_survivors("after SIGTERM");

    let o = kill_mid_run(dir, &bin, &config, "KILL");
    assert_eq!(o.status.code(), None, "killed by a signal");
    assert_no_survivors("after SIGKILL");
}
