//! A corpus tool as MCP sees it, and back: the one place a dataset `Tool` meets rmcp's.

use super::{RawJson, Tool};
use anyhow::{Context, bail};
use rmcp::model::Tool as McpTool;
use serde_json::{Value, json};

/// A corpus tool as an MCP definition (`name`, `title`, `description`, `inputSchema`,
/// `outputSchema`, `annotations`).
pub fn to_mcp(t: &Tool) -> anyhow::Result<McpTool> {
    // an absent optional field goes as `null`, which rmcp reads as `None`
    let schema = t.schema.as_ref().map(RawJson::value);
    let def = json!({
        "name": t.bare_name(),
        "title": t.title,
        "description": t.description,
        "inputSchema": schema.unwrap_or_else(|| json!({"type": "object"})),
        "outputSchema": t.output_schema.as_ref().map(RawJson::value),
        "annotations": t.annotations.as_ref().map(RawJson::value),
    });
    serde_json::from_value(def)
        .with_context(|| format!("tool {} is not a valid MCP tool definition", t.tool_id))
}

/// A tool definition as JSON (MCP shape) as a corpus tool.
pub fn from_definition(server: &str, v: &Value) -> anyhow::Result<Tool> {
    let text = |key| v.get(key).and_then(Value::as_str);
    let name = text("name").context("a tool definition without a string `name`")?;
    if name.contains(':') {
        bail!("tool name {name:?} contains ':', which cannot form a `server:tool` id");
    }
    Ok(Tool {
        tool_id: format!("{server}:{name}"),
        server: Some(server.to_string()),
        tool: Some(name.to_string()),
        description: text("description").unwrap_or_default().to_string(),
        schema: v.get("inputSchema").map(RawJson::from_value),
        title: text("title").map(String::from),
        annotations: v.get("annotations").map(RawJson::from_value),
        output_schema: v.get("outputSchema").map(RawJson::from_value),
        extra: None,
    })
}
