//! Reading dataset files: every problem becomes a [`Violation`] naming the file, the JSON path,
//! the line:column and what was expected. Items are decoded one by one so that one bad item does
//! not hide the problems of the others.

use super::jsonpath::{JsonPath, Positions, Seg, duplicate_key};
use super::model::{Corpus, Entry, GoldenSet, Query, SecurityCorpus, Tool};
use super::{DIR_FILES, dir_names_hint};
use crate::infra::files;
use serde::de::DeserializeOwned;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem in a dataset file.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}:{line}:{column}: {}[{rule}] at {path}: {message}", .severity.as_str())]
pub struct Violation {
    pub severity: Severity,
    pub file: String,
    pub path: String,
    pub line: usize,
    pub column: usize,
    /// Stable id of the rule that was broken, e.g. `golden.dangling-label`.
    pub rule: &'static str,
    /// What was found and what was expected.
    pub message: String,
}

/// Where a dataset came from.
#[derive(Debug, Clone)]
pub struct Source {
    /// The path as the user gave it, or `embedded:datasets/...` for the compiled-in default.
    pub name: String,
    pub embedded: bool,
    pub sha256: String,
}

impl Source {
    pub fn new(name: impl Into<String>, embedded: bool, text: &str) -> Self {
        Source {
            name: name.into(),
            embedded,
            sha256: format!("{:x}", Sha256::digest(text)),
        }
    }
}

/// A dataset file, decoded, with the positions of its values.
#[derive(Debug)]
pub struct Loaded<T> {
    pub value: T,
    pub source: Source,
    pub positions: Positions,
    /// For each decoded item, its index in the file (items that failed to decode are skipped).
    pub file_index: Vec<usize>,
    /// How many items the file holds, decoded or not (rules about an empty file look at this,
    /// so a file whose every item failed to decode is not also called empty).
    pub items_in_file: usize,
}

impl<T: Items> Loaded<T> {
    /// Lets go of the file's text once every violation is found: a large golden set's text
    /// would otherwise stay in memory for the whole run, unused (violations found later are
    /// located at the start of the file).
    pub fn without_text(mut self) -> Self {
        self.positions = Positions::default();
        self
    }

    /// The path of decoded item `i` in the file.
    pub fn item_path(&self, i: usize) -> JsonPath {
        JsonPath::root().key(T::KEY).index(self.file_index[i])
    }

    /// An error located at `path` of this file.
    pub fn violation(&self, path: &JsonPath, rule: &'static str, message: String) -> Violation {
        let at = self.positions.locate(path);
        Violation::error(&self.source.name, path, at, rule, message)
    }
}

impl Violation {
    /// An error in `file` at `path`, which starts at `(line, column)`.
    fn error(
        file: &str,
        path: impl ToString,
        (line, column): (usize, usize),
        rule: &'static str,
        message: String,
    ) -> Violation {
        Violation {
            severity: Severity::Error,
            file: file.to_string(),
            path: path.to_string(),
            line,
            column,
            rule,
            message,
        }
    }
}

/// For a dataset file that is not there: what a dataset directory is searched for and the
/// JSON files the directory has.
fn missing_hint(path: &Path, e: &std::io::Error) -> String {
    let dir = path.parent().filter(|d| d.is_dir());
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let Some(dir) =
        dir.filter(|_| e.kind() == std::io::ErrorKind::NotFound && DIR_FILES.contains(&name))
    else {
        return String::new();
    };
    let mut json: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    json.sort();
    if json.is_empty() {
        json.push("no .json file".into());
    }
    // `dir` is not empty: `Path::new("")` is not a directory
    let found = json.join(", ");
    format!("; {}; {} has: {found}", dir_names_hint(), dir.display())
}

/// Reads a file from disk; a missing or unreadable file is a violation, not a panic.
pub fn read_file(path: &Path) -> Result<(Source, Cow<'static, str>), Violation> {
    let name = path.display().to_string();
    let mut bytes = files::read(path).map_err(|e| {
        let m = format!("cannot read the file: {e}{}", missing_hint(path, &e));
        Violation::error(&name, "$", (1, 1), "file.unreadable", m)
    })?;
    // a UTF-8 byte order mark (as some Windows editors write) is not JSON: read past it
    if bytes.starts_with("\u{feff}".as_bytes()) {
        bytes.drain(..3);
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let m = format!("expected UTF-8 JSON text, found invalid UTF-8 at byte {at}");
        Violation::error(&name, "$", (1, 1), "file.not-utf8", m)
    })?;
    Ok((Source::new(name, false, &text), text.into()))
}

/// Decodes a document whose content is the array at `T::KEY`. The header (everything but the
/// array) decodes into `T` with an empty array; each item decodes on its own, so every bad item
/// is reported, not just the first. Returns the document, each decoded item's index in the file
/// and how many items the file holds.
fn decode<T: Items>(
    name: &str,
    text: &str,
    out: &mut Vec<Violation>,
) -> Option<(T, Vec<usize>, usize)> {
    let items_key = T::KEY;
    let doc: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let at = (e.line().max(1), e.column().max(1));
            let m = format!("malformed JSON: {e}");
            out.push(Violation::error(name, "$", at, "json.syntax", m));
            return None;
        }
    };
    let positions = Positions::new(text.to_owned());
    let err = |path: &JsonPath, rule: &'static str, msg: String| {
        Violation::error(name, path, positions.locate(path), rule, msg)
    };
    let root = JsonPath::root();
    let Value::Object(mut top) = doc else {
        let found = kind_of(&doc);
        let m = format!("expected a JSON object with an `{items_key}` array, found {found}");
        out.push(err(&root, "json.shape", m));
        return None;
    };
    let items = match top.remove(items_key) {
        Some(Value::Array(a)) => a,
        Some(other) => {
            let m = format!("expected an array, found {}", kind_of(&other));
            out.push(err(&root.key(items_key), "json.type", m));
            return None;
        }
        None => {
            let m = format!("missing field `{items_key}` (expected an array)");
            out.push(err(&root, "json.missing-field", m));
            return None;
        }
    };
    // the header, with an empty array
    top.insert(items_key.to_string(), Value::Array(Vec::new()));
    let header = serde_path_to_error::deserialize::<_, T>(Value::Object(top));
    if let Err(e) = &header {
        let at = root.join_serde(e.path());
        out.push(err(&at, "json.type", e.inner().to_string()));
    }
    let items_in_file = items.len();
    let (mut decoded, mut file_index) = (Vec::new(), Vec::new());
    for (i, item) in items.into_iter().enumerate() {
        match serde_path_to_error::deserialize::<_, T::Item>(item) {
            Ok(v) => {
                decoded.push(v);
                file_index.push(i);
            }
            Err(e) => {
                let path = root.key(items_key).index(i).join_serde(e.path());
                out.push(err(&path, "json.type", e.into_inner().to_string()));
            }
        }
    }
    let mut value = header.ok()?;
    value.set_items(decoded);
    Some((value, file_index, items_in_file))
}

/// A document type whose items live in one top-level array.
pub trait Items: DeserializeOwned {
    type Item: DeserializeOwned;
    const KEY: &'static str;
    fn set_items(&mut self, items: Vec<Self::Item>);
    fn item_count(&self) -> usize;
}

/// `Items` for a document type: its item type and the field (and JSON key) holding them.
macro_rules! items {
    ($doc:ty, $item:ty, $field:ident) => {
        impl Items for $doc {
            type Item = $item;
            const KEY: &'static str = stringify!($field);
            fn set_items(&mut self, items: Vec<$item>) {
                self.$field = items;
            }
            fn item_count(&self) -> usize {
                self.$field.len()
            }
        }
    };
}

items!(Corpus, Tool, tools);
items!(GoldenSet, Query, queries);
items!(SecurityCorpus, Entry, entries);

/// Decodes a whole document. A well-formed file (the common case) decodes straight from the
/// text into its types, with no intermediate JSON tree; only a file that fails to decode takes
/// the item-by-item path of `decode`, which finds every bad item and where it is. The text is
/// kept, not copied, for locating violations.
pub fn load<T: Items>(
    source: Source,
    text: Cow<'static, str>,
    out: &mut Vec<Violation>,
) -> Option<Loaded<T>> {
    let fast = serde_json::from_str::<T>(&text);
    // the embedded datasets are the committed files, which CI validates from their paths
    // (`validate --profile strict --datasets datasets/v1`): a replay started per server starts
    // without a second walk of the whole corpus
    let dup = (!source.embedded).then(|| duplicate_key(&text)).flatten();
    // keys are compared in well-formed JSON only (a syntax error is reported on its own)
    let well_formed = fast.is_ok() || serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok();
    if let Some(d) = dup.filter(|_| well_formed) {
        let key = match d.path.0.last() {
            Some(Seg::Key(k)) => k.clone(),
            _ => String::new(),
        };
        let (line, column) = d.first;
        out.push(Violation::error(&source.name, &d.path, d.second, "json.duplicate-key", format!("the key {key:?} is given twice in one object (first at line {line}, column {column}); a JSON reader keeps only the last value, so the first would be ignored: remove one")));
    }
    let (value, file_index, items_in_file) = match fast {
        Ok(value) => {
            let n = value.item_count();
            (value, (0..n).collect(), n)
        }
        Err(_) => decode(&source.name, &text, out)?,
    };
    Some(Loaded {
        value,
        source,
        positions: Positions::new(text),
        file_index,
        items_in_file,
    })
}

/// What a JSON value is, as an error message says it (`a string`, `an object`).
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::dataset::embedded;
    use std::fmt::Debug;

    /// The direct decode and the item-by-item one, each as `view` shows it.
    fn both_paths<T: Items, V: Debug>(text: &'static str, view: fn(&T) -> V) -> (V, V, usize) {
        let src = || Source::new("t.json", false, text);
        let mut out = Vec::new();
        let fast = load::<T>(src(), text.into(), &mut out).expect("fast path");
        let (slow, slow_index, _) = decode::<T>("t.json", text, &mut out).unwrap();
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(fast.file_index, slow_index);
        (view(&fast.value), view(&slow), fast.value.item_count())
    }

    #[test]
    fn the_direct_decode_of_a_valid_file_equals_the_item_by_item_decode() {
        // the tools' schemas are kept as text, compact on the item-by-item path: compared as JSON
        let json = |c: &Corpus| serde_json::to_value(c).unwrap();
        let (a, b, n) = both_paths::<Corpus, _>(embedded::CORPUS_FILE.text(), json);
        assert_eq!(a, b);
        assert!(n > 2_000, "{n}");
        let json = |g: &GoldenSet| serde_json::to_value(g).unwrap();
        let (a, b, n) = both_paths::<GoldenSet, _>(embedded::GOLDEN_FILE.text(), json);
        assert_eq!(a, b);
        assert!(n > 500, "{n}");
        let debug = |s: &SecurityCorpus| format!("{s:?}");
        let (a, b, n) = both_paths::<SecurityCorpus, _>(embedded::SECURITY_FILE.text(), debug);
        assert_eq!(a, b);
        assert!(n > 400, "{n}");
    }

    #[test]
    fn a_file_the_direct_decode_refuses_still_gets_every_violation_with_its_path() {
        // two bad items: the direct decode stops at the first, the fallback finds both
        let text = r#"{"version": "c", "tools": [
            {"tool_id": "s:a", "description": 1},
            {"tool_id": "s:b"},
            {"tool_id": 7}
        ]}"#;
        let mut out = Vec::new();
        let l = load::<Corpus>(Source::new("c.json", false, text), text.into(), &mut out).unwrap();
        let paths: Vec<&str> = out.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(
            paths,
            ["$.tools[0].description", "$.tools[2].tool_id"],
            "{out:?}"
        );
        assert_eq!(out[0].line, 2);
        // the good item survives, at its place in the file
        assert_eq!(l.value.tools.len(), 1);
        assert_eq!(l.file_index, [1]);
    }

    #[test]
    fn a_tools_schema_stays_text_until_used_and_compares_as_json() {
        use crate::pipeline::dataset::{RawJson, Tool};
        let text = r#"{"version": "c", "tools": [{"tool_id": "s:a", "inputSchema": {"type": "object",
            "properties": {"x": {"type": "string"}}}, "annotations": {"readOnlyHint": true}}]}"#;
        let mut out = Vec::new();
        let l = load::<Corpus>(Source::new("c.json", false, text), text.into(), &mut out).unwrap();
        let t = &l.value.tools[0];
        let s = t.schema.as_ref().expect("inputSchema is the schema");
        // the file's own text, whitespace and all
        assert!(
            s.get().starts_with("{\"type\": \"object\",\n"),
            "{}",
            s.get()
        );
        let tree = serde_json::json!({"type": "object", "properties": {"x": {"type": "string"}}});
        assert_eq!(s.value(), tree);
        assert_eq!(*s, RawJson::from_value(&tree));
        assert_ne!(
            *s,
            RawJson::from_value(&serde_json::json!({"type": "object"}))
        );
        assert_eq!(
            t.annotations.as_ref().map(RawJson::value),
            Some(serde_json::json!({"readOnlyHint": true}))
        );
        // through a JSON tree (the item-by-item path) it is the same value
        let via_tree: Tool = serde_json::from_value(serde_json::to_value(t).unwrap()).unwrap();
        assert_eq!(via_tree.schema.as_ref(), Some(s));
    }
}
