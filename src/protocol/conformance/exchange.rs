//! The exchange check: a Response against the Request it answers (MCP-BINDING section 3).

use crate::protocol::conformance::finding::{Check, Finding};
use crate::protocol::conformance::message::short;
use crate::protocol::requirement::Requirement;
use serde_json::Value;

/// Checks that `response` answers `request`: correlation, same dialogue position, same
/// identifiers. Properties missing on either side are left to the message check. Pointers
/// point into the Response.
pub fn check_exchange(request: &Value, response: &Value) -> Vec<Finding> {
    let mut findings = Vec::new();

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
            && rq != rs
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
    findings
}
