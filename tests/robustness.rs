//! Robustness probes of the system under test, end to end: the reference proxy launched over
//! replay servers is asked odd queries and limits after the measured runs; each probe is
//! recorded, shown in every report, and fails the gate only when asked to.

mod common;

use common::*;
use serde_json::Value;

fn probes(report: &Value) -> Vec<(String, String, String)> {
    report["robustness"]["probes"]
        .as_array()
        .expect("a robustness section")
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap().to_string(),
                p["outcome"].as_str().unwrap().to_string(),
                p["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_reference_proxy_answers_or_refuses_every_probe_and_survives_them() {
    let dir = tempdir();
    let o = evalgate(
        dir.path(),
        &[
            "run",
            "--sut",
            "reference",
            "--no-baseline",
            "--robustness",
            "gate",
            "--out",
            "r",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let report = read_json(&dir.path().join("r/report.json"));
    let got = probes(&report);
    assert_eq!(got.len(), 11);
    for (id, outcome, detail) in &got {
        assert!(
            outcome == "answered" || outcome == "refused",
            "{id}: {outcome} ({detail})"
        );
    }
    let by_id = |id: &str| got.iter().find(|p| p.0 == id).unwrap().clone();
    // an empty query is refused with the proxy's own words, not a crash
    assert_eq!(by_id("empty").1, "refused");
    assert!(by_id("empty").2.contains("`query` is required"));
    assert_eq!(by_id("limit-1").2, "1 results");
    // over MCP an undeclared argument can be sent, so it is measured, not skipped
    assert_eq!(by_id("unknown-argument").1, "answered");
    assert_eq!(report["robustness"]["survived"], true);
    let check = report["gate"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["subject"] == "robustness")
        .expect("a gated robustness check");
    assert_eq!(check["status"], "pass");
    let md = std::fs::read_to_string(dir.path().join("r/report.md")).unwrap();
    assert!(md.contains("Robustness probes of reference-proxy: 0 failed (gated)"));
    assert!(md.contains("| 10 kB query | answered |"), "{md}");
    assert!(
        stdout(&o).contains("Robustness probes of reference-proxy: 0 failed (gated)"),
        "{}",
        stdout(&o)
    );
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs --features fault-injection"
)]
fn a_proxy_that_ignores_the_limit_fails_its_probe_and_the_gate_only_when_gated() {
    let dir = tempdir();
    let args = |mode: &'static str| {
        [
            "run",
            "--sut",
            "reference",
            "--no-baseline",
            "--robustness",
            mode,
            "--out",
            "r",
            "-q",
        ]
    };
    let fault = [("EVALGATE_PROXY_FAULT", "ignore-limit")];
    let o = evalgate_env(dir.path(), &args("report"), &fault);
    assert_eq!(code(&o), 0, "reported, not gated: {}", stderr(&o));
    let report = read_json(&dir.path().join("r/report.json"));
    let limit1 = probes(&report)
        .into_iter()
        .find(|p| p.0 == "limit-1")
        .unwrap();
    assert_eq!(limit1.1, "failed");
    assert!(limit1.2.contains("the limit was ignored"), "{}", limit1.2);
    assert_eq!(report["gate"]["verdict"], "no_baseline");

    let o = evalgate_env(dir.path(), &args("gate"), &fault);
    assert_eq!(code(&o), 1, "gated: {}", stderr(&o));
    let report = read_json(&dir.path().join("r/report.json"));
    assert_eq!(report["gate"]["verdict"], "fail");
    assert!(
        report["gate"]["summary"]
            .as_str()
            .unwrap()
            .contains("robustness: failed probes: "),
        "{}",
        report["gate"]["summary"]
    );
    let md = std::fs::read_to_string(dir.path().join("r/report.md")).unwrap();
    assert!(md.contains("| limit 1 | ❌ failed |"), "{md}");

    // and off means no probes at all
    let o = evalgate_env(dir.path(), &args("off"), &fault);
    assert_eq!(code(&o), 0);
    assert!(
        read_json(&dir.path().join("r/report.json"))
            .get("robustness")
            .is_none()
    );
}
