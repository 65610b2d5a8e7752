//! Actions: what a key of the table, the palette or a click asks for.

use crate::client::dialogue::Filling;
use crate::tui::action::{Action, Handled, Pane};
use crate::tui::app::{App, Severity, SidebarRow};
use crate::tui::composer;
use crate::tui::dialogue::Status;
use crate::tui::effect::Effect;
use crate::tui::overlay::{
    Confirm, ConfirmPurpose, Input, OpenFile, Outcome, Overlay, Palette, Prompt, PromptPurpose,
};
use crate::tui::theme::Theme;

impl App {
    /// Does what an action asks (a key of the table, the palette, a click, an overlay's
    /// choice): each kind of action has its own method; this only says which.
    pub(crate) fn act(&mut self, action: Action, fx: &mut Vec<Effect>) {
        if self.asks_consent(action.clone()) {
            return;
        }
        match action {
            Action::Quit => self.ask_to_quit(fx),
            Action::Help | Action::Messages | Action::Palette => self.open_list(action),
            Action::FocusNext | Action::FocusPrev => self.cycle_focus(action == Action::FocusNext),
            Action::Focus(p) => self.screen.set_focus(p),
            Action::NextDialogue | Action::PrevDialogue | Action::GoToDialogue(_) => {
                self.switch_dialogue(action)
            }
            Action::NewDialogue => self.new_dialogue_in_view(fx),
            Action::CloseDialogue => self.ask_to_close_dialogue(fx),
            Action::Reconnect => self.reconnect(fx),
            Action::Send => self.send(fx),
            Action::Cancel => self.cancel(fx),
            Action::Resources => self.open_resources(fx),
            Action::Export => self.open_export(),
            Action::Certify => self.certify_this_server(fx),
            Action::CertifyFilter
            | Action::CertifyAgain
            | Action::CertifyHide
            | Action::CertifySaveJson
            | Action::CertifySaveMarkdown => self.certify_act(action, fx),
            Action::ToggleLog => {
                let shown = self.screen.log_shown();
                self.screen.show_log(!shown);
            }
            Action::Save | Action::SaveAs | Action::Open => self.session_act(action, fx),
            Action::Defaults => self.open_defaults(),
            Action::SaveAsTest => self.save_test_prompt(),
            Action::RunScenario => self.run_scenario_prompt(),
            Action::Replay => self.replay(fx),
            Action::Watch => {
                fx.push(Effect::Watch { path: None });
            }
            Action::TakeOver => self.take_over(fx),
            Action::CopyJson => self.copy(false, fx),
            Action::CopyRequest => self.copy(true, fx),
            Action::WriteJson => self.write_json_prompt(),
            Action::NextDetailTab | Action::PrevDetailTab => {
                self.cycle_detail_tab(action == Action::NextDetailTab)
            }
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => self.move_in(action),
            Action::Select => self.select(fx),
            Action::Search | Action::SearchNext | Action::SearchPrev => self.search_act(action),
            // Only an overlay or a question means something by these (`tui::overlay`).
            Action::Complete
            | Action::Close
            | Action::Reload
            | Action::ExportSend
            | Action::ExportCurl
            | Action::NewLine
            | Action::FieldYes
            | Action::FieldNo
            | Action::Pick
            | Action::ClearField
            | Action::Yes
            | Action::No
            | Action::SaveFirst
            | Action::SetAside
            | Action::Overwrite
            | Action::SaveElsewhere => {}
            // The line editor's keys: it asks for them itself (`overlay::input`).
            Action::LineStart
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
            | Action::PutBack => {}
            // The composer's own keys: it asks for them itself (`composer::KeyActions`).
            Action::NextField
            | Action::PrevField
            | Action::FieldUp
            | Action::FieldDown
            | Action::ConfirmField
            | Action::ShowCompletions
            | Action::AcceptCompletion
            | Action::UndoDraft
            | Action::RedoDraft => {}
            Action::ComposerMode
            | Action::ClearComposer
            | Action::ResetField
            | Action::NextKind
            | Action::PrevKind => self.composer_act(action),
            Action::CycleTheme => self.next_theme(fx),
            Action::SetTheme(name) => match Theme::built_in(&name) {
                Ok(theme) => self.theme_loaded(name, Ok(theme), fx),
                Err(_) => fx.push(Effect::LoadTheme { name }),
            },
            Action::AddServer => self.ask_server_to_add(fx),
            Action::AddFoundServer(name) => self.add_found_server(&name, fx),
            Action::RemoveServer => self.ask_to_remove_server(fx),
            Action::FilterLog | Action::ClearLog | Action::ToggleFollowLog => self.log_act(action),
        }
    }

    /// The overlays that list things to read or choose from: the keys (help), the run's
    /// messages (from their end), every action (the palette).
    fn open_list(&mut self, action: Action) {
        self.overlay = match action {
            Action::Help => Some(Overlay::Help { scroll: 0 }),
            Action::Messages => Some(Overlay::Messages {
                scroll: usize::MAX / 2,
            }),
            Action::Palette => Some(Overlay::Palette(Palette::new(self.palette_entries()))),
            _ => return,
        };
    }

    /// Ctrl-S (Save-as when the session has no file yet), Save-as, Ctrl-O (asking first
    /// when turns are not saved).
    fn session_act(&mut self, action: Action, fx: &mut Vec<Effect>) {
        match action {
            Action::Save => match self.session.path().map(Into::into) {
                Some(path) => self.save_explicit(path, fx),
                None => self.save_as_prompt(),
            },
            Action::SaveAs => self.save_as_prompt(),
            Action::Open if self.session.unsaved() > 0 => self.ask_before_opening(),
            Action::Open => {
                self.overlay = Some(Overlay::Open(OpenFile::new()));
                fx.push(Effect::ListSessions);
            }
            _ => {}
        }
    }

    /// `q`: quits at once when nothing would be lost; else asks, saying what would be (the
    /// unsaved turns, where the autosave keeps them, the unsent drafts).
    fn ask_to_quit(&mut self, fx: &mut Vec<Effect>) {
        let drafts = self.unsent_drafts();
        if self.session.unsaved() == 0 && !drafts.is_empty() {
            self.overlay = Some(Overlay::Confirm(Confirm {
                title: "Quit".into(),
                message: format!(
                    "{} has an unsent draft. Quit anyway? y quits (the draft is lost); n \
                     stays",
                    drafts.join(", ")
                ),
                purpose: ConfirmPurpose::Quit,
            }));
        } else if self.session.unsaved() > 0 {
            let drafts = match drafts.is_empty() {
                true => String::new(),
                false => format!(" {} has an unsent draft, lost too.", drafts.join(", ")),
            };
            let n = self.session.unsaved();
            let kept = match &self.config.paths.data_dir {
                Some(dir) => format!(
                    " (they stay in {} until a later run quits with unsaved turns of its own{})",
                    dir.join(crate::tui::persist::LAST_RUN).display(),
                    self.replaced_last_run()
                ),
                None => " and they are lost".into(),
            };
            let save = self.config.keymap.first_key(&Action::Save);
            self.overlay = Some(Overlay::Confirm(Confirm {
                title: "Quit".into(),
                message: format!(
                    "{n} turn{} not saved.{drafts} Quit anyway? y quits{kept}; n stays \
                     ({save} saves them)",
                    if n == 1 { " is" } else { "s are" }
                ),
                purpose: ConfirmPurpose::Quit,
            }));
        } else {
            self.quit(fx);
        }
    }

    /// What a quit with unsaved turns replaces: the last run's copy found at start, unless
    /// it is the session open now (its turns are then this run's).
    fn replaced_last_run(&self) -> String {
        match &self.config.last_run {
            Some(last) if self.session.path() != Some(last.path.as_path()) => format!(
                "; they replace the last run's {} unsaved turn{} there: open and save {} first \
                 to keep {}",
                last.unsaved,
                if last.unsaved == 1 { "" } else { "s" },
                if last.unsaved == 1 { "it" } else { "them" },
                if last.unsaved == 1 { "it" } else { "them" },
            ),
            _ => String::new(),
        }
    }

    /// Tab / Shift-Tab: the next (or previous) pane, round.
    fn cycle_focus(&mut self, forward: bool) {
        let panes = self.screen.panes();
        let i = panes
            .iter()
            .position(|p| *p == self.screen.focus())
            .unwrap_or(0);
        let n = panes.len();
        let next = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        self.screen.set_focus(panes[next]);
    }

    /// `]` / `[`: the next (or previous) dialogue tab, round; a digit: the tab of that place.
    fn switch_dialogue(&mut self, action: Action) {
        let n = self.workspace.dialogues().len();
        if n == 0 {
            return;
        }
        let i = self
            .workspace
            .current()
            .and_then(|c| self.workspace.dialogues().position(c))
            .unwrap_or(0);
        let next = match action {
            Action::NextDialogue => (i + 1) % n,
            Action::PrevDialogue => (i + n - 1) % n,
            Action::GoToDialogue(place) => place,
            _ => return,
        };
        if let Some(id) = self.workspace.dialogues().id_at(next) {
            self.show_dialogue(id);
        }
    }

    /// `n`: a new dialogue on the server in view, the composer ready.
    fn new_dialogue_in_view(&mut self, fx: &mut Vec<Effect>) {
        let Some(server) = self.server_in_view() else {
            let hint = self.no_dialogue_hint();
            self.notify(hint, Severity::Warning);
            return;
        };
        let Some(interface) = self.workspace.server(server).map(|s| s.interface) else {
            return;
        };
        self.open_dialogue(server, interface, fx);
        self.screen.set_focus(Pane::Composer);
    }

    /// `x`: closes the dialogue in view at once when it has no turns; else asks first.
    fn ask_to_close_dialogue(&mut self, fx: &mut Vec<Effect>) {
        let Some(d) = self.current_dialogue() else {
            return;
        };
        if d.transcript.is_empty() {
            let key = d.key;
            self.close_dialogue(key, fx);
            return;
        }
        let n = d.transcript.len();
        self.overlay = Some(Overlay::Confirm(Confirm {
            title: format!("Close {}", d.name),
            message: format!(
                "It has {n} turn{}; once closed they are in no later save. Close it? \
                 y closes, n keeps it",
                if n == 1 { "" } else { "s" }
            ),
            purpose: ConfirmPurpose::CloseDialogue(d.key),
        }));
    }

    /// Save-as's prompt, with the session's file (or a name) to start from.
    fn save_as_prompt(&mut self) {
        let default = self
            .session
            .path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "session.json".into());
        let note = self.save_as_note(&default);
        self.overlay = Some(Overlay::Prompt(Prompt {
            title: "Save the session as (a path; a bare name goes in the sessions folder \
                    when there is one)"
                .into(),
            input: Input::new(&default),
            purpose: PromptPurpose::SaveAs,
            note,
            secret: false,
            completions: Vec::new(),
            selected: 0,
        }));
    }

    /// Ctrl-O with unsaved turns: opening replaces the dialogues in view, and the next
    /// turn's autosave what they were, so never without a question.
    fn ask_before_opening(&mut self) {
        let n = self.session.unsaved();
        let them = if n == 1 { "it" } else { "them" };
        self.overlay = Some(Overlay::Confirm(Confirm {
            title: "Open another session".into(),
            message: format!(
                "{n} turn{} not saved, and opening replaces {them}. s saves {them} first \
                 (then opens), a sets {them} aside in a file of the data directory (Open \
                 lists it), n stays",
                if n == 1 { " is" } else { "s are" }
            ),
            purpose: ConfirmPurpose::OpenOverUnsaved,
        }));
    }

    /// The next (or previous) detail tab of the dialogue in view, round, from its top.
    fn cycle_detail_tab(&mut self, forward: bool) {
        let tabs = self.detail_tabs();
        let shown = self.shown_detail_tab();
        let i = tabs.iter().position(|t| *t == shown).unwrap_or(0);
        let n = tabs.len();
        let next = tabs[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }];
        if let Some(d) = self.current_dialogue_mut() {
            d.transcript.detail_tab = next;
            d.transcript.detail_scroll = 0;
        }
    }

    /// The actions on the composer of the dialogue in view (its mode, clearing, a field
    /// back to its default, the kind of Request).
    fn composer_act(&mut self, action: Action) {
        match action {
            Action::ComposerMode if self.with_composer(|c, ctx| c.toggle_mode(ctx)).is_some() => {
                self.screen.set_focus(Pane::Composer);
            }
            Action::ClearComposer => {
                self.with_composer(|c, ctx| c.clear(ctx));
            }
            Action::ResetField => {
                self.with_composer(|c, ctx| c.reset_field(ctx));
            }
            Action::NextKind | Action::PrevKind => {
                let forward = action == Action::NextKind;
                self.with_composer(|c, ctx| {
                    c.cycle_kind(forward);
                    c.recheck(ctx);
                });
            }
            _ => {}
        }
    }

    /// The theme after the one in use, round.
    fn next_theme(&mut self, fx: &mut Vec<Effect>) {
        let themes = &self.config.themes;
        let i = themes
            .iter()
            .position(|n| *n == self.config.theme.name)
            .unwrap_or(0);
        if let Some(next) = themes.get((i + 1) % themes.len().max(1)).cloned() {
            self.act(Action::SetTheme(next), fx);
        }
    }

    /// The log's own actions: its filter, clearing it, following its end.
    fn log_act(&mut self, action: Action) {
        match action {
            Action::FilterLog => {
                self.screen.set_focus(Pane::Log);
                self.log.editing_filter = true;
                self.log.filter_input = crate::tui::overlay::Input::new(&self.log.filter);
            }
            Action::ClearLog => self.log.clear(),
            Action::ToggleFollowLog => {
                self.log.follow = !self.log.follow;
                if self.log.follow {
                    self.log.selected = self.log.visible_len().checked_sub(1);
                }
            }
            _ => {}
        }
    }

    /// The dialogues whose composer holds an unsent draft, by name.
    fn unsent_drafts(&self) -> Vec<String> {
        self.workspace
            .dialogues()
            .values()
            .filter(|d| d.composer.has_draft())
            .map(|d| d.name.clone())
            .collect()
    }

    fn quit(&mut self, fx: &mut Vec<Effect>) {
        self.close_connections(fx);
        fx.push(Effect::Quit {
            clean: true,
            kept: self.kept(),
        });
    }

    /// What this run leaves for the last run's copy: its unsaved turns and whether it has
    /// unsent drafts. A run with neither leaves an earlier run's copy alone.
    pub(super) fn kept(&self) -> crate::tui::persist::Kept {
        crate::tui::persist::Kept {
            unsaved: self.session.unsaved(),
            drafts: !self.unsent_drafts().is_empty(),
        }
    }

    /// Closes the connection of every dialogue that has one (open, or still connecting).
    pub(super) fn close_connections(&self, fx: &mut Vec<Effect>) {
        for d in self.workspace.dialogues().values() {
            if d.is_live() || d.status == Status::Connecting {
                fx.push(Effect::Close { key: d.key });
            }
        }
    }

    /// A signal (SIGTERM, SIGHUP) asks the explorer to leave: like a quit with unsaved work,
    /// the work goes to the autosave first, and the recovery marker stays, so that the next
    /// start offers it back.
    pub(super) fn signal(&mut self, name: crate::tui::event::Signal, fx: &mut Vec<Effect>) {
        self.close_connections(fx);
        // The drafts typed since the last tick's look, too.
        self.recovering.write_drafts_again();
        self.screen.set_ticks(0);
        self.autosave_drafts(fx);
        let work = self.session.unsaved() > 0;
        match (self.config.paths.autosave.clone(), work) {
            (Some(path), true) => {
                self.session.leave_after_save();
                self.notify(
                    format!("{name}: saving the autosave, then leaving"),
                    Severity::Warning,
                );
                fx.push(Effect::Save {
                    path,
                    session: Box::new(self.snapshot()),
                    purpose: crate::tui::event::SavePurpose::BeforeLeaving,
                    unchanged: None,
                });
            }
            (None, true) => fx.push(Effect::Quit {
                clean: false,
                kept: self.kept(),
            }),
            (_, false) => fx.push(Effect::Quit {
                clean: true,
                kept: self.kept(),
            }),
        }
    }

    pub(super) fn close_dialogue(
        &mut self,
        key: crate::client::engine::DialogueKey,
        fx: &mut Vec<Effect>,
    ) {
        let Some(i) = self.workspace.dialogue_of_key(key) else {
            return;
        };
        // The tab after it shows (the one before, when it was the last).
        let Some(d) = self.workspace.remove_dialogue(i) else {
            return;
        };
        // Its turns are in no later save: no longer counted as unsaved (the question said so).
        self.session.turns_dropped(d.unsaved);
        fx.push(Effect::Close { key: d.key });
        fx.push(Effect::StopReplay { key: d.key });
        fx.push(Effect::StopScenario { key: d.key });
        if !d.transcript.is_empty() {
            self.autosave(fx);
        }
        if let Some(focus) = self.current_dialogue().and_then(|d| d.transcript.focus) {
            self.screen.set_focus(focus);
        }
    }

    /// What an overlay's key came to.
    pub(super) fn overlay_outcome(&mut self, outcome: Outcome, fx: &mut Vec<Effect>) {
        self.overlay_came_to(outcome, fx);
        // A question a server asked waits for no overlay to be open.
        self.show_next_ask();
        self.offer_recovery();
    }

    fn overlay_came_to(&mut self, outcome: Outcome, fx: &mut Vec<Effect>) {
        match outcome {
            Outcome::Stay => {}
            Outcome::Close => self.overlay_closed(fx),
            Outcome::Resources(ask) => self.resources_ask(ask, fx),
            Outcome::Export(ask) => self.export_ask(ask, fx),
            Outcome::Replied(ask, reply) => {
                self.close_overlay();
                self.replied(ask, reply, fx);
            }
            Outcome::Run(action) => {
                self.close_overlay();
                self.act(action, fx);
            }
            Outcome::Answered(purpose, yes) => {
                self.close_overlay();
                if yes {
                    self.confirmed(purpose, fx);
                } else {
                    self.declined(purpose);
                }
            }
            Outcome::Chose(purpose, choice) => {
                self.close_overlay();
                self.chose(purpose, choice, fx);
            }
            // A write stays in its prompt until it is written: a question before overwriting
            // opens over it, a failure is said there with the path still typed.
            Outcome::Submit(
                purpose @ (PromptPurpose::WriteJson | PromptPurpose::WriteText(_)),
                text,
            ) => {
                self.submitted(purpose, text, fx);
            }
            Outcome::Submit(purpose, text) => {
                self.close_overlay();
                self.submitted(purpose, text, fx);
            }
            Outcome::Typed(text) => self.typed_in_overlay(text, fx),
            Outcome::CompletePath(typed, extensions) => {
                fx.push(Effect::CompletePath { typed, extensions })
            }
            Outcome::OpenPath(path) => fx.push(Effect::ReadSession {
                path,
                purpose: crate::tui::event::OpenPurpose::Open,
            }),
            Outcome::SetDefaults(values, scope) => {
                self.close_overlay();
                self.set_defaults(values, scope, fx);
            }
            Outcome::CopyEntry(i) => {
                if let Some(e) = self.log.visible(i) {
                    let text = pretty_if_json(&e.text);
                    self.clipboard(text, fx);
                }
            }
        }
    }

    /// The overlay was closed without an answer: a server's question is dismissed (the
    /// server is not left waiting), a Save-as given up leaves nothing waiting for a save.
    fn overlay_closed(&mut self, fx: &mut Vec<Effect>) {
        let closed = self.overlay.take();
        self.close_overlay();
        match closed {
            Some(Overlay::Ask(a)) => self.replied(a.ask, crate::client::answers::Reply::Cancel, fx),
            Some(Overlay::Prompt(p)) if p.purpose == PromptPurpose::SaveAs => {
                self.session.after_save(None)
            }
            _ => {}
        }
    }

    /// A question was answered no: a write not made over a file says so in its prompt,
    /// which is back with the path typed (to change it, or Esc).
    fn declined(&mut self, purpose: ConfirmPurpose) {
        let esc = self.overlay_key(Action::Cancel);
        if let ConfirmPurpose::Overwrite(path, crate::tui::event::SaveWhat::Json(_)) = purpose
            && let Some(prompt) = self.write_prompt_of(&path)
        {
            prompt.note = format!(
                "not written: {} is kept as it is (type another path, or {esc})",
                path.display()
            );
        }
    }

    /// The key an overlay's note names for an action (keys.toml's).
    pub(super) fn overlay_key(&self, action: Action) -> String {
        crate::tui::overlay::key_of(&self.config.keymap, &action)
    }

    /// The prompt of a write (`W`) when it is the overlay shown: it stays open until the
    /// file is written.
    pub(super) fn write_prompt(&mut self) -> Option<&mut Prompt> {
        match &mut self.overlay {
            Some(Overlay::Prompt(p))
                if matches!(
                    p.purpose,
                    PromptPurpose::WriteJson | PromptPurpose::WriteText(_)
                ) =>
            {
                Some(p)
            }
            _ => None,
        }
    }

    /// A question with more than yes and no was answered.
    fn chose(
        &mut self,
        purpose: ConfirmPurpose,
        choice: crate::tui::overlay::Choice,
        fx: &mut Vec<Effect>,
    ) {
        use crate::tui::overlay::Choice;
        match (purpose, choice) {
            (ConfirmPurpose::OpenOverUnsaved, Choice::SetAside) => self.set_aside(fx),
            (ConfirmPurpose::OpenOverUnsaved, _) => {
                // Open once the save is written (after Save-as's prompt if the session
                // has no file yet).
                self.session.after_save(Some(Action::Open));
                self.act(Action::Save, fx);
            }
            (ConfirmPurpose::SaveOverChanged(path), Choice::Overwrite) => {
                self.save_over_change(path, fx)
            }
            (ConfirmPurpose::SaveOverChanged(_), _) => self.act(Action::SaveAs, fx),
            _ => {}
        }
    }

    /// A prompt's text was given: what it was for follows.
    fn submitted(&mut self, purpose: PromptPurpose, text: String, fx: &mut Vec<Effect>) {
        match purpose {
            PromptPurpose::SaveAs => {
                if text.trim().is_empty() {
                    return;
                }
                let path = super::resolve_save_path(text.trim(), &self.config.paths);
                fx.push(Effect::CheckSaveTarget {
                    path,
                    what: crate::tui::event::SaveWhat::Session,
                });
            }
            PromptPurpose::SaveTest => self.save_test_to(&text, fx),
            PromptPurpose::RunScenario => self.run_scenario(&text, fx),
            PromptPurpose::FilterLog => self.log.set_filter(text),
            PromptPurpose::AddServer => self.add_typed_server(&text, fx),
            PromptPurpose::ServerInput(server, id) => self.input_given(server, id, text, fx),
            PromptPurpose::WriteJson => self.write_json_to(&text, fx),
            PromptPurpose::WriteText(content) => self.write_to(&text, content, fx),
        }
    }

    /// Something was typed in an overlay's line: Open completes the path; a prompt whose
    /// note follows the text (the full path Save-as or a test will write) says it again.
    fn typed_in_overlay(&mut self, text: String, fx: &mut Vec<Effect>) {
        let purpose = match &self.overlay {
            Some(Overlay::Open(_)) => {
                fx.push(Effect::CompletePath {
                    typed: text,
                    extensions: &["json"],
                });
                return;
            }
            Some(Overlay::Prompt(p)) => &p.purpose,
            _ => return,
        };
        let note = match purpose {
            PromptPurpose::SaveTest => self.scenario_note(&text),
            PromptPurpose::SaveAs => self.save_as_note(&text),
            // The others' notes do not follow what is typed.
            _ => return,
        };
        if let Some(Overlay::Prompt(p)) = &mut self.overlay {
            p.note = note;
        }
    }

    /// Whether `action` would start the command of a server that came from a session file
    /// the user has not consented to: the command is shown and the user asked first (the
    /// action follows a yes).
    fn asks_consent(&mut self, action: Action) -> bool {
        let server = match action {
            Action::NewDialogue | Action::Certify => self.server_in_view(),
            Action::Reconnect | Action::Replay | Action::TakeOver => {
                self.current_dialogue().map(|d| d.server)
            }
            _ => None,
        };
        let Some(server) = server else {
            return false;
        };
        let Some((name, command)) = self
            .workspace
            .server(server)
            .and_then(|s| Some((s.name.clone(), s.needs_consent.clone()?)))
        else {
            return false;
        };
        self.overlay = Some(Overlay::Confirm(Confirm {
            title: format!("Start {name}?"),
            message: format!(
                "The session file names this command to start the server on this machine: \
                 {command} — a file someone sent you can name any command. Start it? y starts \
                 it (for the rest of this run), n does not"
            ),
            purpose: ConfirmPurpose::StartCommand(server, action),
        }));
        true
    }

    fn confirmed(&mut self, purpose: ConfirmPurpose, fx: &mut Vec<Effect>) {
        match purpose {
            ConfirmPurpose::StartCommand(server, action) => {
                if let Some(s) = self.workspace.server_mut(server) {
                    s.needs_consent = None;
                }
                self.act(action, fx);
            }
            ConfirmPurpose::Quit => self.quit(fx),
            ConfirmPurpose::Recover(r) => {
                match (r.path, r.drafts) {
                    (Some(path), drafts) => {
                        // The drafts go into the recovered dialogues, once they are there.
                        self.recovering.restore_drafts_later(drafts);
                        fx.push(Effect::ReadSession {
                            path,
                            purpose: crate::tui::event::OpenPurpose::Recover,
                        });
                    }
                    (None, Some(path)) => fx.push(Effect::ReadDrafts { path }),
                    (None, None) => {}
                }
                // The others are not read over this one: said, to open later.
                let others: Vec<String> = self
                    .recovering
                    .take_other_offers()
                    .into_iter()
                    .filter_map(|r| r.path.or(r.drafts))
                    .map(|p| p.display().to_string())
                    .collect();
                if !others.is_empty() {
                    self.notify(
                        format!(
                            "other runs' unsaved work is kept in {} ({} opens a session)",
                            others.join(", "),
                            self.config.keymap.first_key(&Action::Open)
                        ),
                        Severity::Info,
                    );
                }
            }
            ConfirmPurpose::CloseDialogue(key) => self.close_dialogue(key, fx),
            ConfirmPurpose::Overwrite(path, what) => self.write_target(path, what, fx),
            ConfirmPurpose::RemoveServer(server) => self.remove_server(server, fx),
            // Answered by their choices (`Outcome::Chose`); a yes does not say which.
            ConfirmPurpose::OpenOverUnsaved | ConfirmPurpose::SaveOverChanged(_) => {}
        }
    }

    /// Every action, with its keys, and the dynamic ones (themes, dialogues), for the palette.
    fn palette_entries(&self) -> Vec<(Action, String, String)> {
        let mut entries: Vec<(Action, String, String)> = Vec::new();
        let mut push = |a: Action| {
            let keys = self.config.keymap.keys_of(&a);
            if !entries.iter().any(|(b, _, _)| *b == a) {
                entries.push((a.clone(), a.title(), keys));
            }
        };
        for (_, a) in Action::NAMED {
            if !matches!(
                a,
                Action::Up
                    | Action::Down
                    | Action::PageUp
                    | Action::PageDown
                    | Action::Top
                    | Action::Bottom
                    | Action::Cancel
                    | Action::SearchNext
                    | Action::SearchPrev
            ) && !a.in_overlay_only()
            {
                push(a.clone());
            }
        }
        for p in [
            Pane::Sidebar,
            Pane::Transcript,
            Pane::Detail,
            Pane::Composer,
            Pane::Log,
        ] {
            push(Action::Focus(p));
        }
        for (i, d) in self.workspace.dialogues().values().enumerate() {
            entries.push((
                Action::GoToDialogue(i),
                format!("Go to dialogue {}: {}", i + 1, d.name),
                (i + 1).to_string(),
            ));
        }
        for name in &self.config.themes {
            entries.push((
                Action::SetTheme(name.clone()),
                format!("Theme: {name}"),
                String::new(),
            ));
        }
        for f in self.found_not_added() {
            let file = f
                .origin
                .as_ref()
                .map(|o| o.file.display().to_string())
                .unwrap_or_default();
            entries.push((
                Action::AddFoundServer(f.name.clone()),
                format!("Add server {} ({}, from {file})", f.name, f.location()),
                String::new(),
            ));
        }
        entries
    }

    fn move_in(&mut self, action: Action) {
        let areas = self.areas();
        let page = match self.screen.focus() {
            Pane::Transcript => areas.transcript_rows(),
            Pane::Detail => areas.detail_lines(),
            Pane::Log => areas.log_lines(),
            _ => 10,
        }
        .max(1);
        let delta: isize = match action {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -(page as isize),
            Action::PageDown => page as isize,
            Action::Top => isize::MIN / 2,
            _ => isize::MAX / 2,
        };
        let step = |current: usize, len: usize| -> usize {
            if len == 0 {
                return 0;
            }
            (current as isize)
                .saturating_add(delta)
                .clamp(0, len as isize - 1) as usize
        };
        match self.screen.focus() {
            Pane::Sidebar => {
                self.sidebar.act(&action, delta, &self.workspace);
            }
            Pane::Transcript => {
                if let Some(d) = self.current_dialogue_mut() {
                    let n = d.transcript.len();
                    if n > 0 {
                        let next = step(d.transcript.selected().unwrap_or(n - 1), n);
                        d.transcript.select(Some(next));
                        // The window follows the selection (render moves it the same way).
                        if next < d.transcript.scroll {
                            d.transcript.scroll = next;
                        } else if next >= d.transcript.scroll + page {
                            d.transcript.scroll = next + 1 - page;
                        }
                    }
                }
            }
            Pane::Detail => {
                if let Some(d) = self.current_dialogue_mut() {
                    d.transcript.detail_scroll = step(d.transcript.detail_scroll, usize::MAX / 4);
                }
            }
            Pane::Log => self.log.move_selection(delta.clamp(-100_000, 100_000)),
            Pane::Composer => {}
        }
    }

    /// Clamps the detail's scroll to what the last frame showed (after End, the scroll asked
    /// for is far past the end; going back up moves at once).
    pub(super) fn clamp_detail_scroll(&mut self, hits: &crate::tui::hits::Hits) {
        if let Some((key, shown)) = hits.detail_top
            && let Some(d) = self.current_dialogue_mut()
            && d.key == key
        {
            d.transcript.detail_scroll = d.transcript.detail_scroll.min(shown);
        }
    }

    fn select(&mut self, _fx: &mut [Effect]) {
        match self.screen.focus() {
            Pane::Sidebar => {
                // Folding a server is the sidebar's own; a dialogue is shown by the App.
                if self.sidebar.act(&Action::Select, 0, &self.workspace) == Handled::Ignored
                    && let Some(SidebarRow::Dialogue(d)) =
                        self.sidebar.selected_row(&self.workspace)
                {
                    self.show_dialogue(d);
                    self.screen.set_focus(Pane::Transcript);
                }
            }
            Pane::Transcript => {
                // Enter on a turn puts its Request in the composer, to edit and send again.
                let request = self
                    .current_dialogue()
                    .and_then(|d| d.transcript.selection())
                    .map(|s| s.request.clone());
                if let Some(request) = request {
                    let kept = self.with_composer(|c, ctx| c.replace_with(&request, ctx));
                    self.screen.set_focus(Pane::Composer);
                    if kept == Some(true) {
                        self.notify(
                            "your draft is kept, Ctrl-Z brings it back: the turn's Request \
                             replaced it in the composer",
                            Severity::Warning,
                        );
                    } else {
                        self.notify("the turn's Request is in the composer", Severity::Info);
                    }
                }
            }
            Pane::Log => {
                if let Some(entry) = self.log.selected {
                    self.overlay = Some(Overlay::LogEntry { entry, scroll: 0 });
                }
            }
            _ => {}
        }
    }

    fn send(&mut self, fx: &mut Vec<Effect>) {
        let Some(d) = self.current_dialogue() else {
            let hint = self.no_dialogue_hint();
            self.notify(hint, Severity::Warning);
            return;
        };
        if d.link.pending().is_some() {
            let esc = self.config.keymap.first_key(&Action::Cancel);
            self.notify(
                format!("a turn is pending: {esc} cancels it"),
                Severity::Warning,
            );
            return;
        }
        match &d.status {
            Status::Open => {}
            Status::Recorded => {
                self.notify(
                    "a recorded dialogue: R continues it in a new MCP session",
                    Severity::Warning,
                );
                return;
            }
            Status::Live => {
                let key = self
                    .config
                    .keymap
                    .first_key(&crate::tui::action::Action::TakeOver);
                self.notify(
                    format!("a live dialogue, watched from a proxy: read-only; {key} takes it over in a dialogue of your own"),
                    Severity::Warning,
                );
                return;
            }
            Status::Unfollowed(how) => {
                let key = self
                    .config
                    .keymap
                    .first_key(&crate::tui::action::Action::TakeOver);
                self.notify(
                    format!("a watched dialogue, {}: read-only; {key} takes it over in a dialogue of your own", how.said()),
                    Severity::Warning,
                );
                return;
            }
            Status::Connecting => {
                self.notify("still connecting…", Severity::Warning);
                return;
            }
            Status::Failed(e) | Status::Closed(e) => {
                let e = e.clone();
                self.notify(
                    format!("the dialogue is not connected ({e}); R reconnects"),
                    Severity::Error,
                );
                return;
            }
        }
        let filling = match d.composer.mode {
            composer::Mode::Form => Filling::Missing,
            composer::Mode::Raw => Filling::AsIs,
        };
        let content = match d.composer.content(d.transcript.used_ids()) {
            Ok(c) => c,
            Err(e) => {
                let key = d.key;
                self.notify(format!("not sent: {e}"), Severity::Error);
                self.notices
                    .set_cause(crate::tui::notices::Cause::UnsendableRequest(key));
                return;
            }
        };
        let key = d.key;
        fx.push(Effect::Send {
            key,
            request: serde_json::Value::Object(content),
            filling,
        });
        let started = self.screen.now();
        if let Some(d) = self.current_dialogue_mut() {
            d.link.turn_sent(started);
        }
    }

    /// Esc, one step out: in the composer (EDIT), back to NAV, always (a completion list
    /// closed first, by the composer); outside it, the pending turn, replay or scenario is
    /// stopped.
    fn cancel(&mut self, fx: &mut Vec<Effect>) {
        if self.screen.focus() == Pane::Composer {
            self.screen.set_focus(Pane::Transcript);
            let running = self.current_dialogue().is_some_and(|d| {
                d.link.pending().is_some_and(|p| !p.cancelling)
                    || d.runs.replaying()
                    || d.runs.testing()
            });
            if running {
                let esc = self.config.keymap.first_key(&Action::Cancel);
                self.notify(
                    format!("out of the composer; a turn is under way: {esc} again cancels it"),
                    Severity::Info,
                );
            }
            return;
        }
        if let Some(i) = self.workspace.current()
            && let Some(d) = self.workspace.dialogue_mut(i)
        {
            let key = d.key;
            if let Some(p) = d.link.cancel() {
                // A turn that became a task is cancelled as a task (SEP-2663).
                let told = match &p.task {
                    Some(task) => format!("tasks/cancel for task {}", task.task_id),
                    None => "notifications/cancelled".to_owned(),
                };
                fx.push(Effect::Cancel { key });
                self.notify(
                    format!("cancelling: the server is told ({told})"),
                    Severity::Info,
                );
                return;
            }
            if d.runs.stop_replay() {
                fx.push(Effect::StopReplay { key: d.key });
                self.notify("replay cancelled", Severity::Info);
                return;
            }
            if d.runs.testing() {
                fx.push(Effect::StopScenario { key: d.key });
                self.notify(
                    "stopping the scenario after the step in flight",
                    Severity::Info,
                );
            }
        }
    }

    fn reconnect(&mut self, fx: &mut Vec<Effect>) {
        let Some(i) = self.workspace.current() else {
            return;
        };
        // A dialogue whose server was removed has nothing to reconnect to.
        let Some(old) = self
            .workspace
            .dialogue(i)
            .filter(|d| self.workspace.servers().contains(d.server))
            .map(|d| d.key)
        else {
            if self.workspace.dialogues().contains(i) {
                let add = self.config.keymap.first_key(&Action::AddServer);
                self.notify(
                    format!(
                        "its server is no longer here: nothing to reconnect to ({add} in Servers adds one)"
                    ),
                    Severity::Warning,
                );
            }
            return;
        };
        fx.push(Effect::Close { key: old });
        let key = self.workspace.new_key();
        let Some(d) = self.workspace.dialogue_mut(i) else {
            return;
        };
        let had_session = d.link.dialog_id().is_some() || !d.transcript.is_empty();
        d.key = key;
        d.status = Status::Connecting;
        d.link.reconnect(!d.transcript.is_empty());
        let (server, interface, first) = (d.server, d.interface, d.link.next_turn());
        // Over 2026-07-28 the server keeps the dialogue by its DialogID: the new connection
        // goes on with it (the engine tells which it was once the dialogue is open).
        let goes_on = d
            .link
            .dialog_id()
            .map(|dialog_id| crate::client::dialogue::GoesOn {
                dialog_id: dialog_id.to_owned(),
                history: d
                    .transcript
                    .turns()
                    .iter()
                    // The turns the server took (a refused Request changed nothing there).
                    .filter_map(|t| t.turn.response().map(|r| [t.turn.request_value(), r]))
                    .flatten()
                    .collect(),
            });
        let Some(s) = self.workspace.server_mut(server) else {
            return;
        };
        if s.status != crate::tui::app::ServerStatus::Connected {
            s.status = crate::tui::app::ServerStatus::Connecting;
        }
        let spec = s.spec.clone();
        let (base, overrides) = self.defaults_of_dialogue(i);
        fx.push(Effect::Open {
            key,
            spec,
            interface,
            base,
            overrides,
            first_turn: first,
            goes_on,
            // In the generation it spoke (recorded, or of the connection before).
            spoke: self
                .workspace
                .dialogue(i)
                .and_then(|d| d.link.protocol_version().map(str::to_owned)),
        });
        if had_session {
            self.notify("reconnecting…", Severity::Info);
        }
    }

    fn replay(&mut self, fx: &mut Vec<Effect>) {
        let Some(i) = self.workspace.current() else {
            return;
        };
        let Some(d) = self.workspace.dialogue(i) else {
            return;
        };
        if d.transcript.is_empty() {
            self.notify(
                "nothing to replay: the dialogue has no turns",
                Severity::Warning,
            );
            return;
        }
        let Some(server) = self.workspace.server(d.server) else {
            return;
        };
        let record = crate::session::DialogueRecord {
            notes: None,
            defaults: d.defaults.as_ref().map(|c| c.values.clone()),
            protocol_version: d
                .link
                .protocol_version()
                .map(str::to_owned)
                .or_else(|| server.summary.as_ref().map(|s| s.protocol_version.clone())),
            ..d.record(server.spec.name.clone())
        };
        let session = crate::session::Session {
            servers: vec![server.spec.clone()],
            defaults: self.session.defaults().clone(),
            dialogues: vec![record],
            ..Default::default()
        };
        let key = d.key;
        fx.push(Effect::StopReplay { key });
        fx.push(Effect::Replay {
            key,
            session: Box::new(session),
        });
        let Some(d) = self.workspace.dialogue_mut(i) else {
            return;
        };
        d.start_replay();
        d.transcript.detail_tab = crate::tui::app::DetailTab::Replay;
        self.notify("replaying in a fresh dialogue…", Severity::Info);
    }

    /// The JSON in view: the selected log entry, the composer's draft, or the turn's
    /// Response (or its Request).
    fn json_in_view(&mut self, request: bool) -> Option<String> {
        match self.screen.focus() {
            Pane::Log => self
                .log
                .selected
                .and_then(|i| self.log.visible(i))
                .map(|e| pretty_if_json(&e.text)),
            Pane::Composer => self
                .with_composer(|c, ctx| c.preview(ctx).ok())
                .flatten()
                .map(|v| serde_json::to_string_pretty(&v).unwrap_or_default()),
            _ => self
                .current_dialogue()
                .and_then(|d| d.transcript.selection())
                .map(|s| {
                    let value = if request {
                        Some(&s.request)
                    } else {
                        s.response.as_ref().or(Some(&s.request))
                    };
                    serde_json::to_string_pretty(&value).unwrap_or_default()
                }),
        }
    }

    /// `W`: where to write the JSON in view (a path, Tab completes it; a file that exists
    /// is asked about first).
    fn write_json_prompt(&mut self) {
        if self.json_in_view(false).is_none() {
            self.notify("no JSON in view to write", Severity::Warning);
            return;
        }
        let name = match self.screen.focus() {
            Pane::Log => "log-entry.json".to_owned(),
            Pane::Composer => "draft.json".to_owned(),
            _ => match self
                .current_dialogue()
                .and_then(|d| d.transcript.selection())
            {
                Some(s) => format!("turn-{}.json", s.index),
                None => "turn.json".to_owned(),
            },
        };
        let mut prompt = Prompt::new(
            "Write the JSON in view to (a path; relative to the working folder)",
            &name,
            PromptPurpose::WriteJson,
        );
        prompt.note = format!("in {}", self.config.paths.cwd.display());
        self.overlay = Some(Overlay::Prompt(prompt));
    }

    fn write_json_to(&mut self, typed: &str, fx: &mut Vec<Effect>) {
        let Some(text) = self.json_in_view(false) else {
            self.notify("no JSON in view to write", Severity::Warning);
            return;
        };
        self.write_to(typed, text, fx);
    }

    /// Asks where to write `text` (`W` in an overlay: a resource read, a command line): a
    /// prompt with `name`, Tab completing the path; a file that exists is asked about first.
    pub(super) fn write_text_prompt(&mut self, name: &str, text: String) {
        let mut prompt = Prompt::new(
            "Write it to (a path; relative to the working folder)",
            name,
            PromptPurpose::WriteText(text),
        );
        prompt.note = format!("in {}", self.config.paths.cwd.display());
        // Over the overlay that shows the text, which is back as it was once the file is
        // written (or the prompt given up).
        self.open_over(Overlay::Prompt(prompt));
    }

    /// Writes `text` where `typed` says (after asking, if a file is there).
    fn write_to(&mut self, typed: &str, text: String, fx: &mut Vec<Effect>) {
        let Some(path) = self.write_path(typed) else {
            return;
        };
        if let Some(prompt) = self.write_prompt() {
            prompt.note = format!("writing {} …", path.display());
        }
        fx.push(Effect::CheckSaveTarget {
            path,
            what: crate::tui::event::SaveWhat::Json(text),
        });
    }

    /// Where a write's path typed writes: `~` is the home folder, a relative path is in the
    /// working folder. None when nothing is typed.
    fn write_path(&self, typed: &str) -> Option<std::path::PathBuf> {
        let typed = typed.trim();
        if typed.is_empty() {
            return None;
        }
        let path = crate::settings::expand_home(std::path::Path::new(typed));
        Some(if path.is_relative() {
            self.config.paths.cwd.join(path)
        } else {
            path
        })
    }

    /// The prompt of the write that went to `path` (what it shows still names it): another
    /// write's prompt opened since is not closed by this one's result.
    pub(super) fn write_prompt_of(&mut self, path: &std::path::Path) -> Option<&mut Prompt> {
        let typed = self.write_prompt()?.input.text().to_owned();
        if self.write_path(&typed).as_deref() != Some(path) {
            return None;
        }
        self.write_prompt()
    }

    fn copy(&mut self, request: bool, fx: &mut Vec<Effect>) {
        match self.json_in_view(request) {
            Some(text) => self.clipboard(text, fx),
            None => self.notify("nothing to copy here", Severity::Warning),
        }
    }

    /// Puts text on the clipboard by OSC 52, and says honestly whether that can have worked.
    pub(super) fn clipboard(&mut self, text: String, fx: &mut Vec<Effect>) {
        let size = text.len();
        let write = self.config.keymap.first_key(&Action::WriteJson);
        let how = if self.config.in_tmux {
            format!(
                "sent {size} bytes to the clipboard by OSC 52, which tmux passes on only with \
                 `set -g set-clipboard on`; {write} writes them to a file instead"
            )
        } else {
            format!(
                "sent {size} bytes to the clipboard by OSC 52 (if the terminal takes it); \
                 {write} writes them to a file instead"
            )
        };
        fx.push(Effect::Clipboard { text });
        self.notify(how, Severity::Success);
    }

    /// What `W` asked for was written (its prompt closes: the overlay under it is back), or
    /// could not be (the prompt stays, the path typed and why it failed under it).
    pub(super) fn copy_written(&mut self, path: std::path::PathBuf, result: Result<(), String>) {
        match result {
            Ok(()) => {
                if self.write_prompt_of(&path).is_some() {
                    self.close_overlay();
                }
                self.notify(format!("wrote {}", path.display()), Severity::Success)
            }
            Err(e) => {
                let said = format!("cannot write {}: {e}", path.display());
                let esc = self.overlay_key(Action::Cancel);
                if let Some(prompt) = self.write_prompt_of(&path) {
                    prompt.note = format!("not written: {e} (change the path, or {esc})");
                }
                self.notify(said, Severity::Error)
            }
        }
    }

    pub(super) fn theme_loaded(
        &mut self,
        name: String,
        result: Result<Theme, String>,
        fx: &mut Vec<Effect>,
    ) {
        match result {
            Ok(theme) => {
                self.config.theme = theme;
                fx.push(Effect::RememberTheme { name: name.clone() });
                self.notify(format!("theme: {name}"), Severity::Info);
            }
            Err(e) => self.notify(
                format!("{e}; the theme stays {}", self.config.theme.name),
                Severity::Warning,
            ),
        }
    }
}

pub(super) fn pretty_if_json(text: &str) -> String {
    crate::protocol::json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_owned())
}
