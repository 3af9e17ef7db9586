//! `retrieval` answers exactly what one query at a time does, whatever its concurrency; the
//! first failure in golden order stops it; a late answer is a timeout.

use super::*;
use crate::pipeline::dataset::{DatasetPaths, Datasets, Need, Profile};
use crate::pipeline::sut::embedded::Embedded;
use crate::pipeline::sut::{DEPTH, Facts, HEADROOM, Ranked};
use async_trait::async_trait;

fn v1() -> Datasets {
    Datasets::load(
        &DatasetPaths::default(),
        Need {
            retrieval: true,
            security: false,
        },
        Profile::Strict,
    )
    .unwrap()
}

/// A system answering on the calling thread: a query with its own id, fails on `fail_at` and takes
/// `slow_ms` over `slow_at`.
struct Fake {
    fail_at: Option<&'static str>,
    slow_at: Option<(&'static str, u64)>,
}

#[async_trait]
impl Retriever for Fake {
    fn facts(&self) -> &Facts {
        static FACTS: std::sync::LazyLock<Facts> =
            std::sync::LazyLock::new(|| Facts::named("fake"));
        &FACTS
    }
    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError> {
        if self.fail_at == Some(req.query_id) {
            return Err(SutError::Other {
                system: "fake".into(),
                detail: format!("no answer for {}", req.query_id),
            });
        }
        if let Some((id, ms)) = self.slow_at
            && id == req.query_id
        {
            std::thread::sleep(Duration::from_millis(ms));
        }
        Ok(Ranked {
            ids: vec![req.query_id.into(), format!("run:{}", req.run).into()],
            latency: Duration::from_micros(5),
        })
    }
}

/// (run, query id, ranked ids) of every observation, in order.
fn answers(obs: &RetrievalObservations) -> Vec<(usize, String, Vec<String>)> {
    obs.runs
        .iter()
        .flat_map(|r| {
            r.queries.iter().map(move |q| {
                (
                    r.run,
                    q.id.to_string(),
                    q.ranked.iter().map(|t| t.to_string()).collect(),
                )
            })
        })
        .collect()
}

fn limits(concurrency: usize) -> Limits {
    Limits {
        request_timeout: Duration::from_secs(30),
        concurrency,
        results: DEPTH + HEADROOM,
    }
}

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn bm25_answers_exactly_what_one_query_at_a_time_does_at_any_concurrency() {
    let ds = v1();
    // a slice of v1's queries: a debug build's BM25 is slow
    let golden = &GoldenSet {
        queries: ds.golden.as_ref().unwrap().value.queries[..120].to_vec(),
        ..ds.golden.as_ref().unwrap().value.clone()
    };
    let index = Embedded::new(&ds.corpus.as_ref().unwrap().value).unwrap();
    let one = |r: &dyn Retriever, c: usize, rt: &tokio::runtime::Runtime| {
        let (obs, err) = rt.block_on(retrieval(
            r,
            golden,
            2,
            limits(c),
            &mut Progress::new(false),
        ));
        assert!(err.is_none(), "{err:?}");
        assert_eq!(obs.system, "embedded");
        assert_eq!(obs.requested, DEPTH + HEADROOM);
        answers(&obs)
    };
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let multi = multi_thread();
    // the plain definition: rank every query in golden-set order
    let index_ref = &index;
    let plain: Vec<_> = (1..=2)
        .flat_map(|run| {
            golden.queries.iter().map(move |q| {
                let ids = index_ref.rank(&q.query, DEPTH + HEADROOM).unwrap();
                (
                    run,
                    q.id.to_string(),
                    ids.into_iter().map(|(id, _)| id.to_string()).collect(),
                )
            })
        })
        .collect();
    assert_eq!(plain.len(), 2 * golden.queries.len());
    assert_eq!(one(&index, 1, &current), plain);
    assert_eq!(one(&index, 1, &multi), plain);
    assert_eq!(one(&index, 2, &multi), plain);
    assert_eq!(one(&index, 16, &multi), plain);
}

#[test]
fn the_first_failure_in_golden_order_stops_the_measurement() {
    let ds = v1();
    let golden = &ds.golden.as_ref().unwrap().value;
    let at = golden.queries[37].id.to_string().leak() as &'static str;
    let fake = Fake {
        fail_at: Some(at),
        slow_at: None,
    };
    for c in [1, 2, 4] {
        let (obs, err) = multi_thread().block_on(retrieval(
            &fake,
            golden,
            3,
            limits(c),
            &mut Progress::new(false),
        ));
        let got = answers(&obs);
        assert_eq!(obs.runs.len(), 1, "stopped in run 1");
        assert_eq!(got.len(), 37);
        for (q, (run, id, ranked)) in golden.queries.iter().zip(&got) {
            assert_eq!((*run, id.as_str()), (1, q.id.as_str()));
            assert_eq!(ranked, &[q.id.to_string(), "run:1".to_string()]);
        }
        match err {
            Some(SutError::Other { detail, .. }) => assert!(detail.contains(at), "{detail}"),
            e => panic!("expected the query's failure, got {e:?}"),
        }
    }
}

#[test]
fn an_answer_later_than_the_request_timeout_is_a_timeout() {
    let ds = v1();
    let golden = &ds.golden.as_ref().unwrap().value;
    let at = golden.queries[5].id.to_string().leak() as &'static str;
    let fake = Fake {
        fail_at: None,
        slow_at: Some((at, 200)),
    };
    let limits = Limits {
        request_timeout: Duration::from_millis(20),
        concurrency: 2,
        results: DEPTH + HEADROOM,
    };
    let (obs, err) = multi_thread().block_on(retrieval(
        &fake,
        golden,
        1,
        limits,
        &mut Progress::new(false),
    ));
    assert_eq!(answers(&obs).len(), 5);
    match err {
        Some(SutError::Timeout {
            system, context, ..
        }) => {
            assert_eq!(system, "fake");
            assert!(context.contains(at), "{context}");
        }
        e => panic!("expected a timeout, got {e:?}"),
    }
}
