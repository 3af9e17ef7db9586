//! Dataset rules. Each check adds a [`Violation`]; all of them are collected, none stops early.

use super::jsonpath::JsonPath;
use super::load::{Items, Loaded, Severity, Violation};
use super::model::{Category, Corpus, Entry, GoldenSet, SPLITS, SecurityCorpus, bare_name};
use crate::infra::text::sanitize::is_invisible;
use serde_json::Value;
use std::collections::BTreeSet;
use std::collections::{HashMap, HashSet};

/// The errors found in one file, each located at its JSON path.
struct Errors<'a, T> {
    file: &'a Loaded<T>,
    out: &'a mut Vec<Violation>,
    /// The item ids met so far, each with its item.
    ids: HashMap<&'a str, usize>,
}

impl<'a, T: Items> Errors<'a, T> {
    fn new(file: &'a Loaded<T>, out: &'a mut Vec<Violation>) -> Self {
        let ids = HashMap::new();
        Errors { file, out, ids }
    }

    fn add(&mut self, path: &JsonPath, rule: &'static str, message: impl Into<String>) {
        let v = self.file.violation(path, rule, message.into());
        self.out.push(v);
    }

    /// Item `i`'s id (at `key`, called `noun` in the message) is remembered; a second item with
    /// the same id is an error naming the first.
    fn unique_id(&mut self, i: usize, id: &'a str, (key, noun): (&str, &str), rule: &'static str) {
        if let Some(first) = self.ids.insert(id, i) {
            let l = self.file;
            let first = l.item_path(first);
            let message = format!("duplicate {noun} {id:?}: already used by {first}");
            self.add(&l.item_path(i).key(key), rule, message);
        }
    }

    /// A file whose item array is empty (a file whose items all failed to decode is not).
    fn not_empty(&mut self, rule: &'static str, item: &str) {
        if self.file.items_in_file == 0 {
            let at = JsonPath::root().key(T::KEY);
            self.add(&at, rule, format!("expected at least one {item}"));
        }
    }
}

/// Licences whose texts may be redistributed inside this repository (CN-005).
pub const LICENSE_ALLOWLIST: [&str; 7] = [
    "MIT",
    "Apache-2.0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "CC0-1.0",
    "CC-BY-4.0",
    "self-authored",
];

/// What is wrong with a `server:tool` id, or `None`: it needs exactly one colon, both sides
/// non-empty. Names are taken as the data has them (display names with spaces and capitals,
/// tools with dashes), as long as neither side starts or ends with whitespace or holds a
/// control character.
pub fn tool_id_problem(id: &str) -> Option<&'static str> {
    let Some((s, t)) = id.split_once(':') else {
        return Some("it has no `:` between server and tool");
    };
    let padded = [s, t].iter().any(|p| p.trim() != *p);
    let control = id.chars().any(char::is_control);
    let problems = [
        (t.contains(':'), "it has more than one `:`"),
        (s.trim().is_empty(), "the server part before `:` is empty"),
        (t.trim().is_empty(), "the tool part after `:` is empty"),
        (padded, "a part starts or ends with whitespace"),
    ];
    problems
        .into_iter()
        .find_map(|(bad, why)| bad.then_some(why))
        .or(server_name_problem(s))
        .or(control.then_some("it holds a control character"))
}

/// What makes `name` unusable as a server name, or `None`: `.` and `..` cannot be a proxy's
/// server (a URL path such as `/api/v1/servers/{name}/scan` resolves them away).
pub fn server_name_problem(name: &str) -> Option<&'static str> {
    matches!(name, "." | "..")
        .then_some("`.` and `..` cannot name a server: a proxy's URL paths resolve them away")
}

/// Whether `name` occurs in `text` as a whole word (case-insensitive; word characters are
/// ASCII letters, digits and `_`).
pub fn contains_word(text: &str, name: &str) -> bool {
    let (hay, needle) = (text.to_lowercase(), name.to_lowercase());
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    !needle.is_empty()
        && hay.char_indices().any(|(start, _)| {
            hay[start..].starts_with(&needle)
                && !is_word(hay[..start].chars().next_back())
                && !is_word(hay[start + needle.len()..].chars().next())
        })
}

/// How deep a tool definition's JSON may nest. A served definition travels inside an MCP
/// message (about six more levels), and JSON readers, evalgate's and rmcp's included, stop at
/// 128 levels: a deeper schema would pass here and break the run.
pub const MAX_DEFINITION_DEPTH: usize = 100;

/// How deep a JSON value nests.
pub fn json_depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(json_depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(json_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// `None`: deeper than serde_json reads into a tree (128 levels or more).
fn too_deep(depth: Option<usize>) -> String {
    let depth = depth.map_or("more than 127".into(), |d| d.to_string());
    format!(
        "nests {depth} levels deep; expected at most {MAX_DEFINITION_DEPTH} (a served definition travels inside an MCP message, and JSON readers stop at 128 levels)"
    )
}

pub fn corpus(c: &Loaded<Corpus>, out: &mut Vec<Violation>) {
    let mut r = Errors::new(c, out);
    if c.value.version.trim().is_empty() {
        let expected = "expected a non-empty version string, e.g. \"corpus_v1\"";
        r.add(&JsonPath::root().key("version"), "corpus.version", expected);
    }
    for (i, t) in c.value.tools.iter().enumerate() {
        let p = c.item_path(i);
        if let Some(why) = tool_id_problem(&t.tool_id) {
            let m = format!("expected `server:tool`, found {:?}: {why}", t.tool_id);
            r.add(&p.key("tool_id"), "corpus.tool-id", m);
        } else {
            let (server, tool) = (t.server_name(), t.bare_name());
            let server = ("server", &t.server, server, "corpus.server-mismatch");
            let tool = ("tool", &t.tool, tool, "corpus.tool-mismatch");
            for (key, given, named, rule) in [server, tool] {
                if let Some(g) = given
                    && g != named
                {
                    let id = &t.tool_id;
                    let m = format!("`{key}` is {g:?} but tool_id {id:?} names {key} {named:?}");
                    r.add(&p.key(key), rule, m);
                }
            }
        }
        for (key, raw) in [
            ("schema", &t.schema),
            ("annotations", &t.annotations),
            ("output_schema", &t.output_schema),
            ("extra", &t.extra),
        ] {
            if let Some(raw) = raw {
                // the text is valid JSON: a tree is refused only past serde_json's 127 levels
                let depth = serde_json::from_str(raw.get()).ok().map(|v| json_depth(&v));
                if depth.is_none_or(|d| d > MAX_DEFINITION_DEPTH) {
                    r.add(&p.key(key), "corpus.depth", too_deep(depth));
                }
            }
        }
        r.unique_id(i, &t.tool_id, ("tool_id", "tool_id"), "corpus.duplicate-id");
    }
    r.not_empty("corpus.empty", "tool");
}

pub fn golden(g: &Loaded<GoldenSet>, corpus: Option<&Loaded<Corpus>>, out: &mut Vec<Violation>) {
    let ids: Option<HashSet<&str>> =
        corpus.map(|c| c.value.tools.iter().map(|t| t.tool_id.as_str()).collect());
    let mut r = Errors::new(g, out);
    if let Some(c) = corpus
        && g.value.corpus_version != c.value.version
    {
        let m = format!(
            "labels refer to corpus {:?} but the corpus in use ({}) is {:?}",
            g.value.corpus_version, c.source.name, c.value.version
        );
        let at = JsonPath::root().key("corpus_version");
        r.add(&at, "golden.corpus-version", m);
    }
    for (i, q) in g.value.queries.iter().enumerate() {
        let p = g.item_path(i);
        if q.id.trim().is_empty() {
            r.add(&p.key("id"), "golden.id", "expected a non-empty query id");
        }
        r.unique_id(i, &q.id, ("id", "query id"), "golden.duplicate-id");
        // nothing visible: white space, controls or invisible format characters
        if q.query
            .chars()
            .all(|c| c.is_whitespace() || is_invisible(c))
        {
            r.add(&p.key("query"), "golden.empty-query", "expected a query text with something visible in it (found only spaces, control or invisible characters)");
        }
        if !q.labels.iter().any(|l| l.relevance >= 1) {
            r.add(&p.key("labels"), "golden.no-relevant", format!("query {:?} has no label with relevance >= 1; every query needs at least one relevant tool", q.id));
        }
        let mut label_seen = HashSet::new();
        for (j, l) in q.labels.iter().enumerate() {
            let lp = p.key("labels").index(j);
            if l.relevance > 2 {
                let m = format!("expected relevance 0, 1 or 2, found {}", l.relevance);
                r.add(&lp.key("relevance"), "golden.relevance", m);
            }
            if let Some(why) = tool_id_problem(&l.tool_id) {
                let m = format!("expected `server:tool`, found {:?}: {why}", l.tool_id);
                r.add(&lp.key("tool_id"), "golden.tool-id", m);
            } else if let Some(ids) = &ids
                && !ids.contains(l.tool_id.as_str())
            {
                r.add(&lp.key("tool_id"), "golden.dangling-label", format!("label {:?} is not in the corpus (INV-1: golden ids must be a subset of corpus ids)", l.tool_id));
            }
            if !label_seen.insert(l.tool_id.as_str()) {
                let m = format!("tool {:?} is labeled twice in query {:?}", l.tool_id, q.id);
                r.add(&lp.key("tool_id"), "golden.duplicate-label", m);
            }
            // only a relevant tool's name gives the answer away (a grade-0 label is a tool
            // the query must not find)
            let name = bare_name(&l.tool_id);
            if l.relevance >= 1 && contains_word(&q.query, name) {
                r.add(&p.key("query"), "golden.names-tool", format!("query {:?} contains the labeled tool's name {name:?}; queries must paraphrase the intent, never name the tool", q.id));
            }
        }
        if let Some(split) = &q.split
            && !SPLITS.contains(&split.as_str())
        {
            let m = format!("expected one of {SPLITS:?}, found {split:?}");
            r.add(&p.key("split"), "golden.split", m);
        }
    }
    distractors(&mut r, corpus, ids);
    r.not_empty("golden.empty", "query");
}

/// The optional `distractors` list: known corpus tools that no query finds relevant. When the
/// list is present it accounts for the whole corpus: every tool is relevant to a query or listed.
fn distractors(
    r: &mut Errors<GoldenSet>,
    corpus: Option<&Loaded<Corpus>>,
    ids: Option<HashSet<&str>>,
) {
    let g = r.file;
    let Some(list) = &g.value.distractors else {
        return;
    };
    let relevant: HashSet<&str> = g
        .value
        .queries
        .iter()
        .flat_map(|q| q.relevant())
        .map(|l| l.tool_id.as_str())
        .collect();
    let base = JsonPath::root().key("distractors");
    let mut seen = HashSet::new();
    for (i, d) in list.iter().enumerate() {
        let p = base.index(i);
        if !seen.insert(d.as_str()) {
            let m = format!("{d:?} is listed twice");
            r.add(&p, "golden.duplicate-distractor", m);
        }
        if let Some(ids) = &ids
            && !ids.contains(d.as_str())
        {
            let m = format!("distractor {d:?} is not in the corpus");
            r.add(&p, "golden.dangling-distractor", m);
        }
        if relevant.contains(d.as_str()) {
            r.add(&p, "golden.distractor-relevant", format!("{d:?} is listed as a distractor but some query labels it relevant (>= 1); a tool is one or the other"));
        }
    }
    if let Some(c) = corpus {
        let missing: Vec<&str> = c
            .value
            .tools
            .iter()
            .map(|t| t.tool_id.as_str())
            .filter(|t| !relevant.contains(t) && !seen.contains(t))
            .collect();
        if !missing.is_empty() {
            let more = if missing.len() > 10 { ", ..." } else { "" };
            let (n, shown) = (missing.len(), missing[..missing.len().min(10)].join(", "));
            r.add(&base, "golden.unaccounted-tool", format!("{n} corpus tool(s) are neither relevant to a query nor listed as distractors: {shown}{more}"));
        }
    }
}

pub fn security(s: &Loaded<SecurityCorpus>, out: &mut Vec<Violation>) {
    let mut r = Errors::new(s, out);
    let entries = &s.value.entries;
    for (i, en) in entries.iter().enumerate() {
        let p = s.item_path(i);
        if en.id.trim().is_empty() {
            r.add(&p.key("id"), "security.id", "expected a non-empty entry id");
        }
        r.unique_id(i, &en.id, ("id", "entry id"), "security.duplicate-id");
        let servers = en.server.iter().map(|x| (p.key("server"), x)).chain(
            en.peers
                .iter()
                .enumerate()
                .map(|(j, peer)| (p.key("peers").index(j).key("server"), &peer.server)),
        );
        for (at, name) in servers {
            if let Some(why) = server_name_problem(name) {
                let m = format!("expected a server name, found {name:?}: {why}");
                r.add(&at, "security.server-name", m);
            }
        }
        match en.category.expected_truth() {
            Some(expected) if en.label != expected => {
                let (cat, want, found) = (en.category, expected.as_str(), en.label.as_str());
                let m = format!("category {cat} requires label {want:?}, found {found:?}");
                r.add(&p.key("label"), "security.label-category", m);
            }
            Some(_) => {}
            None => {
                let cat = en.category.as_str();
                r.add(&p.key("category"), "security.open-category", format!("category {cat:?} is not one of spec-065's (tool_poisoning, prompt_injection, shadowing, rug_pull, benign, hard_negative); it is kept as its own category, an attack where its entries are labelled malicious"));
            }
        }
        let (lic, id) = (en.provenance.license.trim(), &en.id);
        let allowed = LICENSE_ALLOWLIST.join(", ");
        let pp = p.key("provenance");
        if lic.is_empty() {
            let m = format!("entry {id:?} has no licence; expected one of {allowed}");
            r.add(&pp.key("license"), "security.missing-license", m);
        } else if !LICENSE_ALLOWLIST.contains(&lic) {
            let hint = LICENSE_ALLOWLIST
                .iter()
                .find(|a| a.eq_ignore_ascii_case(lic))
                .map(|a| format!(" (did you mean {a:?}?)"))
                .unwrap_or_default();
            r.add(&pp.key("license"), "security.restricted-license", format!("licence {lic:?} of entry {id:?} is not on the redistribution allowlist{hint}; expected one of {allowed}. Restricted corpora are referenced in the README, never vendored (CN-005)"));
        }
        if en.provenance.source.trim().is_empty() {
            r.add(&pp.key("source"), "security.missing-source", format!("entry {id:?} has no provenance source; expected e.g. \"self-authored\" or a project name"));
        }
        match (en.category, en.resembles) {
            (Category::HardNegative, Some(c)) if !c.is_attack() && c.is_known() => {
                r.add(&p.key("resembles"), "security.resembles", format!("expected an attack category (tool_poisoning, prompt_injection, shadowing, rug_pull), found {c}"));
            }
            (Category::HardNegative, _) => {}
            (c, Some(_)) => {
                let m = format!(
                    "`resembles` is only meaningful on hard_negative entries, this entry is {c}"
                );
                r.add(&p.key("resembles"), "security.resembles", m);
            }
            _ => {}
        }
        if let Some(depth) = en.input_schema.as_ref().map(json_depth)
            && depth > MAX_DEFINITION_DEPTH
        {
            let at = p.key("input_schema");
            r.add(&at, "security.depth", too_deep(Some(depth)));
        }
        for (key, v) in [("before", &en.before), ("after", &en.after)] {
            let Some(v) = v else { continue };
            let defs: Vec<(JsonPath, &Value)> = match v {
                Value::Array(a) if key == "after" => a
                    .iter()
                    .enumerate()
                    .map(|(k, d)| (p.key(key).index(k), d))
                    .collect(),
                d => vec![(p.key(key), d)],
            };
            if defs.is_empty() {
                let expected = "expected at least one tool definition";
                r.add(&p.key(key), "security.definition", expected);
            }
            for (dp, d) in defs {
                if !d.get("name").is_some_and(|n| n.is_string()) {
                    r.add(&dp, "security.definition", format!("expected a tool definition object with a string `name` (MCP shape: name, description, inputSchema...) in `{key}`"));
                }
                let depth = json_depth(d);
                if depth > MAX_DEFINITION_DEPTH {
                    r.add(&dp, "security.depth", too_deep(Some(depth)));
                }
            }
        }
        if en.before.is_some() != en.after.is_some() {
            let expected = "`before` and `after` go together: give both definitions or neither";
            r.add(&p, "security.before-after", expected);
        }
    }
    r.not_empty("security.empty", "entry");
    // coverage over a file whose items did not all decode would only echo those errors
    if s.file_index.len() < s.items_in_file {
        return;
    }
    let at = JsonPath::root().key("entries");
    let rule = "security.hard-negative-coverage";
    let resembled: BTreeSet<Category> = entries.iter().filter_map(Entry::resembled).collect();
    if !resembled.is_empty() {
        let missing: Vec<&str> = Category::ATTACKS
            .iter()
            .filter(|c| !resembled.contains(c))
            .map(|c| c.as_str())
            .collect();
        if !missing.is_empty() {
            r.add(&at, rule, format!("expected at least one hard_negative entry resembling each attack category; none resembles {}", missing.join(", ")));
        }
    } else if !entries.iter().any(|e| e.category == Category::HardNegative) {
        r.add(&at, rule, "expected hard_negative entries (at least one per attack category, marked with `resembles`); found none");
    } else {
        let mut v = s.violation(&at, rule, "hard_negative entries carry no `resembles` field, so coverage of each attack category cannot be checked".into());
        v.severity = Severity::Warning;
        r.out.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_tool_id(id: &str) -> bool {
        tool_id_problem(id).is_none()
    }

    #[test]
    fn tool_ids_need_one_colon_and_take_names_as_the_data_has_them() {
        assert!(is_tool_id("git:git_status"));
        // display names with spaces and capitals, tools with dashes
        assert!(is_tool_id("Design Components:get-docs"));
        for (bad, why) in [
            ("git", "no `:`"),
            (":x", "server part"),
            ("x:", "tool part"),
            ("a:b:c", "more than one"),
            (" a:b", "whitespace"),
            ("a:b\n", "whitespace"),
            ("a\u{7}:b", "control"),
            ("", "no `:`"),
            ("..:x", "cannot name a server"),
            (".:x", "cannot name a server"),
        ] {
            let p = tool_id_problem(bad);
            assert!(p.is_some_and(|p| p.contains(why)), "{bad:?}: {p:?}");
        }
    }

    #[test]
    fn whole_word_matching_is_case_insensitive_and_respects_boundaries() {
        assert!(contains_word("please Read_File now", "read_file"));
        assert!(contains_word("fetch", "fetch"));
        assert!(contains_word("x (fetch).", "fetch"));
        assert!(!contains_word("prefetched pages", "fetch"));
        assert!(!contains_word("read_files", "read_file"));
        assert!(!contains_word("anything", ""));
    }
}
