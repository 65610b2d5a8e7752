//! The reference servers: Domain Access (`serve dac`) and User State Refinement (`serve usr`),
//! implementing MCP-BINDING.md over stdio and Streamable HTTP.

pub mod dac;
pub mod dialogues;
pub mod jsonrpc;
pub mod mcp;
pub mod model_file;
pub mod per_core;
pub mod recorded;
pub mod stdio;
pub mod transport;
pub mod usr;
