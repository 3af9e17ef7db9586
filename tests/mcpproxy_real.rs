//! The real mcpproxy (smart-mcp-proxy/mcpproxy-go), end to end, at two pinned versions installed by
//! tests/setup-mcpproxy.sh (`go install …@v0.60.0` and `@v0.51.0`, else the tags' source tarballs,
//! cached in target/mcpproxy/).
//!
//! Where a version could not be installed (the Go module proxy refused it and the source build
//! failed) every test fails with the exact install error: nothing stands in for the real binary,
//! and no test passes without it. `bash scripts/test.sh` (the README's test command) leaves this
//! binary out instead, visibly and counted as skipped, when not under CI=true.
//! `EVALGATE_MCPPROXY_V0_60_0` and `EVALGATE_MCPPROXY_V0_51_0` name binaries built elsewhere.
//!
//! Every test asserts numbers, not only exit codes, and prints the figures it measured.

mod common;
use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CURRENT: &str = "v0.60.0";
/// The last release before v0.52.0 (bare tool names in retrieve_tools).
const OLD: &str = "v0.51.0";

/// Held for the whole of each test: the tests run one at a time. Each launches mcpproxy over up
/// to 101 replayed servers and waits on it with bounded timeouts; on 2 cores, seven of them at
/// once made a loaded machine's waits the thing measured.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ALONE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The binary of `version`; fails the test, with the install error, when there is none.
fn mcpproxy(version: &str) -> PathBuf {
    let var = format!(
        "EVALGATE_MCPPROXY_{}",
        version.to_uppercase().replace('.', "_")
    );
    if let Some(p) = std::env::var_os(&var) {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "{var} names {}, which does not exist",
            p.display()
        );
        return p;
    }
    let dir = std::env::var_os("EVALGATE_MCPPROXY_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/mcpproxy"))
        .join(version);
    let bin = dir.join("mcpproxy");
    if bin.is_file() {
        return bin;
    }
    let why = std::fs::read_to_string(dir.join("UNAVAILABLE"))
        .unwrap_or_else(|_| "tests/setup-mcpproxy.sh has not run".into());
    panic!(
        "mcpproxy {version} is not installed here, so this test cannot run (bash scripts/test.sh \
         skips it, counted, outside CI): {why}"
    );
}

fn curl_json(args: &[&str]) -> Option<Value> {
    let o = Command::new("curl")
        .args(["-s", "--max-time", "10"])
        .args(args)
        .output()
        .ok()?;
    serde_json::from_slice(&o.stdout).ok()
}

/// A real mcpproxy started by the test over replayed servers; stopped (SIGTERM, then SIGKILL)
/// when dropped.
struct Up {
    child: Child,
    base: String,
    key: String,
    _dir: tempfile::TempDir,
}

impl Up {
    /// `evalgate retrieval` against this proxy over MCP (`/mcp`) or REST (`/api/v1/index/search`).
    fn search(&self, dir: &Path, kind: &str, out: &str, v1: bool) -> Value {
        let url = match kind {
            "mcp" => format!("{}/mcp", self.base),
            _ => format!("{}/api/v1/index/search", self.base),
        };
        let header = format!("X-API-Key:{}", self.key);
        run_on(
            dir,
            &[
                "retrieval",
                "--sut",
                kind,
                "--url",
                &url,
                "--header",
                &header,
                "--no-baseline",
                "--robustness",
                "off",
                "--out",
                out,
            ],
            v1,
        )
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(15) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn corpus_of(path: &Path) -> evalgate::pipeline::dataset::Corpus {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Starts `bin serve` over replays of `corpus` (quarantine off) and waits until its catalog is
/// exactly the corpus and REST answers to a few queries are the same twice in a row.
fn start(bin: &Path, corpus: &evalgate::pipeline::dataset::Corpus) -> Up {
    let dir = tempdir();
    let files =
        evalgate::pipeline::sut::launch::write_server_corpora(corpus, &dir.path().join("replay"))
            .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let key = "evalgate-test-key".to_string();
    let data = dir.path().join("data");
    let cfg = evalgate::pipeline::sut::launch::proxy_config(
        &evalgate::pipeline::sut::launch::corpus_upstreams(
            &files,
            evalgate::pipeline::replay::ServedNames::Bare,
        ),
        &evalgate_bin(),
        &listen,
        &data,
        &key,
        evalgate::pipeline::sut::launch::Quarantine::Off,
    );
    let cfg_path = write_json(dir.path(), "mcpproxy.json", &cfg);
    let log = std::fs::File::create(dir.path().join("mcpproxy.log")).unwrap();
    let mut cmd = Command::new(bin);
    // killed by the kernel with this test's thread, so a killed test binary leaves no mcpproxy
    evalgate::infra::process::die_with_evalgate(&mut cmd);
    let child = cmd
        .args(["serve", "--config"])
        .arg(&cfg_path)
        .arg("--data-dir")
        .arg(&data)
        .args(["--listen", &listen, "--log-level", "info"])
        .env("MCPPROXY_API_KEY", &key)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut up = Up {
        child,
        base: format!("http://{listen}"),
        key,
        _dir: dir,
    };
    let want: BTreeSet<String> = corpus.tools.iter().map(|t| t.tool_id.to_string()).collect();
    let header = format!("X-API-Key: {}", up.key);
    let start = Instant::now();
    let limit = Duration::from_secs(60 + want.len() as u64 / 10);
    let mut restarted = BTreeSet::new();
    let mut rediscovered = BTreeSet::new();
    let mut lacking: std::collections::BTreeMap<String, Instant> = Default::default();
    loop {
        if let Ok(Some(status)) = up.child.try_wait() {
            panic!("mcpproxy exited ({status}) before it was ready");
        }
        let have: BTreeSet<String> =
            curl_json(&["-H", &header, &format!("{}/api/v1/tools", up.base)])
                .and_then(|v| v["data"]["tools"].as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|t| {
                    Some(format!(
                        "{}:{}",
                        t["server_name"].as_str()?,
                        t["name"].as_str()?
                    ))
                })
                .collect();
        if have == want {
            break;
        }
        // the servers whose tools are missing
        let missing: BTreeSet<&str> = want
            .difference(&have)
            .filter_map(|id| id.split(':').next())
            .collect();
        let servers = || {
            curl_json(&["-H", &header, &format!("{}/api/v1/servers", up.base)])
                .and_then(|v| v["data"]["servers"].as_array().cloned())
                .unwrap_or_default()
        };
        let post = |name: &str, action: &str| {
            let url = format!("{}/api/v1/servers/{name}/{action}", up.base);
            curl_json(&["-X", "POST", "-H", &header, &url])
        };
        // On a loaded machine mcpproxy can give up on a server (CI, 2 cores: 1 of 101 servers
        // still missing after 326 s). Once, half way in, ask mcpproxy to restart each missing
        // server it reports failed (not connected, with an error), as its user would.
        if start.elapsed() > limit / 2 {
            for s in servers() {
                let name = s["name"].as_str().unwrap_or_default().to_string();
                let failed = s["connected"] != true
                    && !s["last_error"].as_str().unwrap_or_default().is_empty();
                if missing.contains(name.as_str()) && failed && restarted.insert(name.clone()) {
                    let answer = post(&name, "restart");
                    eprintln!(
                        "test harness: {name} failed ({}) after {:.0} s, restarted it: {answer:?}",
                        s["last_error"],
                        start.elapsed().as_secs_f64()
                    );
                }
            }
        }
        // mcpproxy fills its catalog from a discovery that, on a loaded machine, can miss a
        // connected server until its next sweep 5 minutes later (CI, 2 cores: 13 of 101). Ask
        // it to discover a connected server's tools once they have been missing for 15 s, as
        // evalgate's own wait does.
        let connected: BTreeSet<String> = servers()
            .iter()
            .filter(|s| s["connected"] == true)
            .filter_map(|s| s["name"].as_str().map(str::to_string))
            .collect();
        lacking.retain(|s, _| missing.contains(s.as_str()) && connected.contains(s));
        for name in missing.iter().filter(|s| connected.contains(**s)) {
            let since = *lacking.entry(name.to_string()).or_insert_with(Instant::now);
            if since.elapsed() > Duration::from_secs(15) && rediscovered.insert(name.to_string()) {
                let answer = post(name, "discover-tools");
                eprintln!(
                    "test harness: {name} connected without its tools after {:.0} s, asked to discover them: {answer:?}",
                    start.elapsed().as_secs_f64()
                );
            }
        }
        if start.elapsed() >= limit {
            let status: Vec<String> = servers()
                .iter()
                .filter(|s| missing.contains(s["name"].as_str().unwrap_or("")))
                .map(|s| {
                    format!(
                        "{} connected={} tools={} error={}",
                        s["name"], s["connected"], s["tool_count"], s["last_error"]
                    )
                })
                .collect();
            let log =
                std::fs::read_to_string(up._dir.path().join("mcpproxy.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            let mut server_logs = String::new();
            for s in &missing {
                let p = data.join("logs").join(format!("server-{s}.log"));
                if let Ok(t) = std::fs::read_to_string(&p) {
                    let lines: Vec<&str> = t.lines().rev().take(30).collect();
                    server_logs += &format!(
                        "\n--- {} (last 30 lines) ---\n{}",
                        p.display(),
                        lines.into_iter().rev().collect::<Vec<_>>().join("\n")
                    );
                }
            }
            panic!(
                "catalog never complete: {} of {} tools; missing servers {missing:?}: {status:?}\n\
                 --- mcpproxy log (last 60 lines) ---\n{}{server_logs}",
                have.len(),
                want.len(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    // the index may lag the catalog: wait until searches answer the same twice
    let probe = || -> Vec<Value> {
        ["read a file", "create an issue", "current time"]
            .iter()
            .map(|q| {
                curl_json(&[
                    "-G",
                    "-H",
                    &header,
                    "--data-urlencode",
                    &format!("q={q}"),
                    "--data-urlencode",
                    "limit=20",
                    &format!("{}/api/v1/index/search", up.base),
                ])
                .unwrap_or(Value::Null)
            })
            .collect()
    };
    let mut last = probe();
    for _ in 0..30 {
        std::thread::sleep(Duration::from_secs(1));
        let now = probe();
        if now == last {
            eprintln!(
                "mcpproxy ready over {} tools after {:.1} s",
                want.len(),
                start.elapsed().as_secs_f64()
            );
            return up;
        }
        last = now;
    }
    let _ = up.child.kill();
    panic!("mcpproxy's search answers never settled");
}

fn run(dir: &Path, args: &[&str]) -> Value {
    run_on(dir, args, false)
}

/// Runs evalgate (exit 0 expected) on the v0 datasets, or on the embedded v1 ones, and returns
/// the report of `--out`.
fn run_on(dir: &Path, args: &[&str], v1: bool) -> Value {
    let o = if v1 {
        evalgate_default(dir, args)
    } else {
        evalgate(dir, args)
    };
    assert_eq!(
        code(&o),
        0,
        "evalgate {args:?}: stdout {} stderr {}",
        stdout(&o),
        stderr(&o)
    );
    let out = args
        .iter()
        .position(|a| *a == "--out")
        .map(|i| args[i + 1])
        .expect("--out given");
    read_json(&dir.join(out).join("report.json"))
}

fn metric(r: &Value, m: &str) -> f64 {
    r["retrieval"]["metrics"][m]["mean"].as_f64().unwrap()
}

/// query id → ranked ids of the first run.
fn ranked(r: &Value) -> BTreeMap<String, Vec<String>> {
    r["retrieval"]["observations"]["runs"][0]["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["id"].as_str().unwrap().to_string(),
                q["ranked"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

fn figures(label: &str, r: &Value) {
    let lat = &r["retrieval"]["latency_ms"];
    eprintln!(
        "{label}: R@1 {:.4} R@5 {:.4} R@10 {:.4} MRR {:.4} nDCG@10 {:.4} MAP {:.4} · p50 {} ms p95 {} ms",
        metric(r, "recall_at_1"),
        metric(r, "recall_at_5"),
        metric(r, "recall_at_10"),
        metric(r, "mrr"),
        metric(r, "ndcg_at_10"),
        metric(r, "map"),
        lat["p50"],
        lat["p95"]
    );
}

/// Every ranked id is a corpus id, no list repeats one, none is starved.
fn assert_sound(r: &Value, corpus: &evalgate::pipeline::dataset::Corpus) {
    let ids: BTreeSet<String> = corpus.tools.iter().map(|t| t.tool_id.to_string()).collect();
    for (q, list) in ranked(r) {
        let set: BTreeSet<&String> = list.iter().collect();
        assert_eq!(set.len(), list.len(), "query {q} repeats an id: {list:?}");
        for id in &list {
            assert!(ids.contains(id), "query {q}: {id} is not a corpus id");
        }
    }
}

fn v0_corpus_path() -> PathBuf {
    root().join("datasets/v0/corpus.json")
}

/// Launch (`--sut mcpproxy`): catalog readiness, then the same proxy searched over MCP
/// `retrieve_tools` and over REST `/api/v1/index/search`; both ranked lists recorded and compared.
#[test]
fn v0_launch_and_mcp_and_rest_rankings_of_the_real_mcpproxy() {
    let _alone = one_at_a_time();
    let bin = mcpproxy(CURRENT);
    let d = tempdir();
    let bin_s = bin.to_str().unwrap();
    // evalgate's own launch: readiness, probes, the measured run
    let launched = run(
        d.path(),
        &[
            "retrieval",
            "--mcpproxy-bin",
            bin_s,
            "--no-baseline",
            "--out",
            "launch",
        ],
    );
    figures("mcpproxy v0.60.0 launched, v0", &launched);
    let corpus = corpus_of(&v0_corpus_path());
    assert_sound(&launched, &corpus);
    assert_eq!(launched["retrieval"]["queries"], 109);
    let r5 = metric(&launched, "recall_at_5");
    assert!((0.45..0.70).contains(&r5), "R@5 {r5}");

    // a proxy the test started: MCP and REST against the same index
    let up = start(&bin, &corpus);
    let mcp = up.search(d.path(), "mcp", "mcp", false);
    let rest = up.search(d.path(), "rest", "rest", false);
    figures("mcpproxy v0.60.0 over MCP retrieve_tools", &mcp);
    figures("mcpproxy v0.60.0 over REST index/search", &rest);
    assert_sound(&rest, &corpus);
    let (a, b) = (ranked(&mcp), ranked(&rest));
    assert_eq!(a.len(), 109);
    let same = a.iter().filter(|(q, l)| b.get(*q) == Some(l)).count();
    let same_top10 = a
        .iter()
        .filter(|(q, l)| {
            b.get(*q)
                .is_some_and(|m| m.iter().take(10).eq(l.iter().take(10)))
        })
        .count();
    eprintln!(
        "MCP vs REST: {same}/109 ranked lists identical, {same_top10}/109 identical in the top 10; list lengths MCP {} REST {}",
        a.values().map(Vec::len).sum::<usize>(),
        b.values().map(Vec::len).sum::<usize>()
    );
    // both paths search the same bleve index: identical lists, identical metrics
    assert_eq!(a, b, "MCP and REST rankings differ");
    assert_eq!(mcp["retrieval"]["metrics"], rest["retrieval"]["metrics"]);
    // and the launched run measured the same system
    assert_eq!(ranked(&launched), a);
}

/// SC-003 on the real proxy: a corpus without three labelled tools is served, the frozen corpus
/// is scored (the catalog check names the three, and measures because a partial catalog is
/// allowed): each of their queries' recall drops to 0. SC-007: two fresh launches reproduce each other.
#[test]
fn sc003_and_sc007_on_the_real_mcpproxy() {
    let _alone = one_at_a_time();
    let bin = mcpproxy(CURRENT);
    let d = tempdir();
    let bin_s = bin.to_str().unwrap();
    let args = |out: &'static str| -> Vec<&str> {
        vec![
            "retrieval",
            "--mcpproxy-bin",
            bin_s,
            "--no-baseline",
            "--robustness",
            "off",
            "--out",
            out,
        ]
    };
    let first = run(d.path(), &args("first"));
    let second = run(d.path(), &args("second"));
    // SC-007: identical rankings and metrics from two fresh proxies
    assert_eq!(ranked(&first), ranked(&second));
    assert_eq!(
        first["retrieval"]["metrics"],
        second["retrieval"]["metrics"]
    );
    eprintln!(
        "SC-007: two launches, {} queries, identical lists; R@5 {:.4} both",
        ranked(&first).len(),
        metric(&first, "recall_at_5")
    );

    // SC-003: the single-label queries that mcpproxy answers in its top 10
    let golden = shipped("golden.json");
    let per_query = first["retrieval"]["per_query"].as_array().unwrap();
    let mut chosen = Vec::new();
    for (q, pq) in golden["queries"].as_array().unwrap().iter().zip(per_query) {
        let relevant: Vec<&str> = q["labels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["relevance"].as_u64().unwrap() >= 1)
            .map(|l| l["tool_id"].as_str().unwrap())
            .collect();
        if relevant.len() == 1 && pq["metrics"]["recall_at_10"].as_f64().unwrap() > 0.0 {
            chosen.push((
                q["id"].as_str().unwrap().to_string(),
                relevant[0].to_string(),
            ));
        }
        if chosen.len() == 3 {
            break;
        }
    }
    assert_eq!(
        chosen.len(),
        3,
        "three single-label queries answered by mcpproxy"
    );
    let removed: BTreeSet<&str> = chosen.iter().map(|(_, t)| t.as_str()).collect();
    let mut corpus = corpus_of(&v0_corpus_path());
    corpus.tools.retain(|t| !removed.contains(&*t.tool_id));
    let up = start(&bin, &corpus);
    // the catalog guarantee names the three tools mcpproxy never showed and, allowed a partial
    // catalog, measures the frozen corpus anyway: the coverage travels with the report
    let partial = d.path().join("partial");
    std::fs::create_dir_all(&partial).unwrap();
    std::fs::write(
        partial.join("evalgate.toml"),
        "[sut.catalog]\nallow_partial = true\n",
    )
    .unwrap();
    let reduced = up.search(&partial, "mcp", "reduced", false);
    let coverage = &reduced["retrieval"]["catalog"];
    assert_eq!(
        (coverage["served"].as_u64(), coverage["seen"].as_u64()),
        (Some(112), Some(109)),
        "{coverage}"
    );
    let mut missing: Vec<&str> = coverage["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    missing.sort_unstable();
    assert_eq!(missing, removed.iter().copied().collect::<Vec<_>>());
    let by_id: BTreeMap<&str, &Value> = reduced["retrieval"]["per_query"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| (q["id"].as_str().unwrap(), &q["metrics"]))
        .collect();
    for (q, tool) in &chosen {
        let m = by_id[q.as_str()];
        eprintln!(
            "SC-003: {tool} removed: query {q} recall@10 {} → {}",
            per_query.iter().find(|p| p["id"] == q.as_str()).unwrap()["metrics"]["recall_at_10"],
            m["recall_at_10"]
        );
        for k in [
            "recall_at_1",
            "recall_at_5",
            "recall_at_10",
            "mrr",
            "ndcg_at_10",
        ] {
            assert_eq!(
                m[k].as_f64(),
                Some(0.0),
                "query {q} {k} with {tool} removed"
            );
        }
    }
    assert!(metric(&reduced, "recall_at_10") < metric(&first, "recall_at_10"));
}

/// Security: mcpproxy's own scan (its default checks, blocking and review tiers) as a
/// detector, and the live rug-pull through its tool quarantine, over the v0 security corpus.
#[test]
fn mcpproxy_scan_and_live_rug_pulls_per_category() {
    let _alone = one_at_a_time();
    let bin = mcpproxy(CURRENT);
    let d = tempdir();
    let r = run(
        d.path(),
        &[
            "security",
            "--mcpproxy-bin",
            bin.to_str().unwrap(),
            "--detectors",
            "proxy-scan,rug-pull-live",
            "--no-baseline",
            "--out",
            "sec",
        ],
    );
    let dets = r["security"]["detectors"].as_array().unwrap();
    let det = |n: &str| dets.iter().find(|x| x["detector"] == n).unwrap();

    let scan = det("proxy-scan");
    let c = &scan["counts"];
    eprintln!(
        "proxy-scan (blocking tier): counts {c} metrics {}",
        scan["metrics"]
    );
    for pc in scan["per_category"].as_array().unwrap() {
        eprintln!(
            "  {} flagged {}/{}",
            pc["category"], pc["flagged"], pc["total"]
        );
    }
    let n = |k: &str| c[k].as_u64().unwrap();
    assert_eq!(
        n("tp") + n("fp") + n("tn") + n("fn"),
        128,
        "a verdict per entry"
    );
    assert!(n("tp") > 0, "the scan catches some attacks: {c}");
    let fpr = scan["metrics"]["fpr"]["mean"].as_f64().unwrap();
    assert!(fpr < 0.25, "FPR {fpr}");
    // two tiers: the row gated by default counts what mcpproxy blocks (`hard` findings), the
    // `/review` row everything it flagged, warnings included
    assert_eq!(scan["tier"], "blocking");
    assert_eq!(scan["source"], "mcpproxy's own scan");
    let review = det("proxy-scan/review");
    assert_eq!(review["tier"], "review");
    let rc = &review["counts"];
    eprintln!("proxy-scan/review: counts {rc}");
    let rn = |k: &str| rc[k].as_u64().unwrap();
    assert!(rn("tp") >= n("tp") && rn("fp") >= n("fp"), "{c} {rc}");
    assert!(
        rn("tp") + rn("fp") > n("tp") + n("fp"),
        "mcpproxy flags some entries for review only: {c} {rc}"
    );
    for e in scan["entries"].as_array().unwrap() {
        if e["flagged_runs"].as_u64() == Some(1) {
            assert!(
                e["signals"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x.as_str().unwrap().ends_with("(blocking)")),
                "a blocked entry has a blocking finding: {e}"
            );
        }
    }
    // per-entry verdicts with the rule that fired
    let flagged_with_rules = scan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["flagged_runs"].as_u64() == Some(1))
        .all(|e| {
            e["signals"].as_array().is_some_and(|s| {
                s.iter().any(|x| {
                    x.as_str()
                        .is_some_and(|x| x.starts_with("detect.") || x.starts_with("tpa."))
                })
            })
        });
    assert!(flagged_with_rules, "every flag names mcpproxy's rule");

    let live = det("rug-pull-live");
    let per_cat = live["live"]["per_category"].as_array().unwrap();
    for pc in per_cat {
        eprintln!(
            "rug-pull-live {}: played {} reported {} blocked {} restored {}",
            pc["category"], pc["played"], pc["reported"], pc["blocked"], pc["restored"]
        );
    }
    // judged once mcpproxy has applied each switch, the counts are exact (5 runs of 5 alike):
    // mcpproxy v0.60.0 under manual trust holds every description change (8, blocked, and put
    // back on the revert) and re-approves every input-schema-only change (rp-002, rp-008,
    // rp-009, rp-014, and rp-006's second definition) and the annotations-only rp-003 without
    // a word; the 7 hard negatives do not change what mcpproxy hashes
    let counts = |category: &str| -> [u64; 5] {
        let c = per_cat.iter().find(|p| p["category"] == category).unwrap();
        ["played", "relisted", "reported", "blocked", "restored"].map(|k| c[k].as_u64().unwrap())
    };
    assert_eq!(counts("rug_pull"), [14, 14, 8, 8, 14], "{per_cat:?}");
    assert_eq!(counts("hard_negative"), [7, 7, 0, 0, 7], "{per_cat:?}");
    // the baseline call of every played tool went through: destructive tools included
    // (call_tool_destructive) and tools with required parameters (schema-valid arguments)
    let verdicts = r["security"]["observations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["detector"] == "rug-pull-live")
        .unwrap()["runs"][0]["verdicts"]
        .as_array()
        .unwrap()
        .clone();
    let played: Vec<&Value> = verdicts.iter().filter(|v| !v["live"].is_null()).collect();
    assert_eq!(played.len(), 21);
    for v in &played {
        let o = &v["live"];
        assert_eq!(o["baseline_ok"], true, "{}: {o}", v["entry_id"]);
        // every miss says why, in mcpproxy's terms; nothing was judged before it settled
        let note = o["note"].as_str().unwrap_or("");
        if o["reported"] == false {
            assert!(note.contains("not reported: "), "{}: {o}", v["entry_id"]);
        }
        if o["restored"] == false {
            assert!(note.contains("not restored: "), "{}: {o}", v["entry_id"]);
        }
        assert!(!note.contains("unsettled"), "{}: {o}", v["entry_id"]);
    }
    // an input-schema-only change is accepted: its approval hash moves and the tool stays
    // approved
    let rp002 = played.iter().find(|v| v["entry_id"] == "rp-002").unwrap();
    let note = rp002["live"]["note"].as_str().unwrap();
    // (after a note on mcpproxy's start-up race when the play had to restart the server)
    assert!(
        note.contains(
            "not reported: the switch changed inputSchema; the proxy then showed the tool \
             approved with its approval hash moved "
        ),
        "{note}"
    );
}

/// mcpproxy's own claim, reproduced: its gate (`go run ./cmd/scan-eval --corpus
/// detect_corpus_v1.json --gate`, v0.60.0) counts only findings at the blocking tier and reports
/// every gated attack caught (29 of 29 in unicode smuggling, decoded payloads, shadowing and
/// phrase injection) and no false positive among the 26 benign entries (21 hard negatives);
/// `capability_mismatch` (2 entries) is outside its gate. evalgate's `proxy-scan` over the same
/// file (mcpproxy's, unchanged, in tests/fixtures/spec065/) gives exactly those counts in its
/// blocking row, and in its review row what mcpproxy's full check set flags at any tier.
#[test]
fn proxy_scan_blocking_tier_equals_mcpproxys_own_gate_on_its_detect_corpus() {
    let _alone = one_at_a_time();
    let bin = mcpproxy(CURRENT);
    let d = tempdir();
    let corpus = root().join("tests/fixtures/spec065/detect_corpus_v1.json");
    let r = run(
        d.path(),
        &[
            "security",
            "--mcpproxy-bin",
            bin.to_str().unwrap(),
            "--security-corpus",
            corpus.to_str().unwrap(),
            "--detectors",
            "proxy-scan",
            "--no-baseline",
            "--out",
            "detect",
        ],
    );
    let dets = r["security"]["detectors"].as_array().unwrap();
    let det = |n: &str| dets.iter().find(|x| x["detector"] == n).unwrap();
    let counts = |n: &str| {
        let c = &det(n)["counts"];
        [
            "tp",
            "fp",
            "tn",
            "fn",
            "hard_negative_fp",
            "hard_negative_tn",
        ]
        .map(|k| c[k].as_u64().unwrap())
    };
    let per_cat = |n: &str| -> BTreeMap<String, (u64, u64)> {
        det(n)["per_category"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["category"].as_str().unwrap().to_string(),
                    (p["flagged"].as_u64().unwrap(), p["total"].as_u64().unwrap()),
                )
            })
            .collect()
    };
    eprintln!(
        "blocking: {:?} {:?}",
        counts("proxy-scan"),
        per_cat("proxy-scan")
    );
    eprintln!(
        "review: {:?} {:?}",
        counts("proxy-scan/review"),
        per_cat("proxy-scan/review")
    );
    // scan-eval --gate: recall 29/29 in the gated categories, 0 false positives of 26
    assert_eq!(counts("proxy-scan"), [29, 0, 26, 2, 0, 21]);
    let gated = per_cat("proxy-scan");
    for (cat, n) in [
        ("unicode_smuggling", 6),
        ("decoded_payload", 6),
        ("shadowing", 4),
        ("phrase_injection", 13),
    ] {
        assert_eq!(gated[cat], (n, n), "{cat}");
    }
    assert_eq!(gated["capability_mismatch"], (0, 2));
    // every finding, warnings included: 30 of 31 attacks, 11 of 26 benign (all hard negatives)
    assert_eq!(counts("proxy-scan/review"), [30, 11, 15, 1, 11, 10]);
}

/// mcpproxy's `shadowing.cross_server` check compares a tool with the tools of every other
/// connected server, so the scan layout decides what it sees. Each entry is scanned with exactly
/// its declared `peers`: a clone is caught against its declared original, the same clone with no
/// peers is judged alone, and the benign original is not flagged because an attack entry happens to
/// clone it (in one shared registry it was).
#[test]
fn mcpproxy_scan_sees_each_entry_with_its_declared_peers_only() {
    let _alone = one_at_a_time();
    let bin = mcpproxy(CURRENT);
    let d = tempdir();
    std::fs::write(
        d.path().join("evalgate.toml"),
        "[proxy_scan]\nscanner_ids = [\"tpa-descriptions\"]\n",
    )
    .unwrap();
    let fixture = root().join("tests/fixtures/security-peers.json");
    let r = run(
        d.path(),
        &[
            "security",
            "--mcpproxy-bin",
            bin.to_str().unwrap(),
            "--security-corpus",
            fixture.to_str().unwrap(),
            "--detectors",
            "proxy-scan",
            "--no-baseline",
            "--out",
            "peers",
        ],
    );
    let det = &r["security"]["detectors"][0];
    let by_id: BTreeMap<&str, &Value> = det["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e))
        .collect();
    for (id, e) in &by_id {
        eprintln!(
            "{id}: flagged {} signals {}",
            e["flagged_runs"], e["signals"]
        );
    }
    let flagged = |id: &str| by_id[id]["flagged_runs"].as_u64() == Some(1);
    let signals = |id: &str| by_id[id]["signals"].to_string();
    assert!(flagged("clone-attack"), "{}", signals("clone-attack"));
    assert!(
        signals("clone-attack").contains("shadowing"),
        "{}",
        signals("clone-attack")
    );
    assert!(flagged("ref-attack"), "{}", signals("ref-attack"));
    assert!(
        signals("ref-attack").contains("shadowing"),
        "{}",
        signals("ref-attack")
    );
    assert!(
        !flagged("clone-alone"),
        "no peers declared: {}",
        signals("clone-alone")
    );
    assert!(
        !flagged("clone-benign"),
        "the original is not a clone of the attack: {}",
        signals("clone-benign")
    );
}

/// The version before v0.52.0 answers retrieve_tools with bare names and a `server` field: the
/// default mapping reads whole result objects, so its rankings are sound corpus ids too.
#[test]
fn the_old_mcpproxy_gives_sound_rankings_through_the_bare_name_mapping() {
    let _alone = one_at_a_time();
    let bin = mcpproxy(OLD);
    let d = tempdir();
    let r = run(
        d.path(),
        &[
            "retrieval",
            "--mcpproxy-bin",
            bin.to_str().unwrap(),
            "--no-baseline",
            "--robustness",
            "off",
            "--out",
            "old",
        ],
    );
    figures("mcpproxy v0.51.0 launched, v0", &r);
    assert_sound(&r, &corpus_of(&v0_corpus_path()));
    let diag = &r["retrieval"]["diagnostics"];
    eprintln!("diagnostics {diag}");
    let r5 = metric(&r, "recall_at_5");
    assert!((0.40..0.70).contains(&r5), "R@5 {r5}");
    assert!(
        ranked(&r).values().filter(|l| !l.is_empty()).count() >= 100,
        "most queries answered"
    );
}

/// The README's mcpproxy command (`evalgate run --mcpproxy-bin … --baseline
/// baselines/mcpproxy-v0.60.0.json`, default detectors: mcpproxy's own quarantine) on the full
/// v1 corpus: 101 replayed servers, 2,665 tools, 586 queries through the real proxy, gated
/// against the committed baseline: an unchanged system reproduces it and passes; then the same
/// corpus searched over REST gives the same ranked lists.
#[test]
fn v1_the_real_mcpproxy_over_101_replayed_servers_reproduces_its_baseline() {
    let _alone = one_at_a_time();
    let bin = mcpproxy(CURRENT);
    let d = tempdir();
    let baseline = root().join("baselines/mcpproxy-v0.60.0.json");
    let o = evalgate_default(
        d.path(),
        &[
            "run",
            "--mcpproxy-bin",
            bin.to_str().unwrap(),
            "--baseline",
            baseline.to_str().unwrap(),
            "--robustness",
            "off",
            "--out",
            "v1",
        ],
    );
    assert_eq!(code(&o), 0, "{}\n{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("catalog ready (2665 tools)"), "{err}");
    let r = read_json(&d.path().join("v1/report.json"));
    assert_eq!(r["gate"]["verdict"], "pass", "{}", r["gate"]);
    // the security rows are mcpproxy's own quarantine, said so, and gated by the baseline
    let dets = r["security"]["detectors"].as_array().unwrap();
    assert_eq!(dets.len(), 1, "{dets:?}");
    assert_eq!(dets[0]["detector"], "rug-pull-live");
    assert_eq!(dets[0]["source"], "mcpproxy's own quarantine");
    assert!(
        stdout(&o).contains("mcpproxy's own quarantine"),
        "{}",
        stdout(&o)
    );
    let gated: Vec<&Value> = r["gate"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["subject"] == "detector:rug-pull-live" && c["status"] == "pass")
        .collect();
    assert_eq!(
        gated.len(),
        2,
        "FPR ceiling and recall floor: {}",
        r["gate"]
    );
    let b = read_json(&baseline);
    for m in ["recall_at_5", "mrr", "ndcg_at_10"] {
        let want = b["retrieval"]["metrics"][m]["value"].as_f64().unwrap();
        // (near-tied tools may come out in another order in another instance: see below)
        assert!(
            (metric(&r, m) - want).abs() < 0.005,
            "{m}: {} vs baseline {want}",
            metric(&r, m)
        );
    }
    figures("mcpproxy v0.60.0 launched, v1", &r);
    assert_eq!(r["retrieval"]["queries"], 586);
    let r5 = metric(&r, "recall_at_5");
    assert!((0.50..0.65).contains(&r5), "R@5 {r5}");
    let corpus = corpus_of(&root().join("datasets/v1/corpus.json"));
    assert_sound(&r, &corpus);

    // the same 101 servers behind a proxy the test started, searched over MCP and over REST:
    // identical lists from one proxy; against the launched run (another index instance, its
    // documents added in another order) identical top 10s and metrics
    let up = start(&bin, &corpus);
    let mcp = up.search(d.path(), "mcp", "v1-mcp", true);
    let rest = up.search(d.path(), "rest", "v1-rest", true);
    figures("mcpproxy v0.60.0 over REST, v1", &rest);
    let (a, b) = (ranked(&mcp), ranked(&rest));
    let same = a.iter().filter(|(q, l)| b.get(*q) == Some(l)).count();
    eprintln!(
        "v1, one proxy, MCP vs REST: {same}/{} ranked lists identical",
        a.len()
    );
    assert_eq!(a, b, "MCP and REST rankings of one proxy differ on v1");
    assert_eq!(mcp["retrieval"]["metrics"], rest["retrieval"]["metrics"]);
    // Two separately started proxies are not byte-identical on v1: each index adds documents in
    // the order its servers connect, and near-tied scores can come out in another order (seen:
    // 1 to 3 of 586 queries, ranks 7 to 18). The metrics agree to well within a gate tolerance.
    let launched = ranked(&r);
    let differ: Vec<&String> = launched
        .iter()
        .filter(|(q, l)| a.get(*q) != Some(*l))
        .map(|(q, _)| q)
        .collect();
    eprintln!(
        "v1, launched vs started proxy: {} of {} lists differ: {differ:?}",
        differ.len(),
        launched.len()
    );
    assert!(
        differ.len() <= 12,
        "more than 2 % of the lists differ: {differ:?}"
    );
    for q in &differ {
        let (x, y) = (&launched[*q], &a[*q]);
        let (sx, sy): (BTreeSet<&String>, BTreeSet<&String>) =
            (x.iter().collect(), y.iter().collect());
        let shared = sx.intersection(&sy).count();
        assert!(
            shared + 2 >= x.len().min(y.len()),
            "query {q}: not a re-ordering of near-ties: {x:?} vs {y:?}"
        );
    }
    for m in [
        "recall_at_1",
        "recall_at_5",
        "recall_at_10",
        "mrr",
        "ndcg_at_10",
        "map",
    ] {
        let (x, y) = (metric(&r, m), metric(&mcp, m));
        assert!((x - y).abs() < 0.005, "{m}: launched {x} vs started {y}");
    }
}
