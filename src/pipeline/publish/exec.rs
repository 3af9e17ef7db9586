//! Carries out a publishing [plan](super::plan): writes the runner's files, prints the workflow
//! commands, and talks to GitHub through octocrab (timeouts, retries and the deadline are
//! described in the [module's documentation](super)). Never fails: problems become notes.

use super::plan::{Action, CheckRun, Comment, Connection, Request, check_output, conclusion_name};
use super::{Published, runner};
use crate::infra::files::write_atomic;
use octocrab::Octocrab;
use octocrab::params::checks::CheckRunStatus;
use octocrab::service::middleware::retry::{NoOpRateLimitMetrics, RetryConfig};
use std::sync::Arc;
use std::time::Duration;

/// Retries of a request that may be repeated (octocrab's retry layer).
const RETRIES: usize = 2;

const PERMISSIONS_HINT: &str = "The token cannot write here (on a pull request from a fork GITHUB_TOKEN is read-only).\n\
Give the job these permissions:\n\
  permissions:\n    contents: read\n    pull-requests: write\n    checks: write\n\
For fork pull requests use the two-workflow pattern in evalgate's docs/github.md (a `pull_request` workflow uploads the report, a `workflow_run` workflow runs `evalgate publish`); never `pull_request_target` with a checkout of PR code.\n\
The gate's result is unchanged and is in the job summary.";

/// Does what `actions` say, in order.
pub async fn execute(actions: Vec<Action>) -> Published {
    let mut out = Published::default();
    for action in actions {
        match action {
            Action::ErrorLines(lines) => {
                for l in lines {
                    crate::workflow_command(&l);
                }
            }
            Action::WriteOutputs { path, outputs } => {
                if let Err(e) = runner::write_outputs(&path, &outputs) {
                    out.notes.push(format!(
                        "cannot write step outputs to {}: {e}",
                        path.display()
                    ));
                }
            }
            Action::AppendSummary { path, body } => {
                if let Err(e) = runner::append_summary(&path, &body) {
                    out.notes.push(format!(
                        "cannot write the job summary to {}: {e}",
                        path.display()
                    ));
                }
            }
            Action::DryRunFile { path, content } => match write_atomic(&path, content.as_bytes()) {
                Ok(()) => out.dry_run_files.push(path),
                Err(e) => out.notes.push(format!("{e:#}")),
            },
            Action::RemoveStaleFile { path } => {
                let _ = std::fs::remove_file(&path);
            }
            Action::Note(n) => out.notes.push(n),
            Action::Post { github, requests } => post(&github, &requests, &mut out).await,
        }
    }
    out
}

/// Sends `requests` under the connection's deadline.
async fn post(github: &Connection, requests: &[Request], out: &mut Published) {
    let (gh, once) = match clients(&github.api_url, &github.token, github.timeout) {
        Ok(c) => c,
        Err(e) => {
            out.notes.push(format!(
                "cannot build a GitHub client for {}: {e}",
                github.api_url
            ));
            return;
        }
    };
    let mut session = Session {
        gh: &gh,
        once: &once,
        owner: &github.owner,
        repo: &github.repo,
        timeout: github.timeout,
        hinted: false,
        me: None,
        out,
    };
    let sent = async move {
        for r in requests {
            match r {
                Request::Comment(c) => session.comment(c).await,
                Request::CheckRun(c) => session.check_run(c).await,
            }
        }
    };
    if tokio::time::timeout(github.deadline, sent).await.is_err() {
        out.notes.push(format!(
            "timed out: publishing to GitHub stopped after {} s ({} times --github-timeout / EVALGATE_GITHUB_TIMEOUT); what was not posted is in the job summary and the report, and the gate's result is unchanged",
            github.deadline.as_secs_f64(),
            super::DEADLINE_FACTOR
        ));
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

/// (the token cannot write here, what went wrong).
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

/// The author of what a workflow's `GITHUB_TOKEN` writes.
const ACTIONS_BOT: &str = "github-actions[bot]";

/// Who the token writes as.
#[derive(Debug, Clone)]
struct Identity {
    login: String,
    /// Known when `GET /user` answered; otherwise the login is a bot's (`[bot]` logins are
    /// GitHub's own: no person can take one).
    id: Option<u64>,
}

impl Identity {
    fn wrote(&self, user: &octocrab::models::Author) -> bool {
        match self.id {
            Some(id) => user.id.into_inner() == id,
            None => user.login == self.login && user.r#type == "Bot",
        }
    }
}

/// A comment body's first line (GitHub keeps what the API was sent; an edit in the browser
/// may end lines with CR LF).
fn first_line(body: &str) -> &str {
    let line = body.split('\n').next().unwrap_or_default();
    line.strip_suffix('\r').unwrap_or(line)
}

/// The requests to one repository, under one deadline.
struct Session<'a> {
    /// Retries: reads and whole-resource updates.
    gh: &'a Octocrab,
    /// Never retries: creating and appending.
    once: &'a Octocrab,
    owner: &'a str,
    repo: &'a str,
    timeout: Duration,
    /// The permissions hint was given.
    hinted: bool,
    /// Who the token is, once asked ([`Session::identity`]).
    me: Option<Identity>,
    out: &'a mut Published,
}

impl Session<'_> {
    fn note(&mut self, what: &str, e: &octocrab::Error) {
        let (forbidden, msg) = explain(e, self.timeout);
        self.out.notes.push(format!("{what}: {msg}"));
        if forbidden && !self.hinted {
            self.out.notes.push(PERMISSIONS_HINT.to_string());
            self.hinted = true;
        }
    }

    /// Updates the sticky comment, or creates it when none exists and one is wanted.
    async fn comment(&mut self, c: &Comment) {
        let existing = match self.find_comment(c.pr, &c.marker).await {
            Err(e) => return self.note("listing PR comments failed", &e),
            Ok(existing) => existing,
        };
        match existing {
            None if !c.new => self
                .out
                .notes
                .push("comment: nothing changed, no comment posted (comment mode)".into()),
            Some((id, old)) if old == c.body => {
                self.out.comment_id = Some(id);
                self.out
                    .notes
                    .push(format!("comment {id} is already up to date"));
            }
            Some((id, _)) => match self
                .gh
                .issues(self.owner, self.repo)
                .update_comment(id.into(), &c.body)
                .await
            {
                Ok(posted) => {
                    self.out.comment_id = Some(posted.id.into_inner());
                    self.out
                        .notes
                        .push(format!("updated comment {}", posted.html_url));
                }
                Err(e) => self.note("updating the PR comment failed", &e),
            },
            None => match self.create_comment(c).await {
                Ok(posted) => {
                    self.out.comment_id = Some(posted.id.into_inner());
                    self.out
                        .notes
                        .push(format!("created comment {}", posted.html_url));
                }
                Err(e) => self.note("creating the PR comment failed", &e),
            },
        }
    }

    /// Creates the sticky comment with `once` (no blind retry: a 5xx or a lost answer may come
    /// after GitHub saved the comment). After such an error the comments are listed and an
    /// existing one is updated instead; only when none is there is the POST sent once more.
    async fn create_comment(
        &mut self,
        c: &Comment,
    ) -> octocrab::Result<octocrab::models::issues::Comment> {
        let (owner, repo) = (self.owner, self.repo);
        match self
            .once
            .issues(owner, repo)
            .create_comment(c.pr, &c.body)
            .await
        {
            Err(e) if uncertain(&e) => match self.find_comment(c.pr, &c.marker).await? {
                Some((id, _)) => {
                    self.gh
                        .issues(owner, repo)
                        .update_comment(id.into(), &c.body)
                        .await
                }
                None => {
                    self.once
                        .issues(owner, repo)
                        .create_comment(c.pr, &c.body)
                        .await
                }
            },
            r => r,
        }
    }

    /// Who the token is, asked once: `GET /user` answers for a personal or user token; an
    /// installation token (a workflow's `GITHUB_TOKEN`, a GitHub App's) is refused there, and
    /// what it writes is signed by the app's bot, `github-actions[bot]` for `GITHUB_TOKEN`.
    async fn identity(&mut self) -> Identity {
        if let Some(me) = &self.me {
            return me.clone();
        }
        let me = match self.gh.current().user().await {
            Ok(u) => Identity {
                login: u.login,
                id: Some(u.id.into_inner()),
            },
            Err(_) => Identity {
                login: ACTIONS_BOT.to_string(),
                id: None,
            },
        };
        self.me = Some(me.clone());
        me
    }

    /// Finds our sticky comment over every page: one written by the token's own identity whose
    /// first line is the marker. Anyone can post the marker (a PR commenter racing the bot,
    /// another app quoting it), and such a comment is never updated: the report would land in a
    /// comment its author can edit.
    async fn find_comment(
        &mut self,
        pr: u64,
        marker: &str,
    ) -> octocrab::Result<Option<(u64, String)>> {
        let me = self.identity().await;
        let mut page = 1u32;
        let mut found: Option<(u64, String)> = None;
        loop {
            let p = self
                .gh
                .issues(self.owner, self.repo)
                .list_comments(pr)
                .per_page(100)
                .page(page)
                .send()
                .await?;
            let n = p.items.len();
            for c in p.items {
                let body = c.body.unwrap_or_default();
                if found.is_none() && me.wrote(&c.user) && first_line(&body) == marker {
                    found = Some((c.id.into_inner(), body));
                }
            }
            if n < 100 || page >= 100 {
                break;
            }
            page += 1;
        }
        Ok(found)
    }

    /// Creates the check run (once), completes it (retried: a whole-resource update), then
    /// appends the annotations batch by batch (once: GitHub appends them on every update).
    async fn check_run(&mut self, run: &CheckRun) {
        let (owner, repo) = (self.owner, self.repo);
        let created = self
            .once
            .checks(owner, repo)
            .create_check_run(&run.name, &run.head_sha)
            .status(CheckRunStatus::InProgress)
            .send()
            .await;
        let id = match created {
            Err(e) => return self.note("creating the check run failed", &e),
            Ok(created) => created.id,
        };
        self.out.check_run_id = Some(id.into_inner());
        let done = self
            .gh
            .checks(owner, repo)
            .update_check_run(id)
            .status(CheckRunStatus::Completed)
            .conclusion(run.conclusion)
            .output(check_output(&run.output, &[]))
            .send()
            .await;
        if let Err(e) = done {
            return self.note("completing the check run failed", &e);
        }
        for batch in &run.annotation_batches {
            if let Err(e) = self
                .once
                .checks(owner, repo)
                .update_check_run(id)
                .output(check_output(&run.output, batch))
                .send()
                .await
            {
                self.note("adding check-run annotations failed", &e);
                break;
            }
        }
        self.out.notes.push(format!(
            "check run {:?} completed: {}",
            run.name,
            conclusion_name(run.conclusion)
        ));
    }
}
