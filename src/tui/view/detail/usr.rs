//! The BKN-USR tab: the refined User State, what changed since the dialogue's previous one,
//! its engagement, and where it came from. `RefinedUserState` is any object in the data
//! type: the reference server's members are laid out, any other member is shown as it came.

use super::dac::no_response;
use super::{Content, heading};
use crate::protocol::lenient::usr::{
    EngagementView, HypothesisView, ProvenanceView, UserStateView, UsrResponseView,
};
use crate::protocol::lenient::{Exchange, Field, List};
use crate::protocol::usr::HypothesisStatus;
use crate::session::changes::{Change, Mark};
use crate::tui::view::text::{bar, bar_parts, cut, wrap_capped, wrap_window, wrap_words};
use ratatui::text::{Line, Span};
use serde_json::Value;

fn response<'a>(c: &Content<'a>) -> Option<&'a UsrResponseView> {
    match &c.view.exchange {
        Exchange::Usr {
            response: Some(r), ..
        } => Some(r),
        _ => None,
    }
}

pub fn user_state<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    if let Some(lines) = no_response(c) {
        return lines;
    }
    let t = &c.app.theme();
    let Some(r) = response(c) else {
        return vec![Line::styled(
            "not a BKN-USR turn: the Raw tab shows its messages",
            t.muted(),
        )];
    };
    let state = r.refined_user_state.known();
    let mut lines = vec![title(c, r, state)];
    if let Field::Known(e) = &r.engagement {
        lines.push(engagement(c, e));
    }
    let Some(state) = state else {
        lines.extend(no_state(c, r));
        return lines;
    };
    lines.extend(since_previous(c));
    lines.extend(state_lines(c, state));
    if let Field::Known(p) = &r.provenance {
        lines.extend(provenance(c, p));
    }
    lines.extend(super::members(
        c.app,
        "Other members of the Response",
        &without_common(&r.other),
        c.width,
    ));
    lines
}

/// The members a message has beside the common ones.
fn without_common(other: &serde_json::Map<String, Value>) -> serde_json::Map<String, Value> {
    other
        .iter()
        .filter(|(k, _)| {
            !crate::protocol::message::COMMON_FIELDS.contains(&k.as_str()) && *k != "DescrMetadata"
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The User, the Outcome and the cycle.
fn title<'a>(c: &Content<'a>, r: &UsrResponseView, state: Option<&UserStateView>) -> Line<'a> {
    let t = &c.app.theme();
    let mut spans = Vec::new();
    if let Some(s) = state {
        spans.push(Span::styled(
            format!("{}  ", s.user_id.str()),
            t.bold(t.colors.accent),
        ));
    }
    spans.push(super::outcome(c.app, &r.outcome));
    if let Some(cycle) = state.filter(|s| !s.cycle.is_absent()) {
        spans.push(Span::styled(
            format!("   cycle {}", cycle.cycle.text()),
            t.muted(),
        ));
    }
    Line::from(spans)
}

fn engagement<'a>(c: &Content<'a>, e: &EngagementView) -> Line<'a> {
    let t = &c.app.theme();
    let gauge_width = (c.width.saturating_sub(34)).clamp(10, 40);
    let mut spans = vec![Span::styled("Engagement  ", t.muted())];
    match &e.level {
        Field::Known(level) => {
            let (filled, empty) = bar_parts(level.get(), gauge_width);
            spans.push(Span::styled(filled, t.fg(t.colors.gauge)));
            spans.push(Span::styled(empty, t.fg(t.colors.gauge_bg)));
            spans.push(Span::styled(
                format!(" {:.2}", level.get()),
                t.bold(t.colors.foreground),
            ));
        }
        Field::Other(v) => spans.push(super::odd(c.app, v.to_string())),
        Field::Absent => {}
    }
    if !e.mode.is_absent() {
        spans.push(Span::raw("  "));
        spans.push(super::field(c.app, &e.mode, t.bold(t.colors.accent)));
    }
    Line::from(spans)
}

/// A Response with no refined User State (or one that is not an object), and why.
fn no_state<'a>(c: &Content<'a>, r: &UsrResponseView) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let mut lines = match r.refined_user_state.other() {
        Some(v) => vec![Line::from(vec![
            Span::styled("RefinedUserState  ", t.muted()),
            super::odd(c.app, v.to_string()),
        ])],
        None => vec![Line::styled(
            "no refined User State in this Response",
            t.muted(),
        )],
    };
    let evidence = r.provenance.known().map(|p| p.evidence.texts());
    for w in evidence.into_iter().flatten() {
        lines.extend(
            wrap_capped(&w, c.width.saturating_sub(2), 8)
                .into_iter()
                .map(|l| Line::styled(format!("  {l}"), t.fg(t.colors.warning))),
        );
    }
    lines
}

/// What changed since the dialogue's previous refined User State of the same User (and its
/// Engagement), as a diff: `+` added, `-` removed, `~` changed (readable without colour).
fn since_previous<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let index = c.selected.index;
    let user = user_of(&c.view.exchange);
    let Some((row, before)) = c.dialogue.transcript.turns()
        [..index.min(c.dialogue.transcript.len())]
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, v)| user_of(&v.exchange) == user)
        .find_map(|(i, v)| compared(&v.exchange).map(|s| (i, s)))
    else {
        return vec![Line::styled(
            "the first User State of this User in the dialogue: nothing to compare with",
            t.muted(),
        )];
    };
    let Some(after) = compared(&c.view.exchange) else {
        return Vec::new();
    };
    let since = c
        .dialogue
        .transcript
        .turn(row)
        .and_then(|v| v.summary.turn_index)
        .map(|n| format!("TurnIndex {n}"))
        .unwrap_or_else(|| format!("row {row}"));
    let changes = crate::session::changes::changes(&before, &after);
    if changes.is_empty() {
        return vec![Line::styled(
            format!("= no change since {since}"),
            t.muted(),
        )];
    }
    let mut lines = vec![heading(
        c.app,
        format!(
            "{} change{} since {since}",
            changes.len(),
            if changes.len() == 1 { "" } else { "s" }
        ),
    )];
    for change in &changes {
        lines.extend(wrap_words(change_line(c, change), c.width));
    }
    lines
}

/// The User a BKN-USR turn is about: the refined state's UserID, else the Request's.
fn user_of(exchange: &Exchange) -> Option<String> {
    let Exchange::Usr { request, response } = exchange else {
        return None;
    };
    let state = response
        .as_ref()
        .and_then(|r| r.refined_user_state.known())
        .filter(|s| !s.user_id.is_absent());
    match state {
        Some(s) => Some(s.user_id.str().into_owned()),
        None => (!request.user_id.is_absent()).then(|| request.user_id.str().into_owned()),
    }
}

/// The members compared from one turn to the next: the refined state and the engagement.
fn compared(exchange: &Exchange) -> Option<Value> {
    let Exchange::Usr {
        response: Some(r), ..
    } = exchange
    else {
        return None;
    };
    let state = serde_json::to_value(r.refined_user_state.known()?).ok()?;
    let mut compared = serde_json::Map::new();
    compared.insert("RefinedUserState".into(), state);
    if !r.engagement.is_absent() {
        compared.insert(
            "Engagement".into(),
            serde_json::to_value(&r.engagement).ok()?,
        );
    }
    Some(Value::Object(compared))
}

fn change_line<'a>(c: &Content<'a>, change: &Change) -> Line<'a> {
    let t = &c.app.theme();
    let color = match change.mark {
        Mark::Added => t.colors.diff_replayed,
        Mark::Removed => t.colors.diff_recorded,
        Mark::Changed => t.colors.warning,
    };
    let path = change
        .path
        .strip_prefix("RefinedUserState.")
        .unwrap_or(&change.path);
    let show = |v: &Option<Value>| {
        v.as_ref()
            .map(|v| cut(&crate::protocol::lenient::raw_text(v), 60))
            .unwrap_or_default()
    };
    let value = match change.mark {
        Mark::Added => show(&change.after),
        Mark::Removed => show(&change.before),
        Mark::Changed => format!("{} → {}", show(&change.before), show(&change.after)),
    };
    Line::from(vec![
        Span::styled(
            format!("  {} {path}  ", change.mark.symbol()),
            t.bold(color),
        ),
        Span::styled(value, t.fg(color)),
    ])
}

/// The refined User State, member by member.
fn state_lines<'a>(c: &Content<'a>, state: &UserStateView) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let mut lines = attributes(c, state);
    match &state.focus {
        Field::Known(f) => lines.push(Line::from(vec![
            Span::styled("Focus ", t.muted()),
            Span::raw(format!("{} {}", f.target_type.str(), f.target_id.str())),
        ])),
        Field::Other(v) => lines.push(Line::from(vec![
            Span::styled("Focus ", t.muted()),
            super::odd(c.app, v.to_string()),
        ])),
        Field::Absent => {}
    }
    lines.extend(hypotheses(c, &state.hypotheses));
    let intentions = state
        .intentions
        .items()
        .iter()
        .map(|i| i.known().map(|i| (i.intent.str(), &i.confidence)));
    lines.extend(scored(c, "Intentions", &state.intentions, intentions));
    let beliefs = state
        .beliefs
        .items()
        .iter()
        .map(|b| b.known().map(|b| (b.statement.str(), &b.confidence)));
    lines.extend(scored(c, "Beliefs", &state.beliefs, beliefs));
    if !state.goals.is_absent() {
        lines.push(heading(c.app, "Goals"));
        lines.extend(
            state
                .goals
                .texts()
                .into_iter()
                .map(|g| Line::raw(format!("  • {g}"))),
        );
    }
    lines.extend(answer(c, state));
    lines.extend(super::members(
        c.app,
        "Other members of the User State",
        &state.other,
        c.width,
    ));
    lines
}

/// CognitiveState, Emotion and SocialAttitude on one line (wrapped when narrow).
fn attributes<'a>(c: &Content<'a>, state: &UserStateView) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let mut lines = Vec::new();
    let attributes = [
        ("CognitiveState", &state.cognitive_state),
        ("Emotion", &state.emotion),
        ("SocialAttitude", &state.social_attitude),
    ];
    if attributes.iter().any(|(_, v)| !v.is_absent()) {
        let spans: Vec<Span> = attributes
            .iter()
            .flat_map(|(k, v)| {
                [
                    Span::styled(format!("{k} "), t.muted()),
                    super::field(c.app, v, t.fg(t.colors.foreground)),
                    Span::raw("   "),
                ]
            })
            .collect();
        lines.extend(wrap_words(Line::from(spans), c.width));
    }
    lines
}

/// The Answer to Basic Knowledge's Question, in the state.
fn answer<'a>(c: &Content<'a>, state: &UserStateView) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let mut lines = Vec::new();
    match &state.answer {
        Field::Known(a) => {
            lines.push(heading(c.app, "Answer to the Question"));
            lines.push(Line::from(vec![
                Span::styled("  Q ", t.muted()),
                Span::raw(a.question.str().into_owned()),
            ]));
            for l in wrap_capped(&a.text.str(), c.width.saturating_sub(4), 6) {
                lines.push(Line::from(vec![
                    Span::styled("  A ", t.muted()),
                    Span::styled(l, t.fg(t.colors.accent)),
                ]));
            }
        }
        Field::Other(v) => lines.push(Line::from(vec![
            Span::styled("Answer ", t.muted()),
            super::odd(c.app, v.to_string()),
        ])),
        Field::Absent => {}
    }
    lines
}

/// A heading, and a list member that is not an array as its JSON.
fn list_head<'a, T>(c: &Content<'a>, title: &str, list: &List<T>) -> Vec<Line<'a>> {
    if list.is_absent() || (list.items().is_empty() && list.other().is_none()) {
        return Vec::new();
    }
    let mut lines = vec![heading(c.app, title.to_owned())];
    if let Some(v) = list.other() {
        lines.push(Line::from(vec![
            Span::raw("  "),
            super::odd(c.app, v.to_string()),
        ]));
    }
    lines
}

fn hypotheses<'a>(c: &Content<'a>, list: &List<HypothesisView>) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let mut lines = list_head(c, "Hypotheses", list);
    for h in list.items() {
        let Field::Known(h) = h else {
            lines.push(odd_element(c, h));
            continue;
        };
        let (mark, color) = match h.status.known() {
            Some(HypothesisStatus::Supported) => ("✓", t.colors.success),
            Some(HypothesisStatus::Rejected) => ("✗", t.colors.error),
            Some(HypothesisStatus::Open) => ("?", t.colors.warning),
            None => ("?", t.colors.error),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("  {mark} "), t.fg(color)),
            Span::raw(format!("{:<40} ", cut(&h.statement.str(), 40))),
            confidence(c, &h.confidence),
            Span::raw(" "),
            super::field(c.app, &h.status, t.fg(color)),
        ]));
    }
    lines
}

/// An element of a list that is not the object the reference server's shape has.
fn odd_element<'a, T>(c: &Content<'a>, item: &Field<T>) -> Line<'a> {
    Line::from(vec![
        Span::raw("  "),
        super::odd(
            c.app,
            item.other().map(|v| v.to_string()).unwrap_or_default(),
        ),
    ])
}

/// A confidence as a gauge and its value; one that is not a number as it came.
fn confidence<'a>(c: &Content<'a>, value: &Field<crate::protocol::message::Fraction>) -> Span<'a> {
    let t = &c.app.theme();
    match value {
        Field::Known(v) => Span::styled(
            format!("{} {:.2}", bar(v.get(), 10), v.get()),
            t.fg(t.colors.gauge),
        ),
        Field::Other(v) => super::odd(c.app, v.to_string()),
        Field::Absent => Span::raw(""),
    }
}

/// Intentions and Beliefs: a text and a confidence each.
fn scored<'a, 's, T>(
    c: &Content<'a>,
    title: &str,
    list: &List<T>,
    rows: impl Iterator<
        Item = Option<(
            std::borrow::Cow<'s, str>,
            &'s Field<crate::protocol::message::Fraction>,
        )>,
    >,
) -> Vec<Line<'a>> {
    let mut lines = list_head(c, title, list);
    for (row, item) in rows.zip(list.items()) {
        match row {
            Some((text, value)) => lines.push(Line::from(vec![
                Span::raw(format!("  {:<42} ", cut(&text, 42))),
                confidence(c, value),
            ])),
            None => lines.push(odd_element(c, item)),
        }
    }
    lines
}

fn provenance<'a>(c: &Content<'a>, p: &ProvenanceView) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let mut lines = vec![heading(c.app, "Provenance")];
    // Sources and method wrap under their label (a long list of sources is never cut).
    for (label, text) in [
        ("  sources ", p.sources.texts().join(", ")),
        ("  method  ", p.method.str().into_owned()),
    ] {
        for (j, l) in wrap_window(&text, c.width.saturating_sub(10), 0, usize::MAX)
            .into_iter()
            .enumerate()
        {
            let label = if j == 0 { label } else { "          " };
            lines.push(Line::from(vec![
                Span::styled(label, t.muted()),
                Span::raw(l),
            ]));
        }
    }
    // Evidence is free text from the server: shown as it is, never read for meaning.
    for e in p.evidence.texts() {
        for (j, l) in wrap_window(&e, c.width.saturating_sub(4), 0, usize::MAX)
            .into_iter()
            .enumerate()
        {
            lines.push(Line::raw(format!(
                "  {} {l}",
                if j == 0 { "•" } else { " " }
            )));
        }
    }
    lines
}
