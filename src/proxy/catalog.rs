//! The aggregated tool catalog of the reference proxy and its BM25 index.

use crate::dataset::{Corpus, Tool};
use crate::sut::embedded::Embedded;

/// Every upstream tool as `server:tool`, indexed with the embedded BM25.
pub struct Catalog {
    pub corpus: Corpus,
    index: Embedded,
    by_id: std::collections::HashMap<String, usize>,
}

impl Catalog {
    pub fn new(mut tools: Vec<Tool>) -> anyhow::Result<Catalog> {
        tools.sort_by(|a, b| a.tool_id.cmp(&b.tool_id));
        let corpus = Corpus {
            version: "live".into(),
            generated_from: None,
            servers: vec![],
            tools,
        };
        let index = Embedded::new(&corpus)?;
        let by_id = corpus
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.tool_id.clone(), i))
            .collect();
        Ok(Catalog {
            corpus,
            index,
            by_id,
        })
    }

    /// Ranked `(tool, score)`.
    pub fn search(&self, query: &str, limit: usize) -> anyhow::Result<Vec<(&Tool, f32)>> {
        let ranked = self.index.rank(query, limit)?;
        Ok(ranked
            .into_iter()
            .filter_map(|(id, s)| self.by_id.get(&id).map(|&i| (&self.corpus.tools[i], s)))
            .collect())
    }

    pub fn get(&self, tool_id: &str) -> Option<&Tool> {
        self.by_id.get(tool_id).map(|&i| &self.corpus.tools[i])
    }
}
