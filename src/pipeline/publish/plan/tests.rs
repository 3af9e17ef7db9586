//! The publishing plan, mode by mode: each test asserts the concrete actions.

use super::*;
use serde_json::Value;

/// A report with this verdict; `fails` failed checks, a metric moved by `delta`, and what
/// is measured but not gated.
fn report(verdict: &str, fails: usize, delta: f64, ungated: &[&str]) -> Report {
    let mut checks = vec![json!({
        "subject": "retrieval", "metric": "mrr", "kind": "tolerance", "direction": "higher",
        "baseline": 0.8, "current": 0.8 + delta, "ci95": null, "delta": delta,
        "limit": 0.78, "status": "pass", "message": "ok",
    })];
    for i in 0..fails {
        checks.push(json!({
            "subject": "retrieval", "metric": format!("recall_at_{}", 5 + i), "kind": "tolerance",
            "direction": "higher", "baseline": 0.9, "current": 0.5, "ci95": null,
            "delta": -0.4, "limit": 0.88, "status": "fail", "message": "50% worse\nthan the baseline",
        }));
    }
    serde_json::from_value(json!({
        "schema_version": 1, "evalgate_version": "0.0.0", "command": "run", "runs": 1,
        "datasets": [],
        "gate": {
            "verdict": verdict, "baseline": (verdict != "no_baseline").then_some("ci/baseline.json"),
            "summary": format!("gate {verdict}"), "checks": checks, "ungated": ungated,
            "worst_queries": [],
        },
    }))
    .unwrap()
}

fn pass() -> Report {
    report("pass", 0, 0.0, &[])
}

fn fail() -> Report {
    report("fail", 1, 0.0, &[])
}

/// A runner on a pull request's `pull_request` event.
fn runner_env() -> GhEnv {
    GhEnv {
        actions: true,
        api_url: "https://api.github.example".into(),
        server_url: "https://github.example".into(),
        repository: Some("acme/widgets".into()),
        sha: Some("merge0".into()),
        run_id: Some("777".into()),
        step_summary: Some("/runner/summary.md".into()),
        output: Some("/runner/output".into()),
        ..GhEnv::default()
    }
}

fn pr() -> Option<PullRequest> {
    Some(PullRequest {
        number: 7,
        head_sha: "head7".into(),
    })
}

fn opts(comment: CommentMode, check_run: bool) -> PublishOptions {
    PublishOptions {
        comment,
        check_run,
        fail_on: FailOn::Regression,
        key: "evalgate".into(),
        artifact_name: "evalgate-report".into(),
        token: Some("ghs_token".into()),
        act_post: false,
        pr: None,
        timeout: Duration::from_secs(3),
    }
}

fn plan_for(r: &Report, env: &GhEnv, pr: Option<PullRequest>, o: &PublishOptions) -> Vec<Action> {
    plan(r, env, pr.as_ref(), Path::new("/out"), o)
}

/// The actions by name, requests inside a post by theirs.
fn kinds(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .map(|a| match a {
            Action::ErrorLines(_) => "error-lines".into(),
            Action::WriteOutputs { .. } => "outputs".into(),
            Action::AppendSummary { .. } => "summary".into(),
            Action::DryRunFile { path, .. } => {
                format!("write {}", path.file_name().unwrap().to_string_lossy())
            }
            Action::RemoveStaleFile { path } => {
                format!("remove {}", path.file_name().unwrap().to_string_lossy())
            }
            Action::Note(_) => "note".into(),
            Action::Post(p) => {
                let comment = p.comment.as_ref().map(|_| "comment");
                let check_run = p.check_run.as_ref().map(|_| "check-run");
                let r: Vec<&str> = comment.into_iter().chain(check_run).collect();
                format!("post [{}]", r.join(", "))
            }
        })
        .collect()
}

fn requests(actions: &[Action]) -> &Post {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Post(p) => Some(p.as_ref()),
            _ => None,
        })
        .expect("a post")
}

fn comment(actions: &[Action]) -> Option<&Comment> {
    requests(actions).comment.as_ref()
}

fn check_run(actions: &[Action]) -> Option<&CheckRun> {
    requests(actions).check_run.as_ref()
}

fn outputs(actions: &[Action]) -> Vec<(&'static str, String)> {
    actions
        .iter()
        .find_map(|a| match a {
            Action::WriteOutputs { outputs, .. } => Some(outputs.clone()),
            _ => None,
        })
        .expect("outputs")
}

fn output(actions: &[Action], name: &str) -> String {
    outputs(actions)
        .into_iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
        .unwrap()
}

fn notes(actions: &[Action]) -> Vec<&str> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Note(n) => Some(n.as_str()),
            _ => None,
        })
        .collect()
}

fn dry_file<'a>(actions: &'a [Action], name: &str) -> Option<&'a str> {
    actions.iter().find_map(|a| match a {
        Action::DryRunFile { path, content } if path.ends_with(name) => Some(content.as_str()),
        _ => None,
    })
}

#[test]
fn a_passing_pull_request_gets_outputs_summary_comment_and_a_green_check() {
    let a = plan_for(
        &pass(),
        &runner_env(),
        pr(),
        &opts(CommentMode::Always, true),
    );
    assert_eq!(
        kinds(&a),
        ["outputs", "summary", "post [comment, check-run]"]
    );
    assert_eq!(
        outputs(&a),
        [
            ("verdict", "pass".to_string()),
            ("report-json", "/out/report.json".into()),
            ("report-html", "/out/report.html".into()),
            ("report-md", "/out/report.md".into()),
            ("regressions", "[]".into()),
            ("exit-code", "0".into()),
        ]
    );
    let Action::AppendSummary { path, body } = &a[1] else {
        panic!("{a:?}")
    };
    assert_eq!(path, Path::new("/runner/summary.md"));
    assert!(body.starts_with("## evalgate: ✅ pass"), "{body}");
    assert!(body.ends_with(
        "[Full report (HTML and JSON): artifact `evalgate-report` of this run](https://github.example/acme/widgets/actions/runs/777)\n"
    ));
    let github = &requests(&a).github;
    assert_eq!(
        (
            github.api_url.as_str(),
            github.token.as_str(),
            github.owner.as_str(),
            github.repo.as_str()
        ),
        ("https://api.github.example", "ghs_token", "acme", "widgets")
    );
    assert_eq!(github.timeout, Duration::from_secs(3));
    assert_eq!(
        github.deadline,
        Duration::from_secs(30),
        "ten times the timeout"
    );
    assert!(
        !format!("{github:?}").contains("ghs_token"),
        "the token is never printed"
    );
    let c = comment(&a).unwrap();
    assert_eq!(
        (c.pr, c.marker.as_str(), c.new),
        (7, "<!-- evalgate:evalgate -->", true)
    );
    assert!(
        c.body
            .starts_with("<!-- evalgate:evalgate -->\n## evalgate: ✅ pass")
    );
    let run = check_run(&a).unwrap();
    assert_eq!(
        (run.name.as_str(), run.head_sha.as_str()),
        ("evalgate", "head7")
    );
    assert_eq!(conclusion_name(run.conclusion), "success");
    assert!(
        run.output.title.contains("gate pass"),
        "{}",
        run.output.title
    );
    assert!(run.annotation_batches.is_empty());
}

#[test]
fn a_failed_gate_gets_error_lines_regressions_and_annotated_failure() {
    let a = plan_for(
        &fail(),
        &runner_env(),
        pr(),
        &opts(CommentMode::Always, true),
    );
    assert_eq!(
        kinds(&a),
        [
            "error-lines",
            "outputs",
            "summary",
            "post [comment, check-run]"
        ]
    );
    let Action::ErrorLines(lines) = &a[0] else {
        panic!()
    };
    assert_eq!(
        lines,
        &["::error title=evalgate%3A retrieval recall_at_5::50%25 worse than the baseline"]
    );
    assert_eq!(output(&a, "verdict"), "fail");
    assert_eq!(output(&a, "exit-code"), "1");
    let regressions: Value = serde_json::from_str(&output(&a, "regressions")).unwrap();
    assert_eq!(
        regressions,
        json!([{"subject": "retrieval", "metric": "recall_at_5", "kind": "tolerance",
                "current": 0.5, "baseline": 0.9, "limit": 0.88}])
    );
    let run = check_run(&a).unwrap();
    assert_eq!(conclusion_name(run.conclusion), "failure");
    assert_eq!(
        run.output.summary,
        "**gate fail**\n\n- evalgate: retrieval recall\\_at\\_5: 50% worse than the baseline\n",
        "Markdown, escaped"
    );
    assert_eq!(
        run.annotation_batches,
        [vec![Annotation {
            path: "ci/baseline.json".into(),
            title: "evalgate: retrieval recall_at_5".into(),
            message: "50% worse than the baseline".into(),
        }]]
    );
}

#[test]
fn fail_on_never_exits_0_with_a_neutral_check() {
    let mut o = opts(CommentMode::Always, true);
    o.fail_on = FailOn::Never;
    let a = plan_for(&fail(), &runner_env(), pr(), &o);
    assert_eq!(output(&a, "verdict"), "fail");
    assert_eq!(output(&a, "exit-code"), "0");
    assert_eq!(
        conclusion_name(check_run(&a).unwrap().conclusion),
        "neutral"
    );
}

#[test]
fn a_gate_that_is_off_or_incomplete_is_a_neutral_check() {
    for r in [
        report("no_baseline", 0, 0.0, &[]),
        report("pass", 0, 0.0, &["detector:newscan"]),
    ] {
        let a = plan_for(&r, &runner_env(), pr(), &opts(CommentMode::Always, true));
        assert_eq!(output(&a, "exit-code"), "0");
        let run = check_run(&a).unwrap();
        assert_eq!(
            conclusion_name(run.conclusion),
            "neutral",
            "{:?}",
            r.gate.verdict
        );
        assert!(run.annotation_batches.is_empty());
    }
    let a = plan_for(
        &report("no_baseline", 0, 0.0, &[]),
        &runner_env(),
        pr(),
        &opts(CommentMode::Always, true),
    );
    assert_eq!(output(&a, "verdict"), "no_baseline");
    assert_eq!(
        check_run(&a).unwrap().annotation_batches.len(),
        0,
        "nothing failed"
    );
}

/// Every comment mode against every kind of result: whether a comment is posted where none
/// exists yet (`Some(new)`), or no comment request at all (`None`); the executor keeps an
/// existing one current whatever `new` says.
#[test]
fn every_comment_mode_against_every_result() {
    let results = [
        ("pass", pass()),
        ("pass, a metric moved", report("pass", 0, 0.05, &[])),
        ("fail", fail()),
        ("no baseline", report("no_baseline", 0, 0.0, &[])),
        ("ungated", report("pass", 0, 0.0, &["detector:newscan"])),
        ("error", report("error", 0, 0.0, &[])),
    ];
    // per mode: the expected `new` for each result, in the order above
    let table: [(CommentMode, [Option<bool>; 6]); 4] = [
        (CommentMode::Always, [Some(true); 6]),
        (
            CommentMode::OnChange,
            [
                Some(false),
                Some(true),
                Some(true),
                Some(true),
                Some(true),
                Some(true),
            ],
        ),
        (
            CommentMode::OnFailure,
            [
                Some(false),
                Some(false),
                Some(true),
                Some(false),
                Some(false),
                Some(true),
            ],
        ),
        (CommentMode::Off, [None; 6]),
    ];
    for (mode, expected) in table {
        for ((what, r), want) in results.iter().zip(expected) {
            let a = plan_for(r, &runner_env(), pr(), &opts(mode, false));
            assert_eq!(comment(&a).map(|c| c.new), want, "{mode:?} on {what}");
            // the dry run writes the comment file only when a new comment would be posted
            let mut env = runner_env();
            env.act = true;
            let d = plan_for(r, &env, pr(), &opts(mode, false));
            assert_eq!(
                dry_file(&d, "github-comment.md").is_some(),
                want == Some(true),
                "act: {mode:?} on {what}"
            );
        }
    }
}

#[test]
fn check_run_off_and_comment_off_leave_only_the_runner_files() {
    let a = plan_for(
        &fail(),
        &runner_env(),
        pr(),
        &opts(CommentMode::Always, false),
    );
    assert_eq!(
        kinds(&a),
        ["error-lines", "outputs", "summary", "post [comment]"]
    );
    let a = plan_for(&fail(), &runner_env(), pr(), &opts(CommentMode::Off, false));
    assert_eq!(kinds(&a), ["error-lines", "outputs", "summary", "post []"]);
}

#[test]
fn annotations_go_in_batches_of_50_and_error_lines_stop_at_10() {
    let r = report("fail", 51, 0.0, &[]);
    let a = plan_for(&r, &runner_env(), pr(), &opts(CommentMode::Off, true));
    let sizes: Vec<usize> = check_run(&a)
        .unwrap()
        .annotation_batches
        .iter()
        .map(Vec::len)
        .collect();
    assert_eq!(sizes, [50, 1]);
    let Action::ErrorLines(lines) = &a[0] else {
        panic!()
    };
    assert_eq!(lines.len(), 11);
    assert!(lines[10].starts_with("::notice title=evalgate::41 more failed check(s)"));
}

#[test]
fn the_system_under_test_failing_comes_first_with_the_end_of_its_log() {
    let mut r = report("error", 1, 0.0, &[]);
    r.failure = Some(
        serde_json::from_value(json!({"kind": "crashed", "system": "sut", "detail": format!("{}the end", "x".repeat(900))}))
            .unwrap(),
    );
    let a = plan_for(&r, &runner_env(), pr(), &opts(CommentMode::Off, true));
    assert_eq!(output(&a, "exit-code"), "3");
    let run = check_run(&a).unwrap();
    assert_eq!(conclusion_name(run.conclusion), "failure");
    let first = &run.annotation_batches[0][0];
    assert_eq!(first.title, "evalgate: system under test failed");
    assert!(first.message.ends_with("the end"), "{}", first.message);
    assert_eq!(run.annotation_batches[0].len(), 2);
}

#[test]
fn a_push_has_no_comment_and_checks_the_pushed_commit() {
    let mut env = runner_env();
    let a = plan_for(&fail(), &env, None, &opts(CommentMode::Always, true));
    assert_eq!(
        kinds(&a),
        ["error-lines", "outputs", "summary", "post [check-run]"]
    );
    assert_eq!(check_run(&a).unwrap().head_sha, "merge0");
    env.sha = None;
    let a = plan_for(&fail(), &env, None, &opts(CommentMode::Always, true));
    assert_eq!(kinds(&a), ["error-lines", "outputs", "summary", "post []"]);
}

#[test]
fn without_a_token_or_repository_only_the_runner_files_are_written() {
    let note = "no GitHub token or repository: the comment and check run are skipped (the job summary and outputs are written)";
    let mut o = opts(CommentMode::Always, true);
    o.token = None;
    let a = plan_for(&fail(), &runner_env(), pr(), &o);
    assert_eq!(kinds(&a), ["error-lines", "outputs", "summary", "note"]);
    assert_eq!(notes(&a), [note]);
    let mut env = runner_env();
    env.repository = None;
    let a = plan_for(&pass(), &env, pr(), &opts(CommentMode::Always, true));
    assert_eq!(kinds(&a), ["outputs", "summary", "note"]);
    assert_eq!(notes(&a), [note]);
    let Action::AppendSummary { body, .. } = &a[1] else {
        panic!()
    };
    assert!(
        body.ends_with("\nFull report (HTML and JSON): artifact `evalgate-report`.\n"),
        "no run URL without a repository"
    );
}

#[test]
fn a_fork_pull_request_is_still_attempted_on_its_head_commit() {
    // the read-only token's 403 is explained by the executor (with the permissions hint);
    // the plan does not guess it
    let fork = PullRequest {
        number: 9,
        head_sha: "forkhead".into(),
    };
    let a = plan_for(
        &fail(),
        &runner_env(),
        Some(fork),
        &opts(CommentMode::OnChange, true),
    );
    assert_eq!(
        kinds(&a),
        [
            "error-lines",
            "outputs",
            "summary",
            "post [comment, check-run]"
        ]
    );
    assert_eq!(comment(&a).unwrap().pr, 9);
    assert_eq!(check_run(&a).unwrap().head_sha, "forkhead");
}

#[test]
fn outside_a_runner_nothing_is_written_for_the_runner() {
    let env = GhEnv {
        repository: Some("acme/widgets".into()),
        ..GhEnv::default()
    };
    let a = plan_for(&pass(), &env, pr(), &opts(CommentMode::Always, true));
    assert_eq!(kinds(&a), ["post [comment, check-run]"]);
}

#[test]
fn a_comment_key_names_the_marker_and_the_check_and_is_sanitized() {
    let mut o = opts(CommentMode::Always, true);
    o.key = "leg-1\n::error::x".into();
    let a = plan_for(&pass(), &runner_env(), pr(), &o);
    let c = comment(&a).unwrap();
    assert!(!c.marker.contains('\n') && c.marker.starts_with("<!-- evalgate:leg-1"));
    assert!(c.body.starts_with(&format!("{}\n", c.marker)));
    let name = &check_run(&a).unwrap().name;
    assert!(
        name.starts_with("evalgate (leg-1") && !name.contains('\n'),
        "{name}"
    );
}

#[test]
fn act_is_a_dry_run_that_writes_what_would_be_posted() {
    let mut env = runner_env();
    env.act = true;
    let a = plan_for(&fail(), &env, pr(), &opts(CommentMode::Always, true));
    assert_eq!(
        kinds(&a),
        [
            "error-lines",
            "outputs",
            "summary",
            "write github-comment.md",
            "write github-summary.md",
            "write github-check-run.json",
            "note"
        ]
    );
    assert_eq!(
        notes(&a),
        [
            "act: dry run, nothing posted; the comment, check run and summary are in /out (set EVALGATE_ACT_POST=true to post)"
        ]
    );
    let Action::DryRunFile { path, .. } = &a[3] else {
        panic!()
    };
    assert_eq!(path, Path::new("/out/github-comment.md"));
    assert!(
        dry_file(&a, "github-comment.md")
            .unwrap()
            .starts_with("<!-- evalgate:evalgate -->\n")
    );
    let run: Value = serde_json::from_str(dry_file(&a, "github-check-run.json").unwrap()).unwrap();
    assert_eq!(run["create"]["name"], "evalgate");
    assert_eq!(run["create"]["head_sha"], "head7");
    assert_eq!(run["create"]["status"], "in_progress");
    assert_eq!(run["complete"]["conclusion"], "failure");
    assert!(
        run["complete"]["output"]["annotations"].is_null(),
        "completing sends no annotations"
    );
    assert_eq!(run["complete"]["output"]["title"], "❌ fail: gate fail");
    assert_eq!(run["annotation_batches"].as_array().unwrap().len(), 1);
    assert_eq!(
        run["annotation_batches"][0]["annotations"][0]["path"],
        "ci/baseline.json"
    );
    assert_eq!(
        run["annotation_batches"][0]["annotations"][0]["annotation_level"],
        "failure"
    );
}

#[test]
fn act_removes_the_files_it_would_not_write() {
    let mut env = runner_env();
    env.act = true;
    let a = plan_for(&pass(), &env, pr(), &opts(CommentMode::Off, false));
    assert_eq!(
        kinds(&a),
        [
            "outputs",
            "summary",
            "remove github-comment.md",
            "write github-summary.md",
            "remove github-check-run.json",
            "note"
        ]
    );
    // no token is needed for a dry run, and none is used
    let mut o = opts(CommentMode::Always, true);
    o.token = None;
    let a = plan_for(&pass(), &env, None, &o);
    assert!(
        dry_file(&a, "github-check-run.json")
            .unwrap()
            .contains("\"merge0\"")
    );
}

#[test]
fn act_post_posts_for_real() {
    let mut env = runner_env();
    env.act = true;
    let mut o = opts(CommentMode::Always, true);
    o.act_post = true;
    let a = plan_for(&pass(), &env, pr(), &o);
    assert_eq!(
        kinds(&a),
        ["outputs", "summary", "post [comment, check-run]"]
    );
}

#[test]
fn publish_never_does_nothing_and_auto_only_on_a_runner() {
    for on_runner in [false, true] {
        assert!(!publishes(PublishWhen::Never, on_runner));
        assert!(publishes(PublishWhen::Always, on_runner));
        assert_eq!(publishes(PublishWhen::Auto, on_runner), on_runner);
    }
}

#[test]
fn every_text_is_sanitized_before_it_reaches_a_sink() {
    let mut r = fail();
    r.gate.summary = "bad\n::error::injected\u{1b}[31m".into();
    r.gate.checks[1].metric = "m\n::warning::x".into();
    r.gate.baseline = Some("../../etc/passwd".into());
    let a = plan_for(&r, &runner_env(), pr(), &opts(CommentMode::Always, true));
    let Action::ErrorLines(lines) = &a[0] else {
        panic!()
    };
    assert!(
        lines
            .iter()
            .all(|l| !l.contains('\n') && !l.contains('\u{1b}'))
    );
    let run = check_run(&a).unwrap();
    assert!(!run.output.title.contains('\n') && !run.output.title.contains('\u{1b}'));
    let ann = &run.annotation_batches[0][0];
    assert_eq!(
        ann.path, "evalgate.toml",
        "a path outside the repository is not used"
    );
    assert!(!ann.title.contains('\n'));
    let regressions = output(&a, "regressions");
    assert!(
        !regressions.contains('\n') && !regressions.contains("\\n"),
        "{regressions}"
    );
}

#[test]
fn the_regressions_output_carries_rounded_numbers_and_the_paired_comparison() {
    let mut r = fail();
    let c = &mut r.gate.checks[1];
    (c.baseline, c.current, c.limit) = (Some(0.95), Some(0.1 + 0.2), Some(0.95 - 0.02));
    assert_eq!(
        c.limit,
        Some(0.9299999999999999),
        "the float noise this is about"
    );
    let out = regressions_output(&r);
    assert!(out.contains("\"limit\":0.93}"), "{out}");
    assert!(out.contains("\"current\":0.3,"), "{out}");
    assert!(!out.contains("p_value"), "{out}");
    c_paired(&mut r);
    let v: Value = serde_json::from_str(&regressions_output(&r)).unwrap();
    assert_eq!(v[0]["p_value"], json!(0.000488));
    assert_eq!(v[0]["delta_ci95"], json!([-0.5, -0.3]));
    assert_eq!(machine_number(-1e-9), 0.0);
    assert_eq!(machine_number(-0.0).to_string(), "0");
}

fn c_paired(r: &mut Report) {
    r.gate.checks[1].paired = Some(crate::pipeline::gate::model::PairedComparison {
        queries: 30,
        better: 0,
        worse: 12,
        unchanged: 18,
        mean_delta: -0.4,
        delta_ci95: Some([-0.5000000000000001, -0.30000000000000004]),
        p_value: 2.0 / 4096.0,
        method: crate::pipeline::gate::model::PairedMethod::Exact,
        permutations: 4096,
        p_holm: Some(2.0 / 4096.0 * 3.0),
        significant: Some(true),
    });
}
