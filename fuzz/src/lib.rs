//! Helpers shared by the fuzz targets: the report template, known-issue switches, and the
//! oracles for hidden characters and Markdown structure.

use evalgate::reporting::model::Report;
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

/// One harmless token per distinct string (`zq0`, `zq1`...), keeping strings in `keep` as they
/// are; `keep_empty` maps "" to "" (for templates that test strings for emptiness).
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
    pub fn token(&self, s: &str, keep_empty: bool) -> String {
        if (s.is_empty() && keep_empty) || self.keep.contains(&s) {
            s.to_string()
        } else {
            format!("zq{}", self.index[s])
        }
    }
}

/// Whether a known issue is tolerated (`EVALGATE_FUZZ_ALLOW`, comma-separated names).
pub fn allowed(issue: &str) -> bool {
    static A: OnceLock<Vec<String>> = OnceLock::new();
    A.get_or_init(|| {
        std::env::var("EVALGATE_FUZZ_ALLOW")
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_string())
            .collect()
    })
    .iter()
    .any(|a| a == issue)
}

/// `template` with every `%F<n>%` replaced by `fill(n)`, as a Report.
pub fn report(template: &Value, fill: impl Fn(usize) -> String) -> Report {
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
    serde_json::from_value(v).expect("the filled template is a Report")
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

/// Control characters (newline excepted), bidi controls (Unicode's Bidi_Control set) and the
/// invisible characters evalgate promises to show. U+061C ARABIC LETTER MARK (a bidi control)
/// is a known gap, tolerated with EVALGATE_FUZZ_ALLOW=u061c.
pub fn hidden(c: char) -> bool {
    if c == '\u{061C}' && allowed("u061c") {
        return false;
    }
    (c.is_control() && c != '\n')
        || matches!(c as u32,
            0x00AD | 0x061C | 0x180E | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x2064
            | 0x2066..=0x2069 | 0xFEFF | 0xE0000..=0xE007F)
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
            assert!(ok, "escape sequence other than a colour in the terminal output");
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
/// autolinks need an `@` followed by a letter or digit, which the mention check catches).
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
                        sk.extend(c[i + n..j].iter().filter(|&&x| x == b'|').map(|_| "|".to_string()));
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
