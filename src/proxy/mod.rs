//! `evalgate proxy`: the reference tool-search proxy. It reads mcpproxy's config format, spawns
//! the stdio upstreams, aggregates their tools as `server:tool`, indexes them with the embedded
//! BM25, and serves mcpproxy's surface: `/mcp` (streamable HTTP) with `retrieve_tools` and
//! `call_tool`, and the REST endpoints `/api/v1/tools`, `/api/v1/index/search`,
//! `/api/v1/servers`, `/healthz`, `/readyz`, and the security scan
//! (`POST /api/v1/servers/{name}/scan`, `…/scan/status`, `…/scan/report`, with evalgate's
//! reference rules as the scanner), with mcpproxy's envelope and API-key check.
//!
//! Tool-definition drift policy (mcpproxy's quarantine of changed tools, [`drift`]): while
//! `quarantine_enabled` is not `false` and a server's `trust_mode` is not `auto`, the first
//! definition of each `server:tool` is its approved baseline. A later listing (re-listed on
//! `notifications/tools/list_changed`) that changes the definition or repeats the name makes the
//! tool drifted (`approval_status: "changed"` with `held_reason: "tool_definition_drift"` in
//! `/api/v1/tools`, diff at `GET /api/v1/servers/{name}/tools/{tool}/diff`) until the upstream
//! reverts it. The evalgate key `on_tool_drift` picks the policy: `block` (default) keeps drifted
//! tools out of the index and refuses `call_tool` on them; `log` only reports the drift. Baselines
//! live in memory: a restart re-baselines.
//!
//! It is the system launched when a launch is asked for without naming a binary, a baseline to
//! compare a real proxy with, and the stand-in that lets the tests exercise the launch path.

pub mod catalog;
pub mod config;
pub mod drift;
mod http;
pub mod scan;
mod upstream;

use anyhow::Context;
use catalog::Catalog;
use config::ProxyConfig;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::{Mutex, RwLock};

/// Faults the proxy can be told to inject (testing hook for the launcher's failure handling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    None,
    /// Exit with status 101 on the Nth search.
    CrashAfter(usize),
    /// Never answer the Nth and later searches.
    HangAfter(usize),
    /// Answer the Nth and later searches with text that is not JSON.
    GarbageAfter(usize),
    /// Leave this `server:tool` out of the catalog (a catalog that never matches the corpus).
    DropTool(String),
    /// Never re-list an upstream on `notifications/tools/list_changed` (a proxy blind to
    /// rug-pulls).
    IgnoreListChanged,
    /// Answer every search after this many milliseconds.
    SlowMs(u64),
    /// Ignore `limit` in searches: always answer with up to `tools_limit` tools.
    IgnoreLimit,
    /// Cancel every security scan right after accepting it (status `cancelled`, final).
    CancelScans,
}

impl std::str::FromStr for Fault {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => return Ok(Fault::None),
            "ignore-list-changed" => return Ok(Fault::IgnoreListChanged),
            "ignore-limit" => return Ok(Fault::IgnoreLimit),
            "cancel-scans" => return Ok(Fault::CancelScans),
            _ => {}
        }
        let expected = "expected none, ignore-list-changed, ignore-limit, cancel-scans, slow=MS, crash-after=N, hang-after=N, garbage-after=N or drop-tool=SERVER:TOOL";
        let (kind, arg) = s
            .split_once('=')
            .ok_or_else(|| format!("{expected}, got {s:?}"))?;
        if kind == "drop-tool" {
            return Ok(Fault::DropTool(arg.to_string()));
        }
        let n: usize = arg
            .parse()
            .map_err(|_| format!("expected a number after '=' in {s:?}"))?;
        match kind {
            "crash-after" => Ok(Fault::CrashAfter(n)),
            "hang-after" => Ok(Fault::HangAfter(n)),
            "garbage-after" => Ok(Fault::GarbageAfter(n)),
            "slow" => Ok(Fault::SlowMs(n as u64)),
            _ => Err(format!("unknown fault {kind:?}: {expected}")),
        }
    }
}

/// Connection state of one upstream, as `/api/v1/servers` reports it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ServerStatus {
    pub name: String,
    pub connected: bool,
    pub status: String,
    pub tool_count: usize,
    pub quarantined: bool,
    pub last_error: Option<String>,
}

/// Shared proxy state.
pub struct State {
    pub api_key: Option<String>,
    pub tools_limit: usize,
    pub catalog: Mutex<Catalog>,
    reindexing: Mutex<()>,
    pub servers: RwLock<BTreeMap<String, ServerStatus>>,
    pub upstreams: upstream::Upstreams,
    pub fault: Fault,
    pub searches: std::sync::atomic::AtomicUsize,
    /// The latest security scan of each server.
    pub scans: Mutex<scan::Jobs>,
    /// Tool-definition baselines and drift state (held briefly, never across an await).
    pub drift: std::sync::Mutex<drift::DriftTracker>,
    /// Owns the upstream server processes.
    pub sup: crate::process::Supervisor,
}

impl State {
    /// Rebuilds the index from every connected upstream's current tools (in `block` mode
    /// without the drifted ones) and republishes the tool listing with its approval states.
    /// Rebuilds are serialised: without that, a slow rebuild that read the upstreams before a
    /// newer one could land after it and bring back a stale catalog.
    pub async fn reindex(&self) -> anyhow::Result<()> {
        let _one_at_a_time = self.reindexing.lock().await;
        let (mut tools, mut listing, mode) = self.upstreams.view(&self.drift).await;
        if let Fault::DropTool(id) = &self.fault {
            tools.retain(|t| &t.tool_id != id);
            listing.retain(|t| &t.id() != id);
        }
        if mode == config::OnToolDrift::Block {
            let held: std::collections::HashSet<String> = listing
                .iter()
                .filter(|t| t.drifted())
                .map(|t| t.id())
                .collect();
            tools.retain(|t| !held.contains(&t.tool_id));
        }
        let cat = Catalog::new(tools, listing)?;
        *self.catalog.lock().await = cat;
        Ok(())
    }

    /// Counts a search and applies the configured fault. `Some(text)` = answer with garbage.
    pub async fn fault_for_search(&self) -> Option<String> {
        let n = self
            .searches
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        match self.fault {
            Fault::CrashAfter(k) if n >= k => {
                eprintln!("evalgate proxy: injected fault: crashing on search {n}");
                std::process::exit(101);
            }
            Fault::HangAfter(k) if n >= k => {
                std::future::pending::<()>().await;
                None
            }
            Fault::GarbageAfter(k) if n >= k => Some("<<garbage: this is not JSON>>".into()),
            Fault::SlowMs(ms) => {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                None
            }
            _ => None,
        }
    }
}

/// Reads the config, starts serving on `listen` at once and connects the upstreams in the
/// background (like mcpproxy, the catalog fills as servers come up).
pub async fn run(config_path: &Path, listen: &str, fault: Fault) -> anyhow::Result<()> {
    crate::mcp::init_tls();
    let text = crate::files::read_to_string(config_path)
        .with_context(|| format!("{}: cannot read the proxy config", config_path.display()))?;
    let cfg = ProxyConfig::parse(&config_path.display().to_string(), &text)?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let state = Arc::new(State {
        api_key: cfg
            .api_key
            .clone()
            .filter(|k| !k.is_empty())
            .or_else(|| std::env::var("MCPPROXY_API_KEY").ok()),
        tools_limit: cfg.tools_limit.unwrap_or(15).clamp(1, 1000),
        catalog: Mutex::new(Catalog::new(Vec::new(), Vec::new())?),
        reindexing: Mutex::new(()),
        servers: RwLock::new(BTreeMap::new()),
        upstreams: upstream::Upstreams::default(),
        fault,
        searches: Default::default(),
        scans: Mutex::new(scan::Jobs::new()),
        drift: std::sync::Mutex::new(drift::DriftTracker::from_config(&cfg)),
        sup: crate::process::Supervisor::new(),
    });
    if cfg.mcp_servers.iter().any(|s| cfg.drift_tracked(s)) {
        eprintln!(
            "evalgate proxy: tool drift policy on_tool_drift={} (baselines are in memory; a restart re-baselines)",
            cfg.on_tool_drift
        );
    }
    // SIGTERM from whoever launched us stops the upstream servers too
    state.sup.install_signal_handlers();
    upstream::start_all(state.clone(), &cfg).await;
    eprintln!(
        "evalgate proxy: listening on http://{}",
        listener.local_addr()?
    );
    axum::serve(listener, http::router(state))
        .await
        .context("HTTP server failed")?;
    Ok(())
}
