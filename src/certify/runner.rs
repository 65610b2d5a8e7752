//! Running the rules: learn the server once, then each rule on connections of its own, with
//! a deadline. A rule that overruns it (a server that hangs) or whose server goes away fails
//! with the reason; the next rule starts on a fresh connection, and the report is made
//! whatever happened. Callers see each rule as it starts and ends (`Progress`): the command
//! draws a line, the explorer a progress bar.

use crate::certify::learn;
use crate::certify::probe::{Ctx, Probe};
use crate::certify::rules::{Rule, RuleId};
use crate::certify::{Report, RuleResult, Verdict};
use crate::client::connection::{ConnectOptions, Connection};
use crate::client::defaults::Overrides;
use crate::client::spec::ServerSpec;
use crate::protocol::Interface;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub spec: ServerSpec,
    pub connect: ConnectOptions,
    pub overrides: Overrides,
    /// The interface to certify; `None`: the one the server serves (an error when it serves
    /// both: the caller says which).
    pub interface: Option<Interface>,
    /// Rule ids or families (`--only`); empty: every rule.
    pub only: Vec<String>,
    /// The longest a rule may take.
    pub rule_timeout: Duration,
}

/// What the runner tells as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// The server was learnt; `total` rules will run.
    Learnt {
        total: usize,
        learnt: &'a [String],
    },
    Started {
        index: usize,
        rule: &'static Rule,
    },
    Finished {
        index: usize,
        result: &'a RuleResult,
    },
}

/// Why no report could be made: the server cannot be reached, or serves no BKN tool (exit 2).
#[derive(Debug, Clone)]
pub struct Unreachable(pub String);

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Certifies a server.
pub async fn certify(
    options: &Options,
    cancel: &CancellationToken,
    mut progress: impl FnMut(Progress),
) -> Result<Report, Unreachable> {
    let started = Instant::now();
    let first = Connection::connect(&options.spec, &options.connect)
        .await
        .map_err(|e| {
            Unreachable(format!(
                "{} cannot be reached: {}",
                options.spec.name, e.message
            ))
        })?;
    // Once connected, the server is named as it names itself (serverInfo).
    let name = first.shown_name();
    let interface = match interface_to_certify(&first, &name, options.interface) {
        Ok(interface) => interface,
        Err(why) => {
            first.close().await;
            return Err(why);
        }
    };
    let rules = crate::certify::rules::select(&options.only, interface).map_err(Unreachable)?;
    if rules.is_empty() {
        first.close().await;
        return Err(Unreachable(format!(
            "no rule that --only names applies to {} (the server's interface)",
            interface.name()
        )));
    }
    let learnt = learn::learn(&first, interface).await;
    first.close().await;
    let ctx = Ctx {
        spec: options.spec.clone(),
        options: options.connect.clone(),
        overrides: options.overrides.clone(),
        interface,
        learnt,
        cancel: cancel.clone(),
    };
    let described = ctx.learnt.describe(interface);
    progress(Progress::Learnt {
        total: rules.len(),
        learnt: &described,
    });
    let mut results = Vec::new();
    for (index, rule) in rules.into_iter().enumerate() {
        progress(Progress::Started { index, rule });
        let result = run_rule(&ctx, rule, options.rule_timeout).await;
        progress(Progress::Finished {
            index,
            result: &result,
        });
        results.push(result);
        if cancel.is_cancelled() {
            break;
        }
    }
    Ok(Report {
        server: name.clone(),
        interface,
        protocol: ctx.learnt.protocol.clone(),
        learnt: described,
        rules: results,
        seconds: started.elapsed().as_secs_f64(),
        spec: options.spec.clone(),
    })
}

/// The interface to certify: the one asked for, if the server serves it, else the one it
/// serves; why not, when it serves neither, none, or both and none was asked for.
fn interface_to_certify(
    first: &Connection,
    name: &str,
    asked: Option<Interface>,
) -> Result<Interface, Unreachable> {
    let served: Vec<Interface> = first.summary.bkn_tools.keys().copied().collect();
    match (asked, served.as_slice()) {
        (Some(i), _) if served.contains(&i) => Ok(i),
        (Some(i), _) => {
            let message = format!(
                "{} serves no {} tool (no tool's inputSchema has Header {} and none is named {}); its tools: {}",
                name,
                i.name(),
                i.header(),
                i.tool_name(),
                tool_names(first)
            );
            Err(Unreachable(message))
        }
        (None, [one]) => Ok(*one),
        (None, []) => {
            let message = format!(
                "{} serves no BKN tool (none has Header PGM-KDA-V1.0 or PGM-KUS-V1.0, none is named bkn_dac or bkn_usr); its tools: {}",
                name,
                tool_names(first)
            );
            Err(Unreachable(message))
        }
        (None, _) => Err(Unreachable(format!(
            "{} serves both BKN-DAC and BKN-USR: say which with --interface dac|usr",
            name
        ))),
    }
}

fn tool_names(c: &Connection) -> String {
    let names: Vec<String> = c.summary.tools.iter().map(|t| t.name.to_string()).collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Runs one rule within `deadline`.
pub async fn run_rule(ctx: &Ctx, rule: &'static Rule, deadline: Duration) -> RuleResult {
    let started = Instant::now();
    let mut probe = Probe::new(ctx.cancel.child_token());
    let finished = tokio::time::timeout(deadline, dispatch(rule.id, ctx, &mut probe))
        .await
        .is_ok();
    if !finished {
        probe.fail(format!(
            "the rule did not finish within {}: the server stopped answering (it was left, and the next rule starts on a fresh connection)",
            crate::duration::show(deadline)
        ));
    }
    let Probe {
        evidence,
        problems,
        checked,
        skip,
        ..
    } = probe;
    let (verdict, summary) = if let Some(first) = problems.first() {
        let more = if problems.len() > 1 {
            format!(" (and {} more)", problems.len() - 1)
        } else {
            String::new()
        };
        (Verdict::Fail, format!("{first}{more}"))
    } else if let Some(why) = skip {
        (Verdict::Skip, why)
    } else if checked == 0 {
        (
            Verdict::Skip,
            "nothing could be checked against this server".into(),
        )
    } else {
        (
            Verdict::Pass,
            format!(
                "{} ({checked} check{})",
                rule.title,
                if checked == 1 { "" } else { "s" }
            ),
        )
    };
    RuleResult {
        rule,
        verdict,
        summary,
        problems,
        checked,
        evidence,
        seconds: started.elapsed().as_secs_f64(),
    }
}

async fn dispatch(id: RuleId, ctx: &Ctx, p: &mut Probe) {
    use crate::certify::{
        commitments as c, determinism as det, dialogues as dl, feasibility as f, robustness as r,
        tools as t, turns as tu, usr as u,
    };
    match id {
        RuleId::ToolFound => t::found_by_header(ctx, p).await,
        RuleId::ToolOutputSchema => t::output_schema(ctx, p).await,
        RuleId::ShapesEveryKind => t::every_kind(ctx, p).await,
        RuleId::ShapesStructured => t::structured(ctx, p).await,
        RuleId::ShapesToolError => t::tool_error(ctx, p).await,
        RuleId::RpcNonJson => r::non_json(ctx, p).await,
        RuleId::TurnsCopied => tu::copied(ctx, p).await,
        RuleId::TurnsRepeat => tu::repeat(ctx, p).await,
        RuleId::TurnsBack => tu::back(ctx, p).await,
        RuleId::TurnsGap => tu::gap(ctx, p).await,
        RuleId::TurnsDialogId => tu::dialog_id(ctx, p).await,
        RuleId::TurnsRejected => tu::rejected(ctx, p).await,
        RuleId::FeasSteps => f::steps(ctx, p).await,
        RuleId::FeasOverall => f::overall(ctx, p).await,
        RuleId::FeasReason => f::reason(ctx, p).await,
        RuleId::FeasAck => f::ack(ctx, p).await,
        RuleId::FeasFaultyReq => f::faulty(ctx, p).await,
        RuleId::FeasTargetKind => f::target_kind(ctx, p).await,
        RuleId::FeasIncId => f::inc_id(ctx, p).await,
        RuleId::FeasIncDq => f::inc_dq(ctx, p).await,
        RuleId::FeasLocOtherSpace => f::other_space(ctx, p).await,
        RuleId::FeasLocReach => f::out_of_reach(ctx, p).await,
        RuleId::FeasInsRights => f::ins_rights(ctx, p).await,
        RuleId::FeasInsValue => f::ins_value(ctx, p).await,
        RuleId::FeasQualNs => f::qual_ns(ctx, p).await,
        RuleId::FeasPostRef => f::post_ref(ctx, p).await,
        RuleId::FeasClashState => f::clash_state(ctx, p).await,
        RuleId::FeasSequence => f::sequence(ctx, p).await,
        RuleId::CommitRetain => c::retain(ctx, p).await,
        RuleId::CommitRelease => c::release(ctx, p).await,
        RuleId::CommitRestate => c::restate(ctx, p).await,
        RuleId::CommitConflictRetained => c::conflict_retained(ctx, p).await,
        RuleId::CommitConflictRequest => c::conflict_in_request(ctx, p).await,
        RuleId::CommitConflictDomain => c::conflict_domain(ctx, p).await,
        RuleId::CommitUnknownRelease => c::unknown_release(ctx, p).await,
        RuleId::CommitOpaque => c::opaque(ctx, p).await,
        RuleId::CommitClash => c::clash(ctx, p).await,
        RuleId::CommitIsolation => c::isolation(ctx, p).await,
        RuleId::DialogLifetime => dl::lifetime(ctx, p).await,
        RuleId::DialogUnknown => dl::unknown(ctx, p).await,
        RuleId::DialogGenerations => dl::generations(ctx, p).await,
        RuleId::DetRepeat => det::repeat(ctx, p).await,
        RuleId::DetStepOrder => det::step_order(ctx, p).await,
        RuleId::DetUnrelated => det::unrelated(ctx, p).await,
        RuleId::DetConcurrent => det::concurrent(ctx, p).await,
        RuleId::RobJunk => r::junk(ctx, p).await,
        RuleId::RobOversized => r::oversized(ctx, p).await,
        RuleId::RobDeep => r::deep(ctx, p).await,
        RuleId::UsrShapes => u::shapes(ctx, p).await,
        RuleId::UsrCarried => u::carried(ctx, p).await,
        RuleId::UsrIsolation => u::isolation(ctx, p).await,
    }
}
