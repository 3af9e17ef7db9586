//! Criterion benches of evalgate's hot paths, each measured beside a PEER in the same run, so that
//! what we report is a ratio on whatever machine runs it, not an absolute claim:
//!
//! | group          | measured                                                  | peer                                   |
//! |----------------|-----------------------------------------------------------|----------------------------------------|
//! | `score`        | 20,000 queries × 10 results: `score::retrieval` (the whole retrieval section) and the pure metric functions (`filter_ranked` + `score_query`) | clone + sort each query's 10 ids; one clone of the observations (touches every result once; ids are shared `Text`, so a clone copies no text) |
//! | `load_v1`      | shipped v1 corpus (2,665 tools, 8 MB): decode with JSON paths + validate; all three v1 files via `Datasets::load` | `serde_json::from_str::<Value>` of the same text |
//! | `load_scale`   | synthetic scale set (10,000 tools, 20,000 queries): `Datasets::load` from disk | read + `serde_json::from_str::<Value>` of the same files |
//! | `bm25_build`   | `Embedded::new` (tantivy in-RAM index) on v1 and on the scale corpus | tokenising the same field texts with the same `en_stem` analyser |
//! | `bm25_query`   | `Embedded::rank` for every v1 golden query (and 1,000 scale queries); `measure::retrieval` driving the same queries through the `Retriever` trait | a brute-force scan: every tool's word set against the query's words |
//!
//! Run: `cargo bench --bench evalgate -- --warm-up-time 1 --measurement-time 3`
//! (a filter such as `score` runs one group). The scale set is read from
//! `$EVALGATE_BENCH_SCALE` or `target/scale-set/t10000-q20000`, generated with
//! `python3 scripts/scale-set.py` when missing.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use evalgate::pipeline::dataset::{
    Corpus, DatasetPaths, Datasets, GoldenSet, Need, Source, load, validate,
};
use evalgate::pipeline::measure::{self, Limits, Progress};
use evalgate::pipeline::score;
use evalgate::pipeline::score::metrics;
use evalgate::pipeline::sut::embedded::{self, Embedded};
use evalgate::pipeline::sut::observe::RetrievalObservations;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const SCORE_QUERIES: usize = 20_000;
const SCORE_TOOLS: usize = 10_000;
const RESULTS: usize = 10;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn v1_text(name: &str) -> &'static str {
    match name {
        "corpus" => evalgate::pipeline::dataset::embedded::CORPUS_FILE.text(),
        "golden" => evalgate::pipeline::dataset::embedded::GOLDEN_FILE.text(),
        _ => evalgate::pipeline::dataset::embedded::SECURITY_FILE.text(),
    }
}

/// The synthetic scale set, generated on first use.
fn scale_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::var_os("EVALGATE_BENCH_SCALE")
            .map(PathBuf::from)
            .unwrap_or_else(|| root().join("target/scale-set/t10000-q20000"));
        if !dir.join("security.json").is_file() {
            eprintln!("generating the scale set into {}", dir.display());
            let ok = std::process::Command::new("python3")
                .arg(root().join("scripts/scale-set.py"))
                .args(["--tools", "10000", "--queries", "20000", "--out"])
                .arg(&dir)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "python3 scripts/scale-set.py failed");
        }
        dir
    })
}

fn load_dir(dir: &Path) -> Datasets {
    Datasets::load(
        &DatasetPaths::in_dir(dir),
        Need {
            retrieval: true,
            security: true,
        },
        evalgate::pipeline::dataset::Profile::Strict,
    )
    .unwrap_or_else(|e| panic!("{}: invalid datasets: {e}", dir.display()))
}

fn v1() -> &'static Datasets {
    static D: OnceLock<Datasets> = OnceLock::new();
    D.get_or_init(|| {
        Datasets::load(
            &DatasetPaths::default(),
            Need {
                retrieval: true,
                security: true,
            },
            evalgate::pipeline::dataset::Profile::Strict,
        )
        .expect("the embedded v1 datasets load")
    })
}

fn scale() -> &'static Datasets {
    static D: OnceLock<Datasets> = OnceLock::new();
    D.get_or_init(|| load_dir(scale_dir()))
}

/// A small deterministic generator (SplitMix64), so the bench needs no extra crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn tool_id(i: usize) -> String {
    format!("s{:04}:tool_{i:05}", i / 25)
}

/// 10,000 tools, 20,000 queries with 3 graded labels each (2, 1, 0), and one run of 10 results
/// per query: about half the relevant tools placed somewhere in the list, the rest random corpus
/// ids, with an occasional off-corpus id and duplicate so filtering has work to do. Built through
/// serde so that fields added to the dataset types do not break the bench.
fn synthetic_scoring() -> (Corpus, GoldenSet, RetrievalObservations) {
    let mut rng = Rng(65);
    let tools: Vec<Value> = (0..SCORE_TOOLS)
        .map(|i| json!({"tool_id": tool_id(i), "description": "synthetic"}))
        .collect();
    let corpus: Corpus =
        serde_json::from_value(json!({"version": "corpus_bench", "tools": tools})).unwrap();
    let mut queries = Vec::with_capacity(SCORE_QUERIES);
    let mut observed = Vec::with_capacity(SCORE_QUERIES);
    for q in 0..SCORE_QUERIES {
        let labels: Vec<usize> = (0..3).map(|_| rng.below(SCORE_TOOLS)).collect();
        let mut seen = HashSet::new();
        let labels: Vec<usize> = labels.into_iter().filter(|l| seen.insert(*l)).collect();
        let graded: Vec<Value> = labels
            .iter()
            .enumerate()
            .map(|(k, l)| {
                let relevance = [2, 1, 0][k];
                json!({"tool_id": tool_id(*l), "relevance": relevance})
            })
            .collect();
        let split = if q % 5 == 0 { "held_out" } else { "dev" };
        queries.push(json!({"id": format!("q{q:06}"), "query": "synthetic query", "labels": graded, "split": split}));
        let mut ranked: Vec<String> = (0..RESULTS)
            .map(|_| tool_id(rng.below(SCORE_TOOLS)))
            .collect();
        for l in &labels {
            if rng.below(2) == 0 {
                ranked[rng.below(RESULTS)] = tool_id(*l);
            }
        }
        if rng.below(20) == 0 {
            ranked[RESULTS - 1] = "elsewhere:not_in_corpus".into();
        }
        if rng.below(20) == 0 {
            ranked[RESULTS - 2] = ranked[0].clone();
        }
        observed.push(json!({"id": format!("q{q:06}"), "ranked": ranked, "latency_ms": 1.0 + rng.below(1000) as f64 / 100.0}));
    }
    let golden: GoldenSet = serde_json::from_value(
        json!({"version": "golden_bench", "corpus_version": "corpus_bench", "queries": queries}),
    )
    .unwrap();
    let obs: RetrievalObservations = serde_json::from_value(json!({
        "system": "synthetic",
        "requested": evalgate::pipeline::sut::DEPTH + evalgate::pipeline::sut::HEADROOM,
        "runs": [{"run": 1, "queries": observed}],
    }))
    .unwrap();
    (corpus, golden, obs)
}

fn bench_score(c: &mut Criterion) {
    let (corpus, golden, obs) = synthetic_scoring();
    let corpus_ids: HashSet<&str> = corpus.tools.iter().map(|t| t.tool_id.as_str()).collect();
    let run = &obs.runs[0].queries;
    let mut g = c.benchmark_group("score");
    g.throughput(Throughput::Elements(SCORE_QUERIES as u64));
    g.sample_size(20);
    // the observations move into the report: each iteration gets its own copy, made outside
    // the timed part
    g.bench_function("retrieval_report_20k_x10", |b| {
        b.iter_batched(
            || obs.clone(),
            |o| black_box(score::retrieval(o, &corpus, &golden)),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("metrics_filter_and_score_20k_x10", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            let lookup = &corpus_ids;
            for (qo, q) in run.iter().zip(&golden.queries) {
                let f = metrics::filter_ranked(&qo.ranked, lookup);
                let s = metrics::score_query(&q.labels, &f.ids);
                sum += s.ndcg_at_10;
            }
            black_box(sum)
        })
    });
    g.bench_function("peer_clone_observations_20k_x10", |b| {
        b.iter(|| black_box(obs.clone()))
    });
    g.bench_function("peer_clone_and_sort_each_list_20k_x10", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for qo in run {
                let mut v = qo.ranked.clone();
                v.sort_unstable();
                n += v[0].len();
            }
            black_box(n)
        })
    });
    g.finish();
}

fn bench_load_v1(c: &mut Criterion) {
    let text = v1_text("corpus");
    let mut g = c.benchmark_group("load_v1");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("corpus_decode_validate", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            let l = load::load::<Corpus>(
                Source::new("corpus.json", false, text),
                text.into(),
                &mut out,
            )
            .expect("v1 corpus decodes");
            validate::corpus(&l, &mut out);
            black_box((l.value.tools.len(), out.len()))
        })
    });
    g.bench_function("peer_corpus_serde_value", |b| {
        b.iter(|| black_box(serde_json::from_str::<Value>(text).unwrap()))
    });
    let all = ["corpus", "golden", "security"].map(v1_text);
    g.throughput(Throughput::Bytes(all.iter().map(|t| t.len() as u64).sum()));
    g.bench_function("all_three_datasets_load", |b| {
        b.iter(|| {
            black_box(
                Datasets::load(
                    &DatasetPaths::default(),
                    Need {
                        retrieval: true,
                        security: true,
                    },
                    evalgate::pipeline::dataset::Profile::Strict,
                )
                .unwrap(),
            )
        })
    });
    g.bench_function("peer_all_three_serde_value", |b| {
        b.iter(|| {
            for t in all {
                black_box(serde_json::from_str::<Value>(t).unwrap());
            }
        })
    });
    g.finish();
}

fn bench_load_scale(c: &mut Criterion) {
    let dir = scale_dir();
    let files: Vec<PathBuf> = evalgate::pipeline::dataset::DIR_FILES
        .iter()
        .map(|f| dir.join(f))
        .collect();
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
        .sum();
    let mut g = c.benchmark_group("load_scale");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("all_three_datasets_load_10k_tools_20k_queries", |b| {
        b.iter(|| black_box(load_dir(dir)))
    });
    g.bench_function("peer_read_and_serde_value", |b| {
        b.iter(|| {
            for f in &files {
                let t = std::fs::read_to_string(f).unwrap();
                black_box(serde_json::from_str::<Value>(&t).unwrap());
            }
        })
    });
    g.finish();
}

/// The four field texts `Embedded::new` indexes for each tool.
fn field_texts(corpus: &Corpus) -> Vec<[String; 4]> {
    corpus.tools.iter().map(embedded::field_texts).collect()
}

/// The peer of index building: the same texts through tantivy's `en_stem` analyser, counting
/// tokens (no postings, no segments).
fn tokenise_all(corpus: &Corpus) -> usize {
    let index = tantivy::Index::create_in_ram(tantivy::schema::Schema::builder().build());
    let mut analyzer = index.tokenizers().get("en_stem").unwrap();
    let mut n = 0;
    for fields in field_texts(corpus) {
        for text in &fields {
            let mut ts = analyzer.token_stream(text);
            ts.process(&mut |_| n += 1);
        }
    }
    n
}

fn bench_bm25_build(c: &mut Criterion) {
    let mut g = c.benchmark_group("bm25_build");
    g.sample_size(10);
    for (name, corpus) in [
        ("v1_2665_tools", &v1().corpus.as_ref().unwrap().value),
        ("scale_10000_tools", &scale().corpus.as_ref().unwrap().value),
    ] {
        g.throughput(Throughput::Elements(corpus.tools.len() as u64));
        g.bench_function(format!("{name}/embedded_new"), |b| {
            b.iter(|| black_box(Embedded::new(corpus).unwrap()))
        });
        g.bench_function(format!("{name}/peer_tokenise_same_text"), |b| {
            b.iter(|| black_box(tokenise_all(corpus)))
        });
    }
    g.finish();
}

/// Brute force: lower-cased word sets of every tool, scored by how many query words they hold.
struct Scan {
    ids: Vec<String>,
    words: Vec<HashSet<String>>,
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl Scan {
    fn new(corpus: &Corpus) -> Scan {
        let texts = field_texts(corpus);
        Scan {
            ids: corpus.tools.iter().map(|t| t.tool_id.clone()).collect(),
            words: texts
                .iter()
                .map(|f| f.iter().flat_map(|t| words(t)).collect())
                .collect(),
        }
    }
    fn rank(&self, query: &str, limit: usize) -> Vec<String> {
        let q: HashSet<String> = words(query).collect();
        let mut scored: Vec<(usize, usize)> = self
            .words
            .iter()
            .enumerate()
            .map(|(i, w)| (q.iter().filter(|t| w.contains(*t)).count(), i))
            .filter(|(s, _)| *s > 0)
            .collect();
        let k = limit.min(scored.len());
        if k > 0 && k < scored.len() {
            scored.select_nth_unstable_by(k - 1, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        }
        scored.truncate(k);
        scored.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .map(|(_, i)| self.ids[i].clone())
            .collect()
    }
}

fn bench_bm25_query(c: &mut Criterion) {
    let limit = evalgate::pipeline::sut::DEPTH + evalgate::pipeline::sut::HEADROOM;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut g = c.benchmark_group("bm25_query");
    g.sample_size(10);
    for (name, data, n) in [
        ("v1", v1(), usize::MAX),
        ("scale_10000_tools", scale(), 1000),
    ] {
        let corpus = &data.corpus.as_ref().unwrap().value;
        let golden = &data.golden.as_ref().unwrap().value;
        let queries: Vec<&str> = golden
            .queries
            .iter()
            .take(n)
            .map(|q| q.query.as_str())
            .collect();
        let subset: GoldenSet = GoldenSet {
            queries: golden.queries.iter().take(n).cloned().collect(),
            ..golden.clone()
        };
        let index = Embedded::new(corpus).unwrap();
        let scan = Scan::new(corpus);
        g.throughput(Throughput::Elements(queries.len() as u64));
        g.bench_function(format!("{name}/rank_top20"), |b| {
            b.iter(|| {
                for q in &queries {
                    black_box(index.rank(q, limit).unwrap());
                }
            })
        });
        g.bench_function(format!("{name}/measure_retrieval_concurrency4"), |b| {
            b.iter(|| {
                let (obs, err) = rt.block_on(measure::retrieval(
                    &index,
                    &subset,
                    1,
                    Limits {
                        request_timeout: std::time::Duration::from_secs(30),
                        concurrency: 4,
                        results: 20,
                    },
                    &mut Progress::new(false),
                ));
                assert!(err.is_none());
                black_box(obs)
            })
        });
        g.bench_function(format!("{name}/peer_bruteforce_scan_top20"), |b| {
            b.iter(|| {
                for q in &queries {
                    black_box(scan.rank(q, limit));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_score,
    bench_load_v1,
    bench_load_scale,
    bench_bm25_build,
    bench_bm25_query
);
criterion_main!(benches);
