//! `publish`, and what `run` shares with it: the GitHub options and their credentials.

use super::BadInput;
use crate::cli::{PublishArgs, PublishCmdArgs};
use crate::infra::secrets;
use crate::infra::text::sanitize;
use crate::pipeline::publish;
use crate::pipeline::publish::env::{GhEnv, PullRequest};
use crate::pipeline::publish::{DEFAULT_TIMEOUT, PublishOptions, plan};
use std::time::Duration;

/// A note about publishing for the terminal: what the API answered may quote credentials and
/// hold escape sequences.
pub(super) fn github_note(n: &str) -> String {
    sanitize::term_ends(&secrets::scrub(n), 2000)
}

/// A GitHub token as given, minus the surrounding whitespace a secret file or `echo` leaves;
/// one that still holds a character no token has (a control character, a space) is not used,
/// with a warning that never quotes it.
fn usable_token(t: Option<String>) -> Option<String> {
    let t = t?.trim().to_string();
    if t.is_empty() {
        return None;
    }
    if !t.chars().all(|c| c.is_ascii_graphic()) {
        crate::errln!(
            "warning: the GitHub token holds characters a token cannot have (a space or a control character); nothing is posted to GitHub"
        );
        return None;
    }
    secrets::register(&t);
    Some(t)
}

/// `--github-timeout` (`EVALGATE_GITHUB_TIMEOUT`), bounded like every other timeout.
pub(super) fn github_timeout(p: &PublishArgs) -> anyhow::Result<Duration> {
    match p.github_timeout {
        None => Ok(DEFAULT_TIMEOUT),
        Some(t) => crate::config::seconds("--github-timeout (EVALGATE_GITHUB_TIMEOUT)", t)
            .map_err(|e| BadInput(format!("{e:#}")).into()),
    }
}

pub(super) fn publish_options(
    p: &PublishArgs,
    env: &GhEnv,
    pr: Option<PullRequest>,
    timeout: Duration,
) -> PublishOptions {
    PublishOptions {
        comment: p.comment,
        check_run: p.check_run,
        fail_on: p.fail_on,
        key: p
            .comment_key
            .clone()
            .or_else(|| env.job.clone())
            .unwrap_or_else(|| "evalgate".into()),
        artifact_name: p.artifact_name.clone(),
        token: usable_token(
            p.github_token
                .clone()
                .or_else(|| std::env::var("GITHUB_TOKEN").ok()),
        ),
        act_post: p.act_post,
        pr,
        timeout,
    }
}

/// `publish`: posts an existing report; returns the gate's exit code.
pub async fn cmd_publish(a: &PublishCmdArgs) -> anyhow::Result<i32> {
    let timeout = github_timeout(&a.publish)?;
    let path = a.report_dir.join("report.json");
    let report = super::read_report_json(&path)?;
    let report = secrets::scrub_value(report);
    let env = GhEnv::from_env();
    let pr = match (a.pr, &a.head_sha) {
        (Some(number), Some(sha)) => Some(PullRequest {
            number,
            head_sha: sha.clone(),
            from_fork: false,
        }),
        _ => None,
    };
    // publishing is this command's whole job: `auto` publishes, on a runner or not
    if !plan::publishes(a.publish.publish, true) {
        crate::errln!("github: --publish never: nothing is posted or written");
        return Ok(publish::exit_code(&report, a.publish.fail_on));
    }
    let opts = publish_options(&a.publish, &env, pr, timeout);
    let out = publish::publish(&report, &a.report_dir, &env, &opts).await;
    for n in out.notes {
        crate::errln!("github: {}", github_note(&n));
    }
    Ok(publish::exit_code(&report, a.publish.fail_on))
}
