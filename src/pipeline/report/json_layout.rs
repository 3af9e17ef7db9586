//! The layout of `report.json`: indented where a person reads it (the run, the metrics, the
//! gate), one line per row in its long lists (a query's metrics, a query's ranked ids, a tool's
//! diagnostics, a detector's entries). A 20,000-query report is a third smaller than fully
//! indented, so it is written and read back faster (docs/performance.md), and each row stays
//! one line for `grep` and line diffs. Only whitespace differs from `to_writer_pretty`: the
//! parsed value is the same (tested below).

use serde_json::ser::Formatter;
use std::io::{self, Write};

/// Arrays under these keys keep their items indented (each item is a large section holding
/// lists of its own: an observed run, a detector); every other array's objects and arrays are
/// written one per line, compactly.
const SECTIONS: &[&[u8]] = &[b"runs", b"detectors"];

const INDENT: &[u8] = b"  ";

/// One open container.
struct Frame {
    array: bool,
    /// An array whose items are written indented (a [`SECTIONS`] key).
    sections: bool,
    /// Written on one line (this container or one around it is a row).
    compact: bool,
    has_value: bool,
}

/// A `serde_json` formatter: indented like `to_writer_pretty` (two spaces) outside rows,
/// compact inside them.
#[derive(Default)]
pub struct RowsFormatter {
    stack: Vec<Frame>,
    /// The key being written, captured to choose an array's layout.
    key: Vec<u8>,
    in_key: bool,
}

impl RowsFormatter {
    fn compact(&self) -> bool {
        self.stack.last().is_some_and(|f| f.compact)
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, array: bool) -> io::Result<()> {
        let compact = match self.stack.last() {
            None => false,
            Some(p) => p.compact || (p.array && !p.sections),
        };
        let sections = array
            && !compact
            && self.stack.last().is_some_and(|p| !p.array)
            && SECTIONS.contains(&self.key.as_slice());
        self.stack.push(Frame {
            array,
            sections,
            compact,
            has_value: false,
        });
        w.write_all(if array { b"[" } else { b"{" })
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, array: bool) -> io::Result<()> {
        let f = self.stack.pop().expect("a container is open");
        if f.has_value && !f.compact {
            self.newline(w)?;
        }
        w.write_all(if array { b"]" } else { b"}" })
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.stack.len() {
            w.write_all(INDENT)?;
        }
        Ok(())
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.compact() {
            if !first {
                w.write_all(b",")?;
            }
            return Ok(());
        }
        if !first {
            w.write_all(b",")?;
        }
        self.newline(w)
    }

    fn done(&mut self) {
        if let Some(f) = self.stack.last_mut() {
            f.has_value = true;
        }
    }
}

impl Formatter for RowsFormatter {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, true)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, true)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.done();
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, false)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, false)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.key.clear();
        self.in_key = !self.compact();
        self.item(w, first)
    }
    fn end_object_key<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.in_key = false;
        Ok(())
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(if self.compact() { b":" } else { b": " })
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.done();
        Ok(())
    }
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if self.in_key {
            self.key.extend_from_slice(fragment.as_bytes());
        }
        w.write_all(fragment.as_bytes())
    }
    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        // a key with an escape is never a section name
        if self.in_key {
            self.key.push(0);
        }
        serde_json::ser::CompactFormatter.write_char_escape(w, escape)
    }
}

/// Writes `value` to `w` in the report layout. Long lists marked with
/// [`rows`](crate::infra::json_rows::rows) are rendered on worker threads.
pub fn to_writer<W: Write, T: serde::Serialize + ?Sized>(
    w: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, RowsFormatter::default());
    crate::infra::json_rows::in_parallel(|| value.serialize(&mut ser))
}

/// `value` as a string in the report layout.
pub fn to_string<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    to_writer(&mut out, value)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infra::json_rows::{ROWS_PER_PIECE, rows};
    use serde_json::{Value, json};

    fn layout(v: &Value) -> String {
        to_string(v).unwrap()
    }

    #[test]
    fn rows_are_one_line_sections_and_the_top_are_indented() {
        let v = json!({
            "name": "x",
            "empty": {}, "none": [],
            "per_query": [{"id": "q1", "metrics": {"mrr": 1.0}, "labels": [{"t": "a"}]}, {"id": "q2"}],
            "scalars": [1, 2],
            "observations": {"runs": [{"run": 1, "queries": [{"id": "q1", "ranked": ["a", "b"]}]}]},
        });
        assert_eq!(
            layout(&v),
            r#"{
  "name": "x",
  "empty": {},
  "none": [],
  "per_query": [
    {"id":"q1","metrics":{"mrr":1.0},"labels":[{"t":"a"}]},
    {"id":"q2"}
  ],
  "scalars": [
    1,
    2
  ],
  "observations": {
    "runs": [
      {
        "run": 1,
        "queries": [
          {"id":"q1","ranked":["a","b"]}
        ]
      }
    ]
  }
}"#
        );
    }

    #[test]
    fn a_section_key_inside_a_row_or_escaped_changes_nothing() {
        // `runs` inside a row stays compact; an escaped key equal to a section name is not one
        let v = json!({"rows": [{"runs": [{"a": 1}]}], "r\u{0}uns": [{"a": 1}], "runs": 3});
        assert_eq!(
            layout(&v),
            "{\n  \"rows\": [\n    {\"runs\":[{\"a\":1}]}\n  ],\n  \"r\\u0000uns\": [\n    {\"a\":1}\n  ],\n  \"runs\": 3\n}"
        );
    }

    /// `count` values of every shape, nested (strings with escapes and non-ASCII, floats, keys
    /// named like sections), the same for the same `seed`.
    fn generated(count: usize, mut seed: u64) -> Vec<Value> {
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        fn value(depth: usize, next: &mut dyn FnMut() -> usize) -> Value {
            let keys = ["runs", "detectors", "per_query", "k\"q", "a\\b", "é", ""];
            match if depth > 4 { next() % 4 } else { next() % 7 } {
                0 => Value::Null,
                1 => json!(next() % 1000),
                2 => json!(format!("s\n\"{}\u{1}é", next() % 10)),
                3 => json!((next() % 1000) as f64 / 7.0),
                4 | 5 => Value::Array((0..next() % 4).map(|_| value(depth + 1, next)).collect()),
                _ => Value::Object(
                    (0..next() % 4)
                        .map(|_| {
                            (
                                keys[next() % keys.len()].to_string(),
                                value(depth + 1, next),
                            )
                        })
                        .collect(),
                ),
            }
        }
        (0..count).map(|_| value(0, &mut next)).collect()
    }

    #[test]
    fn the_value_is_the_pretty_printed_one_for_any_document() {
        // only whitespace may differ from to_string_pretty
        for v in generated(2000, 7) {
            let text = layout(&v);
            let squeeze = |s: &str| {
                serde_json::to_string(&serde_json::from_str::<Value>(s).unwrap()).unwrap()
            };
            // (parsed both ways alike: serde_json reads some floats a last digit off)
            assert_eq!(
                squeeze(&text),
                squeeze(&serde_json::to_string_pretty(&v).unwrap()),
                "{text}"
            );
        }
    }

    #[test]
    fn rows_rendered_in_parallel_are_the_bytes_of_the_plain_sequence() {
        #[derive(serde::Serialize)]
        struct Doc {
            name: &'static str,
            #[serde(serialize_with = "rows")]
            per_query: Vec<Value>,
            #[serde(serialize_with = "rows")]
            runs: Vec<Run>,
            #[serde(serialize_with = "rows")]
            few: Vec<Value>,
        }
        #[derive(serde::Serialize)]
        struct Run {
            run: usize,
            #[serde(serialize_with = "rows")]
            queries: Vec<Value>,
        }
        // not a multiple of the piece size; a list inside a section; a list too short to split
        let doc = Doc {
            name: "x",
            per_query: generated(5 * ROWS_PER_PIECE + 17, 11),
            runs: vec![Run {
                run: 1,
                queries: generated(3 * ROWS_PER_PIECE - 1, 13),
            }],
            few: generated(5, 17),
        };
        let parallel = to_string(&doc).unwrap();
        // the same document as a plain tree: every list written on this thread, in sequence
        let plain = layout(&serde_json::to_value(&doc).unwrap());
        assert_eq!(parallel, plain);
        assert!(
            parallel.contains("\n    {\n      \"run\": 1,"),
            "the run stays a section"
        );
        // an error in a row (a map with a non-string key) is an error of the whole, not a hang
        #[derive(serde::Serialize)]
        struct Bad {
            #[serde(serialize_with = "rows")]
            rows: Vec<std::collections::BTreeMap<Vec<u8>, u8>>,
        }
        let bad = Bad {
            rows: (0..3 * ROWS_PER_PIECE)
                .map(|i| [(vec![i as u8], 1)].into_iter().collect())
                .collect(),
        };
        assert!(to_string(&bad).is_err());
    }
}
