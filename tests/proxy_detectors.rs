//! Detectors measured where they live, end to end through a launched proxy (evalgate's reference
//! proxy, a real child process serving mcpproxy's HTTP surface over real replay servers):
//! the proxy's own scan (`proxy-scan`) and rug-pulls played live (`rug-pull-live`). The proofs:
//! each agrees entry by entry with the same detector run in-process, and a proxy in `log` mode
//! shows detection without blocking.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Runs `evalgate security` (shipped v1 datasets unless `v0`) and returns exit code, report, stderr.
fn security(dir: &Path, v0: bool, args: &[&str], toml: &str) -> (i32, Value, String) {
    std::fs::write(dir.join("evalgate.toml"), toml).unwrap();
    let mut all = vec![
        "security",
        "--sut",
        "reference",
        "--no-baseline",
        "--out",
        "r",
    ];
    all.extend_from_slice(args);
    let o = if v0 {
        evalgate(dir, &all)
    } else {
        evalgate_default(dir, &all)
    };
    let report = std::fs::read_to_string(dir.join("r/report.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (code(&o), report, stderr(&o))
}

fn detector<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["security"]["detectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["detector"] == name)
        .unwrap_or_else(|| panic!("no detector {name} in the report"))
}

/// Entry id → runs flagged.
fn flags(d: &Value) -> BTreeMap<String, u64> {
    d["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_string(),
                e["flagged_runs"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn live_entries(d: &Value) -> BTreeMap<String, Value> {
    d["live"]["entries"]
        .as_array()
        .expect("a live section")
        .iter()
        .map(|e| (e["id"].as_str().unwrap().to_string(), e.clone()))
        .collect()
}

#[test]
fn the_proxys_scan_path_flags_exactly_what_the_rules_flag_in_process_on_every_v1_entry() {
    let dir = tempdir();
    let (code, report, err) = security(
        dir.path(),
        false,
        &["--detectors", "rules,proxy-scan", "--runs", "1"],
        "",
    );
    assert_eq!(code, 0, "{err}");
    // every entry is served as a tool, in launches that keep entries that could see each
    // other apart (v1 declares no peers: nothing else is served)
    let served: usize = err
        .lines()
        .filter_map(|l| l.split_once("catalog ready (")?.1.split_once(" tools)"))
        .map(|(n, _)| n.parse::<usize>().unwrap())
        .sum();
    assert_eq!(served, 435, "every entry is served as a tool: {err}");
    assert!(err.contains("proxy-scan: launch 10/10"), "{err}");
    let rules = flags(detector(&report, "rules"));
    let scan = flags(detector(&report, "proxy-scan"));
    assert_eq!(rules.len(), 435);
    assert_eq!(
        rules, scan,
        "the scan path and the rules in-process disagree"
    );
    // and it found something: the proof is not two empty sets
    assert!(scan.values().filter(|f| **f > 0).count() >= 80);
    assert_eq!(
        detector(&report, "rules")["counts"],
        detector(&report, "proxy-scan")["counts"]
    );
}

#[test]
fn a_severity_threshold_above_every_finding_leaves_the_scan_path_flagging_nothing() {
    let dir = tempdir();
    let (code, report, err) = security(
        dir.path(),
        true,
        &["--detectors", "proxy-scan", "--runs", "1"],
        "[proxy_scan]\nseverity_threshold = \"critical\"\n",
    );
    assert_eq!(code, 0, "{err}");
    let d = detector(&report, "proxy-scan");
    assert_eq!(d["counts"]["tp"], 0, "the reference findings are `high`");
    assert_eq!(d["counts"]["fp"], 0);
    // an unknown scanner id is the proxy's 400, a named failure (exit 3), not "not flagged"
    let (code, report, err) = security(
        dir.path(),
        true,
        &["--detectors", "proxy-scan", "--runs", "1"],
        "[proxy_scan]\nscanner_ids = [\"no-such-scanner\"]\n",
    );
    assert_eq!(code, 3, "{err}");
    let failure = report["failure"].to_string();
    assert!(
        failure.contains("security scan of server") && failure.contains("400"),
        "{failure}"
    );
}

#[test]
fn rug_pulls_played_live_are_blocked_and_restored_exactly_where_drift_flags_them_in_process() {
    let dir = tempdir();
    let (code, report, err) = security(
        dir.path(),
        false,
        &["--detectors", "drift,rug-pull-live", "--runs", "1"],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let drift = flags(detector(&report, "drift"));
    let live_d = detector(&report, "rug-pull-live");
    let live = flags(live_d);
    assert_eq!(drift, live, "live blocking and drift in-process disagree");
    let played = live_entries(live_d);
    // every rug pull of v1 and every hard negative resembling one is played
    let security = shipped_v1_security();
    let with_defs: Vec<&Value> = security["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e.get("before").is_some() && e.get("after").is_some())
        .collect();
    assert!(with_defs.len() >= 90, "{}", with_defs.len());
    assert_eq!(played.len(), with_defs.len());
    let mut reported = 0;
    for (id, e) in &played {
        assert_eq!(e["relisted_runs"], 1, "{id}: {e}");
        assert_eq!(e["baseline_ok_runs"], 1, "{id}: {e}");
        // in block mode a reported change is a refused call, and putting it back restores it
        assert_eq!(e["reported_runs"], e["blocked_runs"], "{id}: {e}");
        assert_eq!(e["restored_runs"], 1, "{id}: {e}");
        if e["reported_runs"] == 1 {
            reported += 1;
            let signals = e["signals"].to_string();
            assert!(
                signals.contains("status:changed") && signals.contains("changed:"),
                "{id}: {signals}"
            );
        }
    }
    assert!(reported >= 60, "{reported}");
    // per category in every report
    let md = std::fs::read_to_string(dir.path().join("r/report.md")).unwrap();
    assert!(md.contains("rug-pulls played live"), "{md}");
    assert!(md.contains("| rug_pull | 60 | 60 | 60 | 60 |"), "{md}");
    let html = std::fs::read_to_string(dir.path().join("r/report.html")).unwrap();
    assert!(html.contains("Rug-pulls played live"));
}

fn shipped_v1_security() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(root().join("datasets/v1/security.json")).unwrap(),
    )
    .unwrap()
}

#[test]
fn a_proxy_in_log_mode_shows_the_change_without_blocking_the_call() {
    let dir = tempdir();
    let (code, report, err) = security(
        dir.path(),
        true,
        &["--detectors", "drift,rug-pull-live", "--runs", "2"],
        "[sut.launch]\nproxy_config = { on_tool_drift = \"log\" }\n",
    );
    assert_eq!(code, 0, "{err}");
    let d = detector(&report, "rug-pull-live");
    assert_eq!(flags(d), flags(detector(&report, "drift")));
    let rug = d["live"]["per_category"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "rug_pull")
        .unwrap();
    assert_eq!(rug["played"], 14);
    assert_eq!(rug["reported"], 28, "detected in both runs: {rug}");
    assert_eq!(rug["blocked"], 0, "log mode never blocks: {rug}");
    assert_eq!(rug["detection_rate"]["mean"], 1.0);
    assert_eq!(rug["block_rate"]["mean"], 0.0);
    let md = std::fs::read_to_string(dir.path().join("r/report.md")).unwrap();
    // counts are per-run means (28 over 2 runs), beside the entries played in each run:
    // played, re-listed, reported, blocked, restored
    assert!(md.contains("| rug_pull | 14 | 14 | 14 | 0 | 14 |"), "{md}");
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs --features fault-injection"
)]
fn a_proxy_that_never_relists_has_missed_every_rug_pull_and_says_why() {
    let dir = tempdir();
    std::fs::write(
        dir.path().join("evalgate.toml"),
        "[rug_pull_live]\nrelist_timeout = 1\n",
    )
    .unwrap();
    let o = evalgate_env(
        dir.path(),
        &[
            "security",
            "--sut",
            "reference",
            "--no-baseline",
            "--out",
            "r",
            "--detectors",
            "rug-pull-live",
            "--runs",
            "1",
        ],
        &[("EVALGATE_PROXY_FAULT", "ignore-list-changed")],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let report = read_json(&dir.path().join("r/report.json"));
    let d = detector(&report, "rug-pull-live");
    assert_eq!(d["counts"]["tp"], 0);
    for (id, e) in live_entries(d) {
        assert_eq!(e["relisted_runs"], 0, "{id}");
        assert_eq!(e["reported_runs"], 0, "{id}");
        let note = e["note"].as_str().unwrap_or("");
        assert!(note.contains("never re-listed server"), "{id}: {note}");
    }
}

/// mcpproxy's scan status `cancelled` is final: evalgate names it at once instead of polling
/// until `scan_timeout` (the reference proxy cancels every scan under this fault).
#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs --features fault-injection"
)]
fn a_cancelled_scan_is_a_named_failure_at_once_not_a_wait_for_the_timeout() {
    let d = tempdir();
    std::fs::write(
        d.path().join("evalgate.toml"),
        "[proxy_scan]\nscan_timeout = 60\n",
    )
    .unwrap();
    let start = std::time::Instant::now();
    let o = evalgate_env(
        d.path(),
        &[
            "security",
            "--sut",
            "reference",
            "--detectors",
            "proxy-scan",
            "--no-baseline",
            "--out",
            "r",
        ],
        &[("EVALGATE_PROXY_FAULT", "cancel-scans")],
    );
    let took = start.elapsed();
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let r = read_json(&d.path().join("r/report.json"));
    let detail = r["failure"].to_string();
    assert!(detail.contains("cancelled"), "{detail}");
    assert!(
        took < std::time::Duration::from_secs(40),
        "waited {took:?}, as if the cancelled scan might still complete"
    );
}
