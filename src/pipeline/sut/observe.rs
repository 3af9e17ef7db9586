//! Observations: what each system returned, recorded before any scoring. Reports keep them so a
//! run can be re-scored offline (the `recorded` system) and compared with another scorer.

use crate::infra::files::read_maybe_gzip;
use crate::infra::text::Text;
use crate::pipeline::dataset::Category;
use crate::pipeline::sut::{Decision, Ranked};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the system under test answered, raw: every run's ranked ids per query (for re-scoring).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalObservations {
    /// The retriever's name.
    pub system: String,
    /// How many results were asked for per query.
    pub requested: usize,
    /// One per run, in order.
    pub runs: Vec<RetrievalRun>,
}

/// One run of every query.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalRun {
    /// 1-based run number.
    pub run: usize,
    /// One per golden query, in golden-set order.
    pub queries: Vec<QueryObservation>,
}

/// One query in one run: the ranked tool ids as returned and how long the answer took.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryObservation {
    /// The golden query's id.
    pub id: Text,
    /// Ids as the system returned them (canonical `server:tool`), before filtering.
    pub ranked: Vec<Text>,
    /// Time to the answer, in milliseconds.
    pub latency_ms: f64,
}

impl QueryObservation {
    /// Query `id`'s answer as the system gave it.
    pub fn of(id: Text, answer: Ranked) -> Self {
        QueryObservation {
            id,
            ranked: answer.ids,
            latency_ms: answer.latency.as_secs_f64() * 1000.0,
        }
    }
}

/// What a detector decided, raw: every run's decision per entry.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct DetectorObservations {
    /// The detector's name.
    pub detector: String,
    /// Whose detector it is ([`crate::pipeline::sut::Detector::source`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Attack categories the detector covers (`null` = all).
    #[serde(default)]
    pub scope: Option<Vec<Category>>,
    /// One per run, in order.
    pub runs: Vec<DetectorRun>,
}

/// One run of a detector over every entry.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct DetectorRun {
    /// 1-based run number.
    pub run: usize,
    /// One per security entry, in corpus order.
    pub verdicts: Vec<Decision>,
}

impl RetrievalObservations {
    /// Moved out of the report (into the observations file): not serialized in report.json.
    pub fn is_detached(&self) -> bool {
        self.system.is_empty() && self.runs.is_empty()
    }
}

/// Where a report's raw observations go (`--observations`): inside report.json (the default),
/// or beside it in a file of their own, plain or gzipped, so report.json stays the size of
/// its summaries however many queries and runs there are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservationsMode {
    #[default]
    Inline,
    File,
    Gzip,
}

/// The names an observations file may have (report.json's `observations_file`).
pub const OBSERVATIONS_FILES: [&str; 2] = ["observations.json", "observations.json.gz"];

impl ObservationsMode {
    /// The file the observations are written to, `None` inline.
    pub fn file_name(self) -> Option<&'static str> {
        match self {
            ObservationsMode::Inline => None,
            ObservationsMode::File => Some(OBSERVATIONS_FILES[0]),
            ObservationsMode::Gzip => Some(OBSERVATIONS_FILES[1]),
        }
    }
}

/// The observations file: a report's raw observations, moved out of report.json.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ObservationsFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<RetrievalObservations>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<DetectorObservations>>,
}

impl ObservationsFile {
    /// Reads the observations file `name` (a report's `observations_file`) beside the report
    /// at `report`. Only the names evalgate writes are followed: a report cannot point the
    /// reader anywhere else.
    pub fn read_beside(report: &std::path::Path, name: &str) -> anyhow::Result<ObservationsFile> {
        use anyhow::Context;
        if !OBSERVATIONS_FILES.contains(&name) {
            anyhow::bail!(
                "{}: at $.observations_file: expected {} or {}, found {name:?}",
                report.display(),
                OBSERVATIONS_FILES[0],
                OBSERVATIONS_FILES[1]
            );
        }
        let dir = report
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let path = dir.join(name);
        let bytes = read_maybe_gzip(&path).with_context(|| {
            format!(
                "{}: cannot read the observations file its report names ({})",
                path.display(),
                report.display()
            )
        })?;
        serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "{}: expected the observations file evalgate writes beside report.json",
                path.display()
            )
        })
    }
}
