//! The per-tool diagnostics as every renderer shows them: capped lists (the worst tools and
//! servers, the never-found tools, the worst confusion pairs, the hard negatives in a top 5 and
//! the confusions new since the baseline), so a page of 100,000 tools stays small. report.json
//! keeps the whole table.

use crate::pipeline::gate::NewConfusions;
use crate::pipeline::score::diagnostics::{
    ConfusionPair, HardNegativeHit, ServerStat, ToolDiagnostics, ToolStat,
};
use crate::pipeline::score::model::RetrievalReport;

/// Most rows of each list in Markdown and HTML.
pub const LIST_MAX: usize = 20;

/// "the worst 20 of 1234" (`which` is `worst` or `first`) or "all 12": how much of a list
/// is shown.
pub fn shown(which: &str, listed: usize, total: usize) -> String {
    if listed < total {
        format!("the {which} {listed} of {total}")
    } else {
        format!("all {total}")
    }
}

/// The [`LIST_MAX`] items with the lowest Recall@5, then most often relevant, then by name.
fn worst<T: Clone>(items: &[T], key: impl Fn(&T) -> (f64, usize, &str)) -> Vec<T> {
    let mut v: Vec<&T> = items.iter().collect();
    v.sort_by(|a, b| {
        let ((ra, na, ia), (rb, nb, ib)) = (key(a), key(b));
        ra.total_cmp(&rb).then(nb.cmp(&na)).then_with(|| ia.cmp(ib))
    });
    v.into_iter().take(LIST_MAX).cloned().collect()
}

/// The per-tool diagnostics, cut for a page.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ToolsView {
    /// Runs the counts are summed over.
    pub runs: usize,
    /// Tools relevant to at least one query.
    pub tools: usize,
    /// The [`LIST_MAX`] tools with the lowest Recall@5 (then most often relevant, then id).
    pub worst_tools: Vec<ToolStat>,
    pub servers: usize,
    /// The [`LIST_MAX`] servers with the lowest Recall@5 (then most often relevant, then name).
    pub worst_servers: Vec<ServerStat>,
    /// The first [`LIST_MAX`] never-found tools (most often relevant first) and how many
    /// there are.
    pub never_found: Vec<String>,
    pub never_found_total: usize,
    /// The [`LIST_MAX`] worst confusion pairs and how many there are.
    pub confusions: Vec<ConfusionPair>,
    pub confusions_total: usize,
    /// How many of them report.json keeps (fewer than the total when the list was cut).
    pub confusions_kept: usize,
    /// The first [`LIST_MAX`] hard negatives in a top 5 and how many there are.
    pub hard_negatives: Vec<HardNegativeHit>,
    pub hard_negatives_total: usize,
    /// The confusion pairs the baseline does not have; `None` when it keeps none.
    pub new_confusions: Option<NewConfusions>,
}

impl ToolsView {
    /// `None` when the report has no tool diagnostics (an older report, nothing measured).
    pub fn of(r: &RetrievalReport, new: Option<&NewConfusions>) -> Option<ToolsView> {
        let d: &ToolDiagnostics = &r.tool_diagnostics;
        if d.is_empty() {
            return None;
        }
        let never_found = d.never_found.iter().take(LIST_MAX);
        let hard_negatives = d.hard_negatives_in_top_5.iter().take(LIST_MAX);
        Some(ToolsView {
            runs: d.runs,
            tools: d.per_tool.len(),
            worst_tools: worst(&d.per_tool, |t| (t.recall_at_5, t.relevant_in, &t.tool)),
            servers: d.per_server.len(),
            worst_servers: worst(&d.per_server, |s| (s.recall_at_5, s.relevant_in, &s.server)),
            never_found: never_found.map(|t| t.to_string()).collect(),
            never_found_total: d.never_found.len(),
            confusions: d.confusions.iter().take(LIST_MAX).cloned().collect(),
            confusions_total: d.confusions_total.max(d.confusions.len()),
            confusions_kept: d.confusions.len(),
            hard_negatives: hard_negatives.cloned().collect(),
            hard_negatives_total: d.hard_negatives_in_top_5.len(),
            new_confusions: new.cloned(),
        })
    }

    /// The section's summary in words: "812 tools relevant to some query · 97 never in a top
    /// 5 · 1,234 confusion pairs · 12 hard negatives in a top 5 · 3 pairs new since the
    /// baseline".
    pub fn summary(&self) -> String {
        let kept = if self.confusions_kept < self.confusions_total {
            format!(" (report.json keeps the worst {})", self.confusions_kept)
        } else {
            String::new()
        };
        let mut s = format!(
            "{} tools relevant to some query · {} never in a top 5 · {} confusion pair(s){kept} · {} hard negative(s) in a top 5",
            self.tools, self.never_found_total, self.confusions_total, self.hard_negatives_total
        );
        if let Some(n) = &self.new_confusions {
            s.push_str(&format!(" · {} pair(s) new since the baseline", n.total));
        }
        if self.runs > 1 {
            s.push_str(&format!(" (counts over {} runs)", self.runs));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_confusion_list_says_its_total_and_how_many_are_kept() {
        let v = ToolsView {
            runs: 1,
            tools: 812,
            confusions_total: 92_806,
            confusions_kept: 10_000,
            ..ToolsView::default()
        };
        assert!(
            v.summary()
                .contains(" · 92806 confusion pair(s) (report.json keeps the worst 10000) · "),
            "{}",
            v.summary()
        );
        let whole = ToolsView {
            confusions_total: 32,
            confusions_kept: 32,
            ..v
        };
        assert!(whole.summary().contains(" · 32 confusion pair(s) · "));
    }
}
