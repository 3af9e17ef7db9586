//! `mcp`: any tool-search proxy reached over MCP (stdio command or streamable HTTP). A named
//! search tool is called with configured arguments and its answer is mapped to ranked
//! `server:tool` ids by a jq filter (`mapping`). Structured content and JSON text content are
//! treated alike.

use super::mapping::{IdStyle, MCPPROXY_RETRIEVE_TOOLS_FILTER, Mapper};
use super::{Facts, Ranked, Retriever, SearchRequest, SutError};
use crate::infra::mcp::{self, Endpoint, Session};
use crate::infra::process::Supervisor;
use crate::infra::text::Text;
use async_trait::async_trait;
use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

/// How to ask the proxy.
#[derive(Debug, Clone)]
pub struct McpSearchSpec {
    /// Name shown in reports.
    pub name: String,
    pub endpoint: Endpoint,
    /// The search tool (mcpproxy: `retrieve_tools`).
    pub tool: String,
    /// Argument carrying the query text (mcpproxy: `query`).
    pub query_arg: String,
    /// Argument carrying the result count (mcpproxy: `limit`); `None` = do not send one.
    pub limit_arg: Option<String>,
    /// Fixed extra arguments sent with every call.
    pub extra_args: Map<String, Value>,
    pub mapper: Mapper,
}

impl McpSearchSpec {
    /// `[sut.mcp]` resolved: the preset's defaults (`mcpproxy` unless `preset = "none"`), then
    /// the user's keys. `endpoint` replaces `url`/`command` (a launched proxy's endpoint).
    pub fn from_file(
        name: &str,
        m: &super::spec::McpFile,
        endpoint: Option<Endpoint>,
    ) -> Result<McpSearchSpec, String> {
        let preset = m.preset.as_deref().unwrap_or("mcpproxy");
        if preset != "mcpproxy" && preset != "none" {
            return Err(format!(
                "[sut.mcp] preset {preset:?}: expected \"mcpproxy\" or \"none\""
            ));
        }
        let is_mcpproxy = preset == "mcpproxy";
        let endpoint = match (endpoint, &m.url, &m.command) {
            (Some(ep), _, _) => ep,
            (None, Some(url), None) => Endpoint::Http {
                url: url.clone(),
                headers: m.headers.clone().into_iter().collect(),
            },
            (None, None, Some(cmd)) if !cmd.is_empty() => Endpoint::Stdio {
                program: cmd[0].clone(),
                args: cmd[1..].to_vec(),
                env: m.env.clone().into_iter().collect(),
                cwd: None,
            },
            (None, Some(_), Some(_)) => {
                return Err("[sut.mcp]: give either `url` or `command`, not both".into());
            }
            _ => {
                return Err("--sut mcp needs --url URL, or [sut.mcp] url = \"...\" or command = [...] in evalgate.toml".into());
            }
        };
        let default = |v: &Option<String>, d: &str| v.clone().unwrap_or_else(|| d.to_string());
        let filter = m.filter.clone()
            .or(is_mcpproxy.then(|| MCPPROXY_RETRIEVE_TOOLS_FILTER.to_string()))
            .ok_or("[sut.mcp] needs `filter` (a jq filter from the result to the ranked tools) when preset = \"none\"")?;
        let mapper =
            Mapper::new(&filter, m.id_style.unwrap_or(IdStyle::Auto)).map_err(|e| e.to_string())?;
        Ok(McpSearchSpec {
            name: name.to_string(),
            endpoint,
            tool: default(&m.tool, "retrieve_tools"),
            query_arg: default(&m.query_arg, "query"),
            // an empty `limit_arg` sends no count
            limit_arg: Some(default(&m.limit_arg, "limit")).filter(|l| !l.is_empty()),
            extra_args: m.extra_args.clone(),
            mapper,
        })
    }
}

/// A connected MCP search system.
pub struct McpSearch {
    spec: McpSearchSpec,
    /// Its `tools/list` (bounded by the request timeout) is the catalog's `tools-list` check.
    pub(crate) session: Session<()>,
    pub(crate) facts: Facts,
}

impl McpSearch {
    /// Connects (a stdio server started by `sup`) and checks that the search tool exists;
    /// starting, `initialize` and `tools/list` each get `timeout`.
    pub async fn connect(
        spec: McpSearchSpec,
        sup: &Supervisor,
        timeout: Duration,
    ) -> anyhow::Result<McpSearch> {
        let opts = mcp::ConnectOpts {
            sup,
            timeout,
            name: &spec.name,
        };
        let session = mcp::connect(&spec.endpoint, (), &opts).await?;
        let tools = session.list_all_tools().await?;
        if !tools.iter().any(|t| t.name == spec.tool) {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            anyhow::bail!(
                "{} offers no tool {:?} (it lists: {})",
                spec.endpoint.describe(),
                spec.tool,
                names.join(", ")
            );
        }
        let facts = Facts {
            sends_limit: spec.limit_arg.is_some(),
            ..Facts::named(&spec.name)
        };
        Ok(McpSearch {
            spec,
            session,
            facts,
        })
    }

    /// The stdio server's exit and stderr tail ("" over HTTP), for failure messages.
    pub fn story(&self) -> String {
        mcp::child_story(self.session.child.as_ref())
    }

    /// Calls the search tool; a tool error (`isError`) comes back as `Ok(Err(message))`.
    async fn call(
        &self,
        req: &SearchRequest<'_>,
        extra: &Map<String, Value>,
    ) -> Result<Result<Ranked, String>, SutError> {
        let mut args = self.spec.extra_args.clone();
        args.insert(self.spec.query_arg.clone(), json!(req.text));
        if let Some(l) = &self.spec.limit_arg {
            args.insert(l.clone(), json!(req.limit));
        }
        args.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        tracing::trace!(
            "query {:?}: calls {} with {}",
            req.query_id,
            self.spec.tool,
            serde_json::Value::Object(args.clone())
        );
        let params = CallToolRequestParams::new(self.spec.tool.clone()).with_arguments(args);
        let start = Instant::now();
        let timeout = self.session.timeout;
        let call = |p: CallToolRequestParams| async move {
            let answer = self.session.service.peer().call_tool(p);
            tokio::time::timeout(timeout, answer)
                .await
                .unwrap_or_else(|_| Err(ServiceError::Timeout { timeout }))
        };
        let mut attempt = call(params.clone()).await;
        if let Err(e) = &attempt
            && Self::transport_failure(e)
            && self.session.exited().is_none()
        {
            // a transport error is retried once, then it is the system's failure
            attempt = call(params).await;
        }
        let latency = start.elapsed();
        if let Ok(answer) = &attempt {
            tracing::trace!(
                "query {:?}: answer {}",
                req.query_id,
                serde_json::to_string(answer).unwrap_or_default()
            );
        }
        let system = &self.spec.name;
        let result = attempt.map_err(|err| {
            // rmcp's errors name its Rust types (`Transport [rmcp::…<…>]`): said in words
            let e = crate::infra::mcp::readable(&err);
            let transport = Self::transport_failure(&err);
            // no answer in time (ours, or a transport error that is itself a timeout)
            // is a timeout, not a crash, unless the server answered garbage or exited: that is
            // then the cause, below
            let late = matches!(err, ServiceError::Timeout { .. })
                || (transport && crate::infra::mcp::timed_out(&err));
            let (query, story) = (format!("query {:?}", req.query_id), self.story());
            let secs = self.session.timeout.as_secs_f64();
            match self.session.stdout.as_ref().and_then(|w| w.note()) {
                None if late && self.session.exited().is_none() => {
                    SutError::timeout(system, secs, format!("{query}{story}"))
                }
                Some(note) if transport => {
                    SutError::garbage(system, format!("{query}: {e}: {note}{story}"))
                }
                _ if transport => SutError::crashed(system, format!("{query}: {e}{story}")),
                _ => {
                    let tool = &self.spec.tool;
                    let detail = format!("{query}: {tool} answered with an error: {e}");
                    SutError::other(system, detail)
                }
            }
        })?;
        if result.is_error == Some(true) {
            let text: Vec<String> = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect();
            return Ok(Err(text.join("\n")));
        }
        let fast = lone_text(&result).and_then(|text| self.spec.mapper.map_text_fast(text));
        let ids = match fast {
            Some(ids) => ids,
            None => {
                let v = serde_json::to_value(&result)
                    .map_err(|e| SutError::garbage(system, e.to_string()))?;
                self.spec.mapper.map_call_result(&v).map_err(|e| {
                    SutError::garbage(system, format!("query {:?}: {e}", req.query_id))
                })?
            }
        };
        let ids = ids.into_iter().map(Text::from).collect();
        Ok(Ok(Ranked { ids, latency }))
    }

    fn transport_failure(e: &ServiceError) -> bool {
        matches!(
            e,
            ServiceError::TransportSend(_)
                | ServiceError::TransportClosed
                | ServiceError::Timeout { .. }
        )
    }
}

/// The text of a result whose whole content is one text block, with no structured content and
/// not flagged as an error: the one shape the mapper's fast path reads
/// ([`Mapper::map_text_fast`](super::mapping::Mapper::map_text_fast)).
fn lone_text(result: &CallToolResult) -> Option<&str> {
    if result.is_error == Some(true) || result.structured_content.is_some() {
        return None;
    }
    match result.content.as_slice() {
        [block] => block.as_text().map(|t| t.text.as_str()),
        _ => None,
    }
}

#[async_trait]
impl Retriever for McpSearch {
    fn facts(&self) -> &Facts {
        &self.facts
    }

    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError> {
        // a tool error is not a ranked list: the mapper would have rejected it too
        let (id, tool) = (req.query_id, &self.spec.tool);
        self.call(&req, &Map::new()).await?.map_err(|msg| {
            let msg: String = msg.chars().take(300).collect();
            let detail = format!("query {id:?}: {tool} answered with a tool error: {msg}");
            SutError::garbage(&self.spec.name, detail)
        })
    }

    async fn probe(
        &self,
        req: SearchRequest<'_>,
        extra: &Map<String, Value>,
    ) -> Option<Result<super::ProbeReply, SutError>> {
        let reply = self.call(&req, extra).await;
        Some(reply.map(|r| r.map_or_else(super::ProbeReply::Refused, super::ProbeReply::Ranked)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::sut::mapping::{IdStyle, MCPPROXY_RETRIEVE_TOOLS_FILTER, Mapper};
    use rmcp::model::ContentBlock;

    /// Only a result that is one text block, without structured content and not an error,
    /// reaches the fast path; every other shape goes through the general mapping.
    #[test]
    fn only_a_lone_text_block_is_read_by_the_fast_path() {
        let text = r#"{"tools": [{"id": "a:b"}]}"#;
        let ok = CallToolResult::success(vec![ContentBlock::text(text)]);
        assert_eq!(lone_text(&ok), Some(text));
        let two = CallToolResult::success(vec![ContentBlock::text(text), ContentBlock::text("x")]);
        assert_eq!(lone_text(&two), None);
        let err = CallToolResult::error(vec![ContentBlock::text(text)]);
        assert_eq!(lone_text(&err), None);
        let mut structured = ok.clone();
        structured.structured_content = Some(json!({"tools": []}));
        assert_eq!(lone_text(&structured), None);
        let mut null_structured = ok.clone();
        null_structured.structured_content = Some(Value::Null);
        assert_eq!(lone_text(&null_structured), None);
        let image = CallToolResult::success(vec![ContentBlock::image("AAAA", "image/png")]);
        assert_eq!(lone_text(&image), None);
        // and where it reads, the general path agrees
        let m = Mapper::new(MCPPROXY_RETRIEVE_TOOLS_FILTER, IdStyle::Auto).unwrap();
        let general = m.map_call_result(&serde_json::to_value(&ok).unwrap());
        assert_eq!(
            Ok(m.map_text_fast(lone_text(&ok).unwrap()).unwrap()),
            general
        );
    }
}
