//! What publishing a report does, decided without doing it: [`plan`] turns the report, the run
//! it belongs to (the runner, the pull request) and the options into a list of [`Action`]s, which
//! [`super::exec::execute`] carries out. Everything here is pure (no network, no file is read
//! or written), so every mode is unit-tested by the actions it yields.
//!
//! The one decision left to the executor is whether an earlier sticky comment exists (only
//! GitHub knows): [`Comment::new`] says whether a comment is wanted even when none exists yet.

use super::env::{GhEnv, PullRequest};
use super::{CommentMode, FailOn, PublishOptions, PublishWhen, body, runner};
use crate::infra::text::sanitize;
use crate::pipeline::gate::Conclusion;
use crate::pipeline::report::markdown::{render, verdict_badge};
use crate::pipeline::report::model::{Report, Verdict};
use crate::pipeline::report::view::failed_checks;
use crate::pipeline::score::scorecard::round6;
use octocrab::params::checks::{
    CheckRunConclusion, CheckRunOutput, CheckRunOutputAnnotation, CheckRunOutputAnnotationLevel,
};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// GitHub takes at most this many annotations per check-run request.
pub const ANNOTATION_BATCH: usize = 50;

/// One thing publishing does, in order.
#[derive(Debug, Clone)]
pub enum Action {
    /// Workflow-command lines (`::error`, `::notice`) for stdout.
    ErrorLines(Vec<String>),
    /// Step outputs appended to `$GITHUB_OUTPUT`.
    WriteOutputs {
        path: PathBuf,
        outputs: Vec<(&'static str, String)>,
    },
    /// Markdown appended to `$GITHUB_STEP_SUMMARY`.
    AppendSummary { path: PathBuf, body: String },
    /// A dry run's file: what would have been posted.
    DryRunFile { path: PathBuf, content: String },
    /// A dry-run file this run would not write: removed, so none is left from an earlier run.
    RemoveStaleFile { path: PathBuf },
    /// A line for the user.
    Note(String),
    /// Requests to the GitHub API under one deadline.
    Post(Box<Post>),
}

/// The sticky comment, then the check run, under one deadline.
#[derive(Debug, Clone)]
pub struct Post {
    pub github: Connection,
    pub comment: Option<Comment>,
    pub check_run: Option<CheckRun>,
}

/// Where and how to talk to GitHub.
#[derive(Clone)]
pub struct Connection {
    pub api_url: String,
    pub token: String,
    pub owner: String,
    pub repo: String,
    /// Connect, read and write timeout of each request.
    pub timeout: Duration,
    /// The whole exchange stops after this long.
    pub deadline: Duration,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("api_url", &self.api_url)
            .field("token", &"***")
            .field("owner", &self.owner)
            .field("repo", &self.repo)
            .field("timeout", &self.timeout)
            .field("deadline", &self.deadline)
            .finish()
    }
}

/// The sticky comment on a pull request.
#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    pub pr: u64,
    /// The hidden line that finds the comment again.
    pub marker: String,
    pub body: String,
    /// Post one even when no earlier comment exists (otherwise an earlier one is only kept
    /// current).
    pub new: bool,
}

/// A check run on a commit: created, completed, then its annotations in batches.
#[derive(Debug, Clone)]
pub struct CheckRun {
    pub name: String,
    pub head_sha: String,
    pub conclusion: CheckRunConclusion,
    pub output: CheckText,
    /// Sent after completing, one request per batch.
    pub annotation_batches: Vec<Vec<Annotation>>,
}

/// A check run's `output` without its annotations.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckText {
    /// Plain text.
    pub title: String,
    /// Markdown.
    pub summary: String,
    /// Markdown.
    pub text: String,
}

/// A failure annotation (plain text; the path is inside the repository).
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub path: String,
    pub title: String,
    pub message: String,
}

/// The octocrab payload of a check run's output with these annotations.
pub fn check_output(text: &CheckText, annotations: &[Annotation]) -> CheckRunOutput {
    CheckRunOutput {
        title: text.title.clone(),
        summary: text.summary.clone(),
        text: Some(text.text.clone()),
        annotations: annotations
            .iter()
            .map(|a| CheckRunOutputAnnotation {
                path: a.path.clone(),
                start_line: 1,
                end_line: 1,
                start_column: None,
                end_column: None,
                annotation_level: CheckRunOutputAnnotationLevel::Failure,
                message: a.message.clone(),
                title: Some(a.title.clone()),
                raw_details: None,
            })
            .collect(),
        images: vec![],
    }
}

/// The conclusion's name as GitHub spells it (`success`, `failure`, `neutral`).
pub fn conclusion_name(c: CheckRunConclusion) -> String {
    serde_json::to_value(c)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// The job's exit code: the verdict's, except that `fail-on: never` turns a failed gate into 0.
pub fn exit_code(r: &Report, fail_on: FailOn) -> i32 {
    r.gate.exit_code_with(fail_on == FailOn::Regression)
}

/// A number as a machine output carries it: rounded to 6 decimals, so `0.95 − 0.02` is `0.93`,
/// not `0.9299999999999999` (the noise of binary floating point, not a measurement). A
/// non-finite number comes out as it went in; adding `+0.0` turns `-0.0` into `0` (IEEE 754).
pub fn machine_number(v: f64) -> f64 {
    round6(v) + 0.0
}

/// The `regressions` step output: the failed checks as one line of JSON, an array of
/// `{"subject", "metric", "kind", "current", "baseline", "limit"}` (`[]` when none), and with a
/// paired per-query comparison also `"p_value"` and `"delta_ci95"`, for
/// `fromJSON(steps.<id>.outputs.regressions)`. Numbers are rounded to 6 decimals
/// ([`machine_number`]). A subject such as `detector:rules` holds a colon, so no
/// `subject:metric` text format could be split reliably; JSON can.
pub fn regressions_output(report: &Report) -> String {
    let n = |v: Option<f64>| v.map(machine_number);
    let items: Vec<serde_json::Value> = failed_checks(report)
        .map(|c| {
            let mut item = json!({
                "subject": sanitize::line(&c.subject, 200),
                "metric": sanitize::line(&c.metric, 80),
                "kind": c.kind,
                "current": n(c.current),
                "baseline": n(c.baseline),
                "limit": n(c.limit),
            });
            if let Some(p) = &c.paired {
                item["p_value"] = json!(machine_number(p.p_value));
                item["delta_ci95"] = json!(p.delta_ci95.map(|ci| ci.map(machine_number)));
            }
            item
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}

/// The failed checks, the system under test's failure first: as (title, message) for the
/// plain-text sinks (annotations and `::error` lines), and as Markdown list items for the
/// check-run summary.
fn failures(r: &Report) -> (Vec<(String, String)>, String) {
    // how a message is cut for plain text and for Markdown: a log keeps its end, which matters
    // more than its start
    type Cuts = (fn(&str, usize) -> String, fn(&str, usize) -> String);
    const LOG: Cuts = (sanitize::line_ends, sanitize::md_ends);
    const TEXT: Cuts = (sanitize::line, sanitize::md);
    let sut = r
        .failure
        .iter()
        .map(|f| ("system under test failed".into(), f.to_string(), LOG));
    let checks = failed_checks(r).map(|c| {
        let what = format!("{} {}", c.subject, c.metric);
        (what, c.message.clone(), TEXT)
    });
    sut.chain(checks)
        .map(|(what, message, (line, md)): (String, String, Cuts)| {
            let title = format!("evalgate: {}", sanitize::line(&what, 200));
            let what = sanitize::md(&what, 200);
            let item = format!("- evalgate: {what}: {}\n", md(&message, 500));
            ((title, line(&message, 500)), item)
        })
        .unzip()
}

/// True when something worth a comment happened: the gate failed, a metric moved, or the gate
/// is off or covers only part of the run (news for the reviewer too, though the check run is
/// neutral: the comment says what is not gated and how to gate it).
fn changed(r: &Report) -> bool {
    matches!(
        r.gate.verdict,
        Verdict::Fail | Verdict::Error | Verdict::NoBaseline
    ) || !r.gate.ungated.is_empty()
        || r.gate
            .checks
            .iter()
            .any(|c| c.delta.is_some_and(|d| d.abs() > 1e-6))
}

/// Whether a command publishes at all (`--publish`): `auto` publishes on a runner
/// (`GITHUB_ACTIONS=true`); `never` neither posts nor writes anything, not even step outputs.
pub fn publishes(when: PublishWhen, on_runner: bool) -> bool {
    when == PublishWhen::Always || (when == PublishWhen::Auto && on_runner)
}

/// The dry-run files, in the order they are written.
pub const DRY_RUN_FILES: [&str; 3] = [
    "github-comment.md",
    "github-summary.md",
    "github-check-run.json",
];

/// What publishing `report` with `opts` does, in order, on the runner `env` for the pull request
/// `pr` (given explicitly, or read from the event payload; `None` on a push), the reports being in
/// `report_dir` (step outputs point there; a dry run writes there).
pub fn plan(
    report: &Report,
    env: &GhEnv,
    pr: Option<&PullRequest>,
    report_dir: &Path,
    opts: &PublishOptions,
) -> Vec<Action> {
    let mut actions = Vec::new();
    let code = exit_code(report, opts.fail_on);
    let md = render(report);
    let a = &opts.artifact_name;
    let link = match env.run_url() {
        Some(u) => format!("\n[Full report (HTML and JSON): artifact `{a}` of this run]({u})\n"),
        None => format!("\nFull report (HTML and JSON): artifact `{a}`.\n"),
    };
    let (plain_fails, fails_md) = failures(report);

    // ::error lines, step outputs, job summary
    let lines = runner::error_lines(&plain_fails);
    if !lines.is_empty() {
        actions.push(Action::ErrorLines(lines));
    }
    if let Some(p) = &env.output {
        let abs = |n: &str| {
            let p = report_dir.join(n);
            std::path::absolute(&p).unwrap_or(p).display().to_string()
        };
        actions.push(Action::WriteOutputs {
            path: p.clone(),
            outputs: vec![
                ("verdict", report.gate.verdict.as_str().replace(' ', "_")),
                ("report-json", abs("report.json")),
                ("report-html", abs("report.html")),
                ("report-md", abs("report.md")),
                ("regressions", regressions_output(report)),
                ("exit-code", code.to_string()),
            ],
        });
    }
    // a job summary is measured in bytes, and kept 1 KiB under GitHub's limit
    let summary = body::fit("", &md, &link, body::SUMMARY_MAX_BYTES - 1024, str::len);
    if let Some(p) = &env.step_summary {
        actions.push(Action::AppendSummary {
            path: p.clone(),
            body: summary.clone(),
        });
    }

    // what would be posted
    let key = sanitize::line(&opts.key, 100);
    let marker = format!("<!-- evalgate:{key} -->");
    let head = format!("{marker}\n");
    let comment_body = body::fit(&head, &md, &link, body::COMMENT_MAX, body::chars);
    let head_sha = pr.map(|p| p.head_sha.clone()).or_else(|| env.sha.clone());
    let check_name = match key.as_str() {
        "evalgate" => key.clone(),
        k => format!("evalgate ({k})"),
    };
    // the gate's conclusion for the exit code, in GitHub's terms
    let concl = match report.gate.conclusion(code) {
        Conclusion::Success => CheckRunConclusion::Success,
        Conclusion::Neutral => CheckRunConclusion::Neutral,
        Conclusion::Failure => CheckRunConclusion::Failure,
    };
    let badge = verdict_badge(report.gate.verdict);
    let summary_md = format!(
        "**{}**\n\n{fails_md}",
        sanitize::md(&report.gate.summary, 600)
    );
    let text = CheckText {
        title: format!("{badge}: {}", sanitize::line(&report.gate.summary, 160)),
        summary: body::fit("", &summary_md, "", body::CHECK_TEXT_MAX, body::chars),
        text: body::fit("", &md, "", body::CHECK_TEXT_MAX, body::chars),
    };
    // a file in the repository, or the config file evalgate reads by default
    let annotation_path = report
        .gate
        .baseline
        .as_deref()
        .and_then(sanitize::repo_path)
        .unwrap_or_else(|| "evalgate.toml".into());
    let annotations: Vec<Annotation> = plain_fails
        .into_iter()
        .map(|(title, message)| Annotation {
            path: annotation_path.clone(),
            title,
            message,
        })
        .collect();
    // whether a comment is wanted where none exists yet; `None` for no comment at all
    let new_comment = match opts.comment {
        CommentMode::Always => Some(true),
        CommentMode::OnChange => Some(changed(report)),
        CommentMode::OnFailure => Some(matches!(
            report.gate.verdict,
            Verdict::Fail | Verdict::Error
        )),
        CommentMode::Off => None,
    };

    if env.act && !opts.act_post {
        // a local run under act: never post (act may have filled in a real token); write what
        // would be posted, as the options say (no earlier comment exists in a dry run)
        let batch = |b: &[Annotation]| check_output(&text, b);
        let check_json = opts.check_run.then(|| {
            serde_json::to_string_pretty(&json!({
                "create": {"name": check_name, "head_sha": head_sha, "status": "in_progress"},
                "complete": {"status": "completed", "conclusion": concl, "output": batch(&[])},
                "annotation_batches": annotations.chunks(ANNOTATION_BATCH).map(batch).collect::<Vec<_>>(),
            }))
            .unwrap_or_default()
        });
        let contents = [
            (new_comment == Some(true)).then_some(comment_body),
            Some(summary),
            check_json,
        ];
        for (name, content) in DRY_RUN_FILES.into_iter().zip(contents) {
            let path = report_dir.join(name);
            actions.push(match content {
                Some(content) => Action::DryRunFile { path, content },
                None => Action::RemoveStaleFile { path },
            });
        }
        let dir = report_dir.display();
        actions.push(Action::Note(format!("act: dry run, nothing posted; the comment, check run and summary are in {dir} (set EVALGATE_ACT_POST=true to post)")));
        return actions;
    }

    let (Some(token), Some((owner, repo))) = (opts.token.as_deref(), env.owner_repo()) else {
        actions.push(Action::Note("no GitHub token or repository: the comment and check run are skipped (the job summary and outputs are written)".into()));
        return actions;
    };
    let comment = pr.zip(new_comment).map(|(pr, new)| Comment {
        pr: pr.number,
        marker,
        body: comment_body,
        new,
    });
    let check_run = head_sha.filter(|_| opts.check_run).map(|sha| CheckRun {
        name: check_name,
        head_sha: sha,
        conclusion: concl,
        output: text,
        annotation_batches: annotations
            .chunks(ANNOTATION_BATCH)
            .map(<[Annotation]>::to_vec)
            .collect(),
    });
    actions.push(Action::Post(Box::new(Post {
        github: Connection {
            api_url: env.api_url.clone(),
            token: token.to_string(),
            owner,
            repo,
            timeout: opts.timeout,
            deadline: opts.timeout.saturating_mul(super::DEADLINE_FACTOR),
        },
        comment,
        check_run,
    })));
    actions
}

#[cfg(test)]
mod tests;
