//! What a GitHub Actions runner (or `act`) tells a step through its environment.

use crate::infra::files::read_at_most;
use serde_json::Value;
use std::path::PathBuf;

/// The runner environment, read once.
#[derive(Debug, Clone, Default)]
pub struct GhEnv {
    /// `GITHUB_ACTIONS=true` (also set by act).
    pub actions: bool,
    /// `ACT=true`: a local run under nektos/act.
    pub act: bool,
    pub api_url: String,
    pub server_url: String,
    /// `owner/repo`.
    pub repository: Option<String>,
    pub event_path: Option<PathBuf>,
    pub sha: Option<String>,
    pub run_id: Option<String>,
    pub job: Option<String>,
    pub step_summary: Option<PathBuf>,
    pub output: Option<PathBuf>,
}

/// The largest event payload read, in bytes (GitHub caps a webhook's payload at 25 MB).
pub const MAX_EVENT: u64 = 32 << 20;

fn var(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

impl GhEnv {
    pub fn from_env() -> GhEnv {
        GhEnv {
            actions: var("GITHUB_ACTIONS").as_deref() == Some("true"),
            act: var("ACT").as_deref() == Some("true"),
            api_url: var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into()),
            server_url: var("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".into()),
            repository: var("GITHUB_REPOSITORY"),
            event_path: var("GITHUB_EVENT_PATH").map(PathBuf::from),
            sha: var("GITHUB_SHA"),
            run_id: var("GITHUB_RUN_ID"),
            job: var("GITHUB_JOB"),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            output: var("GITHUB_OUTPUT").map(PathBuf::from),
        }
    }

    /// `(owner, repo)`.
    pub fn owner_repo(&self) -> Option<(String, String)> {
        let (o, n) = self.repository.as_deref()?.split_once('/')?;
        Some((o.to_string(), n.to_string()))
    }

    /// The run's page, where the artifacts are listed.
    pub fn run_url(&self) -> Option<String> {
        Some(format!(
            "{}/{}/actions/runs/{}",
            self.server_url,
            self.repository.as_deref()?,
            self.run_id.as_deref()?
        ))
    }

    /// The event payload, if the runner gave one. It is read like every input: a regular file
    /// only (a FIFO would hang the run, `/dev/zero` never ends), at most [`MAX_EVENT`] bytes;
    /// a payload that cannot be read is an error naming `GITHUB_EVENT_PATH`.
    pub fn event(&self) -> Result<Option<Value>, String> {
        let Some(path) = self.event_path.as_ref() else {
            return Ok(None);
        };
        let what = || format!("GITHUB_EVENT_PATH {}", path.display());
        let bytes = read_at_most(path, MAX_EVENT)
            .map_err(|e| format!("{}: cannot read the event payload: {e}", what()))?;
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("{}: the event payload is not JSON: {e}", what()))
    }
}

/// The pull request a run is about.
#[derive(Debug, Clone, PartialEq)]
pub struct PullRequest {
    pub number: u64,
    /// The PR's head commit (not the merge commit in `GITHUB_SHA`).
    pub head_sha: String,
}

/// Reads the pull request from a `pull_request`-shaped event payload.
pub fn pull_request(event: &Value) -> Option<PullRequest> {
    let pr = event.get("pull_request")?;
    let number = pr
        .get("number")
        .and_then(Value::as_u64)
        .or_else(|| event.get("number").and_then(Value::as_u64))?;
    let head_sha = pr.pointer("/head/sha").and_then(Value::as_str)?.to_string();
    Some(PullRequest { number, head_sha })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_head_sha_comes_from_the_event_not_the_merge_commit() {
        let ev = json!({"action": "synchronize", "number": 7, "pull_request": {"number": 7, "head": {"sha": "abc123", "repo": {"full_name": "me/fork"}}, "base": {"sha": "def", "repo": {"full_name": "org/repo"}}}});
        assert_eq!(
            pull_request(&ev),
            Some(PullRequest {
                number: 7,
                head_sha: "abc123".into(),
            })
        );
        let push = json!({"ref": "refs/heads/main", "after": "abc"});
        assert_eq!(pull_request(&push), None);
    }
}
