//! *Certify this server* in the explorer: the pane of a `certify` run (docs/certify.md) on
//! the server in view, as one module with its state, its keys, its mouse, its paste and its
//! drawing (`view`).
//!
//! The run is the runner's (`Effect::Certify`: a task, cancelled by its token); it tells how
//! it goes as `Event::Certify` (the server learnt, each rule started and finished, the
//! report), and the pane shows a progress bar (rules done / total, the rule in progress),
//! then every rule with its id, section, verdict (a mark and a word, coloured by the theme)
//! and summary, the selected rule's problems and evidence below. Enter on a rule whose
//! evidence holds BKN turns opens them as recorded dialogues of the server (read-only, as
//! an opened session's: `r` replays one); the report is saved as JSON or Markdown from the
//! pane (asking before it writes over a file). Every key is in the key table's `certify`
//! place, so keys.toml rebinds them.

pub mod view;

use crate::certify::{Evidence, Report, Rule, RuleResult, Verdict};
use crate::client::defaults::Overrides;
use crate::client::spec::ServerSpec;
use crate::protocol::Interface;
use crate::tui::action::{Action, Context, Handled, Pane};
use crate::tui::app::{App, Severity};
use crate::tui::dialogue::Status;
use crate::tui::effect::Effect;
use crate::tui::hits::Hits;
use crate::tui::ids::ServerId;
use crate::tui::overlay::Input;
use ratatui::crossterm::event::{KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;
use std::path::PathBuf;
use std::time::Duration;

/// The longest one rule may take in the explorer before it fails (as `--rule-timeout`'s
/// default): a server that hangs never hangs the pane.
pub const RULE_TIMEOUT: Duration = Duration::from_secs(60);

/// What update asks of the runner. (Moved once to the runner, as `Effect` is: the size of
/// `Start` does not matter.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum CertifyEffect {
    /// Certify `spec`'s `interface` (run `run`); `Learnt`, `Started`, `Finished` and `Done`
    /// follow.
    Start {
        run: u64,
        spec: ServerSpec,
        interface: Interface,
        overrides: Overrides,
    },
    /// Stop run `run` (the rule under way is left; `Done` follows with what ran).
    Stop { run: u64 },
    /// Write a report (atomically); unless `overwrite`, only when there is no such file yet
    /// (else `Exists`). `Written` follows.
    Write {
        path: PathBuf,
        text: String,
        overwrite: bool,
    },
}

/// What the runner reports.
#[derive(Debug)]
pub enum CertifyEvent {
    Learnt {
        run: u64,
        total: usize,
        learnt: Vec<String>,
    },
    Started {
        run: u64,
        index: usize,
        rule: &'static Rule,
    },
    Finished {
        run: u64,
        index: usize,
        result: Box<RuleResult>,
    },
    /// The run ended: its report, or why none could be made (the server cannot be reached,
    /// serves no tool of the interface).
    Done {
        run: u64,
        result: Result<Box<Report>, String>,
    },
    /// A report was not written: the file is there.
    Exists { path: PathBuf },
    Written {
        path: PathBuf,
        result: Result<(), String>,
    },
}

/// Where a run stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Connecting and learning what the server publishes.
    Learning,
    Running,
    /// Esc was pressed; the runner stops after the rule under way.
    Cancelling,
    Done,
    /// Stopped by the user: the rules that ran are shown.
    Cancelled,
    /// No report: why.
    Unreachable(String),
}

/// The report's forms the pane saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Json,
    Markdown,
}

impl ReportFormat {
    pub fn name(self) -> &'static str {
        match self {
            ReportFormat::Json => "JSON",
            ReportFormat::Markdown => "Markdown",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            ReportFormat::Json => "json",
            ReportFormat::Markdown => "md",
        }
    }

    fn text(self, report: &Report) -> String {
        match self {
            ReportFormat::Json => format!(
                "{}\n",
                serde_json::to_string_pretty(&crate::certify::report::json(report))
                    .unwrap_or_default()
            ),
            ReportFormat::Markdown => crate::certify::report::markdown(report),
        }
    }
}

/// The path being typed to save the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Saving {
    pub format: ReportFormat,
    pub input: Input,
    /// The file is there: Enter again writes over it.
    pub exists: Option<PathBuf>,
}

/// A certify run and its pane.
#[derive(Clone, Debug)]
pub struct CertifyPane {
    pub run: u64,
    /// The server certified: evidence opens on it while it is there.
    pub server: ServerId,
    pub server_name: String,
    /// Its definition as certified (the report names it, after the server is removed too).
    pub spec: ServerSpec,
    pub interface: Interface,
    pub phase: Phase,
    pub total: Option<usize>,
    pub learnt: Vec<String>,
    /// The rule under way (its index, and it).
    pub current: Option<(usize, &'static Rule)>,
    pub results: Vec<RuleResult>,
    pub report: Option<Box<Report>>,
    /// Only the rules of this verdict (None: every rule).
    pub filter: Option<Verdict>,
    /// The selected row (an index into `rows()`).
    pub selected: usize,
    /// Shown over the screen; hidden, the run goes on (`V` shows it again).
    pub shown: bool,
    pub saving: Option<Saving>,
    /// The last thing said in the pane (saved, nothing to open ...).
    pub note: Option<(String, Severity)>,
}

impl CertifyPane {
    pub fn running(&self) -> bool {
        matches!(
            self.phase,
            Phase::Learning | Phase::Running | Phase::Cancelling
        )
    }

    /// The results shown, as indices into `results`.
    pub fn rows(&self) -> Vec<usize> {
        self.results
            .iter()
            .enumerate()
            .filter(|(_, r)| self.filter.is_none_or(|v| r.verdict == v))
            .map(|(i, _)| i)
            .collect()
    }

    pub fn selected_result(&self) -> Option<&RuleResult> {
        self.rows()
            .get(self.selected)
            .and_then(|i| self.results.get(*i))
    }

    pub fn count(&self, verdict: Verdict) -> usize {
        self.results.iter().filter(|r| r.verdict == verdict).count()
    }

    fn move_by(&mut self, delta: isize) {
        let n = self.rows().len();
        if n == 0 {
            self.selected = 0;
            return;
        }
        let to = (self.selected as isize + delta).clamp(0, n as isize - 1);
        self.selected = to as usize;
    }

    fn set_filter(&mut self, filter: Option<Verdict>) {
        // The selected rule stays selected when the new filter shows it.
        let rule = self.selected_result().map(|r| r.rule.name);
        self.filter = filter;
        let rows = self.rows();
        self.selected = rule
            .and_then(|name| rows.iter().position(|i| self.results[*i].rule.name == name))
            .unwrap_or(0);
    }

    /// The report as it stands: the run's own once done, else what ran so far.
    fn report_so_far(&self, spec: &ServerSpec) -> Report {
        match &self.report {
            // Named as the explorer shows the server (the name it gave), not by its command.
            Some(r) => Report {
                server: self.server_name.clone(),
                ..(**r).clone()
            },
            None => Report {
                server: self.server_name.clone(),
                interface: self.interface,
                protocol: String::new(),
                learnt: self.learnt.clone(),
                rules: self.results.clone(),
                seconds: self.results.iter().map(|r| r.seconds).sum(),
                spec: spec.clone(),
            },
        }
    }
}

/// The next filter: every rule, then failed, passed, skipped.
fn next_filter(filter: Option<Verdict>) -> Option<Verdict> {
    match filter {
        None => Some(Verdict::Fail),
        Some(Verdict::Fail) => Some(Verdict::Pass),
        Some(Verdict::Pass) => Some(Verdict::Skip),
        Some(Verdict::Skip) => None,
    }
}

/// How many rows a page moves.
const PAGE: isize = 10;

impl App {
    /// Whether the certify pane is shown (it takes keys and the mouse before the panes, after
    /// an overlay).
    pub fn certify_shown(&self) -> bool {
        self.certify.as_ref().is_some_and(|c| c.shown)
    }

    /// *Certify this server*: shows the run of the server in view when there is one, else
    /// starts one on it (the interface of the dialogue in view).
    pub(crate) fn certify_this_server(&mut self, fx: &mut Vec<Effect>) {
        let Some(server) = self.server_in_view() else {
            self.notify("no server to certify: add one first (a)", Severity::Warning);
            return;
        };
        if let Some(c) = &mut self.certify
            && c.server == server
            && (!c.shown || c.running())
        {
            c.shown = true;
            return;
        }
        self.certify_start(server, fx);
    }

    fn certify_start(&mut self, server: ServerId, fx: &mut Vec<Effect>) {
        if let Some(c) = &self.certify
            && c.running()
        {
            fx.push(Effect::Certify(CertifyEffect::Stop { run: c.run }));
        }
        let Some(state) = self.workspace.server(server) else {
            return;
        };
        let interface = match self.current_dialogue() {
            Some(d) if d.server == server => d.interface,
            _ => state.interface,
        };
        let run = self.certify.as_ref().map_or(1, |c| c.run + 1);
        let (_, overrides) = self.defaults_for(server);
        fx.push(Effect::Certify(CertifyEffect::Start {
            run,
            spec: state.spec.clone(),
            interface,
            overrides,
        }));
        self.certify = Some(CertifyPane {
            run,
            server,
            server_name: state.name.clone(),
            spec: state.spec.clone(),
            interface,
            phase: Phase::Learning,
            total: None,
            learnt: Vec::new(),
            current: None,
            results: Vec::new(),
            report: None,
            filter: None,
            selected: 0,
            shown: true,
            saving: None,
            note: None,
        });
    }

    /// What the runner reports; events of an older run are dropped.
    pub(crate) fn certify_event(&mut self, event: CertifyEvent) {
        let Some(c) = &mut self.certify else { return };
        let id = c.run;
        match event {
            CertifyEvent::Learnt { run, total, learnt } if run == id => {
                c.total = Some(total);
                c.learnt = learnt;
                if c.phase == Phase::Learning {
                    c.phase = Phase::Running;
                }
            }
            CertifyEvent::Started { run, index, rule } if run == id => {
                c.current = Some((index, rule));
            }
            CertifyEvent::Finished { run, result, .. } if run == id => {
                c.current = None;
                c.results.push(*result);
            }
            CertifyEvent::Done { run, result } if run == id => {
                c.current = None;
                let cancelled = c.phase == Phase::Cancelling;
                match result {
                    Ok(report) => {
                        c.results = report.rules.clone();
                        c.report = Some(report);
                        c.phase = if cancelled {
                            Phase::Cancelled
                        } else {
                            Phase::Done
                        };
                        let (name, failed) = (c.server_name.clone(), c.count(Verdict::Fail));
                        let shown = c.shown;
                        let text = format!(
                            "certify {name}: {} passed, {failed} failed, {} skipped{}",
                            c.count(Verdict::Pass),
                            c.count(Verdict::Skip),
                            if cancelled { " (stopped)" } else { "" }
                        );
                        if !shown {
                            let severity = if failed > 0 {
                                Severity::Warning
                            } else {
                                Severity::Success
                            };
                            self.notify(text, severity);
                        }
                    }
                    Err(why) => {
                        c.phase = Phase::Unreachable(why.clone());
                        if !c.shown {
                            self.notify(format!("certify: {why}"), Severity::Error);
                        }
                    }
                }
            }
            CertifyEvent::Exists { path } => {
                if let Some(s) = &mut c.saving {
                    s.exists = Some(path);
                }
            }
            CertifyEvent::Written { path, result } => {
                c.saving = None;
                let (text, severity) = match result {
                    Ok(()) => (
                        format!("saved the report to {}", path.display()),
                        Severity::Success,
                    ),
                    Err(e) => (
                        format!("cannot write {}: {e}", path.display()),
                        Severity::Error,
                    ),
                };
                c.note = Some((text.clone(), severity));
                self.notify(text, severity);
            }
            _ => {}
        }
    }

    /// A key while the pane is shown (and no overlay is open over it).
    pub(crate) fn certify_key(&mut self, key: KeyEvent, fx: &mut Vec<Effect>) -> Handled {
        let Some(c) = &mut self.certify else {
            return Handled::Ignored;
        };
        // The line where the report's path is typed: typing first (a letter is text there),
        // then the pane's cancel and select (keys.toml's).
        if let Some(s) = &mut c.saving {
            if let Some(changed) = s.input.key(&key, self.config.keymap.edit(&key).as_ref()) {
                if changed {
                    s.exists = None;
                }
                return Handled::Consumed;
            }
            match self.config.keymap.action_in(&key, Context::Certify) {
                Some(Action::Cancel) => c.saving = None,
                Some(Action::Select) => {
                    let format = s.format;
                    let path = report_path(s.input.text(), format, &self.config.paths.cwd);
                    let overwrite = s.exists.as_ref() == Some(&path);
                    let text = format.text(&c.report_so_far(&c.spec));
                    fx.push(Effect::Certify(CertifyEffect::Write {
                        path,
                        text,
                        overwrite,
                    }));
                    if overwrite {
                        c.saving = None;
                    }
                }
                _ => {}
            }
            return Handled::Consumed;
        }
        let Some(action) = self.config.keymap.action_in(&key, Context::Certify) else {
            return Handled::Ignored;
        };
        self.certify_act(action, fx);
        Handled::Consumed
    }

    /// What the pane's actions do (by key, or from the palette: then the pane shows).
    pub(crate) fn certify_act(&mut self, action: Action, fx: &mut Vec<Effect>) {
        // The pane's own key for stopping a run, named in its note (keys.toml may move it).
        let stop_key = self
            .config
            .keymap
            .keys_in(&Action::Cancel, Context::Certify);
        let Some(c) = &mut self.certify else {
            self.notify(
                format!(
                    "no certify run yet: {} certifies the server in view",
                    self.config.keymap.first_key(&Action::Certify)
                ),
                Severity::Info,
            );
            return;
        };
        c.shown = true;
        match action {
            Action::Up => c.move_by(-1),
            Action::Down => c.move_by(1),
            Action::PageUp => c.move_by(-PAGE),
            Action::PageDown => c.move_by(PAGE),
            Action::Top => c.selected = 0,
            Action::Bottom => c.move_by(isize::MAX / 2),
            Action::CertifyFilter => c.set_filter(next_filter(c.filter)),
            Action::Cancel if c.phase == Phase::Learning || c.phase == Phase::Running => {
                c.phase = Phase::Cancelling;
                fx.push(Effect::Certify(CertifyEffect::Stop { run: c.run }));
            }
            Action::Cancel | Action::CertifyHide => c.shown = false,
            Action::CertifyAgain if c.running() => {
                c.note = Some((
                    format!("the rules are still running ({stop_key} stops them)"),
                    Severity::Info,
                ));
            }
            Action::CertifyAgain => {
                let server = c.server;
                self.certify_start(server, fx);
            }
            Action::CertifySaveJson | Action::CertifySaveMarkdown => {
                let format = if action == Action::CertifySaveJson {
                    ReportFormat::Json
                } else {
                    ReportFormat::Markdown
                };
                let name = format!(
                    "certify-{}.{}",
                    file_safe(&c.server_name),
                    format.extension()
                );
                c.saving = Some(Saving {
                    format,
                    input: Input::new(&name),
                    exists: None,
                });
            }
            Action::Select => self.certify_open_evidence(),
            _ => {}
        }
    }

    /// Opens the selected rule's evidence: each of its dialogues a recorded dialogue of the
    /// server, shown as an opened session's (read-only; `r` replays it).
    pub(crate) fn certify_open_evidence(&mut self) {
        let Some(c) = &mut self.certify else { return };
        let Some(result) = c.selected_result().cloned() else {
            return;
        };
        let turns = result
            .evidence
            .iter()
            .filter(|e| matches!(e, Evidence::Turn { .. }))
            .count();
        if turns == 0 {
            let why = if result.evidence.is_empty() {
                format!("{} has no evidence to open", result.rule.name)
            } else {
                format!(
                    "{}'s evidence went over the wire outside any dialogue: it is shown below",
                    result.rule.name
                )
            };
            c.note = Some((why, Severity::Info));
            return;
        }
        let server = c.server;
        let mut one = c.report_so_far(&c.spec);
        if !self.workspace.servers().contains(server) {
            c.note = Some((
                "its server was removed: its evidence has no server to open on".into(),
                Severity::Warning,
            ));
            return;
        }
        if one.protocol.is_empty()
            && let Some(Evidence::Turn { protocol, .. }) = result.evidence.first()
        {
            one.protocol = protocol.clone();
        }
        one.rules = vec![result];
        let session = crate::certify::report::session(&one);
        let mut first = None;
        let mut opened = 0;
        for record in session.dialogues {
            let name = record.name.clone().unwrap_or_default();
            // Opened before: shown again, not twice.
            let index = match self.workspace.dialogues().find(|d| {
                d.server == server
                    && d.status == Status::Recorded
                    && d.name == name
                    && d.link.dialog_id() == Some(record.dialog_id.as_str())
            }) {
                Some(i) => i,
                None => {
                    opened += 1;
                    self.add_recorded_dialogue(server, record, &name)
                }
            };
            first.get_or_insert(index);
        }
        if let Some(i) = first {
            if let Some(c) = &mut self.certify {
                c.shown = false;
            }
            self.sidebar.expand(server);
            self.show_dialogue(i);
            self.screen.set_focus(Pane::Transcript);
            let name = self
                .workspace
                .dialogue(i)
                .map(|d| d.name.clone())
                .unwrap_or_default();
            self.notify(
                format!(
                    "evidence {name} ({opened} new; r replays, {} the rules)",
                    self.config.keymap.first_key(&Action::Certify)
                ),
                Severity::Info,
            );
        }
    }

    /// The mouse while the pane is shown: a click selects a row (on the selected row: opens
    /// its evidence), the wheel moves, a click outside hides the pane.
    pub(crate) fn certify_mouse(&mut self, mouse: MouseEvent, hits: &Hits, fx: &mut Vec<Effect>) {
        let at = Position::new(mouse.column, mouse.row);
        match mouse.kind {
            MouseEventKind::ScrollUp => self.certify_act(Action::Up, fx),
            MouseEventKind::ScrollDown => self.certify_act(Action::Down, fx),
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(row) = Hits::find(&hits.overlay_rows, at) {
                    let Some(c) = &mut self.certify else { return };
                    if c.selected == row {
                        self.certify_open_evidence();
                    } else {
                        c.selected = row;
                    }
                } else if !hits.overlay.is_some_and(|r| r.contains(at))
                    && let Some(c) = &mut self.certify
                {
                    c.shown = false;
                }
            }
            _ => {}
        }
    }

    /// Pasted text goes into the path being typed; the pane has nothing else to type into.
    pub(crate) fn certify_paste(&mut self, text: &str) {
        if let Some(s) = self.certify.as_mut().and_then(|c| c.saving.as_mut()) {
            s.input
                .insert_str(text.lines().next().unwrap_or_default().trim());
            s.exists = None;
        }
    }
}

/// A report's path: `~/` is the home folder, a relative path is in the working folder, and
/// a path without an extension gets the format's.
pub fn report_path(typed: &str, format: ReportFormat, cwd: &std::path::Path) -> PathBuf {
    let typed = typed.trim();
    let mut path = crate::settings::expand_home(std::path::Path::new(typed));
    if path.extension().is_none() {
        path.set_extension(format.extension());
    }
    if path.is_relative() {
        path = cwd.join(path);
    }
    path
}

/// A server's name as part of a file name.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
