//! The three dataset files, in spec-065's field names. evalgate's own additions are optional, so
//! mcpproxy's spec-065 files load unchanged.

use crate::infra::text::Text;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Frozen tool corpus: `{version, generated_from, tools[...]}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Corpus {
    /// Version of this snapshot, e.g. `corpus_v0`. Golden sets refer to it.
    pub version: String,
    /// Where the snapshot came from (spec-065: `{source, note}`); free-form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_from: Option<Value>,
    /// evalgate extension: the servers the tools were taken from (package, version, licence).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerInfo>,
    pub tools: Vec<Tool>,
}

/// evalgate extension: provenance of one snapshotted server.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ServerInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// Everything else recorded about the server (taken date, serverInfo, dummy env...).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

/// One tool of the corpus.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    /// `server:tool`, unique in the corpus.
    pub tool_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default)]
    pub description: String,
    /// The tool's input JSON Schema (spec-065 calls it `schema`; `input_schema` and
    /// `inputSchema` are accepted too).
    #[serde(
        default,
        alias = "input_schema",
        alias = "inputSchema",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<Value>")]
    pub schema: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Value>")]
    pub annotations: Option<RawJson>,
    #[serde(
        default,
        alias = "outputSchema",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<Value>")]
    pub output_schema: Option<RawJson>,
    /// Any other fields of the definition as the server returned them (e.g. `execution`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Value>")]
    pub extra: Option<RawJson>,
}

/// A JSON value kept as its source text, decoded only where it is used (serving or indexing a
/// tool). The corpus's schemas are most of its 8 MB: as text each is one allocation, where a
/// tree would be built and freed again on every run that never looks inside it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RawJson(Box<serde_json::value::RawValue>);

impl RawJson {
    /// The JSON text, as it appeared in the file (or compact, when made from a value).
    pub fn get(&self) -> &str {
        self.0.get()
    }
    /// The value as a tree.
    pub fn value(&self) -> Value {
        // the text was checked as JSON when it was read or written
        serde_json::from_str(self.0.get()).expect("RawJson holds valid JSON")
    }
    pub fn from_value(v: &Value) -> RawJson {
        RawJson(serde_json::value::to_raw_value(v).expect("a Value always serialises"))
    }
}

impl PartialEq for RawJson {
    /// Equal as JSON values (whitespace and, with `preserve_order`, key order do not matter).
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get() || self.value() == other.value()
    }
}

impl Tool {
    /// The server part of `tool_id`.
    pub fn server_name(&self) -> &str {
        server_name(&self.tool_id)
    }
    /// The bare tool name: the part of `tool_id` after `server:`.
    pub fn bare_name(&self) -> &str {
        bare_name(&self.tool_id)
    }
}

/// The part of a `server:tool` id before the colon (empty when there is none).
pub fn server_name(tool_id: &str) -> &str {
    tool_id.split_once(':').map_or("", |(s, _)| s)
}

/// The part of a `server:tool` id after the colon (the whole id when there is none).
pub fn bare_name(tool_id: &str) -> &str {
    tool_id.split_once(':').map(|(_, t)| t).unwrap_or(tool_id)
}

/// Retrieval golden set: `{corpus_version, queries[...]}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GoldenSet {
    /// evalgate extension: version of the golden set itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The `version` of the corpus these labels refer to.
    pub corpus_version: String,
    pub queries: Vec<Query>,
    /// evalgate extension: corpus tools no query finds relevant, kept on purpose as distractors.
    /// When present, every corpus tool must be relevant to some query or listed here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distractors: Option<Vec<String>>,
}

/// The golden-set splits (`queries[].split`).
pub const SPLITS: [&str; 2] = ["dev", "held_out"];

/// A labelled query of the golden set: the text a user would type and the graded tools that
/// answer it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Query {
    pub id: Text,
    /// A paraphrased user intent; never names a labeled tool.
    pub query: Text,
    pub labels: Vec<Label>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<Text>,
    /// evalgate extension: `dev` or `held_out`, so users can check they did not tune to a split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Text>,
}

/// A graded tool for a query: 2 primary, 1 acceptable, 0 explicitly not relevant (a hard
/// negative).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Label {
    pub tool_id: Text,
    /// 2 = primary, 1 = acceptable, 0 = explicitly not relevant (a hard negative).
    pub relevance: u8,
}

impl Query {
    pub fn relevant(&self) -> impl Iterator<Item = &Label> {
        self.labels.iter().filter(|l| l.relevance >= 1)
    }
}

/// Security corpus: `{version, entries[...]}`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SecurityCorpus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub entries: Vec<Entry>,
}

/// The label of a security entry: `malicious` or `benign`.
#[derive(
    Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub enum Truth {
    Malicious,
    Benign,
}

/// A security entry's category: spec-065's four attack families, `benign` and `hard_negative`
/// are known; any other string a corpus uses (mcpproxy's detect corpus has
/// `unicode_smuggling`, `phrase_injection`, ...) is kept as it is, and whether it is an attack
/// comes from the entries' labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    ToolPoisoning,
    PromptInjection,
    Shadowing,
    RugPull,
    Benign,
    HardNegative,
    /// Another category, by its index in the process-wide table of category names.
    Other(u32),
}

/// Names of the open categories met so far (leaked once each: a handful per corpus).
static OTHER_NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

impl Category {
    pub const ALL: [Category; 6] = [
        Category::ToolPoisoning,
        Category::PromptInjection,
        Category::Shadowing,
        Category::RugPull,
        Category::Benign,
        Category::HardNegative,
    ];
    /// The four attack families: the first four of [`Category::ALL`].
    pub const ATTACKS: [Category; 4] = *Self::ALL.first_chunk().unwrap();
    /// One of the four known attack families (an open category is an attack when its entries
    /// are labelled malicious; see [`Category::is_known`]).
    pub fn is_attack(self) -> bool {
        Self::ATTACKS.contains(&self)
    }
    /// Whether this is one of spec-065's six categories.
    pub fn is_known(self) -> bool {
        !matches!(self, Category::Other(_))
    }
    /// The label an entry of a known category must carry (`None` for an open category: its
    /// entries' labels say what it is).
    pub fn expected_truth(self) -> Option<Truth> {
        match self {
            Category::Other(_) => None,
            c if c.is_attack() => Some(Truth::Malicious),
            _ => Some(Truth::Benign),
        }
    }
    /// The category named `name`: a known one, or an open one.
    pub fn named(name: &str) -> Category {
        if let Some(c) = Self::ALL.iter().find(|c| c.as_str() == name) {
            return *c;
        }
        let mut names = OTHER_NAMES.lock().unwrap_or_else(|p| p.into_inner());
        let i = names.iter().position(|n| *n == name).unwrap_or_else(|| {
            names.push(Box::leak(name.to_string().into_boxed_str()));
            names.len() - 1
        });
        Category::Other(i as u32)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Category::ToolPoisoning => "tool_poisoning",
            Category::PromptInjection => "prompt_injection",
            Category::Shadowing => "shadowing",
            Category::RugPull => "rug_pull",
            Category::Benign => "benign",
            Category::HardNegative => "hard_negative",
            Category::Other(i) => OTHER_NAMES
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(i as usize)
                .copied()
                .unwrap_or("unknown"),
        }
    }
}

impl Serialize for Category {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Category {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        if name.trim().is_empty() {
            return Err(serde::de::Error::custom(
                "expected a category name, found an empty string",
            ));
        }
        Ok(Category::named(&name))
    }
}

impl JsonSchema for Category {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Category".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "minLength": 1,
            "description": "tool_poisoning, prompt_injection, shadowing, rug_pull (attacks), benign, hard_negative, or any other category name (an attack when its entries are labelled malicious)",
            "examples": ["tool_poisoning", "hard_negative", "unicode_smuggling"]
        })
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Truth {
    pub fn as_str(self) -> &'static str {
        match self {
            Truth::Malicious => "malicious",
            Truth::Benign => "benign",
        }
    }
}

/// Where a security entry came from: its source and that source's license.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    pub source: String,
    pub license: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// One labeled tool definition.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(try_from = "RawEntry")]
pub struct Entry {
    pub id: String,
    /// The tool description under test (for a rug-pull: the description after the change).
    pub description: String,
    pub label: Truth,
    pub category: Category,
    pub provenance: Provenance,
    /// evalgate extension: the server the tool belongs to (context for shadowing).
    pub server: Option<String>,
    /// evalgate extension: the tool's name.
    pub tool: Option<String>,
    /// evalgate extension: the tool's input schema (attacks hide in parameter descriptions).
    pub input_schema: Option<Value>,
    /// evalgate extension, hard negatives only: the attack category this benign entry resembles.
    pub resembles: Option<Category>,
    /// evalgate extension (rug-pulls): the definition as first approved.
    pub before: Option<Value>,
    /// evalgate extension (rug-pulls): the definition served later; an array of definitions
    /// means the re-listing repeated the name.
    pub after: Option<Value>,
    /// Other servers' tools this entry is judged against, in mcpproxy's detect-corpus shape
    /// (`[{server, tool: {name, description, inputSchema?}}]`): the whole context a cross-server
    /// check (shadowing) sees when the entry is scanned inside a proxy. No peers = scanned alone.
    pub peers: Vec<Peer>,
}

/// An entry as written: spec-065's and ours (`description`, `tool` as a name), or mcpproxy's
/// detect corpus (`tool: {name, description, inputSchema?}` and no top-level `description`).
#[derive(Deserialize, JsonSchema)]
struct RawEntry {
    id: String,
    /// The tool description under test (may instead be `tool.description`).
    #[serde(default)]
    description: Option<String>,
    label: Truth,
    category: Category,
    provenance: Provenance,
    /// The server the tool belongs to (context for shadowing).
    #[serde(default)]
    server: Option<String>,
    /// The tool's name, or its whole definition `{name, description, inputSchema?}` (mcpproxy's
    /// detect corpus).
    #[serde(default)]
    tool: Option<ToolField>,
    /// The tool's input schema (attacks hide in parameter descriptions).
    #[serde(default, alias = "inputSchema")]
    input_schema: Option<Value>,
    /// Hard negatives only: the attack category this benign entry resembles.
    #[serde(default)]
    resembles: Option<Category>,
    /// Rug-pulls: the definition as first approved.
    #[serde(default)]
    before: Option<Value>,
    /// Rug-pulls: the definition served later; an array of definitions means the re-listing
    /// repeated the name.
    #[serde(default)]
    after: Option<Value>,
    /// Other servers' tools this entry is judged against (`[{server, tool: {name,
    /// description, inputSchema?}}]`): the whole context a cross-server check (shadowing) sees
    /// when the entry is scanned inside a proxy. No peers = scanned alone.
    #[serde(default)]
    peers: Vec<Peer>,
}

/// A tool's name, or its definition.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum ToolField {
    Name(String),
    Definition(PeerTool),
}

impl TryFrom<RawEntry> for Entry {
    type Error = String;
    fn try_from(r: RawEntry) -> Result<Entry, String> {
        let (tool, tool_description, tool_schema) = match r.tool {
            None => (None, None, None),
            Some(ToolField::Name(n)) => (Some(n), None, None),
            Some(ToolField::Definition(d)) => (Some(d.name), Some(d.description), d.input_schema),
        };
        let missing = "missing field `description` (or a `tool` object with a description)";
        let description = r.description.or(tool_description).ok_or(missing)?;
        Ok(Entry {
            id: r.id,
            description,
            label: r.label,
            category: r.category,
            provenance: r.provenance,
            server: r.server,
            tool,
            input_schema: r.input_schema.or(tool_schema),
            resembles: r.resembles,
            before: r.before,
            after: r.after,
            peers: r.peers,
        })
    }
}

impl Entry {
    /// The definitions served after the change: `after`, or each of an `after` array.
    pub fn afters(&self) -> &[Value] {
        match &self.after {
            Some(Value::Array(a)) => a,
            v => v.as_slice(),
        }
    }

    /// The category a hard negative resembles (`None` for any other entry).
    pub fn resembled(&self) -> Option<Category> {
        self.resembles
            .filter(|_| self.category == Category::HardNegative)
    }
}

/// A tool on another server that an entry is judged against.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Peer {
    pub server: String,
    pub tool: PeerTool,
}

/// A peer's definition.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PeerTool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(
        default,
        rename = "inputSchema",
        alias = "input_schema",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_schema: Option<Value>,
}
