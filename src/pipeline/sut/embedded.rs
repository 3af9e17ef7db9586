//! `embedded`: an in-process BM25 retriever over the frozen corpus (tantivy).
//!
//! Each tool becomes one document with four text fields, all analysed by tantivy's `en_stem`
//! analyser (split on non-alphanumerics, lowercase, English Snowball stemming):
//! - `name`: the bare tool name split into words (`_`, `-`, `.`, camelCase): `readTextFile`,
//!   `read_text_file` → `read text file`;
//! - `description`: the tool description;
//! - `params`: the input parameter names (recursively), split the same way;
//! - `server`: the server name split into words (users say "on GitHub").
//!
//! A query is analysed with the same analyser and scored as a disjunction of per-field term
//! queries: the sum of BM25 scores (tantivy's k1 = 1.2, b = 0.75) of its distinct terms, each
//! field with its own length normalisation. Fields are not boosted (all 1.0): boosts were not
//! tuned on the golden set, and the variants we measured (name 1.5–2.0, params 0–0.5) moved
//! Recall@5 by under 0.01 on corpus_v0. Ties are broken by tool id so the ranking is
//! deterministic: the tools are indexed in tool-id order, and tantivy's top-k keeps the lower
//! document of two equal scores. (Equal as computed: tantivy's block-max WAND adds a document's
//! term scores in an order that depends on how the search went, so two mathematically equal
//! sums can differ by an ulp.)

use super::{Facts, Ranked, Retriever, SearchRequest, SutError};
use crate::infra::text::Text;
use crate::pipeline::dataset::{Corpus, Tool};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;
use tantivy::collector::{Collector, TopDocs};
use tantivy::index::SegmentId;
use tantivy::indexer::NoMergePolicy;
use tantivy::query::{
    Bm25StatisticsProvider, BooleanQuery, EnableScoring, Occur, Query, TermQuery,
};
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, Index, IndexReader, ReloadPolicy, Searcher, Term, doc};

/// Splits an identifier into lowercase words: `_`, `-`, `.`, `/`, spaces and camelCase
/// boundaries (`getHTTPResponse` → `get http response`).
pub fn split_identifier(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
        let camel =
            |p: char| p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next_lower);
        let boundary = !c.is_alphanumeric() || c.is_uppercase() && prev.is_some_and(camel);
        if boundary && !out.ends_with(' ') && !out.is_empty() {
            out.push(' ');
        }
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        }
    }
    out.trim_end().to_string()
}

/// Adds to `out` the input parameter names of a JSON Schema (`depth` levels down),
/// recursively through `properties`, `items` and combinators, in document order.
pub fn param_names(v: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > 8 {
        return;
    }
    let Some(o) = v.as_object() else { return };
    if let Some(Value::Object(props)) = o.get("properties") {
        for (k, p) in props {
            out.push(k.clone());
            param_names(p, out, depth + 1);
        }
    }
    let combined = ["anyOf", "oneOf", "allOf"].map(|k| o.get(k).and_then(Value::as_array));
    let branches = combined.into_iter().flatten().flatten();
    for s in o.get("items").into_iter().chain(branches) {
        param_names(s, out, depth + 1);
    }
}

/// The BM25 retriever.
#[derive(Clone)]
pub struct Embedded {
    facts: Arc<Facts>,
    /// The one searcher of the index, which never changes after [`Embedded::new`].
    searcher: Searcher,
    /// Cloned for each query (tokenising needs `&mut`), so threads never wait on each other.
    analyzer: TextAnalyzer,
    /// `name`, `description`, `params`, `server`, in [`field_texts`] order.
    fields: [Field; 4],
    /// Tool ids in corpus order.
    ids: Arc<[Text]>,
    /// BM25's index-wide statistics, which tantivy would otherwise recompute for every term of
    /// every query: the number of documents, and per field the number of tokens.
    num_docs: u64,
    num_tokens: Vec<(Field, u64)>,
    /// Per segment (in the searcher's order), per document: the index into `ids`. Within a
    /// segment, documents are in tool-id order.
    docs: Arc<[Vec<u32>]>,
}

/// BM25 statistics for one query's weight: the index-wide numbers [`Embedded::new`] computed,
/// and the document frequencies `rank_positions` looked up. They are the numbers tantivy's
/// searcher would give, so the scores are the same.
struct QueryStats<'a> {
    e: &'a Embedded,
    doc_freqs: Vec<(Term, u64)>,
}

impl Bm25StatisticsProvider for QueryStats<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        match self.e.num_tokens.iter().find(|(f, _)| *f == field) {
            Some(&(_, n)) => Ok(n),
            None => self.e.searcher.total_num_tokens(field),
        }
    }
    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.e.num_docs)
    }
    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        match self.doc_freqs.iter().find(|(t, _)| t == term) {
            Some(&(_, n)) => Ok(n),
            None => self.e.searcher.doc_freq(term),
        }
    }
}

/// The four texts indexed for a tool: its name split into words, its description, its input
/// parameter names split into words, its server name split into words.
pub fn field_texts(t: &Tool) -> [String; 4] {
    let mut names = Vec::new();
    if let Some(s) = &t.schema {
        param_names(&s.value(), &mut names, 0);
    }
    let params: Vec<String> = names.iter().map(|p| split_identifier(p)).collect();
    [
        split_identifier(t.bare_name()),
        t.description.clone(),
        params.join(" "),
        split_identifier(t.server_name()),
    ]
}

/// The analyser of every field and query: tantivy's `en_stem` (split on non-alphanumerics,
/// drop tokens of 40 bytes or more, lowercase, English Snowball stemming).
fn en_stem() -> anyhow::Result<TextAnalyzer> {
    tantivy::tokenizer::TokenizerManager::default()
        .get("en_stem")
        .ok_or_else(|| anyhow::anyhow!("tantivy has no en_stem analyser"))
}

/// `text`'s tokens as `en_stem` gives them, joined by single spaces. A token the index could
/// not split back out (empty, or holding whitespace: never seen, since `en_stem` splits on
/// every non-alphanumeric character) is an error, not a silently different index.
fn analyse(analyzer: &mut TextAnalyzer, text: &str) -> anyhow::Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut odd = None;
    let mut ts = analyzer.token_stream(text);
    ts.process(&mut |tok| {
        if tok.text.is_empty() || tok.text.chars().any(|c| c.is_ascii_whitespace()) {
            odd.get_or_insert_with(|| tok.text.clone());
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&tok.text);
    });
    match odd {
        Some(t) => anyhow::bail!("en_stem gave the token {t:?}, which the index cannot hold"),
        None => Ok(out),
    }
}

/// What is indexed for a tool: its four [`field_texts`], each analysed by `en_stem` and its
/// tokens joined by spaces. The index splits these on whitespace only (`en_stem`'s tokens
/// hold no whitespace), so its terms, term frequencies and field lengths are exactly those
/// `en_stem` gives the raw texts; analysing is most of the work of indexing, and done this way
/// it can be done once for many indexes ([`FieldTexts`]) and on every core.
pub fn indexed_texts(analyzer: &mut TextAnalyzer, t: &Tool) -> anyhow::Result<[String; 4]> {
    let [a, b, c, d] = field_texts(t).map(|text| analyse(analyzer, &text));
    Ok([a?, b?, c?, d?])
}

/// The [`indexed_texts`] of every tool of a corpus, computed once: decoding the input schemas
/// and analysing the texts are most of the work of indexing a corpus, and a description
/// optimiser re-indexes the same corpus with a few tools changed, many times.
pub struct FieldTexts(Vec<[String; 4]>);

impl FieldTexts {
    /// Every tool's texts, analysed.
    pub fn of(corpus: &Corpus) -> anyhow::Result<FieldTexts> {
        let mut analyzer = en_stem()?;
        let all = corpus
            .tools
            .iter()
            .map(|t| indexed_texts(&mut analyzer, t))
            .collect::<anyhow::Result<Vec<[String; 4]>>>()?;
        Ok(FieldTexts(all))
    }

    /// The index of `corpus`, whose tools are those these texts were made from, except that the
    /// tools at `changed` (positions, ascending) may have been edited: theirs are analysed
    /// afresh. The same index [`Embedded::new`] builds for the edited corpus.
    pub fn index_with_changes(
        &self,
        corpus: &Corpus,
        changed: &[usize],
    ) -> anyhow::Result<Embedded> {
        let mut a = en_stem()?;
        let fresh = changed
            .iter()
            .map(|&i| Ok((i, indexed_texts(&mut a, &corpus.tools[i])?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Embedded::with_texts(corpus, |ord| {
            match fresh.binary_search_by_key(&ord, |(i, _)| *i) {
                Ok(k) => &fresh[k].1,
                Err(_) => &self.0[ord],
            }
        })
    }
}

impl Embedded {
    /// Indexes the corpus in RAM.
    pub fn new(corpus: &Corpus) -> anyhow::Result<Embedded> {
        FieldTexts::of(corpus)?.index_with_changes(corpus, &[])
    }

    /// Indexes the corpus in RAM, each tool with the texts `texts` gives for its position,
    /// which must be its [`indexed_texts`].
    fn with_texts<'t>(
        corpus: &Corpus,
        texts: impl Fn(usize) -> &'t [String; 4],
    ) -> anyhow::Result<Embedded> {
        let mut sb = Schema::builder();
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                // the texts come analysed by `en_stem` ([`indexed_texts`])
                .set_tokenizer("whitespace")
                // term frequencies are all BM25 reads: no positions (no phrase queries)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        // the tool's position in the corpus (a fast field, so a hit names its tool without
        // reading a stored document)
        let ord_field = sb.add_u64_field("ord", FAST);
        let fields = ["name", "description", "params", "server"]
            .map(|name| sb.add_text_field(name, text.clone()));
        let index = Index::create_in_ram(sb.build());
        // Documents are added in tool-id order, so that within a segment document order is
        // tool-id order: tantivy's top-k collection keeps the lower document of two equal scores
        // (block-max WAND only passes on a document scoring strictly above the k-th best, and
        // documents come in ascending order), which is then exactly the tie-break by tool id, and
        // a search needs to fetch no more than `limit` hits. (Ties in id, if the corpus had any,
        // keep corpus order.)
        let mut by_id: Vec<u32> = (0..corpus.tools.len() as u32).collect();
        by_id.sort_by_key(|&a| &corpus.tools[a as usize].tool_id);
        let mut writer = index.writer_with_num_threads(1, 15_000_000)?;
        // no background merges: a merge stacks its segments in the order it is given, which
        // only `new` decides (below), so every segment stays in tool-id order
        writer.set_merge_policy(Box::new(NoMergePolicy));
        for &ord in &by_id {
            let mut d = doc!(ord_field => ord as u64);
            for (&field, t) in fields.iter().zip(texts(ord as usize)) {
                d.add_text(field, t);
            }
            writer.add_document(d)?;
        }
        writer.commit()?;
        // The 15 MB writer budget flushes a segment every few thousand tools. One segment
        // searches faster (one top-k threshold, one set of posting lists per term): merge them
        // all, stacked in the order they were written, i.e. tool-id order.
        let mut rank = vec![0u32; corpus.tools.len()];
        for (r, &ord) in by_id.iter().enumerate() {
            rank[ord as usize] = r as u32;
        }
        let reader = || -> tantivy::Result<IndexReader> {
            let manual = index.reader_builder().reload_policy(ReloadPolicy::Manual);
            manual.try_into()
        };
        let segments = Self::segment_docs(&reader()?.searcher())?;
        if segments.len() > 1 {
            let mut ids: Vec<(u32, SegmentId)> = segments
                .iter()
                .filter_map(|(id, docs)| docs.first().map(|&d| (rank[d as usize], *id)))
                .collect();
            ids.sort_unstable();
            let ids: Vec<SegmentId> = ids.into_iter().map(|(_, id)| id).collect();
            writer.merge(&ids).wait()?;
        }
        writer.wait_merging_threads()?;
        // the index never changes after this: keep one searcher, and map every document to its
        // tool once
        let searcher = reader()?.searcher();
        let segments = Self::segment_docs(&searcher)?;
        // the order every search relies on: checked, not assumed
        let ordered = |d: &[u32]| {
            d.windows(2)
                .all(|w| rank[w[0] as usize] < rank[w[1] as usize])
        };
        if !segments.iter().all(|(_, docs)| ordered(docs)) {
            anyhow::bail!("the BM25 index is not in tool-id order");
        }
        let docs = segments.into_iter().map(|(_, docs)| docs).collect();
        let analyzer = en_stem()?;
        let num_tokens = fields
            .into_iter()
            .map(|field| Ok((field, searcher.total_num_tokens(field)?)))
            .collect::<tantivy::Result<_>>()?;
        Ok(Embedded {
            facts: Arc::new(Facts::named("embedded")),
            num_docs: searcher.total_num_docs()?,
            num_tokens,
            searcher,
            analyzer,
            fields,
            ids: corpus
                .tools
                .iter()
                .map(|t| Text::from(t.tool_id.as_str()))
                .collect(),
            docs,
        })
    }

    /// Per segment of the searcher: its id and, per document, the tool's position in the corpus.
    fn segment_docs(searcher: &Searcher) -> anyhow::Result<Vec<(SegmentId, Vec<u32>)>> {
        searcher
            .segment_readers()
            .iter()
            .map(|seg| -> anyhow::Result<(SegmentId, Vec<u32>)> {
                let col = seg.fast_fields().u64("ord")?;
                let docs = (0..seg.max_doc())
                    .map(|d| {
                        col.first(d)
                            .map(|o| o as u32)
                            .ok_or_else(|| anyhow::anyhow!("document {d} has no tool"))
                    })
                    .collect::<anyhow::Result<_>>()?;
                Ok((seg.segment_id(), docs))
            })
            .collect()
    }

    /// Ranked `(tool_id, score)` pairs, ties broken by tool id.
    pub fn rank(&self, text: &str, limit: usize) -> anyhow::Result<Vec<(Text, f32)>> {
        Ok(self
            .rank_positions(text, limit)?
            .into_iter()
            .map(|(i, s)| (self.ids[i].clone(), s))
            .collect())
    }

    /// Like [`Embedded::rank`], with each tool as its position in the indexed corpus.
    pub fn rank_positions(&self, text: &str, limit: usize) -> anyhow::Result<Vec<(usize, f32)>> {
        let mut terms = BTreeSet::new();
        self.analyzer
            .clone()
            .token_stream(text)
            .process(&mut |tok| {
                terms.insert(tok.text.clone());
            });
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut doc_freqs = Vec::new();
        for t in &terms {
            for field in self.fields {
                let term = Term::from_field_text(field, t);
                // A term absent from a field scores nothing there. Tantivy would build its weight
                // and then drop its empty scorer from the union, keeping the others in order:
                // leaving it out gives the same scorers in the same order, for less work.
                let doc_freq = self.searcher.doc_freq(&term)?;
                if doc_freq == 0 {
                    continue;
                }
                doc_freqs.push((term.clone(), doc_freq));
                // bare term queries, never boosted: a disjunction of plain BM25 term scorers
                // is searched with block-max WAND (skipping documents that cannot reach the
                // top), which a boost wrapper would turn off
                let q = TermQuery::new(term, IndexRecordOption::WithFreqs);
                clauses.push((Occur::Should, Box::new(q)));
            }
        }
        if clauses.is_empty() {
            return Ok(Vec::new());
        }
        let query = BooleanQuery::new(clauses);
        let stats = QueryStats { e: self, doc_freqs };
        let weight = query.weight(EnableScoring::enabled_from_statistics_provider(
            &stats,
            &self.searcher,
        ))?;
        // Exactly `limit` per segment: within a segment document order is tool-id order, so
        // its top `limit` by (score, document) are its top `limit` by (score, tool id); the
        // segments' are merged below by (score, tool id) (the searcher's own merge would break
        // ties by segment, then document). Fetching more would only lower the k-th best score
        // that block-max WAND must beat, and prune less.
        let collector = TopDocs::with_limit(limit).order_by_score();
        let mut top = Vec::with_capacity(limit * self.docs.len());
        for (ord, seg) in self.searcher.segment_readers().iter().enumerate() {
            let hits = collector.collect_segment(weight.as_ref(), ord as u32, seg)?;
            top.extend(collector.merge_fruits(vec![hits])?);
        }
        let position = |addr: DocAddress| {
            let seg = self.docs.get(addr.segment_ord as usize);
            let ord = seg.and_then(|seg| seg.get(addr.doc_id as usize));
            ord.map(|&o| o as usize)
                .ok_or_else(|| anyhow::anyhow!("the index has no document {addr:?}"))
        };
        let mut out = top
            .into_iter()
            .map(|(score, addr)| Ok((position(addr)?, score)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        out.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.ids[a.0].cmp(&self.ids[b.0]))
        });
        out.truncate(limit);
        Ok(out)
    }
}

/// Each search runs on tokio's blocking pool (with a clone of the retriever: the index is
/// shared), so the `--concurrency` queries in flight are ranked on as many cores; ranked inline
/// in the async `search`, they took turns on the one task that drives them. Users feel it in
/// `fitness` (a whole measurement per candidate) and on large corpora: docs/performance.md.
#[async_trait]
impl Retriever for Embedded {
    fn facts(&self) -> &Facts {
        &self.facts
    }
    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError> {
        let e = self.clone();
        let text = req.text.to_owned();
        let limit = req.limit;
        let (ranked, latency) = tokio::task::spawn_blocking(move || {
            let start = Instant::now();
            e.rank(&text, limit).map(|r| (r, start.elapsed()))
        })
        .await
        .map_err(anyhow::Error::from)
        .and_then(|r| r)
        .map_err(|e| SutError::other(self.facts.name.clone(), e.to_string()))?;
        Ok(Ranked {
            ids: ranked.into_iter().map(|(id, _)| id).collect(),
            latency,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::dataset::Tool;

    /// Per term, the documents it scores in and their scores.
    type TermScores = Vec<(String, Vec<(u32, f32)>)>;

    /// Every term `en_stem` finds in `raw` scored in an index of `texts` (one document each) in
    /// one field analysed by `tokenizer`: (term, [(document, score)]) in term order, and the
    /// field's token count.
    fn term_scores(raw: &[String], texts: &[String], tokenizer: &str) -> (TermScores, u64) {
        let mut sb = Schema::builder();
        let field = sb.add_text_field(
            "f",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(tokenizer)
                    .set_index_option(IndexRecordOption::WithFreqs),
            ),
        );
        let index = Index::create_in_ram(sb.build());
        let mut w = index.writer_with_num_threads(1, 15_000_000).unwrap();
        for t in texts {
            w.add_document(doc!(field => t.as_str())).unwrap();
        }
        w.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let mut terms = BTreeSet::new();
        let mut a = en_stem().unwrap();
        for t in raw {
            a.token_stream(t).process(&mut |tok| {
                terms.insert(tok.text.clone());
            });
        }
        let scores = terms
            .into_iter()
            .map(|term| {
                let q = TermQuery::new(
                    Term::from_field_text(field, &term),
                    IndexRecordOption::WithFreqs,
                );
                let mut hits: Vec<(u32, f32)> = searcher
                    .search(&q, &TopDocs::with_limit(100).order_by_score())
                    .unwrap()
                    .into_iter()
                    .map(|(s, d)| (d.doc_id, s))
                    .collect();
                hits.sort_by_key(|&(d, _)| d);
                (term, hits)
            })
            .collect();
        (scores, searcher.total_num_tokens(field).unwrap())
    }

    #[test]
    fn texts_analysed_beforehand_index_exactly_what_en_stem_indexes() {
        let raw: Vec<String> = vec![
            "Reads the file's contents: UTF-8, emoji \u{1F680}, na\u{EF}ve caf\u{E9} r\u{E9}sum\u{E9}s".into(),
            format!("{} short words running runs ran", "x".repeat(45)),
            "get http response GETS Responses responding 3rd 2024-01-05 v1.2.3".into(),
            String::new(),
            "\u{6570}\u{636E} \u{30C7}\u{30FC}\u{30BF} \u{0434}\u{0430}\u{043D}\u{043D}\u{044B}\u{0435}".into(),
            "a\u{A0}b\u{2003}c tab\there\nnewline  double  spaces the the the".into(),
            "\u{130}stanbul \u{DF}trasse \u{FB01}le ONE-TWO_three.four/five".into(),
        ];
        let mut a = en_stem().unwrap();
        let analysed: Vec<String> = raw.iter().map(|t| analyse(&mut a, t).unwrap()).collect();
        let (want, want_tokens) = term_scores(&raw, &raw, "en_stem");
        let (got, got_tokens) = term_scores(&raw, &analysed, "whitespace");
        assert_eq!(got_tokens, want_tokens);
        assert!(want.len() > 30, "{want:?}");
        assert_eq!(got, want);
    }

    fn tool(id: &str, desc: &str) -> Tool {
        Tool {
            tool_id: id.into(),
            server: None,
            tool: None,
            description: desc.into(),
            schema: Some(crate::pipeline::dataset::RawJson::from_value(
                &serde_json::json!({"type":"object","properties":{"filePath":{"type":"string"}}}),
            )),
            title: None,
            annotations: None,
            output_schema: None,
            extra: None,
        }
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(split_identifier("read_text_file"), "read text file");
        assert_eq!(split_identifier("readTextFile"), "read text file");
        assert_eq!(
            split_identifier("getHTTPResponse-v2"),
            "get http response v2"
        );
        assert_eq!(split_identifier("git.diff"), "git diff");
        assert_eq!(split_identifier("ALLCAPS"), "allcaps");
    }

    #[test]
    fn param_names_are_collected_recursively() {
        let s = serde_json::json!({"properties":{"a":{"type":"object","properties":{"b":{}}},"c":{"items":{"properties":{"d":{}}}}}});
        let mut names = Vec::new();
        param_names(&s, &mut names, 0);
        assert_eq!(names, vec!["a", "b", "c", "d"]);
    }

    #[test]
    fn bm25_ranks_matching_tools_first_and_breaks_ties_by_id() {
        let corpus = Corpus {
            version: "t".into(),
            generated_from: None,
            servers: vec![],
            tools: vec![
                tool(
                    "fs:read_text_file",
                    "Read the complete contents of a file as text.",
                ),
                tool(
                    "web:fetch_url",
                    "Download a web page and return it as markdown.",
                ),
                tool("b:twin", "Identical twin description."),
                tool("a:twin", "Identical twin description."),
            ],
        };
        let e = Embedded::new(&corpus).unwrap();
        let r = e.rank("show me the contents of a file", 10).unwrap();
        assert_eq!(r[0].0, "fs:read_text_file");
        let r = e.rank("download this web page", 10).unwrap();
        assert_eq!(r[0].0, "web:fetch_url");
        let r = e.rank("identical twin", 10).unwrap();
        assert_eq!(
            r.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            vec!["a:twin", "b:twin"]
        );
        // camelCase parameter names are searchable as words
        let r = e.rank("file path", 1).unwrap();
        assert_eq!(r.len(), 1);
        assert!(e.rank("   ", 10).unwrap().is_empty());
    }

    /// A corpus of `n` tools with the same description, in an order that is not tool-id order
    /// (ids `tie:000`..), plus one tool that matches better and one that does not match.
    fn ties(n: usize) -> Corpus {
        let mut tools: Vec<Tool> = (0..n)
            // a permutation of 0..n (n is never a multiple of 7 here): 0, 7, 14, ...
            .map(|i| {
                tool(
                    &format!("tie:{:03}", (i * 7) % n),
                    "Identical twin description.",
                )
            })
            .collect();
        tools.insert(n / 2, tool("a:best", "Identical twin, twin, twin."));
        tools.insert(n / 3, tool("0:other", "Nothing in common."));
        Corpus {
            version: "t".into(),
            generated_from: None,
            servers: vec![],
            tools,
        }
    }

    #[test]
    fn ties_beyond_the_limit_are_broken_by_tool_id_whatever_the_corpus_order() {
        for n in [3, 40, 100, 500] {
            let e = Embedded::new(&ties(n)).unwrap();
            for limit in [1, 2, 5, 13, 50, 600] {
                let got = e.rank("identical twin", limit).unwrap();
                let mut want = vec!["a:best".to_string()];
                want.extend((0..n).map(|i| format!("tie:{i:03}")));
                want.truncate(limit);
                assert_eq!(
                    got.iter().map(|x| x.0.to_string()).collect::<Vec<_>>(),
                    want,
                    "{n} ties, limit {limit}"
                );
                // the tied tools have one score
                assert!(
                    got[1..]
                        .iter()
                        .all(|x| x.1 == got.get(1).map_or(0.0, |y| y.1))
                );
            }
        }
    }

    #[test]
    fn positions_are_corpus_positions() {
        let c = ties(40);
        let e = Embedded::new(&c).unwrap();
        for (pos, _) in e.rank_positions("identical twin", 50).unwrap() {
            let id = &c.tools[pos].tool_id;
            assert!(id.starts_with("tie:") || id == "a:best", "{id}");
        }
    }
}
