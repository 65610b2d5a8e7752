//! The status line: where the explorer is (server, DialogID, next TurnIndex, connection) and
//! the keys that matter now, or a notice.

use crate::tui::action::{Action, Pane, keys_of};
use crate::tui::app::{App, Severity};
use crate::tui::dialogue::Status;
use crate::tui::view::text::{cut, short_id};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let c = &t.colors;
    let base = t.fg(c.status_fg).bg(c.status_bg);
    let mut left = String::from(" ");
    if let Some(d) = app.current_dialogue() {
        let server = &app.servers[d.server];
        left.push_str(&server.spec.name);
        if let Some(id) = &d.dialog_id {
            left.push_str(&format!(" · dialog {}", short_id(id)));
        }
        left.push_str(&format!(" · turn {}", d.next_turn));
        let state = match &d.status {
            Status::Open => format!(
                "connected {}",
                server
                    .summary
                    .as_ref()
                    .map(|s| s.protocol_version.as_str())
                    .unwrap_or("")
            ),
            Status::Connecting => "connecting".into(),
            Status::Recorded => "recorded".into(),
            Status::Failed(_) => "failed".into(),
            Status::Closed(_) => "closed".into(),
        };
        left.push_str(&format!(" · {state}"));
    } else {
        left.push_str("no dialogue");
    }
    if app.session.unsaved > 0 {
        left.push_str(&format!(" · ● {} unsaved", app.session.unsaved));
    }
    let mut spans = vec![Span::styled(left.clone(), base)];
    let room = (area.width as usize).saturating_sub(left.chars().count() + 3);
    if let Some(n) = &app.notice {
        let color = match n.severity {
            Severity::Info => c.info,
            Severity::Success => c.success,
            Severity::Warning => c.warning,
            Severity::Error => c.error,
        };
        spans.push(Span::styled(" │ ", base));
        spans.push(Span::styled(cut(&n.text, room), base.fg(color)));
    } else {
        spans.push(Span::styled(" │", base));
        let hints: Vec<(String, &str)> = match app.focus {
            Pane::Composer => vec![
                (keys_of(&Action::Send), "send"),
                ("F2".into(), "form/raw"),
                ("Tab".into(), "complete/next pane"),
                ("Esc".into(), "leave"),
                ("F1".into(), "help"),
            ],
            _ => vec![
                ("Tab".into(), "pane"),
                ("n".into(), "new dialogue"),
                ("c".into(), "compose"),
                ("F5".into(), "send"),
                ("Ctrl-S".into(), "save"),
                ("L".into(), "log"),
                (":".into(), "palette"),
                ("?".into(), "help"),
            ],
        };
        let mut used = 0;
        for (key, what) in hints {
            let key = key.split(" / ").next().unwrap_or_default().to_owned();
            let len = key.chars().count() + what.chars().count() + 3;
            if used + len > room {
                break;
            }
            used += len;
            spans.push(Span::styled(format!(" {key}"), base.fg(c.key_hint)));
            spans.push(Span::styled(format!(" {what} "), base));
        }
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    spans.push(Span::styled(
        " ".repeat((area.width as usize).saturating_sub(used)),
        base,
    ));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
