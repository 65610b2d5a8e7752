//! The Rust types mirror the schema files: the schemas are the source of truth, and these
//! tests fail when the two drift apart (a property renamed in one, an enum value added to one).

use bkn_explorer::protocol::dac::{
    CommitmentState, DacRequest, DacResponse, Kind, Nature, Overall, PaStatus,
};
use bkn_explorer::protocol::message::Outcome;
use bkn_explorer::protocol::schema::{self, enum_values};
use bkn_explorer::protocol::usr::{EngagementMode, UsrRequest, UsrResponse};
use bkn_explorer::protocol::{Interface, Mode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use strum::VariantArray;

fn base(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/conformance/bases")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn round_trip<T: DeserializeOwned + Serialize>(message: &Value) {
    let typed: T = serde_json::from_value(message.clone()).unwrap();
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(
        &back,
        message,
        "round trip through {}",
        std::any::type_name::<T>()
    );
}

#[test]
fn full_messages_round_trip_without_loss() {
    round_trip::<DacRequest>(&base("dac-request"));
    round_trip::<DacResponse>(&base("dac-response"));
    round_trip::<UsrRequest>(&base("usr-request"));
    round_trip::<UsrResponse>(&base("usr-response"));
    round_trip::<DacRequest>(&base("dac-request-minimal"));
    round_trip::<DacResponse>(&base("dac-response-minimal"));
    round_trip::<UsrRequest>(&base("usr-request-minimal"));
    round_trip::<UsrResponse>(&base("usr-response-minimal"));
}

fn paths(value: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{prefix}/{k}");
                out.insert(p.clone());
                paths(v, &p, out);
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| paths(v, &format!("{prefix}/*"), out)),
        _ => {}
    }
}

fn schema_paths(schema: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in properties {
            let p = format!("{prefix}/{name}");
            out.insert(p.clone());
            schema_paths(sub, &p, out);
        }
    }
    if let Some(items) = schema.get("items") {
        schema_paths(items, &format!("{prefix}/*"), out);
    }
}

/// The round trip above proves the types know every property of the full messages; this proves
/// the full messages hold every property of the schemas.
#[test]
fn full_messages_hold_every_schema_property() {
    let full = [
        (Interface::Dac, Mode::Request, "dac-request"),
        (Interface::Dac, Mode::Response, "dac-response"),
        (Interface::Usr, Mode::Request, "usr-request"),
        (Interface::Usr, Mode::Response, "usr-response"),
    ];
    for (interface, mode, name) in full {
        let mut wanted = BTreeSet::new();
        schema_paths(schema::self_contained(interface, mode), "", &mut wanted);
        wanted.retain(|p| {
            !p.starts_with("/DataXMData/")
                || p == "/DataXMData/DataID"
                || p == "/DataXMData/Source"
                || p == "/DataXMData/Source/*/AIMID"
                || p == "/DataXMData/Source/*/ImplementerAIMID"
        });
        let mut present = BTreeSet::new();
        paths(&base(name), "", &mut present);
        // One base uses AIMID, another ImplementerAIMID; both forms are covered across them.
        present.insert("/DataXMData/Source/*/AIMID".into());
        present.insert("/DataXMData/Source/*/ImplementerAIMID".into());
        let missing: Vec<_> = wanted.difference(&present).collect();
        assert!(missing.is_empty(), "{name} lacks {missing:?}");
    }
}

fn assert_same(rust: &[&str], interface: Interface, mode: Mode, pointer: &str) {
    let rust: BTreeSet<&str> = rust.iter().copied().collect();
    let schema: BTreeSet<&str> = enum_values(interface, mode, pointer).into_iter().collect();
    assert_eq!(rust, schema, "{interface} {mode} {pointer}");
}

#[test]
fn rust_enums_match_schema_enums() {
    let kinds: Vec<&str> = Kind::VARIANTS.iter().map(|k| k.as_str()).collect();
    assert_same(&kinds, Interface::Dac, Mode::Request, "/properties/Kind");
    let statuses: Vec<&str> = PaStatus::VARIANTS.iter().map(|s| s.as_str()).collect();
    assert_same(
        &statuses,
        Interface::Dac,
        Mode::Response,
        "/properties/Feasibility/properties/Steps/items/properties/PAStatus",
    );
    let overall: Vec<&str> = Overall::VARIANTS.iter().map(|s| s.as_str()).collect();
    assert_same(
        &overall,
        Interface::Dac,
        Mode::Response,
        "/properties/Feasibility/properties/Overall",
    );
    let states: Vec<&str> = CommitmentState::VARIANTS
        .iter()
        .map(|s| s.as_str())
        .collect();
    assert_same(
        &states,
        Interface::Dac,
        Mode::Response,
        "/properties/CommitmentStatus/items/properties/Status",
    );
    let natures: Vec<&str> = Nature::VARIANTS.iter().map(|s| s.as_str()).collect();
    assert_same(
        &natures,
        Interface::Dac,
        Mode::Response,
        "/properties/Failure/properties/Nature",
    );
    let outcomes: Vec<&str> = Outcome::VARIANTS.iter().map(|s| s.as_str()).collect();
    for interface in Interface::ALL {
        assert_same(&outcomes, interface, Mode::Response, "/properties/Outcome");
    }
    let modes: Vec<&str> = EngagementMode::VARIANTS
        .iter()
        .map(|s| s.as_str())
        .collect();
    assert_same(
        &modes,
        Interface::Usr,
        Mode::Response,
        "/properties/Engagement/properties/Mode",
    );
    // serde spells them as strum does (so as the schema does).
    fn same_names<T: VariantArray + Serialize + Copy + Into<&'static str>>() {
        for v in T::VARIANTS {
            let name: &'static str = (*v).into();
            assert_eq!(serde_json::to_value(v).unwrap(), name);
        }
    }
    same_names::<Kind>();
    same_names::<PaStatus>();
    same_names::<Overall>();
    same_names::<CommitmentState>();
    same_names::<Nature>();
    same_names::<Outcome>();
    same_names::<EngagementMode>();
}

#[test]
fn headers_are_the_schema_consts() {
    for interface in Interface::ALL {
        for mode in Mode::ALL {
            let schema = schema::self_contained(interface, mode);
            assert_eq!(schema["properties"]["Header"]["const"], interface.header());
            assert_eq!(schema["properties"]["Mode"]["const"], mode.code());
        }
    }
}
