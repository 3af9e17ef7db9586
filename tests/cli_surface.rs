//! The command line as a user meets it: each command's help lists only the flags that can apply
//! to it, with examples that parse (help snapshots under tests/snapshots/help/, rewritten with
//! `EVALGATE_UPDATE_SNAPSHOTS=1`); a flag another command owns is a usage error (exit 2) while
//! its `EVALGATE_*` variable is ignored; a flag given that cannot apply to the resolved settings
//! is an error; `-q` still says why a run failed; a refused connection is named as such, in words.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Every command path (`["baseline", "update"]`), the top level as `[]`; `help` left out.
fn command_paths() -> Vec<Vec<String>> {
    fn walk(c: &clap::Command, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(path.clone());
        for sc in c.get_subcommands().filter(|sc| sc.get_name() != "help") {
            path.push(sc.get_name().to_string());
            walk(sc, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(
        &<evalgate::cli::Cli as clap::CommandFactory>::command(),
        &mut Vec::new(),
        &mut out,
    );
    out
}

/// `evalgate <path> --help` at a fixed width, without colour or any caller's EVALGATE_* variable.
fn help(path: &[String]) -> String {
    let d = tempdir();
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let o = clean_command(d.path(), &args)
        .env("COLUMNS", "100")
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
    stdout(&o)
}

fn snapshot_dir() -> PathBuf {
    root().join("tests/snapshots/help")
}

fn snapshot_name(path: &[String]) -> String {
    if path.is_empty() {
        "evalgate.txt".into()
    } else {
        format!("{}.txt", path.join("-"))
    }
}

#[test]
fn every_commands_help_matches_its_snapshot() {
    let update = std::env::var_os("EVALGATE_UPDATE_SNAPSHOTS").is_some_and(|v| v == "1");
    let dir = snapshot_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let mut stale = Vec::new();
    let mut names = Vec::new();
    for path in command_paths() {
        let name = snapshot_name(&path);
        let text = help(&path);
        let file = dir.join(&name);
        names.push(name.clone());
        if update {
            std::fs::write(&file, &text).unwrap();
            continue;
        }
        match std::fs::read_to_string(&file) {
            Ok(want) if want == text => {}
            Ok(want) => stale.push(format!(
                "{name} differs:\n{}",
                first_difference(&want, &text)
            )),
            Err(_) => stale.push(format!("{name} is missing")),
        }
    }
    // a snapshot of a command that is gone
    for e in std::fs::read_dir(&dir).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        if !names.contains(&n) {
            if update {
                std::fs::remove_file(dir.join(&n)).unwrap();
            } else {
                stale.push(format!("{n} names no command"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "help snapshots are stale (rewrite them with EVALGATE_UPDATE_SNAPSHOTS=1 cargo nextest run --test cli_surface):\n{}",
        stale.join("\n")
    );
}

fn first_difference(want: &str, got: &str) -> String {
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            return format!("line {}:\n  snapshot: {w}\n  now:      {g}", i + 1);
        }
    }
    format!(
        "{} lines in the snapshot, {} now",
        want.lines().count(),
        got.lines().count()
    )
}

/// The text of a help section (`Examples:`) up to the next blank line.
fn section<'a>(help: &'a str, heading: &str) -> Option<Vec<&'a str>> {
    let start = help.lines().position(|l| l == heading)?;
    Some(
        help.lines()
            .skip(start + 1)
            .take_while(|l| !l.trim().is_empty())
            .collect(),
    )
}

/// Splits a command line as a shell would (spaces, double quotes).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(cur);
    }
    words
}

#[test]
fn every_help_has_examples_and_every_example_parses() {
    for path in command_paths() {
        let text = help(&path);
        let shown = format!("evalgate {} --help", path.join(" "));
        let examples = section(&text, "Examples:")
            .unwrap_or_else(|| panic!("{shown} has no Examples: section:\n{text}"));
        for l in &examples {
            let t = l.trim_start();
            assert!(
                l.starts_with("  ") && (t.starts_with('#') || t.starts_with("evalgate ")),
                "{shown}: an example line that is neither a comment nor a command (wrapped?): {l:?}"
            );
        }
        let commands: Vec<&str> = examples
            .iter()
            .map(|l| l.trim())
            .filter(|l| l.starts_with("evalgate ") && !l.contains('<'))
            // a comment beside a command starts after two spaces
            .map(|l| l.split("  ").next().unwrap())
            .collect();
        assert!(
            (1..=5).contains(&commands.len()),
            "{shown}: {} examples",
            commands.len()
        );
        for c in commands {
            let words = shell_words(c);
            assert!(
                words[1..].starts_with(&path),
                "{shown} shows an example of another command: {c}"
            );
            if let Err(e) = <evalgate::cli::Cli as clap::Parser>::try_parse_from(&words) {
                panic!("{shown}: the example `{c}` does not parse:\n{e}");
            }
        }
    }
}

/// The long flags a help text lists.
fn flags(help: &str) -> Vec<String> {
    help.lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix("-q, ").unwrap_or(t);
            let t = t.strip_prefix("-h, ").unwrap_or(t);
            let t = t.strip_prefix("-V, ").unwrap_or(t);
            (l.starts_with("  ") && t.starts_with("--"))
                .then(|| t.split([' ', '\t']).next().unwrap().to_string())
        })
        .collect()
}

/// The heading a flag is listed under.
fn heading_of(help: &str, flag: &str) -> Option<String> {
    let mut heading = None;
    for l in help.lines() {
        if !l.starts_with(' ') && l.ends_with(':') {
            heading = Some(l.trim_end_matches(':').to_string());
        }
        if flags(l).first().is_some_and(|f| f == flag) {
            return heading;
        }
    }
    None
}

#[test]
fn each_command_lists_only_the_flags_that_can_apply_to_it() {
    let h = |p: &str| help(&p.split(' ').map(String::from).collect::<Vec<_>>());
    let run = flags(&h("run"));
    let retrieval = flags(&h("retrieval"));
    let security = flags(&h("security"));
    let update_help = h("baseline update");
    let update = flags(&update_help);
    let has = |list: &[String], f: &str| list.iter().any(|x| x == f);

    for f in [
        "--detectors",
        "--security-corpus",
        "--sut",
        "--url",
        "--golden",
        "--robustness",
        "--out",
        "--publish",
    ] {
        assert!(has(&run, f), "run --help lacks {f}: {run:?}");
    }
    for f in ["--detectors", "--security-corpus"] {
        assert!(!has(&retrieval, f), "retrieval --help lists {f}");
    }
    for f in [
        "--golden",
        "--corpus",
        "--url",
        "--header",
        "--robustness",
        "--concurrency",
    ] {
        assert!(!has(&security, f), "security --help lists {f}");
    }
    for f in [
        "--detectors",
        "--sut",
        "--mcpproxy-bin",
        "--security-corpus",
    ] {
        assert!(has(&security, f), "security --help lacks {f}");
    }
    for f in [
        "--out",
        "--publish",
        "--comment",
        "--check-run",
        "--fail-on",
        "--color",
        "--no-baseline",
        "--robustness",
    ] {
        assert!(!has(&update, f), "baseline update --help lists {f}");
    }
    assert!(
        !update_help.lines().any(|l| l == "GitHub:"),
        "{update_help}"
    );
    for f in ["--from", "--output", "--dry-run"] {
        assert_eq!(
            heading_of(&update_help, f).as_deref(),
            Some("Baseline"),
            "baseline update --help files {f} elsewhere:\n{update_help}"
        );
    }
    // `security --sut` offers the proxies it can launch, nothing else
    let sec = h("security");
    let sut = sec.split("--sut <PROXY>").nth(1).unwrap();
    let sut = &sut[..sut.find("--mcpproxy-bin <PATH>").unwrap()];
    for k in ["reference", "mcpproxy", "launch"] {
        assert!(sut.contains(&format!("- {k}:")), "{sut}");
    }
    for k in ["embedded", "recorded", "mcp:", "rest"] {
        assert!(!sut.contains(&format!("- {k}")), "{sut}");
    }
    // the reference proxy's own config flag is not evalgate.toml's --config
    let proxy = flags(&h("proxy"));
    assert!(has(&proxy, "--mcpproxy-config"), "{proxy:?}");
    assert!(!has(&proxy, "--config"), "{proxy:?}");
    let parsed = |a: &[&str]| <evalgate::cli::Cli as clap::Parser>::try_parse_from(a).is_ok();
    assert!(parsed(&[
        "evalgate",
        "proxy",
        "--mcpproxy-config",
        "c.json"
    ]));
    assert!(
        parsed(&["evalgate", "proxy", "--config", "c.json"]),
        "the old name stays as a hidden alias"
    );
}

/// `evalgate` in a fresh directory with nothing of the caller's environment but `env`.
fn clean(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = clean_command(dir, args);
    c.env("EVALGATE_DATASETS", root().join("datasets/v0"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// A usage error: exit 2, one `error:` line naming `needle`, nothing written.
fn assert_usage_error(dir: &Path, o: &Output, needle: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(code(o), 2, "{what}: {err}{}", stdout(o));
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{what}: {err}");
    assert!(errors[0].contains(needle), "{what}: {err}");
    assert!(
        !err.contains("tip:"),
        "{what}: no spelling suggestion: {err}"
    );
    let written: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    assert!(written.is_empty(), "{what}: wrote {written:?}");
}

#[test]
fn a_flag_another_command_owns_is_a_usage_error_and_its_variable_is_ignored() {
    for (args, needle) in [
        (&["retrieval", "--detectors", "recorded"][..], "--detectors"),
        (
            &["retrieval", "--security-corpus", "s.json"][..],
            "--security-corpus",
        ),
        (&["security", "--golden", "g.json"][..], "--golden"),
        (
            &["security", "--url", "http://127.0.0.1:9/mcp"][..],
            "--url",
        ),
        (&["baseline", "update", "--out", "o"][..], "--out"),
        (
            &["baseline", "update", "--publish", "never"][..],
            "--publish",
        ),
        (
            &["baseline", "update", "--comment", "always"][..],
            "--comment",
        ),
        (&["run", "--from", "report.json"][..], "--from"),
    ] {
        let d = tempdir();
        let o = clean(d.path(), args, &[]);
        assert_usage_error(d.path(), &o, needle, &args.join(" "));
        // the message says whose flag it is
        assert!(
            stderr(&o).contains("is a flag of `evalgate "),
            "{}",
            stderr(&o)
        );
    }

    // the same settings as variables, set for the job's other commands: ignored
    let d = tempdir();
    let o = clean(
        d.path(),
        &["retrieval", "--no-baseline", "-q", "--robustness", "off"],
        &[
            ("EVALGATE_DETECTORS", "recorded"),
            ("EVALGATE_SECURITY_CORPUS", "/nonexistent/security.json"),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = read_json(&d.path().join("evalgate-report/report.json"));
    assert!(r["security"].is_null());
    // --no-baseline wins over EVALGATE_BASELINE (which the action exports for every step)
    let o = clean(
        d.path(),
        &["retrieval", "--no-baseline", "-q", "--robustness", "off"],
        &[("EVALGATE_BASELINE", "/nonexistent/baseline.json")],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = read_json(&d.path().join("evalgate-report/report.json"));
    assert_eq!(r["gate"]["verdict"], "no_baseline", "{}", r["gate"]);
    let o = clean(
        d.path(),
        &["security", "--no-baseline", "-q", "--out", "sec"],
        &[
            ("EVALGATE_GOLDEN", "/nonexistent/golden.json"),
            ("EVALGATE_CORPUS", "/nonexistent/corpus.json"),
            ("EVALGATE_SUT", "mcp"),
            ("EVALGATE_ROBUSTNESS", "gate"),
            ("EVALGATE_CONCURRENCY", "0"),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = read_json(&d.path().join("sec/report.json"));
    assert!(r["retrieval"].is_null());
    let o = clean(
        d.path(),
        &[
            "baseline", "update", "--output", "b.json", "--runs", "1", "-q",
        ],
        &[
            ("EVALGATE_OUT", "reports-not-written"),
            ("EVALGATE_PUBLISH", "always"),
            ("EVALGATE_COMMENT", "always"),
            ("EVALGATE_ROBUSTNESS", "gate"),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(d.path().join("b.json").is_file());
    assert!(!d.path().join("reports-not-written").exists());
}

#[test]
fn a_flag_given_that_cannot_apply_to_the_settings_is_an_error() {
    for (args, needle) in [
        // a running system's address, for an embedded system
        (
            &["retrieval", "--url", "http://127.0.0.1:9/mcp"][..],
            "--url",
        ),
        (&["run", "--header", "X-API-Key: k"][..], "--header"),
        // security launches a proxy only for the live detectors, and only a launchable one
        (
            &["security", "--sut", "mcp", "--detectors", "proxy-scan"][..],
            "reference, mcpproxy or launch",
        ),
        (&["security", "--sut", "reference"][..], "proxy-scan"),
        (
            &[
                "security",
                "--mcpproxy-bin",
                "/bin/true",
                "--detectors",
                "rules",
            ][..],
            "proxy-scan",
        ),
        (
            &["run", "--sut", "reference", "--mcpproxy-bin", "/bin/true"][..],
            "--mcpproxy-bin",
        ),
        // recorded observations nothing replays
        (&["run", "--recorded", "r.json"][..], "--recorded"),
        (
            &["security", "--recorded", "r.json", "--detectors", "rules"][..],
            "--recorded",
        ),
        // numbers read from a report are not measured
        (
            &["baseline", "update", "--from", "r.json", "--runs", "3"][..],
            "--runs",
        ),
    ] {
        let d = tempdir();
        let o = clean(d.path(), args, &[]);
        assert_usage_error(d.path(), &o, needle, &args.join(" "));
    }
}

/// A copy of the v0 baseline that the v0 run fails: MRR raised out of reach.
fn failing_baseline(dir: &Path) -> PathBuf {
    let p = baseline_copy(dir);
    let mut b = read_json(&p);
    b["retrieval"]["metrics"]["mrr"]["value"] = 0.9.into();
    b["retrieval"]["metrics"]["recall_at_5"]["value"] = 0.9.into();
    write_json(dir, "failing.json", &b)
}

#[test]
fn quiet_prints_each_failed_check_and_the_verdict_and_nothing_on_a_pass() {
    let d = tempdir();
    let b = failing_baseline(d.path());
    let o = clean(
        d.path(),
        &[
            "run",
            "-q",
            "--baseline",
            b.to_str().unwrap(),
            "--out",
            "fail",
        ],
        &[],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "-q prints no table");
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    let r = read_json(&d.path().join("fail/report.json"));
    let failed: Vec<&Value> = r["gate"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .collect();
    assert!(failed.len() >= 2, "{failed:?}");
    assert_eq!(lines.len(), failed.len() + 1, "{err}");
    for (line, c) in lines.iter().zip(&failed) {
        let num = |v: &Value| format!("{:.4}", v.as_f64().unwrap());
        let want = format!(
            "FAILED retrieval {}: {} (baseline {}, limit {}): {}",
            evalgate::pipeline::score::metrics::label(c["metric"].as_str().unwrap()),
            num(&c["current"]),
            num(&c["baseline"]),
            num(&c["limit"]),
            c["message"].as_str().unwrap()
        );
        assert_eq!(*line, want);
    }
    assert_eq!(
        lines.last().unwrap(),
        &format!("verdict: fail — {}", r["gate"]["summary"].as_str().unwrap())
    );

    // a pass: silent
    let o = clean(
        d.path(),
        &[
            "run",
            "-q",
            "--baseline",
            root().join("baselines/v0.json").to_str().unwrap(),
            "--out",
            "pass",
        ],
        &[],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(format!("{}{}", stdout(&o), stderr(&o)), "");
}

/// A loopback port nothing listens on (bound, then let go).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn a_refused_connection_is_named_in_words_never_a_crash_nor_a_rust_type() {
    let port = closed_port();
    for (sut, path) in [("mcp", "/mcp"), ("rest", "/api/v1/index/search")] {
        let url = format!("http://127.0.0.1:{port}{path}");
        let d = tempdir();
        let args = [
            "retrieval",
            "--sut",
            sut,
            "--url",
            &url,
            "--no-baseline",
            "--timeout",
            "5",
        ];
        // -q: the kind and the cause on one line
        let o = clean(d.path(), &[&args[..], &["-q", "--out", "q"]].concat(), &[]);
        assert_eq!(code(&o), 3, "{sut}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(
            err,
            format!(
                "SYSTEM UNDER TEST FAILED: unreachable: {sut}: could not connect to {url}: connection refused\n"
            ),
            "{sut}"
        );
        let r = read_json(&d.path().join("q/report.json"));
        assert_eq!(r["failure"]["kind"], "unreachable", "{}", r["failure"]);
        let detail = r["failure"]["detail"].as_str().unwrap();
        assert_eq!(
            detail,
            format!("could not connect to {url}: connection refused")
        );

        // the full view says the same, and nowhere "crashed" or a Rust path
        let o = clean(d.path(), &[&args[..], &["--out", "full"]].concat(), &[]);
        assert_eq!(code(&o), 3, "{sut}: {}", stderr(&o));
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(all.contains("could not connect to"), "{sut}: {all}");
        assert!(!all.contains("crashed"), "{sut}: {all}");
        let md = std::fs::read_to_string(d.path().join("full/report.md")).unwrap();
        let failure = read_json(&d.path().join("full/report.json"))["failure"].to_string();
        for text in [&err, &all, &failure] {
            assert!(!text.contains("::"), "{sut}: a Rust path: {text}");
            assert!(
                !text.contains('<') && !text.contains('>'),
                "{sut}: a generic type: {text}"
            );
        }
        assert!(md.contains("could not connect to"), "{md}");
        assert!(!md.contains("rmcp::") && !md.contains("WorkerTransport"));
    }
}
