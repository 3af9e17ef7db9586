//! mcp-eval's baseline format (mcpproxy commits it as `baseline_v1.json`), read as an evalgate
//! baseline: retrieval metrics at the top level (`recall_at{"1","3","5","10"}`, `mrr`,
//! `ndcg_at_10`, `map`), `tolerance{metric: value}` for the gated ones, and
//! `security.per_detector[]` with one `security.gate{fpr_ceiling, recall_floor}` for every
//! detector. Its gate — fail when Recall@5 falls below the value minus its tolerance, or a
//! detector's FPR rises above the ceiling or its recall below the floor — is exactly the
//! evalgate gate of the mapped baseline.

use super::{
    BASELINE_SCHEMA_VERSION, Baseline, DEFAULT_TOLERANCE, DatasetPin, DetectorBaseline,
    RetrievalBaseline, SecurityBaseline,
};
use crate::pipeline::score::metrics::{Metric, RETRIEVAL_METRICS};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct McpEval {
    corpus_version: Option<String>,
    recall_at: BTreeMap<String, f64>,
    mrr: Option<f64>,
    ndcg_at_10: Option<f64>,
    map: Option<f64>,
    #[serde(default)]
    tolerance: BTreeMap<String, f64>,
    runs_averaged: Option<usize>,
    generated_from: Option<Value>,
    security: Option<McpEvalSecurity>,
}

#[derive(Deserialize)]
struct McpEvalSecurity {
    corpus_version: Option<String>,
    #[serde(default)]
    per_detector: Vec<McpEvalDetector>,
    gate: Option<McpEvalGate>,
}

#[derive(Deserialize)]
struct McpEvalDetector {
    detector: String,
    precision: Option<f64>,
    recall: Option<f64>,
    f1: Option<f64>,
    fpr: Option<f64>,
}

#[derive(Deserialize)]
struct McpEvalGate {
    fpr_ceiling: Option<f64>,
    recall_floor: Option<f64>,
}

/// The evalgate baseline of an mcp-eval one, and a note of what was mapped.
pub fn import(name: &str, doc: Value) -> anyhow::Result<(Baseline, String)> {
    let m: McpEval = serde_path_to_error::deserialize(doc).map_err(|e| {
        let path = super::dollar_path(&e.path().to_string());
        anyhow::anyhow!(
            "{name}: at {path}: {} (reading mcp-eval's baseline format)",
            super::without_position(&e.into_inner().to_string())
        )
    })?;
    let tolerance = &m.tolerance;
    let entry = |metric: Metric, v: f64| {
        let t = tolerance.get(metric.key());
        super::metric(
            metric,
            Some(v),
            *t.unwrap_or(&DEFAULT_TOLERANCE),
            t.is_some(),
        )
    };
    let mut metrics = BTreeMap::new();
    for (k, v) in &m.recall_at {
        let Some(metric) =
            Metric::from_key(&format!("recall_at_{k}")).filter(|m| RETRIEVAL_METRICS.contains(m))
        else {
            anyhow::bail!(
                "{name}: at $.recall_at.{k}: expected a cut-off of 1, 3, 5 or 10, found {k:?}"
            );
        };
        metrics.extend([entry(metric, *v)]);
    }
    let others = [
        (Metric::Mrr, m.mrr),
        (Metric::NdcgAt10, m.ndcg_at_10),
        (Metric::Map, m.map),
    ];
    for (metric, v) in others {
        metrics.extend(v.map(|v| entry(metric, v)));
    }
    if let Some(k) = tolerance.keys().find(|k| !metrics.contains_key(*k)) {
        anyhow::bail!(
            "{name}: at $.tolerance.{k}: a tolerance for a metric the baseline has no value for; expected one of {}",
            metrics.keys().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let mut gated: Vec<&str> = tolerance.keys().map(String::as_str).collect();
    let retrieval = RetrievalBaseline {
        retriever: m
            .generated_from
            .as_ref()
            .and_then(|g| g.get("harness"))
            .and_then(Value::as_str)
            .unwrap_or("mcp-eval")
            .to_string(),
        runs: m.runs_averaged.unwrap_or(1),
        metrics,
        ..RetrievalBaseline::default()
    };
    let gate = m.security.as_ref().and_then(|s| s.gate.as_ref());
    let detector = |d: &McpEvalDetector| {
        let values = [
            (Metric::Precision, d.precision),
            (Metric::Recall, d.recall),
            (Metric::F1, d.f1),
            (Metric::Fpr, d.fpr),
        ];
        // all four are detection metrics (mcp-eval keeps no hard-negative FPR)
        let metrics = values
            .into_iter()
            .map(|(k, value)| super::metric(k, value, 0.05, false))
            .collect();
        let b = DetectorBaseline {
            fpr_ceiling: gate.and_then(|g| g.fpr_ceiling),
            recall_floor: gate.and_then(|g| g.recall_floor),
            metrics,
            verdicts: None,
        };
        (d.detector.clone(), b)
    };
    let security = m.security.as_ref().map(|s| SecurityBaseline {
        detectors: s.per_detector.iter().map(detector).collect(),
    });
    // mcp-eval pins versions, not contents: an empty digest means "compare the version"
    let pin = |v: &String| DatasetPin {
        version: Some(v.clone()),
        sha256: String::new(),
    };
    let security_version = m.security.as_ref().and_then(|s| s.corpus_version.as_ref());
    let datasets = [
        ("corpus", m.corpus_version.as_ref()),
        ("security", security_version),
    ]
    .into_iter()
    .filter_map(|(kind, v)| Some((kind.to_string(), pin(v?))))
    .collect();
    if gated.is_empty() {
        gated.push("none");
    }
    let detectors = security.as_ref().map_or(0, |s| s.detectors.len());
    let note = format!(
        "imported from mcp-eval's baseline format ({name}): {} retrieval metric(s), gated: {}; {detectors} detector(s){}; the corpus and the security corpus are pinned by version only (mcp-eval records no digest), the golden set is not pinned (mcp-eval's golden files carry no version)",
        retrieval.metrics.len(),
        gated.join(", "),
        match gate {
            Some(g) => format!(
                " with FPR ceiling {} and recall floor {} each",
                g.fpr_ceiling.map_or("none".into(), |v| v.to_string()),
                g.recall_floor.map_or("none".into(), |v| v.to_string())
            ),
            None => String::new(),
        }
    );
    let b = Baseline {
        schema_version: BASELINE_SCHEMA_VERSION,
        note: Some(note.clone()),
        datasets,
        retrieval: Some(retrieval),
        security,
        scorecard: None,
    };
    Ok((b, note))
}
