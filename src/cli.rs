//! Command-line interface (clap). Thin: parses, then hands over to `app`.
//!
//! `run`, `retrieval`, `security` and `baseline update` are built from the small flag groups
//! below, each command from the groups that can apply to it, so a flag another command owns is
//! a usage error (exit 2) and its `EVALGATE_*` variable is not read. Whether a flag given on the
//! command line can apply to the settings as resolved (`--url` with an embedded system, say) is
//! checked after resolution, by `app`, from [`EvalArgs::given`]; an environment variable or an
//! evalgate.toml value that does not apply is ignored, never an error.

use clap::builder::PossibleValue;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// The exit codes of `run` (and the command line as a whole).
macro_rules! exit_codes {
    () => {
        "\
Exit codes:
  0  pass (or no baseline: report only)
  1  the gate failed: a gated metric regressed beyond its tolerance, or a detector broke its
     FPR ceiling or recall floor
  2  bad input or usage: invalid dataset, baseline or flag (nothing is written)
  3  the system under test could not be measured (a partial report is written)"
    };
}

const AFTER_HELP: &str = concat!(
    exit_codes!(),
    "

Examples:
  # zero-config: embedded datasets, BM25 retriever, reference detectors
  evalgate run
  # five repetitions (mean ± 95% CI), reports in out/
  evalgate run --runs 5 --out out/
  evalgate validate --corpus c.json --golden g.json --security-corpus s.json
  # re-measure and rewrite baselines/default.json (prints every change)
  evalgate baseline update
  # a command's own flags, and examples of it
  evalgate <COMMAND> --help"
);

const RUN_HELP: &str = concat!(
    "\
Examples:
  # zero-config: embedded datasets, BM25 retriever, reference detectors
  evalgate run
  # five repetitions (mean ± 95% CI), reports in out/
  evalgate run --runs 5 --out out/
  # a proxy already running, searched over MCP, against the baseline written for it
  evalgate run --sut mcp --url http://127.0.0.1:8080/mcp --baseline baselines/myproxy.json
  # mcpproxy launched over the corpus; its own scan and live rug-pulls beside the rules
  evalgate run --mcpproxy-bin ./mcpproxy --detectors rules,drift,proxy-scan,rug-pull-live

",
    exit_codes!()
);

const RETRIEVAL_HELP: &str = concat!(
    "\
Examples:
  # the embedded BM25 retriever over the embedded datasets
  evalgate retrieval
  # a proxy already running, searched over MCP
  evalgate retrieval --sut mcp --url http://127.0.0.1:8080/mcp --header \"X-API-Key: KEY\"
  # a REST search endpoint (mcpproxy's by default)
  evalgate retrieval --sut rest --url http://127.0.0.1:8080/api/v1/index/search
  # re-score the rankings an earlier run recorded, without a system
  evalgate retrieval --sut recorded --recorded evalgate-report/report.json --no-baseline

",
    "\
Exit codes:
  0  pass (or no baseline: report only)
  1  the gate failed: a gated metric regressed beyond its tolerance
  2  bad input or usage: invalid dataset, baseline or flag (nothing is written)
  3  the system under test could not be measured (a partial report is written)"
);

const SECURITY_HELP: &str = concat!(
    "\
Examples:
  # the reference rules and drift detectors over the embedded security corpus
  evalgate security
  # verdicts recorded elsewhere (a report.json, a scan-eval file or {entry id: bool})
  evalgate security --detectors recorded --recorded verdicts.json
  # a launched proxy's own scan and rug-pulls played against it (the reference proxy)
  evalgate security --sut reference --detectors proxy-scan,rug-pull-live
  # the same against mcpproxy
  evalgate security --mcpproxy-bin ./mcpproxy --detectors proxy-scan,rug-pull-live

",
    "\
Exit codes:
  0  pass (or no baseline: report only)
  1  the gate failed: a detector broke its FPR ceiling or recall floor, or regressed
  2  bad input or usage: invalid dataset, baseline or flag (nothing is written)
  3  a detector could not be run (a partial report is written)"
);

const VALIDATE_HELP: &str = "\
Examples:
  # the embedded datasets
  evalgate validate
  # a dataset directory, held to evalgate's own authoring rules
  evalgate validate --datasets datasets/v0 --profile strict
  evalgate validate --corpus c.json --golden g.json --security-corpus s.json";

const CARD_HELP: &str = "\
Examples:
  # the embedded datasets
  evalgate card
  evalgate card --datasets datasets/v0
  # rewrite the generated block in place; or fail (exit 1) when it is stale
  evalgate card --update datasets/README.md
  evalgate card --check datasets/README.md";

const BASELINE_HELP: &str = "\
Examples:
  evalgate baseline update
  evalgate baseline import baseline_v1.json --output baselines/default.json";

const BASELINE_UPDATE_HELP: &str = "\
Examples:
  # re-measure the embedded BM25 system and rewrite baselines/default.json (prints every change)
  evalgate baseline update
  # a launched mcpproxy's own baseline, from three runs
  evalgate baseline update --mcpproxy-bin bin/mcpproxy --runs 3 --output baselines/mcpproxy.json
  # from a run's report, without measuring again; show the changes, write nothing
  evalgate baseline update --from evalgate-report/report.json --dry-run";

const BASELINE_IMPORT_HELP: &str = "\
Examples:
  evalgate baseline import baseline_v1.json --output baselines/default.json
  # print the converted baseline, write nothing
  evalgate baseline import baseline_v1.json --dry-run";

const PUBLISH_HELP: &str = "\
Examples:
  # in a workflow_run workflow: post the report a pull request's run uploaded
  evalgate publish --report-dir evalgate-report --pr 42 --head-sha \"$HEAD_SHA\"
  # outside GitHub Actions too, with a comment on every run
  evalgate publish --publish always --comment always";

const CORPUS_HELP: &str = "\
Examples:
  evalgate corpus snapshot --server time --out corpus.json -- uvx mcp-server-time";

const SNAPSHOT_HELP: &str = "\
Examples:
  # a stdio server (its command after --)
  evalgate corpus snapshot --server time --out corpus.json -- uvx mcp-server-time
  # a streamable-HTTP server
  evalgate corpus snapshot --server docs --url http://127.0.0.1:8000/mcp --header \"X-API-Key: K\"
  # add another server to the same corpus
  evalgate corpus snapshot --server memory --out corpus.json --merge -- mcp-server-memory";

const REPLAY_HELP: &str = "\
Examples:
  # one server's frozen tools from the embedded corpus, over stdio
  evalgate replay --server github
  # serve its security entries too, switching to their `after` definitions after the first list
  evalgate replay --server github --security-corpus security.json --rug-pull after-list";

const PROXY_HELP: &str = "\
Examples:
  evalgate proxy --mcpproxy-config mcp_config.json --listen 127.0.0.1:8080";

const SCHEMA_HELP: &str = "\
Examples:
  evalgate schema --out schemas";

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
    #[command(after_help = RUN_HELP)]
    Run(Box<RunArgs>),
    /// Score tool discovery only.
    #[command(after_help = RETRIEVAL_HELP)]
    Retrieval(Box<RetrievalArgs>),
    /// Score security detectors only.
    #[command(after_help = SECURITY_HELP)]
    Security(Box<SecurityArgs>),
    /// Check dataset files (all problems at once, with file:line:column) without running anything.
    #[command(after_help = VALIDATE_HELP)]
    Validate(DatasetArgs),
    /// Print the dataset card: composition tables computed from the dataset files (Markdown).
    #[command(after_help = CARD_HELP)]
    Card(CardArgs),
    /// Create or refresh a baseline from a run (prints every change it makes).
    #[command(subcommand, after_help = BASELINE_HELP)]
    Baseline(BaselineCommand),
    /// Post a report to GitHub: sticky PR comment, check run, job summary, outputs (run does this
    /// by itself inside GitHub Actions).
    #[command(after_help = PUBLISH_HELP)]
    Publish(PublishCmdArgs),
    /// Work with tool corpora: take a snapshot of real MCP servers.
    #[command(subcommand, after_help = CORPUS_HELP)]
    Corpus(CorpusCommand),
    /// Serve one server's frozen tools as a stdio MCP server (for proxies under test).
    #[command(after_help = REPLAY_HELP)]
    Replay(ReplayArgs),
    /// Run the reference tool-search proxy (mcpproxy's config format and HTTP surface, BM25 search).
    #[command(after_help = PROXY_HELP)]
    Proxy(ProxyArgs),
    /// Write the JSON Schemas of evalgate's files (datasets, baseline, report).
    #[command(after_help = SCHEMA_HELP)]
    Schema {
        /// Directory to write the schemas into.
        #[arg(long, default_value = "schemas")]
        out: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum CorpusCommand {
    /// Connect to an MCP server, list every tool (all pages) and write a corpus file; repeat
    /// with --merge to build a corpus of several servers.
    #[command(after_help = SNAPSHOT_HELP)]
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
    /// mcpproxy-format JSON config (`mcpServers` array of stdio servers, `api_key`,
    /// `tools_limit`); not an evalgate.toml.
    #[arg(long = "mcpproxy-config", alias = "config", value_name = "FILE")]
    pub config: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Test builds only (feature `fault-injection`): the hidden `--fault` hook.
    #[command(flatten)]
    pub fault: crate::proxy::fault::FaultArg,
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Measure (or read a report) and write the baseline file. Thresholds already in the file
    /// (tolerances, gated flags, FPR ceilings, recall floors) are kept; values are replaced.
    #[command(after_help = BASELINE_UPDATE_HELP)]
    Update(Box<BaselineUpdateArgs>),
    /// Rewrite another tool's baseline in evalgate's format (mcp-eval's, as mcpproxy commits
    /// it: `recall_at`, `mrr`, `tolerance`, `security.per_detector`). `run --baseline` also
    /// reads that format directly.
    #[command(after_help = BASELINE_IMPORT_HELP)]
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

// ---- dataset flags ------------------------------------------------------------------------

/// `--datasets DIR`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Datasets")]
pub struct DirFlag {
    /// Dataset directory with corpus.json, golden.json and security.json, e.g. datasets/v0
    /// [default: the embedded v1 datasets]. A file flag below wins for its own file.
    #[arg(long = "datasets", env = "EVALGATE_DATASETS", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The files tool discovery is scored on.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Datasets")]
pub struct RetrievalFiles {
    /// Tool corpus file {version, tools[...]} [default: the embedded v1 corpus].
    #[arg(long, env = "EVALGATE_CORPUS", value_name = "FILE")]
    pub corpus: Option<PathBuf>,
    /// Retrieval golden set {corpus_version, queries[...]} [default: embedded].
    #[arg(long, env = "EVALGATE_GOLDEN", value_name = "FILE")]
    pub golden: Option<PathBuf>,
}

/// The file detectors are scored on.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Datasets")]
pub struct SecurityFile {
    /// Security corpus {version, entries[...]} [default: embedded].
    #[arg(
        long = "security-corpus",
        env = "EVALGATE_SECURITY_CORPUS",
        value_name = "FILE"
    )]
    pub security: Option<PathBuf>,
}

/// `--profile`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Datasets")]
pub struct ProfileFlag {
    /// How strictly the files are held to evalgate's authoring rules: `lenient` (authoring
    /// rules are warnings, integrity rules errors) or `strict` (all errors, as for the shipped
    /// datasets) [default: lenient, or [datasets] profile in evalgate.toml].
    #[arg(long, env = "EVALGATE_PROFILE", value_enum, value_name = "PROFILE")]
    pub profile: Option<crate::dataset::Profile>,
}

/// All three dataset files (`validate`, `card`, `run`, `baseline update`).
#[derive(Debug, Clone, Default, Args)]
pub struct DatasetArgs {
    #[command(flatten)]
    pub dir: DirFlag,
    #[command(flatten)]
    pub retrieval: RetrievalFiles,
    #[command(flatten)]
    pub security: SecurityFile,
    #[command(flatten)]
    pub profile: ProfileFlag,
}

// ---- systems and detectors -----------------------------------------------------------------

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

impl SutKind {
    /// A proxy evalgate starts itself (the only kinds the live detectors can play against).
    pub fn launched(self) -> bool {
        matches!(
            self,
            SutKind::Mcpproxy | SutKind::Reference | SutKind::Launch
        )
    }

    /// The kind as written on the command line and in evalgate.toml.
    pub fn name(self) -> String {
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }
}

/// `security --sut`: every kind parses (so `EVALGATE_SUT=mcp`, set for the job's other runs,
/// does not break `security`), but help lists only the launched proxies, the kinds that can
/// apply; one of the others given on the command line is refused after parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyKind(pub SutKind);

impl ValueEnum for ProxyKind {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            ProxyKind(SutKind::Reference),
            ProxyKind(SutKind::Mcpproxy),
            ProxyKind(SutKind::Launch),
            ProxyKind(SutKind::Embedded),
            ProxyKind(SutKind::Recorded),
            ProxyKind(SutKind::Mcp),
            ProxyKind(SutKind::Rest),
        ]
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        let v = match self.0 {
            SutKind::Reference => PossibleValue::new("reference")
                .help("evalgate's reference proxy (no binary needed)"),
            SutKind::Mcpproxy => PossibleValue::new("mcpproxy").help("mcpproxy (--mcpproxy-bin)"),
            SutKind::Launch => PossibleValue::new("launch")
                .help("any proxy, as [sut.launch] in evalgate.toml describes it"),
            other => other.to_possible_value()?.hide(true),
        };
        Some(v)
    }
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

impl DetectorKind {
    /// Plays against a launched proxy (which `--sut` / `--mcpproxy-bin` choose).
    pub fn live(self) -> bool {
        matches!(self, DetectorKind::ProxyScan | DetectorKind::RugPullLive)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// The search system under test (`run`, `retrieval`, `baseline update`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "System under test")]
pub struct SystemFlags {
    /// The search system under test [default: embedded; mcpproxy when --mcpproxy-bin is given].
    #[arg(long = "sut", alias = "retriever", env = "EVALGATE_SUT", value_enum)]
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
    /// Queries sent to the system under test at once [default: 4].
    #[arg(long, env = "EVALGATE_CONCURRENCY")]
    pub concurrency: Option<u32>,
}

/// `--robustness` (`run`, `retrieval`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "System under test")]
pub struct RobustnessFlag {
    /// Robustness probes of the search system after the runs (empty, 10 kB, non-Latin, emoji,
    /// control-character and injection-looking queries, limits 0/1/1000, an unknown argument)
    /// [default: report].
    #[arg(long, env = "EVALGATE_ROBUSTNESS", value_enum)]
    pub robustness: Option<crate::probes::RobustnessMode>,
}

/// The proxy the live detectors play against (`security`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Proxy for proxy-scan and rug-pull-live")]
pub struct ProxyFlags {
    /// The proxy launched for the proxy-scan and rug-pull-live detectors [default: reference;
    /// mcpproxy when --mcpproxy-bin is given].
    #[arg(long = "sut", env = "EVALGATE_SUT", value_enum, value_name = "PROXY")]
    pub sut: Option<ProxyKind>,
    /// mcpproxy binary to launch (implies --sut mcpproxy).
    #[arg(long, env = "EVALGATE_MCPPROXY_BIN", value_name = "PATH")]
    pub mcpproxy_bin: Option<PathBuf>,
}

/// `--detectors` (`run`, `security`, `baseline update`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Detectors")]
pub struct DetectorFlag {
    /// Detectors under test, comma-separated [default: rules,drift].
    #[arg(long, env = "EVALGATE_DETECTORS", value_enum, value_delimiter = ',')]
    pub detectors: Option<Vec<DetectorKind>>,
}

/// How the measurement is taken.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Measurement")]
pub struct MeasureFlags {
    /// Recorded observations for the `recorded` system or detector.
    #[arg(long, env = "EVALGATE_RECORDED", value_name = "FILE")]
    pub recorded: Option<PathBuf>,
    /// Repeat every measurement N times; report mean ± 95% CI [default: 1].
    #[arg(long, env = "EVALGATE_RUNS")]
    pub runs: Option<u32>,
    /// Per-request time limit for the system under test, in seconds [default: 30].
    #[arg(long, env = "EVALGATE_TIMEOUT", value_name = "SECONDS")]
    pub timeout: Option<f64>,
}

/// The baseline a run is gated against.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Gate")]
pub struct GateFlags {
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
}

/// Where the reports go and how the terminal shows them.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Output")]
pub struct ReportFlags {
    /// Directory for report.json, report.md and report.html [default: evalgate-report].
    #[arg(long, env = "EVALGATE_OUT", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Colour in the terminal table.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
}

/// `-q`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Output")]
pub struct QuietFlag {
    /// No progress and no tables. Silent when the gate holds; otherwise one line per failed
    /// check and the verdict, or why the system under test could not be measured (on stderr;
    /// the reports are still written).
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--config`.
#[derive(Debug, Clone, Default, Args)]
pub struct ConfigFlag {
    /// Settings file [default: ./evalgate.toml when present]. Flags and EVALGATE_* variables win
    /// over it; its settings a command has no use for are ignored.
    #[arg(long, env = "EVALGATE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

// ---- the evaluating commands ---------------------------------------------------------------

/// `run`: everything.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub config: ConfigFlag,
    #[command(flatten)]
    pub datasets: DatasetArgs,
    #[command(flatten)]
    pub system: SystemFlags,
    #[command(flatten)]
    pub robustness: RobustnessFlag,
    #[command(flatten)]
    pub detectors: DetectorFlag,
    #[command(flatten)]
    pub measure: MeasureFlags,
    #[command(flatten)]
    pub gate: GateFlags,
    #[command(flatten)]
    pub report: ReportFlags,
    #[command(flatten)]
    pub quiet: QuietFlag,
    #[command(flatten)]
    pub publish: PublishArgs,
    /// The flags given on the command line (filled by [`parse`]).
    #[arg(skip)]
    pub given: Vec<String>,
}

/// `retrieval`: no detector and no security-corpus flags.
#[derive(Debug, Clone, Args)]
pub struct RetrievalArgs {
    #[command(flatten)]
    pub config: ConfigFlag,
    #[command(flatten)]
    pub dir: DirFlag,
    #[command(flatten)]
    pub files: RetrievalFiles,
    #[command(flatten)]
    pub profile: ProfileFlag,
    #[command(flatten)]
    pub system: SystemFlags,
    #[command(flatten)]
    pub robustness: RobustnessFlag,
    #[command(flatten)]
    pub measure: MeasureFlags,
    #[command(flatten)]
    pub gate: GateFlags,
    #[command(flatten)]
    pub report: ReportFlags,
    #[command(flatten)]
    pub quiet: QuietFlag,
    #[command(flatten)]
    pub publish: PublishArgs,
    #[arg(skip)]
    pub given: Vec<String>,
}

/// `security`: no corpus, golden set or search-system flags; `--sut` and `--mcpproxy-bin` only
/// choose the proxy the live detectors launch.
#[derive(Debug, Clone, Args)]
pub struct SecurityArgs {
    #[command(flatten)]
    pub config: ConfigFlag,
    #[command(flatten)]
    pub dir: DirFlag,
    #[command(flatten)]
    pub file: SecurityFile,
    #[command(flatten)]
    pub profile: ProfileFlag,
    #[command(flatten)]
    pub detectors: DetectorFlag,
    #[command(flatten)]
    pub proxy: ProxyFlags,
    #[command(flatten)]
    pub measure: MeasureFlags,
    #[command(flatten)]
    pub gate: GateFlags,
    #[command(flatten)]
    pub report: ReportFlags,
    #[command(flatten)]
    pub quiet: QuietFlag,
    #[command(flatten)]
    pub publish: PublishArgs,
    #[arg(skip)]
    pub given: Vec<String>,
}

/// `baseline update`: measures like `run` (no report directory, no robustness probes, nothing
/// published), or reads a report with --from.
#[derive(Debug, Clone, Args)]
pub struct BaselineUpdateArgs {
    #[command(flatten)]
    pub config: ConfigFlag,
    /// Build the baseline from an existing report.json instead of measuring (no measurement
    /// flag applies then).
    #[arg(long, value_name = "REPORT", help_heading = "Baseline")]
    pub from: Option<PathBuf>,
    /// Baseline file to write [default: --baseline, else baselines/default.json].
    #[arg(long, value_name = "FILE", help_heading = "Baseline")]
    pub output: Option<PathBuf>,
    /// The baseline in use (as `run --baseline`): thresholds are kept from it, and it is the
    /// file written unless --output names another.
    #[arg(
        long,
        env = "EVALGATE_BASELINE",
        value_name = "FILE",
        help_heading = "Baseline"
    )]
    pub baseline: Option<PathBuf>,
    /// Show what would change without writing.
    #[arg(long, help_heading = "Baseline")]
    pub dry_run: bool,
    #[command(flatten)]
    pub datasets: DatasetArgs,
    #[command(flatten)]
    pub system: SystemFlags,
    #[command(flatten)]
    pub detectors: DetectorFlag,
    #[command(flatten)]
    pub measure: MeasureFlags,
    #[command(flatten)]
    pub quiet: QuietFlag,
    #[arg(skip)]
    pub given: Vec<String>,
}

/// Everything an evaluating command was given, as one set of settings for
/// [`crate::config::Settings::resolve`]; a command without a flag leaves its setting unset.
#[derive(Debug, Clone, Default)]
pub struct EvalArgs {
    pub config: Option<PathBuf>,
    pub datasets: DatasetArgs,
    pub sut: Option<SutKind>,
    pub mcpproxy_bin: Option<PathBuf>,
    pub url: Option<String>,
    pub headers: Vec<String>,
    pub detectors: Option<Vec<DetectorKind>>,
    pub recorded: Option<PathBuf>,
    pub runs: Option<u32>,
    pub baseline: Option<PathBuf>,
    pub no_baseline: bool,
    pub out: Option<PathBuf>,
    pub timeout: Option<f64>,
    pub concurrency: Option<u32>,
    pub robustness: Option<crate::probes::RobustnessMode>,
    pub quiet: bool,
    pub color: ColorChoice,
    /// The flags given on the command line (`--sut`, ...), not by a variable or a default.
    pub given: Vec<String>,
}

impl EvalArgs {
    /// Whether `flag` (`--url`) was given on the command line.
    pub fn given(&self, flag: &str) -> bool {
        self.given.iter().any(|g| g == flag)
    }

    fn with_system(mut self, s: &SystemFlags) -> EvalArgs {
        self.sut = s.sut;
        self.mcpproxy_bin = s.mcpproxy_bin.clone();
        self.url = s.url.clone();
        self.headers = s.headers.clone();
        self.concurrency = s.concurrency;
        self
    }

    fn with_measure(mut self, m: &MeasureFlags) -> EvalArgs {
        self.recorded = m.recorded.clone();
        self.runs = m.runs;
        self.timeout = m.timeout;
        self
    }

    fn with_report(mut self, g: &GateFlags, r: &ReportFlags, q: &QuietFlag) -> EvalArgs {
        self.baseline = g.baseline.clone();
        self.no_baseline = g.no_baseline;
        self.out = r.out.clone();
        self.color = r.color;
        self.quiet = q.quiet;
        self
    }
}

impl RunArgs {
    pub fn eval(&self) -> EvalArgs {
        EvalArgs {
            config: self.config.config.clone(),
            datasets: self.datasets.clone(),
            detectors: self.detectors.detectors.clone(),
            robustness: self.robustness.robustness,
            given: self.given.clone(),
            ..EvalArgs::default()
        }
        .with_system(&self.system)
        .with_measure(&self.measure)
        .with_report(&self.gate, &self.report, &self.quiet)
    }
}

impl RetrievalArgs {
    pub fn eval(&self) -> EvalArgs {
        EvalArgs {
            config: self.config.config.clone(),
            datasets: DatasetArgs {
                dir: self.dir.clone(),
                retrieval: self.files.clone(),
                security: SecurityFile::default(),
                profile: self.profile.clone(),
            },
            robustness: self.robustness.robustness,
            given: self.given.clone(),
            ..EvalArgs::default()
        }
        .with_system(&self.system)
        .with_measure(&self.measure)
        .with_report(&self.gate, &self.report, &self.quiet)
    }
}

impl SecurityArgs {
    pub fn eval(&self) -> EvalArgs {
        EvalArgs {
            config: self.config.config.clone(),
            datasets: DatasetArgs {
                dir: self.dir.clone(),
                retrieval: RetrievalFiles::default(),
                security: self.file.clone(),
                profile: self.profile.clone(),
            },
            sut: self.proxy.sut.map(|k| k.0),
            mcpproxy_bin: self.proxy.mcpproxy_bin.clone(),
            detectors: self.detectors.detectors.clone(),
            given: self.given.clone(),
            ..EvalArgs::default()
        }
        .with_measure(&self.measure)
        .with_report(&self.gate, &self.report, &self.quiet)
    }
}

impl BaselineUpdateArgs {
    pub fn eval(&self) -> EvalArgs {
        EvalArgs {
            config: self.config.config.clone(),
            datasets: self.datasets.clone(),
            detectors: self.detectors.detectors.clone(),
            baseline: self.baseline.clone(),
            // probes are not part of a baseline
            robustness: Some(crate::probes::RobustnessMode::Off),
            quiet: self.quiet.quiet,
            given: self.given.clone(),
            ..EvalArgs::default()
        }
        .with_system(&self.system)
        .with_measure(&self.measure)
    }
}

/// Parses the command line like [`Cli::try_parse_from`], and records which flags of an
/// evaluating command were given on the command line (not by a variable or a default).
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cli, clap::Error> {
    let args: Vec<OsString> = args.into_iter().collect();
    let mut cmd = Cli::command();
    let m = match cmd.try_get_matches_from_mut(args.iter().cloned()) {
        Ok(m) => m,
        Err(e) => return Err(foreign_flag(&mut cmd, &args, &e).unwrap_or(e)),
    };
    let mut cli = Cli::from_arg_matches(&m).map_err(|e| e.format(&mut cmd))?;
    match &mut cli.command {
        Command::Run(a) => a.given = given(&cmd, &m, &["run"]),
        Command::Retrieval(a) => a.given = given(&cmd, &m, &["retrieval"]),
        Command::Security(a) => a.given = given(&cmd, &m, &["security"]),
        Command::Baseline(BaselineCommand::Update(a)) => {
            a.given = given(&cmd, &m, &["baseline", "update"])
        }
        _ => {}
    }
    Ok(cli)
}

/// The evaluating commands, and what each is for (said when it is given another's flag).
const EVALUATING: [(&str, &str); 4] = [
    (
        "run",
        "it measures and reports (baseline files are written by `evalgate baseline update`)",
    ),
    ("retrieval", "it scores tool discovery only"),
    ("security", "it scores security detectors only"),
    (
        "baseline update",
        "it writes a baseline file only (no reports, nothing published)",
    ),
];

/// An evaluating command given a flag only other commands have: one plain sentence naming the
/// commands that have it, instead of clap's nearest-spelling suggestion (`--detectors` given to
/// `retrieval` is not a misspelt `--datasets`). `None` for any other error.
fn foreign_flag(
    cmd: &mut clap::Command,
    args: &[OsString],
    e: &clap::Error,
) -> Option<clap::Error> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let flag = arg.split('=').next()?.strip_prefix("--")?.to_string();
    // the command path as given: the first word naming a subcommand, then one of its own
    let mut path: Vec<String> = Vec::new();
    let mut c: &clap::Command = cmd;
    for a in args.iter().skip(1).filter_map(|a| a.to_str()) {
        if let Some(sc) = c.find_subcommand(a) {
            path.push(a.to_string());
            c = sc;
            if !c.has_subcommands() {
                break;
            }
        }
    }
    let path = path.join(" ");
    let (_, why) = EVALUATING.iter().find(|(p, _)| *p == path)?;
    let has = |p: &str| {
        let mut c: &clap::Command = cmd;
        for w in p.split(' ') {
            match c.find_subcommand(w) {
                Some(sc) => c = sc,
                None => return false,
            }
        }
        c.get_arguments()
            .any(|a| a.get_long() == Some(flag.as_str()) && !a.is_hide_set())
    };
    let owners: Vec<String> = EVALUATING
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| has(p))
        .map(|p| format!("`evalgate {p}`"))
        .collect();
    if owners.is_empty() {
        return None;
    }
    let msg = format!(
        "`evalgate {path}` has no --{flag}: {why}; --{flag} is a flag of {}",
        owners.join(", ")
    );
    let mut sub: &mut clap::Command = cmd;
    for w in path.split(' ') {
        sub = sub.find_subcommand_mut(w)?;
    }
    Some(sub.error(ErrorKind::UnknownArgument, msg))
}

/// The long names (`--sut`) of the flags of subcommand `path` given on the command line.
fn given(cmd: &clap::Command, m: &ArgMatches, path: &[&str]) -> Vec<String> {
    let (mut c, mut m) = (cmd, m);
    for name in path {
        match (c.find_subcommand(name), m.subcommand_matches(name)) {
            (Some(sc), Some(sm)) => (c, m) = (sc, sm),
            _ => return Vec::new(),
        }
    }
    c.get_arguments()
        .filter(|a| m.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine))
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

pub use crate::github::PublishWhen;

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
