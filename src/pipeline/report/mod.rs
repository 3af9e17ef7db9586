//! Reports: one model ([`model::Report`]), one view of it ([`view::View`], every section's
//! numbers computed once) and many [`Exporter`]s (JSON, Markdown, HTML, terminal) that only lay
//! the view out. A new format is one file implementing [`Exporter`] and one line in [`FILES`].
//! Files are rendered in memory first and then moved into place, so a failed render never
//! leaves half-written output.

pub mod color;
pub mod format;
pub mod html;
pub mod markdown;
pub mod model;
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
        crate::infra::files::write_atomic(&path, body.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    use model::fixture;

    #[test]
    fn the_files_are_json_markdown_and_html_and_the_terminal_is_shown_only() {
        let names: Vec<Option<&str>> = FILES.iter().map(|e| e.file_name()).collect();
        assert_eq!(
            names,
            [Some("report.json"), Some("report.md"), Some("report.html")]
        );
        assert_eq!(terminal::Terminal { color: false }.file_name(), None);
    }

    #[test]
    fn every_exporter_renders_what_its_format_function_does() {
        let r = fixture();
        let v = View::of(&r);
        let out: Vec<String> = FILES.iter().map(|e| e.render(&r, &v).unwrap()).collect();
        assert_eq!(out[0], json(&r));
        assert_eq!(out[1], markdown::render(&r));
        assert_eq!(out[2], html::render(&r).unwrap());
        assert_eq!(
            terminal::Terminal { color: false }.render(&r, &v).unwrap(),
            terminal::render(&r, false)
        );
    }

    #[test]
    fn the_report_files_are_written_through_the_exporters() {
        let r = fixture();
        let dir = tempfile::tempdir().unwrap();
        let written = write_all(&r, &View::of(&r), dir.path()).unwrap();
        assert_eq!(written.len(), FILES.len());
        let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
        assert_eq!(md, markdown::render(&r));
    }
}
