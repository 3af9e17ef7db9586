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

/// One line comparing the golden-set splits on the headline metrics, e.g.
/// `Splits: dev (448 queries) Recall@5 0.61 · MRR 0.45 | held_out (112) ...`; `None` without splits.
pub fn splits_line(
    splits: &std::collections::BTreeMap<String, crate::reporting::model::SplitSummary>,
) -> Option<String> {
    if splits.is_empty() {
        return None;
    }
    let parts: Vec<String> = splits
        .iter()
        .map(|(name, s)| {
            let m = |k: &str| num(s.metrics.get(k).copied());
            format!(
                "{name} ({} queries) Recall@5 {} · MRR {} · nDCG@10 {}",
                s.queries,
                m("recall_at_5"),
                m("mrr"),
                m("ndcg_at_10")
            )
        })
        .collect();
    Some(format!("Splits: {}", parts.join(" | ")))
}
