//! The aggregated tool catalog of the reference proxy and its BM25 index.

use super::drift::ToolState;
use crate::pipeline::dataset::{Corpus, Tool};
use crate::pipeline::sut::embedded::Embedded;

/// Every indexed upstream tool as `server:tool`, indexed with the embedded BM25, published
/// together with the approval state of every listed tool (`/api/v1/tools`), so that both change
/// at once.
pub struct Catalog {
    pub corpus: Corpus,
    index: Embedded,
    /// Every listed upstream tool (drifted ones included), sorted by server then name.
    pub listing: Vec<ToolState>,
}

impl Catalog {
    /// Indexes `tools`; a repeated id keeps only its first occurrence.
    pub fn new(mut tools: Vec<Tool>, listing: Vec<ToolState>) -> anyhow::Result<Catalog> {
        // stable: the first of a repeated id stays first and survives the dedup
        tools.sort_by(|a, b| a.tool_id.cmp(&b.tool_id));
        tools.dedup_by(|later, first| later.tool_id == first.tool_id);
        let corpus = Corpus {
            version: "live".into(),
            generated_from: None,
            servers: vec![],
            tools,
        };
        Ok(Catalog {
            index: Embedded::new(&corpus)?,
            corpus,
            listing,
        })
    }

    /// Ranked `(tool, score)`.
    pub fn search(&self, query: &str, limit: usize) -> anyhow::Result<Vec<(&Tool, f32)>> {
        let ranked = self.index.rank_positions(query, limit)?;
        Ok(ranked
            .into_iter()
            .map(|(i, s)| (&self.corpus.tools[i], s))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Catalog {
        /// The tool `server:tool` (the tools are sorted by id).
        fn get(&self, tool_id: &str) -> Option<&Tool> {
            let tools = &self.corpus.tools;
            let i = tools
                .binary_search_by(|t| t.tool_id.as_str().cmp(tool_id))
                .ok()?;
            Some(&tools[i])
        }
    }

    fn tool(id: &str, desc: &str) -> Tool {
        crate::pipeline::dataset::mcp::from_definition(
            id.split_once(':').unwrap().0,
            &serde_json::json!({"name": id.split_once(':').unwrap().1, "description": desc}),
        )
        .unwrap()
    }

    #[test]
    fn a_repeated_id_keeps_the_first() {
        let c = Catalog::new(
            vec![
                tool("s:b", "b"),
                tool("s:a", "first"),
                tool("s:a", "second"),
            ],
            vec![],
        )
        .unwrap();
        assert_eq!(c.corpus.tools.len(), 2);
        assert_eq!(c.get("s:a").unwrap().description, "first");
    }
}
