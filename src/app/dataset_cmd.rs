//! `card` and `validate`: the dataset files on their own, nothing measured.

use super::{BadInput, Part};
use crate::cli::{CardArgs, EvalArgs};
use crate::infra::files;
use crate::infra::text::sanitize;
use crate::pipeline::dataset;
use crate::pipeline::dataset::{DatasetErrors, Datasets};
use crate::pipeline::gate::ExitCode;

/// Every dataset file the flags name, loaded.
fn load(a: &EvalArgs) -> Result<Datasets, DatasetErrors> {
    let profile = a.profile.unwrap_or_default();
    Datasets::load(&a.datasets, Part::Both.need(), profile)
}

/// `card`: the dataset card, printed, checked against a file, or spliced into one.
pub fn cmd_card(args: &CardArgs, given: &EvalArgs) -> anyhow::Result<i32> {
    use crate::pipeline::dataset::card;
    let ds = load(given)?;
    let text = card::render(
        ds.corpus.as_ref().map(|l| &l.value),
        ds.golden.as_ref().map(|l| &l.value),
        ds.security.as_ref().map(|l| &l.value),
    );
    let Some(file) = args.update.as_ref().or(args.check.as_ref()) else {
        // (the card is Markdown made of neutralised cells; shown visible all the same)
        crate::out!("{}", sanitize::visible_lines(&text));
        return Ok(ExitCode::PASS);
    };
    let doc = files::read_to_string(file)
        .map_err(|e| BadInput(format!("{}: cannot read: {e}", file.display())))?;
    let (f, begin, end) = (file.display(), card::BEGIN, card::END);
    let Some(new) = card::splice(&doc, &text) else {
        return Err(BadInput(format!(
            "{f}: no generated block; add the two lines\n{begin}\n{end}\nwhere the card belongs"
        ))
        .into());
    };
    if args.check.is_some() {
        if new == doc {
            crate::outln!("ok  {f}: the dataset card is current");
            return Ok(ExitCode::PASS);
        }
        crate::errln!("{f}: the dataset card is stale; run `evalgate card --update {f}`");
        return Ok(ExitCode::GATE_FAILED);
    }
    if new != doc {
        files::write_atomic(file, new.as_bytes())?;
        crate::errln!("updated the dataset card in {f}");
    } else {
        crate::errln!("{f}: the dataset card was already current");
    }
    Ok(ExitCode::PASS)
}

/// `validate`: exit 0 when valid; dataset errors propagate (exit 2).
pub fn cmd_validate(args: &EvalArgs) -> anyhow::Result<i32> {
    let ds = load(args)?;
    // dataset text (ids, versions, file names) reaches the terminal only through `sanitize`
    for w in dataset::summarize_warnings(&ds.warnings) {
        crate::errln!("{}", sanitize::visible_lines(&w));
    }
    crate::errln!(
        "profile {}: {} warning(s)",
        ds.profile.as_str(),
        ds.warnings.len()
    );
    for d in ds.refs() {
        crate::outln!(
            "ok  {:<8} {} ({}, {} items)",
            d.kind,
            sanitize::term(&d.source, 500),
            sanitize::term(d.version.as_deref().unwrap_or("unversioned"), 500),
            d.items
        );
    }
    Ok(ExitCode::PASS)
}
