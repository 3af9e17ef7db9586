//! End-to-end tests: the real binary, real files, real exit codes.

mod common;
use common::*;
use serde_json::{Value, json};

#[test]
fn zero_config_run_passes_on_the_shipped_baseline_and_writes_every_report() {
    let d = tempdir();
    let o = evalgate_default(d.path(), &["run"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    for m in [
        "Recall@5",
        "MRR",
        "nDCG@10",
        "MAP",
        "rules",
        "drift",
        "verdict: pass",
    ] {
        assert!(out.contains(m), "terminal table lacks {m}: {out}");
    }
    let dir = d.path().join("evalgate-report");
    for f in ["report.json", "report.md", "report.html"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let r = read_json(&dir.join("report.json"));
    assert_eq!(r["gate"]["verdict"], "pass");
    assert_eq!(r["gate"]["baseline"], "embedded:baselines/default.json");
    assert!(
        r["retrieval"]["metrics"]["recall_at_5"]["mean"]
            .as_f64()
            .unwrap()
            > 0.3
    );
    assert!(r["retrieval"]["queries"].as_u64().unwrap() >= 60);
    // no leftover temporary files
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn sc007_an_unchanged_system_reproduces_its_baseline_over_repeated_runs() {
    let d = tempdir();
    let b = baseline_copy(d.path());
    let b = b.to_str().unwrap();
    let mut means = Vec::new();
    for out in ["a", "b"] {
        let o = evalgate(
            d.path(),
            &["run", "--runs", "3", "--baseline", b, "--out", out, "-q"],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let r = read_json(&d.path().join(out).join("report.json"));
        for c in r["gate"]["checks"].as_array().unwrap() {
            if let Some(delta) = c["delta"].as_f64() {
                assert!(
                    delta.abs() < 1e-6,
                    "{} {} moved by {delta}",
                    c["subject"],
                    c["metric"]
                );
            }
        }
        // no query moved: nothing to test, p = 1, nothing significant
        let paired: Vec<&Value> = r["gate"]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c.get("paired"))
            .collect();
        assert_eq!(paired.len(), 3, "{}", r["gate"]);
        for p in paired {
            assert_eq!(p["p_value"], 1.0, "{p}");
            assert_eq!((&p["worse"], &p["better"]), (&json!(0), &json!(0)), "{p}");
            assert_eq!(p["significant"], false, "{p}");
            assert_eq!(p["delta_ci95"], json!([0.0, 0.0]), "{p}");
        }
        assert!(r["gate"].get("improved_queries").is_none());
        let m = &r["retrieval"]["metrics"]["ndcg_at_10"];
        assert_eq!(m["per_run"].as_array().unwrap().len(), 3);
        assert_eq!(m["sd"].as_f64(), Some(0.0));
        means.push(r["retrieval"]["metrics"].clone());
    }
    assert_eq!(means[0], means[1]);
}

fn blank_descriptions() -> Value {
    let mut c = shipped("corpus.json");
    for t in c["tools"].as_array_mut().unwrap() {
        t["description"] = json!("");
    }
    c
}

#[test]
fn sc003_a_degraded_index_lowers_the_scores_and_fails_the_gate_naming_the_metrics() {
    let d = tempdir();
    let corpus = write_json(d.path(), "corpus.json", &blank_descriptions());
    let b = baseline_copy(d.path());
    let o = evalgate(
        d.path(),
        &[
            "retrieval",
            "--corpus",
            corpus.to_str().unwrap(),
            "--baseline",
            b.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    // named in words, before the tables
    assert!(
        out.starts_with("evalgate: fail — gate failed: 3 checks\n"),
        "{out}"
    );
    for m in ["Recall@5", "MRR", "nDCG@10"] {
        assert!(
            out.contains(&format!("  ✗ {m} fell ")),
            "{m} not named: {out}"
        );
    }
    assert!(
        stderr(&o).contains("changed since the baseline"),
        "content change not warned: {}",
        stderr(&o)
    );
    let r = read_json(&d.path().join("evalgate-report/report.json"));
    assert_eq!(r["gate"]["verdict"], "fail");
    let base = read_json(&b);
    for m in ["recall_at_5", "mrr", "ndcg_at_10"] {
        let cur = r["retrieval"]["metrics"][m]["mean"].as_f64().unwrap();
        let was = base["retrieval"]["metrics"][m]["value"].as_f64().unwrap();
        assert!(cur < was - 0.05, "{m}: {cur} not clearly below {was}");
    }
    // each gated metric's paired comparison with the baseline's per-query values: the worse
    // queries counted as the test counts them, significant, its interval below 0
    for m in ["recall_at_5", "mrr", "ndcg_at_10"] {
        let c = r["gate"]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["subject"] == "retrieval" && c["metric"] == m)
            .unwrap();
        let p = &c["paired"];
        let (mut worse, mut better, mut paired) = (0, 0, 0);
        for q in r["retrieval"]["per_query"].as_array().unwrap() {
            let Some(was) = base["retrieval"]["per_query"][q["id"].as_str().unwrap()][m].as_f64()
            else {
                continue;
            };
            let d = q["metrics"][m].as_f64().unwrap() - was;
            paired += 1;
            worse += usize::from(d < -1e-6);
            better += usize::from(d > 1e-6);
        }
        assert_eq!(p["queries"], paired, "{m}: {p}");
        assert_eq!(p["worse"], worse, "{m}: {p}");
        assert_eq!(p["better"], better, "{m}: {p}");
        assert!(worse > better && paired > 100, "{m}: {p}");
        assert_eq!(p["method"], "monte_carlo", "{m}: {p}");
        assert!(p["p_value"].as_f64().unwrap() < 0.05, "{m}: {p}");
        assert!(p["p_holm"].as_f64().unwrap() < 0.05, "{m}: {p}");
        assert_eq!(p["significant"], true, "{m}: {p}");
        let ci = p["delta_ci95"].as_array().unwrap();
        let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        let mean = p["mean_delta"].as_f64().unwrap();
        assert!(lo <= mean && mean <= hi && hi < 0.0, "{m}: {p}");
        assert!(
            c["message"]
                .as_str()
                .unwrap()
                .contains("significant at α = 0.05 (p "),
            "{m}: {}",
            c["message"]
        );
    }
    assert_eq!(
        r["gate"]["significance"],
        json!({"alpha": 0.05, "required": false})
    );
    let md = std::fs::read_to_string(d.path().join("evalgate-report/report.md")).unwrap();
    assert!(
        md.contains("❌ fail")
            && (md.contains("Most regressed queries")
                || md.contains("Queries that changed most (worse first, then better)"))
            && md.contains("(significant) · CI \u{2212}"),
        "{md}"
    );
}

fn recorded_detector(dir: &std::path::Path, flag: bool) -> std::path::PathBuf {
    let sec = shipped("security.json");
    let verdicts: Vec<Value> = sec["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| json!({"entry_id": e["id"], "flagged": flag}))
        .collect();
    let obs = json!({"security": {"observations": [{"detector": "rules", "runs": [{"run": 1, "verdicts": verdicts}]}]}});
    write_json(dir, if flag { "all.json" } else { "none.json" }, &obs)
}

#[test]
fn sc004_a_detector_flagging_everything_breaks_its_fpr_ceiling_and_one_flagging_nothing_its_recall_floor()
 {
    let d = tempdir();
    let b = baseline_copy(d.path());
    let all = recorded_detector(d.path(), true);
    let o = evalgate(
        d.path(),
        &[
            "security",
            "--detectors",
            "recorded",
            "--recorded",
            all.to_str().unwrap(),
            "--baseline",
            b.to_str().unwrap(),
            "--out",
            "all",
        ],
    );
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let r = read_json(&d.path().join("all/report.json"));
    let det = &r["security"]["detectors"][0];
    assert_eq!(det["metrics"]["fpr"]["mean"].as_f64(), Some(1.0));
    assert_eq!(det["metrics"]["recall"]["mean"].as_f64(), Some(1.0));
    let failed: Vec<&Value> = r["gate"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .collect();
    assert!(
        failed
            .iter()
            .any(|c| c["metric"] == "fpr" && c["kind"] == "ceiling"),
        "{failed:?}"
    );
    assert!(stdout(&o).contains("above its ceiling"), "{}", stdout(&o));

    let none = recorded_detector(d.path(), false);
    let o = evalgate(
        d.path(),
        &[
            "security",
            "--detectors",
            "recorded",
            "--recorded",
            none.to_str().unwrap(),
            "--baseline",
            b.to_str().unwrap(),
            "--out",
            "none",
        ],
    );
    assert_eq!(code(&o), 1);
    let r = read_json(&d.path().join("none/report.json"));
    let det = &r["security"]["detectors"][0];
    assert_eq!(det["metrics"]["recall"]["mean"].as_f64(), Some(0.0));
    assert!(
        det["metrics"]["precision"]["mean"].is_null(),
        "precision 0/0 must be undefined"
    );
    let failed: Vec<&Value> = r["gate"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .collect();
    assert!(
        failed
            .iter()
            .any(|c| c["metric"] == "recall" && c["kind"] == "floor"),
        "{failed:?}"
    );
    // the undefined precision is shown as "–", never as 0
    let md = std::fs::read_to_string(d.path().join("none/report.md")).unwrap();
    assert!(
        md.contains("| `rules` (evalgate's reference checker) | all | – |"),
        "{md}"
    );
}

#[test]
fn a_report_re_scored_offline_gives_the_same_numbers() {
    let d = tempdir();
    let o = evalgate(d.path(), &["run", "--runs", "2", "--out", "live", "-q"]);
    assert_eq!(code(&o), 0);
    let rep = d.path().join("live/report.json");
    let o = evalgate(
        d.path(),
        &[
            "run",
            "--retriever",
            "recorded",
            "--detectors",
            "recorded",
            "--recorded",
            rep.to_str().unwrap(),
            "--runs",
            "2",
            "--out",
            "replay",
            "-q",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let a = read_json(&rep);
    let b = read_json(&d.path().join("replay/report.json"));
    assert_eq!(a["retrieval"]["metrics"], b["retrieval"]["metrics"]);
    for (x, y) in a["security"]["detectors"]
        .as_array()
        .unwrap()
        .iter()
        .zip(b["security"]["detectors"].as_array().unwrap())
    {
        assert_eq!(x["detector"], y["detector"]);
        assert_eq!(x["counts"], y["counts"]);
        assert_eq!(x["scope"], y["scope"]);
    }
    assert_eq!(b["retrieval"]["diagnostics"]["unstable_queries"], 0);

    // a system answering one query differently in its second run is flagged in every report
    let mut flaky = a.clone();
    let q = &mut flaky["retrieval"]["observations"]["runs"][1]["queries"][0]["ranked"];
    let mut reversed = q.as_array().unwrap().clone();
    reversed.reverse();
    *q = Value::Array(reversed);
    let path = write_json(d.path(), "flaky.json", &flaky);
    let o = evalgate(
        d.path(),
        &[
            "retrieval",
            "--retriever",
            "recorded",
            "--recorded",
            path.to_str().unwrap(),
            "--runs",
            "2",
            "--no-baseline",
            "--out",
            "flaky",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("scored differently across runs: 1"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("warning: 1 of 109 queries scored differently in different runs"),
        "{}",
        stderr(&o)
    );
    let c = read_json(&d.path().join("flaky/report.json"));
    assert_eq!(c["retrieval"]["diagnostics"]["unstable_queries"], 1);
    let md = std::fs::read_to_string(d.path().join("flaky/report.md")).unwrap();
    assert!(md.contains("scored differently across runs: 1"), "{md}");
}

#[test]
fn no_baseline_means_report_only_and_says_so() {
    let d = tempdir();
    let o = evalgate(d.path(), &["run", "--no-baseline"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("no baseline"), "{}", stdout(&o));
    let r = read_json(&d.path().join("evalgate-report/report.json"));
    assert_eq!(r["gate"]["verdict"], "no_baseline");
    assert!(
        r["gate"]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] == "info")
    );
}

#[test]
fn a_baseline_for_other_datasets_is_refused_when_named_and_ignored_when_implicit() {
    let d = tempdir();
    let mut c = shipped("corpus.json");
    c["version"] = json!("corpus_vX");
    let mut g = shipped("golden.json");
    g["corpus_version"] = json!("corpus_vX");
    let cp = write_json(d.path(), "c.json", &c);
    let gp = write_json(d.path(), "g.json", &g);
    let b = baseline_copy(d.path());
    let o = evalgate(
        d.path(),
        &[
            "retrieval",
            "--corpus",
            cp.to_str().unwrap(),
            "--golden",
            gp.to_str().unwrap(),
            "--baseline",
            b.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("does not match the datasets") && stderr(&o).contains("corpus_vX"),
        "{}",
        stderr(&o)
    );
    assert!(!d.path().join("evalgate-report").exists());
    // implicit: baselines/default.json in the working directory
    std::fs::create_dir(d.path().join("baselines")).unwrap();
    std::fs::copy(&b, d.path().join("baselines/default.json")).unwrap();
    let o = evalgate(
        d.path(),
        &[
            "retrieval",
            "--corpus",
            cp.to_str().unwrap(),
            "--golden",
            gp.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("running without a baseline"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn baseline_update_prints_every_change_keeps_thresholds_and_is_idempotent() {
    let d = tempdir();
    let b = baseline_copy(d.path());
    // hand-tuned thresholds must survive an update
    let mut v = read_json(&b);
    v["retrieval"]["metrics"]["map"]["gated"] = json!(true);
    v["retrieval"]["metrics"]["map"]["tolerance"] = json!(0.123);
    v["retrieval"]["metrics"]["mrr"]["value"] = json!(0.01);
    v["security"]["detectors"]["rules"]["fpr_ceiling"] = json!(0.2);
    write_json(d.path(), "baseline.json", &v);
    let o = evalgate(
        d.path(),
        &["baseline", "update", "--output", b.to_str().unwrap(), "-q"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("retrieval.mrr: 0.0100 →"), "{out}");
    assert!(out.contains("wrote"), "{out}");
    let n = read_json(&b);
    assert_eq!(n["retrieval"]["metrics"]["map"]["gated"], json!(true));
    assert_eq!(n["retrieval"]["metrics"]["map"]["tolerance"], json!(0.123));
    assert_eq!(
        n["security"]["detectors"]["rules"]["fpr_ceiling"],
        json!(0.2)
    );
    assert_ne!(n["retrieval"]["metrics"]["mrr"]["value"], json!(0.01));
    let o = evalgate(
        d.path(),
        &["baseline", "update", "--output", b.to_str().unwrap(), "-q"],
    );
    assert!(stdout(&o).contains("unchanged"), "{}", stdout(&o));
    // written to another file, the thresholds still come from the baseline in use
    let other = d.path().join("other.json");
    let o = evalgate(
        d.path(),
        &[
            "baseline",
            "update",
            "--baseline",
            b.to_str().unwrap(),
            "--output",
            other.to_str().unwrap(),
            "-q",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let n = read_json(&other);
    assert_eq!(n["retrieval"]["metrics"]["map"]["tolerance"], json!(0.123));
    assert_eq!(
        n["security"]["detectors"]["rules"]["fpr_ceiling"],
        json!(0.2)
    );
    // --dry-run writes nothing
    let fresh = d.path().join("new.json");
    let o = evalgate(
        d.path(),
        &[
            "baseline",
            "update",
            "--output",
            fresh.to_str().unwrap(),
            "--dry-run",
            "-q",
        ],
    );
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("new baseline file") && !fresh.exists());
}

#[test]
fn the_shipped_baseline_matches_a_fresh_measurement() {
    // the committed baseline is what the shipped system measures (no hand-edited values)
    let d = tempdir();
    let b = baseline_copy(d.path());
    let o = evalgate(
        d.path(),
        &[
            "baseline",
            "update",
            "--output",
            b.to_str().unwrap(),
            "--dry-run",
            "-q",
        ],
    );
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).contains("unchanged"),
        "baselines/default.json is stale:\n{}",
        stdout(&o)
    );
}

#[test]
fn validate_accepts_the_shipped_datasets() {
    let d = tempdir();
    for v in ["v0", "v1"] {
        let dir = root().join("datasets").join(v);
        let o = evalgate(
            d.path(),
            &[
                "validate",
                "--profile",
                "strict",
                "--datasets",
                dir.to_str().unwrap(),
            ],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.contains(&format!("corpus_{v}"))
                && out.contains(&format!("golden_{v}"))
                && out.contains(&format!("security_{v}")),
            "{out}"
        );
        assert!(stderr(&o).contains("profile strict"), "{}", stderr(&o));
    }
}

#[test]
fn spec065_files_load_unchanged() {
    let f = root().join("tests/fixtures/spec065");
    let d = tempdir();
    let o = evalgate(
        d.path(),
        &[
            "run",
            "--corpus",
            f.join("corpus_v1.json").to_str().unwrap(),
            "--golden",
            f.join("retrieval_golden_v1.json").to_str().unwrap(),
            "--security-corpus",
            f.join("security_corpus_v1.json").to_str().unwrap(),
            "-q",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = read_json(&d.path().join("evalgate-report/report.json"));
    assert_eq!(r["gate"]["verdict"], "no_baseline");
    assert_eq!(r["retrieval"]["queries"], 3);
    // the first query's tool is found first
    assert_eq!(
        r["retrieval"]["per_query"][0]["metrics"]["mrr"].as_f64(),
        Some(1.0)
    );
    // no `resembles` on its hard negatives: a warning, not an error
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("resembles"))
    );
}

/// mcpproxy's mcp-eval baseline was measured on its own 45-tool corpus, which is also named
/// `corpus_v1`: against evalgate's v1 datasets it is refused (exit 2) by its security corpus's
/// version, never a gate failure of numbers from another corpus.
#[test]
fn an_mcp_eval_baseline_of_other_datasets_is_refused_not_gated() {
    let f = root().join("tests/fixtures/spec065-v0.60.0/baseline_v1.json");
    let d = tempdir();
    let o = evalgate_default(d.path(), &["run", "--baseline", f.to_str().unwrap(), "-q"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(r#"security: baseline measured on "v1", this run uses "security_v1""#),
        "{}",
        stderr(&o)
    );
    assert!(!d.path().join("evalgate-report/report.json").exists());
}

/// mcpproxy's own spec-065 files at v0.60.0, with its own mcp-eval baseline, as its users would
/// run them: exit 0. The default `drift` detector judges no entry of them (0/0), which is not a
/// regression; the baseline's limits for `sensitive-data`, which did not run, are named.
#[test]
fn spec065_files_and_their_own_baseline_pass_and_undefined_is_not_worse() {
    let f = root().join("tests/fixtures/spec065-v0.60.0");
    let d = tempdir();
    let o = evalgate(
        d.path(),
        &[
            "run",
            "--datasets",
            f.to_str().unwrap(),
            "--baseline",
            f.join("baseline_v1.json").to_str().unwrap(),
            "-q",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = read_json(&d.path().join("evalgate-report/report.json"));
    assert_eq!(r["gate"]["verdict"], "pass", "{}", r["gate"]);
    let checks = r["gate"]["checks"].as_array().unwrap();
    let of = |subject: &str| -> Vec<&Value> {
        checks.iter().filter(|c| c["subject"] == subject).collect()
    };
    let drift = of("detector:drift");
    assert!(!drift.is_empty());
    assert!(drift.iter().all(|c| c["status"] == "info"), "{drift:?}");
    assert!(
        drift.iter().any(|c| c["message"]
            .as_str()
            .unwrap()
            .starts_with("FPR is undefined (0/0)")),
        "{drift:?}"
    );
    let sd = of("detector:sensitive-data");
    assert_eq!(sd.len(), 2, "{sd:?}");
    assert!(sd.iter().all(|c| {
        c["message"]
            .as_str()
            .unwrap()
            .ends_with("sensitive-data did not run in this measurement")
    }));
    assert!(
        r["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("detector \"drift\", and it judged no entry")),
        "{}",
        r["warnings"]
    );
}

#[test]
fn help_explains_commands_and_exit_codes() {
    let d = tempdir();
    let o = evalgate(d.path(), &["--help"]);
    assert_eq!(code(&o), 0);
    let h = stdout(&o);
    for s in [
        "run",
        "retrieval",
        "security",
        "validate",
        "baseline",
        "Exit codes",
        "3  the system under test",
    ] {
        assert!(h.contains(s), "help lacks {s}");
    }
    let o = evalgate(d.path(), &["run", "--runs", "0"]);
    assert_eq!(code(&o), 2);
    let o = evalgate(d.path(), &["frobnicate"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn a_system_that_cannot_answer_is_exit_3_with_a_partial_report() {
    let d = tempdir();
    // a recording that lacks most queries: the recorded system cannot answer them
    let golden = shipped("golden.json");
    let q0 = golden["queries"][0]["id"].as_str().unwrap().to_string();
    let rec = write_json(
        d.path(),
        "rec.json",
        &json!({ q0.clone(): ["filesystem:read_text_file"] }),
    );
    let o = evalgate(
        d.path(),
        &[
            "run",
            "--retriever",
            "recorded",
            "--recorded",
            rec.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 3, "{}{}", stdout(&o), stderr(&o));
    let r = read_json(&d.path().join("evalgate-report/report.json"));
    assert_eq!(r["gate"]["verdict"], "error");
    assert_eq!(r["failure"]["kind"], "missing");
    assert_eq!(
        r["retrieval"]["observations"]["runs"][0]["queries"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(
        stdout(&o).contains("\n  system under test failed: "),
        "{}",
        stdout(&o)
    );
}

/// The scorecard (docs/scorecard.md): `baseline update` stores it; a run against that baseline
/// shows Δ 0 for an unchanged system and a lower discovery and total for a degraded index; an
/// older baseline without one shows Δ "—".
#[test]
fn the_scorecard_is_stored_in_the_baseline_and_a_degraded_index_lowers_it() {
    let d = tempdir();
    let run = |args: &[&str]| {
        let o = evalgate(d.path(), args);
        assert!([0, 1].contains(&code(&o)), "{}{}", stdout(&o), stderr(&o));
        o
    };
    run(&["run", "--no-baseline", "--out", "first", "-q"]);
    let first = read_json(&d.path().join("first/report.json"));
    let sc = &first["scorecard"];
    assert_eq!(sc["rubric"], 1, "{sc}");
    let names: Vec<&str> = sc["dimensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "discovery",
            "robustness",
            "security",
            "performance",
            "transparency"
        ]
    );
    let dim = |r: &Value, n: &str| -> Option<f64> {
        r["scorecard"]["dimensions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .unwrap()["score"]
            .as_f64()
    };
    // discovery is the mean of Recall@5, MRR and nDCG@10, times 30, one decimal
    let m = |k: &str| first["retrieval"]["metrics"][k]["mean"].as_f64().unwrap();
    let want = ((m("recall_at_5") + m("mrr") + m("ndcg_at_10")) / 3.0 * 300.0).round() / 10.0;
    assert_eq!(dim(&first, "discovery"), Some(want));
    assert!(sc["total"].as_f64().unwrap() > 0.0, "{sc}");

    // the baseline keeps it
    let o = run(&[
        "baseline",
        "update",
        "--from",
        "first/report.json",
        "--output",
        "b.json",
    ]);
    assert!(stdout(&o).contains("scorecard"), "{}", stdout(&o));
    let b = read_json(&d.path().join("b.json"));
    assert_eq!(b["scorecard"]["total"], sc["total"], "{}", b["scorecard"]);

    // unchanged: Δ 0 where nothing but latency can move
    run(&["run", "--baseline", "b.json", "--out", "same", "-q"]);
    let same = read_json(&d.path().join("same/report.json"));
    assert_eq!(same["scorecard"]["baseline"]["total"], sc["total"]);
    assert_eq!(dim(&same, "discovery"), dim(&first, "discovery"));
    assert_eq!(dim(&same, "security"), dim(&first, "security"));
    let md = std::fs::read_to_string(d.path().join("same/report.md")).unwrap();
    let line = md.lines().find(|l| l.starts_with("Scorecard ")).unwrap();
    assert!(
        line.contains(" vs baseline)") && line.contains("not gated"),
        "{line}"
    );
    let perf = |r: &Value| dim(r, "performance");
    if perf(&same) == perf(&first) {
        assert!(line.contains("(Δ 0 vs baseline)"), "{line}");
    }

    // a measured baseline has no robustness points (`baseline update` runs without the
    // probes): Δ compares the dimensions both measured, so it is 0 again, not the difference
    // of totals over different dimensions
    run(&["baseline", "update", "--output", "measured.json", "-q"]);
    run(&[
        "run",
        "--baseline",
        "measured.json",
        "--out",
        "vs-measured",
        "-q",
    ]);
    let vm = read_json(&d.path().join("vs-measured/report.json"));
    assert!(vm["scorecard"]["baseline"]["dimensions"]["robustness"].is_null());
    assert!(dim(&vm, "robustness").is_some(), "{}", vm["scorecard"]);
    let md = std::fs::read_to_string(d.path().join("vs-measured/report.md")).unwrap();
    let line = md.lines().find(|l| l.starts_with("Scorecard ")).unwrap();
    assert!(
        line.contains(
            "vs baseline on discovery, security, performance: the dimensions both measured)"
        ),
        "{line}"
    );
    let then = vm["scorecard"]["baseline"]["dimensions"]["performance"].as_f64();
    if perf(&vm) == then {
        assert!(line.contains("(Δ 0 vs baseline on "), "{line}");
    }

    // a degraded index: discovery and the total fall, and the line says so
    let corpus = write_json(d.path(), "corpus.json", &blank_descriptions());
    run(&[
        "run",
        "--corpus",
        corpus.to_str().unwrap(),
        "--baseline",
        "b.json",
        "--out",
        "worse",
        "-q",
    ]);
    let worse = read_json(&d.path().join("worse/report.json"));
    assert!(
        dim(&worse, "discovery").unwrap() < dim(&first, "discovery").unwrap() - 1.0,
        "{}",
        worse["scorecard"]
    );
    let total = |r: &Value| r["scorecard"]["total"].as_f64().unwrap();
    assert!(total(&worse) < total(&first), "{}", worse["scorecard"]);
    let md = std::fs::read_to_string(d.path().join("worse/report.md")).unwrap();
    let line = md.lines().find(|l| l.starts_with("Scorecard ")).unwrap();
    assert!(line.contains("(Δ \u{2212}"), "{line}");

    // a baseline written before the scorecard: Δ "—"
    let mut before = read_json(&baseline_copy(d.path()));
    before.as_object_mut().unwrap().remove("scorecard");
    let old = write_json(d.path(), "old.json", &before);
    let o = run(&["run", "--baseline", old.to_str().unwrap(), "--out", "old"]);
    assert!(stdout(&o).contains("(Δ — vs baseline)"), "{}", stdout(&o));
    let oldr = read_json(&d.path().join("old/report.json"));
    assert!(oldr["scorecard"].get("baseline").is_none());
}
