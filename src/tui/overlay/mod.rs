//! What can cover the main screen: the help, the command palette, a line to type, the Open
//! overlay, a question, the messages of this run, a protocol log entry, the defaults form, a
//! server's question. Each is one module with its state, its keys (fed the action the key map
//! gives the key in its place, so that `keys.toml` reaches them), its mouse, its paste and its
//! drawing, which returns where it drew its rows as a value (`OverlayHits`). What comes of
//! them is an `Outcome`; update does the rest.

mod confirm;
mod defaults;
mod help;
pub mod input;
mod log_entry;
mod messages;
mod open;
mod palette;
mod prompt;
pub(crate) mod scroll;

pub use confirm::{Choice, Confirm, ConfirmPurpose};
pub use defaults::{DefaultsForm, DefaultsScope};
pub use help::help_lines;
pub use input::Input;
pub use open::{OpenFile, PickerItem};
pub use palette::Palette;
pub use prompt::{Prompt, PromptPurpose};

use crate::tui::action::{Action, Context, Handled, Keymap};
use crate::tui::app::App;
use crate::tui::hits::Hits;
use ratatui::Frame;
use ratatui::crossterm::event::MouseEventKind;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent};
use ratatui::layout::{Position, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear};
use std::path::PathBuf;

// One overlay at most is open, held once by the app: the size of its largest form (three line
// editors) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Overlay {
    Help {
        scroll: usize,
    },
    Palette(Palette),
    /// A line of text to type (the name to save a session as, a log filter).
    Prompt(Prompt),
    Open(OpenFile),
    Confirm(Confirm),
    /// The messages of this run, newest last.
    Messages {
        scroll: usize,
    },
    /// One protocol log entry, whole (an index into the visible entries).
    LogEntry {
        entry: usize,
        scroll: usize,
    },
    /// The common fields of new Requests (MInstance, UEnvironment, SessionID), to override.
    Defaults(DefaultsForm),
    /// What a server asks of the person (`tui::ask`).
    Ask(Box<crate::tui::ask::AskOverlay>),
    /// The resources of the server in view (`tui::resources`).
    Resources(Box<crate::tui::resources::ResourcesOverlay>),
    /// A turn as command lines (`tui::export`).
    Export(Box<crate::tui::export::ExportOverlay>),
}

/// What came of a key, a click or a paste in an overlay.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Nothing more to do (the overlay changed itself, or ignored the key).
    Stay,
    Close,
    /// Close, and do this action.
    Run(Action),
    /// A question was answered.
    Answered(ConfirmPurpose, bool),
    /// A question of more than yes and no was answered by the key of its choice.
    Chose(ConfirmPurpose, Choice),
    /// A line was typed and confirmed.
    Submit(PromptPurpose, String),
    /// The Open overlay: open this path.
    OpenPath(PathBuf),
    /// What was typed changed (the Open overlay completes it; a prompt's note follows it).
    Typed(String),
    /// Tab in a line that takes a path: list what completes it (folders, and files ending
    /// so; any file when empty).
    CompletePath(String, &'static [&'static str]),
    /// The entry's JSON should be copied.
    CopyEntry(usize),
    /// The defaults form was applied: the values typed (empty: not overridden), and to what.
    SetDefaults([Option<String>; 3], DefaultsScope),
    /// A server's question was answered (or declined, or dismissed).
    Replied(crate::tui::event::AskView, crate::client::answers::Reply),
    /// What the Resources overlay asks.
    Resources(crate::tui::resources::Ask),
    /// What the Export overlay asks.
    Export(crate::tui::export::Ask),
}

/// Where an overlay drew itself: its box (a click outside closes it), its list rows by item,
/// and how far it can scroll (its last page).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OverlayHits {
    pub area: Option<Rect>,
    pub rows: Vec<(Rect, usize)>,
    pub scroll_max: Option<usize>,
    /// Its parts, by its own numbers (where the wheel scrolls).
    pub areas: Vec<(Rect, usize)>,
}

impl OverlayHits {
    /// What a box drawn into a frame's `Hits` drew.
    fn of(hits: Hits) -> OverlayHits {
        OverlayHits {
            area: hits.overlay,
            rows: hits.overlay_rows,
            scroll_max: hits.overlay_scroll_max,
            areas: hits.overlay_areas,
        }
    }
}

impl Overlay {
    /// Where the key map's bindings for it are.
    fn context(&self) -> Context {
        match self {
            Overlay::Confirm(_) => Context::Question,
            _ => Context::Overlay,
        }
    }

    /// Handles a key. Every key is the overlay's while it is open (it covers the screen),
    /// except those it leaves to the explorer's Anywhere bindings (`Ignored`). `hits` is
    /// where the last frame drew it (a scroll stops at the last page shown).
    pub fn key(&mut self, key: KeyEvent, keymap: &Keymap, hits: &Hits) -> (Handled, Outcome) {
        let action = keymap.action_in(&key, self.context());
        // What the key does to a line being typed (the line editor's keys, keys.toml's `edit`).
        let edit = keymap.edit(&key);
        let edit = edit.as_ref();
        let max = hits.overlay_scroll_max;
        match self {
            Overlay::Help { scroll } | Overlay::Messages { scroll } => {
                scroll::keys(scroll, action.as_ref(), max)
            }
            Overlay::LogEntry { entry, scroll } => match action {
                Some(Action::CopyJson) => (Handled::Consumed, Outcome::CopyEntry(*entry)),
                _ => scroll::keys(scroll, action.as_ref(), max),
            },
            Overlay::Palette(p) => p.keys(&key, action, edit),
            Overlay::Prompt(p) => p.keys(&key, action, edit),
            Overlay::Open(o) => o.keys(&key, action, edit),
            Overlay::Defaults(form) => form.keys(&key, action, edit),
            Overlay::Confirm(c) => c.keys(&keymap.actions_in(&key, Context::Question)),
            Overlay::Ask(ask) => {
                match ask.keys(&key, &keymap.actions_in(&key, Context::Overlay), edit) {
                    (handled, crate::tui::ask::AskOutcome::Stay) => (handled, Outcome::Stay),
                    (handled, crate::tui::ask::AskOutcome::Answer(reply)) => {
                        (handled, Outcome::Replied(ask.ask.clone(), reply))
                    }
                }
            }
            Overlay::Resources(r) => {
                let (handled, ask) = r.key(&key, action, max);
                (handled, Outcome::Resources(ask))
            }
            Overlay::Export(e) => {
                let (handled, ask) = e.key(&key, action, max);
                (handled, Outcome::Export(ask))
            }
        }
    }

    /// A click or the wheel: a click outside the box closes it (a server's question stays:
    /// a stray click does not throw away a filled form); on a row, it does what Enter does
    /// on it.
    pub fn mouse(&mut self, mouse: MouseEvent, hits: &Hits) -> Outcome {
        let at = Position::new(mouse.column, mouse.row);
        let inside = hits.overlay.is_some_and(|r| r.contains(at));
        // The overlays of their own module take their mouse inside the box themselves.
        match self {
            Overlay::Resources(r) if inside => return Outcome::Resources(r.mouse(&mouse, hits)),
            Overlay::Export(e) if inside => return Outcome::Export(e.mouse(&mouse, hits)),
            _ => {}
        }
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) if !inside => match self {
                Overlay::Ask(_) => Outcome::Stay,
                _ => Outcome::Close,
            },
            MouseEventKind::Down(MouseButton::Left) => {
                let Some(row) = Hits::find(&hits.overlay_rows, at) else {
                    return Outcome::Stay;
                };
                match self {
                    Overlay::Palette(p) => p.click(row),
                    Overlay::Open(o) => o.click(row),
                    Overlay::Prompt(p) => p.click(row),
                    Overlay::Ask(a) => {
                        if let crate::tui::ask::Body::Form(form) = &mut a.body {
                            form.focus = row.min(form.fields.len().saturating_sub(1));
                        }
                        Outcome::Stay
                    }
                    _ => Outcome::Stay,
                }
            }
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                let down = mouse.kind == MouseEventKind::ScrollDown;
                match self {
                    Overlay::Help { scroll }
                    | Overlay::Messages { scroll }
                    | Overlay::LogEntry { scroll, .. } => scroll::wheel(scroll, down),
                    Overlay::Palette(p) => p.wheel(down),
                    Overlay::Open(o) => o.wheel(down),
                    _ => {}
                }
                Outcome::Stay
            }
            _ => Outcome::Stay,
        }
    }

    /// A paste (its line ends as the terminal sent them).
    pub fn paste(&mut self, text: &str) -> Outcome {
        match self {
            Overlay::Prompt(p) => p.paste(text),
            Overlay::Palette(p) => p.paste(text),
            Overlay::Open(o) => o.paste(text),
            Overlay::Defaults(f) => f.paste(text),
            Overlay::Ask(a) => {
                a.paste(&text.replace("\r\n", "\n").replace('\r', "\n"));
                Outcome::Stay
            }
            Overlay::Help { .. }
            | Overlay::Messages { .. }
            | Overlay::LogEntry { .. }
            | Overlay::Confirm(_)
            | Overlay::Resources(_)
            | Overlay::Export(_) => Outcome::Stay,
        }
    }

    /// Draws the overlay over `area`; where it drew its box and rows.
    pub fn render(&self, frame: &mut Frame, app: &App, area: Rect) -> OverlayHits {
        match self {
            Overlay::Help { scroll } => help::render(frame, app, area, *scroll),
            Overlay::Messages { scroll } => messages::render(frame, app, area, *scroll),
            Overlay::LogEntry { entry, scroll } => {
                log_entry::render(frame, app, area, *entry, *scroll)
            }
            Overlay::Palette(p) => p.render(frame, app, area),
            Overlay::Prompt(p) => p.render(frame, app, area),
            Overlay::Open(o) => o.render(frame, app, area),
            Overlay::Confirm(c) => c.render(frame, app, area),
            Overlay::Defaults(f) => f.render(frame, app, area),
            Overlay::Ask(ask) => {
                let mut hits = Hits::default();
                crate::tui::ask::view::render(frame, app, ask, area, &mut hits);
                OverlayHits::of(hits)
            }
            Overlay::Resources(r) => {
                let mut hits = Hits::default();
                crate::tui::resources::view::render(frame, app, r, area, &mut hits);
                OverlayHits::of(hits)
            }
            Overlay::Export(e) => {
                let mut hits = Hits::default();
                crate::tui::export::view::render(frame, app, e, area, &mut hits);
                OverlayHits::of(hits)
            }
        }
    }
}

/// Whether a key an overlay has no use for goes on to the explorer's Anywhere keys: a Ctrl or
/// function key does (Ctrl-Q quits, F1 helps); a letter never (it was meant as typing).
/// A box's line of keys, from the key map's `overlay` place (so that a keys.toml shows
/// there too): an entry of one action by its keys that are not plain letters (some overlays
/// take those as text; a letter when it has no other), an entry of several by one key each,
/// then what they do. An entry whose actions have no key is left out.
pub(crate) fn key_hint(keymap: &Keymap, entries: &[(&[Action], &str)]) -> String {
    let keys = |a: &Action| overlay_keys(keymap, a);
    entries
        .iter()
        .filter_map(|(actions, what)| {
            let shown: Vec<String> = match actions {
                [one] => keys(one),
                many => many
                    .iter()
                    .filter_map(|a| keys(a).into_iter().next())
                    .collect(),
            };
            (!shown.is_empty()).then(|| format!("{} {what}", shown.join("/")))
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// An action's keys in the `overlay` place, as a box names them: those that are not plain
/// letters (some overlays take those as text), else the first letter.
fn overlay_keys(keymap: &Keymap, action: &Action) -> Vec<String> {
    let keys: Vec<&crate::tui::action::Key> = keymap
        .bindings
        .iter()
        .filter(|b| b.context == Context::Overlay && &b.action == action)
        .flat_map(|b| &b.keys)
        .collect();
    let letter = |k: &crate::tui::action::Key| {
        matches!(k.code, KeyCode::Char(c) if c != ' ')
            && (k.modifiers - KeyModifiers::SHIFT).is_empty()
    };
    let others: Vec<String> = keys
        .iter()
        .filter(|k| !letter(k))
        .map(|k| k.label())
        .collect();
    if others.is_empty() {
        keys.first().map(|k| k.label()).into_iter().collect()
    } else {
        others
    }
}

/// The key a box's title names for an action (the first `key_hint` would), "?" when
/// keys.toml left it without one.
pub(crate) fn key_of(keymap: &Keymap, action: &Action) -> String {
    overlay_keys(keymap, action)
        .into_iter()
        .next()
        .unwrap_or_else(|| "?".into())
}

pub(crate) fn leaves(key: &KeyEvent) -> Handled {
    if key.modifiers.contains(KeyModifiers::CONTROL) || matches!(key.code, KeyCode::F(_)) {
        Handled::Ignored
    } else {
        Handled::Consumed
    }
}

pub(crate) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width.saturating_sub(2));
    let h = height.min(area.height.saturating_sub(2));
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Clears `r` and draws a framed box with a title over it; returns the inside.
pub(crate) fn framed(frame: &mut Frame, app: &App, r: Rect, title: &str) -> Rect {
    frame.render_widget(Clear, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(app.theme().border(true))
        .title(Line::styled(title.to_owned(), app.theme().title(true)))
        .style(app.theme().base());
    let inner = block.inner(r);
    frame.render_widget(block, r);
    inner
}

/// A list row as drawn: the selected one in the theme's selection and marked `›` in its first
/// cell, so that it shows without colour (NO_COLOR) too.
pub(crate) fn list_row<'a>(app: &App, line: Line<'a>, selected: bool) -> Line<'a> {
    let mut spans = line.spans;
    if let Some(first) = spans.first_mut() {
        let text = first.content.to_string();
        let rest: String = text.chars().skip(1).collect();
        let mark = if selected { "›" } else { " " };
        if text.starts_with(' ') {
            first.content = format!("{mark}{rest}").into();
        }
    }
    let line = Line::from(spans);
    if selected {
        line.style(app.theme().selected())
    } else {
        line
    }
}

#[cfg(test)]
mod tests;
