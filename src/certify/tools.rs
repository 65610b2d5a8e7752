//! Tools and shapes (MCP-BINDING sections 1, 2 and 6, and the data types' Conformance
//! Testing: a message validates against its schema, with the properties of its mode and
//! none of the other's).

use crate::certify::probe::{Ctx, Probe};
use crate::client::turn::Subject;
use crate::protocol::Interface;
use crate::protocol::conformance::{Check, Finding};
use serde_json::{Value, json};

/// The judge's checks of one message on its own: its schema and mode rule, I-JSON. (The
/// feasibility and commitment rules of a message have rules of their own.)
pub const SHAPE_CHECKS: &[Check] = &[
    Check::NotAnObject,
    Check::HeaderValue,
    Check::HeaderInterface,
    Check::ModeValue,
    Check::ForeignProperty,
    Check::Required,
    Check::Type,
    Check::Enum,
    Check::Range,
    Check::Format,
    Check::Length,
    Check::UnknownProperty,
    Check::Items,
    Check::Pattern,
    Check::Shape,
    Check::DuplicateMember,
    Check::NumberRange,
];

/// A Commitment statement about things no domain knows: never contradicted by the domain.
pub const FREE_FACT: &str = "Certify#Subject certifies Certify#Object";

/// One conformant Request of each Kind (BKN-DAC) or a few typical ones (BKN-USR), built from
/// what the server publishes; named for the report.
pub fn battery(ctx: &Ctx) -> Vec<(String, Value)> {
    let l = &ctx.learnt;
    match ctx.interface {
        Interface::Dac => {
            let item = l
                .placed()
                .first()
                .map(|(i, _)| i.to_string())
                .or_else(|| l.items.keys().next().cloned())
                .unwrap_or_else(|| "Certify#Unknown".into());
            let term = l
                .items
                .get(&item)
                .and_then(|i| i.class.clone())
                .unwrap_or_else(|| "thing".into());
            let space = l.spaces.first().map(|s| s.id.clone());
            let location = l.locations().next().map(|x| x.id.clone());
            let with_space = |mut v: Value| {
                if let Some(s) = &space {
                    v["Space"] = json!({"SpaceID": s});
                }
                v
            };
            let statement = match &location {
                Some(loc) => format!("MM-Move Nil {item} To {loc}"),
                None => format!("MM-Move Nil {item} To MLoc:Certify.Nowhere"),
            };
            vec![
                (
                    "semantic_grounding".into(),
                    json!({"Kind": "semantic_grounding", "Question": format!("What is a {term}?"), "Terms": [{"Text": term}]}),
                ),
                (
                    "affordances".into(),
                    with_space(json!({"Kind": "affordances", "EntityIDs": [item]})),
                ),
                (
                    "constraints".into(),
                    with_space(json!({"Kind": "constraints", "EntityIDs": [item]})),
                ),
                (
                    "behavioural_expectations".into(),
                    with_space(json!({"Kind": "behavioural_expectations", "EntityIDs": [item]})),
                ),
                (
                    "clarification".into(),
                    json!({"Kind": "clarification", "Question": "Which one is meant?", "Terms": [{"Text": term}], "EntityIDs": [item]}),
                ),
                (
                    "feasibility".into(),
                    with_space(
                        json!({"Kind": "feasibility", "ProcessActions": [{"Step": 1, "Statement": statement}]}),
                    ),
                ),
                (
                    "commitment".into(),
                    json!({"Kind": "commitment", "Commitments": [{"CommitmentID": "certify-battery", "Statement": FREE_FACT}]}),
                ),
            ]
        }
        Interface::Usr => {
            let user = usr_user(ctx);
            vec![
                (
                    "a hypothesis and a question".into(),
                    json!({"UserID": user, "Feedback": {"Hypothesis": "wants to rest", "Question": "What does the user want?"}}),
                ),
                (
                    "conflicting evidence".into(),
                    json!({"UserID": user, "Feedback": {"Hypothesis": "wants to rest", "Conflicts": [usr_cue(ctx)]}}),
                ),
                (
                    "an unknown User".into(),
                    json!({"UserID": "User#CertifyNobody", "Feedback": {"Hypothesis": "wants to leave"}}),
                ),
            ]
        }
    }
}

/// The User the BKN-USR rules speak of: the first published, else a made-up one.
pub fn usr_user(ctx: &Ctx) -> String {
    ctx.learnt
        .users
        .first()
        .cloned()
        .unwrap_or_else(|| "User#Certify".into())
}

/// A piece of conflicting evidence: a published cue, else words most refiners know.
pub fn usr_cue(ctx: &Ctx) -> String {
    ctx.learnt
        .cues
        .first()
        .cloned()
        .unwrap_or_else(|| "looked away".into())
}

pub async fn found_by_header(ctx: &Ctx, p: &mut Probe) {
    let l = &ctx.learnt;
    p.check(l.by_header, || {
        format!(
            "the {} tool {} was found by its name only: its inputSchema has no \"Header\": {{\"const\": \"{}\"}}",
            ctx.interface.name(),
            l.tool,
            ctx.interface.header()
        )
    });
}

pub async fn output_schema(ctx: &Ctx, p: &mut Probe) {
    p.checked += 1;
    for f in &ctx.learnt.tool_findings {
        if f.check == Check::OutputSchema {
            p.problems.push(f.to_string());
        }
    }
}

/// Sends the battery, one Request a turn in one dialogue, and judges each answer: the
/// Response's findings that `counts` takes are problems; a Request of the battery refused
/// or unanswered is one too.
async fn battery_judged(ctx: &Ctx, p: &mut Probe, counts: impl Fn(&Finding) -> bool) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    for (name, fields) in battery(ctx) {
        let sent = d.send(p, fields).await;
        if p.answered(&sent, &format!("the {name} Request")) {
            p.checked += 1;
            for f in &sent.turn.findings {
                if f.on == Subject::Response && counts(&f.finding) {
                    p.problems
                        .push(format!("the {name} Request: {}", f.finding));
                }
            }
        }
    }
    d.close().await;
}

pub async fn every_kind(ctx: &Ctx, p: &mut Probe) {
    // BKN-USR's own members (RefinedUserState, Engagement, Provenance) are usr.response-shapes'.
    let usr = ctx.interface == Interface::Usr;
    battery_judged(ctx, p, |f| {
        SHAPE_CHECKS.contains(&f.check) && !(usr && crate::certify::usr::is_own(&f.pointer))
    })
    .await;
}

pub async fn structured(ctx: &Ctx, p: &mut Probe) {
    battery_judged(ctx, p, |f| {
        matches!(f.check, Check::StructuredContent | Check::TextBlock)
    })
    .await;
}

/// Non-conformant Requests (an unknown property; a Response's property; the wrong Mode) get
/// a tool error whose text names each violation's pointer.
pub async fn tool_error(ctx: &Ctx, p: &mut Probe) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let base = battery(ctx).swap_remove(0).1;
    let cases: Vec<(&str, &str, Value)> = vec![
        ("an unknown property", "/CertifyBogus", {
            let mut v = base.clone();
            v["CertifyBogus"] = json!(1);
            v
        }),
        ("a Response's property (Outcome)", "/Outcome", {
            let mut v = base.clone();
            v["Outcome"] = json!("answered");
            v
        }),
        ("the wrong Mode", "/Mode", {
            let mut v = base.clone();
            v["Mode"] = json!("RS");
            v
        }),
    ];
    for (what, pointer, fields) in cases {
        let sent = d.send(p, fields).await;
        if !p.refused(&sent, &format!("a Request with {what}")) {
            continue;
        }
        let text = sent.tool_error().unwrap_or_default();
        p.check(
            text.lines().any(|l| {
                l.trim_start().starts_with(pointer)
                    && l.trim_start()[pointer.len()..].starts_with(':')
            }),
            || {
                format!(
                    "the tool error for a Request with {what} does not list the violation as \"{pointer}: message\": {:?}",
                    text.chars().take(300).collect::<String>()
                )
            },
        );
    }
    d.close().await;
}
