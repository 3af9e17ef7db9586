//! What a system under test and a detector are given: `[sut.mcp]` and `[sut.rest]` as
//! evalgate.toml writes them, [`SutSpec`] (each kind with only the settings it reads) and
//! [`DetectorSettings`], resolved once by `config`. `app::systems` builds them.

use super::kind::SutKind;
use super::live::{LiveConfig, ProxyScanConfig};
use super::mapping::IdStyle;
use super::scanner::ScannerConfig;
use crate::pipeline::sut::launch::spec::{CatalogSpec, LaunchSpec};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The longest wait any setting may ask for: a week (`config::seconds` holds every timeout
/// to it; a recorded latency above it is not a latency).
pub const MAX_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpFile {
    /// `mcpproxy` fills tool, arguments and filter with mcpproxy's `retrieve_tools` shapes.
    pub preset: Option<String>,
    /// Streamable-HTTP endpoint (`{port}` is replaced when launched).
    pub url: Option<String>,
    /// Or a stdio command.
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub tool: Option<String>,
    pub query_arg: Option<String>,
    /// Set to "" to send no limit argument.
    pub limit_arg: Option<String>,
    #[serde(default)]
    pub extra_args: Map<String, Value>,
    /// jq filter from the result payload to the ranked elements.
    pub filter: Option<String>,
    pub id_style: Option<IdStyle>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestFile {
    pub url: Option<String>,
    pub query_param: Option<String>,
    pub limit_param: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub filter: Option<String>,
    pub id_style: Option<IdStyle>,
}

/// The system under test, with the settings of its kind only.
#[derive(Debug, Clone)]
pub enum SutSpec {
    /// In-process BM25 over the corpus.
    Embedded,
    /// Ranked ids replayed from `--recorded` (required when built).
    Recorded { path: Option<PathBuf> },
    /// A running system searched over MCP.
    Mcp {
        name: String,
        mcp: McpFile,
        check: CatalogSpec,
    },
    /// A REST search endpoint.
    Rest {
        name: String,
        rest: RestFile,
        check: CatalogSpec,
    },
    /// A proxy evalgate starts (`mcpproxy`, `reference`, `launch`).
    Launched(Box<LaunchSpec>),
}

impl SutSpec {
    pub fn kind(&self) -> SutKind {
        match self {
            SutSpec::Embedded => SutKind::Embedded,
            SutSpec::Recorded { .. } => SutKind::Recorded,
            SutSpec::Mcp { .. } => SutKind::Mcp,
            SutSpec::Rest { .. } => SutKind::Rest,
            SutSpec::Launched(l) => l.kind,
        }
    }
}

/// What the detectors are given; each kind reads its own settings only (its
/// [`super::kind::DetectorDef`] builds it from them).
#[derive(Debug, Clone)]
pub struct DetectorSettings {
    /// Verdicts replayed from `--recorded` (required by `recorded`).
    pub recorded: Option<PathBuf>,
    /// The `[[scanner]]` tables (`scanner` requires at least one).
    pub scanners: Vec<ScannerConfig>,
    /// `[proxy_scan]`.
    pub proxy_scan: ProxyScanConfig,
    /// `[rug_pull_live]`.
    pub rug_pull_live: LiveConfig,
    /// The proxy the live detectors launch.
    pub proxy: LaunchSpec,
}
