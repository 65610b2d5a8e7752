//! BKN-USR: the Response's own shapes (Engagement in range, RefinedUserState an object,
//! Provenance `{Sources, Method, Evidence?}`: MCP-BINDING section 6, judged by the schema),
//! and the refined User State carried from turn to turn within a dialogue and never across
//! dialogues.

use crate::certify::probe::{Ctx, Probe, Sent, stable};
use crate::certify::tools::{SHAPE_CHECKS, battery, usr_cue, usr_user};
use crate::client::generation::StateHome;
use serde_json::{Value, json};

/// The members of a BKN-USR Response this family judges (`shapes.every-kind` leaves them).
pub const OWN: &[&str] = &["/RefinedUserState", "/Engagement", "/Provenance"];

pub fn is_own(pointer: &str) -> bool {
    OWN.iter()
        .any(|o| pointer == *o || pointer.starts_with(&format!("{o}/")))
}

pub async fn shapes(ctx: &Ctx, p: &mut Probe) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let mut seen = 0;
    for (name, fields) in battery(ctx) {
        let sent = d.send(p, fields).await;
        if !p.answered(&sent, &format!("the Request with {name}")) {
            continue;
        }
        p.checked += 1;
        for f in &sent.turn.findings {
            if SHAPE_CHECKS.contains(&f.finding.check) && is_own(&f.finding.pointer) {
                p.problems.push(format!("{name}: {}", f.finding));
            }
        }
        if OWN.iter().any(|o| sent.get(o).is_some()) {
            seen += 1;
        }
    }
    if seen == 0 {
        p.skip("no Response carried RefinedUserState, Engagement or Provenance");
    }
    d.close().await;
}

fn feedback(ctx: &Ctx) -> Value {
    json!({"UserID": usr_user(ctx), "Feedback": {"Hypothesis": "wants to rest"}})
}

fn conflicting(ctx: &Ctx) -> Value {
    json!({"UserID": usr_user(ctx), "Feedback": {"Hypothesis": "wants to rest", "Conflicts": [usr_cue(ctx)]}})
}

fn state(sent: &Sent) -> Option<Value> {
    sent.get("/RefinedUserState").map(stable)
}

/// The state a fresh dialogue gives for `feedback`, or None (the rule then has failed).
async fn fresh(ctx: &Ctx, p: &mut Probe, label: &str) -> Option<Sent> {
    let mut d = p.open(ctx, label).await?;
    let sent = d.send(p, feedback(ctx)).await;
    d.close().await;
    p.answered(&sent, &format!("dialogue {label}'s feedback"))
        .then_some(sent)
}

pub async fn carried(ctx: &Ctx, p: &mut Probe) {
    let Some(baseline) = fresh(ctx, p, "fresh").await else {
        return;
    };
    let Some(mut a) = p.open(ctx, "A").await else {
        return;
    };
    let first = a.send(p, conflicting(ctx)).await;
    let second = a.send(p, feedback(ctx)).await;
    a.close().await;
    if !(p.answered(&first, "dialogue A's conflicting evidence")
        && p.answered(&second, "dialogue A's next feedback"))
    {
        return;
    }
    if state(&first).is_none() {
        p.skip("the server returns no RefinedUserState");
        return;
    }
    if state(&first) == state(&baseline) {
        p.skip(format!(
            "the conflicting evidence ({:?}) changed nothing in the refined User State, so there is nothing to carry",
            usr_cue(ctx)
        ));
        return;
    }
    p.check(state(&second) != state(&baseline), || {
        "the turn after the conflicting evidence is refined as if it were the dialogue's first: the state of the earlier turn was not carried".into()
    });
}

pub async fn isolation(ctx: &Ctx, p: &mut Probe) {
    let Some(baseline) = fresh(ctx, p, "fresh").await else {
        return;
    };
    let Some(mut a) = p.open(ctx, "A").await else {
        return;
    };
    let first = a.send(p, conflicting(ctx)).await;
    if !p.answered(&first, "dialogue A's conflicting evidence") {
        a.close().await;
        return;
    }
    if state(&first) == state(&baseline) {
        p.skip("the conflicting evidence changed nothing in the refined User State, so nothing could pass to another dialogue");
        a.close().await;
        return;
    }
    // B while A is open: over 2026-07-28 on A's connection (kept by DialogID), else a
    // session of its own.
    let b = if ctx.learnt.state_home == Some(StateHome::DialogId) {
        let mut request = a.filled_at(feedback(ctx), 0);
        request["DialogID"] = json!(uuid::Uuid::new_v4().to_string());
        a.send_as(p, request, "B").await
    } else {
        let Some(mut b) = p.open(ctx, "B").await else {
            a.close().await;
            return;
        };
        let sent = b.send(p, feedback(ctx)).await;
        b.close().await;
        sent
    };
    a.close().await;
    if p.answered(&b, "dialogue B's feedback") {
        p.check(state(&b) == state(&baseline), || {
            "dialogue B, opened while dialogue A was refined, is refined otherwise than a fresh dialogue: A's state passed to it".into()
        });
    }
}
