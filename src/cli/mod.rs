//! Command-line interface (clap). Thin: parses, then hands over to `app`.
//!
//! `run`, `retrieval`, `security` and `baseline update` are built from the small flag groups
//! below, each command from the groups that can apply to it, so a flag another command owns is
//! a usage error (exit 2) and its `EVALGATE_*` variable is not read. Whether a flag given on the
//! command line can apply to the settings as resolved (`--url` with an embedded system, say) is
//! checked after resolution, by `app`, from [`EvalArgs::given`]; an environment variable or an
//! evalgate.toml value that does not apply is ignored, never an error.

mod eval;
mod help;
mod publish;
mod tools;
mod values;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use help::*;
use std::ffi::OsString;
use std::path::PathBuf;

pub use eval::*;
pub use publish::{PublishArgs, PublishCmdArgs};
pub use tools::{BaselineImportArgs, CardArgs, ProxyArgs, ReplayArgs, SnapshotArgs};
pub use values::ProxyKind;

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
    /// Log what evalgate decides on stderr (`-vv`: every exchange with the system under
    /// test). EVALGATE_LOG takes tracing's filter syntax instead
    /// (`EVALGATE_LOG=evalgate=trace,rmcp=debug`).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// What the command was given (filled by [`parse`]): its datasets and settings.
    #[arg(skip)]
    pub args: EvalArgs,
    /// The GitHub token given by `--github-token` (or `EVALGATE_GITHUB_TOKEN`), if the command
    /// takes one: registered for masking before anything runs.
    #[arg(skip)]
    pub github_token: Option<String>,
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
    /// Join the reports of a sharded run (`--shard i/n`) into the report, verdict and comment
    /// the unsharded run would give.
    #[command(after_help = MERGE_HELP)]
    Merge(Box<MergeArgs>),
    /// Score candidate tool descriptions against the golden set (a description optimiser's
    /// fitness function): JSON on stdout, for one candidate or one per stdin line.
    #[command(after_help = FITNESS_HELP)]
    Fitness(Box<FitnessArgs>),
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

/// Parses the command line like [`Cli::try_parse_from`], and reads what the command was given
/// ([`Cli::args`]), with the flags given on the command line (not by a variable or a default).
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cli, clap::Error> {
    let args: Vec<OsString> = args.into_iter().collect();
    let mut cmd = Cli::command();
    let m = match cmd.try_get_matches_from_mut(args.iter().cloned()) {
        Ok(m) => m,
        Err(e) => return Err(foreign_flag(&mut cmd, &args, &e).unwrap_or(e)),
    };
    let mut cli = Cli::from_arg_matches(&m).map_err(|e| e.format(&mut cmd))?;
    let (sub, sm) = innermost(&cmd, &m);
    cli.args = eval::eval_args(sub, sm);
    cli.github_token = eval::one(sm, "github_token");
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
        let c = p.split(' ').try_fold(&*cmd, |c, w| c.find_subcommand(w));
        c.is_some_and(|c| {
            c.get_arguments()
                .any(|a| a.get_long() == Some(flag.as_str()) && !a.is_hide_set())
        })
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
    let sub = path
        .split(' ')
        .try_fold(cmd, |c, w| c.find_subcommand_mut(w))?;
    Some(sub.error(ErrorKind::UnknownArgument, msg))
}

/// The (innermost) subcommand given, and its matches.
fn innermost<'a>(
    mut c: &'a clap::Command,
    mut m: &'a ArgMatches,
) -> (&'a clap::Command, &'a ArgMatches) {
    while let Some((name, sm)) = m.subcommand()
        && let Some(sc) = c.find_subcommand(name)
    {
        (c, m) = (sc, sm);
    }
    (c, m)
}
