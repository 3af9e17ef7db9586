//! Neutralising hostile dataset text before it reaches a reader. Dataset text contains prompt
//! injections by design: it must never become live HTML, Markdown, a mention, a link, an image
//! or a terminal escape sequence, and it must not hide behind invisible characters.

use crate::sut::rules::is_hidden_char;

/// Longest dataset string shown in a table cell, in characters.
pub const CELL_MAX: usize = 160;

/// Makes invisible and control characters visible as `⟨U+XXXX⟩`; newlines and tabs become
/// spaces.
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\n' || c == '\t' || c == '\r' {
            out.push(' ');
        } else if is_hidden_char(c) || c.is_control() || ('\u{2028}'..='\u{2029}').contains(&c) {
            out.push_str(&format!("⟨U+{:04X}⟩", c as u32));
        } else {
            out.push(c);
        }
    }
    out
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
/// links, autolinks, images, mentions, issue references, emphasis or table breaks).
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
            ':' if chars.get(i + 1) == Some(&'/') => out.push_str(":&#8203;"),
            '.' if i >= 3
                && chars[i - 3..i]
                    .iter()
                    .collect::<String>()
                    .eq_ignore_ascii_case("www") =>
            {
                out.push_str("&#8203;.")
            }
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
/// spans); backticks and table pipes are replaced by look-alikes so the span cannot be closed.
pub fn md_code(s: &str, max: usize) -> String {
    let t: String = clip(&visible(s), max)
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

/// Failure text for a GitHub plain-text field: as [`line`], both ends kept ([`clip_ends`]).
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
            '-' if i >= 2
                && chars[i - 2..i]
                    .iter()
                    .collect::<String>()
                    .eq_ignore_ascii_case("gh")
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
