//! A proxy's recording followed live: its servers join the sidebar, each of its dialogues is
//! a read-only tab marked live whose turns arrive as they pass the proxy, and the end of the
//! recording makes them recorded dialogues. Take over (`O`) continues one in a dialogue of
//! the user's own: a new MCP session on the same server, the recorded Requests up to the
//! selected turn sent again and compared, then the composer is the user's.

use crate::client::dialogue::Filling;
use crate::session::journal::{Closing, Line};
use crate::tui::app::{App, Live, ServerStatus, Severity};
use crate::tui::dialogue::{DialogueState, Link, Status, Unfollowed};
use crate::tui::effect::Effect;
use crate::tui::event::WatchEvent;
use crate::tui::ids::DialogueId;

impl App {
    pub(super) fn watch_event(&mut self, event: WatchEvent) {
        match event {
            WatchEvent::Started(path) => {
                self.notify(
                    format!(
                        "watching {}: its dialogues appear as they pass the proxy",
                        path.display()
                    ),
                    Severity::Info,
                );
                self.live = Some(Live::new(path));
            }
            WatchEvent::Line(line) => self.watched_line(*line),
            WatchEvent::Failed(why) => {
                // Nothing more will be seen of what was live.
                self.unfollow_all();
                self.notify(why, Severity::Error);
            }
            WatchEvent::WriterGone(why) => {
                let stopped = self.unfollow_all();
                self.notify(
                    format!(
                        "no more of the recording can be read: {why}; {stopped} live dialogue(s) no longer followed"
                    ),
                    Severity::Warning,
                );
            }
        }
    }

    fn watched_line(&mut self, line: Line) {
        let Some(live) = &mut self.live else { return };
        match line {
            Line::Start { servers, .. } => self.watched_start(servers),
            Line::Dialogue {
                id,
                server,
                interface,
                dialog_id,
                protocol_version,
            } => self.watched_dialogue(id, server, interface, dialog_id, protocol_version),
            Line::Turn { dialogue, turn } => {
                let Some(key) = live.key_of(dialogue) else {
                    return;
                };
                let Some(d) = self.workspace.dialogue_by_key_mut(key) else {
                    return;
                };
                // Follow the newest turn unless the user is looking at an older one.
                let following = d.transcript.selected().is_none()
                    || d.transcript.selected() == d.transcript.len().checked_sub(1);
                d.push(*turn);
                if following {
                    let last = d.transcript.len().checked_sub(1);
                    d.transcript.select(last);
                }
            }
            Line::Note(note) => self.notify(format!("proxy: {note}"), Severity::Info),
            Line::Offered => {}
            Line::Closed {
                dialogue,
                reason,
                cause,
            } => {
                let Some(key) = live.key_of(dialogue) else {
                    return;
                };
                if let Some(d) = self.workspace.dialogue_by_key_mut(key)
                    && d.status == Status::Live
                {
                    // An end (or a recording that does not say) makes it a recorded
                    // dialogue; otherwise it may go on unseen, and says so.
                    d.status = match cause {
                        None | Some(Closing::Ended) => Status::Recorded,
                        Some(Closing::Idle) => Status::Unfollowed(Unfollowed::Idle),
                        Some(Closing::RecordingStopped) => {
                            Status::Unfollowed(Unfollowed::RecordingStopped)
                        }
                    };
                    let name = d.name.clone();
                    let said = match cause {
                        Some(Closing::Idle) => "is idle",
                        Some(Closing::RecordingStopped) => "is no longer recorded",
                        None | Some(Closing::Ended) => "ended",
                    };
                    self.notify(
                        format!("the proxied dialogue {name} {said}: {reason}"),
                        Severity::Info,
                    );
                }
            }
            Line::End(why) => {
                let keys: Vec<_> = live.keys().collect();
                for key in keys {
                    if let Some(d) = self.workspace.dialogue_by_key_mut(key)
                        && d.status == Status::Live
                    {
                        d.status = Status::Recorded;
                    }
                }
                self.notify(format!("the recording ended: {why}"), Severity::Warning);
            }
        }
    }

    /// Every dialogue still live is no longer followed (the recording stopped, or cannot
    /// be read any more); returns how many were.
    fn unfollow_all(&mut self) -> usize {
        let Some(live) = &self.live else { return 0 };
        let keys: Vec<_> = live.keys().collect();
        let mut stopped = 0;
        for key in keys {
            if let Some(d) = self.workspace.dialogue_by_key_mut(key)
                && d.status == Status::Live
            {
                d.status = Status::Unfollowed(Unfollowed::RecordingStopped);
                stopped += 1;
            }
        }
        stopped
    }

    /// The recording's start: its servers join the sidebar (one already there is not added
    /// twice), with the command line's token for an HTTP one.
    fn watched_start(&mut self, servers: Vec<crate::client::spec::ServerSpec>) {
        let mut ids = Vec::new();
        for spec in servers {
            let existing = self
                .workspace
                .servers()
                .find(|s| s.spec.transport == spec.transport);
            let id = match existing {
                Some(i) => i,
                None => {
                    let mut spec = spec;
                    // The recording keeps no credentials: a take-over reaches the
                    // server with the command line's token (--token, BKN_TOKEN).
                    if let crate::client::spec::TransportSpec::Http(http) = &mut spec.transport
                        && http.token.is_none()
                        && self.config.token.is_some()
                    {
                        http.token = self.config.token.clone();
                    }
                    let i = self.add_server(spec, crate::protocol::Interface::Dac);
                    if let Some(s) = self.workspace.server_mut(i) {
                        s.status = ServerStatus::Recorded;
                    }
                    i
                }
            };
            ids.push(id);
        }
        if let Some(live) = &mut self.live {
            live.started_on(ids);
        }
    }

    /// A dialogue of the recording started: a live tab on its server, shown when no other
    /// live one is.
    fn watched_dialogue(
        &mut self,
        id: u64,
        server: String,
        interface: crate::protocol::Interface,
        dialog_id: String,
        protocol_version: Option<String>,
    ) {
        // The recording's server by name, else its first (a server the user
        // removed since is gone: the dialogue has no server to show it under).
        let Some(live) = &self.live else { return };
        let Some(index) = live
            .servers()
            .iter()
            .copied()
            .find(|&i| {
                self.workspace
                    .server(i)
                    .is_some_and(|s| s.spec.name == server)
            })
            .or(live.servers().first().copied())
            .filter(|&i| self.workspace.servers().contains(i))
        else {
            self.notify(
                format!("proxy: dialogue {id} is on a server no longer here: not shown"),
                Severity::Warning,
            );
            return;
        };
        let key = self.workspace.new_key();
        let name = format!(
            // Not "live": the name stays when the dialogue no longer is.
            "{} proxied {id}",
            self.workspace
                .servers()
                .get(index)
                .map(|s| s.name.as_str())
                .unwrap_or("proxy")
        );
        let mut d = DialogueState::new(key, name.clone(), index, interface);
        d.status = Status::Live;
        d.link = Link::recorded(dialog_id, protocol_version);
        d.transcript.focus = Some(crate::tui::action::Pane::Transcript);
        let new = self.workspace.add_dialogue(d);
        if let Some(live) = &mut self.live {
            live.dialogue_began(id, key);
        }
        // The first watched dialogue comes into view; later ones wait in their tabs.
        let watched_in_view = self
            .current_dialogue()
            .is_some_and(|d| d.status == Status::Live);
        if !watched_in_view {
            self.workspace.set_current(Some(new));
            self.screen.set_focus(crate::tui::action::Pane::Transcript);
        }
        self.notify(
            format!("a proxied dialogue started: {name}"),
            Severity::Info,
        );
    }

    /// Takes over the dialogue in view at its selected turn (the last when none is).
    pub(super) fn take_over(&mut self, fx: &mut Vec<Effect>) {
        let Some(i) = self.workspace.current() else {
            return;
        };
        let Some(d) = self.workspace.dialogue(i) else {
            return;
        };
        if !matches!(
            d.status,
            Status::Live | Status::Recorded | Status::Unfollowed(_)
        ) || d.transcript.is_empty()
        {
            self.notify(
                "take over continues a watched or recorded dialogue: this one is your own already",
                Severity::Warning,
            );
            return;
        }
        let upto = d.transcript.selected().unwrap_or(d.transcript.len() - 1);
        let requests: Vec<serde_json::Value> = d.transcript.turns()[..=upto]
            .iter()
            .map(|t| t.turn.request_value())
            .collect();
        let recorded: Vec<crate::client::turn::Turn> = d.transcript.turns()[..=upto]
            .iter()
            .map(|t| t.turn.clone())
            .collect();
        let next = d.transcript.turn(upto + 1).map(|t| t.turn.request_value());
        let (server, interface, source, source_key, spoke) = (
            d.server,
            d.interface,
            d.name.clone(),
            d.key,
            d.link.protocol_version().map(str::to_owned),
        );
        // In the MCP generation the recorded dialogue spoke, where the server still speaks it.
        let Some(new) = self.open_dialogue_as(server, interface, spoke, fx) else {
            self.notify(
                "its server is no longer here: nothing to take over on",
                Severity::Warning,
            );
            return;
        };
        // The source's Replay tab shows how the answers differ, turn by turn.
        if let Some(d) = self.workspace.dialogue_mut(i) {
            d.start_replay();
        }
        if let Some(d) = self.workspace.dialogue_mut(new) {
            d.name = format!("{source} · taken over");
            d.runs.take_over(crate::tui::dialogue::TakeOver {
                source: source_key,
                requests: requests.into(),
                recorded,
                next,
                sent: 0,
                differing: 0,
            });
        }
        self.workspace.set_current(Some(new));
        self.notify(
            format!(
                "taking over {source} at turn {upto}: a new MCP session, the recorded Requests sent again and compared"
            ),
            Severity::Info,
        );
    }

    /// The next recorded Request of a take-over, once its dialogue is open and idle; at the
    /// end the composer is the user's.
    pub(super) fn take_over_next(&mut self, index: DialogueId, fx: &mut Vec<Effect>) {
        let now = self.screen.now();
        let Some(d) = self.workspace.dialogue_mut(index) else {
            return;
        };
        if d.runs.takeover().is_none() || d.status != Status::Open || d.link.pending().is_some() {
            return;
        }
        match d.runs.next_recorded() {
            Some(request) => {
                fx.push(Effect::Send {
                    key: d.key,
                    request,
                    filling: Filling::Fresh,
                });
                d.link.turn_sent(now);
            }
            None => {
                let Some(t) = d.runs.end_takeover() else {
                    return;
                };
                let (sent, differing, source, next) = (t.sent, t.differing, t.source, t.next);
                d.transcript.focus = Some(crate::tui::action::Pane::Composer);
                if let Some(s) = self.workspace.dialogue_by_key_mut(source) {
                    s.runs.stop_replay();
                }
                self.screen.set_focus(crate::tui::action::Pane::Composer);
                // The composer holds what the recording asked next, to send or to change.
                if let Some(request) = next {
                    self.with_composer_of(index, |c, ctx| c.load(&request, ctx));
                }
                self.notify(
                    format!(
                        "took over: {sent} recorded Requests sent again, {differing} answered differently (the Replay tab shows how); the composer is yours"
                    ),
                    if differing == 0 { Severity::Success } else { Severity::Warning },
                );
            }
        }
    }

    /// A turn of a take-over came back: compared with the recorded one, shown in the source's
    /// Replay tab, and the next Request goes.
    pub(super) fn take_over_turn(
        &mut self,
        index: DialogueId,
        turn: &crate::client::turn::Turn,
        fx: &mut Vec<Effect>,
    ) {
        let Some((at, differences, source)) = self
            .workspace
            .dialogue_mut(index)
            .and_then(|d| d.runs.taken_over_turn(turn))
        else {
            return;
        };
        if let Some(d) = self.workspace.dialogue_by_key_mut(source) {
            d.replayed(
                at,
                crate::tui::dialogue::ReplayedView {
                    turn: turn.clone(),
                    differences,
                },
            );
        }
        self.take_over_next(index, fx);
    }
}
