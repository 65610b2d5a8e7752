//! What can cover the main screen: the help, the command palette, a line to type, the Open
//! overlay, a question, the messages of this run, a protocol log entry. Each handles its own
//! keys and says what came of them; update does the rest.

use crate::client::engine::DialogueKey;
use crate::tui::action::{Action, Handled};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::PathBuf;

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
}

/// What came of a key in an overlay.
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
    /// The Open overlay: what was typed changed; complete it.
    Typed(String),
    /// The entry's JSON should be copied.
    CopyEntry(usize),
    /// The defaults form was applied: the values typed (empty: not overridden), and to what.
    SetDefaults([Option<String>; 3], DefaultsScope),
    /// A server's question was answered (or declined, or dismissed).
    Replied(crate::tui::event::AskView, crate::client::answers::Reply),
}

/// What an override of the defaults applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultsScope {
    /// The dialogue in view (and its reconnects).
    Dialogue,
    /// Every dialogue of its server, open and new.
    Server,
}

/// The defaults form: one input per common field, then where the values apply.
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

    fn key(&mut self, key: &KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Esc => Outcome::Close,
            KeyCode::Enter => Outcome::SetDefaults(
                self.inputs.clone().map(|i| {
                    let t = i.text.trim().to_owned();
                    (!t.is_empty()).then_some(t)
                }),
                self.scope,
            ),
            KeyCode::Tab | KeyCode::Down => {
                self.row = (self.row + 1) % 4;
                Outcome::Stay
            }
            KeyCode::BackTab | KeyCode::Up => {
                self.row = (self.row + 3) % 4;
                Outcome::Stay
            }
            KeyCode::Left | KeyCode::Right | KeyCode::Char(' ') if self.row == 3 => {
                self.scope = match self.scope {
                    DefaultsScope::Dialogue => DefaultsScope::Server,
                    DefaultsScope::Server => DefaultsScope::Dialogue,
                };
                Outcome::Stay
            }
            _ => {
                if let Some(input) = self.inputs.get_mut(self.row) {
                    input.key(key);
                }
                Outcome::Stay
            }
        }
    }
}

/// A line editor with a cursor: what prompts and the palette type into.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Input {
    pub text: String,
    /// The cursor, in characters.
    pub cursor: usize,
}

impl Input {
    pub fn new(text: &str) -> Input {
        Input {
            text: text.to_owned(),
            cursor: text.chars().count(),
        }
    }

    fn byte(&self, chars: usize) -> usize {
        self.text
            .char_indices()
            .nth(chars)
            .map(|(i, _)| i)
            .unwrap_or(self.text.len())
    }

    /// Edits for a key; whether the text changed, or `None` when the key is not an edit.
    pub fn key(&mut self, key: &KeyEvent) -> Option<bool> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('u') if ctrl => {
                let at = self.byte(self.cursor);
                self.text.replace_range(..at, "");
                self.cursor = 0;
                Some(true)
            }
            KeyCode::Char(c) if !ctrl => {
                let at = self.byte(self.cursor);
                self.text.insert(at, c);
                self.cursor += 1;
                Some(true)
            }
            KeyCode::Backspace if self.cursor > 0 => {
                let at = self.byte(self.cursor - 1);
                self.text.remove(at);
                self.cursor -= 1;
                Some(true)
            }
            KeyCode::Delete if self.cursor < self.text.chars().count() => {
                let at = self.byte(self.cursor);
                self.text.remove(at);
                Some(true)
            }
            KeyCode::Left => {
                self.cursor = self.cursor.saturating_sub(1);
                Some(false)
            }
            KeyCode::Right => {
                self.cursor = (self.cursor + 1).min(self.text.chars().count());
                Some(false)
            }
            KeyCode::Home => {
                self.cursor = 0;
                Some(false)
            }
            KeyCode::End => {
                self.cursor = self.text.chars().count();
                Some(false)
            }
            KeyCode::Backspace | KeyCode::Delete => Some(false),
            _ => None,
        }
    }

    pub fn insert_str(&mut self, s: &str) {
        let at = self.byte(self.cursor);
        self.text.insert_str(at, s);
        self.cursor += s.chars().count();
    }
}

pub struct Palette {
    pub query: Input,
    /// Every entry: what it does, and its keys.
    pub entries: Vec<(Action, String, String)>,
    /// Indices into `entries` that match the query, best first.
    pub matches: Vec<usize>,
    pub selected: usize,
}

impl Palette {
    pub fn new(entries: Vec<(Action, String, String)>) -> Palette {
        let mut p = Palette {
            query: Input::default(),
            matches: (0..entries.len()).collect(),
            entries,
            selected: 0,
        };
        p.refilter();
        p
    }

    /// Fuzzy matching over the titles (nucleo, as television and helix use).
    pub fn refilter(&mut self) {
        self.selected = 0;
        if self.query.text.is_empty() {
            self.matches = (0..self.entries.len()).collect();
            return;
        }
        let mut matcher = Matcher::new(Config::DEFAULT);
        let pattern = Pattern::parse(&self.query.text, CaseMatching::Ignore, Normalization::Smart);
        let mut scored: Vec<(usize, u32)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, (_, t, k))| {
                let text = format!("{t} {k}");
                let mut buf = Vec::new();
                pattern
                    .score(nucleo_matcher::Utf32Str::new(&text, &mut buf), &mut matcher)
                    .map(|s| (i, s))
            })
            .collect();
        scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        self.matches = scored.into_iter().map(|(i, _)| i).collect();
    }

    pub fn chosen(&self) -> Option<Action> {
        self.matches
            .get(self.selected)
            .map(|&i| self.entries[i].0.clone())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptPurpose {
    SaveAs,
    FilterLog,
    /// Save the dialogue in view as a test (a scenario file).
    SaveTest,
    /// Run a scenario file on the server in view.
    RunScenario,
    /// A server to add: a command line, a URL, or the name of one found.
    AddServer,
    /// The value of a server's `${input:ID}` (the server, the input's ID).
    ServerInput(crate::tui::ids::ServerId, String),
}

pub struct Prompt {
    pub title: String,
    pub input: Input,
    pub purpose: PromptPurpose,
    /// Lines under the input, updated as it is typed (Save-as: the full path it writes).
    pub note: String,
    /// Shown as dots (a password or a token).
    pub secret: bool,
}

pub struct PickerItem {
    pub path: PathBuf,
    pub label: String,
    pub detail: String,
}

/// Opening a session: a path typed (with completion), or one of the sessions listed.
pub struct OpenFile {
    pub input: Input,
    /// The session files of the sessions folder and the recent ones.
    pub items: Vec<PickerItem>,
    pub loading: bool,
    /// Paths that complete what is typed.
    pub completions: Vec<String>,
    /// The highlighted row: of `completions` while something is typed, else of `items`.
    pub selected: usize,
    /// The file being opened, if any.
    pub opening: Option<PathBuf>,
    /// Why the last opening failed (the file is left as it was).
    pub error: Option<String>,
}

impl OpenFile {
    pub fn new() -> OpenFile {
        OpenFile {
            input: Input::default(),
            items: Vec::new(),
            loading: true,
            completions: Vec::new(),
            selected: 0,
            opening: None,
            error: None,
        }
    }

    /// The rows the list shows.
    pub fn rows(&self) -> usize {
        if self.input.text.is_empty() {
            self.items.len()
        } else {
            self.completions.len()
        }
    }
}

impl Default for OpenFile {
    fn default() -> Self {
        OpenFile::new()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfirmPurpose {
    /// Quit although the session has unsaved turns.
    Quit,
    /// Recover what a run that did not end cleanly autosaved (its session, its drafts).
    Recover(crate::tui::persist::Recovery),
    /// Close a dialogue that has turns.
    CloseDialogue(DialogueKey),
    /// Save over a file that exists.
    Overwrite(PathBuf, crate::tui::event::SaveWhat),
    /// Remove a server whose dialogues have turns.
    RemoveServer(crate::tui::ids::ServerId),
    /// Start the command a session file's server runs, then do the action that needed it.
    StartCommand(crate::tui::ids::ServerId, crate::tui::action::Action),
    /// Open another session although this one has unsaved turns: save them first, set them
    /// aside (a file of the data directory), or stay.
    OpenOverUnsaved,
    /// The session's file changed on disk since it was opened or saved: overwrite it, save
    /// as another file, or stay.
    SaveOverChanged(PathBuf),
}

/// What a question of more than yes and no offers besides "no" (n, Esc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Save,
    SetAside,
    Overwrite,
    SaveAs,
}

impl ConfirmPurpose {
    /// The choices and their keys, when the question is more than yes or no.
    pub fn choices(&self) -> Option<&'static [(char, Choice, &'static str)]> {
        match self {
            ConfirmPurpose::OpenOverUnsaved => Some(&[
                ('s', Choice::Save, "save first"),
                ('a', Choice::SetAside, "set aside"),
            ]),
            ConfirmPurpose::SaveOverChanged(_) => Some(&[
                ('o', Choice::Overwrite, "overwrite"),
                ('s', Choice::SaveAs, "save as"),
            ]),
            _ => None,
        }
    }

    /// The keys the question's box names.
    pub fn keys_shown(&self) -> String {
        match self.choices() {
            Some(choices) => {
                let mut shown: Vec<String> = choices
                    .iter()
                    .map(|(k, _, what)| format!("{k} {what}"))
                    .collect();
                shown.push("n cancel".into());
                format!(" {} ", shown.join(" · "))
            }
            None => " y yes · n no ".into(),
        }
    }
}

pub struct Confirm {
    pub title: String,
    pub message: String,
    pub purpose: ConfirmPurpose,
}

impl Overlay {
    /// Handles a key. Every key is the overlay's while it is open (it covers the screen),
    /// except those it leaves to the explorer's Anywhere bindings (`Ignored`).
    pub fn key(&mut self, key: KeyEvent) -> (Handled, Outcome) {
        use Handled::Consumed;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let page = 10;
        let scroll_by = |scroll: &mut usize, code: KeyCode| -> bool {
            match code {
                KeyCode::Down | KeyCode::Char('j') => *scroll += 1,
                KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
                KeyCode::PageDown => *scroll += page,
                KeyCode::PageUp => *scroll = scroll.saturating_sub(page),
                KeyCode::Home | KeyCode::Char('g') => *scroll = 0,
                KeyCode::End | KeyCode::Char('G') => *scroll = usize::MAX / 2,
                _ => return false,
            }
            true
        };
        match self {
            Overlay::Help { scroll } | Overlay::Messages { scroll } => {
                if scroll_by(scroll, key.code) {
                    (Consumed, Outcome::Stay)
                } else {
                    (Consumed, Outcome::Close)
                }
            }
            Overlay::LogEntry { entry, scroll } => match key.code {
                KeyCode::Char('y') => (Consumed, Outcome::CopyEntry(*entry)),
                code if scroll_by(scroll, code) => (Consumed, Outcome::Stay),
                _ => (Consumed, Outcome::Close),
            },
            Overlay::Palette(p) => match key.code {
                KeyCode::Esc => (Consumed, Outcome::Close),
                KeyCode::Enter => match p.chosen() {
                    Some(action) => (Consumed, Outcome::Run(action)),
                    None => (Consumed, Outcome::Stay),
                },
                KeyCode::Down => {
                    p.selected = (p.selected + 1).min(p.matches.len().saturating_sub(1));
                    (Consumed, Outcome::Stay)
                }
                KeyCode::Up => {
                    p.selected = p.selected.saturating_sub(1);
                    (Consumed, Outcome::Stay)
                }
                _ => {
                    if p.query.key(&key) == Some(true) {
                        p.refilter();
                    }
                    (Consumed, Outcome::Stay)
                }
            },
            Overlay::Prompt(p) => match key.code {
                KeyCode::Esc => (Consumed, Outcome::Close),
                KeyCode::Enter => (
                    Consumed,
                    Outcome::Submit(p.purpose.clone(), p.input.text.clone()),
                ),
                _ => {
                    let changed = p.input.key(&key) == Some(true);
                    match (changed, &p.purpose) {
                        (true, PromptPurpose::SaveAs | PromptPurpose::SaveTest) => {
                            (Consumed, Outcome::Typed(p.input.text.clone()))
                        }
                        _ => (Consumed, Outcome::Stay),
                    }
                }
            },
            Overlay::Open(o) => match key.code {
                KeyCode::Esc => (Consumed, Outcome::Close),
                KeyCode::Down => {
                    o.selected = (o.selected + 1).min(o.rows().saturating_sub(1));
                    (Consumed, Outcome::Stay)
                }
                KeyCode::Up => {
                    o.selected = o.selected.saturating_sub(1);
                    (Consumed, Outcome::Stay)
                }
                KeyCode::Tab => {
                    // Completes what is typed with the highlighted path.
                    if let Some(path) = o.completions.get(o.selected).cloned() {
                        o.input = Input::new(&path);
                        o.selected = 0;
                        return (Consumed, Outcome::Typed(o.input.text.clone()));
                    }
                    (Consumed, Outcome::Stay)
                }
                KeyCode::Enter => {
                    let path = if o.input.text.is_empty() {
                        o.items.get(o.selected).map(|i| i.path.clone())
                    } else {
                        Some(
                            o.completions
                                .get(o.selected)
                                .filter(|c| !c.ends_with('/'))
                                .map(PathBuf::from)
                                .unwrap_or_else(|| PathBuf::from(&o.input.text)),
                        )
                    };
                    match path {
                        Some(path) => {
                            o.error = None;
                            o.opening = Some(path.clone());
                            (Consumed, Outcome::OpenPath(path))
                        }
                        None => (Consumed, Outcome::Stay),
                    }
                }
                _ => match o.input.key(&key) {
                    Some(true) => {
                        o.selected = 0;
                        (Consumed, Outcome::Typed(o.input.text.clone()))
                    }
                    Some(false) => (Consumed, Outcome::Stay),
                    None if ctrl => (Handled::Ignored, Outcome::Stay),
                    None => (Consumed, Outcome::Stay),
                },
            },
            Overlay::Defaults(form) => (Consumed, form.key(&key)),
            Overlay::Ask(ask) => match ask.key(&key) {
                (handled, crate::tui::ask::AskOutcome::Stay) => (handled, Outcome::Stay),
                (handled, crate::tui::ask::AskOutcome::Answer(reply)) => {
                    (handled, Outcome::Replied(ask.ask.clone(), reply))
                }
            },
            Overlay::Confirm(c) if c.purpose.choices().is_some() => match key.code {
                KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {
                    (Consumed, Outcome::Answered(c.purpose.clone(), false))
                }
                // No default: Enter or y would not say which.
                KeyCode::Char(k) => match c.purpose.choices().and_then(|list| {
                    list.iter()
                        .find(|(key, _, _)| *key == k.to_ascii_lowercase())
                }) {
                    Some((_, choice, _)) => (Consumed, Outcome::Chose(c.purpose.clone(), *choice)),
                    None => (Consumed, Outcome::Stay),
                },
                _ => (Consumed, Outcome::Stay),
            },
            Overlay::Confirm(c) => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => {
                    (Consumed, Outcome::Answered(c.purpose.clone(), true))
                }
                KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {
                    (Consumed, Outcome::Answered(c.purpose.clone(), false))
                }
                _ => (Consumed, Outcome::Stay),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn fuzzy_matches_rank_the_best_first() {
        let mut p = Palette::new(vec![
            (Action::Save, "Save the session".into(), "Ctrl-s".into()),
            (
                Action::ToggleLog,
                "Show or hide the protocol log".into(),
                "L".into(),
            ),
            (
                Action::SetTheme("light".into()),
                "Theme: light".into(),
                String::new(),
            ),
        ]);
        p.query = Input::new("thm lig");
        p.refilter();
        assert_eq!(p.chosen(), Some(Action::SetTheme("light".into())));
        p.query = Input::new("plog");
        p.refilter();
        assert_eq!(p.chosen(), Some(Action::ToggleLog));
        p.query = Input::new("zzzz");
        p.refilter();
        assert_eq!(p.chosen(), None);
    }

    #[test]
    fn a_question_answers_yes_or_no_and_nothing_else() {
        let mut o = Overlay::Confirm(Confirm {
            title: "t".into(),
            message: "m".into(),
            purpose: ConfirmPurpose::Quit,
        });
        assert_eq!(o.key(key(KeyCode::Char('x'))).1, Outcome::Stay);
        assert_eq!(
            o.key(key(KeyCode::Esc)).1,
            Outcome::Answered(ConfirmPurpose::Quit, false)
        );
        assert_eq!(
            o.key(key(KeyCode::Char('y'))).1,
            Outcome::Answered(ConfirmPurpose::Quit, true)
        );
    }

    #[test]
    fn the_open_overlay_opens_a_typed_path_or_a_listed_one() {
        let mut o = Overlay::Open(OpenFile {
            items: vec![PickerItem {
                path: "sessions/a.json".into(),
                label: "a".into(),
                detail: String::new(),
            }],
            loading: false,
            ..OpenFile::new()
        });
        assert_eq!(
            o.key(key(KeyCode::Enter)).1,
            Outcome::OpenPath("sessions/a.json".into())
        );
        for c in "/tmp/x".chars() {
            o.key(key(KeyCode::Char(c)));
        }
        assert_eq!(
            o.key(key(KeyCode::Enter)).1,
            Outcome::OpenPath("/tmp/x".into())
        );
    }
}
