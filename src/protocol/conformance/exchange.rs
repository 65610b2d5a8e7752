//! The exchange check: a Response against the Request it answers (MCP-BINDING sections 3
//! and 5): correlation, the same dialogue position and identifiers, and for a feasibility
//! Request one result per Process Action.

use crate::protocol::conformance::finding::{Check, Finding};
use crate::protocol::conformance::message::short;
use crate::protocol::message::as_index;
use crate::protocol::requirement::Requirement;
use serde_json::Value;
use std::collections::BTreeMap;

/// Checks that `response` answers `request`: correlation, same dialogue position, same
/// identifiers. Properties missing on either side are left to the message check. Pointers
/// point into the Response.
pub fn check_exchange(request: &Value, response: &Value) -> Vec<Finding> {
    let mut findings = Vec::new();
    check_correlation(request, response, &mut findings);
    check_copied(request, response, &mut findings);
    check_feasibility(request, response, &mut findings);
    findings
}

/// The same interface, a Request answered by a Response, whose RequestID is the Request's
/// QueryID and whose own QueryID is new.
fn check_correlation(request: &Value, response: &Value, findings: &mut Vec<Finding>) {
    if let (Some(header_rq), Some(header_rs)) = (request.get("Header"), response.get("Header"))
        && header_rq != header_rs
    {
        findings.push(Finding::new(
            "/Header",
            Requirement::Header,
            Check::ExchangeInterface,
            format!(
                "the Response's Header {} differs from its Request's {}",
                short(header_rs),
                short(header_rq)
            ),
        ));
    }
    if request.get("Mode").and_then(Value::as_str) == Some("RS")
        || response.get("Mode").and_then(Value::as_str) == Some("RQ")
    {
        findings.push(Finding::new(
            "/Mode",
            Requirement::Header,
            Check::ExchangeMode,
            "an exchange is a Request (RQ) answered by a Response (RS)",
        ));
    }
    if let (Some(query_id), Some(request_id)) = (request.get("QueryID"), response.get("RequestID"))
        && query_id != request_id
    {
        findings.push(Finding::new(
            "/RequestID",
            Requirement::Correlation,
            Check::ExchangeRequestId,
            format!(
                "RequestID is {} but the Request's QueryID is {}",
                short(request_id),
                short(query_id)
            ),
        ));
    }
    if let (Some(rq), Some(rs)) = (request.get("QueryID"), response.get("QueryID"))
        && rq == rs
    {
        findings.push(Finding::new(
            "/QueryID",
            Requirement::Identification,
            Check::ExchangeQueryId,
            format!(
                "the Response reuses its Request's QueryID {}; it needs one of its own",
                short(rs)
            ),
        ));
    }
}

/// The dialogue position and identifiers a Response copies from its Request.
fn check_copied(request: &Value, response: &Value, findings: &mut Vec<Finding>) {
    let copied = [
        ("DialogID", Requirement::Dialogue, Check::ExchangeDialogId),
        ("TurnIndex", Requirement::Dialogue, Check::ExchangeTurnIndex),
        (
            "MInstance",
            Requirement::Identification,
            Check::ExchangeIdentification,
        ),
        (
            "UEnvironment",
            Requirement::Identification,
            Check::ExchangeIdentification,
        ),
        (
            "SessionID",
            Requirement::Identification,
            Check::ExchangeIdentification,
        ),
    ];
    for (name, requirement, check) in copied {
        if let (Some(rq), Some(rs)) = (request.get(name), response.get(name))
            && !same_value(rq, rs)
        {
            findings.push(Finding::new(
                format!("/{name}"),
                requirement,
                check,
                format!(
                    "{name} is {} but the Request's is {}; a Response copies it",
                    short(rs),
                    short(rq)
                ),
            ));
        }
    }
}

/// Equal as JSON values, numbers compared as numbers (`2.0` is `2`: MCP-BINDING section 6).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y
                || as_index(a).is_some_and(|n| Some(n) == as_index(b))
                || x.as_f64() == y.as_f64()
        }
        _ => a == b,
    }
}

/// MCP-BINDING section 5: a feasibility Request answered in full or in part carries
/// Feasibility, with exactly one step for each Process Action and the same Step numbers.
fn check_feasibility(request: &Value, response: &Value, findings: &mut Vec<Finding>) {
    let dac = |m: &Value| m.get("Header").and_then(Value::as_str) == Some("PGM-KDA-V1.0");
    if !dac(response) {
        return;
    }
    // Whatever the Kind: Feasibility answers Process Actions, so none asked, none answered.
    let asked_none = match request.get("ProcessActions") {
        None => true,
        Some(Value::Array(actions)) => actions.is_empty(),
        Some(_) => false, // not an array: the message check says so
    };
    if asked_none && response.get("Feasibility").is_some() {
        findings.push(Finding::new(
            "/Feasibility",
            Requirement::Response,
            Check::FeasibilityUnasked,
            "the Response carries Feasibility, but its Request has no Process Action; \
             Feasibility is only for a Request with at least one",
        ));
        return;
    }
    if request.get("Kind").and_then(Value::as_str) != Some("feasibility") {
        return;
    }
    let outcome = response.get("Outcome").and_then(Value::as_str);
    let Some(feasibility) = response.get("Feasibility") else {
        if matches!(outcome, Some("answered" | "partially_answered")) {
            findings.push(Finding::new(
                "/Feasibility",
                Requirement::Response,
                Check::FeasibilityMissing,
                format!(
                    "the Response to a feasibility Request is {} but has no Feasibility; it \
                     carries the PA Status of each Process Action",
                    outcome.unwrap_or_default().replace('_', " ")
                ),
            ));
        }
        return;
    };
    let (Some(asked), Some(steps)) = (
        request.get("ProcessActions").and_then(Value::as_array),
        feasibility.get("Steps").and_then(Value::as_array),
    ) else {
        return; // the message checks say what is missing or malformed
    };
    check_steps_match(asked, steps, findings);
}

/// Each Process Action asked has exactly one result, with its Step number: no result for a
/// Step nobody asked, none twice, none missing. Step numbers are counted: a Request may
/// repeat one (a server answers each occurrence).
fn check_steps_match(asked: &[Value], steps: &[Value], findings: &mut Vec<Finding>) {
    let mut wanted: BTreeMap<u64, usize> = BTreeMap::new();
    for step in asked {
        if let Some(n) = step.get("Step").and_then(as_index) {
            *wanted.entry(n).or_default() += 1;
        }
    }
    let mut given: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, step) in steps.iter().enumerate() {
        if let Some(n) = step.get("Step").and_then(as_index) {
            given.entry(n).or_default().push(i);
        }
    }
    for (n, at) in &given {
        let expected = wanted.get(n).copied().unwrap_or(0);
        if expected == 0 {
            findings.push(Finding::new(
                format!("/Feasibility/Steps/{}/Step", at[0]),
                Requirement::Response,
                Check::FeasibilitySteps,
                format!("Step {n} answers no Process Action of the Request"),
            ));
        } else if at.len() > expected {
            findings.push(Finding::new(
                format!("/Feasibility/Steps/{}/Step", at[expected]),
                Requirement::Response,
                Check::FeasibilitySteps,
                format!(
                    "Step {n} has {} results for {expected} Process Action{}; each Process \
                     Action has exactly one",
                    at.len(),
                    if expected == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    let mut missing: Vec<String> = Vec::new();
    for (n, count) in &wanted {
        let got = given.get(n).map_or(0, Vec::len);
        if got < *count {
            missing.push(n.to_string());
        }
    }
    if !missing.is_empty() {
        findings.push(Finding::new(
            "/Feasibility/Steps",
            Requirement::Response,
            Check::FeasibilitySteps,
            format!(
                "the Request's Process Action{} {} {} no result; each Process Action has \
                 exactly one, with its Step number",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                if missing.len() == 1 { "has" } else { "have" },
            ),
        ));
    }
}
