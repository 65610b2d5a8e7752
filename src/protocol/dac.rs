//! BKN-DAC (PGM-KDA-V1.0) messages as Rust types, with the exact MPAI property names.
//! The schema files decide what is conformant; these types are how the program reads and
//! builds messages. `tests/schema_types.rs` checks that both agree on every name and enum.

use crate::protocol::interface::Interface;
use crate::protocol::message::{Common, CommonDefaults, Fraction, Index, Outcome};
use serde::{Deserialize, Serialize};

/// What Basic Knowledge asks Domain Access for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    SemanticGrounding,
    Affordances,
    Constraints,
    BehaviouralExpectations,
    Feasibility,
    Clarification,
    Commitment,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::SemanticGrounding,
        Kind::Affordances,
        Kind::Constraints,
        Kind::BehaviouralExpectations,
        Kind::Feasibility,
        Kind::Clarification,
        Kind::Commitment,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::SemanticGrounding => "semantic_grounding",
            Kind::Affordances => "affordances",
            Kind::Constraints => "constraints",
            Kind::BehaviouralExpectations => "behavioural_expectations",
            Kind::Feasibility => "feasibility",
            Kind::Clarification => "clarification",
            Kind::Commitment => "commitment",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// The PA Status of MMM-TEC V2.2 that a Process Action would receive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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

impl PaStatus {
    pub const ALL: [PaStatus; 10] = [
        PaStatus::Ack,
        PaStatus::Clash,
        PaStatus::FaultyReq,
        PaStatus::IncID,
        PaStatus::IncDQ,
        PaStatus::InsRights,
        PaStatus::InsValue,
        PaStatus::LocOOR,
        PaStatus::PostRef,
        PaStatus::QualNS,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PaStatus::Ack => "Ack",
            PaStatus::Clash => "Clash",
            PaStatus::FaultyReq => "FaultyReq",
            PaStatus::IncID => "IncID",
            PaStatus::IncDQ => "IncDQ",
            PaStatus::InsRights => "InsRights",
            PaStatus::InsValue => "InsValue",
            PaStatus::LocOOR => "LocOOR",
            PaStatus::PostRef => "PostRef",
            PaStatus::QualNS => "QualNS",
        }
    }

    pub fn parse(s: &str) -> Option<PaStatus> {
        PaStatus::ALL.into_iter().find(|p| p.as_str() == s)
    }

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

/// Overall verdict of a feasibility check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overall {
    Feasible,
    PartiallyFeasible,
    Infeasible,
}

impl Overall {
    pub const ALL: [Overall; 3] = [
        Overall::Feasible,
        Overall::PartiallyFeasible,
        Overall::Infeasible,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Overall::Feasible => "feasible",
            Overall::PartiallyFeasible => "partially_feasible",
            Overall::Infeasible => "infeasible",
        }
    }

    /// MCP-BINDING section 5: feasible when every step is Ack, infeasible when none is.
    pub fn of(statuses: impl IntoIterator<Item = PaStatus>) -> Overall {
        let (mut ack, mut total) = (0usize, 0usize);
        for status in statuses {
            total += 1;
            ack += usize::from(status == PaStatus::Ack);
        }
        if ack == total {
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
pub enum CommitmentState {
    Retained,
    Released,
    Conflicting,
}

impl CommitmentState {
    pub const ALL: [CommitmentState; 3] = [
        CommitmentState::Retained,
        CommitmentState::Released,
        CommitmentState::Conflicting,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CommitmentState::Retained => "retained",
            CommitmentState::Released => "released",
            CommitmentState::Conflicting => "conflicting",
        }
    }

    pub fn parse(s: &str) -> Option<CommitmentState> {
        CommitmentState::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// Whether a failed knowledge source may work if asked again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Nature {
    Transient,
    Permanent,
}

impl Nature {
    pub const ALL: [Nature; 2] = [Nature::Transient, Nature::Permanent];

    pub fn as_str(self) -> &'static str {
        match self {
            Nature::Transient => "transient",
            Nature::Permanent => "permanent",
        }
    }

    pub fn parse(s: &str) -> Option<Nature> {
        Nature::ALL.into_iter().find(|n| n.as_str() == s)
    }
}

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
