//! What every renderer shows, computed once: the gate's marks, the rows of the "against the
//! baseline" tables (retrieval and each detector: baseline, current, Δ, limit, gate), the failed
//! checks in words, and counts as per-run means. Markdown, HTML and the terminal only lay these
//! out, so a reviewer reads the same numbers and symbols in all three.

use super::model::{Check, CheckKind, CheckStatus, Direction, GateReport, Report};
use crate::metrics::{DETECTION_METRICS, Metric, RETRIEVAL_METRICS};
use crate::stats::Summary;
use std::collections::BTreeMap;

/// How a number stands with the gate. One symbol set for every renderer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    Pass,
    Fail,
    /// Measured and shown, but no limit applies to it.
    NotGated,
}

impl Mark {
    /// The symbol and word shown in a table cell.
    pub fn text(self) -> &'static str {
        match self {
            Mark::Pass => "✓ pass",
            Mark::Fail => "✗ FAIL",
            Mark::NotGated => "· not gated",
        }
    }

    /// The worst outcome among a number's checks.
    pub fn of<'a>(checks: impl IntoIterator<Item = &'a Check>) -> Mark {
        let mut mark = Mark::NotGated;
        for c in checks {
            match (c.kind, c.status) {
                (_, CheckStatus::Fail) => return Mark::Fail,
                (CheckKind::Info, _) => {}
                _ => mark = Mark::Pass,
            }
        }
        mark
    }
}

/// The mark of a whole subject (`retrieval`, `detector:NAME`).
pub fn subject_mark(gate: &GateReport, subject: &str) -> Mark {
    Mark::of(gate.checks.iter().filter(|c| c.subject == subject))
}

/// One number against the baseline.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// The metric's display name (`Recall@5`, `FPR`).
    pub label: String,
    pub baseline: Option<f64>,
    pub current: Option<Summary>,
    /// current − baseline.
    pub delta: Option<f64>,
    /// The limits that apply, in words (`≥ 0.5396`, `≤ 0.090 ceiling`); empty when none does.
    pub limit: String,
    pub mark: Mark,
    /// What a chart marks on the metric's axis: the first check's baseline value and its
    /// limit when it is gated (a ceiling or a floor comes before the tolerance check).
    #[serde(skip)]
    pub chart_baseline: Option<f64>,
    #[serde(skip)]
    pub chart_limit: Option<f64>,
}

/// A limit in words: which side is allowed, and what kind of limit it is.
fn limit_text(c: &Check) -> Option<String> {
    let v = c.limit?;
    match c.kind {
        CheckKind::Info => None,
        CheckKind::Tolerance => Some(match c.direction {
            Direction::Higher => format!("≥ {v:.4}"),
            Direction::Lower => format!("≤ {v:.4}"),
        }),
        CheckKind::Ceiling => Some(format!("≤ {v:.3} ceiling")),
        CheckKind::Floor => Some(format!("≥ {v:.3} floor")),
    }
}

fn rows(
    gate: &GateReport,
    subject: &str,
    keys: &[Metric],
    metrics: &BTreeMap<String, Summary>,
) -> Vec<Row> {
    keys.iter()
        .map(|m| {
            let key = m.key();
            let checks: Vec<&Check> = gate
                .checks
                .iter()
                .filter(|c| c.subject == subject && c.metric == key)
                .collect();
            let tol = checks
                .iter()
                .find(|c| matches!(c.kind, CheckKind::Tolerance | CheckKind::Info));
            let baseline = tol.and_then(|c| c.baseline);
            let limits: Vec<String> = checks.iter().filter_map(|c| limit_text(c)).collect();
            let first = checks.first();
            Row {
                label: m.label().to_string(),
                baseline,
                current: metrics.get(key).cloned(),
                delta: tol.and_then(|c| c.delta),
                limit: limits.join("; "),
                mark: Mark::of(checks.iter().copied()),
                chart_baseline: first.and_then(|c| c.baseline),
                // an ungated (info) check has no limit worth drawing
                chart_limit: first
                    .filter(|c| c.kind != CheckKind::Info)
                    .and_then(|c| c.limit),
            }
        })
        .collect()
}

/// Every retrieval metric against the baseline.
pub fn retrieval_rows(r: &Report) -> Vec<Row> {
    r.retrieval.as_ref().map_or_else(Vec::new, |rr| {
        rows(&r.gate, "retrieval", &RETRIEVAL_METRICS, &rr.metrics)
    })
}

/// Every detection metric of one detector against the baseline (empty for an unknown detector).
pub fn detector_metric_rows(r: &Report, detector: &str) -> Vec<Row> {
    let Some(d) = r
        .security
        .as_ref()
        .and_then(|s| s.detectors.iter().find(|d| d.detector == detector))
    else {
        return Vec::new();
    };
    rows(
        &r.gate,
        &format!("detector:{detector}"),
        &DETECTION_METRICS,
        &d.metrics,
    )
}

/// The detection metrics of one detector that have a baseline value or a limit (the others are
/// in the detectors' overview table).
pub fn detector_rows(r: &Report, detector: &str) -> Vec<Row> {
    detector_metric_rows(r, detector)
        .into_iter()
        .filter(|row| row.baseline.is_some() || !row.limit.is_empty())
        .collect()
}

/// [`detector_rows`] of every detector, each row's label led by the detector's name as `name`
/// renders it (code span, terminal text).
pub fn all_detector_rows(r: &Report, name: impl Fn(&str) -> String) -> Vec<Row> {
    r.security
        .iter()
        .flat_map(|s| &s.detectors)
        .flat_map(|d| {
            let shown = name(&d.detector);
            detector_rows(r, &d.detector)
                .into_iter()
                .map(move |mut row| {
                    row.label = format!("{shown} {}", row.label);
                    row
                })
        })
        .collect()
}

/// The failed checks in words, worst first as the gate found them ("Recall@5 fell 0.5596 →
/// 0.4091 (−0.151; tolerance 0.020)").
pub fn failed(r: &Report) -> Vec<String> {
    r.gate
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .map(crate::gate::sentence)
        .collect()
}

/// The headline a reviewer reads first: the gate's summary in words, or with several failed
/// checks, how many (each is then listed on its own line).
pub fn headline(r: &Report) -> String {
    match failed(r).len() {
        n if n > 1 && r.gate.verdict == super::model::Verdict::Fail => {
            format!("gate failed: {n} checks")
        }
        _ => r.gate.summary.clone(),
    }
}

/// A count summed over `runs` runs as a per-run mean: `12`, `12.4`.
pub fn per_run(total: impl Into<u64>, runs: usize) -> String {
    let total: u64 = total.into();
    if runs <= 1 {
        return total.to_string();
    }
    let mean = total as f64 / runs as f64;
    let s = format!("{mean:.1}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

/// "(per run)" after a heading whose counts are per-run means, else nothing.
pub fn per_run_note(runs: usize) -> &'static str {
    if runs > 1 { " (mean per run)" } else { "" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(kind: CheckKind, status: CheckStatus) -> Check {
        Check {
            subject: "retrieval".into(),
            metric: "recall_at_5".into(),
            kind,
            direction: Direction::Higher,
            baseline: Some(0.5),
            current: Some(0.4),
            ci95: None,
            delta: Some(-0.1),
            limit: Some(0.48),
            status,
            message: String::new(),
        }
    }

    #[test]
    fn a_number_is_marked_by_its_worst_check_and_info_is_not_gated() {
        let info = check(CheckKind::Info, CheckStatus::Info);
        let pass = check(CheckKind::Ceiling, CheckStatus::Pass);
        let fail = check(CheckKind::Tolerance, CheckStatus::Fail);
        assert_eq!(Mark::of([&info]), Mark::NotGated);
        assert_eq!(Mark::of([&info, &pass]), Mark::Pass);
        assert_eq!(Mark::of([&pass, &fail, &info]), Mark::Fail);
        assert_eq!(limit_text(&info), None);
        assert_eq!(limit_text(&fail).as_deref(), Some("≥ 0.4800"));
        assert_eq!(limit_text(&pass).as_deref(), Some("≤ 0.480 ceiling"));
    }

    #[test]
    fn counts_are_per_run_means() {
        assert_eq!(per_run(12u64, 1), "12");
        assert_eq!(per_run(12u64, 3), "4");
        assert_eq!(per_run(13u64, 5), "2.6");
        assert_eq!(per_run(0u64, 5), "0");
        assert_eq!(per_run_note(1), "");
    }
}
