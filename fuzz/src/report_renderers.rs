//! A report whose dataset/SUT strings (tool ids, query ids and text, notes, descriptions,
//! detector names, signals, check messages, warnings, paths...) are arbitrary, rendered as
//! Markdown, HTML and terminal text.
//!
//! The report is `fixtures/report_template.json` (every section present; see the library) with each `%F<n>%`
//! replaced by fuzz string n (the input split at 0xFF bytes, lossily decoded, used round-robin).
//! The same template is also filled with harmless tokens (`zq0`, `zq1`... one per distinct fuzz
//! string) to get the markup the template itself produces.
//!
//! Invariants:
//! - HTML: the sequence of tags is exactly the one the harmless report gives (data adds,
//!   removes or changes no tag or attribute; only the values of text attributes such as
//!   `aria-label` / `title` may differ), so `<script`, `<img`, `<a `, `<iframe`... occur only
//!   where the template puts them; no tag has an `on...=` handler or a `javascript:` URL.
//! - Markdown: the Markdown structure (raw HTML `<`, code spans and literal backtick runs, link
//!   and image brackets, emphasis, table pipes, mentions, autolinks, headings, line breaks) is
//!   exactly the one the harmless report gives (the harmless report keeps empty strings empty),
//!   no `GH-45` issue reference, and every code span is closed on its line and not empty.
//! - HTML, Markdown and terminal (with and without colour): no raw control characters (except
//!   newline; ANSI colour codes in colour mode) and no character [`super::hidden`] names
//!   (invisible, format, private-use, unassigned... by ICU4X's Unicode data).

use super::{
    Tokens, assert_same_structure, md_well_formed, no_hidden, report, split_strings, strip_sgr,
    template,
};
use evalgate::pipeline::report::view::View;
use evalgate::pipeline::report::{Exporter, html::Html, markdown, terminal};

/// One fuzz input (the body of the `report_renderers` fuzz target; the seed replay test calls it too).
pub fn run(data: &[u8]) {
    let strings = split_strings(data);
    // one harmless token per distinct non-empty string ("" stays "": the renderers test
    // strings for emptiness, so the harmless report must take the same branches)
    let tokens = Tokens::new(&strings, &[]);
    let slot = |n: usize| &strings[n % strings.len()];
    let fuzzed = report(template(), |n| slot(n).clone());
    let plain = report(template(), |n| tokens.token(slot(n)));

    // HTML
    let h = Html
        .render(&fuzzed, &View::of(&fuzzed))
        .expect("HTML renders");
    let h_plain = Html
        .render(&plain, &View::of(&plain))
        .expect("harmless HTML renders");
    // every `<` of the page starts a tag in `html_tags`, so equal tag sequences also mean that
    // `<script`, `<img`, `<a `, `<iframe`... occur only where the template puts them
    let tags: Vec<String> = html_tags(&h).into_iter().map(normalize_tag).collect();
    let plain_tags: Vec<String> = html_tags(&h_plain).into_iter().map(normalize_tag).collect();
    if tags != plain_tags {
        let i = tags
            .iter()
            .zip(&plain_tags)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "data changed the HTML markup at tag {i}: {:?} instead of {:?}",
            tags.get(i),
            plain_tags.get(i)
        );
    }
    no_hidden("report.html", &h);

    // Markdown
    let m = markdown::render(&fuzzed);
    let m_plain = markdown::render(&plain);
    // (`<script>` inside a code span is inert text: the structural comparison below looks at
    // raw HTML, links and images outside code spans)
    assert_same_structure("report.md", &m, &m_plain);
    no_hidden("report.md", &m);
    // an empty string makes no empty code span ("``" pairs up with the next backticks)
    md_well_formed("report.md", &m);

    // terminal
    let t = terminal::render_view(&fuzzed, &View::of(&fuzzed), false);
    assert!(
        !t.contains('\u{1b}'),
        "escape sequence in the uncoloured terminal output"
    );
    no_hidden("terminal", &t);
    let t = terminal::render_view(&fuzzed, &View::of(&fuzzed), true);
    no_hidden("terminal (colour)", &strip_sgr(&t));
}

/// Every `<...>` in the page, in order.
fn html_tags(h: &str) -> Vec<&str> {
    let mut tags = Vec::new();
    let mut rest = h;
    while let Some(i) = rest.find('<') {
        let end = rest[i..].find('>').map_or(rest.len(), |e| i + e + 1);
        tags.push(&rest[i..end]);
        rest = &rest[end..];
    }
    tags
}

/// Attributes whose value is text for people (may carry escaped dataset text).
const TEXT_ATTRS: &[&str] = &["aria-label", "title", "alt", "aria-description"];
/// Attributes whose value is fetched or followed.
const URL_ATTRS: &[&str] = &["href", "xlink:href", "src", "action", "formaction", "data"];

/// A tag with the values of text attributes blanked, after checking it carries no event
/// handler, no `javascript:` URL and nothing unparseable. (Works on bytes: every delimiter is
/// ASCII, so slices stay on character boundaries.)
fn normalize_tag(t: &str) -> String {
    let b = t.as_bytes();
    assert!(
        b.len() >= 2 && b[b.len() - 1] == b'>',
        "unterminated tag {t:?}"
    );
    let end = b.len() - 1;
    let mut i = 1;
    while i < end && !b[i].is_ascii_whitespace() && !(b[i] == b'/' && i > 1 && i + 1 == end) {
        i += 1;
    }
    let mut out = String::with_capacity(t.len());
    out.push_str(&t[..i]);
    if out.starts_with("<!") || out.starts_with("</") {
        out.push_str(&t[i..]);
        return out;
    }
    loop {
        while i < end && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= end {
            break;
        }
        if b[i] == b'/' && i + 1 == end {
            out.push_str(" /");
            break;
        }
        let start = i;
        while i < end && !b[i].is_ascii_whitespace() && b[i] != b'=' {
            i += 1;
        }
        let name = t[start..i].to_ascii_lowercase();
        assert!(!name.is_empty(), "unparseable attributes in tag {t:?}");
        assert!(
            !name.starts_with("on"),
            "event handler attribute {name:?} in tag {t:?}"
        );
        out.push(' ');
        out.push_str(&name);
        if i < end && b[i] == b'=' {
            i += 1;
            let v = if i < end && (b[i] == b'"' || b[i] == b'\'') {
                let q = b[i];
                let vs = i + 1;
                i = vs;
                while i < end && b[i] != q {
                    i += 1;
                }
                assert!(i < end, "unterminated attribute value in tag {t:?}");
                i += 1;
                &t[vs..i - 1]
            } else {
                let vs = i;
                while i < end && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                &t[vs..i]
            };
            if URL_ATTRS.contains(&name.as_str()) {
                let squashed: String = v
                    .chars()
                    .filter(|c| !c.is_whitespace() && !c.is_control())
                    .collect();
                assert!(
                    !squashed.to_ascii_lowercase().contains("javascript:"),
                    "javascript: URL in tag {t:?}"
                );
            }
            out.push_str("=\"");
            out.push_str(if TEXT_ATTRS.contains(&name.as_str()) {
                "…"
            } else {
                v
            });
            out.push('"');
        }
    }
    out.push('>');
    out
}
