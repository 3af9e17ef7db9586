//! The part of mcpproxy's JSON config the reference proxy reads (and the launcher writes).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// mcpproxy's config file (unknown keys are kept and ignored).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProxyConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Default number of results of `retrieve_tools` (mcpproxy: 15, range 1–1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_limit: Option<usize>,
    #[serde(rename = "mcpServers", default)]
    pub mcp_servers: Vec<ServerEntry>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One upstream server entry of `mcpServers`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServerEntry {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantined: Option<bool>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ProxyConfig {
    pub fn parse(name: &str, text: &str) -> anyhow::Result<ProxyConfig> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            anyhow::anyhow!("{name}:{}:{}: at $.{path}: {inner} (expected mcpproxy's JSON config with an `mcpServers` array)", inner.line(), inner.column())
        })
    }
}
