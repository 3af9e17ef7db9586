//! Launching the system under test: write a scratch mcpproxy-format config whose upstreams are
//! evalgate replay servers (one per corpus server), start the proxy, wait until its catalog is
//! exactly the corpus and its answers are stable, then search it over MCP. The supervisor stops
//! the whole process tree however the run ends.

use crate::cli::SutKind;
use crate::config::Settings;
use crate::dataset::{Corpus, GoldenSet, Loaded};
use crate::mcp::Endpoint;
use crate::process::{Managed, Spec, Supervisor};
use crate::sut::mapping::Mapper;
use crate::sut::mcp_search::{McpSearch, McpSearchSpec};
use crate::sut::{Ranked, Retriever, SearchRequest, SutError};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long to wait for the catalog by default.
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Lines of the proxy's log quoted in failure messages.
const LOG_LINES: usize = 20;

/// A free loopback port (the listener is dropped before the proxy binds it).
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// 128 random bits as hex, from the kernel.
pub fn random_key() -> String {
    let mut b = [0u8; 16];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok();
    if !ok {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        b = (t ^ (std::process::id() as u128) << 64).to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Every corpus server served from one corpus file.
pub fn one_file_per_corpus(corpus: &Corpus, path: &Path) -> BTreeMap<String, PathBuf> {
    corpus
        .tools
        .iter()
        .map(|t| (t.server_name().to_string(), path.to_path_buf()))
        .collect()
}

/// Writes one small corpus file per server into `dir`, so that each replay server parses only
/// its own tools (a hundred replays of a multi-megabyte corpus would cost seconds of CPU each).
pub fn write_server_corpora(
    corpus: &Corpus,
    dir: &Path,
) -> std::io::Result<BTreeMap<String, PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut out = BTreeMap::new();
    let servers: BTreeSet<&str> = corpus.tools.iter().map(|t| t.server_name()).collect();
    for (i, s) in servers.into_iter().enumerate() {
        let part = Corpus {
            version: corpus.version.clone(),
            generated_from: corpus.generated_from.clone(),
            servers: corpus
                .servers
                .iter()
                .filter(|x| x.name == s)
                .cloned()
                .collect(),
            tools: corpus
                .tools
                .iter()
                .filter(|t| t.server_name() == s)
                .cloned()
                .collect(),
        };
        // server names are data: the file name is an index, never the name
        let p = dir.join(format!("server-{i:04}.json"));
        std::fs::write(&p, crate::snapshot::to_json(&part))?;
        out.insert(s.to_string(), p);
    }
    Ok(out)
}

/// How the generated config treats tool changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quarantine {
    /// Retrieval: quarantine off, every server `trust_mode: "auto"`, so the catalog is the corpus.
    Off,
    /// Rug-pull play: quarantine on, servers unquarantined but not auto-trusted, so the first
    /// toolset is the approved baseline and later changes are the proxy's to catch.
    On,
}

/// The scratch mcpproxy config: replay upstreams (server name → the arguments of evalgate's
/// replay), explicit `quarantined: false`, no response truncation, no socket, no telemetry.
pub fn proxy_config(
    upstreams: &BTreeMap<String, Vec<String>>,
    replay_bin: &Path,
    listen: &str,
    data_dir: &Path,
    api_key: &str,
    quarantine: Quarantine,
) -> Value {
    let upstreams: Vec<Value> = upstreams
        .iter()
        .map(|(s, args)| {
            let mut e = json!({
                "name": s,
                "protocol": "stdio",
                "command": replay_bin,
                "args": args,
                "enabled": true,
                "quarantined": false,
            });
            if quarantine == Quarantine::Off {
                e["trust_mode"] = json!("auto");
            }
            e
        })
        .collect();
    json!({
        "listen": listen,
        "data_dir": data_dir,
        "enable_socket": false,
        "api_key": api_key,
        "quarantine_enabled": quarantine == Quarantine::On,
        "tool_response_limit": 0,
        "tools_limit": 100,
        "telemetry": {"enabled": false},
        // hermetic: no update poll, no look-ups of the servers' repositories
        "update_check": {"enabled": false},
        "check_server_repo": false,
        "mcpServers": upstreams,
    })
}

/// Replay arguments serving each server's own corpus file.
pub fn corpus_upstreams(corpus_files: &BTreeMap<String, PathBuf>) -> BTreeMap<String, Vec<String>> {
    corpus_files
        .iter()
        .map(|(s, p)| {
            (
                s.clone(),
                vec![
                    "replay".into(),
                    "--corpus".into(),
                    p.display().to_string(),
                    "--server".into(),
                    s.clone(),
                ],
            )
        })
        .collect()
}

/// A launched proxy searched over MCP; keeps its scratch directory and processes alive.
pub struct Launched {
    search: McpSearch,
    proxy: Managed,
    name: String,
    _dir: tempfile::TempDir,
}

impl Launched {
    /// Names the cause when the proxy process died under a failed query.
    fn explain(&self, e: SutError) -> SutError {
        match self.proxy.try_exited() {
            Some(status) => SutError::Crashed {
                system: self.name.clone(),
                detail: format!(
                    "the proxy process exited ({status}) during the run: {e}\n--- proxy log tail ---\n{}",
                    self.proxy.log_tail(LOG_LINES)
                ),
            },
            None => e,
        }
    }
}

#[async_trait]
impl Retriever for Launched {
    fn name(&self) -> &str {
        &self.name
    }
    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError> {
        // a proxy that dies under a query is reported at once, not after the query's timeout
        let died = async {
            loop {
                if let Some(status) = self.proxy.try_exited() {
                    return status;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        let query = req.query_id.to_string();
        tokio::select! {
            r = self.search.search(req) => r.map_err(|e| self.explain(e)),
            status = died => Err(SutError::Crashed {
                system: self.name.clone(),
                detail: format!("the proxy process exited ({status}) while answering query {query:?}\n--- proxy log tail ---\n{}", self.proxy.log_tail(LOG_LINES)),
            }),
        }
    }
    async fn probe(
        &self,
        req: SearchRequest<'_>,
        extra: &serde_json::Map<String, Value>,
    ) -> Option<Result<crate::sut::ProbeReply, SutError>> {
        if let Some(status) = self.proxy.try_exited() {
            return Some(Err(SutError::Crashed {
                system: self.name.clone(),
                detail: format!("the proxy process had exited ({status})"),
            }));
        }
        let r = self.search.probe(req, extra).await;
        r.map(|r| r.map_err(|e| self.explain(e)))
    }
}

fn fill(s: &str, vars: &[(&str, String)]) -> String {
    vars.iter().fold(s.to_string(), |acc, (k, v)| {
        acc.replace(&format!("{{{k}}}"), v)
    })
}

async fn catalog_ids(
    client: &reqwest::Client,
    base: &str,
    api_key: &str,
) -> Result<BTreeSet<String>, String> {
    let resp = client
        .get(format!("{base}/api/v1/tools"))
        .header("X-API-Key", api_key)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status();
    let body: Value = resp
        .json()
        .await
        .map_err(|e| format!("HTTP {status}, body is not JSON: {e}"))?;
    let tools = body
        .pointer("/data/tools")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("HTTP {status}: no data.tools array"))?;
    Ok(tools
        .iter()
        .filter_map(|t| {
            Some(format!(
                "{}:{}",
                t.get("server_name")?.as_str()?,
                t.get("name")?.as_str()?
            ))
        })
        .collect())
}

/// Per served server, whether the proxy's `GET /api/v1/servers` shows it connected with the
/// expected number of tools. `Ok(None)` = the proxy has no such endpoint (only the catalog is
/// read then).
async fn servers_pending(
    client: &reqwest::Client,
    base: &str,
    api_key: &str,
    want: &BTreeMap<&str, usize>,
) -> Result<Option<Vec<String>>, String> {
    let resp = client
        .get(format!("{base}/api/v1/servers"))
        .header("X-API-Key", api_key)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if resp.status() == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    let Ok(body) = resp.json::<Value>().await else {
        return Ok(None);
    };
    let Some(servers) = body.pointer("/data/servers").and_then(Value::as_array) else {
        return Ok(None);
    };
    let mut seen: BTreeMap<&str, (bool, Option<u64>, String)> = BTreeMap::new();
    for srv in servers {
        let Some(name) = srv.get("name").and_then(Value::as_str) else {
            continue;
        };
        if let Some((k, _)) = want.get_key_value(name) {
            let err = srv
                .get("last_error")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            seen.insert(
                k,
                (
                    srv.get("connected").and_then(Value::as_bool) == Some(true),
                    srv.get("tool_count").and_then(Value::as_u64),
                    err,
                ),
            );
        }
    }
    Ok(Some(
        want.iter()
            .filter_map(|(name, n)| match seen.get(name) {
                None => Some(format!("{name} (not configured)")),
                Some((true, Some(c), _)) if *c as usize == *n => None,
                Some((true, None, _)) => None,
                Some((connected, count, err)) => Some(format!(
                    "{name} ({}{}{})",
                    if *connected {
                        "connected"
                    } else {
                        "not connected"
                    },
                    count
                        .map(|c| format!(", {c}/{n} tools"))
                        .unwrap_or_default(),
                    if err.is_empty() {
                        String::new()
                    } else {
                        format!(
                            ", last error: {}",
                            crate::reporting::sanitize::clip(err, 160)
                        )
                    }
                )),
            })
            .collect(),
    ))
}

/// The number of tools each server should list, from `server:tool` ids.
fn per_server(want: &BTreeSet<String>) -> BTreeMap<&str, usize> {
    let mut out = BTreeMap::new();
    for id in want {
        let server = id.split_once(':').map_or(id.as_str(), |(s, _)| s);
        *out.entry(server).or_insert(0) += 1;
    }
    out
}

fn diff_text(want: &BTreeSet<String>, have: &BTreeSet<String>) -> String {
    let missing: Vec<&String> = want.difference(have).collect();
    let extra: Vec<&String> = have.difference(want).collect();
    let show = |v: &[&String]| {
        let head: Vec<&str> = v.iter().take(20).map(|s| s.as_str()).collect();
        if v.len() > 20 {
            format!("{} … (+{})", head.join(", "), v.len() - 20)
        } else {
            head.join(", ")
        }
    };
    format!(
        "{} missing [{}]; {} extra [{}]",
        missing.len(),
        show(&missing),
        extra.len(),
        show(&extra)
    )
}

/// What a launch serves and waits for.
pub struct Plan {
    /// Upstream name → the arguments of evalgate's replay serving it.
    pub upstreams: BTreeMap<String, Vec<String>>,
    /// The `server:tool` ids the proxy's catalog must hold before the launch counts as ready.
    pub want: BTreeSet<String>,
    pub quarantine: Quarantine,
}

/// A proxy started over replay upstreams whose catalog has been seen complete.
pub struct Running {
    pub name: String,
    pub proxy: Managed,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    pub api_key: String,
    /// The scratch directory (config, data dir, replay files); removed when dropped.
    pub dir: tempfile::TempDir,
}

impl Running {
    /// The proxy's log tail, for failure messages.
    pub fn log_tail(&self) -> String {
        self.proxy.log_tail(LOG_LINES)
    }
}

/// The system's display name for a launch.
pub fn system_name(s: &Settings) -> String {
    s.sut_file.name.clone().unwrap_or_else(|| match s.sut {
        SutKind::Mcpproxy => "mcpproxy".into(),
        SutKind::Reference => "reference-proxy".into(),
        SutKind::Launch => "launched-proxy".into(),
        _ => "reference-proxy".into(),
    })
}

/// How long a launch waits for the catalog (`[sut.launch] ready_timeout`, else 60 s plus one
/// second per served server: a proxy starts its upstreams at once, and a hundred of them on a
/// small CI machine take a while).
pub fn ready_timeout(s: &Settings, servers: usize) -> Duration {
    s.sut_file
        .launch
        .ready_timeout
        .map(Duration::from_secs_f64)
        .unwrap_or(READY_TIMEOUT + Duration::from_secs(servers as u64))
}

/// A fresh scratch directory for one launch.
pub fn scratch(name: &str) -> Result<tempfile::TempDir, SutError> {
    let dir = tempfile::Builder::new()
        .prefix("evalgate-launch-")
        .tempdir()
        .map_err(|e| SutError::Other {
            system: name.to_string(),
            detail: format!("cannot create a scratch directory: {e}"),
        })?;
    crate::process::Supervisor::remove_on_signal(dir.path());
    Ok(dir)
}

/// Starts the proxy the settings name (`--sut mcpproxy`, `launch`, else the reference proxy)
/// over `plan.upstreams` and waits until its catalog is exactly `plan.want`.
pub async fn start(
    s: &Settings,
    plan: &Plan,
    dir: tempfile::TempDir,
    sup: &Supervisor,
) -> Result<Running, SutError> {
    let name = system_name(s);
    let fail = |detail: String| SutError::Other {
        system: name.clone(),
        detail,
    };
    let data_dir = dir.path().join("data");
    let home = dir.path().join("home");
    for d in [&data_dir, &home] {
        std::fs::create_dir_all(d)
            .map_err(|e| fail(format!("cannot create {}: {e}", d.display())))?;
    }
    let me = std::env::current_exe()
        .map_err(|e| fail(format!("cannot find evalgate's own binary: {e}")))?;
    let mut attempt = 0;
    'launch: loop {
        attempt += 1;
        let port = free_port().map_err(|e| fail(format!("no free loopback port: {e}")))?;
        let listen = format!("127.0.0.1:{port}");
        let api_key = random_key();
        let cfg_path = dir.path().join("mcpproxy.json");
        let mut cfg = proxy_config(
            &plan.upstreams,
            &me,
            &listen,
            &data_dir,
            &api_key,
            plan.quarantine,
        );
        for (k, v) in &s.sut_file.launch.proxy_config {
            cfg[k] = v.clone();
        }
        std::fs::write(
            &cfg_path,
            serde_json::to_string_pretty(&cfg).unwrap_or_default(),
        )
        .map_err(|e| fail(format!("cannot write {}: {e}", cfg_path.display())))?;
        let vars = [
            ("config", cfg_path.display().to_string()),
            ("data_dir", data_dir.display().to_string()),
            ("port", port.to_string()),
            ("listen", listen.clone()),
            ("api_key", api_key.clone()),
        ];
        let (program, args, mut env): (PathBuf, Vec<String>, Vec<(String, String)>) = match s.sut {
            SutKind::Mcpproxy => {
                let bin = s.sut_file.mcpproxy_bin.clone().ok_or_else(|| {
                    fail("--sut mcpproxy needs --mcpproxy-bin PATH (or [sut] mcpproxy_bin)".into())
                })?;
                let args = [
                    "serve",
                    "--config",
                    "{config}",
                    "--data-dir",
                    "{data_dir}",
                    "--listen",
                    "{listen}",
                    "--log-level",
                    "info",
                ];
                (bin, args.iter().map(|a| fill(a, &vars)).collect(), vec![])
            }
            SutKind::Launch => {
                let cmd = s
                    .sut_file
                    .launch
                    .command
                    .clone()
                    .filter(|c| !c.is_empty())
                    .ok_or_else(|| {
                        fail(
                            "--sut launch needs [sut.launch] command = [...] in evalgate.toml"
                                .into(),
                        )
                    })?;
                (
                    PathBuf::from(fill(&cmd[0], &vars)),
                    cmd[1..].iter().map(|a| fill(a, &vars)).collect(),
                    vec![],
                )
            }
            _ => (
                me.clone(),
                ["proxy", "--config", "{config}", "--listen", "{listen}"]
                    .iter()
                    .map(|a| fill(a, &vars))
                    .collect(),
                vec![],
            ),
        };
        env.push(("MCPPROXY_API_KEY".into(), api_key.clone()));
        // a fresh HOME: no user configuration, keyring or shell profile reaches the proxy.
        // mcpproxy starts every stdio upstream through the user's login shell (`$SHELL -l -c`);
        // a profile that does work at login (here: `pyenv rehash` under a lock) made a hundred
        // upstreams miss mcpproxy's 30 s initialize deadline.
        env.push(("HOME".into(), home.display().to_string()));
        for (k, v) in &s.sut_file.launch.env {
            env.push((k.clone(), fill(v, &vars)));
        }
        let mut spec = Spec::new(name.clone(), program);
        spec.args = args;
        spec.env = env;
        spec.cwd = Some(dir.path().to_path_buf());
        if !s.quiet {
            eprintln!(
                "{name}: starting {} on {listen} over {} replayed server(s)",
                spec.program.display(),
                plan.upstreams.len()
            );
        }
        let proxy = sup.spawn(spec).map_err(|e| SutError::Crashed {
            system: name.clone(),
            detail: format!("{e:#}"),
        })?;

        // wait until every server is connected, then until the catalog is exactly what is
        // served. The servers list is cheap; mcpproxy answers `/api/v1/tools` by asking every
        // upstream for its tools, so polling that one fast would itself slow the start down.
        let ready_timeout = ready_timeout(s, plan.upstreams.len());
        let want = &plan.want;
        let counts = per_server(want);
        let mut servers_ready = false;
        let base = format!("http://{listen}");
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let start = Instant::now();
        let mut last = String::new();
        loop {
            if let Some(status) = proxy.try_exited() {
                // the port chosen was taken before the proxy bound it: try another one
                let tail = proxy.log_tail(LOG_LINES).to_lowercase();
                if attempt < 3
                    && (tail.contains("in use")
                        || tail.contains("cannot listen")
                        || tail.contains("bind"))
                {
                    continue 'launch;
                }
                return Err(SutError::Crashed {
                    system: name.clone(),
                    detail: format!(
                        "the proxy exited ({status}) before its catalog was ready\n--- proxy log tail ---\n{}",
                        proxy.log_tail(LOG_LINES)
                    ),
                });
            }
            let mut pause = Duration::from_millis(250);
            if !servers_ready {
                match servers_pending(&client, &base, &api_key, &counts).await {
                    Ok(None) => servers_ready = true,
                    Ok(Some(p)) if p.is_empty() => servers_ready = true,
                    Ok(Some(p)) => {
                        let head: Vec<&str> = p.iter().take(10).map(String::as_str).collect();
                        last = format!(
                            "{} of {} server(s) not ready: {}{}",
                            p.len(),
                            counts.len(),
                            head.join("; "),
                            if p.len() > 10 { "; …" } else { "" }
                        );
                    }
                    Err(e) => last = e,
                }
            }
            if servers_ready {
                match catalog_ids(&client, &base, &api_key).await {
                    Ok(have) if &have == want => break,
                    Ok(have) => last = diff_text(want, &have),
                    Err(e) => last = e,
                }
                pause = Duration::from_millis(1000);
            }
            if start.elapsed() > ready_timeout {
                if !servers_ready {
                    // name the missing tools too, whatever the servers list says
                    if let Ok(have) = catalog_ids(&client, &base, &api_key).await {
                        last = format!("{last}; catalog: {}", diff_text(want, &have));
                    }
                }
                return Err(SutError::Timeout {
                    system: name.clone(),
                    seconds: ready_timeout.as_secs_f64(),
                    context: format!(
                        "waiting for the catalog to equal the {} served tools: {last}\n--- proxy log tail ---\n{}",
                        want.len(),
                        proxy.log_tail(LOG_LINES)
                    ),
                });
            }
            tokio::time::sleep(pause).await;
        }
        if !s.quiet {
            eprintln!(
                "{name}: catalog ready ({} tools) after {:.1} s",
                want.len(),
                start.elapsed().as_secs_f64()
            );
        }
        return Ok(Running {
            name,
            proxy,
            base,
            api_key,
            dir,
        });
    }
}

/// Starts the proxy over the corpus, waits for it, and returns it as a retriever.
pub async fn launch(
    s: &Settings,
    corpus: &Loaded<Corpus>,
    golden: &GoldenSet,
    sup: &Supervisor,
) -> Result<Launched, SutError> {
    let name = system_name(s);
    let dir = scratch(&name)?;
    let corpus_files =
        write_server_corpora(&corpus.value, &dir.path().join("replay")).map_err(|e| {
            SutError::Other {
                system: name.clone(),
                detail: format!("cannot write the replay corpora: {e}"),
            }
        })?;
    let plan = Plan {
        upstreams: corpus_upstreams(&corpus_files),
        want: corpus
            .value
            .tools
            .iter()
            .map(|t| t.tool_id.clone())
            .collect(),
        quarantine: Quarantine::Off,
    };
    let running = start(s, &plan, dir, sup).await?;
    let search = McpSearch::connect(McpSearchSpec {
        name: name.clone(),
        endpoint: Endpoint::Http {
            url: format!("{}/mcp", running.base),
            headers: vec![("X-API-Key".into(), running.api_key.clone())],
        },
        tool: "retrieve_tools".into(),
        query_arg: "query".into(),
        limit_arg: Some("limit".into()),
        extra_args: Default::default(),
        mapper: Mapper::mcpproxy_retrieve_tools(),
    })
    .await
    .map_err(|e| SutError::Crashed {
        system: name.clone(),
        detail: format!("{e:#}\n--- proxy log tail ---\n{}", running.log_tail()),
    })?;
    let launched = Launched {
        search,
        proxy: running.proxy,
        name: name.clone(),
        _dir: running.dir,
    };

    // the index may still be settling: probe until two rounds agree
    let probes: Vec<&crate::dataset::Query> = golden.queries.iter().take(3).collect();
    let mut previous: Option<Vec<Vec<crate::text::Text>>> = None;
    for _ in 0..20 {
        let mut round = Vec::new();
        for q in &probes {
            // bounded like every measured query: a proxy that hangs here is named, not waited on
            let r = tokio::time::timeout(
                s.timeout,
                launched.search(SearchRequest {
                    run: 0,
                    query_id: &q.id,
                    text: &q.query,
                    limit: crate::metrics::DEPTH + crate::metrics::HEADROOM,
                }),
            )
            .await
            .map_err(|_| SutError::Timeout {
                system: name.clone(),
                seconds: s.timeout.as_secs_f64(),
                context: format!(
                    "stability probe query {:?} before the measured runs\n--- proxy log tail ---\n{}",
                    q.id,
                    launched.proxy.log_tail(LOG_LINES)
                ),
            })??;
            round.push(r.ids);
        }
        if previous.as_ref() == Some(&round) {
            return Ok(launched);
        }
        previous = Some(round);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(SutError::Other {
        system: name,
        detail: "search answers did not stabilise after 20 probe rounds".into(),
    })
}
