//! No wrong number with exit 0, with real programs: a stdio MCP search
//! server with a per-session search budget (tests/fixtures/budget_mcp.py) that refuses in plain
//! words or crashes once it is spent, and a stand-in scanner whose output the filter does not
//! match. Each ends in the exact verdict, exit code and message; a partial run gates nothing.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// The catalog probe of the shipped corpus (112 tools) takes 112 + 16 searches.
const PROBE: usize = 128;

/// Writes `NAME.toml`: the budget server as `--sut mcp`, answers mapped by a generic filter
/// (every object with a server and a name) that reads a refusal in words as no tools.
fn budget_config(dir: &Path, name: &str, budget: usize, mode: &str) -> String {
    let file = format!("{name}.toml");
    std::fs::write(
        dir.join(&file),
        format!(
            "[sut]\nkind = \"mcp\"\nname = \"budget\"\n\n[sut.mcp]\ncommand = [\"python3\", {:?}, {:?}, \"{budget}\", {mode:?}]\npreset = \"none\"\nfilter = '.. | objects | select(has(\"server\") and has(\"name\"))'\n",
            root().join("tests/fixtures/budget_mcp.py").display().to_string(),
            root().join("datasets/v0/corpus.json").display().to_string(),
        ),
    )
    .unwrap();
    file
}

fn recall_at_5(r: &Value) -> f64 {
    r["retrieval"]["metrics"]["recall_at_5"]["mean"]
        .as_f64()
        .unwrap()
}

/// Item 1: the budget runs out after the catalog probe and 66 of the 109 golden queries; the
/// last 43 are refused in words that map to no tool (asked one at a time, so that they are the
/// last 43 in a row). Before: R@5 far below the true value, exit
/// 0, "still answering afterwards". Now: exit 3, kind `degraded`, nothing gated.
#[test]
fn a_proxy_that_stops_answering_after_the_catalog_check_is_the_system_failing() {
    let d = tempdir();
    let dir = d.path();
    // the true numbers: the budget never runs out
    let full = budget_config(dir, "full", 1_000_000, "refuse");
    let o = evalgate(
        dir,
        &[
            "retrieval",
            "--config",
            &full,
            "--no-baseline",
            "--out",
            "full",
            "-q",
        ],
    );
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let truth = read_json(&dir.join("full/report.json"));
    assert_eq!(truth["robustness"]["survived"], true);
    assert_eq!(truth["gate"]["verdict"], "no_baseline");

    let spent = budget_config(dir, "spent", PROBE + 66, "refuse");
    let o = evalgate(
        dir,
        &[
            "retrieval",
            "--config",
            &spent,
            "--no-baseline",
            "--concurrency",
            "1",
            "--out",
            "spent",
            "-q",
        ],
    );
    assert_eq!(code(&o), 3, "{}{}", stdout(&o), stderr(&o));
    let r = read_json(&dir.join("spent/report.json"));
    assert_eq!(r["gate"]["verdict"], "error");
    assert_eq!(r["failure"]["kind"], "degraded", "{}", r["failure"]);
    assert_eq!(r["failure"]["system"], "budget");
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "asked again after the measured runs, 16 of 16 queries it had answered came back empty or unanswered (query "
        ) && detail.contains("; 43 of its 109 answers were empty, the last 43 in a row. Its refusals would be scored as misses, so nothing is gated"),
        "{detail}"
    );
    let err = stderr(&o);
    assert!(
        err.starts_with(
            "SYSTEM UNDER TEST FAILED: degraded: budget stopped answering during the measurement: asked again after the measured runs, 16 of 16"
        ),
        "{err}"
    );
    // partial: what was measured is kept, nothing is gated, no probe ran after it
    assert!(r["gate"]["checks"].as_array().unwrap().is_empty());
    assert!(r["robustness"].is_null());
    assert!(recall_at_5(&r) < recall_at_5(&truth));

    // with --runs 3 the budget runs out in the first run: the same failure
    let o = evalgate(
        dir,
        &[
            "retrieval",
            "--config",
            &spent,
            "--no-baseline",
            "--concurrency",
            "1",
            "--runs",
            "3",
            "--out",
            "runs3",
            "-q",
        ],
    );
    assert_eq!(code(&o), 3, "{}{}", stdout(&o), stderr(&o));
    let r = read_json(&dir.join("runs3/report.json"));
    assert_eq!(r["failure"]["kind"], "degraded", "{}", r["failure"]);
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("; 261 of its 327 answers were empty, the last 261 in a row."),
        "{detail}"
    );
}

/// Item 1, robustness: the budget lasts through the measurement, the check after it and the
/// eleven probes, and runs out on the ordinary query after them. Its refusal in words is not
/// "still answering afterwards" (before: survived, because the transport answered).
#[test]
fn still_answering_after_the_probes_compares_content() {
    let d = tempdir();
    let dir = d.path();
    let cfg = budget_config(dir, "late", PROBE + 109 + 16 + 11, "refuse");
    let o = evalgate(
        dir,
        &[
            "retrieval",
            "--config",
            &cfg,
            "--no-baseline",
            "--out",
            "late",
        ],
    );
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let r = read_json(&dir.join("late/report.json"));
    assert!(r["failure"].is_null(), "{}", r["failure"]);
    let rb = &r["robustness"];
    assert_eq!(rb["survived"], false, "{rb}");
    assert_eq!(
        rb["survival"],
        "answered with no result, where the measurement got 20: the system stopped answering"
    );
    assert!(
        stdout(&o).contains(
            "and it did not answer an ordinary query afterwards (answered with no result, where the measurement got 20: the system stopped answering)"
        ),
        "{}",
        stdout(&o)
    );
}

/// Item 2: a scanner whose output the filter does not match (written for `.findings`, the
/// scanner prints `.results`) yields no finding at all. Before: recall 0, FPR 0, exit 0 under
/// `--no-baseline`. Now: exit 3, kind `garbage`, naming the filter and the tools the output
/// named. A scanner that really found nothing (no tool named) is still measured.
#[test]
fn a_scanner_filter_that_matches_nothing_is_the_system_failing() {
    let d = tempdir();
    let dir = d.path();
    let scanners = root().join("tests/fixtures/scanners");
    let run = |table: String, out: &str| {
        std::fs::write(
            dir.join("evalgate.toml"),
            format!("detectors = [\"scanner\"]\n\n[[scanner]]\n{table}\n"),
        )
        .unwrap();
        let o = evalgate(dir, &["security", "--no-baseline", "--out", out, "-q"]);
        let r = read_json(&dir.join(out).join("report.json"));
        (code(&o), r, stderr(&o))
    };
    let batch = |mode: &str| {
        format!(
            "name = \"wrong-format\"\ncommand = [\"python3\", {:?}, {mode:?}, \"{{file}}\"]\nfilter = '.findings[]? | {{tool: .tool, severity: .level}}'\n",
            scanners.join("batch.py").display().to_string()
        )
    };
    let (c, r, err) = run(batch("all"), "batch");
    assert_eq!(c, 3, "{err}");
    assert_eq!(r["gate"]["verdict"], "error");
    assert_eq!(r["failure"]["kind"], "garbage", "{}", r["failure"]);
    assert_eq!(r["failure"]["system"], "wrong-format");
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "the filter `.findings[]? | {tool: .tool, severity: .level}` yielded no finding, not even `flagged: false`, for any of the 128 entries, although the scanner's output names 123 of the scanned tools"
        ),
        "{detail}"
    );
    assert!(r["gate"]["checks"].as_array().unwrap().is_empty());
    assert!(
        err.starts_with("SYSTEM UNDER TEST FAILED: garbage: wrong-format returned something that is not a valid answer: the filter"),
        "{err}"
    );

    // per-entry mode: every answer line holds a verdict the filter never reads
    let lines = format!(
        "name = \"wrong-lines\"\nmode = \"lines\"\ncommand = [\"python3\", {:?}, \"keyword\"]\nfilter = 'select(.result == \"malicious\") | {{flagged: true}}'\n",
        scanners.join("lines.py").display().to_string()
    );
    let (c, r, err) = run(lines, "lines");
    assert_eq!(c, 3, "{err}");
    assert_eq!(r["failure"]["kind"], "garbage", "{}", r["failure"]);
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "the filter `select(.result == \"malicious\") | {flagged: true}` yielded no finding, not even `flagged: false`, for any of the 128 entries, although the scanner answered every one with data"
        ),
        "{detail}"
    );

    // a scanner that found nothing and names no tool is measured: recall 0 is its number
    let (c, r, err) = run(batch("none"), "none");
    assert_eq!(c, 0, "{err}");
    assert_eq!(
        r["security"]["detectors"][0]["metrics"]["recall"]["mean"],
        0.0
    );
}

/// Item 3: the system crashes after 22 of the 109 queries, against a baseline it would fail.
/// Before: the `regressions` output, the `::error` lines, the comment, the check run and
/// report.json's `gate.checks` listed failed checks computed on those 22 queries. Now: no
/// check, no regression, one annotation (the failure), and the report says why.
#[test]
fn a_partial_run_publishes_no_regression() {
    let d = tempdir();
    let dir = d.path();
    let cfg = budget_config(dir, "crash", PROBE + 22, "exit");
    // a baseline every partial measurement falls short of
    let mut b: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("baselines/v0.json")).unwrap())
            .unwrap();
    for m in b["retrieval"]["metrics"]
        .as_object_mut()
        .unwrap()
        .values_mut()
    {
        if m["direction"] == "higher" {
            m["value"] = 1.0.into();
        }
    }
    let baseline = write_json(dir, "perfect.json", &b);
    let event = pull_request_event(dir, 7, &"1".repeat(40), "acme/widgets");
    let outputs = dir.join("outputs.txt");
    let summary = dir.join("summary.md");
    let o = evalgate_env(
        dir,
        &[
            "retrieval",
            "--config",
            &cfg,
            "--baseline",
            baseline.to_str().unwrap(),
            "--comment",
            "always",
            "--out",
            "crash",
        ],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("ACT", "true"),
            ("GITHUB_REPOSITORY", "acme/widgets"),
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("GITHUB_EVENT_PATH", event.to_str().unwrap()),
            ("GITHUB_SHA", &"2".repeat(40)),
            ("GITHUB_RUN_ID", "1"),
            ("GITHUB_JOB", "evalgate"),
            ("GITHUB_OUTPUT", outputs.to_str().unwrap()),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(code(&o), 3, "{}{}", stdout(&o), stderr(&o));
    let r = read_json(&dir.join("crash/report.json"));
    assert_eq!(r["failure"]["kind"], "crashed", "{}", r["failure"]);
    let seen = r["retrieval"]["observations"]["runs"][0]["queries"]
        .as_array()
        .unwrap()
        .len();
    assert!(seen > 0 && seen <= 22, "{seen} queries measured");
    assert_eq!(r["gate"]["verdict"], "error");
    assert!(
        r["gate"]["checks"].as_array().unwrap().is_empty(),
        "{}",
        r["gate"]
    );
    assert!(
        r["gate"]["worst_queries"]
            .as_array()
            .is_none_or(Vec::is_empty)
    );
    let why = r["gate"]["summary"].as_str().unwrap();
    assert!(
        why.starts_with("the system under test could not be measured: budget crashed: ")
            && why.ends_with("; the report is partial and nothing is gated"),
        "{why}"
    );
    // the step outputs: no regression
    let out = std::fs::read_to_string(&outputs).unwrap();
    assert!(out.lines().any(|l| l == "regressions=[]"), "{out}");
    assert!(out.contains("verdict=error"), "{out}");
    // one ::error line: the failure, no failed check
    let printed = stdout(&o);
    let errors: Vec<&str> = printed
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("::error title=evalgate%3A system under test failed::budget crashed"),
        "{errors:?}"
    );
    // the comment and the check run (act: written, not posted) list no failed check
    let comment = std::fs::read_to_string(dir.join("crash/github-comment.md")).unwrap();
    let check = std::fs::read_to_string(dir.join("crash/github-check-run.json")).unwrap();
    for (what, text) in [("comment", &comment), ("check run", &check)] {
        assert!(!text.contains("regressed"), "{what}: {text}");
        assert!(!text.contains("FAIL"), "{what}: {text}");
        assert!(!text.contains("recall_at_5"), "{what}: {text}");
        assert!(text.contains("nothing is gated"), "{what}: {text}");
    }
    let check: Value = serde_json::from_str(&check).unwrap();
    assert_eq!(check["complete"]["conclusion"], "failure");
    let annotations: Vec<&Value> = check["annotation_batches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["annotations"].as_array().unwrap())
        .collect();
    assert_eq!(annotations.len(), 1, "{annotations:?}");
    assert_eq!(
        annotations[0]["title"],
        "evalgate: system under test failed"
    );
}

/// Item 1, a rate limit that recovers: the last 43 of the 109 queries are refused in words,
/// then the system answers again, so the queries asked again after the measurement are all
/// answered. Before: exit 0 with R@5 far below the true value. Now: the run of 43 empty answers
/// at the end, after none in the 66 before it, is the system failing (exit 3, `degraded`).
#[test]
fn a_run_of_empty_answers_at_the_end_is_the_system_failing_even_if_it_recovers() {
    let d = tempdir();
    let dir = d.path();
    let window = budget_config(dir, "window", PROBE + 66, "window");
    let o = evalgate(
        dir,
        &[
            "retrieval",
            "--config",
            &window,
            "--no-baseline",
            "--concurrency",
            "1",
            "--out",
            "window",
            "-q",
        ],
    );
    assert_eq!(code(&o), 3, "{}{}", stdout(&o), stderr(&o));
    let r = read_json(&dir.join("window/report.json"));
    assert_eq!(r["gate"]["verdict"], "error");
    assert_eq!(r["failure"]["kind"], "degraded", "{}", r["failure"]);
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("the last 43 of its 109 answers were empty, in a row, where ")
            && detail.contains("of the 66 before them were (by chance less likely than one in a million); asked again afterwards, it answered"),
        "{detail}"
    );
    assert!(r["gate"]["checks"].as_array().unwrap().is_empty());
}

/// A rate limit that opens and closes inside the measurement: queries 21 to 50 of the 109 are
/// refused in words, then the system answers again. The run of 30 empty answers, after none
/// outside it, is beyond chance, and its queries are answered when asked again: the system
/// stopped answering for a while (exit 3, `degraded`), not a system that rightly found nothing.
#[test]
fn a_run_of_empty_answers_inside_the_measurement_is_the_system_failing() {
    let d = tempdir();
    let dir = d.path();
    let file = budget_config(dir, "middle", PROBE + 20, "window");
    let toml = std::fs::read_to_string(dir.join(&file)).unwrap();
    std::fs::write(
        dir.join(&file),
        toml.replace("\"window\"]", "\"window\", \"30\"]"),
    )
    .unwrap();
    let o = evalgate(
        dir,
        &[
            "retrieval",
            "--config",
            &file,
            "--no-baseline",
            "--concurrency",
            "1",
            "--out",
            "middle",
            "-q",
        ],
    );
    assert_eq!(code(&o), 3, "{}{}", stdout(&o), stderr(&o));
    let r = read_json(&dir.join("middle/report.json"));
    assert_eq!(r["failure"]["kind"], "degraded", "{}", r["failure"]);
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("answers 21 to 50 of its 109 were empty, in a row, where ")
            && detail.contains("of those queries were answered: it stopped answering for a while"),
        "{detail}"
    );
    assert!(r["gate"]["checks"].as_array().unwrap().is_empty());
}
