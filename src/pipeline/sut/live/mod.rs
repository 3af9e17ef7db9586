//! Detectors measured where they live: inside a launched proxy.
//!
//! Both detectors lay the security entries out as tools on synthetic replay servers (grouped by
//! the entry's `server`, split so that no server lists a name twice), launch the proxy the
//! settings name over them (the reference proxy unless `--sut mcpproxy` or `launch`), and wait
//! until its catalog holds exactly those tools.
//!
//! - `scan`: `proxy-scan`, the proxy's own security scan asked for per server;
//! - `rug_pull`: `rug-pull-live`, rug-pulls played against the running proxy;
//! - `layout`: the replay layout both serve; here, the launch and the proxy's REST API
//!   (mcpproxy's `/api/v1/…`) they call.

mod layout;
pub(crate) mod rug_pull;
pub(crate) mod scan;

use crate::infra::http::{MAX_API_ANSWER, read_body};
use crate::infra::process::Supervisor;
use crate::pipeline::sut::SutError;
use crate::pipeline::sut::launch::spec::LaunchSpec;
use crate::pipeline::sut::launch::{self, Plan, Quarantine, Running};
use layout::{Layout, write_specs};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

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

/// Launches the proxy over `layout` (fresh scratch directory); a play's `trust_mode` is
/// checked first.
async fn launch_over(
    s: &LaunchSpec,
    sup: &Supervisor,
    layout: &Layout,
    quarantine: Quarantine,
    extra: impl Fn(usize, &Path) -> Vec<String>,
) -> Result<Running, SutError> {
    let name = launch::system_name(s);
    let dir = launch::scratch_dir(&name, launch::LAUNCH_SCRATCH)?;
    let upstreams = write_specs(layout, dir.path(), extra).map_err(|e| {
        SutError::other(name.clone(), format!("cannot write the replay specs: {e}"))
    })?;
    if let Quarantine::On(Some(mode)) = &quarantine {
        trust_mode_known(mode).map_err(|detail| SutError::other(name.clone(), detail))?;
    }
    let plan = Plan {
        upstreams,
        // everything served: the entries and any peers beside them
        want: layout.served_ids(),
        quarantine,
    };
    launch::start(s, &plan, dir, sup).await
}

/// `Ok` when mcpproxy knows `mode` as a `trust_mode`.
fn trust_mode_known(mode: &str) -> Result<(), String> {
    if TRUST_MODES.contains(&mode) {
        return Ok(());
    }
    let known = TRUST_MODES.join(", ");
    Err(format!(
        "[rug_pull_live] trust_mode = {mode:?}: mcpproxy knows {known}"
    ))
}

/// GET/POST under the proxy's REST API, each bounded by 10 s; returns `data` of the envelope.
async fn api(
    run: &Running,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> Result<Value, String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default();
    let mut req = http
        .request(method.clone(), format!("{}{path}", run.base))
        .header("X-API-Key", &run.api_key);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let fail = |e: &dyn std::fmt::Display| format!("{method} {path}: {e}");
    let resp = req.send().await.map_err(|e| fail(&e))?;
    let status = resp.status();
    let text = read_body(resp, MAX_API_ANSWER)
        .await
        .map_err(|e| fail(&e))?;
    envelope(&method, path, status, &text)
}

/// `data` of an answer's envelope (`{success, data, error}`), or why there is none: a body
/// that is not JSON, an HTTP error, or `success: false`. An answer without an envelope is its
/// own data.
fn envelope(
    method: &reqwest::Method,
    path: &str,
    status: reqwest::StatusCode,
    text: &str,
) -> Result<Value, String> {
    let v: Value = serde_json::from_str(text).map_err(|_| {
        let head: String = text.chars().take(200).collect();
        format!("{method} {path}: HTTP {status}, body is not JSON: {head:?}")
    })?;
    if !status.is_success() || v.get("success") == Some(&Value::Bool(false)) {
        return Err(format!(
            "{method} {path}: HTTP {status}: {}",
            v.get("error").cloned().unwrap_or(v.clone())
        ));
    }
    Ok(v.get("data").cloned().unwrap_or(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::{Method, StatusCode};
    use serde_json::json;
    use std::collections::BTreeMap;

    #[test]
    fn a_trust_mode_goes_on_every_generated_server_and_only_mcpproxys_values_pass() {
        let upstreams = BTreeMap::from([
            ("a".to_string(), vec!["replay".to_string()]),
            ("b".to_string(), vec!["replay".to_string()]),
        ]);
        let on = Quarantine::On(Some("scan".into()));
        let cfg = launch::proxy_config(&upstreams, Path::new("e"), "", Path::new(""), "", on);
        let servers = cfg["mcpServers"].as_array().unwrap();
        assert_eq!(servers.len(), 2);
        for (server, name) in servers.iter().zip(["a", "b"]) {
            assert_eq!(server["name"], name);
            assert_eq!(server["trust_mode"], "scan");
            assert_eq!(server["quarantined"], false);
            assert_eq!(server["args"][0], "replay");
        }
        assert_eq!(trust_mode_known("scan"), Ok(()));
        let err = trust_mode_known("Scan").unwrap_err();
        assert_eq!(
            err,
            "[rug_pull_live] trust_mode = \"Scan\": mcpproxy knows manual, scan, auto"
        );
    }

    #[test]
    fn the_envelope_gives_its_data_or_says_why_not() {
        let get = |status, text| envelope(&Method::GET, "/api/v1/tools", status, text);
        assert_eq!(
            get(StatusCode::OK, r#"{"success":true,"data":{"tools":[]}}"#),
            Ok(json!({"tools": []}))
        );
        // no envelope: the answer is its own data
        assert_eq!(
            get(StatusCode::OK, r#"{"tools":[1]}"#),
            Ok(json!({"tools": [1]}))
        );
        assert_eq!(
            get(
                StatusCode::OK,
                r#"{"success":false,"error":"no such server"}"#
            ),
            Err(r#"GET /api/v1/tools: HTTP 200 OK: "no such server""#.into())
        );
        assert_eq!(
            get(StatusCode::NOT_FOUND, r#"{"detail":"gone"}"#),
            Err(r#"GET /api/v1/tools: HTTP 404 Not Found: {"detail":"gone"}"#.into())
        );
        assert_eq!(
            get(StatusCode::BAD_GATEWAY, "<html>bad gateway</html>"),
            Err(r#"GET /api/v1/tools: HTTP 502 Bad Gateway, body is not JSON: "<html>bad gateway</html>""#.into())
        );
        let long = "x".repeat(500);
        let e = get(StatusCode::OK, &long).unwrap_err();
        assert!(e.ends_with(&format!("{:?}", "x".repeat(200))), "{e}");
    }
}
