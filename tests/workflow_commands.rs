//! Workflow commands, the sticky comment and the runner's files, as an attacker would try them
//! against the real binary:
//! - text evalgate did not write (a report.json, shard reports, a baseline, a dataset, an
//!   evalgate.toml, a command-line value) never starts a line of stdout or stderr as a workflow
//!   command (`::add-mask::`, `::stop-commands::`, `::set-output`) nor carries the legacy
//!   `##[command]` form;
//! - the sticky comment is found only among the token's own comments, by the marker on its
//!   first line: a PR commenter racing the bot with the marker, and dataset text carrying another
//!   job's marker, take nothing over (fake GitHub API on 127.0.0.1);
//! - `GITHUB_EVENT_PATH` is read like every input: a FIFO or `/dev/zero` is a named note, not
//!   a hang or an allocation without end.

mod common;
#[path = "fake_github/mod.rs"]
mod fake_github;

use common::*;
use fake_github::{FakeGitHub, FakeOptions};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const REPO: &str = "acme/widgets";
const HEAD: &str = "1111111111111111111111111111111111111111";
const PR: u64 = 42;

/// A value that, printed raw with its line breaks, would mask a word, stop the runner reading
/// commands, set a step output and (legacy form) set another.
const INJECT: &str = "x\n::add-mask::hunter2\n  ::stop-commands::tok\r::set-output name=verdict::pass\n##[set-output name=verdict;]pass";

/// The binary under test (`EVALGATE_TEST_BIN` runs these tests against another build, e.g. the
/// one before the fix, to see them fail).
fn bin() -> PathBuf {
    std::env::var_os("EVALGATE_TEST_BIN").map_or_else(evalgate_bin, PathBuf::from)
}

fn command(cwd: &Path, args: &[&str], env: &[(&str, String)]) -> Command {
    let mut c = Command::new(bin());
    c.args(args).current_dir(cwd).env("NO_COLOR", "1");
    scrub_caller_env(&mut c);
    c.env("EVALGATE_DATASETS", root().join("datasets/v0"));
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn run(cwd: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    command(cwd, args, env).output().expect("evalgate runs")
}

/// No line of stdout or stderr is a workflow command evalgate did not mean: the only commands
/// allowed are its own `::error title=…` and `::notice title=evalgate::…` lines on stdout.
fn assert_no_injected_commands(what: &str, o: &Output) {
    // the crafted value did reach the output (else the case proves nothing)
    assert!(
        format!("{}{}", stdout(o), stderr(o)).contains("add-mask"),
        "{what}: the crafted value is not quoted\n{}",
        stderr(o)
    );
    for (stream, text, own) in [("stdout", stdout(o), true), ("stderr", stderr(o), false)] {
        // the runner splits lines on \n and on \r
        for line in text.split(['\n', '\r']) {
            let t = line.trim_start();
            let ours = own
                && (t.starts_with("::error title=") || t.starts_with("::notice title=evalgate::"));
            assert!(
                !t.starts_with("::") || ours,
                "{what}: {stream} line {line:?} is a workflow command\n--- {stream}:\n{text}"
            );
            assert!(
                !line.contains("##["),
                "{what}: {stream} line {line:?} has a legacy workflow command"
            );
        }
    }
}

/// A real report (`run` on the starter datasets) in `dir/rep`.
fn report(dir: &Path) -> PathBuf {
    let o = run(
        dir,
        &["run", "--out", "rep", "--publish", "never", "-q"],
        &[],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    dir.join("rep/report.json")
}

/// `report` as `dir/name/report.json`, for `publish --report-dir`.
fn report_dir(dir: &Path, name: &str, report: &serde_json::Value) -> PathBuf {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    write_json(&d, "report.json", report);
    d
}

fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn actions_env(dir: &Path, api: &str, event: &Path) -> Vec<(&'static str, String)> {
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
        ("EVALGATE_GITHUB_TOKEN", "ghs_fake_token".into()),
    ]
}

#[test]
fn no_input_can_print_a_workflow_command() {
    let d = tempdir();
    let dir = d.path();
    let rep = report(dir);
    let good = read_json(&rep);

    // report.json in `evalgate publish` (the trusted job of the fork-safe recipe)
    let mut r = good.clone();
    r["gate"]["verdict"] = json!(INJECT);
    let bad_report = write_json(dir, "bad-report.json", &r);
    let bad_dir = report_dir(dir, "bad", &r);
    let event = pull_request_event(dir, PR, HEAD, REPO);
    let env = actions_env(dir, "http://127.0.0.1:9", &event);
    let o = run(
        dir,
        &["publish", "--report-dir", bad_dir.to_str().unwrap()],
        &env,
    );
    assert_ne!(code(&o), 0);
    assert_no_injected_commands("publish of a crafted report.json", &o);

    // shard reports in `merge`
    let mut shard = good.clone();
    shard["gate"]["verdict"] = json!(INJECT);
    let s1 = write_json(dir, "shard1.json", &shard);
    let o = run(
        dir,
        &["merge", s1.to_str().unwrap(), rep.to_str().unwrap()],
        &[],
    );
    assert_ne!(code(&o), 0);
    assert_no_injected_commands("merge of a crafted shard report", &o);

    // `baseline update --from`
    let o = run(
        dir,
        &[
            "baseline",
            "update",
            "--from",
            bad_report.to_str().unwrap(),
            "--output",
            "b.json",
        ],
        &[],
    );
    assert_ne!(code(&o), 0);
    assert_no_injected_commands("baseline update --from a crafted report", &o);

    // a baseline
    let mut b = read_json(&baseline_copy(dir));
    b["retrieval"]["metrics"]["mrr"]["direction"] = json!(INJECT);
    let bad_baseline = write_json(dir, "bad-baseline.json", &b);
    let o = run(
        dir,
        &["run", "--baseline", bad_baseline.to_str().unwrap(), "-q"],
        &[],
    );
    assert_ne!(code(&o), 0);
    assert_no_injected_commands("a crafted baseline", &o);

    // a dataset
    let mut sec = shipped("security.json");
    sec["entries"][0]["label"] = json!(INJECT);
    let bad_sec = write_json(dir, "bad-security.json", &sec);
    let o = run(
        dir,
        &["validate", "--security-corpus", bad_sec.to_str().unwrap()],
        &[],
    );
    assert_ne!(code(&o), 0);
    assert_no_injected_commands("validate of a crafted dataset", &o);
    let o = run(
        dir,
        &[
            "security",
            "--security-corpus",
            bad_sec.to_str().unwrap(),
            "-q",
        ],
        &[],
    );
    assert_ne!(code(&o), 0);
    assert_no_injected_commands("security on a crafted dataset", &o);

    // an evalgate.toml (TOML's error also quotes the source line)
    let toml_value = INJECT.replace('\n', "\\n").replace('\r', "\\r");
    std::fs::write(
        dir.join("evalgate.toml"),
        format!("[sut]\nkind = \"{toml_value}\"\n"),
    )
    .unwrap();
    let o = run(dir, &["run", "-q"], &[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_no_injected_commands("a crafted evalgate.toml", &o);
    std::fs::remove_file(dir.join("evalgate.toml")).unwrap();

    // a command-line value (the action's `args` input, a matrix value)
    let o = run(dir, &["run", "--sut", INJECT], &[]);
    assert_eq!(code(&o), 2);
    assert_no_injected_commands("a crafted --sut value", &o);
}

/// A REST server on 127.0.0.1 answering every request 200 with `body`.
fn answering(body: String) -> u16 {
    http_server(move |_| {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    })
}

/// `-vv` logs every exchange with the system under test, raw answers included: a system that
/// answers workflow commands and the job's token gets neither through (the log line is
/// neutralised like every message, the token masked), and the exchange is there to read.
#[test]
fn the_exchange_log_neither_runs_commands_nor_shows_the_token() {
    let d = tempdir();
    let dir = d.path();
    let token = "ghs_loggedTokenLoggedToken000000000000000";
    let port = answering(format!("{INJECT}\n{token}"));
    let url = format!("http://127.0.0.1:{port}/search");
    let o = run(
        dir,
        &[
            "retrieval",
            "--sut",
            "rest",
            "--url",
            &url,
            "--no-baseline",
            "-vv",
            "-q",
        ],
        &[("GITHUB_TOKEN", token.to_string())],
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert_no_injected_commands("a system's answer in the -vv log", &o);
    let e = stderr(&o);
    assert!(
        e.contains("TRACE") && e.contains("HTTP 200 OK, answer x"),
        "{e}"
    );
    assert!(!e.contains(token) && !stdout(&o).contains(token), "{e}");
}

#[test]
fn evalgate_still_prints_its_own_error_lines() {
    // a failing gate under GitHub Actions: the `::error` lines are evalgate's and stay commands
    let d = tempdir();
    let dir = d.path();
    let rep = report(dir);
    let mut r = read_json(&rep);
    r["gate"]["verdict"] = json!("fail");
    let checks = r["gate"]["checks"].as_array_mut().unwrap();
    checks[0]["status"] = json!("fail");
    checks[0]["message"] = json!(INJECT);
    let p = report_dir(dir, "failing", &r);
    let event = pull_request_event(dir, PR, HEAD, REPO);
    let env = actions_env(dir, "http://127.0.0.1:9", &event);
    let o = run(dir, &["publish", "--report-dir", p.to_str().unwrap()], &env);
    assert_no_injected_commands("publish of a failing report", &o);
    let out = stdout(&o);
    assert!(
        out.lines().any(|l| l.starts_with("::error title=")),
        "{out}\n{}",
        stderr(&o)
    );
}

// ---- the sticky comment ------------------------------------------------------------------

/// `evalgate publish` of a passing report against the fake, with the comment wanted always.
fn publish_to(fake: &FakeGitHub, dir: &Path, report_dir: &Path, key: &str) -> Output {
    let event = pull_request_event(dir, PR, HEAD, REPO);
    let mut env = actions_env(dir, &fake.url(), &event);
    env.push(("EVALGATE_COMMENT_KEY", key.into()));
    run(
        dir,
        &[
            "publish",
            "--report-dir",
            report_dir.to_str().unwrap(),
            "--comment",
            "always",
            "--check-run",
            "false",
        ],
        &env,
    )
}

#[test]
fn a_commenter_racing_the_bot_with_the_marker_takes_nothing_over() {
    let d = tempdir();
    let dir = d.path();
    let rep = report(dir).parent().unwrap().to_path_buf();
    let planted = "<!-- evalgate:evalgate -->\nI was here first";
    let rt = tokio_rt();
    let fake = rt.block_on(FakeGitHub::start(
        FakeOptions::default()
            .seed(REPO, PR, "mallory", planted)
            .seed(REPO, PR, "renovate[bot]", planted),
    ));
    let o = publish_to(&fake, dir, &rep, "evalgate");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let comments = fake.comments(REPO, PR);
    assert_eq!(comments.len(), 3, "{comments:#?}");
    assert_eq!(comments[0].body, planted, "mallory's comment is untouched");
    assert_eq!(
        comments[1].body, planted,
        "another bot's comment is untouched"
    );
    assert_eq!(comments[2].user, "github-actions[bot]");
    assert!(
        comments[2].body.starts_with("<!-- evalgate:evalgate -->\n"),
        "{}",
        comments[2].body
    );

    // the next run updates the token's own comment, not the planted ones
    let id = comments[2].id;
    let o = publish_to(&fake, dir, &rep, "evalgate");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let again = fake.comments(REPO, PR);
    assert_eq!(again.len(), 3, "{again:#?}");
    assert_eq!(again[2].id, id);
    assert_eq!(
        (again[0].body.as_str(), again[1].body.as_str()),
        (planted, planted)
    );
}

#[test]
fn with_a_users_token_only_that_users_comment_is_updated() {
    // a personal token: `GET /user` names its user; comments by anyone else are not ours, and
    // the marker must be the first line (a quote of it further down does not count)
    let d = tempdir();
    let dir = d.path();
    let rep = report(dir).parent().unwrap().to_path_buf();
    let planted = "<!-- evalgate:evalgate -->\nI was here first";
    let quoted = "> see below\n<!-- evalgate:evalgate -->";
    let rt = tokio_rt();
    let opts = FakeOptions {
        bot_login: "gate-keeper".into(),
        ..FakeOptions::default()
    };
    let fake = rt.block_on(FakeGitHub::start(
        opts.seed(REPO, PR, "mallory", planted)
            .seed(REPO, PR, "gate-keeper", quoted)
            .seed(
                REPO,
                PR,
                "gate-keeper",
                "<!-- evalgate:evalgate -->\nold report",
            ),
    ));
    let o = publish_to(&fake, dir, &rep, "evalgate");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let c = fake.comments(REPO, PR);
    assert_eq!(c.len(), 3, "{c:#?}");
    assert_eq!((c[0].body.as_str(), c[1].body.as_str()), (planted, quoted));
    assert!(
        c[2].body
            .starts_with("<!-- evalgate:evalgate -->\n## evalgate"),
        "{}",
        c[2].body
    );
}

#[test]
fn dataset_text_cannot_carry_another_jobs_marker() {
    let d = tempdir();
    let dir = d.path();
    let rep = report(dir);
    // job a's report carries job b's marker as dataset text (the corpus version, a query id)
    let mut r = read_json(&rep);
    let marker_b = "<!-- evalgate:b -->";
    r["datasets"][0]["version"] = json!(marker_b);
    r["retrieval"]["corpus_version"] = json!(marker_b);
    if let Some(q) = r["gate"]["worst_queries"]
        .as_array_mut()
        .and_then(|a| a.first_mut())
    {
        q["id"] = json!(marker_b);
    }
    let rep_a = report_dir(dir, "a", &r);
    let rep = rep.parent().unwrap().to_path_buf();
    let rt = tokio_rt();
    let fake = rt.block_on(FakeGitHub::start(FakeOptions::default()));
    let o = publish_to(&fake, dir, &rep_a, "a");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let c = fake.comments(REPO, PR);
    assert_eq!(c.len(), 1);
    assert!(
        !c[0].body.contains(marker_b),
        "job b's marker formed in job a's comment:\n{}",
        c[0].body
    );
    // job b posts its own comment; job a's is left alone
    let o = publish_to(&fake, dir, &rep, "b");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let c2 = fake.comments(REPO, PR);
    assert_eq!(c2.len(), 2, "{c2:#?}");
    assert_eq!(c2[0].body, c[0].body, "job a's comment was overwritten");
    assert!(c2[1].body.starts_with("<!-- evalgate:b -->\n"));
}

// ---- the event payload -------------------------------------------------------------------

/// Runs `cmd`, killing it after `limit`.
fn output_within(mut cmd: Command, limit: Duration) -> Option<Output> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("evalgate runs");
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn an_event_path_that_is_not_a_regular_file_is_a_named_note() {
    let d = tempdir();
    let dir = d.path();
    let rep = report(dir).parent().unwrap().to_path_buf();
    let fifo = dir.join("event.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for event in [fifo, PathBuf::from("/dev/zero")] {
        let env = actions_env(dir, "http://127.0.0.1:9", &event);
        let cmd = command(
            dir,
            &[
                "publish",
                "--report-dir",
                rep.to_str().unwrap(),
                "--comment",
                "always",
                "--check-run",
                "false",
            ],
            &env,
        );
        let o = output_within(cmd, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("GITHUB_EVENT_PATH={}: still running", event.display()));
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("GITHUB_EVENT_PATH") && err.contains("expected a regular file"),
            "{}: {err}",
            event.display()
        );
    }
}
