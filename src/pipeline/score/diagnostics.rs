//! Per-tool diagnostics: for every tool some query finds relevant, how often it is relevant,
//! how often it reaches the top 5 and its own recall; the same per server; the relevant tools
//! that never reach a top 5; the confusions (a relevant tool missed the top 5 while another
//! tool took a place there); and the hard negatives (grade-0 labels) that reach a top 5.
//!
//! Pure and reusable: [`Accumulator`] takes filtered lists one query at a time (how the scorer
//! feeds it while it scores). Nothing here reads a file or a clock.
//!
//! Definitions (over the filtered lists every metric sees; the cut is [`TOP_K`]) and how
//! `--runs N` sums counts: docs/metrics.md, "Tool discovery, per tool". The result is a function
//! of the observations in dataset order, so a merged sharded run (its observations joined back
//! in that order and scored again) gives the same table.

use crate::infra::text::Text;
use crate::pipeline::dataset::{Label, server_name};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The cut of "found" and of the confusions: the top 5.
pub const TOP_K: usize = 5;

/// Most example query ids kept per confusion pair.
pub const EXAMPLES_MAX: usize = 3;

/// Most confusion pairs a report (and so a baseline) keeps, worst first. Every pair of the v1
/// datasets (about 2,700) fits; a 50,000-query set makes over 100,000, which would be most of
/// its report.json.
pub const CONFUSIONS_MAX: usize = 10_000;

/// Per-tool diagnostics of tool discovery. "Found" means in the top 5 (`top_k`) of the
/// filtered ranked list, and confusions are the tools in that top 5; counts are summed over
/// runs (with one run they are queries).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDiagnostics {
    /// The cut: a tool is found when it is in the top `top_k` (5); confusions are taken from
    /// the same top 5.
    pub top_k: usize,
    /// Runs the counts are summed over (0: nothing was measured, or a report written before
    /// evalgate had these diagnostics).
    pub runs: usize,
    /// Every tool relevant (grade 1 or more) to at least one query, by tool id. Tools no query
    /// finds relevant are left out, so the table grows with the golden set, not the corpus.
    pub per_tool: Vec<ToolStat>,
    /// The same, aggregated per server (the `server` part of `server:tool`), by server name.
    pub per_server: Vec<ServerStat>,
    /// Tools relevant to some query and never in its top 5 in any run: most often relevant
    /// first, then by id.
    pub never_found: Vec<Text>,
    /// The confusion pairs: a relevant tool (`wanted`) missed the top 5 while a tool not
    /// relevant to the query (`taken`) was in it. Worst first: most queries, then most
    /// occurrences, then by ids. At most 10,000 (`confusions_total` counts them all): when cut,
    /// every pair with more queries than the last one kept is here.
    pub confusions: Vec<ConfusionPair>,
    /// Confusion pairs in all, listed or not.
    #[serde(default)]
    pub confusions_total: usize,
    /// Hard negatives (grade-0 labels: tools judged not relevant to the query) that reached
    /// the query's top 5, in golden-set order.
    pub hard_negatives_in_top_5: Vec<HardNegativeHit>,
}

/// One tool relevant to at least one query: how often it is relevant, how often it reaches the
/// top 5, its own recall and MRR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolStat {
    /// `server:tool`.
    pub tool: Text,
    /// The server the tool belongs to.
    pub server: Text,
    /// Queries it is relevant to (grade 1 or more), summed over runs.
    pub relevant_in: usize,
    /// Of those, the ones where it was in the top 5, summed over runs.
    pub found_in_top_5: usize,
    /// `found_in_top_5 / relevant_in`.
    pub recall_at_5: f64,
    /// Mean over the same queries of 1 / its rank (0 when it is not in the list).
    pub mrr: f64,
}

/// One server: its tools' diagnostics summed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerStat {
    /// The server's name.
    pub server: Text,
    /// Its tools relevant to at least one query.
    pub tools: usize,
    /// Of those, the ones never in a top 5.
    pub never_found: usize,
    /// Summed over its tools (and runs).
    pub relevant_in: usize,
    /// Summed over its tools (and runs): found in a top 5.
    pub found_in_top_5: usize,
    /// `found_in_top_5 / relevant_in`.
    pub recall_at_5: f64,
}

/// A relevant tool (`wanted`) that missed the top 5 while `taken`, not relevant to the query,
/// was in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConfusionPair {
    /// The relevant tool missing from the top 5 (`server:tool`).
    pub wanted: Text,
    /// The tool in the top 5 instead.
    pub taken: Text,
    /// Distinct queries where it happened (in any run).
    pub queries: usize,
    /// (query, run) pairs where it happened; `queries` with one run.
    pub occurrences: usize,
    /// The first query ids where it happened, in golden-set order (at most 3).
    pub examples: Vec<Text>,
}

/// A grade-0 label (a tool judged not relevant to the query) that reached the query's top 5.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HardNegativeHit {
    /// The golden query's id.
    pub query: Text,
    /// The hard-negative tool that reached its top 5.
    pub tool: Text,
    /// Runs in which it was in the top 5.
    pub runs: usize,
    /// Its best rank (1-based) over those runs.
    pub best_rank: usize,
}

impl ToolDiagnostics {
    /// Nothing measured (or a report from before these diagnostics).
    pub fn is_empty(&self) -> bool {
        self.runs == 0
    }

    /// The tool's row, if some query finds it relevant.
    pub fn tool(&self, id: &str) -> Option<&ToolStat> {
        self.per_tool
            .binary_search_by(|t| t.tool.as_str().cmp(id))
            .ok()
            .map(|i| &self.per_tool[i])
    }

    /// When the confusion list was cut: the number of queries of the last pair kept (a pair
    /// with more queries cannot be missing from it).
    pub fn confusions_cut_at(&self) -> Option<usize> {
        (self.confusions_total > self.confusions.len())
            .then(|| self.confusions.last().map_or(0, |p| p.queries))
    }
}

#[derive(Debug, Default)]
struct ToolAcc {
    relevant_in: usize,
    found: usize,
    rr_sum: f64,
}

/// Builds [`ToolDiagnostics`] one scored query at a time (the labels and the filtered ranked
/// list), borrowing both until [`Accumulator::finish`].
#[derive(Debug, Default)]
pub struct Accumulator<'a> {
    runs: BTreeSet<usize>,
    /// Every tool some query finds relevant, by id.
    tools: BTreeMap<&'a Text, ToolAcc>,
    /// By (wanted, taken): the occurrences, and the golden-set positions of the queries.
    pairs: HashMap<(&'a Text, &'a Text), (usize, BTreeSet<usize>)>,
    /// Each golden-set position's query id, as seen (for the pairs' examples).
    query_ids: HashMap<usize, &'a Text>,
    /// By (golden-set position, hard negative): the query id, the tool, runs, best rank.
    hard: BTreeMap<(usize, &'a str), (&'a Text, &'a Text, usize, usize)>,
}

impl<'a> Accumulator<'a> {
    /// One query answered in run `run`: `qi` is its position in the golden set (it orders the
    /// examples and tells runs of one query apart), `ranked` its filtered list, best first.
    /// Returns how many of its hard negatives are in the top 5.
    pub fn add(
        &mut self,
        run: usize,
        qi: usize,
        id: &'a Text,
        labels: &'a [Label],
        ranked: &[&'a Text],
    ) -> usize {
        self.runs.insert(run);
        self.query_ids.insert(qi, id);
        let top = &ranked[..ranked.len().min(TOP_K)];
        let relevant = |t: &Text| labels.iter().any(|l| l.relevance >= 1 && l.tool_id == *t);
        let mut hard_in_top = 0;
        for l in labels {
            let rank = ranked.iter().position(|t| **t == l.tool_id);
            if l.relevance == 0 {
                if let Some(r) = rank.filter(|&r| r < TOP_K) {
                    hard_in_top += 1;
                    let key = (qi, l.tool_id.as_str());
                    let e = self.hard.entry(key).or_insert((id, &l.tool_id, 0, r + 1));
                    e.2 += 1;
                    e.3 = e.3.min(r + 1);
                }
                continue;
            }
            let t = self.tools.entry(&l.tool_id).or_default();
            t.relevant_in += 1;
            if let Some(r) = rank {
                t.rr_sum += 1.0 / (r + 1) as f64;
            }
            if rank.is_some_and(|r| r < TOP_K) {
                t.found += 1;
                continue;
            }
            for taken in top.iter().filter(|t| !relevant(t)) {
                let p = self.pairs.entry((&l.tool_id, *taken)).or_default();
                p.0 += 1;
                p.1.insert(qi);
            }
        }
        hard_in_top
    }

    /// The diagnostics, every list in its documented order.
    pub fn finish(self) -> ToolDiagnostics {
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        // each server's row, summed as its tools go by (and its name shared by their rows)
        let mut servers: BTreeMap<&str, ServerStat> = BTreeMap::new();
        let per_tool: Vec<ToolStat> = self
            .tools
            .into_iter()
            .map(|(tool, a)| {
                let name = server_name(tool);
                let s = servers.entry(name).or_insert_with(|| ServerStat {
                    server: Text::from(name),
                    ..Default::default()
                });
                s.tools += 1;
                s.never_found += (a.found == 0) as usize;
                s.relevant_in += a.relevant_in;
                s.found_in_top_5 += a.found;
                ToolStat {
                    tool: tool.clone(),
                    server: s.server.clone(),
                    relevant_in: a.relevant_in,
                    found_in_top_5: a.found,
                    recall_at_5: ratio(a.found, a.relevant_in),
                    mrr: a.rr_sum / a.relevant_in as f64,
                }
            })
            .collect();
        let per_server: Vec<ServerStat> = servers
            .into_values()
            .map(|mut s| {
                s.recall_at_5 = ratio(s.found_in_top_5, s.relevant_in);
                s
            })
            .collect();
        let mut never: Vec<&ToolStat> = per_tool.iter().filter(|t| t.found_in_top_5 == 0).collect();
        never.sort_by(|a, b| b.relevant_in.cmp(&a.relevant_in).then(a.tool.cmp(&b.tool)));
        let never_found = never.into_iter().map(|t| t.tool.clone()).collect();
        let query_ids = self.query_ids;
        // every pair's sort key and distinct queries; only the pairs kept become rows
        type Pair<'t> = (usize, usize, &'t Text, &'t Text, BTreeSet<usize>);
        let mut pairs: Vec<Pair> = self
            .pairs
            .into_iter()
            .map(|((wanted, taken), (occurrences, queries))| {
                (queries.len(), occurrences, wanted, taken, queries)
            })
            .collect();
        // most queries, then most occurrences, then by ids: a total order (a pair is unique)
        let worst_first = |a: &Pair, b: &Pair| {
            b.0.cmp(&a.0)
                .then(b.1.cmp(&a.1))
                .then_with(|| a.2.cmp(b.2))
                .then_with(|| a.3.cmp(b.3))
        };
        let confusions_total = pairs.len();
        if pairs.len() > CONFUSIONS_MAX {
            // the worst CONFUSIONS_MAX first (in no order), the rest cut, before sorting
            pairs.select_nth_unstable_by(CONFUSIONS_MAX - 1, worst_first);
            pairs.truncate(CONFUSIONS_MAX);
        }
        pairs.sort_unstable_by(worst_first);
        let confusions: Vec<ConfusionPair> = pairs
            .into_iter()
            .map(|(n, occurrences, wanted, taken, queries)| ConfusionPair {
                wanted: wanted.clone(),
                taken: taken.clone(),
                queries: n,
                occurrences,
                examples: queries
                    .iter()
                    .filter_map(|q| query_ids.get(q).copied())
                    .take(EXAMPLES_MAX)
                    .cloned()
                    .collect(),
            })
            .collect();
        let hard_negatives_in_top_5 = self
            .hard
            .into_values()
            .map(|(q, t, runs, best_rank)| HardNegativeHit {
                query: q.clone(),
                tool: t.clone(),
                runs,
                best_rank,
            })
            .collect();
        ToolDiagnostics {
            top_k: TOP_K,
            runs: self.runs.len(),
            per_tool,
            per_server,
            never_found,
            confusions,
            confusions_total,
            hard_negatives_in_top_5,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(l: &[(&str, u8)]) -> Vec<Label> {
        l.iter()
            .map(|(t, r)| Label {
                tool_id: Text::from(*t),
                relevance: *r,
            })
            .collect()
    }

    fn texts(ids: &[&str]) -> Vec<Text> {
        ids.iter().map(|i| Text::from(*i)).collect()
    }

    /// Two queries, two runs; the worked example of shared/reference/metrics.md is query 1.
    #[test]
    fn counts_recall_mrr_confusions_and_hard_negatives_by_hand() {
        let q1 = Text::from("q1");
        let q2 = Text::from("q2");
        // q1: labels {s:a 2, s:b 1, t:x 0}, ranked [c, a, d, b, x, e, f]
        let l1 = labels(&[("s:a", 2), ("s:b", 1), ("t:x", 0)]);
        let r1 = texts(&["t:c", "s:a", "t:d", "s:z", "t:x", "s:b"]);
        // q2: labels {s:b 2}, ranked [c, d, e, f, g, h] (b missing)
        let l2 = labels(&[("s:b", 2)]);
        let r2 = texts(&["t:c", "t:d", "t:e", "t:f", "t:g"]);
        let (rr1, rr2): (Vec<&Text>, Vec<&Text>) = (r1.iter().collect(), r2.iter().collect());
        let mut acc = Accumulator::default();
        for run in [1, 2] {
            acc.add(run, 0, &q1, &l1, &rr1);
            acc.add(run, 1, &q2, &l2, &rr2);
        }
        let d = acc.finish();
        assert_eq!((d.top_k, d.runs), (5, 2));
        let a = d.tool("s:a").unwrap();
        assert_eq!(
            (a.relevant_in, a.found_in_top_5, a.recall_at_5),
            (2, 2, 1.0)
        );
        assert_eq!(a.mrr, 0.5);
        let b = d.tool("s:b").unwrap();
        // rank 6 in q1, absent in q2: never in a top 5
        assert_eq!(
            (b.relevant_in, b.found_in_top_5, b.recall_at_5),
            (4, 0, 0.0)
        );
        assert!((b.mrr - (1.0 / 6.0 * 2.0) / 4.0).abs() < 1e-12);
        assert!(d.tool("t:c").is_none(), "never relevant: not in the table");
        assert_eq!(d.never_found, texts(&["s:b"]));
        assert_eq!(d.per_server.len(), 1);
        let s = &d.per_server[0];
        assert_eq!(
            (
                s.server.as_str(),
                s.tools,
                s.never_found,
                s.relevant_in,
                s.found_in_top_5
            ),
            ("s", 2, 1, 6, 2)
        );
        // b missed in both queries: c and d took its place in both, the others in one
        let pair = |w: &str, t: &str| {
            d.confusions
                .iter()
                .find(|p| p.wanted == w && p.taken == t)
                .cloned()
        };
        let cd = pair("s:b", "t:c").unwrap();
        assert_eq!((cd.queries, cd.occurrences), (2, 4));
        assert_eq!(cd.examples, texts(&["q1", "q2"]));
        assert_eq!(
            pair("s:b", "t:x").unwrap().queries,
            1,
            "a hard negative took it"
        );
        assert_eq!(pair("s:b", "t:e").unwrap().examples, texts(&["q2"]));
        // s:a is relevant to q1 and in its top 5: never "taken instead"
        assert!(pair("s:b", "s:a").is_none());
        assert_eq!(d.confusions[0].queries, 2, "worst first");
        assert_eq!(d.hard_negatives_in_top_5.len(), 1);
        let h = &d.hard_negatives_in_top_5[0];
        assert_eq!(
            (h.query.as_str(), h.tool.as_str(), h.runs, h.best_rank),
            ("q1", "t:x", 2, 5)
        );
    }

    #[test]
    fn examples_are_capped_and_in_golden_order() {
        let ids: Vec<Text> = (0..6)
            .map(|i| Text::from(format!("q{i}").as_str()))
            .collect();
        let l = labels(&[("s:w", 2)]);
        let r = texts(&["s:t"]);
        let rr: Vec<&Text> = r.iter().collect();
        let mut acc = Accumulator::default();
        for qi in (0..6).rev() {
            acc.add(1, qi, &ids[qi], &l, &rr);
        }
        let d = acc.finish();
        assert_eq!(d.confusions.len(), 1);
        assert_eq!(d.confusions[0].queries, 6);
        assert_eq!(d.confusions[0].examples, texts(&["q0", "q1", "q2"]));
    }

    #[test]
    fn the_confusion_list_is_cut_worst_first_and_says_where() {
        // queries 0, 1 and 2 make the same five pairs (three queries each); every later query
        // makes five pairs of its own (one query each): 10,005 pairs in all
        let n = 2_003;
        let own = |i: usize| if i < 3 { 0 } else { i };
        let ids: Vec<Text> = (0..n)
            .map(|i| Text::from(format!("q{i}").as_str()))
            .collect();
        let wanted: Vec<Vec<Label>> = (0..n)
            .map(|i| labels(&[(format!("s:w{}", own(i)).as_str(), 1)]))
            .collect();
        let taken: Vec<Vec<Text>> = (0..n)
            .map(|i| {
                (0..5)
                    .map(|k| Text::from(format!("s:t{}-{k}", own(i)).as_str()))
                    .collect()
            })
            .collect();
        let mut acc = Accumulator::default();
        for i in 0..n {
            let ranked: Vec<&Text> = taken[i].iter().collect();
            acc.add(1, i, &ids[i], &wanted[i], &ranked);
        }
        let d = acc.finish();
        assert_eq!(d.confusions_total, 5 + (n - 3) * 5);
        assert_eq!(d.confusions.len(), CONFUSIONS_MAX);
        // the five pairs of three queries come first, and every one of them is kept
        assert!(d.confusions[..5].iter().all(|p| p.queries == 3));
        assert_eq!(d.confusions_cut_at(), Some(1));
        // the pairs of one query kept are the first by ids, in that order: as if every pair
        // had been sorted and the list cut after
        let mut single: Vec<(&str, &str)> = (3..n)
            .flat_map(|i| {
                let w = wanted[i][0].tool_id.as_str();
                taken[i].iter().map(move |t| (w, t.as_str()))
            })
            .collect();
        single.sort_unstable();
        let kept: Vec<(&str, &str)> = d.confusions[5..]
            .iter()
            .map(|p| (p.wanted.as_str(), p.taken.as_str()))
            .collect();
        assert_eq!(kept, single[..CONFUSIONS_MAX - 5]);
        let whole = Accumulator::default().finish();
        assert_eq!(whole.confusions_cut_at(), None);
    }
}
