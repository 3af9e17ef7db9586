//! Sizing Markdown for GitHub's limits: a comment body is at most 65,536 characters, a check-run
//! summary or text at most 65,535, a job summary at most 1 MiB. Whole sections are dropped,
//! largest first, before anything is cut; the marker and the closing link always stay.

/// GitHub's comment limit, in characters.
pub const COMMENT_MAX: usize = 65_536;
/// Check-run `output.summary` / `output.text` limit, in characters.
pub const CHECK_TEXT_MAX: usize = 65_535;
/// Job summary limit per step, in bytes (over it, GitHub drops the whole summary).
pub const SUMMARY_MAX_BYTES: usize = 1024 * 1024;

/// Splits Markdown into sections: a heading (`#`) or a `<details>` block starts a new one.
fn sections(md: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in md.split_inclusive('\n') {
        let starts = line.starts_with('#') || line.starts_with("<details");
        match out.last_mut() {
            Some(cur) if !starts => cur.push_str(line),
            _ => out.push(line.to_string()),
        }
    }
    out
}

pub fn chars(s: &str) -> usize {
    s.chars().count()
}

/// `head` + the report sections + `tail`, within `max` (measured by `len`). The first section
/// (the verdict) is kept; other sections are dropped largest first, with a note saying so.
pub fn fit(head: &str, md: &str, tail: &str, max: usize, len: fn(&str) -> usize) -> String {
    let secs = sections(md);
    let mut keep: Vec<bool> = vec![true; secs.len()];
    let assemble = |keep: &[bool]| {
        let dropped = keep.iter().filter(|k| !**k).count();
        let mut s = String::from(head);
        for (sec, _) in secs.iter().zip(keep).filter(|(_, k)| **k) {
            s.push_str(sec);
        }
        if dropped > 0 {
            s.push_str(&format!("\n_{dropped} section(s) left out to fit GitHub's size limit; the full report is in the artifact._\n"));
        }
        s.push_str(tail);
        s
    };
    // the sections after the first, largest first (the later of two alike)
    let mut order: Vec<usize> = (1..secs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse((secs[i].len(), i)));
    let mut body = assemble(&keep);
    for i in order {
        if len(&body) <= max {
            break;
        }
        keep[i] = false;
        body = assemble(&keep);
    }
    if len(&body) > max {
        // one section is still too large: cut it, keeping the head and the tail
        let note = "\n…(cut to fit GitHub's size limit)\n";
        let budget = max.saturating_sub(len(head) + len(tail) + len(note) + 8);
        let middle: String = body[head.len()..body.len() - tail.len()]
            .chars()
            .take(budget)
            .collect();
        body = format!("{head}{middle}{note}{tail}");
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit_comment(head: &str, md: &str, tail: &str) -> String {
        fit(head, md, tail, COMMENT_MAX, chars)
    }

    fn fit_summary(md: &str, tail: &str) -> String {
        fit("", md, tail, SUMMARY_MAX_BYTES - 1024, str::len)
    }

    #[test]
    fn small_bodies_are_untouched() {
        let md = "## verdict\nok\n### a\nx\n";
        assert_eq!(
            fit_comment("<!-- m -->\n", md, "\nlink\n"),
            format!("<!-- m -->\n{md}\nlink\n")
        );
    }

    #[test]
    fn the_largest_sections_go_first_and_marker_and_link_stay() {
        let md = format!(
            "## verdict\nfail\n### small\n{}\n### huge\n{}\n<details>medium\n{}\n</details>\n",
            "s".repeat(100),
            "h".repeat(70_000),
            "m".repeat(1_000)
        );
        let b = fit_comment("<!-- evalgate:job -->\n", &md, "\n[report](url)\n");
        assert!(b.chars().count() <= COMMENT_MAX);
        assert!(b.starts_with("<!-- evalgate:job -->\n## verdict"));
        assert!(b.ends_with("\n[report](url)\n"));
        assert!(
            !b.contains("hhhh") && b.contains("### small") && b.contains("medium"),
            "only the huge section goes"
        );
        assert!(b.contains("1 section(s) left out"));
    }

    #[test]
    fn one_giant_section_is_cut_within_the_limit() {
        let md = format!("## verdict\n{}\n", "é".repeat(200_000));
        let b = fit_comment("<!-- m -->\n", &md, "\nlink\n");
        assert!(b.chars().count() <= COMMENT_MAX, "{}", b.chars().count());
        assert!(b.starts_with("<!-- m -->") && b.ends_with("link\n") && b.contains("cut to fit"));
        let s = fit_summary(&"x".repeat(3 * 1024 * 1024), "tail");
        assert!(s.len() < SUMMARY_MAX_BYTES && s.ends_with("tail"));
    }
}
