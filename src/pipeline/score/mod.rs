//! Scoring: observations + labels → the retrieval and security sections of the report.
//! Pure functions over data; the metric definitions live in `metrics`.

pub mod diagnostics;
pub mod metrics;
pub mod model;
pub mod scorecard;
pub mod stats;

use crate::infra::text::Text;
use crate::pipeline::dataset::{Category, Corpus, Entry, GoldenSet, SecurityCorpus, Truth, count};
use crate::pipeline::score::metrics::{Confusion, DETECTION_METRICS, RETRIEVAL_METRICS};
use crate::pipeline::score::stats::{Summary, percentile};
use crate::pipeline::sut::DEPTH;
use crate::pipeline::sut::observe::{DetectorObservations, RetrievalObservations};
use model::*;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Scores recorded search results against the golden set. The observations move into the
/// report (it keeps them for re-scoring), so nothing is copied to keep them.
pub fn retrieval(
    obs: RetrievalObservations,
    corpus: &Corpus,
    golden: &GoldenSet,
) -> RetrievalReport {
    let corpus_ids: HashSet<&str> = corpus.tools.iter().map(|t| t.tool_id.as_str()).collect();
    let mut index = HashMap::new();
    for (i, q) in golden.queries.iter().enumerate() {
        index.entry(q.id.as_str()).or_insert(i);
    }
    let mut tools = diagnostics::Accumulator::default();
    let mut diag = RetrievalDiagnostics::default();
    // per metric (RETRIEVAL_METRICS order): the mean of each run, None for a run without queries
    let mut per_run_means: [Vec<Option<f64>>; RETRIEVAL_METRICS.len()] = Default::default();
    let mut per_query: Vec<QueryRuns> = vec![QueryRuns::default(); golden.queries.len()];
    let mut latencies = Vec::new();
    let mut runs_completed = 0;
    for run in &obs.runs {
        runs_completed += usize::from(run.queries.len() == golden.queries.len());
        let mut sums = [0.0; RETRIEVAL_METRICS.len()];
        let mut n = 0usize;
        for qo in &run.queries {
            let Some(&qi) = index.get(qo.id.as_str()) else {
                continue;
            };
            let q = &golden.queries[qi];
            let f = metrics::filter_ranked(&qo.ranked, &corpus_ids);
            diag.hard_negatives_in_top_5 += tools.add(run.run, qi, &q.id, &q.labels, &f.ids);
            diag.answers += 1;
            diag.empty_answers += usize::from(qo.ranked.is_empty());
            diag.off_corpus_results += f.off_corpus;
            diag.duplicate_results += f.duplicates;
            if f.ids.len() < DEPTH && qo.ranked.len() >= obs.requested && obs.requested > 0 {
                diag.starved_queries += 1;
            }
            let s = metrics::score_query(&q.labels, &f.ids).values();
            for (sum, v) in sums.iter_mut().zip(s) {
                *sum += v;
            }
            n += 1;
            per_query[qi].add(s, || {
                f.ids.iter().take(DEPTH).map(|&id| id.clone()).collect()
            });
            latencies.push(qo.latency_ms);
        }
        for (means, sum) in per_run_means.iter_mut().zip(sums) {
            means.push((n > 0).then(|| sum / n as f64));
        }
    }
    let per_query = query_rows(golden, per_query);
    let metrics = RETRIEVAL_METRICS
        .iter()
        .zip(per_run_means)
        .map(|(m, v)| (m.key().to_string(), Summary::of(v)))
        .collect();
    diag.unstable_queries = per_query.iter().filter(|q| q.unstable).count();
    RetrievalReport {
        catalog: None,
        retriever: obs.system.clone(),
        corpus_version: corpus.version.clone(),
        golden_version: golden.version.clone(),
        queries: golden.queries.len(),
        depth: DEPTH,
        requested: obs.requested,
        runs_completed,
        metrics,
        latency_ms: Latency {
            p50: percentile(&latencies, 50.0),
            p95: percentile(&latencies, 95.0),
            max: latencies.iter().copied().reduce(f64::max),
            mean: (!latencies.is_empty())
                .then(|| latencies.iter().sum::<f64>() / latencies.len() as f64),
        },
        diagnostics: diag,
        tool_diagnostics: tools.finish(),
        splits: split_summaries(&per_query),
        per_query,
        observations: obs,
    }
}

/// The report's row of each golden query some run answered, in golden-set order.
fn query_rows(golden: &GoldenSet, per_query: Vec<QueryRuns>) -> Vec<QueryReport> {
    // sized up front: a filtered iterator would grow the rows by doubling, up to twice the
    // memory of 20,000 rows
    let mut rows = Vec::with_capacity(per_query.iter().filter(|r| r.runs > 0).count());
    rows.extend(
        golden
            .queries
            .iter()
            .zip(per_query)
            .filter(|(_, runs)| runs.runs > 0)
            .map(|(q, runs)| {
                let n = runs.runs as f64;
                QueryReport {
                    id: q.id.clone(),
                    query: q.query.clone(),
                    split: q.split.clone(),
                    notes: q.notes.clone(),
                    labels: q
                        .labels
                        .iter()
                        .map(|l| LabelRef {
                            tool_id: l.tool_id.clone(),
                            relevance: l.relevance,
                        })
                        .collect(),
                    retrieved: runs.retrieved.unwrap_or_default(),
                    metrics: QueryMetrics::from_values(runs.sum.map(|s| s / n)),
                    unstable: runs.unstable,
                }
            }),
    );
    rows
}

/// One golden query over the runs that answered it, accumulated as the runs come in.
#[derive(Debug, Clone, Default)]
struct QueryRuns {
    runs: usize,
    /// Per metric (`RETRIEVAL_METRICS` order): the first run's value and the sum over runs.
    first: [f64; RETRIEVAL_METRICS.len()],
    sum: [f64; RETRIEVAL_METRICS.len()],
    /// True when a later run's value differs from the first run's.
    unstable: bool,
    /// The first run's filtered top results.
    retrieved: Option<Vec<Text>>,
}

impl QueryRuns {
    fn add(&mut self, values: [f64; RETRIEVAL_METRICS.len()], top: impl FnOnce() -> Vec<Text>) {
        if self.runs == 0 {
            self.first = values;
            self.retrieved = Some(top());
        } else if values
            .iter()
            .zip(self.first)
            .any(|(v, f)| (v - f).abs() > 1e-12)
        {
            self.unstable = true;
        }
        for (sum, v) in self.sum.iter_mut().zip(values) {
            *sum += v;
        }
        self.runs += 1;
    }
}

/// Per-split means of the per-query metrics; empty unless the golden set marks splits.
fn split_summaries(per_query: &[QueryReport]) -> BTreeMap<String, SplitSummary> {
    let mut by: BTreeMap<&str, Vec<&QueryReport>> = BTreeMap::new();
    for q in per_query {
        if let Some(s) = &q.split {
            by.entry(s.as_str()).or_default().push(q);
        }
    }
    by.into_iter()
        .map(|(split, qs)| {
            let metrics = RETRIEVAL_METRICS
                .iter()
                .map(|&m| {
                    let sum: f64 = qs.iter().filter_map(|q| q.metrics.get(m)).sum();
                    (m.key().to_string(), sum / qs.len() as f64)
                })
                .collect();
            (
                split.to_string(),
                SplitSummary {
                    queries: qs.len(),
                    metrics,
                },
            )
        })
        .collect()
}

/// A detector's rows: one, or for a detector whose system flagged some entry for review below
/// its blocking tier, two: the detector itself (what the system blocks, as its own gate
/// counts) and `NAME/review` (everything it flagged, review included).
pub fn tiered(obs: &DetectorObservations, entries: &[Entry]) -> Vec<DetectorReport> {
    let has_review = obs.runs.iter().any(|r| r.verdicts.iter().any(|v| v.review));
    let mut blocking = detector(obs, entries);
    if !has_review {
        return vec![blocking];
    }
    blocking.tier = Some(Tier::Blocking);
    let mut any = obs.clone();
    any.detector = format!("{}/review", obs.detector);
    for v in any.runs.iter_mut().flat_map(|r| &mut r.verdicts) {
        v.flagged |= v.review;
    }
    let mut review = detector(&any, entries);
    review.tier = Some(Tier::Review);
    vec![blocking, review]
}

/// Scores one detector's recorded verdicts against the labels.
pub fn detector(obs: &DetectorObservations, entries: &[Entry]) -> DetectorReport {
    // no declared scope: every attack category, the open ones of this corpus included (an
    // open category is an attack where its entries are labelled malicious)
    let scope: Vec<Category> = obs.scope.clone().unwrap_or_else(|| {
        let mut all = Category::ATTACKS.to_vec();
        for e in entries {
            if e.label == Truth::Malicious && !all.contains(&e.category) {
                all.push(e.category);
            }
        }
        all
    });
    // an entry by whether it was flagged (in scope: every benign entry, an attack of the scope)
    let judged = |e: &Entry, flagged: bool| match (e.label, flagged) {
        (Truth::Malicious, _) if !scope.contains(&e.category) => Outcome::OutOfScope,
        (Truth::Malicious, true) => Outcome::Tp,
        (Truth::Malicious, false) => Outcome::Fn,
        (Truth::Benign, true) => Outcome::Fp,
        (Truth::Benign, false) => Outcome::Tn,
    };
    let mut per_run_counts = Vec::new();
    let mut per_run_metrics: BTreeMap<&str, Vec<Option<f64>>> = BTreeMap::new();
    // per run, then per entry in corpus order: whether it was flagged
    let mut flagged_in: Vec<Vec<bool>> = Vec::new();
    // per entry, in corpus order: the signals seen in any run
    let mut entry_signals = vec![BTreeSet::new(); entries.len()];
    // entries the detector said it cannot judge (in any run)
    let mut not_applicable: BTreeSet<&str> = BTreeSet::new();
    for run in &obs.runs {
        let verdicts: HashMap<&str, &crate::pipeline::sut::Decision> = run
            .verdicts
            .iter()
            .map(|v| (v.entry_id.as_str(), v))
            .collect();
        let mut c = Confusion::default();
        let mut flagged = vec![false; entries.len()];
        for (i, e) in entries.iter().enumerate() {
            let Some(v) = verdicts.get(e.id.as_str()) else {
                continue;
            };
            if v.not_applicable {
                not_applicable.insert(e.id.as_str());
                continue;
            }
            flagged[i] = v.flagged;
            entry_signals[i].extend(v.signals.iter().cloned());
            let o = judged(e, v.flagged);
            let hn = e.category == Category::HardNegative;
            match o {
                Outcome::Tp => c.tp += 1,
                Outcome::Fn => c.fn_ += 1,
                Outcome::Fp => c.fp += 1,
                Outcome::Tn => c.tn += 1,
                _ => {}
            }
            c.hard_negative_fp += u64::from(hn && o == Outcome::Fp);
            c.hard_negative_tn += u64::from(hn && o == Outcome::Tn);
        }
        for (m, v) in DETECTION_METRICS.iter().zip(metrics::detection_scores(&c)) {
            per_run_metrics.entry(m.key()).or_default().push(v);
        }
        flagged_in.push(flagged);
        per_run_counts.push(c);
    }
    let mut counts = Confusion::default();
    per_run_counts.iter().for_each(|c| counts.add(c));
    // the entries the detector could judge by the category `key` gives them, with the flags of
    // each run
    let cat_report = |key: fn(&Entry) -> Option<Category>| -> Vec<CategoryReport> {
        let applicable = entries
            .iter()
            .filter(|e| !not_applicable.contains(e.id.as_str()));
        count(applicable.filter_map(key))
            .into_iter()
            .map(|(category, total)| {
                let of = |e: &Entry| key(e) == Some(category);
                let f: Vec<usize> = flagged_in
                    .iter()
                    .map(|r| entries.iter().zip(r).filter(|&(e, &f)| f && of(e)).count())
                    .collect();
                CategoryReport {
                    category,
                    total,
                    flagged: f.iter().sum(),
                    rate: Summary::of(
                        f.iter()
                            .map(|&x| metrics::ratio(x as u64, total as u64))
                            .collect(),
                    ),
                }
            })
            .collect()
    };
    let runs = obs.runs.len();
    let entries_out = entries
        .iter()
        .zip(entry_signals)
        .enumerate()
        .map(|(i, (e, signals))| {
            let flagged_runs = flagged_in.iter().filter(|r| r[i]).count();
            let majority = runs > 0 && flagged_runs * 2 > runs;
            let outcome = if not_applicable.contains(e.id.as_str()) {
                Outcome::NotApplicable
            } else {
                judged(e, majority)
            };
            EntryOutcome {
                id: e.id.clone(),
                category: e.category,
                label: e.label,
                flagged_runs,
                signals: signals.into_iter().collect(),
                outcome,
                description: e.description.clone(),
            }
        })
        .collect();
    DetectorReport {
        detector: obs.detector.clone(),
        source: obs.source.clone(),
        tier: None,
        scope,
        not_applicable: not_applicable.len(),
        runs_completed: runs,
        counts,
        per_run_counts,
        metrics: per_run_metrics
            .into_iter()
            .map(|(k, v)| (k.to_string(), Summary::of(v)))
            .collect(),
        per_category: cat_report(|e| Some(e.category)),
        hard_negatives_by_resemblance: cat_report(Entry::resembled),
        entries: entries_out,
        live: live(obs, entries),
    }
}

/// The live rug-pull section, when the detector played any entry.
fn live(obs: &DetectorObservations, entries: &[Entry]) -> Option<LiveReport> {
    let by_id: HashMap<&str, &Entry> = entries.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut per_entry: BTreeMap<&str, LiveEntry> = BTreeMap::new();
    type Key = (Category, Option<Category>);
    // per category and run: [played, relisted, reported, blocked, restored]
    let mut per_cat: BTreeMap<Key, Vec<[usize; 5]>> = BTreeMap::new();
    for (r, run) in obs.runs.iter().enumerate() {
        for v in &run.verdicts {
            let (Some(o), Some(e)) = (&v.live, by_id.get(v.entry_id.as_str())) else {
                continue;
            };
            let le = per_entry.entry(e.id.as_str()).or_insert_with(|| LiveEntry {
                id: e.id.clone(),
                category: e.category,
                label: e.label,
                runs: 0,
                relisted_runs: 0,
                reported_runs: 0,
                blocked_runs: 0,
                restored_runs: 0,
                baseline_ok_runs: 0,
                signals: vec![],
                note: None,
            });
            le.runs += 1;
            le.relisted_runs += o.relisted as usize;
            le.reported_runs += o.reported as usize;
            le.blocked_runs += o.blocked as usize;
            le.restored_runs += o.restored as usize;
            le.baseline_ok_runs += o.baseline_ok as usize;
            for s in &o.signals {
                if !le.signals.contains(s) {
                    le.signals.push(s.clone());
                }
            }
            le.note = le.note.take().or_else(|| o.note.clone());
            let runs = per_cat
                .entry((e.category, e.resembled()))
                .or_insert_with(|| vec![[0; 5]; obs.runs.len()]);
            let played = [true, o.relisted, o.reported, o.blocked, o.restored];
            for (c, n) in runs[r].iter_mut().zip(played) {
                *c += usize::from(n);
            }
        }
    }
    if per_entry.is_empty() {
        return None;
    }
    let rate = |runs: &[[usize; 5]], k: usize| {
        Summary::of(
            runs.iter()
                .filter(|c| c[0] > 0)
                .map(|c| metrics::ratio(c[k] as u64, c[0] as u64))
                .collect(),
        )
    };
    let per_category = per_cat
        .into_iter()
        .map(|((category, resembles), runs)| LiveCategory {
            category,
            resembles,
            played: runs.iter().map(|c| c[0]).max().unwrap_or(0),
            relisted: runs.iter().map(|c| c[1]).sum(),
            reported: runs.iter().map(|c| c[2]).sum(),
            blocked: runs.iter().map(|c| c[3]).sum(),
            restored: runs.iter().map(|c| c[4]).sum(),
            detection_rate: rate(&runs, 2),
            block_rate: rate(&runs, 3),
            restore_rate: rate(&runs, 4),
        })
        .collect();
    Some(LiveReport {
        per_category,
        entries: per_entry.into_values().collect(),
    })
}

/// The security section for several detectors.
pub fn security(obs: &[DetectorObservations], corpus: &SecurityCorpus) -> SecurityReport {
    SecurityReport {
        corpus_version: corpus.version.clone(),
        entries: corpus.entries.len(),
        categories: count(corpus.entries.iter().map(|e| e.category)),
        detectors: obs
            .iter()
            .flat_map(|o| tiered(o, &corpus.entries))
            .collect(),
        observations: obs.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infra::text::Text;
    use crate::pipeline::dataset::{DatasetPaths, Datasets, Label, Need, Profile};
    use crate::pipeline::score::metrics::Metric;
    use crate::pipeline::sut::observe::{DetectorRun, QueryObservation, RetrievalRun};

    fn v0() -> Datasets {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/v0");
        Datasets::load(
            &DatasetPaths::in_dir(&dir),
            Need {
                retrieval: true,
                security: true,
            },
            Profile::Lenient,
        )
        .unwrap()
    }

    /// Every query answered with its relevant tools, best grade first, then `extra`.
    fn oracle(golden: &GoldenSet, extra: &[&str]) -> RetrievalRun {
        RetrievalRun {
            run: 1,
            queries: golden
                .queries
                .iter()
                .map(|q| {
                    let mut labels: Vec<_> = q.labels.iter().filter(|l| l.relevance > 0).collect();
                    labels.sort_by_key(|l| std::cmp::Reverse(l.relevance));
                    let mut ranked: Vec<Text> = labels.iter().map(|l| l.tool_id.clone()).collect();
                    ranked.extend(extra.iter().map(|e| Text::from(*e)));
                    QueryObservation {
                        id: q.id.clone(),
                        ranked,
                        latency_ms: 1.0,
                    }
                })
                .collect(),
        }
    }

    fn mean(r: &RetrievalReport, m: &str) -> f64 {
        r.metrics[m].mean.unwrap()
    }

    /// The per-tool diagnostics of every answer of `obs`, walked on its own: each ranked list
    /// filtered against `corpus` and added, queries the golden set does not have ignored.
    fn standalone_diagnostics(
        obs: &RetrievalObservations,
        corpus: &Corpus,
        golden: &GoldenSet,
    ) -> diagnostics::ToolDiagnostics {
        let corpus_ids: HashSet<&str> = corpus.tools.iter().map(|t| t.tool_id.as_str()).collect();
        let mut index = HashMap::new();
        for (i, q) in golden.queries.iter().enumerate() {
            index.entry(q.id.as_str()).or_insert(i);
        }
        let mut acc = diagnostics::Accumulator::default();
        for run in &obs.runs {
            for qo in &run.queries {
                if let Some(&qi) = index.get(qo.id.as_str()) {
                    let q = &golden.queries[qi];
                    let f = metrics::filter_ranked(&qo.ranked, &corpus_ids);
                    acc.add(run.run, qi, &q.id, &q.labels, &f.ids);
                }
            }
        }
        acc.finish()
    }

    /// The per-tool diagnostics the scorer counts as it scores are those of
    /// [`standalone_diagnostics`], with labels naming tools outside the corpus,
    /// answers with repeats and strangers, three runs answered in a shuffled order.
    #[test]
    fn tool_diagnostics_standalone_equal_those_the_scorer_counts() {
        let ds = v0();
        let c = &ds.corpus.as_ref().unwrap().value;
        let mut g = ds.golden.as_ref().unwrap().value.clone();
        for (i, q) in g.queries.iter_mut().enumerate().filter(|(i, _)| i % 3 == 0) {
            q.labels.push(Label {
                tool_id: Text::from(format!("gone:tool{}", i % 4)),
                relevance: (i % 2) as u8 + 1,
            });
        }
        let ids: Vec<Text> = c
            .tools
            .iter()
            .map(|t| Text::from(t.tool_id.as_str()))
            .collect();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let runs = (1..=3)
            .map(|run| {
                let mut r = oracle(&g, &[]);
                r.run = run;
                for q in &mut r.queries {
                    // some relevant tools dropped, strangers and other tools in between
                    q.ranked.retain(|_| next(3) > 0);
                    for _ in 0..next(12) {
                        let at = next(q.ranked.len() + 1);
                        let id = match next(5) {
                            0 => Text::from("nowhere:tool"),
                            1 => Text::from("gone:tool1"),
                            _ => ids[next(ids.len())].clone(),
                        };
                        q.ranked.insert(at, id);
                    }
                }
                let n = r.queries.len();
                for i in 0..n {
                    r.queries.swap(i, next(n));
                }
                r
            })
            .collect();
        let obs = RetrievalObservations {
            system: "noisy".into(),
            requested: 20,
            runs,
        };
        let by_position = standalone_diagnostics(&obs, c, &g);
        let by_text = retrieval(obs, c, &g).tool_diagnostics;
        assert_eq!(by_position, by_text);
        assert!(by_position.tool("gone:tool1").is_some());
        assert!(
            by_position
                .confusions
                .iter()
                .any(|p| p.wanted == "gone:tool2")
        );
        assert!(!by_position.hard_negatives_in_top_5.is_empty());
    }

    #[test]
    fn a_perfect_ranking_scores_one_and_noise_is_dropped_and_counted() {
        let ds = v0();
        let (c, g) = (
            &ds.corpus.as_ref().unwrap().value,
            &ds.golden.as_ref().unwrap().value,
        );
        let obs = RetrievalObservations {
            system: "oracle".into(),
            requested: 20,
            runs: vec![{
                // after the relevant tools: one id outside the corpus, then the best one again
                let mut run = oracle(g, &["nowhere:tool"]);
                for q in &mut run.queries {
                    let first = q.ranked[0].clone();
                    q.ranked.push(first);
                }
                run
            }],
        };
        let r = retrieval(obs, c, g);
        for m in ["mrr", "ndcg_at_10", "map", "recall_at_10"] {
            assert!((mean(&r, m) - 1.0).abs() < 1e-9, "{m} = {}", mean(&r, m));
        }
        assert_eq!(r.runs_completed, 1);
        let n = g.queries.len();
        assert_eq!(r.diagnostics.off_corpus_results, n);
        assert_eq!(r.diagnostics.duplicate_results, n);
        assert_eq!(r.per_query.len(), n);
    }

    #[test]
    fn a_removed_tool_drops_its_queries_and_an_incomplete_run_is_not_counted() {
        let ds = v0();
        let (c, g) = (
            &ds.corpus.as_ref().unwrap().value,
            &ds.golden.as_ref().unwrap().value,
        );
        let mut run = oracle(g, &[]);
        // the first query's relevant tools all vanish from the answers
        let gone: Vec<Text> = run.queries[0].ranked.clone();
        for q in &mut run.queries {
            q.ranked.retain(|id| !gone.contains(id));
        }
        let mut short = run.clone();
        short.run = 2;
        short.queries.pop();
        let obs = RetrievalObservations {
            system: "degraded".into(),
            requested: 20,
            runs: vec![run, short],
        };
        let r = retrieval(obs, c, g);
        assert_eq!(
            r.runs_completed, 1,
            "a run missing a query is not a complete run"
        );
        let first = &r.per_query[0];
        assert_eq!(first.metrics.get(Metric::RecallAt10), Some(0.0));
        assert!(mean(&r, "recall_at_10") < 1.0);
    }

    /// A system with tiers: what it blocks is the detector's row, everything it flagged
    /// (review included) a second `/review` row; without any review verdict, one row.
    #[test]
    fn a_detector_with_a_review_tier_gives_a_blocking_row_and_a_review_row() {
        let ds = v0();
        let sec = &ds.security.as_ref().unwrap().value;
        // blocks every malicious entry of one category, flags every other malicious entry and
        // every hard negative for review
        let first_attack = sec
            .entries
            .iter()
            .find(|e| e.label == Truth::Malicious)
            .unwrap()
            .category;
        let obs = DetectorObservations {
            detector: "scan".into(),
            source: Some("mcpproxy's own scan".into()),
            scope: None,
            runs: vec![DetectorRun {
                run: 1,
                verdicts: sec
                    .entries
                    .iter()
                    .map(|e| {
                        let block = e.label == Truth::Malicious && e.category == first_attack;
                        crate::pipeline::sut::Decision {
                            entry_id: e.id.clone(),
                            flagged: block,
                            review: !block
                                && (e.label == Truth::Malicious
                                    || e.category == Category::HardNegative),
                            signals: vec![],
                            live: None,
                            not_applicable: false,
                        }
                    })
                    .collect(),
            }],
        };
        let rows = tiered(&obs, &sec.entries);
        assert_eq!(rows.len(), 2);
        let (block, review) = (&rows[0], &rows[1]);
        assert_eq!(
            (block.detector.as_str(), block.tier),
            ("scan", Some(Tier::Blocking))
        );
        assert_eq!(
            (review.detector.as_str(), review.tier),
            ("scan/review", Some(Tier::Review))
        );
        assert_eq!(block.source.as_deref(), Some("mcpproxy's own scan"));
        let malicious = sec
            .entries
            .iter()
            .filter(|e| e.label == Truth::Malicious)
            .count() as u64;
        let first = sec
            .entries
            .iter()
            .filter(|e| e.label == Truth::Malicious && e.category == first_attack)
            .count() as u64;
        let hard = sec
            .entries
            .iter()
            .filter(|e| e.category == Category::HardNegative)
            .count() as u64;
        assert!(first < malicious && hard > 0);
        assert_eq!((block.counts.tp, block.counts.fp), (first, 0));
        assert_eq!((review.counts.tp, review.counts.fp), (malicious, hard));
        // no review verdict at all: one row, no tier
        let mut plain = obs.clone();
        plain.runs[0]
            .verdicts
            .iter_mut()
            .for_each(|v| v.review = false);
        let rows = tiered(&plain, &sec.entries);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].tier, None);
        assert_eq!(rows[0].counts.tp, first);
    }

    #[test]
    fn a_perfect_detector_and_one_that_flags_everything() {
        let ds = v0();
        let sec = &ds.security.as_ref().unwrap().value;
        let run =
            |flag: &dyn Fn(&crate::pipeline::dataset::model::Entry) -> bool| DetectorObservations {
                detector: "d".into(),
                source: None,
                scope: None,
                runs: vec![DetectorRun {
                    run: 1,
                    verdicts: sec
                        .entries
                        .iter()
                        .map(|e| crate::pipeline::sut::Decision {
                            entry_id: e.id.clone(),
                            flagged: flag(e),
                            review: false,
                            signals: vec![],
                            live: None,
                            not_applicable: false,
                        })
                        .collect(),
                }],
            };
        let perfect = detector(&run(&|e| e.label == Truth::Malicious), &sec.entries);
        let m = |d: &DetectorReport, k: &str| d.metrics[k].mean.unwrap();
        assert_eq!(
            (m(&perfect, "precision"), m(&perfect, "recall")),
            (1.0, 1.0)
        );
        assert_eq!(m(&perfect, "fpr"), 0.0);
        assert_eq!(perfect.counts.fp + perfect.counts.fn_, 0);
        let noisy = detector(&run(&|_| true), &sec.entries);
        assert_eq!((m(&noisy, "fpr"), m(&noisy, "recall")), (1.0, 1.0));
        let benign = sec
            .entries
            .iter()
            .filter(|e| e.label == Truth::Benign)
            .count();
        assert_eq!(noisy.counts.fp as usize, benign);
    }
}
