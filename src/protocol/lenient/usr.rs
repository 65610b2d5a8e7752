//! BKN-USR messages read leniently (see the module above). `RefinedUserState` is any JSON
//! object in the data type: the members the reference server gives it (after the MMC V2.5
//! Entity State) are read by name, every other member is kept and shown as it came.

use super::{Field, List};
use crate::protocol::message::{Fraction, Outcome};
use crate::protocol::usr::{EngagementMode, HypothesisStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A BKN-USR Request as sent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct UsrRequestView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub feedback: Field<FeedbackView>,
    #[serde(rename = "UserID", skip_serializing_if = "Field::is_absent")]
    pub user_id: Field<String>,
    /// The common members and any the data type does not name.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct FeedbackView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub hypothesis: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub conflicts: List<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub question: Field<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A BKN-USR Response as it came.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct UsrResponseView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub outcome: Field<Outcome>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub refined_user_state: Field<UserStateView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub engagement: Field<EngagementView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub provenance: Field<ProvenanceView>,
    /// The common members and any the data type does not name.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct EngagementView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub level: Field<Fraction>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub mode: Field<EngagementMode>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ProvenanceView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub sources: List<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub method: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub evidence: List<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A refined User State: the members of the reference server's shape, and the rest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct UserStateView {
    #[serde(rename = "UserID", skip_serializing_if = "Field::is_absent")]
    pub user_id: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub cycle: Field<u64>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub cognitive_state: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub emotion: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub social_attitude: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub focus: Field<FocusView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub hypotheses: List<HypothesisView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub intentions: List<IntentionView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub beliefs: List<BeliefView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub goals: List<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub answer: Field<AnswerView>,
    /// Members of another shape than the reference server's, shown as they came.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct FocusView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub target_type: Field<String>,
    #[serde(rename = "TargetID", skip_serializing_if = "Field::is_absent")]
    pub target_id: Field<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct HypothesisView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub statement: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub confidence: Field<Fraction>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub status: Field<HypothesisStatus>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct IntentionView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub intent: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub confidence: Field<Fraction>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct BeliefView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub statement: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub confidence: Field<Fraction>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AnswerView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub question: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub text: Field<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}
