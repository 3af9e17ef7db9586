//! The composite GitHub Action (action.yml), driven the way a runner drives it.
//!
//! A small simulated runner reads action.yml, evaluates the `${{ }}` expressions of each step's
//! `env:` (inputs with their defaults, `steps.*.outputs.*`, `toJSON(matrix)`, `github.token`),
//! runs each `run:` step as `bash --noprofile --norc -eo pipefail FILE` with fresh
//! `GITHUB_OUTPUT`/`GITHUB_PATH`/`GITHUB_STEP_SUMMARY` files, a `pull_request` event in
//! `GITHUB_EVENT_PATH`, `RUNNER_OS`/`RUNNER_ARCH`/`RUNNER_TEMP`, and a local release directory
//! (`EVALGATE_RELEASE_BASE_URL=file://...`) holding tarballs packaged by scripts/package.sh —
//! from the freshly built binary, or from small stubs that record what they were given.
//!
//! Checked: the checksum table guards the install (a tampered tarball or a wrong table entry
//! installs nothing and says why), GITHUB_PATH and step outputs, the fallbacks, unknown
//! platforms, the source build in evalgate's own checkout, how the run step turns inputs into
//! arguments and environment, the action's outputs, the upload condition, and the job summary
//! and outputs of a real run.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const EVALGATE: &str = env!("CARGO_BIN_EXE_evalgate");
const TOKEN: &str = "ghs_simulatedGithubToken0000000000000000";

/// action.yml as JSON, every scalar a string (as the runner hands inputs and `with:` values to a
/// step).
fn action_yml() -> Value {
    fn strings(v: Value) -> Value {
        match v {
            Value::Object(m) => {
                Value::Object(m.into_iter().map(|(k, v)| (k, strings(v))).collect())
            }
            Value::Array(a) => Value::Array(a.into_iter().map(strings).collect()),
            Value::Bool(b) => Value::String(b.to_string()),
            Value::Number(n) => Value::String(n.to_string()),
            v => v,
        }
    }
    let text = fs::read_to_string(Path::new(ROOT).join("action.yml")).unwrap();
    strings(yaml_serde::from_str(&text).expect("action.yml is YAML"))
}

fn crate_version() -> String {
    let toml = fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let mut in_package = false;
    for line in toml.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_package = t == "[package]";
        } else if in_package && let Some(v) = t.strip_prefix("version") {
            return v
                .trim()
                .trim_start_matches('=')
                .trim()
                .trim_matches('"')
                .to_string();
        }
    }
    panic!("no [package] version in Cargo.toml");
}

fn write_exe(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn sha256(path: &Path) -> String {
    let o = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(o.status.success());
    String::from_utf8(o.stdout)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// Files named `evalgate` anywhere under `dir`.
fn binaries_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "evalgate") {
                found.push(p);
            }
        }
    }
    found
}

/// `$GITHUB_OUTPUT` format: `name=value` and `name<<DELIM ... DELIM`.
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if let Some((k, delim)) = l.split_once("<<") {
            let mut v = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                v.push(l);
            }
            out.insert(k.to_string(), v.join("\n"));
        } else if let Some((k, v)) = l.split_once('=') {
            out.insert(k.to_string(), v.to_string());
        } else if !l.is_empty() {
            panic!("malformed GITHUB_OUTPUT line {l:?}");
        }
    }
    out
}

/// A stand-in for the evalgate binary: records argv and the publishing environment, writes
/// reports and step outputs like evalgate does, exits with $STUB_EXIT (default 1).
const STUB_EVALGATE: &str = r###"#!/usr/bin/env bash
if [ "${1:-}" = --version ]; then echo "evalgate 0.1.0 (stub)"; exit 0; fi
log="${STUB_LOG:?}"
printf '%s\n' "$@" >"$log/evalgate-argv"
for v in EVALGATE_GITHUB_TOKEN EVALGATE_COMMENT EVALGATE_CHECK_RUN EVALGATE_FAIL_ON \
  EVALGATE_COMMENT_KEY EVALGATE_ARTIFACT_NAME EVALGATE_SUT EVALGATE_DEFAULT_SUT EVALGATE_DATASETS \
  EVALGATE_BASELINE EVALGATE_DETECTORS GITHUB_ACTIONS; do
  printf '%s=%s\n' "$v" "${!v-<unset>}"
done >"$log/evalgate-env"
pwd >"$log/evalgate-cwd"
out=""; prev=""
for a in "$@"; do [ "$prev" = --out ] && out="$a"; prev="$a"; done
mkdir -p "$out"
echo '{"stub": true}' >"$out/report.json"
echo '<!doctype html><title>stub</title>' >"$out/report.html"
echo '# stub report' >"$out/report.md"
{
  echo "verdict=fail"
  echo "report-json=$out/report.json"
  echo "report-html=$out/report.html"
  echo "report-md=$out/report.md"
  echo 'regressions=[{"subject":"retrieval","metric":"recall_at_5","kind":"tolerance","current":0.4091,"baseline":0.5596,"limit":0.5396},{"subject":"detector:rules","metric":"fpr","kind":"ceiling","current":0.12,"baseline":null,"limit":0.09}]'
  echo "exit-code=${STUB_EXIT:-1}"
} >>"$GITHUB_OUTPUT"
echo "## evalgate (stub): fail" >>"$GITHUB_STEP_SUMMARY"
exit "${STUB_EXIT:-1}"
"###;

/// A stand-in for cargo: records its arguments, "builds" by copying $STUB_EVALGATE.
const STUB_CARGO: &str = r#"#!/usr/bin/env bash
printf '%s\n' "$@" >"${STUB_LOG:?}/cargo-args"
root=""; target_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root="$2"; shift ;;
    --target-dir) target_dir="$2"; shift ;;
  esac
  shift
done
if [ -n "$root" ]; then mkdir -p "$root/bin"; cp "$STUB_EVALGATE" "$root/bin/evalgate"; fi
if [ -n "$target_dir" ]; then mkdir -p "$target_dir/release"; cp "$STUB_EVALGATE" "$target_dir/release/evalgate"; fi
"#;

struct StepRun {
    id: String,
    code: i32,
    log: String,
    outputs: BTreeMap<String, String>,
}

struct ActionRun {
    steps: Vec<StepRun>,
    /// The action's `outputs:`, evaluated.
    outputs: BTreeMap<String, String>,
    /// Lines the steps appended to GITHUB_PATH.
    path_added: Vec<String>,
    summary: String,
    /// Whether the upload step's condition held (the upload itself is not simulated).
    uploaded: Option<(String, PathBuf)>,
}

impl ActionRun {
    fn step(&self, id: &str) -> &StepRun {
        self.steps
            .iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| panic!("step {id} did not run"))
    }
    fn ran(&self, id: &str) -> bool {
        self.steps.iter().any(|s| s.id == id)
    }
    /// The composite step's result: the first failing step's exit code.
    fn code(&self) -> i32 {
        self.steps
            .iter()
            .map(|s| s.code)
            .find(|c| *c != 0)
            .unwrap_or(0)
    }
    fn log(&self) -> String {
        self.steps
            .iter()
            .map(|s| format!("--- step {} (exit {})\n{}", s.id, s.code, s.log))
            .collect()
    }
}

/// A simulated GitHub-hosted runner with a checkout of the action and a local release server.
struct Runner {
    _dir: TempDir,
    base: PathBuf,
    /// Where the runner put the action (GITHUB_ACTION_PATH).
    action: PathBuf,
    workspace: PathBuf,
    temp: PathBuf,
    /// The release download directory: <releases>/v<version>/<asset>.
    releases: PathBuf,
    logs: PathBuf,
    env: BTreeMap<String, String>,
    inputs: BTreeMap<String, String>,
    matrix: Value,
    action_yml: Value,
}

impl Runner {
    /// The action as the runner downloads it for `uses: evalgate/evalgate@v0` (a copy outside
    /// the workspace), on Linux X64.
    fn new() -> Runner {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().to_path_buf();
        let action = base.join("_actions/evalgate/evalgate/v0");
        let workspace = base.join("work/octo-repo/octo-repo");
        let temp = base.join("_temp");
        let releases = base.join("releases");
        let logs = base.join("logs");
        for d in [&action, &workspace, &temp, &releases, &logs] {
            fs::create_dir_all(d).unwrap();
        }
        Runner::copy_action(&action);

        let event = json!({
            "action": "synchronize",
            "number": 42,
            "pull_request": {
                "url": "https://api.github.com/repos/octo-org/octo-repo/pulls/42",
                "id": 1_934_222_111u64,
                "number": 42,
                "state": "open",
                "title": "Faster tool search",
                "user": {"login": "octocat", "id": 583_231, "type": "User"},
                "head": {
                    "label": "octocat:faster-search",
                    "ref": "faster-search",
                    "sha": "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
                    "repo": {"id": 1_296_269, "name": "octo-repo", "full_name": "octo-org/octo-repo", "fork": false}
                },
                "base": {
                    "label": "octo-org:main",
                    "ref": "main",
                    "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e",
                    "repo": {"id": 1_296_269, "name": "octo-repo", "full_name": "octo-org/octo-repo", "fork": false}
                }
            },
            "repository": {"id": 1_296_269, "name": "octo-repo", "full_name": "octo-org/octo-repo", "owner": {"login": "octo-org"}},
            "sender": {"login": "octocat", "id": 583_231, "type": "User"}
        });
        let event_path = base.join("_github_workflow/event.json");
        fs::create_dir_all(event_path.parent().unwrap()).unwrap();
        fs::write(&event_path, serde_json::to_string_pretty(&event).unwrap()).unwrap();

        write_exe(&base.join("stubs/evalgate"), STUB_EVALGATE);
        write_exe(&base.join("stubs/cargo"), STUB_CARGO);

        let s = |p: &Path| p.display().to_string();
        let mut env = BTreeMap::new();
        for (k, v) in [
            (
                "PATH",
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
            ),
            ("HOME", s(&base)),
            ("LANG", "C.UTF-8".into()),
            ("NO_COLOR", "1".into()),
            ("CI", "true".into()),
            ("GITHUB_ACTIONS", "true".into()),
            ("GITHUB_EVENT_NAME", "pull_request".into()),
            ("GITHUB_EVENT_PATH", s(&event_path)),
            ("GITHUB_REPOSITORY", "octo-org/octo-repo".into()),
            ("GITHUB_REPOSITORY_OWNER", "octo-org".into()),
            (
                "GITHUB_SHA",
                "b2c9f3e4d5a6978812345678901234567890abcd".into(),
            ),
            ("GITHUB_REF", "refs/pull/42/merge".into()),
            ("GITHUB_HEAD_REF", "faster-search".into()),
            ("GITHUB_BASE_REF", "main".into()),
            ("GITHUB_JOB", "gate".into()),
            ("GITHUB_RUN_ID", "9876543210".into()),
            ("GITHUB_RUN_ATTEMPT", "1".into()),
            ("GITHUB_WORKFLOW", "CI".into()),
            ("GITHUB_WORKSPACE", s(&workspace)),
            // Nothing here may talk to GitHub: a closed local port if anything tries.
            ("GITHUB_API_URL", "http://127.0.0.1:9".into()),
            ("GITHUB_SERVER_URL", "https://github.com".into()),
            ("RUNNER_OS", "Linux".into()),
            ("RUNNER_ARCH", "X64".into()),
            ("RUNNER_TEMP", s(&temp)),
            ("RUNNER_TOOL_CACHE", s(&base.join("_tool"))),
            (
                "EVALGATE_RELEASE_BASE_URL",
                format!("file://{}", s(&releases)),
            ),
            ("EVALGATE_CARGO", s(&base.join("stubs/cargo"))),
            ("STUB_LOG", s(&logs)),
            ("STUB_EVALGATE", s(&base.join("stubs/evalgate"))),
        ] {
            env.insert(k.to_string(), v);
        }
        Runner {
            _dir: dir,
            base,
            action,
            workspace,
            temp,
            releases,
            logs,
            env,
            inputs: BTreeMap::new(),
            matrix: Value::Null,
            action_yml: action_yml(),
        }
    }

    fn copy_action(to: &Path) {
        let root = Path::new(ROOT);
        fs::create_dir_all(to.join("scripts")).unwrap();
        fs::create_dir_all(to.join("dist")).unwrap();
        fs::copy(root.join("action.yml"), to.join("action.yml")).unwrap();
        fs::copy(
            root.join("dist/checksums.txt"),
            to.join("dist/checksums.txt"),
        )
        .unwrap();
        for e in fs::read_dir(root.join("scripts")).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "sh") {
                fs::copy(e.path(), to.join("scripts").join(e.file_name())).unwrap();
            }
        }
    }

    fn set(&mut self, k: &str, v: &str) -> &mut Self {
        self.env.insert(k.into(), v.into());
        self
    }
    fn input(&mut self, k: &str, v: &str) -> &mut Self {
        self.inputs.insert(k.into(), v.into());
        self
    }

    fn version(&self) -> String {
        self.action_yml["inputs"]["version"]["default"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Packages `binary` with scripts/package.sh as the release asset for `target` and records
    /// its checksum in the action copy's table with scripts/update-checksums.sh (the release
    /// workflow's two scripts). Returns the asset's path.
    fn publish_release(&self, binary: &Path, target: &str) -> PathBuf {
        let version = self.version();
        let dir = self.releases.join(format!("v{version}"));
        let o = Command::new("bash")
            .arg(Path::new(ROOT).join("scripts/package.sh"))
            .args([&version, target])
            .arg(binary)
            .arg(&dir)
            .env("EVALGATE_GZIP_LEVEL", "1")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "package.sh: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = Command::new("bash")
            .arg(Path::new(ROOT).join("scripts/update-checksums.sh"))
            .arg(&version)
            .arg(&dir)
            .arg(self.action.join("dist/checksums.txt"))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "update-checksums.sh: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        dir.join(format!("evalgate-{version}-{target}.tar.gz"))
    }

    fn stub(&self) -> PathBuf {
        self.base.join("stubs/evalgate")
    }

    /// Evaluates one `${{ expr }}` the way the runner would for this action.
    fn eval(&self, expr: &str, outputs: &BTreeMap<String, BTreeMap<String, String>>) -> String {
        let e = expr.trim();
        if let Some(name) = e.strip_prefix("inputs.") {
            if let Some(v) = self.inputs.get(name) {
                return v.clone();
            }
            let def = &self.action_yml["inputs"][name];
            assert!(def.is_object(), "action.yml has no input {name}");
            return match def.get("default").and_then(Value::as_str) {
                Some(d) => self.interpolate(d, outputs),
                None => String::new(),
            };
        }
        if let Some(rest) = e.strip_prefix("steps.") {
            let (id, name) = rest
                .split_once(".outputs.")
                .expect("steps.<id>.outputs.<name>");
            return outputs
                .get(id)
                .and_then(|o| o.get(name))
                .cloned()
                .unwrap_or_default();
        }
        match e {
            "github.token" => TOKEN.to_string(),
            "toJSON(matrix)" => serde_json::to_string_pretty(&self.matrix).unwrap(),
            _ => panic!(
                "the simulated runner does not know the expression {e:?}; teach tests/action.rs"
            ),
        }
    }

    /// A value that is a single `${{ expr }}` or has no expression at all.
    fn interpolate(&self, v: &str, outputs: &BTreeMap<String, BTreeMap<String, String>>) -> String {
        match v
            .trim()
            .strip_prefix("${{")
            .and_then(|r| r.strip_suffix("}}"))
        {
            Some(expr) => self.eval(expr, outputs),
            None => {
                assert!(!v.contains("${{"), "mixed text and expression {v:?}");
                v.to_string()
            }
        }
    }

    /// Runs the composite action's steps like the runner: `run:` steps with `shell: bash`,
    /// skipped after a failure unless their `if:` says otherwise; the `uses:` upload step is
    /// evaluated, not executed.
    fn run(&self) -> ActionRun {
        let steps = self.action_yml["runs"]["steps"].as_array().unwrap().clone();
        let mut outputs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut runs = Vec::new();
        let mut path_added: Vec<String> = Vec::new();
        let mut summary = String::new();
        let mut uploaded = None;
        let mut failed = false;
        for (n, step) in steps.iter().enumerate() {
            let id = step["id"]
                .as_str()
                .unwrap_or_else(|| panic!("step {n} has no id"))
                .to_string();
            if let Some(uses) = step["uses"].as_str() {
                assert!(
                    uses.starts_with("actions/upload-artifact@"),
                    "unexpected uses: {uses}"
                );
                // if: always() && steps.run.outputs.report-dir != '' &&
                //     (env.ACT != 'true' || inputs.upload-under-act == 'true')
                let dir = self.eval("steps.run.outputs.report-dir", &outputs);
                let act = self.env.get("ACT").is_some_and(|v| v == "true");
                if !dir.is_empty()
                    && (!act || self.eval("inputs.upload-under-act", &outputs) == "true")
                {
                    let with = &step["with"];
                    uploaded = Some((
                        self.interpolate(with["name"].as_str().unwrap(), &outputs),
                        PathBuf::from(self.interpolate(with["path"].as_str().unwrap(), &outputs)),
                    ));
                }
                continue;
            }
            if failed && step.get("if").is_none() {
                continue;
            }
            assert_eq!(step["shell"], "bash", "step {id}");
            let script = self.base.join(format!("_temp_step_{id}.sh"));
            fs::write(&script, step["run"].as_str().unwrap()).unwrap();
            let files = self.base.join(format!("_runner_file_commands/{id}"));
            fs::create_dir_all(&files).unwrap();
            let (out_f, path_f, sum_f) = (
                files.join("output"),
                files.join("path"),
                files.join("summary"),
            );
            for f in [&out_f, &path_f, &sum_f] {
                fs::write(f, "").unwrap();
            }
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script)
                .current_dir(&self.workspace)
                .env_clear()
                .envs(&self.env)
                .env("GITHUB_ACTION_PATH", &self.action)
                .env("GITHUB_ACTION", format!("__evalgate_{id}"))
                .env("GITHUB_OUTPUT", &out_f)
                .env("GITHUB_PATH", &path_f)
                .env("GITHUB_STEP_SUMMARY", &sum_f);
            if !path_added.is_empty() {
                let mut p: Vec<String> = path_added.iter().rev().cloned().collect();
                p.push(self.env["PATH"].clone());
                cmd.env("PATH", p.join(":"));
            }
            if let Some(env) = step["env"].as_object() {
                for (k, v) in env {
                    cmd.env(k, self.interpolate(v.as_str().unwrap(), &outputs));
                }
            }
            let o = cmd.output().unwrap();
            let code = o.status.code().unwrap_or(-1);
            let step_outputs = parse_outputs(&fs::read_to_string(&out_f).unwrap());
            path_added.extend(
                fs::read_to_string(&path_f)
                    .unwrap()
                    .lines()
                    .map(String::from),
            );
            summary.push_str(&fs::read_to_string(&sum_f).unwrap());
            outputs.insert(id.clone(), step_outputs.clone());
            runs.push(StepRun {
                id,
                code,
                log: format!(
                    "{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                ),
                outputs: step_outputs,
            });
            failed |= code != 0;
        }
        let action_outputs = self.action_yml["outputs"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    self.interpolate(v["value"].as_str().unwrap(), &outputs),
                )
            })
            .collect();
        ActionRun {
            steps: runs,
            outputs: action_outputs,
            path_added,
            summary,
            uploaded,
        }
    }

    fn log_file(&self, name: &str) -> Option<String> {
        fs::read_to_string(self.logs.join(name)).ok()
    }
}

// ---------------------------------------------------------------------------------------------

#[test]
fn action_yml_declares_the_interface_and_keeps_the_logic_in_scripts() {
    let a = action_yml();
    assert_eq!(a["runs"]["using"], "composite");
    let inputs = a["inputs"].as_object().unwrap();
    for name in [
        "version",
        "config",
        "mcpproxy-bin",
        "runs",
        "github-token",
        "comment",
        "check-run",
        "fail-on",
        "artifact-name",
        "retention-days",
        "fallback",
        "baseline",
        "detectors",
        "working-directory",
        "args",
    ] {
        assert!(inputs.contains_key(name), "input {name} missing");
        assert!(
            inputs[name]["description"].is_string(),
            "input {name} has no description"
        );
    }
    assert_eq!(inputs["github-token"]["default"], "${{ github.token }}");
    assert_eq!(inputs["fallback"]["default"], "none");
    assert_eq!(inputs["fail-on"]["default"], "regression");
    assert_eq!(
        inputs["version"]["default"].as_str().unwrap(),
        crate_version(),
        "the action's default version must be the crate's (bump both together)"
    );
    for name in [
        "verdict",
        "report-json",
        "report-html",
        "report-md",
        "regressions",
    ] {
        assert_eq!(
            a["outputs"][name]["value"],
            format!("${{{{ steps.run.outputs.{name} }}}}"),
            "output {name}"
        );
    }

    let steps = a["runs"]["steps"].as_array().unwrap();
    let mut referenced = String::new();
    for step in steps {
        let id = step["id"].as_str().expect("every step has an id");
        if let Some(run) = step["run"].as_str() {
            assert!(
                !run.contains("${{"),
                "step {id}: expression inside run: (use env:)"
            );
            let script = run
                .strip_prefix("bash \"$GITHUB_ACTION_PATH/scripts/")
                .and_then(|r| r.strip_suffix(".sh\""))
                .unwrap_or_else(|| {
                    panic!("step {id}: run: must only call a script in scripts/, got {run:?}")
                });
            assert!(
                Path::new(ROOT)
                    .join(format!("scripts/{script}.sh"))
                    .is_file(),
                "step {id}: no scripts/{script}.sh"
            );
            assert_eq!(step["shell"], "bash");
        }
        if let Some(env) = step["env"].as_object() {
            for (k, v) in env {
                let v = v.as_str().unwrap();
                assert!(
                    v.starts_with("${{") && v.ends_with("}}") && v.matches("${{").count() == 1,
                    "step {id}: env {k} must be exactly one expression, got {v:?}"
                );
            }
        }
        if let Some(uses) = step["uses"].as_str() {
            let (_, pin) = uses.split_once('@').expect("uses: owner/repo@sha");
            assert!(
                pin.len() == 40 && pin.chars().all(|c| c.is_ascii_hexdigit()),
                "step {id}: {uses} is not pinned to a full commit SHA"
            );
        }
        referenced.push_str(&step.to_string());
    }
    for name in inputs.keys() {
        assert!(
            referenced.contains(&format!("inputs.{name} ")),
            "input {name} is never used by a step"
        );
    }

    let upload = steps
        .iter()
        .find(|s| s["id"] == "upload")
        .expect("upload step");
    assert!(
        upload["uses"]
            .as_str()
            .unwrap()
            .starts_with("actions/upload-artifact@")
    );
    let cond = upload["if"].as_str().unwrap();
    for part in [
        "always()",
        "steps.run.outputs.report-dir != ''",
        "env.ACT != 'true'",
        "inputs.upload-under-act == 'true'",
    ] {
        assert!(cond.contains(part), "upload if: lacks {part}: {cond}");
    }
    assert_eq!(
        upload["with"]["path"],
        "${{ steps.run.outputs.report-dir }}"
    );
    assert_eq!(
        upload["with"]["name"],
        "${{ steps.run.outputs.artifact-name }}"
    );
    assert_eq!(
        upload["with"]["retention-days"],
        "${{ inputs.retention-days }}"
    );
}

#[test]
fn workflows_pin_every_third_party_action_by_sha() {
    let dir = Path::new(ROOT).join(".github/workflows");
    let mut seen = 0;
    for e in fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "yml") {
            continue;
        }
        for (n, line) in fs::read_to_string(&p).unwrap().lines().enumerate() {
            let t = line.trim_start().trim_start_matches("- ");
            let Some(uses) = t.strip_prefix("uses:") else {
                continue;
            };
            let uses = uses.split(" #").next().unwrap().trim();
            seen += 1;
            if uses.starts_with("./") {
                continue;
            }
            let pin = uses.split_once('@').map(|(_, p)| p).unwrap_or("");
            assert!(
                pin.len() == 40 && pin.chars().all(|c| c.is_ascii_hexdigit()),
                "{}:{}: {uses} is not pinned to a commit SHA",
                p.display(),
                n + 1
            );
        }
    }
    assert!(seen > 0);
}

/// The freshly built binary at `to`, without its debug info (as the release profile strips
/// it): a 400 MB debug build would make packaging the slowest part of the test suite.
fn stripped_binary(to: &Path) {
    let stripped = Command::new("strip")
        .arg("-o")
        .arg(to)
        .arg(EVALGATE)
        .status()
        .is_ok_and(|s| s.success());
    if !stripped {
        fs::copy(EVALGATE, to).unwrap();
    }
}

#[test]
fn install_and_run_with_the_real_binary() {
    let mut r = Runner::new();
    let binary = r.base.join("build/evalgate");
    fs::create_dir_all(binary.parent().unwrap()).unwrap();
    stripped_binary(&binary);
    let asset = r.publish_release(&binary, "x86_64-unknown-linux-musl");
    let table = fs::read_to_string(r.action.join("dist/checksums.txt")).unwrap();
    let name = asset.file_name().unwrap().to_str().unwrap();
    assert!(
        table
            .lines()
            .any(|l| l == format!("{}  {name}", sha256(&asset))),
        "table lacks `<sha256>  {name}`:\n{table}"
    );
    // Publish nothing: the comment and check run are off; the summary and outputs are written.
    r.input("comment", "off")
        .input("check-run", "false")
        .input("runs", "1");
    let run = r.run();
    let log = run.log();

    let install = run.step("install");
    assert_eq!(install.code, 0, "{log}");
    assert!(log.contains("sha256 verified"), "{log}");
    assert_eq!(install.outputs["source"], "release");
    assert_eq!(install.outputs["version"], r.version());
    let bin = PathBuf::from(&install.outputs["bin"]);
    assert!(
        bin.starts_with(&r.temp),
        "installed under RUNNER_TEMP: {}",
        bin.display()
    );
    assert_eq!(
        sha256(&bin),
        sha256(&binary),
        "the packaged binary, byte for byte"
    );
    assert_eq!(
        run.path_added,
        vec![bin.parent().unwrap().display().to_string()]
    );
    let v = Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&v.stdout).trim(),
        format!("evalgate {}", r.version())
    );

    let step = run.step("run");
    assert!(step.code == 0 || step.code == 1, "{log}");
    let o = &run.outputs;
    assert!(
        ["pass", "fail", "no_baseline", "error"].contains(&o["verdict"].as_str()),
        "verdict {:?}\n{log}",
        o["verdict"]
    );
    let dir = PathBuf::from(&o["report-dir"]);
    assert_eq!(
        dir,
        r.workspace.join("evalgate-report"),
        "the default report-dir"
    );
    for (k, f) in [
        ("report-json", "report.json"),
        ("report-html", "report.html"),
        ("report-md", "report.md"),
    ] {
        assert_eq!(PathBuf::from(&o[k]), dir.join(f), "{k}");
        assert!(dir.join(f).metadata().unwrap().len() > 0, "{f} written");
    }
    let report: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert!(report.is_object());
    assert_eq!(
        report["retrieval"]["retriever"], "reference-proxy",
        "no mcpproxy-bin and no config: evalgate's reference proxy\n{log}"
    );
    assert!(
        run.summary.contains("evalgate"),
        "job summary: {:?}",
        run.summary
    );
    assert!(run.summary.len() < 1 << 20);
    assert_eq!(
        run.uploaded,
        Some(("evalgate-report-gate".to_string(), dir))
    );

    // The same job under act, in a matrix leg, with the default comment and check-run inputs:
    // evalgate's dry run writes the payloads it would post. They carry the key the action
    // derived from the job and the matrix, and the check run targets the PR's head commit from
    // the event payload (not GITHUB_SHA, the merge commit).
    r.inputs.clear();
    r.set("ACT", "true");
    r.matrix = json!({"os": "ubuntu-latest"});
    let run = r.run();
    let log = run.log();
    assert!(
        run.step("run").code == 0 || run.step("run").code == 1,
        "{log}"
    );
    assert_eq!(run.uploaded, None, "no upload under act");
    let dir = PathBuf::from(&run.outputs["report-dir"]);
    let files: Vec<(PathBuf, String)> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| (e.path(), fs::read_to_string(e.path()).unwrap_or_default()))
        .collect();
    assert!(
        files
            .iter()
            .any(|(_, t)| t.contains("<!-- evalgate:gate-ubuntu-latest -->")),
        "a dry-run comment with the job/matrix marker in {}: {log}",
        dir.display()
    );
    let check = files
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|x| x == "json"))
        .find(|(_, t)| t.contains("head_sha"))
        .unwrap_or_else(|| panic!("a dry-run check-run payload in {}: {log}", dir.display()));
    assert!(
        check.1.contains("0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c"),
        "{}",
        check.1
    );
    assert!(
        !check.1.contains("b2c9f3e4d5a6978812345678901234567890abcd"),
        "{}",
        check.1
    );
}

#[test]
fn a_tampered_tarball_or_a_wrong_checksum_installs_nothing() {
    // The tarball on the server is not the one whose checksum the action carries.
    let r = Runner::new();
    let asset = r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    let evil = r.base.join("evil/evalgate");
    write_exe(&evil, &format!("{STUB_EVALGATE}\n# tampered\n"));
    let good_table = fs::read_to_string(r.action.join("dist/checksums.txt")).unwrap();
    let o = Command::new("bash")
        .arg(Path::new(ROOT).join("scripts/package.sh"))
        .args([&r.version(), "x86_64-unknown-linux-musl"])
        .arg(&evil)
        .arg(asset.parent().unwrap())
        .output()
        .unwrap();
    assert!(o.status.success());
    fs::write(r.action.join("dist/checksums.txt"), &good_table).unwrap();
    let run = r.run();
    let log = run.log();
    assert_ne!(run.code(), 0, "{log}");
    assert!(log.contains("checksum mismatch for evalgate-"), "{log}");
    assert!(log.contains("refusing to install"), "{log}");
    assert!(log.contains("::error title=evalgate install::"), "{log}");
    assert!(run.path_added.is_empty(), "GITHUB_PATH untouched");
    assert!(
        run.step("install").outputs.is_empty(),
        "no outputs: {:?}",
        run.step("install").outputs
    );
    assert_eq!(
        binaries_under(&r.temp),
        Vec::<PathBuf>::new(),
        "nothing installed"
    );
    assert!(!run.ran("run"), "the run step is skipped");
    assert_eq!(run.uploaded, None);

    // The right tarball, but the table says otherwise.
    let r = Runner::new();
    let asset = r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    let real = sha256(&asset);
    let mut wrong: Vec<char> = real.chars().collect();
    wrong[10] = if wrong[10] == '0' { '1' } else { '0' };
    let wrong: String = wrong.into_iter().collect();
    let table = r.action.join("dist/checksums.txt");
    let t = fs::read_to_string(&table).unwrap().replace(&real, &wrong);
    fs::write(&table, t).unwrap();
    let run = r.run();
    let log = run.log();
    assert_ne!(run.code(), 0, "{log}");
    assert!(
        log.contains(&format!("expected sha256 {wrong}")) && log.contains(&format!("got {real}")),
        "{log}"
    );
    assert!(run.path_added.is_empty());
    assert_eq!(binaries_under(&r.temp), Vec::<PathBuf>::new());

    // No entry for this version at all (the committed table of an action that predates it).
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    r.input("version", "0.0.1");
    fs::create_dir_all(r.releases.join("v0.0.1")).unwrap();
    fs::copy(
        r.releases.join(format!(
            "v{0}/evalgate-{0}-x86_64-unknown-linux-musl.tar.gz",
            r.version()
        )),
        r.releases
            .join("v0.0.1/evalgate-0.0.1-x86_64-unknown-linux-musl.tar.gz"),
    )
    .unwrap();
    let run = r.run();
    let log = run.log();
    assert_ne!(run.code(), 0, "{log}");
    assert!(
        log.contains(
            "no verified release of evalgate 0.0.1 is listed in the action's checksum table"
        ) && log.contains("has no sha256 for evalgate-0.0.1-x86_64-unknown-linux-musl.tar.gz"),
        "{log}"
    );
    assert!(
        !log.contains("downloading"),
        "nothing is downloaded without a checksum: {log}"
    );
    assert_eq!(binaries_under(&r.temp), Vec::<PathBuf>::new());
}

#[test]
fn a_checksum_mismatch_falls_back_to_cargo_install_only_when_asked() {
    let mut r = Runner::new();
    let asset = r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    fs::write(&asset, b"not a tarball").unwrap();
    r.input("fallback", "cargo-install");
    let run = r.run();
    let log = run.log();
    let install = run.step("install");
    assert_eq!(install.code, 0, "{log}");
    assert!(log.contains("::warning title=evalgate install::"), "{log}");
    assert!(log.contains("checksum mismatch"), "{log}");
    let args = r.log_file("cargo-args").expect("cargo was called");
    let root = r.temp.join(format!("evalgate/cargo-{}", r.version()));
    assert_eq!(
        args.lines().collect::<Vec<_>>(),
        [
            "install",
            "--locked",
            "evalgate",
            "--version",
            &r.version(),
            "--root",
            &root.display().to_string()
        ]
    );
    assert_eq!(install.outputs["source"], "cargo-install");
    assert_eq!(run.path_added, vec![root.join("bin").display().to_string()]);
    assert_eq!(run.step("run").code, 1, "the stub's gate failure");
}

#[test]
fn a_missing_asset_fails_clearly_or_uses_the_fallback() {
    // fallback: none (the default)
    let r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    fs::remove_dir_all(&r.releases).unwrap();
    let run = r.run();
    let log = run.log();
    assert_ne!(run.code(), 0);
    assert!(
        log.contains("download of file://") && log.contains("failed"),
        "{log}"
    );
    assert!(
        log.contains("fallback: cargo-install"),
        "the error names the way out: {log}"
    );
    assert!(r.log_file("cargo-args").is_none(), "cargo not called");
    assert!(run.path_added.is_empty());

    // fallback: cargo-install, and cargo fails too.
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    fs::remove_dir_all(&r.releases).unwrap();
    r.input("fallback", "cargo-install")
        .set("EVALGATE_CARGO", "false");
    let run = r.run();
    let log = run.log();
    assert_ne!(run.code(), 0);
    assert!(
        log.contains(&format!(
            "cargo install --locked evalgate --version {} failed",
            r.version()
        )),
        "{log}"
    );
    assert!(run.path_added.is_empty());
    assert_eq!(binaries_under(&r.temp), Vec::<PathBuf>::new());

    // A bad fallback value.
    let mut r = Runner::new();
    r.input("fallback", "curl-bash");
    let log = r.run().log();
    assert!(
        log.contains("input 'fallback' must be 'none' or 'cargo-install'"),
        "{log}"
    );
}

#[test]
fn each_runner_platform_gets_its_target_and_unknown_ones_fail_clearly() {
    for (os, arch, target) in [
        ("Linux", "X64", "x86_64-unknown-linux-musl"),
        ("Linux", "ARM64", "aarch64-unknown-linux-musl"),
        ("macOS", "ARM64", "aarch64-apple-darwin"),
        ("macOS", "X64", "x86_64-apple-darwin"),
    ] {
        let mut r = Runner::new();
        r.publish_release(&r.stub(), target);
        r.set("RUNNER_OS", os).set("RUNNER_ARCH", arch);
        let run = r.run();
        assert_eq!(run.step("install").code, 0, "{os}/{arch}: {}", run.log());
        assert!(
            run.log()
                .contains(&format!("evalgate-{}-{target}.tar.gz", r.version()))
        );
    }

    for (os, arch) in [
        ("Windows", "X64"),
        ("Linux", "ARM"),
        ("Linux", "X86"),
        ("FreeBSD", "X64"),
    ] {
        let mut r = Runner::new();
        r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
        r.set("RUNNER_OS", os).set("RUNNER_ARCH", arch);
        let run = r.run();
        let log = run.log();
        assert_ne!(run.code(), 0, "{os}/{arch}: {log}");
        assert!(
            log.contains(&format!(
                "no prebuilt evalgate for RUNNER_OS={os} RUNNER_ARCH={arch}"
            )),
            "{log}"
        );
        assert!(
            log.contains("prebuilt: Linux X64, Linux ARM64, macOS ARM64, macOS X64"),
            "{log}"
        );
        assert!(run.path_added.is_empty());
        assert!(r.log_file("cargo-args").is_none());
    }

    // With the fallback an unknown platform builds with cargo.
    let mut r = Runner::new();
    r.set("RUNNER_ARCH", "ARM")
        .input("fallback", "cargo-install");
    let run = r.run();
    assert_eq!(run.step("install").code, 0, "{}", run.log());
    assert_eq!(run.step("install").outputs["source"], "cargo-install");

    // A version that is not one.
    for bad in ["latest", "../../../etc/passwd", "1.2", "v1.2.3;rm"] {
        let mut r = Runner::new();
        r.input("version", bad);
        let run = r.run();
        assert_ne!(run.code(), 0);
        assert!(
            run.log()
                .contains("input 'version' must be a release version"),
            "{bad}: {}",
            run.log()
        );
    }
    // `v` prefixes are accepted.
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    let v = format!("v{}", r.version());
    r.input("version", &v);
    assert_eq!(r.run().step("install").code, 0);
}

#[test]
fn in_its_own_checkout_the_action_builds_from_source() {
    // `uses: ./` in evalgate's repository: the action directory is the workspace.
    let mut r = Runner::new();
    Runner::copy_action(&r.workspace);
    fs::write(
        r.workspace.join("Cargo.toml"),
        "[package]\nname = \"evalgate\"\nversion = \"9.9.9\"\n",
    )
    .unwrap();
    r.action = r.workspace.clone();
    let run = r.run();
    let install = run.step("install");
    assert_eq!(install.code, 0, "{}", run.log());
    assert_eq!(install.outputs["source"], "source");
    let ws = r.workspace.display().to_string();
    let args = r.log_file("cargo-args").expect("cargo build ran");
    assert_eq!(
        args.lines().collect::<Vec<_>>(),
        [
            "build",
            "--release",
            "--locked",
            "--manifest-path",
            &format!("{ws}/Cargo.toml"),
            "--target-dir",
            &format!("{ws}/target")
        ]
    );
    assert_eq!(
        run.path_added,
        vec![r.temp.join("evalgate/source/bin").display().to_string()]
    );

    // The copy the runner downloads for `uses: evalgate/evalgate@v0` also has a Cargo.toml,
    // but lives outside the workspace: it installs the verified release.
    let r = Runner::new();
    fs::write(
        r.action.join("Cargo.toml"),
        "[package]\nname = \"evalgate\"\nversion = \"9.9.9\"\n",
    )
    .unwrap();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    let run = r.run();
    assert_eq!(
        run.step("install").outputs["source"],
        "release",
        "{}",
        run.log()
    );
    assert!(r.log_file("cargo-args").is_none());

    // Another crate checked out in the workspace is not evalgate.
    let mut r = Runner::new();
    Runner::copy_action(&r.workspace);
    fs::write(
        r.workspace.join("Cargo.toml"),
        "[package]\nname = \"not-evalgate\"\n",
    )
    .unwrap();
    r.action = r.workspace.clone();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    let run = r.run();
    assert_eq!(
        run.step("install").outputs["source"],
        "release",
        "{}",
        run.log()
    );
}

#[test]
fn the_run_step_turns_inputs_into_arguments_and_environment() {
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    r.input("config", "ci/evalgate.toml")
        .input("mcpproxy-bin", "/opt/mcpproxy/bin/mcpproxy")
        .input("runs", "3")
        .input("comment", "always")
        .input("check-run", "false")
        .input("fail-on", "never")
        .input("retention-days", "5")
        .input("report-dir", "reports/gate");
    r.matrix = json!({"os": "ubuntu-latest", "proxy": "v0.9"});
    let run = r.run();
    let log = run.log();
    assert_eq!(
        run.step("run").code,
        1,
        "the stub's exit code is the step's: {log}"
    );

    let argv = r.log_file("evalgate-argv").unwrap();
    let argv: Vec<&str> = argv.lines().collect();
    let out = run.outputs["report-dir"].clone();
    assert_eq!(
        argv,
        [
            "run",
            "--config",
            "ci/evalgate.toml",
            "--runs",
            "3",
            "--mcpproxy-bin",
            "/opt/mcpproxy/bin/mcpproxy",
            "--out",
            out.as_str()
        ]
    );
    assert_eq!(out, r.workspace.join("reports/gate").display().to_string());
    assert_eq!(
        r.log_file("evalgate-cwd").unwrap().trim(),
        r.workspace.display().to_string()
    );
    let env = r.log_file("evalgate-env").unwrap();
    for line in [
        format!("EVALGATE_GITHUB_TOKEN={TOKEN}"),
        "EVALGATE_COMMENT=always".into(),
        "EVALGATE_CHECK_RUN=false".into(),
        "EVALGATE_FAIL_ON=never".into(),
        "EVALGATE_COMMENT_KEY=gate-ubuntu-latest-v0.9".into(),
        "EVALGATE_ARTIFACT_NAME=evalgate-report-gate-ubuntu-latest-v0.9".into(),
        "GITHUB_ACTIONS=true".into(),
    ] {
        assert!(env.lines().any(|l| l == line), "{line} missing in\n{env}");
    }

    // The action's outputs come from the run step's (evalgate's) outputs.
    let o = &run.outputs;
    assert_eq!(o["verdict"], "fail");
    let regressions: Value = serde_json::from_str(&o["regressions"]).unwrap();
    assert_eq!(regressions[1]["subject"], "detector:rules");
    assert_eq!(regressions[1]["metric"], "fpr");
    assert_eq!(o["exit-code"], "1");
    assert_eq!(o["report-json"], format!("{out}/report.json"));
    assert_eq!(o["report-html"], format!("{out}/report.html"));
    assert_eq!(o["report-md"], format!("{out}/report.md"));
    assert_eq!(o["evalgate-version"], r.version());
    assert_eq!(run.summary, "## evalgate (stub): fail\n");
    // The gate failed, and the report is still uploaded, under the matrix leg's own name.
    assert_eq!(
        run.uploaded,
        Some((
            "evalgate-report-gate-ubuntu-latest-v0.9".to_string(),
            PathBuf::from(&out)
        ))
    );
}

/// Issue 18, item 6: the common knobs are inputs. `working-directory` is where evalgate runs
/// (report-dir is relative to it), `baseline` and `detectors` reach it as EVALGATE_* variables
/// (an empty one leaves a variable the caller set in `env:` alone), and `args` is split on whitespace only: a `$(…)`
/// or a glob in it stays one literal argument and runs nothing.
#[test]
fn working_directory_baseline_detectors_and_extra_args_reach_evalgate() {
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    std::fs::create_dir_all(r.workspace.join("proxy/eval")).unwrap();
    let marker = r.workspace.join("injected");
    // as `env:` on the `uses:` step
    r.set("EVALGATE_DATASETS", "from/env");
    r.input("working-directory", "proxy/eval")
        .input("baseline", "baselines/proxy.json")
        .input("detectors", "rules,scanner")
        .input(
            "args",
            &format!(
                "--timeout 60\n  --robustness gate $(touch {}) *",
                marker.display()
            ),
        );
    let run = r.run();
    let log = run.log();
    assert_eq!(run.step("run").code, 1, "{log}");
    let argv = r.log_file("evalgate-argv").unwrap();
    let argv: Vec<&str> = argv.lines().collect();
    let out = run.outputs["report-dir"].clone();
    let wd = r.workspace.join("proxy/eval");
    assert_eq!(out, wd.join("evalgate-report").display().to_string());
    assert_eq!(
        argv,
        [
            "run",
            "--out",
            out.as_str(),
            "--timeout",
            "60",
            "--robustness",
            "gate",
            "$(touch",
            &format!("{})", marker.display()),
            "*",
        ]
    );
    assert!(!marker.exists(), "an input ran a command");
    assert_eq!(
        r.log_file("evalgate-cwd").unwrap().trim(),
        wd.display().to_string()
    );
    let env = r.log_file("evalgate-env").unwrap();
    for line in [
        "EVALGATE_BASELINE=baselines/proxy.json",
        "EVALGATE_DETECTORS=rules,scanner",
    ] {
        assert!(env.lines().any(|l| l == line), "{line} missing in\n{env}");
    }
    assert!(
        env.lines().any(|l| l == "EVALGATE_DATASETS=from/env"),
        "an empty input leaves the caller's env: value alone:\n{env}"
    );

    // a working directory that does not exist is a clear error, and evalgate never runs
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    r.input("working-directory", "no/such/dir");
    let run = r.run();
    assert_eq!(run.step("run").code, 2, "{}", run.log());
    assert!(
        run.log()
            .contains("input 'working-directory' must be a directory, got 'no/such/dir'"),
        "{}",
        run.log()
    );
    assert!(r.log_file("evalgate-argv").is_none());
}

#[test]
fn the_system_under_test_defaults_to_the_reference_proxy() {
    let argv = |r: &Runner| {
        r.log_file("evalgate-argv")
            .unwrap()
            .lines()
            .map(String::from)
            .collect::<Vec<_>>()
    };

    // No mcpproxy-bin, no config: the reference proxy.
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    r.set("STUB_EXIT", "0")
        .input("comment-key", "Nightly Gate")
        .input("artifact-name", "gate-report")
        .input("datasets", "datasets/v0");
    let run = r.run();
    assert_eq!(run.code(), 0, "{}", run.log());
    let a = argv(&r);
    assert_eq!(a[..2], ["run", "--out"]);
    let env = r.log_file("evalgate-env").unwrap();
    assert!(env.contains("EVALGATE_DEFAULT_SUT=reference\n"), "{env}");
    assert!(env.contains("EVALGATE_DATASETS=datasets/v0\n"), "{env}");
    assert!(env.contains("EVALGATE_COMMENT_KEY=nightly-gate\n"), "{env}");
    assert!(
        env.contains("EVALGATE_ARTIFACT_NAME=gate-report\n"),
        "{env}"
    );
    assert!(
        env.contains("EVALGATE_COMMENT=on-change\n"),
        "the default comment mode: {env}"
    );
    assert!(env.contains("EVALGATE_FAIL_ON=regression\n"), "{env}");
    assert!(env.contains("EVALGATE_CHECK_RUN=true\n"), "{env}");
    assert_eq!(run.uploaded.as_ref().unwrap().0, "gate-report");

    // Inputs set to '' leave evalgate's defaults (it rejects empty values).
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    r.input("comment", "")
        .input("fail-on", "")
        .input("check-run", "")
        .input("github-token", "");
    r.run();
    let env = r.log_file("evalgate-env").unwrap();
    for v in [
        "EVALGATE_COMMENT",
        "EVALGATE_FAIL_ON",
        "EVALGATE_CHECK_RUN",
        "EVALGATE_GITHUB_TOKEN",
    ] {
        assert!(env.contains(&format!("{v}=<unset>\n")), "{v}: {env}");
    }

    // ./evalgate.toml that chooses its system under test is left alone.
    let r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    fs::write(
        r.workspace.join("evalgate.toml"),
        "[run]\nruns = 2\n\n[sut]\nkind = \"launch\"\n\n[sut.launch]\ncommand = [\"my-proxy\"]\n",
    )
    .unwrap();
    r.run();
    assert!(!argv(&r).contains(&"--sut".to_string()), "{:?}", argv(&r));

    // A config without [sut] kind still gets the reference proxy.
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    fs::create_dir_all(r.workspace.join("ci")).unwrap();
    fs::write(r.workspace.join("ci/evalgate.toml"), "[run]\nruns = 2\n").unwrap();
    r.input("config", "ci/evalgate.toml");
    r.run();
    assert_eq!(
        argv(&r)[..4],
        ["run", "--config", "ci/evalgate.toml", "--out"]
    );
    let env = r.log_file("evalgate-env").unwrap();
    assert!(env.contains("EVALGATE_DEFAULT_SUT=reference\n"), "{env}");

    // EVALGATE_SUT in the job's environment wins too.
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    r.set("EVALGATE_SUT", "embedded");
    r.run();
    assert!(!argv(&r).contains(&"--sut".to_string()));

    // Bad inputs stop before evalgate runs, with exit 2 (bad input).
    for (k, v, msg) in [
        ("runs", "three", "input 'runs' must be a whole number"),
        (
            "artifact-name",
            "a/b",
            "input 'artifact-name' must not contain",
        ),
    ] {
        let mut r = Runner::new();
        r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
        r.input(k, v);
        let run = r.run();
        assert_eq!(run.step("run").code, 2, "{k}={v}: {}", run.log());
        assert!(run.log().contains(msg), "{}", run.log());
        assert!(r.log_file("evalgate-argv").is_none());
    }
}

/// scripts/run.sh run directly with the real binary in `dir` (no publishing: not under
/// GITHUB_ACTIONS), with `env`; returns the report's system under test.
fn run_sh_real(dir: &Path, env: &[(&str, &str)]) -> String {
    let out = dir.join("github-output.txt");
    let mut c = Command::new("bash");
    c.arg(Path::new(ROOT).join("scripts/run.sh"))
        .current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("GITHUB_") || k.starts_with("EVALGATE_") || k.starts_with("INPUT_") {
            c.env_remove(&k);
        }
    }
    c.env("EVALGATE_BIN", EVALGATE)
        .env("EVALGATE_DATASETS", Path::new(ROOT).join("datasets/v0"))
        .env("GITHUB_OUTPUT", &out)
        .env("INPUT_ARGS", "--publish never --no-baseline -q");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.code() == Some(0), "{log}");
    let report: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("evalgate-report/report.json")).unwrap())
            .unwrap();
    report["retrieval"]["retriever"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn evalgate_not_the_shell_decides_whether_the_config_chooses_the_system() {
    // Issue 36 item 6: forms of `[sut] kind` the old awk missed, so `--sut reference` was
    // appended and the reference proxy measured under the configured system's name.
    for (i, toml) in [
        "[sut] # the system under test\nkind = \"embedded\"\n",
        "sut.kind = \"embedded\"\n",
        "\"sut\".kind = \"embedded\"\n",
        "[ sut ]\n'kind' = 'embedded'\n",
        "sut = { kind = \"embedded\" }\n",
    ]
    .into_iter()
    .enumerate()
    {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("evalgate.toml"), toml).unwrap();
        assert_eq!(
            run_sh_real(d.path(), &[]),
            "embedded",
            "config {i}: {toml:?}"
        );
    }
    // no kind anywhere: the reference proxy, and the same through an explicit config path
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("ci")).unwrap();
    fs::write(d.path().join("ci/gate.toml"), "[run]\nruns = 1\n").unwrap();
    assert_eq!(
        run_sh_real(d.path(), &[("INPUT_CONFIG", "ci/gate.toml")]),
        "reference-proxy"
    );
}

#[test]
fn no_input_injects_a_step_output_or_a_workflow_command() {
    // a newline in artifact-name once added `report-dir=..`, which the upload step uploads
    for (k, v) in [
        ("artifact-name", "evalgate-report\nreport-dir=.."),
        ("artifact-name", "evalgate-report\r::add-mask::x"),
        ("report-dir", "out\nartifact-name=evil"),
        (
            "working-directory",
            "nope\n::add-mask::hunter2\n::stop-commands::t",
        ),
        ("version", "1.2.3\n::add-mask::hunter2"),
        ("fallback", "none\n::add-mask::hunter2"),
    ] {
        let mut r = Runner::new();
        r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
        r.input(k, v);
        let run = r.run();
        let log = run.log();
        assert_ne!(run.code(), 0, "{k}={v:?}: {log}");
        assert!(r.log_file("evalgate-argv").is_none());
        let outputs = (run.steps.iter().find(|s| s.id == "run"))
            .map(|s| s.outputs.clone())
            .unwrap_or_default();
        assert!(
            outputs.get("report-dir").is_none_or(|d| d != ".."),
            "{outputs:?}"
        );
        assert!(!outputs.contains_key("artifact-name") || outputs["artifact-name"] != "evil");
        for line in log.split(['\n', '\r']) {
            let t = line.trim_start();
            assert!(
                !t.starts_with("::")
                    || t.starts_with("::error title=evalgate::")
                    || t.starts_with("::error title=evalgate install::"),
                "{k}={v:?}: injected {line:?}\n{log}"
            );
        }
    }
}

#[test]
fn credentials_in_the_args_input_are_not_echoed() {
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    r.input(
        "args",
        "--header Authorization:Bearer-s3cr3tvalue --url=https://user:pa55word@h.example/mcp?key=k3yk3y -q",
    );
    let run = r.run();
    let log = run.log();
    for secret in ["s3cr3tvalue", "pa55word", "k3yk3y"] {
        assert!(!log.contains(secret), "{secret} echoed:\n{log}");
    }
    assert!(log.contains("--header *** --url=*** -q"), "{log}");
    let argv = r.log_file("evalgate-argv").unwrap();
    assert!(
        argv.contains("Authorization:Bearer-s3cr3tvalue\n")
            && argv.contains("--url=https://user:pa55word@h.example/mcp?key=k3yk3y\n"),
        "evalgate still gets them: {argv}"
    );
}

#[test]
/// The default under act (no upload) runs in a real act (tests/act.rs); asked for, it uploads.
fn under_act_the_upload_runs_when_asked() {
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    r.set("ACT", "true").set("STUB_EXIT", "0");
    r.input("upload-under-act", "true");
    assert!(r.run().uploaded.is_some());
}

#[test]
fn update_checksums_replaces_a_versions_lines_and_keeps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("checksums.txt");
    let stub = dir.path().join("evalgate");
    write_exe(&stub, "#!/bin/sh\necho evalgate\n");
    let pkg = |v: &str, t: &str, out: &Path| {
        let o = Command::new("bash")
            .arg(Path::new(ROOT).join("scripts/package.sh"))
            .args([v, t])
            .arg(&stub)
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let update = |v: &str, d: &Path| {
        Command::new("bash")
            .arg(Path::new(ROOT).join("scripts/update-checksums.sh"))
            .arg(v)
            .arg(d)
            .arg(&table)
            .output()
            .unwrap()
    };
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    pkg("1.0.0", "x86_64-unknown-linux-musl", &a);
    pkg("1.0.0", "aarch64-apple-darwin", &a);
    assert!(update("1.0.0", &a).status.success());
    pkg("1.1.0", "x86_64-unknown-linux-musl", &b);
    assert!(update("v1.1.0", &b).status.success());
    // Re-recording 1.0.0 replaces, never duplicates.
    assert!(update("1.0.0", &a).status.success());
    let text = fs::read_to_string(&table).unwrap();
    let entries: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(entries.len(), 3, "{text}");
    let names: Vec<&str> = entries
        .iter()
        .map(|l| l.split("  ").nth(1).unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "evalgate-1.0.0-aarch64-apple-darwin.tar.gz",
            "evalgate-1.0.0-x86_64-unknown-linux-musl.tar.gz",
            "evalgate-1.1.0-x86_64-unknown-linux-musl.tar.gz",
        ]
    );
    for l in &entries {
        let (hash, name) = l.split_once("  ").unwrap();
        let dir = if name.contains("1.1.0") { &b } else { &a };
        assert_eq!(hash, sha256(&dir.join(name)));
    }
    // Packaging is reproducible: the same binary gives the same tarball.
    let c = dir.path().join("c");
    pkg("1.0.0", "x86_64-unknown-linux-musl", &c);
    let n = "evalgate-1.0.0-x86_64-unknown-linux-musl.tar.gz";
    assert_eq!(sha256(&a.join(n)), sha256(&c.join(n)));
    // A .sha256 file that does not match its tarball is refused.
    fs::write(
        a.join(format!("{n}.sha256")),
        format!("{}  {n}\n", "0".repeat(64)),
    )
    .unwrap();
    let o = update("1.0.0", &a);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not match its .sha256 file"));
    assert_eq!(
        fs::read_to_string(&table).unwrap(),
        text,
        "the table is unchanged after a refusal"
    );
}

#[test]
fn the_committed_checksum_table_is_well_formed() {
    let text = fs::read_to_string(Path::new(ROOT).join("dist/checksums.txt")).unwrap();
    let mut names = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (hash, name) = line
            .split_once("  ")
            .unwrap_or_else(|| panic!("`<sha256>  <asset>`: {line:?}"));
        assert!(
            hash.len() == 64
                && hash
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
            "{line}"
        );
        assert!(
            name.starts_with("evalgate-") && name.ends_with(".tar.gz"),
            "{line}"
        );
        names.push(name.to_string());
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(names, sorted, "sorted by asset, no duplicates");
}

/// Issue 20, item 6: `shard` adds `--shard`; `merge` runs `evalgate merge` over every
/// report.json under the directory (sorted), and refuses the inputs that measure.
#[test]
fn the_shard_and_merge_inputs_become_a_shard_run_and_a_merge() {
    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    r.input("shard", "2/4").input("runs", "2");
    let run = r.run();
    let argv = r.log_file("evalgate-argv").unwrap();
    let out = run.outputs["report-dir"].clone();
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        [
            "run",
            "--runs",
            "2",
            "--shard",
            "2/4",
            "--out",
            out.as_str()
        ]
    );

    let mut r = Runner::new();
    r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
    for leg in ["evalgate-report-gate-2-2", "evalgate-report-gate-1-2"] {
        let d = r.workspace.join("shards").join(leg);
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("report.json"), "{}").unwrap();
    }
    r.input("merge", "shards")
        .input("config", "ci/evalgate.toml");
    let run = r.run();
    let argv = r.log_file("evalgate-argv").unwrap();
    let out = run.outputs["report-dir"].clone();
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        [
            "merge",
            "--config",
            "ci/evalgate.toml",
            "--out",
            out.as_str(),
            "shards/evalgate-report-gate-1-2/report.json",
            "shards/evalgate-report-gate-2-2/report.json",
        ]
    );

    // what cannot apply, or is malformed, is a clear error and evalgate never runs
    for (inputs, says) in [
        (
            vec![("merge", "shards"), ("runs", "3")],
            "input 'runs' does not apply with 'merge'",
        ),
        (
            vec![("merge", "no/such/dir")],
            "input 'merge' must be the directory",
        ),
        (vec![("merge", "empty")], "no report.json under 'empty'"),
        (vec![("shard", "2-4")], "input 'shard' must be INDEX/COUNT"),
    ] {
        let mut r = Runner::new();
        r.publish_release(&r.stub(), "x86_64-unknown-linux-musl");
        fs::create_dir_all(r.workspace.join("shards/a")).unwrap();
        fs::write(r.workspace.join("shards/a/report.json"), "{}").unwrap();
        fs::create_dir_all(r.workspace.join("empty")).unwrap();
        for (k, v) in &inputs {
            r.input(k, v);
        }
        let run = r.run();
        assert_eq!(run.step("run").code, 2, "{inputs:?}: {}", run.log());
        assert!(run.log().contains(says), "{inputs:?}: {}", run.log());
        assert!(r.log_file("evalgate-argv").is_none(), "{inputs:?}");
    }
}
