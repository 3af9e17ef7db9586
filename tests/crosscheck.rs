//! evalgate's numbers against the field's tools, installed pinned from PyPI by
//! tests/setup-mcp-servers.sh into target/mcp-servers/crosscheck (transitive pins in
//! tests/crosscheck.lock): trec_eval through pytrec-eval-terrier 0.5.11 (trec_eval bundled in its
//! wheel; pytrec-eval 0.5 downloads trec_eval's source from GitHub in its setup.py, which a
//! machine that reaches only the package registries cannot do) and ranx 0.3.21.
//!
//! The built-in retriever over the v1 datasets, the real binary, report.json: per query, every
//! metric equals trec_eval's and ranx's where the definitions agree (docs/metrics.md names the one
//! group that differs), and the paired test's p-values, for an unchanged retriever and a degraded
//! one (every 20th tool's description blanked), agree with ranx's Fisher randomization test
//! within the Monte-Carlo error of both.
//!
//! Like every dependency installed from a registry, a missing one fails the test
//! ([`installed_in`]): the setup installs it wherever the tests run.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// ranx's permutations: its default (1000) gives a standard error of 0.016 at p = 0.5; this many
/// bring it to 0.0022, below evalgate's own (10,000 draws: 0.005).
const RANX_PERMUTATIONS: usize = 100_000;
/// evalgate's Monte-Carlo draws (src/pipeline/gate/paired.rs).
const EVALGATE_PERMUTATIONS: f64 = 10_000.0;

/// evalgate's metric → trec_eval's measure.
const TREC: [(&str, &str); 7] = [
    ("recall_at_1", "recall_1"),
    ("recall_at_3", "recall_3"),
    ("recall_at_5", "recall_5"),
    ("recall_at_10", "recall_10"),
    ("mrr", "recip_rank"),
    ("ndcg_at_10", "ndcg_cut_10"),
    ("map", "map"),
];
/// evalgate's metric → ranx's.
const RANX: [(&str, &str); 4] = [
    ("recall_at_5", "recall@5"),
    ("mrr", "mrr@10"),
    ("ndcg_at_10", "ndcg@10"),
    ("map", "map@10"),
];

fn run(dir: &Path, args: &[&str]) {
    let o = evalgate_default(dir, args);
    assert!(
        code(&o) == 0 || code(&o) == 1,
        "evalgate {args:?}: {}{}",
        stdout(&o),
        stderr(&o)
    );
}

/// The v1 corpus with every 20th tool's description blanked: a real, small degradation.
fn degraded_corpus(dir: &Path) -> std::path::PathBuf {
    let mut c: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("datasets/v1/corpus.json")).unwrap(),
    )
    .unwrap();
    for (i, t) in c["tools"].as_array_mut().unwrap().iter_mut().enumerate() {
        if i % 20 == 0 {
            t["description"] = Value::String(String::new());
        }
    }
    write_json(dir, "corpus-degraded.json", &c)
}

/// The tolerance for two Monte-Carlo estimates of the same p: four standard errors of their
/// difference (binomial, at their mean), plus evalgate's (1 + extreme) / (1 + N) shift.
fn tolerance(p: f64) -> f64 {
    let p = p.clamp(0.0, 1.0);
    4.0 * (p * (1.0 - p) * (1.0 / EVALGATE_PERMUTATIONS + 1.0 / RANX_PERMUTATIONS as f64)).sqrt()
        + 1.0 / (EVALGATE_PERMUTATIONS + 1.0)
}

#[test]
fn per_query_values_equal_trec_eval_and_ranx_and_p_values_agree_with_ranx() {
    let python = installed_in("crosscheck", "bin", "python").join("python");
    let d = tempdir();
    let dir = d.path();
    run(dir, &["retrieval", "--out", "base", "-q"]);
    run(
        dir,
        &[
            "baseline",
            "update",
            "--from",
            "base/report.json",
            "--output",
            "b.json",
        ],
    );
    run(
        dir,
        &["retrieval", "--baseline", "b.json", "--out", "same", "-q"],
    );
    let corpus = degraded_corpus(dir);
    run(
        dir,
        &[
            "retrieval",
            "--corpus",
            corpus.to_str().unwrap(),
            "--baseline",
            "b.json",
            "--out",
            "degraded",
            "-q",
        ],
    );
    let o = std::process::Command::new(&python)
        .arg(root().join("tests/fixtures/crosscheck.py"))
        .arg(dir.join("field.json"))
        .arg(RANX_PERMUTATIONS.to_string())
        .arg(dir.join("base/report.json"))
        .arg(format!("same={}", dir.join("same/report.json").display()))
        .arg(format!(
            "degraded={}",
            dir.join("degraded/report.json").display()
        ))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "crosscheck.py: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let field = read_json(&dir.join("field.json"));
    assert_eq!(field["versions"]["ranx"], "0.3.21");
    assert_eq!(field["versions"]["pytrec_eval"], "0.5.11");

    // per query: evalgate's values against trec_eval's and ranx's
    for (name, report) in [
        ("baseline", "base"),
        ("same", "same"),
        ("degraded", "degraded"),
    ] {
        let r = read_json(&dir.join(report).join("report.json"));
        let queries = r["retrieval"]["per_query"].as_array().unwrap();
        assert_eq!(queries.len(), 586);
        let trec = &field["trec"][name];
        let ranx = &field["ranx"][name];
        let mut empty = 0;
        for q in queries {
            let id = q["id"].as_str().unwrap();
            // no query without a relevant label: validation rejects them (a dataset error)
            assert!(
                q["labels"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|l| l["relevance"].as_u64().unwrap() >= 1),
                "{id}"
            );
            let value = |m: &str| q["metrics"][m].as_f64().unwrap();
            // the one group that differs: nothing retrieved. trec_eval scores only the queries
            // of the run (without -c, which pytrec_eval lacks), evalgate scores them 0
            if q["retrieved"].as_array().unwrap().is_empty() {
                empty += 1;
                assert!(trec.get(id).is_none(), "{name} {id}: {}", trec[id]);
                for (m, _) in TREC {
                    assert_eq!(value(m), 0.0, "{name} {id} {m}");
                }
            } else {
                for (m, t) in TREC {
                    let tv = trec[id][t]
                        .as_f64()
                        .unwrap_or_else(|| panic!("{name} {id} {t}"));
                    assert!(
                        (value(m) - tv).abs() <= 1e-9,
                        "{name} {id} {m}: evalgate {} trec_eval {tv}",
                        value(m)
                    );
                }
            }
            // ranx scores an empty run 0, as evalgate does: every query agrees
            for (m, x) in RANX {
                let xv = ranx[id][x].as_f64().unwrap();
                assert!(
                    (value(m) - xv).abs() <= 1e-9,
                    "{name} {id} {m}: evalgate {} ranx {xv}",
                    value(m)
                );
            }
        }
        println!(
            "{name}: {} of 586 queries equal trec_eval's on all 7 metrics, {empty} with nothing retrieved (absent from trec_eval, 0 in evalgate); 586 equal ranx's on 4",
            586 - empty
        );
        assert!(empty < 10, "{name}: {empty} empty lists");
    }

    // p-values: evalgate's paired test against ranx's Fisher randomization test
    let mut degraded_significant = 0;
    for (name, report) in [("same", "same"), ("degraded", "degraded")] {
        let r = read_json(&dir.join(report).join("report.json"));
        for (m, x) in RANX.iter().take(3) {
            let c = r["gate"]["checks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["subject"] == "retrieval" && c["metric"] == *m)
                .unwrap();
            let ours = c["paired"]["p_value"]
                .as_f64()
                .unwrap_or_else(|| panic!("{c}"));
            let theirs = field["ranx_p"][name][x].as_f64().unwrap();
            let tol = tolerance((ours + theirs) / 2.0);
            println!(
                "{name} {m}: evalgate p {ours:.4} ({}), ranx p {theirs:.4} ({RANX_PERMUTATIONS} permutations), |Δ| {:.4} ≤ {tol:.4}",
                c["paired"]["method"].as_str().unwrap(),
                (ours - theirs).abs()
            );
            assert!(
                (ours - theirs).abs() <= tol,
                "{name} {m}: evalgate {ours} ranx {theirs} (tolerance {tol})"
            );
            if name == "same" {
                assert_eq!((ours, theirs), (1.0, 1.0), "{m}");
            } else {
                assert!(
                    ours < 1.0 && c["paired"]["worse"].as_u64().unwrap() > 0,
                    "{c}"
                );
                degraded_significant += usize::from(ours < 0.5);
            }
        }
    }
    // the degraded comparison is informative: p-values away from 1 (and from 0) on 2 metrics
    assert!(degraded_significant >= 2);
}
