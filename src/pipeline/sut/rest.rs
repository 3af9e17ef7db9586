//! `rest`: a plain HTTP search endpoint, e.g. mcpproxy's `GET /api/v1/index/search?q=&limit=`.
//! The JSON body is mapped to ranked ids with a jq filter, like the MCP adapter.

use super::mapping::{IdStyle, MCPPROXY_REST_SEARCH_FILTER, Mapper};
use super::spec::RestFile;
use super::{Facts, Ranked, Retriever, SearchRequest, SutError};
use crate::infra::http::{BodyError, MAX_ANSWER, read_body};
use crate::infra::mcp::{io_cause, readable};
use crate::infra::secrets::redact_url;
use crate::infra::text::Text;
use crate::infra::text::sanitize::clip;
use anyhow::Context;
use async_trait::async_trait;
use std::time::{Duration, Instant};

/// A REST search endpoint, as `[sut.rest]` (or `--url`) gives it.
pub struct RestSearch {
    /// Full search URL, e.g. `http://127.0.0.1:8080/api/v1/index/search`.
    url: String,
    query_param: String,
    limit_param: Option<String>,
    mapper: Mapper,
    timeout: Duration,
    client: reqwest::Client,
    pub(crate) facts: Facts,
}

impl RestSearch {
    /// `[sut.rest]` resolved, mcpproxy's `/api/v1/index/search` by default; an error is bad
    /// input.
    pub fn new(name: &str, r: &RestFile, timeout: Duration) -> anyhow::Result<RestSearch> {
        let url = r.url.clone().context("--sut rest needs --url URL (e.g. http://127.0.0.1:8080/api/v1/index/search) or [sut.rest] url")?;
        let filter = r.filter.as_deref().unwrap_or(MCPPROXY_REST_SEARCH_FILTER);
        let mapper = Mapper::new(filter, r.id_style.unwrap_or(IdStyle::Auto))?;
        let mut headers = reqwest::header::HeaderMap::new();
        for (k, v) in &r.headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())?;
            headers.insert(name, reqwest::header::HeaderValue::from_str(v)?);
        }
        // redirects only within the configured origin: the headers (often a credential) and
        // the query never go to another host, and no Referer carries them
        let policy = reqwest::redirect::Policy::custom(|a| {
            let origin = a.previous().first().map(reqwest::Url::origin);
            let to = redact_url(a.url().as_str());
            match (origin == Some(a.url().origin()), a.previous().len()) {
                (false, _) => a.error(format!(
                    "redirected to another origin ({to}): the configured headers are sent to [sut.rest] url's origin only; set url to the final address"
                )),
                (true, 10..) => a.error("more than 10 redirects"),
                (true, _) => a.follow(),
            }
        });
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(timeout)
            .redirect(policy)
            .referer(false)
            .build()?;
        // an empty name sends no limit
        let limit = r.limit_param.clone().unwrap_or_else(|| "limit".into());
        let limit_param = Some(limit).filter(|l| !l.is_empty());
        Ok(RestSearch {
            url,
            query_param: r.query_param.clone().unwrap_or_else(|| "q".into()),
            facts: Facts {
                sends_limit: limit_param.is_some(),
                ..Facts::named(name)
            },
            limit_param,
            mapper,
            timeout,
            client,
        })
    }

    /// A request that failed twice: no answer in time is a `timeout`, nothing accepting
    /// connections is `unreachable` (nothing ran there), anything else broke on the way and is
    /// a crash; said in words, without the whole query URL or the HTTP stack's wrappers.
    fn transport_error(&self, req: &SearchRequest<'_>, e: &reqwest::Error) -> SutError {
        let system = self.facts.name.clone();
        let url = redact_url(&self.url);
        let why = io_cause(e)
            .or_else(|| std::error::Error::source(e).map(readable))
            .unwrap_or_else(|| e.to_string());
        let query = format!("query {:?}", req.query_id);
        if e.is_timeout() {
            // no answer in time is a timeout, not a crash
            let context = format!("{query}: the request to {url} (after one retry)");
            SutError::timeout(system, self.timeout.as_secs_f64(), context)
        } else if e.is_connect() {
            SutError::unreachable(system, format!("could not connect to {url}: {why}"))
        } else {
            let detail = format!("{query}: the request to {url} failed: {why} (after one retry)");
            SutError::crashed(system, detail)
        }
    }

    async fn get(&self, req: &SearchRequest<'_>) -> Result<reqwest::Response, reqwest::Error> {
        let mut q: Vec<(String, String)> = vec![(self.query_param.clone(), req.text.to_string())];
        if let Some(l) = &self.limit_param {
            q.push((l.clone(), req.limit.to_string()));
        }
        self.client.get(&self.url).query(&q).send().await
    }
}

#[async_trait]
impl Retriever for RestSearch {
    fn facts(&self) -> &Facts {
        &self.facts
    }

    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError> {
        let system = self.facts.name.clone();
        let query = format!("query {:?}", req.query_id);
        let secs = self.timeout.as_secs_f64();
        let start = Instant::now();
        let resp = match self.get(&req).await {
            Ok(r) => r,
            // a transport error is retried once
            Err(e) if e.is_connect() || e.is_request() => self
                .get(&req)
                .await
                .map_err(|e| self.transport_error(&req, &e))?,
            Err(e) if e.is_timeout() => return Err(SutError::timeout(system, secs, query)),
            // a redirect the policy above refused: the reason is the error's source
            Err(e) if e.is_redirect() => {
                let why = std::error::Error::source(&e).map(ToString::to_string);
                let why = why.unwrap_or_else(|| e.to_string());
                return Err(SutError::other(system, format!("{query}: {why}")));
            }
            Err(e) => return Err(SutError::other(system, format!("{query}: {e}"))),
        };
        let status = resp.status();
        let body = read_body(resp, MAX_ANSWER).await.map_err(|e| match e {
            BodyError::Read(e) if e.is_timeout() => {
                SutError::timeout(&system, secs, format!("{query}: reading the body"))
            }
            BodyError::Read(e) => {
                SutError::crashed(&system, format!("{query}: reading the body: {e}"))
            }
            e @ BodyError::TooLarge(_) => SutError::garbage(&system, format!("{query}: {e}")),
        })?;
        let latency = start.elapsed();
        tracing::trace!("{query}: HTTP {status}, answer {body}");
        if !status.is_success() {
            let detail = format!("{query}: HTTP {status}: {}", clip(&body, 300));
            return Err(SutError::other(system, detail));
        }
        let v: serde_json::Value = serde_json::from_str(&body).map_err(|e| {
            let detail = format!("{query}: the body is not JSON ({e}): {}", clip(&body, 200));
            SutError::garbage(&system, detail)
        })?;
        let ids = self
            .mapper
            .map_payload(&v)
            .map_err(|e| SutError::garbage(system, format!("{query}: {e}")))?;
        let ids = ids.into_iter().map(Text::from).collect();
        Ok(Ranked { ids, latency })
    }
}
