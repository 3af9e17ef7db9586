//! Building the systems under test and the detectors from their specs: in-process, connected,
//! or launched. A system is built by a match on its spec; a detector by its kind's definition.

use super::BadInput;
use crate::infra::mcp::Endpoint;
use crate::infra::process::Supervisor;
use crate::pipeline::dataset::Datasets;
use crate::pipeline::sut::embedded::Embedded;
use crate::pipeline::sut::kind::{DetectorKind, SutKind};
use crate::pipeline::sut::launch::spec::LaunchSpec;
use crate::pipeline::sut::launch::writers::ConfigFormat;
use crate::pipeline::sut::mcp_search::{McpSearch, McpSearchSpec};
use crate::pipeline::sut::rest::RestSearch;
use crate::pipeline::sut::spec::{DetectorSettings, SutSpec};
use crate::pipeline::sut::{Detector, Retriever, SutError, launch, recorded};
use anyhow::Context;

fn bad(e: impl std::fmt::Display) -> anyhow::Error {
    BadInput(e.to_string()).into()
}

/// Builds (connects, launches) the retriever. `Ok(Err(_))` = the system could not be brought up
/// (exit 3); `Err(_)` = bad settings (exit 2).
pub async fn make_retriever(
    spec: &SutSpec,
    ds: &Datasets,
    sup: &Supervisor,
) -> anyhow::Result<Result<Box<dyn Retriever>, SutError>> {
    let corpus = ds.corpus.as_ref().context("no corpus loaded")?;
    Ok(match spec {
        SutSpec::Embedded => Ok(Box::new(
            Embedded::new(&corpus.value).context("building the BM25 index")?,
        )),
        SutSpec::Recorded { path } => Ok(Box::new(
            recorded::RecordedRetriever::from_file(recorded::need(path).map_err(bad)?)
                .map_err(|e| bad(format!("{e:#}")))?,
        )),
        SutSpec::Mcp { name, mcp, check } => {
            // `[sut.mcp]`, with the `mcpproxy` preset's defaults
            let spec = McpSearchSpec::from_file(name, mcp, None).map_err(bad)?;
            let what = spec.endpoint.describe();
            match McpSearch::connect(spec, sup, check.request_timeout).await {
                Ok(mut m) => {
                    match launch::check_catalog(check, &m, Some(&m), &corpus.value).await {
                        Ok(coverage) => {
                            m.facts.coverage = Some(coverage);
                            Ok(Box::new(m))
                        }
                        // a stdio server's exit and stderr go with the failure
                        Err(e) => Err(e.with_log(&m.story())),
                    }
                }
                Err(e) => Err(SutError::connect_failed(
                    name.clone(),
                    &e.context(format!("cannot connect ({what})")),
                    "",
                )),
            }
        }
        SutSpec::Rest { name, rest, check } => {
            let mut r = RestSearch::new(name, rest, check.request_timeout).map_err(bad)?;
            let checked = launch::check_catalog(check, &r, None, &corpus.value).await;
            checked.map(|coverage| {
                r.facts.coverage = Some(coverage);
                Box::new(r) as Box<dyn Retriever>
            })
        }
        SutSpec::Launched(l) => {
            check_launch(l)?;
            let golden = &ds.golden.as_ref().context("no golden set loaded")?.value;
            launch::launch(l, corpus, golden, sup)
                .await
                .map(|l| Box::new(l) as Box<dyn Retriever>)
        }
    })
}

/// What a launch needs, checked before anything starts (exit 2, not a proxy that failed).
fn check_launch(s: &LaunchSpec) -> anyhow::Result<()> {
    if s.kind == SutKind::Mcpproxy && s.mcpproxy_bin.is_none() {
        return Err(bad(
            "--sut mcpproxy needs --mcpproxy-bin PATH (a mcpproxy binary built earlier in the workflow)",
        ));
    }
    if s.kind == SutKind::Launch {
        let l = &s.launch;
        if l.command.as_ref().is_none_or(|c| c.is_empty()) {
            return Err(bad(
                "--sut launch needs [sut.launch] command = [\"my-proxy\", \"--config\", \"{config}\", ...] in evalgate.toml",
            ));
        }
        // the search settings are checked now (exit 2), not after the proxy started
        McpSearchSpec::from_file(
            "launch",
            &s.mcp,
            Some(Endpoint::Http {
                url: String::new(),
                headers: vec![],
            }),
        )
        .map_err(bad)?;
        if l.config_format == Some(ConfigFormat::Template) {
            let Some(t) = &l.template else {
                return Err(bad(
                    "[sut.launch] config_format = \"template\" needs template = \"FILE\" (a minijinja template of the proxy's config)",
                ));
            };
            if !t.is_file() {
                let t = t.display();
                return Err(bad(format!("[sut.launch] template: {t} is not a file")));
            }
        }
    }
    Ok(())
}

/// Builds the detectors of `kinds`, in order (each kind once), from their definitions.
pub fn make_detectors(
    kinds: &[DetectorKind],
    settings: &DetectorSettings,
    sup: &Supervisor,
) -> anyhow::Result<Vec<Box<dyn Detector>>> {
    let mut out: Vec<Box<dyn Detector>> = Vec::new();
    for k in kinds {
        out.extend((k.def().build)(settings, sup).map_err(|e| bad(format!("{e:#}")))?);
    }
    if out.is_empty() {
        return Err(bad(
            "no detector selected: pass --detectors rules,drift (or recorded)",
        ));
    }
    Ok(out)
}
