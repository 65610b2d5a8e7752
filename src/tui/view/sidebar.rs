//! The servers and their dialogues, as a tree; on narrow screens, one line.

use crate::client::oauth::SignInNotice;
use crate::protocol::Interface;
use crate::tui::action::Pane;
use crate::tui::app::{App, ServerStatus, SidebarRow};
use crate::tui::dialogue::Status;
use crate::tui::hits::Hits;
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
        let y = inner.y + lines.len() as u16;
        match entry {
            SidebarRow::Server(s) => {
                let Some(server) = app.workspace().server(s) else {
                    continue;
                };
                let (dot, _) = server_state(app, &server.status);
                let arrow = if app.sidebar().is_expanded(s) {
                    "▼ "
                } else {
                    "▶ "
                };
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
                let mut detail_lines = Vec::new();
                let detail = match (&server.status, &server.summary) {
                    (ServerStatus::Failed(e), _) => Line::styled(
                        format!(
                            "  failed: {}",
                            super::text::cut(e, width.saturating_sub(10))
                        ),
                        t.fg(t.colors.failed),
                    ),
                    (_, Some(summary)) => {
                        let tools: Vec<&str> =
                            summary.bkn_tools.values().map(String::as_str).collect();
                        let tools = if tools.is_empty() {
                            "no BKN tool".to_owned()
                        } else {
                            tools.join(" ")
                        };
                        Line::from(vec![
                            Span::styled(format!("  {tools}"), t.fg(t.colors.accent)),
                            // The generation and where the dialogue's state lives
                            // (MCP-BINDING section 3).
                            Span::styled(
                                format!(
                                    "  {} {}",
                                    summary.protocol_version,
                                    match crate::client::generation::StateHome::of(
                                        &summary.protocol_version
                                    ) {
                                        crate::client::generation::StateHome::McpSession =>
                                            "session",
                                        crate::client::generation::StateHome::DialogId =>
                                            "by DialogID",
                                    }
                                ),
                                t.muted(),
                            ),
                        ])
                    }
                    (ServerStatus::Recorded, None) => {
                        Line::styled("  recorded session", t.fg(t.colors.recorded))
                    }
                    _ => Line::styled("  …", t.muted()),
                };
                detail_lines.push(detail);
                if let Some(notice) = &server.sign_in {
                    detail_lines.push(sign_in_line(app, notice, width));
                }
                if let Some(summary) = &server.summary {
                    // The M-Instance it publishes (its dialogues fill Requests with it).
                    if let Some(p) = &summary.published {
                        detail_lines.push(Line::styled(
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
                    if !summary.findings.is_empty() {
                        let n = summary.findings.len();
                        detail_lines.push(Line::styled(
                            super::text::cut(
                                &format!(
                                    "  ⚠ {n} binding finding{}: {}",
                                    if n == 1 { "" } else { "s" },
                                    summary.findings[0].check
                                ),
                                width,
                            ),
                            t.fg(t.colors.finding),
                        ));
                    }
                }
                hits.sidebar_rows.push((
                    Rect::new(inner.x, y, inner.width, 1 + detail_lines.len() as u16),
                    entry,
                ));
                lines.push(line);
                lines.extend(detail_lines);
            }
            SidebarRow::Dialogue(d) => {
                let (Some(dialogue), Some(position)) = (
                    app.workspace().dialogue(d),
                    app.workspace().dialogues().position(d),
                ) else {
                    continue;
                };
                let current = Some(d) == app.workspace().current();
                let is_last = !app
                    .workspace()
                    .dialogues()
                    .values()
                    .skip(position + 1)
                    .any(|o| o.server == dialogue.server);
                let branch = if is_last { "└" } else { "├" };
                let state = match &dialogue.status {
                    Status::Recorded => Span::styled(" ◆", t.fg(t.colors.recorded)),
                    Status::Live => Span::styled(" ◉ live", t.fg(t.colors.connected)),
                    Status::Failed(_) | Status::Closed(_) => {
                        Span::styled(" ✗", t.fg(t.colors.failed))
                    }
                    Status::Connecting => {
                        Span::styled(format!(" {}", app.spinner()), t.fg(t.colors.connecting))
                    }
                    Status::Open if dialogue.pending.is_some() => {
                        Span::styled(format!(" {}", app.spinner()), t.fg(t.colors.accent))
                    }
                    Status::Open => Span::raw(""),
                };
                // Under its server, "domain-access #2" needs only "#2" (and its DialogID).
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
                    .dialog_id
                    .as_deref()
                    .filter(|_| short.starts_with('#'))
                    .map(|id| format!(" {}", super::text::short_id(id)))
                    .unwrap_or_default();
                let label = format!("  {branch} {} {short}{id}", position + 1);
                let count = format!(" ({})", dialogue.turns.len());
                let room = width.saturating_sub(count.len() + 3);
                let style = if current {
                    t.bold(t.colors.accent)
                } else {
                    t.fg(t.colors.foreground)
                };
                let mut line = Line::from(vec![
                    Span::styled(super::text::cut(&label, room), style),
                    Span::styled(count, t.muted()),
                    state,
                ]);
                if selected {
                    line = line.style(t.selected());
                }
                hits.sidebar_rows
                    .push((Rect::new(inner.x, y, inner.width, 1), entry));
                lines.push(line);
            }
        }
    }
    if app.workspace().servers().is_empty() {
        lines.push(Line::styled("no server", t.muted()));
    }
    frame.render_widget(Paragraph::new(lines).style(t.base()), inner);
}

/// The one-line server picker of narrow screens: the current dialogue's server.
pub fn render_line(frame: &mut Frame, app: &App, area: Rect) {
    let t = app.theme();
    let Some(d) = app.current_dialogue() else {
        frame.render_widget(
            Paragraph::new(Line::styled(" no dialogue: n opens one", t.muted())),
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
