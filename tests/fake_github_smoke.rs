//! Proves the fake GitHub answers in shapes octocrab parses, and that it enforces GitHub's
//! limits, auth and failure modes the publisher must handle.

#[path = "fake_github/mod.rs"]
mod fake_github;

use std::io::{Read, Write};

use fake_github::{FakeGitHub, FakeOptions, Fault};
use octocrab::models::CommentId;
use octocrab::models::issues::Comment;
use octocrab::params::checks::{
    CheckRunConclusion, CheckRunOutput, CheckRunOutputAnnotation, CheckRunOutputAnnotationLevel,
    CheckRunStatus,
};
use octocrab::service::middleware::retry::RetryConfig;
use octocrab::{GitHubError, Octocrab};
use serde_json::{Value, json};

const REPO: &str = "acme/widgets";
const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
const MARKER: &str = "<!-- evalgate:sticky-report -->";

fn client(fake: &FakeGitHub, token: &str, retry: RetryConfig) -> Octocrab {
    Octocrab::builder()
        .add_retry_config(retry)
        .base_uri(fake.url())
        .expect("base uri")
        .personal_token(token.to_string())
        .build()
        .expect("octocrab client")
}

/// The GitHub error inside an octocrab error (its `Display` is only the variant name).
fn gh_err(err: &octocrab::Error) -> &GitHubError {
    match err {
        octocrab::Error::GitHub { source, .. } => source,
        other => panic!("expected a GitHub error, got {other:?}"),
    }
}

fn output(title: &str, summary: &str, annotations: usize, tag: &str) -> CheckRunOutput {
    CheckRunOutput {
        title: title.into(),
        summary: summary.into(),
        text: Some("details".into()),
        annotations: (0..annotations)
            .map(|i| CheckRunOutputAnnotation {
                path: format!("datasets/{tag}.jsonl"),
                start_line: i as u32 + 1,
                end_line: i as u32 + 1,
                start_column: None,
                end_column: None,
                annotation_level: CheckRunOutputAnnotationLevel::Warning,
                message: format!("{tag} #{i}"),
                title: None,
                raw_details: None,
            })
            .collect(),
        images: Vec::new(),
    }
}

#[tokio::test]
async fn lists_comments_across_pages_following_link_headers() {
    let mut opts = FakeOptions::default();
    for i in 0..250 {
        opts = match i {
            230 => opts.seed(
                REPO,
                7,
                "github-actions[bot]",
                &format!("{MARKER}\nold report"),
            ),
            _ if i % 2 == 0 => opts.seed(REPO, 7, "octocat", &format!("comment {i}")),
            _ => opts.seed(REPO, 7, "renovate[bot]", &format!("comment {i}")),
        };
    }
    let opts = opts.seed(REPO, 8, "github-actions[bot]", MARKER);
    let fake = FakeGitHub::start(opts).await;
    let gh = client(&fake, &fake.token(), RetryConfig::None);
    let issues = gh.issues("acme", "widgets");

    let first = issues
        .list_comments(7)
        .per_page(100)
        .page(1u32)
        .send()
        .await
        .unwrap();
    assert_eq!(first.items.len(), 100);
    assert_eq!(first.number_of_pages(), Some(3));
    assert!(first.prev.is_none() && first.first.is_none());
    let next = first.next.clone().expect("rel=next");
    assert!(next.path().starts_with("/repositories/"), "{next}");
    assert_eq!(next.query(), Some("per_page=100&page=2"));

    let (mut all, mut page, mut pages) = (first.items.clone(), first, 1);
    while let Some(p) = gh.get_page::<Comment>(&page.next).await.unwrap() {
        all.extend(p.items.iter().cloned());
        (page, pages) = (p, pages + 1);
    }
    assert_eq!((pages, all.len()), (3, 250));
    assert!(page.prev.is_some() && page.first.is_some() && page.last.is_none());
    assert!(all.windows(2).all(|w| w[0].id < w[1].id), "oldest first");
    let at = all
        .iter()
        .position(|c| c.body.as_deref().unwrap().starts_with(MARKER));
    assert_eq!(at, Some(230), "marker is on page 3");
    let marker = &all[230];
    assert_eq!(marker.user.login, "github-actions[bot]");
    assert_eq!(
        (marker.user.r#type.as_str(), marker.user.id.0),
        ("Bot", 41_898_282)
    );
    assert_eq!(all[1].user.r#type, "Bot");
    assert_eq!(all[0].user.r#type, "User");

    let third = issues
        .list_comments(7)
        .per_page(100)
        .page(3u32)
        .send()
        .await
        .unwrap();
    assert_eq!(third.items.len(), 50);
    assert!(third.next.is_none());
    assert_eq!(third.items[30].id, marker.id);

    let default = issues.list_comments(7).send().await.unwrap();
    assert_eq!(
        (default.items.len(), default.number_of_pages()),
        (30, Some(9))
    );
    let capped = issues
        .list_comments(7)
        .per_page(250u8)
        .send()
        .await
        .unwrap();
    assert_eq!(
        (capped.items.len(), capped.number_of_pages()),
        (100, Some(3))
    );
    let beyond = issues
        .list_comments(7)
        .per_page(100)
        .page(9u32)
        .send()
        .await
        .unwrap();
    assert!(beyond.items.is_empty());

    let everything = gh.all_pages(issues.list_comments(7).per_page(100).send().await.unwrap());
    assert_eq!(everything.await.unwrap().len(), 250);
    let single = issues.list_comments(8).send().await.unwrap();
    assert_eq!(single.items.len(), 1);
    assert!(
        single.next.is_none() && single.last.is_none(),
        "one page: no Link header"
    );

    let followed = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/repositories/"));
    assert_eq!(
        followed.map(|r| r.query.unwrap()).collect::<Vec<_>>()[..2],
        ["per_page=100&page=2", "per_page=100&page=3"]
    );
}

#[tokio::test]
async fn creates_updates_and_deletes_comments() {
    let fake = FakeGitHub::start(FakeOptions::default().seed(REPO, 7, "octocat", "LGTM")).await;
    let gh = client(&fake, &fake.token(), RetryConfig::None);
    let issues = gh.issues("acme", "widgets");

    let created = issues
        .create_comment(7, format!("{MARKER}\nv1"))
        .await
        .unwrap();
    assert_eq!(created.user.login, "github-actions[bot]");
    assert_eq!(created.body.as_deref(), Some(&*format!("{MARKER}\nv1")));
    assert!(
        created
            .html_url
            .as_str()
            .ends_with(&format!("/pull/7#issuecomment-{}", created.id))
    );
    assert!(
        created
            .issue_url
            .as_ref()
            .unwrap()
            .as_str()
            .ends_with("/repos/acme/widgets/issues/7")
    );
    let stored = fake.comments(REPO, 7);
    assert_eq!(stored.len(), 2);
    assert_eq!(
        (stored[1].id, stored[1].user.as_str()),
        (created.id.0, "github-actions[bot]")
    );
    assert!(
        created.id.0 > i32::MAX as u64,
        "comment ids overflow i32, as on GitHub"
    );

    let updated = issues
        .update_comment(created.id, format!("{MARKER}\nv2"))
        .await
        .unwrap();
    assert_eq!(updated.id, created.id);
    assert!(updated.body.unwrap().ends_with("v2"));
    let last = fake.requests().pop().unwrap();
    assert_eq!((last.method.as_str(), last.status), ("POST", 200));
    assert_eq!(
        last.path,
        format!("/repos/acme/widgets/issues/comments/{}", created.id)
    );
    assert_eq!(last.body, Some(json!({"body": format!("{MARKER}\nv2")})));

    let route = format!("/repos/acme/widgets/issues/comments/{}", created.id);
    let patched: Comment = gh
        .patch(&route, Some(&json!({"body": "v3"})))
        .await
        .unwrap();
    assert_eq!(patched.body.as_deref(), Some("v3"));
    assert_eq!(
        issues
            .get_comment(created.id)
            .await
            .unwrap()
            .body
            .as_deref(),
        Some("v3")
    );
    let bodies: Vec<String> = fake.comments(REPO, 7).into_iter().map(|c| c.body).collect();
    assert_eq!(bodies, ["LGTM", "v3"]);

    let missing = issues.update_comment(CommentId(1), "x").await.unwrap_err();
    assert_eq!(gh_err(&missing).status_code, 404);
    issues.delete_comment(created.id).await.unwrap();
    assert_eq!(fake.comments(REPO, 7).len(), 1);
}

#[tokio::test]
async fn creates_and_updates_a_check_run_accumulating_annotations() {
    let opts = FakeOptions {
        pull_requests: vec![(7, SHA.into())],
        ..FakeOptions::default()
    };
    let fake = FakeGitHub::start(opts).await;
    let gh = client(&fake, &fake.token(), RetryConfig::None);
    let checks = gh.checks("acme", "widgets");

    let run = checks
        .create_check_run("evalgate", SHA)
        .status(CheckRunStatus::InProgress)
        .details_url("https://example.com/evalgate")
        .output(output("Running", "first batch", 50, "a"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        (run.name.as_str(), run.head_sha.as_str()),
        ("evalgate", SHA)
    );
    assert_eq!((run.conclusion.clone(), run.completed_at), (None, None));
    assert!(run.started_at.is_some());
    assert_eq!(run.output.annotations_count, 50);
    assert!(
        run.output
            .annotations_url
            .ends_with(&format!("/check-runs/{}/annotations", run.id))
    );
    assert_eq!(
        run.details_url.as_deref(),
        Some("https://example.com/evalgate")
    );
    assert_eq!(run.pull_requests.len(), 1);
    assert_eq!(
        (
            run.pull_requests[0].number,
            run.pull_requests[0].head.sha.as_str()
        ),
        (7, SHA)
    );

    let done = checks
        .update_check_run(run.id)
        .conclusion(CheckRunConclusion::Failure)
        .output(output("2 regressions", "final summary", 30, "b"))
        .send()
        .await
        .unwrap();
    assert_eq!(done.id, run.id);
    assert_eq!(done.conclusion.as_deref(), Some("failure"));
    assert!(done.completed_at.is_some());
    assert_eq!(done.output.annotations_count, 80);
    assert_eq!(done.output.title.as_deref(), Some("2 regressions"));

    let renamed = checks
        .update_check_run(run.id)
        .name("evalgate / gate")
        .send()
        .await
        .unwrap();
    assert_eq!(
        (renamed.name.as_str(), renamed.output.annotations_count),
        ("evalgate / gate", 80)
    );
    let got = checks.get_check_run(run.id).send().await.unwrap();
    assert_eq!(got, renamed);

    let stored = fake.check_runs();
    assert_eq!(stored.len(), 1);
    let s = &stored[0];
    assert_eq!(
        (s.status.as_str(), s.conclusion.as_deref()),
        ("completed", Some("failure"))
    );
    assert_eq!(s.summary.as_deref(), Some("final summary"));
    assert_eq!(s.annotations.len(), 80);
    assert_eq!(
        (
            s.annotations[0]["message"].as_str(),
            s.annotations[79]["message"].as_str()
        ),
        (Some("a #0"), Some("b #29"))
    );
    let patch = fake
        .requests()
        .into_iter()
        .find(|r| r.method == "PATCH")
        .unwrap();
    assert_eq!(patch.body.unwrap()["conclusion"], "failure");

    let other_sha = "f".repeat(40);
    let fork_like = checks
        .create_check_run("evalgate", other_sha)
        .send()
        .await
        .unwrap();
    assert!(fork_like.pull_requests.is_empty());
    assert_eq!(fork_like.output.annotations_count, 0);
}

#[tokio::test]
async fn read_only_token_gets_403_resource_not_accessible() {
    let opts = FakeOptions {
        forbidden: true,
        ..FakeOptions::default()
    }
    .seed(REPO, 7, "octocat", "hi");
    let fake = FakeGitHub::start(opts).await;
    let gh = client(&fake, &fake.token(), RetryConfig::None);

    let err = gh
        .issues("acme", "widgets")
        .create_comment(7, "report")
        .await
        .unwrap_err();
    let e = gh_err(&err);
    assert_eq!(e.status_code, 403);
    assert!(
        e.message.contains("Resource not accessible by integration"),
        "{e}"
    );
    let doc = "https://docs.github.com/rest/issues/comments#create-an-issue-comment";
    assert_eq!(e.documentation_url.as_deref(), Some(doc));
    // octocrab's Display of Error::GitHub is only "GitHub"; the message is in the source chain.
    assert_eq!(err.to_string(), "GitHub");
    let source = std::error::Error::source(&err).expect("source").to_string();
    assert!(source.contains("Resource not accessible by integration"));

    let run = gh
        .checks("acme", "widgets")
        .create_check_run("evalgate", SHA)
        .send()
        .await;
    assert_eq!(gh_err(&run.unwrap_err()).status_code, 403);
    let listed = gh
        .issues("acme", "widgets")
        .list_comments(7)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1, "reads still work");
    assert!(fake.check_runs().is_empty() && fake.comments(REPO, 7).len() == 1);

    fake.set_forbidden(false);
    gh.issues("acme", "widgets")
        .create_comment(7, "report")
        .await
        .unwrap();
    assert_eq!(fake.comments(REPO, 7).len(), 2);
}

#[tokio::test]
async fn fifty_one_annotations_are_refused_with_422() {
    let fake = FakeGitHub::start(FakeOptions::default()).await;
    let gh = client(&fake, &fake.token(), RetryConfig::None);
    let checks = gh.checks("acme", "widgets");

    let err = checks
        .create_check_run("evalgate", SHA)
        .output(output("t", "s", 51, "a"))
        .send()
        .await
        .unwrap_err();
    let e = gh_err(&err);
    assert_eq!(e.status_code, 422);
    assert!(
        e.message
            .contains("No more than 50 items are allowed; 51 were supplied."),
        "{e}"
    );
    assert!(fake.check_runs().is_empty());

    let run = checks
        .create_check_run("evalgate", SHA)
        .output(output("t", "s", 50, "a"))
        .send()
        .await
        .unwrap();
    let err = checks
        .update_check_run(run.id)
        .output(output("t", "s", 51, "b"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(gh_err(&err).status_code, 422);
    assert_eq!(
        fake.check_runs()[0].annotations.len(),
        50,
        "a refused PATCH appends nothing"
    );
}

#[tokio::test]
async fn bad_or_missing_token_gets_401() {
    let fake = FakeGitHub::start(FakeOptions::default().seed(REPO, 7, "octocat", "hi")).await;
    let bad = client(&fake, "ghs_wrong", RetryConfig::None);
    let err = bad
        .issues("acme", "widgets")
        .list_comments(7)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        (
            gh_err(&err).status_code.as_u16(),
            gh_err(&err).message.as_str()
        ),
        (401, "Bad credentials")
    );
    let err = bad
        .issues("acme", "widgets")
        .create_comment(7, "x")
        .await
        .unwrap_err();
    assert_eq!(gh_err(&err).status_code, 401);

    let anonymous = Octocrab::builder()
        .add_retry_config(RetryConfig::None)
        .base_uri(fake.url())
        .unwrap()
        .build()
        .unwrap();
    let err = anonymous
        .issues("acme", "widgets")
        .list_comments(7)
        .send()
        .await
        .unwrap_err();
    assert_eq!(gh_err(&err).message, "Requires authentication");

    let legacy = Octocrab::builder()
        .add_retry_config(RetryConfig::None)
        .add_header(
            axum::http::header::AUTHORIZATION,
            format!("token {}", fake.token()),
        )
        .base_uri(fake.url())
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(
        legacy
            .issues("acme", "widgets")
            .list_comments(7)
            .send()
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    assert_eq!(fake.comments(REPO, 7).len(), 1);
    let statuses: Vec<u16> = fake.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [401, 401, 401, 200]);
}

#[tokio::test]
async fn enforces_githubs_size_and_state_rules() {
    let fake = FakeGitHub::start(FakeOptions::default()).await;
    let gh = client(&fake, &fake.token(), RetryConfig::None);
    let (issues, checks) = (gh.issues("acme", "widgets"), gh.checks("acme", "widgets"));

    issues.create_comment(7, "x".repeat(65536)).await.unwrap();
    let err = issues
        .create_comment(7, "é".repeat(65537))
        .await
        .unwrap_err();
    let e = gh_err(&err);
    assert_eq!(
        (e.status_code.as_u16(), e.message.as_str()),
        (422, "Validation Failed")
    );
    assert_eq!(
        e.errors.as_ref().unwrap()[0]["message"],
        "Body is too long (maximum is 65536 characters)"
    );
    fake.set_comments_422(true);
    assert_eq!(
        gh_err(&issues.create_comment(7, "ok").await.unwrap_err()).status_code,
        422
    );
    fake.set_comments_422(false);
    assert_eq!(fake.comments(REPO, 7).len(), 1);

    let ok =
        checks
            .create_check_run("evalgate", SHA)
            .output(output("t", &"s".repeat(65535), 0, "a"));
    ok.send().await.unwrap();
    for summary in ["s".repeat(65536), "é".repeat(32768)] {
        let err = checks
            .create_check_run("evalgate", SHA)
            .output(output("t", &summary, 0, "a"))
            .send()
            .await
            .unwrap_err();
        let e = gh_err(&err);
        assert_eq!(e.status_code, 422);
        assert_eq!(
            e.errors.as_ref().unwrap()[0]["message"],
            "summary exceeds a maximum bytesize of 65535"
        );
    }
    let mut long_text = output("t", "s", 0, "a");
    long_text.text = Some("t".repeat(70_000));
    let err = checks
        .create_check_run("evalgate", SHA)
        .output(long_text)
        .send()
        .await
        .unwrap_err();
    assert_eq!(gh_err(&err).errors.as_ref().unwrap()[0]["field"], "text");

    let mixed = checks
        .create_check_run("evalgate", SHA)
        .status(CheckRunStatus::InProgress)
        .conclusion(CheckRunConclusion::Success);
    assert_eq!(gh_err(&mixed.send().await.unwrap_err()).status_code, 422);
    let no_conclusion = checks
        .create_check_run("evalgate", SHA)
        .status(CheckRunStatus::Completed);
    assert_eq!(
        gh_err(&no_conclusion.send().await.unwrap_err()).status_code,
        422
    );
    let err = checks
        .create_check_run("evalgate", "main")
        .send()
        .await
        .unwrap_err();
    assert_eq!(gh_err(&err).message, "No commit found for SHA: main");
    let bogus = json!({"name": "evalgate", "head_sha": SHA, "conclusion": "bogus"});
    let err = gh
        .post::<_, Value>("/repos/acme/widgets/check-runs", Some(&bogus))
        .await
        .unwrap_err();
    assert_eq!(gh_err(&err).status_code, 422);

    let implied = checks
        .create_check_run("evalgate", SHA)
        .conclusion(CheckRunConclusion::Success)
        .send()
        .await
        .unwrap();
    assert!(
        implied.completed_at.is_some(),
        "a conclusion completes the run"
    );
    assert_eq!(fake.check_runs().len(), 2);
    assert_eq!(fake.check_runs()[1].status, "completed");
}

#[tokio::test]
async fn injected_failures_and_retries() {
    let fake = FakeGitHub::start(FakeOptions::default()).await;
    let retrying = client(&fake, &fake.token(), RetryConfig::Simple(3));
    let strict = client(&fake, &fake.token(), RetryConfig::None);

    fake.fail_next("POST", "/issues/7/comments", 2, Fault::BadGateway);
    retrying
        .issues("acme", "widgets")
        .create_comment(7, "after 2 retries")
        .await
        .unwrap();
    let posts: Vec<u16> = fake
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.status)
        .collect();
    assert_eq!(posts, [502, 502, 201]);
    assert_eq!(fake.comments(REPO, 7).len(), 1);

    fake.fail_next("GET", "/comments", 1, Fault::ServerError);
    let err = strict
        .issues("acme", "widgets")
        .list_comments(7)
        .send()
        .await
        .unwrap_err();
    assert_eq!(gh_err(&err).status_code, 500);
    strict
        .issues("acme", "widgets")
        .list_comments(7)
        .send()
        .await
        .unwrap();

    fake.fail_next(
        "*",
        "/check-runs",
        1,
        Fault::RateLimited {
            retry_after_secs: 7,
        },
    );
    let err = strict
        .checks("acme", "widgets")
        .create_check_run("evalgate", SHA)
        .send()
        .await
        .unwrap_err();
    let e = gh_err(&err);
    assert_eq!(e.status_code, 429);
    assert_eq!(e.headers.as_ref().unwrap()["retry-after"], "7");
    assert!(fake.check_runs().is_empty());

    // A write that lands but answers 502 is re-sent by octocrab's retry: a duplicate comment.
    fake.fail_next("POST", "/issues/7/comments", 1, Fault::BadGatewayAfterWrite);
    retrying
        .issues("acme", "widgets")
        .create_comment(7, "dup")
        .await
        .unwrap();
    let dups = fake
        .comments(REPO, 7)
        .into_iter()
        .filter(|c| c.body == "dup")
        .count();
    assert_eq!(dups, 2);
}

#[tokio::test]
async fn responses_carry_githubs_headers_and_raw_fields() {
    let mut opts = FakeOptions::default();
    for i in 0..31 {
        opts = opts.seed(REPO, 7, "octocat", &format!("c{i}"));
    }
    let fake = FakeGitHub::start(opts).await;
    let gh = client(&fake, &fake.token(), RetryConfig::None);

    let resp = gh
        ._get(format!(
            "{}/repos/acme/widgets/issues/7/comments",
            fake.url()
        ))
        .await
        .unwrap();
    let h = resp.headers().clone();
    assert_eq!(h["content-type"], "application/json; charset=utf-8");
    assert_eq!(h["x-ratelimit-limit"], "5000");
    assert_eq!(h["x-ratelimit-remaining"], "4999");
    assert!(
        h["x-ratelimit-reset"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .is_ok()
    );
    assert!(h.contains_key("x-github-request-id") && h.contains_key("x-ratelimit-used"));
    assert!(
        h["link"]
            .to_str()
            .unwrap()
            .contains("page=2>; rel=\"next\"")
    );
    let comments: Value = serde_json::from_str(&gh.body_to_string(resp).await.unwrap()).unwrap();
    assert_eq!(comments[0]["author_association"], "CONTRIBUTOR");
    assert_eq!(comments[0]["reactions"]["total_count"], 0);

    let run = gh
        .checks("acme", "widgets")
        .create_check_run("evalgate", SHA)
        .send()
        .await
        .unwrap();
    let route = format!("{}/repos/acme/widgets/check-runs/{}", fake.url(), run.id);
    let raw: Value = serde_json::from_str(
        &gh.body_to_string(gh._get(route).await.unwrap())
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (raw["status"].as_str(), raw["app"]["slug"].as_str()),
        (Some("queued"), Some("github-actions"))
    );
    assert!(raw["check_suite"]["id"].is_u64());

    let resp = gh
        ._get(format!("{}/repos/acme/widgets/nope", fake.url()))
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let body: Value = serde_json::from_str(&gh.body_to_string(resp).await.unwrap()).unwrap();
    assert_eq!(body["message"], "Not Found");
}

/// The fake has its own thread: a test blocking its runtime (e.g. running the evalgate binary)
/// still gets answers. Also: GitHub refuses requests without a User-Agent.
#[tokio::test]
async fn answers_while_the_test_runtime_is_blocked() {
    let fake = FakeGitHub::start(FakeOptions::default().seed(REPO, 7, "octocat", "hi")).await;
    let raw = |ua: &str| {
        let addr = fake.url().trim_start_matches("http://").to_string();
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        let req = format!(
            "GET /repos/acme/widgets/issues/7/comments HTTP/1.1\r\nHost: x\r\n{ua}Authorization: Bearer {}\r\nConnection: close\r\n\r\n",
            fake.token()
        );
        s.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    };
    let ok = raw("User-Agent: evalgate-test\r\n");
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains("\"login\":\"octocat\""));
    assert!(raw("").starts_with("HTTP/1.1 403"));
}
