//! The gate: compare a report with a baseline and reach a verdict. The exit code is derived from
//! the verdict alone, so they always agree.

use crate::baseline::{Baseline, MetricBaseline};
use crate::metrics::{DETECTION_METRICS, Metric, RETRIEVAL_METRICS};
use crate::reporting::model::*;
use crate::stats::Summary;
use std::collections::BTreeMap;

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
    check.kind = CheckKind::Tolerance;
    match (current, limit) {
        (None, _) => {
            check.status = CheckStatus::Fail;
            check.message = format!(
                "{name} is undefined (0/0) in this run, so it cannot be compared with the baseline"
            );
        }
        (Some(_), None) => {
            check.status = CheckStatus::Fail;
            check.message = format!(
                "the baseline value of {name} is undefined; re-run `evalgate baseline update`"
            );
        }
        (Some(c), Some(l)) => {
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
        None => (
            CheckStatus::Fail,
            format!(
                "{name} is undefined (0/0): no entries to compute it over, so the {} cannot be checked",
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
        kind,
        direction,
        baseline: None,
        current,
        ci95: s.and_then(|s| s.ci95),
        delta: None,
        limit: Some(limit),
        status,
        message,
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

/// What the gate needs besides the report and the baseline.
#[derive(Debug, Clone)]
pub struct Context {
    /// The system under test could not be measured.
    pub failed: bool,
    /// Why no baseline is in use although one was found (it was measured on other datasets).
    pub why_no_baseline: Option<String>,
    /// The command that writes a baseline for this run, quoted in every "not gated" headline.
    pub update_command: String,
    pub new_detector: NewDetectorLimits,
}

impl Default for Context {
    fn default() -> Self {
        Context {
            failed: false,
            why_no_baseline: None,
            update_command: "evalgate baseline update".into(),
            new_detector: DEFAULT_NEW_DETECTOR,
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

/// Builds the gate section. `baseline` is `(name, baseline)` when one is in use.
pub fn evaluate(report: &Report, baseline: Option<(&str, &Baseline)>, cx: &Context) -> GateReport {
    let failed = cx.failed;
    let mut checks = Vec::new();
    let b = baseline.map(|(_, b)| b);
    // detectors held to the default limits only (the baseline has no entry for them)
    let mut defaulted: Vec<String> = Vec::new();
    if let Some(r) = &report.retrieval {
        let rb = b.and_then(|b| b.retrieval.as_ref());
        for m in RETRIEVAL_METRICS {
            checks.push(tolerance_check(
                "retrieval",
                m,
                r.metrics.get(m.key()),
                rb.and_then(|rb| rb.metrics.get(m.key())),
            ));
        }
    }
    if let Some(s) = &report.security {
        for d in &s.detectors {
            let subject = format!("detector:{}", d.detector);
            let db = b
                .and_then(|b| b.security.as_ref())
                .and_then(|s| s.detectors.get(&d.detector));
            // the baseline's limits, or the defaults for a detector new to a baseline in use
            let (ceiling, floor, by_default) = match db {
                Some(db) => (db.fpr_ceiling, db.recall_floor, false),
                None if b.is_some() => (
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
            if by_default && (ceiling.is_some() || floor.is_some()) {
                defaulted.push(d.detector.clone());
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
    }
    if let Some(rb) = report.robustness.as_ref().filter(|r| r.gated) {
        let failed: Vec<&str> = rb
            .probes
            .iter()
            .filter(|p| p.outcome == crate::probes::ProbeOutcome::Failed)
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
        });
    }
    // measured parts with no gated check: with a baseline, a pass does not cover them
    let mut subjects: Vec<String> = Vec::new();
    if report.retrieval.is_some() {
        subjects.push("retrieval".into());
    }
    if let Some(s) = &report.security {
        subjects.extend(
            s.detectors
                .iter()
                .map(|d| format!("detector:{}", d.detector)),
        );
    }
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
    let worst_queries = worst_queries(report, b);
    let failures: Vec<&Check> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .collect();
    let update = &cx.update_command;
    let (verdict, summary) = if failed {
        let why = report
            .failure
            .as_ref()
            .map(|f| format!(": {}", clip(&f.to_string(), 300)))
            .unwrap_or_default();
        (
            Verdict::Error,
            format!(
                "the system under test could not be measured{why}; the report is partial and nothing is gated"
            ),
        )
    } else if !failures.is_empty() {
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
    }
}

/// At most `max` characters of `s`, with an ellipsis when cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(max).collect();
        c.push('…');
        c
    }
}

/// Who a check is about, in words: nothing for retrieval, the detector's name otherwise.
fn who(subject: &str) -> String {
    match subject {
        "retrieval" => String::new(),
        s => format!("{} ", s.strip_prefix("detector:").unwrap_or(s)),
    }
}

/// A failed check as a reviewer reads it: "Recall@5 fell 0.5596 → 0.4091 (−0.151;
/// tolerance 0.020)", "rules FPR 0.1200 is above its ceiling 0.090".
pub fn sentence(c: &Check) -> String {
    let name = format!("{}{}", who(&c.subject), crate::metrics::label(&c.metric));
    match (c.kind, c.current, c.baseline, c.limit) {
        (CheckKind::Tolerance, Some(cur), Some(base), Some(limit)) => {
            let verb = if (cur - base).abs() < EPS {
                "stayed at"
            } else if cur < base {
                "fell"
            } else {
                "rose"
            };
            format!(
                "{name} {verb} {base:.4} → {cur:.4} ({}; tolerance {:.3})",
                crate::reporting::format::signed(cur - base, 3),
                (base - limit).abs()
            )
        }
        _ if c.subject == "robustness" => format!("robustness: {}", c.message),
        (CheckKind::Ceiling, Some(cur), _, Some(limit)) => {
            format!("{name} {cur:.4} is above its ceiling {limit:.3}")
        }
        (CheckKind::Floor, Some(cur), _, Some(limit)) => {
            format!("{name} {cur:.4} is below its floor {limit:.3}")
        }
        _ => format!("{name}: {}", c.message),
    }
}

/// Queries that dropped the most in Recall@5 then nDCG@10 against the baseline's per-query
/// values; without them, the lowest-scoring queries.
fn worst_queries(report: &Report, b: Option<&Baseline>) -> Vec<QueryDelta> {
    let Some(r) = &report.retrieval else {
        return Vec::new();
    };
    let per_query: Option<&BTreeMap<String, BTreeMap<String, f64>>> = b
        .and_then(|b| b.retrieval.as_ref())
        .map(|rb| &rb.per_query)
        .filter(|m| !m.is_empty());
    let mut out: Vec<QueryDelta> = Vec::new();
    for q in &r.per_query {
        let cur = q.metrics.ndcg_at_10;
        match per_query {
            Some(pq) => {
                let Some(base) = pq.get(q.id.as_str()) else {
                    continue;
                };
                // the larger of the two drops decides
                let mut worst: Option<QueryDelta> = None;
                for m in [Metric::RecallAt5, Metric::NdcgAt10] {
                    let (Some(bv), Some(cv)) = (base.get(m.key()), q.metrics.get(m)) else {
                        continue;
                    };
                    let d = cv - bv;
                    if d < -EPS && worst.as_ref().is_none_or(|w| d < w.delta.unwrap_or(0.0)) {
                        worst = Some(QueryDelta {
                            id: q.id.clone(),
                            query: q.query.clone(),
                            metric: m.key().into(),
                            baseline: Some(*bv),
                            current: cv,
                            delta: Some(d),
                        });
                    }
                }
                out.extend(worst);
            }
            None if cur < 1.0 - EPS => out.push(QueryDelta {
                id: q.id.clone(),
                query: q.query.clone(),
                metric: Metric::NdcgAt10.key().into(),
                baseline: None,
                current: cur,
                delta: None,
            }),
            None => {}
        }
    }
    out.sort_by(|a, b| {
        let ka = a.delta.unwrap_or(a.current);
        let kb = b.delta.unwrap_or(b.current);
        ka.total_cmp(&kb).then_with(|| a.id.cmp(&b.id))
    });
    out.truncate(10);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::direction_of;

    fn check(subject: &str, metric: &str, kind: CheckKind) -> Check {
        Check {
            subject: subject.into(),
            metric: metric.into(),
            kind,
            direction: direction_of(metric),
            baseline: None,
            current: None,
            ci95: None,
            delta: None,
            limit: None,
            status: CheckStatus::Fail,
            message: "the message".into(),
        }
    }

    #[test]
    fn a_failed_check_reads_as_a_sentence() {
        let mut c = check("retrieval", "recall_at_5", CheckKind::Tolerance);
        (c.baseline, c.current, c.limit) = (Some(0.5596), Some(0.4091), Some(0.5396));
        assert_eq!(
            sentence(&c),
            "Recall@5 fell 0.5596 → 0.4091 (\u{2212}0.150; tolerance 0.020)"
        );
        // lower is better: a rise is the regression
        let mut c = check("detector:rules", "fpr", CheckKind::Tolerance);
        (c.baseline, c.current, c.limit) = (Some(0.03), Some(0.12), Some(0.08));
        assert_eq!(
            sentence(&c),
            "rules FPR rose 0.0300 → 0.1200 (+0.090; tolerance 0.050)"
        );
        let mut c = check("detector:rules", "fpr", CheckKind::Ceiling);
        (c.current, c.limit) = (Some(0.12), Some(0.09));
        assert_eq!(sentence(&c), "rules FPR 0.1200 is above its ceiling 0.090");
        let mut c = check("detector:x", "recall", CheckKind::Floor);
        (c.current, c.limit) = (Some(0.0), Some(0.1));
        assert_eq!(sentence(&c), "x Recall 0.0000 is below its floor 0.100");
        // undefined numbers fall back to the check's own message
        let c = check("retrieval", "mrr", CheckKind::Tolerance);
        assert_eq!(sentence(&c), "MRR: the message");
        let c = check("robustness", "probes_failed", CheckKind::Ceiling);
        assert_eq!(sentence(&c), "robustness: the message");
    }

    #[test]
    fn signed_numbers_have_a_real_minus_and_no_signed_zero() {
        use crate::reporting::format::signed;
        assert_eq!(signed(-0.15049, 3), "\u{2212}0.150");
        assert_eq!(signed(0.02, 3), "+0.020");
        assert_eq!(signed(-0.00001, 4), "0");
        assert_eq!(signed(0.0, 4), "0");
    }

    /// A whole report (the fuzz fixture's: retrieval, two detectors, robustness) with its
    /// failure cleared.
    fn report() -> Report {
        let mut r: Report =
            serde_json::from_str(include_str!("../fuzz/fixtures/report_template.json")).unwrap();
        r.failure = None;
        r.robustness = None;
        r
    }

    fn verdict_of(r: &Report, b: Option<&Baseline>) -> GateReport {
        evaluate(r, b.map(|b| ("b.json", b)), &Context::default())
    }

    #[test]
    fn a_report_against_its_own_baseline_passes_and_a_regression_fails_by_name() {
        let r = report();
        let none = verdict_of(&r, None);
        assert_eq!(none.verdict, Verdict::NoBaseline);
        assert!(none.checks.iter().all(|c| c.status == CheckStatus::Info));

        let b = Baseline::from_report(&r, None);
        let own = verdict_of(&r, Some(&b));
        assert_eq!(own.verdict, Verdict::Pass, "{}", own.summary);
        assert!(own.ungated.is_empty(), "{:?}", own.ungated);
        // the default gated retrieval metrics and each detector's ceiling and floor
        let gated: Vec<(&str, &str)> = own
            .checks
            .iter()
            .filter(|c| c.kind != CheckKind::Info)
            .map(|c| (c.subject.as_str(), c.metric.as_str()))
            .collect();
        for want in [
            ("retrieval", "recall_at_5"),
            ("retrieval", "mrr"),
            ("retrieval", "ndcg_at_10"),
        ] {
            assert!(gated.contains(&want), "{want:?} not gated: {gated:?}");
        }
        assert_eq!(
            gated
                .iter()
                .filter(|(s, _)| s.starts_with("detector:"))
                .count(),
            4
        );

        // Recall@5 0.10 below a baseline with tolerance 0.02: one failed check, in words
        let mut worse = r.clone();
        let m = worse
            .retrieval
            .as_mut()
            .unwrap()
            .metrics
            .get_mut("recall_at_5")
            .unwrap();
        m.mean = m.mean.map(|v| v - 0.1);
        let g = verdict_of(&worse, Some(&b));
        assert_eq!(g.verdict, Verdict::Fail);
        assert_eq!(
            g.summary,
            "gate failed: Recall@5 fell 0.5000 → 0.4000 (\u{2212}0.100; tolerance 0.020)"
        );
    }

    #[test]
    fn a_detector_new_to_the_baseline_is_held_to_the_default_limits() {
        let r = report();
        let mut b = Baseline::from_report(&r, None);
        let sec = b.security.as_mut().unwrap();
        let name = r.security.as_ref().unwrap().detectors[1].detector.clone();
        sec.detectors.remove(&name);
        let g = verdict_of(&r, Some(&b));
        let subject = format!("detector:{name}");
        let limits: Vec<(CheckKind, Option<f64>)> = g
            .checks
            .iter()
            .filter(|c| c.subject == subject && c.kind != CheckKind::Info)
            .map(|c| (c.kind, c.limit))
            .collect();
        assert_eq!(
            limits,
            [
                (CheckKind::Ceiling, Some(0.10)),
                (CheckKind::Floor, Some(0.10))
            ]
        );
        // with the defaults switched off it is measured but not gated
        let cx = Context {
            new_detector: NewDetectorLimits {
                fpr_ceiling: None,
                recall_floor: None,
            },
            ..Context::default()
        };
        let g = evaluate(&r, Some(("b.json", &b)), &cx);
        assert_eq!(g.ungated, [subject]);
    }

    #[test]
    fn limits_for_a_new_detector_default_to_a_tenth() {
        assert_eq!(DEFAULT_NEW_DETECTOR.fpr_ceiling, Some(0.10));
        assert_eq!(DEFAULT_NEW_DETECTOR.recall_floor, Some(0.10));
        assert_eq!(Context::default().new_detector, DEFAULT_NEW_DETECTOR);
    }
}
