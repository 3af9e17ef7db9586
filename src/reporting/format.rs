//! Number formatting shared by the renderers.

use crate::stats::Summary;

/// A value with 4 decimals, or "–" when undefined.
pub fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{x:.4}"))
}

/// A signed delta, or "–".
pub fn delta(v: Option<f64>) -> String {
    v.map_or_else(
        || "–".to_string(),
        |x| {
            if x.abs() < 5e-5 {
                "±0.0000".to_string()
            } else {
                format!("{x:+.4}")
            }
        },
    )
}

/// `mean ± half-width` (or just the mean with one run), "–" when undefined.
pub fn mean_ci(s: Option<&Summary>) -> String {
    match s {
        Some(s) => match (s.mean, s.half_width()) {
            (Some(m), Some(h)) => format!("{m:.4} ± {h:.4}"),
            (Some(m), None) => format!("{m:.4}"),
            _ => "–".into(),
        },
        None => "–".into(),
    }
}

/// Milliseconds, "–" when undefined.
pub fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{x:.2} ms"))
}
