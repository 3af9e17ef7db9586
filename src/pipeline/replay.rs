//! The replay server: a stdio MCP server (rmcp) that serves exactly one server's frozen tool
//! definitions, so a system under test sees the corpus without touching the network.
//!
//! `tools/call` answers deterministically, naming the tool and echoing the arguments. For
//! rug-pull tests it can switch tools to their `after` definitions after the first listing or the
//! first call and send `notifications/tools/list_changed`, or switch back and forth when told to
//! by a control file (evalgate's live rug-pull measurement drives it that way, and learns from
//! the listed file when the client has re-listed: its first line names the definitions last
//! listed, `before` or `after`, its second how many listings the replay has answered). The
//! control file's first line names the definitions to serve; any change of its text sends
//! list_changed, so a new second line asks the client to re-list without a change.

use crate::infra::files::{read_to_string, write_atomic};
use crate::pipeline::dataset::mcp::to_mcp;
use crate::pipeline::dataset::{Corpus, SecurityCorpus};
use anyhow::{Context, bail};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpTool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::Mutex;

/// When a rug-pull switches definitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RugPull {
    /// Never.
    #[default]
    Off,
    /// After the first `tools/list` has been answered.
    AfterList,
    /// After the first `tools/call` has been answered.
    AfterCall,
}

/// How a replay server names the tools it serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServedNames {
    /// The corpus names (`create_branch`).
    #[default]
    Bare,
    /// `<server>__<tool>` (`github__create_branch`), unique across servers.
    Prefixed,
}

/// What one replay server serves (also the `--spec` file format).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ReplaySpec {
    pub server: String,
    /// Definitions as first served, in order.
    pub tools: Vec<McpTool>,
    /// Tool name → the definitions that replace it when the rug is pulled (several = the
    /// re-listing repeats the name).
    #[serde(default)]
    pub changes: BTreeMap<String, Vec<McpTool>>,
    #[serde(skip)]
    pub rug_pull: RugPull,
}

impl ReplaySpec {
    /// The tools of `server` in the corpus, plus the security entries that name that server.
    pub fn new(
        corpus: &Corpus,
        security: Option<&SecurityCorpus>,
        server: &str,
    ) -> anyhow::Result<ReplaySpec> {
        let mut tools = corpus
            .tools
            .iter()
            .filter(|t| t.server_name() == server)
            .map(to_mcp)
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut changes = BTreeMap::new();
        let entries = security.iter().flat_map(|s| &s.entries);
        for e in entries.filter(|e| e.server.as_deref() == Some(server)) {
            let def = e.before.clone().unwrap_or_else(|| {
                json!({
                    "name": e.tool.clone().unwrap_or_else(|| e.id.clone()),
                    "description": e.description,
                    "inputSchema": e.input_schema.clone().unwrap_or_else(|| json!({"type": "object"})),
                })
            });
            let def: McpTool = serde_json::from_value(def)
                .with_context(|| format!("security entry {}: not an MCP tool definition", e.id))?;
            if e.after.is_some() {
                let id = &e.id;
                let bad = || format!("security entry {id}: `after` is not an MCP tool definition");
                let defs = e
                    .afters()
                    .iter()
                    .map(|d| serde_json::from_value(d.clone()).with_context(bad));
                changes.insert(def.name.to_string(), defs.collect::<anyhow::Result<_>>()?);
            }
            tools.push(def);
        }
        if tools.is_empty() {
            bail!(
                "no tools for server {server:?}: the corpus has no `{server}:...` tool and no security entry names that server"
            );
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(t) = tools.iter().find(|t| !seen.insert(t.name.to_string())) {
            bail!("server {server:?} would list tool {:?} twice", t.name);
        }
        Ok(ReplaySpec {
            server: server.to_string(),
            tools,
            changes,
            rug_pull: RugPull::Off,
        })
    }

    /// Serves every tool (and every rug-pull replacement) as `<server>__<tool>`.
    pub fn prefix_names(&mut self) {
        let server = &self.server;
        let prefix = |name: &str| format!("{server}__{name}");
        let replaced = self.changes.values_mut().flatten();
        for t in self.tools.iter_mut().chain(replaced) {
            t.name = prefix(&t.name).into();
        }
        let changes = std::mem::take(&mut self.changes).into_iter();
        self.changes = changes
            .map(|(name, after)| (prefix(&name), after))
            .collect();
    }

    /// Reads a `--spec` file.
    pub fn from_file(path: &Path) -> anyhow::Result<ReplaySpec> {
        let text = read_to_string(path)
            .with_context(|| format!("{}: cannot read the replay spec", path.display()))?;
        serde_json::from_str(&text).with_context(|| {
            format!(
                "{}: not a replay spec (expected {{server, tools: [MCP tool definitions], changes: {{name: [definitions]}}}})",
                path.display()
            )
        })
    }
}

struct State {
    switched: bool,
    /// `tools/list` requests answered so far.
    listings: u64,
    /// The switch file's text as last followed.
    switch_text: String,
}

/// Where a replay is told to switch and where it tells which definitions it last listed (and
/// how many listings it has answered, on a second line).
#[derive(Debug, Clone, Default)]
pub struct Control {
    pub switch_file: Option<PathBuf>,
    pub listed_file: Option<PathBuf>,
}

/// The rmcp handler.
#[derive(Clone)]
pub struct Replay {
    spec: Arc<ReplaySpec>,
    /// The definitions served before the switch, and after it.
    serving: Arc<[Vec<McpTool>; 2]>,
    state: Arc<Mutex<State>>,
    control: Arc<Control>,
}

/// Whether a switch file's text asks for the `after` definitions: its first line is `after`.
fn wants_after(text: &str) -> bool {
    text.lines().next().is_some_and(|l| l.trim() == "after")
}

impl Replay {
    pub fn with_control(spec: ReplaySpec, control: Control) -> Self {
        let after = |t: &McpTool| spec.changes.get(t.name.as_ref()).map(Vec::as_slice);
        let switched = spec
            .tools
            .iter()
            .flat_map(|t| after(t).unwrap_or(std::slice::from_ref(t)));
        let serving = Arc::new([spec.tools.clone(), switched.cloned().collect()]);
        let switch_text = control
            .switch_file
            .as_deref()
            .and_then(|p| read_to_string(p).ok())
            .unwrap_or_default();
        Replay {
            spec: Arc::new(spec),
            serving,
            state: Arc::new(Mutex::new(State {
                switched: wants_after(&switch_text),
                listings: 0,
                switch_text,
            })),
            control: Arc::new(control),
        }
    }

    /// Follows the switch file until the client goes away: each change of its text serves the
    /// definitions its first line names and sends list_changed (a file that cannot be read is
    /// no change).
    async fn follow_switch_file(self, peer: rmcp::Peer<RoleServer>) {
        let Some(path) = self.control.switch_file.clone() else {
            return;
        };
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let Ok(text) = read_to_string(&path) else {
                continue;
            };
            let mut st = self.state.lock().await;
            if st.switch_text != text {
                st.switched = wants_after(&text);
                st.switch_text = text;
                drop(st);
                if peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
        }
    }

    /// Switches to the `after` definitions and notifies the client (once).
    async fn pull_rug(&self, ctx: &RequestContext<RoleServer>) {
        let mut st = self.state.lock().await;
        if st.switched || self.spec.changes.is_empty() {
            return;
        }
        st.switched = true;
        drop(st);
        let peer = ctx.peer.clone();
        tokio::spawn(async move {
            let _ = peer.notify_tool_list_changed().await;
        });
    }
}

impl ServerHandler for Replay {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            format!("evalgate-replay/{}", self.spec.server),
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (switched, listings) = {
            let mut st = self.state.lock().await;
            st.listings += 1;
            (st.switched, st.listings)
        };
        let tools = self.serving[switched as usize].clone();
        if let Some(p) = &self.control.listed_file {
            // written as the answer leaves: the client has asked, not yet applied anything
            let state = if switched { "after" } else { "before" };
            let _ = write_atomic(p, format!("{state}\n{listings}\n").as_bytes());
        }
        if self.spec.rug_pull == RugPull::AfterList {
            self.pull_rug(&ctx).await;
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let serving = &self.serving[self.state.lock().await.switched as usize];
        if !serving.iter().any(|t| t.name == request.name) {
            let (tool, server) = (&request.name, &self.spec.server);
            let m = format!("unknown tool {tool:?} on replay server {server:?}");
            return Err(ErrorData::invalid_params(m, None));
        }
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let payload = json!({"replayed": true, "server": self.spec.server, "tool": request.name, "arguments": args});
        if self.spec.rug_pull == RugPull::AfterCall {
            self.pull_rug(&ctx).await;
        }
        Ok(CallToolResult::structured(payload).into())
    }
}

/// Serves on stdin/stdout until the client goes away.
pub async fn serve_stdio(replay: Replay) -> anyhow::Result<()> {
    let service = replay
        .clone()
        .serve(rmcp::transport::stdio())
        .await
        .context("replay: MCP initialize failed")?;
    tokio::spawn(replay.follow_switch_file(service.peer().clone()));
    let quit = service.waiting().await;
    quit.map(drop).context("replay: server task failed")
}

/// Serves over Streamable HTTP at `/mcp` on `listener` until the process is stopped: one
/// session per client, each with the same tools. (Rug-pulls are played over stdio only.)
pub async fn serve_http(replay: Replay, listener: tokio::net::TcpListener) -> anyhow::Result<()> {
    let mcp: StreamableHttpService<Replay, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(replay.clone()),
        Default::default(),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", mcp);
    axum::serve(listener, app)
        .await
        .context("replay: HTTP server failed")
}

#[cfg(test)]
mod tests {
    use super::wants_after;

    #[test]
    fn the_switch_files_first_line_names_the_definitions_served() {
        assert!(wants_after("after"));
        assert!(wants_after("after\n"));
        assert!(!wants_after("before\nping 1\n"));
        assert!(!wants_after("afterwards"));
        assert!(!wants_after(""));
    }
}
