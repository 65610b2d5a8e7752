//! Adding and removing servers while the explorer runs, and the inputs (`${input:ID}`) a
//! server's definition asks for.

use crate::client::spec::vars::InputRequest;
use crate::client::spec::{ServerSpec, TransportSpec};
use crate::protocol::Interface;
use crate::tui::action::Pane;
use crate::tui::app::{App, Severity};
use crate::tui::dialogue::Status;
use crate::tui::effect::Effect;
use crate::tui::ids::ServerId;
use crate::tui::overlay::{Confirm, ConfirmPurpose, Input, Overlay, Prompt, PromptPurpose};

impl App {
    /// The servers found in servers files that are not added yet.
    pub(super) fn found_not_added(&self) -> Vec<&ServerSpec> {
        self.workspace
            .found()
            .iter()
            .filter(|f| {
                !self
                    .workspace
                    .servers()
                    .values()
                    .any(|s| s.spec.name == f.name && s.spec.transport == f.transport)
            })
            .collect()
    }

    /// "a command line, a URL or a name", with the names found and their files.
    fn add_server_note(&self) -> String {
        let found = self.found_not_added();
        let mut note = String::from("a command line (my-server --flag), a URL (http://host/mcp)");
        if found.is_empty() {
            note.push_str("; no other server in .mcp.json, .vscode/mcp.json, .cursor/mcp.json or servers.json");
            return note;
        }
        note.push_str(", or a name found:");
        for f in found.iter().take(6) {
            let file = f
                .origin
                .as_ref()
                .and_then(|o| o.file.file_name().map(|_| o.file.display().to_string()))
                .unwrap_or_default();
            note.push_str(&format!("\n  {} · {} · {}", f.name, f.location(), file));
        }
        if found.len() > 6 {
            note.push_str(&format!(
                "\n  … and {} more (Ctrl-P lists them)",
                found.len() - 6
            ));
        }
        note
    }

    pub(super) fn ask_server_to_add(&mut self, fx: &mut Vec<Effect>) {
        // The files may have changed since the start: read them again.
        fx.push(Effect::FindServers);
        self.overlay = Some(Overlay::Prompt(Prompt {
            title: "Add a server".into(),
            input: Input::new(""),
            purpose: PromptPurpose::AddServer,
            note: self.add_server_note(),
            secret: false,
            completions: Vec::new(),
            selected: 0,
        }));
    }

    /// The servers files were read again.
    pub(super) fn servers_found(&mut self, found: Vec<ServerSpec>, problems: Vec<String>) {
        self.workspace.set_found(found);
        for p in problems {
            self.notify(p, Severity::Warning);
        }
        let note = self.add_server_note();
        if let Some(Overlay::Prompt(p)) = &mut self.overlay
            && p.purpose == PromptPurpose::AddServer
        {
            p.note = note;
        }
    }

    /// What was typed in "Add a server": a name found, a URL, or a command line.
    pub(super) fn add_typed_server(&mut self, text: &str, fx: &mut Vec<Effect>) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let spec = if let Some(found) = self.found_not_added().into_iter().find(|f| f.name == text)
        {
            Ok(found.clone())
        } else if text.starts_with("http://") || text.starts_with("https://") {
            ServerSpec::from_url(text)
        } else {
            ServerSpec::from_command_line(text)
        };
        match spec {
            Ok(spec) => self.add_and_open(spec, fx),
            Err(e) => self.notify(e, Severity::Error),
        }
    }

    pub(super) fn add_found_server(&mut self, name: &str, fx: &mut Vec<Effect>) {
        match self
            .workspace
            .found()
            .iter()
            .find(|f| f.name == name)
            .cloned()
        {
            Some(spec) => self.add_and_open(spec, fx),
            None => self.notify(format!("no server {name} found"), Severity::Warning),
        }
    }

    fn add_and_open(&mut self, mut spec: ServerSpec, fx: &mut Vec<Effect>) {
        // A name like one in use gets a number, as on the command line.
        let base = spec.name.clone();
        let mut n = 2;
        while self
            .workspace
            .servers()
            .values()
            .any(|s| s.spec.name == spec.name)
        {
            spec.name = format!("{base}-{n}");
            n += 1;
        }
        let interface = match &spec.transport {
            TransportSpec::Embedded { interface, .. } => *interface,
            _ => Interface::Dac,
        };
        let name = spec.name.clone();
        let location = spec.location();
        let server = self.add_server(spec, interface);
        // It is shown.
        self.open_dialogue(server, interface, fx);
        self.screen.set_focus(Pane::Composer);
        self.notify(format!("added {name} ({location})"), Severity::Info);
    }

    /// Remove the server in view: at once when none of its dialogues has turns, else after
    /// asking.
    pub(super) fn ask_to_remove_server(&mut self, fx: &mut Vec<Effect>) {
        let Some(server) = self.server_in_view() else {
            self.notify("no server to remove", Severity::Warning);
            return;
        };
        let turns: usize = self
            .workspace
            .dialogues()
            .values()
            .filter(|d| d.server == server)
            .map(|d| d.transcript.len())
            .sum();
        if turns == 0 {
            self.remove_server(server, fx);
            return;
        }
        let Some(name) = self.workspace.server(server).map(|s| s.name.clone()) else {
            return;
        };
        self.overlay = Some(Overlay::Confirm(Confirm {
            title: format!("Remove {name}"),
            message: format!(
                "Its dialogues have {turns} turn{}; once removed they are in no later save. \
                 Remove it? y removes, n keeps it",
                if turns == 1 { "" } else { "s" }
            ),
            purpose: ConfirmPurpose::RemoveServer(server),
        }));
    }

    pub(super) fn remove_server(&mut self, server: ServerId, fx: &mut Vec<Effect>) {
        let keys: Vec<_> = self
            .workspace
            .dialogues()
            .values()
            .filter(|d| d.server == server)
            .map(|d| d.key)
            .collect();
        for key in keys {
            self.close_dialogue(key, fx);
        }
        let Some(s) = self.workspace.remove_server(server) else {
            return;
        };
        let name = s.name;
        self.sidebar.clamp(&self.workspace);
        self.notify(format!("removed {name}"), Severity::Info);
    }

    /// A server's definition needs `${input:ID}`: ask for it.
    pub(super) fn ask_input(&mut self, server: ServerId, request: InputRequest) {
        let Some(name) = self.workspace.server(server).map(|s| s.name.clone()) else {
            return;
        };
        self.overlay = Some(Overlay::Prompt(Prompt {
            title: format!(
                "{name} needs ${{input:{}}}{}",
                request.id,
                request
                    .description
                    .as_ref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            ),
            input: Input::new(""),
            purpose: PromptPurpose::ServerInput(server, request.id.clone()),
            note: format!(
                "kept for this run only (never saved); headless commands read {}",
                request.variable()
            ),
            secret: request.password,
            completions: Vec::new(),
            selected: 0,
        }));
    }

    /// The input was given: the failed dialogue is opened again.
    pub(super) fn input_given(
        &mut self,
        server: ServerId,
        id: String,
        value: String,
        fx: &mut Vec<Effect>,
    ) {
        let Some(s) = self.workspace.server_mut(server) else {
            return;
        };
        s.spec.answers.insert(id, value);
        let interface = s.interface;
        let failed: Vec<_> = self
            .workspace
            .dialogues()
            .values()
            .filter(|d| {
                d.server == server
                    && d.transcript.is_empty()
                    && matches!(d.status, Status::Failed(_))
            })
            .map(|d| d.key)
            .collect();
        for key in failed {
            self.close_dialogue(key, fx);
        }
        // It is shown.
        self.open_dialogue(server, interface, fx);
    }
}
