//! The composer: a Request written as a form (the properties the chosen Kind uses, read from
//! the schema's `x-bkn-kinds`) or as raw JSON, the two kept in step; checked as it is typed,
//! with completions from the server's resources and the Process Action grammar.

use crate::protocol::conformance::{Finding, check_message_as};
use crate::protocol::dac::Kind;
use crate::protocol::document::SyntaxError;
use crate::protocol::message::{CommonDefaults, Fill, fill_request};
use crate::protocol::process_action::{self, ACTIONS, Expected, ParseError, Preposition};
use crate::protocol::resources::{Vocabulary, Words};
use crate::protocol::schema;
use crate::protocol::{Interface, Mode as MessageMode};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::{CursorMove, TextArea};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// Form or raw JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Form,
    Raw,
}

/// What a field completes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completes {
    Nothing,
    Entities,
    Locations,
    Spaces,
    Statements,
    CommitmentIds,
    CommitmentStatements,
    Terms,
    Users,
    Cues,
}

pub struct Field {
    /// The property it edits: a top-level name, or `Parent.Child` for a member of an object.
    pub key: String,
    pub label: String,
    pub help: String,
    pub multiline: bool,
    pub completes: Completes,
    pub editor: TextArea<'static>,
}

/// The completions offered at the cursor of the focused field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub items: Vec<String>,
    /// How many characters before the cursor the accepted item replaces.
    pub replaces: usize,
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
    pub commitments: Vec<String>,
    pub dialog_id: &'a str,
    pub next_turn: u64,
    pub defaults: &'a CommonDefaults,
}

pub struct Composer {
    pub interface: Interface,
    pub mode: Mode,
    pub kind: Kind,
    pub fields: Vec<Field>,
    /// The focused row: for BKN-DAC row 0 is the Kind, the fields follow.
    pub row: usize,
    pub raw: TextArea<'static>,
    /// The text of every field typed so far, kept when the Kind changes.
    texts: HashMap<String, String>,
    /// Properties the form does not show (kept as they were in the raw JSON).
    pub extra: Map<String, Value>,
    pub checked: Checked,
    pub completion: Option<Completion>,
    /// A remark to show (why the form cannot be shown, what was sent).
    pub message: Option<String>,
}

/// The identity fields a form never keeps: they are made fresh for each Request.
const IDENTITY: [&str; 5] = ["QueryID", "QueryTime", "DialogID", "TurnIndex", "Mode"];

fn editor(text: &str) -> TextArea<'static> {
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
            texts: HashMap::new(),
            extra: Map::new(),
            checked: Checked::default(),
            completion: None,
            message: None,
        };
        c.rebuild_fields();
        c
    }

    /// The rows of the form: the Kind (BKN-DAC) and the fields.
    pub fn rows(&self) -> usize {
        self.fields.len() + usize::from(self.interface == Interface::Dac)
    }

    /// The focused field, if the focus is on a field (not on the Kind).
    pub fn focused_field(&self) -> Option<usize> {
        let offset = usize::from(self.interface == Interface::Dac);
        self.row
            .checked_sub(offset)
            .filter(|i| *i < self.fields.len())
    }

    fn save_texts(&mut self) {
        for f in &self.fields {
            self.texts.insert(f.key.clone(), text_of(&f.editor));
        }
    }

    /// The fields for the interface and Kind, from the schema.
    fn rebuild_fields(&mut self) {
        self.save_texts();
        let kind = self.kind.as_str();
        let mut keys: Vec<String> = Vec::new();
        for p in schema::properties(self.interface, MessageMode::Request) {
            if p.common || p.name == "Kind" {
                continue;
            }
            if self.interface == Interface::Dac
                && !p
                    .kinds
                    .as_ref()
                    .is_some_and(|k| k.iter().any(|k| k == kind))
            {
                continue;
            }
            match p.name.as_str() {
                "Space" => keys.extend(["Space.SpaceID".into(), "Space.MLocation".into()]),
                "Feedback" => keys.extend([
                    "Feedback.Hypothesis".into(),
                    "Feedback.Conflicts".into(),
                    "Feedback.Question".into(),
                ]),
                "UserID" => keys.insert(0, "UserID".into()),
                other => keys.push(other.into()),
            }
        }
        self.fields = keys
            .into_iter()
            .map(|key| {
                let (label, multiline, completes) = widget(&key);
                let top = key.split('.').next().unwrap_or(&key);
                let help = schema::property(self.interface, MessageMode::Request, top)
                    .map(|p| p.description.clone())
                    .unwrap_or_default();
                let help = member_help(&key).map(str::to_owned).unwrap_or(help);
                let text = self.texts.get(&key).cloned().unwrap_or_default();
                Field {
                    label: label.into(),
                    help,
                    multiline,
                    completes,
                    editor: editor(&text),
                    key,
                }
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
        let all = Kind::ALL;
        let i = all.iter().position(|k| *k == self.kind).unwrap_or(0);
        let next = if forward {
            (i + 1) % all.len()
        } else {
            (i + all.len() - 1) % all.len()
        };
        self.set_kind(all[next]);
    }

    /// The Request's own properties as the form or the raw text has them (no common field
    /// filled).
    pub fn content(&self) -> Result<Map<String, Value>, String> {
        match self.mode {
            Mode::Raw => match serde_json::from_str::<Value>(&text_of(&self.raw)) {
                Ok(Value::Object(map)) => Ok(map),
                Ok(_) => Err("the Request must be a JSON object".into()),
                Err(e) => Err(format!("the Request is not JSON: {}", SyntaxError::from(e))),
            },
            Mode::Form => {
                let mut out = Map::new();
                if self.interface == Interface::Dac {
                    out.insert("Kind".into(), json!(self.kind.as_str()));
                }
                let mut objects: Map<String, Value> = Map::new();
                for f in &self.fields {
                    let value = encode(&f.key, &text_of(&f.editor))
                        .map_err(|e| format!("{}: {e}", f.label))?;
                    let Some(value) = value else { continue };
                    match f.key.split_once('.') {
                        Some((parent, child)) => {
                            let entry = objects
                                .entry(parent.to_owned())
                                .or_insert_with(|| json!({}));
                            entry[child] = value;
                        }
                        None => {
                            out.insert(f.key.clone(), value);
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
        let mut content = self.content()?;
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
        if self.mode == Mode::Raw
            && let Err(e) = serde_json::from_str::<Value>(&text_of(&self.raw))
        {
            checked.syntax = Some(SyntaxError::from(e));
        }
        if self.mode == Mode::Form {
            for f in &self.fields {
                if let Err(e) = encode(&f.key, &text_of(&f.editor)) {
                    checked.field_error = Some((f.label.clone(), e));
                    break;
                }
                if f.completes == Completes::Statements {
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
        }
        self.checked = checked;
    }

    /// Switches between the form and the raw JSON, carrying the Request across.
    pub fn toggle_mode(&mut self, ctx: &Context) {
        self.completion = None;
        match self.mode {
            Mode::Form => match self.preview(ctx) {
                Ok(request) => {
                    self.raw = editor(&serde_json::to_string_pretty(&request).unwrap_or_default());
                    self.raw.move_cursor(CursorMove::Top);
                    self.mode = Mode::Raw;
                    self.message = None;
                }
                Err(e) => self.message = Some(format!("cannot show the Request as JSON: {e}")),
            },
            Mode::Raw => match self.content() {
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
        let mut texts: HashMap<String, String> = HashMap::new();
        let known = |name: &str| -> Vec<String> {
            match name {
                "Space" => vec!["SpaceID".into(), "MLocation".into()],
                "Feedback" => vec!["Hypothesis".into(), "Conflicts".into(), "Question".into()],
                _ => vec![],
            }
        };
        let mut extra = Map::new();
        for (k, v) in map {
            let members = known(&k);
            if !members.is_empty() {
                let Value::Object(obj) = &v else {
                    return Err(format!("{k} is not an object the form can show"));
                };
                for (child, value) in obj {
                    if !members.contains(child) {
                        return Err(format!("{k}.{child} is not in the form"));
                    }
                    let key = format!("{k}.{child}");
                    texts.insert(
                        key.clone(),
                        decode(&key, value)
                            .ok_or_else(|| format!("{key} has a shape the form cannot show"))?,
                    );
                }
            } else if form_knows(&k) {
                texts.insert(
                    k.clone(),
                    decode(&k, &v)
                        .ok_or_else(|| format!("{k} has a shape the form cannot show"))?,
                );
            } else {
                extra.insert(k, v);
            }
        }
        self.texts = texts;
        self.fields.clear();
        self.extra = extra;
        self.rebuild_fields();
        // Properties of the Request that this Kind's form does not show stay as they are.
        let shown: Vec<String> = self.fields.iter().map(|f| f.key.clone()).collect();
        let hidden: Vec<(String, String)> = self
            .texts
            .iter()
            .filter(|(k, t)| !t.is_empty() && !shown.contains(k))
            .map(|(k, t)| (k.clone(), t.clone()))
            .collect();
        for (k, t) in hidden {
            if let Ok(Some(v)) = encode(&k, &t) {
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
        Ok(())
    }

    /// After a send: a raw Request gets a fresh QueryID and the next TurnIndex.
    /// After a turn: the raw Request gets the next TurnIndex and fresh identifiers; in the
    /// form, what was a one-off action (commitments to retain or release) is emptied once the
    /// server answered, while what one iterates on (question, terms, steps) stays.
    pub fn after_send(&mut self, ctx: &Context, answered: bool) {
        if answered && self.mode == Mode::Form {
            for f in &mut self.fields {
                if matches!(f.key.as_str(), "Commitments" | "ReleasedCommitmentIDs") {
                    f.editor = editor("");
                }
            }
            self.texts.remove("Commitments");
            self.texts.remove("ReleasedCommitmentIDs");
        }
        if self.mode == Mode::Raw
            && let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(&text_of(&self.raw))
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
        }
        self.recheck(ctx);
    }

    /// Puts a Request in the composer (to edit and send again).
    pub fn load(&mut self, request: &Value, ctx: &Context) {
        if let Value::Object(map) = request
            && self.load_form(map.clone()).is_ok()
        {
            self.mode = Mode::Form;
        } else {
            self.raw = editor(&serde_json::to_string_pretty(request).unwrap_or_default());
            self.raw.move_cursor(CursorMove::Top);
            self.mode = Mode::Raw;
        }
        self.recheck(ctx);
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

    /// Handles a key while the composer has the focus. Returns false for keys it leaves to
    /// the rest of the explorer.
    pub fn handle_key(&mut self, key: KeyEvent, ctx: &Context) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Tab if key.modifiers.is_empty() => {
                if self.accept_completion() {
                    self.recheck(ctx);
                    self.refresh_completion(ctx, false);
                    return true;
                }
                return false;
            }
            KeyCode::Char(' ') if ctrl => {
                self.refresh_completion(ctx, true);
                return true;
            }
            _ => {}
        }
        if self.mode == Mode::Form {
            let on_kind = self.interface == Interface::Dac && self.row == 0;
            let (multiline, row, lines) = match self.focused_field() {
                Some(i) => {
                    let f = &self.fields[i];
                    (f.multiline, f.editor.cursor().0, f.editor.lines().len())
                }
                None => (false, 0, 1),
            };
            match key.code {
                KeyCode::Left | KeyCode::Right if on_kind => {
                    self.cycle_kind(key.code == KeyCode::Right);
                    self.recheck(ctx);
                    return true;
                }
                KeyCode::Up if alt || !multiline || row == 0 => {
                    if self.row > 0 {
                        self.row -= 1;
                    }
                    self.completion = None;
                    return true;
                }
                KeyCode::Down if alt || !multiline || row + 1 >= lines => {
                    if self.row + 1 < self.rows() {
                        self.row += 1;
                    }
                    self.completion = None;
                    return true;
                }
                KeyCode::Enter if !multiline && !ctrl => {
                    if self.row + 1 < self.rows() {
                        self.row += 1;
                    }
                    self.completion = None;
                    return true;
                }
                _ if on_kind => return false,
                _ => {}
            }
        }
        if key.code == KeyCode::Enter && ctrl {
            return false;
        }
        let Some(editor) = self.active() else {
            return false;
        };
        let changed = editor.input(key);
        if changed {
            self.recheck(ctx);
            self.refresh_completion(ctx, false);
        } else {
            self.completion = None;
        }
        true
    }

    /// Inserts pasted text into the active field.
    pub fn paste(&mut self, text: &str, ctx: &Context) {
        if let Some(editor) = self.active() {
            editor.insert_str(text);
            self.recheck(ctx);
        }
    }

    fn accept_completion(&mut self) -> bool {
        let Some(c) = self.completion.take() else {
            return false;
        };
        let Some(item) = c.items.first().cloned() else {
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
        editor.insert_char(' ');
        true
    }

    /// Works out the completions at the cursor; `always` shows them even before a letter.
    pub fn refresh_completion(&mut self, ctx: &Context, always: bool) {
        self.completion = None;
        let (completes, line, col) = match self.mode {
            Mode::Raw => return,
            Mode::Form => {
                let Some(i) = self.focused_field() else {
                    return;
                };
                let f = &self.fields[i];
                let cursor = f.editor.cursor();
                (f.completes, f.editor.lines()[cursor.0].clone(), cursor.1)
            }
        };
        let before: String = line.chars().take(col).collect();
        let word_start = before
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '='))
            .map(|(i, c)| i + c.len_utf8())
            .unwrap_or(0);
        let word = &before[word_start..];
        if word.is_empty() && !always {
            return;
        }
        let candidates: Vec<String> = match completes {
            Completes::Nothing => return,
            Completes::Entities => ctx.vocabulary.list(Words::Entities).to_vec(),
            Completes::Locations => ctx.vocabulary.list(Words::MLocations).to_vec(),
            Completes::Spaces => ctx.vocabulary.list(Words::Spaces).to_vec(),
            Completes::CommitmentIds => ctx.commitments.clone(),
            Completes::Users => ctx.vocabulary.list(Words::Users).to_vec(),
            Completes::Cues => ctx.vocabulary.list(Words::Cues).to_vec(),
            Completes::Terms => {
                if before.contains(" : ") {
                    ctx.vocabulary.list(Words::Classes).to_vec()
                } else {
                    return;
                }
            }
            Completes::CommitmentStatements => {
                let mut all = ctx.vocabulary.list(Words::Entities).to_vec();
                all.extend(ctx.vocabulary.list(Words::MLocations).iter().cloned());
                all.extend(
                    ["locatedAt", "ownedBy", "isA", "not"]
                        .iter()
                        .map(|s| s.to_string()),
                );
                all.extend(ctx.vocabulary.list(Words::Classes).iter().cloned());
                all
            }
            Completes::Statements => statement_candidates(&before[..word_start], ctx.vocabulary),
        };
        let lower = word.to_lowercase();
        let mut items: Vec<String> = candidates
            .into_iter()
            .filter(|c| c.to_lowercase().starts_with(&lower) && !c.eq_ignore_ascii_case(word))
            .collect();
        items.dedup();
        items.truncate(8);
        if !items.is_empty() {
            self.completion = Some(Completion {
                items,
                replaces: word.chars().count(),
            });
        }
    }
}

/// What may come next in a Process Action statement, given the text before the word being
/// typed: the grammar's error at the end of that text says what it expected.
fn statement_candidates(prefix: &str, v: &Vocabulary) -> Vec<String> {
    let prefix = prefix.trim_end();
    if prefix.is_empty() {
        let mut actions: Vec<String> = v.list(Words::Actions).to_vec();
        actions.extend(
            ACTIONS
                .iter()
                .map(|a| a.to_string())
                .filter(|a| !v.list(Words::Actions).contains(a)),
        );
        return actions;
    }
    let preps = || -> Vec<String> {
        let mut p: Vec<String> = Preposition::ALL
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect();
        p.push("If".into());
        p
    };
    let targets = |after: &str| -> Vec<String> {
        let locations_first = matches!(after, "At" | "From" | "To");
        let (a, b) = if locations_first {
            (v.list(Words::MLocations), v.list(Words::Entities))
        } else {
            (v.list(Words::Entities), v.list(Words::MLocations))
        };
        a.iter().chain(b.iter()).cloned().collect()
    };
    match process_action::parse(prefix) {
        Ok(_) => preps(),
        Err(e) if e.position >= prefix.chars().count() => match e.expected {
            Expected::Action => ACTIONS.iter().map(|a| a.to_string()).collect(),
            Expected::Preposition => preps(),
            Expected::Target => targets(prefix.split_whitespace().last().unwrap_or_default()),
            _ => Vec::new(),
        },
        Err(_) => Vec::new(),
    }
}

/// The label, whether it takes several lines, and what it completes from, per property.
fn widget(key: &str) -> (&'static str, bool, Completes) {
    match key {
        "Question" => ("Question", false, Completes::Nothing),
        "Terms" => ("Terms", true, Completes::Terms),
        "EntityIDs" => ("Entity IDs", false, Completes::Entities),
        "Space.SpaceID" => ("Space", false, Completes::Spaces),
        "Space.MLocation" => ("M-Locations", false, Completes::Locations),
        "ProcessActions" => ("Steps", true, Completes::Statements),
        "Commitments" => ("Commit", true, Completes::CommitmentStatements),
        "ReleasedCommitmentIDs" => ("Release", false, Completes::CommitmentIds),
        "UserID" => ("User", false, Completes::Users),
        "Feedback.Hypothesis" => ("Hypothesis", false, Completes::Nothing),
        "Feedback.Conflicts" => ("Conflicts", true, Completes::Cues),
        "Feedback.Question" => ("Question", false, Completes::Nothing),
        _ => ("(JSON)", true, Completes::Nothing),
    }
}

fn member_help(key: &str) -> Option<&'static str> {
    Some(match key {
        "Space.SpaceID" => "The Space the Request concerns.",
        "Space.MLocation" => "M-Locations, separated by commas or spaces.",
        "Terms" => "One term per line; \"term : Class\" gives the class you assume.",
        "EntityIDs" => "Entity and Item IDs, separated by commas or spaces.",
        "ProcessActions" => {
            "One Process Action statement per line, e.g. MM-Move Nil Avatar#7 To MLoc:Square.Stage."
        }
        "Commitments" => "One per line: \"c1: Subject Predicate Object\" (the ID may be left out).",
        "ReleasedCommitmentIDs" => "CommitmentIDs, separated by commas or spaces.",
        "Feedback.Hypothesis" => {
            "What Basic Knowledge assumes, e.g. \"Emotion is curious\" or \"wants to …\"."
        }
        "Feedback.Conflicts" => "Evidence that conflicts with the hypothesis, one per line.",
        "Feedback.Question" => "What Basic Knowledge asks.",
        _ => return None,
    })
}

fn form_knows(key: &str) -> bool {
    matches!(
        key,
        "Question"
            | "Terms"
            | "EntityIDs"
            | "ProcessActions"
            | "Commitments"
            | "ReleasedCommitmentIDs"
            | "UserID"
    )
}

fn list(text: &str) -> Vec<String> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// A field's text as the JSON of its property (`None` when the field is empty).
pub fn encode(key: &str, text: &str) -> Result<Option<Value>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value = match key {
        "Question" | "UserID" | "Space.SpaceID" | "Feedback.Hypothesis" | "Feedback.Question" => {
            json!(text.trim())
        }
        "EntityIDs" | "Space.MLocation" | "ReleasedCommitmentIDs" => json!(list(text)),
        "Feedback.Conflicts" => json!(lines(text)),
        "Terms" => Value::Array(
            lines(text)
                .into_iter()
                .map(|l| match l.split_once(" : ") {
                    Some((t, c)) => json!({"Text": t.trim(), "Class": c.trim()}),
                    None => json!({"Text": l}),
                })
                .collect(),
        ),
        "ProcessActions" => Value::Array(
            lines(text)
                .into_iter()
                .enumerate()
                .map(|(i, l)| json!({"Step": i, "Statement": l}))
                .collect(),
        ),
        "Commitments" => {
            let parsed: Vec<(Option<String>, String)> = lines(text)
                .into_iter()
                .map(|l| match l.split_once(": ") {
                    Some((id, s)) if !id.contains(char::is_whitespace) && !id.is_empty() => {
                        (Some(id.to_owned()), s.trim().to_owned())
                    }
                    _ => (None, l.to_owned()),
                })
                .collect();
            let mut used: Vec<String> = parsed.iter().filter_map(|(id, _)| id.clone()).collect();
            let mut out = Vec::new();
            for (id, statement) in parsed {
                let id = id.unwrap_or_else(|| {
                    let n = (1..)
                        .find(|n| !used.contains(&format!("c{n}")))
                        .unwrap_or(1);
                    used.push(format!("c{n}"));
                    format!("c{n}")
                });
                out.push(json!({"CommitmentID": id, "Statement": statement}));
            }
            Value::Array(out)
        }
        _ => {
            serde_json::from_str(text).map_err(|e| format!("not JSON: {}", SyntaxError::from(e)))?
        }
    };
    Ok(Some(value))
}

/// A property's JSON as the text of its field; `None` when the form cannot show it.
pub fn decode(key: &str, value: &Value) -> Option<String> {
    let strings = |v: &Value| -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    Some(match key {
        "Question" | "UserID" | "Space.SpaceID" | "Feedback.Hypothesis" | "Feedback.Question" => {
            value.as_str()?.to_owned()
        }
        "EntityIDs" | "Space.MLocation" | "ReleasedCommitmentIDs" => strings(value)?.join(", "),
        "Feedback.Conflicts" => strings(value)?.join("\n"),
        "Terms" => value
            .as_array()?
            .iter()
            .map(|t| {
                let text = t.get("Text")?.as_str()?;
                if t.as_object()?.keys().any(|k| k != "Text" && k != "Class") {
                    return None;
                }
                Some(match t.get("Class").and_then(Value::as_str) {
                    Some(c) => format!("{text} : {c}"),
                    None => text.to_owned(),
                })
            })
            .collect::<Option<Vec<_>>>()?
            .join("\n"),
        "ProcessActions" => {
            let steps = value.as_array()?;
            // The form numbers steps by line; a Request with other numbers stays raw.
            let ordered = steps
                .iter()
                .enumerate()
                .all(|(i, s)| s.get("Step").and_then(Value::as_u64) == Some(i as u64));
            if !ordered {
                return None;
            }
            steps
                .iter()
                .map(|s| s.get("Statement")?.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()?
                .join("\n")
        }
        "Commitments" => value
            .as_array()?
            .iter()
            .map(|c| {
                Some(format!(
                    "{}: {}",
                    c.get("CommitmentID")?.as_str()?,
                    c.get("Statement")?.as_str()?
                ))
            })
            .collect::<Option<Vec<_>>>()?
            .join("\n"),
        _ => serde_json::to_string_pretty(value).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx<'a>(v: &'a Vocabulary, d: &'a CommonDefaults) -> Context<'a> {
        Context {
            vocabulary: v,
            commitments: vec!["c1".into()],
            dialog_id: "dialog",
            next_turn: 4,
            defaults: d,
        }
    }

    fn vocabulary() -> Vocabulary {
        let mut v = Vocabulary::default();
        for e in ["Avatar#7", "Kiosk#3", "Process#Market"] {
            v.add(Words::Entities, e);
        }
        for l in ["MLoc:Square.Stage", "MLoc:Square.Gate"] {
            v.add(Words::MLocations, l);
        }
        for a in ["MM-Move", "MM-Add", "Post"] {
            v.add(Words::Actions, a);
        }
        v
    }

    fn type_text(c: &mut Composer, text: &str, ctx: &Context) {
        for ch in text.chars() {
            let key = if ch == '\n' {
                KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)
            } else {
                KeyEvent::new(KeyCode::Char(ch), KeyModifiers::NONE)
            };
            c.handle_key(key, ctx);
        }
    }

    #[test]
    fn the_form_shows_what_the_kind_uses() {
        let mut c = Composer::new(Interface::Dac);
        c.set_kind(Kind::Feasibility);
        let keys: Vec<&str> = c.fields.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "Question",
                "Space.SpaceID",
                "Space.MLocation",
                "ProcessActions",
                "Commitments",
                "ReleasedCommitmentIDs"
            ]
        );
        c.set_kind(Kind::SemanticGrounding);
        let keys: Vec<&str> = c.fields.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            ["Question", "Terms", "Commitments", "ReleasedCommitmentIDs"]
        );
        let u = Composer::new(Interface::Usr);
        let keys: Vec<&str> = u.fields.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "UserID",
                "Feedback.Hypothesis",
                "Feedback.Conflicts",
                "Feedback.Question"
            ]
        );
    }

    #[test]
    fn form_and_raw_carry_the_request_across() {
        let (v, d) = (vocabulary(), CommonDefaults::default());
        let ctx = ctx(&v, &d);
        let mut c = Composer::new(Interface::Dac);
        c.set_kind(Kind::Feasibility);
        c.row = 4; // Steps
        type_text(
            &mut c,
            "MM-Move Nil Avatar#7 To MLoc:Square.Stage\nPost Nil Kiosk#3 To Process#Market",
            &ctx,
        );
        c.row = 5;
        type_text(&mut c, "Avatar#7 locatedAt MLoc:Square.Gate", &ctx);
        assert!(c.checked.ok(), "{:?}", c.checked);
        let request = c.preview(&ctx).unwrap();
        assert_eq!(request["TurnIndex"], 4);
        assert_eq!(
            request["ProcessActions"][1]["Statement"],
            "Post Nil Kiosk#3 To Process#Market"
        );
        assert_eq!(request["Commitments"][0]["CommitmentID"], "c1");
        c.toggle_mode(&ctx);
        assert_eq!(c.mode, Mode::Raw);
        assert!(text_of(&c.raw).contains("\"DialogID\": \"dialog\""));
        // An edit in the raw JSON shows in the form; unknown properties are kept aside.
        let mut edited: Value = serde_json::from_str(&text_of(&c.raw)).unwrap();
        edited["DescrMetadata"] = json!("note");
        edited["EntityIDs"] = json!(["Kiosk#3"]);
        c.raw = editor(&edited.to_string());
        c.toggle_mode(&ctx);
        assert_eq!(c.mode, Mode::Form, "{:?}", c.message);
        assert_eq!(c.extra.get("DescrMetadata"), Some(&json!("note")));
        assert_eq!(
            c.extra.get("EntityIDs"),
            Some(&json!(["Kiosk#3"])),
            "kept although feasibility's form does not show it"
        );
        let again = c.preview(&ctx).unwrap();
        assert_eq!(again["ProcessActions"], request["ProcessActions"]);
        assert_ne!(
            again["QueryID"], request["QueryID"],
            "identity fields are made afresh"
        );
        // Broken JSON stays raw, with the reason.
        c.toggle_mode(&ctx);
        c.raw = editor("{\"Kind\": ");
        c.recheck(&ctx);
        assert!(c.checked.syntax.is_some());
        c.toggle_mode(&ctx);
        assert_eq!(c.mode, Mode::Raw);
        assert!(c.message.as_deref().unwrap().contains("not JSON"));
    }

    #[test]
    fn statements_are_checked_and_completed_as_typed() {
        let (v, d) = (vocabulary(), CommonDefaults::default());
        let ctx = ctx(&v, &d);
        let mut c = Composer::new(Interface::Dac);
        c.set_kind(Kind::Feasibility);
        c.row = 4;
        type_text(&mut c, "MM-Mo", &ctx);
        assert_eq!(c.completion.as_ref().unwrap().items, ["MM-Move"]);
        assert!(c.handle_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE), &ctx));
        type_text(&mut c, "Nil Av", &ctx);
        assert_eq!(c.completion.as_ref().unwrap().items, ["Avatar#7"]);
        c.handle_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE), &ctx);
        type_text(&mut c, "To MLoc:Square.S", &ctx);
        assert_eq!(c.completion.as_ref().unwrap().items, ["MLoc:Square.Stage"]);
        c.handle_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE), &ctx);
        assert_eq!(
            c.fields[3].editor.lines()[0],
            "MM-Move Nil Avatar#7 To MLoc:Square.Stage "
        );
        assert!(c.checked.statements.is_empty());
        type_text(&mut c, "Towards X", &ctx);
        let (line, error) = &c.checked.statements[0];
        assert_eq!(
            (*line, error.position, error.expected),
            (0, 42, Expected::Preposition)
        );
        // Without a completion, Tab leaves the composer.
        c.completion = None;
        assert!(!c.handle_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE), &ctx));
    }

    #[test]
    fn encode_and_decode_are_inverse() {
        for (key, text) in [
            ("Terms", "fountain\nstand : Kiosk"),
            ("EntityIDs", "Avatar#7, Kiosk#3"),
            ("Commitments", "c1: Avatar#7 locatedAt MLoc:Square.Gate"),
            (
                "ProcessActions",
                "MM-Move Nil Avatar#7 To MLoc:Square.Stage",
            ),
            ("Feedback.Conflicts", "looked away\nfrowned"),
        ] {
            let value = encode(key, text).unwrap().unwrap();
            assert_eq!(decode(key, &value).as_deref(), Some(text), "{key}");
        }
        assert_eq!(
            encode("Commitments", "Kiosk#3 not locatedAt MLoc:Square.Stage")
                .unwrap()
                .unwrap()[0]["CommitmentID"],
            "c1"
        );
    }
}
