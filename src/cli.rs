//! Command-line interface (clap). Thin: parses, then hands over to `app`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Exit codes:
  0  pass (or no baseline: report only)
  1  the gate failed: a gated metric regressed beyond its tolerance, or a detector broke its
     FPR ceiling or recall floor
  2  bad input or usage: invalid dataset, baseline or flag (nothing is written)
  3  the system under test could not be measured (a partial report is written)

Examples:
  evalgate run                        zero-config: embedded datasets, BM25 retriever, reference detectors
  evalgate run --runs 5 --out out/    five repetitions, mean ± 95% CI
  evalgate validate --corpus c.json --golden g.json --security-corpus s.json
  evalgate baseline update            re-measure and rewrite baselines/default.json (prints every change)";

/// evalgate: a CI gate for MCP tool discovery and security detectors.
///
/// Sends every labeled query through a tool-search system and scores the ranking (Recall@k, MRR,
/// nDCG@10, MAP); runs security detectors over a labeled corpus of malicious and benign tool
/// definitions (precision, recall, F1, FPR); compares both with a committed baseline and exits
/// with a verdict.
#[derive(Debug, Parser)]
#[command(name = "evalgate", version, after_help = AFTER_HELP, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Score tool discovery and security detectors, gate against the baseline, write reports.
    Run(EvalArgs),
    /// Score tool discovery only.
    Retrieval(EvalArgs),
    /// Score security detectors only.
    Security(EvalArgs),
    /// Check dataset files (all problems at once, with file:line:column) without running anything.
    Validate(DatasetArgs),
    /// Print the dataset card: composition tables computed from the dataset files (Markdown).
    ///
    /// evalgate card                                   # the embedded datasets
    /// evalgate card --datasets datasets/v0
    /// evalgate card --update datasets/README.md       # rewrite the generated block in place
    Card(CardArgs),
    /// Create or refresh a baseline from a run (prints every change it makes).
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Post a report to GitHub: sticky PR comment, check run, job summary, outputs (run does this
    /// by itself inside GitHub Actions).
    Publish(PublishCmdArgs),
    /// Work with tool corpora: take a snapshot of real MCP servers.
    #[command(subcommand)]
    Corpus(CorpusCommand),
    /// Serve one server's frozen tools as a stdio MCP server (for proxies under test).
    Replay(ReplayArgs),
    /// Run the reference tool-search proxy (mcpproxy's config format and HTTP surface, BM25 search).
    Proxy(ProxyArgs),
    /// Write the JSON Schemas of evalgate's files (datasets, baseline, report).
    Schema {
        /// Directory to write the schemas into.
        #[arg(long, default_value = "schemas")]
        out: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum CorpusCommand {
    /// Connect to an MCP server, list every tool (all pages) and write a corpus file.
    ///
    /// stdio:  evalgate corpus snapshot --server time --out corpus.json -- uvx mcp-server-time
    /// HTTP:   evalgate corpus snapshot --server docs --url http://127.0.0.1:8000/mcp --header "Authorization:Bearer T"
    /// Repeat with --merge to build a corpus of several servers.
    Snapshot(SnapshotArgs),
}

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
    pub rug_pull: crate::replay::RugPull,
    /// Tool names as served: `bare` (the corpus names) or `prefixed` (`<server>__<tool>`).
    #[arg(long, value_enum, default_value = "bare")]
    pub names: crate::replay::ServedNames,
    /// Switch by file: while FILE holds `after` the `after` definitions are served, otherwise the
    /// first ones; every change of state sends list_changed (checked every 50 ms).
    #[arg(long, value_name = "FILE")]
    pub switch_file: Option<PathBuf>,
    /// After answering each tools/list, write which definitions it served (`before`/`after`)
    /// to FILE, so a caller can tell when the client has re-listed.
    #[arg(long, value_name = "FILE")]
    pub listed_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// mcpproxy-format JSON config (`mcpServers` array of stdio servers, `api_key`, `tools_limit`).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Testing hook: crash-after=N, hang-after=N or garbage-after=N searches, drop-tool=SERVER:TOOL, ignore-list-changed, ignore-limit, slow=MS.
    #[arg(
        long,
        hide = true,
        env = "EVALGATE_PROXY_FAULT",
        default_value = "none"
    )]
    pub fault: crate::proxy::Fault,
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Measure (or read a report) and write the baseline file. Thresholds already in the file
    /// (tolerances, gated flags, FPR ceilings, recall floors) are kept; values are replaced.
    Update(Box<BaselineUpdateArgs>),
    /// Rewrite another tool's baseline in evalgate's format (mcp-eval's, as mcpproxy commits
    /// it: `recall_at`, `mrr`, `tolerance`, `security.per_detector`). `run --baseline` also
    /// reads that format directly.
    ///
    /// Example: evalgate baseline import baseline_v1.json --output baselines/default.json
    Import(BaselineImportArgs),
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

#[derive(Debug, Args)]
pub struct BaselineUpdateArgs {
    #[command(flatten)]
    pub eval: EvalArgs,
    /// Build the baseline from an existing report.json instead of measuring.
    #[arg(long, value_name = "REPORT")]
    pub from: Option<PathBuf>,
    /// Baseline file to write [default: --baseline, else baselines/default.json].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Show what would change without writing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CardArgs {
    #[command(flatten)]
    pub datasets: DatasetArgs,
    /// Replace the generated block (between the `evalgate card` markers) of this Markdown file.
    #[arg(long, value_name = "FILE", conflicts_with = "check")]
    pub update: Option<PathBuf>,
    /// Exit 1 when this Markdown file's generated block differs from the card (for CI).
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct DatasetArgs {
    /// Dataset directory with corpus.json, golden.json and security.json, e.g. datasets/v0
    /// [default: the embedded v1 datasets]. A file flag below wins for its own file.
    #[arg(long = "datasets", env = "EVALGATE_DATASETS", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Tool corpus file {version, tools[...]} [default: the embedded v1 corpus].
    #[arg(long, env = "EVALGATE_CORPUS", value_name = "FILE")]
    pub corpus: Option<PathBuf>,
    /// Retrieval golden set {corpus_version, queries[...]} [default: embedded].
    #[arg(long, env = "EVALGATE_GOLDEN", value_name = "FILE")]
    pub golden: Option<PathBuf>,
    /// Security corpus {version, entries[...]} [default: embedded].
    #[arg(
        long = "security-corpus",
        env = "EVALGATE_SECURITY_CORPUS",
        value_name = "FILE"
    )]
    pub security: Option<PathBuf>,
    /// How strictly the files are held to evalgate's authoring rules: `lenient` (authoring
    /// rules are warnings, integrity rules errors) or `strict` (all errors, as for the shipped
    /// datasets) [default: lenient, or [datasets] profile in evalgate.toml].
    #[arg(long, env = "EVALGATE_PROFILE", value_enum, value_name = "PROFILE")]
    pub profile: Option<crate::dataset::Profile>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SutKind {
    /// In-process BM25 (tantivy) over the corpus.
    Embedded,
    /// Replay ranked ids from --recorded (a report.json or {query id: [ids]}).
    Recorded,
    /// A running proxy's search tool over MCP (--url, or [sut.mcp] in evalgate.toml).
    Mcp,
    /// A REST search endpoint (--url, or [sut.rest]); e.g. mcpproxy's /api/v1/index/search.
    Rest,
    /// Launch mcpproxy (--mcpproxy-bin) over replayed corpus servers and search via retrieve_tools.
    Mcpproxy,
    /// Launch evalgate's reference proxy the same way (no binary needed).
    Reference,
    /// Launch any proxy ([sut.launch] in evalgate.toml: command, config format, transport).
    Launch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DetectorKind {
    /// Reference rules: hidden tags, secret exfiltration, secrecy, shadowing, injection phrases, hidden Unicode, encoded payloads.
    Rules,
    /// Canonical-JSON fingerprint drift of before/after definitions (rug-pulls).
    Drift,
    /// Replay verdicts from --recorded (a report.json, a spec-065 scan-eval file or {entry id: bool}).
    Recorded,
    /// The external scanners configured as [[scanner]] tables in evalgate.toml.
    Scanner,
    /// The launched proxy's own security scan (POST /api/v1/servers/{name}/scan) over the entries served as tools.
    #[serde(alias = "proxy-scan")]
    ProxyScan,
    /// Rug-pulls played live against the launched proxy: reported, blocked, restored after a revert.
    #[serde(alias = "rug-pull-live")]
    RugPullLive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Args)]
pub struct EvalArgs {
    /// Settings file [default: ./evalgate.toml when present]. Flags and EVALGATE_* variables win over it.
    #[arg(long, env = "EVALGATE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub datasets: DatasetArgs,
    /// The search system under test [default: embedded; mcpproxy when --mcpproxy-bin is given].
    #[arg(
        long = "sut",
        visible_alias = "retriever",
        env = "EVALGATE_SUT",
        value_enum
    )]
    pub sut: Option<SutKind>,
    /// mcpproxy binary to launch (implies --sut mcpproxy).
    #[arg(long, env = "EVALGATE_MCPPROXY_BIN", value_name = "PATH")]
    pub mcpproxy_bin: Option<PathBuf>,
    /// Endpoint of a running system for --sut mcp (streamable-HTTP URL) or --sut rest (search URL).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// HTTP header `Name:Value` sent to --url (repeatable).
    #[arg(long = "header", value_name = "K:V")]
    pub headers: Vec<String>,
    /// Detectors under test, comma-separated [default: rules,drift].
    #[arg(long, env = "EVALGATE_DETECTORS", value_enum, value_delimiter = ',')]
    pub detectors: Option<Vec<DetectorKind>>,
    /// Recorded observations for the `recorded` system or detector.
    #[arg(long, env = "EVALGATE_RECORDED", value_name = "FILE")]
    pub recorded: Option<PathBuf>,
    /// Repeat every measurement N times; report mean ± 95% CI [default: 1].
    #[arg(long, env = "EVALGATE_RUNS")]
    pub runs: Option<u32>,
    /// Baseline to gate against [default: baselines/default.json if present, else the embedded
    /// one when the embedded datasets are used].
    #[arg(
        long,
        env = "EVALGATE_BASELINE",
        value_name = "FILE",
        conflicts_with = "no_baseline"
    )]
    pub baseline: Option<PathBuf>,
    /// Report only: do not compare with any baseline.
    #[arg(long)]
    pub no_baseline: bool,
    /// Directory for report.json, report.md and report.html [default: evalgate-report].
    #[arg(long, env = "EVALGATE_OUT", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Per-request time limit for the system under test, in seconds [default: 30].
    #[arg(long, env = "EVALGATE_TIMEOUT", value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Queries sent to the system under test at once [default: 4].
    #[arg(long, env = "EVALGATE_CONCURRENCY")]
    pub concurrency: Option<u32>,
    /// Robustness probes of the search system after the runs (empty, 10 kB, non-Latin, emoji,
    /// control-character and injection-looking queries, limits 0/1/1000, an unknown argument)
    /// [default: report].
    #[arg(long, env = "EVALGATE_ROBUSTNESS", value_enum)]
    pub robustness: Option<crate::probes::RobustnessMode>,
    /// No progress and no table on the terminal (the reports are still written).
    #[arg(long, short)]
    pub quiet: bool,
    /// Colour in the terminal table.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    #[command(flatten)]
    pub publish: PublishArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PublishWhen {
    /// Inside GitHub Actions (GITHUB_ACTIONS=true).
    Auto,
    Always,
    Never,
}

/// Publishing to GitHub (comment, check run, job summary, outputs).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "GitHub")]
pub struct PublishArgs {
    /// Publish the result on GitHub [auto: when running inside GitHub Actions].
    #[arg(long, env = "EVALGATE_PUBLISH", value_enum, default_value = "auto")]
    pub publish: PublishWhen,
    /// When to post the sticky pull-request comment.
    #[arg(
        long,
        env = "EVALGATE_COMMENT",
        value_enum,
        default_value = "on-change"
    )]
    pub comment: crate::github::CommentMode,
    /// Create a check run on the pull request's head commit.
    #[arg(long, env = "EVALGATE_CHECK_RUN", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub check_run: bool,
    /// `never`: a failed gate is reported but exits 0 (neutral check run).
    #[arg(
        long,
        env = "EVALGATE_FAIL_ON",
        value_enum,
        default_value = "regression"
    )]
    pub fail_on: crate::github::FailOn,
    /// Key of the sticky comment and check run, one per job / matrix leg [default: $GITHUB_JOB].
    #[arg(long, env = "EVALGATE_COMMENT_KEY")]
    pub comment_key: Option<String>,
    /// Name of the uploaded report artifact, for the link in the comment and summary.
    #[arg(
        long,
        env = "EVALGATE_ARTIFACT_NAME",
        default_value = "evalgate-report"
    )]
    pub artifact_name: String,
    /// Token for the GitHub API [default: $GITHUB_TOKEN].
    #[arg(long, env = "EVALGATE_GITHUB_TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,
    /// Under act, post for real instead of writing the payloads to files.
    #[arg(long, env = "EVALGATE_ACT_POST", default_value_t = false, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub act_post: bool,
    /// Connect, read and write time limit of each GitHub API request, in seconds; the whole
    /// exchange with GitHub stops after ten times as long [default: 30].
    #[arg(long, env = "EVALGATE_GITHUB_TIMEOUT", value_name = "SECONDS")]
    pub github_timeout: Option<f64>,
}

#[derive(Debug, Args)]
pub struct PublishCmdArgs {
    /// Directory holding report.json (the output of `evalgate run`).
    #[arg(long, default_value = "evalgate-report", value_name = "DIR")]
    pub report_dir: PathBuf,
    /// Pull request number (when the event is not a pull_request, e.g. in a workflow_run workflow).
    #[arg(long, requires = "head_sha")]
    pub pr: Option<u64>,
    /// The pull request's head commit.
    #[arg(long, requires = "pr")]
    pub head_sha: Option<String>,
    #[command(flatten)]
    pub publish: PublishArgs,
}
