//! Issue 5's proofs for the v1 datasets: they validate, every corpus tool is accounted for,
//! the card is generated from the files, the held-back split is real, and the corpus writer is
//! deterministic (the regeneration script's byte-for-byte promise rests on it).

mod common;

use common::*;
use evalgate::tools::snapshot;
use serde_json::Value;
use std::collections::BTreeSet;

fn v1(name: &str) -> Value {
    read_json(&root().join("datasets/v1").join(name))
}

/// `evalgate validate` on v1 with `golden` in place of the shipped golden set: it must fail
/// with exit 2; returns its stderr.
fn validate_with_golden(dir: &std::path::Path, golden: &Value) -> String {
    let g = write_json(dir, "golden.json", golden);
    let o = evalgate(
        &root(),
        &[
            "validate",
            "--profile",
            "strict",
            "--datasets",
            "datasets/v1",
            "--golden",
            g.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    stderr(&o)
}

#[test]
fn the_v1_datasets_validate_and_are_the_embedded_default() {
    let dir = tempdir();
    let o = evalgate_default(dir.path(), &["validate"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("embedded:datasets/v1/corpus.json (corpus_v1, 2665 items)")
            && out.contains("(golden_v1,")
            && out.contains("(security_v1,"),
        "{out}"
    );
    let o = evalgate_default(&root(), &["validate", "--datasets", "datasets/v1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn v1_meets_the_composition_the_issue_asks_for() {
    let corpus = v1("corpus.json");
    let golden = v1("golden.json");
    let security = v1("security.json");
    let tools: BTreeSet<&str> = corpus["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool_id"].as_str().unwrap())
        .collect();
    let servers: BTreeSet<&str> = tools.iter().map(|t| t.split(':').next().unwrap()).collect();
    assert!(tools.len() >= 1000 && servers.len() >= 60);

    let queries = golden["queries"].as_array().unwrap();
    assert!(queries.len() >= 500, "{} queries", queries.len());
    let hard = queries
        .iter()
        .filter(|q| {
            q["notes"]
                .as_str()
                .is_some_and(|n| n.starts_with("hard-negative"))
        })
        .count();
    assert!(hard * 4 >= queries.len(), "hard negatives {hard}");
    let relevant = |q: &Value| -> Vec<String> {
        q["labels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["relevance"].as_u64().unwrap() >= 1)
            .map(|l| l["tool_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(queries.iter().all(|q| !relevant(q).is_empty()));
    assert!(queries.iter().filter(|q| relevant(q).len() > 1).count() >= 50);
    // every server is covered by a relevant label
    let covered: BTreeSet<String> = queries
        .iter()
        .flat_map(relevant)
        .map(|t| t.split(':').next().unwrap().to_string())
        .collect();
    for s in &servers {
        assert!(covered.contains(*s), "server {s} has no query");
    }
    // every corpus tool is relevant to a query or listed as a distractor
    let relevant_tools: BTreeSet<String> = queries.iter().flat_map(relevant).collect();
    let distractors: BTreeSet<&str> = golden["distractors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    for t in &tools {
        assert!(
            relevant_tools.contains(*t) ^ distractors.contains(t),
            "{t} must be exactly one of relevant / distractor"
        );
    }
    // a held-back split of about 20 %
    let held = queries.iter().filter(|q| q["split"] == "held_out").count();
    let dev = queries.iter().filter(|q| q["split"] == "dev").count();
    assert_eq!(held + dev, queries.len());
    let share = held as f64 / queries.len() as f64;
    assert!((0.18..=0.22).contains(&share), "held-out share {share}");

    let entries = security["entries"].as_array().unwrap();
    assert!(entries.len() >= 300);
    for cat in [
        "tool_poisoning",
        "prompt_injection",
        "shadowing",
        "rug_pull",
    ] {
        let n = entries.iter().filter(|e| e["category"] == cat).count();
        let hn = entries
            .iter()
            .filter(|e| e["category"] == "hard_negative" && e["resembles"] == cat)
            .count();
        assert!(
            n >= 40 && hn >= 20,
            "{cat}: {n} entries, {hn} hard negatives"
        );
    }
    for e in entries.iter().filter(|e| e["category"] == "rug_pull") {
        assert!(
            e["before"].is_object() && !e["after"].is_null(),
            "{}",
            e["id"]
        );
    }
}

#[test]
fn an_unaccounted_tool_or_a_relevant_distractor_is_an_error() {
    let dir = tempdir();
    let mut golden = v1("golden.json");
    let removed = golden["distractors"].as_array_mut().unwrap().remove(0);
    let err = validate_with_golden(dir.path(), &golden);
    assert!(
        err.contains("golden.unaccounted-tool") && err.contains(removed.as_str().unwrap()),
        "{err}"
    );

    let mut golden = v1("golden.json");
    let first_relevant = golden["queries"][0]["labels"][0]["tool_id"].clone();
    golden["distractors"]
        .as_array_mut()
        .unwrap()
        .push(first_relevant.clone());
    let err = validate_with_golden(dir.path(), &golden);
    assert!(
        err.contains("golden.distractor-relevant") && err.contains("$.distractors["),
        "{err}"
    );
    assert!(err.contains(first_relevant.as_str().unwrap()), "{err}");
}

#[test]
fn a_split_outside_dev_and_held_out_is_an_error() {
    let dir = tempdir();
    let mut golden = v1("golden.json");
    golden["queries"][3]["split"] = Value::from("test");
    let err = validate_with_golden(dir.path(), &golden);
    assert!(
        err.contains("golden.split") && err.contains("$.queries[3].split"),
        "{err}"
    );
}

#[test]
fn the_dataset_card_in_the_readme_is_generated_from_the_files() {
    let o = evalgate_default(&root(), &["card", "--check", "datasets/README.md"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    // the card is computed, not stored: other datasets give other tables, and a stale copy fails
    let card = stdout(&evalgate_default(&root(), &["card"]));
    assert!(
        card.contains("### Corpus corpus\\_v1: 2665 tools from 101 servers"),
        "{card}"
    );
    let v0 = stdout(&evalgate_default(
        &root(),
        &["card", "--datasets", "datasets/v0"],
    ));
    assert!(v0.contains("112 tools from 14 servers") && v0 != card);
    let dir = tempdir();
    let readme = std::fs::read_to_string(root().join("datasets/README.md")).unwrap();
    let stale = readme.replacen("| 2 (primary) |", "| 2 (primary, edited) |", 1);
    assert_ne!(stale, readme);
    let p = dir.path().join("README.md");
    std::fs::write(&p, &stale).unwrap();
    let o = evalgate_default(&root(), &["card", "--check", p.to_str().unwrap()]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("stale"), "{}", stderr(&o));
    let o = evalgate_default(&root(), &["card", "--update", p.to_str().unwrap()]);
    assert_eq!(code(&o), 0);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), readme);
}

#[test]
fn reports_compare_the_dev_and_held_out_splits() {
    let dir = tempdir();
    let o = evalgate_default(dir.path(), &["retrieval", "--no-baseline", "--out", "r"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = read_json(&dir.path().join("r/report.json"));
    let splits = &r["retrieval"]["splits"];
    let held = splits["held_out"]["queries"].as_u64().unwrap();
    let dev = splits["dev"]["queries"].as_u64().unwrap();
    assert_eq!(held + dev, r["retrieval"]["queries"].as_u64().unwrap());
    // the split means weight back to the overall mean
    let m = |s: &str| splits[s]["metrics"]["mrr"].as_f64().unwrap();
    let overall = r["retrieval"]["metrics"]["mrr"]["mean"].as_f64().unwrap();
    let mixed = (m("dev") * dev as f64 + m("held_out") * held as f64) / (dev + held) as f64;
    assert!((mixed - overall).abs() < 1e-9, "{mixed} vs {overall}");
    let md = std::fs::read_to_string(dir.path().join("r/report.md")).unwrap();
    assert!(
        md.contains("Splits: dev (") && md.contains("held_out ("),
        "{md}"
    );
    let html = std::fs::read_to_string(dir.path().join("r/report.html")).unwrap();
    assert!(html.contains("Splits: dev ("));
}

#[test]
fn the_corpus_writer_reproduces_the_v1_file_byte_for_byte() {
    let path = root().join("datasets/v1/corpus.json");
    let bytes = std::fs::read_to_string(&path).unwrap();
    let corpus = snapshot::read(&path).unwrap();
    assert_eq!(
        evalgate::pipeline::dataset::corpus_json(&corpus),
        bytes,
        "read → write is not the identity"
    );
    // merging the servers one by one, in reverse order, gives the same file
    let mut rebuilt = snapshot::empty(&corpus.version);
    rebuilt.generated_from = corpus.generated_from.clone();
    for server in corpus.servers.iter().rev() {
        let tools = corpus
            .tools
            .iter()
            .filter(|t| t.server_name() == server.name)
            .cloned()
            .collect();
        snapshot::merge(
            &mut rebuilt,
            snapshot::Taken {
                server: server.clone(),
                tools,
            },
        );
    }
    assert!(
        evalgate::pipeline::dataset::corpus_json(&rebuilt) == bytes,
        "merge order changed the bytes"
    );
}

#[test]
fn the_v1_baselines_match_a_fresh_measurement() {
    // baselines/default.json is what the embedded retriever and detectors measure on v1
    let d = tempdir();
    let b = d.path().join("baseline.json");
    std::fs::copy(root().join("baselines/default.json"), &b).unwrap();
    let o = evalgate_default(
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
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("unchanged"),
        "baselines/default.json is stale:\n{}",
        stdout(&o)
    );
}

#[test]
fn the_reference_proxy_over_101_replayed_servers_reproduces_its_v1_baseline() {
    // real processes: evalgate's reference proxy plus one replay server per corpus server,
    // searched over MCP; the baseline was written by `baseline update --sut reference`
    let d = tempdir();
    let b = root().join("baselines/reference-v1.json");
    // 101 replay processes start slowly on a loaded 2-core machine: wait longer than the default
    std::fs::write(
        d.path().join("evalgate.toml"),
        "[sut.launch]\nready_timeout = 240\n",
    )
    .unwrap();
    let o = evalgate_default(
        d.path(),
        &[
            "retrieval",
            "--sut",
            "reference",
            "--baseline",
            b.to_str().unwrap(),
            "--out",
            "r",
            "-q",
        ],
    );
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let r = read_json(&d.path().join("r/report.json"));
    assert_eq!(r["retrieval"]["retriever"], "reference-proxy");
    assert_eq!(r["retrieval"]["queries"], 586);
    for c in r["gate"]["checks"].as_array().unwrap() {
        if let Some(delta) = c["delta"].as_f64() {
            assert!(delta.abs() < 1e-6, "{c}");
        }
    }
    // and the proxy ranks exactly like the in-process BM25 of the shipped baseline
    let shipped = read_json(&root().join("baselines/default.json"));
    for (k, v) in shipped["retrieval"]["metrics"].as_object().unwrap() {
        let here = r["retrieval"]["metrics"][k]["mean"].as_f64().unwrap();
        assert!((here - v["value"].as_f64().unwrap()).abs() < 1e-6, "{k}");
    }
}
