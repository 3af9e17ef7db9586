//! Observations: what each system returned, recorded before any scoring. Reports keep them so a
//! run can be re-scored offline (the `recorded` system) and compared with another scorer.

use crate::infra::text::Text;
use crate::pipeline::dataset::Category;
use crate::pipeline::sut::Decision;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the system under test answered, raw: every run's ranked ids per query (for re-scoring).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalObservations {
    /// The retriever's name.
    pub system: String,
    /// How many results were asked for per query.
    pub requested: usize,
    pub runs: Vec<RetrievalRun>,
}

/// One run of every query.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalRun {
    /// 1-based run number.
    pub run: usize,
    pub queries: Vec<QueryObservation>,
}

/// One query in one run: the ranked tool ids as returned and how long the answer took.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryObservation {
    pub id: Text,
    /// Ids as the system returned them (canonical `server:tool`), before filtering.
    pub ranked: Vec<Text>,
    pub latency_ms: f64,
}

/// What a detector decided, raw: every run's decision per entry.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct DetectorObservations {
    pub detector: String,
    /// Attack categories the detector covers (`null` = all).
    #[serde(default)]
    pub scope: Option<Vec<Category>>,
    pub runs: Vec<DetectorRun>,
}

/// One run of a detector over every entry.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct DetectorRun {
    pub run: usize,
    pub verdicts: Vec<Decision>,
}
