//! Launching the system under test: write a scratch mcpproxy-format config whose upstreams are
//! evalgate replay servers (one per corpus server), start the proxy, wait until its catalog is
//! exactly the corpus and its answers are stable, then search it over MCP. The supervisor stops
//! the whole process tree however the run ends.

pub mod catalog;
pub mod writers;

use crate::cli::SutKind;
use crate::config::{LaunchTransport, Settings};
use crate::dataset::{Corpus, GoldenSet, Loaded};
use crate::mcp::Endpoint;
use crate::process::{Managed, Spec, Supervisor};
use crate::replay::ServedNames;
use crate::sut::mapping::Mapper;
use crate::sut::mcp_search::{McpSearch, McpSearchSpec};
use crate::sut::{Ranked, Retriever, SearchRequest, SutError};
use async_trait::async_trait;
use catalog::{CatalogCheck, CheckSpec, Coverage};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use writers::{ConfigFormat, UpstreamCmd, Vars};

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
    let key: String = b.iter().map(|x| format!("{x:02x}")).collect();
    // a key is a credential: masked wherever a proxy's message echoes it
    crate::secrets::register(&key);
    key
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

/// Replay arguments serving each server's own corpus file, its tools named as `names` says.
pub fn corpus_upstreams(
    corpus_files: &BTreeMap<String, PathBuf>,
    names: ServedNames,
) -> BTreeMap<String, Vec<String>> {
    corpus_files
        .iter()
        .map(|(s, p)| {
            let mut args: Vec<String> = vec![
                "replay".into(),
                "--corpus".into(),
                p.display().to_string(),
                "--server".into(),
                s.clone(),
            ];
            if names == ServedNames::Prefixed {
                args.extend(["--names".into(), "prefixed".into()]);
            }
            (s.clone(), args)
        })
        .collect()
}

/// A launched proxy searched over MCP; keeps its scratch directory and processes alive.
pub struct Launched {
    search: McpSearch,
    /// The proxy process of an `http` launch (a `stdio` one is the search session's child).
    proxy: Option<Managed>,
    name: String,
    coverage: Option<Coverage>,
    _dir: tempfile::TempDir,
}

impl Launched {
    fn exited(&self) -> Option<String> {
        match &self.proxy {
            Some(p) => p.try_exited(),
            None => self.search.exited(),
        }
    }

    fn log_tail(&self) -> String {
        match &self.proxy {
            Some(p) => format!("\n--- proxy log tail ---\n{}", p.log_tail(LOG_LINES)),
            None => self.search.story(),
        }
    }

    /// Names the cause when the proxy process died under a failed query.
    fn explain(&self, e: SutError) -> SutError {
        match self.exited() {
            Some(status) => SutError::Crashed {
                system: self.name.clone(),
                detail: format!(
                    "the proxy process exited ({status}) during the run: {e}{}",
                    self.log_tail()
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
                if let Some(status) = self.exited() {
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
                detail: format!("the proxy process exited ({status}) while answering query {query:?}{}", self.log_tail()),
            }),
        }
    }
    async fn probe(
        &self,
        req: SearchRequest<'_>,
        extra: &serde_json::Map<String, Value>,
    ) -> Option<Result<crate::sut::ProbeReply, SutError>> {
        if let Some(status) = self.exited() {
            return Some(Err(SutError::Crashed {
                system: self.name.clone(),
                detail: format!("the proxy process had exited ({status})"),
            }));
        }
        let r = self.search.probe(req, extra).await;
        r.map(|r| r.map_err(|e| self.explain(e)))
    }
    fn sends_limit(&self) -> bool {
        self.search.sends_limit()
    }
    fn coverage(&self) -> Option<Coverage> {
        self.coverage.clone()
    }
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
    let text = crate::http::read_body(resp, crate::http::MAX_API_ANSWER)
        .await
        .map_err(|e| format!("HTTP {status}: {e}"))?;
    let body: Value =
        serde_json::from_str(&text).map_err(|e| format!("HTTP {status}, body is not JSON: {e}"))?;
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
    let Ok(body) = crate::http::read_body(resp, crate::http::MAX_API_ANSWER).await else {
        return Ok(None);
    };
    let Ok(body) = serde_json::from_str::<Value>(&body) else {
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
    /// The MCP endpoint (`[sut.launch] url`, default `http://{listen}/mcp`).
    pub url: String,
    /// The placeholder values of this launch.
    pub vars: Vars,
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

/// What the settings say about the launched proxy, resolved once.
struct LaunchShape {
    format: ConfigFormat,
    transport: LaunchTransport,
    /// Readiness through mcpproxy's REST API (its family: mcpproxy, the reference proxy, and a
    /// `launch` proxy in mcpproxy's config format unless another check is chosen).
    rest_ready: bool,
}

fn shape(s: &Settings) -> LaunchShape {
    let l = &s.sut_file.launch;
    let check = s.sut_file.catalog.check.unwrap_or_default();
    match s.sut {
        SutKind::Launch => {
            let format = l.config_format.unwrap_or_default();
            LaunchShape {
                format,
                transport: l.transport.unwrap_or_default(),
                rest_ready: l.transport.unwrap_or_default() == LaunchTransport::Http
                    && (check == CatalogCheck::Mcpproxy
                        || check == CatalogCheck::Auto && format == ConfigFormat::Mcpproxy),
            }
        }
        _ => LaunchShape {
            format: ConfigFormat::Mcpproxy,
            transport: LaunchTransport::Http,
            rest_ready: true,
        },
    }
}

/// The scratch directory laid out, the config written, the placeholders known, the setup
/// commands run: everything but the start itself.
struct Prepared {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: PathBuf,
    vars: Vars,
    listen: String,
    api_key: String,
}

fn upstream_cmds(plan: &Plan, me: &Path) -> Vec<UpstreamCmd> {
    plan.upstreams
        .iter()
        .map(|(name, args)| UpstreamCmd {
            name: name.clone(),
            command: me.display().to_string(),
            args: args.clone(),
            env: BTreeMap::new(),
        })
        .collect()
}

async fn prepare(
    s: &Settings,
    plan: &Plan,
    dir: &Path,
    sup: &Supervisor,
    shape: &LaunchShape,
) -> Result<Prepared, SutError> {
    let name = system_name(s);
    let fail = |detail: String| SutError::Other {
        system: name.clone(),
        detail,
    };
    let l = &s.sut_file.launch;
    let data_dir = dir.join("data");
    let home = dir.join("home");
    for d in [&data_dir, &home] {
        std::fs::create_dir_all(d)
            .map_err(|e| fail(format!("cannot create {}: {e}", d.display())))?;
    }
    let me = std::env::current_exe()
        .map_err(|e| fail(format!("cannot find evalgate's own binary: {e}")))?;
    let port = free_port().map_err(|e| fail(format!("no free loopback port: {e}")))?;
    let listen = format!("127.0.0.1:{port}");
    let api_key = random_key();
    let cfg_path = dir.join(
        l.config_name
            .clone()
            .filter(|_| s.sut == SutKind::Launch)
            .unwrap_or_else(|| shape.format.default_name().to_string()),
    );
    let ups = upstream_cmds(plan, &me);
    let mut vars = Vars::default();
    vars.set("config", cfg_path.display().to_string());
    vars.set("data_dir", data_dir.display().to_string());
    vars.set("home", home.display().to_string());
    vars.set("workdir", dir.display().to_string());
    vars.set("port", port.to_string());
    vars.set("listen", listen.clone());
    vars.set("api_key", api_key.clone());
    vars.set(
        "servers_json",
        serde_json::to_string(&writers::servers_map(&ups)).unwrap_or_default(),
    );
    let url = vars.fill(l.url.as_deref().unwrap_or("http://{listen}/mcp"));
    vars.set("url", url);

    let text = match shape.format {
        ConfigFormat::Mcpproxy => {
            let mut cfg = proxy_config(
                &plan.upstreams,
                &me,
                &listen,
                &data_dir,
                &api_key,
                plan.quarantine,
            );
            for (k, v) in &l.proxy_config {
                cfg[k] = v.clone();
            }
            Some(serde_json::to_string_pretty(&cfg).unwrap_or_default())
        }
        ConfigFormat::McpServers | ConfigFormat::Servers => {
            writers::json_config(shape.format, &ups)
                .map(|v| serde_json::to_string_pretty(&v).unwrap_or_default())
        }
        ConfigFormat::Template => {
            let t = l.template.as_ref().ok_or_else(|| {
                fail("[sut.launch] config_format = \"template\" needs template = \"FILE\"".into())
            })?;
            let src = crate::files::read_to_string(t)
                .map_err(|e| fail(format!("{}: cannot read the template: {e}", t.display())))?;
            Some(writers::render_template(t, &src, &ups, &vars).map_err(fail)?)
        }
        ConfigFormat::None => None,
    };
    if let Some(text) = text {
        std::fs::write(&cfg_path, text)
            .map_err(|e| fail(format!("cannot write {}: {e}", cfg_path.display())))?;
    }

    let mut env: Vec<(String, String)> = vec![
        ("MCPPROXY_API_KEY".into(), api_key.clone()),
        // a fresh HOME: no user configuration, cache, keyring or shell profile reaches the
        // proxy, and nothing it stores survives into the next run. (mcpproxy starts every stdio
        // upstream through the user's login shell; a profile that did work at login once made a
        // hundred upstreams miss its initialize deadline.)
        ("HOME".into(), home.display().to_string()),
        (
            "XDG_CONFIG_HOME".into(),
            home.join(".config").display().to_string(),
        ),
        (
            "XDG_CACHE_HOME".into(),
            home.join(".cache").display().to_string(),
        ),
        (
            "XDG_DATA_HOME".into(),
            home.join(".local/share").display().to_string(),
        ),
    ];
    for (k, v) in &l.env {
        env.push((k.clone(), vars.fill(v)));
    }
    let cwd = l
        .cwd
        .as_deref()
        .filter(|_| s.sut == SutKind::Launch)
        .map(|c| vars.path(c))
        .unwrap_or_else(|| dir.to_path_buf());
    let (program, args): (PathBuf, Vec<String>) = match s.sut {
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
            (bin, args.iter().map(|a| vars.fill(a)).collect())
        }
        SutKind::Launch => {
            let cmd = l.command.clone().filter(|c| !c.is_empty()).ok_or_else(|| {
                fail("--sut launch needs [sut.launch] command = [...] in evalgate.toml".into())
            })?;
            (
                vars.path(&cmd[0]),
                cmd[1..].iter().map(|a| vars.fill(a)).collect(),
            )
        }
        _ => (
            me.clone(),
            [
                "proxy",
                "--mcpproxy-config",
                "{config}",
                "--listen",
                "{listen}",
            ]
            .iter()
            .map(|a| vars.fill(a))
            .collect(),
        ),
    };
    if s.sut == SutKind::Launch {
        run_setup(s, &l.setup, &ups, &vars, &env, &cwd, sup).await?;
    }
    Ok(Prepared {
        program,
        args,
        env,
        cwd,
        vars,
        listen,
        api_key,
    })
}

/// Runs the `setup` commands (one that names `{server}` once per server), each bounded.
async fn run_setup(
    s: &Settings,
    setup: &[Vec<String>],
    ups: &[UpstreamCmd],
    vars: &Vars,
    env: &[(String, String)],
    cwd: &Path,
    sup: &Supervisor,
) -> Result<(), SutError> {
    let name = system_name(s);
    let limit = ready_timeout(s, ups.len());
    for cmd in setup.iter().filter(|c| !c.is_empty()) {
        let per_server = cmd.iter().any(|a| a.contains("{server"));
        let rounds: Vec<Option<&UpstreamCmd>> = if per_server {
            ups.iter().map(Some).collect()
        } else {
            vec![None]
        };
        for u in rounds {
            let mut v = vars.clone();
            let mut argv = Vec::new();
            if let Some(u) = u {
                v.set("server", u.name.clone());
                v.set("server_command", u.command.clone());
            }
            for a in cmd {
                match u {
                    Some(u) if a == "{server_args}" => argv.extend(u.args.iter().cloned()),
                    _ => argv.push(v.fill(a)),
                }
            }
            let mut spec = Spec::new(format!("{name} setup"), &argv[0]);
            spec.args = argv[1..].to_vec();
            spec.env = env.to_vec();
            spec.cwd = Some(cwd.to_path_buf());
            let child = sup.spawn(spec).map_err(|e| SutError::Other {
                system: name.clone(),
                detail: format!("setup command {:?}: {e:#}", argv.join(" ")),
            })?;
            let status = child.wait_exit(limit).await;
            let ok = child.try_exit_status().is_some_and(|st| st.success());
            if !ok {
                let tail = child.log_tail(LOG_LINES);
                child.terminate(Duration::from_secs(1)).await;
                return Err(SutError::Other {
                    system: name.clone(),
                    detail: format!(
                        "setup command {:?} {}\n--- its output (last lines) ---\n{tail}",
                        argv.join(" "),
                        match status {
                            Some(st) => format!("failed ({st})"),
                            None => format!("did not finish within {} s", limit.as_secs_f64()),
                        }
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Starts an `http` proxy the settings name (`--sut mcpproxy`, `launch`, else the reference
/// proxy) over `plan.upstreams`. For mcpproxy's family it then waits until the catalog is
/// exactly `plan.want` (REST); any other proxy is waited on until it accepts connections.
pub async fn start(
    s: &Settings,
    plan: &Plan,
    dir: tempfile::TempDir,
    sup: &Supervisor,
) -> Result<Running, SutError> {
    let name = system_name(s);
    let shape = shape(s);
    let mut attempt = 0;
    'launch: loop {
        attempt += 1;
        let p = prepare(s, plan, dir.path(), sup, &shape).await?;
        let mut spec = Spec::new(name.clone(), p.program.clone());
        spec.args = p.args.clone();
        spec.env = p.env.clone();
        spec.cwd = Some(p.cwd.clone());
        if !s.quiet {
            eprintln!(
                "{name}: starting {} on {} over {} replayed server(s)",
                spec.program.display(),
                p.listen,
                plan.upstreams.len()
            );
        }
        let proxy = sup.spawn(spec).map_err(|e| SutError::Crashed {
            system: name.clone(),
            detail: format!("{e:#}"),
        })?;

        let ready_timeout = ready_timeout(s, plan.upstreams.len());
        let want = &plan.want;
        let counts = per_server(want);
        let mut servers_ready = false;
        let base = format!("http://{}", p.listen);
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| SutError::Other {
                system: name.clone(),
                detail: e.to_string(),
            })?;
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
                        "the proxy exited ({status}) before it was ready\n--- proxy log tail ---\n{}",
                        proxy.log_tail(LOG_LINES)
                    ),
                });
            }
            let mut pause = Duration::from_millis(250);
            if !shape.rest_ready {
                if tokio::net::TcpStream::connect(&p.listen).await.is_ok() {
                    break;
                }
                last = format!("nothing accepts connections on {}", p.listen);
            } else if !servers_ready {
                match servers_pending(&client, &base, &p.api_key, &counts).await {
                    Ok(None) => servers_ready = true,
                    Ok(Some(pend)) if pend.is_empty() => servers_ready = true,
                    Ok(Some(pend)) => {
                        let head: Vec<&str> = pend.iter().take(10).map(String::as_str).collect();
                        last = format!(
                            "{} of {} server(s) not ready: {}{}",
                            pend.len(),
                            counts.len(),
                            head.join("; "),
                            if pend.len() > 10 { "; …" } else { "" }
                        );
                    }
                    Err(e) => last = e,
                }
            }
            if shape.rest_ready && servers_ready {
                match catalog_ids(&client, &base, &p.api_key).await {
                    Ok(have) if &have == want => break,
                    Ok(have) => last = diff_text(want, &have),
                    Err(e) => last = e,
                }
                pause = Duration::from_millis(1000);
            }
            if start.elapsed() > ready_timeout {
                if shape.rest_ready
                    && !servers_ready
                    && let Ok(have) = catalog_ids(&client, &base, &p.api_key).await
                {
                    // name the missing tools too, whatever the servers list says
                    last = format!("{last}; catalog: {}", diff_text(want, &have));
                }
                return Err(SutError::Timeout {
                    system: name.clone(),
                    seconds: ready_timeout.as_secs_f64(),
                    context: format!(
                        "waiting for {}: {last}\n--- proxy log tail ---\n{}",
                        if shape.rest_ready {
                            format!("the catalog to equal the {} served tools", want.len())
                        } else {
                            "the proxy to accept connections".to_string()
                        },
                        proxy.log_tail(LOG_LINES)
                    ),
                });
            }
            tokio::time::sleep(pause).await;
        }
        if !s.quiet && shape.rest_ready {
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
            api_key: p.api_key,
            url: p.vars.fill("{url}"),
            vars: p.vars,
            dir,
        });
    }
}

/// The MCP search of a launched proxy: mcpproxy's `retrieve_tools` for its family, else
/// `[sut.mcp]` (tool, arguments, filter, or a preset) at the launch's endpoint.
fn search_spec(s: &Settings, endpoint: Endpoint) -> Result<McpSearchSpec, SutError> {
    let name = system_name(s);
    if s.sut == SutKind::Launch {
        return McpSearchSpec::from_file(&name, &s.sut_file.mcp, Some(endpoint)).map_err(|e| {
            SutError::Other {
                system: name.clone(),
                detail: format!("{e:#}"),
            }
        });
    }
    Ok(McpSearchSpec {
        name,
        endpoint,
        tool: "retrieve_tools".into(),
        query_arg: "query".into(),
        limit_arg: Some("limit".into()),
        extra_args: Default::default(),
        mapper: Mapper::mcpproxy_retrieve_tools(),
    })
}

/// The catalog check for a connected system (`search` or `tools-list`).
pub async fn check_catalog(
    s: &Settings,
    r: &dyn Retriever,
    mcp: Option<&McpSearch>,
    corpus: &Corpus,
) -> Result<Coverage, SutError> {
    let spec = CheckSpec {
        system: r.name().to_string(),
        ready_timeout: ready_timeout(s, 0),
        request_timeout: s.timeout,
        concurrency: s.concurrency,
        allow_partial: s.sut_file.catalog.allow_partial,
        quiet: s.quiet,
    };
    let c = &s.sut_file.catalog;
    let cov = match (c.check.unwrap_or_default(), mcp) {
        (CatalogCheck::ToolsList, Some(m)) => {
            catalog::by_tools_list(
                || m.list_tools(),
                corpus,
                c.filter.as_deref(),
                c.id_style.unwrap_or_default(),
                &spec,
            )
            .await?
        }
        (CatalogCheck::ToolsList, None) => {
            return Err(SutError::Other {
                system: spec.system,
                detail: "[sut.catalog] check = \"tools-list\" needs a system reached over MCP"
                    .into(),
            });
        }
        _ => catalog::by_search(r, corpus, &spec).await?,
    };
    if !s.quiet {
        eprintln!("{}: catalog {}", spec.system, cov.summary());
    }
    Ok(cov)
}

/// Starts the proxy over the corpus, establishes its catalog, and returns it as a retriever.
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
        upstreams: corpus_upstreams(
            &corpus_files,
            s.sut_file.launch.served_names.unwrap_or_default(),
        ),
        want: corpus
            .value
            .tools
            .iter()
            .map(|t| t.tool_id.clone())
            .collect(),
        quarantine: Quarantine::Off,
    };
    let shape = shape(s);
    let (search, proxy, dir) = match shape.transport {
        LaunchTransport::Stdio => {
            let p = prepare(s, &plan, dir.path(), sup, &shape).await?;
            if !s.quiet {
                eprintln!(
                    "{name}: starting {} (stdio) over {} replayed server(s)",
                    p.program.display(),
                    plan.upstreams.len()
                );
            }
            let endpoint = Endpoint::Stdio {
                program: p.program.display().to_string(),
                args: p.args,
                env: p.env,
                cwd: Some(p.cwd),
            };
            let spec = search_spec(s, endpoint)?;
            let search = McpSearch::connect(spec, sup, ready_timeout(s, plan.upstreams.len()))
                .await
                .map_err(|e| SutError::connect_failed(name.clone(), &e, ""))?;
            (search, None, dir)
        }
        LaunchTransport::Http => {
            let running = start(s, &plan, dir, sup).await?;
            let mut headers: Vec<(String, String)> = s
                .sut_file
                .launch
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), running.vars.fill(v)))
                .collect();
            if shape.format == ConfigFormat::Mcpproxy {
                headers.push(("X-API-Key".into(), running.api_key.clone()));
            }
            let spec = search_spec(
                s,
                Endpoint::Http {
                    url: running.url.clone(),
                    headers,
                },
            )?;
            let search = McpSearch::connect(spec, sup, ready_timeout(s, 0))
                .await
                .map_err(|e| {
                    SutError::connect_failed(
                        name.clone(),
                        &e,
                        &format!("\n--- proxy log tail ---\n{}", running.log_tail()),
                    )
                })?;
            (search, Some(running.proxy), running.dir)
        }
    };
    let mut launched = Launched {
        search,
        proxy,
        name: name.clone(),
        coverage: None,
        _dir: dir,
    };
    launched.coverage = Some(if shape.rest_ready {
        Coverage {
            method: "mcpproxy".into(),
            served: plan.want.len(),
            seen: plan.want.len(),
            rounds: 1,
            ..Coverage::default()
        }
    } else {
        // through the launched retriever, which watches the process while probing
        check_catalog(s, &launched, Some(&launched.search), &corpus.value)
            .await
            .map_err(|e| launched.explain(e))?
    });
    settle(s, &launched, golden).await?;
    Ok(launched)
}

/// The index may still be settling: probe until two rounds of the first golden queries agree.
async fn settle(s: &Settings, launched: &Launched, golden: &GoldenSet) -> Result<(), SutError> {
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
                system: launched.name.clone(),
                seconds: s.timeout.as_secs_f64(),
                context: format!(
                    "stability probe query {:?} before the measured runs{}",
                    q.id,
                    launched.log_tail()
                ),
            })??;
            round.push(r.ids);
        }
        if previous.as_ref() == Some(&round) {
            return Ok(());
        }
        previous = Some(round);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(SutError::Other {
        system: launched.name.clone(),
        detail: "search answers did not stabilise after 20 probe rounds".into(),
    })
}
