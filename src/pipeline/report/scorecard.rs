//! How every renderer shows the scorecard (`report.scorecard`, docs/scorecard.md): one line
//! (terminal, report.md, the comment and the job summary), the rows of its table and the
//! radar chart of report.html. Numbers and the fixed dimension names only; a dimension's note
//! (which may name a detector) is escaped by the format that shows it.

use super::model::Report;
use crate::pipeline::score::scorecard::{Dimension, Scorecard};
use minijinja::HtmlEscape;
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
fn score(d: &Dimension) -> String {
    match d.score {
        Some(s) => format!("{}/{}", points(s), points(d.max)),
        None => "not measured".to_string(),
    }
}

/// `discovery 21/30`, or `transparency not measured`.
fn dimension(d: &Dimension) -> String {
    format!("{} {}", d.name, score(d))
}

/// The one line: `Scorecard 72/100 (Δ +3 vs baseline) · discovery 21/30 · … · informational,
/// not gated`. The Δ is "—" when the baseline has no scorecard (one written before evalgate had
/// it, or of another system); there is none without a baseline. `None` without a scorecard.
pub fn line(r: &Report) -> Option<String> {
    let sc = r.scorecard.as_ref()?;
    let mut o = match sc.total {
        Some(t) => format!("Scorecard {}/100", points(t)),
        None => "Scorecard not measured".to_string(),
    };
    if r.gate.baseline.is_some() {
        let _ = write!(o, " (Δ {} vs baseline)", delta(sc.delta()));
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

/// One row of the scorecard's table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScoreRow {
    pub name: String,
    /// `21.3/30` or `not measured`.
    pub points: String,
    pub delta: String,
    /// How the points came about (unescaped: the format escapes it).
    pub note: String,
}

/// The table's rows, in the rubric's order.
pub fn rows(sc: &Scorecard) -> Vec<ScoreRow> {
    sc.dimensions
        .iter()
        .map(|d| ScoreRow {
            name: d.name.clone(),
            points: score(d),
            delta: delta(sc.dimension_delta(&d.name)),
            note: d.note.clone(),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The radar chart

const W: f64 = 440.0;
const H: f64 = 310.0;
const CX: f64 = 220.0;
const CY: f64 = 170.0;
const R: f64 = 105.0;
/// Where a dimension's label sits, from the centre.
const LABEL_R: f64 = 122.0;

/// A coordinate: one decimal, no trailing `.0` (a value that is not finite is 0).
pub fn coord(x: f64) -> String {
    points(if x.is_finite() { x } else { 0.0 })
}

/// The point at `fraction` of the radius on axis `i` of `n` (axis 0 points up, then clockwise).
fn at(i: usize, n: usize, fraction: f64) -> (f64, f64) {
    let a = -std::f64::consts::FRAC_PI_2 + std::f64::consts::TAU * i as f64 / n as f64;
    (CX + R * fraction * a.cos(), CY + R * fraction * a.sin())
}

/// A polygon through the dimensions that have a value (a dimension not measured is skipped,
/// never drawn as 0); `None` with fewer than 2 such points.
fn polygon(values: &[Option<f64>], class: &str) -> Option<String> {
    let n = values.len();
    let pts: Vec<String> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            v.map(|f| {
                let (x, y) = at(i, n, f.clamp(0.0, 1.0));
                format!("{},{}", coord(x), coord(y))
            })
        })
        .collect();
    (pts.len() >= 2).then(|| format!(r#"<polygon class="{class}" points="{}"/>"#, pts.join(" ")))
}

/// The scorecard as an inline SVG radar chart: a fixed drawing (`viewBox`) that scales down
/// with the page, the five axes with their points, the run's shape filled, the baseline's
/// dashed. Labels are the fixed dimension names and numbers; no script, nothing external.
pub fn radar_svg(sc: &Scorecard) -> String {
    let n = sc.dimensions.len();
    let mut s = String::new();
    let label = match sc.total {
        Some(t) => format!(
            "Scorecard radar chart: {}/100 in five dimensions",
            points(t)
        ),
        None => "Scorecard radar chart: no dimension measured".to_string(),
    };
    let desc: Vec<String> = sc.dimensions.iter().map(dimension).collect();
    let _ = write!(
        s,
        r#"<svg class="chart radar" data-chart="radar" xmlns="http://www.w3.org/2000/svg" role="img" width="{w}" height="{h}" viewBox="0 0 {w} {h}" aria-label="{label}"><title>{label}</title><desc>{desc}</desc>"#,
        w = coord(W),
        h = coord(H),
        label = HtmlEscape(&label),
        desc = HtmlEscape(&desc.join("; ")),
    );
    // rings at 25, 50, 75 and 100 %
    for ring in [0.25, 0.5, 0.75, 1.0] {
        s.push_str(&polygon(&vec![Some(ring); n], "grid").unwrap_or_default());
    }
    for (i, d) in sc.dimensions.iter().enumerate() {
        let mute = if d.score.is_none() { " unmeasured" } else { "" };
        let (x, y) = at(i, n, 1.0);
        let (x0, y0, x, y) = (coord(CX), coord(CY), coord(x), coord(y));
        let _ = write!(
            s,
            r#"<line class="axis{mute}" x1="{x0}" y1="{y0}" x2="{x}" y2="{y}"/>"#
        );
    }
    let frac = |d: &Dimension, v: Option<f64>| v.map(|v| v / d.max);
    if let Some(b) = &sc.baseline {
        let values: Vec<Option<f64>> = sc
            .dimensions
            .iter()
            .map(|d| frac(d, b.dimensions.get(&d.name).copied().flatten()))
            .collect();
        s.push_str(&polygon(&values, "base-shape").unwrap_or_default());
    }
    let values: Vec<Option<f64>> = sc.dimensions.iter().map(|d| frac(d, d.score)).collect();
    s.push_str(&polygon(&values, "shape").unwrap_or_default());
    for (i, v) in values.iter().enumerate() {
        if let Some(f) = v {
            let (x, y) = at(i, n, f.clamp(0.0, 1.0));
            let (x, y) = (coord(x), coord(y));
            let _ = write!(s, r#"<circle class="vertex" cx="{x}" cy="{y}" r="3.5"/>"#);
        }
    }
    for (i, d) in sc.dimensions.iter().enumerate() {
        let a = -std::f64::consts::FRAC_PI_2 + std::f64::consts::TAU * i as f64 / n as f64;
        let (x, y) = (CX + LABEL_R * a.cos(), CY + LABEL_R * a.sin());
        let anchor = if a.cos().abs() < 0.2 {
            "middle"
        } else if a.cos() > 0.0 {
            "start"
        } else {
            "end"
        };
        // the name above the points at the top, beside them elsewhere
        let y0 = if a.sin() < -0.9 {
            y - 20.0
        } else if a.sin() > 0.5 {
            y + 6.0
        } else {
            y - 4.0
        };
        let mut name = d.name.clone();
        if let Some(f) = name.get_mut(0..1) {
            f.make_ascii_uppercase();
        }
        let value = score(d);
        let _ = write!(
            s,
            r#"<g class="dim" data-dimension="{name_attr}"><text class="label" x="{x}" y="{y0}" text-anchor="{anchor}">{name}</text><text class="value{mute}" x="{x}" y="{y1}" text-anchor="{anchor}">{value}</text></g>"#,
            name_attr = HtmlEscape(&d.name),
            x = coord(x),
            y0 = coord(y0),
            y1 = coord(y0 + 17.0),
            name = HtmlEscape(&name),
            mute = if d.score.is_none() { " unmeasured" } else { "" },
            value = HtmlEscape(&value),
        );
    }
    let _ = write!(
        s,
        r#"<text class="total" x="{}" y="{}" text-anchor="middle">{}</text>"#,
        coord(W - 6.0),
        coord(H - 6.0),
        HtmlEscape(&match sc.total {
            Some(t) => format!("{}/100", points(t)),
            None => "not measured".into(),
        })
    );
    s.push_str("</svg>");
    s
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
        r.gate.baseline = None;
        assert!(!line(&r).unwrap().contains("Δ"));
        r.scorecard = None;
        assert_eq!(line(&r), None);
        assert_eq!(delta(Some(-1.54)), "\u{2212}1.5");
    }

    #[test]
    fn the_radar_draws_five_axes_and_skips_what_was_not_measured() {
        let r = report();
        let svg = radar_svg(r.scorecard.as_ref().unwrap());
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("viewBox=\"0 0 440 310\""));
        assert_eq!(svg.matches("<line class=\"axis").count(), 5);
        assert_eq!(svg.matches("axis unmeasured").count(), 1, "{svg}");
        // measured dimensions have a vertex each; transparency has none
        assert_eq!(svg.matches("class=\"vertex\"").count(), 4);
        assert!(svg.contains(">not measured<"));
        assert!(!svg.contains("<script") && !svg.contains("href"));
    }
}
