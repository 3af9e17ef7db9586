//! Everything a launch does before the proxy starts: the settings resolved into a launch shape,
//! the scratch directory laid out, the config written, the placeholders known, the setup
//! commands run.

use super::catalog::CatalogCheck;
use super::writers::{self, ConfigFormat, UpstreamCmd, Vars, free_port, proxy_config, random_key};
use super::{LOG_LINES, Plan};
use crate::infra::files::read_to_string;
use crate::infra::own_binary::own_binary;
use crate::infra::process::{Spec, Supervisor};
use crate::pipeline::sut::SutError;
use crate::pipeline::sut::kind::SutKind;
use crate::pipeline::sut::launch::spec::{LaunchSpec, LaunchTransport};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The system's display name for a launch.
pub fn system_name(s: &LaunchSpec) -> String {
    s.name.clone().unwrap_or_else(|| match s.kind {
        SutKind::Mcpproxy => "mcpproxy".into(),
        SutKind::Launch => "launched-proxy".into(),
        _ => "reference-proxy".into(),
    })
}

/// How long a launch waits for the catalog (`[sut.launch] ready_timeout`, else 60 s plus one
/// second per served server: a proxy starts its upstreams at once, and a hundred of them on a
/// small CI machine take a while).
pub fn ready_timeout(s: &LaunchSpec, servers: usize) -> Duration {
    s.check
        .ready_timeout
        .unwrap_or(super::READY_TIMEOUT + Duration::from_secs(servers as u64))
}

/// The scratch directory prefix of a launched proxy.
pub const LAUNCH_SCRATCH: &str = "evalgate-launch-";

/// A fresh scratch directory `prefix…` of system `name`, removed on SIGINT/SIGTERM too.
pub fn scratch_dir(name: &str, prefix: &str) -> Result<tempfile::TempDir, SutError> {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| SutError::other(name, format!("cannot create a scratch directory: {e}")))?;
    Supervisor::remove_on_signal(dir.path());
    Ok(dir)
}

/// What the settings say about the launched proxy, resolved once.
pub(super) struct LaunchShape {
    pub(super) format: ConfigFormat,
    pub(super) transport: LaunchTransport,
    /// Readiness through mcpproxy's REST API (its family: mcpproxy, the reference proxy, and a
    /// `launch` proxy in mcpproxy's config format unless another check is chosen).
    pub(super) rest_ready: bool,
}

pub(super) fn shape(s: &LaunchSpec) -> LaunchShape {
    let l = &s.launch;
    let check = s.check.catalog.check.unwrap_or_default();
    match s.kind {
        SutKind::Launch => {
            let format = l.config_format.unwrap_or_default();
            let transport = l.transport.unwrap_or_default();
            LaunchShape {
                format,
                transport,
                rest_ready: transport == LaunchTransport::Http
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
pub(super) struct Prepared {
    /// The proxy's program, arguments, environment and working directory.
    pub(super) spec: Spec,
    pub(super) vars: Vars,
    pub(super) listen: String,
    pub(super) api_key: String,
}

/// `upstream_transport = "http"`: starts every replay under the supervisor on its own loopback
/// port (`evalgate replay … --listen 127.0.0.1:PORT`), waits until each accepts connections
/// (bounded by the launch's ready timeout; one that exits first is named with its log), and
/// gives each upstream its URL.
async fn serve_over_http(
    s: &LaunchSpec,
    ups: &mut [UpstreamCmd],
    sup: &Supervisor,
) -> Result<(), SutError> {
    let name = system_name(s);
    let limit = ready_timeout(s, ups.len());
    let mut started = Vec::new();
    for u in ups.iter_mut() {
        let replay = format!("the replay of {}", u.name);
        let port = free_port().map_err(|e| {
            SutError::other(&name, format!("no free loopback port for {replay}: {e}"))
        })?;
        let listen = format!("127.0.0.1:{port}");
        let mut spec = Spec::new(format!("replay {}", u.name), PathBuf::from(&u.command));
        spec.args = u.args.clone();
        spec.args.extend(["--listen".to_string(), listen.clone()]);
        let child = sup
            .spawn(spec)
            .map_err(|e| SutError::crashed(&name, format!("{replay} did not start: {e:#}")))?;
        u.url = Some(format!("http://{listen}/mcp"));
        started.push((replay, listen, child));
    }
    let start = std::time::Instant::now();
    for (replay, listen, child) in &started {
        while tokio::net::TcpStream::connect(listen).await.is_err() {
            if let Some(status) = child.try_exited() {
                let log = child.log_tail(LOG_LINES);
                return Err(SutError::crashed(
                    &name,
                    format!(
                        "{replay} on {listen} exited ({status}) before it listened\n--- its log ---\n{log}"
                    ),
                ));
            }
            if start.elapsed() > limit {
                let context = format!("waiting for {replay} to listen on {listen}");
                return Err(SutError::timeout(&name, limit.as_secs_f64(), context));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok(())
}

pub(super) async fn prepare(
    s: &LaunchSpec,
    plan: &Plan,
    dir: &Path,
    sup: &Supervisor,
    shape: &LaunchShape,
) -> Result<Prepared, SutError> {
    let name = system_name(s);
    let fail = |detail: String| SutError::other(name.clone(), detail);
    let l = &s.launch;
    let data_dir = dir.join("data");
    let home = dir.join("home");
    for d in [&data_dir, &home] {
        std::fs::create_dir_all(d)
            .map_err(|e| fail(format!("cannot create {}: {e}", d.display())))?;
    }
    let me = own_binary().map_err(|e| fail(format!("cannot find evalgate's own binary: {e}")))?;
    let port = free_port().map_err(|e| fail(format!("no free loopback port: {e}")))?;
    let listen = format!("127.0.0.1:{port}");
    let api_key = random_key();
    let cfg_path = dir.join(
        l.config_name
            .clone()
            .filter(|_| s.kind == SutKind::Launch)
            .unwrap_or_else(|| shape.format.default_name().to_string()),
    );
    let mut ups: Vec<UpstreamCmd> = plan
        .upstreams
        .iter()
        .map(|(name, args)| UpstreamCmd {
            name: name.clone(),
            command: me.display().to_string(),
            args: args.clone(),
            env: BTreeMap::new(),
            url: None,
        })
        .collect();
    let over_http = s.kind == SutKind::Launch
        && l.upstream_transport.unwrap_or(LaunchTransport::Stdio) == LaunchTransport::Http;
    if over_http {
        serve_over_http(s, &mut ups, sup).await?;
    }
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
                plan.quarantine.clone(),
            );
            for (k, v) in &l.proxy_config {
                cfg[k] = v.clone();
            }
            for e in cfg["mcpServers"].as_array_mut().into_iter().flatten() {
                let name = e["name"].as_str().unwrap_or_default().to_string();
                let u = UpstreamCmd {
                    command: e["command"].as_str().unwrap_or_default().to_string(),
                    args: e["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|a| a.as_str().map(String::from))
                        .collect(),
                    env: BTreeMap::new(),
                    url: ups
                        .iter()
                        .find(|u| u.name == name)
                        .and_then(|u| u.url.clone()),
                    name,
                };
                if let (Some(url), Some(o)) = (&u.url, e.as_object_mut()) {
                    o.insert("protocol".into(), "http".into());
                    o.insert("url".into(), url.as_str().into());
                    o.remove("command");
                    o.remove("args");
                }
                writers::merge_server_fields(e, &u, &l.server_fields);
            }
            Some(serde_json::to_string_pretty(&cfg).unwrap_or_default())
        }
        ConfigFormat::McpServers | ConfigFormat::Servers => {
            writers::json_config(shape.format, &ups, &l.proxy_config, &l.server_fields)
                .map(|v| serde_json::to_string_pretty(&v).unwrap_or_default())
        }
        ConfigFormat::Template => {
            let t = l.template.as_ref().ok_or_else(|| {
                fail("[sut.launch] config_format = \"template\" needs template = \"FILE\"".into())
            })?;
            let src = read_to_string(t)
                .map_err(|e| fail(format!("{}: cannot read the template: {e}", t.display())))?;
            Some(writers::render_template(t, &src, &ups, &vars, &l.proxy_config).map_err(fail)?)
        }
        ConfigFormat::None => None,
    };
    if let Some(text) = text {
        std::fs::write(&cfg_path, text)
            .map_err(|e| fail(format!("cannot write {}: {e}", cfg_path.display())))?;
    }

    let env = proxy_env(&home, &api_key, &l.env, &vars);
    let cwd = l
        .cwd
        .as_deref()
        .filter(|_| s.kind == SutKind::Launch)
        .map(|c| PathBuf::from(vars.fill(c)))
        .unwrap_or_else(|| dir.to_path_buf());
    let (program, args) = proxy_command(s, &me, &vars).map_err(fail)?;
    let mut spec = Spec::new(name.clone(), program);
    spec.args = args;
    spec.env = env;
    spec.cwd = Some(cwd);
    if s.kind == SutKind::Launch {
        run_setup(s, &ups, &vars, &spec, sup).await?;
    }
    Ok(Prepared {
        spec,
        vars,
        listen,
        api_key,
    })
}

/// The proxy's environment: its API key, a fresh HOME and XDG directories under `home`, then
/// `extra` (`[sut.launch] env`, placeholders filled).
fn proxy_env(
    home: &Path,
    api_key: &str,
    extra: &BTreeMap<String, String>,
    vars: &Vars,
) -> Vec<(String, String)> {
    let xdg = [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_DATA_HOME", ".local/share"),
    ]
    .map(|(k, sub)| (k.to_string(), home.join(sub).display().to_string()));
    let head = [
        ("MCPPROXY_API_KEY".to_string(), api_key.to_string()),
        // a fresh HOME: no user configuration, cache, keyring or shell profile reaches the
        // proxy, and nothing it stores survives into the next run. (mcpproxy starts every stdio
        // upstream through the user's login shell; a profile that did work at login once made a
        // hundred upstreams miss its initialize deadline.)
        ("HOME".to_string(), home.display().to_string()),
    ];
    let extra = extra.iter().map(|(k, v)| (k.clone(), vars.fill(v)));
    head.into_iter().chain(xdg).chain(extra).collect()
}

/// The proxy's program and arguments, placeholders filled: mcpproxy's `serve`, a `launch`
/// proxy's `command`, else evalgate's own reference proxy.
fn proxy_command(s: &LaunchSpec, me: &Path, vars: &Vars) -> Result<(PathBuf, Vec<String>), String> {
    let fill = |line: &str| line.split(' ').map(|a| vars.fill(a)).collect();
    Ok(match s.kind {
        SutKind::Mcpproxy => {
            let bin = s.mcpproxy_bin.clone().ok_or_else(|| {
                "--sut mcpproxy needs --mcpproxy-bin PATH (or [sut] mcpproxy_bin)".to_string()
            })?;
            let args =
                "serve --config {config} --data-dir {data_dir} --listen {listen} --log-level info";
            (bin, fill(args))
        }
        SutKind::Launch => {
            let cmd = s
                .launch
                .command
                .clone()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| {
                    "--sut launch needs [sut.launch] command = [...] in evalgate.toml".to_string()
                })?;
            (
                PathBuf::from(vars.fill(&cmd[0])),
                cmd[1..].iter().map(|a| vars.fill(a)).collect(),
            )
        }
        _ => (
            me.to_path_buf(),
            fill("proxy --mcpproxy-config {config} --listen {listen}"),
        ),
    })
}

/// Runs the `setup` commands (one that names `{server}` once per server), each bounded, in the
/// `proxy`'s environment and working directory.
async fn run_setup(
    s: &LaunchSpec,
    ups: &[UpstreamCmd],
    vars: &Vars,
    proxy: &Spec,
    sup: &Supervisor,
) -> Result<(), SutError> {
    let name = system_name(s);
    let limit = ready_timeout(s, ups.len());
    for cmd in s.launch.setup.iter().filter(|c| !c.is_empty()) {
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
            spec.env = proxy.env.clone();
            spec.cwd = proxy.cwd.clone();
            let line = argv.join(" ");
            let child = sup
                .spawn(spec)
                .map_err(|e| SutError::other(&name, format!("setup command {line:?}: {e:#}")))?;
            let status = child.wait_exit(limit).await;
            let ok = child.try_exit_status().is_some_and(|st| st.success());
            if !ok {
                let tail = child.log_tail(LOG_LINES);
                child.terminate(Duration::from_secs(1)).await;
                let why = match status {
                    Some(st) => format!("failed ({st})"),
                    None => format!("did not finish within {} s", limit.as_secs_f64()),
                };
                return Err(SutError::other(
                    &name,
                    format!(
                        "setup command {line:?} {why}\n--- its output (last lines) ---\n{tail}"
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_gets_its_key_a_fresh_home_then_the_configured_env_filled() {
        let mut vars = Vars::default();
        vars.set("port", "4242");
        let extra = BTreeMap::from([("PROXY_PORT".to_string(), "{port}".to_string())]);
        let env = proxy_env(Path::new("/s/home"), "k3y", &extra, &vars);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            env,
            [
                ("MCPPROXY_API_KEY", "k3y"),
                ("HOME", "/s/home"),
                ("XDG_CONFIG_HOME", "/s/home/.config"),
                ("XDG_CACHE_HOME", "/s/home/.cache"),
                ("XDG_DATA_HOME", "/s/home/.local/share"),
                ("PROXY_PORT", "4242"),
            ]
        );
    }
}
