//! Dataset rules. Each check adds a [`Violation`]; all of them are collected, none stops early.

use super::jsonpath::JsonPath;
use super::load::{Loaded, Severity, Violation};
use super::model::{Category, Corpus, GoldenSet, SPLITS, SecurityCorpus, Truth, bare_name};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::collections::BTreeSet;

/// Item `i`'s id (at `key`, called `noun` in the message) is remembered in `seen`; a second
/// item with the same id is an error naming the first.
fn unique_id<'a, T>(
    l: &Loaded<T>,
    seen: &mut HashMap<&'a str, usize>,
    i: usize,
    id: &'a str,
    (key, noun): (&str, &str),
    rule: &'static str,
    out: &mut Vec<Violation>,
) {
    if let Some(first) = seen.insert(id, i) {
        let message = format!(
            "duplicate {noun} {id:?}: already used by {}",
            l.item_path(first)
        );
        out.push(l.violation(Severity::Error, &l.item_path(i).key(key), rule, message));
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

/// `server:tool`: exactly one colon, both sides non-empty. Names are taken as the data has
/// them (display names with spaces and capitals, tools with dashes), as long as neither side
/// starts or ends with whitespace or holds a control character.
pub fn is_tool_id(id: &str) -> bool {
    tool_id_problem(id).is_none()
}

/// What is wrong with a `server:tool` id, or `None`.
pub fn tool_id_problem(id: &str) -> Option<&'static str> {
    let Some((s, t)) = id.split_once(':') else {
        return Some("it has no `:` between server and tool");
    };
    if t.contains(':') {
        return Some("it has more than one `:`");
    }
    if s.trim().is_empty() {
        return Some("the server part before `:` is empty");
    }
    if t.trim().is_empty() {
        return Some("the tool part after `:` is empty");
    }
    if [s, t].iter().any(|p| p.trim() != *p) {
        return Some("a part starts or ends with whitespace");
    }
    if let Some(why) = server_name_problem(s) {
        return Some(why);
    }
    if id.chars().any(char::is_control) {
        return Some("it holds a control character");
    }
    None
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
    if name.is_empty() {
        return false;
    }
    let hay = text.to_lowercase();
    let needle = name.to_lowercase();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(pos) = hay[from..].find(&needle) {
        let start = from + pos;
        let end = start + needle.len();
        let before_ok = hay[..start].chars().next_back().is_none_or(|c| !is_word(c));
        let after_ok = hay[end..].chars().next().is_none_or(|c| !is_word(c));
        if before_ok && after_ok {
            return true;
        }
        from = start + needle.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// A character that shows nothing: white space, a control or an invisible format character.
fn blank(c: char) -> bool {
    c.is_whitespace() || crate::infra::text::sanitize::is_invisible(c)
}

/// How deep a tool definition's JSON may nest. A served definition travels inside an MCP
/// message (about six more levels), and JSON readers, evalgate's and rmcp's included, stop at
/// 128 levels: a deeper schema would pass here and break the run.
pub const MAX_DEFINITION_DEPTH: usize = 100;

/// How deep a JSON value nests.
pub fn json_depth(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::Array(a) => 1 + a.iter().map(json_depth).max().unwrap_or(0),
        serde_json::Value::Object(o) => 1 + o.values().map(json_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// `None`: deeper than serde_json reads into a tree (128 levels or more).
fn too_deep(depth: Option<usize>) -> String {
    let depth = match depth {
        Some(d) => d.to_string(),
        None => "more than 127".into(),
    };
    format!(
        "nests {depth} levels deep; expected at most {MAX_DEFINITION_DEPTH} (a served definition travels inside an MCP message, and JSON readers stop at 128 levels)"
    )
}

pub fn corpus(c: &Loaded<Corpus>, out: &mut Vec<Violation>) {
    let e = Severity::Error;
    if c.value.version.trim().is_empty() {
        out.push(c.violation(
            e,
            &JsonPath::root().key("version"),
            "corpus.version",
            "expected a non-empty version string, e.g. \"corpus_v1\"",
        ));
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, t) in c.value.tools.iter().enumerate() {
        let p = c.item_path(i);
        if let Some(why) = tool_id_problem(&t.tool_id) {
            out.push(c.violation(
                e,
                &p.key("tool_id"),
                "corpus.tool-id",
                format!("expected `server:tool`, found {:?}: {why}", t.tool_id),
            ));
        } else {
            if let Some(s) = &t.server
                && s != t.server_name()
            {
                out.push(c.violation(
                    e,
                    &p.key("server"),
                    "corpus.server-mismatch",
                    format!(
                        "`server` is {s:?} but tool_id {:?} names server {:?}",
                        t.tool_id,
                        t.server_name()
                    ),
                ));
            }
            if let Some(n) = &t.tool
                && n != t.bare_name()
            {
                out.push(c.violation(
                    e,
                    &p.key("tool"),
                    "corpus.tool-mismatch",
                    format!(
                        "`tool` is {n:?} but tool_id {:?} names tool {:?}",
                        t.tool_id,
                        t.bare_name()
                    ),
                ));
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
                    out.push(c.violation(e, &p.key(key), "corpus.depth", too_deep(depth)));
                }
            }
        }
        unique_id(
            c,
            &mut seen,
            i,
            &t.tool_id,
            ("tool_id", "tool_id"),
            "corpus.duplicate-id",
            out,
        );
    }
    if c.items_in_file == 0 {
        out.push(c.violation(
            e,
            &JsonPath::root().key("tools"),
            "corpus.empty",
            "expected at least one tool",
        ));
    }
}

pub fn golden(g: &Loaded<GoldenSet>, corpus: Option<&Loaded<Corpus>>, out: &mut Vec<Violation>) {
    let e = Severity::Error;
    let ids: Option<HashSet<&str>> =
        corpus.map(|c| c.value.tools.iter().map(|t| t.tool_id.as_str()).collect());
    if let Some(c) = corpus
        && g.value.corpus_version != c.value.version
    {
        out.push(g.violation(
            e,
            &JsonPath::root().key("corpus_version"),
            "golden.corpus-version",
            format!(
                "labels refer to corpus {:?} but the corpus in use ({}) is {:?}",
                g.value.corpus_version, c.source.name, c.value.version
            ),
        ));
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, q) in g.value.queries.iter().enumerate() {
        let p = g.item_path(i);
        if q.id.trim().is_empty() {
            out.push(g.violation(
                e,
                &p.key("id"),
                "golden.id",
                "expected a non-empty query id",
            ));
        }
        unique_id(
            g,
            &mut seen,
            i,
            &q.id,
            ("id", "query id"),
            "golden.duplicate-id",
            out,
        );
        if q.query.chars().all(blank) {
            out.push(g.violation(
                e,
                &p.key("query"),
                "golden.empty-query",
                "expected a query text with something visible in it (found only spaces, control or invisible characters)",
            ));
        }
        if !q.labels.iter().any(|l| l.relevance >= 1) {
            out.push(g.violation(e, &p.key("labels"), "golden.no-relevant", format!("query {:?} has no label with relevance >= 1; every query needs at least one relevant tool", q.id)));
        }
        let mut label_seen = HashSet::new();
        for (j, l) in q.labels.iter().enumerate() {
            let lp = p.key("labels").index(j);
            if l.relevance > 2 {
                out.push(g.violation(
                    e,
                    &lp.key("relevance"),
                    "golden.relevance",
                    format!("expected relevance 0, 1 or 2, found {}", l.relevance),
                ));
            }
            if let Some(why) = tool_id_problem(&l.tool_id) {
                out.push(g.violation(
                    e,
                    &lp.key("tool_id"),
                    "golden.tool-id",
                    format!("expected `server:tool`, found {:?}: {why}", l.tool_id),
                ));
            } else if let Some(ids) = &ids
                && !ids.contains(l.tool_id.as_str())
            {
                out.push(g.violation(e, &lp.key("tool_id"), "golden.dangling-label", format!("label {:?} is not in the corpus (INV-1: golden ids must be a subset of corpus ids)", l.tool_id)));
            }
            if !label_seen.insert(l.tool_id.as_str()) {
                out.push(g.violation(
                    e,
                    &lp.key("tool_id"),
                    "golden.duplicate-label",
                    format!("tool {:?} is labeled twice in query {:?}", l.tool_id, q.id),
                ));
            }
            // only a relevant tool's name gives the answer away (a grade-0 label is a tool
            // the query must not find)
            let name = bare_name(&l.tool_id);
            if l.relevance >= 1 && contains_word(&q.query, name) {
                out.push(g.violation(e, &p.key("query"), "golden.names-tool", format!("query {:?} contains the labeled tool's name {name:?}; queries must paraphrase the intent, never name the tool", q.id)));
            }
        }
        if let Some(split) = &q.split
            && !SPLITS.contains(&split.as_str())
        {
            out.push(g.violation(
                e,
                &p.key("split"),
                "golden.split",
                format!("expected one of {SPLITS:?}, found {split:?}"),
            ));
        }
    }
    distractors(g, corpus, out);
    if g.items_in_file == 0 {
        out.push(g.violation(
            e,
            &JsonPath::root().key("queries"),
            "golden.empty",
            "expected at least one query",
        ));
    }
}

/// The optional `distractors` list: known corpus tools that no query finds relevant. When the
/// list is present it accounts for the whole corpus: every tool is relevant to a query or listed.
fn distractors(g: &Loaded<GoldenSet>, corpus: Option<&Loaded<Corpus>>, out: &mut Vec<Violation>) {
    let e = Severity::Error;
    let Some(list) = &g.value.distractors else {
        return;
    };
    let relevant: HashSet<&str> = g
        .value
        .queries
        .iter()
        .flat_map(|q| q.labels.iter())
        .filter(|l| l.relevance >= 1)
        .map(|l| l.tool_id.as_str())
        .collect();
    let ids: Option<HashSet<&str>> =
        corpus.map(|c| c.value.tools.iter().map(|t| t.tool_id.as_str()).collect());
    let base = JsonPath::root().key("distractors");
    let mut seen = HashSet::new();
    for (i, d) in list.iter().enumerate() {
        let p = base.index(i);
        if !seen.insert(d.as_str()) {
            out.push(g.violation(
                e,
                &p,
                "golden.duplicate-distractor",
                format!("{d:?} is listed twice"),
            ));
        }
        if let Some(ids) = &ids
            && !ids.contains(d.as_str())
        {
            out.push(g.violation(
                e,
                &p,
                "golden.dangling-distractor",
                format!("distractor {d:?} is not in the corpus"),
            ));
        }
        if relevant.contains(d.as_str()) {
            out.push(g.violation(e, &p, "golden.distractor-relevant", format!("{d:?} is listed as a distractor but some query labels it relevant (>= 1); a tool is one or the other")));
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
            let shown: Vec<&str> = missing.iter().take(10).copied().collect();
            out.push(g.violation(
                e,
                &base,
                "golden.unaccounted-tool",
                format!(
                    "{} corpus tool(s) are neither relevant to a query nor listed as distractors: {}{}",
                    missing.len(),
                    shown.join(", "),
                    if missing.len() > shown.len() { ", ..." } else { "" }
                ),
            ));
        }
    }
}

pub fn security(s: &Loaded<SecurityCorpus>, out: &mut Vec<Violation>) {
    let e = Severity::Error;
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut hard_negatives: BTreeSet<Category> = BTreeSet::new();
    let mut any_resembles = false;
    let mut hard_negative_count = 0;
    for (i, en) in s.value.entries.iter().enumerate() {
        let p = s.item_path(i);
        if en.id.trim().is_empty() {
            out.push(s.violation(
                e,
                &p.key("id"),
                "security.id",
                "expected a non-empty entry id",
            ));
        }
        unique_id(
            s,
            &mut seen,
            i,
            &en.id,
            ("id", "entry id"),
            "security.duplicate-id",
            out,
        );
        let servers = en.server.iter().map(|x| (p.key("server"), x)).chain(
            en.peers
                .iter()
                .enumerate()
                .map(|(j, peer)| (p.key("peers").index(j).key("server"), &peer.server)),
        );
        for (at, name) in servers {
            if let Some(why) = server_name_problem(name) {
                out.push(s.violation(
                    e,
                    &at,
                    "security.server-name",
                    format!("expected a server name, found {name:?}: {why}"),
                ));
            }
        }
        match en.category.expected_truth() {
            Some(expected) if en.label != expected => out.push(s.violation(
                e,
                &p.key("label"),
                "security.label-category",
                format!(
                    "category {} requires label {:?}, found {:?}",
                    en.category,
                    expected.as_str(),
                    en.label.as_str()
                ),
            )),
            Some(_) => {}
            None => out.push(s.violation(
                e,
                &p.key("category"),
                "security.open-category",
                format!(
                    "category {:?} is not one of spec-065's (tool_poisoning, prompt_injection, shadowing, rug_pull, benign, hard_negative); it is kept as its own category, an attack where its entries are labelled malicious",
                    en.category.as_str()
                ),
            )),
        }
        let lic = en.provenance.license.trim();
        let pp = p.key("provenance");
        if lic.is_empty() {
            out.push(s.violation(
                e,
                &pp.key("license"),
                "security.missing-license",
                format!(
                    "entry {:?} has no licence; expected one of {}",
                    en.id,
                    LICENSE_ALLOWLIST.join(", ")
                ),
            ));
        } else if !LICENSE_ALLOWLIST.contains(&lic) {
            let hint = LICENSE_ALLOWLIST
                .iter()
                .find(|a| a.eq_ignore_ascii_case(lic))
                .map(|a| format!(" (did you mean {a:?}?)"))
                .unwrap_or_default();
            out.push(s.violation(e, &pp.key("license"), "security.restricted-license", format!("licence {lic:?} of entry {:?} is not on the redistribution allowlist{hint}; expected one of {}. Restricted corpora are referenced in the README, never vendored (CN-005)", en.id, LICENSE_ALLOWLIST.join(", "))));
        }
        if en.provenance.source.trim().is_empty() {
            out.push(s.violation(e, &pp.key("source"), "security.missing-source", format!("entry {:?} has no provenance source; expected e.g. \"self-authored\" or a project name", en.id)));
        }
        match (en.category, en.resembles) {
            (Category::HardNegative, Some(r)) => {
                any_resembles = true;
                if !r.is_attack() && r.is_known() {
                    out.push(s.violation(e, &p.key("resembles"), "security.resembles", format!("expected an attack category (tool_poisoning, prompt_injection, shadowing, rug_pull), found {r}")));
                } else {
                    hard_negatives.insert(r);
                }
            }
            (Category::HardNegative, None) => {}
            (c, Some(_)) => out.push(s.violation(
                e,
                &p.key("resembles"),
                "security.resembles",
                format!(
                    "`resembles` is only meaningful on hard_negative entries, this entry is {c}"
                ),
            )),
            _ => {}
        }
        if en.category == Category::HardNegative {
            hard_negative_count += 1;
        }
        if let Some(depth) = en.input_schema.as_ref().map(json_depth)
            && depth > MAX_DEFINITION_DEPTH
        {
            out.push(s.violation(
                e,
                &p.key("input_schema"),
                "security.depth",
                too_deep(Some(depth)),
            ));
        }
        for (key, v) in [("before", &en.before), ("after", &en.after)] {
            if let Some(v) = v {
                let defs: Vec<(JsonPath, &serde_json::Value)> = match v {
                    serde_json::Value::Array(a) if key == "after" => a
                        .iter()
                        .enumerate()
                        .map(|(k, d)| (p.key(key).index(k), d))
                        .collect(),
                    d => vec![(p.key(key), d)],
                };
                if defs.is_empty() {
                    out.push(s.violation(
                        e,
                        &p.key(key),
                        "security.definition",
                        "expected at least one tool definition",
                    ));
                }
                for (dp, d) in defs {
                    if !d.get("name").is_some_and(|n| n.is_string()) {
                        out.push(s.violation(e, &dp, "security.definition", format!("expected a tool definition object with a string `name` (MCP shape: name, description, inputSchema...) in `{key}`")));
                    }
                    let depth = json_depth(d);
                    if depth > MAX_DEFINITION_DEPTH {
                        out.push(s.violation(e, &dp, "security.depth", too_deep(Some(depth))));
                    }
                }
            }
        }
        if en.before.is_some() != en.after.is_some() {
            out.push(s.violation(
                e,
                &p,
                "security.before-after",
                "`before` and `after` go together: give both definitions or neither",
            ));
        }
    }
    if s.items_in_file == 0 {
        out.push(s.violation(
            e,
            &JsonPath::root().key("entries"),
            "security.empty",
            "expected at least one entry",
        ));
    }
    let entries_path = JsonPath::root().key("entries");
    // coverage over a file whose items did not all decode would only echo those errors
    if s.file_index.len() < s.items_in_file {
        return;
    }
    if any_resembles {
        let missing: Vec<&str> = Category::ATTACKS
            .iter()
            .filter(|c| !hard_negatives.contains(c))
            .map(|c| c.as_str())
            .collect();
        if !missing.is_empty() {
            out.push(s.violation(e, &entries_path, "security.hard-negative-coverage", format!("expected at least one hard_negative entry resembling each attack category; none resembles {}", missing.join(", "))));
        }
    } else if hard_negative_count == 0 {
        out.push(s.violation(e, &entries_path, "security.hard-negative-coverage", "expected hard_negative entries (at least one per attack category, marked with `resembles`); found none"));
    } else {
        out.push(s.violation(Severity::Warning, &entries_path, "security.hard-negative-coverage", "hard_negative entries carry no `resembles` field, so coverage of each attack category cannot be checked"));
    }
    let _ = Truth::Benign;
}

#[cfg(test)]
mod tests {
    use super::*;

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
