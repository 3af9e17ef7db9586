//! What each command does: load and validate, pick the systems under test, measure, score,
//! gate, render. The CLI module only parses; tests drive these functions directly too.

use crate::baseline::{self, Baseline};
use crate::cli::{ColorChoice, DatasetArgs, EvalArgs};
use crate::config::Settings;
use crate::dataset::{DatasetPaths, Datasets, Need};
use crate::measure::{self, Limits, Progress};
use crate::process::Supervisor;
use crate::reporting::{self, model::*, sanitize};
use crate::score;
use crate::sut::{Detector, Retriever, SutError};
use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

mod baseline_cmd;
mod systems;
mod tools_cmd;

pub use baseline_cmd::{baseline_changes, cmd_baseline_import, cmd_baseline_update};
pub use systems::{make_detectors, make_retriever, mcp_spec, rest_spec};
pub use tools_cmd::{cmd_proxy, cmd_replay, cmd_snapshot};

/// Which half of the evaluation a command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Both,
    Retrieval,
    Security,
}

impl Part {
    fn need(self) -> Need {
        Need {
            retrieval: self != Part::Security,
            security: self != Part::Retrieval,
        }
    }
    fn command(self) -> &'static str {
        match self {
            Part::Both => "run",
            Part::Retrieval => "retrieval",
            Part::Security => "security",
        }
    }
}

/// A usage or input problem (exit code 2), already phrased for the user.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

fn paths(d: &DatasetArgs) -> DatasetPaths {
    DatasetPaths::files_then_dir(
        DatasetPaths {
            corpus: d.retrieval.corpus.clone(),
            golden: d.retrieval.golden.clone(),
            security: d.security.security.clone(),
        },
        d.dir.dir.as_deref(),
    )
}

/// The baseline in use and where it came from.
pub struct ChosenBaseline {
    pub name: String,
    pub baseline: Baseline,
    /// Given with `--baseline` (or `[run] baseline`), not found by default.
    pub explicit: bool,
}

impl ChosenBaseline {
    /// The baseline the gate may use for a run of `system`: a baseline found by default
    /// (`baselines/default.json`, the embedded one) gates retrieval only when it was measured on
    /// the same system, so a proxy's first run is not gated against another system's numbers.
    /// A baseline given explicitly is used as it is (comparing two systems on purpose).
    fn for_system(
        &self,
        system: Option<&str>,
        update: &str,
        warnings: &mut Vec<String>,
    ) -> Baseline {
        let mut b = self.baseline.clone();
        let (Some(system), Some(rb)) = (system, b.retrieval.as_ref()) else {
            return b;
        };
        let system = system.strip_prefix("recorded:").unwrap_or(system);
        if !self.explicit && rb.retriever != system {
            warnings.push(format!(
                "the baseline {} was measured on {:?}, this run measures {system:?}: retrieval is reported, not gated; `{update}` writes this system's own baseline to {}",
                self.name,
                rb.retriever,
                baseline::DEFAULT_PATH
            ));
            b.retrieval = None;
        }
        b
    }
}

/// Picks the baseline: an explicit file (errors are fatal), else `baselines/default.json` in the
/// working directory, else the embedded one when the embedded datasets are in use. An implicit
/// baseline measured on other datasets is ignored with a warning; an explicit one is an error.
pub fn choose_baseline(
    args: &Settings,
    ds: &Datasets,
    warnings: &mut Vec<String>,
    why_none: &mut Option<String>,
) -> anyhow::Result<Option<ChosenBaseline>> {
    if args.no_baseline {
        return Ok(None);
    }
    let (name, b, explicit) = if let Some(p) = &args.baseline {
        let (b, note) = Baseline::load_noted(p).map_err(|e| BadInput(format!("{e:#}")))?;
        warnings.extend(note);
        (p.display().to_string(), b, true)
    } else if Path::new(baseline::DEFAULT_PATH).is_file() {
        let b = Baseline::load(Path::new(baseline::DEFAULT_PATH))
            .map_err(|e| BadInput(format!("{e:#}")))?;
        (baseline::DEFAULT_PATH.to_string(), b, false)
    } else if ds.all_embedded() {
        let b = Baseline::parse(baseline::EMBEDDED_DEFAULT_NAME, baseline::EMBEDDED_DEFAULT)
            .map_err(|e| BadInput(format!("{e:#}")))?;
        (baseline::EMBEDDED_DEFAULT_NAME.to_string(), b, false)
    } else {
        return Ok(None);
    };
    let mut mismatches = Vec::new();
    let (mut theirs, mut ours) = (Vec::new(), Vec::new());
    for (kind, version, sha) in dataset_pins(ds) {
        if let Some(pin) = b.datasets.get(kind) {
            if pin.version != version {
                let shown = |v: Option<&str>| match v {
                    Some(v) => v.to_string(),
                    None => format!("an unversioned {kind}"),
                };
                theirs.push(shown(pin.version.as_deref()));
                ours.push(shown(version.as_deref()));
                mismatches.push(format!(
                    "{kind}: baseline measured on {:?}, this run uses {:?}",
                    pin.version.as_deref().unwrap_or("unversioned"),
                    version.as_deref().unwrap_or("unversioned")
                ));
            } else if !pin.sha256.is_empty() && pin.sha256 != sha {
                warnings.push(format!(
                    "the {kind} dataset changed since the baseline {name} was written (same version {:?}, different content)",
                    version.as_deref().unwrap_or("unversioned")
                ));
            }
        }
    }
    if !mismatches.is_empty() {
        let msg = format!(
            "baseline {name} does not match the datasets: {}. Write a new baseline with `evalgate baseline update`",
            mismatches.join("; ")
        );
        if explicit {
            return Err(BadInput(msg).into());
        }
        warnings.push(format!("{msg}; running without a baseline"));
        *why_none = Some(format!(
            "{name} is for {}; this run uses {}",
            theirs.join(", "),
            ours.join(", ")
        ));
        return Ok(None);
    }
    Ok(Some(ChosenBaseline {
        name,
        baseline: b,
        explicit,
    }))
}

fn dataset_pins(ds: &Datasets) -> Vec<(&'static str, Option<String>, String)> {
    let mut v = Vec::new();
    if let Some(c) = &ds.corpus {
        v.push((
            "corpus",
            Some(c.value.version.clone()),
            c.source.sha256.clone(),
        ));
    }
    if let Some(g) = &ds.golden {
        v.push(("golden", g.value.version.clone(), g.source.sha256.clone()));
    }
    if let Some(s) = &ds.security {
        v.push(("security", s.value.version.clone(), s.source.sha256.clone()));
    }
    v
}

fn dataset_refs(ds: &Datasets) -> Vec<DatasetRef> {
    let mut v = Vec::new();
    if let Some(c) = &ds.corpus {
        v.push(DatasetRef {
            kind: "corpus".into(),
            source: c.source.name.clone(),
            version: Some(c.value.version.clone()),
            sha256: c.source.sha256.clone(),
            items: c.value.tools.len(),
        });
    }
    if let Some(g) = &ds.golden {
        v.push(DatasetRef {
            kind: "golden".into(),
            source: g.source.name.clone(),
            version: g.value.version.clone(),
            sha256: g.source.sha256.clone(),
            items: g.value.queries.len(),
        });
    }
    if let Some(s) = &ds.security {
        v.push(DatasetRef {
            kind: "security".into(),
            source: s.source.name.clone(),
            version: s.value.version.clone(),
            sha256: s.source.sha256.clone(),
            items: s.value.entries.len(),
        });
    }
    v
}

/// How to evaluate: which part, how many runs, time limits, and the baseline to gate against.
#[derive(Clone, Copy)]
pub struct Plan<'a> {
    pub part: Part,
    pub runs: usize,
    pub limits: Limits,
    pub baseline: Option<&'a ChosenBaseline>,
    pub robustness: crate::probes::RobustnessMode,
    /// How the gate judges besides the baseline.
    pub gate: &'a crate::gate::Context,
}

/// Measures and scores with the given systems; the report's gate is evaluated against
/// `baseline`. Never fails for a misbehaving system: that becomes `report.failure`.
pub async fn evaluate_with(
    plan: &Plan<'_>,
    ds: &Datasets,
    retriever: Option<&dyn Retriever>,
    detectors: &mut [Box<dyn Detector>],
    progress: &mut Progress,
    mut warnings: Vec<String>,
) -> Report {
    let Plan {
        part,
        runs,
        limits,
        baseline,
        robustness: probing,
        gate: gate_context,
    } = *plan;
    let mut robustness = None;
    let mut failure = None;
    let mut retrieval = None;
    let mut security = None;
    if part != Part::Security
        && let (Some(r), Some(c), Some(g)) = (retriever, &ds.corpus, &ds.golden)
    {
        let (obs, mut err) = measure::retrieval(r, &g.value, runs, limits, progress).await;
        let mut scored = score::retrieval(obs, &c.value, &g.value);
        scored.catalog = r.coverage();
        let asked: std::collections::HashSet<&str> =
            g.value.queries.iter().map(|q| q.id.as_str()).collect();
        warnings.extend(r.warnings(&asked));
        if let Some(cov) = scored.catalog.as_ref().filter(|c| !c.complete()) {
            warnings.push(format!(
                "measured over an incomplete catalog ([sut.catalog] allow_partial): {}",
                cov.summary()
            ));
        }
        let d = &scored.diagnostics;
        if err.is_none() && d.answers > 0 && d.empty_answers == d.answers {
            err = Some(crate::sut::SutError::Garbage {
                system: r.name().to_string(),
                detail: format!(
                    "every one of its {} answers was empty: a system that finds nothing is not measured (is its index built? does the search tool read the query argument?)",
                    d.answers
                ),
            });
        } else if d.empty_answers * 2 > d.answers {
            warnings.push(format!(
                "{} of {} answers were empty: most queries found nothing, the numbers describe a system that hardly answers",
                d.empty_answers, d.answers
            ));
        }
        if d.unstable_queries > 0 {
            warnings.push(format!(
                "{} of {} queries were answered differently in different runs: the system does not answer identical queries identically, so the spread is its own, not the data's",
                d.unstable_queries,
                g.value.queries.len()
            ));
        }
        retrieval = Some(scored);
        if err.is_none()
            && probing != crate::probes::RobustnessMode::Off
            && r.replays().is_none()
            && let Some(q) = g.value.queries.first()
        {
            let ids: std::collections::HashSet<&str> =
                c.value.tools.iter().map(|t| t.tool_id.as_str()).collect();
            let rep = crate::probes::run(
                r,
                &q.query,
                &ids,
                limits.request_timeout,
                probing == crate::probes::RobustnessMode::Gate,
            )
            .await;
            robustness = Some(rep);
        }
        failure = err;
    }
    if part != Part::Retrieval
        && failure.is_none()
        && let Some(s) = &ds.security
    {
        let mut all = Vec::new();
        for d in detectors.iter_mut() {
            let (obs, err) =
                measure::security(d.as_mut(), &s.value.entries, runs, limits, progress).await;
            all.push(obs);
            if err.is_some() {
                failure = err;
                break;
            }
        }
        security = Some(score::security(&all, &s.value));
    }
    warnings.extend(crate::dataset::summarize_warnings(&ds.warnings));
    if let (Some(b), Some(r)) = (baseline, &retrieval)
        && let Some(rb) = &b.baseline.retrieval
        && rb.retriever != r.retriever.trim_start_matches("recorded:")
        && rb.retriever != r.retriever
    {
        warnings.push(format!(
            "baseline {} was measured with retriever {:?}, this run uses {:?}",
            b.name, rb.retriever, r.retriever
        ));
    }
    if let (Some(s), Some(b)) = (
        &security,
        baseline.and_then(|b| b.baseline.security.as_ref()),
    ) {
        for d in &s.detectors {
            if !b.detectors.contains_key(&d.detector) {
                warnings.push(format!("the baseline has no entry for detector {:?}: its numbers are reported, not gated", d.detector));
            }
        }
    }
    let system = retrieval.as_ref().map(|r| r.retriever.clone());
    let usable = baseline.map(|b| {
        (
            b.name.as_str(),
            b.for_system(
                system.as_deref(),
                &gate_context.update_command,
                &mut warnings,
            ),
        )
    });
    // the gate first, over what was measured; the report is assembled with its outcome
    let gate = crate::gate::evaluate(
        &crate::reporting::model::gate_inputs(
            retrieval.as_ref(),
            security.as_ref(),
            robustness.as_ref(),
            failure.as_ref(),
        ),
        usable.as_ref().map(|(n, b)| (*n, b)),
        gate_context,
    );
    Report {
        schema_version: REPORT_SCHEMA_VERSION,
        evalgate_version: env!("CARGO_PKG_VERSION").to_string(),
        command: part.command().to_string(),
        runs,
        datasets: dataset_refs(ds),
        dataset_profile: ds.profile,
        retrieval,
        security,
        robustness,
        gate,
        failure,
        warnings,
    }
}

/// Loads, validates, builds the systems, measures and gates. Dataset, settings and baseline
/// problems are errors (exit 2); a system that cannot be brought up or measured becomes the
/// report's failure (exit 3). Every child process is stopped before this returns.
pub async fn evaluate(
    s: &Settings,
    part: Part,
    use_baseline: bool,
) -> anyhow::Result<(Report, Option<ChosenBaseline>)> {
    let ds = Datasets::load(&s.datasets, part.need(), s.profile)?;
    let mut warnings = Vec::new();
    let mut why_none = None;
    let chosen = if use_baseline {
        choose_baseline(s, &ds, &mut warnings, &mut why_none)?
    } else {
        None
    };
    let gate_context = crate::gate::Context {
        why_no_baseline: why_none,
        update_command: update_command(&std::env::args().collect::<Vec<_>>()),
        new_detector: s.new_detector,
    };
    let limits = Limits {
        request_timeout: s.timeout,
        concurrency: s.concurrency,
    };
    let sup = Supervisor::new();
    let mut detectors = if part != Part::Retrieval {
        make_detectors(s, &sup)?
    } else {
        Vec::new()
    };
    sup.install_signal_handlers();
    let built = if part != Part::Security {
        Some(make_retriever(s, &ds, &sup).await)
    } else {
        None
    };
    let mut progress = Progress::new(!s.quiet);
    let plan = Plan {
        part,
        runs: s.runs,
        limits,
        baseline: chosen.as_ref(),
        robustness: s.robustness,
        gate: &gate_context,
    };
    let result = match built {
        None => Ok(evaluate_with(&plan, &ds, None, &mut detectors, &mut progress, warnings).await),
        Some(Ok(Ok(r))) => {
            let report = evaluate_with(
                &plan,
                &ds,
                Some(r.as_ref()),
                &mut detectors,
                &mut progress,
                warnings,
            )
            .await;
            drop(r);
            Ok(report)
        }
        Some(Ok(Err(sut_error))) => {
            let mut report = evaluate_with(
                &Plan {
                    part: Part::Retrieval,
                    ..plan
                },
                &ds,
                None,
                &mut detectors,
                &mut progress,
                warnings,
            )
            .await;
            fail_report(&mut report, sut_error, chosen.as_ref(), &gate_context);
            Ok(report)
        }
        Some(Err(e)) => Err(e),
    };
    sup.shutdown(Duration::from_secs(3)).await;
    // The datasets are freed here, before the reports are rendered, although leaving them to
    // the process's exit would save 15 % of an offline re-score's time (perf, v1): rendering
    // reuses their memory, and without that the default run's peak RSS rose from 97 to 103 MB.
    drop(ds);
    result.map(|r| (r, chosen))
}

/// Marks a report as failed: the system under test could not be measured.
fn fail_report(
    report: &mut Report,
    e: SutError,
    baseline: Option<&ChosenBaseline>,
    cx: &crate::gate::Context,
) {
    report.failure = Some(e);
    report.gate = crate::gate::evaluate(
        &report.gate_inputs(),
        baseline.map(|b| (b.name.as_str(), &b.baseline)),
        cx,
    );
}

/// `evalgate baseline update` with this invocation's options: what writes the baseline this run
/// lacks. Options `baseline update` has no use for (reports, terminal, publishing) are left out,
/// and so is every value that could hold a credential (headers, the GitHub token).
pub fn update_command(argv: &[String]) -> String {
    // options that take a value, and those without one, that are left out
    const DROP_VALUE: [&str; 12] = [
        "--out",
        "--robustness",
        "--color",
        "--publish",
        "--comment",
        "--check-run",
        "--fail-on",
        "--comment-key",
        "--artifact-name",
        "--github-token",
        "--act-post",
        "--github-timeout",
    ];
    const DROP_FLAG: [&str; 3] = ["-q", "--quiet", "--no-baseline"];
    let mut out = vec!["evalgate".to_string(), "baseline".into(), "update".into()];
    let mut args = argv.iter().skip(1).peekable();
    // the subcommand itself (run, retrieval, security)
    for a in args.by_ref() {
        if matches!(a.as_str(), "run" | "retrieval" | "security") {
            break;
        }
    }
    while let Some(a) = args.next() {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        let inline = a.contains('=');
        if DROP_VALUE.contains(&name) || name == "--header" {
            if !inline {
                args.next();
            }
            continue;
        }
        if DROP_FLAG.contains(&name) {
            continue;
        }
        out.push(shell_word(a));
    }
    out.join(" ")
}

/// A word as a POSIX shell reads it back: bare when it is plain, else single-quoted.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+%".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

fn color(c: ColorChoice) -> bool {
    match c {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    }
}

/// How long a run waits for another one writing into the same report directory.
const REPORT_LOCK_WAIT: Duration = Duration::from_secs(600);

/// Refuses a flag given on the command line that cannot apply to the settings as resolved
/// (`--url` when the system under test is embedded, say). A variable or an evalgate.toml value
/// that does not apply is ignored: a job's environment serves several commands.
pub fn refuse_inapplicable(a: &EvalArgs, s: &Settings, part: Part) -> Result<(), BadInput> {
    use crate::cli::{DetectorKind, SutKind};
    let sut = s.sut.name();
    let given = |flags: &[&'static str]| flags.iter().copied().find(|f| a.given(f));
    if part != Part::Security
        && !matches!(s.sut, SutKind::Mcp | SutKind::Rest)
        && let Some(f) = given(&["--url", "--header"])
    {
        return Err(BadInput(format!(
            "{f} is for a system already running (--sut mcp or --sut rest); the system under test here is `{sut}`"
        )));
    }
    if part == Part::Security {
        if a.given("--sut") && !s.sut.launched() {
            return Err(BadInput(format!(
                "security --sut chooses the proxy launched for the proxy-scan and rug-pull-live detectors: reference, mcpproxy or launch, not `{sut}`"
            )));
        }
        if !s.detectors.iter().any(|d| d.live())
            && let Some(f) = given(&["--sut", "--mcpproxy-bin"])
        {
            return Err(BadInput(format!(
                "{f} chooses the proxy the proxy-scan and rug-pull-live detectors play against, and neither is among the detectors (add --detectors proxy-scan or rug-pull-live)"
            )));
        }
    }
    if a.given("--mcpproxy-bin") && s.sut != SutKind::Mcpproxy {
        return Err(BadInput(format!(
            "--mcpproxy-bin launches mcpproxy, but the system under test here is `{sut}` (leave --sut out, or --sut mcpproxy)"
        )));
    }
    if a.given("--recorded") {
        let used = (part != Part::Security && s.sut == SutKind::Recorded)
            || (part != Part::Retrieval && s.detectors.contains(&DetectorKind::Recorded));
        if !used {
            return Err(BadInput(match part {
                Part::Retrieval => format!(
                    "--recorded is replayed by --sut recorded, and the system under test here is `{sut}`"
                ),
                Part::Security => "--recorded is replayed by --detectors recorded, and it is not among the detectors".into(),
                Part::Both => "--recorded is replayed by --sut recorded or --detectors recorded, and neither is used here".into(),
            }));
        }
    }
    Ok(())
}

/// `run`, `retrieval`, `security`: returns the exit code.
pub async fn cmd_eval(
    args: &EvalArgs,
    publish_args: &crate::cli::PublishArgs,
    part: Part,
) -> anyhow::Result<i32> {
    let s = Settings::resolve(args).map_err(|e| BadInput(format!("{e:#}")))?;
    refuse_inapplicable(args, &s, part)?;
    let github_timeout = github_timeout(publish_args)?;
    let (report, _) = evaluate(&s, part, true).await?;
    // no credential evalgate was given reaches a report, the terminal or GitHub
    let report = crate::secrets::scrub_value(report);
    // held until the reports are written and published: a run given the same --out waits, so
    // the directory's files always come from one run
    let _lock = crate::files::lock_dir(&s.out, REPORT_LOCK_WAIT)?;
    // every section computed once, laid out by each format
    let view = reporting::view::View::of(&report);
    let written = reporting::write_all(&report, &view, &s.out)?;
    if !s.quiet {
        let terminal = reporting::terminal::Terminal {
            color: color(s.color),
        };
        use reporting::Exporter as _;
        crate::out!("{}", terminal.render(&report, &view)?);
        for w in &report.warnings {
            eprintln!("warning: {}", sanitize::visible_lines(w));
        }
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        eprintln!("reports: {}", names.join(", "));
    } else {
        // quiet: nothing on success, but a failure still says why
        eprint!("{}", reporting::terminal::quiet(&report));
    }
    let env = crate::github::env::GhEnv::from_env();
    if crate::github::plan::publishes(publish_args.publish, env.actions) {
        let opts = publish_options(publish_args, &env, None, github_timeout);
        let out = crate::github::publish(&report, &s.out, &env, &opts).await;
        for n in out.notes {
            eprintln!("github: {}", github_note(&n));
        }
    }
    let code = crate::github::exit_code(&report, publish_args.fail_on);
    // The process exits next: the report's memory goes with it instead of being freed piece
    // by piece (nothing is allocated after this point, so the peak is unchanged).
    std::mem::forget(report);
    Ok(code)
}

/// A note about publishing for the terminal: what the API answered may quote credentials and
/// hold escape sequences.
fn github_note(n: &str) -> String {
    crate::reporting::sanitize::term_ends(&crate::secrets::scrub(n), 2000)
}

/// A GitHub token as given, minus the surrounding whitespace a secret file or `echo` leaves;
/// one that still holds a character no token has (a control character, a space) is not used,
/// with a warning that never quotes it.
fn usable_token(t: Option<String>) -> Option<String> {
    let t = t?.trim().to_string();
    if t.is_empty() {
        return None;
    }
    if !t.chars().all(|c| c.is_ascii_graphic()) {
        eprintln!(
            "warning: the GitHub token holds characters a token cannot have (a space or a control character); nothing is posted to GitHub"
        );
        return None;
    }
    crate::secrets::register(&t);
    Some(t)
}

/// `--github-timeout` (`EVALGATE_GITHUB_TIMEOUT`), bounded like every other timeout.
fn github_timeout(p: &crate::cli::PublishArgs) -> anyhow::Result<Duration> {
    match p.github_timeout {
        None => Ok(crate::github::DEFAULT_TIMEOUT),
        Some(t) => crate::config::seconds("--github-timeout (EVALGATE_GITHUB_TIMEOUT)", t)
            .map_err(|e| BadInput(format!("{e:#}")).into()),
    }
}

fn publish_options(
    p: &crate::cli::PublishArgs,
    env: &crate::github::env::GhEnv,
    pr: Option<crate::github::env::PullRequest>,
    timeout: Duration,
) -> crate::github::PublishOptions {
    crate::github::PublishOptions {
        comment: p.comment,
        check_run: p.check_run,
        fail_on: p.fail_on,
        key: p
            .comment_key
            .clone()
            .or_else(|| env.job.clone())
            .unwrap_or_else(|| "evalgate".into()),
        artifact_name: p.artifact_name.clone(),
        token: usable_token(
            p.github_token
                .clone()
                .or_else(|| std::env::var("GITHUB_TOKEN").ok()),
        ),
        act_post: p.act_post,
        pr,
        timeout,
    }
}

/// `publish`: posts an existing report; returns the gate's exit code.
pub async fn cmd_publish(a: &crate::cli::PublishCmdArgs) -> anyhow::Result<i32> {
    let timeout = github_timeout(&a.publish)?;
    let path = a.report_dir.join("report.json");
    let text = crate::files::read_to_string(&path)
        .map_err(|e| BadInput(format!("{}: cannot read the report: {e}", path.display())))?;
    let report: Report = serde_json::from_str(&text).map_err(|e| {
        BadInput(format!(
            "{}:{}:{}: expected an evalgate report.json: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    let report = crate::secrets::scrub_value(report);
    let env = crate::github::env::GhEnv::from_env();
    let pr = match (a.pr, &a.head_sha) {
        (Some(number), Some(sha)) => Some(crate::github::env::PullRequest {
            number,
            head_sha: sha.clone(),
            from_fork: false,
        }),
        _ => None,
    };
    // publishing is this command's whole job: `auto` publishes, on a runner or not
    if !crate::github::plan::publishes(a.publish.publish, true) {
        eprintln!("github: --publish never: nothing is posted or written");
        return Ok(crate::github::exit_code(&report, a.publish.fail_on));
    }
    let opts = publish_options(&a.publish, &env, pr, timeout);
    let out = crate::github::publish(&report, &a.report_dir, &env, &opts).await;
    for n in out.notes {
        eprintln!("github: {}", github_note(&n));
    }
    Ok(crate::github::exit_code(&report, a.publish.fail_on))
}

/// `card`: the dataset card, printed, checked against a file, or spliced into one.
pub fn cmd_card(args: &crate::cli::CardArgs) -> anyhow::Result<i32> {
    use crate::dataset::card;
    let ds = Datasets::load(
        &paths(&args.datasets),
        Need {
            retrieval: true,
            security: true,
        },
        args.datasets.profile.profile.unwrap_or_default(),
    )?;
    let text = card::render(
        ds.corpus.as_ref().map(|l| &l.value),
        ds.golden.as_ref().map(|l| &l.value),
        ds.security.as_ref().map(|l| &l.value),
    );
    let Some(file) = args.update.as_ref().or(args.check.as_ref()) else {
        // (the card is Markdown made of neutralised cells; shown visible all the same)
        crate::out!("{}", sanitize::visible_lines(&text));
        return Ok(0);
    };
    let doc = crate::files::read_to_string(file)
        .map_err(|e| BadInput(format!("{}: cannot read: {e}", file.display())))?;
    let Some(new) = card::splice(&doc, &text) else {
        return Err(BadInput(format!(
            "{}: no generated block; add the two lines\n{}\n{}\nwhere the card belongs",
            file.display(),
            card::BEGIN,
            card::END
        ))
        .into());
    };
    if args.check.is_some() {
        if new == doc {
            crate::outln!("ok  {}: the dataset card is current", file.display());
            return Ok(0);
        }
        eprintln!(
            "{}: the dataset card is stale; run `evalgate card --update {}`",
            file.display(),
            file.display()
        );
        return Ok(1);
    }
    if new != doc {
        crate::files::write_atomic(file, new.as_bytes())?;
        eprintln!("updated the dataset card in {}", file.display());
    } else {
        eprintln!("{}: the dataset card was already current", file.display());
    }
    Ok(0)
}

/// `validate`: exit 0 when valid; dataset errors propagate (exit 2).
pub fn cmd_validate(args: &DatasetArgs) -> anyhow::Result<i32> {
    let ds = Datasets::load(
        &paths(args),
        Need {
            retrieval: true,
            security: true,
        },
        args.profile.profile.unwrap_or_default(),
    )?;
    // dataset text (ids, versions, file names) reaches the terminal only through `sanitize`
    for w in crate::dataset::summarize_warnings(&ds.warnings) {
        eprintln!("{}", sanitize::visible_lines(&w));
    }
    eprintln!(
        "profile {}: {} warning(s)",
        ds.profile.as_str(),
        ds.warnings.len()
    );
    for d in dataset_refs(&ds) {
        crate::outln!(
            "ok  {:<8} {} ({}, {} items)",
            d.kind,
            sanitize::term(&d.source, 500),
            sanitize::term(d.version.as_deref().unwrap_or("unversioned"), 500),
            d.items
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn the_update_command_keeps_what_measures_and_drops_reports_publishing_and_credentials() {
        assert_eq!(
            update_command(&argv(
                "/usr/bin/evalgate run -q --datasets datasets/v0 --out=x --runs 3 --header Authorization:secret --github-token ghp_x --comment off --sut reference"
            )),
            "evalgate baseline update --datasets datasets/v0 --runs 3 --sut reference"
        );
        assert_eq!(
            update_command(&argv(
                "evalgate security --detectors rules,scanner --no-baseline"
            )),
            "evalgate baseline update --detectors rules,scanner"
        );
        // a word the shell would split or expand is quoted
        assert_eq!(
            update_command(&argv("evalgate run --config a$b")),
            "evalgate baseline update --config 'a$b'"
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(
            update_command(&argv("evalgate")),
            "evalgate baseline update"
        );
    }
}
