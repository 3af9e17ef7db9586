//! A fast path for the mcpproxy preset's `retrieve_tools` answer, read straight from its JSON
//! text: one validating pass that keeps only what [`normalize_id`] reads of each tool (`server`,
//! `server_name`, `name`, `tool`, `id`) and skips the rest (descriptions, input schemas,
//! annotations: most of the bytes), instead of a `serde_json::Value` of the whole answer, its
//! copy into jaq's value, the filter and the copy back.
//!
//! **Why it exists.** Every answer is mapped on the task that drives the queries, so the
//! mapping's cost adds straight to the time to a verdict; through jaq alone the reference proxy's
//! verdict was well over issue 38's 5 % bound. `docs/performance.md` has the figures.
//!
//! It answers only what it can answer exactly as the general path would
//! ([`Mapper::map_call_result`](super::Mapper::map_call_result) with
//! [`MCPPROXY_RETRIEVE_TOOLS_FILTER`](super::MCPPROXY_RETRIEVE_TOOLS_FILTER)): a JSON object
//! (not an envelope, not `"success": false`) with a `tools` key holding `null` or an array of at
//! most [`MAX_RESULTS`] objects, each of which reads as an id. Anything else (not JSON, another
//! shape, a duplicate key, a tool that is not an object or has no readable id, a number out of
//! range) is `None`, and the caller takes the general path, which gives the answer or the error
//! it always gave. Acceptance is never wider than `serde_json::Value`'s: every value skipped is
//! still parsed by the same `deserialize_any` calls (strings unescaped and checked, numbers
//! converted, the same depth limit), only not kept.

use super::MAX_RESULTS;
use super::ids::{IdStyle, normalize_id};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use std::fmt;

/// The key serde_json's `Value` treats specially (with its `raw_value` feature) as the first key
/// of an object; never accepted here, so that such an object takes the general path.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// The fields of a tool object that [`normalize_id`] reads (also under a nested `tool`).
const ID_FIELDS: [&str; 5] = ["server", "server_name", "name", "tool", "id"];

/// The ranked ids of a `retrieve_tools` answer's JSON text, or `None`: take the general path.
pub(super) fn retrieve_tools_ids(text: &str, style: IdStyle) -> Option<Vec<String>> {
    // what `serde_json::from_str` does: the value, then nothing but whitespace
    let mut de = serde_json::Deserializer::from_str(text);
    let top = (&mut de).deserialize_any(TopVisitor).ok()?;
    de.end().ok()?;
    if matches!(top.success, Some(Value::Bool(false))) {
        // an in-band tool error: the general path words it
        return None;
    }
    match top.tools? {
        // `.tools == null`: no match (mcpproxy before v0.52.0)
        None => Some(Vec::new()),
        Some(tools) if tools.len() > MAX_RESULTS => None,
        Some(tools) => tools
            .into_iter()
            .map(|Tool(fields)| normalize_id(&Value::Object(fields), style))
            .collect(),
    }
}

/// The visitor `$t` as its own seed, read with `$how`.
macro_rules! seed {
    ($t:ty, $how:ident) => {
        impl<'de> DeserializeSeed<'de> for $t {
            type Value = <$t as Visitor<'de>>::Value;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.$how(self)
            }
        }
    };
}

/// Visitor methods that accept their value and keep nothing.
macro_rules! accept {
    ($($f:ident($($t:ty)?)),*) => {$(
        fn $f<E: de::Error>(self $(, _: $t)?) -> Result<(), E> {
            Ok(())
        }
    )*};
}

/// The answer's top level: the last `tools` and `success` values (as `Value`'s objects keep
/// them), everything else checked and dropped. A duplicate `tools` key is refused (the general
/// path keeps the last; refusing is simpler than proving the first was harmless).
#[derive(Default)]
struct Top {
    /// `None`: no `tools` key; `Some(None)`: `"tools": null`.
    tools: Option<Option<Vec<Tool>>>,
    success: Option<Value>,
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a retrieve_tools answer object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut top = Top::default();
        while let Some(key) = map.next_key_seed(KeyOf(&["tools", "success"]))? {
            match key {
                Some("tools") => {
                    if top.tools.is_some() {
                        return Err(de::Error::custom("duplicate key tools"));
                    }
                    top.tools = Some(map.next_value()?);
                }
                Some(_) => top.success = Some(map.next_value()?),
                None => map.next_value_seed(Checked)?,
            }
        }
        Ok(top)
    }
}

/// A map key: which of `wanted` it is, `None` for any other key; the raw-value token is
/// refused.
struct KeyOf(&'static [&'static str]);

seed!(KeyOf, deserialize_str);

impl<'de> Visitor<'de> for KeyOf {
    type Value = Option<&'static str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        if s == RAW_VALUE_TOKEN {
            return Err(E::custom("the raw-value token as a key"));
        }
        Ok(self.0.iter().copied().find(|w| *w == s))
    }
}

/// One tool object, reduced to the fields an id is read from (each kept whole, the last of a
/// duplicated key winning, as in `Value`'s objects); `tools` is read as serde's
/// `Option<Vec<Tool>>`: `null`, or an array of tool objects.
struct Tool(Map<String, Value>);

impl<'de> Deserialize<'de> for Tool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tool, D::Error> {
        d.deserialize_any(ToolFields).map(Tool)
    }
}

struct ToolFields;

impl<'de> Visitor<'de> for ToolFields {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tool object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key_seed(KeyOf(&ID_FIELDS))? {
            match key {
                Some(k) => {
                    fields.insert(k.to_string(), map.next_value()?);
                }
                None => map.next_value_seed(Checked)?,
            }
        }
        Ok(fields)
    }
}

/// Any JSON value, parsed exactly as `Value` parses it (same `deserialize_any` calls) and
/// dropped.
#[derive(Clone, Copy)]
struct Checked;

seed!(Checked, deserialize_any);

impl<'de> Visitor<'de> for Checked {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    accept!(visit_bool(bool), visit_i64(i64), visit_u64(u64));
    accept!(visit_f64(f64), visit_str(&str), visit_unit());

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Checked)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(KeyOf(&[]))?.is_some() {
            map.next_value_seed(Checked)?;
        }
        Ok(())
    }
}
