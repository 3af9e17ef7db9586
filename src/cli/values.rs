//! The command line's side of the domain's enums: their names and help as possible values.
//! The domain types know nothing of clap; each is listed here once, in help order, with the
//! help its possible value shows.

use crate::pipeline::dataset::Profile;
use crate::pipeline::measure::probes::RobustnessMode;
use crate::pipeline::publish::{CommentMode, FailOn, PublishWhen};
use crate::pipeline::replay::{RugPull, ServedNames};
use crate::pipeline::report::color::ColorChoice;
use crate::pipeline::sut::kind::{DetectorKind, SutKind};
use crate::pipeline::sut::observe::ObservationsMode;
use clap::ValueEnum;
use clap::builder::PossibleValue;

/// `impl ValueEnum for T`: each variant with its name and, optionally, its help.
macro_rules! value_enum {
    ($t:ty { $($v:ident => $name:literal $(: $help:literal)?),+ $(,)? }) => {
        impl ValueEnum for $t {
            fn value_variants<'a>() -> &'a [Self] {
                &[$(<$t>::$v),+]
            }
            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $(<$t>::$v => PossibleValue::new($name)$(.help($help))?,)+
                })
            }
        }
    };
}

value_enum!(SutKind {
    Embedded => "embedded": "In-process BM25 (tantivy) over the corpus",
    Recorded => "recorded": "Replay ranked ids from --recorded (a report.json or {query id: [ids]})",
    Mcp => "mcp": "A running proxy's search tool over MCP (--url, or [sut.mcp] in evalgate.toml)",
    Rest => "rest": "A REST search endpoint (--url, or [sut.rest]); e.g. mcpproxy's /api/v1/index/search",
    Mcpproxy => "mcpproxy": "Launch mcpproxy (--mcpproxy-bin) over replayed corpus servers and search via retrieve_tools",
    Reference => "reference": "Launch evalgate's reference proxy the same way (no binary needed)",
    Launch => "launch": "Launch any proxy ([sut.launch] in evalgate.toml: command, config format, transport)",
});

value_enum!(DetectorKind {
    Rules => "rules": "Reference rules: hidden tags, secret exfiltration, secrecy, shadowing, injection phrases, hidden Unicode, encoded payloads",
    Drift => "drift": "Canonical-JSON fingerprint drift of before/after definitions (rug-pulls)",
    Recorded => "recorded": "Replay verdicts from --recorded (a report.json, a spec-065 scan-eval file or {entry id: bool})",
    Scanner => "scanner": "The external scanners configured as [[scanner]] tables in evalgate.toml",
    ProxyScan => "proxy-scan": "The launched proxy's own security scan (POST /api/v1/servers/{name}/scan) over the entries served as tools",
    RugPullLive => "rug-pull-live": "Rug-pulls played live against the launched proxy: reported, blocked, restored after a revert",
});

value_enum!(ObservationsMode {
    Inline => "inline": "In report.json [default]",
    File => "file": "In observations.json beside it (report.json keeps the summaries only)",
    Gzip => "gzip": "In observations.json.gz beside it (about a tenth of the size)",
});

value_enum!(ColorChoice {
    Auto => "auto",
    Always => "always",
    Never => "never",
});

value_enum!(RobustnessMode {
    Off => "off": "Do not probe",
    Report => "report": "Probe and report [default]",
    Gate => "gate": "Probe, report, and fail the gate when a probe fails",
});

value_enum!(Profile {
    Lenient => "lenient": "Data from elsewhere: authoring rules (queries naming a tool, hard-negative coverage, licences, distractor bookkeeping...) are warnings with counts and examples; integrity rules (dangling labels, duplicate ids, no relevant label, undecodable JSON) are errors",
    Strict => "strict": "evalgate's own authoring rules as errors (the shipped `datasets/v*` are held to them)",
});

value_enum!(PublishWhen {
    Auto => "auto": "Inside GitHub Actions (GITHUB_ACTIONS=true)",
    Always => "always",
    Never => "never",
});

value_enum!(CommentMode {
    Always => "always": "On every run",
    OnChange => "on-change": "When a metric moved or the gate failed, and to keep an earlier comment current",
    OnFailure => "on-failure": "When the gate failed, and to keep an earlier comment current",
    Off => "off": "Never",
});

value_enum!(FailOn {
    Regression => "regression": "A regression fails the job (exit 1)",
    Never => "never": "Report only: exit 0 and a neutral check run",
});

value_enum!(RugPull {
    Off => "off": "Never",
    AfterList => "after-list": "After the first `tools/list` has been answered",
    AfterCall => "after-call": "After the first `tools/call` has been answered",
});

value_enum!(ServedNames {
    Bare => "bare": "The corpus names (`create_branch`)",
    Prefixed => "prefixed": "`<server>__<tool>` (`github__create_branch`), unique across servers",
});

/// `security --sut`: every kind parses (so `EVALGATE_SUT=mcp`, set for the job's other runs,
/// does not break `security`), but help lists only the launched proxies, the kinds that can
/// apply; one of the others given on the command line is refused after parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyKind(pub SutKind);

impl ValueEnum for ProxyKind {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            ProxyKind(SutKind::Reference),
            ProxyKind(SutKind::Mcpproxy),
            ProxyKind(SutKind::Launch),
            ProxyKind(SutKind::Embedded),
            ProxyKind(SutKind::Recorded),
            ProxyKind(SutKind::Mcp),
            ProxyKind(SutKind::Rest),
        ]
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        let v = match self.0 {
            SutKind::Reference => PossibleValue::new("reference")
                .help("evalgate's reference proxy (no binary needed)"),
            SutKind::Mcpproxy => PossibleValue::new("mcpproxy").help("mcpproxy (--mcpproxy-bin)"),
            SutKind::Launch => PossibleValue::new("launch")
                .help("any proxy, as [sut.launch] in evalgate.toml describes it"),
            other => other.to_possible_value()?.hide(true),
        };
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_names_a_kind_as_the_domain_does() {
        for k in SutKind::ALL {
            assert_eq!(k.to_possible_value().unwrap().get_name(), k.as_str());
            assert_eq!(SutKind::from_str(k.as_str(), false), Ok(k));
        }
        for k in DetectorKind::ALL {
            assert_eq!(k.to_possible_value().unwrap().get_name(), k.as_str());
        }
        assert_eq!(SutKind::value_variants().len(), SutKind::ALL.len());
        assert_eq!(
            DetectorKind::value_variants().len(),
            DetectorKind::ALL.len()
        );
        assert_eq!(
            Profile::Strict.to_possible_value().unwrap().get_name(),
            "strict"
        );
    }
}
