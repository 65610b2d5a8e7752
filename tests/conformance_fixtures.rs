//! The conformance fixture suite: every case under `tests/fixtures/conformance/` is a base
//! message with JSON-pointer patches and the exact findings it must produce. A coverage test
//! checks that every property of both data types (every table row) is exercised by at least
//! one conformant case and one case that breaks it.

use bkn_explorer::protocol::conformance::{Finding, check_exchange, check_message, check_sequence};
use bkn_explorer::protocol::schema;
use bkn_explorer::protocol::{Interface, Mode};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance")
}

fn load<T: for<'de> Deserialize<'de>>(name: &str) -> T {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn base(name: &str) -> Value {
    load(&format!("bases/{name}.json"))
}

#[derive(Deserialize)]
struct Built {
    base: String,
    #[serde(default)]
    set: Map<String, Value>,
    #[serde(default)]
    remove: Vec<String>,
}

impl Built {
    fn build(&self) -> Value {
        let mut message = base(&self.base);
        for (pointer, value) in &self.set {
            set(&mut message, pointer, value.clone());
        }
        for pointer in &self.remove {
            remove(&mut message, pointer);
        }
        message
    }
}

fn split(pointer: &str) -> (&str, String) {
    let at = pointer.rfind('/').expect("a pointer below the root");
    (
        &pointer[..at],
        pointer[at + 1..].replace("~1", "/").replace("~0", "~"),
    )
}

fn set(message: &mut Value, pointer: &str, value: Value) {
    if pointer.is_empty() {
        *message = value;
        return;
    }
    let (parent, key) = split(pointer);
    match message.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(key, value);
        }
        Some(Value::Array(items)) => {
            let i: usize = key.parse().unwrap();
            if i < items.len() {
                items[i] = value
            } else {
                items.push(value)
            }
        }
        _ => panic!("no parent for {pointer}"),
    }
}

fn remove(message: &mut Value, pointer: &str) {
    let (parent, key) = split(pointer);
    match message.pointer_mut(parent) {
        Some(Value::Object(map)) => assert!(map.remove(&key).is_some(), "nothing at {pointer}"),
        _ => panic!("no object at {parent}"),
    }
}

#[derive(Deserialize, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Expected {
    #[serde(default)]
    index: Option<usize>,
    check: String,
    pointer: String,
    requirement: String,
}

fn seen(index: Option<usize>, f: &Finding) -> Expected {
    Expected {
        index,
        check: f.check.to_string(),
        pointer: f.pointer.clone(),
        requirement: f.requirement.name().to_owned(),
    }
}

fn assert_findings(
    name: &str,
    expected: &[Expected],
    found: Vec<Expected>,
    context: &dyn std::fmt::Debug,
) {
    let expected: BTreeSet<_> = expected.iter().cloned().collect();
    let found_set: BTreeSet<_> = found.iter().cloned().collect();
    assert_eq!(
        expected, found_set,
        "case '{name}': expected findings differ from found ones {context:?}"
    );
}

#[derive(Deserialize)]
struct MessageCase {
    name: String,
    #[serde(flatten)]
    message: Built,
    #[serde(default)]
    interface: Option<String>,
    expect: Vec<Expected>,
}

fn message_cases() -> Vec<MessageCase> {
    load("message-cases.json")
}

#[test]
fn message_cases_give_exactly_their_findings() {
    for case in message_cases() {
        let message = case.message.build();
        let interface = case.interface.as_deref().and_then(Interface::from_code);
        let check = check_message(&message, interface);
        // Every finding also reads as a sentence with the pointer and the rule.
        for f in &check.findings {
            assert!(f.message.len() > 10, "{}: terse message {f}", case.name);
        }
        let found = check.findings.iter().map(|f| seen(None, f)).collect();
        assert_findings(&case.name, &case.expect, found, &check.findings);
    }
}

#[derive(Deserialize)]
struct ExchangeCase {
    name: String,
    request: Built,
    response: Built,
    expect: Vec<Expected>,
}

#[test]
fn exchange_cases_give_exactly_their_findings() {
    let cases: Vec<ExchangeCase> = load("exchange-cases.json");
    for case in cases {
        let findings = check_exchange(&case.request.build(), &case.response.build());
        let found = findings.iter().map(|f| seen(None, f)).collect();
        assert_findings(&case.name, &case.expect, found, &findings);
    }
}

#[derive(Deserialize)]
struct DialogueCase {
    name: String,
    messages: Vec<Built>,
    expect: Vec<Expected>,
}

#[test]
fn dialogue_cases_give_exactly_their_findings() {
    let cases: Vec<DialogueCase> = load("dialogue-cases.json");
    for case in cases {
        let messages: Vec<Value> = case.messages.iter().map(Built::build).collect();
        let report = check_sequence(&messages);
        let found = report
            .messages
            .iter()
            .enumerate()
            .flat_map(|(i, fs)| fs.iter().map(move |f| seen(Some(i), f)))
            .collect();
        assert_findings(&case.name, &case.expect, found, &report);
    }
}

#[test]
fn there_are_at_least_sixty_cases() {
    let messages = message_cases().len();
    let exchanges = load::<Vec<Value>>("exchange-cases.json").len();
    let dialogues = load::<Vec<Value>>("dialogue-cases.json").len();
    assert!(messages + exchanges + dialogues >= 60);
}

/// Every property path of a schema, with array items written `*`:
/// `/Answer/ObjectClasses/*/Confidence`.
fn property_paths(schema: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in properties {
            let path = format!("{prefix}/{name}");
            out.insert(path.clone());
            property_paths(sub, &path, out);
        }
    }
    if let Some(items) = schema.get("items") {
        property_paths(items, &format!("{prefix}/*"), out);
    }
}

/// The property paths present in a message, in the same `*` notation.
fn present_paths(value: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let path = format!("{prefix}/{k}");
                out.insert(path.clone());
                present_paths(v, &path, out);
            }
        }
        Value::Array(items) => {
            for v in items {
                present_paths(v, &format!("{prefix}/*"), out);
            }
        }
        _ => {}
    }
}

fn generic(pointer: &str) -> String {
    pointer
        .split('/')
        .map(|s| if s.parse::<usize>().is_ok() { "*" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

#[test]
fn every_table_row_has_a_valid_and_an_invalid_case() {
    // Table 1 rows (common to both modes) are one row per data type: a case in either mode
    // covers them. Table 2 and 3 rows are keyed by their mode.
    let table = |interface: Interface, mode: Mode, path: &str| -> (Interface, Option<Mode>) {
        let top = path.split('/').nth(1).unwrap_or_default();
        let common = schema::property(interface, mode, top).is_some_and(|p| p.common);
        (interface, (!common).then_some(mode))
    };
    let mut valid: BTreeSet<(Interface, Option<Mode>, String)> = BTreeSet::new();
    let mut invalid: BTreeSet<(Interface, Option<Mode>, String)> = BTreeSet::new();
    for case in message_cases() {
        let message = case.message.build();
        let check = check_message(&message, None);
        let (Some(interface), Some(mode)) = (check.interface, check.mode) else {
            continue;
        };
        if case.expect.is_empty() {
            let mut present = BTreeSet::new();
            present_paths(&message, "", &mut present);
            for path in present {
                let (i, m) = table(interface, mode, &path);
                valid.insert((i, m, path));
            }
        } else {
            for e in &case.expect {
                // A finding at /A/B/0/C exercises /A/B/*/C and the properties that contain it.
                let path = generic(&e.pointer);
                let mut prefix = String::new();
                for segment in path.split('/').skip(1) {
                    prefix = format!("{prefix}/{segment}");
                    let (i, m) = table(interface, mode, &prefix);
                    invalid.insert((i, m, prefix.clone()));
                }
            }
        }
    }
    let mut missing = Vec::new();
    for interface in Interface::ALL {
        for mode in Mode::ALL {
            let mut rows = BTreeSet::new();
            property_paths(schema::self_contained(interface, mode), "", &mut rows);
            // Inside DataXMData only the PTF minimum is a row of ours; RefinedUserState is open.
            rows.retain(|r| {
                !r.starts_with("/DataXMData/")
                    || r == "/DataXMData/DataID"
                    || r == "/DataXMData/Source"
            });
            for row in rows {
                let (i, m) = table(interface, mode, &row);
                let key = (i, m, row.clone());
                if !valid.contains(&key) {
                    missing.push(format!("{interface} {mode} {row}: no conformant case"));
                }
                if !invalid.contains(&key) {
                    missing.push(format!("{interface} {mode} {row}: no breaking case"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "uncovered table rows:\n{}",
        missing.join("\n")
    );
}
