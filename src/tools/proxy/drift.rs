//! The reference proxy's tool-definition drift policy (mcpproxy's quarantine of changed tools,
//! with the Helio `on_tool_drift` design).
//!
//! Every listing of an upstream (first connect and each re-list after
//! `notifications/tools/list_changed`) is observed as raw MCP definitions. The first definition
//! seen for `server:tool` is its approved baseline; baselines outlive the tool's removal, so a
//! remove/re-add cannot reset them. A tool is drifted while the listing repeats its name
//! (`duplicate`, whatever the order) or its definition's fingerprint differs from the baseline
//! (`changed:<aspect>`); a listing equal to the baseline again clears the drift. Servers that are
//! not tracked (quarantine off, or `trust_mode: "auto"`) have every change auto-approved.

use super::config::{OnToolDrift, ProxyConfig};
use crate::pipeline::sut::drift::{drift_signals, fingerprint};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The approval state of one listed tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolState {
    pub server: String,
    /// The bare tool name.
    pub name: String,
    /// Every definition the latest listing carries under this name, in listing order (more
    /// than one = `duplicate`). The first is the one the catalog uses.
    pub definitions: Vec<Value>,
    /// The approved definition.
    pub baseline: Value,
    /// Drift aspects (`duplicate`, `changed:<aspect>`); empty = approved.
    pub aspects: Vec<String>,
}

impl ToolState {
    pub fn id(&self) -> String {
        format!("{}:{}", self.server, self.name)
    }
    /// The definition the catalog uses (the first carrying the name).
    pub fn current(&self) -> &Value {
        &self.definitions[0]
    }
    /// The current definition, or all of them as an array when the name is repeated.
    pub fn current_all(&self) -> Value {
        match self.definitions.as_slice() {
            [one] => one.clone(),
            many => Value::Array(many.to_vec()),
        }
    }
    pub fn drifted(&self) -> bool {
        !self.aspects.is_empty()
    }
    /// mcpproxy's `approval_status`: `approved` or `changed`.
    pub fn approval_status(&self) -> &'static str {
        if self.drifted() {
            "changed"
        } else {
            "approved"
        }
    }
    /// Fingerprint of the current definition.
    pub fn hash(&self) -> String {
        fingerprint(self.current())
    }
}

/// Baselines, latest listings and drift state of every upstream.
#[derive(Debug, Default)]
pub struct DriftTracker {
    pub mode: OnToolDrift,
    quarantine: bool,
    auto_approved: BTreeSet<String>,
    baselines: HashMap<String, Value>,
    /// Each server's latest listing, in first-seen order.
    servers: BTreeMap<String, Vec<ToolState>>,
}

impl DriftTracker {
    /// The policy of a proxy config: `on_tool_drift`, `quarantine_enabled` and each server's
    /// `trust_mode`.
    pub fn from_config(cfg: &ProxyConfig) -> DriftTracker {
        DriftTracker {
            mode: cfg.on_tool_drift,
            quarantine: cfg.quarantine(),
            auto_approved: cfg
                .mcp_servers
                .iter()
                .filter(|s| !cfg.drift_tracked(s))
                .map(|s| s.name.clone())
                .collect(),
            ..DriftTracker::default()
        }
    }

    /// Whether `server`'s definitions are tracked for drift.
    pub fn tracks(&self, server: &str) -> bool {
        self.quarantine && !self.auto_approved.contains(server)
    }

    /// Takes a new listing of `server` (raw MCP definitions; ones without a string `name` are
    /// ignored) and returns what changed, as lines for the proxy's log.
    pub fn observe(&mut self, server: &str, definitions: Vec<Value>) -> Vec<String> {
        let (tracked, mode) = (self.tracks(server), self.mode);
        let mut groups: Vec<(String, Vec<Value>)> = Vec::new();
        for d in definitions {
            let Some(name) = d.get("name").and_then(Value::as_str) else {
                continue;
            };
            match groups.iter_mut().find(|g| g.0 == name) {
                Some(g) => g.1.push(d),
                None => groups.push((name.to_string(), vec![d])),
            }
        }
        let old = self.servers.remove(server).unwrap_or_default();
        let mut events = Vec::new();
        let mut new_baselines = 0;
        let mut tools = Vec::with_capacity(groups.len());
        for (name, definitions) in groups {
            let id = format!("{server}:{name}");
            let baseline = match self.baselines.get(&id) {
                Some(b) if tracked => b.clone(),
                // first sight, or auto-approved: the definition is the baseline
                known => {
                    new_baselines += usize::from(known.is_none());
                    self.baselines.insert(id.clone(), definitions[0].clone());
                    definitions[0].clone()
                }
            };
            // definitions carry a `name`, so they are objects: one whose fingerprint differs
            // from the baseline's always has a changed aspect
            let aspects = if tracked {
                drift_signals(&baseline, &definitions)
            } else {
                Vec::new()
            };
            let t = ToolState {
                server: server.to_string(),
                name,
                definitions,
                baseline,
                aspects,
            };
            let before = old
                .iter()
                .find(|o| o.name == t.name)
                .map_or(&[][..], |o| o.aspects.as_slice());
            if t.drifted() && t.aspects != before {
                let aspects = t.aspects.join(", ");
                events.push(format!(
                    "evalgate proxy: tool_drift {id} [{aspects}] (mode {mode})"
                ));
            } else if !t.drifted() && !before.is_empty() {
                events.push(format!("evalgate proxy: tool_drift_reverted {id}"));
            }
            tools.push(t);
        }
        if tracked && new_baselines > 0 {
            events.insert(0, format!("evalgate proxy: {server}: {new_baselines} tool definition(s) baselined for drift detection (on_tool_drift: {mode}; baselines are in memory, a restart re-baselines)"));
        }
        self.servers.insert(server.to_string(), tools);
        events
    }

    /// The state of one listed tool.
    pub fn tool(&self, server: &str, name: &str) -> Option<&ToolState> {
        self.servers.get(server)?.iter().find(|t| t.name == name)
    }

    /// Every listed tool, sorted by server then name.
    pub fn listing(&self) -> Vec<ToolState> {
        let mut out: Vec<ToolState> = self.servers.values().flatten().cloned().collect();
        out.sort_by(|a, b| (&a.server, &a.name).cmp(&(&b.server, &b.name)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    impl DriftTracker {
        /// A tracker that tracks every server.
        fn new(mode: OnToolDrift) -> DriftTracker {
            DriftTracker {
                mode,
                quarantine: true,
                ..DriftTracker::default()
            }
        }

        /// The drift aspects of a listed `server:tool`, `None` when it is approved or not listed.
        fn drifted(&self, id: &str) -> Option<&[String]> {
            let (server, name) = id.split_once(':')?;
            self.tool(server, name)
                .map(|t| t.aspects.as_slice())
                .filter(|a| !a.is_empty())
        }

        /// Whether calls to `id` are refused and it is kept out of the index.
        fn blocks(&self, id: &str) -> bool {
            self.mode == OnToolDrift::Block && self.drifted(id).is_some()
        }
    }

    fn def(name: &str, desc: &str) -> Value {
        json!({"name": name, "description": desc, "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}})
    }

    fn drifted(lines: &[String]) -> Vec<&str> {
        let drift = lines.iter().filter(|l| l.contains(" tool_drift "));
        drift.map(String::as_str).collect()
    }

    #[test]
    fn first_sight_approves() {
        let mut t = DriftTracker::new(OnToolDrift::Block);
        let ev = t.observe("s", vec![def("a", "A"), def("b", "B")]);
        assert_eq!(
            ev,
            [
                "evalgate proxy: s: 2 tool definition(s) baselined for drift detection (on_tool_drift: block; baselines are in memory, a restart re-baselines)"
            ]
        );
        assert!(t.drifted("s:a").is_none() && !t.blocks("s:a"));
        let l = t.listing();
        assert_eq!(l.len(), 2);
        assert!(l.iter().all(|x| x.approval_status() == "approved"));
        assert_eq!(l[0].hash(), fingerprint(&def("a", "A")));
        // the same listing again changes nothing
        assert!(
            t.observe("s", vec![def("a", "A"), def("b", "B")])
                .is_empty()
        );
    }

    #[test]
    fn a_change_drifts_with_its_aspects_and_a_revert_clears_it() {
        let mut t = DriftTracker::new(OnToolDrift::Block);
        t.observe("s", vec![def("a", "A"), def("b", "B")]);
        let ev = t.observe("s", vec![def("a", "A evil"), def("b", "B")]);
        assert_eq!(
            drifted(&ev),
            ["evalgate proxy: tool_drift s:a [changed:description] (mode block)"]
        );
        assert_eq!(
            ev[0],
            "evalgate proxy: tool_drift s:a [changed:description] (mode block)"
        );
        assert_eq!(
            t.drifted("s:a"),
            Some(&["changed:description".to_string()][..])
        );
        assert!(t.blocks("s:a") && !t.blocks("s:b"));
        let a = t.tool("s", "a").unwrap();
        assert_eq!(a.approval_status(), "changed");
        assert_eq!(a.baseline, def("a", "A"));
        assert_eq!(a.current(), &def("a", "A evil"));
        // unchanged drift is not logged twice
        assert!(
            t.observe("s", vec![def("a", "A evil"), def("b", "B")])
                .is_empty()
        );
        // revert re-approves
        let ev = t.observe("s", vec![def("a", "A"), def("b", "B")]);
        assert_eq!(ev, ["evalgate proxy: tool_drift_reverted s:a"]);
        assert!(t.drifted("s:a").is_none());
    }

    #[test]
    fn key_order_only_is_not_drift() {
        let mut t = DriftTracker::new(OnToolDrift::Block);
        t.observe("s", vec![def("a", "A")]);
        let reordered: Value = serde_json::from_str(
            r#"{"inputSchema":{"properties":{"x":{"type":"string"}},"type":"object"},"description":"A","name":"a"}"#,
        )
        .unwrap();
        assert!(t.observe("s", vec![reordered]).is_empty());
        assert!(t.drifted("s:a").is_none());
    }

    #[test]
    fn a_duplicate_is_drift_in_any_order() {
        for defs in [
            vec![def("a", "A"), def("a", "evil")],
            vec![def("a", "evil"), def("a", "A")],
            vec![def("a", "A"), def("a", "A")],
        ] {
            let mut t = DriftTracker::new(OnToolDrift::Block);
            t.observe("s", vec![def("a", "A")]);
            t.observe("s", defs.clone());
            let aspects = t.drifted("s:a").expect("duplicate drifts").to_vec();
            assert!(aspects.contains(&"duplicate".to_string()), "{aspects:?}");
            let l = t.listing();
            assert_eq!(l.len(), 1, "one entry per name");
            assert_eq!(l[0].current(), &defs[0], "the first is the current one");
            assert_eq!(l[0].current_all(), Value::Array(defs));
        }
        // a duplicate on first sight is drift too
        let mut t = DriftTracker::new(OnToolDrift::Log);
        t.observe("s", vec![def("a", "A"), def("a", "evil")]);
        assert!(t.drifted("s:a").is_some());
        assert!(!t.blocks("s:a"), "log mode never blocks");
    }

    #[test]
    fn baselines_survive_removal() {
        let mut t = DriftTracker::new(OnToolDrift::Block);
        t.observe("s", vec![def("a", "A"), def("b", "B")]);
        // removed: no longer listed, nothing to report
        assert!(t.observe("s", vec![def("b", "B")]).is_empty());
        assert!(t.tool("s", "a").is_none());
        // re-added with another definition: still measured against the old baseline
        let ev = t.observe("s", vec![def("a", "A evil"), def("b", "B")]);
        assert_eq!(drifted(&ev).len(), 1);
        assert!(t.blocks("s:a"));
        // removing and re-adding the changed one does not launder it
        t.observe("s", vec![def("b", "B")]);
        t.observe("s", vec![def("a", "A evil"), def("b", "B")]);
        assert!(t.blocks("s:a"));
        assert_eq!(t.tool("s", "a").unwrap().baseline, def("a", "A"));
    }

    #[test]
    fn auto_trust_and_quarantine_off_never_drift() {
        let cfg = ProxyConfig::parse(
            "t",
            r#"{"mcpServers":[{"name":"auto","trust_mode":"auto"},{"name":"held","trust_mode":"manual"}]}"#,
        )
        .unwrap();
        let mut t = DriftTracker::from_config(&cfg);
        assert!(!t.tracks("auto") && t.tracks("held"));
        assert!(
            t.observe("auto", vec![def("a", "A")]).is_empty(),
            "no baseline log"
        );
        assert!(t.observe("auto", vec![def("a", "changed")]).is_empty());
        assert!(
            t.observe("auto", vec![def("a", "x"), def("a", "y")])
                .is_empty()
        );
        assert!(t.drifted("auto:a").is_none());
        // auto-approved: the baseline follows the current definition
        t.observe("auto", vec![def("a", "latest")]);
        assert_eq!(t.tool("auto", "a").unwrap().baseline, def("a", "latest"));
        t.observe("held", vec![def("a", "A")]);
        t.observe("held", vec![def("a", "changed")]);
        assert!(t.blocks("held:a"));

        let off = ProxyConfig::parse(
            "t",
            r#"{"quarantine_enabled":false,"mcpServers":[{"name":"s"}]}"#,
        )
        .unwrap();
        let mut t = DriftTracker::from_config(&off);
        assert!(!t.tracks("s") && !t.tracks("unconfigured"));
        t.observe("s", vec![def("a", "A")]);
        assert!(
            t.observe("s", vec![def("a", "B"), def("a", "C")])
                .is_empty()
        );
        assert!(t.drifted("s:a").is_none());
        assert_eq!(t.listing()[0].approval_status(), "approved");
    }

    #[test]
    fn the_listing_is_sorted_by_server_then_name() {
        let mut t = DriftTracker::new(OnToolDrift::Block);
        t.observe("b", vec![def("z", ""), def("a", "")]);
        t.observe("a-b", vec![def("x", "")]);
        t.observe("a", vec![def("y", "")]);
        let ids: Vec<String> = t.listing().iter().map(ToolState::id).collect();
        assert_eq!(ids, ["a:y", "a-b:x", "b:a", "b:z"]);
    }
}
