//! The scorecard: one number out of 100 for the system under test, in five weighted dimensions
//! (discovery 30, robustness 20, security 20, performance 20, transparency 10), computed from
//! what the report already measured, without a judge. A pure function of the report's sections:
//! the same observations give the same scorecard. The rubric (every formula, the weights, what
//! a dimension that was not measured does, the rounding) is in docs/scorecard.md; a change to it
//! is a change of [`RUBRIC`].
//!
//! The scorecard is informational: it never gates.

use crate::pipeline::measure::probes::{NO_MESSAGE, ProbeOutcome, RobustnessReport};
use crate::pipeline::score::metrics::Metric;
use crate::pipeline::score::model::{RetrievalReport, SecurityReport, Tier};
use crate::pipeline::sut::SutError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of the rubric in docs/scorecard.md. Scorecards of different rubrics are not
/// compared (no Δ).
pub const RUBRIC: u32 = 1;

/// A dimension's name, weight (points) and how it is computed.
type Row = (&'static str, f64, fn(&Inputs) -> Part);

/// The five dimensions, in the order every rendering shows them.
pub const DIMENSIONS: [Row; 5] = [
    ("discovery", 30.0, discovery),
    ("robustness", 20.0, robustness),
    ("security", 20.0, security),
    ("performance", 20.0, performance),
    ("transparency", 10.0, transparency),
];

/// The retrieval metrics discovery is the mean of.
pub const DISCOVERY_METRICS: [Metric; 3] = [Metric::RecallAt5, Metric::Mrr, Metric::NdcgAt10];

/// Performance: full marks at a search latency p95 at or under this many milliseconds...
pub const PERF_FULL_MS: f64 = 100.0;
/// ... none at or over this many, linear in between...
pub const PERF_ZERO_MS: f64 = 1000.0;
/// ... for a corpus of up to this many tools; both bounds grow in proportion to a larger one.
pub const PERF_TOOLS: f64 = 10_000.0;

/// One number out of 100, and the five dimensions it is made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Scorecard {
    /// The rubric's version (docs/scorecard.md).
    pub rubric: u32,
    /// Out of 100: the measured dimensions' points over their weights, times 100 (a dimension
    /// that was not measured is left out and the others' weights renormalised), one decimal.
    /// `null` when no dimension was measured.
    pub total: Option<f64>,
    /// The weights of the measured dimensions (100 when every dimension was measured).
    pub measured_weight: f64,
    /// Every dimension, in [`DIMENSIONS`] order.
    pub dimensions: Vec<Dimension>,
    /// The baseline's scorecard, when the baseline has one of the same rubric: Δ is against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<ScorecardBaseline>,
}

/// One dimension: its points out of its weight, or not measured, and what it was computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dimension {
    /// `discovery`, `robustness`, `security`, `performance` or `transparency`.
    pub name: String,
    /// Points, out of `max`, one decimal; `null` when not measured (never 0 for "not measured").
    pub score: Option<f64>,
    /// The dimension's weight.
    pub max: f64,
    /// The numbers the score was computed from (six decimals).
    pub inputs: BTreeMap<String, f64>,
    /// How the score came about, or why the dimension was not measured.
    pub note: String,
}

/// What a baseline keeps of a scorecard, to show Δ against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScorecardBaseline {
    /// The rubric version the baseline's scorecard was computed with.
    pub rubric: u32,
    /// The baseline's total out of 100; `null` when it has none.
    pub total: Option<f64>,
    /// Points per dimension; `null` for one that was not measured.
    pub dimensions: BTreeMap<String, Option<f64>>,
}

impl Scorecard {
    /// What a baseline keeps of this scorecard.
    pub fn to_baseline(&self) -> ScorecardBaseline {
        ScorecardBaseline {
            rubric: self.rubric,
            total: self.total,
            dimensions: self
                .dimensions
                .iter()
                .map(|d| (d.name.clone(), d.score))
                .collect(),
        }
    }

    /// Sets the baseline's scorecard to compare with; one of another rubric is not comparable
    /// and is left out.
    pub fn against(&mut self, b: Option<&ScorecardBaseline>) {
        self.baseline = b.filter(|b| b.rubric == self.rubric).cloned();
    }

    /// Δ of the total against the baseline's; `None` without one or when either is undefined.
    /// When the two measured different dimensions, both totals are taken over the dimensions
    /// measured in both (see [`Self::compared`]): a dimension left out of one total moves it
    /// without any change in the system.
    pub fn delta(&self) -> Option<f64> {
        let b = self.baseline.as_ref()?;
        let Some(both) = self.compared() else {
            return Some(round1(self.total? - b.total?));
        };
        let weight: f64 = both.iter().map(|d| d.max).sum();
        let now: f64 = both.iter().filter_map(|d| d.score).sum();
        let then: f64 = both.iter().filter_map(|d| b.dimensions[&d.name]).sum();
        (weight > 0.0).then(|| round1(100.0 * (now - then) / weight))
    }

    /// The dimensions measured both here and in the baseline, when that is not every dimension
    /// measured in each: a baseline is written with `--robustness off`, so it has no robustness
    /// or transparency points to compare a run with the probes against. `None` when the two
    /// measured the same dimensions, or without a baseline.
    pub fn compared(&self) -> Option<Vec<&Dimension>> {
        let b = self.baseline.as_ref()?;
        let in_baseline = |d: &&Dimension| b.dimensions.get(&d.name).is_some_and(Option::is_some);
        let measured = self.dimensions.iter().filter(|d| d.score.is_some());
        let both: Vec<&Dimension> = measured.clone().filter(in_baseline).collect();
        let in_b = b.dimensions.values().filter(|p| p.is_some()).count();
        (both.len() != measured.count() || both.len() != in_b).then_some(both)
    }

    /// Δ of one dimension against the baseline's.
    pub fn dimension_delta(&self, name: &str) -> Option<f64> {
        let b = (*self.baseline.as_ref()?.dimensions.get(name)?)?;
        let d = self.dimensions.iter().find(|d| d.name == name)?;
        Some(round1(d.score? - b))
    }
}

/// What the scorecard is computed from: the report's sections.
#[derive(Debug, Clone, Copy, Default)]
pub struct Inputs<'a> {
    pub retrieval: Option<&'a RetrievalReport>,
    pub security: Option<&'a SecurityReport>,
    pub robustness: Option<&'a RobustnessReport>,
    /// The system under test failed during the measurement.
    pub failure: Option<&'a SutError>,
    /// Tools in the corpus (for the performance curve).
    pub corpus_tools: Option<usize>,
}

/// The scorecard of `i`: see docs/scorecard.md for every formula.
pub fn scorecard(i: &Inputs) -> Scorecard {
    let (mut points, mut weight) = (0.0, 0.0);
    let dimensions: Vec<Dimension> = DIMENSIONS
        .iter()
        .map(|&(name, max, part)| {
            let (fraction, inputs, note) = part(i);
            let fraction = fraction
                .filter(|f| f.is_finite())
                .map(|f| f.clamp(0.0, 1.0));
            if let Some(f) = fraction {
                // the total from the unrounded points, so rounding happens once
                points += max * f;
                weight += max;
            }
            Dimension {
                name: name.to_string(),
                score: fraction.map(|f| round1(max * f)),
                max,
                inputs: inputs.into_iter().map(|(k, v)| (k, round6(v))).collect(),
                note,
            }
        })
        .collect();
    Scorecard {
        rubric: RUBRIC,
        total: (weight > 0.0).then(|| round1(100.0 * points / weight)),
        measured_weight: weight,
        dimensions,
        baseline: None,
    }
}

type Part = (Option<f64>, Vec<(String, f64)>, String);

fn not_measured(why: &str) -> Part {
    (None, Vec::new(), format!("not measured: {why}"))
}

/// The mean of Recall@5, MRR and nDCG@10 (each a mean over queries and runs); a metric that
/// is undefined is left out of the mean.
fn discovery(i: &Inputs) -> Part {
    let Some(r) = i.retrieval else {
        return not_measured("no tool discovery in this run");
    };
    let vals: Vec<(String, f64)> = DISCOVERY_METRICS
        .iter()
        .filter_map(|m| {
            let v = r.metrics.get(m.key()).and_then(|s| s.mean)?;
            v.is_finite().then(|| (m.key().to_string(), v))
        })
        .collect();
    if vals.is_empty() {
        return not_measured("Recall@5, MRR and nDCG@10 are undefined");
    }
    let mean = vals.iter().map(|(_, v)| v).sum::<f64>() / vals.len() as f64;
    let names: Vec<&str> = vals.iter().map(|(k, _)| k.as_str()).collect();
    let note = format!("mean of {}", names.join(", "));
    (Some(mean), vals, note)
}

/// The share of robustness checks passed: every probe that applies (answered sensibly or
/// refused with a message passes) and "still answering afterwards". A system that failed during
/// the measurement scores 0.
fn robustness(i: &Inputs) -> Part {
    if let Some(f) = i.failure {
        let note = format!("the system failed during the measurement ({})", f.kind());
        return (Some(0.0), Vec::new(), note);
    }
    let Some(r) = i.robustness else {
        return not_measured("no robustness probes (--robustness off, or no tool discovery)");
    };
    let count = |o: ProbeOutcome| r.probes.iter().filter(|p| p.outcome == o).count();
    let applicable = r.probes.len() - count(ProbeOutcome::NotApplicable);
    let passed = count(ProbeOutcome::Answered) + count(ProbeOutcome::Refused);
    let checks = applicable + 1;
    let ok = passed + usize::from(r.survived);
    (
        Some(ok as f64 / checks as f64),
        vec![
            ("answered".into(), count(ProbeOutcome::Answered) as f64),
            ("refused".into(), count(ProbeOutcome::Refused) as f64),
            ("failed".into(), count(ProbeOutcome::Failed) as f64),
            ("survived".into(), f64::from(u8::from(r.survived))),
        ],
        format!("{ok} of {checks} checks passed ({applicable} probes, then still answering)"),
    )
}

/// The mean, over the detector rows that count (every row but a "review included" tier), of
/// Youden's J = recall − FPR, floored at 0. A row with an undefined recall or FPR is left out.
fn security(i: &Inputs) -> Part {
    let Some(s) = i.security else {
        return not_measured("no security detectors in this run");
    };
    let mut inputs = Vec::new();
    let mut js = Vec::new();
    for d in s.detectors.iter().filter(|d| d.tier != Some(Tier::Review)) {
        let get = |m: Metric| d.metrics.get(m.key()).and_then(|s| s.mean);
        let (Some(recall), Some(fpr)) = (get(Metric::Recall), get(Metric::Fpr)) else {
            continue;
        };
        let name = match d.tier {
            Some(t) => format!("{} ({})", d.detector, t.label()),
            None => d.detector.clone(),
        };
        inputs.push((format!("{name}: recall"), recall));
        inputs.push((format!("{name}: fpr"), fpr));
        js.push((recall - fpr).max(0.0));
    }
    if js.is_empty() {
        return not_measured("no detector with a defined recall and FPR");
    }
    let (mean, n) = (js.iter().sum::<f64>() / js.len() as f64, js.len());
    let note = format!("mean over {n} detector row(s) of recall − FPR (Youden's J, floored at 0)");
    (Some(mean), inputs, note)
}

/// Search latency p95 against the corpus size: full marks at or under [`PERF_FULL_MS`], none at
/// or over [`PERF_ZERO_MS`], linear in between; both bounds times tools / [`PERF_TOOLS`] for a
/// corpus larger than that.
fn performance(i: &Inputs) -> Part {
    let Some(p95) = i.retrieval.and_then(|r| r.latency_ms.p95) else {
        return not_measured("no search latency (no tool discovery)");
    };
    let tools = i.corpus_tools.unwrap_or(0) as f64;
    let scale = (tools / PERF_TOOLS).max(1.0);
    let (full, zero) = (PERF_FULL_MS * scale, PERF_ZERO_MS * scale);
    let f = ((zero - p95) / (zero - full)).clamp(0.0, 1.0);
    (
        Some(f),
        vec![
            ("p95_ms".into(), p95),
            ("tools".into(), tools),
            ("full_marks_ms".into(), full),
            ("zero_ms".into(), zero),
        ],
        format!(
            "p95 {} ms: full marks ≤ {} ms, 0 at ≥ {} ms",
            round1(p95),
            round1(full),
            round1(zero)
        ),
    )
}

/// Of the errors the system returned to the robustness probes (a refusal with a message, or
/// one without), the share whose message names its cause ([`names_cause`]).
fn transparency(i: &Inputs) -> Part {
    let Some(r) = i.robustness else {
        return not_measured("no robustness probes, so no error to read");
    };
    let refused: Vec<&str> = r
        .probes
        .iter()
        .filter(|p| p.outcome == ProbeOutcome::Refused)
        .map(|p| p.detail.as_str())
        .collect();
    let silent = r
        .probes
        .iter()
        .filter(|p| p.outcome == ProbeOutcome::Failed && p.detail == NO_MESSAGE)
        .count();
    let errors = refused.len() + silent;
    if errors == 0 {
        return not_measured("the system returned no error to any probe");
    }
    let named = refused.iter().filter(|m| names_cause(m)).count();
    (
        Some(named as f64 / errors as f64),
        vec![
            ("errors".into(), errors as f64),
            ("naming_cause".into(), named as f64),
            ("without_message".into(), silent as f64),
        ],
        format!("{named} of {errors} error(s) name their cause"),
    )
}

/// Words that say something failed without saying what.
const GENERIC: &[&str] = &[
    "error",
    "errors",
    "failed",
    "failure",
    "fail",
    "internal",
    "server",
    "exception",
    "unknown",
    "unexpected",
    "invalid",
    "request",
    "bad",
    "something",
    "went",
    "wrong",
    "the",
    "and",
    "occurred",
    "has",
    "was",
    "code",
    "jsonrpc",
    "rpc",
    "mcp",
    "tool",
    "call",
    "please",
    "try",
    "again",
    "later",
    "status",
    "null",
    "undefined",
    "none",
];

/// Whether an error message names its cause: it has a word of three letters or more that is
/// not one of the words that only say something failed ("internal error", "request failed",
/// "-32603" name nothing; "`query` is required" names the argument).
pub fn names_cause(msg: &str) -> bool {
    msg.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 3)
        .any(|w| !GENERIC.contains(&w.to_lowercase().as_str()))
}

/// One decimal, half away from zero.
pub fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Six decimals.
pub fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests;
