//! evalgate's own binary, for the processes it starts from itself (replays, the watchdog, the
//! filter probe).
//!
//! Looked up once, at start-up: when the file is replaced while a run goes on (a rebuild, an
//! upgrade), Linux names the running one `PATH (deleted)`, and a launch that read it then
//! handed a proxy a command that no longer exists (every replay server of a later launch
//! failed to start). The path read at start-up holds the replacing binary, which serves the
//! same subcommands.

use std::path::PathBuf;
use std::sync::OnceLock;

static OWN: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// evalgate's binary as it was named when the process started.
pub fn own_binary() -> std::io::Result<PathBuf> {
    OWN.get_or_init(|| {
        std::env::current_exe()
            .map(undeleted)
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(std::io::Error::other)
}

/// `path` without the ` (deleted)` Linux appends to a replaced executable, when a file stands
/// at the path without it.
fn undeleted(path: PathBuf) -> PathBuf {
    let s = path.to_string_lossy();
    match s.strip_suffix(" (deleted)") {
        Some(p) if std::path::Path::new(p).is_file() => PathBuf::from(p),
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_binary_is_named_by_its_path() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("evalgate");
        std::fs::write(&p, "x").unwrap();
        let deleted = PathBuf::from(format!("{} (deleted)", p.display()));
        assert_eq!(undeleted(deleted), p);
        // nothing there: the name is kept, and the error names it
        let gone = d.path().join("gone (deleted)");
        assert_eq!(undeleted(gone.clone()), gone);
        assert!(own_binary().unwrap().is_file());
    }
}
