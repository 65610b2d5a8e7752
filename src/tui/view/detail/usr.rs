//! The BKN-USR tab: the refined User State, its engagement, and where it came from.

use super::dac::no_response;
use super::{Content, heading};
use crate::tui::view::text::{bar, bar_parts, cut, wrap_window};
use ratatui::text::{Line, Span};
use serde_json::Value;

fn text(v: &Value, name: &str) -> String {
    v.get(name)
        .map(|x| {
            x.as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| x.to_string())
        })
        .unwrap_or_default()
}

pub fn user_state<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    if let Some(lines) = no_response(c) {
        return lines;
    }
    let t = &c.app.theme;
    let r = c.selected.response.as_ref().expect("a Response");
    let outcome = text(r, "Outcome");
    let state = r.get("RefinedUserState").cloned().unwrap_or(Value::Null);
    let mut lines = vec![Line::from(vec![
        Span::styled(
            format!("{}  ", text(&state, "UserID")),
            t.bold(t.colors.accent),
        ),
        Span::styled(outcome.replace('_', " "), t.bold(t.outcome_text(&outcome))),
        Span::styled(
            state
                .get("Cycle")
                .map(|c| format!("   cycle {c}"))
                .unwrap_or_default(),
            t.muted(),
        ),
    ])];
    if let Some(e) = r.get("Engagement") {
        let level = e.get("Level").and_then(Value::as_f64);
        let gauge_width = (c.width.saturating_sub(34)).clamp(10, 40);
        let mut spans = vec![Span::styled("Engagement  ", t.muted())];
        if let Some(level) = level {
            let (filled, empty) = bar_parts(level, gauge_width);
            spans.push(Span::styled(filled, t.fg(t.colors.gauge)));
            spans.push(Span::styled(empty, t.fg(t.colors.gauge_bg)));
            spans.push(Span::styled(
                format!(" {level:.2}"),
                t.bold(t.colors.foreground),
            ));
        }
        if let Some(mode) = e.get("Mode").and_then(Value::as_str) {
            spans.push(Span::styled(format!("  {mode}"), t.bold(t.colors.accent)));
        }
        lines.push(Line::from(spans));
    }
    if state.is_null() {
        let why: Vec<String> = r
            .pointer("/Provenance/Evidence")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|e| e.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        lines.push(Line::styled(
            "no refined User State in this Response",
            t.muted(),
        ));
        for w in why {
            lines.extend(
                wrap_window(&w, c.width.saturating_sub(2), 0, 8)
                    .into_iter()
                    .map(|l| Line::styled(format!("  {l}"), t.fg(t.colors.warning))),
            );
        }
        return lines;
    }
    let attrs: Vec<Span> = ["CognitiveState", "Emotion", "SocialAttitude"]
        .iter()
        .flat_map(|k| {
            [
                Span::styled(format!("{k} "), t.muted()),
                Span::raw(format!("{}   ", text(&state, k))),
            ]
        })
        .collect();
    lines.push(Line::from(attrs));
    if let Some(f) = state.get("Focus") {
        lines.push(Line::from(vec![
            Span::styled("Focus ", t.muted()),
            Span::raw(format!("{} {}", text(f, "TargetType"), text(f, "TargetID"))),
        ]));
    }
    let list = |k: &str| {
        state
            .get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let hypotheses = list("Hypotheses");
    if !hypotheses.is_empty() {
        lines.push(heading(c.app, "Hypotheses"));
        for h in &hypotheses {
            let status = text(h, "Status");
            let (mark, color) = match status.as_str() {
                "supported" => ("✓", t.colors.success),
                "rejected" => ("✗", t.colors.error),
                _ => ("?", t.colors.warning),
            };
            let confidence = h.get("Confidence").and_then(Value::as_f64).unwrap_or(0.0);
            lines.push(Line::from(vec![
                Span::styled(format!("  {mark} "), t.fg(color)),
                Span::raw(format!("{:<40} ", cut(&text(h, "Statement"), 40))),
                Span::styled(
                    format!("{} {confidence:.2} ", bar(confidence, 10)),
                    t.fg(t.colors.gauge),
                ),
                Span::styled(status, t.fg(color)),
            ]));
        }
    }
    for (title, key, name) in [
        ("Intentions", "Intentions", "Intent"),
        ("Beliefs", "Beliefs", "Statement"),
    ] {
        let items = list(key);
        if !items.is_empty() {
            lines.push(heading(c.app, title));
            for i in &items {
                let confidence = i.get("Confidence").and_then(Value::as_f64).unwrap_or(0.0);
                lines.push(Line::from(vec![
                    Span::raw(format!("  {:<42} ", cut(&text(i, name), 42))),
                    Span::styled(
                        format!("{} {confidence:.2}", bar(confidence, 10)),
                        t.fg(t.colors.gauge),
                    ),
                ]));
            }
        }
    }
    let goals = list("Goals");
    if !goals.is_empty() {
        lines.push(heading(c.app, "Goals"));
        lines.extend(
            goals
                .iter()
                .map(|g| Line::raw(format!("  • {}", g.as_str().unwrap_or_default()))),
        );
    }
    if let Some(a) = state.get("Answer") {
        lines.push(heading(c.app, "Answer to the Question"));
        lines.push(Line::from(vec![
            Span::styled("  Q ", t.muted()),
            Span::raw(text(a, "Question")),
        ]));
        for l in wrap_window(&text(a, "Text"), c.width.saturating_sub(4), 0, 6) {
            lines.push(Line::from(vec![
                Span::styled("  A ", t.muted()),
                Span::styled(l, t.fg(t.colors.accent)),
            ]));
        }
    }
    if let Some(p) = r.get("Provenance") {
        lines.push(heading(c.app, "Provenance"));
        let sources: Vec<String> = p
            .get("Sources")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        lines.push(Line::from(vec![
            Span::styled("  sources ", t.muted()),
            Span::raw(sources.join(", ")),
        ]));
        for (j, l) in wrap_window(&text(p, "Method"), c.width.saturating_sub(10), 0, 4)
            .into_iter()
            .enumerate()
        {
            let label = if j == 0 { "  method  " } else { "          " };
            lines.push(Line::from(vec![
                Span::styled(label, t.muted()),
                Span::raw(l),
            ]));
        }
        for e in p
            .get("Evidence")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let e = e.as_str().unwrap_or_default();
            let style = if e.starts_with("unused:") {
                t.fg(t.colors.warning)
            } else {
                t.fg(t.colors.foreground)
            };
            for (j, l) in wrap_window(e, c.width.saturating_sub(6), 0, 6)
                .into_iter()
                .enumerate()
            {
                lines.push(Line::styled(
                    format!("  {} {l}", if j == 0 { "•" } else { " " }),
                    style,
                ));
            }
        }
    }
    lines
}
