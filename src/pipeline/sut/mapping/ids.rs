//! Reading one element a filter yields as a canonical `server:tool` id, by [`IdStyle`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How to read one extracted element as a canonical `server:tool` id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IdStyle {
    /// Any of the forms below, tried in a fixed order (see [`normalize_id`]).
    #[default]
    Auto,
    /// A `"server:tool"` string, bare or as the `id` / `name` field of an object.
    Colon,
    /// A `"server__tool"` string (split at the first `__`), bare or as the `id` / `name` field
    /// of an object.
    DoubleUnderscore,
    /// Server and tool given separately: a `[server, tool]` array, an object with
    /// `server` / `server_name` and `name` / `tool`, or such an object under `tool`.
    Pair,
}

impl IdStyle {
    /// What an element must look like under this style, for error messages.
    pub(super) fn expected(self) -> &'static str {
        match self {
            IdStyle::Auto => {
                "a \"server:tool\" or \"server__tool\" string, a [server, tool] pair, or an object \
                 with server/server_name and name/tool, with id or name holding such a string, \
                 or with such an object under tool"
            }
            IdStyle::Colon => {
                "a \"server:tool\" string, or an object whose id or name is one \
                 (id style: colon)"
            }
            IdStyle::DoubleUnderscore => {
                "a \"server__tool\" string, or an object whose id or name is one \
                 (id style: double_underscore)"
            }
            IdStyle::Pair => {
                "a [server, tool] array, or an object with server/server_name and name/tool \
                 (possibly under tool) (id style: pair)"
            }
        }
    }
}

/// Normalises one element: strings "server:tool", "server__tool" (split at the FIRST "__"),
/// objects {server, name} / {server_name, name} / {server, tool} / {id: "server:tool"} / {name: "server:tool"} /
/// {tool: {name, server_name}} (mcpproxy REST shape). `Auto` tries all of these; the other styles accept only their form.
///
/// Also accepted by `Auto` and `Pair`: a `[server, tool]` array of two strings. In the separate
/// forms a tool name already prefixed with its own server (`{server: "github", name:
/// "github:create_issue"}`) is not prefixed twice. Under `Auto`, objects are tried as separate
/// server and tool fields first, then a nested `tool` object, then `id`, then `name`; a string
/// containing `:` is read only as `server:tool`. Server and tool must both be non-empty, and a
/// server must not contain `:`. Anything else (numbers, null, ...) gives `None`.
pub fn normalize_id(v: &Value, style: IdStyle) -> Option<String> {
    match v {
        Value::String(s) => id_from_str(s, style),
        Value::Array(items) => match style {
            IdStyle::Auto | IdStyle::Pair => pair_from_array(items),
            IdStyle::Colon | IdStyle::DoubleUnderscore => None,
        },
        Value::Object(obj) => {
            let field = |k: &str| obj.get(k).and_then(Value::as_str);
            if matches!(style, IdStyle::Auto | IdStyle::Pair) {
                let server = field("server").or_else(|| field("server_name"));
                let tool = field("name").or_else(|| field("tool"));
                if let (Some(server), Some(tool)) = (server, tool)
                    && let Some(id) = pair_id(server, tool)
                {
                    return Some(id);
                }
            }
            if let Some(inner @ Value::Object(_)) = obj.get("tool")
                && let Some(id) = normalize_id(inner, style)
            {
                return Some(id);
            }
            if style == IdStyle::Pair {
                return None;
            }
            ["id", "name"]
                .into_iter()
                .filter_map(field)
                .find_map(|s| id_from_str(s, style))
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// A single-string id under a style (`Pair` accepts none); `Auto` reads a string containing
/// `:` as `server:tool` only.
fn id_from_str(s: &str, style: IdStyle) -> Option<String> {
    let colon = match style {
        IdStyle::Colon => true,
        IdStyle::DoubleUnderscore => false,
        IdStyle::Auto => s.contains(':'),
        IdStyle::Pair => return None,
    };
    if !colon {
        let (server, tool) = s.split_once("__")?;
        return pair_id(server, tool);
    }
    let (server, tool) = s.split_once(':')?;
    (!server.is_empty() && !tool.is_empty()).then(|| s.to_string())
}

/// `server:tool` from separate parts; a tool already prefixed with `server:` or `server__` keeps
/// a single prefix.
fn pair_id(server: &str, tool: &str) -> Option<String> {
    if server.is_empty() || server.contains(':') {
        return None;
    }
    let bare = tool
        .strip_prefix(server)
        .and_then(|rest| rest.strip_prefix(':').or_else(|| rest.strip_prefix("__")))
        .unwrap_or(tool);
    (!bare.is_empty()).then(|| format!("{server}:{bare}"))
}

pub(super) fn pair_from_array(items: &[Value]) -> Option<String> {
    match items {
        [Value::String(server), Value::String(tool)] => pair_id(server, tool),
        _ => None,
    }
}
