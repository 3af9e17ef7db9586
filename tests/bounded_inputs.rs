//! Hostile and careless input: every duration and number a user can give is bounded,
//! each bad one is exit 2 naming the setting, and none panics (exit 101).

mod common;
use common::*;
use serde_json::Value;

/// Values no timeout may take: too large for a `Duration`, infinite, negative, NaN, zero, too
/// short to be met (which would blame the system under test for evalgate's setting).
const BAD: [&str; 6] = ["1e20", "inf", "-1", "nan", "0", "1e-300"];

fn assert_refused(o: &std::process::Output, setting: &str, what: &str) {
    let err = stderr(o);
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert_eq!(code(o), 2, "{what}: {err}");
    assert!(
        err.contains(setting) && err.contains("expected a number of seconds of at least 0.001"),
        "{what}: {err}"
    );
}

#[test]
fn every_duration_input_is_bounded_exit_2_never_a_panic() {
    let d = tempdir();
    let dir = d.path();
    for v in BAD {
        // the flag and its environment variable
        let o = evalgate(dir, &["run", "-q", "--out", "x", &format!("--timeout={v}")]);
        assert_refused(&o, "--timeout", &format!("--timeout {v}"));
        let o = evalgate_env(
            dir,
            &["run", "-q", "--out", "x"],
            &[("EVALGATE_TIMEOUT", v)],
        );
        assert_refused(&o, "EVALGATE_TIMEOUT", &format!("EVALGATE_TIMEOUT={v}"));
        // corpus snapshot
        let o = evalgate(
            dir,
            &[
                "corpus",
                "snapshot",
                "--server",
                "s",
                &format!("--timeout={v}"),
                "--",
                "true",
            ],
        );
        assert_refused(&o, "--timeout", &format!("snapshot --timeout {v}"));

        // every timeout in evalgate.toml (TOML spells them inf, nan, -1.0, 1e20, 0.0)
        let t = match v {
            "-1" => "-1.0",
            "0" => "0.0",
            other => other,
        };
        let scanner = "[[scanner]]\nname = \"s\"\ncommand = [\"true\"]\nfilter = \".\"\n";
        for (setting, toml) in [
            ("[run] timeout", format!("[run]\ntimeout = {t}\n")),
            (
                "[sut.launch] ready_timeout",
                format!("[sut]\nkind = \"reference\"\n[sut.launch]\nready_timeout = {t}\n"),
            ),
            (
                "[[scanner]] \"s\" (#1) timeout",
                format!("{scanner}timeout = {t}\n"),
            ),
            (
                "[proxy_scan] scan_timeout",
                format!("[proxy_scan]\nscan_timeout = {t}\n"),
            ),
            (
                "[rug_pull_live] relist_timeout",
                format!("[rug_pull_live]\nrelist_timeout = {t}\n"),
            ),
        ] {
            std::fs::write(dir.join("evalgate.toml"), &toml).unwrap();
            let o = evalgate(dir, &["run", "-q", "--out", "x"]);
            assert_refused(&o, setting, &toml);
            assert!(!dir.join("x").exists(), "{toml}: nothing is written");
        }
        std::fs::remove_file(dir.join("evalgate.toml")).unwrap();
    }
}

#[test]
fn recorded_latencies_and_scanner_names_are_checked() {
    let d = tempdir();
    let dir = d.path();
    let o = evalgate(dir, &["retrieval", "--no-baseline", "-q", "--out", "live"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let report = read_json(&dir.join("live/report.json"));
    for bad in [-1.0, 1e300] {
        let mut r: Value = report.clone();
        r["retrieval"]["observations"]["runs"][0]["queries"][3]["latency_ms"] = bad.into();
        let p = write_json(dir, "rec.json", &r);
        let o = evalgate(
            dir,
            &[
                "retrieval",
                "--retriever",
                "recorded",
                "--recorded",
                p.to_str().unwrap(),
                "--no-baseline",
                "-q",
                "--out",
                "x",
            ],
        );
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(code(&o), 2, "{err}");
        assert!(
            err.contains("at $.retrieval.observations.runs[0].queries[3].latency_ms"),
            "{err}"
        );
    }

    // two scanners of one name would share one row of every report and baseline
    std::fs::write(
        dir.join("evalgate.toml"),
        "[[scanner]]\nname = \"s\"\ncommand = [\"true\"]\nfilter = \".\"\n[[scanner]]\nname = \"s\"\ncommand = [\"false\"]\nfilter = \".\"\n",
    )
    .unwrap();
    let o = evalgate(dir, &["run", "-q", "--out", "x"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("[[scanner]] #2: the name \"s\" is already used"),
        "{}",
        stderr(&o)
    );
}

/// Standard output full or closed: the command still ends with its verdict's code, no panic.
#[test]
fn a_full_or_closed_standard_output_is_not_a_panic() {
    let d = tempdir();
    let dir = d.path();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = std::process::Command::new(evalgate_bin())
        .args(["validate"])
        .current_dir(dir)
        .env("EVALGATE_DATASETS", root().join("datasets/v0"))
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("could not write to standard output: No space left on device"),
        "{err}"
    );

    // a reader that went away: quiet, exit 0
    let mut child = std::process::Command::new(evalgate_bin())
        .args(["run", "--out", "r"])
        .current_dir(dir)
        .env("EVALGATE_DATASETS", root().join("datasets/v0"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("standard output"),
        "{err}"
    );
    assert!(dir.join("r/report.json").is_file());
}

/// A token with a newline at its end (a secret written with `echo`) is trimmed; one with a
/// control character inside is not used, without quoting it; neither panics.
#[test]
fn a_github_token_with_control_characters_is_not_a_panic() {
    let d = tempdir();
    let dir = d.path();
    for (token, note) in [
        ("ghp_secret123\n", None),
        (
            "ghp_sec\u{7}ret123",
            Some("holds characters a token cannot have"),
        ),
    ] {
        let o = evalgate_env(
            dir,
            &["run", "--publish", "always", "--out", "r", "-q"],
            &[
                ("GITHUB_TOKEN", token),
                ("GITHUB_API_URL", "http://127.0.0.1:1"),
                ("GITHUB_REPOSITORY", "o/r"),
            ],
        );
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{token:?}: {err}");
        assert_eq!(code(&o), 0, "{token:?}: {err}");
        assert!(
            !err.contains("secret123"),
            "the token is never quoted: {err}"
        );
        if let Some(n) = note {
            assert!(err.contains(n), "{err}");
        }
    }
}

/// Item 6: runs given the same `--out` take turns through an advisory lock on the directory,
/// so its three reports always come from one run; temporary files have unique names, so one
/// run never moves another's half-written file into place.
#[test]
fn item6_concurrent_runs_with_one_out_never_mix_their_reports() {
    let d = tempdir();
    let dir = d.path();
    let out = dir.join("same");
    std::fs::create_dir_all(out.join(".report.json.tmp")).unwrap();

    // another process holds the lock: the run waits, says so, and writes nothing meanwhile
    std::fs::create_dir_all(&out).unwrap();
    let lock = std::fs::File::open(&out).unwrap();
    lock.lock().unwrap();
    let child = evalgate_command(dir, &["run", "-q", "--out", "same"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(8) && !out.join("report.json").exists() {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !out.join("report.json").exists(),
        "a run wrote its reports while another held the directory's lock"
    );
    drop(lock);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("waiting for another evalgate run") && err.contains("same"),
        "{err}"
    );
    assert!(out.join("report.json").is_file());

    // alike runs end together; each is told apart by its measured latency, which all three
    // reports print
    for round in 0..2 {
        let children: Vec<_> = (0..6)
            .map(|_| {
                evalgate_command(dir, &["run", "-q", "--out", "same"])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(0), "round {round}: {err}");
        }
        let json = read_json(&out.join("report.json"));
        // p50, p95 and max to the 10 µs: the max alone differs between runs by milliseconds
        let ms = |k: &str| json["retrieval"]["latency_ms"][k].as_f64().unwrap();
        let (p50, p95, max) = (ms("p50"), ms("p95"), ms("max"));
        let line = format!("Latency p50 {p50:.2} ms · p95 {p95:.2} ms · max {max:.2} ms");
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert!(
            md.contains(&line) && html.contains(&line),
            "round {round}: report.json says {line:?}, report.md or report.html comes from another run"
        );
        let left: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp") && n != ".report.json.tmp")
            .collect();
        assert!(
            left.is_empty(),
            "round {round}: temporary files left: {left:?}"
        );
    }
}

/// Item 2: the credentials evalgate is given (a URL's user, password and query key, a header,
/// the GitHub token) never reach the terminal, report.json, report.md, report.html or what is
/// published, even when the system under test and the GitHub API echo them back.
#[test]
fn item2_credentials_never_reach_a_report_the_terminal_or_github() {
    let d = tempdir();
    let dir = d.path();
    let port = echo_401_server();
    let secrets = [
        "urlUser77",
        "urlPassword77",
        "queryKey77",
        "headerToken77",
        "ghp_githubToken77",
    ];
    let url = format!("http://urlUser77:urlPassword77@127.0.0.1:{port}/search?apikey=queryKey77");
    let api = format!("http://127.0.0.1:{port}");
    for (kind, act) in [("rest", "false"), ("mcp", "false"), ("rest", "true")] {
        let out = format!("out-{kind}-{act}");
        let o = evalgate_env(
            dir,
            &[
                "run",
                "--sut",
                kind,
                "--url",
                &url,
                "--header",
                "Authorization: Bearer headerToken77",
                "--timeout",
                "5",
                "--publish",
                "always",
                "--out",
                &out,
            ],
            &[
                ("GITHUB_TOKEN", "ghp_githubToken77"),
                ("GITHUB_API_URL", &api),
                ("GITHUB_REPOSITORY", "o/r"),
                ("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567"),
                ("ACT", act),
            ],
        );
        let err = stderr(&o);
        assert_eq!(code(&o), 3, "{kind}: {err}");
        // the echo reached evalgate: the failure and the GitHub note quote the servers
        let terminal = format!("{}{err}", stdout(&o));
        assert!(terminal.contains("Bad credentials"), "{kind}: {terminal}");
        if act == "false" {
            assert!(
                err.contains("github: ") && err.contains("authorization: Bearer ***"),
                "{kind}: the GitHub API's echo is shown, the token masked: {err}"
            );
        }
        let mut texts = vec![("terminal".to_string(), format!("{}{err}", stdout(&o)))];
        for e in std::fs::read_dir(dir.join(&out)).unwrap() {
            let p = e.unwrap().path();
            texts.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
        let names: Vec<&str> = texts.iter().map(|(n, _)| n.as_str()).collect();
        for want in ["report.json", "report.md", "report.html"] {
            assert!(names.iter().any(|n| n.ends_with(want)), "{names:?}");
        }
        for (name, text) in &texts {
            for s in secrets {
                assert!(!text.contains(s), "{kind}: {s} is in {name}");
            }
        }
        let md = std::fs::read_to_string(dir.join(&out).join("report.md")).unwrap();
        assert!(
            md.contains("Bad credentials") && md.contains("apikey=\\*\\*\\*"),
            "the failure is still shown, the key masked: {md}"
        );
    }
}

/// Runs `cmd` to its end, failing the test if that takes longer than `limit`.
fn output_within(
    mut cmd: std::process::Command,
    limit: std::time::Duration,
) -> std::process::Output {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("still running after {limit:?}: {cmd:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A search endpoint on 127.0.0.1 that answers 200 and then streams JSON-looking bytes for
/// ever (chunked, no length), as a broken proxy might.
fn endless_body_server() -> u16 {
    use std::io::{BufRead, BufReader, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut r = BufReader::new(s);
                let mut line = String::new();
                while r.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    line.clear();
                }
                let mut s = r.into_inner();
                let _ = s.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
                );
                let chunk = format!("{:x}\r\n{}\r\n", 65536, "[".repeat(65536));
                while s.write_all(chunk.as_bytes()).is_ok() {}
            });
        }
    });
    port
}

/// Item 7: every external byte stream is read with a bound. A dataset that is a FIFO or
/// `/dev/zero` is refused before it is opened; a search endpoint that never stops sending is
/// cut at 16 MiB and named a broken answer (not a crash, not a timeout); a jq filter that
/// never ends, or recurses until the stack is gone, is refused as bad input.
#[test]
fn item7_unbounded_inputs_are_cut_or_refused_in_bounded_time() {
    let d = tempdir();
    let dir = d.path();
    let limit = std::time::Duration::from_secs(60);

    let fifo = dir.join("corpus.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for (path, found) in [
        (fifo.to_str().unwrap(), "a FIFO, socket or device"),
        ("/dev/zero", "a FIFO, socket or device"),
        (".", "a directory"),
    ] {
        let o = output_within(
            evalgate_command(dir, &["validate", "--corpus", path]),
            limit,
        );
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{path}: {err}");
        assert!(
            err.contains(path) && err.contains(&format!("expected a regular file, found {found}")),
            "{path}: {err}"
        );
    }

    let port = endless_body_server();
    let start = std::time::Instant::now();
    let o = output_within(
        evalgate_command(
            dir,
            &[
                "retrieval",
                "--sut",
                "rest",
                "--url",
                &format!("http://127.0.0.1:{port}/search"),
                "--timeout",
                "50",
                "-q",
                "--out",
                "endless",
            ],
        ),
        limit,
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let failure = &read_json(&dir.join("endless/report.json"))["failure"];
    assert_eq!(failure["kind"], "garbage", "{failure}");
    assert!(
        failure["detail"]
            .as_str()
            .unwrap()
            .contains("the body is larger than 16 MiB"),
        "{failure}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(40));

    for filter in ["def f: f; f", "def f: [f]; f"] {
        std::fs::write(
            dir.join("evalgate.toml"),
            format!("[sut]\nkind = \"rest\"\n[sut.rest]\nurl = \"http://127.0.0.1:{port}/s\"\nfilter = \"{filter}\"\n"),
        )
        .unwrap();
        let o = output_within(
            evalgate_command(dir, &["retrieval", "-q", "--out", "jq"]),
            limit,
        );
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{filter}: {err}");
        assert!(
            err.contains(&format!("jq filter `{filter}` cannot be used")),
            "{filter}: {err}"
        );
        assert!(!dir.join("jq").exists(), "{filter}: nothing is written");
    }
}

/// `{"x": {"x": ... {}}}`, `depth` levels of objects.
fn nested(depth: usize) -> Value {
    let mut v = serde_json::json!({});
    for _ in 1..depth {
        v = serde_json::json!({ "x": v });
    }
    v
}

/// Item 4: a definition nested deeper than a run can carry is refused by `validate` and by
/// `run` alike (exit 2 at its JSON path), never a panic; one at the limit runs through the
/// reference proxy and its replay servers.
#[test]
fn item4_deep_schemas_are_refused_by_validate_and_run_alike() {
    let d = tempdir();
    let dir = d.path();
    let mut corpus = shipped("corpus.json");
    corpus["tools"][3]["schema"] = nested(127);
    let p = write_json(dir, "deep.json", &corpus);
    let path = p.to_str().unwrap();
    for args in [
        vec!["validate", "--corpus", path],
        vec!["run", "-q", "--corpus", path, "--out", "x"],
        vec![
            "run",
            "-q",
            "--sut",
            "reference",
            "--corpus",
            path,
            "--out",
            "x",
        ],
    ] {
        let o = evalgate(dir, &args);
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(
            err.contains("$.tools[3].schema") && err.contains("nests 127 levels deep"),
            "{args:?}: {err}"
        );
        assert!(!dir.join("x").exists());
    }

    // at the limit: served, listed and searched without a failure
    corpus["tools"][3]["schema"] = nested(100);
    let p = write_json(dir, "limit.json", &corpus);
    let o = evalgate(
        dir,
        &[
            "retrieval",
            "-q",
            "--sut",
            "reference",
            "--corpus",
            p.to_str().unwrap(),
            "--out",
            "y",
        ],
    );
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert!(matches!(code(&o), 0 | 1), "{err}");
    assert!(read_json(&dir.join("y/report.json"))["failure"].is_null());
}

/// Waits until `dir` holds an entry whose name starts with `prefix`.
fn wait_for_entry(dir: &std::path::Path, prefix: &str) {
    let start = std::time::Instant::now();
    loop {
        let found = std::fs::read_dir(dir)
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().starts_with(prefix));
        if found {
            return;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "no {prefix}* in {}",
            dir.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Item 9, the small ones: duplicate keys are an error naming both places; a BOM is read past;
/// a query of invisible characters is empty; a url that is not one is bad input (exit 2); a
/// stdio server printing noise instead of MCP is named a broken answer, not a timeout;
/// a scanner that exits while a process it started holds its stdout is answered at once, not
/// timed out; the scratch directories (configs with API keys, definitions under scan) are gone
/// after SIGINT and SIGTERM. (Duplicate scanner names: recorded_latencies_and_scanner_names_are_checked;
/// oversized answers: item7_unbounded_inputs_are_cut_or_refused_in_bounded_time.)
#[test]
fn item9_small_ones_duplicate_keys_bom_invisible_query_bad_url_held_stdout_scratch_dirs() {
    let d = tempdir();
    let dir = d.path();
    let limit = std::time::Duration::from_secs(90);

    // duplicate keys, decoded the same ("\u0064" is "d")
    let corpus = std::fs::read_to_string(root().join("datasets/v0/corpus.json")).unwrap();
    let dup = corpus.replacen(
        "\"description\":",
        "\"\\u0064escription\": \"first\",\n      \"description\":",
        1,
    );
    std::fs::write(dir.join("dup.json"), &dup).unwrap();
    let o = evalgate(dir, &["validate", "--corpus", "dup.json"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("error[json.duplicate-key] at $.tools[0].description")
            && err.contains("the key \"description\" is given twice in one object (first at line"),
        "{err}"
    );

    // a byte order mark is read past
    std::fs::write(dir.join("bom.json"), format!("\u{feff}{corpus}")).unwrap();
    let o = evalgate(dir, &["validate", "--corpus", "bom.json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));

    // zero-width and word-joiner characters are not a query
    let mut golden = shipped("golden.json");
    golden["queries"][2]["query"] = "\u{200b}\u{200b} \u{2060}\u{feff}".into();
    write_json(dir, "zw.json", &golden);
    let o = evalgate(dir, &["validate", "--golden", "zw.json"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("error[golden.empty-query] at $.queries[2].query"),
        "{err}"
    );

    // a url that is not one is the user's input, not a failing system
    for kind in ["rest", "mcp"] {
        let o = evalgate(
            dir,
            &[
                "retrieval",
                "-q",
                "--sut",
                kind,
                "--url",
                "not a url",
                "--out",
                "u",
            ],
        );
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{kind}: {err}");
        assert!(
            err.contains("--url \"not a url\": expected an http:// or https:// URL"),
            "{kind}: {err}"
        );
    }

    // a stdio server that prints noise instead of MCP is a broken answer, not a slow one
    let noisy = dir.join("noisy");
    std::fs::create_dir_all(&noisy).unwrap();
    std::fs::write(
        noisy.join("evalgate.toml"),
        "[sut]\nkind = \"mcp\"\n[sut.mcp]\ncommand = [\"sh\", \"-c\", \"yes 'INFO server ready'\"]\n",
    )
    .unwrap();
    let o = output_within(
        evalgate_command(&noisy, &["retrieval", "-q", "--timeout", "2", "--out", "r"]),
        limit,
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let failure = &read_json(&noisy.join("r/report.json"))["failure"];
    assert_eq!(failure["kind"], "garbage", "{failure}");
    assert!(
        failure["detail"].as_str().unwrap().contains(
            "to stdout that are not MCP messages (stdout carries only JSON-RPC; logs belong on stderr), the first: \"INFO server ready\""
        ),
        "{failure}"
    );

    // a scanner whose daemon keeps its stdout open: answered when it exits
    std::fs::write(
        dir.join("evalgate.toml"),
        "[[scanner]]\nname = \"s\"\ncommand = [\"sh\", \"-c\", \"sleep 60 & echo []\", \"x\", \"{file}\"]\nfilter = \".[]\"\ntimeout = 30\n",
    )
    .unwrap();
    let start = std::time::Instant::now();
    let o = output_within(
        evalgate_command(
            dir,
            &[
                "security",
                "-q",
                "--detectors",
                "scanner",
                "--no-baseline",
                "--out",
                "held",
            ],
        ),
        limit,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );

    // scratch directories are removed on SIGINT and SIGTERM
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(
        dir.join("evalgate.toml"),
        "[[scanner]]\nname = \"s\"\ncommand = [\"sh\", \"-c\", \"sleep 60\", \"x\", \"{file}\"]\nfilter = \".[]\"\ntimeout = 120\n",
    )
    .unwrap();
    for (signal, args, prefix, exit) in [
        (
            "-INT",
            vec!["run", "-q", "--sut", "reference", "--out", "s1"],
            "evalgate-launch-",
            130,
        ),
        (
            "-TERM",
            vec!["run", "-q", "--sut", "reference", "--out", "s2"],
            "evalgate-launch-",
            143,
        ),
        (
            "-TERM",
            vec!["security", "-q", "--detectors", "scanner", "--out", "s3"],
            "evalgate-scan-",
            143,
        ),
    ] {
        // the reference runs start where no evalgate.toml is (the scanner's would apply)
        let cwd = if prefix == "evalgate-scan-" {
            dir.to_path_buf()
        } else {
            dir.join("ref")
        };
        std::fs::create_dir_all(&cwd).unwrap();
        let mut cmd = evalgate_command(&cwd, &args);
        cmd.env("TMPDIR", &tmp);
        let child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        wait_for_entry(&tmp, prefix);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let pid = child.id().to_string();
        assert!(
            std::process::Command::new("kill")
                .args([signal, &pid])
                .status()
                .unwrap()
                .success()
        );
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(exit), "{signal} {args:?}: {err}");
        let left: Vec<String> = std::fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            left.is_empty(),
            "{signal} {args:?}: left in TMPDIR: {left:?}"
        );
    }
}

/// The jq filter probe is started before any supervisor exists: it must still die with
/// evalgate. SIGKILL evalgate while its probe runs a filter that never ends, and the probe is
/// gone within a second (before this, it ran on forever).
#[test]
fn a_jq_probe_never_outlives_a_killed_evalgate() {
    let d = tempdir();
    let dir = d.path();
    std::fs::write(
        dir.join("evalgate.toml"),
        "[sut]\nkind = \"rest\"\n[sut.rest]\nurl = \"http://127.0.0.1:9/s\"\nfilter = \"def f: f; f\"\n",
    )
    .unwrap();
    let mut child = evalgate_command(dir, &["retrieval", "-q", "--out", "jq"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let parent = child.id();
    // a live (not zombie) process: /proc/<pid>/stat's state after the command name
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
            .unwrap_or(false)
    };
    let probe = || -> Option<u32> {
        std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let ppid: u32 = stat.rsplit_once(") ")?.1.split(' ').nth(1)?.parse().ok()?;
            (ppid == parent && String::from_utf8_lossy(&cmdline).contains("__evalgate-jq-probe"))
                .then_some(pid)
        })
    };
    let start = std::time::Instant::now();
    let pid = loop {
        if let Some(p) = probe() {
            break p;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "the probe never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    child.kill().unwrap(); // SIGKILL: evalgate cannot clean up
    child.wait().unwrap();
    let killed = std::time::Instant::now();
    while alive(pid) {
        assert!(
            killed.elapsed() < std::time::Duration::from_secs(1),
            "the jq probe {pid} outlived the evalgate that started it"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// A reader that closed evalgate's stderr (`evalgate run 2>&1 >/dev/null | head -1`) is no
/// reason to panic (exit 101) or to leave the reports unwritten: the exit code is still the
/// verdict's, and the reports are on disk.
#[test]
fn a_closed_stderr_is_neither_a_panic_nor_a_lost_report() {
    let d = tempdir();
    let mut c = evalgate_command(d.path(), &["run", "--robustness", "off", "--out", "r"]);
    c.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    // the reader goes away before evalgate writes anything
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    let r = read_json(&d.path().join("r/report.json"));
    assert_eq!(r["retrieval"]["queries"], 109);
    assert!(d.path().join("r/report.html").is_file());
}
