//! The functional requirements of BKN-DAC and BKN-USR. Both data types number them the same
//! way (FR1 Header .. FR7 Metadata), so one enum serves both; every conformance finding names
//! the requirement it breaks.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::EnumIter,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
pub enum Requirement {
    /// FR1: the Header of the interface, Mode RQ or RS, no property of the other mode.
    Header,
    /// FR2: M-Instance, U-Environment and session identifiers; a unique QueryID and a QueryTime.
    Identification,
    /// FR3: a Response carries the RequestID of the Request it answers.
    Correlation,
    /// FR4: DialogID and TurnIndex; a Response has the TurnIndex of its Request.
    Dialogue,
    /// FR5: what a Request states and may carry.
    Request,
    /// FR6: what a Response states and may carry.
    Response,
    /// FR7: DataXMData, and DescrMetadata if present.
    Metadata,
    /// Not a functional requirement of the data types but a rule of the wire contract
    /// (MCP-BINDING.md): how a tool is declared and how its result carries the Response.
    Binding,
}

impl Requirement {
    /// Its number in the functional requirements of both data types (`None` for the
    /// binding's rules, which are not among them).
    pub fn number(self) -> Option<u8> {
        (self != Requirement::Binding).then_some(self as u8 + 1)
    }

    /// Its name, as the `x-bkn-requirement` annotation of the schema files and serde spell it.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Parses the `x-bkn-requirement` annotation of the schema files.
    pub fn from_name(name: &str) -> Option<Requirement> {
        name.parse().ok()
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.number() {
            Some(n) => write!(f, "FR{n} {}", self.name()),
            None => f.write_str("MCP-BINDING"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantArray;

    #[test]
    fn names_are_serdes_and_read_back() {
        for r in Requirement::VARIANTS {
            assert_eq!(serde_json::to_value(r).unwrap(), r.name());
            assert_eq!(Requirement::from_name(r.name()), Some(*r));
        }
        assert_eq!(
            Requirement::from_name("header"),
            None,
            "as written, case and all"
        );
        assert_eq!(Requirement::Binding.number(), None);
        assert_eq!(Requirement::Metadata.to_string(), "FR7 Metadata");
    }
}
