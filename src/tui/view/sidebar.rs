//! The servers and their dialogues, as a tree; on narrow screens, one line.

use crate::client::connection::ServerSummary;
use crate::client::oauth::SignInNotice;
use crate::protocol::Interface;
use crate::tui::action::Pane;
use crate::tui::app::{App, ServerState, ServerStatus, SidebarRow};
use crate::tui::dialogue::{DialogueState, Status};
use crate::tui::hits::Hits;
use crate::tui::ids::DialogueId;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

fn server_state<'a>(app: &App, status: &ServerStatus) -> (Span<'a>, &'static str) {
    let t = app.theme();
    match status {
        ServerStatus::Connected => (Span::styled("●", t.fg(t.colors.connected)), "connected"),
        ServerStatus::Connecting => (
            Span::styled(app.spinner().to_owned(), t.fg(t.colors.connecting)),
            "connecting",
        ),
        ServerStatus::Failed(_) => (Span::styled("○", t.fg(t.colors.failed)), "failed"),
        ServerStatus::Recorded => (Span::styled("◆", t.fg(t.colors.recorded)), "recorded"),
    }
}

/// Where a server's OAuth sign-in stands, in one line.
fn sign_in_line<'a>(app: &App, notice: &SignInNotice, width: usize) -> Line<'a> {
    let t = app.theme();
    let (text, colour) = match notice {
        SignInNotice::Open {
            browser: Some(_), ..
        } => (
            "  🔑 signing in: finish in the browser".to_owned(),
            t.colors.connecting,
        ),
        SignInNotice::Open { url, browser: None } => {
            (format!("  🔑 sign in at {url}"), t.colors.connecting)
        }
        SignInNotice::SignedIn { scopes, .. } if !scopes.is_empty() => (
            format!("  🔑 signed in · {}", scopes.join(" ")),
            t.colors.connected,
        ),
        SignInNotice::SignedIn { .. } => ("  🔑 signed in".to_owned(), t.colors.connected),
        SignInNotice::Refreshed { .. } => (
            "  🔑 signed in · token refreshed".to_owned(),
            t.colors.connected,
        ),
        SignInNotice::Failed { reason } => {
            (format!("  🔑 sign-in failed: {reason}"), t.colors.failed)
        }
    };
    Line::styled(super::text::cut(&text, width), t.fg(colour))
}

pub fn render(frame: &mut Frame, app: &App, area: Rect, hits: &mut Hits) {
    let t = app.theme();
    let focused = app.focus() == Pane::Sidebar;
    let block = super::pane_block(app, " Servers ", focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    for (row, entry) in app.sidebar_rows().into_iter().enumerate() {
        let selected = focused && row == app.sidebar().selected();
        let entry_lines = match entry {
            SidebarRow::Server(s) => app.workspace().server(s).map(|server| {
                server_lines(app, server, app.sidebar().is_expanded(s), selected, width)
            }),
            SidebarRow::Dialogue(d) => {
                dialogue_line(app, d, selected, width).map(|line| vec![line])
            }
        };
        let Some(entry_lines) = entry_lines else {
            continue;
        };
        let y = inner.y + lines.len() as u16;
        hits.sidebar_rows.push((
            Rect::new(inner.x, y, inner.width, entry_lines.len() as u16),
            entry,
        ));
        lines.extend(entry_lines);
    }
    if app.workspace().servers().is_empty() {
        lines.push(Line::styled("no server", t.muted()));
    }
    frame.render_widget(Paragraph::new(lines).style(t.base()), inner);
}

/// A server's row: its name, state and kind, and under it what it is (its tools and
/// generation, or why it failed), its sign-in, its M-Instance and its binding findings.
fn server_lines<'a>(
    app: &App,
    server: &ServerState,
    expanded: bool,
    selected: bool,
    width: usize,
) -> Vec<Line<'a>> {
    let t = app.theme();
    let (dot, _) = server_state(app, &server.status);
    let arrow = if expanded { "▼ " } else { "▶ " };
    let kind = server.spec.kind();
    let name_room = width.saturating_sub(kind.len() + 6);
    let mut line = Line::from(vec![
        Span::styled(arrow, t.muted()),
        Span::styled(
            format!("{:<name_room$}", super::text::cut(&server.name, name_room)),
            t.bold(t.colors.foreground),
        ),
        dot,
        Span::styled(format!(" {kind}"), t.muted()),
    ]);
    if selected {
        line = line.style(t.selected());
    }
    let mut lines = vec![line, server_detail(app, server, width)];
    if let Some(notice) = &server.sign_in {
        lines.push(sign_in_line(app, notice, width));
    }
    if let Some(summary) = &server.summary {
        lines.extend(summary_notes(app, summary, width));
    }
    lines
}

/// The line under a server's name: why it failed, its BKN tools and MCP generation, or
/// that it is a recorded session.
fn server_detail<'a>(app: &App, server: &ServerState, width: usize) -> Line<'a> {
    use crate::client::generation::StateHome;
    let t = app.theme();
    match (&server.status, &server.summary) {
        (ServerStatus::Failed(e), _) => Line::styled(
            format!(
                "  failed: {}",
                super::text::cut(e, width.saturating_sub(10))
            ),
            t.fg(t.colors.failed),
        ),
        (_, Some(summary)) => {
            let tools: Vec<&str> = summary.bkn_tools.values().map(String::as_str).collect();
            let tools = if tools.is_empty() {
                "no BKN tool".to_owned()
            } else {
                tools.join(" ")
            };
            // The generation and where the dialogue's state lives (MCP-BINDING section 3).
            let home = match StateHome::of(&summary.protocol_version) {
                StateHome::McpSession => "session",
                StateHome::DialogId => "by DialogID",
            };
            Line::from(vec![
                Span::styled(format!("  {tools}"), t.fg(t.colors.accent)),
                Span::styled(format!("  {} {home}", summary.protocol_version), t.muted()),
            ])
        }
        (ServerStatus::Recorded, None) => {
            Line::styled("  recorded session", t.fg(t.colors.recorded))
        }
        _ => Line::styled("  …", t.muted()),
    }
}

/// The M-Instance a server publishes (its dialogues fill Requests with it), and its first
/// binding finding.
fn summary_notes<'a>(app: &App, summary: &ServerSummary, width: usize) -> Vec<Line<'a>> {
    let t = app.theme();
    let mut lines = Vec::new();
    if let Some(p) = &summary.published {
        lines.push(Line::styled(
            super::text::cut(
                &format!(
                    "  {} · {}",
                    p.m_instance.as_deref().unwrap_or("?"),
                    p.source
                ),
                width,
            ),
            t.muted(),
        ));
    }
    if let Some(first) = summary.findings.first() {
        let n = summary.findings.len();
        lines.push(Line::styled(
            super::text::cut(
                &format!(
                    "  ⚠ {n} binding finding{}: {}",
                    if n == 1 { "" } else { "s" },
                    first.check
                ),
                width,
            ),
            t.fg(t.colors.finding),
        ));
    }
    lines
}

/// A dialogue's row under its server: its branch, number, short name (and DialogID), its
/// turn count and its state.
fn dialogue_line<'a>(app: &App, d: DialogueId, selected: bool, width: usize) -> Option<Line<'a>> {
    let t = app.theme();
    let (dialogue, position) = (
        app.workspace().dialogue(d)?,
        app.workspace().dialogues().position(d)?,
    );
    let current = Some(d) == app.workspace().current();
    let is_last = !app
        .workspace()
        .dialogues()
        .values()
        .skip(position + 1)
        .any(|o| o.server == dialogue.server);
    let branch = if is_last { "└" } else { "├" };
    let label = format!("  {branch} {} {}", position + 1, short_name(app, dialogue));
    let count = format!(" ({})", dialogue.transcript.len());
    let room = width.saturating_sub(count.len() + 3);
    let style = if current {
        t.bold(t.colors.accent)
    } else {
        t.fg(t.colors.foreground)
    };
    let mut line = Line::from(vec![
        Span::styled(super::text::cut(&label, room), style),
        Span::styled(count, t.muted()),
        dialogue_state(app, dialogue),
    ]);
    if selected {
        line = line.style(t.selected());
    }
    Some(line)
}

/// Under its server, "domain-access #2" needs only "#2" (and its DialogID).
fn short_name(app: &App, dialogue: &DialogueState) -> String {
    let server_name = app
        .workspace()
        .server(dialogue.server)
        .map_or("", |s| s.name.as_str());
    let short = dialogue
        .name
        .strip_prefix(server_name)
        .map(str::trim_start)
        .filter(|rest| !rest.is_empty())
        .unwrap_or(&dialogue.name);
    let id = dialogue
        .link
        .dialog_id()
        .filter(|_| short.starts_with('#'))
        .map(|id| format!(" {}", super::text::short_id(id)))
        .unwrap_or_default();
    format!("{short}{id}")
}

/// A dialogue's state at the end of its row: recorded, live, failed, connecting, a turn in
/// flight, or nothing (open).
fn dialogue_state<'a>(app: &App, dialogue: &DialogueState) -> Span<'a> {
    let t = app.theme();
    match &dialogue.status {
        Status::Recorded => Span::styled(" ◆", t.fg(t.colors.recorded)),
        Status::Live => Span::styled(" ◉ live", t.fg(t.colors.connected)),
        Status::Unfollowed(how) => Span::styled(
            format!(
                " {} {}",
                how.mark(),
                match how {
                    crate::tui::dialogue::Unfollowed::Idle => "idle",
                    crate::tui::dialogue::Unfollowed::RecordingStopped => "stopped",
                }
            ),
            t.fg(t.colors.recorded),
        ),
        Status::Failed(_) | Status::Closed(_) => Span::styled(" ✗", t.fg(t.colors.failed)),
        Status::Connecting => {
            Span::styled(format!(" {}", app.spinner()), t.fg(t.colors.connecting))
        }
        Status::Open if dialogue.link.pending().is_some() => {
            Span::styled(format!(" {}", app.spinner()), t.fg(t.colors.accent))
        }
        Status::Open => Span::raw(""),
    }
}

/// The one-line server picker of narrow screens: the current dialogue's server.
pub fn render_line(frame: &mut Frame, app: &App, area: Rect) {
    let t = app.theme();
    let Some(d) = app.current_dialogue() else {
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!(" {}", app.no_dialogue_hint()),
                t.muted(),
            )),
            area,
        );
        return;
    };
    let (Some(server), Some(position)) = (
        app.workspace().server(d.server),
        app.workspace().servers().position(d.server),
    ) else {
        return;
    };
    let (dot, state) = server_state(app, &server.status);
    let version = server
        .summary
        .as_ref()
        .map(|s| s.protocol_version.clone())
        .unwrap_or_default();
    let interface = match d.interface {
        Interface::Dac => "bkn_dac",
        Interface::Usr => "bkn_usr",
    };
    let mut spans = vec![
        Span::styled(" server ", t.muted()),
        Span::styled(server.name.clone(), t.bold(t.colors.foreground)),
        Span::raw(" "),
        dot,
        Span::styled(
            format!(" {} {state} {interface} {version}", server.spec.kind()),
            t.muted(),
        ),
        Span::styled(
            format!(
                "  ({} of {})",
                position + 1,
                app.workspace().servers().len()
            ),
            t.muted(),
        ),
    ];
    if let Some(notice) = &server.sign_in {
        // The sign-in's line without its indent, before the server count (the end of the
        // line is cut at the screen's edge, and the sign-in matters more).
        let sign_in = sign_in_line(app, notice, usize::MAX);
        let style = sign_in.style;
        let text: String = sign_in.spans.iter().map(|s| s.content.as_ref()).collect();
        spans.insert(5, Span::styled(format!(" {}", text.trim_start()), style));
    }
    let line = Line::from(spans);
    frame.render_widget(Paragraph::new(line).style(t.base()), area);
}
