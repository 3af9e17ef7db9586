//! A misbehaving system under test: catalog mismatch, crash mid-run, hang, garbage. Each ends
//! in exit code 3 with a named cause and a partial report, and leaves no process behind.
//! One test in its own binary, so the process-table check sees only its own children.

mod common;
use common::*;
use serde_json::Value;

fn run_fault(dir: &std::path::Path, out: &str, fault: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "retrieval",
        "--sut",
        "reference",
        "--no-baseline",
        "--out",
        out,
        "-q",
    ];
    args.extend_from_slice(extra);
    let o = evalgate_env(dir, &args, &[("EVALGATE_PROXY_FAULT", fault)]);
    assert_eq!(
        code(&o),
        3,
        "{fault}: stdout {} stderr {}",
        stdout(&o),
        stderr(&o)
    );
    // give orphans (if any) a moment to be re-parented to us
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_no_survivors(fault);
    let r = read_json(&dir.join(out).join("report.json"));
    assert_eq!(r["gate"]["verdict"], "error", "{fault}");
    r
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs --features fault-injection"
)]
fn every_failure_of_the_system_under_test_is_named_exit_3_partial_and_leaves_no_orphan() {
    evalgate::infra::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let d = tempdir();
    // only the mismatch case waits briefly: the others must come up even on a loaded machine
    std::fs::write(
        d.path().join("short.toml"),
        "[sut.launch]\nready_timeout = 10\n",
    )
    .unwrap();

    // a catalog that never equals the corpus: the diff names the missing tool
    let r = run_fault(
        d.path(),
        "mismatch",
        "drop-tool=time:convert_time",
        &["--config", "short.toml"],
    );
    assert_eq!(r["failure"]["kind"], "timeout");
    let ctx = r["failure"]["context"].as_str().unwrap();
    // (on a loaded machine other servers may still be connecting: the dropped tool is named anyway)
    assert!(
        ctx.contains("missing [") && ctx.contains("time:convert_time") && ctx.contains("0 extra"),
        "{ctx}"
    );
    assert!(
        ctx.contains("proxy log tail") && ctx.contains("listening on"),
        "{ctx}"
    );

    // a crash mid-run: the exit is named and what was measured before it is kept
    let r = run_fault(d.path(), "crash", "crash-after=30", &[]);
    assert_eq!(r["failure"]["kind"], "crashed");
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("exited") && detail.contains("101"),
        "{detail}"
    );
    let seen = r["retrieval"]["observations"]["runs"][0]["queries"]
        .as_array()
        .unwrap()
        .len();
    assert!(seen > 0 && seen < 109, "{seen} queries observed");
    assert!(r["retrieval"]["metrics"]["recall_at_5"]["mean"].is_number());

    // a hang: bounded by the per-query timeout
    let r = run_fault(d.path(), "hang", "hang-after=10", &["--timeout", "2"]);
    assert_eq!(r["failure"]["kind"], "timeout");
    assert!(
        r["failure"]["context"].as_str().unwrap().contains("query"),
        "{}",
        r["failure"]
    );

    // garbage instead of a result
    let r = run_fault(d.path(), "garbage", "garbage-after=10", &[]);
    assert_eq!(r["failure"]["kind"], "garbage");
    assert!(
        r["failure"]["detail"]
            .as_str()
            .unwrap()
            .contains("not JSON")
            || r["failure"]["detail"].as_str().unwrap().contains("JSON"),
        "{}",
        r["failure"]
    );

    // and the same through the terminal: the cause is printed
    let o = evalgate_env(
        d.path(),
        &[
            "retrieval",
            "--sut",
            "reference",
            "--no-baseline",
            "--out",
            "t",
        ],
        &[("EVALGATE_PROXY_FAULT", "crash-after=5")],
    );
    assert_eq!(code(&o), 3);
    assert!(
        stdout(&o).contains("system under test failed: ") && stdout(&o).contains("crashed"),
        "{}",
        stdout(&o)
    );
    assert_no_survivors("after the crash shown on the terminal");

    // Ctrl-C while the proxy is up (its first search hangs): exit 130, nothing left behind,
    // not even the scratch directory with the proxy's config and API key
    let scratch_root = d.path().join("tmp");
    std::fs::create_dir_all(&scratch_root).unwrap();
    let child = std::process::Command::new(evalgate_bin())
        .args([
            "retrieval",
            "--sut",
            "reference",
            "--no-baseline",
            "--out",
            "int",
            "-q",
            "--timeout",
            "60",
        ])
        .current_dir(d.path())
        .env("EVALGATE_PROXY_FAULT", "hang-after=1")
        .env("TMPDIR", &scratch_root)
        .env_remove("EVALGATE_CONFIG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // wait until the proxy and its replay servers run under evalgate
    let start = std::time::Instant::now();
    // the proxy and its 14 replay servers, all up (the first search then hangs)
    while evalgate::infra::process::descendants(pid).len() < 15 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the proxy and its replay servers never came up: {:?}",
            evalgate::infra::process::descendants(pid)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let st = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(survivors().is_empty(), "after Ctrl-C: {:?}", survivors());
    let left: Vec<_> = std::fs::read_dir(&scratch_root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "scratch left after Ctrl-C: {left:?}");
}
