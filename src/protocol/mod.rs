//! Pure data and rules of BKN-DAC and BKN-USR: the schemas, the typed messages, the
//! conformance engine and the Process Action grammar. No I/O, no async.

pub mod interface;
pub mod requirement;
pub mod schema;

pub use interface::{Interface, Mode};
pub use requirement::Requirement;
pub mod conformance;
pub mod dac;
pub mod document;
pub mod ijson;
pub mod json;
pub mod message;
pub mod process_action;
pub mod raw;
pub mod resources;
pub mod rpc;
pub mod spelling;
pub mod triple;
pub mod usr;
