//! The reference User State Refinement server (`bkn-explorer serve usr`): deliberation
//! feedback in, a refined User State out, carried over from turn to turn of a dialogue.

pub mod refine;
pub mod users;

use crate::protocol::Interface;
use crate::protocol::message::{Common, Fraction, Outcome};
use crate::protocol::usr::{Engagement, Provenance, UsrRequest, UsrResponse};
use crate::server::mcp::{Backend, ResourceInfo};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use users::{UserState, Users};

/// The AIM ID User State Refinement puts in the DataXMData of its Responses.
pub const AIM_ID: &str = "PGM-USR";

/// How the refinement works, as Provenance.Method says it.
pub const METHOD: &str = "rules v1 (docs/refinement.md): the hypothesis moves ±0.2 with the state, each known conflicting cue lowers it by its weight and moves Engagement";

pub struct UserStateRefinement {
    users: Users,
}

/// What User State Refinement remembers in one dialogue: each User's refined state, and the
/// User the dialogue is about (a Request without UserID means that one).
#[derive(Default)]
pub struct UsrDialogue {
    states: BTreeMap<String, Refined>,
    current: Option<String>,
}

struct Refined {
    state: UserState,
    /// The TurnIndex that last refined it.
    turn: u64,
}

impl UserStateRefinement {
    pub fn new(users: Users) -> Self {
        UserStateRefinement { users }
    }

    pub fn respond(&self, dialogue: &mut UsrDialogue, request: &UsrRequest) -> UsrResponse {
        let mut response = UsrResponse::answering(&request.common, Outcome::Answered, AIM_ID);
        let (user_id, user) = match self.user_of(dialogue, request) {
            Ok(found) => found,
            Err(why) => {
                response.outcome = Outcome::NotAnswered;
                response.provenance = Some(Provenance {
                    sources: vec![],
                    method: METHOD.into(),
                    evidence: Some(vec![why]),
                });
                return response;
            }
        };
        dialogue.current = Some(user_id.clone());
        let mut sources = Vec::new();
        let refined = dialogue.states.entry(user_id.clone()).or_insert_with(|| {
            sources.push(format!("baseline {user_id} (users file)"));
            Refined {
                state: user.state.clone(),
                turn: request.common.turn_index.get(),
            }
        });
        if sources.is_empty() {
            sources.push(format!("the state refined at turn {}", refined.turn));
        }
        let feedback = request.feedback.clone().unwrap_or_default();
        let conflicts = feedback.conflicts.clone().unwrap_or_default();
        let r = refine::refine(
            &self.users,
            &mut refined.state,
            &user_id,
            feedback.hypothesis.as_deref(),
            &conflicts,
            feedback.question.as_deref(),
        );
        refined.turn = request.common.turn_index.get();
        sources.extend(r.used.iter().map(|u| format!("Feedback.{}", capitalize(u))));
        answered(response, &user_id, &refined.state, sources, r)
    }

    /// The User the Request is about (its UserID, else the dialogue's current User), or why
    /// it cannot be answered: another M-Instance, no User named, or one this server does
    /// not know.
    fn user_of(
        &self,
        dialogue: &UsrDialogue,
        request: &UsrRequest,
    ) -> Result<(String, &users::User), String> {
        if let Some(m) = &self.users.file.m_instance
            && m != &request.common.m_instance
        {
            return Err(format!(
                "this User State Refinement serves {m}, not {}",
                request.common.m_instance
            ));
        }
        let known = || {
            self.users
                .file
                .users
                .iter()
                .map(|u| u.user_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(user_id) = request.user_id.clone().or_else(|| dialogue.current.clone()) else {
            return Err(format!(
                "no UserID, and none earlier in this dialogue: name the User ({})",
                known()
            ));
        };
        let Some(user) = self.users.user(&user_id) else {
            let hint = crate::protocol::spelling::closest(
                &user_id,
                self.users.file.users.iter().map(|u| u.user_id.as_str()),
            )
            .map(|c| format!(" Did you mean {c}?"))
            .unwrap_or_default();
            return Err(format!(
                "{user_id} is not a User this server knows ({}).{hint}",
                known()
            ));
        };
        Ok((user_id, user))
    }
}

/// The Response of a refinement: the refined User State, its Engagement, and where it came
/// from (`sources`, and the evidence of each rule applied or feedback left unused).
fn answered(
    mut response: UsrResponse,
    user_id: &str,
    state: &UserState,
    sources: Vec<String>,
    r: refine::Refinement,
) -> UsrResponse {
    let mut evidence = r.evidence;
    evidence.extend(r.unused.iter().map(|u| format!("unused: {u}")));
    if r.unused.is_empty() {
        response.outcome = Outcome::Answered;
    } else {
        response.outcome = Outcome::PartiallyAnswered;
    }
    let mut refined_json = match serde_json::to_value(state) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    refined_json.insert("UserID".into(), json!(user_id));
    response.refined_user_state = Some(refined_json);
    response.engagement = Some(Engagement {
        level: Some(Fraction::new(state.engagement.level)),
        mode: Some(state.engagement.mode),
    });
    response.provenance = Some(Provenance {
        sources,
        method: METHOD.into(),
        evidence: Some(evidence),
    });
    response
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

impl Backend for UserStateRefinement {
    type Dialogue = UsrDialogue;

    fn interface(&self) -> Interface {
        Interface::Usr
    }

    fn aim_id(&self) -> &str {
        AIM_ID
    }

    fn describe(&self) -> String {
        "User State Refinement weighs Basic Knowledge's feedback (Hypothesis, Conflicts, \
         Question) against the User's state and returns the refined state, which the next \
         turn of the dialogue starts from; read usr://users (the Users and the M-Instance), \
         usr://users/<UserID> for a baseline state, and usr://cues for the evidence it understands."
            .into()
    }

    fn answer(&self, dialogue: &mut UsrDialogue, request: &Value) -> Value {
        // Through serde_stacker: open objects (DataXMData) may nest 1,000 levels deep.
        match UsrRequest::deserialize(serde_stacker::Deserializer::new(request)) {
            Ok(request) => {
                let mut response = self.respond(dialogue, &request);
                // The refined state is JSON already: it is moved into its place rather than
                // copied by the serializer (the largest part of a Response).
                let state = response.refined_user_state.as_mut().map(std::mem::take);
                let mut value = serde_json::to_value(response).unwrap_or_default();
                if let Some(state) = state
                    && let Some(slot) = value.get_mut("RefinedUserState")
                {
                    *slot = Value::Object(state);
                }
                value
            }
            Err(e) => {
                let common: Common = Common::deserialize(request)
                    .expect("a conformant Request has the common fields");
                let mut response = UsrResponse::answering(&common, Outcome::NotAnswered, AIM_ID);
                response.provenance = Some(Provenance {
                    sources: vec![],
                    method: METHOD.into(),
                    evidence: Some(vec![format!("internal error reading the Request: {e}")]),
                });
                serde_json::to_value(response).unwrap_or_default()
            }
        }
    }

    fn summarize(&self, request: &Value, response: &Value) -> String {
        let turn = request.get("TurnIndex").cloned().unwrap_or_default();
        let outcome = response
            .get("Outcome")
            .and_then(Value::as_str)
            .unwrap_or("?");
        let level = response
            .pointer("/Engagement/Level")
            .cloned()
            .unwrap_or_default();
        let mode = response
            .pointer("/Engagement/Mode")
            .and_then(Value::as_str)
            .unwrap_or("?");
        format!("turn {turn}: {outcome}, engagement {level} ({mode})")
    }

    fn resources(&self) -> Vec<ResourceInfo> {
        let mut out = vec![ResourceInfo {
            uri: crate::protocol::resources::USR_USERS.into(),
            name: "users".into(),
            description: format!(
                "The Users this server knows, and the M-Instance it serves ({})",
                self.users.file.m_instance.as_deref().unwrap_or("any")
            ),
        }];
        out.extend(self.users.file.users.iter().map(|u| ResourceInfo {
            uri: format!("usr://users/{}", u.user_id),
            name: u.user_id.clone(),
            description: format!("{}: the baseline User State", u.label),
        }));
        out.push(ResourceInfo {
            uri: "usr://cues".into(),
            name: "cues".into(),
            description: "The evidence cues the refinement rules understand in Feedback.Conflicts"
                .into(),
        });
        out
    }

    fn read(&self, uri: &str) -> Option<Value> {
        let file = &self.users.file;
        if uri == crate::protocol::resources::USR_USERS {
            let mut list = serde_json::Map::new();
            if let Some(m) = &file.m_instance {
                list.insert("MInstance".into(), json!(m));
            }
            if let Some(u) = &file.u_environment {
                list.insert("UEnvironment".into(), json!(u));
            }
            if !file.label.is_empty() {
                list.insert("Label".into(), json!(file.label));
            }
            let users: Vec<Value> = file
                .users
                .iter()
                .map(|u| json!({"UserID": u.user_id, "Label": u.label}))
                .collect();
            list.insert("Users".into(), Value::Array(users));
            return Some(Value::Object(list));
        }
        if uri == "usr://cues" {
            return serde_json::to_value(&self.users.file.cues).ok();
        }
        let id = uri.strip_prefix("usr://users/")?;
        let user = self.users.user(id)?;
        Some(json!({"UserID": user.user_id, "Label": user.label, "State": user.state}))
    }
}
