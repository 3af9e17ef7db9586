//! Sharding: one evaluation split across several jobs (a CI matrix). Shard `i/n` measures a
//! contiguous, deterministic slice of the golden queries and of the security entries; the whole
//! corpus is always served, so every query is ranked against every tool. `evalgate merge`
//! joins the shards' observations back in dataset order and scores them as one run.

use crate::pipeline::dataset::{GoldenSet, SecurityCorpus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The most shards one evaluation can be split into.
pub const MAX_SHARDS: usize = 1000;

/// Shard `index` of `count` (1-based, as written on the command line: `--shard 2/4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// The items of a list of `len` this shard takes: the `index`-th of `count` contiguous
    /// slices, sized within one of each other, in order (shard 1 starts at 0, shard `count`
    /// ends at `len`).
    pub fn range(self, len: usize) -> Range<usize> {
        let at = |i: usize| i * len / self.count;
        at(self.index - 1)..at(self.index)
    }

    /// Shard 1 also runs what is done once per evaluation (the robustness probes).
    pub fn first(self) -> bool {
        self.index == 1
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "expected INDEX/COUNT with 1 <= INDEX <= COUNT <= {MAX_SHARDS} (e.g. 2/4), found {s:?}"
            )
        };
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// What a shard measured, as its report records it: which shard, which slices of the datasets,
/// and what the systems under test said about themselves (warnings `merge` carries over, since
/// it cannot ask the systems again).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardRef {
    /// This shard's number, 1-based (`--shard index/count`).
    pub index: usize,
    /// How many shards the evaluation was cut into.
    pub count: usize,
    /// The golden queries measured: positions `[start, end)` in the golden set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<[usize; 2]>,
    /// The security entries measured: positions `[start, end)` in the security corpus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<[usize; 2]>,
    /// Warnings the system under test gave about itself (a recording's unknown query ids...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system_warnings: Vec<String>,
    /// The `evalgate baseline update` command of the shard's invocation (without `--shard`):
    /// the merged report quotes it where the unsharded run would.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub update_command: String,
}

impl ShardRef {
    pub fn shard(&self) -> Shard {
        Shard {
            index: self.index,
            count: self.count,
        }
    }
}

/// The golden set with only `shard`'s queries (what the shard measures and scores).
pub fn golden_slice(g: &GoldenSet, shard: Shard) -> GoldenSet {
    GoldenSet {
        version: g.version.clone(),
        corpus_version: g.corpus_version.clone(),
        queries: g.queries[shard.range(g.queries.len())].to_vec(),
        distractors: g.distractors.clone(),
    }
}

/// The security corpus with only `shard`'s entries.
pub fn security_slice(s: &SecurityCorpus, shard: Shard) -> SecurityCorpus {
    SecurityCorpus {
        version: s.version.clone(),
        entries: s.entries[shard.range(s.entries.len())].to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shards_of_a_list_cover_it_once_in_order_and_differ_in_size_by_one_at_most() {
        for len in [0, 1, 3, 7, 100, 1001] {
            for count in [1, 2, 3, 4, 7, 16] {
                let ranges: Vec<Range<usize>> = (1..=count)
                    .map(|index| Shard { index, count }.range(len))
                    .collect();
                assert_eq!(ranges[0].start, 0);
                assert_eq!(ranges[count - 1].end, len);
                for w in ranges.windows(2) {
                    assert_eq!(w[0].end, w[1].start, "len {len}, count {count}");
                }
                let sizes: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= 1, "len {len}, count {count}: {sizes:?}");
            }
        }
        assert_eq!(Shard { index: 2, count: 4 }.range(10), 2..5);
    }

    #[test]
    fn a_shard_reads_as_index_slash_count_and_nothing_else() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(" 1 / 1 ".parse::<Shard>(), Ok(Shard { index: 1, count: 1 }));
        for bad in ["0/4", "5/4", "4", "a/b", "1/1001", "-1/2", "2/0", ""] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("INDEX/COUNT"), "{bad}: {e}");
        }
        assert_eq!(Shard { index: 3, count: 8 }.to_string(), "3/8");
    }
}
