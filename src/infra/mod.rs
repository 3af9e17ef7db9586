//! What the pipeline stands on and knows nothing of it: child processes, MCP and HTTP
//! plumbing, files, text neutralisation, credentials.

pub mod files;
pub mod http;
pub mod log;
pub mod mcp;
pub mod own_binary;
pub mod process;
pub mod secrets;
pub mod text;
