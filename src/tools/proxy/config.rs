//! The part of mcpproxy's JSON config the reference proxy reads (and the launcher writes).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// mcpproxy's config file (unknown keys are kept and ignored).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProxyConfig {
    pub listen: Option<String>,
    pub api_key: Option<String>,
    /// Default number of results of `retrieve_tools` (mcpproxy: 15, range 1–1000).
    pub tools_limit: Option<usize>,
    /// mcpproxy's quarantine switch; absent means on (see [`ProxyConfig::quarantine`]).
    pub quarantine_enabled: Option<bool>,
    /// evalgate extension: what the proxy does with a tool whose definition drifted from its
    /// approved baseline (`block`, the default, or `log`).
    pub on_tool_drift: OnToolDrift,
    /// evalgate extension: serve `/mcp` with sessions (`Mcp-Session-Id`) and every answer as a
    /// server-sent event (rmcp's session mode, the reference proxy's way until 2026-11-25).
    /// Absent or `false`: stateless, each answer one `application/json` body.
    pub mcp_sessions: Option<bool>,
    #[serde(rename = "mcpServers")]
    pub mcp_servers: Vec<ServerEntry>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One upstream server entry of `mcpServers`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServerEntry {
    pub name: String,
    pub protocol: Option<String>,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub working_dir: Option<String>,
    pub url: Option<String>,
    pub enabled: Option<bool>,
    pub quarantined: Option<bool>,
    /// mcpproxy's `auto` | `scan` | `manual`; `auto` approves every change (no drift tracking).
    pub trust_mode: Option<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `on_tool_drift`: the policy for a tool whose definition drifted from its approved baseline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnToolDrift {
    /// Keep the tool out of the index and refuse calls to it (the default).
    #[default]
    Block,
    /// Report the drift and leave the tool searchable and callable (observe mode).
    Log,
}

impl std::fmt::Display for OnToolDrift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OnToolDrift::Block => "block",
            OnToolDrift::Log => "log",
        })
    }
}

impl<'de> Deserialize<'de> for OnToolDrift {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Option::<Value>::deserialize(d)? {
            None | Some(Value::Null) => Ok(OnToolDrift::default()),
            Some(Value::String(s)) if s == "block" => Ok(OnToolDrift::Block),
            Some(Value::String(s)) if s == "log" => Ok(OnToolDrift::Log),
            Some(other) => Err(serde::de::Error::custom(format!(
                "`on_tool_drift` must be \"block\" or \"log\", got {other}"
            ))),
        }
    }
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

    /// Whether quarantine is on (mcpproxy: `quarantine_enabled` absent means true).
    pub fn quarantine(&self) -> bool {
        self.quarantine_enabled != Some(false)
    }

    /// Whether tool definitions of `server` are tracked for drift: quarantine on and the
    /// server's `trust_mode` is not `auto` (auto-approved changes are never drift).
    pub fn drift_tracked(&self, server: &ServerEntry) -> bool {
        self.quarantine() && server.trust_mode.as_deref() != Some("auto")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_keys_default_to_quarantine_on_and_block() {
        let c = ProxyConfig::parse("t", r#"{"mcpServers":[{"name":"a"}],"x":1}"#).unwrap();
        assert_eq!(c.on_tool_drift, OnToolDrift::Block);
        assert_eq!(c.quarantine_enabled, None);
        assert!(c.quarantine());
        assert!(c.drift_tracked(&c.mcp_servers[0]));
        assert!(c.other.contains_key("x"));
        assert!(!c.other.contains_key("on_tool_drift"));

        let c = ProxyConfig::parse(
            "t",
            r#"{"quarantine_enabled":true,"on_tool_drift":"log","mcpServers":[{"name":"a","trust_mode":"auto"},{"name":"b","trust_mode":"manual"}]}"#,
        )
        .unwrap();
        assert_eq!(c.on_tool_drift, OnToolDrift::Log);
        assert!(!c.drift_tracked(&c.mcp_servers[0]));
        assert!(c.drift_tracked(&c.mcp_servers[1]));
        assert!(!c.other.contains_key("quarantine_enabled"));
        assert!(!c.mcp_servers[0].other.contains_key("trust_mode"));

        let c = ProxyConfig::parse(
            "t",
            r#"{"quarantine_enabled":false,"mcpServers":[{"name":"a"}]}"#,
        )
        .unwrap();
        assert!(!c.quarantine());
        assert!(!c.drift_tracked(&c.mcp_servers[0]));
        // written back, the policy key round-trips
        let mut c = c;
        c.on_tool_drift = OnToolDrift::Log;
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["on_tool_drift"], "log");
    }

    #[test]
    fn a_bad_on_tool_drift_names_the_key_and_the_values() {
        for bad in [r#""warn""#, "true", "1"] {
            let text = format!(r#"{{"on_tool_drift":{bad},"mcpServers":[]}}"#);
            let e = ProxyConfig::parse("cfg.json", &text)
                .unwrap_err()
                .to_string();
            assert!(e.contains("on_tool_drift"), "{e}");
            assert!(e.contains("\"block\"") && e.contains("\"log\""), "{e}");
            assert!(e.starts_with("cfg.json:1:"), "{e}");
        }
    }
}
