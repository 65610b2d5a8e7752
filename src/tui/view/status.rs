//! The status line: where the explorer is (server, DialogID, next TurnIndex, connection) and
//! the keys that matter now, or a notice.

use crate::tui::action::{Action, Context, Pane};
use crate::tui::app::App;
use crate::tui::dialogue::Status;
use crate::tui::notices::Notice;
use crate::tui::view::text::{cut, short_id};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// How much of where the explorer is the status line says.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Detail {
    /// Only the server and what is unsaved.
    Short,
    /// Without where the M-Instance came from and the protocol version.
    Medium,
    Full,
}

/// Where the explorer is, at a level of detail.
fn context(app: &App, detail: Detail) -> String {
    let full = detail >= Detail::Medium;
    let mut left = String::from(" ");
    if let Some(d) = app.current_dialogue()
        && let Some(server) = app.workspace().server(d.server)
    {
        left.push_str(&server.name);
        if full {
            if let Some(id) = d.link.dialog_id() {
                left.push_str(&format!(" · dialog {}", short_id(id)));
            }
            left.push_str(&format!(" · turn {}", d.link.next_turn()));
            // The M-Instance its Requests are filled with, and where it came from.
            if let Some(ch) = &d.defaults
                && detail == Detail::Full
            {
                use crate::client::defaults::Origin;
                let from = match &ch.m_instance {
                    Origin::BuiltIn => "built in".to_owned(),
                    Origin::Server(uri) => uri.clone(),
                    Origin::Session => "session".to_owned(),
                    Origin::User(_) => "set by you".to_owned(),
                };
                left.push_str(&format!(" · {} ({from})", ch.values.m_instance));
            }
            let state = match &d.status {
                // The generation and where the dialogue's state lives (MCP-BINDING section 3).
                Status::Open if detail == Detail::Full => match server.summary.as_ref() {
                    Some(s) => format!(
                        "connected {} ({})",
                        s.protocol_version,
                        match crate::client::generation::StateHome::of(&s.protocol_version) {
                            crate::client::generation::StateHome::McpSession => "in its session",
                            crate::client::generation::StateHome::DialogId => "by DialogID",
                        }
                    ),
                    None => "connected".into(),
                },
                Status::Open => "connected".into(),
                Status::Connecting => "connecting".into(),
                Status::Recorded => "recorded".into(),
                Status::Live => "live (watched, read-only)".into(),
                Status::Unfollowed(how) => format!("{} (watched, read-only)", how.said()),
                Status::Failed(_) => "failed".into(),
                Status::Closed(_) => "closed".into(),
            };
            left.push_str(&format!(" · {state}"));
        }
    } else {
        left.push_str("no dialogue");
    }
    if app.session().unsaved() > 0 {
        left.push_str(&format!(" · ● {} unsaved", app.session().unsaved()));
    }
    left
}

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let t = app.theme();
    let c = &t.colors;
    let base = t.fg(c.status_fg).bg(c.status_bg);
    let width = area.width as usize;
    // Where keys go, never in doubt: the line starts with the mode, a word read without
    // colour: EDIT while a text input has the focus (letters are text; in reverse video),
    // NAV otherwise (letters are commands). An overlay takes every key itself.
    let badge = match (app.overlay.is_none(), app.typing()) {
        (false, _) => "",
        (true, true) => " ✎ EDIT ",
        (true, false) => " NAV ",
    };
    let badge_style = if app.typing() {
        t.selected().add_modifier(ratatui::style::Modifier::BOLD)
    } else {
        base.add_modifier(ratatui::style::Modifier::BOLD)
    };
    // A certify run hidden (`q` in its pane) goes on: said here, with the key that shows it.
    let certifying = app
        .certify()
        .filter(|c| !c.shown && c.running())
        .map(|c| {
            format!(
                " certify {}/{} ({})",
                c.results.len(),
                c.total.map_or("?".into(), |n| n.to_string()),
                app.keymap().first_key(&Action::Certify)
            )
        })
        .unwrap_or_default();
    // The most detail that fits, leaving room for a notice (which comes first) or a hint.
    let wanted = 3
        + badge.chars().count()
        + certifying.chars().count()
        + app
            .notices
            .shown()
            // Room for a hint: in the composer, the first says what Enter does ("Enter
            // next field"), which is worth a shorter context.
            .map_or(
                if app.focus() == Pane::Composer {
                    20
                } else {
                    12
                },
                |n| n.text.chars().count().min(60),
            );
    let left = [Detail::Full, Detail::Medium]
        .into_iter()
        .map(|d| context(app, d))
        .find(|c| c.chars().count() + wanted <= width)
        .unwrap_or_else(|| context(app, Detail::Short));
    let room = (area.width as usize).saturating_sub(
        left.chars().count() + badge.chars().count() + certifying.chars().count() + 3,
    );
    let mut spans = vec![Span::styled(badge, badge_style), Span::styled(left, base)];
    if !certifying.is_empty() {
        spans.push(Span::styled(certifying, base.fg(c.accent)));
    }
    match app.notices.shown() {
        Some(n) => spans.extend(notice_spans(app, n, base, room)),
        None => spans.extend(hint_spans(app, base, room)),
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    spans.push(Span::styled(
        " ".repeat((area.width as usize).saturating_sub(used)),
        base,
    ));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The notice shown, cut to `room` with the key that shows all messages when it is longer.
fn notice_spans<'a>(app: &App, n: &Notice, base: Style, room: usize) -> Vec<Span<'a>> {
    let c = &app.theme().colors;
    let color = app.theme().severity(n.severity);
    let mut spans = vec![Span::styled(" │ ", base)];
    if n.text.chars().count() > room {
        // Cut: the whole of it is in the messages.
        let more = format!(" {} all", app.keymap().first_key(&Action::Messages));
        let room = room.saturating_sub(more.chars().count());
        spans.push(Span::styled(cut(&n.text, room), base.fg(color)));
        spans.push(Span::styled(more, base.fg(c.key_hint)));
    } else {
        spans.push(Span::styled(n.text.clone(), base.fg(color)));
    }
    spans
}

/// The keys worth knowing where the focus is, as many as fit in `room`.
fn hint_spans<'a>(app: &App, base: Style, room: usize) -> Vec<Span<'a>> {
    let c = &app.theme().colors;
    let k = |a: Action| app.keymap().first_key(&a);
    // The composer's own keys (keys.toml's `[composer]`).
    let own = |a: Action| {
        let keys = app.keymap().keys_in(&a, Context::Pane(Pane::Composer));
        keys.split(" / ").next().unwrap_or_default().to_owned()
    };
    let hints: Vec<(String, &str)> = match app.focus() {
        Pane::Composer => {
            let enter = app
                .current_dialogue()
                .map_or("next field", |d| d.composer.enter_does());
            // What Enter does, by the key that does it here (a new line is the editor's).
            let key = match enter {
                "accept" => own(Action::AcceptCompletion),
                "next field" => own(Action::ConfirmField),
                _ => "Enter".into(),
            };
            // What Enter does first: it changes as one types (the README sends the reader
            // here), and at 80 columns only the first hints fit.
            vec![
                (key, enter),
                (k(Action::Send), "send"),
                (k(Action::ComposerMode), "form/raw"),
                (own(Action::NextField), "next field"),
                (own(Action::ShowCompletions), "complete"),
                (k(Action::Cancel), "NAV"),
                (k(Action::Help), "help"),
            ]
        }
        _ => vec![
            (k(Action::FocusNext), "pane"),
            (k(Action::NewDialogue), "new dialogue"),
            (k(Action::Focus(Pane::Composer)), "compose"),
            (k(Action::Send), "send"),
            (k(Action::Save), "save"),
            (k(Action::ToggleLog), "log"),
            (k(Action::Messages), "messages"),
            (k(Action::Palette), "palette"),
            (k(Action::Help), "help"),
        ],
    };
    let mut spans = vec![Span::styled(" │", base)];
    let mut used = 0;
    for (key, what) in hints {
        let key = key.split(" / ").next().unwrap_or_default().to_owned();
        // An action keys.toml left without a key is not offered.
        if key.is_empty() {
            continue;
        }
        let len = key.chars().count() + what.chars().count() + 3;
        if used + len > room {
            break;
        }
        used += len;
        spans.push(Span::styled(format!(" {key}"), base.fg(c.key_hint)));
        spans.push(Span::styled(format!(" {what} "), base));
    }
    spans
}
