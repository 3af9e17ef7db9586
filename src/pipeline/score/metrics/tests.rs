//! The metrics' unit tests: worked examples, and the metrics against their plain definitions on
//! generated lists (proptest).
use super::*;
use std::collections::HashSet;

fn labels(v: &[(&str, u8)]) -> Vec<Label> {
    v.iter()
        .map(|(t, r)| Label {
            tool_id: (*t).into(),
            relevance: *r,
        })
        .collect()
}
fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}
/// The hard negatives (grade-0 labels) in the top 5 of `ranked`, as the scorer counts them.
fn hard_negatives_in_top_5(labels: &[Label], ranked: &[&Text]) -> usize {
    let id = Text::from("q");
    crate::pipeline::score::diagnostics::Accumulator::default().add(1, 0, &id, labels, ranked)
}
fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

#[test]
fn worked_example_from_metrics_md() {
    // labels {a:2, b:1}, ranked [c, a, d, b]
    let s = score_query(
        &labels(&[("s:a", 2), ("s:b", 1)]),
        &ids(&["s:c", "s:a", "s:d", "s:b"]),
    );
    close(s.recall_at_1, 0.0);
    close(s.recall_at_3, 0.5);
    close(s.recall_at_5, 1.0);
    close(s.recall_at_10, 1.0);
    close(s.mrr, 0.5);
    close(s.ndcg_at_10, 0.6433224083306327);
    close(s.map, 0.5);
}

#[test]
fn duplicates_and_off_corpus_ids_are_dropped_and_counted() {
    let corpus: HashSet<&str> = ["s:a", "s:b", "s:c"].into_iter().collect();
    let raw = ids(&["s:c", "x:zzz", "s:c", "s:a", "s:a", "s:b"]);
    let f = filter_ranked(&raw, &corpus);
    assert_eq!(f.ids, ["s:c", "s:a", "s:b"]);
    assert_eq!(f.off_corpus, 1);
    assert_eq!(f.duplicates, 2);
    // a duplicated relevant id counts once: recall cannot exceed 1 and AP is not inflated
    let s = score_query(&labels(&[("s:a", 2)]), &f.ids);
    close(s.recall_at_3, 1.0);
    close(s.mrr, 0.5);
    close(s.map, 0.5);
}

#[test]
fn relevance_zero_labels_never_count_as_hits() {
    let l = labels(&[("s:a", 2), ("s:neg", 0)]);
    let s = score_query(&l, &ids(&["s:neg", "s:a"]));
    close(s.recall_at_1, 0.0);
    close(s.mrr, 0.5);
    close(s.map, 0.5);
    // nDCG: DCG = 2/log2(3); IDCG = 2/log2(2) = 2
    close(s.ndcg_at_10, (2.0 / 3f64.log2()) / 2.0);
    let ranked: Vec<Text> = ["s:neg", "s:a"].map(Text::from).into();
    assert_eq!(
        hard_negatives_in_top_5(&l, &ranked.iter().collect::<Vec<_>>()),
        1
    );
}

#[test]
fn results_past_depth_are_ignored() {
    let mut r: Vec<String> = (0..10).map(|i| format!("s:x{i}")).collect();
    r.push("s:a".into());
    let s = score_query(&labels(&[("s:a", 1)]), &r);
    close(s.recall_at_10, 0.0);
    close(s.mrr, 0.0);
    close(s.ndcg_at_10, 0.0);
}

#[test]
fn recall_is_true_recall_not_hit_rate() {
    let s = score_query(
        &labels(&[("s:a", 1), ("s:b", 1), ("s:c", 1), ("s:d", 1)]),
        &ids(&["s:a"]),
    );
    close(s.recall_at_1, 0.25);
    close(s.map, 0.25);
}

#[test]
fn perfect_graded_ranking_has_ndcg_one() {
    let s = score_query(&labels(&[("s:a", 2), ("s:b", 1)]), &ids(&["s:a", "s:b"]));
    close(s.ndcg_at_10, 1.0);
    // the reverse order is worse
    let r = score_query(&labels(&[("s:a", 2), ("s:b", 1)]), &ids(&["s:b", "s:a"]));
    assert!(r.ndcg_at_10 < 1.0);
}

/// The definitions of metrics.md written the plain way (a map of grades, a sorted ideal
/// list, a hash set for repeats), against which the allocation-free versions are checked.
fn reference_score(labels: &[Label], raw: &[Text], corpus: &HashSet<&str>) -> QueryMetrics {
    let mut seen = HashSet::new();
    let ranked: Vec<&str> = raw
        .iter()
        .map(|s| s.as_str())
        .filter(|id| corpus.contains(id) && seen.insert(*id))
        .take(DEPTH)
        .collect();
    let grades: std::collections::HashMap<&str, u8> = labels
        .iter()
        .filter(|l| l.relevance >= 1)
        .map(|l| (l.tool_id.as_str(), l.relevance))
        .collect();
    let n_rel = grades.len() as f64;
    if grades.is_empty() {
        return QueryMetrics::default();
    }
    let recall = |k: usize| {
        ranked
            .iter()
            .take(k)
            .filter(|id| grades.contains_key(*id))
            .count() as f64
            / n_rel
    };
    let first = ranked.iter().position(|id| grades.contains_key(id));
    let dcg: f64 = ranked
        .iter()
        .enumerate()
        .map(|(i, id)| {
            grades
                .get(id)
                .map_or(0.0, |g| *g as f64 / (i as f64 + 2.0).log2())
        })
        .sum();
    let mut ideal: Vec<u8> = grades.values().copied().collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(DEPTH)
        .enumerate()
        .map(|(i, g)| *g as f64 / (i as f64 + 2.0).log2())
        .sum();
    let mut hits = 0.0;
    let mut ap = 0.0;
    for (i, id) in ranked.iter().enumerate() {
        if grades.contains_key(id) {
            hits += 1.0;
            ap += hits / (i as f64 + 1.0);
        }
    }
    QueryMetrics {
        recall_at_1: recall(1),
        recall_at_3: recall(3),
        recall_at_5: recall(5),
        recall_at_10: recall(10),
        mrr: first.map_or(0.0, |p| 1.0 / (p as f64 + 1.0)),
        ndcg_at_10: dcg / idcg,
        map: ap / n_rel,
    }
}

/// Label sets of 0 to 14 distinct tools of the 25 in the corpus (grades 0 to 2, some relevant
/// sets larger than the depth) with a ranked list of ids drawn from 30 (5 off the corpus),
/// repeats included, now and then longer than 60.
fn labelled_list() -> impl proptest::strategy::Strategy<Value = (Vec<(usize, u8)>, Vec<usize>)> {
    use proptest::prelude::*;
    (
        proptest::collection::btree_map(0..25usize, 0..3u8, 0..15)
            .prop_map(|m| m.into_iter().collect::<Vec<_>>()),
        prop_oneof![
            39 => proptest::collection::vec(0..30usize, 0..21),
            1 => proptest::collection::vec(0..30usize, 60..110),
        ],
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]
    #[test]
    fn the_metrics_equal_the_plain_definitions_on_random_lists((label_ids, raw_ids) in labelled_list()) {
        let tools: Vec<Text> = (0..30).map(|i| format!("s:t{i}").into()).collect();
        let plain_corpus: HashSet<&str> = tools.iter().take(25).map(|s| s.as_str()).collect();
        let l: Vec<Label> = label_ids
            .iter()
            .map(|&(t, relevance)| Label { tool_id: tools[t].clone(), relevance })
            .collect();
        let raw: Vec<Text> = raw_ids.iter().map(|&i| tools[i].clone()).collect();
        let (l, raw) = (l.as_slice(), raw.as_slice());
        let f = filter_ranked(raw, &plain_corpus);
        let mut seen = HashSet::new();
        let plain_ids: Vec<&Text> = raw
            .iter()
            .filter(|id| plain_corpus.contains(id.as_str()) && seen.insert(id.as_str()))
            .collect();
        assert_eq!(&f.ids, &plain_ids, "{raw:?}");
        let off = raw.iter().filter(|id| !plain_corpus.contains(id.as_str()));
        assert_eq!(f.off_corpus, off.count());
        assert_eq!(f.off_corpus + f.duplicates + f.ids.len(), raw.len());
        let scored = score_query(l, &f.ids);
        let plain = reference_score(l, raw, &plain_corpus);
        for key in RETRIEVAL_METRICS {
            let (a, b) = (scored.get(key).unwrap(), plain.get(key).unwrap());
            assert!((a - b).abs() < 1e-12, "{key}: {a} != {b} for {l:?} / {raw:?}");
        }
        let negs = plain_ids
            .iter()
            .take(5)
            .filter(|id| l.iter().any(|x| x.relevance == 0 && &&x.tool_id == *id))
            .count();
        assert_eq!(hard_negatives_in_top_5(l, &f.ids), negs);
    }
}

#[test]
fn every_metric_round_trips_through_its_key_and_keeps_its_label() {
    let all: Vec<Metric> = RETRIEVAL_METRICS
        .into_iter()
        .chain(DETECTION_METRICS)
        .collect();
    assert_eq!(all.len(), 12);
    for m in &all {
        assert_eq!(Metric::from_key(m.key()), Some(*m));
        assert_eq!(label(m.key()), m.label());
        assert_eq!(m.to_string(), m.key());
    }
    let keys: HashSet<&str> = all.iter().map(|m| m.key()).collect();
    assert_eq!(keys.len(), all.len(), "keys are unique");
    assert_eq!(
        RETRIEVAL_METRICS.map(Metric::key),
        [
            "recall_at_1",
            "recall_at_3",
            "recall_at_5",
            "recall_at_10",
            "mrr",
            "ndcg_at_10",
            "map"
        ]
    );
    assert_eq!(
        DETECTION_METRICS.map(Metric::key),
        ["precision", "recall", "f1", "fpr", "fpr_hard_negative"]
    );
    assert_eq!(label("recall_at_5"), "Recall@5");
    assert_eq!(label("fpr_hard_negative"), "FPR (hard neg.)");
    // an unknown key is no metric and is its own label
    assert_eq!(Metric::from_key("Recall@5"), None);
    assert_eq!(Metric::from_key("ap"), None);
    assert_eq!(label("probes_failed"), "probes_failed");
}

#[test]
fn false_positive_rates_are_the_only_lower_is_better_metrics() {
    for m in RETRIEVAL_METRICS.into_iter().chain(DETECTION_METRICS) {
        let want = if m.key().starts_with("fpr") {
            Direction::Lower
        } else {
            Direction::Higher
        };
        assert_eq!(m.direction(), want, "{m}");
    }
}

#[test]
fn a_query_and_a_detector_answer_only_their_own_metrics() {
    let q = QueryMetrics {
        recall_at_5: 0.5,
        map: 0.25,
        ..Default::default()
    };
    assert_eq!(q.get(Metric::RecallAt5), Some(0.5));
    assert_eq!(q.get(Metric::Map), Some(0.25));
    assert_eq!(q.get(Metric::Fpr), None);
}

#[test]
fn undefined_ratios_stay_undefined() {
    // flags nothing, no positives: precision, recall and F1 undefined
    let d = detection_scores(&Confusion {
        tn: 5,
        ..Default::default()
    });
    let [precision, recall, f1, fpr, fpr_hard_negative] = d;
    assert_eq!(precision, None);
    assert_eq!(recall, None);
    assert_eq!(f1, None);
    assert_eq!(fpr, Some(0.0));
    assert_eq!(fpr_hard_negative, None);
    // flags nothing, positives exist: precision undefined, recall 0, F1 undefined
    let d = detection_scores(&Confusion {
        fn_: 3,
        tn: 2,
        ..Default::default()
    });
    let [precision, recall, f1, ..] = d;
    assert_eq!(precision, None);
    assert_eq!(recall, Some(0.0));
    assert_eq!(f1, None);
    // only positives: FPR undefined
    let d = detection_scores(&Confusion {
        tp: 1,
        ..Default::default()
    });
    let [_, _, f1, fpr, _] = d;
    assert_eq!(fpr, None);
    assert_eq!(f1, Some(1.0));
}

#[test]
fn detection_worked_example() {
    let c = Confusion {
        tp: 8,
        fp: 2,
        tn: 18,
        fn_: 2,
        hard_negative_fp: 2,
        hard_negative_tn: 3,
    };
    let [precision, recall, f1, fpr, fpr_hard_negative] = detection_scores(&c);
    close(precision.unwrap(), 0.8);
    close(recall.unwrap(), 0.8);
    close(f1.unwrap(), 0.8);
    close(fpr.unwrap(), 0.1);
    close(fpr_hard_negative.unwrap(), 0.4);
    // both P and R zero: F1 is the limit 0
    let z = detection_scores(&Confusion {
        fp: 1,
        fn_: 1,
        ..Default::default()
    });
    assert_eq!(z[2], Some(0.0));
}
