//! A corpus tool as MCP sees it, and back: the one place a dataset `Tool` meets rmcp's.

use super::{RawJson, Tool};
use anyhow::{Context, bail};
use rmcp::model::Tool as McpTool;
use serde_json::{Map, Value, json};

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
    from_definition(server, &serde_json::to_value(t)?)
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
    crate::infra::text::canonical_json(&v)
}
