//! Neutralising hostile dataset text before it reaches a reader. Dataset text contains prompt
//! injections by design: it must never become live HTML, Markdown, a mention, a link, an image
//! or a terminal escape sequence, and it must not hide behind invisible characters.

use std::sync::OnceLock;

/// Longest dataset string shown in a table cell, in characters.
pub const CELL_MAX: usize = 160;

/// The characters a reader cannot see (or that act on the text around them), as a regex class
/// over Unicode properties rather than a hand list:
/// - `Default_Ignorable_Code_Point`: zero-width characters, joiners, bidi and other format
///   controls, variation selectors, tags, Hangul fillers, the reserved ignorable ranges;
/// - general categories `Cc` (controls: ESC, BEL, C1), `Cf` (format: bidi marks, interlinear
///   annotation, Egyptian and musical format controls), `Co` (private use: no standard glyph),
///   `Cn` (unassigned: no glyph yet; a future assignment may be anything), `Zl`/`Zp` (line and
///   paragraph separators);
/// - `Variation_Selector` (also in the ignorables; named for clarity);
/// - characters whose glyph is blank although they are letters or symbols: U+2800 BRAILLE
///   PATTERN BLANK, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, U+1D159 MUSICAL SYMBOL
///   NULL NOTEHEAD and U+16FE4 KHITAN SMALL SCRIPT FILLER.
const INVISIBLE_CLASS: &str = r"[\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Variation_Selector}\x{2800}\x{115F}\x{1160}\x{3164}\x{FFA0}\x{1D159}\x{16FE4}]";

/// Whether `c` is invisible or acts on the text around it (see `INVISIBLE_CLASS`): such a
/// character is shown as `⟨U+XXXX⟩`, never passed to a reader.
pub fn is_invisible(c: char) -> bool {
    // the class as sorted, disjoint inclusive ranges (from regex-syntax's Unicode tables)
    static R: OnceLock<Vec<(char, char)>> = OnceLock::new();
    let ranges = R.get_or_init(|| {
        use regex_syntax::hir::{Class, HirKind};
        let hir = regex_syntax::Parser::new()
            .parse(INVISIBLE_CLASS)
            .expect("the invisible-character class parses");
        match hir.kind() {
            HirKind::Class(Class::Unicode(class)) => class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect(),
            other => unreachable!("a Unicode class, not {other:?}"),
        }
    });
    let i = ranges.partition_point(|&(_, hi)| hi < c);
    ranges.get(i).is_some_and(|&(lo, _)| lo <= c)
}

/// Makes invisible and control characters visible as `⟨U+XXXX⟩` ([`is_invisible`]); newlines
/// and tabs become spaces.
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' | '\r' => out.push(' '),
            c if is_invisible(c) => out.push_str(&format!("⟨U+{:04X}⟩", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Text of several lines for a terminal or a log (an error list, say): each line [`visible`],
/// the line breaks kept.
pub fn visible_lines(s: &str) -> String {
    s.split('\n')
        .map(|l| visible(l.strip_suffix('\r').unwrap_or(l)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Cuts `s` to `max` characters, saying how much was left out.
pub fn clip(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    format!("{head}… (+{} chars)", n - max)
}

/// Like [`clip`], but keeps both ends: a failure's cause is usually at the end of its text (the
/// last lines of a log, after the warnings a program prints first), so a third of the room goes
/// to the head and the rest to the tail.
pub fn clip_ends(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let head_n = max / 3;
    let tail_n = max - head_n;
    let head: String = s.chars().take(head_n).collect();
    let tail: String = s.chars().skip(n - tail_n).collect();
    format!("{head} … ({} chars cut) … {tail}", n - max)
}

/// Failure text for a terminal line or a log: visible, both ends kept.
pub fn term_ends(s: &str, max: usize) -> String {
    clip_ends(&visible(s), max)
}

/// Dataset text for a Markdown table cell on GitHub: visible, clipped, and inert (no HTML,
/// links, autolinks, images, mentions, issue references (`#45`, `GH-45`), emphasis or table
/// breaks).
pub fn md(s: &str, max: usize) -> String {
    inert(&clip(&visible(s), max))
}

/// Failure text for Markdown: as [`md`], both ends kept ([`clip_ends`]).
pub fn md_ends(s: &str, max: usize) -> String {
    inert(&clip_ends(&visible(s), max))
}

/// Visible text made inert for GitHub Markdown.
fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '|' => out.push_str("&#124;"),
            // a zero-width space after @ and # stops mentions and issue/PR references
            '@' => out.push_str("@&#8203;"),
            '#' => out.push_str("&#35;&#8203;"),
            // GH-45 is an issue reference too (any case)
            '-' if follows(&chars, i, "gh")
                && chars.get(i + 1).is_some_and(char::is_ascii_digit) =>
            {
                out.push_str("-&#8203;")
            }
            ':' if chars.get(i + 1) == Some(&'/') => out.push_str(":&#8203;"),
            '.' if follows(&chars, i, "www") => out.push_str("&#8203;."),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '!' | '~' | '{' | '}' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Dataset text as an inline code span: inert on GitHub (no HTML, links or mentions inside code
/// spans); backticks and table pipes are replaced by look-alikes so the span cannot be closed,
/// and the `<` of `<!--` by `‹`: the raw text of a comment must not hold another job's hidden
/// marker (`<!-- evalgate:KEY -->`) for the publisher to find.
pub fn md_code(s: &str, max: usize) -> String {
    let t: String = clip(&visible(s), max)
        .replace("<!--", "\u{2039}!--")
        .chars()
        .map(|c| match c {
            '`' => 'ˋ',
            '|' => '¦',
            c => c,
        })
        .collect();
    if t.is_empty() {
        // two bare `` on one line would pair up and swallow the text between them
        return "(empty)".into();
    }
    format!("`{t}`")
}

/// Dataset text for a GitHub plain-text field: a check-run title, an annotation's title and
/// message, a step output, a workflow command (`::error`). One line, visible ([`visible`]:
/// no control character, escape sequence or invisible character), clipped, and inert even where
/// a workflow later pastes it into Markdown or prints it: the characters that would start an
/// HTML tag, a link or image, a code span, a mention, an issue reference (`#45`, `GH-45`) or a
/// workflow command (`::`) become look-alikes. Plain text has no escapes, hence look-alikes.
pub fn line(s: &str, max: usize) -> String {
    plain(&clip(&visible(s), max))
}

/// Failure text for a GitHub plain-text field: as [`line()`], both ends kept ([`clip_ends`]).
pub fn line_ends(s: &str, max: usize) -> String {
    plain(&clip_ends(&visible(s), max))
}

/// A path for a check-run annotation: relative, inside the repository (no `..`, no leading
/// `/`, no drive or URL), of plain characters only; anything else is `None` (dropped).
pub fn repo_path(s: &str) -> Option<String> {
    let ok = !s.is_empty()
        && s.len() <= 255
        && !s.starts_with('/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
        && s.split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    ok.then(|| s.to_string())
}

/// Whether `chars[..i]` ends with the ASCII `word`, in any case.
fn follows(chars: &[char], i: usize, word: &str) -> bool {
    let n = word.len();
    i >= n
        && chars[i - n..i]
            .iter()
            .collect::<String>()
            .eq_ignore_ascii_case(word)
}

/// Visible one-line text with look-alikes for the characters that could make it live.
fn plain(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let word_start = prev.is_none_or(|p| !p.is_alphanumeric());
        match c {
            '<' => out.push('\u{2039}'),
            '>' => out.push('\u{203A}'),
            '[' => out.push('\u{FF3B}'),
            ']' => out.push('\u{FF3D}'),
            '`' => out.push('\u{02CB}'),
            '#' => out.push('\u{FF03}'),
            // `recall@5` stays; a mention needs an `@` at the start of a word
            '@' if word_start => out.push('\u{FF20}'),
            ':' if prev == Some(':') => out.push('\u{FF1A}'),
            // GH-45 is an issue reference: the hyphen becomes U+2010
            '-' if follows(&chars, i, "gh")
                && (i == 2 || !chars[i - 3].is_alphanumeric())
                && chars.get(i + 1).is_some_and(char::is_ascii_digit) =>
            {
                out.push('\u{2010}')
            }
            c => out.push(c),
        }
    }
    out
}

/// Text for evalgate's standard output or standard error: no line of it can be read by a
/// GitHub Actions runner as a workflow command. The runner takes a line whose text starts with
/// `::` after blanks (`::add-mask::`, `::stop-commands::`, `::error`) for a command, and the
/// legacy form `##[command]` anywhere in a line; error messages quote input text (serde's
/// "unknown variant", a path, a server's answer) with its line breaks. The first colon of such a
/// `::` and the first hash of every `##[` become full-width look-alikes (U+FF1A, U+FF03);
/// everything else, line breaks (`\n`, and `\r`, which the runner also splits on) included, is
/// kept. evalgate's own workflow commands bypass this (`crate::workflow_command`).
pub fn no_workflow_commands(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains("::") && !s.contains("##[") {
        return std::borrow::Cow::Borrowed(s);
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    let mut line_start = true;
    for (i, &c) in chars.iter().enumerate() {
        let next = |k: usize| chars.get(i + k).copied();
        match c {
            '\n' | '\r' => {
                out.push(c);
                line_start = true;
                continue;
            }
            ':' if line_start && next(1) == Some(':') => out.push('\u{FF1A}'),
            '#' if next(1) == Some('#') && next(2) == Some('[') => out.push('\u{FF03}'),
            c => out.push(c),
        }
        line_start = line_start && c.is_whitespace();
    }
    std::borrow::Cow::Owned(out)
}

/// The first `n` characters of a digest (whole characters: the text may not be hex).
pub fn short_hash(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// Dataset text for a terminal: visible (no escape sequences) and clipped.
pub fn term(s: &str, max: usize) -> String {
    clip(&visible(s), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_cells_are_inert() {
        let hostile = "<script>alert(1)</script> ![x](https://e.vil/a.png) [click](http://x) @octocat #1 www.evil.com | a\nb `code` **b**";
        let m = md(hostile, 10_000);
        for bad in [
            "<script", "![", "](", "@octocat", "https://", "http://", "www.evil", "\n", " #1 ",
            "|", "`code`", "**",
        ] {
            assert!(!m.contains(bad), "{bad:?} survived in {m}");
        }
        assert!(m.contains("&lt;script&gt;"));
        let c = md_code("a`b|c <img src=x>", 100);
        assert_eq!(c, "`aˋb¦c <img src=x>`");
        // no hidden comment marker in the raw text (issue 36 item 5)
        assert_eq!(md_code("<!-- evalgate:b -->", 100), "`‹!-- evalgate:b -->`");
    }

    #[test]
    fn invisible_characters_become_visible_and_long_text_is_clipped() {
        assert_eq!(
            visible("a\u{202E}b\u{200B}c\u{1b}[31m"),
            "a⟨U+202E⟩b⟨U+200B⟩c⟨U+001B⟩[31m"
        );
        let long = "x".repeat(1_000_000);
        let c = md(&long, 100);
        assert!(c.len() < 200, "{}", c.len());
        assert!(c.ends_with("(+999900 chars\\)"), "{c}");
    }

    #[test]
    fn failure_text_keeps_its_end() {
        let log = format!(
            "DeprecationWarning: old{}ValueError: the real cause",
            " x".repeat(500)
        );
        let c = clip_ends(&log, 120);
        assert!(c.starts_with("DeprecationWarning"), "{c}");
        assert!(c.ends_with("ValueError: the real cause"), "{c}");
        assert!(c.contains("chars cut"), "{c}");
        assert!(c.chars().count() < 160, "{c}");
        assert_eq!(clip_ends("short", 120), "short");
    }

    #[test]
    fn plain_text_fields_are_one_inert_line() {
        let hostile = "<img src=x onerror=alert(1)> [a](javascript:alert(1)) @octocat #45 gh-45 \
                       ::error::x \u{1b}]0;t\u{7}\u{1b}[2J a\nb\u{202E}c\u{200B}d `x`";
        let l = line(hostile, 10_000);
        for bad in [
            "<img", "[a]", "](", "@octocat", "#45", "gh-45", "::", "\u{1b}", "\u{7}", "\n",
            "\u{202E}", "\u{200B}", "`",
        ] {
            assert!(!l.contains(bad), "{bad:?} survived in {l}");
        }
        assert_eq!(
            line("recall@5 of a-b GH-x dev-1", 100),
            "recall@5 of a-b GH-x dev-1"
        );
        assert!(line_ends(&"x".repeat(1000), 50).chars().count() < 80);
        assert_eq!(
            repo_path("baselines/v1.json").as_deref(),
            Some("baselines/v1.json")
        );
        for bad in [
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "a\nb",
            "C:\\x",
            "",
            "a b",
        ] {
            assert_eq!(repo_path(bad), None, "{bad:?}");
        }
    }

    /// Issue 17 item 8: invisible characters that passed the old hand list.
    const ITEM8_INVISIBLES: [char; 14] = [
        '\u{1D159}', // MUSICAL SYMBOL NULL NOTEHEAD (So, blank glyph; issue 37)
        '\u{16FE4}', // KHITAN SMALL SCRIPT FILLER (blank glyph; issue 37)
        '\u{3164}',  // HANGUL FILLER (Lo, blank glyph)
        '\u{FE0F}',  // VARIATION SELECTOR-16
        '\u{E0100}', // VARIATION SELECTOR-17
        '\u{206A}',  // INHIBIT SYMMETRIC SWAPPING (Cf)
        '\u{FFF9}',  // INTERLINEAR ANNOTATION ANCHOR (Cf, not ignorable)
        '\u{2065}',  // unassigned, default ignorable
        '\u{034F}',  // COMBINING GRAPHEME JOINER
        '\u{115F}',  // HANGUL CHOSEONG FILLER
        '\u{17B4}',  // KHMER VOWEL INHERENT AQ
        '\u{180B}',  // MONGOLIAN FREE VARIATION SELECTOR ONE
        '\u{1D173}', // MUSICAL SYMBOL BEGIN BEAM (Cf)
        '\u{2800}',  // BRAILLE PATTERN BLANK (So, blank glyph)
    ];

    #[test]
    fn invisible_characters_from_unicode_properties_are_shown_everywhere() {
        for c in ITEM8_INVISIBLES {
            let shown = format!("⟨U+{:04X}⟩", c as u32);
            let text = format!("a{c}b");
            assert!(is_invisible(c), "U+{:04X}", c as u32);
            assert_eq!(visible(&text), format!("a{shown}b"));
            for out in [
                md(&text, 100),
                md_code(&text, 100),
                term(&text, 100),
                md_ends(&text, 100),
            ] {
                assert!(!out.contains(c), "raw U+{:04X} in {out:?}", c as u32);
                assert!(out.contains(&shown), "{out:?}");
            }
        }
        // one of each property family
        for c in [
            '\u{0}',
            '\u{7F}',
            '\u{9B}',
            '\u{AD}',
            '\u{200D}',
            '\u{2028}',
            '\u{2029}',
            '\u{E000}',
            '\u{F0000}',
            '\u{10FFFD}',
            '\u{E0001}',
            '\u{E01EF}',
            '\u{FFA0}',
            '\u{1160}',
            '\u{13430}',
            '\u{FFFB}',
            '\u{0378}',
            '\u{FFFE}',
        ] {
            assert!(is_invisible(c), "U+{:04X}", c as u32);
        }
        // visible text stays as it is
        let plain = "Grüße, 天気, погода, مرحبا, שלום, ❤ 🦀 ½ – — “q” x\u{00A0}y";
        assert_eq!(visible(plain), plain);
        assert!(plain.chars().all(|c| !is_invisible(c)));
        assert!(!is_invisible(' ') && !is_invisible('\u{3000}') && !is_invisible('\u{2801}'));
    }

    #[test]
    fn terminal_escape_sequences_are_shown_not_sent() {
        let hostile = "v1\u{1b}]0;title\u{7}\u{1b}[2J\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\\u{9b}31m";
        let t = term(hostile, 500);
        assert!(!t.chars().any(|c| c.is_control()), "{t:?}");
        assert_eq!(
            t,
            "v1⟨U+001B⟩]0;title⟨U+0007⟩⟨U+001B⟩[2J⟨U+001B⟩]8;;http://x⟨U+001B⟩\\link⟨U+001B⟩]8;;⟨U+001B⟩\\⟨U+009B⟩31m"
        );
        // an error list keeps its lines, each made visible
        assert_eq!(
            visible_lines("2 errors:\r\n  a\u{1b}[2J\n  b\u{3164}"),
            "2 errors:\n  a⟨U+001B⟩[2J\n  b⟨U+3164⟩"
        );
    }

    #[test]
    fn gh_issue_references_are_inert_like_hash_references() {
        for (text, live) in [
            ("see GH-45 now", "GH-45"),
            ("gh-7", "gh-7"),
            ("(Gh-123)", "Gh-123"),
            ("org/repo#45", "#45"),
        ] {
            let m = md(text, 100);
            assert!(!m.contains(live), "{live:?} survived in {m:?}");
        }
        assert_eq!(md("GH-45", 100), "GH-&#8203;45");
        // only a digit after the dash makes a reference
        assert_eq!(md("gh-pages", 100), "gh-pages");
        assert_eq!(md("GH-", 100), "GH-");
    }

    #[test]
    fn no_line_of_output_can_be_a_workflow_command() {
        let hostile = "unknown variant `x\n::add-mask::tok\n  \t::stop-commands::t\r::set-output name=verdict::pass\n\u{3000}::error::x`, expected one of a ##[set-output name=v;]pass";
        let n = no_workflow_commands(hostile);
        for line in n.split(['\n', '\r']) {
            assert!(!line.trim_start().starts_with("::"), "{line:?} in {n:?}");
            assert!(!line.contains("##["), "{line:?}");
        }
        // line breaks and the rest of the text are kept; a `::` inside a line is harmless
        assert_eq!(n.lines().count(), hostile.lines().count());
        assert!(n.contains("\u{FF1A}:add-mask::tok"), "{n}");
        assert!(n.contains("\u{FF03}#[set-output"), "{n}");
        assert_eq!(no_workflow_commands("srv::tool a::b"), "srv::tool a::b");
        assert!(matches!(
            no_workflow_commands("plain text"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    // three findings of the fuzzers (fuzz/, scripts/fuzz.sh), kept as regressions
    #[test]
    fn the_arabic_letter_mark_is_shown_not_passed_through() {
        assert_eq!(visible("x\u{061C}y"), "x⟨U+061C⟩y");
    }

    #[test]
    fn an_empty_code_span_cannot_pair_up_with_the_next_one() {
        assert_eq!(md_code("", 10), "(empty)");
    }

    #[test]
    fn a_short_hash_never_cuts_a_character() {
        assert_eq!(short_hash("aaaaaaaaaaa\u{e9}zz", 12), "aaaaaaaaaaa\u{e9}");
    }
}
