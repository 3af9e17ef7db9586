//! `report.html`: one self-contained page (no scripts, no network: a CSP forbids both).
//! minijinja auto-escapes every value because the template name ends in `.html`; the `clip`
//! filter also makes invisible characters visible and caps lengths.

use super::format;
use super::model::Report;
use super::sanitize;
use crate::metrics::{DETECTION_METRICS, RETRIEVAL_METRICS};
use minijinja::{Environment, Value, context};
use std::collections::BTreeMap;

const TEMPLATE: &str = include_str!("templates/report.html");

fn opt(v: &Value) -> Option<f64> {
    if v.is_none() || v.is_undefined() {
        None
    } else {
        f64::try_from(v.clone()).ok()
    }
}

fn summary(v: &Value) -> Option<crate::stats::Summary> {
    if v.is_none() || v.is_undefined() {
        return None;
    }
    serde_json::to_value(v)
        .ok()
        .and_then(|j| serde_json::from_value(j).ok())
}

pub fn render(r: &Report) -> anyhow::Result<String> {
    let mut env = Environment::new();
    env.add_filter("num", |v: Value| format::num(opt(&v)));
    env.add_filter("delta", |v: Value| format::delta(opt(&v)));
    env.add_filter("pct", |v: Value| {
        format!("{:.1}", (opt(&v).unwrap_or(0.0) * 100.0).clamp(0.0, 100.0))
    });
    env.add_filter("meanci", |v: Value| format::mean_ci(summary(&v).as_ref()));
    env.add_filter("clip", |v: Value, n: usize| {
        let s = v
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string());
        sanitize::clip(&sanitize::visible(&s), n)
    });
    env.add_template("report.html", TEMPLATE)?;
    let labels: BTreeMap<&str, &str> = RETRIEVAL_METRICS
        .iter()
        .chain(DETECTION_METRICS.iter())
        .copied()
        .collect();
    let failure_text = r.failure.as_ref().map(|f| f.to_string());
    let html = env.get_template("report.html")?.render(context! {
        r => Value::from(minijinja::value::Serde(r)),
        labels => labels,
        failure_text => failure_text,
    })?;
    Ok(html)
}
