//! Real third-party tool-search proxies, installed pinned from PyPI by tests/setup-mcp-servers.sh
//! (tests/proxies/*.lock), measured by the example evalgate.toml files alone over replayed
//! upstreams, and the failures evalgate must name instead of scoring.
//!
//! One binary of its own: the no-survivor checks see only this binary's children.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The venv `bin` of an installed proxy, or `None` (the test then says so and returns).
fn installed(pkg: &str, bin: &str) -> Option<PathBuf> {
    let dir = root().join("target/mcp-servers").join(pkg).join("bin");
    if dir.join(bin).is_file() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: {pkg} is not installed here (run tests/setup-mcp-servers.sh; .ci/run does)"
        );
        None
    }
}

fn with_path(bin_dir: &Path) -> String {
    format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn run(dir: &Path, bin_dir: &Path, config: &Path, out: &str) -> (i32, Value, String) {
    let path = with_path(bin_dir);
    let o = evalgate_env(
        dir,
        &[
            "retrieval",
            "--config",
            config.to_str().unwrap(),
            "--no-baseline",
            "--robustness",
            "off",
            "--out",
            out,
        ],
        &[("PATH", &path)],
    );
    let report = read_json(&dir.join(out).join("report.json"));
    (code(&o), report, stderr(&o))
}

/// The tests of this binary check for surviving processes: they run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Every query's retrieved list, in order.
fn lists(r: &Value) -> Vec<Value> {
    r["retrieval"]["per_query"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["retrieved"].clone())
        .collect()
}

fn metric(r: &Value, m: &str) -> f64 {
    r["retrieval"]["metrics"][m]["mean"].as_f64().unwrap()
}

/// contextweaver 0.18.2: YAML config from a template, stdio, `tool_browse`, measured from
/// examples/contextweaver/evalgate.toml alone; two runs give identical numbers; its default
/// router (beam width 3) cannot reach 22 of the 112 tools even by their own names, and evalgate
/// refuses to score that (exit 3 naming tools); a missing upstream is exit 3 naming the server.
#[test]
fn contextweaver_measured_by_configuration_alone_and_its_blind_spots_named() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    evalgate::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let Some(bin) = installed("contextweaver", "contextweaver") else {
        return;
    };
    let d = tempdir();
    let dir = d.path();
    let example = root().join("examples/contextweaver/evalgate.toml");

    let (c1, r1, e1) = run(dir, &bin, &example, "a");
    assert_eq!(c1, 0, "{e1}");
    let cat = &r1["retrieval"]["catalog"];
    assert_eq!(
        (cat["served"].as_u64(), cat["seen"].as_u64()),
        (Some(112), Some(112)),
        "{cat}"
    );
    assert_eq!(cat["method"], "search");
    let r5 = metric(&r1, "recall_at_5");
    // figures of the README's worked example (v0, beam width 10): R@5 0.5183, MRR 0.4226
    assert!((r5 - 0.5183).abs() < 0.02, "Recall@5 {r5}");
    assert!((metric(&r1, "mrr") - 0.4226).abs() < 0.02);
    assert_eq!(r1["retrieval"]["diagnostics"]["empty_answers"], 0);

    // no state leaks between runs: a second run gives the same numbers and lists
    let (c2, r2, e2) = run(dir, &bin, &example, "b");
    assert_eq!(c2, 0, "{e2}");
    assert_eq!(r1["retrieval"]["metrics"], r2["retrieval"]["metrics"]);
    assert_eq!(lists(&r1), lists(&r2));
    assert_eq!(survivors(), Vec::<String>::new(), "after success");

    // the same proxy with its default router: tools its search cannot reach are named, exit 3
    let ex = root().join("examples/contextweaver");
    std::fs::copy(ex.join("gateway.yaml.j2"), dir.join("gateway.yaml.j2")).unwrap();
    let toml = std::fs::read_to_string(&example)
        .unwrap()
        .replace(", \"--beam-width\", \"10\"", "");
    std::fs::write(dir.join("narrow.toml"), &toml).unwrap();
    let (c, r, e) = run(dir, &bin, &dir.join("narrow.toml"), "c");
    assert_eq!(c, 3, "{e}");
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("does not show the whole corpus"),
        "{detail}"
    );
    assert!(detail.contains("filesystem:read_file"), "{detail}");
    assert!(r["retrieval"].is_null() || r["retrieval"]["per_query"] == Value::Array(vec![]));

    // one upstream missing from the written config: exit 3 naming that server
    let tmpl = std::fs::read_to_string(ex.join("gateway.yaml.j2"))
        .unwrap()
        .replace(
            "{%- for s in servers %}",
            "{%- for s in servers if s.name != \"slack\" %}",
        );
    std::fs::write(dir.join("gateway.yaml.j2"), tmpl).unwrap();
    let toml = std::fs::read_to_string(&example).unwrap();
    std::fs::write(dir.join("no-slack.toml"), toml).unwrap();
    let (c, r, e) = run(dir, &bin, &dir.join("no-slack.toml"), "d");
    assert_eq!(c, 3, "{e}");
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(detail.contains("servers never seen: slack"), "{detail}");
    assert_eq!(survivors(), Vec::<String>::new(), "after failures");
}

/// dehydrator 0.3.1: stdio, configured through an environment variable ({servers_json}),
/// plain-text answers; measured from examples/dehydrator/evalgate.toml alone (the replayed
/// servers name their tools `<server>__<tool>`, as it needs names unique across servers); two
/// runs give identical numbers. With the corpus names as they are it refuses the tools that
/// share a name across servers and exits at start: evalgate exits 3 at once with its exit
/// status and stderr, never a number.
#[test]
fn dehydrator_measured_by_configuration_alone_and_its_start_failure_named() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    evalgate::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let Some(bin) = installed("dehydrator", "dehydrator-mcp") else {
        return;
    };
    let d = tempdir();
    let dir = d.path();
    let example = root().join("examples/dehydrator/evalgate.toml");

    let (c1, r1, e1) = run(dir, &bin, &example, "a");
    assert_eq!(c1, 0, "{e1}");
    let cat = &r1["retrieval"]["catalog"];
    assert_eq!(
        (cat["served"].as_u64(), cat["seen"].as_u64()),
        (Some(112), Some(112)),
        "{cat}"
    );
    // figures of the README's worked example (v0): R@5 0.4587, MRR 0.3135
    let r5 = metric(&r1, "recall_at_5");
    assert!((r5 - 0.4587).abs() < 0.02, "Recall@5 {r5}");
    assert!((metric(&r1, "mrr") - 0.3135).abs() < 0.02);
    let (c2, r2, e2) = run(dir, &bin, &example, "b");
    assert_eq!(c2, 0, "{e2}");
    assert_eq!(r1["retrieval"]["metrics"], r2["retrieval"]["metrics"]);
    assert_eq!(lists(&r1), lists(&r2));
    assert_eq!(survivors(), Vec::<String>::new(), "after success");

    // the corpus names as they are: it stops at start, named with its stderr
    let bare = std::fs::read_to_string(&example)
        .unwrap()
        .replace("served_names = \"prefixed\"\n", "");
    std::fs::write(dir.join("bare.toml"), bare).unwrap();
    let started = Instant::now();
    let (c, r, e) = run(dir, &bin, &dir.join("bare.toml"), "c");
    assert_eq!(c, 3, "{e}");
    assert!(started.elapsed() < Duration::from_secs(60));
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("the server exited (exit status: 1)"),
        "{detail}"
    );
    assert!(
        detail.contains("--- its stderr (last lines) ---"),
        "{detail}"
    );
    assert!(detail.contains("ExceptionGroup"), "{detail}");
    assert!(r["retrieval"].is_null());
    assert_eq!(survivors(), Vec::<String>::new(), "after a failure");
}
