//! The gate: compare what was measured with a baseline and reach a verdict. A pure function:
//! [`evaluate`] reads only its [`GateInputs`] (the measured summaries, borrowed from the score
//! results), the baseline and the [`Policy`], and returns a [`GateOutcome`] that the report is
//! then assembled with. The exit code and the check run's conclusion are derived from the
//! verdict alone, so they always agree.

pub mod model;
pub mod paired;
mod words;

use crate::infra::text::Text;
use crate::pipeline::baseline::{Baseline, MetricBaseline, RetrievalBaseline, verdict_map};
use crate::pipeline::dataset::shard::Shard;
use crate::pipeline::measure::probes::{ProbeOutcome, RobustnessReport};
use crate::pipeline::score::diagnostics::ConfusionPair;
use crate::pipeline::score::metrics::{
    DETECTION_METRICS, Metric, QueryMetrics, RETRIEVAL_METRICS, label,
};
use crate::pipeline::score::model::{EntryOutcome, LabelRef};
use crate::pipeline::score::stats::Summary;
pub use model::*;
use std::collections::BTreeMap;
pub use words::{p_value as words_p_value, sentence, signed};

/// Slack for rounding: baselines store values to 6 decimals.
const EPS: f64 = 1e-6;

fn tolerance_check(
    subject: &str,
    metric: Metric,
    s: Option<&Summary>,
    b: Option<&MetricBaseline>,
) -> Check {
    let name = metric.label();
    let current = s.and_then(|s| s.mean);
    let ci95 = s.and_then(|s| s.ci95);
    let direction = b.map_or_else(|| metric.direction(), |b| b.direction);
    let baseline = b.and_then(|b| b.value);
    let delta = match (current, baseline) {
        (Some(c), Some(v)) => Some(c - v),
        _ => None,
    };
    let mut check = Check {
        subject: subject.into(),
        metric: metric.key().into(),
        kind: CheckKind::Info,
        direction,
        baseline,
        current,
        ci95,
        delta,
        limit: None,
        status: CheckStatus::Info,
        message: String::new(),
        paired: None,
    };
    let Some(b) = b else {
        check.message = "no baseline value; reported only".into();
        return check;
    };
    let limit = baseline.map(|v| match direction {
        Direction::Higher => v - b.tolerance,
        Direction::Lower => v + b.tolerance,
    });
    check.limit = limit;
    if !b.gated {
        check.message = "not gated; reported only".into();
        return check;
    }
    // undefined is not worse: a number that is 0/0 on either side is reported, never gated
    match (current, limit) {
        (None, _) => {
            check.message = format!(
                "{name} is undefined (0/0) in this run: nothing to compare with the baseline, so it is reported, not gated"
            );
        }
        (Some(_), None) => {
            check.message = format!(
                "the baseline value of {name} is undefined (0/0 when it was measured): reported, not gated; `evalgate baseline update` records it"
            );
        }
        (Some(c), Some(l)) => {
            check.kind = CheckKind::Tolerance;
            let ok = match direction {
                Direction::Higher => c >= l - EPS,
                Direction::Lower => c <= l + EPS,
            };
            check.status = if ok {
                CheckStatus::Pass
            } else {
                CheckStatus::Fail
            };
            check.message = if ok {
                format!("within tolerance {:.3}", b.tolerance)
            } else {
                format!(
                    "{name} regressed: {c:.4} is worse than baseline {:.4} by more than the tolerance {:.3}",
                    baseline.unwrap_or_default(),
                    b.tolerance
                )
            };
        }
    }
    check
}

fn threshold_check(
    subject: &str,
    metric: Metric,
    s: Option<&Summary>,
    limit: f64,
    kind: CheckKind,
) -> Check {
    let name = metric.label();
    let current = s.and_then(|s| s.mean);
    let direction = if kind == CheckKind::Ceiling {
        Direction::Lower
    } else {
        Direction::Higher
    };
    let (status, message) = match current {
        // undefined is not worse: the limit is stated, the check reported only
        None => (
            CheckStatus::Info,
            format!(
                "{name} is undefined (0/0): no entries to compute it over, so the {} {limit:.3} cannot be checked; reported, not gated",
                if kind == CheckKind::Ceiling {
                    "ceiling"
                } else {
                    "floor"
                }
            ),
        ),
        Some(c) => {
            let ok = if kind == CheckKind::Ceiling {
                c <= limit + EPS
            } else {
                c >= limit - EPS
            };
            match (ok, kind) {
                (true, _) => (
                    CheckStatus::Pass,
                    format!(
                        "{c:.4} within the {} {limit:.3}",
                        if kind == CheckKind::Ceiling {
                            "ceiling"
                        } else {
                            "floor"
                        }
                    ),
                ),
                (false, CheckKind::Ceiling) => (
                    CheckStatus::Fail,
                    format!("{name} {c:.4} is above the ceiling {limit:.3}"),
                ),
                (false, _) => (
                    CheckStatus::Fail,
                    format!("{name} {c:.4} is below the floor {limit:.3}"),
                ),
            }
        }
    };
    Check {
        subject: subject.into(),
        metric: metric.key().into(),
        kind: if current.is_some() {
            kind
        } else {
            CheckKind::Info
        },
        direction,
        baseline: None,
        current,
        ci95: s.and_then(|s| s.ci95),
        delta: None,
        limit: Some(limit),
        status,
        message,
        paired: None,
    }
}

/// The limits a detector the baseline has no entry for is held to (a new or renamed detector):
/// `[gate] new_detector_fpr_ceiling` and `new_detector_recall_floor` in evalgate.toml.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewDetectorLimits {
    pub fpr_ceiling: Option<f64>,
    pub recall_floor: Option<f64>,
}

/// A detector catching fewer than one attack in ten, or flagging more than one benign tool in
/// ten, is no use as a gate; both limits are there to catch a detector that is misconfigured or
/// cries wolf from its first pull request on.
pub const DEFAULT_NEW_DETECTOR: NewDetectorLimits = NewDetectorLimits {
    fpr_ceiling: Some(0.10),
    recall_floor: Some(0.10),
};

/// How the gate judges, besides the baseline: what a detector new to the baseline is held to,
/// and what the "not gated" headlines say.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Why no baseline is in use although one was found (it was measured on other datasets).
    pub why_no_baseline: Option<String>,
    /// The command that writes a baseline for this run, quoted in every "not gated" headline.
    pub update_command: String,
    pub new_detector: NewDetectorLimits,
    /// `[gate] significance` and `require_significance`.
    pub significance: Significance,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            why_no_baseline: None,
            update_command: "evalgate baseline update".into(),
            new_detector: DEFAULT_NEW_DETECTOR,
            significance: Significance::default(),
        }
    }
}

/// Says on the check just added that its limit is the default for a detector new to the
/// baseline, and where to change it.
fn defaulted_note(checks: &mut [Check], key: &str) {
    if let Some(c) = checks.last_mut() {
        c.message.push_str(&format!(
            " (the default for a detector the baseline has no entry for: [gate] new_detector_{key} in evalgate.toml)"
        ));
    }
}

/// One query's run-averaged scores, for naming the queries that regressed.
#[derive(Debug, Clone, Copy)]
pub struct QueryInput<'a> {
    pub id: &'a Text,
    pub query: &'a Text,
    pub metrics: &'a QueryMetrics,
    /// Its graded labels and the first run's ranked list (to say which relevant tool moved).
    pub labels: &'a [LabelRef],
    pub retrieved: &'a [Text],
}

/// What retrieval measured: the aggregate metrics by key and every query's scores.
#[derive(Debug, Clone)]
pub struct RetrievalInputs<'a> {
    pub metrics: &'a BTreeMap<String, Summary>,
    pub per_query: Vec<QueryInput<'a>>,
    /// The run's confusion pairs, worst first; `None` when it has no tool diagnostics.
    pub confusions: Option<&'a [ConfusionPair]>,
}

/// What one detector measured: its detection metrics by key.
#[derive(Debug, Clone, Copy)]
pub struct DetectorInputs<'a> {
    pub name: &'a str,
    pub metrics: &'a BTreeMap<String, Summary>,
    /// The row of a system's review tier (findings below its blocking tier): gated against a
    /// baseline that has it, never by the limits for a new detector.
    pub review_tier: bool,
    /// Every entry's outcome (to compare verdicts with the baseline's, entry by entry).
    pub entries: &'a [EntryOutcome],
}

/// Everything the gate reads of a run, borrowed from the score results: nothing else of the
/// report reaches it.
#[derive(Debug, Clone, Default)]
pub struct GateInputs<'a> {
    pub retrieval: Option<RetrievalInputs<'a>>,
    pub detectors: Vec<DetectorInputs<'a>>,
    /// Whether this measurement ran detectors at all (a baseline's limits for a detector that
    /// did not run are then named in the report).
    pub security_measured: bool,
    pub robustness: Option<&'a RobustnessReport>,
    /// Why the system under test could not be measured (the report is then partial and nothing
    /// is gated); `None` when it was.
    pub failure: Option<String>,
}

/// The outcome of one shard of a sharded evaluation (`--shard i/n`) that was measured: not
/// gated (exit 0), since its numbers cover a slice; `evalgate merge` gates the whole.
pub fn shard_outcome(shard: Shard) -> GateOutcome {
    GateReport {
        verdict: Verdict::NoBaseline,
        baseline: None,
        summary: format!(
            "shard {shard} measured, not gated: `evalgate merge` joins the {} shards' report.json files, scores and gates them as one run",
            shard.count
        ),
        checks: Vec::new(),
        ungated: Vec::new(),
        worst_queries: Vec::new(),
        improved_queries: Vec::new(),
        significance: None,
        new_confusions: None,
        detector_flips: Vec::new(),
    }
}

/// The gate's outcome for `inputs` against `baseline` (`(name, baseline)` when one is in use).
/// Pure: the same arguments always give the same outcome.
pub fn evaluate(
    inputs: &GateInputs,
    baseline: Option<(&str, &Baseline)>,
    policy: &Policy,
) -> GateOutcome {
    let cx = policy;
    // a partial run gates nothing: no check is computed over what was measured before the
    // system failed (its numbers cover part of the datasets), so no regression, annotation or
    // failed check can be published from it; the summary says why
    if let Some(f) = &inputs.failure {
        return GateReport {
            verdict: Verdict::Error,
            baseline: baseline.map(|(n, _)| n.to_string()),
            summary: format!(
                "the system under test could not be measured: {}; the report is partial and nothing is gated",
                words::clip(f, 300)
            ),
            checks: Vec::new(),
            ungated: Vec::new(),
            worst_queries: Vec::new(),
            improved_queries: Vec::new(),
            new_confusions: None,
            significance: None,
            detector_flips: Vec::new(),
        };
    }
    let mut checks = Vec::new();
    let b = baseline.map(|(_, b)| b);
    // detectors held to the default limits only (the baseline has no entry for them)
    let mut defaulted: Vec<String> = Vec::new();
    // drops beyond the tolerance that passed as not significant (require_significance)
    let mut let_through: Vec<String> = Vec::new();
    let mut flips = detector_flips(&inputs.detectors, b);
    if let Some(r) = &inputs.retrieval {
        let rb = b.and_then(|b| b.retrieval.as_ref());
        for m in RETRIEVAL_METRICS {
            checks.push(tolerance_check(
                "retrieval",
                m,
                r.metrics.get(m.key()),
                rb.and_then(|rb| rb.metrics.get(m.key())),
            ));
        }
        let_through = compare_per_query(&mut checks, Some(r), rb, &mut flips, cx.significance);
    } else {
        // no retrieval: the family holds the detectors' tests only
        compare_per_query(&mut checks, None, None, &mut flips, cx.significance);
    }
    for d in &inputs.detectors {
        let subject = format!("detector:{}", d.name);
        let db = b
            .and_then(|b| b.security.as_ref())
            .and_then(|s| s.detectors.get(d.name));
        // the baseline's limits, or the defaults for a detector new to a baseline in use
        let (ceiling, floor, by_default) = match db {
            Some(db) => (db.fpr_ceiling, db.recall_floor, false),
            None if b.is_some() && !d.review_tier => (
                cx.new_detector.fpr_ceiling,
                cx.new_detector.recall_floor,
                true,
            ),
            None => (None, None, false),
        };
        for (limit, metric, kind, key) in [
            (ceiling, Metric::Fpr, CheckKind::Ceiling, "fpr_ceiling"),
            (floor, Metric::Recall, CheckKind::Floor, "recall_floor"),
        ] {
            if let Some(l) = limit {
                checks.push(threshold_check(
                    &subject,
                    metric,
                    d.metrics.get(metric.key()),
                    l,
                    kind,
                ));
                if by_default {
                    defaulted_note(&mut checks, key);
                }
            }
        }
        let held = checks
            .iter()
            .any(|c| c.subject == subject && c.kind != CheckKind::Info);
        if by_default && held {
            defaulted.push(d.name.to_string());
        }
        for m in DETECTION_METRICS {
            checks.push(tolerance_check(
                &subject,
                m,
                d.metrics.get(m.key()),
                db.and_then(|db| db.metrics.get(m.key())),
            ));
        }
    }
    // the baseline's limits for a detector this measurement did not run: said, never dropped
    // silently
    if inputs.security_measured
        && let Some(sb) = b.and_then(|b| b.security.as_ref())
    {
        for (name, db) in &sb.detectors {
            if inputs.detectors.iter().any(|d| d.name == name.as_str()) {
                continue;
            }
            for (limit, metric, word) in [
                (db.fpr_ceiling, Metric::Fpr, "ceiling"),
                (db.recall_floor, Metric::Recall, "floor"),
            ] {
                let Some(l) = limit else { continue };
                checks.push(Check {
                    subject: format!("detector:{name}"),
                    metric: metric.key().into(),
                    kind: CheckKind::Info,
                    direction: metric.direction(),
                    baseline: None,
                    current: None,
                    ci95: None,
                    delta: None,
                    limit: Some(l),
                    status: CheckStatus::Info,
                    message: format!(
                        "the baseline's {} {word} {l:.3} for {name} is not checked: {name} did not run in this measurement",
                        metric.label()
                    ),
                    paired: None,
                });
            }
        }
    }
    if let Some(rb) = inputs.robustness.filter(|r| r.gated) {
        let failed: Vec<&str> = rb
            .probes
            .iter()
            .filter(|p| p.outcome == ProbeOutcome::Failed)
            .map(|p| p.id.as_str())
            .chain((!rb.survived).then_some("survival"))
            .collect();
        checks.push(Check {
            subject: "robustness".into(),
            metric: "probes_failed".into(),
            kind: CheckKind::Ceiling,
            direction: Direction::Lower,
            baseline: None,
            current: Some(rb.failed as f64),
            ci95: None,
            delta: None,
            limit: Some(0.0),
            status: if failed.is_empty() {
                CheckStatus::Pass
            } else {
                CheckStatus::Fail
            },
            message: if failed.is_empty() {
                "every probe answered sensibly or was refused with a clear error".into()
            } else {
                format!("failed probes: {}", failed.join(", "))
            },
            paired: None,
        });
    }
    // measured parts with no gated check: with a baseline, a pass does not cover them
    let mut subjects: Vec<String> = Vec::new();
    if inputs.retrieval.is_some() {
        subjects.push("retrieval".into());
    }
    subjects.extend(
        inputs
            .detectors
            .iter()
            .map(|d| format!("detector:{}", d.name)),
    );
    let ungated: Vec<String> = if baseline.is_some() {
        subjects
            .into_iter()
            .filter(|s| {
                !checks
                    .iter()
                    .any(|c| &c.subject == s && c.kind != CheckKind::Info)
            })
            .collect()
    } else {
        Vec::new()
    };
    let (worst_queries, improved_queries) = changed_queries(inputs.retrieval.as_ref(), b);
    let significance =
        (checks.iter().any(|c| c.paired.is_some()) || !flips.is_empty()).then_some(cx.significance);
    let new_confusions = new_confusions(inputs.retrieval.as_ref(), b);
    let failures: Vec<&Check> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .collect();
    let update = &cx.update_command;
    let (verdict, summary) = if !failures.is_empty() {
        const SHOWN: usize = 3;
        let mut words: Vec<String> = failures.iter().take(SHOWN).map(|c| sentence(c)).collect();
        if failures.len() > SHOWN {
            words.push(format!(
                "and {} more failed check(s)",
                failures.len() - SHOWN
            ));
        }
        (Verdict::Fail, format!("gate failed: {}", words.join("; ")))
    } else if baseline.is_none() {
        let why = cx.why_no_baseline.as_deref().map_or_else(
            || "no baseline".to_string(),
            |w| format!("no baseline for these datasets ({w})"),
        );
        (
            Verdict::NoBaseline,
            format!("{why}: numbers are reported, nothing is gated; `{update}` writes one"),
        )
    } else if !checks.iter().any(|c| c.kind != CheckKind::Info) {
        (
            Verdict::NoBaseline,
            format!(
                "the baseline does not cover what was measured ({}): numbers are reported, nothing is gated; `{update}` writes one",
                ungated.join(", ")
            ),
        )
    } else {
        let gated = checks
            .iter()
            .filter(|c| c.status == CheckStatus::Pass)
            .count();
        let mut tail = String::new();
        if !defaulted.is_empty() {
            tail.push_str(&format!(
                "; {} held to the default limits only (not in the baseline)",
                defaulted.join(", ")
            ));
        }
        if !ungated.is_empty() {
            tail.push_str(&format!(
                "; not gated: {} (the baseline does not cover {})",
                ungated.join(", "),
                if ungated.len() == 1 { "it" } else { "them" }
            ));
        }
        if !tail.is_empty() {
            tail.push_str(&format!("; `{update}` writes a baseline that does"));
        }
        if !let_through.is_empty() {
            tail.push_str(&format!(
                "; {} dropped beyond the tolerance but not significantly ([gate] require_significance)",
                let_through.join(", ")
            ));
        }
        (
            Verdict::Pass,
            format!("gate passed: all {gated} gated check(s) held{tail}"),
        )
    };
    GateReport {
        verdict,
        baseline: baseline.map(|(n, _)| n.to_string()),
        summary,
        checks,
        ungated,
        worst_queries,
        improved_queries,
        significance,
        new_confusions,
        detector_flips: flips,
    }
}

/// The paired comparison of every gated retrieval check with the baseline's per-query values
/// (when it keeps them for the metric), Holm–Bonferroni over them, and the rule: with
/// `require_significance`, a drop beyond the tolerance that is not significant passes; either
/// way a check's message says whether its change is significant.
fn compare_per_query(
    checks: &mut [Check],
    r: Option<&RetrievalInputs>,
    rb: Option<&RetrievalBaseline>,
    flips: &mut [DetectorFlips],
    sig: Significance,
) -> Vec<String> {
    let mut let_through = Vec::new();
    let rb = rb.filter(|rb| !rb.per_query.is_empty());
    let mut family: Vec<usize> = Vec::new();
    for (i, c) in checks.iter_mut().enumerate() {
        let (Some(r), Some(rb)) = (r, rb) else { break };
        if c.subject != "retrieval" || c.kind != CheckKind::Tolerance {
            continue;
        }
        let Some(m) = Metric::from_key(&c.metric) else {
            continue;
        };
        // the per-query values must be the baseline's own: their mean is its value (to the
        // rounding of both); a value edited by hand (or per-query values of another run) makes
        // a paired test of something the gate does not compare with, so none is made
        let kept: Vec<f64> = rb
            .per_query
            .values()
            .filter_map(|q| q.get(m.key()).copied())
            .collect();
        let consistent = c.baseline.is_some_and(|v| {
            !kept.is_empty() && (kept.iter().sum::<f64>() / kept.len() as f64 - v).abs() <= 1e-4
        });
        if !consistent {
            continue;
        }
        let pairs: Vec<(f64, f64)> = r
            .per_query
            .iter()
            .filter_map(|q| {
                let b = *rb.per_query.get(q.id.as_str())?.get(m.key())?;
                Some((b, q.metrics.get(m)?))
            })
            .collect();
        c.paired = paired::compare(&pairs, c.direction == Direction::Higher);
        if c.paired.is_some() {
            family.push(i);
        }
    }
    // one family: the retrieval metrics' paired comparisons, then every detector's McNemar test
    let ps: Vec<f64> = family
        .iter()
        .filter_map(|&i| checks[i].paired.as_ref().map(|p| p.p_value))
        .chain(flips.iter().map(|f| f.mcnemar.p_value))
        .collect();
    let adjusted = paired::holm(&ps);
    for (f, &h) in flips.iter_mut().zip(&adjusted[family.len()..]) {
        f.mcnemar.p_holm = Some(h);
        f.mcnemar.significant = Some(h <= sig.alpha + f64::EPSILON);
    }
    for (&i, h) in family.iter().zip(adjusted) {
        let c = &mut checks[i];
        let Some(p) = c.paired.as_mut() else { continue };
        let significant = h <= sig.alpha + f64::EPSILON;
        p.p_holm = Some(h);
        p.significant = Some(significant);
        let said = words::significance(p, sig.alpha);
        match (c.status, significant) {
            (CheckStatus::Fail, false) if sig.required => {
                c.status = CheckStatus::Pass;
                let_through.push(label(&c.metric).to_string());
                c.message = format!(
                    "{}: beyond the tolerance, but {said}; passes, since [gate] require_significance = true",
                    words::sentence(c)
                );
            }
            (CheckStatus::Fail, false) => {
                c.message.push_str(&format!(
                    "; the change is large but {said}: it may be query-sample noise"
                ));
            }
            _ => c.message.push_str(&format!("; {said}")),
        }
    }
    let_through
}

/// Per detector whose baseline keeps per-entry verdicts: the entries judged in both whose
/// verdict flipped (wrong way first: attacks newly missed, benign entries newly flagged; then
/// the fixed ones) and McNemar's exact test of the paired verdicts. The Holm-adjusted p is set
/// with the family.
fn detector_flips(detectors: &[DetectorInputs], b: Option<&Baseline>) -> Vec<DetectorFlips> {
    use crate::pipeline::dataset::Truth;
    let Some(sb) = b.and_then(|b| b.security.as_ref()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in detectors {
        let Some(was) = sb.detectors.get(d.name).and_then(|db| db.verdicts.as_ref()) else {
            continue;
        };
        let now = verdict_map(d.entries).unwrap_or_default();
        let malicious: BTreeMap<&str, bool> = d
            .entries
            .iter()
            .map(|e| (e.id.as_str(), e.label == Truth::Malicious))
            .collect();
        let (mut entries, mut unflagged, mut flagged) = (0, 0, 0);
        let mut wrong: Vec<EntryFlip> = Vec::new();
        let mut right: Vec<EntryFlip> = Vec::new();
        for (id, &f) in &now {
            let Some(&w) = was.get(id) else { continue };
            entries += 1;
            if w == f {
                continue;
            }
            if f {
                flagged += 1;
            } else {
                unflagged += 1;
            }
            let m = malicious.get(id.as_str()).copied().unwrap_or(false);
            let flip = EntryFlip {
                id: Text::from(id.as_str()),
                malicious: m,
                flagged: f,
            };
            // an attack flagged or a benign entry no longer flagged is fixed
            if m == f {
                right.push(flip);
            } else {
                wrong.push(flip);
            }
        }
        // newly missed attacks first, then newly flagged benign entries, then the fixed ones
        wrong.sort_by_key(|f| f.flagged);
        let newly_missed = wrong.iter().filter(|f| f.malicious).count();
        let (newly_flagged, fixed) = (wrong.len() - newly_missed, right.len());
        let flips: Vec<EntryFlip> = wrong.into_iter().chain(right).take(FLIPS_MAX).collect();
        out.push(DetectorFlips {
            detector: d.name.to_string(),
            entries,
            newly_missed,
            newly_flagged,
            fixed,
            flips,
            mcnemar: McNemar {
                unflagged,
                flagged,
                p_value: paired::mcnemar_p(unflagged, flagged),
                p_holm: None,
                significant: None,
            },
        });
    }
    out
}

/// The run's confusion pairs the baseline does not have, worst first; `None` when either side
/// has none to compare (no retrieval, no tool diagnostics, a baseline without confusions).
fn new_confusions(r: Option<&RetrievalInputs>, b: Option<&Baseline>) -> Option<NewConfusions> {
    let pairs = r?.confusions?;
    let rb = b?.retrieval.as_ref()?;
    rb.confusions.as_ref()?;
    let new: Vec<&ConfusionPair> = pairs
        .iter()
        .filter(|p| rb.is_new_confusion(&p.wanted, &p.taken, p.queries) == Some(true))
        .collect();
    Some(NewConfusions {
        total: new.len(),
        pairs: new.into_iter().take(NEW_CONFUSIONS_MAX).cloned().collect(),
    })
}

/// Most tools a [`RankChange`] names as having taken a relevant tool's place.
const TOOK_ITS_PLACE_MAX: usize = 3;

/// How the query's relevant tools moved between the baseline's top 10 (`before`) and the run's:
/// the one that moved most the way the query changed (down when it got `worse`, else up; the
/// higher grade, then the label order, on a tie), with, when it got worse, the tools now at or
/// above its old rank that were not there before. `None` when no relevant tool moved that way.
fn rank_change(q: &QueryInput, before: &[String], worse: bool) -> Option<RankChange> {
    const OUT: usize = 11;
    let pos = |list: &mut dyn Iterator<Item = &str>, id: &str| {
        list.take(10).position(|t| t == id).map(|i| i + 1)
    };
    // (how far it moved, its grade, the tool, its rank before, its rank now)
    type Moved<'q> = (isize, u8, &'q Text, Option<usize>, Option<usize>);
    let mut best: Option<Moved> = None;
    let mut seen: Vec<&str> = Vec::new();
    for l in q.labels.iter().filter(|l| l.relevance >= 1) {
        if seen.contains(&l.tool_id.as_str()) {
            continue;
        }
        seen.push(l.tool_id.as_str());
        let b = pos(&mut before.iter().map(String::as_str), l.tool_id.as_str());
        let a = pos(
            &mut q.retrieved.iter().map(Text::as_str),
            l.tool_id.as_str(),
        );
        // how far it moved the way the query changed (positive: that way)
        let moved = a.unwrap_or(OUT) as isize - b.unwrap_or(OUT) as isize;
        let moved = if worse { moved } else { -moved };
        if moved <= 0 {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(m, g, ..)| (moved, l.relevance) > (*m, *g))
        {
            best = Some((moved, l.relevance, &l.tool_id, b, a));
        }
    }
    let (_, _, tool, b, a) = best?;
    let took_its_place = if worse {
        let cut = b.unwrap_or(10);
        let was: Vec<&str> = before.iter().take(cut).map(String::as_str).collect();
        q.retrieved
            .iter()
            .take(cut)
            .filter(|t| !was.contains(&t.as_str()) && t.as_str() != tool.as_str())
            .take(TOOK_ITS_PLACE_MAX)
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    Some(RankChange {
        tool: tool.clone(),
        before: b,
        after: a,
        took_its_place,
    })
}

/// Most queries each list of changed queries keeps.
const CHANGED_QUERIES_MAX: usize = 10;

/// The queries that changed most against the baseline's per-query values: those that dropped
/// the most in Recall@5 or nDCG@10 (the larger drop decides), worst first, and those that rose
/// the most (with no drop in either), best first. Without per-query baseline values, the
/// lowest-scoring queries and no improved ones.
fn changed_queries(
    r: Option<&RetrievalInputs>,
    b: Option<&Baseline>,
) -> (Vec<QueryDelta>, Vec<QueryDelta>) {
    let Some(r) = r else {
        return (Vec::new(), Vec::new());
    };
    let per_query: Option<&BTreeMap<String, BTreeMap<String, f64>>> = b
        .and_then(|b| b.retrieval.as_ref())
        .map(|rb| &rb.per_query)
        .filter(|m| !m.is_empty());
    let ranked = b
        .and_then(|b| b.retrieval.as_ref())
        .and_then(|rb| rb.per_query_ranked.as_ref());
    let mut out: Vec<QueryDelta> = Vec::new();
    let mut up: Vec<QueryDelta> = Vec::new();
    for q in &r.per_query {
        let cur = q.metrics.ndcg_at_10;
        match per_query {
            Some(pq) => {
                let Some(base) = pq.get(q.id.as_str()) else {
                    continue;
                };
                // the larger of the two drops decides; the larger rise when neither dropped
                let mut worst: Option<QueryDelta> = None;
                let mut best: Option<QueryDelta> = None;
                for m in [Metric::RecallAt5, Metric::NdcgAt10] {
                    let (Some(bv), Some(cv)) = (base.get(m.key()), q.metrics.get(m)) else {
                        continue;
                    };
                    let d = cv - bv;
                    let delta = || QueryDelta {
                        id: q.id.clone(),
                        query: q.query.clone(),
                        metric: m.key().into(),
                        baseline: Some(*bv),
                        current: cv,
                        delta: Some(d),
                        ranks: ranked
                            .and_then(|r| r.get(q.id.as_str()))
                            .and_then(|before| rank_change(q, before, d < 0.0)),
                    };
                    if d < -EPS && worst.as_ref().is_none_or(|w| d < w.delta.unwrap_or(0.0)) {
                        worst = Some(delta());
                    }
                    if d > EPS && best.as_ref().is_none_or(|w| d > w.delta.unwrap_or(0.0)) {
                        best = Some(delta());
                    }
                }
                match worst {
                    Some(w) => out.push(w),
                    None => up.extend(best),
                }
            }
            None if cur < 1.0 - EPS => out.push(QueryDelta {
                id: q.id.clone(),
                query: q.query.clone(),
                metric: Metric::NdcgAt10.key().into(),
                baseline: None,
                current: cur,
                delta: None,
                ranks: None,
            }),
            None => {}
        }
    }
    out.sort_by(|a, b| {
        let ka = a.delta.unwrap_or(a.current);
        let kb = b.delta.unwrap_or(b.current);
        ka.total_cmp(&kb).then_with(|| a.id.cmp(&b.id))
    });
    out.truncate(CHANGED_QUERIES_MAX);
    up.sort_by(|a, b| {
        let ka = a.delta.unwrap_or_default();
        let kb = b.delta.unwrap_or_default();
        kb.total_cmp(&ka).then_with(|| a.id.cmp(&b.id))
    });
    up.truncate(CHANGED_QUERIES_MAX);
    (out, up)
}

#[cfg(test)]
mod tests;
