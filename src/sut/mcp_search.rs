//! `mcp`: any tool-search proxy reached over MCP (stdio command or streamable HTTP). A named
//! search tool is called with configured arguments and its answer is mapped to ranked
//! `server:tool` ids by a jq filter (`mapping`). Structured content and JSON text content are
//! treated alike.

use super::mapping::Mapper;
use super::{Ranked, Retriever, SearchRequest, SutError};
use crate::mcp::{self, Endpoint};
use crate::text::Text;
use async_trait::async_trait;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceError};
use serde_json::{Map, Value, json};
use std::time::Instant;

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

/// A connected MCP search system.
pub struct McpSearch {
    spec: McpSearchSpec,
    service: RunningService<RoleClient, ()>,
}

impl McpSearch {
    /// Connects and checks that the search tool exists.
    pub async fn connect(spec: McpSearchSpec) -> anyhow::Result<McpSearch> {
        let service = mcp::connect(&spec.endpoint, ()).await?;
        let tools = service.peer().list_all_tools().await.map_err(|e| {
            anyhow::anyhow!("tools/list failed on {}: {e}", spec.endpoint.describe())
        })?;
        if !tools.iter().any(|t| t.name == spec.tool) {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            anyhow::bail!(
                "{} offers no tool {:?} (it lists: {})",
                spec.endpoint.describe(),
                spec.tool,
                names.join(", ")
            );
        }
        Ok(McpSearch { spec, service })
    }

    /// Calls the search tool; a tool error (`isError`) comes back as `Ok(Err(message))`.
    async fn call(
        &self,
        req: &SearchRequest<'_>,
        extra: &Map<String, Value>,
    ) -> Result<Result<Ranked, String>, SutError> {
        let mut args = self.arguments(req);
        args.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        let params = CallToolRequestParams::new(self.spec.tool.clone()).with_arguments(args);
        let start = Instant::now();
        let mut attempt = self.service.peer().call_tool(params.clone()).await;
        if let Err(e) = &attempt
            && Self::transport_failure(e)
        {
            // a transport error is retried once, then it is the system's failure
            attempt = self.service.peer().call_tool(params).await;
        }
        let latency = start.elapsed();
        let system = self.spec.name.clone();
        let result = attempt.map_err(|e| {
            if Self::transport_failure(&e) {
                SutError::Crashed {
                    system: system.clone(),
                    detail: format!("query {:?}: {e} (after one retry)", req.query_id),
                }
            } else {
                SutError::Other {
                    system: system.clone(),
                    detail: format!(
                        "query {:?}: {} answered with an error: {e}",
                        req.query_id, self.spec.tool
                    ),
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
        let v = serde_json::to_value(&result).map_err(|e| SutError::Garbage {
            system: system.clone(),
            detail: e.to_string(),
        })?;
        let ids = self
            .spec
            .mapper
            .map_call_result(&v)
            .map_err(|e| SutError::Garbage {
                system,
                detail: format!("query {:?}: {e}", req.query_id),
            })?;
        let ids = ids.into_iter().map(Text::from).collect();
        Ok(Ok(Ranked { ids, latency }))
    }

    fn arguments(&self, req: &SearchRequest<'_>) -> Map<String, Value> {
        let mut args = self.spec.extra_args.clone();
        args.insert(self.spec.query_arg.clone(), json!(req.text));
        if let Some(l) = &self.spec.limit_arg {
            args.insert(l.clone(), json!(req.limit));
        }
        args
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

#[async_trait]
impl Retriever for McpSearch {
    fn name(&self) -> &str {
        &self.spec.name
    }

    async fn search(&self, req: SearchRequest<'_>) -> Result<Ranked, SutError> {
        match self.call(&req, &Map::new()).await? {
            Ok(r) => Ok(r),
            // a tool error is not a ranked list: the mapper would have rejected it too
            Err(msg) => Err(SutError::Garbage {
                system: self.spec.name.clone(),
                detail: format!(
                    "query {:?}: {} answered with a tool error: {}",
                    req.query_id,
                    self.spec.tool,
                    msg.chars().take(300).collect::<String>()
                ),
            }),
        }
    }

    async fn probe(
        &self,
        req: SearchRequest<'_>,
        extra: &Map<String, Value>,
    ) -> Option<Result<super::ProbeReply, SutError>> {
        Some(self.call(&req, extra).await.map(|r| match r {
            Ok(r) => super::ProbeReply::Ranked(r),
            Err(msg) => super::ProbeReply::Refused(msg),
        }))
    }
}
