//! The pull-request surface (issue 18): what a workflow author and a reviewer see must never
//! be a green check while the gate is off.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// `evalgate` as under `act` on a pull request's head commit, with none of the caller's GitHub
/// or evalgate settings; the check run is written to `<out>/github-check-run.json`.
fn under_act(cwd: &Path, args: &[&str]) -> Output {
    let mut c = clean_command(cwd, args);
    c.env("ACT", "true")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "octo/repo")
        .env("GITHUB_SHA", "2222222222222222222222222222222222222222")
        .env("GITHUB_API_URL", "http://127.0.0.1:1")
        .env("GITHUB_TOKEN", "ghp_unused_under_act")
        .env("GITHUB_STEP_SUMMARY", cwd.join("summary.md"));
    c.output().expect("evalgate runs")
}

/// [`under_act`] for `run -q` on the starter datasets against their own baseline (a copy in
/// `cwd`), writing into `out`, with `extra` arguments.
fn gated_run(cwd: &Path, out: &str, extra: &[&str]) -> Output {
    let v0 = root().join("datasets/v0");
    let baseline = baseline_copy(cwd);
    let base = [
        "run",
        "-q",
        "--datasets",
        v0.to_str().unwrap(),
        "--baseline",
        baseline.to_str().unwrap(),
        "--out",
        out,
    ];
    under_act(cwd, &[&base[..], extra].concat())
}

/// The check run's conclusion and title from an act dry run's payload.
fn check_run(out: &Path) -> (String, String) {
    let c: Value = read_json(&out.join("github-check-run.json"));
    (
        c["complete"]["conclusion"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        c["complete"]["output"]["title"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// A scanner that flags nothing: a detector the baseline has never seen.
const NEW_DETECTOR: &str = "[[scanner]]\nname = \"newscan\"\ncommand = [\"sh\", \"-c\", \"echo []\", \"x\", \"{file}\"]\nfilter = \".[]\"\n";

/// Issue 18, item 2: the gate switching off is a neutral check with the reason in its title,
/// never a silent success: a run on datasets no baseline is for (a dataset bump), and a pass
/// that leaves a measured detector ungated. The same run fully gated is a success.
#[test]
fn a_gate_that_is_off_or_incomplete_is_a_neutral_check_never_a_silent_success() {
    let d = tempdir();
    let dir = d.path();
    // fully gated: the starter datasets against their own baseline
    let o = gated_run(dir, "gated", &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (conclusion, _) = check_run(&dir.join("gated"));
    assert_eq!(conclusion, "success");
    assert!(read_json(&dir.join("gated/report.json"))["gate"]["ungated"].is_null());

    // a dataset bump: the shipped v1 baseline is for other datasets, so nothing is gated
    let v0 = root().join("datasets/v0");
    let o = under_act(
        dir,
        &[
            "run",
            "-q",
            "--datasets",
            v0.to_str().unwrap(),
            "--out",
            "bump",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (conclusion, title) = check_run(&dir.join("bump"));
    assert_eq!(conclusion, "neutral", "{title}");
    assert!(title.contains("no baseline"), "{title}");

    // a new detector next to a baseline that does not know it
    std::fs::write(dir.join("evalgate.toml"), NEW_DETECTOR).unwrap();
    let o = gated_run(dir, "newdet", &["--detectors", "rules,drift,scanner"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let report = read_json(&dir.join("newdet/report.json"));
    assert_eq!(report["gate"]["verdict"], "pass");
    assert_eq!(
        report["gate"]["ungated"],
        serde_json::json!(["detector:newscan"])
    );
    let summary = report["gate"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("not gated: detector:newscan")
            && summary.contains("evalgate baseline update"),
        "{summary}"
    );
    let (conclusion, title) = check_run(&dir.join("newdet"));
    assert_eq!(conclusion, "neutral", "{title}");
    let md = std::fs::read_to_string(dir.join("newdet/report.md")).unwrap();
    assert!(md.contains("not gated: detector:newscan"), "{md}");
}

/// Issue 18, item 2: a baseline found by default gates retrieval only for the system it was
/// measured on. A run of another system (here a recorded run of "other-proxy") against the
/// embedded baseline is reported, not gated, says why and is a neutral check; the same
/// recording of the embedded system, or the baseline given explicitly, is gated.
#[test]
fn a_default_baseline_of_another_system_does_not_gate_retrieval() {
    let d = tempdir();
    let dir = d.path();
    // the embedded datasets and system: gated against the embedded baseline
    let o = under_act(dir, &["retrieval", "-q", "--out", "own"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let own = read_json(&dir.join("own/report.json"));
    assert_eq!(own["gate"]["verdict"], "pass");
    assert_eq!(check_run(&dir.join("own")).0, "success");

    let mut other = own.clone();
    other["retrieval"]["observations"]["system"] = "other-proxy".into();
    let p = write_json(dir, "other.json", &other);
    let recorded = [
        "retrieval",
        "-q",
        "--retriever",
        "recorded",
        "--recorded",
        p.to_str().unwrap(),
    ];

    let o = under_act(dir, &[&recorded[..], &["--out", "other"]].concat());
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    let r = read_json(&dir.join("other/report.json"));
    assert_eq!(r["gate"]["verdict"], "no_baseline", "{}", r["gate"]);
    assert!(
        r["gate"]["summary"]
            .as_str()
            .unwrap()
            .contains("nothing is gated"),
        "{}",
        r["gate"]
    );
    let warned = r["warnings"].as_array().unwrap().iter().any(|w| {
        let w = w.as_str().unwrap();
        w.contains("was measured on \"embedded\", this run measures \"other-proxy\"")
            && w.contains("evalgate baseline update")
    });
    assert!(warned, "{}", r["warnings"]);
    let (conclusion, title) = check_run(&dir.join("other"));
    assert_eq!(conclusion, "neutral", "{title}");

    // given explicitly, the same baseline gates it (comparing two systems on purpose)
    let embedded = dir.join("embedded-baseline.json");
    std::fs::copy(root().join("baselines/default.json"), &embedded).unwrap();
    let o = under_act(
        dir,
        &[
            &recorded[..],
            &[
                "--baseline",
                embedded.to_str().unwrap(),
                "--out",
                "explicit",
            ],
        ]
        .concat(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = read_json(&dir.join("explicit/report.json"));
    assert_eq!(r["gate"]["verdict"], "pass", "{}", r["gate"]);
    assert_eq!(check_run(&dir.join("explicit")).0, "success");
}

/// Issue 18, items 4 and 6: options that say "don't" are obeyed in every mode. Under act the
/// dry run writes only what would be posted (`--comment off` or a passing `on-failure`: no
/// comment file; `--check-run false`: no check-run file); `publish --publish never` posts and
/// writes nothing and still exits with the verdict's code.
#[test]
fn comment_off_check_run_false_and_publish_never_are_obeyed() {
    let d = tempdir();
    let dir = d.path();
    let o = gated_run(dir, "all", &["--comment", "always"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for f in [
        "github-comment.md",
        "github-summary.md",
        "github-check-run.json",
    ] {
        assert!(dir.join("all").join(f).is_file(), "{f}");
    }

    for (out, extra, absent) in [
        ("off", vec!["--comment", "off"], vec!["github-comment.md"]),
        (
            "onfail",
            vec!["--comment", "on-failure"],
            vec!["github-comment.md"],
        ),
        (
            "nocheck",
            vec!["--check-run", "false"],
            vec!["github-check-run.json"],
        ),
    ] {
        let o = gated_run(dir, out, &extra);
        assert_eq!(code(&o), 0, "{out}: {}", stderr(&o));
        for f in absent {
            assert!(!dir.join(out).join(f).exists(), "{out}: {f} was written");
        }
        assert!(dir.join(out).join("github-summary.md").is_file(), "{out}");
    }

    // publish --publish never: nothing posted or written, the verdict's exit code
    let o = gated_run(dir, "quiet", &["--publish", "never"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!dir.join("quiet/github-comment.md").exists());
    let o = under_act(
        dir,
        &[
            "publish",
            "--report-dir",
            "quiet",
            "--publish",
            "never",
            "--comment",
            "always",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--publish never: nothing is posted or written"),
        "{}",
        stderr(&o)
    );
    for f in [
        "github-comment.md",
        "github-summary.md",
        "github-check-run.json",
    ] {
        assert!(!dir.join("quiet").join(f).exists(), "{f} was written");
    }
}
