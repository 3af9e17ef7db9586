//! Committed baselines: per metric a value, a direction, a tolerance and whether it is gated;
//! per detector an FPR ceiling and a recall floor. Written only by `evalgate baseline update`.

pub mod choose;
pub mod mcp_eval;

use crate::infra::files::read_to_string;
use crate::pipeline::dataset::{DatasetRef, load::kind_of};
use crate::pipeline::score::metrics::{DETECTION_METRICS, Direction, Metric, RETRIEVAL_METRICS};
use crate::pipeline::score::model::{EntryOutcome, RetrievalReport, SecurityReport};
use crate::pipeline::score::scorecard::{Scorecard, ScorecardBaseline, round6};
use crate::pipeline::score::stats::Summary;
use anyhow::Context;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub const BASELINE_SCHEMA_VERSION: u32 = 1;
/// The baseline shipped for the zero-config run (embedded datasets, retriever and detectors).
pub const EMBEDDED_DEFAULT: &str = include_str!("../../../baselines/default.json");
pub const EMBEDDED_DEFAULT_NAME: &str = "embedded:baselines/default.json";
/// Where `evalgate run` looks for a baseline when none is named.
pub const DEFAULT_PATH: &str = "baselines/default.json";
pub const DEFAULT_TOLERANCE: f64 = 0.02;

/// A committed baseline (`baselines/*.json`): the datasets it was measured on, the values of
/// the last accepted run and the thresholds the gate holds new runs to. Written by `evalgate
/// baseline update`; tolerances, `gated` flags, ceilings and floors may be edited by hand.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Baseline {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The datasets the values were measured on, by kind (`corpus`, `golden`, `security`).
    #[serde(default)]
    pub datasets: BTreeMap<String, DatasetPin>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<RetrievalBaseline>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<SecurityBaseline>,
    /// The scorecard of the run the baseline was written from (docs/scorecard.md), for the Δ a
    /// later run shows. Absent in a baseline written before evalgate had it: Δ is then "—".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scorecard: Option<ScorecardBaseline>,
}

/// A dataset the baseline was measured on: its version and sha256.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct DatasetPin {
    pub version: Option<String>,
    pub sha256: String,
}

/// Discovery's baseline: the system it was measured on, per-metric values and thresholds, and
/// per-query values.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalBaseline {
    pub retriever: String,
    pub runs: usize,
    pub metrics: BTreeMap<String, MetricBaseline>,
    /// Per-query values (`recall_at_5`, `mrr`, `ndcg_at_10`), to name the queries that regressed.
    #[serde(default)]
    pub per_query: BTreeMap<String, BTreeMap<String, f64>>,
    /// The confusion pairs of the run (report.json's `retrieval.tool_diagnostics.confusions`):
    /// wanted tool → the tools that took its place in a top 5 → in how many queries. A pull
    /// request's report lists the pairs that are not here as new. Absent in a baseline written
    /// before evalgate had them: no pair is then called new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confusions: Option<BTreeMap<String, BTreeMap<String, usize>>>,
    /// Set when the run had more confusion pairs than a report keeps (10,000): the number of
    /// queries of the last pair kept. A pair of a later run that is not in `confusions` is
    /// then new only if it has more queries than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confusions_cut_at: Option<usize>,
    /// Per query, the top 10 tool ids of the run in rank order (report.json's `retrieved`), to
    /// say which relevant tool moved from which rank to which, and what took its place. Absent
    /// in a baseline written before evalgate kept them: changed queries then show their Δ only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_query_ranked: Option<BTreeMap<String, Vec<String>>>,
}

impl RetrievalBaseline {
    /// Whether the pair `wanted` → `taken`, in `queries` queries, is new since this baseline:
    /// not among its pairs, which were complete or held every pair with that many queries.
    /// `None` when the baseline keeps no confusions.
    pub fn is_new_confusion(&self, wanted: &str, taken: &str, queries: usize) -> Option<bool> {
        let pairs = self.confusions.as_ref()?;
        let known = pairs.get(wanted).is_some_and(|t| t.contains_key(taken));
        Some(!known && self.confusions_cut_at.is_none_or(|cut| queries > cut))
    }
}

/// One metric's baseline value, its direction, its tolerance and whether it is gated.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MetricBaseline {
    /// `null` when the metric was undefined in the baseline run.
    pub value: Option<f64>,
    pub direction: Direction,
    /// Absolute tolerance: fail when worse than `value` by more than this.
    pub tolerance: f64,
    /// Whether a regression beyond the tolerance fails the gate (otherwise reported only).
    pub gated: bool,
}

/// Detectors' baselines by detector name.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SecurityBaseline {
    pub detectors: BTreeMap<String, DetectorBaseline>,
}

/// One detector's baseline: an FPR ceiling, a recall floor and per-metric values.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DetectorBaseline {
    /// Fail when the mean FPR is above this.
    pub fpr_ceiling: Option<f64>,
    /// Fail when the mean recall is below this.
    pub recall_floor: Option<f64>,
    pub metrics: BTreeMap<String, MetricBaseline>,
    /// Per entry id: whether the detector flagged it (entries it judged: attacks in its scope,
    /// benign entries and hard negatives), to list the entries that flip and test the paired
    /// verdicts (McNemar). Absent in a baseline written before evalgate kept them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdicts: Option<BTreeMap<String, bool>>,
}

/// A detector's per-entry verdicts as a baseline keeps them: entry id → flagged, for the
/// entries it judged (attacks in its scope, benign entries and hard negatives, by majority
/// over runs); `None` for a detector without entries.
pub fn verdict_map(entries: &[EntryOutcome]) -> Option<BTreeMap<String, bool>> {
    use crate::pipeline::score::model::Outcome;
    let m: BTreeMap<String, bool> = entries
        .iter()
        .filter_map(|e| match e.outcome {
            Outcome::Tp | Outcome::Fp => Some((e.id.clone(), true)),
            Outcome::Tn | Outcome::Fn => Some((e.id.clone(), false)),
            Outcome::OutOfScope | Outcome::NotApplicable => None,
        })
        .collect();
    (!m.is_empty()).then_some(m)
}

/// A serde path (`retrieval.metrics`, `.` for the root) as a JSON path (`$.retrieval.metrics`).
fn dollar_path(path: &str) -> String {
    match path.trim_start_matches('.') {
        "" => "$".to_string(),
        p => format!("$.{p}"),
    }
}

/// A serde_json message without its trailing " at line L column C" (the caller says where).
fn without_position(msg: &str) -> String {
    msg.rsplit_once(" at line ")
        .map_or(msg, |(m, _)| m)
        .to_string()
}

/// `did you mean` for a metric key written as its display name or in other case.
fn metric_hint(key: &str, known: &[Metric]) -> String {
    known
        .iter()
        .find(|m| m.key().eq_ignore_ascii_case(key) || m.label().eq_ignore_ascii_case(key))
        .map(|m| format!(" (did you mean {:?}?)", m.key()))
        .unwrap_or_default()
}

/// A section's kind of metric, for messages, and the metrics it knows.
type Known = (&'static str, &'static [Metric]);
const RETRIEVAL: Known = ("retrieval", &RETRIEVAL_METRICS);
const DETECTION: Known = ("detection", &DETECTION_METRICS);

impl Baseline {
    /// Parses evalgate's baseline format, or mcp-eval's (then also returns a note of what was
    /// mapped), and checks that every metric, tolerance and limit means something.
    pub fn parse(name: &str, text: &str) -> anyhow::Result<(Baseline, Option<String>)> {
        let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "{name}:{}:{}: expected a JSON baseline: {}",
                e.line(),
                e.column(),
                without_position(&e.to_string())
            )
        })?;
        if !doc.is_object() {
            anyhow::bail!(
                "{name}: at $: expected an object (an evalgate baseline with schema_version, or mcp-eval's with recall_at), found {}",
                kind_of(&doc)
            );
        }
        // mcp-eval's format: no `schema_version`, a top-level `recall_at` object
        if doc.get("schema_version").is_none()
            && doc
                .get("recall_at")
                .is_some_and(serde_json::Value::is_object)
        {
            let (b, note) = mcp_eval::import(name, doc)?;
            b.check(name)?;
            return Ok((b, Some(note)));
        }
        let de = &mut serde_json::Deserializer::from_str(text);
        let b: Baseline = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = dollar_path(&e.path().to_string());
            let inner = e.into_inner();
            anyhow::anyhow!(
                "{name}:{}:{}: at {path}: {}",
                inner.line(),
                inner.column(),
                without_position(&inner.to_string())
            )
        })?;
        if b.schema_version != BASELINE_SCHEMA_VERSION {
            anyhow::bail!(
                "{name}: at $.schema_version: expected {BASELINE_SCHEMA_VERSION}, found {}",
                b.schema_version
            );
        }
        b.check(name)?;
        Ok((b, None))
    }

    /// Every metric name known, every tolerance 0 or more, every value, ceiling and floor
    /// between 0 and 1: a typo would otherwise silently drop its gate.
    pub fn check(&self, name: &str) -> anyhow::Result<()> {
        let mut out = Vec::new();
        type Metrics = BTreeMap<String, MetricBaseline>;
        let metrics = |out: &mut Vec<_>, base: &str, ms: &Metrics, (what, known): Known| {
            let expected: Vec<&str> = known.iter().map(|m| m.key()).collect();
            for (k, m) in ms {
                let path = format!("{base}.metrics.{k}");
                // which way is better is the metric's, not the baseline's to choose
                if let Some(metric) = known.iter().find(|x| x.key() == k)
                    && m.direction != metric.direction()
                {
                    let want = serde_json::to_value(metric.direction()).unwrap_or_default();
                    let found = serde_json::to_value(m.direction).unwrap_or_default();
                    out.push(format!(
                        "{name}: at {path}.direction: expected {want} for {k}, found {found}"
                    ));
                }
                if !expected.contains(&k.as_str()) {
                    out.push(format!(
                        "{name}: at {path}: unknown {what} metric {k:?}{}; expected one of {}",
                        metric_hint(k, known),
                        expected.join(", ")
                    ));
                }
                // a gated metric without a value, a tolerance below 0, a value outside 0..=1
                if m.gated && m.value.is_none() {
                    out.push(format!(
                        "{name}: at {path}.value: expected a number for a gated metric, found null (null records a metric that was undefined when the baseline was measured, which cannot gate: set \"gated\": false, or re-measure with `evalgate baseline update`)"
                    ));
                }
                if !(m.tolerance.is_finite() && m.tolerance >= 0.0) {
                    out.push(format!(
                        "{name}: at {path}.tolerance: expected a tolerance of 0 or more, found {}",
                        m.tolerance
                    ));
                }
                if let Some(v) = m.value
                    && !(0.0..=1.0).contains(&v)
                {
                    out.push(format!(
                        "{name}: at {path}.value: expected a value between 0 and 1, found {v}"
                    ));
                }
            }
        };
        if let Some(r) = &self.retrieval {
            metrics(&mut out, "$.retrieval", &r.metrics, RETRIEVAL);
        }
        if let Some(s) = &self.security {
            for (d, det) in &s.detectors {
                let base = format!("$.security.detectors.{d}");
                metrics(&mut out, &base, &det.metrics, DETECTION);
                for (key, v) in [
                    ("fpr_ceiling", det.fpr_ceiling),
                    ("recall_floor", det.recall_floor),
                ] {
                    if let Some(v) = v
                        && !(0.0..=1.0).contains(&v)
                    {
                        out.push(format!(
                            "{name}: at {base}.{key}: expected a rate between 0 and 1, found {v}"
                        ));
                    }
                }
            }
        }
        anyhow::ensure!(out.is_empty(), "{}", out.join("\n"));
        Ok(())
    }

    /// [`Baseline::parse`] of the file at `path`.
    pub fn load(path: &Path) -> anyhow::Result<(Baseline, Option<String>)> {
        let text = read_to_string(path)
            .with_context(|| format!("{}: cannot read the baseline", path.display()))?;
        Self::parse(&path.display().to_string(), &text)
    }

    /// A baseline from what a run measured (the report's datasets and sections). Thresholds
    /// (tolerances, gated flags, ceilings, floors) are kept from `previous` where it has them;
    /// new metrics get the defaults.
    pub fn from_results(
        datasets: &[DatasetRef],
        retrieval: Option<&RetrievalReport>,
        security: Option<&SecurityReport>,
        scorecard: Option<&Scorecard>,
        previous: Option<&Baseline>,
    ) -> Baseline {
        let pin = |d: &DatasetRef| DatasetPin {
            version: d.version.clone(),
            sha256: d.sha256.clone(),
        };
        let datasets = datasets.iter().map(|d| (d.kind.clone(), pin(d))).collect();
        let retrieval = retrieval.map(|r| {
            let prev = previous.and_then(|p| p.retrieval.as_ref());
            let metrics = RETRIEVAL_METRICS
                .iter()
                .map(|&m| {
                    let defaults = (DEFAULT_TOLERANCE, Metric::DEFAULT_GATED.contains(&m));
                    metric_entry(m, &r.metrics, prev.map(|p| &p.metrics), defaults)
                })
                .collect();
            let (per_query, ranked): (BTreeMap<_, _>, BTreeMap<_, _>) = r
                .per_query
                .iter()
                .map(|q| {
                    let m = Metric::PER_QUERY_BASELINE
                        .iter()
                        .filter_map(|&k| q.metrics.get(k).map(|v| (k.key().to_string(), round6(v))))
                        .collect();
                    let top = q.retrieved.iter().take(10).map(|t| t.to_string()).collect();
                    ((q.id.to_string(), m), (q.id.to_string(), top))
                })
                .unzip();
            // the confusion pairs as a baseline keeps them (none without tool diagnostics)
            let d = &r.tool_diagnostics;
            let mut confusions: BTreeMap<String, BTreeMap<_, _>> = BTreeMap::new();
            for p in &d.confusions {
                let taken = confusions.entry(p.wanted.to_string()).or_default();
                taken.insert(p.taken.to_string(), p.queries);
            }
            RetrievalBaseline {
                retriever: r.retriever.clone(),
                runs: r.runs_completed,
                metrics,
                per_query,
                confusions: (!d.is_empty()).then_some(confusions),
                confusions_cut_at: d.confusions_cut_at(),
                per_query_ranked: Some(ranked),
            }
        });
        let security = security.map(|s| {
            let prev = previous.and_then(|p| p.security.as_ref());
            let detectors = s
                .detectors
                .iter()
                .map(|d| {
                    let old = prev.and_then(|p| p.detectors.get(&d.detector));
                    let mean = |m: Metric| d.metrics.get(m.key()).and_then(|s| s.mean);
                    let metrics = DETECTION_METRICS
                        .iter()
                        .map(|&m| {
                            metric_entry(m, &d.metrics, old.map(|o| &o.metrics), (0.05, false))
                        })
                        .collect();
                    let fpr_ceiling = old.map(|o| o.fpr_ceiling).unwrap_or_else(|| {
                        mean(Metric::Fpr).map(|f| ((f + 0.05) * 100.0).ceil().min(100.0) / 100.0)
                    });
                    let recall_floor = old.map(|o| o.recall_floor).unwrap_or_else(|| {
                        mean(Metric::Recall).map(|r| ((r - 0.05) * 100.0).floor().max(0.0) / 100.0)
                    });
                    let b = DetectorBaseline {
                        fpr_ceiling,
                        recall_floor,
                        metrics,
                        verdicts: verdict_map(&d.entries),
                    };
                    (d.detector.clone(), b)
                })
                .collect();
            SecurityBaseline { detectors }
        });
        Baseline {
            schema_version: BASELINE_SCHEMA_VERSION,
            note: previous.and_then(|p| p.note.clone()).or_else(|| {
                Some("Written by `evalgate baseline update`. Edit tolerances, `gated`, ceilings and floors by hand; values come from runs.".into())
            }),
            datasets,
            retrieval: retrieval.or_else(|| previous.and_then(|p| p.retrieval.clone())),
            security: security.or_else(|| previous.and_then(|p| p.security.clone())),
            scorecard: scorecard
                .map(|s| s.to_baseline())
                .or_else(|| previous.and_then(|p| p.scorecard.clone())),
        }
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("baseline serialises");
        s.push('\n');
        s
    }
}

/// `m`'s entry for the mean measured, keeping the tolerance and gated flag of `old` where it has
/// the metric, else `(tolerance, gated)`; an undefined value cannot gate.
fn metric_entry(
    m: Metric,
    measured: &BTreeMap<String, Summary>,
    old: Option<&BTreeMap<String, MetricBaseline>>,
    (tolerance, gated): (f64, bool),
) -> (String, MetricBaseline) {
    let value = measured.get(m.key()).and_then(|s| s.mean).map(round6);
    let old = old.and_then(|o| o.get(m.key()));
    let tolerance = old.map_or(tolerance, |o| o.tolerance);
    metric(
        m,
        value,
        tolerance,
        value.is_some() && old.map_or(gated, |o| o.gated),
    )
}

/// `m`'s entry: its key, and its value, direction, tolerance and gated flag.
fn metric(m: Metric, value: Option<f64>, tolerance: f64, gated: bool) -> (String, MetricBaseline) {
    let b = MetricBaseline {
        value,
        direction: m.direction(),
        tolerance,
        gated,
    };
    (m.key().to_string(), b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> Baseline {
        Baseline::parse("default.json", EMBEDDED_DEFAULT).unwrap().0
    }

    fn error(v: serde_json::Value) -> String {
        format!(
            "{:#}",
            Baseline::parse("b.json", &v.to_string()).unwrap_err()
        )
    }

    #[test]
    fn the_shipped_baseline_parses_and_gates_the_default_metrics() {
        let b = shipped();
        let r = b.retrieval.as_ref().unwrap();
        let gated: Vec<&str> = r
            .metrics
            .iter()
            .filter(|(_, m)| m.gated)
            .map(|(k, _)| k.as_str())
            .collect();
        let mut want = Metric::DEFAULT_GATED.map(Metric::key).to_vec();
        want.sort();
        assert_eq!(gated, want);
        assert_eq!(r.retriever, "embedded");
        assert!(b.datasets.contains_key("corpus") && b.datasets.contains_key("security"));
    }

    #[test]
    fn a_threshold_that_would_silently_drop_a_gate_is_refused_at_its_path() {
        let mut v: serde_json::Value = serde_json::from_str(EMBEDDED_DEFAULT).unwrap();
        let m = v["retrieval"]["metrics"]
            .as_object_mut()
            .unwrap()
            .remove("mrr")
            .unwrap();
        v["retrieval"]["metrics"]["MRR"] = m;
        let e = error(v.clone());
        assert!(
            e.contains("at $.retrieval.metrics.MRR: unknown retrieval metric \"MRR\" (did you mean \"mrr\"?)"),
            "{e}"
        );
        let mut v: serde_json::Value = serde_json::from_str(EMBEDDED_DEFAULT).unwrap();
        v["retrieval"]["metrics"]["mrr"]["tolerance"] = (-0.1).into();
        v["security"]["detectors"]["rules"]["fpr_ceiling"] = 1.5.into();
        let e = error(v);
        assert!(
            e.contains("at $.retrieval.metrics.mrr.tolerance: expected a tolerance of 0 or more, found -0.1"),
            "{e}"
        );
        assert!(
            e.contains("at $.security.detectors.rules.fpr_ceiling: expected a rate between 0 and 1, found 1.5"),
            "{e}"
        );
        // a direction against the metric's would turn a regression into a pass
        let mut v: serde_json::Value = serde_json::from_str(EMBEDDED_DEFAULT).unwrap();
        v["retrieval"]["metrics"]["mrr"]["direction"] = "lower".into();
        v["security"]["detectors"]["rules"]["metrics"]["fpr"]["direction"] = "higher".into();
        let e = error(v);
        for want in [
            "at $.retrieval.metrics.mrr.direction: expected \"higher\" for mrr, found \"lower\"",
            "at $.security.detectors.rules.metrics.fpr.direction: expected \"lower\" for fpr, found \"higher\"",
        ] {
            assert!(e.contains(want), "{e}");
        }
        // a gated metric with no value is bad input, never a gate failure
        let mut v: serde_json::Value = serde_json::from_str(EMBEDDED_DEFAULT).unwrap();
        v["retrieval"]["metrics"]["mrr"]["value"] = serde_json::Value::Null;
        let e = error(v.clone());
        assert!(
            e.contains(
                "at $.retrieval.metrics.mrr.value: expected a number for a gated metric, found null"
            ),
            "{e}"
        );
        v["retrieval"]["metrics"]["mrr"]["gated"] = false.into();
        assert!(Baseline::parse("b.json", &v.to_string()).is_ok());
        let e = error(serde_json::json!({"schema_version": 9}));
        assert!(
            e.contains("at $.schema_version: expected 1, found 9"),
            "{e}"
        );
        let e = error(serde_json::json!([]));
        assert!(e.contains("at $: expected an object"), "{e}");
    }

    #[test]
    fn an_update_keeps_hand_set_thresholds_and_replaces_values() {
        let mut previous = shipped();
        let r = previous.retrieval.as_mut().unwrap();
        let mrr = r.metrics.get_mut("mrr").unwrap();
        mrr.tolerance = 0.07;
        mrr.gated = false;
        previous
            .security
            .as_mut()
            .unwrap()
            .detectors
            .get_mut("rules")
            .unwrap()
            .fpr_ceiling = Some(0.33);
        let report: crate::pipeline::report::model::Report =
            serde_json::from_str(include_str!("../../../fuzz/fixtures/report_template.json"))
                .unwrap();
        let b = report.to_baseline(Some(&previous));
        let mrr = &b.retrieval.as_ref().unwrap().metrics["mrr"];
        assert_eq!((mrr.tolerance, mrr.gated), (0.07, false));
        assert_eq!(
            mrr.value,
            report.retrieval.as_ref().unwrap().metrics["mrr"].mean
        );
        // the report's detectors are new to `previous`: they get limits from their own numbers
        for d in &report.security.as_ref().unwrap().detectors {
            let db = &b.security.as_ref().unwrap().detectors[&d.detector];
            let fpr = d.metrics["fpr"].mean.unwrap();
            let c = db.fpr_ceiling.unwrap();
            assert!(c >= fpr && c <= fpr + 0.06, "{c} for fpr {fpr}");
        }
    }

    #[test]
    fn a_cut_confusion_list_calls_new_only_what_it_would_have_kept() {
        let mut rb: RetrievalBaseline = serde_json::from_value(serde_json::json!({
            "retriever": "embedded", "runs": 1, "metrics": {},
            "confusions": {"s:a": {"s:b": 4}}, "confusions_cut_at": 2
        }))
        .unwrap();
        assert_eq!(rb.is_new_confusion("s:a", "s:b", 9), Some(false));
        // not kept, but the list was cut at 2 queries: a 2-query pair may just not have fitted
        assert_eq!(rb.is_new_confusion("s:a", "s:c", 2), Some(false));
        assert_eq!(rb.is_new_confusion("s:a", "s:c", 3), Some(true));
        rb.confusions_cut_at = None;
        assert_eq!(rb.is_new_confusion("s:a", "s:c", 1), Some(true));
        rb.confusions = None;
        assert_eq!(rb.is_new_confusion("s:a", "s:c", 9), None);
    }

    /// A baseline written before evalgate kept confusion pairs still loads (and then no pair
    /// is called new); one written now keeps them, and reads back the same.
    #[test]
    fn confusions_are_optional_in_a_baseline_and_round_trip() {
        let mut v: serde_json::Value = serde_json::from_str(EMBEDDED_DEFAULT).unwrap();
        v["retrieval"].as_object_mut().unwrap().remove("confusions");
        let old = Baseline::parse("old.json", &v.to_string()).unwrap().0;
        let r = old.retrieval.as_ref().unwrap();
        assert!(r.confusions.is_none());
        assert_eq!(r.is_new_confusion("a:x", "b:y", 1), None);
        assert!(!old.to_json().contains("confusions"));
        let shipped = shipped();
        let kept = shipped.retrieval.as_ref().unwrap().confusions.as_ref();
        assert!(
            kept.is_some_and(|c| !c.is_empty()),
            "baselines/default.json keeps the v1 run's confusion pairs"
        );
        let again = Baseline::parse("again.json", &shipped.to_json()).unwrap().0;
        assert_eq!(again.retrieval.unwrap().confusions.as_ref(), kept);
    }
}
