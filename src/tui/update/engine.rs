//! What the engine reports: dialogues that open or fail, turns that start and finish, the
//! protocol log, progress, connections that end; and what replays report.

use crate::client::connection::DialogIdOrigin;
use crate::client::engine::{DialogueKey, EngineEvent};
use crate::client::event::Event as ClientEvent;
use crate::client::oauth::SignInNotice;
use crate::client::turn::ErrorKind;
use crate::client::turn::{Reply, TurnKind};
use crate::protocol::Interface;
use crate::protocol::dac::Kind;
use crate::tui::action::Pane;
use crate::tui::app::{App, DetailTab, ServerStatus, Severity};
use crate::tui::composer;
use crate::tui::dialogue::{ReplayedView, Status};
use crate::tui::effect::Effect;
use crate::tui::event::ReplayEvent;
use crate::tui::ids::{DialogueId, ServerId};

impl App {
    pub(super) fn engine_event(&mut self, event: EngineEvent, fx: &mut Vec<Effect>) {
        match event {
            event @ EngineEvent::Opened { .. } => self.dialogue_opened(event, fx),
            event @ EngineEvent::Failed { .. } => self.dialogue_failed(event, fx),
            EngineEvent::TurnStarted { dialogue, request } => {
                if let Some(d) = self.workspace.dialogue_by_key_mut(dialogue) {
                    d.link.turn_started(request);
                }
            }
            EngineEvent::TurnFinished {
                dialogue,
                turn,
                next_turn,
            } => self.turn_finished(dialogue, turn, next_turn, fx),
            EngineEvent::Closed { dialogue } => self.session_ended(dialogue),
            EngineEvent::Client(event) => self.client_event(event, fx),
            EngineEvent::ResourcesListed { dialogue, result } => {
                self.resources_listed(dialogue, result)
            }
            EngineEvent::ResourceRead {
                dialogue,
                uri,
                result,
            } => self.resource_read(dialogue, uri, result),
            EngineEvent::Refreshed {
                dialogue,
                summary,
                vocabulary,
            } => self.server_refreshed(dialogue, *summary, *vocabulary),
        }
    }

    /// A dialogue's MCP session ended: the dialogue says so, and its server's dot too, unless
    /// another dialogue is still open on it.
    fn session_ended(&mut self, dialogue: DialogueKey) {
        let Some(d) = self.workspace.dialogue_by_key_mut(dialogue) else {
            return;
        };
        if d.status != Status::Open {
            return;
        }
        d.status = Status::Closed("the session ended".into());
        let server = d.server;
        if !self
            .workspace
            .dialogues_of(server)
            .any(|(_, d)| d.status == Status::Open)
            && let Some(s) = self.workspace.server_mut(server)
            && s.status == ServerStatus::Connected
        {
            s.status = ServerStatus::Failed("its session ended".into());
        }
    }

    /// What a connection reports as it goes: the protocol log, lists that changed, progress,
    /// a turn become a task, a sign-in, the connection's end.
    fn client_event(&mut self, event: ClientEvent, fx: &mut Vec<Effect>) {
        match event {
            ClientEvent::Log(entry) => self.log.push(entry),
            ClientEvent::ListChanged {
                connection, what, ..
            } => {
                let open = self
                    .workspace
                    .dialogues()
                    .values()
                    .find(|d| d.link.is_on(connection) && d.status == Status::Open)
                    .map(|d| d.key);
                if let Some(key) = open {
                    fx.push(Effect::Refresh { key });
                    if what.contains("resources") {
                        self.resources_changed(key, fx);
                    }
                }
            }
            ClientEvent::Progress {
                connection,
                progress,
                total,
                ..
            } => {
                if let Some(link) = self.link_on(connection) {
                    link.progress(progress, total);
                }
            }
            ClientEvent::Task { connection, note } => {
                if let Some(link) = self.link_on(connection) {
                    link.became_task(note);
                }
            }
            ClientEvent::SignIn { server, notice, .. } => self.sign_in_notice(&server, notice, fx),
            ClientEvent::Closed { connection, reason } => {
                if let Some(d) = self
                    .workspace
                    .dialogues_mut()
                    .find(|d| d.link.is_on(connection))
                    && d.status == Status::Open
                {
                    d.status = Status::Closed(reason);
                }
            }
        }
    }

    /// The link of the dialogue on a connection.
    fn link_on(&mut self, connection: u64) -> Option<&mut crate::tui::dialogue::Link> {
        self.workspace
            .dialogues_mut()
            .find(|d| d.link.is_on(connection))
            .map(|d| &mut d.link)
    }

    /// A server's tools or resources were read again: what completion offers follows them.
    fn server_refreshed(
        &mut self,
        dialogue: DialogueKey,
        summary: crate::client::connection::ServerSummary,
        vocabulary: crate::protocol::resources::Vocabulary,
    ) {
        let Some(server) = self.workspace.dialogue_by_key(dialogue).map(|d| d.server) else {
            return;
        };
        self.server_connected(server, summary, vocabulary);
        self.with_composer(|c, ctx| c.recheck(ctx));
        self.notify(
            "the server's tools or resources changed: read again (completion follows them)",
            Severity::Info,
        );
    }

    /// A dialogue's MCP session is open (again, after a reconnect): what the server offers is kept.
    fn dialogue_opened(&mut self, event: EngineEvent, fx: &mut Vec<Effect>) {
        let EngineEvent::Opened {
            dialogue,
            connection,
            dialog_id,
            origin,
            tool,
            summary,
            vocabulary,
            defaults,
            continued,
            next_turn,
        } = event
        else {
            return;
        };
        let Some(i) = self.workspace.dialogue_of_key(dialogue) else {
            return;
        };
        let Some(d) = self.workspace.dialogue_mut(i) else {
            return;
        };
        // A reconnect: the dialogue went on under its DialogID (2026-07-28), or the
        // new MCP session is a new dialogue on the server (2025-11-25).
        if d.link.reconnecting() {
            if continued {
                d.link.continued_by_server();
                self.notify(
                    "reconnected under the same DialogID (MCP 2026-07-28): a server that still holds the dialogue goes on with its state (commitments); one that restarted holds none of it and says so at the next turn (n starts a new dialogue)",
                    Severity::Success,
                );
            } else {
                // The server holds nothing of before: no TurnIndex of it is "the last
                // the server took" (the composer warned about its own number).
                d.link.started_afresh();
                self.notify(
                    "reconnected: a new dialogue on the server (a new MCP session, or a new server process); its state there (commitments) is gone",
                    Severity::Warning,
                );
            }
        }
        let origin_text = match origin {
            DialogIdOrigin::McpSession => "the MCP session id",
            DialogIdOrigin::Client => "made by the explorer",
        };
        // It speaks another MCP generation than it did (recorded, or before the
        // reconnect): said, as where its state lives changed.
        if let Some(note) = &summary.generation_note {
            self.log.push(crate::client::event::LogEntry::new(
                connection,
                crate::client::event::LogKind::Client,
                note.clone(),
            ));
            self.notify(note.clone(), Severity::Warning);
        }
        let Some(d) = self.workspace.dialogue_mut(i) else {
            return;
        };
        d.status = Status::Open;
        d.link.opened(crate::tui::dialogue::Opened {
            connection,
            dialog_id: dialog_id.clone(),
            origin,
            tool,
            protocol_version: summary.protocol_version.clone(),
            next_turn,
        });
        d.defaults = Some(*defaults);
        let server = d.server;
        let name = d.name.clone();
        self.server_connected(server, *summary, *vocabulary);
        self.with_composer(|c, ctx| c.recheck(ctx));
        self.log.push(crate::client::event::LogEntry::new(
            connection,
            crate::client::event::LogKind::Client,
            format!("dialogue {name} open: DialogID {dialog_id} ({origin_text})"),
        ));
        // A take-over sends its recorded Requests once its dialogue is open.
        self.take_over_next(i, fx);
        self.settle_view();
        self.edit_once_open_at_start();
    }

    /// The explorer starts in NAV (the servers focused): EDIT starts in the composer of the
    /// dialogue in view once that dialogue is open, if no one has acted yet (answering the
    /// question offered at start does not count). A start whose
    /// dialogues all fail stays in NAV, where `q` quits (issue 29).
    fn edit_once_open_at_start(&mut self) {
        if self.screen.edit_once_open()
            && self.screen.focus() == Pane::Sidebar
            && self
                .workspace
                .current_dialogue()
                .is_some_and(|d| matches!(d.status, Status::Open))
        {
            self.screen.set_focus(Pane::Composer);
            self.screen.set_edit_once_open(false);
        }
    }

    /// At start, while no one has moved: when the dialogue in view failed (its server did not
    /// start, or has no BKN tool), the view goes to the first dialogue, in the sidebar's
    /// order, that has not failed (open, or still connecting: it settles in turn). A start
    /// on several servers thus lands on one that holds a dialogue, whichever answers first.
    fn settle_view(&mut self) {
        if !self.workspace.chosen_at_start()
            || !matches!(
                self.workspace.current_dialogue().map(|d| &d.status),
                Some(Status::Failed(_))
            )
        {
            return;
        }
        let w = &self.workspace;
        let first = w
            .servers()
            .ids()
            .flat_map(|s| w.dialogues_of(s))
            .find(|(_, d)| matches!(d.status, Status::Open | Status::Connecting))
            .map(|(id, _)| id);
        if let Some(id) = first {
            self.show_dialogue(id);
            self.workspace.set_chosen_at_start(true);
            self.edit_once_open_at_start();
        }
    }

    /// A dialogue could not be opened: a server input asked for, the server's other interface
    /// tried, or the failure shown.
    fn dialogue_failed(&mut self, event: EngineEvent, fx: &mut Vec<Effect>) {
        let EngineEvent::Failed {
            dialogue,
            error,
            summary,
            needs_input,
        } = event
        else {
            return;
        };
        let Some(i) = self.workspace.dialogue_of_key(dialogue) else {
            return;
        };
        let Some(d) = self.workspace.dialogue_mut(i) else {
            return;
        };
        let server = d.server;
        if let Some(request) = needs_input {
            d.status = Status::Failed(error.clone());
            if let Some(s) = self.workspace.server_mut(server) {
                s.status = ServerStatus::Failed(error);
            }
            self.ask_input(server, *request);
            return;
        }
        // A server that carries the other interface gets a dialogue of that one.
        let other = match d.interface {
            Interface::Dac => Interface::Usr,
            Interface::Usr => Interface::Dac,
        };
        let no_turns = d.transcript.is_empty();
        let Some(s) = self.workspace.server_mut(server) else {
            return;
        };
        if let Some(summary) = &summary
            && no_turns
            && summary.bkn_tools.contains_key(&other)
        {
            s.interface = other;
            s.summary = Some((**summary).clone());
            let spec = s.spec.clone();
            let key = self.workspace.new_key();
            if let Some(d) = self.workspace.dialogue_mut(i) {
                d.interface = other;
                d.composer = composer::Composer::new(other);
                d.transcript.detail_tab = DetailTab::for_interface(other, false, false)[0];
                d.key = key;
            }
            let (base, overrides) = self.defaults_of_dialogue(i);
            fx.push(Effect::Open {
                key,
                spec,
                interface: other,
                base,
                overrides,
                first_turn: 0,
                goes_on: None,
                spoke: self
                    .workspace
                    .dialogue(i)
                    .and_then(|d| d.link.protocol_version().map(str::to_owned)),
            });
            return;
        }
        match summary {
            Some(summary) => {
                s.status = ServerStatus::Connected;
                s.summary = Some(*summary);
            }
            None => s.status = ServerStatus::Failed(error.clone()),
        }
        if let Some(d) = self.workspace.dialogue_mut(i) {
            d.status = Status::Failed(error.clone());
        }
        self.notify(error, Severity::Error);
        self.settle_view();
    }

    /// A server's OAuth sign-in moved on: the servers pane shows where it stands, and the
    /// person is told what to do (the whole URL is in the log when no browser could open it).
    fn sign_in_notice(&mut self, server: &str, notice: SignInNotice, fx: &mut Vec<Effect>) {
        let Some(s) = self.workspace.server_named_mut(server) else {
            return;
        };
        let name = s.name.clone();
        match &notice {
            SignInNotice::Open {
                browser: Some(b), ..
            } => self.notify(
                format!("{name} asks you to sign in: opened in {b}; waiting for the browser"),
                Severity::Info,
            ),
            SignInNotice::Open { url, browser: None } => {
                // No browser here (a remote terminal): the URL goes to the clipboard, and whole
                // into the messages, to open wherever the person's browser is.
                let messages = self
                    .config
                    .keymap
                    .first_key(&crate::tui::action::Action::Messages);
                fx.push(Effect::Clipboard { text: url.clone() });
                self.notify(
                    format!(
                        "{name} asks you to sign in: no browser could be opened; the URL is on \
                         the clipboard (OSC 52) and in the messages ({messages}): {url}"
                    ),
                    Severity::Warning,
                )
            }
            SignInNotice::SignedIn { .. } => {
                self.notify(format!("signed in to {name}"), Severity::Info)
            }
            SignInNotice::Refreshed { .. } => {}
            SignInNotice::Failed { reason } => self.notify(
                format!("signing in to {name} failed: {reason}"),
                Severity::Error,
            ),
        }
        if let Some(s) = self.workspace.server_named_mut(server) {
            s.sign_in = Some(notice);
        }
    }

    /// A server answered `initialize`: it is named by the name it gives (made distinct from
    /// the other servers'), and what it offers is kept.
    fn server_connected(
        &mut self,
        server: ServerId,
        summary: crate::client::connection::ServerSummary,
        vocabulary: crate::protocol::resources::Vocabulary,
    ) {
        let given = summary.name.trim().to_owned();
        let Some(s) = self.workspace.server_mut(server) else {
            return;
        };
        let first_time = s.summary.is_none();
        s.status = ServerStatus::Connected;
        s.summary = Some(summary);
        s.vocabulary = vocabulary;
        if first_time && !given.is_empty() && s.name == s.spec.name && s.spec.name_is_derived() {
            let taken: Vec<String> = self
                .workspace
                .servers()
                .iter()
                .filter(|(j, _)| *j != server)
                .map(|(_, s)| s.name.clone())
                .collect();
            let mut name = given.clone();
            let mut n = 2;
            while taken.contains(&name) {
                name = format!("{given}-{n}");
                n += 1;
            }
            let Some(s) = self.workspace.server_mut(server) else {
                return;
            };
            let old = std::mem::replace(&mut s.name, name.clone());
            // Dialogues named after the server follow it.
            for d in self
                .workspace
                .dialogues_mut()
                .filter(|d| d.server == server)
            {
                if let Some(rest) = d.name.strip_prefix(&old) {
                    d.name = format!("{name}{rest}");
                }
            }
        }
    }

    fn turn_finished(
        &mut self,
        dialogue: DialogueKey,
        turn: crate::client::turn::Turn,
        next_turn: u64,
        fx: &mut Vec<Effect>,
    ) {
        let Some(i) = self.workspace.dialogue_of_key(dialogue) else {
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
        let page = self.areas().transcript_rows();
        let Some(d) = self.workspace.dialogue_mut(i) else {
            return;
        };
        d.link.answered(next_turn);
        d.push(turn);
        d.transcript.follow_last(page);
        let Some(view) = d.transcript.last() else {
            return;
        };
        let answered = matches!(view.turn.reply, Reply::Response(_));
        let kind = view.summary.kind.clone();
        let taken_over = d.runs.takeover().is_some().then(|| view.turn.clone());
        // A new turn shows the detail tab its Kind is about, unless the user is reading
        // Findings, Raw or a replay.
        if answered
            && matches!(
                d.transcript.detail_tab,
                DetailTab::Answer | DetailTab::Feasibility | DetailTab::Commitments
            )
        {
            d.transcript.detail_tab = match kind {
                TurnKind::Dac(Kind::Feasibility) => DetailTab::Feasibility,
                TurnKind::Dac(Kind::Commitment) => DetailTab::Commitments,
                TurnKind::Dac(_) => DetailTab::Answer,
                _ => d.transcript.detail_tab,
            };
        }
        d.unsaved += 1;
        self.with_composer_of(i, |c, ctx| c.after_send(ctx, answered));
        self.session.turn_taken();
        self.server_health(i);
        if let Some((text, severity)) = summary {
            self.notify(text, severity);
        }
        self.autosave(fx);
        if let Some(turn) = taken_over {
            self.take_over_turn(i, &turn, fx);
        }
    }

    /// The sidebar's dot follows what the last turn on a server says of it: gone, broken or
    /// silent is not "connected"; an answer is.
    fn server_health(&mut self, i: DialogueId) {
        let Some(d) = self.workspace.dialogue(i) else {
            return;
        };
        let Some(view) = d.transcript.last() else {
            return;
        };
        let status = match &view.turn.reply {
            Reply::Error(e)
                if matches!(
                    e.kind,
                    ErrorKind::Gone | ErrorKind::Transport | ErrorKind::Timeout
                ) =>
            {
                ServerStatus::Failed(format!("not answering: {}", e.message))
            }
            Reply::Response(_) | Reply::ToolError(_) => ServerStatus::Connected,
            Reply::Error(_) => return,
        };
        let server = d.server;
        if let Some(s) = self.workspace.server_mut(server) {
            s.status = status;
        }
    }

    pub(super) fn replay_event(&mut self, event: ReplayEvent) {
        match event {
            ReplayEvent::Turn {
                dialogue,
                index,
                turn,
                differences,
            } => {
                let Some(d) = self
                    .workspace
                    .dialogue_of_key(dialogue)
                    .and_then(|i| self.workspace.dialogue_mut(i))
                else {
                    return;
                };
                d.replayed(index, ReplayedView { turn, differences });
            }
            ReplayEvent::Done { dialogue, result } => {
                let Some(d) = self
                    .workspace
                    .dialogue_of_key(dialogue)
                    .and_then(|i| self.workspace.dialogue_mut(i))
                else {
                    return;
                };
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
                // It spoke another MCP generation than the dialogue did: said with the rest.
                let (text, severity) = match result
                    .as_ref()
                    .ok()
                    .and_then(|r| r.generation_note.as_ref())
                {
                    Some(note) if severity == Severity::Success => {
                        (format!("{text}; {note}"), Severity::Warning)
                    }
                    Some(note) => (format!("{text}; {note}"), severity),
                    None => (text, severity),
                };
                d.runs.replay_ended(result.err());
                d.transcript.refresh_selection();
                self.notify(text, severity);
            }
        }
    }
}
