//! The JSON Schemas of BKN-DAC and BKN-USR: embedded from `src/protocol/schemas/`, compiled
//! once, and read for everything else that needs the shape of a message (the validator, the
//! servers' tool schemas, the composer's forms, the mode rule). They are the one source of
//! truth for that shape.

use crate::protocol::interface::{Interface, Mode};
use crate::protocol::requirement::Requirement;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::{LazyLock, OnceLock};

/// Base of the `$id` of every schema file; relative `$ref`s resolve against it.
pub const SCHEMA_BASE: &str = "https://bkn-explorer.dev/schemas/";

/// One embedded schema file.
#[derive(Clone, Copy, Debug)]
pub struct SchemaFile {
    /// File name under `src/protocol/schemas/`, which is also the last segment of its `$id`.
    pub name: &'static str,
    pub source: &'static str,
}

pub const COMMON: SchemaFile = SchemaFile {
    name: "common.json",
    source: include_str!("schemas/common.json"),
};
pub const DEM: SchemaFile = SchemaFile {
    name: "dem.json",
    source: include_str!("schemas/dem.json"),
};
const DAC_REQUEST: SchemaFile = SchemaFile {
    name: "bkn-dac.request.json",
    source: include_str!("schemas/bkn-dac.request.json"),
};
const DAC_RESPONSE: SchemaFile = SchemaFile {
    name: "bkn-dac.response.json",
    source: include_str!("schemas/bkn-dac.response.json"),
};
const USR_REQUEST: SchemaFile = SchemaFile {
    name: "bkn-usr.request.json",
    source: include_str!("schemas/bkn-usr.request.json"),
};
const USR_RESPONSE: SchemaFile = SchemaFile {
    name: "bkn-usr.response.json",
    source: include_str!("schemas/bkn-usr.response.json"),
};

/// Every embedded schema file, the shared ones first.
pub const FILES: [SchemaFile; 6] = [
    COMMON,
    DEM,
    DAC_REQUEST,
    DAC_RESPONSE,
    USR_REQUEST,
    USR_RESPONSE,
];

/// The schema file of one interface and mode.
pub fn message_file(interface: Interface, mode: Mode) -> SchemaFile {
    match (interface, mode) {
        (Interface::Dac, Mode::Request) => DAC_REQUEST,
        (Interface::Dac, Mode::Response) => DAC_RESPONSE,
        (Interface::Usr, Mode::Request) => USR_REQUEST,
        (Interface::Usr, Mode::Response) => USR_RESPONSE,
    }
}

/// One top-level property of a message schema, as the rest of the program needs to know it.
#[derive(Clone, Debug)]
pub struct Property {
    pub name: String,
    pub description: String,
    pub required: bool,
    /// The functional requirement a violation of this property breaks.
    pub requirement: Requirement,
    /// The Kinds that use it (`x-bkn-kinds`); `None` when it is not Kind-specific.
    pub kinds: Option<Vec<String>>,
    /// Whether the property exists in both modes (Table 1).
    pub common: bool,
    /// The property's schema with every `$ref` resolved.
    pub schema: Value,
}

/// What is made from the schemas, each part when it is first needed and once: a command that
/// speaks BKN-DAC never compiles BKN-USR, and a client that only checks messages never
/// dereferences a schema for a tool declaration. (Compiling everything took a third of the
/// start-up of a one-shot `send`.)
struct Made {
    registry: LazyLock<jsonschema::Registry<'static>>,
    documents: [OnceLock<Value>; 4],
    validators: [OnceLock<jsonschema::Validator>; 4],
    self_contained: [OnceLock<Value>; 4],
    properties: [OnceLock<Vec<Property>>; 4],
    property_names: [OnceLock<Vec<String>>; 4],
    dem_validator: OnceLock<jsonschema::Validator>,
}

static MADE: Made = Made {
    registry: LazyLock::new(registry),
    documents: [const { OnceLock::new() }; 4],
    validators: [const { OnceLock::new() }; 4],
    self_contained: [const { OnceLock::new() }; 4],
    properties: [const { OnceLock::new() }; 4],
    property_names: [const { OnceLock::new() }; 4],
    dem_validator: OnceLock::new(),
};

/// The place of a message schema in `Made`'s arrays.
fn slot(interface: Interface, mode: Mode) -> usize {
    let i = match interface {
        Interface::Dac => 0,
        Interface::Usr => 2,
    };
    i + usize::from(mode == Mode::Response)
}

fn parse(file: SchemaFile) -> Value {
    // The files are part of the program; a broken one is a build defect caught by every test.
    serde_json::from_str(file.source)
        .unwrap_or_else(|e| panic!("embedded schema {} is not JSON: {e}", file.name))
}

fn registry() -> jsonschema::Registry<'static> {
    let mut builder = jsonschema::Registry::new();
    for file in [COMMON, DEM] {
        builder = builder
            .add(format!("{SCHEMA_BASE}{}", file.name), parse(file))
            .unwrap_or_else(|e| panic!("embedded schema {} cannot be registered: {e}", file.name));
    }
    builder
        .prepare()
        .expect("the embedded schema registry is consistent")
}

fn options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .with_registry(&MADE.registry)
}

/// After dereferencing, the inlined parts of `common.json` and `dem.json` keep their `$id`,
/// `$schema` and maintainers' `$comment`s; a self-contained schema needs none of them, and some
/// MCP clients trip over nested `$id`s.
fn strip_nested_ids(value: &mut Value, root: bool) {
    match value {
        Value::Object(map) => {
            if !root {
                map.remove("$id");
                map.remove("$schema");
            }
            map.remove("$comment");
            map.remove("$defs");
            for child in map.values_mut() {
                strip_nested_ids(child, false);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| strip_nested_ids(v, false)),
        _ => {}
    }
}

fn top_level(schema: &Value) -> &Map<String, Value> {
    static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
    schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&EMPTY)
}

fn catalog(schema: &Value, mode: Mode, other_mode_names: &BTreeSet<String>) -> Vec<Property> {
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    top_level(schema)
        .iter()
        .map(|(name, property)| {
            let common = other_mode_names.contains(name);
            let annotated = property
                .get("x-bkn-requirement")
                .and_then(Value::as_str)
                .and_then(Requirement::from_name);
            // A property without an annotation belongs to its mode's requirement (FR5/FR6).
            let requirement = annotated.unwrap_or(match mode {
                Mode::Request => Requirement::Request,
                Mode::Response => Requirement::Response,
            });
            let kinds = property
                .get("x-bkn-kinds")
                .and_then(Value::as_array)
                .map(|k| {
                    k.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                });
            Property {
                name: name.clone(),
                description: property
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                required: required.contains(name.as_str()),
                requirement,
                kinds,
                common,
                schema: property.clone(),
            }
        })
        .collect()
}

/// Makes every part now, so that the first message check pays nothing extra.
pub fn warm_up() {
    for interface in Interface::ALL {
        warm_up_interface(interface);
    }
}

/// Makes what checking one interface's messages and declaring its tool need: the tool's
/// schemas first, because a server lists its tool (`tools/list`) before any message is
/// checked, and a one-shot `send` otherwise made them on its main thread while this one
/// compiled validators.
pub fn warm_up_interface(interface: Interface) {
    for mode in Mode::ALL {
        self_contained(interface, mode);
    }
    for mode in Mode::ALL {
        validator(interface, mode);
        properties(interface, mode);
    }
    dem_validator();
}

/// The same on a thread of its own, started now: a process that is about to wait (for a
/// server to start, for a client to connect) makes them meanwhile, on another core.
pub fn warm_up_in_background(interface: Interface) {
    // If the thread cannot start, the parts are made when they are first needed.
    let _ = std::thread::Builder::new()
        .name("schemas".into())
        .spawn(move || warm_up_interface(interface));
}

/// The same for each interface named (once each, whatever the repeats): a command that
/// holds dialogues of several (`test`, `replay`) starts them all before its first server.
pub fn warm_up_each_in_background(interfaces: impl IntoIterator<Item = Interface>) {
    let mut started = Vec::new();
    for interface in interfaces {
        if !started.contains(&interface) {
            started.push(interface);
            warm_up_in_background(interface);
        }
    }
}

/// The message schema as written in its file (with `$ref`s to `common.json` and `dem.json`).
pub fn document(interface: Interface, mode: Mode) -> &'static Value {
    MADE.documents[slot(interface, mode)].get_or_init(|| parse(message_file(interface, mode)))
}

/// The names of a message's top-level properties, read from its schema file as written
/// (no `$ref` resolved: cheap enough to tell a message's interface by before anything is
/// compiled).
pub fn property_names(interface: Interface, mode: Mode) -> impl Iterator<Item = &'static str> {
    MADE.property_names[slot(interface, mode)]
        .get_or_init(|| {
            // Only the names: the property schemas are skipped, not built (a header-less
            // Request is told by these before anything else is made, on a command's main
            // thread).
            #[derive(serde::Deserialize)]
            struct TopLevel {
                #[serde(default)]
                properties: indexmap::IndexMap<String, serde::de::IgnoredAny>,
            }
            let file = message_file(interface, mode);
            let top: TopLevel = serde_json::from_str(file.source)
                .unwrap_or_else(|e| panic!("embedded schema {} is not JSON: {e}", file.name));
            top.properties.into_keys().collect()
        })
        .iter()
        .map(String::as_str)
}

/// The message schema with every `$ref` resolved: what an MCP tool declares as its
/// `inputSchema`/`outputSchema`, usable without access to the other files.
pub fn self_contained(interface: Interface, mode: Mode) -> &'static Value {
    MADE.self_contained[slot(interface, mode)].get_or_init(|| {
        let name = message_file(interface, mode).name;
        let mut value = options()
            .dereference(document(interface, mode))
            .unwrap_or_else(|e| panic!("schema {name} cannot be dereferenced: {e}"));
        strip_nested_ids(&mut value, true);
        value
    })
}

/// The compiled validator of a message schema (formats checked).
pub fn validator(interface: Interface, mode: Mode) -> &'static jsonschema::Validator {
    MADE.validators[slot(interface, mode)].get_or_init(|| {
        options()
            .build(document(interface, mode))
            .unwrap_or_else(|e| {
                panic!(
                    "schema {} does not compile: {e}",
                    message_file(interface, mode).name
                )
            })
    })
}

/// The compiled validator of the DataXMData secondary schema on its own.
pub fn dem_validator() -> &'static jsonschema::Validator {
    MADE.dem_validator
        .get_or_init(|| options().build(&parse(DEM)).expect("dem.json compiles"))
}

/// The top-level properties of a message schema, in file order. (Whether a property is
/// common to both modes needs the other mode's names too.)
pub fn properties(interface: Interface, mode: Mode) -> &'static [Property] {
    MADE.properties[slot(interface, mode)].get_or_init(|| {
        let other = match mode {
            Mode::Request => Mode::Response,
            Mode::Response => Mode::Request,
        };
        let other_names: BTreeSet<String> = top_level(self_contained(interface, other))
            .keys()
            .cloned()
            .collect();
        catalog(self_contained(interface, mode), mode, &other_names)
    })
}

pub fn property(interface: Interface, mode: Mode, name: &str) -> Option<&'static Property> {
    properties(interface, mode).iter().find(|p| p.name == name)
}

/// The values an `enum` property allows (e.g. the Kinds, PA Statuses, Outcomes), read from the
/// schema at a JSON pointer into the self-contained message schema.
pub fn enum_values(interface: Interface, mode: Mode, pointer: &str) -> Vec<&'static str> {
    self_contained(interface, mode)
        .pointer(pointer)
        .and_then(|s| s.get("enum"))
        .and_then(Value::as_array)
        .map(|values| values.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_schema_compiles_and_self_contained_has_no_refs() {
        for interface in Interface::ALL {
            for mode in Mode::ALL {
                let text = self_contained(interface, mode).to_string();
                assert!(
                    !text.contains("$ref"),
                    "{interface} {mode} still has a $ref"
                );
                // The self-contained schema behaves as the original.
                let v = jsonschema::options()
                    .should_validate_formats(true)
                    .build(self_contained(interface, mode))
                    .unwrap();
                assert!(!v.is_valid(&json!({})));
            }
        }
    }

    #[test]
    fn the_names_as_written_are_the_properties_as_resolved() {
        for interface in [Interface::Dac, Interface::Usr] {
            for mode in Mode::ALL {
                let written: Vec<&str> = property_names(interface, mode).collect();
                let resolved: Vec<&str> = properties(interface, mode)
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect();
                assert_eq!(written, resolved, "{interface} {mode}");
            }
        }
    }

    #[test]
    fn mode_specific_properties_are_known() {
        let request = properties(Interface::Dac, Mode::Request);
        let kind = request.iter().find(|p| p.name == "Kind").unwrap();
        assert!(!kind.common && kind.required);
        assert_eq!(kind.requirement, Requirement::Request);
        let dialog = request.iter().find(|p| p.name == "DialogID").unwrap();
        assert!(dialog.common);
        assert_eq!(dialog.requirement, Requirement::Dialogue);
        let request_id = property(Interface::Usr, Mode::Response, "RequestID").unwrap();
        assert_eq!(request_id.requirement, Requirement::Correlation);
        assert!(!request_id.common);
    }

    #[test]
    fn enums_are_read_from_the_schema() {
        let kinds = enum_values(Interface::Dac, Mode::Request, "/properties/Kind");
        assert_eq!(kinds.len(), 7);
        let statuses = enum_values(
            Interface::Dac,
            Mode::Response,
            "/properties/Feasibility/properties/Steps/items/properties/PAStatus",
        );
        assert_eq!(statuses.len(), 10);
    }
}
