//! Diagnostics with `tracing`: `-v` (evalgate's decisions), `-vv` (every exchange with the
//! system under test), or `EVALGATE_LOG` with tracing's filter syntax
//! (`EVALGATE_LOG=evalgate=trace,rmcp=debug`). Off by default.
//!
//! Log lines quote what systems under test answer, so they leave like every other message:
//! through [`crate::err!`] (no line can start a workflow command), credentials masked, control
//! characters shown visibly.

use crate::infra::{secrets, text::sanitize::visible_lines};
use tracing_subscriber::EnvFilter;

/// The variable that sets the filter; it wins over `-v`.
pub const ENV: &str = "EVALGATE_LOG";

/// Installs the subscriber for this process, at `verbose` (the count of `-v`) or [`ENV`].
pub fn init(verbose: u8) {
    let filter = match std::env::var(ENV) {
        Ok(f) => EnvFilter::try_new(&f).unwrap_or_else(|e| {
            crate::errln!("warning: {ENV}={f:?} is not a log filter ({e}); logging is off");
            EnvFilter::new("off")
        }),
        Err(_) => EnvFilter::new(match verbose {
            0 => "off",
            1 => "evalgate=debug",
            _ => "evalgate=trace",
        }),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(|| Line(Vec::new()))
        .try_init();
}

/// One formatted event, written through [`crate::err!`] when it is complete.
struct Line(Vec<u8>);

impl std::io::Write for Line {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        if !text.is_empty() {
            crate::err!("{}", visible_lines(&secrets::scrub(&text)));
        }
    }
}
