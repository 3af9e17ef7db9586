//! The fuzz targets' bodies (one module each, `run(data)`) and the helpers they share: the
//! report template and the oracles for hidden characters and Markdown structure.
//!
//! `fuzz_targets/<name>.rs` hands libFuzzer's input to `<name>::run`; the seed replay below
//! (`cargo test` here, and `tests/fuzz_replay.rs` in the main package's suite, on stable) runs
//! the same bodies over every file in `seeds/<name>/`.
//!
//! The hidden-character oracle ([`hidden`]) is independent of evalgate's own predicate
//! (`evalgate::infra::text::sanitize::is_invisible`, built from regex-syntax's Unicode tables): it
//! asks ICU4X's property data (`icu_properties`), and its test compares the two over every
//! code point.

pub mod dataset_loaders;
pub mod published_report;
pub mod report_renderers;
pub mod result_mappers;

/// A target's body: one fuzz input.
pub type Target = fn(&[u8]);

/// Every target by name, for the replay.
pub const TARGETS: [(&str, Target); 4] = [
    ("dataset_loaders", dataset_loaders::run),
    ("result_mappers", result_mappers::run),
    ("report_renderers", report_renderers::run),
    ("published_report", published_report::run),
];

use evalgate::pipeline::report::model::Report;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

const TEMPLATE: &str = include_str!("../fixtures/report_template.json");

/// `fixtures/report_template.json`: a report with every section, `%F<n>%` where fuzz string n goes.
pub fn template() -> &'static Value {
    static T: OnceLock<Value> = OnceLock::new();
    T.get_or_init(|| serde_json::from_str(TEMPLATE).expect("template parses"))
}

/// The fuzz input as strings: split at 0xFF bytes (never part of UTF-8), lossily decoded.
pub fn split_strings(data: &[u8]) -> Vec<String> {
    data.split(|&b| b == 0xFF)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// One harmless token per distinct non-empty string (`zq0`, `zq1`...), keeping strings in
/// `keep` as they are, and "" as "": the renderers test strings for emptiness (an empty code
/// span is written `(empty)`, an empty HTML field is left out), so the harmless report must
/// take the same branches. (That an empty string breaks no code span is checked on its own:
/// [`md_well_formed`].)
pub struct Tokens<'a> {
    index: HashMap<&'a str, usize>,
    keep: &'a [&'a str],
}

impl<'a> Tokens<'a> {
    pub fn new(strings: &'a [String], keep: &'a [&'a str]) -> Self {
        let mut index = HashMap::new();
        for s in strings {
            let n = index.len();
            index.entry(s.as_str()).or_insert(n);
        }
        Tokens { index, keep }
    }
    pub fn token(&self, s: &str) -> String {
        if s.is_empty() || self.keep.contains(&s) {
            s.to_string()
        } else {
            format!("zq{}", self.index[s])
        }
    }
}

/// `template` with every `%F<n>%` replaced by `fill(n)`, as a Report.
pub fn report(template: &Value, fill: impl Fn(usize) -> String) -> Report {
    try_report(template, fill).expect("the filled template is a Report")
}

/// As [`report`], or the error a report.json with these strings meets (a category name must
/// not be empty, for one).
pub fn try_report(
    template: &Value,
    fill: impl Fn(usize) -> String,
) -> Result<Report, serde_json::Error> {
    fn walk(v: &Value, fill: &dyn Fn(usize) -> String) -> Value {
        match v {
            Value::String(s) => Value::String(subst(s, fill)),
            Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, fill)).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| (k.clone(), walk(x, fill))).collect())
            }
            other => other.clone(),
        }
    }
    let v = walk(template, &fill);
    serde_json::from_value(v)
}

pub fn subst(s: &str, fill: &dyn Fn(usize) -> String) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("%F") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after.find('%').expect("placeholder closed");
        out.push_str(&fill(after[..end].parse().expect("placeholder number")));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Characters no output may carry raw: controls (newline excepted), and what a reader cannot
/// see or what acts on the text around it, by ICU4X's Unicode property data:
/// Default_Ignorable_Code_Point, Variation_Selector, general categories Cc, Cf, Co, Cn, Zl and
/// Zp; plus letters and symbols whose glyph is blank (U+2800 BRAILLE PATTERN BLANK, the Hangul
/// fillers U+115F, U+1160, U+3164, U+FFA0), which no property names.
pub fn hidden(c: char) -> bool {
    use icu_properties::props::{
        DefaultIgnorableCodePoint, GeneralCategory as Gc, VariationSelector,
    };
    use icu_properties::{CodePointMapData, CodePointSetData};
    if c == '\n' {
        return false;
    }
    CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointSetData::new::<VariationSelector>().contains(c)
        || matches!(
            CodePointMapData::<Gc>::new().get(c),
            Gc::Control
                | Gc::Format
                | Gc::PrivateUse
                | Gc::Unassigned
                | Gc::LineSeparator
                | Gc::ParagraphSeparator
        )
        || matches!(
            c,
            '\u{2800}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}'
        )
}

pub fn no_hidden(what: &str, s: &str) {
    if let Some((i, c)) = s.char_indices().find(|&(_, c)| hidden(c)) {
        let from = s[..i].char_indices().rev().nth(60).map_or(0, |(j, _)| j);
        let ctx: String = s[from..].chars().take(120).collect();
        panic!("raw U+{:04X} in {what}, near {ctx:?}", c as u32);
    }
}

pub fn strip_sgr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\u{1b}' && it.peek() == Some(&'[') {
            it.next();
            let mut ok = false;
            for d in it.by_ref() {
                if d == 'm' {
                    ok = true;
                    break;
                }
                if !(d.is_ascii_digit() || d == ';') {
                    break;
                }
            }
            assert!(
                ok,
                "escape sequence other than a colour in the terminal output"
            );
        } else {
            out.push(c);
        }
    }
    out
}

/// Length of an HTML entity (`&amp;`, `&#35;`, `&#x1F;`) at the start of `b`.
fn entity_len(b: &[u8]) -> Option<usize> {
    let mut i = 1;
    if b.get(i) == Some(&b'#') {
        i += 1;
    }
    let start = i;
    while i < b.len() && b[i].is_ascii_alphanumeric() && i - start < 32 {
        i += 1;
    }
    (i > start && b.get(i) == Some(&b';')).then_some(i + 1)
}

/// The Markdown constructs of a document, in order (a GitHub-flavoured approximation: escaped
/// characters and entities are text; a backtick run opens a code span only when the same run
/// length closes it on the line; table pipes count even inside code spans; `mailto:` and email
/// autolinks need an `@` followed by a letter or digit, which the mention check catches; `GH-`
/// and a digit is an issue reference, like `#`).
/// Works on bytes: every construct is ASCII.
pub fn md_skeleton(md: &str) -> Vec<String> {
    const AUTOLINKS: [&[u8]; 4] = [b"http://", b"https://", b"www.", b"ftp://"];
    let mut sk: Vec<String> = Vec::new();
    for line in md.split('\n') {
        sk.push("\n".into());
        let c = line.as_bytes();
        let run_at = |j: usize| c[j..].iter().take_while(|&&x| x == b'`').count();
        let mut i = 0;
        while i < c.len() {
            let ch = c[i];
            if ch == b'\\' && c.get(i + 1).is_some_and(|n| n.is_ascii_punctuation()) {
                i += 2;
                continue;
            }
            if ch == b'&'
                && let Some(n) = entity_len(&c[i..])
            {
                i += n;
                continue;
            }
            if ch == b'`' {
                let n = run_at(i);
                let mut j = i + n;
                let mut close = None;
                while j < c.len() {
                    if c[j] == b'`' {
                        let m = run_at(j);
                        if m == n {
                            close = Some(j);
                            break;
                        }
                        j += m;
                    } else {
                        j += 1;
                    }
                }
                match close {
                    Some(j) => {
                        sk.push(format!("code{n}"));
                        sk.extend(
                            c[i + n..j]
                                .iter()
                                .filter(|&&x| x == b'|')
                                .map(|_| "|".to_string()),
                        );
                        i = j + n;
                    }
                    None => {
                        sk.push(format!("unclosed backticks x{n}"));
                        i += n;
                    }
                }
                continue;
            }
            if matches!(ch.to_ascii_lowercase(), b'h' | b'w' | b'f')
                && AUTOLINKS
                    .iter()
                    .any(|w| c.len() - i >= w.len() && c[i..i + w.len()].eq_ignore_ascii_case(w))
            {
                sk.push("autolink".into());
            }
            if matches!(ch, b'g' | b'G')
                && c.len() - i > 3
                && c[i..i + 3].eq_ignore_ascii_case(b"gh-")
                && c[i + 3].is_ascii_digit()
            {
                sk.push("GH- reference".into());
            }
            match ch {
                b'<' | b'>' | b'[' | b']' | b'(' | b')' | b'!' | b'*' | b'_' | b'~' | b'|'
                | b'#' | b'{' | b'}' | b'$' => sk.push((ch as char).to_string()),
                b'@' if c.get(i + 1).is_some_and(|n| n.is_ascii_alphanumeric()) => {
                    sk.push("@mention".into())
                }
                _ => {}
            }
            i += 1;
        }
    }
    sk
}

/// Panics when `md` (rendered from fuzz strings) and `md_plain` (the same report with harmless
/// tokens) differ in Markdown structure, quoting the first differing line of each.
pub fn assert_same_structure(what: &str, md: &str, md_plain: &str) {
    let sk = md_skeleton(md);
    let sk_plain = md_skeleton(md_plain);
    if sk == sk_plain {
        return;
    }
    let i = sk
        .iter()
        .zip(&sk_plain)
        .position(|(a, b)| a != b)
        .unwrap_or(sk.len().min(sk_plain.len()));
    let line = sk[..i.min(sk.len())]
        .iter()
        .filter(|t| t.as_str() == "\n")
        .count();
    panic!(
        "{what}: the data changed the Markdown structure on line {line}: {:?} instead of {:?}\nline: {:?}\nharmless: {:?}",
        sk.get(i),
        sk_plain.get(i),
        md.split('\n').nth(line.saturating_sub(1)),
        md_plain.split('\n').nth(line.saturating_sub(1)),
    );
}

/// Markdown whose code spans are whole: every backtick run is closed on its line, and every
/// code span is a single-backtick one as evalgate writes them (an empty value written as two
/// bare backticks would open a double-backtick span with the next pair on the line, or stay
/// unclosed). A span of spaces (`` ` ` ``) is a real, visible code span and is fine.
pub fn md_well_formed(what: &str, md: &str) {
    for (line, text) in md.split('\n').enumerate() {
        if let Some(t) = md_skeleton(text).into_iter().find(|t| {
            t.starts_with("unclosed backticks") || (t.starts_with("code") && t != "code1")
        }) {
            panic!("{what} line {}: {t}: {text:?}", line + 1);
        }
    }
}

#[cfg(test)]
mod replay {
    use std::path::PathBuf;

    /// `seeds/` of the fuzz package (also when this file is compiled into the main package's
    /// `tests/fuzz_replay.rs`).
    fn seeds() -> PathBuf {
        let base = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        if base.join("fuzz/seeds").is_dir() {
            base.join("fuzz/seeds")
        } else {
            base.join("seeds")
        }
    }

    /// Runs `target` over every seed file (and the empty input), naming each one that fails.
    fn replay(target: &str) {
        let run = super::TARGETS.iter().find(|(n, _)| *n == target).unwrap().1;
        let dir = seeds().join(target);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(files.len() >= 4, "{}: too few seeds", dir.display());
        let mut inputs: Vec<(String, Vec<u8>)> = vec![("(empty input)".into(), Vec::new())];
        inputs.extend(
            files
                .iter()
                .map(|f| (f.display().to_string(), std::fs::read(f).unwrap())),
        );
        let mut failed = Vec::new();
        for (name, bytes) in &inputs {
            if std::panic::catch_unwind(|| run(bytes)).is_err() {
                failed.push(name.clone());
            }
        }
        assert!(failed.is_empty(), "{target} failed on {failed:?}");
        eprintln!("{target}: {} inputs replayed", inputs.len());
    }

    #[test]
    fn seeds_dataset_loaders() {
        replay("dataset_loaders");
        super::dataset_loaders::remove_scratch();
    }
    #[test]
    fn seeds_result_mappers() {
        replay("result_mappers");
    }
    #[test]
    fn seeds_report_renderers() {
        replay("report_renderers");
    }
    #[test]
    fn seeds_published_report() {
        replay("published_report");
    }

    /// The oracle's set ([`super::hidden`], ICU4X data) against evalgate's own
    /// (`sanitize::is_invisible`, regex-syntax tables), over every code point: evalgate must
    /// show every character the oracle calls hidden. The reverse may differ where the two
    /// Unicode versions do (a character assigned in the newer one is unassigned in the older).
    #[test]
    fn evalgate_shows_every_character_the_oracle_calls_hidden() {
        use evalgate::infra::text::sanitize::is_invisible;
        let missed: Vec<String> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|&c| c != '\n' && super::hidden(c) && !is_invisible(c))
            .map(|c| format!("U+{:04X}", c as u32))
            .collect();
        assert!(missed.is_empty(), "shown raw by evalgate: {missed:?}");
        let extra = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|&c| is_invisible(c) && !super::hidden(c) && !matches!(c, '\n' | '\t' | '\r'))
            .count();
        // Unicode version skew only, not a different idea of "invisible": regex-syntax 0.8 has
        // Unicode 16's tables, ICU4X 2.4 Unicode 17's, whose ~17,800 new characters (most of
        // them CJK ideographs) evalgate still counts as unassigned and shows as ⟨U+XXXX⟩
        if extra >= 20_000 {
            let mut ranges: Vec<(u32, u32)> = Vec::new();
            for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
                if is_invisible(c) && !super::hidden(c) && !matches!(c, '\n' | '\t' | '\r') {
                    match ranges.last_mut() {
                        Some((_, hi)) if *hi + 1 == c as u32 => *hi = c as u32,
                        _ => ranges.push((c as u32, c as u32)),
                    }
                }
            }
            let shown: Vec<String> = ranges
                .iter()
                .map(|(a, b)| format!("{a:04X}..{b:04X}"))
                .collect();
            panic!("{extra} characters evalgate hides and the oracle does not: {shown:?}");
        }
    }
}
