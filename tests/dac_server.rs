//! The reference Domain Access server over real transports: each scenario runs over stdio (a
//! child process per session) and over HTTP (a child process on an ephemeral port). Every
//! Response is checked by the conformance engine (see `common::Dialogue::send`).

use crate::common;

use bkn_explorer::protocol::Interface;
use common::{Dialogue, Generation, Server, Transport, commitment_states, plan, statuses};
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

async fn dialogue(server: &Server) -> Dialogue {
    server.dialogue(Interface::Dac).await
}

fn names(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x[field].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

async fn every_kind(transport: Transport, generation: Generation) {
    let server = Server::start_in(transport, generation, &["dac"]).await;
    let mut d = dialogue(&server).await;

    let r = d
        .send(json!({"Kind": "semantic_grounding", "Terms": [{"Text": "fountain"}, {"Text": "stand"}, {"Text": "spaceship"}]}))
        .await
        .response();
    assert_eq!(r["Outcome"], "partially_answered", "{r:#}");
    let classes = names(&r["Answer"]["ObjectClasses"], "Class");
    assert_eq!(classes, ["Fountain", "Kiosk", "Stage"]);
    assert_eq!(r["Answer"]["ObjectClasses"][0]["Confidence"], 1.0);
    let text = r["Answer"]["Text"].as_str().unwrap();
    assert!(
        text.contains("spaceship") && text.contains("ambiguous"),
        "{text}"
    );
    assert_eq!(r["SourcesUsed"], json!(["ontology"]));

    let r = d
        .send(json!({"Kind": "affordances", "EntityIDs": ["Kiosk#3"]}))
        .await
        .response();
    assert_eq!(r["Outcome"], "answered");
    let actions = names(&r["Answer"]["Affordances"], "Action");
    for a in ["MM-Add", "Post", "MM-Move", "Hide", "Inform"] {
        assert!(
            actions.contains(&a.to_owned()),
            "{a} missing from {actions:?}"
        );
    }
    let inherited = r["Answer"]["Affordances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["Action"] == "Hide")
        .unwrap();
    assert_eq!(
        inherited["Class"], "Furniture",
        "Hide is inherited from Furniture"
    );

    let r = d
        .send(json!({"Kind": "constraints", "EntityIDs": ["Fountain#1"]}))
        .await
        .response();
    let constraints: Vec<&str> = r["Answer"]["Constraints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        constraints
            .iter()
            .any(|c| c.contains("protected by Process#CityHall")),
        "{constraints:?}"
    );
    assert!(
        constraints
            .iter()
            .any(|c| c.contains("holds at most 1 Item")),
        "{constraints:?}"
    );
    assert!(
        constraints
            .iter()
            .any(|c| c.contains("may not MM-Move Fountain#1")),
        "{constraints:?}"
    );
    assert_eq!(
        r["SourcesUsed"],
        json!(["scene-graph", "city-norms", "rights-registry"])
    );

    let r = d
        .send(json!({"Kind": "behavioural_expectations", "Space": {"SpaceID": "Space:Square"}}))
        .await
        .response();
    let expected: Vec<&str> = r["Answer"]["BehaviouralExpectations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        expected.contains(&"Crowds gather in front of the stage before a performance."),
        "{expected:?}"
    );
    assert!(
        expected.contains(&"Avatars keep to the walkways when crossing the square."),
        "{expected:?}"
    );

    let r = d
        .send(
            json!({"Kind": "clarification", "Terms": [{"Text": "stand"}], "EntityIDs": ["Avatar"]}),
        )
        .await
        .response();
    assert_eq!(r["Outcome"], "answered");
    let relations: Vec<(String, String)> = r["Answer"]["Relations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["Subject"].as_str().unwrap().to_owned(),
                x["Object"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for pair in [
        ("stand", "Kiosk"),
        ("stand", "Stage"),
        ("Avatar", "Avatar#7"),
        ("Avatar", "Avatar#9"),
    ] {
        assert!(
            relations.contains(&(pair.0.into(), pair.1.into())),
            "{pair:?} in {relations:?}"
        );
    }

    let r = d
        .send(json!({"Kind": "commitment", "Commitments": [{"CommitmentID": "c1", "Statement": "Kiosk#3 locatedAt MLoc:Square.Stage"}]}))
        .await
        .response();
    assert_eq!(commitment_states(&r)["c1"], "retained");

    let r = d
        .send(plan(&["MM-Add Nil Kiosk#3 At MLoc:Square.Stage"]))
        .await
        .response();
    assert_eq!(statuses(&r), ["Ack"]);
    assert_eq!(r["Feasibility"]["Overall"], "feasible");
    // Every Response reports every commitment of the dialogue.
    assert_eq!(commitment_states(&r)["c1"], "retained");
}

#[tokio::test]
async fn every_kind_over_stdio() {
    for generation in Generation::BOTH {
        every_kind(Transport::Stdio, generation).await;
    }
}

#[tokio::test]
async fn every_kind_over_http() {
    for generation in Generation::BOTH {
        every_kind(Transport::Http, generation).await;
    }
}

/// One plan that reaches all ten PA Statuses, each with a Reason; later steps see what the
/// earlier ones did (the wallet, the placement).
async fn every_pa_status(transport: Transport, generation: Generation) {
    let server = Server::start_in(transport, generation, &["dac"]).await;
    let mut d = dialogue(&server).await;
    let r = d
        .send(plan(&[
            "MM-Add Nil Kiosk#3 At MLoc:Square.Stage",
            "MM-Add Nil Kiosk#3 At MLoc:Square.Gate",
            "MM-Move Nil Avatar#7 To MLoc:Museum.Hall",
            "Post Nil Item#12 To Process#Market",
            "MM-Add Nil Kiosk#9 At MLoc:Square.Gate",
            "MM-Jump Nil Avatar#7",
            "MM-Add Nil Artwork#6(Format=USDZ) At MLoc:Square.Stage",
            "Post Nil Artwork#5 To Process#Market",
            "Post Nil Artwork#6 To Process#Bank",
            "Transact Nil Artwork#6 To Process#Market",
            "MM-Add Nil Artwork#6 At MLoc:Square.Gate",
        ]))
        .await
        .response();
    assert_eq!(
        statuses(&r),
        [
            "Ack",
            "Clash",
            "LocOOR",
            "InsRights",
            "IncID",
            "FaultyReq",
            "IncDQ",
            "QualNS",
            "PostRef",
            "Ack",
            "InsValue"
        ]
    );
    assert_eq!(r["Feasibility"]["Overall"], "partially_feasible");
    let reasons: Vec<&str> = r["Feasibility"]["Steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["Reason"].as_str().unwrap())
        .collect();
    let expect = [
        "12", // costs 4, leaves 8
        "since step 0",
        "outside the requester's reach",
        "May Not",
        "Kiosk#9 is not an Item",
        "MM-Jump",
        "Artwork#6 has Format glTF, not USDZ",
        "Artwork#5 is USDZ",
        "Process#Bank refuses",
        "3 left",
        "holds 3 after the earlier steps",
    ];
    for (i, (reason, part)) in reasons.iter().zip(expect).enumerate() {
        if i == 0 {
            assert!(reason.contains("8 left"), "step 0: {reason}");
        } else {
            assert!(reason.contains(part), "step {i}: '{reason}' lacks '{part}'");
        }
    }
    let infeasible = d
        .send(plan(&[
            "MM-Jump Nil Avatar#7",
            "MM-Move Nil Fountain#1 To MLoc:Square.Gate",
        ]))
        .await
        .response();
    assert_eq!(statuses(&infeasible), ["FaultyReq", "InsRights"]);
    assert_eq!(infeasible["Feasibility"]["Overall"], "infeasible");
}

#[tokio::test]
async fn every_pa_status_over_stdio() {
    for generation in Generation::BOTH {
        every_pa_status(Transport::Stdio, generation).await;
    }
}

#[tokio::test]
async fn every_pa_status_over_http() {
    for generation in Generation::BOTH {
        every_pa_status(Transport::Http, generation).await;
    }
}

#[tokio::test]
async fn later_steps_see_earlier_ones() {
    let server = Server::start(Transport::Stdio, &["dac"]).await;
    let mut d = dialogue(&server).await;
    let r = d
        .send(plan(&[
            "Hide Nil Bench#2",
            "MM-Move Nil Bench#2 To MLoc:Square.Gate",
            "MM-Add Nil Kiosk#3 At MLoc:Square.Corner",
            "MM-Move Nil Kiosk#3 From MLoc:Square.Corner To MLoc:Square.Walkway",
            "MM-Move Nil Kiosk#3 From MLoc:Square.Corner To MLoc:Square.Gate",
        ]))
        .await
        .response();
    assert_eq!(statuses(&r), ["Ack", "IncID", "Ack", "Ack", "Clash"]);
    let steps = r["Feasibility"]["Steps"].as_array().unwrap();
    assert!(
        steps[1]["Reason"]
            .as_str()
            .unwrap()
            .contains("hidden by step 0")
    );
    assert!(
        steps[4]["Reason"]
            .as_str()
            .unwrap()
            .contains("MLoc:Square.Walkway (since step 3)")
    );
    // A plan is judged on a copy: the next plan starts from the domain again.
    let again = d
        .send(plan(&["MM-Move Nil Bench#2 To MLoc:Square.Gate"]))
        .await
        .response();
    assert_eq!(statuses(&again), ["Ack"]);
}

async fn commitments(transport: Transport, generation: Generation) {
    let server = Server::start_in(transport, generation, &["dac"]).await;
    let mut d = dialogue(&server).await;
    let r = d
        .send(json!({"Kind": "commitment", "Commitments": [
            {"CommitmentID": "c1", "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"},
            {"CommitmentID": "c2", "Statement": "Avatar#7 locatedAt MLoc:Square.Stage"},
            {"CommitmentID": "c3", "Statement": "Fountain#1 not locatedAt MLoc:Square.Fountain"},
            {"CommitmentID": "c4", "Statement": "keep the square quiet after dark"}
        ]}))
        .await
        .response();
    let s = commitment_states(&r);
    assert_eq!(
        (&s["c1"], &s["c2"], &s["c3"], &s["c4"]),
        (
            &json!("retained"),
            &json!("conflicting"),
            &json!("conflicting"),
            &json!("retained")
        )
    );
    let text = r["Answer"]["Text"].as_str().unwrap();
    assert!(text.contains("c2 conflicts: c1 already commits"), "{text}");

    // A retained commitment is a constraint: moving the avatar away would break it.
    let r = d
        .send(plan(&["MM-Move Nil Avatar#7 To MLoc:Square.Stage"]))
        .await
        .response();
    assert_eq!(statuses(&r), ["Clash"]);
    assert!(
        r["Feasibility"]["Steps"][0]["Reason"]
            .as_str()
            .unwrap()
            .contains("break commitment c1")
    );

    // Released, it no longer constrains. Restated in the same turn, c2 no longer conflicts
    // with c1, but still with the domain, which has the avatar at the gate.
    let mut released = plan(&["MM-Move Nil Avatar#7 To MLoc:Square.Stage"]);
    released["ReleasedCommitmentIDs"] = json!(["c1"]);
    released["Commitments"] = json!([
        {"CommitmentID": "c2", "Statement": "Avatar#7 locatedAt MLoc:Square.Stage"},
        {"CommitmentID": "c5", "Statement": "Avatar#7 not locatedAt MLoc:Square.Walkway"}
    ]);
    let r = d.send(released).await.response();
    assert_eq!(statuses(&r), ["Ack"]);
    let s = commitment_states(&r);
    assert_eq!(
        (&s["c1"], &s["c2"], &s["c5"]),
        (
            &json!("released"),
            &json!("conflicting"),
            &json!("retained")
        )
    );
    let text = r["Answer"]["Text"].as_str().unwrap();
    assert!(
        text.contains("c2 conflicts: the domain has Avatar#7 locatedAt MLoc:Square.Gate"),
        "{text}"
    );
    // A negated commitment is a constraint too: the walkway is where the avatar must not go.
    let r = d
        .send(plan(&[
            "MM-Move Nil Avatar#7 To MLoc:Square.Corner",
            "MM-Move Nil Avatar#7 To MLoc:Square.Walkway",
        ]))
        .await
        .response();
    assert_eq!(statuses(&r), ["Ack", "Clash"]);
    assert!(
        r["Feasibility"]["Steps"][1]["Reason"]
            .as_str()
            .unwrap()
            .contains("break commitment c5")
    );

    // Releasing what the dialogue never saw is answered in part.
    let r = d
        .send(json!({"Kind": "commitment", "ReleasedCommitmentIDs": ["c9"]}))
        .await
        .response();
    assert_eq!(r["Outcome"], "partially_answered");
    assert!(
        r["Answer"]["Text"]
            .as_str()
            .unwrap()
            .contains("c9 is not a commitment")
    );
}

#[tokio::test]
async fn commitments_over_stdio() {
    for generation in Generation::BOTH {
        commitments(Transport::Stdio, generation).await;
    }
}

#[tokio::test]
async fn commitments_over_http() {
    for generation in Generation::BOTH {
        commitments(Transport::Http, generation).await;
    }
}

async fn sessions_are_isolated(transport: Transport, generation: Generation) {
    let server = Server::start_in(transport, generation, &["dac"]).await;
    let mut a = dialogue(&server).await;
    let mut b = dialogue(&server).await;
    a.send(json!({"Kind": "commitment", "Commitments": [{"CommitmentID": "c1", "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"}]}))
        .await
        .response();
    // B sees nothing of A's commitments and cannot release them.
    let r = b
        .send(json!({"Kind": "commitment", "ReleasedCommitmentIDs": ["c1"]}))
        .await
        .response();
    assert!(commitment_states(&r).is_empty(), "{r:#}");
    assert_eq!(r["Outcome"], "partially_answered");
    // B's TurnIndex and DialogID are its own.
    let r = b
        .send(plan(&["MM-Move Nil Avatar#7 To MLoc:Square.Stage"]))
        .await
        .response();
    assert_eq!(statuses(&r), ["Ack"]);
    let r = a
        .send(plan(&["MM-Move Nil Avatar#7 To MLoc:Square.Stage"]))
        .await
        .response();
    assert_eq!(statuses(&r), ["Clash"]);
    // Ending a session drops its dialogue: a new one starts empty.
    a.client.cancel().await.unwrap();
    let mut c = dialogue(&server).await;
    let r = c
        .send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
        .await
        .response();
    assert!(commitment_states(&r).is_empty());
}

#[tokio::test]
async fn sessions_are_isolated_over_stdio() {
    for generation in Generation::BOTH {
        sessions_are_isolated(Transport::Stdio, generation).await;
    }
}

#[tokio::test]
async fn sessions_are_isolated_over_http() {
    for generation in Generation::BOTH {
        sessions_are_isolated(Transport::Http, generation).await;
    }
}

async fn bad_requests(transport: Transport, generation: Generation) {
    let server = Server::start_in(transport, generation, &["dac"]).await;
    let mut d = dialogue(&server).await;
    let error = d.send(json!({"Kind": "guess"})).await.tool_error();
    assert!(error.contains("/Kind: Kind must be one of"), "{error}");

    // A Response where a Request belongs.
    let mut response_shaped =
        json!({"Kind": "constraints", "Mode": "RS", "RequestID": "x", "Outcome": "answered"});
    response_shaped["EntityIDs"] = json!(["Avatar#7"]);
    let error = d.send(response_shaped).await.tool_error();
    assert!(error.contains("/Mode: Mode is RS"), "{error}");
    assert!(
        error.contains("/RequestID: RequestID belongs to a BKN-DAC Response"),
        "{error}"
    );

    // Nothing the rejected Requests said was kept: turn 0 is still free.
    d.send(json!({"Kind": "commitment", "Commitments": [{"CommitmentID": "c1", "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"}]}))
        .await
        .response();
    // A repeated TurnIndex, with a commitment that must not be retained.
    d.next_turn = 0;
    let error = d
        .send(json!({"Kind": "commitment", "Commitments": [{"CommitmentID": "c2", "Statement": "Avatar#7 locatedAt MLoc:Square.Stage"}]}))
        .await
        .tool_error();
    assert!(
        error.contains("/TurnIndex: TurnIndex 0 is not after"),
        "{error}"
    );
    // Another DialogID.
    d.next_turn = 5;
    let real = d.dialog_id.clone();
    d.dialog_id = "someone-else".into();
    let error = d
        .send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
        .await
        .tool_error();
    assert!(error.contains("/DialogID"), "{error}");
    d.dialog_id = real;
    let r = d
        .send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
        .await
        .response();
    let s = commitment_states(&r);
    assert_eq!(s.len(), 1, "the rejected c2 was not kept: {s:?}");
    // Another M-Instance is a conformant Request that cannot be answered.
    d.defaults.m_instance = "MI:Elsewhere".into();
    let r = d
        .send(json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}))
        .await
        .response();
    assert_eq!(r["Outcome"], "not_answered");
}

#[tokio::test]
async fn bad_requests_over_stdio() {
    for generation in Generation::BOTH {
        bad_requests(Transport::Stdio, generation).await;
    }
}

#[tokio::test]
async fn bad_requests_over_http() {
    for generation in Generation::BOTH {
        bad_requests(Transport::Http, generation).await;
    }
}

#[tokio::test]
async fn unknown_tool_is_a_protocol_error() {
    let server = Server::start(Transport::Stdio, &["dac"]).await;
    let client = server.session().await;
    let result = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("bkn_usr")
                .with_arguments(serde_json::Map::new()),
        )
        .await;
    assert!(result.is_err(), "{result:?}");
}

async fn source_failures(transport: Transport, generation: Generation) {
    let server = Server::start(
        transport,
        &["dac", "--fail-source", "rights-registry=transient"],
    )
    .await;
    let mut d = dialogue(&server).await;
    let r = d
        .send(plan(&[
            "MM-Move Nil Avatar#7 To MLoc:Square.Stage",
            "Post Nil Item#12 To Process#Market",
        ]))
        .await
        .response();
    assert_eq!(r["Outcome"], "partially_answered");
    assert_eq!(r["Failure"]["Service"], "rights-registry");
    assert_eq!(r["Failure"]["Nature"], "transient");
    assert!(!names(&r["SourcesUsed"], "").contains(&"rights-registry".to_owned()));
    assert!(
        !r["SourcesUsed"]
            .as_array()
            .unwrap()
            .contains(&json!("rights-registry"))
    );
    // A step that needs a source that failed is never Ack (MCP-BINDING section 2): without
    // the Rights, neither the move nor the Post the requester holds a May Not for is feasible.
    assert_eq!(statuses(&r), ["InsRights", "InsRights"]);
    assert_eq!(r["Feasibility"]["Overall"], "infeasible");
    for step in r["Feasibility"]["Steps"].as_array().unwrap() {
        let reason = step["Reason"].as_str().unwrap();
        assert!(
            reason.contains("rights-registry failed"),
            "the Reason names the failed source: {reason}"
        );
    }
    // The wallet down: every step with a price is InsValue; the receiving service down: a
    // Post is PostRef.
    for (source, statement, status) in [
        (
            "wallet=transient",
            "MM-Move Nil Avatar#7 To MLoc:Square.Stage",
            "InsValue",
        ),
        (
            "market=permanent",
            "Post Nil Artwork#5 To Process#Market",
            "PostRef",
        ),
    ] {
        let server =
            Server::start_in(transport, generation, &["dac", "--fail-source", source]).await;
        let mut d = dialogue(&server).await;
        let r = d.send(plan(&[statement])).await.response();
        assert_eq!(statuses(&r), [status], "{source}");
        assert_eq!(r["Feasibility"]["Overall"], "infeasible", "{source}");
        assert!(
            r["Feasibility"]["Steps"][0]["Reason"]
                .as_str()
                .unwrap()
                .contains("failed")
        );
    }

    let server = Server::start_in(
        transport,
        generation,
        &["dac", "--fail-source", "ontology=permanent"],
    )
    .await;
    let mut d = dialogue(&server).await;
    let r = d
        .send(json!({"Kind": "semantic_grounding", "Terms": [{"Text": "fountain"}]}))
        .await
        .response();
    assert_eq!(r["Outcome"], "not_answered");
    assert_eq!(
        r["Failure"],
        json!({"Service": "ontology", "Request": "classes for \"fountain\"", "Nature": "permanent"})
    );
}

#[tokio::test]
async fn source_failures_over_stdio() {
    for generation in Generation::BOTH {
        source_failures(Transport::Stdio, generation).await;
    }
}

#[tokio::test]
async fn source_failures_over_http() {
    for generation in Generation::BOTH {
        source_failures(Transport::Http, generation).await;
    }
}

#[tokio::test]
async fn resources_offer_the_ids() {
    for (transport, generation) in [Transport::Stdio, Transport::Http]
        .into_iter()
        .flat_map(|t| Generation::BOTH.map(|g| (t, g)))
    {
        let server = Server::start_in(transport, generation, &["dac"]).await;
        let client = server.session().await;
        let resources = client.list_all_resources().await.unwrap();
        let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "dac://domain",
                "dac://spaces/Space:Square",
                "dac://spaces/Space:Market",
                "dac://spaces/Space:Museum"
            ]
        );
        let read = client
            .read_resource(ReadResourceRequestParams::new("dac://spaces/Space:Square"))
            .await
            .unwrap();
        let text = match &read.contents[0] {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("{other:?}"),
        };
        let space: Value = serde_json::from_str(&text).unwrap();
        let locations = names(&space["MLocations"], "MLocationID");
        assert!(locations.contains(&"MLoc:Square.Fountain".to_owned()));
        let entities = names(&space["Entities"], "ItemID");
        assert!(
            entities.contains(&"Avatar#7".to_owned())
                && entities.contains(&"Fountain#1".to_owned())
        );
        assert!(
            space["Actions"]
                .as_array()
                .unwrap()
                .contains(&json!("MM-Move"))
        );
        let missing = client
            .read_resource(ReadResourceRequestParams::new("dac://spaces/Nowhere"))
            .await;
        assert!(missing.is_err());
    }
}

#[test]
fn a_domain_file_with_mistakes_is_refused_with_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    let mut domain: Value =
        serde_json::from_str(bkn_explorer::server::dac::domain::DEFAULT_DOMAIN).unwrap();
    domain["Items"][0]["Class"] = json!("Avtar");
    domain["Items"][2]["Position"] = json!("MLoc:Nowhere");
    domain["Rights"][0]["Action"] = json!("MM-Mve");
    std::fs::write(&path, serde_json::to_string_pretty(&domain).unwrap()).unwrap();
    let out = std::process::Command::new(common::bin())
        .args(["serve", "dac", "--domain"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for part in [
        "3 mistakes",
        "/Items/0/Class: Avtar is not a class",
        "/Items/2/Position",
        "/Rights/0/Action",
        "did you mean MM-Move?",
    ] {
        assert!(stderr.contains(part), "'{part}' missing from:\n{stderr}");
    }
    assert!(out.stdout.is_empty(), "nothing on standard output");

    std::fs::write(&path, "{\"MInstance\": ").unwrap();
    let out = std::process::Command::new(common::bin())
        .args(["serve", "dac", "--domain"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1, column"));

    let out = std::process::Command::new(common::bin())
        .args(["serve", "dac", "--fail-source", "nosuch=transient"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such source"));
}

/// Over HTTP each connection is served on one of a single-threaded runtime per core
/// (`server::per_core`), and the session a connection starts lives there. A session begun on
/// one connection must go on over others (dealt to other runtimes), sessions must run side by
/// side, and SIGTERM must stop the server though a client keeps a stream open.
#[tokio::test]
async fn http_sessions_go_on_across_connections_and_sigterm_stops_the_server() {
    use bkn_explorer::protocol::message::{CommonDefaults, Fill, fill_request};
    let mut server = common::spawn_http(&["dac".into()]).await;
    let url = server.url.clone();
    // A client per request: each request on a new TCP connection.
    let post = |session: Option<String>, body: Value| {
        let url = url.clone();
        async move {
            let mut request = reqwest::Client::new()
                .post(&url)
                .header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json")
                .header("MCP-Protocol-Version", "2025-11-25");
            if let Some(id) = &session {
                request = request.header("Mcp-Session-Id", id);
            }
            let response = request.json(&body).send().await.unwrap();
            let status = response.status();
            let id = response
                .headers()
                .get("mcp-session-id")
                .map(|v| v.to_str().unwrap().to_owned());
            let text = response.text().await.unwrap();
            // The JSON-RPC message: the body, or the data of the stream's event that has one.
            let message = text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .find(|d| !d.is_empty())
                .or(Some(text.as_str()).filter(|t| t.starts_with('{')))
                .map(|d| serde_json::from_str::<Value>(d).unwrap());
            (status, id, message)
        }
    };
    let open = || async {
        let (status, id, _) = post(
            None,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "per-core-test", "version": "0"}}}),
        )
        .await;
        assert_eq!(status, 200);
        let session = id.expect("a session id");
        let (status, _, _) = post(
            Some(session.clone()),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        assert_eq!(status, 202);
        session
    };
    let turns = |session: String| async move {
        for turn in 0..6u64 {
            let mut request = json!({"Kind": "constraints", "EntityIDs": ["Kiosk#3"],
                "Space": {"SpaceID": "Space:Square"}})
            .as_object()
            .unwrap()
            .clone();
            fill_request(
                &mut request,
                Interface::Dac,
                &session,
                turn,
                &CommonDefaults::default(),
                Fill::Missing,
            );
            let (status, _, message) = post(
                Some(session.clone()),
                json!({"jsonrpc": "2.0", "id": turn + 1, "method": "tools/call", "params": {
                    "name": Interface::Dac.tool_name(), "arguments": request}}),
            )
            .await;
            assert_eq!(status, 200);
            let message = message.expect("an answer");
            let result = &message["result"];
            assert_ne!(result["isError"], true, "turn {turn}: {message}");
            let response = &result["structuredContent"];
            assert_eq!(response["TurnIndex"], turn, "{message}");
            assert_eq!(response["DialogID"], session.as_str(), "{message}");
        }
    };
    // Side by side: four sessions, each over many connections.
    let sessions = futures::future::join_all((0..4).map(|_| open())).await;
    futures::future::join_all(sessions.iter().cloned().map(turns)).await;

    // A stream kept open (the session's GET stream), then SIGTERM.
    let stream = reqwest::Client::new()
        .get(&url)
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &sessions[0])
        .header("MCP-Protocol-Version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let pid = server.child.id().expect("running") as i32;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), server.child.wait())
        .await
        .expect("the server stops within 10 s of SIGTERM")
        .unwrap();
    assert!(status.success(), "{status}");
    drop(stream);
}
