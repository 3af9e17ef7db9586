//! Which baseline a run is gated against, and what of it applies to the system measured.

use super::{Baseline, DEFAULT_PATH, EMBEDDED_DEFAULT, EMBEDDED_DEFAULT_NAME};
use crate::pipeline::dataset::Datasets;
use std::path::Path;

/// The baseline in use and where it came from.
pub struct ChosenBaseline {
    pub name: String,
    pub baseline: Baseline,
    /// Given with `--baseline` (or `[run] baseline`), not found by default.
    pub explicit: bool,
}

impl ChosenBaseline {
    /// The baseline the gate may use for a run of `system`: a baseline found by default
    /// (`baselines/default.json`, the embedded one) gates retrieval only when it was measured on
    /// the same system, so a proxy's first run is not gated against another system's numbers.
    /// A baseline given explicitly is used as it is (comparing two systems on purpose).
    pub fn for_system(
        &self,
        system: Option<&str>,
        update: &str,
        warnings: &mut Vec<String>,
    ) -> Baseline {
        let mut b = self.baseline.clone();
        let (Some(system), Some(rb)) = (system, b.retrieval.as_ref()) else {
            return b;
        };
        let system = system.strip_prefix("recorded:").unwrap_or(system);
        if !self.explicit && rb.retriever != system {
            warnings.push(format!(
                "the baseline {} was measured on {:?}, this run measures {system:?}: retrieval is reported, not gated; `{update}` writes this system's own baseline to {}",
                self.name,
                rb.retriever,
                DEFAULT_PATH
            ));
            b.retrieval = None;
            // another system's scorecard is no Δ either
            b.scorecard = None;
        }
        b
    }
}

/// Picks the baseline: an explicit file (errors are fatal), else `baselines/default.json` in the
/// working directory, else the embedded one when the embedded datasets are in use. An implicit
/// baseline measured on other datasets is ignored with a warning; an explicit one is an error.
pub fn choose(
    explicit: Option<&Path>,
    ds: &Datasets,
    warnings: &mut Vec<String>,
    why_none: &mut Option<String>,
) -> anyhow::Result<Option<ChosenBaseline>> {
    let (name, b, explicit) = if let Some(p) = explicit {
        let (b, note) = Baseline::load(p)?;
        warnings.extend(note);
        (p.display().to_string(), b, true)
    } else if Path::new(DEFAULT_PATH).is_file() {
        let b = Baseline::load(Path::new(DEFAULT_PATH))?.0;
        (DEFAULT_PATH.to_string(), b, false)
    } else if ds.all_embedded() {
        let b = Baseline::parse(EMBEDDED_DEFAULT_NAME, EMBEDDED_DEFAULT)?.0;
        (EMBEDDED_DEFAULT_NAME.to_string(), b, false)
    } else {
        return Ok(None);
    };
    let mut mismatches = Vec::new();
    let (mut theirs, mut ours) = (Vec::new(), Vec::new());
    for d in ds.refs() {
        let (kind, version, sha) = (d.kind.as_str(), d.version, d.sha256);
        if let Some(pin) = b.datasets.get(kind) {
            if pin.version != version {
                let shown = |v: Option<&str>| match v {
                    Some(v) => v.to_string(),
                    None => format!("an unversioned {kind}"),
                };
                theirs.push(shown(pin.version.as_deref()));
                ours.push(shown(version.as_deref()));
                mismatches.push(format!(
                    "{kind}: baseline measured on {:?}, this run uses {:?}",
                    pin.version.as_deref().unwrap_or("unversioned"),
                    version.as_deref().unwrap_or("unversioned")
                ));
            } else if !pin.sha256.is_empty() && pin.sha256 != sha {
                warnings.push(format!(
                    "the {kind} dataset changed since the baseline {name} was written (same version {:?}, different content)",
                    version.as_deref().unwrap_or("unversioned")
                ));
            }
        }
    }
    if !mismatches.is_empty() {
        let msg = format!(
            "baseline {name} does not match the datasets: {}. Write a new baseline with `evalgate baseline update`",
            mismatches.join("; ")
        );
        if explicit {
            anyhow::bail!(msg);
        }
        warnings.push(format!("{msg}; running without a baseline"));
        *why_none = Some(format!(
            "{name} is for {}; this run uses {}",
            theirs.join(", "),
            ours.join(", ")
        ));
        return Ok(None);
    }
    Ok(Some(ChosenBaseline {
        name,
        baseline: b,
        explicit,
    }))
}
