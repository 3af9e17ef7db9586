//! The charts of `report.html`: inline SVG built from numbers (see the module above for what
//! may reach them). The per-query recall bars, the run spread of a subject's metrics, a
//! detector's confusion matrix and the scorecard's radar.

use super::super::doc::QueryChart;
use super::super::format;
use super::super::model::DetectorReport;
use super::super::scorecard::{dimension, points, score};
use super::super::view::Row;
use crate::infra::text::sanitize;
use crate::pipeline::score::metrics::Metric;
use crate::pipeline::score::scorecard::{Dimension, Scorecard};
use crate::pipeline::score::stats::Summary;
use minijinja::HtmlEscape;
use std::fmt::Write as _;

// ---------------------------------------------------------------------------------------------
// SVG helpers

/// Escapes a string for SVG text or an attribute value (the template's own escaper).
pub(super) fn esc(s: &str) -> String {
    HtmlEscape(s).to_string()
}

/// Dataset text for an SVG: invisible characters shown, clipped to `max` characters, escaped.
pub(super) fn data(s: &str, max: usize) -> String {
    esc(&sanitize::clip(&sanitize::visible(s), max))
}

/// A coordinate: one decimal, no trailing `.0` (a value that is not finite is 0).
fn n(x: f64) -> String {
    points(if x.is_finite() { x } else { 0.0 })
}

/// A horizontal position in a fluid chart: a percentage of the chart's width, two decimals.
fn pct(x: f64) -> String {
    let x = if x.is_finite() { x } else { 0.0 };
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

/// Opens an `<svg>` with its text alternative: `aria-label` and `<title>` carry `label`, `<desc>`
/// the longer `desc` (if any). `kind` names the chart (`data-chart`) for tests and styles.
///
/// With a width `w` the chart is a fixed drawing (a `viewBox`) that scales down in a narrow
/// page. Without one it is fluid: as wide as the page, `h` px high, no `viewBox`; it places
/// its marks at percentages of its width ([`pct`]) and its text at the page's own size, so a
/// phone gets a narrower chart with the same readable labels, not a shrunken picture.
fn open_svg(kind: &str, w: Option<f64>, h: f64, label: &str, desc: Option<&str>) -> String {
    let size = match w {
        Some(w) => format!(
            r#"width="{w}" height="{h}" viewBox="0 0 {w} {h}""#,
            w = n(w),
            h = n(h)
        ),
        None => format!(r#"width="100%" height="{h}""#, h = n(h)),
    };
    let mut s = format!(
        r#"<svg class="chart{fluid}" data-chart="{kind}" xmlns="http://www.w3.org/2000/svg" role="img" {size} aria-label="{label}"><title>{label}</title>"#,
        // (the radar is styled by its class)
        fluid = match w {
            None => " fluid",
            Some(_) if kind == "radar" => " radar",
            Some(_) => "",
        },
        kind = esc(kind),
        label = esc(label),
    );
    if let Some(desc) = desc {
        let _ = write!(s, "<desc>{}</desc>", esc(desc));
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Per-query recall

/// Left edge of the per-query plot, in % of the chart's width: room for the y axis's labels
/// (`0.75` at 11 px) in a chart as narrow as a phone's page.
const QUERY_LEFT: f64 = 8.0;
const QUERY_RIGHT: f64 = 99.0;
const QUERY_TOP: f64 = 14.0;
const QUERY_PLOT_H: f64 = 140.0;
/// Widest slot per query (% of the chart): a handful of queries are not drawn as slabs.
const QUERY_SLOT_MAX: f64 = 2.5;
/// One bar per query, in the document's order (best Recall@5 first) with Recall@10 behind it
/// (light); a red stub under the axis marks a query that found nothing in its top 5, an orange
/// dot a query the runs disagreed on; above `doc::QUERY_BARS_MAX` queries a histogram. A fluid
/// chart ([`open_svg`]).
pub(super) fn per_query_chart(qc: &QueryChart) -> String {
    let QueryChart {
        count,
        unstable,
        mean,
        full,
        partial,
        zero,
        ..
    } = *qc;
    let Some(qs) = &qc.sorted else {
        return recall_histogram(qc);
    };
    let slot = ((QUERY_RIGHT - QUERY_LEFT) / count as f64).min(QUERY_SLOT_MAX);
    // gaps between bars while they stay wider than ~3 px on a desktop page (~1300 px)
    let bar_w = if slot >= 0.25 { slot * 0.8 } else { slot };
    let right = QUERY_LEFT + slot * count as f64;
    let base = QUERY_TOP + QUERY_PLOT_H;
    let height = base + 30.0;
    let y = |v: f64| base - v.clamp(0.0, 1.0) * QUERY_PLOT_H;

    let label = format!(
        "Recall@5 of each of the {count} queries, sorted from best to worst: {full} found every relevant tool in the top 5, {partial} some, {zero} none; mean Recall@5 {}",
        format::num(mean)
    );
    let desc = format!(
        "Dark bars: Recall@5. Light bars behind them: Recall@10. Red marks under the axis: Recall@5 of 0. Orange dots: {unstable} queries whose runs disagreed. Each bar's title names its query."
    );
    let mut s = open_svg("per-query", None, height, &label, Some(&desc));
    // grid and y axis
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = write!(
            s,
            r#"<line class="grid" x1="{x0}" x2="{x1}" y1="{y}" y2="{y}"/><text class="tick" x="{x0}" dx="-5" y="{ty}" text-anchor="end">{t}</text>"#,
            x0 = pct(QUERY_LEFT),
            x1 = pct(right),
            y = n(y(t)),
            ty = n(y(t) + 4.0),
        );
    }
    for (i, q) in qs.iter().enumerate() {
        let x = QUERY_LEFT + i as f64 * slot + (slot - bar_w) / 2.0;
        let v5 = q.metrics.get(Metric::RecallAt5);
        let v10 = q.metrics.get(Metric::RecallAt10);
        let _ = write!(
            s,
            r#"<g class="q"><title>{id}: Recall@5 {a}, Recall@10 {b}{u} · {text}</title>"#,
            id = data(&q.id, 40),
            a = format::num(v5),
            b = format::num(v10),
            u = if q.unstable { " (runs disagreed)" } else { "" },
            text = data(&q.query, 120),
        );
        for (class, v) in [("q10", v10), ("q5", v5)] {
            let v = v.unwrap_or(0.0).clamp(0.0, 1.0);
            if v > 0.0 {
                let _ = write!(
                    s,
                    r#"<rect class="{class}" x="{x}" y="{y}" width="{w}" height="{h}"/>"#,
                    x = pct(x),
                    y = n(y(v)),
                    w = pct(bar_w),
                    h = n(v * QUERY_PLOT_H),
                );
            }
        }
        if v5.unwrap_or(0.0) <= 1e-9 {
            let _ = write!(
                s,
                r#"<rect class="q0" x="{x}" y="{y}" width="{w}" height="5"/>"#,
                x = pct(x),
                y = n(base + 2.0),
                w = pct(bar_w),
            );
        }
        if q.unstable {
            let _ = write!(
                s,
                r#"<circle class="qu" cx="{cx}" cy="{cy}" r="3"/>"#,
                cx = pct(x + bar_w / 2.0),
                cy = n(QUERY_TOP - 6.0),
            );
        }
        s.push_str("</g>");
    }
    if let Some(m) = mean {
        let _ = write!(
            s,
            r#"<line class="mean" x1="{x0}" x2="{x1}" y1="{y}" y2="{y}"/><text class="tick" x="{x1}" dx="-2" y="{ty}" text-anchor="end">mean Recall@5 {m}</text>"#,
            x0 = pct(QUERY_LEFT),
            x1 = pct(right),
            y = n(y(m)),
            ty = n(y(m) - 4.0),
            m = format::num(Some(m)),
        );
    }
    let _ = write!(
        s,
        r#"<text class="axis" x="{x}" y="{y}">{count} queries, best to worst</text></svg>"#,
        x = pct(QUERY_LEFT),
        y = n(base + 24.0),
    );
    s
}

/// Recall@5 of many queries as the document's ten bins; the bar's height is its share of the
/// queries, its title the count.
fn recall_histogram(qc: &QueryChart) -> String {
    let QueryChart {
        count,
        unstable,
        mean,
        bins,
        ..
    } = *qc;
    let most = bins.iter().copied().max().unwrap_or(0).max(1);
    let base = QUERY_TOP + QUERY_PLOT_H;
    let label = format!(
        "Recall@5 of the {count} queries as a histogram of ten bins of 0.1; mean Recall@5 {}",
        format::num(mean)
    );
    let desc = format!(
        "Bar height: the number of queries whose Recall@5 falls in the bin, relative to the fullest bin. {unstable} queries' runs disagreed. Every query is in report.json."
    );
    let mut s = open_svg("per-query", None, base + 30.0, &label, Some(&desc));
    let slot = (QUERY_RIGHT - QUERY_LEFT) / bins.len() as f64;
    for (i, &k) in bins.iter().enumerate() {
        let x = QUERY_LEFT + i as f64 * slot;
        let h = k as f64 / most as f64 * QUERY_PLOT_H;
        let (lo, hi) = (i as f64 / 10.0, (i + 1) as f64 / 10.0);
        let _ = write!(
            s,
            r#"<g class="q"><title>Recall@5 {lo:.1}–{hi:.1}: {k} queries</title><rect class="q5" x="{x}" y="{y}" width="{w}" height="{h}"/><text class="tick" x="{tx}" y="{ty}" text-anchor="middle">{lo:.1}–{hi:.1}</text></g>"#,
            x = pct(x + slot * 0.1),
            y = n(base - h),
            w = pct(slot * 0.8),
            h = n(h),
            tx = pct(x + slot / 2.0),
            ty = n(base + 14.0),
        );
    }
    let _ = write!(
        s,
        r#"<text class="axis" x="{x}" y="{y}">{count} queries by Recall@5</text></svg>"#,
        x = pct(QUERY_LEFT),
        y = n(base + 28.0),
    );
    s
}

// ---------------------------------------------------------------------------------------------
// Run spread

/// A vertical tick across a spread chart's row centred on `yc`, at `x` % of the width, titled
/// `label: what value` (`label` escaped already).
fn tick(s: &mut String, class: &str, x: f64, yc: f64, label: &str, what: &str, v: f64) {
    let _ = write!(
        s,
        r#"<line class="{class}" x1="{x}" x2="{x}" y1="{y0}" y2="{y1}"><title>{label}: {what} {v}</title></line>"#,
        x = pct(x),
        y0 = n(yc - 12.0),
        y1 = n(yc + 12.0),
        v = format::num(Some(v)),
    );
}

/// The spread chart's axis runs from `SPREAD_X0` % to `SPREAD_X1` % of its width (the margins
/// hold the end ticks' labels and a dot on the axis's ends).
const SPREAD_X0: f64 = 3.0;
const SPREAD_X1: f64 = 97.0;
const SPREAD_TOP: f64 = 4.0;
/// One metric: its label and value on a line, its track under them.
const SPREAD_ROW: f64 = 46.0;
/// The track's height under the top of its row.
const SPREAD_TRACK: f64 = 31.0;

/// Each metric's per-run values as dots, the mean as a bar, the 95 % CI as a band, the baseline as
/// a diamond and the gate's limit as a red tick, on one shared axis (0.1 steps covering every
/// value); each metric's name and mean ± CI above its track. A fluid chart ([`open_svg`]).
/// `runs` is the number of complete runs (each metric has a dot per run). The rows measured are
/// drawn; `None` without any.
pub(super) fn spread_chart(kind: &str, what: &str, runs: usize, rows: &[Row]) -> Option<String> {
    let rows: Vec<(&Row, &Summary)> = rows
        .iter()
        .filter_map(|r| Some((r, r.current.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (r, s) in &rows {
        let values = s.per_run.iter().flatten().chain(s.ci95.iter().flatten());
        for &v in values.chain(&r.chart_baseline).chain(&r.chart_limit) {
            if v.is_finite() {
                (lo, hi) = (lo.min(v), hi.max(v));
            }
        }
    }
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    lo = ((lo * 10.0 + 1e-9).floor() / 10.0).clamp(0.0, 1.0);
    hi = ((hi * 10.0 - 1e-9).ceil() / 10.0).clamp(0.0, 1.0);
    if hi - lo < 0.2 - 1e-9 {
        if hi + 0.1 <= 1.0 + 1e-9 {
            hi = (hi + 0.1).min(1.0);
        }
        if hi - lo < 0.2 - 1e-9 {
            lo = (hi - 0.2).max(0.0);
        }
    }
    let x = |v: f64| SPREAD_X0 + (v.clamp(lo, hi) - lo) / (hi - lo) * (SPREAD_X1 - SPREAD_X0);
    let axis_y = SPREAD_TOP + rows.len() as f64 * SPREAD_ROW;
    let height = axis_y + 48.0;
    let label = format!(
        "{what}, run spread over {runs} run{}: each run's value as a dot, the mean as a bar, the 95% confidence interval as a band; axis from {lo:.1} to {hi:.1}",
        if runs == 1 { "" } else { "s" }
    );
    let desc = rows
        .iter()
        .map(|(r, s)| {
            let vals: Vec<String> = s.per_run.iter().map(|&v| format::num(v)).collect();
            format!(
                "{}: mean {}, runs {}{}",
                r.label,
                format::mean_ci(Some(s)),
                vals.join(", "),
                r.chart_baseline
                    .map(|b| format!(", baseline {}", format::num(Some(b))))
                    .unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let mut s = open_svg(kind, None, height, &label, Some(&desc));
    // vertical grid every 0.1
    let steps = ((hi - lo) * 10.0).round() as usize;
    for i in 0..=steps {
        let t = lo + i as f64 / 10.0;
        let _ = write!(
            s,
            r#"<line class="grid" x1="{x}" x2="{x}" y1="{y0}" y2="{y1}"/><text class="tick" x="{x}" y="{ty}" text-anchor="middle">{t:.1}</text>"#,
            x = pct(x(t)),
            y0 = n(SPREAD_TOP + SPREAD_TRACK - 14.0),
            y1 = n(axis_y),
            ty = n(axis_y + 14.0),
        );
    }
    for (i, (r, summary)) in rows.iter().enumerate() {
        let top = SPREAD_TOP + i as f64 * SPREAD_ROW;
        let (yc, label) = (top + SPREAD_TRACK, esc(&r.label));
        let _ = write!(
            s,
            r#"<g class="metric"><text class="label" x="0" y="{ty}">{label}</text><text class="value" x="100%" y="{ty}" text-anchor="end">{t}</text><line class="track" x1="{x0}" x2="{x1}" y1="{yc}" y2="{yc}"/>"#,
            ty = n(top + 10.0),
            t = esc(&format::mean_ci(Some(*summary))),
            x0 = pct(SPREAD_X0),
            x1 = pct(SPREAD_X1),
            yc = n(yc),
        );
        if let Some([a, b]) = summary.ci95 {
            let _ = write!(
                s,
                r#"<rect class="ci" x="{x}" y="{y}" width="{w}" height="16"><title>{label}: 95% CI {a} to {b}</title></rect>"#,
                x = pct(x(a)),
                y = n(yc - 8.0),
                w = pct((x(b) - x(a)).max(0.0)),
                a = format::num(Some(a)),
                b = format::num(Some(b)),
            );
        }
        if let Some(l) = r.chart_limit {
            tick(&mut s, "limit", x(l), yc, &label, "gate limit", l);
        }
        if let Some(b) = r.chart_baseline {
            // a square at the baseline, turned into a diamond by the page's style
            let _ = write!(
                s,
                r#"<rect class="base" x="{x}" y="{y}" width="10" height="10"><title>{label}: baseline {b}</title></rect>"#,
                x = pct(x(b)),
                y = n(yc - 5.0),
                b = format::num(Some(b)),
            );
        }
        if let Some(m) = summary.mean {
            tick(&mut s, "mean", x(m), yc, &label, "mean", m);
        }
        let k = summary.per_run.len().max(1) as f64;
        let step = (16.0 / k).min(4.0);
        for (run, v) in summary.per_run.iter().enumerate() {
            let Some(v) = v else { continue };
            let _ = write!(
                s,
                r#"<circle class="run" cx="{cx}" cy="{cy}" r="4"><title>{label}, run {run}: {v}</title></circle>"#,
                cx = pct(x(*v)),
                cy = n(yc + (run as f64 - (k - 1.0) / 2.0) * step),
                run = run + 1,
                v = format::num(Some(*v)),
            );
        }
        s.push_str("</g>");
    }
    // the key, on two short lines (a phone's chart is ~370 px wide); it counts runs, not dots
    // (a dot per metric per run)
    let _ = write!(
        s,
        r#"<text class="axis" x="0" y="{y1}">dots: {runs} · bar: mean · band: 95% CI</text><text class="axis" x="0" y="{y2}">diamond: baseline · red tick: gate limit</text></svg>"#,
        runs = if runs == 1 {
            "the one run".to_string()
        } else {
            format!("each of the {runs} runs")
        },
        y1 = n(axis_y + 30.0),
        y2 = n(axis_y + 44.0),
    );
    Some(s)
}

// ---------------------------------------------------------------------------------------------
// Confusion matrix

/// A 2×2 heat grid: rows are the truth (malicious, benign), columns the verdict (flagged, not);
/// green cells are right, red cells wrong, and the shade is the share of the row.
pub(super) fn confusion_chart(d: &DetectorReport) -> String {
    let c = &d.counts;
    let label = format!(
        "Confusion matrix summed over {} run(s): {} true positives, {} false negatives, {} false positives, {} true negatives",
        d.runs_completed, c.tp, c.fn_, c.fp, c.tn
    );
    let mut s = open_svg("confusion", Some(360.0), 172.0, &label, None);
    s.push_str(r#"<text class="label" x="185" y="18" text-anchor="middle">flagged</text><text class="label" x="295" y="18" text-anchor="middle">not flagged</text><text class="label" x="120" y="66" text-anchor="end">malicious</text><text class="label" x="120" y="134" text-anchor="end">benign</text>"#);
    let malicious = c.tp + c.fn_;
    let benign = c.fp + c.tn;
    let cells = [
        ("TP", c.tp, malicious, true, 130.0, 30.0, "of malicious"),
        ("FN", c.fn_, malicious, false, 240.0, 30.0, "of malicious"),
        ("FP", c.fp, benign, false, 130.0, 98.0, "of benign"),
        ("TN", c.tn, benign, true, 240.0, 98.0, "of benign"),
    ];
    for (name, count, row, right, x, y, of) in cells {
        // (a row of 0 has a count of 0)
        let share = count as f64 / row.max(1) as f64;
        let opacity = 0.08 + 0.82 * share;
        let dark = opacity > 0.55;
        let _ = write!(
            s,
            r#"<g class="cell {kind}"><title>{name} {count}: {pct:.1}% {of}</title><rect x="{x}" y="{y}" width="106" height="64" rx="4" fill-opacity="{opacity:.2}"/><text class="{txt}" x="{tx}" y="{ty1}" text-anchor="middle">{name} {count}</text><text class="{txt} small" x="{tx}" y="{ty2}" text-anchor="middle">{pct:.1}% {of}</text></g>"#,
            kind = if right { "right" } else { "wrong" },
            x = n(x),
            y = n(y),
            tx = n(x + 53.0),
            ty1 = n(y + 28.0),
            ty2 = n(y + 46.0),
            txt = if dark { "on-dark" } else { "on-light" },
            pct = share * 100.0,
        );
    }
    s.push_str("</svg>");
    s
}

// ---------------------------------------------------------------------------------------------
// Scorecard radar

const W: f64 = 440.0;
const H: f64 = 310.0;
const CX: f64 = 220.0;
const CY: f64 = 170.0;
const R: f64 = 105.0;
/// Where a dimension's label sits, from the centre.
const LABEL_R: f64 = 122.0;

/// The angle of axis `i` of `dims` (axis 0 points up, then clockwise) and the point at `r` from
/// the centre on it.
fn at(i: usize, dims: usize, r: f64) -> (f64, f64, f64) {
    let a = -std::f64::consts::FRAC_PI_2 + std::f64::consts::TAU * i as f64 / dims as f64;
    (a, CX + r * a.cos(), CY + r * a.sin())
}

/// A polygon through the dimensions that have a value (a dimension not measured is skipped,
/// never drawn as 0); `None` with fewer than 2 such points.
fn polygon(values: &[Option<f64>], class: &str) -> Option<String> {
    let k = values.len();
    let pts: Vec<String> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            v.map(|f| {
                let (_, x, y) = at(i, k, R * f.clamp(0.0, 1.0));
                format!("{},{}", n(x), n(y))
            })
        })
        .collect();
    (pts.len() >= 2).then(|| format!(r#"<polygon class="{class}" points="{}"/>"#, pts.join(" ")))
}

/// The scorecard as an inline SVG radar chart: a fixed drawing (`viewBox`) that scales down
/// with the page, the five axes with their points, the run's shape filled, the baseline's
/// dashed. Labels are the fixed dimension names and numbers; no script, nothing external.
pub(super) fn radar_chart(sc: &Scorecard) -> String {
    let dims = sc.dimensions.len();
    let label = match sc.total {
        Some(t) => format!(
            "Scorecard radar chart: {}/100 in five dimensions",
            points(t)
        ),
        None => "Scorecard radar chart: no dimension measured".to_string(),
    };
    let desc: Vec<String> = sc.dimensions.iter().map(dimension).collect();
    let mut s = open_svg("radar", Some(W), H, &label, Some(&desc.join("; ")));
    // rings at 25, 50, 75 and 100 %
    for ring in [0.25, 0.5, 0.75, 1.0] {
        s.push_str(&polygon(&vec![Some(ring); dims], "grid").unwrap_or_default());
    }
    for (i, d) in sc.dimensions.iter().enumerate() {
        let mute = if d.score.is_none() { " unmeasured" } else { "" };
        let (_, x, y) = at(i, dims, R);
        let (x0, y0, x, y) = (n(CX), n(CY), n(x), n(y));
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
            let (_, x, y) = at(i, dims, R * f.clamp(0.0, 1.0));
            let (x, y) = (n(x), n(y));
            let _ = write!(s, r#"<circle class="vertex" cx="{x}" cy="{y}" r="3.5"/>"#);
        }
    }
    for (i, d) in sc.dimensions.iter().enumerate() {
        let (a, x, y) = at(i, dims, LABEL_R);
        let anchor = match a.cos() {
            c if c.abs() < 0.2 => "middle",
            c if c > 0.0 => "start",
            _ => "end",
        };
        // the name above the points at the top, beside them elsewhere
        let y0 = match a.sin() {
            up if up < -0.9 => y - 20.0,
            down if down > 0.5 => y + 6.0,
            _ => y - 4.0,
        };
        let mut name = d.name.clone();
        if let Some(f) = name.get_mut(0..1) {
            f.make_ascii_uppercase();
        }
        let value = score(d);
        let _ = write!(
            s,
            r#"<g class="dim" data-dimension="{name_attr}"><text class="label" x="{x}" y="{y0}" text-anchor="{anchor}">{name}</text><text class="value{mute}" x="{x}" y="{y1}" text-anchor="{anchor}">{value}</text></g>"#,
            name_attr = esc(&d.name),
            x = n(x),
            y0 = n(y0),
            y1 = n(y0 + 17.0),
            name = esc(&name),
            mute = if d.score.is_none() { " unmeasured" } else { "" },
            value = esc(&value),
        );
    }
    let _ = write!(
        s,
        r#"<text class="total" x="{}" y="{}" text-anchor="middle">{}</text>"#,
        n(W - 6.0),
        n(H - 6.0),
        esc(&match sc.total {
            Some(t) => format!("{}/100", points(t)),
            None => "not measured".into(),
        })
    );
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::super::Html;
    use super::*;
    use crate::pipeline::report::model::Report;
    use crate::pipeline::report::{Exporter, view::View};
    use crate::pipeline::score::metrics::RETRIEVAL_METRICS;

    /// A measured row of a spread chart with its baseline and limit marks.
    fn spread_row(label: &str, s: &Summary, baseline: Option<f64>, limit: Option<f64>) -> Row {
        Row {
            label: label.to_string(),
            baseline: None,
            current: Some(s.clone()),
            delta: None,
            limit: String::new(),
            mark: crate::pipeline::report::view::Mark::NotGated,
            paired: None,
            chart_baseline: baseline,
            chart_limit: limit,
        }
    }

    #[test]
    fn svg_text_is_escaped_and_visible() {
        let t = data("<script>x</script>\u{202E}\"'&", 100);
        assert_eq!(
            t,
            "&lt;script&gt;x&lt;&#x2f;script&gt;⟨U+202E⟩&quot;&#x27;&amp;"
        );
        assert_eq!(n(12.0), "12");
        assert_eq!(n(12.345), "12.3");
        assert_eq!(n(f64::NAN), "0");
    }

    #[test]
    fn spread_axis_covers_every_value_in_tenths() {
        let s = Summary::of(vec![Some(0.61), Some(0.63), None]);
        let rows = [spread_row("Recall@5", &s, Some(0.7), Some(0.68))];
        let svg = spread_chart("spread-retrieval", "Retrieval metrics", 3, &rows).unwrap();
        assert_eq!(svg.matches(r#"<circle class="run""#).count(), 2);
        assert!(svg.contains("axis from 0.4 to 0.8"), "{svg}");
        assert!(svg.contains("baseline 0.7000") && svg.contains("gate limit 0.6800"));
    }

    /// The spread charts' key and text alternative count runs; they said "dots: 21 run values"
    /// for 7 metrics × 3 runs.
    #[test]
    fn spread_chart_counts_runs_not_metrics_times_runs() {
        let s = Summary::of(vec![Some(0.5), Some(0.52), Some(0.51)]);
        let rows: Vec<Row> = RETRIEVAL_METRICS
            .iter()
            .map(|m| spread_row(m.label(), &s, None, None))
            .collect();
        assert_eq!(rows.len(), 7);
        let svg = spread_chart("spread-retrieval", "Retrieval metrics", 3, &rows).unwrap();
        assert_eq!(svg.matches(r#"<circle class="run""#).count(), 21);
        assert!(
            svg.contains(">dots: each of the 3 runs · bar: mean"),
            "{svg}"
        );
        assert!(svg.contains("run spread over 3 runs:"), "{svg}");
        assert!(!svg.contains("21 run"), "{svg}");
        let one = Summary::of(vec![Some(0.5)]);
        let rows = [spread_row("Recall@5", &one, None, None)];
        let svg = spread_chart("spread-retrieval", "Retrieval metrics", 1, &rows).unwrap();
        assert!(svg.contains(">dots: the one run · bar: mean"), "{svg}");
        assert!(svg.contains("run spread over 1 run:"), "{svg}");
    }

    /// Through the page: each spread chart counts its own runs (`runs_completed`: 2 in the
    /// fixture, with 7 retrieval and 5 detector metrics), never metrics × runs.
    #[test]
    fn report_spread_captions_count_runs() {
        let r: Report = serde_json::from_str(include_str!(
            "../../../../fuzz/fixtures/report_template.json"
        ))
        .unwrap();
        let rr = r.retrieval.as_ref().unwrap();
        assert_eq!((r.runs, rr.runs_completed, rr.metrics.len()), (2, 2, 7));
        let detectors = &r.security.as_ref().unwrap().detectors;
        let html = Html.render(&r, &View::of(&r)).unwrap();
        let keys: Vec<&str> = html
            .match_indices(">dots: ")
            .map(|(i, _)| html[i + 1..].split('<').next().unwrap())
            .collect();
        assert_eq!(keys.len(), 1 + detectors.len(), "{keys:?}");
        for k in &keys {
            assert!(k.starts_with("dots: each of the 2 runs · "), "{k}");
        }
        // in each chart's aria-label and <title>
        assert_eq!(
            html.matches("run spread over 2 runs:").count(),
            2 * (1 + detectors.len())
        );
        for bad in ["14 run", "10 run"] {
            assert!(!html.contains(bad), "{bad}");
        }
    }

    /// Fluid charts carry no `viewBox` (a phone's page would shrink their text with it) and
    /// place marks at percentages; the confusion matrix is a fixed drawing.
    #[test]
    fn charts_are_fluid_except_the_confusion_matrix() {
        let r: Report = serde_json::from_str(include_str!(
            "../../../../fuzz/fixtures/report_template.json"
        ))
        .unwrap();
        let html = Html.render(&r, &View::of(&r)).unwrap();
        let svgs: Vec<&str> = html
            .match_indices("<svg ")
            .map(|(i, _)| html[i..].split('>').next().unwrap())
            .collect();
        assert!(svgs.len() >= 4, "{svgs:?}");
        for svg in svgs {
            if svg.contains(r#"data-chart="confusion""#) {
                assert!(svg.contains(r#"viewBox="0 0 360 172""#), "{svg}");
            } else {
                assert!(svg.contains(r#"class="chart fluid""#), "{svg}");
                assert!(
                    svg.contains(r#"width="100%""#) && !svg.contains("viewBox"),
                    "{svg}"
                );
            }
        }
        assert_eq!(pct(12.345), "12.35%");
        assert_eq!(pct(50.0), "50%");
        assert_eq!(pct(f64::NAN), "0%");
    }

    #[test]
    fn the_radar_draws_five_axes_and_skips_what_was_not_measured() {
        let mut r = crate::pipeline::report::model::fixture();
        r.failure = None;
        let sc = crate::pipeline::score::scorecard::scorecard(
            &crate::pipeline::score::scorecard::Inputs {
                retrieval: r.retrieval.as_ref(),
                security: r.security.as_ref(),
                robustness: r.robustness.as_ref(),
                failure: r.failure.as_ref(),
                corpus_tools: Some(3),
            },
        );
        r.scorecard = Some(sc);
        let svg = radar_chart(r.scorecard.as_ref().unwrap());
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
