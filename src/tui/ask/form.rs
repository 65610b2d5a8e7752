//! An elicitation's form, built field by field from the schema the server sent (MCP's
//! restricted form schemas: an object of strings, numbers, booleans, single and multiple
//! choices), and read back as the object the server gets. The schema itself judges the
//! answer (jsonschema), so its rules (required, lengths, ranges, formats, patterns) are not
//! written again here; what the schema cannot say (a number that does not parse) is said by
//! the field.

use crate::tui::action::Action;
use crate::tui::overlay::Input;
use ratatui::crossterm::event::KeyEvent;
use serde_json::{Map, Value};

/// A form shows at most this many fields (a server's schema is outside data).
pub const MAX_FIELDS: usize = 100;

/// One choice of a single or multiple choice field: what is sent, and what is shown.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub value: Value,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FieldKind {
    /// A string; `format` as the schema names it (email, uri, date, date-time).
    Text {
        input: Input,
        format: Option<String>,
    },
    Number {
        input: Input,
        integer: bool,
    },
    /// A boolean; None until chosen (when the schema gives no default).
    Flag(Option<bool>),
    /// One of the choices; None until chosen.
    One {
        choices: Vec<Choice>,
        chosen: Option<usize>,
    },
    /// Any of the choices; `at` is the choice under the cursor.
    Many {
        choices: Vec<Choice>,
        chosen: Vec<bool>,
        at: usize,
    },
    /// A shape the form does not know: its JSON, typed.
    Json {
        input: Input,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The property name (what the server reads).
    pub name: String,
    /// Its title, else its name.
    pub label: String,
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
    /// Why the last answer was not taken, for this field.
    pub problem: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    pub schema: Value,
    pub fields: Vec<Field>,
    pub focus: usize,
    /// Fields the schema has beyond what is shown (`MAX_FIELDS`).
    pub hidden: usize,
    /// What the schema says that belongs to no field.
    pub problem: Option<String>,
}

/// The text of a JSON value as a field shows it.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The choices a property offers: `enum` (with the legacy `enumNames` as labels), or
/// `oneOf`/`anyOf` of `{const, title}`.
fn choices_of(p: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        let names = p.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| Choice {
                    value: v.clone(),
                    label: names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| shown(v)),
                })
                .collect(),
        );
    }
    let options = p
        .get("oneOf")
        .or_else(|| p.get("anyOf"))
        .and_then(Value::as_array)?;
    let choices: Vec<Choice> = options
        .iter()
        .filter_map(|o| {
            let value = o.get("const")?.clone();
            let label = o
                .get("title")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| shown(&value));
            Some(Choice { value, label })
        })
        .collect();
    (!choices.is_empty()).then_some(choices)
}

fn kind_of(p: &Value) -> FieldKind {
    let default = p.get("default");
    let typ = p.get("type").and_then(Value::as_str);
    if typ == Some("array") {
        if let Some(choices) = p.get("items").and_then(choices_of) {
            let given: Vec<&Value> = default
                .and_then(Value::as_array)
                .map(|d| d.iter().collect())
                .unwrap_or_default();
            let chosen = choices.iter().map(|c| given.contains(&&c.value)).collect();
            return FieldKind::Many {
                choices,
                chosen,
                at: 0,
            };
        }
    } else if let Some(choices) = choices_of(p) {
        let chosen = default.and_then(|d| choices.iter().position(|c| &c.value == d));
        return FieldKind::One { choices, chosen };
    }
    let text = |d: Option<&Value>| Input::new(&d.map(shown).unwrap_or_default());
    match typ {
        Some("string") => FieldKind::Text {
            input: text(default),
            format: p.get("format").and_then(Value::as_str).map(str::to_owned),
        },
        Some(t @ ("number" | "integer")) => FieldKind::Number {
            input: text(default),
            integer: t == "integer",
        },
        Some("boolean") => FieldKind::Flag(default.and_then(Value::as_bool)),
        _ => FieldKind::Json {
            input: Input::new(&default.map(Value::to_string).unwrap_or_default()),
        },
    }
}

impl Form {
    /// The form a requested schema describes: one field per property, in the schema's order,
    /// each starting from its default.
    pub fn new(schema: Value) -> Form {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = schema.get("properties").and_then(Value::as_object);
        let all = properties.map(Map::len).unwrap_or(0);
        let fields = properties
            .into_iter()
            .flatten()
            .take(MAX_FIELDS)
            .map(|(name, p)| Field {
                name: name.clone(),
                label: p
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or(name)
                    .to_owned(),
                description: p
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                required: required.contains(&name.as_str()),
                kind: kind_of(p),
                problem: None,
            })
            .collect();
        Form {
            fields,
            focus: 0,
            hidden: all.saturating_sub(MAX_FIELDS),
            problem: None,
            schema,
        }
    }

    pub fn next(&mut self) {
        if !self.fields.is_empty() {
            self.focus = (self.focus + 1) % self.fields.len();
        }
    }

    pub fn previous(&mut self) {
        if !self.fields.is_empty() {
            self.focus = (self.focus + self.fields.len() - 1) % self.fields.len();
        }
    }

    /// Whether the field with the focus is typed into (its letters are text, not moves).
    pub fn takes_text(&self) -> bool {
        matches!(
            self.fields.get(self.focus).map(|f| &f.kind),
            Some(FieldKind::Text { .. } | FieldKind::Number { .. } | FieldKind::Json { .. })
        )
    }

    /// A key for the field with the focus, with every action the key map gives it in the
    /// `overlay` place: next-tab / previous-tab change a choice (→ / Space and ←, as in the
    /// defaults form); a field's own beside (field-yes and field-no on a yes-or-no, pick
    /// checks the choice under the cursor of a multiple choice, clear-field empties). False
    /// when the field has no use for the key.
    pub fn key(&mut self, key: &KeyEvent, actions: &[Action], edit: Option<&Action>) -> bool {
        let Some(field) = self.fields.get_mut(self.focus) else {
            return false;
        };
        let has = |a: Action| actions.contains(&a);
        let clear = has(Action::ClearField);
        let step = if has(Action::NextDetailTab) {
            Some(true)
        } else if has(Action::PrevDetailTab) {
            Some(false)
        } else {
            None
        };
        match &mut field.kind {
            FieldKind::Text { input, .. }
            | FieldKind::Number { input, .. }
            | FieldKind::Json { input } => input.key(key, edit).is_some(),
            FieldKind::Flag(on) => {
                *on = if has(Action::FieldYes) {
                    Some(true)
                } else if has(Action::FieldNo) {
                    Some(false)
                } else if clear {
                    None
                } else if step.is_some() {
                    Some(!on.unwrap_or(false))
                } else {
                    return false;
                };
                true
            }
            FieldKind::One { choices, chosen } => {
                let n = choices.len();
                match step {
                    _ if clear => *chosen = None,
                    Some(true) if n > 0 => *chosen = Some(chosen.map_or(0, |c| (c + 1) % n)),
                    Some(false) if n > 0 => {
                        *chosen = Some(chosen.map_or(n - 1, |c| (c + n - 1) % n))
                    }
                    _ => return false,
                }
                true
            }
            FieldKind::Many {
                choices,
                chosen,
                at,
            } => {
                let n = choices.len();
                match step {
                    _ if has(Action::Pick) => {
                        if let Some(c) = chosen.get_mut(*at) {
                            *c = !*c;
                        }
                    }
                    Some(true) if n > 0 => *at = (*at + 1) % n,
                    Some(false) if n > 0 => *at = (*at + n - 1) % n,
                    _ => return false,
                }
                true
            }
        }
    }

    /// Pasted text goes into the field with the focus, when it takes text (one line: a
    /// form's fields are lines).
    pub fn paste(&mut self, text: &str) {
        if let Some(Field {
            kind:
                FieldKind::Text { input, .. }
                | FieldKind::Number { input, .. }
                | FieldKind::Json { input },
            ..
        }) = self.fields.get_mut(self.focus)
        {
            let line = text.replace("\r\n", " ").replace(['\r', '\n'], " ");
            input.insert_str(&line);
        }
    }

    /// A field's value as sent; Ok(None) when it is left empty.
    fn value(field: &Field) -> Result<Option<Value>, String> {
        Ok(match &field.kind {
            FieldKind::Text { input, .. } => {
                (!input.text().is_empty()).then(|| Value::String(input.text().to_owned()))
            }
            FieldKind::Number { input, integer } => {
                let text = input.text().trim();
                if text.is_empty() {
                    None
                } else if *integer {
                    let n: i64 = text
                        .parse()
                        .map_err(|_| format!("\"{text}\" is not a whole number"))?;
                    Some(Value::from(n))
                } else {
                    let n: f64 = text
                        .parse()
                        .ok()
                        .filter(|n: &f64| n.is_finite())
                        .ok_or_else(|| format!("\"{text}\" is not a number"))?;
                    Some(
                        serde_json::Number::from_f64(n)
                            .map(Value::Number)
                            .unwrap_or(Value::Null),
                    )
                }
            }
            FieldKind::Flag(on) => on.map(Value::Bool),
            FieldKind::One { choices, chosen } => {
                chosen.and_then(|c| choices.get(c)).map(|c| c.value.clone())
            }
            FieldKind::Many {
                choices, chosen, ..
            } => {
                let values: Vec<Value> = choices
                    .iter()
                    .zip(chosen)
                    .filter(|(_, on)| **on)
                    .map(|(c, _)| c.value.clone())
                    .collect();
                (!values.is_empty()).then_some(Value::Array(values))
            }
            FieldKind::Json { input } => {
                let text = input.text().trim();
                if text.is_empty() {
                    None
                } else {
                    Some(
                        crate::protocol::json::from_str::<Value>(text)
                            .map_err(|e| format!("not JSON: {e}"))?,
                    )
                }
            }
        })
    }

    /// The answer: the fields as the object the server gets, when the schema takes it. When
    /// it does not, each problem is put on its field (or on the form), the focus goes to the
    /// first field with one, and Err says how many there are.
    pub fn answer(&mut self) -> Result<Value, usize> {
        self.problem = None;
        let mut content = Map::new();
        let mut problems = 0;
        for field in &mut self.fields {
            field.problem = None;
            match Form::value(field) {
                Ok(Some(v)) => {
                    content.insert(field.name.clone(), v);
                }
                Ok(None) => {}
                Err(why) => {
                    field.problem = Some(why);
                    problems += 1;
                }
            }
        }
        let content = Value::Object(content);
        if problems == 0 {
            match jsonschema::options()
                .should_validate_formats(true)
                .build(&self.schema)
            {
                Ok(validator) => {
                    for error in validator.iter_errors(&content) {
                        problems += 1;
                        let property = match error.kind() {
                            jsonschema::error::ValidationErrorKind::Required { property } => {
                                property.as_str().map(str::to_owned)
                            }
                            _ => error
                                .instance_path()
                                .as_str()
                                .trim_start_matches('/')
                                .split('/')
                                .next()
                                .filter(|p| !p.is_empty())
                                .map(|p| p.replace("~1", "/").replace("~0", "~")),
                        };
                        let why = match error.kind() {
                            jsonschema::error::ValidationErrorKind::Required { .. } => {
                                "required".to_owned()
                            }
                            _ => error.to_string(),
                        };
                        match self
                            .fields
                            .iter_mut()
                            .find(|f| Some(&f.name) == property.as_ref())
                        {
                            Some(field) if field.problem.is_none() => field.problem = Some(why),
                            Some(_) => {}
                            None => {
                                self.problem.get_or_insert(why);
                            }
                        }
                    }
                }
                // A schema that does not compile judges nothing: the server gets what was
                // typed, and the form says why it could not check it.
                Err(e) => {
                    self.problem = Some(format!("the server's schema cannot be checked: {e}"));
                    return Ok(content);
                }
            }
        }
        if problems == 0 {
            return Ok(content);
        }
        if let Some(first) = self.fields.iter().position(|f| f.problem.is_some()) {
            self.focus = first;
        }
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};
    use serde_json::json;

    /// A key as the ask overlay gives it: with the default key map's action, none while
    /// typing into a field.
    fn press(form: &mut Form, code: KeyCode) -> bool {
        let key = KeyEvent::new(code, KeyModifiers::NONE);
        let map = crate::tui::action::Keymap::default();
        let mut actions = map.actions_in(&key, crate::tui::action::Context::Overlay);
        if form.takes_text() && matches!(code, KeyCode::Char(_)) {
            actions.clear();
        }
        form.key(&key, &actions, map.edit(&key).as_ref())
    }

    fn typed(form: &mut Form, text: &str) {
        for c in text.chars() {
            press(form, KeyCode::Char(c));
        }
    }

    fn booking() -> Form {
        Form::new(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name", "minLength": 2},
                "seats": {"type": "integer", "minimum": 1, "maximum": 8, "default": 2},
                "vegetarian": {"type": "boolean"},
                "room": {"type": "string", "oneOf": [
                    {"const": "R1", "title": "Garden room"},
                    {"const": "R2", "title": "Hall"}]},
                "extras": {"type": "array", "items": {"enum": ["wine", "cake"]}},
                "email": {"type": "string", "format": "email"}
            },
            "required": ["name", "room"]
        }))
    }

    #[test]
    fn a_schema_becomes_one_field_per_property_from_its_defaults() {
        let form = booking();
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["name", "seats", "vegetarian", "room", "extras", "email"]
        );
        assert_eq!(form.fields[0].label, "Your name");
        assert!(form.fields[0].required && !form.fields[1].required);
        assert!(
            matches!(&form.fields[1].kind, FieldKind::Number { input, integer: true } if input.text() == "2")
        );
        let FieldKind::One { choices, chosen } = &form.fields[3].kind else {
            panic!("room is a choice")
        };
        assert_eq!(choices[0].label, "Garden room");
        assert_eq!(*chosen, None);
    }

    #[test]
    fn the_answer_is_the_fields_the_schema_takes() {
        let mut form = booking();
        typed(&mut form, "Ada");
        form.focus = 2;
        press(&mut form, KeyCode::Char(' '));
        form.focus = 3;
        press(&mut form, KeyCode::Right);
        press(&mut form, KeyCode::Right);
        form.focus = 4;
        press(&mut form, KeyCode::Right);
        press(&mut form, KeyCode::Char(' '));
        assert_eq!(
            form.answer().unwrap(),
            json!({"name": "Ada", "seats": 2, "vegetarian": true, "room": "R2", "extras": ["cake"]})
        );
    }

    #[test]
    fn what_the_schema_refuses_is_said_on_its_field_and_the_focus_goes_there() {
        let mut form = booking();
        typed(&mut form, "A");
        form.focus = 1;
        press(&mut form, KeyCode::Backspace);
        typed(&mut form, "9");
        form.focus = 5;
        typed(&mut form, "not-an-address");
        assert_eq!(form.answer(), Err(4));
        let problem = |name: &str| {
            form.fields
                .iter()
                .find(|f| f.name == name)
                .and_then(|f| f.problem.clone())
                .unwrap_or_default()
        };
        assert!(problem("name").contains("shorter"), "{}", problem("name"));
        assert!(problem("seats").contains("maximum"), "{}", problem("seats"));
        assert_eq!(problem("room"), "required");
        assert!(problem("email").contains("email"), "{}", problem("email"));
        assert_eq!(form.focus, 0);
    }

    #[test]
    fn a_number_that_does_not_parse_is_said_before_the_schema_is_asked() {
        let mut form = booking();
        form.focus = 1;
        press(&mut form, KeyCode::Backspace);
        typed(&mut form, "two");
        assert_eq!(form.answer(), Err(1));
        assert_eq!(
            form.fields[1].problem.as_deref(),
            Some("\"two\" is not a whole number")
        );
    }

    #[test]
    fn a_pasted_block_stays_one_line_in_a_field() {
        let mut form = booking();
        form.paste("Ada\r\nLovelace");
        assert!(
            matches!(&form.fields[0].kind, FieldKind::Text { input, .. } if input.text() == "Ada Lovelace")
        );
    }

    #[test]
    fn a_huge_schema_shows_a_bounded_form() {
        let properties: Map<String, Value> = (0..500)
            .map(|i| (format!("f{i}"), json!({"type": "string"})))
            .collect();
        let form = Form::new(json!({"type": "object", "properties": properties}));
        assert_eq!(form.fields.len(), MAX_FIELDS);
        assert_eq!(form.hidden, 400);
    }
}
