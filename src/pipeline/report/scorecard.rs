//! How every renderer shows the scorecard (`report.scorecard`, docs/scorecard.md): one line
//! (terminal, report.md, the comment and the job summary) and the cells of report.html's table
//! (which draws its radar chart in `html::charts`). Numbers and the fixed dimension names only; a
//! dimension's note (which may name a detector) is escaped by the format that shows it.

use super::model::Report;
use crate::pipeline::score::scorecard::Dimension;
use std::fmt::Write as _;

/// Points: one decimal, no trailing `.0`.
pub fn points(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// A Δ in points with a real minus sign (`+3`, `−1.5`, `0`), "—" when there is none.
pub fn delta(d: Option<f64>) -> String {
    match d {
        None => "—".to_string(),
        Some(x) if x.abs() < 0.05 => "0".to_string(),
        Some(x) if x < 0.0 => format!("\u{2212}{}", points(-x)),
        Some(x) => format!("+{}", points(x)),
    }
}

/// A dimension's points: `21/30`, or `not measured`.
pub fn score(d: &Dimension) -> String {
    match d.score {
        Some(s) => format!("{}/{}", points(s), points(d.max)),
        None => "not measured".to_string(),
    }
}

/// `discovery 21/30`, or `transparency not measured`.
pub fn dimension(d: &Dimension) -> String {
    format!("{} {}", d.name, score(d))
}

/// The one line: `Scorecard 72/100 (Δ +3 vs baseline) · discovery 21/30 · … · informational,
/// not gated`, with `on discovery, security, performance: the dimensions both measured` inside the
/// brackets when the baseline measured other dimensions. The Δ is "—" when the baseline has no
/// scorecard (one written before evalgate had it, or of another system); there is none without
/// a baseline. `None` without a scorecard.
pub fn line(r: &Report) -> Option<String> {
    let sc = r.scorecard.as_ref()?;
    let mut o = match sc.total {
        Some(t) => format!("Scorecard {}/100", points(t)),
        None => "Scorecard not measured".to_string(),
    };
    if r.gate.baseline.is_some() {
        let _ = write!(o, " (Δ {} vs baseline", delta(sc.delta()));
        if let Some(both) = sc.compared() {
            let names: Vec<&str> = both.iter().map(|d| d.name.as_str()).collect();
            let _ = write!(o, " on {}: the dimensions both measured", names.join(", "));
        }
        o.push(')');
    }
    for d in &sc.dimensions {
        let _ = write!(o, " · {}", dimension(d));
    }
    if sc.measured_weight > 0.0 && sc.measured_weight < 100.0 {
        let _ = write!(
            o,
            " · total over the {} points measured",
            points(sc.measured_weight)
        );
    }
    o.push_str(" · informational, not gated");
    Some(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::score::scorecard::{Inputs, scorecard};

    fn report() -> Report {
        let mut r = super::super::model::fixture();
        r.failure = None;
        r.scorecard = Some(scorecard(&Inputs {
            retrieval: r.retrieval.as_ref(),
            security: r.security.as_ref(),
            robustness: r.robustness.as_ref(),
            failure: r.failure.as_ref(),
            corpus_tools: Some(3),
        }));
        r
    }

    #[test]
    fn the_line_names_every_dimension_and_the_delta() {
        let mut r = report();
        r.gate.baseline = Some("b.json".into());
        let l = line(&r).unwrap();
        assert!(l.starts_with("Scorecard "), "{l}");
        assert!(l.contains("(Δ — vs baseline)"), "{l}");
        for d in [
            "discovery 15/30",
            "security 0/20",
            "transparency not measured",
        ] {
            assert!(l.contains(d), "{d}: {l}");
        }
        let sc = r.scorecard.as_mut().unwrap();
        let mut b = sc.to_baseline();
        b.total = sc.total.map(|t| t - 3.0);
        sc.against(Some(&b));
        assert!(line(&r).unwrap().contains("(Δ +3 vs baseline)"));
        // a baseline without security points: Δ = 100 × 3 / 70 over the other three measured
        let sc = r.scorecard.as_mut().unwrap();
        let mut b = sc.to_baseline();
        b.dimensions.insert("security".into(), None);
        b.dimensions.insert("discovery".into(), Some(12.0));
        sc.against(Some(&b));
        let l = line(&r).unwrap();
        assert!(
            l.contains(
                "(Δ +4.3 vs baseline on discovery, robustness, performance: the dimensions both measured)"
            ),
            "{l}"
        );
        r.gate.baseline = None;
        assert!(!line(&r).unwrap().contains("Δ"));
        r.scorecard = None;
        assert_eq!(line(&r), None);
        assert_eq!(delta(Some(-1.54)), "\u{2212}1.5");
    }
}
