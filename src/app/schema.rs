//! JSON Schemas generated from the types, committed under `schemas/` (a test keeps them in sync).

use crate::infra::files;
use crate::pipeline::baseline::Baseline;
use crate::pipeline::dataset::{Corpus, GoldenSet, SecurityCorpus};
use crate::pipeline::report::model::Report;
use anyhow::Context;
use std::path::Path;

/// `(file name, schema JSON)` for every file format evalgate reads or writes.
pub fn all() -> Vec<(&'static str, String)> {
    fn s<T: schemars::JsonSchema>() -> String {
        serde_json::to_string_pretty(&schemars::schema_for!(T)).expect("schema serialises") + "\n"
    }
    vec![
        ("corpus.schema.json", s::<Corpus>()),
        ("golden.schema.json", s::<GoldenSet>()),
        ("security.schema.json", s::<SecurityCorpus>()),
        ("baseline.schema.json", s::<Baseline>()),
        ("report.schema.json", s::<Report>()),
    ]
}

pub fn write_all(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    for (name, body) in all() {
        let p = dir.join(name);
        files::write_atomic(&p, body.as_bytes())?;
        crate::outln!("wrote {}", p.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn committed_schemas_match_the_types() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        for (name, body) in super::all() {
            let committed = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
            assert!(
                committed == body,
                "schemas/{name} is stale: run `cargo run -- schema --out schemas`"
            );
        }
    }

    /// report.json is read by other programs: every field of every type in its schema says what
    /// it is (from its doc comment).
    #[test]
    fn every_report_field_has_a_description() {
        let (_, body) = super::all()
            .into_iter()
            .find(|(n, _)| *n == "report.schema.json")
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let mut undocumented = vec![];
        let mut types = vec![("Report".to_string(), &v)];
        for (name, d) in v["$defs"].as_object().unwrap() {
            types.push((name.clone(), d));
            for alt in ["oneOf", "anyOf"] {
                for a in d[alt].as_array().into_iter().flatten() {
                    types.push((name.clone(), a));
                }
            }
        }
        for (name, t) in types {
            for (field, p) in t["properties"].as_object().into_iter().flatten() {
                // a tagged enum's tag (`"kind": {"const": "timeout"}`) is described by its variant
                if !p["description"].is_string() && p.get("const").is_none() {
                    undocumented.push(format!("{name}.{field}"));
                }
            }
        }
        assert!(
            undocumented.is_empty(),
            "no description for {undocumented:?}"
        );
    }

    /// The schemas are public API: every type in them says what it is (from its doc comment).
    #[test]
    fn every_schema_type_has_a_description() {
        for (name, body) in super::all() {
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert!(v["description"].is_string(), "{name}: the root type");
            let undocumented: Vec<&String> = v["$defs"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(_, d)| !d["description"].is_string())
                .map(|(k, _)| k)
                .collect();
            assert!(
                undocumented.is_empty(),
                "{name}: no description for {undocumented:?}"
            );
        }
    }
}
