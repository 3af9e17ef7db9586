//! Carries out a publishing [plan](super::plan): writes the runner's files, prints the workflow
//! commands, and talks to GitHub through octocrab (timeouts, retries and the deadline are
//! described in the [module's documentation](super)). Never fails: problems become notes.

use super::plan::{Action, CheckRun, Comment, Connection, Post, check_output, conclusion_name};
use super::runner;
use crate::infra::files::write_atomic;
use octocrab::Octocrab;
use octocrab::models::issues::Comment as IssueComment;
use octocrab::params::checks::CheckRunStatus;
use octocrab::service::middleware::retry::{NoOpRateLimitMetrics, RetryConfig};
use std::error::Error;
use std::sync::Arc;
use std::time::Duration;

const PERMISSIONS_HINT: &str = "The token cannot write here (on a pull request from a fork GITHUB_TOKEN is read-only).\n\
Give the job these permissions:\n\
  permissions:\n    contents: read\n    pull-requests: write\n    checks: write\n\
For fork pull requests use the two-workflow pattern in evalgate's docs/github.md (a `pull_request` workflow uploads the report, a `workflow_run` workflow runs `evalgate publish`); never `pull_request_target` with a checkout of PR code.\n\
The gate's result is unchanged and is in the job summary.";

/// Does what `actions` say, in order; returns the notes for the user.
pub async fn execute(actions: Vec<Action>) -> Vec<String> {
    let mut out = Vec::new();
    for action in actions {
        match action {
            Action::ErrorLines(lines) => lines.iter().for_each(|l| crate::workflow_command(l)),
            Action::WriteOutputs { path, outputs } => {
                if let Err(e) = runner::write_outputs(&path, &outputs) {
                    let n = format!("cannot write step outputs to {}: {e}", path.display());
                    out.push(n);
                }
            }
            Action::AppendSummary { path, body } => {
                if let Err(e) = runner::append_summary(&path, &body) {
                    let n = format!("cannot write the job summary to {}: {e}", path.display());
                    out.push(n);
                }
            }
            Action::DryRunFile { path, content } => {
                if let Err(e) = write_atomic(&path, content.as_bytes()) {
                    out.push(format!("{e:#}"));
                }
            }
            Action::RemoveStaleFile { path } => _ = std::fs::remove_file(&path),
            Action::Note(n) => out.push(n),
            Action::Post(p) => post(&p, &mut out).await,
        }
    }
    out
}

/// Sends the comment, then the check run, under the connection's deadline.
async fn post(p: &Post, out: &mut Vec<String>) {
    let github = &p.github;
    let (gh, once) = match clients(github) {
        Ok(c) => c,
        Err(e) => {
            let n = format!("cannot build a GitHub client for {}: {e}", github.api_url);
            return out.push(n);
        }
    };
    let mut session = Session {
        gh: &gh,
        once: &once,
        github,
        hinted: false,
        out,
    };
    let sent = async move {
        if let Some(c) = &p.comment {
            session.comment(c).await;
        }
        if let Some(c) = &p.check_run {
            session.check_run(c).await;
        }
    };
    if tokio::time::timeout(github.deadline, sent).await.is_err() {
        let (secs, factor) = (github.deadline.as_secs_f64(), super::DEADLINE_FACTOR);
        out.push(format!("timed out: publishing to GitHub stopped after {secs} s ({factor} times --github-timeout / EVALGATE_GITHUB_TIMEOUT); what was not posted is in the job summary and the report, and the gate's result is unchanged"));
    }
}

/// The two clients: `(retrying, once)`. Both have the timeouts; only the first retries (see the
/// module's documentation for which request uses which).
fn clients(github: &Connection) -> octocrab::Result<(Octocrab, Octocrab)> {
    let timeout = Some(github.timeout);
    let build = |retry: RetryConfig| {
        Octocrab::builder()
            .base_uri(&github.api_url)?
            .personal_token(github.token.clone())
            .set_connect_timeout(timeout)
            .set_read_timeout(timeout)
            .set_write_timeout(timeout)
            .add_retry_config(retry)
            .build()
    };
    let retrying = build(RetryConfig::HandleRateLimits {
        metrics: Arc::new(NoOpRateLimitMetrics),
        max_retries: 2,
        min_wait_seconds: 1,
        retry_on_forbidden: false,
    })?;
    Ok((retrying, build(RetryConfig::None)?))
}

/// (the token cannot write here, what went wrong).
fn explain(e: &octocrab::Error, timeout: Duration) -> (bool, String) {
    // no answer in time: octocrab's read, write or connect timeout, somewhere in the chain
    let timed_out = std::iter::successors(Some(e as &(dyn Error + 'static)), |&x| x.source())
        .filter_map(|x| x.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::TimedOut);
    if timed_out {
        let secs = timeout.as_secs_f64();
        let m = format!(
            "timed out: GitHub did not answer within {secs} s (--github-timeout, EVALGATE_GITHUB_TIMEOUT); the gate's result is unchanged"
        );
        return (false, m);
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
        octocrab::Error::GitHub { source: s, .. } => matches!(s.status_code.as_u16(), 429 | 500..),
        _ => true,
    }
}

/// Who the token writes as.
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

/// Who the token is: `GET /user` answers for a personal or user token; an installation token (a
/// workflow's `GITHUB_TOKEN`, a GitHub App's) is refused there, and what it writes is signed by
/// the app's bot, `github-actions[bot]` for `GITHUB_TOKEN`.
async fn identity(gh: &Octocrab) -> Identity {
    match gh.current().user().await {
        Ok(u) => Identity {
            login: u.login,
            id: Some(u.id.into_inner()),
        },
        Err(_) => Identity {
            login: "github-actions[bot]".to_string(),
            id: None,
        },
    }
}

/// The requests to one repository, under one deadline.
struct Session<'a> {
    /// Retries: reads and whole-resource updates.
    gh: &'a Octocrab,
    /// Never retries: creating and appending.
    once: &'a Octocrab,
    github: &'a Connection,
    /// The permissions hint was given.
    hinted: bool,
    out: &'a mut Vec<String>,
}

impl Session<'_> {
    fn note(&mut self, what: &str, e: &octocrab::Error) {
        let (forbidden, msg) = explain(e, self.github.timeout);
        self.out.push(format!("{what}: {msg}"));
        if forbidden && !self.hinted {
            self.out.push(PERMISSIONS_HINT.to_string());
            self.hinted = true;
        }
    }

    /// Updates the sticky comment, or creates it when none exists and one is wanted.
    async fn comment(&mut self, c: &Comment) {
        let me = identity(self.gh).await;
        let existing = match self.find_comment(&me, c).await {
            Err(e) => return self.note("listing PR comments failed", &e),
            Ok(existing) => existing,
        };
        let (done, doing, posted) = match existing {
            None if !c.new => {
                let n = "comment: nothing changed, no comment posted (comment mode)";
                return self.out.push(n.into());
            }
            Some((id, old)) if old == c.body => {
                return self.out.push(format!("comment {id} is already up to date"));
            }
            Some((id, _)) => ("updated", "updating", self.edit_comment(id, &c.body).await),
            None => ("created", "creating", self.create_comment(&me, c).await),
        };
        match posted {
            Ok(posted) => self.out.push(format!("{done} comment {}", posted.html_url)),
            Err(e) => self.note(&format!("{doing} the PR comment failed"), &e),
        }
    }

    /// Updates comment `id` with `gh` (retried: a whole-resource update).
    async fn edit_comment(&self, id: u64, body: &str) -> octocrab::Result<IssueComment> {
        let issues = self.gh.issues(&self.github.owner, &self.github.repo);
        issues.update_comment(id.into(), body).await
    }

    /// Creates the sticky comment with `once` (no blind retry: a 5xx or a lost answer may come
    /// after GitHub saved the comment). After such an error the comments are listed and an
    /// existing one is updated instead; only when none is there is the POST sent once more.
    async fn create_comment(&self, me: &Identity, c: &Comment) -> octocrab::Result<IssueComment> {
        let (once, owner, repo) = (self.once, &self.github.owner, &self.github.repo);
        let create = || async move { once.issues(owner, repo).create_comment(c.pr, &c.body).await };
        match create().await {
            Err(e) if uncertain(&e) => match self.find_comment(me, c).await? {
                Some((id, _)) => self.edit_comment(id, &c.body).await,
                None => create().await,
            },
            r => r,
        }
    }

    /// Finds our sticky comment over every page: one written by the token's own identity whose
    /// first line is the marker. Anyone can post the marker (a PR commenter racing the bot,
    /// another app quoting it), and such a comment is never updated: the report would land in a
    /// comment its author can edit.
    async fn find_comment(
        &self,
        me: &Identity,
        c: &Comment,
    ) -> octocrab::Result<Option<(u64, String)>> {
        let mut found: Option<(u64, String)> = None;
        for page in 1..=100u32 {
            let p = self
                .gh
                .issues(&self.github.owner, &self.github.repo)
                .list_comments(c.pr)
                .per_page(100)
                .page(page)
                .send()
                .await?;
            let n = p.items.len();
            for posted in p.items {
                let body = posted.body.unwrap_or_default();
                // its first line (GitHub keeps what the API was sent; an edit in the browser
                // may end lines with CR LF)
                let first = body.split('\n').next().unwrap_or_default();
                let first = first.strip_suffix('\r').unwrap_or(first);
                if found.is_none() && me.wrote(&posted.user) && first == c.marker {
                    found = Some((posted.id.into_inner(), body));
                }
            }
            if n < 100 {
                break;
            }
        }
        Ok(found)
    }

    /// Creates the check run (once), completes it (retried: a whole-resource update), then
    /// appends the annotations batch by batch (once: GitHub appends them on every update).
    async fn check_run(&mut self, run: &CheckRun) {
        let (owner, repo) = (&self.github.owner, &self.github.repo);
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
        let concl = conclusion_name(run.conclusion);
        self.out
            .push(format!("check run {:?} completed: {concl}", run.name));
    }
}
