//! The report in each form: text for a terminal, JSON for scripts, Markdown to attach to a bug
//! or a pull request, JUnit XML for CI (one test case per rule), and a session the explorer
//! opens (each rule's evidence a dialogue of its own).

use crate::certify::{Evidence, Report, RuleResult, Verdict};
use crate::client::generation::StateHome;
use crate::client::turn::{Reply, Turn};
use crate::session::{DialogueRecord, Session};
use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
use serde_json::{Value, json};
use std::fmt::Write;
use std::time::Duration;

fn mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✓",
        Verdict::Fail => "✗",
        Verdict::Skip => "-",
    }
}

fn totals(r: &Report) -> String {
    format!(
        "{} passed, {} failed, {} skipped ({:.1} s)",
        r.count(Verdict::Pass),
        r.count(Verdict::Fail),
        r.count(Verdict::Skip),
        r.seconds
    )
}

/// The members of a message that say what it is about: the common fields (identifiers,
/// times, metadata), the same in every turn, are left out; the JSON report and the saved
/// session keep them. A Mode other than `mode` (what the message should carry: RQ for a
/// Request, RS for a Response) is kept: it is what is wrong with it.
fn gist(text: &str, mode: &str) -> String {
    match crate::protocol::json::from_str::<Value>(text) {
        Ok(Value::Object(mut m)) => {
            let turn = m.get("TurnIndex").map(|t| format!("turn {t} "));
            let odd_mode = m.get("Mode").filter(|m| m.as_str() != Some(mode)).cloned();
            for k in crate::protocol::message::COMMON_FIELDS {
                m.remove(k);
            }
            // The Kind first: it says what the rest is.
            let mut shown = serde_json::Map::new();
            if let Some(kind) = m.remove("Kind") {
                shown.insert("Kind".into(), kind);
            }
            if let Some(mode) = odd_mode {
                shown.insert("Mode".into(), mode);
            }
            shown.extend(m);
            format!("{}{}", turn.unwrap_or_default(), Value::Object(shown))
        }
        _ => text.to_owned(),
    }
}

/// What came back in a turn, in one line.
fn reply_line(turn: &Turn) -> String {
    let text = match &turn.reply {
        Reply::Response(r) => format!("Response {}", gist(r.text(), "RS")),
        Reply::ToolError(t) => format!("tool error: {}", t.replace('\n', " | ")),
        Reply::Error(e) => format!("no reply: {}", e.message),
    };
    cut(&text, 400)
}

fn cut(text: &str, n: usize) -> String {
    if text.chars().count() > n {
        format!("{}…", text.chars().take(n).collect::<String>())
    } else {
        text.to_owned()
    }
}

/// The evidence of a failed rule, as lines (a turn's Request and what came back).
pub fn evidence_lines(result: &RuleResult) -> Vec<String> {
    let mut out = Vec::new();
    for e in &result.evidence {
        match e {
            Evidence::Turn { dialogue, turn, .. } => {
                out.push(format!(
                    "[{dialogue}] → {}",
                    cut(&gist(turn.request.text(), "RQ"), 400)
                ));
                out.push(format!("[{dialogue}] ← {}", reply_line(turn)));
            }
            Evidence::Raw {
                transport,
                sent,
                received,
            } => {
                out.push(format!("[{transport}] → {sent}"));
                out.push(format!("[{transport}] ← {received}"));
            }
        }
    }
    out
}

pub fn text(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "certify {} ({}, MCP {})",
        r.server,
        r.interface.name(),
        r.protocol
    );
    for l in &r.learnt {
        let _ = writeln!(out, "  {l}");
    }
    let mut family = None;
    for result in &r.rules {
        if family != Some(result.rule.family) {
            family = Some(result.rule.family);
            let _ = writeln!(out, "\n{}", result.rule.family.name());
        }
        let _ = writeln!(
            out,
            "  {} {:<36} {}",
            mark(result.verdict),
            result.rule.name,
            result.summary
        );
        if result.verdict == Verdict::Fail {
            for p in result.problems.iter().skip(1) {
                let _ = writeln!(out, "        {p}");
            }
            for line in evidence_lines(result).iter().take(12) {
                let _ = writeln!(out, "        {line}");
            }
        }
    }
    let _ = writeln!(out, "\n{}", totals(r));
    out
}

fn evidence_json(e: &Evidence) -> Value {
    match e {
        Evidence::Turn {
            dialogue,
            dialog_id,
            protocol,
            turn,
        } => json!({
            "dialogue": dialogue,
            "dialogId": dialog_id,
            "protocol": protocol,
            "turn": turn,
        }),
        Evidence::Raw {
            transport,
            sent,
            received,
        } => json!({"transport": transport, "sent": sent, "received": received}),
    }
}

pub fn json(r: &Report) -> Value {
    let rules: Vec<Value> = r
        .rules
        .iter()
        .map(|x| {
            let summary = if x.verdict == Verdict::Fail {
                x.problems.join("; ")
            } else {
                x.summary.clone()
            };
            json!({
                "id": x.rule.name,
                "section": x.rule.section,
                "verdict": x.verdict,
                "summary": summary,
                "evidence": if x.verdict == Verdict::Fail {
                    x.evidence.iter().map(evidence_json).collect::<Vec<_>>()
                } else {
                    Vec::new()
                },
            })
        })
        .collect();
    json!({
        "server": r.server,
        "interface": r.interface.code(),
        "protocol": r.protocol,
        "rules": rules,
        "passed": r.count(Verdict::Pass),
        "failed": r.count(Verdict::Fail),
        "skipped": r.count(Verdict::Skip),
    })
}

/// A Markdown table cell: no line breaks, no bars.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn markdown(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# BKN conformance report: {}\n\n{} over MCP {}: **{}**\n",
        r.server,
        r.interface.name(),
        r.protocol,
        totals(r)
    );
    for l in &r.learnt {
        let _ = writeln!(out, "- {}", cell(l));
    }
    let _ = writeln!(out, "\n| | rule | section | verdict |\n|---|---|---|---|");
    for x in &r.rules {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {}: {} |",
            mark(x.verdict),
            x.rule.name,
            x.rule.section,
            x.verdict,
            cell(&x.summary)
        );
    }
    let failed: Vec<&RuleResult> = r
        .rules
        .iter()
        .filter(|x| x.verdict == Verdict::Fail)
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\n## Failures");
    }
    for x in failed {
        let _ = writeln!(
            out,
            "\n### `{}` ({})\n\n{}\n",
            x.rule.name, x.rule.section, x.rule.title
        );
        for p in &x.problems {
            let _ = writeln!(out, "- {}", cell(p));
        }
        let lines = evidence_lines(x);
        if !lines.is_empty() {
            let _ = writeln!(out, "\n```");
            for l in lines {
                let _ = writeln!(out, "{l}");
            }
            let _ = writeln!(out, "```");
        }
    }
    out
}

pub fn junit(r: &Report) -> String {
    let mut report = quick_junit::Report::new("bkn-explorer certify");
    let mut suite = TestSuite::new(format!("{} ({})", r.server, r.interface.name()));
    suite.set_time(Duration::from_secs_f64(r.seconds));
    for x in &r.rules {
        let status = match x.verdict {
            Verdict::Pass => TestCaseStatus::success(),
            Verdict::Skip => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(x.summary.clone());
                s
            }
            Verdict::Fail => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(x.problems.first().cloned().unwrap_or_default());
                s.set_type(x.rule.section);
                let mut text = x.problems.clone();
                text.push(String::new());
                text.extend(evidence_lines(x));
                s.set_description(text.join("\n"));
                s
            }
        };
        let mut case = TestCase::new(x.rule.name, status);
        case.set_classname(format!("certify.{}", x.rule.family.name()));
        case.set_time(Duration::from_secs_f64(x.seconds));
        suite.add_test_case(case);
    }
    report.add_test_suite(suite);
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- the report could not be written: {e} -->"))
}

/// Every rule's exchanges as a session: each of a rule's dialogues a dialogue named
/// `rule: dialogue`, its notes the verdict (and what went over the wire outside it).
pub fn session(r: &Report) -> Session {
    let mut session = Session {
        name: Some(format!("certify {}", r.server)),
        notes: Some(format!(
            "bkn-explorer certify of {} ({}, MCP {}): {}",
            r.server,
            r.interface.name(),
            r.protocol,
            totals(r)
        )),
        ..Session::default()
    };
    let server = session.add_server(&r.spec);
    for x in &r.rules {
        session.dialogues.extend(rule_dialogues(r, x, &server));
    }
    session
}

/// One rule's evidence as dialogues: its turns, by dialogue, each noting the verdict (a
/// rule without a BKN turn gets one dialogue for its verdict); the raw JSON-RPC exchanges
/// go in the first one's notes.
fn rule_dialogues(r: &Report, x: &RuleResult, server: &str) -> Vec<DialogueRecord> {
    let verdict = format!("{} {}: {}", x.rule.name, x.verdict, x.summary);
    let mut dialogues: Vec<DialogueRecord> = Vec::new();
    for e in &x.evidence {
        let Evidence::Turn {
            dialogue,
            dialog_id,
            protocol,
            turn,
        } = e
        else {
            continue;
        };
        let name = format!("{}: {dialogue}", x.rule.name);
        let record = match dialogue_of_turn(&dialogues, &name, dialog_id, protocol) {
            Some(at) => {
                let record = &mut dialogues[at];
                if record.name.as_deref() != Some(&name) {
                    let notes = record.notes.get_or_insert_with(String::new);
                    let _ = write!(
                        notes,
                        "\nturn {} on: {dialogue}, the same dialogue under its DialogID",
                        record.turns.len()
                    );
                }
                record
            }
            None => {
                dialogues.push(DialogueRecord {
                    name: Some(name),
                    server: server.to_owned(),
                    interface: r.interface,
                    dialog_id: dialog_id.clone(),
                    notes: Some(verdict.clone()),
                    defaults: None,
                    protocol_version: Some(protocol.clone()),
                    turns: Vec::new(),
                });
                dialogues.last_mut().expect("just pushed")
            }
        };
        record.turns.push((**turn).clone());
    }
    if dialogues.is_empty() {
        // A rule without a BKN turn (what the server declares, raw JSON-RPC): its verdict
        // and exchanges in a dialogue's notes.
        dialogues.push(DialogueRecord {
            name: Some(x.rule.name.to_owned()),
            server: server.to_owned(),
            interface: r.interface,
            dialog_id: format!("certify-{}", x.rule.name),
            notes: Some(verdict.clone()),
            defaults: None,
            protocol_version: Some(r.protocol.clone()),
            turns: Vec::new(),
        });
    }
    let raw = raw_exchanges(x);
    if !raw.is_empty()
        && let Some(first) = dialogues.first_mut()
    {
        let notes = first.notes.get_or_insert_with(String::new);
        notes.push_str("\n\n");
        notes.push_str(&raw.join("\n"));
    }
    dialogues
}

/// Which of a rule's dialogues so far a turn belongs to: its own (by name and DialogID), or,
/// over MCP 2026-07-28, the one whose DialogID it goes on under. The server keeps a dialogue by
/// its DialogID there (MCP-BINDING section 3): a rule's dialogue that goes on under the
/// DialogID of an earlier one, from a new connection, is that dialogue on the server, and is
/// recorded as it (as the explorer records a reconnect under the same DialogID), so that
/// `validate` and `replay` read its turns after the earlier ones: as a dialogue of its own,
/// its first turn was judged without the commitments its own dialogue had made.
fn dialogue_of_turn(
    dialogues: &[DialogueRecord],
    name: &str,
    dialog_id: &str,
    protocol: &str,
) -> Option<usize> {
    let goes_on = |d: &DialogueRecord| {
        StateHome::of(protocol) == StateHome::DialogId
            && d.dialog_id == dialog_id
            && d.protocol_version.as_deref() == Some(protocol)
    };
    (dialogues.iter())
        .position(|d| d.name.as_deref() == Some(name) && d.dialog_id == dialog_id)
        .or_else(|| dialogues.iter().position(goes_on))
}

/// A rule's raw JSON-RPC exchanges, as the notes show them.
fn raw_exchanges(x: &RuleResult) -> Vec<String> {
    x.evidence
        .iter()
        .filter_map(|e| match e {
            Evidence::Raw {
                transport,
                sent,
                received,
            } => Some(format!(
                "[{transport}] → {sent}\n[{transport}] ← {received}"
            )),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::gist;

    /// A message's evidence line leaves out the fields every turn has, but a Mode it should
    /// not carry is what is wrong with it and stays (shapes.tool-error's wrong-Mode Request).
    #[test]
    fn the_gist_keeps_a_wrong_mode() {
        let request = r#"{"Header":"PGM-KDA-V1.0","Mode":"RS","TurnIndex":2,"Kind":"semantic_grounding","Terms":[{"Text":"x"}]}"#;
        assert_eq!(
            gist(request, "RQ"),
            r#"turn 2 {"Kind":"semantic_grounding","Mode":"RS","Terms":[{"Text":"x"}]}"#
        );
        let right = request.replace(r#""RS""#, r#""RQ""#);
        assert!(
            !gist(&right, "RQ").contains("Mode"),
            "{}",
            gist(&right, "RQ")
        );
        let response = r#"{"Header":"PGM-KDA-V1.0","Mode":"RQ","Outcome":"answered"}"#;
        assert!(gist(response, "RS").contains(r#""Mode":"RQ""#));
    }
}
