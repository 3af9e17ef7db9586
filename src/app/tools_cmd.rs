//! Commands around MCP servers: `corpus snapshot`, `replay`, `proxy`.

use super::BadInput;
use crate::cli::{ProxyArgs, ReplayArgs, SnapshotArgs};
use crate::infra::secrets;
use crate::infra::text::sanitize;
use crate::pipeline::dataset::{DatasetPaths, Datasets, Need, Profile, ServerInfo};
use crate::pipeline::gate::ExitCode;
use crate::pipeline::replay::{Control, Replay, ReplaySpec, ServedNames};
use crate::pipeline::{dataset, replay};
use crate::tools::proxy;
use anyhow::bail;

fn split_pair(s: &str, sep: char, what: &str) -> anyhow::Result<(String, String)> {
    s.split_once(sep)
        .map(|(k, v)| (k.trim().to_string(), v.trim_start().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| BadInput(format!("{what} {s:?}: expected NAME{sep}VALUE")).into())
}

/// `corpus snapshot`.
pub async fn cmd_snapshot(a: &SnapshotArgs) -> anyhow::Result<i32> {
    use crate::infra::mcp::Endpoint;
    use crate::tools::snapshot;
    if let Some(url) = &a.url {
        secrets::register_url(url);
    }
    for h in &a.headers {
        secrets::register_header(h.split_once(':').map_or(h.as_str(), |(_, v)| v));
    }
    for e in &a.env {
        secrets::register(e.split_once('=').map_or(e.as_str(), |(_, v)| v));
    }
    let ep = match (&a.url, a.command.split_first()) {
        (Some(url), _) => Endpoint::Http {
            url: url.clone(),
            headers: a
                .headers
                .iter()
                .map(|h| split_pair(h, ':', "--header"))
                .collect::<anyhow::Result<_>>()?,
        },
        (None, Some((program, args))) => Endpoint::Stdio {
            program: program.clone(),
            args: args.to_vec(),
            env: a
                .env
                .iter()
                .map(|e| split_pair(e, '=', "--env"))
                .collect::<anyhow::Result<_>>()?,
            cwd: None,
        },
        (None, None) => bail!(BadInput(
            "give the server command after `--`, or --url for a streamable-HTTP server".into()
        )),
    };
    let timeout = crate::config::seconds("--timeout", a.timeout).map_err(super::bad_input)?;
    let server = ServerInfo {
        name: a.server.clone(),
        registry: a.registry.clone(),
        package: a.package.clone(),
        version: a.package_version.clone(),
        license: a.license.clone(),
        extra: Default::default(),
    };
    let taken_at = a
        .taken
        .clone()
        .unwrap_or_else(|| snapshot::rfc3339(std::time::SystemTime::now()));
    let mut corpus = match (&a.out, a.merge) {
        (Some(p), true) if p.is_file() => snapshot::read(p).map_err(super::bad_input)?,
        _ => snapshot::empty(&a.corpus_version),
    };
    let taken = match snapshot::take(server, &ep, &taken_at, timeout).await {
        Ok(t) => t,
        Err(e) => {
            // the error may quote the server's own text, and the credentials it was given
            crate::errln!(
                "error: snapshot of server {:?} failed: {}",
                a.server,
                sanitize::visible_lines(&secrets::scrub(&format!("{e:#}")))
            );
            return Ok(ExitCode::SUT_FAILED);
        }
    };
    let n = taken.tools.len();
    snapshot::merge(&mut corpus, taken);
    match &a.out {
        Some(p) => {
            crate::infra::files::write_atomic(p, dataset::corpus_json(&corpus).as_bytes())?;
            crate::errln!(
                "{}: {n} tool(s) from {:?}; {} tool(s) from {} server(s) in all",
                p.display(),
                a.server,
                corpus.tools.len(),
                corpus.servers.len()
            );
        }
        // `#` occurs only inside JSON strings, where `\u0023` is the same text: the legacy
        // workflow command `##[` is escaped without changing the data (out! would alter it)
        None => crate::out!(
            "{}",
            dataset::corpus_json(&corpus).replace("##[", "#\\u0023[")
        ),
    }
    Ok(ExitCode::PASS)
}

/// `replay`: a stdio MCP server; nothing but protocol goes to stdout.
pub async fn cmd_replay(a: &ReplayArgs) -> anyhow::Result<i32> {
    let control = Control {
        switch_file: a.switch_file.clone(),
        listed_file: a.listed_file.clone(),
    };
    let mut spec = match (&a.spec, &a.server) {
        (Some(path), _) => ReplaySpec::from_file(path).map_err(super::bad_input)?,
        (None, server) => {
            let server = server.as_deref().unwrap_or_default();
            let paths = DatasetPaths {
                security: a.security.clone(),
                ..Default::default()
            };
            let need = Need {
                retrieval: false,
                security: a.security.is_some(),
            };
            let ds = Datasets::load(&paths, need, Profile::Lenient)?;
            let corpus = Datasets::load_corpus(&a.corpus)?.value;
            let security = ds.security.as_ref().map(|s| &s.value);
            ReplaySpec::new(&corpus, security, server).map_err(super::bad_input)?
        }
    };
    spec.rug_pull = a.rug_pull;
    replay_fault(&spec.server).await;
    if a.names == ServedNames::Prefixed {
        spec.prefix_names();
    }
    let replay = Replay::with_control(spec, control);
    match &a.listen {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| BadInput(format!("replay --listen {addr}: cannot listen: {e}")))?;
            replay::serve_http(replay, listener).await?
        }
        None => replay::serve_stdio(replay).await?,
    }
    Ok(ExitCode::PASS)
}

/// Testing hooks (feature `fault-injection`, env `EVALGATE_REPLAY_FAULT`): a replay server that
/// dies as it starts (`exit-on-start=SERVER`: an upstream that never comes up), or one that takes
/// SECS seconds before it speaks (`slow-start=SERVER:SECS`: a slowly warming index).
#[cfg(feature = "fault-injection")]
async fn replay_fault(served: &str) {
    let Ok(f) = std::env::var("EVALGATE_REPLAY_FAULT") else {
        return;
    };
    if f.strip_prefix("exit-on-start=") == Some(served) {
        crate::errln!("evalgate replay: injected fault: server {served:?} exits on start");
        std::process::exit(1);
    }
    if let Some((server, secs)) = f
        .strip_prefix("slow-start=")
        .and_then(|r| r.split_once(':'))
        && server == served
        && let Ok(secs) = secs.parse::<f64>()
        && crate::config::seconds("slow-start", secs).is_ok()
    {
        crate::errln!("evalgate replay: injected fault: server {server:?} starts after {secs} s");
        tokio::time::sleep(std::time::Duration::from_secs_f64(secs)).await;
    }
}

/// Without the feature `fault-injection`, `EVALGATE_REPLAY_FAULT` is ignored.
#[cfg(not(feature = "fault-injection"))]
async fn replay_fault(_served: &str) {}

/// `proxy`: serves until killed.
pub async fn cmd_proxy(a: &ProxyArgs) -> anyhow::Result<i32> {
    proxy::run(&a.config, &a.listen, a.fault.to_owned())
        .await
        .map_err(super::bad_input)?;
    Ok(ExitCode::PASS)
}
