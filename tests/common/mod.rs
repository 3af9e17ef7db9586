//! Helpers shared by the end-to-end tests: run the real binary, build dataset variants.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `evalgate` with `args` in `cwd` (CI-like environment, no colour) on the small starter
/// datasets: `EVALGATE_DATASETS` points at `datasets/v0`, so a test that swaps one file (the
/// corpus, say) gets the other two from v0, and [`shipped`] / [`baseline_copy`] match it.
/// Flags still win. Tests of the shipped default use [`evalgate_default`].
pub fn evalgate(cwd: &Path, args: &[&str]) -> Output {
    base_command(args, cwd)
        .env("EVALGATE_DATASETS", root().join("datasets/v0"))
        .output()
        .expect("evalgate runs")
}

/// The command [`evalgate`] runs, not started yet (to run several at once).
pub fn evalgate_command(cwd: &Path, args: &[&str]) -> Command {
    let mut c = base_command(args, cwd);
    c.env("EVALGATE_DATASETS", root().join("datasets/v0"));
    c
}

/// Runs `evalgate` as a user would: the embedded (v1) datasets unless flags say otherwise.
pub fn evalgate_default(cwd: &Path, args: &[&str]) -> Output {
    base_command(args, cwd).output().expect("evalgate runs")
}

fn base_command(args: &[&str], cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_evalgate"));
    c.args(args).current_dir(cwd).env("NO_COLOR", "1");
    scrub_caller_env(&mut c);
    c
}

/// Removes what the caller's environment would otherwise hand every evalgate a test starts:
/// under GitHub Actions (or act) the `GITHUB_*`, `RUNNER_*`, `ACT` and `CI` variables, which
/// would make it publish into the real job summary, outputs and pull request; and any
/// `EVALGATE_*` setting. A test sets what it needs after this.
pub fn scrub_caller_env(c: &mut Command) {
    for (k, _) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        if k.starts_with("GITHUB_")
            || k.starts_with("RUNNER_")
            || k.starts_with("EVALGATE_")
            || k == "ACT"
            || k == "CI"
        {
            c.env_remove(k);
        }
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

/// One of the shipped dataset files as JSON.
pub fn shipped(name: &str) -> Value {
    let p = root().join("datasets/v0").join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

pub fn write_json(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p
}

pub fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// The starter datasets' baseline (`baselines/v0.json`), copied to `dir/baseline.json`.
pub fn baseline_copy(dir: &Path) -> PathBuf {
    let p = dir.join("baseline.json");
    std::fs::copy(root().join("baselines/v0.json"), &p).unwrap();
    p
}

/// A real MCP server installed by tests/setup-mcp-servers.sh (fails loudly when missing).
pub fn real_server(rel: &str) -> PathBuf {
    let base = std::env::var_os("EVALGATE_TEST_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/mcp-servers"));
    let p = base.join(rel);
    assert!(
        p.exists(),
        "{} is missing: run `bash tests/setup-mcp-servers.sh` first (.ci/run does)",
        p.display()
    );
    p
}

pub fn mcp_time() -> PathBuf {
    real_server("venv/bin/mcp-server-time")
}

pub fn mcp_memory() -> PathBuf {
    real_server("npm/node_modules/.bin/mcp-server-memory")
}

/// `evalgate` with none of the caller's GitHub, act or evalgate settings (a test run inside
/// Actions must not write to the real runner's files), not started yet.
pub fn clean_command(cwd: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(evalgate_bin());
    c.args(args).current_dir(cwd).env("NO_COLOR", "1");
    scrub_caller_env(&mut c);
    c
}

/// A `pull_request` (synchronize) event of PR `number` on `repo` whose head commit is `head`,
/// written to `dir/event.json` as the runner's GITHUB_EVENT_PATH file.
pub fn pull_request_event(dir: &Path, number: u64, head: &str, repo: &str) -> PathBuf {
    let event = serde_json::json!({
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"ref": "feature", "sha": head, "repo": {"full_name": repo}},
            "base": {"ref": "main", "sha": "3333333333333333333333333333333333333333", "repo": {"full_name": repo}}
        },
        "repository": {"full_name": repo}
    });
    write_json(dir, "event.json", &event)
}

pub fn evalgate_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_evalgate"))
}

/// Runs `evalgate` with extra environment variables.
pub fn evalgate_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = base_command(args, cwd);
    c.env_remove("EVALGATE_PROXY_FAULT")
        .env("EVALGATE_DATASETS", root().join("datasets/v0"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("evalgate runs")
}

/// This test process's descendants still alive, with their command lines (for no-orphan checks;
/// meaningful in a test binary of its own that became a child subreaper).
pub fn survivors() -> Vec<String> {
    evalgate::infra::process::descendants(std::process::id())
        .into_iter()
        .filter_map(|p| {
            std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                .ok()
                .map(|c| format!("{p}: {}", c.replace('\0', " ")))
        })
        .collect()
}

/// Waits (bounded, 5 s) until no descendant of this test process is alive; fails naming those
/// left. Meaningful in a test binary of its own that became a child subreaper.
pub fn assert_no_survivors(what: &str) {
    let start = std::time::Instant::now();
    loop {
        let left = survivors();
        if left.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{what}: processes survived: {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The directory `sub` of a package installed by tests/setup-mcp-servers.sh under
/// target/mcp-servers/`pkg` that holds `bin` (`bin` for a venv, `node_modules/.bin` for npm).
/// Fails the test when it is missing: the setup installs it from a registry wherever the tests
/// run (scripts/test.sh calls it), so a missing one is a broken setup, never a pass.
pub fn installed_in(pkg: &str, sub: &str, bin: &str) -> PathBuf {
    let dir = root().join("target/mcp-servers").join(pkg).join(sub);
    assert!(
        dir.join(bin).is_file(),
        "{pkg} is not installed here: {} is missing (run `bash tests/setup-mcp-servers.sh`; scripts/test.sh does)",
        dir.join(bin).display()
    );
    dir
}

/// Every query's retrieved list in a report, in order (two runs agree list for list).
pub fn retrieved_lists(r: &Value) -> Vec<Value> {
    r["retrieval"]["per_query"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["retrieved"].clone())
        .collect()
}

/// A server on 127.0.0.1 that reads each request's line and headers and sends back
/// `respond(head)`, a whole HTTP response; returns its port.
pub fn http_server(respond: impl Fn(&str) -> String + Send + 'static) -> u16 {
    use std::io::{BufRead, BufReader, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut r = BufReader::new(s);
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let _ = r.into_inner().write_all(respond(&head).as_bytes());
        }
    });
    port
}

/// A server on 127.0.0.1 that answers every request 401 and echoes the request back (its
/// line and headers, credentials included), as careless servers and APIs do in their errors.
pub fn echo_401_server() -> u16 {
    http_server(|head| {
        let body = serde_json::json!({ "message": format!("Bad credentials, you sent: {head}") })
            .to_string();
        format!(
            "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    })
}

/// `evalgate.toml` for tests/fixtures/faulty_mcp.py as `--sut mcp` over stdio: `mode` after
/// `after` good answers, each search answering all 112 v0 corpus ids (its catalog is complete
/// after one probe round).
#[allow(dead_code)]
pub fn faulty_mcp_toml(mode: &str, after: u32) -> String {
    let script = root().join("tests/fixtures/faulty_mcp.py");
    let corpus = read_json(&root().join("datasets/v0/corpus.json"));
    let ids: Vec<&str> = corpus["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool_id"].as_str().unwrap())
        .collect();
    format!(
        "[sut]\nkind = \"mcp\"\n\n[sut.mcp]\ncommand = [\"python3\", {:?}, \"{mode}\", \"{}\", \"{after}\"]\n",
        script.display().to_string(),
        ids.join(",")
    )
}

/// `retrieval` with no baseline, no robustness probes, quiet, reports in `r`: what a test that
/// looks at one measurement runs (its own flags appended).
#[allow(dead_code)]
pub const QUICK_RETRIEVAL: [&str; 7] = [
    "retrieval",
    "--no-baseline",
    "--robustness",
    "off",
    "--out",
    "r",
    "-q",
];
