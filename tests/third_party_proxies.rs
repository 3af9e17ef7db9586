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

/// The venv `bin` of an installed proxy (the test fails without it).
fn installed(pkg: &str, bin: &str) -> PathBuf {
    installed_in(pkg, "bin", bin)
}

/// A run that saw the whole v0 catalog (112/112) and measured the figures of the worked example
/// in docs/systems-under-test.md.
fn assert_measured(r: &Value, recall_at_5: f64, mrr: f64) {
    let cat = &r["retrieval"]["catalog"];
    assert_eq!(
        (cat["served"].as_u64(), cat["seen"].as_u64()),
        (Some(112), Some(112)),
        "{cat}"
    );
    let r5 = metric(r, "recall_at_5");
    assert!((r5 - recall_at_5).abs() < 0.02, "Recall@5 {r5}");
    let m = metric(r, "mrr");
    assert!((m - mrr).abs() < 0.02, "MRR {m}");
}

fn with_path(bin_dir: &Path) -> String {
    format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn run(dir: &Path, bin_dir: &Path, config: &Path, out: &str) -> (i32, Value, String) {
    run_env(dir, bin_dir, config, out, &[])
}

fn run_env(
    dir: &Path,
    bin_dir: &Path,
    config: &Path,
    out: &str,
    env: &[(&str, &str)],
) -> (i32, Value, String) {
    let path = with_path(bin_dir);
    let mut env = env.to_vec();
    env.push(("PATH", &path));
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
        &env,
    );
    let report = read_json(&dir.join(out).join("report.json"));
    (code(&o), report, stderr(&o))
}

/// The tests of this binary check for surviving processes: they run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The catalog check saw all 112 v0 tools through the system's own search.
fn assert_whole_catalog_by_search(r: &Value) {
    let cat = &r["retrieval"]["catalog"];
    assert_eq!(
        (cat["served"].as_u64(), cat["seen"].as_u64()),
        (Some(112), Some(112)),
        "{cat}"
    );
    assert_eq!(cat["method"], "search");
}

/// Two measurements of the same system agree: the same numbers and the same ranked lists.
fn assert_same_measurement(a: &Value, b: &Value) {
    assert_eq!(a["retrieval"]["metrics"], b["retrieval"]["metrics"]);
    assert_eq!(retrieved_lists(a), retrieved_lists(b));
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
    evalgate::infra::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let bin = installed("contextweaver", "contextweaver");
    let d = tempdir();
    let dir = d.path();
    let example = root().join("examples/contextweaver/evalgate.toml");

    let (c1, r1, e1) = run(dir, &bin, &example, "a");
    assert_eq!(c1, 0, "{e1}");
    assert_whole_catalog_by_search(&r1);
    let r5 = metric(&r1, "recall_at_5");
    // figures of the worked example in docs/systems-under-test.md (v0, beam width 10):
    // R@5 0.5183, MRR 0.4226
    assert!((r5 - 0.5183).abs() < 0.02, "Recall@5 {r5}");
    assert!((metric(&r1, "mrr") - 0.4226).abs() < 0.02);
    assert_eq!(r1["retrieval"]["diagnostics"]["empty_answers"], 0);

    // no state leaks between runs: a second run gives the same numbers and lists
    let (c2, r2, e2) = run(dir, &bin, &example, "b");
    assert_eq!(c2, 0, "{e2}");
    assert_same_measurement(&r1, &r2);
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
    // the proxy's own words are kept with the failure
    assert!(
        detail.contains("--- proxy log tail ---") || detail.contains("--- its stderr"),
        "{detail}"
    );
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
    evalgate::infra::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let bin = installed("dehydrator", "dehydrator-mcp");
    let d = tempdir();
    let dir = d.path();
    let example = root().join("examples/dehydrator/evalgate.toml");

    let (c1, r1, e1) = run(dir, &bin, &example, "a");
    assert_eq!(c1, 0, "{e1}");
    // figures of the worked example in docs/systems-under-test.md (v0): R@5 0.4587, MRR 0.3135
    assert_measured(&r1, 0.4587, 0.3135);
    let (c2, r2, e2) = run(dir, &bin, &example, "b");
    assert_eq!(c2, 0, "{e2}");
    assert_same_measurement(&r1, &r2);
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

/// slop-mcp 0.15.0 (npm): a Go binary reading KDL, stdio, `search_tools` answering JSON text
/// with the server in its own field. Measured from examples/slop-mcp alone, with its config
/// written from a KDL template or registered server by server through its own CLI (`setup`):
/// the same numbers. It connects its upstreams in the background after `initialize`, so its
/// index starts empty; with one upstream (github, 26 of the 112 tools) 5 s late, evalgate waits
/// and measures exactly what it measures warm.
#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs --features fault-injection"
)]
fn slop_mcp_measured_from_kdl_or_its_own_cli_and_its_warming_index_waited_for() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    evalgate::infra::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let bin = installed_in("slop-mcp", "node_modules/.bin", "slop-mcp");
    let d = tempdir();
    let dir = d.path();
    let ex = root().join("examples/slop-mcp");

    let (c1, r1, e1) = run(dir, &bin, &ex.join("evalgate.toml"), "kdl");
    assert_eq!(c1, 0, "{e1}");
    // figures of the worked example in docs/systems-under-test.md (v0): R@5 0.3028, MRR 0.2281
    assert_measured(&r1, 0.3028, 0.2281);

    // registered by its own CLI instead: `slop-mcp mcp add` once per server
    let (c2, r2, e2) = run(dir, &bin, &ex.join("evalgate.setup.toml"), "cli");
    assert_eq!(c2, 0, "{e2}");
    assert_same_measurement(&r1, &r2);

    // a slowly warming index: github's replay starts 5 s late; the probe keeps searching
    let started = Instant::now();
    let (c3, r3, e3) = run_env(
        dir,
        &bin,
        &ex.join("evalgate.toml"),
        "cold",
        &[("EVALGATE_REPLAY_FAULT", "slow-start=github:5")],
    );
    assert_eq!(c3, 0, "{e3}");
    assert!(started.elapsed() >= Duration::from_secs(5));
    assert!(
        e3.contains("tools seen"),
        "the probe reported the index filling: {e3}"
    );
    assert!(r3["retrieval"]["catalog"]["rounds"].as_u64().unwrap() >= 4);
    assert_same_measurement(&r1, &r3);
    assert_eq!(survivors(), Vec::<String>::new(), "after the runs");
}

/// mcp-orchestrator 0.1.2 (PyPI): stdio, a JSON `servers` list whose entries need `url` and
/// `transport` (`server_fields`), a top-level `version` (`proxy_config`), `tool_search` that
/// refuses queries over 200 characters and answers at most 10 results. Measured from
/// examples/mcp-orchestrator/evalgate.toml alone; two runs identical; its ranked lists equal
/// those an independent client (its own `mcp` package, tests/fixtures/orchestrator_client.py)
/// gets for the same 109 queries. Without the probe's length cap the catalog check names the
/// refused query, its length and the system's own words, and exits 3.
#[test]
fn mcp_orchestrator_measured_with_a_capped_probe_and_checked_against_a_direct_client() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    evalgate::infra::process::become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let bin = installed("mcp-orchestrator", "mcp-orchestrator");
    let d = tempdir();
    let dir = d.path();
    let example = root().join("examples/mcp-orchestrator/evalgate.toml");

    let (c1, r1, e1) = run(dir, &bin, &example, "a");
    assert_eq!(c1, 0, "{e1}");
    assert_whole_catalog_by_search(&r1);
    assert_eq!(r1["retrieval"]["requested"], 10, "[sut] results = 10");
    let (r5, mrr) = (metric(&r1, "recall_at_5"), metric(&r1, "mrr"));
    eprintln!("mcp-orchestrator 0.1.2, v0: R@5 {r5:.4} MRR {mrr:.4}");
    assert!(r5 > 0.2 && mrr > 0.2, "R@5 {r5} MRR {mrr}");
    let (c2, r2, e2) = run(dir, &bin, &example, "b");
    assert_eq!(c2, 0, "{e2}");
    assert_same_measurement(&r1, &r2);
    assert_eq!(survivors(), Vec::<String>::new(), "after success");

    // the same 109 queries through an independent client: the same lists, in order
    let o = std::process::Command::new(bin.join("python"))
        .arg(root().join("tests/fixtures/orchestrator_client.py"))
        .arg(evalgate_bin())
        .arg(root().join("datasets/v0"))
        .arg(dir.join("direct"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let direct: serde_json::Map<String, Value> = serde_json::from_slice(&o.stdout).unwrap();
    let per_query = r1["retrieval"]["per_query"].as_array().unwrap();
    assert_eq!(per_query.len(), direct.len());
    let mut same = 0;
    for q in per_query {
        let id = q["id"].as_str().unwrap();
        let theirs: Vec<String> = direct[id]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().replacen("__", ":", 1))
            .collect();
        let ours: Vec<String> = q["retrieved"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect();
        assert_eq!(ours, theirs, "{id}");
        same += 1;
    }
    eprintln!(
        "mcp-orchestrator: {same} of {} lists equal a direct client's",
        direct.len()
    );

    // its upstreams as URLs: evalgate serves every replay over Streamable HTTP on its own
    // port (`upstream_transport = "http"`), the config names each by `url`; the same lists
    let http = root().join("examples/mcp-orchestrator/evalgate.http.toml");
    let (ch, rh, eh) = run(dir, &bin, &http, "http");
    assert_eq!(ch, 0, "{eh}");
    assert_eq!(rh["retrieval"]["catalog"]["seen"], 112);
    assert_eq!(retrieved_lists(&rh), retrieved_lists(&r1));
    assert_eq!(
        survivors(),
        Vec::<String>::new(),
        "after the HTTP upstreams"
    );

    // without the cap: the refused probe query is named, with the system's own words
    let uncapped = std::fs::read_to_string(&example)
        .unwrap()
        .replace("probe_max_chars = 200\n", "");
    std::fs::write(dir.join("uncapped.toml"), uncapped).unwrap();
    let (c, r, e) = run(dir, &bin, &dir.join("uncapped.toml"), "c");
    assert_eq!(c, 3, "{e}");
    let detail = r["failure"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("Query exceeds 200 character limit"),
        "{detail}"
    );
    assert!(detail.contains("the catalog probe for "), "{detail}");
    assert!(detail.contains("probe_max_chars"), "{detail}");
    assert_eq!(survivors(), Vec::<String>::new(), "after a failure");
}
