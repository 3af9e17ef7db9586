//! The runner's files and workflow commands: step outputs, the job summary, `::error::` lines.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Escapes a workflow-command message (`%`, CR, LF).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// `::error title=…::message` lines; about 10 are shown per step, so the rest become one notice.
pub fn error_lines(errors: &[(String, String)]) -> Vec<String> {
    let mut out: Vec<String> = errors
        .iter()
        .take(10)
        .map(|(t, m)| {
            // a property also escapes `:` and `,`
            let t = escape_data(t).replace(':', "%3A").replace(',', "%2C");
            format!("::error title={t}::{}", escape_data(m))
        })
        .collect();
    if errors.len() > 10 {
        let rest: Vec<&str> = errors[10..].iter().map(|(t, _)| t.as_str()).collect();
        let more = format!("{} more failed check(s): {}", rest.len(), rest.join(", "));
        out.push(format!("::notice title=evalgate::{}", escape_data(&more)));
    }
    out
}

/// A random heredoc delimiter for multi-line outputs.
fn delimiter(value: &str) -> String {
    (0u64..)
        .map(|n| format!("EVALGATE_EOF_{}_{n}", std::process::id()))
        .find(|d| !value.contains(d.as_str()))
        .unwrap_or_default()
}

/// Appends `name=value` outputs to `$GITHUB_OUTPUT` (heredoc form for multi-line values).
pub fn write_outputs(path: &Path, outputs: &[(&str, String)]) -> std::io::Result<()> {
    let mut f = File::options().create(true).append(true).open(path)?;
    for (k, v) in outputs {
        if v.contains('\n') || v.contains('\r') {
            let d = delimiter(v);
            writeln!(f, "{k}<<{d}\n{v}\n{d}")?;
        } else {
            writeln!(f, "{k}={v}")?;
        }
    }
    Ok(())
}

/// Appends to `$GITHUB_STEP_SUMMARY`.
pub fn append_summary(path: &Path, md: &str) -> std::io::Result<()> {
    let mut f = File::options().create(true).append(true).open(path)?;
    f.write_all(md.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_are_escaped_and_capped() {
        let errs: Vec<(String, String)> = (0..12)
            .map(|i| (format!("retrieval: m{i}"), "50%\nworse".to_string()))
            .collect();
        let lines = error_lines(&errs);
        assert_eq!(lines.len(), 11);
        assert_eq!(lines[0], "::error title=retrieval%3A m0::50%25%0Aworse");
        assert!(lines[10].starts_with("::notice") && lines[10].contains("2 more failed check(s)"));
    }

    #[test]
    fn multi_line_outputs_use_a_heredoc() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out");
        write_outputs(
            &p,
            &[("verdict", "pass".into()), ("regressions", "a\nb".into())],
        )
        .unwrap();
        let t = std::fs::read_to_string(&p).unwrap();
        assert!(
            t.starts_with("verdict=pass\nregressions<<EVALGATE_EOF_"),
            "{t}"
        );
        assert!(t.contains("\na\nb\nEVALGATE_EOF_"));
    }
}
