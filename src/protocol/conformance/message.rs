//! The message check: one message on its own against its schema and the mode rule
//! ("the properties that belong to the other mode shall not be present").

use crate::protocol::conformance::finding::{Check, Finding};
use crate::protocol::interface::{Interface, Mode};
use crate::protocol::requirement::Requirement;
use crate::protocol::schema;
use crate::protocol::spelling;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{Map, Value};

/// What the message check learnt about a message.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageCheck {
    /// The interface the message was checked as (from its Header, the caller, or its
    /// properties); `None` only when it is not an object.
    pub interface: Option<Interface>,
    pub mode: Option<Mode>,
    pub findings: Vec<Finding>,
}

impl MessageCheck {
    pub fn conforms(&self) -> bool {
        self.findings.is_empty()
    }
}

/// Checks one message. `expected` is the interface the caller knows the message to be (the
/// tool it came through); without it the Header decides.
pub fn check_message(value: &Value, expected: Option<Interface>) -> MessageCheck {
    check_message_as(value, expected, None)
}

/// Checks one message that must be of a given mode too (a tool takes only Requests; a client
/// expects only Responses back). A message of the other mode is reported and checked as the
/// expected one.
pub fn check_message_as(
    value: &Value,
    expected: Option<Interface>,
    expected_mode: Option<Mode>,
) -> MessageCheck {
    let Some(object) = value.as_object() else {
        return MessageCheck {
            interface: None,
            mode: None,
            findings: vec![Finding::new(
                "",
                Requirement::Header,
                Check::NotAnObject,
                format!(
                    "a BKN-DAC or BKN-USR message is a JSON object, this is {}",
                    a_type(value)
                ),
            )],
        };
    };
    let mut findings = Vec::new();
    let interface = resolve_interface(object, expected, &mut findings);
    let mode = resolve_mode(object, interface, expected_mode, &mut findings);
    let validator = schema::validator(interface, mode);
    if (interface, mode) == (Interface::Dac, Mode::Response) {
        check_feasibility(object, &mut findings);
        check_commitment_list(object, &mut findings);
    }
    if findings.is_empty() && validator.is_valid(value) {
        return MessageCheck {
            interface: Some(interface),
            mode: Some(mode),
            findings,
        };
    }
    let header_reported = findings.iter().any(|f| f.pointer == "/Header");
    let mode_reported = findings.iter().any(|f| f.pointer == "/Mode");
    // Header and Mode problems were reported above in their own words; the schema's
    // version of the same problem would only repeat them.
    let repeated = |f: &Finding| {
        (header_reported && f.pointer == "/Header") || (mode_reported && f.pointer == "/Mode")
    };
    for error in validator.iter_errors(value) {
        findings.extend(
            describe(interface, mode, &error)
                .into_iter()
                .filter(|f| !repeated(f)),
        );
    }
    MessageCheck {
        interface: Some(interface),
        mode: Some(mode),
        findings,
    }
}

/// MCP-BINDING section 5, on a Response alone: Overall agrees with the steps' PA Statuses, and
/// every step that is not Ack says why. Steps whose shape is wrong are the schema's to report;
/// these rules judge only what they can read.
fn check_feasibility(object: &Map<String, Value>, findings: &mut Vec<Finding>) {
    use crate::protocol::dac::{Overall, PaStatus};
    let Some(feasibility) = object.get("Feasibility") else {
        return;
    };
    let Some(steps) = feasibility.get("Steps").and_then(Value::as_array) else {
        return;
    };
    if steps.is_empty() {
        findings.push(Finding::new(
            "/Feasibility/Steps",
            Requirement::Response,
            Check::FeasibilityEmpty,
            "Feasibility has no steps; a Response carries Feasibility only with one step for \
             each Process Action of its Request (a feasibility Request without any is \
             answered not_answered)",
        ));
        return;
    }
    let statuses: Vec<Option<PaStatus>> = steps
        .iter()
        .map(|s| {
            s.get("PAStatus")
                .and_then(Value::as_str)
                .and_then(PaStatus::parse)
        })
        .collect();
    for (i, (step, status)) in steps.iter().zip(&statuses).enumerate() {
        let Some(status) = status.filter(|s| *s != PaStatus::Ack) else {
            continue;
        };
        // A Reason of another type is the schema's to report.
        let blank = match step.get("Reason") {
            None => true,
            Some(Value::String(r)) => r.trim().is_empty(),
            Some(_) => false,
        };
        if blank {
            findings.push(Finding::new(
                format!("/Feasibility/Steps/{i}/Reason"),
                Requirement::Response,
                Check::FeasibilityReason,
                format!(
                    "step {} is {} without a Reason; every step that is not Ack says why in \
                     plain words",
                    step.get("Step")
                        .map(Value::to_string)
                        .unwrap_or_else(|| i.to_string()),
                    status.as_str()
                ),
            ));
        }
    }
    let declared = feasibility
        .get("Overall")
        .and_then(Value::as_str)
        .and_then(Overall::parse);
    let known: Option<Vec<PaStatus>> = statuses.into_iter().collect();
    if let (Some(declared), Some(known)) = (declared, known)
        && !known.is_empty()
    {
        let implied = Overall::of(known.iter().copied());
        if implied != declared {
            let acks = known.iter().filter(|s| **s == PaStatus::Ack).count();
            findings.push(Finding::new(
                "/Feasibility/Overall",
                Requirement::Response,
                Check::FeasibilityOverall,
                format!(
                    "Overall is {} but {acks} of {} step{} {} Ack, which makes it {}",
                    declared.as_str(),
                    known.len(),
                    if known.len() == 1 { "" } else { "s" },
                    if known.len() == 1 { "is" } else { "are" },
                    implied.as_str()
                ),
            ));
        }
    }
}

/// The findings of what a message, as it was read, does that I-JSON forbids (RFC 7493,
/// MCP-BINDING section 6): a member name given twice, a number beyond a double. The text is
/// needed for these (a parsed value keeps neither), so the reader hands them over.
pub fn ijson_findings(
    value: &Value,
    irregular: &[crate::protocol::ijson::Irregularity],
    expected: Option<Interface>,
) -> Vec<Finding> {
    use crate::protocol::ijson::IrregularKind;
    if irregular.is_empty() {
        return Vec::new();
    }
    let interface = expected
        .or_else(|| interface_of(value))
        .unwrap_or(Interface::Dac);
    let mode = match value.get("Mode").and_then(Value::as_str) {
        Some("RS") => Mode::Response,
        _ => Mode::Request,
    };
    irregular
        .iter()
        .map(|i| {
            let requirement = requirement_of(interface, mode, &i.pointer);
            match &i.kind {
                IrregularKind::DuplicateMember(name) => Finding::new(
                    i.pointer.clone(),
                    requirement,
                    Check::DuplicateMember,
                    format!(
                        "the member \"{name}\" is given twice in one object; I-JSON gives each \
                         name once (readers disagree on which value counts)"
                    ),
                ),
                IrregularKind::NumberOutOfRange(text) => Finding::new(
                    i.pointer.clone(),
                    requirement,
                    Check::NumberRange,
                    format!(
                        "{text} is beyond the range of an IEEE double; I-JSON numbers are \
                         doubles (read here as the largest one)"
                    ),
                ),
            }
        })
        .collect()
}

/// MCP-BINDING section 4, on a Response alone: CommitmentStatus lists each commitment once.
fn check_commitment_list(object: &Map<String, Value>, findings: &mut Vec<Finding>) {
    let Some(listed) = object.get("CommitmentStatus").and_then(Value::as_array) else {
        return;
    };
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, entry) in listed.iter().enumerate() {
        let Some(id) = entry.get("CommitmentID").and_then(Value::as_str) else {
            continue; // the schema reports it
        };
        if let Some(&at) = first.get(id) {
            findings.push(Finding::new(
                format!("/CommitmentStatus/{i}/CommitmentID"),
                Requirement::Response,
                Check::CommitmentListedTwice,
                format!(
                    "{id} is listed again (first at /CommitmentStatus/{at}); CommitmentStatus \
                     lists each commitment once"
                ),
            ));
        } else {
            first.insert(id, i);
        }
    }
}

fn resolve_interface(
    object: &Map<String, Value>,
    expected: Option<Interface>,
    findings: &mut Vec<Finding>,
) -> Interface {
    let header = object.get("Header");
    let declared = header
        .and_then(Value::as_str)
        .and_then(Interface::from_header);
    match (expected, declared) {
        (Some(expected), Some(declared)) if expected != declared => {
            findings.push(Finding::new(
                "/Header",
                Requirement::Header,
                Check::HeaderInterface,
                format!(
                    "Header is {} ({declared}) but this is a {expected} exchange, whose Header is {}",
                    declared.header(),
                    expected.header()
                ),
            ));
            expected
        }
        (_, Some(declared)) => declared,
        (expected, None) => {
            let interface = expected.unwrap_or_else(|| guess_interface(object));
            let found = match header {
                None => "it is missing".to_owned(),
                Some(other) => format!("found {}", short(other)),
            };
            findings.push(Finding::new(
                "/Header",
                Requirement::Header,
                Check::HeaderValue,
                format!(
                    "Header must be {} ({interface}) or {} ({}); {found}",
                    interface.header(),
                    other_interface(interface).header(),
                    other_interface(interface)
                ),
            ));
            interface
        }
    }
}

fn other_interface(interface: Interface) -> Interface {
    match interface {
        Interface::Dac => Interface::Usr,
        Interface::Usr => Interface::Dac,
    }
}

/// The interface a message is: its Header's, else the one whose own properties it uses;
/// `None` for a message that is not an object or uses no property of either.
pub fn interface_of(value: &Value) -> Option<Interface> {
    let object = value.as_object()?;
    if let Some(i) = object
        .get("Header")
        .and_then(Value::as_str)
        .and_then(Interface::from_header)
    {
        return Some(i);
    }
    // A property of one mode that the other has not (not a common one), by the schema files'
    // names as written: resolving the schemas for it (`schema::properties`) cost a one-shot
    // `send` without a Header a tenth of its start, on its main thread.
    let own = |interface: Interface| {
        Mode::ALL.into_iter().any(|mode| {
            let other: Vec<&str> = schema::property_names(interface, mode.other()).collect();
            schema::property_names(interface, mode)
                .any(|name| !other.contains(&name) && object.contains_key(name))
        })
    };
    (own(Interface::Dac) || own(Interface::Usr)).then(|| guess_interface(object))
}

/// Without a usable Header: the interface more of whose own properties the message uses
/// (properties both interfaces have, like Outcome, tell nothing).
fn guess_interface(object: &Map<String, Value>) -> Interface {
    // The schema files' own property names: dereferencing the four schemas for this took a
    // tenth of a one-shot `send`'s start.
    let names = |interface: Interface| -> Vec<&'static str> {
        Mode::ALL
            .into_iter()
            .flat_map(|mode| schema::property_names(interface, mode))
            .collect()
    };
    let (dac, usr) = (names(Interface::Dac), names(Interface::Usr));
    let score = |own: &[&str], other: &[&str]| {
        own.iter()
            .filter(|n| !other.contains(n) && object.contains_key(**n))
            .count()
    };
    if score(&usr, &dac) > score(&dac, &usr) {
        Interface::Usr
    } else {
        Interface::Dac
    }
}

fn resolve_mode(
    object: &Map<String, Value>,
    interface: Interface,
    expected: Option<Mode>,
    findings: &mut Vec<Finding>,
) -> Mode {
    let value = object.get("Mode");
    let declared = value
        .and_then(Value::as_str)
        .and_then(|m| Mode::ALL.into_iter().find(|mode| mode.code() == m));
    match (declared, expected) {
        (Some(declared), Some(expected)) if declared != expected => {
            findings.push(Finding::new(
                "/Mode",
                Requirement::Header,
                Check::ModeValue,
                format!(
                    "Mode is {} ({declared}) where a {interface} {expected} ({}) is expected",
                    declared.code(),
                    expected.code()
                ),
            ));
            return expected;
        }
        (Some(declared), _) => return declared,
        (None, _) => {}
    }
    let has_response_property = schema::properties(interface, Mode::Response)
        .iter()
        .any(|p| !p.common && object.contains_key(&p.name));
    let mode = expected.unwrap_or(if has_response_property {
        Mode::Response
    } else {
        Mode::Request
    });
    let found = match value {
        None => "it is missing".to_owned(),
        Some(other) => format!("found {}", short(other)),
    };
    findings.push(Finding::new(
        "/Mode",
        Requirement::Header,
        Check::ModeValue,
        format!("Mode must be RQ (Request) or RS (Response); {found}; checked as a {mode}"),
    ));
    mode
}

/// Turns one schema error into findings (an `additionalProperties` error names several).
fn describe(interface: Interface, mode: Mode, error: &jsonschema::ValidationError) -> Vec<Finding> {
    let path = error.instance_path().as_str();
    match error.kind() {
        ValidationErrorKind::Required { property } => vec![missing_property(
            interface,
            mode,
            path,
            property.as_str().unwrap_or_default(),
        )],
        ValidationErrorKind::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|property| unexpected_property(interface, mode, path, property))
            .collect(),
        _ => {
            let (check, message) = what_is_wrong(path, error);
            vec![Finding::new(
                path,
                requirement_of(interface, mode, path),
                check,
                message,
            )]
        }
    }
}

/// A required `property` missing from the object at `path` (its finding points at where it
/// should be, under that property's requirement).
fn missing_property(interface: Interface, mode: Mode, path: &str, property: &str) -> Finding {
    let pointer = format!("{path}/{}", escape(property));
    let requirement = requirement_of(interface, mode, &pointer);
    let message = if path.is_empty() {
        format!("{property} is required in a {interface} {mode}")
    } else {
        format!("{property} is required in {}", subject(path))
    };
    Finding::new(pointer, requirement, Check::Required, message)
}

/// A `property` the object at `path` must not have: at the top, one of the other Mode's is
/// a foreign property (a Request carrying a Response's), any other is unknown.
fn unexpected_property(interface: Interface, mode: Mode, path: &str, property: &str) -> Finding {
    let pointer = format!("{path}/{}", escape(property));
    if path.is_empty() && belongs_to(interface, mode.other(), property) {
        return Finding::new(
            pointer,
            Requirement::Header,
            Check::ForeignProperty,
            format!(
                "{property} belongs to a {interface} {}; a {mode} must not carry it",
                mode.other()
            ),
        );
    }
    let (requirement, whose) = if path.is_empty() {
        (
            requirement_of(interface, mode, ""),
            format!("a {interface} {mode}"),
        )
    } else {
        (requirement_of(interface, mode, path), subject(path))
    };
    Finding::new(
        pointer,
        requirement,
        Check::UnknownProperty,
        format!("{property} is not a property of {whose}"),
    )
}

/// The check a value at `path` fails and the sentence that says how (type, enum, range,
/// format, length, items, pattern, shape).
fn what_is_wrong(path: &str, error: &jsonschema::ValidationError) -> (Check, String) {
    let instance = error.instance();
    let name = subject(path);
    if let Some(broken) = bound_broken(&name, instance, error.kind()) {
        return broken;
    }
    match error.kind() {
        ValidationErrorKind::Type { kind } => (
            Check::Type,
            format!(
                "{name} must be {}, found {}",
                expected_types(kind),
                a_type(instance)
            ),
        ),
        ValidationErrorKind::Constant { expected_value } => (
            Check::Enum,
            format!("{name} must be {expected_value}, found {}", short(instance)),
        ),
        ValidationErrorKind::Enum { options } => {
            let hint = instance
                .as_str()
                .and_then(|found| {
                    let allowed = options.as_array()?.iter().filter_map(Value::as_str);
                    spelling::closest(found, allowed)
                })
                .map(|s| format!(" (did you mean {s}?)"))
                .unwrap_or_default();
            (
                Check::Enum,
                format!(
                    "{name} must be one of {}; found {}{hint}",
                    list(options),
                    short(instance)
                ),
            )
        }
        ValidationErrorKind::Format { format } => (
            Check::Format,
            if format == "date-time" {
                format!(
                    "{name} must be an RFC 3339 date-time such as 2026-11-29T21:56:46Z, found {}",
                    short(instance)
                )
            } else {
                format!("{name} must be a valid {format}, found {}", short(instance))
            },
        ),
        ValidationErrorKind::Pattern { pattern } => (
            Check::Pattern,
            format!(
                "{name} must match the pattern {pattern}, found {}",
                short(instance)
            ),
        ),
        ValidationErrorKind::OneOfNotValid { .. } | ValidationErrorKind::AnyOf { .. } => (
            Check::Shape,
            format!(
                "{name} matches none of its allowed forms ({})",
                allowed_forms(path)
            ),
        ),
        ValidationErrorKind::OneOfMultipleValid { .. } => (
            Check::Shape,
            format!("{name} matches more than one of its allowed forms"),
        ),
        _ => (Check::Shape, format!("{name}: {error}")),
    }
}

/// The check and sentence of a bound the value at `name` breaks: a range, a length, a
/// count of items, unique items; `None` for any other error.
fn bound_broken(
    name: &str,
    instance: &Value,
    kind: &ValidationErrorKind,
) -> Option<(Check, String)> {
    Some(match kind {
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit } => (
            Check::Range,
            format!("{name} must be at least {limit}, found {}", short(instance)),
        ),
        ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => (
            Check::Range,
            format!("{name} must be at most {limit}, found {}", short(instance)),
        ),
        ValidationErrorKind::MaxLength { limit } => (
            Check::Length,
            format!(
                "{name} must be at most {limit} characters, found {}",
                instance.as_str().map(|s| s.chars().count()).unwrap_or(0)
            ),
        ),
        ValidationErrorKind::MinLength { limit } => (
            Check::Length,
            format!("{name} must be at least {limit} characters long"),
        ),
        ValidationErrorKind::MinItems { limit } => (
            Check::Items,
            format!(
                "{name} must have at least {limit} item{}",
                if *limit == 1 { "" } else { "s" }
            ),
        ),
        ValidationErrorKind::MaxItems { limit } => (
            Check::Items,
            format!("{name} must have at most {limit} items"),
        ),
        ValidationErrorKind::UniqueItems => {
            (Check::Items, format!("the items of {name} must be unique"))
        }
        _ => return None,
    })
}

/// Whether `property` is one of the mode-specific properties of `mode`.
fn belongs_to(interface: Interface, mode: Mode, property: &str) -> bool {
    schema::property(interface, mode, property).is_some_and(|p| !p.common)
}

/// The requirement a problem at `pointer` breaks: the one of the top-level property it is in.
fn requirement_of(interface: Interface, mode: Mode, pointer: &str) -> Requirement {
    let top = pointer.split('/').nth(1).map(unescape);
    match top
        .as_deref()
        .and_then(|p| schema::property(interface, mode, p))
    {
        Some(property) => property.requirement,
        None => match mode {
            Mode::Request => Requirement::Request,
            Mode::Response => Requirement::Response,
        },
    }
}

/// How a pointer reads in a sentence: `/Answer/ObjectClasses/2/Confidence` is "Confidence",
/// `/Terms/0` is "item 0 of Terms", the root is "the message".
fn subject(pointer: &str) -> String {
    let segments: Vec<String> = pointer.split('/').skip(1).map(unescape).collect();
    match segments.as_slice() {
        [] => "the message".to_owned(),
        [.., parent, last] if last.parse::<usize>().is_ok() => format!("item {last} of {parent}"),
        [.., last] => last.clone(),
    }
}

fn allowed_forms(pointer: &str) -> &'static str {
    if pointer.starts_with("/DataXMData/Source") {
        "{\"AIMID\": …} or {\"ImplementerAIMID\": …}"
    } else {
        "see the schema"
    }
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn expected_types(kind: &TypeKind) -> String {
    let names: Vec<String> = match kind {
        TypeKind::Single(t) => vec![t.to_string()],
        TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
    };
    names
        .iter()
        .map(|n| with_article(n))
        .collect::<Vec<_>>()
        .join(" or ")
}

fn with_article(type_name: &str) -> String {
    match type_name {
        "array" | "object" | "integer" => format!("an {type_name}"),
        "null" => "null".to_owned(),
        other => format!("a {other}"),
    }
}

/// "a string (\"abc\")", "an object", "null": what a value is, for messages.
pub(crate) fn a_type(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) if n.is_i64() || n.is_u64() => format!("an integer ({n})"),
        Value::Number(n) => format!("a number ({n})"),
        Value::String(_) => format!("a string ({})", short(value)),
        Value::Array(a) => format!("an array of {} item{}", a.len(), plural(a.len())),
        Value::Object(_) => "an object".to_owned(),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A value in a message, shortened so one finding stays one line.
pub(crate) fn short(value: &Value) -> String {
    const MAX: usize = 60;
    let text = match value {
        Value::Array(_) | Value::Object(_) => return a_type(value),
        other => other.to_string(),
    };
    if text.chars().count() <= MAX {
        text
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

fn list(options: &Value) -> String {
    options
        .as_array()
        .map(|values| {
            values
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| v.to_string())
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod interface_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_message_without_a_header_is_told_by_its_own_properties() {
        let dac = json!({"Kind": "constraints", "EntityIDs": ["Kiosk#3"]});
        assert_eq!(interface_of(&dac), Some(Interface::Dac));
        let usr = json!({"Feedback": [], "UserID": "U1", "DialogID": "d"});
        assert_eq!(interface_of(&usr), Some(Interface::Usr));
        let response = json!({"RefinedUserState": {}, "Outcome": "answered"});
        assert_eq!(interface_of(&response), Some(Interface::Usr));
        // Properties every message has tell nothing.
        let common = json!({"DialogID": "d", "TurnIndex": 0, "QueryID": "q"});
        assert_eq!(interface_of(&common), None);
        // The Header says first.
        let headed = json!({"Header": "PGM-KUS-V1.0", "Kind": "constraints"});
        assert_eq!(interface_of(&headed), Some(Interface::Usr));
    }
}
