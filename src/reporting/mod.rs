//! Reports: one model ([`model::Report`]), one view of it ([`view::View`], every section's
//! numbers computed once) and many [`Exporter`]s (JSON, Markdown, HTML, terminal) that only lay
//! the view out. A new format is one file implementing [`Exporter`] and one line in [`FILES`].
//! Files are rendered in memory first and then moved into place, so a failed render never
//! leaves half-written output.

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
use view::View;

/// One output format of a report.
pub trait Exporter {
    /// The file it is written to in the report directory; `None` for a format that is only
    /// shown (the terminal).
    fn file_name(&self) -> Option<&'static str>;
    /// The report in this format, laid out from its view.
    fn render(&self, report: &Report, view: &View) -> anyhow::Result<String>;
}

/// The formats written into the report directory, in this order.
pub const FILES: &[&dyn Exporter] = &[&Json, &markdown::Markdown, &html::Html];

/// `report.json`: the model itself, pretty-printed (it needs no view).
pub struct Json;

impl Exporter for Json {
    fn file_name(&self) -> Option<&'static str> {
        Some("report.json")
    }
    fn render(&self, report: &Report, _: &View) -> anyhow::Result<String> {
        Ok(json(report))
    }
}

/// `report.json`: the model itself, pretty-printed.
pub fn json(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("report serialises");
    s.push('\n');
    s
}

/// Renders every file format of [`FILES`] and writes them into `dir` (created if needed).
/// Returns the paths.
pub fn write_all(r: &Report, view: &View, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for e in FILES {
        if let Some(name) = e.file_name() {
            files.push((name, e.render(r, view)?));
        }
    }
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
