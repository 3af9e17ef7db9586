//! The terminal table (comfy-table), printed to stdout after a run.

use super::format::{delta, mean_ci, ms, num, splits_line};
use super::model::*;
use super::sanitize::{term, term_ends};
use crate::metrics::label;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table};
use std::fmt::Write;

fn status_cell(status: CheckStatus, color: bool) -> Cell {
    let (t, col) = match status {
        CheckStatus::Pass => ("pass", Color::Green),
        CheckStatus::Fail => ("FAIL", Color::Red),
        CheckStatus::Info => ("-", Color::Reset),
    };
    let cell = Cell::new(t);
    if color { cell.fg(col) } else { cell }
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

/// Renders the summary tables; `color` adds ANSI colours (only on a terminal).
pub fn render(r: &Report, color: bool) -> String {
    let mut o = String::new();
    if let Some(rr) = &r.retrieval {
        let _ = writeln!(
            o,
            "Tool discovery: retriever {} · {} queries · corpus {} · {} run(s)",
            term(&rr.retriever, 60),
            rr.queries,
            term(&rr.corpus_version, 60),
            rr.runs_completed
        );
        let mut t = table(
            &["Metric", "Baseline", "Current (mean ± 95% CI)", "Δ", "Gate"],
            color,
        );
        for c in r.gate.checks.iter().filter(|c| c.subject == "retrieval") {
            t.add_row(vec![
                Cell::new(label(&c.metric)),
                Cell::new(num(c.baseline)),
                Cell::new(mean_ci(rr.metrics.get(&c.metric))),
                Cell::new(delta(c.delta)),
                status_cell(c.status, color),
            ]);
        }
        right(&mut t, 1..4);
        let _ = writeln!(o, "{t}");
        let _ = writeln!(
            o,
            "latency p50 {} · p95 {} · max {} · empty answers {}/{}{}{}\n",
            ms(rr.latency_ms.p50),
            ms(rr.latency_ms.p95),
            ms(rr.latency_ms.max),
            rr.diagnostics.empty_answers,
            rr.diagnostics.answers,
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
        if let Some(line) = splits_line(&rr.splits) {
            let _ = writeln!(o, "{line}\n");
        }
    }
    if let Some(s) = &r.security {
        let _ = writeln!(o, "Security detectors: {} entries", s.entries);
        let mut t = table(
            &[
                "Detector",
                "Precision",
                "Recall",
                "F1",
                "FPR",
                "FPR hard neg.",
                "TP/FP/TN/FN",
                "Gate",
            ],
            color,
        );
        for d in &s.detectors {
            let gate = match r.gate.detector_status(&d.detector) {
                None => Cell::new("-"),
                Some(st) => status_cell(st, color),
            };
            let c = &d.counts;
            t.add_row(vec![
                Cell::new(term(&d.detector, 40)),
                Cell::new(mean_ci(d.metrics.get("precision"))),
                Cell::new(mean_ci(d.metrics.get("recall"))),
                Cell::new(mean_ci(d.metrics.get("f1"))),
                Cell::new(mean_ci(d.metrics.get("fpr"))),
                Cell::new(mean_ci(d.metrics.get("fpr_hard_negative"))),
                Cell::new(format!(
                    "{}/{}/{}/{}{}",
                    c.tp,
                    c.fp,
                    c.tn,
                    c.fn_,
                    if d.not_applicable > 0 {
                        format!("\nn/a {}", d.not_applicable)
                    } else {
                        String::new()
                    }
                )),
                gate,
            ]);
        }
        right(&mut t, 1..7);
        let _ = writeln!(o, "{t}\n");
        for d in s.detectors.iter().filter(|d| d.live.is_some()) {
            let live = d.live.as_ref().expect("filtered");
            let _ = writeln!(
                o,
                "{}: rug-pulls played live (summed over runs)",
                term(&d.detector, 40)
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
            for c in &live.per_category {
                let like = c
                    .resembles
                    .map(|r| format!(" like {}", term(r.as_str(), 60)))
                    .unwrap_or_default();
                t.add_row(vec![
                    Cell::new(format!("{}{like}", term(c.category.as_str(), 60))),
                    Cell::new(c.played),
                    Cell::new(c.reported),
                    Cell::new(c.blocked),
                    Cell::new(c.restored),
                    Cell::new(mean_ci(Some(&c.detection_rate))),
                    Cell::new(mean_ci(Some(&c.block_rate))),
                ]);
            }
            right(&mut t, 1..7);
            let _ = writeln!(o, "{t}\n");
        }
    }
    if let Some(rb) = &r.robustness {
        let count = |k| rb.probes.iter().filter(|p| p.outcome == k).count();
        use crate::probes::ProbeOutcome as P;
        let _ = writeln!(
            o,
            "Robustness probes: {} answered, {} refused with a clear error, {} failed{}; {}",
            count(P::Answered),
            count(P::Refused),
            count(P::Failed),
            match count(P::NotApplicable) {
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
    o.push_str(&failures(r));
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
