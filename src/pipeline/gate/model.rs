//! The gate's result as the report serializes it: the verdict, every check and the queries that
//! regressed. Pure data; the verdict decides the exit code and the check run's conclusion.

use crate::infra::text::Text;
use crate::pipeline::score::diagnostics::ConfusionPair;
pub use crate::pipeline::score::metrics::Direction;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// evalgate's exit codes, one name each (`cli::help` lists them for the user).
pub struct ExitCode;

impl ExitCode {
    /// The gate held, or nothing was gated (no baseline: report only).
    pub const PASS: i32 = 0;
    /// The gate failed: a gated metric regressed, or a detector broke its limits.
    pub const GATE_FAILED: i32 = 1;
    /// Bad input or usage: invalid dataset, baseline, setting or flag (nothing is written).
    pub const BAD_INPUT: i32 = 2;
    /// The system under test could not be measured, or not completely.
    pub const SUT_FAILED: i32 = 3;
}

/// The gate's verdict; the exit code follows from it (0, 1, 0, 3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every gated check held.
    Pass,
    /// At least one gated check failed (exit 1).
    Fail,
    /// No baseline: numbers are reported, nothing is gated (exit 0).
    NoBaseline,
    /// The system under test could not be measured (exit 3).
    // the default, so that a report that forgot to set its verdict fails closed
    #[default]
    Error,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::NoBaseline => "no baseline",
            Verdict::Error => "error",
        }
    }
}

/// The gate's result: the verdict, the baseline compared with, a one-line summary in words
/// and every check.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct GateReport {
    /// `pass`, `fail`, `no_baseline` or `error` (the run was incomplete).
    pub verdict: Verdict,
    /// The baseline file compared with (`embedded:...` for the compiled-in one).
    pub baseline: Option<String>,
    /// One line saying what happened.
    pub summary: String,
    /// Every comparison made (gated and `info`).
    pub checks: Vec<Check>,
    /// What was measured but has no gated check (`retrieval`, `detector:NAME`): with a
    /// baseline in use, a measured part it does not cover (a new or renamed detector, a section
    /// the baseline lacks). A pass with such a part is a neutral check run, not a success.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ungated: Vec<String>,
    /// Queries whose per-query score dropped the most against the baseline (or, with no
    /// per-query baseline, scored lowest).
    pub worst_queries: Vec<QueryDelta>,
    /// Queries whose per-query score rose the most against the baseline, best first (with
    /// `worst_queries`, the queries that changed most); empty without per-query baseline
    /// values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub improved_queries: Vec<QueryDelta>,
    /// The significance level of the paired comparisons and whether the gate requires it
    /// (`[gate] significance`, `require_significance`); absent in reports written before
    /// evalgate had them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub significance: Option<Significance>,
    /// The confusion pairs of this run that the baseline does not have (reported, never
    /// gated); absent when the baseline keeps no confusions (written before evalgate had
    /// them) or retrieval was not compared with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_confusions: Option<NewConfusions>,
    /// Per detector whose baseline keeps its per-entry verdicts: the entries that flipped and
    /// McNemar's test; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detector_flips: Vec<DetectorFlips>,
}

/// `[gate] significance` and `require_significance`: the level at which a paired comparison is
/// significant (after Holm–Bonferroni over the gate's paired comparisons) and whether a drop
/// beyond the tolerance fails only when it is significant.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Significance {
    /// `[gate] significance`: the level a Holm-adjusted p-value is held to.
    pub alpha: f64,
    /// `[gate] require_significance`: a regression fails only when it is significant.
    pub required: bool,
}

impl Default for Significance {
    fn default() -> Self {
        Significance {
            alpha: 0.05,
            required: false,
        }
    }
}

/// Confusion pairs (a relevant tool missed the top 5, `taken` was there instead) that the
/// baseline does not have: the worst [`NEW_CONFUSIONS_MAX`] and how many there are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NewConfusions {
    /// New pairs in all.
    pub total: usize,
    /// The worst of them (most queries first), at most 20.
    pub pairs: Vec<ConfusionPair>,
}

/// Most new confusion pairs the gate's report lists (`total` counts them all).
pub const NEW_CONFUSIONS_MAX: usize = 20;

/// How a CI system's check should conclude: green only when the gate held and covered
/// everything measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conclusion {
    Success,
    /// Not a failure, and not a green check either: nothing (or not everything) was gated, or a
    /// failed gate was let through.
    Neutral,
    Failure,
}

impl GateReport {
    /// The exit code when a failed gate may be let through (`fail_on_regression: false`, the
    /// action's `fail-on: never`): a failure is then 0; an error stays an error.
    pub fn exit_code_with(&self, fail_on_regression: bool) -> i32 {
        match self.verdict {
            Verdict::Pass | Verdict::NoBaseline => ExitCode::PASS,
            Verdict::Fail if !fail_on_regression => ExitCode::PASS,
            Verdict::Fail => ExitCode::GATE_FAILED,
            Verdict::Error => ExitCode::SUT_FAILED,
        }
    }

    /// The check's conclusion for the job's exit code `code` (they always agree). Success only
    /// when the gate held and covered everything measured: a run with nothing gated (no
    /// baseline for these datasets) or with a part the baseline does not gate (a new detector)
    /// is neutral, so the gate switching off is never a silent green check.
    pub fn conclusion(&self, code: i32) -> Conclusion {
        match (code, self.verdict) {
            (0, Verdict::Fail | Verdict::NoBaseline) => Conclusion::Neutral,
            (0, Verdict::Pass) if !self.ungated.is_empty() => Conclusion::Neutral,
            (0, _) => Conclusion::Success,
            _ => Conclusion::Failure,
        }
    }
}

/// What a check compares with: the baseline within a tolerance, a ceiling, a floor, or
/// nothing (`info`: reported only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// Fails when worse than baseline by more than the tolerance.
    Tolerance,
    /// Fails when above the ceiling (FPR).
    Ceiling,
    /// Fails when below the floor (recall).
    Floor,
    /// Reported, not gated.
    #[default]
    Info,
}

/// How a check came out: `pass`, `fail`, or `info` when nothing is gated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Pass,
    Fail,
    #[default]
    Info,
}

/// One comparison of a measured number with its baseline value, tolerance, ceiling or floor.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    /// `retrieval` or `detector:<name>`.
    pub subject: String,
    /// The metric compared (`recall_at_5`, `fpr`, ...).
    pub metric: String,
    /// How the limit is set: the baseline's tolerance, a ceiling, a floor, or `info` (not gated).
    pub kind: CheckKind,
    /// Which way is better for this metric.
    pub direction: Direction,
    /// The baseline's value; `null` when the baseline has none for this metric.
    pub baseline: Option<f64>,
    /// This run's mean; `null` when undefined (never gated).
    pub current: Option<f64>,
    /// 95 % confidence interval of `current` over runs.
    pub ci95: Option<[f64; 2]>,
    /// current − baseline.
    pub delta: Option<f64>,
    /// The limit applied: baseline ∓ tolerance, the ceiling or the floor.
    pub limit: Option<f64>,
    /// `pass`, `fail`, or `info` when nothing is gated (an undefined value included).
    pub status: CheckStatus,
    /// What the check found, in one sentence.
    pub message: String,
    /// The paired per-query comparison with the baseline (a gated retrieval metric whose
    /// per-query values the baseline keeps); absent otherwise and in reports written before
    /// evalgate had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedComparison>,
}

/// How the randomization test's p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PairedMethod {
    /// Every sign assignment of the non-zero deltas enumerated (at most 20 of them).
    Exact,
    /// 10,000 random sign assignments, seeded: p = (1 + as extreme) / (1 + 10,000).
    MonteCarlo,
}

/// One metric's per-query values against the baseline's, over the queries present in both:
/// how many changed which way, a two-sided paired randomization test of the mean delta and a
/// paired bootstrap 95 % interval of it (docs/metrics.md, "Paired comparison").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PairedComparison {
    /// Queries present in both the run and the baseline's per-query values.
    pub queries: usize,
    /// Queries whose value moved the better way (by more than 0.000001).
    pub better: usize,
    /// Queries whose value moved the worse way (by more than 0.000001).
    pub worse: usize,
    /// Queries whose value moved by at most 0.000001.
    pub unchanged: usize,
    /// Mean of current − baseline over these queries.
    pub mean_delta: f64,
    /// Paired bootstrap 95 % interval of `mean_delta` (10,000 resamples, seeded).
    pub delta_ci95: Option<[f64; 2]>,
    /// Two-sided p-value of the paired randomization (sign-flip) test of `mean_delta`.
    pub p_value: f64,
    /// `exact` (every sign assignment) or `monte_carlo` (seeded draws).
    pub method: PairedMethod,
    /// Sign assignments counted: 2^n when exact, else the draws.
    pub permutations: usize,
    /// `p_value` adjusted by Holm–Bonferroni over the gate's paired comparisons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_holm: Option<f64>,
    /// Whether `p_holm` is at most `[gate] significance` (alpha, default 0.05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub significant: Option<bool>,
}

/// A query whose score dropped against the baseline (or, without per-query baseline values,
/// scored lowest).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryDelta {
    /// The golden query's id.
    pub id: Text,
    /// The query text.
    pub query: Text,
    /// The per-query metric compared.
    pub metric: String,
    /// The baseline's value for the query; `null` without per-query baseline values.
    pub baseline: Option<f64>,
    /// This run's value for the query (mean over runs).
    pub current: f64,
    /// `current - baseline`; `null` without a baseline value.
    pub delta: Option<f64>,
    /// How the query's relevant tool moved in the ranked list, when the baseline keeps the
    /// query's top 10 (`retrieval.per_query_ranked`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<RankChange>,
}

/// A relevant tool's rank (1-based, in the top 10) in the baseline's list and now; `None` is
/// "not in the top 10".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RankChange {
    /// The relevant tool that moved most the way the query changed.
    pub tool: Text,
    /// Its 1-based rank in the baseline's list; `null` when not in its top 10.
    pub before: Option<usize>,
    /// Its 1-based rank now; `null` when not in the top 10.
    pub after: Option<usize>,
    /// For a query that got worse: the tools now ranked at or above the tool's old rank that
    /// were not there in the baseline's list (at most 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub took_its_place: Vec<Text>,
}

/// One detector's verdicts against the baseline's, entry by entry (a baseline written by
/// `evalgate baseline update` keeps them in `security.detectors.*.verdicts`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DetectorFlips {
    /// The detector's name.
    pub detector: String,
    /// Entries judged in both (attacks in the detector's scope and benign entries).
    pub entries: usize,
    /// Attacks flagged in the baseline and missed now.
    pub newly_missed: usize,
    /// Benign entries (hard negatives included) flagged now and not in the baseline.
    pub newly_flagged: usize,
    /// Flips the right way: attacks caught now, benign entries no longer flagged.
    pub fixed: usize,
    /// The flipped entries, wrong way first (newly missed, then newly flagged), then the fixed
    /// ones; at most [`FLIPS_MAX`].
    pub flips: Vec<EntryFlip>,
    /// McNemar's exact test of the paired verdicts.
    pub mcnemar: McNemar,
}

/// Most flipped entries a detector's list keeps.
pub const FLIPS_MAX: usize = 10;

/// One entry whose verdict flipped since the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EntryFlip {
    /// The security entry's id.
    pub id: Text,
    /// Whether the entry is an attack (else benign or a hard negative).
    pub malicious: bool,
    /// Flagged now (so not flagged in the baseline).
    pub flagged: bool,
}

/// McNemar's exact test of paired yes/no verdicts: under the null hypothesis the discordant
/// entries flip either way with probability ½; two-sided p = min(1, 2 · P(X ≤ min(b, c))),
/// X ~ Binomial(b + c, ½); 1 when nothing flipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McNemar {
    /// Flagged in the baseline, not now.
    pub unflagged: usize,
    /// Flagged now, not in the baseline.
    pub flagged: usize,
    /// Two-sided exact p-value (binomial on the discordant pairs).
    pub p_value: f64,
    /// `p_value` adjusted by Holm–Bonferroni over the gate's family (the retrieval metrics'
    /// paired comparisons and every detector's McNemar test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_holm: Option<f64>,
    /// Whether `p_holm` is at most `[gate] significance`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub significant: Option<bool>,
}
