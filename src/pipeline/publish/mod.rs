//! Publishing a report on GitHub: a sticky pull-request comment, a check run on the PR's head
//! commit, the job summary, step outputs and `::error::` lines. octocrab talks to
//! `GITHUB_API_URL`. Under `act` it is a dry run that writes the payloads to files.
//!
//! A publishing problem never changes the gate's exit code: a fork's read-only token (403) gets
//! a hint with the exact `permissions:` block; anything else is explained in a note.
//!
//! Every text taken from the report (dataset and system-under-test text, possibly a hand-made
//! or attacker-made `report.json`) goes through [`crate::infra::text::sanitize`] before it reaches
//! a GitHub sink: Markdown fields (comment, job summary, check-run summary and text) through
//! `md`, plain-text fields (check-run title, annotations, step outputs, `::error` lines, the
//! check name) through `line`, annotation paths through `repo_path`.
//!
//! Time and retries (docs/github.md, "Timeouts and retries"): per-request timeouts, and the
//! whole exchange stops with a note after [`DEADLINE_FACTOR`] times that. octocrab retries
//! whatever the method, so only requests safe to repeat retry: a failed POST may still have been
//! applied, so it is never sent twice (a failed comment POST is looked up and updated instead).
//!
//! [`plan::plan`] decides everything (pure, unit-tested for every mode); [`exec::execute`]
//! carries the actions out; [`publish`] joins the two.

pub mod body;
pub mod env;
pub mod exec;
pub mod plan;
pub mod runner;

use crate::pipeline::report::model::Report;
use env::{GhEnv, PullRequest};
pub use plan::exit_code;
use std::path::Path;
use std::time::Duration;

/// The per-request timeout when none is set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The whole exchange with GitHub may take this many per-request timeouts.
pub const DEADLINE_FACTOR: u32 = 10;

/// Whether to publish at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishWhen {
    /// Inside GitHub Actions (GITHUB_ACTIONS=true).
    Auto,
    Always,
    Never,
}

/// When to post the sticky comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommentMode {
    /// On every run.
    Always,
    /// When a metric moved or the gate failed, and to keep an earlier comment current.
    OnChange,
    /// When the gate failed, and to keep an earlier comment current.
    OnFailure,
    Off,
}

/// Whether a failed gate fails the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
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

/// Renders and publishes: reads the event payload (for the pull request), then carries out the
/// [plan](plan::plan). Never fails: problems become notes, lines for the user (stderr).
pub async fn publish(
    report: &Report,
    report_dir: &Path,
    env: &GhEnv,
    opts: &PublishOptions,
) -> Vec<String> {
    let mut notes = Vec::new();
    let pr = opts.pr.clone().or_else(|| match env.event() {
        Ok(event) => event.as_ref().and_then(env::pull_request),
        Err(e) => {
            notes.push(format!(
                "{e}; the pull request is not known, so nothing is posted to it"
            ));
            None
        }
    });
    let actions = plan::plan(report, env, pr.as_ref(), report_dir, opts);
    notes.extend(exec::execute(actions).await);
    notes
}
