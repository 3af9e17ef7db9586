//! Helpers shared by the end-to-end tests: run the real binary, build dataset variants.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `evalgate` with `args` in `cwd` (CI-like environment, no colour).
pub fn evalgate(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_evalgate"))
        .args(args)
        .current_dir(cwd)
        .env_remove("EVALGATE_BASELINE")
        .env_remove("EVALGATE_CORPUS")
        .env_remove("EVALGATE_GOLDEN")
        .env_remove("EVALGATE_SECURITY_CORPUS")
        .env("NO_COLOR", "1")
        .output()
        .expect("evalgate runs")
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

/// The shipped baseline, copied to `dir/baseline.json`.
pub fn baseline_copy(dir: &Path) -> PathBuf {
    let p = dir.join("baseline.json");
    std::fs::copy(root().join("baselines/default.json"), &p).unwrap();
    p
}
