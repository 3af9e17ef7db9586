//! `evalgate merge`: the shards of a sharded run (`--shard i/n`) joined into the report the
//! unsharded run would have written. Each shard's report keeps its raw observations; they are
//! put back in dataset order and go through the same scoring, gate and renderers as a run's
//! ([`super::assemble`]), so the numbers are the same to the last digit.

use super::{BadInput, Measured, Part, Plan, RetrievalMeasured, assemble, gate_policy};
use crate::cli::{EvalArgs, MergeArgs};
use crate::config::Settings;
use crate::pipeline::dataset::Datasets;
use crate::pipeline::dataset::shard::{Shard, ShardRef};
use crate::pipeline::measure;
use crate::pipeline::report::model::Report;
use crate::pipeline::sut::observe::ObservationsFile;
use std::path::PathBuf;

/// `merge`: returns the exit code (the merged run's, as `run` would).
pub async fn cmd_merge(a: &MergeArgs, args: &EvalArgs) -> anyhow::Result<i32> {
    let s = Settings::resolve(args).map_err(super::bad_input)?;
    let github_timeout = super::github_timeout(&a.deliver.publish)?;
    let shards = read_shards(&a.reports)?;
    let first = &shards[0].report;
    let parts = [Part::Both, Part::Retrieval, Part::Security];
    let Some(part) = parts.into_iter().find(|p| p.command() == first.command) else {
        return Err(BadInput(format!(
            "{}: at $.command: expected run, retrieval or security, found {:?}",
            shards[0].path.display(),
            first.command
        ))
        .into());
    };
    let ds = Datasets::load(&s.datasets, part.need(), s.profile)?;
    check_datasets(&shards, &ds)?;
    // the shards' own command (what the unsharded run would quote), else one that writes the
    // baseline from the merged report
    let update_command = match shards[0].shard.update_command.as_str() {
        "" => format!(
            "evalgate baseline update --from {}",
            super::given::shell_word(&s.report.out.join("report.json").display().to_string())
        ),
        theirs => theirs.to_string(),
    };
    let (chosen, policy, warnings) = gate_policy(&s, &ds, true, update_command)?;
    let mut plan = Plan::of(&s, part, chosen.as_ref(), &policy);
    plan.measure.runs = first.runs;
    let report = assemble(&plan, &ds, join(shards, part), warnings);
    drop(ds);
    super::deliver(report, &s, &a.deliver.publish, github_timeout).await
}

/// A shard's report and where it was read from.
struct ShardFile {
    path: PathBuf,
    report: Report,
    shard: ShardRef,
}

/// One thing the shards of a run must agree on, as a shard's report says it.
type Field = fn(&ShardFile) -> String;

/// Every report, checked to be one of the shards 1..n of one run, sorted by index.
fn read_shards(paths: &[PathBuf]) -> Result<Vec<ShardFile>, BadInput> {
    let mut shards = Vec::with_capacity(paths.len());
    for path in paths {
        let mut report = super::read_report_json(path)?;
        // with the observations written beside it (`--observations file|gzip`)
        if let Some(name) = report.observations_file.clone() {
            let side = ObservationsFile::read_beside(path, &name).map_err(super::bad_input)?;
            report.attach_observations(side);
        }
        let Some(shard) = report.shard.clone() else {
            return Err(BadInput(format!(
                "{}: at $.shard: expected the report of one shard (written by `evalgate run --shard INDEX/COUNT`), found a whole run's report",
                path.display()
            )));
        };
        shards.push(ShardFile {
            path: path.clone(),
            report,
            shard,
        });
    }
    shards.sort_by_key(|s| s.shard.index);
    let first = &shards[0];
    let count = first.shard.count;
    let (first_path, first_shard) = (first.path.display(), first.shard.shard());
    let version = env!("CARGO_PKG_VERSION");
    for s in &shards {
        if s.report.evalgate_version != version {
            return Err(BadInput(format!(
                "{}: at $.evalgate_version: written by evalgate {}, this is {version}: merge with the version that measured the shards (scoring must be the same code)",
                s.path.display(),
                s.report.evalgate_version
            )));
        }
        let fields: [(&str, Field); 6] = [
            ("$.shard.count", |s| s.shard.count.to_string()),
            ("$.command", |s| s.report.command.clone()),
            ("$.runs", |s| s.report.runs.to_string()),
            ("$.datasets", |s| {
                let pins = s.report.datasets.iter();
                let pins = pins.map(|d| format!("{} sha256 {}", d.kind, d.sha256));
                pins.collect::<Vec<_>>().join(", ")
            }),
            ("the system under test", |s| {
                let r = s.report.retrieval.as_ref();
                r.map_or("none".into(), |x| format!("{:?}", x.observations.system))
            }),
            ("the detectors", |s| {
                s.report.security.as_ref().map_or("none".into(), |s| {
                    let names: Vec<&str> =
                        s.observations.iter().map(|o| o.detector.as_str()).collect();
                    format!("[{}]", names.join(", "))
                })
            }),
        ];
        for (what, of) in fields {
            let (mine, theirs, path) = (of(first), of(s), s.path.display());
            if mine != theirs {
                return Err(BadInput(format!(
                    "{path}: {what} is {theirs}, but {first_path} (shard {first_shard}) has {mine}: the shards of one run must agree"
                )));
            }
        }
    }
    for w in shards.windows(2) {
        if w[0].shard.index == w[1].shard.index {
            return Err(BadInput(format!(
                "shard {} is given twice: {} and {}",
                w[0].shard.shard(),
                w[0].path.display(),
                w[1].path.display()
            )));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|i| !shards.iter().any(|s| s.shard.index == *i))
        .map(|index| Shard { index, count }.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(BadInput(format!(
            "the run was split in {count} shards and {} missing: {} (pass every shard's report.json)",
            if missing.len() == 1 {
                "this one is"
            } else {
                "these are"
            },
            missing.join(", ")
        )));
    }
    Ok(shards)
}

/// The shards must have measured the datasets loaded here (the same files), each its own slice.
fn check_datasets(shards: &[ShardFile], ds: &Datasets) -> Result<(), BadInput> {
    let ours = ds.refs();
    let theirs = &shards[0].report.datasets;
    for d in theirs {
        let mine = ours.iter().find(|o| o.kind == d.kind);
        if mine.is_none_or(|o| o.sha256 != d.sha256) {
            return Err(BadInput(format!(
                "{}: at $.datasets: the shards measured the {} {} (sha256 {}), and merge loaded {}: give merge the same dataset flags (--datasets, --corpus, --golden, --security-corpus) as the shards",
                shards[0].path.display(),
                d.kind,
                d.source,
                d.sha256,
                mine.map_or("no such file".into(), |o| format!(
                    "{} (sha256 {})",
                    o.source, o.sha256
                ))
            )));
        }
    }
    let expect = |sh: Shard, len: Option<usize>| len.map(|n| sh.range(n)).map(|r| [r.start, r.end]);
    for s in shards {
        let sh = s.shard.shard();
        let queries = expect(sh, ds.golden.as_ref().map(|g| g.value.queries.len()));
        let entries = expect(sh, ds.security.as_ref().map(|x| x.value.entries.len()));
        let part = s.report.command.as_str();
        if (part != "security" && s.shard.queries != queries)
            || (part != "retrieval" && s.shard.entries != entries)
        {
            return Err(BadInput(format!(
                "{}: at $.shard: shard {sh} should cover queries {queries:?} and entries {entries:?} of these datasets, it covers {:?} and {:?}",
                s.path.display(),
                s.shard.queries,
                s.shard.entries
            )));
        }
    }
    Ok(())
}

/// The shards' observations joined in dataset order: run k of the whole is run k of every
/// shard, one after the other. The first shard (by index) that failed is the run's failure.
fn join(shards: Vec<ShardFile>, part: Part) -> Measured {
    let mut m = Measured::default();
    for (i, s) in shards.into_iter().enumerate() {
        let Report {
            retrieval: r,
            security: sec,
            robustness,
            failure,
            ..
        } = s.report;
        if i == 0 {
            // probes are run once, by shard 1
            m.robustness = robustness;
        }
        if m.failure.is_none()
            && let Some(f) = failure
        {
            // a shard that failed in tool discovery measured no detector
            m.retrieval_failed = part != Part::Security && sec.is_none();
            m.failure = Some(f);
        }
        if let Some(r) = r {
            let obs = r.observations;
            match &mut m.retrieval {
                None => {
                    m.retrieval = Some(RetrievalMeasured {
                        observations: obs,
                        coverage: r.catalog,
                        system_warnings: s.shard.system_warnings,
                    })
                }
                Some(joined) => {
                    // each run of the shard is appended to the run with the same number
                    for run in obs.runs {
                        let runs = &mut joined.observations.runs;
                        match runs.iter_mut().find(|r| r.run == run.run) {
                            Some(r) => r.queries.extend(run.queries),
                            None => runs.push(run),
                        }
                    }
                    for w in s.shard.system_warnings {
                        if !joined.system_warnings.contains(&w) {
                            joined.system_warnings.push(w);
                        }
                    }
                }
            }
        }
        if let Some(sec) = sec {
            match &mut m.security {
                None => m.security = Some(sec.observations),
                Some(joined) => {
                    for (j, o) in joined.iter_mut().zip(sec.observations) {
                        for (jr, r) in j.runs.iter_mut().zip(o.runs) {
                            jr.verdicts.extend(r.verdicts);
                        }
                    }
                }
            }
        }
    }
    // a whole run that found nothing fails as an unsharded run does
    if let Some(r) = m.retrieval.as_ref().filter(|_| m.failure.is_none()) {
        m.failure = measure::found_nothing(&r.observations);
        m.retrieval_failed = m.failure.is_some();
    }
    m
}
