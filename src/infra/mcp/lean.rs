//! A lean streamable-HTTP carriage for rmcp's client, used by the search session alone.
//!
//! rmcp's own streamable-HTTP client runs a worker task between its service loop and the HTTP
//! connection: every call crosses the service loop, a send task, the worker and a POST task
//! before it reaches the connection, and the answer goes back the same way. At concurrency 1 those
//! hand-offs were a measurable part of each search (docs/performance.md). This transport does the
//! POST inside rmcp's send task and hands the decoded answer straight to the service loop. The MCP
//! protocol stays rmcp's: the handshake, request ids, answer routing and the message types.
//!
//! What it carries (MCP 2025-03-26 … 2025-11-25 streamable HTTP, client side):
//! - every message is one POST with `Accept: application/json, text/event-stream`;
//! - `Mcp-Session-Id` from the `initialize` answer is sent on every later request, and
//!   `MCP-Protocol-Version` once it is negotiated; `close` ends the session with DELETE;
//! - an answer is `202`/`204` (nothing), one `application/json` message, or a
//!   `text/event-stream` of messages (read until the server ends it);
//! - an error status with a JSON-RPC error body delivers that error; any other error status is a
//!   send error naming the status and the start of the body.
//!
//! It opens no standalone GET stream: a search needs no message the server starts on its own.
//! Anything it cannot read is an error of the call, never an invented answer.

use crate::infra::http::{BodyError, MAX_ANSWER, read_body};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ContentBlock, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::transport::Transport;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The largest event of a stream read (a JSON body: [`MAX_ANSWER`], as for REST).
const MAX_MESSAGE: usize = MAX_ANSWER;

#[derive(Debug, thiserror::Error)]
pub enum LeanError {
    #[error("{0}")]
    Http(String),
    #[error("HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the answer is not an MCP message: {0}")]
    Garbage(String),
    #[error("the session ended")]
    Closed,
}

#[derive(Default)]
struct Negotiated {
    session: Option<HeaderValue>,
    version: Option<HeaderValue>,
    /// The server has answered with an event stream: from then on each POST goes on a new
    /// connection (see [`LeanHttp::fresh`]).
    streams: bool,
}

pub struct LeanHttp {
    client: reqwest::Client,
    /// Keeps no idle connection. A server that answers with an event stream often writes the
    /// headers and the events separately without `TCP_NODELAY` (rmcp's does): on a reused
    /// connection, where the kernel delays its acknowledgements, the events then wait ~40 ms
    /// for the acknowledgement of the headers. A new connection acknowledges at once.
    fresh: reqwest::Client,
    url: Arc<str>,
    headers: Arc<HeaderMap>,
    state: Arc<Mutex<Negotiated>>,
    tx: mpsc::UnboundedSender<ServerJsonRpcMessage>,
    rx: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
}

impl LeanHttp {
    /// `headers` go on every request; `timeout` bounds each one (the caller bounds the call too).
    pub fn new(url: &str, headers: HeaderMap, timeout: Duration) -> anyhow::Result<LeanHttp> {
        super::init_tls();
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .pool_max_idle_per_host(64)
            .build()?;
        let fresh = reqwest::Client::builder()
            .timeout(timeout)
            .pool_max_idle_per_host(0)
            .build()?;
        let (tx, rx) = mpsc::unbounded_channel();
        Ok(LeanHttp {
            client,
            fresh,
            url: url.into(),
            headers: Arc::new(headers),
            state: Arc::default(),
            tx,
            rx,
        })
    }

    fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let state = self.state.lock().expect("negotiated state");
        let client = if state.streams {
            &self.fresh
        } else {
            &self.client
        };
        let mut req = client
            .request(method, &*self.url)
            .headers((*self.headers).clone());
        if let Some(s) = &state.session {
            req = req.header(HeaderName::from_static(SESSION_ID), s.clone());
        }
        if let Some(v) = &state.version {
            req = req.header(HeaderName::from_static(PROTOCOL_VERSION), v.clone());
        }
        req
    }
}

/// A request's failure in words, without its URL: a query string may carry a key, and these
/// messages reach reports (the callers name the endpoint, redacted).
fn http_error(e: reqwest::Error) -> LeanError {
    LeanError::Http(crate::infra::mcp::readable(&e.without_url()))
}

/// Reads the body whole, as the REST search does ([`read_body`], at most [`MAX_ANSWER`]).
async fn body(resp: reqwest::Response) -> Result<String, LeanError> {
    read_body(resp, MAX_ANSWER).await.map_err(|e| match e {
        BodyError::Read(e) => http_error(e),
        e @ BodyError::TooLarge(_) => LeanError::Garbage(e.to_string()),
    })
}

fn decode(bytes: &[u8]) -> Result<ServerJsonRpcMessage, LeanError> {
    if let Some(msg) = tool_text_answer(bytes) {
        return Ok(msg);
    }
    serde_json::from_slice(bytes).map_err(|e| {
        LeanError::Garbage(format!(
            "{e}; it starts {:?}",
            crate::infra::text::sanitize::clip(&String::from_utf8_lossy(bytes), 120)
        ))
    })
}

/// The answer to a tool call whose content is text blocks alone, the shape of every search
/// answer, read in one typed pass: rmcp's own decode buffers the whole message into a tree first
/// to tell the kinds of message apart, copying every text. Anything else (another field, a
/// string id, an error, a block of another type, a duplicate key, …) is `None`, left to rmcp's
/// decode. Where it answers, it gives exactly what rmcp's decode gives (tested).
fn tool_text_answer(bytes: &[u8]) -> Option<ServerJsonRpcMessage> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Answer {
        jsonrpc: String,
        id: i64,
        result: Call,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Call {
        content: Vec<Block>,
        #[serde(rename = "isError")]
        is_error: Option<bool>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Block {
        #[serde(rename = "type")]
        kind: String,
        text: String,
    }
    let a: Answer = serde_json::from_slice(bytes).ok()?;
    if a.jsonrpc != "2.0" || a.result.content.iter().any(|b| b.kind != "text") {
        return None;
    }
    let blocks = a.result.content.into_iter();
    let mut call = CallToolResult::success(blocks.map(|b| ContentBlock::text(b.text)).collect());
    call.result_type = None;
    call.is_error = a.result.is_error;
    Some(ServerJsonRpcMessage::response(
        ServerResult::CallToolResult(call),
        RequestId::Number(a.id),
    ))
}

/// Hands a message to the service loop, noting the protocol version an `initialize` answer
/// negotiates.
fn deliver(
    msg: ServerJsonRpcMessage,
    state: &Mutex<Negotiated>,
    tx: &mpsc::UnboundedSender<ServerJsonRpcMessage>,
) -> Result<(), LeanError> {
    if let ServerJsonRpcMessage::Response(r) = &msg
        && let ServerResult::InitializeResult(init) = &r.result
        && let Ok(v) = HeaderValue::from_str(init.protocol_version.as_str())
    {
        state.lock().expect("negotiated state").version = Some(v);
    }
    tx.send(msg).map_err(|_| LeanError::Closed)
}

/// Server-sent events: each event's `data` lines joined by newlines; events without data (a
/// priming event, a comment) carry no message.
struct Events {
    buf: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
}

impl Events {
    fn new() -> Events {
        Events {
            buf: Vec::new(),
            data: Vec::new(),
            has_data: false,
        }
    }

    /// Feeds bytes; returns the data of every event they complete.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), LeanError> {
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(i) = memchr::memchr2(b'\n', b'\r', &self.buf[start..]) {
            let end = start + i;
            // a lone `\r` at the end may be the first half of `\r\n`: wait for the next byte
            if self.buf[end] == b'\r' && end + 1 == self.buf.len() {
                break;
            }
            let line = &self.buf[start..end];
            let next = if self.buf[end] == b'\r' && self.buf.get(end + 1) == Some(&b'\n') {
                end + 2
            } else {
                end + 1
            };
            if line.is_empty() {
                // an event whose data is empty (a priming event) is not dispatched
                if self.has_data && !self.data.iter().all(u8::is_ascii_whitespace) {
                    out.push(std::mem::take(&mut self.data));
                }
                self.has_data = false;
                self.data.clear();
            } else if line[0] != b':' {
                let (field, value) = match line.iter().position(|&b| b == b':') {
                    Some(c) => {
                        let v = &line[c + 1..];
                        (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
                    }
                    None => (line, &b""[..]),
                };
                if field == b"data" {
                    if self.has_data {
                        self.data.push(b'\n');
                    }
                    self.data.extend_from_slice(value);
                    self.has_data = true;
                    if self.data.len() > MAX_MESSAGE {
                        return Err(LeanError::Garbage(format!(
                            "an event larger than {} MB",
                            MAX_MESSAGE >> 20
                        )));
                    }
                }
            }
            start = next;
        }
        self.buf.drain(..start);
        Ok(())
    }
}

impl Transport<RoleClient> for LeanHttp {
    type Error = LeanError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), LeanError>> + Send + 'static {
        let initialize = matches!(&item, ClientJsonRpcMessage::Request(r)
            if matches!(r.request, rmcp::model::ClientRequest::InitializeRequest(_)));
        let request = matches!(&item, ClientJsonRpcMessage::Request(_));
        let body_bytes = serde_json::to_vec(&item);
        let req = self
            .request(reqwest::Method::POST)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json");
        let state = self.state.clone();
        let tx = self.tx.clone();
        async move {
            let bytes = body_bytes.map_err(|e| LeanError::Garbage(e.to_string()))?;
            let mut resp = req.body(bytes).send().await.map_err(http_error)?;
            let status = resp.status();
            if initialize && let Some(s) = resp.headers().get(SESSION_ID) {
                state.lock().expect("negotiated state").session = Some(s.clone());
            }
            if status == reqwest::StatusCode::ACCEPTED || status == reqwest::StatusCode::NO_CONTENT
            {
                return Ok(());
            }
            let kind = resp
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            if !status.is_success() {
                let text = body(resp).await.unwrap_or_default();
                // a JSON-RPC error in an error status is the server's answer to the call
                if kind.starts_with("application/json")
                    && let Ok(msg @ ServerJsonRpcMessage::Error(_)) = decode(text.as_bytes())
                {
                    return deliver(msg, &state, &tx);
                }
                return Err(LeanError::Status {
                    status: status.as_u16(),
                    body: crate::infra::text::sanitize::clip(&text, 300).to_string(),
                });
            }
            if kind.starts_with("text/event-stream") {
                state.lock().expect("negotiated state").streams = true;
                let mut events = Events::new();
                let mut done = Vec::new();
                let mut answered = false;
                // the stream is read up to the request's answer, then let go: a server may hold
                // its end open a while after it (rmcp's, with sessions, ~40 ms), and in a
                // session it may not take the next request before that stream has ended
                while !answered && let Some(chunk) = resp.chunk().await.map_err(http_error)? {
                    events.feed(&chunk, &mut done)?;
                    for data in done.drain(..) {
                        let msg = decode(&data)?;
                        answered |= request
                            && matches!(
                                msg,
                                ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)
                            );
                        deliver(msg, &state, &tx)?;
                    }
                }
                // a request's stream that ends unanswered is a failure now, not a wait until
                // the caller's timeout
                if request && !answered {
                    return Err(LeanError::Http(
                        "the server ended the answer's event stream without an answer".into(),
                    ));
                }
                return Ok(());
            }
            let text = body(resp).await?;
            if text.trim().is_empty() {
                // an empty 200 for a notification or a response: accepted
                return Ok(());
            }
            deliver(decode(text.as_bytes())?, &state, &tx)
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), LeanError> {
        self.rx.close();
        let has_session = self
            .state
            .lock()
            .expect("negotiated state")
            .session
            .is_some();
        if has_session {
            // ending the session is a courtesy: a server that does not allow it is not an error
            let _ = self.request(reqwest::Method::DELETE).send().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<String> {
        let mut e = Events::new();
        let mut out = Vec::new();
        for c in chunks {
            e.feed(c, &mut out).unwrap();
        }
        out.into_iter()
            .map(|d| String::from_utf8(d).unwrap())
            .collect()
    }

    #[test]
    fn events_are_cut_at_blank_lines_whatever_the_chunks() {
        let whole: &[u8] = b"id: 0\nretry: 3000\ndata:\n\n: comment\nevent: message\ndata: {\"a\":\ndata:1}\n\ndata:x\r\n\r\ndata: y\r\rdata: z\n";
        let want = vec!["{\"a\":\n1}", "x", "y"];
        assert_eq!(events(&[whole]), want);
        for cut in 1..whole.len() {
            assert_eq!(
                events(&[&whole[..cut], &whole[cut..]]),
                want,
                "cut at {cut}"
            );
        }
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(events(&bytes), want);
    }

    /// The fast read of a tool's text answer gives what rmcp's decode gives, or leaves it alone.
    #[test]
    fn a_tool_text_answer_reads_as_rmcp_reads_it() {
        let answers = [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"tools\":[]}"}],"isError":false}}"#,
            r#"{"result":{"isError":true,"content":[{"text":"no \u00e9 \ud83d\ude00\n","type":"text"}]},"id":-3,"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"content":[]}}"#,
            r#" {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"},{"type":"text","text":""}]}} "#,
        ];
        for a in answers {
            let fast = tool_text_answer(a.as_bytes()).unwrap_or_else(|| panic!("not read: {a}"));
            let rmcp: ServerJsonRpcMessage = serde_json::from_str(a).unwrap();
            // ServerResult has no PartialEq: every field, as Debug prints it
            assert_eq!(format!("{fast:?}"), format!("{rmcp:?}"), "{a}");
        }
        let left = [
            // another field, a string id, a block of another type, an error, not 2.0, duplicates
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"resultType":"complete"}}"#,
            r#"{"jsonrpc":"2.0","id":"7","result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"image","text":"x"}]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x","annotations":{}}]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"no"}}"#,
            r#"{"jsonrpc":"1.0","id":7,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"id":8,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]},"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}} x"#,
        ];
        for a in left {
            assert!(tool_text_answer(a.as_bytes()).is_none(), "{a}");
        }
    }

    #[tokio::test]
    async fn a_failed_request_names_no_url_and_so_no_key() {
        let mut t = LeanHttp::new(
            "http://127.0.0.1:1/mcp?apikey=SEKRET",
            HeaderMap::new(),
            Duration::from_secs(5),
        )
        .unwrap();
        let ping = ClientJsonRpcMessage::request(
            rmcp::model::ClientRequest::PingRequest(Default::default()),
            RequestId::Number(1),
        );
        let e = t.send(ping).await.unwrap_err().to_string();
        assert!(!e.contains("SEKRET") && !e.contains("127.0.0.1"), "{e}");
        assert!(e.to_lowercase().contains("connect"), "{e}");
    }

    #[test]
    fn an_event_without_data_is_not_a_message() {
        assert!(events(&[b"event: ping\nid: 3\n\n: keep-alive\n\n"]).is_empty());
    }
}
