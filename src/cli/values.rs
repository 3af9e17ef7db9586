//! The command line's side of the domain's enums: their names and help as possible values.
//! The domain types know nothing of clap; each is listed here once, in help order, with the
//! help its possible value shows, except the kinds of systems and detectors, whose names and
//! help come from their definitions in `sut::kind`.

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

/// The kinds of systems and detectors, from their definitions.
macro_rules! value_enum_of_defs {
    ($($t:ty),+) => {$(
        impl ValueEnum for $t {
            fn value_variants<'a>() -> &'a [Self] {
                <$t>::ALL
            }
            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(PossibleValue::new(self.as_str()).help(self.def().help))
            }
        }
    )+};
}

value_enum_of_defs!(SutKind, DetectorKind);

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
        static KINDS: std::sync::LazyLock<Vec<ProxyKind>> = std::sync::LazyLock::new(|| {
            let mut kinds: Vec<ProxyKind> = SutKind::ALL.iter().map(|&k| ProxyKind(k)).collect();
            // the launched proxies first, and the default first of them
            kinds.sort_by_key(|k| (k.0.def().launched.is_none(), k.0 != SutKind::Reference));
            kinds
        });
        &KINDS
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        let v = PossibleValue::new(self.0.as_str());
        Some(match self.0.def().launched {
            Some(help) => v.help(help),
            None => v.hide(true),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_names_a_kind_as_the_domain_does() {
        for &k in SutKind::ALL {
            assert_eq!(k.to_possible_value().unwrap().get_name(), k.as_str());
            assert_eq!(SutKind::from_str(k.as_str(), false), Ok(k));
        }
        for &k in DetectorKind::ALL {
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
