use super::*;
use crate::pipeline::measure::probes::ProbeResult;
use crate::pipeline::score::stats::Summary;

/// The fuzz fixture's report, with numbers chosen for these tests: discovery metrics 0.6, 0.5
/// and 0.4; detector 1 recall 0.9 and FPR 0.1, detector 2 on the review tier; p95 3 ms over 3
/// tools; no failure; probes: one answered, one failed (an unsound list), one not applicable, not still
/// answering afterwards.
fn report() -> crate::pipeline::report::model::Report {
    let mut r = crate::pipeline::report::model::fixture();
    // the fixture's system failed; these examples' did not
    r.failure = None;
    let rr = r.retrieval.as_mut().unwrap();
    for (k, v) in [("recall_at_5", 0.6), ("mrr", 0.5), ("ndcg_at_10", 0.4)] {
        rr.metrics.insert(k.into(), Summary::of_defined(&[v]));
    }
    let s = r.security.as_mut().unwrap();
    set_detector(&mut s.detectors[0], 0.9, 0.1);
    s.detectors[1].tier = Some(Tier::Review);
    r
}

fn set_detector(d: &mut crate::pipeline::score::model::DetectorReport, recall: f64, fpr: f64) {
    d.metrics
        .insert("recall".into(), Summary::of_defined(&[recall]));
    d.metrics.insert("fpr".into(), Summary::of_defined(&[fpr]));
}

fn of(r: &crate::pipeline::report::model::Report) -> Scorecard {
    scorecard(&Inputs {
        retrieval: r.retrieval.as_ref(),
        security: r.security.as_ref(),
        robustness: r.robustness.as_ref(),
        failure: r.failure.as_ref(),
        corpus_tools: Some(3),
    })
}

fn dim<'a>(s: &'a Scorecard, name: &str) -> &'a Dimension {
    s.dimensions.iter().find(|d| d.name == name).unwrap()
}

fn probe(outcome: ProbeOutcome, detail: &str) -> ProbeResult {
    ProbeResult {
        id: "p".into(),
        what: "p".into(),
        outcome,
        results: None,
        detail: detail.into(),
        latency_ms: None,
    }
}

#[test]
fn the_rubric_numbers_of_a_worked_example() {
    let s = of(&report());
    let score = |n| dim(&s, n).score;
    // (0.6 + 0.5 + 0.4) / 3 × 30
    assert_eq!(score("discovery"), Some(15.0));
    // 1 answered of 2 applicable probes, not still answering: 1 of 3 checks × 20
    assert_eq!(score("robustness"), Some(6.7));
    // the review tier does not count: (0.9 − 0.1) × 20
    assert_eq!(score("security"), Some(16.0));
    assert_eq!(score("performance"), Some(20.0));
    // no probe was refused and none failed without a message: nothing to read
    assert_eq!(score("transparency"), None);
    assert!(dim(&s, "transparency").note.starts_with("not measured"));
    // (15 + 20/3 + 16 + 20) / 90 × 100 = 64.07
    assert_eq!(s.measured_weight, 90.0);
    assert_eq!(s.total, Some(64.1));
    assert_eq!(
        s.dimensions.iter().map(|d| d.max).sum::<f64>(),
        100.0,
        "the weights add up to 100"
    );
    assert_eq!(dim(&s, "discovery").inputs["mrr"], 0.5);
}

#[test]
fn the_same_observations_give_the_same_scorecard() {
    let r = report();
    let a = of(&r);
    assert_eq!(a, of(&r));
    let back: Scorecard = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    assert_eq!(a, back);
}

#[test]
fn a_dimension_not_measured_is_left_out_never_zero() {
    let mut r = report();
    r.robustness = None;
    let s = of(&r);
    assert_eq!(dim(&s, "robustness").score, None);
    assert_eq!(dim(&s, "transparency").score, None);
    // (15 + 16 + 20) / 70
    assert_eq!(s.measured_weight, 70.0);
    assert_eq!(s.total, Some(72.9));
    // nothing measured: no total
    let none = scorecard(&Inputs::default());
    assert_eq!(none.total, None);
    assert!(none.dimensions.iter().all(|d| d.score.is_none()));
}

#[test]
fn undefined_metrics_are_left_out_of_the_discovery_mean() {
    let mut r = report();
    let rr = r.retrieval.as_mut().unwrap();
    rr.metrics
        .insert("mrr".into(), Summary::of(vec![None, None]));
    // (0.6 + 0.4) / 2 × 30
    assert_eq!(dim(&of(&r), "discovery").score, Some(15.0));
    let rr = r.retrieval.as_mut().unwrap();
    rr.metrics.remove("recall_at_5");
    rr.metrics
        .insert("ndcg_at_10".into(), Summary::of(vec![None]));
    let d = of(&r);
    assert_eq!(dim(&d, "discovery").score, None);
    assert!(dim(&d, "discovery").note.contains("undefined"));
    // without tool discovery, no latency either
    r.retrieval = None;
    let d = of(&r);
    assert_eq!(dim(&d, "discovery").score, None);
    assert_eq!(dim(&d, "performance").score, None);
}

#[test]
fn no_detectors_means_security_not_measured() {
    let mut r = report();
    r.security.as_mut().unwrap().detectors.clear();
    assert_eq!(dim(&of(&r), "security").score, None);
    r.security = None;
    assert_eq!(dim(&of(&r), "security").score, None);
    // a detector that judged nothing (recall and FPR 0/0) does not count either
    let mut r = report();
    let d = &mut r.security.as_mut().unwrap().detectors[0];
    d.metrics.insert("fpr".into(), Summary::of(vec![None]));
    assert_eq!(dim(&of(&r), "security").score, None);
}

#[test]
fn a_noisy_detector_lowers_security_and_the_total() {
    let clean = of(&report());
    let mut r = report();
    // the same recall, flagging half the benign entries
    set_detector(&mut r.security.as_mut().unwrap().detectors[0], 0.9, 0.5);
    let noisy = of(&r);
    assert_eq!(dim(&noisy, "security").score, Some(8.0));
    assert!(noisy.total < clean.total, "{noisy:?}");
    // flagging everything is worth nothing
    set_detector(&mut r.security.as_mut().unwrap().detectors[0], 1.0, 1.0);
    assert_eq!(dim(&of(&r), "security").score, Some(0.0));
}

#[test]
fn a_degraded_retriever_lowers_discovery_and_the_total() {
    let good = of(&report());
    let mut r = report();
    let rr = r.retrieval.as_mut().unwrap();
    for (k, v) in [("recall_at_5", 0.3), ("mrr", 0.2), ("ndcg_at_10", 0.25)] {
        rr.metrics.insert(k.into(), Summary::of_defined(&[v]));
    }
    let bad = of(&r);
    assert_eq!(dim(&bad, "discovery").score, Some(7.5));
    assert!(bad.total.unwrap() < good.total.unwrap());
}

#[test]
fn a_system_that_failed_scores_zero_robustness() {
    let mut r = report();
    r.robustness = None;
    r.failure = Some(SutError::Crashed {
        system: "p".into(),
        detail: "gone".into(),
    });
    let s = of(&r);
    assert_eq!(dim(&s, "robustness").score, Some(0.0));
    assert!(dim(&s, "robustness").note.contains("crashed"));
}

#[test]
fn robustness_counts_applicable_probes_and_survival() {
    let mut r = report();
    let rb = r.robustness.as_mut().unwrap();
    rb.probes = vec![
        probe(ProbeOutcome::Answered, "3 results"),
        probe(ProbeOutcome::Refused, "`query` is required"),
        probe(ProbeOutcome::NotApplicable, "no limit"),
    ];
    rb.survived = true;
    assert_eq!(dim(&of(&r), "robustness").score, Some(20.0));
    r.robustness.as_mut().unwrap().survived = false;
    // 2 of 3 checks
    assert_eq!(dim(&of(&r), "robustness").score, Some(13.3));
}

#[test]
fn performance_follows_the_documented_curve() {
    let mut r = report();
    let at = |r: &mut crate::pipeline::report::model::Report, p95: f64, tools: usize| {
        r.retrieval.as_mut().unwrap().latency_ms.p95 = Some(p95);
        let s = scorecard(&Inputs {
            retrieval: r.retrieval.as_ref(),
            corpus_tools: Some(tools),
            ..Inputs::default()
        });
        dim(&s, "performance").score
    };
    assert_eq!(at(&mut r, 100.0, 2665), Some(20.0));
    assert_eq!(at(&mut r, 550.0, 2665), Some(10.0));
    assert_eq!(at(&mut r, 1000.0, 2665), Some(0.0));
    assert_eq!(at(&mut r, 5000.0, 2665), Some(0.0));
    // a corpus twice the size: both bounds doubled
    assert_eq!(at(&mut r, 200.0, 20_000), Some(20.0));
    assert_eq!(at(&mut r, 1100.0, 20_000), Some(10.0));
}

#[test]
fn transparency_is_the_share_of_errors_that_name_their_cause() {
    let mut r = report();
    r.robustness.as_mut().unwrap().probes = vec![
        probe(ProbeOutcome::Refused, "`query` is required"),
        probe(ProbeOutcome::Refused, "Internal error"),
        probe(ProbeOutcome::Failed, NO_MESSAGE),
        // a crash or an unsound list is robustness's business, not an error message
        probe(ProbeOutcome::Failed, "p crashed: gone"),
        probe(ProbeOutcome::Answered, "3 results"),
    ];
    let s = of(&r);
    let t = dim(&s, "transparency");
    // 1 of 3 × 10
    assert_eq!(t.score, Some(3.3));
    assert_eq!(t.inputs["errors"], 3.0);
}

#[test]
fn which_messages_name_their_cause() {
    for yes in [
        "`query` is required",
        "query must not be empty",
        "limit must be between 1 and 100",
        "MCP error -32602: Invalid params: query",
    ] {
        assert!(names_cause(yes), "{yes}");
    }
    for no in [
        "",
        "Internal error",
        "error",
        "MCP error -32603: Internal error",
        "Something went wrong",
        "request failed (code 500)",
    ] {
        assert!(!names_cause(no), "{no}");
    }
}

#[test]
fn delta_is_against_a_baseline_of_the_same_rubric() {
    let mut s = of(&report());
    assert_eq!(s.delta(), None);
    let mut b = s.to_baseline();
    b.total = Some(60.0);
    b.dimensions.insert("discovery".into(), Some(16.5));
    s.against(Some(&b));
    assert_eq!(s.delta(), Some(4.1));
    assert_eq!(s.dimension_delta("discovery"), Some(-1.5));
    // transparency was not measured: no Δ
    assert_eq!(s.dimension_delta("transparency"), None);
    b.rubric = RUBRIC + 1;
    s.against(Some(&b));
    assert_eq!(s.delta(), None);
}

#[test]
fn delta_compares_only_the_dimensions_both_measured() {
    let mut s = of(&report());
    let measured: Vec<(String, Option<f64>)> = s
        .dimensions
        .iter()
        .map(|d| (d.name.clone(), d.score))
        .collect();
    // the same system, baseline written with --robustness off: no robustness points
    let mut b = s.to_baseline();
    b.dimensions.insert("robustness".into(), None);
    b.total = Some(0.0);
    s.against(Some(&b));
    assert!(dim(&s, "robustness").score.is_some(), "{measured:?}");
    let both: Vec<&str> = s
        .compared()
        .unwrap()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert!(
        !both.contains(&"robustness") && both.contains(&"discovery"),
        "{both:?}"
    );
    // unchanged where both measured: Δ 0, whatever the totals over different dimensions say
    assert_eq!(s.delta(), Some(0.0));
    // 3 points more discovery in the baseline: −300 / the weights both measured
    let weight: f64 = s.compared().unwrap().iter().map(|d| d.max).sum();
    let discovery = dim(&s, "discovery").score.unwrap();
    b.dimensions
        .insert("discovery".into(), Some(discovery + 3.0));
    s.against(Some(&b));
    assert_eq!(s.delta(), Some(round1(-300.0 / weight)));
    // the same dimensions measured: the totals' difference, as before
    let mut b = s.to_baseline();
    b.total = s.total.map(|t| t - 2.0);
    s.against(Some(&b));
    assert_eq!(s.compared(), None);
    assert_eq!(s.delta(), Some(2.0));
}
