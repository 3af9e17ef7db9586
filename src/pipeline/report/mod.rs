//! Reports: one model ([`model::Report`]), one view of it ([`view::View`], every section's
//! numbers computed once), its tables as a typed document ([`doc`], each cell saying what its
//! text is) and the [`Exporter`]s: JSON (the model itself), Markdown, HTML and the terminal,
//! which read the model and the view and lay out the document's tables through their
//! [`doc::Format`]. A file format is one [`Exporter`] and one line in [`FILES`]; the terminal
//! is only shown.
//! Files are rendered in memory first and then moved into place, so a failed render never
//! leaves half-written output.

pub mod color;
pub mod doc;
pub mod format;
pub mod html;
pub mod markdown;
pub mod model;
pub mod scorecard;
pub mod terminal;
pub mod view;

use crate::infra::files;
use crate::pipeline::sut::observe::{OBSERVATIONS_FILES, ObservationsFile};
use anyhow::Context;
use model::Report;
use std::io::Write;
use std::path::{Path, PathBuf};
use view::View;

/// One output format of a report.
pub trait Exporter: Sync {
    /// The file it is written to in the report directory.
    fn file_name(&self) -> &'static str;
    /// The report in this format, laid out from its view.
    fn render(&self, report: &Report, view: &View) -> anyhow::Result<String>;
    /// Writes the format to `w`; a format that can stream overrides this (report.json of a
    /// large golden set is never held in memory whole).
    fn write(&self, report: &Report, view: &View, w: &mut dyn Write) -> anyhow::Result<()> {
        w.write_all(self.render(report, view)?.as_bytes())?;
        Ok(())
    }
}

/// The formats written into the report directory, in this order.
pub const FILES: &[&dyn Exporter] = &[&Json, &markdown::Markdown, &html::Html];

/// `report.json`: the model itself, indented (it needs no view).
pub struct Json;

impl Exporter for Json {
    fn file_name(&self) -> &'static str {
        "report.json"
    }
    fn render(&self, report: &Report, _: &View) -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(report)? + "\n")
    }
    fn write(&self, report: &Report, _: &View, w: &mut dyn Write) -> anyhow::Result<()> {
        // the serializer's many small writes go to a buffer of a known type (inlined copies),
        // not each through the `dyn Write`
        let mut w = std::io::BufWriter::with_capacity(1 << 16, w);
        serde_json::to_writer_pretty(&mut w, report)?;
        w.write_all(b"\n")?;
        w.flush()?;
        Ok(())
    }
}

/// Writes every file format of [`FILES`] into `dir` (created if needed), and the raw
/// observations moved out of the report into `observations` (`r.observations_file` names it),
/// compact JSON, gzipped when the name ends in `.gz`. Each file is written beside its place
/// and all are moved into place only when every one was written: a failed render leaves the
/// directory as it was. An observations file of an earlier run that this one does not write
/// is removed, so it is never read as this run's, and so are the temporary files of a run
/// killed while writing. The caller holds `dir`'s lock ([`files::lock_dir`]). Returns the
/// paths.
pub fn write_all(
    r: &Report,
    view: &View,
    dir: &Path,
    observations: Option<&ObservationsFile>,
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the report directory", dir.display()))?;
    // what a run killed while writing left behind (the caller holds the directory's lock)
    let names: Vec<&str> = FILES
        .iter()
        .map(|e| e.file_name())
        .chain(OBSERVATIONS_FILES.iter().copied())
        .collect();
    files::remove_stale_staged(dir, &names);
    let side = r.observations_file.as_deref().zip(observations);
    // every file is rendered and staged, then all are moved into place
    let mut staged = Vec::new();
    for e in FILES {
        let path = dir.join(e.file_name());
        let mut result = Ok(());
        let s = files::staged(&path, &mut |w| {
            result = e.write(r, view, w);
            Ok(())
        })?;
        result?;
        staged.push((path, s));
    }
    if let Some((name, obs)) = side {
        let path = dir.join(name);
        let gzip = name.ends_with(".gz");
        let s = files::staged(&path, &mut |w| {
            if gzip {
                let mut z = flate2::write::GzEncoder::new(w, flate2::Compression::fast());
                serde_json::to_writer(&mut z, obs)?;
                z.finish()?;
            } else {
                serde_json::to_writer(&mut *w, obs)?;
            }
            Ok(())
        })?;
        staged.push((path, s));
    }
    let written = staged
        .into_iter()
        .map(|(path, s)| s.commit().map(|()| path));
    let written = written.collect::<anyhow::Result<Vec<_>>>()?;
    for stale in OBSERVATIONS_FILES {
        if side.is_none_or(|(name, _)| name != stale)
            && let Err(e) = std::fs::remove_file(dir.join(stale))
            && e.kind() != std::io::ErrorKind::NotFound
        {
            let why = format!(
                "{}: cannot remove an earlier run's observations",
                dir.display()
            );
            return Err(e).context(why);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    use model::fixture;

    #[test]
    fn the_files_are_json_markdown_and_html_and_the_terminal_is_shown_only() {
        // (the terminal is no Exporter: it has no file)
        let names: Vec<&str> = FILES.iter().map(|e| e.file_name()).collect();
        assert_eq!(names, ["report.json", "report.md", "report.html"]);
    }

    #[test]
    fn every_exporter_renders_what_its_format_function_does() {
        let r = fixture();
        let v = View::of(&r);
        let out: Vec<String> = FILES.iter().map(|e| e.render(&r, &v).unwrap()).collect();
        assert_eq!(out[0], serde_json::to_string_pretty(&r).unwrap() + "\n");
        assert_eq!(out[1], markdown::render(&r));
        assert_eq!(out[2], html::Html.render(&r, &View::of(&r)).unwrap());
        // the terminal from the view the files got, as from a fresh one
        assert_eq!(
            terminal::render_view(&r, &v, false),
            terminal::render_view(&r, &View::of(&r), false)
        );
    }

    #[test]
    fn the_report_files_are_written_through_the_exporters() {
        let r = fixture();
        let dir = tempfile::tempdir().unwrap();
        let written = write_all(&r, &View::of(&r), dir.path(), None).unwrap();
        assert_eq!(written.len(), FILES.len());
        let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
        assert_eq!(md, markdown::render(&r));
    }
}
