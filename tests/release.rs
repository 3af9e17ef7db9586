//! The release, end to end, as a user of the action receives it (docs/releasing.md).
//!
//! The release workflow's own scripts build a local release from the freshly built binary:
//! scripts/release-version.sh (Cargo.toml, Cargo.lock and action.yml agree),
//! scripts/release-assets.sh (tarball, .sha256, SHA256SUMS, all checked) and
//! scripts/update-checksums.sh (the checksum table the action verifies against). Then the
//! action's install step (read from action.yml) runs on a clean runner: the environment cleared,
//! a fresh HOME, RUNNER_TEMP, GITHUB_PATH and GITHUB_OUTPUT, a PATH of a few system tools and no
//! cargo or rustup, the release served from `file://`. The installed binary must be the packaged
//! one byte for byte, be on GITHUB_PATH, be named by the step outputs, and run `evalgate run`
//! with no configuration from an empty directory (the embedded datasets) to exit 0.
//!
//! Also: a tampered asset installs nothing; the default version that was never released fails
//! with a message that says so and what to do; the release scripts refuse what must not be
//! published; the release targets agree across the workflow, the scripts and the docs; and the
//! crate (`cargo package`) holds exactly what the build needs. `.ci/run` runs
//! `cargo package --locked`, whose verify build compiles the packaged crate.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const EVALGATE: &str = env!("CARGO_BIN_EXE_evalgate");

fn root() -> &'static Path {
    Path::new(ROOT)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `bash scripts/<name> args...` from the repository, in the test's own environment (the
/// release machine, not the runner).
fn script(name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new("bash")
        .arg(root().join("scripts").join(name))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("bash scripts/{name}: {e}"))
}

/// The release target of this machine and the runner's RUNNER_OS / RUNNER_ARCH for it.
fn host() -> (&'static str, &'static str, &'static str) {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => ("x86_64-unknown-linux-musl", "Linux", "X64"),
        ("linux", "aarch64") => ("aarch64-unknown-linux-musl", "Linux", "ARM64"),
        ("macos", "aarch64") => ("aarch64-apple-darwin", "macOS", "ARM64"),
        ("macos", "x86_64") => ("x86_64-apple-darwin", "macOS", "X64"),
        (os, arch) => panic!("no evalgate release target for {os}/{arch}"),
    }
}

fn crate_version() -> String {
    let toml: toml::Table = toml::from_str(&fs::read_to_string(root().join("Cargo.toml")).unwrap())
        .expect("Cargo.toml parses");
    toml["package"]["version"].as_str().unwrap().to_string()
}

// --- action.yml: the install step and the input defaults --------------------------------------

/// A `${{ }}`-free view of one line: `key: value` with the value unquoted.
fn key_value(line: &str) -> Option<(String, String)> {
    let (k, v) = line.trim().split_once(':')?;
    let v = v.trim();
    let v = v
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(v);
    Some((k.trim().to_string(), v.to_string()))
}

/// action.yml's `inputs.<name>.default`.
fn input_default(action_yml: &str, name: &str) -> String {
    let mut current = None;
    let mut in_inputs = false;
    for line in action_yml.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            in_inputs = line.starts_with("inputs:");
            continue;
        }
        if !in_inputs || line.trim_start().starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 2 {
            current = key_value(line).map(|(k, _)| k);
        } else if indent == 4
            && current.as_deref() == Some(name)
            && let Some((k, v)) = key_value(line)
            && k == "default"
        {
            return v;
        }
    }
    String::new()
}

/// The `run:` and `env:` of the step with `id: install` in action.yml's `runs.steps`. The
/// shapes tests/action.rs holds action.yml to (one-line `run:`, `env:` values that are one
/// expression each) are all this needs; anything else fails here.
fn install_step(action_yml: &str) -> (String, Vec<(String, String)>) {
    let lines: Vec<&str> = action_yml.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == "  steps:")
        .expect("runs.steps in action.yml");
    let mut steps: Vec<Vec<String>> = Vec::new();
    for line in &lines[start + 1..] {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if !line.starts_with("    ") {
            break;
        }
        if let Some(rest) = line.strip_prefix("    - ") {
            steps.push(vec![format!("      {rest}")]);
        } else {
            steps
                .last_mut()
                .expect("a step item")
                .push(line.to_string());
        }
    }
    let step = steps
        .iter()
        .find(|s| s.iter().any(|l| l.trim() == "id: install"))
        .expect("a step with id: install");
    let mut run = None;
    let mut env = Vec::new();
    let mut in_env = false;
    for l in step {
        let indent = l.len() - l.trim_start().len();
        if indent == 6 {
            in_env = l.trim() == "env:";
            if let Some(("run", v)) = key_value(l).as_ref().map(|(k, v)| (k.as_str(), v)) {
                run = Some(v.clone());
            }
        } else if in_env && indent == 8 {
            env.push(key_value(l).expect("env: KEY: value"));
        }
    }
    (run.expect("the install step's run:"), env)
}

// --- a local release, built by the release workflow's scripts ----------------------------------

struct Release {
    _dir: TempDir,
    version: String,
    target: &'static str,
    /// The binary handed to the scripts (the freshly built one, without debug info).
    binary: PathBuf,
    /// The download base: `<download>/v<version>/<asset>` (EVALGATE_RELEASE_BASE_URL).
    download: PathBuf,
    /// The checksum table written by scripts/update-checksums.sh (EVALGATE_CHECKSUMS_FILE).
    table: PathBuf,
}

impl Release {
    fn assets(&self) -> PathBuf {
        self.download.join(format!("v{}", self.version))
    }
    fn asset_name(&self) -> String {
        format!("evalgate-{}-{}.tar.gz", self.version, self.target)
    }
}

/// Builds the release of this machine's target from the freshly built binary, with the scripts
/// the release workflow runs, and records its checksum in a copy of the committed table.
fn build_release() -> Release {
    let dir = tempfile::tempdir().unwrap();
    let (target, _, _) = host();

    // plan: the version the workflow would release
    let o = script("release-version.sh", &[&crate_version()], &[]);
    assert!(o.status.success(), "release-version.sh: {}", text(&o));
    let version = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let action_yml = fs::read_to_string(root().join("action.yml")).unwrap();
    assert_eq!(version, input_default(&action_yml, "version"));

    // build: the binary, as the release profile strips it (a debug build is ~130 MB)
    let bins = dir.path().join("bins");
    let binary = bins.join(format!("bin-{target}/evalgate"));
    fs::create_dir_all(binary.parent().unwrap()).unwrap();
    let stripped = Command::new("strip")
        .arg("-o")
        .arg(&binary)
        .arg(EVALGATE)
        .status()
        .is_ok_and(|s| s.success());
    if !stripped {
        fs::copy(EVALGATE, &binary).unwrap();
    }

    // assets
    let download = dir.path().join("download");
    let assets = download.join(format!("v{version}"));
    let o = script(
        "release-assets.sh",
        &[
            "--targets",
            target,
            &version,
            bins.to_str().unwrap(),
            assets.to_str().unwrap(),
        ],
        &[("EVALGATE_GZIP_LEVEL", "1")],
    );
    assert!(o.status.success(), "release-assets.sh: {}", text(&o));

    // the checksum table, starting from the committed one (as the release job does)
    let table = dir.path().join("checksums.txt");
    fs::copy(root().join("dist/checksums.txt"), &table).unwrap();
    let o = script(
        "update-checksums.sh",
        &[&version, assets.to_str().unwrap(), table.to_str().unwrap()],
        &[],
    );
    assert!(o.status.success(), "update-checksums.sh: {}", text(&o));

    Release {
        _dir: dir,
        version,
        target,
        binary,
        download,
        table,
    }
}

// --- a clean runner -----------------------------------------------------------------------------

/// What a step of the simulated runner left behind.
struct StepResult {
    code: i32,
    log: String,
    outputs: BTreeMap<String, String>,
    path_added: Vec<String>,
}

/// A fresh GitHub-hosted runner: nothing from the test's environment, a PATH of the system tools
/// a runner image has (symlinked one by one into its own directory: no cargo, no rustup, nothing
/// from ~/.cargo), the action as the runner downloads it for `uses: evalgate/evalgate@ref`.
struct CleanRunner {
    _dir: TempDir,
    home: PathBuf,
    temp: PathBuf,
    workspace: PathBuf,
    action: PathBuf,
    tools: PathBuf,
    env: BTreeMap<String, String>,
}

const RUNNER_TOOLS: &[&str] = &[
    "bash",
    "sh",
    "awk",
    "basename",
    "cat",
    "chmod",
    "cp",
    "curl",
    "cut",
    "dirname",
    "grep",
    "gzip",
    "head",
    "ls",
    "mkdir",
    "mktemp",
    "mv",
    "rm",
    "sed",
    "sha256sum",
    "sort",
    "tar",
    "tr",
    "uname",
];

impl CleanRunner {
    fn new(release: &Release) -> CleanRunner {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().to_path_buf();
        let home = base.join("home/runner");
        let temp = base.join("work/_temp");
        let workspace = base.join("work/octo-repo/octo-repo");
        let action = base.join("work/_actions/evalgate/evalgate/v0");
        let tools = base.join("tools");
        for d in [&home, &temp, &workspace, &action, &tools] {
            fs::create_dir_all(d).unwrap();
        }
        // The action: the files of the repository the runner downloads (Cargo.toml included:
        // outside the workspace it must still install the release, not build from source).
        fs::create_dir_all(action.join("scripts")).unwrap();
        fs::create_dir_all(action.join("dist")).unwrap();
        for f in ["action.yml", "Cargo.toml", "dist/checksums.txt"] {
            fs::copy(root().join(f), action.join(f)).unwrap();
        }
        for e in fs::read_dir(root().join("scripts")).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "sh") {
                fs::copy(e.path(), action.join("scripts").join(e.file_name())).unwrap();
            }
        }
        for t in RUNNER_TOOLS {
            let found = ["/usr/bin", "/bin", "/usr/local/bin"]
                .iter()
                .map(|d| Path::new(d).join(t))
                .find(|p| p.is_file())
                .unwrap_or_else(|| panic!("{t} is not installed on this machine"));
            symlink(&found, tools.join(t)).unwrap();
        }
        for absent in ["cargo", "rustup", "rustc"] {
            assert!(!tools.join(absent).exists());
        }
        let (_, os, arch) = host();
        let s = |p: &Path| p.display().to_string();
        let mut env = BTreeMap::new();
        for (k, v) in [
            ("PATH", s(&tools)),
            ("HOME", s(&home)),
            ("LANG", "C.UTF-8".to_string()),
            ("CI", "true".to_string()),
            ("GITHUB_ACTIONS", "true".to_string()),
            ("GITHUB_WORKSPACE", s(&workspace)),
            ("RUNNER_OS", os.to_string()),
            ("RUNNER_ARCH", arch.to_string()),
            ("RUNNER_TEMP", s(&temp)),
            (
                "EVALGATE_RELEASE_BASE_URL",
                format!("file://{}", s(&release.download)),
            ),
            ("EVALGATE_CHECKSUMS_FILE", s(&release.table)),
        ] {
            env.insert(k.to_string(), v);
        }
        CleanRunner {
            _dir: dir,
            home,
            temp,
            workspace,
            action,
            tools,
            env,
        }
    }

    /// Runs the action's install step as the runner does: its `run:` from action.yml in
    /// `bash --noprofile --norc -eo pipefail`, its `env:` evaluated against the inputs given
    /// (else action.yml's defaults), fresh GITHUB_OUTPUT and GITHUB_PATH files.
    fn install(&self, inputs: &[(&str, &str)]) -> StepResult {
        let action_yml = fs::read_to_string(self.action.join("action.yml")).unwrap();
        let (run, step_env) = install_step(&action_yml);
        let files = self.temp.join("_runner_file_commands");
        fs::create_dir_all(&files).unwrap();
        let (output, path) = (files.join("output_install"), files.join("path_install"));
        fs::write(&output, "").unwrap();
        fs::write(&path, "").unwrap();
        let script = self.temp.join("install-step.sh");
        fs::write(&script, &run).unwrap();
        let mut cmd = Command::new(self.tools.join("bash"));
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script)
            .current_dir(&self.workspace)
            .env_clear()
            .envs(&self.env)
            .env("GITHUB_ACTION_PATH", &self.action)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_PATH", &path);
        for (k, v) in &step_env {
            let expr = v
                .strip_prefix("${{")
                .and_then(|r| r.strip_suffix("}}"))
                .map(str::trim)
                .unwrap_or_else(|| panic!("install step env {k}: {v:?} is not one expression"));
            let name = expr.strip_prefix("inputs.").unwrap_or_else(|| {
                panic!("install step env {k}: {expr:?} (teach tests/release.rs)")
            });
            let value = inputs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
                .unwrap_or_else(|| input_default(&action_yml, name));
            cmd.env(k, value);
        }
        let o = cmd.output().unwrap();
        let outputs = fs::read_to_string(&output)
            .unwrap()
            .lines()
            .map(|l| {
                let (k, v) = l.split_once('=').expect("name=value");
                (k.to_string(), v.to_string())
            })
            .collect();
        StepResult {
            code: o.status.code().unwrap_or(-1),
            log: text(&o),
            outputs,
            path_added: fs::read_to_string(&path)
                .unwrap()
                .lines()
                .map(String::from)
                .collect(),
        }
    }

    /// A later step of the job: `run: <command>` in `dir`, with GITHUB_PATH's additions in
    /// front of PATH as the runner puts them.
    fn later_step(&self, dir: &Path, added: &[String], command: &str) -> Output {
        let mut path: Vec<String> = added.iter().rev().cloned().collect();
        path.push(self.env["PATH"].clone());
        Command::new(self.tools.join("bash"))
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", command])
            .current_dir(dir)
            .env_clear()
            .envs(&self.env)
            .env("PATH", path.join(":"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    }
}

/// Regular files under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------------

#[test]
fn a_locally_built_release_installs_on_a_clean_runner_and_runs() {
    let rel = build_release();
    let asset = rel.asset_name();

    // What the release workflow would publish: the tarball, its .sha256 and SHA256SUMS.
    let mut listed: Vec<String> = fs::read_dir(rel.assets())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            "SHA256SUMS".to_string(),
            asset.clone(),
            format!("{asset}.sha256")
        ]
    );
    let tarball = fs::read(rel.assets().join(&asset)).unwrap();
    let line = format!("{}  {asset}\n", sha256_hex(&tarball));
    assert_eq!(
        fs::read_to_string(rel.assets().join("SHA256SUMS")).unwrap(),
        line
    );
    assert_eq!(
        fs::read_to_string(rel.assets().join(format!("{asset}.sha256"))).unwrap(),
        line
    );
    // The table: the committed entries plus this asset's.
    let committed = fs::read_to_string(root().join("dist/checksums.txt")).unwrap();
    let entries = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(String::from)
            .collect()
    };
    let mut expected = entries(&committed);
    expected.retain(|l| !l.ends_with(&format!("  {asset}")));
    expected.push(line.trim_end().to_string());
    expected.sort_by(|a, b| a.split("  ").nth(1).cmp(&b.split("  ").nth(1)));
    assert_eq!(entries(&fs::read_to_string(&rel.table).unwrap()), expected);

    // The install step, default inputs, on a clean runner.
    let runner = CleanRunner::new(&rel);
    let step = runner.install(&[]);
    assert_eq!(step.code, 0, "{}", step.log);
    assert!(
        step.log
            .contains(&format!("sha256 verified: {}", sha256_hex(&tarball))),
        "{}",
        step.log
    );
    assert!(
        step.log.contains(&format!("/v{}/{asset}", rel.version)),
        "downloaded from the local release: {}",
        step.log
    );
    let bin = PathBuf::from(&step.outputs["bin"]);
    assert_eq!(
        step.outputs.keys().collect::<Vec<_>>(),
        ["bin", "source", "version"]
    );
    assert_eq!(step.outputs["source"], "release");
    assert_eq!(step.outputs["version"], rel.version);
    assert!(bin.starts_with(&runner.temp), "{}", bin.display());
    assert_eq!(bin.file_name().unwrap(), "evalgate");
    assert_eq!(
        step.path_added,
        [bin.parent().unwrap().display().to_string()],
        "GITHUB_PATH names the install directory, once"
    );
    assert_eq!(
        fs::read(&bin).unwrap(),
        fs::read(&rel.binary).unwrap(),
        "the installed binary is the packaged one, byte for byte"
    );
    assert_eq!(
        fs::metadata(&bin).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert_eq!(
        files_under(&runner.home),
        Vec::<String>::new(),
        "the install writes nothing to HOME"
    );

    // A later step runs `evalgate` from PATH, with no configuration, in an empty directory:
    // the datasets and the baseline built into the binary.
    let scratch = runner.workspace.join("scratch");
    fs::create_dir_all(&scratch).unwrap();
    let o = runner.later_step(&scratch, &step.path_added, "command -v evalgate");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        bin.display().to_string()
    );
    let o = runner.later_step(&scratch, &step.path_added, "evalgate --version");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("evalgate {}", rel.version)
    );
    let o = runner.later_step(&scratch, &step.path_added, "evalgate run");
    let log = text(&o);
    assert_eq!(o.status.code(), Some(0), "{log}");
    assert!(log.contains("verdict:"), "{log}");
    for f in ["report.json", "report.md", "report.html"] {
        let p = scratch.join("evalgate-report").join(f);
        assert!(
            p.metadata().is_ok_and(|m| m.len() > 0),
            "{} written: {log}",
            p.display()
        );
    }
    let report: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(scratch.join("evalgate-report/report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["evalgate_version"], rel.version.as_str());
    assert!(
        report.to_string().contains("corpus_v1"),
        "the embedded v1 datasets were measured"
    );
}

#[test]
fn a_tampered_or_unlisted_release_installs_nothing_on_a_clean_runner() {
    let rel = build_release();
    let asset = rel.assets().join(rel.asset_name());
    let good = fs::read(&asset).unwrap();

    // The server's tarball is not the one whose checksum the table carries: one flipped byte.
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x01;
    fs::write(&asset, &bad).unwrap();
    let runner = CleanRunner::new(&rel);
    let step = runner.install(&[]);
    assert_eq!(step.code, 1, "{}", step.log);
    assert!(
        step.log.contains(&format!(
            "checksum mismatch for {}: expected sha256 {}",
            rel.asset_name(),
            sha256_hex(&good)
        )),
        "{}",
        step.log
    );
    assert!(
        step.log.contains(&format!("got {}", sha256_hex(&bad))),
        "{}",
        step.log
    );
    assert!(step.log.contains("refusing to install it"), "{}", step.log);
    assert!(step.outputs.is_empty(), "{:?}", step.outputs);
    assert!(step.path_added.is_empty());
    assert!(
        !files_under(&runner.temp)
            .iter()
            .any(|f| f.ends_with("evalgate")),
        "nothing installed: {:?}",
        files_under(&runner.temp)
    );

    // A tarball that is not even gzip, same story.
    fs::write(&asset, b"<html>rate limited</html>").unwrap();
    let step = CleanRunner::new(&rel).install(&[]);
    assert_eq!(step.code, 1, "{}", step.log);
    assert!(step.log.contains("checksum mismatch"), "{}", step.log);
    fs::write(&asset, &good).unwrap();

    // The fallback cannot rescue it on a runner without cargo, and says why.
    fs::write(&asset, &bad).unwrap();
    let step = CleanRunner::new(&rel).install(&[("fallback", "cargo-install")]);
    assert_eq!(step.code, 1, "{}", step.log);
    assert!(
        step.log
            .contains("fallback cargo-install needs cargo on PATH"),
        "{}",
        step.log
    );
    assert!(step.path_added.is_empty());
    fs::write(&asset, &good).unwrap();

    // A version the table does not list: nothing is downloaded, and the message says plainly
    // that no verified release of it is listed, which ones are, and the ways out.
    let step = CleanRunner::new(&rel).install(&[("version", "0.0.1")]);
    assert_eq!(step.code, 1, "{}", step.log);
    assert!(
        step.log.contains(
            "no verified release of evalgate 0.0.1 is listed in the action's checksum table"
        ),
        "{}",
        step.log
    );
    assert!(
        step.log
            .contains(&format!("it lists evalgate {}", rel.version)),
        "{}",
        step.log
    );
    assert!(
        step.log
            .contains(&format!("uses: evalgate/evalgate@v{}", rel.version)),
        "{}",
        step.log
    );
    assert!(!step.log.contains("downloading"), "{}", step.log);
    assert!(step.path_added.is_empty());

    // The asset of this version for another platform only: listed version, unlisted asset.
    let table = fs::read_to_string(&rel.table).unwrap();
    let other = if rel.target == "x86_64-unknown-linux-musl" {
        "aarch64-apple-darwin"
    } else {
        "x86_64-unknown-linux-musl"
    };
    fs::write(&rel.table, table.replace(rel.target, other)).unwrap();
    let step = CleanRunner::new(&rel).install(&[]);
    fs::write(&rel.table, &table).unwrap();
    assert_eq!(step.code, 1, "{}", step.log);
    assert!(
        step.log.contains(&format!(
            "lists evalgate {} but has no sha256 for {}",
            rel.version,
            rel.asset_name()
        )),
        "{}",
        step.log
    );
}

#[test]
fn a_version_that_was_never_released_fails_plainly_and_names_the_ways_out() {
    // The complaint: default inputs, a table with no release in it (what the committed table is
    // until the first release), and advice to "use the version input's default".
    let rel = build_release();
    let version = rel.version.clone();
    let comments_only = "# sha256 of the evalgate release assets\n# (none yet)\n";
    fs::write(&rel.table, comments_only).unwrap();
    let step = CleanRunner::new(&rel).install(&[]);
    let log = &step.log;
    assert_eq!(step.code, 1, "{log}");
    for part in [
        format!(
            "no verified release of evalgate {version} is listed in the action's checksum table"
        ),
        "it lists no release at all".to_string(),
        format!("evalgate {version} has not been released yet"),
        "uses: evalgate/evalgate@vX.Y.Z".to_string(),
        "uses: ./ builds the checkout from source".to_string(),
        format!("fallback: cargo-install builds evalgate {version} with cargo from crates.io"),
        "once that version is published there".to_string(),
        "EVALGATE_RELEASE_BASE_URL".to_string(),
        "EVALGATE_CHECKSUMS_FILE".to_string(),
        "docs/releasing.md".to_string(),
        "::error title=evalgate install::".to_string(),
    ] {
        assert!(log.contains(&part), "missing {part:?} in\n{log}");
    }
    assert!(!log.contains("use the version input's default"), "{log}");
    assert!(
        !log.contains("set the input fallback"),
        "one message, not two: {log}"
    );
    assert!(!log.contains("downloading"), "{log}");
    assert!(step.path_added.is_empty() && step.outputs.is_empty());

    // Releases listed, but not this one: they are named, the newest is the pin to use.
    fs::write(
        &rel.table,
        format!(
            "{}  evalgate-0.0.9-x86_64-unknown-linux-musl.tar.gz\n{}  evalgate-0.0.10-aarch64-apple-darwin.tar.gz\n",
            "a".repeat(64),
            "b".repeat(64)
        ),
    )
    .unwrap();
    let step = CleanRunner::new(&rel).install(&[]);
    assert_eq!(step.code, 1, "{}", step.log);
    assert!(
        step.log.contains("it lists evalgate 0.0.9, 0.0.10)"),
        "{}",
        step.log
    );
    assert!(
        step.log.contains("uses: evalgate/evalgate@v0.0.10"),
        "{}",
        step.log
    );
    assert!(
        step.log
            .contains("or set version: to a release listed above"),
        "{}",
        step.log
    );

    // And the committed table itself, while it does not list the default version (no release
    // yet): the same plain message, from the action's own dist/checksums.txt.
    let committed = fs::read_to_string(root().join("dist/checksums.txt")).unwrap();
    if !committed.contains(&format!("evalgate-{version}-")) {
        let mut runner = CleanRunner::new(&rel);
        runner.env.remove("EVALGATE_CHECKSUMS_FILE");
        let step = runner.install(&[]);
        assert_eq!(step.code, 1, "{}", step.log);
        assert!(
            step.log.contains(&format!(
                "no verified release of evalgate {version} is listed in the action's checksum table"
            )),
            "{}",
            step.log
        );
        assert!(
            step.log.contains(
                &runner
                    .action
                    .join("dist/checksums.txt")
                    .display()
                    .to_string()
            ),
            "{}",
            step.log
        );
    }
}

#[test]
fn the_release_scripts_refuse_what_must_not_be_published() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stub = |path: &Path, says: &str| {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, format!("#!/bin/sh\necho '{says}'\n")).unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    };
    let (host_target, _, _) = host();
    let version = crate_version();
    let run = |args: &[&str]| script("release-assets.sh", args, &[("EVALGATE_GZIP_LEVEL", "1")]);
    let s = |p: &Path| p.display().to_string();

    // A full release needs all four targets.
    let bins = d.join("bins");
    stub(
        &bins.join(format!("bin-{host_target}/evalgate")),
        &format!("evalgate {version}"),
    );
    let o = run(&[&version, &s(&bins), &s(&d.join("out1"))]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("expected one binary for"), "{}", text(&o));

    // With the host's target only, it packages, and the binary's version is checked.
    let o = run(&[
        "--targets",
        host_target,
        &version,
        &s(&bins),
        &s(&d.join("out2")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("runs here: evalgate {version}")),
        "{}",
        text(&o)
    );
    let o = run(&[
        "--targets",
        host_target,
        "9.9.9",
        &s(&bins),
        &s(&d.join("out3")),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(&format!(
            "the binary says 'evalgate {version}', not 'evalgate 9.9.9'"
        )),
        "{}",
        text(&o)
    );

    // An output directory with something in it (stale assets would be published too).
    let o = run(&[
        "--targets",
        host_target,
        &version,
        &s(&bins),
        &s(&d.join("out2")),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("is not empty"), "{}", text(&o));

    // A binary for a target that is not being released, or is not a release target at all.
    stub(
        &bins.join("riscv64gc-unknown-linux-gnu/evalgate"),
        "evalgate",
    );
    let o = run(&[
        "--targets",
        host_target,
        &version,
        &s(&bins),
        &s(&d.join("out4")),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("is not one of the targets being released"),
        "{}",
        text(&o)
    );
    let o = run(&[
        "--targets",
        "riscv64gc-unknown-linux-gnu",
        &version,
        &s(&bins),
        &s(&d.join("out5")),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("is not a release target"), "{}", text(&o));
    for bad in ["latest", "1.2", "v1.2.3;rm"] {
        let o = run(&[bad, &s(&bins), &s(&d.join("out6"))]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
    }

    // The version check names every file that disagrees.
    let o = script("release-version.sh", &["v9.9.9"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    for f in ["Cargo.toml", "Cargo.lock", "action.yml"] {
        assert!(
            text(&o).contains(f) && text(&o).contains("not 9.9.9"),
            "{f}: {}",
            text(&o)
        );
    }
    let o = script("release-version.sh", &[&format!("v{version}")], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), version);
}

#[test]
fn the_release_targets_agree_across_the_workflow_the_scripts_and_the_docs() {
    let read = |p: &str| fs::read_to_string(root().join(p)).unwrap();
    let assets_sh = read("scripts/release-assets.sh");
    let scripted: Vec<String> = assets_sh
        .lines()
        .find_map(|l| l.strip_prefix("RELEASE_TARGETS=\""))
        .expect("RELEASE_TARGETS in scripts/release-assets.sh")
        .trim_end_matches('"')
        .split_whitespace()
        .map(String::from)
        .collect();
    let workflow = read(".github/workflows/release.yml");
    let matrix: Vec<String> = workflow
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- target: "))
        .map(String::from)
        .collect();
    let install = read("scripts/install.sh");
    let mapped: Vec<String> = install
        .lines()
        .filter_map(|l| l.split_once(") target=").map(|(_, t)| t))
        .map(|t| t.trim_end_matches(" ;;").to_string())
        .collect();
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    assert_eq!(scripted.len(), 4, "{scripted:?}");
    assert_eq!(sorted(&matrix), sorted(&scripted), "release.yml's matrix");
    assert_eq!(sorted(&mapped), sorted(&scripted), "install.sh's platforms");
    let docs = read("docs/releasing.md");
    for t in &scripted {
        assert!(
            docs.contains(&format!("evalgate-<version>-{t}.tar.gz"))
                || docs.contains(&format!("evalgate-X.Y.Z-{t}.tar.gz")),
            "docs/releasing.md does not name the asset for {t}"
        );
    }

    // The workflow runs the scripts (and packages nothing by itself), and so does CI.
    for call in [
        "bash scripts/release-version.sh \"$INPUT_VERSION\"",
        "bash scripts/release-assets.sh \"$VERSION\" bins assets",
        "bash scripts/update-checksums.sh \"$VERSION\" assets dist/checksums.txt",
    ] {
        assert!(workflow.contains(call), "release.yml lacks `{call}`");
    }
    assert!(
        !workflow.contains("scripts/package.sh"),
        "packaging is release-assets.sh's"
    );
    assert!(
        !workflow.contains(">SHA256SUMS"),
        "SHA256SUMS is release-assets.sh's"
    );
    let ci = read(".ci/run");
    for call in [
        "bash scripts/release-version.sh",
        "bash scripts/release-assets.sh --targets",
        "bash scripts/update-checksums.sh",
        "bash scripts/install.sh",
        "cargo package --locked",
    ] {
        assert!(ci.contains(call), ".ci/run lacks `{call}`");
    }
}

/// Paths (relative to the repository) that `include_str!`, `include_bytes!` and `include!` in
/// the non-test code of `src/` read, and those that only `#[cfg(test)]` code reads.
fn included_files() -> (Vec<String>, Vec<String>) {
    let (mut build, mut test_only) = (Vec::new(), Vec::new());
    let src = root().join("src");
    for rel in files_under(&src) {
        if !rel.ends_with(".rs") {
            continue;
        }
        let file = src.join(&rel);
        let body = fs::read_to_string(&file).unwrap();
        let tests_from = body.find("#[cfg(test)]").unwrap_or(body.len());
        for mac in ["include_str!(\"", "include_bytes!(\"", "include!(\""] {
            for (at, _) in body.match_indices(mac) {
                let arg = &body[at + mac.len()..];
                let arg = &arg[..arg.find('"').unwrap()];
                let mut p = file.parent().unwrap().to_path_buf();
                for part in Path::new(arg).components() {
                    match part {
                        std::path::Component::ParentDir => {
                            p.pop();
                        }
                        c => p.push(c),
                    }
                }
                let p = p
                    .strip_prefix(root())
                    .unwrap_or_else(|_| panic!("{rel}: {arg} is outside the repository"))
                    .display()
                    .to_string();
                if at > tests_from {
                    test_only.push(p);
                } else {
                    build.push(p);
                }
            }
        }
    }
    (build, test_only)
}

#[test]
fn the_crate_holds_what_the_build_needs_and_nothing_else() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let o = Command::new(&cargo)
        .args([
            "package",
            "--locked",
            "--offline",
            "--list",
            "--allow-dirty",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(o.status.success(), "cargo package --list: {}", text(&o));
    let listed: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    let has = |p: &str| listed.iter().any(|l| l == p);

    // What the build reads: the sources (every file under src/), the build script's datasets,
    // every file an include macro of non-test code names.
    for f in files_under(&root().join("src")) {
        assert!(has(&format!("src/{f}")), "src/{f} is not in the crate");
    }
    for f in [
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "datasets/v1/corpus.json",
        "datasets/v1/golden.json",
        "datasets/v1/security.json",
        "baselines/default.json",
        "LICENSE",
        "README.md",
    ] {
        assert!(has(f), "{f} is not in the crate");
    }
    let (build, test_only) = included_files();
    assert!(
        build.iter().any(|f| f == "baselines/default.json"),
        "the scan found the embedded baseline: {build:?}"
    );
    // the embedded datasets are read (and compressed) by build.rs, listed above
    let build_rs = fs::read_to_string(root().join("build.rs")).unwrap();
    assert!(
        build_rs.contains("datasets/v1/{file}.json")
            && build_rs.contains("(\"CORPUS\", \"corpus\")"),
        "build.rs no longer reads datasets/v1/*.json: update the list above"
    );
    for f in &build {
        assert!(
            has(f),
            "{f} (include_str!/include_bytes!/include!) is not in the crate"
        );
    }
    // Files only unit tests include stay out (the tests are not in the crate); they must not
    // creep into non-test code unnoticed.
    for f in &test_only {
        assert!(
            build.iter().all(|b| b != f),
            "{f} is included by test and non-test code"
        );
    }

    // Nothing else: no tests, fixtures, fuzz targets, benches, examples, dataset tooling, CI.
    for f in &listed {
        let allowed = f.starts_with("src/")
            || f.starts_with("schemas/") && f.ends_with(".schema.json")
            || [
                ".cargo_vcs_info.json",
                "Cargo.toml",
                "Cargo.toml.orig",
                "Cargo.lock",
                "build.rs",
                "LICENSE",
                "README.md",
                "datasets/README.md",
                "datasets/v1/SOURCES.md",
                "datasets/v1/corpus.json",
                "datasets/v1/golden.json",
                "datasets/v1/security.json",
                "baselines/default.json",
            ]
            .contains(&f.as_str());
        assert!(allowed, "{f} should not be in the crate");
    }

    // crates.io takes at most 10 MiB compressed; the datasets are most of it.
    let list = tempfile::NamedTempFile::new().unwrap();
    let on_disk: Vec<&String> = listed
        .iter()
        .filter(|f| !["Cargo.toml.orig", ".cargo_vcs_info.json"].contains(&f.as_str()))
        .collect();
    fs::write(
        list.path(),
        on_disk.iter().map(|f| format!("{f}\n")).collect::<String>(),
    )
    .unwrap();
    let o = Command::new("tar")
        .arg("-czf")
        .arg("-")
        .arg("-C")
        .arg(root())
        .arg("-T")
        .arg(list.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let compressed = o.stdout.len();
    assert!(
        compressed < 10 << 20,
        "the crate would be {compressed} bytes compressed, over crates.io's 10 MiB"
    );
    eprintln!(
        "crate: {} files, ~{:.1} MiB compressed",
        listed.len(),
        compressed as f64 / (1 << 20) as f64
    );
}
