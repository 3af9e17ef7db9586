//! Starting a proxy over replay upstreams and handing it over once it is ready: for mcpproxy's
//! family, once `GET /api/v1/servers` shows every served server connected and
//! `GET /api/v1/tools` is exactly the served tools; for any other proxy, once it accepts
//! connections.

use super::catalog::server_of;
use super::prepare::{LaunchShape, Prepared, prepare, shape, system_name};
use super::writers::{Quarantine, Vars};
use super::{LOG_LINES, proxy_log, ready_timeout};
use crate::infra::http::{MAX_API_ANSWER, path_segment, read_body};
use crate::infra::process::{Managed, Supervisor};
use crate::infra::text::sanitize::clip;
use crate::pipeline::sut::SutError;
use crate::pipeline::sut::launch::spec::LaunchSpec;
use reqwest::Method;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

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
    /// The placeholder values of this launch (`{url}`: the MCP endpoint).
    pub vars: Vars,
    /// The scratch directory (config, data dir, replay files); removed when dropped.
    pub dir: tempfile::TempDir,
}

/// Starts an `http` proxy the settings name (`--sut mcpproxy`, `launch`, else the reference
/// proxy) over `plan.upstreams`. For mcpproxy's family it then waits until the catalog is
/// exactly `plan.want` (REST); any other proxy is waited on until it accepts connections.
///
/// The steps: prepare the scratch directory and config → spawn the proxy → wait until it is
/// ready (a proxy that lost its port to another process is started again, at most three
/// times) → hand it over as [`Running`].
pub async fn start(
    s: &LaunchSpec,
    plan: &Plan,
    dir: tempfile::TempDir,
    sup: &Supervisor,
) -> Result<Running, SutError> {
    let name = system_name(s);
    let shape = shape(s);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let p = prepare(s, plan, dir.path(), sup, &shape).await?;
        if !s.check.quiet {
            crate::errln!(
                "{name}: starting {} on {} over {} replayed server(s)",
                p.spec.program.display(),
                p.listen,
                plan.upstreams.len()
            );
        }
        let proxy = sup
            .spawn(p.spec.clone())
            .map_err(|e| SutError::crashed(name.clone(), format!("{e:#}")))?;
        let base = format!("http://{}", p.listen);
        let took = match wait_ready(s, &name, plan, &shape, &p, &base, &proxy).await? {
            Ok(took) => took,
            // the port chosen was taken before the proxy bound it: try another one
            Err(_) if attempt < 3 && lost_its_port(&proxy) => continue,
            Err(status) => {
                let log = proxy_log(&proxy);
                let detail = format!("the proxy exited ({status}) before it was ready{log}");
                return Err(SutError::crashed(name, detail));
            }
        };
        if !s.check.quiet && shape.rest_ready {
            crate::errln!(
                "{name}: catalog ready ({} tools) after {:.1} s",
                plan.want.len(),
                took.as_secs_f64()
            );
        }
        return Ok(Running {
            name,
            proxy,
            base,
            api_key: p.api_key,
            vars: p.vars,
            dir,
        });
    }
}

/// Does the exited proxy's log say it could not bind its port?
fn lost_its_port(proxy: &Managed) -> bool {
    let tail = proxy.log_tail(LOG_LINES).to_lowercase();
    tail.contains("in use") || tail.contains("cannot listen") || tail.contains("bind")
}

/// Waits until the proxy `p` describes is ready (`Ok(how long it took)`), it exits (`Err(its
/// exit status)`), or the launch's ready timeout passes (an error naming what was still missing
/// and the proxy's log tail).
async fn wait_ready(
    s: &LaunchSpec,
    name: &str,
    plan: &Plan,
    shape: &LaunchShape,
    p: &Prepared,
    base: &str,
    proxy: &Managed,
) -> Result<Result<Duration, String>, SutError> {
    let ready_timeout = ready_timeout(s, plan.upstreams.len());
    let want = &plan.want;
    let counts = per_server(want);
    let mut servers_ready = false;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| SutError::other(name, e.to_string()))?;
    let api = Api {
        client,
        base,
        key: &p.api_key,
        system: name,
    };
    let start = Instant::now();
    let mut last = String::new();
    let mut restarted = false;
    let mut lacking = Lacking::default();
    // the catalog is read again after 0.25 s, 0.5 s, then every second: a small proxy's is
    // complete within a read or two, a large one's takes seconds and each read lists it whole
    let mut catalog_pause = Duration::from_millis(250);
    loop {
        if let Some(status) = proxy.try_exited() {
            return Ok(Err(status));
        }
        let mut pause = Duration::from_millis(250);
        if !shape.rest_ready {
            if tokio::net::TcpStream::connect(&p.listen).await.is_ok() {
                break;
            }
            last = format!("nothing accepts connections on {}", p.listen);
        } else if !servers_ready {
            match api.servers_pending(&counts).await {
                Ok(pend) if pend.is_empty() => servers_ready = true,
                Ok(pend) => {
                    // On a loaded machine mcpproxy can give up on a server (seen in CI on 2
                    // cores: 1 of 101 never connected in 326 s). Once, half way in, ask it to
                    // restart those it reports failed (not connected, with an error), as its
                    // user would, and say so. Servers still starting are left alone.
                    if !restarted && start.elapsed() > ready_timeout / 2 {
                        restarted = true;
                        let failed = pend.iter().filter(|(s, what)| {
                            what.starts_with(&format!("{s} (not connected, last error: "))
                        });
                        api.ask(
                            "restart",
                            failed.cloned().collect(),
                            "still not ready; asked the proxy to restart them",
                        )
                        .await;
                    }
                    let connected: Vec<&str> = pend
                        .iter()
                        .filter(|(s, what)| what.starts_with(&format!("{s} (connected")))
                        .map(|(s, _)| s.as_str())
                        .collect();
                    api.rediscover(lacking.due(&connected, Instant::now()))
                        .await;
                    last = pending_text(&pend, counts.len());
                }
                Err(e) => last = e,
            }
        }
        if shape.rest_ready && servers_ready {
            match api.catalog_ids().await {
                Ok(have) if &have == want => break,
                Ok(have) => {
                    last = diff_text(want, &have);
                    let due = lacking.due(&missing_servers(want, &have), Instant::now());
                    api.rediscover(due).await;
                }
                Err(e) => last = e,
            }
            pause = catalog_pause;
            catalog_pause = (catalog_pause * 2).min(Duration::from_secs(1));
        }
        if start.elapsed() > ready_timeout {
            if shape.rest_ready
                && !servers_ready
                && let Ok(have) = api.catalog_ids().await
            {
                // name the missing tools too, whatever the servers list says
                last = format!("{last}; catalog: {}", diff_text(want, &have));
            }
            let what = if shape.rest_ready {
                format!("the catalog to equal the {} served tools", want.len())
            } else {
                "the proxy to accept connections".to_string()
            };
            let what = format!("waiting for {what}: {last}{}", proxy_log(proxy));
            return Err(SutError::timeout(name, ready_timeout.as_secs_f64(), what));
        }
        tokio::time::sleep(pause).await;
    }
    Ok(Ok(start.elapsed()))
}

/// The started proxy's REST API, and the system's name for what evalgate says of it.
struct Api<'a> {
    client: reqwest::Client,
    base: &'a str,
    key: &'a str,
    system: &'a str,
}

impl Api<'_> {
    /// `{method} {base}{path}` with the proxy's API key.
    async fn call(&self, method: Method, path: &str) -> Result<reqwest::Response, String> {
        let req = self.client.request(method, format!("{}{path}", self.base));
        req.header("X-API-Key", self.key)
            .send()
            .await
            .map_err(|e| e.to_string())
    }

    async fn catalog_ids(&self) -> Result<BTreeSet<String>, String> {
        let resp = self.call(Method::GET, "/api/v1/tools").await?;
        let status = resp.status();
        let text = read_body(resp, MAX_API_ANSWER)
            .await
            .map_err(|e| format!("HTTP {status}: {e}"))?;
        let body: Value = serde_json::from_str(&text)
            .map_err(|e| format!("HTTP {status}, body is not JSON: {e}"))?;
        catalog_in(&body).ok_or_else(|| format!("HTTP {status}: no data.tools array"))
    }

    /// The served servers the proxy's `GET /api/v1/servers` does not show connected with the
    /// expected number of tools; none when the proxy has no such endpoint or answer (only the
    /// catalog is read then).
    async fn servers_pending(
        &self,
        want: &BTreeMap<&str, usize>,
    ) -> Result<Vec<(String, String)>, String> {
        let resp = self.call(Method::GET, "/api/v1/servers").await?;
        if resp.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(vec![]);
        }
        let body = read_body(resp, MAX_API_ANSWER).await.ok();
        let body = body.and_then(|b| serde_json::from_str::<Value>(&b).ok());
        Ok(body.and_then(|b| pending_in(&b, want)).unwrap_or_default())
    }

    /// Asks the proxy to discover the tools of each server.
    async fn rediscover(&self, servers: Vec<String>) {
        let servers = servers.into_iter().map(|s| (s.clone(), s)).collect();
        let why = "connected but still lacking their tools; asked the proxy to discover them";
        self.ask("discover-tools", servers, why).await;
    }

    /// `POST /api/v1/servers/{name}/{action}` for each (server, what it shows), as the proxy's
    /// user would, and says so on stderr: "N server(s) {why}: …".
    async fn ask(&self, action: &str, servers: Vec<(String, String)>, why: &str) {
        if servers.is_empty() {
            return;
        }
        let mut asked = Vec::new();
        for (server, what) in servers {
            let path = format!("/api/v1/servers/{}/{action}", path_segment(&server));
            asked.push(match self.call(Method::POST, &path).await {
                Ok(r) if r.status().is_success() => what,
                Ok(r) => format!("{what}: HTTP {}", r.status().as_u16()),
                Err(e) => format!("{what}: {e}"),
            });
        }
        crate::errln!(
            "{}: {} server(s) {why}: {}",
            self.system,
            asked.len(),
            clip(&asked.join("; "), 600)
        );
    }
}

/// The `server:tool` ids of a `GET /api/v1/tools` answer; `None` without a `data.tools` array.
fn catalog_in(body: &Value) -> Option<BTreeSet<String>> {
    let tools = body.pointer("/data/tools").and_then(Value::as_array)?;
    let id = |t: &Value| {
        let server = t.get("server_name")?.as_str()?;
        Some(format!("{server}:{}", t.get("name")?.as_str()?))
    };
    Some(tools.iter().filter_map(id).collect())
}

/// The servers of `want` (name → tool count) that a `GET /api/v1/servers` answer does not show
/// connected with their tools (name, and the name with what it does show); `None` without
/// `data.servers`.
fn pending_in(body: &Value, want: &BTreeMap<&str, usize>) -> Option<Vec<(String, String)>> {
    let servers = body.pointer("/data/servers").and_then(Value::as_array)?;
    // by name; the last entry of a name counts
    let seen: BTreeMap<&str, &Value> = servers
        .iter()
        .filter_map(|srv| Some((srv.get("name")?.as_str()?, srv)))
        .collect();
    let pending = |(name, n): (&&str, &usize)| {
        let Some(srv) = seen.get(name) else {
            return Some((name.to_string(), format!("{name} (not configured)")));
        };
        let connected = srv.get("connected").and_then(Value::as_bool) == Some(true);
        let count = srv.get("tool_count").and_then(Value::as_u64);
        if connected && count.is_none_or(|c| c as usize == *n) {
            return None;
        }
        let not = if connected { "" } else { "not " };
        let count = count
            .map(|c| format!(", {c}/{n} tools"))
            .unwrap_or_default();
        let err = match srv.get("last_error").and_then(Value::as_str) {
            Some(err) if !err.is_empty() => format!(", last error: {}", clip(err, 160)),
            _ => String::new(),
        };
        Some((
            name.to_string(),
            format!("{name} ({not}connected{count}{err})"),
        ))
    };
    Some(want.iter().filter_map(pending).collect())
}

/// How long a connected server may lack tools before evalgate asks the proxy to discover them.
const REDISCOVER_AFTER: Duration = Duration::from_secs(15);

/// Connected servers lacking their tools (since when; which evalgate asked about). On a loaded
/// machine mcpproxy's discovery can miss one until its next sweep 5 minutes later (CI, 2 cores:
/// 13 of 101); evalgate asks it to discover them, once per server, as its user would.
#[derive(Default)]
struct Lacking {
    since: BTreeMap<String, Instant>,
    asked: BTreeSet<String>,
}

impl Lacking {
    /// Of the servers `now` lacking tools, those lacking them for over [`REDISCOVER_AFTER`] and
    /// not asked about before; a server no longer lacking is forgotten.
    fn due(&mut self, now_lacking: &[&str], now: Instant) -> Vec<String> {
        self.since.retain(|s, _| now_lacking.contains(&s.as_str()));
        let mut due = Vec::new();
        for s in now_lacking {
            let since = *self.since.entry(s.to_string()).or_insert(now);
            if now.duration_since(since) > REDISCOVER_AFTER && self.asked.insert(s.to_string()) {
                due.push(s.to_string());
            }
        }
        due
    }
}

/// The servers with a `want`ed tool missing from `have`.
fn missing_servers<'a>(want: &'a BTreeSet<String>, have: &BTreeSet<String>) -> Vec<&'a str> {
    let missing = want.iter().filter(|id| !have.contains(*id));
    let servers: BTreeSet<&str> = missing.map(|id| server_of(id)).collect();
    servers.into_iter().collect()
}

/// The number of tools each server should list, from `server:tool` ids.
fn per_server(want: &BTreeSet<String>) -> BTreeMap<&str, usize> {
    let mut out = BTreeMap::new();
    want.iter()
        .for_each(|id| *out.entry(server_of(id)).or_insert(0) += 1);
    out
}

/// The servers still pending, the first ten named.
fn pending_text(pend: &[(String, String)], servers: usize) -> String {
    let head: Vec<&str> = pend.iter().take(10).map(|(_, t)| t.as_str()).collect();
    format!(
        "{} of {} server(s) not ready: {}{}",
        pend.len(),
        servers,
        head.join("; "),
        if pend.len() > 10 { "; …" } else { "" }
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_servers_to_rediscover_are_those_with_a_tool_missing() {
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let want = ids(&["a:x", "a:y", "b:z", "c:w"]);
        assert_eq!(
            missing_servers(&want, &ids(&["a:x", "c:w"])),
            vec!["a", "b"]
        );
        assert!(missing_servers(&want, &want).is_empty());
    }

    #[test]
    fn a_server_lacking_tools_is_rediscovered_once_after_a_while() {
        let mut l = Lacking::default();
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        assert!(l.due(&["a", "b"], at(0)).is_empty());
        assert!(l.due(&["a", "b"], at(10)).is_empty());
        // b got its tools at 12 s and lost them again at 14 s: its wait starts again
        assert!(l.due(&["a"], at(12)).is_empty());
        assert_eq!(l.due(&["a", "b"], at(16)), ["a"]);
        assert!(l.due(&["a", "b"], at(20)).is_empty(), "asked once");
        assert_eq!(l.due(&["a", "b"], at(32)), ["b"]);
        assert!(l.due(&["a", "b"], at(600)).is_empty());
    }

    #[test]
    fn the_catalog_is_the_server_tool_ids_listed() {
        let body = json!({"data": {"tools": [
            {"server_name": "a", "name": "x"},
            {"server_name": "b", "name": "y"},
            {"name": "no_server"}
        ]}});
        assert_eq!(
            catalog_in(&body),
            Some(BTreeSet::from(["a:x".to_string(), "b:y".to_string()]))
        );
        assert_eq!(catalog_in(&json!({"tools": []})), None);
    }

    #[test]
    fn a_server_is_pending_until_connected_with_all_its_tools() {
        let want: BTreeMap<&str, usize> = [
            ("ok", 2),
            ("few", 3),
            ("down", 1),
            ("absent", 1),
            ("uncounted", 4),
        ]
        .into();
        let body = json!({"data": {"servers": [
            {"name": "ok", "connected": true, "tool_count": 2},
            {"name": "few", "connected": true, "tool_count": 1},
            {"name": "down", "connected": false, "last_error": "spawn failed"},
            {"name": "uncounted", "connected": true},
            {"name": "not-wanted", "connected": false}
        ]}});
        let pend: Vec<String> = pending_in(&body, &want)
            .unwrap()
            .into_iter()
            .map(|(name, text)| {
                assert!(text.starts_with(&name));
                text
            })
            .collect();
        assert_eq!(
            pend,
            [
                "absent (not configured)",
                "down (not connected, last error: spawn failed)",
                "few (connected, 1/3 tools)",
            ]
        );
        assert_eq!(pending_in(&json!({"data": {}}), &want), None);
    }

    #[test]
    fn what_is_still_missing_is_named_briefly() {
        let pend: Vec<(String, String)> =
            (0..12).map(|i| (String::new(), format!("s{i}"))).collect();
        assert_eq!(
            pending_text(&pend[..2], 5),
            "2 of 5 server(s) not ready: s0; s1"
        );
        assert!(pending_text(&pend, 12).ends_with("s8; s9; …"));
        let want: BTreeSet<String> = ["a:x", "a:y", "b:z"].map(String::from).into();
        let have: BTreeSet<String> = ["a:x", "c:w"].map(String::from).into();
        assert_eq!(
            diff_text(&want, &have),
            "2 missing [a:y, b:z]; 1 extra [c:w]"
        );
        let many: BTreeSet<String> = (0..25).map(|i| format!("s:{i:02}")).collect();
        assert!(diff_text(&many, &BTreeSet::new()).starts_with("25 missing [s:00, "));
        assert!(diff_text(&many, &BTreeSet::new()).contains("s:19 … (+5)]"));
        assert_eq!(per_server(&want), BTreeMap::from([("a", 2), ("b", 1)]));
    }
}
