//! External scanners as detectors (`[[scanner]]`): real child processes (small Python
//! stand-ins in tests/fixtures/scanners) that flag everything, nothing, by keyword, crash,
//! print garbage or hang. Right numbers or a named failure, never a silent "not flagged".

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn script(name: &str) -> String {
    root()
        .join("tests/fixtures/scanners")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Writes evalgate.toml with one scanner and runs `evalgate security` with it.
fn scan(dir: &Path, table: &str) -> (i32, Value, String) {
    std::fs::write(
        dir.join("evalgate.toml"),
        format!("detectors = [\"scanner\"]\n\n[[scanner]]\n{table}\n"),
    )
    .unwrap();
    let o = evalgate(dir, &["security", "--no-baseline", "--out", "r", "-q"]);
    let report = std::fs::read_to_string(dir.join("r/report.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (code(&o), report, stderr(&o))
}

fn batch(mode: &str, extra_args: &str, extra: &str) -> String {
    format!(
        "name = \"stand-in\"\ncommand = [\"python3\", {:?}, {mode:?}, \"{{file}}\"{extra_args}]\nfilter = '.results[] | {{tool: .tool_name, severity: .severity, reason: .message}}'\n{extra}",
        script("batch.py")
    )
}

/// A per-entry (`lines`) stand-in scanner applying the keyword rule; `extra_args` are appended.
fn lines(extra_args: &str) -> String {
    format!(
        "name = \"stand-in\"\nmode = \"lines\"\ncommand = [\"python3\", {:?}, \"keyword\"{extra_args}]\nfilter = '{{flagged: (.verdict == \"malicious\")}}'\n",
        script("lines.py")
    )
}

fn metric(r: &Value, name: &str) -> f64 {
    r["security"]["detectors"][0]["metrics"][name]["mean"]
        .as_f64()
        .unwrap_or(f64::NAN)
}

fn flagged(r: &Value) -> Vec<(String, bool)> {
    r["security"]["detectors"][0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_string(),
                e["flagged_runs"].as_u64().unwrap() > 0,
            )
        })
        .collect()
}

#[test]
fn a_scanner_flagging_everything_or_nothing_gets_the_right_numbers() {
    let d = tempdir();
    let (c, r, err) = scan(d.path(), &batch("all", "", ""));
    assert_eq!(c, 0, "{err}");
    assert_eq!(r["security"]["detectors"][0]["detector"], "stand-in");
    assert_eq!(metric(&r, "recall"), 1.0);
    assert_eq!(metric(&r, "fpr"), 1.0);

    let (c, r, err) = scan(d.path(), &batch("none", "", ""));
    assert_eq!(c, 0, "{err}");
    assert_eq!(metric(&r, "recall"), 0.0);
    assert_eq!(metric(&r, "fpr"), 0.0);
    let counts = &r["security"]["detectors"][0]["counts"];
    assert_eq!(counts["tp"], 0);
    assert!(counts["fn"].as_u64().unwrap() > 0);
}

#[test]
fn exit_codes_are_not_verdicts_and_the_severity_threshold_applies() {
    let d = tempdir();
    // valid JSON on stdout with exit code 1: read like any other answer
    let (c, r, err) = scan(d.path(), &batch("all", ", \"--exit\", \"1\"", ""));
    assert_eq!(c, 0, "{err}");
    assert_eq!(metric(&r, "recall"), 1.0);
    // every finding is "low": below a "medium" threshold nothing is blocked, every flag is for
    // review (a second row); at "low" everything is blocked and there is no review row
    let low = ", \"--severity\", \"low\"";
    let (c, r, _) = scan(
        d.path(),
        &batch("all", low, "severity_threshold = \"medium\""),
    );
    assert_eq!(c, 0);
    assert_eq!(metric(&r, "recall"), 0.0);
    assert_eq!(metric(&r, "fpr"), 0.0);
    let review = &r["security"]["detectors"][1];
    assert_eq!(review["detector"], "stand-in/review");
    assert_eq!(review["tier"], "review");
    assert_eq!(review["metrics"]["recall"]["mean"], 1.0);
    assert_eq!(r["security"]["detectors"][0]["tier"], "blocking");
    let (_, r, _) = scan(d.path(), &batch("all", low, "severity_threshold = \"low\""));
    assert_eq!(metric(&r, "recall"), 1.0);
    assert_eq!(r["security"]["detectors"].as_array().unwrap().len(), 1);
}

#[test]
fn batch_and_per_entry_modes_agree_on_the_same_rule() {
    let d = tempdir();
    let (c, by_file, err) = scan(d.path(), &batch("keyword", "", ""));
    assert_eq!(c, 0, "{err}");
    let (c, by_line, err) = scan(d.path(), &lines(""));
    assert_eq!(c, 0, "{err}");
    let a = flagged(&by_file);
    assert_eq!(a, flagged(&by_line));
    let n = a.iter().filter(|(_, f)| *f).count();
    assert!(n > 0 && n < a.len(), "{n} of {} flagged", a.len());
}

#[test]
fn a_crashing_silent_garbage_or_hanging_scanner_is_a_named_failure() {
    let d = tempdir();
    for (mode, kind, words) in [
        ("crash", "crashed", "out of memory"),
        ("silent-fail", "crashed", "no output"),
        ("garbage", "garbage", "everything looks fine"),
        ("hang", "timeout", "stand-in"),
    ] {
        let (c, r, err) = scan(d.path(), &batch(mode, "", "timeout = 2"));
        assert_eq!(c, 3, "{mode}: {err}");
        assert_eq!(r["failure"]["kind"], kind, "{mode}: {}", r["failure"]);
        let text = r["failure"].to_string();
        assert!(text.contains(words), "{mode}: {text}");
        assert_eq!(r["failure"]["system"], "stand-in", "{mode}");
    }
    // per-entry mode: a scanner that dies mid-stream is named too
    let (c, r, err) = scan(d.path(), &lines(", \"5\""));
    assert_eq!(c, 3, "{err}");
    assert_eq!(r["failure"]["kind"], "crashed");
    assert!(
        r["failure"]["detail"]
            .as_str()
            .unwrap()
            .contains("no answer line"),
        "{}",
        r["failure"]
    );
}

#[test]
fn a_scanner_without_configuration_or_with_a_bad_filter_is_bad_input() {
    let d = tempdir();
    std::fs::write(
        d.path().join("evalgate.toml"),
        "detectors = [\"scanner\"]\n",
    )
    .unwrap();
    let o = evalgate(d.path(), &["security", "--no-baseline"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("[[scanner]]"), "{}", stderr(&o));
    let (c, _, err) = scan(
        d.path(),
        "name = \"x\"\ncommand = [\"true\", \"{file}\"]\nfilter = '.results[] | {'\n",
    );
    assert_eq!(c, 2);
    assert!(err.contains("jq filter"), "{err}");
}

#[test]
fn a_real_scanner_from_pypi_runs_offline_as_a_detector() {
    // mcp-guard-audit 0.13.1, installed pinned by tests/setup-mcp-servers.sh; the configuration
    // is the worked example in docs/systems-under-test.md
    let bin = real_server("scanners/bin/mcp-guard");
    let table = format!(
        "name = \"mcp-guard\"\ncommand = [{:?}, \"inspect\", \"{{file}}\", \"--format\", \"json\"]\nfilter = '''[ .[] | select(.kind == \"tool\")\n  | {{ tool: .name,\n      flagged: any(.findings[]; .category == \"tool-poisoning\"),\n      severity: .risk,\n      reason: ([.findings[] | \"\\(.category) [\\(.risk)]: \\(.evidence)\"] | join(\"; \")) }} ]'''\ntimeout = 120\n",
        bin.to_string_lossy()
    );
    let d = tempdir();
    let (c, r, err) = scan(d.path(), &table);
    assert_eq!(c, 0, "{err}");
    let recall = metric(&r, "recall");
    let fpr = metric(&r, "fpr");
    // a real scanner: it catches some attacks and not all, and flags few benign tools
    assert!(recall > 0.2 && recall < 1.0, "recall {recall}");
    assert!(fpr < 0.5, "fpr {fpr}");
    let hits = flagged(&r);
    assert!(
        hits.iter().any(|(id, f)| id == "tp-001" && *f),
        "the blatant <IMPORTANT> attack"
    );
    // the scanner's own words reach the report as signals
    let entries = r["security"]["detectors"][0]["entries"].as_array().unwrap();
    let tp1 = entries.iter().find(|e| e["id"] == "tp-001").unwrap();
    assert!(
        tp1["signals"].to_string().contains("tool-poisoning"),
        "{}",
        tp1["signals"]
    );
    // and it is deterministic: a second run flags the same entries
    let (_, again, _) = scan(d.path(), &table);
    assert_eq!(flagged(&again), hits);
}
