//! `evalgate.toml` and the resolved settings of one evaluation.
//!
//! Precedence: command-line flag > `EVALGATE_*` environment variable (the command line reads both) >
//! `evalgate.toml` (`--config FILE`, else `./evalgate.toml` when present) > built-in default.

use crate::pipeline::dataset::DatasetPaths;
use crate::pipeline::sut::kind::{DetectorKind, SutKind};
use crate::pipeline::sut::spec::{DetectorSettings, MAX_SECONDS, McpFile, RestFile, SutSpec};
use anyhow::Context;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod args;
mod specs;

pub use args::EvalArgs;
pub use specs::{GateSpec, MeasureSpec, ReportSpec};

use crate::infra::{files, secrets};
use crate::pipeline::dataset::Profile;
use crate::pipeline::gate::{DEFAULT_NEW_DETECTOR, NewDetectorLimits, Significance};
use crate::pipeline::measure::Limits;
use crate::pipeline::measure::probes::RobustnessMode;
use crate::pipeline::sut::launch::spec::{CatalogFile, CatalogSpec, LaunchFile};
use crate::pipeline::sut::launch::writers::ConfigFormat;
use crate::pipeline::sut::live::{LiveConfig, ProxyScanConfig};
use crate::pipeline::sut::observe::ObservationsMode;
use crate::pipeline::sut::scanner::ScannerConfig;
use crate::pipeline::sut::{DEPTH, HEADROOM};

pub const DEFAULT_CONFIG: &str = "evalgate.toml";

/// The file, as written by users. Every key is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileConfig {
    pub datasets: DatasetsFile,
    pub run: RunFile,
    pub sut: SutFile,
    /// Detectors under test (`rules`, `drift`, `recorded`, `scanner`, `proxy-scan`,
    /// `rug-pull-live`).
    pub detectors: Option<Vec<DetectorKind>>,
    /// `[[scanner]]`: external security scanners (detector kind `scanner`).
    pub scanner: Vec<ScannerConfig>,
    /// `[proxy_scan]`: the proxy's own scan (detector kind `proxy-scan`).
    pub proxy_scan: ProxyScanConfig,
    /// `[rug_pull_live]`: rug-pulls played against the proxy (detector kind `rug-pull-live`).
    pub rug_pull_live: LiveConfig,
    /// `[gate]`: the limits of a detector the baseline has no entry for.
    pub gate: GateFile,
    /// The keys written under `[sut.mcp]`, `[sut.rest]`, `[sut.launch]` and `[sut.catalog]`
    /// (section → keys), to refuse those the chosen kind would never read.
    #[serde(skip)]
    pub sut_keys: BTreeMap<String, Vec<String>>,
}

/// A URL a system under test is reached at: absolute, http or https, with a host. Checked when
/// the settings are read, so a typo is bad input (exit 2), not a system that failed (exit 3).
pub fn http_url(setting: &str, u: &str) -> anyhow::Result<()> {
    let shown = secrets::redact_url(u);
    match reqwest::Url::parse(u) {
        Ok(p) if matches!(p.scheme(), "http" | "https") && p.host().is_some() => Ok(()),
        Ok(p) => anyhow::bail!(
            "{setting} {shown:?}: expected an http:// or https:// URL with a host, got scheme {:?}",
            p.scheme()
        ),
        Err(e) => anyhow::bail!(
            "{setting} {shown:?}: expected an http:// or https:// URL (e.g. http://127.0.0.1:8080/mcp): {e}"
        ),
    }
}

/// The shortest wait evalgate accepts: a millisecond. Anything shorter (`1e-300`) would end
/// every wait before the system under test could answer, and blame it for that.
const MIN_SECONDS: f64 = 0.001;

/// A number of seconds from user input as a [`Duration`]: finite, at least `MIN_SECONDS`,
/// at most [`MAX_SECONDS`]. Every timeout evalgate accepts goes through here, so none can
/// overflow, be negative, be NaN (which would otherwise panic or silently become 0), or be too
/// short to be met.
pub fn seconds(setting: &str, v: f64) -> anyhow::Result<Duration> {
    if v.is_finite() && (MIN_SECONDS..=MAX_SECONDS).contains(&v) {
        Ok(Duration::from_secs_f64(v))
    } else {
        anyhow::bail!(
            "{setting}: expected a number of seconds of at least {MIN_SECONDS} (a millisecond) and at most {MAX_SECONDS} (a week), found {v}"
        )
    }
}

/// Keys of `[sut.<section>]` that `kind` never reads, as `[sut.section] key` names.
fn unread_keys(kind: SutKind, keys: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let reads = kind.def().reads;
    keys.iter()
        .flat_map(|(section, names)| {
            names
                .iter()
                .filter(|k| !reads(section, k))
                .map(move |k| format!("[sut.{section}] {k}"))
        })
        .collect()
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetsFile {
    /// A dataset directory (corpus.json, golden.json, security.json).
    pub dir: Option<PathBuf>,
    pub corpus: Option<PathBuf>,
    pub golden: Option<PathBuf>,
    pub security: Option<PathBuf>,
    /// `lenient` (default) or `strict`.
    pub profile: Option<Profile>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunFile {
    pub runs: Option<u32>,
    pub concurrency: Option<u32>,
    /// Seconds per request.
    pub timeout: Option<f64>,
    pub out: Option<PathBuf>,
    pub baseline: Option<PathBuf>,
    pub recorded: Option<PathBuf>,
    /// `off`, `report` or `gate`: robustness probes of the search system.
    pub robustness: Option<RobustnessMode>,
    /// `inline`, `file` or `gzip`: where the raw observations are written.
    pub observations: Option<ObservationsMode>,
}

/// A limit in `[gate]`: a number between 0 and 1, or `false` for none.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum LimitSetting {
    Value(f64),
    Off(bool),
}

/// `[gate]`: how a detector the baseline has no entry for (a new or renamed one) is gated.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateFile {
    /// FPR ceiling of such a detector [default 0.10]; `false`: none.
    pub new_detector_fpr_ceiling: Option<LimitSetting>,
    /// Recall floor of such a detector [default 0.10]; `false`: none.
    pub new_detector_recall_floor: Option<LimitSetting>,
    /// Alpha of the paired per-query comparisons (after Holm–Bonferroni) [default 0.05].
    pub significance: Option<f64>,
    /// A drop beyond the tolerance fails only when also significant [default false].
    pub require_significance: Option<bool>,
}

impl GateFile {
    fn significance(&self) -> anyhow::Result<Significance> {
        let d = Significance::default();
        let alpha = match self.significance {
            None => d.alpha,
            Some(a) if a > 0.0 && a < 1.0 => a,
            Some(a) => anyhow::bail!(
                "[gate] significance: expected a level between 0 and 1 (exclusive), such as 0.05, found {a}"
            ),
        };
        Ok(Significance {
            alpha,
            required: self.require_significance.unwrap_or(d.required),
        })
    }

    fn limits(&self) -> anyhow::Result<NewDetectorLimits> {
        let d = DEFAULT_NEW_DETECTOR;
        let one = |key: &str, v: Option<LimitSetting>, default: Option<f64>| match v {
            None => Ok(default),
            Some(LimitSetting::Off(false)) => Ok(None),
            Some(LimitSetting::Off(true)) => anyhow::bail!(
                "[gate] {key}: expected a number between 0 and 1, or false for no limit, found true"
            ),
            Some(LimitSetting::Value(x)) if (0.0..=1.0).contains(&x) => Ok(Some(x)),
            Some(LimitSetting::Value(x)) => anyhow::bail!(
                "[gate] {key}: expected a number between 0 and 1, or false for no limit, found {x}"
            ),
        };
        let fpr = self.new_detector_fpr_ceiling;
        let recall = self.new_detector_recall_floor;
        Ok(NewDetectorLimits {
            fpr_ceiling: one("new_detector_fpr_ceiling", fpr, d.fpr_ceiling)?,
            recall_floor: one("new_detector_recall_floor", recall, d.recall_floor)?,
        })
    }
}

/// `[sut]`: which system to measure and how to reach it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SutFile {
    pub kind: Option<SutKind>,
    /// Name in reports [default: the kind].
    pub name: Option<String>,
    /// `[sut.mcp]`: search over MCP.
    pub mcp: McpFile,
    /// `[sut.rest]`: search over a REST endpoint.
    pub rest: RestFile,
    /// `[sut.launch]`: start the system before measuring it.
    pub launch: LaunchFile,
    /// Path of the mcpproxy binary for kind `mcpproxy`.
    pub mcpproxy_bin: Option<PathBuf>,
    /// How many results each search asks for [default: 20, the scored depth 10 plus headroom
    /// for off-corpus ids and duplicates]; at least 10, at most 1000. The catalog probe and the
    /// stability probe ask for as many.
    pub results: Option<u32>,
    /// `[sut.catalog]`: how evalgate establishes that the system sees the whole corpus.
    pub catalog: CatalogFile,
}

impl FileConfig {
    pub fn parse(name: &str, text: &str) -> anyhow::Result<FileConfig> {
        let mut f: FileConfig = toml::from_str(text).map_err(|e| {
            let loc = e.span().map(|s| {
                let line = text[..s.start].matches('\n').count() + 1;
                let col = s.start - text[..s.start].rfind('\n').map_or(0, |i| i + 1) + 1;
                format!("{line}:{col}: ")
            });
            anyhow::anyhow!("{name}:{}{}", loc.unwrap_or_default(), e.message())
        })?;
        // it parsed as a FileConfig, so it parses as a table
        if let Ok(t) = toml::from_str::<toml::Table>(text)
            && let Some(toml::Value::Table(sut)) = t.get("sut")
        {
            for section in ["mcp", "rest", "launch", "catalog"] {
                if let Some(toml::Value::Table(keys)) = sut.get(section) {
                    f.sut_keys
                        .insert(section.to_string(), keys.keys().cloned().collect());
                }
            }
        }
        Ok(f)
    }

    /// The file named by `--config`, else `./evalgate.toml` when present, else empty.
    pub fn load(explicit: Option<&Path>) -> anyhow::Result<(Option<PathBuf>, FileConfig)> {
        let default = || Some(PathBuf::from(DEFAULT_CONFIG)).filter(|p| p.is_file());
        let Some(p) = explicit.map(Path::to_path_buf).or_else(default) else {
            return Ok((None, FileConfig::default()));
        };
        let text = files::read_to_string(&p)
            .with_context(|| format!("{}: cannot read the config", p.display()))?;
        let cfg = FileConfig::parse(&p.display().to_string(), &text)?;
        Ok((Some(p), cfg))
    }
}

/// Everything an evaluation needs, resolved from flags, environment, file and defaults.
#[derive(Debug, Clone)]
pub struct Settings {
    pub datasets: DatasetPaths,
    /// How strictly the datasets are held to the authoring rules.
    pub profile: Profile,
    /// How the measurement is taken.
    pub measure: MeasureSpec,
    /// The baseline and the limits the run is gated by.
    pub gate: GateSpec,
    /// Where the reports go and how the terminal shows them.
    pub report: ReportSpec,
    /// The system under test, with the settings of its kind only.
    pub sut: SutSpec,
    /// The detectors under test in order, each once.
    pub detectors: Vec<DetectorKind>,
    /// What they are given.
    pub detector_settings: DetectorSettings,
}

/// Paths in the config file are relative to the file's directory.
fn rel(base: Option<&Path>, p: Option<PathBuf>) -> Option<PathBuf> {
    p.map(|p| match base.and_then(Path::parent) {
        Some(dir) if p.is_relative() && !dir.as_os_str().is_empty() => dir.join(p),
        _ => p,
    })
}

/// A command whose program is a relative path with a directory part is made relative to the
/// config file's directory.
fn rel_command(base: Option<&Path>, cmd: Option<&mut Vec<String>>) {
    if let Some(first) = cmd.and_then(|c| c.first_mut())
        && first.contains('/')
        && !first.contains('{')
        && let Some(p) = rel(base, Some(PathBuf::from(first.as_str())))
    {
        *first = p.display().to_string();
    }
}

impl Settings {
    pub fn resolve(a: &EvalArgs) -> anyhow::Result<Settings> {
        let (file_path, f) = FileConfig::load(a.config.as_deref())?;
        let base = file_path.as_deref();
        let timeout = match a.timeout {
            Some(t) => seconds("--timeout (EVALGATE_TIMEOUT)", t)?,
            None => seconds("[run] timeout", f.run.timeout.unwrap_or(30.0))?,
        };
        // every other wait, checked once here (the adapters read them as valid)
        let live = &f.rug_pull_live;
        for (setting, v) in [
            ("[sut.launch] ready_timeout", f.sut.launch.ready_timeout),
            ("[proxy_scan] scan_timeout", f.proxy_scan.scan_timeout),
            ("[rug_pull_live] relist_timeout", live.relist_timeout),
            ("[rug_pull_live] settle_timeout", live.settle_timeout),
        ] {
            if let Some(v) = v {
                seconds(setting, v)?;
            }
        }
        // the counts, refused outside their range (bad input, exit 2); each default is inside
        for (setting, v, range, what) in [
            (
                "[sut] results",
                f.sut.results,
                DEPTH..=1000,
                "the results each search asks for: the metrics score the first 10",
            ),
            (
                "[sut.catalog] probe_words",
                f.sut.catalog.probe_words,
                1..=1000,
                "the words of a tool's description in its probe query",
            ),
            (
                "[sut.catalog] probe_max_chars",
                f.sut.catalog.probe_max_chars,
                16..=100_000,
                "the longest probe query sent, in characters",
            ),
        ] {
            if let Some(n) = v.map(|v| v as usize).filter(|n| !range.contains(n)) {
                let (lo, hi) = range.into_inner();
                anyhow::bail!("{setting} = {n}: expected {lo} to {hi} ({what})");
            }
        }
        let mut scanner_names = std::collections::BTreeSet::new();
        for (i, sc) in f.scanner.iter().enumerate() {
            if let Some(t) = sc.timeout {
                let setting = format!("[[scanner]] {:?} (#{}) timeout", sc.name, i + 1);
                seconds(&setting, t)?;
            }
            if !scanner_names.insert(sc.name.as_str()) {
                anyhow::bail!(
                    "[[scanner]] #{}: the name {:?} is already used by another scanner; names tell detectors apart in reports and baselines",
                    i + 1,
                    sc.name
                );
            }
        }
        let runs = a.runs.or(f.run.runs).unwrap_or(1);
        let concurrency = a.concurrency.or(f.run.concurrency).unwrap_or(4);
        for (name, n, max) in [("runs", runs, 1000), ("concurrency", concurrency, 64)] {
            if !(1..=max).contains(&n) {
                anyhow::bail!("{name} must be between 1 and {max}, got {n}");
            }
        }
        let mut sut_file = f.sut.clone();
        sut_file.mcpproxy_bin = a.mcpproxy_bin.clone().or(rel(base, sut_file.mcpproxy_bin));
        if let Some(url) = &a.url {
            sut_file.mcp.url = Some(url.clone());
            sut_file.rest.url = Some(url.clone());
        }
        for h in &a.headers {
            let (k, v) = h
                .split_once(':')
                .with_context(|| format!("--header {h:?}: expected NAME:VALUE"))?;
            for to in [&mut sut_file.mcp.headers, &mut sut_file.rest.headers] {
                to.insert(k.trim().to_string(), v.trim_start().to_string());
            }
        }
        let (mcp, rest, launch) = (&sut_file.mcp, &sut_file.rest, &sut_file.launch);
        // [sut.launch]'s URL may hold placeholders filled at launch: registered, not checked
        for (what, url, headers) in [
            (Some("[sut.mcp] url"), &mcp.url, &mcp.headers),
            (Some("[sut.rest] url"), &rest.url, &rest.headers),
            (None, &launch.url, &launch.headers),
        ] {
            headers.values().for_each(|v| secrets::register_header(v));
            if let Some(u) = url {
                secrets::register_url(u);
                if let Some(what) = what {
                    http_url(if a.url.is_some() { "--url" } else { what }, u)?;
                }
            }
        }
        // what the configuration gives its children is a credential until shown otherwise:
        // masked in every output from now on (SECURITY.md)
        let envs = f.scanner.iter().map(|sc| &sc.env);
        for env in envs.chain([&sut_file.mcp.env, &sut_file.launch.env]) {
            env.values().for_each(|v| secrets::register(v));
        }
        // relative paths in the file are relative to the file: the template, and commands
        // given as a path (`./bin/proxy`, `tools/scan.py`); bare names are looked up on PATH
        sut_file.launch.template = rel(base, sut_file.launch.template);
        rel_command(base, sut_file.launch.command.as_mut());
        rel_command(base, sut_file.mcp.command.as_mut());
        let mut scanners = f.scanner.clone();
        for sc in &mut scanners {
            rel_command(base, Some(&mut sc.command));
        }
        let implied = a.mcpproxy_bin.as_ref().map(|_| SutKind::Mcpproxy);
        let fallback = a.default_sut.unwrap_or(SutKind::Embedded);
        let sut = a.sut.or(f.sut.kind).or(implied).unwrap_or(fallback);
        // a key that is accepted is a key that works: settings the chosen kind never reads are
        // refused (unless --sut picked another kind for this run on purpose)
        let unread = unread_keys(sut, &f.sut_keys);
        if a.sut.is_none() && !unread.is_empty() {
            let (has, it) = match unread.len() {
                1 => ("has", "it"),
                _ => ("have", "them"),
            };
            let default = f.sut.kind.map_or(" (the default)", |_| "");
            anyhow::bail!(
                "{}: {} {has} no effect with [sut] kind = {:?}{default}; set the kind that reads {it} or remove {it}",
                base.map_or("evalgate.toml".into(), |p| p.display().to_string()),
                unread.join(", "),
                sut.as_str(),
            );
        }
        if sut == SutKind::Launch
            && f.sut.launch.config_format == Some(ConfigFormat::None)
            && !f.sut.launch.proxy_config.is_empty()
        {
            anyhow::bail!(
                "[sut.launch] proxy_config: config_format = \"none\" writes no config to merge it into; use a config format, or put the settings in `setup` or `env`"
            );
        }
        let named = a.detectors.clone().or(f.detectors);
        let mut detectors = named.unwrap_or_else(|| sut.def().detectors.to_vec());
        let mut seen = std::collections::HashSet::new();
        detectors.retain(|k| seen.insert(*k));
        let recorded = a.recorded.clone().or(rel(base, f.run.recorded));
        let check = CatalogSpec {
            catalog: sut_file.catalog.clone(),
            results: sut_file.results.map_or(DEPTH + HEADROOM, |n| n as usize),
            // checked by `seconds` above, so the conversion cannot panic
            ready_timeout: sut_file.launch.ready_timeout.map(Duration::from_secs_f64),
            request_timeout: timeout,
            concurrency: concurrency as usize,
            quiet: a.quiet,
        };
        let results = check.results;
        let detector_settings = DetectorSettings {
            recorded: recorded.clone(),
            scanners,
            proxy_scan: f.proxy_scan.clone(),
            rug_pull_live: f.rug_pull_live.clone(),
            proxy: specs::launch_spec(sut, &sut_file, check.clone()),
        };
        let sut_spec = specs::sut_spec(sut, &sut_file, recorded, check);
        Ok(Settings {
            datasets: a.datasets.clone().or(DatasetPaths::files_then_dir(
                DatasetPaths {
                    corpus: rel(base, f.datasets.corpus),
                    golden: rel(base, f.datasets.golden),
                    security: rel(base, f.datasets.security),
                },
                rel(base, f.datasets.dir).as_deref(),
            )),
            profile: a.profile.or(f.datasets.profile).unwrap_or_default(),
            measure: MeasureSpec {
                runs: runs as usize,
                limits: Limits {
                    request_timeout: timeout,
                    concurrency: concurrency as usize,
                    results,
                },
                robustness: a.robustness.or(f.run.robustness).unwrap_or_default(),
                shard: a.shard,
            },
            report: ReportSpec {
                out: a
                    .out
                    .clone()
                    .or(rel(base, f.run.out))
                    .unwrap_or_else(|| PathBuf::from("evalgate-report")),
                quiet: a.quiet,
                color: a.color,
                observations: a.observations.or(f.run.observations).unwrap_or_default(),
            },
            sut: sut_spec,
            detectors,
            detector_settings,
            gate: GateSpec {
                baseline: a.baseline.clone().or(rel(base, f.run.baseline)),
                no_baseline: a.no_baseline,
                new_detector: f.gate.limits()?,
                significance: f.gate.significance()?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_config_parses_and_unknown_keys_are_refused_with_a_position() {
        let ok = r#"
detectors = ["rules"]
[datasets]
corpus = "c.json"
[run]
runs = 3
[sut]
kind = "mcp"
[sut.mcp]
preset = "mcpproxy"
url = "http://127.0.0.1:8080/mcp"
headers = { "X-API-Key" = "k" }
extra_args = { detail = "full" }
"#;
        let f = FileConfig::parse("evalgate.toml", ok).unwrap();
        assert_eq!(f.run.runs, Some(3));
        assert_eq!(f.sut.kind, Some(SutKind::Mcp));
        assert_eq!(f.sut.mcp.extra_args["detail"], "full");
        // keys accepted and never read, refused now by name: `[sut.launch] catalog`, and
        // `[sut.rest] preset` (REST has no preset); and a misspelt key
        for (toml, key) in [
            ("[sut.launch]\ncatalog = \"search\"\n", "catalog"),
            ("[sut.rest]\npreset = \"mcpproxy\"\n", "preset"),
            ("[run]\nrunz = 3\n", "runz"),
        ] {
            let err = FileConfig::parse("evalgate.toml", toml)
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("evalgate.toml:2:1: ") && err.contains(key),
                "{err}"
            );
        }
    }

    #[test]
    fn keys_the_chosen_kind_never_reads_are_named() {
        let f = FileConfig::parse(
            "evalgate.toml",
            "[sut.mcp]\nurl = \"http://x/mcp\"\ntool = \"t\"\n[sut.launch]\nready_timeout = 5\ncommand = [\"p\"]\n[sut.rest]\nurl = \"http://x\"\n[sut.catalog]\ncheck = \"search\"\n",
        )
        .unwrap();
        let unread = |k| unread_keys(k, &f.sut_keys);
        assert_eq!(
            unread(SutKind::Mcp),
            ["[sut.launch] command", "[sut.rest] url"]
        );
        assert_eq!(
            unread(SutKind::Rest),
            ["[sut.launch] command", "[sut.mcp] tool", "[sut.mcp] url"]
        );
        // a launched proxy is searched where it was started: [sut.mcp] url is not read
        assert_eq!(unread(SutKind::Launch), ["[sut.mcp] url", "[sut.rest] url"]);
        assert_eq!(unread(SutKind::Embedded).len(), 6);
        assert!(unread_keys(SutKind::Embedded, &BTreeMap::new()).is_empty());
    }
}
