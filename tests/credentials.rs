//! Credentials: evalgate hands no credential to the code it runs and publishes none.
//!
//! Real processes throughout: a system under test (stdio and launched), the replay servers a
//! launched proxy starts, and a `[[scanner]]` that each write their own environment, as seen
//! from inside, to a file; one that echoes every credential it can find on stderr (its own
//! environment, its parent's `/proc/PPID/environ`, the planted values it was written with) and
//! crashes; URLs carrying a key in their path, a `;jsessionid=` and a `#tok=`; and a
//! report.json carrying a token handed to `evalgate publish`. Every output file, stdout, stderr,
//! the job summary and the bodies the fake GitHub API received are searched for each planted
//! credential.

mod common;
#[path = "fake_github/mod.rs"]
mod fake_github;

use common::*;
use fake_github::{FakeGitHub, FakeOptions};
use std::path::{Path, PathBuf};

const REPO: &str = "acme/widgets";
const HEAD: &str = "1111111111111111111111111111111111111111";
const PR: u64 = 42;

/// The runner's credentials, as GitHub Actions sets them.
const EVALGATE_TOKEN: &str = "ghs_plantedEvalgateToken0001";
const GITHUB_TOKEN: &str = "ghp_plantedGithubToken0002";
const RUNTIME_TOKEN: &str = "plantedRuntimeToken0003";
const ID_TOKEN: &str = "plantedIdRequestToken0004";
/// Some other credential in the job's environment.
const OTHER_SECRET: &str = "plantedServicePassword0005";
/// What the configuration gives the system under test.
const SUT_ENV_SECRET: &str = "plantedSutEnvSecret0006";

fn runner_env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("EVALGATE_GITHUB_TOKEN", EVALGATE_TOKEN),
        ("GITHUB_TOKEN", GITHUB_TOKEN),
        ("ACTIONS_RUNTIME_TOKEN", RUNTIME_TOKEN),
        ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", ID_TOKEN),
        ("MY_SERVICE_PASSWORD", OTHER_SECRET),
        ("RUNNER_TEMP", "/tmp/runner-temp-planted"),
        // not a credential, but not on the allow-list either: not passed on
        ("UNRELATED_SETTING", "plain-value"),
        ("LANG", "C.UTF-8"),
    ]
}

/// A child that writes its environment to `<argv[1]>.<pid>`, then either crashes echoing
/// every credential it can find (`crash`) or becomes the rest of its arguments (`exec`).
fn write_script(dir: &Path) -> PathBuf {
    let planted = [EVALGATE_TOKEN, GITHUB_TOKEN, RUNTIME_TOKEN, ID_TOKEN];
    let p = dir.join("child.py");
    std::fs::write(
        &p,
        format!(
            r#"import os, sys
out, mode = sys.argv[1], sys.argv[2]
with open(f"{{out}}.{{os.getpid()}}", "w") as f:
    for k, v in sorted(os.environ.items()):
        f.write(f"{{k}}={{v}}\n")
if mode == "crash":
    # what an attacker obtained some other way
    found = {planted:?}
    found += [f"{{k}}={{v}}" for k, v in os.environ.items()]
    try:
        with open(f"/proc/{{os.getppid()}}/environ", "rb") as f:
            found += f.read().decode(errors="replace").split("\0")
    except OSError as e:
        found.append(f"the parent's environment is unreadable: {{e.strerror}}")
    for v in found:
        sys.stderr.write(f"leak: {{v}}\n")
    sys.stderr.flush()
    sys.exit(1)
os.execvp(sys.argv[3], sys.argv[3:])
"#
        ),
    )
    .unwrap();
    p
}

/// The environments the children wrote to `<prefix>.<pid>`, as (file, text).
fn dumps(dir: &Path, prefix: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{prefix}.")))
        })
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p.display().to_string(), t)
        })
        .collect();
    v.sort();
    v
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        .unwrap_or(false)
}

fn names(env: &str) -> Vec<&str> {
    env.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k)
        .collect()
}

/// What no child may see: the runner's tokens and credentials, evalgate's own settings.
fn assert_scrubbed(what: &str, env: &str) {
    eprintln!("{what} saw: {}", names(env).join(" "));
    for s in [
        EVALGATE_TOKEN,
        GITHUB_TOKEN,
        RUNTIME_TOKEN,
        ID_TOKEN,
        OTHER_SECRET,
    ] {
        assert!(!env.contains(s), "{what}: {s} reached the child:\n{env}");
    }
    for k in names(env) {
        assert!(
            !(k.starts_with("GITHUB_")
                || k.starts_with("ACTIONS_")
                || k.starts_with("RUNNER_")
                || (k.starts_with("CARGO_") && k != "CARGO_HOME")
                || k == "UNRELATED_SETTING"
                || (k.starts_with("EVALGATE_") && !k.ends_with("_FAULT") && k != "EVALGATE_OWNER")),
            "{what}: {k} is not on the allow-list:\n{env}"
        );
    }
    // what a real child needs is still there
    for k in ["PATH", "HOME", "LANG"] {
        assert!(names(env).contains(&k), "{what}: {k} is missing:\n{env}");
    }
}

/// Every text evalgate wrote for a run in `dir`: the files under `out` and the runner's files.
fn outputs(dir: &Path, out: &str, o: &std::process::Output) -> Vec<(String, String)> {
    let mut texts = vec![
        ("stdout".to_string(), stdout(o)),
        ("stderr".to_string(), stderr(o)),
    ];
    if let Ok(rd) = std::fs::read_dir(dir.join(out)) {
        for e in rd.flatten() {
            let p = e.path();
            if let Ok(t) = std::fs::read_to_string(&p) {
                texts.push((p.display().to_string(), t));
            }
        }
    }
    for f in ["summary.md", "output.txt"] {
        if let Ok(t) = std::fs::read_to_string(dir.join(f)) {
            texts.push((f.to_string(), t));
        }
    }
    texts
}

/// The bodies the fake GitHub API received and holds (comments, check runs).
fn github_texts(fake: &FakeGitHub) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for r in fake.requests() {
        if let Some(b) = r.body {
            v.push((format!("{} {}", r.method, r.path), b.to_string()));
        }
    }
    for c in fake.comments(REPO, PR) {
        v.push((format!("comment {}", c.id), c.body));
    }
    for r in fake.check_runs() {
        v.push((
            format!("check run {}", r.id),
            format!(
                "{:?} {:?} {:?} {:?}",
                r.title, r.summary, r.text, r.annotations
            ),
        ));
    }
    v
}

/// Counts each secret's occurrences in `texts`; the test fails naming every hit.
fn assert_no_hits(texts: &[(String, String)], secrets: &[&str]) {
    let mut hits = Vec::new();
    for s in secrets {
        let n: usize = texts.iter().map(|(_, t)| t.matches(s).count()).sum();
        eprintln!("grep {s}: {n} hits in {} texts", texts.len());
        for (name, t) in texts {
            if t.contains(s) {
                hits.push(format!("{s} in {name}"));
            }
        }
    }
    assert!(hits.is_empty(), "credentials leaked: {hits:#?}");
}

/// The runner's environment for a pull_request event against the fake API.
fn github_env(dir: &Path, fake: &FakeGitHub) -> Vec<(String, String)> {
    let event = pull_request_event(dir, PR, HEAD, REPO);
    vec![
        ("GITHUB_ACTIONS".into(), "true".into()),
        ("GITHUB_API_URL".into(), fake.url()),
        ("GITHUB_SERVER_URL".into(), "https://github.example".into()),
        ("GITHUB_REPOSITORY".into(), REPO.into()),
        ("GITHUB_EVENT_NAME".into(), "pull_request".into()),
        ("GITHUB_EVENT_PATH".into(), event.display().to_string()),
        ("GITHUB_SHA".into(), HEAD.into()),
        ("GITHUB_RUN_ID".into(), "777".into()),
        ("GITHUB_JOB".into(), "evalgate".into()),
        (
            "GITHUB_STEP_SUMMARY".into(),
            dir.join("summary.md").display().to_string(),
        ),
        (
            "GITHUB_OUTPUT".into(),
            dir.join("output.txt").display().to_string(),
        ),
    ]
}

fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn run_with(dir: &Path, args: &[&str], extra: &[(String, String)]) -> std::process::Output {
    let mut env: Vec<(&str, &str)> = runner_env();
    for (k, v) in extra {
        env.push((k.as_str(), v.as_str()));
    }
    evalgate_env(dir, args, &env)
}

/// Item 1: a stdio system under test sees the allow-listed environment plus its own `env`,
/// never the runner's tokens; and (item 2) when it echoes every credential it can find and
/// crashes, none reaches stdout, stderr, a report, the job summary, the PR comment or the
/// check run.
#[test]
fn a_crashing_stdio_sut_sees_no_token_and_publishes_none() {
    let fake = tokio_rt().block_on(FakeGitHub::start(FakeOptions {
        token: EVALGATE_TOKEN.into(),
        ..FakeOptions::default()
    }));
    let d = tempdir();
    let dir = d.path();
    let script = write_script(dir);
    let env_file = dir.join("env-stdio");
    std::fs::write(
        dir.join("evalgate.toml"),
        format!(
            "[sut]\nkind = \"mcp\"\n\n[sut.mcp]\ncommand = [\"python3\", {:?}, {:?}, \"crash\"]\nenv = {{ SUT_SETTING = \"configured-1\", SUT_API_KEY = {SUT_ENV_SECRET:?} }}\n",
            script.display().to_string(),
            env_file.display().to_string(),
        ),
    )
    .unwrap();
    let o = run_with(
        dir,
        &["run", "--no-baseline", "--timeout", "5", "--out", "r"],
        &github_env(dir, &fake),
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let seen = dumps(dir, "env-stdio");
    assert!(!seen.is_empty(), "the system under test never started");
    for (file, env) in &seen {
        assert_scrubbed(file, env);
        assert!(env.contains("SUT_SETTING=configured-1"), "{env}");
        assert!(
            env.contains(&format!("SUT_API_KEY={SUT_ENV_SECRET}")),
            "{env}"
        );
    }
    // the crash is reported, its echo masked
    let md = std::fs::read_to_string(dir.join("r/report.md")).unwrap();
    assert!(md.contains("leak: "), "the server's stderr is shown: {md}");
    // evalgate is not dumpable: its /proc/PID/environ, where the tokens are, is closed to a
    // child of the same user (root, with CAP_SYS_PTRACE, still reads it; the echo is masked)
    if !running_as_root() {
        assert!(
            md.contains("the parent's environment is unreadable: Permission denied"),
            "{md}"
        );
    }
    assert!(
        !fake.comments(REPO, PR).is_empty(),
        "the comment was posted: {:?}",
        fake.requests()
    );
    let mut texts = outputs(dir, "r", &o);
    texts.extend(github_texts(&fake));
    assert_no_hits(
        &texts,
        &[
            EVALGATE_TOKEN,
            GITHUB_TOKEN,
            RUNTIME_TOKEN,
            ID_TOKEN,
            OTHER_SECRET,
            SUT_ENV_SECRET,
        ],
    );
}

/// Item 1: a launched proxy (evalgate's reference proxy started as `[sut.launch]`) and the
/// replay servers it starts see the allow-listed environment plus what the configuration
/// names; the fault-injection setting the tests use still reaches evalgate's own children.
#[test]
fn a_launched_proxy_and_its_replay_servers_see_no_token() {
    let d = tempdir();
    let dir = d.path();
    let script = write_script(dir);
    let wrap = |prefix: &str| {
        vec![
            "python3".to_string(),
            script.display().to_string(),
            dir.join(prefix).display().to_string(),
            "exec".to_string(),
        ]
    };
    // the reference proxy's config, each upstream started through the script
    let replay_wrap = serde_json::to_string(&wrap("env-replay")[1..]).unwrap();
    std::fs::write(
        dir.join("proxy.json.j2"),
        format!(
            r#"{{"listen": {{{{ listen|tojson }}}}, "mcpServers": [
{{% for s in servers %}}{{% if not loop.first %}},{{% endif %}}
{{"name": {{{{ s.name|tojson }}}}, "protocol": "stdio", "enabled": true,
 "command": "python3", "args": {{{{ ({replay_wrap} + [s.command] + s.args)|tojson }}}} }}
{{% endfor %}}]}}"#
        ),
    )
    .unwrap();
    let mut command = wrap("env-launch");
    command.extend(
        [
            evalgate_bin().display().to_string().as_str(),
            "proxy",
            "--mcpproxy-config",
            "{config}",
            "--listen",
            "{listen}",
        ]
        .map(String::from),
    );
    std::fs::write(
        dir.join("evalgate.toml"),
        format!(
            "[sut]\nkind = \"launch\"\nname = \"reference\"\n\n[sut.launch]\ncommand = {}\nconfig_format = \"template\"\ntemplate = \"proxy.json.j2\"\nconfig_name = \"proxy.json\"\nenv = {{ SUT_SETTING = \"configured-2\" }}\n\n[sut.catalog]\ncheck = \"search\"\n",
            serde_json::to_string(&command).unwrap()
        ),
    )
    .unwrap();
    let mut extra = vec![];
    if cfg!(feature = "fault-injection") {
        extra.push((
            "EVALGATE_REPLAY_FAULT".to_string(),
            "slow-start=no-such-server:1".to_string(),
        ));
    }
    let o = run_with(dir, &QUICK_RETRIEVAL, &extra);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let launched = dumps(dir, "env-launch");
    assert_eq!(launched.len(), 1, "{launched:?}");
    let replay = dumps(dir, "env-replay");
    assert!(replay.len() >= 2, "the replay servers started: {replay:?}");
    for (file, env) in launched.iter().chain(&replay) {
        assert_scrubbed(file, env);
        if cfg!(feature = "fault-injection") {
            assert!(env.contains("EVALGATE_REPLAY_FAULT="), "{file}: {env}");
        }
    }
    let (_, proxy) = &launched[0];
    assert!(proxy.contains("SUT_SETTING=configured-2"), "{proxy}");
    assert!(proxy.contains("MCPPROXY_API_KEY="), "{proxy}");
    assert_no_hits(
        &outputs(dir, "r", &o),
        &[
            EVALGATE_TOKEN,
            GITHUB_TOKEN,
            RUNTIME_TOKEN,
            ID_TOKEN,
            OTHER_SECRET,
        ],
    );
}

/// Item 1: a `[[scanner]]` sees the allow-listed environment plus its own `env`; when it
/// echoes what it finds and crashes, nothing of it is published.
#[test]
fn a_crashing_scanner_sees_no_token() {
    let d = tempdir();
    let dir = d.path();
    let script = write_script(dir);
    let env_file = dir.join("env-scanner");
    std::fs::write(
        dir.join("evalgate.toml"),
        format!(
            "detectors = [\"scanner\"]\n\n[[scanner]]\nname = \"stand-in\"\ncommand = [\"python3\", {:?}, {:?}, \"crash\", \"{{file}}\"]\nfilter = '.results[]'\nenv = {{ SCANNER_TOKEN = {SUT_ENV_SECRET:?} }}\n",
            script.display().to_string(),
            env_file.display().to_string(),
        ),
    )
    .unwrap();
    let o = run_with(dir, &["security", "--no-baseline", "--out", "r"], &[]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let seen = dumps(dir, "env-scanner");
    assert!(
        !seen.is_empty(),
        "the scanner never started: {}",
        stderr(&o)
    );
    for (file, env) in &seen {
        assert_scrubbed(file, env);
        assert!(
            env.contains(&format!("SCANNER_TOKEN={SUT_ENV_SECRET}")),
            "{env}"
        );
    }
    assert_no_hits(
        &outputs(dir, "r", &o),
        &[
            EVALGATE_TOKEN,
            GITHUB_TOKEN,
            RUNTIME_TOKEN,
            ID_TOKEN,
            OTHER_SECRET,
            SUT_ENV_SECRET,
        ],
    );
}

/// Item 3: a key in a URL's path, a `;jsessionid=` matrix parameter and a `#tok=` fragment
/// are masked wherever the URL or the server's echo of it appears; so are header values.
#[test]
fn keys_in_url_paths_matrix_parameters_and_fragments_are_masked() {
    let d = tempdir();
    let dir = d.path();
    let port = echo_401_server();
    let path_key = "a1B2c3D4e5F6g7H8i9J0kLmN";
    let session = "sessionSecret0077";
    let fragment = "fragmentSecret0077";
    let header = "headerSecret0077";
    let url =
        format!("http://127.0.0.1:{port}/api/{path_key}/mcp;jsessionid={session}#tok={fragment}");
    for kind in ["mcp", "rest"] {
        let out = format!("out-{kind}");
        let o = evalgate_env(
            dir,
            &[
                "run",
                "--sut",
                kind,
                "--url",
                &url,
                "--header",
                &format!("X-Api-Key: {header}"),
                "--timeout",
                "5",
                "--out",
                &out,
            ],
            &[],
        );
        assert_eq!(code(&o), 3, "{kind}: {}", stderr(&o));
        let texts = outputs(dir, &out, &o);
        assert!(
            texts.iter().any(|(_, t)| t.contains("Bad credentials")),
            "{kind}: the echo reached evalgate: {texts:?}"
        );
        assert_no_hits(&texts, &[path_key, session, fragment, header]);
    }
}

/// A REST system that redirects to another origin never gets the configured headers sent there
/// (reqwest would forward every header but `Authorization`): the run stops with a named cause.
#[test]
fn a_redirect_to_another_origin_gets_no_configured_header() {
    let d = tempdir();
    let dir = d.path();
    // the other origin echoes what it is sent; `localhost` is another origin than 127.0.0.1
    let echo = echo_401_server();
    let port = http_server(move |_| {
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://localhost:{echo}/landing\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
    });
    let header = "headerSecretRedirect0088";
    let o = evalgate_env(
        dir,
        &[
            "run",
            "--sut",
            "rest",
            "--url",
            &format!("http://127.0.0.1:{port}/search"),
            "--header",
            &format!("X-Api-Key: {header}"),
            "--timeout",
            "5",
            "--out",
            "out",
        ],
        &[],
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let texts = outputs(dir, "out", &o);
    assert!(
        texts
            .iter()
            .any(|(_, t)| t.contains("redirected to another origin (http://localhost:")),
        "{texts:?}"
    );
    // the other origin was never asked (it would have echoed the header back)
    assert!(
        !texts.iter().any(|(_, t)| t.contains("Bad credentials")),
        "{texts:?}"
    );
    assert_no_hits(&texts, &[header]);
}

/// Item 2: `evalgate publish` scrubs what it reads from report.json: a report carrying the
/// token (written by an older evalgate, or by hand) is never posted verbatim.
#[test]
fn publish_never_posts_a_token_the_report_carries() {
    let fake = tokio_rt().block_on(FakeGitHub::start(FakeOptions {
        token: EVALGATE_TOKEN.into(),
        ..FakeOptions::default()
    }));
    let d = tempdir();
    let dir = d.path();
    let o = evalgate(
        dir,
        &[
            "run",
            "--no-baseline",
            "--out",
            "r",
            "-q",
            "--publish",
            "never",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let p = dir.join("r/report.json");
    let mut report = read_json(&p);
    report["warnings"] = serde_json::json!([
        format!("a server said: token {EVALGATE_TOKEN} rejected"),
        format!("and {GITHUB_TOKEN}, {RUNTIME_TOKEN}")
    ]);
    write_json(&dir.join("r"), "report.json", &report);
    let mut env = github_env(dir, &fake);
    env.push(("EVALGATE_GITHUB_TOKEN".into(), EVALGATE_TOKEN.into()));
    env.push(("ACTIONS_RUNTIME_TOKEN".into(), RUNTIME_TOKEN.into()));
    env.push(("GITHUB_TOKEN".into(), GITHUB_TOKEN.into()));
    // evalgate's own settings are no credentials, though this one's name says KEY
    env.push(("EVALGATE_COMMENT_KEY".into(), "evalgate-matrix".into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let o = evalgate_env(
        dir,
        &[
            "publish",
            "--report-dir",
            "r",
            "--pr",
            &PR.to_string(),
            "--head-sha",
            HEAD,
        ],
        &env,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let texts = github_texts(&fake);
    assert!(
        texts
            .iter()
            .any(|(n, t)| n.starts_with("comment")
                && t.contains("<!-- evalgate:evalgate-matrix -->")),
        "the comment was posted with its marker: {texts:?}"
    );
    let mut all = texts;
    all.push(("stdout".into(), stdout(&o)));
    all.push(("stderr".into(), stderr(&o)));
    for f in ["summary.md", "output.txt"] {
        all.push((
            f.into(),
            std::fs::read_to_string(dir.join(f)).unwrap_or_default(),
        ));
    }
    assert_no_hits(&all, &[EVALGATE_TOKEN, GITHUB_TOKEN, RUNTIME_TOKEN]);
}
