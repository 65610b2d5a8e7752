//! The defaults form: one line per common field of new Requests (MInstance, UEnvironment,
//! SessionID), what each is now and where that came from, and whether the values apply to
//! the dialogue in view or to every dialogue of its server.

use super::{Input, Outcome, OverlayHits, centered, framed, leaves};
use crate::tui::action::{Action, Handled};
use crate::tui::app::App;
use crate::tui::view::text::cut;
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// What an override of the defaults applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultsScope {
    /// The dialogue in view (and its reconnects).
    Dialogue,
    /// Every dialogue of its server, open and new.
    Server,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DefaultsForm {
    pub inputs: [Input; 3],
    /// What each field is now, and where that came from (shown beside its input).
    pub now: [(String, String); 3],
    /// The row with the focus: the three inputs, then the scope.
    pub row: usize,
    pub scope: DefaultsScope,
    /// The server's name, for the scope row.
    pub server: String,
}

impl DefaultsForm {
    /// The field names, in the order of the inputs.
    pub const FIELDS: [&'static str; 3] = ["MInstance", "UEnvironment", "SessionID"];

    /// On an input row, typing edits it; the key map's Tab (Complete) and Down go to the next
    /// row, Shift-Tab and Up back; on the scope row ← → Space change it; Enter applies.
    pub fn keys(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        edit: Option<&Action>,
    ) -> (Handled, Outcome) {
        if let Some(input) = self.inputs.get_mut(self.row)
            && input.key(key, edit).is_some()
        {
            return (Handled::Consumed, Outcome::Stay);
        }
        let outcome = match action {
            Some(Action::Cancel) => Outcome::Close,
            Some(Action::Select) => Outcome::SetDefaults(
                self.inputs.clone().map(|i| {
                    let t = i.text().trim().to_owned();
                    (!t.is_empty()).then_some(t)
                }),
                self.scope,
            ),
            Some(Action::Complete | Action::Down) => {
                self.row = (self.row + 1) % 4;
                Outcome::Stay
            }
            Some(Action::FocusPrev | Action::Up) => {
                self.row = (self.row + 3) % 4;
                Outcome::Stay
            }
            Some(Action::NextDetailTab | Action::PrevDetailTab) if self.row == 3 => {
                self.scope = match self.scope {
                    DefaultsScope::Dialogue => DefaultsScope::Server,
                    DefaultsScope::Server => DefaultsScope::Dialogue,
                };
                Outcome::Stay
            }
            _ => return (leaves(key), Outcome::Stay),
        };
        (Handled::Consumed, outcome)
    }

    pub fn paste(&mut self, text: &str) -> Outcome {
        if let Some(input) = self.inputs.get_mut(self.row) {
            input.insert_str(text.trim());
        }
        Outcome::Stay
    }

    pub fn render(&self, frame: &mut Frame, app: &App, area: Rect) -> OverlayHits {
        let t = app.theme();
        let r = centered(area, 96, 14);
        let k = |a| super::key_of(app.keymap(), &a);
        let title = format!(
            " Defaults of new Requests · {} next · {} applies · {} cancels ",
            k(Action::Complete),
            k(Action::Select),
            k(Action::Cancel)
        );
        let inner = framed(frame, app, r, &title);
        let mut lines = vec![
            Line::styled(
                "Empty: what the server publishes (else the built-in). Now:",
                t.muted(),
            ),
            Line::raw(""),
        ];
        let label_style = |active: bool| {
            if active {
                t.bold(t.colors.accent)
            } else {
                t.muted()
            }
        };
        for (i, name) in DefaultsForm::FIELDS.iter().enumerate() {
            let active = self.row == i;
            let label = Span::styled(format!("{name:<14}"), label_style(active));
            let line = if active {
                self.inputs[i].line(label, None)
            } else {
                Line::from(vec![label, Span::raw(self.inputs[i].text().to_owned())])
            };
            lines.push(line);
            let (value, origin) = &self.now[i];
            lines.push(Line::styled(
                cut(
                    &format!("{:14}now {value} ({origin})", ""),
                    inner.width as usize,
                ),
                t.muted(),
            ));
        }
        lines.push(Line::raw(""));
        let active = self.row == 3;
        let choice = |on: bool, text: String| {
            Span::styled(
                if on {
                    format!("[ {text} ]")
                } else {
                    format!("  {text}  ")
                },
                label_style(on),
            )
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{:<14}", "Apply to"), label_style(active)),
            choice(
                self.scope == DefaultsScope::Dialogue,
                "this dialogue".into(),
            ),
            choice(
                self.scope == DefaultsScope::Server,
                format!("every dialogue of {}", self.server),
            ),
            Span::styled(
                if active {
                    format!(
                        "  {} {}",
                        super::key_of(app.keymap(), &Action::PrevDetailTab),
                        super::key_of(app.keymap(), &Action::NextDetailTab)
                    )
                } else {
                    String::new()
                },
                t.fg(t.colors.key_hint),
            ),
        ]));
        frame.render_widget(Paragraph::new(lines), inner);
        OverlayHits {
            area: Some(r),
            ..OverlayHits::default()
        }
    }
}
