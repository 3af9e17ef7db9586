//! Which system under test and which detectors: one definition per kind, in one list each.
//! A kind's name (on the command line and in evalgate.toml), its help and what it reads come
//! from its definition; `cli::values` turns them into possible values, the serde impl here
//! reads them from evalgate.toml. A detector's definition (and how it is built) lives in the
//! detector's own file; this file only lists it.

use super::Detector;
use super::spec::DetectorSettings;
use crate::infra::process::Supervisor;

/// What a detector kind builds.
pub type Detectors = Vec<Box<dyn Detector>>;

/// One detector kind: what `--detectors` and `detectors = [...]` call it, its help, and how it
/// is built from the settings.
pub struct DetectorDef {
    /// The name on the command line; evalgate.toml also accepts it with `_` for `-`.
    pub name: &'static str,
    pub help: &'static str,
    /// Plays against a launched proxy (which `--sut` / `--mcpproxy-bin` choose).
    pub live: bool,
    /// The detectors measured under this kind (a recording or `[[scanner]]` tables may give
    /// several); an error is bad input.
    pub build: fn(&DetectorSettings, &Supervisor) -> anyhow::Result<Detectors>,
}

/// One kind of system under test.
pub struct SutDef {
    pub name: &'static str,
    pub help: &'static str,
    /// A proxy evalgate starts itself (the only kinds the live detectors can play against),
    /// with its help under `security --sut`.
    pub launched: Option<&'static str>,
    /// Whether it reads `[sut.<section>] <key>` (the others are refused as unread).
    pub reads: fn(section: &str, key: &str) -> bool,
    /// The detectors measured when none are named.
    pub detectors: &'static [DetectorKind],
}

/// `enum $kind`, its `ALL` in help order, each variant's definition, and its evalgate.toml
/// form (the name, or the name with `_` for `-`).
macro_rules! kinds {
    ($kind:ident: $def:ty { $($v:ident => $d:expr),+ $(,)? }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $kind {
            $($v),+
        }

        impl $kind {
            /// Every kind, in the order help lists them.
            pub const ALL: &'static [$kind] = &[$($kind::$v),+];
            /// Their names, in the same order.
            const NAMES: &'static [&'static str] = &[$($d.name),+];

            /// The kind's one definition.
            pub fn def(self) -> &'static $def {
                match self {
                    $($kind::$v => {
                        const D: &$def = &$d;
                        D
                    })+
                }
            }

            /// The kind as written on the command line and in evalgate.toml.
            pub fn as_str(self) -> &'static str {
                self.def().name
            }
        }

        impl<'de> serde::Deserialize<'de> for $kind {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                let found = $kind::ALL
                    .iter()
                    .find(|k| k.as_str() == s || k.as_str().replace('-', "_") == s);
                // serde's own message: unknown variant `x`, expected one of `a`, `b`, ...
                found.copied().ok_or_else(|| serde::de::Error::unknown_variant(&s, Self::NAMES))
            }
        }
    };
}

kinds!(DetectorKind: DetectorDef {
    Rules => super::rules::DEF,
    Drift => super::drift::DEF,
    Recorded => super::recorded::DETECTOR,
    Scanner => super::scanner::DEF,
    ProxyScan => super::live::scan::DEF,
    RugPullLive => super::live::rug_pull::DEF,
});

/// evalgate's reference checkers: the detectors of a system that is not mcpproxy.
const REFERENCE_CHECKERS: &[DetectorKind] = &[DetectorKind::Rules, DetectorKind::Drift];

kinds!(SutKind: SutDef {
    Embedded => SutDef {
        name: "embedded",
        help: "In-process BM25 (tantivy) over the corpus",
        launched: None,
        reads: |_, _| false,
        detectors: REFERENCE_CHECKERS,
    },
    Recorded => SutDef {
        name: "recorded",
        help: "Replay ranked ids from --recorded (a report.json or {query id: [ids]})",
        launched: None,
        reads: |_, _| false,
        detectors: REFERENCE_CHECKERS,
    },
    Mcp => SutDef {
        name: "mcp",
        help: "A running proxy's search tool over MCP (--url, or [sut.mcp] in evalgate.toml)",
        launched: None,
        reads: |s, k| connected("mcp", s, k),
        detectors: REFERENCE_CHECKERS,
    },
    Rest => SutDef {
        name: "rest",
        help: "A REST search endpoint (--url, or [sut.rest]); e.g. mcpproxy's /api/v1/index/search",
        launched: None,
        reads: |s, k| connected("rest", s, k),
        detectors: REFERENCE_CHECKERS,
    },
    // mcpproxy's family is given stdio commands: evalgate serves the upstreams of a `launch`
    // proxy only
    Mcpproxy => SutDef {
        name: "mcpproxy",
        help: "Launch mcpproxy (--mcpproxy-bin) over replayed corpus servers and search via retrieve_tools",
        launched: Some("mcpproxy (--mcpproxy-bin)"),
        reads: |s, k| launched(s, k) && !(s == "launch" && k == "upstream_transport"),
        // its own quarantine (one launch, the rug pulls played through it: about a minute on
        // v1), so the security rows describe the system under test; its own scan
        // (`proxy-scan`) is opt-in: about ten launches and several minutes on v1
        detectors: &[DetectorKind::RugPullLive],
    },
    Reference => SutDef {
        name: "reference",
        help: "Launch evalgate's reference proxy the same way (no binary needed)",
        launched: Some("evalgate's reference proxy (no binary needed)"),
        reads: |s, k| launched(s, k) && !(s == "launch" && k == "upstream_transport"),
        detectors: REFERENCE_CHECKERS,
    },
    Launch => SutDef {
        name: "launch",
        help: "Launch any proxy ([sut.launch] in evalgate.toml: command, config format, transport)",
        launched: Some("any proxy, as [sut.launch] in evalgate.toml describes it"),
        reads: launched,
        detectors: REFERENCE_CHECKERS,
    },
});

/// What a system started elsewhere reads: its own section, the catalog check, and how long
/// the coverage probe may wait.
fn connected(own: &str, section: &str, key: &str) -> bool {
    section == own || section == "catalog" || (section == "launch" && key == "ready_timeout")
}

/// What a launched proxy reads: it is reached where it was started, so not `[sut.mcp]`'s
/// address.
fn launched(section: &str, key: &str) -> bool {
    match section {
        "catalog" | "launch" => true,
        "mcp" => !["url", "command", "headers"].contains(&key),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_read_back_as_the_same_kind_in_evalgate_toml() {
        for &k in SutKind::ALL {
            let back: SutKind = serde_json::from_value(serde_json::json!(k.as_str())).unwrap();
            assert_eq!(back, k);
        }
        for &k in DetectorKind::ALL {
            let back: DetectorKind = serde_json::from_value(serde_json::json!(k.as_str())).unwrap();
            assert_eq!(back, k);
        }
        let back: DetectorKind = serde_json::from_value(serde_json::json!("proxy_scan")).unwrap();
        assert_eq!(back, DetectorKind::ProxyScan);
        let e = serde_json::from_value::<SutKind>(serde_json::json!("x")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("unknown variant `x`, expected one of `embedded`")
        );
        assert!(SutKind::Launch.def().launched.is_some() && SutKind::Mcp.def().launched.is_none());
    }
}
