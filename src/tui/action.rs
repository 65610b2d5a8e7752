//! Everything a user can do, and the keys that do it. One table (`DEFAULT_BINDINGS`) is the key
//! map, the help overlay, the command palette's list and the README's table of keys, so that
//! they never disagree; a user's `keys.toml` changes the map the running explorer uses
//! (`Keymap`), and help and palette show that one.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Whether a part of the explorer took a key (or a mouse event): a part that does not is
/// passed over for the next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handled {
    Consumed,
    Ignored,
}

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
    pub const ALL: [Pane; 5] = [
        Pane::Sidebar,
        Pane::Transcript,
        Pane::Detail,
        Pane::Composer,
        Pane::Log,
    ];

    /// The name of the action that gives it the focus, in keys.toml.
    pub fn focus_name(self) -> &'static str {
        match self {
            Pane::Sidebar => "focus-servers",
            Pane::Transcript => "focus-transcript",
            Pane::Detail => "focus-detail",
            Pane::Composer => "focus-composer",
            Pane::Log => "focus-log",
        }
    }

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

/// Declares the actions once: the variant, its stable name (what keys.toml and the palette
/// use) and its title.
macro_rules! actions {
    ($($variant:ident = $name:literal, $title:literal;)*) => {
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum Action {
            $($variant,)*
            /// Focus a pane (palette only).
            Focus(Pane),
            /// Go to dialogue N (the digits).
            GoToDialogue(usize),
            /// Use a theme (palette only).
            SetTheme(String),
            /// Add a server found in a servers file, by name (palette only).
            AddFoundServer(String),
        }

        impl Action {
            /// Every action a key can be bound to, by stable name.
            pub const NAMED: &'static [(&'static str, Action)] = &[$(($name, Action::$variant)),*];

            /// What the palette and help call it.
            pub fn title(&self) -> String {
                match self {
                    $(Action::$variant => $title.into(),)*
                    Action::Focus(p) => format!("Focus the {}", p.name()),
                    Action::GoToDialogue(n) => format!("Dialogue {}", n + 1),
                    Action::SetTheme(name) => format!("Theme: {name}"),
                    Action::AddFoundServer(name) => format!("Add server {name}"),
                }
            }

            /// The name keys.toml uses (`focus-composer` … for a pane's focus).
            pub fn name(&self) -> Option<&'static str> {
                if let Action::Focus(p) = self {
                    return Some(p.focus_name());
                }
                Action::NAMED.iter().find(|(_, a)| a == self).map(|(n, _)| *n)
            }

            pub fn from_name(name: &str) -> Option<Action> {
                if let Some(p) = Pane::ALL.into_iter().find(|p| p.focus_name() == name) {
                    return Some(Action::Focus(p));
                }
                Action::NAMED.iter().find(|(n, _)| *n == name).map(|(_, a)| a.clone())
            }
        }
    };
}

actions! {
    Quit = "quit", "Quit";
    Help = "help", "Show the keys";
    Palette = "palette", "Command palette";
    FocusNext = "focus-next", "Focus the next pane";
    FocusPrev = "focus-previous", "Focus the previous pane";
    NextDialogue = "next-dialogue", "Next dialogue";
    PrevDialogue = "previous-dialogue", "Previous dialogue";
    NewDialogue = "new-dialogue", "New dialogue (a new MCP session) on the server of the dialogue in view";
    CloseDialogue = "close-dialogue", "Close the dialogue (ends its MCP session)";
    Reconnect = "reconnect", "Reconnect: continue the dialogue in a new MCP session";
    Send = "send", "Send the Request";
    Cancel = "cancel", "Cancel the pending turn (in the composer: back to NAV, always)";
    ToggleLog = "toggle-log", "Show or hide the protocol log";
    Messages = "messages", "Show the messages of this run";
    Save = "save", "Save the session";
    SaveAs = "save-as", "Save the session as…";
    Open = "open", "Open a session (any path)";
    Defaults = "defaults", "Defaults of new Requests: MInstance, UEnvironment, SessionID";
    SaveAsTest = "save-as-test", "Save the dialogue as a test (a scenario file)";
    RunScenario = "run-scenario", "Run a scenario (a test) on the server in view";
    Replay = "replay", "Replay the dialogue and compare";
    Watch = "watch", "Watch the newest proxy recording live";
    TakeOver = "take-over", "Take over a watched dialogue at the selected turn, in a dialogue of your own";
    AddServer = "add-server", "Add a server: a command line, a URL, or one found in servers files";
    RemoveServer = "remove-server", "Remove the server in view (its dialogues are closed)";
    CopyJson = "copy", "Copy the JSON in view (Response, draft, log entry)";
    CopyRequest = "copy-request", "Copy the turn's Request";
    WriteJson = "write-json", "Write the JSON in view to a file";
    NextDetailTab = "next-tab", "Next detail tab";
    PrevDetailTab = "previous-tab", "Previous detail tab";
    Up = "up", "Up";
    Down = "down", "Down";
    PageUp = "page-up", "Page up";
    PageDown = "page-down", "Page down";
    Top = "top", "First";
    Bottom = "bottom", "Last";
    Select = "select", "Open / select";
    ComposerMode = "composer-mode", "Composer: form or raw JSON";
    ClearComposer = "clear-composer", "Composer: clear the Request";
    ResetField = "reset-field", "Composer: empty the field";
    NextKind = "next-kind", "Composer: next Kind";
    PrevKind = "previous-kind", "Composer: previous Kind";
    NextField = "next-field", "Composer: the next field (past the last: the next pane); in completions: accept the one chosen";
    PrevField = "previous-field", "Composer: the previous field (before the first: the previous pane)";
    FieldUp = "field-up", "Composer: the field above, from any line of a multi-line field";
    FieldDown = "field-down", "Composer: the field below, from any line of a multi-line field";
    ConfirmField = "confirm-field", "Composer: the next field, from a one-line field (in a multi-line field and in raw JSON Enter is a new line)";
    ShowCompletions = "show-completions", "Composer: show the completions of what is typed";
    AcceptCompletion = "accept-completion", "Composer: accept the completion chosen with the arrows (in a one-line field, the first)";
    UndoDraft = "undo-draft", "Composer: back to the draft a turn's Request or Clear replaced";
    RedoDraft = "redo-draft", "Composer: forward again to the draft undo-draft went back from";
    CycleTheme = "next-theme", "Next theme";
    FilterLog = "filter-log", "Filter the protocol log";
    ClearLog = "clear-log", "Clear the protocol log";
    ToggleFollowLog = "follow-log", "Follow the end of the log, or stop";
    Export = "export", "Export the turn (or the draft) as a command line: bkn-explorer send, curl";
    Resources = "resources", "Resources of the server in view: list, read (pretty JSON), copy";
    Certify = "certify", "Certify this server: run the conformance rules on the server in view (again: show the run)";
    CertifyFilter = "certify-filter", "Certify: show every rule, or only the failed, passed or skipped";
    CertifyAgain = "certify-again", "Certify: run the rules again";
    CertifyHide = "certify-hide", "Certify: hide the pane (a run goes on; V shows it again)";
    CertifySaveJson = "certify-save-json", "Certify: save the report as JSON";
    CertifySaveMarkdown = "certify-save-markdown", "Certify: save the report as Markdown";
    Complete = "complete", "Complete the path typed (a list when more than one fits); in a form: next field";
    Close = "close", "Close the overlay (where nothing is typed)";
    Reload = "reload", "Read the list again (Resources)";
    ExportSend = "export-send", "Export: the bkn-explorer send line";
    ExportCurl = "export-curl", "Export: the curl line (a server over HTTP)";
    NewLine = "new-line", "A new line in a reply to a server's question";
    FieldYes = "field-yes", "A form's yes-or-no field: yes";
    FieldNo = "field-no", "A form's yes-or-no field: no";
    Pick = "pick", "A form's multiple choice: check or uncheck the choice under the cursor";
    ClearField = "clear-field", "A form's choice or yes-or-no field: empty it (not answered)";
    LineStart = "line-start", "To the start of the line";
    LineEnd = "line-end", "To the end of the line";
    CursorLeft = "cursor-left", "One character left";
    CursorRight = "cursor-right", "One character right";
    WordLeft = "word-left", "One word left";
    WordRight = "word-right", "One word right";
    DeleteBack = "delete-back", "Delete the character before the cursor";
    DeleteForward = "delete-forward", "Delete the character under the cursor";
    DeleteWordBack = "delete-word-back", "Cut the word before the cursor";
    DeleteWordForward = "delete-word-forward", "Cut the word after the cursor";
    DeleteToStart = "delete-to-start", "Cut to the start of the line";
    DeleteToEnd = "delete-to-end", "Cut to the end of the line";
    PutBack = "put-back", "Put back what the last cut took";
    Search = "search", "Search (Raw detail tab, protocol log)";
    SearchNext = "search-next", "Next match of the search";
    SearchPrev = "search-previous", "Previous match of the search";
    Yes = "yes", "Yes";
    No = "no", "No";
    SaveFirst = "save-first", "Save first";
    SetAside = "set-aside", "Set the turns aside";
    Overwrite = "overwrite", "Overwrite";
    SaveElsewhere = "save-elsewhere", "Save as another file";
}

impl Action {
    /// Whether the action means something only in an overlay, a question or the composer's
    /// own keys (the palette does not list it).
    pub fn in_overlay_only(&self) -> bool {
        matches!(
            self,
            Action::Complete
                | Action::Close
                | Action::Reload
                | Action::ExportSend
                | Action::ExportCurl
                | Action::NextField
                | Action::PrevField
                | Action::FieldUp
                | Action::FieldDown
                | Action::ConfirmField
                | Action::ShowCompletions
                | Action::AcceptCompletion
                | Action::UndoDraft
                | Action::RedoDraft
                | Action::NewLine
                | Action::FieldYes
                | Action::FieldNo
                | Action::Pick
                | Action::ClearField
                | Action::LineStart
                | Action::LineEnd
                | Action::CursorLeft
                | Action::CursorRight
                | Action::WordLeft
                | Action::WordRight
                | Action::DeleteBack
                | Action::DeleteForward
                | Action::DeleteWordBack
                | Action::DeleteWordForward
                | Action::DeleteToStart
                | Action::DeleteToEnd
                | Action::PutBack
                | Action::Yes
                | Action::No
                | Action::SaveFirst
                | Action::SetAside
                | Action::Overwrite
                | Action::SaveElsewhere
        )
    }
}

/// Where a binding applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// Always, even while typing in the composer.
    Anywhere,
    /// Whenever the focus is not in the composer.
    Global,
    Pane(Pane),
    /// The certify pane (`tui::certify`), while it is shown.
    Certify,
    /// An overlay (a list, a prompt, a scrolling box: `tui::overlay`). In one that is typed
    /// into, the line editor's keys come first (`overlay::input`).
    Overlay,
    /// A question (`overlay::confirm`).
    Question,
    /// Typing a line (`overlay::input`: prompts, the palette, Open, forms, the log's filter,
    /// searches, the certify pane's path): the line editor's keys.
    Edit,
    /// While a search is shown in the Raw tab or the log.
    Search,
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
            Context::Certify => "Certify pane",
            Context::Overlay => "Overlays (lists, prompts)",
            Context::Question => "Questions",
            Context::Edit => "Typing a line (prompts, palette, forms, filters, searches)",
            Context::Search => "While searching",
        }
    }

    /// The name keys.toml uses for a section.
    pub fn name(self) -> &'static str {
        match self {
            Context::Anywhere => "anywhere",
            Context::Global => "global",
            Context::Pane(Pane::Sidebar) => "servers",
            Context::Pane(Pane::Transcript) => "transcript",
            Context::Pane(Pane::Detail) => "detail",
            Context::Pane(Pane::Composer) => "composer",
            Context::Pane(Pane::Log) => "log",
            Context::Certify => "certify",
            Context::Overlay => "overlay",
            Context::Question => "question",
            Context::Edit => "edit",
            Context::Search => "search",
        }
    }

    pub const ALL: [Context; 12] = [
        Context::Anywhere,
        Context::Global,
        Context::Pane(Pane::Sidebar),
        Context::Pane(Pane::Transcript),
        Context::Pane(Pane::Detail),
        Context::Pane(Pane::Composer),
        Context::Pane(Pane::Log),
        Context::Certify,
        Context::Overlay,
        Context::Question,
        Context::Edit,
        Context::Search,
    ];
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl Key {
    pub const fn plain(code: KeyCode) -> Key {
        Key {
            code,
            modifiers: KeyModifiers::NONE,
        }
    }

    pub const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            modifiers: KeyModifiers::CONTROL,
        }
    }

    pub const fn ch(c: char) -> Key {
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
        if self.modifiers.contains(KeyModifiers::SHIFT)
            && !matches!(self.code, KeyCode::Char(_) | KeyCode::BackTab)
        {
            s.push_str("Shift-");
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
            KeyCode::Delete => s.push_str("Delete"),
            KeyCode::Backspace => s.push_str("Backspace"),
            other => s.push_str(&format!("{other:?}")),
        }
        s
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    pub keys: Vec<Key>,
    pub context: Context,
    pub action: Action,
}

/// Keys the composer handles itself (shown in the help; not in the table because they mean
/// typing elsewhere).
pub static COMPOSER_KEYS: &[(&str, &str)] = &[
    ("a letter on Kind", "the next Kind that starts with it"),
    (
        "Enter",
        "a new line in a multi-line field (Terms, Steps, Commit…) and in raw JSON; the status \
         line says what it does where you are",
    ),
    (
        "Esc",
        "back to NAV, always (an open completion list closes first); outside, Esc cancels the \
         pending turn",
    ),
];

/// The rule of the two modes (help and README): where letters go is never a guess.
pub static MODE_KEYS: &[(&str, &str)] = &[
    (
        "NAV",
        "the status line starts with NAV: letters are commands (the focused pane: ▶ before its \
         title, a thick border)",
    ),
    (
        "EDIT",
        "the status line starts with ✎ EDIT: the composer (or the log's filter) has the focus, \
         letters are text; only the keys of \"Anywhere\" are commands",
    ),
    (
        "into EDIT",
        "at start (the first dialogue's composer), then only by your own key: c, Tab into the \
         composer, a click on it, Enter on a turn, n (a new dialogue), O (take over), a (add a \
         server); switching dialogues never enters it",
    ),
    (
        "out of EDIT",
        "Esc (always), Tab past the last field, F6, a click elsewhere",
    ),
];

/// The keys in use: the defaults, changed by the user's keys.toml.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keymap {
    pub bindings: Vec<Binding>,
}

impl Default for Keymap {
    /// The explorer's own keys (`default-keys.toml`, read once).
    fn default() -> Self {
        Keymap {
            bindings: crate::tui::keys_file::defaults(),
        }
    }
}

impl Keymap {
    /// The action a key does with the focus on `focus`. `typing` is true when the composer
    /// (or another text input) has the focus: only `Anywhere` bindings apply then.
    pub fn action_for(&self, event: &KeyEvent, focus: Pane, typing: bool) -> Option<Action> {
        for b in &self.bindings {
            let applies = match b.context {
                Context::Anywhere => true,
                Context::Global => !typing,
                // The composer's own keys: only the composer asks for them (`action_in`).
                Context::Pane(Pane::Composer) => false,
                Context::Pane(p) => !typing && p == focus,
                // Only their part asks for these (`action_in`).
                Context::Certify
                | Context::Overlay
                | Context::Question
                | Context::Edit
                | Context::Search => false,
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

    /// The action of a key in the line editor (`overlay::input`), the `edit` place.
    pub fn edit(&self, event: &KeyEvent) -> Option<Action> {
        self.action_in(event, Context::Edit)
    }

    /// The action a key does in one place only (the certify pane's keys).
    pub fn action_in(&self, event: &KeyEvent, context: Context) -> Option<Action> {
        self.bindings
            .iter()
            .filter(|b| b.context == context)
            .find(|b| b.keys.iter().any(|k| k.matches(event)))
            .map(|b| b.action.clone())
    }

    /// Every action a key does in one place (a question's choices share keys).
    pub fn actions_in(&self, event: &KeyEvent, context: Context) -> Vec<Action> {
        self.bindings
            .iter()
            .filter(|b| b.context == context && b.keys.iter().any(|k| k.matches(event)))
            .map(|b| b.action.clone())
            .collect()
    }

    /// The keys of an action in one place, for the pane's hints.
    pub fn keys_in(&self, action: &Action, context: Context) -> String {
        self.bindings
            .iter()
            .find(|b| &b.action == action && b.context == context)
            .map(|b| {
                b.keys
                    .iter()
                    .map(Key::label)
                    .collect::<Vec<_>>()
                    .join(" / ")
            })
            .unwrap_or_default()
    }

    /// The keys of an action, for hints ("F5 / Ctrl-Enter").
    pub fn keys_of(&self, action: &Action) -> String {
        self.bindings
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

    /// The first key of an action, for the shortest hints ("F5").
    pub fn first_key(&self, action: &Action) -> String {
        self.keys_of(action)
            .split(" / ")
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    /// Every key by where it applies, as (section, [(keys, what they do)]): what the help
    /// overlay shows and what the README's table is made from (`keys_markdown`). Sections
    /// without keys are left out.
    pub fn groups(&self) -> Vec<(&'static str, Vec<(String, String)>)> {
        let mut groups = vec![(
            "Modes",
            MODE_KEYS
                .iter()
                .map(|(k, w)| (k.to_string(), w.to_string()))
                .collect(),
        )];
        for context in Context::ALL {
            let mut keys: Vec<(String, String)> = self
                .bindings
                .iter()
                .filter(|b| b.context == context)
                .map(|b| {
                    (
                        b.keys
                            .iter()
                            .map(Key::label)
                            .collect::<Vec<_>>()
                            .join(" / "),
                        title_in(&b.action, context),
                    )
                })
                .collect();
            match context {
                Context::Global => keys.push(("1 … 9".into(), "Dialogue 1 … 9".into())),
                Context::Pane(Pane::Composer) => keys.extend(
                    COMPOSER_KEYS
                        .iter()
                        .map(|(k, w)| (k.to_string(), w.to_string())),
                ),
                Context::Pane(Pane::Sidebar) => keys.push((
                    "Enter".into(),
                    "on a server: show or hide its dialogues; on a dialogue: show it".into(),
                )),
                Context::Pane(Pane::Log) => keys.push((
                    "Enter".into(),
                    "open the entry (pretty JSON, y copies)".into(),
                )),
                _ => {}
            }
            if !keys.is_empty() {
                groups.push((context.title(), keys));
            }
        }
        groups.push((
            "Mouse",
            vec![
                (
                    "click".into(),
                    "focus a pane; pick a tab, a row, a field or a completion".into(),
                ),
                ("wheel".into(), "scroll what is under the pointer".into()),
            ],
        ));
        groups
    }
}

/// What an action does in a place, where that says more than its title.
fn title_in(action: &Action, context: Context) -> String {
    match (context, action) {
        (Context::Certify, Action::Select) => {
            "open the selected rule's evidence as dialogues".into()
        }
        (Context::Certify, Action::Cancel) => {
            "stop the run (after the rule under way); once it is over, close the pane".into()
        }
        (Context::Overlay, Action::Up | Action::Down) => {
            "scroll, or move in a list (k and j only in a list without a line to type: in Open \
             and the path prompts they are typed)"
                .into()
        }
        // Which question offers which answer: only the one named asks it.
        (Context::Question, Action::SaveFirst) => {
            "Save first (opening another session while turns are unsaved)".into()
        }
        (Context::Question, Action::SetAside) => {
            "Set the unsaved turns aside, then open the other session".into()
        }
        (Context::Question, Action::Overwrite) => {
            "Overwrite (saving over a file that changed since it was opened)".into()
        }
        (Context::Question, Action::SaveElsewhere) => {
            "Save as another file (the same question)".into()
        }
        (Context::Overlay, Action::Select) => {
            "run, open, confirm: the same as a click on the row".into()
        }
        (Context::Overlay, Action::Cancel) => "close the overlay".into(),
        (Context::Overlay, Action::FocusPrev) => "previous field of a form".into(),
        (Context::Overlay, Action::NextDetailTab | Action::PrevDetailTab) => {
            "change a form's choice".into()
        }
        (Context::Overlay, Action::CopyJson) => {
            "copy what is shown (log entry, resource, export)".into()
        }
        (Context::Overlay, Action::WriteJson) => {
            "write what is shown to a file (resource, export)".into()
        }
        (Context::Overlay, Action::No) => "decline a server's question".into(),
        (Context::Pane(Pane::Composer), Action::Up) => {
            "the line above; from a field's first line, the field above; in completions: the \
             one before"
                .into()
        }
        (Context::Pane(Pane::Composer), Action::Down) => {
            "the line below; from a field's last line, the field below; in completions: the \
             next one"
                .into()
        }
        (Context::Pane(Pane::Composer), Action::NextKind) => {
            "on the Kind row: the next Kind".into()
        }
        (Context::Pane(Pane::Composer), Action::PrevKind) => {
            "on the Kind row: the previous Kind".into()
        }
        (Context::Question, Action::No) => "no, cancel".into(),
        (Context::Search, Action::Cancel) => "end the search".into(),
        // In the composer's own section the title need not say where.
        (Context::Pane(Pane::Composer), _) => {
            let title = action.title();
            title
                .strip_prefix("Composer: ")
                .map_or(title.clone(), str::to_owned)
        }
        _ => action.title(),
    }
}

/// The default keys as a Markdown table (the README's).
pub fn keys_markdown() -> String {
    let mut out = String::from("| where | keys | what they do |\n|---|---|---|\n");
    for (section, keys) in Keymap::default().groups() {
        for (k, what) in keys {
            let k = k.replace('|', "\\|");
            out.push_str(&format!("| {section} | `{k}` | {what} |\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn typing_keeps_letters_and_anywhere_keys_still_work() {
        let map = Keymap::default();
        let q = key(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(
            map.action_for(&q, Pane::Transcript, false),
            Some(Action::Quit)
        );
        assert_eq!(map.action_for(&q, Pane::Composer, true), None);
        let f5 = key(KeyCode::F(5), KeyModifiers::NONE);
        assert_eq!(
            map.action_for(&f5, Pane::Composer, true),
            Some(Action::Send)
        );
        let upper = key(KeyCode::Char('R'), KeyModifiers::SHIFT);
        assert_eq!(
            map.action_for(&upper, Pane::Sidebar, false),
            Some(Action::Reconnect)
        );
        let two = key(KeyCode::Char('2'), KeyModifiers::NONE);
        assert_eq!(
            map.action_for(&two, Pane::Detail, false),
            Some(Action::GoToDialogue(1))
        );
        assert_eq!(map.keys_of(&Action::Send), "F5 / Ctrl-Enter");
    }

    #[test]
    fn every_action_has_a_name_and_no_help_section_is_empty() {
        for (name, action) in Action::NAMED {
            assert_eq!(Action::from_name(name).as_ref(), Some(action));
        }
        for (section, keys) in Keymap::default().groups() {
            assert!(!keys.is_empty(), "{section}");
        }
    }
}
