//! MCP Inspector's CLI (`@modelcontextprotocol/inspector` 2.12, installed from the npm registry
//! into a cache by tests/peers/inspector/install.sh) as a generic client of `serve dac --http`:
//! it cannot know a session id nor a DialogID in advance, so its `tools/call` carries a
//! DialogID of its own choosing, which the server binds with the first accepted Request
//! (MCP-BINDING section 3). Over 2025-11-25 (its default for an ad-hoc URL) and over
//! 2026-07-28, the Response conforms and answers that Request. Where npm cannot install the
//! Inspector the test says so and why, and passes without running (never silently).

use crate::common;

use bkn_explorer::protocol::conformance::{check_exchange, check_message_as};
use bkn_explorer::protocol::{Interface, Mode};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// Node and the Inspector's launcher, or why there are none.
fn inspector() -> Result<(String, String), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/inspector/install.sh");
    let out = Command::new(&script)
        .output()
        .map_err(|e| format!("{} did not run: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "MCP Inspector could not be installed from the npm registry: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().collect::<Vec<_>>()[..] {
        [.., node, launcher] => Ok((node.to_owned(), launcher.to_owned())),
        _ => Err(format!("install.sh printed no paths: {stdout}")),
    }
}

/// The Inspector's CLI against `url`: one `tools/call` of `bkn_dac` with `request`'s members as
/// `--tool-arg key=value` (objects and arrays as JSON, as its README shows), in the protocol
/// era `era` (legacy: initialize at 2025-11-25; modern: 2026-07-28). Its JSON output.
fn call(inspector: &(String, String), home: &Path, url: &str, era: &str, request: &Value) -> Value {
    let (node, launcher) = inspector;
    let pairs: Vec<String> = request
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect();
    let out = Command::new(node)
        .arg(launcher)
        .args(["--cli", url, "--protocol-era", era, "--format", "json"])
        .args([
            "--method",
            "tools/call",
            "--tool-name",
            "bkn_dac",
            "--tool-arg",
        ])
        .args(&pairs)
        // Its catalog, settings and OAuth store in a folder of the test's, not the user's.
        .env("HOME", home)
        .env("MCP_CATALOG_PATH", home.join("mcp.json"))
        .env("MCP_CLIENT_CONFIG_PATH", home.join("client.json"))
        .output()
        .expect("the Inspector runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    serde_json::from_str(first).unwrap_or_else(|e| {
        panic!(
            "the Inspector's output is not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn request(dialog_id: &str, turn: u64, kind: &str, more: Value) -> Value {
    let mut r = json!({
        "Header": "PGM-KDA-V1.0", "Mode": "RQ", "MInstance": "MI:PublicSquare",
        "UEnvironment": "UE:Square", "SessionID": "S-inspector",
        "QueryID": format!("{dialog_id}-q{turn}"), "QueryTime": "2026-12-04T10:00:00.000Z",
        "DialogID": dialog_id, "TurnIndex": turn,
        "DataXMData": {"DataID": format!("{dialog_id}-d{turn}"), "Source": [{"AIMID": "INSPECTOR"}]},
        "Kind": kind,
    });
    r.as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    r
}

/// The Response of a successful call, checked against its Request: it validates and answers it.
fn answered(case: &str, request: &Value, output: &Value) -> Value {
    let result = &output["result"];
    assert_eq!(result["isError"], false, "{case}: {output}");
    let response = result["structuredContent"].clone();
    let mut findings =
        check_message_as(&response, Some(Interface::Dac), Some(Mode::Response)).findings;
    findings.extend(check_exchange(request, &response));
    assert!(findings.is_empty(), "{case}: {findings:?}\n{response}");
    assert_eq!(response["DialogID"], request["DialogID"], "{case}");
    assert_eq!(response["RequestID"], request["QueryID"], "{case}");
    response
}

/// The server's dialogues by generation, from /health.
async fn dialogues(url: &str) -> (u64, u64) {
    let health = url.replace("/mcp", "/health");
    let v: Value = reqwest::get(&health).await.unwrap().json().await.unwrap();
    (
        v["dialogues"]["2025-11-25"].as_u64().unwrap(),
        v["dialogues"]["2026-07-28"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn mcp_inspectors_cli_calls_the_reference_server_in_both_generations() {
    let inspector = match tokio::task::spawn_blocking(inspector).await.unwrap() {
        Ok(i) => i,
        Err(why) => {
            eprintln!("SKIPPED mcp_inspectors_cli_calls_the_reference_server: {why}");
            println!("SKIPPED mcp_inspectors_cli_calls_the_reference_server: {why}");
            return;
        }
    };
    let home = tempfile::tempdir().unwrap();
    let server = common::spawn_http(&["dac".to_owned()]).await;
    let url = server.url.clone();
    let commitment = json!({"Commitments": [{"CommitmentID": "c1",
        "Statement": "Avatar#7 not locatedAt MLoc:Square.Stage"}]});
    let breaks_it = json!({"ProcessActions": [{"Step": 0,
        "Statement": "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage"}]});
    let run = |era: &'static str, request: Value| {
        let inspector = inspector.clone();
        let home = home.path().to_owned();
        let url = url.clone();
        async move {
            tokio::task::spawn_blocking(move || call(&inspector, &home, &url, era, &request))
                .await
                .unwrap()
        }
    };

    // 2025-11-25: each run of the CLI is an MCP session of its own, and a dialogue: the
    // DialogID it chose is bound by its first Request (no Mcp-Session-Id known in advance).
    let before = dialogues(&url).await;
    let first = request("inspector-legacy-1", 0, "commitment", commitment.clone());
    let out = run("legacy", first.clone()).await;
    let response = answered("2025-11-25 commitment", &first, &out);
    assert_eq!(response["CommitmentStatus"][0]["Status"], "retained");
    let after = dialogues(&url).await;
    assert_eq!(
        (after.0, after.1),
        (before.0 + 1, before.1),
        "the Inspector spoke 2025-11-25 (a session): {before:?} -> {after:?}"
    );
    // Another session, another DialogID: bound too, with a state of its own (the commitment
    // of the other session is not seen: the plan is Ack).
    let other = request("inspector-legacy-2", 0, "feasibility", breaks_it.clone());
    let out = run("legacy", other.clone()).await;
    let response = answered("2025-11-25 other session", &other, &out);
    assert_eq!(response["Feasibility"]["Steps"][0]["PAStatus"], "Ack");

    // 2026-07-28: no session; the dialogue is kept by the DialogID across runs of the CLI.
    let id = format!("inspector-modern-{}", std::process::id());
    let turn0 = request(&id, 0, "commitment", commitment);
    let out = run("modern", turn0.clone()).await;
    answered("2026-07-28 turn 0", &turn0, &out);
    let now = dialogues(&url).await;
    assert_eq!(
        now.1,
        after.1 + 1,
        "the Inspector spoke 2026-07-28: {now:?}"
    );
    let turn1 = request(&id, 1, "feasibility", breaks_it);
    let out = run("modern", turn1.clone()).await;
    let response = answered("2026-07-28 turn 1", &turn1, &out);
    assert_eq!(
        response["Feasibility"]["Steps"][0]["PAStatus"], "Clash",
        "the commitment of turn 0 holds at turn 1: {response}"
    );
    // A repeated TurnIndex is a tool error that says why.
    let again = request(&id, 1, "constraints", json!({"EntityIDs": ["Avatar#7"]}));
    let out = run("modern", again).await;
    assert_eq!(out["result"]["isError"], true, "{out}");
    assert!(
        out["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("/TurnIndex"),
        "{out}"
    );
}
