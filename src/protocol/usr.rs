//! BKN-USR (PGM-KUS-V1.0) messages as Rust types, with the exact MPAI property names.

use crate::protocol::interface::Interface;
use crate::protocol::message::{Common, CommonDefaults, Fraction, Outcome};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A BKN-USR Request (Mode RQ): deliberation feedback about a User.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UsrRequest {
    #[serde(flatten)]
    pub common: Common,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<Feedback>,
    #[serde(rename = "UserID", default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Feedback {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypothesis: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflicts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
}

/// A BKN-USR Response (Mode RS): the refined User State.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UsrResponse {
    #[serde(flatten)]
    pub common: Common,
    #[serde(rename = "RequestID")]
    pub request_id: String,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refined_user_state: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engagement: Option<Engagement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Engagement {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<EngagementMode>,
}

/// How the User engages (MMC V2.5 Entity State), per MCP-BINDING section 6.
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
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum EngagementMode {
    Passive,
    Interactive,
    Directive,
}

names!(EngagementMode);

/// How far the evidence supports a hypothesis, in the User State the reference server
/// refines (shaped after the MMC V2.5 Entity State; `RefinedUserState` is any object in the
/// data type, so a foreign server may say it otherwise).
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
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum HypothesisStatus {
    /// Confidence 0.7 or more.
    Supported,
    /// Between 0.3 and 0.7.
    Open,
    /// Confidence 0.3 or less.
    Rejected,
}

names!(HypothesisStatus);

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Provenance {
    pub sources: Vec<String>,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Vec<String>>,
}

impl UsrRequest {
    /// A Request with the common fields filled and nothing else.
    pub fn new(dialog_id: &str, turn_index: u64, defaults: &CommonDefaults) -> Self {
        UsrRequest {
            common: Common::request(Interface::Usr, dialog_id, turn_index, defaults),
            feedback: None,
            user_id: None,
        }
    }
}

impl UsrResponse {
    /// An empty Response to `request` with the given Outcome.
    pub fn answering(request: &Common, outcome: Outcome, aim_id: &str) -> Self {
        UsrResponse {
            common: Common::response_to(request, aim_id),
            request_id: request.query_id.clone(),
            outcome,
            refined_user_state: None,
            engagement: None,
            provenance: None,
        }
    }
}
