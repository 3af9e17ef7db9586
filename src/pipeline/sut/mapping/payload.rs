//! The JSON payload of a search answer: an MCP `CallToolResult`'s structured content or JSON
//! text blocks, its common envelopes opened, and the payload quoted in error messages.

use super::{MapError, QUOTE_CHARS, TOOL_ERROR_CHARS, truncate};
use crate::infra::text::sanitize;
use serde_json::Value;

pub(super) fn text_blocks(result: &Value) -> Vec<&str> {
    let blocks = result.get("content").and_then(Value::as_array);
    blocks
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str).unwrap_or("text") == "text")
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect()
}

/// Opens `{"result": "<json>"}` once (a lone `result`/`text` string that is not JSON is passed
/// on as the plain text it is: FastMCP wraps a tool's `str` return that way) and turns
/// `{"success": false, "error": ...}` into a tool error.
pub(super) fn unwrap_envelope(payload: Value) -> Result<Value, MapError> {
    if let Value::Object(o) = &payload {
        if o.get("success") == Some(&Value::Bool(false)) {
            let err = o
                .get("error")
                .or_else(|| o.get("message"))
                .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string))
                .unwrap_or_else(|| "(no error message)".into());
            return Err(MapError::ToolError {
                text: truncate(&err, TOOL_ERROR_CHARS),
            });
        }
        if o.len() == 1
            && let Some(Value::String(s)) = o.get("result").or_else(|| o.get("text"))
        {
            return Ok(match serde_json::from_str::<Value>(s) {
                Ok(inner @ (Value::Object(_) | Value::Array(_))) => inner,
                _ => Value::String(s.clone()),
            });
        }
    }
    Ok(payload)
}

/// A mapping failure with the start of the (sanitised) payload and its shape appended.
pub(super) fn with_payload(e: MapError, payload: &Value) -> MapError {
    let MapError::Runtime { filter, message } = e else {
        return e;
    };
    let shape = match payload {
        Value::Object(o) => {
            let keys: Vec<&str> = o.keys().take(8).map(String::as_str).collect();
            format!("an object with keys [{}]", keys.join(", "))
        }
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::String(_) => "a string".into(),
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => "a number".into(),
    };
    let quoted = sanitize::clip(&sanitize::visible(&payload.to_string()), QUOTE_CHARS);
    MapError::Runtime {
        filter,
        message: format!("{message} — the payload was {shape}: {quoted}"),
    }
}

/// The JSON payload of a CallToolResult: structuredContent if present, else the first text
/// content block that parses as JSON (several JSON text blocks → a JSON array of them).
///
/// Text blocks that are not JSON (a human-readable preamble, say) are skipped as long as at
/// least one block is JSON. A result flagged `isError: true` gives [`MapError::ToolError`] with
/// its text, whatever else it carries.
pub fn call_result_payload(result: &Value) -> Result<Value, MapError> {
    let Some(obj) = result.as_object() else {
        return Err(MapError::NotJson {
            found: format!(
                "{} instead of a CallToolResult object",
                truncate(&result.to_string(), QUOTE_CHARS)
            ),
        });
    };
    let texts = text_blocks(result);

    if obj.get("isError").and_then(Value::as_bool) == Some(true) {
        let text = if texts.is_empty() {
            "(no text content)".to_string()
        } else {
            truncate(&texts.join("\n"), TOOL_ERROR_CHARS)
        };
        return Err(MapError::ToolError { text });
    }

    if let Some(structured) = obj.get("structuredContent").filter(|v| !v.is_null()) {
        return Ok(structured.clone());
    }

    let mut parsed: Vec<Value> = texts
        .iter()
        .filter_map(|t| serde_json::from_str(t).ok())
        .collect();
    match parsed.len() {
        0 => Err(MapError::NotJson {
            found: match texts.first() {
                Some(t) => format!("text content {:?}", truncate(t, QUOTE_CHARS)),
                None => "no structuredContent and no text content".to_string(),
            },
        }),
        1 => Ok(parsed.remove(0)),
        _ => Ok(Value::Array(parsed)),
    }
}
