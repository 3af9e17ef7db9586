//! Faults the proxy can be told to inject: a testing hook for the launcher's failure handling
//! (`evalgate proxy --fault …`, env `EVALGATE_PROXY_FAULT`).
//!
//! Test-only: the hook exists only in builds with the cargo feature `fault-injection` (the
//! tests enable it). Without it, [`Fault`] is a zero-sized no-op, the command line
//! (`cli::tools::ProxyArgs`) has no `--fault` argument and never reads the environment
//! variable, and every branch on a fault folds away, so a release binary cannot be made to
//! misbehave.
//!
//! The proxy asks the fault one question per hook point: [`Fault::dropped_tool`] (reindex),
//! [`Fault::on_search`] (every search), [`Fault::ignores_limit`] (search limit),
//! [`Fault::ignores_list_changed`] (upstream re-listing), [`Fault::cancels_scans`] (scans).

/// A fault to inject. Only `None` exists without the feature.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Fault {
    #[default]
    None,
    /// Exit with status 101 on the Nth search.
    #[cfg(feature = "fault-injection")]
    CrashAfter(usize),
    /// Never answer the Nth and later searches.
    #[cfg(feature = "fault-injection")]
    HangAfter(usize),
    /// Answer the Nth and later searches with text that is not JSON.
    #[cfg(feature = "fault-injection")]
    GarbageAfter(usize),
    /// Leave this `server:tool` out of the catalog (a catalog that never matches the corpus).
    #[cfg(feature = "fault-injection")]
    DropTool(String),
    /// Never re-list an upstream on `notifications/tools/list_changed` (a proxy blind to
    /// rug-pulls).
    #[cfg(feature = "fault-injection")]
    IgnoreListChanged,
    /// Answer every search after this many milliseconds.
    #[cfg(feature = "fault-injection")]
    SlowMs(u64),
    /// Ignore `limit` in searches: always answer with up to `tools_limit` tools.
    #[cfg(feature = "fault-injection")]
    IgnoreLimit,
    /// Cancel every security scan right after accepting it (status `cancelled`, final).
    #[cfg(feature = "fault-injection")]
    CancelScans,
}

#[cfg(feature = "fault-injection")]
impl std::str::FromStr for Fault {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let expected = "expected none, ignore-list-changed, ignore-limit, cancel-scans, slow=MS, crash-after=N, hang-after=N, garbage-after=N or drop-tool=SERVER:TOOL";
        let (kind, arg) = match s {
            "none" => return Ok(Fault::None),
            "ignore-list-changed" => return Ok(Fault::IgnoreListChanged),
            "ignore-limit" => return Ok(Fault::IgnoreLimit),
            "cancel-scans" => return Ok(Fault::CancelScans),
            _ => s
                .split_once('=')
                .ok_or_else(|| format!("{expected}, got {s:?}"))?,
        };
        if kind == "drop-tool" {
            return Ok(Fault::DropTool(arg.to_string()));
        }
        let n: usize = arg
            .parse()
            .map_err(|_| format!("expected a number after '=' in {s:?}"))?;
        match kind {
            "crash-after" => Ok(Fault::CrashAfter(n)),
            "hang-after" => Ok(Fault::HangAfter(n)),
            "garbage-after" => Ok(Fault::GarbageAfter(n)),
            "slow" => Ok(Fault::SlowMs(n as u64)),
            _ => Err(format!("unknown fault {kind:?}: {expected}")),
        }
    }
}

/// Each hook answers "behave normally" for `None`; the arms of the other faults exist only
/// with the feature, so without it every hook folds to that answer.
impl Fault {
    /// The `server:tool` to leave out of the catalog.
    pub fn dropped_tool(&self) -> Option<&str> {
        match self {
            #[cfg(feature = "fault-injection")]
            Fault::DropTool(id) => Some(id),
            _ => None,
        }
    }

    /// Applies the fault to the `n`th search (1-based): may exit the process, never return,
    /// or delay. `Some(text)` = answer with this garbage instead of the results.
    #[cfg_attr(not(feature = "fault-injection"), allow(unused_variables))]
    pub async fn on_search(&self, n: usize) -> Option<String> {
        match *self {
            #[cfg(feature = "fault-injection")]
            Fault::CrashAfter(k) if n >= k => {
                crate::errln!("evalgate proxy: injected fault: crashing on search {n}");
                std::process::exit(101);
            }
            #[cfg(feature = "fault-injection")]
            Fault::HangAfter(k) if n >= k => {
                std::future::pending::<()>().await;
                None
            }
            #[cfg(feature = "fault-injection")]
            Fault::GarbageAfter(k) if n >= k => Some("<<garbage: this is not JSON>>".into()),
            #[cfg(feature = "fault-injection")]
            Fault::SlowMs(ms) => {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                None
            }
            _ => None,
        }
    }

    /// Searches answer with up to `tools_limit` tools whatever `limit` they ask for.
    pub fn ignores_limit(&self) -> bool {
        match self {
            #[cfg(feature = "fault-injection")]
            Fault::IgnoreLimit => true,
            _ => false,
        }
    }

    /// `notifications/tools/list_changed` does not re-list the upstream.
    pub fn ignores_list_changed(&self) -> bool {
        match self {
            #[cfg(feature = "fault-injection")]
            Fault::IgnoreListChanged => true,
            _ => false,
        }
    }

    /// Every accepted security scan is cancelled at once.
    pub fn cancels_scans(&self) -> bool {
        match self {
            #[cfg(feature = "fault-injection")]
            Fault::CancelScans => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Fault;

    #[cfg(feature = "fault-injection")]
    #[test]
    fn every_fault_parses_from_its_command_line_spelling() {
        let parse = |s: &str| s.parse::<Fault>();
        assert_eq!(parse("none"), Ok(Fault::None));
        assert_eq!(parse("ignore-list-changed"), Ok(Fault::IgnoreListChanged));
        assert_eq!(parse("ignore-limit"), Ok(Fault::IgnoreLimit));
        assert_eq!(parse("cancel-scans"), Ok(Fault::CancelScans));
        assert_eq!(parse("crash-after=3"), Ok(Fault::CrashAfter(3)));
        assert_eq!(parse("hang-after=1"), Ok(Fault::HangAfter(1)));
        assert_eq!(parse("garbage-after=2"), Ok(Fault::GarbageAfter(2)));
        assert_eq!(parse("slow=250"), Ok(Fault::SlowMs(250)));
        assert_eq!(parse("drop-tool=a:b"), Ok(Fault::DropTool("a:b".into())));
        assert!(parse("crash-after=x").unwrap_err().contains("number"));
        assert!(parse("explode=1").unwrap_err().contains("unknown fault"));
        assert!(parse("explode").unwrap_err().contains("expected none"));
    }

    #[cfg(feature = "fault-injection")]
    #[tokio::test]
    async fn each_hook_answers_only_for_its_own_fault() {
        let drop = Fault::DropTool("s:t".into());
        assert_eq!(drop.dropped_tool(), Some("s:t"));
        assert_eq!(Fault::None.dropped_tool(), None);
        assert!(Fault::IgnoreLimit.ignores_limit());
        assert!(Fault::IgnoreListChanged.ignores_list_changed());
        assert!(Fault::CancelScans.cancels_scans());
        for f in [Fault::None, drop.clone()] {
            assert!(!f.ignores_limit() && !f.ignores_list_changed() && !f.cancels_scans());
        }
        let garbage = Fault::GarbageAfter(2);
        assert_eq!(garbage.on_search(1).await, None);
        assert!(garbage.on_search(2).await.unwrap().contains("not JSON"));
        assert_eq!(Fault::None.on_search(100).await, None);
    }

    #[cfg(not(feature = "fault-injection"))]
    #[tokio::test]
    async fn without_the_feature_the_fault_is_a_zero_sized_no_op() {
        assert_eq!(std::mem::size_of::<Fault>(), 0);
        let f = Fault::None;
        assert_eq!(f.dropped_tool(), None);
        assert_eq!(f.on_search(1).await, None);
        assert!(!f.ignores_limit() && !f.ignores_list_changed() && !f.cancels_scans());
    }
}
