//! The measurement's guarantee holds to its end, not only at its start. The catalog check and
//! the first answers show a system that answers; a system with a per-session search budget, a
//! rate limit or a licence that runs out can stop answering half-way and say so in words that
//! map to no tool (a plain-text refusal, not an MCP error): every later query would then be
//! scored as a miss, and the numbers would be wrong without anything failing.
//!
//! So after the measured runs a fixed, spread-out sample of the queries the system did answer
//! is asked again and the answers are compared by content. Most of them now empty is the
//! system failing (exit 3, [`SutError::Degraded`], nothing gated); a few of them empty, or
//! answered differently, is a warning.

use super::Limits;
use crate::infra::text::{Text, sanitize};
use crate::pipeline::dataset::{GoldenSet, Query};
use crate::pipeline::sut::observe::RetrievalObservations;
use crate::pipeline::sut::{Retriever, SearchRequest, SutError};

/// Queries asked again after the measured runs.
pub const WITNESSES: usize = 16;

/// The fewest witnesses answered with unrelated lists (and more than half of those asked) that
/// make the answers unsound rather than a system that ranks a little differently each time.
pub const MIN_UNRELATED: usize = 4;

/// How much of a witness's answer is compared: the top 5, what Recall@5 scores.
const TOP: usize = 5;

/// The shortest run of empty answers at the end of the measurement that can be a failure.
pub const MIN_TAIL: usize = 8;
/// How unlikely, at the system's own rate of empty answers before it, a run of empty answers at
/// the end must be to be a failure rather than chance.
pub const CHANCE: f64 = 1e-6;

/// One witness asked again: its id, what the measurement got, what came back now.
#[derive(Debug, Clone)]
pub struct Witness {
    pub id: Text,
    pub measured: Vec<Text>,
    /// The answer now, or why there was none.
    pub now: Result<Vec<Text>, String>,
}

/// What asking the sample again showed.
#[derive(Debug, Clone, Default)]
pub struct Recheck {
    pub witnesses: Vec<Witness>,
    /// A run of empty answers inside the measurement that chance does not explain
    /// ([`empty_window`]), and some of its queries asked again.
    pub window: Option<(Window, Vec<Witness>)>,
}

/// A run of empty answers, in the order the answers were asked (runs one after another).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// The first empty answer (0-based) and how many followed in a row.
    pub start: usize,
    pub len: usize,
    /// Empty answers outside it, and answers outside it.
    pub others_empty: usize,
    pub others: usize,
}

/// The golden queries the system answered with something in some run, in golden-set order, each
/// with the first such answer.
pub fn answered<'g, 'o>(
    golden: &'g GoldenSet,
    obs: &'o RetrievalObservations,
) -> impl Iterator<Item = (&'g Query, &'o Vec<Text>)> {
    golden.queries.iter().filter_map(|q| {
        let mut seen = obs
            .runs
            .iter()
            .filter_map(|r| r.queries.iter().find(|o| o.id == q.id));
        seen.find(|o| !o.ranked.is_empty()).map(|o| (q, &o.ranked))
    })
}

/// The witnesses: up to [`WITNESSES`] of the [`answered`] queries, spread over the golden set.
fn witnesses<'g, 'o>(
    golden: &'g GoldenSet,
    obs: &'o RetrievalObservations,
) -> Vec<(&'g Query, &'o Vec<Text>)> {
    let answered: Vec<_> = answered(golden, obs).collect();
    let step = (answered.len() / WITNESSES).max(1);
    answered.into_iter().step_by(step).take(WITNESSES).collect()
}

/// Asks the witnesses again, each bounded by the request timeout, with the measurement's
/// limit and concurrency; and some queries of a run of empty answers inside the measurement
/// ([`empty_window`]).
pub async fn run(
    r: &dyn Retriever,
    golden: &GoldenSet,
    obs: &RetrievalObservations,
    limits: Limits,
) -> Recheck {
    let asked = witnesses(golden, obs).into_iter();
    let witnesses = ask_again(r, asked.map(|(q, m)| (q, m.clone())), obs, limits).await;
    let answers: Vec<(&Text, bool)> = obs
        .runs
        .iter()
        .flat_map(|r| &r.queries)
        .map(|q| (&q.id, q.ranked.is_empty()))
        .collect();
    let empties: Vec<bool> = answers.iter().map(|a| a.1).collect();
    let window = match empty_window(&empties) {
        Some(w) => {
            // up to half as many of its queries as there are witnesses, spread over it
            let step = (w.len / (WITNESSES / 2)).max(1);
            let ids = answers[w.start..w.start + w.len].iter().step_by(step);
            let queries = ids
                .take(WITNESSES / 2)
                .filter_map(|(id, _)| golden.queries.iter().find(|q| &q.id == *id));
            let again = ask_again(r, queries.map(|q| (q, Vec::new())), obs, limits).await;
            Some((w, again))
        }
        None => None,
    };
    Recheck { witnesses, window }
}

/// Each query asked again (with what the measurement got for it), bounded by the request
/// timeout, with the measurement's limit and concurrency, in the order given.
async fn ask_again<'q>(
    r: &dyn Retriever,
    asked: impl Iterator<Item = (&'q Query, Vec<Text>)>,
    obs: &RetrievalObservations,
    limits: Limits,
) -> Vec<Witness> {
    use futures::StreamExt;
    let requested = obs.requested;
    let ask = |(q, measured): (&'q Query, Vec<Text>)| async move {
        let req = SearchRequest {
            run: 0,
            query_id: &q.id,
            text: &q.query,
            limit: requested,
        };
        let now = match tokio::time::timeout(limits.request_timeout, r.search(req)).await {
            Ok(Ok(ranked)) => Ok(ranked.ids),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "no answer within {} s",
                limits.request_timeout.as_secs_f64()
            )),
        };
        Witness {
            id: q.id.clone(),
            measured,
            now,
        }
    };
    futures::stream::iter(asked.map(ask))
        .buffered(limits.concurrency.max(1))
        .collect()
        .await
}

/// The longest run of empty answers (`true`: empty, in the order asked) that does not end the
/// measurement (the end is [`tail_failure`]'s), when chance does not explain it: at least
/// [`MIN_TAIL`] long, with at least as many answers outside it, and less likely than [`CHANCE`]
/// at the rate of empty answers outside it (Laplace, as for the tail) at any of the places it
/// could have started. Whether it was the system failing is decided by asking some of its
/// queries again ([`Recheck::failure`]): a query that rightly finds nothing finds nothing again.
pub fn empty_window(answers: &[bool]) -> Option<Window> {
    let n = answers.len();
    let (mut best, mut at) = (0, 0);
    let mut i = 0;
    while i < n {
        let len = answers[i..].iter().take_while(|&&e| e).count();
        if len > best && i + len < n {
            (best, at) = (len, i);
        }
        i += len.max(1);
    }
    let others = n - best;
    if best < MIN_TAIL || others < MIN_TAIL {
        return None;
    }
    let others_empty = answers.iter().filter(|&&e| e).count() - best;
    let rate = (others_empty as f64 + 1.0) / (others as f64 + 2.0);
    if best as f64 * rate.ln() + (n as f64).ln() >= CHANCE.ln() {
        return None;
    }
    Some(Window {
        start: at,
        len: best,
        others_empty,
        others,
    })
}

impl Recheck {
    /// The witnesses answered during the measurement, and now with nothing (or not at all).
    fn lost(&self) -> Vec<&Witness> {
        let lost = |w: &&Witness| w.now.as_ref().map_or(true, Vec::is_empty);
        self.witnesses.iter().filter(lost).collect()
    }

    /// The system failing: most witnesses it had answered now come back with nothing. The
    /// detail says how many, names one, and how long the run of empty answers at the end of the
    /// measurement was.
    ///
    /// Or, with the witnesses answered again: most of them with a list that shares no tool
    /// with the one the measurement got for the same query (answers that do not follow their
    /// queries: mixed up between requests, or a system that changed while it was measured);
    /// or a rate limit that recovered by then, the measurement ending with a run of empty
    /// answers that the system's own rate of empty answers before it makes implausible
    /// ([`tail_failure`]).
    pub fn failure(&self, obs: &RetrievalObservations) -> Option<SutError> {
        let lost = self.lost();
        let asked = self.witnesses.len();
        let answers: Vec<bool> = obs
            .runs
            .iter()
            .flat_map(|r| &r.queries)
            .map(|q| q.ranked.is_empty())
            .collect();
        let unrelated = self.unrelated();
        if unrelated.len() >= MIN_UNRELATED && unrelated.len() * 2 > asked {
            let first = unrelated[0];
            let then = first.measured.len();
            let now = first.now.as_ref().map_or(0, Vec::len);
            return Some(SutError::garbage(
                obs.system.clone(),
                format!(
                    "asked again after the measured runs, {} of {asked} queries it had answered came back with none of the tools it had ranked in their top {TOP} (query {:?}: {then} result(s) then, {now} now, no tool in both top {TOP}s): its answers do not follow its queries (mixed up between requests, or the system changed while it was measured), so nothing is gated",
                    unrelated.len(),
                    first.id.as_str(),
                ),
            ));
        }
        if let Some((w, again)) = &self.window {
            let answered = again
                .iter()
                .filter(|a| matches!(&a.now, Ok(n) if !n.is_empty()));
            let answered = answered.count();
            if answered * 2 > again.len() {
                return Some(SutError::degraded(
                    obs.system.clone(),
                    format!(
                        "answers {} to {} of its {} were empty, in a row, where {} of the {} others were (by chance less likely than one in a million); asked again afterwards, {answered} of {} of those queries were answered: it stopped answering for a while (a rate limit?). Its refusals would be scored as misses, so nothing is gated",
                        w.start + 1,
                        w.start + w.len,
                        answers.len(),
                        w.others_empty,
                        w.others,
                        again.len()
                    ),
                ));
            }
        }
        if asked == 0 || lost.len() * 2 <= asked {
            return tail_failure(&obs.system, &answers);
        }
        let tail = match answers.iter().rev().take_while(|&&e| e).count() {
            0 => String::new(),
            tail => format!(", the last {tail} in a row"),
        };
        let empty = answers.iter().filter(|&&e| e).count();
        let first = lost[0];
        let why = match &first.now {
            Ok(_) => format!(
                "query {:?} had {} result(s), now none",
                first.id.as_str(),
                first.measured.len()
            ),
            Err(e) => format!("query {:?}: {}", first.id.as_str(), sanitize::clip(e, 200)),
        };
        Some(SutError::degraded(
            obs.system.clone(),
            format!(
                "asked again after the measured runs, {} of {asked} queries it had answered came back empty or unanswered ({why}); {empty} of its {} answers were empty{tail}. Its refusals would be scored as misses, so nothing is gated (a per-session search budget or rate limit? raise it, or lower --runs)",
                lost.len(),
                answers.len(),
            ),
        ))
    }

    /// The witnesses answered again with a top [`TOP`] that shares no tool with the measured
    /// one.
    fn unrelated(&self) -> Vec<&Witness> {
        let apart = |w: &&Witness| {
            let then = &w.measured[..w.measured.len().min(TOP)];
            let disjoint = |n: &Vec<Text>| !n.iter().take(TOP).any(|id| then.contains(id));
            matches!(&w.now, Ok(n) if !n.is_empty() && disjoint(n))
        };
        self.witnesses.iter().filter(apart).collect()
    }

    /// What a reader should know when the system did not fail: a few witnesses lost, or
    /// answered differently from the measurement.
    pub fn warnings(&self, system: &str) -> Vec<String> {
        let asked = self.witnesses.len();
        let lost = self.lost().len();
        // answered now, but not with the list the measurement got
        let changed = |w: &&Witness| matches!(&w.now, Ok(n) if !n.is_empty() && *n != w.measured);
        let changed = self.witnesses.iter().filter(changed).count();
        let mut out = Vec::new();
        if lost > 0 && lost * 2 <= asked {
            out.push(format!(
                "{system}: asked again after the measured runs, {lost} of {asked} queries it had answered came back empty or unanswered: it may have stopped answering near the end of the measurement"
            ));
        }
        if changed > 0 {
            out.push(format!(
                "{system}: asked again after the measured runs, {changed} of {asked} queries were answered differently than during the measurement: the system changed while it was measured"
            ));
        }
        out
    }
}

/// The measurement's answers (`true`: empty, in the order asked) end with a run of empty
/// answers that is not chance: at least [`MIN_TAIL`] long, after at least as many answers, and
/// less likely than [`CHANCE`] at the rate of empty answers before it. The rate is estimated
/// conservatively from the same system on the same kind of query (the golden queries before
/// the run), one empty and one answered added (Laplace), so that a system that answers many
/// queries with genuinely nothing needs a longer run: at a rate of 30 % empty, 12 in a row.
/// The catalog probe's queries (each tool's own name and description) are not the comparison:
/// they are easier than golden queries, so a system with a score threshold would be failed for
/// the golden queries it rightly answers with nothing.
pub fn tail_failure(system: &str, answers: &[bool]) -> Option<SutError> {
    let tail = answers.iter().rev().take_while(|&&e| e).count();
    let head = answers.len() - tail;
    if tail < MIN_TAIL || head < MIN_TAIL {
        return None;
    }
    let head_empty = answers[..head].iter().filter(|&&e| e).count();
    let rate = (head_empty as f64 + 1.0) / (head as f64 + 2.0);
    if tail as f64 * rate.ln() >= CHANCE.ln() {
        return None;
    }
    Some(SutError::degraded(
        system.to_string(),
        format!(
            "the last {tail} of its {} answers were empty, in a row, where {head_empty} of the {head} before them were (by chance less likely than one in a million); asked again afterwards, it answered: it stopped answering for a while (a rate limit?). Its refusals would be scored as misses, so nothing is gated",
            answers.len()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::sut::observe::{QueryObservation, RetrievalRun};

    fn obs(answers: &[usize]) -> RetrievalObservations {
        RetrievalObservations {
            system: "p".into(),
            requested: 20,
            runs: vec![RetrievalRun {
                run: 1,
                queries: answers
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| QueryObservation {
                        id: format!("q{i}").into(),
                        ranked: (0..n).map(|k| format!("s:t{k}").into()).collect(),
                        latency_ms: 1.0,
                    })
                    .collect(),
            }],
        }
    }

    fn witness(measured: usize, now: Result<usize, &str>) -> Witness {
        let ids = |n: usize| (0..n).map(|k| format!("s:t{k}").into()).collect();
        Witness {
            id: "q0".into(),
            measured: ids(measured),
            now: now.map(ids).map_err(String::from),
        }
    }

    /// Most witnesses lost is the system failing, with the run of empty answers at the end;
    /// half or fewer lost, or answers that changed, are warnings only.
    #[test]
    fn most_witnesses_lost_is_a_failure_and_a_few_a_warning() {
        let o = obs(&[3, 3, 0, 3, 0, 0, 0]);
        let lost = Recheck {
            witnesses: vec![
                witness(3, Ok(0)),
                witness(3, Err("crashed")),
                witness(3, Ok(3)),
            ],
            window: None,
        };
        let e = lost.failure(&o).expect("2 of 3 lost");
        assert_eq!(e.kind(), "degraded");
        assert_eq!(
            e.to_string(),
            "p stopped answering during the measurement: asked again after the measured runs, 2 of 3 queries it had answered came back empty or unanswered (query \"q0\" had 3 result(s), now none); 4 of its 7 answers were empty, the last 3 in a row. Its refusals would be scored as misses, so nothing is gated (a per-session search budget or rate limit? raise it, or lower --runs)"
        );
        assert!(lost.warnings("p").is_empty());
        let few = Recheck {
            witnesses: vec![witness(3, Ok(0)), witness(3, Ok(3)), witness(3, Ok(2))],
            window: None,
        };
        assert!(few.failure(&o).is_none());
        let w = few.warnings("p");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("1 of 3 queries it had answered came back empty"));
        assert!(w[1].contains("1 of 3 queries were answered differently"));
        assert!(Recheck::default().failure(&o).is_none());
    }

    /// Most witnesses answered with lists unrelated to their measured ones is the answers not
    /// following their queries; a few such, or lists that only overlap, are a warning.
    #[test]
    fn most_witnesses_answered_with_unrelated_lists_is_a_failure() {
        let o = obs(&[3, 3, 3, 3, 3]);
        let other = |measured: usize| {
            let mut w = witness(measured, Ok(0));
            w.now = Ok(vec!["s:elsewhere".into(), "s:other".into()]);
            w
        };
        let mixed = Recheck {
            witnesses: vec![other(3), other(3), other(3), other(3), witness(3, Ok(3))],
            window: None,
        };
        let e = mixed.failure(&o).expect("4 of 5 unrelated");
        assert_eq!(e.kind(), "garbage");
        assert!(
            e.to_string().contains(
                "asked again after the measured runs, 4 of 5 queries it had answered came back with none of the tools it had ranked in their top 5 (query \"q0\": 3 result(s) then, 2 now, no tool in both top 5s)"
            ),
            "{e}"
        );
        // half of them, too few, or reordered and overlapping lists: no failure
        let half = Recheck {
            witnesses: vec![
                other(3),
                other(3),
                other(3),
                other(3),
                witness(3, Ok(3)),
                witness(3, Ok(3)),
                witness(3, Ok(3)),
                witness(3, Ok(3)),
            ],
            window: None,
        };
        assert!(half.failure(&o).is_none());
        let few = Recheck {
            witnesses: vec![other(3), other(3), other(3)],
            window: None,
        };
        assert!(few.failure(&o).is_none());
        let overlapping = Recheck {
            witnesses: (0..5).map(|_| witness(3, Ok(2))).collect(),
            window: None,
        };
        assert!(overlapping.failure(&o).is_none());
    }

    /// A run of empty answers inside the measurement is found only beyond chance, and is the
    /// system failing only when its queries are answered when asked again.
    #[test]
    fn a_run_of_empty_answers_inside_the_measurement_fails_when_asked_again_answers() {
        // 20 answered, 40 empty (a rate-limit window), 49 answered
        let mut a = vec![false; 20];
        a.extend([true; 40]);
        a.extend([false; 49]);
        let w = empty_window(&a).expect("40 in a row, none outside");
        assert_eq!((w.start, w.len, w.others_empty, w.others), (20, 40, 0, 69));
        // at the end it is the tail's; too short; a system often empty: chance
        assert!(empty_window(&[vec![false; 60], vec![true; 40]].concat()).is_none());
        assert!(empty_window(&[vec![false; 60], vec![true; 7], vec![false; 9]].concat()).is_none());
        let often: Vec<bool> = (0..100)
            .map(|i| i % 3 == 0)
            .chain([true; 10])
            .chain([false; 5])
            .collect();
        assert!(empty_window(&often).is_none());
        let answers: Vec<usize> = a.iter().map(|&e| if e { 0 } else { 3 }).collect();
        let o = obs(&answers);
        let ok = || witness(3, Ok(3));
        let asked_again = |now: usize| Recheck {
            witnesses: vec![ok(), ok(), ok()],
            window: Some((w, (0..8).map(|_| witness(0, Ok(now))).collect())),
        };
        // its queries answered now: it stopped answering for a while
        let e = asked_again(3).failure(&o).expect("a failure");
        assert_eq!(e.kind(), "degraded");
        assert!(
            e.to_string().contains(
                "answers 21 to 60 of its 109 were empty, in a row, where 0 of the 69 others were"
            ) && e
                .to_string()
                .contains("8 of 8 of those queries were answered"),
            "{e}"
        );
        // still nothing for them: they rightly find nothing
        assert!(asked_again(0).failure(&o).is_none());
    }

    /// The witnesses are spread over the queries answered in some run, with that answer.
    #[test]
    fn witnesses_are_answered_queries_spread_over_the_golden_set() {
        let golden: GoldenSet = serde_json::from_value(serde_json::json!({
            "corpus_version": "1",
            "queries": (0..40).map(|i| serde_json::json!({
                "id": format!("q{i}"), "query": "x", "labels": [{"tool_id": "s:t0", "relevance": 1}]
            })).collect::<Vec<_>>()
        }))
        .unwrap();
        let answers: Vec<usize> = (0..40).map(|i| usize::from(i % 2 == 0)).collect();
        let obs = obs(&answers);
        let w = witnesses(&golden, &obs);
        assert_eq!(w.len(), WITNESSES);
        assert!(w.iter().all(|(_, m)| m.len() == 1));
        assert_eq!(w[0].0.id.as_str(), "q0");
        assert_eq!(w[1].0.id.as_str(), "q2");
    }

    /// A run of empty answers at the end is a failure only when the system's own rate of empty
    /// answers before it makes it implausible.
    #[test]
    fn a_run_of_empty_answers_at_the_end_is_a_failure_only_beyond_chance() {
        let run = |head: usize, head_empty: usize, tail: usize| {
            let mut a: Vec<bool> = (0..head).map(|i| i < head_empty).collect();
            a.extend(std::iter::repeat_n(true, tail));
            tail_failure("p", &a)
        };
        // the budget case: 66 answered, then 43 refused
        let e = run(66, 0, 43).expect("a failure");
        assert_eq!(e.kind(), "degraded");
        assert!(
            e.to_string().starts_with(
                "p stopped answering during the measurement: the last 43 of its 109 answers were empty, in a row, where 0 of the 66 before them were"
            ),
            "{e}"
        );
        assert!(run(66, 0, 8).is_some());
        // too short, or too few answers before it
        assert!(run(66, 0, 7).is_none());
        assert!(run(5, 0, 40).is_none());
        // a system that answers 30 % of the queries with nothing: 10 in a row is chance
        assert!(run(100, 30, 10).is_none());
        assert!(run(100, 30, 13).is_some());
        // no run at the end
        let mut a = vec![true; 50];
        a.push(false);
        assert!(tail_failure("p", &a).is_none());
    }
}
