//! What each command does: load and validate, pick the systems under test, measure, score,
//! gate, render. The CLI module only parses; tests drive these functions directly too.

use crate::cli::{Delivery, EvalArgs, PublishArgs};
use crate::config::{MeasureSpec, Settings};
use crate::infra::process::Supervisor;
use crate::infra::text::sanitize;
use crate::infra::{files, secrets};
use crate::pipeline::baseline::choose;
pub use crate::pipeline::baseline::choose::ChosenBaseline;

use crate::pipeline::dataset::shard::{self, Shard, ShardRef};
use crate::pipeline::dataset::{Datasets, Need};
use crate::pipeline::measure::{self, Progress, probes};
use crate::pipeline::report::{self, model::*};
use crate::pipeline::score;
use crate::pipeline::sut::launch::catalog::Coverage;
use crate::pipeline::sut::observe::{DetectorObservations, RetrievalObservations};
use crate::pipeline::sut::{Detector, Retriever, SutError};
use crate::pipeline::{dataset, gate, publish};

use std::time::Duration;

mod baseline_cmd;
mod dataset_cmd;
mod fitness_cmd;
mod given;
mod merge_cmd;
mod publish_cmd;
pub mod schema;
mod systems;
mod tools_cmd;

pub use baseline_cmd::{cmd_baseline_import, cmd_baseline_update};
pub use dataset_cmd::{cmd_card, cmd_validate};
pub use fitness_cmd::cmd_fitness;
pub use given::{refuse_inapplicable, update_command};
pub use merge_cmd::cmd_merge;
pub use publish_cmd::cmd_publish;
use publish_cmd::github_timeout;
pub use systems::{make_detectors, make_retriever};
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

/// An error's whole chain as a [`BadInput`].
fn bad_input(e: anyhow::Error) -> BadInput {
    BadInput(format!("{e:#}"))
}

/// Reads an evalgate report.json, every failure phrased as a [`BadInput`] (with the JSON path).
fn read_report_json(path: &std::path::Path) -> Result<Report, BadInput> {
    let text = files::read_to_string(path)
        .map_err(|e| BadInput(format!("{}: cannot read the report: {e}", path.display())))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        BadInput(format!(
            "{}:{}:{}: at $.{}: expected an evalgate report.json: {inner}",
            path.display(),
            inner.line(),
            inner.column(),
            e.path()
        ))
    })
}

/// The baseline the settings ask for (none unless `wanted`), the gate's policy, the warnings.
fn gate_policy(
    s: &Settings,
    ds: &Datasets,
    wanted: bool,
    update_command: String,
) -> anyhow::Result<(Option<ChosenBaseline>, gate::Policy, Vec<String>)> {
    let (mut warnings, mut why_none) = (Vec::new(), None);
    let chosen = if wanted && !s.gate.no_baseline {
        choose::choose(s.gate.baseline.as_deref(), ds, &mut warnings, &mut why_none)?
    } else {
        None
    };
    let policy = gate::Policy {
        why_no_baseline: why_none,
        update_command,
        new_detector: s.gate.new_detector,
        significance: s.gate.significance,
    };
    Ok((chosen, policy, warnings))
}

/// How to evaluate: which part, how many runs, time limits, and the baseline to gate against.
#[derive(Clone, Copy)]
pub struct Plan<'a> {
    pub part: Part,
    /// With `shard` (`--shard i/n`), one shard of the queries and entries only: the report is
    /// a part for `evalgate merge`, not gated.
    pub measure: MeasureSpec,
    pub baseline: Option<&'a ChosenBaseline>,
    /// How the gate judges besides the baseline.
    pub gate: &'a gate::Policy,
}

impl<'a> Plan<'a> {
    /// The plan of `part` the settings describe, gated by `g` against `b`.
    fn of(s: &Settings, part: Part, b: Option<&'a ChosenBaseline>, g: &'a gate::Policy) -> Self {
        Plan {
            part,
            measure: s.measure,
            baseline: b,
            gate: g,
        }
    }
}

/// What measuring produced, before anything is scored: the input of [`assemble`]. A run
/// measures it ([`measure_all`]); `evalgate merge` joins it from the shards' reports.
#[derive(Default)]
pub struct Measured {
    pub retrieval: Option<RetrievalMeasured>,
    pub robustness: Option<probes::RobustnessReport>,
    /// One per detector, in the order they ran.
    pub security: Option<Vec<DetectorObservations>>,
    /// The first system that could not be measured.
    pub failure: Option<SutError>,
    /// The failure stopped tool discovery (so no detector ran).
    pub retrieval_failed: bool,
}

/// Tool discovery as measured: the raw answers and what the system said about itself.
pub struct RetrievalMeasured {
    pub observations: RetrievalObservations,
    pub coverage: Option<Coverage>,
    /// The system's own warnings, given the whole golden set's query ids.
    pub system_warnings: Vec<String>,
}

/// Every query (of the plan's shard) through the retriever, the robustness probes, then every
/// detector over the entries; stops at the first system that cannot be measured (never fails
/// for a misbehaving system: that becomes the failure [`assemble`] reports).
pub async fn measure_all(
    plan: &Plan<'_>,
    ds: &Datasets,
    retriever: Option<&dyn Retriever>,
    detectors: &mut [Box<dyn Detector>],
    progress: &mut Progress,
) -> Measured {
    let spec = plan.measure;
    let mut m = Measured::default();
    if plan.part != Part::Security
        && let (Some(r), Some(c), Some(g)) = (retriever, &ds.corpus, &ds.golden)
    {
        let slice = spec.shard.map(|s| shard::golden_slice(&g.value, s));
        let golden = slice.as_ref().unwrap_or(&g.value);
        let (obs, mut err) = measure::retrieval(r, golden, spec.runs, spec.limits, progress).await;
        let asked: std::collections::HashSet<&str> =
            g.value.queries.iter().map(|q| q.id.as_str()).collect();
        // a shard leaves this to the merge, which sees every answer
        if err.is_none() && spec.shard.is_none() {
            err = measure::found_nothing(&obs);
        }
        let mut system_warnings = r.warnings(&asked);
        // the guarantee holds to the end: queries it answered are asked again and compared
        if err.is_none() && r.facts().replays.is_none() {
            let again = measure::recheck::run(r, golden, &obs, spec.limits).await;
            err = again.failure(&obs);
            if err.is_none() {
                system_warnings.extend(again.warnings(&r.facts().name));
            }
        }
        m.retrieval_failed = err.is_some();
        if !m.retrieval_failed
            && spec.robustness != probes::RobustnessMode::Off
            && r.facts().replays.is_none()
            && spec.shard.is_none_or(Shard::first)
        {
            // the ordinary query: the first the system answered, so that "still answering
            // afterwards" compares content (an empty answer where there was a list is not)
            let ordinary = measure::recheck::answered(golden, &obs)
                .next()
                .map(|(q, answer)| (q, answer.len()))
                .or_else(|| golden.queries.first().map(|q| (q, 0)));
            if let Some((q, had)) = ordinary {
                let ids: std::collections::HashSet<&str> =
                    c.value.tools.iter().map(|t| t.tool_id.as_str()).collect();
                let gate = spec.robustness == probes::RobustnessMode::Gate;
                let timeout = spec.limits.request_timeout;
                m.robustness = Some(probes::run(r, &q.query, had, &ids, timeout, gate).await);
            }
        }
        m.retrieval = Some(RetrievalMeasured {
            observations: obs,
            coverage: r.facts().coverage.clone(),
            system_warnings,
        });
        m.failure = err;
    }
    if plan.part != Part::Retrieval
        && !m.retrieval_failed
        && let Some(s) = &ds.security
    {
        let n = s.value.entries.len();
        let entries = &s.value.entries[spec.shard.map_or(0..n, |sh| sh.range(n))];
        let mut all = Vec::new();
        for d in detectors.iter_mut() {
            let (obs, err) =
                measure::security(d.as_mut(), entries, spec.runs, spec.limits, progress).await;
            all.push(obs);
            if err.is_some() {
                m.failure = err;
                break;
            }
        }
        m.security = Some(all);
    }
    m
}

/// Scores what was measured, gathers the warnings and gates: the report. A shard's report is
/// scored over its slice and not gated.
pub fn assemble(
    plan: &Plan<'_>,
    ds: &Datasets,
    measured: Measured,
    mut warnings: Vec<String>,
) -> Report {
    let (part, baseline, gate_context) = (plan.part, plan.baseline, plan.gate);
    let (robustness, failure) = (measured.robustness, measured.failure);
    let mut retrieval = None;
    let mut system_warnings = Vec::new();
    if let (Some(m), Some(c), Some(g)) = (measured.retrieval, &ds.corpus, &ds.golden) {
        let slice = plan.measure.shard.map(|s| shard::golden_slice(&g.value, s));
        let golden = slice.as_ref().unwrap_or(&g.value);
        let mut scored = score::retrieval(m.observations, &c.value, golden);
        scored.catalog = m.coverage;
        warnings.extend(m.system_warnings.iter().cloned());
        system_warnings = m.system_warnings;
        if let Some(cov) = scored.catalog.as_ref().filter(|c| !c.complete()) {
            warnings.push(format!(
                "measured over an incomplete catalog ([sut.catalog] allow_partial): {}",
                cov.summary()
            ));
        }
        let d = &scored.diagnostics;
        // every answer empty in a whole run is its failure ([`measure::found_nothing`])
        if d.empty_answers * 2 > d.answers
            && (plan.measure.shard.is_some() || d.empty_answers < d.answers)
        {
            warnings.push(format!(
                "{} of {} answers were empty: most queries found nothing, the numbers describe a system that hardly answers",
                d.empty_answers, d.answers
            ));
        }
        if d.unstable_queries > 0 {
            warnings.push(format!(
                "{} of {} queries scored differently in different runs: the system does not answer identical queries identically, so the spread is its own, not the data's",
                d.unstable_queries,
                golden.queries.len()
            ));
        }
        retrieval = Some(scored);
    }
    // probes follow a measurement that went through; nothing follows one that did not
    let robustness = robustness.filter(|_| failure.is_none());
    let security = match (measured.security, &ds.security) {
        (Some(obs), Some(s)) if !measured.retrieval_failed => Some(match plan.measure.shard {
            Some(sh) => score::security(&obs, &shard::security_slice(&s.value, sh)),
            None => score::security(&obs, &s.value),
        }),
        _ => None,
    };
    warnings.extend(dataset::summarize_warnings(&ds.warnings));
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
    let known = baseline.and_then(|b| b.baseline.security.as_ref());
    if let (Some(s), Some(b)) = (&security, known) {
        let limits = gate_context.new_detector;
        let held: Vec<String> = [
            limits.fpr_ceiling.map(|c| format!("FPR ≤ {c:.2}")),
            limits.recall_floor.map(|f| format!("recall ≥ {f:.2}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        for d in &s.detectors {
            if !b.detectors.contains_key(&d.detector) {
                let review = d.tier == Some(score::model::Tier::Review);
                let undefined = ["fpr", "recall"]
                    .iter()
                    .all(|m| d.metrics.get(*m).and_then(|s| s.mean).is_none());
                warnings.push(if undefined {
                    format!("the baseline has no entry for detector {:?}, and it judged no entry (FPR and recall 0/0): its numbers are reported, not gated", d.detector)
                } else if held.is_empty() || review {
                    format!("the baseline has no entry for detector {:?}: its numbers are reported, not gated", d.detector)
                } else {
                    format!(
                        "the baseline has no entry for detector {:?}: it is held to the limits for a new detector ({}; [gate] new_detector_* in evalgate.toml)",
                        d.detector,
                        held.join(", ")
                    )
                });
            }
        }
    }
    let usable = baseline.map(|b| {
        let system = retrieval.as_ref().map(|r| r.retriever.as_str());
        let u = b.for_system(system, &gate_context.update_command, &mut warnings);
        (b.name.as_str(), u)
    });
    // the gate first, over what was measured; the report is assembled with its outcome
    let (ret, sec) = (retrieval.as_ref(), security.as_ref());
    let inputs = gate::GateInputs {
        retrieval: ret,
        security: sec,
        robustness: robustness.as_ref(),
        failure: failure.as_ref().map(ToString::to_string),
    };
    let against = usable.as_ref().map(|(n, b)| (*n, b));
    let mut gate = gate::evaluate(&inputs, against, gate_context);
    let shard = plan.measure.shard.map(|sh| {
        if gate.verdict != gate::Verdict::Error {
            gate = gate::shard_outcome(sh);
        }
        let span = |n| [sh.range(n).start, sh.range(n).end];
        let queries = ds.golden.as_ref().map(|g| span(g.value.queries.len()));
        let entries = ds.security.as_ref().map(|s| span(s.value.entries.len()));
        ShardRef {
            index: sh.index,
            count: sh.count,
            queries: queries.filter(|_| part != Part::Security),
            entries: entries.filter(|_| part != Part::Retrieval),
            system_warnings,
            update_command: gate_context.update_command.clone(),
        }
    });
    // the scorecard of a whole run (a shard's is made when the shards are merged)
    let scorecard = plan.measure.shard.is_none().then(|| {
        let mut sc = score::scorecard::scorecard(&score::scorecard::Inputs {
            retrieval: ret,
            security: sec,
            robustness: robustness.as_ref(),
            failure: failure.as_ref(),
            corpus_tools: ds.corpus.as_ref().map(|c| c.value.tools.len()),
        });
        sc.against(usable.as_ref().and_then(|(_, b)| b.scorecard.as_ref()));
        sc
    });
    Report {
        schema_version: REPORT_SCHEMA_VERSION,
        evalgate_version: env!("CARGO_PKG_VERSION").to_string(),
        command: part.command().to_string(),
        runs: plan.measure.runs,
        datasets: ds.refs(),
        dataset_profile: ds.profile,
        shard,
        retrieval,
        security,
        robustness,
        scorecard,
        gate,
        failure,
        warnings,
        observations_file: None,
    }
}

/// Loads, validates, builds the systems, measures and gates. Dataset, settings and baseline
/// problems are errors (exit 2); a system that cannot be brought up or measured becomes the
/// report's failure (exit 3). Every child process is stopped before this returns.
pub async fn evaluate(s: &Settings, part: Part, use_baseline: bool) -> anyhow::Result<Report> {
    let ds = Datasets::load(&s.datasets, part.need(), s.profile)?;
    // a shard is not gated (the merge is), so it has no baseline to choose
    let wanted = use_baseline && s.measure.shard.is_none();
    let update = update_command(&std::env::args().collect::<Vec<_>>());
    let (chosen, gate_context, warnings) = gate_policy(s, &ds, wanted, update)?;
    let sup = Supervisor::new();
    let mut detectors = match part {
        Part::Retrieval => Vec::new(),
        _ => make_detectors(&s.detectors, &s.detector_settings, &sup)?,
    };
    sup.install_signal_handlers();
    // a system that could not be built measures nothing: its failure is the report's
    let (retriever, failed) = match part {
        Part::Security => (None, None),
        _ => match make_retriever(&s.sut, &ds, &sup).await {
            Err(e) => {
                sup.shutdown(Duration::from_secs(3)).await;
                return Err(e);
            }
            Ok(Ok(r)) => (Some(r), None),
            Ok(Err(e)) => (None, Some(e)),
        },
    };
    let mut progress = Progress::new(!s.report.quiet);
    let part = failed.as_ref().map_or(part, |_| Part::Retrieval);
    let plan = Plan::of(s, part, chosen.as_ref(), &gate_context);
    let r = retriever.as_deref();
    let measured = measure_all(&plan, &ds, r, &mut detectors, &mut progress).await;
    let mut report = assemble(&plan, &ds, measured, warnings);
    drop(retriever);
    if let Some(e) = failed {
        report.failure = Some(e);
        let baseline = chosen.as_ref().map(|b| (b.name.as_str(), &b.baseline));
        report.gate = gate::evaluate(&report.gate_inputs(), baseline, &gate_context);
    }
    sup.shutdown(Duration::from_secs(3)).await;
    // The datasets are freed here, before the reports are rendered: rendering reuses their
    // memory, which keeps the run's peak memory down.
    drop(ds);
    Ok(report)
}

/// How long a run waits for another one writing into the same report directory.
const REPORT_LOCK_WAIT: Duration = Duration::from_secs(600);

/// `run`, `retrieval`, `security`: returns the exit code.
pub async fn cmd_eval(args: &EvalArgs, d: &Delivery, part: Part) -> anyhow::Result<i32> {
    let s = Settings::resolve(args).map_err(bad_input)?;
    refuse_inapplicable(args, &s, part)?;
    let github_timeout = github_timeout(&d.publish)?;
    let report = evaluate(&s, part, true).await?;
    deliver(report, &s, &d.publish, github_timeout).await
}

/// Writes the report's files, shows it, publishes it when asked or inside GitHub Actions (a
/// shard's report is not published: the merge is) and returns the exit code.
pub(crate) async fn deliver(
    report: Report,
    s: &Settings,
    publish_args: &PublishArgs,
    github_timeout: Duration,
) -> anyhow::Result<i32> {
    let (out, shard) = (&s.report, s.measure.shard);
    // no credential evalgate was given reaches a report, the terminal or GitHub
    let mut report = secrets::scrub_value(report);
    // the raw observations in a file of their own when asked (report.json then names it)
    let observations = out
        .observations
        .file_name()
        .map(|name| report.detach_observations(name));
    // held until the reports are written and published: a run given the same --out waits, so
    // the directory's files always come from one run
    let _lock = files::lock_dir(&out.out, REPORT_LOCK_WAIT)?;
    // every section computed once, laid out by each format
    let view = report::view::View::of(&report);
    let written = report::write_all(&report, &view, &out.out, observations.as_ref())?;
    drop(observations);
    if !out.quiet {
        let color = out.color.enabled();
        crate::out!("{}", report::terminal::render_view(&report, &view, color));
        for w in &report.warnings {
            crate::errln!("warning: {}", sanitize::visible_lines(w));
        }
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        crate::errln!("reports: {}", names.join(", "));
    } else {
        // quiet: nothing on success, but a failure still says why
        crate::err!("{}", report::terminal::quiet(&report));
    }
    let env = publish::env::GhEnv::from_env();
    if publish::plan::publishes(publish_args.publish, env.actions) {
        if let Some(sh) = shard {
            crate::errln!(
                "github: shard {sh} is not published: `evalgate merge` publishes the joined report"
            );
        } else {
            publish_cmd::post(&report, &out.out, publish_args, &env, None, github_timeout).await;
        }
    }
    let code = publish::exit_code(&report, publish_args.fail_on);
    // The process exits next: the report's memory goes with it instead of being freed piece
    // by piece (nothing is allocated after this point, so the peak is unchanged).
    std::mem::forget(report);
    Ok(code)
}
