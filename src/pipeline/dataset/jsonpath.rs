//! JSON paths (`$.queries[3].labels[0]`) and where each value starts in the source text.
//!
//! serde_json does not keep spans, so validation errors could not point at a line. This module
//! scans the (already successfully parsed) text once and records the line and column where every
//! value begins, keyed by its path. Lookups of a path that does not exist (a missing field) fall
//! back to the nearest existing ancestor, which is where the reader has to look.

use std::collections::HashMap;
use std::fmt;

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A path from the document root, printed as `$.a.b[3]["odd key"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct JsonPath(pub Vec<Seg>);

impl JsonPath {
    pub fn root() -> Self {
        JsonPath(Vec::new())
    }
    pub fn key(&self, k: &str) -> Self {
        let mut v = self.0.clone();
        v.push(Seg::Key(k.to_string()));
        JsonPath(v)
    }
    pub fn index(&self, i: usize) -> Self {
        let mut v = self.0.clone();
        v.push(Seg::Index(i));
        JsonPath(v)
    }
    pub fn parent(&self) -> Option<Self> {
        if self.0.is_empty() {
            None
        } else {
            Some(JsonPath(self.0[..self.0.len() - 1].to_vec()))
        }
    }
    /// Appends a path reported by `serde_path_to_error` (relative to `self`).
    pub fn join_serde(&self, p: &serde_path_to_error::Path) -> Self {
        let mut v = self.0.clone();
        for seg in p.iter() {
            match seg {
                serde_path_to_error::Segment::Seq { index } => v.push(Seg::Index(*index)),
                serde_path_to_error::Segment::Map { key } => v.push(Seg::Key(key.clone())),
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => {}
            }
        }
        JsonPath(v)
    }
}

fn is_ident(k: &str) -> bool {
    !k.is_empty()
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !k.starts_with(|c: char| c.is_ascii_digit())
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for s in &self.0 {
            match s {
                Seg::Key(k) if is_ident(k) => write!(f, ".{k}")?,
                Seg::Key(k) => write!(f, "[{}]", serde_json::Value::String(k.clone()))?,
                Seg::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// Line and column (both from 1; the column counts characters) of each value in a document.
///
/// The table is built on the first lookup: a valid multi-megabyte corpus never needs it, and
/// building it costs more than parsing the document.
#[derive(Debug, Default)]
pub struct Positions {
    /// The file's text itself, not a copy (a dataset's text is read once and kept here).
    text: std::borrow::Cow<'static, str>,
    map: std::sync::OnceLock<HashMap<JsonPath, (usize, usize)>>,
}

impl Positions {
    /// Keeps `text`, which must already be valid JSON (parse it with serde_json first), for
    /// lookups. On unexpected input the scan stops early; lookups then fall back to ancestors.
    pub fn new(text: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        Positions {
            text: text.into(),
            map: std::sync::OnceLock::new(),
        }
    }

    fn table(&self) -> &HashMap<JsonPath, (usize, usize)> {
        self.map.get_or_init(|| {
            let mut s = Scanner {
                b: self.text.as_bytes(),
                i: 0,
                line: 1,
                col: 1,
                map: HashMap::new(),
            };
            let _ = s.value(JsonPath::root());
            s.map
        })
    }

    /// Where `path` starts, or its nearest existing ancestor; (1, 1) when nothing is known.
    pub fn locate(&self, path: &JsonPath) -> (usize, usize) {
        let map = self.table();
        let mut p = Some(path.clone());
        while let Some(cur) = p {
            if let Some(pos) = map.get(&cur) {
                return *pos;
            }
            p = cur.parent();
        }
        (1, 1)
    }
}

/// Values nested deeper than this are located at their ancestor at this depth: a dataset's
/// own structure is a handful of levels, and only tool schemas (refused deeper than 100 levels)
/// go further.
const LOCATED_DEPTH: usize = 128;

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    line: usize,
    col: usize,
    map: HashMap<JsonPath, (usize, usize)>,
}

impl Scanner<'_> {
    fn bump(&mut self) {
        let c = self.b[self.i];
        self.i += 1;
        if c == b'\n' {
            self.line += 1;
            self.col = 1;
        } else if c & 0xC0 != 0x80 {
            // count characters, not bytes: UTF-8 continuation bytes do not advance the column
            self.col += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c == b' ' || c == b'\n' || c == b'\r' || c == b'\t' {
                self.bump();
            } else {
                break;
            }
        }
    }
    fn expect(&mut self, c: u8) -> Option<()> {
        if self.peek() == Some(c) {
            self.bump();
            Some(())
        } else {
            None
        }
    }
    fn string(&mut self) -> Option<String> {
        let start = self.string_raw()?;
        let raw = std::str::from_utf8(&self.b[start..self.i]).ok()?;
        serde_json::from_str::<String>(raw).ok()
    }
    /// Skips one value without recording what is inside it, iteratively: a value nested
    /// thousands deep costs its length, not its depth squared (each recorded path holds all its
    /// ancestors) nor a frame per level.
    fn skip(&mut self) -> Option<()> {
        let mut open = 0usize;
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.string_raw()?;
                    if open == 0 {
                        return Some(());
                    }
                }
                Some(b'{' | b'[') => {
                    open += 1;
                    self.bump();
                }
                Some(b'}' | b']') if open > 0 => {
                    open -= 1;
                    self.bump();
                    if open == 0 {
                        return Some(());
                    }
                }
                // the end of a scalar
                None | Some(b'}' | b']' | b',' | b' ' | b'\n' | b'\r' | b'\t') if open == 0 => {
                    return Some(());
                }
                None => return None,
                Some(_) => self.bump(),
            }
        }
    }
    /// Steps over a string literal, returning where it started.
    fn string_raw(&mut self) -> Option<usize> {
        let start = self.i;
        self.expect(b'"')?;
        let mut escaped = false;
        loop {
            let c = self.peek()?;
            self.bump();
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                return Some(start);
            }
        }
    }
    fn value(&mut self, path: JsonPath) -> Option<()> {
        self.ws();
        self.map.insert(path.clone(), (self.line, self.col));
        if path.0.len() >= LOCATED_DEPTH {
            // deeper values are located at this one
            return self.skip();
        }
        match self.peek()? {
            b'{' => {
                self.bump();
                self.ws();
                if self.expect(b'}').is_some() {
                    return Some(());
                }
                loop {
                    self.ws();
                    let key = self.string()?;
                    self.ws();
                    self.expect(b':')?;
                    self.value(path.key(&key))?;
                    self.ws();
                    match self.peek()? {
                        b',' => self.bump(),
                        b'}' => {
                            self.bump();
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.bump();
                self.ws();
                if self.expect(b']').is_some() {
                    return Some(());
                }
                let mut idx = 0;
                loop {
                    self.value(path.index(idx))?;
                    idx += 1;
                    self.ws();
                    match self.peek()? {
                        b',' => self.bump(),
                        b']' => {
                            self.bump();
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(|_| ()),
            _ => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.bump();
                }
                Some(())
            }
        }
    }
}

/// How deep JSON text nests (`{}` and `[]` levels), read without building it.
pub fn json_text_depth(text: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// A key given twice in one object: JSON readers keep only the last value, so the first would
/// be ignored without a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The second occurrence's path.
    pub path: JsonPath,
    /// Line and column of the first occurrence of the key, and of the second one's value
    /// (where the path points).
    pub first: (usize, usize),
    pub second: (usize, usize),
}

/// The first key given twice in one object of `text`, found in one pass without building the
/// document. Keys are compared decoded (`"\u0076ersion"` is `"version"`). Meant for valid JSON
/// (it runs beside the decoder, which judges the syntax); on malformed text it stops without a
/// finding.
///
/// Nothing is allocated per key: keys are borrowed from the text (decoded only when they hold an
/// escape), each object's keys sit in a short list (a hash set past [`FEW_KEYS`]) whose storage
/// is reused, and the path is built only for the duplicate.
pub fn duplicate_key(text: &str) -> Option<DuplicateKey> {
    use std::borrow::Cow;
    /// A key's byte offset: turned into a line and column only for the duplicate.
    type Pos = usize;
    enum Keys<'a> {
        Few(Vec<(Cow<'a, str>, Pos)>),
        Many(HashMap<Cow<'a, str>, Pos>),
    }
    impl<'a> Keys<'a> {
        /// Where `key` was first given, or records it at `pos`.
        fn seen_or_add(&mut self, key: Cow<'a, str>, pos: Pos) -> Option<Pos> {
            match self {
                Keys::Few(v) => {
                    if let Some((_, p)) = v.iter().find(|(k, _)| *k == key) {
                        return Some(*p);
                    }
                    if v.len() < FEW_KEYS {
                        v.push((key, pos));
                    } else {
                        let mut m: HashMap<_, _> = v.drain(..).collect();
                        m.insert(key, pos);
                        *self = Keys::Many(m);
                    }
                    None
                }
                Keys::Many(m) => match m.get(&key) {
                    Some(p) => Some(*p),
                    None => {
                        m.insert(key, pos);
                        None
                    }
                },
            }
        }
    }
    enum Frame<'a> {
        /// The keys so far, and the key whose value is being read.
        Object(Keys<'a>, Cow<'a, str>),
        Array(usize),
    }
    let b = text.as_bytes();
    let mut i = 0usize;
    let mut stack: Vec<Frame> = Vec::new();
    // the key lists of closed objects, cleared, for the next objects
    let mut spare: Vec<Vec<(Cow<str>, Pos)>> = Vec::new();
    let mut expect_key = false;
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                let start = i;
                i += 1;
                // past the closing quote, each escape's next byte skipped
                loop {
                    i += memchr::memchr2(b'"', b'\\', b.get(i..)?)? + 1;
                    if b[i - 1] == b'"' {
                        break;
                    }
                    i += 1;
                }
                if expect_key && let Some(Frame::Object(keys, current)) = stack.last_mut() {
                    let raw = text.get(start..i)?;
                    let key: Cow<str> = if raw.contains('\\') {
                        serde_json::from_str::<String>(raw)
                            .map(Cow::Owned)
                            .unwrap_or(Cow::Borrowed(raw))
                    } else {
                        Cow::Borrowed(&raw[1..raw.len() - 1])
                    };
                    *current = key.clone();
                    if let Some(first) = keys.seen_or_add(key, start) {
                        // the second value's start: past the colon and white space
                        let value = i + b[i..]
                            .iter()
                            .take_while(|d| matches!(d, b':' | b' ' | b'\t' | b'\r' | b'\n'))
                            .count();
                        let path = stack
                            .iter()
                            .map(|f| match f {
                                Frame::Object(_, k) => Seg::Key(k.to_string()),
                                Frame::Array(n) => Seg::Index(*n),
                            })
                            .collect();
                        return Some(DuplicateKey {
                            path: JsonPath(path),
                            first: line_col(b, first),
                            second: line_col(b, value),
                        });
                    }
                    expect_key = false;
                }
                continue;
            }
            b'{' => {
                let keys = spare.pop().unwrap_or_default();
                stack.push(Frame::Object(Keys::Few(keys), Cow::Borrowed("")));
                expect_key = true;
            }
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                if let Some(Frame::Object(Keys::Few(mut keys), _)) = stack.pop() {
                    keys.clear();
                    spare.push(keys);
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object(..)) => expect_key = true,
                Some(Frame::Array(n)) => *n += 1,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    None
}

/// The line and column (1-based, counted in characters) of byte `offset` of `b`.
fn line_col(b: &[u8], offset: usize) -> (usize, usize) {
    let before = &b[..offset.min(b.len())];
    let line_start = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |n| n + 1);
    let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
    let col = 1 + before[line_start..]
        .iter()
        .filter(|&&c| c & 0xC0 != 0x80)
        .count();
    (line, col)
}

/// Objects with up to this many keys are checked by comparing with each key so far (cheaper
/// than hashing for the short objects of a dataset); longer ones go to a hash set.
const FEW_KEYS: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_found_with_both_positions() {
        let t = "{\"a\": [1, {\"x\": 1, \"y\": {\"x\": 2}},\n {\"b\": 1, \"\\u0062\": 2}]}";
        let d = duplicate_key(t).unwrap();
        assert_eq!(d.path.to_string(), "$.a[2].b");
        assert_eq!((d.first, d.second), ((2, 3), (2, 21)));
        assert_eq!(
            duplicate_key("{\"a\": {\"a\": {\"a\": \"a,a\"}}, \"b\": [\"b\", \"b\"]}"),
            None
        );
        // past FEW_KEYS keys an object's keys are hashed: the duplicate is still found, and a
        // closed object's keys do not leak into the next object
        let many: String = (0..40).map(|k| format!("\"k{k}\": {k}, ")).collect();
        let t = format!("[{{{many}\"z\": 0}}, {{{many}\"k7\": 0}}]");
        let d = duplicate_key(&t).unwrap();
        assert_eq!(d.path.to_string(), "$[1].k7");
        let second = t.find("}, {").unwrap() + 3;
        let k7 = second + t[second..].find("\"k7\"").unwrap();
        assert_eq!(d.first, (1, k7 + 1), "the first k7 of the second object");
        // malformed text (the decoder reports it) ends the scan without a finding or a panic
        for bad in ["{\"", "{\"a\": 1, \"a", "[\"\\", "}}]{\"a\":1,\"a\":2}"] {
            let _ = duplicate_key(bad);
        }
        assert_eq!(duplicate_key("{\"a\": 1, \"a"), None);
        // columns count characters ("é" is two bytes), and an escaped quote does not end a
        // string: the `"x\"y"` inside the first value is not a key
        let t = "{\"d\": \"é \\\"x\\\": 1\",\n \"é\": 1, \"é\":\n  2}";
        let d = duplicate_key(t).unwrap();
        assert_eq!(d.path.to_string(), "$[\"é\"]");
        assert_eq!((d.first, d.second), ((2, 2), (3, 3)));
    }

    #[test]
    fn paths_print_like_jsonpath() {
        let p = JsonPath::root()
            .key("queries")
            .index(3)
            .key("labels")
            .index(0)
            .key("tool id");
        assert_eq!(p.to_string(), "$.queries[3].labels[0][\"tool id\"]");
    }

    #[test]
    fn a_value_nested_thousands_deep_is_located_at_its_ancestor_and_later_values_exactly() {
        // 16,000 levels: the table keeps LOCATED_DEPTH levels, each path once
        let n = 16_000;
        let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let text = format!("{{\"a\": {{\"x\": {deep}, \"s\": \"[{{\", \"n\": 12345}},\n\"b\": 7}}");
        let pos = Positions::new(text);
        let mut deep_path = JsonPath::root().key("a").key("x");
        for _ in 0..200 {
            deep_path = deep_path.index(0);
        }
        let cut = {
            let mut p = JsonPath::root().key("a").key("x");
            for _ in 0..LOCATED_DEPTH - 2 {
                p = p.index(0);
            }
            p
        };
        assert_eq!(pos.locate(&deep_path), pos.locate(&cut));
        assert_eq!(pos.locate(&cut), (1, 13 + LOCATED_DEPTH - 2));
        assert!(
            pos.table().len() < 2 * LOCATED_DEPTH,
            "{}",
            pos.table().len()
        );
        // after the skipped value: a string holding brackets, a number, the next line
        let after = 13 + 2 * n;
        assert_eq!(
            pos.locate(&JsonPath::root().key("a").key("s")),
            (1, after + 7)
        );
        assert_eq!(
            pos.locate(&JsonPath::root().key("a").key("n")),
            (1, after + 18)
        );
        assert_eq!(pos.locate(&JsonPath::root().key("b")), (2, 6));
    }

    #[test]
    fn positions_point_at_values_and_fall_back_to_ancestors() {
        let text = "{\n  \"a\": [1,\n    {\"b\": \"é\", \"c\": true}]\n}\n";
        let pos = Positions::new(text);
        assert_eq!(pos.locate(&JsonPath::root()), (1, 1));
        assert_eq!(pos.locate(&JsonPath::root().key("a")), (2, 8));
        assert_eq!(pos.locate(&JsonPath::root().key("a").index(1)), (3, 5));
        // the column counts characters: "é" is two bytes but one column
        assert_eq!(
            pos.locate(&JsonPath::root().key("a").index(1).key("c")),
            (3, 21)
        );
        // a missing field points at its object
        assert_eq!(
            pos.locate(&JsonPath::root().key("a").index(1).key("zzz")),
            (3, 5)
        );
    }
}
