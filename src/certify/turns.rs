//! Correlation and turns (MCP-BINDING section 3): what a Response copies, the TurnIndex
//! order (repeats and going back refused, gaps allowed), the DialogID binding, and a refused
//! Request changing nothing (section 2).

use crate::certify::probe::{Ctx, Probe};
use crate::certify::tools::{FREE_FACT, battery};
use crate::client::generation::StateHome;
use crate::protocol::Interface;
use crate::protocol::conformance::Check;
use serde_json::{Value, json};

const CORRELATION: &[Check] = &[
    Check::ExchangeRequestId,
    Check::ExchangeQueryId,
    Check::ExchangeDialogId,
    Check::ExchangeTurnIndex,
    Check::ExchangeIdentification,
    Check::ExchangeInterface,
    Check::ExchangeMode,
    Check::QueryIdUnique,
    Check::UnmatchedResponse,
    Check::DuplicateResponse,
];

/// The plainest Request of the interface.
pub fn plain(ctx: &Ctx) -> Value {
    battery(ctx).swap_remove(0).1
}

pub async fn copied(ctx: &Ctx, p: &mut Probe) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    for (name, fields) in battery(ctx) {
        let sent = d.send(p, fields).await;
        if p.answered(&sent, &format!("the {name} Request")) {
            p.judged(&sent, CORRELATION);
        }
    }
    d.close().await;
}

/// Sends `plain` at each TurnIndex of `accepted`, then at `refused`, which must be refused.
async fn order(ctx: &Ctx, p: &mut Probe, accepted: &[u64], refused: u64, what: &str) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    for &t in accepted {
        let request = d.filled_at(plain(ctx), t);
        let sent = d.send_prepared(p, request, true).await;
        if !p.answered(&sent, &format!("TurnIndex {t}")) {
            d.close().await;
            return;
        }
    }
    let request = d.filled_at(plain(ctx), refused);
    let sent = d.send_prepared(p, request, true).await;
    p.refused(&sent, what);
    d.close().await;
}

pub async fn repeat(ctx: &Ctx, p: &mut Probe) {
    order(ctx, p, &[0, 1], 1, "TurnIndex 1 given again").await;
}

pub async fn back(ctx: &Ctx, p: &mut Probe) {
    order(ctx, p, &[0, 2], 1, "TurnIndex 1 after 2").await;
}

pub async fn gap(ctx: &Ctx, p: &mut Probe) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    for t in [0, 5, 6] {
        let request = d.filled_at(plain(ctx), t);
        let sent = d.send_prepared(p, request, true).await;
        if !p.answered(&sent, &format!("TurnIndex {t} (after a gap)")) {
            break;
        }
    }
    d.close().await;
}

pub async fn dialog_id(ctx: &Ctx, p: &mut Probe) {
    if ctx.learnt.state_home != Some(StateHome::McpSession) {
        p.skip(format!(
            "the server speaks MCP {}, where another DialogID names another dialogue (kept by DialogID), which the server may take; the DialogID binding of an MCP session is checked over 2025-11-25",
            ctx.learnt.protocol
        ));
        return;
    }
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let first = d.send(p, plain(ctx)).await;
    if !p.answered(&first, "the first Request") {
        d.close().await;
        return;
    }
    let mut other = d.filled_at(plain(ctx), 1);
    other["DialogID"] = json!(format!("certify-other-{}", uuid::Uuid::new_v4()));
    let sent = d.send_prepared(p, other, true).await;
    p.refused(
        &sent,
        "a Request with another DialogID in the same MCP session",
    );
    let again = d.send(p, plain(ctx)).await;
    p.answered(&again, "the next Request with the session's DialogID");
    d.close().await;
}

pub async fn rejected(ctx: &Ctx, p: &mut Probe) {
    let dac = ctx.interface == Interface::Dac;
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let mut first = plain(ctx);
    if dac {
        first["Commitments"] = json!([{"CommitmentID": "certify-kept", "Statement": FREE_FACT}]);
    }
    let sent = d.send(p, first).await;
    if !p.answered(&sent, "the first Request") {
        d.close().await;
        return;
    }
    let mut bad = plain(ctx);
    bad["CertifyBogus"] = json!(true);
    if dac {
        bad["Commitments"] = json!([{"CommitmentID": "certify-refused", "Statement": "Certify#Other certifies Certify#Thing"}]);
        bad["ReleasedCommitmentIDs"] = json!(["certify-kept"]);
    }
    let bad = d.filled_at(bad, 1);
    let sent = d.send_prepared(p, bad, true).await;
    if !p.refused(&sent, "a non-conformant Request (an unknown property)") {
        d.close().await;
        return;
    }
    let next = d.filled_at(plain(ctx), 1);
    let sent = d.send_prepared(p, next, true).await;
    if p.answered(
        &sent,
        "the Request after the refused one, at the TurnIndex the refused one had",
    ) && dac
    {
        p.check(sent.commitment("certify-refused").is_none(), || {
            "commitment certify-refused of the refused Request is listed afterwards".into()
        });
        p.check(
            sent.commitment("certify-kept").as_deref() == Some("retained"),
            || {
                format!(
                    "commitment certify-kept, released only by the refused Request, is {} afterwards, not retained",
                    sent.commitment("certify-kept")
                        .unwrap_or_else(|| "not listed".into())
                )
            },
        );
    }
    d.close().await;
}
