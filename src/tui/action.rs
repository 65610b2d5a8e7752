//! Everything a user can do, and the keys that do it. One table (`BINDINGS`) is the key map,
//! the help overlay and the command palette's list, so the three never disagree.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The panes that can have the focus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pane {
    Sidebar,
    Transcript,
    Detail,
    Composer,
    Log,
}

impl Pane {
    pub fn name(self) -> &'static str {
        match self {
            Pane::Sidebar => "servers",
            Pane::Transcript => "transcript",
            Pane::Detail => "detail",
            Pane::Composer => "composer",
            Pane::Log => "log",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Quit,
    Help,
    Palette,
    FocusNext,
    FocusPrev,
    Focus(Pane),
    NextDialogue,
    PrevDialogue,
    GoToDialogue(usize),
    NewDialogue,
    CloseDialogue,
    Reconnect,
    Send,
    /// Esc: cancel the pending turn, else leave the current field or overlay.
    Cancel,
    ToggleLog,
    Save,
    SaveAs,
    Open,
    Replay,
    CopyJson,
    CopyRequest,
    NextDetailTab,
    PrevDetailTab,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    /// Enter on the sidebar or the transcript.
    Select,
    ComposerMode,
    NextKind,
    PrevKind,
    CycleTheme,
    SetTheme(String),
    FilterLog,
    ClearLog,
    ToggleFollowLog,
}

impl Action {
    /// What the palette and help call it.
    pub fn title(&self) -> String {
        match self {
            Action::Quit => "Quit".into(),
            Action::Help => "Show the keys".into(),
            Action::Palette => "Command palette".into(),
            Action::FocusNext => "Focus the next pane".into(),
            Action::FocusPrev => "Focus the previous pane".into(),
            Action::Focus(p) => format!("Focus the {}", p.name()),
            Action::NextDialogue => "Next dialogue".into(),
            Action::PrevDialogue => "Previous dialogue".into(),
            Action::GoToDialogue(n) => format!("Dialogue {}", n + 1),
            Action::NewDialogue => "New dialogue (a new MCP session) on the selected server".into(),
            Action::CloseDialogue => "Close the dialogue (ends its MCP session)".into(),
            Action::Reconnect => "Reconnect: continue the dialogue in a new MCP session".into(),
            Action::Send => "Send the Request".into(),
            Action::Cancel => "Cancel the pending turn / leave".into(),
            Action::ToggleLog => "Show or hide the protocol log".into(),
            Action::Save => "Save the session".into(),
            Action::SaveAs => "Save the session as…".into(),
            Action::Open => "Open a session".into(),
            Action::Replay => "Replay the dialogue and compare".into(),
            Action::CopyJson => "Copy the JSON in view (Response, draft, log entry)".into(),
            Action::CopyRequest => "Copy the turn's Request".into(),
            Action::NextDetailTab => "Next detail tab".into(),
            Action::PrevDetailTab => "Previous detail tab".into(),
            Action::Up => "Up".into(),
            Action::Down => "Down".into(),
            Action::PageUp => "Page up".into(),
            Action::PageDown => "Page down".into(),
            Action::Top => "First".into(),
            Action::Bottom => "Last".into(),
            Action::Select => "Open / select".into(),
            Action::ComposerMode => "Composer: form or raw JSON".into(),
            Action::NextKind => "Composer: next Kind".into(),
            Action::PrevKind => "Composer: previous Kind".into(),
            Action::CycleTheme => "Next theme".into(),
            Action::SetTheme(name) => format!("Theme: {name}"),
            Action::FilterLog => "Filter the protocol log".into(),
            Action::ClearLog => "Clear the protocol log".into(),
            Action::ToggleFollowLog => "Follow the end of the log, or stop".into(),
        }
    }
}

/// Where a binding applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// Always, even while typing in the composer.
    Anywhere,
    /// Whenever the focus is not in a text field.
    Global,
    Pane(Pane),
}

impl Context {
    pub fn title(self) -> &'static str {
        match self {
            Context::Anywhere => "Anywhere",
            Context::Global => "Outside the composer",
            Context::Pane(Pane::Sidebar) => "Servers",
            Context::Pane(Pane::Transcript) => "Transcript",
            Context::Pane(Pane::Detail) => "Detail",
            Context::Pane(Pane::Composer) => "Composer",
            Context::Pane(Pane::Log) => "Protocol log",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl Key {
    const fn plain(code: KeyCode) -> Key {
        Key {
            code,
            modifiers: KeyModifiers::NONE,
        }
    }

    const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            modifiers: KeyModifiers::CONTROL,
        }
    }

    const fn ch(c: char) -> Key {
        Key::plain(KeyCode::Char(c))
    }

    /// Whether a key event is this key (Shift is part of an upper-case character already).
    pub fn matches(&self, event: &KeyEvent) -> bool {
        let mods = event.modifiers - KeyModifiers::SHIFT;
        let wanted = self.modifiers - KeyModifiers::SHIFT;
        match (self.code, event.code) {
            (KeyCode::Char(a), KeyCode::Char(b)) => a == b && mods == wanted,
            (KeyCode::BackTab, KeyCode::BackTab) => true,
            (a, b) => a == b && event.modifiers == self.modifiers,
        }
    }

    pub fn label(&self) -> String {
        let mut s = String::new();
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            s.push_str("Ctrl-");
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            s.push_str("Alt-");
        }
        match self.code {
            KeyCode::Char(' ') => s.push_str("Space"),
            KeyCode::Char(c) => s.push(c),
            KeyCode::F(n) => s.push_str(&format!("F{n}")),
            KeyCode::Enter => s.push_str("Enter"),
            KeyCode::Esc => s.push_str("Esc"),
            KeyCode::Tab => s.push_str("Tab"),
            KeyCode::BackTab => s.push_str("Shift-Tab"),
            KeyCode::Up => s.push('↑'),
            KeyCode::Down => s.push('↓'),
            KeyCode::Left => s.push('←'),
            KeyCode::Right => s.push('→'),
            KeyCode::PageUp => s.push_str("PgUp"),
            KeyCode::PageDown => s.push_str("PgDn"),
            KeyCode::Home => s.push_str("Home"),
            KeyCode::End => s.push_str("End"),
            other => s.push_str(&format!("{other:?}")),
        }
        s
    }
}

pub struct Binding {
    pub keys: &'static [Key],
    pub context: Context,
    pub action: Action,
}

use Context::{Anywhere, Global, Pane as In};
use KeyCode as K;

/// Every key binding. Order matters: the first that matches wins.
pub static BINDINGS: &[Binding] = &[
    Binding {
        keys: &[
            Key::plain(K::F(5)),
            Key {
                code: K::Enter,
                modifiers: KeyModifiers::CONTROL,
            },
        ],
        context: Anywhere,
        action: Action::Send,
    },
    Binding {
        keys: &[Key::plain(K::Esc)],
        context: Anywhere,
        action: Action::Cancel,
    },
    Binding {
        keys: &[Key::plain(K::F(1))],
        context: Anywhere,
        action: Action::Help,
    },
    Binding {
        keys: &[Key::ctrl('p')],
        context: Anywhere,
        action: Action::Palette,
    },
    Binding {
        keys: &[Key::ctrl('s')],
        context: Anywhere,
        action: Action::Save,
    },
    Binding {
        keys: &[Key::ctrl('o')],
        context: Anywhere,
        action: Action::Open,
    },
    Binding {
        keys: &[Key::ctrl('q'), Key::ctrl('c')],
        context: Anywhere,
        action: Action::Quit,
    },
    Binding {
        keys: &[Key::plain(K::F(2))],
        context: Anywhere,
        action: Action::ComposerMode,
    },
    Binding {
        keys: &[Key::plain(K::Tab)],
        context: Anywhere,
        action: Action::FocusNext,
    },
    Binding {
        keys: &[Key::plain(K::BackTab)],
        context: Anywhere,
        action: Action::FocusPrev,
    },
    Binding {
        keys: &[Key::ch('q')],
        context: Global,
        action: Action::Quit,
    },
    Binding {
        keys: &[Key::ch('?')],
        context: Global,
        action: Action::Help,
    },
    Binding {
        keys: &[Key::ch(':')],
        context: Global,
        action: Action::Palette,
    },
    Binding {
        keys: &[Key::ch('n')],
        context: Global,
        action: Action::NewDialogue,
    },
    Binding {
        keys: &[Key::ch('x')],
        context: Global,
        action: Action::CloseDialogue,
    },
    Binding {
        keys: &[Key::ch('R')],
        context: Global,
        action: Action::Reconnect,
    },
    Binding {
        keys: &[Key::ch('r')],
        context: Global,
        action: Action::Replay,
    },
    Binding {
        keys: &[Key::ch(']')],
        context: Global,
        action: Action::NextDialogue,
    },
    Binding {
        keys: &[Key::ch('[')],
        context: Global,
        action: Action::PrevDialogue,
    },
    Binding {
        keys: &[Key::ch('L')],
        context: Global,
        action: Action::ToggleLog,
    },
    Binding {
        keys: &[Key::ch('y')],
        context: Global,
        action: Action::CopyJson,
    },
    Binding {
        keys: &[Key::ch('Y')],
        context: Global,
        action: Action::CopyRequest,
    },
    Binding {
        keys: &[Key::ch('S')],
        context: Global,
        action: Action::SaveAs,
    },
    Binding {
        keys: &[Key::ch('T')],
        context: Global,
        action: Action::CycleTheme,
    },
    Binding {
        keys: &[Key::ch('c')],
        context: Global,
        action: Action::Focus(Pane::Composer),
    },
    Binding {
        keys: &[Key::ch('k'), Key::plain(K::Up)],
        context: Global,
        action: Action::Up,
    },
    Binding {
        keys: &[Key::ch('j'), Key::plain(K::Down)],
        context: Global,
        action: Action::Down,
    },
    Binding {
        keys: &[Key::plain(K::PageUp), Key::ctrl('u')],
        context: Global,
        action: Action::PageUp,
    },
    Binding {
        keys: &[Key::plain(K::PageDown), Key::ctrl('d')],
        context: Global,
        action: Action::PageDown,
    },
    Binding {
        keys: &[Key::ch('g'), Key::plain(K::Home)],
        context: Global,
        action: Action::Top,
    },
    Binding {
        keys: &[Key::ch('G'), Key::plain(K::End)],
        context: Global,
        action: Action::Bottom,
    },
    Binding {
        keys: &[Key::plain(K::Enter)],
        context: Global,
        action: Action::Select,
    },
    Binding {
        keys: &[Key::ch('l'), Key::plain(K::Right)],
        context: In(Pane::Detail),
        action: Action::NextDetailTab,
    },
    Binding {
        keys: &[Key::ch('h'), Key::plain(K::Left)],
        context: In(Pane::Detail),
        action: Action::PrevDetailTab,
    },
    Binding {
        keys: &[Key::ch('l'), Key::plain(K::Right)],
        context: In(Pane::Transcript),
        action: Action::NextDetailTab,
    },
    Binding {
        keys: &[Key::ch('h'), Key::plain(K::Left)],
        context: In(Pane::Transcript),
        action: Action::PrevDetailTab,
    },
    Binding {
        keys: &[Key::ch('/')],
        context: In(Pane::Log),
        action: Action::FilterLog,
    },
    Binding {
        keys: &[Key::ch('C')],
        context: In(Pane::Log),
        action: Action::ClearLog,
    },
    Binding {
        keys: &[Key::ch('f')],
        context: In(Pane::Log),
        action: Action::ToggleFollowLog,
    },
];

/// Keys handled by the composer itself (shown in the help; not in `BINDINGS` because they
/// mean typing elsewhere).
pub static COMPOSER_KEYS: &[(&str, &str)] = &[
    (
        "↑ / ↓",
        "previous / next field (in a multi-line field: lines; Alt-↑/↓ leaves it)",
    ),
    ("← / → on Kind", "previous / next Kind"),
    (
        "Tab",
        "accept the completion shown, else focus the next pane",
    ),
    ("Ctrl-Space", "show completions"),
    ("F2", "form or raw JSON"),
    ("F5 / Ctrl-Enter", "send"),
    ("Esc", "leave the composer (or cancel the pending turn)"),
];

/// Every key by where it applies, as (section, [(keys, what they do)]): what the help
/// overlay shows and what the README's table is made from (`keys_markdown`).
pub fn key_groups() -> Vec<(&'static str, Vec<(String, String)>)> {
    let contexts = [
        Context::Anywhere,
        Context::Global,
        Context::Pane(Pane::Sidebar),
        Context::Pane(Pane::Transcript),
        Context::Pane(Pane::Detail),
        Context::Pane(Pane::Log),
    ];
    let mut groups = Vec::new();
    for context in contexts {
        let mut keys: Vec<(String, String)> = BINDINGS
            .iter()
            .filter(|b| b.context == context)
            .map(|b| {
                (
                    b.keys
                        .iter()
                        .map(Key::label)
                        .collect::<Vec<_>>()
                        .join(" / "),
                    b.action.title(),
                )
            })
            .collect();
        if context == Context::Global {
            keys.push(("1 … 9".into(), "Dialogue 1 … 9".into()));
        }
        groups.push((context.title(), keys));
    }
    groups.push((
        "Composer",
        COMPOSER_KEYS
            .iter()
            .map(|(k, w)| (k.to_string(), w.to_string()))
            .collect(),
    ));
    groups.push((
        "Mouse",
        vec![
            (
                "click".into(),
                "focus a pane; pick a tab, a row or a field".into(),
            ),
            ("wheel".into(), "scroll what is under the pointer".into()),
        ],
    ));
    groups
}

/// The keys as a Markdown table (the README's).
pub fn keys_markdown() -> String {
    let mut out = String::from("| where | keys | what they do |\n|---|---|---|\n");
    for (section, keys) in key_groups() {
        for (k, what) in keys {
            let k = k.replace('|', "\\|");
            out.push_str(&format!("| {section} | `{k}` | {what} |\n"));
        }
    }
    out
}

/// The action a key does in a context, if any. `typing` is true when a text field has the
/// focus: only `Anywhere` bindings apply then.
pub fn action_for(event: &KeyEvent, focus: Pane, typing: bool) -> Option<Action> {
    for b in BINDINGS {
        let applies = match b.context {
            Context::Anywhere => true,
            Context::Global => !typing,
            Context::Pane(p) => !typing && p == focus,
        };
        if applies && b.keys.iter().any(|k| k.matches(event)) {
            return Some(b.action.clone());
        }
    }
    if !typing
        && let KeyCode::Char(c @ '1'..='9') = event.code
        && event.modifiers - KeyModifiers::SHIFT == KeyModifiers::NONE
    {
        return Some(Action::GoToDialogue(c as usize - '1' as usize));
    }
    None
}

/// The keys of an action, for hints ("F5").
pub fn keys_of(action: &Action) -> String {
    BINDINGS
        .iter()
        .find(|b| &b.action == action)
        .map(|b| {
            b.keys
                .iter()
                .map(Key::label)
                .collect::<Vec<_>>()
                .join(" / ")
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn typing_keeps_letters_and_anywhere_keys_still_work() {
        let q = key(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(action_for(&q, Pane::Transcript, false), Some(Action::Quit));
        assert_eq!(action_for(&q, Pane::Composer, true), None);
        let f5 = key(KeyCode::F(5), KeyModifiers::NONE);
        assert_eq!(action_for(&f5, Pane::Composer, true), Some(Action::Send));
        let upper = key(KeyCode::Char('R'), KeyModifiers::SHIFT);
        assert_eq!(
            action_for(&upper, Pane::Sidebar, false),
            Some(Action::Reconnect)
        );
        let two = key(KeyCode::Char('2'), KeyModifiers::NONE);
        assert_eq!(
            action_for(&two, Pane::Detail, false),
            Some(Action::GoToDialogue(1))
        );
        assert_eq!(keys_of(&Action::Send), "F5 / Ctrl-Enter");
    }
}
