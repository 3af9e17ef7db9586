//! `evalgate fitness`: candidate descriptions scored exactly as a full run on the edited corpus,
//! on the real v1 datasets (embedded BM25) and through the reference proxy launched over replay
//! servers (v0, to keep it quick).

mod common;
use common::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

fn v1(name: &str) -> Value {
    read_json(&root().join("datasets/v1").join(name))
}

/// The `n` tools most often labelled relevant in `golden` (ties by id).
fn most_relevant(golden: &Value, n: usize) -> Vec<String> {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for q in golden["queries"].as_array().unwrap() {
        for l in q["labels"].as_array().unwrap() {
            if l["relevance"].as_u64().unwrap_or(1) > 0 {
                *count
                    .entry(l["tool_id"].as_str().unwrap().to_string())
                    .or_default() += 1;
            }
        }
    }
    let mut v: Vec<(String, usize)> = count.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.into_iter().take(n).map(|(id, _)| id).collect()
}

fn description(corpus: &Value, id: &str) -> String {
    corpus["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool_id"] == id)
        .unwrap_or_else(|| panic!("{id} in the corpus"))["description"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A candidate for the two most labelled tools: the first loses its description, the second
/// is given it. Returns the two ids and the candidate.
fn swap_candidate(corpus: &Value, golden: &Value) -> (Vec<String>, Value) {
    let top = most_relevant(golden, 2);
    let overrides = json!({
        top[0].clone(): {"description": ""},
        top[1].clone(): {"description": description(corpus, &top[0])},
    });
    (top, overrides)
}

/// The corpus with `overrides` applied as a user would edit the file.
fn edited(corpus: &Value, overrides: &Value) -> Value {
    let mut c = corpus.clone();
    for t in c["tools"].as_array_mut().unwrap() {
        if let Some(o) = overrides.get(t["tool_id"].as_str().unwrap()) {
            t["description"] = o["description"].clone();
        }
    }
    c
}

fn fitness(cwd: &Path, args: &[&str]) -> Value {
    let o = evalgate_default(cwd, &[&["fitness"], args].concat());
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "one JSON line: {out}");
    serde_json::from_str(&out).unwrap()
}

/// Runs `fitness --lines` with `lines` on stdin; its output and the JSON of each stdout line.
fn feed(mut cmd: std::process::Command, lines: &[String]) -> (std::process::Output, Vec<Value>) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for l in lines {
            writeln!(stdin, "{l}").unwrap();
        }
    }
    let o = child.wait_with_output().unwrap();
    let out: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (o, out)
}

/// The run's numbers in the fitness result's shape: `overall`, `splits` and `per_tool` for `ids`.
fn from_report(report: &Value, ids: &[String]) -> Value {
    let r = &report["retrieval"];
    let mut overall = serde_json::Map::new();
    overall.insert("queries".into(), r["queries"].clone());
    for (k, s) in r["metrics"].as_object().unwrap() {
        overall.insert(k.clone(), s["mean"].clone());
    }
    let mut splits = serde_json::Map::new();
    for (name, s) in r["splits"].as_object().into_iter().flatten() {
        let mut o = serde_json::Map::new();
        o.insert("queries".into(), s["queries"].clone());
        if name == "held_out" {
            o.insert("held_out".into(), true.into());
        }
        for (k, v) in s["metrics"].as_object().unwrap() {
            o.insert(k.clone(), v.clone());
        }
        splits.insert(name.clone(), o.into());
    }
    // per tool: its row of the run's per-tool diagnostics
    let mut per_tool = serde_json::Map::new();
    for id in ids {
        let row = r["tool_diagnostics"]["per_tool"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tool"] == id.as_str());
        let row = match row {
            Some(t) => {
                json!({"relevant_in": t["relevant_in"], "found_in_top_5": t["found_in_top_5"],
                              "recall_at_5": t["recall_at_5"], "mrr": t["mrr"]})
            }
            None => {
                json!({"relevant_in": 0, "found_in_top_5": 0, "recall_at_5": null, "mrr": null})
            }
        };
        per_tool.insert(id.clone(), row);
    }
    json!({"overall": overall, "splits": splits, "per_tool": per_tool})
}

fn run_on(dir: &Path, corpus: &Value, golden: &Value, args: &[&str]) -> Value {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    write_json(&data, "corpus.json", corpus);
    write_json(&data, "golden.json", golden);
    let out = dir.join("report");
    let o = evalgate_default(
        dir,
        &[
            &[
                "retrieval",
                "--datasets",
                data.to_str().unwrap(),
                "--no-baseline",
                "--robustness",
                "off",
                "-q",
                "--out",
                out.to_str().unwrap(),
            ],
            args,
        ]
        .concat(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    read_json(&out.join("report.json"))
}

#[test]
fn a_candidate_scores_exactly_what_a_full_run_on_the_edited_corpus_reports() {
    let dir = tempdir();
    let (corpus, golden) = (v1("corpus.json"), v1("golden.json"));
    let (top, overrides) = swap_candidate(&corpus, &golden);
    let cand = write_json(dir.path(), "candidate.json", &overrides);
    let v1_dir = root().join("datasets/v1");
    let on_v1 = |file: &Path| {
        fitness(
            dir.path(),
            &[
                "--datasets",
                v1_dir.to_str().unwrap(),
                "--overrides",
                file.to_str().unwrap(),
            ],
        )
    };
    let got = on_v1(&cand);
    let report = run_on(dir.path(), &edited(&corpus, &overrides), &golden, &[]);
    assert_eq!(
        got,
        from_report(&report, &top),
        "fitness against the full run"
    );
    // and the candidate moved something: it is not the unedited corpus's score
    let none = write_json(dir.path(), "none.json", &json!({}));
    let before = on_v1(&none);
    assert_ne!(before["overall"], got["overall"]);
    assert_eq!(before["per_tool"], json!({}));
    assert_eq!(got["splits"]["held_out"]["held_out"], true);
    assert!(got["splits"]["dev"].get("held_out").is_none());
}

#[test]
fn blanking_a_tool_lowers_its_recall_and_lines_answer_every_line_in_order() {
    let dir = tempdir();
    let (corpus, golden) = (v1("corpus.json"), v1("golden.json"));
    let top = most_relevant(&golden, 8);
    let same: serde_json::Map<String, Value> = top
        .iter()
        .map(|id| (id.clone(), json!({"description": description(&corpus, id)})))
        .collect();
    let cand = write_json(dir.path(), "same.json", &Value::Object(same.clone()));
    let v1dir = root().join("datasets/v1");
    let before = fitness(
        dir.path(),
        &[
            "--datasets",
            v1dir.to_str().unwrap(),
            "--overrides",
            cand.to_str().unwrap(),
        ],
    );
    // the most labelled tool that the unedited corpus finds
    let blank = top
        .iter()
        .find(|id| {
            before["per_tool"][id.as_str()]["recall_at_5"]
                .as_f64()
                .unwrap()
                > 0.0
        })
        .expect("some top tool is found")
        .clone();
    let mut blanked = same.clone();
    blanked.insert(blank.clone(), json!({"description": ""}));

    let mut cmd = evalgate_command(
        dir.path(),
        &["fitness", "--datasets", v1dir.to_str().unwrap(), "--lines"],
    );
    cmd.env_remove("EVALGATE_DATASETS");
    let (o, lines) = feed(
        cmd,
        &[
            Value::Object(same).to_string(),
            format!("{{\"{blank}\": {{\"descripton\": \"typo\"}}}}"),
            Value::Object(blanked).to_string(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(lines.len(), 3, "{}", stdout(&o));
    let line_no: Vec<u64> = lines.iter().map(|l| l["line"].as_u64().unwrap()).collect();
    assert_eq!(line_no, [1, 2, 3]);
    // the unchanged candidate scores as the --overrides run did
    let mut first = lines[0].clone();
    first.as_object_mut().unwrap().remove("line");
    assert_eq!(first, before);
    // the malformed line: an error naming the field, no numbers
    let err = lines[1]["error"].as_str().unwrap();
    assert!(
        err.contains(&format!("$[\"{blank}\"].descripton: unknown field")),
        "{err}"
    );
    assert!(lines[1].get("overall").is_none());

    let after = &lines[2];
    let tool = |r: &Value, id: &str, k: &str| r["per_tool"][id][k].as_f64().unwrap();
    assert!(
        tool(after, &blank, "recall_at_5") < tool(&before, &blank, "recall_at_5"),
        "blanking {blank} lowers its recall: {} -> {}",
        tool(&before, &blank, "recall_at_5"),
        tool(after, &blank, "recall_at_5")
    );
    // the others: each can gain where the blanked tool had ranked above it, and lose at most
    // one query to the corpus statistics shifting
    for id in top.iter().filter(|id| **id != blank) {
        let relevant = before["per_tool"][id.as_str()]["relevant_in"]
            .as_f64()
            .unwrap();
        let drop = tool(&before, id, "recall_at_5") - tool(after, id, "recall_at_5");
        assert!(drop <= 1.0 / relevant + 1e-12, "{id} dropped by {drop}");
    }
    // overall: at most the blanked tool's share of the queries
    let queries = before["overall"]["queries"].as_f64().unwrap();
    let relevant = before["per_tool"][blank.as_str()]["relevant_in"]
        .as_f64()
        .unwrap();
    let drop = before["overall"]["recall_at_5"].as_f64().unwrap()
        - after["overall"]["recall_at_5"].as_f64().unwrap();
    assert!(
        drop <= relevant / queries + 0.002,
        "overall dropped by {drop}"
    );
}

#[test]
fn the_reference_proxy_scores_a_candidate_as_a_run_on_the_edited_corpus() {
    // the slow path: the proxy is launched afresh over replay servers serving the candidate
    let dir = tempdir();
    let v0 = root().join("datasets/v0");
    let (corpus, golden) = (shipped("corpus.json"), shipped("golden.json"));
    let (top, overrides) = swap_candidate(&corpus, &golden);
    let cand = write_json(dir.path(), "candidate.json", &overrides);
    // fitness on v0 with these overrides, through `sut` ("" for the embedded retriever)
    let on_v0 = |file: &Path, sut: &str| {
        let mut args = vec!["--datasets", v0.to_str().unwrap()];
        if !sut.is_empty() {
            args.extend(["--sut", sut]);
        }
        args.extend(["--overrides", file.to_str().unwrap()]);
        fitness(dir.path(), &args)
    };
    let got = on_v0(&cand, "reference");
    let report = run_on(
        dir.path(),
        &edited(&corpus, &overrides),
        &golden,
        &["--sut", "reference"],
    );
    assert_eq!(got, from_report(&report, &top));
    // the candidate reached the proxy: its numbers moved
    let none = write_json(dir.path(), "none.json", &json!({}));
    let before = on_v0(&none, "reference");
    assert_ne!(before["overall"], got["overall"]);
    let embedded = on_v0(&cand, "");
    // and the reference proxy ranks with the same BM25 as the embedded retriever: the slow
    // path and the fast path give the same output
    assert_eq!(embedded, got);
}

#[test]
fn a_bad_candidate_or_a_system_it_cannot_reach_is_exit_2_with_nothing_on_stdout() {
    let dir = tempdir();
    let bad = write_json(
        dir.path(),
        "candidate.json",
        &json!({"nosuch:tool": {"description": "x"}}),
    );
    let o = evalgate(
        dir.path(),
        &["fitness", "--overrides", bad.to_str().unwrap()],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    let err = stderr(&o);
    assert!(
        err.contains("candidate.json: $[\"nosuch:tool\"]: no tool `nosuch:tool` in the corpus"),
        "{err}"
    );
    let none = write_json(dir.path(), "none.json", &json!({}));
    let o = evalgate(
        dir.path(),
        &[
            "fitness",
            "--sut",
            "mcp",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--overrides",
            none.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fitness needs a system whose corpus evalgate serves"),
        "{}",
        stderr(&o)
    );
    let o = evalgate(dir.path(), &["fitness"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--overrides"), "{}", stderr(&o));
}

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs --features fault-injection"
)]
fn a_proxy_that_crashes_gets_an_error_line_per_candidate_and_exit_3_never_numbers() {
    let dir = tempdir();
    let mut cmd = evalgate_command(dir.path(), &["fitness", "--sut", "reference", "--lines"]);
    cmd.env("EVALGATE_PROXY_FAULT", "crash-after=30");
    let (o, lines) = feed(cmd, &["{}".to_string(), "{}".to_string()]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert_eq!(lines.len(), 2, "{}", stdout(&o));
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["line"], i + 1);
        assert_eq!(l["failure"], "crashed", "{l}");
        assert!(l["error"].as_str().unwrap().contains("exited"), "{l}");
        assert!(l.get("overall").is_none(), "{l}");
    }
}
