//! What the command line was given, checked against the settings as resolved, and said back:
//! a flag that cannot apply is refused; the `baseline update` command for this invocation.

use super::{BadInput, Part};
use crate::cli::EvalArgs;
use crate::config::Settings;

/// Refuses a flag given on the command line that cannot apply to the settings as resolved
/// (`--url` when the system under test is embedded, say). A variable or an evalgate.toml value
/// that does not apply is ignored: a job's environment serves several commands.
pub fn refuse_inapplicable(a: &EvalArgs, s: &Settings, part: Part) -> Result<(), BadInput> {
    use crate::pipeline::sut::kind::{DetectorKind, SutKind};
    // the kinds, as the specs were resolved
    let kind = s.sut.kind();
    let detectors = &s.detectors;
    let sut = kind.as_str();
    let given = |flags: &[&'static str]| flags.iter().copied().find(|f| a.given(f));
    if part != Part::Security
        && !matches!(kind, SutKind::Mcp | SutKind::Rest)
        && let Some(f) = given(&["--url", "--header"])
    {
        return Err(BadInput(format!(
            "{f} is for a system already running (--sut mcp or --sut rest); the system under test here is `{sut}`"
        )));
    }
    if part == Part::Security {
        if a.given("--sut") && kind.def().launched.is_none() {
            return Err(BadInput(format!(
                "security --sut chooses the proxy launched for the proxy-scan and rug-pull-live detectors: reference, mcpproxy or launch, not `{sut}`"
            )));
        }
        if !detectors.iter().any(|d| d.def().live)
            && let Some(f) = given(&["--sut", "--mcpproxy-bin"])
        {
            return Err(BadInput(format!(
                "{f} chooses the proxy the proxy-scan and rug-pull-live detectors play against, and neither is among the detectors (add --detectors proxy-scan or rug-pull-live)"
            )));
        }
    }
    if a.given("--mcpproxy-bin") && kind != SutKind::Mcpproxy {
        return Err(BadInput(format!(
            "--mcpproxy-bin launches mcpproxy, but the system under test here is `{sut}` (leave --sut out, or --sut mcpproxy)"
        )));
    }
    let recorded = (part != Part::Security && kind == SutKind::Recorded)
        || (part != Part::Retrieval && detectors.contains(&DetectorKind::Recorded));
    if a.given("--recorded") && !recorded {
        return Err(BadInput(match part {
            Part::Retrieval => format!(
                "--recorded is replayed by --sut recorded, and the system under test here is `{sut}`"
            ),
            Part::Security => "--recorded is replayed by --detectors recorded, and it is not among the detectors".into(),
            Part::Both => "--recorded is replayed by --sut recorded or --detectors recorded, and neither is used here".into(),
        }));
    }
    Ok(())
}

/// `evalgate baseline update` with this invocation's options: what writes the baseline this run
/// lacks. Options `baseline update` has no use for (reports, terminal, publishing) are left out,
/// and so is every value that could hold a credential (headers, the GitHub token).
pub fn update_command(argv: &[String]) -> String {
    // options that take a value, and those without one, that are left out
    const DROP_VALUE: [&str; 14] = [
        "--out",
        "--observations",
        "--shard",
        "--robustness",
        "--color",
        "--publish",
        "--comment",
        "--check-run",
        "--fail-on",
        "--comment-key",
        "--artifact-name",
        "--github-token",
        "--act-post",
        "--github-timeout",
    ];
    const DROP_FLAG: [&str; 3] = ["-q", "--quiet", "--no-baseline"];
    let mut out = vec!["evalgate".to_string(), "baseline".into(), "update".into()];
    let mut args = argv.iter().skip(1);
    // the subcommand itself (run, retrieval, security)
    let _ = args
        .by_ref()
        .find(|a| matches!(a.as_str(), "run" | "retrieval" | "security"));
    while let Some(a) = args.next() {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        let dropped_value = DROP_VALUE.contains(&name) || name == "--header";
        if dropped_value && !a.contains('=') {
            args.next();
        }
        if !dropped_value && !DROP_FLAG.contains(&name) {
            out.push(shell_word(a));
        }
    }
    out.join(" ")
}

/// A word as a POSIX shell reads it back: bare when it is plain, else single-quoted.
pub(super) fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+%".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn the_update_command_keeps_what_measures_and_drops_reports_publishing_and_credentials() {
        assert_eq!(
            update_command(&argv(
                "/usr/bin/evalgate run -q --datasets datasets/v0 --out=x --shard 2/4 --observations gzip --runs 3 --header Authorization:secret --github-token ghp_x --comment off --sut reference"
            )),
            "evalgate baseline update --datasets datasets/v0 --runs 3 --sut reference"
        );
        assert_eq!(
            update_command(&argv(
                "evalgate security --detectors rules,scanner --no-baseline"
            )),
            "evalgate baseline update --detectors rules,scanner"
        );
        // a word the shell would split or expand is quoted
        assert_eq!(
            update_command(&argv("evalgate run --config a$b")),
            "evalgate baseline update --config 'a$b'"
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(
            update_command(&argv("evalgate")),
            "evalgate baseline update"
        );
    }
}
