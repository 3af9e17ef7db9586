//! The replay layout: security entries laid out as tools on synthetic replay servers (grouped
//! by the entry's `server`, split so that no server lists a name twice), and the spec files the
//! replays serve them from.

use crate::pipeline::dataset::Entry;
use crate::pipeline::replay::{ReplaySpec, RugPull};
use crate::pipeline::sut::sample_args::sample_args;
use rmcp::model::Tool as McpTool;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// Keeps the characters a server or tool name may safely carry.
pub(super) fn safe(s: &str) -> String {
    let keep = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    let out: String = s.chars().map(|c| if keep(c) { c } else { '_' }).collect();
    if out.is_empty() { "tool".into() } else { out }
}

/// A replay server with no tools yet.
pub(super) fn empty_spec(server: &str) -> ReplaySpec {
    ReplaySpec {
        server: server.to_string(),
        tools: vec![],
        changes: BTreeMap::new(),
        rug_pull: RugPull::Off,
    }
}

/// The name an entry's tool is served under: the definition's, else the entry's tool, else its
/// id, made safe.
pub(super) fn served_name(e: &Entry, def: &Value) -> String {
    let raw = def
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| e.tool.clone())
        .unwrap_or_else(|| e.id.clone());
    safe(&raw)
}

/// The entries laid out as tools on synthetic servers.
#[derive(Default)]
pub(super) struct Layout {
    pub(super) specs: BTreeMap<String, ReplaySpec>,
    /// entry index → `server:tool`.
    pub(super) id_of: BTreeMap<usize, String>,
}

/// `(server:tool, arguments as JSON text)` per played tool.
pub(super) type CallArgs = Vec<(String, String)>;

impl Layout {
    /// The entry served as `server:tool`.
    pub(super) fn at(&self, id: &str) -> Option<usize> {
        self.id_of.iter().find_map(|(i, v)| (v == id).then_some(*i))
    }

    /// Each entry's `server:tool`, its tool's name, and the spec of the server serving it.
    pub(super) fn tools(&self) -> impl Iterator<Item = (&String, &str, &ReplaySpec)> {
        self.id_of.values().filter_map(|id| {
            let (server, name) = id.split_once(':')?;
            Some((id, name, self.specs.get(server)?))
        })
    }

    /// The servers holding entries (a server of peers only holds context).
    pub(super) fn entry_servers(&self) -> BTreeSet<&str> {
        self.tools()
            .map(|(_, _, spec)| spec.server.as_str())
            .collect()
    }

    /// Every `server:tool` served: the entries and any peers beside them.
    pub(super) fn served_ids(&self) -> BTreeSet<String> {
        self.specs
            .iter()
            .flat_map(|(server, spec)| {
                spec.tools
                    .iter()
                    .map(move |t| format!("{server}:{}", t.name))
            })
            .collect()
    }

    /// Per served tool, `(server:tool, arguments as JSON text)` valid for the definition first
    /// served, and for the one it changes into.
    pub(super) fn call_args(&self) -> (CallArgs, CallArgs) {
        let args = |t: Option<&McpTool>| {
            let schema = t.map(|t| Value::Object((*t.input_schema).clone()));
            sample_args(schema.as_ref()).to_string()
        };
        let each = |(id, name, spec): (&String, &str, &ReplaySpec)| {
            let first = spec.tools.iter().find(|t| t.name == name);
            let then = spec.changes.get(name).and_then(|d| d.first()).or(first);
            ((id.clone(), args(first)), (id.clone(), args(then)))
        };
        self.tools().map(each).unzip()
    }
}

/// A definition with its name replaced and an input schema when it had none.
pub(super) fn as_tool(entry: &Entry, def: &Value, name: &str) -> Result<McpTool, String> {
    let mut d = def.clone();
    let not_object = || format!("entry {}: a definition is not a JSON object", entry.id);
    let o = d.as_object_mut().ok_or_else(not_object)?;
    o.insert("name".into(), json!(name));
    o.entry("inputSchema")
        .or_insert_with(|| json!({"type": "object"}));
    serde_json::from_value(d)
        .map_err(|e| format!("entry {}: not an MCP tool definition: {e}", entry.id))
}

/// `played(entry)` = the definition first served and, for a live rug-pull, what replaces it
/// (several definitions = a repeated name).
pub(super) fn layout(
    entries: &[Entry],
    played: impl Fn(&Entry) -> Option<(Value, Option<Vec<Value>>)>,
) -> Result<Layout, String> {
    let mut specs: BTreeMap<String, ReplaySpec> = BTreeMap::new();
    let mut groups: HashMap<String, Vec<String>> = HashMap::new();
    let mut id_of = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        let Some((first, then)) = played(e) else {
            continue;
        };
        let name = served_name(e, &first);
        let base = safe(e.server.as_deref().unwrap_or("security"));
        // the first server of this base that does not list the name yet
        let existing = groups.entry(base.clone()).or_default();
        let server = match existing
            .iter()
            .find(|s| !specs[*s].tools.iter().any(|t| t.name == name))
        {
            Some(s) => s.clone(),
            None => {
                let nth = |k: usize| match k {
                    1 => base.clone(),
                    k => format!("{base}-{k}"),
                };
                let free = (existing.len() + 1..)
                    .map(nth)
                    .find(|c| !specs.contains_key(c));
                let cand = free.expect("a name not taken");
                existing.push(cand.clone());
                specs.insert(cand.clone(), empty_spec(&cand));
                cand
            }
        };
        let spec = specs.get_mut(&server).expect("just inserted");
        spec.tools.push(as_tool(e, &first, &name)?);
        if let Some(then) = then {
            let defs = then
                .iter()
                .map(|d| as_tool(e, d, &name))
                .collect::<Result<Vec<_>, _>>()?;
            spec.changes.insert(name.clone(), defs);
        }
        id_of.insert(i, format!("{server}:{name}"));
    }
    Ok(Layout { specs, id_of })
}

/// Writes one replay spec file per server; `extra(i, dir)` adds arguments for the i-th server.
pub(super) fn write_specs(
    layout: &Layout,
    dir: &Path,
    extra: impl Fn(usize, &Path) -> Vec<String>,
) -> std::io::Result<BTreeMap<String, Vec<String>>> {
    let replay_dir = dir.join("replay");
    std::fs::create_dir_all(&replay_dir)?;
    let mut upstreams = BTreeMap::new();
    for (i, (server, spec)) in layout.specs.iter().enumerate() {
        // server names come from data: the file name is an index
        let p = replay_dir.join(format!("spec-{i:04}.json"));
        std::fs::write(&p, serde_json::to_vec_pretty(spec).unwrap_or_default())?;
        let mut args = vec!["replay".into(), "--spec".into(), p.display().to_string()];
        args.extend(extra(i, dir));
        upstreams.insert(server.clone(), args);
    }
    Ok(upstreams)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, server: Option<&str>, tool: Option<&str>) -> Entry {
        serde_json::from_value(json!({
            "id": id, "label": "malicious", "category": "rug_pull", "server": server,
            "tool": tool, "description": "d",
            "provenance": {"source": "self-authored", "license": "MIT"}
        }))
        .unwrap()
    }

    #[test]
    fn names_keep_only_safe_characters() {
        assert_eq!(safe("get_balance-v2.1"), "get_balance-v2.1");
        assert_eq!(safe("a b/c:d"), "a_b_c_d");
        assert_eq!(safe("café"), "caf_");
        assert_eq!(safe(""), "tool");
    }

    #[test]
    fn a_tool_is_served_under_its_definitions_name_else_the_entrys() {
        let e = entry("id-1", Some("s"), Some("entry tool"));
        assert_eq!(served_name(&e, &json!({"name": "def/name"})), "def_name");
        assert_eq!(served_name(&e, &json!({})), "entry_tool");
        assert_eq!(served_name(&entry("id 1", None, None), &json!({})), "id_1");
    }

    #[test]
    fn no_server_lists_a_name_twice_and_changes_ride_with_their_tool() {
        let entries = vec![
            entry("a", Some("bank"), Some("pay")),
            entry("b", Some("bank"), Some("pay")),
            entry("c", Some("bank"), Some("balance")),
            // its own server is named like bank's second one
            entry("d", Some("bank-2"), Some("pay")),
            entry("e", None, Some("pay")),
            // not played
            entry("f", Some("bank"), Some("skip")),
        ];
        let l = layout(&entries, |e| {
            (e.id != "f").then(|| {
                let first = json!({"name": e.tool, "inputSchema": {"type": "object"}});
                let then = (e.id == "b").then(|| {
                    vec![json!({"name": "ignored", "description": "evil",
                            "inputSchema": {"type": "object", "properties": {"n": {"const": 7}},
                                            "required": ["n"]}})]
                });
                (first, then)
            })
        })
        .unwrap();
        let ids: Vec<(usize, &str)> = l.id_of.iter().map(|(i, s)| (*i, s.as_str())).collect();
        assert_eq!(
            ids,
            [
                (0, "bank:pay"),
                (1, "bank-2:pay"),
                (2, "bank:balance"),
                (3, "bank-2-2:pay"),
                (4, "security:pay"),
            ]
        );
        for (i, id) in &l.id_of {
            assert_eq!(l.at(id), Some(*i));
        }
        assert_eq!(
            l.specs.keys().collect::<Vec<_>>(),
            ["bank", "bank-2", "bank-2-2", "security"]
        );
        // the change is served under the entry's name, on the entry's server only
        let changed = &l.specs["bank-2"].changes["pay"];
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].name, "pay");
        assert!(l.specs["bank"].changes.is_empty());
        assert_eq!(l.served_ids().len(), 5);
        // arguments fit the definition first served, then the one it changed into
        let (before, after) = l.call_args();
        let b_before = before.iter().find(|(id, _)| id == "bank-2:pay").unwrap();
        let b_after = after.iter().find(|(id, _)| id == "bank-2:pay").unwrap();
        assert_eq!(b_before.1, "{}");
        assert_eq!(b_after.1, r#"{"n":7}"#);
    }

    #[test]
    fn a_definition_that_is_not_an_object_is_named_by_its_entry() {
        let entries = vec![entry("bad", Some("s"), Some("t"))];
        let err = layout(&entries, |_| Some((json!(["not", "an", "object"]), None)))
            .err()
            .unwrap();
        assert_eq!(err, "entry bad: a definition is not a JSON object");
        let err = layout(&entries, |_| {
            Some((json!({"name": "t"}), Some(vec![json!({"inputSchema": 5})])))
        })
        .err()
        .unwrap();
        assert!(
            err.starts_with("entry bad: not an MCP tool definition: "),
            "{err}"
        );
    }
}
