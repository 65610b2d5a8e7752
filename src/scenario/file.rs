//! A scenario file as written (YAML, or JSON, which YAML reads too), with the line and column
//! of everything a check may need to point at. `super::load` turns it into a `Scenario`.
//! The same types read JSON through serde_json (`super::parse`'s fast path): `Spanned` then
//! holds its value with an unknown place.

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_saphyr::Spanned;
use std::fmt;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    pub name: Option<String>,
    pub description: Option<String>,
    pub server: Option<Spanned<ServerFile>>,
    pub interface: Option<Spanned<String>>,
    #[serde(default)]
    pub defaults: DefaultsFile,
    pub steps: Vec<StepFile>,
}

/// Where the scenario runs when the command line names no server.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    pub embedded: Option<String>,
    pub stdio: Option<String>,
    pub url: Option<String>,
    /// A server by name from `servers` (a file in the mcpServers shape).
    pub name: Option<String>,
    pub servers: Option<String>,
}

/// The common fields of its Requests, over what the server publishes.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultsFile {
    #[serde(rename = "MInstance")]
    pub m_instance: Option<String>,
    #[serde(rename = "UEnvironment")]
    pub u_environment: Option<String>,
    #[serde(rename = "SessionID")]
    pub session_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepFile {
    pub name: Option<String>,
    pub request: Fields,
    /// Send the Request as written (no common field filled).
    #[serde(default)]
    pub as_is: bool,
    /// Go on in a new MCP session from this step (as after a reconnect).
    #[serde(default)]
    pub new_session: bool,
    pub expect: Option<ExpectFile>,
    pub capture: Option<Fields>,
    pub retry: Option<Spanned<RetryFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryFile {
    /// How many times the step may be sent again (after the first).
    pub times: u32,
    /// How long to wait between two sendings, written as on the command line ("250ms",
    /// "2s"; plain numbers are seconds).
    #[serde(default, deserialize_with = "crate::duration::optional_in_file")]
    pub delay: Option<std::time::Duration>,
    /// The same in milliseconds (what scenario files said before `delay`).
    pub delay_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectFile {
    pub conforms: Option<Spanned<bool>>,
    pub findings: Option<Vec<Spanned<String>>>,
    pub tool_error: Option<Spanned<Value>>,
    pub outcome: Option<Spanned<Value>>,
    pub values: Option<Fields>,
    pub feasibility: Option<FeasibilityFile>,
    pub commitments: Option<Fields>,
    pub user_state: Option<Fields>,
    pub engagement: Option<EngagementFile>,
    pub latency_ms: Option<Spanned<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeasibilityFile {
    pub steps: Option<Vec<Spanned<String>>>,
    pub overall: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngagementFile {
    pub level: Option<Spanned<Value>>,
    pub mode: Option<Spanned<Value>>,
}

/// A mapping kept in order, each key and value with where it was written.
pub struct Fields(pub Vec<(Spanned<String>, Spanned<Value>)>);

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                let mut fields: Vec<(Spanned<String>, Spanned<Value>)> = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    // The YAML parser refuses a key written twice; JSON's does not (the fast
                    // path for JSON files must refuse what the YAML path refuses).
                    if fields.iter().any(|(k, _)| k.value == key.value) {
                        return Err(serde::de::Error::custom(format!(
                            "duplicate key {:?}",
                            key.value
                        )));
                    }
                    let value = map.next_value::<Spanned<Value>>()?;
                    fields.push((key, value));
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}
