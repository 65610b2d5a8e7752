//! The first request of each MCP generation, as the client sends it, and what the server's
//! answer to it says: the doctor's probe (over stdio and HTTP) and the sentence of a failed
//! connection both come from here, so that a refusal is explained by what this client
//! offered, and what the server answered, whole.

use crate::client::generation::ProtocolChoice;
use serde_json::{Value, json};

/// One opening request: `server/discover` at 2026-07-28, or `initialize` at 2025-11-25.
#[derive(Clone, Debug, PartialEq)]
pub struct Opening {
    pub method: &'static str,
    pub version: &'static str,
    /// The JSON-RPC request (its id is the caller's).
    pub body: Value,
}

impl Opening {
    /// The openings `asked` makes, in order: auto tries `server/discover`, then `initialize`.
    pub fn sequence(asked: ProtocolChoice) -> Vec<Opening> {
        match asked {
            ProtocolChoice::Auto => vec![Opening::discover(), Opening::initialize()],
            ProtocolChoice::Stateless => vec![Opening::discover()],
            ProtocolChoice::Session => vec![Opening::initialize()],
        }
    }

    fn discover() -> Opening {
        Opening {
            method: "server/discover",
            version: "2026-07-28",
            body: json!({
                "jsonrpc": "2.0", "id": 0, "method": "server/discover",
                "params": {"_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": client_info(),
                }}
            }),
        }
    }

    fn initialize() -> Opening {
        Opening {
            method: "initialize",
            version: "2025-11-25",
            body: json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": client_info()}
            }),
        }
    }

    /// The request with id `id`.
    pub fn with_id(&self, id: u64) -> Value {
        let mut body = self.body.clone();
        body["id"] = json!(id);
        body
    }

    /// The HTTP headers this opening goes with (2026-07-28 names its version and method).
    pub fn headers(&self) -> Vec<(&'static str, &'static str)> {
        if self.version == "2026-07-28" {
            vec![
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "server/discover"),
            ]
        } else {
            Vec::new()
        }
    }

    /// What a client asking for `asked` offers, in the order it offers it: "server/discover at
    /// MCP 2026-07-28, then initialize at 2025-11-25" (with the --protocol that pins it).
    pub fn offered(asked: ProtocolChoice) -> &'static str {
        match asked {
            ProtocolChoice::Auto => {
                "server/discover at MCP 2026-07-28, then initialize at 2025-11-25"
            }
            ProtocolChoice::Stateless => {
                "server/discover at MCP 2026-07-28 (--protocol 2026-07-28)"
            }
            ProtocolChoice::Session => "initialize at MCP 2025-11-25 (--protocol 2025-11-25)",
        }
    }

    /// The sentence of openings all refused: what this client offered, then each refusal with
    /// the server's answer whole.
    pub fn refused(asked: ProtocolChoice, refusals: &[String]) -> String {
        format!(
            "this client offered {}: {}",
            Opening::offered(asked),
            refusals.join("; then ")
        )
    }

    /// "server/discover at MCP 2026-07-28"
    pub fn describe(&self) -> String {
        format!("{} at MCP {}", self.method, self.version)
    }

    /// What the answer says. `answer` is the whole JSON-RPC message.
    pub fn judge(&self, answer: &Value) -> Answered {
        let whole = answer.to_string();
        if let Some(result) = answer.get("result") {
            let (version, also) = if self.method == "server/discover" {
                let listed = crate::protocol::json::strings(result.get("supportedVersions"));
                if !listed.iter().any(|v| v == self.version) {
                    return Answered::Refused(format!(
                        "it answered {} listing versions [{}], without {}: {whole}",
                        self.describe(),
                        listed.join(", "),
                        self.version
                    ));
                }
                (self.version.to_owned(), listed)
            } else {
                let v = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("(none)")
                    .to_owned();
                (v, Vec::new())
            };
            let name = result
                .pointer("/serverInfo/name")
                .or_else(|| result.pointer("/_meta/io.modelcontextprotocol~1serverInfo/name"))
                .and_then(Value::as_str)
                .unwrap_or("(unnamed)")
                .to_owned();
            return Answered::Speaks {
                name,
                version,
                also,
            };
        }
        let Some(error) = answer.get("error") else {
            return Answered::Refused(format!(
                "the answer to {} is neither a result nor an error: {whole}",
                self.describe()
            ));
        };
        let code = error.get("code").and_then(Value::as_i64);
        let supported = crate::protocol::json::strings(error.pointer("/data/supported"));
        Answered::Refused(match (self.method, code) {
            ("initialize", Some(-32022)) if !supported.is_empty() => format!(
                "it refused {} (-32022, unsupported protocol version): it speaks [{}]. \
                 The server's answer: {whole}",
                self.describe(),
                supported.join(", ")
            ),
            _ => format!(
                "it refused {}. The server's answer: {whole}",
                self.describe()
            ),
        })
    }

    /// What to do when every opening of `asked` was refused, from what the last answer says.
    pub fn advice(asked: ProtocolChoice, refusals: &[String]) -> String {
        let only_2026 = refusals
            .iter()
            .any(|r| r.contains("it speaks [2026-07-28]"));
        let no_discover = refusals
            .iter()
            .any(|r| r.contains("refused server/discover"));
        match asked {
            ProtocolChoice::Session if only_2026 => {
                "this server speaks only MCP 2026-07-28: use --protocol auto (the default) or \
                 --protocol 2026-07-28"
                    .into()
            }
            ProtocolChoice::Stateless if no_discover => {
                "this server does not speak MCP 2026-07-28 (it refused server/discover): use \
                 --protocol auto (the default) or --protocol 2025-11-25"
                    .into()
            }
            _ if only_2026 => "this server speaks only MCP 2026-07-28, and refused it too: see \
                               the server's answer and its log"
                .into(),
            _ => "the server refused every opening this client offered; see its answer above \
                  and its log"
                .into(),
        }
    }
}

fn client_info() -> Value {
    json!({"name": "bkn-explorer-doctor", "version": env!("CARGO_PKG_VERSION")})
}

/// What an opening's answer says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answered {
    /// The server speaks `version` (and lists `also` for discover).
    Speaks {
        name: String,
        version: String,
        also: Vec<String>,
    },
    /// The sentence of the refusal, the server's answer quoted whole.
    Refused(String),
}

/// The sentence of a connection the server refused: what the client offered, what the server
/// answered (whole), and the fix where the mismatch is known. None when the handshake failed
/// for another reason than the server's answer (the transport, a timeout).
pub fn handshake_refusal(
    error: &rmcp::service::ClientInitializeError,
    asked: ProtocolChoice,
) -> Option<String> {
    use rmcp::service::ClientInitializeError as E;
    let offered = Opening::offered(asked);
    let mut refusals = Vec::new();
    let mut describe = |e: &E| -> String {
        match e {
            E::JsonRpcError(data) => {
                let whole = serde_json::to_string(data).unwrap_or_default();
                let supported = data
                    .data
                    .as_ref()
                    .and_then(|d| d.get("supported"))
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    });
                let line = match supported {
                    Some(s) if data.code.0 == -32022 => {
                        format!(
                            "it speaks [{s}] (-32022, unsupported protocol version). The \
                             server's answer: {whole}"
                        )
                    }
                    _ => format!("it refused it. The server's answer: {whole}"),
                };
                refusals.push(line.clone());
                line
            }
            E::NoCompatibleProtocolVersion {
                client_supported,
                server_supported,
            } => {
                let list = |v: &[rmcp::model::ProtocolVersion]| {
                    v.iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let line = format!(
                    "it speaks [{}], this client offered [{}]",
                    list(server_supported),
                    list(client_supported)
                );
                refusals.push(line.clone());
                line
            }
            other => crate::client::connection::chain(other),
        }
    };
    let what = match error {
        E::LegacyFallbackFailed { discover, fallback } => format!(
            "server/discover: {}; then initialize: {}",
            describe(discover),
            describe(fallback)
        ),
        other => describe(other),
    };
    if refusals.is_empty() {
        return None;
    }
    // The refusal sentences as `advice` reads them.
    let seen: Vec<String> = refusals
        .iter()
        .map(|r| match asked {
            ProtocolChoice::Stateless => format!("refused server/discover: {r}"),
            _ => r.clone(),
        })
        .collect();
    Some(format!(
        "refused the MCP handshake: this client offered {offered}: {what}. {}",
        capitalised(&Opening::advice(asked, &seen))
    ))
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_strict_2026_server_refusing_initialize_is_named_with_its_fix() {
        let opening = Opening::initialize();
        let answer = json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}});
        let Answered::Refused(sentence) = opening.judge(&answer) else {
            panic!("a refusal")
        };
        assert!(
            sentence.contains("\"requested\":\"2025-11-25\""),
            "whole: {sentence}"
        );
        let advice = Opening::advice(ProtocolChoice::Session, &[sentence]);
        assert!(advice.contains("speaks only MCP 2026-07-28"), "{advice}");
        assert!(advice.contains("--protocol auto"), "{advice}");
    }

    #[test]
    fn discover_listing_the_version_is_spoken() {
        let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {
            "supportedVersions": ["2025-11-25", "2026-07-28"],
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}});
        assert_eq!(
            Opening::discover().judge(&answer),
            Answered::Speaks {
                name: "s".into(),
                version: "2026-07-28".into(),
                also: vec!["2025-11-25".into(), "2026-07-28".into()],
            }
        );
    }

    #[test]
    fn a_legacy_server_refusing_discover_is_named_with_its_fix() {
        let answer = json!({"jsonrpc": "2.0", "id": 0,
            "error": {"code": -32601, "message": "Method not found"}});
        let Answered::Refused(sentence) = Opening::discover().judge(&answer) else {
            panic!("a refusal")
        };
        let advice = Opening::advice(ProtocolChoice::Stateless, &[sentence]);
        assert!(advice.contains("--protocol 2025-11-25"), "{advice}");
    }
}
