//! The connection doctor and the servers files, as users run them: `bkn-explorer doctor` and
//! `tools` against real local endpoints that fail in each way, and servers files in each shape
//! found in a project folder.

use crate::common;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use serde_json::Value;
use std::process::Command;

thread_local! {
    /// The largest peak resident memory (KiB) of the doctors this test ran (each test runs
    /// on a thread of its own).
    static LARGEST_PEAK_KIB: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

fn run(
    args: &[&str],
    cwd: Option<&std::path::Path>,
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let mut c = Command::new(common::bin());
    c.args(args);
    if let Some(d) = cwd {
        c.current_dir(d);
    }
    // The user's own settings must not change what the tests see.
    let config = tempfile::tempdir().unwrap();
    c.env("BKN_EXPLORER_CONFIG_DIR", config.path());
    c.env_remove("BKN_TOKEN");
    for (k, v) in env {
        c.env(k, v);
    }
    #[cfg(target_os = "linux")]
    let out = {
        let (out, peak) = common::output_and_peak(&mut c);
        LARGEST_PEAK_KIB.with(|p| p.set(p.get().max(peak)));
        out
    };
    #[cfg(not(target_os = "linux"))]
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The doctor's steps as (step, ok, detail, advice).
fn doctor(args: &[&str]) -> (i32, Vec<(String, bool, String, String)>) {
    doctor_within("3", args)
}

/// The doctor's steps with a timeout of `seconds` (an SDK peer in Python takes seconds to
/// start on a loaded machine).
fn doctor_within(seconds: &str, args: &[&str]) -> (i32, Vec<(String, bool, String, String)>) {
    let mut all = vec!["doctor", "--format", "json", "--timeout", seconds];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all, None, &[]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    let steps = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["step"].as_str().unwrap().to_owned(),
                s["ok"].as_bool().unwrap(),
                s["detail"].as_str().unwrap().to_owned(),
                s["advice"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    (code, steps)
}

/// The first failed step.
fn failed(steps: &[(String, bool, String, String)]) -> (String, String, String) {
    let f = steps
        .iter()
        .find(|s| !s.1)
        .unwrap_or_else(|| panic!("no step failed: {steps:?}"));
    (f.0.clone(), f.2.clone(), f.3.clone())
}

/// Serves a router on 127.0.0.1 (an ephemeral port) in a thread of its own.
fn serve(router: Router) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, router).await.unwrap();
            })
    });
    format!("http://{addr}")
}

#[test]
fn a_refused_port() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (code, steps) = doctor(&["--url", &format!("http://127.0.0.1:{port}/mcp")]);
    assert_eq!(code, 1);
    let (step, detail, advice) = failed(&steps);
    assert_eq!(step, "connect");
    assert!(detail.contains("refused"), "{detail}");
    assert!(advice.contains("running"), "{advice}");
}

#[test]
fn a_name_that_does_not_resolve() {
    let (_, steps) = doctor(&["--url", "http://no-such-host.invalid/mcp"]);
    let (step, detail, _) = failed(&steps);
    assert_eq!(step, "name");
    assert!(
        detail.contains("cannot resolve no-such-host.invalid"),
        "{detail}"
    );
}

#[test]
fn a_plain_web_server_is_not_an_mcp_endpoint() {
    let url = serve(Router::new().route(
        "/mcp",
        get(|| async { axum::response::Html("<html>hello</html>") }),
    ));
    let (_, steps) = doctor(&["--url", &format!("{url}/mcp")]);
    let (step, detail, advice) = failed(&steps);
    assert_eq!(step, "http");
    assert!(
        detail.starts_with("405") && detail.contains("not a Streamable HTTP MCP endpoint"),
        "{detail}"
    );
    assert!(advice.contains("POST of JSON-RPC"), "{advice}");
    // A path with nothing at it.
    let (_, steps) = doctor(&["--url", &format!("{url}/nothing")]);
    let (step, detail, advice) = failed(&steps);
    assert_eq!(step, "http");
    assert!(
        detail.contains("404") && detail.contains("/nothing"),
        "{detail}"
    );
    assert!(advice.contains("/mcp"), "{advice}");
    // And a page that answers a POST with HTML is not MCP either.
    let url = serve(Router::new().route(
        "/",
        post(|| async { axum::response::Html("<html>a form</html>") }),
    ));
    let (_, steps) = doctor(&["--url", &format!("{url}/")]);
    let (step, detail, _) = failed(&steps);
    assert_eq!(step, "mcp");
    assert!(
        detail.contains("not JSON-RPC") && detail.contains("HTML"),
        "{detail}"
    );
}

#[test]
fn a_server_that_wants_a_token_says_what_it_asks_for() {
    let url = serve(Router::new().route(
        "/mcp",
        post(|headers: HeaderMap| async move {
            let mut h = HeaderMap::new();
            h.insert(
                "WWW-Authenticate",
                "Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\""
                    .parse()
                    .unwrap(),
            );
            let authorised = headers
                .get("authorization")
                .is_some_and(|v| v == "Bearer right");
            if authorised {
                (StatusCode::FORBIDDEN, h, "not you")
            } else {
                (StatusCode::UNAUTHORIZED, h, "")
            }
        }),
    ));
    let (_, steps) = doctor(&["--url", &format!("{url}/mcp")]);
    let (step, detail, advice) = failed(&steps);
    assert_eq!(step, "http");
    assert!(
        detail.contains("401") && detail.contains("resource_metadata"),
        "{detail}"
    );
    assert!(advice.contains("--token"), "{advice}");
    let (_, steps) = doctor(&["--url", &format!("{url}/mcp"), "--token", "wrong"]);
    assert!(failed(&steps).2.contains("refused"), "{steps:?}");
    // The same reason when any command fails to connect, not "Auth required".
    let (code, _, err) = run(&["tools", "--url", &format!("{url}/mcp")], None, &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("401 Unauthorized") && err.contains("--token"),
        "{err}"
    );
}

#[test]
fn stdio_servers_that_print_junk_exit_or_hang() {
    let (_, steps) = doctor(&[
        "--stdio",
        "sh -c 'echo Starting up...; echo ready; sleep 30'",
    ]);
    let (step, detail, advice) = failed(&steps);
    assert_eq!(step, "handshake");
    assert!(detail.contains("\"Starting up...\", \"ready\""), "{detail}");
    assert!(advice.contains("stderr"), "{advice}");
    let (_, steps) = doctor(&["--stdio", "sh -c 'echo no config >&2; exit 3'"]);
    let (step, detail, _) = failed(&steps);
    assert_eq!(step, "handshake");
    assert!(
        detail.contains("exited with status 3") && detail.contains("no config"),
        "{detail}"
    );
    let (_, steps) = doctor(&["--stdio", "sleep 30"]);
    let (step, detail, advice) = failed(&steps);
    assert_eq!(step, "handshake");
    assert!(
        detail.contains("no answer to server/discover at MCP 2026-07-28 within 3 s"),
        "{detail}"
    );
    assert!(advice.contains("MCP server over stdio"), "{advice}");
    let (_, steps) = doctor(&["--stdio", "no-such-server-anywhere"]);
    assert_eq!(failed(&steps).0, "command");
}

#[test]
fn our_servers_pass_every_step() {
    let (code, steps) = doctor(&["--embedded", "dac"]);
    assert_eq!(code, 0, "{steps:?}");
    assert!(
        steps
            .iter()
            .any(|s| s.0 == "bkn tools" && s.2.contains("bkn_dac"))
    );
    let (code, steps) = doctor(&["--stdio", &format!("{} serve usr", common::bin())]);
    assert_eq!(code, 0, "{steps:?}");
    let names: Vec<&str> = steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["command", "mcp", "session", "bkn tools"]);
}

/// `config path` says what is wrong with each theme file: every error, each with its line.
#[test]
fn config_path_reports_every_error_of_a_broken_theme_file() {
    let dir = tempfile::tempdir().unwrap();
    let themes = dir.path().join("themes");
    std::fs::create_dir(&themes).unwrap();
    std::fs::write(
        themes.join("mine.toml"),
        "extends = \"dark\"\n[colors]\npa_clash = \"#ff00zz\"\nnot_a_color = \"red\"\n",
    )
    .unwrap();
    std::fs::write(
        themes.join("fine.toml"),
        "extends = \"light\"\n[colors]\npa_clash = \"#ff00ff\"\n",
    )
    .unwrap();
    let config = dir.path().to_str().unwrap();
    let (code, _, err) = run(
        &["config", "path"],
        None,
        &[("BKN_EXPLORER_CONFIG_DIR", config)],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("mine.toml:3: colors.pa_clash = \"#ff00zz\""),
        "{err}"
    );
    assert!(err.contains("mine.toml:4: colors.not_a_color"), "{err}");
    assert!(!err.contains("fine.toml"), "{err}");
    // A theme config.toml chooses that is nowhere.
    std::fs::remove_file(themes.join("mine.toml")).unwrap();
    std::fs::write(dir.path().join("config.toml"), "theme = \"nope\"\n").unwrap();
    let (code, _, err) = run(
        &["config", "path"],
        None,
        &[("BKN_EXPLORER_CONFIG_DIR", config)],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("theme = \"nope\": no theme nope"), "{err}");
}

/// Bare `doctor` checks both reference servers, as bare `tools` and `resources` cover both.
#[test]
fn bare_doctor_checks_both_reference_servers() {
    let (code, out, err) = run(&["doctor", "--timeout", "10"], None, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("bkn_dac"), "{out}");
    assert!(out.contains("bkn_usr"), "{out}");
    assert!(!out.contains("FAILED"), "{out}");
    let (code, out, err) = run(
        &["doctor", "--format", "json", "--timeout", "10"],
        None,
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let servers = v.as_array().expect("an array of the two");
    assert_eq!(servers.len(), 2, "{out}");
    for (server, tool) in servers.iter().zip(["bkn_dac", "bkn_usr"]) {
        assert_eq!(server["ok"], true, "{server}");
        assert!(
            server["steps"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["step"] == "bkn tools" && s["detail"].as_str().unwrap().contains(tool)),
            "{server}"
        );
    }
}

#[test]
fn servers_files_in_each_shape_are_found_in_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let bin = common::bin();
    std::fs::create_dir_all(dir.path().join(".vscode")).unwrap();
    // VS Code's shape, with an input given headless and a workspace path.
    std::fs::write(
        dir.path().join(".vscode/mcp.json"),
        serde_json::json!({
            "inputs": [{"type": "promptString", "id": "mode", "description": "Which server"}],
            "servers": {
                "dac": {"type": "stdio", "command": bin, "args": ["serve", "${input:mode}"],
                        "cwd": "${workspaceFolder}"}
            }
        })
        .to_string(),
    )
    .unwrap();
    // Claude Code's .mcp.json, with a default.
    std::fs::write(
        dir.path().join(".mcp.json"),
        serde_json::json!({"mcpServers": {
            "usr": {"type": "stdio", "command": bin, "args": ["serve", "${BKN_TEST_WHICH:-usr}"]},
            "needs-token": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                            "headers": {"Authorization": "Bearer ${BKN_TEST_UNSET_TOKEN}"}}
        }})
        .to_string(),
    )
    .unwrap();
    let (code, out, err) = run(
        &["tools", "--servers", "--server", "usr"],
        Some(dir.path()),
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("bkn_usr"), "{out}");
    let (code, out, err) = run(
        &["tools", "--server", "dac"],
        Some(dir.path()),
        &[("BKN_INPUT_MODE", "dac")],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("bkn_dac"), "{out}");
    // Without the input: the file, the server and the variable, and how to give it.
    let (code, _, err) = run(&["tools", "--server", "dac"], Some(dir.path()), &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            ".vscode/mcp.json: server \"dac\": ${input:mode} (Which server) needs a value"
        ) && err.contains("BKN_INPUT_MODE"),
        "{err}"
    );
    let (code, _, err) = run(&["tools", "--server", "needs-token"], Some(dir.path()), &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains(".mcp.json: server \"needs-token\": ${BKN_TEST_UNSET_TOKEN} is not set and has no default"),
        "{err}"
    );
    // A name that is nowhere says where it looked and what there is.
    let (code, _, err) = run(&["tools", "--server", "nope"], Some(dir.path()), &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no server named nope") && err.contains("there are: usr, needs-token, dac"),
        "{err}"
    );
}

/// A body that never ends: `start`, then `fill` for ever (until the client goes).
fn endless(content_type: &'static str, start: &'static str) -> axum::response::Response {
    let chunk = bytes::Bytes::from(vec![b'a'; 64 * 1024]);
    let body = futures::stream::once(async move {
        Ok::<_, std::io::Error>(bytes::Bytes::from_static(start.as_bytes()))
    })
    .chain(futures::stream::repeat_with(move || Ok(chunk.clone())));
    axum::response::Response::builder()
        .header("content-type", content_type)
        .body(axum::body::Body::from_stream(body))
        .unwrap()
}

use futures::StreamExt;

/// The doctor's reads are bounded, and an answer that grows past the bound ends the probe with
/// a reason (issue 27): an event stream whose first message never ends, a JSON body that never
/// ends, and a stdio server that writes one endless line. The doctor's peak memory (getrusage
/// of its process, once ended) stays far below what was sent: at 3 s of a local endless
/// stream that is gigabytes.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn endless_answers_end_the_probe_with_a_reason() {
    let url = serve(
        Router::new()
            .route(
                "/sse",
                post(|| async {
                    endless(
                        "text/event-stream",
                        "data: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"x\":\"",
                    )
                }),
            )
            .route(
                "/json",
                post(|| async {
                    endless(
                        "application/json",
                        "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"x\":\"",
                    )
                }),
            ),
    );
    let (_, steps) = doctor(&["--url", &format!("{url}/sse")]);
    let (step, detail, _) = failed(&steps);
    assert_eq!(step, "mcp");
    assert!(
        detail.contains("event stream") && detail.contains("went past 1.0 MiB"),
        "{detail}"
    );
    let (_, steps) = doctor(&["--url", &format!("{url}/json")]);
    let (step, detail, _) = failed(&steps);
    assert_eq!(step, "mcp");
    assert!(detail.contains("longer than 1.0 MiB"), "{detail}");
    let (_, steps) = doctor(&["--stdio", r#"sh -c 'exec tr "\000" a < /dev/zero'"#]);
    let (step, detail, _) = failed(&steps);
    assert_eq!(step, "handshake");
    assert!(detail.contains("within 3 s"), "{detail}");
    let peak_kib = LARGEST_PEAK_KIB.with(|p| p.get());
    // Of the doctors this test ran, the largest.
    eprintln!("the largest child's peak: {} MiB", peak_kib / 1024);
    assert!(
        peak_kib < 200 * 1024,
        "a doctor's peak memory was {peak_kib} KiB"
    );
}

/// The server's answer the doctor quotes after "The server's answer: ", read back as JSON: it
/// is whole (a cut answer would not parse).
fn quoted_answer(detail: &str) -> Value {
    let at = detail
        .find("The server's answer: ")
        .unwrap_or_else(|| panic!("no answer quoted: {detail}"))
        + "The server's answer: ".len();
    let mut answers = serde_json::Deserializer::from_str(&detail[at..]).into_iter::<Value>();
    answers
        .next()
        .unwrap_or_else(|| panic!("no JSON after the quote: {detail}"))
        .unwrap_or_else(|e| panic!("the answer is not whole ({e}): {detail}"))
}

/// Servers that speak one generation only (the SDK peers: strict 2026-07-28 from the Python
/// and TypeScript SDKs, and a Python SDK server that speaks only 2025-11-25, as the SDK 1.x
/// did), over stdio and HTTP, with --protocol pinned to the other: `doctor` and a command's
/// connection error say what this client offered and what the server answered, whole, and
/// name the mismatch and its fix; with auto both pass and say which generation they got.
#[test]
fn a_server_of_one_generation_pinned_the_other_way_names_the_mismatch_and_its_fix() {
    let (python, node) = common::sdk_peers();
    let strict = [
        (python.as_str(), "py_dac_server.py"),
        (node.as_str(), "ts/dac_server.mjs"),
    ];
    let mut cases = Vec::new();
    // (server args, which it speaks, its HTTP server kept alive)
    let mut alive = Vec::new();
    for (program, script) in strict {
        cases.push((
            vec![
                "--stdio".to_owned(),
                format!("{program} {} --strict-2026", common::peer(script)),
            ],
            "2026-07-28",
        ));
        let http = common::PeerServer::start(program, script, &["--strict-2026"]);
        cases.push((vec!["--url".to_owned(), http.url.clone()], "2026-07-28"));
        alive.push(http);
    }
    cases.push((
        vec![
            "--stdio".to_owned(),
            format!(
                "{python} {} --legacy-only",
                common::peer("py_dac_server.py")
            ),
        ],
        "2025-11-25",
    ));
    let legacy = common::PeerServer::start(&python, "py_dac_server.py", &["--legacy-only"]);
    cases.push((vec!["--url".to_owned(), legacy.url.clone()], "2025-11-25"));
    // Three servers at a time: each case is three commands against an SDK's server, whose
    // interpreter's start is most of what they take.
    common::at_once(3, cases.iter().collect(), |(server, speaks)| {
        let server: Vec<&str> = server.iter().map(String::as_str).collect();
        let case = format!("{server:?} speaking only {speaks}");
        let (pinned, offered, mismatch, fix) = if *speaks == "2026-07-28" {
            (
                "2025-11-25",
                "this client offered initialize at MCP 2025-11-25 (--protocol 2025-11-25)",
                "this server speaks only MCP 2026-07-28",
                "--protocol auto",
            )
        } else {
            (
                "2026-07-28",
                "this client offered server/discover at MCP 2026-07-28 (--protocol 2026-07-28)",
                "this server does not speak MCP 2026-07-28",
                "--protocol 2025-11-25",
            )
        };
        let mut args = server.clone();
        args.extend(["--protocol", pinned]);
        let (code, steps) = doctor_within("30", &args);
        assert_eq!(code, 1, "{case}: {steps:?}");
        let (step, detail, advice) = failed(&steps);
        assert_eq!(step, "mcp", "{case}");
        assert!(detail.starts_with(offered), "{case}: {detail}");
        let answer = quoted_answer(&detail);
        assert!(answer.get("error").is_some(), "{case}: {answer}");
        if *speaks == "2026-07-28" {
            assert_eq!(
                answer.pointer("/error/data/supported"),
                Some(&serde_json::json!(["2026-07-28"])),
                "{case}: {answer}"
            );
        }
        assert!(
            advice.contains(mismatch) && advice.contains(fix),
            "{case}: {advice}"
        );
        // Any command that fails to connect says the same.
        let mut args = vec!["tools"];
        args.extend(server.iter().copied());
        args.extend(["--protocol", pinned]);
        let (code, _, err) = run(&args, None, &[]);
        assert_eq!(code, 2, "{case}: {err}");
        assert!(
            err.contains(offered)
                && err.to_lowercase().contains(&mismatch.to_lowercase())
                && err.contains(fix),
            "{case}: {err}"
        );
        assert!(
            err.contains(&answer.to_string()) || err.contains(&answer["error"].to_string()),
            "{case}: the server's answer whole: {err}"
        );
        // auto gets the generation the server speaks, and says so.
        let (code, steps) = doctor_within("30", &server);
        assert_eq!(code, 0, "{case}: {steps:?}");
        let session = steps.iter().find(|s| s.0 == "session").unwrap();
        assert!(
            session.2.starts_with(&format!("MCP {speaks} (")),
            "{case}: {session:?}"
        );
        let mcp = steps.iter().find(|s| s.0 == "mcp").unwrap();
        assert!(
            mcp.2.contains(&format!("speaks MCP {speaks}")),
            "{case}: {mcp:?}"
        );
    });
}
