//! What a launch is given: `[sut.launch]` and `[sut.catalog]` as evalgate.toml writes them,
//! and [`LaunchSpec`], everything one launch reads, resolved once by `config` (the launch
//! never sees the rest of the settings).

use crate::pipeline::replay::ServedNames;
use crate::pipeline::sut::kind::SutKind;
use crate::pipeline::sut::launch::writers::ConfigFormat;
use crate::pipeline::sut::mapping::IdStyle;
use crate::pipeline::sut::spec::McpFile;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// `[sut.catalog]`: the catalog guarantee checked before any number.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    /// `auto` (default), `mcpproxy`, `tools-list` or `search`.
    pub check: Option<super::catalog::CatalogCheck>,
    /// For `tools-list`: jq filter from the listed tools (an array) to `server:tool` ids.
    pub filter: Option<String>,
    pub id_style: Option<IdStyle>,
    /// Measure even when some corpus tools never appear (the coverage is then printed in
    /// every report). Default false: an incomplete catalog is exit 3.
    #[serde(default)]
    pub allow_partial: bool,
    /// For `search`: how many words of a tool's description follow its name in its probe
    /// query [default: 24].
    pub probe_words: Option<u32>,
    /// For `search`: the longest probe query sent, in characters (cut at a word boundary) [default:
    /// no limit], for systems that refuse long queries.
    pub probe_max_chars: Option<u32>,
}

/// `[sut.launch]`: a launched proxy, whatever its config language.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchFile {
    /// Command and arguments; placeholders `{config}`, `{data_dir}`, `{home}`, `{workdir}`,
    /// `{port}`, `{listen}`, `{url}`, `{api_key}`, `{servers_json}` are filled in (also in
    /// `env` values and `cwd`).
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory of the proxy (default: the scratch directory, `{workdir}`).
    pub cwd: Option<String>,
    /// `mcpproxy` (default), `mcp-servers`, `servers`, `template` or `none`.
    pub config_format: Option<ConfigFormat>,
    /// File name of `{config}` inside the scratch directory.
    pub config_name: Option<String>,
    /// minijinja template for `config_format = "template"` (relative to evalgate.toml).
    pub template: Option<PathBuf>,
    /// Commands run, in order, before the proxy starts; one that mentions `{server}` runs once
    /// per served server (`{server_command}`, and `{server_args}` as a whole argument expands
    /// to the server's arguments).
    #[serde(default)]
    pub setup: Vec<Vec<String>>,
    /// `http` (default: the proxy listens, searched at `url`) or `stdio` (the command itself
    /// speaks MCP on stdin/stdout).
    pub transport: Option<LaunchTransport>,
    /// MCP endpoint of an `http` proxy [default: `http://{listen}/mcp`].
    pub url: Option<String>,
    /// Headers sent to an `http` proxy (placeholders filled).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Seconds to wait for the catalog to match the corpus.
    pub ready_timeout: Option<f64>,
    /// How the replayed servers name their tools: `bare` (default, the corpus names) or
    /// `prefixed` (`<server>__<tool>`, for proxies that need tool names unique across servers;
    /// read back by the `__` id style).
    pub served_names: Option<ServedNames>,
    /// Keys merged into the top level of every generated proxy config (e.g.
    /// `on_tool_drift = "log"` for the reference proxy's observe mode).
    #[serde(default)]
    pub proxy_config: serde_json::Map<String, serde_json::Value>,
    /// Keys merged into every server entry of a generated config (`mcpproxy`, `mcp-servers`,
    /// `servers`), e.g. `transport = "stdio"`; in string values `{server}` is the server's name
    /// and `{server_command}` its command line.
    #[serde(default)]
    pub server_fields: serde_json::Map<String, serde_json::Value>,
    /// How the replayed corpus servers are served to the proxy: `stdio` (default: the proxy
    /// starts each as a command) or `http` (evalgate starts each on its own loopback port and
    /// the config names its URL, `http://127.0.0.1:PORT/mcp`).
    pub upstream_transport: Option<LaunchTransport>,
}

/// How evalgate talks to a launched proxy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaunchTransport {
    #[default]
    Http,
    Stdio,
}

/// How a system's catalog is established before any number is taken: `[sut.catalog]`, how
/// long to wait for it, and how requests are sent meanwhile.
#[derive(Debug, Clone)]
pub struct CatalogSpec {
    pub catalog: CatalogFile,
    /// `[sut] results`: how many results each probe search asks for.
    pub results: usize,
    /// `[sut.launch] ready_timeout` [default: [`super::READY_TIMEOUT`], for a launch plus one
    /// second per served server].
    pub ready_timeout: Option<Duration>,
    /// Per-request time limit.
    pub request_timeout: Duration,
    /// Requests sent at once.
    pub concurrency: usize,
    pub quiet: bool,
}

/// One proxy evalgate starts itself: the system under test of a launched kind, or the proxy
/// the live detectors play against.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// `mcpproxy`, `reference` or `launch`.
    pub kind: SutKind,
    /// `[sut] name`, the name in reports [default: the proxy's].
    pub name: Option<String>,
    /// The binary of kind `mcpproxy`.
    pub mcpproxy_bin: Option<PathBuf>,
    /// `[sut.launch]` (read by kind `launch`; `served_names` by every kind).
    pub launch: LaunchFile,
    /// `[sut.mcp]`: how a `launch` proxy is searched.
    pub mcp: McpFile,
    pub check: CatalogSpec,
}

/// Only tests build a spec from defaults; `config` resolves every field.
#[cfg(test)]
impl Default for CatalogSpec {
    fn default() -> Self {
        CatalogSpec {
            catalog: CatalogFile::default(),
            results: crate::pipeline::sut::DEPTH + crate::pipeline::sut::HEADROOM,
            ready_timeout: None,
            request_timeout: Duration::from_secs(30),
            concurrency: 4,
            quiet: false,
        }
    }
}
