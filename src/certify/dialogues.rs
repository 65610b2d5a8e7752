//! Dialogues and generations (MCP-BINDING section 3): where a dialogue's state lives in each
//! MCP generation, a later turn of a dialogue the server does not hold, and the same
//! Requests answered alike in both generations.

use crate::certify::probe::{Ctx, Dlg, Probe, stable};
use crate::certify::tools::{FREE_FACT, battery};
use crate::client::generation::{ProtocolChoice, StateHome};
use crate::protocol::Interface;
use serde_json::{Value, json};

fn commit() -> Value {
    json!({"Kind": "commitment", "Commitments": [{"CommitmentID": "certify-1", "Statement": FREE_FACT}]})
}

/// A Request whose Response says what state the dialogue holds: for BKN-DAC its
/// CommitmentStatus, for BKN-USR its RefinedUserState.
fn remembers(ctx: &Ctx) -> (Value, &'static str) {
    match ctx.interface {
        Interface::Dac => (commit(), "commitment certify-1"),
        Interface::Usr => (battery(ctx).swap_remove(1).1, "the refined User State"),
    }
}

/// Whether `response` shows the state `first` left.
fn holds(ctx: &Ctx, response: Option<&Value>, first: Option<&Value>) -> bool {
    match ctx.interface {
        Interface::Dac => response
            .and_then(|r| r.get("CommitmentStatus"))
            .and_then(Value::as_array)
            .is_some_and(|a| {
                a.iter()
                    .any(|c| c.get("CommitmentID").and_then(Value::as_str) == Some("certify-1"))
            }),
        Interface::Usr => {
            let state = |v: Option<&Value>| v.and_then(|r| r.get("RefinedUserState")).cloned();
            state(response).is_some() && state(response) != state(first)
        }
    }
}

pub async fn lifetime(ctx: &Ctx, p: &mut Probe) {
    let l = &ctx.learnt;
    match l.state_home {
        Some(StateHome::McpSession) => {
            let Some(mut a) = p.open(ctx, "A").await else {
                return;
            };
            let (fields, what) = remembers(ctx);
            let first = a.send(p, fields).await;
            if !p.answered(&first, "dialogue A's first Request") {
                a.close().await;
                return;
            }
            a.close().await;
            let Some(mut b) = p.open(ctx, "B (a new MCP session)").await else {
                return;
            };
            // BKN-DAC: nothing of A's commitments; BKN-USR: the same Request refined from
            // the baseline again, as A's first was.
            let again = match ctx.interface {
                Interface::Dac => crate::certify::turns::plain(ctx),
                Interface::Usr => remembers(ctx).0,
            };
            let sent = b.send(p, again).await;
            if p.answered(&sent, "the first Request of a new MCP session") {
                let kept = match ctx.interface {
                    Interface::Dac => holds(ctx, sent.response.as_ref(), first.response.as_ref()),
                    Interface::Usr => {
                        sent.get("/RefinedUserState")
                            != first.response.as_ref().and_then(|r| r.get("RefinedUserState"))
                    }
                };
                p.check(!kept, || {
                    format!("a new MCP session still holds {what} of the session before it")
                });
            }
            b.close().await;
        }
        Some(StateHome::DialogId) if l.outlives => {
            let Some(mut a) = p.open(ctx, "A").await else {
                return;
            };
            let (fields, what) = remembers(ctx);
            let first = a.send(p, fields).await;
            if !p.answered(&first, "the dialogue's first Request") {
                a.close().await;
                return;
            }
            let (id, next) = (a.d.dialog_id().to_owned(), a.d.next_turn());
            a.close().await;
            let Some(mut b) = p.open(ctx, "A (from a new connection)").await else {
                return;
            };
            b.d.connection.dialog_id = id;
            b.d.start_at(next);
            let (again, _) = remembers(ctx);
            let fields = if ctx.interface == Interface::Dac {
                crate::certify::turns::plain(ctx)
            } else {
                again
            };
            let sent = b.send(p, fields).await;
            if p.answered(&sent, "the dialogue's next turn from a new connection") {
                p.check(
                    holds(ctx, sent.response.as_ref(), first.response.as_ref()),
                    || format!("the dialogue, gone on from a new connection under its DialogID, no longer holds {what}"),
                );
            }
            b.close().await;
        }
        Some(StateHome::DialogId) => p.skip(
            "MCP 2026-07-28 over stdio: every connection starts a server process of its own, so no dialogue can go on from another connection",
        ),
        None => p.skip("the MCP generation is unknown"),
    }
}

pub async fn unknown(ctx: &Ctx, p: &mut Probe) {
    if ctx.learnt.state_home != Some(StateHome::DialogId) {
        p.skip(format!(
            "the server speaks MCP {}, where the dialogue is the MCP session (a first Request may have any TurnIndex: gaps are allowed)",
            ctx.learnt.protocol
        ));
        return;
    }
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let request = d.filled_at(crate::certify::turns::plain(ctx), 3);
    let sent = d.send_prepared(p, request, true).await;
    p.refused(&sent, "TurnIndex 3 of a dialogue the server never held");
    let request = d.filled_at(crate::certify::turns::plain(ctx), 0);
    let sent = d.send_prepared(p, request, true).await;
    p.answered(&sent, "TurnIndex 0 of the same DialogID afterwards");
    d.close().await;
}

/// The Requests both generations are given.
fn script(ctx: &Ctx) -> Vec<Value> {
    let mut out: Vec<Value> = battery(ctx).into_iter().map(|(_, v)| v).collect();
    if ctx.interface == Interface::Dac {
        out.push(commit());
        out.push(json!({"Kind": "commitment", "ReleasedCommitmentIDs": ["certify-1"]}));
    }
    out
}

/// Plays `script` in a dialogue; the Responses, made comparable.
pub async fn play(d: &mut Dlg, p: &mut Probe, script: &[Value]) -> Vec<Option<Value>> {
    let mut out = Vec::new();
    for fields in script {
        let sent = d.send(p, fields.clone()).await;
        out.push(sent.response.as_ref().map(stable));
    }
    out
}

/// Compares two runs of the same script, each difference a problem.
pub fn compare(p: &mut Probe, a: &[Option<Value>], b: &[Option<Value>], what: &str) {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        p.check(x == y, || {
            format!(
                "turn {i}: {what}: {} against {}",
                x.as_ref().map_or("no Response".into(), cut),
                y.as_ref().map_or("no Response".into(), cut)
            )
        });
    }
}

fn cut(v: &Value) -> String {
    let t = v.to_string();
    if t.chars().count() > 240 {
        format!("{}…", t.chars().take(240).collect::<String>())
    } else {
        t
    }
}

pub async fn generations(ctx: &Ctx, p: &mut Probe) {
    let new = ctx
        .dialogue_in("2026-07-28", Some(ProtocolChoice::Stateless))
        .await;
    let old = ctx
        .dialogue_in("2025-11-25", Some(ProtocolChoice::Session))
        .await;
    let (mut new, mut old) = match (new, old) {
        (Ok(n), Ok(o)) => (n, o),
        (n, o) => {
            let (speaks, not) = match (&n, &o) {
                (Ok(_), Err(e)) => ("2026-07-28", e.clone()),
                (Err(e), Ok(_)) => ("2025-11-25", e.clone()),
                (Err(a), Err(b)) => {
                    p.fail(format!("neither generation could be opened: {a}; {b}"));
                    return;
                }
                _ => unreachable!(),
            };
            p.skip(format!(
                "the server speaks only MCP {speaks} ({not}), so there is no other generation to compare"
            ));
            for d in [n, o].into_iter().flatten() {
                d.close().await;
            }
            return;
        }
    };
    let script = script(ctx);
    let a = play(&mut new, p, &script).await;
    let b = play(&mut old, p, &script).await;
    compare(p, &a, &b, "2026-07-28 and 2025-11-25 answer differently");
    new.close().await;
    old.close().await;
}
