//! `recorded`: replays observations from a file so a run can be re-scored offline.
//!
//! Accepted files:
//! - an evalgate `report.json` (its `retrieval.observations` / `security.observations`);
//! - a plain map, for retrieval `{"q001": ["server:tool", ...], ...}` (optionally under
//!   `"queries"`), for detection `{"tp-001": true, ...}` (optionally under `"entries"`);
//! - mcpproxy's spec-065 scan-eval output `{"detectors": [...], "entries": [{"id", "verdicts":
//!   [{"detector", "flagged"}]}]}`.
//!
//! Run `r` replays the report's run `r` (cycling when the report has fewer runs).

use super::{Detector, Ranked, Retriever, SearchRequest, SutError, Verdict};
use crate::dataset::{Category, Entry};
use crate::observe::{DetectorObservations, RetrievalObservations};
use anyhow::{Context, bail};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read recorded observations", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: expected JSON recorded observations", path.display()))
}

/// Replays recorded search results.
pub struct RecordedRetriever {
    name: String,
    /// Per run: query id → (ranked ids, latency ms).
    runs: Vec<HashMap<String, (Vec<String>, f64)>>,
}

impl RecordedRetriever {
    pub fn from_file(path: &Path) -> anyhow::Result<Self> {
        let v = read_json(path)?;
        Self::from_value(&v)
            .with_context(|| format!("{}: reading recorded retrieval results", path.display()))
    }

    pub fn from_value(v: &Value) -> anyhow::Result<Self> {
        if let Some(obs) = v.pointer("/retrieval/observations") {
            let obs: RetrievalObservations = serde_json::from_value(obs.clone())
                .context("at $.retrieval.observations: expected evalgate observations")?;
            let runs = obs
                .runs
                .into_iter()
                .map(|r| {
                    r.queries
                        .into_iter()
                        .map(|q| (q.id, (q.ranked, q.latency_ms)))
                        .collect()
                })
                .collect::<Vec<_>>();
            if runs.is_empty() {
                bail!("at $.retrieval.observations.runs: expected at least one run");
            }
            return Ok(RecordedRetriever {
                name: format!("recorded:{}", obs.system),
                runs,
            });
        }
        let map = v.get("queries").unwrap_or(v);
        let Some(obj) = map.as_object() else {
            bail!("expected an evalgate report or an object mapping query id -> array of tool ids");
        };
        let mut run = HashMap::new();
        for (id, ids) in obj {
            let list: Vec<String> = serde_json::from_value(ids.clone()).with_context(|| {
                format!("at {id:?}: expected an array of \"server:tool\" strings")
            })?;
            run.insert(id.clone(), (list, 0.0));
        }
        Ok(RecordedRetriever {
            name: "recorded".into(),
            runs: vec![run],
        })
    }
}

#[async_trait]
impl Retriever for RecordedRetriever {
    fn name(&self) -> &str {
        &self.name
    }
    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError> {
        let run = &self.runs[(req.run.max(1) - 1) % self.runs.len()];
        match run.get(req.query_id) {
            Some((ids, ms)) => Ok(Ranked {
                ids: ids.iter().take(req.limit).cloned().collect(),
                latency: Duration::from_secs_f64(ms / 1000.0),
            }),
            None => Err(SutError::Missing {
                system: self.name.clone(),
                item: format!("query {:?}", req.query_id),
                detail: "the recording has no result for it".into(),
            }),
        }
    }
}

/// Replays recorded detector verdicts.
pub struct RecordedDetector {
    name: String,
    scope: Option<Vec<Category>>,
    runs: Vec<HashMap<String, Verdict>>,
}

impl RecordedDetector {
    /// All detectors recorded in the file (a report or scan-eval file can hold several).
    pub fn from_file(path: &Path) -> anyhow::Result<Vec<Self>> {
        let v = read_json(path)?;
        Self::from_value(&v)
            .with_context(|| format!("{}: reading recorded detector verdicts", path.display()))
    }

    pub fn from_value(v: &Value) -> anyhow::Result<Vec<Self>> {
        if let Some(obs) = v.pointer("/security/observations") {
            let obs: Vec<DetectorObservations> = serde_json::from_value(obs.clone())
                .context("at $.security.observations: expected evalgate observations")?;
            return Ok(obs
                .into_iter()
                .map(|d| RecordedDetector {
                    name: d.detector,
                    scope: d.scope,
                    runs: d
                        .runs
                        .into_iter()
                        .map(|r| {
                            r.verdicts
                                .into_iter()
                                .map(|v| (v.entry_id.clone(), v))
                                .collect()
                        })
                        .collect(),
                })
                .collect());
        }
        if let (Some(dets), Some(Value::Array(entries))) = (
            v.get("detectors").and_then(Value::as_array),
            v.get("entries"),
        ) {
            // spec-065 scan-eval verdicts
            let mut out = Vec::new();
            for d in dets {
                let name = d
                    .as_str()
                    .context("at $.detectors: expected detector names (strings)")?
                    .to_string();
                let mut run = HashMap::new();
                for (i, e) in entries.iter().enumerate() {
                    let id = e
                        .get("id")
                        .and_then(Value::as_str)
                        .with_context(|| format!("at $.entries[{i}].id: expected a string"))?;
                    let verdict = e.get("verdicts").and_then(Value::as_array).and_then(|vs| {
                        vs.iter()
                            .find(|x| x.get("detector").and_then(Value::as_str) == Some(&name))
                    });
                    if let Some(vd) = verdict {
                        let flagged = vd.get("flagged").and_then(Value::as_bool).with_context(|| format!("at $.entries[{i}].verdicts: expected a boolean `flagged` for detector {name:?}"))?;
                        let signals = vd
                            .get("detections")
                            .and_then(Value::as_array)
                            .map(|ds| {
                                ds.iter()
                                    .filter_map(|d| {
                                        d.get("type").and_then(Value::as_str).map(String::from)
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        run.insert(
                            id.to_string(),
                            Verdict {
                                entry_id: id.to_string(),
                                flagged,
                                signals,
                                live: None,
                            },
                        );
                    }
                }
                out.push(RecordedDetector {
                    name,
                    scope: None,
                    runs: vec![run],
                });
            }
            return Ok(out);
        }
        let map = v.get("entries").unwrap_or(v);
        let Some(obj) = map.as_object() else {
            bail!(
                "expected an evalgate report, a spec-065 scan-eval file, or an object mapping entry id -> true/false"
            );
        };
        let mut run = HashMap::new();
        for (id, f) in obj {
            let flagged = f
                .as_bool()
                .with_context(|| format!("at {id:?}: expected true or false"))?;
            run.insert(
                id.clone(),
                Verdict {
                    entry_id: id.clone(),
                    flagged,
                    signals: vec![],
                    live: None,
                },
            );
        }
        Ok(vec![RecordedDetector {
            name: "recorded".into(),
            scope: None,
            runs: vec![run],
        }])
    }
}

#[async_trait]
impl Detector for RecordedDetector {
    fn name(&self) -> &str {
        &self.name
    }
    fn scope(&self) -> Option<Vec<Category>> {
        self.scope.clone()
    }
    async fn detect(&mut self, entries: &[Entry], run: usize) -> Result<Vec<Verdict>, SutError> {
        if self.runs.is_empty() {
            return Err(SutError::Missing {
                system: self.name.clone(),
                item: "any run".into(),
                detail: "the recording is empty".into(),
            });
        }
        let rec = &self.runs[(run.max(1) - 1) % self.runs.len()];
        entries
            .iter()
            .map(|e| {
                rec.get(&e.id).cloned().ok_or_else(|| SutError::Missing {
                    system: self.name.clone(),
                    item: format!("entry {:?}", e.id),
                    detail: "the recording has no verdict for it".into(),
                })
            })
            .collect()
    }
}
