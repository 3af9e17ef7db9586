//! The gate's words: a failed check as a sentence, signed numbers, p-values. Pure text;
//! the renderers use the same functions.

use super::model::{Check, CheckKind, PairedComparison};
use crate::pipeline::score::metrics::label;

/// A signed number with a real minus sign ("−0.151", "+0.020"); "0" with no sign for a value
/// that rounds to zero.
pub fn signed(v: f64, decimals: usize) -> String {
    let s = format!("{:.*}", decimals, v.abs());
    if !s.chars().any(|ch| ('1'..='9').contains(&ch)) {
        "0".to_string()
    } else if v < 0.0 {
        format!("\u{2212}{s}")
    } else {
        format!("+{s}")
    }
}

/// A failed check as a reviewer reads it: "Recall@5 fell 0.5596 → 0.4091 (−0.151;
/// tolerance 0.020)", "rules FPR 0.1200 is above its ceiling 0.090".
pub fn sentence(c: &Check) -> String {
    // who it is about: nothing for retrieval, the detector's name otherwise
    let who = match c.subject.as_str() {
        "retrieval" => String::new(),
        s => format!("{} ", s.strip_prefix("detector:").unwrap_or(s)),
    };
    let name = format!("{who}{}", label(&c.metric));
    match (c.kind, c.current, c.baseline, c.limit) {
        (CheckKind::Tolerance, Some(cur), Some(base), Some(limit)) => {
            let verb = if (cur - base).abs() < super::EPS {
                "stayed at"
            } else if cur < base {
                "fell"
            } else {
                "rose"
            };
            format!(
                "{name} {verb} {base:.4} → {cur:.4} ({}; tolerance {:.3})",
                signed(cur - base, 3),
                (base - limit).abs()
            )
        }
        _ if c.subject == "robustness" => format!("robustness: {}", c.message),
        (CheckKind::Ceiling, Some(cur), _, Some(limit)) => {
            format!("{name} {cur:.4} is above its ceiling {limit:.3}")
        }
        (CheckKind::Floor, Some(cur), _, Some(limit)) => {
            format!("{name} {cur:.4} is below its floor {limit:.3}")
        }
        _ => format!("{name}: {}", c.message),
    }
}

/// A p-value as it is read: four decimals, "< 0.0001" below that.
pub fn p_value(p: f64) -> String {
    if p < 0.0001 {
        "< 0.0001".into()
    } else {
        format!("= {p:.4}")
    }
}

/// A paired comparison in words: "significant at α = 0.05 (p = 0.0020, Holm-adjusted 0.0060;
/// Δ 95 % CI −0.040 to −0.020; 12 of 40 queries worse, 3 better)".
pub fn significance(p: &PairedComparison, alpha: f64) -> String {
    let holm = p.p_holm.unwrap_or(p.p_value);
    let adjusted = if (holm - p.p_value).abs() > f64::EPSILON {
        format!(", Holm-adjusted {holm:.4}")
    } else {
        String::new()
    };
    let ci = p.delta_ci95.map_or_else(String::new, |[lo, hi]| {
        format!("; Δ 95 % CI {} to {}", signed(lo, 3), signed(hi, 3))
    });
    let significant = p.significant == Some(true);
    let not = if significant { "" } else { "not " };
    let (worse, queries, better) = (p.worse, p.queries, p.better);
    format!(
        "{not}significant at α = {alpha} (p {}{adjusted}{ci}; {worse} of {queries} queries worse, {better} better)",
        p_value(p.p_value)
    )
}
