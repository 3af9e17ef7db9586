//! Retrieval and detection metrics as pure functions (normative: shared/reference/metrics.md,
//! restated in docs/metrics.md). No I/O, no clocks.

use crate::infra::text::Text;
use crate::pipeline::dataset::Label;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

use crate::pipeline::sut::DEPTH;

/// A ranked list after canonical filtering. The ids borrow from the raw list.
#[derive(Debug, Clone, PartialEq)]
pub struct Filtered<'a, S = Text> {
    /// Corpus ids in the order returned, first occurrence only.
    pub ids: Vec<&'a S>,
    /// Results naming a tool that is not in the frozen corpus.
    pub off_corpus: usize,
    /// Repeated ids dropped after their first occurrence.
    pub duplicates: usize,
}

/// Drops ids not in `corpus` (the frozen corpus's tool ids) and repeated ids, keeping the
/// first occurrence.
pub fn filter_ranked<'a, S: AsRef<str>>(raw: &'a [S], corpus: &HashSet<&str>) -> Filtered<'a, S> {
    let mut f: Filtered<'a, S> = Filtered {
        ids: Vec::with_capacity(raw.len()),
        off_corpus: 0,
        duplicates: 0,
    };
    for id in raw {
        if !corpus.contains(id.as_ref()) {
            f.off_corpus += 1;
        } else if f.ids.iter().any(|k| k.as_ref() == id.as_ref()) {
            f.duplicates += 1;
        } else {
            f.ids.push(id);
        }
    }
    f
}

/// Which way is better for a metric: `higher` (recall, MRR) or `lower` (false-positive rates).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Higher,
    Lower,
}

/// Every metric evalgate reports: the retrieval metrics (aggregated over queries) and the
/// detection metrics (per detector). Reports and baselines key their maps by [`Metric::key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    RecallAt1,
    RecallAt3,
    RecallAt5,
    RecallAt10,
    Mrr,
    NdcgAt10,
    /// Mean average precision (a single query's value is its AP).
    Map,
    Precision,
    Recall,
    F1,
    Fpr,
    /// FPR over the hard negatives only.
    FprHardNegative,
}

/// Each metric's key and label, in [`Metric`]'s declaration order.
const NAMES: [(&str, &str); 12] = [
    ("recall_at_1", "Recall@1"),
    ("recall_at_3", "Recall@3"),
    ("recall_at_5", "Recall@5"),
    ("recall_at_10", "Recall@10"),
    ("mrr", "MRR"),
    ("ndcg_at_10", "nDCG@10"),
    ("map", "MAP"),
    ("precision", "Precision"),
    ("recall", "Recall"),
    ("f1", "F1"),
    ("fpr", "FPR"),
    ("fpr_hard_negative", "FPR (hard neg.)"),
];

impl Metric {
    /// The retrieval metrics gated by default in a new baseline.
    pub const DEFAULT_GATED: [Metric; 3] = [Metric::RecallAt5, Metric::Mrr, Metric::NdcgAt10];
    /// The per-query values a baseline keeps to name the queries that regressed.
    pub const PER_QUERY_BASELINE: [Metric; 3] = [Metric::RecallAt5, Metric::Mrr, Metric::NdcgAt10];

    /// The key of the metric in report.json and baselines (`recall_at_5`).
    pub const fn key(self) -> &'static str {
        NAMES[self as usize].0
    }

    /// What the metric is called in reports (`Recall@5`).
    pub const fn label(self) -> &'static str {
        NAMES[self as usize].1
    }

    /// Which way is better: lower for the false-positive rates, higher for everything else.
    pub const fn direction(self) -> Direction {
        match self {
            Metric::Fpr | Metric::FprHardNegative => Direction::Lower,
            _ => Direction::Higher,
        }
    }

    /// The metric with this exact key; `None` for any other string.
    pub fn from_key(key: &str) -> Option<Metric> {
        RETRIEVAL_METRICS
            .into_iter()
            .chain(DETECTION_METRICS)
            .find(|m| m.key() == key)
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// The retrieval metrics, in report order.
pub const RETRIEVAL_METRICS: [Metric; 7] = [
    Metric::RecallAt1,
    Metric::RecallAt3,
    Metric::RecallAt5,
    Metric::RecallAt10,
    Metric::Mrr,
    Metric::NdcgAt10,
    Metric::Map,
];

/// The detection metrics, in report order.
pub const DETECTION_METRICS: [Metric; 5] = [
    Metric::Precision,
    Metric::Recall,
    Metric::F1,
    Metric::Fpr,
    Metric::FprHardNegative,
];

/// The display name of a retrieval or detection metric key (`recall_at_5` → `Recall@5`); an
/// unknown key is its own label.
pub fn label(key: &str) -> &str {
    Metric::from_key(key).map_or(key, |m| m.label())
}

/// One query's metrics, averaged over runs. A plain struct rather than a map: 20,000 queries
/// score without 140,000 key strings. Fields are in the order a sorted map would write them,
/// so the JSON is the same as a map's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QueryMetrics {
    /// Average precision of this query (its mean over queries is MAP).
    pub map: f64,
    /// 1 / rank of the first relevant tool (0 if none is listed).
    pub mrr: f64,
    /// nDCG over the top 10 with graded gains.
    pub ndcg_at_10: f64,
    /// Share of the relevant tools in the top 1.
    pub recall_at_1: f64,
    /// Share of the relevant tools in the top 10.
    pub recall_at_10: f64,
    /// Share of the relevant tools in the top 3.
    pub recall_at_3: f64,
    /// Share of the relevant tools in the top 5.
    pub recall_at_5: f64,
}

impl QueryMetrics {
    /// The field of a retrieval metric (`Map` is this query's AP); `None` for a detection metric.
    fn field(&mut self, m: Metric) -> Option<&mut f64> {
        Some(match m {
            Metric::Map => &mut self.map,
            Metric::Mrr => &mut self.mrr,
            Metric::NdcgAt10 => &mut self.ndcg_at_10,
            Metric::RecallAt1 => &mut self.recall_at_1,
            Metric::RecallAt10 => &mut self.recall_at_10,
            Metric::RecallAt3 => &mut self.recall_at_3,
            Metric::RecallAt5 => &mut self.recall_at_5,
            _ => return None,
        })
    }

    /// The value of a retrieval metric (`Map` is this query's AP); `None` for a detection metric.
    pub fn get(&self, m: Metric) -> Option<f64> {
        let mut copy = *self;
        copy.field(m).copied()
    }

    /// The values in [`RETRIEVAL_METRICS`] order.
    pub fn values(&self) -> [f64; RETRIEVAL_METRICS.len()] {
        RETRIEVAL_METRICS.map(|m| self.get(m).unwrap_or(f64::NAN))
    }

    /// The mean of several runs' scores of one query.
    /// From values in `RETRIEVAL_METRICS` order (see [`QueryMetrics::values`]).
    pub fn from_values(v: [f64; RETRIEVAL_METRICS.len()]) -> QueryMetrics {
        let mut q = QueryMetrics::default();
        for (m, v) in RETRIEVAL_METRICS.into_iter().zip(v) {
            if let Some(f) = q.field(m) {
                *f = v;
            }
        }
        q
    }
}

/// Scores one ranked list (already filtered) against graded labels.
///
/// Relevant = relevance >= 1. Relevance-0 labels never count as hits. Only the first
/// [`DEPTH`] ids are looked at. Panics never; a query without relevant labels scores 0
/// everywhere (validation rejects such queries before any run). A query has a handful of
/// labels, so grades are looked up by scanning them: no map is built per query.
pub fn score_query<S: AsRef<str>>(labels: &[Label], ranked: &[S]) -> QueryMetrics {
    // the first label of a tool id decides its grade (validation rejects repeats)
    let grade = |id: &str| -> Option<u8> {
        labels
            .iter()
            .find(|l| l.tool_id == id)
            .map(|l| l.relevance)
            .filter(|g| *g >= 1)
    };
    // the relevant grades (of each tool's first label), highest first: the ideal list
    let mut ideal: Vec<u8> = labels
        .iter()
        .enumerate()
        .filter(|&(i, l)| l.relevance >= 1 && !labels[..i].iter().any(|p| p.tool_id == l.tool_id))
        .map(|(_, l)| l.relevance)
        .collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let n_rel = ideal.len();
    if n_rel == 0 {
        return QueryMetrics::default();
    }
    let list = &ranked[..ranked.len().min(DEPTH)];
    let mut hits_at = [0usize; DEPTH + 1];
    let mut mrr = 0.0;
    let mut dcg = 0.0;
    let mut hits = 0usize;
    let mut ap_sum = 0.0;
    for (i, id) in list.iter().enumerate() {
        let rank = i + 1;
        if let Some(g) = grade(id.as_ref()) {
            if mrr == 0.0 {
                mrr = 1.0 / rank as f64;
            }
            dcg += g as f64 / (rank as f64 + 1.0).log2();
            hits += 1;
            ap_sum += hits as f64 / rank as f64;
        }
        hits_at[rank] = hits;
    }
    hits_at[list.len() + 1..].fill(hits);
    let recall = |k: usize| hits_at[k.min(DEPTH)] as f64 / n_rel as f64;
    let idcg: f64 = ideal
        .iter()
        .take(DEPTH)
        .enumerate()
        .map(|(i, &g)| g as f64 / (i as f64 + 2.0).log2())
        .sum();
    QueryMetrics {
        recall_at_1: recall(1),
        recall_at_3: recall(3),
        recall_at_5: recall(5),
        recall_at_10: recall(10),
        mrr,
        ndcg_at_10: if idcg > 0.0 { dcg / idcg } else { 0.0 },
        map: ap_sum / n_rel as f64,
    }
}

/// Counts of one detector over one run (positive = flagged; truth positive = malicious).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Confusion {
    /// Attacks flagged.
    pub tp: u64,
    /// Benign entries flagged.
    pub fp: u64,
    /// Benign entries not flagged.
    pub tn: u64,
    /// Attacks not flagged.
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// Flagged hard negatives (a subset of `fp`).
    pub hard_negative_fp: u64,
    /// Hard negatives not flagged (a subset of `tn`).
    pub hard_negative_tn: u64,
}

impl Confusion {
    pub fn add(&mut self, o: &Confusion) {
        self.tp += o.tp;
        self.fp += o.fp;
        self.tn += o.tn;
        self.fn_ += o.fn_;
        self.hard_negative_fp += o.hard_negative_fp;
        self.hard_negative_tn += o.hard_negative_tn;
    }
}

/// A ratio, or `None` when it is 0/0 (undefined, never silently 0).
pub fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// Detection metrics of one run, in [`DETECTION_METRICS`] order (`None` = undefined):
/// precision = TP/(TP+FP), recall = TP/(TP+FN), F1 = 2PR/(P+R), FPR = FP/(FP+TN).
/// F1 is undefined when P or R is; when both are 0 it is 0 (the limit, equal to
/// 2TP/(2TP+FP+FN)).
pub fn detection_scores(c: &Confusion) -> [Option<f64>; DETECTION_METRICS.len()] {
    let precision = ratio(c.tp, c.tp + c.fp);
    let recall = ratio(c.tp, c.tp + c.fn_);
    let f1 = match (precision, recall) {
        (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    let fpr = ratio(c.fp, c.fp + c.tn);
    let hard = ratio(c.hard_negative_fp, c.hard_negative_fp + c.hard_negative_tn);
    [precision, recall, f1, fpr, hard]
}

#[cfg(test)]
mod tests;
