//! Which system under test and which detectors: the domain's own names for them. The command
//! line's side (possible values and their help) is in `cli`, evalgate.toml's is the serde
//! derive here.

/// The kind of system under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SutKind {
    /// In-process BM25 (tantivy) over the corpus.
    Embedded,
    /// Replay ranked ids from --recorded (a report.json or {query id: [ids]}).
    Recorded,
    /// A running proxy's search tool over MCP (--url, or [sut.mcp] in evalgate.toml).
    Mcp,
    /// A REST search endpoint (--url, or [sut.rest]); e.g. mcpproxy's /api/v1/index/search.
    Rest,
    /// Launch mcpproxy (--mcpproxy-bin) over replayed corpus servers and search via retrieve_tools.
    Mcpproxy,
    /// Launch evalgate's reference proxy the same way (no binary needed).
    Reference,
    /// Launch any proxy ([sut.launch] in evalgate.toml: command, config format, transport).
    Launch,
}

impl SutKind {
    /// Every kind, in the order help lists them.
    pub const ALL: [SutKind; 7] = [
        SutKind::Embedded,
        SutKind::Recorded,
        SutKind::Mcp,
        SutKind::Rest,
        SutKind::Mcpproxy,
        SutKind::Reference,
        SutKind::Launch,
    ];

    /// A proxy evalgate starts itself (the only kinds the live detectors can play against).
    pub fn launched(self) -> bool {
        matches!(
            self,
            SutKind::Mcpproxy | SutKind::Reference | SutKind::Launch
        )
    }

    /// The kind as written on the command line and in evalgate.toml.
    pub fn as_str(self) -> &'static str {
        match self {
            SutKind::Embedded => "embedded",
            SutKind::Recorded => "recorded",
            SutKind::Mcp => "mcp",
            SutKind::Rest => "rest",
            SutKind::Mcpproxy => "mcpproxy",
            SutKind::Reference => "reference",
            SutKind::Launch => "launch",
        }
    }

    /// [`SutKind::as_str`], owned.
    pub fn name(self) -> String {
        self.as_str().to_string()
    }
}

/// A detector under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DetectorKind {
    /// Reference rules: hidden tags, secret exfiltration, secrecy, shadowing, injection phrases, hidden Unicode, encoded payloads.
    Rules,
    /// Canonical-JSON fingerprint drift of before/after definitions (rug-pulls).
    Drift,
    /// Replay verdicts from --recorded (a report.json, a spec-065 scan-eval file or {entry id: bool}).
    Recorded,
    /// The external scanners configured as [[scanner]] tables in evalgate.toml.
    Scanner,
    /// The launched proxy's own security scan (POST /api/v1/servers/{name}/scan) over the entries served as tools.
    #[serde(alias = "proxy-scan")]
    ProxyScan,
    /// Rug-pulls played live against the launched proxy: reported, blocked, restored after a revert.
    #[serde(alias = "rug-pull-live")]
    RugPullLive,
}

impl DetectorKind {
    /// Every kind, in the order help lists them.
    pub const ALL: [DetectorKind; 6] = [
        DetectorKind::Rules,
        DetectorKind::Drift,
        DetectorKind::Recorded,
        DetectorKind::Scanner,
        DetectorKind::ProxyScan,
        DetectorKind::RugPullLive,
    ];

    /// Plays against a launched proxy (which `--sut` / `--mcpproxy-bin` choose).
    pub fn live(self) -> bool {
        matches!(self, DetectorKind::ProxyScan | DetectorKind::RugPullLive)
    }

    /// The kind as written on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            DetectorKind::Rules => "rules",
            DetectorKind::Drift => "drift",
            DetectorKind::Recorded => "recorded",
            DetectorKind::Scanner => "scanner",
            DetectorKind::ProxyScan => "proxy-scan",
            DetectorKind::RugPullLive => "rug-pull-live",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_read_back_as_the_same_kind_in_evalgate_toml() {
        for k in SutKind::ALL {
            let back: SutKind = serde_json::from_value(serde_json::json!(k.as_str())).unwrap();
            assert_eq!(back, k);
        }
        for k in DetectorKind::ALL {
            let back: DetectorKind = serde_json::from_value(serde_json::json!(k.as_str())).unwrap();
            assert_eq!(back, k);
        }
        assert!(SutKind::Launch.launched() && !SutKind::Mcp.launched());
    }
}
