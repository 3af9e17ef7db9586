//! Retrieval and detection metrics as pure functions (normative: shared/reference/metrics.md,
//! restated in docs/metrics.md). No I/O, no clocks.

use crate::dataset::Label;
use crate::text::Text;
use std::collections::HashMap;

/// The cut-offs of Recall@k.
pub const KS: [usize; 4] = [1, 3, 5, 10];
/// The ranked list is scored to this depth (the largest k): MRR, nDCG@10 and AP look at the
/// first `DEPTH` results after filtering.
pub const DEPTH: usize = 10;
/// Extra results asked for beyond `DEPTH`, so that dropping off-corpus ids and duplicates does
/// not starve the list.
pub const HEADROOM: usize = 10;

/// A ranked list after canonical filtering. The ids borrow from the raw list: filtering
/// allocates one small vector and copies no text.
#[derive(Debug, Clone, PartialEq)]
pub struct Filtered<'a, S = Text> {
    /// Corpus ids in the order returned, first occurrence only.
    pub ids: Vec<&'a S>,
    /// Results naming a tool that is not in the frozen corpus.
    pub off_corpus: usize,
    /// Repeated ids dropped after their first occurrence.
    pub duplicates: usize,
}

/// Ids with the position of their first occurrence: the frozen corpus's tool ids, for filtering
/// ranked lists, and the golden set's query ids.
///
/// Filtering looks up every returned id (200,000 of them for 20,000 queries × 10 results), so
/// the table uses foldhash (seeded per process) rather than SipHash, and repeats are found by
/// comparing positions rather than text.
#[derive(Debug, Clone, Default)]
pub struct IdPositions<'a> {
    positions: HashMap<&'a str, u32, foldhash::fast::RandomState>,
}

impl<'a> IdPositions<'a> {
    /// The position of `id` (its first occurrence), if it is one of the ids.
    pub fn position(&self, id: &str) -> Option<u32> {
        self.positions.get(id).copied()
    }
}

impl<'a> FromIterator<&'a str> for IdPositions<'a> {
    fn from_iter<I: IntoIterator<Item = &'a str>>(ids: I) -> Self {
        let ids = ids.into_iter();
        let mut positions = HashMap::with_capacity_and_hasher(
            ids.size_hint().0,
            foldhash::fast::RandomState::default(),
        );
        for (i, id) in ids.enumerate() {
            positions.entry(id).or_insert(i as u32);
        }
        IdPositions { positions }
    }
}

/// Drops ids not in `corpus` and repeated ids, keeping the first occurrence.
pub fn filter_ranked<'a, S: AsRef<str>>(raw: &'a [S], corpus: &IdPositions) -> Filtered<'a, S> {
    let mut f: Filtered<'a, S> = Filtered {
        ids: Vec::with_capacity(raw.len()),
        off_corpus: 0,
        duplicates: 0,
    };
    // the positions kept so far: on the stack for lists of usual length (depth + headroom)
    let mut small = [0u32; 64];
    let mut large = Vec::new();
    let seen: &mut [u32] = if raw.len() <= small.len() {
        &mut small
    } else {
        large.resize(raw.len(), 0);
        &mut large
    };
    let mut kept = 0;
    for id in raw {
        match corpus.position(id.as_ref()) {
            None => f.off_corpus += 1,
            Some(p) if seen[..kept].contains(&p) => f.duplicates += 1,
            Some(p) => {
                seen[kept] = p;
                kept += 1;
                f.ids.push(id);
            }
        }
    }
    f
}

/// Per-query retrieval metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QueryScores {
    pub recall_at_1: f64,
    pub recall_at_3: f64,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub mrr: f64,
    pub ndcg_at_10: f64,
    pub ap: f64,
}

/// Which way is better for a metric: `higher` (recall, MRR) or `lower` (false-positive rates).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
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

impl Metric {
    /// The retrieval metrics, in report order.
    pub const RETRIEVAL: [Metric; 7] = [
        Metric::RecallAt1,
        Metric::RecallAt3,
        Metric::RecallAt5,
        Metric::RecallAt10,
        Metric::Mrr,
        Metric::NdcgAt10,
        Metric::Map,
    ];
    /// The detection metrics, in report order.
    pub const DETECTION: [Metric; 5] = [
        Metric::Precision,
        Metric::Recall,
        Metric::F1,
        Metric::Fpr,
        Metric::FprHardNegative,
    ];
    /// The retrieval metrics gated by default in a new baseline.
    pub const DEFAULT_GATED: [Metric; 3] = [Metric::RecallAt5, Metric::Mrr, Metric::NdcgAt10];
    /// The per-query values a baseline keeps to name the queries that regressed.
    pub const PER_QUERY_BASELINE: [Metric; 3] = [Metric::RecallAt5, Metric::Mrr, Metric::NdcgAt10];

    /// The key of the metric in report.json and baselines (`recall_at_5`).
    pub const fn key(self) -> &'static str {
        match self {
            Metric::RecallAt1 => "recall_at_1",
            Metric::RecallAt3 => "recall_at_3",
            Metric::RecallAt5 => "recall_at_5",
            Metric::RecallAt10 => "recall_at_10",
            Metric::Mrr => "mrr",
            Metric::NdcgAt10 => "ndcg_at_10",
            Metric::Map => "map",
            Metric::Precision => "precision",
            Metric::Recall => "recall",
            Metric::F1 => "f1",
            Metric::Fpr => "fpr",
            Metric::FprHardNegative => "fpr_hard_negative",
        }
    }

    /// What the metric is called in reports (`Recall@5`).
    pub const fn label(self) -> &'static str {
        match self {
            Metric::RecallAt1 => "Recall@1",
            Metric::RecallAt3 => "Recall@3",
            Metric::RecallAt5 => "Recall@5",
            Metric::RecallAt10 => "Recall@10",
            Metric::Mrr => "MRR",
            Metric::NdcgAt10 => "nDCG@10",
            Metric::Map => "MAP",
            Metric::Precision => "Precision",
            Metric::Recall => "Recall",
            Metric::F1 => "F1",
            Metric::Fpr => "FPR",
            Metric::FprHardNegative => "FPR (hard neg.)",
        }
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
        Self::RETRIEVAL
            .into_iter()
            .chain(Self::DETECTION)
            .find(|m| m.key() == key)
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// The retrieval metrics, in report order (see [`Metric::RETRIEVAL`]).
pub const RETRIEVAL_METRICS: [Metric; 7] = Metric::RETRIEVAL;

/// The display name of a retrieval or detection metric key (`recall_at_5` → `Recall@5`); an
/// unknown key is its own label.
pub fn label(key: &str) -> &str {
    match Metric::from_key(key) {
        Some(m) => m.label(),
        None => key,
    }
}

impl QueryScores {
    /// The values in [`RETRIEVAL_METRICS`] order (`map` is the per-query AP).
    pub fn values(&self) -> [f64; RETRIEVAL_METRICS.len()] {
        [
            self.recall_at_1,
            self.recall_at_3,
            self.recall_at_5,
            self.recall_at_10,
            self.mrr,
            self.ndcg_at_10,
            self.ap,
        ]
    }

    /// The value of a retrieval metric (`Map` is the per-query AP); `None` for a detection
    /// metric.
    pub fn get(&self, m: Metric) -> Option<f64> {
        Some(match m {
            Metric::RecallAt1 => self.recall_at_1,
            Metric::RecallAt3 => self.recall_at_3,
            Metric::RecallAt5 => self.recall_at_5,
            Metric::RecallAt10 => self.recall_at_10,
            Metric::Mrr => self.mrr,
            Metric::NdcgAt10 => self.ndcg_at_10,
            Metric::Map => self.ap,
            _ => return None,
        })
    }
}

/// One query's metrics, averaged over runs. A plain struct rather than a map: 20,000 queries
/// score without 140,000 key strings. Fields are in the order a sorted map would write them,
/// so the JSON is the same as a map's.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct QueryMetrics {
    /// Average precision of this query (its mean over queries is MAP).
    pub map: f64,
    pub mrr: f64,
    pub ndcg_at_10: f64,
    pub recall_at_1: f64,
    pub recall_at_10: f64,
    pub recall_at_3: f64,
    pub recall_at_5: f64,
}

impl QueryMetrics {
    /// The value of a retrieval metric (`Map` is this query's AP); `None` for a detection metric.
    pub fn get(&self, m: Metric) -> Option<f64> {
        Some(match m {
            Metric::Map => self.map,
            Metric::Mrr => self.mrr,
            Metric::NdcgAt10 => self.ndcg_at_10,
            Metric::RecallAt1 => self.recall_at_1,
            Metric::RecallAt10 => self.recall_at_10,
            Metric::RecallAt3 => self.recall_at_3,
            Metric::RecallAt5 => self.recall_at_5,
            _ => return None,
        })
    }

    /// The mean of several runs' scores of one query.
    /// From values in `RETRIEVAL_METRICS` order (see [`QueryScores::values`]).
    pub fn from_values(v: [f64; RETRIEVAL_METRICS.len()]) -> QueryMetrics {
        let [
            recall_at_1,
            recall_at_3,
            recall_at_5,
            recall_at_10,
            mrr,
            ndcg_at_10,
            map,
        ] = v;
        QueryMetrics {
            map,
            mrr,
            ndcg_at_10,
            recall_at_1,
            recall_at_10,
            recall_at_3,
            recall_at_5,
        }
    }
}

/// Scores one ranked list (already filtered) against graded labels.
///
/// Relevant = relevance >= 1. Relevance-0 labels never count as hits. Only the first
/// [`DEPTH`] ids are looked at. Panics never; a query without relevant labels scores 0
/// everywhere (validation rejects such queries before any run). A query has a handful of
/// labels, so grades are looked up by scanning them: no map is built per query.
pub fn score_query<S: AsRef<str>>(labels: &[Label], ranked: &[S]) -> QueryScores {
    // the first label of a tool id decides its grade (validation rejects repeats)
    let grade = |id: &str| -> Option<u8> {
        labels
            .iter()
            .find(|l| l.tool_id == id)
            .map(|l| l.relevance)
            .filter(|g| *g >= 1)
    };
    let relevant = |i: usize, l: &Label| {
        l.relevance >= 1 && !labels[..i].iter().any(|p| p.tool_id == l.tool_id)
    };
    let n_rel = labels
        .iter()
        .enumerate()
        .filter(|(i, l)| relevant(*i, l))
        .count();
    if n_rel == 0 {
        return QueryScores::default();
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
    // the ideal list: the DEPTH highest relevant grades, highest first, kept on the stack
    let mut top = [0u8; DEPTH];
    let mut n_top = 0usize;
    for (i, l) in labels.iter().enumerate() {
        if !relevant(i, l) {
            continue;
        }
        let at = top[..n_top].iter().position(|g| *g < l.relevance);
        match at {
            Some(at) => {
                let end = n_top.min(DEPTH - 1);
                top.copy_within(at..end, at + 1);
                top[at] = l.relevance;
                n_top = (n_top + 1).min(DEPTH);
            }
            None if n_top < DEPTH => {
                top[n_top] = l.relevance;
                n_top += 1;
            }
            None => {}
        }
    }
    let idcg: f64 = top[..n_top]
        .iter()
        .enumerate()
        .map(|(i, &g)| g as f64 / (i as f64 + 2.0).log2())
        .sum();
    QueryScores {
        recall_at_1: recall(1),
        recall_at_3: recall(3),
        recall_at_5: recall(5),
        recall_at_10: recall(10),
        mrr,
        ndcg_at_10: if idcg > 0.0 { dcg / idcg } else { 0.0 },
        ap: ap_sum / n_rel as f64,
    }
}

/// How many relevance-0 (explicitly non-relevant) labels appear in the first `k` results.
pub fn hard_negatives_in_top<S: AsRef<str>>(labels: &[Label], ranked: &[S], k: usize) -> usize {
    ranked
        .iter()
        .take(k)
        .filter(|id| {
            labels
                .iter()
                .any(|l| l.relevance == 0 && l.tool_id == id.as_ref())
        })
        .count()
}

/// Counts of one detector over one run (positive = flagged; truth positive = malicious).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct Confusion {
    pub tp: u64,
    pub fp: u64,
    pub tn: u64,
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

/// Detection metrics of one run. `None` = undefined.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DetectionScores {
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
    pub fpr: Option<f64>,
    pub fpr_hard_negative: Option<f64>,
}

/// The detection metrics, in report order (see [`Metric::DETECTION`]).
pub const DETECTION_METRICS: [Metric; 5] = Metric::DETECTION;

impl DetectionScores {
    /// The value of a detection metric; `None` when undefined or for a retrieval metric.
    pub fn get(&self, m: Metric) -> Option<f64> {
        match m {
            Metric::Precision => self.precision,
            Metric::Recall => self.recall,
            Metric::F1 => self.f1,
            Metric::Fpr => self.fpr,
            Metric::FprHardNegative => self.fpr_hard_negative,
            _ => None,
        }
    }
}

/// precision = TP/(TP+FP), recall = TP/(TP+FN), F1 = 2PR/(P+R), FPR = FP/(FP+TN).
/// F1 is undefined when P or R is; when both are 0 it is 0 (the limit, equal to
/// 2TP/(2TP+FP+FN)).
pub fn detection_scores(c: &Confusion) -> DetectionScores {
    let precision = ratio(c.tp, c.tp + c.fp);
    let recall = ratio(c.tp, c.tp + c.fn_);
    let f1 = match (precision, recall) {
        (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    DetectionScores {
        precision,
        recall,
        f1,
        fpr: ratio(c.fp, c.fp + c.tn),
        fpr_hard_negative: ratio(c.hard_negative_fp, c.hard_negative_fp + c.hard_negative_tn),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn labels(v: &[(&str, u8)]) -> Vec<Label> {
        v.iter()
            .map(|(t, r)| Label {
                tool_id: (*t).into(),
                relevance: *r,
            })
            .collect()
    }
    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }
    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn worked_example_from_metrics_md() {
        // labels {a:2, b:1}, ranked [c, a, d, b]
        let s = score_query(
            &labels(&[("s:a", 2), ("s:b", 1)]),
            &ids(&["s:c", "s:a", "s:d", "s:b"]),
        );
        close(s.recall_at_1, 0.0);
        close(s.recall_at_3, 0.5);
        close(s.recall_at_5, 1.0);
        close(s.recall_at_10, 1.0);
        close(s.mrr, 0.5);
        close(s.ndcg_at_10, 0.6433224083306327);
        close(s.ap, 0.5);
    }

    #[test]
    fn duplicates_and_off_corpus_ids_are_dropped_and_counted() {
        let corpus: IdPositions = ["s:a", "s:b", "s:c"].into_iter().collect();
        let raw = ids(&["s:c", "x:zzz", "s:c", "s:a", "s:a", "s:b"]);
        let f = filter_ranked(&raw, &corpus);
        assert_eq!(f.ids, ["s:c", "s:a", "s:b"]);
        assert_eq!(f.off_corpus, 1);
        assert_eq!(f.duplicates, 2);
        // a duplicated relevant id counts once: recall cannot exceed 1 and AP is not inflated
        let s = score_query(&labels(&[("s:a", 2)]), &f.ids);
        close(s.recall_at_3, 1.0);
        close(s.mrr, 0.5);
        close(s.ap, 0.5);
    }

    #[test]
    fn relevance_zero_labels_never_count_as_hits() {
        let l = labels(&[("s:a", 2), ("s:neg", 0)]);
        let s = score_query(&l, &ids(&["s:neg", "s:a"]));
        close(s.recall_at_1, 0.0);
        close(s.mrr, 0.5);
        close(s.ap, 0.5);
        // nDCG: DCG = 2/log2(3); IDCG = 2/log2(2) = 2
        close(s.ndcg_at_10, (2.0 / 3f64.log2()) / 2.0);
        assert_eq!(hard_negatives_in_top(&l, &ids(&["s:neg", "s:a"]), 5), 1);
    }

    #[test]
    fn results_past_depth_are_ignored() {
        let mut r: Vec<String> = (0..10).map(|i| format!("s:x{i}")).collect();
        r.push("s:a".into());
        let s = score_query(&labels(&[("s:a", 1)]), &r);
        close(s.recall_at_10, 0.0);
        close(s.mrr, 0.0);
        close(s.ndcg_at_10, 0.0);
    }

    #[test]
    fn recall_is_true_recall_not_hit_rate() {
        let s = score_query(
            &labels(&[("s:a", 1), ("s:b", 1), ("s:c", 1), ("s:d", 1)]),
            &ids(&["s:a"]),
        );
        close(s.recall_at_1, 0.25);
        close(s.ap, 0.25);
    }

    #[test]
    fn perfect_graded_ranking_has_ndcg_one() {
        let s = score_query(&labels(&[("s:a", 2), ("s:b", 1)]), &ids(&["s:a", "s:b"]));
        close(s.ndcg_at_10, 1.0);
        // the reverse order is worse
        let r = score_query(&labels(&[("s:a", 2), ("s:b", 1)]), &ids(&["s:b", "s:a"]));
        assert!(r.ndcg_at_10 < 1.0);
    }

    /// The definitions of metrics.md written the plain way (a map of grades, a sorted ideal
    /// list, a hash set for repeats), against which the allocation-free versions are checked.
    fn reference_score(labels: &[Label], raw: &[Text], corpus: &HashSet<&str>) -> QueryScores {
        let mut seen = HashSet::new();
        let ranked: Vec<&str> = raw
            .iter()
            .map(|s| s.as_str())
            .filter(|id| corpus.contains(id) && seen.insert(*id))
            .take(DEPTH)
            .collect();
        let grades: std::collections::HashMap<&str, u8> = labels
            .iter()
            .filter(|l| l.relevance >= 1)
            .map(|l| (l.tool_id.as_str(), l.relevance))
            .collect();
        let n_rel = grades.len() as f64;
        if grades.is_empty() {
            return QueryScores::default();
        }
        let recall = |k: usize| {
            ranked
                .iter()
                .take(k)
                .filter(|id| grades.contains_key(*id))
                .count() as f64
                / n_rel
        };
        let first = ranked.iter().position(|id| grades.contains_key(id));
        let dcg: f64 = ranked
            .iter()
            .enumerate()
            .map(|(i, id)| {
                grades
                    .get(id)
                    .map_or(0.0, |g| *g as f64 / (i as f64 + 2.0).log2())
            })
            .sum();
        let mut ideal: Vec<u8> = grades.values().copied().collect();
        ideal.sort_unstable_by(|a, b| b.cmp(a));
        let idcg: f64 = ideal
            .iter()
            .take(DEPTH)
            .enumerate()
            .map(|(i, g)| *g as f64 / (i as f64 + 2.0).log2())
            .sum();
        let mut hits = 0.0;
        let mut ap = 0.0;
        for (i, id) in ranked.iter().enumerate() {
            if grades.contains_key(id) {
                hits += 1.0;
                ap += hits / (i as f64 + 1.0);
            }
        }
        QueryScores {
            recall_at_1: recall(1),
            recall_at_3: recall(3),
            recall_at_5: recall(5),
            recall_at_10: recall(10),
            mrr: first.map_or(0.0, |p| 1.0 / (p as f64 + 1.0)),
            ndcg_at_10: dcg / idcg,
            ap: ap / n_rel,
        }
    }

    #[test]
    fn the_fast_metrics_equal_the_plain_definitions_on_random_lists() {
        // seeded xorshift: 5,000 random label sets (0 to 14 labels, grades 0 to 2, some
        // relevant sets larger than the depth) against random lists with repeats and
        // off-corpus ids
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let tools: Vec<Text> = (0..30).map(|i| format!("s:t{i}").into()).collect();
        let corpus: IdPositions = tools.iter().take(25).map(|s| s.as_str()).collect();
        let plain_corpus: HashSet<&str> = tools.iter().take(25).map(|s| s.as_str()).collect();
        let mut checked_hits = 0;
        for _ in 0..5_000 {
            let n_labels = next(15);
            let mut l: Vec<Label> = Vec::new();
            while l.len() < n_labels {
                let t = &tools[next(25)];
                if l.iter().all(|x| &x.tool_id != t) {
                    l.push(Label {
                        tool_id: t.clone(),
                        relevance: next(3) as u8,
                    });
                }
            }
            // now and then longer than the 64 positions `filter_ranked` keeps on the stack
            let len = if next(40) == 0 {
                60 + next(50)
            } else {
                next(21)
            };
            let raw: Vec<Text> = (0..len).map(|_| tools[next(30)].clone()).collect();
            let f = filter_ranked(&raw, &corpus);
            let mut seen = HashSet::new();
            let plain_ids: Vec<&Text> = raw
                .iter()
                .filter(|id| plain_corpus.contains(id.as_str()) && seen.insert(id.as_str()))
                .collect();
            assert_eq!(f.ids, plain_ids, "{raw:?}");
            let off = raw.iter().filter(|id| !plain_corpus.contains(id.as_str()));
            assert_eq!(f.off_corpus, off.count());
            assert_eq!(f.off_corpus + f.duplicates + f.ids.len(), raw.len());
            let fast = score_query(&l, &f.ids);
            let plain = reference_score(&l, &raw, &plain_corpus);
            for key in RETRIEVAL_METRICS {
                let (a, b) = (fast.get(key).unwrap(), plain.get(key).unwrap());
                assert!(
                    (a - b).abs() < 1e-12,
                    "{key}: {a} != {b} for {l:?} / {raw:?}"
                );
            }
            checked_hits += (fast.mrr > 0.0) as usize;
            let negs = raw
                .iter()
                .filter(|id| plain_corpus.contains(id.as_str()))
                .fold(Vec::new(), |mut v: Vec<&Text>, id| {
                    if !v.contains(&id) {
                        v.push(id);
                    }
                    v
                })
                .into_iter()
                .take(5)
                .filter(|id| l.iter().any(|x| x.relevance == 0 && &&x.tool_id == id))
                .count();
            assert_eq!(hard_negatives_in_top(&l, &f.ids, 5), negs);
        }
        // the random lists did hit labelled tools often, so the comparison meant something
        assert!(checked_hits > 1_000, "{checked_hits}");
    }

    #[test]
    fn every_metric_round_trips_through_its_key_and_keeps_its_label() {
        let all: Vec<Metric> = Metric::RETRIEVAL
            .into_iter()
            .chain(Metric::DETECTION)
            .collect();
        assert_eq!(all.len(), 12);
        for m in &all {
            assert_eq!(Metric::from_key(m.key()), Some(*m));
            assert_eq!(label(m.key()), m.label());
            assert_eq!(m.to_string(), m.key());
        }
        let keys: HashSet<&str> = all.iter().map(|m| m.key()).collect();
        assert_eq!(keys.len(), all.len(), "keys are unique");
        assert_eq!(
            Metric::RETRIEVAL.map(Metric::key),
            [
                "recall_at_1",
                "recall_at_3",
                "recall_at_5",
                "recall_at_10",
                "mrr",
                "ndcg_at_10",
                "map"
            ]
        );
        assert_eq!(
            Metric::DETECTION.map(Metric::key),
            ["precision", "recall", "f1", "fpr", "fpr_hard_negative"]
        );
        assert_eq!(label("recall_at_5"), "Recall@5");
        assert_eq!(label("fpr_hard_negative"), "FPR (hard neg.)");
        // an unknown key is no metric and is its own label
        assert_eq!(Metric::from_key("Recall@5"), None);
        assert_eq!(Metric::from_key("ap"), None);
        assert_eq!(label("probes_failed"), "probes_failed");
    }

    #[test]
    fn false_positive_rates_are_the_only_lower_is_better_metrics() {
        for m in Metric::RETRIEVAL.into_iter().chain(Metric::DETECTION) {
            let want = if m.key().starts_with("fpr") {
                Direction::Lower
            } else {
                Direction::Higher
            };
            assert_eq!(m.direction(), want, "{m}");
        }
    }

    #[test]
    fn a_query_and_a_detector_answer_only_their_own_metrics() {
        let q = QueryScores {
            recall_at_5: 0.5,
            ap: 0.25,
            ..Default::default()
        };
        assert_eq!(q.get(Metric::RecallAt5), Some(0.5));
        assert_eq!(q.get(Metric::Map), Some(0.25));
        assert_eq!(q.get(Metric::Fpr), None);
        let d = DetectionScores {
            fpr: Some(0.1),
            ..Default::default()
        };
        assert_eq!(d.get(Metric::Fpr), Some(0.1));
        assert_eq!(d.get(Metric::Mrr), None);
    }

    #[test]
    fn undefined_ratios_stay_undefined() {
        // flags nothing, no positives: precision, recall and F1 undefined
        let d = detection_scores(&Confusion {
            tn: 5,
            ..Default::default()
        });
        assert_eq!(d.precision, None);
        assert_eq!(d.recall, None);
        assert_eq!(d.f1, None);
        assert_eq!(d.fpr, Some(0.0));
        assert_eq!(d.fpr_hard_negative, None);
        // flags nothing, positives exist: precision undefined, recall 0, F1 undefined
        let d = detection_scores(&Confusion {
            fn_: 3,
            tn: 2,
            ..Default::default()
        });
        assert_eq!(d.precision, None);
        assert_eq!(d.recall, Some(0.0));
        assert_eq!(d.f1, None);
        // only positives: FPR undefined
        let d = detection_scores(&Confusion {
            tp: 1,
            ..Default::default()
        });
        assert_eq!(d.fpr, None);
        assert_eq!(d.f1, Some(1.0));
    }

    #[test]
    fn detection_worked_example() {
        let c = Confusion {
            tp: 8,
            fp: 2,
            tn: 18,
            fn_: 2,
            hard_negative_fp: 2,
            hard_negative_tn: 3,
        };
        let d = detection_scores(&c);
        close(d.precision.unwrap(), 0.8);
        close(d.recall.unwrap(), 0.8);
        close(d.f1.unwrap(), 0.8);
        close(d.fpr.unwrap(), 0.1);
        close(d.fpr_hard_negative.unwrap(), 0.4);
        // both P and R zero: F1 is the limit 0
        let z = detection_scores(&Confusion {
            fp: 1,
            fn_: 1,
            ..Default::default()
        });
        assert_eq!(z.f1, Some(0.0));
    }
}
