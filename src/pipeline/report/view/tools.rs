//! The per-tool diagnostics as every renderer shows them: capped lists (the worst tools and
//! servers, the never-found tools, the worst confusion pairs, the hard negatives in a top 5 and
//! the confusions new since the baseline), so a page of 100,000 tools stays small. report.json
//! keeps the whole table.

use crate::pipeline::gate::NewConfusions;
use crate::pipeline::score::diagnostics::{ServerStat, ToolDiagnostics, ToolStat};
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

/// The first [`LIST_MAX`] of `items`.
pub fn cut<T>(items: &[T]) -> &[T] {
    &items[..items.len().min(LIST_MAX)]
}

/// The [`LIST_MAX`] items with the lowest Recall@5, then most often relevant, then by name.
fn worst<T>(items: &[T], key: impl Fn(&T) -> (f64, usize, &str)) -> Vec<&T> {
    let mut v: Vec<&T> = items.iter().collect();
    v.sort_by(|a, b| {
        let ((ra, na, ia), (rb, nb, ib)) = (key(a), key(b));
        ra.total_cmp(&rb).then(nb.cmp(&na)).then_with(|| ia.cmp(ib))
    });
    v.truncate(LIST_MAX);
    v
}

/// The per-tool diagnostics, cut for a page: its other lists are cut by [`cut`].
#[derive(Debug, Clone)]
pub struct ToolsView<'a> {
    pub d: &'a ToolDiagnostics,
    /// The [`LIST_MAX`] tools with the lowest Recall@5 (then most often relevant, then id).
    pub worst_tools: Vec<&'a ToolStat>,
    /// The [`LIST_MAX`] servers with the lowest Recall@5 (then most often relevant, then name).
    pub worst_servers: Vec<&'a ServerStat>,
    /// The confusion pairs the baseline does not have; `None` when it keeps none.
    pub new_confusions: Option<&'a NewConfusions>,
}

impl<'a> ToolsView<'a> {
    /// `None` when the report has no tool diagnostics (an older report, nothing measured).
    pub fn of(r: &'a RetrievalReport, new: Option<&'a NewConfusions>) -> Option<ToolsView<'a>> {
        let d = &r.tool_diagnostics;
        (!d.is_empty()).then(|| ToolsView {
            d,
            worst_tools: worst(&d.per_tool, |t| (t.recall_at_5, t.relevant_in, &t.tool)),
            worst_servers: worst(&d.per_server, |s| (s.recall_at_5, s.relevant_in, &s.server)),
            new_confusions: new,
        })
    }

    /// Confusion pairs in all; report.json keeps fewer when the list was cut.
    pub fn confusions_total(&self) -> usize {
        self.d.confusions_total.max(self.d.confusions.len())
    }

    /// The section's summary in words: "812 tools relevant to some query · 97 never in a top
    /// 5 · 1,234 confusion pairs · 12 hard negatives in a top 5 · 3 pairs new since the
    /// baseline".
    pub fn summary(&self) -> String {
        let d = self.d;
        let total = self.confusions_total();
        let kept = if d.confusions.len() < total {
            format!(" (report.json keeps the worst {})", d.confusions.len())
        } else {
            String::new()
        };
        let mut s = format!(
            "{} tools relevant to some query · {} never in a top 5 · {total} confusion pair(s){kept} · {} hard negative(s) in a top 5",
            d.per_tool.len(),
            d.never_found.len(),
            d.hard_negatives_in_top_5.len()
        );
        if let Some(n) = self.new_confusions {
            s.push_str(&format!(" · {} pair(s) new since the baseline", n.total));
        }
        if d.runs > 1 {
            s.push_str(&format!(" (counts over {} runs)", d.runs));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::score::diagnostics::ConfusionPair;

    #[test]
    fn a_cut_confusion_list_says_its_total_and_how_many_are_kept() {
        let pair = ConfusionPair {
            wanted: "s:a".into(),
            taken: "s:b".into(),
            queries: 1,
            occurrences: 1,
            examples: Vec::new(),
        };
        let mut d = ToolDiagnostics {
            runs: 1,
            confusions_total: 92_806,
            confusions: vec![pair; 10_000],
            ..ToolDiagnostics::default()
        };
        let v = |d: &ToolDiagnostics| {
            let v = ToolsView {
                d,
                worst_tools: Vec::new(),
                worst_servers: Vec::new(),
                new_confusions: None,
            };
            v.summary()
        };
        let summary = v(&d);
        assert!(
            summary.contains(" · 92806 confusion pair(s) (report.json keeps the worst 10000) · "),
            "{summary}"
        );
        d.confusions.truncate(32);
        d.confusions_total = 32;
        assert!(v(&d).contains(" · 32 confusion pair(s) · "));
    }
}
