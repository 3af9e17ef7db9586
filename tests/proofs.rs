//! The spec's own proofs at library level: INV-2, a degraded (reversed) retriever, a noisy detector.

mod common;
use async_trait::async_trait;
use common::*;
use evalgate::app::{self, ChosenBaseline, Part};
use evalgate::pipeline::baseline::Baseline;
use evalgate::pipeline::dataset::{Category, Corpus, DatasetPaths, Datasets, Entry, Need};
use evalgate::pipeline::measure::{Limits, Progress};
use evalgate::pipeline::report::model::{CheckStatus, Outcome, Report, Verdict};
use evalgate::pipeline::sut::{
    Detector, Facts, Ranked, Retriever, SearchRequest, SutError, embedded::Embedded, rules::Rules,
};

fn datasets() -> Datasets {
    Datasets::load(
        &DatasetPaths::default(),
        Need {
            retrieval: true,
            security: true,
        },
        evalgate::pipeline::dataset::Profile::Strict,
    )
    .unwrap()
}

fn shipped_baseline() -> ChosenBaseline {
    ChosenBaseline {
        name: "baselines/default.json".into(),
        baseline: Baseline::load(&root().join("baselines/default.json"))
            .unwrap()
            .0,
        // handed to the gate as `--baseline` would: the degraded retrievers here are other
        // systems by name, compared on purpose
        explicit: true,
    }
}

async fn evaluate(
    part: Part,
    ds: &Datasets,
    r: Option<&dyn Retriever>,
    dets: &mut [Box<dyn Detector>],
    b: Option<&ChosenBaseline>,
) -> Report {
    let plan = app::Plan {
        part,
        measure: evalgate::config::MeasureSpec {
            runs: 1,
            limits: Limits {
                request_timeout: std::time::Duration::from_secs(30),
                concurrency: 4,
                results: 20,
            },
            robustness: evalgate::pipeline::measure::probes::RobustnessMode::Off,
            shard: None,
        },
        baseline: b,
        gate: &evalgate::pipeline::gate::Policy::default(),
    };
    let measured = app::measure_all(&plan, ds, r, dets, &mut Progress::new(false)).await;
    app::assemble(&plan, ds, measured, vec![])
}

fn failed_metrics(r: &Report) -> Vec<String> {
    r.gate
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .map(|c| format!("{}:{}", c.subject, c.metric))
        .collect()
}

#[tokio::test]
async fn inv2_removing_a_labeled_tool_drives_that_querys_recall_to_zero() {
    let ds = datasets();
    let corpus = &ds.corpus.as_ref().unwrap().value;
    let golden = &ds.golden.as_ref().unwrap().value;
    let full = Embedded::new(corpus).unwrap();
    let base = evaluate(Part::Retrieval, &ds, Some(&full), &mut [], None).await;
    let base_q = &base.retrieval.as_ref().unwrap().per_query;
    let mut checked = 0;
    for (q, bq) in golden.queries.iter().zip(base_q) {
        let relevant: Vec<&str> = q.relevant().map(|l| l.tool_id.as_str()).collect();
        if relevant.len() != 1 || bq.metrics.recall_at_10 == 0.0 {
            continue;
        }
        // the system under test serves a corpus without the labeled tool; scoring keeps the frozen corpus
        let reduced = Corpus {
            tools: corpus
                .tools
                .iter()
                .filter(|t| t.tool_id != relevant[0])
                .cloned()
                .collect(),
            ..corpus.clone()
        };
        let sut = Embedded::new(&reduced).unwrap();
        let r = sut.rank(&q.query, 20).unwrap();
        assert!(r.iter().all(|(id, _)| *id != relevant[0]));
        let ids: Vec<evalgate::infra::text::Text> = r.into_iter().map(|(id, _)| id).collect();
        let s = evalgate::pipeline::score::metrics::score_query(&q.labels, &ids);
        assert_eq!(
            (
                s.recall_at_1,
                s.recall_at_5,
                s.recall_at_10,
                s.mrr,
                s.ndcg_at_10
            ),
            (0.0, 0.0, 0.0, 0.0, 0.0),
            "query {}",
            q.id
        );
        checked += 1;
        if checked == 10 {
            break;
        }
    }
    assert!(
        checked >= 5,
        "too few single-label queries found: {checked}"
    );
}

/// A degraded system: the embedded ranking, reversed.
struct Reversed(Embedded);

#[async_trait]
impl Retriever for Reversed {
    fn facts(&self) -> &Facts {
        self.0.facts()
    }
    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError> {
        let mut r = self.0.search(req).await?;
        r.ids.reverse();
        Ok(r)
    }
}

#[tokio::test]
async fn sc003_reversed_results_lower_the_scores_and_fail_the_gate_naming_the_metrics() {
    let ds = datasets();
    let b = shipped_baseline();
    let good = Embedded::new(&ds.corpus.as_ref().unwrap().value).unwrap();
    let ok = evaluate(Part::Retrieval, &ds, Some(&good), &mut [], Some(&b)).await;
    assert_eq!(ok.gate.verdict, Verdict::Pass, "{:?}", failed_metrics(&ok));
    let bad = Reversed(Embedded::new(&ds.corpus.as_ref().unwrap().value).unwrap());
    let r = evaluate(Part::Retrieval, &ds, Some(&bad), &mut [], Some(&b)).await;
    assert_eq!(r.gate.verdict, Verdict::Fail);
    assert_eq!(r.gate.exit_code_with(true), 1);
    let failed = failed_metrics(&r);
    for m in [
        "retrieval:recall_at_5",
        "retrieval:mrr",
        "retrieval:ndcg_at_10",
    ] {
        assert!(
            failed.contains(&m.to_string()),
            "{m} not failed: {failed:?}"
        );
    }
    let (g, d) = (ok.retrieval.unwrap(), r.retrieval.unwrap());
    for m in ["recall_at_5", "mrr", "ndcg_at_10", "map"] {
        assert!(
            d.metrics[m].mean.unwrap() < g.metrics[m].mean.unwrap(),
            "{m} did not drop"
        );
    }
    // Recall@20-ish is untouched by reversal: the same ids come back
    // the headline says it in words
    assert!(
        r.gate.summary.contains("Recall@5 fell "),
        "{}",
        r.gate.summary
    );
}

/// A noisy detector: the reference rules, plus a flag on every hard negative.
struct Noisy(Rules);

#[async_trait]
impl Detector for Noisy {
    fn name(&self) -> &str {
        "rules"
    }
    async fn detect(
        &mut self,
        entries: &[Entry],
        run: usize,
    ) -> Result<Vec<evalgate::pipeline::sut::Decision>, SutError> {
        let mut v = self.0.detect(entries, run).await?;
        for (e, verdict) in entries.iter().zip(v.iter_mut()) {
            if e.category == Category::HardNegative {
                verdict.flagged = true;
            }
        }
        Ok(v)
    }
}

#[tokio::test]
async fn sc004_a_noisy_detector_shows_a_higher_fpr_and_fails_its_ceiling() {
    let ds = datasets();
    let b = shipped_baseline();
    let mut quiet: Vec<Box<dyn Detector>> = vec![Box::new(Rules)];
    let ok = evaluate(Part::Security, &ds, None, &mut quiet, Some(&b)).await;
    assert_eq!(ok.gate.verdict, Verdict::Pass, "{:?}", failed_metrics(&ok));
    let mut noisy: Vec<Box<dyn Detector>> = vec![Box::new(Noisy(Rules))];
    let r = evaluate(Part::Security, &ds, None, &mut noisy, Some(&b)).await;
    let fpr = |r: &Report| {
        r.security.as_ref().unwrap().detectors[0].metrics["fpr"]
            .mean
            .unwrap()
    };
    assert!(fpr(&r) > fpr(&ok) + 0.2, "{} vs {}", fpr(&r), fpr(&ok));
    assert_eq!(
        r.security.as_ref().unwrap().detectors[0].metrics["fpr_hard_negative"].mean,
        Some(1.0)
    );
    assert_eq!(r.gate.verdict, Verdict::Fail);
    assert!(
        failed_metrics(&r).contains(&"detector:rules:fpr".to_string()),
        "{:?}",
        failed_metrics(&r)
    );
}

#[tokio::test]
async fn canonical_poisoning_is_a_true_positive_and_a_plain_benign_tool_is_not_flagged() {
    // INV-3 on the shipped corpus
    let ds = datasets();
    let mut dets: Vec<Box<dyn Detector>> = vec![Box::new(Rules)];
    let r = evaluate(Part::Security, &ds, None, &mut dets, None).await;
    let d = &r.security.as_ref().unwrap().detectors[0];
    let tp = d.entries.iter().find(|e| e.id == "tp-001").unwrap();
    assert_eq!(tp.outcome, Outcome::Tp);
    assert!(
        tp.signals.contains(&"hidden-instruction-tag".to_string()),
        "{:?}",
        tp.signals
    );
    let benign = d.entries.iter().filter(|e| e.category == Category::Benign);
    assert!(benign.clone().count() >= 20);
    assert!(
        benign.clone().all(|e| e.outcome == Outcome::Tn),
        "benign flagged: {:?}",
        benign
            .filter(|e| e.outcome != Outcome::Tn)
            .map(|e| &e.id)
            .collect::<Vec<_>>()
    );
}
