//! What every BKN-DAC and BKN-USR message has in common (Table 1 of both data types), and the
//! builder that fills it for a new Request or Response.

use crate::protocol::interface::{Interface, Mode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use uuid::Uuid;

/// The members every message of both data types has: the header, the identification, the
/// dialogue's correlation and the metadata (and a Response's RequestID). They say nothing of
/// what a message is about: a recording's expectations and a report's gist leave them out.
pub const COMMON_FIELDS: [&str; 11] = [
    "Header",
    "Mode",
    "MInstance",
    "UEnvironment",
    "SessionID",
    "QueryID",
    "QueryTime",
    "DialogID",
    "TurnIndex",
    "DataXMData",
    "RequestID",
];

/// The properties common to the Request and the Response (Table 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Common {
    pub header: String,
    pub mode: Mode,
    pub m_instance: String,
    pub u_environment: String,
    #[serde(rename = "SessionID")]
    pub session_id: String,
    #[serde(rename = "QueryID")]
    pub query_id: String,
    /// RFC 3339 date-time, kept as text so that a message round-trips byte for byte.
    pub query_time: String,
    #[serde(rename = "DialogID")]
    pub dialog_id: String,
    pub turn_index: Index,
    #[serde(rename = "DataXMData")]
    pub data_x_m_data: DataXMData,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descr_metadata: Option<String>,
}

/// MPAI-PTF Data Exchange Metadata in its minimum form (`DataID`, `Source`); the other PTF
/// fields are kept as they came.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataXMData {
    #[serde(rename = "DataID")]
    pub data_id: String,
    #[serde(rename = "Source")]
    pub source: Vec<SourceRef>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A Process Instance that produced the Data, by AIM ID or implementer AIM ID.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SourceRef {
    Aim {
        #[serde(rename = "AIMID")]
        aim_id: String,
    },
    Implementer {
        #[serde(rename = "ImplementerAIMID")]
        implementer_aim_id: String,
    },
}

/// The outcome of a Response, in both data types.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::EnumIter,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Outcome {
    Answered,
    PartiallyAnswered,
    NotAnswered,
}

names!(Outcome);

/// A number from 0 to 1 (a Confidence, an Engagement Level), kept exactly as written so that
/// `1` stays `1` and does not come back as `1.0`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fraction(serde_json::Number);

impl Fraction {
    /// The value clamped to 0..1 and rounded to 3 decimals, as the reference servers write it.
    pub fn new(value: f64) -> Fraction {
        let value = (value.clamp(0.0, 1.0) * 1000.0).round() / 1000.0;
        Fraction(serde_json::Number::from_f64(value).unwrap_or_else(|| 0.into()))
    }

    pub fn get(&self) -> f64 {
        self.0.as_f64().unwrap_or(0.0)
    }
}

/// A TurnIndex or a Step: an integer from 0. JSON Schema counts `2.0` as an integer, so a
/// conformant message may carry one; it is read as 2 and written back as it came.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Index(serde_json::Number);

impl Index {
    pub fn get(&self) -> u64 {
        as_count(&self.0).unwrap_or(0)
    }

    /// The number, when it is one an Index may be (a lenient reading keeps any number).
    pub fn checked(&self) -> Option<u64> {
        as_count(&self.0)
    }
}

impl From<u64> for Index {
    fn from(n: u64) -> Index {
        Index(n.into())
    }
}

impl std::fmt::Display for Index {
    /// The count, or the number as it came when it is none (`-1` is not shown as `0`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.checked() {
            Some(n) => write!(f, "{n}"),
            None => write!(f, "{}", self.0),
        }
    }
}

/// The largest TurnIndex or Step (MCP-BINDING section 6: 2^53-1, the I-JSON range, the largest
/// integer every JSON reader keeps exact).
pub const MAX_INDEX: u64 = (1 << 53) - 1;

fn as_count(n: &serde_json::Number) -> Option<u64> {
    n.as_u64()
        .or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f <= MAX_INDEX as f64)
                .map(|f| f as u64)
        })
        .filter(|n| *n <= MAX_INDEX)
}

/// A JSON value read as an Index (TurnIndex, Step): an integer from 0 to `MAX_INDEX`, `2.0`
/// included; `None` for anything else (which the schema reports).
pub fn as_index(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => as_count(n),
        _ => None,
    }
}

/// The values a client or server fills in when the user has not said otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CommonDefaults {
    pub m_instance: String,
    pub u_environment: String,
    #[serde(rename = "SessionID")]
    pub session_id: String,
    /// The AIM ID put in `DataXMData.Source` of the messages this side produces.
    #[serde(rename = "AIMID")]
    pub aim_id: String,
}

impl Default for CommonDefaults {
    /// Matches the shipped reference domain, so that a fresh explorer talks to the fresh
    /// reference servers without any set-up.
    fn default() -> Self {
        CommonDefaults {
            m_instance: "MI:PublicSquare".into(),
            u_environment: "UE:Square".into(),
            session_id: "AUS:1".into(),
            aim_id: "PGM-BKN".into(),
        }
    }
}

/// The current time as RFC 3339 with millisecond precision, in UTC.
pub fn now_rfc3339() -> String {
    rfc3339(OffsetDateTime::now_utc())
}

/// A time as RFC 3339 with millisecond precision, in UTC.
pub fn rfc3339(at: OffsetDateTime) -> String {
    use std::fmt::Write;
    // Always three digits of fraction (RFC 3339 formatting drops trailing zeros), so that
    // times have one width: columns line up and text compares in time order. Written with
    // `write!` rather than a `time` format description, which took a microsecond and a half
    // (two of them on every turn).
    let at = at.to_offset(time::UtcOffset::UTC);
    if !(0..=9999).contains(&at.year()) {
        // RFC 3339 has four-digit years only.
        return "1970-01-01T00:00:00.000Z".into();
    }
    let mut text = String::with_capacity(24);
    let _ = write!(
        text,
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    );
    text
}

/// A fresh identifier (UUID v4) for a QueryID, DataID or stdio DialogID.
pub fn new_id() -> String {
    Uuid::new_v4().to_string()
}

impl DataXMData {
    /// The minimum PTF form: a fresh DataID and the producing AIM as Source.
    pub fn minimal(aim_id: &str) -> DataXMData {
        DataXMData {
            data_id: new_id(),
            source: vec![SourceRef::Aim {
                aim_id: aim_id.to_owned(),
            }],
            other: Map::new(),
        }
    }
}

impl Common {
    /// The common part of a new Request: fresh QueryID and QueryTime, the given dialogue
    /// position, and the defaults for the rest.
    pub fn request(
        interface: Interface,
        dialog_id: &str,
        turn_index: u64,
        defaults: &CommonDefaults,
    ) -> Common {
        Common {
            header: interface.header().to_owned(),
            mode: Mode::Request,
            m_instance: defaults.m_instance.clone(),
            u_environment: defaults.u_environment.clone(),
            session_id: defaults.session_id.clone(),
            query_id: new_id(),
            query_time: now_rfc3339(),
            dialog_id: dialog_id.to_owned(),
            turn_index: turn_index.into(),
            data_x_m_data: DataXMData::minimal(&defaults.aim_id),
            descr_metadata: None,
        }
    }

    /// The common part of the Response to a Request whose common part is `request`: the
    /// identifiers copied, a new QueryID, `aim_id` as the source (MCP-BINDING section 3).
    pub fn response_to(request: &Common, aim_id: &str) -> Common {
        Common {
            header: request.header.clone(),
            mode: Mode::Response,
            m_instance: request.m_instance.clone(),
            u_environment: request.u_environment.clone(),
            session_id: request.session_id.clone(),
            query_id: new_id(),
            query_time: now_rfc3339(),
            dialog_id: request.dialog_id.clone(),
            turn_index: request.turn_index.clone(),
            data_x_m_data: DataXMData::minimal(aim_id),
            descr_metadata: None,
        }
    }
}

/// How to fill the common fields of a Request that the user wrote (possibly in part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// Add only the fields that are missing.
    Missing,
    /// Add missing fields and renew the ones that identify this message (QueryID, QueryTime,
    /// DialogID, DataXMData.DataID), keeping the content, TurnIndex included (a Response copies
    /// it): for a Request sent again in another dialogue, as a replay does.
    Fresh,
}

/// Fills the common fields of a Request given as a JSON object, from the same builder that
/// makes typed Requests. Properties that are not common are never touched; the common ones
/// come first, in the order of Table 1, so that a filled Request reads like the tables.
pub fn fill_request(
    object: &mut Map<String, Value>,
    interface: Interface,
    dialog_id: &str,
    turn_index: u64,
    defaults: &CommonDefaults,
    fill: Fill,
) {
    let common = Common::request(interface, dialog_id, turn_index, defaults);
    let Ok(Value::Object(filled)) = serde_json::to_value(&common) else {
        unreachable!("Common serialises to an object")
    };
    const RENEWED: [&str; 3] = ["QueryID", "QueryTime", "DialogID"];
    let mut given = std::mem::take(object);
    for (key, value) in filled {
        let renew = fill == Fill::Fresh && RENEWED.contains(&key.as_str());
        let value = match given.shift_remove(&key) {
            Some(existing) if !renew => existing,
            _ => value,
        };
        object.insert(key, value);
    }
    // DescrMetadata is common too, but optional: it keeps its place after the others.
    if let Some(descr) = given.shift_remove("DescrMetadata") {
        object.insert("DescrMetadata".into(), descr);
    }
    object.extend(given);
    // DataXMData.DataID names this datum: renewed by Fresh, and filled by Missing when a
    // DataXMData is given without one (a form keeps the Source and leaves the ID to us).
    if let Some(Value::Object(dem)) = object.get_mut("DataXMData")
        && (fill == Fill::Fresh || !dem.contains_key("DataID"))
    {
        dem.insert("DataID".into(), Value::String(new_id()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn query_time_is_rfc3339_utc_millis() {
        let t = now_rfc3339();
        use time::format_description::well_known::Rfc3339;
        assert!(OffsetDateTime::parse(&t, &Rfc3339).is_ok(), "{t}");
        assert_eq!(
            t.len(),
            "2026-11-29T23:31:55.980Z".len(),
            "{t}: three digits of fraction"
        );
        assert!(t.ends_with('Z'));
    }

    #[test]
    fn times_are_written_in_utc_with_three_digits_of_fraction() {
        let at = time::macros::datetime!(2026-03-04 01:02:03.5 +02:00);
        assert_eq!(rfc3339(at), "2026-03-03T23:02:03.500Z");
        let whole = time::macros::datetime!(2026-12-31 23:59:59 UTC);
        assert_eq!(rfc3339(whole), "2026-12-31T23:59:59.000Z");
    }

    #[test]
    fn fill_missing_keeps_what_is_there() {
        let mut obj = json!({"Kind": "constraints", "MInstance": "MI:Other", "TurnIndex": 9})
            .as_object()
            .unwrap()
            .clone();
        fill_request(
            &mut obj,
            Interface::Dac,
            "d1",
            3,
            &CommonDefaults::default(),
            Fill::Missing,
        );
        assert_eq!(obj["MInstance"], "MI:Other");
        assert_eq!(obj["TurnIndex"], 9);
        assert_eq!(obj["Header"], "PGM-KDA-V1.0");
        assert_eq!(obj["Mode"], "RQ");
        assert_eq!(obj["DialogID"], "d1");
        assert_eq!(obj["Kind"], "constraints");
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        assert_eq!(keys[0], "Header", "common fields come first: {keys:?}");
        assert_eq!(keys.last(), Some(&"Kind"));
    }

    #[test]
    fn fill_missing_gives_a_data_xm_data_without_an_id_one() {
        let source = json!([{"AIMID": "X"}]);
        for (given, kept) in [
            (json!({"Source": source}), false),
            (json!({"DataID": "mine", "Source": source}), true),
        ] {
            let mut obj = json!({"Kind": "constraints", "DataXMData": given})
                .as_object()
                .unwrap()
                .clone();
            fill_request(
                &mut obj,
                Interface::Dac,
                "d1",
                0,
                &CommonDefaults::default(),
                Fill::Missing,
            );
            let id = obj["DataXMData"]["DataID"].as_str().expect("a DataID");
            assert_eq!(id == "mine", kept);
            assert_eq!(obj["DataXMData"]["Source"], source);
        }
    }

    #[test]
    fn fill_fresh_renews_identity_but_keeps_content() {
        let mut obj = json!({"Kind": "constraints", "QueryID": "old", "TurnIndex": 9,
            "DialogID": "old", "MInstance": "MI:Other",
            "DataXMData": {"DataID": "old", "Source": [{"AIMID": "X"}]}})
        .as_object()
        .unwrap()
        .clone();
        fill_request(
            &mut obj,
            Interface::Dac,
            "d2",
            0,
            &CommonDefaults::default(),
            Fill::Fresh,
        );
        assert_ne!(obj["QueryID"], "old");
        assert_eq!(obj["TurnIndex"], 9, "TurnIndex is content");
        assert_eq!(obj["DialogID"], "d2");
        assert_eq!(obj["MInstance"], "MI:Other");
        assert_ne!(obj["DataXMData"]["DataID"], "old");
        assert_eq!(obj["DataXMData"]["Source"][0]["AIMID"], "X");
    }
}
