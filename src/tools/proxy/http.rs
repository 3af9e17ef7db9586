//! The reference proxy's HTTP surface: `/mcp` and mcpproxy's REST endpoints, with the
//! tool-definition drift policy applied (approval states in `/api/v1/tools`, the per-tool diff,
//! and `call_tool` refused on a drifted tool in `block` mode).

use super::State;
use super::config::OnToolDrift;
use super::scan::{self, SCANNER_ID, ScanJob};
use crate::pipeline::dataset::{RawJson, Tool};
use crate::pipeline::sut::drift::fingerprint;
use axum::Router;
use axum::extract::{Path, Request};
use axum::extract::{Query, State as AxState};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpTool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// mcpproxy's maximum `limit` for searches.
const MAX_LIMIT: usize = 100;

pub fn router(state: Arc<State>) -> Router {
    let st = state.clone();
    // Stateless by default, each answer one `application/json` body as mcpproxy's mcp-go gives
    // (nothing here needs a session, which routes every call through a worker task and frames
    // it as a server-sent event); `mcp_sessions: true` keeps rmcp's session mode.
    let mut config = StreamableHttpServerConfig::default();
    if !state.mcp_sessions {
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(true);
    }
    let mcp: StreamableHttpService<ProxyMcp, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(ProxyMcp { state: st.clone() }),
        Default::default(),
        config,
    );
    Router::new()
        .route("/api/v1/tools", get(tools))
        .route("/api/v1/index/search", get(search))
        .route("/api/v1/servers", get(servers))
        .route("/api/v1/servers/{name}/scan", post(scan_start))
        .route(
            "/api/v1/servers/{name}/scan/status",
            get(|s, n| scan_job(s, n, false)),
        )
        .route(
            "/api/v1/servers/{name}/scan/report",
            get(|s, n| scan_job(s, n, true)),
        )
        .route("/api/v1/servers/{name}/tools/{tool}/diff", get(tool_diff))
        .route_layer(middleware::from_fn_with_state(state.clone(), auth))
        .route("/healthz", get(|| async { Json(json!({"status": "ok"})) }))
        .route("/readyz", get(readyz))
        .with_state(state)
        .nest_service("/mcp", mcp)
}

fn envelope(data: Value) -> Response {
    Json(json!({"success": true, "data": data})).into_response()
}

fn error(status: StatusCode, msg: &str) -> Response {
    (status, Json(json!({"success": false, "error": msg}))).into_response()
}

/// mcpproxy's API-key check on the REST endpoints: `X-API-Key`, `Authorization: Bearer`, or
/// `?apikey=`.
async fn auth(
    AxState(state): AxState<Arc<State>>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
    req: Request,
    next: Next,
) -> Response {
    if let Some(key) = &state.api_key {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let bearer = header("authorization").and_then(|v| v.strip_prefix("Bearer "));
        let given = [
            header("x-api-key"),
            bearer,
            q.get("apikey").map(String::as_str),
        ];
        if !given.into_iter().flatten().any(|k| k == key) {
            return error(StatusCode::UNAUTHORIZED, "missing or invalid API key");
        }
    }
    next.run(req).await
}

async fn readyz(AxState(state): AxState<Arc<State>>) -> Response {
    let servers = state.servers.read().await;
    let ready = servers.values().all(|s| s.status != "connecting");
    Json(json!({"ready": ready})).into_response()
}

async fn tools(AxState(state): AxState<Arc<State>>) -> Response {
    let cat = state.catalog.lock().await;
    let mut changed = 0;
    let tools: Vec<Value> = cat
        .listing
        .iter()
        .map(|t| {
            let def = t.current();
            let mut v = json!({
                "name": t.name,
                "server_name": t.server,
                "description": def.get("description").and_then(Value::as_str).unwrap_or_default(),
                "schema": def.get("inputSchema"),
                "annotations": def.get("annotations"),
                "approval_status": t.approval_status(),
                "hash": t.hash(),
            });
            if t.drifted() {
                changed += 1;
                v["held_reason"] = json!(DRIFT_REASON);
                v["held_verdict"] = json!("drift");
                v["held_signals"] = json!(t.aspects);
            }
            v
        })
        .collect();
    let n = tools.len();
    envelope(
        json!({"tools": tools, "stats": {"total": n, "approved": n - changed, "changed": changed}}),
    )
}

/// `held_reason` of a drifted tool and the head of a blocked call's error.
const DRIFT_REASON: &str = "tool_definition_drift";

async fn tool_diff(
    AxState(state): AxState<Arc<State>>,
    Path((name, tool)): Path<(String, String)>,
) -> Response {
    if !state.servers.read().await.contains_key(&name) {
        return error(StatusCode::NOT_FOUND, &format!("server {name:?} not found"));
    }
    let drift = state.tracker();
    let Some(t) = drift.tool(&name, &tool) else {
        let msg = format!("server {name:?} lists no tool {tool:?}");
        return error(StatusCode::NOT_FOUND, &msg);
    };
    envelope(json!({
        "server_name": t.server,
        "tool": t.name,
        "approval_status": t.approval_status(),
        "aspects": t.aspects,
        "baseline": t.baseline,
        "current": t.current_all(),
        "baseline_hash": fingerprint(&t.baseline),
        "hash": t.hash(),
    }))
}

async fn servers(AxState(state): AxState<Arc<State>>) -> Response {
    let servers = state.servers.read().await;
    envelope(json!({"servers": servers.values().collect::<Vec<_>>()}))
}

async fn scan_start(
    AxState(state): AxState<Arc<State>>,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let req: Value = match serde_json::from_slice(&body) {
        _ if body.is_empty() => json!({}),
        Ok(v) => v,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("invalid JSON body: {e}")),
    };
    if let Some(ids) = req.get("scanner_ids").and_then(Value::as_array)
        && !ids.is_empty()
        && !ids.iter().any(|i| i == SCANNER_ID)
    {
        let msg = format!("unknown scanner ids; this proxy has {SCANNER_ID:?}");
        return error(StatusCode::BAD_REQUEST, &msg);
    }
    match state.servers.read().await.get(&name) {
        None => return error(StatusCode::NOT_FOUND, &format!("server {name:?} not found")),
        Some(s) if !s.connected => {
            let msg = format!("server {name:?} is not connected ({})", s.status);
            return error(StatusCode::CONFLICT, &msg);
        }
        Some(_) => {}
    }
    let job = scan::start(state, name).await;
    (StatusCode::ACCEPTED, envelope(json!(job))).into_response()
}

/// `…/scan/status` (`report` false) or `…/scan/report` of `name`'s latest scan.
async fn scan_job(
    AxState(state): AxState<Arc<State>>,
    Path(name): Path<String>,
    report: bool,
) -> Response {
    match state.scans.lock().await.get(&name) {
        None => error(StatusCode::NOT_FOUND, &format!("no scan of {name:?} yet")),
        Some(j) if !report => envelope(json!(j)),
        Some(ScanJob {
            report: Some(r), ..
        }) => envelope(r.clone()),
        Some(j) => {
            let msg = format!("the scan of {name:?} is {}", j.status);
            error(StatusCode::CONFLICT, &msg)
        }
    }
}

async fn search(
    AxState(state): AxState<Arc<State>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let query = q.get("q").map_or("", |q| q.trim()).to_string();
    if query.is_empty() {
        return error(StatusCode::BAD_REQUEST, "query parameter `q` is required");
    }
    let limit = match q.get("limit").map(String::as_str) {
        None | Some("") => 10,
        Some(s) => match s.parse::<usize>() {
            Ok(n) => n.min(MAX_LIMIT),
            Err(_) => {
                let msg = format!("limit must be a non-negative integer, got {s:?}");
                return error(StatusCode::BAD_REQUEST, &msg);
            }
        },
    };
    if let Some(garbage) = state.fault_for_search().await {
        return (StatusCode::OK, garbage).into_response();
    }
    let cat = state.catalog.lock().await;
    let results: Vec<Value> = match cat.search(&query, limit) {
        Ok(r) => r
            .into_iter()
            .map(|(t, score)| json!({"tool": {"name": t.bare_name(), "server_name": t.server_name(), "description": t.description}, "score": score, "matches": []}))
            .collect(),
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}")),
    };
    let n = results.len();
    envelope(json!({"results": results, "query": query, "total": n}))
}

/// `retrieve_tools`' answer (mcpproxy's full mode), written straight from the catalog: the
/// schemas and annotations are the catalog's JSON text as it is kept, not re-built as trees for
/// every answer. Field order and number forms are those of the `json!` object it replaces (the
/// test `retrieve_answer_is_the_json_object_it_replaces` holds it to that).
#[derive(serde::Serialize)]
struct RetrieveAnswer<'a> {
    tools: Vec<FoundTool<'a>>,
    query: &'a str,
    total: usize,
    usage_instructions: &'static str,
}

#[derive(serde::Serialize)]
struct FoundTool<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(rename = "inputSchema")]
    input_schema: Option<&'a RawJson>,
    /// As f64: the f32 score widened, as `json!` wrote it.
    score: f64,
    server: &'a str,
    annotations: Option<&'a RawJson>,
    call_with: &'static str,
}

impl<'a> FoundTool<'a> {
    fn new(t: &'a Tool, score: f32) -> FoundTool<'a> {
        FoundTool {
            name: &t.tool_id,
            description: &t.description,
            input_schema: t.schema.as_ref(),
            score: f64::from(score),
            server: t.server_name(),
            annotations: t.annotations.as_ref(),
            call_with: "call_tool",
        }
    }
}

const USAGE_INSTRUCTIONS: &str =
    "Call a tool with call_tool {\"name\": \"server:tool\", \"args\": {...}}";

/// The MCP side: `retrieve_tools` and `call_tool` in mcpproxy's shapes.
#[derive(Clone)]
pub struct ProxyMcp {
    state: Arc<State>,
}

fn tool_error(msg: &str) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(msg.to_string())]).into()
}

impl ProxyMcp {
    async fn retrieve(&self, args: &serde_json::Map<String, Value>) -> CallToolResponse {
        let Some(query) = args
            .get("query")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|q| !q.is_empty())
        else {
            return tool_error("`query` is required: a non-empty string describing the task");
        };
        let limit = match args.get("limit") {
            _ if self.state.fault.ignores_limit() => self.state.tools_limit,
            None | Some(Value::Null) => self.state.tools_limit,
            Some(v) => match v.as_u64() {
                Some(n) => (n as usize).min(MAX_LIMIT),
                None => return tool_error("`limit` must be a non-negative integer"),
            },
        };
        if let Some(garbage) = self.state.fault_for_search().await {
            return CallToolResult::success(vec![ContentBlock::text(garbage)]).into();
        }
        let cat = self.state.catalog.lock().await;
        let found = match cat.search(query, limit) {
            Ok(f) => f,
            Err(e) => return tool_error(&format!("search failed: {e:#}")),
        };
        let answer = RetrieveAnswer {
            total: found.len(),
            tools: found
                .iter()
                .map(|(t, score)| FoundTool::new(t, *score))
                .collect(),
            query,
            usage_instructions: USAGE_INSTRUCTIONS,
        };
        match serde_json::to_string(&answer) {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]).into(),
            Err(e) => tool_error(&format!("search failed: {e}")),
        }
    }

    async fn call(&self, args: &serde_json::Map<String, Value>) -> CallToolResponse {
        let Some(name) = args.get("name").and_then(Value::as_str) else {
            return tool_error(
                "`name` is required: the `server:tool` id returned by retrieve_tools",
            );
        };
        let Some((server, tool)) = name.split_once(':') else {
            return tool_error(&format!("`name` must be `server:tool`, got {name:?}"));
        };
        let tool_args = match (args.get("args"), args.get("args_json")) {
            (Some(Value::Object(o)), _) => Some(o.clone()),
            (_, Some(Value::String(s))) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(o)) => Some(o),
                _ => return tool_error("`args_json` must hold a JSON object"),
            },
            (None, None) => None,
            _ => return tool_error("`args` must be an object"),
        };
        let held = {
            let drift = self.state.tracker();
            drift
                .tool(server, tool)
                .filter(|t| t.drifted())
                .map(|t| (drift.mode, t.aspects.join(", ")))
        };
        match held {
            Some((OnToolDrift::Block, aspects)) => {
                return tool_error(&format!(
                    "blocked: {DRIFT_REASON}: the definition of {name} changed since it was approved [{aspects}], so the call was not forwarded. To repair: revert the upstream definition of {name} to its approved baseline, or restart the proxy to re-baseline (GET /api/v1/servers/{server}/tools/{tool}/diff shows the change)"
                ));
            }
            Some((OnToolDrift::Log, _)) => {
                crate::errln!("evalgate proxy: tool_drift call allowed (log mode) {name}");
            }
            None => {}
        }
        match super::upstream::call(&self.state, server, tool, tool_args).await {
            Ok(r) => r.into(),
            Err(e) => tool_error(&e),
        }
    }
}

impl ServerHandler for ProxyMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("evalgate-proxy", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = json!([
            {"name": "retrieve_tools", "description": "Search the tools of every upstream server (BM25) and return the best matches, best first.",
             "inputSchema": {"type": "object", "properties": {"query": {"type": "string", "description": "What you want to do"}, "limit": {"type": "integer", "description": "How many tools to return (default tools_limit, max 100)"}}, "required": ["query"]}},
            {"name": "call_tool", "description": "Call an upstream tool by its `server:tool` id.",
             "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}, "args": {"type": "object"}, "args_json": {"type": "string"}}, "required": ["name"]}},
        ]);
        let tools: Vec<McpTool> = serde_json::from_value(tools).expect("static tool definitions");
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        match request.name.as_ref() {
            "retrieve_tools" => Ok(self.retrieve(&args).await),
            "call_tool" => Ok(self.call(&args).await),
            other => Err(ErrorData::invalid_params(
                format!("unknown tool {other:?}: this proxy offers retrieve_tools and call_tool"),
                None,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ServerStatus;
    use super::super::config::ProxyConfig;
    use super::super::drift::DriftTracker;
    use super::*;
    use tokio::sync::{Mutex, RwLock};

    fn state(mode: &str) -> Arc<State> {
        let cfg = ProxyConfig::parse(
            "t",
            &format!(r#"{{"on_tool_drift":"{mode}","mcpServers":[{{"name":"s"}}]}}"#),
        )
        .unwrap();
        let mut servers = std::collections::BTreeMap::new();
        servers.insert(
            "s".to_string(),
            ServerStatus {
                name: "s".into(),
                connected: true,
                status: "ready".into(),
                tool_count: 2,
                quarantined: false,
                last_error: None,
            },
        );
        Arc::new(State {
            api_key: Some("k".into()),
            mcp_sessions: false,
            tools_limit: 15,
            catalog: Mutex::new(super::super::Catalog::new(vec![], vec![]).unwrap()),
            reindex_asked: Default::default(),
            reindex_covered: Default::default(),
            servers: RwLock::new(servers),
            upstreams: Default::default(),
            fault: Default::default(),
            searches: Default::default(),
            scans: Default::default(),
            drift: std::sync::Mutex::new(DriftTracker::from_config(&cfg)),
            sup: crate::infra::process::Supervisor::new(),
        })
    }

    fn def(name: &str, desc: &str) -> Value {
        json!({"name": name, "description": desc, "inputSchema": {"type": "object"}})
    }

    async fn get(base: &str, path: &str) -> (u16, Value) {
        let r = reqwest::Client::new()
            .get(format!("{base}{path}"))
            .header("X-API-Key", "k")
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    #[tokio::test]
    async fn drifted_tools_are_listed_held_diffed_and_blocked() {
        crate::infra::mcp::init_tls();
        let st = state("block");
        {
            let mut d = st.drift.lock().unwrap();
            d.observe("s", vec![def("a", "A"), def("b", "B")]);
            d.observe("s", vec![def("a", "A evil"), def("b", "B")]);
        }
        st.reindex().await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(axum::serve(listener, router(st.clone())).into_future());

        let (code, body) = get(&base, "/api/v1/tools").await;
        assert_eq!(code, 200);
        let tools = body["data"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0]["name"], "a");
        assert_eq!(tools[0]["server_name"], "s");
        assert_eq!(tools[0]["description"], "A evil");
        assert_eq!(tools[0]["approval_status"], "changed");
        assert_eq!(tools[0]["held_reason"], "tool_definition_drift");
        assert_eq!(tools[0]["held_verdict"], "drift");
        assert_eq!(tools[0]["held_signals"], json!(["changed:description"]));
        assert_eq!(
            tools[0]["hash"],
            crate::pipeline::sut::drift::fingerprint(&def("a", "A evil"))
        );
        assert_eq!(tools[1]["approval_status"], "approved");
        assert!(tools[1].get("held_reason").is_none());

        let (code, body) = get(&base, "/api/v1/servers/s/tools/a/diff").await;
        assert_eq!(code, 200);
        let d = &body["data"];
        assert_eq!(d["server_name"], "s");
        assert_eq!(d["tool"], "a");
        assert_eq!(d["approval_status"], "changed");
        assert_eq!(d["aspects"], json!(["changed:description"]));
        assert_eq!(d["baseline"], def("a", "A"));
        assert_eq!(d["current"], def("a", "A evil"));
        let (code, body) = get(&base, "/api/v1/servers/s/tools/nope/diff").await;
        assert_eq!((code, &body["success"]), (404, &json!(false)));
        let (code, _) = get(&base, "/api/v1/servers/nope/tools/a/diff").await;
        assert_eq!(code, 404);
        let r = reqwest::get(format!("{base}/api/v1/servers/s/tools/a/diff"))
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401);

        // block: out of the index, and the call is refused without reaching an upstream
        let (_, body) = get(&base, "/api/v1/index/search?q=evil").await;
        assert_eq!(body["data"]["results"], json!([]));
        let mcp = ProxyMcp { state: st.clone() };
        let mut args = serde_json::Map::new();
        args.insert("name".into(), json!("s:a"));
        let CallToolResponse::Complete(r) = mcp.call(&args).await else {
            panic!("not a complete result")
        };
        assert_eq!(r.is_error, Some(true));
        let text = serde_json::to_value(&r.content).unwrap()[0]["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(text.starts_with("blocked: tool_definition_drift"), "{text}");
        assert!(
            text.contains("s:a") && text.contains("changed:description"),
            "{text}"
        );
        assert!(
            text.contains("revert") && text.contains("restart"),
            "{text}"
        );
        // an approved tool is forwarded (here: no upstream is connected)
        args.insert("name".into(), json!("s:b"));
        let CallToolResponse::Complete(r) = mcp.call(&args).await else {
            panic!("not a complete result")
        };
        let text = serde_json::to_value(&r.content).unwrap().to_string();
        assert!(text.contains("no connected upstream"), "{text}");
    }

    /// `/mcp` keeps no session and answers a call with one JSON body (no server-sent events);
    /// with `mcp_sessions` it keeps sessions and answers with events. evalgate's own MCP client
    /// (rmcp) searches through both.
    #[tokio::test]
    async fn mcp_is_served_statelessly_as_json_or_with_sessions() {
        crate::infra::mcp::init_tls();
        for sessions in [false, true] {
            let mut st = state("log");
            Arc::get_mut(&mut st).unwrap().mcp_sessions = sessions;
            let tools = [def("a", "open an issue"), def("b", "B")]
                .iter()
                .map(|d| crate::pipeline::dataset::mcp::from_definition("s", d).unwrap())
                .collect();
            *st.catalog.lock().await = super::super::Catalog::new(tools, vec![]).unwrap();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            tokio::spawn(axum::serve(listener, router(st.clone())).into_future());

            let r = reqwest::Client::new()
                .post(&url)
                .header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json")
                .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 200);
            assert_eq!(r.headers().get("mcp-session-id").is_some(), sessions);
            let content_type = r.headers()["content-type"].to_str().unwrap().to_string();
            let body = r.text().await.unwrap();
            if sessions {
                assert_eq!(content_type, "text/event-stream");
            } else {
                assert_eq!(content_type, "application/json");
                let init: Value = serde_json::from_str(&body).unwrap();
                assert_eq!(init["result"]["serverInfo"]["name"], "evalgate-proxy");
            }

            let sup = crate::infra::process::Supervisor::new();
            let session = crate::infra::mcp::connect(
                &crate::infra::mcp::Endpoint::Http {
                    url,
                    headers: vec![],
                },
                (),
                &crate::infra::mcp::ConnectOpts {
                    sup: &sup,
                    timeout: std::time::Duration::from_secs(10),
                    name: "proxy",
                },
            )
            .await
            .unwrap();
            assert_eq!(session.list_all_tools().await.unwrap().len(), 2);
            use crate::pipeline::sut::mapping::{IdStyle, MCPPROXY_RETRIEVE_TOOLS_FILTER, Mapper};
            let m = Mapper::new(MCPPROXY_RETRIEVE_TOOLS_FILTER, IdStyle::Auto).unwrap();
            for _ in 0..3 {
                let mut args = serde_json::Map::new();
                args.insert("query".into(), json!("open an issue"));
                let params =
                    rmcp::model::CallToolRequestParams::new("retrieve_tools").with_arguments(args);
                let result = session.service.peer().call_tool(params).await.unwrap();
                let ids = m
                    .map_call_result(&serde_json::to_value(&result).unwrap())
                    .unwrap();
                assert_eq!(ids[0], "s:a", "sessions: {sessions}");
            }
        }
    }

    /// The typed answer writes exactly the text the `json!` object before it wrote (field order,
    /// the f32 score widened to f64, schemas and annotations as compact JSON, `null` when absent).
    #[test]
    fn retrieve_answer_is_the_json_object_it_replaces() {
        let defs = [
            json!({"name": "a", "description": "Quotes \" and \\ and \u{e9} \n and \u{1}",
                   "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "minimum": -1.5e-7, "maximum": 1e300, "default": 12345678901234567890u64}, "é": {"enum": [true, null, "x"]}}, "required": ["n"]},
                   "annotations": {"readOnlyHint": true, "title": "A \u{2028} tool"}}),
            json!({"name": "b", "description": ""}),
            json!({"name": "c", "description": "d", "inputSchema": {}, "annotations": null}),
        ];
        let tools: Vec<Tool> = defs
            .iter()
            .map(|d| crate::pipeline::dataset::mcp::from_definition("srv", d).unwrap())
            .collect();
        let scores = [3.2f32, 0.1, 1e-7, 12345.678, 0.0, f32::MAX];
        for (query, n) in [("open an \"issue\"", 3), ("", 0), ("é", 1)] {
            let found: Vec<(&Tool, f32)> = tools.iter().zip(scores).take(n).collect();
            let old: Vec<Value> = found
                .iter()
                .map(|&(t, score)| {
                    json!({
                        "name": t.tool_id,
                        "description": t.description,
                        "inputSchema": t.schema,
                        "score": score,
                        "server": t.server_name(),
                        "annotations": t.annotations,
                        "call_with": "call_tool",
                    })
                })
                .collect();
            let old = json!({
                "tools": old,
                "query": query,
                "total": n,
                "usage_instructions": "Call a tool with call_tool {\"name\": \"server:tool\", \"args\": {...}}",
            })
            .to_string();
            let new = serde_json::to_string(&RetrieveAnswer {
                total: found.len(),
                tools: found.iter().map(|&(t, s)| FoundTool::new(t, s)).collect(),
                query,
                usage_instructions: USAGE_INSTRUCTIONS,
            })
            .unwrap();
            assert_eq!(new, old);
        }
    }

    #[tokio::test]
    async fn log_mode_keeps_drifted_tools_callable() {
        let st = state("log");
        {
            let mut d = st.drift.lock().unwrap();
            d.observe("s", vec![def("a", "A")]);
            d.observe("s", vec![def("a", "A"), def("a", "evil")]);
        }
        st.reindex().await.unwrap();
        let listing = &st.catalog.lock().await.listing;
        assert_eq!(listing.len(), 1);
        assert_eq!(listing[0].aspects, ["changed:description", "duplicate"]);
        let mcp = ProxyMcp { state: st.clone() };
        let mut args = serde_json::Map::new();
        args.insert("name".into(), json!("s:a"));
        let CallToolResponse::Complete(r) = mcp.call(&args).await else {
            panic!("not a complete result")
        };
        // forwarded (and failing only because no upstream is connected in this test)
        let text = serde_json::to_value(&r.content).unwrap().to_string();
        assert!(text.contains("no connected upstream"), "{text}");
    }
}
