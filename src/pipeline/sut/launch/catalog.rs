//! The catalog guarantee: before any number, establish that the system under test can see the
//! whole frozen corpus, and that its answers have stopped changing.
//!
//! Signals, by what the system offers:
//! * `mcpproxy`: its REST API (`/api/v1/servers`, then `/api/v1/tools`), for launched proxies
//!   of mcpproxy's family (handled in [`super::start`]).
//! * `tools-list`: the system's own MCP `tools/list`, for proxies that expose upstream tools,
//!   mapped to `server:tool` ids by a jq filter.
//! * `search`: a coverage probe through the search itself — every corpus tool is searched by its
//!   own name and description, round after round, until every tool has appeared in some answer
//!   and a fixed sample of answers is the same twice in a row. Works for any system.
//!
//! A tool that never appears is named (and its server, when none of the server's tools did).
//! An incomplete catalog is a failure (exit 3) unless the user allows a partial one, in which
//! case the coverage travels with the report.

use super::spec::CatalogSpec;
use crate::infra::text::Text;
use crate::infra::text::sanitize::clip;
use crate::pipeline::dataset::{Corpus, Tool};
use crate::pipeline::sut::mapping::{Mapper, normalize_id};
use crate::pipeline::sut::mcp_search::McpSearch;
use crate::pipeline::sut::{Retriever, SearchRequest, SutError};
use futures::StreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Which signal establishes the catalog (`[sut.catalog] check`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CatalogCheck {
    /// mcpproxy's REST API for launched proxies in its config format, else the search probe.
    #[default]
    Auto,
    Mcpproxy,
    ToolsList,
    Search,
}

/// What the catalog check established; travels with the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Coverage {
    /// `mcpproxy`, `tools-list` or `search`.
    pub method: String,
    /// Corpus tools served to the system.
    pub served: usize,
    /// Of those, how many the system showed.
    pub seen: usize,
    /// Up to 20 tools never shown (`server:tool`).
    pub missing: Vec<String>,
    /// Servers none of whose tools were shown.
    pub missing_servers: Vec<String>,
    /// Probe rounds (search) or listings (tools-list) until the answer.
    pub rounds: usize,
    /// Time the catalog check took, in seconds.
    pub seconds: f64,
    /// The run was measured although the catalog was incomplete (`allow_partial`).
    pub partial_allowed: bool,
}

impl Coverage {
    pub fn complete(&self) -> bool {
        self.seen == self.served
    }

    /// One line: "112/112 tools (search probe, 2 rounds, 1.3 s)".
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{}/{} tools ({} check, {} round{}, {:.1} s)",
            self.seen,
            self.served,
            self.method,
            self.rounds,
            if self.rounds == 1 { "" } else { "s" },
            self.seconds
        );
        if !self.missing_servers.is_empty() {
            s += &format!("; servers never seen: {}", self.missing_servers.join(", "));
        }
        if !self.complete() && !self.missing.is_empty() {
            s.push_str(&format!("; e.g. missing {}", self.missing.join(", ")));
        }
        s
    }

    pub(super) fn new(method: &str, want: &BTreeSet<String>, seen: &BTreeSet<String>) -> Coverage {
        let missing: Vec<&String> = want.difference(seen).collect();
        let seen_servers: BTreeSet<&str> = seen.iter().map(|id| server_of(id)).collect();
        let missing_servers: BTreeSet<&str> = want
            .iter()
            .map(|id| server_of(id))
            .filter(|s| !seen_servers.contains(s))
            .collect();
        Coverage {
            method: method.into(),
            served: want.len(),
            seen: want.len() - missing.len(),
            missing: missing.iter().take(20).map(|s| s.to_string()).collect(),
            missing_servers: missing_servers.into_iter().map(String::from).collect(),
            ..Coverage::default()
        }
    }
}

pub(super) fn server_of(id: &str) -> &str {
    id.split_once(':').map_or(id, |(s, _)| s)
}

/// Words of a tool's description in its probe query, by default.
const PROBE_WORDS: usize = 24;

/// The incomplete-catalog outcome: a named failure, or a partial coverage when allowed.
fn verdict(s: &CatalogSpec, system: &str, cov: Coverage, why: &str) -> Result<Coverage, SutError> {
    if cov.complete() {
        return Ok(cov);
    }
    if s.catalog.allow_partial {
        return Ok(Coverage {
            partial_allowed: true,
            ..cov
        });
    }
    Err(SutError::other(
        system,
        format!(
            "the system does not show the whole corpus ({why}): {}. Nothing was measured: \
             scores over an incomplete catalog would be wrong. A server never seen usually \
             did not start (its log follows when evalgate started it); single tools that never appear even \
             when searched by their own name and description are either missing or \
             unreachable by its search (a router that prunes, a result cap). Set \
             [sut.catalog] allow_partial = true to measure anyway, with the coverage \
             printed in every report",
            cov.summary()
        ),
    ))
}

/// How often a long probe round reports its progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// The probe text for a tool: its name and the first `words` words of its description, cut to
/// at most `max_chars` characters at a word boundary.
fn probe_text(name: &str, description: &str, words: usize, max_chars: Option<usize>) -> String {
    let words: Vec<&str> = description.split_whitespace().take(words).collect();
    let text = format!("{name} {}", words.join(" ")).trim().to_string();
    match max_chars {
        Some(max) if text.chars().count() > max => {
            let cut: String = text.chars().take(max).collect();
            // at the last word boundary, unless that would leave less than the name
            match cut.rfind(char::is_whitespace) {
                Some(i) if i >= name.len().min(cut.len()) && i > 0 => {
                    cut[..i].trim_end().to_string()
                }
                _ => cut,
            }
        }
        _ => text,
    }
}

/// The coverage probe through the search itself.
pub async fn by_search(
    r: &dyn Retriever,
    corpus: &Corpus,
    s: &CatalogSpec,
) -> Result<Coverage, SutError> {
    let system = &r.facts().name;
    let ready_timeout = s.ready_timeout.unwrap_or(super::READY_TIMEOUT);
    let words = s.catalog.probe_words.map_or(PROBE_WORDS, |n| n as usize);
    let max_chars = s.catalog.probe_max_chars.map(|n| n as usize);
    let want: BTreeSet<String> = corpus.tools.iter().map(|t| t.tool_id.clone()).collect();
    let probe = |t: &Tool| probe_text(t.bare_name(), &t.description, words, max_chars);
    let probes: Vec<(String, String)> = corpus
        .tools
        .iter()
        .map(|t| (t.tool_id.clone(), probe(t)))
        .collect();
    // a fixed, spread-out sample whose answers must repeat exactly: the index has settled
    let step = (probes.len() / 16).max(1);
    let sample: Vec<usize> = (0..probes.len()).step_by(step).take(16).collect();
    let start = Instant::now();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut last_sample: Option<Vec<Vec<Text>>> = None;
    let mut unchanged_since = Instant::now();
    let mut rounds = 0;
    let settle = ready_timeout.min(Duration::from_secs(10));
    loop {
        rounds += 1;
        let todo: Vec<usize> = (0..probes.len())
            .filter(|&i| !seen.contains(&probes[i].0) || sample.contains(&i))
            .collect();
        let todo_len = todo.len();
        let mut answers = futures::stream::iter(todo.into_iter().map(|i| {
            let (id, text) = &probes[i];
            async move {
                let req = SearchRequest {
                    run: 0,
                    query_id: id,
                    text,
                    limit: s.results,
                };
                let r = match tokio::time::timeout(s.request_timeout, r.search(req)).await {
                    // name the probe query the system refused, and how to shape it
                    Ok(r) => r.map(|r| r.ids).map_err(|e| match e {
                        // an answer the system gave to this query (not a transport failure)
                        SutError::Garbage { .. } | SutError::Other { .. } => e.with_log(&format!(
                            "\n(the catalog probe for {id}: the query {:?}, {} characters; \
                             [sut.catalog] probe_words and probe_max_chars shape it)",
                            clip(text, 300),
                            text.chars().count()
                        )),
                        e => e,
                    }),
                    Err(_) => Err(SutError::timeout(
                        system,
                        s.request_timeout.as_secs_f64(),
                        format!(
                            "catalog probe for {id} (searching the tool's own name and description)"
                        ),
                    )),
                };
                (i, r)
            }
        }))
        .buffer_unordered(s.concurrency.max(1));
        let before = seen.len();
        let mut sample_answers = BTreeMap::new();
        let mut answered = 0;
        let mut told = Instant::now();
        // the first failure ends the check at once (the rest of the round is not waited for)
        while let Some((i, a)) = answers.next().await {
            let ids = a?;
            answered += 1;
            if !s.quiet && told.elapsed() >= PROGRESS_EVERY {
                told = Instant::now();
                crate::errln!(
                    "{system}: catalog probe round {rounds}: {answered}/{todo_len} searches, {}/{} tools seen",
                    seen.len(),
                    want.len()
                );
            }
            let shown = ids.iter().filter(|id| want.contains(id.as_str()));
            seen.extend(shown.map(|id| id.to_string()));
            if sample.contains(&i) {
                sample_answers.insert(i, ids);
            }
        }
        let sample_answers: Vec<Vec<Text>> = sample_answers.into_values().collect();
        let stable = last_sample.as_ref() == Some(&sample_answers);
        if seen.len() != before || !stable {
            unchanged_since = Instant::now();
        }
        last_sample = Some(sample_answers);
        let mut cov = Coverage::new("search", &want, &seen);
        cov.rounds = rounds;
        cov.seconds = start.elapsed().as_secs_f64();
        if !s.quiet && rounds > 1 && !(cov.complete() && stable) {
            crate::errln!(
                "{system}: catalog probe round {rounds}: {}/{} tools seen{}",
                cov.seen,
                cov.served,
                if stable {
                    ""
                } else {
                    ", answers still changing"
                }
            );
        }
        if cov.complete() && stable {
            return Ok(cov);
        }
        // nothing changed for a while: the index is as complete as it will get (a partial
        // catalog, even one the user allows, is only accepted once it has stopped growing, so
        // a slowly warming index is not measured half-built)
        if stable && unchanged_since.elapsed() >= settle {
            return verdict(s, system, cov, "its answers stopped changing");
        }
        // stability needs two rounds, so a round slower than the ready timeout gets a second
        if rounds >= 2 && start.elapsed() >= ready_timeout {
            let secs = ready_timeout.as_secs_f64();
            let state = if stable { "incomplete" } else { "changing" };
            let why = format!("still {state} after {secs:.0} s");
            if !stable && cov.complete() {
                return Err(SutError::other(
                    system,
                    format!(
                        "the system's answers to identical probes kept changing for {secs:.0} s; \
                         its index never settled, so nothing was measured"
                    ),
                ));
            }
            return verdict(s, system, cov, &why);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The `tools-list` check: the system's own listing, mapped by `[sut.catalog] filter` (default
/// `.[] | .name` with `server:tool` / `server__tool` names), polled until it holds the corpus
/// and repeats.
pub async fn by_tools_list(
    m: &McpSearch,
    corpus: &Corpus,
    system: &str,
    s: &CatalogSpec,
) -> Result<Coverage, SutError> {
    let id_style = s.catalog.id_style.unwrap_or_default();
    let filter = s.catalog.filter.as_deref().unwrap_or(".[] | .name");
    let mapper = Mapper::new(filter, id_style)
        .map_err(|e| SutError::other(system, format!("[sut.catalog] filter: {e}")))?;
    let want: BTreeSet<String> = corpus.tools.iter().map(|t| t.tool_id.clone()).collect();
    let start = Instant::now();
    let mut last: Option<BTreeSet<String>> = None;
    let mut rounds = 0;
    loop {
        rounds += 1;
        // a hang is a timeout, an answer that is not MCP garbage, anything else a crash
        let tools = m
            .session
            .list_all_tools()
            .await
            .map_err(|e| SutError::connect_failed(system.to_string(), &e, ""))?;
        let v = serde_json::to_value(&tools).unwrap_or_default();
        let outputs = mapper.outputs(&v).map_err(|e| {
            SutError::garbage(system, format!("mapping the tools/list answer: {e}"))
        })?;
        let ids: BTreeSet<String> = outputs
            .iter()
            .filter_map(|x| normalize_id(x, id_style))
            .collect();
        let seen: BTreeSet<String> = ids.intersection(&want).cloned().collect();
        let stable = last.as_ref() == Some(&ids);
        let mut cov = Coverage::new("tools-list", &want, &seen);
        cov.rounds = rounds;
        cov.seconds = start.elapsed().as_secs_f64();
        if cov.complete() && stable {
            return Ok(cov);
        }
        if start.elapsed() >= s.ready_timeout.unwrap_or(super::READY_TIMEOUT) {
            return verdict(s, system, cov, "tools/list after the ready timeout");
        }
        last = Some(ids);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_names_missing_servers_and_tools() {
        let want: BTreeSet<String> = ["a:x", "a:y", "b:z"].map(String::from).into();
        let seen: BTreeSet<String> = ["a:x"].map(String::from).into();
        let c = Coverage::new("search", &want, &seen);
        assert_eq!((c.served, c.seen), (3, 1));
        assert_eq!(c.missing_servers, vec!["b"]);
        assert_eq!(c.missing, vec!["a:y", "b:z"]);
        assert!(!c.complete());
        assert!(
            c.summary().contains("servers never seen: b"),
            "{}",
            c.summary()
        );
    }

    #[test]
    fn the_probe_text_is_the_name_and_the_start_of_the_description() {
        let long = "word ".repeat(100);
        let t = probe_text("create_issue", &long, PROBE_WORDS, None);
        assert!(t.starts_with("create_issue word"));
        assert_eq!(t.split_whitespace().count(), 25);
        assert_eq!(probe_text("a", &long, 2, None), "a word word");
        // cut to the limit at a word boundary: "create_issue" + 37 × " word" is 197 characters
        let capped = probe_text("create_issue", &long, 100, Some(200));
        assert_eq!(capped.chars().count(), 197, "{capped}");
        assert!(capped.ends_with(" word"));
        // a name longer than the limit is cut inside it
        assert_eq!(
            probe_text("abcdefghijklmnopqrstuvwxyz", "x y", 24, Some(16)),
            "abcdefghijklmnop"
        );
        // characters, not bytes
        let wide = probe_text("é", &"ü ".repeat(50), 100, Some(20));
        assert_eq!(wide.chars().count(), 19, "{wide}");
    }
}
