//! The reference Domain Access server (`bkn-explorer serve dac`): every Kind of BKN-DAC
//! answered from a domain model.

pub mod commitments;
pub mod domain;
pub mod feasibility;
pub mod knowledge;
pub mod sources;

use crate::protocol::Interface;
use crate::protocol::dac::{Answer, CommitmentState, DacRequest, DacResponse, Kind};
use crate::protocol::message::Outcome;
use crate::protocol::triple::Triple;
use crate::server::mcp::{Backend, ResourceInfo};
use commitments::Commitments;
use domain::{Domain, Role};
use knowledge::Found;
use serde::Deserialize;
use serde_json::{Value, json};
use sources::{Consulted, FailingSources};

/// The AIM ID Domain Access puts in the DataXMData of its Responses.
pub const AIM_ID: &str = "PGM-DAC";

pub struct DomainAccess {
    domain: Domain,
    failing: FailingSources,
}

/// What Domain Access remembers in one dialogue.
#[derive(Default)]
pub struct DacDialogue {
    pub commitments: Commitments,
}

impl DomainAccess {
    pub fn new(domain: Domain, failing: FailingSources) -> Self {
        DomainAccess { domain, failing }
    }

    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// Answers a typed Request; the dialogue's commitments change as it asks.
    pub fn respond(&self, dialogue: &mut DacDialogue, request: &DacRequest) -> DacResponse {
        let mut response = DacResponse::answering(&request.common, Outcome::Answered, AIM_ID);
        let d = &self.domain;
        if request.common.m_instance != d.file.m_instance {
            response.outcome = Outcome::NotAnswered;
            response.answer = Some(Answer {
                text: Some(format!(
                    "This Domain Access serves {}, not {}.",
                    d.file.m_instance, request.common.m_instance
                )),
                ..Answer::default()
            });
            response.commitment_status = Some(dialogue.commitments.statuses());
            return response;
        }
        let mut sources = Consulted::new(d, &self.failing);
        let mut remarks = Remarks::default();
        let took_up = self.take_up_commitments(dialogue, &mut sources, request, &mut remarks);
        let found = self.find(dialogue, &mut sources, request, took_up, &mut response);
        remarks.text.extend(found.notes.iter().map(|n| sentence(n)));
        remarks.missing.extend(found.missing.iter().cloned());
        if !remarks.missing.is_empty() {
            remarks
                .text
                .push(format!("Not answered: {}.", remarks.missing.join("; ")));
        }
        // Commitments retained or released are an answer too: a Response that took them up is
        // at least partially answered (a not_answered one changed nothing, binding section 4).
        let nothing = found.is_empty()
            && response.feasibility.is_none()
            && request.kind != Kind::Commitment
            && !took_up;
        let (used, failure, more_failures) = sources.finish();
        for f in &more_failures {
            remarks.text.push(format!(
                "The source {} failed too ({}).",
                f.service,
                f.nature.as_str()
            ));
        }
        let short = failure.is_some() || !remarks.missing.is_empty();
        response.outcome = if nothing && short {
            Outcome::NotAnswered
        } else if short {
            Outcome::PartiallyAnswered
        } else {
            Outcome::Answered
        };
        let mut answer = found.answer;
        if !remarks.text.is_empty() {
            answer.text = Some(remarks.text.join(" "));
        }
        if answer != Answer::default() {
            response.answer = Some(answer);
        }
        response.commitment_status = Some(dialogue.commitments.statuses());
        response.sources_used = Some(used);
        response.failure = failure;
        response
    }

    /// Commitments ride on every Kind: the released ones go first, so that a statement can
    /// replace one it contradicts in the same turn; then the ones asked for are retained,
    /// checked against the domain's facts where the scene can be consulted. Whether the
    /// Request named any.
    fn take_up_commitments(
        &self,
        dialogue: &mut DacDialogue,
        sources: &mut Consulted,
        request: &DacRequest,
        remarks: &mut Remarks,
    ) -> bool {
        let released = request
            .released_commitment_ids
            .as_deref()
            .unwrap_or_default();
        let unknown = dialogue.commitments.release(released);
        remarks.missing.extend(
            unknown
                .iter()
                .map(|id| format!("{id} is not a commitment of this dialogue")),
        );
        let asked = request.commitments.as_deref().unwrap_or_default();
        if !asked.is_empty() {
            let facts = sources.ask(Role::Scene, || {
                "the facts to check the commitments against".into()
            });
            if !facts {
                remarks.text.push(
                    "Commitments were checked against each other only: the domain's facts are \
                     unavailable."
                        .into(),
                );
            }
            for c in asked {
                let state = dialogue.commitments.retain(
                    &c.commitment_id,
                    &c.statement,
                    facts.then_some(&self.domain),
                );
                if state == CommitmentState::Conflicting
                    && let Some(reason) = dialogue
                        .commitments
                        .get(&c.commitment_id)
                        .and_then(|c| c.reason.clone())
                {
                    remarks
                        .text
                        .push(format!("{} conflicts: {reason}.", c.commitment_id));
                }
            }
        }
        !asked.is_empty() || !released.is_empty()
    }

    /// What the Request's Kind asks, found in the domain (`took_up`: whether it named
    /// commitments, all a commitment Request needs).
    fn find(
        &self,
        dialogue: &DacDialogue,
        sources: &mut Consulted,
        request: &DacRequest,
        took_up: bool,
        response: &mut DacResponse,
    ) -> Found {
        let d = &self.domain;
        let retained: Vec<(String, String)> = dialogue
            .commitments
            .retained()
            .map(|c| (c.id.clone(), c.statement.clone()))
            .collect();
        match request.kind {
            Kind::SemanticGrounding => knowledge::grounding(d, sources, request),
            Kind::Clarification => knowledge::clarification(d, sources, request),
            Kind::Affordances => knowledge::affordances(d, sources, request),
            Kind::Constraints => knowledge::constraints(d, sources, request, &retained),
            Kind::BehaviouralExpectations => knowledge::expectations(d, sources, request),
            Kind::Commitment => {
                let mut found = Found::default();
                if !took_up {
                    found.missing.push(
                        "a commitment Request names Commitments or ReleasedCommitmentIDs".into(),
                    );
                }
                let kept = dialogue.commitments.retained().count();
                found.notes.push(format!(
                    "{kept} commitment{} retained",
                    if kept == 1 { "" } else { "s" }
                ));
                found
            }
            Kind::Feasibility => self.feasibility(sources, request, dialogue, response),
        }
    }

    fn feasibility(
        &self,
        sources: &mut Consulted,
        request: &DacRequest,
        dialogue: &DacDialogue,
        response: &mut DacResponse,
    ) -> Found {
        let mut found = Found::default();
        let steps = request.process_actions.as_deref().unwrap_or_default();
        if steps.is_empty() {
            found
                .missing
                .push("a feasibility Request names ProcessActions".into());
            return found;
        }
        let retained: Vec<(String, Triple)> = dialogue
            .commitments
            .retained()
            .filter_map(|c| Some((c.id.clone(), c.triple.clone()?)))
            .collect();
        let space = request.space.as_ref().and_then(|s| s.space_id.as_deref());
        match feasibility::judge(&self.domain, sources, steps, space, &retained) {
            Some(judged) => {
                found.notes.extend(judged.notes);
                let acks = judged
                    .feasibility
                    .steps
                    .iter()
                    .filter(|s| s.pa_status == crate::protocol::dac::PaStatus::Ack)
                    .count();
                found.notes.push(format!(
                    "{} of {} step{} can be performed: {}",
                    acks,
                    steps.len(),
                    if steps.len() == 1 { "" } else { "s" },
                    judged.feasibility.overall.as_str().replace('_', " ")
                ));
                response.feasibility = Some(judged.feasibility);
            }
            None => found
                .missing
                .push("the plan (the scene is unavailable)".into()),
        }
        found
    }
}

/// What a Response's Answer Text will say, and what of the Request could not be answered.
#[derive(Default)]
struct Remarks {
    text: Vec<String>,
    missing: Vec<String>,
}

fn sentence(note: &str) -> String {
    let mut s = String::new();
    let mut chars = note.chars();
    if let Some(first) = chars.next() {
        s.extend(first.to_uppercase());
        s.push_str(chars.as_str());
    }
    if !s.ends_with('.') {
        s.push('.');
    }
    s
}

impl Backend for DomainAccess {
    type Dialogue = DacDialogue;

    fn interface(&self) -> Interface {
        Interface::Dac
    }

    fn aim_id(&self) -> &str {
        AIM_ID
    }

    fn describe(&self) -> String {
        format!(
            "Domain Access answers every Kind from the domain {} ({}); read dac://domain and \
             dac://spaces/<SpaceID> for the IDs it knows.",
            self.domain.file.m_instance, self.domain.file.label
        )
    }

    fn answer(&self, dialogue: &mut DacDialogue, request: &Value) -> Value {
        // Through serde_stacker: open objects (DataXMData) may nest 1,000 levels deep.
        match DacRequest::deserialize(serde_stacker::Deserializer::new(request)) {
            Ok(request) => {
                serde_json::to_value(self.respond(dialogue, &request)).unwrap_or_default()
            }
            // Unreachable for a conformant Request (the property tests prove the types read
            // every one); answered rather than panicking all the same.
            Err(e) => {
                let common: crate::protocol::message::Common =
                    serde_json::from_value(request.clone())
                        .expect("a conformant Request has the common fields");
                let mut response = DacResponse::answering(&common, Outcome::NotAnswered, AIM_ID);
                response.answer = Some(Answer {
                    text: Some(format!("internal error reading the Request: {e}")),
                    ..Answer::default()
                });
                serde_json::to_value(response).unwrap_or_default()
            }
        }
    }

    fn summarize(&self, request: &Value, response: &Value) -> String {
        let turn = request.get("TurnIndex").cloned().unwrap_or_default();
        let kind = request.get("Kind").and_then(Value::as_str).unwrap_or("?");
        let outcome = response
            .get("Outcome")
            .and_then(Value::as_str)
            .unwrap_or("?");
        match response
            .pointer("/Feasibility/Overall")
            .and_then(Value::as_str)
        {
            Some(overall) => format!("turn {turn} {kind}: {outcome}, {overall}"),
            None => format!("turn {turn} {kind}: {outcome}"),
        }
    }

    fn resources(&self) -> Vec<ResourceInfo> {
        let d = &self.domain.file;
        let mut out = vec![ResourceInfo {
            uri: "dac://domain".into(),
            name: "domain".into(),
            description: format!(
                "The domain {} ({}): classes, Items, Processes, Spaces, Actions",
                d.m_instance, d.label
            ),
        }];
        out.extend(d.spaces.iter().map(|s| ResourceInfo {
            uri: format!("dac://spaces/{}", s.space_id),
            name: s.space_id.clone(),
            description: format!(
                "{} ({}): its M-Locations and the Items and Processes there",
                s.space_id, s.label
            ),
        }));
        out
    }

    fn read(&self, uri: &str) -> Option<Value> {
        let d = &self.domain;
        if uri == "dac://domain" {
            return serde_json::to_value(&d.file).ok();
        }
        let space_id = uri.strip_prefix("dac://spaces/")?;
        let space = d.space(space_id)?;
        let here = |loc: &str| -> (Vec<Value>, Vec<Value>) {
            let items = d
                .file
                .items
                .iter()
                .filter(|i| i.position.as_deref() == Some(loc))
                .map(|i| json!({"ItemID": i.item_id, "Class": i.class, "Label": i.label}))
                .collect();
            let processes = d
                .file
                .processes
                .iter()
                .filter(|p| p.position.as_deref() == Some(loc))
                .map(|p| json!({"ProcessID": p.process_id, "Class": p.class, "Label": p.label}))
                .collect();
            (items, processes)
        };
        let locations: Vec<Value> = space
            .m_locations
            .iter()
            .map(|l| {
                let (items, processes) = here(&l.m_location_id);
                json!({
                    "MLocationID": l.m_location_id, "Label": l.label, "Bounds": l.bounds,
                    "Capacity": l.capacity, "Formats": l.formats,
                    "Items": items, "Processes": processes,
                })
            })
            .collect();
        let entities: Vec<Value> = locations
            .iter()
            .flat_map(|l| {
                let items = l["Items"].as_array().cloned().unwrap_or_default();
                let processes = l["Processes"].as_array().cloned().unwrap_or_default();
                items.into_iter().chain(processes)
            })
            .collect();
        // Unplaced Items the requester owns can be placed here: offer their IDs too.
        let unplaced: Vec<Value> = d
            .file
            .items
            .iter()
            .filter(|i| i.position.is_none())
            .map(|i| json!({"ItemID": i.item_id, "Class": i.class, "Label": i.label}))
            .collect();
        Some(json!({
            "SpaceID": space.space_id,
            "Label": space.label,
            "Bounds": space.bounds,
            "InReach": d.file.requester.reach.contains(&space.space_id),
            "MLocations": locations,
            "Entities": entities,
            "UnplacedItems": unplaced,
            "Actions": d.file.actions.iter().map(|a| a.action.clone()).collect::<Vec<_>>(),
        }))
    }
}
