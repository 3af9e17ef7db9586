//! JSON paths (`$.queries[3].labels[0]`) and where each value starts in the source text.
//!
//! serde_json does not keep spans, so validation errors could not point at a line. When a file
//! has something to report, serde_json reads its (already successfully parsed) text once more,
//! through a reader that counts the bytes it takes, and the start of every value is noted,
//! keyed by its path. Lookups of a path that does not exist (a missing field) fall back to the
//! nearest existing ancestor, which is where the reader has to look. The same walk finds a key
//! given twice in one object.

use serde::Deserializer;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
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
/// The table is built on the first lookup, by reading the text once more: a valid file never
/// needs it.
#[derive(Debug, Default)]
pub struct Positions {
    /// The file's text itself, not a copy (a dataset's text is read once and kept here).
    text: Cow<'static, str>,
    map: OnceLock<HashMap<JsonPath, (usize, usize)>>,
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

    fn table(&self) -> &HashMap<JsonPath, (usize, usize)> {
        self.map.get_or_init(|| {
            // the walk notes values in the order they start: one sweep of the text places them
            let (mut at, mut place) = (0, (1, 1));
            let text = self.text.as_bytes();
            let starts = walk(&self.text, Mode::Table).starts.into_iter();
            starts
                .map(|(path, start)| {
                    place = advance(place, text.get(at..start).unwrap_or_default());
                    at = at.max(start);
                    (path, place)
                })
                .collect()
        })
    }

    /// Where `path` starts, or its nearest existing ancestor; (1, 1) when nothing is known.
    pub fn locate(&self, path: &JsonPath) -> (usize, usize) {
        let map = self.table();
        let mut p = Some(path.clone());
        while let Some(cur) = p {
            if let Some(&place) = map.get(&cur) {
                return place;
            }
            p = cur.parent();
        }
        (1, 1)
    }
}

/// A key given twice in one object: JSON readers keep only the last value, so the first would
/// be ignored without a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The path of both values.
    pub path: JsonPath,
    /// Line and column of the first value, and of the second.
    pub first: (usize, usize),
    pub second: (usize, usize),
}

/// The first key given twice in one object of `text` (keys compared decoded: `"\u0076ersion"`
/// is `"version"`), in values up to [`WALKED_DEPTH`] levels deep. Meant for valid JSON: on
/// malformed text (the decoder reports it) it finds nothing.
pub fn duplicate_key(text: &str) -> Option<DuplicateKey> {
    walk(text, Mode::Keys).duplicate?;
    // found: read again, counting, for where both values are
    let (path, first, second) = walk(text, Mode::KeysAt).duplicate?;
    Some(DuplicateKey {
        path,
        first: line_col(text, first?),
        second: line_col(text, second?),
    })
}

/// Values are walked this deep; deeper ones are skipped whole (serde_json skips without
/// recursing) and located at their ancestor. A dataset's own structure is a handful of levels,
/// and only tool schemas (refused deeper than 100 levels) go further.
const WALKED_DEPTH: usize = 100;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Only the first duplicate key, without positions.
    Keys,
    /// The first duplicate key and where its two values start.
    KeysAt,
    /// Where every value starts.
    Table,
}

/// What one walk of a document found.
struct Found<'a> {
    mode: Mode,
    text: &'a [u8],
    /// Bytes serde_json has taken from the text, when it reads through [`Counted`].
    read: Option<&'a Cell<usize>>,
    path: Vec<Seg>,
    starts: Vec<(JsonPath, usize)>,
    duplicate: Option<(JsonPath, Option<usize>, Option<usize>)>,
}

/// What a walk found: where values start, the first key given twice (where its values start).
struct Walked {
    /// In the order the values start in the text.
    starts: Vec<(JsonPath, usize)>,
    duplicate: Option<(JsonPath, Option<usize>, Option<usize>)>,
}

/// Walks `text` with serde_json (which judges the syntax), noting what `mode` asks for.
fn walk(text: &str, mode: Mode) -> Walked {
    let read = Cell::new(0);
    let found = RefCell::new(Found {
        mode,
        text: text.as_bytes(),
        read: None,
        path: Vec::new(),
        starts: Vec::new(),
        duplicate: None,
    });
    // a duplicate ends the walk with an error; any other error leaves what was found so far
    let _ = if mode == Mode::Keys {
        Node(&found, 0).deserialize(&mut serde_json::Deserializer::from_str(text))
    } else {
        // the positions come from counting the bytes serde_json reads
        found.borrow_mut().read = Some(&read);
        let counted = Counted {
            rest: text.as_bytes(),
            read: &read,
        };
        Node(&found, 0).deserialize(&mut serde_json::Deserializer::from_reader(counted))
    };
    let found = found.into_inner();
    Walked {
        starts: found.starts,
        duplicate: found.duplicate,
    }
}

/// The text as a reader that counts the bytes taken. serde_json takes one byte at a time, and
/// one ahead of a value it is about to read (to see what it is), not ahead of a map's value.
struct Counted<'a> {
    rest: &'a [u8],
    read: &'a Cell<usize>,
}

impl std::io::Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rest.read(buf)?;
        self.read.set(self.read.get() + n);
        Ok(n)
    }
}

/// A value of the document at `.1` levels deep; deserializes to where it starts.
struct Node<'f, 'a>(&'f RefCell<Found<'a>>, usize);

impl<'de> DeserializeSeed<'de> for Node<'_, '_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        let start = {
            let mut f = self.0.borrow_mut();
            // the byte serde_json looked at last is this value's first, or (in a map) the colon
            // before it
            let start = f.read.map(|n| {
                let from = n.get().saturating_sub(1);
                from + f.text[from..]
                    .iter()
                    .take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b':' | b','))
                    .count()
            });
            if f.mode == Mode::Table
                && let Some(at) = start
            {
                let path = JsonPath(f.path.clone());
                f.starts.push((path, at));
            }
            start
        };
        if self.1 >= WALKED_DEPTH {
            d.deserialize_ignored_any(IgnoredAny)?;
        } else {
            d.deserialize_any(self)?;
        }
        Ok(start)
    }
}

impl<'de> Visitor<'de> for Node<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        for i in 0.. {
            self.0.borrow_mut().path.push(Seg::Index(i));
            let more = seq.next_element_seed(Node(self.0, self.1 + 1))?;
            self.0.borrow_mut().path.pop();
            if more.is_none() {
                break;
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys: HashMap<String, Option<usize>> = HashMap::new();
        while let Some(key) = map.next_key::<String>()? {
            self.0.borrow_mut().path.push(Seg::Key(key.clone()));
            let start = map.next_value_seed(Node(self.0, self.1 + 1))?;
            let mut f = self.0.borrow_mut();
            let path = f.path.clone();
            f.path.pop();
            if f.mode != Mode::Table
                && let Some(&first) = keys.get(&key)
            {
                f.duplicate = Some((JsonPath(path), first, start));
                return Err(serde::de::Error::custom("a key given twice"));
            }
            keys.insert(key, start);
        }
        Ok(())
    }
}

/// The line and column (1-based, counted in characters) of byte `offset` of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    advance((1, 1), &text.as_bytes()[..offset.min(text.len())])
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
