//! Feasibility (MCP-BINDING section 5): the steps, Overall and Reasons the judge reads, and
//! each PA Status provoked from the published domain. Statements are built from what the
//! server publishes (its Spaces, M-Locations, Items, rights, wallet and prices); where it
//! does not publish enough, the rule is skipped and says what is missing.

use crate::certify::probe::{Ctx, Dlg, Probe, Sent};
use crate::protocol::conformance::Check;
use serde_json::{Value, json};

/// A feasibility Request: `steps` as (Step, Statement), in the order given.
pub fn plan(space: Option<&str>, steps: &[(u64, String)]) -> Value {
    let mut v = json!({
        "Kind": "feasibility",
        "ProcessActions": steps.iter().map(|(s, st)| json!({"Step": s, "Statement": st})).collect::<Vec<_>>(),
    });
    if let Some(s) = space {
        v["Space"] = json!({"SpaceID": s});
    }
    v
}

/// A move of a placed Item to another M-Location of its Space that the server judged Ack.
#[derive(Clone, Debug)]
pub struct Move {
    pub item: String,
    pub from: String,
    pub to: String,
    pub space: String,
}

impl Move {
    pub fn statement(&self) -> String {
        format!("MM-Move Nil {} To {}", self.item, self.to)
    }
}

/// Finds a feasible move by asking (each candidate a one-step plan in dialogue `d`): a
/// placed Item of a Space within reach, to another M-Location of that Space with room.
/// The error says what was tried.
pub async fn find_move(ctx: &Ctx, p: &mut Probe, d: &mut Dlg) -> Result<Move, String> {
    let l = &ctx.learnt;
    let mut tried = Vec::new();
    let mut failed: Option<String> = None;
    for (item, from) in l.placed() {
        // Where rights are published, only Items the requester may move.
        if l.may("MM-Move", item) == Some(false) {
            continue;
        }
        let Some(space) = l.space_of(from) else {
            continue;
        };
        if space.in_reach == Some(false) {
            continue;
        }
        for to in space
            .locations
            .iter()
            .filter(|x| x.id != from && l.has_room(x))
        {
            if tried.len() >= 8 {
                break;
            }
            let m = Move {
                item: item.to_owned(),
                from: from.to_owned(),
                to: to.id.clone(),
                space: space.id.clone(),
            };
            let sent = d.send(p, plan(Some(&m.space), &[(1, m.statement())])).await;
            if sent.no_reply().is_some() {
                return Err("the server did not answer".into());
            }
            let status = sent.status_of(1);
            if let Some(service) = sent.get("/Failure/Service").and_then(Value::as_str) {
                failed = Some(service.to_owned());
            }
            tried.push(format!(
                "{} ({})",
                m.statement(),
                status.as_deref().unwrap_or("no step")
            ));
            if status.as_deref() == Some("Ack") {
                return Ok(m);
            }
        }
    }
    Err(if tried.is_empty() {
        "the published domain has no Item placed in a Space within reach with another M-Location there that has room".into()
    } else {
        format!(
            "no move the published domain offers was judged Ack (tried {}){}",
            tried.join("; "),
            failed
                .map(|s| format!("; the server reports the knowledge source {s} failed"))
                .unwrap_or_default()
        )
    })
}

/// Opens dialogue A and finds a move, or skips the rule with why.
async fn with_move(ctx: &Ctx, p: &mut Probe) -> Option<(Dlg, Move)> {
    let mut d = p.open(ctx, "A").await?;
    match find_move(ctx, p, &mut d).await {
        Ok(m) => Some((d, m)),
        Err(why) => {
            p.skip(why);
            d.close().await;
            None
        }
    }
}

/// Each Step of `sent` has the PA Status expected of it.
pub fn expect(p: &mut Probe, sent: &Sent, expected: &[(u64, &str, &str)]) {
    if !p.answered(sent, "the feasibility Request") {
        return;
    }
    // A knowledge source that failed (MCP-BINDING section 2) leaves the checks that need it
    // unmade: such a step gets their status, never Ack, and what it should have been cannot
    // be told.
    let failed = sent
        .get("/Failure/Service")
        .and_then(Value::as_str)
        .map(str::to_owned);
    for (step, status, what) in expected {
        let got = sent.status_of(*step);
        if let (Some(service), Some(got)) = (&failed, &got)
            && got != status
            && got != "Ack"
        {
            p.skip(format!(
                "the knowledge source {service} failed (the Response's Failure): step {step} ({what}) could not be judged and is {got}"
            ));
            continue;
        }
        p.check(got.as_deref() == Some(*status), || {
            format!(
                "step {step} ({what}) is {}, not {status}",
                got.as_deref().unwrap_or("missing")
            )
        });
    }
}

/// Sends one plan in a fresh dialogue and expects each step's status.
async fn one_plan(
    ctx: &Ctx,
    p: &mut Probe,
    space: Option<&str>,
    steps: &[(u64, String, &str, &str)],
) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let listed: Vec<(u64, String)> = steps.iter().map(|(s, st, _, _)| (*s, st.clone())).collect();
    let sent = d.send(p, plan(space, &listed)).await;
    let expected: Vec<(u64, &str, &str)> =
        steps.iter().map(|(s, _, st, w)| (*s, *st, *w)).collect();
    expect(p, &sent, &expected);
    d.close().await;
}

/// Some known Item (placed first), else a made-up one.
fn an_item(ctx: &Ctx) -> String {
    let l = &ctx.learnt;
    l.placed()
        .first()
        .map(|(i, _)| i.to_string())
        .or_else(|| l.items.keys().next().cloned())
        .unwrap_or_else(|| "Certify#Item".into())
}

fn a_location(ctx: &Ctx) -> String {
    ctx.learnt
        .locations()
        .next()
        .map(|l| l.id.clone())
        .unwrap_or_else(|| "MLoc:Certify.Place".into())
}

/// Plans with non-Ack steps that need nothing of the domain.
fn unfeasible_steps(ctx: &Ctx) -> Vec<(u64, String)> {
    vec![
        (3, "this is not a Process Action".into()),
        (
            7,
            format!("MM-Move Nil Certify#NoSuchItem To {}", a_location(ctx)),
        ),
    ]
}

pub async fn steps(ctx: &Ctx, p: &mut Probe) {
    let checks = [
        Check::FeasibilitySteps,
        Check::FeasibilityMissing,
        Check::FeasibilityEmpty,
        Check::FeasibilityUnasked,
    ];
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let sent = d.send(p, plan(None, &unfeasible_steps(ctx))).await;
    if p.answered(&sent, "a plan of Steps 3 and 7") {
        p.judged(&sent, &checks);
        let steps: Vec<u64> = sent.statuses().into_iter().map(|(s, _)| s).collect();
        p.check(
            steps.len() == 2 && steps.contains(&3) && steps.contains(&7),
            || match steps.as_slice() {
                [] => "a plan of Steps 3 and 7 was answered with no step status".to_owned(),
                _ => format!(
                    "a plan of Steps 3 and 7 was answered with Steps {}",
                    steps
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        );
    }
    let sent = d
        .send(
            p,
            json!({"Kind": "feasibility", "Question": "Is anything feasible?"}),
        )
        .await;
    if p.answered(&sent, "a feasibility Request without Process Actions") {
        p.judged(&sent, &checks);
        let outcome = sent
            .get("/Outcome")
            .and_then(Value::as_str)
            .unwrap_or("none");
        p.check(outcome == "not_answered", || {
            format!("a feasibility Request without Process Actions is {outcome}, not not_answered")
        });
    }
    d.close().await;
}

pub async fn overall(ctx: &Ctx, p: &mut Probe) {
    judged_plans(ctx, p, &[Check::FeasibilityOverall]).await;
}

pub async fn reason(ctx: &Ctx, p: &mut Probe) {
    judged_plans(ctx, p, &[Check::FeasibilityReason]).await;
}

/// Plans of every Overall the domain allows (infeasible always; feasible and partially
/// feasible when a feasible move is found), judged with `checks`.
async fn judged_plans(ctx: &Ctx, p: &mut Probe, checks: &[Check]) {
    let Some(mut d) = p.open(ctx, "A").await else {
        return;
    };
    let sent = d.send(p, plan(None, &unfeasible_steps(ctx))).await;
    if p.answered(&sent, "a plan of no feasible step") {
        p.judged(&sent, checks);
    }
    if let Ok(m) = find_move(ctx, p, &mut d).await {
        let mut steps = vec![(1, m.statement())];
        let sent = d.send(p, plan(Some(&m.space), &steps)).await;
        if p.answered(&sent, "a plan of one feasible step") {
            p.judged(&sent, checks);
        }
        steps.push((
            2,
            "MM-Move Nil Certify#NoSuchItem To Certify#Nowhere".into(),
        ));
        let sent = d.send(p, plan(Some(&m.space), &steps)).await;
        if p.answered(&sent, "a plan of a feasible step and an unfeasible one") {
            p.judged(&sent, checks);
        }
    }
    d.close().await;
}

pub async fn ack(ctx: &Ctx, p: &mut Probe) {
    if let Some((d, m)) = with_move(ctx, p).await {
        p.check(true, String::new);
        let _ = m;
        d.close().await;
    }
}

pub async fn faulty(ctx: &Ctx, p: &mut Probe) {
    let item = an_item(ctx);
    one_plan(
        ctx,
        p,
        None,
        &[
            (
                1,
                "this is not a statement at all".into(),
                "FaultyReq",
                "it does not parse",
            ),
            (
                2,
                format!("MM-Jump Nil {item}"),
                "FaultyReq",
                "no such Action",
            ),
            (
                3,
                format!("MM-Move Nil {item}"),
                "FaultyReq",
                "MM-Move without To",
            ),
        ],
    )
    .await;
}

pub async fn target_kind(ctx: &Ctx, p: &mut Probe) {
    let l = &ctx.learnt;
    let locations: Vec<&str> = l.locations().map(|x| x.id.as_str()).take(2).collect();
    let placed = l.placed();
    let (Some((item, _)), Some((other, _))) = (placed.first(), placed.get(1)) else {
        p.skip("the published domain places fewer than two Items, so an Item cannot be given where an M-Location is needed");
        return;
    };
    let [a, b] = locations[..] else {
        p.skip("the published domain has fewer than two M-Locations");
        return;
    };
    one_plan(
        ctx,
        p,
        None,
        &[
            (
                1,
                format!("MM-Move Nil {a} To {b}"),
                "FaultyReq",
                "an M-Location moved as an Item",
            ),
            (
                2,
                format!("MM-Move Nil {item} To {other}"),
                "FaultyReq",
                "an Item after To",
            ),
            (
                3,
                format!("MM-Move Nil {item} To {b} To {b}"),
                "FaultyReq",
                "To given twice",
            ),
        ],
    )
    .await;
}

pub async fn inc_id(ctx: &Ctx, p: &mut Probe) {
    let item = an_item(ctx);
    one_plan(
        ctx,
        p,
        None,
        &[
            (
                1,
                format!("MM-Move Nil Certify#NoSuchItem To {}", a_location(ctx)),
                "IncID",
                "an unknown Item",
            ),
            (
                2,
                format!("MM-Move Nil {item} To MLoc:Certify.NoSuchPlace"),
                "IncID",
                "an unknown M-Location",
            ),
        ],
    )
    .await;
}

pub async fn inc_dq(ctx: &Ctx, p: &mut Probe) {
    let l = &ctx.learnt;
    let Some((item, format)) = l
        .items
        .iter()
        .find_map(|(id, i)| Some((id.clone(), i.format.clone()?)))
    else {
        p.skip("the published domain gives no Item's Qualifier (Format), so a Data Qualifier that does not match cannot be written");
        return;
    };
    let to = l
        .items
        .get(&item)
        .and_then(|i| i.position.clone())
        .unwrap_or_else(|| a_location(ctx));
    one_plan(
        ctx,
        p,
        None,
        &[(
            1,
            format!("MM-Move Nil {item}(Format=Certify{format}) To {to}"),
            "IncDQ",
            "a Format the Item does not have",
        )],
    )
    .await;
}

pub async fn other_space(ctx: &Ctx, p: &mut Probe) {
    let l = &ctx.learnt;
    let reachable = |s: &&crate::certify::learn::SpaceInfo| s.in_reach != Some(false);
    let found = l.placed().into_iter().find_map(|(item, from)| {
        let space = l.space_of(from).filter(reachable)?;
        let elsewhere = l
            .spaces
            .iter()
            .filter(reachable)
            .filter(|s| s.id != space.id)
            .find_map(|s| s.locations.first())?;
        Some((item.to_owned(), space.id.clone(), elsewhere.id.clone()))
    });
    let Some((item, space, elsewhere)) = found else {
        p.skip("the published domain has no two Spaces within reach, one with a placed Item and the other with an M-Location");
        return;
    };
    one_plan(
        ctx,
        p,
        Some(&space),
        &[(
            1,
            format!("MM-Move Nil {item} To {elsewhere}"),
            "LocOOR",
            "an M-Location of another Space than the Request's",
        )],
    )
    .await;
}

pub async fn out_of_reach(ctx: &Ctx, p: &mut Probe) {
    let l = &ctx.learnt;
    let Some(far) = l
        .spaces
        .iter()
        .filter(|s| s.in_reach == Some(false))
        .find_map(|s| s.locations.first())
    else {
        p.skip("the server publishes no Space out of the requester's reach (InReach false, or a Requester's Reach)");
        return;
    };
    let item = l
        .placed()
        .into_iter()
        .find(|(_, at)| l.space_of(at).is_some_and(|s| s.in_reach == Some(true)))
        .map(|(i, _)| i.to_owned());
    let Some(item) = item else {
        p.skip("the published domain places no Item in a Space within reach");
        return;
    };
    one_plan(
        ctx,
        p,
        None,
        &[(
            1,
            format!("MM-Move Nil {item} To {}", far.id),
            "LocOOR",
            "an M-Location out of reach",
        )],
    )
    .await;
}

pub async fn ins_rights(ctx: &Ctx, p: &mut Probe) {
    let l = &ctx.learnt;
    let Some(rights) = &l.rights else {
        p.skip("the server does not publish the requester's rights, so no step can be written that they forbid");
        return;
    };
    let found = rights
        .iter()
        .filter(|r| !r.may && r.action == "MM-Move")
        .filter_map(|r| r.item.as_deref())
        .find_map(|item| {
            let from = l.items.get(item)?.position.clone()?;
            let space = l.space_of(&from).filter(|s| s.in_reach != Some(false))?;
            let to = space.locations.iter().find(|x| x.id != from)?;
            Some((item.to_owned(), to.id.clone(), space.id.clone()))
        });
    let Some((item, to, space)) = found else {
        p.skip("the published rights hold no May Not MM-Move on an Item placed within reach");
        return;
    };
    one_plan(
        ctx,
        p,
        Some(&space),
        &[(
            1,
            format!("MM-Move Nil {item} To {to}"),
            "InsRights",
            "a move the requester May Not make",
        )],
    )
    .await;
}

pub async fn ins_value(ctx: &Ctx, p: &mut Probe) {
    let l = &ctx.learnt;
    let Some(wallet) = l.wallet else {
        p.skip("the domain publishes no wallet, so InsValue cannot be provoked");
        return;
    };
    let Some(price) = l.prices.get("MM-Move").copied().filter(|p| *p > 0.0) else {
        p.skip("the domain publishes no price for MM-Move, so a plan that overspends cannot be written");
        return;
    };
    let n = (wallet / price).floor() as u64 + 1;
    if n > 200 {
        p.skip(format!(
            "the wallet ({wallet}) holds {} moves: a plan that overspends would be too long",
            n - 1
        ));
        return;
    }
    let Some((mut d, m)) = with_move(ctx, p).await else {
        return;
    };
    let steps: Vec<(u64, String)> = (1..=n)
        .map(|s| {
            let to = if s % 2 == 1 { &m.to } else { &m.from };
            (s, format!("MM-Move Nil {} To {to}", m.item))
        })
        .collect();
    let sent = d.send(p, plan(Some(&m.space), &steps)).await;
    let mut expected: Vec<(u64, &str, &str)> = (1..n)
        .map(|s| (s, "Ack", "a move the wallet pays for"))
        .collect();
    expected.push((n, "InsValue", "the move the wallet cannot pay for"));
    expect(p, &sent, &expected);
    d.close().await;
}

/// Items the published rights let the requester Post, with their class and format.
fn postable(ctx: &Ctx) -> Vec<(String, Vec<String>, Option<String>)> {
    let l = &ctx.learnt;
    l.items
        .iter()
        .filter(|(id, _)| l.may("Post", id) == Some(true))
        .filter_map(|(id, i)| {
            Some((
                id.clone(),
                l.ancestors(i.class.as_deref()?),
                i.format.clone(),
            ))
        })
        .collect()
}

pub async fn qual_ns(ctx: &Ctx, p: &mut Probe) {
    let l = &ctx.learnt;
    if l.rights.is_none() || l.accepts.is_empty() {
        p.skip("the domain publishes no rights or no Process's Accepts, so no Post can be written that the requester may make and the receiver refuses");
        return;
    }
    let found = postable(ctx)
        .into_iter()
        .find_map(|(item, classes, format)| {
            let format = format?;
            l.accepts.iter().find_map(|(process, accepts)| {
                let a = accepts.as_ref()?;
                (a.classes.iter().any(|c| classes.contains(c)) && !a.formats.contains(&format))
                    .then(|| (item.clone(), process.clone(), format.clone()))
            })
        });
    let Some((item, process, format)) = found else {
        p.skip("the published domain has no Item the requester may Post, in a format that a Process taking its class does not take");
        return;
    };
    one_plan(
        ctx,
        p,
        None,
        &[(
            1,
            format!("Post Nil {item} To {process}"),
            "QualNS",
            &format!("{process} does not take {format}"),
        )],
    )
    .await;
}

pub async fn post_ref(ctx: &Ctx, p: &mut Probe) {
    let l = &ctx.learnt;
    if l.rights.is_none() || l.accepts.is_empty() {
        p.skip("the domain publishes no rights or no Process's Accepts, so no Post can be written that the requester may make and the receiver refuses");
        return;
    }
    // A Process that takes some Posts but not this Item's class, else one that takes none.
    let found = postable(ctx).into_iter().find_map(|(item, classes, _)| {
        let refuses = |a: &Option<crate::certify::learn::Accepts>| {
            a.as_ref()
                .is_none_or(|a| !a.classes.iter().any(|c| classes.contains(c)))
        };
        l.accepts
            .iter()
            .filter(|(_, a)| a.is_some() && refuses(a))
            .chain(l.accepts.iter().filter(|(_, a)| a.is_none()))
            .next()
            .map(|(process, _)| (item.clone(), process.clone()))
    });
    let Some((item, process)) = found else {
        p.skip("the published domain has no Item the requester may Post and no Process that refuses its class");
        return;
    };
    one_plan(
        ctx,
        p,
        None,
        &[(
            1,
            format!("Post Nil {item} To {process}"),
            "PostRef",
            &format!("{process} does not take {item}'s class"),
        )],
    )
    .await;
}

pub async fn clash_state(ctx: &Ctx, p: &mut Probe) {
    let Some((mut d, m)) = with_move(ctx, p).await else {
        return;
    };
    let statement = format!("MM-Move Nil {} From {} To {}", m.item, m.to, m.from);
    let sent = d.send(p, plan(Some(&m.space), &[(1, statement)])).await;
    expect(
        p,
        &sent,
        &[(1, "Clash", "From an M-Location where the Item is not")],
    );
    d.close().await;
}

/// Plan B of the sequence rules: a step the state refuses (it changes nothing), then the
/// move it would have spoilt.
pub fn sequence_plan(m: &Move) -> Vec<(u64, String)> {
    vec![
        (
            1,
            format!("MM-Move Nil {} From {} To {}", m.item, m.to, m.from),
        ),
        (
            2,
            format!("MM-Move Nil {} From {} To {}", m.item, m.from, m.to),
        ),
    ]
}

pub async fn sequence(ctx: &Ctx, p: &mut Probe) {
    let Some((mut d, m)) = with_move(ctx, p).await else {
        return;
    };
    // A: the move, then the same move From where the Item was: it is no longer there.
    let a = vec![
        (1, m.statement()),
        (
            2,
            format!("MM-Move Nil {} From {} To {}", m.item, m.from, m.to),
        ),
    ];
    let sent = d.send(p, plan(Some(&m.space), &a)).await;
    expect(
        p,
        &sent,
        &[
            (1, "Ack", "the move"),
            (2, "Clash", "From where step 1 took the Item away"),
        ],
    );
    let sent = d.send(p, plan(Some(&m.space), &sequence_plan(&m))).await;
    expect(
        p,
        &sent,
        &[
            (1, "Clash", "From where the Item is not"),
            (2, "Ack", "the move, which step 1 (not Ack) did not spoil"),
        ],
    );
    d.close().await;
}
