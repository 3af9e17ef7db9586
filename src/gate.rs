//! The gate: compare a report with a baseline and reach a verdict. The exit code is derived from
//! the verdict alone, so they always agree.

use crate::baseline::{Baseline, MetricBaseline, direction_of};
use crate::metrics::{DETECTION_METRICS, RETRIEVAL_METRICS};
use crate::reporting::model::*;
use crate::stats::Summary;
use std::collections::BTreeMap;

/// Slack for rounding: baselines store values to 6 decimals.
const EPS: f64 = 1e-6;

fn tolerance_check(
    subject: &str,
    metric: &str,
    s: Option<&Summary>,
    b: Option<&MetricBaseline>,
) -> Check {
    let name = crate::metrics::label(metric);
    let current = s.and_then(|s| s.mean);
    let ci95 = s.and_then(|s| s.ci95);
    let direction = b.map_or_else(|| direction_of(metric), |b| b.direction);
    let baseline = b.and_then(|b| b.value);
    let delta = match (current, baseline) {
        (Some(c), Some(v)) => Some(c - v),
        _ => None,
    };
    let mut check = Check {
        subject: subject.into(),
        metric: metric.into(),
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
    metric: &str,
    s: Option<&Summary>,
    limit: f64,
    kind: CheckKind,
) -> Check {
    let name = crate::metrics::label(metric);
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
        metric: metric.into(),
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

/// Builds the gate section. `baseline` is `(name, baseline)` when one is in use.
pub fn evaluate(report: &Report, baseline: Option<(&str, &Baseline)>, failed: bool) -> GateReport {
    let mut checks = Vec::new();
    let b = baseline.map(|(_, b)| b);
    if let Some(r) = &report.retrieval {
        let rb = b.and_then(|b| b.retrieval.as_ref());
        for (key, _) in RETRIEVAL_METRICS {
            checks.push(tolerance_check(
                "retrieval",
                key,
                r.metrics.get(key),
                rb.and_then(|rb| rb.metrics.get(key)),
            ));
        }
    }
    if let Some(s) = &report.security {
        for d in &s.detectors {
            let subject = format!("detector:{}", d.detector);
            let db = b
                .and_then(|b| b.security.as_ref())
                .and_then(|s| s.detectors.get(&d.detector));
            if let Some(db) = db {
                if let Some(c) = db.fpr_ceiling {
                    checks.push(threshold_check(
                        &subject,
                        "fpr",
                        d.metrics.get("fpr"),
                        c,
                        CheckKind::Ceiling,
                    ));
                }
                if let Some(f) = db.recall_floor {
                    checks.push(threshold_check(
                        &subject,
                        "recall",
                        d.metrics.get("recall"),
                        f,
                        CheckKind::Floor,
                    ));
                }
            }
            for (key, _) in DETECTION_METRICS {
                checks.push(tolerance_check(
                    &subject,
                    key,
                    d.metrics.get(key),
                    db.and_then(|db| db.metrics.get(key)),
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
    let failures: Vec<String> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .map(|c| format!("{} {}", c.subject, c.metric))
        .collect();
    let (verdict, summary) = if failed {
        (
            Verdict::Error,
            "the system under test could not be measured; the report is partial".to_string(),
        )
    } else if !failures.is_empty() {
        (
            Verdict::Fail,
            format!("gate failed: {}", failures.join(", ")),
        )
    } else if baseline.is_none() {
        (Verdict::NoBaseline, "no baseline: numbers are reported, nothing is gated (create one with `evalgate baseline update`)".to_string())
    } else if !checks.iter().any(|c| c.kind != CheckKind::Info) {
        (
            Verdict::NoBaseline,
            format!(
                "no baseline for what was measured ({}): numbers are reported, nothing is gated (`evalgate baseline update` writes one)",
                ungated.join(", ")
            ),
        )
    } else {
        let gated = checks
            .iter()
            .filter(|c| c.status == CheckStatus::Pass)
            .count();
        let not_covered = if ungated.is_empty() {
            String::new()
        } else {
            format!(
                "; not gated: {} (the baseline in use does not gate {}; `evalgate baseline update` writes one)",
                ungated.join(", "),
                if ungated.len() == 1 { "it" } else { "them" }
            )
        };
        (
            Verdict::Pass,
            format!("gate passed: {gated} gated check(s) held{not_covered}"),
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
                for m in ["recall_at_5", "ndcg_at_10"] {
                    let (Some(bv), Some(cv)) = (base.get(m), q.metrics.get(m)) else {
                        continue;
                    };
                    let d = cv - bv;
                    if d < -EPS && worst.as_ref().is_none_or(|w| d < w.delta.unwrap_or(0.0)) {
                        worst = Some(QueryDelta {
                            id: q.id.clone(),
                            query: q.query.clone(),
                            metric: m.into(),
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
                metric: "ndcg_at_10".into(),
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
