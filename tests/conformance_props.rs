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
use strum::VariantArray;

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

/// One turn of a generated conformant dialogue: what Basic Knowledge asks, and how the
/// server (a correct one, modelled below) answers; or a Request that breaks a rule (a Kind
/// that is no Kind) which the server rejects, retried with the same TurnIndex.
#[derive(Clone, Debug)]
enum Planned {
    Turn {
        kind: usize,
        /// Commitments asked for and released, from a pool of four IDs.
        retain: Vec<u8>,
        release: Vec<u8>,
        /// PA Statuses of the plan (feasibility only), indices into `PaStatus::VARIANTS`.
        steps: Vec<usize>,
        gap: u64,
        float: bool,
        not_answered: bool,
    },
    RejectedThenRetried,
}

fn arb_planned() -> impl Strategy<Value = Planned> {
    prop_oneof![
        8 => (
            0usize..7,
            prop::collection::vec(0u8..4, 0..3),
            prop::collection::vec(0u8..4, 0..2),
            prop::collection::vec(0usize..10, 1..5),
            0u64..3,
            any::<bool>(),
            prop::bool::weighted(0.1),
        )
            .prop_map(|(kind, retain, release, steps, gap, float, not_answered)| Planned::Turn {
                kind,
                retain,
                release,
                steps,
                gap,
                float,
                not_answered,
            }),
        1 => Just(Planned::RejectedThenRetried),
    ]
}

/// A recorded turn: the Request, and the Response (none: a tool error answered it).
type RecordedTurn = (Value, Option<Value>);

/// A dialogue as a correct client and server would have it: the messages in order, the
/// indices of the deliberately broken Requests, and the same dialogue as recorded turns
/// (the broken Requests rejected with a tool error).
fn conformant_dialogue(plan: &[Planned]) -> (Vec<Value>, Vec<usize>, Vec<RecordedTurn>) {
    use bkn_explorer::protocol::dac::{Kind, Overall, PaStatus};
    use std::collections::BTreeMap;
    let (mut messages, mut broken, mut turns) = (Vec::new(), Vec::new(), Vec::new());
    let mut commitments: BTreeMap<String, &str> = BTreeMap::new();
    let mut turn = 0u64;
    let mut n = 0;
    let mut next_id = |prefix: &str| {
        n += 1;
        format!("{prefix}{n}")
    };
    let index = |t: u64, float: bool| -> Value { if float { json!(t as f64) } else { json!(t) } };
    for p in plan {
        let mut request = base("dac-request-minimal");
        request["QueryID"] = json!(next_id("q"));
        match p {
            Planned::RejectedThenRetried => {
                request["Kind"] = json!("groundng");
                request["TurnIndex"] = json!(turn);
                broken.push(messages.len());
                messages.push(request.clone());
                turns.push((request, None));
                // The retry: the same turn, now conformant (answered in the next plan item
                // or here with a plain constraints Request).
                let mut retry = base("dac-request-minimal");
                retry["QueryID"] = json!(next_id("q"));
                retry["TurnIndex"] = json!(turn);
                let mut response = base("dac-response-minimal");
                response["QueryID"] = json!(next_id("r"));
                response["RequestID"] = retry["QueryID"].clone();
                response["TurnIndex"] = json!(turn);
                response["Outcome"] = json!("answered");
                if !commitments.is_empty() {
                    response["CommitmentStatus"] = json!(
                        commitments
                            .iter()
                            .map(|(k, v)| json!({"CommitmentID": k, "Status": v}))
                            .collect::<Vec<_>>()
                    );
                }
                messages.push(retry.clone());
                messages.push(response.clone());
                turns.push((retry, Some(response)));
                turn += 1;
            }
            Planned::Turn {
                kind,
                retain,
                release,
                steps,
                gap,
                float,
                not_answered,
            } => {
                turn += gap;
                let kind = Kind::VARIANTS[*kind];
                request["Kind"] = json!(kind.as_str());
                request["TurnIndex"] = index(turn, *float);
                let retain: Vec<String> = retain.iter().map(|i| format!("c{i}")).collect();
                let release: Vec<String> = release.iter().map(|i| format!("c{i}")).collect();
                if !retain.is_empty() {
                    request["Commitments"] = json!(
                        retain
                            .iter()
                            .map(|id| json!({"CommitmentID": id, "Statement": "X locatedAt Y"}))
                            .collect::<Vec<_>>()
                    );
                }
                if !release.is_empty() {
                    request["ReleasedCommitmentIDs"] = json!(release);
                }
                if kind == Kind::Feasibility {
                    request["ProcessActions"] = json!(
                        steps
                            .iter()
                            .enumerate()
                            .map(|(i, _)| json!({"Step": i, "Statement": "MM-Move Nil A To B"}))
                            .collect::<Vec<_>>()
                    );
                }
                let mut response = base("dac-response-minimal");
                response["QueryID"] = json!(next_id("r"));
                response["RequestID"] = request["QueryID"].clone();
                response["TurnIndex"] = request["TurnIndex"].clone();
                response["Outcome"] = json!(if *not_answered {
                    "not_answered"
                } else {
                    "answered"
                });
                if !*not_answered {
                    for id in &release {
                        if let Some(s) = commitments.get_mut(id) {
                            *s = "released";
                        }
                    }
                    for id in &retain {
                        commitments.insert(id.clone(), "retained");
                    }
                    if kind == Kind::Feasibility {
                        let statuses: Vec<PaStatus> =
                            steps.iter().map(|s| PaStatus::VARIANTS[*s]).collect();
                        response["Feasibility"] = json!({
                            "Steps": statuses.iter().enumerate().map(|(i, s)| json!({"Step": i, "PAStatus": s.as_str(), "Reason": "because"})).collect::<Vec<_>>(),
                            "Overall": Overall::of(statuses.iter().copied()).as_str(),
                        });
                    }
                }
                if !commitments.is_empty() {
                    response["CommitmentStatus"] = json!(
                        commitments
                            .iter()
                            .map(|(k, v)| json!({"CommitmentID": k, "Status": v}))
                            .collect::<Vec<_>>()
                    );
                }
                messages.push(request.clone());
                messages.push(response.clone());
                turns.push((request, Some(response)));
                turn += 1;
            }
        }
    }
    (messages, broken, turns)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases() / 4, failure_persistence: None, ..ProptestConfig::default() })]

    /// No false finding: a dialogue that follows every rule gets none, whatever its
    /// commitments, plans, gaps in TurnIndex, `2.0`-style numbers, rejected Requests and
    /// retries; the broken Requests get exactly their own finding.
    #[test]
    fn conformant_dialogues_get_no_finding(plan in prop::collection::vec(arb_planned(), 1..12)) {
        use bkn_explorer::protocol::conformance::{SequenceChecker, TurnReply};
        let (messages, broken, turns) = conformant_dialogue(&plan);
        let report = check_sequence(&messages);
        for (i, findings) in report.messages.iter().enumerate() {
            if broken.contains(&i) {
                prop_assert_eq!(findings.len(), 1, "message {}: {:?}", i, findings);
                prop_assert_eq!(findings[0].check.as_str(), "schema.enum");
            } else {
                prop_assert!(findings.is_empty(), "message {}: {:?}\n{:#?}", i, findings, messages);
            }
        }
        // The same dialogue as recorded turns, the broken Requests rejected by the server.
        let mut checker = SequenceChecker::new(Some(Interface::Dac));
        for (request, response) in &turns {
            let reply = match response {
                Some(r) => TurnReply::Response(r),
                None => TurnReply::Rejected,
            };
            let found = checker.turn(request, reply);
            prop_assert!(found.response.is_empty(), "{:?}", found.response);
            if response.is_some() {
                prop_assert!(found.request.is_empty(), "{:?}", found.request);
            }
        }
    }
}
