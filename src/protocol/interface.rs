//! The two data types (interfaces) and the two modes, and what identifies each on the wire.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One of the two MPAI data types that Basic Knowledge exchanges over MCP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interface {
    /// BKN-DAC (PGM-KDA): Basic Knowledge and Domain Access.
    Dac,
    /// BKN-USR (PGM-KUS): Basic Knowledge and User State Refinement.
    Usr,
}

impl Interface {
    pub const ALL: [Interface; 2] = [Interface::Dac, Interface::Usr];

    /// The `Header` value every message of this interface carries.
    pub fn header(self) -> &'static str {
        match self {
            Interface::Dac => "PGM-KDA-V1.0",
            Interface::Usr => "PGM-KUS-V1.0",
        }
    }

    /// The MCP tool that carries this interface (MCP-BINDING section 1).
    pub fn tool_name(self) -> &'static str {
        match self {
            Interface::Dac => "bkn_dac",
            Interface::Usr => "bkn_usr",
        }
    }

    /// The data type's MPAI name, e.g. `BKN-DAC`.
    pub fn name(self) -> &'static str {
        match self {
            Interface::Dac => "BKN-DAC",
            Interface::Usr => "BKN-USR",
        }
    }

    /// The AI Module that answers this interface.
    pub fn server_role(self) -> &'static str {
        match self {
            Interface::Dac => "Domain Access",
            Interface::Usr => "User State Refinement",
        }
    }

    /// Short command-line spelling: `dac` or `usr`.
    pub fn code(self) -> &'static str {
        match self {
            Interface::Dac => "dac",
            Interface::Usr => "usr",
        }
    }

    pub fn from_header(header: &str) -> Option<Interface> {
        Interface::ALL.into_iter().find(|i| i.header() == header)
    }

    pub fn from_tool_name(name: &str) -> Option<Interface> {
        Interface::ALL.into_iter().find(|i| i.tool_name() == name)
    }

    pub fn from_code(code: &str) -> Option<Interface> {
        Interface::ALL
            .into_iter()
            .find(|i| i.code().eq_ignore_ascii_case(code) || i.name().eq_ignore_ascii_case(code))
    }
}

impl fmt::Display for Interface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Request (RQ, sent by Basic Knowledge) or Response (RS, sent by the server).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Mode {
    #[serde(rename = "RQ")]
    Request,
    #[serde(rename = "RS")]
    Response,
}

impl Mode {
    pub const ALL: [Mode; 2] = [Mode::Request, Mode::Response];

    /// The value of the `Mode` property: `RQ` or `RS`.
    pub fn code(self) -> &'static str {
        match self {
            Mode::Request => "RQ",
            Mode::Response => "RS",
        }
    }

    pub fn from_code(code: &str) -> Option<Mode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.code().eq_ignore_ascii_case(code))
    }

    pub fn other(self) -> Mode {
        match self {
            Mode::Request => Mode::Response,
            Mode::Response => Mode::Request,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Request => "Request",
            Mode::Response => "Response",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
