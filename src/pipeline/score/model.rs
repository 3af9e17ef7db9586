//! What scoring produces, section by section: tool discovery (per query and aggregated) and
//! every detector (metrics, categories, per-entry outcomes, the live rug-pull). The report
//! (`report::model::Report`, a later stage) holds these sections beside the gate's verdict.

use crate::infra::text::Text;
use crate::pipeline::dataset::{Category, Truth};
use crate::pipeline::score::diagnostics::ToolDiagnostics;
use crate::pipeline::score::metrics::Confusion;
pub use crate::pipeline::score::metrics::{Direction, QueryMetrics};
use crate::pipeline::score::stats::Summary;
use crate::pipeline::sut::launch::catalog::Coverage;
use crate::pipeline::sut::observe::{DetectorObservations, RetrievalObservations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Tool discovery: every labelled query sent through the system under test, scored against
/// the graded labels.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalReport {
    /// The system under test's name.
    pub retriever: String,
    /// The tool corpus's version.
    pub corpus_version: String,
    /// The golden set's version, when it has one.
    pub golden_version: Option<String>,
    /// Golden queries measured per run.
    pub queries: usize,
    /// Depth the ranked lists are scored to.
    pub depth: usize,
    /// Results asked for per query (depth + headroom).
    pub requested: usize,
    /// Runs completed (fewer than asked when the system failed).
    pub runs_completed: usize,
    /// Aggregate metrics by name (`recall_at_1`, ..., `mrr`, `ndcg_at_10`, `map`): per-run
    /// means, then statistics over runs.
    pub metrics: BTreeMap<String, Summary>,
    /// Search latency over every query of every run, in milliseconds.
    pub latency_ms: Latency,
    /// Counts of queries the system failed or answered oddly.
    pub diagnostics: RetrievalDiagnostics,
    /// Per tool and per server: how often each relevant tool is found in the top 5, the
    /// relevant tools never found, the confusions (which tool took a missed tool's place in
    /// the top 5) and the hard negatives that reached a top 5. `top_k` is 5; counts are summed
    /// over runs. Empty (`runs` 0) in a report written before evalgate had them.
    #[serde(default)]
    pub tool_diagnostics: ToolDiagnostics,
    /// What evalgate established about the system's catalog before measuring (systems reached
    /// over MCP, REST or launched); absent for in-process and recorded systems.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<Coverage>,
    /// Means over the queries of each golden-set split (`dev`, `held_out`), when the golden set
    /// marks splits: a system tuned to the dev queries scores visibly lower on the held-out ones.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub splits: BTreeMap<String, SplitSummary>,
    /// Every golden query with its labels, first-run results and metrics, in golden-set order.
    pub per_query: Vec<QueryReport>,
    /// Raw results of every run (for re-scoring); in the report's `observations_file` instead
    /// when it names one.
    #[serde(default, skip_serializing_if = "RetrievalObservations::is_detached")]
    pub observations: RetrievalObservations,
}

/// Search latency in milliseconds over every answer of every run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Latency {
    /// Median, in milliseconds; `null` with no measured query.
    pub p50: Option<f64>,
    /// 95th percentile (nearest rank), in milliseconds.
    pub p95: Option<f64>,
    /// Slowest, in milliseconds.
    pub max: Option<f64>,
    /// Mean, in milliseconds.
    pub mean: Option<f64>,
}

/// Counts summed over all runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalDiagnostics {
    /// Results naming a tool outside the frozen corpus (dropped).
    pub off_corpus_results: usize,
    /// Repeated results (dropped after the first occurrence).
    pub duplicate_results: usize,
    /// Queries whose filtered list was shorter than the depth although the system returned
    /// everything asked for (filtering starved them).
    pub starved_queries: usize,
    /// Relevance-0 labels (explicit non-relevant near-duplicates) found in a top 5.
    pub hard_negatives_in_top_5: usize,
    /// Answers with no result at all (before filtering), over all runs.
    #[serde(default)]
    pub empty_answers: usize,
    /// Answers received, over all runs.
    #[serde(default)]
    pub answers: usize,
    /// Queries whose runs scored differently (with `--runs` above 1: a metric of a later run
    /// differs from the first run's): the system answers identical queries differently. Runs
    /// that only reorder results without changing a metric are not counted.
    #[serde(default)]
    pub unstable_queries: usize,
}

/// A graded label: a tool id and its relevance (2 primary, 1 acceptable, 0 explicitly not
/// relevant).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LabelRef {
    /// `server:tool`.
    pub tool_id: Text,
    /// 2 = primary, 1 = acceptable, 0 = explicitly not relevant (a hard negative).
    pub relevance: u8,
}

/// Metrics over the queries of one split (means of the per-query, run-averaged values).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SplitSummary {
    /// Queries of the split.
    pub queries: usize,
    /// Mean of each per-query metric over the split's queries.
    pub metrics: BTreeMap<String, f64>,
}

/// One query: its labels, what the system returned (first run) and its run-averaged metrics.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryReport {
    /// The golden query's id.
    pub id: Text,
    /// The query text, as the golden set gives it.
    pub query: Text,
    /// The golden-set split this query belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Text>,
    /// The golden set's notes on the query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<Text>,
    /// The relevant tools with their grades.
    pub labels: Vec<LabelRef>,
    /// The filtered top results of the first run (up to the depth).
    pub retrieved: Vec<Text>,
    /// Per-query metrics averaged over runs (`map` is this query's AP).
    pub metrics: QueryMetrics,
    /// True when the runs scored this query differently (a flaky query).
    pub unstable: bool,
}

/// Security detectors: each detector over the labelled malicious and benign tool definitions.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SecurityReport {
    /// The security corpus's version, when it has one.
    pub corpus_version: Option<String>,
    /// Entries measured per run.
    pub entries: usize,
    /// Entries per category.
    pub categories: BTreeMap<Category, usize>,
    /// One report per detector (and per tier of a detector with tiers).
    pub detectors: Vec<DetectorReport>,
    /// Every detector's raw verdicts; in the report's `observations_file` instead when it
    /// names one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observations: Vec<DetectorObservations>,
}

/// One detector: confusion counts, precision/recall/F1/FPR over runs, per category, per entry.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DetectorReport {
    /// The detector's name (`/review` appended for a review-tier row).
    pub detector: String,
    /// Whose detector it is: evalgate's reference checker, an external scanner, or the system
    /// under test's own (`mcpproxy's own scan`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// For a system with tiers: which of this detector's two rows this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// Attack categories the detector covers; its precision/recall/F1 count malicious entries of
    /// these categories only (every benign entry always counts).
    pub scope: Vec<Category>,
    /// Entries the detector cannot judge (drift: no `before`/`after`), left out of every count
    /// (their outcome is `not_applicable`).
    #[serde(default)]
    pub not_applicable: usize,
    /// Runs in which the detector judged every entry.
    pub runs_completed: usize,
    /// Counts summed over runs.
    pub counts: Confusion,
    /// The confusion counts of each run.
    pub per_run_counts: Vec<Confusion>,
    /// `precision`, `recall`, `f1`, `fpr`, `fpr_hard_negative`: per-run values, then statistics.
    pub metrics: BTreeMap<String, Summary>,
    /// Per category: recall for attacks, flag rate (FPR) for benign and hard negatives.
    pub per_category: Vec<CategoryReport>,
    /// Hard negatives by the attack category they resemble: their flag rate.
    pub hard_negatives_by_resemblance: Vec<CategoryReport>,
    /// Every entry's outcome.
    pub entries: Vec<EntryOutcome>,
    /// Rug-pulls played against a running proxy (detectors that play them live).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveReport>,
}

/// Which findings a detector row counts, for a system that has tiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// What the system blocks (mcpproxy: `hard` findings, a `dangerous` server). Gated.
    Blocking,
    /// Everything it flagged, warnings for review included. Gated only against a baseline
    /// that has this row; never by the limits for a new detector.
    Review,
}

impl Tier {
    pub fn label(self) -> &'static str {
        match self {
            Tier::Blocking => "blocked",
            Tier::Review => "review included",
        }
    }
}

/// Rug-pulls played live: what the proxy did, per category and per entry, summed over runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LiveReport {
    /// Per category (hard negatives split by what they resemble): detection, block and
    /// restore rates.
    pub per_category: Vec<LiveCategory>,
    /// Every played entry.
    pub entries: Vec<LiveEntry>,
}

/// Rug-pulls played live, per category: how often the proxy reported, blocked and restored.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LiveCategory {
    /// The entry category.
    pub category: Category,
    /// For hard negatives: the attack category they resemble.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resembles: Option<Category>,
    /// Entries played per run.
    pub played: usize,
    /// Counts summed over runs.
    pub relisted: usize,
    /// Runs × entries where the proxy reported the change.
    pub reported: usize,
    /// Runs × entries where the changed tool could not be called.
    pub blocked: usize,
    /// Runs × entries callable again after the change was reverted.
    pub restored: usize,
    /// Shares per run, then statistics: reported / played, blocked / played, restored / played.
    pub detection_rate: Summary,
    /// Blocked / played per run, then statistics.
    pub block_rate: Summary,
    /// Restored / played per run, then statistics.
    pub restore_rate: Summary,
}

/// One rug-pull played live against the proxy, over every run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LiveEntry {
    /// The security entry's id.
    pub id: String,
    /// The entry's category.
    pub category: Category,
    /// `malicious` or `benign`.
    pub label: Truth,
    /// Runs in which the entry was played.
    pub runs: usize,
    /// Runs in which the proxy listed the changed tool.
    pub relisted_runs: usize,
    /// Runs in which the proxy reported the change.
    pub reported_runs: usize,
    /// Runs in which the changed tool could not be called.
    pub blocked_runs: usize,
    /// Runs in which the tool was callable again after the revert.
    pub restored_runs: usize,
    /// Runs in which the tool was approved and callable before any change.
    pub baseline_ok_runs: usize,
    /// The proxy's signals after the change, from any run.
    pub signals: Vec<String>,
    /// Why something was missed, from the first run that says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One category of the security corpus: recall for attacks, flag rate for benign entries.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CategoryReport {
    /// The entry category (an attack category, `benign` or `hard_negative`).
    pub category: Category,
    /// Entries of the category.
    pub total: usize,
    /// Flags summed over runs.
    pub flagged: usize,
    /// Share flagged (recall for attacks, FPR for benign), statistics over runs.
    pub rate: Summary,
}

/// One security entry as a detector judged it: the truth, the outcome (tp/fp/tn/fn or
/// not_applicable) and the signals that fired.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EntryOutcome {
    /// The security entry's id.
    pub id: String,
    /// The entry's category.
    pub category: Category,
    /// `malicious` or `benign`.
    pub label: Truth,
    /// In how many runs the entry was flagged.
    pub flagged_runs: usize,
    /// Signals seen in any run (rule ids, changed aspects).
    pub signals: Vec<String>,
    /// By majority over runs.
    pub outcome: Outcome,
    /// The entry's tool description, as the corpus gives it.
    pub description: String,
}

/// How a detector's decision on one entry came out, by majority over runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A malicious entry, flagged.
    Tp,
    /// A benign entry, flagged.
    Fp,
    /// A benign entry, not flagged.
    Tn,
    /// A malicious entry, missed.
    Fn,
    /// An attack of a category the detector does not claim to cover (counted nowhere).
    OutOfScope,
    /// An entry the detector cannot judge (drift without definitions; counted nowhere).
    NotApplicable,
}
