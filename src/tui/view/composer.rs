//! The composer: the form (a row per field, the Kind first for BKN-DAC) or the raw JSON, the
//! completion list at the cursor, and a line that says what the live check found. The text
//! is drawn here from the composer's buffers and scroll positions, so that what goes beside
//! it (a ✓ or ✗ per Process Action statement, a caret under a fault) lines up with it.

use crate::protocol::Interface;
use crate::protocol::process_action::ParseError;
use crate::tui::action::{Action, Pane};
use crate::tui::app::App;
use crate::tui::composer::fields::Widget;
use crate::tui::composer::{Composer, Field, Mode};
use crate::tui::dialogue::DialogueState;
use crate::tui::hits::Hits;
use crate::tui::theme::Theme;
use crate::tui::view::text::cut;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui_textarea::TextArea;

const LABEL: u16 = 12;

/// The footer's verdict: a remark, a syntax error, a field that is not JSON, a statement that
/// does not parse, the findings, the warnings, or "schema: ok".
fn check_line<'a>(app: &App, c: &Composer, width: usize) -> Line<'a> {
    let t = app.theme();
    if let Some(m) = &c.message {
        return Line::styled(cut(m, width), t.fg(t.colors.warning));
    }
    let ch = &c.checked;
    if let Some(e) = &ch.syntax {
        return Line::styled(cut(&format!("JSON: {e}"), width), t.fg(t.colors.error));
    }
    if let Some((field, e)) = &ch.field_error {
        return Line::styled(cut(&format!("{field}: {e}"), width), t.fg(t.colors.error));
    }
    if let Some((line, e)) = ch.statements.first() {
        return Line::styled(
            cut(&format!("Steps line {}: {e}", line + 1), width),
            t.fg(t.colors.error),
        );
    }
    match (ch.findings.as_slice(), ch.warnings.as_slice()) {
        ([f, rest @ ..], _) => {
            let more = if rest.is_empty() {
                String::new()
            } else {
                format!(" (+{} more)", rest.len())
            };
            Line::styled(
                cut(
                    &format!(
                        "{} finding{}: {f}{more}",
                        rest.len() + 1,
                        if rest.is_empty() { "" } else { "s" }
                    ),
                    width,
                ),
                t.fg(t.colors.finding),
            )
        }
        ([], [w, rest @ ..]) => {
            let more = if rest.is_empty() {
                String::new()
            } else {
                format!(" (+{} more)", rest.len())
            };
            Line::styled(
                cut(&format!("schema: ok · ⚠ {w}{more}"), width),
                t.fg(t.colors.warning),
            )
        }
        ([], []) => Line::styled("schema: ok", t.fg(t.colors.conforms)),
    }
}

pub fn render(frame: &mut Frame, app: &App, area: Rect, collapsed: bool, hits: &mut Hits) {
    let t = app.theme();
    let focused = app.focus() == Pane::Composer;
    let Some(d) = app.current_dialogue() else {
        let block = super::pane_block(app, " Compose ", focused);
        frame.render_widget(block, area);
        return;
    };
    let c = &d.composer;
    let what = match d.interface {
        Interface::Dac => format!("{} · {}", d.interface.name(), c.kind.as_str()),
        Interface::Usr => format!("{} · feedback", d.interface.name()),
    };
    let block = super::pane_block(app, format!(" Compose · {what} "), focused)
        .title_top(Line::styled(title_hint(app, d), t.fg(t.colors.key_hint)).right_aligned());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if collapsed {
        frame.render_widget(Paragraph::new(collapsed_line(app, d, inner.width)), inner);
        return;
    }
    let footer = Rect::new(
        inner.x,
        inner.y + inner.height.saturating_sub(1),
        inner.width,
        1,
    );
    let body = Rect::new(
        inner.x,
        inner.y,
        inner.width,
        inner.height.saturating_sub(1),
    );
    match c.mode {
        Mode::Raw => {
            let lines = editor_lines(
                t,
                &c.raw,
                c.raw_top,
                body.height as usize,
                body.width as usize,
                focused,
            );
            frame.render_widget(
                Paragraph::new(lines).style(t.fg(t.colors.foreground).bg(t.colors.input_bg)),
                body,
            );
        }
        Mode::Form => {
            let unseen = form(frame, app, d, body, focused, hits);
            unseen_rows(frame, app, area, unseen);
        }
    }
    frame.render_widget(Paragraph::new(footer_line(app, c, inner.width)), footer);
}

/// The title's right end: the next TurnIndex and the key that sends, or, for a watched
/// dialogue (the agent's), the key that takes it over.
fn title_hint(app: &App, d: &DialogueState) -> String {
    if d.status == crate::tui::dialogue::Status::Live {
        format!(
            " live, read-only · {} takes it over ",
            app.keymap().first_key(&Action::TakeOver)
        )
    } else if let crate::tui::dialogue::Status::Unfollowed(_) = d.status {
        // Short: the transcript's header and the status line say how it ended.
        format!(
            " ended, read-only · {} takes it over ",
            app.keymap().first_key(&Action::TakeOver)
        )
    } else {
        format!(
            " next turn {} · {} send ",
            d.link.next_turn(),
            app.keymap().first_key(&Action::Send)
        )
    }
}

/// The composer folded to one line: the live check and the keys that edit and send.
fn collapsed_line<'a>(app: &App, d: &DialogueState, width: u16) -> Line<'a> {
    let keys = if matches!(
        d.status,
        crate::tui::dialogue::Status::Live | crate::tui::dialogue::Status::Unfollowed(_)
    ) {
        format!(
            "   the agent's dialogue: {} takes it over",
            app.keymap().first_key(&Action::TakeOver)
        )
    } else {
        format!(
            "   {} edits · {} sends",
            app.keymap().first_key(&Action::Focus(Pane::Composer)),
            app.keymap().first_key(&Action::Send)
        )
    };
    let mut spans = check_line(app, &d.composer, width as usize / 2).spans;
    spans.push(Span::styled(keys, app.theme().muted()));
    Line::from(spans)
}

/// The footer: Form or Raw JSON (the one in use marked), the key that switches, and what
/// the live check found.
fn footer_line<'a>(app: &App, c: &Composer, width: u16) -> Line<'a> {
    let t = app.theme();
    let mut spans = match c.mode {
        Mode::Form => vec![
            Span::styled("[ Form ]", t.bold(t.colors.accent)),
            Span::styled("  Raw JSON", t.muted()),
        ],
        Mode::Raw => vec![
            Span::styled("  Form  ", t.muted()),
            Span::styled("[ Raw JSON ]", t.bold(t.colors.accent)),
        ],
    };
    spans.push(Span::styled(
        format!(" {}   ", app.keymap().first_key(&Action::ComposerMode)),
        t.fg(t.colors.key_hint),
    ));
    spans.extend(check_line(app, c, (width as usize).saturating_sub(28)).spans);
    Line::from(spans)
}

/// The lines of a text buffer from `top`, `height` of them, cut to `width` (scrolled
/// sideways to keep the cursor in view), the cursor drawn when `cursor`.
fn editor_lines<'a>(
    t: &Theme,
    editor: &TextArea,
    top: usize,
    height: usize,
    width: usize,
    cursor: bool,
) -> Vec<Line<'a>> {
    let crate_cursor = editor.cursor();
    let (row, col) = (crate_cursor.0, crate_cursor.1);
    let left = if cursor {
        col.saturating_sub(width.saturating_sub(1))
    } else {
        0
    };
    editor
        .lines()
        .iter()
        .enumerate()
        .skip(top)
        .take(height)
        .map(|(i, line)| {
            let chars: Vec<char> = line.chars().skip(left).collect();
            if cursor && i == row {
                let at = col - left;
                let before: String = chars.iter().take(at).collect();
                let under: String = chars.get(at).map(|c| c.to_string()).unwrap_or(" ".into());
                let after: String = chars
                    .iter()
                    .skip(at + 1)
                    .take(width.saturating_sub(at + 1))
                    .collect();
                Line::from(vec![
                    Span::raw(before),
                    Span::styled(under, Style::default().add_modifier(Modifier::REVERSED)),
                    Span::raw(after),
                ])
            } else {
                let shown: String = chars.into_iter().take(width).collect();
                Line::styled(shown, t.fg(t.colors.foreground))
            }
        })
        .collect()
}

/// The form: the Kind row (BKN-DAC), a row per field from the first that keeps the active
/// one in view, what else is sent, and the completion list over them. Returns the rows out
/// of view above and below.
fn form(
    frame: &mut Frame,
    app: &App,
    d: &DialogueState,
    area: Rect,
    focused: bool,
    hits: &mut Hits,
) -> (usize, usize) {
    let c = &d.composer;
    let mut y = area.y;
    let bottom = area.y + area.height;
    let kind_rows = usize::from(d.interface == Interface::Dac);
    let first = first_form_row(c, kind_rows, area.height, focused);
    if kind_rows == 1 && first == 0 {
        let r = Rect::new(area.x, y, area.width, 1);
        let hint = format!(
            "   {} {} or a letter changes it",
            own_key(app, Action::PrevKind),
            own_key(app, Action::NextKind)
        );
        let active = focused && c.row == 0;
        kind_row(
            frame,
            app.theme(),
            c,
            r,
            active.then_some(hint.as_str()),
            hits,
        );
        y += 1;
    }
    // Where the completion list goes, drawn last over whatever is below.
    let mut popup: Option<(u16, u16)> = None;
    // Rows with no room left under the last one drawn: said on the border.
    let mut unseen_below = 0;
    for (i, f) in c.fields.iter().enumerate() {
        let row = kind_rows + i;
        if row < first {
            continue;
        }
        if y >= bottom {
            unseen_below = c.fields.len() - i;
            break;
        }
        let active = focused && c.row == row;
        let rows = Rect::new(area.x, y, area.width, bottom - y);
        let (height, cursor) = form_field(frame, app.theme(), c, f, rows, active);
        hits.composer_rows
            .push((Rect::new(area.x, y, area.width, height), row));
        popup = popup.or(cursor);
        y += height;
        if active && c.completion.is_none() && y < bottom {
            y += why_nothing_completes(frame, app, d, f, Rect::new(area.x, y, area.width, 1));
        }
    }
    if !c.extra.is_empty() && y < bottom {
        also_sent(frame, app, c, Rect::new(area.x, y, area.width, 1));
    }
    if let (Some(comp), Some((below, x))) = (&c.completion, popup) {
        completion_list(frame, app, comp, below, x, hits);
    }
    (first, unseen_below)
}

/// A field's label, in the accent colour when its row is the active one.
fn label(t: &Theme, text: &str, active: bool) -> Span<'static> {
    let style = if active {
        t.bold(t.colors.accent)
    } else {
        t.muted()
    };
    Span::styled(
        format!(
            "{:<width$}",
            cut(text, LABEL as usize - 1),
            width = LABEL as usize
        ),
        style,
    )
}

/// The first row shown: rows scroll so that the active one (and a line under it for hints)
/// is in view.
fn first_form_row(c: &Composer, kind_rows: usize, height: u16, focused: bool) -> usize {
    let heights: Vec<u16> = (0..kind_rows)
        .map(|_| 1)
        .chain(c.fields.iter().map(Field::height))
        .collect();
    let mut first = 0usize;
    while focused
        && first < c.row
        && heights[first..=c.row.min(heights.len().saturating_sub(1))]
            .iter()
            .sum::<u16>()
            + 1
            > height
    {
        first += 1;
    }
    first
}

/// The Kind row: `< commitment >`, and how to change it when it is the active row.
/// The first key of one of the composer's own actions (keys.toml's `[composer]`).
fn own_key(app: &App, action: Action) -> String {
    let keys = app.keymap().keys_in(
        &action,
        crate::tui::action::Context::Pane(crate::tui::action::Pane::Composer),
    );
    keys.split(" / ").next().unwrap_or_default().to_owned()
}

/// `hint`: how to change it (the keys in use), when it is the active row.
fn kind_row(
    frame: &mut Frame,
    t: &Theme,
    c: &Composer,
    r: Rect,
    hint: Option<&str>,
    hits: &mut Hits,
) {
    let line = Line::from(vec![
        label(t, "Kind", hint.is_some()),
        Span::styled("< ", t.fg(t.colors.key_hint)),
        Span::styled(c.kind.as_str(), t.bold(t.colors.foreground)),
        Span::styled(" >", t.fg(t.colors.key_hint)),
        Span::styled(hint.unwrap_or_default().to_owned(), t.muted()),
    ]);
    hits.composer_rows.push((r, 0));
    frame.render_widget(Paragraph::new(line), r);
}

/// One field's row in `room` (from its top to the form's bottom): its label, the ✓/✗ gutter
/// of the Steps, and its text (the editor with its cursor when active, its help when
/// empty). Returns the height it took, and where the completion list goes when active.
fn form_field(
    frame: &mut Frame,
    t: &Theme,
    c: &Composer,
    f: &Field,
    room: Rect,
    active: bool,
) -> (u16, Option<(u16, u16)>) {
    let is_steps = f.spec.widget == Widget::Steps;
    let fault = (active && is_steps).then(|| step_fault(c, f)).flatten();
    let height = (f.height() + u16::from(fault.is_some())).min(room.height);
    let r = Rect::new(room.x, room.y, room.width, height);
    frame.render_widget(
        Paragraph::new(Line::from(label(t, &f.spec.label, active))),
        Rect::new(r.x, r.y, LABEL, 1),
    );
    let gutter = if is_steps { 2 } else { 0 };
    let field_area = Rect::new(
        r.x + LABEL + gutter,
        r.y,
        r.width.saturating_sub(LABEL + gutter),
        height,
    );
    if is_steps {
        let marks = insert_after(
            step_marks(t, c, f),
            fault.map(|(l, _)| l - f.top),
            Line::raw(" "),
        );
        frame.render_widget(
            Paragraph::new(marks),
            Rect::new(r.x + LABEL, r.y, 1, height),
        );
    }
    let lines = f.editor.lines();
    if active {
        let shown = active_field_lines(t, f, fault, field_area.width as usize);
        frame.render_widget(
            Paragraph::new(shown).style(t.fg(t.colors.foreground).bg(t.colors.input_bg)),
            field_area,
        );
        let cursor_row = f.editor.cursor().0.saturating_sub(f.top) as u16
            + u16::from(fault.is_some_and(|(l, _)| *l < f.editor.cursor().0));
        return (height, Some((field_area.y + cursor_row + 1, field_area.x)));
    }
    if lines.iter().all(|l| l.is_empty()) {
        frame.render_widget(
            Paragraph::new(Line::styled(
                cut(&f.spec.help, field_area.width as usize),
                t.muted(),
            )),
            field_area,
        );
    } else {
        let shown: Vec<Line> = lines
            .iter()
            .skip(f.top)
            .take(height as usize)
            .map(|l| Line::raw(cut(l, field_area.width as usize)))
            .collect();
        frame.render_widget(Paragraph::new(shown), field_area);
    }
    (height, None)
}

/// The statement under the cursor in the Steps, when it does not parse and is in view: its
/// caret row goes right under its line (the lines after it move down by one, and the field
/// grows by one).
fn step_fault<'c>(c: &'c Composer, f: &Field) -> Option<&'c (usize, ParseError)> {
    c.checked
        .statements
        .iter()
        .find(|(line, _)| *line == f.editor.cursor().0)
        .filter(|(line, _)| *line >= f.top && *line < f.top + f.height() as usize)
}

/// The Steps' gutter: ✓ beside a statement that parses, ✗ beside one that does not.
fn step_marks<'a>(t: &Theme, c: &Composer, f: &Field) -> Vec<Line<'a>> {
    let lines = f.editor.lines();
    (f.top..f.top + f.height() as usize)
        .map(|k| {
            let bad = c.checked.statements.iter().any(|(l, _)| *l == k);
            let empty = lines.get(k).is_none_or(|l| l.trim().is_empty());
            match (empty, bad) {
                (true, _) => Line::raw(" "),
                (false, true) => Line::styled("✗", t.fg(t.colors.error)),
                (false, false) => Line::styled("✓", t.fg(t.colors.success)),
            }
        })
        .collect()
}

/// The active field's lines with the cursor, and the caret under a fault.
fn active_field_lines<'a>(
    t: &Theme,
    f: &Field,
    fault: Option<&(usize, ParseError)>,
    width: usize,
) -> Vec<Line<'a>> {
    let shown = editor_lines(t, &f.editor, f.top, f.height() as usize, width, true);
    let Some((line, e)) = fault else {
        return shown;
    };
    let caret = format!(
        "{:indent$}{} {}",
        "",
        "^".repeat(e.length.max(1)),
        e.message,
        indent = e.position
    );
    insert_after(
        shown,
        Some(line - f.top),
        Line::styled(cut(&caret, width), t.fg(t.colors.error)),
    )
}

/// Why nothing completes in an empty field, when the server left the list empty: a line
/// under the field. Returns the rows it took (0 or 1).
fn why_nothing_completes(
    frame: &mut Frame,
    app: &App,
    d: &DialogueState,
    f: &Field,
    r: Rect,
) -> u16 {
    let t = app.theme();
    let why = app
        .workspace()
        .server(d.server)
        .map(|s| &s.vocabulary)
        .and_then(|v| match f.spec.completes {
            crate::tui::composer::fields::Completes::Words(w) => v.why_empty(w),
            _ => None,
        });
    let Some(why) = why else { return 0 };
    if !f.editor.lines().iter().all(|l| l.is_empty()) {
        return 0;
    }
    frame.render_widget(
        Paragraph::new(Line::styled(
            cut(
                &format!("{:LABEL$}{why}", "", LABEL = LABEL as usize),
                r.width as usize,
            ),
            t.fg(t.colors.warning),
        )),
        r,
    );
    1
}

/// The fields the Request carries that the form has no row for.
fn also_sent(frame: &mut Frame, app: &App, c: &Composer, r: Rect) {
    let keys: Vec<&str> = c.extra.keys().map(String::as_str).collect();
    let line = Line::styled(
        format!(
            "{:width$}also sent: {} ({} shows them)",
            "",
            keys.join(", "),
            app.keymap().first_key(&Action::ComposerMode),
            width = LABEL as usize
        ),
        app.theme().muted(),
    );
    frame.render_widget(Paragraph::new(line), r);
}

/// Where the form has rows out of view (a small terminal: the Release field of a commitment
/// at 80x24), said on the composer's bottom border, right: "↑ 1 above · ↓ 2 more (Tab)".
fn unseen_rows(frame: &mut Frame, app: &App, area: Rect, (above, below): (usize, usize)) {
    let mut parts = Vec::new();
    if above > 0 {
        parts.push(format!("↑ {above} above"));
    }
    if below > 0 {
        // The key that goes there (keys.toml's next-field).
        let next = app.keymap().keys_in(
            &Action::NextField,
            crate::tui::action::Context::Pane(crate::tui::action::Pane::Composer),
        );
        match next.split(" / ").next().filter(|k| !k.is_empty()) {
            Some(key) => parts.push(format!("↓ {below} more ({key})")),
            None => parts.push(format!("↓ {below} more")),
        }
    }
    if parts.is_empty() || area.height < 2 {
        return;
    }
    let text = format!(" {} ", parts.join(" · "));
    let width = (text.chars().count() as u16).min(area.width.saturating_sub(2));
    let r = Rect::new(
        area.x + area.width.saturating_sub(width + 1),
        area.y + area.height - 1,
        width,
        1,
    );
    frame.render_widget(
        Paragraph::new(Line::styled(
            text,
            app.theme().fg(app.theme().colors.key_hint),
        )),
        r,
    );
}

/// `lines` with `extra` put after line `after` (when given); what then falls below the
/// field is not drawn.
fn insert_after<'a>(
    mut lines: Vec<Line<'a>>,
    after: Option<usize>,
    extra: Line<'a>,
) -> Vec<Line<'a>> {
    if let Some(at) = after {
        let at = (at + 1).min(lines.len());
        lines.insert(at, extra);
    }
    lines
}

/// The completions as a list under the cursor's line (above it when there is no room
/// below), drawn over the panes: never cut off.
fn completion_list(
    frame: &mut Frame,
    app: &App,
    comp: &crate::tui::composer::Completion,
    below: u16,
    x: u16,
    hits: &mut Hits,
) {
    let t = app.theme();
    let screen = frame.area();
    let width = comp
        .items
        .iter()
        .map(|i| i.chars().count())
        .max()
        .unwrap_or(10)
        .clamp(12, 48) as u16
        + 4;
    let height = comp.items.len() as u16 + 2;
    let x = x.min(screen.width.saturating_sub(width));
    let y = if below + height <= screen.height.saturating_sub(1) {
        below
    } else {
        below.saturating_sub(height + 1)
    };
    let r = Rect::new(x, y, width.min(screen.width), height.min(screen.height));
    frame.render_widget(Clear, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.border(true))
        .title(Line::styled(
            format!(
                " {}{} {} ",
                own_key(app, Action::Up),
                own_key(app, Action::Down),
                own_key(app, Action::NextField)
            ),
            t.muted(),
        ))
        .style(t.base());
    let inner = block.inner(r);
    frame.render_widget(block, r);
    let lines: Vec<Line> = comp
        .items
        .iter()
        .enumerate()
        .map(|(k, item)| {
            hits.completion_items
                .push((Rect::new(inner.x, inner.y + k as u16, inner.width, 1), k));
            let line = Line::styled(format!(" {item}"), t.fg(t.colors.completion));
            if k == comp.selected {
                line.style(t.selected())
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
