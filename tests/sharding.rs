//! Sharding: `--shard i/n` runs measure slices; `evalgate merge` joins them into the report,
//! verdict and comment the unsharded run gives (the same numbers to the last digit), for the
//! embedded system over v1 and for a real third-party proxy; and every way a set of shard
//! reports can be wrong is refused before anything is written.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// The report without what differs between two runs of the same system: timings (`*_ms`, and
/// the `seconds` the catalog check waited).
fn without_timings(v: &Value) -> Value {
    match v {
        // the scorecard's performance points (and so its total) come from latency
        Value::Object(m) if m.contains_key("rubric") && m.contains_key("dimensions") => {
            let mut m = m.clone();
            m.remove("total");
            if let Some(Value::Array(d)) = m.get_mut("dimensions") {
                d.retain(|x| x["name"] != "performance");
            }
            without_timings(&Value::Object(
                m.into_iter().filter(|(k, _)| k != "rubric").collect(),
            ))
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.ends_with("_ms") && k.as_str() != "seconds")
                .map(|(k, v)| (k.clone(), without_timings(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_timings).collect()),
        v => v.clone(),
    }
}

/// report.md without its latency line (timings).
fn md_without_timings(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("report.md"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("Latency p50") && !l.contains("Scorecard "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn report(dir: &Path, out: &str) -> Value {
    read_json(&dir.join(out).join("report.json"))
}

/// The first place two JSON values differ, for a readable failure.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let p = format!("{at}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => {
                        if let Some(d) = first_difference(u, v, &p) {
                            return Some(d);
                        }
                    }
                    _ => return Some(format!("{p}: present in one report only")),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(u, v, &format!("{at}[{i}]"))),
        _ => (a != b).then(|| format!("{at}: {a} != {b}")),
    }
}

fn assert_same(unsharded: &Value, merged: &Value) {
    let (a, b) = (without_timings(unsharded), without_timings(merged));
    assert!(
        a == b,
        "the merged report differs from the unsharded one: {}",
        first_difference(&a, &b, "$").unwrap_or_default()
    );
}

/// One test of this binary checks that no process outlived it, and every evalgate the other
/// tests run is a descendant of this process too: that test runs alone (the write lock) while
/// the others run together (read locks).
static SURVIVOR_CHECK: std::sync::RwLock<()> = std::sync::RwLock::new(());

#[test]
fn a_four_shard_run_merged_equals_the_unsharded_run_on_v1() {
    let _shared = SURVIVOR_CHECK.read().unwrap_or_else(|p| p.into_inner());
    let d = tempdir();
    let dir = d.path();
    // the embedded v1 datasets, both halves, two runs, gated against the embedded baseline
    let whole = evalgate_default(dir, &["run", "--runs", "2", "-q", "--out", "whole"]);
    assert_eq!(code(&whole), 0, "{}", stderr(&whole));
    for i in 1..=4 {
        let shard = format!("{i}/4");
        let out = format!("s{i}");
        let o = evalgate_default(
            dir,
            &["run", "--runs", "2", "-q", "--shard", &shard, "--out", &out],
        );
        assert_eq!(code(&o), 0, "shard {shard}: {}", stderr(&o));
        let r = report(dir, &out);
        assert_eq!(r["shard"]["index"], i);
        // a shard is not gated: its numbers cover a slice
        assert_eq!(r["gate"]["verdict"], "no_baseline", "{}", r["gate"]);
        assert!(r["gate"]["baseline"].is_null());
        assert!(
            r["gate"]["summary"]
                .as_str()
                .unwrap()
                .contains("evalgate merge")
        );
        // shard 1 probes the system once for the whole run, the others do not
        assert_eq!(r["robustness"].is_object(), i == 1, "shard {i}");
    }
    let queries: Vec<u64> = (1..=4)
        .map(|i| {
            report(dir, &format!("s{i}"))["retrieval"]["per_query"]
                .as_array()
                .unwrap()
                .len() as u64
        })
        .collect();
    let whole_r = report(dir, "whole");
    assert_eq!(
        queries.iter().sum::<u64>(),
        whole_r["retrieval"]["queries"].as_u64().unwrap(),
        "the shards' queries {queries:?} cover the golden set once"
    );
    // the shards in any order
    let merged = evalgate_default(
        dir,
        &[
            "merge",
            "s3/report.json",
            "s1/report.json",
            "s4/report.json",
            "s2/report.json",
            "-q",
            "--out",
            "merged",
        ],
    );
    assert_eq!(code(&merged), code(&whole), "{}", stderr(&merged));
    let merged_r = report(dir, "merged");
    assert!(merged_r.get("shard").is_none());
    assert_eq!(merged_r["gate"]["verdict"], "pass");
    assert_same(&whole_r, &merged_r);
    // the per-tool diagnostics are scored from the joined observations: the same table, and
    // against the shipped baseline's own confusion pairs nothing is new
    let td = &merged_r["retrieval"]["tool_diagnostics"];
    assert_eq!(td["runs"], 2);
    assert!(td["confusions"].as_array().unwrap().len() > 100, "{td}");
    assert_eq!(merged_r["gate"]["new_confusions"]["total"], 0);
    // the comment a pull request gets is the same too
    assert_eq!(
        md_without_timings(&dir.join("whole")),
        md_without_timings(&dir.join("merged"))
    );
}

#[test]
fn a_degraded_system_fails_the_merged_gate_as_it_fails_the_unsharded_one() {
    let _shared = SURVIVOR_CHECK.read().unwrap_or_else(|p| p.into_inner());
    // the golden set's labels point elsewhere for a quarter of v0's queries: against v0's
    // baseline the gate fails (exit 1) on the whole run and on the merged shards, with the
    // same checks
    let d = tempdir();
    let dir = d.path();
    let mut golden = shipped("golden.json");
    let corpus = shipped("corpus.json");
    let ids: Vec<Value> = corpus["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool_id"].clone())
        .collect();
    let qs = golden["queries"].as_array_mut().unwrap();
    let n = qs.len();
    for (i, q) in qs.iter_mut().enumerate().filter(|(i, _)| i % 4 == 0) {
        // the tool furthest from the query's own (a label nobody would find)
        q["labels"] =
            serde_json::json!([{"tool_id": ids[(i * 7 + n) % ids.len()], "relevance": 2}]);
    }
    let g = write_json(dir, "golden.json", &golden);
    let g = g.to_str().unwrap();
    let b = baseline_copy(dir);
    let b = b.to_str().unwrap();
    let whole = evalgate(
        dir,
        &[
            "retrieval",
            "--golden",
            g,
            "--baseline",
            b,
            "-q",
            "--out",
            "whole",
        ],
    );
    assert_eq!(code(&whole), 1, "{}", stderr(&whole));
    for i in 1..=3 {
        let o = evalgate(
            dir,
            &[
                "retrieval",
                "--golden",
                g,
                "-q",
                "--shard",
                &format!("{i}/3"),
                "--out",
                &format!("s{i}"),
            ],
        );
        assert_eq!(code(&o), 0, "a shard is not gated: {}", stderr(&o));
    }
    let merged = evalgate(
        dir,
        &[
            "merge",
            "--golden",
            g,
            "--baseline",
            b,
            "s1/report.json",
            "s2/report.json",
            "s3/report.json",
            "-q",
            "--out",
            "merged",
        ],
    );
    assert_eq!(code(&merged), 1, "{}", stderr(&merged));
    let merged_r = report(dir, "merged");
    assert_eq!(merged_r["gate"]["verdict"], "fail");
    assert_same(&report(dir, "whole"), &merged_r);
}

#[test]
fn merge_refuses_shards_that_do_not_make_one_run_and_writes_nothing() {
    let _shared = SURVIVOR_CHECK.read().unwrap_or_else(|p| p.into_inner());
    let d = tempdir();
    let dir = d.path();
    for (i, extra) in [(1, "2"), (2, "2"), (3, "2")] {
        let o = evalgate(
            dir,
            &[
                "security",
                "-q",
                "--runs",
                extra,
                "--shard",
                &format!("{i}/3"),
                "--out",
                &format!("s{i}"),
            ],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    // another run's shard: other --runs
    let o = evalgate(
        dir,
        &["security", "-q", "--shard", "2/3", "--out", "other-runs"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // a whole run's report
    let o = evalgate(dir, &["security", "-q", "--out", "whole"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));

    let refused = |args: &[&str], says: &[&str]| {
        let mut all = vec!["merge", "--out", "merged"];
        all.extend_from_slice(args);
        let o = evalgate(dir, &all);
        let e = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {e}");
        for s in says {
            assert!(e.contains(s), "{args:?}: expected {s:?} in {e}");
        }
        assert!(!dir.join("merged").exists(), "{args:?} wrote reports");
    };
    refused(&["s1/report.json", "s3/report.json"], &["missing: 2/3"]);
    refused(
        &[
            "s1/report.json",
            "s2/report.json",
            "s2/report.json",
            "s3/report.json",
        ],
        &["shard 2/3 is given twice"],
    );
    refused(
        &["s1/report.json", "other-runs/report.json", "s3/report.json"],
        &["other-runs/report.json", "$.runs"],
    );
    refused(
        &["s1/report.json", "whole/report.json"],
        &["whole/report.json", "$.shard", "--shard"],
    );
    // merge loads the datasets the shards measured: another security corpus is refused
    let mut sec = shipped("security.json");
    sec["entries"].as_array_mut().unwrap().pop();
    let other = write_json(dir, "security.json", &sec);
    refused(
        &[
            "--security-corpus",
            other.to_str().unwrap(),
            "s1/report.json",
            "s2/report.json",
            "s3/report.json",
        ],
        &["$.datasets", "same dataset flags"],
    );
    std::fs::write(
        dir.join("broken.json"),
        "{\"schema_version\": 1, \"runs\": \"two\"}",
    )
    .unwrap();
    refused(&["broken.json"], &["broken.json", "$.runs"]);
    // the three shards together are a run
    let o = evalgate(
        dir,
        &[
            "merge",
            "s1/report.json",
            "s2/report.json",
            "s3/report.json",
            "-q",
            "--out",
            "m",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // a shard's report is not a baseline
    let o = evalgate(
        dir,
        &[
            "baseline",
            "update",
            "--from",
            "s1/report.json",
            "--output",
            "b.json",
        ],
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("shard 1/3 only"), "{}", stderr(&o));
    assert!(!dir.join("b.json").exists());
}

/// A real third-party tool-search proxy (dehydrator 0.3.1, PyPI, launched over the replayed v0
/// corpus by examples/dehydrator/evalgate.toml): each shard launches its own proxy over the
/// whole corpus, and the merged report equals the unsharded run's.
#[test]
fn a_real_proxy_measured_in_three_shards_merges_to_its_unsharded_report() {
    let _alone = SURVIVOR_CHECK.write().unwrap_or_else(|p| p.into_inner());
    evalgate::infra::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let bin = installed_in("dehydrator", "bin", "dehydrator-mcp");
    let d = tempdir();
    let dir = d.path();
    let config = root().join("examples/dehydrator/evalgate.toml");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |extra: &[&str], out: &str| {
        let mut args = vec![
            "retrieval",
            "--config",
            config.to_str().unwrap(),
            "--no-baseline",
            "-q",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        let o = evalgate_env(dir, &args, &[("PATH", &path)]);
        assert_eq!(code(&o), 0, "{out}: {}", stderr(&o));
    };
    run(&[], "whole");
    for i in 1..=3 {
        run(&["--shard", &format!("{i}/3")], &format!("s{i}"));
        // every shard's proxy saw the whole catalog
        let cat = &report(dir, &format!("s{i}"))["retrieval"]["catalog"];
        assert_eq!(cat["served"], cat["seen"], "shard {i}: {cat}");
    }
    let o = evalgate_env(
        dir,
        &[
            "merge",
            "--no-baseline",
            "s1/report.json",
            "s2/report.json",
            "s3/report.json",
            "-q",
            "--out",
            "merged",
        ],
        &[],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (whole, merged) = (report(dir, "whole"), report(dir, "merged"));
    assert_eq!(merged["retrieval"]["retriever"], "dehydrator");
    assert_same(&whole, &merged);
    assert_eq!(
        md_without_timings(&dir.join("whole")),
        md_without_timings(&dir.join("merged"))
    );
    assert_no_survivors("after the shards");
}

/// `--observations gzip|file` moves the raw observations out of report.json into a file beside
/// it; `--sut recorded`, `--detectors recorded` and `merge` read them from there, with the same
/// numbers as from an inline report; an inline run into the same directory removes the stale
/// file; a report naming any other file is refused.
#[test]
fn observations_beside_the_report_are_read_back_by_recorded_and_merge() {
    let _shared = SURVIVOR_CHECK.read().unwrap_or_else(|p| p.into_inner());
    let d = tempdir();
    let dir = d.path();
    let ok = |args: &[&str]| {
        let o = evalgate(dir, args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
    };
    ok(&["run", "--runs", "2", "-q", "--out", "inline"]);
    ok(&[
        "run",
        "--runs",
        "2",
        "-q",
        "--out",
        "gz",
        "--observations",
        "gzip",
    ]);
    ok(&[
        "run",
        "--runs",
        "2",
        "-q",
        "--out",
        "plain",
        "--observations",
        "file",
    ]);
    let inline = report(dir, "inline");
    for (out, file) in [
        ("gz", "observations.json.gz"),
        ("plain", "observations.json"),
    ] {
        let r = report(dir, out);
        assert_eq!(r["observations_file"], file);
        assert!(r["retrieval"].get("observations").is_none(), "{out}");
        assert!(r["security"].get("observations").is_none(), "{out}");
        assert!(dir.join(out).join(file).is_file());
        // report.json shrinks by the observations' share
        let size = |o: &str| {
            std::fs::metadata(dir.join(o).join("report.json"))
                .unwrap()
                .len()
        };
        assert!(
            size(out) * 3 < size("inline") * 2,
            "{out}: {} vs {}",
            size(out),
            size("inline")
        );
        // re-scored from the file beside it: the numbers of the inline report
        let rec = dir.join(out).join("report.json");
        let rec = rec.to_str().unwrap();
        let again = format!("again-{out}");
        ok(&[
            "run",
            "--sut",
            "recorded",
            "--detectors",
            "recorded",
            "--recorded",
            rec,
            "--runs",
            "2",
            "-q",
            "--out",
            &again,
        ]);
        let b = report(dir, &again);
        assert_eq!(
            inline["retrieval"]["metrics"], b["retrieval"]["metrics"],
            "{out}"
        );
        assert_eq!(
            inline["retrieval"]["per_query"], b["retrieval"]["per_query"],
            "{out}"
        );
        for (x, y) in inline["security"]["detectors"]
            .as_array()
            .unwrap()
            .iter()
            .zip(b["security"]["detectors"].as_array().unwrap())
        {
            assert_eq!(x["per_run_counts"], y["per_run_counts"], "{out}");
        }
    }
    // shards with their observations gzipped beside them merge like inline ones
    for i in 1..=2 {
        ok(&[
            "run",
            "--runs",
            "2",
            "-q",
            "--shard",
            &format!("{i}/2"),
            "--out",
            &format!("s{i}"),
            "--observations",
            "gzip",
        ]);
    }
    ok(&[
        "merge",
        "s1/report.json",
        "s2/report.json",
        "-q",
        "--out",
        "merged",
    ]);
    assert_same(&inline, &report(dir, "merged"));
    // a later inline run into the same directory leaves no stale observations behind
    ok(&["run", "-q", "--out", "gz"]);
    assert!(!dir.join("gz/observations.json.gz").exists());
    assert!(report(dir, "gz")["retrieval"]["observations"].is_object());
    // a report may only name the files evalgate writes
    let mut hostile = report(dir, "plain");
    hostile["observations_file"] = "../inline/report.json".into();
    let p = write_json(&dir.join("plain"), "hostile.json", &hostile);
    let o = evalgate(
        dir,
        &[
            "retrieval",
            "--sut",
            "recorded",
            "--recorded",
            p.to_str().unwrap(),
            "-q",
        ],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("$.observations_file"), "{}", stderr(&o));
}

/// A shard whose system could not be measured exits 3 with its partial report; merging it
/// is a run that could not be measured either (exit 3, the shard's failure named), never a
/// score over the other shards alone.
#[test]
fn a_shard_that_could_not_measure_makes_the_merge_exit_3() {
    let _shared = SURVIVOR_CHECK.read().unwrap_or_else(|p| p.into_inner());
    let d = tempdir();
    let dir = d.path();
    let o = evalgate(dir, &["retrieval", "-q", "--shard", "1/2", "--out", "s1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // nothing listens on port 1
    let o = evalgate(
        dir,
        &[
            "retrieval",
            "-q",
            "--shard",
            "2/2",
            "--out",
            "s2",
            "--sut",
            "mcp",
            "--url",
            "http://127.0.0.1:1/mcp",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert_eq!(report(dir, "s2")["gate"]["verdict"], "error");
    let o = evalgate(
        dir,
        &[
            "merge",
            "s1/report.json",
            "s2/report.json",
            "-q",
            "--out",
            "m",
        ],
    );
    // the two shards measured different systems: refused before anything is scored
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the system under test"),
        "{}",
        stderr(&o)
    );
    // the same system in both shards, one of which failed: exit 3 and the failure
    let o = evalgate(
        dir,
        &[
            "retrieval",
            "-q",
            "--shard",
            "1/2",
            "--out",
            "t1",
            "--sut",
            "mcp",
            "--url",
            "http://127.0.0.1:1/mcp",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let o = evalgate(
        dir,
        &[
            "merge",
            "t1/report.json",
            "s2/report.json",
            "-q",
            "--out",
            "m",
        ],
    );
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let m = report(dir, "m");
    assert_eq!(m["gate"]["verdict"], "error");
    assert!(m["failure"].is_object(), "{m}");
    assert!(m.get("shard").is_none());
}
