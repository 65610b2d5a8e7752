//! The official MCP conformance suite (server-initialize, ping, tools-list,
//! dns-rebinding-protection) against each reference server over HTTP. Needs npm (the suite and
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
