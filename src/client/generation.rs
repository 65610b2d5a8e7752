//! Which MCP generation a connection speaks (MCP-BINDING section 3), and where its dialogue's
//! state lives as a result.
//!
//! - **2025-11-25**: an `initialize` handshake; over HTTP an `Mcp-Session-Id`. The server keeps
//!   a dialogue for exactly as long as the MCP session.
//! - **2026-07-28**: no handshake and no session: `server/discover`, then every request
//!   carries its protocol version and the client's capabilities in `_meta`. The server keeps
//!   a dialogue by its DialogID.
//!
//! `auto` (the default) asks `server/discover` first and falls back to `initialize` when the
//! server does not know it: the newest generation both sides speak.

use rmcp::model::ProtocolVersion;
use rmcp::service::ClientLifecycleMode;
use std::fmt;

/// The generation the user asks for (`--protocol`, `protocol` in config.toml or a server's
/// entry in a servers file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ProtocolChoice {
    /// The newest both sides speak: `server/discover`, else `initialize`.
    #[default]
    Auto,
    /// 2026-07-28 only (stateless).
    Stateless,
    /// 2025-11-25 only (`initialize`, sessions).
    Session,
}

impl ProtocolChoice {
    pub const ALL: [ProtocolChoice; 3] = [
        ProtocolChoice::Auto,
        ProtocolChoice::Stateless,
        ProtocolChoice::Session,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolChoice::Auto => "auto",
            ProtocolChoice::Stateless => "2026-07-28",
            ProtocolChoice::Session => "2025-11-25",
        }
    }

    /// Reads `auto`, `2026-07-28` or `2025-11-25`; the error lists them.
    pub fn parse(text: &str) -> Result<ProtocolChoice, String> {
        ProtocolChoice::ALL
            .into_iter()
            .find(|c| c.as_str() == text.trim())
            .ok_or_else(|| {
                format!("'{text}' is not a protocol choice: use auto, 2026-07-28 or 2025-11-25")
            })
    }

    /// How rmcp's client starts in this generation.
    pub fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            ProtocolChoice::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            ProtocolChoice::Stateless => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            ProtocolChoice::Session => ClientLifecycleMode::Initialize,
        }
    }

    /// The pinned generation a negotiated version belongs to (2026-07-28 or later: stateless).
    pub fn of_version(version: &str) -> ProtocolChoice {
        if is_stateless(version) {
            ProtocolChoice::Stateless
        } else {
            ProtocolChoice::Session
        }
    }

    /// The other pinned generation: what to suggest when this one was refused.
    pub fn other(self) -> Option<ProtocolChoice> {
        match self {
            ProtocolChoice::Auto => None,
            ProtocolChoice::Stateless => Some(ProtocolChoice::Session),
            ProtocolChoice::Session => Some(ProtocolChoice::Stateless),
        }
    }
}

impl fmt::Display for ProtocolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ProtocolChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolChoice::parse(s)
    }
}

impl serde::Serialize for ProtocolChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ProtocolChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        ProtocolChoice::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Where a dialogue's state lives on the server, given the negotiated version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateHome {
    /// In the MCP session (2025-11-25 and before).
    McpSession,
    /// Kept by the server under the DialogID (2026-07-28).
    DialogId,
}

impl StateHome {
    /// Where the state of a dialogue negotiated at `version` lives.
    pub fn of(version: &str) -> StateHome {
        if is_stateless(version) {
            StateHome::DialogId
        } else {
            StateHome::McpSession
        }
    }

    /// A few words for the user: "kept by DialogID", "in the MCP session".
    pub fn describe(self) -> &'static str {
        match self {
            StateHome::McpSession => "in the MCP session",
            StateHome::DialogId => "kept by DialogID (no session)",
        }
    }
}

/// Whether a negotiated version is of the stateless generation (2026-07-28 or later).
pub fn is_stateless(version: &str) -> bool {
    version >= ProtocolVersion::V_2026_07_28.as_str()
}

/// "MCP 2026-07-28, stateless: the dialogue is kept by DialogID" and the like: what the user
/// is told of a connection's generation everywhere (MCP-BINDING section 3).
pub fn describe(version: &str) -> String {
    match StateHome::of(version) {
        StateHome::DialogId => {
            format!("MCP {version} (stateless: the dialogue's state is kept by DialogID)")
        }
        StateHome::McpSession => {
            format!("MCP {version} (the dialogue's state lives in the MCP session)")
        }
    }
}

/// The same for a server without a BKN tool: there is no dialogue of the binding to keep,
/// only whether the connection has an MCP session.
pub fn describe_plain(version: &str) -> String {
    match StateHome::of(version) {
        StateHome::DialogId => format!("MCP {version} (stateless: no MCP session)"),
        StateHome::McpSession => format!("MCP {version} (with an MCP session)"),
    }
}

/// `describe` for a server with a BKN tool, else `describe_plain`.
pub fn describe_for(version: &str, has_bkn_tool: bool) -> String {
    if has_bkn_tool {
        describe(version)
    } else {
        describe_plain(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_read_and_write_their_names() {
        for c in ProtocolChoice::ALL {
            assert_eq!(ProtocolChoice::parse(c.as_str()), Ok(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<ProtocolChoice>(&json).unwrap(), c);
        }
        let e = ProtocolChoice::parse("2024-11-05").unwrap_err();
        assert!(e.contains("auto, 2026-07-28 or 2025-11-25"), "{e}");
    }

    #[test]
    fn the_generation_says_where_state_lives() {
        assert_eq!(StateHome::of("2026-07-28"), StateHome::DialogId);
        assert_eq!(StateHome::of("2025-11-25"), StateHome::McpSession);
        assert!(describe("2026-07-28").contains("kept by DialogID"));
        // Of a server without a BKN tool, no dialogue is promised.
        assert_eq!(
            describe_for("2026-07-28", false),
            "MCP 2026-07-28 (stateless: no MCP session)"
        );
        assert!(!describe_for("2025-11-25", false).contains("dialogue"));
        assert_eq!(describe_for("2025-11-25", true), describe("2025-11-25"));
    }
}
