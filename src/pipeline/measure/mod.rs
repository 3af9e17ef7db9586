//! Measuring: drive a system under test over the datasets N times and record what it returned.
//! Nothing here scores; see `score`.

pub mod probes;
pub mod recheck;

use crate::pipeline::dataset::{Entry, GoldenSet};
use crate::pipeline::sut::observe::{
    DetectorObservations, DetectorRun, QueryObservation, RetrievalObservations, RetrievalRun,
};
use crate::pipeline::sut::{Detector, Retriever, SearchRequest, SutError};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Progress lines on stderr: a rewritten line on a terminal, a few plain lines otherwise.
pub struct Progress {
    enabled: bool,
    tty: bool,
    last: Option<Instant>,
}

impl Progress {
    pub fn new(enabled: bool) -> Self {
        Progress {
            enabled,
            tty: std::io::stderr().is_terminal(),
            last: None,
        }
    }
    /// Reports `done` of `total` for a phase; throttled.
    pub fn tick(&mut self, phase: &str, done: usize, total: usize) {
        let finished = done == total;
        let now = Instant::now();
        let gap = Duration::from_millis(if self.tty { 100 } else { 10_000 });
        if !self.enabled || (!finished && self.last.is_some_and(|t| now.duration_since(t) <= gap)) {
            return;
        }
        if self.tty {
            crate::err!("\r\x1b[2K{phase}: {done}/{total}");
            if finished {
                crate::errln!();
            }
        } else {
            crate::errln!("{phase}: {done}/{total}");
        }
        self.last = Some(now);
    }
}

/// Per-request time limit.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub request_timeout: Duration,
    /// Queries in flight at once.
    pub concurrency: usize,
    /// Results each search asks for (`[sut] results`).
    pub results: usize,
}

/// A system whose every answer was empty found nothing: it is not measured (is its index
/// built? does its search tool read the query argument?), and no probe or detector follows it.
/// Decided over a whole run's answers (a shard's are judged when the shards are merged).
pub fn found_nothing(obs: &RetrievalObservations) -> Option<SutError> {
    let answers: Vec<&QueryObservation> = obs.runs.iter().flat_map(|r| &r.queries).collect();
    (!answers.is_empty() && answers.iter().all(|q| q.ranked.is_empty())).then(|| {
        SutError::garbage(
            obs.system.as_str(),
            format!(
                "every one of its {} answers was empty: a system that finds nothing is not measured (is its index built? does the search tool read the query argument?)",
                answers.len()
            ),
        )
    })
}

/// Sends every golden query `runs` times, up to `limits.concurrency` at once (results are kept
/// in golden-set order). On the first failure the measurement stops and the failure is returned
/// beside what was observed so far. An answer later than `limits.request_timeout` is a timeout,
/// also from a system that answers on the calling thread and cannot be cut short.
pub async fn retrieval(
    r: &dyn Retriever,
    golden: &GoldenSet,
    runs: usize,
    limits: Limits,
    progress: &mut Progress,
) -> (RetrievalObservations, Option<SutError>) {
    use futures::StreamExt;
    let requested = limits.results;
    let system = r.facts().name.clone();
    let mut obs = RetrievalObservations {
        system: system.clone(),
        requested,
        runs: Vec::new(),
    };
    let total = golden.queries.len() * runs;
    let mut done = 0;
    for run in 1..=runs {
        let mut rr = RetrievalRun {
            run,
            queries: Vec::with_capacity(golden.queries.len()),
        };
        let system = &system;
        let mut answers = futures::stream::iter(golden.queries.iter().map(|q| async move {
            let req = SearchRequest {
                run,
                query_id: &q.id,
                text: &q.query,
                limit: requested,
            };
            let start = Instant::now();
            let res = match tokio::time::timeout(limits.request_timeout, r.search(req)).await {
                Ok(res) if start.elapsed() <= limits.request_timeout => res,
                _ => Err(SutError::timeout(
                    system.clone(),
                    limits.request_timeout.as_secs_f64(),
                    format!("query {:?}, run {run}", q.id),
                )),
            };
            (q, res)
        }))
        .buffered(limits.concurrency.max(1));
        while let Some((q, res)) = answers.next().await {
            match res {
                Ok(ranked) => {
                    tracing::debug!(
                        "run {run}, query {:?}: {} results in {:.1} ms, top {:?}",
                        q.id,
                        ranked.ids.len(),
                        ranked.latency.as_secs_f64() * 1000.0,
                        &ranked.ids[..ranked.ids.len().min(3)]
                    );
                    rr.queries.push(QueryObservation::of(q.id.clone(), ranked))
                }
                Err(e) => {
                    tracing::debug!("run {run}, query {:?}: {e}", q.id);
                    obs.runs.push(rr);
                    return (obs, Some(e));
                }
            }
            done += 1;
            progress.tick(&format!("retrieval [{system}]"), done, total);
        }
        obs.runs.push(rr);
    }
    (obs, None)
}

/// Runs a detector over every entry `runs` times.
pub async fn security(
    d: &mut dyn Detector,
    entries: &[Entry],
    runs: usize,
    limits: Limits,
    progress: &mut Progress,
) -> (DetectorObservations, Option<SutError>) {
    let mut obs = DetectorObservations {
        detector: d.name().to_string(),
        source: Some(d.source()),
        scope: d.scope(),
        runs: Vec::new(),
    };
    let limit = d.time_limit(limits.request_timeout, entries);
    for run in 1..=runs {
        tracing::debug!("{}: run {run} over {} entries", obs.detector, entries.len());
        let res = tokio::time::timeout(limit, d.detect(entries, run)).await;
        let res = res.unwrap_or_else(|_| {
            Err(SutError::timeout(
                obs.detector.clone(),
                limit.as_secs_f64(),
                format!("detecting {} entries, run {run}", entries.len()),
            ))
        });
        match res {
            Ok(verdicts) if verdicts.len() == entries.len() => {
                obs.runs.push(DetectorRun { run, verdicts })
            }
            Ok(verdicts) => {
                let (want, got) = (entries.len(), verdicts.len());
                let detail = format!("expected {want} verdicts, got {got}");
                let e = SutError::garbage(obs.detector.clone(), detail);
                return (obs, Some(e));
            }
            Err(e) => return (obs, Some(e)),
        }
        progress.tick(&format!("security [{}]", obs.detector), run, runs);
    }
    (obs, None)
}

#[cfg(test)]
mod tests;
