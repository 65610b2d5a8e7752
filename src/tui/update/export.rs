//! The Export overlay's side of update: the turn selected (else the draft) of the dialogue in
//! view, made into command lines for its server; a copy or a file of the one chosen.

use crate::client::spec::TransportSpec;
use crate::tui::app::{App, Severity};
use crate::tui::effect::Effect;
use crate::tui::export::lines::{Turn, blocks};
use crate::tui::export::{Ask, ExportOverlay};
use crate::tui::overlay::Overlay;

impl App {
    /// `e`: the selected turn's Request (or, with no turn selected, the draft) as
    /// `bkn-explorer send` and `curl` lines.
    pub(super) fn open_export(&mut self) {
        let Some(d) = self.current_dialogue() else {
            let hint = self.no_dialogue_hint();
            self.notify(hint, Severity::Warning);
            return;
        };
        let draft = d.transcript.selection().is_none();
        let (request, what) = match &d.transcript.selection() {
            Some(s) => (
                s.request.clone(),
                match s
                    .request
                    .get("TurnIndex")
                    .and_then(serde_json::Value::as_u64)
                {
                    Some(n) => format!("turn {n}"),
                    None => "the turn".to_owned(),
                },
            ),
            None => match d.composer.content(d.transcript.used_ids()) {
                Ok(map) => (serde_json::Value::Object(map), "the draft".to_owned()),
                Err(e) => {
                    self.notify(
                        format!("nothing to export: the draft {e}"),
                        Severity::Warning,
                    );
                    return;
                }
            },
        };
        let Some(server) = self.workspace.server(d.server) else {
            return;
        };
        let tool = d
            .link
            .tool()
            .map(str::to_owned)
            .unwrap_or_else(|| d.interface.tool_name().to_owned());
        let protocol = server.summary.as_ref().map(|s| s.protocol_version.clone());
        let token =
            self.config.token.is_some() && matches!(server.spec.transport, TransportSpec::Http(_));
        let blocks = blocks(&Turn {
            spec: &server.spec,
            protocol: protocol.as_deref().filter(|p| !p.is_empty()),
            tool: &tool,
            request: &request,
            token,
            draft,
        });
        self.overlay = Some(Overlay::Export(Box::new(ExportOverlay::new(what, blocks))));
    }

    pub(super) fn export_ask(&mut self, ask: Ask, fx: &mut Vec<Effect>) {
        match ask {
            Ask::Nothing => {}
            Ask::Close => self.close_overlay(),
            Ask::Copy(text) => self.clipboard(text, fx),
            // Shell lines: a file to run with sh, ending as a text file does (a last line
            // without its newline is lost by `read` loops and glued to the next `cat`).
            Ask::Write(mut text) => {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                self.write_text_prompt("export.sh", text)
            }
        }
    }
}
