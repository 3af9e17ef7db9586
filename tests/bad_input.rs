//! Every class of bad dataset input: one clear message naming the file, the JSON path, the
//! line:column and what was expected; exit code 2; nothing written.

mod common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;

/// Runs `evalgate run` with the given dataset overrides and checks the failure contract.
fn fails(dir: &Path, flags: &[(&str, &Path)]) -> String {
    fails_under(dir, "lenient", flags)
}

/// As [`fails`], under the `strict` profile (our own authoring rules are errors).
fn fails_strict(dir: &Path, flags: &[(&str, &Path)]) -> String {
    fails_under(dir, "strict", flags)
}

fn fails_under(dir: &Path, profile: &str, flags: &[(&str, &Path)]) -> String {
    let mut args: Vec<String> = vec![
        "run".into(),
        "--out".into(),
        "out".into(),
        "--profile".into(),
        profile.into(),
    ];
    for (flag, p) in flags {
        args.push(flag.to_string());
        args.push(p.to_str().unwrap().to_string());
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = evalgate(dir, &argv);
    assert_eq!(
        code(&o),
        2,
        "stdout: {}\nstderr: {}",
        stdout(&o),
        stderr(&o)
    );
    assert!(
        !dir.join("out").exists(),
        "a report was written for bad input"
    );
    assert!(
        stdout(&o).is_empty(),
        "no table for bad input: {}",
        stdout(&o)
    );
    stderr(&o)
}

/// 1-based line of the first occurrence of `needle` in the file.
fn line_of(p: &Path, needle: &str) -> usize {
    let text = std::fs::read_to_string(p).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle present")
        + 1
}

#[test]
fn malformed_json_names_file_line_and_column() {
    let d = tempdir();
    let p = d.path().join("corpus.json");
    std::fs::write(
        &p,
        "{\n  \"version\": \"v\",\n  \"tools\": [\n    {\"tool_id\": \"a:b\",}\n  ]\n}\n",
    )
    .unwrap();
    let err = fails(d.path(), &[("--corpus", &p)]);
    assert!(err.contains(&format!("{}:4:", p.display())), "{err}");
    assert!(err.contains("malformed JSON"), "{err}");
}

#[test]
fn wrong_types_are_reported_at_their_path_and_every_bad_item_is_reported() {
    let d = tempdir();
    let mut g = shipped("golden.json");
    g["queries"][2]["labels"][0]["relevance"] = json!("2");
    g["queries"][5]["query"] = json!(42);
    let p = write_json(d.path(), "golden.json", &g);
    let err = fails(d.path(), &[("--golden", &p)]);
    assert!(
        err.contains("$.queries[2].labels[0].relevance")
            && err.contains("invalid type: string \"2\", expected u8"),
        "{err}"
    );
    assert!(
        err.contains("$.queries[5].query") && err.contains("expected a string"),
        "{err}"
    );
    let line = line_of(&p, "\"relevance\": \"2\"");
    assert!(
        err.contains(&format!("golden.json:{line}:")),
        "line {line} not named: {err}"
    );
}

#[test]
fn a_dangling_label_is_inv1() {
    let d = tempdir();
    let mut g = shipped("golden.json");
    g["queries"][3]["labels"][0]["tool_id"] = json!("nowhere:no_such_tool");
    let p = write_json(d.path(), "golden.json", &g);
    let err = fails(d.path(), &[("--golden", &p)]);
    assert!(
        err.contains("golden.dangling-label")
            && err.contains("nowhere:no_such_tool")
            && err.contains("$.queries[3].labels[0].tool_id"),
        "{err}"
    );
    let line = line_of(&p, "nowhere:no_such_tool");
    assert!(err.contains(&format!(":{line}:")), "{err}");
}

#[test]
fn duplicate_ids_are_reported_with_the_first_use() {
    let d = tempdir();
    let mut c = shipped("corpus.json");
    let first = c["tools"][0]["tool_id"].clone();
    c["tools"][7]["tool_id"] = first.clone();
    let mut g = shipped("golden.json");
    let q0 = g["queries"][0]["id"].clone();
    g["queries"][9]["id"] = q0;
    // keep the duplicated tool's server/tool fields consistent with its new id
    let (srv, tool) = first.as_str().unwrap().split_once(':').unwrap();
    c["tools"][7]["server"] = json!(srv);
    c["tools"][7]["tool"] = json!(tool);
    let cp = write_json(d.path(), "corpus.json", &c);
    let gp = write_json(d.path(), "golden.json", &g);
    let err = fails(d.path(), &[("--corpus", &cp), ("--golden", &gp)]);
    assert!(
        err.contains("corpus.duplicate-id") && err.contains("already used by $.tools[0]"),
        "{err}"
    );
    assert!(
        err.contains("golden.duplicate-id") && err.contains("already used by $.queries[0]"),
        "{err}"
    );
}

fn security_with(f: impl FnOnce(&mut Value)) -> Value {
    let mut s = shipped("security.json");
    f(&mut s);
    s
}

#[test]
fn a_missing_licence_is_refused() {
    let d = tempdir();
    let s = security_with(|s| s["entries"][0]["provenance"]["license"] = json!(""));
    let p = write_json(d.path(), "s.json", &s);
    let err = fails_strict(d.path(), &[("--security-corpus", &p)]);
    assert!(
        err.contains("security.missing-license") && err.contains("$.entries[0].provenance.license"),
        "{err}"
    );
    // and an absent field is a type error at the same object
    let s = security_with(|s| {
        s["entries"][1]["provenance"]
            .as_object_mut()
            .unwrap()
            .remove("license");
    });
    let p = write_json(d.path(), "s2.json", &s);
    let err = fails(d.path(), &[("--security-corpus", &p)]);
    assert!(
        err.contains("missing field `license`") && err.contains("$.entries[1].provenance"),
        "{err}"
    );
}

#[test]
fn a_restricted_licence_is_refused_and_the_allowlist_is_named() {
    let d = tempdir();
    let s = security_with(|s| s["entries"][4]["provenance"]["license"] = json!("CC-BY-NC-4.0"));
    let p = write_json(d.path(), "s.json", &s);
    let err = fails_strict(d.path(), &[("--security-corpus", &p)]);
    assert!(
        err.contains("security.restricted-license")
            && err.contains("CC-BY-NC-4.0")
            && err.contains("MIT, Apache-2.0"),
        "{err}"
    );
}

#[test]
fn a_query_naming_its_tool_is_refused() {
    let d = tempdir();
    let mut g = shipped("golden.json");
    let tool = g["queries"][0]["labels"][0]["tool_id"]
        .as_str()
        .unwrap()
        .split_once(':')
        .unwrap()
        .1
        .to_string();
    g["queries"][0]["query"] = json!(format!("please run {tool} for me"));
    let p = write_json(d.path(), "golden.json", &g);
    let err = fails_strict(d.path(), &[("--golden", &p)]);
    assert!(
        err.contains("golden.names-tool")
            && err.contains(&format!("{tool:?}"))
            && err.contains("$.queries[0].query"),
        "{err}"
    );
}

#[test]
fn label_category_disagreement_and_missing_hard_negative_coverage() {
    let d = tempdir();
    let s = security_with(|s| {
        let entries = s["entries"].as_array_mut().unwrap();
        let i = entries
            .iter()
            .position(|e| e["category"] == "tool_poisoning")
            .unwrap();
        entries[i]["label"] = json!("benign");
        entries.retain(|e| e["resembles"] != "shadowing");
    });
    let p = write_json(d.path(), "s.json", &s);
    let err = fails_strict(d.path(), &[("--security-corpus", &p)]);
    assert!(
        err.contains("security.label-category") && err.contains("requires label \"malicious\""),
        "{err}"
    );
    assert!(
        err.contains("security.hard-negative-coverage") && err.contains("none resembles shadowing"),
        "{err}"
    );
}

/// A server named `..` (or `.`) would be resolved away in a proxy's URL paths and fail the
/// live detectors as if the system had: it is bad input, named where it is written.
#[test]
fn a_server_named_dot_dot_is_bad_input() {
    let d = tempdir();
    let s = security_with(|s| {
        let entries = s["entries"].as_array_mut().unwrap();
        entries[0]["server"] = json!("..");
        entries[1]["peers"] = json!([{"server": ".", "tool": {"name": "t", "description": "d"}}]);
    });
    let p = write_json(d.path(), "s.json", &s);
    let err = fails_strict(d.path(), &[("--security-corpus", &p)]);
    for at in ["$.entries[0].server", "$.entries[1].peers[0].server"] {
        assert!(
            err.contains("security.server-name")
                && err.contains(at)
                && err.contains("cannot name a server"),
            "{at}: {err}"
        );
    }
}

#[test]
fn all_problems_of_all_files_are_reported_at_once() {
    let d = tempdir();
    let mut g = shipped("golden.json");
    g["queries"][1]["labels"] = json!([{"tool_id": "a:b", "relevance": 0}]);
    g["queries"][2]["labels"][0]["relevance"] = json!(7);
    g["queries"][4]["query"] = json!("   ");
    let gp = write_json(d.path(), "golden.json", &g);
    let s = security_with(|s| s["entries"][0]["provenance"]["license"] = json!("GPL-3.0"));
    let sp = write_json(d.path(), "s.json", &s);
    let files = [
        ("--golden", gp.as_path()),
        ("--security-corpus", sp.as_path()),
    ];
    let integrity = [
        "golden.no-relevant",
        "golden.dangling-label",
        "golden.relevance",
        "golden.empty-query",
    ];
    // lenient (the default): integrity rules are errors, the licence rule is not
    let err = fails(d.path(), &files);
    for rule in integrity {
        assert!(err.contains(rule), "{rule} missing from: {err}");
    }
    assert!(!err.contains("security.restricted-license"), "{err}");
    assert!(err.starts_with("4 dataset error(s)"), "{err}");
    // strict: all five at once
    let err = fails_strict(d.path(), &files);
    for rule in integrity.iter().chain(&["security.restricted-license"]) {
        assert!(err.contains(rule), "{rule} missing from: {err}");
    }
    assert!(err.starts_with("5 dataset error(s)"), "{err}");
}

#[test]
fn an_unreadable_file_and_a_bad_baseline_are_exit_2() {
    let d = tempdir();
    let missing = d.path().join("nope.json");
    let err = fails(d.path(), &[("--corpus", &missing)]);
    assert!(
        err.contains("nope.json") && err.contains("cannot read"),
        "{err}"
    );
    let b = d.path().join("b.json");
    std::fs::write(
        &b,
        "{\"schema_version\": 1, \"retrieval\": {\"retriever\": 3}}",
    )
    .unwrap();
    let err = fails(d.path(), &[("--baseline", &b)]);
    assert!(
        err.contains("b.json:1:") && err.contains("retrieval.retriever"),
        "{err}"
    );
}

#[test]
fn validate_reports_the_same_errors_with_exit_2() {
    let d = tempdir();
    let mut g = shipped("golden.json");
    g["queries"][0]["labels"][0]["tool_id"] = json!("not-an-id");
    let p = write_json(d.path(), "golden.json", &g);
    let o = evalgate(d.path(), &["validate", "--golden", p.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("golden.tool-id") && stderr(&o).contains("expected `server:tool`"),
        "{}",
        stderr(&o)
    );
}
