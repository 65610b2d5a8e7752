//! How a server's question is drawn: the message, then the form's fields (the one with the
//! focus marked `›`, so it shows without colour), the page to open, or the messages to reply
//! to and the reply's editor; what is wrong, then the keys.

use super::form::{Field, FieldKind, Form};
use super::{AskOverlay, Body};
use crate::client::answers::{Asking, SampledMessage};
use crate::tui::app::App;
use crate::tui::hits::Hits;
use crate::tui::view::overlays::{centered, input_line, open_box};
use crate::tui::view::text::wrap_window;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui_textarea::TextArea;

/// Label column width.
const LABEL: usize = 22;

pub fn render(frame: &mut Frame, app: &App, o: &AskOverlay, area: Rect, hits: &mut Hits) {
    // The box's inside is as wide as a 100-column box leaves, or the screen.
    let width = (100.min(area.width.saturating_sub(2)) as usize).saturating_sub(2);
    let named = o
        .ask
        .name
        .as_ref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    let title = format!(" The server asks{named}: {} ", o.ask.method);
    let body = body_lines(app, o, width, area.height);
    let foot = foot_lines(app, o);
    // The box fits what it shows (a small form, a small box), at most the screen.
    let wanted = body.lines.len() + foot.len() + body.editor_rows as usize + 3;
    let r = centered(area, 100, wanted.min(u16::MAX as usize) as u16);
    let inner = open_box(frame, app, r, &title, hits);
    // What fits: the lines around the focus, the editor, the foot.
    let body_room = (inner.height as usize).saturating_sub(foot.len() + body.editor_rows as usize);
    let skip = first_shown(body.lines.len(), body.focus_line, body_room);
    // A click on a field's line gives it the focus.
    for (field, &line) in body.field_lines.iter().enumerate() {
        if line >= skip && line - skip < body_room {
            let y = inner.y + (line - skip) as u16;
            hits.overlay_rows
                .push((Rect::new(inner.x, y, inner.width, 1), field));
        }
    }
    let shown: Vec<Line> = body.lines.into_iter().skip(skip).take(body_room).collect();
    let body_height = shown.len() as u16;
    frame.render_widget(
        Paragraph::new(shown),
        Rect::new(inner.x, inner.y, inner.width, body_height),
    );
    let mut y = inner.y + body_height;
    if let Body::Reply(editor) = &o.body {
        let rows = body
            .editor_rows
            .min(inner.height.saturating_sub(body_height + foot.len() as u16));
        reply_editor(frame, app, editor, Rect::new(inner.x, y, inner.width, rows));
        y += rows;
    }
    let foot_y = y.max(inner.y + inner.height.saturating_sub(foot.len() as u16));
    frame.render_widget(
        Paragraph::new(foot),
        Rect::new(
            inner.x,
            foot_y,
            inner.width,
            (inner.y + inner.height).saturating_sub(foot_y),
        ),
    );
}

/// What the box shows above its foot, and where the fields are in it.
struct BodyLines<'a> {
    lines: Vec<Line<'a>>,
    /// The line to keep in view (the field with the focus).
    focus_line: usize,
    /// The line of each field of a form.
    field_lines: Vec<usize>,
    /// The rows the reply's editor takes under the lines.
    editor_rows: u16,
}

/// The message, then the form, the page to open, or the messages to reply to.
fn body_lines<'a>(app: &App, o: &'a AskOverlay, width: usize, height: u16) -> BodyLines<'a> {
    let t = app.theme();
    let mut body = BodyLines {
        lines: wrap_window(&o.ask.message, width, 0, 6)
            .into_iter()
            .map(|l| Line::styled(l, t.bold(t.colors.foreground)))
            .collect(),
        focus_line: 0,
        field_lines: Vec::new(),
        editor_rows: 0,
    };
    body.lines.push(Line::raw(""));
    match (&o.body, &o.ask.asking) {
        (Body::Form(form), _) => {
            form_lines(app, form, width, &mut body.lines, &mut body.field_lines);
            body.focus_line = body.field_lines.get(form.focus).copied().unwrap_or(0);
        }
        (Body::Url, Asking::Url { url }) => {
            body.lines
                .push(Line::styled(url.clone(), t.bold(t.colors.accent)));
            body.lines.push(Line::styled(
                format!(
                    "Open this page in a browser and do what it asks; then {}.",
                    crate::tui::overlay::key_of(app.keymap(), &crate::tui::action::Action::Select)
                ),
                t.muted(),
            ));
        }
        (
            Body::Reply(_),
            Asking::Sampling {
                messages,
                system,
                max_tokens,
            },
        ) => {
            // The last messages, as many as leave room for the reply.
            let room = (height as usize).saturating_sub(18).max(2);
            body.lines.extend(sampling_lines(
                app,
                messages,
                system.as_deref(),
                width,
                room,
            ));
            body.lines.push(Line::styled(
                format!("Your reply, as a model would give it (at most {max_tokens} tokens):"),
                t.fg(t.colors.accent),
            ));
            body.editor_rows = 8;
        }
        _ => {}
    }
    body
}

/// A sampling request's system prompt, and its last messages (as many as fit in `room`
/// lines), oldest first.
fn sampling_lines<'a>(
    app: &App,
    messages: &[SampledMessage],
    system: Option<&str>,
    width: usize,
    room: usize,
) -> Vec<Line<'a>> {
    let mut lines: Vec<Line> = Vec::new();
    if let Some(system) = system {
        for l in wrap_window(&format!("system: {system}"), width, 0, 4) {
            lines.push(Line::styled(l, app.theme().muted()));
        }
    }
    let mut said = Vec::new();
    for m in messages.iter().rev() {
        let mut these: Vec<Line> = wrap_window(&format!("{}: {}", m.role, m.text), width, 0, 8)
            .into_iter()
            .map(Line::raw)
            .collect();
        if said.len() + these.len() > room {
            break;
        }
        these.reverse();
        said.extend(these);
    }
    said.reverse();
    lines.extend(said);
    lines
}

/// The foot: what is wrong, then the keys.
fn foot_lines<'a>(app: &App, o: &AskOverlay) -> Vec<Line<'a>> {
    let t = app.theme();
    let mut foot = Vec::new();
    if let Some(problem) = &o.problem {
        foot.push(Line::styled(format!("! {problem}"), t.bold(t.colors.error)));
    }
    use crate::tui::action::Action as A;
    let (first, moves): (_, &[(&[A], &str)]) = match o.body {
        Body::Form(_) => (
            "answer",
            &[
                (&[A::Complete, A::Up, A::Down], "field"),
                (&[A::NextDetailTab, A::PrevDetailTab], "choose"),
            ],
        ),
        Body::Url => ("done", &[]),
        Body::Reply(_) => ("send", &[(&[A::NewLine], "new line")]),
    };
    let mut entries: Vec<(&[A], &str)> = vec![(&[A::Select], first)];
    entries.extend_from_slice(moves);
    entries.extend_from_slice(&[(&[A::No], "decline"), (&[A::Cancel], "dismiss")]);
    let keys = crate::tui::overlay::key_hint(app.keymap(), &entries);
    foot.push(Line::styled(keys, t.fg(t.colors.key_hint)));
    foot
}

/// The first line shown: the focused field (and a line under it) stays in view.
fn first_shown(lines: usize, focus_line: usize, room: usize) -> usize {
    if lines > room {
        (focus_line + 2).saturating_sub(room).min(lines - room)
    } else {
        0
    }
}

/// The reply's editor, in a box, its cursor shown without colour.
fn reply_editor(frame: &mut Frame, app: &App, editor: &TextArea<'static>, r: Rect) {
    let mut editor = editor.clone();
    editor.set_block(
        Block::default()
            .borders(Borders::ALL)
            .border_style(app.theme().border(true)),
    );
    editor.set_cursor_style(Style::default().add_modifier(Modifier::REVERSED));
    editor.set_cursor_line_style(Style::default());
    frame.render_widget(&editor, r);
}

fn form_lines<'a>(
    app: &App,
    form: &'a Form,
    width: usize,
    lines: &mut Vec<Line<'a>>,
    field_lines: &mut Vec<usize>,
) {
    let t = app.theme();
    if form.fields.is_empty() {
        let k = |a| crate::tui::overlay::key_of(app.keymap(), &a);
        lines.push(Line::styled(
            format!(
                "The form has no fields: {} answers, {} declines.",
                k(crate::tui::action::Action::Select),
                k(crate::tui::action::Action::No)
            ),
            t.muted(),
        ));
    }
    for (i, field) in form.fields.iter().enumerate() {
        let focused = i == form.focus;
        field_lines.push(lines.len());
        let marker = if focused { "› " } else { "  " };
        let required = if field.required { " *" } else { "" };
        let label = format!("{marker}{}{required}", field.label);
        let mut spans = vec![Span::styled(
            format!("{label:<LABEL$} "),
            if focused {
                t.bold(t.colors.accent)
            } else {
                t.fg(t.colors.foreground)
            },
        )];
        spans.extend(value_spans(app, field, focused));
        lines.push(Line::from(spans));
        let pad = " ".repeat(LABEL + 1);
        if focused {
            let hint = hint(field, app.keymap());
            let about = match &field.description {
                Some(d) => format!("{d} ({hint})"),
                None => hint,
            };
            for l in wrap_window(&about, width.saturating_sub(LABEL + 1), 0, 3) {
                lines.push(Line::styled(format!("{pad}{l}"), t.muted()));
            }
        }
        if let Some(problem) = &field.problem {
            lines.push(Line::styled(
                format!("{pad}! {problem}"),
                t.bold(t.colors.error),
            ));
        }
    }
    if form.hidden > 0 {
        lines.push(Line::styled(
            format!(
                "(the schema has {} more fields than a form shows; they are left out)",
                form.hidden
            ),
            t.fg(t.colors.warning),
        ));
    }
    if let Some(problem) = &form.problem {
        lines.push(Line::styled(format!("! {problem}"), t.bold(t.colors.error)));
    }
}

/// What kind of value a field takes, in words.
/// What kind of value a field takes, in words, and the keys that set it (keys.toml's).
fn hint(field: &Field, keymap: &crate::tui::action::Keymap) -> String {
    use crate::tui::action::Action as A;
    let k = |a| crate::tui::overlay::key_of(keymap, &a);
    match &field.kind {
        FieldKind::Text {
            format: Some(f), ..
        } => format!("text, {f}"),
        FieldKind::Text { .. } => "text".into(),
        FieldKind::Number { integer: true, .. } => "a whole number".into(),
        FieldKind::Number { .. } => "a number".into(),
        FieldKind::Flag(_) => format!(
            "yes or no: {} yes, {} no, {} changes",
            k(A::FieldYes),
            k(A::FieldNo),
            k(A::NextDetailTab)
        ),
        FieldKind::One { .. } => {
            format!(
                "one of these: {}{}",
                k(A::PrevDetailTab),
                k(A::NextDetailTab)
            )
        }
        FieldKind::Many { .. } => format!(
            "any of these: {}{} move, {} picks",
            k(A::PrevDetailTab),
            k(A::NextDetailTab),
            k(A::Pick)
        ),
        FieldKind::Json { .. } => "JSON".into(),
    }
}

fn value_spans<'a>(app: &App, field: &'a Field, focused: bool) -> Vec<Span<'a>> {
    let t = app.theme();
    let picked = |on: bool, label: &str, under: bool| {
        let mut style = if on {
            t.bold(t.colors.accent)
        } else {
            t.muted()
        };
        if under {
            style = style.add_modifier(Modifier::UNDERLINED);
        }
        Span::styled(
            if on {
                format!("[{label}] ")
            } else {
                format!(" {label}  ")
            },
            style,
        )
    };
    match &field.kind {
        FieldKind::Text { input, .. }
        | FieldKind::Number { input, .. }
        | FieldKind::Json { input } => {
            if focused {
                input_line(app, input, "").spans
            } else if input.text().is_empty() {
                vec![Span::styled("(empty)", t.muted())]
            } else {
                vec![Span::raw(input.text().to_owned())]
            }
        }
        FieldKind::Flag(on) => vec![match on {
            Some(true) => Span::styled("[x] yes", t.bold(t.colors.accent)),
            Some(false) => Span::raw("[ ] no"),
            None => Span::styled("[ ] (not chosen)", t.muted()),
        }],
        FieldKind::One { choices, chosen } => choices
            .iter()
            .enumerate()
            .map(|(i, c)| picked(*chosen == Some(i), &c.label, false))
            .collect(),
        FieldKind::Many {
            choices,
            chosen,
            at,
        } => choices
            .iter()
            .zip(chosen)
            .enumerate()
            .map(|(i, (c, on))| picked(*on, &c.label, focused && i == *at))
            .collect(),
    }
}
