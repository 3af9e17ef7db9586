//! The resolved settings cut into the typed specs the adapters take: each system and detector
//! gets the settings its kind reads and nothing else. The arrows point from here to the
//! domains that own the spec types (`sut::spec`, `launch::spec`), never back.

use super::SutFile;
use crate::launch::spec::{CatalogSpec, LaunchSpec};
use crate::sut::kind::{DetectorKind, SutKind};
use crate::sut::live::{LiveConfig, ProxyScanConfig};
use crate::sut::scanner::ScannerConfig;
use crate::sut::spec::{DetectorSpec, SutSpec};
use std::path::PathBuf;
use std::time::Duration;

/// How the catalog of a connected or launched system is checked (the waits were validated
/// when the file was read).
pub(super) fn catalog_spec(
    sut: &SutFile,
    request_timeout: Duration,
    concurrency: usize,
    quiet: bool,
) -> CatalogSpec {
    CatalogSpec {
        catalog: sut.catalog.clone(),
        ready_timeout: sut.launch.ready_timeout.map(Duration::from_secs_f64),
        request_timeout,
        concurrency,
        quiet,
    }
}

/// The proxy evalgate launches for `kind`: that kind when it is a launched one, else the
/// reference proxy (the proxy the live detectors play against when the system under test is
/// not launched).
pub(super) fn launch_spec(kind: SutKind, sut: &SutFile, check: CatalogSpec) -> LaunchSpec {
    LaunchSpec {
        kind: if kind.launched() {
            kind
        } else {
            SutKind::Reference
        },
        name: sut.name.clone(),
        mcpproxy_bin: sut.mcpproxy_bin.clone(),
        launch: sut.launch.clone(),
        mcp: sut.mcp.clone(),
        check,
    }
}

/// The system under test of `kind`.
pub(super) fn sut_spec(
    kind: SutKind,
    sut: &SutFile,
    recorded: Option<PathBuf>,
    check: CatalogSpec,
) -> SutSpec {
    let name = |d: &str| sut.name.clone().unwrap_or_else(|| d.to_string());
    match kind {
        SutKind::Embedded => SutSpec::Embedded,
        SutKind::Recorded => SutSpec::Recorded { path: recorded },
        SutKind::Mcp => SutSpec::Mcp {
            name: name("mcp"),
            mcp: sut.mcp.clone(),
            check,
        },
        SutKind::Rest => SutSpec::Rest {
            name: name("rest"),
            rest: sut.rest.clone(),
            check,
        },
        SutKind::Mcpproxy | SutKind::Reference | SutKind::Launch => {
            SutSpec::Launched(Box::new(launch_spec(kind, sut, check)))
        }
    }
}

/// The detectors of `kinds`, in order, each once.
pub(super) fn detector_specs(
    kinds: &[DetectorKind],
    recorded: Option<PathBuf>,
    scanners: &[ScannerConfig],
    proxy_scan: &ProxyScanConfig,
    rug_pull_live: &LiveConfig,
    proxy: &LaunchSpec,
) -> Vec<DetectorSpec> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for &k in kinds {
        if seen.contains(&k) {
            continue;
        }
        seen.push(k);
        out.push(match k {
            DetectorKind::Rules => DetectorSpec::Rules,
            DetectorKind::Drift => DetectorSpec::Drift,
            DetectorKind::Recorded => DetectorSpec::Recorded {
                path: recorded.clone(),
            },
            DetectorKind::Scanner => DetectorSpec::Scanner(scanners.to_vec()),
            DetectorKind::ProxyScan => DetectorSpec::ProxyScan {
                proxy: proxy.clone(),
                cfg: proxy_scan.clone(),
            },
            DetectorKind::RugPullLive => DetectorSpec::RugPullLive {
                proxy: proxy.clone(),
                cfg: rug_pull_live.clone(),
            },
        });
    }
    out
}
