//! The resolved settings cut into the typed specs the adapters take: each system and detector
//! gets the settings its kind reads and nothing else. The arrows point from here to the
//! domains that own the spec types (`sut::spec`, `launch::spec`), never back.

use super::SutFile;
use crate::pipeline::dataset::shard::Shard;
use crate::pipeline::gate::{NewDetectorLimits, Significance};
use crate::pipeline::measure::Limits;
use crate::pipeline::measure::probes::RobustnessMode;
use crate::pipeline::report::color::ColorChoice;
use crate::pipeline::sut::kind::SutKind;
use crate::pipeline::sut::launch::spec::{CatalogSpec, LaunchSpec};
use crate::pipeline::sut::observe::ObservationsMode;
use crate::pipeline::sut::spec::SutSpec;
use std::path::PathBuf;

/// How the measurement is taken (`[run]`, `--runs`, `--timeout`, ...).
#[derive(Debug, Clone, Copy)]
pub struct MeasureSpec {
    /// Repetitions of every measurement.
    pub runs: usize,
    /// The per-request time limit, the queries sent at once, `[sut] results`.
    pub limits: Limits,
    pub robustness: RobustnessMode,
    /// `--shard i/n`: measure one slice of the queries and entries (for `evalgate merge`).
    pub shard: Option<Shard>,
}

/// What the run is gated against.
#[derive(Debug, Clone)]
pub struct GateSpec {
    /// `--baseline` (else the default one, see `pipeline::baseline::choose`).
    pub baseline: Option<PathBuf>,
    /// `--no-baseline`: report only.
    pub no_baseline: bool,
    /// `[gate]`: limits of a detector the baseline has no entry for.
    pub new_detector: NewDetectorLimits,
    /// `[gate] significance`, `require_significance`: the paired comparisons' level and rule.
    pub significance: Significance,
}

/// Where the reports go and how the terminal shows them.
#[derive(Debug, Clone)]
pub struct ReportSpec {
    pub out: PathBuf,
    pub quiet: bool,
    pub color: ColorChoice,
    /// Where the raw observations are written.
    pub observations: ObservationsMode,
}

/// The proxy evalgate launches for `kind`: that kind when it is a launched one, else the
/// reference proxy (the proxy the live detectors play against when the system under test is
/// not launched).
pub(super) fn launch_spec(kind: SutKind, sut: &SutFile, check: CatalogSpec) -> LaunchSpec {
    LaunchSpec {
        kind: if kind.def().launched.is_some() {
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
        // the launched kinds
        _ => SutSpec::Launched(Box::new(launch_spec(kind, sut, check))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{EvalArgs, Settings};
    use super::*;
    use crate::pipeline::sut::kind::DetectorKind;
    use std::time::Duration;

    /// The settings resolved from `toml` (as the --config file) and `a`.
    fn resolve(toml: &str, mut a: EvalArgs) -> (tempfile::TempDir, Settings) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("evalgate.toml");
        std::fs::write(&path, toml).unwrap();
        a.config = Some(path);
        let s = Settings::resolve(&a).unwrap();
        (dir, s)
    }

    #[test]
    fn a_significance_level_outside_0_to_1_is_refused_by_name() {
        for bad in ["0", "1", "1.5", "-0.05"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("evalgate.toml");
            std::fs::write(&path, format!("[gate]\nsignificance = {bad}\n")).unwrap();
            let a = EvalArgs {
                config: Some(path),
                ..EvalArgs::default()
            };
            let e = Settings::resolve(&a).unwrap_err().to_string();
            assert!(
                e.contains("[gate] significance: expected a level between 0 and 1"),
                "{bad}: {e}"
            );
        }
    }

    /// `[sut] results` and the probe's shape reach the measurement and the catalog check;
    /// out of range they are refused by name.
    #[test]
    fn results_and_the_probe_shape_are_settings_checked_by_name() {
        let (_d, s) = resolve(
            "[sut]\nkind = \"mcp\"\nresults = 10\n[sut.mcp]\nurl = \"http://127.0.0.1:1/mcp\"\n[sut.catalog]\nprobe_words = 8\nprobe_max_chars = 200\n",
            EvalArgs::default(),
        );
        assert_eq!(s.measure.limits.results, 10);
        let SutSpec::Mcp { check, .. } = &s.sut else {
            panic!("{:?}", s.sut)
        };
        assert_eq!(check.results, 10);
        assert_eq!(check.catalog.probe_words, Some(8));
        assert_eq!(check.catalog.probe_max_chars, Some(200));
        let (_d, s) = resolve("", EvalArgs::default());
        assert_eq!(s.measure.limits.results, 20);
        for (bad, want) in [
            (
                "[sut]\nresults = 9\n",
                "[sut] results = 9: expected 10 to 1000",
            ),
            (
                "[sut]\nresults = 1001\n",
                "[sut] results = 1001: expected 10 to 1000",
            ),
            (
                "[sut.catalog]\nprobe_words = 0\n",
                "[sut.catalog] probe_words = 0: expected 1 to 1000",
            ),
            (
                "[sut.catalog]\nprobe_max_chars = 15\n",
                "[sut.catalog] probe_max_chars = 15: expected 16 to 100000",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("evalgate.toml");
            std::fs::write(&path, bad).unwrap();
            let a = EvalArgs {
                config: Some(path),
                ..EvalArgs::default()
            };
            let e = Settings::resolve(&a).unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }

    const FILE: &str = r#"
detectors = ["rules", "proxy_scan", "rules"]
[run]
runs = 3
timeout = 5
out = "o"
[sut]
kind = "mcp"
name = "mine"
[sut.mcp]
url = "http://file.example/mcp"
[sut.launch]
ready_timeout = 7
[gate]
new_detector_fpr_ceiling = 0.2
significance = 0.01
require_significance = true
[proxy_scan]
scan_timeout = 9
"#;

    #[test]
    fn each_spec_takes_a_setting_from_the_file_over_the_default() {
        let (dir, s) = resolve(FILE, EvalArgs::default());
        assert_eq!(s.measure.runs, 3);
        assert_eq!(s.measure.limits.request_timeout, Duration::from_secs(5));
        assert_eq!(s.report.out, dir.path().join("o"));
        assert_eq!(s.gate.new_detector.fpr_ceiling, Some(0.2));
        assert_eq!(
            s.gate.significance,
            crate::pipeline::gate::Significance {
                alpha: 0.01,
                required: true
            }
        );
        let SutSpec::Mcp { name, mcp, check } = &s.sut else {
            panic!("{:?}", s.sut)
        };
        assert_eq!(name, "mine");
        assert_eq!(mcp.url.as_deref(), Some("http://file.example/mcp"));
        assert_eq!(check.ready_timeout, Some(Duration::from_secs(7)));
        assert_eq!(check.request_timeout, Duration::from_secs(5));
        // each detector once, in order, with its own settings
        assert_eq!(s.detectors, [DetectorKind::Rules, DetectorKind::ProxyScan]);
        let proxy = &s.detector_settings.proxy;
        assert_eq!(s.detector_settings.proxy_scan.scan_timeout, Some(9.0));
        // the system under test is not launched: the live detectors launch the reference proxy
        assert_eq!(proxy.kind, SutKind::Reference);
        assert_eq!(proxy.check.request_timeout, Duration::from_secs(5));

        let (_dir, s) = resolve("", EvalArgs::default());
        assert_eq!(s.measure.runs, 1);
        assert_eq!(s.measure.limits.request_timeout, Duration::from_secs(30));
        assert_eq!(s.report.out, PathBuf::from("evalgate-report"));
        assert_eq!(
            s.gate.new_detector,
            crate::pipeline::gate::DEFAULT_NEW_DETECTOR
        );
        assert_eq!(
            s.gate.significance,
            crate::pipeline::gate::Significance::default()
        );
        assert!(matches!(s.sut, SutSpec::Embedded), "{:?}", s.sut);
        assert_eq!(s.detectors, [DetectorKind::Rules, DetectorKind::Drift]);
    }

    #[test]
    fn each_spec_takes_a_flag_or_variable_over_the_file() {
        let a = EvalArgs {
            runs: Some(5),
            timeout: Some(2.0),
            url: Some("http://flag.example/mcp".into()),
            out: Some(PathBuf::from("x")),
            baseline: Some(PathBuf::from("b.json")),
            detectors: Some(vec![DetectorKind::Drift]),
            ..EvalArgs::default()
        };
        let (_dir, s) = resolve(FILE, a);
        assert_eq!(s.measure.runs, 5);
        assert_eq!(s.measure.limits.request_timeout, Duration::from_secs(2));
        assert_eq!(s.report.out, PathBuf::from("x"));
        assert_eq!(s.gate.baseline, Some(PathBuf::from("b.json")));
        let SutSpec::Mcp { mcp, check, .. } = &s.sut else {
            panic!("{:?}", s.sut)
        };
        assert_eq!(mcp.url.as_deref(), Some("http://flag.example/mcp"));
        assert_eq!(check.request_timeout, Duration::from_secs(2));
        assert_eq!(s.detectors, [DetectorKind::Drift]);
    }

    #[test]
    fn a_launched_system_and_the_live_detectors_get_the_same_launch_spec() {
        let a = EvalArgs {
            mcpproxy_bin: Some(PathBuf::from("/opt/mcpproxy")),
            detectors: Some(vec![DetectorKind::RugPullLive]),
            ..EvalArgs::default()
        };
        let (_dir, s) = resolve(
            "[sut]\nname = \"mp\"\n[sut.launch]\nserved_names = \"prefixed\"\n",
            a,
        );
        let SutSpec::Launched(l) = &s.sut else {
            panic!("{:?}", s.sut)
        };
        assert_eq!(l.kind, SutKind::Mcpproxy);
        assert_eq!(l.name.as_deref(), Some("mp"));
        assert_eq!(l.mcpproxy_bin, Some(PathBuf::from("/opt/mcpproxy")));
        assert_eq!(
            l.launch.served_names,
            Some(crate::pipeline::replay::ServedNames::Prefixed)
        );
        assert_eq!(s.detectors, [DetectorKind::RugPullLive]);
        let proxy = &s.detector_settings.proxy;
        assert_eq!(proxy.kind, SutKind::Mcpproxy);
        assert_eq!(proxy.mcpproxy_bin, l.mcpproxy_bin);
        // a REST system gets [sut.rest] and nothing of [sut.mcp]
        let a = EvalArgs {
            sut: Some(SutKind::Rest),
            url: Some("http://h.example/api/v1/index/search".into()),
            ..EvalArgs::default()
        };
        let (_dir, s) = resolve("", a);
        let SutSpec::Rest { name, rest, .. } = &s.sut else {
            panic!("{:?}", s.sut)
        };
        assert_eq!(name, "rest");
        assert_eq!(
            rest.url.as_deref(),
            Some("http://h.example/api/v1/index/search")
        );
    }
}
