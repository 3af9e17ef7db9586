//! The gate: compare what was measured with a baseline and reach a verdict. A pure function:
//! [`evaluate`] reads only its [`GateInputs`] (the measured summaries, borrowed from the score
//! results), the baseline and the [`Policy`], and returns a [`GateReport`] that the report is
//! then assembled with. The exit code and the check run's conclusion are derived from the
//! verdict alone, so they always agree.

pub mod model;
pub mod paired;
mod words;

use crate::infra::text::Text;
use crate::pipeline::baseline::{Baseline, MetricBaseline, RetrievalBaseline, verdict_map};
use crate::pipeline::dataset::Truth;
use crate::pipeline::dataset::shard::Shard;
use crate::pipeline::measure::probes::{ProbeOutcome, RobustnessReport};
use crate::pipeline::score::diagnostics::ConfusionPair;
use crate::pipeline::score::metrics::{DETECTION_METRICS, Metric, RETRIEVAL_METRICS, label};
use crate::pipeline::score::model::{
    DetectorReport, QueryReport, RetrievalReport, SecurityReport, Tier,
};
use crate::pipeline::score::stats::Summary;
pub use model::*;
use std::collections::{BTreeMap, BTreeSet};
pub use words::{p_value as words_p_value, sentence, signed};

/// Slack for rounding: baselines store values (per-query ones too) to 6 decimals, so a
/// difference this small is "unchanged".
const EPS: f64 = 1e-6;

/// A check of `metric` on `subject` that gates nothing yet, for the caller to fill in.
fn info(subject: &str, metric: &str, direction: Direction) -> Check {
    Check {
        subject: subject.into(),
        metric: metric.into(),
        direction,
        ..Check::default()
    }
}

fn status(ok: bool) -> CheckStatus {
    if ok {
        CheckStatus::Pass
    } else {
        CheckStatus::Fail
    }
}

/// Whether `c` is on the right side of `limit` for `direction`, up to rounding ([`EPS`]).
fn holds(direction: Direction, c: f64, limit: f64) -> bool {
    match direction {
        Direction::Higher => c >= limit - EPS,
        Direction::Lower => c <= limit + EPS,
    }
}

fn tolerance_check(
    subject: &str,
    metric: Metric,
    measured: &BTreeMap<String, Summary>,
    base: Option<&BTreeMap<String, MetricBaseline>>,
) -> Check {
    let name = metric.label();
    let s = measured.get(metric.key());
    let b = base.and_then(|b| b.get(metric.key()));
    let direction = b.map_or_else(|| metric.direction(), |b| b.direction);
    let (current, baseline) = (s.and_then(|s| s.mean), b.and_then(|b| b.value));
    let mut check = Check {
        current,
        baseline,
        ci95: s.and_then(|s| s.ci95),
        delta: current.zip(baseline).map(|(c, v)| c - v),
        limit: b.zip(baseline).map(|(b, v)| match direction {
            Direction::Higher => v - b.tolerance,
            Direction::Lower => v + b.tolerance,
        }),
        ..info(subject, metric.key(), direction)
    };
    check.message = match (b, current, check.limit) {
        (None, ..) => "no baseline value; reported only".into(),
        (Some(b), ..) if !b.gated => "not gated; reported only".into(),
        // undefined is not worse: a number that is 0/0 on either side is reported, never gated
        (_, None, _) => format!(
            "{name} is undefined (0/0) in this run: nothing to compare with the baseline, so it is reported, not gated"
        ),
        (_, _, None) => format!(
            "the baseline value of {name} is undefined (0/0 when it was measured): reported, not gated; `evalgate baseline update` records it"
        ),
        (Some(b), Some(c), Some(l)) => {
            let ok = holds(direction, c, l);
            check.kind = CheckKind::Tolerance;
            check.status = status(ok);
            if ok {
                format!("within tolerance {:.3}", b.tolerance)
            } else {
                format!(
                    "{name} regressed: {c:.4} is worse than baseline {:.4} by more than the tolerance {:.3}",
                    baseline.unwrap_or_default(),
                    b.tolerance
                )
            }
        }
    };
    check
}

/// A detector's two limits, `[fpr_ceiling, recall_floor]`: the metric each holds, how, its word
/// (`[gate] new_detector_fpr_ceiling` and `new_detector_recall_floor` name them by metric and
/// word) and the side a value that breaks it is on.
const LIMITS: [(Metric, CheckKind, &str, &str); 2] = [
    (Metric::Fpr, CheckKind::Ceiling, "ceiling", "above"),
    (Metric::Recall, CheckKind::Floor, "floor", "below"),
];

/// The checks of detector `name`'s `limits` ([`LIMITS`], each when set) against its `measured`
/// metrics, or, when it did not run in this measurement (`None`), their notes: a limit is said,
/// never dropped silently, and one that could not be checked is added to `unchecked` for the
/// verdict's summary. `by_default`: the limits are the defaults for a new detector.
fn limit_checks(
    name: &str,
    limits: [Option<f64>; 2],
    measured: Option<&BTreeMap<String, Summary>>,
    by_default: bool,
    checks: &mut Vec<Check>,
    unchecked: &mut Vec<String>,
) {
    let subject = format!("detector:{name}");
    let mut not_run = Vec::new();
    for (limit, (metric, kind, word, side)) in limits.into_iter().zip(LIMITS) {
        let Some(l) = limit else { continue };
        let label = metric.label();
        let s = measured.and_then(|m| m.get(metric.key()));
        let mut c = Check {
            current: s.and_then(|s| s.mean),
            ci95: s.and_then(|s| s.ci95),
            limit,
            ..info(&subject, metric.key(), metric.direction())
        };
        c.message = match c.current {
            None if measured.is_none() => {
                not_run.push(format!("{label} {word}"));
                format!(
                    "the baseline's {label} {word} {l:.3} for {name} is not checked: {name} did not run in this measurement"
                )
            }
            // undefined is not worse: the limit is stated, the check reported only
            None => {
                unchecked.push(format!("{name} {label} {word} (undefined, 0/0)"));
                format!(
                    "{label} is undefined (0/0): no entries to compute it over, so the {word} {l:.3} cannot be checked; reported, not gated"
                )
            }
            Some(v) => {
                let ok = holds(metric.direction(), v, l);
                c.kind = kind;
                c.status = status(ok);
                if ok {
                    format!("{v:.4} within the {word} {l:.3}")
                } else {
                    format!("{label} {v:.4} is {side} the {word} {l:.3}")
                }
            }
        };
        if by_default {
            c.message.push_str(&format!(
                " (the default for a detector the baseline has no entry for: [gate] new_detector_{}_{word} in evalgate.toml)",
                metric.key()
            ));
        }
        checks.push(c);
    }
    if !not_run.is_empty() {
        unchecked.push(format!(
            "{name} {} ({name} did not run)",
            not_run.join(" and ")
        ));
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

/// Everything the gate reads of a run, borrowed from the score results: nothing else of the
/// report reaches it.
#[derive(Debug, Clone, Default)]
pub struct GateInputs<'a> {
    pub retrieval: Option<&'a RetrievalReport>,
    /// `None` when this measurement ran no detectors (a baseline's limits for a detector that
    /// did not run are named in the report when it ran some).
    pub security: Option<&'a SecurityReport>,
    pub robustness: Option<&'a RobustnessReport>,
    /// Why the system under test could not be measured (the report is then partial and nothing
    /// is gated); `None` when it was.
    pub failure: Option<String>,
}

impl GateInputs<'_> {
    fn detectors(&self) -> &[DetectorReport] {
        self.security.map_or(&[], |s| &s.detectors)
    }
}

/// A report that gates nothing: its verdict and summary only.
fn unchecked(verdict: Verdict, baseline: Option<String>, summary: String) -> GateReport {
    GateReport {
        verdict,
        baseline,
        summary,
        ..GateReport::default()
    }
}

/// The outcome of one shard of a sharded evaluation (`--shard i/n`) that was measured: not
/// gated (exit 0), since its numbers cover a slice; `evalgate merge` gates the whole.
pub fn shard_outcome(shard: Shard) -> GateReport {
    let summary = format!(
        "shard {shard} measured, not gated: `evalgate merge` joins the {} shards' report.json files, scores and gates them as one run",
        shard.count
    );
    unchecked(Verdict::NoBaseline, None, summary)
}

/// The gate's outcome for `inputs` against `baseline` (`(name, baseline)` when one is in use).
/// Pure: the same arguments always give the same outcome.
pub fn evaluate(
    inputs: &GateInputs,
    baseline: Option<(&str, &Baseline)>,
    policy: &Policy,
) -> GateReport {
    let name = baseline.map(|(n, _)| n.to_string());
    // a partial run gates nothing: no check is computed over what was measured before the
    // system failed (its numbers cover part of the datasets), so no regression, annotation or
    // failed check can be published from it
    if let Some(f) = &inputs.failure {
        // at most 300 characters of the failure, with an ellipsis when cut
        let f = match f.char_indices().nth(300) {
            Some((cut, _)) => format!("{}…", &f[..cut]),
            None => f.clone(),
        };
        let summary = format!(
            "the system under test could not be measured: {f}; the report is partial and nothing is gated"
        );
        return unchecked(Verdict::Error, name, summary);
    }
    let b = baseline.map(|(_, b)| b);
    let retrieval = inputs.retrieval;
    let rb = b.and_then(|b| b.retrieval.as_ref());
    let mut checks = Vec::new();
    let mut flips = detector_flips(inputs.detectors(), b);
    if let Some(r) = retrieval {
        let mb = rb.map(|rb| &rb.metrics);
        checks.extend(RETRIEVAL_METRICS.map(|m| tolerance_check("retrieval", m, &r.metrics, mb)));
    }
    // drops beyond the tolerance that passed as not significant (require_significance)
    let let_through =
        compare_per_query(&mut checks, retrieval, rb, &mut flips, policy.significance);
    // detectors held to the default limits only (the baseline has no entry for them)
    let mut unchecked = Vec::new();
    let defaulted: Vec<String> = inputs
        .detectors()
        .iter()
        .filter(|d| detector_checks(d, b, policy.new_detector, &mut checks, &mut unchecked))
        .map(|d| d.detector.clone())
        .collect();
    // the baseline's limits for a detector this measurement did not run
    if let Some(s) = inputs.security {
        let ran = |name: &String| s.detectors.iter().any(|d| &d.detector == name);
        let all = b.and_then(|b| b.security.as_ref()).into_iter();
        for (name, db) in all.flat_map(|s| &s.detectors).filter(|(n, _)| !ran(n)) {
            let limits = [db.fpr_ceiling, db.recall_floor];
            limit_checks(name, limits, None, false, &mut checks, &mut unchecked);
        }
    }
    checks.extend(inputs.robustness.filter(|r| r.gated).map(robustness_check));
    // measured parts with no gated check: with a baseline, a pass does not cover them
    let gated = |s: &str| {
        checks
            .iter()
            .any(|c| c.subject == s && c.kind != CheckKind::Info)
    };
    let detectors = inputs
        .detectors()
        .iter()
        .map(|d| format!("detector:{}", d.detector));
    let ungated: Vec<String> = retrieval
        .map(|_| "retrieval".to_string())
        .into_iter()
        .chain(detectors)
        .filter(|s| baseline.is_some() && !gated(s))
        .collect();
    let (worst_queries, improved_queries) = changed_queries(retrieval, b);
    let significance = (checks.iter().any(|c| c.paired.is_some()) || !flips.is_empty())
        .then_some(policy.significance);
    let parts: [&[String]; 4] = [&defaulted, &ungated, &let_through, &unchecked];
    let (verdict, summary) = verdict(&checks, baseline.is_some(), parts, policy);
    GateReport {
        verdict,
        baseline: name,
        summary,
        new_confusions: new_confusions(retrieval, b),
        checks,
        ungated,
        worst_queries,
        improved_queries,
        significance,
        detector_flips: flips,
    }
}

/// A detector's checks: its ceiling and floor (the baseline's, or the defaults for a detector
/// new to a baseline in use) and its metrics against the baseline. True when it is held to the
/// default limits only.
fn detector_checks(
    d: &DetectorReport,
    b: Option<&Baseline>,
    new: NewDetectorLimits,
    checks: &mut Vec<Check>,
    unchecked: &mut Vec<String>,
) -> bool {
    let subject = format!("detector:{}", d.detector);
    let db = b
        .and_then(|b| b.security.as_ref())
        .and_then(|s| s.detectors.get(&d.detector));
    let (limits, by_default) = match db {
        Some(db) => ([db.fpr_ceiling, db.recall_floor], false),
        None if b.is_some() && d.tier != Some(Tier::Review) => {
            ([new.fpr_ceiling, new.recall_floor], true)
        }
        None => ([None; 2], false),
    };
    let n = checks.len();
    limit_checks(
        &d.detector,
        limits,
        Some(&d.metrics),
        by_default,
        checks,
        unchecked,
    );
    let held = checks[n..].iter().any(|c| c.kind != CheckKind::Info);
    let mb = db.map(|db| &db.metrics);
    checks.extend(DETECTION_METRICS.map(|m| tolerance_check(&subject, m, &d.metrics, mb)));
    by_default && held
}

fn robustness_check(rb: &RobustnessReport) -> Check {
    let failed: Vec<&str> = rb
        .probes
        .iter()
        .filter(|p| p.outcome == ProbeOutcome::Failed)
        .map(|p| p.id.as_str())
        .chain((!rb.survived).then_some("survival"))
        .collect();
    Check {
        kind: CheckKind::Ceiling,
        current: Some(rb.failed as f64),
        limit: Some(0.0),
        status: status(failed.is_empty()),
        message: if failed.is_empty() {
            "every probe answered sensibly or was refused with a clear error".into()
        } else {
            format!("failed probes: {}", failed.join(", "))
        },
        ..info("robustness", "probes_failed", Direction::Lower)
    }
}

/// The verdict and its one-line summary, from the checks and the parts `[defaulted, ungated,
/// let_through, unchecked]`: detectors held to the default limits only, measured parts with no
/// gated check, drops let through as not significant, detector limits that could not be checked.
fn verdict(
    checks: &[Check],
    has_baseline: bool,
    [defaulted, ungated, let_through, unchecked]: [&[String]; 4],
    policy: &Policy,
) -> (Verdict, String) {
    const SHOWN: usize = 3;
    let update = &policy.update_command;
    let failures: Vec<&Check> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .collect();
    if !failures.is_empty() {
        let mut words: Vec<String> = failures.iter().take(SHOWN).map(|c| sentence(c)).collect();
        let more = failures.len().saturating_sub(SHOWN);
        words.extend((more > 0).then(|| format!("and {more} more failed check(s)")));
        return (Verdict::Fail, format!("gate failed: {}", words.join("; ")));
    }
    let why = match policy.why_no_baseline.as_deref() {
        _ if has_baseline && checks.iter().any(|c| c.kind != CheckKind::Info) => None,
        _ if has_baseline => Some(format!(
            "the baseline does not cover what was measured ({})",
            ungated.join(", ")
        )),
        Some(w) => Some(format!("no baseline for these datasets ({w})")),
        None => Some("no baseline".to_string()),
    };
    if let Some(why) = why {
        let summary =
            format!("{why}: numbers are reported, nothing is gated; `{update}` writes one");
        return (Verdict::NoBaseline, summary);
    }
    let gated = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Pass)
        .count();
    // "; {before}{the names}{after}", or nothing for no names
    let said = |names: &[String], before: &str, after: &str| match names {
        [] => String::new(),
        _ => format!("; {before}{}{after}", names.join(", ")),
    };
    let them = if ungated.len() == 1 { "it" } else { "them" };
    let held = " held to the default limits only (not in the baseline)";
    let cover = format!(" (the baseline does not cover {them})");
    let mut tail = said(defaulted, "", held) + &said(ungated, "not gated: ", &cover);
    if !tail.is_empty() {
        tail.push_str(&format!("; `{update}` writes a baseline that does"));
    }
    let why = " dropped beyond the tolerance but not significantly ([gate] require_significance)";
    tail += &said(let_through, "", why);
    tail += &said(unchecked, "limits not checked: ", "");
    let summary = format!("gate passed: all {gated} gated check(s) held{tail}");
    (Verdict::Pass, summary)
}

/// The paired comparison of every gated retrieval check with the baseline's per-query values
/// (when it keeps them for the metric), Holm–Bonferroni over them, and the rule: with
/// `require_significance`, a drop beyond the tolerance that is not significant passes; either
/// way a check's message says whether its change is significant.
fn compare_per_query(
    checks: &mut [Check],
    r: Option<&RetrievalReport>,
    rb: Option<&RetrievalBaseline>,
    flips: &mut [DetectorFlips],
    sig: Significance,
) -> Vec<String> {
    let mut let_through = Vec::new();
    if let (Some(r), Some(rb)) = (r, rb.filter(|rb| !rb.per_query.is_empty())) {
        let tolerance = |c: &&mut Check| c.subject == "retrieval" && c.kind == CheckKind::Tolerance;
        for c in checks.iter_mut().filter(tolerance) {
            c.paired = paired_with(c, r, rb);
        }
    }
    // one family: the retrieval metrics' paired comparisons, then every detector's McNemar test
    let ps: Vec<f64> = checks
        .iter()
        .filter_map(|c| c.paired.as_ref().map(|p| p.p_value))
        .chain(flips.iter().map(|f| f.mcnemar.p_value))
        .collect();
    let adjusted = paired::holm(&ps);
    let (own, detectors) = adjusted.split_at(ps.len() - flips.len());
    let significant = |h: f64| h <= sig.alpha + f64::EPSILON;
    for (f, &h) in flips.iter_mut().zip(detectors) {
        f.mcnemar.p_holm = Some(h);
        f.mcnemar.significant = Some(significant(h));
    }
    for (c, &h) in checks.iter_mut().filter(|c| c.paired.is_some()).zip(own) {
        let Some(p) = c.paired.as_mut() else { continue };
        p.p_holm = Some(h);
        p.significant = Some(significant(h));
        let said = words::significance(p, sig.alpha);
        match (c.status, significant(h)) {
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

/// A gated retrieval check's paired comparison with the baseline's per-query values, when it
/// keeps them for the metric.
fn paired_with(c: &Check, r: &RetrievalReport, rb: &RetrievalBaseline) -> Option<PairedComparison> {
    let m = Metric::from_key(&c.metric)?;
    // the per-query values must be the baseline's own: their mean is its value (to the
    // rounding of both); a value edited by hand (or per-query values of another run) makes
    // a paired test of something the gate does not compare with, so none is made
    let kept: Vec<f64> = rb
        .per_query
        .values()
        .filter_map(|q| q.get(m.key()).copied())
        .collect();
    let mean = kept.iter().sum::<f64>() / kept.len() as f64;
    if !c
        .baseline
        .is_some_and(|v| !kept.is_empty() && (mean - v).abs() <= 1e-4)
    {
        return None;
    }
    let pairs: Vec<(f64, f64)> = r
        .per_query
        .iter()
        .filter_map(|q| {
            let b = *rb.per_query.get(q.id.as_str())?.get(m.key())?;
            Some((b, q.metrics.get(m)?))
        })
        .collect();
    paired::compare(&pairs, c.direction == Direction::Higher)
}

/// Per detector whose baseline keeps per-entry verdicts: the entries judged in both whose
/// verdict flipped (wrong way first: attacks newly missed, benign entries newly flagged; then
/// the fixed ones) and McNemar's exact test of the paired verdicts. The Holm-adjusted p is set
/// with the family.
fn detector_flips(detectors: &[DetectorReport], b: Option<&Baseline>) -> Vec<DetectorFlips> {
    let sb = b.and_then(|b| b.security.as_ref());
    let flips = |d: &DetectorReport| {
        let was = sb?.detectors.get(&d.detector)?.verdicts.as_ref()?;
        let malicious: BTreeMap<&str, bool> = d
            .entries
            .iter()
            .map(|e| (e.id.as_str(), e.label == Truth::Malicious))
            .collect();
        let now = verdict_map(&d.entries).unwrap_or_default();
        let both: Vec<(&String, bool, bool)> = now
            .iter()
            .filter_map(|(id, &f)| Some((id, *was.get(id)?, f)))
            .collect();
        // an attack flagged or a benign entry no longer flagged is fixed
        let (right, mut wrong): (Vec<EntryFlip>, Vec<EntryFlip>) = both
            .iter()
            .filter(|(_, w, f)| w != f)
            .map(|&(id, _, f)| EntryFlip {
                id: Text::from(id.as_str()),
                malicious: malicious.get(id.as_str()).copied().unwrap_or(false),
                flagged: f,
            })
            .partition(|f| f.malicious == f.flagged);
        // newly missed attacks first, then newly flagged benign entries, then the fixed ones
        wrong.sort_by_key(|f| f.flagged);
        let flagged = wrong.iter().chain(&right).filter(|f| f.flagged).count();
        let unflagged = wrong.len() + right.len() - flagged;
        let newly_missed = wrong.iter().filter(|f| f.malicious).count();
        Some(DetectorFlips {
            detector: d.detector.clone(),
            entries: both.len(),
            newly_missed,
            newly_flagged: wrong.len() - newly_missed,
            fixed: right.len(),
            flips: wrong.into_iter().chain(right).take(FLIPS_MAX).collect(),
            mcnemar: McNemar {
                unflagged,
                flagged,
                p_value: paired::mcnemar_p(unflagged, flagged),
                p_holm: None,
                significant: None,
            },
        })
    };
    detectors.iter().filter_map(flips).collect()
}

/// The run's confusion pairs the baseline does not have, worst first; `None` when either side
/// has none to compare (no retrieval, no tool diagnostics, a baseline without confusions).
fn new_confusions(r: Option<&RetrievalReport>, b: Option<&Baseline>) -> Option<NewConfusions> {
    let d = r.map(|r| &r.tool_diagnostics).filter(|d| !d.is_empty())?;
    let rb = b?.retrieval.as_ref()?;
    rb.confusions.as_ref()?;
    let new: Vec<&ConfusionPair> = d
        .confusions
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
fn rank_change(q: &QueryReport, before: &[String], worse: bool) -> Option<RankChange> {
    const OUT: usize = 11;
    let before: Vec<&str> = before.iter().map(String::as_str).collect();
    let now: Vec<&str> = q.retrieved.iter().map(Text::as_str).collect();
    let rank = |list: &[&str], id| list.iter().take(10).position(|&t| t == id).map(|i| i + 1);
    // (how far it moved the way the query changed, its grade, the tool, its rank before, now)
    type Moved<'q> = (isize, u8, &'q Text, Option<usize>, Option<usize>);
    let mut best: Option<Moved> = None;
    let mut seen = BTreeSet::new();
    let relevant = q.labels.iter().filter(|l| l.relevance >= 1);
    for l in relevant.filter(|l| seen.insert(l.tool_id.as_str())) {
        let id = l.tool_id.as_str();
        let (b, a) = (rank(&before, id), rank(&now, id));
        let moved = a.unwrap_or(OUT) as isize - b.unwrap_or(OUT) as isize;
        let moved = if worse { moved } else { -moved };
        if moved > 0 && best.is_none_or(|(m, g, ..)| (moved, l.relevance) > (m, g)) {
            best = Some((moved, l.relevance, &l.tool_id, b, a));
        }
    }
    let (_, _, tool, b, a) = best?;
    let cut = if worse { b.unwrap_or(10) } else { 0 };
    let took_its_place = now
        .iter()
        .take(cut)
        .filter(|&&t| !before.iter().take(cut).any(|&w| w == t) && t != tool.as_str())
        .take(TOOK_ITS_PLACE_MAX)
        .map(|&t| Text::from(t))
        .collect();
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
    r: Option<&RetrievalReport>,
    b: Option<&Baseline>,
) -> (Vec<QueryDelta>, Vec<QueryDelta>) {
    let (mut out, mut up) = (Vec::new(), Vec::new());
    let rb = b.and_then(|b| b.retrieval.as_ref());
    let per_query = rb.map(|rb| &rb.per_query).filter(|m| !m.is_empty());
    let ranked = rb.and_then(|rb| rb.per_query_ranked.as_ref());
    for q in r.iter().flat_map(|r| &r.per_query) {
        let delta = |metric: Metric, baseline: Option<f64>, current: f64| QueryDelta {
            id: q.id.clone(),
            query: q.query.clone(),
            metric: metric.key().into(),
            baseline,
            current,
            delta: baseline.map(|b| current - b),
            ranks: baseline.and_then(|b| {
                let before = ranked?.get(q.id.as_str())?;
                rank_change(q, before, current - b < 0.0)
            }),
        };
        let Some(pq) = per_query else {
            let cur = q.metrics.ndcg_at_10;
            if cur < 1.0 - EPS {
                out.push(delta(Metric::NdcgAt10, None, cur));
            }
            continue;
        };
        let Some(base) = pq.get(q.id.as_str()) else {
            continue;
        };
        // the larger of the two drops decides; the larger rise when neither dropped (the first
        // metric on a tie)
        let moved = [Metric::RecallAt5, Metric::NdcgAt10]
            .into_iter()
            .filter_map(|m| Some((m, *base.get(m.key())?, q.metrics.get(m)?)));
        let most = |sign: f64| {
            let d = |&(_, b, c): &(Metric, f64, f64)| sign * (c - b);
            let first_max = |x: &_, y: &_| d(y).total_cmp(&d(x));
            let (m, b, c) = moved.clone().filter(|x| d(x) > EPS).min_by(first_max)?;
            Some(delta(m, Some(b), c))
        };
        match most(-1.0) {
            Some(w) => out.push(w),
            None => up.extend(most(1.0)),
        }
    }
    let key = |q: &QueryDelta| q.delta.unwrap_or(q.current);
    out.sort_by(|a, b| key(a).total_cmp(&key(b)).then_with(|| a.id.cmp(&b.id)));
    out.truncate(CHANGED_QUERIES_MAX);
    up.sort_by(|a, b| key(b).total_cmp(&key(a)).then_with(|| a.id.cmp(&b.id)));
    up.truncate(CHANGED_QUERIES_MAX);
    (out, up)
}

#[cfg(test)]
mod tests;
