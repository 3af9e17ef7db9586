//! Number formatting shared by the renderers.

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
pub fn splits_line(splits: &[super::view::SplitRow]) -> Option<String> {
    if splits.is_empty() {
        return None;
    }
    let parts: Vec<String> = splits
        .iter()
        .map(|s| format!("{} ({} queries) {}", s.name, s.queries, split_values(s)))
        .collect();
    Some(format!("Splits: {}", parts.join(" | ")))
}

/// A split's headline metrics: `Recall@5 0.6100 · MRR 0.4500 · nDCG@10 0.5000`.
pub fn split_values(s: &super::view::SplitRow) -> String {
    let values: Vec<String> = super::view::SPLIT_METRICS
        .iter()
        .zip(s.values)
        .map(|(m, v)| format!("{} {}", m.label(), num(v)))
        .collect();
    values.join(" · ")
}
