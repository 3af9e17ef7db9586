//! The view's unit tests.
use super::*;
use crate::infra::text::Text;
use crate::pipeline::report::doc;
use crate::pipeline::report::model::fixture;
use crate::pipeline::report::{Exporter, html::Html};

/// `report.html` of `r`.
fn html_of(r: &Report) -> anyhow::Result<String> {
    Html.render(r, &View::of(r))
}

fn check(kind: CheckKind, status: CheckStatus) -> Check {
    Check {
        subject: "retrieval".into(),
        metric: "recall_at_5".into(),
        kind,
        direction: Direction::Higher,
        baseline: Some(0.5),
        current: Some(0.4),
        ci95: None,
        delta: Some(-0.1),
        limit: Some(0.48),
        status,
        message: String::new(),
        paired: None,
    }
}

#[test]
fn a_number_is_marked_by_its_worst_check_and_info_is_not_gated() {
    let info = check(CheckKind::Info, CheckStatus::Info);
    let pass = check(CheckKind::Ceiling, CheckStatus::Pass);
    let fail = check(CheckKind::Tolerance, CheckStatus::Fail);
    assert_eq!(Mark::of([&info]), Mark::NotGated);
    assert_eq!(Mark::of([&info, &pass]), Mark::Pass);
    assert_eq!(Mark::of([&pass, &fail, &info]), Mark::Fail);
    assert_eq!(limit_text(&info), None);
    assert_eq!(limit_text(&fail).as_deref(), Some("≥ 0.4800"));
    assert_eq!(limit_text(&pass).as_deref(), Some("≤ 0.480 ceiling"));
}

#[test]
fn counts_are_per_run_means() {
    assert_eq!(per_run(12u64, 1), "12");
    assert_eq!(per_run(12u64, 3), "4");
    assert_eq!(per_run(13u64, 5), "2.6");
    assert_eq!(per_run(0u64, 5), "0");
    assert_eq!(per_run_note(1), "");
}

#[test]
fn the_view_computes_every_section_once_from_the_report() {
    let r = fixture();
    let v = View::of(&r);
    assert_eq!(v.headline, headline(&r));
    assert_eq!(v.failed, failed(&r));
    assert_eq!(v.retrieval_rows.len(), RETRIEVAL_METRICS.len());
    // splits in the report's order, on Recall@5, MRR and nDCG@10
    let rr = r.retrieval.as_ref().unwrap();
    let line = doc::Format::cell(
        &crate::pipeline::report::markdown::Markdown,
        &doc::splits_line(rr).unwrap(),
    );
    assert!(
        line.starts_with("Splits: dev (") && line.contains(" | held_out ("),
        "{line}"
    );
    let mrr = crate::pipeline::report::format::num(rr.splits["dev"].metrics.get("mrr").copied());
    assert!(line.contains(&format!(" · MRR {mrr} · nDCG@10 ")), "{line}");
    // detectors: metrics in DETECTION_METRICS order, counts as per-run means over 2 runs
    let ds = &r.security.as_ref().unwrap().detectors;
    assert_eq!(v.detectors.len(), ds.len());
    let d = &v.detectors[0];
    assert_eq!(d.all_rows.len(), DETECTION_METRICS.len());
    assert_eq!(
        d.all_rows[3].current.as_ref().and_then(|s| s.mean),
        ds[0].metrics["fpr"].mean
    );
    let overview = doc::overview_table(&v, r.runs);
    let counts = &overview.rows[0][overview.head.len() - 2];
    assert!(
        matches!(counts, doc::Cell::Plain(c) if c == "1.5 / 0.5 / 2.5 / 1"),
        "{counts:?}"
    );
    assert!(doc::live_table(d.report).is_none());
    // the rows against the baseline are the measured rows with a baseline or a limit
    assert!(
        d.against()
            .all(|a| d.all_rows.iter().any(|b| b.label == a.label))
    );
    assert!(
        d.against()
            .all(|row| row.baseline.is_some() || !row.limit.is_empty())
    );
    let t = doc::live_table(v.detectors[1].report).unwrap();
    assert!(
        matches!(&t.rows[0][0], doc::Cell::Seq(c) if matches!(c[0], doc::Cell::Category(Category::RugPull)))
    );
    let counts = (&t.rows[0][2], &t.rows[0][3]);
    assert!(
        matches!(counts, (doc::Cell::Plain(a), doc::Cell::Plain(b)) if a == "1" && b == "0.5"),
        "{counts:?}"
    );
    // the corpus's three categories, then the hard negatives resembling tool poisoning
    let rows: Vec<(Category, bool)> = v
        .categories
        .iter()
        .map(|c| (c.category, c.hard_negatives))
        .collect();
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert_eq!(rows[3], (Category::ToolPoisoning, true));
    // shadowing is an attack only the second detector covers
    let shadowing = v
        .categories
        .iter()
        .find(|c| c.category == Category::Shadowing)
        .unwrap();
    assert!(shadowing.attack);
    assert_eq!(shadowing.cells[0], CategoryCell::OutOfScope);
    assert!(matches!(shadowing.cells[1], CategoryCell::Rate(..)));
    // one query dropped against the baseline: the table says "regressed"
    let reg = v.regressions.as_ref().unwrap();
    assert_eq!(reg.title, "Most regressed queries");
    assert_eq!(reg.rows.len(), r.gate.worst_queries.len());
    let metric = &doc::regressions_table(reg).rows[0][2];
    assert!(
        matches!(metric, doc::Cell::Plain(l) if l == "nDCG@10"),
        "{metric:?}"
    );
    // the terminal shows every probe with its outcome
    let term = crate::pipeline::report::terminal::render_view(&r, &View::of(&r), false);
    let rb = r.robustness.as_ref().unwrap();
    assert!(!rb.probes.is_empty());
    for p in &rb.probes {
        let (what, outcome) = (p.what.as_str(), p.outcome.as_str());
        let shown = term
            .lines()
            .any(|l| l.contains(what) && l.contains(outcome));
        assert!(shown, "{what}: {outcome}\n{term}");
    }
}

#[test]
fn without_a_per_query_baseline_the_queries_are_the_lowest_scoring_and_unknown_metrics_have_no_label()
 {
    let mut r = fixture();
    for q in &mut r.gate.worst_queries {
        q.delta = None;
        q.metric = "not_a_metric".into();
    }
    let reg = View::of(&r).regressions.unwrap();
    assert_eq!(reg.title, "Lowest-scoring queries");
    let rows = doc::regressions_table(&reg).rows;
    assert!(rows.iter().all(|q| matches!(q[2], doc::Cell::Id(..))));
    r.gate.worst_queries.clear();
    assert!(View::of(&r).regressions.is_none());
}

#[test]
fn a_detectors_category_table_marks_attacks_it_does_not_claim_and_counts_every_run() {
    let r = fixture();
    let v = View::of(&r);
    // the first detector claims tool_poisoning and prompt_injection only
    let d = &v.detectors[0];
    assert_eq!(
        d.report.scope,
        [Category::ToolPoisoning, Category::PromptInjection]
    );
    let out: Vec<Category> = d
        .categories
        .iter()
        .filter(|c| c.out_of_scope)
        .map(|c| c.of.category)
        .collect();
    // shadowing and rug_pull are attacks it does not claim; benign, hard negatives and the
    // rows of hard negatives by resemblance are never "out of scope"
    assert_eq!(out, [Category::Shadowing, Category::RugPull]);
    let resembling: Vec<&DetectorCategoryRow> =
        d.categories.iter().filter(|c| c.hard_negatives).collect();
    assert_eq!(resembling.len(), 1);
    assert_eq!(resembling[0].of.category, Category::ToolPoisoning);
    assert!(!resembling[0].out_of_scope);
    assert!(
        std::ptr::eq(d.categories.last().unwrap(), resembling[0]),
        "after the corpus categories"
    );
    // flags are out of entries × runs (2 runs)
    assert!(d.categories.iter().all(|c| c.checked == c.of.total * 2));
    // a detector claiming all four attacks has nothing out of scope
    assert!(v.detectors[1].categories.iter().all(|c| !c.out_of_scope));
}

#[test]
fn a_paired_comparison_shows_under_its_delta_and_improved_queries_follow_the_worse_ones() {
    let mut r = fixture();
    let c = r
        .gate
        .checks
        .iter_mut()
        .find(|c| c.subject == "retrieval" && c.metric == "recall_at_5")
        .unwrap();
    c.paired = Some(crate::pipeline::gate::model::PairedComparison {
        queries: 30,
        better: 1,
        worse: 12,
        unchanged: 17,
        mean_delta: -0.4,
        delta_ci95: Some([-0.5, -0.3]),
        p_value: 0.00004,
        method: crate::pipeline::gate::model::PairedMethod::MonteCarlo,
        permutations: 10_000,
        p_holm: Some(0.00012),
        significant: Some(true),
    });
    let mut up = r.gate.worst_queries[0].clone();
    up.id = "risen".into();
    up.delta = Some(0.5);
    r.gate.improved_queries = vec![up];
    let v = View::of(&r);
    let row = v
        .retrieval_rows
        .iter()
        .find(|w| w.label == "Recall@5")
        .unwrap();
    assert_eq!(
        row.paired.as_deref(),
        Some(
            "p < 0.0001 (significant) · CI \u{2212}0.500 to \u{2212}0.300 · 12 worse, 1 better of 30"
        )
    );
    assert!(
        v.retrieval_rows
            .iter()
            .filter(|w| w.label != "Recall@5")
            .all(|w| w.paired.is_none())
    );
    let reg = v.regressions.unwrap();
    assert_eq!(
        reg.title,
        "Queries that changed most (worse first, then better)"
    );
    assert_eq!(reg.rows.len(), r.gate.worst_queries.len() + 1);
    assert_eq!(reg.rows.last().unwrap().id.as_str(), "risen");
    // every renderer shows it
    let md = crate::pipeline::report::markdown::render(&r);
    assert!(md.contains("<sub>p < 0.0001 (significant)"), "{md}");
    let html = html_of(&r).unwrap();
    assert!(html.contains("<div class=\"small\">p &lt; 0.0001 (significant)"));
    let term = crate::pipeline::report::terminal::render_view(&r, &View::of(&r), false);
    assert!(term.contains("p < 0.0001 (significant)"), "{term}");
    // only worse (or only better) queries keep their own titles
    r.gate.worst_queries.clear();
    assert_eq!(
        View::of(&r).regressions.unwrap().title,
        "Most improved queries"
    );
}

/// The fixture gated against the baseline it makes itself, after `change` alters the run.
fn gated_against_itself(change: impl Fn(&mut crate::pipeline::report::model::Report)) -> Report {
    let mut r = fixture();
    r.failure = None;
    r.robustness = None;
    let hostile = "<img src=x onerror=alert(1)>|`x`";
    r.security.as_mut().unwrap().detectors[0].entries[0].id = hostile.into();
    r.retrieval.as_mut().unwrap().per_query[0].labels[0].tool_id = hostile.into();
    r.retrieval.as_mut().unwrap().per_query[0].retrieved[0] = hostile.into();
    let b = r.to_baseline(None);
    change(&mut r);
    r.gate = crate::pipeline::gate::evaluate(
        &r.gate_inputs(),
        Some(("b.json", &b)),
        &crate::pipeline::gate::Policy::default(),
    );
    r
}

#[test]
fn unchanged_detectors_fold_into_one_line_of_the_comment() {
    let r = gated_against_itself(|_| {});
    let v = View::of(&r);
    let names: Vec<String> = r
        .security
        .as_ref()
        .unwrap()
        .detectors
        .iter()
        .map(|d| d.detector.clone())
        .collect();
    let unchanged = v.detectors.iter().filter(|d| d.unchanged);
    let unchanged: Vec<String> = unchanged.map(|d| d.report.detector.clone()).collect();
    assert_eq!(unchanged, names);
    let md = crate::pipeline::report::markdown::render(&r);
    assert!(
        md.contains("2 detectors unchanged against the baseline (every Δ 0, every check held, no verdict flipped): "),
        "{md}"
    );
    assert!(!md.contains("| Detector metric |"), "{md}");
    assert!(!md.contains("verdicts flipped"), "{md}");
}

#[test]
fn flipped_verdicts_and_rank_changes_show_in_every_renderer_escaped() {
    use crate::pipeline::score::model::Outcome;
    let r = gated_against_itself(|r| {
        // the hostile benign entry is no longer flagged; the primary tool drops out of the list
        let d = &mut r.security.as_mut().unwrap().detectors[0];
        assert_eq!(d.entries[0].outcome, Outcome::Fp);
        d.entries[0].outcome = Outcome::Tn;
        let q = &mut r.retrieval.as_mut().unwrap().per_query[0];
        q.retrieved[0] = "taker".into();
        q.metrics.ndcg_at_10 = 0.1;
    });
    let v = View::of(&r);
    let unchanged: Vec<&str> = v
        .detectors
        .iter()
        .filter(|d| d.unchanged)
        .map(|d| d.report.detector.as_str())
        .collect();
    assert_eq!(unchanged.len(), 1, "{unchanged:?}");
    let f = &r.gate.detector_flips[0];
    assert_eq!((f.fixed, f.mcnemar.unflagged), (1, 1));
    assert_eq!(
        flips_text(f),
        "0 newly missed attacks, 0 newly flagged benign entries, 1 fixed of 3 entries · McNemar p = 1.0000 (Holm = 1.0000)"
    );
    let q = &r.gate.worst_queries[0];
    let rc = q.ranks.as_ref().unwrap();
    assert_eq!((rc.before, rc.after), (Some(1), None));
    assert_eq!(rc.took_its_place, vec![Text::from("taker")]);
    let md = crate::pipeline::report::markdown::render(&r);
    assert!(
        md.contains("verdicts flipped since the baseline: 0 newly missed"),
        "{md}"
    );
    assert!(md.contains("benign, no longer flagged (fixed)"), "{md}");
    assert!(md.contains(" 1 → –; in its place: `taker` |"), "{md}");
    assert!(
        md.contains("1 detector unchanged against the baseline"),
        "{md}"
    );
    // dataset text only inside code spans, its pipes and backticks neutralised
    assert!(!md.contains("|`x`"), "{md}");
    assert_eq!(
        md.matches("<img").count(),
        md.matches("`<img src=x onerror=alert(1)>¦ˋxˋ`").count()
    );
    let html = html_of(&r).unwrap();
    assert!(html.contains("benign, no longer flagged (fixed)"));
    assert!(html.contains("1 → –; in its place"));
    assert!(!html.contains("<img"));
    let term = crate::pipeline::report::terminal::render_view(&r, &View::of(&r), false);
    assert!(term.contains("benign, no longer flagged (fixed)"), "{term}");
    assert!(term.contains(" 1 → –; in its place: taker"), "{term}");
}
