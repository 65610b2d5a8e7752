//! The MCP resources a server publishes so that a client can compose good Requests
//! (MCP-BINDING section 1): `dac://domain`, `dac://spaces/<SpaceID>`, `usr://users` and
//! `usr://users/<UserID>`. Their JSON shapes are JSON Schemas under `docs/resources/`
//! (embedded here, printed by `bkn-explorer schema`); this module reads exactly those shapes,
//! tolerant of the obvious variants (plain strings where objects are expected, Items under
//! `Items` or `Entities`), into the M-Instance a server serves and the words a composer
//! completes from. Pure: the caller reads the resources.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// One of the resource shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shape {
    DacDomain,
    DacSpace,
    UsrUsers,
    UsrUser,
}

impl Shape {
    pub const ALL: [Shape; 4] = [
        Shape::DacDomain,
        Shape::DacSpace,
        Shape::UsrUsers,
        Shape::UsrUser,
    ];

    /// The name `bkn-explorer schema` takes, e.g. `dac-domain`.
    pub fn name(self) -> &'static str {
        match self {
            Shape::DacDomain => "dac-domain",
            Shape::DacSpace => "dac-space",
            Shape::UsrUsers => "usr-users",
            Shape::UsrUser => "usr-user",
        }
    }

    /// The schema's text (`docs/resources/<name>.schema.json`).
    pub fn schema(self) -> &'static str {
        match self {
            Shape::DacDomain => include_str!("../../docs/resources/dac-domain.schema.json"),
            Shape::DacSpace => include_str!("../../docs/resources/dac-space.schema.json"),
            Shape::UsrUsers => include_str!("../../docs/resources/usr-users.schema.json"),
            Shape::UsrUser => include_str!("../../docs/resources/usr-user.schema.json"),
        }
    }

    /// The shape a resource URI has, if it is one of these.
    pub fn of_uri(uri: &str) -> Option<Shape> {
        if uri == DAC_DOMAIN {
            Some(Shape::DacDomain)
        } else if uri.strip_prefix(DAC_SPACES).is_some_and(|s| !s.is_empty()) {
            Some(Shape::DacSpace)
        } else if uri == USR_USERS {
            Some(Shape::UsrUsers)
        } else if uri.strip_prefix(USR_USER).is_some_and(|s| !s.is_empty()) {
            Some(Shape::UsrUser)
        } else {
            None
        }
    }

    /// Where a resource breaks its shape: (JSON pointer, message) for each mistake.
    pub fn check(self, value: &Value) -> Vec<(String, String)> {
        static VALIDATORS: LazyLock<BTreeMap<Shape, jsonschema::Validator>> = LazyLock::new(|| {
            Shape::ALL
                .into_iter()
                .map(|shape| {
                    let schema: Value =
                        serde_json::from_str(shape.schema()).expect("embedded schemas are JSON");
                    let validator = jsonschema::options()
                        .with_draft(jsonschema::Draft::Draft202012)
                        .build(&schema)
                        .expect("embedded schemas compile");
                    (shape, validator)
                })
                .collect()
        });
        VALIDATORS[&self]
            .iter_errors(value)
            .map(|e| (e.instance_path().to_string(), e.to_string()))
            .collect()
    }
}

pub const DAC_DOMAIN: &str = "dac://domain";
pub const DAC_SPACES: &str = "dac://spaces/";
pub const USR_USERS: &str = "usr://users";
pub const USR_USER: &str = "usr://users/";
/// This project's own addition: the evidence cues a User State Refinement understands.
pub const USR_CUES: &str = "usr://cues";

/// What a server says about itself in its resources: the M-Instance (and U-Environment) it
/// serves, and which resource said it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Published {
    pub m_instance: Option<String>,
    #[serde(rename = "UEnvironment")]
    pub u_environment: Option<String>,
    /// The resource that named them, e.g. `dac://domain`.
    pub source: String,
}

/// The M-Instance and U-Environment of a `dac://domain` or `usr://users` resource.
pub fn published(uri: &str, value: &Value) -> Option<Published> {
    if !matches!(Shape::of_uri(uri), Some(Shape::DacDomain | Shape::UsrUsers)) {
        return None;
    }
    let text = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    let published = Published {
        m_instance: text("MInstance"),
        u_environment: text("UEnvironment"),
        source: uri.to_owned(),
    };
    published.m_instance.is_some().then_some(published)
}

/// The same from the resource's text as served. Only the two names are read: the rest is
/// skipped, not built (a domain is tens of kilobytes, and a one-shot `send` reads it for these
/// two alone: building it whole was a tenth of that command's main thread).
pub fn published_in_text(uri: &str, text: &str) -> Option<Published> {
    #[derive(Deserialize)]
    struct Names {
        #[serde(rename = "MInstance")]
        m_instance: Option<Value>,
        #[serde(rename = "UEnvironment")]
        u_environment: Option<Value>,
    }
    // A derived struct also reads an array as its fields in order: only an object is read short.
    let object = text.trim_start().starts_with('{');
    let value = match serde_json::from_str::<Names>(text) {
        Ok(names) if object => {
            let mut value = serde_json::Map::new();
            value.extend(names.m_instance.map(|v| ("MInstance".to_owned(), v)));
            value.extend(names.u_environment.map(|v| ("UEnvironment".to_owned(), v)));
            Value::Object(value)
        }
        // Anything the short read refuses (not an object, a name given twice) is read whole,
        // so that both ways agree on every text.
        _ => serde_json::from_str(text).ok()?,
    };
    published(uri, &value)
}

/// The lists a composer completes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Words {
    /// Item and Process IDs.
    Entities,
    MLocations,
    Spaces,
    Actions,
    Classes,
    Users,
    Cues,
}

impl Words {
    pub fn name(self) -> &'static str {
        match self {
            Words::Entities => "Entity IDs",
            Words::MLocations => "M-Locations",
            Words::Spaces => "Spaces",
            Words::Actions => "Actions",
            Words::Classes => "classes",
            Words::Users => "Users",
            Words::Cues => "cues",
        }
    }

    /// The resource the list comes from, for people.
    pub fn source(self) -> &'static str {
        match self {
            Words::Entities | Words::MLocations | Words::Actions => "dac://spaces/<SpaceID>",
            Words::Spaces | Words::Classes => "dac://domain",
            Words::Users => "usr://users",
            Words::Cues => "usr://cues",
        }
    }
}

/// What a server's resources offer for completion, and why a list is empty when it is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vocabulary {
    pub words: BTreeMap<Words, Vec<String>>,
    /// What went wrong reading the resources (a read that failed, a resource whose shape
    /// is not the one of docs/resources): said where a list is empty.
    pub problems: Vec<String>,
    /// Whether the server offers resources at all.
    pub has_resources: bool,
    /// The resources that were read.
    pub read: Vec<String>,
}

impl Vocabulary {
    pub fn list(&self, words: Words) -> &[String] {
        self.words.get(&words).map(Vec::as_slice).unwrap_or(&[])
    }

    pub fn add(&mut self, words: Words, id: &str) {
        let list = self.words.entry(words).or_default();
        if !id.is_empty() && !list.iter().any(|x| x == id) {
            list.push(id.to_owned());
        }
    }

    /// Why there is nothing to complete for `words`, in a sentence; `None` when there is.
    pub fn why_empty(&self, words: Words) -> Option<String> {
        if !self.list(words).is_empty() {
            return None;
        }
        if !self.has_resources {
            return Some(format!(
                "no {} to complete: the server offers no resources (MCP-BINDING section 1 \
                 suggests {})",
                words.name(),
                words.source()
            ));
        }
        let mut why = format!(
            "no {} to complete: the server's {} lists none",
            words.name(),
            words.source()
        );
        if let Some(p) = self.problems.first() {
            why.push_str(&format!(" ({p})"));
        }
        Some(why)
    }

    /// Reads one resource into the lists; `uri` decides what it is.
    pub fn read(&mut self, uri: &str, value: &Value) {
        if uri == USR_CUES {
            self.read.push(uri.to_owned());
            for c in value.as_array().into_iter().flatten() {
                if let Some(cue) = id_of(c, &["Cue"]) {
                    self.add(Words::Cues, cue);
                }
            }
            return;
        }
        let Some(shape) = Shape::of_uri(uri) else {
            return;
        };
        self.read.push(uri.to_owned());
        if let Some((at, problem)) = shape.check(value).into_iter().next() {
            self.problems.push(format!(
                "{uri} is not of the shape in docs/resources/{}.schema.json: {}: {problem}",
                shape.name(),
                if at.is_empty() { "/" } else { &at }
            ));
        }
        match shape {
            Shape::DacDomain => self.read_domain(value),
            Shape::DacSpace => self.read_space(uri, value),
            Shape::UsrUsers => self.add_ids(value, "Users", &["UserID"], Words::Users),
            Shape::UsrUser => {
                let id = value
                    .get("UserID")
                    .and_then(Value::as_str)
                    .or_else(|| uri.strip_prefix(USR_USER));
                if let Some(id) = id {
                    self.add(Words::Users, id);
                }
            }
        }
    }

    /// `dac://domain`: its Spaces, classes, Processes and Actions.
    fn read_domain(&mut self, value: &Value) {
        self.add_ids(value, "Spaces", &["SpaceID"], Words::Spaces);
        self.add_ids(value, "Classes", &["ClassID", "Class"], Words::Classes);
        self.add_ids(value, "Processes", &["ProcessID"], Words::Entities);
        self.add_ids(value, "Actions", &["Action"], Words::Actions);
    }

    /// `dac://spaces/<SpaceID>`: the Space, its M-Locations and the Entities there (placed
    /// or listed beside), and its Actions.
    fn read_space(&mut self, uri: &str, value: &Value) {
        if let Some(id) = uri.strip_prefix(DAC_SPACES) {
            self.add(Words::Spaces, id);
        }
        for loc in list(value, "MLocations") {
            if let Some(id) = id_of(loc, &["MLocationID"]) {
                self.add(Words::MLocations, id);
            }
            for e in list(loc, "Items").chain(list(loc, "Processes")) {
                self.entity(e);
            }
        }
        for name in ["Entities", "Items", "UnplacedItems", "Processes"] {
            for e in list(value, name) {
                self.entity(e);
            }
        }
        self.add_ids(value, "Actions", &["Action"], Words::Actions);
    }

    /// The ID (under one of `keys`, or the element itself if a string) of each element of
    /// the list `name`, as `words`.
    fn add_ids(&mut self, value: &Value, name: &str, keys: &[&str], words: Words) {
        for x in list(value, name) {
            if let Some(id) = id_of(x, keys) {
                self.add(words, id);
            }
        }
    }

    fn entity(&mut self, e: &Value) {
        if let Some(id) = id_of(e, &["ItemID", "ProcessID", "EntityID"]) {
            self.add(Words::Entities, id);
        }
    }
}

/// The items of an array member (none when it is absent or not an array).
fn list<'a>(value: &'a Value, name: &str) -> impl Iterator<Item = &'a Value> {
    value
        .get(name)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// An ID given as a plain string, or as the first of `names` an object has.
fn id_of<'a>(value: &'a Value, names: &[&str]) -> Option<&'a str> {
    match value {
        Value::String(s) => Some(s),
        Value::Object(_) => names
            .iter()
            .find_map(|n| value.get(*n).and_then(Value::as_str)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_short_read_of_a_resource_agrees_with_the_whole_one() {
        let texts = [
            r#"{"MInstance":"MI:Square","UEnvironment":"UE:Square","Spaces":[{"SpaceID":"S"}]}"#,
            r#"{"Spaces":{"deep":[1,2,{"MInstance":"inner"}]},"MInstance":"MI:Late"}"#,
            r#"{"MInstance":7,"UEnvironment":"UE:x"}"#,
            r#"{"MInstance":"MI:First","MInstance":"MI:Second"}"#,
            r#"{"UEnvironment":"UE:only"}"#,
            r#"["MInstance","MI:x"]"#,
            r#""MI:x""#,
            "not JSON at all",
            "",
        ];
        for uri in [DAC_DOMAIN, USR_USERS, "dac://spaces/S"] {
            for text in texts {
                let whole = serde_json::from_str(text).unwrap_or(Value::String(text.to_owned()));
                assert_eq!(
                    published_in_text(uri, text),
                    published(uri, &whole),
                    "{uri}: {text}"
                );
            }
        }
    }
    use super::*;
    use serde_json::json;

    #[test]
    fn variants_are_read_alike() {
        let mut v = Vocabulary {
            has_resources: true,
            ..Vocabulary::default()
        };
        v.read(
            "dac://spaces/Space:A",
            &json!({"SpaceID": "Space:A", "MLocations": ["MLoc:A.1", {"MLocationID": "MLoc:A.2",
                "Items": [{"ItemID": "Kiosk#1"}]}], "Items": ["Bench#1"], "Entities": [{"ProcessID": "P#1"}]}),
        );
        assert_eq!(v.list(Words::MLocations), ["MLoc:A.1", "MLoc:A.2"]);
        assert_eq!(v.list(Words::Entities), ["Kiosk#1", "P#1", "Bench#1"]);
        assert!(v.problems.is_empty(), "{:?}", v.problems);
        assert!(
            v.why_empty(Words::Users)
                .unwrap()
                .contains("usr://users lists none")
        );
        v.read("dac://spaces/Space:B", &json!({"MLocations": 3}));
        assert!(v.problems[0].contains("dac-space"), "{:?}", v.problems);
    }

    #[test]
    fn the_m_instance_comes_from_the_domain_or_the_users() {
        let p = published(
            USR_USERS,
            &json!({"MInstance": "MI:X", "UEnvironment": "UE:1", "Users": []}),
        )
        .unwrap();
        assert_eq!(
            (p.m_instance.as_deref(), p.u_environment.as_deref()),
            (Some("MI:X"), Some("UE:1"))
        );
        assert_eq!(published(DAC_DOMAIN, &json!({"Label": "x"})), None);
        assert_eq!(
            published("dac://spaces/S", &json!({"MInstance": "MI:X"})),
            None
        );
    }
}
