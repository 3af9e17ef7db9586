//! `evalgate fitness`: the golden set as the fitness function of a description optimiser.
//!
//! A candidate (`--overrides FILE`, or one per stdin line with `--lines`) is laid over the
//! frozen corpus, the system under test is built over the edited corpus exactly as `evalgate
//! retrieval` builds it (the embedded index in-process; a launched proxy over replay servers
//! serving the edited definitions), every golden query is measured and scored by the same code
//! as a run, and the corpus is restored. So a candidate's numbers are those a full run on the
//! edited corpus reports, to the last digit. The datasets are loaded once for all candidates.

use super::refuse_inapplicable;
use super::{BadInput, Measured, Part, Plan, assemble, make_retriever, measure_all};
use crate::cli::{EvalArgs, FitnessArgs};
use crate::config::Settings;
use crate::infra::files;
use crate::infra::process::Supervisor;
use crate::infra::text::sanitize;
use crate::pipeline::dataset::Datasets;
use crate::pipeline::dataset::overrides::{Overrides, ToolIndex};
use crate::pipeline::gate::{ExitCode, Policy};
use crate::pipeline::measure::Progress;
use crate::pipeline::measure::probes::RobustnessMode;
use crate::pipeline::report::model::{Report, RetrievalReport};
use crate::pipeline::sut::embedded::FieldTexts;
use crate::pipeline::sut::kind::SutKind;
use crate::pipeline::sut::{Retriever, SutError};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// One candidate's score.
#[derive(Debug, Clone, Serialize)]
pub struct FitnessResult {
    /// The input line (`--lines`), counting from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Every golden query: the run's means (`evalgate retrieval`'s `metrics.*.mean`).
    pub overall: Scores,
    /// The same over each split's queries (`dev`, `held_out`) when the golden set marks them.
    pub splits: BTreeMap<String, Scores>,
    /// Each overridden tool, over the queries it is relevant to.
    pub per_tool: BTreeMap<String, ToolScore>,
}

/// Means of the per-query metrics over a set of queries.
#[derive(Debug, Clone, Serialize)]
pub struct Scores {
    pub queries: usize,
    /// Set on the held-out split: an optimiser must not see it (see the README).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub held_out: bool,
    #[serde(flatten)]
    pub metrics: BTreeMap<String, f64>,
}

/// How one tool fares over the queries that label it relevant: its row of the report's
/// per-tool diagnostics (`retrieval.tool_diagnostics.per_tool`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ToolScore {
    /// Queries labelling the tool relevant (grade above 0).
    pub relevant_in: usize,
    /// Of those, the queries with the tool in their top 5.
    pub found_in_top_5: usize,
    /// `found_in_top_5 / relevant_in` (null when it is relevant nowhere).
    pub recall_at_5: Option<f64>,
    /// Mean over those queries of 1 / the tool's rank (0 when it is not in the ranked list).
    pub mrr: Option<f64>,
}

/// The candidates' evaluator: the settings, the datasets loaded once, one owner for the
/// processes a launched system starts.
pub struct Fitness<'a> {
    s: &'a Settings,
    ds: Datasets,
    tools: ToolIndex,
    sup: Supervisor,
    /// The embedded retriever's texts of the unedited corpus (embedded only): a candidate's
    /// index is built from these, with the overridden tools' texts computed afresh.
    texts: Option<FieldTexts>,
}

/// Why a candidate has no score.
#[derive(Debug, thiserror::Error)]
pub enum Unscored {
    /// The candidate is not valid (its JSON path and what was expected).
    #[error("{0}")]
    Input(String),
    /// The system under test could not be measured with it.
    #[error("the system under test failed: {0}")]
    System(SutError),
}

impl<'a> Fitness<'a> {
    /// Loads the datasets; refuses a system whose corpus evalgate does not serve (exit 2).
    pub fn new(s: &'a Settings) -> anyhow::Result<Fitness<'a>> {
        let kind = s.sut.kind();
        if !(kind == SutKind::Embedded || kind.def().launched.is_some()) {
            return Err(BadInput(format!(
                "fitness needs a system whose corpus evalgate serves, so that a candidate's descriptions reach it: embedded, reference, mcpproxy or launch, not `{}` (a running system or a recording has its own corpus)",
                kind.as_str()
            ))
            .into());
        }
        let ds = Datasets::load(&s.datasets, Part::Retrieval.need(), s.profile)?;
        let corpus = ds
            .corpus
            .as_ref()
            .ok_or_else(|| BadInput("no corpus".into()))?;
        let tools = ToolIndex::of(&corpus.value);
        let texts = (kind == SutKind::Embedded).then(|| FieldTexts::of(&corpus.value));
        let texts = texts.transpose()?;
        Ok(Fitness {
            s,
            ds,
            tools,
            sup: Supervisor::new(),
            texts,
        })
    }

    /// Scores one candidate. `Err` with settings that cannot work (exit 2).
    pub async fn score(
        &mut self,
        o: &Overrides,
    ) -> anyhow::Result<Result<FitnessResult, Unscored>> {
        let corpus = &mut self.ds.corpus.as_mut().expect("loaded in new").value;
        let taken = o.apply(corpus);
        let overridden: Vec<usize> = o.positions().collect();
        let measured = self.measure(&overridden).await;
        taken.restore(&mut self.ds.corpus.as_mut().expect("loaded in new").value);
        let report = measured?;
        if let Some(e) = report.failure {
            return Ok(Err(Unscored::System(e)));
        }
        let Some(r) = &report.retrieval else {
            return Ok(Err(Unscored::System(SutError::other(
                self.s.sut.kind().as_str().to_string(),
                "no tool-discovery result",
            ))));
        };
        let tools = &self.ds.corpus.as_ref().expect("loaded").value.tools;
        let ids: Vec<&str> = o.positions().map(|i| tools[i].tool_id.as_str()).collect();
        Ok(Ok(summarise(r, &ids)))
    }

    /// The edited corpus measured and scored as `evalgate retrieval --no-baseline
    /// --robustness off` does (the settings of [`cmd_fitness`]); every process started
    /// for it is stopped before this returns.
    async fn measure(&self, overridden: &[usize]) -> anyhow::Result<Report> {
        let gate = Policy::default();
        let plan = Plan::of(self.s, Part::Retrieval, None, &gate);
        let built = match &self.texts {
            // the fast path: the index built from the cached texts, the candidate's tools'
            // texts computed afresh (the same texts `Embedded::new` would index)
            Some(texts) => {
                let corpus = &self.ds.corpus.as_ref().expect("loaded in new").value;
                texts
                    .index_with_changes(corpus, overridden)
                    .context("building the BM25 index")
                    .map(|e| Ok(Box::new(e) as Box<dyn Retriever>))
            }
            None => make_retriever(&self.s.sut, &self.ds, &self.sup).await,
        };
        let (ds, silent) = (&self.ds, &mut Progress::new(false));
        let measured = match built {
            Ok(Ok(r)) => Ok(measure_all(&plan, ds, Some(&*r), &mut [], silent).await),
            // a system that could not be built measured nothing: its failure is the result
            Ok(Err(e)) => Ok(Measured {
                failure: Some(e),
                ..Default::default()
            }),
            Err(e) => Err(e),
        };
        self.sup.shutdown(Duration::from_secs(3)).await;
        Ok(assemble(&plan, ds, measured?, Vec::new()))
    }
}

/// The result's numbers, read from the report a run would write.
fn summarise(r: &RetrievalReport, overridden: &[&str]) -> FitnessResult {
    let scores = |queries, held_out, metrics| Scores {
        queries,
        held_out,
        metrics,
    };
    let means = r
        .metrics
        .iter()
        .filter_map(|(k, s)| Some((k.clone(), s.mean?)));
    let splits = r.splits.iter().map(|(name, s)| {
        let held_out = name == "held_out";
        (name.clone(), scores(s.queries, held_out, s.metrics.clone()))
    });
    // each overridden tool's row of the report's per-tool diagnostics (counts summed over
    // runs), or zeros when no query finds it relevant
    let per_tool = overridden.iter().map(|&id| {
        let t = r.tool_diagnostics.tool(id);
        let score = ToolScore {
            relevant_in: t.map_or(0, |t| t.relevant_in),
            found_in_top_5: t.map_or(0, |t| t.found_in_top_5),
            recall_at_5: t.map(|t| t.recall_at_5),
            mrr: t.map(|t| t.mrr),
        };
        (id.to_string(), score)
    });
    FitnessResult {
        line: None,
        overall: scores(r.queries, false, means.collect()),
        splits: splits.collect(),
        per_tool: per_tool.collect(),
    }
}

/// A line's error object.
fn error_line(line: Option<usize>, e: &Unscored) -> String {
    let mut o = serde_json::Map::new();
    if let Some(n) = line {
        o.insert("line".into(), n.into());
    }
    // the message may quote the candidate or the system: shown visible, never as escapes
    let error = sanitize::visible_lines(&e.to_string());
    o.insert("error".into(), error.into());
    if let Unscored::System(s) = e {
        o.insert("failure".into(), s.kind().into());
    }
    serde_json::Value::Object(o).to_string()
}

/// The longest candidate line read (a whole corpus's descriptions fit many times over).
const MAX_LINE: usize = 64 << 20;

/// `fitness`: returns the exit code.
pub async fn cmd_fitness(a: &FitnessArgs, args: &EvalArgs) -> anyhow::Result<i32> {
    let args = EvalArgs {
        // probes and baselines are not part of a candidate's score
        robustness: Some(RobustnessMode::Off),
        no_baseline: true,
        quiet: true,
        ..args.clone()
    };
    let s = Settings::resolve(&args).map_err(super::bad_input)?;
    refuse_inapplicable(&args, &s, Part::Retrieval)?;
    // read before anything is loaded or started: a bad file is exit 2 with nothing done
    let single = match &a.overrides {
        Some(p) => {
            let bytes = files::read(p).map_err(|e| BadInput(format!("{}: {e}", p.display())))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| BadInput(format!("{}: not UTF-8 text", p.display())))?;
            Some((p, text))
        }
        None => None,
    };
    let mut fit = Fitness::new(&s)?;
    fit.sup.install_signal_handlers();
    // dataset warnings (the lenient profile's authoring rules), once
    for w in &fit.ds.warnings {
        crate::errln!("warning: {}", sanitize::visible_lines(&w.to_string()));
    }
    if let Some((path, text)) = single {
        let o = Overrides::parse(&text, &fit.tools)
            .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        return Ok(match fit.score(&o).await? {
            Ok(r) => {
                crate::outln!("{}", serde_json::to_string(&r)?);
                0
            }
            Err(e) => {
                crate::errln!("error: {}", sanitize::visible_lines(&e.to_string()));
                crate::outln!("{}", error_line(None, &e));
                3
            }
        });
    }
    lines(&mut fit).await
}

/// `--lines`: one candidate per stdin line, one result per stdout line, until end of input.
/// Exit 3 when the system could not be measured for some candidate, else 0.
async fn lines(fit: &mut Fitness<'_>) -> anyhow::Result<i32> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut input = tokio::io::BufReader::new(tokio::io::stdin());
    let mut buf = Vec::new();
    let mut code = ExitCode::PASS;
    for n in 1.. {
        buf.clear();
        let mut line = (&mut input).take(MAX_LINE as u64 + 1);
        if line.read_until(b'\n', &mut buf).await? == 0 {
            break;
        }
        let result = if buf.len() > MAX_LINE && !buf.ends_with(b"\n") {
            // skip the rest of the line, so the next one is still line n + 1
            let mut rest = Vec::new();
            while !rest.ends_with(b"\n") {
                rest.clear();
                let mut chunk = (&mut input).take(1 << 20);
                if chunk.read_until(b'\n', &mut rest).await? == 0 {
                    break;
                }
            }
            let mib = MAX_LINE >> 20;
            Err(Unscored::Input(format!("longer than {mib} MiB")))
        } else {
            match std::str::from_utf8(&buf) {
                Err(_) => Err(Unscored::Input("not UTF-8 text".into())),
                Ok(text) => match Overrides::parse(text.trim_end_matches(['\n', '\r']), &fit.tools)
                {
                    Err(e) => Err(Unscored::Input(e)),
                    Ok(o) => fit.score(&o).await?,
                },
            }
        };
        let out = match result {
            Ok(mut r) => {
                r.line = Some(n);
                serde_json::to_string(&r)?
            }
            Err(e) => {
                if matches!(e, Unscored::System(_)) {
                    code = ExitCode::SUT_FAILED;
                }
                error_line(Some(n), &e)
            }
        };
        crate::outln!("{out}");
        if crate::stdout_failed() {
            // the reader is gone: nobody to score for
            break;
        }
    }
    Ok(code)
}
