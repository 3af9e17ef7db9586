//! `evalgate baseline update` and `evalgate baseline import`.

use super::{BadInput, Part, evaluate};
use crate::cli::{BaselineImportArgs, BaselineUpdateArgs, EvalArgs};
use crate::config::Settings;
use crate::infra::files;
use crate::infra::secrets;
use crate::infra::text::sanitize;
use crate::pipeline::baseline::{self, Baseline, DatasetPin};
use crate::pipeline::gate::ExitCode;
use crate::pipeline::measure::probes::RobustnessMode;
use crate::pipeline::report::model::Report;
use crate::pipeline::report::scorecard;
use crate::pipeline::score::scorecard::ScorecardBaseline;
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `baseline update`.
pub async fn cmd_baseline_update(a: &BaselineUpdateArgs, args: &EvalArgs) -> anyhow::Result<i32> {
    let eval = EvalArgs {
        // probes are not part of a baseline
        robustness: Some(RobustnessMode::Off),
        ..args.clone()
    };
    // with --from the numbers come from the report: a flag choosing how to measure cannot apply
    let measuring: Vec<&str> = eval
        .given
        .iter()
        .map(String::as_str)
        .filter(|f| !["--from", "--output", "--baseline", "--dry-run", "--quiet"].contains(f))
        .collect();
    if a.from.is_some() && !measuring.is_empty() {
        return Err(BadInput(format!(
            "--from takes the numbers from a report, so {} cannot apply (they choose how to measure)",
            measuring.join(", ")
        ))
        .into());
    }
    let output: PathBuf = a
        .output
        .clone()
        .or_else(|| a.baseline.clone())
        .unwrap_or_else(|| PathBuf::from(baseline::DEFAULT_PATH));
    // the thresholds come from the baseline in use (--baseline), else from the file rewritten
    let kept = a.baseline.as_ref().unwrap_or(&output);
    let previous = kept.is_file().then(|| Baseline::load(kept).map(|(b, _)| b));
    let previous = previous.transpose().map_err(super::bad_input)?;
    let report: Report = match &a.from {
        Some(p) => super::read_report_json(p)?,
        None => {
            let s = Settings::resolve(&eval).map_err(super::bad_input)?;
            super::refuse_inapplicable(&eval, &s, Part::Both)?;
            evaluate(&s, Part::Both, false).await?
        }
    };
    if let (Some(sh), Some(p)) = (&report.shard, &a.from) {
        return Err(BadInput(format!(
            "{} is the report of shard {} only: a baseline is written from the whole run (`evalgate merge` the shards' reports, then --from the merged report.json)",
            p.display(),
            sh.shard()
        ))
        .into());
    }
    if let Some(f) = &report.failure {
        crate::errln!(
            "error: the system under test could not be measured, the baseline is not written: {}",
            sanitize::visible_lines(&secrets::scrub(&f.to_string()))
        );
        return Ok(ExitCode::SUT_FAILED);
    }
    // what the run's reader would be warned of, its baseline's writer is too
    if !args.quiet {
        for w in &report.warnings {
            crate::errln!("warning: {}", sanitize::visible_lines(&secrets::scrub(w)));
        }
    }
    let new = report.to_baseline(previous.as_ref());
    let changes = baseline_changes(previous.as_ref(), &new);
    match (kept == &output, changes.len()) {
        (true, 0) => {
            crate::outln!("baseline {} is unchanged", output.display());
            return Ok(ExitCode::PASS);
        }
        (true, n) => crate::outln!("{n} change(s) to {}:", output.display()),
        // another file is written, even when nothing changed
        (false, 0) => crate::outln!("no change against {}", kept.display()),
        (false, n) => crate::outln!("{n} change(s) against {}:", kept.display()),
    }
    for c in &changes {
        crate::outln!("  {}", sanitize::visible(&c.to_string()));
    }
    write(&output, &new, a.dry_run)
}

/// Writes a baseline file whole (a temporary file renamed into place), or nothing on a dry run.
fn write(output: &std::path::Path, b: &Baseline, dry_run: bool) -> anyhow::Result<i32> {
    if dry_run {
        crate::outln!("dry run: nothing written");
        return Ok(ExitCode::PASS);
    }
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    files::write_atomic(output, b.to_json().as_bytes())?;
    crate::outln!("wrote {}", output.display());
    Ok(ExitCode::PASS)
}

/// `baseline import`: another tool's baseline (mcp-eval's format) rewritten in evalgate's.
pub fn cmd_baseline_import(a: &BaselineImportArgs) -> anyhow::Result<i32> {
    let (b, note) = Baseline::load(&a.file).map_err(super::bad_input)?;
    let Some(note) = note else {
        return Err(BadInput(format!(
            "{}: already an evalgate baseline (it has a schema_version); nothing to import",
            a.file.display()
        ))
        .into());
    };
    crate::outln!("{note}");
    if a.dry_run {
        crate::out!("{}", b.to_json());
    }
    write(&a.output, &b, a.dry_run)
}

/// "`what`: N `unit` changed" when `old` does not hold N of `new`'s entries as they are;
/// with `say_none`, a list the old baseline did not keep is said to be new.
fn changed<V: PartialEq>(
    (what, unit): (&str, &str),
    new: &BTreeMap<String, V>,
    old: Option<&BTreeMap<String, V>>,
    say_none: bool,
) -> Option<String> {
    let kept = |k: &String| old.and_then(|o| o.get(k));
    let n = new.iter().filter(|(k, v)| kept(k) != Some(v)).count();
    let note = if say_none && old.is_none() {
        " (none kept before)"
    } else {
        ""
    };
    (n > 0).then(|| format!("{what}: {n} {unit} changed{note}"))
}

/// Human-readable list of what differs between two baselines.
fn baseline_changes(old: Option<&Baseline>, new: &Baseline) -> Vec<String> {
    let mut out = Vec::new();
    let f = |v: Option<f64>| v.map_or("undefined".to_string(), |x| format!("{x:.4}"));
    if old.is_none() {
        out.push("new baseline file".to_string());
    }
    for (kind, pin) in &new.datasets {
        let o = old.and_then(|o| o.datasets.get(kind));
        if o != Some(pin) {
            let show = |p: Option<&DatasetPin>| match p {
                Some(p) => format!(
                    "{} (sha256 {})",
                    p.version.as_deref().unwrap_or("unversioned"),
                    sanitize::short_hash(&p.sha256, 12)
                ),
                None => "none".into(),
            };
            out.push(format!(
                "datasets.{kind}: {} → {}",
                show(o),
                show(Some(pin))
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
        if let Some(o) = or.filter(|o| o.retriever != r.retriever) {
            let (was, now) = (&o.retriever, &r.retriever);
            out.push(format!("retrieval.retriever: {was:?} → {now:?}"));
        }
        let what = ("retrieval.per_query", "quer(ies)");
        out.extend(changed(what, &r.per_query, or.map(|o| &o.per_query), false));
        if let Some(ranked) = &r.per_query_ranked {
            let was = or.and_then(|o| o.per_query_ranked.as_ref());
            let what = ("retrieval.per_query_ranked", what.1);
            out.extend(changed(what, ranked, was, true));
        }
        let old_pairs = or.and_then(|o| o.confusions.as_ref());
        if r.confusions.is_some() && r.confusions.as_ref() != old_pairs {
            let count = |m: Option<&BTreeMap<String, BTreeMap<String, usize>>>| {
                m.map_or(0, |m| m.values().map(BTreeMap::len).sum::<usize>())
            };
            out.push(format!(
                "retrieval.confusions: {} → {} pair(s)",
                old_pairs.map_or("none kept".into(), |p| count(Some(p)).to_string()),
                count(r.confusions.as_ref())
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
            if let (Some(od), Some(v)) = (od, &db.verdicts) {
                let what = format!("security.{d}.verdicts");
                out.extend(changed((&what, "entr(ies)"), v, od.verdicts.as_ref(), true));
            }
        }
    }
    if let Some(sc) = &new.scorecard {
        // the scorecard (docs/scorecard.md): what a later run's Δ is against
        let os = old.and_then(|o| o.scorecard.as_ref());
        // latency is the machine's as much as the system's: a scorecard that differs only in
        // its performance points (and so its total) is not a change to write
        fn but_latency(s: &ScorecardBaseline) -> (u32, Vec<(&String, &Option<f64>)>) {
            let d = s
                .dimensions
                .iter()
                .filter(|(k, _)| k.as_str() != "performance")
                .collect();
            (s.rubric, d)
        }
        if os.map(but_latency) != Some(but_latency(sc)) {
            let t = |s: Option<&ScorecardBaseline>| match s.map(|s| s.total) {
                None => "none".to_string(),
                Some(None) => "not measured".to_string(),
                Some(Some(t)) => format!("{}/100", scorecard::points(t)),
            };
            out.push(format!("scorecard: {} → {}", t(os), t(Some(sc))));
        }
    }
    out
}
