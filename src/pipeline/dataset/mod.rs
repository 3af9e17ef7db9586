//! Datasets: the frozen tool corpus, the retrieval golden set and the security corpus.
//! Files on disk or the copies compiled into the binary; decoded, then validated as a whole.

pub mod card;
pub mod jsonpath;
pub mod load;
pub mod mcp;
pub mod model;
pub mod overrides;
pub mod shard;
pub mod validate;

pub use load::{Loaded, Severity, Source, Violation};
pub use model::*;

use embedded::{CORPUS_FILE, GOLDEN_FILE, SECURITY_FILE};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The v1 datasets shipped inside the binary (see `datasets/README.md`): the zero-config default.
///
/// The binary holds them zstd-compressed (build.rs): 9.4 MB of JSON take 0.9 MB. Each file is
/// decompressed on first use, in milliseconds, and kept for the life of the process;
/// its fingerprint is that of the uncompressed file, computed at build time.
pub mod embedded {
    use std::sync::OnceLock;

    // CORPUS_SHA256, GOLDEN_SHA256, SECURITY_SHA256: the files' sha256, computed by build.rs;
    // CORPUS_LEN, GOLDEN_LEN, SECURITY_LEN: their sizes in bytes
    include!(concat!(env!("OUT_DIR"), "/embedded_sha256.rs"));

    /// One embedded file: its name in reports, its compressed bytes and its fingerprint.
    pub struct File {
        pub name: &'static str,
        pub sha256: &'static str,
        /// The compressed copy the binary holds.
        pub packed: &'static [u8],
        len: usize,
        text: OnceLock<String>,
    }

    impl File {
        /// The file's text, decompressed on the first call.
        pub fn text(&'static self) -> &'static str {
            self.text.get_or_init(|| {
                let bytes = zstd::bulk::decompress(self.packed, self.len)
                    .unwrap_or_else(|e| panic!("{}: the embedded copy is corrupt: {e}", self.name));
                assert_eq!(bytes.len(), self.len, "{}: size", self.name);
                // build.rs read the file as UTF-8
                String::from_utf8(bytes).unwrap_or_else(|e| panic!("{}: {e}", self.name))
            })
        }
    }

    /// The embedded `datasets/v1/<file>.json`, named `embedded:datasets/v1/<file>.json` in reports.
    macro_rules! file {
        ($file:literal, $sha:expr, $len:expr) => {
            File {
                name: concat!("embedded:datasets/v1/", $file, ".json"),
                sha256: $sha,
                packed: include_bytes!(concat!(env!("OUT_DIR"), "/", $file, ".json.zst")),
                len: $len,
                text: OnceLock::new(),
            }
        };
    }

    pub static CORPUS_FILE: File = file!("corpus", CORPUS_SHA256, CORPUS_LEN);
    pub static GOLDEN_FILE: File = file!("golden", GOLDEN_SHA256, GOLDEN_LEN);
    pub static SECURITY_FILE: File = file!("security", SECURITY_SHA256, SECURITY_LEN);
}

/// Which dataset files to use; `None` means the embedded default.
#[derive(Debug, Clone, Default)]
pub struct DatasetPaths {
    pub corpus: Option<PathBuf>,
    pub golden: Option<PathBuf>,
    pub security: Option<PathBuf>,
}

/// File names inside a dataset directory such as `datasets/v0`.
pub const DIR_FILES: [&str; 3] = ["corpus.json", "golden.json", "security.json"];

/// mcpproxy's spec-065 names for the same files, `(prefix, suffix)` around a version number
/// (`corpus_v1.tools.json`, `retrieval_golden_v1.json`, `security_corpus_v1.json`); a refresh
/// is `_v2`, and the highest version present is used.
pub const SPEC065_FILES: [(&str, &str); 3] = [
    ("corpus_v", ".tools.json"),
    ("retrieval_golden_v", ".json"),
    ("security_corpus_v", ".json"),
];

/// The file of one kind in `dir`: our name, else the highest-versioned spec-065 name, else our
/// name (whose absence the loader reports, saying what was looked for).
fn file_in_dir(dir: &Path, kind: usize) -> PathBuf {
    let ours = dir.join(DIR_FILES[kind]);
    if ours.is_file() {
        return ours;
    }
    let (prefix, suffix) = SPEC065_FILES[kind];
    let best = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let v: u32 = name
                .strip_prefix(prefix)?
                .strip_suffix(suffix)?
                .parse()
                .ok()?;
            Some((v, e.path()))
        })
        .max_by_key(|(v, _)| *v);
    best.map_or(ours, |(_, p)| p)
}

/// What a dataset directory is searched for, for messages.
pub fn dir_names_hint() -> String {
    let spec = SPEC065_FILES.map(|(p, s)| format!("{p}N{s}"));
    format!(
        "a dataset directory holds {} (or mcpproxy's spec-065 names {})",
        DIR_FILES.join(", "),
        spec.join(", ")
    )
}

impl DatasetPaths {
    /// The three files of a dataset directory.
    pub fn in_dir(dir: &Path) -> DatasetPaths {
        DatasetPaths {
            corpus: Some(file_in_dir(dir, 0)),
            golden: Some(file_in_dir(dir, 1)),
            security: Some(file_in_dir(dir, 2)),
        }
    }

    /// Layers settings: for each file, the first layer that names it wins.
    pub fn or(self, other: DatasetPaths) -> DatasetPaths {
        DatasetPaths {
            corpus: self.corpus.or(other.corpus),
            golden: self.golden.or(other.golden),
            security: self.security.or(other.security),
        }
    }

    /// Explicit files, then the files of `dir`.
    pub fn files_then_dir(files: DatasetPaths, dir: Option<&Path>) -> DatasetPaths {
        files.or(dir.map(DatasetPaths::in_dir).unwrap_or_default())
    }
}

/// Which datasets a command needs.
#[derive(Debug, Clone, Copy)]
pub struct Need {
    pub retrieval: bool,
    pub security: bool,
}

/// How strictly dataset files are held to evalgate's own authoring rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// Data from elsewhere: authoring rules (queries naming a tool, hard-negative coverage,
    /// licences, distractor bookkeeping...) are warnings with counts and examples; integrity
    /// rules (dangling labels, duplicate ids, no relevant label, undecodable JSON) are errors.
    #[default]
    Lenient,
    /// evalgate's own authoring rules as errors (the shipped `datasets/v*` are held to them).
    Strict,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Lenient => "lenient",
            Profile::Strict => "strict",
        }
    }
}

/// Rules about how a dataset was written rather than whether it holds together: errors under
/// [`Profile::Strict`], warnings under [`Profile::Lenient`].
pub const AUTHORING_RULES: [&str; 11] = [
    "security.open-category",
    "golden.names-tool",
    "golden.corpus-version",
    "golden.split",
    "golden.unaccounted-tool",
    "security.hard-negative-coverage",
    "security.resembles",
    "security.missing-license",
    "security.restricted-license",
    "security.missing-source",
    "corpus.version",
];

/// Applies `profile` to collected violations (under `lenient`, authoring-rule errors become
/// warnings): the warnings, or every error.
fn settle(profile: Profile, mut out: Vec<Violation>) -> Result<Vec<Violation>, DatasetErrors> {
    if profile == Profile::Lenient {
        let authoring = out.iter_mut().filter(|v| AUTHORING_RULES.contains(&v.rule));
        authoring.for_each(|v| v.severity = Severity::Warning);
    }
    let (errors, warnings): (Vec<_>, Vec<_>) =
        out.into_iter().partition(|v| v.severity == Severity::Error);
    match errors.is_empty() {
        true => Ok(warnings),
        false => Err(DatasetErrors(errors)),
    }
}

/// Warnings as lines for a reader: every rule with up to three examples, then how many more.
pub fn summarize_warnings(warnings: &[Violation]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut lines = Vec::new();
    for rule in warnings.iter().map(|w| w.rule).filter(|r| seen.insert(*r)) {
        let list: Vec<&Violation> = warnings.iter().filter(|w| w.rule == rule).collect();
        lines.extend(list.iter().take(3).map(|w| w.to_string()));
        let n = list.len();
        if n > 3 {
            lines.push(format!(
                "warning[{rule}]: {} more like these ({n} in all)",
                n - 3
            ));
        }
    }
    lines
}

/// How often each key occurs, keys in order (tools per server, entries per category...).
pub fn count<K: Ord>(keys: impl Iterator<Item = K>) -> std::collections::BTreeMap<K, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for k in keys {
        *counts.entry(k).or_default() += 1;
    }
    counts
}

/// The loaded, validated datasets of one invocation.
#[derive(Debug)]
pub struct Datasets {
    pub corpus: Option<Loaded<Corpus>>,
    pub golden: Option<Loaded<GoldenSet>>,
    pub security: Option<Loaded<SecurityCorpus>>,
    /// Problems that do not stop a run.
    pub warnings: Vec<Violation>,
    /// The profile the files were held to.
    pub profile: Profile,
}

/// Every error found in the datasets (exit code 2): a count, then a line each.
#[derive(Debug, thiserror::Error)]
#[error("{} dataset error(s):\n{}", .0.len(), .0.iter().map(|v| format!("  {v}\n")).collect::<String>())]
pub struct DatasetErrors(pub Vec<Violation>);

/// One dataset file read and decoded: its text, or its embedded copy (borrowed, with the
/// fingerprint computed at build time) when no path is given.
fn read_and_load<T: load::Items>(
    path: &Option<PathBuf>,
    embedded: &'static embedded::File,
    out: &mut Vec<Violation>,
) -> Option<Loaded<T>> {
    let (source, text) = match path {
        None => {
            let source = Source {
                name: embedded.name.into(),
                embedded: true,
                sha256: embedded.sha256.into(),
            };
            (source, Cow::Borrowed(embedded.text()))
        }
        Some(p) => load::read_file(p).map_err(|v| out.push(v)).ok()?,
    };
    load::load(source, text, out)
}

impl Datasets {
    /// What the report and the baseline record of each loaded dataset.
    pub fn refs(&self) -> Vec<DatasetRef> {
        fn at<T: load::Items>(
            kind: &str,
            l: &Option<Loaded<T>>,
            version: fn(&T) -> Option<&String>,
        ) -> Option<DatasetRef> {
            let l = l.as_ref()?;
            Some(DatasetRef {
                kind: kind.into(),
                source: l.source.name.clone(),
                version: version(&l.value).cloned(),
                sha256: l.source.sha256.clone(),
                items: l.value.item_count(),
            })
        }
        [
            at("corpus", &self.corpus, |c| Some(&c.version)),
            at("golden", &self.golden, |g| g.version.as_ref()),
            at("security", &self.security, |s| s.version.as_ref()),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Loads and validates what `need` asks for. Every violation of every file is collected;
    /// any error fails the whole load.
    pub fn load(
        paths: &DatasetPaths,
        need: Need,
        profile: Profile,
    ) -> Result<Datasets, DatasetErrors> {
        let mut out = Vec::new();
        let (mut corpus, mut golden, mut security) = (None, None, None);
        if need.retrieval {
            corpus = read_and_load(&paths.corpus, &CORPUS_FILE, &mut out);
            golden = read_and_load(&paths.golden, &GOLDEN_FILE, &mut out);
        }
        if let Some(c) = &corpus {
            validate::corpus(c, &mut out);
        }
        if let Some(g) = &golden {
            validate::golden(g, corpus.as_ref(), &mut out);
        }
        if need.security {
            security = read_and_load(&paths.security, &SECURITY_FILE, &mut out);
        }
        if let Some(s) = &security {
            validate::security(s, &mut out);
        }
        let warnings = settle(profile, out)?;
        Ok(Datasets {
            corpus: corpus.map(Loaded::without_text),
            golden: golden.map(Loaded::without_text),
            security: security.map(Loaded::without_text),
            warnings,
            profile,
        })
    }

    /// Loads and validates a corpus on its own (for the replay server, which serves it
    /// without a golden set).
    pub fn load_corpus(path: &Option<PathBuf>) -> Result<Loaded<Corpus>, DatasetErrors> {
        let mut out = Vec::new();
        let corpus = read_and_load(path, &CORPUS_FILE, &mut out);
        if let Some(c) = &corpus {
            validate::corpus(c, &mut out);
        }
        settle(Profile::Lenient, out)?;
        // a corpus that did not load left an error
        corpus
            .map(Loaded::without_text)
            .ok_or(DatasetErrors(Vec::new()))
    }

    /// True when every dataset in use is the compiled-in default.
    pub fn all_embedded(&self) -> bool {
        self.corpus.as_ref().is_none_or(|l| l.source.embedded)
            && self.golden.as_ref().is_none_or(|l| l.source.embedded)
            && self.security.as_ref().is_none_or(|l| l.source.embedded)
    }
}

/// Deterministic corpus JSON: struct field order, 2-space indent, trailing newline.
pub fn corpus_json(c: &Corpus) -> String {
    serde_json::to_string_pretty(c).expect("corpus serialises") + "\n"
}

/// One dataset file the run read: where from, which version, its sha256 and size.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DatasetRef {
    /// `corpus`, `golden` or `security`.
    pub kind: String,
    /// File path, or `embedded:...` for the compiled-in default.
    pub source: String,
    /// The dataset's own `version` field, when it has one.
    pub version: Option<String>,
    /// SHA-256 of the file's bytes (of the compiled-in text for `embedded:...`).
    pub sha256: String,
    /// Number of tools, queries or entries.
    pub items: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_datasets_decompress_to_the_files_in_datasets_v1() {
        use sha2::{Digest, Sha256};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/v1");
        for (f, file) in [
            (&embedded::CORPUS_FILE, "corpus.json"),
            (&embedded::GOLDEN_FILE, "golden.json"),
            (&embedded::SECURITY_FILE, "security.json"),
        ] {
            let on_disk = std::fs::read(dir.join(file)).unwrap();
            assert!(
                f.name.ends_with(&format!("datasets/v1/{file}")),
                "{}",
                f.name
            );
            assert!(f.text().as_bytes() == on_disk, "{file}: the bytes differ");
            let hex = format!("{:x}", Sha256::digest(&on_disk));
            assert_eq!(f.sha256, hex, "{file}");
            // the binary holds a compressed copy, and decompressing twice hands out the same text
            assert!(
                f.packed.len() * 4 < on_disk.len(),
                "{file}: {}",
                f.packed.len()
            );
            assert!(std::ptr::eq(f.text(), f.text()), "{file}");
        }
        assert!(std::ptr::eq(
            CORPUS_FILE.text(),
            embedded::CORPUS_FILE.text()
        ));
        assert!(std::ptr::eq(
            GOLDEN_FILE.text(),
            embedded::GOLDEN_FILE.text()
        ));
        assert!(std::ptr::eq(
            SECURITY_FILE.text(),
            embedded::SECURITY_FILE.text()
        ));
    }

    #[test]
    fn the_build_time_fingerprints_are_those_of_the_embedded_text() {
        for f in [
            &embedded::CORPUS_FILE,
            &embedded::GOLDEN_FILE,
            &embedded::SECURITY_FILE,
        ] {
            assert_eq!(
                Source::new(f.name, true, f.text()).sha256,
                f.sha256,
                "{}",
                f.name
            );
        }
        let need = Need {
            retrieval: true,
            security: true,
        };
        let d = Datasets::load(&DatasetPaths::default(), need, Profile::Strict).unwrap();
        let fingerprint = |s: Option<&Source>| s.map(|s| (s.embedded, s.sha256.clone()));
        assert_eq!(
            fingerprint(d.corpus.as_ref().map(|l| &l.source)),
            Some((true, embedded::CORPUS_SHA256.to_string()))
        );
        assert_eq!(
            fingerprint(d.security.as_ref().map(|l| &l.source)),
            Some((true, embedded::SECURITY_SHA256.to_string()))
        );
    }
}
