//! How the explorer answers events: keys and mouse become actions, engine events change the
//! dialogues. Nothing here waits: work that takes time is handed to the engine or to a task.

use crate::client::connection::DialogIdOrigin;
use crate::client::dialogue::Filling;
use crate::client::engine::EngineEvent;
use crate::client::event::Event as ClientEvent;
use crate::client::turn::Reply;
use crate::protocol::Interface;
use crate::tui::action::{self, Action, Pane};
use crate::tui::app::{
    App, AppEvent, DetailTab, OpenPurpose, ReplayEvent, ServerStatus, Severity, SidebarRow,
};
use crate::tui::composer;
use crate::tui::dialogue::{Pending, Replay, ReplayedView, Status};
use crate::tui::overlay::{Confirm, ConfirmPurpose, Overlay, Palette, Prompt, PromptPurpose};
use crate::tui::persist;
use crate::tui::theme::Theme;
use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};
use std::time::Instant;

impl App {
    pub fn handle(&mut self, event: AppEvent) {
        self.now = Instant::now();
        match event {
            AppEvent::Input(Event::Key(key)) if key.kind != KeyEventKind::Release => self.key(key),
            AppEvent::Input(Event::Mouse(mouse)) => self.mouse(mouse),
            AppEvent::Input(Event::Paste(text)) => self.paste(&text),
            AppEvent::Input(Event::Resize(w, h)) => self.size = Rect::new(0, 0, w, h),
            AppEvent::Input(_) => {}
            AppEvent::Engine(e) => self.engine_event(*e),
            AppEvent::Replay(e) => self.replay_event(e),
            AppEvent::Saved {
                path,
                automatic,
                result,
            } => self.saved(path, automatic, result),
            AppEvent::PickerItems(items) => self.picker_items_read(items),
            AppEvent::SessionRead {
                path,
                purpose,
                result,
            } => self.session_read(path, purpose, result),
            AppEvent::Tick => {
                self.ticks += 1;
                if self.notice.as_ref().is_some_and(|n| n.until <= self.now) {
                    self.notice = None;
                }
            }
            AppEvent::Terminate => self.quit = true,
        }
    }

    // ----- keys and mouse -----

    fn key(&mut self, key: KeyEvent) {
        if self.overlay.is_some() {
            self.overlay_key(key);
            return;
        }
        if self.focus == Pane::Log && self.log.editing_filter {
            self.log_filter_key(key);
            return;
        }
        // Arrows and Enter move within the composer's form before they mean anything else.
        if self.focus == Pane::Composer
            && matches!(
                key.code,
                KeyCode::Up | KeyCode::Down | KeyCode::Left | KeyCode::Right | KeyCode::Enter
            )
            && !key.modifiers.contains(KeyModifiers::CONTROL)
            && self.composer_key(key)
        {
            return;
        }
        let typing = self.typing();
        if let Some(action) = action::action_for(&key, self.focus, typing) {
            // Tab in the composer first offers its completion.
            let composer_first = self.focus == Pane::Composer
                && matches!(action, Action::FocusNext)
                && self.composer_key(key);
            if !composer_first {
                self.act(action);
            }
            return;
        }
        if self.focus == Pane::Composer {
            self.composer_key(key);
        }
    }

    /// Gives a key to the current dialogue's composer; false when it does not use it.
    fn composer_key(&mut self, key: KeyEvent) -> bool {
        let Some(i) = self.current else { return false };
        self.with_composer(i, |c, ctx| c.handle_key(key, ctx))
    }

    fn paste(&mut self, text: &str) {
        if let Some(Overlay::Prompt(p)) = &mut self.overlay {
            p.input.push_str(text.lines().next().unwrap_or_default());
        } else if let Some(Overlay::Palette(p)) = &mut self.overlay {
            p.query.push_str(text.lines().next().unwrap_or_default());
            p.refilter();
        } else if self.focus == Pane::Composer
            && let Some(i) = self.current
        {
            self.with_composer(i, |c, ctx| c.paste(text, ctx));
        }
    }

    fn log_filter_key(&mut self, key: KeyEvent) {
        let mut filter = self.log.filter.clone();
        match key.code {
            KeyCode::Enter | KeyCode::Esc => self.log.editing_filter = false,
            KeyCode::Backspace => {
                filter.pop();
                self.log.set_filter(filter);
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                filter.push(c);
                self.log.set_filter(filter);
            }
            _ => {}
        }
    }

    fn mouse(&mut self, mouse: MouseEvent) {
        if self.overlay.is_some() {
            if let MouseEventKind::Down(MouseButton::Left) = mouse.kind {
                self.overlay = None;
            }
            return;
        }
        let at = Position::new(mouse.column, mouse.row);
        let layout = self.layout.borrow().clone();
        let pane = [
            (layout.sidebar, Pane::Sidebar),
            (layout.transcript, Pane::Transcript),
            (layout.detail, Pane::Detail),
            (layout.composer, Pane::Composer),
            (layout.log, Pane::Log),
        ]
        .into_iter()
        .find(|(r, _)| r.contains(at))
        .map(|(_, p)| p);
        match mouse.kind {
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                let Some(pane) = pane else { return };
                let previous = self.focus;
                self.focus = pane;
                let action = if mouse.kind == MouseEventKind::ScrollUp {
                    Action::Up
                } else {
                    Action::Down
                };
                for _ in 0..3 {
                    self.act(action.clone());
                }
                if pane == Pane::Composer {
                    self.focus = previous;
                }
            }
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some((_, i)) = layout.tabs.iter().find(|(r, _)| r.contains(at)) {
                    self.act(Action::GoToDialogue(*i));
                    return;
                }
                if let Some((_, tab)) = layout.detail_tabs.iter().find(|(r, _)| r.contains(at)) {
                    self.detail_tab = *tab;
                    self.focus = Pane::Detail;
                    return;
                }
                if let Some((_, row)) = layout.sidebar_rows.iter().find(|(r, _)| r.contains(at)) {
                    self.focus = Pane::Sidebar;
                    self.sidebar_selected = *row;
                    self.act(Action::Select);
                    return;
                }
                if let Some((_, row)) = layout.composer_rows.iter().find(|(r, _)| r.contains(at)) {
                    self.focus = Pane::Composer;
                    if let Some(d) = self.current_dialogue_mut() {
                        d.composer.row = *row;
                        d.composer.completion = None;
                    }
                    return;
                }
                if layout.transcript_rows.contains(at)
                    && let Some(d) = self.current_dialogue_mut()
                {
                    let row = d.scroll + (at.y - layout.transcript_rows.y) as usize;
                    if row < d.turns.len() {
                        d.select(Some(row));
                    }
                }
                if let Some(pane) = pane {
                    self.focus = pane;
                }
            }
            _ => {}
        }
    }

    fn overlay_key(&mut self, key: KeyEvent) {
        let Some(overlay) = self.overlay.take() else {
            return;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match overlay {
            Overlay::Help { scroll } => {
                self.overlay = match key.code {
                    KeyCode::Down | KeyCode::Char('j') => {
                        Some(Overlay::Help { scroll: scroll + 1 })
                    }
                    KeyCode::Up | KeyCode::Char('k') => Some(Overlay::Help {
                        scroll: scroll.saturating_sub(1),
                    }),
                    KeyCode::PageDown => Some(Overlay::Help {
                        scroll: scroll + 10,
                    }),
                    KeyCode::PageUp => Some(Overlay::Help {
                        scroll: scroll.saturating_sub(10),
                    }),
                    _ => None,
                }
            }
            Overlay::Palette(mut p) => match key.code {
                KeyCode::Esc => {}
                KeyCode::Enter => {
                    if let Some(action) = p.chosen() {
                        self.act(action);
                    }
                }
                KeyCode::Down => {
                    p.selected = (p.selected + 1).min(p.matches.len().saturating_sub(1));
                    self.overlay = Some(Overlay::Palette(p));
                }
                KeyCode::Up => {
                    p.selected = p.selected.saturating_sub(1);
                    self.overlay = Some(Overlay::Palette(p));
                }
                KeyCode::Backspace => {
                    p.query.pop();
                    p.refilter();
                    self.overlay = Some(Overlay::Palette(p));
                }
                KeyCode::Char(c) if !ctrl => {
                    p.query.push(c);
                    p.refilter();
                    self.overlay = Some(Overlay::Palette(p));
                }
                _ => self.overlay = Some(Overlay::Palette(p)),
            },
            Overlay::Prompt(mut p) => match key.code {
                KeyCode::Esc => {}
                KeyCode::Enter => self.prompt_done(p),
                KeyCode::Backspace => {
                    p.input.pop();
                    self.overlay = Some(Overlay::Prompt(p));
                }
                KeyCode::Char(c) if !ctrl => {
                    p.input.push(c);
                    self.overlay = Some(Overlay::Prompt(p));
                }
                _ => self.overlay = Some(Overlay::Prompt(p)),
            },
            Overlay::Picker(mut p) => match key.code {
                KeyCode::Esc => {}
                KeyCode::Down | KeyCode::Char('j') => {
                    p.selected = (p.selected + 1).min(p.items.len().saturating_sub(1));
                    self.overlay = Some(Overlay::Picker(p));
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    p.selected = p.selected.saturating_sub(1);
                    self.overlay = Some(Overlay::Picker(p));
                }
                KeyCode::Enter => {
                    if let Some(item) = p.items.get(p.selected) {
                        let path = item.path.clone();
                        p.error = None;
                        p.opening = Some(path.clone());
                        self.open_session(path, OpenPurpose::Open);
                    }
                    self.overlay = Some(Overlay::Picker(p));
                }
                _ => self.overlay = Some(Overlay::Picker(p)),
            },
            Overlay::Confirm(c) => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => match c.purpose {
                    ConfirmPurpose::Quit => self.quit = true,
                    ConfirmPurpose::Recover(path) => self.open_session(path, OpenPurpose::Recover),
                },
                KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {}
                _ => self.overlay = Some(Overlay::Confirm(c)),
            },
        }
    }

    fn prompt_done(&mut self, p: Prompt) {
        match p.purpose {
            PromptPurpose::SaveAs => {
                let name = p.input.trim();
                if name.is_empty() {
                    return;
                }
                let mut path = std::path::PathBuf::from(name);
                if path.extension().is_none() {
                    path.set_extension("json");
                }
                if path.components().count() == 1 {
                    path = self.sessions_dir.join(path);
                }
                if self.session.name.is_none() {
                    self.session.name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                }
                self.save_to(path, false);
            }
            PromptPurpose::FilterLog => self.log.set_filter(p.input),
        }
    }

    // ----- actions -----

    pub fn act(&mut self, action: Action) {
        match action {
            Action::Quit => {
                if self.session.unsaved > 0 {
                    self.overlay = Some(Overlay::Confirm(Confirm {
                        title: "Quit".into(),
                        message: format!(
                            "{} turn{} not saved (the autosave has them). Quit anyway? y / n",
                            self.session.unsaved,
                            if self.session.unsaved == 1 {
                                " is"
                            } else {
                                "s are"
                            }
                        ),
                        purpose: ConfirmPurpose::Quit,
                    }));
                } else {
                    self.quit = true;
                }
            }
            Action::Help => self.overlay = Some(Overlay::Help { scroll: 0 }),
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
            Action::Focus(p) => self.focus = p,
            Action::NextDialogue | Action::PrevDialogue => {
                let n = self.dialogues.len();
                if n > 0 {
                    let i = self.current.unwrap_or(0);
                    self.current = Some(if action == Action::NextDialogue {
                        (i + 1) % n
                    } else {
                        (i + n - 1) % n
                    });
                }
            }
            Action::GoToDialogue(i) => {
                if i < self.dialogues.len() {
                    self.current = Some(i);
                }
            }
            Action::NewDialogue => {
                let Some(server) = self.selected_server() else {
                    self.notify("no server to open a dialogue on", Severity::Warning);
                    return;
                };
                let interface = self.servers[server].interface;
                self.open_dialogue(server, interface);
                self.focus = Pane::Composer;
            }
            Action::CloseDialogue => {
                if let Some(i) = self.current {
                    let d = self.dialogues.remove(i);
                    self.engine.close(d.key);
                    self.current = if self.dialogues.is_empty() {
                        None
                    } else {
                        Some(i.min(self.dialogues.len() - 1))
                    };
                }
            }
            Action::Reconnect => self.reconnect(),
            Action::Send => self.send(),
            Action::Cancel => self.cancel(),
            Action::ToggleLog => {
                self.show_log = !self.show_log;
                if !self.show_log && self.focus == Pane::Log {
                    self.focus = Pane::Transcript;
                }
            }
            Action::Save => match self.session.path.clone() {
                Some(path) => self.save_to(path, false),
                None => self.act(Action::SaveAs),
            },
            Action::SaveAs => {
                let default = self
                    .session
                    .path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| {
                        format!("session-{}.json", time::OffsetDateTime::now_utc().date())
                    });
                self.overlay = Some(Overlay::Prompt(Prompt {
                    title: format!(
                        "Save the session as (a bare name goes in {})",
                        persist::display_path(&self.sessions_dir)
                    ),
                    input: default,
                    purpose: PromptPurpose::SaveAs,
                }));
            }
            Action::Open => self.open_picker(),
            Action::Replay => self.replay(),
            Action::CopyJson => self.copy(false),
            Action::CopyRequest => self.copy(true),
            Action::NextDetailTab | Action::PrevDetailTab => {
                let tabs = self.detail_tabs();
                let i = tabs
                    .iter()
                    .position(|t| *t == self.shown_detail_tab())
                    .unwrap_or(0);
                let n = tabs.len();
                self.detail_tab = tabs[if action == Action::NextDetailTab {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                }];
                if let Some(d) = self.current_dialogue_mut() {
                    d.detail_scroll = 0;
                }
            }
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => self.move_in(action),
            Action::Select => self.select(),
            Action::ComposerMode => {
                if let Some(i) = self.current {
                    self.with_composer(i, |c, ctx| c.toggle_mode(ctx));
                    self.focus = Pane::Composer;
                }
            }
            Action::NextKind | Action::PrevKind => {
                if let Some(i) = self.current {
                    let forward = action == Action::NextKind;
                    self.with_composer(i, |c, ctx| {
                        c.cycle_kind(forward);
                        c.recheck(ctx);
                    });
                }
            }
            Action::CycleTheme => {
                let names = Theme::names(self.theme_dir.as_deref());
                let i = names
                    .iter()
                    .position(|n| *n == self.theme.name)
                    .unwrap_or(0);
                let next = names[(i + 1) % names.len()].clone();
                self.act(Action::SetTheme(next));
            }
            Action::SetTheme(name) => {
                let (theme, warning) = Theme::load_or_default(&name, self.theme_dir.as_deref());
                self.theme = theme;
                match warning {
                    Some(w) => self.notify(w, Severity::Warning),
                    None => self.notify(format!("theme: {name}"), Severity::Info),
                }
            }
            Action::FilterLog => {
                self.show_log = true;
                self.focus = Pane::Log;
                self.log.editing_filter = true;
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

    /// Every action, with its keys, and the dynamic ones (themes, dialogues), for the palette.
    fn palette_entries(&self) -> Vec<(Action, String, String)> {
        let mut entries: Vec<(Action, String, String)> = Vec::new();
        let mut push = |a: Action| {
            let keys = action::keys_of(&a);
            if !entries.iter().any(|(b, _, _)| *b == a) {
                entries.push((a.clone(), a.title(), keys));
            }
        };
        for b in action::BINDINGS {
            if !matches!(
                b.action,
                Action::Up
                    | Action::Down
                    | Action::PageUp
                    | Action::PageDown
                    | Action::Top
                    | Action::Bottom
                    | Action::Cancel
            ) {
                push(b.action.clone());
            }
        }
        for a in [
            Action::NextKind,
            Action::PrevKind,
            Action::Focus(Pane::Sidebar),
            Action::Focus(Pane::Transcript),
            Action::Focus(Pane::Detail),
            Action::Focus(Pane::Log),
        ] {
            push(a);
        }
        for (i, d) in self.dialogues.iter().enumerate() {
            entries.push((
                Action::GoToDialogue(i),
                format!("Go to dialogue {}: {}", i + 1, d.name),
                (i + 1).to_string(),
            ));
        }
        for name in Theme::names(self.theme_dir.as_deref()) {
            entries.push((
                Action::SetTheme(name.clone()),
                format!("Theme: {name}"),
                String::new(),
            ));
        }
        entries
    }

    fn move_in(&mut self, action: Action) {
        let page = (self.size.height as usize / 3).max(1);
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
                    let n = d.turns.len();
                    if n > 0 {
                        let next = step(d.selected.unwrap_or(n - 1), n);
                        d.select(Some(next));
                    }
                }
            }
            Pane::Detail => {
                // From what is on screen: after End, the scroll asked for is far past it.
                let shown = self.layout.borrow().detail_scroll;
                if let Some(d) = self.current_dialogue_mut() {
                    let from = match shown {
                        Some((key, line)) if key == d.key => d.detail_scroll.min(line),
                        _ => d.detail_scroll,
                    };
                    d.detail_scroll = step(from, usize::MAX / 4);
                }
            }
            Pane::Log => self.log.move_selection(delta.clamp(-100_000, 100_000)),
            Pane::Composer => {}
        }
    }

    fn select(&mut self) {
        match self.focus {
            Pane::Sidebar => match self.sidebar_rows().get(self.sidebar_selected).copied() {
                Some(SidebarRow::Dialogue(d)) => {
                    self.current = Some(d);
                    self.focus = Pane::Transcript;
                }
                Some(SidebarRow::Server(s)) => self.servers[s].expanded = !self.servers[s].expanded,
                None => {}
            },
            Pane::Transcript => {
                // Enter on a turn puts its Request in the composer, to edit and send again.
                if let Some(i) = self.current
                    && let Some(request) = self.dialogues[i]
                        .selection
                        .as_ref()
                        .map(|s| s.request.clone())
                {
                    self.with_composer(i, |c, ctx| c.load(&request, ctx));
                    self.focus = Pane::Composer;
                    self.notify("the turn's Request is in the composer", Severity::Info);
                }
            }
            Pane::Log => self.act(Action::FilterLog),
            _ => {}
        }
    }

    fn send(&mut self) {
        let Some(i) = self.current else {
            self.notify(
                "no dialogue: n opens one on the selected server",
                Severity::Warning,
            );
            return;
        };
        let d = &self.dialogues[i];
        if d.pending.is_some() {
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
        let content = match d.composer.content() {
            Ok(c) => c,
            Err(e) => {
                self.notify(format!("not sent: {e}"), Severity::Error);
                return;
            }
        };
        let key = d.key;
        if self
            .engine
            .send(key, serde_json::Value::Object(content), filling)
        {
            self.dialogues[i].pending = Some(Pending {
                started: Instant::now(),
                request: None,
                cancelling: false,
                progress: None,
            });
        } else {
            self.notify(
                "the dialogue is not connected; R reconnects",
                Severity::Error,
            );
        }
    }

    fn cancel(&mut self) {
        if let Some(i) = self.current
            && self.dialogues[i].pending.is_some()
        {
            let key = self.dialogues[i].key;
            if self.engine.cancel(key) {
                if let Some(p) = &mut self.dialogues[i].pending {
                    p.cancelling = true;
                }
                self.notify(
                    "cancelling: the server is told (notifications/cancelled)",
                    Severity::Info,
                );
            }
            return;
        }
        if let Some((key, token)) = self.current.and_then(|i| {
            let key = self.dialogues[i].key;
            self.replays.iter().find(|(k, _)| *k == key).cloned()
        }) {
            token.cancel();
            self.replays.retain(|(k, _)| *k != key);
            self.notify("replay cancelled", Severity::Info);
            return;
        }
        if self.focus == Pane::Composer {
            self.focus = Pane::Transcript;
        }
    }

    fn reconnect(&mut self) {
        let Some(i) = self.current else { return };
        let old = self.dialogues[i].key;
        self.engine.close(old);
        let key = self.engine.new_key();
        let d = &mut self.dialogues[i];
        let had_session = d.dialog_id.is_some() || !d.turns.is_empty();
        d.key = key;
        d.status = Status::Connecting;
        d.pending = None;
        d.new_session = !d.turns.is_empty();
        let (server, interface, first) = (d.server, d.interface, d.next_turn);
        if let Some(s) = self.servers.get_mut(server)
            && s.status != ServerStatus::Connected
        {
            s.status = ServerStatus::Connecting;
        }
        self.engine.open(
            key,
            self.servers[server].spec.clone(),
            interface,
            crate::client::defaults::Chosen::built_in(),
            crate::client::defaults::Overrides::default(),
            first,
        );
        if had_session {
            self.notify(
                "reconnecting: a new MCP session; the server's dialogue state (commitments) is gone",
                Severity::Warning,
            );
        }
    }

    fn replay(&mut self) {
        let Some(i) = self.current else { return };
        let d = &self.dialogues[i];
        if d.turns.is_empty() {
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
            name: Some(d.name.clone()),
            server: server.spec.name.clone(),
            interface: d.interface,
            dialog_id: d.dialog_id.clone().unwrap_or_default(),
            notes: None,
            defaults: None,
            turns: d.turns.iter().map(|t| t.turn.clone()).collect(),
        };
        let session = crate::session::Session {
            servers: vec![server.spec.clone()],
            defaults: self.defaults.clone(),
            dialogues: vec![record],
            ..Default::default()
        };
        let key = d.key;
        let options = self.engine.options().clone();
        let events = self.events.clone();
        let token = tokio_util::sync::CancellationToken::new();
        let stop = token.clone();
        self.replays.retain(|(k, _)| *k != key);
        self.replays.push((key, token));
        let d = &mut self.dialogues[i];
        for t in &mut d.turns {
            t.replay = None;
        }
        d.replay = Some(Replay {
            running: true,
            ..Default::default()
        });
        self.detail_tab = DetailTab::Replay;
        self.notify("replaying in a fresh dialogue…", Severity::Info);
        tokio::spawn(async move {
            let tx = events.clone();
            let result =
                crate::session::replay::replay_dialogue(&session, 0, None, &options, &stop, |t| {
                    let _ = tx.send(AppEvent::Replay(ReplayEvent::Turn {
                        dialogue: key,
                        index: t.index,
                        turn: t.replayed.clone(),
                        differences: t.differences.clone(),
                    }));
                })
                .await;
            let _ = events.send(AppEvent::Replay(ReplayEvent::Done {
                dialogue: key,
                result,
            }));
        });
    }

    fn copy(&mut self, request: bool) {
        let text = match self.focus {
            Pane::Log => self
                .log
                .selected
                .and_then(|i| self.log.visible(i))
                .map(|e| pretty_if_json(&e.text)),
            Pane::Composer => self
                .current
                .and_then(|i| {
                    let (vocabulary, commitments, dialog_id, next_turn) = self.compose_context(i);
                    let ctx = composer::Context {
                        vocabulary: &vocabulary,
                        commitments,
                        dialog_id: &dialog_id,
                        next_turn,
                        defaults: &self.defaults,
                    };
                    self.dialogues[i].composer.preview(&ctx).ok()
                })
                .map(|v| serde_json::to_string_pretty(&v).unwrap_or_default()),
            _ => self
                .current_dialogue()
                .and_then(|d| d.selection.as_ref())
                .map(|s| {
                    let value = if request {
                        Some(&s.request)
                    } else {
                        s.response.as_ref().or(Some(&s.request))
                    };
                    serde_json::to_string_pretty(&value).unwrap_or_default()
                }),
        };
        match text {
            Some(t) => {
                let size = t.len();
                self.clipboard = Some(t);
                self.notify(format!("copied {size} bytes (OSC 52)"), Severity::Success);
            }
            None => self.notify("nothing to copy here", Severity::Warning),
        }
    }

    // ----- engine events -----

    fn engine_event(&mut self, event: EngineEvent) {
        match event {
            EngineEvent::Opened {
                dialogue,
                connection,
                dialog_id,
                origin,
                tool,
                summary,
                vocabulary,
                defaults: _,
            } => {
                let Some(i) = self.dialogue_index(dialogue) else {
                    return;
                };
                self.engine.note_connection(dialogue, connection);
                let d = &mut self.dialogues[i];
                d.status = Status::Open;
                let origin_text = match origin {
                    DialogIdOrigin::McpSession => "the MCP session id",
                    DialogIdOrigin::Client => "made by the explorer",
                };
                d.dialog_id = Some(dialog_id.clone());
                d.origin = Some(origin);
                d.tool = Some(tool);
                let server = d.server;
                if let Some(s) = self.servers.get_mut(server) {
                    s.status = ServerStatus::Connected;
                    s.summary = Some(*summary);
                    s.vocabulary = *vocabulary;
                }
                self.with_composer(i, |c, ctx| c.recheck(ctx));
                self.log.push(crate::client::event::LogEntry::new(
                    0,
                    crate::client::event::LogKind::Client,
                    format!(
                        "dialogue {} open: DialogID {dialog_id} ({origin_text})",
                        self.dialogues[i].name
                    ),
                ));
            }
            EngineEvent::Failed {
                dialogue,
                error,
                summary,
            } => {
                let Some(i) = self.dialogue_index(dialogue) else {
                    return;
                };
                let server = self.dialogues[i].server;
                let interface = self.dialogues[i].interface;
                // A server that carries the other interface gets a dialogue of that one.
                let other = match interface {
                    Interface::Dac => Interface::Usr,
                    Interface::Usr => Interface::Dac,
                };
                if let Some(summary) = &summary
                    && self.dialogues[i].turns.is_empty()
                    && summary.bkn_tools.contains_key(&other)
                {
                    self.servers[server].interface = other;
                    self.servers[server].summary = Some(summary.clone());
                    let d = &mut self.dialogues[i];
                    d.interface = other;
                    d.composer = composer::Composer::new(other);
                    let key = self.engine.new_key();
                    self.dialogues[i].key = key;
                    self.engine.open(
                        key,
                        self.servers[server].spec.clone(),
                        other,
                        crate::client::defaults::Chosen::built_in(),
                        crate::client::defaults::Overrides::default(),
                        0,
                    );
                    return;
                }
                self.dialogues[i].status = Status::Failed(error.clone());
                let s = &mut self.servers[server];
                match summary {
                    Some(summary) => {
                        s.status = ServerStatus::Connected;
                        s.summary = Some(summary);
                    }
                    None => s.status = ServerStatus::Failed(error.clone()),
                }
                self.notify(error, Severity::Error);
            }
            EngineEvent::TurnStarted { dialogue, request } => {
                if let Some(i) = self.dialogue_index(dialogue)
                    && let Some(p) = &mut self.dialogues[i].pending
                {
                    p.request = Some(request);
                }
            }
            EngineEvent::TurnFinished {
                dialogue,
                turn,
                next_turn,
            } => {
                let Some(i) = self.dialogue_index(dialogue) else {
                    return;
                };
                let summary = match &turn.reply {
                    Reply::Response(_) => None,
                    Reply::ToolError(t) => Some((
                        format!(
                            "the server rejected the Request: {}",
                            t.lines().next().unwrap_or_default()
                        ),
                        Severity::Warning,
                    )),
                    Reply::Error(e) => Some((e.message.clone(), Severity::Error)),
                };
                let d = &mut self.dialogues[i];
                d.pending = None;
                d.next_turn = next_turn;
                d.push(turn);
                let rows = self.layout.borrow().transcript_rows.height as usize;
                let d = &mut self.dialogues[i];
                let last = d.turns.len() - 1;
                if rows > 0 && last >= d.scroll + rows {
                    d.scroll = last + 1 - rows;
                }
                self.follow_kind(i);
                let answered = matches!(
                    self.dialogues[i].turns.last().map(|t| &t.turn.reply),
                    Some(Reply::Response(_))
                );
                self.with_composer(i, |c, ctx| c.after_send(ctx, answered));
                self.session.unsaved += 1;
                if let Some((text, severity)) = summary {
                    self.notify(text, severity);
                }
                self.autosave();
            }
            EngineEvent::Closed { dialogue } => {
                if let Some(i) = self.dialogue_index(dialogue)
                    && self.dialogues[i].status == Status::Open
                {
                    self.dialogues[i].status = Status::Closed("the session ended".into());
                }
            }
            EngineEvent::Client(ClientEvent::Log(entry)) => self.log.push(entry),
            EngineEvent::Client(ClientEvent::Progress {
                connection,
                progress,
                total,
                ..
            }) => {
                if let Some(key) = self
                    .engine
                    .dialogue_of(connection)
                    .or_else(|| self.pending_dialogue())
                    && let Some(i) = self.dialogue_index(key)
                    && let Some(p) = &mut self.dialogues[i].pending
                {
                    p.progress = Some((progress, total));
                }
            }
            EngineEvent::Client(ClientEvent::Closed { connection, reason }) => {
                if let Some(key) = self.engine.dialogue_of(connection)
                    && let Some(i) = self.dialogue_index(key)
                {
                    self.dialogues[i].status = Status::Closed(reason);
                }
            }
        }
    }

    /// The dialogue with a turn pending, when only one has.
    /// When a new turn arrives and is selected, shows the detail tab its Kind is about
    /// (Feasibility for feasibility, Commitments for commitment, Answer otherwise), unless
    /// the user is reading Findings, Raw or a replay.
    fn follow_kind(&mut self, dialogue: usize) {
        let d = &self.dialogues[dialogue];
        if self.current != Some(dialogue) || d.selected != Some(d.turns.len().saturating_sub(1)) {
            return;
        }
        if !matches!(
            self.detail_tab,
            DetailTab::Answer | DetailTab::Feasibility | DetailTab::Commitments
        ) {
            return;
        }
        let Some(view) = d.turns.last() else { return };
        if !matches!(view.turn.reply, Reply::Response(_)) {
            return;
        }
        self.detail_tab = match view.summary.kind.as_str() {
            "feasibility" => DetailTab::Feasibility,
            "commitment" => DetailTab::Commitments,
            _ => DetailTab::Answer,
        };
    }

    fn pending_dialogue(&self) -> Option<crate::client::engine::DialogueKey> {
        let mut pending = self.dialogues.iter().filter(|d| d.pending.is_some());
        let first = pending.next()?;
        pending.next().is_none().then_some(first.key)
    }

    fn replay_event(&mut self, event: ReplayEvent) {
        match event {
            ReplayEvent::Turn {
                dialogue,
                index,
                turn,
                differences,
            } => {
                let Some(i) = self.dialogue_index(dialogue) else {
                    return;
                };
                let d = &mut self.dialogues[i];
                if let Some(r) = &mut d.replay {
                    r.done += 1;
                    r.differing += usize::from(!differences.is_empty());
                }
                if let Some(view) = d.turns.get_mut(index) {
                    view.replay = Some(ReplayedView { turn, differences });
                }
                if d.selected == Some(index) {
                    d.refresh_selection();
                }
            }
            ReplayEvent::Done { dialogue, result } => {
                self.replays.retain(|(k, _)| *k != dialogue);
                let Some(i) = self.dialogue_index(dialogue) else {
                    return;
                };
                let d = &mut self.dialogues[i];
                let (text, severity) = match &result {
                    Ok(r) if !r.differs() => (
                        format!("replay: {} turns, no differences", r.turns.len()),
                        Severity::Success,
                    ),
                    Ok(r) => (
                        format!(
                            "replay: {} of {} turns differ{}",
                            r.turns.iter().filter(|t| !t.differences.is_empty()).count(),
                            r.turns.len(),
                            r.stopped
                                .as_ref()
                                .map(|s| format!("; stopped: {s}"))
                                .unwrap_or_default()
                        ),
                        Severity::Warning,
                    ),
                    Err(e) => (format!("replay failed: {e}"), Severity::Error),
                };
                if let Some(r) = &mut d.replay {
                    r.running = false;
                    r.error = result.err();
                }
                d.refresh_selection();
                self.notify(text, severity);
            }
        }
    }
}

fn pretty_if_json(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_owned())
}
