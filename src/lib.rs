//! bkn-explorer: a terminal dialogue explorer for the MPAI BKN-DAC and BKN-USR data types over
//! the Model Context Protocol, with reference servers for both.
//!
//! Layers, each using only those above it in this list: `protocol` (types, schemas,
//! conformance, the Process Action grammar; no I/O), `server` (reference servers), `client`
//! (MCP connections and dialogues), `session` (files), `scenario` (dialogue tests: files,
//! runs, reports, load), `certify` (conformance reports), `tui` (state, update, view), `cli` (commands).

pub mod atomic;
pub mod certify;
pub mod cli;
pub mod client;
pub mod duration;
pub mod protocol;
pub mod proxy;
pub mod scenario;
pub mod server;
pub mod session;
pub mod settings;
pub mod toml_places;
pub mod tui;
