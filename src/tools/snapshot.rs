//! `evalgate corpus snapshot`: connect to a real MCP server (stdio or streamable HTTP), list
//! every tool over all pages, and write a corpus file: sorted `server:tool` ids, full definitions,
//! the server's identity from `initialize`, the client capabilities used and when it was taken.

use crate::infra::files::read_to_string;
use crate::infra::mcp::{self, Endpoint};
use crate::infra::process::Supervisor;
use crate::pipeline::dataset::mcp::from_definition;
use crate::pipeline::dataset::{Corpus, ServerInfo, Tool};
use anyhow::{Context, bail};
use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The client evalgate presents when snapshotting: no optional capabilities.
#[derive(Clone, Default)]
pub struct SnapshotClient;

impl ClientHandler for SnapshotClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("evalgate-snapshot", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// What one server answered.
#[derive(Debug, Clone)]
pub struct Taken {
    pub server: ServerInfo,
    pub tools: Vec<Tool>,
}

/// RFC 3339 UTC timestamp (seconds) of a point in time (the epoch for one before it).
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let t = chrono::DateTime::from_timestamp(secs, 0).unwrap_or_default();
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Connects to `server` (its name and provenance given), lists every tool and disconnects. A
/// repeated tool name is an error.
pub async fn take(
    mut server: ServerInfo,
    ep: &Endpoint,
    taken: &str,
    timeout: Duration,
) -> anyhow::Result<Taken> {
    let name = &server.name;
    if name.is_empty() || name.contains(':') {
        bail!("server name {name:?} must be non-empty and contain no ':'");
    }
    let sup = Supervisor::new();
    let opts = mcp::ConnectOpts {
        sup: &sup,
        timeout,
        name,
    };
    let work = async {
        let client = mcp::connect(ep, SnapshotClient, &opts).await?;
        let info = client.service.peer_info();
        let tools = client.list_all_tools().await?;
        let _ = client.service.cancel().await;
        anyhow::Ok((info, tools))
    };
    let (info, tools) = tokio::time::timeout(timeout, work).await.map_err(|_| {
        anyhow::anyhow!(
            "server {name:?} did not answer initialize + tools/list within {} s ({})",
            timeout.as_secs_f64(),
            ep.describe()
        )
    })??;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(tools.len());
    for t in &tools {
        if !seen.insert(t.name.to_string()) {
            bail!(
                "server {name:?} listed tool {:?} more than once: an ambiguous tools/list cannot be frozen",
                t.name
            );
        }
        out.push(from_definition(name, &serde_json::to_value(t)?)?);
    }
    out.sort_by(|a, b| a.tool_id.cmp(&b.tool_id));
    let mut put = |k: &str, v: Value| server.extra.insert(k.to_string(), v);
    put("taken", json!(taken));
    let names =
        |pairs: &[(String, String)]| json!(pairs.iter().map(|(k, _)| k).collect::<Vec<_>>());
    match ep {
        // env values may be credentials (even dummy ones): record the names only
        Endpoint::Stdio {
            program, args, env, ..
        } => {
            put("transport", json!("stdio"));
            let cmd: Vec<_> = std::iter::once(program).chain(args).collect();
            put("command", json!(cmd));
            if !env.is_empty() {
                put("env_names", names(env));
            }
        }
        // header values may be credentials: record the names only
        Endpoint::Http { url, headers } => {
            put("transport", json!("streamable-http"));
            put("url", json!(url));
            put("header_names", names(headers));
        }
    }
    if let Some(i) = &info {
        if let Some(si) = &i.server_info {
            put(
                "server_info",
                json!({"name": si.name, "version": si.version}),
            );
        }
        put("protocol_version", json!(i.protocol_version));
    }
    put(
        "client_capabilities",
        serde_json::to_value(SnapshotClient.get_info().capabilities)?,
    );
    put("tool_count", json!(out.len()));
    Ok(Taken { server, tools: out })
}

/// Adds (or replaces) one server's tools in a corpus, keeping everything sorted.
pub fn merge(corpus: &mut Corpus, taken: Taken) {
    let name = taken.server.name.clone();
    corpus.tools.retain(|t| t.server_name() != name);
    corpus.tools.extend(taken.tools);
    corpus.tools.sort_by(|a, b| a.tool_id.cmp(&b.tool_id));
    corpus.servers.retain(|s| s.name != name);
    corpus.servers.push(taken.server);
    corpus.servers.sort_by(|a, b| a.name.cmp(&b.name));
}

/// A new, empty corpus.
pub fn empty(version: &str) -> Corpus {
    Corpus {
        version: version.to_string(),
        generated_from: Some(
            json!({"source": "evalgate corpus snapshot", "note": "tools/list of MCP servers, taken with rmcp"}),
        ),
        servers: Vec::new(),
        tools: Vec::new(),
    }
}

/// Reads an existing corpus to merge into.
pub fn read(path: &Path) -> anyhow::Result<Corpus> {
    let text = read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let p = path.display();
    serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{p}:{}:{}: not a corpus file: {e}", e.line(), e.column()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_795_000_000)),
            "2026-11-18T11:06:40Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
    }
}
