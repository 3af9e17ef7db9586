//! Number formatting shared by the renderers.

use super::doc::Cell;
use crate::pipeline::dataset::model::SPLITS;
use crate::pipeline::score::stats::Summary;

/// A value with 4 decimals, or "–" when undefined.
pub fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{x:.4}"))
}

/// A signed delta with a real minus sign (`+0.0123`, `−0.1505`), `0` when it rounds to
/// nothing, or "–" when undefined.
pub fn delta(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| signed(x, 4))
}

pub use crate::pipeline::gate::signed;

/// `mean ± half-width` (just the mean with one run, or when every run gave the same value),
/// "–" when undefined.
pub fn mean_ci(s: Option<&Summary>) -> String {
    match s.map(|s| (s.mean, s.half_width())) {
        Some((Some(m), Some(h))) if h >= 5e-5 => format!("{m:.4} ± {h:.4}"),
        Some((Some(m), _)) => format!("{m:.4}"),
        _ => "–".into(),
    }
}

/// Milliseconds, "–" when undefined.
pub fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{x:.2} ms"))
}

/// One line comparing the golden-set splits on the headline metrics, e.g.
/// `Splits: dev (448 queries) Recall@5 0.61 · MRR 0.45 | held_out (112) ...`; `None` without splits.
/// `dev` and `held_out` are evalgate's words; any other split name (a warning under the lenient
/// profile, or a report.json from elsewhere) is dataset text, neutralised by the format.
pub fn splits_line(splits: &[super::view::SplitRow]) -> Option<Cell> {
    let mut line = vec![Cell::from("Splits: ")];
    for (i, s) in splits.iter().enumerate() {
        let name = if SPLITS.contains(&s.name.as_str()) {
            Cell::from(s.name.as_str())
        } else {
            Cell::Text(s.name.clone(), 40)
        };
        let sep = if i == 0 { "" } else { " | " };
        line.extend([sep.into(), name]);
        let values = super::view::SPLIT_METRICS.iter().zip(s.values);
        let values: Vec<String> = values
            .map(|(m, v)| format!("{} {}", m.label(), num(v)))
            .collect();
        line.push(format!(" ({} queries) {}", s.queries, values.join(" · ")).into());
    }
    (!splits.is_empty()).then_some(Cell::Seq(line))
}
