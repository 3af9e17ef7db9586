//! Per-tool diagnostics, for real: the v1 datasets, the embedded BM25, and one tool's
//! description copied onto another tool of the corpus. The copy takes the original's place in
//! the top 5 of a query the original answers, and every report says so: the pair (wanted = the
//! original, taken instead = the copy) is in report.json, and against the unedited corpus's
//! baseline it is a confusion new since the baseline in report.md, report.html and the
//! terminal. On the unedited corpus the pair is absent.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// The original: relevant to query aws_db-022 and fifth in its top 5 on the unedited corpus.
const ORIGINAL: &str = "aws_dataprocessing:manage_aws_glue_triggers";
/// The copy: sixth for that query on the unedited corpus; with the original's description its
/// name and parameters lift it above the original, which drops out of the top 5.
const COPY: &str = "aws_billing:list-cost-allocation-tag-backfill-history";
const QUERY: &str = "aws_db-022";

fn pair<'a>(r: &'a Value, wanted: &str, taken: &str) -> Option<&'a Value> {
    r["retrieval"]["tool_diagnostics"]["confusions"]
        .as_array()
        .expect("report.json has the confusion pairs")
        .iter()
        .find(|p| p["wanted"] == wanted && p["taken"] == taken)
}

fn tool<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["retrieval"]["tool_diagnostics"]["per_tool"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == id)
        .unwrap_or_else(|| panic!("{id} is in the per-tool table"))
}

/// The v1 datasets in `dir`, the copy's description replaced by the original's.
fn edited_v1(dir: &Path) {
    let v1 = root().join("datasets/v1");
    std::fs::create_dir_all(dir).unwrap();
    for f in ["golden.json", "security.json"] {
        std::fs::copy(v1.join(f), dir.join(f)).unwrap();
    }
    let mut corpus = read_json(&v1.join("corpus.json"));
    let tools = corpus["tools"].as_array_mut().unwrap();
    let description =
        tools.iter().find(|t| t["tool_id"] == ORIGINAL).unwrap()["description"].clone();
    let copy = tools.iter_mut().find(|t| t["tool_id"] == COPY).unwrap();
    assert_ne!(copy["description"], description);
    copy["description"] = description;
    write_json(dir, "corpus.json", &corpus);
}

#[test]
fn a_copied_description_is_reported_as_a_confusion_pair_and_as_new_since_the_baseline() {
    let d = tempdir();
    let dir = d.path();
    let v1 = root().join("datasets/v1");
    let run = |datasets: &Path, extra: &[&str], out: &str| {
        let mut args = vec![
            "retrieval",
            "--datasets",
            datasets.to_str().unwrap(),
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        let o = evalgate_default(dir, &args);
        assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
        (o, read_json(&dir.join(out).join("report.json")))
    };
    // the unedited corpus: the original is found for the query, and no such pair exists
    let (_, base) = run(&v1, &["--no-baseline", "-q"], "base");
    assert!(
        pair(&base, ORIGINAL, COPY).is_none(),
        "{}",
        base["retrieval"]["tool_diagnostics"]["confusions"]
    );
    let q = base["retrieval"]["per_query"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["id"] == QUERY)
        .unwrap();
    let top5: Vec<&str> = q["retrieved"].as_array().unwrap()[..5]
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(top5.contains(&ORIGINAL), "{top5:?}");
    assert_eq!(tool(&base, ORIGINAL)["found_in_top_5"], 1);
    assert!(
        base["retrieval"]["tool_diagnostics"]["confusions"]
            .as_array()
            .unwrap()
            .len()
            > 100,
        "BM25 confuses many tools on v1"
    );
    // the unedited run's baseline, pinned to the edited corpus (a baseline must name the
    // datasets it gates)
    let b = dir.join("b.json");
    let o = evalgate_default(
        dir,
        &[
            "baseline",
            "update",
            "--from",
            "base/report.json",
            "--output",
            b.to_str().unwrap(),
            "-q",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut baseline = read_json(&b);
    assert!(
        baseline["retrieval"]["confusions"][ORIGINAL]
            .get(COPY)
            .is_none(),
        "{}",
        baseline["retrieval"]["confusions"][ORIGINAL]
    );
    let ed = dir.join("edited");
    edited_v1(&ed);
    let (_, plain) = run(&ed, &["--no-baseline", "-q"], "plain");
    let corpus_sha = plain["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "corpus")
        .unwrap()["sha256"]
        .clone();
    baseline["datasets"]["corpus"]["sha256"] = corpus_sha;
    write_json(dir, "b.json", &baseline);
    // the edited corpus: the copy took the original's place in the query's top 5
    let (o, pr) = run(&ed, &["--baseline", b.to_str().unwrap()], "pr");
    let p = pair(&pr, ORIGINAL, COPY).expect("the pair (original, copy) is reported");
    assert_eq!(p["queries"], 1, "{p}");
    assert_eq!(p["examples"][0], QUERY, "{p}");
    assert_eq!(tool(&pr, ORIGINAL)["found_in_top_5"], 0);
    assert!(
        pr["retrieval"]["tool_diagnostics"]["never_found"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == ORIGINAL)
    );
    // new since the baseline, in the gate's section and every rendering
    let new = &pr["gate"]["new_confusions"];
    assert!(
        new["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["wanted"] == ORIGINAL && p["taken"] == COPY),
        "{new}"
    );
    assert!(
        new["total"].as_u64().unwrap() <= 20,
        "one edit, a few new pairs: {new}"
    );
    let md = std::fs::read_to_string(dir.join("pr/report.md")).unwrap();
    let start = md
        .find("**Confusions new since the baseline**")
        .expect("report.md lists the new confusions");
    let rest = &md[start + 2..];
    let section = &rest[..rest.find("\n**").unwrap_or(rest.len())];
    assert!(
        section.contains(&format!("| `{ORIGINAL}` | `{COPY}` | 1 | `{QUERY}` |")),
        "{section}"
    );
    let html = std::fs::read_to_string(dir.join("pr/report.html")).unwrap();
    assert!(
        html.contains("Confusions new since the baseline ("),
        "no section"
    );
    assert!(html.contains(&format!("<code>{COPY}</code>")));
    let out = stdout(&o);
    // (the worst new pair: ties are ordered by the ids, and the copy's comes first)
    assert!(
        out.contains(&format!(
            "new confusion: {ORIGINAL} missed, {COPY} in the top 5 instead (in 1 query)"
        )),
        "{out}"
    );
}
