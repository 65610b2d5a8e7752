//! Property tests: the conformance engine and the Process Action parser never panic, whatever
//! they are given, and what the checker accepts the Rust types read back without loss.
//! Each property runs 10,000 cases (more with PROPTEST_CASES).

use bkn_explorer::protocol::conformance::{
    DialogueChecker, check_exchange, check_message, check_sequence,
};
use bkn_explorer::protocol::dac::{DacRequest, DacResponse};
use bkn_explorer::protocol::process_action;
use bkn_explorer::protocol::usr::{UsrRequest, UsrResponse};
use bkn_explorer::protocol::{Interface, Mode};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::path::Path;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(10_000)
}

fn base(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/conformance/bases")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const BASES: [&str; 8] = [
    "dac-request",
    "dac-response",
    "usr-request",
    "usr-response",
    "dac-request-minimal",
    "dac-response-minimal",
    "usr-request-minimal",
    "usr-response-minimal",
];

/// Arbitrary JSON, biased towards the names and values the schemas use so that mutations
/// reach deep into the rules rather than failing at the first property.
fn arb_json() -> impl Strategy<Value = Value> {
    let names = prop::sample::select(vec![
        "Header",
        "Mode",
        "Kind",
        "Terms",
        "Text",
        "Class",
        "Step",
        "Statement",
        "Answer",
        "Feasibility",
        "Steps",
        "PAStatus",
        "Overall",
        "Engagement",
        "Level",
        "DataID",
        "Source",
        "AIMID",
        "RequestID",
        "QueryID",
        "TurnIndex",
        "DialogID",
        "x",
        "",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        (0.0f64..=1.5).prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        prop::sample::select(vec![
            "RQ",
            "RS",
            "PGM-KDA-V1.0",
            "PGM-KUS-V1.0",
            "Ack",
            "Clash",
            "feasible",
            "answered",
            "2026-11-29T10:00:00Z",
            "semantic_grounding",
            "interactive",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((names.clone(), inner), 0..6).prop_map(|kv| Value::Object(
                kv.into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect::<Map<_, _>>()
            )),
        ]
    })
}

/// Every pointer to an existing value in a message.
fn pointers(value: &Value, prefix: String, out: &mut Vec<String>) {
    out.push(prefix.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                pointers(
                    v,
                    format!("{prefix}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                )
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                pointers(v, format!("{prefix}/{i}"), out)
            }
        }
        _ => {}
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Replace(usize, Value),
    Remove(usize),
    Insert(usize, String, Value),
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), arb_json()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        any::<usize>().prop_map(Mutation::Remove),
        (any::<usize>(), "[A-Za-z]{0,8}", arb_json())
            .prop_map(|(i, k, v)| Mutation::Insert(i, k, v)),
    ]
}

fn mutate(mut message: Value, mutations: &[Mutation]) -> Value {
    for m in mutations {
        let mut all = Vec::new();
        pointers(&message, String::new(), &mut all);
        let pick = |i: usize| all[i % all.len()].clone();
        match m {
            Mutation::Replace(i, v) => {
                if let Some(slot) = message.pointer_mut(&pick(*i)) {
                    *slot = v.clone();
                }
            }
            Mutation::Remove(i) => {
                let p = pick(*i);
                if let Some(at) = p.rfind('/') {
                    let (parent, key) = (&p[..at], &p[at + 1..]);
                    match message.pointer_mut(parent) {
                        Some(Value::Object(map)) => {
                            map.remove(&key.replace("~1", "/").replace("~0", "~"));
                        }
                        Some(Value::Array(items)) => {
                            if let Ok(i) = key.parse::<usize>()
                                && i < items.len()
                            {
                                items.remove(i);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Mutation::Insert(i, k, v) => {
                if let Some(Value::Object(map)) = message.pointer_mut(&pick(*i)) {
                    map.insert(k.clone(), v.clone());
                }
            }
        }
    }
    message
}

fn arb_message() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(BASES.to_vec()),
        prop::collection::vec(arb_mutation(), 0..4),
    )
        .prop_map(|(name, mutations)| mutate(base(name), &mutations))
}

fn assert_well_formed(findings: &[bkn_explorer::protocol::conformance::Finding]) {
    for f in findings {
        assert!(f.pointer.is_empty() || f.pointer.starts_with('/'), "{f}");
        assert!(!f.message.is_empty());
    }
}

/// A conformant message reads into its Rust type and back without loss.
fn assert_types_accept(message: &Value, interface: Interface, mode: Mode) {
    let back = match (interface, mode) {
        (Interface::Dac, Mode::Request) => {
            serde_json::to_value(serde_json::from_value::<DacRequest>(message.clone()).unwrap())
        }
        (Interface::Dac, Mode::Response) => {
            serde_json::to_value(serde_json::from_value::<DacResponse>(message.clone()).unwrap())
        }
        (Interface::Usr, Mode::Request) => {
            serde_json::to_value(serde_json::from_value::<UsrRequest>(message.clone()).unwrap())
        }
        (Interface::Usr, Mode::Response) => {
            serde_json::to_value(serde_json::from_value::<UsrResponse>(message.clone()).unwrap())
        }
    }
    .unwrap();
    assert_eq!(&back, message);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_json_never_panics(value in arb_json(), expected in prop::option::of(prop::sample::select(Interface::ALL.to_vec()))) {
        let check = check_message(&value, expected);
        assert_well_formed(&check.findings);
        let _ = check_exchange(&value, &value);
        let mut dialogue = DialogueChecker::new();
        assert_well_formed(&dialogue.observe(&value));
    }

    #[test]
    fn mutated_messages_never_panic_and_conformant_ones_round_trip(message in arb_message()) {
        let check = check_message(&message, None);
        assert_well_formed(&check.findings);
        if check.conforms() {
            assert_types_accept(&message, check.interface.unwrap(), check.mode.unwrap());
        }
    }

    #[test]
    fn mutated_sequences_never_panic(messages in prop::collection::vec(arb_message(), 0..6)) {
        let report = check_sequence(&messages);
        prop_assert_eq!(report.messages.len(), messages.len());
        for findings in &report.messages {
            assert_well_formed(findings);
        }
    }

    #[test]
    fn random_statements_never_panic(statement in "\\PC{0,60}") {
        if let Err(e) = process_action::parse(&statement) {
            prop_assert!(e.position <= statement.chars().count());
            prop_assert!(!e.message.is_empty());
        }
    }

    #[test]
    fn mutated_statements_never_panic(
        words in prop::collection::vec(prop::sample::select(vec![
            "MM-Move", "Rights", "Manage", "Nil", "At", "From", "To", "Of", "With", "If",
            "Avatar#7", "MLoc:Square.Stage", "=", "(", ")", ",", "\"", "x=1", "Status=Model",
        ]), 0..12)
    ) {
        let statement = words.join(" ");
        match process_action::parse(&statement) {
            Ok(s) => prop_assert!(!s.complements.is_empty()),
            Err(e) => prop_assert!(e.position <= statement.chars().count()),
        }
    }
}

#[test]
fn a_known_conformant_message_round_trips() {
    let message = json!(base("dac-request"));
    assert!(check_message(&message, None).conforms());
    assert_types_accept(&message, Interface::Dac, Mode::Request);
}
