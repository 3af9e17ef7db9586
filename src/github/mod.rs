//! Publishing a report on GitHub: a sticky pull-request comment, a check run on the PR's head
//! commit, the job summary, step outputs and `::error::` lines. octocrab talks to
//! `GITHUB_API_URL`. Under `act` it is a dry run that writes the payloads to files.
//!
//! A publishing problem never changes the gate's exit code: a fork's read-only token (403) gets
//! a hint with the exact `permissions:` block; anything else is explained in a note.
//!
//! Every text taken from the report (dataset and system-under-test text, possibly a hand-made
//! or attacker-made `report.json`) goes through [`crate::reporting::sanitize`] before it reaches
//! a GitHub sink: Markdown fields (comment, job summary, check-run summary and text) through
//! `md`, plain-text fields (check-run title, annotations, step outputs, `::error` lines, the
//! check name) through `line`, annotation paths through `repo_path`.
//!
//! Time and retries: each request has octocrab's connect, read and write timeouts
//! (`--github-timeout`, `EVALGATE_GITHUB_TIMEOUT`, default 30 s), and the whole exchange with
//! GitHub has a deadline of [`DEADLINE_FACTOR`] times that, after which publishing stops with a
//! note; neither changes the exit code. octocrab's retry layer retries a request that got no
//! answer (a transport error or a timeout), a 5xx, or a 429 (after its `retry-after`), whatever
//! the method. That is safe only where repeating the request cannot add anything, so it is
//! switched on only for reads and whole-resource updates (listing comments, updating the
//! comment, completing the check run); requests that create something (a comment, a check run)
//! or append (annotation batches) go through a client without retry: a POST that failed may
//! still have been applied. A failed comment POST is followed by a look-up, and the comment
//! found is updated instead of posting again (never two sticky comments); a failed check-run
//! POST is reported, not repeated.

pub mod body;
pub mod env;
pub mod runner;

use crate::reporting::model::{CheckStatus, Report, Verdict};
use crate::reporting::sanitize;
use env::{GhEnv, PullRequest};
use octocrab::Octocrab;
use octocrab::params::checks::{
    CheckRunConclusion, CheckRunOutput, CheckRunOutputAnnotation, CheckRunOutputAnnotationLevel,
    CheckRunStatus,
};
use octocrab::service::middleware::retry::{NoOpRateLimitMetrics, RetryConfig};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The per-request timeout when none is set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The whole exchange with GitHub may take this many per-request timeouts.
pub const DEADLINE_FACTOR: u32 = 10;
/// Retries of a request that may be repeated (octocrab's retry layer).
const RETRIES: usize = 2;

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
    /// Connect, read and write timeout of each GitHub API request.
    pub timeout: Duration,
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

/// The check-run conclusion for an exit code (they always agree). Success only when the gate
/// held and covered everything measured: a run with nothing gated (no baseline for these
/// datasets) or with a part the baseline does not gate (a new detector) is neutral, so the
/// gate switching off is never a silent green check.
pub fn conclusion(r: &Report, code: i32) -> CheckRunConclusion {
    match (code, r.gate.verdict) {
        (0, Verdict::Fail | Verdict::NoBaseline) => CheckRunConclusion::Neutral,
        (0, Verdict::Pass) if !r.gate.ungated.is_empty() => CheckRunConclusion::Neutral,
        (0, _) => CheckRunConclusion::Success,
        _ => CheckRunConclusion::Failure,
    }
}

fn marker(key: &str) -> String {
    format!("<!-- evalgate:{key} -->")
}

/// A failed check or the system under test's failure, as the report has it (raw text).
struct Failure {
    /// `subject metric`, or `system under test failed`.
    what: String,
    message: String,
    /// The message's end matters more than its start (a log).
    ends: bool,
}

impl Failure {
    /// (title, message) for plain-text sinks: annotations and `::error` lines.
    fn plain(&self) -> (String, String) {
        let message = if self.ends {
            sanitize::line_ends(&self.message, 500)
        } else {
            sanitize::line(&self.message, 500)
        };
        (
            format!("evalgate: {}", sanitize::line(&self.what, 200)),
            message,
        )
    }

    /// A Markdown list item for the check-run summary.
    fn markdown(&self) -> String {
        let message = if self.ends {
            sanitize::md_ends(&self.message, 500)
        } else {
            sanitize::md(&self.message, 500)
        };
        format!("- evalgate: {}: {message}\n", sanitize::md(&self.what, 200))
    }
}

/// The failed checks, the system under test's failure first.
fn failures(r: &Report) -> Vec<Failure> {
    let mut v: Vec<Failure> = r
        .gate
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .map(|c| Failure {
            what: format!("{} {}", c.subject, c.metric),
            message: c.message.clone(),
            ends: false,
        })
        .collect();
    if let Some(f) = &r.failure {
        v.insert(
            0,
            Failure {
                what: "system under test failed".into(),
                message: f.to_string(),
                ends: true,
            },
        );
    }
    v
}

/// True when something worth a comment happened: the gate failed, a metric moved, or the gate
/// is off or incomplete.
fn changed(r: &Report) -> bool {
    // a gate that is off or covers only part of the run is news for the reviewer too (the
    // check run is neutral): the comment says what is not gated and how to gate it
    matches!(
        r.gate.verdict,
        Verdict::Fail | Verdict::Error | Verdict::NoBaseline
    ) || !r.gate.ungated.is_empty()
        || r.gate
            .checks
            .iter()
            .any(|c| c.delta.is_some_and(|d| d.abs() > 1e-6))
}

const PERMISSIONS_HINT: &str = "The token cannot write here (on a pull request from a fork GITHUB_TOKEN is read-only).\n\
Give the job these permissions:\n\
  permissions:\n    contents: read\n    pull-requests: write\n    checks: write\n\
For fork pull requests use the two-workflow pattern in evalgate's docs/github.md (a `pull_request` workflow uploads the report, a `workflow_run` workflow runs `evalgate publish`); never `pull_request_target` with a checkout of PR code.\n\
The gate's result is unchanged and is in the job summary.";

/// True when `e` is a request that got no answer in time (octocrab's read, write or connect
/// timeout).
fn timed_out(e: &octocrab::Error) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(x) = cur {
        if x.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        cur = x.source();
    }
    false
}

fn explain(e: &octocrab::Error, timeout: Duration) -> (bool, String) {
    if timed_out(e) {
        return (
            false,
            format!(
                "timed out: GitHub did not answer within {} s (--github-timeout, EVALGATE_GITHUB_TIMEOUT); the gate's result is unchanged",
                timeout.as_secs_f64()
            ),
        );
    }
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

/// An error after which a POST may or may not have been applied: anything but a 4xx other
/// than 429 (no answer, a timeout, a 5xx, an answer octocrab could not read).
fn uncertain(e: &octocrab::Error) -> bool {
    match e {
        octocrab::Error::GitHub { source, .. } => {
            let s = source.status_code.as_u16();
            s == 429 || s >= 500
        }
        _ => true,
    }
}

/// The two clients: `(retrying, once)`. Both have the timeouts; only the first retries (see the
/// module's documentation for which request uses which).
fn clients(
    api_url: &str,
    token: &str,
    timeout: Duration,
) -> octocrab::Result<(Octocrab, Octocrab)> {
    let build = |retry: RetryConfig| {
        Octocrab::builder()
            .base_uri(api_url)?
            .personal_token(token.to_string())
            .set_connect_timeout(Some(timeout))
            .set_read_timeout(Some(timeout))
            .set_write_timeout(Some(timeout))
            .add_retry_config(retry)
            .build()
    };
    let retrying = build(RetryConfig::HandleRateLimits {
        metrics: Arc::new(NoOpRateLimitMetrics),
        max_retries: RETRIES,
        min_wait_seconds: 1,
        retry_on_forbidden: false,
    })?;
    Ok((retrying, build(RetryConfig::None)?))
}

/// Creates the sticky comment with `once` (no blind retry: a 5xx or a lost answer may come
/// after GitHub saved the comment). After such an error the comments are listed and an
/// existing one is updated instead; only when none is there is the POST sent once more.
async fn create_once(
    gh: &Octocrab,
    once: &Octocrab,
    owner: &str,
    repo: &str,
    pr: u64,
    marker: &str,
    body: &str,
) -> octocrab::Result<octocrab::models::issues::Comment> {
    match once.issues(owner, repo).create_comment(pr, body).await {
        Err(e) if uncertain(&e) => match find_comment(gh, owner, repo, pr, marker).await? {
            Some((id, _)) => gh.issues(owner, repo).update_comment(id.into(), body).await,
            None => once.issues(owner, repo).create_comment(pr, body).await,
        },
        r => r,
    }
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
        let p = gh
            .issues(owner, repo)
            .list_comments(pr)
            .per_page(100)
            .page(page)
            .send()
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
    let plain_fails: Vec<(String, String)> = fails.iter().map(Failure::plain).collect();

    // step outputs, ::error lines, job summary
    for l in runner::error_lines(&plain_fails) {
        crate::outln!("{l}");
    }
    if let Some(p) = &env.output {
        let abs = |n: &str| {
            std::path::absolute(report_dir.join(n))
                .unwrap_or_else(|_| report_dir.join(n))
                .display()
                .to_string()
        };
        let regressions = regressions_output(report);
        let outputs = [
            ("verdict", report.gate.verdict.as_str().replace(' ', "_")),
            ("report-json", abs("report.json")),
            ("report-html", abs("report.html")),
            ("report-md", abs("report.md")),
            ("regressions", regressions),
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
    let key = sanitize::line(&opts.key, 100);
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
    let title = format!(
        "{}: {}",
        crate::reporting::markdown::verdict_badge(report.gate.verdict),
        sanitize::line(&report.gate.summary, 160)
    );
    let summary_text = {
        let mut s = format!("**{}**\n\n", sanitize::md(&report.gate.summary, 600));
        for f in &fails {
            s.push_str(&f.markdown());
        }
        body::fit("", &s, "", body::CHECK_TEXT_MAX, |x| x.chars().count())
    };
    // a file in the repository, or the config file evalgate reads by default
    let annotation_path = report
        .gate
        .baseline
        .as_deref()
        .and_then(sanitize::repo_path)
        .unwrap_or_else(|| "evalgate.toml".into());
    let annotations: Vec<CheckRunOutputAnnotation> = plain_fails
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
        // a local run under act: never post (act may have filled in a real token); write what
        // would be posted, as the options say (no earlier comment exists in a dry run)
        let comment_wanted = match opts.comment {
            CommentMode::Always => true,
            CommentMode::OnChange => changed(report),
            CommentMode::OnFailure => matches!(report.gate.verdict, Verdict::Fail | Verdict::Error),
            CommentMode::Off => false,
        };
        let files = [
            (
                "github-comment.md",
                comment_wanted.then(|| comment_body.clone()),
            ),
            ("github-summary.md", Some(body::fit_summary(&md, &link))),
            (
                "github-check-run.json",
                opts.check_run.then(|| {
                serde_json::to_string_pretty(&json!({
                    "create": {"name": check_name, "head_sha": head_sha, "status": "in_progress"},
                    "complete": {"status": "completed", "conclusion": concl, "output": output(vec![])},
                    "annotation_batches": annotations.chunks(50).map(|b| output(b.iter().map(clone_annotation).collect())).collect::<Vec<_>>(),
                }))
                .unwrap_or_default()
                }),
            ),
        ];
        for (name, body) in files {
            let p = report_dir.join(name);
            let Some(body) = body else {
                // not wanted this time: no stale file from an earlier dry run either
                let _ = std::fs::remove_file(&p);
                continue;
            };
            match crate::files::write_atomic(&p, body.as_bytes()) {
                Ok(()) => out.dry_run_files.push(p),
                Err(e) => out.notes.push(format!("{e:#}")),
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
    let (gh, once) = match clients(&env.api_url, token, opts.timeout) {
        Ok(c) => c,
        Err(e) => {
            out.notes.push(format!(
                "cannot build a GitHub client for {}: {e}",
                env.api_url
            ));
            return out;
        }
    };
    let post = Post {
        gh: &gh,
        once: &once,
        owner: &owner,
        repo: &repo,
        timeout: opts.timeout,
        hinted: false,
    };
    let deadline = opts.timeout.saturating_mul(DEADLINE_FACTOR);
    let sent = post.send(
        &mut out,
        report,
        opts,
        pr.as_ref(),
        head_sha.as_deref(),
        &key,
        &comment_body,
        &check_name,
        concl,
        &annotations,
        &output,
    );
    if tokio::time::timeout(deadline, sent).await.is_err() {
        out.notes.push(format!(
            "timed out: publishing to GitHub stopped after {} s ({DEADLINE_FACTOR} times --github-timeout / EVALGATE_GITHUB_TIMEOUT); what was not posted is in the job summary and the report, and the gate's result is unchanged",
            deadline.as_secs_f64()
        ));
    }
    out
}

/// The requests to GitHub, under one deadline.
struct Post<'a> {
    gh: &'a Octocrab,
    once: &'a Octocrab,
    owner: &'a str,
    repo: &'a str,
    timeout: Duration,
    hinted: bool,
}

impl Post<'_> {
    fn note(&mut self, out: &mut Published, what: &str, e: &octocrab::Error) {
        let (forbidden, msg) = explain(e, self.timeout);
        out.notes.push(format!("{what}: {msg}"));
        if forbidden && !self.hinted {
            out.notes.push(PERMISSIONS_HINT.to_string());
            self.hinted = true;
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn send(
        mut self,
        out: &mut Published,
        report: &Report,
        opts: &PublishOptions,
        pr: Option<&PullRequest>,
        head_sha: Option<&str>,
        key: &str,
        comment_body: &str,
        check_name: &str,
        concl: CheckRunConclusion,
        annotations: &[CheckRunOutputAnnotation],
        output: &dyn Fn(Vec<CheckRunOutputAnnotation>) -> CheckRunOutput,
    ) {
        let (gh, once, owner, repo) = (self.gh, self.once, self.owner, self.repo);
        // the sticky comment
        if let Some(pr) = pr
            && opts.comment != CommentMode::Off
        {
            match find_comment(gh, owner, repo, pr.number, &marker(key)).await {
                Err(e) => self.note(out, "listing PR comments failed", &e),
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
                        (false, _) => out.notes.push(
                            "comment: nothing changed, no comment posted (comment mode)".into(),
                        ),
                        (true, Some((id, old))) if old == comment_body => {
                            out.comment_id = Some(id);
                            out.notes
                                .push(format!("comment {id} is already up to date"));
                        }
                        (true, Some((id, _))) => match gh
                            .issues(owner, repo)
                            .update_comment(id.into(), comment_body)
                            .await
                        {
                            Ok(c) => {
                                out.comment_id = Some(c.id.into_inner());
                                out.notes.push(format!("updated comment {}", c.html_url));
                            }
                            Err(e) => self.note(out, "updating the PR comment failed", &e),
                        },
                        (true, None) => match create_once(
                            gh,
                            once,
                            owner,
                            repo,
                            pr.number,
                            &marker(key),
                            comment_body,
                        )
                        .await
                        {
                            Ok(c) => {
                                out.comment_id = Some(c.id.into_inner());
                                out.notes.push(format!("created comment {}", c.html_url));
                            }
                            Err(e) => self.note(out, "creating the PR comment failed", &e),
                        },
                    }
                }
            }
        }

        // the check run, on the PR's head commit
        let Some(sha) = head_sha.filter(|_| opts.check_run) else {
            return;
        };
        let created = once
            .checks(owner, repo)
            .create_check_run(check_name, sha)
            .status(CheckRunStatus::InProgress)
            .send()
            .await;
        let id = match created {
            Err(e) => return self.note(out, "creating the check run failed", &e),
            Ok(run) => run.id,
        };
        out.check_run_id = Some(id.into_inner());
        // completing is a whole-resource update (retried); annotations are appended by GitHub
        // on every update, so they go in their own requests, without retry
        let done = gh
            .checks(owner, repo)
            .update_check_run(id)
            .status(CheckRunStatus::Completed)
            .conclusion(concl)
            .output(output(vec![]))
            .send()
            .await;
        if let Err(e) = done {
            return self.note(out, "completing the check run failed", &e);
        }
        for batch in annotations.chunks(50) {
            if let Err(e) = once
                .checks(owner, repo)
                .update_check_run(id)
                .output(output(batch.iter().map(clone_annotation).collect()))
                .send()
                .await
            {
                self.note(out, "adding check-run annotations failed", &e);
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

/// The `regressions` step output: the failed checks as one line of JSON, an array of
/// `{"subject", "metric", "kind", "current", "baseline", "limit"}` (`[]` when none), for
/// `fromJSON(steps.<id>.outputs.regressions)`. A subject such as `detector:rules` holds a colon,
/// so no `subject:metric` text format could be split reliably; JSON can.
pub fn regressions_output(report: &Report) -> String {
    let items: Vec<serde_json::Value> = report
        .gate
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .map(|c| {
            serde_json::json!({
                "subject": sanitize::line(&c.subject, 200),
                "metric": sanitize::line(&c.metric, 80),
                "kind": c.kind,
                "current": c.current,
                "baseline": c.baseline,
                "limit": c.limit,
            })
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}
