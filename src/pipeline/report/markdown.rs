//! `report.md`: the delta table a pull-request reviewer reads. Every dataset string goes
//! through [`sanitize::md`].

use super::doc::{self, Align, Cell, Format, Table};
use super::model::*;
use super::view::{self, View};
use crate::infra::text::sanitize;
use crate::infra::text::sanitize::{md, md_code, md_ends};
use std::fmt::Write;

pub fn verdict_badge(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✅ pass",
        Verdict::Fail => "❌ fail",
        Verdict::NoBaseline => "⚪ no baseline (report only)",
        Verdict::Error => "⚠️ error: system under test failed",
    }
}

/// `report.md`: the delta table a pull-request reviewer reads.
pub struct Markdown;

impl Format for Markdown {
    fn cell(&self, c: &Cell) -> String {
        match c {
            Cell::Plain(s) => s.clone(),
            Cell::Id(s, max) => md_code(s, *max),
            Cell::Text(s, max) => md(s, *max),
            // spec-065's six as they are, an open one (a name the security corpus chose:
            // dataset text) neutralised
            Cell::Category(c) if c.is_known() => c.as_str().to_string(),
            Cell::Category(c) => md(c.as_str(), 60),
            Cell::Mark(m) => m.text().to_string(),
            Cell::Seq(cells) => cells.iter().map(|c| self.cell(c)).collect(),
            Cell::Note(c, note) => format!("{}<br><sub>{}</sub>", self.cell(c), self.cell(note)),
        }
    }
    fn table(&self, t: &Table) -> String {
        let row = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut o = row(t.head.iter().map(|(h, _)| self.cell(h)).collect());
        o.push('|');
        for (_, align) in &t.head {
            o.push_str(match align {
                Align::Left => "---|",
                Align::Right => "---:|",
                Align::Mark => ":---|",
            });
        }
        o.push('\n');
        for r in &t.rows {
            o.push_str(&row(r.iter().map(|c| self.cell(c)).collect()));
        }
        o
    }
}

impl super::Exporter for Markdown {
    fn file_name(&self) -> &'static str {
        "report.md"
    }
    fn render(&self, report: &Report, view: &View) -> anyhow::Result<String> {
        Ok(render_view(report, view))
    }
}

/// `report.md` of `r`.
pub fn render(r: &Report) -> String {
    render_view(r, &View::of(r))
}

/// `report.md` of `r` from its view.
pub fn render_view(r: &Report, v: &View) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "## evalgate: {}\n", verdict_badge(r.gate.verdict));
    let _ = writeln!(o, "**{}**\n", md(&v.headline, 600));
    if v.failed.len() > 1 {
        for f in &v.failed {
            let _ = writeln!(o, "- ✗ {}", md(f, 400));
        }
        let _ = writeln!(o);
    }
    if let Some(f) = &r.failure {
        let f = md_ends(&f.to_string(), 600);
        let _ = writeln!(o, "> **System under test failed:** {f}\n");
    }
    let base = r.gate.baseline.as_deref();
    let base = base.map_or("none".to_string(), |b| md_code(b, 200));
    let _ = writeln!(
        o,
        "Baseline: {base} · runs: {} · evalgate {} · datasets profile {}\n",
        r.runs,
        md(&r.evalgate_version, 40),
        r.dataset_profile.as_str()
    );
    if let Some(line) = super::scorecard::line(r) {
        // numbers and fixed names only (docs/scorecard.md)
        let _ = writeln!(o, "{line}\n");
    }
    if let Some(rr) = &r.retrieval {
        let _ = writeln!(
            o,
            "### Tool discovery · retriever {} · {} queries · corpus {}\n",
            md_code(&rr.retriever, 80),
            rr.queries,
            md_code(&rr.corpus_version, 80)
        );
        o.push_str(&Markdown.table(&doc::retrieval_table(&v.retrieval_rows)));
        let latency = Markdown.cell(&doc::latency_line(rr, r.runs));
        let _ = write!(o, "\n{latency}\n\n");
        if let Some(line) = doc::splits_line(rr) {
            let _ = writeln!(o, "{}\n", Markdown.cell(&line));
        }
    }
    if let Some(s) = &r.security {
        let _ = writeln!(o, "### Security detectors · {} entries\n", s.entries);
        o.push_str(&Markdown.table(&doc::overview_table(v, r.runs)));
        // every detector's numbers that have a baseline value or a limit; the detectors whose
        // rows all stand unchanged fold into one line
        let (unchanged, changed): (Vec<_>, Vec<_>) = v.detectors.iter().partition(|d| d.unchanged);
        let against = doc::detectors_table(changed);
        if !against.rows.is_empty() {
            let _ = write!(o, "\n{}", Markdown.table(&against));
        }
        if !unchanged.is_empty() {
            let n = unchanged.len();
            let flips = (!r.gate.detector_flips.is_empty()).then_some(", no verdict flipped");
            let names = doc::joined(&unchanged, ", ", |d| {
                Cell::Id(d.report.detector.clone(), 60)
            });
            let _ = writeln!(
                o,
                "\n{n} detector{} unchanged against the baseline (every Δ 0, every check held{}): {}",
                if n == 1 { "" } else { "s" },
                flips.unwrap_or_default(),
                Markdown.cell(&names)
            );
        }
        // per-entry verdicts that flipped since the baseline, with McNemar's test
        for f in r.gate.detector_flips.iter().filter(|f| !f.flips.is_empty()) {
            let _ = writeln!(
                o,
                "\n<details><summary>{}: verdicts flipped since the baseline: {}</summary>\n",
                md_code(&f.detector, 60),
                view::flips_text(f)
            );
            o.push_str(&Markdown.table(&doc::flips_table(f)));
            let (listed, total) = (f.flips.len(), f.newly_missed + f.newly_flagged + f.fixed);
            if total > listed {
                let _ = writeln!(
                    o,
                    "\n{listed} of {total} flips listed (every entry's outcome is in report.json)"
                );
            }
            let _ = writeln!(o, "\n</details>");
        }
        // per-category recall / flag rate, one column per detector
        let _ = write!(o, "\n{}", Markdown.table(&doc::category_table(v)));
        for d in &s.detectors {
            let Some(live) = doc::live_table(d) else {
                continue;
            };
            let _ = writeln!(
                o,
                "\n**{}**: rug-pulls played live (changed after approval, then put back){}\n",
                md(&d.detector, 40),
                view::per_run_note(d.runs_completed)
            );
            o.push_str(&Markdown.table(&live));
        }
        let _ = writeln!(o);
    }
    if let Some(reg) = &v.regressions {
        let table = Markdown.table(&doc::regressions_table(reg));
        details(&mut o, reg.title, &table);
    }
    if let Some(t) = &v.tools {
        let summary = format!("Per-tool diagnostics: {}", t.summary());
        details(&mut o, &summary, &tools_section(t));
    }
    if let Some(rb) = &r.robustness {
        let summary = Markdown.cell(&doc::probes_summary(rb));
        details(&mut o, &summary, &Markdown.table(&doc::probes_table(rb)));
    }
    if !r.warnings.is_empty() {
        let list = r.warnings.iter().map(|w| format!("- {}\n", md(w, 400)));
        let summary = format!("Warnings ({})", r.warnings.len());
        details(&mut o, &summary, &list.collect::<String>());
    }
    let sets = r.datasets.iter().map(|d| {
        format!(
            "{} {} ({} items, sha256 {})",
            md(&d.kind, 20),
            md_code(d.version.as_deref().unwrap_or("unversioned"), 60),
            d.items,
            md(&sanitize::short_hash(&d.sha256, 12), 12)
        )
    });
    let sets = sets.collect::<Vec<_>>().join(" · ");
    let _ = writeln!(o, "<sub>Datasets: {sets}</sub>");
    o
}

/// A collapsed section: `summary` over `body`, both Markdown already.
fn details(o: &mut String, summary: &str, body: &str) {
    let _ = write!(
        o,
        "<details><summary>{summary}</summary>\n\n{body}\n</details>\n\n"
    );
}

/// The per-tool diagnostics (collapsed by the caller): confusions (new ones first), the worst
/// tools and servers, the never-found tools, the hard negatives in a top 5. Every list is cut
/// at [`view::tools::LIST_MAX`]; report.json has them whole.
fn tools_section(t: &view::ToolsView) -> String {
    let mut o = String::from(
        "A tool is found when it is in the top 5; a confusion is a relevant tool that missed the top 5 while a tool not relevant to the query was in it. Full tables: `retrieval.tool_diagnostics` in report.json.\n\n",
    );
    let (lists, hard) = doc::tool_lists(t);
    let listed = |doc::Listed(title, shown, table): &doc::Listed| {
        let body = table.as_ref().map(|t| Markdown.table(t));
        let body = body.unwrap_or_else(|| "None.\n".into());
        format!("**{title}** ({shown}):\n\n{body}")
    };
    o += &lists.iter().map(listed).collect::<Vec<_>>().join("\n");
    let never = view::tools::cut(&t.d.never_found);
    if !never.is_empty() {
        let names = Markdown.cell(&doc::joined(never, ", ", |s| doc::id(s)));
        let total = t.d.never_found.len();
        let _ = write!(o, "\n**Never in a top 5** ({total}): {names}");
        let more = total - never.len();
        if more > 0 {
            let _ = write!(o, " and {more} more");
        }
        o.push('\n');
    }
    if let Some(h) = &hard {
        o = o + "\n" + &listed(h);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A published report.json comes from an untrusted PR's artifact: its free-form fields must
    /// not break the renderer or reach the comment as markup (found by fuzz/published_report).
    #[test]
    fn hostile_report_fields_are_inert_and_never_panic() {
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../../../fuzz/fixtures/report_template.json"))
                .unwrap();
        v["evalgate_version"] = "<img src=x>".into();
        v["datasets"][0]["kind"] = "<b>k</b>".into();
        v["datasets"][0]["sha256"] = "aaaaaaaaaaa\u{e9}".into();
        v["gate"]["checks"][0]["metric"] = "<img src=y>".into();
        v["gate"]["checks"][0]["status"] = "fail".into();
        let r: Report = serde_json::from_value(v).unwrap();
        let md = render(&r);
        // the unknown metric name is shown escaped (in the failed checks), never as markup
        let outside_code: String = md.split('`').step_by(2).collect();
        assert!(!outside_code.contains("<img"), "{md}");
        assert!(!outside_code.contains("<b>"), "{md}");
        assert!(md.contains("- ✗ &lt;img src=y&gt; fell"), "{md}");
        assert!(md.contains("evalgate &lt;img src=x&gt;"), "{md}");
    }

    /// A security corpus may name its own categories (open categories): dataset text, printed
    /// raw in the per-category rows until fuzz/published_report found `<` there (issue 17).
    #[test]
    fn open_category_names_are_neutralised_in_every_renderer() {
        let hostile = "<img src=x onerror=alert(1)> @octocat GH-45 \u{3164}\u{1b}[2J";
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../../../fuzz/fixtures/report_template.json"))
                .unwrap();
        let d = &mut v["security"]["detectors"][0];
        d["scope"][0] = hostile.into();
        // an open category with an underscore: escaped once in the Scope column
        d["scope"][1] = "unicode_smuggling".into();
        d["per_category"][0]["category"] = hostile.into();
        d["hard_negatives_by_resemblance"][0]["category"] = hostile.into();
        d["entries"][0]["category"] = hostile.into();
        let live = &mut v["security"]["detectors"][1]["live"];
        live["per_category"][0]["category"] = hostile.into();
        live["per_category"][0]["resembles"] = hostile.into();
        let r: Report = serde_json::from_value(v).unwrap();
        let md = render(&r);
        assert!(
            md.contains("&lt;img src=x onerror=alert\\(1\\)&gt;"),
            "{md}"
        );
        assert!(md.contains(", unicode\\_smuggli"), "{md}");
        assert!(!md.contains("unicode\\\\"), "{md}");
        let html =
            super::super::Exporter::render(&super::super::html::Html, &r, &View::of(&r)).unwrap();
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
        let term = super::super::terminal::render_view(&r, &View::of(&r), false);
        for (name, out) in [("md", &md), ("html", &html), ("terminal", &term)] {
            // (`<img` is plain text on a terminal)
            assert!(name == "terminal" || !out.contains("<img"), "{name}: {out}");
            assert!(
                !out.contains('\u{3164}') && !out.contains('\u{1b}'),
                "{name}: {out}"
            );
        }
        assert!(!md.contains("@octocat") && !md.contains("GH-45"), "{md}");
    }

    /// Tool ids, server names and query ids are dataset text: the per-tool section shows them
    /// inert in every renderer, and its lists stay cut at 20 rows.
    #[test]
    fn the_per_tool_section_neutralises_hostile_ids_and_is_capped() {
        let hostile = "<img src=x onerror=alert(1)> @octocat GH-45 `x` | \u{3164}\u{1b}[2J";
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../../../fuzz/fixtures/report_template.json"))
                .unwrap();
        let td = &mut v["retrieval"]["tool_diagnostics"];
        td["per_tool"][1]["tool"] = hostile.into();
        td["per_server"][0]["server"] = hostile.into();
        td["never_found"][0] = hostile.into();
        td["confusions"][0]["taken"] = hostile.into();
        td["hard_negatives_in_top_5"][0]["query"] = hostile.into();
        // 30 more pairs: the page lists 20
        let pair = td["confusions"][1].clone();
        for i in 0..30 {
            let mut p = pair.clone();
            p["taken"] = format!("s:extra{i:02}").into();
            td["confusions"].as_array_mut().unwrap().push(p);
        }
        v["gate"]["new_confusions"]["pairs"][0]["wanted"] = hostile.into();
        let r: Report = serde_json::from_value(v).unwrap();
        let md = render(&r);
        assert!(md.contains("<details><summary>Per-tool diagnostics: 2 tools relevant to some query · 1 never in a top 5 · 32 confusion pair(s) · 1 hard negative(s) in a top 5 · 1 pair(s) new since the baseline (counts over 2 runs)</summary>"), "{md}");
        assert!(
            md.contains("**Confusions new since the baseline** (all 1)"),
            "{md}"
        );
        assert!(md.contains("**Confusions** (the worst 20 of 32"), "{md}");
        assert!(
            md.contains("`s:extra17`") && !md.contains("`s:extra18`"),
            "{md}"
        );
        let html =
            super::super::Exporter::render(&super::super::html::Html, &r, &View::of(&r)).unwrap();
        assert!(
            html.contains("Confusions (the worst 20 of 32, most queries first)"),
            "{html}"
        );
        assert!(
            html.contains("Confusions new since the baseline (all 1)"),
            "{html}"
        );
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
        let term = super::super::terminal::render_view(&r, &View::of(&r), false);
        assert!(term.contains("per tool: 2 tools relevant"), "{term}");
        assert!(term.contains("new confusion: <img src=x"), "{term}");
        // ids are code spans (inert on GitHub), which nothing closes early
        let outside_code: String = md.split('`').step_by(2).collect();
        assert!(
            md.contains("`<img src=x onerror=alert(1)> @octocat GH-45 ˋxˋ ¦ ⟨U+3164⟩⟨U+001B⟩[2J`"),
            "{md}"
        );
        for bad in ["<img", "@octocat", "GH-45", "onerror"] {
            assert!(!outside_code.contains(bad), "{bad}: {md}");
        }
        for line in md.lines().filter(|l| l.contains("onerror")) {
            assert_eq!(line.matches('`').count() % 2, 0, "{line}");
        }
        for (name, out) in [("md", &md), ("html", &html), ("terminal", &term)] {
            assert!(name != "html" || !out.contains("<img"), "{name}: {out}");
            assert!(
                !out.contains('\u{3164}') && !out.contains('\u{1b}'),
                "{name}: {out}"
            );
        }
    }
}
