//! Candidate tool definitions for `evalgate fitness`: a JSON object
//! `{"server:tool": {"description": "…", "input_schema": {…}}, …}` laid over the frozen corpus.
//!
//! An optimiser proposes them; evalgate scores the corpus edited that way. They are read as
//! strictly as a dataset file: every key must name a corpus tool, every value must hold a
//! `description` (a string) and/or an `input_schema` (an object) and nothing else, and a key
//! given twice is refused, each problem named by its JSON path. Applying them swaps the new
//! definitions into the corpus in place and hands back what it took out, so the frozen corpus is
//! restored exactly after each candidate.

use super::jsonpath::{JsonPath, duplicate_key};
use super::load::kind_of;
use super::model::{Corpus, RawJson};
use serde_json::Value;
use std::collections::HashMap;

/// One tool's new definition (what is not given stays as the corpus has it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Override {
    pub description: Option<String>,
    pub schema: Option<RawJson>,
}

/// The overrides of one candidate, by the position of their tool in the corpus (ascending).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides(Vec<(usize, Override)>);

/// What [`Overrides::apply`] took out of the corpus: give it back with [`Taken::restore`].
#[must_use = "the corpus stays edited until the taken definitions are restored"]
pub struct Taken(Vec<(usize, String, Option<RawJson>)>);

/// Where the corpus's tools are, by id (built once for many candidates).
pub struct ToolIndex(HashMap<String, usize>);

impl ToolIndex {
    pub fn of(corpus: &Corpus) -> ToolIndex {
        let ids = corpus.tools.iter().map(|t| t.tool_id.clone());
        ToolIndex(ids.zip(0..).collect())
    }
}

impl Overrides {
    /// Reads one candidate from JSON text. The error names the JSON path (or line and column)
    /// and what was expected there.
    pub fn parse(text: &str, tools: &ToolIndex) -> Result<Overrides, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            format!(
                "not JSON: {e} (expected one object {{\"server:tool\": {{\"description\": \"…\"}}}})"
            )
        })?;
        if let Some(d) = duplicate_key(text) {
            return Err(format!(
                "{}: the key is given twice (first at line {}, column {})",
                d.path, d.first.0, d.first.1
            ));
        }
        let Value::Object(map) = v else {
            return Err(format!(
                "$: expected an object of tool ids (`{{\"server:tool\": {{\"description\": \"…\"}}}}`), found {}",
                kind_of(&v)
            ));
        };
        let mut out = Vec::with_capacity(map.len());
        for (id, def) in map {
            let at = JsonPath::root().key(&id);
            let Some(&i) = tools.0.get(&id) else {
                return Err(format!(
                    "{at}: no tool `{id}` in the corpus (expected a corpus tool id, `server:tool`)"
                ));
            };
            let Value::Object(def) = def else {
                return Err(format!(
                    "{at}: expected an object with \"description\" and/or \"input_schema\", found {}",
                    kind_of(&def)
                ));
            };
            let mut o = Override::default();
            for (k, v) in def {
                let expected = match (k.as_str(), v) {
                    ("description", Value::String(s)) => {
                        o.description = Some(s);
                        continue;
                    }
                    ("input_schema", v @ Value::Object(_)) => {
                        o.schema = Some(RawJson::from_value(&v));
                        continue;
                    }
                    ("description", v) => format!("expected a string, found {}", kind_of(&v)),
                    ("input_schema", v) => {
                        format!("expected a JSON Schema object, found {}", kind_of(&v))
                    }
                    _ => "unknown field (expected \"description\" or \"input_schema\")".into(),
                };
                return Err(format!("{}: {expected}", at.key(&k)));
            }
            if o.description.is_none() && o.schema.is_none() {
                return Err(format!(
                    "{at}: expected \"description\" and/or \"input_schema\", found neither"
                ));
            }
            out.push((i, o));
        }
        out.sort_by_key(|(i, _)| *i);
        Ok(Overrides(out))
    }

    /// The overridden tools' positions in the corpus, ascending.
    pub fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().map(|(i, _)| *i)
    }

    /// Puts the new definitions into `corpus` (the one the overrides were parsed against).
    pub fn apply(&self, corpus: &mut Corpus) -> Taken {
        let mut taken = Vec::with_capacity(self.0.len());
        for (i, o) in &self.0 {
            let t = &mut corpus.tools[*i];
            taken.push((*i, t.description.clone(), t.schema.clone()));
            if let Some(d) = &o.description {
                t.description = d.clone();
            }
            if let Some(s) = &o.schema {
                t.schema = Some(s.clone());
            }
        }
        Taken(taken)
    }
}

impl Taken {
    /// Puts the frozen definitions back.
    pub fn restore(self, corpus: &mut Corpus) {
        for (i, description, schema) in self.0 {
            let t = &mut corpus.tools[i];
            t.description = description;
            t.schema = schema;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::dataset::model::Tool;

    fn corpus() -> Corpus {
        let tool = |id: &str, d: &str| Tool {
            tool_id: id.into(),
            server: None,
            tool: None,
            description: d.into(),
            schema: Some(RawJson::from_value(&serde_json::json!({"type": "object"}))),
            title: None,
            annotations: None,
            output_schema: None,
            extra: None,
        };
        Corpus {
            version: "t".into(),
            generated_from: None,
            servers: vec![],
            tools: vec![tool("a:one", "first"), tool("b:two", "second")],
        }
    }

    #[test]
    fn applied_then_restored_leaves_the_corpus_as_it_was() {
        let mut c = corpus();
        let before = serde_json::to_string(&c).unwrap();
        let o = Overrides::parse(
            r#"{"b:two": {"description": "new", "input_schema": {"type": "object", "properties": {"q": {}}}}, "a:one": {"description": ""}}"#,
            &ToolIndex::of(&c),
        )
        .unwrap();
        assert_eq!(o.positions().collect::<Vec<_>>(), vec![0, 1]);
        let taken = o.apply(&mut c);
        assert_eq!(c.tools[0].description, "");
        assert_eq!(c.tools[1].description, "new");
        assert!(c.tools[1].schema.as_ref().unwrap().get().contains("\"q\""));
        taken.restore(&mut c);
        assert_eq!(serde_json::to_string(&c).unwrap(), before);
    }

    #[test]
    fn each_mistake_is_named_by_its_path() {
        let c = corpus();
        let idx = ToolIndex::of(&c);
        let err = |t: &str| Overrides::parse(t, &idx).unwrap_err();
        assert!(
            err("[1]").starts_with("$: expected an object"),
            "{}",
            err("[1]")
        );
        assert!(err(r#"{"x:y": {"description": "d"}}"#).contains(r#"$["x:y"]: no tool `x:y`"#));
        assert!(err(r#"{"a:one": "d"}"#).contains("expected an object with"));
        assert!(
            err(r#"{"a:one": {"description": 3}}"#)
                .contains(r#"$["a:one"].description: expected a string, found a number"#)
        );
        assert!(
            err(r#"{"a:one": {"input_schema": []}}"#)
                .contains(r#"$["a:one"].input_schema: expected a JSON Schema object"#)
        );
        assert!(
            err(r#"{"a:one": {"descripton": "d"}}"#)
                .contains(r#"$["a:one"].descripton: unknown field"#)
        );
        assert!(err(r#"{"a:one": {}}"#).contains("found neither"));
        assert!(
            err(r#"{"a:one": {"description": "x"}, "a:one": {"description": "y"}}"#)
                .contains("given twice")
        );
        assert!(err("{\"a:one\": ").starts_with("not JSON"));
        assert_eq!(Overrides::parse("{}", &idx).unwrap().positions().count(), 0);
    }
}
