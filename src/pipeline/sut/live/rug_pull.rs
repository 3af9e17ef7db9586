//! `rug-pull-live`: every entry that has `before` and `after` is played against the running
//! proxy. The replays serve `before`, the proxy baselines it, then evalgate switches the replays
//! to `after` (they send `notifications/tools/list_changed`) and records whether the proxy (a)
//! reports the change (approval status, held verdict, or the tool withdrawn), (b) refuses a call
//! to the changed tool, and (c) after a switch back, approves the tool and forwards calls again.
//! A proxy that never re-lists has missed the change, with that reason. Each run launches a
//! fresh proxy.

use super::LiveConfig;
use super::client::{client, get};
use super::layout::{CallArgs, Layout, layout};
use crate::infra::process::Supervisor;
use crate::pipeline::dataset::{Category, Entry};
use crate::pipeline::sut::launch::spec::LaunchSpec;
use crate::pipeline::sut::launch::{self, Quarantine, Running};
use crate::pipeline::sut::{Decision, Detector, LiveOutcome, SutError};
use async_trait::async_trait;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Rug-pulls played against the running proxy.
pub struct RugPullLive {
    /// The proxy launched for each measurement.
    proxy: LaunchSpec,
    sup: Supervisor,
    call_tool: String,
    relist_timeout: Duration,
}

/// What the proxy shows of one tool at one moment.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    /// `approved`, `changed`, … ; `None` when the tool is not listed at all.
    status: Option<String>,
    held: Vec<String>,
}

impl Seen {
    fn reports_change(&self) -> bool {
        match &self.status {
            None => true,
            Some(s) => s != "approved" || !self.held.is_empty(),
        }
    }
}

/// What `GET /api/v1/tools` shows of each listed tool, by `server:tool`; `None` without a
/// `tools` array.
fn seen_in(data: &Value) -> Option<BTreeMap<String, Seen>> {
    let tools = data.get("tools").and_then(Value::as_array)?;
    let mut out = BTreeMap::new();
    for t in tools {
        let (Some(server), Some(name)) = (
            t.get("server_name").and_then(Value::as_str),
            t.get("name").and_then(Value::as_str),
        ) else {
            continue;
        };
        let mut held: Vec<String> = Vec::new();
        for k in ["held_verdict", "held_reason"] {
            if let Some(v) = t.get(k).and_then(Value::as_str).filter(|v| !v.is_empty()) {
                held.push(format!("{k}:{v}"));
            }
        }
        if let Some(sig) = t.get("held_signals").and_then(Value::as_array) {
            held.extend(sig.iter().filter_map(Value::as_str).map(str::to_string));
        }
        out.insert(
            format!("{server}:{name}"),
            Seen {
                status: t
                    .get("approval_status")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                held,
            },
        );
    }
    Some(out)
}

/// Per `server:tool`: did the call reach the replay, and (shortened) what came back.
type Calls = HashMap<String, (bool, String)>;

/// What one play observed, in its three phases: the baseline, the rug pulled, put back.
struct Observed {
    before: BTreeMap<String, Seen>,
    after: BTreeMap<String, Seen>,
    back: BTreeMap<String, Seen>,
    calls_before: Calls,
    calls_after: Calls,
    calls_back: Calls,
    /// The servers not re-listed after the switch to `after`, and after the switch back.
    not_relisted: BTreeSet<String>,
    not_relisted_back: BTreeSet<String>,
}

/// Judges each played entry from what was observed: reported, blocked, restored, and why not.
fn judge(
    id_of: &BTreeMap<usize, String>,
    o: &Observed,
    relist_timeout: Duration,
) -> BTreeMap<usize, LiveOutcome> {
    let mut out = BTreeMap::new();
    for (&i, id) in id_of {
        let server = id.split_once(':').map_or("", |(s, _)| s);
        let missing = Seen {
            status: None,
            held: vec![],
        };
        let seen_before = o.before.get(id).unwrap_or(&missing);
        let seen_after = o.after.get(id).unwrap_or(&missing);
        let seen_back = o.back.get(id).unwrap_or(&missing);
        let through = |m: &Calls| m.get(id).is_some_and(|c| c.0);
        let baseline_ok = !seen_before.reports_change() && through(&o.calls_before);
        let relisted = !o.not_relisted.contains(server);
        let mut notes = Vec::new();
        if !baseline_ok {
            notes.push(format!(
                "before any change the tool was {} and its call {}",
                seen_before.status.as_deref().unwrap_or("not listed"),
                if through(&o.calls_before) {
                    "went through".to_string()
                } else {
                    format!(
                        "did not go through ({})",
                        o.calls_before.get(id).map(|c| c.1.as_str()).unwrap_or("")
                    )
                }
            ));
        }
        let reported = relisted && seen_after.reports_change();
        // a call refused before any change says nothing about the change
        let blocked = relisted && through(&o.calls_before) && !through(&o.calls_after);
        if !relisted {
            notes.push(format!(
                "the proxy never re-listed server {server:?} within {} s of list_changed",
                relist_timeout.as_secs_f64()
            ));
        }
        let restored = relisted
            && !o.not_relisted_back.contains(server)
            && !seen_back.reports_change()
            && through(&o.calls_back);
        let mut signals = Vec::new();
        if reported {
            match &seen_after.status {
                Some(s) => signals.push(format!("status:{s}")),
                None => signals.push("withdrawn".into()),
            }
            signals.extend(seen_after.held.iter().cloned());
        }
        out.insert(
            i,
            LiveOutcome {
                relisted,
                reported,
                blocked,
                restored,
                baseline_ok,
                signals,
                note: (!notes.is_empty()).then(|| notes.join("; ")),
            },
        );
    }
    out
}

impl RugPullLive {
    pub fn new(proxy: &LaunchSpec, cfg: &LiveConfig, sup: &Supervisor) -> RugPullLive {
        let call_tool = cfg.call_tool.clone().unwrap_or_else(|| {
            if proxy.kind == crate::pipeline::sut::kind::SutKind::Mcpproxy {
                // the one variant mcpproxy never refuses for the tool's annotations
                // (`call_tool_read`/`_write` on a destructiveHint tool are refused by
                // internal/contracts/intent.go, whatever the rug-pull did)
                "call_tool_destructive".into()
            } else {
                "call_tool".into()
            }
        });
        RugPullLive {
            proxy: proxy.clone(),
            sup: sup.clone(),
            call_tool,
            relist_timeout: Duration::from_secs_f64(cfg.relist_timeout.unwrap_or(10.0)),
        }
    }

    fn played(e: &Entry) -> Option<(Value, Option<Value>)> {
        match (&e.before, &e.after) {
            (Some(b), Some(a)) => Some((b.clone(), Some(a.clone()))),
            _ => None,
        }
    }

    /// Every listed tool's approval state, by `server:tool`.
    async fn catalog(run: &Running) -> Result<BTreeMap<String, Seen>, SutError> {
        let data = get(run, &client(), "/api/v1/tools")
            .await
            .map_err(|detail| SutError::Other {
                system: run.name.clone(),
                detail,
            })?;
        seen_in(&data).ok_or_else(|| SutError::Garbage {
            system: run.name.clone(),
            detail: "GET /api/v1/tools: no data.tools array".into(),
        })
    }

    /// Polls the catalog until three reads in a row agree (the proxy has settled).
    async fn settled(run: &Running) -> Result<BTreeMap<String, Seen>, SutError> {
        let start = Instant::now();
        let mut last = Self::catalog(run).await?;
        let mut same = 0;
        while same < 2 && start.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let now = Self::catalog(run).await?;
            if now == last {
                same += 1;
            } else {
                same = 0;
                last = now;
            }
        }
        Ok(last)
    }

    /// Switches every replay to `state` and waits until each server has been re-listed with
    /// it; returns the servers that were not.
    async fn switch(
        &self,
        ctrl: &Path,
        listed: &[(String, PathBuf)],
        state: &str,
    ) -> BTreeSet<String> {
        let _ = std::fs::write(ctrl, state);
        let start = Instant::now();
        loop {
            let missing: BTreeSet<String> = listed
                .iter()
                .filter(|(_, p)| !std::fs::read_to_string(p).is_ok_and(|t| t.trim() == state))
                .map(|(s, _)| s.clone())
                .collect();
            if missing.is_empty() || start.elapsed() > self.relist_timeout {
                return missing;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Calls each tool through the proxy with arguments its served schema accepts: `true` =
    /// the call reached the replay.
    async fn calls(
        &self,
        service: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
        calls: &CallArgs,
    ) -> Calls {
        let mut out = HashMap::new();
        for (id, args_json) in calls {
            let mut args = serde_json::Map::new();
            args.insert("name".into(), json!(id));
            args.insert("args_json".into(), json!(args_json));
            let params = CallToolRequestParams::new(self.call_tool.clone()).with_arguments(args);
            let r = tokio::time::timeout(
                self.proxy.check.request_timeout,
                service.peer().call_tool(params),
            )
            .await;
            let (through, text) = match r {
                Ok(Ok(res)) => {
                    let text = serde_json::to_string(&res).unwrap_or_default();
                    (
                        res.is_error != Some(true) && text.contains("replayed"),
                        text,
                    )
                }
                Ok(Err(e)) => (false, crate::infra::mcp::readable(&e)),
                Err(_) => (false, "no answer within the request timeout".into()),
            };
            let short: String = text.chars().take(160).collect();
            out.insert(id.clone(), (through, short));
        }
        out
    }

    async fn play(&self, layout: &Layout) -> Result<BTreeMap<usize, LiveOutcome>, SutError> {
        let running =
            super::launch_over(&self.proxy, &self.sup, layout, Quarantine::On, |i, root| {
                vec![
                    "--switch-file".into(),
                    root.join("switch").display().to_string(),
                    "--listed-file".into(),
                    root.join(format!("listed-{i:04}")).display().to_string(),
                ]
            })
            .await?;
        let root = running.dir.path().to_path_buf();
        let ctrl = root.join("switch");
        let listed: Vec<(String, PathBuf)> = layout
            .specs
            .keys()
            .enumerate()
            .map(|(i, s)| (s.clone(), root.join(format!("listed-{i:04}"))))
            .collect();
        let service = crate::infra::mcp::connect(
            &crate::infra::mcp::Endpoint::Http {
                url: format!("{}/mcp", running.base),
                headers: vec![("X-API-Key".into(), running.api_key.clone())],
            },
            (),
            &crate::infra::mcp::ConnectOpts {
                sup: &self.sup,
                timeout: self.proxy.check.request_timeout,
                name: &running.name,
                lean_http: false,
            },
        )
        .await
        .map_err(|e| {
            SutError::connect_failed(
                running.name.clone(),
                &e.context("cannot connect to /mcp"),
                "",
            )
        })?
        .service;
        let (args_before, args_after) = layout.call_args();

        // (0) the baseline: approved and callable
        let before = Self::settled(&running).await?;
        let calls_before = self.calls(&service, &args_before).await;
        // (1) the rug is pulled
        let not_relisted = self.switch(&ctrl, &listed, "after").await;
        let after = Self::settled(&running).await?;
        let calls_after = self.calls(&service, &args_after).await;
        // (2) and put back
        let not_relisted_back = self.switch(&ctrl, &listed, "before").await;
        let back = Self::settled(&running).await?;
        let calls_back = self.calls(&service, &args_before).await;
        drop(service);
        running.proxy.terminate(Duration::from_secs(2)).await;

        let observed = Observed {
            before,
            after,
            back,
            calls_before,
            calls_after,
            calls_back,
            not_relisted,
            not_relisted_back,
        };
        Ok(judge(&layout.id_of, &observed, self.relist_timeout))
    }
}

#[async_trait]
impl Detector for RugPullLive {
    fn name(&self) -> &str {
        "rug-pull-live"
    }
    fn scope(&self) -> Option<Vec<Category>> {
        Some(vec![Category::RugPull])
    }
    fn time_limit(&self, per_request: Duration, entries: &[Entry]) -> Duration {
        let servers = layout(entries, Self::played).map_or(1, |l| l.specs.len());
        let ready = launch::ready_timeout(&self.proxy, servers);
        let played = entries.iter().filter(|e| Self::played(e).is_some()).count() as u32;
        ready + (self.relist_timeout + Duration::from_secs(5)) * 3 + per_request * (3 * played + 3)
    }
    async fn detect(&mut self, entries: &[Entry], _run: usize) -> Result<Vec<Decision>, SutError> {
        let layout = layout(entries, Self::played).map_err(|detail| SutError::Other {
            system: launch::system_name(&self.proxy),
            detail,
        })?;
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
                Decision {
                    entry_id: e.id.clone(),
                    flagged: outcome.as_ref().is_some_and(|o| o.reported),
                    signals: outcome
                        .as_ref()
                        .map(|o| o.signals.clone())
                        .unwrap_or_default(),
                    live: outcome,
                    not_applicable: false,
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
        }
    }

    #[test]
    fn the_catalog_shows_each_tools_approval_and_what_holds_it() {
        let data = json!({"tools": [
            {"server_name": "bank", "name": "pay", "approval_status": "approved"},
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
        assert_eq!(got["bank:pay"], seen(Some("approved"), &[]));
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
        // withdrawn from the catalog
        assert!(seen(None, &[]).reports_change());
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

    fn catalog(tools: &[(&str, Seen)]) -> BTreeMap<String, Seen> {
        tools
            .iter()
            .map(|(id, s)| (id.to_string(), s.clone()))
            .collect()
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
            before: catalog(&[
                ("a:caught", approved()),
                ("a:gone", approved()),
                ("b:missed", approved()),
                ("a:refused", approved()),
            ]),
            after: catalog(&[
                ("a:caught", seen(Some("changed"), &["held_verdict:block"])),
                // a:gone withdrawn
                ("b:missed", seen(Some("changed"), &[])),
                ("a:refused", approved()),
            ]),
            back: catalog(&[
                ("a:caught", approved()),
                ("b:missed", approved()),
                ("a:refused", approved()),
            ]),
            calls_before: calls(&[
                ("a:caught", true),
                ("a:gone", true),
                ("b:missed", true),
                ("a:refused", false),
            ]),
            calls_after: calls(&[
                ("a:caught", false),
                ("a:gone", true),
                ("b:missed", false),
                ("a:refused", false),
            ]),
            calls_back: calls(&[
                ("a:caught", true),
                ("a:gone", true),
                ("b:missed", true),
                ("a:refused", true),
            ]),
            not_relisted: BTreeSet::from(["b".to_string()]),
            not_relisted_back: BTreeSet::new(),
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
                "before any change the tool was approved and its call did not go through (refused)"
            )
        );
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
            Some((b.clone(), Some(a.clone())))
        );
        assert_eq!(RugPullLive::played(&entry(json!({"before": b}))), None);
        assert_eq!(RugPullLive::played(&entry(json!({"after": a}))), None);
    }
}
