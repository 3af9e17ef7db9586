//! `report.html`: one self-contained page (no scripts, no network: a CSP forbids both).
//! minijinja auto-escapes every value because the template name ends in `.html`; the `clip`
//! filter also makes invisible characters visible and caps lengths.
//!
//! The charts are inline SVG built here from numbers. Dataset text reaches them only through
//! `charts::data` (visible, clipped, then escaped with minijinja's own HTML escaper), and only as the
//! text of `<title>`/`<desc>`/`<text>` elements or an `aria-label`: never as markup, an `href`
//! or a style. Everything else written into the SVG is a number or a literal of this file.

mod charts;

use super::doc::{self, Align, Cell, Format, Table};
use super::model::{QueryReport, Report};
use super::view::tools::cut;
use super::view::{Mark, ToolsView, View};
use super::{format, scorecard};
use crate::infra::text::sanitize;
use crate::pipeline::score::metrics::Metric;
use crate::pipeline::score::stats::Summary;
use charts::{confusion_chart, per_query_chart, radar_chart, spread_chart};
use minijinja::{Environment, Value, context};
use std::fmt::Write;

const TEMPLATE: &str = include_str!("../templates/report.html");

/// A value the template reads through serde.
fn serde<T: serde::Serialize>(v: T) -> Value {
    Value::from(minijinja::value::Serde(v))
}

/// `report.html`: one self-contained page with charts.
pub struct Html;

impl super::Exporter for Html {
    fn file_name(&self) -> &'static str {
        "report.html"
    }
    /// `report.html` of `r` from its view.
    fn render(&self, r: &Report, v: &View) -> anyhow::Result<String> {
        let mut env = Environment::new();
        // (none and undefined are no number, and no summary)
        env.add_filter("num", |v: Value| format::num(f64::try_from(v).ok()));
        env.add_filter("pct", |v: Value| {
            format!(
                "{:.1}",
                (f64::try_from(v).unwrap_or(0.0) * 100.0).clamp(0.0, 100.0)
            )
        });
        env.add_filter("meanci", |v: Value| {
            let s = serde_json::to_value(v).and_then(serde_json::from_value::<Summary>);
            format::mean_ci(s.ok().as_ref())
        });
        // (a string shows as itself)
        env.add_filter("clip", |v: Value, n: usize| {
            sanitize::clip(&sanitize::visible(&v.to_string()), n)
        });
        env.add_filter("clip_ends", |v: Value, n: usize| {
            sanitize::term_ends(v.as_str().unwrap_or_default(), n)
        });
        env.add_template("report.html", TEMPLATE)?;
        let safe = |s: Option<String>| s.map_or(Value::from(()), Value::from_safe_string);
        // bars, or a histogram above doc::QUERY_BARS_MAX queries: the chart decides, the caption follows
        let query_chart = r.retrieval.as_ref().and_then(doc::query_chart);
        let query_histogram = query_chart.as_ref().is_some_and(|qc| qc.sorted.is_none());
        let query_svg = query_chart.as_ref().map(per_query_chart);
        // (no retrieval: no rows, no chart)
        let runs = r.retrieval.as_ref().map_or(0, |rr| rr.runs_completed);
        let rows = &v.retrieval_rows;
        let spread_svg = spread_chart("spread-retrieval", "Retrieval metrics", runs, rows);
        // the retrieval metrics, each with every run's value
        let mut retrieval = doc::retrieval_table(rows);
        retrieval.head.push(("Per run".into(), Align::Left));
        for (cells, row) in retrieval.rows.iter_mut().zip(rows) {
            let runs = row.current.iter().flat_map(|s| &s.per_run);
            let runs: Vec<String> = runs.map(|x| format::num(*x)).collect();
            cells.push(runs.join(", ").into());
        }
        // per detector (in the report's order): its live rug-pulls, per-category rows and charts
        let detectors = v.detectors.iter().map(|dv| {
            let d = dv.report;
            context! {
                by => dv.by.clone(),
                live => doc::live_table(d).map(|t| table(&t)),
                categories => serde(&dv.categories),
                confusion => Value::from_safe_string(confusion_chart(d)),
                spread => safe(spread_chart(
                    "spread-detector",
                    "Detector metrics",
                    d.runs_completed,
                    &dv.all_rows
                )),
            }
        });
        let against = doc::detectors_table(&v.detectors);
        let html = env.get_template("report.html")?.render(context! {
            r => page(r),
            headline => &v.headline,
            failed => &v.failed,
            retrieval_table => table(&retrieval),
            overview_table => table(&doc::overview_table(v, r.runs)),
            against_table => (!against.rows.is_empty()).then(|| table(&against)),
            detectors => detectors.collect::<Vec<_>>(),
            latency => safe(r.retrieval.as_ref().map(|rr| Html.cell(&doc::latency_line(rr, r.runs)))),
            splits => safe(r.retrieval.as_ref().and_then(doc::splits_line).map(|c| Html.cell(&c))),
            regressions => v.regressions.as_ref().map(|reg| context! {
                title => reg.title,
                table => table(&doc::regressions_table(reg)),
            }),
            flips => r
                .gate
                .detector_flips
                .iter()
                .filter(|f| !f.flips.is_empty())
                .map(|f| context! {
                    detector => f.detector.clone(),
                    text => super::view::flips_text(f),
                    table => table(&doc::flips_table(f)),
                })
                .collect::<Vec<_>>(),
            tools => v.tools.as_ref().map(tools),
            probes => r.robustness.as_ref().map(|rb| table(&doc::probes_table(rb))),
            failure_text => r.failure.as_ref().map(|f| f.to_string()),
            query_svg => safe(query_svg),
            query_histogram => query_histogram,
            spread_svg => safe(spread_svg),
            // the scorecard: its line, table and radar chart (numbers and fixed names; the notes
            // are escaped by the template)
            scorecard_line => scorecard::line(r),
            scorecard_rows => r.scorecard.as_ref().map(|sc| sc.dimensions.iter().map(|d| context! {
                name => &d.name,
                points => scorecard::score(d),
                delta => scorecard::delta(sc.dimension_delta(&d.name)),
                note => &d.note,
            }).collect::<Vec<_>>()),
            scorecard_svg => safe(r.scorecard.as_ref().map(radar_chart)),
        })?;
        Ok(html)
    }
}

/// The page's tables as HTML: each cell kind shown here, once (dataset text made visible,
/// clipped and escaped by `charts::data`, evalgate's words escaped by `charts::esc`).
impl doc::Format for Html {
    fn cell(&self, c: &Cell) -> String {
        match c {
            Cell::Plain(s) => words(s),
            Cell::Id(s, max) => format!("<code>{}</code>", charts::data(s, *max)),
            Cell::Text(s, max) => charts::data(s, *max),
            Cell::Category(c) if c.is_known() => c.as_str().to_string(),
            Cell::Category(c) => charts::data(c.as_str(), 60),
            Cell::Mark(m) => m.text().to_string(),
            Cell::Seq(cells) => cells.iter().map(|c| self.cell(c)).collect(),
            Cell::Note(c, note) => {
                let (c, note) = (self.cell(c), self.cell(note));
                format!(r#"{c}<div class="small">{note}</div>"#)
            }
        }
    }
    fn table(&self, t: &Table) -> String {
        let mut o = String::from("<table><tr>");
        for (h, _) in &t.head {
            let _ = write!(o, "<th>{}</th>", self.cell(h));
        }
        o.push_str("</tr>\n");
        for row in &t.rows {
            o.push_str("<tr>");
            for (c, (_, align)) in row.iter().zip(&t.head) {
                let class = match (c, align) {
                    (Cell::Mark(Mark::Pass), _) => r#" class="pass""#,
                    (Cell::Mark(Mark::Fail), _) => r#" class="fail""#,
                    (Cell::Mark(Mark::NotGated), _) => r#" class="not_gated""#,
                    (_, Align::Right) => r#" class="n""#,
                    _ => "",
                };
                let _ = write!(o, "<td{class}>{}</td>", self.cell(c));
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table>");
        o
    }
}

/// evalgate's own words as element text: the five characters HTML gives a meaning escaped, and
/// `/` left as it is (minijinja's escaper also escapes it, which would show counts as
/// `31 &#x2f; 2` in the page's source; an escaped `&` is `&amp;`, so no text turns into one).
fn words(s: &str) -> String {
    charts::esc(s).replace("&#x2f;", "/")
}

/// `t` as a table of the page: a string made only by [`Html`]'s [`doc::Format`].
fn table(t: &Table) -> Value {
    Value::from_safe_string(Html.table(t))
}

/// The per-tool section: its summary, its lists with their titles (the words of report.md's),
/// the never-found tools.
fn tools(t: &ToolsView) -> Value {
    let (lists, hard) = doc::tool_lists(t);
    let listed = |doc::Listed(title, shown, table): &doc::Listed| {
        let body = table.as_ref().map(|t| Html.table(t));
        let body = body.unwrap_or_else(|| r#"<p class="small">None.</p>"#.into());
        format!("<h3>{} ({})</h3>\n{body}", words(title), words(shown))
    };
    // the pairs, then a blank line before the worst tools and servers (the last two)
    let (pairs, worst) = lists.split_at(lists.len() - 2);
    let pairs: String = pairs.iter().map(|l| listed(l) + "\n").collect();
    let worst = worst.iter().map(listed).collect::<Vec<_>>().join("\n");
    let never = cut(&t.d.never_found);
    let total = t.d.never_found.len();
    let names = doc::joined(never, ", ", |s| doc::id(s));
    context! {
        summary => t.summary(),
        pairs => Value::from_safe_string(pairs),
        worst => Value::from_safe_string(worst),
        never_found => (!never.is_empty()).then(|| Value::from_safe_string(Html.cell(&names))),
        never_found_total => total,
        never_found_more => total - never.len(),
        hard_negatives => hard.as_ref().map(|h| Value::from_safe_string(listed(h))),
    }
}

/// What the template reads of the report: not its raw observations, which the page never
/// shows and which would otherwise all be turned into template values.
fn page(r: &Report) -> Value {
    let retrieval = r.retrieval.as_ref().map(|rr| {
        context! {
            retriever => rr.retriever.as_str(),
            corpus_version => rr.corpus_version.as_str(),
            queries => rr.queries,
            depth => rr.depth,
            requested => rr.requested,
            runs_completed => rr.runs_completed,
            per_query => serde(listed_queries(&rr.per_query)),
            per_query_total => rr.per_query.len(),
        }
    });
    let security = r.security.as_ref().map(|s| {
        context! {
            entries => s.entries,
            categories => serde(&s.categories),
            detectors => serde(&s.detectors),
        }
    });
    context! {
        evalgate_version => r.evalgate_version.as_str(),
        command => r.command.as_str(),
        runs => r.runs,
        datasets => serde(&r.datasets),
        dataset_profile => r.dataset_profile.as_str(),
        retrieval => retrieval,
        security => security,
        robustness => serde(&r.robustness),
        gate => serde(&r.gate),
        failure => serde(&r.failure),
        warnings => serde(&r.warnings),
    }
}

/// Most queries the page lists one by one: a larger set lists its lowest-scoring ones (every
/// query stays in report.json), so the page of 20,000 queries stays a few megabytes.
pub const HTML_QUERY_ROWS: usize = 1000;

/// The queries the page lists: all of them in the report's order, or the
/// [`HTML_QUERY_ROWS`] with the lowest nDCG@10 (then Recall@5, then id), worst first.
fn listed_queries(all: &[QueryReport]) -> Vec<&QueryReport> {
    if all.len() <= HTML_QUERY_ROWS {
        return all.iter().collect();
    }
    let key = |q: &QueryReport| {
        (
            q.metrics.get(Metric::NdcgAt10).unwrap_or(-1.0),
            q.metrics.get(Metric::RecallAt5).unwrap_or(-1.0),
        )
    };
    let order = |a: &&QueryReport, b: &&QueryReport| {
        let ((an, a5), (bn, b5)) = (key(a), key(b));
        an.total_cmp(&bn)
            .then(a5.total_cmp(&b5))
            .then_with(|| a.id.cmp(&b.id))
    };
    // the worst are selected before they are sorted (query ids are unique, so the order is
    // total and the result is that of sorting all of them)
    let mut qs: Vec<&QueryReport> = all.iter().collect();
    qs.select_nth_unstable_by(HTML_QUERY_ROWS - 1, order);
    qs.truncate(HTML_QUERY_ROWS);
    qs.sort_unstable_by(order);
    qs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::report::Exporter;

    /// The fixture's retrieval with `n` queries, the i-th scoring nDCG@10 `(i % 997) / 997`.
    fn with_queries(n: usize) -> Report {
        let mut r = super::super::model::fixture();
        let rr = r.retrieval.as_mut().expect("the fixture has retrieval");
        let q0 = rr.per_query[0].clone();
        rr.per_query = (0..n)
            .map(|i| {
                let mut q = q0.clone();
                q.id = format!("q{i:05}").into();
                q.query =
                    format!("synthetic query {i}: find the tool that lists the open items").into();
                q.metrics.ndcg_at_10 = (i % 997) as f64 / 997.0;
                q.metrics.recall_at_5 = ((i % 11) as f64 / 10.0).min(1.0);
                q
            })
            .collect();
        rr.queries = n;
        r
    }

    fn listed_ids(html: &str) -> Vec<&str> {
        let list = &html[html.find("<details><summary>").expect("the query list")..];
        let list = &list[..list.find("</details>").unwrap()];
        list.split(r#"<tr><td class="id">"#)
            .skip(1)
            .map(|row| row[..row.find('<').unwrap()].trim())
            .collect()
    }

    #[test]
    fn a_page_of_20000_queries_lists_the_worst_1000_draws_a_histogram_and_stays_under_3_mb() {
        let report = with_queries(20_000);
        let html = Html.render(&report, &View::of(&report)).unwrap();
        // every query with its own row and bar was 25 MB at this size
        assert!(html.len() < 3_000_000, "{} bytes", html.len());
        assert!(html.contains("The 1000 lowest-scoring of 20000 queries"));
        let ids = listed_ids(&html);
        assert_eq!(ids.len(), HTML_QUERY_ROWS);
        // the lowest nDCG@10 ((i % 997) / 997 for query i), worst first
        let ndcg = |id: &str| (id[1..].parse::<usize>().unwrap() % 997) as f64 / 997.0;
        let listed: Vec<f64> = ids.iter().map(|id| ndcg(id)).collect();
        assert!(listed.windows(2).all(|w| w[0] <= w[1]), "worst first");
        assert_eq!(listed[0], 0.0);
        // 1000 of 20000: the 21 queries of each of the lowest 47 values, and 13 of the 48th
        assert_eq!(listed[HTML_QUERY_ROWS - 1], 47.0 / 997.0);
        // exactly the first 1000 of all the queries sorted (nDCG@10, then Recall@5, then id)
        let mut all: Vec<_> = report
            .retrieval
            .as_ref()
            .unwrap()
            .per_query
            .iter()
            .collect();
        all.sort_by(|a, b| {
            let k = |q: &super::QueryReport| (q.metrics.ndcg_at_10, q.metrics.recall_at_5);
            let ((an, a5), (bn, b5)) = (k(a), k(b));
            an.total_cmp(&bn)
                .then(a5.total_cmp(&b5))
                .then(a.id.cmp(&b.id))
        });
        let sorted: Vec<&str> = all[..HTML_QUERY_ROWS]
            .iter()
            .map(|q| q.id.as_str())
            .collect();
        assert_eq!(ids, sorted);
        assert!(html.contains("Recall@5 of the 20000 queries as a histogram"));
        assert!(!html.contains("<title>q19999"), "no bar per query");
        // the caption says what the chart drew
        assert!(html.contains("in ten bins of 0.1 (too many queries for a bar each"));
        assert!(!html.contains("One bar per query"));
    }

    #[test]
    fn a_page_of_up_to_1000_queries_lists_every_query_in_the_reports_order() {
        let r = with_queries(HTML_QUERY_ROWS);
        let html = Html.render(&r, &View::of(&r)).unwrap();
        let ids = listed_ids(&html);
        assert_eq!(ids.len(), HTML_QUERY_ROWS);
        assert_eq!(&ids[..2], ["q00000", "q00001"]);
        assert!(html.contains("Every query: retrieved vs relevant (1000)"));
        assert!(html.contains("<title>q00999: Recall@5"), "a bar per query");
        assert!(html.contains("One bar per query (1000), best to worst"));
        assert!(!html.contains("too many queries for a bar each"));
    }
}
