//! The Resources overlay's side of update: opening it on the dialogue in view, what it asks
//! (a list, a read, a copy), what the engine brings back, and the list read again when the
//! server says it changed.

use crate::client::engine::DialogueKey;
use crate::client::resources::{Listed, Read};
use crate::tui::app::{App, Severity};
use crate::tui::dialogue::Status;
use crate::tui::effect::Effect;
use crate::tui::overlay::Overlay;
use crate::tui::resources::{Ask, ResourcesOverlay};

impl App {
    /// F3: the resources of the server of the dialogue in view, read on its connection.
    pub(super) fn open_resources(&mut self, fx: &mut Vec<Effect>) {
        let Some(d) = self.current_dialogue() else {
            let hint = self.no_dialogue_hint();
            self.notify(hint, Severity::Warning);
            return;
        };
        if d.status != Status::Open {
            self.notify(
                "the dialogue in view is not connected: its server's resources are read on its \
                 connection (R reconnects it)",
                Severity::Warning,
            );
            return;
        }
        let (key, server) = (d.key, d.server);
        let name = self
            .workspace
            .server(server)
            .map_or_else(String::new, |s| s.name.clone());
        self.overlay = Some(Overlay::Resources(Box::new(ResourcesOverlay::new(
            key, name,
        ))));
        fx.push(Effect::ListResources { key });
    }

    pub(super) fn resources_ask(&mut self, ask: Ask, fx: &mut Vec<Effect>) {
        match ask {
            Ask::Nothing => {}
            Ask::Close => self.close_overlay(),
            Ask::List(key) => fx.push(Effect::ListResources { key }),
            Ask::Read(key, uri) => fx.push(Effect::ReadResource { key, uri }),
            Ask::Copy(text) => self.clipboard(text, fx),
            Ask::NothingRead => {
                let read = crate::tui::overlay::key_of(
                    &self.config.keymap,
                    &crate::tui::action::Action::Select,
                );
                self.notify(
                    format!("no resource read yet: {read} reads the selected one"),
                    Severity::Warning,
                );
            }
            Ask::Write(text) => {
                // Named after the resource: the last part of its URI.
                let name = match &self.overlay {
                    Some(Overlay::Resources(r)) => match &r.shown {
                        Some(Ok(read)) => {
                            let last = read
                                .uri
                                .rsplit(['/', ':'])
                                .find(|p| !p.is_empty())
                                .unwrap_or("resource");
                            format!("{last}.{}", if read.json { "json" } else { "txt" })
                        }
                        _ => "resource.txt".to_owned(),
                    },
                    _ => "resource.txt".to_owned(),
                };
                self.write_text_prompt(&name, text);
            }
        }
    }

    /// The overlay open on this dialogue, if it is (shown, or under the prompt of its `W`).
    fn resources_of(&mut self, dialogue: DialogueKey) -> Option<&mut ResourcesOverlay> {
        self.overlay
            .iter_mut()
            .chain(self.beneath.iter_mut())
            .find_map(|o| match o {
                Overlay::Resources(r) if r.dialogue == dialogue => Some(r.as_mut()),
                _ => None,
            })
    }

    pub(super) fn resources_listed(
        &mut self,
        dialogue: DialogueKey,
        result: Result<Vec<Listed>, String>,
    ) {
        if let Some(r) = self.resources_of(dialogue) {
            r.listed(result);
        }
    }

    pub(super) fn resource_read(
        &mut self,
        dialogue: DialogueKey,
        uri: String,
        result: Result<Read, String>,
    ) {
        if let Some(r) = self.resources_of(dialogue) {
            r.read(uri, result);
        }
    }

    /// The server of a dialogue said its resources changed: an open overlay on it reads its
    /// list again (the selection stays on its URI).
    pub(super) fn resources_changed(&mut self, dialogue: DialogueKey, fx: &mut Vec<Effect>) {
        if self.resources_of(dialogue).is_some() {
            fx.push(Effect::ListResources { key: dialogue });
            self.notify(
                "the server's resources changed: the list is read again",
                Severity::Info,
            );
        }
    }
}
