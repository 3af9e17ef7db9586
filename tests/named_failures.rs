//! Failures named right: a wait that runs out is a `timeout`, an answer
//! that is not MCP is `garbage` at once (not after the whole timeout), whatever the transport
//! and whichever request it was. Each ends in exit 3 with the kind and message asserted.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// Runs `retrieval` with `toml` and `args`; asserts exit 3 and returns report.json and the
/// time taken.
fn failed(dir: &Path, toml: &str, args: &[&str]) -> (Value, Duration) {
    std::fs::write(dir.join("evalgate.toml"), toml).unwrap();
    let _ = std::fs::remove_dir_all(dir.join("r"));
    let mut all = QUICK_RETRIEVAL.to_vec();
    all.extend_from_slice(args);
    let start = Instant::now();
    let o = evalgate(dir, &all);
    let took = start.elapsed();
    assert_eq!(code(&o), 3, "stdout {} stderr {}", stdout(&o), stderr(&o));
    let r = read_json(&dir.join("r/report.json"));
    assert_eq!(r["gate"]["verdict"], "error");
    (r, took)
}

/// An HTTP endpoint that takes `initialize`, opens its event stream and never sends the answer:
/// before, the transport's own request limit fired first ("operation timed out" while reading
/// the body) and the run said `crashed`; it is a `timeout` at `initialize`.
#[test]
fn an_http_server_that_never_answers_initialize_is_a_timeout() {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for mut s in l.incoming().flatten() {
            let mut buf = [0u8; 65536];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n");
            held.push(s);
        }
    });
    let d = tempdir();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (r, took) = failed(
        d.path(),
        "",
        &["--sut", "mcp", "--url", &url, "--timeout", "2"],
    );
    assert_eq!(r["failure"]["kind"], "timeout", "{}", r["failure"]);
    assert_eq!(r["failure"]["seconds"], 2.0, "{}", r["failure"]);
    let ctx = r["failure"]["context"].as_str().unwrap();
    assert!(
        ctx.contains("no answer to MCP initialize within 2 s"),
        "{ctx}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// A stdio server that answers `initialize` and never `tools/list`: before, `crashed`; now a
/// `timeout` naming `tools/list`.
#[test]
fn a_stdio_server_that_never_answers_tools_list_is_a_timeout() {
    let d = tempdir();
    let (r, _) = failed(
        d.path(),
        &faulty_mcp_toml("hang-list", 0),
        &["--timeout", "2"],
    );
    assert_eq!(r["failure"]["kind"], "timeout", "{}", r["failure"]);
    let ctx = r["failure"]["context"].as_str().unwrap();
    assert!(ctx.contains("no answer to tools/list within 2 s"), "{ctx}");
}

/// A stdio answer that starts with `{` but is not JSON: before, rmcp dropped the line and the
/// call waited for the whole timeout (then `crashed`/`timeout`); now `garbage` at once, quoting
/// the line.
#[test]
fn a_stdio_answer_that_starts_with_a_brace_but_is_not_json_is_garbage_at_once() {
    let d = tempdir();
    let (r, took) = failed(d.path(), &faulty_mcp_toml("brace", 0), &["--timeout", "60"]);
    assert_eq!(r["failure"]["kind"], "garbage", "{}", r["failure"]);
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("not a JSON-RPC message") && detail.contains("{this is not json"),
        "{detail}"
    );
    assert!(took < Duration::from_secs(30), "waited {took:?}");
}

/// Robustness with no limit sent (`limit_arg = ""`, the count fixed in `extra_args`): before,
/// every ordinary probe "failed: 112 results for a limit of 10: the limit was ignored", a limit
/// the system was never given. Now those probes are answered, "no limit sent: not checked", and
/// the limit probes are not applicable.
#[test]
fn no_limit_sent_is_not_a_limit_ignored() {
    let d = tempdir();
    let dir = d.path();
    let toml = format!(
        "{}limit_arg = \"\"\nextra_args = {{ limit = 20 }}\n",
        faulty_mcp_toml("ok", 0)
    );
    std::fs::write(dir.join("evalgate.toml"), toml).unwrap();
    let o = evalgate(
        dir,
        &["retrieval", "--no-baseline", "--out", "r", "--timeout", "5"],
    );
    assert_eq!(code(&o), 0, "stdout {} stderr {}", stdout(&o), stderr(&o));
    assert!(!stdout(&o).contains("ignored"), "{}", stdout(&o));
    let r = read_json(&dir.join("r/report.json"));
    let probes = r["robustness"]["probes"].as_array().unwrap();
    assert_eq!(r["robustness"]["failed"], 0, "{}", r["robustness"]);
    for p in probes {
        let id = p["id"].as_str().unwrap();
        let detail = p["detail"].as_str().unwrap();
        if id.starts_with("limit-") {
            assert_eq!(p["outcome"], "not_applicable", "{p}");
        } else {
            assert!(
                ["answered", "refused"].contains(&p["outcome"].as_str().unwrap()),
                "{p}"
            );
            assert!(!detail.contains("ignored"), "{p}");
        }
        if id == "empty" {
            assert_eq!(detail, "112 results (no limit sent: not checked)", "{p}");
        }
    }
}

/// A configured filter that passes the start-up probe (null, {}, [], "") but explodes on a real
/// answer: before, evalgate itself ran out of memory and aborted (exit 134, no report). Now the
/// filter runs in a bounded worker: the explosion is a named failure of the system, exit 3,
/// with the partial report.
#[test]
fn a_filter_that_explodes_on_a_real_answer_is_a_named_failure_not_an_abort() {
    let d = tempdir();
    for (name, explode) in [
        ("collect", "[range(1e9)]"),
        ("doubling", "def f: [., .] | f; f"),
    ] {
        let filter = format!(
            "if type == \"object\" and (.tools | length) > 100 then ({explode}) else .tools[] end"
        );
        let toml = format!(
            "{}preset = \"none\"\nfilter = {filter:?}\n",
            faulty_mcp_toml("ok", 0)
        );
        let (r, took) = failed(d.path(), &toml, &["--timeout", "30"]);
        assert_eq!(r["failure"]["kind"], "garbage", "{name}: {}", r["failure"]);
        let detail = r["failure"]["detail"].as_str().unwrap();
        // out of memory in the worker, or (a slow build collecting) its time limit first
        let failed = format!("jq filter `{filter}` failed: ");
        assert!(
            detail.contains(&format!("{failed}it exploded on this answer: it needed more than 1024 MiB of memory or crashed"))
                || detail.contains(&format!("{failed}it did not finish within 10 s on this answer")),
            "{name}: {detail}"
        );
        assert!(took < Duration::from_secs(60), "{name}: {took:?}");
    }
}

/// The same class over REST: a search endpoint that accepts the connection and never answers
/// is a `timeout`. (A guard: here the measurement's own limit fires before the HTTP client's,
/// which `RestSearch` now also names a timeout instead of a crash.)
#[test]
fn a_rest_endpoint_that_never_answers_is_a_timeout() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().flatten() {
            held.push(s);
        }
    });
    let d = tempdir();
    let url = format!("http://127.0.0.1:{port}/search");
    let (r, took) = failed(
        d.path(),
        "",
        &["--sut", "rest", "--url", &url, "--timeout", "1"],
    );
    assert_eq!(r["failure"]["kind"], "timeout", "{}", r["failure"]);
    assert_eq!(r["failure"]["seconds"], 1.0, "{}", r["failure"]);
    assert!(took < Duration::from_secs(30), "{took:?}");
}
