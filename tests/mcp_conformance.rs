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
    for interface in ["dac", "usr"] {
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
    }
}

/// The explorer as the client, at both revisions: the handshake or server/discover, a tool
/// call, an event stream to resume (2025-11-25); the request metadata, the standard headers
/// and schemas kept as sent (2026-07-28).
#[test]
fn the_explorer_passes_the_client_scenarios_at_both_mcp_revisions() {
    let bin = common::bin();
    let call = format!(r#"{bin} call add_numbers '{{"a":1,"b":2}}' --url"#);
    let tools = format!("{bin} tools --url");
    let headers =
        format!(r#"sh -c '{bin} tools --url "$0" && {bin} call test_headers {{}} --url "$0"'"#);
    for (revision, scenario, command) in [
        ("2025-11-25", "initialize", &tools),
        ("2025-11-25", "tools_call", &call),
        ("2025-11-25", "sse-retry", &call),
        ("2026-07-28", "tools_call", &call),
        ("2026-07-28", "request-metadata", &tools),
        ("2026-07-28", "json-schema-ref-no-deref", &tools),
        ("2026-07-28", "http-standard-headers", &headers),
    ] {
        let (passed, log) = next_suite(&["client", command, "--requirements", revision, scenario]);
        assert!(passed, "{scenario} at {revision}:\n{log}");
    }
}
