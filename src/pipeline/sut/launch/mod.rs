//! Launching the system under test: write a scratch mcpproxy-format config whose upstreams are
//! evalgate replay servers (one per corpus server), start the proxy, wait until its catalog is
//! exactly the corpus and its answers are stable, then search it over MCP. The supervisor stops
//! the whole process tree however the run ends.

pub mod catalog;
mod prepare;
pub mod spec;
mod start;
pub mod writers;

pub use prepare::{LAUNCH_SCRATCH, ready_timeout, scratch_dir, system_name};
pub use start::{Plan, Running, start};
pub use writers::{Quarantine, corpus_upstreams, proxy_config, write_server_corpora};

use crate::infra::mcp::Endpoint;
use crate::infra::process::{Managed, Supervisor};
use crate::infra::text::Text;
use crate::pipeline::dataset::{Corpus, GoldenSet, Loaded};
use crate::pipeline::sut::kind::SutKind;
use crate::pipeline::sut::mcp_search::{McpSearch, McpSearchSpec};
use crate::pipeline::sut::{Facts, ProbeReply, Ranked, Retriever, SearchRequest, SutError};
use async_trait::async_trait;
use catalog::{CatalogCheck, Coverage};
use prepare::{prepare, shape};
use serde_json::Value;
use spec::{CatalogSpec, LaunchSpec, LaunchTransport};
use std::time::Duration;
use writers::ConfigFormat;

/// The proxy's log tail, as failure messages end with it.
fn proxy_log(p: &Managed) -> String {
    format!("\n--- proxy log tail ---\n{}", p.log_tail(LOG_LINES))
}

/// How long to wait for the catalog by default.
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Lines of the proxy's log quoted in failure messages.
const LOG_LINES: usize = 20;
/// How long a dropped connection waits for the proxy's exit to be seen, so a crash names its status.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// A launched proxy searched over MCP; keeps its scratch directory and processes alive.
pub struct Launched {
    search: McpSearch,
    /// The proxy process of an `http` launch (a `stdio` one is the search session's child).
    proxy: Option<Managed>,
    facts: Facts,
    _dir: tempfile::TempDir,
}

impl Launched {
    fn exited(&self) -> Option<String> {
        self.proxy
            .as_ref()
            .map_or_else(|| self.search.session.exited(), |p| p.try_exited())
    }

    fn log_tail(&self) -> String {
        self.proxy
            .as_ref()
            .map_or_else(|| self.search.story(), proxy_log)
    }

    /// Names the cause when the proxy process died under a failed query. A dropped connection
    /// usually arrives before the process is reaped: after one, the exit is waited for a bounded
    /// moment ([`EXIT_GRACE`]) so the failure names the exit status and the log, not only the socket.
    async fn explain<T>(&self, r: Result<T, SutError>) -> Result<T, SutError> {
        let Err(e) = r else { return r };
        if matches!(e, SutError::Crashed { .. }) && self.exited().is_none() {
            let deadline = tokio::time::Instant::now() + EXIT_GRACE;
            while self.exited().is_none() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        Err(match self.exited() {
            Some(status) => {
                let log = self.log_tail();
                let detail =
                    format!("the proxy process exited ({status}) during the run: {e}{log}");
                SutError::crashed(&self.facts.name, detail)
            }
            None => e,
        })
    }
}

#[async_trait]
impl Retriever for Launched {
    fn facts(&self) -> &Facts {
        &self.facts
    }
    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError> {
        // a proxy that dies under a query is reported at once, not after the query's timeout
        let died = async {
            loop {
                if let Some(status) = self.exited() {
                    return status;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        let query = req.query_id.to_string();
        tokio::select! {
            r = self.search.search(req) => self.explain(r).await,
            status = died => Err(SutError::crashed(self.facts.name.clone(), format!("the proxy process exited ({status}) while answering query {query:?}{}", self.log_tail()))),
        }
    }
    async fn probe(
        &self,
        req: SearchRequest<'_>,
        extra: &serde_json::Map<String, Value>,
    ) -> Option<Result<ProbeReply, SutError>> {
        if let Some(status) = self.exited() {
            let detail = format!("the proxy process had exited ({status})");
            return Some(Err(SutError::crashed(&self.facts.name, detail)));
        }
        Some(self.explain(self.search.probe(req, extra).await?).await)
    }
}

/// The catalog check for a connected system (`search` or `tools-list`).
pub async fn check_catalog(
    s: &CatalogSpec,
    r: &dyn Retriever,
    mcp: Option<&McpSearch>,
    corpus: &Corpus,
) -> Result<Coverage, SutError> {
    let system = &r.facts().name;
    let cov = match (s.catalog.check.unwrap_or_default(), mcp) {
        (CatalogCheck::ToolsList, Some(m)) => catalog::by_tools_list(m, corpus, system, s).await?,
        (CatalogCheck::ToolsList, None) => {
            return Err(SutError::other(
                system,
                "[sut.catalog] check = \"tools-list\" needs a system reached over MCP",
            ));
        }
        _ => catalog::by_search(r, corpus, s).await?,
    };
    if !s.quiet {
        crate::errln!("{system}: catalog {}", cov.summary());
    }
    Ok(cov)
}

/// Starts the proxy over the corpus, establishes its catalog, and returns it as a retriever.
pub async fn launch(
    s: &LaunchSpec,
    corpus: &Loaded<Corpus>,
    golden: &GoldenSet,
    sup: &Supervisor,
) -> Result<Launched, SutError> {
    let name = system_name(s);
    let dir = scratch_dir(&name, LAUNCH_SCRATCH)?;
    let corpus_files = write_server_corpora(&corpus.value, &dir.path().join("replay"))
        .map_err(|e| SutError::other(&name, format!("cannot write the replay corpora: {e}")))?;
    let plan = Plan {
        upstreams: corpus_upstreams(&corpus_files, s.launch.served_names.unwrap_or_default()),
        want: corpus
            .value
            .tools
            .iter()
            .map(|t| t.tool_id.clone())
            .collect(),
        quarantine: Quarantine::Off,
    };
    let shape = shape(s);
    let (endpoint, timeout, proxy, dir) = match shape.transport {
        LaunchTransport::Stdio => {
            let p = prepare(s, &plan, dir.path(), sup, &shape).await?;
            if !s.check.quiet {
                crate::errln!(
                    "{name}: starting {} (stdio) over {} replayed server(s)",
                    p.spec.program.display(),
                    plan.upstreams.len()
                );
            }
            let endpoint = Endpoint::Stdio {
                program: p.spec.program.display().to_string(),
                args: p.spec.args,
                env: p.spec.env,
                cwd: p.spec.cwd,
            };
            (endpoint, ready_timeout(s, plan.upstreams.len()), None, dir)
        }
        LaunchTransport::Http => {
            let running = start(s, &plan, dir, sup).await?;
            let fill = |(k, v): (&String, &String)| (k.clone(), running.vars.fill(v));
            let mut headers: Vec<(String, String)> = s.launch.headers.iter().map(fill).collect();
            if shape.format == ConfigFormat::Mcpproxy {
                headers.push(("X-API-Key".into(), running.api_key.clone()));
            }
            let endpoint = Endpoint::Http {
                url: running.vars.fill("{url}"),
                headers,
            };
            let timeout = ready_timeout(s, 0);
            (endpoint, timeout, Some(running.proxy), running.dir)
        }
    };
    // searched with mcpproxy's `retrieve_tools` for its family (the preset's defaults, whatever
    // `[sut.mcp]` says), else `[sut.mcp]` at the launch's endpoint
    let preset = Default::default();
    let mcp = match s.kind {
        SutKind::Launch => &s.mcp,
        _ => &preset,
    };
    let spec = McpSearchSpec::from_file(&name, mcp, Some(endpoint))
        .map_err(|e| SutError::other(name.clone(), format!("{e:#}")))?;
    // a stdio proxy is the session's own child; an http one's log goes with the failure
    let log = || proxy.as_ref().map(proxy_log).unwrap_or_default();
    let search = McpSearch::connect(spec, sup, timeout)
        .await
        .map_err(|e| SutError::connect_failed(name.clone(), &e, &log()))?;
    let mut launched = Launched {
        facts: Facts {
            name: name.clone(),
            ..search.facts().clone()
        },
        search,
        proxy,
        _dir: dir,
    };
    launched.facts.coverage = Some(if shape.rest_ready {
        Coverage {
            rounds: 1,
            ..Coverage::new("mcpproxy", &plan.want, &plan.want)
        }
    } else {
        // through the launched retriever, which watches the process while probing; the proxy's
        // log goes with the failure (explain adds it when the proxy died)
        let checked = check_catalog(&s.check, &launched, Some(&launched.search), &corpus.value);
        launched
            .explain(checked.await)
            .await
            .map_err(|e| e.with_log(&launched.log_tail()))?
    });
    settle(s, &launched, golden).await?;
    Ok(launched)
}

/// The index may still be settling: probe until two rounds of the first golden queries agree.
async fn settle(s: &LaunchSpec, launched: &Launched, golden: &GoldenSet) -> Result<(), SutError> {
    let mut previous: Option<Vec<Vec<Text>>> = None;
    let limit = s.check.request_timeout;
    for _ in 0..20 {
        let mut round = Vec::new();
        for q in golden.queries.iter().take(3) {
            // bounded like every measured query: a proxy that hangs here is named, not waited on
            let r = tokio::time::timeout(
                limit,
                launched.search(SearchRequest {
                    run: 0,
                    query_id: &q.id,
                    text: &q.query,
                    limit: s.check.results,
                }),
            )
            .await
            .map_err(|_| {
                let (id, log) = (&q.id, launched.log_tail());
                let context = format!("stability probe query {id:?} before the measured runs{log}");
                SutError::timeout(&launched.facts.name, limit.as_secs_f64(), context)
            })??;
            round.push(r.ids);
        }
        if previous.as_ref() == Some(&round) {
            return Ok(());
        }
        previous = Some(round);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(SutError::other(
        launched.facts.name.clone(),
        "search answers did not stabilise after 20 probe rounds",
    ))
}
