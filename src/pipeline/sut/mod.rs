//! Systems under test, behind two small traits. Nothing above this module knows whether a
//! system runs in-process, as a child process or behind HTTP.

use crate::infra::mcp::Failure;
use crate::pipeline::dataset::Category;
use crate::pipeline::sut::launch::catalog::Coverage;
pub mod drift;
pub mod embedded;
pub mod kind;
pub mod launch;
pub mod live;
pub mod mapping;
pub mod mcp_search;
pub mod observe;
pub mod recorded;
pub mod rest;
pub mod rules;
pub mod sample_args;
pub mod scanner;
pub mod spec;

/// The ranked list is scored to this depth (the largest k): MRR, nDCG@10 and AP look at the
/// first `DEPTH` results after filtering.
pub const DEPTH: usize = 10;
/// Extra results asked for beyond `DEPTH`, so that dropping off-corpus ids and duplicates does
/// not starve the list.
pub const HEADROOM: usize = 10;

use crate::infra::text::Text;
use crate::pipeline::dataset::Entry;
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Why a system under test could not be measured (exit code 3).
#[derive(Debug, Clone, thiserror::Error, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SutError {
    /// A wait ran out: the system did not answer in time.
    #[error("{system} did not answer within {seconds} s ({context})")]
    Timeout {
        /// The system under test's name.
        system: String,
        /// The wait that ran out, in seconds.
        seconds: f64,
        /// What was waited for (the request, the start, the catalog).
        context: String,
    },
    /// The system exited or closed its connection.
    #[error("{system} crashed: {detail}")]
    Crashed {
        /// The system under test's name.
        system: String,
        /// What happened: the exit status and the last lines of its stderr or log.
        detail: String,
    },
    /// The system answered with something that is not a valid answer.
    #[error("{system} returned something that is not a valid answer: {detail}")]
    Garbage {
        /// The system under test's name.
        system: String,
        /// What was wrong with the answer, with its start quoted.
        detail: String,
    },
    /// A recording has no observation for a query or entry.
    #[error("{system} has no observation for {item}: {detail}")]
    Missing {
        /// The system under test's name.
        system: String,
        /// The query or entry id without an observation.
        item: String,
        /// Where evalgate looked.
        detail: String,
    },
    /// Any other failure of the system under test.
    #[error("{system} failed: {detail}")]
    Other {
        /// The system under test's name.
        system: String,
        /// What failed.
        detail: String,
    },
    /// Nothing accepted a connection at the system's address: not a crash, nothing ran there.
    #[error("{system}: {detail}")]
    Unreachable {
        /// The system under test's name.
        system: String,
        /// The address and the connection error.
        detail: String,
    },
    /// The system answered at first, then stopped answering during the measurement (a search
    /// budget spent, a rate limit): asked again afterwards, queries it had answered come back
    /// empty. Its later answers would be scored as misses.
    #[error("{system} stopped answering during the measurement: {detail}")]
    Degraded {
        /// The system under test's name.
        system: String,
        /// How many answers came back empty when asked again.
        detail: String,
    },
}

/// The constructors `SutError::$f(system, detail)` of the kinds with a system and a detail.
macro_rules! detailed {
    ($($f:ident: $kind:ident),*) => {$(
        pub fn $f(system: impl Into<String>, detail: impl Into<String>) -> Self {
            let (system, detail) = (system.into(), detail.into());
            SutError::$kind { system, detail }
        }
    )*};
}

impl SutError {
    pub fn timeout(system: impl Into<String>, seconds: f64, context: impl Into<String>) -> Self {
        let (system, context) = (system.into(), context.into());
        SutError::Timeout {
            system,
            seconds,
            context,
        }
    }
    detailed!(crashed: Crashed, garbage: Garbage, other: Other);
    detailed!(unreachable: Unreachable, degraded: Degraded);

    /// The same failure with `tail` (the system's exit and the last lines of its log) appended
    /// to what it says, so a failure of a process evalgate started quotes the process's own
    /// words.
    pub fn with_log(mut self, tail: &str) -> SutError {
        match &mut self {
            SutError::Timeout { context: d, .. }
            | SutError::Crashed { detail: d, .. }
            | SutError::Garbage { detail: d, .. }
            | SutError::Missing { detail: d, .. }
            | SutError::Other { detail: d, .. }
            | SutError::Degraded { detail: d, .. }
            | SutError::Unreachable { detail: d, .. } => {
                if !tail.trim().is_empty() && !d.contains(tail.trim()) {
                    d.push_str(tail);
                }
            }
        }
        self
    }

    /// The kind, as `failure.kind` names it in report.json.
    pub fn kind(&self) -> &'static str {
        match self {
            SutError::Timeout { .. } => "timeout",
            SutError::Crashed { .. } => "crashed",
            SutError::Garbage { .. } => "garbage",
            SutError::Missing { .. } => "missing",
            SutError::Other { .. } => "other",
            SutError::Unreachable { .. } => "unreachable",
            SutError::Degraded { .. } => "degraded",
        }
    }

    /// A system that could not be connected to (or failed a later MCP request such as
    /// `tools/list`): a timeout when it never answered `initialize` or the request in time,
    /// garbage when it answered but not in MCP, a plain failure when nothing listens at its address, else a crash; `extra` (a log tail) is appended to the detail.
    pub fn connect_failed(system: String, e: &anyhow::Error, extra: &str) -> SutError {
        let detail = format!("{e:#}{extra}");
        match e.downcast_ref::<Failure>() {
            Some(Failure::Timeout(seconds, _)) => SutError::timeout(system, *seconds, detail),
            Some(Failure::Garbage(_)) => SutError::garbage(system, detail),
            // nothing listening is not a crash: nothing ran there
            Some(Failure::Unreachable(d)) => SutError::unreachable(system, format!("{d}{extra}")),
            None => SutError::crashed(system, detail),
        }
    }
}

/// One search request.
#[derive(Debug, Clone)]
pub struct SearchRequest<'a> {
    /// 1-based run number (a recorded system replays the matching run).
    pub run: usize,
    pub query_id: &'a str,
    pub text: &'a str,
    /// How many results to ask for (the evaluation depth plus headroom).
    pub limit: usize,
}

/// What a retriever returned for one query: canonical `server:tool` ids, best first.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub ids: Vec<Text>,
    pub latency: Duration,
}

/// What a system said to a robustness probe.
#[derive(Debug, Clone)]
pub enum ProbeReply {
    Ranked(Ranked),
    /// A clear refusal: the system's own error message.
    Refused(String),
}

/// What is known about a search system once it is built, before it is asked anything.
#[derive(Debug, Clone)]
pub struct Facts {
    /// Short name shown in reports (`embedded`, `mcpproxy`, ...).
    pub name: String,
    /// Whether the result count is passed to the system (the "limit 1" probe needs it).
    pub sends_limit: bool,
    /// What the catalog check established before measuring, for systems that had one.
    pub coverage: Option<Coverage>,
    /// The system of a recording this replays (`recorded:<system>` reports it), `None` for a
    /// system that answers live. A replay is not probed: it has no behaviour of its own.
    pub replays: Option<String>,
}

impl Facts {
    /// A live system that sends the result count and had no catalog check.
    pub fn named(name: impl Into<String>) -> Facts {
        Facts {
            name: name.into(),
            sends_limit: true,
            coverage: None,
            replays: None,
        }
    }
}

/// A search system: query, k → ranked tool ids.
#[async_trait]
pub trait Retriever: Send + Sync {
    /// What is known about the system, established when it was built.
    fn facts(&self) -> &Facts;
    /// Searches; called concurrently (bounded by the measurement's concurrency).
    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError>;
    /// Things about the system a reader should know, given the queries that were asked
    /// (a recording with results for queries the golden set does not have).
    fn warnings(&self, _asked: &std::collections::HashSet<&str>) -> Vec<String> {
        Vec::new()
    }
    /// Answers a robustness probe: a search, with `extra` arguments the search tool does not
    /// declare. `None` when the system cannot be asked that way.
    async fn probe(
        &self,
        req: SearchRequest<'_>,
        extra: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<Result<ProbeReply, SutError>> {
        if !extra.is_empty() {
            return None;
        }
        Some(self.search(req).await.map(ProbeReply::Ranked))
    }
}

/// A detector's decision on one entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Decision {
    /// The security entry's id.
    pub entry_id: String,
    /// The detector acts on the entry: for a system with tiers, its blocking tier (mcpproxy:
    /// a `hard` finding, which blocks the server); otherwise any flag.
    pub flagged: bool,
    /// Not `flagged`, but the system flagged it for review below its blocking tier (mcpproxy: a
    /// `soft` finding, a warning). Scored as the detector's own `/review` row.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub review: bool,
    /// Ids of the rules that fired, or the changed aspects for drift.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<String>,
    /// For a rug-pull played against a running proxy: what the proxy did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveOutcome>,
    /// The detector cannot judge this entry (drift on an entry without definitions): it is
    /// counted as not applicable, in no cell of the confusion matrix.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_applicable: bool,
}

impl Decision {
    /// A plain verdict: flagged or not, with its signals.
    pub(crate) fn new(id: &str, flagged: bool, signals: Vec<String>) -> Decision {
        Decision {
            entry_id: id.to_string(),
            flagged,
            review: false,
            signals,
            live: None,
            not_applicable: false,
        }
    }
}

/// What a running proxy did when a tool it had approved changed under it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LiveOutcome {
    /// The proxy re-listed the server after `notifications/tools/list_changed`.
    pub relisted: bool,
    /// It reported the change (approval status, held verdict, or the tool withdrawn).
    pub reported: bool,
    /// It refused a call to the changed tool (that it had forwarded before the change).
    pub blocked: bool,
    /// After the definition was put back, the tool was approved and callable again.
    pub restored: bool,
    /// Before any change the tool was approved and its call went through.
    pub baseline_ok: bool,
    /// What the proxy showed after the change (status, held reason and signals).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<String>,
    /// Why something was missed (never re-listed, refused before any change, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A security detector: entries → one verdict per entry.
#[async_trait]
pub trait Detector: Send {
    fn name(&self) -> &str;
    /// Whose detector it is, as every report shows beside its rows: evalgate's own reference
    /// checkers, an external scanner, or the system under test's own detector.
    fn source(&self) -> String {
        "evalgate's reference checker".into()
    }
    /// The attack categories this detector claims to cover. Its recall, precision and F1 are
    /// computed over malicious entries of these categories plus every benign entry; flags on
    /// other attack categories are still shown per category. `None` = all attack categories.
    fn scope(&self) -> Option<Vec<Category>> {
        None
    }
    /// The longest one `detect` call may take, given the per-request limit of the run. Detectors
    /// that bound their own work (external scanners) return their own, larger budget.
    fn time_limit(&self, per_request: Duration, _entries: &[Entry]) -> Duration {
        per_request
    }
    /// `run` is the 1-based run number.
    async fn detect(&mut self, entries: &[Entry], run: usize) -> Result<Vec<Decision>, SutError>;
}
