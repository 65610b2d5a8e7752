//! The official MCP conformance suite (server-initialize, ping, tools-list,
//! dns-rebinding-protection) against each reference server over HTTP, and its client scenarios
//! (initialize, tools_call, sse-retry) against the explorer as the client. Needs npm (the suite and
//! Node 22 are installed from the npm registry the first time; `.ci/run` makes sure npm exists).

use crate::common;

use serde_json::Value;
use std::path::Path;

async fn passes(server_args: &[&str]) {
    let args: Vec<String> = server_args.iter().map(|s| s.to_string()).collect();
    let server = common::spawn_http(&args).await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/mcp-conformance");
    assert!(
        std::process::Command::new("npm")
            .arg("--version")
            .output()
            .is_ok(),
        "the conformance suite needs npm; install Node.js and npm (`.ci/run` does)"
    );
    let url = server.url.clone();
    let out =
        tokio::task::spawn_blocking(move || std::process::Command::new(script).arg(url).output())
            .await
            .unwrap()
            .expect("the conformance runner starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "conformance suite failed against {server_args:?}:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("4 scenarios, 0 failed"), "{stdout}");
}

#[tokio::test]
async fn domain_access_passes_the_mcp_conformance_suite() {
    passes(&["dac"]).await;
}

#[tokio::test]
async fn user_state_refinement_passes_the_mcp_conformance_suite() {
    passes(&["usr"]).await;
}

/// The suite's client scenarios that are not about authorization (`tests/oauth.rs` runs
/// those), with the explorer as the client: the handshake, a tool call (its answer comes on an
/// event stream, the hot path), and an event stream that closes before the answer, after which
/// a client must resume with GET and Last-Event-ID.
#[test]
fn the_explorer_passes_the_suites_client_scenarios() {
    let suite = common::conformance_suite();
    let bin = common::bin();
    let call = format!(r#"{bin} call add_numbers '{{"a":1,"b":2}}' --url"#);
    for (scenario, command) in [
        ("initialize", format!("{bin} tools --url")),
        ("tools_call", call.clone()),
        ("sse-retry", call),
    ] {
        let (passed, log) = common::client_scenario(&suite, scenario, &command, &[]);
        assert!(passed, "{scenario}:\n{log}");
    }
}

/// The suite's 0.2.0-alpha line (`.ci/mcp-conformance-next`), which adds the 2026-07-28
/// revision, run at each revision at its own wire version.
fn next_suite(args: &[&str]) -> (bool, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/mcp-conformance-next");
    let out = std::process::Command::new(script)
        .args(args)
        .output()
        .expect("the conformance runner starts");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success() && text.contains(" 0 failed"), text)
}

/// Both reference servers at both revisions: the scenarios that apply to a BKN server (the
/// ones that need the suite's own "everything" fixtures are listed in docs/reliability.md),
/// prompts-list (they offer none, and say so) and, at 2025-11-25, logging/setLevel.
#[tokio::test]
async fn both_reference_servers_pass_the_suite_at_both_mcp_revisions() {
    // The two servers' runs at once: each is a row of Node processes that mostly wait on
    // their scenario's timers and the server, one at a time.
    let servers = ["dac", "usr"].map(|interface| {
        tokio::spawn(async move {
            let server = common::spawn_http(&[interface.to_owned()]).await;
            let url = server.url.clone();
            for (revision, extra) in [
                ("2025-11-25", &["prompts-list", "logging-set-level"][..]),
                ("2026-07-28", &["prompts-list"][..]),
            ] {
                for scenarios in [&[][..], extra] {
                    let mut args = vec!["server", url.as_str(), "--requirements", revision];
                    args.extend_from_slice(scenarios);
                    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
                    let (passed, log) = tokio::task::spawn_blocking(move || {
                        let args: Vec<&str> = args.iter().map(String::as_str).collect();
                        next_suite(&args)
                    })
                    .await
                    .unwrap();
                    assert!(passed, "serve {interface} at {revision}:\n{log}");
                }
            }
        })
    });
    for server in servers {
        server.await.unwrap();
    }
}

/// The explorer as the client, at both revisions: the handshake or server/discover, a tool
/// call, an event stream to resume (2025-11-25); the request metadata, the standard headers,
/// the custom ones (x-mcp-header) and schemas kept as sent (2026-07-28).
#[test]
fn the_explorer_passes_the_client_scenarios_at_both_mcp_revisions() {
    let bin = common::bin();
    let call = format!(r#"{bin} call add_numbers '{{"a":1,"b":2}}' --url"#);
    let tools = format!("{bin} tools --url");
    let headers =
        format!(r#"sh -c '{bin} tools --url "$0" && {bin} call test_headers {{}} --url "$0"'"#);
    // What a server asks of the client, answered from a file: an elicitation accepted with
    // the schema's defaults (2025-11-25), and 2026-07-28's input_required rounds, each sent
    // again with its answers and the exact requestState, nothing leaking into other calls.
    let dir = tempfile::tempdir().unwrap();
    let accept = dir.path().join("accept.json");
    std::fs::write(&accept, r#"{"elicitation/create": {"action": "accept"}}"#).unwrap();
    let decline = dir.path().join("decline.json");
    std::fs::write(&decline, r#"{"elicitation/create": {"action": "decline"}}"#).unwrap();
    let elicitation = format!(
        "{bin} call test_client_elicitation_defaults {{}} --answers {} --url",
        accept.display()
    );
    let rounds = format!(
        r#"sh -c 'for t in test_mrtr_echo_state test_mrtr_unrelated test_mrtr_no_state test_mrtr_no_result_type; do {bin} call $t {{}} --answers {} --url "$0" || exit 1; done'"#,
        decline.display()
    );
    // x-mcp-header (SEP-2243): the suite's two calls, made from its context, each with its
    // annotated arguments mirrored into Mcp-Param-* headers; and a list with one valid tool
    // and eleven whose annotations are invalid: the valid one is called, the others are hidden
    // (`tools` says why) and a call of one is refused without being sent.
    let tool_calls = format!(
        "{} {} {bin} --url",
        common::python3().expect("python3"),
        common::peer("conformance_tool_calls.py")
    );
    let invalid = [
        "invalid_empty_header",
        "invalid_object_header",
        "invalid_array_header",
        "invalid_null_header",
        "invalid_number_header",
        "invalid_duplicate_same_case",
        "invalid_duplicate_diff_case",
        "invalid_space_in_name",
        "invalid_colon_in_name",
        "invalid_non_ascii_name",
        "invalid_control_char_name",
    ]
    .join(" ");
    let hidden = format!(
        r#"sh -c '{bin} tools --url "$0" | grep -q "hidden tools (11)" && {bin} call valid_tool "{{\"region\":\"us-west1\"}}" --url "$0" || exit 1; for t in {invalid}; do {bin} call $t {{}} --url "$0" 2>&1 | grep -q "not sent: tool $t is hidden" || exit 1; done'"#
    );
    // Four scenarios at a time: each is the suite's Node process with a server of its own and
    // the explorer's commands, mostly waiting on one another.
    let scenarios = vec![
        ("2026-07-28", "http-custom-headers", &tool_calls),
        ("2026-07-28", "http-invalid-tool-headers", &hidden),
        ("2025-11-25", "initialize", &tools),
        ("2025-11-25", "tools_call", &call),
        ("2025-11-25", "sse-retry", &call),
        ("2026-07-28", "tools_call", &call),
        ("2026-07-28", "request-metadata", &tools),
        ("2026-07-28", "json-schema-ref-no-deref", &tools),
        ("2026-07-28", "http-standard-headers", &headers),
        (
            "2025-11-25",
            "elicitation-sep1034-client-defaults",
            &elicitation,
        ),
        ("2026-07-28", "sep-2322-client-request-state", &rounds),
    ];
    common::at_once(4, scenarios, |(revision, scenario, command)| {
        let (passed, log) = next_suite(&["client", command, "--requirements", revision, scenario]);
        assert!(passed, "{scenario} at {revision}:\n{log}");
    });
}

/// Each SDK's client, over stdio and HTTP, in each generation it can ask for, against the
/// reference Domain Access: the commitment of turn 0 makes turn 1 Clash (the dialogue's
/// state was kept, whether in the MCP session or by DialogID), turn 2 repeats TurnIndex 1
/// and is refused.
#[tokio::test]
async fn sdk_clients_keep_their_dialogue_with_the_reference_server_in_both_generations() {
    let (python, node) = common::sdk_peers();
    let http = common::spawn_http(&["dac".to_owned()]).await;
    let url = http.url.clone();
    tokio::task::spawn_blocking(move || {
        let bin = common::bin();
        let mut cases = Vec::new();
        for (program, script) in [(&python, "py_dac_client.py"), (&node, "ts/dac_client.mjs")] {
            for protocol in ["auto", "2026-07-28", "2025-11-25"] {
                for over_http in [false, true] {
                    cases.push((program, script, protocol, over_http));
                }
            }
        }
        // Four at a time: each case is an SDK's interpreter starting, and a server.
        common::at_once(4, cases, |(program, script, protocol, over_http)| {
            let mut command = std::process::Command::new(program);
            command
                .arg(common::peer(script))
                .args(["--protocol", protocol]);
            if over_http {
                command.args(["--url", &url]);
            } else {
                command.args(["--", bin, "serve", "dac", "--log-level", "warn"]);
            }
            let out = command.output().expect("the peer client runs");
            let case = format!("{script} --protocol {protocol} http={over_http}");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{case}: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let report: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
            let expected = if protocol == "2025-11-25" {
                "2025-11-25"
            } else {
                "2026-07-28"
            };
            assert_eq!(report["protocol"], expected, "{case}");
            let turns = &report["turns"];
            assert_eq!(turns[0]["isError"], false, "{case}: {report}");
            assert_eq!(
                turns[1]["structuredContent"]["Feasibility"]["Steps"][0]["PAStatus"], "Clash",
                "{case}: the commitment of turn 0 holds at turn 1: {report}"
            );
            assert_eq!(turns[2]["isError"], true, "{case}: {report}");
            assert!(
                turns[2]["text"]
                    .as_str()
                    .unwrap_or("")
                    .contains("/TurnIndex"),
                "{case}: {report}"
            );
        });
    })
    .await
    .unwrap();
}

/// The explorer's `dialogue` against each SDK's server, dual (both generations) and strict
/// 2026-07-28, over stdio and HTTP: auto gets 2026-07-28 and says so, the commitment holds
/// (Clash), a repeated TurnIndex is refused; pinning 2025-11-25 against a strict server
/// names the mismatch and its fix.
#[test]
fn the_explorer_keeps_its_dialogue_with_sdk_servers_of_either_generation() {
    let (python, node) = common::sdk_peers();
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("dialogue.jsonl");
    std::fs::write(
        &requests,
        concat!(
            r#"{"Kind": "commitment", "Commitments": [{"CommitmentID": "c1", "Statement": "Avatar#7 not locatedAt MLoc:Square.Stage"}]}"#,
            "\n",
            r#"{"Kind": "feasibility", "ProcessActions": [{"Step": 0, "Statement": "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage"}]}"#,
            "\n",
            r#"{"Kind": "constraints", "EntityIDs": ["Avatar#7"], "TurnIndex": 1}"#,
            "\n"
        ),
    )
    .unwrap();
    let requests = requests.to_str().unwrap();
    let run = |server: &[&str], protocol: &str| {
        let out = std::process::Command::new(common::bin())
            .arg("dialogue")
            .arg(requests)
            .args(server)
            .args(["--protocol", protocol])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (program, script) in [(&python, "py_dac_server.py"), (&node, "ts/dac_server.mjs")] {
        for strict in [false, true] {
            let stdio = format!(
                "{program} {}{}",
                common::peer(script),
                if strict { " --strict-2026" } else { "" }
            );
            let http = common::PeerServer::start(
                program,
                script,
                if strict { &["--strict-2026"][..] } else { &[] },
            );
            for server in [["--stdio", stdio.as_str()], ["--url", http.url.as_str()]] {
                let case = format!("{script} strict={strict} {}", server[0]);
                let (code, out, err) = run(&server, "auto");
                let lines: Vec<Value> = out
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                assert_eq!(lines.len(), 3, "{case}: {out}\n{err}");
                assert!(err.contains("MCP 2026-07-28 (stateless"), "{case}: {err}");
                assert_eq!(lines[0]["outcome"], "answered", "{case}");
                assert_eq!(
                    lines[1]["response"]["Feasibility"]["Steps"][0]["PAStatus"], "Clash",
                    "{case}: {out}"
                );
                assert!(
                    lines[2]["findings"]
                        .to_string()
                        .contains("dialogue.turn-order"),
                    "{case}: {out}"
                );
                assert_eq!(code, Some(1), "{case}: a refused turn is a finding");
                if strict {
                    let (code, _, err) = run(&server, "2025-11-25");
                    assert_eq!(code, Some(2), "{case}");
                    assert!(
                        err.contains("speaks only MCP 2026-07-28")
                            && err.contains("--protocol auto"),
                        "{case}: {err}"
                    );
                }
            }
        }
    }
}

/// An SDK server that asks the user before it retains commitments (an elicitation: its own
/// request over 2025-11-25, an `input_required` result over 2026-07-28), against `dialogue`
/// with `--answers`, over stdio and HTTP: accepted, the commitment holds (Clash at turn 1), and
/// the saved session keeps what was asked and answered with the turn (and validates);
/// declined, the server refuses to retain and turn 1 is Ack.
#[test]
fn what_an_sdk_server_asks_is_answered_and_saved_with_the_turn() {
    let (python, _) = common::sdk_peers();
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("dialogue.jsonl");
    std::fs::write(
        &requests,
        concat!(
            r#"{"Kind": "commitment", "Commitments": [{"CommitmentID": "c1", "Statement": "Avatar#7 not locatedAt MLoc:Square.Stage"}]}"#,
            "\n",
            r#"{"Kind": "feasibility", "ProcessActions": [{"Step": 0, "Statement": "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage"}]}"#,
            "\n",
        ),
    )
    .unwrap();
    let accept = dir.path().join("accept.json");
    std::fs::write(
        &accept,
        r#"{"retain": {"action": "accept", "content": {"retain": true}},
            "elicitation/create": {"action": "accept", "content": {"retain": true, "note": "ok"}}}"#,
    )
    .unwrap();
    let decline = dir.path().join("decline.json");
    std::fs::write(&decline, r#"{"elicitation/create": {"action": "decline"}}"#).unwrap();
    let stdio = format!(
        "{python} {} --ask-to-retain",
        common::peer("py_dac_server.py")
    );
    let http = common::PeerServer::start(&python, "py_dac_server.py", &["--ask-to-retain"]);
    for protocol in ["2026-07-28", "2025-11-25"] {
        for server in [["--stdio", stdio.as_str()], ["--url", http.url.as_str()]] {
            let case = format!("{protocol} {}", server[0]);
            let saved = dir.path().join(format!(
                "asked-{protocol}-{}.json",
                server[0].trim_start_matches('-')
            ));
            let out = std::process::Command::new(common::bin())
                .arg("dialogue")
                .arg(&requests)
                .args(server)
                .args(["--protocol", protocol, "--answers"])
                .arg(&accept)
                .arg("--save")
                .arg(&saved)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let lines: Vec<Value> = stdout
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(lines.len(), 2, "{case}: {stdout}\n{stderr}");
            assert_eq!(
                lines[1]["response"]["Feasibility"]["Steps"][0]["PAStatus"], "Clash",
                "{case}: the commitment the user let retain holds: {stdout}\n{stderr}"
            );
            let session: Value =
                serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
            let turns = &session["dialogues"][0]["turns"];
            let asked = &turns[0]["asked"][0];
            assert_eq!(asked["method"], "elicitation/create", "{case}: {session}");
            assert_eq!(asked["by"], "file", "{case}");
            assert_eq!(asked["answer"]["action"], "accept", "{case}");
            assert!(
                asked["message"]
                    .as_str()
                    .unwrap()
                    .contains("Retain 1 commitment"),
                "{case}: {asked}"
            );
            assert!(
                turns[1].get("asked").is_none(),
                "{case}: nothing asked at turn 1"
            );
            if protocol == "2026-07-28" {
                assert_eq!(asked["name"], "retain", "{case}: the input request's key");
            }
            let validated = std::process::Command::new(common::bin())
                .arg("validate")
                .arg(&saved)
                .output()
                .unwrap();
            assert!(
                validated.status.success(),
                "{case}: {}",
                String::from_utf8_lossy(&validated.stdout)
            );
            // A replay gives the server what the recording gave it: no --answers needed, no
            // difference.
            let replayed = std::process::Command::new(common::bin())
                .arg("replay")
                .arg(&saved)
                .args(["--trust-servers", "--protocol", protocol])
                .output()
                .unwrap();
            assert_eq!(
                replayed.status.code(),
                Some(0),
                "{case}: {}{}",
                String::from_utf8_lossy(&replayed.stdout),
                String::from_utf8_lossy(&replayed.stderr)
            );
            // Declined: nothing retained, so the move is Ack.
            let out = std::process::Command::new(common::bin())
                .arg("dialogue")
                .arg(&requests)
                .args(server)
                .args(["--protocol", protocol, "--answers"])
                .arg(&decline)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let lines: Vec<Value> = stdout
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert!(
                lines[0]["toolError"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("did not let"),
                "{case}: {stdout}"
            );
        }
    }
}
