//! What each command does: load and validate, pick the systems under test, measure, score,
//! gate, render. The CLI module only parses; tests drive these functions directly too.

use crate::baseline::{self, Baseline};
use crate::cli::{
    BaselineUpdateArgs, ColorChoice, DatasetArgs, DetectorKind, EvalArgs, RetrieverKind,
};
use crate::dataset::{DatasetPaths, Datasets, Need};
use crate::measure::{self, Limits, Progress};
use crate::report::{self, model::*};
use crate::score;
use crate::sut::{Detector, Retriever, embedded::Embedded, recorded};
use anyhow::{Context, bail};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    DatasetPaths {
        corpus: d.corpus.clone(),
        golden: d.golden.clone(),
        security: d.security.clone(),
    }
}

/// The baseline in use and where it came from.
pub struct ChosenBaseline {
    pub name: String,
    pub baseline: Baseline,
}

/// Picks the baseline: an explicit file (errors are fatal), else `baselines/default.json` in the
/// working directory, else the embedded one when the embedded datasets are in use. An implicit
/// baseline measured on other datasets is ignored with a warning; an explicit one is an error.
pub fn choose_baseline(
    args: &EvalArgs,
    ds: &Datasets,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Option<ChosenBaseline>> {
    if args.no_baseline {
        return Ok(None);
    }
    let (name, b, explicit) = if let Some(p) = &args.baseline {
        let b = Baseline::load(p).map_err(|e| BadInput(format!("{e:#}")))?;
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
    for (kind, version, sha) in dataset_pins(ds) {
        if let Some(pin) = b.datasets.get(kind) {
            if pin.version != version {
                mismatches.push(format!(
                    "{kind}: baseline measured on {:?}, this run uses {:?}",
                    pin.version.as_deref().unwrap_or("unversioned"),
                    version.as_deref().unwrap_or("unversioned")
                ));
            } else if pin.sha256 != sha {
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
        return Ok(None);
    }
    Ok(Some(ChosenBaseline { name, baseline: b }))
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

fn need_recorded(args: &EvalArgs) -> anyhow::Result<&Path> {
    args.recorded
        .as_deref()
        .ok_or_else(|| BadInput("the `recorded` system needs --recorded FILE (a report.json or a plain JSON file of observations)".into()).into())
}

/// Builds the retriever the flags ask for.
pub fn make_retriever(args: &EvalArgs, ds: &Datasets) -> anyhow::Result<Box<dyn Retriever>> {
    let corpus = &ds.corpus.as_ref().context("no corpus loaded")?.value;
    Ok(match args.retriever {
        RetrieverKind::Embedded => {
            Box::new(Embedded::new(corpus).context("building the BM25 index")?)
        }
        RetrieverKind::Recorded => Box::new(
            recorded::RecordedRetriever::from_file(need_recorded(args)?)
                .map_err(|e| BadInput(format!("{e:#}")))?,
        ),
    })
}

/// Builds the detectors the flags ask for, in order, without duplicates.
pub fn make_detectors(args: &EvalArgs) -> anyhow::Result<Vec<Box<dyn Detector>>> {
    let mut out: Vec<Box<dyn Detector>> = Vec::new();
    let mut seen = Vec::new();
    for k in &args.detectors {
        if seen.contains(k) {
            continue;
        }
        seen.push(*k);
        match k {
            DetectorKind::Rules => out.push(Box::new(crate::sut::rules::Rules)),
            DetectorKind::Drift => out.push(Box::new(crate::sut::drift::Drift)),
            DetectorKind::Recorded => {
                let recs = recorded::RecordedDetector::from_file(need_recorded(args)?)
                    .map_err(|e| BadInput(format!("{e:#}")))?;
                out.extend(recs.into_iter().map(|r| Box::new(r) as Box<dyn Detector>));
            }
        }
    }
    if out.is_empty() {
        bail!(BadInput(
            "no detector selected: pass --detectors rules,drift (or recorded)".into()
        ));
    }
    Ok(out)
}

/// How to evaluate: which part, how many runs, time limits, and the baseline to gate against.
#[derive(Clone, Copy)]
pub struct Plan<'a> {
    pub part: Part,
    pub runs: usize,
    pub limits: Limits,
    pub baseline: Option<&'a ChosenBaseline>,
}

/// Measures and scores with the given systems; the report's gate is evaluated against
/// `baseline`. Never fails for a misbehaving system: that becomes `report.failure`.
pub async fn evaluate_with(
    plan: &Plan<'_>,
    ds: &Datasets,
    retriever: Option<&mut dyn Retriever>,
    detectors: &mut [Box<dyn Detector>],
    progress: &mut Progress,
    mut warnings: Vec<String>,
) -> Report {
    let Plan {
        part,
        runs,
        limits,
        baseline,
    } = *plan;
    let mut failure = None;
    let mut retrieval = None;
    let mut security = None;
    if part != Part::Security
        && let (Some(r), Some(c), Some(g)) = (retriever, &ds.corpus, &ds.golden)
    {
        let (obs, err) = measure::retrieval(r, &g.value, runs, limits, progress).await;
        retrieval = Some(score::retrieval(&obs, &c.value, &g.value));
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
    warnings.extend(ds.warnings.iter().map(|w| w.to_string()));
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
    let mut report = Report {
        schema_version: REPORT_SCHEMA_VERSION,
        evalgate_version: env!("CARGO_PKG_VERSION").to_string(),
        command: part.command().to_string(),
        runs,
        datasets: dataset_refs(ds),
        retrieval,
        security,
        gate: GateReport {
            verdict: Verdict::NoBaseline,
            baseline: None,
            summary: String::new(),
            checks: vec![],
            worst_queries: vec![],
        },
        failure: None,
        warnings,
    };
    if let (Some(s), Some(b)) = (
        &report.security,
        baseline.and_then(|b| b.baseline.security.as_ref()),
    ) {
        for d in &s.detectors {
            if !b.detectors.contains_key(&d.detector) {
                report.warnings.push(format!("the baseline has no entry for detector {:?}: its numbers are reported, not gated", d.detector));
            }
        }
    }
    let failed = failure.is_some();
    report.failure = failure;
    report.gate = crate::gate::evaluate(
        &report,
        baseline.map(|b| (b.name.as_str(), &b.baseline)),
        failed,
    );
    report
}

fn limits(args: &EvalArgs) -> anyhow::Result<Limits> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        bail!(BadInput(format!(
            "--timeout must be a positive number of seconds, got {}",
            args.timeout
        )));
    }
    Ok(Limits {
        request_timeout: Duration::from_secs_f64(args.timeout),
    })
}

/// Loads, validates, measures and gates. Dataset and baseline problems are errors (exit 2).
pub async fn evaluate(
    args: &EvalArgs,
    part: Part,
    use_baseline: bool,
) -> anyhow::Result<(Report, Option<ChosenBaseline>)> {
    let ds = Datasets::load(&paths(&args.datasets), part.need())?;
    let mut warnings = Vec::new();
    let chosen = if use_baseline {
        choose_baseline(args, &ds, &mut warnings)?
    } else {
        None
    };
    let limits = limits(args)?;
    let mut retriever = if part != Part::Security {
        Some(make_retriever(args, &ds)?)
    } else {
        None
    };
    let mut detectors = if part != Part::Retrieval {
        make_detectors(args)?
    } else {
        Vec::new()
    };
    let mut progress = Progress::new(!args.quiet);
    let r: Option<&mut dyn Retriever> = match retriever.as_mut() {
        Some(b) => Some(b.as_mut()),
        None => None,
    };
    let plan = Plan {
        part,
        runs: args.runs as usize,
        limits,
        baseline: chosen.as_ref(),
    };
    let report = evaluate_with(&plan, &ds, r, &mut detectors, &mut progress, warnings).await;
    Ok((report, chosen))
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

/// `run`, `retrieval`, `security`: returns the exit code.
pub async fn cmd_eval(args: &EvalArgs, part: Part) -> anyhow::Result<i32> {
    let (report, _) = evaluate(args, part, true).await?;
    let written = report::write_all(&report, &args.out)?;
    if !args.quiet {
        print!("{}", report::terminal::render(&report, color(args.color)));
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        eprintln!("reports: {}", names.join(", "));
    }
    Ok(report.gate.verdict.exit_code())
}

/// `validate`: exit 0 when valid; dataset errors propagate (exit 2).
pub fn cmd_validate(args: &DatasetArgs) -> anyhow::Result<i32> {
    let ds = Datasets::load(
        &paths(args),
        Need {
            retrieval: true,
            security: true,
        },
    )?;
    for w in &ds.warnings {
        eprintln!("{w}");
    }
    for d in dataset_refs(&ds) {
        println!(
            "ok  {:<8} {} ({}, {} items)",
            d.kind,
            d.source,
            d.version.as_deref().unwrap_or("unversioned"),
            d.items
        );
    }
    Ok(0)
}

/// `baseline update`.
pub async fn cmd_baseline_update(a: &BaselineUpdateArgs) -> anyhow::Result<i32> {
    let output: PathBuf = a
        .output
        .clone()
        .or_else(|| a.eval.baseline.clone())
        .unwrap_or_else(|| PathBuf::from(baseline::DEFAULT_PATH));
    let previous = if output.is_file() {
        Some(Baseline::load(&output).map_err(|e| BadInput(format!("{e:#}")))?)
    } else {
        None
    };
    let report: Report = match &a.from {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("{}: cannot read the report", p.display()))
                .map_err(|e| BadInput(format!("{e:#}")))?;
            serde_json::from_str(&text).map_err(|e| {
                BadInput(format!(
                    "{}:{}:{}: expected an evalgate report.json: {e}",
                    p.display(),
                    e.line(),
                    e.column()
                ))
            })?
        }
        None => evaluate(&a.eval, Part::Both, false).await?.0,
    };
    if let Some(f) = &report.failure {
        eprintln!(
            "error: the system under test could not be measured, the baseline is not written: {f}"
        );
        return Ok(3);
    }
    let new = Baseline::from_report(&report, previous.as_ref());
    let changes = baseline_changes(previous.as_ref(), &new);
    if changes.is_empty() {
        println!("baseline {} is unchanged", output.display());
        return Ok(0);
    }
    println!("{} change(s) to {}:", changes.len(), output.display());
    for c in &changes {
        println!("  {c}");
    }
    if a.dry_run {
        println!("dry run: nothing written");
        return Ok(0);
    }
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    let tmp = output.with_extension("json.tmp");
    std::fs::write(&tmp, new.to_json())
        .with_context(|| format!("{}: cannot write", tmp.display()))?;
    std::fs::rename(&tmp, &output)
        .with_context(|| format!("{}: cannot write", output.display()))?;
    println!("wrote {}", output.display());
    Ok(0)
}

/// Human-readable list of what differs between two baselines.
pub fn baseline_changes(old: Option<&Baseline>, new: &Baseline) -> Vec<String> {
    let mut out = Vec::new();
    let f = |v: Option<f64>| v.map_or("undefined".to_string(), |x| format!("{x:.4}"));
    if old.is_none() {
        out.push("new baseline file".to_string());
    }
    for (kind, pin) in &new.datasets {
        let o = old.and_then(|o| o.datasets.get(kind));
        if o != Some(pin) {
            out.push(format!(
                "datasets.{kind}: {:?} → {:?} (sha256 {})",
                o.and_then(|o| o.version.clone()),
                pin.version,
                &pin.sha256[..12.min(pin.sha256.len())]
            ));
        }
    }
    if let Some(r) = &new.retrieval {
        let or = old.and_then(|o| o.retrieval.as_ref());
        for (k, m) in &r.metrics {
            let ov = or.and_then(|o| o.metrics.get(k)).and_then(|m| m.value);
            if or.and_then(|o| o.metrics.get(k)).is_none() || ov != m.value {
                out.push(format!("retrieval.{k}: {} → {}", f(ov), f(m.value)));
            }
        }
        if or.is_some_and(|o| o.retriever != r.retriever) {
            out.push(format!(
                "retrieval.retriever: {:?} → {:?}",
                or.map(|o| o.retriever.clone()).unwrap_or_default(),
                r.retriever
            ));
        }
        let changed_q = r
            .per_query
            .iter()
            .filter(|(id, v)| or.and_then(|o| o.per_query.get(*id)) != Some(v))
            .count();
        if changed_q > 0 {
            out.push(format!(
                "retrieval.per_query: {changed_q} quer(ies) changed"
            ));
        }
    }
    if let Some(s) = &new.security {
        let os = old.and_then(|o| o.security.as_ref());
        for (d, db) in &s.detectors {
            let od = os.and_then(|o| o.detectors.get(d));
            if od.is_none() {
                out.push(format!(
                    "security.{d}: new detector (FPR ceiling {}, recall floor {})",
                    f(db.fpr_ceiling),
                    f(db.recall_floor)
                ));
            }
            for (k, m) in &db.metrics {
                let ov = od.and_then(|o| o.metrics.get(k)).and_then(|m| m.value);
                if od.is_some() && ov != m.value {
                    out.push(format!("security.{d}.{k}: {} → {}", f(ov), f(m.value)));
                }
            }
        }
    }
    out
}

fn split_pair(s: &str, sep: char, what: &str) -> anyhow::Result<(String, String)> {
    s.split_once(sep)
        .map(|(k, v)| (k.trim().to_string(), v.trim_start().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| BadInput(format!("{what} {s:?}: expected NAME{sep}VALUE")).into())
}

/// `corpus snapshot`.
pub async fn cmd_snapshot(a: &crate::cli::SnapshotArgs) -> anyhow::Result<i32> {
    use crate::mcp::Endpoint;
    use crate::snapshot;
    let ep = match (&a.url, a.command.split_first()) {
        (Some(url), _) => Endpoint::Http {
            url: url.clone(),
            headers: a.headers.iter().map(|h| split_pair(h, ':', "--header")).collect::<anyhow::Result<_>>()?,
        },
        (None, Some((program, args))) => Endpoint::Stdio {
            program: program.clone(),
            args: args.to_vec(),
            env: a.env.iter().map(|e| split_pair(e, '=', "--env")).collect::<anyhow::Result<_>>()?,
            cwd: None,
        },
        (None, None) => bail!(BadInput("give the server command after `--`, or --url for a streamable-HTTP server".into())),
    };
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        bail!(BadInput(format!("--timeout must be a positive number of seconds, got {}", a.timeout)));
    }
    let prov = snapshot::Provenance { registry: a.registry.clone(), package: a.package.clone(), version: a.package_version.clone(), license: a.license.clone() };
    let taken_at = a.taken.clone().unwrap_or_else(|| snapshot::rfc3339(std::time::SystemTime::now()));
    let mut corpus = match (&a.out, a.merge) {
        (Some(p), true) if p.is_file() => snapshot::read(p).map_err(|e| BadInput(format!("{e:#}")))?,
        _ => snapshot::empty(&a.corpus_version),
    };
    let taken = match snapshot::take(&a.server, &ep, &prov, &taken_at, Duration::from_secs_f64(a.timeout)).await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: snapshot of server {:?} failed: {e:#}", a.server);
            return Ok(3);
        }
    };
    let n = taken.tools.len();
    snapshot::merge(&mut corpus, taken);
    match &a.out {
        Some(p) => {
            snapshot::write(p, &corpus)?;
            eprintln!("{}: {n} tool(s) from {:?}; {} tool(s) from {} server(s) in all", p.display(), a.server, corpus.tools.len(), corpus.servers.len());
        }
        None => print!("{}", snapshot::to_json(&corpus)),
    }
    Ok(0)
}

/// `replay`: a stdio MCP server; nothing but protocol goes to stdout.
pub async fn cmd_replay(a: &crate::cli::ReplayArgs) -> anyhow::Result<i32> {
    let ds = Datasets::load(
        &DatasetPaths { corpus: a.corpus.clone(), golden: None, security: a.security.clone() },
        Need { retrieval: false, security: a.security.is_some() },
    )?;
    let corpus_text;
    let corpus = match &a.corpus {
        Some(p) => {
            corpus_text = crate::dataset::load::read_file(p).map_err(|v| BadInput(v.to_string()))?;
            let mut errs = Vec::new();
            let c = crate::dataset::load::corpus(crate::dataset::Source::new(p.display().to_string(), false, &corpus_text), &corpus_text, &mut errs);
            crate::dataset::validate::corpus(c.as_ref().context("corpus")?, &mut errs);
            if !errs.is_empty() {
                return Err(crate::dataset::DatasetErrors(errs).into());
            }
            c.context("corpus")?.value
        }
        None => serde_json::from_str(crate::dataset::embedded::CORPUS)?,
    };
    let spec = crate::replay::ReplaySpec::new(Some(&corpus), ds.security.as_ref().map(|s| &s.value), &a.server, a.rug_pull)
        .map_err(|e| BadInput(format!("{e:#}")))?;
    crate::replay::serve_stdio(spec).await?;
    Ok(0)
}

/// `proxy`: serves until killed.
pub async fn cmd_proxy(a: &crate::cli::ProxyArgs) -> anyhow::Result<i32> {
    crate::proxy::run(&a.config, &a.listen, a.fault).await.map_err(|e| BadInput(format!("{e:#}")))?;
    Ok(0)
}
