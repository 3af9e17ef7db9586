//! Reports: one model ([`model::Report`]), many renderers (JSON, Markdown, HTML, terminal).
//! Files are rendered in memory first and then moved into place, so a failed render never
//! leaves half-written output.

pub mod color;
pub mod format;
pub mod html;
pub mod markdown;
pub mod model;
pub mod sanitize;
pub mod terminal;
pub mod view;

use anyhow::Context;
use model::Report;
use std::path::{Path, PathBuf};

/// `report.json`: the model itself, pretty-printed.
pub fn json(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("report serialises");
    s.push('\n');
    s
}

/// Renders every file format and writes them into `dir` (created if needed). Returns the paths.
pub fn write_all(r: &Report, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let files = [
        ("report.json", json(r)),
        ("report.md", markdown::render(r)),
        ("report.html", html::render(r)?),
    ];
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the report directory", dir.display()))?;
    let mut written = Vec::new();
    for (name, body) in files {
        let path = dir.join(name);
        crate::files::write_atomic(&path, body.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}
