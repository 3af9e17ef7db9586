//! Measuring: drive a system under test over the datasets N times and record what it returned.
//! Nothing here scores; see `score`.

pub mod probes;
pub mod recheck;

use crate::pipeline::dataset::{Entry, GoldenSet};
use crate::pipeline::sut::observe::{
    DetectorObservations, DetectorRun, QueryObservation, RetrievalObservations, RetrievalRun,
};
use crate::pipeline::sut::{DEPTH, HEADROOM};
use crate::pipeline::sut::{Detector, InProcess, Retriever, SearchRequest, SutError};
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
    pub fn silent() -> Self {
        Progress {
            enabled: false,
            tty: false,
            last: None,
        }
    }
    /// Reports `done` of `total` for a phase; throttled.
    pub fn tick(&mut self, phase: &str, done: usize, total: usize) {
        if !self.enabled {
            return;
        }
        let finished = done == total;
        let now = Instant::now();
        if self.tty {
            if finished
                || self
                    .last
                    .is_none_or(|t| now.duration_since(t) > Duration::from_millis(100))
            {
                crate::err!("\r\x1b[2K{phase}: {done}/{total}");
                if finished {
                    crate::errln!();
                }
                self.last = Some(now);
            }
        } else if finished
            || self
                .last
                .is_none_or(|t| now.duration_since(t) > Duration::from_secs(10))
        {
            crate::errln!("{phase}: {done}/{total}");
            self.last = Some(now);
        }
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

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_timeout: Duration::from_secs(30),
            concurrency: 4,
            results: DEPTH + HEADROOM,
        }
    }
}

/// Sends every golden query `runs` times, up to `limits.concurrency` at once (results are kept
/// in golden-set order). On the first failure the measurement stops and the failure is returned
/// beside what was observed so far. A system that answers in-process is asked on up to
/// `limits.concurrency` threads (no more than the cores), see [`in_threads`].
pub async fn retrieval(
    r: &dyn Retriever,
    golden: &GoldenSet,
    runs: usize,
    limits: Limits,
    progress: &mut Progress,
) -> (RetrievalObservations, Option<SutError>) {
    use futures::StreamExt;
    if let Some(local) = r.in_process() {
        let mut measure = || in_threads(local, r.name(), golden, runs, limits, progress);
        // the threads keep this worker busy: let the runtime move its other tasks elsewhere
        return match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(measure),
            _ => measure(),
        };
    }
    let requested = limits.results;
    let system = r.name().to_string();
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
            let res = tokio::time::timeout(limits.request_timeout, r.search(req))
                .await
                .unwrap_or_else(|_| {
                    Err(SutError::Timeout {
                        system: system.clone(),
                        seconds: limits.request_timeout.as_secs_f64(),
                        context: format!("query {:?}, run {run}", q.id),
                    })
                });
            (q, res)
        }))
        .buffered(limits.concurrency.max(1));
        while let Some((q, res)) = answers.next().await {
            match res {
                Ok(ranked) => rr.queries.push(QueryObservation::of(q.id.clone(), ranked)),
                Err(e) => {
                    drop(answers);
                    obs.runs.push(rr);
                    return (obs, Some(e));
                }
            }
            done += 1;
            progress.tick(&format!("retrieval [{system}]"), done, total);
        }
        drop(answers);
        obs.runs.push(rr);
    }
    (obs, None)
}

/// [`retrieval`] for a system that answers in-process: worker threads (up to
/// `limits.concurrency`, no more than the cores) take the queries in golden-set order and this
/// thread puts their answers back in that order, so the observations are those of asking one
/// query after another (a system that [answers at once](InProcess::answers_at_once) is asked
/// on this thread alone). A query answered later than `limits.request_timeout` is a timeout (a
/// synchronous search cannot be cut short); the first failure stops the measurement.
fn in_threads(
    sys: &dyn InProcess,
    system: &str,
    golden: &GoldenSet,
    runs: usize,
    limits: Limits,
    progress: &mut Progress,
) -> (RetrievalObservations, Option<SutError>) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let requested = limits.results;
    let threads = limits.concurrency.clamp(
        1,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let mut obs = RetrievalObservations {
        system: system.to_string(),
        requested,
        runs: Vec::new(),
    };
    let queries = &golden.queries;
    let total = queries.len() * runs;
    let phase = format!("retrieval [{system}]");
    let mut done = 0;
    for run in 1..=runs {
        let mut rr = RetrievalRun {
            run,
            queries: Vec::with_capacity(queries.len()),
        };
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let ask = |q: &crate::pipeline::dataset::Query| {
            let req = SearchRequest {
                run,
                query_id: &q.id,
                text: &q.query,
                limit: requested,
            };
            let start = Instant::now();
            let res = sys.search_now(req);
            if start.elapsed() > limits.request_timeout {
                return Err(SutError::Timeout {
                    system: system.to_string(),
                    seconds: limits.request_timeout.as_secs_f64(),
                    context: format!("query {:?}, run {run}", q.id),
                });
            }
            res
        };
        let failure = if sys.answers_at_once() {
            let mut failure = None;
            for q in queries {
                match ask(q) {
                    Ok(ranked) => rr.queries.push(QueryObservation::of(q.id.clone(), ranked)),
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
                done += 1;
                progress.tick(&phase, done, total);
            }
            failure
        } else {
            std::thread::scope(|s| {
                let (tx, rx) = std::sync::mpsc::channel();
                for _ in 0..threads {
                    let tx = tx.clone();
                    let (next, stop, ask) = (&next, &stop, &ask);
                    s.spawn(move || {
                        while !stop.load(Ordering::Relaxed) {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(q) = queries.get(i) else { break };
                            if tx.send((i, ask(q))).is_err() {
                                break;
                            }
                        }
                    });
                }
                drop(tx);
                // answers arrive a few places out of order; they are kept until their turn
                let mut early = std::collections::BTreeMap::new();
                for (i, res) in rx {
                    early.insert(i, res);
                    while let Some(res) = early.remove(&rr.queries.len()) {
                        let q = &queries[rr.queries.len()];
                        match res {
                            Ok(ranked) => {
                                rr.queries.push(QueryObservation::of(q.id.clone(), ranked))
                            }
                            Err(e) => {
                                stop.store(true, Ordering::Relaxed);
                                return Some(e);
                            }
                        }
                        done += 1;
                        progress.tick(&phase, done, total);
                    }
                }
                None
            })
        };
        obs.runs.push(rr);
        if failure.is_some() {
            return (obs, failure);
        }
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
        let res = tokio::time::timeout(limit, d.detect(entries, run)).await;
        let res = res.unwrap_or_else(|_| {
            Err(SutError::Timeout {
                system: obs.detector.clone(),
                seconds: limit.as_secs_f64(),
                context: format!("detecting {} entries, run {run}", entries.len()),
            })
        });
        match res {
            Ok(verdicts) => {
                if verdicts.len() != entries.len() {
                    let e = SutError::Garbage {
                        system: obs.detector.clone(),
                        detail: format!(
                            "expected {} verdicts, got {}",
                            entries.len(),
                            verdicts.len()
                        ),
                    };
                    return (obs, Some(e));
                }
                obs.runs.push(DetectorRun { run, verdicts });
            }
            Err(e) => return (obs, Some(e)),
        }
        progress.tick(&format!("security [{}]", obs.detector), run, runs);
    }
    (obs, None)
}

#[cfg(test)]
mod tests;
