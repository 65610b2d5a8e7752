//! The composer's fields, in one table: for each property (or member of an object property)
//! of a Request, its label, help, widget, height, what it completes from, and how its text
//! becomes JSON and back. Which fields a form shows comes from the schemas' property
//! catalogue (the properties of the mode, and `x-bkn-kinds` for BKN-DAC); the table adds only
//! what the schema cannot say. A property the table does not name is still shown, as JSON.
//! Adding a property to the form is one entry here.

use crate::protocol::Interface;
use crate::protocol::document::SyntaxError;
use crate::protocol::resources::Words;
use crate::protocol::schema::{self};
use serde_json::{Value, json};

/// How a field is edited, and how its text becomes JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Widget {
    /// One line of text: a string.
    Text,
    /// IDs separated by commas or spaces: an array of strings.
    Ids,
    /// One item per line: an array of strings.
    Lines,
    /// One term per line, `term : Class` giving the class assumed: `[{Text, Class?}]`.
    Terms,
    /// One Process Action statement per line, numbered by line: `[{Step, Statement}]`.
    Steps,
    /// One per line, `c1: Subject Predicate Object` (the ID may be left out):
    /// `[{CommitmentID, Statement}]`.
    Commitments,
    /// Any JSON (a property this table does not know).
    Json,
}

impl Widget {
    pub fn multiline(self) -> bool {
        matches!(
            self,
            Widget::Lines | Widget::Terms | Widget::Steps | Widget::Commitments | Widget::Json
        )
    }
}

/// What a field completes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completes {
    Nothing,
    /// A list the server's resources offer (and the composer warns about a value none
    /// names).
    Words(Words),
    /// The Process Action grammar, with the server's Actions, IDs and M-Locations.
    Statements,
    /// The CommitmentIDs the dialogue has seen.
    CommitmentIds,
    /// IDs, predicates and classes for `Subject Predicate Object`.
    CommitmentStatements,
    /// Classes after ` : ` in a term.
    TermClasses,
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldSpec {
    pub interface: Interface,
    /// The property it edits: a top-level name, or `Parent.Member`.
    pub key: String,
    pub label: String,
    /// Help shown in the empty field (the schema's description when the table has none).
    pub help: String,
    pub widget: Widget,
    /// The most lines the field shows at once (it scrolls beyond).
    pub height: u16,
    pub completes: Completes,
}

/// The UI table. `help: None` takes the schema's description.
struct Row {
    interface: Interface,
    key: &'static str,
    label: &'static str,
    help: Option<&'static str>,
    widget: Widget,
    height: u16,
    completes: Completes,
}

use Interface::{Dac, Usr};

const TABLE: &[Row] = &[
    Row {
        interface: Usr,
        key: "UserID",
        label: "User",
        help: None,
        widget: Widget::Text,
        height: 1,
        completes: Completes::Words(Words::Users),
    },
    Row {
        interface: Dac,
        key: "Question",
        label: "Question",
        help: None,
        widget: Widget::Text,
        height: 1,
        completes: Completes::Nothing,
    },
    Row {
        interface: Dac,
        key: "Terms",
        label: "Terms",
        help: Some("One term per line; \"term : Class\" gives the class you assume."),
        widget: Widget::Terms,
        height: 4,
        completes: Completes::TermClasses,
    },
    Row {
        interface: Dac,
        key: "EntityIDs",
        label: "Entity IDs",
        help: Some("Entity and Item IDs, separated by commas or spaces."),
        widget: Widget::Ids,
        height: 1,
        completes: Completes::Words(Words::Entities),
    },
    Row {
        interface: Dac,
        key: "Space.SpaceID",
        label: "Space",
        help: Some("The Space the Request concerns."),
        widget: Widget::Text,
        height: 1,
        completes: Completes::Words(Words::Spaces),
    },
    Row {
        interface: Dac,
        key: "Space.MLocation",
        label: "M-Locations",
        help: Some("M-Locations, separated by commas or spaces."),
        widget: Widget::Ids,
        height: 1,
        completes: Completes::Words(Words::MLocations),
    },
    Row {
        interface: Dac,
        key: "ProcessActions",
        label: "Steps",
        help: Some(
            "One Process Action statement per line, e.g. MM-Move Nil Avatar#7 To MLoc:Square.Stage.",
        ),
        widget: Widget::Steps,
        height: 5,
        completes: Completes::Statements,
    },
    Row {
        interface: Dac,
        key: "Commitments",
        label: "Commit",
        help: Some("One per line: \"c1: Subject Predicate Object\" (the ID may be left out)."),
        widget: Widget::Commitments,
        height: 4,
        completes: Completes::CommitmentStatements,
    },
    Row {
        interface: Dac,
        key: "ReleasedCommitmentIDs",
        label: "Release",
        help: Some("CommitmentIDs, separated by commas or spaces."),
        widget: Widget::Ids,
        height: 1,
        completes: Completes::CommitmentIds,
    },
    Row {
        interface: Usr,
        key: "Feedback.Hypothesis",
        label: "Hypothesis",
        help: Some("What Basic Knowledge assumes, e.g. \"Emotion is curious\" or \"wants to …\"."),
        widget: Widget::Text,
        height: 1,
        completes: Completes::Nothing,
    },
    Row {
        interface: Usr,
        key: "Feedback.Conflicts",
        label: "Conflicts",
        help: Some("Evidence that conflicts with the hypothesis, one per line."),
        widget: Widget::Lines,
        height: 4,
        completes: Completes::Words(Words::Cues),
    },
    Row {
        interface: Usr,
        key: "Feedback.Question",
        label: "Question",
        help: Some("What Basic Knowledge asks."),
        widget: Widget::Text,
        height: 1,
        completes: Completes::Nothing,
    },
];

impl Row {
    fn spec(&self) -> FieldSpec {
        let top = self.key.split('.').next().unwrap_or(self.key);
        let help = match self.help {
            Some(h) => h.to_owned(),
            None => schema::property(self.interface, crate::protocol::Mode::Request, top)
                .map(|p| p.description.clone())
                .unwrap_or_default(),
        };
        FieldSpec {
            interface: self.interface,
            key: self.key.to_owned(),
            label: self.label.to_owned(),
            help,
            widget: self.widget,
            height: self.height,
            completes: self.completes,
        }
    }
}

/// The fields of a form: the Request properties of the interface that the Kind uses (all of
/// them for BKN-USR), each the table's rows for it (an object property, one row per member),
/// or one JSON field for a property the table does not know. In the table's order, the
/// unknown ones after.
pub fn fields_for(interface: Interface, kind: Option<&str>) -> Vec<FieldSpec> {
    let mut known: Vec<(usize, FieldSpec)> = Vec::new();
    let mut generic: Vec<FieldSpec> = Vec::new();
    for p in schema::properties(interface, crate::protocol::Mode::Request) {
        if p.common || p.name == "Kind" {
            continue;
        }
        if let (Some(kind), Some(kinds)) = (kind, &p.kinds)
            && !kinds.iter().any(|k| k == kind)
        {
            continue;
        }
        let rows: Vec<(usize, &Row)> = TABLE
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.interface == interface
                    && (r.key == p.name
                        || r.key
                            .strip_prefix(p.name.as_str())
                            .is_some_and(|rest| rest.starts_with('.')))
            })
            .collect();
        if rows.is_empty() {
            generic.push(FieldSpec {
                interface,
                key: p.name.clone(),
                label: p.name.clone(),
                help: format!("{} (as JSON)", p.description),
                widget: Widget::Json,
                height: 4,
                completes: Completes::Nothing,
            });
        }
        known.extend(rows.into_iter().map(|(i, r)| (i, r.spec())));
    }
    known.sort_by_key(|(i, _)| *i);
    known.into_iter().map(|(_, f)| f).chain(generic).collect()
}

/// Whether the form can show a property at all (for some Kind), and so takes it out of the
/// properties it keeps aside.
pub fn form_knows(interface: Interface, key: &str) -> bool {
    TABLE.iter().any(|r| {
        r.interface == interface && (r.key == key || r.key.starts_with(&format!("{key}.")))
    })
}

/// The members the form shows of an object property (`Space` → `SpaceID`, `MLocation`).
pub fn members(interface: Interface, key: &str) -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|r| r.interface == interface)
        .filter_map(|r| r.key.strip_prefix(key)?.strip_prefix('.'))
        .collect()
}

fn ids(text: &str) -> Vec<String> {
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

/// `c1: statement` or a bare statement.
pub fn split_commitment(line: &str) -> (Option<&str>, &str) {
    match line.split_once(": ") {
        Some((id, s)) if !id.contains(char::is_whitespace) && !id.is_empty() => {
            (Some(id), s.trim())
        }
        _ => (None, line),
    }
}

/// The first `cN` that is not `taken`.
pub fn fresh_commitment_id(taken: &[String]) -> String {
    (1..)
        .map(|n| format!("c{n}"))
        .find(|id| !taken.contains(id))
        .expect("an unused ID")
}

/// A field's text as the JSON of its property (`None` when the field is empty). `taken` are
/// the CommitmentIDs the dialogue has seen: an ID left out gets one it has not.
pub fn encode(widget: Widget, text: &str, taken: &[String]) -> Result<Option<Value>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value = match widget {
        Widget::Text => json!(text.trim()),
        Widget::Ids => json!(ids(text)),
        Widget::Lines => json!(lines(text)),
        Widget::Terms => Value::Array(
            lines(text)
                .into_iter()
                .map(|l| match l.split_once(" : ") {
                    Some((t, c)) => json!({"Text": t.trim(), "Class": c.trim()}),
                    None => json!({"Text": l}),
                })
                .collect(),
        ),
        Widget::Steps => Value::Array(
            lines(text)
                .into_iter()
                .enumerate()
                .map(|(i, l)| json!({"Step": i, "Statement": l}))
                .collect(),
        ),
        Widget::Commitments => {
            let parsed: Vec<(Option<&str>, &str)> =
                lines(text).into_iter().map(split_commitment).collect();
            let mut used: Vec<String> = taken.to_vec();
            used.extend(parsed.iter().filter_map(|(id, _)| id.map(str::to_owned)));
            let mut out = Vec::new();
            for (id, statement) in parsed {
                let id = match id {
                    Some(id) => id.to_owned(),
                    None => {
                        let id = fresh_commitment_id(&used);
                        used.push(id.clone());
                        id
                    }
                };
                out.push(json!({"CommitmentID": id, "Statement": statement}));
            }
            Value::Array(out)
        }
        Widget::Json => crate::protocol::json::from_str(text)
            .map_err(|e: SyntaxError| format!("not JSON: {e}"))?,
    };
    Ok(Some(value))
}

/// A property's JSON as the text of its field; `None` when the form cannot show it.
pub fn decode(widget: Widget, value: &Value) -> Option<String> {
    let strings = |v: &Value| -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    Some(match widget {
        Widget::Text => value.as_str()?.to_owned(),
        Widget::Ids => strings(value)?.join(", "),
        Widget::Lines => strings(value)?.join("\n"),
        Widget::Terms => value
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
        Widget::Steps => {
            let steps = value.as_array()?;
            // The form numbers steps by line; a Request with other numbers stays raw.
            let ordered = steps.iter().enumerate().all(|(i, s)| {
                s.get("Step").and_then(crate::protocol::message::as_index) == Some(i as u64)
            });
            if !ordered {
                return None;
            }
            steps
                .iter()
                .map(|s| s.get("Statement")?.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()?
                .join("\n")
        }
        Widget::Commitments => value
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
        Widget::Json => serde_json::to_string_pretty(value).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_shows_what_the_kind_uses_in_the_tables_order() {
        let keys = |f: Vec<FieldSpec>| f.into_iter().map(|f| f.key).collect::<Vec<_>>();
        assert_eq!(
            keys(fields_for(Dac, Some("feasibility"))),
            [
                "Question",
                "Space.SpaceID",
                "Space.MLocation",
                "ProcessActions",
                "Commitments",
                "ReleasedCommitmentIDs"
            ]
        );
        assert_eq!(
            keys(fields_for(Dac, Some("semantic_grounding"))),
            ["Question", "Terms", "Commitments", "ReleasedCommitmentIDs"]
        );
        assert_eq!(
            keys(fields_for(Usr, None)),
            [
                "UserID",
                "Feedback.Hypothesis",
                "Feedback.Conflicts",
                "Feedback.Question"
            ]
        );
        // Help comes from the schema where the table has none.
        let question = &fields_for(Dac, Some("constraints"))[0];
        assert!(
            question.help.contains("natural language"),
            "{}",
            question.help
        );
    }

    #[test]
    fn encode_and_decode_are_inverse() {
        for (widget, text) in [
            (Widget::Terms, "fountain\nstand : Kiosk"),
            (Widget::Ids, "Avatar#7, Kiosk#3"),
            (
                Widget::Commitments,
                "c1: Avatar#7 locatedAt MLoc:Square.Gate",
            ),
            (Widget::Steps, "MM-Move Nil Avatar#7 To MLoc:Square.Stage"),
            (Widget::Lines, "looked away\nfrowned"),
        ] {
            let value = encode(widget, text, &[]).unwrap().unwrap();
            assert_eq!(decode(widget, &value).as_deref(), Some(text), "{widget:?}");
        }
    }

    #[test]
    fn commitments_without_an_id_get_ones_the_dialogue_has_not_used() {
        let taken = vec!["c1".to_owned(), "c3".to_owned()];
        let v = encode(
            Widget::Commitments,
            "A locatedAt B\nc2: C locatedAt D\nE locatedAt F",
            &taken,
        )
        .unwrap()
        .unwrap();
        let ids: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["CommitmentID"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["c4", "c2", "c5"]);
    }
}
