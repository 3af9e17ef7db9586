//! The shape of `src/`, checked: folders read as the data flow and every `crate::` path points
//! down. A layer uses only the layers below it; a pipeline stage uses only the stages before
//! it; nothing below the command line knows clap. Unit tests are left out (a test may build a
//! whole report). Breaking a rule names the file and the path.

use std::path::{Path, PathBuf};

/// Top-level layers, lowest first. A layer may use the ones before it in this list.
const LAYERS: &[&str] = &["infra", "pipeline", "config", "tools", "cli", "app"];

/// Pipeline stages in the order data flows; a stage may use the ones before it.
const STAGES: &[&str] = &[
    "dataset", "replay", "sut", "measure", "score", "baseline", "gate", "report", "publish",
];

/// Infrastructure modules, lowest first.
const INFRA: &[&str] = &[
    "text",
    "files",
    "own_binary",
    "secrets",
    "log",
    "http",
    "process",
    "mcp",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `(layer, unit)` of a source file, e.g. `src/pipeline/sut/live/mod.rs` -> ("pipeline", "sut").
fn place(rel: &str) -> (String, String) {
    let parts: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
    let layer = parts[0].trim_end_matches(".rs").to_string();
    let unit = match parts.get(1) {
        Some(u) if parts.len() > 2 || *u != "mod" => u.to_string(),
        _ => String::new(),
    };
    (layer, unit)
}

/// Every `crate::a::b` path in the text, as (a, b), comments included (doc links count too).
fn uses(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let seg = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        let path = |s: &str| -> (String, String) {
            let a = seg(s);
            let b = s[a.len()..].strip_prefix("::").map(seg).unwrap_or_default();
            (a, b)
        };
        if let Some(group) = after.strip_prefix('{') {
            // `crate::{a::b, c}`: the items at the group's top level
            let (mut depth, mut start) = (0usize, 0usize);
            for (j, ch) in group.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push(path(group[start..j].trim()));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(path(group[start..j].trim()));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            out.retain(|(a, _)| !a.is_empty());
        } else {
            let (a, b) = path(after);
            if !a.is_empty() {
                out.push((a, b));
            }
        }
        rest = &rest[i + 1..];
    }
    out
}

fn rank(list: &[&str], x: &str) -> Option<usize> {
    list.iter().position(|y| *y == x)
}

fn violations() -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "lib.rs" || rel == "main.rs" {
            continue;
        }
        if rel.ends_with("/tests.rs") {
            continue; // a unit test may build whatever it checks, a whole report included
        }
        let text = std::fs::read_to_string(&f).unwrap();
        // the same for a file's own test module
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        let (layer, unit) = place(&rel);
        let Some(lr) = rank(LAYERS, &layer) else {
            bad.push(format!(
                "src/{rel}: top-level module {layer:?} is in no layer"
            ));
            continue;
        };
        if lr < rank(LAYERS, "cli").unwrap() && text.contains("clap") {
            bad.push(format!("src/{rel}: mentions clap below the command line"));
        }
        for (a, b) in uses(text) {
            if [
                "out",
                "outln",
                "err",
                "errln",
                "stdout_write",
                "stderr_write",
                "stdout_failed",
                "workflow_command",
            ]
            .contains(&a.as_str())
            {
                continue;
            }
            let Some(ar) = rank(LAYERS, &a) else {
                bad.push(format!("src/{rel}: crate::{a} is in no layer"));
                continue;
            };
            if ar > lr {
                bad.push(format!(
                    "src/{rel}: {layer} uses crate::{a}::{b} (a layer above)"
                ));
            } else if ar == lr && a == layer {
                let order = match layer.as_str() {
                    "pipeline" => STAGES,
                    "infra" => INFRA,
                    _ => continue,
                };
                match (rank(order, &unit), rank(order, &b)) {
                    (Some(u), Some(v)) if v > u => bad.push(format!(
                        "src/{rel}: {layer}::{unit} uses crate::{a}::{b} (a later {})",
                        if layer == "pipeline" {
                            "stage"
                        } else {
                            "module"
                        }
                    )),
                    (None, _) if !unit.is_empty() => {
                        bad.push(format!("src/{rel}: {layer}::{unit} is in no order"))
                    }
                    (_, None) if !b.is_empty() => {
                        bad.push(format!("src/{rel}: crate::{a}::{b} is in no order"))
                    }
                    _ => {}
                }
            }
        }
    }
    bad.sort();
    bad.dedup();
    bad
}

#[test]
fn every_path_in_src_points_down_the_data_flow() {
    let bad = violations();
    assert!(
        bad.is_empty(),
        "{} path(s) point up:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Issue 36 item 4: every message leaves through `out!`/`err!` (src/lib.rs), which keep any
/// line from starting a workflow command; evalgate's own commands through `workflow_command`.
#[test]
fn every_message_is_printed_through_the_neutralising_macros() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().to_string();
        if rel == "lib.rs" || rel.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        for (no, line) in text.lines().enumerate() {
            let direct = ["println!(", "print!(", "io::stdout()", "io::stderr()"]
                .iter()
                .any(|m| line.contains(m))
                && !line.contains("is_terminal()");
            if direct {
                bad.push(format!("src/{rel}:{}: {}", no + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "print with crate::out!/outln!/err!/errln! (or crate::workflow_command):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_checker_sees_a_path_that_points_up() {
    // the rules themselves, on made-up lines: a stage using a later one, infra using the
    // pipeline, and a path that goes down
    assert_eq!(
        uses("use crate::pipeline::gate::Check; use crate::{cli::Cli, infra::{text, files}};"),
        vec![
            ("pipeline".to_string(), "gate".to_string()),
            ("cli".to_string(), "Cli".to_string()),
            ("infra".to_string(), String::new())
        ]
    );
    assert!(rank(STAGES, "score").unwrap() < rank(STAGES, "gate").unwrap());
    assert!(rank(LAYERS, "infra").unwrap() < rank(LAYERS, "pipeline").unwrap());
    assert_eq!(
        place("pipeline/sut/live/mod.rs"),
        ("pipeline".into(), "sut".into())
    );
    assert_eq!(
        place("pipeline/gate.rs"),
        ("pipeline".into(), "gate".into())
    );
    assert_eq!(place("pipeline/mod.rs"), ("pipeline".into(), String::new()));
    assert_eq!(place("cli/mod.rs"), ("cli".into(), String::new()));
}
