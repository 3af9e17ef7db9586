//! What every renderer shows, computed once: the gate's marks, the rows of the "against the
//! baseline" tables (retrieval and each detector: baseline, current, Δ, limit, gate), the failed
//! checks in words, and counts as per-run means. Markdown, HTML and the terminal only lay these
//! out, so a reviewer reads the same numbers and symbols in all three.

use super::model::{
    CategoryReport, Check, CheckKind, CheckStatus, DetectorReport, Direction, GateReport,
    QueryDelta, Report,
};
use crate::pipeline::dataset::Category;
use crate::pipeline::score::metrics::{DETECTION_METRICS, Metric, RETRIEVAL_METRICS};
use crate::pipeline::score::stats::Summary;
use std::collections::{BTreeMap, BTreeSet};

pub mod tools;
use crate::pipeline::gate;
use crate::pipeline::gate::model::{DetectorFlips, PairedComparison};
pub use tools::ToolsView;

/// Every section's numbers as the renderers show them, computed once per report. The
/// renderers ([`super::Exporter`]s) only lay these out and escape the text for their format.
#[derive(Debug, Clone)]
pub struct View<'a> {
    /// The headline a reviewer reads first ([`headline`]).
    pub headline: String,
    /// The failed checks in words ([`failed`]).
    pub failed: Vec<String>,
    /// Every retrieval metric against the baseline.
    pub retrieval_rows: Vec<Row>,
    /// Every detector, in the report's order.
    pub detectors: Vec<DetectorView<'a>>,
    /// The per-category table: one row per category (then hard negatives by what they
    /// resemble), one cell per detector.
    pub categories: Vec<CategoryRow>,
    /// The most regressed (or lowest-scoring) queries; `None` when there are none.
    pub regressions: Option<Regressions>,
    /// The per-tool diagnostics, cut for a page; `None` without them.
    pub tools: Option<ToolsView<'a>>,
}

/// One detector: its overview row and its rows against the baseline.
#[derive(Debug, Clone)]
pub struct DetectorView<'a> {
    /// Its section of the report.
    pub report: &'a DetectorReport,
    /// Whose detector it is and, for a system with tiers, what the row counts: "blocked ·
    /// mcpproxy's own scan", "evalgate's reference checker". Every rendering shows it.
    pub by: String,
    /// The outcome of its gated checks.
    pub mark: Mark,
    /// Its checks against the baseline all stand unchanged: at least one Δ, every Δ within the
    /// baseline's rounding (0.000001), no failed check, and no entry whose verdict flipped (when
    /// the baseline keeps verdicts). The comment folds such detectors into one line.
    pub unchanged: bool,
    /// Every detection metric against the baseline, in [`DETECTION_METRICS`] order (the
    /// overview's metrics and the spread chart).
    pub all_rows: Vec<Row>,
    /// Its own per-category table: every category of the corpus, then the hard negatives by
    /// the category they resemble.
    pub categories: Vec<DetectorCategoryRow<'a>>,
}

/// A row of one detector's per-category table: recall for an attack category, the flag rate
/// for the others.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DetectorCategoryRow<'a> {
    /// The category's entries, flags summed over runs and rate.
    #[serde(flatten)]
    pub of: &'a CategoryReport,
    /// The row counts the hard negatives that resemble `category`.
    pub hard_negatives: bool,
    /// An attack category the detector does not claim to cover.
    pub out_of_scope: bool,
    /// Entries × runs: what the flags are out of.
    pub checked: usize,
}

/// A row of the per-category table.
#[derive(Debug, Clone, PartialEq)]
pub struct CategoryRow {
    pub category: Category,
    /// The row counts the hard negatives that resemble `category` (not `category`'s own
    /// entries).
    pub hard_negatives: bool,
    /// Attack categories show recall, the others a flag rate.
    pub attack: bool,
    pub entries: usize,
    /// One cell per detector.
    pub cells: Vec<CategoryCell>,
}

/// A detector's number for one category.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CategoryCell {
    /// The mean rate (`None`: the detector has no row for it), and the entries it is over when
    /// they are fewer than the row's (a detector that judges only some of them, as `drift`
    /// judges only entries with a changed definition).
    Rate(Option<f64>, Option<usize>),
    /// An attack category the detector does not claim to cover.
    OutOfScope,
}

/// The queries that regressed most against the baseline, or scored lowest without one.
#[derive(Debug, Clone)]
pub struct Regressions {
    /// `Most regressed queries` or `Lowest-scoring queries`.
    pub title: &'static str,
    pub rows: Vec<QueryDelta>,
}

/// A detector's flips in words, numbers only (no dataset text): "2 newly missed attacks, 1
/// newly flagged benign entry, 3 fixed of 120 entries · McNemar p = 0.0312 (Holm = 0.0936)".
pub fn flips_text(f: &DetectorFlips) -> String {
    let plural = |n: usize, one, many| if n == 1 { one } else { many };
    let m = &f.mcnemar;
    let significant = (m.significant == Some(true)).then_some(", significant");
    let missed = plural(f.newly_missed, "attack", "attacks");
    let flagged = plural(f.newly_flagged, "benign entry", "benign entries");
    format!(
        "{} newly missed {missed}, {} newly flagged {flagged}, {} fixed of {} entries · McNemar p {}{}{}",
        f.newly_missed,
        f.newly_flagged,
        f.fixed,
        f.entries,
        gate::words_p_value(m.p_value),
        m.p_holm
            .map(|h| format!(" (Holm {})", gate::words_p_value(h)))
            .unwrap_or_default(),
        significant.unwrap_or_default()
    )
}

impl View<'_> {
    /// Computes every section of `r` once.
    pub fn of(r: &Report) -> View<'_> {
        let detectors: Vec<DetectorView> = r
            .security
            .iter()
            .flat_map(|s| &s.detectors)
            .map(|d| DetectorView::of(r, d))
            .collect();
        View {
            headline: headline(r),
            failed: failed(r),
            retrieval_rows: r.retrieval.as_ref().map_or_else(Vec::new, |rr| {
                rows(&r.gate, "retrieval", &RETRIEVAL_METRICS, &rr.metrics)
            }),
            categories: category_rows(r, &detectors),
            detectors,
            regressions: regressions(&r.gate),
            tools: r
                .retrieval
                .as_ref()
                .and_then(|rr| ToolsView::of(rr, r.gate.new_confusions.as_ref())),
        }
    }
}

impl<'a> DetectorView<'a> {
    fn of(r: &Report, d: &'a DetectorReport) -> DetectorView<'a> {
        let subject = format!("detector:{}", d.detector);
        let checks: Vec<&Check> = r
            .gate
            .checks
            .iter()
            .filter(|c| c.subject == subject)
            .collect();
        let mut flips = r
            .gate
            .detector_flips
            .iter()
            .filter(|f| f.detector == d.detector);
        DetectorView {
            report: d,
            by: [d.tier.map(|t| t.label().to_string()), d.source.clone()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" · "),
            mark: Mark::of(checks.iter().copied()),
            unchanged: checks.iter().any(|c| c.delta.is_some())
                && checks.iter().all(|c| {
                    c.status != CheckStatus::Fail && c.delta.is_none_or(|d| d.abs() <= 1e-6)
                })
                && flips.all(|f| f.flips.is_empty()),
            all_rows: rows(&r.gate, &subject, &DETECTION_METRICS, &d.metrics),
            categories: DetectorCategoryRow::of(d),
        }
    }

    /// The metrics with a baseline value or a limit.
    pub fn against(&self) -> impl Iterator<Item = &Row> {
        let shown = |row: &&Row| row.baseline.is_some() || !row.limit.is_empty();
        self.all_rows.iter().filter(shown)
    }
}

impl<'a> DetectorCategoryRow<'a> {
    fn of(d: &'a DetectorReport) -> Vec<DetectorCategoryRow<'a>> {
        let row = |c: &'a CategoryReport, hard_negatives: bool| DetectorCategoryRow {
            of: c,
            hard_negatives,
            out_of_scope: !hard_negatives
                && c.category.is_attack()
                && !d.scope.contains(&c.category),
            checked: c.total * d.runs_completed,
        };
        let corpus = d.per_category.iter().map(|c| row(c, false));
        let resembling = d.hard_negatives_by_resemblance.iter().map(|c| row(c, true));
        corpus.chain(resembling).collect()
    }
}

/// The per-category table from each detector's own rows: every category of the corpus (recall
/// for an attack category, flag rate otherwise), then the hard negatives by the category they
/// resemble.
fn category_rows(r: &Report, detectors: &[DetectorView]) -> Vec<CategoryRow> {
    let Some(s) = &r.security else {
        return Vec::new();
    };
    let resembled: BTreeSet<_> = detectors
        .iter()
        .flat_map(|d| d.categories.iter().filter(|c| c.hard_negatives))
        .map(|c| (c.of.category, c.of.total))
        .collect();
    let corpus = s.categories.iter().map(|(&c, &n)| (c, n, false));
    let rows = corpus.chain(resembled.into_iter().map(|(c, n)| (c, n, true)));
    rows.map(|(category, entries, hard_negatives)| {
        // an open category is an attack when some detector counts it as one
        let attack = !hard_negatives
            && (category.is_attack()
                || detectors.iter().any(|d| d.report.scope.contains(&category)));
        let cell = |d: &DetectorView| {
            if attack && !d.report.scope.contains(&category) {
                return CategoryCell::OutOfScope;
            }
            let mut rows = d.categories.iter();
            let row =
                rows.find(|c| c.of.category == category && c.hard_negatives == hard_negatives);
            let over = row.map(|c| c.of.total).filter(|&n| n != entries);
            CategoryCell::Rate(row.and_then(|c| c.of.rate.mean), over)
        };
        let cells = detectors.iter().map(cell).collect();
        CategoryRow {
            category,
            hard_negatives,
            attack,
            entries,
            cells,
        }
    })
    .collect()
}

/// The queries that changed most as a table, worse first then better (the gate's
/// `worst_queries` then `improved_queries`); `None` when there are none.
fn regressions(gate: &GateReport) -> Option<Regressions> {
    if gate.worst_queries.is_empty() && gate.improved_queries.is_empty() {
        return None;
    }
    let regressed = gate.worst_queries.iter().any(|q| q.delta.is_some());
    let improved = !gate.improved_queries.is_empty();
    Some(Regressions {
        title: match (regressed, improved) {
            (true, true) => "Queries that changed most (worse first, then better)",
            (true, false) => "Most regressed queries",
            (false, true) if gate.worst_queries.is_empty() => "Most improved queries",
            (false, _) => "Lowest-scoring queries",
        },
        rows: gate
            .worst_queries
            .iter()
            .chain(&gate.improved_queries)
            .cloned()
            .collect(),
    })
}

/// A paired comparison in a table cell: "p < 0.0001 · CI −0.500 to −0.300 · 12 worse, 0
/// better of 30".
pub fn paired_text(p: &PairedComparison) -> String {
    let ci = p.delta_ci95.map_or_else(String::new, |[lo, hi]| {
        format!(" · CI {} to {}", gate::signed(lo, 3), gate::signed(hi, 3))
    });
    let significant = (p.significant == Some(true)).then_some(" (significant)");
    format!(
        "p {}{}{ci} · {} worse, {} better of {}",
        gate::words_p_value(p.p_value),
        significant.unwrap_or_default(),
        p.worse,
        p.better,
        p.queries
    )
}

/// How a number stands with the gate. One symbol set for every renderer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// One number against the baseline.
#[derive(Debug, Clone)]
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
    /// The paired per-query comparison with the baseline in words ([`paired_text`]); `None`
    /// without one.
    pub paired: Option<String>,
    /// What a chart marks on the metric's axis: the first check's baseline value and its
    /// limit when it is gated (a ceiling or a floor comes before the tolerance check).
    pub chart_baseline: Option<f64>,
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
                paired: tol.and_then(|c| c.paired.as_ref()).map(paired_text),
                chart_baseline: first.and_then(|c| c.baseline),
                // an ungated (info) check has no limit worth drawing
                chart_limit: first
                    .filter(|c| c.kind != CheckKind::Info)
                    .and_then(|c| c.limit),
            }
        })
        .collect()
}

/// The failed checks in words, worst first as the gate found them ("Recall@5 fell 0.5596 →
/// 0.4091 (−0.151; tolerance 0.020)").
pub fn failed(r: &Report) -> Vec<String> {
    failed_checks(r).map(gate::sentence).collect()
}

/// The failed checks, worst first as the gate found them.
pub fn failed_checks(r: &Report) -> impl Iterator<Item = &Check> {
    r.gate
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
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
pub fn per_run(total: u64, runs: usize) -> String {
    if runs <= 1 {
        return total.to_string();
    }
    super::scorecard::points(total as f64 / runs as f64)
}

/// "(per run)" after a heading whose counts are per-run means, else nothing.
pub fn per_run_note(runs: usize) -> &'static str {
    if runs > 1 { " (mean per run)" } else { "" }
}

#[cfg(test)]
mod tests;
