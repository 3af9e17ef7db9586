//! `evalgate proxy`: the reference tool-search proxy. It reads mcpproxy's config format, spawns
//! the stdio upstreams, aggregates their tools as `server:tool`, indexes them with the embedded
//! BM25, and serves mcpproxy's surface: `/mcp` (streamable HTTP) with `retrieve_tools` and
//! `call_tool`, and the REST endpoints `/api/v1/tools`, `/api/v1/index/search`,
//! `/api/v1/servers`, `/healthz`, `/readyz`, and the security scan
//! (`POST /api/v1/servers/{name}/scan`, `…/scan/status`, `…/scan/report`, with evalgate's
//! reference rules as the scanner), with mcpproxy's envelope and API-key check.
//!
//! Tool-definition drift policy: mcpproxy's quarantine of changed tools, see `drift`. The
//! evalgate key `on_tool_drift` picks it: `block` (default) keeps drifted tools out of the index
//! and refuses `call_tool` on them; `log` only reports the drift. Baselines live in memory: a
//! restart re-baselines.
//!
//! It is the system launched when a launch is asked for without naming a binary, a baseline to
//! compare a real proxy with, and the stand-in that lets the tests exercise the launch path.

mod catalog;
mod config;
mod drift;
pub mod fault;
mod http;
mod scan;
mod upstream;

use crate::infra::files::read_to_string;
use crate::infra::mcp::init_tls;
use crate::infra::process::Supervisor;
use crate::pipeline::dataset::mcp::from_definition;
use anyhow::Context;
use catalog::Catalog;
use config::ProxyConfig;
pub use fault::Fault;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use tokio::sync::{Mutex, RwLock};

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
    /// `/mcp` with sessions and SSE answers (`mcp_sessions` in the config), else stateless JSON.
    pub mcp_sessions: bool,
    pub tools_limit: usize,
    pub catalog: Mutex<Catalog>,
    /// Rebuilds asked for so far; the lock serialising rebuilds holds the number of asks the
    /// last rebuild covered.
    reindex_asked: AtomicU64,
    reindex_covered: Mutex<u64>,
    pub servers: RwLock<BTreeMap<String, ServerStatus>>,
    pub upstreams: upstream::Upstreams,
    pub fault: Fault,
    pub searches: AtomicUsize,
    /// The latest security scan of each server.
    pub scans: Mutex<HashMap<String, scan::ScanJob>>,
    /// Tool-definition baselines and drift state (held briefly, never across an await).
    pub drift: std::sync::Mutex<drift::DriftTracker>,
    /// Owns the upstream server processes.
    pub sup: Supervisor,
}

impl State {
    /// Rebuilds the index from the current definition of every listed upstream tool (in `block`
    /// mode without the drifted ones) and republishes the listing with its approval states.
    /// Rebuilds are serialised: without that, a slow rebuild that read the listings before a
    /// newer one could land after it and bring back a stale catalog. A rebuild that started
    /// after this one was asked for has read the listings as they were when it was asked, so
    /// this one is skipped: when 101 upstreams come up at once, the catalog is rebuilt a few
    /// times, not 101 times over (every rebuild indexes every tool), and the last rebuild does
    /// not trail minutes behind the listing.
    pub async fn reindex(&self) -> anyhow::Result<()> {
        let ask = self.reindex_asked.fetch_add(1, SeqCst) + 1;
        let mut covered = self.reindex_covered.lock().await;
        if *covered >= ask {
            return Ok(());
        }
        // every ask made so far was made before the view below is read
        let covers = self.reindex_asked.load(SeqCst);
        let (mut listing, mode) = {
            let drift = self.tracker();
            (drift.listing(), drift.mode)
        };
        let dropped = self.fault.dropped_tool();
        listing.retain(|t| Some(t.id().as_str()) != dropped);
        let tools = listing
            .iter()
            .filter(|t| mode == config::OnToolDrift::Log || !t.drifted())
            .filter_map(|t| from_definition(&t.server, t.current()).ok())
            .collect();
        let cat = Catalog::new(tools, listing)?;
        *self.catalog.lock().await = cat;
        *covered = covers;
        Ok(())
    }

    /// The drift tracker, held briefly and never across an await.
    pub fn tracker(&self) -> std::sync::MutexGuard<'_, drift::DriftTracker> {
        self.drift.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a search and applies the configured fault. `Some(text)` = answer with garbage.
    pub async fn fault_for_search(&self) -> Option<String> {
        let n = self.searches.fetch_add(1, SeqCst) + 1;
        self.fault.on_search(n).await
    }
}

/// Reads the config, starts serving on `listen` at once and connects the upstreams in the
/// background (like mcpproxy, the catalog fills as servers come up).
pub async fn run(config_path: &Path, listen: &str, fault: Fault) -> anyhow::Result<()> {
    init_tls();
    let text = read_to_string(config_path)
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
        mcp_sessions: cfg.mcp_sessions.unwrap_or(false),
        tools_limit: cfg.tools_limit.unwrap_or(15).clamp(1, 1000),
        catalog: Mutex::new(Catalog::new(Vec::new(), Vec::new())?),
        reindex_asked: Default::default(),
        reindex_covered: Default::default(),
        servers: RwLock::new(BTreeMap::new()),
        upstreams: Default::default(),
        fault,
        searches: Default::default(),
        scans: Default::default(),
        drift: std::sync::Mutex::new(drift::DriftTracker::from_config(&cfg)),
        sup: crate::infra::process::Supervisor::new(),
    });
    if cfg.mcp_servers.iter().any(|s| cfg.drift_tracked(s)) {
        crate::errln!(
            "evalgate proxy: tool drift policy on_tool_drift={} (baselines are in memory; a restart re-baselines)",
            cfg.on_tool_drift
        );
    }
    // SIGTERM from whoever launched us stops the upstream servers too
    state.sup.install_signal_handlers();
    upstream::start_all(state.clone(), &cfg).await;
    let addr = listener.local_addr()?;
    crate::errln!("evalgate proxy: listening on http://{addr}");
    // answers go out as soon as they are written: with Nagle's algorithm on, an event-stream
    // answer written after its headers would wait on a reused connection for the client's
    // delayed acknowledgement
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            crate::errln!("evalgate proxy: cannot set TCP_NODELAY on a connection: {e}");
        }
    });
    axum::serve(listener, http::router(state))
        .await
        .context("HTTP server failed")?;
    Ok(())
}
