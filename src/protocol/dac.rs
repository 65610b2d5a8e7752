//! BKN-DAC (PGM-KDA-V1.0) messages as Rust types, with the exact MPAI property names.
//! The schema files decide what is conformant; these types are how the program reads and
//! builds messages. `tests/schema_types.rs` checks that both agree on every name and enum.

use crate::protocol::interface::Interface;
use crate::protocol::message::{Common, CommonDefaults, Fraction, Index, Outcome};
use serde::{Deserialize, Serialize};
use strum::{Display, EnumIter, EnumString, IntoStaticStr, VariantArray};

/// What Basic Knowledge asks Domain Access for.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    EnumIter,
    EnumString,
    IntoStaticStr,
    Display,
    VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Kind {
    SemanticGrounding,
    Affordances,
    Constraints,
    BehaviouralExpectations,
    Feasibility,
    Clarification,
    Commitment,
}

names!(Kind);

/// The PA Status of MMM-TEC V2.2 that a Process Action would receive.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    EnumIter,
    EnumString,
    IntoStaticStr,
    Display,
    VariantArray,
)]
pub enum PaStatus {
    Ack,
    Clash,
    FaultyReq,
    IncID,
    IncDQ,
    InsRights,
    InsValue,
    LocOOR,
    PostRef,
    QualNS,
}

names!(PaStatus);

impl PaStatus {
    /// When the status is given (MCP-BINDING section 5), in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            PaStatus::Ack => "can be performed",
            PaStatus::Clash => "conflicts with the state or a retained commitment",
            PaStatus::FaultyReq => {
                "faulty request: unparsable, unknown Action or missing complement"
            }
            PaStatus::IncID => "an ID is unknown in the Space",
            PaStatus::IncDQ => "a Data Qualifier does not match the Item's",
            PaStatus::InsRights => "the requester lacks the Rights",
            PaStatus::InsValue => "the wallet holds too little Value",
            PaStatus::LocOOR => "a location is out of the Space or of reach",
            PaStatus::PostRef => "the receiving service refused the Post",
            PaStatus::QualNS => "the Item's Qualifier is not supported by the target",
        }
    }
}

/// Overall verdict of a feasibility check, from the best to the worst (a claim is
/// contradicted by its steps when it is better than what they say).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(EnumIter, EnumString, IntoStaticStr, Display, VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Overall {
    Feasible,
    PartiallyFeasible,
    Infeasible,
}

names!(Overall);

impl Overall {
    /// MCP-BINDING section 5: feasible when every step is Ack, infeasible when none is.
    pub fn of(statuses: impl IntoIterator<Item = PaStatus>) -> Overall {
        let (mut ack, mut total) = (0usize, 0usize);
        for status in statuses {
            total += 1;
            ack += usize::from(status == PaStatus::Ack);
        }
        Overall::of_counts(ack, total)
    }

    /// The same rule from counts: `ack` of `total` steps are Ack (a step with no PA Status,
    /// or one no MMM-TEC has, is not).
    pub fn of_counts(ack: usize, total: usize) -> Overall {
        if ack >= total {
            Overall::Feasible
        } else if ack == 0 {
            Overall::Infeasible
        } else {
            Overall::PartiallyFeasible
        }
    }
}

/// Status of one commitment of the dialogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(EnumIter, EnumString, IntoStaticStr, Display, VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum CommitmentState {
    Retained,
    Released,
    Conflicting,
}

names!(CommitmentState);

/// Whether a failed knowledge source may work if asked again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(EnumIter, EnumString, IntoStaticStr, Display, VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Nature {
    Transient,
    Permanent,
}

names!(Nature);

/// A BKN-DAC Request (Mode RQ).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DacRequest {
    #[serde(flatten)]
    pub common: Common,
    pub kind: Kind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terms: Option<Vec<Term>>,
    #[serde(rename = "EntityIDs", default, skip_serializing_if = "Option::is_none")]
    pub entity_ids: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<Space>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_actions: Option<Vec<ProcessActionStep>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commitments: Option<Vec<Commitment>>,
    #[serde(
        rename = "ReleasedCommitmentIDs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub released_commitment_ids: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Term {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Space {
    #[serde(rename = "SpaceID", default, skip_serializing_if = "Option::is_none")]
    pub space_id: Option<String>,
    #[serde(rename = "MLocation", default, skip_serializing_if = "Option::is_none")]
    pub m_location: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ProcessActionStep {
    pub step: Index,
    pub statement: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Commitment {
    #[serde(rename = "CommitmentID")]
    pub commitment_id: String,
    pub statement: String,
}

/// A BKN-DAC Response (Mode RS).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DacResponse {
    #[serde(flatten)]
    pub common: Common,
    #[serde(rename = "RequestID")]
    pub request_id: String,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commitment_status: Option<Vec<CommitmentStatusEntry>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feasibility: Option<Feasibility>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources_used: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Answer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_classes: Option<Vec<ObjectClass>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relations: Option<Vec<Relation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affordances: Option<Vec<Affordance>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavioural_expectations: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ObjectClass {
    pub class: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Fraction>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Relation {
    pub subject: String,
    pub predicate: String,
    pub object: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Affordance {
    #[serde(rename = "EntityID", default, skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    pub action: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CommitmentStatusEntry {
    #[serde(rename = "CommitmentID")]
    pub commitment_id: String,
    pub status: CommitmentState,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Feasibility {
    pub steps: Vec<StepResult>,
    pub overall: Overall,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StepResult {
    pub step: Index,
    #[serde(rename = "PAStatus")]
    pub pa_status: PaStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Failure {
    pub service: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    pub nature: Nature,
}

impl DacRequest {
    /// A Request of the given Kind with the common fields filled and nothing else.
    pub fn new(kind: Kind, dialog_id: &str, turn_index: u64, defaults: &CommonDefaults) -> Self {
        DacRequest {
            common: Common::request(Interface::Dac, dialog_id, turn_index, defaults),
            kind,
            question: None,
            terms: None,
            entity_ids: None,
            space: None,
            process_actions: None,
            commitments: None,
            released_commitment_ids: None,
        }
    }
}

impl DacResponse {
    /// An empty Response to `request` with the given Outcome, correlated as MCP-BINDING
    /// section 3 asks.
    pub fn answering(request: &Common, outcome: Outcome, aim_id: &str) -> Self {
        DacResponse {
            common: Common::response_to(request, aim_id),
            request_id: request.query_id.clone(),
            outcome,
            answer: None,
            commitment_status: None,
            feasibility: None,
            sources_used: None,
            failure: None,
        }
    }
}
