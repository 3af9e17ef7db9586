//! The flags of the commands that do not evaluate: `corpus snapshot`, `replay`, `proxy`,
//! `baseline import`, `card`.

use super::DatasetArgs;
use crate::pipeline::replay::{RugPull, ServedNames};
use crate::tools::proxy::Fault;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Name of the server in the corpus (the `server` part of `server:tool`).
    #[arg(long)]
    pub server: String,
    /// Streamable-HTTP endpoint of the server (instead of a command).
    #[arg(long, conflicts_with = "command")]
    pub url: Option<String>,
    /// HTTP header `Name:Value` (repeatable; values are never written to the corpus).
    #[arg(long = "header", value_name = "K:V", requires = "url")]
    pub headers: Vec<String>,
    /// Environment variable `K=V` for the server command (repeatable).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Corpus file to write [default: print to stdout].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Add this server to the existing --out corpus (replacing its earlier tools).
    #[arg(long, requires = "out")]
    pub merge: bool,
    /// `version` of a new corpus file.
    #[arg(long, default_value = "corpus_snapshot")]
    pub corpus_version: String,
    /// Timestamp recorded as `taken` [default: now, RFC 3339 UTC]; fix it for reproducible files.
    #[arg(long, env = "EVALGATE_TAKEN")]
    pub taken: Option<String>,
    /// Registry the server was installed from (npm, pypi...), recorded with the server.
    #[arg(long)]
    pub registry: Option<String>,
    /// Package name, recorded with the server.
    #[arg(long)]
    pub package: Option<String>,
    /// Exact package version, recorded with the server.
    #[arg(long)]
    pub package_version: Option<String>,
    /// Package licence (SPDX id), recorded with the server.
    #[arg(long)]
    pub license: Option<String>,
    /// Time limit for initialize + listing, in seconds.
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// The server command and its arguments (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Corpus to serve from [default: the embedded v1 corpus].
    #[arg(long, env = "EVALGATE_CORPUS", value_name = "FILE")]
    pub corpus: Option<PathBuf>,
    /// Also serve the security entries whose `server` is --server (their `before` definitions).
    #[arg(long = "security-corpus", value_name = "FILE")]
    pub security: Option<PathBuf>,
    /// Which server's tools to serve (required unless --spec names it).
    #[arg(long, required_unless_present = "spec")]
    pub server: Option<String>,
    /// Serve exactly this replay file instead (`{server, tools, changes}`, MCP tool definitions;
    /// written by evalgate when it plays security entries through a proxy).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["corpus", "security"])]
    pub spec: Option<PathBuf>,
    /// Switch tools to their `after` definitions and send list_changed.
    #[arg(long, value_enum, default_value = "off")]
    pub rug_pull: RugPull,
    /// Tool names as served: `bare` (the corpus names) or `prefixed` (`<server>__<tool>`).
    #[arg(long, value_enum, default_value = "bare")]
    pub names: ServedNames,
    /// Switch by file: while FILE holds `after` the `after` definitions are served, otherwise the
    /// first ones; every change of state sends list_changed (checked every 50 ms).
    #[arg(long, value_name = "FILE")]
    pub switch_file: Option<PathBuf>,
    /// After answering each tools/list, write to FILE which definitions it served (`before` or
    /// `after`, first line) and how many listings it has answered (second line), so a caller can
    /// tell when the client has re-listed.
    #[arg(long, value_name = "FILE")]
    pub listed_file: Option<PathBuf>,
    /// Serve over Streamable HTTP at `http://ADDR/mcp` instead of stdin/stdout (for proxies
    /// that take their upstreams only as URLs), e.g. `127.0.0.1:9001`.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["switch_file", "rug_pull"])]
    pub listen: Option<String>,
}

#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// mcpproxy-format JSON config (`mcpServers` array of stdio servers, `api_key`,
    /// `tools_limit`); not an evalgate.toml.
    #[arg(long = "mcpproxy-config", alias = "config", value_name = "FILE")]
    pub config: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    // an argument only in test builds (feature `fault-injection`); otherwise the fault is none
    /// Testing hook: crash-after=N, hang-after=N or garbage-after=N searches, drop-tool=SERVER:TOOL, ignore-list-changed, ignore-limit, slow=MS.
    #[cfg_attr(
        feature = "fault-injection",
        arg(
            long,
            hide = true,
            env = "EVALGATE_PROXY_FAULT",
            default_value = "none"
        )
    )]
    #[cfg_attr(not(feature = "fault-injection"), arg(skip))]
    pub fault: Fault,
}

#[derive(Debug, Args)]
pub struct BaselineImportArgs {
    /// The baseline to import.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where to write evalgate's baseline.
    #[arg(long, value_name = "FILE", default_value = "baselines/default.json")]
    pub output: PathBuf,
    /// Print the result instead of writing it.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CardArgs {
    #[command(flatten)]
    pub datasets: DatasetArgs,
    /// Replace the generated block (between the `evalgate card` markers) of this Markdown file.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "check",
        help_heading = "Card"
    )]
    pub update: Option<PathBuf>,
    /// Exit 1 when this Markdown file's generated block differs from the card (for CI).
    #[arg(long, value_name = "FILE", help_heading = "Card")]
    pub check: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    #[cfg(feature = "fault-injection")]
    #[test]
    fn with_the_feature_proxy_has_a_hidden_fault_argument_read_from_the_environment() {
        use clap::{Args, Command};
        let cmd = super::ProxyArgs::augment_args(Command::new("proxy"));
        let args: Vec<_> = cmd
            .get_arguments()
            .filter(|a| a.get_id() == "fault")
            .collect();
        assert_eq!(args.len(), 1);
        assert_eq!(args[0].get_long(), Some("fault"));
        assert!(args[0].is_hide_set());
        assert_eq!(
            args[0].get_env(),
            Some(std::ffi::OsStr::new("EVALGATE_PROXY_FAULT"))
        );
    }

    #[cfg(not(feature = "fault-injection"))]
    #[test]
    fn without_the_feature_proxy_has_no_fault_argument() {
        use clap::{Args, Command};
        let cmd = super::ProxyArgs::augment_args(Command::new("proxy"));
        assert!(cmd.get_arguments().all(|a| a.get_id() != "fault"));
    }
}
