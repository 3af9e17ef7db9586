//! Arbitrary bytes as a tool corpus, golden set or security corpus, through the path
//! `evalgate validate` takes: the bytes are written to a file and loaded with
//! `Datasets::load` / `Datasets::load_corpus` (read → UTF-8 check → JSON → per-item decode →
//! validation rules).
//!
//! Input layout: the first byte picks the mode, the rest is file content.
//!   mode 0: the bytes are a corpus (`Datasets::load_corpus`)
//!   mode 1: the bytes are a golden set, validated against a small fixed valid corpus
//!   mode 2: the bytes are a security corpus
//!   mode 3: corpus, golden set and security corpus separated by 0xFF bytes (never in UTF-8)
//! (mode modulo 4), with the strict profile (`--profile strict`) when bit 2 (value 4) is set.
//!
//! Invariants: no panic; every violation (error or warning) names one of the files given, a
//! well-formed JSON path (`$...`) and a line:column inside that file; `Display` prints them as
//! `file:line:col: severity[rule] at $path: message`; and for a file that parsed as JSON, the
//! line:column points at the start of the value the path names (or of its nearest existing
//! ancestor when the path names a missing field).

use evalgate::pipeline::dataset::{
    DatasetErrors, DatasetPaths, Datasets, Need, Profile, Severity, Violation,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A valid corpus the golden sets of mode 1 are checked against (ids used by the seeds).
const FIXED_CORPUS: &str = include_str!("../fixtures/corpus_small.json");

struct Files {
    corpus: PathBuf,
    golden: PathBuf,
    security: PathBuf,
    fixed_corpus: PathBuf,
}

/// Removes this process's scratch directory (the seed replay calls it when done).
pub fn remove_scratch() {
    if let Some(dir) = files().corpus.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn files() -> &'static Files {
    static F: OnceLock<Files> = OnceLock::new();
    F.get_or_init(|| {
        // EVALGATE_FUZZ_TMP (scripts/fuzz.sh points it at a tmpfs when there is one), else the
        // system temp directory
        let base = std::env::var_os("EVALGATE_FUZZ_TMP")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("evalgate-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let fixed_corpus = dir.join("fixed-corpus.json");
        std::fs::write(&fixed_corpus, FIXED_CORPUS).expect("write fixed corpus");
        Files {
            corpus: dir.join("corpus.json"),
            golden: dir.join("golden.json"),
            security: dir.join("security.json"),
            fixed_corpus,
        }
    })
}

/// One fuzz input (the body of the `dataset_loaders` fuzz target; the seed replay test calls it too).
pub fn run(data: &[u8]) {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let f = files();
    // file name (as evalgate prints it) → content, for checking the reported locations
    let mut given: Vec<(String, Vec<u8>)> = Vec::new();
    let mut write = |p: &Path, bytes: &[u8]| {
        std::fs::write(p, bytes).expect("write fuzz input");
        given.push((p.display().to_string(), bytes.to_vec()));
    };
    // bit 2 of the mode byte: the strict profile (authoring rules as errors)
    let profile = if mode & 4 == 0 {
        Profile::Lenient
    } else {
        Profile::Strict
    };
    let result: Result<Vec<Violation>, DatasetErrors> = match mode % 4 {
        0 => {
            write(&f.corpus, body);
            Datasets::load_corpus(&Some(f.corpus.clone())).map(|_| Vec::new())
        }
        1 => {
            write(&f.golden, body);
            given.push((
                f.fixed_corpus.display().to_string(),
                FIXED_CORPUS.as_bytes().to_vec(),
            ));
            let paths = DatasetPaths {
                corpus: Some(f.fixed_corpus.clone()),
                golden: Some(f.golden.clone()),
                security: None,
            };
            let need = Need {
                retrieval: true,
                security: false,
            };
            Datasets::load(&paths, need, profile).map(|d| d.warnings)
        }
        2 => {
            write(&f.security, body);
            let paths = DatasetPaths {
                corpus: None,
                golden: None,
                security: Some(f.security.clone()),
            };
            let need = Need {
                retrieval: false,
                security: true,
            };
            Datasets::load(&paths, need, profile).map(|d| d.warnings)
        }
        _ => {
            let mut parts = body.splitn(3, |&b| b == 0xFF);
            write(&f.corpus, parts.next().unwrap_or_default());
            write(&f.golden, parts.next().unwrap_or_default());
            write(&f.security, parts.next().unwrap_or_default());
            let paths = DatasetPaths::in_dir(f.corpus.parent().expect("dir"));
            let need = Need {
                retrieval: true,
                security: true,
            };
            Datasets::load(&paths, need, profile).map(|d| d.warnings)
        }
    };
    let violations = match result {
        Ok(warnings) => {
            for w in &warnings {
                assert_eq!(
                    w.severity,
                    Severity::Warning,
                    "an error among the warnings: {w}"
                );
            }
            warnings
        }
        Err(errs) => {
            assert!(!errs.0.is_empty(), "a failed load reports no error");
            let shown = errs.to_string();
            assert!(
                shown.starts_with(&format!("{} dataset error(s):", errs.0.len())),
                "bad header: {shown}"
            );
            for v in &errs.0 {
                assert_eq!(
                    v.severity,
                    Severity::Error,
                    "a warning among the errors: {v}"
                );
            }
            errs.0
        }
    };
    for v in &violations {
        check_violation(v, &given);
    }
}

fn check_violation(v: &Violation, given: &[(String, Vec<u8>)]) {
    let Some((_, bytes)) = given.iter().find(|(name, _)| *name == v.file) else {
        panic!("violation names a file that was not given: {v}");
    };
    assert!(
        !v.rule.is_empty() && !v.message.is_empty(),
        "empty rule or message: {v:?}"
    );
    assert!(v.line >= 1 && v.column >= 1, "no location: {v:?}");
    let shown = v.to_string();
    let prefix = format!("{}:{}:{}: ", v.file, v.line, v.column);
    assert!(
        shown.starts_with(&prefix),
        "{shown:?} does not start with {prefix:?}"
    );
    assert!(
        shown.contains(&format!(" at {}: ", v.path)),
        "path missing from {shown:?}"
    );
    let segs =
        parse_path(&v.path).unwrap_or_else(|| panic!("malformed JSON path {:?} in {v}", v.path));

    // the location is inside the file (serde_json counts syntax-error columns in bytes)
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(
        v.line <= lines.len().max(1),
        "line {} past the end of a {}-line file: {v}",
        v.line,
        lines.len()
    );
    let line = lines.get(v.line - 1).copied().unwrap_or("");
    assert!(
        v.column <= line.len() + 1,
        "column {} past the end of line {} ({} bytes): {v}",
        v.column,
        v.line,
        line.len()
    );

    // for a parsed file, line:column is where the named value (or its nearest existing
    // ancestor) starts
    let Ok(text) = std::str::from_utf8(bytes) else {
        assert_eq!(v.rule, "file.not-utf8", "{v}");
        return;
    };
    let Ok(doc) = serde_json::from_str::<Value>(text) else {
        assert_eq!(v.rule, "json.syntax", "{v}");
        return;
    };
    let mut target = &doc;
    for s in &segs {
        let next = match s {
            Seg::Key(k) => target.as_object().and_then(|o| o.get(k)),
            Seg::Index(i) => target.as_array().and_then(|a| a.get(*i)),
        };
        match next {
            Some(n) => target = n,
            None => break,
        }
    }
    let offset = byte_offset(text, v.line, v.column).unwrap_or_else(|| {
        panic!(
            "line:column {}:{} is not in the file: {v}",
            v.line, v.column
        )
    });
    let at = serde_json::Deserializer::from_str(&text[offset..])
        .into_iter::<Value>()
        .next();
    match at {
        Some(Ok(found)) => assert!(
            found == *target,
            "{v}\npoints at {}\nbut {} (nearest existing part of the path) is {}",
            clip(&found.to_string()),
            v.path,
            clip(&target.to_string())
        ),
        other => panic!("{v}\nline:column does not start a JSON value: {other:?}"),
    }
}

fn clip(s: &str) -> String {
    s.chars().take(300).collect()
}

/// Byte offset of a 1-based line and 1-based character column.
fn byte_offset(text: &str, line: usize, column: usize) -> Option<usize> {
    let mut start = 0;
    for _ in 1..line {
        start += text[start..].find('\n')? + 1;
    }
    let rest = &text[start..];
    let end = rest.find('\n').unwrap_or(rest.len());
    let mut chars = rest[..end].char_indices().map(|(i, _)| i).chain([end]);
    Some(start + chars.nth(column - 1)?)
}

enum Seg {
    Key(String),
    Index(usize),
}

/// Parses `$.a[3]["odd key"]` as evalgate prints JSON paths.
fn parse_path(p: &str) -> Option<Vec<Seg>> {
    let mut rest = p.strip_prefix('$')?;
    let mut segs = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let n = r
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(r.len());
            if n == 0 {
                return None;
            }
            segs.push(Seg::Key(r[..n].to_string()));
            rest = &r[n..];
        } else if let Some(r) = rest.strip_prefix("[\"") {
            let mut de = serde_json::Deserializer::from_str(&rest[1..]).into_iter::<String>();
            let key = de.next()?.ok()?;
            let used = de.byte_offset();
            segs.push(Seg::Key(key));
            rest = r[used - 1..].strip_prefix(']')?;
        } else if let Some(r) = rest.strip_prefix('[') {
            let n = r.find(']')?;
            segs.push(Seg::Index(r[..n].parse().ok()?));
            rest = &r[n + 1..];
        } else {
            return None;
        }
    }
    Some(segs)
}
