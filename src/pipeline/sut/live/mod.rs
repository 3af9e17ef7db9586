//! Detectors measured where they live: inside a launched proxy.
//!
//! Both detectors lay the security entries out as tools on synthetic replay servers (grouped by
//! the entry's `server`, split so that no server lists a name twice), launch the proxy the
//! settings name over them (the reference proxy unless `--sut mcpproxy` or `launch`), and wait
//! until its catalog holds exactly those tools.
//!
//! - [`scan`]: `proxy-scan`, the proxy's own security scan asked for per server;
//! - [`rug_pull`]: `rug-pull-live`, rug-pulls played against the running proxy;
//! - [`layout`]: the replay layout both serve; [`client`]: the proxy's REST API they call.

mod client;
mod layout;
pub(crate) mod rug_pull;
pub(crate) mod scan;

use crate::infra::own_binary::own_binary;
use crate::infra::process::Supervisor;
use crate::pipeline::sut::SutError;
use crate::pipeline::sut::launch::spec::LaunchSpec;
use crate::pipeline::sut::launch::{self, Plan, Quarantine, Running};
use layout::{Layout, write_specs};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// `[proxy_scan]` in evalgate.toml.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProxyScanConfig {
    /// `scanner_ids` sent with each scan request [default: none sent, the proxy's default].
    #[serde(default)]
    pub scanner_ids: Vec<String>,
    /// Findings below this severity do not flag (info < low < medium < high < critical, or a
    /// number) [default: every finding flags].
    pub severity_threshold: Option<Value>,
    /// The finding tiers that block: a finding whose `tier` (else `threat_level`) is one of
    /// these flags its entry as blocked; every other finding flags it for review only (the
    /// detector's `/review` row) [default: `["hard"]`, mcpproxy's blocking tier, which turns a
    /// server's verdict `dangerous`].
    pub blocking: Option<Vec<String>>,
    /// Seconds one server's scan may take [default: 120].
    pub scan_timeout: Option<f64>,
}

/// `[rug_pull_live]` in evalgate.toml.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LiveConfig {
    /// The proxy's MCP tool that calls an upstream tool with `{name: "server:tool",
    /// args_json: "{}"}` [default: `call_tool`; `call_tool_destructive` for --sut mcpproxy].
    pub call_tool: Option<String>,
    /// Seconds to wait for the proxy to re-list a server after list_changed [default: 10].
    pub relist_timeout: Option<f64>,
    /// Seconds to wait, after each switch, for the proxy to settle [default: max(5, 1 + 0.03 ×
    /// played tools)].
    pub settle_timeout: Option<f64>,
    /// mcpproxy's `trust_mode` written on every replay server of the play: `manual`, `scan`
    /// or `auto` [default: none written, which mcpproxy takes as `manual`]. For proxies
    /// launched with mcpproxy's config format (mcpproxy, the reference proxy).
    pub trust_mode: Option<String>,
}

/// The values mcpproxy accepts for `trust_mode` (case-sensitive).
const TRUST_MODES: [&str; 3] = ["manual", "scan", "auto"];

/// Launches the proxy over `layout` (fresh scratch directory), with `trust_mode` on every
/// server of the generated mcpproxy config when given.
async fn launch_over(
    s: &LaunchSpec,
    sup: &Supervisor,
    layout: &Layout,
    quarantine: Quarantine,
    trust_mode: Option<&str>,
    extra: impl Fn(usize, &Path) -> Vec<String>,
) -> Result<Running, SutError> {
    let name = launch::system_name(s);
    let dir = launch::scratch_dir(&name, launch::LAUNCH_SCRATCH)?;
    let root = dir.path().to_path_buf();
    let upstreams = write_specs(layout, &root, |i| extra(i, &root)).map_err(|e| {
        SutError::other(name.clone(), format!("cannot write the replay specs: {e}"))
    })?;
    let s = match trust_mode {
        None => s.clone(),
        Some(mode) => with_trust_mode(s, &upstreams, quarantine, mode)
            .map_err(|detail| SutError::other(name.clone(), detail))?,
    };
    let plan = Plan {
        upstreams,
        // everything served: the entries and any peers beside them
        want: layout.served_ids(),
        quarantine,
    };
    launch::start(&s, &plan, dir, sup).await
}

/// `s` with the generated config's `mcpServers` (the servers the launcher writes for
/// `upstreams`) each given `trust_mode: mode`, through `[sut.launch] proxy_config`.
fn with_trust_mode(
    s: &LaunchSpec,
    upstreams: &BTreeMap<String, Vec<String>>,
    quarantine: Quarantine,
    mode: &str,
) -> Result<LaunchSpec, String> {
    if !TRUST_MODES.contains(&mode) {
        return Err(format!(
            "[rug_pull_live] trust_mode = {mode:?}: mcpproxy knows {}",
            TRUST_MODES.join(", ")
        ));
    }
    // the launcher serves each replay from evalgate's own binary
    let me = own_binary().map_err(|e| format!("cannot find evalgate's own binary: {e}"))?;
    let cfg = launch::proxy_config(upstreams, &me, "", Path::new(""), "", quarantine);
    let mut servers = cfg["mcpServers"].clone();
    for server in servers.as_array_mut().into_iter().flatten() {
        server["trust_mode"] = Value::from(mode);
    }
    let mut s = s.clone();
    s.launch.proxy_config.insert("mcpServers".into(), servers);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::sut::kind::SutKind;

    #[test]
    fn a_trust_mode_goes_on_every_generated_server_and_only_mcpproxys_values_pass() {
        let s = LaunchSpec {
            kind: SutKind::Mcpproxy,
            name: None,
            mcpproxy_bin: None,
            launch: Default::default(),
            mcp: Default::default(),
            check: Default::default(),
        };
        let upstreams = BTreeMap::from([
            ("a".to_string(), vec!["replay".to_string()]),
            ("b".to_string(), vec!["replay".to_string()]),
        ]);
        let got = with_trust_mode(&s, &upstreams, Quarantine::On, "scan").unwrap();
        let servers = got.launch.proxy_config["mcpServers"].as_array().unwrap();
        assert_eq!(servers.len(), 2);
        for (server, name) in servers.iter().zip(["a", "b"]) {
            assert_eq!(server["name"], name);
            assert_eq!(server["trust_mode"], "scan");
            assert_eq!(server["quarantined"], false);
            assert_eq!(server["args"][0], "replay");
        }
        let err = with_trust_mode(&s, &upstreams, Quarantine::On, "Scan").unwrap_err();
        assert_eq!(
            err,
            "[rug_pull_live] trust_mode = \"Scan\": mcpproxy knows manual, scan, auto"
        );
    }
}
