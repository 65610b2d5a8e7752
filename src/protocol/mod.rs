//! Pure data and rules of BKN-DAC and BKN-USR: the schemas, the typed messages, the
//! conformance engine and the Process Action grammar. No I/O, no async.

/// `as_str` and `parse` of an enum whose wire names strum derives (`IntoStaticStr`,
/// `EnumString`) with the same spelling as its serde names (`names::tests` checks both agree).
macro_rules! names {
    ($name:ident) => {
        impl $name {
            /// Its name on the wire.
            pub fn as_str(self) -> &'static str {
                self.into()
            }

            /// The value of a name on the wire, if it is one.
            pub fn parse(name: &str) -> Option<$name> {
                name.parse().ok()
            }
        }
    };
}

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
pub mod lenient;
pub mod message;
pub mod process_action;
pub mod raw;
pub mod resources;
pub mod rpc;
pub mod spelling;
pub mod triple;
pub mod usr;
