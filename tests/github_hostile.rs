//! The GitHub side of hostile input: every GitHub sink is neutralised (the check run as posted
//! and as written under act, the step outputs, the `::error` lines), and a GitHub API
//! that never answers, or answers forever, is a bounded, named warning that keeps the verdict's
//! exit code).

mod common;
#[path = "fake_github/mod.rs"]
mod fake_github;

use common::*;
use fake_github::{FakeGitHub, FakeOptions};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

const REPO: &str = "acme/widgets";
const HEAD: &str = "1111111111111111111111111111111111111111";
const PR: u64 = 42;

/// Every kind of hostile text at once: HTML, a javascript: link, a mention, two issue
/// references, an OSC window title, a clear-screen, a newline, a workflow command, a bidi
/// override and a zero-width space.
const HOSTILE: &str = "<img src=x onerror=alert(1)> [a](javascript:alert(1)) @octocat #45 GH-45 \u{1b}]0;title\u{7} \u{1b}[2J one\ntwo ::error::pwned \u{202E}rtl \u{200B}zw";

/// What must not survive raw in a plain-text field (a title, an annotation, an output, a
/// workflow command).
const PLAIN_BAD: [&str; 13] = [
    "<img",
    "](",
    "[a]",
    "@octocat",
    "#45",
    "GH-45",
    "\u{1b}",
    "\u{7}",
    "one\ntwo",
    "::error::",
    "\u{202E}",
    "\u{200B}",
    "\n",
];

/// What must not survive raw in a Markdown field (check-run summary and text, the comment).
/// `GH-45` is item 8's (`sanitize::inert`); `::` is inert in Markdown (workflow commands are
/// read from a step's standard output only).
const MARKDOWN_BAD: [&str; 10] = [
    "<img",
    "[a](javascript",
    "@octocat",
    "#45",
    "\u{1b}",
    "\u{7}",
    "one\ntwo",
    "\u{202E}",
    "\u{200B}",
    "onerror=alert(1)>",
];

fn assert_plain(what: &str, s: &str) {
    for bad in PLAIN_BAD {
        assert!(!s.contains(bad), "{what}: {bad:?} survived in {s:?}");
    }
    assert!(
        !s.chars().any(char::is_control),
        "{what}: a control character in {s:?}"
    );
}

/// Markdown outside its code spans (a code span shows its text literally: `sanitize::md_code`
/// puts dataset text there with its backticks replaced, so the next backtick closes it).
fn outside_code_spans(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                out.push(c);
                out.extend(it.next());
            }
            '`' => {
                for c in it.by_ref() {
                    if c == '`' {
                        break;
                    }
                }
                out.push_str("(code)");
            }
            c => out.push(c),
        }
    }
    out
}

fn assert_markdown(what: &str, s: &str) {
    let live = outside_code_spans(s);
    for bad in MARKDOWN_BAD {
        assert!(!live.contains(bad), "{what}: {bad:?} survived in {live:?}");
    }
    assert!(
        !s.chars().any(|c| c.is_control() && c != '\n'),
        "{what}: a control character in {s:?}"
    );
}

/// `evalgate` with none of the caller's GitHub or evalgate settings (a test run inside Actions
/// must not write to the real runner's files), plus `env`.
fn evalgate_clean(cwd: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut c = clean_command(cwd, args);
    c.env("EVALGATE_DATASETS", root().join("datasets/v0"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("evalgate runs")
}

/// The runner's environment for a pull_request event on `api` (the event file is written in
/// `dir`).
fn actions_env(dir: &Path, api: &str) -> Vec<(&'static str, String)> {
    let event = pull_request_event(dir, PR, HEAD, REPO);
    vec![
        ("GITHUB_ACTIONS", "true".into()),
        ("GITHUB_API_URL", api.into()),
        ("GITHUB_SERVER_URL", "https://github.example".into()),
        ("GITHUB_REPOSITORY", REPO.into()),
        ("GITHUB_EVENT_NAME", "pull_request".into()),
        ("GITHUB_EVENT_PATH", event.display().to_string()),
        (
            "GITHUB_SHA",
            "2222222222222222222222222222222222222222".into(),
        ),
        ("GITHUB_RUN_ID", "777".into()),
        ("GITHUB_JOB", "evalgate".into()),
        (
            "GITHUB_STEP_SUMMARY",
            dir.join("summary.md").display().to_string(),
        ),
        (
            "GITHUB_OUTPUT",
            dir.join("output.txt").display().to_string(),
        ),
    ]
}

/// A real report (`run` on the starter datasets) in `dir/rep`, made to fail.
fn failing_report(dir: &Path) -> PathBuf {
    let o = evalgate_clean(
        dir,
        &["run", "--out", "rep", "--publish", "never", "-q"],
        &[],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let p = dir.join("rep/report.json");
    let mut r = read_json(&p);
    r["gate"]["verdict"] = json!("fail");
    std::fs::write(&p, serde_json::to_string(&r).unwrap()).unwrap();
    dir.join("rep")
}

/// As [`failing_report`], with hostile text in every field that reaches GitHub: the summary,
/// the baseline path, two failed checks' subject, metric and message, the warnings.
fn hostile_report(dir: &Path) -> PathBuf {
    let rep = failing_report(dir);
    let p = rep.join("report.json");
    let mut r = read_json(&p);
    r["gate"]["summary"] = json!(HOSTILE);
    r["gate"]["baseline"] = json!(format!("../../etc/{HOSTILE}"));
    let checks = r["gate"]["checks"].as_array_mut().unwrap();
    assert!(checks.len() >= 2);
    for c in checks.iter_mut().take(2) {
        c["status"] = json!("fail");
        c["subject"] = json!(HOSTILE);
        c["metric"] = json!(format!("m,{HOSTILE}"));
        c["message"] = json!(HOSTILE);
    }
    r["warnings"] = json!([HOSTILE]);
    std::fs::write(&p, serde_json::to_string(&r).unwrap()).unwrap();
    rep
}

/// A check-run payload's fields, plain or Markdown as GitHub shows them.
fn assert_check_run_body(what: &str, b: &Value) {
    if let Some(n) = b["name"].as_str() {
        assert_plain(&format!("{what} name"), n);
    }
    let o = &b["output"];
    if o.is_null() {
        return;
    }
    assert_plain(&format!("{what} title"), o["title"].as_str().unwrap());
    assert_markdown(&format!("{what} summary"), o["summary"].as_str().unwrap());
    assert_markdown(
        &format!("{what} text"),
        o["text"].as_str().unwrap_or_default(),
    );
    for a in o["annotations"].as_array().into_iter().flatten() {
        for k in ["title", "message", "path"] {
            assert_plain(
                &format!("{what} annotation {k}"),
                a[k].as_str().unwrap_or_default(),
            );
        }
        assert_eq!(a["path"], "evalgate.toml", "an unsafe path is dropped");
    }
}

/// `$GITHUB_OUTPUT`: one line per documented output, nothing injected.
fn assert_outputs(what: &str, text: &str) {
    let keys = [
        "verdict",
        "report-json",
        "report-html",
        "report-md",
        "regressions",
        "exit-code",
    ];
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), keys.len(), "{what}: {text:?}");
    for (l, k) in lines.iter().zip(keys) {
        let v = l
            .strip_prefix(&format!("{k}="))
            .unwrap_or_else(|| panic!("{what}: {l:?} is not {k}=…"));
        assert_plain(&format!("{what} {k}"), v);
    }
    let reg = lines[4].strip_prefix("regressions=").unwrap();
    let reg: serde_json::Value = serde_json::from_str(reg)
        .unwrap_or_else(|e| panic!("{what}: regressions is not JSON ({e}): {reg}"));
    assert_eq!(
        reg.as_array().map(Vec::len),
        Some(2),
        "{what}: two regressions, a comma or a colon in a name does not make a third: {reg}"
    );
    for item in reg.as_array().unwrap() {
        assert!(
            item["subject"].is_string() && item["metric"].is_string(),
            "{what}: {item}"
        );
    }
    assert!(
        lines[0] == "verdict=fail" && lines[5] == "exit-code=1",
        "{text}"
    );
}

/// The workflow commands on standard output: one `::error` per failed check, neutralised.
fn assert_commands(what: &str, out: &str) {
    let cmds: Vec<&str> = out.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(cmds.len(), 2, "{what}: {cmds:?}");
    for c in cmds {
        let rest = c.strip_prefix("::error title=").expect(c);
        let (title, message) = rest.split_once("::").expect(c);
        assert_plain(&format!("{what} ::error title"), title);
        assert_plain(&format!("{what} ::error message"), message);
    }
    assert!(!out.contains('\u{1b}'), "{what}: an escape on stdout");
}

#[test]
fn item1_check_run_payload_and_step_outputs_are_neutralised() {
    let d = tempdir();
    let dir = d.path();
    let rep = hostile_report(dir);
    let rep_s = rep.to_str().unwrap();

    // under act: the payload written to github-check-run.json
    let mut env = actions_env(dir, "http://127.0.0.1:1");
    env.push(("ACT", "true".into()));
    env.push(("EVALGATE_GITHUB_TOKEN", "ghp_unused".into()));
    env.push(("EVALGATE_COMMENT_KEY", HOSTILE.into()));
    let o = evalgate_clean(
        dir,
        &["publish", "--report-dir", rep_s, "--comment", "always"],
        &env,
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let check = read_json(&rep.join("github-check-run.json"));
    assert_check_run_body("act create", &check["create"]);
    assert_check_run_body("act complete", &check["complete"]);
    let batches = check["annotation_batches"].as_array().unwrap();
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0]["annotations"].as_array().unwrap().len(), 2);
    for b in batches {
        assert_check_run_body("act annotations", &json!({ "output": b }));
    }
    let comment = std::fs::read_to_string(rep.join("github-comment.md")).unwrap();
    let marker_line = comment.lines().next().unwrap();
    assert!(
        marker_line.starts_with("<!-- evalgate:") && marker_line.matches("-->").count() == 1,
        "the comment key cannot close the marker early: {marker_line}"
    );
    assert_markdown("act comment", comment.split_once('\n').unwrap().1);
    assert_outputs(
        "act",
        &std::fs::read_to_string(dir.join("output.txt")).unwrap(),
    );
    assert_commands("act", &stdout(&o));

    // posted: what the fake GitHub received
    std::fs::remove_file(dir.join("output.txt")).unwrap();
    let fake = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(FakeGitHub::start(FakeOptions::default()));
    let mut env = actions_env(dir, &fake.url());
    env.push(("EVALGATE_GITHUB_TOKEN", fake.token()));
    let o = evalgate_clean(
        dir,
        &["publish", "--report-dir", rep_s, "--comment", "always"],
        &env,
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let reqs = fake.requests();
    let check_bodies: Vec<&Value> = reqs
        .iter()
        .filter(|q| q.path.contains("/check-runs"))
        .filter_map(|q| q.body.as_ref())
        .collect();
    assert!(check_bodies.len() >= 3, "create, complete, annotations");
    for b in &check_bodies {
        assert_check_run_body("posted check run", b);
    }
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].conclusion.as_deref(), Some("failure"));
    assert_eq!(runs[0].annotations.len(), 2, "each annotation once");
    let comments = fake.comments(REPO, PR);
    assert_eq!(comments.len(), 1);
    assert_markdown("posted comment", &comments[0].body);
    assert_outputs(
        "posted",
        &std::fs::read_to_string(dir.join("output.txt")).unwrap(),
    );
    assert_commands("posted", &stdout(&o));
}

/// A server on 127.0.0.1 that accepts connections and then does `serve` with each.
fn server(serve: fn(std::net::TcpStream)) -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || serve(s));
        }
    });
    url
}

fn publish_bounded(dir: &Path, rep: &Path, api: &str, timeout: &str) -> (Output, Duration) {
    let mut env = actions_env(dir, api);
    env.push(("EVALGATE_GITHUB_TOKEN", "ghp_test".into()));
    env.push(("EVALGATE_GITHUB_TIMEOUT", timeout.into()));
    let t = Instant::now();
    let o = evalgate_clean(
        dir,
        &[
            "publish",
            "--report-dir",
            rep.to_str().unwrap(),
            "--comment",
            "always",
        ],
        &env,
    );
    (o, t.elapsed())
}

#[test]
fn item5_a_never_answering_github_api_is_a_bounded_named_warning() {
    // accepts, reads the request, never answers
    let api = server(|mut s| {
        let mut buf = [0u8; 4096];
        while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
    });
    let d = tempdir();
    let dir = d.path();
    let rep = failing_report(dir);
    let (o, took) = publish_bounded(dir, &rep, &api, "2");
    let err = stderr(&o);
    assert!(took < Duration::from_secs(60), "took {took:?}: {err}");
    assert_eq!(code(&o), 1, "the verdict's exit code: {err}");
    assert!(
        err.contains("timed out: GitHub did not answer within 2 s")
            && err.contains("EVALGATE_GITHUB_TIMEOUT"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        std::fs::read_to_string(dir.join("output.txt"))
            .unwrap()
            .contains("verdict=fail"),
        "the outputs are written before any request"
    );

    // `run` in Actions publishes on its own, under the same bound
    let mut env = actions_env(dir, &api);
    env.push(("EVALGATE_GITHUB_TOKEN", "ghp_test".into()));
    env.push(("EVALGATE_GITHUB_TIMEOUT", "2".into()));
    let t = Instant::now();
    let o = evalgate_clean(dir, &["run", "--out", "rep2", "-q"], &env);
    let err = stderr(&o);
    assert!(t.elapsed() < Duration::from_secs(90), "{err}");
    assert_eq!(code(&o), 0, "{err}");
    assert!(err.contains("GitHub did not answer within 2 s"), "{err}");

    // the setting is bounded like every other timeout
    for bad in ["inf", "0", "-1", "nan", "1e20"] {
        let mut env = actions_env(dir, &api);
        env.push(("EVALGATE_GITHUB_TIMEOUT", bad.into()));
        let o = evalgate_clean(dir, &["publish", "--report-dir", "rep"], &env);
        assert_eq!(code(&o), 2, "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("EVALGATE_GITHUB_TIMEOUT"), "{bad}");
    }
}

#[test]
fn item5_a_github_api_that_trickles_forever_stops_at_the_deadline() {
    // answers at once, then sends its body one byte at a time, never finishing: no single read
    // waits long enough for the read timeout, so only the whole-publish deadline ends it
    let api = server(|mut s| {
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf);
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000000\r\n\r\n[",
        );
        while s.write_all(b" ").is_ok() {
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let d = tempdir();
    let dir = d.path();
    let rep = failing_report(dir);
    let (o, took) = publish_bounded(dir, &rep, &api, "1");
    let err = stderr(&o);
    assert!(took < Duration::from_secs(45), "took {took:?}: {err}");
    assert!(
        took >= Duration::from_secs(9),
        "the deadline is 10 × 1 s: {took:?}"
    );
    assert_eq!(code(&o), 1, "{err}");
    assert!(
        err.contains("timed out: publishing to GitHub stopped after 10 s")
            && err.contains("EVALGATE_GITHUB_TIMEOUT"),
        "{err}"
    );
}
