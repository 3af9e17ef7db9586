//! `publish`, and what `run` shares with it: the GitHub options and their credentials.

use super::BadInput;
use crate::cli::{PublishArgs, PublishCmdArgs};
use crate::infra::secrets;
use crate::infra::text::sanitize;
use crate::pipeline::publish;
use crate::pipeline::publish::env::{GhEnv, PullRequest};
use crate::pipeline::publish::{DEFAULT_TIMEOUT, PublishOptions, plan};
use crate::pipeline::report::model::Report;
use std::path::Path;
use std::time::Duration;

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

/// Publishes the report (its files in `dir`) as `p` asks, each note about it on the terminal.
pub(super) async fn post(
    report: &Report,
    dir: &Path,
    p: &PublishArgs,
    env: &GhEnv,
    pr: Option<PullRequest>,
    timeout: Duration,
) {
    let opts = PublishOptions {
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
    };
    // what the API answered may quote credentials and hold escape sequences
    for n in publish::publish(report, dir, env, &opts).await {
        crate::errln!("github: {}", sanitize::term_ends(&secrets::scrub(&n), 2000));
    }
}

/// `publish`: posts an existing report; returns the gate's exit code.
pub async fn cmd_publish(a: &PublishCmdArgs) -> anyhow::Result<i32> {
    let timeout = github_timeout(&a.publish)?;
    let path = a.report_dir.join("report.json");
    let report = secrets::scrub_value(super::read_report_json(&path)?);
    let env = GhEnv::from_env();
    let pr = a.pr.zip(a.head_sha.clone());
    let pr = pr.map(|(number, head_sha)| PullRequest { number, head_sha });
    // publishing is this command's whole job: `auto` publishes, on a runner or not
    if plan::publishes(a.publish.publish, true) {
        post(&report, &a.report_dir, &a.publish, &env, pr, timeout).await;
    } else {
        crate::errln!("github: --publish never: nothing is posted or written");
    }
    Ok(publish::exit_code(&report, a.publish.fail_on))
}
