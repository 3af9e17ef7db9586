//! The report's tables as a typed document, decided once from the [`View`] and laid out by
//! each format through a few primitives ([`Format`]). A cell says what its text is (evalgate's
//! own words, a dataset id, free dataset text, a category, a gate mark), and each format
//! neutralises each kind in exactly one place ([`Format::cell`]), so dataset text cannot reach
//! a format unescaped, nor be escaped twice.

use super::format::{delta, mean_ci, num};
use super::view::{LiveRow, Mark, Row};
use crate::pipeline::dataset::Category;

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
    Note(Box<Cell>, String),
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
    /// A table with these headers: the first `left` columns left-aligned, then numbers,
    /// then a gate column when `gate`.
    pub fn new(head: &[&str], left: usize, gate: bool) -> Table {
        let n = head.len();
        let head = head
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let align = match i {
                    _ if i < left => Align::Left,
                    _ if gate && i + 1 == n => Align::Mark,
                    _ => Align::Right,
                };
                (Cell::from(*h), align)
            })
            .collect();
        Table {
            head,
            rows: Vec::new(),
        }
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
pub fn baseline_table(first: &str, rows: &[(Cell, &Row)]) -> Table {
    let mut t = Table::new(
        &[
            first,
            "Baseline",
            "Current (mean ± 95% CI)",
            "Δ",
            "Limit",
            "Gate",
        ],
        1,
        true,
    );
    for (label, row) in rows {
        let d = Cell::Plain(delta(row.delta));
        t.rows.push(vec![
            label.clone(),
            num(row.baseline).into(),
            mean_ci(row.current.as_ref()).into(),
            match &row.paired {
                Some(p) => Cell::Note(Box::new(d), p.clone()),
                None => d,
            },
            if row.limit.is_empty() {
                "–"
            } else {
                &row.limit
            }
            .into(),
            Cell::Mark(row.mark),
        ]);
    }
    t
}

/// The retrieval metrics against the baseline.
pub fn retrieval_table(rows: &[Row]) -> Table {
    let rows: Vec<(Cell, &Row)> = rows
        .iter()
        .map(|r| (Cell::Plain(r.label.clone()), r))
        .collect();
    baseline_table("Metric", &rows)
}

/// Every given detector's metrics against the baseline, each row led by the detector's name.
pub fn detectors_table<'a>(rows: impl IntoIterator<Item = (&'a str, &'a Row)>) -> Table {
    let rows: Vec<(Cell, &Row)> = rows
        .into_iter()
        .map(|(name, r)| {
            let label = Cell::Seq(vec![
                Cell::Id(name.to_string(), 60),
                Cell::Plain(format!(" {}", r.label)),
            ]);
            (label, r)
        })
        .collect();
    baseline_table("Detector metric", &rows)
}

/// A detector's rug-pulls played live, one row per category.
pub fn live_table(live: &[LiveRow]) -> Table {
    let mut t = Table::new(
        &[
            "Category",
            "Played",
            "Reported",
            "Blocked",
            "Restored",
            "Detection rate",
            "Block rate",
        ],
        1,
        false,
    );
    for c in live {
        let mut category = vec![Cell::Category(c.category)];
        if let Some(r) = c.resembles {
            category.extend([" like ".into(), Cell::Category(r)]);
        }
        t.rows.push(vec![
            Cell::Seq(category),
            c.played.to_string().into(),
            c.reported.clone().into(),
            c.blocked.clone().into(),
            c.restored.clone().into(),
            mean_ci(Some(&c.detection_rate)).into(),
            mean_ci(Some(&c.block_rate)).into(),
        ]);
    }
    t
}
