//! Actions: what a key of the table, the palette or a click asks for.

use crate::client::dialogue::Filling;
use crate::tui::action::{Action, Pane};
use crate::tui::app::{App, Severity, SidebarRow};
use crate::tui::composer;
use crate::tui::dialogue::{Pending, Status};
use crate::tui::effect::Effect;
use crate::tui::overlay::{
    Confirm, ConfirmPurpose, Input, OpenFile, Outcome, Overlay, Palette, Prompt, PromptPurpose,
};
use crate::tui::theme::Theme;

impl App {
    pub fn act(&mut self, action: Action, fx: &mut Vec<Effect>) {
        if self.asks_consent(action.clone()) {
            return;
        }
        match action {
            Action::Quit => {
                let drafts = self.unsent_drafts();
                if self.session.unsaved == 0 && !drafts.is_empty() {
                    self.overlay = Some(Overlay::Confirm(Confirm {
                        title: "Quit".into(),
                        message: format!(
                            "{} has an unsent draft. Quit anyway? y quits (the draft is lost); n \
                             stays",
                            drafts.join(", ")
                        ),
                        purpose: ConfirmPurpose::Quit,
                    }));
                } else if self.session.unsaved > 0 {
                    let drafts = match drafts.is_empty() {
                        true => String::new(),
                        false => format!(" {} has an unsent draft, lost too.", drafts.join(", ")),
                    };
                    let n = self.session.unsaved;
                    let kept = match &self.paths.data_dir {
                        Some(dir) => format!(
                            " (until the next run ends they are in {})",
                            dir.join(crate::tui::persist::LAST_RUN).display()
                        ),
                        None => " and they are lost".into(),
                    };
                    let save = self.keymap.first_key(&Action::Save);
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
            Action::Help => self.overlay = Some(Overlay::Help { scroll: 0 }),
            Action::Messages => {
                self.overlay = Some(Overlay::Messages {
                    scroll: usize::MAX / 2,
                })
            }
            Action::Palette => {
                self.overlay = Some(Overlay::Palette(Palette::new(self.palette_entries())))
            }
            Action::FocusNext | Action::FocusPrev => {
                let panes = self.panes();
                let i = panes.iter().position(|p| *p == self.focus).unwrap_or(0);
                let n = panes.len();
                let next = if action == Action::FocusNext {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                self.focus = panes[next];
            }
            Action::Focus(p) => {
                if p == Pane::Log {
                    self.show_log = true;
                }
                self.focus = p;
            }
            Action::NextDialogue | Action::PrevDialogue => {
                let n = self.dialogues.len();
                if n > 0 {
                    let i = self
                        .current
                        .and_then(|c| self.dialogues.position(c))
                        .unwrap_or(0);
                    let next = if action == Action::NextDialogue {
                        (i + 1) % n
                    } else {
                        (i + n - 1) % n
                    };
                    if let Some(id) = self.dialogues.id_at(next) {
                        self.show_dialogue(id);
                    }
                }
            }
            Action::GoToDialogue(i) => {
                if let Some(id) = self.dialogues.id_at(i) {
                    self.show_dialogue(id);
                }
            }
            Action::NewDialogue => {
                let Some(server) = self.server_in_view() else {
                    let hint = self.no_dialogue_hint();
                    self.notify(hint, Severity::Warning);
                    return;
                };
                let Some(interface) = self.servers.get(server).map(|s| s.interface) else {
                    return;
                };
                self.open_dialogue(server, interface, fx);
                self.focus = Pane::Composer;
            }
            Action::CloseDialogue => {
                let Some(d) = self.current_dialogue() else {
                    return;
                };
                if d.transcript.is_empty() {
                    let key = d.key;
                    self.close_dialogue(key, fx);
                } else {
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
            }
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
                self.show_log = !self.show_log;
                if !self.show_log && self.focus == Pane::Log {
                    self.focus = Pane::Transcript;
                }
            }
            Action::Save => match self.session.path.clone() {
                Some(path) => self.save_explicit(path, fx),
                None => self.act(Action::SaveAs, fx),
            },
            Action::SaveAs => {
                let default = self
                    .session
                    .path
                    .as_ref()
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
            Action::Open if self.session.unsaved > 0 => {
                // Opening replaces the dialogues in view, and the next turn's autosave what
                // they were: never without a question.
                let n = self.session.unsaved;
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
            Action::Open => {
                self.overlay = Some(Overlay::Open(OpenFile::new()));
                fx.push(Effect::ListSessions);
            }
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
                let tabs = self.detail_tabs();
                let shown = self.shown_detail_tab();
                let i = tabs.iter().position(|t| *t == shown).unwrap_or(0);
                let n = tabs.len();
                let next = tabs[if action == Action::NextDetailTab {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                }];
                if let Some(d) = self.current_dialogue_mut() {
                    d.transcript.detail_tab = next;
                    d.transcript.detail_scroll = 0;
                }
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
            | Action::NewLine
            | Action::Yes
            | Action::No
            | Action::SaveFirst
            | Action::SetAside
            | Action::Overwrite
            | Action::SaveElsewhere => {}
            Action::ComposerMode => {
                if self.with_composer(|c, ctx| c.toggle_mode(ctx)).is_some() {
                    self.focus = Pane::Composer;
                }
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
            Action::CycleTheme => {
                let i = self
                    .themes
                    .iter()
                    .position(|n| *n == self.theme.name)
                    .unwrap_or(0);
                if let Some(next) = self.themes.get((i + 1) % self.themes.len().max(1)).cloned() {
                    self.act(Action::SetTheme(next), fx);
                }
            }
            Action::SetTheme(name) => match Theme::built_in(&name) {
                Ok(theme) => self.theme_loaded(name, Ok(theme), fx),
                Err(_) => fx.push(Effect::LoadTheme { name }),
            },
            Action::AddServer => self.ask_server_to_add(fx),
            Action::AddFoundServer(name) => self.add_found_server(&name, fx),
            Action::RemoveServer => self.ask_to_remove_server(fx),
            Action::FilterLog => {
                self.show_log = true;
                self.focus = Pane::Log;
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
        }
    }

    /// The dialogues whose composer holds an unsent draft, by name.
    fn unsent_drafts(&self) -> Vec<String> {
        self.dialogues
            .values()
            .filter(|d| d.composer.has_draft())
            .map(|d| d.name.clone())
            .collect()
    }

    fn quit(&mut self, fx: &mut Vec<Effect>) {
        self.close_connections(fx);
        fx.push(Effect::Quit { clean: true });
    }

    /// Closes the connection of every dialogue that has one (open, or still connecting).
    pub(super) fn close_connections(&self, fx: &mut Vec<Effect>) {
        for d in self.dialogues.values() {
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
        self.ticks = 0;
        self.autosave_drafts(fx);
        let work = self.session.unsaved > 0;
        match (self.paths.autosave.clone(), work) {
            (Some(path), true) => {
                self.leaving = true;
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
            (None, true) => fx.push(Effect::Quit { clean: false }),
            (_, false) => fx.push(Effect::Quit { clean: true }),
        }
    }

    pub(super) fn close_dialogue(
        &mut self,
        key: crate::client::engine::DialogueKey,
        fx: &mut Vec<Effect>,
    ) {
        let Some(i) = self.dialogue_of_key(key) else {
            return;
        };
        let Some(position) = self.dialogues.position(i) else {
            return;
        };
        let Some(d) = self.dialogues.remove(i) else {
            return;
        };
        // Its turns are in no later save: no longer counted as unsaved (the question said so).
        self.session.unsaved = self.session.unsaved.saturating_sub(d.unsaved);
        fx.push(Effect::Close { key: d.key });
        fx.push(Effect::StopReplay { key: d.key });
        fx.push(Effect::StopScenario { key: d.key });
        if !d.transcript.is_empty() {
            self.autosave(fx);
        }
        // The tab after it shows (the one before, when it was the last).
        self.current = self
            .dialogues
            .id_at(position.min(self.dialogues.len().saturating_sub(1)));
        if let Some(focus) = self.current_dialogue().and_then(|d| d.transcript.focus) {
            self.focus = focus;
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
            Outcome::Close => {
                // Closing a server's question dismisses it: the server is not left waiting.
                match self.overlay.take() {
                    Some(Overlay::Ask(a)) => {
                        self.replied(a.ask, crate::client::answers::Reply::Cancel, fx)
                    }
                    // A Save-as given up: nothing waits for a save any more.
                    Some(Overlay::Prompt(p)) if p.purpose == PromptPurpose::SaveAs => {
                        self.after_save = None
                    }
                    _ => {}
                }
            }
            Outcome::Resources(ask) => self.resources_ask(ask, fx),
            Outcome::Export(ask) => self.export_ask(ask, fx),
            Outcome::Replied(ask, reply) => {
                self.overlay = None;
                self.replied(ask, reply, fx);
            }
            Outcome::Run(action) => {
                self.overlay = None;
                self.act(action, fx);
            }
            Outcome::Answered(purpose, yes) => {
                self.overlay = None;
                if yes {
                    self.confirmed(purpose, fx);
                }
            }
            Outcome::Chose(purpose, choice) => {
                use crate::tui::overlay::Choice;
                self.overlay = None;
                match (purpose, choice) {
                    (ConfirmPurpose::OpenOverUnsaved, Choice::SetAside) => self.set_aside(fx),
                    (ConfirmPurpose::OpenOverUnsaved, _) => {
                        // Open once the save is written (after Save-as's prompt if the session
                        // has no file yet).
                        self.after_save = Some(Action::Open);
                        self.act(Action::Save, fx);
                    }
                    (ConfirmPurpose::SaveOverChanged(path), Choice::Overwrite) => {
                        self.save_over_change(path, fx)
                    }
                    (ConfirmPurpose::SaveOverChanged(_), _) => self.act(Action::SaveAs, fx),
                    _ => {}
                }
            }
            Outcome::Submit(purpose, text) => {
                self.overlay = None;
                match purpose {
                    PromptPurpose::SaveAs => {
                        if text.trim().is_empty() {
                            return;
                        }
                        let path = super::resolve_save_path(text.trim(), &self.paths);
                        fx.push(Effect::CheckSaveTarget {
                            path,
                            what: crate::tui::event::SaveWhat::Session,
                        });
                    }
                    PromptPurpose::SaveTest => self.save_test_to(&text, fx),
                    PromptPurpose::RunScenario => self.run_scenario(&text, fx),
                    PromptPurpose::FilterLog => self.log.set_filter(text),
                    PromptPurpose::AddServer => self.add_typed_server(&text, fx),
                    PromptPurpose::ServerInput(server, id) => {
                        self.input_given(server, id, text, fx)
                    }
                    PromptPurpose::WriteJson => self.write_json_to(&text, fx),
                    PromptPurpose::WriteText(content) => self.write_to(&text, content, fx),
                }
            }
            Outcome::Typed(text) => match &mut self.overlay {
                Some(Overlay::Open(_)) => fx.push(Effect::CompletePath {
                    typed: text,
                    extensions: &["json"],
                }),
                Some(Overlay::Prompt(p)) => {
                    let note = match p.purpose {
                        PromptPurpose::SaveTest => self.scenario_note(&text),
                        PromptPurpose::SaveAs => self.save_as_note(&text),
                        // The others' notes do not follow what is typed.
                        _ => return,
                    };
                    if let Some(Overlay::Prompt(p)) = &mut self.overlay {
                        p.note = note;
                    }
                }
                _ => {}
            },
            Outcome::CompletePath(typed, extensions) => {
                fx.push(Effect::CompletePath { typed, extensions })
            }
            Outcome::OpenPath(path) => fx.push(Effect::ReadSession {
                path,
                purpose: crate::tui::event::OpenPurpose::Open,
            }),
            Outcome::SetDefaults(values, scope) => {
                self.overlay = None;
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
            .servers
            .get(server)
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
                if let Some(s) = self.servers.get_mut(server) {
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
                            "other runs' unsaved work is kept in {} (Ctrl-O opens a session)",
                            others.join(", ")
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
            let keys = self.keymap.keys_of(&a);
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
        for (i, d) in self.dialogues.values().enumerate() {
            entries.push((
                Action::GoToDialogue(i),
                format!("Go to dialogue {}: {}", i + 1, d.name),
                (i + 1).to_string(),
            ));
        }
        for name in &self.themes {
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
        let page = match self.focus {
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
        match self.focus {
            Pane::Sidebar => {
                let n = self.sidebar_rows().len();
                self.sidebar_selected = step(self.sidebar_selected, n);
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
        match self.focus {
            Pane::Sidebar => match self.sidebar_rows().get(self.sidebar_selected).copied() {
                Some(SidebarRow::Dialogue(d)) => {
                    self.show_dialogue(d);
                    self.focus = Pane::Transcript;
                }
                Some(SidebarRow::Server(s)) => {
                    if let Some(s) = self.servers.get_mut(s) {
                        s.expanded = !s.expanded;
                    }
                }
                None => {}
            },
            Pane::Transcript => {
                // Enter on a turn puts its Request in the composer, to edit and send again.
                let request = self
                    .current_dialogue()
                    .and_then(|d| d.transcript.selection())
                    .map(|s| s.request.clone());
                if let Some(request) = request {
                    let kept = self.with_composer(|c, ctx| c.replace_with(&request, ctx));
                    self.focus = Pane::Composer;
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
        if d.link.pending.is_some() {
            self.notify("a turn is pending: Esc cancels it", Severity::Warning);
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
                let key = self.keymap.first_key(&crate::tui::action::Action::TakeOver);
                self.notify(
                    format!("a live dialogue, watched from a proxy: read-only; {key} takes it over in a dialogue of your own"),
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
        let started = self.now;
        if let Some(d) = self.current_dialogue_mut() {
            d.link.pending = Some(Pending {
                started,
                request: None,
                cancelling: false,
                progress: None,
                task: None,
            });
        }
    }

    /// Esc, one step out: in the composer (EDIT), back to NAV, always (a completion list
    /// closed first, by the composer); outside it, the pending turn, replay or scenario is
    /// stopped.
    fn cancel(&mut self, fx: &mut Vec<Effect>) {
        if self.focus == Pane::Composer {
            self.focus = Pane::Transcript;
            let running = self.current_dialogue().is_some_and(|d| {
                d.link.pending.as_ref().is_some_and(|p| !p.cancelling)
                    || d.runs.replay.as_ref().is_some_and(|r| r.running)
                    || d.runs.scenario.as_ref().is_some_and(|s| s.running)
            });
            if running {
                self.notify(
                    "out of the composer; a turn is under way: Esc again cancels it",
                    Severity::Info,
                );
            }
            return;
        }
        if let Some(i) = self.current
            && let Some(d) = self.dialogues.get_mut(i)
        {
            if let Some(p) = &mut d.link.pending
                && !p.cancelling
            {
                p.cancelling = true;
                fx.push(Effect::Cancel { key: d.key });
                // A turn that became a task is cancelled as a task (SEP-2663).
                let told = match &p.task {
                    Some(task) => format!("tasks/cancel for task {}", task.task_id),
                    None => "notifications/cancelled".to_owned(),
                };
                self.notify(
                    format!("cancelling: the server is told ({told})"),
                    Severity::Info,
                );
                return;
            }
            if d.runs.replay.as_ref().is_some_and(|r| r.running) {
                fx.push(Effect::StopReplay { key: d.key });
                if let Some(r) = &mut d.runs.replay {
                    r.running = false;
                }
                self.notify("replay cancelled", Severity::Info);
                return;
            }
            if d.runs.scenario.as_ref().is_some_and(|s| s.running) {
                fx.push(Effect::StopScenario { key: d.key });
                self.notify(
                    "stopping the scenario after the step in flight",
                    Severity::Info,
                );
            }
        }
    }

    fn reconnect(&mut self, fx: &mut Vec<Effect>) {
        let Some(i) = self.current else { return };
        // A dialogue whose server was removed has nothing to reconnect to.
        let Some(old) = self
            .dialogues
            .get(i)
            .filter(|d| self.servers.contains(d.server))
            .map(|d| d.key)
        else {
            if self.dialogues.contains(i) {
                let add = self.keymap.first_key(&Action::AddServer);
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
        let key = self.new_key();
        let Some(d) = self.dialogues.get_mut(i) else {
            return;
        };
        let had_session = d.link.dialog_id.is_some() || !d.transcript.is_empty();
        d.key = key;
        d.status = Status::Connecting;
        d.link.pending = None;
        d.link.new_session = !d.transcript.is_empty();
        let (server, interface, first) = (d.server, d.interface, d.link.next_turn);
        // Over 2026-07-28 the server keeps the dialogue by its DialogID: the new connection
        // goes on with it (the engine tells which it was once the dialogue is open).
        let goes_on = d
            .link
            .dialog_id
            .clone()
            .map(|dialog_id| crate::client::dialogue::GoesOn {
                dialog_id,
                history: d
                    .transcript
                    .turns()
                    .iter()
                    // The turns the server took (a refused Request changed nothing there).
                    .filter_map(|t| t.turn.response().map(|r| [t.turn.request_value(), r]))
                    .flatten()
                    .collect(),
            });
        let Some(s) = self.servers.get_mut(server) else {
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
                .dialogues
                .get(i)
                .and_then(|d| d.link.protocol_version.clone()),
        });
        if had_session {
            self.notify("reconnecting…", Severity::Info);
        }
    }

    fn replay(&mut self, fx: &mut Vec<Effect>) {
        let Some(i) = self.current else { return };
        let Some(d) = self.dialogues.get(i) else {
            return;
        };
        if d.transcript.is_empty() {
            self.notify(
                "nothing to replay: the dialogue has no turns",
                Severity::Warning,
            );
            return;
        }
        let Some(server) = self.servers.get(d.server) else {
            return;
        };
        let record = crate::session::DialogueRecord {
            notes: None,
            defaults: d.defaults.as_ref().map(|c| c.values.clone()),
            protocol_version: d
                .link
                .protocol_version
                .clone()
                .or_else(|| server.summary.as_ref().map(|s| s.protocol_version.clone())),
            ..d.record(server.spec.name.clone())
        };
        let session = crate::session::Session {
            servers: vec![server.spec.clone()],
            defaults: self.defaults.clone(),
            dialogues: vec![record],
            ..Default::default()
        };
        let key = d.key;
        fx.push(Effect::StopReplay { key });
        fx.push(Effect::Replay {
            key,
            session: Box::new(session),
        });
        let Some(d) = self.dialogues.get_mut(i) else {
            return;
        };
        d.start_replay();
        d.transcript.detail_tab = crate::tui::app::DetailTab::Replay;
        self.notify("replaying in a fresh dialogue…", Severity::Info);
    }

    /// The JSON in view: the selected log entry, the composer's draft, or the turn's
    /// Response (or its Request).
    fn json_in_view(&mut self, request: bool) -> Option<String> {
        match self.focus {
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
        let name = match self.focus {
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
        prompt.note = format!("in {}", self.paths.cwd.display());
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
        prompt.note = format!("in {}", self.paths.cwd.display());
        self.overlay = Some(Overlay::Prompt(prompt));
    }

    /// Writes `text` where `typed` says (after asking, if a file is there).
    fn write_to(&mut self, typed: &str, text: String, fx: &mut Vec<Effect>) {
        let typed = typed.trim();
        if typed.is_empty() {
            return;
        }
        let mut path = crate::settings::expand_home(std::path::Path::new(typed));
        if path.is_relative() {
            path = self.paths.cwd.join(path);
        }
        fx.push(Effect::CheckSaveTarget {
            path,
            what: crate::tui::event::SaveWhat::Json(text),
        });
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
        let write = self.keymap.first_key(&Action::WriteJson);
        let how = if self.in_tmux {
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

    pub(super) fn copy_written(&mut self, path: std::path::PathBuf, result: Result<(), String>) {
        match result {
            Ok(()) => self.notify(format!("wrote {}", path.display()), Severity::Success),
            Err(e) => self.notify(
                format!("cannot write {}: {e}", path.display()),
                Severity::Error,
            ),
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
                self.theme = theme;
                fx.push(Effect::RememberTheme { name: name.clone() });
                self.notify(format!("theme: {name}"), Severity::Info);
            }
            Err(e) => self.notify(
                format!("{e}; the theme stays {}", self.theme.name),
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
