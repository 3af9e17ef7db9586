//! Publishing a report on GitHub: a sticky pull-request comment, a check run on the PR's head
//! commit, the job summary, step outputs and `::error::` lines. octocrab talks to
//! `GITHUB_API_URL`. Under `act` it is a dry run that writes the payloads to files.
//!
//! A publishing problem never changes the gate's exit code: a fork's read-only token (403) gets
//! a hint with the exact `permissions:` block; 429/5xx are retried; anything else is explained.

pub mod body;
pub mod env;
pub mod runner;

use crate::reporting::model::{CheckStatus, Report, Verdict};
use env::{GhEnv, PullRequest};
use octocrab::params::checks::{
    CheckRunConclusion, CheckRunOutput, CheckRunOutputAnnotation, CheckRunOutputAnnotationLevel,
    CheckRunStatus,
};
use octocrab::{Octocrab, service::middleware::retry::RetryConfig};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// When to post the sticky comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommentMode {
    /// On every run.
    Always,
    /// When a metric moved or the gate failed, and to keep an earlier comment current.
    OnChange,
    /// When the gate failed, and to keep an earlier comment current.
    OnFailure,
    /// Never.
    Off,
}

/// Whether a failed gate fails the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailOn {
    /// A regression fails the job (exit 1).
    Regression,
    /// Report only: exit 0 and a neutral check run.
    Never,
}

#[derive(Debug, Clone)]
pub struct PublishOptions {
    pub comment: CommentMode,
    pub check_run: bool,
    pub fail_on: FailOn,
    /// Distinguishes comments and check runs of several jobs / matrix legs.
    pub key: String,
    pub artifact_name: String,
    pub token: Option<String>,
    /// Post for real under `act`.
    pub act_post: bool,
    /// Explicit PR (for `evalgate publish` in a `workflow_run` workflow).
    pub pr: Option<PullRequest>,
}

/// What publishing did.
#[derive(Debug, Default)]
pub struct Published {
    /// Lines for the user (stderr).
    pub notes: Vec<String>,
    /// Files written by a dry run.
    pub dry_run_files: Vec<PathBuf>,
    pub comment_id: Option<u64>,
    pub check_run_id: Option<u64>,
}

/// The job's exit code: the verdict's, except that `fail-on: never` turns a failed gate into 0.
pub fn exit_code(r: &Report, fail_on: FailOn) -> i32 {
    match (r.gate.verdict, fail_on) {
        (Verdict::Fail, FailOn::Never) => 0,
        (v, _) => v.exit_code(),
    }
}

/// The check-run conclusion for an exit code (they always agree).
pub fn conclusion(r: &Report, code: i32) -> CheckRunConclusion {
    match (code, r.gate.verdict) {
        (0, Verdict::Fail) => CheckRunConclusion::Neutral,
        (0, _) => CheckRunConclusion::Success,
        _ => CheckRunConclusion::Failure,
    }
}

fn marker(key: &str) -> String {
    format!("<!-- evalgate:{key} -->")
}

/// The failed checks, as (title, message).
fn failures(r: &Report) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = r
        .gate
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .map(|c| {
            (
                format!("evalgate: {} {}", c.subject, c.metric),
                crate::reporting::sanitize::term(&c.message, 500),
            )
        })
        .collect();
    if let Some(f) = &r.failure {
        v.insert(
            0,
            (
                "evalgate: system under test failed".into(),
                crate::reporting::sanitize::term_ends(&f.to_string(), 500),
            ),
        );
    }
    v
}

/// True when something worth a comment happened: the gate failed or a metric moved.
fn changed(r: &Report) -> bool {
    matches!(r.gate.verdict, Verdict::Fail | Verdict::Error)
        || r.gate
            .checks
            .iter()
            .any(|c| c.delta.is_some_and(|d| d.abs() > 1e-6))
}

const PERMISSIONS_HINT: &str = "The token cannot write here (on a pull request from a fork GITHUB_TOKEN is read-only).\n\
Give the job these permissions:\n\
  permissions:\n    contents: read\n    pull-requests: write\n    checks: write\n\
For fork pull requests use the two-workflow pattern in the README (a `pull_request` workflow uploads the report, a `workflow_run` workflow runs `evalgate publish`); never `pull_request_target` with a checkout of PR code.\n\
The gate's result is unchanged and is in the job summary.";

fn explain(e: &octocrab::Error) -> (bool, String) {
    match e {
        octocrab::Error::GitHub { source, .. } => {
            let status = source.status_code.as_u16();
            let forbidden = status == 403 && source.message.contains("Resource not accessible");
            let what = match status {
                401 => "the token was refused (401): check the github-token input",
                403 if forbidden => "403 Resource not accessible by integration",
                403 | 429 => "rate limited or forbidden",
                404 => {
                    "not found (404): is the repository or pull request right, and can the token see it?"
                }
                422 => "GitHub refused the payload (422 Validation Failed)",
                _ => "GitHub error",
            };
            (forbidden, format!("{what}: {} ({status})", source.message))
        }
        other => (false, format!("{other}")),
    }
}

fn retryable(e: &octocrab::Error) -> bool {
    matches!(e, octocrab::Error::GitHub { source, .. } if matches!(source.status_code.as_u16(), 429 | 500 | 502 | 503 | 504))
}

/// Calls `f` up to 3 times while GitHub answers 429 or 5xx.
async fn with_retry<T, F, Fut>(f: F) -> octocrab::Result<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = octocrab::Result<T>>,
{
    let base = backoff_ms();
    let mut attempt = 0;
    loop {
        match f().await {
            Err(e) if attempt < 2 && retryable(&e) => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(base * attempt)).await;
            }
            r => return r,
        }
    }
}

fn client(api_url: &str, token: &str) -> octocrab::Result<Octocrab> {
    Octocrab::builder()
        .base_uri(api_url)?
        .personal_token(token.to_string())
        .add_retry_config(RetryConfig::None)
        .build()
}

/// Creates the sticky comment. A create is not blindly retried: a 5xx may come after GitHub
/// saved the comment, so before trying again the comments are listed and an existing one is
/// updated instead (never two sticky comments).
async fn create_once(
    gh: &Octocrab,
    owner: &str,
    repo: &str,
    pr: u64,
    marker: &str,
    body: &str,
) -> octocrab::Result<octocrab::models::issues::Comment> {
    let mut attempt = 0;
    loop {
        match gh.issues(owner, repo).create_comment(pr, body).await {
            Err(e) if attempt < 2 && retryable(&e) => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(backoff_ms() * attempt)).await;
                if let Some((id, _)) = find_comment(gh, owner, repo, pr, marker).await? {
                    return with_retry(|| async {
                        gh.issues(owner, repo).update_comment(id.into(), body).await
                    })
                    .await;
                }
            }
            r => return r,
        }
    }
}

fn backoff_ms() -> u64 {
    std::env::var("EVALGATE_GITHUB_BACKOFF_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

/// Finds our sticky comment (by marker, preferring a bot's) over every page.
async fn find_comment(
    gh: &Octocrab,
    owner: &str,
    repo: &str,
    pr: u64,
    marker: &str,
) -> octocrab::Result<Option<(u64, String)>> {
    let mut page = 1u32;
    let mut found: Option<(u64, String, bool)> = None;
    loop {
        let p = with_retry(|| async {
            gh.issues(owner, repo)
                .list_comments(pr)
                .per_page(100)
                .page(page)
                .send()
                .await
        })
        .await?;
        let n = p.items.len();
        for c in p.items {
            let body = c.body.unwrap_or_default();
            if body.contains(marker) {
                let bot = c.user.r#type == "Bot";
                if found.as_ref().is_none_or(|f| !f.2 && bot) {
                    found = Some((c.id.into_inner(), body, bot));
                }
            }
        }
        if n < 100 || page >= 100 {
            break;
        }
        page += 1;
    }
    Ok(found.map(|(id, b, _)| (id, b)))
}

/// Renders and publishes. Never fails: problems become notes.
pub async fn publish(
    report: &Report,
    report_dir: &Path,
    env: &GhEnv,
    opts: &PublishOptions,
) -> Published {
    let mut out = Published::default();
    let code = exit_code(report, opts.fail_on);
    let md = crate::reporting::markdown::render(report);
    let link = match env.run_url() {
        Some(u) => format!(
            "\n[Full report (HTML and JSON): artifact `{}` of this run]({u})\n",
            opts.artifact_name
        ),
        None => format!(
            "\nFull report (HTML and JSON): artifact `{}`.\n",
            opts.artifact_name
        ),
    };
    let fails = failures(report);

    // step outputs, ::error lines, job summary
    for l in runner::error_lines(&fails) {
        crate::outln!("{l}");
    }
    if let Some(p) = &env.output {
        let abs = |n: &str| {
            std::path::absolute(report_dir.join(n))
                .unwrap_or_else(|_| report_dir.join(n))
                .display()
                .to_string()
        };
        let regressions: Vec<String> = report
            .gate
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::Fail)
            .map(|c| format!("{}:{}", c.subject, c.metric))
            .collect();
        let outputs = [
            ("verdict", report.gate.verdict.as_str().replace(' ', "_")),
            ("report-json", abs("report.json")),
            ("report-html", abs("report.html")),
            ("report-md", abs("report.md")),
            ("regressions", regressions.join(",")),
            ("exit-code", code.to_string()),
        ];
        if let Err(e) = runner::write_outputs(p, &outputs) {
            out.notes
                .push(format!("cannot write step outputs to {}: {e}", p.display()));
        }
    }
    if let Some(p) = &env.step_summary
        && let Err(e) = runner::append_summary(p, &body::fit_summary(&md, &link))
    {
        out.notes.push(format!(
            "cannot write the job summary to {}: {e}",
            p.display()
        ));
    }

    // what would be posted
    let key = opts.key.clone();
    let comment_body = body::fit_comment(&format!("{}\n", marker(&key)), &md, &link);
    let pr = opts
        .pr
        .clone()
        .or_else(|| env.event().as_ref().and_then(env::pull_request));
    let head_sha = pr
        .as_ref()
        .map(|p| p.head_sha.clone())
        .or_else(|| env.sha.clone());
    let check_name = if key == "evalgate" {
        "evalgate".to_string()
    } else {
        format!("evalgate ({key})")
    };
    let concl = conclusion(report, code);
    let title = crate::reporting::sanitize::clip(
        &format!(
            "{}: {}",
            crate::reporting::markdown::verdict_badge(report.gate.verdict),
            report.gate.summary
        ),
        200,
    );
    let summary_text = {
        let mut s = format!("**{}**\n\n", report.gate.summary);
        for (t, m) in &fails {
            s.push_str(&format!("- {t}: {m}\n"));
        }
        body::fit("", &s, "", body::CHECK_TEXT_MAX, |x| x.chars().count())
    };
    let annotation_path = report
        .gate
        .baseline
        .clone()
        .filter(|b| !b.starts_with("embedded:"))
        .unwrap_or_else(|| "evalgate.toml".into());
    let annotations: Vec<CheckRunOutputAnnotation> = fails
        .iter()
        .map(|(t, m)| CheckRunOutputAnnotation {
            path: annotation_path.clone(),
            start_line: 1,
            end_line: 1,
            start_column: None,
            end_column: None,
            annotation_level: CheckRunOutputAnnotationLevel::Failure,
            message: m.clone(),
            title: Some(t.clone()),
            raw_details: None,
        })
        .collect();
    let output = |anns: Vec<CheckRunOutputAnnotation>| CheckRunOutput {
        title: title.clone(),
        summary: summary_text.clone(),
        text: Some(body::fit_check_text(&md)),
        annotations: anns,
        images: vec![],
    };

    if env.act && !opts.act_post {
        // a local run under act: never post (act may have filled in a real token)
        let files = [
            ("github-comment.md", comment_body.clone()),
            ("github-summary.md", body::fit_summary(&md, &link)),
            (
                "github-check-run.json",
                serde_json::to_string_pretty(&json!({
                    "create": {"name": check_name, "head_sha": head_sha, "status": "in_progress"},
                    "complete": {"status": "completed", "conclusion": concl, "output": output(annotations.iter().take(50).map(clone_annotation).collect())},
                    "more_annotation_batches": annotations.len().saturating_sub(1) / 50,
                }))
                .unwrap_or_default(),
            ),
        ];
        for (name, body) in files {
            let p = report_dir.join(name);
            match std::fs::write(&p, body) {
                Ok(()) => out.dry_run_files.push(p),
                Err(e) => out.notes.push(format!("cannot write {}: {e}", p.display())),
            }
        }
        out.notes.push(format!(
            "act: dry run, nothing posted; the comment, check run and summary are in {} (set EVALGATE_ACT_POST=true to post)",
            report_dir.display()
        ));
        return out;
    }

    let (Some(token), Some((owner, repo))) = (opts.token.as_deref(), env.owner_repo()) else {
        out.notes.push("no GitHub token or repository: the comment and check run are skipped (the job summary and outputs are written)".into());
        return out;
    };
    let gh = match client(&env.api_url, token) {
        Ok(c) => c,
        Err(e) => {
            out.notes.push(format!(
                "cannot build a GitHub client for {}: {e}",
                env.api_url
            ));
            return out;
        }
    };
    let mut hinted = false;
    let mut note = |out: &mut Published, what: &str, e: &octocrab::Error| {
        let (forbidden, msg) = explain(e);
        out.notes.push(format!("{what}: {msg}"));
        if forbidden && !hinted {
            out.notes.push(PERMISSIONS_HINT.to_string());
            hinted = true;
        }
    };

    // the sticky comment
    if let Some(pr) = &pr
        && opts.comment != CommentMode::Off
    {
        match find_comment(&gh, &owner, &repo, pr.number, &marker(&key)).await {
            Err(e) => note(&mut out, "listing PR comments failed", &e),
            Ok(existing) => {
                let wanted = match opts.comment {
                    CommentMode::Always => true,
                    CommentMode::OnChange => changed(report) || existing.is_some(),
                    CommentMode::OnFailure => {
                        matches!(report.gate.verdict, Verdict::Fail | Verdict::Error)
                            || existing.is_some()
                    }
                    CommentMode::Off => false,
                };
                match (wanted, existing) {
                    (false, _) => out
                        .notes
                        .push("comment: nothing changed, no comment posted (comment mode)".into()),
                    (true, Some((id, old))) if old == comment_body => {
                        out.comment_id = Some(id);
                        out.notes
                            .push(format!("comment {id} is already up to date"));
                    }
                    (true, Some((id, _))) => match with_retry(|| async {
                        gh.issues(&owner, &repo)
                            .update_comment(id.into(), &comment_body)
                            .await
                    })
                    .await
                    {
                        Ok(c) => {
                            out.comment_id = Some(c.id.into_inner());
                            out.notes.push(format!("updated comment {}", c.html_url));
                        }
                        Err(e) => note(&mut out, "updating the PR comment failed", &e),
                    },
                    (true, None) => match create_once(
                        &gh,
                        &owner,
                        &repo,
                        pr.number,
                        &marker(&key),
                        &comment_body,
                    )
                    .await
                    {
                        Ok(c) => {
                            out.comment_id = Some(c.id.into_inner());
                            out.notes.push(format!("created comment {}", c.html_url));
                        }
                        Err(e) => note(&mut out, "creating the PR comment failed", &e),
                    },
                }
            }
        }
    }

    // the check run, on the PR's head commit
    if opts.check_run
        && let Some(sha) = &head_sha
    {
        let created = with_retry(|| async {
            gh.checks(&owner, &repo)
                .create_check_run(check_name.clone(), sha.clone())
                .status(CheckRunStatus::InProgress)
                .send()
                .await
        })
        .await;
        match created {
            Err(e) => note(&mut out, "creating the check run failed", &e),
            Ok(run) => {
                let id = run.id;
                out.check_run_id = Some(id.into_inner());
                let mut batches = annotations
                    .chunks(50)
                    .map(|c| c.iter().map(clone_annotation).collect::<Vec<_>>());
                let first = batches.next().unwrap_or_default();
                let done = with_retry(|| async {
                    gh.checks(&owner, &repo)
                        .update_check_run(id)
                        .status(CheckRunStatus::Completed)
                        .conclusion(concl)
                        .output(output(first.iter().map(clone_annotation).collect()))
                        .send()
                        .await
                })
                .await;
                match done {
                    Err(e) => note(&mut out, "completing the check run failed", &e),
                    Ok(_) => {
                        for batch in batches {
                            if let Err(e) = with_retry(|| async {
                                gh.checks(&owner, &repo)
                                    .update_check_run(id)
                                    .output(output(batch.iter().map(clone_annotation).collect()))
                                    .send()
                                    .await
                            })
                            .await
                            {
                                note(&mut out, "adding check-run annotations failed", &e);
                                break;
                            }
                        }
                        out.notes.push(format!(
                            "check run {check_name:?} completed: {}",
                            serde_json::to_value(concl)
                                .ok()
                                .and_then(|v| v.as_str().map(String::from))
                                .unwrap_or_default()
                        ));
                    }
                }
            }
        }
    }
    out
}

fn clone_annotation(a: &CheckRunOutputAnnotation) -> CheckRunOutputAnnotation {
    CheckRunOutputAnnotation {
        path: a.path.clone(),
        start_line: a.start_line,
        end_line: a.end_line,
        start_column: a.start_column,
        end_column: a.end_column,
        annotation_level: a.annotation_level,
        message: a.message.clone(),
        title: a.title.clone(),
        raw_details: a.raw_details.clone(),
    }
}
