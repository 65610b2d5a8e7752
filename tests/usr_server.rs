//! The reference User State Refinement server over real transports. Every Response is checked
//! by the conformance engine (see `common::Dialogue::send`).

use crate::common;

use bkn_explorer::protocol::Interface;
use common::{Dialogue, Generation, Server, Transport};
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

async fn dialogue(server: &Server) -> Dialogue {
    server.dialogue(Interface::Usr).await
}

fn feedback(
    user: &str,
    hypothesis: Option<&str>,
    conflicts: &[&str],
    question: Option<&str>,
) -> Value {
    let mut f = serde_json::Map::new();
    if let Some(h) = hypothesis {
        f.insert("Hypothesis".into(), json!(h));
    }
    if !conflicts.is_empty() {
        f.insert("Conflicts".into(), json!(conflicts));
    }
    if let Some(q) = question {
        f.insert("Question".into(), json!(q));
    }
    json!({"UserID": user, "Feedback": f})
}

fn hypothesis(r: &Value, statement: &str) -> (f64, String) {
    let h = r["RefinedUserState"]["Hypotheses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["Statement"] == statement)
        .unwrap_or_else(|| panic!("no hypothesis {statement} in {r:#}"));
    (
        h["Confidence"].as_f64().unwrap(),
        h["Status"].as_str().unwrap().to_owned(),
    )
}

/// A dialogue in which the refined state visibly evolves, turn by turn.
async fn state_evolves(transport: Transport, generation: Generation) {
    let server = Server::start_in(transport, generation, &["usr"]).await;
    let mut d = dialogue(&server).await;

    // Turn 0: a hypothesis the baseline supports.
    let r = d
        .send(feedback(
            "User#Ana",
            Some("wants to attend the concert"),
            &[],
            None,
        ))
        .await
        .response();
    assert_eq!(r["Outcome"], "answered");
    assert_eq!(
        hypothesis(&r, "wants to attend the concert"),
        (0.7, "supported".into())
    );
    assert_eq!(
        r["Engagement"],
        json!({"Level": 0.6, "Mode": "interactive"})
    );
    assert_eq!(
        r["Provenance"]["Sources"],
        json!(["baseline User#Ana (users file)", "Feedback.Hypothesis"])
    );

    // Turn 1: the same hypothesis, supported again, rises; the state carries over.
    let r = d
        .send(feedback(
            "User#Ana",
            Some("wants to attend the concert"),
            &[],
            None,
        ))
        .await
        .response();
    assert_eq!(hypothesis(&r, "wants to attend the concert").0, 0.9);
    assert_eq!(r["Provenance"]["Sources"][0], "the state refined at turn 0");
    assert_eq!(r["RefinedUserState"]["Cycle"], 2);

    // Turn 2: conflicting evidence lowers it and moves the engagement.
    let r = d
        .send(feedback(
            "User#Ana",
            Some("wants to attend the concert"),
            &["She looked away", "checked the time"],
            None,
        ))
        .await
        .response();
    // 0.9 + 0.2 (capped 0.95) - 0.2 - 0.2 = 0.55
    assert_eq!(
        hypothesis(&r, "wants to attend the concert"),
        (0.55, "open".into())
    );
    assert_eq!(r["Engagement"], json!({"Level": 0.35, "Mode": "passive"}));
    assert_eq!(r["RefinedUserState"]["CognitiveState"], "hurried");
    let evidence: Vec<&str> = r["Provenance"]["Evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(evidence.iter().any(|e| e.contains("She looked away (looked away): Engagement Level 0.60 -> 0.40, Mode interactive -> passive")), "{evidence:#?}");

    // Turn 3: more conflict rejects it; the intention is dropped from the state.
    let r = d
        .send(feedback(
            "User#Ana",
            Some("wants to attend the concert"),
            &["walked away", "yawned"],
            Some("What does she want?"),
        ))
        .await
        .response();
    assert_eq!(hypothesis(&r, "wants to attend the concert").1, "rejected");
    let intentions = r["RefinedUserState"]["Intentions"].as_array().unwrap();
    assert!(intentions.is_empty(), "{intentions:?}");
    assert_eq!(r["Engagement"]["Mode"], "passive");
    assert!(
        r["RefinedUserState"]["Answer"]["Text"]
            .as_str()
            .unwrap()
            .starts_with("Intentions: none")
    );

    // Turn 4: no UserID: the dialogue's User is meant.
    let r = d
        .send(json!({"Feedback": {"Question": "Is she engaged?"}}))
        .await
        .response();
    assert_eq!(r["RefinedUserState"]["UserID"], "User#Ana");
    assert_eq!(
        r["RefinedUserState"]["Answer"]["Text"],
        "Engagement is 0.00 (passive)"
    );
}

#[tokio::test]
async fn state_evolves_over_stdio() {
    for generation in Generation::BOTH {
        state_evolves(Transport::Stdio, generation).await;
    }
}

#[tokio::test]
async fn state_evolves_over_http() {
    for generation in Generation::BOTH {
        state_evolves(Transport::Http, generation).await;
    }
}

async fn supporting_versus_conflicting(transport: Transport, generation: Generation) {
    let server = Server::start_in(transport, generation, &["usr"]).await;
    let mut supported = dialogue(&server).await;
    let mut conflicted = dialogue(&server).await;
    let s = supported
        .send(feedback("User#Ben", Some("Emotion is calm"), &[], None))
        .await
        .response();
    let c = conflicted
        .send(feedback(
            "User#Ben",
            Some("Emotion is calm"),
            &["frowned"],
            None,
        ))
        .await
        .response();
    assert_eq!(hypothesis(&s, "Emotion is calm"), (0.7, "supported".into()));
    assert_eq!(hypothesis(&c, "Emotion is calm"), (0.5, "open".into()));
    assert_eq!(s["RefinedUserState"]["Emotion"], "calm");
    assert_eq!(c["RefinedUserState"]["Emotion"], "annoyed");
    // A hypothesis the state contradicts starts low.
    let r = conflicted
        .send(feedback("User#Ben", Some("Emotion is calm"), &[], None))
        .await
        .response();
    assert_eq!(hypothesis(&r, "Emotion is calm"), (0.3, "rejected".into()));
    // Two sessions never share state: the first still has Ben calm.
    let r = supported
        .send(feedback("User#Ben", None, &[], Some("How does he feel?")))
        .await
        .response();
    assert_eq!(r["RefinedUserState"]["Answer"]["Text"], "Emotion is calm");
}

#[tokio::test]
async fn supporting_versus_conflicting_over_stdio() {
    for generation in Generation::BOTH {
        supporting_versus_conflicting(Transport::Stdio, generation).await;
    }
}

#[tokio::test]
async fn supporting_versus_conflicting_over_http() {
    for generation in Generation::BOTH {
        supporting_versus_conflicting(Transport::Http, generation).await;
    }
}

async fn outcomes_and_bad_requests(transport: Transport, generation: Generation) {
    let server = Server::start_in(transport, generation, &["usr"]).await;
    let mut d = dialogue(&server).await;
    let r = d
        .send(feedback("User#Anna", Some("Emotion is curious"), &[], None))
        .await
        .response();
    assert_eq!(r["Outcome"], "not_answered");
    let why = r["Provenance"]["Evidence"][0].as_str().unwrap();
    assert!(
        why.contains("User#Anna is not a User") && why.contains("Did you mean User#Ana?"),
        "{why}"
    );
    assert!(r.get("RefinedUserState").is_none());

    let r = d.send(json!({"Feedback": {}})).await.response();
    assert_eq!(r["Outcome"], "not_answered", "no User named yet: {r:#}");

    let r = d
        .send(feedback(
            "User#Chloe",
            Some("seems fine"),
            &["danced"],
            Some("What is the weather?"),
        ))
        .await
        .response();
    assert_eq!(r["Outcome"], "partially_answered");
    let unused = r["Provenance"]["Evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e.as_str().unwrap().starts_with("unused:"))
        .count();
    assert_eq!(unused, 3);

    let error = d.send(json!({"UserID": 5})).await.tool_error();
    assert!(
        error.contains("/UserID: UserID must be a string"),
        "{error}"
    );
    let error = d
        .send(json!({"Feedback": {"Conflicts": "frowned"}}))
        .await
        .tool_error();
    assert!(error.contains("/Feedback/Conflicts"), "{error}");
    let error = d
        .send(json!({"Header": "PGM-KDA-V1.0", "Kind": "constraints"}))
        .await
        .tool_error();
    assert!(
        error.contains("/Header: Header is PGM-KDA-V1.0 (BKN-DAC) but this is a BKN-USR exchange"),
        "{error}"
    );
    d.next_turn = 0;
    let error = d
        .send(feedback("User#Ana", None, &[], None))
        .await
        .tool_error();
    assert!(error.contains("/TurnIndex"), "{error}");
}

#[tokio::test]
async fn outcomes_and_bad_requests_over_stdio() {
    for generation in Generation::BOTH {
        outcomes_and_bad_requests(Transport::Stdio, generation).await;
    }
}

#[tokio::test]
async fn outcomes_and_bad_requests_over_http() {
    for generation in Generation::BOTH {
        outcomes_and_bad_requests(Transport::Http, generation).await;
    }
}

#[tokio::test]
async fn users_are_resources() {
    for (transport, generation) in [Transport::Stdio, Transport::Http]
        .into_iter()
        .flat_map(|t| Generation::BOTH.map(|g| (t, g)))
    {
        let server = Server::start_in(transport, generation, &["usr"]).await;
        let client = server.session().await;
        let uris: Vec<String> = client
            .list_all_resources()
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(
            uris,
            [
                "usr://users",
                "usr://users/User#Ana",
                "usr://users/User#Ben",
                "usr://users/User#Chloe",
                "usr://cues"
            ]
        );
        let read = client
            .read_resource(ReadResourceRequestParams::new("usr://users/User#Ben"))
            .await
            .unwrap();
        let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0]
        else {
            panic!("text expected")
        };
        let ben: Value = serde_json::from_str(text).unwrap();
        assert_eq!(ben["State"]["Engagement"]["Mode"], "directive");
    }
}

#[test]
fn a_users_file_with_mistakes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("users.json");
    let mut users: Value =
        serde_json::from_str(bkn_explorer::server::usr::users::DEFAULT_USERS).unwrap();
    users["Users"][0]["State"]["Engagement"]["Mode"] = json!("eager");
    std::fs::write(&path, users.to_string()).unwrap();
    let out = std::process::Command::new(common::bin())
        .args(["serve", "usr", "--users"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mistake in the users file")
            && stderr.contains("/Users/0/State/Engagement/Mode"),
        "{stderr}"
    );
}
