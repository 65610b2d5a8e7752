//! The common fields of new Requests (MInstance, UEnvironment, SessionID): where each of a
//! dialogue's came from, and the user's overrides, for the dialogue in view or for every
//! dialogue of its server. What the server publishes is the default; an emptied field goes
//! back to it.

use crate::client::defaults::{Chosen, Overrides};
use crate::tui::app::{App, Severity};
use crate::tui::effect::Effect;
use crate::tui::ids::DialogueId;
use crate::tui::overlay::{DefaultsForm, DefaultsScope, Input, Overlay};

impl App {
    /// Opens the form on the dialogue in view: its values now and where they came from, and
    /// what the user set before (for the dialogue, else for its server).
    pub(super) fn open_defaults(&mut self) {
        let Some(i) = self.workspace.current() else {
            let hint = self.no_dialogue_hint();
            self.notify(hint, Severity::Warning);
            return;
        };
        let Some(d) = self.workspace.dialogue(i) else {
            return;
        };
        let Some(server) = self.workspace.server(d.server) else {
            return;
        };
        let chosen = d.defaults.clone().unwrap_or_else(|| {
            let (base, overrides) = self.defaults_of_dialogue(i);
            base.choose(
                server.summary.as_ref().and_then(|s| s.published.as_ref()),
                &overrides,
            )
        });
        let own = &d.overrides;
        let set = |o: &Overrides| {
            [
                o.m_instance.clone(),
                o.u_environment.clone(),
                o.session_id.clone(),
            ]
        };
        let dialogue_set = set(own).iter().any(Option::is_some);
        let typed = if dialogue_set {
            set(own)
        } else {
            set(&server.overrides)
        };
        let now = [
            (
                chosen.values.m_instance.clone(),
                chosen.m_instance.to_string(),
            ),
            (
                chosen.values.u_environment.clone(),
                chosen.u_environment.to_string(),
            ),
            (
                chosen.values.session_id.clone(),
                chosen.session_id.to_string(),
            ),
        ];
        self.overlay = Some(Overlay::Defaults(DefaultsForm {
            inputs: typed.map(|t| Input::new(t.as_deref().unwrap_or_default())),
            now,
            row: 0,
            scope: if dialogue_set || server.overrides == Overrides::default() {
                DefaultsScope::Dialogue
            } else {
                DefaultsScope::Server
            },
            server: server.name.clone(),
        }));
    }

    /// Applies what the form says: to the dialogue in view, or to its server (and so to each
    /// of its dialogues that has no overrides of its own, and to new ones).
    pub(super) fn set_defaults(
        &mut self,
        values: [Option<String>; 3],
        scope: DefaultsScope,
        fx: &mut Vec<Effect>,
    ) {
        let Some(i) = self.workspace.current() else {
            return;
        };
        let Some(server) = self.workspace.dialogue(i).map(|d| d.server) else {
            return;
        };
        let [m_instance, u_environment, session_id] = values;
        let mut overrides = Overrides {
            m_instance,
            u_environment,
            session_id,
            how: String::new(),
        };
        let targets: Vec<DialogueId> = match scope {
            DefaultsScope::Dialogue => {
                overrides.how = "in the explorer, for this dialogue".into();
                if let Some(d) = self.workspace.dialogue_mut(i) {
                    d.overrides = overrides;
                }
                vec![i]
            }
            DefaultsScope::Server => {
                let Some(s) = self.workspace.server_mut(server) else {
                    return;
                };
                overrides.how = format!("in the explorer, for server {}", s.name);
                s.overrides = overrides;
                // The dialogue in view takes them even if it had its own.
                if let Some(d) = self.workspace.dialogue_mut(i) {
                    d.overrides = Overrides::default();
                }
                self.workspace
                    .dialogues()
                    .iter()
                    .filter(|(_, d)| d.server == server && d.overrides == Overrides::default())
                    .map(|(j, _)| j)
                    .collect()
            }
        };
        for j in targets {
            self.apply_defaults(j, fx);
        }
        if let Some(chosen) = self.workspace.dialogue(i).and_then(|d| d.defaults.as_ref()) {
            self.notify(
                format!("new Requests: {}", chosen.describe()),
                Severity::Info,
            );
        }
    }

    /// Works out a dialogue's defaults again, and tells its engine dialogue.
    fn apply_defaults(&mut self, j: DialogueId, fx: &mut Vec<Effect>) {
        let (base, overrides) = self.defaults_of_dialogue(j);
        let Some(d) = self.workspace.dialogue(j) else {
            return;
        };
        let published = self
            .workspace
            .server(d.server)
            .and_then(|s| s.summary.as_ref())
            .and_then(|s| s.published.as_ref());
        let chosen: Chosen = base.choose(published, &overrides);
        if d.is_live() {
            fx.push(Effect::SetDefaults {
                key: d.key,
                defaults: chosen.clone(),
            });
        }
        if let Some(d) = self.workspace.dialogue_mut(j) {
            d.defaults = Some(chosen);
        }
        self.with_composer_of(j, |c, ctx| c.recheck(ctx));
    }
}
