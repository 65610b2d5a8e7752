//! What the explorer works on: its servers and their dialogue tabs, in the order shown, the
//! tab in view, and the keys the engine knows dialogues by. A sub-state of `App` with private
//! fields: every lookup is by stable id (`tui::ids`) and returns an `Option`, so an id kept
//! since (a hit of the last frame, a question waiting) names its item or nothing; and the
//! rules that hold between the parts live here once (a dialogue closed moves the view to
//! its neighbour, a server removed takes its dialogues with it, a key is never given twice).

use crate::client::engine::DialogueKey;
use crate::client::spec::ServerSpec;
use crate::protocol::Interface;
use crate::protocol::resources::Vocabulary;
use crate::tui::app::{ServerState, ServerStatus};
use crate::tui::dialogue::DialogueState;
use crate::tui::ids::{DialogueId, ServerId, Table};

pub struct Workspace {
    servers: Table<ServerId, ServerState>,
    dialogues: Table<DialogueId, DialogueState>,
    /// The dialogue tab shown.
    current: Option<DialogueId>,
    /// The tab in view is the one the explorer chose at start and no one has moved since: it
    /// may still move to the first dialogue that connects (`App::settle_view`).
    chosen_at_start: bool,
    /// The key the next dialogue gets (engine dialogues are named by it; never 0).
    next_key: DialogueKey,
    /// Servers found in servers files, that "add server" offers.
    found: Vec<ServerSpec>,
}

impl Default for Workspace {
    fn default() -> Self {
        Workspace {
            servers: Table::default(),
            dialogues: Table::default(),
            current: None,
            chosen_at_start: false,
            next_key: 1,
            found: Vec::new(),
        }
    }
}

impl Workspace {
    /// An empty workspace that offers `found` to add.
    pub fn new(found: Vec<ServerSpec>) -> Workspace {
        Workspace {
            found,
            ..Workspace::default()
        }
    }

    // ---- servers ----

    /// The servers, in the order shown (read-only: changes go through the methods below).
    pub fn servers(&self) -> &Table<ServerId, ServerState> {
        &self.servers
    }

    pub fn server(&self, id: ServerId) -> Option<&ServerState> {
        self.servers.get(id)
    }

    pub fn server_mut(&mut self, id: ServerId) -> Option<&mut ServerState> {
        self.servers.get_mut(id)
    }

    /// Every server, to change each.
    pub fn servers_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut ServerState> + '_ {
        self.servers.values_mut()
    }

    /// The server whose definition is named `name` (the engine speaks of servers by name).
    pub fn server_named_mut(&mut self, name: &str) -> Option<&mut ServerState> {
        self.servers.values_mut().find(|s| s.spec.name == name)
    }

    /// Adds a server, connecting (its first dialogue says how that went), at the end.
    pub fn add_server(&mut self, spec: ServerSpec, interface: Interface) -> ServerId {
        let name = spec.name.clone();
        self.servers.push(ServerState {
            spec,
            name,
            status: ServerStatus::Connecting,
            summary: None,
            vocabulary: Vocabulary::default(),
            interface,
            overrides: Default::default(),
            sign_in: None,
            needs_consent: None,
        })
    }

    /// Takes a server out (its dialogues are the caller's to close first: they have
    /// connections and unsaved turns to account for).
    pub fn remove_server(&mut self, id: ServerId) -> Option<ServerState> {
        self.servers.remove(id)
    }

    /// Servers found in servers files, that "add server" offers.
    pub fn found(&self) -> &[ServerSpec] {
        &self.found
    }

    pub fn set_found(&mut self, found: Vec<ServerSpec>) {
        self.found = found;
    }

    // ---- dialogues ----

    /// The dialogue tabs, in the order shown (read-only).
    pub fn dialogues(&self) -> &Table<DialogueId, DialogueState> {
        &self.dialogues
    }

    pub fn dialogue(&self, id: DialogueId) -> Option<&DialogueState> {
        self.dialogues.get(id)
    }

    pub fn dialogue_mut(&mut self, id: DialogueId) -> Option<&mut DialogueState> {
        self.dialogues.get_mut(id)
    }

    /// Every dialogue, to change each (a signal's drafts, a theme's caches...).
    pub fn dialogues_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut DialogueState> + '_ {
        self.dialogues.values_mut()
    }

    /// The dialogues of a server, in the order shown.
    pub fn dialogues_of(
        &self,
        server: ServerId,
    ) -> impl Iterator<Item = (DialogueId, &DialogueState)> + '_ {
        self.dialogues
            .iter()
            .filter(move |(_, d)| d.server == server)
    }

    /// A dialogue with its server (None when the dialogue is gone; the server may be gone
    /// while the dialogue stays, as a recording).
    pub fn dialogue_with_server_mut(
        &mut self,
        id: DialogueId,
    ) -> Option<(&mut DialogueState, Option<&ServerState>)> {
        let d = self.dialogues.get_mut(id)?;
        let server = self.servers.get(d.server);
        Some((d, server))
    }

    /// A new key for a dialogue (engine dialogues are named by it).
    pub fn new_key(&mut self) -> DialogueKey {
        let key = self.next_key;
        self.next_key += 1;
        key
    }

    /// Adds a dialogue tab at the end (not shown: `show` does that).
    pub fn add_dialogue(&mut self, dialogue: DialogueState) -> DialogueId {
        self.dialogues.push(dialogue)
    }

    /// Takes a dialogue out; the tab that takes its place is shown (the one before it, when
    /// it was the last).
    pub fn remove_dialogue(&mut self, id: DialogueId) -> Option<DialogueState> {
        let position = self.dialogues.position(id)?;
        let d = self.dialogues.remove(id)?;
        self.current = self
            .dialogues
            .id_at(position.min(self.dialogues.len().saturating_sub(1)));
        Some(d)
    }

    /// Every server and dialogue out (a session read replaces them; ids are not given again).
    pub fn clear(&mut self) {
        self.dialogues.clear();
        self.servers.clear();
        self.current = None;
    }

    /// The dialogue the engine knows by `key`.
    pub fn dialogue_of_key(&self, key: DialogueKey) -> Option<DialogueId> {
        self.dialogues.find(|d| d.key == key)
    }

    /// The dialogue the engine knows by `key`, itself.
    pub fn dialogue_by_key(&self, key: DialogueKey) -> Option<&DialogueState> {
        self.dialogues.values().find(|d| d.key == key)
    }

    pub fn dialogue_by_key_mut(&mut self, key: DialogueKey) -> Option<&mut DialogueState> {
        self.dialogues.values_mut().find(|d| d.key == key)
    }

    // ---- the tab in view ----

    /// The dialogue tab shown, if any.
    pub fn current(&self) -> Option<DialogueId> {
        self.current
    }

    /// Shows a dialogue tab (none: no tab in view). An id that names nothing shows nothing.
    /// The view is no longer the one chosen at start.
    pub fn set_current(&mut self, id: Option<DialogueId>) {
        self.current = id.filter(|&i| self.dialogues.contains(i));
        self.chosen_at_start = false;
    }

    /// The tab in view is the explorer's choice at start (until someone moves).
    pub fn set_chosen_at_start(&mut self, chosen: bool) {
        self.chosen_at_start = chosen;
    }

    pub fn chosen_at_start(&self) -> bool {
        self.chosen_at_start
    }

    pub fn current_dialogue(&self) -> Option<&DialogueState> {
        self.current.and_then(|i| self.dialogues.get(i))
    }

    pub fn current_dialogue_mut(&mut self) -> Option<&mut DialogueState> {
        self.current.and_then(|i| self.dialogues.get_mut(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace with a DAC and a USR server, each with a dialogue tab.
    fn two() -> (Workspace, [ServerId; 2], [DialogueId; 2]) {
        let mut w = Workspace::default();
        let mut servers = Vec::new();
        let mut dialogues = Vec::new();
        for interface in [Interface::Dac, Interface::Usr] {
            let s = w.add_server(ServerSpec::embedded(interface), interface);
            let key = w.new_key();
            dialogues.push(w.add_dialogue(DialogueState::new(key, "d".into(), s, interface)));
            servers.push(s);
        }
        (w, [servers[0], servers[1]], [dialogues[0], dialogues[1]])
    }

    #[test]
    fn a_closed_tab_gives_its_place_to_the_next_and_its_id_names_nothing() {
        let (mut w, [dac, _], [first, second]) = two();
        w.set_current(Some(first));
        assert!(w.remove_dialogue(first).is_some());
        assert_eq!(w.current(), Some(second), "the tab after it shows");
        assert!(w.dialogue(first).is_none() && w.dialogue_mut(first).is_none());
        assert_eq!(w.dialogues_of(dac).count(), 0);
        assert!(w.remove_dialogue(first).is_none(), "twice: nothing");
        w.set_current(Some(first));
        assert_eq!(w.current(), None, "a stale id shows nothing");
        assert!(w.remove_dialogue(second).is_some());
        assert_eq!(w.current(), None, "the last one gone: no tab");
    }

    #[test]
    fn keys_and_ids_are_never_given_twice_even_after_clear() {
        let (mut w, [dac, _], [first, _]) = two();
        let key = w.new_key();
        assert_eq!(key, 3, "two dialogues had 1 and 2");
        w.clear();
        assert!(w.server(dac).is_none() && w.dialogue(first).is_none());
        let s = w.add_server(ServerSpec::embedded(Interface::Dac), Interface::Dac);
        assert_ne!(s, dac);
        assert_eq!(w.new_key(), 4);
    }
}
