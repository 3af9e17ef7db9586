//! What a launch serves and how the proxy is told of it: the replay upstreams (one corpus file
//! per server), the scratch mcpproxy config, a free port and a fresh API key.

use crate::infra::secrets::register;
use crate::pipeline::dataset::{Corpus, corpus_json};
use crate::pipeline::replay::ServedNames;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

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
    register(&key);
    key
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
        std::fs::write(&p, corpus_json(&part))?;
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
/// replay), explicit `quarantined: false`, no response truncation, no socket, no telemetry, no
/// periodic tool-discovery sweep.
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
        // no periodic re-listing of every upstream (mcpproxy's default is every 5 min): a sweep
        // in the middle of a rug-pull play re-applies the changed definitions a second time,
        // and a second pass changes mcpproxy's verdict on some changes
        "tool_discovery_interval": "0s",
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
            let p = p.display().to_string();
            let mut args = vec!["replay", "--corpus", &p, "--server", s];
            if names == ServedNames::Prefixed {
                args.extend(["--names", "prefixed"]);
            }
            (s.clone(), args.into_iter().map(String::from).collect())
        })
        .collect()
}
