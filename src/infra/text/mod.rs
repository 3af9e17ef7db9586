//! `Text`: an immutable string that is shared, not copied, when cloned.
//!
//! Query ids, query texts and tool ids travel from the golden set and the system's answers into
//! every per-query row of the report. As `Text` (an `Arc<str>`), a row holds the same bytes as
//! the golden set and the observations instead of a copy of each.
//!
//! On the wire it is a plain JSON string, and its schema is `{"type": "string"}`.

pub mod sanitize;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

#[derive(
    Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Hashes and compares as its `str`, so `HashMap<Text, _>` can be looked up by `&str`.
impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(Arc::from(s))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(Arc::from(s))
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

/// Canonical JSON: keys sorted at every level, compact.
pub fn canonical_json(v: &serde_json::Value) -> String {
    let mut v = v.clone();
    v.sort_all_objects();
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn text_is_a_json_string_that_shares_its_bytes_when_cloned() {
        let t: Text = serde_json::from_str(r#""srv:tool \u00e9""#).unwrap();
        assert_eq!(t, "srv:tool é");
        assert_eq!(serde_json::to_string(&t).unwrap(), r#""srv:tool é""#);
        let c = t.clone();
        assert!(
            std::ptr::eq(t.as_str(), c.as_str()),
            "a clone shares the bytes"
        );
        let err = serde_json::from_str::<Text>("3").unwrap_err().to_string();
        assert!(err.contains("expected a string"), "{err}");
        let by_text: HashMap<Text, u8> = [(t, 1)].into();
        assert_eq!(by_text.get("srv:tool é"), Some(&1), "looked up by &str");
        let schema = serde_json::to_value(schemars::schema_for!(Text)).unwrap();
        assert_eq!(schema["type"], "string");
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level_and_is_compact() {
        let v: serde_json::Value =
            serde_json::from_str(r#"{"b": [{"y": 1, "x": "\u0001"}, 2e3], "a\"q": 1.5}"#).unwrap();
        assert_eq!(
            canonical_json(&v),
            r#"{"a\"q":1.5,"b":[{"x":"\u0001","y":1},2000.0]}"#
        );
    }
}
