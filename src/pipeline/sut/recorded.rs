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

use super::{Decision, Detector, Facts, Ranked, Retriever, SearchRequest, SutError};
use crate::infra::files::{open, read_to_string};
use crate::infra::text::Text;
use crate::pipeline::dataset::{Category, Entry};
use crate::pipeline::sut::observe::{
    DetectorObservations, ObservationsFile, RetrievalObservations,
};
use anyhow::{Context, bail};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = read_to_string(path)
        .with_context(|| format!("{}: cannot read recorded observations", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: expected JSON recorded observations", path.display()))
}

/// The part `pick` takes of the observations of the evalgate report at `path` (its
/// `retrieval.observations` and `security.observations`; serde skips everything else as it
/// reads), or of the observations file beside it when the report names one; an error naming
/// `absent` when the report lacks that part. `None` when the file does not fit (another
/// format, or a broken report: the general reading follows, with its precise errors).
fn report_observations<T>(
    path: &Path,
    pick: fn(ObservationsFile) -> Option<T>,
    absent: &str,
) -> anyhow::Result<Option<T>> {
    #[derive(Deserialize)]
    struct Report {
        observations_file: Option<String>,
        retrieval: Option<Part<RetrievalObservations>>,
        security: Option<Part<Vec<DetectorObservations>>>,
    }
    #[derive(Deserialize)]
    struct Part<T> {
        observations: Option<T>,
    }
    let reader = open(path)
        .with_context(|| format!("{}: cannot read recorded observations", path.display()))?;
    let Ok(report) = serde_json::from_reader::<_, Report>(std::io::BufReader::new(reader)) else {
        return Ok(None);
    };
    let file = match report.observations_file {
        Some(name) => ObservationsFile::read_beside(path, &name)?,
        None => {
            let retrieval = report.retrieval.and_then(|p| p.observations);
            let security = report.security.and_then(|p| p.observations);
            // a run without its number, or observations without the system's name, do not fit
            let fits = match &retrieval {
                Some(o) => !o.system.is_empty() && o.runs.iter().all(|r| r.run != 0),
                None => security.is_some(),
            };
            if !fits {
                return Ok(None);
            }
            ObservationsFile {
                retrieval,
                security,
            }
        }
    };
    let part = pick(file);
    part.map(Some)
        .with_context(|| format!("{}: the report holds no {absent}", path.display()))
}

/// Replays recorded search results.
pub struct RecordedRetriever {
    facts: Facts,
    /// Per run: query id → (ranked ids, latency ms).
    runs: Vec<HashMap<Text, (Vec<Text>, f64)>>,
}

impl RecordedRetriever {
    pub fn from_file(path: &Path) -> anyhow::Result<Self> {
        let absent = "tool-discovery results (it measured security only)";
        let read = match report_observations(path, |f| f.retrieval, absent)? {
            Some(obs) => Self::from_observations(obs),
            None => Self::from_value(&read_json(path)?),
        };
        read.with_context(|| format!("{}: reading recorded retrieval results", path.display()))
    }

    fn from_observations(obs: RetrievalObservations) -> anyhow::Result<Self> {
        let max_ms = super::spec::MAX_SECONDS * 1000.0;
        for (i, r) in obs.runs.iter().enumerate() {
            for (j, q) in r.queries.iter().enumerate() {
                if !(q.latency_ms.is_finite() && (0.0..=max_ms).contains(&q.latency_ms)) {
                    bail!(
                        "at $.retrieval.observations.runs[{i}].queries[{j}].latency_ms: expected milliseconds between 0 and {max_ms}, found {}",
                        q.latency_ms
                    );
                }
            }
        }
        let runs = obs
            .runs
            .into_iter()
            .map(|r| {
                r.queries
                    .into_iter()
                    .map(|mut q| {
                        // decoded by doubling: up to twice the ids' room, for the whole run
                        q.ranked.shrink_to_fit();
                        (q.id, (q.ranked, q.latency_ms))
                    })
                    .collect()
            })
            .collect::<Vec<_>>();
        if runs.is_empty() {
            bail!("at $.retrieval.observations.runs: expected at least one run");
        }
        Ok(RecordedRetriever {
            facts: replaying(format!("recorded:{}", obs.system)),
            runs,
        })
    }

    pub fn from_value(v: &Value) -> anyhow::Result<Self> {
        if let Some(obs) = v.pointer("/retrieval/observations") {
            let obs = RetrievalObservations::deserialize(obs)
                .context("at $.retrieval.observations: expected evalgate observations")?;
            return Self::from_observations(obs);
        }
        let map = v.get("queries").unwrap_or(v);
        let Some(obj) = map.as_object() else {
            bail!("expected an evalgate report or an object mapping query id -> array of tool ids");
        };
        let mut run = HashMap::new();
        for (id, ids) in obj {
            let list: Vec<Text> = serde_json::from_value(ids.clone()).with_context(|| {
                format!("at {id:?}: expected an array of \"server:tool\" strings")
            })?;
            run.insert(id.as_str().into(), (list, 0.0));
        }
        Ok(RecordedRetriever {
            facts: replaying("recorded".into()),
            runs: vec![run],
        })
    }
}

/// A recording's facts: it replays the system its name gives after `recorded:`.
fn replaying(name: String) -> Facts {
    Facts {
        replays: Some(name.strip_prefix("recorded:").unwrap_or("").to_string()),
        ..Facts::named(name)
    }
}

#[async_trait]
impl Retriever for RecordedRetriever {
    fn facts(&self) -> &Facts {
        &self.facts
    }
    fn warnings(&self, asked: &HashSet<&str>) -> Vec<String> {
        let unknown: BTreeSet<&str> = self
            .runs
            .iter()
            .flat_map(|r| r.keys())
            .map(|id| id.as_str())
            .filter(|id| !asked.contains(id))
            .collect();
        if unknown.is_empty() {
            return Vec::new();
        }
        let shown: Vec<String> = unknown
            .iter()
            .take(10)
            .map(|id| format!("{id:?}"))
            .collect();
        let more = if unknown.len() > 10 { ", ..." } else { "" };
        vec![format!(
            "the recording has results for {} query id(s) the golden set does not have, ignored: {}{more} (a recording of another golden set?)",
            unknown.len(),
            shown.join(", "),
        )]
    }
    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError> {
        let run = &self.runs[(req.run.max(1) - 1) % self.runs.len()];
        match run.get(req.query_id) {
            Some((ids, ms)) => Ok(Ranked {
                ids: ids.iter().take(req.limit).cloned().collect(),
                latency: Duration::from_secs_f64(ms / 1000.0),
            }),
            None => Err(SutError::Missing {
                system: self.facts.name.clone(),
                item: format!("query {:?}", req.query_id),
                detail: "the recording has no result for it".into(),
            }),
        }
    }
}

/// `--detectors recorded`: every detector the recording holds.
pub const DETECTOR: super::kind::DetectorDef = super::kind::DetectorDef {
    name: "recorded",
    help: "Replay verdicts from --recorded (a report.json, a spec-065 scan-eval file or {entry id: bool})",
    live: false,
    build: |s, _| {
        let recs = RecordedDetector::from_file(need(&s.recorded)?)?;
        Ok(recs.into_iter().map(|r| Box::new(r) as _).collect())
    },
};

/// The `--recorded` file the `recorded` system and detector replay.
pub fn need(recorded: &Option<std::path::PathBuf>) -> anyhow::Result<&Path> {
    recorded.as_deref().ok_or_else(|| {
        anyhow::anyhow!(
            "the `recorded` system needs --recorded FILE (a report.json or a plain JSON file of observations)"
        )
    })
}

/// Replays recorded detector verdicts.
pub struct RecordedDetector {
    name: String,
    scope: Option<Vec<Category>>,
    runs: Vec<HashMap<String, Decision>>,
}

impl RecordedDetector {
    /// All detectors recorded in the file (a report or scan-eval file can hold several).
    pub fn from_file(path: &Path) -> anyhow::Result<Vec<Self>> {
        let absent = "detector verdicts (it measured tool discovery only)";
        match report_observations(path, |f| f.security, absent)? {
            Some(obs) => Ok(Self::from_observations(obs)),
            None => Self::from_value(&read_json(path)?)
                .with_context(|| format!("{}: reading recorded detector verdicts", path.display())),
        }
    }

    fn from_observations(obs: Vec<DetectorObservations>) -> Vec<Self> {
        obs.into_iter()
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
            .collect()
    }

    pub fn from_value(v: &Value) -> anyhow::Result<Vec<Self>> {
        if let Some(obs) = v.pointer("/security/observations") {
            let obs = Vec::<DetectorObservations>::deserialize(obs)
                .context("at $.security.observations: expected evalgate observations")?;
            return Ok(Self::from_observations(obs));
        }
        if let (Some(dets), Some(Value::Array(entries))) = (
            v.get("detectors").and_then(Value::as_array),
            v.get("entries"),
        ) {
            // spec-065 scan-eval verdicts
            let detector = |d: &Value| -> anyhow::Result<RecordedDetector> {
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
                    let found = e.get("verdicts").and_then(Value::as_array).and_then(|vs| {
                        vs.iter()
                            .find(|x| x.get("detector").and_then(Value::as_str) == Some(&name))
                    });
                    if let Some(vd) = found {
                        let flagged = vd.get("flagged").and_then(Value::as_bool).with_context(|| format!("at $.entries[{i}].verdicts: expected a boolean `flagged` for detector {name:?}"))?;
                        let detections = vd.get("detections").and_then(Value::as_array);
                        let signals = detections
                            .into_iter()
                            .flatten()
                            .filter_map(|d| Some(d.get("type")?.as_str()?.to_string()))
                            .collect();
                        run.insert(id.to_string(), Decision::new(id, flagged, signals));
                    }
                }
                Ok(RecordedDetector {
                    name,
                    scope: None,
                    runs: vec![run],
                })
            };
            return dets.iter().map(detector).collect();
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
            run.insert(id.clone(), Decision::new(id, flagged, vec![]));
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
    async fn detect(&mut self, entries: &[Entry], run: usize) -> Result<Vec<Decision>, SutError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), text).unwrap();
        f
    }

    #[test]
    fn a_report_and_a_plain_map_both_replay_and_a_broken_report_names_its_path() {
        let report = r#"{"command": "run", "retrieval": {"observations": {"system": "embedded",
            "requested": 20, "runs": [{"run": 1, "queries": [{"id": "q1", "ranked": ["s:a"],
            "latency_ms": 2.5}]}]}}, "security": {"observations": [{"detector": "rules",
            "runs": [{"run": 1, "verdicts": [{"entry_id": "e1", "flagged": true}]}]}]}}"#;
        let f = file(report);
        let r = RecordedRetriever::from_file(f.path()).unwrap();
        assert_eq!(r.facts.name, "recorded:embedded");
        assert_eq!(r.runs[0]["q1"].0, ["s:a"]);
        let d = RecordedDetector::from_file(f.path()).unwrap();
        assert_eq!(d[0].name, "rules");
        assert!(d[0].runs[0]["e1"].flagged);

        let f = file(r#"{"q1": ["s:b", "s:c"]}"#);
        let r = RecordedRetriever::from_file(f.path()).unwrap();
        assert_eq!(r.facts.name, "recorded");
        assert_eq!(r.runs[0]["q1"].0, ["s:b", "s:c"]);

        let f = file(r#"{"retrieval": {"observations": {"system": "x", "runs": "none"}}}"#);
        let e = format!(
            "{:#}",
            RecordedRetriever::from_file(f.path()).err().unwrap()
        );
        assert!(e.contains("at $.retrieval.observations"), "{e}");
        assert!(e.contains(&f.path().display().to_string()), "{e}");
    }

    #[test]
    fn a_report_read_gives_the_observations_its_tree_holds() {
        let runs: Vec<serde_json::Value> = (1..=3)
            .map(|run| {
                let queries: Vec<_> = (0..50)
                    .map(|q| {
                        serde_json::json!({"id": format!("q{q}"), "latency_ms": q as f64 / 7.0 + run as f64,
                            "ranked": [format!("s:t{}", (q + run) % 9), "s:\"odd\" ]}", format!("s:t{}", q % 4)]})
                    })
                    .collect();
                serde_json::json!({"run": run, "queries": queries})
            })
            .collect();
        // the parts to skip hold look-alikes of what is taken
        let report = serde_json::json!({
            "command": "retrieval",
            "notes": "\"observations\": {\"system\": \"fake\"}",
            "retrieval": {
                "queries": [{"id": "q1", "observations": {"system": "row"}, "retrieved": ["s:x"]}],
                "observations": {"system": "embedded", "requested": 13, "runs": runs},
                "catalog": {"runs": [{"run": 9, "queries": []}]}
            },
            "security": {"detectors": [], "observations": [{"detector": "rules", "scope": null,
                "runs": [{"run": 1, "verdicts": [{"entry_id": "e1", "flagged": false}]}]}]}
        });
        let f = file(&serde_json::to_string_pretty(&report).unwrap());
        let read = report_observations(f.path(), Some, "").unwrap().unwrap();
        let tree: RetrievalObservations =
            serde_json::from_value(report["retrieval"]["observations"].clone()).unwrap();
        let a = serde_json::to_value(read.retrieval.as_ref().unwrap()).unwrap();
        assert_eq!(a, serde_json::to_value(&tree).unwrap());
        assert_eq!(
            serde_json::to_value(read.security.as_ref().unwrap()).unwrap(),
            report["security"]["observations"]
        );
        // and the replay is that of the tree
        let r = RecordedRetriever::from_file(f.path()).unwrap();
        assert_eq!(r.facts.name, "recorded:embedded");
        assert_eq!(r.runs.len(), 3);
        assert_eq!(r.runs[2]["q4"].0, ["s:t7", "s:\"odd\" ]}", "s:t0"]);
        assert_eq!(r.runs[2]["q4"].1, 4.0 / 7.0 + 3.0);

        // broken JSON anywhere, even in a part that is skipped, is not read this way: the
        // general reading says what is wrong
        let text = serde_json::to_string_pretty(&report).unwrap();
        let f = file(&text.replacen("\"command\": \"retrieval\"", "\"command\": retrieval", 1));
        assert!(report_observations(f.path(), Some, "").unwrap().is_none());
        let e = format!(
            "{:#}",
            RecordedRetriever::from_file(f.path()).err().unwrap()
        );
        assert!(e.contains("expected JSON recorded observations"), "{e}");
    }
}
