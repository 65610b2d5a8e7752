//! The official MCP conformance suite (server-initialize, ping, tools-list,
//! dns-rebinding-protection) against each reference server over HTTP, and its client scenarios
//! (initialize, tools_call, sse-retry) against the explorer as the client. Needs npm (the suite and
//! Node 22 are installed from the npm registry the first time; `.ci/run` makes sure npm exists).

mod common;

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
