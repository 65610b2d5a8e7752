//! The reference servers against every rule of MCP-BINDING.md that an earlier version broke,
//! over stdio and HTTP, with each case named after the rule; the JSON-RPC errors of
//! unreadable input, seen on the wire; messages nested 200 levels deep; the resources'
//! shapes; and a third-party Domain Access (a raw JSON-RPC server in Python, written from the
//! binding alone) through the headless commands.

use crate::common;

use bkn_explorer::protocol::Interface;
use bkn_explorer::protocol::resources::Shape;
use common::{Generation, Server, Transport, commitment_states, plan, statuses};
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};

const BOTH: [Transport; 2] = [Transport::Stdio, Transport::Http];

#[tokio::test]
async fn a_retained_negative_commitment_stops_placing_an_unplaced_item() {
    for transport in BOTH {
        let server = Server::start(transport, &["dac"]).await;
        let mut d = server.dialogue(Interface::Dac).await;
        let r = d
            .send(json!({"Kind": "commitment", "Commitments": [
                {"CommitmentID": "c1", "Statement": "Kiosk#3 not locatedAt MLoc:Square.Stage"}]}))
            .await
            .response();
        assert_eq!(commitment_states(&r)["c1"], "retained");
        let r = d
            .send(plan(&["MM-Add Nil Kiosk#3 At MLoc:Square.Stage"]))
            .await
            .response();
        assert_eq!(statuses(&r), ["Clash"], "{transport:?}");
        assert_eq!(r["Feasibility"]["Overall"], "infeasible");
        let reason = r["Feasibility"]["Steps"][0]["Reason"].as_str().unwrap();
        assert!(reason.contains("commitment c1"), "{reason}");
        // Elsewhere it may go.
        let r = d
            .send(plan(&["MM-Add Nil Kiosk#3 At MLoc:Square.Gate"]))
            .await
            .response();
        assert_eq!(statuses(&r), ["Ack"]);
    }
}

#[tokio::test]
async fn targets_of_the_wrong_kind_and_repeated_complements_are_faulty() {
    for transport in BOTH {
        let server = Server::start(transport, &["dac"]).await;
        let mut d = server.dialogue(Interface::Dac).await;
        let cases = [
            (
                "MM-Add Nil Kiosk#3 At Process#Market",
                "At takes an M-Location",
            ),
            ("MM-Move Nil Avatar#7 To Avatar#9", "To takes an M-Location"),
            (
                "MM-Move Nil MLoc:Square.Gate To MLoc:Square.Stage",
                "Nil takes an Item",
            ),
            (
                "MM-Move Nil Avatar#7 To MLoc:Square.Stage To MLoc:Square.Gate",
                "given twice",
            ),
            ("Post Nil Artwork#5 To MLoc:Square.Stage", "a Process"),
        ];
        let statements: Vec<&str> = cases.iter().map(|(s, _)| *s).collect();
        let r = d.send(plan(&statements)).await.response();
        assert_eq!(statuses(&r), ["FaultyReq"; 5], "{transport:?}: {r:#}");
        for (i, (statement, why)) in cases.iter().enumerate() {
            let reason = r["Feasibility"]["Steps"][i]["Reason"].as_str().unwrap();
            assert!(reason.contains(why), "{statement}: {reason}");
        }
    }
}

#[tokio::test]
async fn with_repeats_only_with_different_parameters() {
    for transport in BOTH {
        let server = Server::start(transport, &["dac"]).await;
        let mut d = server.dialogue(Interface::Dac).await;
        let r = d
            .send(plan(&[
                "MM-Move Nil Avatar#7 To MLoc:Square.Stage With SpatialAttitude=upright With SpatialAttitude=upright",
                "MM-Move Nil Avatar#7 To MLoc:Square.Stage With SpatialAttitude=upright With Speed=slow",
            ]))
            .await
            .response();
        let got = statuses(&r);
        assert_eq!(got[0], "FaultyReq", "{transport:?}: {r:#}");
        let reason = r["Feasibility"]["Steps"][0]["Reason"].as_str().unwrap();
        assert!(
            reason.contains("With SpatialAttitude=upright is given twice"),
            "{reason}"
        );
        assert_ne!(
            got[1], "FaultyReq",
            "different parameters may repeat: {r:#}"
        );
    }
}

#[tokio::test]
async fn an_upper_case_not_is_opaque_text_and_never_conflicts() {
    for transport in BOTH {
        let server = Server::start(transport, &["dac"]).await;
        let mut d = server.dialogue(Interface::Dac).await;
        // The domain has Fountain#1 at MLoc:Square.Fountain: a lower-case negation of it
        // conflicts, the upper-case one is not a triple at all.
        let r = d
            .send(json!({"Kind": "commitment", "Commitments": [
                {"CommitmentID": "c1", "Statement": "Fountain#1 NOT locatedAt MLoc:Square.Fountain"},
                {"CommitmentID": "c2", "Statement": "Fountain#1 not locatedAt MLoc:Square.Fountain"}]}))
            .await
            .response();
        let states = commitment_states(&r);
        assert_eq!(states["c1"], "retained", "{transport:?}: {r:#}");
        assert_eq!(states["c2"], "conflicting", "{transport:?}: {r:#}");
    }
}

#[tokio::test]
async fn a_post_the_rights_cannot_be_checked_for_is_never_ack() {
    for transport in BOTH {
        let server = Server::start(
            transport,
            &["dac", "--fail-source", "rights-registry=transient"],
        )
        .await;
        let mut d = server.dialogue(Interface::Dac).await;
        let r = d
            .send(plan(&["Post Nil Item#12 To Process#Market"]))
            .await
            .response();
        assert_eq!(statuses(&r), ["InsRights"]);
        assert_ne!(r["Feasibility"]["Overall"], "feasible");
        assert_eq!(r["Failure"]["Service"], "rights-registry");
    }
}

#[tokio::test]
async fn turn_indexes_beyond_the_i_json_range_are_refused_and_the_rule_stays_on() {
    for transport in BOTH {
        let server = Server::start(transport, &["dac"]).await;
        let mut d = server.dialogue(Interface::Dac).await;
        d.next_turn = 3;
        d.send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
            .await
            .response();
        let mut big = json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]});
        big["TurnIndex"] = serde_json::from_str("1e20").unwrap();
        let error = d.send(big).await.tool_error();
        assert!(error.contains("/TurnIndex"), "{error}");
        let mut max = json!({"Kind": "constraints"});
        max["TurnIndex"] = json!(9_007_199_254_740_992u64);
        assert!(d.send(max).await.tool_error().contains("schema.range"));
        // The turn rule is still on: 2 comes after 3's acceptance.
        d.next_turn = 2;
        let error = d.send(json!({"Kind": "constraints"})).await.tool_error();
        assert!(error.contains("dialogue.turn-order"), "{error}");
        // 2.0 is 2: a Response copying 2.0 has the TurnIndex of its Request.
        d.next_turn = 4;
        let mut float = json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]});
        float["TurnIndex"] = serde_json::from_str("4.0").unwrap();
        d.send(float).await.response();
    }
}

#[tokio::test]
async fn the_first_accepted_request_binds_the_dialog_id_in_both_generations() {
    // MCP-BINDING section 3: whatever DialogID the first accepted Request carries (so that a
    // generic client, which cannot know an Mcp-Session-Id in advance, works); a rejected
    // Request binds nothing; within an MCP session another DialogID later is non-conformant.
    for generation in Generation::BOTH {
        let server = Server::start_in(Transport::Http, generation, &["dac"]).await;
        let mut d = server.dialogue(Interface::Dac).await;
        d.dialog_id = "chosen-by-the-client".into();
        // Rejected (an unknown property): binds nothing.
        let error = d
            .send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"], "Bogus": 1}))
            .await
            .tool_error();
        assert!(error.contains("/Bogus"), "{generation:?}: {error}");
        d.dialog_id = "the-dialogue".into();
        d.send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
            .await
            .response();
        if generation == Generation::Session {
            d.dialog_id = "another".into();
            let error = d
                .send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
                .await
                .tool_error();
            assert!(
                error.contains("/DialogID") && error.contains("the-dialogue"),
                "{error}"
            );
        }
    }
}

/// A nested object of `levels` levels.
fn nested(levels: usize) -> Value {
    let mut v = json!("bottom");
    for _ in 0..levels {
        v = json!({"n": v});
    }
    v
}

#[tokio::test]
async fn messages_nested_200_and_999_levels_deep_are_read_and_answered() {
    for transport in BOTH {
        for interface in Interface::ALL {
            let server = Server::start(transport, &[interface.code()]).await;
            let mut d = server.dialogue(interface).await;
            // 999 levels in all: the message, its DataXMData, and the rest in Deep.
            for levels in [200, 999] {
                let mut fields = match interface {
                    Interface::Dac => json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}),
                    Interface::Usr => json!({"UserID": "User#Ana"}),
                };
                fields["DataXMData"] =
                    json!({"Source": [{"AIMID": "PGM-BKN"}], "Deep": nested(levels - 2)});
                let r = d.send(fields).await.response();
                assert_eq!(
                    r["Outcome"], "answered",
                    "{transport:?} {interface} {levels}"
                );
            }
        }
    }
}

/// A BKN-DAC Request nested `levels` deep in all (its DataXMData carries the depth).
fn deep_request(levels: usize) -> Value {
    json!({"Header": "PGM-KDA-V1.0", "Mode": "RQ", "Kind": "constraints",
           "EntityIDs": ["Avatar#7"],
           "DataXMData": {"DataID": "d", "Source": [{"AIMID": "PGM-BKN"}],
                          "Deep": nested(levels - 2)}})
}

/// MCP-BINDING section 6: no command refuses a message for its depth below 1,000 levels.
/// `send` used to refuse 128 levels ("recursion limit exceeded") and `dialogue --save`
/// wrote a one-byte file for them, exiting 0.
#[test]
fn send_and_dialogue_save_keep_requests_nested_200_and_999_levels() {
    use bkn_explorer::client::turn::Reply;
    use bkn_explorer::session::Session;
    let dir = tempfile::tempdir().unwrap();
    for levels in [200, 999] {
        let request = dir.path().join(format!("deep-{levels}.json"));
        // Written by our own serialiser: serde_json writes any depth.
        std::fs::write(&request, serde_json::to_vec(&deep_request(levels)).unwrap()).unwrap();

        let sent = Command::new(common::bin())
            .arg("send")
            .arg(&request)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&sent.stderr);
        assert!(sent.status.success(), "send, {levels} levels: {stderr}");
        let response: Value =
            bkn_explorer::protocol::json::from_slice(&sent.stdout).expect("send prints JSON");
        assert_eq!(response["Outcome"], "answered", "{levels} levels: {stderr}");

        let saved = dir.path().join(format!("session-{levels}.json"));
        let run = Command::new(common::bin())
            .arg("dialogue")
            .arg(&request)
            .arg("--save")
            .arg(&saved)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            run.status.success(),
            "dialogue --save, {levels} levels: {stderr}"
        );
        let session = Session::load(&saved).expect("the saved session loads");
        let turn = &session.dialogues[0].turns[0];
        let deepest = format!("/DataXMData/Deep{}", "/n".repeat(levels - 2));
        assert_eq!(
            turn.request.value().pointer(&deepest),
            Some(&json!("bottom")),
            "{levels} levels: the saved Request keeps its whole depth"
        );
        assert!(matches!(turn.reply, Reply::Response(_)), "{levels} levels");
    }
}

/// MCP-BINDING section 6 through the recording proxy: a Request nested 999 levels passes
/// through `proxy -- serve dac` (stdio) and `proxy --http` (both MCP generations), is answered,
/// and is recorded whole: the recording loads with the Request's whole depth, validates, and
/// `replay --update` rewrites it.
#[tokio::test]
async fn the_proxies_pass_and_record_a_request_nested_999_levels() {
    use bkn_explorer::session::Session;
    let dir = tempfile::tempdir().unwrap();
    let request = dir.path().join("deep.json");
    std::fs::write(&request, serde_json::to_vec(&deep_request(999)).unwrap()).unwrap();
    let deepest = format!("/DataXMData/Deep{}", "/n".repeat(997));
    let dialogue = |target: &[&str]| {
        let out = Command::new(common::bin())
            .arg("dialogue")
            .arg(&request)
            .args(target)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{target:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("\"outcome\":\"answered\""),
            "{target:?}"
        );
    };
    let recorded = |record: &std::path::Path, turns: usize| {
        let session = Session::load(record).expect("the recording loads");
        let all: Vec<_> = session.dialogues.iter().flat_map(|d| &d.turns).collect();
        assert_eq!(all.len(), turns, "{}", record.display());
        for turn in all {
            assert_eq!(
                turn.request.value().pointer(&deepest),
                Some(&json!("bottom")),
                "the recorded Request keeps its whole depth"
            );
            assert!(matches!(
                turn.reply,
                bkn_explorer::client::turn::Reply::Response(_)
            ));
        }
        let validate = Command::new(common::bin())
            .arg("validate")
            .arg(record)
            .output()
            .unwrap();
        assert_eq!(validate.status.code(), Some(0), "{}", record.display());
        let update = Command::new(common::bin())
            .arg("replay")
            .arg(record)
            .args(["--embedded", "dac", "--update"])
            .output()
            .unwrap();
        assert_eq!(
            update.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&update.stderr)
        );
        let updated = Session::load(record).unwrap();
        assert_eq!(
            updated.dialogues[0].turns[0]
                .request
                .value()
                .pointer(&deepest),
            Some(&json!("bottom")),
            "replay --update keeps the whole depth"
        );
    };

    // stdio: the proxy stands in for the server's command.
    let stdio_record = dir.path().join("stdio.jsonl");
    let stdio = format!(
        "{} proxy --record {} -- {} serve dac",
        common::bin(),
        stdio_record.display(),
        common::bin()
    );
    dialogue(&["--stdio", &stdio]);
    recorded(&stdio_record, 1);

    // HTTP, in each generation.
    let upstream = common::spawn_http(&["dac".into()]).await;
    let http_record = dir.path().join("http.jsonl");
    let mut proxy = tokio::process::Command::new(common::bin())
        .args([
            "proxy",
            "--http",
            "127.0.0.1:0",
            "--upstream",
            &upstream.url,
        ])
        .arg("--record")
        .arg(&http_record)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(proxy.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines.next_line().await.unwrap().expect("the proxy listens");
            if let Some(at) = line.find("http://") {
                break line[at..].split([',', ' ']).next().unwrap().to_owned();
            }
        };
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        url
    };
    for protocol in ["2025-11-25", "2026-07-28"] {
        dialogue(&["--url", &url, "--protocol", protocol]);
    }
    proxy.start_kill().unwrap();
    proxy.wait().await.unwrap();
    recorded(&http_record, 2);
}

/// MCP-BINDING section 6: messages are I-JSON. A member name given twice and a number beyond
/// a double are findings at their pointers, not a silent last-wins nor "unreadable".
#[test]
fn validate_reports_a_member_given_twice_and_a_number_beyond_a_double() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("irregular.json");
    std::fs::write(
        &file,
        r#"{"Header": "PGM-KDA-V1.0", "Mode": "RQ", "MInstance": "m", "UEnvironment": "u",
            "SessionID": "s", "QueryID": "q", "QueryTime": "2026-01-01T00:00:00Z",
            "DialogID": "d", "TurnIndex": 1e400, "Kind": "constraints",
            "DataXMData": {"DataID": "x", "Source": [{"AIMID": "a"}], "DataID": "y"},
            "Kind": "feasibility"}"#,
    )
    .unwrap();
    let out = Command::new(common::bin())
        .args(["validate", "--format", "json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "non-conformant, not unreadable");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["unreadable"], 0, "{report:#}");
    let found: Vec<(String, String)> = report["files"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_owned(),
                f["pointer"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for expected in [
        ("ijson.number-range", "/TurnIndex"),
        ("ijson.duplicate-member", "/DataXMData/DataID"),
        ("ijson.duplicate-member", "/Kind"),
    ] {
        assert!(
            found.contains(&(expected.0.to_owned(), expected.1.to_owned())),
            "{expected:?} in {found:?}"
        );
    }
}

/// The reference Domain Access over stdio, spoken to as raw JSON-RPC lines.
fn stdio_server() -> std::process::Child {
    Command::new(common::bin())
        .args(["serve", "dac", "--log-level", "error"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// One line to a stdio server and the line it answers.
fn stdio_exchange(lines: &[&str]) -> Vec<Value> {
    let mut child = stdio_server();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

#[test]
fn unreadable_lines_on_stdio_get_json_rpc_errors() {
    let replies = stdio_exchange(&[
        INITIALIZE,
        INITIALIZED,
        "{this is not json",
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"bkn_dac","arguments":[1,2]}}"#,
        r#"{"jsonrpc":"2.0","id":6}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bkn_nope","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#,
    ]);
    let by_id = |id: Value| {
        replies
            .iter()
            .find(|r| r["id"] == id && r.get("error").is_some())
            .unwrap_or_else(|| panic!("no error for id {id}: {replies:#?}"))
            .clone()
    };
    assert_eq!(by_id(Value::Null)["error"]["code"], -32700);
    assert_eq!(by_id(json!(5))["error"]["code"], -32602);
    assert_eq!(by_id(json!(6))["error"]["code"], -32600);
    assert_eq!(by_id(json!(7))["error"]["code"], -32602);
    // And the server went on: the ping after them was answered.
    assert!(
        replies
            .iter()
            .any(|r| r["id"] == 8 && r.get("result").is_some())
    );
}

/// A request whose `id` is neither a string nor a number (an object, an array, `true`,
/// `null`) gets -32600 with id null (JSON-RPC 2.0), never silence and never its id echoed:
/// over stdio a reply line each (the server goes on), over HTTP a 400 with a JSON-RPC body
/// (it was a text/plain 415), in both generations (issue 27, item 9).
#[tokio::test]
async fn a_request_whose_id_is_not_a_string_or_number_gets_invalid_request() {
    let bad_ids = ["{\"a\":1}", "[1]", "true", "null"];
    let call = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"bkn_dac","arguments":{{}}}}}}"#
        )
    };
    let mut lines: Vec<String> = vec![INITIALIZE.into(), INITIALIZED.into()];
    lines.extend(bad_ids.iter().map(|id| call(id)));
    lines.push(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#.into());
    let replies = stdio_exchange(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    let invalid: Vec<&Value> = replies
        .iter()
        .filter(|r| r["error"]["code"] == -32600)
        .collect();
    assert_eq!(invalid.len(), bad_ids.len(), "{replies:#?}");
    assert!(invalid.iter().all(|r| r["id"].is_null()), "{replies:#?}");
    assert!(
        !replies.iter().any(|r| r["id"] == true),
        "an id of true echoed: {replies:#?}"
    );
    assert!(
        replies
            .iter()
            .any(|r| r["id"] == 8 && r.get("result").is_some()),
        "the server went on: {replies:#?}"
    );

    let server = Server::start(Transport::Http, &["dac"]).await;
    let (_client, session) = common::http_session(server.url()).await;
    let session = session.unwrap();
    let http = reqwest::Client::new();
    for stateless in [false, true] {
        for id in bad_ids {
            let mut r = http
                .post(server.url())
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream");
            r = if stateless {
                r.header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", "bkn_dac")
            } else {
                r.header("mcp-session-id", &session)
                    .header("mcp-protocol-version", "2025-11-25")
            };
            let r = r.body(call(id)).send().await.unwrap();
            let status = r.status().as_u16();
            let text = r.text().await.unwrap();
            assert_eq!(status, 400, "id {id}, stateless {stateless}: {text}");
            let reply: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("id {id}: not a JSON-RPC body ({e}): {text}"));
            assert_eq!(reply["error"]["code"], -32600, "{text}");
            assert!(reply["id"].is_null(), "{text}");
        }
    }
}

/// Over HTTP, in both generations: what is not a readable request is refused with a 4xx and a
/// JSON-RPC error body (-32700, -32600); the JSON-RPC error of a well-formed request (an
/// unknown tool, arguments that are not an object: -32602; an unknown method: -32601)
/// travels in a 200 (but an unknown method over 2026-07-28, which MCP answers 404), and so does the tool error of a Request that is an object but not
/// conformant (MCP-BINDING section 2).
#[tokio::test]
async fn unreadable_bodies_over_http_get_json_rpc_errors() {
    let server = Server::start(Transport::Http, &["dac"]).await;
    let (_client, session) = common::http_session(server.url()).await;
    let session = session.unwrap();
    let http = reqwest::Client::new();
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}"#;
    let not_conformant = r#"{"Header":"PGM-KDA-V1.0","Kind":"nonsense"}"#;
    for stateless in [false, true] {
        let (meta, only) = if stateless {
            (format!(",{meta}"), meta.to_owned())
        } else {
            (String::new(), String::new())
        };
        let cases: Vec<(String, Option<i64>, u16)> = vec![
            ("{this is not json".into(), Some(-32700), 400),
            (r#"{"jsonrpc":"2.0","id":6}"#.into(), Some(-32600), 400),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"bkn_dac","arguments":"x"{meta}}}}}"#
                ),
                Some(-32602),
                200,
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"bkn_nope","arguments":{{}}{meta}}}}}"#
                ),
                Some(-32602),
                200,
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":8,"method":"nope/nothing","params":{{{only}}}}}"#
                ),
                Some(-32601),
                // "As MCP does": 2026-07-28 answers a method it does not have with 404
                // (the official SDKs do, and the suite's revision checks it).
                if stateless { 404 } else { 200 },
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"bkn_dac","arguments":{not_conformant}{meta}}}}}"#
                ),
                None,
                200,
            ),
        ];
        for (body, code, status) in cases {
            // Over 2025-11-25 the request is the session's; over 2026-07-28 it carries the
            // version in `_meta` and the headers that generation asks for.
            let method = serde_json::from_str::<Value>(&body)
                .ok()
                .and_then(|v| v["method"].as_str().map(str::to_owned));
            let mut r = http
                .post(server.url())
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream");
            if stateless {
                r = r.header("mcp-protocol-version", "2026-07-28");
                if let Some(method) = &method {
                    r = r.header("mcp-method", method);
                }
                if let Some(name) = serde_json::from_str::<Value>(&body)
                    .ok()
                    .and_then(|v| v["params"]["name"].as_str().map(str::to_owned))
                {
                    r = r.header("mcp-name", name);
                }
            } else {
                r = r
                    .header("mcp-session-id", &session)
                    .header("mcp-protocol-version", "2025-11-25");
            }
            let r = r.body(body.clone()).send().await.unwrap();
            let got = r.status().as_u16();
            let text = r.text().await.unwrap();
            let what = format!("stateless {stateless}, {body}: {got} {text}");
            assert_eq!(got, status, "{what}");
            let reply: Value = serde_json::from_str(
                text.lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim)
                    .find(|d| d.starts_with('{'))
                    .unwrap_or(&text),
            )
            .unwrap_or_else(|e| panic!("a JSON-RPC body, not plain text ({e}): {what}"));
            assert_eq!(reply["jsonrpc"], "2.0", "{what}");
            match code {
                Some(code) => assert_eq!(reply["error"]["code"], code, "{what}"),
                None => {
                    assert_eq!(reply["result"]["isError"], true, "{what}");
                    assert!(
                        reply["result"]["content"][0]["text"]
                            .as_str()
                            .is_some_and(|t| t.contains("/Kind")),
                        "the violation at its pointer: {what}"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn resources_have_the_shapes_of_docs_resources() {
    for transport in BOTH {
        for interface in Interface::ALL {
            let server = Server::start(transport, &[interface.code()]).await;
            let client = server.session().await;
            let uris: Vec<String> = client
                .list_all_resources()
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.uri)
                .collect();
            let mut checked = 0;
            for uri in &uris {
                let Some(shape) = Shape::of_uri(uri) else {
                    continue;
                };
                let read = client
                    .read_resource(ReadResourceRequestParams::new(uri.clone()))
                    .await
                    .unwrap();
                let rmcp::model::ResourceContents::TextResourceContents { text, .. } =
                    &read.contents[0]
                else {
                    panic!("{uri} is not text")
                };
                let value: Value = serde_json::from_str(text).unwrap();
                let mistakes = shape.check(&value);
                assert!(mistakes.is_empty(), "{uri}: {mistakes:?}");
                if matches!(shape, Shape::DacDomain | Shape::UsrUsers) {
                    assert_eq!(value["MInstance"], "MI:PublicSquare", "{uri}");
                    assert_eq!(value["UEnvironment"], "UE:Square", "{uri}");
                }
                checked += 1;
            }
            assert!(checked >= 2, "{interface}: {uris:?}");
        }
    }
}

/// A server with no BKN tool at all (any other MCP server): the error says what can still be
/// done with it, with the options that name it, not a generic advice.
#[test]
fn send_to_a_server_without_a_bkn_tool_points_to_its_tools_calls_and_resources() {
    let line = peer("--not-bkn");
    let (code, _, err) = explorer(
        &["send", "-", "--interface", "dac", "--stdio", &line],
        r#"{"Kind": "constraints"}"#,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("has no BKN-DAC tool"), "{err}");
    assert!(err.contains("its tools: lookup"), "{err}");
    let quoted = shlex::try_quote(&line).unwrap().into_owned();
    for expected in [
        format!("bkn-explorer tools --stdio {quoted}"),
        format!("bkn-explorer call lookup '{{...arguments}}' --stdio {quoted}"),
        format!(
            "its 2 resources: bkn-explorer resources --stdio {quoted}, then bkn-explorer read dac://domain --stdio {quoted}"
        ),
    ] {
        assert!(err.contains(&expected), "{expected}\nnot in:\n{err}");
    }
}

/// `tools` and `doctor` on such a server say its generation without promising a dialogue of
/// the binding (no DialogID, no dialogue's state): it has no BKN tool.
#[test]
fn tools_and_doctor_on_a_server_without_a_bkn_tool_name_no_dialogue() {
    let line = peer("--not-bkn");
    let (code, out, err) = explorer(&["tools", "--stdio", &line], "");
    assert_eq!(code, 0, "{err}");
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.contains("(with an MCP session)") || first.contains("(stateless: no MCP session)"),
        "{first}"
    );
    let (_, out, err) = explorer(&["doctor", "--stdio", &line], "");
    let all = format!("{out}{err}");
    assert!(!all.contains("DialogID"), "{all}");
    assert!(!all.contains("dialogue's state"), "{all}");
    // A server with a BKN tool is still told where its dialogue's state lives.
    let (_, out, err) = explorer(&["doctor", "--stdio", &peer("")], "");
    let all = format!("{out}{err}");
    assert!(all.contains("DialogID"), "{all}");
}

fn peer(flags: &str) -> String {
    format!(
        "{} {}/tests/peers/raw_dac_server.py {flags}",
        common::python3().expect("python3"),
        env!("CARGO_MANIFEST_DIR")
    )
}

fn explorer(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(common::bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_third_party_server_answering_feasible_with_a_clash_fails_send() {
    let request = r#"{"Kind": "feasibility", "ProcessActions": [
        {"Step": 0, "Statement": "MM-Move Nil Robot#1 To MLoc:Lab.Bench"},
        {"Step": 1, "Statement": "MM-Move Nil Robot#1 To MLoc:Lab.Door"}]}"#;
    let (code, out, err) = explorer(
        &["send", "-", "--stdio", &peer("--clash-feasible")],
        request,
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("feasibility.overall"), "{err}");
    assert!(err.contains("/Feasibility/Overall"), "{err}");
    let response: Value = serde_json::from_str(&out).unwrap();
    // The Request was composed with the server's own M-Instance, so it was answered.
    assert_eq!(response["MInstance"], "MI:Elsewhere");
    assert_eq!(response["Outcome"], "answered");
    assert!(err.contains("from the server's dac://domain"), "{err}");
}

#[test]
fn a_third_party_server_in_another_m_instance_is_answered_with_its_defaults() {
    let (code, out, err) = explorer(
        &["send", "-", "--stdio", &peer("")],
        r#"{"Kind": "constraints"}"#,
    );
    assert_eq!(code, 0, "{err}");
    let response: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(response["Outcome"], "answered");
    assert_eq!(response["UEnvironment"], "UE:Lab");
    // The command line overrides what the server publishes.
    let (code, out, _) = explorer(
        &["send", "-", "--stdio", &peer(""), "--m-instance", "MI:Mine"],
        r#"{"Kind": "constraints"}"#,
    );
    assert_eq!(code, 0);
    let response: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(response["Outcome"], "not_answered");
    assert_eq!(response["MInstance"], "MI:Mine");
}

#[test]
fn a_tool_that_breaks_section_1_is_a_finding_on_the_server() {
    let (code, out, _) = explorer(
        &[
            "tools",
            "--stdio",
            &peer("--no-output-schema --no-header-const"),
        ],
        "",
    );
    assert_eq!(code, 0);
    assert!(out.contains("binding.output-schema"), "{out}");
    assert!(out.contains("binding.input-header"), "{out}");
    assert!(out.contains("serves MInstance MI:Elsewhere"), "{out}");
    let (code, _, err) = explorer(
        &["send", "-", "--stdio", &peer("--no-output-schema")],
        r#"{"Kind": "constraints"}"#,
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("server: /tools/bkn_dac/outputSchema"), "{err}");
}

#[test]
fn a_response_without_commitment_status_after_commitments_is_a_finding() {
    let requests = r#"{"Kind": "commitment", "Commitments": [{"CommitmentID": "c1", "Statement": "Robot#1 locatedAt MLoc:Lab.Bench"}]}
{"Kind": "constraints"}"#;
    let (code, out, _) = explorer(
        &["dialogue", "-", "--stdio", &peer("--drop-commitments")],
        requests,
    );
    assert_eq!(code, 1);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for line in &lines {
        let checks: Vec<&str> = line["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["check"].as_str().unwrap())
            .collect();
        assert_eq!(checks, ["dialogue.commitment-missing"], "{line}");
    }
}

#[test]
fn validate_reads_what_dialogue_save_writes_and_a_retry_is_no_finding() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s.json");
    // A rejected Request (a Kind that is no Kind) and its valid retry with the same
    // TurnIndex: what a user does after a tool error.
    let requests = r#"{"Kind": "groundng", "TurnIndex": 0}
{"Kind": "constraints", "EntityIDs": ["Avatar#7"], "TurnIndex": 0}
{"Kind": "commitment", "TurnIndex": 1, "Commitments": [{"CommitmentID": "c1", "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"}]}
{"Kind": "constraints", "TurnIndex": 2, "ReleasedCommitmentIDs": ["c1"]}"#;
    let (code, _, err) = explorer(
        &[
            "dialogue",
            "-",
            "--embedded",
            "dac",
            "--save",
            session.to_str().unwrap(),
        ],
        requests,
    );
    assert_eq!(code, 1, "the rejected Request: {err}");
    let (code, out, err) = explorer(&["validate", session.to_str().unwrap()], "");
    // Only the Request that is not conformant; nothing about the retry or the dialogue.
    let findings: Vec<&str> = out.lines().filter(|l| l.contains('[')).collect();
    assert_eq!(findings.len(), 1, "{out}{err}");
    assert!(
        findings[0].contains("dialogue 0 turn 0 request: /Kind"),
        "{out}"
    );
    assert_eq!(code, 1);
    // And its JSON report says where each finding is.
    let (_, out, _) = explorer(
        &["validate", "--format", "json", session.to_str().unwrap()],
        "",
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["files"][0]["kind"], "session");
    assert_eq!(report["files"][0]["findings"][0]["turn"], 0);
    assert_eq!(report["files"][0]["findings"][0]["on"], "request");
    // The shipped sessions: every turn as the server answered it.
    let shipped = format!(
        "{}/sessions/usr-refinement.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, out, _) = explorer(&["validate", &shipped], "");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn validate_reads_deep_messages_and_refuses_deeper_than_1000_levels_clearly() {
    let base: Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{}/tests/fixtures/conformance/bases/dac-request.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (levels, code, says) in [
        (200, 0, "all conform"),
        (990, 0, "all conform"),
        (1500, 2, "1000 levels"),
    ] {
        let mut m = base.clone();
        m["DataXMData"]["Deep"] = nested(levels);
        let path = dir.path().join(format!("deep{levels}.json"));
        // Written by hand: serde_json's own writer has no depth limit, but its reader does.
        std::fs::write(&path, serde_json::to_string(&m).unwrap()).unwrap();
        let (got, out, err) = explorer(&["validate", path.to_str().unwrap()], "");
        assert_eq!(got, code, "{levels}: {out}{err}");
        assert!(out.contains(says), "{levels}: {out}");
    }
}

/// A turn over stdio, as a raw client that waits for each answer sees it: a `tools/call` after
/// `logging/setLevel` gets its log message first, then its answer (written without rmcp on
/// the server's hot path, in the shape rmcp writes for this protocol version: no
/// `resultType`), and a non-conformant Request gets a tool error.
#[test]
fn turns_over_stdio_are_answered_in_order_with_their_log_messages() {
    use std::io::{BufRead, BufReader};
    let mut child = stdio_server();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // Writes a line; with an id, reads the lines up to the answer to it.
    let mut ask = |line: &str, id: Option<i64>| -> Vec<Value> {
        writeln!(stdin, "{line}").unwrap();
        let mut got = Vec::new();
        while let Some(id) = id {
            let mut text = String::new();
            assert!(stdout.read_line(&mut text).unwrap() > 0, "the server left");
            let message: Value = serde_json::from_str(&text).unwrap();
            let done = message["id"] == id;
            got.push(message);
            if done {
                break;
            }
        }
        got
    };
    ask(INITIALIZE, Some(0));
    ask(INITIALIZED, None);
    ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}"#,
        Some(1),
    );
    let request = |turn: u64| {
        json!({"Header": "PGM-KDA-V1.0", "Mode": "RQ", "MInstance": "MI:PublicSquare",
               "UEnvironment": "UE:Square", "SessionID": "AUS:1", "QueryID": format!("q-{turn}"),
               "QueryTime": "2026-11-30T00:00:00.000Z", "DialogID": "d-1", "TurnIndex": turn,
               "DataXMData": {"DataID": format!("x-{turn}"), "Source": [{"AIMID": "PGM-BKN"}]},
               "Kind": "constraints", "EntityIDs": ["Kiosk#3"], "Space": {"SpaceID": "Space:Square"}})
    };
    for turn in 0..3u64 {
        let call = json!({"jsonrpc": "2.0", "id": 10 + turn, "method": "tools/call",
                          "params": {"_meta": {"progressToken": turn}, "name": "bkn_dac",
                                     "arguments": request(turn)}});
        let got = ask(&call.to_string(), Some(10 + turn as i64));
        assert_eq!(got.len(), 2, "a log message, then the answer: {got:#?}");
        assert_eq!(got[0]["method"], "notifications/message");
        let result = &got[1]["result"];
        assert_eq!(result["isError"], false);
        assert!(result.get("resultType").is_none(), "{result}");
        assert_eq!(result["structuredContent"]["TurnIndex"], turn);
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, result["structuredContent"]);
    }
    let wrong = json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
                       "params": {"name": "bkn_dac", "arguments": {"Kind": "nope"}}});
    let got = ask(&wrong.to_string(), Some(20));
    let result = &got.last().unwrap()["result"];
    assert_eq!(result["isError"], true);
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("/Header")
    );
    drop(stdin);
    child.wait().unwrap();
}

/// MCP-BINDING section 3 over 2026-07-28 (no session): the server keeps each dialogue by its
/// DialogID, refuses a later turn of a dialogue it does not hold instead of answering it from
/// empty state, refuses a repeated TurnIndex, and holds a bounded number of dialogues (the
/// ones it holds going on past the bound).
#[tokio::test]
async fn over_2026_dialogues_are_kept_by_dialog_id_and_bounded() {
    for transport in BOTH {
        let server = Server::start_in(
            transport,
            Generation::Stateless,
            &["dac", "--max-dialogues", "2"],
        )
        .await;
        let client = server.session().await;
        let mut a = common::Dialogue::new(client, Interface::Dac);
        a.send(json!({"Kind": "commitment", "Commitments": [
            {"CommitmentID": "c1", "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"}]}))
            .await
            .response();
        // The same dialogue, on a request of its own: the commitment holds.
        let r = a
            .send(plan(&["MM-Move Nil Avatar#7 To MLoc:Square.Stage"]))
            .await
            .response();
        assert_eq!(statuses(&r), ["Clash"], "{transport:?}");
        // A repeated TurnIndex is refused, and changes nothing.
        a.next_turn = 1;
        let error = a
            .send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
            .await
            .tool_error();
        assert!(error.contains("/TurnIndex"), "{error}");
        a.next_turn = 2;

        // A later turn of a dialogue the server never held: refused, and said why.
        let mut stray = common::Dialogue::new(server.session().await, Interface::Dac);
        stray.next_turn = 5;
        let error = stray
            .send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
            .await
            .tool_error();
        assert!(
            error.contains("/DialogID") && error.contains("holds no dialogue"),
            "{error}"
        );

        // The bound (over HTTP, where every client reaches the one server; over stdio each
        // client here starts its own): a second dialogue fits, a third is refused, the first
        // goes on.
        if transport == Transport::Stdio {
            continue;
        }
        let mut b = common::Dialogue::new(server.session().await, Interface::Dac);
        b.send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
            .await
            .response();
        let mut c = common::Dialogue::new(server.session().await, Interface::Dac);
        let error = c
            .send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
            .await
            .tool_error();
        assert!(error.contains("maximum of 2 dialogues"), "{error}");
        let r = a
            .send(plan(&["MM-Move Nil Avatar#7 To MLoc:Square.Stage"]))
            .await
            .response();
        assert_eq!(statuses(&r), ["Clash"], "the held dialogue goes on");
    }
}

/// What I-JSON forbids in a Request (binding section 6) is a finding the server lists in its
/// tool error, never taken silently nor a parse error: a member given twice, a number beyond
/// a double. Over stdio and HTTP, in both generations (raw JSON-RPC: no client library writes
/// such text).
#[tokio::test]
async fn the_servers_judge_what_i_json_forbids_in_a_request() {
    let request = |turn: &str, extra: &str| {
        format!(
            r#"{{"Header":"PGM-KDA-V1.0","Mode":"RQ","MInstance":"MI:PublicSquare","UEnvironment":"UE:Square","SessionID":"AUS:1","QueryID":"q-{turn}","QueryTime":"2026-12-01T00:00:00Z","DialogID":"d1","TurnIndex":{turn},"DataXMData":{{"DataID":"x","Source":[{{"AIMID":"A"}}]}},"Kind":"constraints","EntityIDs":["Kiosk#3"]{extra}}}"#
        )
    };
    let cases = [
        (request("1e400", ""), "ijson.number-range"),
        (
            request("0", r#","Kind":"affordances""#),
            "ijson.duplicate-member",
        ),
    ];
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"#;
    let call = |id: usize, arguments: &str, stateless: bool| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{}"name":"bkn_dac","arguments":{arguments}}}}}"#,
            if stateless { meta } else { "" }
        )
    };
    let tool_error = |answer: &str, check: &str| {
        let v: Value = serde_json::from_str(
            answer
                .lines()
                .filter_map(|l| l.strip_prefix("data:").or(Some(l)))
                .map(str::trim)
                .find(|l| l.contains("\"result\"") || l.contains("\"error\""))
                .unwrap_or(answer),
        )
        .unwrap_or_else(|e| panic!("{e}: {answer}"));
        assert_eq!(v["result"]["isError"], true, "{answer}");
        assert!(
            v["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(check),
            "{answer}"
        );
    };
    // stdio, 2025-11-25.
    for (arguments, check) in &cases {
        use std::io::Write;
        let mut child = std::process::Command::new(common::bin())
            .args(["serve", "dac", "--log-level", "error"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        writeln!(stdin, "{}", call(1, arguments, false)).unwrap();
        drop(stdin);
        let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
        tool_error(out.lines().last().unwrap(), check);
    }
    // HTTP, both generations.
    let server = common::spawn_http(&["dac".into()]).await;
    let client = reqwest::Client::new();
    let post = |body: String, headers: Vec<(&'static str, String)>| {
        let mut r = client
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        for (k, v) in headers {
            r = r.header(k, v);
        }
        r.send()
    };
    let init = post(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.into(), vec![]).await.unwrap();
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    init.text().await.unwrap();
    for (i, (arguments, check)) in cases.iter().enumerate() {
        let legacy = post(
            call(10 + i, arguments, false),
            vec![
                ("mcp-session-id", session.clone()),
                ("mcp-protocol-version", "2025-11-25".into()),
            ],
        )
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
        tool_error(&legacy, check);
        let stateless = post(
            call(20 + i, arguments, true),
            vec![
                ("mcp-protocol-version", "2026-07-28".into()),
                ("mcp-method", "tools/call".into()),
                ("mcp-name", "bkn_dac".into()),
            ],
        )
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
        tool_error(&stateless, check);
    }
}

/// `resources` and `read URI` headless, against a server of someone else's and the reference
/// servers: the list as the server gives it, a resource printed as JSON (or written to a
/// file), a resource of a known shape checked against its schema (exit 1, the place said),
/// an unknown URI the server's own error (exit 2).
#[test]
fn resources_are_listed_and_read_headless_and_their_shape_checked() {
    let lab = peer("");
    let (code, out, err) = explorer(&["resources", "--stdio", &lab, "--format", "json"], "");
    assert_eq!(code, 0, "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["server"], "lab-dac");
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["dac://domain", "dac://spaces/Space:Lab"]);

    let (code, out, err) = explorer(&["read", "dac://domain", "--stdio", &lab], "");
    assert_eq!(code, 0, "{err}");
    let domain: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(domain["MInstance"], "MI:Elsewhere", "learnt, not assumed");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("space.json");
    let (code, out, err) = explorer(
        &[
            "read",
            "dac://spaces/Space:Lab",
            "--stdio",
            &lab,
            "-o",
            file.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.is_empty(), "written to the file, not printed: {out}");
    let space: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(space["SpaceID"], "Space:Lab");

    let (code, _, err) = explorer(
        &[
            "read",
            "dac://spaces/Space:Lab",
            "--stdio",
            &peer("--misshapen-space"),
        ],
        "",
    );
    assert_eq!(code, 1, "a space that breaks its shape: {err}");
    assert!(err.contains("/MLocations"), "the place is said: {err}");

    // No server named: the reference server the URI's scheme names.
    let (code, out, err) = explorer(&["read", "usr://users"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("User#Ana"), "{out}");
    let (code, out, err) = explorer(&["resources"], "");
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("dac://domain") && out.contains("usr://users"),
        "{out}"
    );
    let (code, _, err) = explorer(&["read", "dac://nowhere"], "");
    assert_eq!(code, 2);
    assert!(err.contains("no resource dac://nowhere"), "{err}");
}

/// `--dialogue-idle`: an MCP session (2025-11-25) with no traffic for that long ends with its
/// state (the server's /health counts none left), and a dialogue kept by DialogID
/// (2026-07-28) is forgotten: its next turn is a tool error that says it is unknown or has
/// expired, never an answer from empty state (MCP-BINDING section 3; issue 27, item 4).
#[tokio::test]
async fn idle_sessions_and_dialogues_expire() {
    let server = common::spawn_http(&["dac".into(), "--dialogue-idle".into(), "1".into()]).await;
    let health = server.url.replace("/mcp", "/health");
    // A session opened and left (no DELETE, no stream held open).
    let opened = reqwest::Client::new()
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE)
        .send()
        .await
        .unwrap();
    assert!(opened.headers().contains_key("mcp-session-id"));
    let _ = opened.bytes().await;
    let held: Value = reqwest::get(&health).await.unwrap().json().await.unwrap();
    assert_eq!(held["dialogues"]["2025-11-25"], 1, "{held}");
    let left = std::time::Instant::now();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let held: Value = reqwest::get(&health).await.unwrap().json().await.unwrap();
        if held["dialogues"]["2025-11-25"] == 0 {
            eprintln!("the idle session ended after {:?}", left.elapsed());
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still held: {held}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }

    let (client, _) = common::http_session_in(&server.url, Generation::Stateless).await;
    let mut d = common::Dialogue::new(client, Interface::Dac);
    d.send(json!({"Kind": "commitment", "Commitments": [
        {"CommitmentID": "c1", "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"}]}))
        .await
        .response();
    // Not a bound on anything: the server's clock (a process of its own) cannot be paused,
    // and its dialogue was last used before this answer came, so idling a little longer
    // than `--dialogue-idle` here is idling longer than it there, however slow the machine.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let error = d
        .send(plan(&["MM-Move Nil Avatar#7 To MLoc:Square.Stage"]))
        .await
        .tool_error();
    assert!(
        error.contains("unknown") || error.contains("expired"),
        "{error}"
    );
}

/// A flood of new DialogIDs over 2026-07-28 HTTP (Bad input and faults, issue 26): the server
/// holds its bound (--max-dialogues), refuses each new dialogue past it with a tool error that
/// says so, its memory stays flat however many more come, and a dialogue it held before the
/// flood goes on (its commitment still gives Clash).
#[tokio::test]
async fn a_flood_of_new_dialog_ids_holds_the_bound_and_memory_stays_flat() {
    const MAX: usize = 200;
    let server =
        common::spawn_http(&["dac".into(), "--max-dialogues".into(), MAX.to_string()]).await;
    let pid = server.child.id().unwrap();
    let client = reqwest::Client::new();
    let turn = |dialog: String, index: u64, kind: Value| {
        let client = client.clone();
        let url = server.url.clone();
        async move {
            let mut arguments = json!({"Header": "PGM-KDA-V1.0", "Mode": "RQ",
                "MInstance": "MI:PublicSquare", "UEnvironment": "UE:Square", "SessionID": "AUS:1",
                "QueryID": format!("{dialog}-{index}"), "QueryTime": "2026-12-01T00:00:00Z",
                "DialogID": dialog, "TurnIndex": index,
                "DataXMData": {"DataID": "x", "Source": [{"AIMID": "A"}]}});
            arguments
                .as_object_mut()
                .unwrap()
                .extend(kind.as_object().unwrap().clone());
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                          "io.modelcontextprotocol/clientCapabilities": {}},
                "name": "bkn_dac", "arguments": arguments}});
            let text = client
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "bkn_dac")
                .body(body.to_string())
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            let line = text
                .lines()
                .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
                .find(|l| l.starts_with('{'))
                .unwrap_or_else(|| panic!("no answer: {text}"))
                .to_owned();
            let v: Value = serde_json::from_str(&line).unwrap();
            v["result"].clone()
        }
    };
    let constraints = || json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]});
    // A dialogue held before the flood.
    let held = turn(
        "held".into(),
        0,
        json!({"Kind": "commitment", "Commitments": [
            {"CommitmentID": "c1", "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"}]}),
    )
    .await;
    assert_eq!(held["isError"], false, "{held}");
    // New dialogues, 8 at a time: the first MAX - 1 are opened, every later one refused.
    let flood = |from: usize, to: usize| {
        let turn = &turn;
        async move {
            let mut refused = 0;
            let ids: Vec<usize> = (from..to).collect();
            for chunk in ids.chunks(8) {
                let answers = futures::future::join_all(
                    chunk
                        .iter()
                        .map(|i| turn(format!("flood-{i}"), 0, constraints())),
                )
                .await;
                for a in answers {
                    if a["isError"] == true {
                        let text = a["content"][0]["text"].as_str().unwrap_or_default();
                        assert!(
                            text.contains(&format!("maximum of {MAX} dialogues")),
                            "{text}"
                        );
                        refused += 1;
                    }
                }
            }
            refused
        }
    };
    let refused = flood(0, 2 * MAX).await;
    assert_eq!(
        refused,
        MAX + 1,
        "the bound holds: MAX - 1 new dialogues beside the held one"
    );
    let filled = common::resident_kib(pid);
    let refused = flood(2 * MAX, 12 * MAX).await;
    assert_eq!(
        refused,
        10 * MAX,
        "every new dialogue past the bound is refused"
    );
    let after = common::resident_kib(pid);
    eprintln!("server resident: {filled} KiB at the bound, {after} KiB after 2,000 refused");
    // 2,000 refused dialogues more: what a refused one left behind would show here (a few
    // KiB each); allocator noise stays well under it.
    assert!(
        after < filled + 4 * 1024,
        "memory grows with refused dialogues: {filled} KiB at the bound, {after} KiB after 2,000 more"
    );
    let health: Value = reqwest::get(server.url.replace("/mcp", "/health"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["dialogues"]["2026-07-28"], MAX, "{health}");
    // The held dialogue goes on, with its state.
    let r = turn(
        "held".into(),
        1,
        plan(&["MM-Move Nil Avatar#7 To MLoc:Square.Stage"]),
    )
    .await;
    assert_eq!(
        r["structuredContent"]["Feasibility"]["Steps"][0]["PAStatus"], "Clash",
        "{r}"
    );
}

/// A 2026-07-28 request that is not whole (Bad input and faults, issue 26), over stdio and
/// HTTP: without its `_meta` envelope or part of it, -32602; with a protocol version the server
/// does not speak, -32022 listing the ones it does; over HTTP, headers that disagree with the
/// body (or are missing), -32020 with HTTP 400. Never a silent default.
#[tokio::test]
async fn a_2026_request_that_is_not_whole_gets_the_error_the_specification_gives() {
    let arguments = json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]});
    let envelope = |version: Option<&str>, capabilities: bool| {
        let mut meta = serde_json::Map::new();
        if let Some(v) = version {
            meta.insert("io.modelcontextprotocol/protocolVersion".into(), json!(v));
        }
        if capabilities {
            meta.insert(
                "io.modelcontextprotocol/clientCapabilities".into(),
                json!({}),
            );
        }
        Value::Object(meta)
    };
    let call = |id: u64, meta: Option<Value>| {
        let mut params = json!({"name": "bkn_dac", "arguments": arguments});
        if let Some(m) = meta {
            params["_meta"] = m;
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    // (request, its error code, words of its message)
    let cases = [
        (call(1, None), -32602, "protocolVersion"),
        (
            call(2, Some(envelope(Some("2026-07-28"), false))),
            -32602,
            "clientCapabilities",
        ),
        (
            call(3, Some(envelope(Some("2099-01-01"), true))),
            -32022,
            "Unsupported protocol version",
        ),
    ];
    // stdio: one process, one request after another (none opens a session).
    let mut child = Command::new(common::bin())
        .args(["serve", "dac", "--log-level", "error"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for (request, _, _) in &cases {
        writeln!(stdin, "{request}").unwrap();
    }
    drop(stdin);
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let answers: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let judge = |how: &str, answer: &Value, code: i64, words: &str| {
        assert_eq!(answer["error"]["code"], code, "{how}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains(words),
            "{how}: {answer}"
        );
    };
    for ((request, code, words), answer) in cases.iter().zip(&answers) {
        assert_eq!(answer["id"], request["id"], "stdio: {answer}");
        judge("stdio", answer, *code, words);
    }
    assert_eq!(
        answers[2]["error"]["data"]["supported"]
            .as_array()
            .map(|a| a.contains(&json!("2026-07-28"))),
        Some(true),
        "{}",
        answers[2]
    );
    // HTTP, with the headers each request goes with, and with headers that disagree.
    let server = common::spawn_http(&["dac".into()]).await;
    let client = reqwest::Client::new();
    let post = |body: &Value, headers: &[(&str, &str)]| {
        let mut r = client
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        async move {
            let response = r.send().await.unwrap();
            let status = response.status().as_u16();
            let v: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
            (status, v)
        }
    };
    let standard = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "bkn_dac"),
    ];
    for (request, code, words) in &cases[..2] {
        let (status, answer) = post(request, &standard).await;
        assert_eq!(status, 400, "{answer}");
        judge("HTTP", &answer, *code, words);
    }
    let (status, answer) = post(
        &cases[2].0,
        &[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "bkn_dac"),
        ],
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    judge("HTTP", &answer, -32022, "Unsupported protocol version");
    let whole = call(4, Some(envelope(Some("2026-07-28"), true)));
    for (headers, words) in [
        (
            [
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
                ("mcp-name", "bkn_dac"),
            ],
            "Mcp-Method",
        ),
        (
            [
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "another_tool"),
            ],
            "Mcp-Name",
        ),
        (
            [
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "bkn_dac"),
            ],
            "MCP-Protocol-Version",
        ),
    ] {
        let (status, answer) = post(&whole, &headers).await;
        assert_eq!(status, 400, "{headers:?}: {answer}");
        judge("HTTP headers", &answer, -32020, words);
    }
    let (status, answer) = post(&whole, &standard[..2]).await;
    assert_eq!(status, 400, "{answer}");
    judge("HTTP without Mcp-Name", &answer, -32020, "Mcp-Name");
    // The same request whole is answered.
    let (status, answer) = post(&whole, &standard).await;
    assert_eq!(status, 200, "{answer}");
}

/// `--dialogue-idle`: over 2026-07-28 a dialogue kept by DialogID with no turn for that long is
/// forgotten, and its next turn is a tool error that says it expired, never an answer from
/// empty state; over stdio and HTTP.
#[tokio::test]
async fn an_idle_dialogue_expires_and_its_next_turn_says_so() {
    for transport in BOTH {
        let server = Server::start_in(
            transport,
            Generation::Stateless,
            &["dac", "--dialogue-idle", "300ms"],
        )
        .await;
        let mut d = common::Dialogue::new(server.session().await, Interface::Dac);
        d.send(json!({"Kind": "commitment", "Commitments": [
            {"CommitmentID": "c1", "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"}]}))
            .await
            .response();
        // The server's clock is its own process's: the dialogue was last used before this
        // answer came, so idling a little longer than the bound here is longer there too,
        // however slow the machine (the exact bound is tested with a paused clock in
        // `server::dialogues`).
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        let error = d
            .send(plan(&["MM-Move Nil Avatar#7 To MLoc:Square.Stage"]))
            .await
            .tool_error();
        assert!(
            error.contains("holds no dialogue") && error.contains("expired after 300 ms"),
            "{transport:?}: {error}"
        );
    }
}

/// Every duration on the command line is written one way (`--timeout`, `certify
/// --rule-timeout`, `serve --dialogue-idle`, the explorer's `--timeout`): one it cannot read,
/// or none at all, is refused before anything starts, with the option, what was wrong and how
/// to write it; `--help` says the form.
#[test]
fn every_duration_on_the_command_line_is_written_one_way() {
    let commands: [&[&str]; 5] = [
        &["serve", "dac", "--dialogue-idle"],
        &["send", "-", "--embedded", "dac", "--timeout"],
        &["test", "x.yaml", "--timeout"],
        &["certify", "--embedded", "dac", "--rule-timeout"],
        &["--timeout"],
    ];
    for command in commands {
        let option = command.last().unwrap();
        let (code, _, err) = explorer(&[command, &["soon"]].concat(), "");
        assert_eq!(code, 2, "{command:?}: {err}");
        assert!(
            err.contains(option)
                && err.contains("'soon' is not a duration")
                && err.contains("e.g. 30s, 2m, 500ms; plain numbers are seconds"),
            "{command:?}: {err}"
        );
        // Zero was raised to a second without a word (--rule-timeout) or waited for nothing.
        let (code, _, err) = explorer(&[command, &["0s"]].concat(), "");
        assert_eq!(code, 2, "{command:?}: {err}");
        assert!(err.contains("more than 0"), "{command:?}: {err}");
    }
    for help in [&["send", "--help"][..], &["certify", "--help"], &["--help"]] {
        let (_, out, _) = explorer(help, "");
        assert!(
            out.contains("DURATION") && out.contains("plain numbers are seconds"),
            "{help:?}: {out}"
        );
    }
}

/// config.toml's `timeout` is written as `--timeout` is; one that is no duration is said,
/// with the file and the line, by a command that talks to a server (which goes on with the
/// defaults), where it was dropped without a word.
#[test]
fn a_timeout_in_config_toml_that_is_no_duration_is_said_with_its_place() {
    let config = tempfile::tempdir().unwrap();
    let send = |settings: &str| {
        std::fs::write(config.path().join("config.toml"), settings).unwrap();
        let mut child = Command::new(common::bin())
            .args(["send", "-", "--embedded", "dac"])
            .env("BKN_EXPLORER_CONFIG_DIR", config.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let request = r#"{"Kind": "semantic_grounding", "Terms": [{"Text": "bench"}]}"#;
        (child.stdin.take().unwrap())
            .write_all(request.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = send("timeout = \"90s\"\n");
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("config.toml"), "{err}");
    let (code, err) = send("# mine\ntimeout = \"soon\"\n");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("config.toml:2: timeout = \"soon\": ")
            && err.contains("'soon' is not a duration")
            && err.contains("left out (the default stands)"),
        "{err}"
    );
    // Each bad setting is one line of its own (no parser snippet), the others are kept.
    let (code, err) = send("theme = \"mine\"\ntimeout = \"0\"\nprotocol = 7\n");
    assert_eq!(code, Some(0), "{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("config.toml")).collect();
    assert!(
        notes.len() == 2
            && notes[0].contains("config.toml:2: timeout")
            && notes[1].contains("config.toml:3: protocol")
            && !err.contains("TOML parse error"),
        "{err}"
    );
}

/// A timeout under a second is a timeout (it was whole seconds only): a server that never
/// answers is given up on after it, and the error says how long was waited.
#[test]
fn a_timeout_under_a_second_is_waited_and_said() {
    let hang = format!("{} --fault hang", env!("CARGO_BIN_EXE_bkn-fault-server"));
    let (code, _, err) = explorer(
        &["send", "-", "--stdio", &hang, "--timeout", "500ms"],
        r#"{"Kind": "semantic_grounding", "Terms": [{"Text": "bench"}]}"#,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no answer within 500 ms"), "{err}");
}

/// What `dialogue` prints (a JSON line per exchange) is no file of Requests: `validate`
/// judges the exchanges it holds, as one dialogue, and finds a Response that breaks a rule.
#[test]
fn validate_judges_the_exchanges_of_dialogue_output() {
    let dir = tempfile::tempdir().unwrap();
    let requests = r#"{"Kind": "commitment", "Commitments": [{"CommitmentID": "c1", "Statement": "Robot#1 locatedAt MLoc:Lab.Bench"}]}
{"Kind": "constraints"}"#;
    let (code, out, err) = explorer(&["dialogue", "-", "--embedded", "dac"], requests);
    assert_eq!(code, 0, "{err}");
    let clean = dir.path().join("clean.jsonl");
    std::fs::write(&clean, &out).unwrap();
    let (code, out, err) = explorer(&["validate", clean.to_str().unwrap()], "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("checked 4 messages in 1 file: all conform"),
        "{out}"
    );

    // The peer drops the commitment status: the dialogue rule catches it, again.
    let (code, out, _) = explorer(
        &["dialogue", "-", "--stdio", &peer("--drop-commitments")],
        requests,
    );
    assert_eq!(code, 1);
    let broken = dir.path().join("broken.jsonl");
    std::fs::write(&broken, &out).unwrap();
    let (code, out, err) = explorer(&["validate", broken.to_str().unwrap()], "");
    assert_eq!(code, 1, "{out}{err}");
    assert!(!out.contains("is not a property"), "{out}");
    let findings: Vec<&str> = out.lines().filter(|l| l.contains('[')).collect();
    assert!(!findings.is_empty(), "{out}");
    for f in &findings {
        assert!(f.contains("dialogue.commitment-missing"), "{out}");
    }
    assert!(findings[0].contains(":1: exchange 0 response: "), "{out}");
    let (_, out, _) = explorer(
        &["validate", "--format", "json", broken.to_str().unwrap()],
        "",
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["files"][0]["kind"], "exchanges");
    assert_eq!(report["files"][0]["findings"][0]["exchange"], 0);
    assert_eq!(report["files"][0]["findings"][0]["on"], "response");
}

/// `send` names a server by the name it gives itself once connected, not by its program.
#[test]
fn send_names_a_stdio_server_by_its_server_info() {
    let (code, _, err) = explorer(
        &["send", "-", "--interface", "usr", "--stdio", &peer("")],
        r#"{"Kind": "refine"}"#,
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("lab-dac (python3) has no BKN-USR tool"),
        "{err}"
    );
}
