//! The composer: a Request written as a form (the fields of `fields`, those the chosen Kind
//! uses) or as raw JSON, the two kept in step; checked as it is typed, with completions from
//! the server's resources and the Process Action grammar, and warnings (never blocking: this
//! is a debugger) about what the server does not know.
//!
//! The texts are edited in `TextArea`s used as buffers (cursor, editing keys, undo); the
//! composer keeps its own scroll positions and the view draws the text, so that what is drawn
//! (the marks beside Process Action statements, the caret under a fault) lines up with it.

mod complete;
pub mod fields;

use crate::protocol::conformance::{Finding, check_message_as};
use crate::protocol::dac::Kind;
use crate::protocol::document::SyntaxError;
use crate::protocol::message::{CommonDefaults, Fill, fill_request};
use crate::protocol::process_action::{self, ParseError};
use crate::protocol::resources::Vocabulary;
use crate::protocol::{Interface, Mode as MessageMode};
use crate::tui::action::{Action, Handled, Keymap, Pane};
use fields::{Completes, FieldSpec, Widget};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::{CursorMove, TextArea};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use strum::VariantArray;

pub use complete::Completion;

/// Form or raw JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Form,
    Raw,
}

pub struct Field {
    pub spec: FieldSpec,
    pub editor: TextArea<'static>,
    /// The first line shown (multi-line fields scroll to keep the cursor in view).
    pub top: usize,
}

impl Field {
    fn new(spec: FieldSpec, text: &str) -> Field {
        Field {
            spec,
            editor: editor(text),
            top: 0,
        }
    }

    pub fn text(&self) -> String {
        self.editor.lines().join("\n")
    }

    /// How many lines the field shows: one for a one-line field; for the others, as many as
    /// it has (at least 2), up to the table's height.
    pub fn height(&self) -> u16 {
        if self.spec.widget.multiline() {
            (self.editor.lines().len() as u16).clamp(2, self.spec.height.max(2))
        } else {
            1
        }
    }

    /// Keeps the cursor's line in view.
    fn follow_cursor(&mut self) {
        self.top = follow(self.top, self.editor.cursor().0, self.height() as usize);
    }
}

/// The first line to show so that `cursor` is in a window of `height` lines that starts as
/// near `top` as it can.
fn follow(top: usize, cursor: usize, height: usize) -> usize {
    let height = height.max(1);
    top.min(cursor).max((cursor + 1).saturating_sub(height))
}

/// What the live check found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Checked {
    /// The raw text is not JSON.
    pub syntax: Option<SyntaxError>,
    /// A field the form cannot turn into JSON, and why.
    pub field_error: Option<(String, String)>,
    /// Process Action statements that do not parse: (line, error).
    pub statements: Vec<(usize, ParseError)>,
    pub findings: Vec<Finding>,
    /// What the server may not take: IDs its resources do not name, a TurnIndex that is not
    /// after the last accepted one. The Request can be sent all the same.
    pub warnings: Vec<String>,
}

impl Checked {
    pub fn ok(&self) -> bool {
        self.syntax.is_none()
            && self.field_error.is_none()
            && self.statements.is_empty()
            && self.findings.is_empty()
    }
}

/// What the composer needs to know about its dialogue.
pub struct Context<'a> {
    pub vocabulary: &'a Vocabulary,
    /// The CommitmentIDs the dialogue has seen.
    pub commitments: &'a [String],
    pub dialog_id: &'a str,
    pub next_turn: u64,
    /// The TurnIndex of the last Request the server took.
    pub last_accepted: Option<u64>,
    pub defaults: &'a CommonDefaults,
}

/// What the key map makes of a key in the composer: its own actions (keys.toml's
/// `[composer]`: several may share a key, as Enter accepts a completion or leaves a one-line
/// field) and the explorer's action for it anywhere, if any (such a key is never typed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyActions {
    pub own: Vec<Action>,
    pub anywhere: Option<Action>,
}

impl KeyActions {
    pub fn of(keymap: &Keymap, key: &KeyEvent) -> KeyActions {
        KeyActions {
            own: keymap.actions_in(key, crate::tui::action::Context::Pane(Pane::Composer)),
            anywhere: keymap.action_for(key, Pane::Composer, true),
        }
    }

    fn has(&self, action: &Action) -> bool {
        self.own.contains(action)
    }
}

pub struct Composer {
    pub interface: Interface,
    pub mode: Mode,
    pub kind: Kind,
    pub fields: Vec<Field>,
    /// The focused row: for BKN-DAC row 0 is the Kind, the fields follow.
    pub row: usize,
    pub raw: TextArea<'static>,
    /// The first line of the raw JSON shown.
    pub raw_top: usize,
    /// The text of every field typed so far, kept when the Kind changes.
    texts: HashMap<String, String>,
    /// Properties the form does not show (kept as they were in the raw JSON).
    pub extra: Map<String, Value>,
    pub checked: Checked,
    pub completion: Option<Completion>,
    /// A remark to show (why the form cannot be shown …); cleared by the next change.
    pub message: Option<String>,
    /// Whether what is in the composer was typed (or pasted) since it was last sent, loaded
    /// or cleared: an unsent draft, which nothing replaces without keeping it.
    pub edited: bool,
    /// Counts the changes to the text (the drafts' autosave is written when it moved).
    pub changes: u64,
    /// Drafts replaced (by a turn's Request, by Clear), newest last: Ctrl-Z brings them back.
    history: Vec<Draft>,
    /// Drafts Ctrl-Z went back from, newest last: Ctrl-Y goes forward again.
    undone: Vec<Draft>,
    /// What the composer held right after its last Request was sent (the cursor row left
    /// out): while it holds that, it holds no unsent draft, answered or not.
    sent: Option<Draft>,
}

/// Everything the composer holds, to put back as it was (and, written to the drafts'
/// autosave, after a crash).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Draft {
    mode: Mode,
    kind: Kind,
    row: usize,
    texts: HashMap<String, String>,
    extra: Map<String, Value>,
    raw: String,
}

/// How many replaced drafts are kept.
const DRAFTS: usize = 20;

/// The identity fields a form never keeps: they are made fresh for each Request.
const IDENTITY: [&str; 5] = ["QueryID", "QueryTime", "DialogID", "TurnIndex", "Mode"];

pub(crate) fn editor(text: &str) -> TextArea<'static> {
    let lines: Vec<String> = if text.is_empty() {
        vec![String::new()]
    } else {
        text.lines().map(str::to_owned).collect()
    };
    let mut t = TextArea::new(lines);
    t.move_cursor(CursorMove::Bottom);
    t.move_cursor(CursorMove::End);
    t
}

fn text_of(t: &TextArea) -> String {
    t.lines().join("\n")
}

impl Composer {
    pub fn new(interface: Interface) -> Composer {
        let mut c = Composer {
            interface,
            mode: Mode::Form,
            kind: Kind::SemanticGrounding,
            fields: Vec::new(),
            row: 0,
            raw: editor(""),
            raw_top: 0,
            texts: HashMap::new(),
            extra: Map::new(),
            checked: Checked::default(),
            completion: None,
            message: None,
            edited: false,
            changes: 0,
            history: Vec::new(),
            undone: Vec::new(),
            sent: None,
        };
        c.rebuild_fields();
        c.row = usize::from(interface == Interface::Dac);
        c
    }

    /// The rows of the form: the Kind (BKN-DAC) and the fields.
    pub fn rows(&self) -> usize {
        self.fields.len() + self.kind_rows()
    }

    fn kind_rows(&self) -> usize {
        usize::from(self.interface == Interface::Dac)
    }

    /// The focused field, if the focus is on a field (not on the Kind).
    pub fn focused_field(&self) -> Option<usize> {
        self.row
            .checked_sub(self.kind_rows())
            .filter(|i| *i < self.fields.len())
    }

    /// What Enter does now, in a word or two (the status line shows it, so that its three
    /// jobs are never a guess): accept the completion chosen, a new line in a multi-line
    /// field or the raw JSON, else the next field. Mirrors `key`.
    pub fn enter_does(&self) -> &'static str {
        let multiline_field = self.mode == Mode::Form
            && self
                .focused_field()
                .is_some_and(|i| self.fields[i].spec.widget.multiline());
        match &self.completion {
            Some(c) if c.chosen || !multiline_field => "accept",
            _ if multiline_field || self.mode == Mode::Raw => "new line",
            _ => "next field",
        }
    }

    fn save_texts(&mut self) {
        for f in &self.fields {
            self.texts.insert(f.spec.key.clone(), f.text());
        }
    }

    /// The fields for the interface and Kind (the schema says which; the table how).
    fn rebuild_fields(&mut self) {
        self.save_texts();
        let kind = (self.interface == Interface::Dac).then(|| self.kind.as_str());
        self.fields = fields::fields_for(self.interface, kind)
            .into_iter()
            .map(|spec| {
                let text = self.texts.get(&spec.key).cloned().unwrap_or_default();
                Field::new(spec, &text)
            })
            .collect();
        self.row = self.row.min(self.rows().saturating_sub(1));
    }

    pub fn set_kind(&mut self, kind: Kind) {
        self.kind = kind;
        self.rebuild_fields();
    }

    pub fn cycle_kind(&mut self, forward: bool) {
        if self.interface != Interface::Dac {
            return;
        }
        let all = Kind::VARIANTS;
        let i = all.iter().position(|k| *k == self.kind).unwrap_or(0);
        let next = if forward {
            (i + 1) % all.len()
        } else {
            (i + all.len() - 1) % all.len()
        };
        self.set_kind(all[next]);
    }

    /// The Request's own properties as the form or the raw text has them (no common field
    /// filled). `taken` are the CommitmentIDs the dialogue has seen.
    pub fn content(&self, taken: &[String]) -> Result<Map<String, Value>, String> {
        match self.mode {
            Mode::Raw => match crate::protocol::json::from_str::<Value>(&text_of(&self.raw)) {
                // A key written twice: JSON readers differ on which one counts (serde_json
                // keeps the last), so none is sent until it is said once.
                Ok(Value::Object(_)) if !duplicate_keys(&text_of(&self.raw)).is_empty() => {
                    Err(format!(
                        "a key is written twice: {} (say it once)",
                        duplicate_keys(&text_of(&self.raw)).join(", ")
                    ))
                }
                Ok(Value::Object(map)) => Ok(map),
                Ok(_) => Err("the Request must be a JSON object".into()),
                Err(_) => Err(format!(
                    "the Request is not JSON: {}",
                    raw_syntax_error(&text_of(&self.raw)).unwrap_or_else(|| SyntaxError {
                        line: 1,
                        column: 1,
                        message: "not JSON".into()
                    })
                )),
            },
            Mode::Form => {
                let mut out = Map::new();
                if self.interface == Interface::Dac {
                    out.insert("Kind".into(), json!(self.kind.as_str()));
                }
                let mut objects: Map<String, Value> = Map::new();
                for f in &self.fields {
                    let value = fields::encode(f.spec.widget, &f.text(), taken)
                        .map_err(|e| format!("{}: {e}", f.spec.label))?;
                    let Some(value) = value else { continue };
                    match f.spec.key.split_once('.') {
                        Some((parent, child)) => {
                            let entry = objects
                                .entry(parent.to_owned())
                                .or_insert_with(|| json!({}));
                            entry[child] = value;
                        }
                        None => {
                            out.insert(f.spec.key.clone(), value);
                        }
                    }
                }
                out.extend(objects);
                for (k, v) in &self.extra {
                    out.entry(k.clone()).or_insert(v.clone());
                }
                Ok(out)
            }
        }
    }

    /// The Request that would be sent now.
    pub fn preview(&self, ctx: &Context) -> Result<Value, String> {
        let mut content = self.content(ctx.commitments)?;
        if self.mode == Mode::Form {
            fill_request(
                &mut content,
                self.interface,
                ctx.dialog_id,
                ctx.next_turn,
                ctx.defaults,
                Fill::Missing,
            );
        }
        Ok(Value::Object(content))
    }

    /// Runs the live check.
    pub fn recheck(&mut self, ctx: &Context) {
        let mut checked = Checked::default();
        if self.mode == Mode::Raw {
            let text = text_of(&self.raw);
            checked.syntax = raw_syntax_error(&text);
            let twice = duplicate_keys(&text);
            if checked.syntax.is_none() && !twice.is_empty() {
                checked.field_error = Some((
                    "Raw JSON".into(),
                    format!("a key is written twice: {} (say it once)", twice.join(", ")),
                ));
            }
        }
        if self.mode == Mode::Form {
            for f in &self.fields {
                if let Err(e) = fields::encode(f.spec.widget, &f.text(), ctx.commitments) {
                    checked.field_error = Some((f.spec.label.clone(), e));
                    break;
                }
                if f.spec.widget == Widget::Steps {
                    for (i, line) in f.editor.lines().iter().enumerate() {
                        if !line.trim().is_empty()
                            && let Err(e) = process_action::parse(line)
                        {
                            checked.statements.push((i, e));
                        }
                    }
                }
            }
        }
        if checked.syntax.is_none()
            && checked.field_error.is_none()
            && let Ok(request) = self.preview(ctx)
        {
            checked.findings =
                check_message_as(&request, Some(self.interface), Some(MessageMode::Request))
                    .findings;
            checked.warnings = self.warnings(&request, ctx);
        }
        self.checked = checked;
    }

    /// What the server's resources do not name, and a TurnIndex that is not after the last
    /// accepted one.
    fn warnings(&self, request: &Value, ctx: &Context) -> Vec<String> {
        let mut out = unknown_ids(request, ctx);
        out.extend(unknown_places_in_steps(request, ctx));
        if let (Some(turn), Some(last)) = (
            request
                .get("TurnIndex")
                .and_then(crate::protocol::message::as_index),
            ctx.last_accepted,
        ) && turn <= last
        {
            out.push(format!(
                "TurnIndex {turn} is not after {last}, the last the server took: it will refuse it"
            ));
        }
        out
    }

    /// Switches between the form and the raw JSON, carrying the Request across.
    pub fn toggle_mode(&mut self, ctx: &Context) {
        self.completion = None;
        // Showing the same Request another way is no edit: the Request just sent stays it.
        let was_sent = self.sent.as_ref() == Some(&self.draft_without_row());
        self.switch_mode(ctx);
        if was_sent {
            self.sent = Some(self.draft_without_row());
        }
    }

    /// The form shown as raw JSON, or the raw JSON back in the form (when it reads as one;
    /// else the reason, and it stays raw).
    fn switch_mode(&mut self, ctx: &Context) {
        match self.mode {
            Mode::Form => match self.preview(ctx) {
                Ok(request) => {
                    self.raw = editor(&serde_json::to_string_pretty(&request).unwrap_or_default());
                    self.raw.move_cursor(CursorMove::Top);
                    self.raw_top = 0;
                    self.mode = Mode::Raw;
                    self.message = None;
                }
                Err(e) => self.message = Some(format!("cannot show the Request as JSON: {e}")),
            },
            Mode::Raw => match self.content(ctx.commitments) {
                Ok(map) => match self.load_form(map) {
                    Ok(()) => {
                        self.mode = Mode::Form;
                        self.message = None;
                    }
                    Err(e) => self.message = Some(format!("{e}; edit it as raw JSON")),
                },
                Err(e) => self.message = Some(format!("{e}; fix it to return to the form")),
            },
        }
        self.recheck(ctx);
    }

    /// Fills the form from a Request's properties (identity fields dropped, unknown ones kept
    /// aside).
    fn load_form(&mut self, mut map: Map<String, Value>) -> Result<(), String> {
        for k in IDENTITY {
            map.remove(k);
        }
        if let Some(Value::Object(dem)) = map.get_mut("DataXMData") {
            dem.remove("DataID");
        }
        if self.interface == Interface::Dac {
            let kind = map
                .remove("Kind")
                .and_then(|k| k.as_str().and_then(Kind::parse))
                .ok_or("the form needs a known Kind")?;
            self.kind = kind;
        }
        let all = every_field(self.interface);
        let widget_of = |key: &str| all.iter().find(|f| f.key == key).map(|f| f.widget);
        let (texts, extra) = form_texts(self.interface, map, widget_of)?;
        self.texts = texts;
        self.fields.clear();
        self.extra = extra;
        self.rebuild_fields();
        self.keep_hidden_as_sent(widget_of);
        Ok(())
    }

    /// Properties of the Request that this Kind's form does not show stay as they are: sent
    /// beside the form's.
    fn keep_hidden_as_sent(&mut self, widget_of: impl Fn(&str) -> Option<Widget>) {
        let shown: Vec<String> = self.fields.iter().map(|f| f.spec.key.clone()).collect();
        let hidden: Vec<(String, String)> = self
            .texts
            .iter()
            .filter(|(k, t)| !t.is_empty() && !shown.contains(k))
            .map(|(k, t)| (k.clone(), t.clone()))
            .collect();
        for (k, t) in hidden {
            let widget = widget_of(&k).unwrap_or(Widget::Json);
            if let Ok(Some(v)) = fields::encode(widget, &t, &[]) {
                match k.split_once('.') {
                    Some((parent, child)) => {
                        let entry = self
                            .extra
                            .entry(parent.to_owned())
                            .or_insert_with(|| json!({}));
                        entry[child] = v;
                    }
                    None => {
                        self.extra.insert(k, v);
                    }
                }
            }
        }
    }

    /// After a turn: the raw Request gets the next TurnIndex and fresh identifiers; in the
    /// form, what was a one-off action (commitments to retain or release) is emptied once the
    /// server answered, while what one iterates on (question, terms, steps) stays.
    pub fn after_send(&mut self, ctx: &Context, answered: bool) {
        if answered {
            // Sent and taken: no longer a draft to keep.
            self.edited = false;
        }
        if answered && self.mode == Mode::Form {
            for f in &mut self.fields {
                if matches!(f.spec.key.as_str(), "Commitments" | "ReleasedCommitmentIDs") {
                    f.editor = editor("");
                    f.top = 0;
                }
            }
            self.texts.remove("Commitments");
            self.texts.remove("ReleasedCommitmentIDs");
        }
        if self.mode == Mode::Raw
            && let Ok(Value::Object(mut map)) =
                crate::protocol::json::from_str::<Value>(&text_of(&self.raw))
        {
            map.insert("TurnIndex".into(), json!(ctx.next_turn));
            fill_request(
                &mut map,
                self.interface,
                ctx.dialog_id,
                ctx.next_turn,
                ctx.defaults,
                Fill::Fresh,
            );
            self.raw =
                editor(&serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default());
            self.raw.move_cursor(CursorMove::Top);
            self.raw_top = 0;
        }
        self.message = None;
        self.recheck(ctx);
        self.sent = Some(self.draft_without_row());
    }

    /// The draft, its cursor row left out (moving about is not a change).
    fn draft_without_row(&self) -> Draft {
        Draft {
            row: 0,
            ..self.draft()
        }
    }

    /// The whole composer as it is, to put back later.
    pub fn draft(&self) -> Draft {
        let mut texts = self.texts.clone();
        for f in &self.fields {
            texts.insert(f.spec.key.clone(), f.text());
        }
        Draft {
            mode: self.mode,
            kind: self.kind,
            row: self.row,
            texts,
            extra: self.extra.clone(),
            raw: text_of(&self.raw),
        }
    }

    /// Puts a draft back (from the drafts' autosave), keeping what is there for Ctrl-Z.
    pub fn recover(&mut self, draft: Draft, ctx: &Context) {
        self.keep_draft();
        self.restore(draft, ctx);
    }

    fn restore(&mut self, draft: Draft, ctx: &Context) {
        self.mode = draft.mode;
        self.kind = draft.kind;
        self.texts = draft.texts;
        self.extra = draft.extra;
        self.fields.clear();
        self.rebuild_fields();
        self.row = draft.row.min(self.rows().saturating_sub(1));
        self.raw = editor(&draft.raw);
        self.raw_top = 0;
        self.completion = None;
        self.message = None;
        self.edited = true;
        self.changes += 1;
        self.recheck(ctx);
    }

    /// Whether the composer holds an unsent draft: typed since it was last sent or loaded,
    /// not empty, and not the Request last sent (a turn the server refused is in the
    /// transcript: its Request is not lost).
    pub fn has_draft(&self) -> bool {
        if !self.edited {
            return false;
        }
        let d = self.draft_without_row();
        (d.texts.values().any(|t| !t.trim().is_empty())
            || (self.mode == Mode::Raw && !matches!(d.raw.trim(), "" | "{}" | "{\n}")))
            && self.sent.as_ref() != Some(&d)
    }

    /// Keeps the draft, when there is one, before something replaces it; whether it did.
    fn keep_draft(&mut self) -> bool {
        if !self.has_draft() {
            return false;
        }
        self.history.push(self.draft());
        if self.history.len() > DRAFTS {
            self.history.remove(0);
        }
        self.undone.clear();
        true
    }

    /// Puts a Request in place of what is there, keeping an unsent draft (Ctrl-Z brings it
    /// back); whether one was kept.
    pub fn replace_with(&mut self, request: &Value, ctx: &Context) -> bool {
        let kept = self.keep_draft();
        self.load(request, ctx);
        kept
    }

    /// Ctrl-Z: back to the draft that was replaced last; false when there is none.
    pub fn undo_draft(&mut self, ctx: &Context) -> bool {
        let Some(previous) = self.history.pop() else {
            return false;
        };
        self.undone.push(self.draft());
        self.restore(previous, ctx);
        true
    }

    /// Ctrl-Y: forward again to what Ctrl-Z went back from; false when there is none.
    pub fn redo_draft(&mut self, ctx: &Context) -> bool {
        let Some(next) = self.undone.pop() else {
            return false;
        };
        self.history.push(self.draft());
        self.restore(next, ctx);
        true
    }

    /// Puts a Request in the composer (to edit and send again).
    pub fn load(&mut self, request: &Value, ctx: &Context) {
        self.edited = false;
        self.changes += 1;
        self.message = None;
        self.completion = None;
        if let Value::Object(map) = request
            && self.load_form(map.clone()).is_ok()
        {
            self.mode = Mode::Form;
        } else {
            self.raw = editor(&serde_json::to_string_pretty(request).unwrap_or_default());
            self.raw.move_cursor(CursorMove::Top);
            self.raw_top = 0;
            self.mode = Mode::Raw;
        }
        self.recheck(ctx);
    }

    /// Empties the whole composer (the Kind stays); a draft is kept for Ctrl-Z.
    pub fn clear(&mut self, ctx: &Context) {
        self.keep_draft();
        self.edited = false;
        self.changes += 1;
        self.texts.clear();
        self.extra.clear();
        for f in &mut self.fields {
            f.editor = editor("");
            f.top = 0;
        }
        if self.mode == Mode::Raw {
            self.raw = editor("{\n}");
            self.raw_top = 0;
        }
        self.completion = None;
        self.message = None;
        self.recheck(ctx);
    }

    /// Empties the focused field.
    pub fn reset_field(&mut self, ctx: &Context) {
        if let Some(i) = self.focused_field() {
            self.fields[i].editor = editor("");
            self.fields[i].top = 0;
            self.texts.remove(&self.fields[i].spec.key);
            self.completion = None;
            self.recheck(ctx);
        }
    }

    /// The text being edited (the focused field, or the raw JSON).
    fn active(&mut self) -> Option<&mut TextArea<'static>> {
        match self.mode {
            Mode::Raw => Some(&mut self.raw),
            Mode::Form => {
                let i = self.focused_field()?;
                Some(&mut self.fields[i].editor)
            }
        }
    }

    /// Moves to the next (or previous) row of the form; `Ignored` past the last (or first),
    /// so that the focus leaves the composer.
    fn next_row(&mut self, forward: bool) -> Handled {
        self.completion = None;
        if self.mode == Mode::Raw {
            return Handled::Ignored;
        }
        if forward && self.row + 1 < self.rows() {
            self.row += 1;
            Handled::Consumed
        } else if !forward && self.row > 0 {
            self.row -= 1;
            Handled::Consumed
        } else {
            Handled::Ignored
        }
    }

    /// Handles a key while the composer has the focus, with what the key map makes of it
    /// (`KeyActions::of`). `raw_height` is how many lines of the raw JSON are on screen (to
    /// keep the cursor in view). Keys it does not use are left to the explorer: those of the
    /// key table that apply anywhere.
    pub fn handle_key(
        &mut self,
        key: KeyEvent,
        keys: &KeyActions,
        ctx: &Context,
        raw_height: usize,
    ) -> Handled {
        let handled = self.key(key, keys, ctx);
        for f in &mut self.fields {
            f.follow_cursor();
        }
        self.raw_top = follow(self.raw_top, self.raw.cursor().0, raw_height);
        handled
    }

    /// A key: to the completion list when one is open, then the draft's history and rows,
    /// then the form's own keys, then the active editor. A character typed where text is
    /// typed is text, whatever keys.toml binds it to (only the Kind row takes letters as
    /// keys).
    fn key(&mut self, key: KeyEvent, keys: &KeyActions, ctx: &Context) -> Handled {
        let text = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
            && matches!(key.code, KeyCode::Char(_))
            && !self.on_kind();
        let none = KeyActions::default();
        let keys = if text { &none } else { keys };
        if let Some(handled) = self.completion_key(keys, ctx) {
            return handled;
        }
        if let Some(handled) = self.draft_key(keys, ctx) {
            return handled;
        }
        // A key the explorer binds anywhere (Esc, Tab past the last field, F6) is the
        // explorer's, never the form's or text.
        if keys.anywhere.is_some() {
            return Handled::Ignored;
        }
        if self.mode == Mode::Form
            && let Some(handled) = self.form_key(key, keys, ctx)
        {
            return handled;
        }
        self.edit_key(key, ctx)
    }

    /// Whether the focus is on the Kind row (BKN-DAC's form), where letters choose a Kind.
    fn on_kind(&self) -> bool {
        self.mode == Mode::Form && self.interface == Interface::Dac && self.row == 0
    }

    /// An open completion list takes up and down, next-field (Tab: accepts), accept-completion
    /// and cancel (Esc: closes it). accept-completion (Enter, →) accepts only when the list
    /// was asked for or moved in, or in a one-line field (in a multi-line one Enter is a new
    /// line: a list that came up while typing prose never swallows it). None: the key goes
    /// on.
    fn completion_key(&mut self, keys: &KeyActions, ctx: &Context) -> Option<Handled> {
        let completion = self.completion.as_ref()?;
        let multiline = self.mode == Mode::Form
            && self
                .focused_field()
                .is_some_and(|i| self.fields[i].spec.widget.multiline());
        let accepts = completion.chosen || !multiline;
        if keys.has(&Action::Up) || keys.has(&Action::Down) {
            if let Some(c) = &mut self.completion {
                c.step(keys.has(&Action::Down));
            }
            return Some(Handled::Consumed);
        }
        if keys.has(&Action::NextField) || (keys.has(&Action::AcceptCompletion) && accepts) {
            return Some(self.accept_as_typed(ctx));
        }
        if keys.has(&Action::AcceptCompletion) {
            self.completion = None;
            return None;
        }
        if keys.anywhere == Some(Action::Cancel) {
            self.completion = None;
            return Some(Handled::Consumed);
        }
        None
    }

    /// Accepts the chosen completion, as an edit of the draft.
    fn accept_as_typed(&mut self, ctx: &Context) -> Handled {
        self.accept_completion();
        self.edited = true;
        self.changes += 1;
        self.recheck(ctx);
        Handled::Consumed
    }

    /// A completion clicked: it is chosen and taken.
    pub fn take_completion(&mut self, item: usize, ctx: &Context) {
        let Some(c) = &mut self.completion else {
            return;
        };
        c.selected = item;
        c.chosen = true;
        self.accept_as_typed(ctx);
        for f in &mut self.fields {
            f.follow_cursor();
        }
    }

    /// The draft's history, the rows, completion on demand. None: the key goes on.
    fn draft_key(&mut self, keys: &KeyActions, ctx: &Context) -> Option<Handled> {
        // The draft's history (whole drafts replaced); Ctrl-U undoes typing.
        if keys.has(&Action::UndoDraft) {
            if !self.undo_draft(ctx) {
                self.message = Some("no earlier draft to go back to (Ctrl-U undoes typing)".into());
            }
            return Some(Handled::Consumed);
        }
        if keys.has(&Action::RedoDraft) && !self.undone.is_empty() {
            self.redo_draft(ctx);
            return Some(Handled::Consumed);
        }
        if keys.has(&Action::NextField) {
            return Some(self.next_row(true));
        }
        if keys.has(&Action::PrevField) {
            return Some(self.next_row(false));
        }
        if keys.has(&Action::ShowCompletions) {
            self.refresh_completion(ctx, true);
            return Some(Handled::Consumed);
        }
        None
    }

    /// The form's keys: the Kind row's (next-kind, previous-kind and letters change the Kind;
    /// nothing else is typed there), and the moves between rows (up and down from a field's
    /// first or last line, field-up and field-down from any, confirm-field from a one-line
    /// field). None: the key goes on.
    fn form_key(&mut self, key: KeyEvent, keys: &KeyActions, ctx: &Context) -> Option<Handled> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let on_kind = self.on_kind();
        let (multiline, row, lines) = match self.focused_field() {
            Some(i) => {
                let f = &self.fields[i];
                (
                    f.spec.widget.multiline(),
                    f.editor.cursor().0,
                    f.editor.lines().len(),
                )
            }
            None => (false, 0, 1),
        };
        let kind = keys.own.iter().find_map(|a| match a {
            Action::NextKind => Some(true),
            Action::PrevKind => Some(false),
            _ => None,
        });
        match key.code {
            _ if on_kind && kind.is_some() => {
                self.cycle_kind(kind == Some(true));
                self.recheck(ctx);
            }
            // On the Kind row a letter picks the next Kind that starts with it.
            KeyCode::Char(c) if on_kind && !ctrl && !alt => {
                if let Some(k) = self.next_kind_starting(c) {
                    self.set_kind(k);
                    self.recheck(ctx);
                }
            }
            // Moves past the form's ends keep the focus in the composer.
            _ if keys.has(&Action::FieldUp)
                || (keys.has(&Action::Up) && (!multiline || row == 0)) =>
            {
                self.next_row(false);
            }
            _ if keys.has(&Action::FieldDown)
                || (keys.has(&Action::Down) && (!multiline || row + 1 >= lines))
                || (keys.has(&Action::ConfirmField) && !multiline) =>
            {
                self.next_row(true);
            }
            // A one-line field takes no line break, whatever Enter is bound to.
            KeyCode::Enter if !multiline => {}
            _ if on_kind => {}
            _ => return None,
        }
        Some(Handled::Consumed)
    }

    /// The Kind after the current one (round the list) whose name starts with a letter.
    fn next_kind_starting(&self, letter: char) -> Option<Kind> {
        let after = Kind::VARIANTS
            .iter()
            .position(|k| *k == self.kind)
            .unwrap_or(0);
        (1..=Kind::VARIANTS.len())
            .map(|d| Kind::VARIANTS[(after + d) % Kind::VARIANTS.len()])
            .find(|k| k.as_str().starts_with(letter.to_ascii_lowercase()))
    }

    /// A key for the active editor (function keys are never text: they are the explorer's).
    fn edit_key(&mut self, key: KeyEvent, ctx: &Context) -> Handled {
        if matches!(key.code, KeyCode::F(_)) {
            return Handled::Ignored;
        }
        let Some(editor) = self.active() else {
            return Handled::Ignored;
        };
        let changed = editor.input(key);
        if changed {
            self.edited = true;
            self.changes += 1;
            self.message = None;
            self.recheck(ctx);
            self.refresh_completion(ctx, false);
        } else {
            self.completion = None;
        }
        Handled::Consumed
    }

    /// Inserts pasted text into the active field.
    pub fn paste(&mut self, text: &str, ctx: &Context) {
        if let Some(editor) = self.active() {
            editor.insert_str(text);
            self.edited = true;
            self.changes += 1;
            self.recheck(ctx);
            for f in &mut self.fields {
                f.follow_cursor();
            }
        }
    }

    fn accept_completion(&mut self) -> bool {
        let Some(c) = self.completion.take() else {
            return false;
        };
        let Some(item) = c.items.get(c.selected).cloned() else {
            return false;
        };
        let Some(editor) = self.active() else {
            return false;
        };
        for _ in 0..c.replaces {
            editor.move_cursor(CursorMove::Back);
        }
        editor.delete_str(c.replaces);
        editor.insert_str(&item);
        // No space after it: the user types the next one (a space of their own is not
        // doubled).
        true
    }

    /// Works out the completions at the cursor; `always` shows them even before a letter.
    pub fn refresh_completion(&mut self, ctx: &Context, always: bool) {
        self.completion = None;
        let Mode::Form = self.mode else { return };
        let Some(i) = self.focused_field() else {
            return;
        };
        let f = &self.fields[i];
        let cursor = f.editor.cursor();
        let line = f.editor.lines()[cursor.0].clone();
        self.completion = complete::at(f.spec.completes, &line, cursor.1, ctx, always);
    }

    /// Why the focused field has nothing to complete, when it completes from a list the
    /// server's resources left empty.
    pub fn why_no_completions(&self, ctx: &Context) -> Option<String> {
        let f = &self.fields[self.focused_field()?];
        match f.spec.completes {
            Completes::Words(words) => ctx.vocabulary.why_empty(words),
            _ => None,
        }
    }
}

/// Every field of every Kind, to find each property's widget.
fn every_field(interface: Interface) -> Vec<FieldSpec> {
    match interface {
        Interface::Dac => Kind::VARIANTS
            .iter()
            .flat_map(|k| fields::fields_for(Interface::Dac, Some(k.as_str())))
            .collect(),
        Interface::Usr => fields::fields_for(Interface::Usr, None),
    }
}

/// The form's texts by field key, and the properties it has no field for.
type FormTexts = (HashMap<String, String>, Map<String, Value>);

/// A Request's properties as the form's texts (a grouped one's members as `Group.Member`),
/// and those the form has no field for; an error names a property the form cannot show.
fn form_texts(
    interface: Interface,
    map: Map<String, Value>,
    widget_of: impl Fn(&str) -> Option<Widget>,
) -> Result<FormTexts, String> {
    let mut texts: HashMap<String, String> = HashMap::new();
    let mut extra = Map::new();
    for (k, v) in map {
        let members = fields::members(interface, &k);
        if !members.is_empty() {
            let Value::Object(obj) = &v else {
                return Err(format!("{k} is not an object the form can show"));
            };
            for (child, value) in obj {
                if !members.contains(&child.as_str()) {
                    return Err(format!("{k}.{child} is not in the form"));
                }
                let key = format!("{k}.{child}");
                let widget = widget_of(&key).unwrap_or(Widget::Json);
                texts.insert(
                    key.clone(),
                    fields::decode(widget, value)
                        .ok_or_else(|| format!("{key} has a shape the form cannot show"))?,
                );
            }
        } else if let Some(widget) = widget_of(&k) {
            texts.insert(
                k.clone(),
                fields::decode(widget, &v)
                    .ok_or_else(|| format!("{k} has a shape the form cannot show"))?,
            );
        } else {
            extra.insert(k, v);
        }
    }
    Ok((texts, extra))
}

/// The Entity IDs, Space, M-Location and User a Request names that are not among the
/// server's (nothing is judged where the server listed none: the composer says why).
fn unknown_ids(request: &Value, ctx: &Context) -> Vec<String> {
    use crate::protocol::resources::Words;
    let strings = |pointer: &str| -> Vec<&str> {
        match request.pointer(pointer) {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    };
    [
        ("/EntityIDs", Words::Entities),
        ("/Space/SpaceID", Words::Spaces),
        ("/Space/MLocation", Words::MLocations),
        ("/UserID", Words::Users),
    ]
    .into_iter()
    .filter_map(|(pointer, words)| {
        let known = ctx.vocabulary.list(words);
        if known.is_empty() {
            return None;
        }
        let strangers: Vec<&str> = strings(pointer)
            .into_iter()
            .filter(|id| !known.iter().any(|k| k == id))
            .collect();
        (!strangers.is_empty()).then(|| {
            format!(
                "{} not among the server's {}",
                strangers.join(", "),
                words.name()
            )
        })
    })
    .collect()
}

/// The Items and places a Process Action statement names (not its With attributes) that
/// are none of the server's entities, M-Locations or spaces.
fn unknown_places_in_steps(request: &Value, ctx: &Context) -> Vec<String> {
    use crate::protocol::resources::Words;
    let places: Vec<&String> = [Words::Entities, Words::MLocations, Words::Spaces]
        .into_iter()
        .flat_map(|w| ctx.vocabulary.list(w).iter())
        .collect();
    if places.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for step in request
        .get("ProcessActions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(Ok(statement)) = step
            .get("Statement")
            .and_then(Value::as_str)
            .map(process_action::parse)
        else {
            continue;
        };
        let strangers: Vec<&str> = statement
            .complements
            .iter()
            .filter(|c| c.preposition != process_action::Preposition::With)
            .map(|c| c.target.id.as_str())
            .filter(|id| !places.iter().any(|k| k.as_str() == *id))
            .collect();
        if !strangers.is_empty() {
            let n = step.get("Step").map(Value::to_string).unwrap_or_default();
            out.push(format!(
                "step {n}: {} not among the server's {}, {} or {}",
                strangers.join(", "),
                Words::Entities.name(),
                Words::MLocations.name(),
                Words::Spaces.name()
            ));
        }
    }
    out
}

/// Where raw text stops being JSON; for a string that is never closed, where it opens (the
/// parser only notices at the end of the text).
fn raw_syntax_error(text: &str) -> Option<SyntaxError> {
    let e = crate::protocol::json::from_str::<Value>(text).err()?;
    if (e.message.contains("EOF while parsing a string") || e.message.contains("control character"))
        && let Some((line, column)) = unclosed_string(text)
    {
        return Some(SyntaxError {
            line,
            column,
            message: "this string is never closed (a \" is missing)".into(),
        });
    }
    Some(e)
}

/// The keys written twice in one object of a JSON text, as JSON pointers (none when it is
/// not JSON: the syntax error says that).
fn duplicate_keys(text: &str) -> Vec<String> {
    use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
    use std::cell::RefCell;
    struct Check<'a> {
        path: String,
        out: &'a RefCell<Vec<String>>,
    }
    impl<'de> DeserializeSeed<'de> for Check<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Check<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                let path = format!(
                    "{}/{}",
                    self.path,
                    key.replace('~', "~0").replace('/', "~1")
                );
                if !seen.insert(key) {
                    self.out.borrow_mut().push(path.clone());
                }
                map.next_value_seed(Check {
                    path,
                    out: self.out,
                })?;
            }
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0;
            while seq
                .next_element_seed(Check {
                    path: format!("{}/{i}", self.path),
                    out: self.out,
                })?
                .is_some()
            {
                i += 1;
            }
            Ok(())
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    }
    let out = RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_str(text);
    let check = Check {
        path: String::new(),
        out: &out,
    };
    if check.deserialize(&mut de).is_err() {
        return Vec::new();
    }
    out.into_inner()
}

/// The line and column of the quote that opens a string left open at the end of `text`.
fn unclosed_string(text: &str) -> Option<(usize, usize)> {
    let (mut line, mut column) = (1usize, 0usize);
    let mut open: Option<(usize, usize)> = None;
    let mut escaped = false;
    for c in text.chars() {
        if c == '\n' {
            line += 1;
            column = 0;
        } else {
            column += 1;
        }
        match (open, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(_), '"') => open = None,
            (None, '"') => open = Some((line, column)),
            _ => {}
        }
    }
    open
}

#[cfg(test)]
mod tests;
