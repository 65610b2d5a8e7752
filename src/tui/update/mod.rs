//! How the explorer answers events: a pure function of the state and the event, which
//! changes the state and returns what the runner is to do (`Effect`s). No I/O, no task, no
//! clock: the time of the event comes with it, and where things were drawn comes from the
//! last frame (`Hits`).

mod actions;
mod asks;
mod defaults;
mod drafts;
mod engine;
mod export;
mod files;
mod hints;
mod keys;
mod mouse;
mod resources;
mod scenario;
mod search;
mod servers;
mod watch;

use crate::tui::app::App;
use crate::tui::effect::Effect;
use crate::tui::event::Event;
use crate::tui::hits::Hits;
use crate::tui::layout;
use ratatui::crossterm::event::{Event as Input, KeyEventKind};
use std::time::Instant;

pub use files::resolve_save_path;
pub use search::raw_matches;

impl App {
    /// Handles one event that happened `at`; `hits` is where the last frame drew things.
    pub fn handle(&mut self, event: Event, at: Instant, hits: &Hits) -> Vec<Effect> {
        self.screen.set_now(at);
        let mut fx = Vec::new();
        let input = matches!(event, Event::Input(_));
        if input {
            self.clamp_detail_scroll(hits);
        }
        // The person acted on what is shown: the view is theirs from now on.
        if matches!(&event, Event::Input(Input::Key(_) | Input::Paste(_)))
            || matches!(&event, Event::Input(Input::Mouse(m)) if m.kind != ratatui::crossterm::event::MouseEventKind::Moved)
        {
            self.workspace.set_chosen_at_start(false);
            // Answering a question (the recovery offered at start) is not moving: the
            // composer is still entered once the dialogue opens.
            if self.overlay.is_none() {
                self.screen.set_edit_once_open(false);
            }
        }
        match event {
            Event::Input(Input::Key(key)) if key.kind != KeyEventKind::Release => {
                self.key(key, hits, &mut fx)
            }
            Event::Input(Input::Mouse(mouse)) => self.mouse(mouse, hits, &mut fx),
            Event::Input(Input::Paste(text)) => self.paste(&text, &mut fx),
            Event::Input(Input::Resize(w, h)) => self.screen.resize(w, h),
            Event::Watch(e) => self.watch_event(e),
            Event::Input(_) => {}
            Event::Tick => {
                self.screen.tick();
                self.notices.expire(self.screen.now());
                self.autosave_drafts(&mut fx);
            }
            Event::DraftsRead { path, result } => self.drafts_read(path, result),
            Event::Engine(e) => self.engine_event(*e, &mut fx),
            Event::Replay(e) => self.replay_event(e),
            Event::Saved {
                path,
                purpose,
                result,
                stamp,
            } => self.saved(path, purpose, result, stamp, &mut fx),
            Event::ChangedOnDisk { path } => self.changed_on_disk(path),
            Event::SaveTarget {
                path,
                exists,
                folder_exists,
                what,
            } => self.save_target(path, exists, folder_exists, what, &mut fx),
            Event::FileWritten { path, what, result } => self.file_written(path, what, result),
            Event::Scenario(e) => self.scenario_event(e, &mut fx),
            Event::SessionRead {
                path,
                purpose,
                result,
                stamp,
            } => {
                let opened = result.is_ok() && purpose == crate::tui::event::OpenPurpose::Open;
                self.session_read(path, purpose, result, &mut fx);
                if opened {
                    self.session.set_stamp(stamp);
                }
            }
            Event::PickerItems(items) => self.picker_items(items),
            Event::Asked(ask) => self.ask_arrived(ask),
            Event::PathCompletions { typed, paths } => self.path_completions(typed, paths, &mut fx),
            Event::ServersFound { servers, problems } => self.servers_found(servers, problems),
            Event::ThemeLoaded { name, result } => self.theme_loaded(name, result, &mut fx),
            Event::CopyWritten { path, result } => self.copy_written(path, result),
            Event::Signal(signal) => self.signal(signal, &mut fx),
            Event::Certify(e) => self.certify_event(e),
        }
        if input {
            self.clear_gone_notice();
        }
        fx
    }

    /// A notice whose cause is gone goes: "not sent: ..." once that composer's Request can
    /// be sent (the JSON fixed, the field filled).
    fn clear_gone_notice(&mut self) {
        use crate::tui::notices::Cause;
        let Some(Cause::UnsendableRequest(key)) = self.notices.shown_cause() else {
            return;
        };
        let fixed = self
            .workspace
            .dialogue_by_key(key)
            .is_none_or(|d| d.composer.content(d.transcript.used_ids()).is_ok());
        if fixed {
            self.notices.clear_shown();
        }
    }

    /// The areas of the screen now (what the next frame will draw).
    pub fn areas(&self) -> layout::Areas {
        layout::areas(self, self.screen.size())
    }

    fn paste(&mut self, text: &str, fx: &mut Vec<Effect>) {
        // Terminals paste lines ended by CR (tmux, many others) or CRLF: lines all the same.
        let text = &normalize_line_ends(text);
        if self.overlay.is_none() && self.certify_shown() {
            self.certify_paste(text);
            return;
        }
        if let Some(overlay) = &mut self.overlay {
            let outcome = overlay.paste(text);
            self.overlay_outcome(outcome, fx);
        } else if self.search_paste(text, fx) {
            // The search's line took it.
        } else if self.screen.focus() == crate::tui::action::Pane::Log && self.log.editing_filter {
            if self.log.filter_input.insert_str(text) {
                let text = self.log.filter_input.text().to_owned();
                self.log.set_filter(text);
            }
        } else if self.screen.focus() == crate::tui::action::Pane::Composer {
            self.with_composer(|c, ctx| c.paste(text, ctx));
        }
    }

    /// Runs `f` on the current dialogue's composer with its context (the server's
    /// vocabulary, the dialogue's commitments and turn).
    pub(crate) fn with_composer<R>(
        &mut self,
        f: impl FnOnce(&mut crate::tui::composer::Composer, &crate::tui::composer::Context) -> R,
    ) -> Option<R> {
        let i = self.workspace.current()?;
        self.with_composer_of(i, f)
    }

    /// The same for the composer of dialogue `i` (None when it is gone).
    pub(crate) fn with_composer_of<R>(
        &mut self,
        i: crate::tui::ids::DialogueId,
        f: impl FnOnce(&mut crate::tui::composer::Composer, &crate::tui::composer::Context) -> R,
    ) -> Option<R> {
        let App {
            workspace, session, ..
        } = self;
        let defaults = session.defaults();
        let (d, server) = workspace.dialogue_with_server_mut(i)?;
        let empty = crate::protocol::resources::Vocabulary::default();
        let vocabulary = server.map_or(&empty, |s| &s.vocabulary);
        let dialog_id = d.link.dialog_id().unwrap_or_default().to_owned();
        let defaults = d
            .defaults
            .as_ref()
            .map_or_else(|| defaults.clone(), |c| c.values.clone());
        let ctx = crate::tui::composer::Context {
            vocabulary,
            commitments: d.transcript.used_ids(),
            dialog_id: &dialog_id,
            next_turn: d.link.next_turn(),
            last_accepted: d.link.last_accepted(),
            defaults: &defaults,
        };
        Some(f(&mut d.composer, &ctx))
    }
}

/// A pasted text's line ends as `\n` (`\r\n` and a lone `\r` are line ends too).
fn normalize_line_ends(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

#[cfg(test)]
mod tests;
