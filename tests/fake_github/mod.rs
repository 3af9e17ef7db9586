//! A fake GitHub REST API on 127.0.0.1 for integration tests.
//!
//! It answers the few endpoints the PR publisher uses (issue comments, check runs) with GitHub's
//! real response shapes, so octocrab's strict models parse them, and it enforces GitHub's limits
//! and error bodies. Every request is recorded; tests read the resulting state back.
//!
//! The server runs on its own thread and runtime, so it keeps answering while a test blocks
//! (e.g. on `std::process::Command::output()` running the `evalgate` binary). Dropping the
//! `FakeGitHub` stops it.
//!
//! Deliberate GitHub behaviours worth knowing:
//! - `Link` headers point at `/repositories/{repo_id}/issues/{n}/comments?...&page=N`, not at the
//!   `/repos/{owner}/{repo}/...` path that was requested: follow them verbatim.
//! - `output.summary` / `output.text` are limited to 65535 *bytes* (GitHub counts bytes); a
//!   comment body to 65536 characters.
//! - More than 50 annotations gets GitHub's schema error (`Invalid request.\n\nNo more than 50
//!   items are allowed; 51 were supplied.`); annotations accumulate across PATCHes.
//! - `head_sha` must be 40 hex digits, else 422 `No commit found for SHA: ...`.
//! - A `conclusion` without `status` completes the run; `status: completed` needs a conclusion.
//! - A missing `User-Agent` is refused with 403, a missing token with 401 "Requires authentication".
//! - `GET /user` answers a user's token (a `bot_login` without `[bot]`) with the user; an
//!   installation token (`github-actions[bot]`, any `[bot]` login) gets 403 "Resource not
//!   accessible by integration", as on GitHub.
#![allow(dead_code)]

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Value, json};

const DOCS: &str = "https://docs.github.com/rest";
/// `github-actions[bot]`, the author of everything written with a workflow's `GITHUB_TOKEN`.
const ACTIONS_BOT: &str = "github-actions[bot]";
const ACTIONS_BOT_ID: u64 = 41_898_282;
const AVATARS: &str = "https://avatars.githubusercontent.com";
const RATE_LIMITED: (&str, &str) = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits",
);
const ACTIONS_APP_ID: u64 = 15368;
const REPO_BASE: u64 = 700_000_001;
const MAX_COMMENT_CHARS: usize = 65536;
const MAX_OUTPUT_BYTES: usize = 65535;
const MAX_ANNOTATIONS: usize = 50;
const STATUSES: &[&str] = &["queued", "in_progress", "completed"];
const CONCLUSIONS: &str = "action_required cancelled failure neutral success skipped timed_out";
const LEVELS: &[&str] = &["notice", "warning", "failure"];

/// How the fake starts. `FakeOptions::default()` accepts the token `ghs_fake_token`.
#[derive(Clone, Debug)]
pub struct FakeOptions {
    /// The only token accepted, as `Authorization: Bearer <token>` or `token <token>`.
    pub token: String,
    /// Author of the comments created through the API (a login ending in `[bot]` is a `Bot`).
    pub bot_login: String,
    /// Comments that exist before the test starts, oldest first (see [`FakeOptions::seed`]).
    pub comments: Vec<SeedComment>,
    /// `(pr_number, head_sha)`: check runs on `head_sha` list that PR in `pull_requests`.
    /// GitHub lists only same-repository PRs there, so leave it empty to mimic a fork PR.
    pub pull_requests: Vec<(u64, String)>,
    /// Answer every write with 403 "Resource not accessible by integration" (fork PR token).
    pub forbidden: bool,
    /// Answer every comment create/update with 422 "Validation Failed".
    pub comments_422: bool,
}

impl Default for FakeOptions {
    fn default() -> Self {
        FakeOptions {
            token: "ghs_fake_token".into(),
            bot_login: ACTIONS_BOT.into(),
            comments: Vec::new(),
            pull_requests: Vec::new(),
            forbidden: false,
            comments_422: false,
        }
    }
}

impl FakeOptions {
    /// Appends a pre-existing comment by `user` on issue/PR `issue` of `repo` ("owner/name").
    pub fn seed(mut self, repo: &str, issue: u64, user: &str, body: &str) -> Self {
        let (repo, user, body) = (repo.into(), user.into(), body.into());
        let seed = SeedComment {
            repo,
            issue,
            user,
            body,
        };
        self.comments.push(seed);
        self
    }
}

/// A comment that exists before the test starts.
#[derive(Clone, Debug)]
pub struct SeedComment {
    pub repo: String,
    pub issue: u64,
    pub user: String,
    pub body: String,
}

/// A failure injected with [`FakeGitHub::fail_next`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// 500 `{"message":"Server Error"}`; the request is not applied.
    ServerError,
    /// 502; the request is not applied.
    BadGateway,
    /// 429 secondary rate limit with `retry-after: <secs>`; the request is not applied.
    RateLimited { retry_after_secs: u64 },
    /// The request IS applied, but the client gets a 502 (as when GitHub times out).
    BadGatewayAfterWrite,
}

/// An issue/PR comment as the fake holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct FakeComment {
    pub id: u64,
    pub repo: String,
    pub issue: u64,
    pub user: String,
    pub body: String,
    pub created_at: String,
    pub updated_at: String,
}

/// A check run as the fake holds it; `annotations` accumulate across requests, as on GitHub.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FakeCheckRun {
    pub id: u64,
    pub repo: String,
    pub name: String,
    pub head_sha: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
    pub annotations: Vec<Value>,
    pub details_url: Option<String>,
    pub external_id: Option<String>,
    pub started_at: String,
    pub completed_at: Option<String>,
}

/// One request as received, with the status the fake answered.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// The JSON body, if there was one and it parsed.
    pub body: Option<Value>,
    pub status: u16,
}

/// The running fake. Stops when dropped.
pub struct FakeGitHub {
    base: String,
    state: Arc<Mutex<St>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl FakeGitHub {
    /// Binds `127.0.0.1:0` and serves on a dedicated thread; ready when this returns.
    pub async fn start(opts: FakeOptions) -> FakeGitHub {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind fake GitHub");
        listener.set_nonblocking(true).expect("nonblocking");
        let base = format!("http://{}", listener.local_addr().expect("local addr"));
        let state = Arc::new(Mutex::new(St::new(base.clone(), opts)));
        let app = Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::max(64 << 20))
            .with_state(state.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            rt.expect("runtime").block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                tokio::select! {
                    _ = axum::serve(listener, app) => {}
                    _ = stopped => {}
                }
            });
        });
        let stop = Some(stop);
        FakeGitHub { base, state, stop }
    }

    /// `http://127.0.0.1:PORT`, to use as the API base URL.
    pub fn url(&self) -> String {
        self.base.clone()
    }
    /// The accepted token.
    pub fn token(&self) -> String {
        self.st().opts.token.clone()
    }
    /// The comments of `issue` in `repo` ("owner/name"), oldest first.
    pub fn comments(&self, repo: &str, issue: u64) -> Vec<FakeComment> {
        self.st().thread(repo, issue).cloned().collect()
    }
    /// All check runs, in creation order.
    pub fn check_runs(&self) -> Vec<FakeCheckRun> {
        self.st().runs.clone()
    }
    /// Every request received so far, in order (including refused and failed ones).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.st().log.clone()
    }
    /// Turns the fork-PR read-only mode (403 on writes) on or off.
    pub fn set_forbidden(&self, on: bool) {
        self.st().opts.forbidden = on;
    }
    /// Turns 422 on comment writes on or off.
    pub fn set_comments_422(&self, on: bool) {
        self.st().opts.comments_422 = on;
    }
    /// Makes the next `times` requests whose method is `method` ("*" for any) and whose path
    /// contains `path_contains` fail with `fault`.
    pub fn fail_next(&self, method: &str, path_contains: &str, times: usize, fault: Fault) {
        let method = method.to_ascii_uppercase();
        let rule = (method, path_contains.to_string(), times, fault);
        self.st().faults.push(rule);
    }

    fn st(&self) -> MutexGuard<'_, St> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The fake's state, behind one mutex; every request is handled synchronously under it.
struct St {
    base: String,
    opts: FakeOptions,
    repos: Vec<String>,
    comments: Vec<FakeComment>,
    runs: Vec<FakeCheckRun>,
    log: Vec<RecordedRequest>,
    faults: Vec<(String, String, usize, Fault)>,
    next_comment: u64,
    next_run: u64,
    reset: u64,
}

/// `Err` is a refusal (4xx) answered as is.
type Refusable = Result<Reply, Reply>;

/// A response before the common headers are added.
struct Reply {
    status: u16,
    body: Option<Value>,
    headers: Vec<(&'static str, String)>,
}

fn reply(status: u16, body: Value) -> Reply {
    let (body, headers) = (Some(body), Vec::new());
    Reply {
        status,
        body,
        headers,
    }
}
fn error(status: u16, message: &str, doc: &str) -> Reply {
    let code = status.to_string();
    let body = json!({"message": message, "documentation_url": doc, "status": code});
    reply(status, body)
}
/// GitHub's JSON-schema error (missing or malformed parameters).
fn invalid(doc: &str, detail: &str) -> Reply {
    error(422, &format!("Invalid request.\n\n{detail}"), doc)
}
/// GitHub's model validation error.
fn validation(doc: &str, resource: &str, field: &str, code: &str, message: &str) -> Reply {
    let e = json!({"resource": resource, "code": code, "field": field, "message": message});
    let body = json!({"message": "Validation Failed", "errors": [e],
        "documentation_url": doc, "status": "422"});
    reply(422, body)
}

enum Route {
    List(String, u64),
    Create(String, u64),
    GetComment(String, u64),
    EditComment(String, u64),
    DeleteComment(String, u64),
    CreateRun(String),
    GetRun(String, u64),
    EditRun(String, u64),
    /// `GET /user`: the token's own user.
    User,
}

impl Route {
    fn doc(&self) -> String {
        let anchor = match self {
            Route::List(..) => "issues/comments#list-issue-comments",
            Route::Create(..) => "issues/comments#create-an-issue-comment",
            Route::GetComment(..) => "issues/comments#get-an-issue-comment",
            Route::EditComment(..) => "issues/comments#update-an-issue-comment",
            Route::DeleteComment(..) => "issues/comments#delete-an-issue-comment",
            Route::CreateRun(..) => "checks/runs#create-a-check-run",
            Route::GetRun(..) => "checks/runs#get-a-check-run",
            Route::EditRun(..) => "checks/runs#update-a-check-run",
            Route::User => "users/users#get-the-authenticated-user",
        };
        format!("{DOCS}/{anchor}")
    }
}

async fn handle(
    State(state): State<Arc<Mutex<St>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut st = state.lock().unwrap_or_else(PoisonError::into_inner);
    let r = st.handle(&method, &uri, &headers, &body);
    st.log.push(RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_string(),
        query: uri.query().map(str::to_owned),
        body: serde_json::from_slice(&body).ok(),
        status: r.status,
    });
    st.render(r)
}

impl St {
    fn new(base: String, mut opts: FakeOptions) -> St {
        let now = now();
        let seeds = std::mem::take(&mut opts.comments);
        let mut st = St {
            base,
            opts,
            repos: Vec::new(),
            comments: Vec::new(),
            runs: Vec::new(),
            log: Vec::new(),
            faults: Vec::new(),
            next_comment: 2_900_000_000,
            next_run: 21_000_000_000,
            reset: now + 3600,
        };
        let n = seeds.len() as u64;
        for (i, s) in seeds.into_iter().enumerate() {
            let at = iso(now - (n - i as u64) * 60);
            st.add_comment(s.repo, s.issue, s.user, s.body, at);
        }
        st
    }

    fn add_comment(&mut self, repo: String, issue: u64, user: String, body: String, at: String) {
        self.repo_id(&repo);
        self.next_comment += 1;
        let (id, created_at, updated_at) = (self.next_comment, at.clone(), at);
        let c = FakeComment {
            id,
            repo,
            issue,
            user,
            body,
            created_at,
            updated_at,
        };
        self.comments.push(c);
    }

    fn repo_id(&mut self, repo: &str) -> u64 {
        if !self.repos.iter().any(|r| r == repo) {
            self.repos.push(repo.to_string());
        }
        REPO_BASE + self.repos.iter().position(|r| r == repo).unwrap_or(0) as u64
    }

    fn comment_at(&self, repo: &str, id: u64) -> Option<usize> {
        (self.comments.iter()).position(|c| c.id == id && c.repo == repo)
    }

    fn run_at(&self, repo: &str, id: u64) -> Option<usize> {
        self.runs.iter().position(|r| r.id == id && r.repo == repo)
    }

    fn thread(&self, repo: &str, issue: u64) -> impl Iterator<Item = &FakeComment> {
        (self.comments.iter()).filter(move |c| c.repo == repo && c.issue == issue)
    }

    fn route(&self, method: &Method, path: &str) -> Option<Route> {
        let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let num = |s: &str| s.parse::<u64>().ok();
        let rp = |o: &str, r: &str| format!("{o}/{r}");
        Some(match (method.as_str(), segs.as_slice()) {
            ("GET", ["repos", o, r, "issues", n, "comments"]) => Route::List(rp(o, r), num(n)?),
            ("GET", ["repositories", id, "issues", n, "comments"]) => {
                let repo = self.repos.get(num(id)?.checked_sub(REPO_BASE)? as usize)?;
                Route::List(repo.clone(), num(n)?)
            }
            ("POST", ["repos", o, r, "issues", n, "comments"]) => Route::Create(rp(o, r), num(n)?),
            ("GET", ["repos", o, r, "issues", "comments", c]) => {
                Route::GetComment(rp(o, r), num(c)?)
            }
            ("PATCH" | "POST", ["repos", o, r, "issues", "comments", c]) => {
                Route::EditComment(rp(o, r), num(c)?)
            }
            ("DELETE", ["repos", o, r, "issues", "comments", c]) => {
                Route::DeleteComment(rp(o, r), num(c)?)
            }
            ("POST", ["repos", o, r, "check-runs"]) => Route::CreateRun(rp(o, r)),
            ("GET", ["repos", o, r, "check-runs", c]) => Route::GetRun(rp(o, r), num(c)?),
            ("PATCH", ["repos", o, r, "check-runs", c]) => Route::EditRun(rp(o, r), num(c)?),
            ("GET", ["user"]) => Route::User,
            _ => return None,
        })
    }

    /// Gatekeeping shared by every endpoint, then the endpoint itself.
    fn handle(&mut self, method: &Method, uri: &Uri, headers: &HeaderMap, raw: &[u8]) -> Reply {
        if !headers.contains_key("user-agent") {
            let msg = "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required).";
            return error(403, msg, DOCS);
        }
        let Some(auth) = headers.get("authorization").and_then(|v| v.to_str().ok()) else {
            return error(401, "Requires authentication", DOCS);
        };
        let token = auth.split_once(' ').and_then(|(scheme, t)| {
            let ok = scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("token");
            ok.then(|| t.trim())
        });
        if token != Some(self.opts.token.as_str()) {
            return error(401, "Bad credentials", DOCS);
        }
        let Some(route) = self.route(method, uri.path()) else {
            return error(404, "Not Found", DOCS);
        };
        let doc = route.doc();
        let (m, path) = (method.as_str(), uri.path());
        let rule = (self.faults.iter_mut())
            .find(|f| f.2 > 0 && (f.0 == "*" || f.0 == m) && path.contains(f.1.as_str()));
        let fault = rule.map(|f| (f.2 -= 1, f.3).1);
        let server_error = |status| reply(status, json!({"message": "Server Error"}));
        match fault {
            Some(Fault::ServerError) => return server_error(500),
            Some(Fault::BadGateway) => return server_error(502),
            Some(Fault::RateLimited { retry_after_secs }) => {
                let mut r = error(429, RATE_LIMITED.0, RATE_LIMITED.1);
                let secs = retry_after_secs.to_string();
                r.headers.push(("retry-after", secs));
                return r;
            }
            _ => {}
        }
        if method != Method::GET && self.opts.forbidden {
            return error(403, "Resource not accessible by integration", &doc);
        }
        let body = match serde_json::from_slice::<Value>(raw) {
            _ if raw.is_empty() => json!({}),
            Ok(v @ Value::Object(_)) => v,
            _ => return error(400, "Problems parsing JSON", &doc),
        };
        let r = self.serve(route, &doc, &body, uri.query());
        let r = r.unwrap_or_else(|refused| refused);
        match fault {
            Some(Fault::BadGatewayAfterWrite) if r.status < 300 => server_error(502),
            _ => r,
        }
    }

    fn serve(&mut self, route: Route, doc: &str, b: &Value, q: Option<&str>) -> Refusable {
        let not_found = || error(404, "Not Found", doc);
        let now = iso(now());
        Ok(match route {
            Route::List(repo, issue) => self.list(&repo, issue, q),
            Route::Create(repo, issue) => {
                let text = self.comment_body(b, doc)?;
                let user = self.opts.bot_login.clone();
                self.add_comment(repo, issue, user, text, now);
                let j = self.comment_json(self.comments.last().expect("just added"));
                let location = j["url"].as_str().unwrap_or_default().to_string();
                let mut r = reply(201, j);
                r.headers.push(("location", location));
                r
            }
            Route::GetComment(repo, id) => {
                let i = self.comment_at(&repo, id).ok_or_else(not_found)?;
                reply(200, self.comment_json(&self.comments[i]))
            }
            Route::EditComment(repo, id) => {
                let text = self.comment_body(b, doc)?;
                let i = self.comment_at(&repo, id).ok_or_else(not_found)?;
                (self.comments[i].body, self.comments[i].updated_at) = (text, now);
                reply(200, self.comment_json(&self.comments[i]))
            }
            Route::DeleteComment(repo, id) => {
                let i = self.comment_at(&repo, id).ok_or_else(not_found)?;
                self.comments.remove(i);
                let mut r = reply(204, Value::Null);
                r.body = None;
                r
            }
            Route::CreateRun(repo) => {
                require(doc, b, &["head_sha", "name"])?;
                let sha = b["head_sha"].as_str().unwrap_or_default().to_string();
                if sha.len() != 40 || !sha.chars().all(|c| c.is_ascii_hexdigit()) {
                    return Err(error(422, &format!("No commit found for SHA: {sha}"), doc));
                }
                validate_run(b, None, doc)?;
                self.repo_id(&repo);
                self.next_run += 1;
                let mut run = FakeCheckRun::default();
                (run.id, run.repo, run.head_sha) = (self.next_run, repo, sha);
                (run.status, run.started_at) = ("queued".into(), now.clone());
                apply_run(&mut run, b, &now);
                self.runs.push(run);
                reply(201, self.run_json(self.runs.last().expect("just added")))
            }
            Route::GetRun(repo, id) => {
                let i = self.run_at(&repo, id).ok_or_else(not_found)?;
                reply(200, self.run_json(&self.runs[i]))
            }
            Route::EditRun(repo, id) => {
                let i = self.run_at(&repo, id).ok_or_else(not_found)?;
                validate_run(b, self.runs[i].conclusion.as_deref(), doc)?;
                apply_run(&mut self.runs[i], b, &now);
                reply(200, self.run_json(&self.runs[i]))
            }
            Route::User if self.opts.bot_login.ends_with("[bot]") => {
                return Err(error(403, "Resource not accessible by integration", doc));
            }
            Route::User => {
                // the `private-user` shape: the simple user plus the profile
                let mut u = author(&self.opts.bot_login);
                let profile = json!({
                    "name": null, "company": null, "blog": "", "location": null, "email": null,
                    "hireable": null, "bio": null, "twitter_username": null,
                    "notification_email": null, "public_repos": 2, "public_gists": 0,
                    "followers": 0, "following": 0, "created_at": "2020-01-01T00:00:00Z",
                    "updated_at": now, "private_gists": 0, "total_private_repos": 0,
                    "owned_private_repos": 0, "disk_usage": 0, "collaborators": 0,
                    "two_factor_authentication": true,
                    "plan": {"name": "free", "space": 976562499, "collaborators": 0,
                        "private_repos": 10000},
                });
                for (k, v) in profile.as_object().expect("an object") {
                    u[k] = v.clone();
                }
                reply(200, u)
            }
        })
    }

    fn comment_body(&self, b: &Value, doc: &str) -> Result<String, Reply> {
        require(doc, b, &["body"])?;
        let Some(text) = b["body"].as_str().map(str::to_owned) else {
            let msg = format!("For 'body', {} is not a string.", b["body"]);
            return Err(invalid(doc, &msg));
        };
        if self.opts.comments_422 || text.chars().count() > MAX_COMMENT_CHARS {
            let msg = format!("Body is too long (maximum is {MAX_COMMENT_CHARS} characters)");
            let refusal = validation(doc, "IssueComment", "data", "unprocessable", &msg);
            return Err(refusal);
        }
        Ok(text)
    }

    /// One page of an issue's comments, with GitHub's `Link` header.
    fn list(&mut self, repo: &str, issue: u64, query: Option<&str>) -> Reply {
        let params: Vec<(&str, &str)> = (query.unwrap_or("").split('&'))
            .filter_map(|p| p.split_once('='))
            .collect();
        let get = |k| {
            params
                .iter()
                .find(|p| p.0 == k)
                .and_then(|p| p.1.parse().ok())
        };
        let per = get("per_page").filter(|&n| n > 0).unwrap_or(30).min(100);
        let page = get("page").filter(|&n| n > 0).unwrap_or(1);
        let rid = self.repo_id(repo);
        let all: Vec<&FakeComment> = self.thread(repo, issue).collect();
        let last = all.len().div_ceil(per).max(1);
        let items = (all.iter().skip((page - 1) * per).take(per)).map(|c| self.comment_json(c));
        let mut r = reply(200, Value::Array(items.collect()));
        let keep: String = (params.iter().filter(|p| p.0 != "page"))
            .map(|(k, v)| format!("{k}={v}&"))
            .collect();
        let url = format!("{}/repositories/{rid}/issues/{issue}/comments", self.base);
        let link = |p: usize, rel| format!("<{url}?{keep}page={p}>; rel=\"{rel}\"");
        let mut links = Vec::new();
        if page > 1 {
            links.push(link(page.min(last + 1) - 1, "prev"));
        }
        if page < last {
            links.extend([link(page + 1, "next"), link(last, "last")]);
        }
        if page > 1 {
            links.push(link(1, "first"));
        }
        if !links.is_empty() {
            r.headers.push(("link", links.join(", ")));
        }
        r
    }

    fn comment_json(&self, c: &FakeComment) -> Value {
        let url = format!("{}/repos/{}/issues/comments/{}", self.base, c.repo, c.id);
        let user = author(&c.user);
        let assoc = if user["type"] == "Bot" {
            "NONE"
        } else {
            "CONTRIBUTOR"
        };
        json!({
            "url": url,
            "html_url": format!("https://github.com/{}/pull/{}#issuecomment-{}", c.repo, c.issue, c.id),
            "issue_url": format!("{}/repos/{}/issues/{}", self.base, c.repo, c.issue),
            "id": c.id,
            "node_id": node_id("IssueComment", c.id),
            "user": user,
            "created_at": c.created_at,
            "updated_at": c.updated_at,
            "author_association": assoc,
            "body": c.body,
            "reactions": {"url": format!("{url}/reactions"), "total_count": 0, "+1": 0, "-1": 0,
                "laugh": 0, "hooray": 0, "confused": 0, "heart": 0, "rocket": 0, "eyes": 0},
            "performed_via_github_app": null,
        })
    }

    fn run_json(&self, r: &FakeCheckRun) -> Value {
        let api = format!("{}/repos/{}/check-runs/{}", self.base, r.repo, r.id);
        let html = format!("https://github.com/{}/runs/{}", r.repo, r.id);
        let rid = REPO_BASE + self.repos.iter().position(|x| *x == r.repo).unwrap_or(0) as u64;
        let repo = json!({"id": rid, "url": format!("{}/repos/{}", self.base, r.repo),
            "name": r.repo.split('/').nth(1).unwrap_or_default()});
        let pr = |n: u64, sha: &str| {
            json!({
                "url": format!("{}/repos/{}/pulls/{n}", self.base, r.repo),
                "id": 1_900_000_000 + n,
                "number": n,
                "head": {"ref": format!("pr-{n}"), "sha": sha, "repo": repo},
                "base": {"ref": "main", "sha": format!("{n:040x}"), "repo": repo},
            })
        };
        let prs = self.opts.pull_requests.iter().filter(|p| p.1 == r.head_sha);
        let prs: Vec<Value> = prs.map(|(n, sha)| pr(*n, sha)).collect();
        let suite = self
            .runs
            .iter()
            .find(|x| (&x.repo, &x.head_sha) == (&r.repo, &r.head_sha));
        json!({
            "id": r.id,
            "name": r.name,
            "node_id": node_id("CheckRun", r.id),
            "head_sha": r.head_sha,
            "external_id": r.external_id.clone().unwrap_or_default(),
            "url": api,
            "html_url": html,
            "details_url": r.details_url.clone().unwrap_or_else(|| html.clone()),
            "status": r.status,
            "conclusion": r.conclusion,
            "started_at": r.started_at,
            "completed_at": r.completed_at,
            "output": {"title": r.title, "summary": r.summary, "text": r.text,
                "annotations_count": r.annotations.len(), "annotations_url": format!("{api}/annotations")},
            "check_suite": {"id": suite.map_or(r.id, |s| s.id) + 10_000_000_000u64},
            "app": actions_app(),
            "pull_requests": prs,
        })
    }

    /// Adds the headers GitHub sends on every response.
    fn render(&self, r: Reply) -> Response {
        let status = StatusCode::from_u16(r.status).expect("valid status");
        let mut resp = match &r.body {
            Some(v) => (status, v.to_string()).into_response(),
            None => status.into_response(),
        };
        let (n, reset) = (self.log.len() as u64, self.reset);
        let used = n.min(5000);
        let mut add = vec![
            ("x-github-api-version-selected", "2022-11-28".into()),
            ("x-github-media-type", "github.v3; format=json".into()),
            ("x-github-request-id", format!("FA4E:{n:06X}:{reset:08X}")),
            ("x-ratelimit-limit", "5000".into()),
            ("x-ratelimit-remaining", (5000 - used).to_string()),
            ("x-ratelimit-reset", self.reset.to_string()),
            ("x-ratelimit-used", used.to_string()),
            ("x-ratelimit-resource", "core".into()),
        ];
        if r.body.is_some() {
            add.push(("content-type", "application/json; charset=utf-8".into()));
        }
        for (k, v) in add.into_iter().chain(r.headers) {
            let v = HeaderValue::from_str(&v).expect("ascii header");
            resp.headers_mut().insert(HeaderName::from_static(k), v);
        }
        resp
    }
}

/// GitHub's rules for a check run create/update body. `current` is the run's conclusion so far.
fn validate_run(b: &Value, current: Option<&str>, doc: &str) -> Result<(), Reply> {
    let (status, conclusion) = (b["status"].as_str(), b["conclusion"].as_str());
    one_of(doc, "status", status, STATUSES)?;
    if let Some(c) = conclusion.filter(|c| !CONCLUSIONS.split(' ').any(|x| x == *c)) {
        let msg = format!("\"{c}\" is not a valid conclusion");
        return Err(validation(doc, "CheckRun", "conclusion", "invalid", &msg));
    }
    if conclusion.is_some() && status.is_some_and(|s| s != "completed") {
        let msg = "conclusion can only be set when status is completed";
        return Err(validation(doc, "CheckRun", "conclusion", "invalid", msg));
    }
    let completing = status == Some("completed") || b.get("completed_at").is_some();
    if completing && conclusion.or(current).is_none() {
        let msg = "conclusion is required when status is completed";
        return Err(validation(
            doc,
            "CheckRun",
            "conclusion",
            "missing_field",
            msg,
        ));
    }
    let Some(out) = b.get("output") else {
        return Ok(());
    };
    require(doc, out, &["summary", "title"])?;
    for field in ["summary", "text"] {
        if out[field]
            .as_str()
            .is_some_and(|s| s.len() > MAX_OUTPUT_BYTES)
        {
            let msg = format!("{field} exceeds a maximum bytesize of {MAX_OUTPUT_BYTES}");
            return Err(validation(doc, "CheckRun", field, "custom", &msg));
        }
    }
    let annotations = out["annotations"].as_array().map_or(&[][..], |a| a);
    if annotations.len() > MAX_ANNOTATIONS {
        let n = annotations.len();
        let msg = format!("No more than {MAX_ANNOTATIONS} items are allowed; {n} were supplied.");
        return Err(invalid(doc, &msg));
    }
    for a in annotations {
        require(
            doc,
            a,
            &[
                "annotation_level",
                "end_line",
                "message",
                "path",
                "start_line",
            ],
        )?;
        one_of(
            doc,
            "annotation_level",
            a["annotation_level"].as_str(),
            LEVELS,
        )?;
    }
    Ok(())
}

/// GitHub's schema error when some of `keys` are missing from `v`.
fn require(doc: &str, v: &Value, keys: &[&str]) -> Result<(), Reply> {
    let missing: Vec<String> = (keys.iter().filter(|k| v[**k].is_null()))
        .map(|k| format!("\"{k}\""))
        .collect();
    let verb = if missing.len() == 1 {
        "wasn't"
    } else {
        "weren't"
    };
    let msg = format!("{} {verb} supplied.", missing.join(", "));
    if missing.is_empty() {
        Ok(())
    } else {
        Err(invalid(doc, &msg))
    }
}

/// GitHub's schema error when `value` is given but not one of `allowed`.
fn one_of(doc: &str, field: &str, value: Option<&str>, allowed: &[&str]) -> Result<(), Reply> {
    let Some(v) = value.filter(|v| !allowed.contains(v)) else {
        return Ok(());
    };
    let msg = format!("For '{field}', \"{v}\" is not one of {allowed:?}.");
    Err(invalid(doc, &msg))
}

/// Applies a validated create/update body; annotations are appended, output fields replaced.
fn apply_run(run: &mut FakeCheckRun, b: &Value, now: &str) {
    let s = |k: &str| b.get(k).and_then(Value::as_str).map(str::to_owned);
    run.name = s("name").unwrap_or(std::mem::take(&mut run.name));
    run.details_url = s("details_url").or(run.details_url.take());
    run.external_id = s("external_id").or(run.external_id.take());
    run.started_at = s("started_at").unwrap_or(std::mem::take(&mut run.started_at));
    run.status = s("status").unwrap_or(std::mem::take(&mut run.status));
    if let Some(c) = s("conclusion") {
        (run.conclusion, run.status) = (Some(c), "completed".into());
    }
    run.completed_at = s("completed_at").or(run.completed_at.take());
    if run.status == "completed" && run.completed_at.is_none() {
        run.completed_at = Some(now.to_string());
    }
    if let Some(out) = b.get("output") {
        let f = |k: &str| out.get(k).and_then(Value::as_str).map(str::to_owned);
        (run.title, run.summary) = (f("title"), f("summary"));
        run.text = f("text").or(run.text.take());
        if let Some(a) = out.get("annotations").and_then(Value::as_array) {
            run.annotations.extend(a.iter().cloned());
        }
    }
}

/// A full `simple-user` object for `login`.
fn author(login: &str) -> Value {
    if login == ACTIONS_BOT {
        return user_json(login, ACTIONS_BOT_ID, "Bot");
    }
    let fnv = |h: u64, b: u8| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    let id = 1_000_000 + login.bytes().fold(0xcbf2_9ce4_8422_2325, fnv) % 90_000_000;
    let kind = if login.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    user_json(login, id, kind)
}

fn user_json(login: &str, id: u64, kind: &str) -> Value {
    let api = login.replace('[', "%5B").replace(']', "%5D");
    let api = format!("https://api.github.com/users/{api}");
    let avatar = match (kind, id) {
        ("Bot", ACTIONS_BOT_ID) => format!("{AVATARS}/in/{ACTIONS_APP_ID}?v=4"),
        ("Bot", _) => format!("{AVATARS}/in/{id}?v=4"),
        _ => format!("{AVATARS}/u/{id}?v=4"),
    };
    let html = match login.strip_suffix("[bot]") {
        Some(slug) => format!("https://github.com/apps/{slug}"),
        None => format!("https://github.com/{login}"),
    };
    json!({
        "login": login, "id": id, "node_id": node_id(kind, id), "avatar_url": avatar,
        "gravatar_id": "", "url": api, "html_url": html,
        "followers_url": format!("{api}/followers"),
        "following_url": format!("{api}/following{{/other_user}}"),
        "gists_url": format!("{api}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/subscriptions"),
        "organizations_url": format!("{api}/orgs"),
        "repos_url": format!("{api}/repos"),
        "events_url": format!("{api}/events{{/privacy}}"),
        "received_events_url": format!("{api}/received_events"),
        "type": kind, "user_view_type": "public", "site_admin": false,
    })
}

/// The "GitHub Actions" app that owns check runs created with a `GITHUB_TOKEN`.
fn actions_app() -> Value {
    json!({
        "id": ACTIONS_APP_ID, "slug": "github-actions", "node_id": node_id("App", ACTIONS_APP_ID),
        "owner": user_json("github", 9919, "Organization"),
        "name": "GitHub Actions", "description": "Automate your workflow from idea to production",
        "external_url": "https://help.github.com/en/actions",
        "html_url": "https://github.com/apps/github-actions",
        "created_at": "2018-07-30T09:30:17Z", "updated_at": "2019-12-10T19:04:12Z",
        "permissions": {"actions": "write", "checks": "write", "contents": "write", "issues": "write",
            "metadata": "read", "pull_requests": "write", "statuses": "write"},
        "events": ["check_run", "check_suite", "pull_request", "push", "workflow_dispatch"],
    })
}

/// GitHub's legacy global node id: base64 of `0<len>:<Type><id>`.
fn node_id(kind: &str, id: u64) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("0{}:{kind}{id}", kind.len()))
}

fn now() -> u64 {
    let elapsed = SystemTime::now().duration_since(UNIX_EPOCH);
    elapsed.map_or(0, |d| d.as_secs())
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (Hinnant's civil-from-days).
fn iso(t: u64) -> String {
    let (z, rem) = ((t / 86_400) as i64 + 719_468, t % 86_400);
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
}
