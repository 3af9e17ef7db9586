//! Turning a search tool's answer into ranked canonical `server:tool` ids.
//!
//! A proxy's search tool (mcpproxy's `retrieve_tools`, say) answers an MCP `tools/call` with a
//! `CallToolResult` whose JSON payload sits either in `structuredContent` or in one or more text
//! content blocks holding JSON text; a REST search endpoint answers with a plain JSON body. A
//! [`Mapper`] applies a jq filter (run by jaq) to that payload and normalises every element the
//! filter yields to a canonical `server:tool` id, keeping the ranked order. Whether the payload
//! came as structured content or as JSON text makes no difference to the result.

mod fast;
mod ids;
mod jaq;
mod payload;
pub mod probe;
pub mod worker;

pub use ids::{IdStyle, normalize_id};
pub use payload::call_result_payload;

use ids::pair_from_array;
use payload::{text_blocks, unwrap_envelope, with_payload};
use serde_json::Value;
use std::fmt;

/// Filter for mcpproxy's `retrieve_tools` MCP tool: whole result objects, so that the server
/// travels with the name. Full-mode entries are `{name, server, …}` where `name` is
/// `server:tool` since v0.52.0 and the bare tool name before; compact-mode entries carry
/// `id: "server:tool"`. [`IdStyle::Auto`] reads all three. Versions before v0.52.0 answer no
/// match with `"tools": null` (a Go nil slice): that is an empty list, while an answer with no
/// `tools` key at all is still an error.
pub const MCPPROXY_RETRIEVE_TOOLS_FILTER: &str =
    r#"if type == "object" and has("tools") and .tools == null then empty else .tools[] end"#;

/// Filter for mcpproxy's REST search endpoint (`GET /api/v1/index/search`), whose body is
/// `{"success": true, "data": {"results": [{"tool": {"name", "server_name", ...}, "score"}]}}`.
/// With [`IdStyle::Auto`] (or [`IdStyle::Pair`]) each `{name, server_name}` object becomes
/// `server_name:name`.
pub const MCPPROXY_REST_SEARCH_FILTER: &str = ".data.results[] | .tool";

/// A filter yielding more results than this is treated as broken (a runaway generator such as
/// `repeat(.)`) rather than collected forever.
pub(crate) const MAX_RESULTS: usize = 10_000;

/// How much of an offending value or text an error message quotes.
const QUOTE_CHARS: usize = 200;

/// How much of a tool's error text [`MapError::ToolError`] keeps.
const TOOL_ERROR_CHARS: usize = 1_000;

/// Why a search answer could not be turned into ranked tool ids.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    /// The jq filter does not parse or refers to something undefined.
    #[error("jq filter `{filter}` does not compile: {message}")]
    Compile {
        /// The filter as configured.
        filter: String,
        /// jaq's diagnostics, joined with `; `.
        message: String,
    },
    /// The filter compiles but never ends, or recurses until the stack is gone ([`probe`]).
    #[error("jq filter `{filter}` cannot be used: {message}")]
    NeverEnds {
        /// The filter as configured.
        filter: String,
        /// What the probe saw.
        message: String,
    },
    /// The filter compiled but failed on this payload (or ran away).
    #[error("jq filter `{filter}` failed: {message}")]
    Runtime {
        /// The filter as configured.
        filter: String,
        /// jaq's error.
        message: String,
    },
    /// The answer carries no JSON payload.
    #[error("search result is not JSON: found {found}")]
    NotJson {
        /// What was found instead, quoted and truncated to about 200 characters.
        found: String,
    },
    /// An element yielded by the filter cannot be read as a `server:tool` id.
    #[error(
        "result element {index} (0-based) cannot be read as a tool id: got {element}, expected {expected}"
    )]
    BadElement {
        /// 0-based position of the element in the filter's ranked output.
        index: usize,
        /// The element as compact JSON, truncated to about 200 characters.
        element: String,
        /// What the id style accepts.
        expected: String,
    },
    /// The search tool answered with `isError: true`.
    #[error("search tool reported an error: {text}")]
    ToolError {
        /// The text content of the result (truncated to about 1000 characters).
        text: String,
    },
}

/// A compiled jq filter plus an id style: payload in, ranked `server:tool` ids out.
///
/// Compile once with [`Mapper::new`] and reuse it for every query; it is `Send + Sync` and cheap
/// to clone.
#[derive(Clone)]
pub struct Mapper {
    source: String,
    style: IdStyle,
    filter: jaq::Filter,
    /// The filter is [`MCPPROXY_RETRIEVE_TOOLS_FILTER`]: [`Mapper::map_text_fast`] may answer.
    retrieve_tools: bool,
    /// A configured filter runs here, bounded in memory and time ([`worker`]); the presets
    /// (and every filter in a library user or unit test) run in this process.
    worker: Option<worker::Worker>,
}

impl fmt::Debug for Mapper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mapper")
            .field("filter", &self.source)
            .field("style", &self.style)
            .finish_non_exhaustive()
    }
}

impl Mapper {
    /// Compiles a jq filter (jaq, with jaq-std's standard library definitions) that, applied to the
    /// payload, yields the ranked results (a stream of elements, or one array of elements).
    ///
    /// Module imports are not supported; a filter that does not parse or names an undefined
    /// filter or variable gives [`MapError::Compile`] with the filter text and jaq's diagnostics.
    pub fn new(filter: &str, style: IdStyle) -> Result<Mapper, MapError> {
        let compiled = jaq::compile(filter).map_err(|message| MapError::Compile {
            filter: filter.to_string(),
            message,
        })?;
        let preset =
            [MCPPROXY_RETRIEVE_TOOLS_FILTER, MCPPROXY_REST_SEARCH_FILTER].contains(&filter);
        if !preset {
            probe::check(filter).map_err(|message| MapError::NeverEnds {
                filter: filter.to_string(),
                message,
            })?;
        }
        Ok(Mapper {
            source: filter.to_string(),
            style,
            filter: compiled,
            retrieve_tools: filter == MCPPROXY_RETRIEVE_TOOLS_FILTER,
            worker: (!preset)
                .then(|| worker::Worker::for_filter(filter))
                .flatten(),
        })
    }

    /// The filter text this mapper was compiled from.
    pub fn filter(&self) -> &str {
        &self.source
    }

    /// Applies the filter to a payload and normalises every element to `server:tool`, preserving
    /// order.
    ///
    /// If the filter yields exactly one value and it is an array, its items are the elements
    /// (so `.tools` and `.tools[]` are equivalent) — except a lone `[server, tool]` pair whose
    /// items are not ids themselves, which is one element. Duplicates are kept.
    pub fn map_payload(&self, payload: &Value) -> Result<Vec<String>, MapError> {
        self.elements(self.run(payload)?)
            .iter()
            .enumerate()
            .map(|(index, element)| {
                normalize_id(element, self.style).ok_or_else(|| MapError::BadElement {
                    index,
                    element: truncate(&element.to_string(), QUOTE_CHARS),
                    expected: self.style.expected().to_string(),
                })
            })
            .collect()
    }

    /// Same, starting from an MCP CallToolResult as JSON (content / structuredContent / isError).
    ///
    /// Common envelopes are opened first: JSON text inside a lone `result` (or `text`) string
    /// is decoded once (FastMCP wraps a tool's return value so); an in-band `{"success": false,
    /// "error": ...}` is a tool error. A text answer that is not JSON reaches the filter as one
    /// string, so a filter can parse a plain-text listing (`splits("\n")`, `capture(...)`); if
    /// the filter cannot, the error is the original "not JSON" one. Every other failure quotes
    /// the start of the payload and its shape.
    pub fn map_call_result(&self, result: &Value) -> Result<Vec<String>, MapError> {
        let payload = match call_result_payload(result) {
            Ok(p) => unwrap_envelope(p)?,
            Err(MapError::NotJson { found }) => {
                let text = text_blocks(result).join("\n");
                if text.is_empty() {
                    return Err(MapError::NotJson { found });
                }
                return self
                    .map_payload(&Value::String(text))
                    .map_err(|_| MapError::NotJson { found });
            }
            Err(e) => return Err(e),
        };
        self.map_payload(&payload)
            .map_err(|e| with_payload(e, &payload))
    }

    /// The ids of a CallToolResult whose only content is one text block (no structured
    /// content, no `isError: true`) holding `text`, without going through jaq: the fast path for
    /// the mcpproxy `retrieve_tools` preset (`fast`). `None` when this mapper has another
    /// filter or the answer is not of the shape the fast path reads; then
    /// [`Mapper::map_call_result`] gives the answer (or the error). When it is `Some`, it is what
    /// `map_call_result` gives.
    pub fn map_text_fast(&self, text: &str) -> Option<Vec<String>> {
        if !self.retrieve_tools {
            return None;
        }
        fast::retrieve_tools_ids(text, self.style)
    }

    /// The filter's outputs as JSON; a single array output stands for its items.
    pub fn outputs(&self, payload: &Value) -> Result<Vec<Value>, MapError> {
        let mut outs = self.run(payload)?;
        if let [Value::Array(items)] = outs.as_mut_slice() {
            return Ok(std::mem::take(items));
        }
        Ok(outs)
    }

    /// Runs the compiled filter on a payload, collecting its outputs as JSON.
    fn run(&self, payload: &Value) -> Result<Vec<Value>, MapError> {
        let result = match &self.worker {
            Some(w) => w.apply(payload),
            None => jaq::run(&self.filter, payload, MAX_RESULTS),
        };
        result.map_err(|message| MapError::Runtime {
            filter: self.source.clone(),
            message,
        })
    }

    /// The ranked elements: the outputs, or the items of a single array output.
    fn elements(&self, outputs: Vec<Value>) -> Vec<Value> {
        let [Value::Array(items)] = outputs.as_slice() else {
            return outputs;
        };
        let lone_pair = matches!(self.style, IdStyle::Auto | IdStyle::Pair)
            && pair_from_array(items).is_some()
            && !items.iter().all(|i| normalize_id(i, self.style).is_some());
        if lone_pair { outputs } else { items.clone() }
    }
}

/// evalgate's own binary as `arg filter`, with a child's environment, dying with evalgate.
fn self_exec(arg: &str, filter: &str) -> std::io::Result<std::process::Command> {
    let mut cmd = std::process::Command::new(crate::infra::own_binary::own_binary()?);
    cmd.arg(arg)
        .arg(filter)
        .env_clear()
        .envs(crate::infra::process::env::for_child());
    crate::infra::process::die_with_evalgate(&mut cmd);
    Ok(cmd)
}

/// At most `max` characters of `s`, with an ellipsis and the full length when cut.
pub(super) fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((cut, _)) => format!("{}… ({} chars in all)", &s[..cut], s.chars().count()),
    }
}

#[cfg(test)]
mod tests;
