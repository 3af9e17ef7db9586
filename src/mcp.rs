//! MCP plumbing shared by the snapshot, the replay server, the MCP search adapter and the
//! reference proxy: connecting a client over stdio or streamable HTTP (rmcp), and converting
//! between corpus tools and MCP tool definitions.

use crate::dataset::{RawJson, Tool};
use anyhow::{Context, bail};
use rmcp::model::Tool as McpTool;
use rmcp::service::RunningService;
use rmcp::transport::{
    StreamableHttpClientTransport, TokioChildProcess,
    streamable_http_client::StreamableHttpClientTransportConfig,
};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;

/// Installs rustls' ring provider once (rmcp's HTTP client is built without a default one).
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Where an MCP server is.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A command speaking MCP over stdio.
    Stdio {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

impl Endpoint {
    pub fn describe(&self) -> String {
        match self {
            Endpoint::Stdio { program, args, .. } => {
                format!("stdio: {} {}", program, args.join(" "))
                    .trim_end()
                    .to_string()
            }
            Endpoint::Http { url, .. } => format!("streamable HTTP: {url}"),
        }
    }
    pub fn transport_name(&self) -> &'static str {
        match self {
            Endpoint::Stdio { .. } => "stdio",
            Endpoint::Http { .. } => "streamable-http",
        }
    }
}

/// Connects and initializes. A stdio child gets its own process group and its stderr is
/// discarded (servers log there freely); it is killed when the service is dropped.
pub async fn connect<H: ClientHandler>(
    ep: &Endpoint,
    handler: H,
) -> anyhow::Result<RunningService<RoleClient, H>> {
    connect_in_group(ep, handler, true).await
}

/// Like [`connect`]; `own_group: false` keeps a stdio child in the caller's process group, so
/// that whoever stops the caller's group stops the child too.
pub async fn connect_in_group<H: ClientHandler>(
    ep: &Endpoint,
    handler: H,
    own_group: bool,
) -> anyhow::Result<RunningService<RoleClient, H>> {
    match ep {
        Endpoint::Stdio {
            program,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args).kill_on_drop(true);
            if own_group {
                cmd.process_group(0);
            }
            for (k, v) in env {
                cmd.env(k, v);
            }
            if let Some(d) = cwd {
                cmd.current_dir(d);
            }
            let (transport, _) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::null())
                .spawn()
                .with_context(|| format!("cannot start {}", ep.describe()))?;
            handler
                .serve(transport)
                .await
                .with_context(|| format!("MCP initialize failed ({})", ep.describe()))
        }
        Endpoint::Http { url, headers } => {
            init_tls();
            let mut custom = HashMap::new();
            for (k, v) in headers {
                let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                    .with_context(|| format!("invalid header name {k:?}"))?;
                let value = reqwest::header::HeaderValue::from_str(v)
                    .with_context(|| format!("invalid value for header {k:?}"))?;
                custom.insert(name, value);
            }
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.clone()).custom_headers(custom);
            let transport = StreamableHttpClientTransport::from_config(config);
            handler
                .serve(transport)
                .await
                .with_context(|| format!("MCP initialize failed ({})", ep.describe()))
        }
    }
}

/// A corpus tool as an MCP definition (`name`, `title`, `description`, `inputSchema`,
/// `outputSchema`, `annotations`).
pub fn to_mcp(t: &Tool) -> anyhow::Result<McpTool> {
    let mut o = Map::new();
    o.insert("name".into(), json!(t.bare_name()));
    if let Some(title) = &t.title {
        o.insert("title".into(), json!(title));
    }
    o.insert("description".into(), json!(t.description));
    o.insert(
        "inputSchema".into(),
        t.schema
            .as_ref()
            .map(RawJson::value)
            .unwrap_or_else(|| json!({"type": "object"})),
    );
    if let Some(s) = &t.output_schema {
        o.insert("outputSchema".into(), s.value());
    }
    if let Some(a) = &t.annotations {
        o.insert("annotations".into(), a.value());
    }
    serde_json::from_value(Value::Object(o))
        .with_context(|| format!("tool {} is not a valid MCP tool definition", t.tool_id))
}

/// An MCP definition from a server as a corpus tool.
pub fn from_mcp(server: &str, t: &McpTool) -> anyhow::Result<Tool> {
    let v = serde_json::to_value(t)?;
    from_definition(server, &v)
}

/// A tool definition as JSON (MCP shape) as a corpus tool.
pub fn from_definition(server: &str, v: &Value) -> anyhow::Result<Tool> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .context("a tool definition without a string `name`")?;
    if name.contains(':') {
        bail!("tool name {name:?} contains ':', which cannot form a `server:tool` id");
    }
    Ok(Tool {
        tool_id: format!("{server}:{name}"),
        server: Some(server.to_string()),
        tool: Some(name.to_string()),
        description: v
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        schema: v.get("inputSchema").map(RawJson::from_value),
        title: v.get("title").and_then(Value::as_str).map(String::from),
        annotations: v.get("annotations").map(RawJson::from_value),
        output_schema: v.get("outputSchema").map(RawJson::from_value),
        extra: None,
    })
}

/// Compact canonical JSON of an MCP tools/list result (keys sorted): what "byte for byte" compares.
pub fn canonical_tools(tools: &[McpTool]) -> String {
    let v = serde_json::to_value(tools).expect("tools serialise");
    crate::sut::drift::canonical_json(&v)
}
