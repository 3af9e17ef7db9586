//! JSON Schemas generated from the types, committed under `schemas/` (a test keeps them in sync).

use anyhow::Context;
use std::path::Path;

/// `(file name, schema JSON)` for every file format evalgate reads or writes.
pub fn all() -> Vec<(&'static str, String)> {
    fn s<T: schemars::JsonSchema>() -> String {
        let mut t =
            serde_json::to_string_pretty(&schemars::schema_for!(T)).expect("schema serialises");
        t.push('\n');
        t
    }
    vec![
        ("corpus.schema.json", s::<crate::dataset::Corpus>()),
        ("golden.schema.json", s::<crate::dataset::GoldenSet>()),
        (
            "security.schema.json",
            s::<crate::dataset::SecurityCorpus>(),
        ),
        ("baseline.schema.json", s::<crate::baseline::Baseline>()),
        ("report.schema.json", s::<crate::report::model::Report>()),
    ]
}

pub fn write_all(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    for (name, body) in all() {
        let p = dir.join(name);
        std::fs::write(&p, body).with_context(|| format!("{}: cannot write", p.display()))?;
        println!("wrote {}", p.display());
    }
    Ok(())
}
