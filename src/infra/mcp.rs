//! MCP plumbing shared by the snapshot, the replay server, the MCP search adapter and the
//! reference proxy: connecting a client over stdio or streamable HTTP (rmcp), and converting
//! between corpus tools and MCP tool definitions.

use crate::infra::process::{Managed, Spec, Supervisor};
use crate::infra::secrets;
use anyhow::{Context, bail};
use rmcp::model::Tool as McpTool;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

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
            Endpoint::Stdio { program, args, .. } => format!("stdio: {program} {}", args.join(" "))
                .trim_end()
                .to_string(),
            Endpoint::Http { url, .. } => format!("streamable HTTP: {}", secrets::redact_url(url)),
        }
    }
}

/// How to bring a connection up: who owns a stdio child, and how long each step may take.
pub struct ConnectOpts<'a> {
    /// Owns the stdio child (its own process group, stderr captured, parent-death signal).
    pub sup: &'a Supervisor,
    /// The limit on starting + `initialize` (and, for callers, on each later request).
    pub timeout: Duration,
    /// Names the child in messages ("cannot start `<name>`").
    pub name: &'a str,
}

/// A connected MCP client: the rmcp service and, for stdio, the supervised child serving it.
pub struct Session<H: ClientHandler> {
    pub service: RunningService<RoleClient, H>,
    pub child: Option<Managed>,
    /// What a stdio server wrote to stdout besides MCP messages.
    pub stdout: Option<std::sync::Arc<watch::StdoutWatch>>,
    pub timeout: Duration,
    pub describe: String,
}

impl<H: ClientHandler> Session<H> {
    /// `tools/list` (all pages), bounded by the session's timeout; a failure says what the
    /// stdio child said and whether it is still alive.
    pub async fn list_all_tools(&self) -> anyhow::Result<Vec<McpTool>> {
        let listed = self.service.peer().list_all_tools();
        let (describe, story) = (&self.describe, || child_story(self.child.as_ref()));
        match tokio::time::timeout(self.timeout, listed).await {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(e)) => bail!(
                "tools/list failed ({describe}): {}{}",
                readable(&e),
                story()
            ),
            Err(_) => Err(timeout(self.timeout, "tools/list", describe, &story())),
        }
    }

    /// The stdio child's exit, if it has exited.
    pub fn exited(&self) -> Option<String> {
        self.child.as_ref().and_then(Managed::try_exited)
    }
}

/// "; the server exited (...)" and its stderr tail, for a stdio child; "" otherwise.
pub fn child_story(child: Option<&Managed>) -> String {
    let Some(c) = child else {
        return String::new();
    };
    let status = c
        .try_exited()
        .map_or(String::new(), |s| format!("; the server exited ({s})"));
    // lines of a stdio server's stderr quoted when it fails
    let tail = c.log_tail(20);
    if tail.trim().is_empty() {
        format!("{status}; it wrote nothing to stderr")
    } else {
        format!("{status}\n--- its stderr (last lines) ---\n{tail}")
    }
}

/// An error and its causes as one line a user can read: the chain joined with ": ", repeated
/// parts dropped, and the Rust type names rmcp puts in its transport errors
/// (`Transport [rmcp::transport::worker::WorkerTransport<…>]`) left out.
pub fn readable(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    for text in chain(e).map(|err| without_type_names(&err.to_string())) {
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

/// `e` and its causes, outermost first.
fn chain<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |err| err.source())
}

/// Drops bracketed Rust paths (`[rmcp::…<…>]`) from a message.
fn without_type_names(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('[') {
        let (head, tail) = rest.split_at(i);
        let body = &tail[1..];
        let mut depth = 0usize;
        let end = body.char_indices().find_map(|(j, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth = depth.saturating_sub(1),
                ']' if depth == 0 => return Some(j),
                _ => {}
            }
            None
        });
        match end {
            Some(j) if body[..j].contains("::") && !body[..j].contains(' ') => {
                out.push_str(head.trim_end());
                rest = &body[j + 1..];
            }
            _ => {
                out.push_str(head);
                out.push('[');
                rest = body;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Why a TCP connection to the URL's host is refused or fails at once, in words (`connection
/// refused`); `None` when it connects or the attempt is still pending after two seconds.
async fn unreachable(url: &str) -> Option<String> {
    let u = reqwest::Url::parse(url).ok()?;
    let connect = tokio::net::TcpStream::connect((u.host_str()?, u.port_or_known_default()?));
    let e = tokio::time::timeout(Duration::from_secs(2), connect)
        .await
        .ok()?
        .err()?;
    Some(io_words(&e))
}

/// A connection failure in plain words: `connection refused`, not `Connection refused (os
/// error 111)` or a library's wrapper of it.
pub fn io_words(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    let words = match e.kind() {
        K::ConnectionRefused => "connection refused",
        K::ConnectionReset => "connection reset",
        K::ConnectionAborted => "connection aborted",
        K::TimedOut => "timed out",
        K::HostUnreachable => "host unreachable",
        K::NetworkUnreachable => "network unreachable",
        K::AddrNotAvailable => "address not available",
        _ => {
            let t = e.to_string();
            return t
                .find(" (os error")
                .map_or(t.clone(), |i| t[..i].to_lowercase());
        }
    };
    words.into()
}

/// Whether `e` (or a cause of it) is a request that ran out of time: a `reqwest` timeout, an
/// I/O `TimedOut`, or a message saying so (rmcp's transport errors keep only the text of the
/// HTTP error that caused them).
pub fn timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    chain(e).any(|err| {
        err.downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_timeout)
            || err
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
            || err.to_string().contains("operation timed out")
    })
}

/// The I/O error in `e`'s chain of causes, in plain words ([`io_words`]), if there is one.
pub fn io_cause(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    chain(e).find_map(|err| err.downcast_ref::<std::io::Error>().map(io_words))
}

/// A failure to connect (or to list) that a caller names for what it is, not a crash; the
/// message is the detail.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// An HTTP endpoint where nothing accepts connections (nothing ran there).
    #[error("{0}")]
    Unreachable(String),
    /// No answer to MCP `initialize` or `tools/list` within the time allowed (in seconds).
    #[error("{1}")]
    Timeout(f64, String),
    /// An answer, but not in MCP messages (garbage, not a timeout).
    #[error("{0}")]
    Garbage(String),
}

/// Watching a stdio server's stdout on its way to the MCP client: lines that cannot be MCP
/// messages are counted and the first is kept, so a server that logs to stdout (or prints
/// nothing but noise) is named as such instead of as a timeout; a line beyond [`MAX_LINE`](watch::MAX_LINE), or
/// one that starts like a message (`{`, `[`) but is not JSON-RPC, ends the stream at once
/// (a broken answer, not a wait for the timeout).
pub mod watch {
    use std::pin::Pin;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll};
    use tokio::io::{AsyncRead, ReadBuf};

    /// The longest line (one MCP message) read from a stdio server, in bytes: the cap on an
    /// HTTP answer too. A longer one is a broken answer at once (named as garbage), not a wait
    /// for the timeout while the line grows in memory.
    pub const MAX_LINE: usize = crate::infra::http::MAX_ANSWER;
    /// How much of the first stray line is quoted.
    const SAMPLE: usize = 120;

    /// What was seen on a stdout.
    #[derive(Debug, Default)]
    pub struct StdoutWatch {
        stray: AtomicU64,
        first: Mutex<String>,
        /// What ended the stream, as the note says it: a line longer than [`MAX_LINE`], or one
        /// that starts like a message but is not JSON-RPC.
        ended: Mutex<Option<String>>,
    }

    impl StdoutWatch {
        /// "it wrote N line(s) to stdout that are not MCP messages, the first: …", once any;
        /// or that a message was longer than evalgate reads.
        pub fn note(&self) -> Option<String> {
            if let Some(ended) = &*self.ended.lock().unwrap_or_else(|p| p.into_inner()) {
                return Some(ended.clone());
            }
            let n = self.stray.load(Ordering::Relaxed);
            if n == 0 {
                return None;
            }
            let first = self.first.lock().unwrap_or_else(|p| p.into_inner());
            Some(format!(
                "it wrote {n} line(s) to stdout that are not MCP messages (stdout carries only JSON-RPC; logs belong on stderr), the first: {:?}",
                crate::infra::text::sanitize::term(&first, SAMPLE)
            ))
        }
    }

    /// A stdout passed through unchanged while being watched.
    pub struct Watched<R> {
        inner: R,
        seen: Arc<StdoutWatch>,
        line_start: bool,
        line_len: usize,
        sampling: bool,
        /// The current line starts with `{` or `[` (a JSON-RPC message or batch): it is kept
        /// in `line` and checked when it ends.
        buffering: bool,
        line: Vec<u8>,
    }

    /// Why `line` (a whole line that starts with `{` or `[`) cannot be a JSON-RPC message a
    /// server sends, or `None` when it can. Lenient where rmcp is: a message with a `method`
    /// (a request or notification, however shaped) and an error answer without an id pass.
    pub fn not_json_rpc(line: &[u8]) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct Shape {
            jsonrpc: Option<serde_json::Value>,
            id: Option<serde_json::Value>,
            method: Option<serde::de::IgnoredAny>,
            result: Option<serde::de::IgnoredAny>,
            error: Option<serde::de::IgnoredAny>,
        }
        fn check(m: &Shape) -> Option<String> {
            if m.jsonrpc.as_ref().and_then(|v| v.as_str()) != Some("2.0") {
                return Some("its \"jsonrpc\" is not \"2.0\"".into());
            }
            if m.method.is_some() {
                return None;
            }
            let id_ok = matches!(
                m.id,
                Some(serde_json::Value::Number(_) | serde_json::Value::String(_))
            );
            match (m.result.is_some(), m.error.is_some()) {
                (true, false) if id_ok => None,
                (false, true) => None,
                (true, false) => Some("an answer without a number or string id".into()),
                (true, true) => Some("both a result and an error".into()),
                (false, false) => Some("no method, result or error".into()),
            }
        }
        let first = line.iter().find(|b| !b.is_ascii_whitespace());
        if first == Some(&b'[') {
            return match serde_json::from_slice::<Vec<Shape>>(line) {
                Ok(batch) => batch.iter().find_map(check),
                Err(e) => Some(format!("not JSON: {e}")),
            };
        }
        match serde_json::from_slice::<Shape>(line) {
            Ok(m) => check(&m),
            Err(e) if e.is_data() => Some(format!("not a JSON-RPC object: {e}")),
            Err(e) => Some(format!("not JSON: {e}")),
        }
    }

    impl<R> Watched<R> {
        pub fn new(inner: R, seen: Arc<StdoutWatch>) -> Self {
            Watched {
                inner,
                seen,
                line_start: true,
                line_len: 0,
                sampling: false,
                buffering: false,
                line: Vec::new(),
            }
        }

        fn inspect(&mut self, bytes: &[u8]) -> std::io::Result<()> {
            // every piece but the last ends a line (an empty piece changes nothing)
            let mut pieces = bytes.split(|&b| b == b'\n').peekable();
            while let Some(piece) = pieces.next() {
                self.segment(piece)?;
                if pieces.peek().is_some() {
                    self.end_line()?;
                }
            }
            Ok(())
        }

        /// A part of a line (no newline in it).
        fn segment(&mut self, seg: &[u8]) -> std::io::Result<()> {
            self.line_len += seg.len();
            if self.line_len > MAX_LINE {
                let mib = MAX_LINE >> 20;
                *self.seen.ended.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!(
                    "it wrote a line of more than {mib} MiB to stdout (one MCP message; evalgate reads at most that much of an answer)"
                ));
                let why = format!("a line of more than {mib} MiB on stdout");
                return Err(std::io::Error::other(why));
            }
            let mut rest = seg;
            if self.line_start {
                let skip = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
                rest = &rest[skip..];
                if let Some(&b) = rest.first() {
                    self.line_start = false;
                    // every JSON-RPC message (or batch) starts with { or [
                    if b == b'{' || b == b'[' {
                        self.buffering = true;
                    } else if self.seen.stray.fetch_add(1, Ordering::Relaxed) == 0 {
                        self.sampling = true;
                    }
                }
            }
            if self.buffering {
                self.line.extend_from_slice(rest);
            }
            if self.sampling {
                let mut first = self.seen.first.lock().unwrap_or_else(|p| p.into_inner());
                let room = (SAMPLE * 4).saturating_sub(first.len());
                first.extend(rest.iter().take(room).map(|&b| b as char));
                if first.len() >= SAMPLE * 4 {
                    self.sampling = false;
                }
            }
            Ok(())
        }

        /// The end of a line: a message that cannot be JSON-RPC ends the stream at once (rmcp
        /// would drop it and leave the request waiting for the whole timeout).
        fn end_line(&mut self) -> std::io::Result<()> {
            if self.buffering
                && let Some(why) = not_json_rpc(&self.line)
            {
                let sample = String::from_utf8_lossy(&self.line[..self.line.len().min(SAMPLE * 4)]);
                *self.seen.ended.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!(
                    "it wrote a line to stdout that is not a JSON-RPC message ({why}): {:?}",
                    crate::infra::text::sanitize::term(&sample, SAMPLE)
                ));
                return Err(std::io::Error::other(format!(
                    "a line on stdout that is not a JSON-RPC message ({why})"
                )));
            }
            self.line_start = true;
            self.line_len = 0;
            self.sampling = false;
            self.buffering = false;
            self.line.clear();
            if self.line.capacity() > 1 << 20 {
                self.line = Vec::new();
            }
            Ok(())
        }
    }

    impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let this = self.get_mut();
            let before = buf.filled().len();
            let r = Pin::new(&mut this.inner).poll_read(cx, buf);
            if let Poll::Ready(Ok(())) = r
                && let Err(e) = this.inspect(&buf.filled()[before..])
            {
                // an error reads nothing (AsyncRead's contract)
                buf.set_filled(before);
                return Poll::Ready(Err(e));
            }
            r
        }
    }
}

/// What [`connect`] waits for an answer to.
const INIT: &str = "MCP initialize";

/// Connects and initializes, within `opts.timeout`. A stdio server is started by the supervisor
/// (own process group, stderr kept for messages, killed with evalgate); when it fails to come
/// up, the error quotes its exit status and the tail of its stderr, and it is stopped.
pub async fn connect<H: ClientHandler>(
    ep: &Endpoint,
    handler: H,
    opts: &ConnectOpts<'_>,
) -> anyhow::Result<Session<H>> {
    let describe = ep.describe();
    let limit = opts.timeout;
    let session = |service, child, stdout| Session {
        service,
        child,
        stdout,
        timeout: limit,
        describe: describe.clone(),
    };
    match ep {
        Endpoint::Stdio {
            program,
            args,
            env,
            cwd,
        } => {
            let mut spec = Spec::new(opts.name.to_string(), program);
            spec.args = args.clone();
            spec.env = env.clone();
            spec.cwd = cwd.clone();
            spec.stdio = true;
            let child = opts
                .sup
                .spawn(spec)
                .with_context(|| format!("cannot start {describe}"))?;
            let (stdin, stdout) = child
                .take_stdio()
                .context("the stdio pipes of a just-started server are missing")?;
            let seen = std::sync::Arc::new(watch::StdoutWatch::default());
            let stdout = watch::Watched::new(stdout, seen.clone());
            let outcome = tokio::time::timeout(limit, handler.serve((stdout, stdin))).await;
            // `None`: no answer in time
            let failed = match outcome {
                Ok(Ok(service)) => return Ok(session(service, Some(child), Some(seen))),
                Ok(Err(e)) => {
                    // give a dying server a moment to finish its last words and its exit
                    let _ = child.wait_exit(Duration::from_millis(500)).await;
                    Some(format!(
                        "MCP initialize failed ({describe}): {}",
                        readable(&e)
                    ))
                }
                Err(_) => None,
            };
            let story = child_story(Some(&child));
            child.terminate(Duration::from_secs(1)).await;
            let secs = limit.as_secs_f64();
            // a server that answered, just not in MCP, is a broken one, not a slow one
            let detail = match (failed, seen.note()) {
                (None, Some(note)) => format!(
                    "no MCP answer to initialize within {secs} s ({describe}): {note}{story}"
                ),
                (None, None) => return Err(timeout(limit, INIT, &describe, &story)),
                (Some(what), Some(note)) => format!("{what}: {note}{story}"),
                (Some(what), None) => bail!("{what}{story}"),
            };
            Err(Failure::Garbage(detail).into())
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
            // rmcp's client carries the session (Mcp-Session-Id, the protocol version header) and
            // caps what it reads: a JSON answer and an event at 16 MiB each
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.clone()).custom_headers(custom);
            let transport = StreamableHttpClientTransport::from_config(config);
            let service = match tokio::time::timeout(limit, handler.serve(transport)).await {
                Ok(Ok(s)) => s,
                Err(_) => return Err(timeout(limit, INIT, &describe, "")),
                // an error that is itself a timeout (of the connection, say) is the same wait for
                // `initialize`: a timeout, not a crash
                Ok(Err(e)) if timed_out(&e) => return Err(timeout(limit, INIT, &describe, "")),
                Ok(Err(e)) => {
                    // name the usual cause plainly: nothing listening there
                    if let Some(why) = unreachable(url).await {
                        let detail =
                            format!("could not connect to {}: {why}", secrets::redact_url(url));
                        return Err(Failure::Unreachable(detail).into());
                    }
                    bail!("MCP initialize failed ({describe}): {}", readable(&e));
                }
            };
            Ok(session(service, None, None))
        }
    }
}

/// The [`Failure::Timeout`] of a server that did not answer `what` within `limit`.
fn timeout(limit: Duration, what: &str, describe: &str, story: &str) -> anyhow::Error {
    let secs = limit.as_secs_f64();
    let detail = format!("no answer to {what} within {secs} s ({describe}){story}");
    Failure::Timeout(secs, detail).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmcp_type_names_are_left_out_of_messages() {
        let raw = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::async_impl::client::Client>>] error: Client error: error sending request for url (http://127.0.0.1:1/mcp), when send initialize request";
        assert_eq!(
            without_type_names(raw),
            "Send message error Transport error: Client error: error sending request for url (http://127.0.0.1:1/mcp), when send initialize request"
        );
        // brackets that are not a type path stay
        assert_eq!(
            without_type_names("ids [a, b] and [x::y z]"),
            "ids [a, b] and [x::y z]"
        );
        assert_eq!(without_type_names("unclosed [a::b"), "unclosed [a::b");
    }

    /// A message over the cap ends the stream as soon as it passes the cap, and the note says
    /// so (the caller names it garbage); a stray text line is counted and quoted.
    #[tokio::test]
    async fn a_line_over_the_cap_ends_the_stream_at_once_and_is_named() {
        use tokio::io::AsyncReadExt;
        let seen = std::sync::Arc::new(watch::StdoutWatch::default());
        let mut big = b"{\"jsonrpc\":\"2.0\",\"result\":\"".to_vec();
        big.resize(watch::MAX_LINE + 1024, b'x');
        let mut r = watch::Watched::new(&big[..], seen.clone());
        let mut sink = Vec::new();
        let err = r.read_to_end(&mut sink).await.unwrap_err();
        assert!(err.to_string().contains("more than 16 MiB"), "{err}");
        assert!(sink.len() <= watch::MAX_LINE + 64 * 1024, "{}", sink.len());
        assert!(seen.note().unwrap().contains("a line of more than 16 MiB"));

        let seen = std::sync::Arc::new(watch::StdoutWatch::default());
        let text = b"server ready\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n";
        let mut r = watch::Watched::new(&text[..], seen.clone());
        r.read_to_end(&mut Vec::new()).await.unwrap();
        assert!(
            seen.note().unwrap().contains("1 line(s)"),
            "{:?}",
            seen.note()
        );
    }

    /// A line that starts like a message but is not JSON-RPC ends the stream at once, named;
    /// what rmcp accepts (requests, notifications, answers, errors without an id) passes.
    #[tokio::test]
    async fn a_line_that_starts_like_a_message_but_is_not_json_rpc_ends_the_stream() {
        use tokio::io::AsyncReadExt;
        for ok in [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            " {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r",
        ] {
            assert_eq!(watch::not_json_rpc(ok.as_bytes()), None, "{ok}");
        }
        for bad in [
            "{this is not json",
            r#"{"jsonrpc":"1.0","id":[1],"answer":"x"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"level":"info","msg":"started"}"#,
            "[1, 2",
        ] {
            assert!(watch::not_json_rpc(bad.as_bytes()).is_some(), "{bad}");
        }
        let seen = std::sync::Arc::new(watch::StdoutWatch::default());
        let text = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{this is not json\nmore";
        let mut r = watch::Watched::new(&text[..], seen.clone());
        let err = r.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert!(err.to_string().contains("not a JSON-RPC message"), "{err}");
        let note = seen.note().unwrap();
        assert!(
            note.contains("not a JSON-RPC message (not JSON") && note.contains("{this is not json"),
            "{note}"
        );
    }
}
