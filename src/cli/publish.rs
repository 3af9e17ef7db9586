//! Publishing to GitHub: the flags of `publish` and of the evaluating commands.

use crate::pipeline::publish::{CommentMode, FailOn, PublishWhen};
use clap::Args;
use std::path::PathBuf;

/// Publishing to GitHub (comment, check run, job summary, outputs).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "GitHub")]
pub struct PublishArgs {
    /// Publish the result on GitHub [auto: when running inside GitHub Actions].
    #[arg(long, env = "EVALGATE_PUBLISH", value_enum, default_value = "auto")]
    pub publish: PublishWhen,
    /// When to post the sticky pull-request comment.
    #[arg(
        long,
        env = "EVALGATE_COMMENT",
        value_enum,
        default_value = "on-change"
    )]
    pub comment: CommentMode,
    /// Create a check run on the pull request's head commit.
    #[arg(long, env = "EVALGATE_CHECK_RUN", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub check_run: bool,
    /// `never`: a failed gate is reported but exits 0 (neutral check run).
    #[arg(
        long,
        env = "EVALGATE_FAIL_ON",
        value_enum,
        default_value = "regression"
    )]
    pub fail_on: FailOn,
    /// Key of the sticky comment and check run, one per job / matrix leg [default: $GITHUB_JOB].
    #[arg(long, env = "EVALGATE_COMMENT_KEY")]
    pub comment_key: Option<String>,
    /// Name of the uploaded report artifact, for the link in the comment and summary.
    #[arg(
        long,
        env = "EVALGATE_ARTIFACT_NAME",
        default_value = "evalgate-report"
    )]
    pub artifact_name: String,
    /// Token for the GitHub API [default: $GITHUB_TOKEN].
    #[arg(long, env = "EVALGATE_GITHUB_TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,
    /// Under act, post for real instead of writing the payloads to files.
    #[arg(long, env = "EVALGATE_ACT_POST", default_value_t = false, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub act_post: bool,
    /// Connect, read and write time limit of each GitHub API request, in seconds; the whole
    /// exchange with GitHub stops after ten times as long [default: 30].
    #[arg(long, env = "EVALGATE_GITHUB_TIMEOUT", value_name = "SECONDS")]
    pub github_timeout: Option<f64>,
}

#[derive(Debug, Args)]
pub struct PublishCmdArgs {
    /// Directory holding report.json (the output of `evalgate run`).
    #[arg(long, default_value = "evalgate-report", value_name = "DIR")]
    pub report_dir: PathBuf,
    /// Pull request number (when the event is not a pull_request, e.g. in a workflow_run workflow).
    #[arg(long, requires = "head_sha")]
    pub pr: Option<u64>,
    /// The pull request's head commit.
    #[arg(long, requires = "pr")]
    pub head_sha: Option<String>,
    #[command(flatten)]
    pub publish: PublishArgs,
}
