//! Observations: what each system returned, recorded before any scoring. Reports keep them so a
//! run can be re-scored offline (the `recorded` system) and compared with another scorer.

use crate::dataset::Category;
use crate::sut::Verdict;
use crate::text::Text;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalObservations {
    /// The retriever's name.
    pub system: String,
    /// How many results were asked for per query.
    pub requested: usize,
    pub runs: Vec<RetrievalRun>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalRun {
    /// 1-based run number.
    pub run: usize,
    pub queries: Vec<QueryObservation>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryObservation {
    pub id: Text,
    /// Ids as the system returned them (canonical `server:tool`), before filtering.
    pub ranked: Vec<Text>,
    pub latency_ms: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct DetectorObservations {
    pub detector: String,
    /// Attack categories the detector covers (`null` = all).
    #[serde(default)]
    pub scope: Option<Vec<Category>>,
    pub runs: Vec<DetectorRun>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct DetectorRun {
    pub run: usize,
    pub verdicts: Vec<Verdict>,
}
