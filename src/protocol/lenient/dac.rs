//! BKN-DAC messages read leniently (see the module above): the Request's asks and the
//! Response's Answer, commitments and feasibility, with what the steps themselves imply.

use super::{Field, List};
use crate::protocol::dac::{CommitmentState, Kind, Nature, Overall, PaStatus};
use crate::protocol::message::{Fraction, Index, Outcome};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A BKN-DAC Request as sent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DacRequestView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub turn_index: Field<Index>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub kind: Field<Kind>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub question: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub terms: List<TermView>,
    #[serde(rename = "EntityIDs", skip_serializing_if = "Field::is_absent")]
    pub entity_ids: List<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub space: Field<SpaceView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub process_actions: List<ProcessActionView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub commitments: List<CommitmentView>,
    #[serde(
        rename = "ReleasedCommitmentIDs",
        skip_serializing_if = "Field::is_absent"
    )]
    pub released_commitment_ids: List<String>,
    /// The common members and any the data type does not name.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct TermView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub text: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub class: Field<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SpaceView {
    #[serde(rename = "SpaceID", skip_serializing_if = "Field::is_absent")]
    pub space_id: Field<String>,
    #[serde(rename = "MLocation", skip_serializing_if = "Field::is_absent")]
    pub m_location: List<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ProcessActionView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub step: Field<Index>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub statement: Field<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CommitmentView {
    #[serde(rename = "CommitmentID", skip_serializing_if = "Field::is_absent")]
    pub commitment_id: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub statement: Field<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A BKN-DAC Response as it came.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DacResponseView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub outcome: Field<Outcome>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub answer: Field<AnswerView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub commitment_status: List<CommitmentStatusView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub feasibility: Field<FeasibilityView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub sources_used: List<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub failure: Field<FailureView>,
    /// The common members and any the data type does not name.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AnswerView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub object_classes: List<ObjectClassView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub relations: List<RelationView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub affordances: List<AffordanceView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub constraints: List<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub behavioural_expectations: List<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub text: Field<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ObjectClassView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub class: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub label: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub confidence: Field<Fraction>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct RelationView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub subject: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub predicate: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub object: Field<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AffordanceView {
    #[serde(rename = "EntityID", skip_serializing_if = "Field::is_absent")]
    pub entity_id: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub class: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub action: Field<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CommitmentStatusView {
    #[serde(rename = "CommitmentID", skip_serializing_if = "Field::is_absent")]
    pub commitment_id: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub status: Field<CommitmentState>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct FeasibilityView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub steps: List<StepView>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub overall: Field<Overall>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct StepView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub step: Field<Index>,
    #[serde(rename = "PAStatus", skip_serializing_if = "Field::is_absent")]
    pub pa_status: Field<PaStatus>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub reason: Field<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct FailureView {
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub service: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub request: Field<String>,
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub nature: Field<Nature>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Field<Index> {
    /// The number when it is an Index (an integer from 0 to `MAX_INDEX`, `2.0` included).
    pub fn index(&self) -> Option<u64> {
        self.known().and_then(Index::checked)
    }
}

impl DacRequestView {
    /// The Process Actions by Step: (Step as read, Statement as text).
    pub fn statements(&self) -> impl Iterator<Item = (Option<u64>, &Field<String>)> {
        self.process_actions.items().iter().map(|p| match p {
            Field::Known(p) => (p.step.index(), &p.statement),
            _ => (None, &Field::Absent),
        })
    }
}

/// A PA Status as it came: one MMM-TEC V2.2 has, or the JSON a server sent instead
/// (`None`: the step has no PAStatus).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StatusName {
    Known(PaStatus),
    Other(String),
    Missing,
}

impl StatusName {
    fn of(status: &Field<PaStatus>) -> StatusName {
        match status {
            Field::Known(s) => StatusName::Known(*s),
            Field::Other(v) => StatusName::Other(super::raw_text(v).into_owned()),
            Field::Absent => StatusName::Missing,
        }
    }
}

impl std::fmt::Display for StatusName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatusName::Known(s) => f.write_str(s.as_str()),
            // Marked, so that a made-up status never reads as one of MMM-TEC's.
            StatusName::Other(s) => write!(f, "{s}?"),
            StatusName::Missing => f.write_str("no PA Status"),
        }
    }
}

/// What a feasibility Response says of a Request's Process Actions, step by step, and what
/// the steps imply of the Overall (MCP-BINDING section 5), beside what the server claims.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// How many steps have each status, MMM-TEC's in their order first, then the others
    /// in the order they came.
    pub counts: Vec<(StatusName, usize)>,
    /// The Request's steps the server gave no PA Status for.
    pub unanswered: Vec<u64>,
    /// The steps of the Request that are Ack (an Ack on a Step the Request does not have
    /// is counted above, as it came, but not here).
    pub acks: usize,
    /// Every step of the Request and of the Response (those answered, those not).
    pub total: usize,
    /// The Overall the steps imply (none when there is no step at all).
    pub implied: Option<Overall>,
    pub claimed: Field<Overall>,
}

impl Verdict {
    /// The steps counted by status: "2 Ack · 1 Clash · 1 not answered".
    pub fn counts_text(&self) -> String {
        let mut parts: Vec<String> = self
            .counts
            .iter()
            .map(|(name, n)| format!("{n} {name}"))
            .collect();
        if !self.unanswered.is_empty() {
            parts.push(format!("{} not answered", self.unanswered.len()));
        }
        if parts.is_empty() {
            parts.push("no step".into());
        }
        parts.join(" · ")
    }

    /// The server claims better than its own steps say (a Clash step and `feasible`).
    pub fn contradicted(&self) -> bool {
        matches!((self.claimed.known(), self.implied), (Some(c), Some(i)) if *c < i)
    }
}

impl DacResponseView {
    /// The feasibility of `request`'s steps as this Response gives it, if it has a
    /// Feasibility.
    pub fn verdict(&self, request: &DacRequestView) -> Option<Verdict> {
        let feasibility = self.feasibility.known()?;
        let steps = feasibility.steps.items();
        let mut counts: Vec<(StatusName, usize)> = Vec::new();
        let mut answered = Vec::new();
        let asked: Vec<u64> = request.statements().filter_map(|(n, _)| n).collect();
        // An Ack counts for the verdict only on a step the Request has (when it has any).
        let mut acks = 0;
        for step in steps {
            if let Field::Known(s) = step
                && s.pa_status == Field::Known(PaStatus::Ack)
                && (asked.is_empty() || s.step.index().is_some_and(|n| asked.contains(&n)))
            {
                acks += 1;
            }
            let (name, number) = match step {
                Field::Known(s) => (StatusName::of(&s.pa_status), s.step.index()),
                // Not even an object: what came stands for its status.
                Field::Other(v) => (StatusName::Other(super::raw_text(v).into_owned()), None),
                Field::Absent => (StatusName::Missing, None),
            };
            answered.extend(number);
            match counts.iter_mut().find(|(n, _)| *n == name) {
                Some((_, count)) => *count += 1,
                None => counts.push((name, 1)),
            }
        }
        counts.sort_by(|(a, _), (b, _)| match (a, b) {
            (StatusName::Known(x), StatusName::Known(y)) => x.cmp(y),
            (StatusName::Known(_), _) => std::cmp::Ordering::Less,
            (_, StatusName::Known(_)) => std::cmp::Ordering::Greater,
            _ => std::cmp::Ordering::Equal,
        });
        let unanswered: Vec<u64> = asked
            .into_iter()
            .filter(|n| !answered.contains(n))
            .collect();
        let total = steps.len() + unanswered.len();
        Some(Verdict {
            implied: (total > 0).then(|| Overall::of_counts(acks, total)),
            claimed: feasibility.overall.clone(),
            counts,
            unanswered,
            acks,
            total,
        })
    }
}
