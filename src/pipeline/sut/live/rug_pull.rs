//! `rug-pull-live`: every entry that has `before` and `after` is played against a fresh proxy,
//! switched to `after` (`notifications/tools/list_changed`) and back, and judged on whether the
//! proxy reports the change, refuses the changed tool, and approves it again after the revert.
//! Each phase is judged only once the proxy has settled (its witness shown and three identical
//! reads, bounded by [`settle_bound`]), because mcpproxy applies a listing in steps seconds
//! apart: docs/systems-under-test.md, "When it judges".

use super::api;
use super::layout::{CallArgs, Layout, layout};
use crate::infra::files::write_atomic;
use crate::infra::http::path_segment;
use crate::infra::mcp::{ConnectOpts, Endpoint, connect, readable};
use crate::infra::process::Supervisor;
use crate::pipeline::dataset::{Category, Entry};
use crate::pipeline::replay::ReplaySpec;
use crate::pipeline::sut::kind::{DetectorDef, SutKind};
use crate::pipeline::sut::launch::spec::LaunchSpec;
use crate::pipeline::sut::launch::{self, Quarantine, Running, system_name};
use crate::pipeline::sut::{Decision, Detector, LiveOutcome, SutError};
use async_trait::async_trait;
use reqwest::Method;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

type Service = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// One play against the launched proxy: its REST API, an MCP session, where it shows approval
/// hashes, the replays' switch file and listed files, and the detector's settings.
struct Play<'a> {
    live: &'a RugPullLive,
    run: &'a Running,
    service: &'a Service,
    hash_from: HashFrom,
    ctrl: &'a Path,
    listed: &'a [(String, PathBuf)],
    launched: Instant,
    /// Per played tool, what shows that the proxy applied a phase: for the baseline nothing
    /// (the tool listed), then its [`Witness`].
    witnesses: BTreeMap<String, Witness>,
    /// What the proxy showed once the baseline had settled (empty until then).
    baseline: BTreeMap<String, Seen>,
}

/// Rug-pulls played against the running proxy.
pub struct RugPullLive {
    /// The proxy launched for each measurement.
    proxy: LaunchSpec,
    sup: Supervisor,
    call_tool: String,
    relist_timeout: Duration,
    /// `[rug_pull_live] trust_mode`, written on every replay server.
    trust_mode: Option<String>,
    /// `[rug_pull_live] settle_timeout` in seconds, else [`settle_bound`].
    settle_timeout: Option<f64>,
}

/// How often the proxy's catalog is read while waiting for it to settle.
const POLL: Duration = Duration::from_millis(100);
/// Identical reads in a row that make a settled catalog.
const QUIET_READS: usize = 3;
/// How long the replays' listing counts must stand still before the baseline is read, and how
/// long after the launch that is at the earliest (mcpproxy re-lists every server ~2 s after it
/// starts). mcpproxy applies a listing seconds after asking for it when many servers index at
/// once, and drops a server's list_changed that arrives while a pass of that server runs.
const LISTINGS_QUIET: Duration = Duration::from_secs(2);
const FIRST_BASELINE: Duration = Duration::from_secs(3);

/// The longest wait for the proxy to settle after a switch: `[rug_pull_live] settle_timeout`
/// (checked by the configuration, read here as valid), else max(5 s, 1 s + 30 ms × played).
fn settle_bound(configured: Option<f64>, played: usize) -> Duration {
    configured.map(Duration::from_secs_f64).unwrap_or_else(|| {
        Duration::from_secs(5)
            .max(Duration::from_secs(1) + Duration::from_millis(30) * played as u32)
    })
}

/// What the proxy shows of one listed tool at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
struct Seen {
    /// `approved`, `changed`, … ; `None` when the proxy gives none.
    status: Option<String>,
    /// `held_verdict:…`, `held_reason:…` and the held signals.
    held: Vec<String>,
    /// The approval hash (`sha256/v3:<hex>`), where the proxy shows one.
    hash: Option<String>,
    description: Option<String>,
    /// The input schema as the proxy shows it.
    schema: Option<Value>,
}

impl Seen {
    fn reports_change(&self) -> bool {
        let approved = |s: &String| s == "approved" && self.held.is_empty();
        !self.status.as_ref().is_some_and(approved)
    }

    /// The hash without its `sha256/vN:` label (the label's version may move while the hash
    /// itself is the baseline's again).
    fn bare_hash(&self) -> Option<&str> {
        self.hash
            .as_deref()
            .map(|h| h.rsplit_once(':').map_or(h, |(_, hex)| hex))
    }

    /// `approved`, or `changed (held_reason:…, …)`.
    fn state(&self) -> String {
        let none = "without an approval status";
        let status = self.status.as_deref().unwrap_or(none);
        match self.held.as_slice() {
            [] => status.to_string(),
            held => format!("{status} ({})", held.join(", ")),
        }
    }
}

/// What `GET /api/v1/tools` shows of each listed tool, by `server:tool`; `None` without a
/// `tools` array.
fn seen_in(data: &Value) -> Option<BTreeMap<String, Seen>> {
    let tools = data.get("tools").and_then(Value::as_array)?;
    // a tool without a server is not one it can be asked about
    let seen = |t: &Value| {
        let server = t.get("server_name").and_then(Value::as_str)?;
        let name = t.get("name").and_then(Value::as_str)?;
        let any = |k: &str| t.get(k).and_then(Value::as_str).map(str::to_string);
        let text = |k: &str| any(k).filter(|v| !v.is_empty());
        let mut held: Vec<String> = ["held_verdict", "held_reason"]
            .into_iter()
            .filter_map(|k| Some(format!("{k}:{}", text(k)?)))
            .collect();
        if let Some(sig) = t.get("held_signals").and_then(Value::as_array) {
            held.extend(sig.iter().filter_map(Value::as_str).map(str::to_string));
        }
        let seen = Seen {
            status: text("approval_status"),
            held,
            hash: text("hash"),
            description: any("description"),
            schema: t.get("schema").filter(|s| !s.is_null()).cloned(),
        };
        Some((format!("{server}:{name}"), seen))
    };
    Some(tools.iter().filter_map(seen).collect())
}

/// The approval hash of each tool in the text of mcpproxy's `quarantine_security`
/// `inspect_tools` answer (`{"tools": [{"tool_name", "hash", …}]}`), by tool name.
fn hashes_in(text: &str) -> Option<BTreeMap<String, String>> {
    let v: Value = serde_json::from_str(text).ok()?;
    let tool = |t: &Value| {
        let at = |k: &str| t.get(k).and_then(Value::as_str).map(str::to_string);
        Some((at("tool_name")?, at("hash")?))
    };
    let tools = v.get("tools").and_then(Value::as_array)?;
    Some(tools.iter().filter_map(tool).collect())
}

/// Where the proxy shows each tool's approval hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HashFrom {
    /// `hash` in `GET /api/v1/tools` (mcpproxy v0.60.0, the reference proxy).
    Catalog,
    /// mcpproxy's MCP tool `quarantine_security` (`inspect_tools`), one call per server:
    /// mcpproxy v0.51.0 has no `hash` in its catalog.
    InspectTools,
    /// Nowhere: only the description witnesses a change.
    Nowhere,
}

/// What a rug pull changes in one tool's definition: the fields of the served definition that
/// differ (`description`, `inputSchema`, `outputSchema`, `annotations`, …), and, when the
/// changed state lists the name more than once, how often.
#[derive(Debug, Clone, Default, PartialEq)]
struct Change {
    fields: Vec<String>,
    /// Fields that differ in every definition of the changed state (the proxy shows one of
    /// them, or the last it applied).
    in_every: Vec<String>,
    listed: usize,
    /// The input schema first served.
    input_schema: Value,
}

impl Change {
    /// `the switch changed description, inputSchema`, and `; the name listed 2 times` when so.
    fn describe(&self) -> String {
        let what = match self.fields.as_slice() {
            [] => "nothing in the definition".to_string(),
            fields => fields.join(", "),
        };
        let times = (self.listed > 1).then(|| format!(", the name listed {} times", self.listed));
        format!("the switch changed {what}{}", times.unwrap_or_default())
    }
}

/// The change of each played tool, by `server:tool`: its first definition against each
/// definition it changes into.
fn changes_of(layout: &Layout) -> BTreeMap<String, Change> {
    let as_json = |t: &rmcp::model::Tool| serde_json::to_value(t).unwrap_or(Value::Null);
    let change = |(id, name, spec): (&String, &str, &ReplaySpec)| {
        let first = spec.tools.iter().find(|t| t.name == name).map(as_json)?;
        let input_schema = first.get("inputSchema").cloned().unwrap_or(Value::Null);
        let differ = |a: &Value, b: &Value| -> BTreeSet<String> {
            let keys = a.as_object().into_iter().chain(b.as_object());
            let keys = keys.flat_map(|o| o.keys());
            keys.filter(|k| *k != "name" && a.get(k.as_str()) != b.get(k.as_str()))
                .cloned()
                .collect()
        };
        let then = spec.changes.get(name).into_iter().flatten().map(as_json);
        let each: Vec<BTreeSet<String>> = then.map(|t| differ(&first, &t)).collect();
        let fields: BTreeSet<String> = each.iter().flatten().cloned().collect();
        let in_every: Vec<String> = fields
            .iter()
            .filter(|f| each.iter().all(|d| d.contains(*f)))
            .cloned()
            .collect();
        let change = Change {
            fields: fields.into_iter().collect(),
            in_every,
            listed: each.len(),
            input_schema,
        };
        Some((id.clone(), change))
    };
    layout.tools().filter_map(change).collect()
}

/// What must move for a tool to show that the proxy applied its change (and move back for
/// the switch back): nothing, when the proxy cannot show the change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Witness {
    /// The approval hash (mcpproxy writes it first, with its verdict).
    hash: bool,
    /// The description and input schema the catalog shows (mcpproxy refreshes them last,
    /// after its search index, which also validates a call's arguments).
    description: bool,
    schema: bool,
}

impl Witness {
    /// The approval hash covers the description and both schemas (not annotations or title);
    /// the input schema counts where the proxy showed the served one at the baseline
    /// (mcpproxy v0.51.0 shows a placeholder); a field counts only when every changed
    /// definition changes it.
    fn of(change: &Change, hash_from: HashFrom, baseline: Option<&Seen>) -> Witness {
        let changes = |f: &str| change.in_every.iter().any(|x| x == f);
        let schema_shown = baseline
            .and_then(|s| s.schema.as_ref())
            .is_some_and(|shown| shows_parameters(shown, &change.input_schema));
        Witness {
            hash: hash_from != HashFrom::Nowhere
                && (changes("description") || changes("inputSchema") || changes("outputSchema")),
            description: changes("description"),
            schema: schema_shown && changes("inputSchema"),
        }
    }
}

/// Whether the proxy shows the served input schema's parameters: the same non-empty
/// `properties` (mcpproxy rewrites the rest, dropping `$schema` and `title` and adding an
/// empty `required`; v0.51.0 shows an empty placeholder for every tool).
fn shows_parameters(shown: &Value, served: &Value) -> bool {
    let properties = |v: &Value| v.get("properties").cloned();
    properties(served).is_some_and(|p| p.as_object().is_some_and(|o| !o.is_empty()))
        && properties(shown) == properties(served)
}

/// The three phases of a play: the baseline, the rug pulled, put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Before,
    After,
    Back,
}

/// Whether what the proxy shows of a tool now proves it applied `phase`'s listing: the tool
/// listed (baseline); withdrawn, or the witnessed values moved from the baseline's (change);
/// listed with the witnessed values back at the baseline's (switch back). A tool without a
/// witness is taken as applied once listed (or withdrawn, after the change).
fn witnessed(phase: Phase, w: Witness, before: Option<&Seen>, now: Option<&Seen>) -> bool {
    let (Some(b), Some(n)) = (before, now) else {
        return match phase {
            Phase::Before | Phase::Back => now.is_some(),
            Phase::After => true,
        };
    };
    // after the change the witnessed values differ from the baseline's; back, they match it
    let moved = phase == Phase::After;
    phase == Phase::Before
        || (!w.hash || n.bare_hash().is_some() && (n.bare_hash() != b.bare_hash()) == moved)
            && (!w.description || (n.description != b.description) == moved)
            && (!w.schema || (n.schema != b.schema) == moved)
}

/// Per `server:tool`: did the call reach the replay, and (shortened) what came back.
type Calls = HashMap<String, (bool, String)>;

/// What the proxy showed once one phase had settled (or the bound ran out), and let through.
#[derive(Debug, Default)]
struct Settled {
    /// The last read of the catalog, by `server:tool`.
    seen: BTreeMap<String, Seen>,
    /// Played tools not settled when the bound ran out, with what was missing.
    unsettled: BTreeMap<String, String>,
    waited: Duration,
    /// The calls made once the phase had settled.
    calls: Calls,
    /// The servers not re-listed after the switch into the phase.
    not_relisted: BTreeSet<String>,
    /// Per server, the listings it answered from the switch until the phase had settled.
    listings: BTreeMap<String, u64>,
}

/// What one play observed, in its three phases: the baseline, the rug pulled, put back.
#[derive(Default)]
struct Observed {
    /// What each played tool's rug pull changes.
    changes: BTreeMap<String, Change>,
    /// Per server that ignored list_changed before the play, what happened.
    deaf_at_start: BTreeMap<String, String>,
    before: Settled,
    after: Settled,
    back: Settled,
    /// Per played tool held after the switch back, what the proxy's diff of it names.
    diff_back: BTreeMap<String, String>,
}

/// `the call went through`, or `the call did not go through (what came back)`.
fn call_outcome(calls: &Calls, id: &str) -> String {
    match calls.get(id) {
        Some((true, _)) => "the call went through".into(),
        Some((false, text)) => format!("the call did not go through ({text})"),
        None => "no call was made".into(),
    }
}

/// `server s answered N listings …`, when a phase saw more than one listing of the server (a
/// second discovery pass can change the proxy's verdict) or none.
fn listings_note(phase: &Settled, server: &str, after_what: &str) -> Option<String> {
    let n = *phase.listings.get(server)?;
    (n != 1).then(|| format!("server {server:?} answered {n} listings {after_what}"))
}

/// Judges each played entry from what was observed: reported, blocked, restored, and why not.
fn judge(
    id_of: &BTreeMap<usize, String>,
    o: &Observed,
    relist_timeout: Duration,
) -> BTreeMap<usize, LiveOutcome> {
    let judged = |(&i, id): (&usize, &String)| {
        let server = id.split_once(':').map_or("", |(s, _)| s);
        let seen_before = o.before.seen.get(id);
        let seen_after = o.after.seen.get(id);
        let seen_back = o.back.seen.get(id);
        let through = |m: &Calls| m.get(id).is_some_and(|c| c.0);
        let reports = |s: Option<&Seen>| s.is_none_or(Seen::reports_change);
        let baseline_ok = !reports(seen_before) && through(&o.before.calls);
        let relisted = !o.after.not_relisted.contains(server);
        let relisted_back = !o.back.not_relisted.contains(server);
        let reported = relisted && reports(seen_after);
        // a call refused before any change says nothing about the change
        let blocked = relisted && through(&o.before.calls) && !through(&o.after.calls);
        let restored = relisted && relisted_back && !reports(seen_back) && through(&o.back.calls);
        let never = |of: &str| {
            let s = relist_timeout.as_secs_f64();
            format!("the proxy never re-listed server {server:?} within {s} s of {of}")
        };

        let (mut notes, mut marks) = (Vec::new(), Vec::new());
        for (phase, mark, settled) in [
            ("after the change", "after", &o.after),
            ("after the switch back", "back", &o.back),
        ] {
            if let Some(why) = settled.unsettled.get(id) {
                notes.push(format!(
                    "unsettled {phase}: {why} when the {:.1} s bound ran out; judged from that last read",
                    settled.waited.as_secs_f64()
                ));
                marks.push(format!("unsettled:{mark}"));
            }
        }
        notes.extend(o.deaf_at_start.get(server).cloned());
        if !baseline_ok {
            notes.push(format!(
                "before any change the tool was {} and {}",
                seen_before.map_or("not listed".into(), Seen::state),
                call_outcome(&o.before.calls, id)
            ));
        }
        if !relisted {
            notes.push(never("list_changed"));
        } else if !reported {
            notes.push(not_reported(o, id));
            notes.extend(listings_note(&o.after, server, "after the change"));
        }
        if relisted && !restored {
            if !relisted_back {
                notes.push(never("the switch back"));
            } else {
                let diff = o.diff_back.get(id).map(|d| format!("; {d}"));
                notes.push(format!(
                    "not restored: after the switch back the tool was {}{}, and {}",
                    seen_back.map_or("not listed".into(), Seen::state),
                    diff.unwrap_or_default(),
                    call_outcome(&o.back.calls, id)
                ));
                notes.extend(listings_note(&o.back, server, "after the switch back"));
            }
        }
        // what the proxy showed of a reported change, then evalgate's own marks
        let mut signals = Vec::new();
        if reported {
            match seen_after {
                Some(s) => {
                    signals.push(format!("status:{}", s.status.as_deref().unwrap_or("none")));
                    signals.extend(s.held.iter().cloned());
                }
                None => signals.push("withdrawn".into()),
            }
        }
        signals.extend(marks);
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        let outcome = LiveOutcome {
            relisted,
            reported,
            blocked,
            restored,
            baseline_ok,
            signals,
            note,
        };
        (i, outcome)
    };
    id_of.iter().map(judged).collect()
}

/// Why a change went unreported: what the proxy showed, what the rug pull changed, and what the
/// call with the changed definition's arguments returned.
fn not_reported(o: &Observed, id: &str) -> String {
    let (before, after) = (o.before.seen.get(id), o.after.seen.get(id));
    let state = after.map_or("not listed".into(), Seen::state);
    // the first 12 hex digits of each hash
    let hashes = [before, after].map(|s| s?.bare_hash().map(|h| h.get(..12).unwrap_or(h)));
    let hash = match hashes {
        [Some(b), Some(a)] if b != a => {
            format!(" with its approval hash moved {b} → {a} (the changed definition accepted)")
        }
        [Some(_), Some(_)] => " with its approval hash unchanged".into(),
        _ => String::new(),
    };
    format!(
        "not reported: {}; the proxy then showed the tool {state}{hash}, and {}",
        o.changes.get(id).cloned().unwrap_or_default().describe(),
        call_outcome(&o.after.calls, id)
    )
}

/// What a proxy's diff of a held tool names as changed against the approved definition:
/// mcpproxy's `previous_*`/`current_*` pairs, or the reference proxy's `aspects`.
fn diff_summary(d: &Value) -> Option<String> {
    if let Some(aspects) = d.get("aspects").and_then(Value::as_array) {
        let a: Vec<&str> = aspects.iter().filter_map(Value::as_str).collect();
        return Some(format!("the proxy's diff names {}", a.join(", ")));
    }
    let text = |k: String| d.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let json = |s: &str| serde_json::from_str::<Value>(s).ok();
    let cut = |cut: bool| if cut { "…" } else { "" };
    let mut parts = Vec::new();
    for (label, key) in [
        ("description", "description"),
        ("input schema", "schema"),
        ("output schema", "output_schema"),
    ] {
        let [prev, cur] = ["previous", "current"].map(|at| text(format!("{at}_{key}")));
        // schemas come as JSON text: compared as JSON where they parse
        let parsed = json(&prev).zip(json(&cur));
        if parsed.map_or(prev == cur, |(x, y)| x == y) {
            continue;
        }
        // the two texts from a little before where they first differ
        let same = prev.chars().zip(cur.chars()).take_while(|(a, b)| a == b);
        let from = same.count().saturating_sub(20);
        let part = |s: &str| -> String {
            let tail: String = s.chars().skip(from).take(60).collect();
            let more = s.chars().count() > from + 60;
            match s {
                "" => "none".into(),
                _ => format!("{}{tail}{}", cut(from > 0), cut(more)),
            }
        };
        parts.push(format!("{label} {} → {}", part(&prev), part(&cur)));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "the proxy's diff against the approved definition: {}",
            parts.join("; ")
        )
    })
}

/// Per replay server, the definitions it last listed (`before`/`after`) and how many listings
/// it has answered, from its listed file.
fn listings(listed: &[(String, PathBuf)]) -> BTreeMap<String, (String, u64)> {
    let read = |(server, p): &(String, PathBuf)| {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let mut lines = text.lines().map(str::trim);
        let state = lines.next().unwrap_or("").to_string();
        let count = lines.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        (server.clone(), (state, count))
    };
    listed.iter().map(read).collect()
}

/// Per server, the listings answered since `from`.
fn listings_since(
    from: &BTreeMap<String, (String, u64)>,
    now: &BTreeMap<String, (String, u64)>,
) -> BTreeMap<String, u64> {
    now.iter()
        .map(|(s, (_, n))| {
            let was = from.get(s).map_or(0, |(_, n)| *n);
            (s.clone(), n.saturating_sub(was))
        })
        .collect()
}

/// `--detectors rug-pull-live`.
pub const DEF: DetectorDef = DetectorDef {
    name: "rug-pull-live",
    help: "Rug-pulls played live against the launched proxy: reported, blocked, restored after a revert",
    live: true,
    build: |s, sup| {
        let cfg = &s.rug_pull_live;
        // for mcpproxy the one variant it never refuses for the tool's annotations
        // (`call_tool_read`/`_write` on a destructiveHint tool are refused by
        // internal/contracts/intent.go, whatever the rug-pull did)
        let default = match s.proxy.kind {
            SutKind::Mcpproxy => "call_tool_destructive",
            _ => "call_tool",
        };
        Ok(vec![Box::new(RugPullLive {
            proxy: s.proxy.clone(),
            sup: sup.clone(),
            call_tool: cfg.call_tool.clone().unwrap_or_else(|| default.into()),
            relist_timeout: Duration::from_secs_f64(cfg.relist_timeout.unwrap_or(10.0)),
            trust_mode: cfg.trust_mode.clone(),
            settle_timeout: cfg.settle_timeout,
        })])
    },
};

impl RugPullLive {
    fn played(e: &Entry) -> Option<(Value, Option<Vec<Value>>)> {
        e.after.as_ref()?;
        Some((e.before.clone()?, Some(e.afters().to_vec())))
    }

    async fn play(&self, layout: &Layout) -> Result<BTreeMap<usize, LiveOutcome>, SutError> {
        let launched = Instant::now();
        let running = super::launch_over(
            &self.proxy,
            &self.sup,
            layout,
            Quarantine::On(self.trust_mode.clone()),
            |i, root| {
                vec![
                    "--switch-file".into(),
                    root.join("switch").display().to_string(),
                    "--listed-file".into(),
                    root.join(format!("listed-{i:04}")).display().to_string(),
                ]
            },
        )
        .await?;
        let root = running.dir.path().to_path_buf();
        let listed: Vec<(String, PathBuf)> = layout
            .specs
            .keys()
            .enumerate()
            .map(|(i, s)| (s.clone(), root.join(format!("listed-{i:04}"))))
            .collect();
        let endpoint = Endpoint::Http {
            url: format!("{}/mcp", running.base),
            headers: vec![("X-API-Key".into(), running.api_key.clone())],
        };
        let opts = ConnectOpts {
            sup: &self.sup,
            timeout: self.proxy.check.request_timeout,
            name: &running.name,
        };
        let service = connect(&endpoint, (), &opts)
            .await
            .map_err(|e| {
                let e = e.context("cannot connect to /mcp");
                SutError::connect_failed(running.name.clone(), &e, "")
            })?
            .service;
        let (args_before, args_after) = layout.call_args();
        let changes = changes_of(layout);
        let mut p = Play {
            live: self,
            run: &running,
            service: &service,
            hash_from: HashFrom::Nowhere,
            ctrl: &root.join("switch"),
            listed: &listed,
            launched,
            // the baseline needs no witness: every played tool listed
            witnesses: changes
                .keys()
                .map(|id| (id.clone(), Witness::default()))
                .collect(),
            baseline: BTreeMap::new(),
        };
        p.hash_from = p.hashes_shown().await?;

        // (0) the baseline, once the proxy's own startup listings are over and it re-lists
        // each server on list_changed: approved and callable
        p.listings_quiet().await;
        let deaf_at_start = p.deaf_servers().await?;
        p.listings_quiet().await;
        let mut before = p.settle(Phase::Before).await?;
        p.witnesses = changes
            .iter()
            .map(|(id, c)| (id.clone(), Witness::of(c, p.hash_from, before.seen.get(id))))
            .collect();
        p.baseline = before.seen.clone();
        before.calls = p.calls(&args_before).await;
        // (1) the rug is pulled; (2) and put back: the calls only once the proxy shows the
        // baseline again
        let after = p.switched(Phase::After, &args_after).await?;
        let back = p.switched(Phase::Back, &args_before).await?;
        let diff_back = p.diffs(&back.seen).await;
        drop(service);
        running.proxy.terminate(Duration::from_secs(2)).await;

        let observed = Observed {
            changes,
            deaf_at_start,
            before,
            after,
            back,
            diff_back,
        };
        Ok(judge(&layout.id_of, &observed, self.relist_timeout))
    }
}

impl Play<'_> {
    /// Every listed tool as the proxy shows it, by `server:tool`.
    async fn catalog(&self) -> Result<BTreeMap<String, Seen>, SutError> {
        let name = || self.run.name.clone();
        let data = api(self.run, Method::GET, "/api/v1/tools", None)
            .await
            .map_err(|detail| SutError::other(name(), detail))?;
        seen_in(&data)
            .ok_or_else(|| SutError::garbage(name(), "GET /api/v1/tools: no data.tools array"))
    }

    /// `tool` called through the proxy with these string arguments, within the request timeout.
    async fn call(&self, tool: &str, args: [(&str, &str); 2]) -> Result<CallToolResult, String> {
        let args = args.map(|(k, v)| (k.to_string(), json!(v))).into_iter();
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args.collect());
        let call = self.service.peer().call_tool(params);
        match tokio::time::timeout(self.live.proxy.check.request_timeout, call).await {
            Ok(answer) => answer.map_err(|e| readable(&e)),
            Err(_) => Err("no answer within the request timeout".into()),
        }
    }

    /// mcpproxy's `quarantine_security` `inspect_tools` for one server: its tools' approval
    /// hashes, by tool name; `None` when the proxy has no such tool or its answer has none.
    async fn inspect_hashes(&self, server: &str) -> Option<BTreeMap<String, String>> {
        let args = [("operation", "inspect_tools"), ("name", server)];
        let res = self.call("quarantine_security", args).await.ok()?;
        let text = res.content.iter().find_map(|c| c.as_text())?;
        hashes_in(&text.text)
    }

    /// The catalog, with each played server's hashes from `inspect_tools` when the catalog
    /// shows none.
    async fn read(&self, servers: &BTreeSet<String>) -> Result<BTreeMap<String, Seen>, SutError> {
        let mut seen = self.catalog().await?;
        let inspect = self.hash_from == HashFrom::InspectTools;
        for server in servers.iter().filter(|_| inspect) {
            let hashes = self.inspect_hashes(server).await;
            for (tool, hash) in hashes.into_iter().flatten() {
                if let Some(s) = seen.get_mut(&format!("{server}:{tool}")) {
                    s.hash = Some(hash);
                }
            }
        }
        Ok(seen)
    }

    /// Where this proxy shows approval hashes: in its catalog, else through mcpproxy's
    /// `inspect_tools`, else nowhere.
    async fn hashes_shown(&self) -> Result<HashFrom, SutError> {
        let seen = self.catalog().await?;
        let shown = |id: &String| seen.get(id).is_some_and(|s| s.hash.is_some());
        if self.witnesses.keys().any(shown) {
            return Ok(HashFrom::Catalog);
        }
        let Some((server, _)) = self.witnesses.keys().find_map(|id| id.split_once(':')) else {
            return Ok(HashFrom::Nowhere);
        };
        Ok(match self.inspect_hashes(server).await {
            Some(h) if !h.is_empty() => HashFrom::InspectTools,
            _ => HashFrom::Nowhere,
        })
    }

    /// Reads the proxy until `phase` has settled for every played tool (see the module doc and
    /// [`witnessed`]); at the bound, names the tools that had not, with what was missing.
    async fn settle(&self, phase: Phase) -> Result<Settled, SutError> {
        let (witnesses, before) = (&self.witnesses, &self.baseline);
        let start = Instant::now();
        let bound = settle_bound(self.live.settle_timeout, witnesses.len());
        let servers: BTreeSet<String> = witnesses
            .keys()
            .filter_map(|id| id.split_once(':').map(|(s, _)| s.to_string()))
            .collect();
        let played_of = |seen: &BTreeMap<String, Seen>| -> BTreeMap<String, Option<Seen>> {
            witnesses
                .keys()
                .map(|id| (id.clone(), seen.get(id).cloned()))
                .collect()
        };
        let mut seen = self.read(&servers).await?;
        let mut last = played_of(&seen);
        // the read before the current run of identical reads, and that run's length
        let mut before_run = last.clone();
        let mut same = 1;
        loop {
            let waiting: Vec<&String> = witnesses
                .iter()
                .filter(|(id, w)| !witnessed(phase, **w, before.get(*id), last[*id].as_ref()))
                .map(|(id, _)| id)
                .collect();
            // settled, or judged from this last read: a settled read names no tool
            if waiting.is_empty() && same >= QUIET_READS || start.elapsed() >= bound {
                let why = |id: &String| {
                    let (what, still) = match phase {
                        Phase::Before => return "not listed".to_string(),
                        Phase::After => ("change", "still the baseline's"),
                        Phase::Back => ("switch back", "not the baseline's again"),
                    };
                    let fields = witness_fields(witnesses[id]);
                    format!("no sign that the proxy applied the {what} (its {fields} {still})")
                };
                let mut unsettled: BTreeMap<String, String> = waiting
                    .into_iter()
                    .map(|id| (id.clone(), why(id)))
                    .collect();
                let changing = last
                    .iter()
                    .filter(|(id, now)| before_run.get(*id) != Some(now));
                for (id, _) in changing.filter(|_| same < QUIET_READS) {
                    let still = || "its state still changing".to_string();
                    unsettled.entry(id.clone()).or_insert_with(still);
                }
                return Ok(Settled {
                    seen,
                    unsettled,
                    waited: start.elapsed(),
                    ..Settled::default()
                });
            }
            tokio::time::sleep(POLL).await;
            seen = self.read(&servers).await?;
            let now = played_of(&seen);
            if now == last {
                same += 1;
            } else {
                same = 1;
                before_run = std::mem::replace(&mut last, now);
            }
        }
    }

    /// Waits until the replays' listing counts have stood still for [`LISTINGS_QUIET`], and
    /// [`FIRST_BASELINE`] has passed since the launch: the proxy's own startup listings are
    /// over (bounded by the re-list timeout).
    async fn listings_quiet(&self) {
        let (listed, launched) = (self.listed, self.launched);
        let start = Instant::now();
        let mut last = listings(listed);
        let mut still_since = Instant::now();
        while start.elapsed() < self.live.relist_timeout {
            if still_since.elapsed() >= LISTINGS_QUIET && launched.elapsed() >= FIRST_BASELINE {
                return;
            }
            tokio::time::sleep(POLL).await;
            let now = listings(listed);
            if now != last {
                last = now;
                still_since = Instant::now();
            }
        }
    }

    /// Switches every replay into `phase` (`after`, or `before` again) and waits until each
    /// server has been re-listed with it, then for the proxy to settle (see [`Self::settle`]);
    /// then calls each tool with `args`.
    async fn switched(&self, phase: Phase, args: &CallArgs) -> Result<Settled, SutError> {
        let state = match phase {
            Phase::After => "after",
            _ => "before",
        };
        let (not_relisted, at_switch) =
            self.write_and_wait(state, |_, (now, _)| now == state).await;
        let settled = self.settle(phase).await?;
        Ok(Settled {
            listings: listings_since(&at_switch, &listings(self.listed)),
            calls: self.calls(args).await,
            not_relisted,
            ..settled
        })
    }

    /// Asks every replay to send list_changed without changing a definition (the switch file
    /// gets a new second line, its first stays `before`) and waits until each server has been
    /// listed again; returns the servers that were not.
    async fn ping(&self, n: u32) -> BTreeSet<String> {
        let text = format!("before\nping {n}\n");
        // a count that moved at all (a restarted replay counts from 0 again)
        let moved = |(_, was): &(String, u64), (_, now): &(String, u64)| was != now;
        self.write_and_wait(&text, moved).await.0
    }

    /// Writes `text` to the switch file (whole or not at all: the replays follow every change
    /// of its text) and waits until every server's listing, against the one before the write,
    /// is `done`, or the re-list timeout passes. Returns the servers not done, and every
    /// server's listing before the write.
    async fn write_and_wait(
        &self,
        text: &str,
        done: impl Fn(&(String, u64), &(String, u64)) -> bool,
    ) -> (BTreeSet<String>, BTreeMap<String, (String, u64)>) {
        let was = listings(self.listed);
        let _ = write_atomic(self.ctrl, text.as_bytes());
        let start = Instant::now();
        loop {
            let missing: BTreeSet<String> = listings(self.listed)
                .into_iter()
                .filter(|(s, now)| was.get(s).is_none_or(|w| !done(w, now)))
                .map(|(s, _)| s)
                .collect();
            if missing.is_empty() || start.elapsed() > self.live.relist_timeout {
                return (missing, was);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Before the play, the servers whose list_changed the proxy ignores, with what was done.
    /// mcpproxy v0.60.0 starts adding servers before it registers the callback that re-lists a
    /// server on list_changed, and a client created in that window never gets it (its debug
    /// log: "No tool discovery callback set - notification ignored"). Such a server is
    /// restarted through mcpproxy's API (a new client, with the callback) and pinged again;
    /// a rug pull on a server that still ignores list_changed is missed, with that reason.
    async fn deaf_servers(&self) -> Result<BTreeMap<String, String>, SutError> {
        let deaf = self.ping(1).await;
        if deaf.is_empty() {
            return Ok(BTreeMap::new());
        }
        let mut restart_failed = BTreeMap::new();
        for server in &deaf {
            let path = format!("/api/v1/servers/{}/restart", path_segment(server));
            if let Err(e) = api(self.run, Method::POST, &path, None).await {
                restart_failed.insert(server.clone(), e);
            }
        }
        // the restarted servers' tools back in the catalog, the proxy's listings over
        let start = Instant::now();
        while start.elapsed() < self.live.relist_timeout {
            let seen = self.catalog().await?;
            if self.witnesses.keys().all(|id| seen.contains_key(id)) {
                break;
            }
            tokio::time::sleep(POLL).await;
        }
        self.listings_quiet().await;
        let still = self.ping(2).await;
        Ok(deaf
            .into_iter()
            .map(|server| {
                let what = match (restart_failed.get(&server), still.contains(&server)) {
                    (Some(e), _) => format!("restarting it failed ({e})"),
                    (None, true) => "restarted, it still ignored it".to_string(),
                    (None, false) => {
                        "evalgate restarted the server before the play, and it then re-listed"
                            .to_string()
                    }
                };
                let note = format!(
                    "at the start the proxy ignored list_changed from server {server:?} (asked \
                     to re-list without a change); {what}"
                );
                (server, note)
            })
            .collect())
    }

    /// Calls each tool through the proxy with arguments its served schema accepts: `true` =
    /// the call reached the replay.
    async fn calls(&self, calls: &CallArgs) -> Calls {
        let mut out = HashMap::new();
        for (id, args_json) in calls {
            let args = [("name", id.as_str()), ("args_json", args_json.as_str())];
            let answer = self.call(&self.live.call_tool, args).await;
            let answered = answer.as_ref().is_ok_and(|r| r.is_error != Some(true));
            let text =
                answer.map_or_else(|why| why, |r| serde_json::to_string(&r).unwrap_or_default());
            let through = answered && text.contains("replayed");
            out.insert(id.clone(), (through, text.chars().take(160).collect()));
        }
        out
    }

    /// For each played tool the proxy holds (`changed`, `pending`, …), what its diff endpoint
    /// names as changed against the approved definition.
    async fn diffs(&self, seen: &BTreeMap<String, Seen>) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for id in self.witnesses.keys() {
            let held = seen
                .get(id)
                .is_some_and(|s| s.status.as_deref().is_some_and(|st| st != "approved"));
            let Some((server, tool)) = id.split_once(':').filter(|_| held) else {
                continue;
            };
            let [server, tool] = [server, tool].map(path_segment);
            let path = format!("/api/v1/servers/{server}/tools/{tool}/diff");
            let answer = api(self.run, Method::GET, &path, None).await;
            let summary = answer.ok().as_ref().and_then(diff_summary);
            out.extend(summary.map(|d| (id.clone(), d)));
        }
        out
    }
}

/// `approval hash and description`, `approval hash`, …: what witnesses a tool's change.
fn witness_fields(w: Witness) -> String {
    let fields: Vec<&str> = [
        (w.hash, "approval hash"),
        (w.description, "description"),
        (w.schema, "input schema"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    match fields.as_slice() {
        [] => "state".into(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[async_trait]
impl Detector for RugPullLive {
    fn name(&self) -> &str {
        "rug-pull-live"
    }
    fn source(&self) -> String {
        format!("{}'s own quarantine", system_name(&self.proxy))
    }
    fn scope(&self) -> Option<Vec<Category>> {
        Some(vec![Category::RugPull])
    }
    fn time_limit(&self, per_request: Duration, entries: &[Entry]) -> Duration {
        let servers = layout(entries, Self::played).map_or(1, |l| l.specs.len());
        let ready = launch::ready_timeout(&self.proxy, servers);
        let played = entries.iter().filter(|e| Self::played(e).is_some()).count();
        let settle = settle_bound(self.settle_timeout, played);
        // startup listings, a ping (and a restart and a second ping for servers that ignored
        // it), then three phases of re-list + settle; per tool three calls and a diff read
        ready
            + FIRST_BASELINE
            + LISTINGS_QUIET * 2
            + self.relist_timeout * 6
            + settle * 3
            + per_request * (4 * played as u32 + 3)
            + Duration::from_secs(5)
    }
    async fn detect(&mut self, entries: &[Entry], _run: usize) -> Result<Vec<Decision>, SutError> {
        let layout = layout(entries, Self::played)
            .map_err(|detail| SutError::other(launch::system_name(&self.proxy), detail))?;
        let mut live = if layout.specs.is_empty() {
            BTreeMap::new()
        } else {
            self.play(&layout).await?
        };
        Ok(entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let outcome = live.remove(&i);
                // what the proxy showed; evalgate's own `unsettled:` marks stay on the live
                // outcome
                let signals = outcome.iter().flat_map(|o| &o.signals);
                let signals = signals.filter(|s| !s.starts_with("unsettled:")).cloned();
                let flagged = outcome.as_ref().is_some_and(|o| o.reported);
                let shown = Decision::new(&e.id, flagged, signals.collect());
                Decision {
                    live: outcome,
                    ..shown
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(status: Option<&str>, held: &[&str]) -> Seen {
        Seen {
            status: status.map(str::to_string),
            held: held.iter().map(|h| h.to_string()).collect(),
            ..Seen::default()
        }
    }

    /// An approved tool with this hash and description.
    fn shown(status: &str, hash: &str, description: &str) -> Seen {
        Seen {
            status: Some(status.into()),
            hash: Some(hash.into()),
            description: Some(description.into()),
            ..Seen::default()
        }
    }

    #[test]
    fn the_catalog_shows_each_tools_approval_what_holds_it_and_its_definition() {
        let data = json!({"tools": [
            {"server_name": "bank", "name": "pay", "approval_status": "approved",
             "hash": "sha256/v3:abc", "description": "Pay.",
             "schema": {"type": "object"}},
            {"server_name": "bank", "name": "send", "approval_status": "changed",
             "held_verdict": "block", "held_reason": "", "held_signals": ["desc_changed", 7]},
            {"server_name": "bank", "name": "quiet", "held_reason": "schema changed"},
            // no server: not a tool it can be asked about
            {"name": "orphan", "approval_status": "approved"}
        ]});
        let got = seen_in(&data).unwrap();
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            ["bank:pay", "bank:quiet", "bank:send"]
        );
        assert_eq!(
            got["bank:pay"],
            Seen {
                schema: Some(json!({"type": "object"})),
                ..shown("approved", "sha256/v3:abc", "Pay.")
            }
        );
        assert_eq!(got["bank:pay"].bare_hash(), Some("abc"));
        assert_eq!(
            got["bank:send"],
            seen(Some("changed"), &["held_verdict:block", "desc_changed"])
        );
        assert_eq!(
            got["bank:quiet"],
            seen(None, &["held_reason:schema changed"])
        );
        assert_eq!(seen_in(&json!({"servers": []})), None);
    }

    #[test]
    fn only_an_approved_tool_with_nothing_held_reports_no_change() {
        assert!(!seen(Some("approved"), &[]).reports_change());
        assert!(seen(Some("approved"), &["held_verdict:warn"]).reports_change());
        assert!(seen(Some("pending"), &[]).reports_change());
        assert!(seen(None, &[]).reports_change());
    }

    #[test]
    fn inspect_tools_gives_each_tools_hash() {
        let text = r#"{"server_name":"s","tools":[{"tool_name":"a","status":"approved","hash":"h1"},{"tool_name":"b"}],"total":2}"#;
        assert_eq!(
            hashes_in(text),
            Some(BTreeMap::from([("a".to_string(), "h1".to_string())]))
        );
        assert_eq!(
            hashes_in("No tool approval records found for server 's'"),
            None
        );
    }

    #[test]
    fn a_change_names_the_fields_it_touches_and_what_witnesses_it() {
        let entries: Vec<Entry> = [
            ("desc", json!({"name": "t", "description": "evil"})),
            ("schema", json!({"name": "t", "description": "fine",
                              "inputSchema": {"type": "object", "properties": {"k": {"type": "string"}}}})),
            ("hint", json!({"name": "t", "description": "fine",
                            "annotations": {"destructiveHint": true}})),
            // the first changed definition is the baseline's: only the second changes
            ("twice", json!([{"name": "t", "description": "fine"},
                             {"name": "t", "description": "evil"}])),
        ]
        .into_iter()
        .map(|(id, after)| {
            serde_json::from_value(json!({
                "id": id, "label": "malicious", "category": "rug_pull", "server": id,
                "tool": "t", "description": "d",
                "provenance": {"source": "self-authored", "license": "MIT"},
                "before": {"name": "t", "description": "fine"}, "after": after
            }))
            .unwrap()
        })
        .collect();
        let l = layout(&entries, RugPullLive::played).unwrap();
        let c = changes_of(&l);
        assert_eq!(c["desc:t"].fields, ["description"]);
        assert_eq!(c["schema:t"].fields, ["inputSchema"]);
        assert_eq!(c["hint:t"].fields, ["annotations"]);
        assert_eq!(c["twice:t"].fields, ["description"]);
        assert!(c["twice:t"].in_every.is_empty());
        assert_eq!(
            c["twice:t"].describe(),
            "the switch changed description, the name listed 2 times"
        );
        let w = |id: &str, from| Witness::of(&c[id], from, None);
        assert_eq!(
            w("desc:t", HashFrom::Catalog),
            Witness {
                hash: true,
                description: true,
                schema: false
            }
        );
        assert_eq!(
            w("schema:t", HashFrom::InspectTools),
            Witness {
                hash: true,
                description: false,
                schema: false
            }
        );
        // the input schema witnesses where the baseline showed the parameters served
        let served = |schema: Value| Seen {
            schema: Some(schema),
            ..Seen::default()
        };
        let shown = served(json!({"type": "object", "required": [],
                                  "properties": {"k": {"type": "string"}}}));
        let placeholder = served(json!({"type": "object", "properties": {}}));
        let ch = Change {
            input_schema: json!({"$schema": "x", "type": "object",
                                 "properties": {"k": {"type": "string"}}}),
            ..c["schema:t"].clone()
        };
        assert!(Witness::of(&ch, HashFrom::Catalog, Some(&shown)).schema);
        assert!(!Witness::of(&ch, HashFrom::Catalog, Some(&placeholder)).schema);
        // no parameters served: nothing to tell a placeholder by
        assert!(!Witness::of(&c["schema:t"], HashFrom::Catalog, Some(&placeholder)).schema);
        // no hash shown: a schema change has no witness, a description change still has one
        assert_eq!(w("schema:t", HashFrom::Nowhere), Witness::default());
        assert!(w("desc:t", HashFrom::Nowhere).description);
        // annotations are not hashed; a change not in every definition may not be the one kept
        assert_eq!(w("hint:t", HashFrom::Catalog), Witness::default());
        assert_eq!(w("twice:t", HashFrom::Catalog), Witness::default());
    }

    #[test]
    fn a_phase_is_witnessed_by_the_hash_and_description_moving_and_moving_back() {
        let both = Witness {
            hash: true,
            description: true,
            schema: false,
        };
        let base = shown("approved", "sha256/v3:aaa", "fine");
        let rehashed = shown("approved", "sha256/v3:bbb", "fine");
        let moved = shown("changed", "sha256/v3:bbb", "evil");
        let w = |phase, w, now: Option<&Seen>| witnessed(phase, w, Some(&base), now);
        // the approval record is written before the description the catalog shows
        assert!(!w(Phase::After, both, Some(&rehashed)));
        assert!(w(Phase::After, both, Some(&moved)));
        // withdrawn
        assert!(w(Phase::After, both, None));
        // a schema-only change: the hash alone, whatever the status
        let hash_only = Witness {
            hash: true,
            description: false,
            schema: false,
        };
        assert!(w(Phase::After, hash_only, Some(&rehashed)));
        assert!(!w(Phase::After, hash_only, Some(&base)));
        assert!(!w(Phase::Back, hash_only, Some(&rehashed)));
        // back: the baseline's hash under another label, even if held again
        let back = shown("changed", "sha256/v2:aaa", "fine");
        assert!(w(Phase::Back, both, Some(&back)));
        assert!(!w(Phase::Back, both, None));
        // nothing to witness: listed is enough
        let none = Witness::default();
        assert!(w(Phase::After, none, Some(&base)));
        assert!(w(Phase::Back, none, Some(&base)));
        assert!(witnessed(Phase::Before, none, None, Some(&base)));
        assert!(!witnessed(Phase::Before, none, None, None));
    }

    #[test]
    fn the_listed_file_gives_the_state_and_the_listings_answered() {
        let d = tempfile::tempdir().unwrap();
        let (a, b, c) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        std::fs::write(&a, "after\n3\n").unwrap();
        std::fs::write(&b, "before").unwrap();
        let files = vec![("a".to_string(), a), ("b".into(), b), ("c".into(), c)];
        let now = listings(&files);
        assert_eq!(now["a"], ("after".to_string(), 3));
        assert_eq!(now["b"], ("before".to_string(), 0));
        assert_eq!(now["c"], (String::new(), 0));
        let from = BTreeMap::from([("a".to_string(), ("before".to_string(), 1))]);
        let since = listings_since(&from, &now);
        assert_eq!(since["a"], 2);
        assert_eq!(since["b"], 0);
    }

    #[test]
    fn a_held_tools_diff_names_what_differs_from_the_approved_definition() {
        let d = json!({"status": "changed", "previous_description": "d", "current_description": "d",
                       "previous_schema": "{\"type\":\"object\",\"a\":1}",
                       "current_schema": "{\"a\":1,\"type\":\"object\"}",
                       "previous_output_schema": "{\"type\":\"object\"}",
                       "current_output_schema": ""});
        assert_eq!(
            diff_summary(&d).as_deref(),
            Some(
                r#"the proxy's diff against the approved definition: output schema {"type":"object"} → none"#
            )
        );
        let long = "x".repeat(100);
        let d = json!({"previous_description": format!("{long} then fine."),
                       "current_description": format!("{long} then evil.")});
        assert_eq!(
            diff_summary(&d).as_deref(),
            Some(
                "the proxy's diff against the approved definition: description \
                 …xxxxxxxxxxxxxx then fine. → …xxxxxxxxxxxxxx then evil."
            )
        );
        assert_eq!(
            diff_summary(&json!({"aspects": ["changed:description"]})).as_deref(),
            Some("the proxy's diff names changed:description")
        );
        assert_eq!(diff_summary(&json!({"status": "changed"})), None);
    }

    fn calls(through: &[(&str, bool)]) -> Calls {
        through
            .iter()
            .map(|(id, ok)| {
                (
                    id.to_string(),
                    (*ok, if *ok { "replayed" } else { "refused" }.into()),
                )
            })
            .collect()
    }

    fn settled(tools: &[(&str, Seen)], calls: Calls) -> Settled {
        Settled {
            seen: tools
                .iter()
                .map(|(id, s)| (id.to_string(), s.clone()))
                .collect(),
            waited: Duration::from_millis(500),
            calls,
            ..Settled::default()
        }
    }

    #[test]
    fn each_played_tool_is_judged_on_what_the_proxy_showed_and_let_through() {
        let id_of: BTreeMap<usize, String> = [
            (0, "a:caught".to_string()),
            (2, "a:gone".to_string()),
            (3, "b:missed".to_string()),
            (5, "a:refused".to_string()),
        ]
        .into();
        let approved = || seen(Some("approved"), &[]);
        let o = Observed {
            before: settled(
                &[
                    ("a:caught", approved()),
                    ("a:gone", approved()),
                    ("b:missed", approved()),
                    ("a:refused", approved()),
                ],
                calls(&[
                    ("a:caught", true),
                    ("a:gone", true),
                    ("b:missed", true),
                    ("a:refused", false),
                ]),
            ),
            after: Settled {
                not_relisted: BTreeSet::from(["b".to_string()]),
                ..settled(
                    &[
                        ("a:caught", seen(Some("changed"), &["held_verdict:block"])),
                        // a:gone withdrawn
                        ("b:missed", seen(Some("changed"), &[])),
                        ("a:refused", approved()),
                    ],
                    calls(&[
                        ("a:caught", false),
                        ("a:gone", true),
                        ("b:missed", false),
                        ("a:refused", false),
                    ]),
                )
            },
            back: settled(
                &[
                    ("a:caught", approved()),
                    ("b:missed", approved()),
                    ("a:refused", approved()),
                ],
                calls(&[
                    ("a:caught", true),
                    ("a:gone", true),
                    ("b:missed", true),
                    ("a:refused", true),
                ]),
            ),
            ..Observed::default()
        };
        let got = judge(&id_of, &o, Duration::from_secs(10));
        assert_eq!(got.keys().copied().collect::<Vec<_>>(), [0, 2, 3, 5]);
        assert_eq!(
            got[&0],
            LiveOutcome {
                relisted: true,
                reported: true,
                blocked: true,
                restored: true,
                baseline_ok: true,
                signals: vec!["status:changed".into(), "held_verdict:block".into()],
                note: None,
            }
        );
        // withdrawn: reported, still callable, never restored to the catalog
        let gone = &got[&2];
        assert!(gone.reported && !gone.blocked && !gone.restored && gone.baseline_ok);
        assert_eq!(gone.signals, ["withdrawn"]);
        assert_eq!(
            gone.note.as_deref(),
            Some(
                "not restored: after the switch back the tool was not listed, and the call went through"
            )
        );
        // a server never re-listed missed the change, whatever its catalog says
        let missed = &got[&3];
        assert!(!missed.relisted && !missed.reported && !missed.blocked && !missed.restored);
        assert!(missed.signals.is_empty());
        assert_eq!(
            missed.note.as_deref(),
            Some("the proxy never re-listed server \"b\" within 10 s of list_changed")
        );
        // refused before any change: the refusal after it says nothing
        let refused = &got[&5];
        assert!(!refused.baseline_ok && !refused.blocked && !refused.reported);
        assert!(refused.restored);
        assert_eq!(
            refused.note.as_deref(),
            Some(
                "before any change the tool was approved and the call did not go through (refused); \
                 not reported: the switch changed nothing in the definition; the proxy then showed \
                 the tool approved, and the call did not go through (refused)"
            )
        );
    }

    #[test]
    fn a_miss_carries_the_proxys_reason_and_an_unsettled_tool_says_so() {
        let id_of: BTreeMap<usize, String> =
            [(0, "s:accepted".to_string()), (1, "s:held".to_string())].into();
        let mut o = Observed {
            changes: BTreeMap::from([
                (
                    "s:accepted".to_string(),
                    Change {
                        fields: vec!["inputSchema".into()],
                        in_every: vec!["inputSchema".into()],
                        listed: 1,
                        ..Change::default()
                    },
                ),
                (
                    "s:held".to_string(),
                    Change {
                        fields: vec!["outputSchema".into()],
                        in_every: vec!["outputSchema".into()],
                        listed: 1,
                        ..Change::default()
                    },
                ),
            ]),
            before: settled(
                &[
                    (
                        "s:accepted",
                        shown("approved", "sha256/v3:aaaaaaaaaaaaaaaa", "d"),
                    ),
                    (
                        "s:held",
                        shown("approved", "sha256/v3:cccccccccccccccc", "d"),
                    ),
                ],
                calls(&[("s:accepted", true), ("s:held", true)]),
            ),
            after: Settled {
                listings: BTreeMap::from([("s".to_string(), 1)]),
                ..settled(
                    &[
                        (
                            "s:accepted",
                            shown("approved", "sha256/v3:bbbbbbbbbbbbbbbb", "d"),
                        ),
                        (
                            "s:held",
                            shown("approved", "sha256/v3:dddddddddddddddd", "d"),
                        ),
                    ],
                    calls(&[("s:accepted", true), ("s:held", true)]),
                )
            },
            back: Settled {
                listings: BTreeMap::from([("s".to_string(), 2)]),
                ..settled(
                    &[
                        (
                            "s:accepted",
                            shown("approved", "sha256/v3:aaaaaaaaaaaaaaaa", "d"),
                        ),
                        (
                            "s:held",
                            shown("changed", "sha256/v3:cccccccccccccccc", "d"),
                        ),
                    ],
                    calls(&[("s:accepted", true), ("s:held", false)]),
                )
            },
            diff_back: BTreeMap::from([(
                "s:held".to_string(),
                "the proxy's diff against the approved definition: output schema {} → none"
                    .to_string(),
            )]),
            ..Observed::default()
        };
        o.back
            .unsettled
            .insert("s:held".into(), "its state still changing".into());
        o.deaf_at_start.insert(
            "s".into(),
            "at the start the proxy ignored list_changed".into(),
        );
        let got = judge(&id_of, &o, Duration::from_secs(10));
        let accepted = &got[&0];
        assert!(!accepted.reported && accepted.restored && accepted.signals.is_empty());
        assert_eq!(
            accepted.note.as_deref(),
            Some(
                "at the start the proxy ignored list_changed; not reported: the switch changed \
                 inputSchema; the proxy then showed the tool approved with its approval hash \
                 moved aaaaaaaaaaaa → bbbbbbbbbbbb (the changed definition accepted), and the \
                 call went through"
            )
        );
        let held = &got[&1];
        assert!(!held.reported && !held.restored);
        assert_eq!(held.signals, ["unsettled:back"]);
        let note = held.note.as_deref().unwrap();
        assert!(
            note.starts_with(
                "unsettled after the switch back: its state still changing when the 0.5 s bound \
                 ran out; judged from that last read; at the start the proxy ignored \
                 list_changed; not reported: "
            ),
            "{note}"
        );
        assert!(
            note.ends_with(
                "not restored: after the switch back the tool was changed; the proxy's diff \
                 against the approved definition: output schema {} → none, and the call did not \
                 go through (refused); server \"s\" answered 2 listings after the switch back"
            ),
            "{note}"
        );
    }

    #[test]
    fn the_settle_bound_grows_with_the_played_tools() {
        assert_eq!(settle_bound(None, 21), Duration::from_secs(5));
        assert_eq!(settle_bound(None, 200), Duration::from_secs(7));
    }

    #[test]
    fn only_entries_with_a_before_and_an_after_are_played() {
        let entry = |extra: Value| -> Entry {
            let mut v = json!({
                "id": "x", "label": "malicious", "category": "rug_pull", "server": "s",
                "tool": "t", "description": "d",
                "provenance": {"source": "self-authored", "license": "MIT"}
            });
            v.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            serde_json::from_value(v).unwrap()
        };
        let b = json!({"name": "t", "description": "fine"});
        let a = json!({"name": "t", "description": "now evil"});
        assert_eq!(
            RugPullLive::played(&entry(json!({"before": b, "after": a}))),
            Some((b.clone(), Some(vec![a.clone()])))
        );
        assert_eq!(RugPullLive::played(&entry(json!({"before": b}))), None);
        assert_eq!(RugPullLive::played(&entry(json!({"after": a}))), None);
    }
}
