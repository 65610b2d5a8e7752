//! Determinism and metamorphic properties: the same dialogue twice gives the same answers;
//! the order steps are listed in, or a retained commitment unrelated to a plan, does not
//! change its verdicts; N dialogues at once answer as one at a time (MCP-BINDING 3-5).

use crate::certify::dialogues::{compare, play};
use crate::certify::feasibility::{find_move, plan, sequence_plan};
use crate::certify::probe::{Ctx, Probe};
use crate::certify::tools::battery;
use crate::protocol::Interface;
use serde_json::{Value, json};

/// How many dialogues run at once.
pub const AT_ONCE: usize = 4;

fn script(ctx: &Ctx) -> Vec<Value> {
    let mut out: Vec<Value> = battery(ctx).into_iter().map(|(_, v)| v).collect();
    if ctx.interface == Interface::Dac {
        out.push(json!({"Kind": "commitment", "ReleasedCommitmentIDs": ["certify-battery"]}));
    }
    out
}

pub async fn repeat(ctx: &Ctx, p: &mut Probe) {
    let script = script(ctx);
    let mut runs = Vec::new();
    for label in ["first", "second"] {
        let Some(mut d) = p.open(ctx, label).await else {
            return;
        };
        runs.push(play(&mut d, p, &script).await);
        d.close().await;
    }
    compare(
        p,
        &runs[0],
        &runs[1],
        "the same dialogue answered differently the second time",
    );
}

pub async fn step_order(ctx: &Ctx, p: &mut Probe) {
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
    let in_order = sequence_plan(&m);
    let mut reversed = in_order.clone();
    reversed.reverse();
    let a = d.send(p, plan(Some(&m.space), &in_order)).await;
    let b = d.send(p, plan(Some(&m.space), &reversed)).await;
    if p.answered(&a, "the plan listed in Step order")
        && p.answered(&b, "the same plan listed backwards")
    {
        let sorted = |mut v: Vec<(u64, String)>| {
            v.sort();
            v
        };
        let (x, y) = (sorted(a.statuses()), sorted(b.statuses()));
        p.check(x == y, || {
            format!(
                "listed in Step order the steps are {}; listed backwards, {}",
                steps_said(&x),
                steps_said(&y)
            )
        });
    }
    d.close().await;
}

pub async fn unrelated(ctx: &Ctx, p: &mut Probe) {
    let Some(mut a) = p.open(ctx, "without").await else {
        return;
    };
    let m = match find_move(ctx, p, &mut a).await {
        Ok(m) => m,
        Err(why) => {
            p.skip(why);
            a.close().await;
            return;
        }
    };
    let steps = sequence_plan(&m);
    let without = a.send(p, plan(Some(&m.space), &steps)).await;
    a.close().await;
    let Some(mut b) = p.open(ctx, "with").await else {
        return;
    };
    let commit = json!({"Kind": "commitment", "Commitments": [
        {"CommitmentID": "certify-unrelated", "Statement": crate::certify::tools::FREE_FACT},
        {"CommitmentID": "certify-opaque", "Statement": "fine weather"},
    ]});
    let sent = b.send(p, commit).await;
    p.answered(&sent, "the unrelated commitments");
    let with = b.send(p, plan(Some(&m.space), &steps)).await;
    if p.answered(&without, "the plan alone")
        && p.answered(&with, "the plan beside unrelated commitments")
    {
        let (x, y) = (without.statuses(), with.statuses());
        p.check(x == y, || {
            format!(
                "alone the steps are {}; beside unrelated retained commitments, {}",
                steps_said(&x),
                steps_said(&y)
            )
        });
    }
    b.close().await;
}

pub async fn concurrent(ctx: &Ctx, p: &mut Probe) {
    let script = script(ctx);
    let Some(mut d) = p.open(ctx, "alone").await else {
        return;
    };
    let alone = play(&mut d, p, &script).await;
    d.close().await;
    let runs = futures::future::join_all((0..AT_ONCE).map(|n| {
        let script = &script;
        async move {
            let mut probe = Probe::new(ctx.cancel.child_token());
            let label = format!("at once {}", n + 1);
            let answers = match probe.open(ctx, &label).await {
                Some(mut d) => {
                    let answers = play(&mut d, &mut probe, script).await;
                    d.close().await;
                    answers
                }
                None => Vec::new(),
            };
            (probe, answers)
        }
    }))
    .await;
    for (n, (probe, answers)) in runs.into_iter().enumerate() {
        p.evidence.extend(probe.evidence);
        p.problems.extend(probe.problems);
        if answers.len() == alone.len() {
            compare(
                p,
                &alone,
                &answers,
                &format!(
                    "dialogue {} of {AT_ONCE} at once answered otherwise than alone",
                    n + 1
                ),
            );
        }
    }
}

/// Steps and their PA Status as a verdict says them: "Step 3 Ack, Step 7 Clash", or "none".
fn steps_said(steps: &[(u64, String)]) -> String {
    if steps.is_empty() {
        return "none".to_owned();
    }
    steps
        .iter()
        .map(|(step, status)| format!("Step {step} {status}"))
        .collect::<Vec<_>>()
        .join(", ")
}
