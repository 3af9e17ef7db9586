//! Turning a search tool's answer into ranked canonical `server:tool` ids.
//!
//! A proxy's search tool (mcpproxy's `retrieve_tools`, say) answers an MCP `tools/call` with a
//! `CallToolResult` whose JSON payload sits either in `structuredContent` or in one or more text
//! content blocks holding JSON text; a REST search endpoint answers with a plain JSON body. A
//! [`Mapper`] applies a jq filter (run by jaq) to that payload and normalises every element the
//! filter yields to a canonical `server:tool` id, keeping the ranked order. Whether the payload
//! came as structured content or as JSON text makes no difference to the result.

use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Native, RcIter};
use jaq_json::Val;
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
const MAX_RESULTS: usize = 10_000;

/// How much of an offending value or text an error message quotes.
const QUOTE_CHARS: usize = 200;

/// How much of a tool's error text [`MapError::ToolError`] keeps.
const TOOL_ERROR_CHARS: usize = 1_000;

/// How to read one extracted element as a canonical `server:tool` id.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
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
    fn expected(self) -> &'static str {
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
    filter: jaq_core::Filter<Native<Val>>,
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
        let compile_error = |message: String| MapError::Compile {
            filter: filter.to_string(),
            message,
        };
        let arena = Arena::default();
        let loader = Loader::new(jaq_std::defs().chain(jaq_json::defs()));
        let modules = loader
            .load(
                &arena,
                File {
                    code: filter,
                    path: (),
                },
            )
            .map_err(|errs| compile_error(load_errors_message(filter, errs)))?;
        let compiled = Compiler::default()
            .with_funs(jaq_std::funs().chain(jaq_json::funs()))
            .compile(modules)
            .map_err(|errs| compile_error(compile_errors_message(errs)))?;
        if ![MCPPROXY_RETRIEVE_TOOLS_FILTER, MCPPROXY_REST_SEARCH_FILTER].contains(&filter) {
            probe::check(filter).map_err(|message| MapError::NeverEnds {
                filter: filter.to_string(),
                message,
            })?;
        }
        Ok(Mapper {
            source: filter.to_string(),
            style,
            filter: compiled,
        })
    }

    /// A mapper for mcpproxy's `retrieve_tools` answers ([`MCPPROXY_RETRIEVE_TOOLS_FILTER`]).
    pub fn mcpproxy_retrieve_tools() -> Mapper {
        Mapper::new(MCPPROXY_RETRIEVE_TOOLS_FILTER, IdStyle::Auto)
            .expect("the mcpproxy retrieve_tools preset compiles")
    }

    /// A mapper for mcpproxy's REST search body ([`MCPPROXY_REST_SEARCH_FILTER`]).
    pub fn mcpproxy_rest_search() -> Mapper {
        Mapper::new(MCPPROXY_REST_SEARCH_FILTER, IdStyle::Auto)
            .expect("the mcpproxy REST search preset compiles")
    }

    /// The filter text this mapper was compiled from.
    pub fn filter(&self) -> &str {
        &self.source
    }

    /// The id style elements are read with.
    pub fn style(&self) -> IdStyle {
        self.style
    }

    /// Applies the filter to a payload and normalises every element to `server:tool`, preserving
    /// order.
    ///
    /// If the filter yields exactly one value and it is an array, its items are the elements
    /// (so `.tools` and `.tools[]` are equivalent) — except a lone `[server, tool]` pair whose
    /// items are not ids themselves, which is one element. Duplicates are kept.
    pub fn map_payload(&self, payload: &Value) -> Result<Vec<String>, MapError> {
        let outputs = self.run(payload)?;
        let elements = self.elements(outputs);
        elements
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
        let runtime_error = |message: String| MapError::Runtime {
            filter: self.source.clone(),
            message,
        };
        let inputs = RcIter::new(core::iter::empty());
        let outputs = self
            .filter
            .run((Ctx::new([], &inputs), Val::from(payload.clone())));
        let mut values = Vec::new();
        for output in outputs {
            let val = output.map_err(|e| runtime_error(e.to_string()))?;
            if values.len() == MAX_RESULTS {
                return Err(runtime_error(format!(
                    "the filter yields more than {MAX_RESULTS} results"
                )));
            }
            values.push(val_to_json(&val));
        }
        Ok(values)
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

fn text_blocks(result: &Value) -> Vec<&str> {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str).unwrap_or("text") == "text")
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// Opens `{"result": "<json>"}` once (a lone `result`/`text` string that is not JSON is passed
/// on as the plain text it is: FastMCP wraps a tool's `str` return that way) and turns
/// `{"success": false, "error": ...}` into a tool error.
fn unwrap_envelope(payload: Value) -> Result<Value, MapError> {
    if let Value::Object(o) = &payload {
        if o.get("success") == Some(&Value::Bool(false)) {
            let err = o
                .get("error")
                .or_else(|| o.get("message"))
                .map(|e| match e {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
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
fn with_payload(e: MapError, payload: &Value) -> MapError {
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
    let quoted = crate::reporting::sanitize::clip(
        &crate::reporting::sanitize::visible(&payload.to_string()),
        QUOTE_CHARS,
    );
    match e {
        MapError::Runtime { filter, message } => MapError::Runtime {
            filter,
            message: format!("{message} — the payload was {shape}: {quoted}"),
        },
        other => other,
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
                Some(t) => format!("text content {}", quote(t)),
                None => "no structuredContent and no text content".to_string(),
            },
        }),
        1 => Ok(parsed.remove(0)),
        _ => Ok(Value::Array(parsed)),
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

/// A single-string id under a style (`Pair` accepts none).
fn id_from_str(s: &str, style: IdStyle) -> Option<String> {
    match style {
        IdStyle::Colon => colon_id(s),
        IdStyle::DoubleUnderscore => double_underscore_id(s),
        IdStyle::Auto if s.contains(':') => colon_id(s),
        IdStyle::Auto => double_underscore_id(s),
        IdStyle::Pair => None,
    }
}

fn colon_id(s: &str) -> Option<String> {
    let (server, tool) = s.split_once(':')?;
    (!server.is_empty() && !tool.is_empty()).then(|| s.to_string())
}

fn double_underscore_id(s: &str) -> Option<String> {
    let (server, tool) = s.split_once("__")?;
    pair_id(server, tool)
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

fn pair_from_array(items: &[Value]) -> Option<String> {
    match items {
        [Value::String(server), Value::String(tool)] => pair_id(server, tool),
        _ => None,
    }
}

/// A filter that never ends (`def f: f; f`) or recurses until the stack is gone (`def f: [f];
/// f`) would hang evalgate or abort it without a report. Before a user's filter is used it runs
/// once, in a child process of evalgate's own binary, on small inputs (`null`, `{}`, `[]`, `""`):
/// one that does not finish within [`probe::LIMIT`] or dies is refused as bad input.
pub mod probe {
    use std::io::Read;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    /// The hidden first argument that makes the binary a probe.
    pub const ARG: &str = "__evalgate-jq-probe";
    /// How long the probe may take.
    pub const LIMIT: Duration = Duration::from_secs(3);

    static ENABLED: AtomicBool = AtomicBool::new(false);

    /// Called by the command line's entry point: this process is evalgate's binary, which can
    /// run itself as a probe (a library user or a unit test cannot, so nothing is probed there).
    pub fn enable() {
        ENABLED.store(true, Ordering::Relaxed);
    }

    /// The probe process: compiles and runs the filter given as the next argument on the
    /// sample inputs; exit 0 when every run finished (an error is a finish too).
    pub fn run(filter: &str) -> i32 {
        let Ok(m) = super::Mapper::new(filter, super::IdStyle::Auto) else {
            return 0;
        };
        for input in [
            serde_json::Value::Null,
            serde_json::json!({}),
            serde_json::json!([]),
            serde_json::json!(""),
        ] {
            let _ = m.run(&input);
        }
        0
    }

    /// Runs the probe; `Err` says why the filter is refused.
    pub fn check(filter: &str) -> Result<(), String> {
        if !ENABLED.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Ok(exe) = std::env::current_exe() else {
            return Ok(());
        };
        let mut cmd = std::process::Command::new(exe);
        cmd.arg(ARG)
            .arg(filter)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        // a filter that never ends must not outlive an evalgate that is killed meanwhile
        crate::process::die_with_evalgate(&mut cmd);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(_) => return Ok(()),
        };
        let start = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(st)) if st.success() => return Ok(()),
                Ok(Some(st)) => {
                    let mut err = String::new();
                    if let Some(mut e) = child.stderr.take() {
                        let _ = (&mut e).take(4096).read_to_string(&mut err);
                    }
                    let why = if err.contains("overflow") {
                        "it recursed without end (stack overflow)".to_string()
                    } else {
                        format!("it crashed ({st})")
                    };
                    return Err(format!(
                        "{why} when run on null, {{}}, [] or \"\"; a recursive `def` needs a case that stops"
                    ));
                }
                Ok(None) if start.elapsed() < LIMIT => std::thread::sleep(Duration::from_millis(5)),
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "it did not finish within {} s on null, {{}}, [] or \"\" (a filter that never ends, such as `def f: f; f`)",
                        LIMIT.as_secs()
                    ));
                }
                Err(_) => return Ok(()),
            }
        }
    }
}

/// jaq value → JSON, without panicking on numbers serde_json cannot represent (those become
/// their decimal text; non-finite floats become null, as jaq prints them).
fn val_to_json(v: &Val) -> Value {
    match v {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Int(i) => Value::from(*i as i64),
        Val::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Val::Num(n) => n
            .parse::<serde_json::Number>()
            .map_or_else(|_| Value::String(n.to_string()), Value::Number),
        Val::Str(s) => Value::String(s.to_string()),
        Val::Arr(items) => Value::Array(items.iter().map(val_to_json).collect()),
        Val::Obj(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.to_string(), val_to_json(v)))
                .collect(),
        ),
    }
}

/// jaq's lexer/parser/loader diagnostics as one line.
fn load_errors_message(code: &str, errs: load::Errors<&str, ()>) -> String {
    let mut parts = Vec::new();
    for (_file, err) in errs {
        match err {
            load::Error::Io(errs) => {
                for (path, msg) in errs {
                    parts.push(format!("cannot load module {path:?}: {msg}"));
                }
            }
            load::Error::Lex(errs) => {
                for (expected, rest) in errs {
                    let expected = lex_expectation(&expected);
                    parts.push(match offset(code, rest) {
                        Some(at) if at < code.len() => {
                            format!("expected {expected} at offset {at}")
                        }
                        _ => format!("expected {expected} at end of input"),
                    });
                }
            }
            load::Error::Parse(errs) => {
                for (expected, found) in errs {
                    let expected = expected.as_str();
                    parts.push(match offset(code, found) {
                        _ if found.is_empty() => format!("expected {expected}, found end of input"),
                        Some(at) => format!("expected {expected}, found {found:?} at offset {at}"),
                        None => format!("expected {expected}, found {found:?}"),
                    });
                }
            }
        }
    }
    if parts.is_empty() {
        "unknown load error".to_string()
    } else {
        parts.join("; ")
    }
}

/// jaq's compile diagnostics (undefined names) as one line.
fn compile_errors_message(errs: jaq_core::compile::Errors<&str, ()>) -> String {
    let parts: Vec<String> = errs
        .into_iter()
        .flat_map(|(_file, errs)| errs)
        .map(|(name, undefined)| match undefined {
            jaq_core::compile::Undefined::Filter(arity) => {
                format!("undefined filter `{name}/{arity}`")
            }
            other => format!("undefined {} `{name}`", other.as_str()),
        })
        .collect();
    if parts.is_empty() {
        "unknown compile error".to_string()
    } else {
        parts.join("; ")
    }
}

/// What the lexer expected (jaq's own `as_str` panics on delimiters it does not know).
fn lex_expectation(e: &load::lex::Expect<&str>) -> String {
    use load::lex::Expect;
    match e {
        Expect::Digit => "digit".into(),
        Expect::Ident => "identifier".into(),
        Expect::Delim("(") => "closing parenthesis".into(),
        Expect::Delim("[") => "closing bracket".into(),
        Expect::Delim("{") => "closing brace".into(),
        Expect::Delim("\"") => "closing quote".into(),
        Expect::Delim(open) => format!("closing delimiter for {open:?}"),
        Expect::Escape => "string escape sequence".into(),
        Expect::Unicode => "4-digit hexadecimal code point".into(),
        Expect::Token => "token".into(),
        _ => "something else".into(),
    }
}

/// Where `part` starts in `whole`, if it is a slice of it.
fn offset(whole: &str, part: &str) -> Option<usize> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (start + part.len() <= whole.len()).then_some(start)
}

/// `s` quoted as a JSON string, truncated to about [`QUOTE_CHARS`] characters.
fn quote(s: &str) -> String {
    let t = truncate(s, QUOTE_CHARS);
    format!("{t:?}")
}

/// At most `max` characters of `s`, with an ellipsis and the full length when cut.
fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((cut, _)) => format!("{}… ({} chars in all)", &s[..cut], s.chars().count()),
    }
}

// `Mapper` is shared across concurrent queries.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Mapper>();
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A CallToolResult carrying `payload` as JSON text in one text block.
    fn as_text(payload: &Value) -> Value {
        json!({"content": [{"type": "text", "text": payload.to_string()}], "isError": false})
    }

    /// A CallToolResult carrying `payload` as structured content (plus a useless text block, as
    /// some servers add one for older clients).
    fn as_structured(payload: &Value) -> Value {
        json!({
            "content": [{"type": "text", "text": "see structured content"}],
            "structuredContent": payload,
            "isError": false
        })
    }

    fn full_mode() -> Value {
        json!({
            "query": "open an issue",
            "tools": [
                {"name": "github:create_issue", "description": "Create an issue",
                 "inputSchema": {"type": "object", "properties": {}}, "score": 3.2,
                 "server": "github", "call_with": "call_tool_write"},
                {"name": "gitlab:create_issue", "description": "Create an issue",
                 "inputSchema": {"type": "object", "properties": {}}, "score": 2.9,
                 "server": "gitlab", "call_with": "call_tool_write"},
                {"name": "jira:new_ticket", "description": "Open a ticket",
                 "inputSchema": {"type": "object", "properties": {}}, "score": 1.0,
                 "server": "jira", "call_with": "call_tool_write"}
            ],
            "total": 3,
            "usage_instructions": "TOOL SELECTION GUIDE: ..."
        })
    }

    fn compact_mode() -> Value {
        json!({
            "tools": [
                {"id": "github:create_issue", "score": 3.2, "sig": "title*:str", "desc": "Create an issue", "lossy": false},
                {"id": "gitlab:create_issue", "score": 2.9, "sig": "title*:str", "desc": "Create an issue", "lossy": false},
                {"id": "jira:new_ticket", "score": 1.0, "sig": "(~)", "desc": "Open a ticket", "lossy": true}
            ],
            "hint": "sig legend: ..."
        })
    }

    const RANKED: [&str; 3] = [
        "github:create_issue",
        "gitlab:create_issue",
        "jira:new_ticket",
    ];

    #[test]
    fn structured_and_text_content_give_identical_ids() {
        let m = Mapper::mcpproxy_retrieve_tools();
        let payload = full_mode();
        let from_text = m.map_call_result(&as_text(&payload)).unwrap();
        let from_structured = m.map_call_result(&as_structured(&payload)).unwrap();
        assert_eq!(from_text, RANKED);
        assert_eq!(from_structured, from_text);
        assert_eq!(call_result_payload(&as_text(&payload)).unwrap(), payload);
        assert_eq!(
            call_result_payload(&as_structured(&payload)).unwrap(),
            payload
        );
    }

    /// mcpproxy before v0.52.0 (v0.51.0 read from its source, `buildFullToolEntry`): `name` is
    /// the bare tool name and `server` is separate. Mapping `.name` alone gave bare names that
    /// are not corpus ids (every query failed); the whole object maps to the same ids as today.
    #[test]
    fn mcpproxy_before_v0_52_bare_names_with_a_server_field() {
        let m = Mapper::mcpproxy_retrieve_tools();
        let mut old = full_mode();
        for t in old["tools"].as_array_mut().unwrap() {
            let name = t["name"]
                .as_str()
                .unwrap()
                .split_once(':')
                .unwrap()
                .1
                .to_string();
            t["name"] = json!(name);
        }
        assert_eq!(old["tools"][0]["name"], "create_issue");
        assert_eq!(m.map_payload(&old).unwrap(), RANKED);
        assert_eq!(m.map_call_result(&as_text(&old)).unwrap(), RANKED);
        // what the old filter gave on such an answer: nothing usable
        let old_filter = Mapper::new(".tools[] | (.name // .id)", IdStyle::Auto).unwrap();
        assert!(old_filter.map_payload(&old).is_err());
    }

    #[test]
    fn mcpproxy_full_and_compact_modes() {
        let m = Mapper::mcpproxy_retrieve_tools();
        assert_eq!(m.map_payload(&full_mode()).unwrap(), RANKED);
        assert_eq!(m.map_payload(&compact_mode()).unwrap(), RANKED);
        assert_eq!(
            m.map_call_result(&as_text(&compact_mode())).unwrap(),
            RANKED
        );
        // Zero matches serialise as an empty tools array (v0.51.0 and older: null).
        assert!(m.map_payload(&json!({"tools": []})).unwrap().is_empty());
        assert!(m.map_payload(&json!({"tools": null})).unwrap().is_empty());
        // but an answer without `tools` is not a list of tools
        assert!(m.map_payload(&json!({"error": "boom"})).is_err());
        assert!(m.map_payload(&json!("text")).is_err());
    }

    #[test]
    fn mcpproxy_rest_search_envelope() {
        let body = json!({"success": true, "data": {"results": [
            {"tool": {"name": "create_issue", "server_name": "github", "description": "..."}, "score": 1.2},
            {"tool": {"name": "read_file", "server_name": "filesystem", "description": "..."}, "score": 0.7}
        ]}});
        let m = Mapper::mcpproxy_rest_search();
        assert_eq!(
            m.map_payload(&body).unwrap(),
            ["github:create_issue", "filesystem:read_file"]
        );
        // The same elements read as pairs.
        let pair = Mapper::new(MCPPROXY_REST_SEARCH_FILTER, IdStyle::Pair).unwrap();
        assert_eq!(
            pair.map_payload(&body).unwrap(),
            ["github:create_issue", "filesystem:read_file"]
        );
        // ... and the whole result object (tool nested under "tool") works too.
        let nested = Mapper::new(".data.results", IdStyle::Auto).unwrap();
        assert_eq!(
            nested.map_payload(&body).unwrap(),
            ["github:create_issue", "filesystem:read_file"]
        );
    }

    #[test]
    fn double_underscore_split_at_first() {
        let m = Mapper::new(".[]", IdStyle::DoubleUnderscore).unwrap();
        let ids = m
            .map_payload(&json!([
                "my_server__read_file",
                "a__b__c",
                "github__create_issue"
            ]))
            .unwrap();
        assert_eq!(
            ids,
            ["my_server:read_file", "a:b__c", "github:create_issue"]
        );
        assert_eq!(
            normalize_id(&json!("my_server__read_file"), IdStyle::Auto).as_deref(),
            Some("my_server:read_file")
        );
        // The double-underscore style does not accept colon ids, nor the colon style `__`.
        assert_eq!(
            normalize_id(&json!("github:create_issue"), IdStyle::DoubleUnderscore),
            None
        );
        assert_eq!(
            normalize_id(&json!("my_server__read_file"), IdStyle::Colon),
            None
        );
        assert_eq!(
            normalize_id(&json!("__read_file"), IdStyle::DoubleUnderscore),
            None
        );
        assert_eq!(normalize_id(&json!("server__"), IdStyle::Auto), None);
    }

    #[test]
    fn pairs_and_order_preserved() {
        let payload = json!({"hits": [
            {"server": "zeta", "name": "last_alphabetically"},
            {"server_name": "alpha", "name": "first"},
            {"server": "mid", "tool": "middle"},
            {"server": "github", "name": "github:create_issue"}
        ]});
        let m = Mapper::new(".hits[]", IdStyle::Pair).unwrap();
        assert_eq!(
            m.map_payload(&payload).unwrap(),
            [
                "zeta:last_alphabetically",
                "alpha:first",
                "mid:middle",
                "github:create_issue"
            ]
        );
        // A stream of [server, tool] arrays.
        let arrays = Mapper::new(
            ".hits[] | [.server // .server_name, .name // .tool]",
            IdStyle::Pair,
        )
        .unwrap();
        assert_eq!(
            arrays.map_payload(&payload).unwrap(),
            [
                "zeta:last_alphabetically",
                "alpha:first",
                "mid:middle",
                "github:create_issue"
            ]
        );
        // A lone pair is one element, not two; a single array of ids is a list.
        let lone = Mapper::new("[.server, .name]", IdStyle::Auto).unwrap();
        assert_eq!(
            lone.map_payload(&json!({"server": "s", "name": "t"}))
                .unwrap(),
            ["s:t"]
        );
        let list = Mapper::new(".ids", IdStyle::Auto).unwrap();
        assert_eq!(
            list.map_payload(&json!({"ids": ["b:x", "a:y"]})).unwrap(),
            ["b:x", "a:y"]
        );
        // Pair style accepts only separate fields.
        assert_eq!(normalize_id(&json!("s:t"), IdStyle::Pair), None);
        assert_eq!(normalize_id(&json!({"id": "s:t"}), IdStyle::Pair), None);
        assert_eq!(
            normalize_id(&json!({"server": "s", "name": "t"}), IdStyle::Colon),
            None
        );
    }

    #[test]
    fn several_json_text_blocks_become_an_array() {
        let result = json!({"content": [
            {"type": "text", "text": "Found 2 tools:"},
            {"type": "text", "text": "{\"name\": \"b:second_rank\"}"},
            {"type": "text", "text": "{\"name\": \"a:third\"}"}
        ]});
        assert_eq!(
            call_result_payload(&result).unwrap(),
            json!([{"name": "b:second_rank"}, {"name": "a:third"}])
        );
        let m = Mapper::new(".[] | .name", IdStyle::Colon).unwrap();
        assert_eq!(
            m.map_call_result(&result).unwrap(),
            ["b:second_rank", "a:third"]
        );
    }

    #[test]
    fn error_filter_that_does_not_compile_names_the_filter() {
        for bad in [
            ".tools[] | (.name",
            ".tools[] | nosuchfilter",
            ".tools[] | $nope",
            ".tools[] |",
        ] {
            let err = Mapper::new(bad, IdStyle::Auto).unwrap_err();
            assert!(
                matches!(&err, MapError::Compile { filter, .. } if filter == bad),
                "{err:?}"
            );
            let msg = err.to_string();
            assert!(msg.contains(bad), "{msg}");
        }
        let msg = Mapper::new(".tools[] | nosuchfilter", IdStyle::Auto)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("nosuchfilter/0"), "{msg}");
    }

    #[test]
    fn error_non_json_text_content() {
        let result = json!({"content": [{"type": "text", "text": format!("tools[2]{{name}}: {}", "x".repeat(500))}]});
        let err = Mapper::mcpproxy_retrieve_tools()
            .map_call_result(&result)
            .unwrap_err();
        let MapError::NotJson { found } = &err else {
            panic!("{err:?}")
        };
        assert!(found.contains("tools[2]{name}"), "{found}");
        assert!(found.chars().count() < 300, "not truncated: {found}");
        let empty = call_result_payload(&json!({"content": []})).unwrap_err();
        assert!(matches!(empty, MapError::NotJson { .. }), "{empty:?}");
    }

    #[test]
    fn error_is_error_result() {
        let result = json!({
            "content": [{"type": "text", "text": "Search failed: index not ready"}],
            "isError": true
        });
        let err = Mapper::mcpproxy_retrieve_tools()
            .map_call_result(&result)
            .unwrap_err();
        assert_eq!(
            err,
            MapError::ToolError {
                text: "Search failed: index not ready".to_string()
            }
        );
        assert!(err.to_string().contains("index not ready"));
    }

    #[test]
    fn error_element_that_is_a_number() {
        let m = Mapper::new(".tools[]", IdStyle::Auto).unwrap();
        let err = m.map_payload(&json!({"tools": ["a:b", 42]})).unwrap_err();
        let MapError::BadElement { index, element, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!((*index, element.as_str()), (1, "42"));
        assert!(err.to_string().contains("server:tool"), "{err}");
        // A missing field is null, also rejected rather than silently dropped.
        let err = Mapper::mcpproxy_retrieve_tools()
            .map_payload(&json!({"tools": [{"score": 1.0}]}))
            .unwrap_err();
        assert!(
            matches!(err, MapError::BadElement { index: 0, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn error_at_runtime() {
        let m = Mapper::new(".tools[]", IdStyle::Auto).unwrap();
        let err = m.map_payload(&json!({"tools": 7})).unwrap_err();
        assert!(
            matches!(&err, MapError::Runtime { filter, .. } if filter == ".tools[]"),
            "{err:?}"
        );
        let runaway = Mapper::new("repeat(\"a:b\")", IdStyle::Auto).unwrap();
        assert!(matches!(
            runaway.map_payload(&json!(null)),
            Err(MapError::Runtime { .. })
        ));
    }

    #[test]
    fn std_definitions_available_and_mapper_reusable_across_threads() {
        let m = Mapper::new(
            "[.tools[] | select(.score > 1) | .name] | map(ascii_downcase)",
            IdStyle::Colon,
        )
        .unwrap();
        let payload = json!({"tools": [
            {"name": "GitHub:Create_Issue", "score": 2},
            {"name": "x:y", "score": 0.5}
        ]});
        let m = std::sync::Arc::new(m);
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (m, p) = (m.clone(), payload.clone());
                std::thread::spawn(move || m.map_payload(&p).unwrap())
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), ["github:create_issue"]);
        }
    }

    #[test]
    fn id_style_serde_names() {
        let styles: Vec<IdStyle> =
            serde_json::from_value(json!(["auto", "colon", "double_underscore", "pair"])).unwrap();
        assert_eq!(
            styles,
            [
                IdStyle::Auto,
                IdStyle::Colon,
                IdStyle::DoubleUnderscore,
                IdStyle::Pair
            ]
        );
    }

    #[test]
    fn fastmcp_result_envelopes_open_once() {
        let m = Mapper::new(".[]", IdStyle::Auto).unwrap();
        let ids = json!(["a:x", "b:y"]);
        // JSON inside `result` is decoded
        let wrapped = as_structured(&json!({"result": ids.to_string()}));
        assert_eq!(m.map_call_result(&wrapped).unwrap(), ["a:x", "b:y"]);
        // plain text inside `result` reaches the filter as the string it is
        let text = Mapper::new(r#"[splits("\n") | ltrimstr("- ")]"#, IdStyle::Auto).unwrap();
        let wrapped = as_structured(&json!({"result": "- a__x\n- b__y"}));
        assert_eq!(text.map_call_result(&wrapped).unwrap(), ["a:x", "b:y"]);
        // an in-band failure is a tool error quoting its message
        let failed = as_text(&json!({"success": false, "error": "index not built"}));
        match m.map_call_result(&failed) {
            Err(MapError::ToolError { text }) => assert!(text.contains("index not built")),
            other => panic!("expected a tool error, got {other:?}"),
        }
        // a second key means it is not an envelope: the object goes to the filter unchanged
        let two = as_structured(&json!({"result": "[1]", "n": 1}));
        let e = m.map_call_result(&two).unwrap_err().to_string();
        assert!(e.contains(r#"got "[1]""#), "{e}");
    }
}
