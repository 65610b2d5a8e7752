//! The JSON Schemas of BKN-DAC and BKN-USR: embedded from `src/protocol/schemas/`, compiled
//! once, and read for everything else that needs the shape of a message (the validator, the
//! servers' tool schemas, the composer's forms, the mode rule). They are the one source of
//! truth for that shape.

use crate::protocol::interface::{Interface, Mode};
use crate::protocol::requirement::Requirement;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::LazyLock;

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

/// Everything compiled from one message schema.
struct MessageSchema {
    document: Value,
    self_contained: Value,
    validator: jsonschema::Validator,
    properties: Vec<Property>,
}

struct Compiled {
    messages: Vec<((Interface, Mode), MessageSchema)>,
    dem_validator: jsonschema::Validator,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(compile);

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

fn compile() -> Compiled {
    let registry = registry();
    let options = || {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .with_registry(&registry)
    };
    let mut messages = Vec::new();
    for interface in Interface::ALL {
        for mode in Mode::ALL {
            let file = message_file(interface, mode);
            let document = parse(file);
            let validator = options()
                .build(&document)
                .unwrap_or_else(|e| panic!("schema {} does not compile: {e}", file.name));
            let mut self_contained = options()
                .dereference(&document)
                .unwrap_or_else(|e| panic!("schema {} cannot be dereferenced: {e}", file.name));
            strip_nested_ids(&mut self_contained, true);
            messages.push((
                (interface, mode),
                MessageSchema {
                    properties: Vec::new(),
                    document,
                    self_contained,
                    validator,
                },
            ));
        }
    }
    // Properties need both modes of an interface to tell common from mode-specific ones.
    for interface in Interface::ALL {
        let names = |mode: Mode| -> BTreeSet<String> {
            let schema = &messages
                .iter()
                .find(|(key, _)| *key == (interface, mode))
                .expect("every interface has both modes")
                .1;
            top_level(&schema.self_contained).keys().cloned().collect()
        };
        let (request_names, response_names) = (names(Mode::Request), names(Mode::Response));
        for ((i, mode), schema) in messages.iter_mut() {
            if *i != interface {
                continue;
            }
            let other = match mode {
                Mode::Request => &response_names,
                Mode::Response => &request_names,
            };
            schema.properties = catalog(&schema.self_contained, *mode, other);
        }
    }
    let dem_validator = options().build(&parse(DEM)).expect("dem.json compiles");
    Compiled {
        messages,
        dem_validator,
    }
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

fn message(interface: Interface, mode: Mode) -> &'static MessageSchema {
    &COMPILED
        .messages
        .iter()
        .find(|(key, _)| *key == (interface, mode))
        .expect("every interface has both modes")
        .1
}

/// Compiles every schema now, so that the first message check pays nothing extra.
pub fn warm_up() {
    LazyLock::force(&COMPILED);
}

/// The message schema as written in its file (with `$ref`s to `common.json` and `dem.json`).
pub fn document(interface: Interface, mode: Mode) -> &'static Value {
    &message(interface, mode).document
}

/// The message schema with every `$ref` resolved: what an MCP tool declares as its
/// `inputSchema`/`outputSchema`, usable without access to the other files.
pub fn self_contained(interface: Interface, mode: Mode) -> &'static Value {
    &message(interface, mode).self_contained
}

/// The compiled validator of a message schema (formats checked).
pub fn validator(interface: Interface, mode: Mode) -> &'static jsonschema::Validator {
    &message(interface, mode).validator
}

/// The compiled validator of the DataXMData secondary schema on its own.
pub fn dem_validator() -> &'static jsonschema::Validator {
    &COMPILED.dem_validator
}

/// The top-level properties of a message schema, in file order.
pub fn properties(interface: Interface, mode: Mode) -> &'static [Property] {
    &message(interface, mode).properties
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
