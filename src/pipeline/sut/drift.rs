//! `drift`: rug-pull detection by definition fingerprints (the design of the Helio
//! `on_tool_drift` change). The whole definition is fingerprinted as canonical JSON (object keys
//! sorted, no whitespace) on first sight (`before`); a later definition (`after`) with another
//! fingerprint is drift, reported with the aspects that changed. A re-listing that repeats the
//! name (an `after` array of several definitions) is ambiguous and counts as drift
//! (aspect `duplicate`), whatever the order.

use super::{Decision, Detector, SutError};
use crate::pipeline::dataset::{Category, Entry};
use async_trait::async_trait;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

use crate::infra::text::canonical_json;

/// sha256 of the canonical JSON, hex.
pub fn fingerprint(v: &Value) -> String {
    format!("{:x}", Sha256::digest(canonical_json(v).as_bytes()))
}

/// The definition aspect a key is compared as (the snake-case schema keys too); anything else
/// is `other`.
fn aspect_of(key: &str) -> &'static str {
    match key {
        "name" => "name",
        "title" => "title",
        "description" => "description",
        "inputSchema" | "input_schema" => "inputSchema",
        "outputSchema" | "output_schema" => "outputSchema",
        "annotations" => "annotations",
        _ => "other",
    }
}

/// Which aspects differ between two definitions (canonically compared), sorted.
pub fn changed_aspects(before: &Value, after: &Value) -> BTreeSet<String> {
    let empty = serde_json::Map::new();
    let b = before.as_object().unwrap_or(&empty);
    let a = after.as_object().unwrap_or(&empty);
    b.keys()
        .chain(a.keys())
        .filter(|k| match (b.get(*k), a.get(*k)) {
            (Some(x), Some(y)) => canonical_json(x) != canonical_json(y),
            _ => true,
        })
        .map(|k| format!("changed:{}", aspect_of(k)))
        .collect()
}

/// The drift signals of a definition and what it became (several = a repeated name, as
/// [`Entry::afters`] reads them), sorted: none when nothing changed.
pub fn drift_signals(before: &Value, afters: &[Value]) -> Vec<String> {
    let base = fingerprint(before);
    let mut signals: BTreeSet<String> = afters
        .iter()
        .filter(|a| fingerprint(a) != base)
        .flat_map(|a| changed_aspects(before, a))
        .collect();
    if afters.len() > 1 {
        signals.insert("duplicate".to_string());
    }
    signals.into_iter().collect()
}

/// `--detectors drift`.
pub const DEF: super::kind::DetectorDef = super::kind::DetectorDef {
    name: "drift",
    help: "Canonical-JSON fingerprint drift of before/after definitions (rug-pulls)",
    live: false,
    build: |_, _| Ok(vec![Box::new(Drift)]),
};

/// The fingerprint drift detector. It sees only entries that carry `before` and `after`.
pub struct Drift;

#[async_trait]
impl Detector for Drift {
    fn name(&self) -> &str {
        "drift"
    }
    fn scope(&self) -> Option<Vec<Category>> {
        Some(vec![Category::RugPull])
    }
    async fn detect(&mut self, entries: &[Entry], _run: usize) -> Result<Vec<Decision>, SutError> {
        Ok(entries
            .iter()
            .map(|e| {
                // without both definitions there is nothing to compare: not applicable
                let (signals, not_applicable) = match (&e.before, &e.after) {
                    (Some(b), Some(_)) => (drift_signals(b, e.afters()), false),
                    _ => (Vec::new(), true),
                };
                Decision {
                    not_applicable,
                    ..Decision::new(&e.id, !signals.is_empty(), signals)
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_is_not_drift() {
        let a = json!({"name":"t","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}});
        let b: Value = serde_json::from_str(r#"{"inputSchema":{"properties":{"x":{"type":"string"}},"type":"object"},"description":"d","name":"t"}"#).unwrap();
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert!(drift_signals(&a, &[b]).is_empty());
    }

    #[test]
    fn changes_name_their_aspects() {
        let a = json!({"name":"t","description":"d","annotations":{"readOnlyHint":true}});
        let b = json!({"name":"t","description":"d","annotations":{"readOnlyHint":false}});
        assert_eq!(drift_signals(&a, &[b]), vec!["changed:annotations"]);
        let c = json!({"name":"t","description":"d2","annotations":{"readOnlyHint":true},"inputSchema":{}});
        assert_eq!(
            drift_signals(&a, &[c]),
            vec!["changed:description", "changed:inputSchema"]
        );
    }

    #[test]
    fn a_repeated_name_is_drift_in_any_order() {
        let a = json!({"name":"t","description":"d"});
        let dup = [
            json!({"name":"t","description":"d"}),
            json!({"name":"t","description":"evil"}),
        ];
        let dup_rev = [dup[1].clone(), dup[0].clone()];
        assert!(drift_signals(&a, &dup).contains(&"duplicate".to_string()));
        assert_eq!(drift_signals(&a, &dup), drift_signals(&a, &dup_rev));
        // even two identical copies are ambiguous
        let same_twice = [a.clone(), a.clone()];
        assert_eq!(drift_signals(&a, &same_twice), vec!["duplicate"]);
    }
}
