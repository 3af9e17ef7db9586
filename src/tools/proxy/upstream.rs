//! Upstream MCP servers of the reference proxy: spawned over stdio, listed, re-listed on
//! `notifications/tools/list_changed`, and called through. Every listing is handed to the drift
//! tracker (under the same lock that publishes the tools) before the index is rebuilt.

use super::config::{OnToolDrift, ProxyConfig, ServerEntry};
use super::drift::{DriftTracker, ToolState};
use super::{ServerStatus, State};
use crate::infra::mcp::{self, Endpoint};
use crate::pipeline::dataset::Tool;
use crate::pipeline::dataset::mcp::from_definition;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use tokio::sync::RwLock;

/// How long one upstream may take to initialize and list its tools before it is retried.
const UPSTREAM_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

struct Upstream {
    /// The connection, and the supervised stdio process serving it.
    session: mcp::Session<UpstreamClient>,
    /// The latest listing as corpus tools, one per name (the first when a name repeats).
    tools: Vec<Tool>,
}

/// One listing of an upstream: its tools (one per name) and the raw definitions (all of them).
struct Listed {
    tools: Vec<Tool>,
    definitions: Vec<Value>,
}

/// Every connected upstream by name.
#[derive(Default)]
pub struct Upstreams {
    inner: RwLock<BTreeMap<String, Upstream>>,
}

impl Upstreams {
    /// Every connected upstream's tools, the drift state of every listed tool and the policy,
    /// read together (listings are published to both under the upstreams' lock).
    pub async fn view(
        &self,
        drift: &std::sync::Mutex<DriftTracker>,
    ) -> (Vec<Tool>, Vec<ToolState>, OnToolDrift) {
        let inner = self.inner.read().await;
        let tools = inner.values().flat_map(|u| u.tools.clone()).collect();
        let d = drift.lock().unwrap_or_else(|p| p.into_inner());
        (tools, d.listing(), d.mode())
    }

    /// Calls `tool` on `server`; `Err` is a message for the caller.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<CallToolResult, String> {
        let inner = self.inner.read().await;
        let up = inner
            .get(server)
            .ok_or_else(|| format!("no connected upstream server {server:?}"))?;
        if !up.tools.iter().any(|t| t.bare_name() == tool) {
            return Err(format!("server {server:?} has no tool {tool:?}"));
        }
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = args;
        let peer = up.session.service.peer().clone();
        drop(inner);
        peer.call_tool(params)
            .await
            .map_err(|e| format!("upstream {server:?} failed: {}", mcp::readable(&e)))
    }
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
        tokio::spawn(async move { refresh(&state, &name).await });
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

async fn list(
    service: &RunningService<RoleClient, UpstreamClient>,
    name: &str,
) -> Result<Listed, String> {
    let listed = service
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list failed: {}", mcp::readable(&e)))?;
    let mut tools: Vec<Tool> = Vec::with_capacity(listed.len());
    let mut definitions = Vec::with_capacity(listed.len());
    for t in &listed {
        let def = serde_json::to_value(t).map_err(|e| e.to_string())?;
        let tool = from_definition(name, &def).map_err(|e| e.to_string())?;
        // a repeated name is the drift tracker's business; the catalog keeps the first
        if !tools.iter().any(|x| x.tool_id == tool.tool_id) {
            tools.push(tool);
        }
        definitions.push(def);
    }
    Ok(Listed { tools, definitions })
}

/// Re-lists one upstream and rebuilds the index.
pub async fn refresh(state: &Arc<State>, name: &str) {
    let inner = state.upstreams.inner.read().await;
    let Some(up) = inner.get(name) else { return };
    let result = list(&up.session.service, name).await;
    drop(inner);
    match result {
        Ok(listed) => publish(state, name, listed, None).await,
        Err(e) => set_status(state, name, "error", 0, Some(e)).await,
    }
}

/// Publishes a listing of `name` (with its new connection, if any): its tools and the drift
/// tracker's view under the upstreams' lock, then its status, then the rebuilt index.
async fn publish(state: &State, name: &str, listed: Listed, connected: Option<Upstream>) {
    let n = listed.tools.len();
    {
        let mut inner = state.upstreams.inner.write().await;
        if let Some(up) = connected {
            inner.insert(name.to_string(), up);
        }
        if let Some(up) = inner.get_mut(name) {
            up.tools = listed.tools;
            // the drift tracker takes the listing, and what changed is logged
            let mut drift = state.drift.lock().unwrap_or_else(|p| p.into_inner());
            let mode = drift.mode();
            for ev in drift.observe(name, listed.definitions) {
                crate::errln!("{}", ev.log_line(mode));
            }
        }
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
                        let up = Upstream {
                            session,
                            tools: Vec::new(),
                        };
                        return publish(&st, &name, listed, Some(up)).await;
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
