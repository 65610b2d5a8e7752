//! A lenient typed reading of a message, for showing it: every member the data types name is
//! read into the type the schema gives it when it has that type, and kept as the JSON that
//! came when it does not (a non-conformant peer's value is shown as it is, never dropped and
//! never made to look better); members the data types do not name are kept aside. Reading
//! never fails: the conformance engine says what is wrong, this only says what was sent.
//!
//! The names and types are the ones of the typed messages (`dac`, `usr`, `message`), which
//! `tests/schema_types.rs` holds to the schema files; `tests` here hold these views to them.

pub mod dac;
pub mod usr;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

pub use dac::{DacRequestView, DacResponseView};
pub use usr::{UsrRequestView, UsrResponseView};

/// A member of a message as it came.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Field<T> {
    /// Not in the message.
    #[default]
    Absent,
    /// Of the type the data type gives it.
    Known(T),
    /// Something else (another type, a value no enum has): the JSON as it came.
    Other(Value),
}

/// A member that is an array: each element read on its own (one odd element does not turn
/// the others into raw JSON).
pub type List<T> = Field<Vec<Field<T>>>;

impl<T> Field<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Field::Absent)
    }

    pub fn known(&self) -> Option<&T> {
        match self {
            Field::Known(v) => Some(v),
            _ => None,
        }
    }

    /// What a foreign peer sent that is not of the member's type.
    pub fn other(&self) -> Option<&Value> {
        match self {
            Field::Other(v) => Some(v),
            _ => None,
        }
    }
}

impl<T> Field<Vec<Field<T>>> {
    /// The elements of an array member (none when it is absent or not an array).
    pub fn items(&self) -> &[Field<T>] {
        self.known().map(Vec::as_slice).unwrap_or(&[])
    }
}

impl<T: fmt::Display> Field<Vec<Field<T>>> {
    /// Each element as text (see `text`); a member that is not an array as its JSON (a
    /// string in quotes: it does not pass for a list of one).
    pub fn texts(&self) -> Vec<Cow<'_, str>> {
        match self {
            Field::Absent => Vec::new(),
            Field::Known(items) => items.iter().map(Field::text).collect(),
            Field::Other(v) => vec![Cow::Owned(v.to_string())],
        }
    }
}

impl<T: fmt::Display> Field<T> {
    /// The value as text: a known one as the data type spells it, another as it came (a
    /// string without its quotes, anything else as JSON), an absent one empty.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Field::Absent => Cow::Borrowed(""),
            Field::Known(v) => Cow::Owned(v.to_string()),
            Field::Other(v) => raw_text(v),
        }
    }
}

impl Field<String> {
    /// The string, or what came instead (see `text`), without copying a string.
    pub fn str(&self) -> Cow<'_, str> {
        match self {
            Field::Known(s) => Cow::Borrowed(s),
            other => other.text(),
        }
    }
}

/// A JSON value as text for a person: a string without its quotes, anything else as JSON.
pub fn raw_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(match T::deserialize(&value) {
            Ok(known) => Field::Known(known),
            Err(_) => Field::Other(value),
        })
    }
}

impl<T: Serialize> Serialize for Field<T> {
    /// As it came (an absent member is skipped by `skip_serializing_if = "Field::is_absent"`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Absent => serializer.serialize_none(),
            Field::Known(v) => v.serialize(serializer),
            Field::Other(v) => v.serialize(serializer),
        }
    }
}

/// A turn's two messages read leniently, by the data type of the Request.
#[derive(Clone, Debug, PartialEq)]
pub enum Exchange {
    Dac {
        request: DacRequestView,
        response: Option<DacResponseView>,
    },
    Usr {
        request: UsrRequestView,
        response: Option<UsrResponseView>,
    },
}

impl Exchange {
    pub fn read(
        interface: crate::protocol::Interface,
        request: &Value,
        response: Option<&Value>,
    ) -> Exchange {
        match interface {
            crate::protocol::Interface::Dac => Exchange::Dac {
                request: read(request),
                response: response.map(read),
            },
            crate::protocol::Interface::Usr => Exchange::Usr {
                request: read(request),
                response: response.map(read),
            },
        }
    }

    /// The Response's Outcome, if a Response came.
    pub fn outcome(&self) -> Option<&Field<crate::protocol::message::Outcome>> {
        match self {
            Exchange::Dac { response, .. } => response.as_ref().map(|r| &r.outcome),
            Exchange::Usr { response, .. } => response.as_ref().map(|r| &r.outcome),
        }
    }

    /// The feasibility of a BKN-DAC turn's steps, when its Response has a Feasibility.
    pub fn verdict(&self) -> Option<dac::Verdict> {
        match self {
            Exchange::Dac {
                request,
                response: Some(response),
            } => response.verdict(request),
            _ => None,
        }
    }
}

/// Reads a view from a message; a message that is not an object reads as an empty view
/// (the Raw tab shows it as it is).
pub fn read<T: DeserializeOwned + Default>(message: &Value) -> T {
    T::deserialize(message).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::dac::PaStatus;
    use serde_json::json;

    #[derive(Deserialize)]
    struct One {
        a: Field<PaStatus>,
        b: List<String>,
    }

    #[test]
    fn a_value_of_another_type_is_kept_as_it_came() {
        let one: One = serde_json::from_value(json!({"a": "Maybe", "b": ["x", 3, null]})).unwrap();
        assert_eq!(one.a, Field::Other(json!("Maybe")));
        assert_eq!(one.a.text(), "Maybe");
        let items = one.b.items();
        assert_eq!(items[0], Field::Known("x".to_owned()));
        assert_eq!(items[1].text(), "3");
        assert_eq!(items[2].text(), "null");
        let one: One = serde_json::from_value(json!({"a": "Clash", "b": "x"})).unwrap();
        assert_eq!(one.a.known(), Some(&PaStatus::Clash));
        assert_eq!(one.b.other(), Some(&json!("x")));
        assert!(one.b.items().is_empty());
    }

    /// A message with every member its schema names, each of the type the schema gives it.
    fn every_member(schema: &Value) -> Value {
        if let Some(v) = schema.get("const") {
            return v.clone();
        }
        if let Some(v) = schema.get("enum").and_then(Value::as_array) {
            return v[0].clone();
        }
        for alternatives in ["anyOf", "oneOf"] {
            if let Some(first) = schema.get(alternatives).and_then(|a| a.get(0)) {
                return every_member(first);
            }
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => json!([every_member(&schema["items"])]),
            Some("string") => json!("2026-01-01T00:00:00.000Z"),
            Some("integer") => json!(1),
            Some("number") => json!(0.5),
            Some("boolean") => json!(true),
            _ => Value::Object(
                schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), every_member(v)))
                    .collect(),
            ),
        }
    }

    /// The view of `message` leaves nothing aside but the common members, and reads every
    /// member as its type.
    fn reads_every_member<T>(message: &Value)
    where
        T: DeserializeOwned + Default + Serialize + fmt::Debug + HasOther,
    {
        let mut view: T = read(message);
        assert_eq!(
            serde_json::to_value(&view).unwrap(),
            *message,
            "nothing dropped"
        );
        let aside: Vec<String> = view.other().keys().cloned().collect();
        for key in aside {
            let common = crate::protocol::message::COMMON_FIELDS.contains(&key.as_str())
                || key == "DescrMetadata";
            assert!(common, "{key} is not read by the view");
        }
        view.other().clear();
        let shown = format!("{view:?}");
        assert!(
            !shown.contains("Other("),
            "a member read as another type: {shown}"
        );
        assert!(
            !shown.contains("other: {\""),
            "a member left aside: {shown}"
        );
    }

    trait HasOther {
        fn other(&mut self) -> &mut serde_json::Map<String, Value>;
    }
    impl HasOther for DacRequestView {
        fn other(&mut self) -> &mut serde_json::Map<String, Value> {
            &mut self.other
        }
    }
    impl HasOther for DacResponseView {
        fn other(&mut self) -> &mut serde_json::Map<String, Value> {
            &mut self.other
        }
    }
    impl HasOther for UsrRequestView {
        fn other(&mut self) -> &mut serde_json::Map<String, Value> {
            &mut self.other
        }
    }
    impl HasOther for UsrResponseView {
        fn other(&mut self) -> &mut serde_json::Map<String, Value> {
            &mut self.other
        }
    }

    #[test]
    fn the_views_read_every_member_the_schemas_name() {
        use crate::protocol::schema::self_contained;
        use crate::protocol::{Interface, Mode};
        let example = |i, m| every_member(self_contained(i, m));
        reads_every_member::<DacRequestView>(&example(Interface::Dac, Mode::Request));
        reads_every_member::<DacResponseView>(&example(Interface::Dac, Mode::Response));
        reads_every_member::<UsrRequestView>(&example(Interface::Usr, Mode::Request));
        reads_every_member::<UsrResponseView>(&example(Interface::Usr, Mode::Response));
    }

    #[test]
    fn the_user_state_of_the_reference_server_is_read_whole() {
        let state = json!({"UserID": "User#A", "Cycle": 2, "CognitiveState": "focused",
            "Emotion": "calm", "SocialAttitude": "friendly",
            "Focus": {"TargetType": "Item", "TargetID": "Kiosk#9"},
            "Hypotheses": [{"Statement": "wants lemonade", "Confidence": 0.8, "Status": "supported"}],
            "Intentions": [{"Intent": "buy", "Confidence": 0.5}],
            "Beliefs": [{"Statement": "kiosk open", "Confidence": 1}],
            "Goals": ["refresh"], "Answer": {"Question": "q", "Text": "a"}});
        let mut message = json!({"Outcome": "answered", "RefinedUserState": state,
            "Engagement": {"Level": 0.4, "Mode": "interactive"},
            "Provenance": {"Sources": ["s"], "Method": "m", "Evidence": ["e"]}});
        reads_every_member::<UsrResponseView>(&message);
        // A foreign server's shape: kept aside, whole.
        message["RefinedUserState"]["Mood"] = json!({"valence": -1});
        let view: UsrResponseView = read(&message);
        let state = view.refined_user_state.known().unwrap();
        assert_eq!(state.other["Mood"], json!({"valence": -1}));
        assert_eq!(serde_json::to_value(&view).unwrap(), message);
    }

    #[test]
    fn a_foreign_servers_values_are_kept_and_marked() {
        let request = json!({"Kind": "feasibility", "ProcessActions": [
            {"Step": 0, "Statement": "MM-Move Nil Avatar#7 To MLoc:A"},
            {"Step": 1, "Statement": "MM-Add Nil Kiosk#9 At MLoc:B"},
            {"Step": 2, "Statement": "Post Nil Item#1 To User#B"}]});
        let response = json!({"Outcome": "mostly", "Feasibility": {"Overall": "feasible",
            "Steps": [{"Step": 0, "PAStatus": "Clash", "Reason": "c1 conflicts: whatever"},
                      {"Step": -1, "PAStatus": "Perhaps"},
                      "Ack", {"Step": 7, "PAStatus": "Ack"}]},
            "SourcesUsed": "all of them"});
        let request: DacRequestView = read(&request);
        let view: DacResponseView = read(&response);
        assert_eq!(
            serde_json::to_value(&view).unwrap(),
            response,
            "nothing dropped"
        );
        assert_eq!(view.outcome.text(), "mostly");
        assert_eq!(view.sources_used.texts(), ["\"all of them\""]);
        let verdict = view.verdict(&request).unwrap();
        use dac::StatusName;
        assert_eq!(
            verdict.counts,
            [
                (StatusName::Known(PaStatus::Ack), 1),
                (StatusName::Known(PaStatus::Clash), 1),
                (StatusName::Other("Perhaps".into()), 1),
                // A step that is not even an object is not taken for an Ack.
                (StatusName::Other("Ack".into()), 1),
            ]
        );
        assert_eq!(verdict.unanswered, [1, 2], "-1 is no Step of the Request");
        // The Ack of Step 7, which the Request does not have, is no Ack of the Request's.
        assert_eq!((verdict.acks, verdict.total), (0, 6));
        assert_eq!(
            verdict.implied,
            Some(crate::protocol::dac::Overall::Infeasible)
        );
        assert!(verdict.contradicted());
        let steps = view.feasibility.known().unwrap().steps.items();
        let second = steps[1].known().unwrap();
        assert_eq!(second.step.index(), None);
        assert_eq!(second.step.text(), "-1", "not shown as 0");
    }

    #[test]
    fn a_conforming_verdict_is_not_contradicted() {
        let request: DacRequestView = read(&json!({"ProcessActions": [
            {"Step": 0, "Statement": "a"}, {"Step": 1, "Statement": "b"}]}));
        for (statuses, overall, contradicted) in [
            (["Ack", "Ack"], "feasible", false),
            (["Ack", "Clash"], "partially_feasible", false),
            (["Ack", "Clash"], "feasible", true),
            (["Clash", "IncID"], "partially_feasible", true),
            (["Clash", "IncID"], "infeasible", false),
        ] {
            let response: DacResponseView = read(&json!({"Feasibility": {"Overall": overall,
                "Steps": [{"Step": 0, "PAStatus": statuses[0]}, {"Step": 1, "PAStatus": statuses[1]}]}}));
            let verdict = response.verdict(&request).unwrap();
            assert_eq!(
                verdict.contradicted(),
                contradicted,
                "{statuses:?} {overall}"
            );
            assert!(verdict.unanswered.is_empty());
        }
    }
}
