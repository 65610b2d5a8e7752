//! Tests in the explorer: the dialogue in view saved as a scenario file (made from what the
//! server answered, `scenario::record`), and a scenario file run on the server in view, each
//! step a turn of a dialogue of its own with its expectations beside the Response.

use crate::client::engine::DialogueKey;
use crate::client::turn::{ErrorKind, Reply, Turn, TurnError};
use crate::protocol::raw::RawJson;
use crate::session::DialogueRecord;
use crate::tui::action::Pane;
use crate::tui::app::{App, DetailTab, Severity};
use crate::tui::dialogue::{DialogueState, Status, StepCheck};
use crate::tui::effect::Effect;
use crate::tui::event::{SaveWhat, ScenarioEvent};
use crate::tui::overlay::{Input, Overlay, Prompt, PromptPurpose};
use std::path::{Path, PathBuf};

/// The folder scenarios go in: `scenarios/` of the working folder when there is one.
fn scenarios_dir(cwd: &Path, exists: bool) -> Option<PathBuf> {
    exists.then(|| cwd.join("scenarios"))
}

impl App {
    /// Where a typed scenario path goes: a bare name in `scenarios/` when there is one, with
    /// `.yaml` when it has no extension; relative paths from the working folder.
    fn scenario_path(&self, typed: &str) -> PathBuf {
        let mut path = PathBuf::from(typed.trim());
        if path.extension().is_none() {
            path.set_extension("yaml");
        }
        if path.components().count() == 1
            && let Some(dir) = scenarios_dir(
                &self.config.paths.cwd,
                self.config.paths.scenarios_dir_exists,
            )
        {
            path = dir.join(path);
        }
        if path.is_relative() {
            path = self.config.paths.cwd.join(path);
        }
        path
    }

    pub(super) fn scenario_note(&self, typed: &str) -> String {
        if typed.trim().is_empty() {
            return "type a name or a path".into();
        }
        format!("→ {}", self.scenario_path(typed).display())
    }

    pub(super) fn save_test_prompt(&mut self) {
        let Some(d) = self.current_dialogue() else {
            self.notify("no dialogue to save as a test", Severity::Warning);
            return;
        };
        if d.transcript.is_empty() {
            self.notify(
                "the dialogue has no turns to make a test of",
                Severity::Warning,
            );
            return;
        }
        let slug: String = d
            .name
            .chars()
            .map(|c| {
                if c.is_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect::<String>()
            .split('-')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let default = format!("{slug}.yaml");
        let note = self.scenario_note(&default);
        self.overlay = Some(Overlay::Prompt(Prompt {
            title: "Save the dialogue as a test (a scenario: what the server answered is what \
                    it expects)"
                .into(),
            input: Input::new(&default),
            purpose: PromptPurpose::SaveTest,
            note,
            secret: false,
            completions: Vec::new(),
            selected: 0,
        }));
    }

    pub(super) fn save_test_to(&mut self, typed: &str, fx: &mut Vec<Effect>) {
        let Some(d) = self.current_dialogue() else {
            return;
        };
        if typed.trim().is_empty() {
            return;
        }
        let key = d.key;
        fx.push(Effect::CheckSaveTarget {
            path: self.scenario_path(typed),
            what: SaveWhat::Scenario(key),
        });
    }

    /// Writes the dialogue `key` as a scenario file.
    pub(super) fn write_scenario(&mut self, path: PathBuf, key: DialogueKey, fx: &mut Vec<Effect>) {
        let Some(d) = self.workspace.dialogue_by_key(key) else {
            self.notify("that dialogue is closed: not saved", Severity::Warning);
            return;
        };
        let server = self.workspace.server(d.server);
        let record = DialogueRecord {
            protocol_version: None,
            ..d.record(server.map(|s| s.spec.name.clone()).unwrap_or_default())
        };
        let source = format!("the explorer's dialogue {}", d.name);
        let text =
            crate::scenario::record::scenario_yaml(&record, server.map(|s| &s.spec), &source);
        fx.push(Effect::WriteFile {
            path,
            text,
            what: "scenario",
        });
    }

    pub(super) fn file_written(&mut self, path: PathBuf, what: &str, result: Result<(), String>) {
        match result {
            Ok(()) => self.notify(
                format!(
                    "wrote the {what} {}; bkn-explorer test runs it",
                    path.display()
                ),
                Severity::Success,
            ),
            Err(e) => self.notify(
                format!("cannot write {}: {e}", path.display()),
                Severity::Error,
            ),
        }
    }

    pub(super) fn run_scenario_prompt(&mut self) {
        if self.server_in_view().is_none() {
            self.notify("no server to run a scenario on", Severity::Warning);
            return;
        }
        let default = if self.config.paths.scenarios_dir_exists {
            "scenarios/"
        } else {
            ""
        };
        self.overlay = Some(Overlay::Prompt(Prompt {
            title: "Run a scenario on the server in view (a path)".into(),
            input: Input::new(default),
            purpose: PromptPurpose::RunScenario,
            note: "its steps become the turns of a dialogue of their own".into(),
            secret: false,
            completions: Vec::new(),
            selected: 0,
        }));
    }

    /// Starts a scenario in a new dialogue on the server in view.
    pub(super) fn run_scenario(&mut self, typed: &str, fx: &mut Vec<Effect>) {
        if typed.trim().is_empty() {
            return;
        }
        let Some((server, interface, spec)) = self
            .server_in_view()
            .and_then(|id| Some((id, self.workspace.server(id)?)))
            .map(|(id, s)| (id, s.interface, s.spec.clone()))
        else {
            return;
        };
        let mut path = PathBuf::from(typed.trim());
        if path.is_relative() {
            path = self.config.paths.cwd.join(path);
        }
        let key = self.workspace.new_key();
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into());
        let mut d = DialogueState::new(key, format!("test {stem}"), server, interface);
        d.runs.run_scenario(path.clone(), stem);
        d.transcript.detail_tab = DetailTab::Expect;
        d.transcript.focus = Some(Pane::Transcript);
        let id = self.workspace.add_dialogue(d);
        self.show_dialogue(id);
        self.screen.set_focus(Pane::Transcript);
        fx.push(Effect::RunScenario { key, path, spec });
    }

    pub(super) fn scenario_event(&mut self, event: ScenarioEvent, fx: &mut Vec<Effect>) {
        match event {
            ScenarioEvent::Loaded { dialogue, result } => self.scenario_loaded(dialogue, result),
            ScenarioEvent::Opened {
                dialogue,
                dialog_id,
            } => {
                if let Some(d) = self.workspace.dialogue_by_key_mut(dialogue) {
                    // The runner owns the session: the dialogue reads as recorded (R goes on
                    // from it in a session of the explorer's own).
                    d.status = Status::Recorded;
                    d.link.named(dialog_id);
                }
            }
            ScenarioEvent::Step {
                dialogue,
                step,
                expectations,
            } => self.scenario_step(dialogue, &step, expectations, fx),
            ScenarioEvent::Done { dialogue, error } => self.scenario_done(dialogue, error),
        }
    }

    /// The scenario file was read (its name and steps shown), or could not be (every
    /// mistake in the messages).
    fn scenario_loaded(
        &mut self,
        dialogue: DialogueKey,
        result: Result<crate::tui::event::ScenarioInfo, String>,
    ) {
        let Some(d) = self.workspace.dialogue_by_key_mut(dialogue) else {
            return;
        };
        match result {
            Ok(info) => {
                d.name = format!("test: {}", info.name);
                d.runs.scenario_read(info.name, info.steps);
            }
            Err(e) => {
                d.status = Status::Failed(e.lines().next().unwrap_or_default().to_owned());
                d.runs.scenario_ended(Some(e.clone()));
                // Every mistake is in the messages (M).
                for line in e.lines() {
                    self.notify(line.to_owned(), Severity::Error);
                }
            }
        }
    }

    /// A step ran (or did not): its turn joins the transcript with its verdict, the window
    /// follows it, and it counts as an unsaved turn.
    fn scenario_step(
        &mut self,
        dialogue: DialogueKey,
        step: &crate::scenario::run::StepRun,
        expectations: Vec<String>,
        fx: &mut Vec<Effect>,
    ) {
        let passed = step.passed();
        let turn = step
            .turn
            .clone()
            .unwrap_or_else(|| not_run_turn(&step.not_run));
        let check = StepCheck {
            step: step.name.clone(),
            expectations,
            failures: step.failures.clone(),
            attempts: step.attempts,
            not_run: step.not_run.clone(),
        };
        let page = self.areas().transcript_rows();
        let Some(d) = self.workspace.dialogue_by_key_mut(dialogue) else {
            return;
        };
        d.push(turn);
        d.transcript.set_expect(d.transcript.len() - 1, check);
        if let Some(t) = d.transcript.last().and_then(|t| t.summary.turn_index) {
            d.link.saw_turn_index(t);
        }
        d.transcript.follow_last(page);
        d.runs.scenario_step(passed);
        d.unsaved += 1;
        self.session.turn_taken();
        self.autosave(fx);
    }

    /// The scenario ended: how it went, in a notice (and in how many steps, if it stopped
    /// before the last).
    fn scenario_done(&mut self, dialogue: DialogueKey, error: Option<String>) {
        let Some(d) = self.workspace.dialogue_by_key_mut(dialogue) else {
            return;
        };
        let Some(s) = d.runs.scenario_ended(error.clone()) else {
            return;
        };
        let (name, passed, failed, total) = (s.name.clone(), s.passed, s.failed, s.steps);
        if let Some(e) = &error {
            d.status = Status::Failed(e.clone());
        }
        match error {
            Some(e) => self.notify(format!("test {name}: {e}"), Severity::Error),
            None if failed == 0 => self.notify(
                format!("test {name}: all {total} steps passed"),
                Severity::Success,
            ),
            None => self.notify(
                format!(
                    "test {name}: {failed} of {total} step{} failed (✗ in the transcript; the Expect tab says why)",
                    if total == 1 { "" } else { "s" },
                ),
                Severity::Warning,
            ),
        }
        if passed + failed < total {
            self.notify(
                format!(
                    "test {name}: stopped after {} of {total} steps",
                    passed + failed
                ),
                Severity::Warning,
            );
        }
    }
}

/// The turn shown for a step that did not run.
fn not_run_turn(why: &Option<String>) -> Turn {
    Turn {
        request: RawJson::from_value(&serde_json::Value::Object(Default::default())),
        reply: Reply::Error(TurnError {
            kind: ErrorKind::NotSent,
            message: format!(
                "not run: {}",
                why.as_deref().unwrap_or("the scenario stopped")
            ),
        }),
        findings: Vec::new(),
        sent: crate::protocol::message::now_rfc3339(),
        received: None,
        latency_ms: 0.0,
        new_session: false,
        asked: Vec::new(),
    }
}
