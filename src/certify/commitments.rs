//! Commitments (MCP-BINDING section 4): retain, release, restate, conflicts (with a
//! retained commitment, within one Request, with the domain), unknown releases, opaque
//! statements, a Clash from a retained commitment, and isolation between two dialogues.
//! The judge's dialogue checks (statuses kept in every later Response, nothing listed that
//! was never seen, never two contradicting retained) are each counted by the rule whose
//! dialogue provokes them; the statuses asked for are checked here.

use crate::certify::feasibility::{find_move, plan};
use crate::certify::probe::{Ctx, Dlg, Probe, Sent};
use crate::certify::tools::FREE_FACT;
use crate::protocol::conformance::Check;
use serde_json::{Value, json};

fn commit(id: &str, statement: &str) -> Value {
    json!({"Kind": "commitment", "Commitments": [{"CommitmentID": id, "Statement": statement}]})
}

fn releasing(ids: &[&str]) -> Value {
    json!({"Kind": "commitment", "ReleasedCommitmentIDs": ids})
}

/// A Request of another Kind, which must still report every commitment.
fn other_kind(ctx: &Ctx) -> Value {
    crate::certify::turns::plain(ctx)
}

/// `id` has `status` in `sent`.
fn status(p: &mut Probe, sent: &Sent, id: &str, status: &str, when: &str) {
    if !p.answered(sent, when) {
        return;
    }
    let got = sent.commitment(id);
    p.check(got.as_deref() == Some(status), || {
        format!(
            "{when}: commitment {id} is {}, not {status}",
            got.as_deref().unwrap_or("not listed")
        )
    });
}

/// Sends and judges with `checks`.
async fn send(d: &mut Dlg, p: &mut Probe, fields: Value, checks: &[Check]) -> Sent {
    let sent = d.send(p, fields).await;
    if sent.is_response() {
        p.judged(&sent, checks);
    }
    sent
}

pub async fn retain(ctx: &Ctx, p: &mut Probe) {
    let checks = [
        Check::CommitmentRetained,
        Check::CommitmentMissing,
        Check::CommitmentListedTwice,
    ];
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let sent = send(&mut d, p, commit("certify-1", FREE_FACT), &checks).await;
    status(
        p,
        &sent,
        "certify-1",
        "retained",
        "the Request that commits it",
    );
    for n in 0..2 {
        let sent = send(&mut d, p, other_kind(ctx), &checks).await;
        status(
            p,
            &sent,
            "certify-1",
            "retained",
            &format!("later Request {} of another Kind", n + 1),
        );
    }
    d.close().await;
}

pub async fn release(ctx: &Ctx, p: &mut Probe) {
    let checks = [Check::CommitmentReleased, Check::CommitmentMissing];
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let sent = send(&mut d, p, commit("certify-1", FREE_FACT), &checks).await;
    if !p.answered(&sent, "the Request that commits certify-1") {
        d.close().await;
        return;
    }
    let sent = send(&mut d, p, releasing(&["certify-1"]), &checks).await;
    status(
        p,
        &sent,
        "certify-1",
        "released",
        "the Request that releases it",
    );
    let sent = send(&mut d, p, other_kind(ctx), &checks).await;
    status(p, &sent, "certify-1", "released", "a later Request");
    d.close().await;
}

pub async fn restate(ctx: &Ctx, p: &mut Probe) {
    let checks = [Check::CommitmentMissing, Check::CommitmentRetained];
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    for fields in [commit("certify-1", FREE_FACT), releasing(&["certify-1"])] {
        let sent = d.send(p, fields).await;
        if !p.answered(&sent, "committing and releasing certify-1") {
            d.close().await;
            return;
        }
    }
    let sent = send(&mut d, p, commit("certify-1", FREE_FACT), &checks).await;
    status(
        p,
        &sent,
        "certify-1",
        "retained",
        "the Request that states it again",
    );
    let sent = send(&mut d, p, other_kind(ctx), &checks).await;
    status(p, &sent, "certify-1", "retained", "a later Request");
    d.close().await;
}

/// `S not P O` of a triple `S P O`.
fn negation(statement: &str) -> String {
    let mut words = statement.splitn(2, ' ');
    let s = words.next().unwrap_or_default();
    format!("{s} not {}", words.next().unwrap_or_default())
}

pub async fn conflict_retained(ctx: &Ctx, p: &mut Probe) {
    let checks = [Check::CommitmentContradiction];
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let sent = send(&mut d, p, commit("certify-1", FREE_FACT), &checks).await;
    status(
        p,
        &sent,
        "certify-1",
        "retained",
        "the Request that commits it",
    );
    let sent = send(
        &mut d,
        p,
        commit("certify-2", &negation(FREE_FACT)),
        &checks,
    )
    .await;
    status(
        p,
        &sent,
        "certify-2",
        "conflicting",
        "its contradiction, committed later",
    );
    status(
        p,
        &sent,
        "certify-1",
        "retained",
        "its contradiction, committed later",
    );
    let sent = send(&mut d, p, other_kind(ctx), &checks).await;
    status(p, &sent, "certify-2", "conflicting", "a later Request");
    d.close().await;
}

pub async fn conflict_in_request(ctx: &Ctx, p: &mut Probe) {
    let checks = [Check::CommitmentContradiction];
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let both = json!({"Kind": "commitment", "Commitments": [
        {"CommitmentID": "certify-1", "Statement": FREE_FACT},
        {"CommitmentID": "certify-2", "Statement": negation(FREE_FACT)},
    ]});
    let sent = send(&mut d, p, both, &checks).await;
    if p.answered(&sent, "one Request with a statement and its contradiction") {
        let (a, b) = (sent.commitment("certify-1"), sent.commitment("certify-2"));
        let said = || {
            format!(
                "{}, {}",
                status_said("certify-1", a.as_deref()),
                status_said("certify-2", b.as_deref())
            )
        };
        p.check(
            a.is_some() && b.is_some() && (a.as_deref(), b.as_deref()) != (Some("retained"), Some("retained")),
            || format!("a statement and its contradiction in one Request: {}; one of them is conflicting", said()),
        );
        p.check(
            [&a, &b].iter().any(|s| s.as_deref() == Some("conflicting")),
            || format!("neither a statement nor its contradiction, given in one Request, is conflicting ({})", said()),
        );
    }
    d.close().await;
}

/// A commitment's status as a verdict says it: its Status, or that the Response's
/// CommitmentStatus does not list it (a server that answers without CommitmentStatus).
fn status_said(id: &str, status: Option<&str>) -> String {
    match status {
        Some(s) => format!("{id} is {s}"),
        None => format!("{id} is not in the Response's CommitmentStatus"),
    }
}

pub async fn conflict_domain(ctx: &Ctx, p: &mut Probe) {
    let Some((s, pr, o)) = ctx.learnt.relations.first().cloned() else {
        p.skip("the domain publishes no Relations, so no statement is known to contradict it");
        return;
    };
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let statement = format!("{s} not {pr} {o}");
    let sent = d.send(p, commit("certify-1", &statement)).await;
    status(
        p,
        &sent,
        "certify-1",
        "conflicting",
        &format!("\"{statement}\", against the published relation \"{s} {pr} {o}\""),
    );
    d.close().await;
}

pub async fn unknown_release(ctx: &Ctx, p: &mut Probe) {
    let checks = [Check::CommitmentUnknown];
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let sent = send(&mut d, p, commit("certify-1", FREE_FACT), &checks).await;
    status(
        p,
        &sent,
        "certify-1",
        "retained",
        "the Request that commits it",
    );
    let sent = send(&mut d, p, releasing(&["certify-never-seen"]), &checks).await;
    if p.answered(&sent, "the Request that releases an unknown ID") {
        p.check(sent.commitment("certify-never-seen").is_none(), || {
            "the unknown CommitmentID released is listed".into()
        });
        status(
            p,
            &sent,
            "certify-1",
            "retained",
            "the Request that releases an unknown ID",
        );
    }
    d.close().await;
}

pub async fn opaque(ctx: &Ctx, p: &mut Probe) {
    let checks = [Check::CommitmentOpaqueConflicting];
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    // Fewer than three words, or `not` in capitals: not triples (MCP-BINDING section 4), so
    // neither conflicts with the other nor with the triple they seem to deny.
    let texts = [
        ("certify-1", "agreed"),
        ("certify-2", "not agreed"),
        ("certify-3", "Certify#Subject NOT certifies Certify#Object"),
    ];
    let sent = send(&mut d, p, commit("certify-0", FREE_FACT), &checks).await;
    status(p, &sent, "certify-0", "retained", "a triple");
    for (id, text) in texts {
        let sent = send(&mut d, p, commit(id, text), &checks).await;
        status(
            p,
            &sent,
            id,
            "retained",
            &format!("the opaque statement \"{text}\""),
        );
    }
    d.close().await;
}

pub async fn clash(ctx: &Ctx, p: &mut Probe) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let m = match find_move(ctx, p, &mut d).await {
        Ok(m) => m,
        Err(why) => {
            p.skip(why);
            d.close().await;
            return;
        }
    };
    let fact = format!("{} locatedAt {}", m.item, m.from);
    let sent = d.send(p, commit("certify-here", &fact)).await;
    status(
        p,
        &sent,
        "certify-here",
        "retained",
        &format!("\"{fact}\", true in the domain"),
    );
    let sent = d.send(p, plan(Some(&m.space), &[(1, m.statement())])).await;
    crate::certify::feasibility::expect(
        p,
        &sent,
        &[(1, "Clash", "a move that breaks the retained commitment")],
    );
    let sent = d.send(p, releasing(&["certify-here"])).await;
    status(p, &sent, "certify-here", "released", "its release");
    let sent = d.send(p, plan(Some(&m.space), &[(1, m.statement())])).await;
    crate::certify::feasibility::expect(
        p,
        &sent,
        &[(1, "Ack", "the same move once the commitment is released")],
    );
    d.close().await;
}

pub async fn isolation(ctx: &Ctx, p: &mut Probe) {
    use crate::client::generation::StateHome;
    let Some(mut a) = p.open(ctx, "A").await else {
        return;
    };
    // Over 2026-07-28 both dialogues go over one connection (the server keys them by
    // DialogID: a stdio server is one process for both); over 2025-11-25 each dialogue is an
    // MCP session of its own.
    let shared = ctx.learnt.state_home == Some(StateHome::DialogId);
    let mut b = if shared {
        None
    } else {
        match p.open(ctx, "B").await {
            Some(b) => Some(b),
            None => {
                a.close().await;
                return;
            }
        }
    };
    let b_id = uuid::Uuid::new_v4().to_string();
    let sent = a.send(p, commit("certify-a", FREE_FACT)).await;
    status(p, &sent, "certify-a", "retained", "dialogue A's commitment");
    let fields = commit("certify-b", &negation(FREE_FACT));
    let sent = match &mut b {
        Some(b) => b.send(p, fields).await,
        None => {
            let mut request = a.filled_at(fields, 0);
            request["DialogID"] = json!(b_id);
            a.send_as(p, request, "B").await
        }
    };
    if p.answered(&sent, "dialogue B's first Request") {
        p.check(sent.commitment("certify-a").is_none(), || {
            "dialogue B's Response lists dialogue A's commitment certify-a".into()
        });
        status(
            p,
            &sent,
            "certify-b",
            "retained",
            "dialogue B's commitment, which contradicts only dialogue A's",
        );
    }
    let sent = a.send(p, other_kind(ctx)).await;
    if p.answered(&sent, "dialogue A's next Request") {
        p.check(sent.commitment("certify-b").is_none(), || {
            "dialogue A's Response lists dialogue B's commitment certify-b".into()
        });
        status(
            p,
            &sent,
            "certify-a",
            "retained",
            "dialogue A's next Request",
        );
    }
    a.close().await;
    if let Some(b) = b {
        b.close().await;
    }
}
