//! `evalgate publish` reads `report.json` from a report directory. In the fork workflow that
//! docs/github.md recommends, that file is an artifact uploaded by the untrusted pull-request
//! job. So here *every* free-form string of the report is arbitrary, not only the dataset ones:
//! `evalgate_version`, `command`, dataset `kind` / `sha256`, check `metric` / `subject`,
//! entry `outcome`... The Markdown that `publish` posts as the PR comment is rendered from it.
//!
//! Invariants: no panic; the Markdown structure is the one the same report gives with harmless
//! tokens in place of the strings (see `report_renderers`); no raw control, bidi or invisible
//! characters; and the `::error` workflow-command lines built from arbitrary titles and
//! messages stay one line each, with no unescaped `:` or `,` in the title property.

use super::{
    Tokens, assert_same_structure, md_well_formed, no_hidden, report, split_strings, template,
    try_report,
};
use evalgate::pipeline::publish::runner::error_lines;
use evalgate::pipeline::report::markdown;
use evalgate::pipeline::report::model::Report;
use evalgate::pipeline::score::metrics::{DETECTION_METRICS, RETRIEVAL_METRICS};
use serde_json::Value;
use std::sync::OnceLock;

/// The report template with every string value that can hold any text (those that are not
/// enum names) replaced by its own placeholder.
fn hostile_template() -> &'static Value {
    static T: OnceLock<Value> = OnceLock::new();
    T.get_or_init(|| {
        let base = template().clone();
        let mut out = base.clone();
        let mut paths = Vec::new();
        leaves(&base, &mut Vec::new(), &mut paths);
        let mut k = 0;
        for p in paths {
            let mut probe = out.clone();
            *pointer_mut(&mut probe, &p) = Value::String("z z".into());
            if serde_json::from_value::<Report>(probe).is_ok() {
                *pointer_mut(&mut out, &p) = Value::String(format!("%F{k}%"));
                k += 1;
            }
        }
        out
    })
}

enum Step {
    Key(String),
    Index(usize),
}

fn leaves(v: &Value, at: &mut Vec<(bool, String)>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::String(_) => out.push(
            at.iter()
                .map(|(is_key, s)| {
                    if *is_key {
                        Step::Key(s.clone())
                    } else {
                        Step::Index(s.parse().unwrap())
                    }
                })
                .collect(),
        ),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push((false, i.to_string()));
                leaves(x, at, out);
                at.pop();
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                at.push((true, k.clone()));
                leaves(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn pointer_mut<'a>(mut v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    for s in path {
        v = match s {
            Step::Key(k) => v.get_mut(k.as_str()).expect("key"),
            Step::Index(i) => v.get_mut(*i).expect("index"),
        };
    }
    v
}

/// Strings the Markdown renderer compares with (kept as they are in the harmless report, so
/// both take the same branches).
fn keep() -> &'static [&'static str] {
    static K: OnceLock<Vec<&'static str>> = OnceLock::new();
    K.get_or_init(|| {
        let mut k = vec!["retrieval"];
        k.extend(
            RETRIEVAL_METRICS
                .iter()
                .chain(DETECTION_METRICS.iter())
                .map(|m| m.key()),
        );
        // spec-065's category names are printed as they are (open ones are neutralised)
        k.extend(
            evalgate::pipeline::dataset::Category::ALL
                .iter()
                .map(|c| c.as_str()),
        );
        k
    })
}

/// One fuzz input (the body of the `published_report` fuzz target; the seed replay test calls it too).
pub fn run(data: &[u8]) {
    let strings = split_strings(data);
    let tokens = Tokens::new(&strings, keep());
    let slot = |n: usize| &strings[n % strings.len()];
    // a report.json `publish` refuses (an empty category name, say) publishes nothing
    let Ok(fuzzed) = try_report(hostile_template(), |n| slot(n).clone()) else {
        return;
    };
    let plain = report(hostile_template(), |n| tokens.token(slot(n)));

    let m = markdown::render(&fuzzed);
    let m_plain = markdown::render(&plain);
    assert_same_structure("published report.md", &m, &m_plain);
    no_hidden("published report.md", &m);
    md_well_formed("published report.md", &m);

    // ::error workflow commands from arbitrary titles and messages
    let pairs: Vec<(String, String)> = strings
        .chunks(2)
        .map(|c| (c[0].clone(), c.get(1).cloned().unwrap_or_default()))
        .collect();
    for l in error_lines(&pairs) {
        assert!(
            !l.contains('\n') && !l.contains('\r'),
            "workflow command spans lines: {l:?}"
        );
        let rest = l
            .strip_prefix("::error title=")
            .or_else(|| l.strip_prefix("::notice title="))
            .unwrap_or_else(|| panic!("not a workflow command: {l:?}"));
        let (title, _) = rest.split_once("::").expect("command has a message");
        assert!(
            !title.contains(':') && !title.contains(','),
            "unescaped title {title:?}"
        );
    }
}
