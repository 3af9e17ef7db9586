//! The composite action (action.yml) under a real GitHub Actions runner: nektos/act v0.2.89, in
//! host mode (`-P ubuntu-latest=-self-hosted`: no Docker), offline, on throwaway git repositories
//! made in temporary directories.
//!
//! act is installed by `bash scripts/setup-act.sh` (`go install github.com/nektos/act@v0.2.89`
//! into target/tools/act-v0.2.89/). Without it every test here fails, naming that script: nothing
//! stands in for the runner, and no test passes without it (the test runner script leaves this
//! binary out instead, visibly, when act is missing and CI is not set). The mcpproxy test needs
//! the real mcpproxy v0.60.0 (tests/setup-mcpproxy.sh) the same way.
//!
//! What a user writes is what runs: `uses: evalgate/evalgate@v0`, `actions/checkout`, matrices,
//! `needs:`, step outputs and `if:`. GitHub is unreachable here, so:
//! - the action comes from act's `--local-repository evalgate/evalgate@v0=DIR`, DIR holding this
//!   checkout's files (tracked and new, as the runner downloads a repository: Cargo.toml
//!   included, so the install step must not take it for evalgate's own checkout);
//! - the install step installs the binary under test the way a user's runner installs a release:
//!   the release workflow's scripts (release-assets.sh, update-checksums.sh) package the freshly
//!   built binary, and scripts/install.sh downloads it from `file://`
//!   (EVALGATE_RELEASE_BASE_URL) and checks its sha256 against the table
//!   (EVALGATE_CHECKSUMS_FILE);
//! - act resolves every `uses:` of a composite action before it evaluates the step's `if:`, so the
//!   action's `actions/upload-artifact` (skipped under act) is mapped, also with
//!   `--local-repository`, to a stand-in that fails the job if it ever runs: the real upload stays
//!   in action.yml for GitHub, and these tests prove act never runs it;
//! - `actions/checkout` is act's own local checkout (it copies the repository), as always;
//! - the shard matrix's artifact hand-over (upload-artifact, download-artifact) is a copy through
//!   a host directory ($OUT), the only step that differs from the README's recipe.
//!
//! evalgate sees `ACT=true` and does its dry run: nothing is posted (act is given a token, as a
//! user's act may be) and the comment and check-run payloads land in the report directory. The
//! tests read act's structured log (`--json`): job results, step outputs, `::error` lines, the
//! job summary (act prints `$GITHUB_STEP_SUMMARY` after each step), and the steps' output.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ACT_VERSION: &str = "v0.2.89";
/// The pull request's head commit in the event (GITHUB_SHA, the commit act checks out, differs).
const PR_HEAD: &str = "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c";
/// What act is given as the token: the dry run must neither use nor show it.
const TOKEN: &str = "ghs_actDryRunToken00000000000000000000000";
/// One act run at most (the slowest, the mcpproxy run, takes about a minute).
const ACT_DEADLINE: Duration = Duration::from_secs(900);
const CHECKOUT: &str = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2";

/// act, installed by scripts/setup-act.sh (or the binary `EVALGATE_ACT` names); fails the test,
/// naming the script, when it is not there.
fn act_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("EVALGATE_ACT") {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "EVALGATE_ACT names {}, which does not exist",
            p.display()
        );
        return p;
    }
    let dir = std::env::var_os("EVALGATE_ACT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(format!("target/tools/act-{ACT_VERSION}")));
    let bin = dir.join("act");
    if bin.is_file() {
        return bin;
    }
    let why = fs::read_to_string(dir.join("UNAVAILABLE"))
        .map(|w| format!("; its install failed: {}", w.trim()))
        .unwrap_or_default();
    panic!(
        "act {ACT_VERSION} is not installed at {}: run `bash scripts/setup-act.sh` (go install \
         github.com/nektos/act@{ACT_VERSION} from the Go module proxy){why}",
        bin.display()
    );
}

/// The real mcpproxy v0.60.0 built by tests/setup-mcpproxy.sh; fails the test when missing.
fn mcpproxy() -> PathBuf {
    if let Some(p) = std::env::var_os("EVALGATE_MCPPROXY_V0_60_0") {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "EVALGATE_MCPPROXY_V0_60_0 names {}, which does not exist",
            p.display()
        );
        return p;
    }
    let dir = std::env::var_os("EVALGATE_MCPPROXY_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/mcpproxy"))
        .join("v0.60.0");
    let bin = dir.join("mcpproxy");
    if bin.is_file() {
        return bin;
    }
    let why = fs::read_to_string(dir.join("UNAVAILABLE"))
        .unwrap_or_else(|_| "tests/setup-mcpproxy.sh has not run".into());
    panic!(
        "mcpproxy v0.60.0 is not installed at {}, so this test cannot run (run `bash \
         tests/setup-mcpproxy.sh`): {why}",
        bin.display()
    );
}

/// The release target of this machine.
fn target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-musl",
        ("linux", "aarch64") => "aarch64-unknown-linux-musl",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        (os, arch) => panic!("no evalgate release target for {os}/{arch}"),
    }
}

fn run_ok(c: &mut Command, what: &str) -> String {
    let o = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        o.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn git(repo: &Path, args: &[&str]) -> String {
    let mut c = Command::new("git");
    c.args([
        "-c",
        "user.name=evalgate tests",
        "-c",
        "user.email=tests@example.invalid",
    ])
    .args([
        "-c",
        "commit.gpgsign=false",
        "-c",
        "init.defaultBranch=main",
    ])
    .args(args)
    .current_dir(repo)
    .env_remove("GIT_DIR")
    .env_remove("GIT_WORK_TREE");
    run_ok(&mut c, &format!("git {}", args.join(" ")))
}

/// The `uses:` of action.yml's upload step: the only action the composite action calls.
fn upload_action() -> String {
    let yml = fs::read_to_string(root().join("action.yml")).unwrap();
    let uses: Vec<&str> = yml
        .lines()
        .filter_map(|l| {
            l.trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses:")
        })
        .map(|u| u.split(" #").next().unwrap().trim())
        .collect();
    assert_eq!(
        uses.len(),
        1,
        "action.yml calls {uses:?}: each action it uses needs an offline source here"
    );
    assert!(uses[0].starts_with("actions/upload-artifact@"), "{uses:?}");
    uses[0].to_string()
}

/// Removes ANSI escape sequences (evalgate colours its tables on act's pty).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A throwaway repository with a workflow, the action and a local release of the binary under
/// test, and act's directories, all in one temporary directory.
struct Act {
    dir: tempfile::TempDir,
    repo: PathBuf,
    /// The host directory the workflows write what the test reads ($OUT in every step).
    out: PathBuf,
    act: PathBuf,
}

impl Act {
    fn new() -> Act {
        let act = act_bin();
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().to_path_buf();
        let (repo, out) = (base.join("repo"), base.join("out"));
        for d in [&repo, &out, &base.join("home"), &base.join("cache")] {
            fs::create_dir_all(d).unwrap();
        }

        // the release: the freshly built binary (stripped, as the release profile does),
        // packaged and recorded by the release workflow's scripts
        let version = env!("CARGO_PKG_VERSION");
        let bin = base.join(format!("bins/bin-{}/evalgate", target()));
        fs::create_dir_all(bin.parent().unwrap()).unwrap();
        let stripped = Command::new("strip")
            .arg("-o")
            .arg(&bin)
            .arg(evalgate_bin())
            .status()
            .is_ok_and(|s| s.success());
        if !stripped {
            fs::copy(evalgate_bin(), &bin).unwrap();
        }
        let assets = base.join(format!("download/v{version}"));
        run_ok(
            Command::new("bash")
                .arg(root().join("scripts/release-assets.sh"))
                .args(["--targets", target(), version])
                .arg(base.join("bins"))
                .arg(&assets)
                .env("EVALGATE_GZIP_LEVEL", "1"),
            "release-assets.sh",
        );
        fs::copy(
            root().join("dist/checksums.txt"),
            base.join("checksums.txt"),
        )
        .unwrap();
        run_ok(
            Command::new("bash")
                .arg(root().join("scripts/update-checksums.sh"))
                .arg(version)
                .arg(&assets)
                .arg(base.join("checksums.txt")),
            "update-checksums.sh",
        );

        // the action: this checkout's files, tracked and new (what a commit of it would hold)
        let files = run_ok(
            Command::new("git")
                .args([
                    "ls-files",
                    "-z",
                    "--cached",
                    "--others",
                    "--exclude-standard",
                ])
                .current_dir(root()),
            "git ls-files",
        );
        let action = base.join("action");
        for f in files.split('\0').filter(|f| !f.is_empty()) {
            let from = root().join(f);
            if !from.is_file() {
                continue; // deleted in the work tree
            }
            let to = action.join(f);
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::copy(&from, &to).unwrap();
        }
        assert!(action.join("action.yml").is_file());

        // the stand-in for actions/upload-artifact: act must read it, and must never run it
        let standin = base.join("upload-artifact-stand-in");
        fs::create_dir_all(&standin).unwrap();
        fs::write(
            standin.join("action.yml"),
            "name: upload-artifact stand-in (tests/act.rs)\n\
             description: act cannot fetch actions/upload-artifact offline; the action skips its upload under act, so this never runs\n\
             runs:\n  using: composite\n  steps:\n    - shell: bash\n      run: |\n        \
             echo '::error title=tests/act.rs::the upload-artifact stand-in ran: the action uploaded under act'\n        \
             exit 1\n",
        )
        .unwrap();

        git(&repo, &["init", "-q"]);
        git(
            &repo,
            &[
                "remote",
                "add",
                "origin",
                "https://github.com/example/proxy.git",
            ],
        );
        Act {
            dir,
            repo,
            out,
            act,
        }
    }

    fn base(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file of the throwaway repository.
    fn file(&self, rel: &str, contents: &str) {
        let p = self.repo.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, contents).unwrap();
    }

    /// The small starter datasets, as datasets/v0 of the repository.
    fn datasets_v0(&self) {
        for f in ["corpus.json", "golden.json", "security.json"] {
            self.file(
                &format!("datasets/v0/{f}"),
                &fs::read_to_string(root().join("datasets/v0").join(f)).unwrap(),
            );
        }
    }

    /// Commits `workflow` as .github/workflows/evalgate.yml and runs `act pull_request` on it.
    fn run(&self, name: &str, workflow: &str, env: &[(&str, &str)]) -> ActRun {
        self.file(".github/workflows/evalgate.yml", workflow);
        git(&self.repo, &["add", "-A"]);
        git(&self.repo, &["commit", "-q", "-m", name]);
        let event = serde_json::json!({
            "action": "synchronize",
            "number": 7,
            "pull_request": {
                "number": 7,
                "head": {"ref": "faster-search", "sha": PR_HEAD, "repo": {"full_name": "example/proxy"}},
                "base": {"ref": "main", "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e", "repo": {"full_name": "example/proxy"}}
            },
            "repository": {"full_name": "example/proxy", "name": "proxy", "owner": {"login": "example"}}
        });
        let event_path = self.base().join("event.json");
        fs::write(&event_path, event.to_string()).unwrap();

        let b = self.base();
        let s = |p: &Path| p.display().to_string();
        let mut c = Command::new(&self.act);
        c.args(["pull_request", "--json", "-P", "ubuntu-latest=-self-hosted"])
            .arg("-e")
            .arg(&event_path)
            .arg("--action-cache-path")
            .arg(b.join("cache"))
            .arg("--local-repository")
            .arg(format!("evalgate/evalgate@v0={}", s(&b.join("action"))))
            .arg("--local-repository")
            .arg(format!(
                "{}={}",
                upload_action(),
                s(&b.join("upload-artifact-stand-in"))
            ))
            .args(["--container-daemon-socket", "-"])
            .arg("-s")
            .arg(format!("GITHUB_TOKEN={TOKEN}"))
            .arg("--env")
            .arg(format!("OUT={}", s(&self.out)))
            .arg("--env")
            .arg(format!(
                "EVALGATE_RELEASE_BASE_URL=file://{}",
                s(&b.join("download"))
            ))
            .arg("--env")
            .arg(format!(
                "EVALGATE_CHECKSUMS_FILE={}",
                s(&b.join("checksums.txt"))
            ));
        for (k, v) in env {
            c.arg("--env").arg(format!("{k}={v}"));
        }
        // nothing of the caller's runner (if the tests run under Actions) or evalgate settings,
        // a HOME of its own (no ~/.actrc), no notice fetched from the network
        scrub_caller_env(&mut c);
        c.current_dir(&self.repo)
            .env("HOME", b.join("home"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env("ACT_DISABLE_VERSION_CHECK", "1")
            .stdin(Stdio::null())
            .stdout(fs::File::create(b.join("act.json")).unwrap())
            .stderr(fs::File::create(b.join("act.stderr")).unwrap())
            .process_group(0);
        let start = Instant::now();
        let mut child = c.spawn().expect("act starts");
        let group = nix::unistd::Pid::from_raw(child.id() as i32);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > ACT_DEADLINE {
                let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait();
                panic!(
                    "{name}: act ran longer than {ACT_DEADLINE:?}: {}",
                    fs::read_to_string(b.join("act.stderr")).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let secs = start.elapsed().as_secs_f64();
        let records: Vec<Value> = fs::read_to_string(b.join("act.json"))
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let run = ActRun {
            name: name.to_string(),
            code: status.code().unwrap_or(-1),
            records,
            stderr: fs::read_to_string(b.join("act.stderr")).unwrap_or_default(),
        };
        eprintln!("act: {name}: {secs:.1} s, exit {}", run.code);
        assert!(
            !run.records.is_empty(),
            "{name}: act logged nothing: {}",
            run.stderr
        );
        self.assert_no_process_left(name);
        run
    }

    /// Nothing the run started (evalgate installed in the job's RUNNER_TEMP, a proxy, mcpproxy)
    /// is still alive once act has exited.
    fn assert_no_process_left(&self, name: &str) {
        let base = self.base().display().to_string();
        let start = Instant::now();
        loop {
            let left: Vec<String> = fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
                .filter_map(|e| {
                    let exe = fs::read_link(e.path().join("exe")).ok()?;
                    let cmd = fs::read_to_string(e.path().join("cmdline")).unwrap_or_default();
                    (exe.display().to_string().starts_with(&base) || cmd.contains(&base))
                        .then(|| format!("{}: {}", exe.display(), cmd.replace('\0', " ")))
                })
                .collect();
            if left.is_empty() {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{name}: processes left after act exited: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.out.join(rel)).unwrap_or_else(|e| panic!("$OUT/{rel}: {e}"))
    }

    fn json(&self, rel: &str) -> Value {
        serde_json::from_str(&self.read(rel)).unwrap_or_else(|e| panic!("$OUT/{rel}: {e}"))
    }
}

/// act's structured log of one run (`--json`: one record per line).
struct ActRun {
    name: String,
    code: i32,
    records: Vec<Value>,
    stderr: String,
}

impl ActRun {
    /// The records of job `job` (and of the matrix leg whose `key` is `value`).
    fn of<'a>(
        &'a self,
        job: &'a str,
        leg: Option<(&'a str, &'a str)>,
    ) -> impl Iterator<Item = &'a Value> {
        self.records
            .iter()
            .filter(move |r| r["jobID"] == job && leg.is_none_or(|(k, v)| r["matrix"][k] == v))
    }

    fn job_results(&self, job: &str) -> Vec<String> {
        self.of(job, None)
            .filter_map(|r| r["jobResult"].as_str().map(String::from))
            .collect()
    }

    /// What the job's steps printed (ANSI colours removed).
    fn output(&self, job: &str, leg: Option<(&str, &str)>) -> String {
        let raw: String = self
            .of(job, leg)
            .filter(|r| r["raw_output"] == true)
            .filter_map(|r| r["msg"].as_str())
            .collect();
        strip_ansi(&raw)
    }

    fn is_step(r: &Value, step: &[&str]) -> bool {
        r["stepID"].as_array().is_some_and(|ids| {
            ids.iter()
                .map(|i| i.as_str().unwrap_or(""))
                .eq(step.iter().copied())
        })
    }

    /// The job summaries act read from `$GITHUB_STEP_SUMMARY` after `step` (a composite
    /// action's inner step is `["gate", "run"]`).
    fn summaries(&self, job: &str, leg: Option<(&str, &str)>, step: &[&str]) -> Vec<String> {
        self.of(job, leg)
            .filter(|r| r["command"] == "summary" && Self::is_step(r, step))
            .filter_map(|r| r["content"].as_str().map(String::from))
            .collect()
    }

    /// The `::error` workflow commands of the job: (title, message).
    fn errors(&self, job: &str) -> Vec<(String, String)> {
        self.of(job, None)
            .filter(|r| r["command"] == "error")
            .map(|r| {
                (
                    r["kvPairs"]["title"].as_str().unwrap_or("").to_string(),
                    r["arg"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    /// The outputs `step` wrote to `$GITHUB_OUTPUT`, as act read them.
    fn outputs(
        &self,
        job: &str,
        leg: Option<(&str, &str)>,
        step: &[&str],
    ) -> BTreeMap<String, String> {
        self.of(job, leg)
            .filter(|r| r["command"] == "set-output" && Self::is_step(r, step))
            .map(|r| {
                (
                    r["name"].as_str().unwrap_or("").to_string(),
                    r["arg"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    /// Whether the main stage of `step` ran (a skipped step has no `⭐ Run Main` record).
    fn ran(&self, job: &str, step: &[&str]) -> bool {
        self.of(job, None).any(|r| {
            r["stage"] == "Main"
                && Self::is_step(r, step)
                && r["msg"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("\u{2b50} Run Main"))
        })
    }

    /// The log as act prints it (for failure messages): its last 200 lines.
    fn log(&self) -> String {
        let lines: Vec<String> = self
            .records
            .iter()
            .map(|r| {
                format!(
                    "[{}] {}",
                    r["jobID"].as_str().unwrap_or(""),
                    strip_ansi(r["msg"].as_str().unwrap_or("")).trim_end()
                )
            })
            .collect();
        let tail = lines.len().saturating_sub(200);
        format!(
            "act run {:?}, exit {}:\n{}\nstderr: {}",
            self.name,
            self.code,
            lines[tail..].join("\n"),
            self.stderr
        )
    }
}

/// The step every workflow here ends a job with: what the test reads after act exits (the
/// job's workspace is removed with the job). `if: always()`, so it runs after a failed gate too.
const KEEP: &str = r#"      - if: always()
        env:
          GATE: ${{ toJSON(steps.gate) }}
          REPORT_DIR: ${{ steps.gate.outputs.report-dir }}
        run: |
          mkdir -p "$OUT/$GITHUB_JOB"
          printf '%s' "$GATE" > "$OUT/$GITHUB_JOB/gate.json"
          cp -R "$REPORT_DIR" "$OUT/$GITHUB_JOB/report"
          # the install step put evalgate on GITHUB_PATH: later steps find it
          bin="$(command -v evalgate || true)"
          printf '%s' "$bin" > "$OUT/$GITHUB_JOB/evalgate-path"
          if [ -n "$bin" ]; then sha256sum "$bin" | cut -d' ' -f1 > "$OUT/$GITHUB_JOB/evalgate.sha256"; fi
"#;

fn workflow(jobs: &str) -> String {
    format!(
        "name: evalgate\non: pull_request\npermissions:\n  contents: read\n  pull-requests: write\n  checks: write\njobs:\n{jobs}"
    )
}

/// What every gate run leaves the same way: the verified release installed, the upload skipped
/// (its stand-in never ran), the dry run announced, the token nowhere.
fn assert_common(a: &Act, run: &ActRun, job: &str) {
    let log = run.log();
    let install = run.outputs(job, None, &["gate", "install"]);
    // installed into the job's RUNNER_TEMP (act's <cache>/<job dir>/tmp), put on GITHUB_PATH,
    // and the packaged binary byte for byte
    let bin = install.get("bin").cloned().unwrap_or_default();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        bin.starts_with(&a.base().join("cache").display().to_string())
            && bin.ends_with(&format!("/tmp/evalgate/{version}/bin/evalgate")),
        "{bin}\n{log}"
    );
    let path_added: Vec<&str> = run
        .of(job, None)
        .filter(|r| r["command"] == "add-path" && ActRun::is_step(r, &["gate", "install"]))
        .filter_map(|r| r["arg"].as_str())
        .collect();
    assert_eq!(
        path_added,
        [bin.strip_suffix("/evalgate").unwrap()],
        "{log}"
    );
    assert_eq!(
        a.read(&format!("{job}/evalgate-path")),
        bin,
        "a later step's evalgate"
    );
    let packaged = fs::read(a.base().join(format!("bins/bin-{}/evalgate", target()))).unwrap();
    let packaged: String = <sha2::Sha256 as sha2::Digest>::digest(&packaged)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(a.read(&format!("{job}/evalgate.sha256")).trim(), packaged);
    assert_eq!(
        install.get("source").map(String::as_str),
        Some("release"),
        "{log}"
    );
    assert_eq!(
        install.get("version").map(String::as_str),
        Some(env!("CARGO_PKG_VERSION")),
        "{log}"
    );
    let out = run.output(job, None);
    assert!(out.contains("evalgate install: sha256 verified: "), "{log}");
    assert!(run.ran(job, &["gate", "run"]), "{log}");
    assert!(
        !run.ran(job, &["gate", "upload"]),
        "the upload ran under act: {log}"
    );
    assert!(
        !out.contains("stand-in ran") && run.errors(job).iter().all(|(t, _)| t != "tests/act.rs"),
        "{log}"
    );
    let all: String = run.records.iter().map(|r| r.to_string()).collect();
    assert!(!all.contains(TOKEN), "the token shows in act's log");
}

fn assert_summary_is_the_dry_run_one(summary: &[String], dry_run: &str, log: &str) {
    assert_eq!(
        summary.len(),
        1,
        "one job summary from the run step: {summary:?}\n{log}"
    );
    assert_eq!(
        summary[0], dry_run,
        "$GITHUB_STEP_SUMMARY holds exactly the summary of the dry run (github-summary.md)"
    );
    assert!(summary[0].len() < 1 << 20, "under GitHub's 1 MiB");
}

/// The README's workflow, the action's defaults: evalgate installs from the checksum-verified
/// release, measures its reference proxy on the built-in datasets, passes, and under act writes
/// what it would post.
#[test]
fn the_plain_gate_passes_and_writes_its_summary_outputs_and_dry_run_payloads() {
    let a = Act::new();
    let run = a.run(
        "plain gate",
        &workflow(&format!(
            "  evalgate:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: {CHECKOUT}\n        with:\n          persist-credentials: false\n      - id: gate\n        uses: evalgate/evalgate@v0\n        with:\n          comment: always\n{KEEP}"
        )),
        &[],
    );
    let log = run.log();
    assert_eq!(run.code, 0, "{log}");
    assert_eq!(run.job_results("evalgate"), ["success"], "{log}");
    assert_common(&a, &run, "evalgate");

    // the step's outputs as the workflow sees them (steps.gate)
    let gate = a.json("evalgate/gate.json");
    assert_eq!(gate["outcome"], "success", "{gate}");
    let o = &gate["outputs"];
    assert_eq!(o["verdict"], "pass", "{gate}");
    assert_eq!(o["exit-code"], "0");
    assert_eq!(o["regressions"], "[]");
    assert_eq!(o["evalgate-version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(o["artifact-url"], "", "nothing uploaded under act");
    let dir = o["report-dir"].as_str().unwrap();
    assert!(dir.ends_with("/evalgate-report"), "{dir}");
    for (k, f) in [
        ("report-json", "report.json"),
        ("report-md", "report.md"),
        ("report-html", "report.html"),
    ] {
        assert_eq!(o[k], format!("{dir}/{f}"), "{k}");
        assert!(
            a.out
                .join("evalgate/report")
                .join(f)
                .metadata()
                .unwrap()
                .len()
                > 0,
            "{f}"
        );
    }
    let out = run.output("evalgate", None);
    // no system chosen: evalgate measures the reference proxy (the action says so through
    // EVALGATE_DEFAULT_SUT; it never appends --sut itself)
    assert!(
        out.contains(" run --out ") && out.contains("Tool discovery: retriever reference-proxy"),
        "the reference proxy: {out}"
    );
    assert!(out.contains("act: dry run, nothing posted"), "{out}");
    // the terminal table on act's pty (0 columns): whole, not one character per column
    assert!(
        out.lines()
            .any(|l| l.contains("Current (mean ± 95% CI)") && l.contains("Baseline")),
        "the table's header is not on one line:\n{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("│ Recall@5")), "{out}");

    // the job summary act read from $GITHUB_STEP_SUMMARY
    let summary = run.summaries("evalgate", None, &["gate", "run"]);
    let dry = a.read("evalgate/report/github-summary.md");
    assert_summary_is_the_dry_run_one(&summary, &dry, &log);
    let s = &summary[0];
    assert!(s.starts_with("## evalgate: ✅ pass\n"), "{s}");
    assert!(
        s.contains("### Tool discovery · retriever `reference-proxy` · 586 queries"),
        "{s}"
    );
    assert!(s.contains("### Security detectors · 435 entries"), "{s}");
    assert!(
        s.contains("[Full report (HTML and JSON): artifact `evalgate-report-evalgate` of this run](https://github.com/example/proxy/actions/runs/"),
        "the link names the artifact the action would upload: {s}"
    );

    // the dry-run payloads: the comment (comment: always) and the check run, on the PR's head
    let comment = a.read("evalgate/report/github-comment.md");
    assert!(
        comment.starts_with("<!-- evalgate:evalgate -->"),
        "{comment}"
    );
    assert!(comment.contains("## evalgate: ✅ pass"), "{comment}");
    let check = a.json("evalgate/report/github-check-run.json");
    assert_eq!(check["create"]["name"], "evalgate", "{check}");
    assert_eq!(
        check["create"]["head_sha"], PR_HEAD,
        "the PR's head, not GITHUB_SHA: {check}"
    );
    assert_eq!(check["complete"]["status"], "completed");
    assert_eq!(
        check["complete"]["conclusion"], "neutral",
        "retrieval is not gated: {check}"
    );
    assert!(
        check["complete"]["output"]["title"]
            .as_str()
            .unwrap()
            .contains("pass"),
        "{check}"
    );
    assert_eq!(check["annotation_batches"], Value::Array(vec![]), "{check}");
    assert!(
        run.errors("evalgate").is_empty(),
        "{:?}",
        run.errors("evalgate")
    );
}

/// README's mcpproxy variant: the binary is installed earlier in the job and passed with
/// `mcpproxy-bin`; evalgate launches the real mcpproxy v0.60.0 over the frozen corpus, gates it
/// against the proxy's own first baseline, stops it, and passes. As the README has it, that
/// baseline is measured once on the developer's machine (`evalgate baseline update
/// --mcpproxy-bin …`) and committed. On the small starter datasets (datasets/v0), to stay fast:
/// the v1 corpus takes mcpproxy about 90 s per run over MCP.
#[test]
fn the_mcpproxy_variant_measures_the_real_mcpproxy_against_its_baseline() {
    let proxy = mcpproxy();
    let a = Act::new();
    a.datasets_v0();
    let o = clean_command(
        &a.repo,
        &[
            "baseline",
            "update",
            "--mcpproxy-bin",
            proxy.to_str().unwrap(),
            "--datasets",
            "datasets/v0",
            "--output",
            "baselines/mcpproxy.json",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "baseline update: {}{}", stdout(&o), stderr(&o));
    let b = read_json(&a.repo.join("baselines/mcpproxy.json"));
    assert_eq!(
        b["retrieval"]["retriever"], "mcpproxy",
        "{}",
        b["retrieval"]
    );

    let run = a.run(
        "mcpproxy",
        &workflow(&format!(
            r#"  evalgate:
    runs-on: ubuntu-latest
    steps:
      - uses: {CHECKOUT}
        with:
          persist-credentials: false
      # stands in for actions/setup-go and `go install …/cmd/mcpproxy@v0.60.0` (network): the
      # same pinned build, from tests/setup-mcpproxy.sh
      - run: cp "$MCPPROXY_PREBUILT" "$RUNNER_TEMP/mcpproxy"
      - id: gate
        uses: evalgate/evalgate@v0
        with:
          mcpproxy-bin: ${{{{ runner.temp }}}}/mcpproxy
          baseline: baselines/mcpproxy.json
          datasets: datasets/v0
{KEEP}"#
        )),
        &[("MCPPROXY_PREBUILT", proxy.to_str().unwrap())],
    );
    let log = run.log();
    assert_eq!(run.code, 0, "{log}");
    assert_eq!(run.job_results("evalgate"), ["success"], "{log}");
    assert_common(&a, &run, "evalgate");
    let out = run.output("evalgate", None);
    assert!(
        out.lines().any(|l| l.starts_with("evalgate action: ")
            && l.contains(" run --mcpproxy-bin /")
            && l.contains("/tmp/mcpproxy --out ")),
        "mcpproxy-bin (in the job's RUNNER_TEMP) reaches evalgate: {out}"
    );

    let gate = a.json("evalgate/gate.json");
    assert_eq!(gate["outputs"]["verdict"], "pass", "{gate}\n{log}");
    assert_eq!(gate["outputs"]["exit-code"], "0");
    assert_eq!(gate["outputs"]["regressions"], "[]");
    let r = read_json(&a.out.join("evalgate/report/report.json"));
    assert_eq!(
        r["retrieval"]["retriever"], "mcpproxy",
        "{}",
        r["retrieval"]
    );
    assert_eq!(r["retrieval"]["queries"], 109);
    for m in ["recall_at_5", "mrr", "ndcg_at_10"] {
        let want = b["retrieval"]["metrics"][m]["value"].as_f64().unwrap();
        let got = r["retrieval"]["metrics"][m]["mean"].as_f64().unwrap();
        eprintln!("mcpproxy v0.60.0 under act, v0: {m} {got:.4} (its baseline {want:.4})");
        assert!((got - want).abs() < 0.005, "{m}: {got} vs baseline {want}");
    }
    let checks = r["gate"]["checks"].as_array().unwrap();
    for m in ["recall_at_5", "mrr", "ndcg_at_10"] {
        assert!(
            checks
                .iter()
                .any(|c| c["subject"] == "retrieval" && c["metric"] == m && c["status"] == "pass"),
            "retrieval {m} is gated and holds: {checks:?}"
        );
    }

    let summary = run.summaries("evalgate", None, &["gate", "run"]);
    let dry = a.read("evalgate/report/github-summary.md");
    assert_summary_is_the_dry_run_one(&summary, &dry, &log);
    let s = &summary[0];
    assert!(s.starts_with("## evalgate: ✅ pass\n"), "{s}");
    assert!(s.contains("retriever `mcpproxy`"), "{s}");
    assert!(s.contains("Baseline: `baselines/mcpproxy.json`"), "{s}");
    let check = a.json("evalgate/report/github-check-run.json");
    assert_eq!(check["complete"]["conclusion"], "success", "{check}");
}

/// The README's sharding recipe: a matrix of two legs measures one shard each and posts
/// nothing; the job that `needs:` them merges their reports and gates, publishes and exits as
/// one job would, with the one-job run's numbers.
#[test]
fn a_shard_matrix_and_its_merge_job_give_the_one_job_report() {
    let a = Act::new();
    let run = a.run(
        "shards",
        &workflow(&format!(
            r#"  measure:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        shard: [1/2, 2/2]
    steps:
      - uses: {CHECKOUT}
        with: {{ persist-credentials: false }}
      - id: gate
        uses: evalgate/evalgate@v0
        with:
          shard: ${{{{ matrix.shard }}}}
      # stands in for the upload the action makes on GitHub (upload-artifact cannot run offline)
      - env:
          REPORT_DIR: ${{{{ steps.gate.outputs.report-dir }}}}
          SHARD: ${{{{ matrix.shard }}}}
        run: mkdir -p "$OUT/artifacts" && cp -R "$REPORT_DIR" "$OUT/artifacts/shard-${{SHARD%/*}}"
  gate:
    needs: measure
    runs-on: ubuntu-latest
    steps:
      - uses: {CHECKOUT}
        with: {{ persist-credentials: false }}
      # stands in for actions/download-artifact (pattern: evalgate-report-measure-*, path: shards)
      - run: cp -R "$OUT/artifacts" shards
      - id: gate
        uses: evalgate/evalgate@v0
        with:
          merge: shards
{KEEP}"#
        )),
        &[],
    );
    let log = run.log();
    assert_eq!(run.code, 0, "{log}");
    assert_eq!(run.job_results("measure"), ["success", "success"], "{log}");
    assert_eq!(run.job_results("gate"), ["success"], "{log}");
    for (i, leg) in ["1/2", "2/2"].into_iter().enumerate() {
        let l = Some(("shard", leg));
        let out = run.output("measure", l);
        assert!(
            out.contains(&format!(" run --shard {leg} --out "))
                && out.contains("Tool discovery: retriever reference-proxy"),
            "{leg}: {out}"
        );
        assert!(
            out.contains(&format!("github: shard {leg} is not published")),
            "{leg}: {out}"
        );
        assert!(
            run.summaries("measure", l, &["gate", "run"]).is_empty(),
            "a shard writes no job summary"
        );
        // the name the leg's report would be uploaded under. act v0.2.89 gives a composite
        // action an empty `matrix` (its composite run context copies none:
        // pkg/runner/action_composite.go), so under act every leg derives the job's key alone;
        // on GitHub, where composite actions see `matrix`, the legs' names are
        // evalgate-report-measure-1-2 and -2-2 (tests/action.rs). The hand-over below does not
        // depend on the name.
        let o = run.outputs("measure", l, &["gate", "run"]);
        assert_eq!(
            o.get("artifact-name").map(String::as_str),
            Some("evalgate-report-measure"),
            "{o:?}"
        );
        assert_eq!(o.get("comment-key").map(String::as_str), Some("measure"));
        let dir = a.out.join(format!("artifacts/shard-{}", i + 1));
        assert!(dir.join("report.json").is_file(), "{}", dir.display());
        for f in [
            "github-comment.md",
            "github-summary.md",
            "github-check-run.json",
        ] {
            assert!(!dir.join(f).exists(), "{leg}: a shard writes no {f}");
        }
        assert!(!run.ran("measure", &["gate", "upload"]));
    }
    assert_common(&a, &run, "gate");

    let out = run.output("gate", None);
    assert!(
        out.lines().any(|l| l.starts_with("evalgate action: ")
            && l.contains(" merge --out ")
            && l.contains(" shards/shard-1/report.json shards/shard-2/report.json")),
        "{out}"
    );
    let gate = a.json("gate/gate.json");
    let merged = read_json(&a.out.join("gate/report/report.json"));
    let summary = run.summaries("gate", None, &["gate", "run"]);
    assert_summary_is_the_dry_run_one(&summary, &a.read("gate/report/github-summary.md"), &log);
    let check = a.json("gate/report/github-check-run.json");
    assert_eq!(check["create"]["name"], "evalgate (gate)", "{check}");
    assert_eq!(check["create"]["head_sha"], PR_HEAD);

    // the one-job run, outside act: the same numbers
    let d = tempdir();
    let o = clean_command(
        d.path(),
        &["run", "--sut", "reference", "--out", "whole", "-q"],
    )
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let whole = read_json(&d.path().join("whole/report.json"));
    assert_eq!(
        gate["outputs"]["verdict"], whole["gate"]["verdict"],
        "{gate}"
    );
    assert_eq!(merged["retrieval"]["queries"], 586);
    // the numbers, to the last digit (timings aside). Not the entries' description text: the
    // one-job run masks URL query values in it (`?d=***`) and `evalgate merge` does not
    // (`?d=SUMMARY`), a difference of evalgate's, not of the action's.
    let numbers = |mut v: Value| {
        fn walk(v: &mut Value) {
            match v {
                Value::Object(m) => {
                    m.retain(|k, _| !k.ends_with("_ms") && k != "description");
                    m.values_mut().for_each(walk);
                }
                Value::Array(a) => a.iter_mut().for_each(walk),
                _ => {}
            }
        }
        walk(&mut v);
        v
    };
    for (part, key) in [
        ("retrieval", "metrics"),
        ("retrieval", "per_query"),
        ("security", "detectors"),
        ("security", "categories"),
        ("gate", "verdict"),
        ("gate", "checks"),
    ] {
        assert_eq!(
            numbers(merged[part][key].clone()),
            numbers(whole[part][key].clone()),
            "{part}.{key}: merged vs one job"
        );
    }
}

/// README's "See the gate fail on purpose", as a pull request: a baseline that expects a
/// Recall@5 of 0.95 fails the gate, the step and the job; the job prints an `::error` per failed
/// check; the outputs, summary, comment and check run say why.
#[test]
fn a_failing_gate_fails_its_job_with_error_annotations() {
    let a = Act::new();
    let mut strict = read_json(&root().join("baselines/v0.json"));
    strict["retrieval"]["metrics"]["recall_at_5"]["value"] = serde_json::json!(0.95);
    a.file(
        "baselines/strict.json",
        &serde_json::to_string_pretty(&strict).unwrap(),
    );
    a.datasets_v0();
    let run = a.run(
        "failing gate",
        &workflow(&format!(
            r#"  evalgate:
    runs-on: ubuntu-latest
    steps:
      - uses: {CHECKOUT}
        with: {{ persist-credentials: false }}
      - id: gate
        uses: evalgate/evalgate@v0
        env:
          EVALGATE_SUT: embedded   # the system baselines/v0.json was measured on
        with:
          datasets: datasets/v0
          baseline: baselines/strict.json
      - run: touch "$OUT/a-later-step-ran"
{KEEP}"#
        )),
        &[],
    );
    let log = run.log();
    assert_ne!(run.code, 0, "act exits non-zero: {log}");
    assert_eq!(run.job_results("evalgate"), ["failure"], "{log}");
    assert!(
        run.stderr.contains("Job 'evalgate' failed"),
        "{}",
        run.stderr
    );
    assert_common(&a, &run, "evalgate");
    assert!(
        run.output("evalgate", None)
            .contains("Tool discovery: retriever embedded"),
        "{log}"
    );
    assert!(
        !a.out.join("a-later-step-ran").exists(),
        "a step after the failed gate ran"
    );

    let errors = run.errors("evalgate");
    assert_eq!(
        errors,
        [(
            "evalgate: retrieval recall_at_5".to_string(),
            "Recall@5 regressed: 0.6055 is worse than baseline 0.9500 by more than the tolerance 0.020".to_string()
        )],
        "{log}"
    );

    let gate = a.json("evalgate/gate.json");
    assert_eq!(gate["outcome"], "failure", "{gate}");
    assert_eq!(gate["conclusion"], "failure", "{gate}");
    let o = &gate["outputs"];
    assert_eq!(o["verdict"], "fail");
    assert_eq!(o["exit-code"], "1");
    let regressions: Value = serde_json::from_str(o["regressions"].as_str().unwrap()).unwrap();
    assert_eq!(regressions.as_array().unwrap().len(), 1, "{regressions}");
    assert_eq!(regressions[0]["subject"], "retrieval");
    assert_eq!(regressions[0]["metric"], "recall_at_5");
    assert_eq!(regressions[0]["kind"], "tolerance");
    assert_eq!(regressions[0]["baseline"], 0.95);
    assert!((regressions[0]["limit"].as_f64().unwrap() - 0.93).abs() < 1e-9);
    assert!((regressions[0]["current"].as_f64().unwrap() - 0.6055).abs() < 1e-4);

    let out = run.output("evalgate", None);
    assert!(
        out.contains("evalgate: fail — gate failed: Recall@5 fell 0.9500 → 0.6055"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("│ Recall@5") && l.contains("≥ 0.9300") && l.contains("✗ FAIL")),
        "the Recall@5 row, whole, with the limit it missed:\n{out}"
    );

    let summary = run.summaries("evalgate", None, &["gate", "run"]);
    assert_summary_is_the_dry_run_one(&summary, &a.read("evalgate/report/github-summary.md"), &log);
    assert!(
        summary[0].starts_with("## evalgate: ❌ fail\n"),
        "{}",
        summary[0]
    );
    // the default comment mode (on-change) comments on a failure
    let comment = a.read("evalgate/report/github-comment.md");
    assert!(
        comment.starts_with("<!-- evalgate:evalgate -->"),
        "{comment}"
    );
    assert!(comment.contains("## evalgate: ❌ fail"), "{comment}");
    let check = a.json("evalgate/report/github-check-run.json");
    assert_eq!(check["complete"]["conclusion"], "failure", "{check}");
    assert_eq!(check["create"]["head_sha"], PR_HEAD);
    let annotations: Vec<&Value> = check["annotation_batches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["annotations"].as_array().unwrap().iter())
        .collect();
    assert_eq!(annotations.len(), 1, "{check}");
    assert_eq!(annotations[0]["path"], "baselines/strict.json", "{check}");
    assert_eq!(annotations[0]["annotation_level"], "failure", "{check}");
}
