//! The recording proxy: between a real agent's Basic Knowledge and a real Domain Access or
//! User State Refinement server, it passes every message both ways unchanged, checks each
//! BKN exchange as it passes (the same checks as every client here), and records the
//! dialogues to a session journal (`session::journal`) that `validate`, `replay` and the
//! explorer read.
//!
//! Layer: above `client` (its checks) and `session` (the journal); below `cli`.

pub mod body;
pub mod http;
pub mod observer;
pub mod stdio;
