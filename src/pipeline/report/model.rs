//! The one report model. Built once per invocation; every output format renders it.

pub use crate::pipeline::gate::{Check, CheckKind, CheckStatus, GateReport, QueryDelta, Verdict};
use crate::pipeline::sut::SutError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::pipeline::baseline::Baseline;
pub use crate::pipeline::dataset::DatasetRef;
use crate::pipeline::dataset::Profile;
use crate::pipeline::dataset::shard::ShardRef;
use crate::pipeline::gate::GateInputs;
use crate::pipeline::measure::probes::RobustnessReport;
pub use crate::pipeline::score::model::*;
use crate::pipeline::score::scorecard::Scorecard;
use crate::pipeline::sut::observe::ObservationsFile;

pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// `report.json`: everything one `evalgate run` (or `retrieval`, `security`) measured, the
/// gate's verdict and the raw observations to re-score from. Markdown, HTML and the terminal
/// render this one model.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// Version of this report format.
    pub schema_version: u32,
    /// The evalgate version that wrote the report.
    pub evalgate_version: String,
    /// `run`, `retrieval` or `security`.
    pub command: String,
    /// How many times every measurement was repeated.
    pub runs: usize,
    /// The datasets measured: kind, source, version, sha256 and size of each.
    pub datasets: Vec<DatasetRef>,
    /// How strictly the datasets were held to evalgate's authoring rules (their warnings are
    /// in `warnings`).
    #[serde(default)]
    pub dataset_profile: Profile,
    /// Set on the report of one shard of a sharded evaluation (`--shard i/n`): which slices it
    /// measured. `evalgate merge` joins the shards into one report, which has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRef>,
    /// Discovery: the ranked lists scored against the golden set (absent for `security`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<RetrievalReport>,
    /// Security: every detector over the security corpus (absent for `retrieval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<SecurityReport>,
    /// Robustness probes of the search system (after the measured runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robustness: Option<RobustnessReport>,
    /// One number out of 100 in five weighted dimensions, computed from the sections above
    /// (docs/scorecard.md), with the baseline's for Δ. Informational: it does not gate. Absent
    /// in a report written before evalgate had it and in a shard's report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scorecard: Option<Scorecard>,
    /// The verdict and every check that produced it.
    pub gate: GateReport,
    /// Set when a system under test could not be measured; the report is then partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<SutError>,
    /// What the run noticed but did not fail on: dataset authoring warnings, the baseline's, the system's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The file beside report.json holding the raw observations (`--observations file` or
    /// `gzip`): `observations.json` or `observations.json.gz`. Absent when they are inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observations_file: Option<String>,
}

impl Report {
    /// Moves the raw observations out of the report, which then names `file` as where they
    /// are (report.json no longer holds them).
    pub fn detach_observations(&mut self, file: &str) -> ObservationsFile {
        self.observations_file = Some(file.to_string());
        ObservationsFile {
            retrieval: self
                .retrieval
                .as_mut()
                .map(|r| std::mem::take(&mut r.observations)),
            security: self
                .security
                .as_mut()
                .map(|s| std::mem::take(&mut s.observations)),
        }
    }

    /// Puts back the observations read from the report's observations file.
    pub fn attach_observations(&mut self, o: ObservationsFile) {
        if let (Some(r), Some(obs)) = (self.retrieval.as_mut(), o.retrieval) {
            r.observations = obs;
        }
        if let (Some(s), Some(obs)) = (self.security.as_mut(), o.security) {
            s.observations = obs;
        }
        self.observations_file = None;
    }

    /// The baseline this report's measurements make (thresholds kept from `previous`).
    pub fn to_baseline(&self, previous: Option<&Baseline>) -> Baseline {
        Baseline::from_results(
            &self.datasets,
            self.retrieval.as_ref(),
            self.security.as_ref(),
            self.scorecard.as_ref(),
            previous,
        )
    }

    /// What the gate reads of this report: the measured summaries, borrowed.
    pub fn gate_inputs(&self) -> GateInputs<'_> {
        GateInputs {
            retrieval: self.retrieval.as_ref(),
            security: self.security.as_ref(),
            robustness: self.robustness.as_ref(),
            failure: self.failure.as_ref().map(ToString::to_string),
        }
    }
}

/// The fuzz fixture's report (retrieval with splits, two detectors, one playing rug-pulls live,
/// robustness probes), for unit tests.
#[cfg(test)]
pub(crate) fn fixture() -> Report {
    serde_json::from_str(include_str!("../../../fuzz/fixtures/report_template.json")).unwrap()
}
