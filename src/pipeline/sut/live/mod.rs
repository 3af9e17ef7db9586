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
mod rug_pull;
mod scan;

pub use rug_pull::RugPullLive;
pub use scan::ProxyScan;

use crate::infra::process::Supervisor;
use crate::pipeline::sut::SutError;
use crate::pipeline::sut::launch::spec::LaunchSpec;
use crate::pipeline::sut::launch::{self, Plan, Quarantine, Running};
use layout::{Layout, write_specs};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
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
}

/// Launches the proxy over `layout` (fresh scratch directory).
async fn launch_over(
    s: &LaunchSpec,
    sup: &Supervisor,
    layout: &Layout,
    quarantine: Quarantine,
    extra: impl Fn(usize, &Path) -> Vec<String>,
) -> Result<Running, SutError> {
    let name = launch::system_name(s);
    let dir = launch::scratch(&name)?;
    let root = dir.path().to_path_buf();
    let upstreams =
        write_specs(layout, &root, |i| extra(i, &root)).map_err(|e| SutError::Other {
            system: name.clone(),
            detail: format!("cannot write the replay specs: {e}"),
        })?;
    let plan = Plan {
        upstreams,
        // everything served: the entries and any peers beside them
        want: layout.served_ids(),
        quarantine,
    };
    launch::start(s, &plan, dir, sup).await
}
