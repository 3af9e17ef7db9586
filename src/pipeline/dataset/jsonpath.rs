//! JSON paths (`$.queries[3].labels[0]`) and where each value starts in the source text.
//!
//! serde_json does not keep spans, so validation errors could not point at a line. When a file
//! has something to report, its (already successfully parsed) text is scanned once more and the
//! start of every value is noted, keyed by its path. Lookups of a path that does not exist (a
//! missing field) fall back to the nearest existing ancestor, which is where the reader has to
//! look. The same scan finds a key given twice in one object.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

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
        JsonPath([&self.0[..], &[Seg::Key(k.to_string())]].concat())
    }
    pub fn index(&self, i: usize) -> Self {
        JsonPath([&self.0[..], &[Seg::Index(i)]].concat())
    }
    /// Appends a path reported by `serde_path_to_error` (relative to `self`).
    pub fn join_serde(&self, p: &serde_path_to_error::Path) -> Self {
        use serde_path_to_error::Segment;
        let mut v = self.0.clone();
        for seg in p.iter() {
            match seg {
                Segment::Seq { index } => v.push(Seg::Index(*index)),
                Segment::Map { key } => v.push(Seg::Key(key.clone())),
                Segment::Enum { .. } | Segment::Unknown => {}
            }
        }
        JsonPath(v)
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ident = |k: &str| {
            k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        };
        f.write_str("$")?;
        for s in &self.0 {
            match s {
                Seg::Key(k) if ident(k) => write!(f, ".{k}")?,
                Seg::Key(k) => write!(f, "[{}]", serde_json::Value::String(k.clone()))?,
                Seg::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// Line and column (both from 1; the column counts characters) of each value in a document.
///
/// The table is built on the first lookup, by scanning the text once more: a valid file never
/// needs it.
#[derive(Debug, Default)]
pub struct Positions {
    /// The file's text itself, not a copy (a dataset's text is read once and kept here).
    text: Cow<'static, str>,
    map: OnceLock<HashMap<Vec<Seg>, (usize, usize)>>,
}

impl Positions {
    /// Keeps `text`, which must already be valid JSON (parse it with serde_json first), for
    /// lookups. On unexpected input the table stops early; lookups then fall back to ancestors.
    pub fn new(text: impl Into<Cow<'static, str>>) -> Self {
        Positions {
            text: text.into(),
            map: OnceLock::new(),
        }
    }

    fn table(&self) -> &HashMap<Vec<Seg>, (usize, usize)> {
        self.map.get_or_init(|| {
            // the scan notes values in the order they start: one sweep of the text places them
            let (mut at, mut place) = (0, (1, 1));
            let text = self.text.as_bytes();
            let starts = scan(&self.text, true).starts.unwrap_or_default();
            starts
                .into_iter()
                .map(|(path, start)| {
                    place = advance(place, &text[at..start]);
                    at = start;
                    (path, place)
                })
                .collect()
        })
    }

    /// Where `path` starts, or its nearest existing ancestor; (1, 1) when nothing is known.
    pub fn locate(&self, path: &JsonPath) -> (usize, usize) {
        let map = self.table();
        (0..=path.0.len())
            .rev()
            .find_map(|n| map.get(&path.0[..n]).copied())
            .unwrap_or((1, 1))
    }
}

/// A key given twice in one object: JSON readers keep only the last value, so the first would
/// be ignored without a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The path of both values.
    pub path: JsonPath,
    /// Line and column of the first value, and of the last (the one a reader keeps).
    pub first: (usize, usize),
    pub second: (usize, usize),
}

/// The first key given twice in one object of `text` (keys compared decoded: `"\u0076ersion"`
/// is `"version"`), in values up to `WALKED_DEPTH` levels deep, always in what a JSON reader
/// keeps (its last value of each key). Meant for valid JSON: on malformed text (the decoder
/// reports it) it finds nothing.
pub fn duplicate_key(text: &str) -> Option<DuplicateKey> {
    let (path, first, second) = scan(text, false).duplicate?;
    Some(DuplicateKey {
        path,
        first: advance((1, 1), &text.as_bytes()[..first]),
        second: advance((1, 1), &text.as_bytes()[..second]),
    })
}

/// Values are walked this deep; deeper ones are skipped whole and located at their ancestor. A
/// dataset's own structure is a handful of levels, and only tool schemas (refused deeper than
/// 100 levels) go further.
const WALKED_DEPTH: usize = 100;

/// One pass over JSON text. It stops at anything that is not JSON, keeping what it found.
struct Scan<'a> {
    text: &'a [u8],
    at: usize,
    path: Vec<Seg>,
    /// Where each value starts, in text order (noted only for a position table).
    starts: Option<Vec<(Vec<Seg>, usize)>>,
    /// The first key given twice: its path, where its first value starts and where its last.
    duplicate: Option<(JsonPath, usize, usize)>,
}

fn scan(text: &str, table: bool) -> Scan<'_> {
    let mut s = Scan {
        text: text.as_bytes(),
        at: 0,
        path: Vec::new(),
        starts: table.then(Vec::new),
        duplicate: None,
    };
    s.value(0);
    s
}

impl<'a> Scan<'a> {
    /// The next byte that is not white space.
    fn peek(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.text.get(self.at) {
            self.at += 1;
        }
        self.text.get(self.at).copied()
    }

    /// Moves past the string that starts here; its text, quotes included.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        self.at += 1;
        loop {
            match *self.text.get(self.at)? {
                b'"' => break,
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
        self.at += 1;
        Some(&self.text[start..self.at])
    }

    /// Moves past the value that starts here, `depth` levels deep; where it starts.
    fn value(&mut self, depth: usize) -> Option<usize> {
        let first = self.peek()?;
        let start = self.at;
        if let Some(starts) = &mut self.starts {
            starts.push((self.path.clone(), start));
        }
        match first {
            b'"' => _ = self.string()?,
            b'[' | b'{' if depth >= WALKED_DEPTH => {
                // skipped without recursing: only brackets outside strings count
                let mut open = 0;
                loop {
                    match *self.text.get(self.at)? {
                        b'"' => _ = self.string()?,
                        b => {
                            open +=
                                matches!(b, b'[' | b'{') as i32 - matches!(b, b']' | b'}') as i32;
                            self.at += 1;
                        }
                    }
                    if open == 0 {
                        break;
                    }
                }
            }
            b'[' | b'{' => self.items(first == b'{', depth)?,
            _ => {
                // a number, `true`, `false` or `null`: up to the next delimiter or the end
                let rest = &self.text[self.at + 1..];
                let end = rest.iter().position(|b| b",]} \t\r\n".contains(b));
                self.at += 1 + end.unwrap_or(rest.len());
            }
        }
        Some(start)
    }

    /// Moves past the array or object that starts here; an object's keys are compared decoded.
    fn items(&mut self, object: bool, depth: usize) -> Option<()> {
        let close = if object { b'}' } else { b']' };
        // each key's first value and its last so far
        let mut keys: HashMap<String, (usize, usize)> = HashMap::new();
        self.at += 1;
        if self.peek()? == close {
            self.at += 1;
            return Some(());
        }
        for i in 0.. {
            let seg = if object {
                // past the white space, anything but a string fails to decode as one
                self.peek()?;
                let key = serde_json::from_slice(self.string()?).ok()?;
                if self.peek()? != b':' {
                    return None;
                }
                self.at += 1;
                Seg::Key(key)
            } else {
                Seg::Index(i)
            };
            self.path.push(seg);
            let start = self.value(depth + 1)?;
            if let Some(Seg::Key(k)) = self.path.last() {
                let seen = keys.entry(k.clone()).or_insert((start, start));
                // its first value and the one before this (this one, the first time)
                let (first, last) = (seen.0, std::mem::replace(&mut seen.1, start));
                let found = || Some((JsonPath(self.path.clone()), first, start));
                match &mut self.duplicate {
                    _ if last == start => {}
                    // the same key a third time: a reader keeps its last value, so point there
                    Some((p, _, second)) if p.0 == self.path => *second = start,
                    // one found inside the value this repeat replaces is not in what a reader
                    // keeps: this repeat is the finding
                    Some((p, _, second))
                        if p.0.starts_with(&self.path) && (last..start).contains(second) =>
                    {
                        self.duplicate = found()
                    }
                    Some(_) => {}
                    None => self.duplicate = found(),
                }
            }
            self.path.pop();
            match self.peek()? {
                b',' => self.at += 1,
                b if b == close => break,
                _ => return None,
            }
        }
        self.at += 1;
        Some(())
    }
}

/// A line and column moved over `bytes`.
fn advance((line, column): (usize, usize), bytes: &[u8]) -> (usize, usize) {
    bytes.iter().fold((line, column), |(l, c), &b| match b {
        b'\n' => (l + 1, 1),
        // a UTF-8 continuation byte: the same character
        _ if b & 0xC0 == 0x80 => (l, c),
        _ => (l, c + 1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_found_with_both_values_places() {
        let t = "{\"a\": [1, {\"x\": 1, \"y\": {\"x\": 2}},\n {\"b\": 1, \"\\u0062\": 2}]}";
        let d = duplicate_key(t).unwrap();
        assert_eq!(d.path.to_string(), "$.a[2].b");
        assert_eq!((d.first, d.second), ((2, 8), (2, 21)));
        assert_eq!(
            duplicate_key("{\"a\": {\"a\": {\"a\": \"a,a\"}}, \"b\": [\"b\", \"b\"]}"),
            None
        );
        // a closed object's keys do not count in the next object
        assert_eq!(duplicate_key("[{\"k\": 1}, {\"k\": 2}]"), None);
        // malformed text (the decoder reports it): no finding, no panic
        for bad in ["{\"", "{\"a\": 1, \"a", "[\"\\", "}}]{\"a\":1,\"a\":2}"] {
            assert_eq!(duplicate_key(bad), None, "{bad}");
        }
        // columns count characters ("é" is two bytes), and an escaped quote does not end a
        // string: the `"x\"y"` inside the first value is not a key
        let t = "{\"d\": \"é \\\"x\\\": 1\",\n \"é\": 1, \"é\":\n  2}";
        let d = duplicate_key(t).unwrap();
        assert_eq!(d.path.to_string(), "$[\"é\"]");
        assert_eq!((d.first, d.second), ((2, 7), (3, 3)));
        // given three times: the first value and the last, the one a reader keeps
        let d = duplicate_key("{\"k\": 1,\n \"k\": 2,\n \"k\": 3}").unwrap();
        assert_eq!((d.first, d.second), ((1, 7), (3, 7)));
        // a key given twice inside a value that a repeat of its parent key replaces is not in
        // what a reader keeps: the parent's repeat is the finding, from its first value
        for t in [
            "{\"a\": {\"x\": 1, \"x\": 2},\n \"a\": 3}",
            "{\"a\": 0, \"a\": {\"x\": 1, \"x\": 2},\n \"a\": {\"x\": 3}}",
            "{\"a\": [{\"x\": 1, \"x\": 2}],\n \"a\": 3}",
        ] {
            let d = duplicate_key(t).unwrap();
            assert_eq!(d.path.to_string(), "$.a", "{t}");
            assert_eq!((d.first, d.second), ((1, 7), (2, 7)), "{t}");
        }
        // one inside the value a reader keeps stays the finding
        let d = duplicate_key("{\"a\": 1,\n \"a\": {\"x\": 1, \"x\": 2}}").unwrap();
        assert_eq!(d.path.to_string(), "$.a.x");
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
        // 16,000 levels: the table keeps WALKED_DEPTH levels, each path once
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
            for _ in 0..WALKED_DEPTH - 2 {
                p = p.index(0);
            }
            p
        };
        assert_eq!(pos.locate(&deep_path), pos.locate(&cut));
        assert_eq!(pos.locate(&cut), (1, 13 + WALKED_DEPTH - 2));
        assert!(
            pos.table().len() < 2 * WALKED_DEPTH,
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
        // no key is given twice, and the walk ends in good time
        let start = std::time::Instant::now();
        assert_eq!(duplicate_key(&pos.text), None);
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
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
