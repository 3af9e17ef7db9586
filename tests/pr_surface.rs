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

    // the same with the shipped v1 baseline in baselines/default.json: the headline names the
    // datasets on both sides and the command that writes the right baseline
    std::fs::create_dir_all(dir.join("baselines")).unwrap();
    std::fs::copy(
        root().join("baselines/default.json"),
        dir.join("baselines/default.json"),
    )
    .unwrap();
    let o = under_act(
        dir,
        &[
            "run",
            "-q",
            "--datasets",
            v0.to_str().unwrap(),
            "--out",
            "bump2",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (conclusion, title) = check_run(&dir.join("bump2"));
    assert_eq!(conclusion, "neutral", "{title}");
    let summary = read_json(&dir.join("bump2/report.json"))["gate"]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        summary.starts_with("no baseline for these datasets (baselines/default.json is for corpus_v1, golden_v1, security_v1; this run uses corpus_v0, golden_v0, security_v0)")
            && summary.ends_with(&format!(
                "`evalgate baseline update --datasets {}` writes one",
                v0.display()
            )),
        "{summary}"
    );
    // and that command is one `baseline update` accepts as it stands
    let cmd = summary.split('`').nth(1).unwrap();
    let words: Vec<&str> = cmd.split(' ').skip(1).chain(["--dry-run"]).collect();
    let o = clean_command(dir, &words).output().unwrap();
    assert_eq!(code(&o), 0, "{cmd}: {}", stderr(&o));
    std::fs::remove_dir_all(dir.join("baselines")).unwrap();

    // a new detector next to a baseline that does not know it: held to the default limits,
    // which a scanner that flags nothing breaks (recall 0 < the default floor 0.10)
    std::fs::write(dir.join("evalgate.toml"), NEW_DETECTOR).unwrap();
    let o = gated_run(dir, "newdet", &["--detectors", "rules,drift,scanner"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let report = read_json(&dir.join("newdet/report.json"));
    assert_eq!(report["gate"]["verdict"], "fail");
    assert_eq!(
        report["gate"]["summary"],
        "gate failed: newscan Recall 0.0000 is below its floor 0.100"
    );
    let floor = report["gate"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["subject"] == "detector:newscan" && c["kind"] == "floor")
        .expect("a default floor check");
    assert!(
        floor["message"]
            .as_str()
            .unwrap()
            .contains("[gate] new_detector_recall_floor"),
        "{floor}"
    );
    assert_eq!(check_run(&dir.join("newdet")).0, "failure");

    // with the default limits switched off it is reported, not gated: a neutral check
    std::fs::write(
        dir.join("evalgate.toml"),
        format!(
            "{NEW_DETECTOR}[gate]\nnew_detector_fpr_ceiling = false\nnew_detector_recall_floor = false\n"
        ),
    )
    .unwrap();
    let o = gated_run(dir, "ungated", &["--detectors", "rules,drift,scanner"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let report = read_json(&dir.join("ungated/report.json"));
    assert_eq!(report["gate"]["verdict"], "pass");
    assert_eq!(
        report["gate"]["ungated"],
        serde_json::json!(["detector:newscan"])
    );
    let summary = report["gate"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("not gated: detector:newscan")
            && summary.contains("`evalgate baseline update --datasets ")
            && summary.contains(" --detectors rules,drift,scanner` writes a baseline that does"),
        "{summary}"
    );
    let (conclusion, title) = check_run(&dir.join("ungated"));
    assert_eq!(conclusion, "neutral", "{title}");
    let md = std::fs::read_to_string(dir.join("ungated/report.md")).unwrap();
    assert!(md.contains("not gated: detector:newscan"), "{md}");

    // a limit that means nothing is bad input
    std::fs::write(
        dir.join("evalgate.toml"),
        "[gate]\nnew_detector_fpr_ceiling = 1.5\n",
    )
    .unwrap();
    let o = gated_run(dir, "bad", &[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("[gate] new_detector_fpr_ceiling: expected a number between 0 and 1, or false for no limit, found 1.5"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(dir.join("evalgate.toml")).unwrap();
}

/// Issue 18, item 3: one reviewer-first layout. A run that breaks a retrieval tolerance, a
/// detector ceiling and a detector tolerance (over 3 runs): every renderer opens with the
/// headline and the failed checks in words, shows baseline, Δ, limit and gate for the
/// detectors' numbers as for retrieval's, counts as per-run means, one symbol set, and no
/// "±0.0000" noise.
#[test]
fn every_renderer_leads_with_the_failed_checks_and_shows_detector_deltas() {
    let d = tempdir();
    let dir = d.path();
    let mut b = read_json(&root().join("baselines/v0.json"));
    b["retrieval"]["metrics"]["recall_at_5"]["value"] = 0.95.into();
    let rules = &mut b["security"]["detectors"]["rules"];
    rules["fpr_ceiling"] = 0.0.into();
    rules["metrics"]["recall"]["gated"] = true.into();
    rules["metrics"]["recall"]["value"] = 0.99.into();
    let bad = write_json(dir, "bad.json", &b);
    let v0 = root().join("datasets/v0");
    let o = clean_command(
        dir,
        &[
            "run",
            "--datasets",
            v0.to_str().unwrap(),
            "--baseline",
            bad.to_str().unwrap(),
            "--runs",
            "3",
            "--out",
            "out",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let term = stdout(&o);
    let r = read_json(&dir.join("out/report.json"));
    let md = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("out/report.html")).unwrap();

    // the numbers the renderers must show, from report.json
    let check = |subject: &str, metric: &str, kind: &str| {
        r["gate"]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["subject"] == subject && c["metric"] == metric && c["kind"] == kind)
            .unwrap_or_else(|| panic!("{subject} {metric} {kind}"))
            .clone()
    };
    let recall = check("detector:rules", "recall", "tolerance");
    let cur = recall["current"].as_f64().unwrap();
    let delta = format!("\u{2212}{:.4}", 0.99 - cur);
    let r5 = check("retrieval", "recall_at_5", "tolerance");
    let r5_cur = r5["current"].as_f64().unwrap();
    let sentence = format!(
        "Recall@5 fell 0.9500 → {r5_cur:.4} (\u{2212}{:.3}; tolerance 0.020)",
        0.95 - r5_cur
    );
    let fpr = check("detector:rules", "fpr", "ceiling")["current"]
        .as_f64()
        .unwrap();
    let ceiling = format!("rules FPR {fpr:.4} is above its ceiling 0.000");
    assert!(
        r["gate"]["summary"].as_str().unwrap().starts_with(&format!(
            "gate failed: {sentence}; {ceiling}; rules Recall fell 0.9900"
        )),
        "{}",
        r["gate"]["summary"]
    );
    // per-run means of the confusion counts (summed over 3 runs in report.json)
    let counts = &r["security"]["detectors"][0]["counts"];
    assert_eq!(r["security"]["detectors"][0]["detector"], "rules");
    let per_run = |k: &str| {
        let n = counts[k].as_u64().unwrap();
        assert_eq!(
            n % 3,
            0,
            "a deterministic detector: the same counts every run"
        );
        (n / 3).to_string()
    };
    let (tp, fp, tn, fn_) = (per_run("tp"), per_run("fp"), per_run("tn"), per_run("fn"));

    for (name, out, sentence_shown) in [
        ("terminal", &term, sentence.clone()),
        // Markdown keeps GitHub from reading `@5` as a mention and escapes parentheses
        (
            "md",
            &md,
            sentence
                .replace('@', "@&#8203;")
                .replace('(', "\\(")
                .replace(')', "\\)"),
        ),
        ("html", &html, sentence.clone()),
    ] {
        // headline and failed checks come before any table
        let first_table = ["Tool discovery"]
            .iter()
            .filter_map(|t| out.find(t))
            .min()
            .unwrap_or_else(|| panic!("{name}: no discovery section"));
        for s in [&sentence_shown, &ceiling] {
            let at = out
                .find(s.as_str())
                .unwrap_or_else(|| panic!("{name}: {s:?} missing:\n{out}"));
            assert!(at < first_table, "{name}: {s:?} comes after the tables");
        }
        assert!(
            out.contains("gate failed: 3 checks"),
            "{name}: headline:\n{out}"
        );
        // the detector's numbers against the baseline: Δ, limit and the one symbol set
        assert!(out.contains(&delta), "{name}: detector Δ {delta} missing");
        assert!(out.contains("≥ 0.9400"), "{name}: the tolerance limit");
        assert!(out.contains("≤ 0.000 ceiling"), "{name}: the ceiling");
        for mark in ["✗ FAIL", "✓ pass", "· not gated"] {
            assert!(out.contains(mark), "{name}: {mark} missing");
        }
        assert!(
            !out.contains("±0.0000") && !out.contains("± 0.0000"),
            "{name}: noise"
        );
        // confusion counts per run, not summed
        let shown = [tp.as_str(), fp.as_str(), tn.as_str(), fn_.as_str()].join(" / ");
        assert!(
            out.contains(&shown),
            "{name}: per-run counts {shown} missing"
        );
    }
    // terminal: the Gate column holds only the one symbol set
    assert!(
        !term.contains("┆ -    │") && !term.contains("┆ pass │"),
        "{term}"
    );
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

/// Issue 19, item 7: the test helpers never hand evalgate the caller's GitHub environment.
/// Under GitHub Actions a test's run would otherwise publish into the real job summary and
/// outputs (and try the real pull request). Here this test process plays the runner.
#[test]
fn test_helpers_never_publish_into_the_callers_github_job() {
    let d = tempdir();
    let dir = d.path();
    let summary = dir.join("job-summary.md");
    let outputs = dir.join("job-outputs.txt");
    std::fs::write(&summary, "").unwrap();
    std::fs::write(&outputs, "").unwrap();
    // SAFETY: nextest runs every test in a process of its own; nothing else reads the
    // environment concurrently here.
    unsafe {
        std::env::set_var("GITHUB_ACTIONS", "true");
        std::env::set_var("GITHUB_STEP_SUMMARY", &summary);
        std::env::set_var("GITHUB_OUTPUT", &outputs);
        std::env::set_var("EVALGATE_RUNS", "not a number");
    }
    for o in [
        evalgate(dir, &["run", "-q", "--out", "a"]),
        clean_command(dir, &["run", "-q", "--out", "b"])
            .output()
            .unwrap(),
    ] {
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), "");
    assert_eq!(std::fs::read_to_string(&outputs).unwrap(), "");
    // without the scrub the very same run publishes: the caller's environment is live
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_evalgate"));
    c.args(["run", "-q", "--out", "c"])
        .current_dir(dir)
        .env_remove("EVALGATE_RUNS");
    let o = c.output().unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(&summary)
            .unwrap()
            .contains("evalgate"),
        "the unscrubbed run did not publish, so this test proves nothing"
    );
}
