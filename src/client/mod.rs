//! The MCP client side: connections to any number of servers over stdio or Streamable HTTP,
//! dialogues with their turn bookkeeping, and every exchange checked against the specification
//! as it happens. Everything it notices is reported as events on a channel.

pub mod affinity;
pub mod answers;
pub mod connection;
pub mod decode;
pub mod defaults;
pub mod dialogue;
pub mod doctor;
pub mod engine;
pub mod event;
pub mod generation;
pub mod handler;
pub mod http;
pub mod http_turn;
pub mod limits;
pub mod listen;
pub mod oauth;
pub mod opening;
pub mod param_headers;
pub mod resources;
pub mod spec;
pub mod stdio;
pub mod task;
pub mod turn;
