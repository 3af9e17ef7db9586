//! The terminal table (comfy-table), printed to stdout after a run.

use super::format::{delta, mean_ci, ms, num, splits_line};
use super::model::*;
use super::view::{self, Mark, Row, View};
use crate::infra::text::sanitize::{term, term_ends};
use crate::pipeline::score::metrics::label;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table};
use std::fmt::Write;

fn mark_cell(mark: Mark, color: bool) -> Cell {
    let col = match mark {
        Mark::Pass => Color::Green,
        Mark::Fail => Color::Red,
        Mark::NotGated => Color::Reset,
    };
    let cell = Cell::new(mark.text());
    if color { cell.fg(col) } else { cell }
}

/// An "against the baseline" table: the first column, then Baseline, Current, Δ, Limit, Gate.
fn baseline_table(first: &str, rows: &[Row], color: bool) -> Table {
    let mut t = table(
        &[
            first,
            "Baseline",
            "Current (mean ± 95% CI)",
            "Δ",
            "Limit",
            "Gate",
        ],
        color,
    );
    for row in rows {
        t.add_row(vec![
            Cell::new(&row.label),
            Cell::new(num(row.baseline)),
            Cell::new(mean_ci(row.current.as_ref())),
            Cell::new(delta(row.delta)),
            Cell::new(if row.limit.is_empty() {
                "–"
            } else {
                &row.limit
            }),
            mark_cell(row.mark, color),
        ]);
    }
    right(&mut t, 1..5);
    t
}

fn table(headers: &[&str], color: bool) -> Table {
    let mut t = Table::new();
    if color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(headers.to_vec());
    t
}

fn right(t: &mut Table, cols: std::ops::Range<usize>) {
    for i in cols {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// The summary tables printed to stdout; `color` adds ANSI colours (only on a terminal).
pub struct Terminal {
    pub color: bool,
}

impl super::Exporter for Terminal {
    fn file_name(&self) -> Option<&'static str> {
        None
    }
    fn render(&self, report: &Report, view: &View) -> anyhow::Result<String> {
        Ok(render_view(report, view, self.color))
    }
}

/// Renders the summary tables; `color` adds ANSI colours (only on a terminal).
pub fn render(r: &Report, color: bool) -> String {
    render_view(r, &View::of(r), color)
}

/// [`render`] from the report's view.
pub fn render_view(r: &Report, v: &View, color: bool) -> String {
    let mut o = String::new();
    // what a reviewer needs first: the verdict in words and every failed check
    let _ = writeln!(
        o,
        "evalgate: {} — {}",
        r.gate.verdict.as_str(),
        term(&v.headline, 600)
    );
    if v.failed.len() > 1 {
        for f in &v.failed {
            let _ = writeln!(o, "  ✗ {}", term(f, 300));
        }
    }
    if let Some(f) = &r.failure {
        let _ = writeln!(
            o,
            "  system under test failed: {}",
            term_ends(&f.to_string(), 600)
        );
    }
    let _ = writeln!(o);
    if let Some(rr) = &r.retrieval {
        let _ = writeln!(
            o,
            "Tool discovery: retriever {} · {} queries · corpus {} · {} run(s)",
            term(&rr.retriever, 60),
            rr.queries,
            term(&rr.corpus_version, 60),
            rr.runs_completed
        );
        let t = baseline_table("Metric", &v.retrieval_rows, color);
        let _ = writeln!(o, "{t}");
        let _ = writeln!(
            o,
            "latency p50 {} · p95 {} · max {} · empty answers {}/{}{}{}{}\n",
            ms(rr.latency_ms.p50),
            ms(rr.latency_ms.p95),
            ms(rr.latency_ms.max),
            view::per_run(rr.diagnostics.empty_answers as u64, rr.runs_completed),
            view::per_run(rr.diagnostics.answers as u64, rr.runs_completed),
            view::per_run_note(rr.runs_completed),
            if r.runs > 1 {
                format!(
                    " · queries answered differently across runs {}",
                    rr.diagnostics.unstable_queries
                )
            } else {
                String::new()
            },
            rr.catalog
                .as_ref()
                .map(|c| format!("\ncatalog {}", term(&c.summary(), 400)))
                .unwrap_or_default()
        );
        if let Some(line) = splits_line(&v.splits) {
            let _ = writeln!(o, "{line}\n");
        }
        if let Some(t) = &v.tools {
            let _ = writeln!(o, "per tool: {}", t.summary());
            if let Some(n) = t.new_confusions.as_ref().filter(|n| n.total > 0) {
                for p in n.pairs.iter().take(3) {
                    let _ = writeln!(
                        o,
                        "  new confusion: {} missed, {} in the top 5 instead (in {} quer{})",
                        term(&p.wanted, 80),
                        term(&p.taken, 80),
                        p.queries,
                        if p.queries == 1 { "y" } else { "ies" }
                    );
                }
            }
            let _ = writeln!(
                o,
                "  (tables: report.md and report.html, in full in report.json retrieval.tool_diagnostics)\n"
            );
        }
    }
    if let Some(s) = &r.security {
        let _ = writeln!(o, "Security detectors: {} entries", s.entries);
        let counts = format!("TP/FP/TN/FN{}", view::per_run_note(r.runs));
        let mut t = table(
            &[
                "Detector",
                "Precision",
                "Recall",
                "F1",
                "FPR",
                "FPR hard neg.",
                &counts,
                "Gate",
            ],
            color,
        );
        for d in &v.detectors {
            let mut row = vec![Cell::new(term(&d.name, 40))];
            row.extend(d.metrics.iter().map(|m| Cell::new(mean_ci(m.as_ref()))));
            row.push(Cell::new(format!(
                "{}{}",
                d.counts.join("/"),
                if d.not_applicable > 0 {
                    format!("\nn/a {}", d.not_applicable)
                } else {
                    String::new()
                }
            )));
            row.push(mark_cell(d.mark, color));
            t.add_row(row);
        }
        right(&mut t, 1..7);
        let _ = writeln!(o, "{t}\n");
        let against = v.detector_rows(|d| term(d, 40));
        if !against.is_empty() {
            let _ = writeln!(o, "Detectors against the baseline");
            let _ = writeln!(
                o,
                "{}\n",
                baseline_table("Detector metric", &against, color)
            );
        }
        for d in &v.detectors {
            let Some(live) = &d.live else { continue };
            let _ = writeln!(
                o,
                "{}: rug-pulls played live{}",
                term(&d.name, 40),
                view::per_run_note(d.runs)
            );
            let mut t = table(
                &[
                    "Category",
                    "Played",
                    "Reported",
                    "Blocked",
                    "Restored",
                    "Detection rate",
                    "Block rate",
                ],
                color,
            );
            for c in live {
                let like = c
                    .resembles
                    .map(|r| format!(" like {}", term(r.as_str(), 60)))
                    .unwrap_or_default();
                t.add_row(vec![
                    Cell::new(format!("{}{like}", term(c.category.as_str(), 60))),
                    Cell::new(c.played),
                    Cell::new(&c.reported),
                    Cell::new(&c.blocked),
                    Cell::new(&c.restored),
                    Cell::new(mean_ci(Some(&c.detection_rate))),
                    Cell::new(mean_ci(Some(&c.block_rate))),
                ]);
            }
            right(&mut t, 1..7);
            let _ = writeln!(o, "{t}\n");
        }
    }
    if let (Some(rb), Some(n)) = (&r.robustness, &v.probes) {
        use crate::pipeline::measure::probes::ProbeOutcome as P;
        let _ = writeln!(
            o,
            "Robustness probes: {} answered, {} refused with a clear error, {} failed{}; {}",
            n.answered,
            n.refused,
            n.failed,
            match n.not_applicable {
                0 => String::new(),
                n => format!(", {n} not applicable"),
            },
            if rb.survived {
                "still answering afterwards"
            } else {
                "NOT answering an ordinary query afterwards"
            }
        );
        for p in rb.probes.iter().filter(|p| p.outcome == P::Failed) {
            let _ = writeln!(
                o,
                "  probe {} failed: {}",
                term(&p.what, 80),
                term(&p.detail, 300)
            );
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(
        o,
        "verdict: {} — {}",
        r.gate.verdict.as_str(),
        term(&r.gate.summary, 600)
    );
    o
}

/// One line per failed gate check, then one naming why the system under test could not be
/// measured: what the full view ends with, and all that `-q` prints.
pub fn failures(r: &Report) -> String {
    let mut o = String::new();
    for c in r
        .gate
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
    {
        let _ = writeln!(
            o,
            "FAILED {} {}: {}",
            term(&c.subject, 60),
            label(&c.metric),
            term(&c.message, 300)
        );
    }
    if let Some(f) = &r.failure {
        let _ = writeln!(
            o,
            "SYSTEM UNDER TEST FAILED: {}",
            term_ends(&f.to_string(), 600)
        );
    }
    o
}

/// What `-q` prints (on stderr): nothing when the gate holds or there is no baseline; one line
/// naming the failure's kind and cause when the system under test could not be measured (exit
/// 3); else one line per failed check (subject, metric, current value against the baseline and
/// the limit, the gate's message) and the verdict line.
pub fn quiet(r: &Report) -> String {
    let mut o = String::new();
    if let Some(f) = &r.failure {
        let _ = writeln!(
            o,
            "SYSTEM UNDER TEST FAILED: {}: {}",
            f.kind(),
            term_ends(&f.to_string(), 600)
        );
        return o;
    }
    let failed: Vec<&Check> = r
        .gate
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .collect();
    if failed.is_empty() && r.gate.verdict != Verdict::Fail {
        return o;
    }
    for c in failed {
        let against = match (c.baseline, c.limit) {
            (Some(b), Some(l)) => format!("baseline {}, limit {}", num(Some(b)), num(Some(l))),
            (Some(b), None) => format!("baseline {}", num(Some(b))),
            (None, l) => format!("limit {}", num(l)),
        };
        let _ = writeln!(
            o,
            "FAILED {} {}: {} ({against}): {}",
            term(&c.subject, 60),
            label(&c.metric),
            num(c.current),
            term(&c.message, 300)
        );
    }
    let _ = writeln!(
        o,
        "verdict: {} — {}",
        r.gate.verdict.as_str(),
        term(&r.gate.summary, 600)
    );
    o
}
