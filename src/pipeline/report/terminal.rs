//! The terminal table (comfy-table), printed to stdout after a run.

use super::doc::{self, Align, Cell, Format};
use super::format::num;
use super::model::*;
use super::view::{self, Mark, View};
use crate::infra::text::sanitize::{term, term_ends};
use crate::pipeline::score::metrics::label;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{
    Cell as TableCell, CellAlignment, Color, ColumnConstraint, ContentArrangement, Row as TableRow,
    Table, Width,
};
use std::fmt::Write;

/// Fits `t` to the terminal it is printed on without ever collapsing it. Every column keeps at
/// least the width of its longest word (header included), so a narrow terminal wraps cells at
/// spaces only; a terminal narrower than that minimum, or one that reports 0 columns (a pty
/// with no size, as nektos/act's host mode gives a step), gets the table at its content width,
/// as a pipe does, instead of one character per column. Not a terminal: nothing to fit.
fn fit(t: &mut Table) {
    let Some(width) = t.width() else { return };
    // the longest word of each column, measured as comfy-table measures: a shadow table with
    // one word per line
    let words = |r: &TableRow| -> Vec<String> {
        r.cell_iter()
            .map(|c| {
                c.content()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect()
    };
    let mut shadow = Table::new();
    shadow.add_rows(t.header().into_iter().chain(t.row_iter()).map(words));
    let longest = shadow.column_max_content_widths();
    // the borders: one on each side and one between two columns
    let mut min = t.column_count() + 1;
    for (col, w) in t.column_iter_mut().zip(longest) {
        let need = w.saturating_add(col.padding_width());
        col.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(need)));
        min += usize::from(need);
    }
    if usize::from(width) < min {
        t.set_content_arrangement(ContentArrangement::Disabled);
    }
}

/// The summary tables printed to stdout; `color` adds ANSI colours (only on a terminal).
pub struct Terminal {
    pub color: bool,
}

impl Format for Terminal {
    fn cell(&self, c: &Cell) -> String {
        match c {
            Cell::Plain(s) => s.clone(),
            Cell::Id(s, max) | Cell::Text(s, max) => term(s, *max),
            Cell::Category(c) => term(c.as_str(), 60),
            Cell::Mark(m) => m.text().to_string(),
            Cell::Seq(cells) => cells.iter().map(|c| self.cell(c)).collect(),
            Cell::Note(c, note) => format!("{}\n{}", self.cell(c), self.cell(note)),
        }
    }
    fn table(&self, d: &doc::Table) -> String {
        let mut t = self.comfy(d);
        fit(&mut t);
        t.to_string()
    }
}

impl Terminal {
    /// `d` as a comfy-table, not yet fitted to the terminal.
    fn comfy(&self, d: &doc::Table) -> Table {
        let mut t = Table::new();
        if self.color {
            t.enforce_styling();
        } else {
            t.force_no_tty();
        }
        let head: Vec<String> = d.head.iter().map(|(h, _)| self.cell(h)).collect();
        t.load_style(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_header(head);
        for r in &d.rows {
            t.add_row(r.iter().map(|c| match c {
                Cell::Mark(m) if self.color => TableCell::new(m.text()).fg(match m {
                    Mark::Pass => Color::Green,
                    Mark::Fail => Color::Red,
                    Mark::NotGated => Color::Reset,
                }),
                c => TableCell::new(self.cell(c)),
            }));
        }
        for (col, (_, align)) in t.column_iter_mut().zip(&d.head) {
            if *align == Align::Right {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
        t
    }
}

/// Renders the summary tables from the report's view; `color` adds ANSI colours (only on a
/// terminal).
pub fn render_view(r: &Report, v: &View, color: bool) -> String {
    let f = Terminal { color };
    let mut o = String::new();
    // what a reviewer needs first: the verdict in words and every failed check
    let (verdict, headline) = (r.gate.verdict.as_str(), term(&v.headline, 600));
    let _ = writeln!(o, "evalgate: {verdict} — {headline}");
    if v.failed.len() > 1 {
        for f in &v.failed {
            let _ = writeln!(o, "  ✗ {}", term(f, 300));
        }
    }
    if let Some(f) = &r.failure {
        let f = term_ends(&f.to_string(), 600);
        let _ = writeln!(o, "  system under test failed: {f}");
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
        let _ = writeln!(o, "{}", f.table(&doc::retrieval_table(&v.retrieval_rows)));
        let _ = writeln!(o, "{}\n", f.cell(&doc::latency_line(rr, r.runs)));
        if let Some(line) = doc::splits_line(rr) {
            let _ = writeln!(o, "{}\n", f.cell(&line));
        }
        if let Some(t) = &v.tools {
            let _ = writeln!(o, "per tool: {}", t.summary());
            if let Some(n) = t.new_confusions.filter(|n| n.total > 0) {
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
            o.push_str("  (tables: report.md and report.html, in full in report.json retrieval.tool_diagnostics)\n\n");
        }
    }
    if let Some(s) = &r.security {
        let _ = writeln!(o, "Security detectors: {} entries", s.entries);
        let _ = writeln!(o, "{}\n", f.table(&doc::overview_table(v, r.runs)));
        let against = doc::detectors_table(&v.detectors);
        if !against.rows.is_empty() {
            let _ = writeln!(o, "Detectors against the baseline\n{}\n", f.table(&against));
        }
        for fl in r.gate.detector_flips.iter().filter(|f| !f.flips.is_empty()) {
            let (name, text) = (term(&fl.detector, 40), view::flips_text(fl));
            let table = f.table(&doc::flips_table(fl));
            let _ = writeln!(
                o,
                "{name}: verdicts flipped since the baseline: {text}\n{table}\n"
            );
        }
        for d in &s.detectors {
            let Some(live) = doc::live_table(d) else {
                continue;
            };
            let name = term(&d.detector, 40);
            let note = view::per_run_note(d.runs_completed);
            let _ = writeln!(o, "{name}: rug-pulls played live{note}");
            let _ = writeln!(o, "{}\n", f.table(&live));
        }
    }
    if let Some(reg) = v
        .regressions
        .as_ref()
        .filter(|g| g.rows.iter().any(|q| q.delta.is_some()))
    {
        let table = f.table(&doc::regressions_table(reg));
        let _ = writeln!(o, "{}\n{table}\n", reg.title);
    }
    if let Some(rb) = &r.robustness {
        let (summary, table) = (doc::probes_summary(rb), doc::probes_table(rb));
        let _ = writeln!(o, "{}\n{}\n", f.cell(&summary), f.table(&table));
    }
    if let Some(line) = super::scorecard::line(r) {
        let _ = writeln!(o, "{line}\n");
    }
    o + &verdict_line(r)
}

/// The last line of both: the verdict and the gate's summary.
fn verdict_line(r: &Report) -> String {
    let summary = term(&r.gate.summary, 600);
    format!("verdict: {} — {summary}\n", r.gate.verdict.as_str())
}

/// What `-q` prints (on stderr): nothing when the gate holds or there is no baseline; one line
/// naming the failure's kind and cause when the system under test could not be measured (exit
/// 3); else one line per failed check (subject, metric, current value against the baseline and
/// the limit, the gate's message) and the verdict line.
pub fn quiet(r: &Report) -> String {
    let mut o = String::new();
    if let Some(f) = &r.failure {
        let (kind, f) = (f.kind(), term_ends(&f.to_string(), 600));
        return format!("SYSTEM UNDER TEST FAILED: {kind}: {f}\n");
    }
    let failed: Vec<&Check> = view::failed_checks(r).collect();
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
    o + &verdict_line(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A baseline table as a failed run prints it: its longest words need 60 columns (borders
    /// included), its content 84.
    fn sample(width: Option<u16>) -> Table {
        let head = "Metric|Baseline|Current (mean ± 95% CI)|Δ|Limit|Gate";
        let rows = [
            [
                "Recall@5",
                "0.9500",
                "0.6055",
                "−0.3445",
                "≥ 0.9300",
                "✗ FAIL",
            ],
            [
                "nDCG@10",
                "0.5567",
                "0.5567 ± 0.0012",
                "0",
                "–",
                "· not gated",
            ],
        ];
        let rows = rows.map(|r| r.map(Cell::from).to_vec());
        let mut t = Terminal { color: false }.comfy(&doc::Table::new(head, 1, true).with(rows));
        if let Some(w) = width {
            // what comfy-table reads from the terminal (crossterm) when stdout is a tty
            t.set_width(w);
        }
        t
    }

    fn fitted(width: Option<u16>) -> String {
        let mut t = sample(width);
        fit(&mut t);
        t.to_string()
    }

    /// Every word of every cell stands whole on some line.
    fn assert_words_whole(s: &str) {
        let words = [
            "Metric",
            "Baseline",
            "Current",
            "(mean",
            "95%",
            "CI)",
            "Recall@5",
            "nDCG@10",
            "0.9500",
            "0.6055",
            "−0.3445",
            "0.9300",
            "0.0012",
            "FAIL",
            "gated",
        ];
        for w in words {
            assert!(
                s.lines().any(|l| l
                    .split(|c: char| c == '│' || c == '┆' || c.is_whitespace())
                    .any(|x| x == w)),
                "{w:?} is broken in\n{s}"
            );
        }
    }

    fn widest_line(s: &str) -> usize {
        s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    #[test]
    fn a_terminal_of_no_width_or_below_the_minimum_gets_the_whole_table() {
        // the premise: unfitted, comfy-table squeezes a table into 0 columns one character wide
        let collapsed = sample(Some(0)).to_string();
        assert!(collapsed.contains("│ M ┆ B ┆"), "{collapsed}");

        let content = fitted(None);
        assert_eq!(widest_line(&content), 84, "{content}");
        assert_words_whole(&content);
        // a pty reporting 0 columns (act's host mode), or any width below the 60 the longest
        // words need: the table at its content width, exactly as on a pipe
        for w in [0, 1, 6, 20, 40, 59] {
            assert_eq!(fitted(Some(w)), content, "terminal width {w}");
        }
        // wide enough: unchanged too
        for w in [84, 200, u16::MAX] {
            assert_eq!(fitted(Some(w)), content, "terminal width {w}");
        }
    }

    #[test]
    fn a_narrower_terminal_wraps_cells_at_spaces_and_never_breaks_a_word() {
        for w in [60u16, 66, 75, 83] {
            let s = fitted(Some(w));
            assert!(
                widest_line(&s) <= usize::from(w),
                "terminal width {w}: wider\n{s}"
            );
            assert!(
                s.lines().count() > 6,
                "terminal width {w}: not wrapped\n{s}"
            );
            assert_words_whole(&s);
        }
    }
}
