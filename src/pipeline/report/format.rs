//! Number formatting shared by the renderers.

use crate::pipeline::score::stats::Summary;

/// A value with 4 decimals, or "–" when undefined.
pub fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{x:.4}"))
}

/// A signed delta with a real minus sign (`+0.0123`, `−0.1505`), `0` when it rounds to
/// nothing, or "–" when undefined.
pub fn delta(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| crate::pipeline::gate::signed(x, 4))
}

/// `mean ± half-width` (just the mean with one run, or when every run gave the same value),
/// "–" when undefined.
pub fn mean_ci(s: Option<&Summary>) -> String {
    match s.map(|s| (s.mean, s.half_width())) {
        Some((Some(m), Some(h))) if h >= 5e-5 => format!("{m:.4} ± {h:.4}"),
        Some((Some(m), _)) => format!("{m:.4}"),
        _ => "–".into(),
    }
}
