//! A turn as command lines that reach the same server: `bkn-explorer send` with the Request,
//! and, for an HTTP server, `curl` with the MCP headers of the generation the dialogue speaks
//! (2026-07-28: one POST with `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `_meta`;
//! 2025-11-25: the session's sequence, initialize to DELETE). Every word is shell-quoted
//! (`shlex`); a secret is never written: the token is `$BKN_TOKEN`, a header's literal value
//! the variable a servers file keeps the server's secrets in (`BKN_<SERVER>_<HEADER>`).

use crate::client::spec::{ServerSpec, TransportSpec};
use serde_json::{Value, json};

/// One way to send the turn: a title, the command (to copy), and what to know about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// What kind of command line it is (the key that chooses it: `export-send`, …).
    pub format: Format,
    pub title: String,
    pub text: String,
    pub notes: Vec<String>,
}

/// The command lines a turn is exported as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Send,
    Curl,
}

impl Format {
    /// The action that chooses it in the overlay (keys.toml's `export-send`, `export-curl`).
    pub fn action(self) -> crate::tui::action::Action {
        match self {
            Format::Send => crate::tui::action::Action::ExportSend,
            Format::Curl => crate::tui::action::Action::ExportCurl,
        }
    }
}

/// What a turn is exported from.
pub struct Turn<'a> {
    pub spec: &'a ServerSpec,
    /// The MCP version the dialogue speaks, when known ("2026-07-28", "2025-11-25").
    pub protocol: Option<&'a str>,
    /// The BKN tool it calls.
    pub tool: &'a str,
    /// The Request as sent (or the draft).
    pub request: &'a Value,
    /// The explorer was given a bearer token (`--token`, `BKN_TOKEN`) for this server.
    pub token: bool,
    /// The Request is the composer's draft, not a turn sent: it has none of the common
    /// fields yet.
    pub draft: bool,
}

const NEW_GENERATION: &str = "2026-07-28";
const SESSIONS: &str = "2025-11-25";
/// Where the DialogID's shell variable goes in a body (no JSON text has it).
const DIALOG_MARK: &str = "@@BKN_DIALOG@@";

fn quote(word: &str) -> String {
    shlex::try_quote(word)
        .map(|q| q.into_owned())
        // Only a NUL byte cannot be quoted; JSON escapes it, a command never has one.
        .unwrap_or_else(|_| format!("'{}'", word.replace('\0', "")))
}

/// A word in double quotes, where the shell still expands `$VAR` / `${VAR}` (and nothing
/// else: `"`, `\` and backquotes escaped).
fn expanding(word: &str) -> String {
    let mut out = String::from("\"");
    for c in word.chars() {
        if matches!(c, '"' | '\\' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The variable a header's value is read from: its own `${VAR}` when it names one, else the
/// one a servers file keeps the server's secret in (`BKN_<SERVER>_<HEADER>`: the value itself
/// may be a secret, never written).
fn header_value(server: &str, name: &str, value: &str) -> (String, Option<String>) {
    if value.contains("${") {
        return (value.to_owned(), None);
    }
    let var = crate::client::spec::secret_variable(server, name);
    (format!("${{{var}}}"), Some(var))
}

/// The Request `send` is given: the Request as sent without its DialogID and TurnIndex,
/// which the new dialogue `send` opens fills with its own (a TurnIndex of an old dialogue
/// would be refused by a new one).
pub fn request_for_send(request: &Value) -> Value {
    let mut r = request.clone();
    if let Some(o) = r.as_object_mut() {
        o.remove("DialogID");
        o.remove("TurnIndex");
    }
    r
}

/// `bkn-explorer send` with the Request on its standard input, naming the same server.
pub fn send_line(turn: &Turn) -> Block {
    let mut notes = vec![if turn.draft {
        "the draft as the composer holds it: send fills the common fields (Header, DialogID, \
         TurnIndex, QueryID, QueryTime, MInstance…) in the new dialogue it opens"
            .to_owned()
    } else {
        "send opens a new dialogue: its DialogID and TurnIndex are its own (left out here, \
         send fills them); every other field as sent"
            .to_owned()
    }];
    let mut words: Vec<String> = ["bkn-explorer", "send", "-"]
        .iter()
        .map(|w| w.to_string())
        .collect();
    match &turn.spec.transport {
        TransportSpec::Embedded { interface, args } if args.is_empty() => {
            words.push("--embedded".into());
            words.push(interface.code().into());
        }
        TransportSpec::Embedded { .. } => {
            words.push("--stdio".into());
            words.push(quote(&turn.spec.location()));
        }
        TransportSpec::Stdio(s) => {
            words.push("--stdio".into());
            words.push(quote(&turn.spec.location()));
            if !s.env.is_empty() {
                let names: Vec<&str> = s.env.keys().map(String::as_str).collect();
                notes.push(format!(
                    "the server's definition sets {} in its environment: export them first \
                     (their values are not written here)",
                    names.join(", ")
                ));
            }
            if let Some(cwd) = &s.cwd {
                notes.push(format!("the server runs in {cwd}: run the line there"));
            }
        }
        TransportSpec::Http(h) => {
            words.push("--url".into());
            words.push(quote(&h.url));
            for (name, value) in &h.headers {
                let (value, var) = header_value(&turn.spec.name, name, value);
                words.push("--header".into());
                // send reads ${VAR} from the environment itself: single quotes keep it.
                words.push(quote(&format!("{name}: {value}")));
                if let Some(var) = var {
                    notes.push(format!("set {var} to the value of the {name} header"));
                }
            }
            if h.token.is_some() || turn.token {
                words.push("--token".into());
                words.push("\"$BKN_TOKEN\"".into());
                notes.push("set BKN_TOKEN to the server's bearer token".into());
            }
        }
    }
    if let Some(p) = turn.protocol {
        words.push("--protocol".into());
        words.push(quote(p));
    }
    let json = serde_json::to_string(&request_for_send(turn.request)).unwrap_or_default();
    Block {
        format: Format::Send,
        title: "bkn-explorer send".into(),
        text: format!("printf '%s\\n' {} | {}", quote(&json), words.join(" ")),
        notes,
    }
}

/// The headers every POST of a turn carries (and the caller's own).
fn common_headers(turn: &Turn, notes: &mut Vec<String>) -> Vec<String> {
    let mut words = vec![
        "-H".to_owned(),
        quote("Content-Type: application/json"),
        "-H".to_owned(),
        quote("Accept: application/json, text/event-stream"),
    ];
    if let TransportSpec::Http(h) = &turn.spec.transport {
        for (name, value) in &h.headers {
            let (value, var) = header_value(&turn.spec.name, name, value);
            words.push("-H".into());
            words.push(expanding(&format!("{name}: {value}")));
            if let Some(var) = var {
                notes.push(format!("set {var} to the value of the {name} header"));
            }
        }
        if h.token.is_some() || turn.token {
            words.push("-H".into());
            words.push("\"Authorization: Bearer $BKN_TOKEN\"".into());
            notes.push("set BKN_TOKEN to the server's bearer token".into());
        }
    }
    words
}

/// `curl` for an HTTP server, in the generation the dialogue speaks; None for a stdio one.
pub fn curl(turn: &Turn) -> Option<Block> {
    let TransportSpec::Http(h) = &turn.spec.transport else {
        return None;
    };
    let mut notes = vec![
        "curl opens a new dialogue too: the Request as sent, but for its DialogID (the new \
         dialogue's: $DIALOG or the session's $SID) and TurnIndex 0"
            .to_owned(),
    ];
    if turn.draft {
        notes.insert(
            0,
            "a draft has none of the common fields (Header, QueryID, QueryTime…): curl sends \
             it as it is, and a server refuses it; select a sent turn to export it for curl"
                .to_owned(),
        );
    }
    let headers = common_headers(turn, &mut notes);
    notes.dedup();
    let url = quote(&h.url);
    let mut arguments = turn.request.clone();
    if let Some(o) = arguments.as_object_mut() {
        o.insert("DialogID".into(), json!(DIALOG_MARK));
        o.insert("TurnIndex".into(), json!(0));
    }
    Some(match turn.protocol.unwrap_or(SESSIONS) {
        NEW_GENERATION => curl_stateless(turn, &url, headers, &arguments, notes),
        _ => curl_session(turn, &url, &headers, &arguments, notes),
    })
}

/// The body quoted in pieces, the DialogID a shell variable between them (one word).
fn body_with_dialog(body: &Value, var: &str) -> String {
    body.to_string()
        .split(DIALOG_MARK)
        .map(quote)
        .collect::<Vec<_>>()
        .join(&format!("\"${var}\""))
}

/// MCP 2026-07-28: one POST, no session; the version and the client's capabilities travel
/// in _meta, the method and tool in headers.
fn curl_stateless(
    turn: &Turn,
    url: &str,
    headers: Vec<String>,
    arguments: &Value,
    mut notes: Vec<String>,
) -> Block {
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": turn.tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": NEW_GENERATION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let mut words = vec!["curl".to_owned(), "-sS".into(), url.to_owned()];
    words.extend(headers);
    for h in [
        format!("MCP-Protocol-Version: {NEW_GENERATION}"),
        "Mcp-Method: tools/call".into(),
        format!("Mcp-Name: {}", turn.tool),
    ] {
        words.push("-H".into());
        words.push(quote(&h));
    }
    words.push("--data-binary".into());
    words.push(body_with_dialog(&call, "DIALOG"));
    notes.insert(
        0,
        "MCP 2026-07-28: one POST, no session; the version and the client's \
         capabilities travel in _meta, the method and tool in headers"
            .into(),
    );
    Block {
        format: Format::Curl,
        title: "curl (MCP 2026-07-28)".into(),
        // The client names a dialogue over 2026-07-28: a new one for each run.
        text: format!("DIALOG=bkn-curl-$(date +%s)-$$\n{}", words.join(" ")),
        notes,
    }
}

/// MCP 2025-11-25: the session's sequence (initialize, notifications/initialized, the
/// call, DELETE).
fn curl_session(
    turn: &Turn,
    url: &str,
    headers: &[String],
    arguments: &Value,
    mut notes: Vec<String>,
) -> Block {
    let session = "-H \"Mcp-Session-Id: $SID\"".to_owned();
    let version = format!("-H {}", quote(&format!("MCP-Protocol-Version: {SESSIONS}")));
    let headers = headers.join(" ");
    let post = |json: &Value| {
        format!(
            "curl -sS \"$URL\" {headers} {session} {version} --data-binary {}",
            body_with_dialog(json, "SID")
        )
    };
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": SESSIONS, "capabilities": {},
                   "clientInfo": {"name": "curl", "version": "1"}},
    });
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": turn.tool, "arguments": arguments},
    });
    let text = [
        format!("URL={url}"),
        format!(
            "SID=$(curl -sS -D - -o /dev/null \"$URL\" {headers} --data-binary {} | tr -d '\\r' | sed -n 's/^[Mm][Cc][Pp]-[Ss][Ee][Ss][Ss][Ii][Oo][Nn]-[Ii][Dd]: *//p')",
            quote(&initialize.to_string())
        ),
        post(&initialized),
        post(&call),
        format!("curl -sS -X DELETE \"$URL\" {session} {version}"),
    ]
    .join("\n");
    notes.insert(
        0,
        "MCP 2025-11-25 has sessions: initialize (its answer's Mcp-Session-Id header \
         names the session), notifications/initialized, the call, then DELETE ends it"
            .into(),
    );
    Block {
        format: Format::Curl,
        title: "curl (MCP 2025-11-25: the session's sequence)".into(),
        text,
        notes,
    }
}

/// Every way to send the turn.
pub fn blocks(turn: &Turn) -> Vec<Block> {
    let mut out = vec![send_line(turn)];
    out.extend(curl(turn));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::spec::HttpSpec;
    use crate::protocol::Interface;

    fn request() -> Value {
        json!({"Header": "PGM-KDA-V1.0", "DialogID": "d-1", "TurnIndex": 3,
               "Kind": "semantic_grounding", "Question": "It's the bench's?"})
    }

    #[test]
    fn the_send_line_quotes_the_request_and_names_the_server() {
        let spec = ServerSpec::embedded(Interface::Dac);
        let r = request();
        let b = send_line(&Turn {
            spec: &spec,
            protocol: Some("2025-11-25"),
            tool: "bkn_dac",
            request: &r,
            token: false,
            draft: false,
        });
        assert!(
            b.text
                .ends_with("| bkn-explorer send - --embedded dac --protocol 2025-11-25"),
            "{}",
            b.text
        );
        // The quoted JSON comes back whole from a shell's split, without DialogID/TurnIndex.
        let words = shlex::split(&b.text).unwrap();
        let json: Value = serde_json::from_str(&words[2]).unwrap();
        assert_eq!(json["Question"], "It's the bench's?");
        assert!(json.get("DialogID").is_none() && json.get("TurnIndex").is_none());
    }

    #[test]
    fn http_never_writes_a_secret() {
        let mut spec = ServerSpec::new(
            "remote",
            TransportSpec::Http(HttpSpec {
                url: "https://example.org/mcp".into(),
                token: Some("s3cret".into()),
                ..HttpSpec::default()
            }),
        );
        if let TransportSpec::Http(h) = &mut spec.transport {
            h.headers.insert("X-Api-Key".into(), "k3y".into());
            h.headers.insert("X-Team".into(), "${TEAM}".into());
        }
        let r = request();
        for protocol in ["2026-07-28", "2025-11-25"] {
            let all = blocks(&Turn {
                spec: &spec,
                protocol: Some(protocol),
                tool: "bkn_dac",
                request: &r,
                token: false,
                draft: false,
            });
            assert_eq!(all.len(), 2);
            for b in &all {
                assert!(
                    !b.text.contains("s3cret") && !b.text.contains("k3y"),
                    "{}",
                    b.text
                );
                assert!(b.text.contains("$BKN_TOKEN"), "{}", b.text);
                assert!(b.text.contains("${BKN_REMOTE_X_API_KEY}"), "{}", b.text);
                assert!(b.text.contains("${TEAM}"), "{}", b.text);
            }
        }
        let new = &blocks(&Turn {
            spec: &spec,
            protocol: Some("2026-07-28"),
            tool: "bkn_dac",
            request: &r,
            token: false,
            draft: false,
        })[1];
        for h in [
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call",
            "Mcp-Name: bkn_dac",
        ] {
            assert!(new.text.contains(h), "{}", new.text);
        }
        assert!(new.text.contains("io.modelcontextprotocol/protocolVersion"));
    }
}
