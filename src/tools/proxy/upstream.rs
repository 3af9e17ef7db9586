//! Upstream MCP servers of the reference proxy: spawned over stdio, listed, re-listed on
//! `notifications/tools/list_changed`, and called through. Every listing is handed to the drift
//! tracker, which keeps the tools, before the index is rebuilt.

use super::config::{ProxyConfig, ServerEntry};
use super::{ServerStatus, State};
use crate::infra::mcp::{self, Endpoint};
use crate::pipeline::dataset::mcp::from_definition;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Weak};
use tokio::sync::RwLock;

/// How long one upstream may take to initialize and list its tools before it is retried.
const UPSTREAM_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Every connected upstream by name: the connection, and the supervised stdio process serving
/// it. Their tools are the drift tracker's listing.
pub type Upstreams = RwLock<BTreeMap<String, mcp::Session<UpstreamClient>>>;

/// Calls `tool` on `server`; `Err` is a message for the caller.
pub async fn call(
    state: &State,
    server: &str,
    tool: &str,
    args: Option<Map<String, Value>>,
) -> Result<CallToolResult, String> {
    let inner = state.upstreams.read().await;
    let up = inner
        .get(server)
        .ok_or_else(|| format!("no connected upstream server {server:?}"))?;
    if state.tracker().tool(server, tool).is_none() {
        return Err(format!("server {server:?} has no tool {tool:?}"));
    }
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.arguments = args;
    let peer = up.service.peer().clone();
    drop(inner);
    peer.call_tool(params)
        .await
        .map_err(|e| format!("upstream {server:?} failed: {}", mcp::readable(&e)))
}

/// The proxy's client towards one upstream: re-lists on `list_changed`.
#[derive(Clone)]
pub struct UpstreamClient {
    name: String,
    state: Weak<State>,
}

impl ClientHandler for UpstreamClient {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let Some(state) = self.state.upgrade() else {
            return;
        };
        let name = self.name.clone();
        if state.fault.ignores_list_changed() {
            crate::errln!("evalgate proxy: injected fault: ignoring list_changed from {name:?}");
            return;
        }
        // re-list it and rebuild the index
        tokio::spawn(async move {
            let inner = state.upstreams.read().await;
            let Some(up) = inner.get(&name) else { return };
            let result = list(&up.service, &name).await;
            drop(inner);
            match result {
                Ok(definitions) => publish(&state, &name, definitions).await,
                Err(e) => set_status(&state, &name, "error", 0, Some(e)).await,
            }
        });
    }
}

/// Records `name`'s status; it is connected when `ready`.
async fn set_status(
    state: &State,
    name: &str,
    status: &str,
    tool_count: usize,
    err: Option<String>,
) {
    state.servers.write().await.insert(
        name.to_string(),
        ServerStatus {
            name: name.to_string(),
            connected: status == "ready",
            status: status.to_string(),
            tool_count,
            quarantined: false,
            last_error: err,
        },
    );
}

/// The raw definitions of `name`'s tools; one the catalog could not take fails the listing.
async fn list(
    service: &RunningService<RoleClient, UpstreamClient>,
    name: &str,
) -> Result<Vec<Value>, String> {
    let listed = service
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list failed: {}", mcp::readable(&e)))?;
    let check = |t: &rmcp::model::Tool| -> Result<Value, String> {
        let def = serde_json::to_value(t).map_err(|e| e.to_string())?;
        from_definition(name, &def).map_err(|e| e.to_string())?;
        Ok(def)
    };
    listed.iter().map(check).collect()
}

/// Publishes a listing of `name`: the drift tracker takes it (and what changed is logged), then
/// its status, then the rebuilt index.
async fn publish(state: &State, name: &str, definitions: Vec<Value>) {
    let names: HashSet<_> = definitions
        .iter()
        .filter_map(|d| d["name"].as_str())
        .collect();
    let n = names.len();
    for line in state.tracker().observe(name, definitions) {
        crate::errln!("{line}");
    }
    set_status(state, name, "ready", n, None).await;
    if let Err(e) = state.reindex().await {
        crate::errln!("evalgate proxy: reindex failed: {e:#}");
    }
}

fn endpoint(e: &ServerEntry) -> Result<Endpoint, String> {
    let proto = e.protocol.as_deref().unwrap_or("stdio");
    if !matches!(proto, "stdio" | "auto") || e.url.is_some() && e.command.is_none() {
        return Err(format!(
            "protocol {proto:?}: the reference proxy supports stdio upstreams only"
        ));
    }
    let program = e.command.clone().ok_or("no `command` for a stdio server")?;
    Ok(Endpoint::Stdio {
        program,
        args: e.args.clone(),
        env: e.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        cwd: e.working_dir.as_ref().map(Into::into),
    })
}

/// Connects every enabled, non-quarantined upstream, each in its own task.
pub async fn start_all(state: Arc<State>, cfg: &ProxyConfig) {
    for e in &cfg.mcp_servers {
        let status = match (e.enabled, e.quarantined) {
            (Some(false), _) => "disabled",
            (_, Some(true)) => "quarantined",
            _ => "connecting",
        };
        set_status(&state, &e.name, status, 0, None).await;
        if status != "connecting" {
            continue;
        }
        let st = state.clone();
        let entry = e.clone();
        tokio::spawn(async move {
            let name = entry.name.clone();
            let ep = match endpoint(&entry) {
                Ok(ep) => ep,
                Err(err) => return set_status(&st, &name, "error", 0, Some(err)).await,
            };
            let client = UpstreamClient {
                name: name.clone(),
                state: Arc::downgrade(&st),
            };
            // the upstream stays in the proxy's process group, so stopping that group stops it
            // too; like mcpproxy, a server that fails to come up is retried a few times, every
            // failure logged so that a launcher's log tail shows it
            let opts = mcp::ConnectOpts {
                sup: &st.sup,
                timeout: UPSTREAM_TIMEOUT,
                name: &name,
            };
            let mut last_err = String::new();
            for attempt in 1..=3u64 {
                let attempt_fut = async {
                    let session = mcp::connect(&ep, client.clone(), &opts)
                        .await
                        .map_err(|e| format!("{e:#}"))?;
                    match list(&session.service, &name).await {
                        Ok(listed) => Ok((session, listed)),
                        Err(e) => Err(format!("{e}{}", mcp::child_story(session.child.as_ref()))),
                    }
                };
                let e = match tokio::time::timeout(UPSTREAM_TIMEOUT, attempt_fut).await {
                    Ok(Ok((session, listed))) => {
                        st.upstreams.write().await.insert(name.clone(), session);
                        return publish(&st, &name, listed).await;
                    }
                    Ok(Err(e)) => e,
                    Err(_) => format!(
                        "no answer to initialize + tools/list within {} s",
                        UPSTREAM_TIMEOUT.as_secs()
                    ),
                };
                crate::errln!(
                    "evalgate proxy: upstream {name:?} failed (attempt {attempt}/3): {e}"
                );
                last_err = e;
                tokio::time::sleep(std::time::Duration::from_millis(500 * attempt)).await;
            }
            set_status(&st, &name, "error", 0, Some(last_err)).await;
        });
    }
}
