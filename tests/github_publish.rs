//! Publishing to GitHub end to end: the real binary against a FAKE GitHub API on 127.0.0.1
//! (GitHub itself cannot be reached here; the fake answers with GitHub's real response shapes,
//! which octocrab parses strictly).

mod common;
#[path = "fake_github/mod.rs"]
mod fake_github;

use common::*;
use fake_github::{FakeGitHub, FakeOptions, Fault};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;

const REPO: &str = "acme/widgets";
const HEAD: &str = "1111111111111111111111111111111111111111";
const MERGE: &str = "2222222222222222222222222222222222222222";
const PR: u64 = 42;

struct Runner {
    dir: tempfile::TempDir,
    event: PathBuf,
}

impl Runner {
    fn new() -> Runner {
        let dir = tempdir();
        let event = pull_request_event(dir.path(), PR, HEAD, REPO);
        Runner { dir, event }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn env(&self, fake: &FakeGitHub, extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = vec![
            ("GITHUB_ACTIONS".into(), "true".into()),
            ("GITHUB_API_URL".into(), fake.url()),
            ("GITHUB_SERVER_URL".into(), "https://github.example".into()),
            ("GITHUB_REPOSITORY".into(), REPO.into()),
            ("GITHUB_EVENT_NAME".into(), "pull_request".into()),
            ("GITHUB_EVENT_PATH".into(), self.event.display().to_string()),
            ("GITHUB_SHA".into(), MERGE.into()),
            ("GITHUB_RUN_ID".into(), "777".into()),
            ("GITHUB_JOB".into(), "evalgate".into()),
            (
                "GITHUB_STEP_SUMMARY".into(),
                self.path().join("summary.md").display().to_string(),
            ),
            (
                "GITHUB_OUTPUT".into(),
                self.path().join("output.txt").display().to_string(),
            ),
            ("EVALGATE_GITHUB_TOKEN".into(), fake.token()),
        ];
        for (k, val) in extra {
            v.push((k.to_string(), val.to_string()));
        }
        v
    }
    fn run(&self, fake: &FakeGitHub, args: &[&str], extra: &[(&str, &str)]) -> Output {
        let env = self.env(fake, extra);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        evalgate_env(self.path(), args, &env)
    }
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path().join(name)).unwrap_or_default()
    }
}

fn bot_comments(fake: &FakeGitHub) -> Vec<fake_github::FakeComment> {
    fake.comments(REPO, PR)
        .into_iter()
        .filter(|c| c.body.contains("<!-- evalgate:evalgate -->"))
        .collect()
}

fn degraded_corpus(dir: &Path) -> PathBuf {
    let mut c = shipped("corpus.json");
    for t in c["tools"].as_array_mut().unwrap() {
        t["description"] = json!("");
    }
    write_json(dir, "degraded.json", &c)
}

#[test]
fn the_sticky_comment_is_created_once_then_updated_in_place_across_pages() {
    // 230 comments by people first: the bot's comment will live on page 3
    let mut opts = FakeOptions::default();
    for i in 0..230 {
        opts = opts.seed(REPO, PR, "octocat", &format!("review comment {i}"));
    }
    let fake = tokio_rt().block_on(FakeGitHub::start(opts));
    let r = Runner::new();
    let b = baseline_copy(r.path());
    let o = r.run(
        &fake,
        &[
            "run",
            "--baseline",
            b.to_str().unwrap(),
            "--comment",
            "always",
            "-q",
        ],
        &[],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let c1 = bot_comments(&fake);
    assert_eq!(c1.len(), 1, "one sticky comment");
    assert_eq!(c1[0].user, "github-actions[bot]");
    assert!(
        c1[0].body.contains("## evalgate: ✅ pass")
            && c1[0]
                .body
                .contains("https://github.example/acme/widgets/actions/runs/777"),
        "{}",
        c1[0].body
    );

    // a regression: the same comment is updated, never a second one
    let deg = degraded_corpus(r.path());
    let o = r.run(
        &fake,
        &[
            "run",
            "--corpus",
            deg.to_str().unwrap(),
            "--baseline",
            b.to_str().unwrap(),
            "-q",
        ],
        &[],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let c2 = bot_comments(&fake);
    assert_eq!(c2.len(), 1, "still one sticky comment");
    assert_eq!(c2[0].id, c1[0].id);
    assert!(
        c2[0].body.contains("❌ fail") && c2[0].body.contains("Recall@5"),
        "{}",
        c2[0].body
    );
    // the listing really went past the first pages
    assert!(
        fake.requests()
            .iter()
            .any(|q| q.method == "GET" && q.query.as_deref().is_some_and(|x| x.contains("page=3"))),
        "page 3 never read"
    );
    assert_eq!(fake.comments(REPO, PR).len(), 231);
}

fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn the_check_run_is_on_the_head_sha_and_its_conclusion_matches_the_exit_code() {
    let fake = tokio_rt().block_on(FakeGitHub::start(FakeOptions::default()));
    let r = Runner::new();
    let b = baseline_copy(r.path());
    let o = r.run(
        &fake,
        &["run", "--baseline", b.to_str().unwrap(), "-q"],
        &[],
    );
    assert_eq!(code(&o), 0);
    let deg = degraded_corpus(r.path());
    let o = r.run(
        &fake,
        &[
            "run",
            "--corpus",
            deg.to_str().unwrap(),
            "--baseline",
            b.to_str().unwrap(),
            "-q",
        ],
        &[],
    );
    assert_eq!(code(&o), 1);
    let o = r.run(
        &fake,
        &[
            "run",
            "--corpus",
            deg.to_str().unwrap(),
            "--baseline",
            b.to_str().unwrap(),
            "--fail-on",
            "never",
            "-q",
        ],
        &[],
    );
    assert_eq!(code(&o), 0, "fail-on never exits 0");
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 3);
    for run in &runs {
        assert_eq!(run.head_sha, HEAD, "the PR head, not the merge commit");
        assert_eq!(run.name, "evalgate (evalgate)".replace(" (evalgate)", ""));
        assert_eq!(run.status, "completed");
    }
    let concl: Vec<Option<&str>> = runs.iter().map(|r| r.conclusion.as_deref()).collect();
    assert_eq!(
        concl,
        vec![Some("success"), Some("failure"), Some("neutral")]
    );
    let failing = &runs[1];
    let titles: Vec<String> = failing
        .annotations
        .iter()
        .map(|a| a["title"].as_str().unwrap_or_default().to_string())
        .collect();
    for m in [
        "retrieval recall_at_5",
        "retrieval mrr",
        "retrieval ndcg_at_10",
    ] {
        assert!(
            titles.iter().any(|t| t.contains(m)),
            "no annotation for {m}: {titles:?}"
        );
    }
    assert!(
        failing
            .text
            .as_deref()
            .unwrap_or_default()
            .contains("| Metric | Baseline |")
    );
    // step outputs and the error lines agree
    let out = r.read("output.txt");
    assert!(
        out.contains("verdict=fail")
            && out.contains(r#"regressions=[{"subject":"retrieval","metric":"recall_at_5","kind":"tolerance","current":"#),
        "{out}"
    );
    assert!(
        out.contains("report-html=/") && out.contains("exit-code=1"),
        "{out}"
    );
    assert!(
        stdout(&o).contains("::error title=evalgate%3A retrieval recall_at_5::"),
        "{}",
        stdout(&o)
    );
    assert!(
        r.read("summary.md").contains("## evalgate"),
        "no job summary"
    );
}

#[test]
fn a_read_only_token_keeps_the_gate_result_and_explains_the_permissions() {
    let fake = tokio_rt().block_on(FakeGitHub::start(FakeOptions {
        forbidden: true,
        ..FakeOptions::default()
    }));
    let r = Runner::new();
    let b = baseline_copy(r.path());
    let o = r.run(
        &fake,
        &[
            "run",
            "--baseline",
            b.to_str().unwrap(),
            "--comment",
            "always",
            "-q",
        ],
        &[],
    );
    assert_eq!(code(&o), 0, "a 403 must not fail the gate: {}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("Resource not accessible by integration"),
        "{err}"
    );
    assert!(
        err.contains("pull-requests: write")
            && err.contains("checks: write")
            && err.contains("workflow_run"),
        "{err}"
    );
    assert_eq!(
        err.matches("pull-requests: write").count(),
        1,
        "the hint is printed once"
    );
    assert!(
        r.read("summary.md").contains("## evalgate: ✅ pass"),
        "the job summary is still written"
    );
    // and a failing gate still fails under a read-only token
    let deg = degraded_corpus(r.path());
    let o = r.run(
        &fake,
        &[
            "run",
            "--corpus",
            deg.to_str().unwrap(),
            "--baseline",
            b.to_str().unwrap(),
            "-q",
        ],
        &[],
    );
    assert_eq!(code(&o), 1);
}

#[test]
fn act_is_a_dry_run_that_posts_nothing() {
    let fake = tokio_rt().block_on(FakeGitHub::start(FakeOptions::default()));
    let r = Runner::new();
    let o = r.run(
        &fake,
        &["run", "--comment", "always", "-q"],
        &[("ACT", "true")],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        fake.requests().is_empty(),
        "act posted: {:?}",
        fake.requests()
            .iter()
            .map(|q| format!("{} {}", q.method, q.path))
            .collect::<Vec<_>>()
    );
    let dir = r.path().join("evalgate-report");
    let comment = std::fs::read_to_string(dir.join("github-comment.md")).unwrap();
    assert!(comment.starts_with("<!-- evalgate:evalgate -->"));
    let check: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("github-check-run.json")).unwrap())
            .unwrap();
    assert_eq!(check["create"]["head_sha"], HEAD);
    // the starter datasets have no baseline here: nothing gated is neutral, not a success
    assert_eq!(check["complete"]["conclusion"], "neutral");
    assert!(stderr(&o).contains("dry run"), "{}", stderr(&o));
    // with the explicit flag it posts
    let o = r.run(
        &fake,
        &["run", "--comment", "always", "-q"],
        &[("ACT", "true"), ("EVALGATE_ACT_POST", "true")],
    );
    assert_eq!(code(&o), 0);
    assert_eq!(bot_comments(&fake).len(), 1);
}

#[test]
fn an_oversize_report_is_cut_below_the_limit_with_the_marker_and_link_intact() {
    let fake = tokio_rt().block_on(FakeGitHub::start(FakeOptions::default()));
    let r = Runner::new();
    let o = r.run(
        &fake,
        &["run", "--out", "rep", "-q", "--publish", "never"],
        &[],
    );
    assert_eq!(code(&o), 0);
    let p = r.path().join("rep/report.json");
    let mut rep = read_json(&p);
    rep["warnings"] = json!(
        (0..600)
            .map(|i| format!("warning {i}: {}", "w".repeat(390)))
            .collect::<Vec<_>>()
    );
    std::fs::write(&p, serde_json::to_string(&rep).unwrap()).unwrap();
    let o = r.run(
        &fake,
        &["publish", "--report-dir", "rep", "--comment", "always"],
        &[],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let c = bot_comments(&fake);
    assert_eq!(c.len(), 1, "{}", stderr(&o));
    let body = &c[0].body;
    assert!(
        body.chars().count() <= 65_536,
        "{} chars",
        body.chars().count()
    );
    assert!(
        body.starts_with("<!-- evalgate:evalgate -->")
            && body
                .trim_end()
                .ends_with("(https://github.example/acme/widgets/actions/runs/777)")
    );
    assert!(
        body.contains("left out to fit GitHub's size limit") && body.contains("| Metric |"),
        "the tables stay, the warnings go"
    );
}

#[test]
fn server_errors_are_retried_without_a_duplicate_comment_and_on_change_stays_quiet() {
    let fake = tokio_rt().block_on(FakeGitHub::start(FakeOptions::default()));
    let r = Runner::new();
    let b = baseline_copy(r.path());
    // nothing moved: on-change (the default) posts no comment
    let o = r.run(
        &fake,
        &["run", "--baseline", b.to_str().unwrap(), "-q"],
        &[],
    );
    assert_eq!(code(&o), 0);
    assert!(
        bot_comments(&fake).is_empty(),
        "on-change posted although nothing changed"
    );
    assert!(stderr(&o).contains("nothing changed"), "{}", stderr(&o));
    // GitHub saves the comment but answers 502: the retry finds it instead of posting twice
    fake.fail_next(
        "POST",
        "/issues/42/comments",
        1,
        Fault::BadGatewayAfterWrite,
    );
    fake.fail_next("PATCH", "/check-runs/", 1, Fault::ServerError);
    let deg = degraded_corpus(r.path());
    let o = r.run(
        &fake,
        &[
            "run",
            "--corpus",
            deg.to_str().unwrap(),
            "--baseline",
            b.to_str().unwrap(),
            "-q",
        ],
        &[],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(bot_comments(&fake).len(), 1, "{}", stderr(&o));
    let runs = fake.check_runs();
    assert_eq!(
        runs.last().unwrap().conclusion.as_deref(),
        Some("failure"),
        "the 500 on completing was retried"
    );
}
