//! The gate's unit tests: sentences, verdicts against a baseline, the exit-code policy.
use super::*;
use crate::pipeline::report::model::Report;

fn check(subject: &str, metric: &str, kind: CheckKind) -> Check {
    Check {
        subject: subject.into(),
        metric: metric.into(),
        kind,
        direction: Metric::from_key(metric).map_or(Direction::Lower, Metric::direction),
        baseline: None,
        current: None,
        ci95: None,
        delta: None,
        limit: None,
        status: CheckStatus::Fail,
        message: "the message".into(),
        paired: None,
    }
}

#[test]
fn a_failed_check_reads_as_a_sentence() {
    let mut c = check("retrieval", "recall_at_5", CheckKind::Tolerance);
    (c.baseline, c.current, c.limit) = (Some(0.5596), Some(0.4091), Some(0.5396));
    assert_eq!(
        sentence(&c),
        "Recall@5 fell 0.5596 → 0.4091 (\u{2212}0.150; tolerance 0.020)"
    );
    // lower is better: a rise is the regression
    let mut c = check("detector:rules", "fpr", CheckKind::Tolerance);
    (c.baseline, c.current, c.limit) = (Some(0.03), Some(0.12), Some(0.08));
    assert_eq!(
        sentence(&c),
        "rules FPR rose 0.0300 → 0.1200 (+0.090; tolerance 0.050)"
    );
    let mut c = check("detector:rules", "fpr", CheckKind::Ceiling);
    (c.current, c.limit) = (Some(0.12), Some(0.09));
    assert_eq!(sentence(&c), "rules FPR 0.1200 is above its ceiling 0.090");
    let mut c = check("detector:x", "recall", CheckKind::Floor);
    (c.current, c.limit) = (Some(0.0), Some(0.1));
    assert_eq!(sentence(&c), "x Recall 0.0000 is below its floor 0.100");
    // undefined numbers fall back to the check's own message
    let c = check("retrieval", "mrr", CheckKind::Tolerance);
    assert_eq!(sentence(&c), "MRR: the message");
    let c = check("robustness", "probes_failed", CheckKind::Ceiling);
    assert_eq!(sentence(&c), "robustness: the message");
}

#[test]
fn signed_numbers_have_a_real_minus_and_no_signed_zero() {
    use super::signed;
    assert_eq!(signed(-0.15049, 3), "\u{2212}0.150");
    assert_eq!(signed(0.02, 3), "+0.020");
    assert_eq!(signed(-0.00001, 4), "0");
    assert_eq!(signed(0.0, 4), "0");
}

/// A whole report (the fuzz fixture's: retrieval, two detectors, robustness) with its
/// failure cleared.
fn report() -> Report {
    let mut r: Report = crate::pipeline::report::model::fixture();
    r.failure = None;
    r.robustness = None;
    r
}

fn verdict_of(r: &Report, b: Option<&Baseline>) -> GateReport {
    evaluate(
        &r.gate_inputs(),
        b.map(|b| ("b.json", b)),
        &Policy::default(),
    )
}

#[test]
fn a_report_against_its_own_baseline_passes_and_a_regression_fails_by_name() {
    let r = report();
    let none = verdict_of(&r, None);
    assert_eq!(none.verdict, Verdict::NoBaseline);
    assert!(none.checks.iter().all(|c| c.status == CheckStatus::Info));

    let b = r.to_baseline(None);
    let own = verdict_of(&r, Some(&b));
    assert_eq!(own.verdict, Verdict::Pass, "{}", own.summary);
    assert!(own.ungated.is_empty(), "{:?}", own.ungated);
    // the default gated retrieval metrics and each detector's ceiling and floor
    let gated: Vec<(&str, &str)> = own
        .checks
        .iter()
        .filter(|c| c.kind != CheckKind::Info)
        .map(|c| (c.subject.as_str(), c.metric.as_str()))
        .collect();
    for want in [
        ("retrieval", "recall_at_5"),
        ("retrieval", "mrr"),
        ("retrieval", "ndcg_at_10"),
    ] {
        assert!(gated.contains(&want), "{want:?} not gated: {gated:?}");
    }
    assert_eq!(
        gated
            .iter()
            .filter(|(s, _)| s.starts_with("detector:"))
            .count(),
        4
    );

    // Recall@5 0.10 below a baseline with tolerance 0.02: one failed check, in words
    let mut worse = r.clone();
    let m = worse
        .retrieval
        .as_mut()
        .unwrap()
        .metrics
        .get_mut("recall_at_5")
        .unwrap();
    m.mean = m.mean.map(|v| v - 0.1);
    let g = verdict_of(&worse, Some(&b));
    assert_eq!(g.verdict, Verdict::Fail);
    assert_eq!(
        g.summary,
        "gate failed: Recall@5 fell 0.5000 → 0.4000 (\u{2212}0.100; tolerance 0.020)"
    );
}

#[test]
fn a_detector_new_to_the_baseline_is_held_to_the_default_limits() {
    let r = report();
    let mut b = r.to_baseline(None);
    let sec = b.security.as_mut().unwrap();
    let name = r.security.as_ref().unwrap().detectors[1].detector.clone();
    sec.detectors.remove(&name);
    let g = verdict_of(&r, Some(&b));
    let subject = format!("detector:{name}");
    let limits: Vec<(CheckKind, Option<f64>)> = g
        .checks
        .iter()
        .filter(|c| c.subject == subject && c.kind != CheckKind::Info)
        .map(|c| (c.kind, c.limit))
        .collect();
    assert_eq!(
        limits,
        [
            (CheckKind::Ceiling, Some(0.10)),
            (CheckKind::Floor, Some(0.10))
        ]
    );
    // with the defaults switched off it is measured but not gated
    let cx = Policy {
        new_detector: NewDetectorLimits {
            fpr_ceiling: None,
            recall_floor: None,
        },
        ..Policy::default()
    };
    let g = evaluate(&r.gate_inputs(), Some(("b.json", &b)), &cx);
    assert_eq!(g.ungated, [subject]);
}

/// Undefined is not worse: a detector that could judge no entry (FPR and recall 0/0) is held
/// to nothing by the new-detector limits or by its baseline, says so, and fails no gate; a
/// baseline's limits for a detector that did not run are named, not dropped.
#[test]
fn undefined_is_not_worse_and_limits_of_a_detector_that_did_not_run_are_named() {
    let mut r = report();
    let sec = r.security.as_mut().unwrap();
    let name = sec.detectors[1].detector.clone();
    for m in ["fpr", "recall", "precision", "f1", "fpr_hard_negative"] {
        if let Some(s) = sec.detectors[1].metrics.get_mut(m) {
            s.mean = None;
            s.ci95 = None;
        }
    }
    let subject = format!("detector:{name}");
    let own = r.to_baseline(None);
    // a new detector (no entry) and one with its own limits and gated metrics: both undefined
    let mut gated_entry = report().to_baseline(None);
    for m in gated_entry
        .security
        .as_mut()
        .unwrap()
        .detectors
        .get_mut(&name)
        .unwrap()
        .metrics
        .values_mut()
    {
        m.gated = true;
    }
    let mut no_entry = own.clone();
    no_entry.security.as_mut().unwrap().detectors.remove(&name);
    for b in [&no_entry, &gated_entry] {
        let g = verdict_of(&r, Some(b));
        assert_eq!(g.verdict, Verdict::Pass, "{}", g.summary);
        let mine: Vec<&Check> = g.checks.iter().filter(|c| c.subject == subject).collect();
        assert!(!mine.is_empty());
        for c in &mine {
            assert_eq!(
                (c.kind, c.status),
                (CheckKind::Info, CheckStatus::Info),
                "{c:?}"
            );
        }
        let ceiling = mine
            .iter()
            .find(|c| c.metric == "fpr" && c.limit.is_some())
            .unwrap();
        assert!(
            ceiling.message.starts_with(
                "FPR is undefined (0/0): no entries to compute it over, so the ceiling "
            ) && ceiling
                .message
                .contains("cannot be checked; reported, not gated"),
            "{}",
            ceiling.message
        );
        // covered by no gated check: said, and the check run is neutral, not green
        assert_eq!(g.ungated, std::slice::from_ref(&subject));
        assert!(
            !g.summary.contains("held to the default limits"),
            "{}",
            g.summary
        );
        // and the summary a reviewer reads names the limits it could not check
        assert!(
            g.summary.contains(&format!(
                "; limits not checked: {name} FPR ceiling (undefined, 0/0)"
            )),
            "{}",
            g.summary
        );
    }
    // the baseline's limits for a detector that did not run
    let mut ran_less = report();
    ran_less.security.as_mut().unwrap().detectors.remove(1);
    let g = verdict_of(&ran_less, Some(&report().to_baseline(None)));
    assert_eq!(g.verdict, Verdict::Pass, "{}", g.summary);
    let named: Vec<&str> = g
        .checks
        .iter()
        .filter(|c| c.subject == subject)
        .map(|c| c.message.as_str())
        .collect();
    assert_eq!(named.len(), 2, "{named:?}");
    assert!(
        g.summary.ends_with(&format!(
            "; limits not checked: {name} FPR ceiling and Recall floor ({name} did not run)"
        )),
        "{}",
        g.summary
    );
    assert!(
        named.iter().all(|m| m.ends_with(&format!(
            "is not checked: {name} did not run in this measurement"
        ))),
        "{named:?}"
    );
}

#[test]
fn limits_for_a_new_detector_default_to_a_tenth() {
    assert_eq!(DEFAULT_NEW_DETECTOR.fpr_ceiling, Some(0.10));
    assert_eq!(DEFAULT_NEW_DETECTOR.recall_floor, Some(0.10));
    assert_eq!(Policy::default().new_detector, DEFAULT_NEW_DETECTOR);
}

#[test]
fn the_exit_code_and_the_conclusion_follow_the_verdict_alone() {
    let outcome = |verdict, ungated: &[&str]| GateReport {
        verdict,
        baseline: None,
        summary: String::new(),
        checks: vec![],
        ungated: ungated.iter().map(|s| s.to_string()).collect(),
        worst_queries: vec![],
        improved_queries: vec![],
        significance: None,
        new_confusions: None,
        detector_flips: vec![],
    };
    for (verdict, code, never, conclusion) in [
        (Verdict::Pass, 0, 0, Conclusion::Success),
        (Verdict::Fail, 1, 0, Conclusion::Failure),
        (Verdict::NoBaseline, 0, 0, Conclusion::Neutral),
        (Verdict::Error, 3, 3, Conclusion::Failure),
    ] {
        let o = outcome(verdict, &[]);
        assert_eq!(o.exit_code_with(true), code, "{verdict:?}");
        assert_eq!(o.exit_code_with(false), never, "{verdict:?}");
        assert_eq!(
            o.conclusion(o.exit_code_with(true)),
            conclusion,
            "{verdict:?}"
        );
    }
    // a failure let through is neutral, never green
    assert_eq!(
        outcome(Verdict::Fail, &[]).conclusion(0),
        Conclusion::Neutral
    );
    // a pass that leaves a measured part ungated is neutral too
    let partial = outcome(Verdict::Pass, &["detector:new"]);
    assert_eq!(partial.exit_code_with(true), 0);
    assert_eq!(partial.conclusion(0), Conclusion::Neutral);
}

#[test]
fn the_outcome_depends_on_its_inputs_only() {
    let r = report();
    let b = r.to_baseline(None);
    let json = |g: &GateReport| serde_json::to_string(g).unwrap();
    let own = evaluate(&r.gate_inputs(), Some(("b.json", &b)), &Policy::default());
    // everything of the report the gate does not read, changed: the same outcome
    let mut other = r.clone();
    other.warnings.push("something else".into());
    other.datasets.clear();
    other.command = "security".into();
    other.gate.summary = "stale".into();
    other.gate.verdict = Verdict::Error;
    if let Some(rr) = other.retrieval.as_mut() {
        rr.observations.runs.clear();
        rr.retriever = "another".into();
    }
    let again = evaluate(
        &other.gate_inputs(),
        Some(("b.json", &b)),
        &Policy::default(),
    );
    assert_eq!(json(&own), json(&again));
    // the inputs alone, with no report at all: the same outcome
    let inputs = GateInputs {
        retrieval: r.retrieval.as_ref(),
        security: r.security.as_ref(),
        robustness: None,
        failure: None,
    };
    assert_eq!(
        json(&own),
        json(&evaluate(&inputs, Some(("b.json", &b)), &Policy::default()))
    );
    // and a change to what it reads does change it
    let mut worse = r.clone();
    for s in worse.retrieval.as_mut().unwrap().metrics.values_mut() {
        s.mean = s.mean.map(|v| v - 0.2);
    }
    let g = evaluate(
        &worse.gate_inputs(),
        Some(("b.json", &b)),
        &Policy::default(),
    );
    assert_eq!(g.verdict, Verdict::Fail);
}

#[test]
fn a_system_that_could_not_be_measured_is_an_error_and_gates_nothing() {
    let r = report();
    let b = r.to_baseline(None);
    let mut inputs = r.gate_inputs();
    inputs.failure = Some("the proxy exited with status 1".into());
    let g = evaluate(&inputs, Some(("b.json", &b)), &Policy::default());
    assert_eq!(g.verdict, Verdict::Error);
    assert_eq!(g.exit_code_with(true), 3);
    assert_eq!(
        g.summary,
        "the system under test could not be measured: the proxy exited with status 1; the report is partial and nothing is gated"
    );
    // a partial run gates nothing: no check, no regressed query, no new confusion is computed
    // over what was measured before the failure, so none can be published
    assert!(g.checks.is_empty(), "{:?}", g.checks);
    assert!(g.worst_queries.is_empty() && g.ungated.is_empty());
    assert!(g.new_confusions.is_none());
    assert_eq!(g.baseline.as_deref(), Some("b.json"));
    // the reason is clipped to 300 characters
    inputs.failure = Some("x".repeat(400));
    let g = evaluate(&inputs, None, &Policy::default());
    assert!(
        g.summary.contains(&format!("{}…;", "x".repeat(300))),
        "{}",
        g.summary
    );
}

#[test]
fn confusions_the_baseline_does_not_have_are_listed_as_new_and_never_gated() {
    use crate::pipeline::score::diagnostics::{ConfusionPair, ToolDiagnostics};
    let pair = |w: &str, t: &str, q: usize| ConfusionPair {
        wanted: w.into(),
        taken: t.into(),
        queries: q,
        occurrences: q,
        examples: vec!["q1".into()],
    };
    let mut r = report();
    let rr = r.retrieval.as_mut().unwrap();
    rr.tool_diagnostics = ToolDiagnostics {
        top_k: 5,
        runs: 1,
        confusions: vec![pair("s:a", "s:b", 2)],
        ..Default::default()
    };
    let b = r.to_baseline(None);
    let known = b.retrieval.as_ref().unwrap();
    assert!(known.confusions_cut_at.is_none());
    assert_eq!(known.is_new_confusion("s:a", "s:b", 2), Some(false));
    // against its own baseline: nothing new
    let own = verdict_of(&r, Some(&b));
    assert_eq!(own.new_confusions.as_ref().map(|n| n.total), Some(0));
    // a pull request where s:c also takes s:a's place, and s:b takes s:d's
    let rr = r.retrieval.as_mut().unwrap();
    rr.tool_diagnostics.confusions = vec![
        pair("s:a", "s:c", 3),
        pair("s:a", "s:b", 2),
        pair("s:d", "s:b", 1),
    ];
    let pr = verdict_of(&r, Some(&b));
    let new = pr.new_confusions.clone().unwrap();
    assert_eq!(new.total, 2);
    let names: Vec<(&str, &str)> = new
        .pairs
        .iter()
        .map(|p| (p.wanted.as_str(), p.taken.as_str()))
        .collect();
    assert_eq!(names, [("s:a", "s:c"), ("s:d", "s:b")], "worst first");
    assert_eq!(pr.verdict, own.verdict, "reported, not gated");
    assert_eq!(pr.checks.len(), own.checks.len());
    // a baseline written before evalgate kept confusions: nothing is called new
    let mut old = b.clone();
    old.retrieval.as_mut().unwrap().confusions = None;
    assert!(verdict_of(&r, Some(&old)).new_confusions.is_none());
    // and a report without tool diagnostics compares nothing
    r.retrieval.as_mut().unwrap().tool_diagnostics = ToolDiagnostics::default();
    assert!(verdict_of(&r, Some(&b)).new_confusions.is_none());
    assert!(r.to_baseline(None).retrieval.unwrap().confusions.is_none());
}

/// The fixture's report with `n` queries, every one scoring 1.0 in Recall@5 (and the mean to
/// match), and the same report with the first `dropped` queries' Recall@5 down to 0.
fn with_queries(n: usize, dropped: usize) -> (Report, Report) {
    let mut r = report();
    let rt = r.retrieval.as_mut().unwrap();
    let q0 = rt.per_query[0].clone();
    rt.per_query = (0..n)
        .map(|i| {
            let mut q = q0.clone();
            q.id = format!("q{i:02}").into();
            q.metrics.recall_at_5 = 1.0;
            q
        })
        .collect();
    rt.metrics.get_mut("recall_at_5").unwrap().mean = Some(1.0);
    let mut worse = r.clone();
    let wt = worse.retrieval.as_mut().unwrap();
    for q in wt.per_query.iter_mut().take(dropped) {
        q.metrics.recall_at_5 = 0.0;
    }
    wt.metrics.get_mut("recall_at_5").unwrap().mean = Some(1.0 - dropped as f64 / n as f64);
    (r, worse)
}

fn recall_at_5(g: &GateReport) -> &Check {
    g.checks
        .iter()
        .find(|c| c.subject == "retrieval" && c.metric == "recall_at_5")
        .unwrap()
}

#[test]
fn a_regression_over_many_queries_is_significant_and_its_interval_excludes_0() {
    let (r, worse) = with_queries(30, 12);
    let b = r.to_baseline(None);
    let g = verdict_of(&worse, Some(&b));
    let c = recall_at_5(&g);
    assert_eq!(c.status, CheckStatus::Fail);
    let p = c.paired.as_ref().expect("a paired comparison");
    assert_eq!((p.queries, p.worse, p.better, p.unchanged), (30, 12, 0, 18));
    // 12 non-zero deltas: exact, and only the two all-same-sign assignments are as extreme
    assert_eq!(p.method, model::PairedMethod::Exact);
    assert_eq!(p.p_value, 2.0 / 4096.0);
    assert!((p.mean_delta + 0.4).abs() < 1e-9);
    let [lo, hi] = p.delta_ci95.unwrap();
    assert!(lo <= -0.4 && hi < 0.0, "{lo} {hi}");
    assert_eq!(p.significant, Some(true));
    assert!(p.p_holm.unwrap() >= p.p_value);
    assert!(
        c.message.contains("significant at α = 0.05"),
        "{}",
        c.message
    );
    assert_eq!(g.worst_queries.len(), 10);
    assert!(g.worst_queries.iter().all(|q| q.delta == Some(-1.0)));
    assert_eq!(g.significance, Some(Significance::default()));
    // the same inputs, the same comparison
    assert_eq!(recall_at_5(&verdict_of(&worse, Some(&b))).paired, c.paired);
}

#[test]
fn an_unchanged_system_has_p_1_and_nothing_significant() {
    let (r, _) = with_queries(30, 0);
    let b = r.to_baseline(None);
    let g = verdict_of(&r, Some(&b));
    assert_eq!(g.verdict, Verdict::Pass, "{}", g.summary);
    for c in g.checks.iter().filter(|c| c.paired.is_some()) {
        let p = c.paired.as_ref().unwrap();
        assert_eq!(p.p_value, 1.0);
        assert_eq!(p.significant, Some(false));
        assert_eq!((p.worse, p.better), (0, 0));
        assert!(c.message.contains("not significant"), "{}", c.message);
    }
    assert!(g.worst_queries.is_empty() && g.improved_queries.is_empty());
}

/// A baseline value edited by hand no longer matches the per-query values kept beside it: a
/// paired test would compare with something the gate does not (p = 1 and "noise" for a drop
/// of 0.34), so none is made and the check fails on the tolerance alone.
#[test]
fn per_query_values_that_do_not_make_the_baselines_value_are_not_paired() {
    // the baseline holds R@5 1.0, but per-query values of a run that lost two queries (what
    // a hand-edited value looks like): the current run equals those per-query values
    let (_, worse) = with_queries(30, 2);
    let mut b = worse.to_baseline(None);
    b.retrieval
        .as_mut()
        .unwrap()
        .metrics
        .get_mut("recall_at_5")
        .unwrap()
        .value = Some(1.0);
    let g = verdict_of(&worse, Some(&b));
    let c = recall_at_5(&g);
    assert_eq!(c.status, CheckStatus::Fail);
    assert!(c.paired.is_none(), "{:?}", c.paired);
    assert!(!c.message.contains("significant"), "{}", c.message);
    // the baseline as written: paired
    let g = verdict_of(&worse, Some(&worse.to_baseline(None)));
    assert!(recall_at_5(&g).paired.is_some());
}

#[test]
fn a_large_drop_that_is_not_significant_says_so_and_passes_only_when_significance_is_required() {
    // 2 of 30 queries lost Recall@5: −0.067, beyond the tolerance, but p = 0.5
    let (r, worse) = with_queries(30, 2);
    let b = r.to_baseline(None);
    let g = verdict_of(&worse, Some(&b));
    let c = recall_at_5(&g);
    assert_eq!(c.status, CheckStatus::Fail);
    assert_eq!(c.paired.as_ref().unwrap().p_value, 0.5);
    assert!(
        c.message.contains("large but not significant at α = 0.05"),
        "{}",
        c.message
    );
    let cx = Policy {
        significance: Significance {
            alpha: 0.05,
            required: true,
        },
        ..Policy::default()
    };
    let g = evaluate(&worse.gate_inputs(), Some(("b.json", &b)), &cx);
    assert_eq!(g.verdict, Verdict::Pass, "{}", g.summary);
    assert!(
        g.summary.contains(
            "Recall@5 dropped beyond the tolerance but not significantly ([gate] require_significance)"
        ),
        "{}",
        g.summary
    );
    let c = recall_at_5(&g);
    assert_eq!(c.status, CheckStatus::Pass);
    assert!(
        c.message.contains("require_significance = true"),
        "{}",
        c.message
    );
    // a significant drop still fails when significance is required
    let (_, much_worse) = with_queries(30, 12);
    let g = evaluate(&much_worse.gate_inputs(), Some(("b.json", &b)), &cx);
    assert_eq!(g.verdict, Verdict::Fail);
}

#[test]
fn queries_that_rose_are_listed_best_first_after_those_that_fell() {
    let (r, worse) = with_queries(30, 3);
    // the worse run as the baseline: the three queries rose
    let b = worse.to_baseline(None);
    let g = verdict_of(&r, Some(&b));
    assert!(g.worst_queries.is_empty());
    let ids: Vec<&str> = g.improved_queries.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ["q00", "q01", "q02"]);
    let p = recall_at_5(&g).paired.clone().unwrap();
    assert_eq!((p.better, p.worse), (3, 0));
}

/// The fixture's report with the first detector's entries replaced: attacks `a0`..`a9`
/// (flagged unless listed in `missed`) and benign entries `b0`..`b9` (flagged when listed in
/// `flagged`).
fn with_entries(missed: &[&str], flagged: &[&str]) -> Report {
    use crate::pipeline::dataset::Truth;
    use crate::pipeline::score::model::Outcome;
    let mut r = report();
    let d = &mut r.security.as_mut().unwrap().detectors[0];
    let e0 = d.entries[0].clone();
    d.entries = (0..20)
        .map(|i| {
            let mut e = e0.clone();
            let attack = i < 10;
            e.id = format!("{}{}", if attack { 'a' } else { 'b' }, i % 10);
            e.label = if attack {
                Truth::Malicious
            } else {
                Truth::Benign
            };
            e.outcome = match (
                attack,
                missed.contains(&e.id.as_str()),
                flagged.contains(&e.id.as_str()),
            ) {
                (true, true, _) => Outcome::Fn,
                (true, false, _) => Outcome::Tp,
                (false, _, true) => Outcome::Fp,
                (false, _, false) => Outcome::Tn,
            };
            e
        })
        .collect();
    r
}

#[test]
fn detector_flips_name_the_newly_missed_and_newly_flagged_entries_with_mcnemars_test() {
    let before = with_entries(&["a9"], &[]);
    let b = before.to_baseline(None);
    let name = before.security.as_ref().unwrap().detectors[0]
        .detector
        .clone();
    let kept = b.security.as_ref().unwrap().detectors[&name]
        .verdicts
        .as_ref()
        .unwrap();
    assert_eq!(kept.len(), 20);
    assert_eq!((kept["a0"], kept["a9"], kept["b0"]), (true, false, false));
    // the same verdicts: nothing flipped, p = 1
    let g = verdict_of(&before, Some(&b));
    let f = g
        .detector_flips
        .iter()
        .find(|f| f.detector == name)
        .unwrap();
    assert_eq!(
        (f.entries, f.newly_missed, f.newly_flagged, f.fixed),
        (20, 0, 0, 0)
    );
    assert_eq!(f.mcnemar.p_value, 1.0);
    // six attacks missed now, one benign entry flagged, one attack caught again
    let after = with_entries(&["a0", "a1", "a2", "a3", "a4", "a5"], &["b0"]);
    let g = verdict_of(&after, Some(&b));
    let f = g
        .detector_flips
        .iter()
        .find(|f| f.detector == name)
        .unwrap();
    assert_eq!((f.newly_missed, f.newly_flagged, f.fixed), (6, 1, 1));
    assert_eq!((f.mcnemar.unflagged, f.mcnemar.flagged), (6, 2));
    // 2 · P(X ≤ 2), X ~ Bin(8, ½) = 2 · 37 / 256
    assert!((f.mcnemar.p_value - 74.0 / 256.0).abs() < 1e-12);
    let ids: Vec<(&str, bool, bool)> = f
        .flips
        .iter()
        .map(|e| (e.id.as_str(), e.malicious, e.flagged))
        .collect();
    assert_eq!(
        ids,
        [
            ("a0", true, false),
            ("a1", true, false),
            ("a2", true, false),
            ("a3", true, false),
            ("a4", true, false),
            ("a5", true, false),
            ("b0", false, true),
            ("a9", true, true),
        ]
    );
    // in Holm's family with the retrieval metrics' tests: adjusted at least as high
    assert!(f.mcnemar.p_holm.unwrap() >= f.mcnemar.p_value);
    assert_eq!(f.mcnemar.significant, Some(false));
    assert!(g.significance.is_some());
    // a baseline written before evalgate kept verdicts: no flips, and it still loads
    let mut v: serde_json::Value = serde_json::from_str(&b.to_json()).unwrap();
    for d in v["security"]["detectors"]
        .as_object_mut()
        .unwrap()
        .values_mut()
    {
        d.as_object_mut().unwrap().remove("verdicts");
    }
    let old = Baseline::parse("old.json", &v.to_string()).unwrap().0;
    assert!(verdict_of(&after, Some(&old)).detector_flips.is_empty());
}

#[test]
fn many_one_way_flips_are_significant_after_holm() {
    let before = with_entries(&[], &[]);
    let b = before.to_baseline(None);
    let all: Vec<String> = (0..10).map(|i| format!("a{i}")).collect();
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let g = verdict_of(&with_entries(&all, &[]), Some(&b));
    let f = &g.detector_flips[0];
    // 2 / 1024 before Holm; the family is this test and the other detector's (p = 1)
    assert!((f.mcnemar.p_value - 2.0 / 1024.0).abs() < 1e-15);
    assert!(f.mcnemar.p_holm.unwrap() > f.mcnemar.p_value);
    assert_eq!(f.mcnemar.significant, Some(true));
}

#[test]
fn a_worse_query_names_its_relevant_tools_rank_before_and_after_and_what_took_its_place() {
    let r = report();
    let b = r.to_baseline(None);
    let q0 = &r.retrieval.as_ref().unwrap().per_query[0];
    let ranked = b
        .retrieval
        .as_ref()
        .unwrap()
        .per_query_ranked
        .as_ref()
        .unwrap();
    assert_eq!(
        ranked[q0.id.as_str()],
        q0.retrieved
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
    );
    // the primary tool (grade 2) falls from rank 1 to 5; two new tools come in above it
    let primary = q0
        .labels
        .iter()
        .find(|l| l.relevance == 2)
        .unwrap()
        .tool_id
        .clone();
    let mut worse = r.clone();
    let wq = &mut worse.retrieval.as_mut().unwrap().per_query[0];
    let mut list: Vec<Text> = vec!["new-1".into(), "new-2".into()];
    list.extend(q0.retrieved.iter().filter(|t| **t != primary).cloned());
    list.truncate(4);
    list.push(primary.clone());
    wq.retrieved = list;
    wq.metrics.ndcg_at_10 -= 0.2;
    let g = verdict_of(&worse, Some(&b));
    let q = g.worst_queries.iter().find(|q| q.id == q0.id).unwrap();
    assert_eq!(
        q.ranks,
        Some(RankChange {
            tool: primary.clone(),
            before: Some(1),
            after: Some(5),
            took_its_place: vec!["new-1".into()],
        })
    );
    // better the other way round: the baseline is the worse run
    let bw = worse.to_baseline(None);
    let g = verdict_of(&r, Some(&bw));
    let q = g.improved_queries.iter().find(|q| q.id == q0.id).unwrap();
    let rc = q.ranks.as_ref().unwrap();
    assert_eq!(
        (rc.tool.as_str(), rc.before, rc.after),
        (primary.as_str(), Some(5), Some(1))
    );
    assert!(rc.took_its_place.is_empty());
    // a baseline without ranked lists: the Δ only
    let mut old = b.clone();
    old.retrieval.as_mut().unwrap().per_query_ranked = None;
    let g = verdict_of(&worse, Some(&old));
    assert!(g.worst_queries.iter().all(|q| q.ranks.is_none()));
}
