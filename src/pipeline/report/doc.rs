//! The report's tables as a typed document, decided once from the [`View`] and laid out by
//! each format through a few primitives ([`Format`]). A cell says what its text is (evalgate's
//! own words, a dataset id, free dataset text, a category, a gate mark), and each format
//! neutralises each kind in exactly one place ([`Format::cell`]), so dataset text cannot reach
//! a format unescaped, nor be escaped twice.

use super::format::{delta, mean_ci, num};
use super::model::{DetectorReport, QueryReport, RetrievalReport};
use super::view::tools::{cut, shown};
use super::view::{self, CategoryCell, DetectorView, Mark, Regressions, Row, ToolsView, View};
use crate::infra::text::sanitize::CELL_MAX;
use crate::pipeline::dataset::Category;
use crate::pipeline::dataset::model::SPLITS;
use crate::pipeline::gate::model::{DetectorFlips, RankChange};
use crate::pipeline::measure::probes::{ProbeOutcome, RobustnessReport};
use crate::pipeline::score::diagnostics::ConfusionPair;
use crate::pipeline::score::metrics::Metric;

/// One cell's content, by what it is.
#[derive(Debug, Clone)]
pub enum Cell {
    /// evalgate's own words and numbers: shown as they are.
    Plain(String),
    /// An id from a dataset (a detector, tool, server or query), at most this many characters.
    Id(String, usize),
    /// Free dataset text, at most this many characters.
    Text(String, usize),
    /// A category: the known ones are evalgate's words, an open one is dataset text.
    Category(Category),
    /// A gate's outcome.
    Mark(Mark),
    /// Cells shown one after another.
    Seq(Vec<Cell>),
    /// A cell with a smaller note under it (the paired comparison under a Δ).
    Note(Box<Cell>, Box<Cell>),
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Plain(s)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Plain(s.to_string())
    }
}

/// How a column is aligned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Align {
    Left,
    /// Numbers.
    Right,
    /// The gate's marks (left, and said so).
    Mark,
}

/// A table: headers with their alignment, then rows of typed cells.
#[derive(Debug, Clone)]
pub struct Table {
    pub head: Vec<(Cell, Align)>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with these headers (separated by `|`): the first `left` columns left-aligned,
    /// then numbers, then a gate column when `gate`.
    pub fn new(head: &str, left: usize, gate: bool) -> Table {
        let n = head.split('|').count();
        let head = head
            .split('|')
            .enumerate()
            .map(|(i, h)| {
                let align = match i {
                    _ if i < left => Align::Left,
                    _ if gate && i + 1 == n => Align::Mark,
                    _ => Align::Right,
                };
                (Cell::from(h), align)
            })
            .collect();
        Table {
            head,
            rows: Vec::new(),
        }
    }

    /// The table with these rows added.
    pub fn with(mut self, rows: impl IntoIterator<Item = Vec<Cell>>) -> Table {
        self.rows.extend(rows);
        self
    }
}

/// What a format supplies: how it shows one cell (the only place it escapes dataset text)
/// and how it lays out a table.
pub trait Format {
    fn cell(&self, c: &Cell) -> String;
    fn table(&self, t: &Table) -> String;
}

/// An "against the baseline" table: `first` (the metric, or the detector and the metric),
/// Baseline, Current, Δ (the paired comparison under it), Limit, Gate.
pub fn baseline_table<'a>(first: &str, rows: impl IntoIterator<Item = (Cell, &'a Row)>) -> Table {
    let head = format!("{first}|Baseline|Current (mean ± 95% CI)|Δ|Limit|Gate");
    Table::new(&head, 1, true).with(rows.into_iter().map(|(label, row)| {
        let d = Cell::Plain(delta(row.delta));
        let limit = if row.limit.is_empty() {
            "–"
        } else {
            &row.limit
        };
        vec![
            label,
            num(row.baseline).into(),
            mean_ci(row.current.as_ref()).into(),
            match &row.paired {
                Some(p) => Cell::Note(Box::new(d), Box::new(p.clone().into())),
                None => d,
            },
            limit.into(),
            Cell::Mark(row.mark),
        ]
    }))
}

/// The retrieval metrics against the baseline.
pub fn retrieval_table(rows: &[Row]) -> Table {
    baseline_table("Metric", rows.iter().map(|r| (r.label.as_str().into(), r)))
}

/// The given detectors' metrics against the baseline, each row led by the detector's name.
pub fn detectors_table<'a>(detectors: impl IntoIterator<Item = &'a DetectorView<'a>>) -> Table {
    let rows = detectors.into_iter().flat_map(|d| {
        d.against().map(move |r| {
            let name = Cell::Id(d.report.detector.clone(), 60);
            let label = vec![name, format!(" {}", r.label).into()];
            (Cell::Seq(label), r)
        })
    });
    baseline_table("Detector metric", rows)
}

/// A detector's rug-pulls played live, one row per category, counts as per-run means; `None`
/// when it plays none.
pub fn live_table(d: &DetectorReport) -> Option<Table> {
    let head = "Category|Played|Re-listed|Reported|Blocked|Restored|Detection rate|Block rate";
    let pr = |n: usize| Cell::Plain(view::per_run(n as u64, d.runs_completed));
    let live = &d.live.as_ref()?.per_category;
    let table = Table::new(head, 1, false).with(live.iter().map(|c| {
        let mut category = vec![Cell::Category(c.category)];
        if let Some(r) = c.resembles {
            category.extend([" like ".into(), Cell::Category(r)]);
        }
        vec![
            Cell::Seq(category),
            c.played.to_string().into(),
            pr(c.relisted),
            pr(c.reported),
            pr(c.blocked),
            pr(c.restored),
            mean_ci(Some(&c.detection_rate)).into(),
            mean_ci(Some(&c.block_rate)).into(),
        ]
    }));
    Some(table)
}

/// The retrieval's latency, its answer counts (per-run means over its completed runs), how
/// many queries `runs` runs scored differently, and its catalog.
pub fn latency_line(rr: &RetrievalReport, runs: usize) -> Cell {
    let (d, l, n) = (&rr.diagnostics, &rr.latency_ms, rr.runs_completed);
    let pr = |c: usize| view::per_run(c as u64, n);
    let ms = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |x| format!("{x:.2} ms"));
    let mut line = format!(
        "Latency p50 {} · p95 {} · max {} · off-corpus results {} · duplicates {} · starved queries {} · hard negatives in a top 5: {} · empty answers {}/{}",
        ms(l.p50),
        ms(l.p95),
        ms(l.max),
        pr(d.off_corpus_results),
        pr(d.duplicate_results),
        pr(d.starved_queries),
        pr(d.hard_negatives_in_top_5),
        pr(d.empty_answers),
        pr(d.answers),
    );
    if n > 1 {
        line.push_str(" (counts: mean per run)");
    }
    if runs > 1 {
        line += &format!(" · scored differently across runs: {}", d.unstable_queries);
    }
    let mut cells = vec![Cell::Plain(line)];
    if let Some(c) = &rr.catalog {
        cells.extend([" · catalog ".into(), Cell::Text(c.summary(), 400)]);
    }
    Cell::Seq(cells)
}

/// One line comparing the golden-set splits on the headline metrics, e.g.
/// `Splits: dev (448 queries) Recall@5 0.61 · MRR 0.45 | held_out (112) ...`; `None` without splits.
/// `dev` and `held_out` are evalgate's words; any other split name (a warning under the lenient
/// profile, or a report.json from elsewhere) is dataset text, neutralised by the format.
pub fn splits_line(rr: &RetrievalReport) -> Option<Cell> {
    let mut line = vec![Cell::from("Splits: ")];
    for (i, (name, s)) in rr.splits.iter().enumerate() {
        let name = if SPLITS.contains(&name.as_str()) {
            Cell::from(name.as_str())
        } else {
            Cell::Text(name.clone(), 40)
        };
        let sep = if i == 0 { "" } else { " | " };
        line.extend([sep.into(), name]);
        let values = [Metric::RecallAt5, Metric::Mrr, Metric::NdcgAt10]
            .map(|m| format!("{} {}", m.label(), num(s.metrics.get(m.key()).copied())));
        line.push(format!(" ({} queries) {}", s.queries, values.join(" · ")).into());
    }
    (!rr.splits.is_empty()).then_some(Cell::Seq(line))
}

/// `items` as cells, joined by `sep`.
pub fn joined<T>(items: impl IntoIterator<Item = T>, sep: &str, cell: impl Fn(T) -> Cell) -> Cell {
    let cells = items.into_iter().map(cell).flat_map(|c| [sep.into(), c]);
    Cell::Seq(cells.skip(1).collect())
}

/// A tool id, server name, query or entry id.
pub fn id(s: &str) -> Cell {
    Cell::Id(s.to_string(), 80)
}

/// Every detector: who runs it, its scope, its metrics, its counts (per-run means over
/// `runs`) and its gate.
pub fn overview_table(v: &View, runs: usize) -> Table {
    let note = view::per_run_note(runs);
    let head = format!(
        "Detector|Scope|Precision|Recall|F1|FPR|FPR hard neg.|TP / FP / TN / FN{note}|Gate"
    );
    Table::new(&head, 2, true).with(v.detectors.iter().map(|dv| {
        let d = dv.report;
        let mut name = vec![Cell::Id(d.detector.clone(), 60)];
        if !dv.by.is_empty() {
            name.extend([" (".into(), Cell::Text(dv.by.clone(), 80), ")".into()]);
        }
        let scope = if d.scope.len() == 4 {
            "all".into()
        } else {
            // (open categories are dataset text: the whole cell is escaped once)
            let names: Vec<&str> = d.scope.iter().map(|c| c.as_str()).collect();
            Cell::Text(names.join(", "), 80)
        };
        let mut row = vec![Cell::Seq(name), scope];
        let means = dv.all_rows.iter().map(|r| mean_ci(r.current.as_ref()));
        row.extend(means.map(Cell::from));
        let na = match d.not_applicable {
            0 => String::new(),
            n => format!(" (not applicable: {n})"),
        };
        let c = &d.counts;
        let pr = |n| view::per_run(n, d.runs_completed);
        let counts = [pr(c.tp), pr(c.fp), pr(c.tn), pr(c.fn_)].join(" / ");
        row.push(format!("{counts}{na}").into());
        row.push(Cell::Mark(dv.mark));
        row
    }))
}

/// The entries whose verdicts flipped since the baseline, each with what it is now in words.
pub fn flips_table(f: &DetectorFlips) -> Table {
    let rows = f.flips.iter().map(|e| {
        let now = match (e.malicious, e.flagged) {
            (true, false) => "attack, now missed",
            (true, true) => "attack, now caught (fixed)",
            (false, true) => "benign, now flagged",
            (false, false) => "benign, no longer flagged (fixed)",
        };
        vec![id(&e.id), now.into()]
    });
    Table::new("Entry|Flip", 2, false).with(rows)
}

/// Recall (attack categories) or flag rate per category, one column per detector.
pub fn category_table(v: &View) -> Table {
    let mut t = Table::new("Category|Entries", 1, false);
    for d in &v.detectors {
        t.head
            .push((Cell::Text(d.report.detector.clone(), 40), Align::Right));
    }
    t.with(v.categories.iter().map(|row| {
        let c = Cell::Category(row.category);
        let label = match (row.hard_negatives, row.attack) {
            (true, _) => vec!["hard negatives like ".into(), c, " (flag rate)".into()],
            (false, true) => vec![c, " (recall)".into()],
            (false, false) => vec![c, " (flag rate)".into()],
        };
        let mut cells = vec![Cell::Seq(label), row.entries.to_string().into()];
        cells.extend(row.cells.iter().map(|c| match c {
            CategoryCell::OutOfScope => "out of scope".into(),
            CategoryCell::Rate(rate, None) => num(*rate).into(),
            CategoryCell::Rate(rate, Some(n)) => format!("{} (of {n})", num(*rate)).into(),
        }));
        cells
    }))
}

/// The most regressed (or lowest-scoring) queries, with how their relevant tool moved when
/// the baseline keeps ranked lists.
pub fn regressions_table(reg: &Regressions) -> Table {
    let mut t = Table::new("Query|Text|Metric|Baseline|Current|Δ", 3, false);
    let ranked = reg.rows.iter().any(|q| q.ranks.is_some());
    if ranked {
        let head = "Relevant tool: rank before → after (top 10)";
        t.head.push((head.into(), Align::Left));
    }
    t.with(reg.rows.iter().map(|q| {
        let mut row = vec![
            Cell::Id(q.id.to_string(), 40),
            Cell::Text(q.query.to_string(), CELL_MAX),
            // a name evalgate does not know (a hand-made report.json) stays inert
            Metric::from_key(&q.metric)
                .map_or_else(|| Cell::Id(q.metric.clone(), 60), |m| m.label().into()),
            num(q.baseline).into(),
            num(Some(q.current)).into(),
            delta(q.delta).into(),
        ];
        if ranked {
            row.push(q.ranks.as_ref().map_or_else(|| "–".into(), ranks));
        }
        row
    }))
}

/// `tool 3 → 7; in its place: a, b`.
pub fn ranks(rc: &RankChange) -> Cell {
    // a rank in the top 10, or `–` when the tool is not in it
    let rank = |r: Option<usize>| r.map_or_else(|| "–".to_string(), |r| r.to_string());
    let moved = format!(" {} → {}", rank(rc.before), rank(rc.after));
    let mut cells = vec![id(&rc.tool), moved.into()];
    if !rc.took_its_place.is_empty() {
        cells.push("; in its place: ".into());
        cells.push(joined(&rc.took_its_place, ", ", |t| id(t)));
    }
    Cell::Seq(cells)
}

/// Confusion pairs: wanted, taken instead, queries, examples.
pub fn confusion_table(pairs: &[ConfusionPair]) -> Table {
    let mut t = Table::new("Wanted|Taken instead|Queries|Example queries", 2, false);
    t.head[3].1 = Align::Left;
    t.with(pairs.iter().map(|p| {
        let examples = joined(&p.examples, ", ", |e| id(e));
        vec![
            id(&p.wanted),
            id(&p.taken),
            p.queries.to_string().into(),
            examples,
        ]
    }))
}

/// A titled list of the per-tool section: what it lists, how much of it it shows, its table
/// (`None`: nothing to list).
pub struct Listed(pub &'static str, pub String, pub Option<Table>);

/// The per-tool section's lists before its never-found tools (the confusions new since the
/// baseline when it keeps pairs, the worst confusions, tools and servers), then its hard
/// negatives in a top 5 after them. Every list is cut at [`view::tools::LIST_MAX`].
pub fn tool_lists(t: &ToolsView) -> (Vec<Listed>, Option<Listed>) {
    let mut lists = Vec::new();
    if let Some(n) = t.new_confusions {
        let table = (!n.pairs.is_empty()).then(|| confusion_table(&n.pairs));
        let s = shown("worst", n.pairs.len(), n.total);
        lists.push(Listed("Confusions new since the baseline", s, table));
    }
    let confusions = cut(&t.d.confusions);
    if !confusions.is_empty() {
        let s = shown("worst", confusions.len(), t.confusions_total()) + ", most queries first";
        lists.push(Listed("Confusions", s, Some(confusion_table(confusions))));
    }
    let tools = t.worst_tools.iter().map(|s| {
        vec![
            id(&s.tool),
            s.relevant_in.to_string().into(),
            s.found_in_top_5.to_string().into(),
            num(Some(s.recall_at_5)).into(),
            num(Some(s.mrr)).into(),
        ]
    });
    let tools = Table::new("Tool|Relevant in|Found in top 5|Recall@5|MRR", 1, false).with(tools);
    let s = shown("worst", t.worst_tools.len(), t.d.per_tool.len());
    lists.push(Listed("Tools with the lowest Recall@5", s, Some(tools)));
    let head = "Server|Relevant tools|Never found|Relevant in|Found in top 5|Recall@5";
    let servers = Table::new(head, 1, false).with(t.worst_servers.iter().map(|s| {
        let n = [s.tools, s.never_found, s.relevant_in, s.found_in_top_5];
        let mut row = vec![id(&s.server)];
        row.extend(n.iter().map(|n| Cell::Plain(n.to_string())));
        row.push(num(Some(s.recall_at_5)).into());
        row
    }));
    let s = shown("worst", t.worst_servers.len(), t.d.per_server.len());
    lists.push(Listed("Servers with the lowest Recall@5", s, Some(servers)));
    let hard = cut(&t.d.hard_negatives_in_top_5);
    let hard = (!hard.is_empty()).then(|| {
        let rows = hard.iter().map(|h| {
            let (runs, rank) = (h.runs.to_string(), h.best_rank.to_string());
            vec![id(&h.query), id(&h.tool), runs.into(), rank.into()]
        });
        let table = Table::new("Query|Tool|Runs|Best rank", 2, false).with(rows);
        let s = shown("first", hard.len(), t.d.hard_negatives_in_top_5.len());
        let s = format!("labelled not relevant to the query; {s}");
        Listed("Hard negatives in a top 5", s, Some(table))
    });
    (lists, hard)
}

/// The robustness probes in one line: how many failed, whether the system still answered an
/// ordinary query afterwards (and why not), whether they are gated.
pub fn probes_summary(rb: &RobustnessReport) -> Cell {
    let mut cells = vec![
        "Robustness probes of ".into(),
        Cell::Text(rb.system.clone(), 60),
        format!(": {} failed", rb.failed).into(),
    ];
    if !rb.survived {
        cells.push(", and it did not answer an ordinary query afterwards".into());
        if !rb.survival.is_empty() {
            cells.extend([
                " (".into(),
                Cell::Text(rb.survival.clone(), 200),
                ")".into(),
            ]);
        }
    }
    let gated = if rb.gated {
        "gated"
    } else {
        "reported, not gated"
    };
    cells.push(format!(" ({gated})").into());
    Cell::Seq(cells)
}

/// Every robustness probe: what it sent, its outcome (a failure marked), its results, what
/// happened.
pub fn probes_table(rb: &RobustnessReport) -> Table {
    let mut t = Table::new("Probe|Outcome|Results|Detail", 2, false);
    t.head[3].1 = Align::Left;
    t.with(rb.probes.iter().map(|p| {
        let mark = (p.outcome == ProbeOutcome::Failed).then_some("❌ ");
        vec![
            Cell::Text(p.what.to_string(), 80),
            format!("{}{}", mark.unwrap_or_default(), p.outcome.as_str()).into(),
            p.results.map(|n| n.to_string()).unwrap_or_default().into(),
            Cell::Text(p.detail.to_string(), CELL_MAX),
        ]
    }))
}

/// Above this many queries the per-query chart is a histogram of Recall@5: a bar per query would
/// be thinner than a pixel and cost the page about 0.5 KB each.
pub const QUERY_BARS_MAX: usize = 1000;

/// The per-query chart's numbers, decided once: the charts only draw them.
pub struct QueryChart<'a> {
    pub count: usize,
    /// Queries whose runs disagreed.
    pub unstable: usize,
    pub mean: Option<f64>,
    /// Queries that found every, some or none of their relevant tools in the top 5.
    pub full: usize,
    pub partial: usize,
    pub zero: usize,
    /// Every query best first (by Recall@5, then Recall@10, then nDCG@10, a missing value last,
    /// then id); `None` above [`QUERY_BARS_MAX`], where the chart is [`QueryChart::bins`].
    pub sorted: Option<Vec<&'a QueryReport>>,
    /// Recall@5 in ten bins of 0.1 (the last one holds 1.0).
    pub bins: [usize; 10],
}

/// The per-query chart of `rr`; `None` without queries.
pub fn query_chart(rr: &RetrievalReport) -> Option<QueryChart<'_>> {
    if rr.per_query.is_empty() {
        return None;
    }
    let r5: Vec<f64> = rr
        .per_query
        .iter()
        .filter_map(|q| q.metrics.get(Metric::RecallAt5))
        .collect();
    let mut bins = [0usize; 10];
    for v in &r5 {
        bins[((v.clamp(0.0, 1.0) * 10.0) as usize).min(9)] += 1;
    }
    let full = r5.iter().filter(|v| **v >= 1.0 - 1e-9).count();
    let zero = r5.iter().filter(|v| **v <= 1e-9).count();
    // a histogram needs no order (sorting 20,000 rows by three metrics and id was a tenth of
    // rendering the page)
    let sorted = (rr.per_query.len() <= QUERY_BARS_MAX).then(|| {
        let key = |q: &QueryReport| {
            [Metric::RecallAt5, Metric::RecallAt10, Metric::NdcgAt10]
                .map(|m| q.metrics.get(m).unwrap_or(-1.0))
        };
        let mut qs: Vec<_> = rr.per_query.iter().collect();
        qs.sort_by(|a, b| {
            let (ka, kb) = (key(a), key(b));
            let by = |i: usize| kb[i].total_cmp(&ka[i]);
            by(0).then(by(1)).then(by(2)).then_with(|| a.id.cmp(&b.id))
        });
        qs
    });
    Some(QueryChart {
        count: rr.per_query.len(),
        unstable: rr.per_query.iter().filter(|q| q.unstable).count(),
        mean: (!r5.is_empty()).then(|| r5.iter().sum::<f64>() / r5.len() as f64),
        full,
        partial: r5.len() - full - zero,
        zero,
        sorted,
        bins,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::report::model::fixture;

    #[test]
    fn a_detectors_rows_are_led_by_its_name_as_an_id() {
        let r = fixture();
        let v = View::of(&r);
        let t = detectors_table(&v.detectors);
        let want: usize = v.detectors.iter().map(|d| d.against().count()).sum();
        assert!(want > 0);
        assert_eq!(t.rows.len(), want);
        let first = v
            .detectors
            .iter()
            .find_map(|d| Some((d, d.against().next()?)));
        let (first, row) = first.unwrap();
        let Cell::Seq(label) = &t.rows[0][0] else {
            panic!("{:?}", t.rows[0][0])
        };
        assert!(matches!(&label[0], Cell::Id(name, _) if *name == first.report.detector));
        assert!(matches!(&label[1], Cell::Plain(l) if *l == format!(" {}", row.label)));
    }
}
