//! The flag groups of the evaluating commands (`run`, `retrieval`, `security`,
//! `baseline update`), the commands built from them, and [`EvalArgs`], what one of them was
//! given.

use super::{ProxyKind, PublishArgs};
use crate::pipeline::dataset::shard::Shard;
use crate::pipeline::dataset::{DatasetPaths, Profile};
use crate::pipeline::measure::probes::RobustnessMode;
use crate::pipeline::report::color::ColorChoice;
use crate::pipeline::sut::kind::{DetectorKind, SutKind};
use crate::pipeline::sut::observe::ObservationsMode;
use clap::parser::ValueSource::CommandLine;
use clap::{ArgMatches, Args};
use std::path::PathBuf;

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
#[allow(rustdoc::broken_intra_doc_links)] // "[default: …]" is help text, not a link
pub struct ProfileFlag {
    /// How strictly the files are held to evalgate's authoring rules: `lenient` (authoring
    /// rules are warnings, integrity rules errors) or `strict` (all errors, as for the shipped
    /// datasets) [default: lenient, or [datasets] profile in evalgate.toml].
    #[arg(long, env = "EVALGATE_PROFILE", value_enum, value_name = "PROFILE")]
    pub profile: Option<Profile>,
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

/// The search system under test (`run`, `retrieval`, `baseline update`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "System under test")]
pub struct SystemFlags {
    /// The search system under test [default: embedded; mcpproxy when --mcpproxy-bin is given].
    #[arg(long = "sut", alias = "retriever", env = "EVALGATE_SUT", value_enum)]
    pub sut: Option<SutKind>,
    /// The system under test when neither --sut, `[sut] kind` nor --mcpproxy-bin chooses one
    /// (the GitHub Action sets `reference`, so that evalgate, not the action's shell, reads the
    /// config) [default: embedded].
    #[arg(long, env = "EVALGATE_DEFAULT_SUT", value_enum, hide = true)]
    pub default_sut: Option<SutKind>,
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
    pub robustness: Option<RobustnessMode>,
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
    /// Detectors under test, comma-separated [default: rules,drift; with mcpproxy: rug-pull-live,
    /// its own quarantine].
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

/// `--shard` (`run`, `retrieval`, `security`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Measurement")]
pub struct ShardFlag {
    /// Measure shard INDEX of COUNT only (a contiguous slice of the queries and of the security
    /// entries; the whole corpus is still served). The report is not gated: `evalgate merge`
    /// joins the shards' report.json files into the report the unsharded run would write.
    #[arg(long, env = "EVALGATE_SHARD", value_name = "INDEX/COUNT")]
    pub shard: Option<Shard>,
}

/// The baseline a run is gated against.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Gate")]
pub struct GateFlags {
    /// Baseline to gate against [default: baselines/default.json if present, else the embedded
    /// one when the embedded datasets are used].
    #[arg(long, env = "EVALGATE_BASELINE", value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Report only: do not compare with any baseline (wins over --baseline and
    /// EVALGATE_BASELINE, which the action sets for every step).
    #[arg(long)]
    pub no_baseline: bool,
}

/// Where the reports go and how the terminal shows them.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Output")]
#[allow(rustdoc::broken_intra_doc_links)] // "[default: …]" is help text, not a link
pub struct ReportFlags {
    /// Directory for report.json, report.md and report.html [default: evalgate-report].
    #[arg(long, env = "EVALGATE_OUT", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Colour in the terminal table.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Where the raw observations (every run's ranked ids and verdicts, what `merge` and
    /// `--sut recorded` read) are written [default: inline, or [run] observations].
    #[arg(long, env = "EVALGATE_OBSERVATIONS", value_enum, value_name = "WHERE")]
    pub observations: Option<ObservationsMode>,
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

/// What the commands that end in a report share: the gate, the reports, the terminal and
/// publishing (`run`, `retrieval`, `security`, `merge`).
#[derive(Debug, Clone, Args)]
pub struct Delivery {
    #[command(flatten)]
    pub gate: GateFlags,
    #[command(flatten)]
    pub report: ReportFlags,
    #[command(flatten)]
    pub quiet: QuietFlag,
    #[command(flatten)]
    pub publish: PublishArgs,
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
    pub shard: ShardFlag,
    #[command(flatten)]
    pub deliver: Delivery,
}

/// What tool discovery is measured with (`retrieval`, `fitness`): the settings file, the
/// retrieval datasets, the system under test, how it is measured.
#[derive(Debug, Clone, Args)]
pub struct RetrievalInputs {
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
    pub measure: MeasureFlags,
}

/// `retrieval`: no detector and no security-corpus flags.
#[derive(Debug, Clone, Args)]
pub struct RetrievalArgs {
    #[command(flatten)]
    pub inputs: RetrievalInputs,
    #[command(flatten)]
    pub robustness: RobustnessFlag,
    #[command(flatten)]
    pub shard: ShardFlag,
    #[command(flatten)]
    pub deliver: Delivery,
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
    pub shard: ShardFlag,
    #[command(flatten)]
    pub deliver: Delivery,
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
}

/// `fitness`: candidate tool descriptions scored against the golden set, as JSON on stdout.
#[derive(Debug, Clone, Args)]
pub struct FitnessArgs {
    /// A JSON object of candidate definitions laid over the corpus:
    /// `{"server:tool": {"description": "…", "input_schema": {…}}, …}` (`{}` scores the corpus
    /// as it is). One JSON result on stdout.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Candidates",
        required_unless_present = "lines",
        conflicts_with = "lines"
    )]
    pub overrides: Option<PathBuf>,
    /// Read one overrides object per stdin line and write one result per stdout line, in order,
    /// until end of input (for optimiser loops: the datasets are loaded once). A line that is
    /// not a valid candidate gets `{"line": N, "error": "…"}`.
    #[arg(long, help_heading = "Candidates")]
    pub lines: bool,
    #[command(flatten)]
    pub inputs: RetrievalInputs,
}

/// `merge`: the shards' reports, the datasets they measured, the baseline, reports, publishing.
#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// The report.json of every shard (`run --shard i/n` for i = 1..n), in any order.
    #[arg(value_name = "SHARD_REPORT", required = true)]
    pub reports: Vec<PathBuf>,
    #[command(flatten)]
    pub config: ConfigFlag,
    #[command(flatten)]
    pub datasets: DatasetArgs,
    #[command(flatten)]
    pub deliver: Delivery,
}

pub use crate::config::EvalArgs;

/// The value of flag `id` in `m`, if the command has it and it is set.
pub(super) fn one<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> Option<T> {
    m.try_get_one::<T>(id).ok().flatten().cloned()
}

/// What command `c` was given, read from its matches by the flags' ids (a flag the command does
/// not have is unset).
pub(super) fn eval_args(c: &clap::Command, m: &ArgMatches) -> EvalArgs {
    let on_command_line = |a: &&clap::Arg| m.value_source(a.get_id().as_str()) == Some(CommandLine);
    fn many<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> Option<Vec<T>> {
        Some(m.try_get_many::<T>(id).ok().flatten()?.cloned().collect())
    }
    let files = DatasetPaths {
        corpus: one(m, "corpus"),
        golden: one(m, "golden"),
        security: one(m, "security"),
    };
    EvalArgs {
        config: one(m, "config"),
        datasets: DatasetPaths::files_then_dir(files, one::<PathBuf>(m, "dir").as_deref()),
        profile: one(m, "profile"),
        // `security --sut` names the proxy the live detectors launch
        sut: one(m, "sut").or(one(m, "sut").map(|k: ProxyKind| k.0)),
        default_sut: one(m, "default_sut"),
        mcpproxy_bin: one(m, "mcpproxy_bin"),
        url: one(m, "url"),
        headers: many(m, "headers").unwrap_or_default(),
        detectors: many(m, "detectors"),
        recorded: one(m, "recorded"),
        runs: one(m, "runs"),
        shard: one(m, "shard"),
        baseline: one(m, "baseline"),
        no_baseline: one(m, "no_baseline").unwrap_or_default(),
        out: one(m, "out"),
        timeout: one(m, "timeout"),
        concurrency: one(m, "concurrency"),
        robustness: one(m, "robustness"),
        quiet: one(m, "quiet").unwrap_or_default(),
        observations: one(m, "observations"),
        color: one(m, "color").unwrap_or_default(),
        given: c
            .get_arguments()
            .filter(on_command_line)
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Command, parse};
    use super::*;

    #[test]
    fn an_evaluating_command_hands_over_what_it_was_given_and_nothing_else() {
        let argv = [
            "evalgate",
            "security",
            "--sut",
            "mcpproxy",
            "--mcpproxy-bin",
            "bin/mcpproxy",
            "--runs",
            "4",
            "--detectors",
            "rug-pull-live,rules",
            "--security-corpus",
            "s.json",
        ];
        let cli = parse(argv.iter().map(Into::into)).unwrap();
        assert!(
            matches!(cli.command, Command::Security(_)),
            "{:?}",
            cli.command
        );
        let e = &cli.args;
        assert_eq!(e.sut, Some(SutKind::Mcpproxy));
        assert_eq!(e.mcpproxy_bin, Some(PathBuf::from("bin/mcpproxy")));
        assert_eq!(e.runs, Some(4));
        assert_eq!(
            e.detectors,
            Some(vec![DetectorKind::RugPullLive, DetectorKind::Rules])
        );
        assert_eq!(e.datasets.security, Some(PathBuf::from("s.json")));
        assert_eq!(e.datasets.corpus, None);
        assert!(e.given("--sut") && e.given("--runs") && !e.given("--timeout"));
    }

    #[test]
    fn every_flag_of_an_evaluating_command_reaches_what_it_hands_over() {
        let argv = "evalgate run --config cfg.toml --datasets d --corpus c.json --profile strict --sut mcp --default-sut reference --url http://h/mcp --header a:b --concurrency 3 --robustness gate --detectors rules --recorded r.json --runs 2 --timeout 1.5 --shard 1/2 --baseline b.json --no-baseline --out o --color never --observations file -q";
        let cli = parse(argv.split(' ').map(Into::into)).unwrap();
        assert!(matches!(cli.command, Command::Run(_)), "{:?}", cli.command);
        let e = &cli.args;
        assert_eq!(e.config, Some(PathBuf::from("cfg.toml")));
        assert_eq!(e.datasets.corpus, Some(PathBuf::from("c.json")));
        assert_eq!(e.datasets.golden, Some(PathBuf::from("d/golden.json")));
        assert_eq!(e.profile, Some(Profile::Strict));
        assert_eq!(e.sut, Some(SutKind::Mcp));
        assert_eq!(e.default_sut, Some(SutKind::Reference));
        assert_eq!(e.url.as_deref(), Some("http://h/mcp"));
        assert_eq!(e.headers, ["a:b"]);
        assert_eq!(e.concurrency, Some(3));
        assert_eq!(e.robustness, Some(RobustnessMode::Gate));
        assert_eq!(e.detectors, Some(vec![DetectorKind::Rules]));
        assert_eq!(e.recorded, Some(PathBuf::from("r.json")));
        assert_eq!((e.runs, e.timeout), (Some(2), Some(1.5)));
        assert_eq!(e.shard.map(|s| s.to_string()).as_deref(), Some("1/2"));
        assert_eq!(e.baseline, Some(PathBuf::from("b.json")));
        assert!(e.no_baseline && e.quiet);
        assert_eq!(e.out, Some(PathBuf::from("o")));
        assert_eq!(e.color, ColorChoice::Never);
        assert_eq!(e.observations, Some(ObservationsMode::File));
        assert!(e.given("--header") && e.given("--quiet"));
    }
}
