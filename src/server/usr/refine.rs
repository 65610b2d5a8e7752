//! The refinement rules of the reference User State Refinement server. They are meant to be
//! predicted by a person debugging Basic Knowledge, so they are few and plain (docs/refinement.md
//! says the same in prose):
//!
//! 1. The Hypothesis is read in one of a few forms (`Emotion is curious`, `wants to …`,
//!    `believes …`, `is engaged`, each optionally negated and after a subject such as "the
//!    user"). It starts at its confidence from earlier turns, or 0.5.
//! 2. The state then weighs it: +0.2 when the state supports it, −0.2 when the state
//!    contradicts it, nothing when the state does not say.
//! 3. Each conflict that is a known cue lowers it by the cue's weight (0.2 unless the cue says),
//!    moves the Engagement Level by the cue's amount, sets the Mode and the attributes the cue
//!    sets. A conflict that is no known cue is reported unused.
//! 4. Confidence stays within 0.05..0.95: 0.7 or more is supported, 0.3 or less rejected.
//!    What the hypothesis is about follows it: an intention or belief takes its confidence
//!    (a rejected intention is dropped, a belief at 0.3 or less flips to its negation), a new one
//!    is added unless rejected.
//! 5. A Level under 0.25 makes the Mode passive.
//! 6. The Question is answered from the refined state when it names something the state has.

use crate::protocol::usr::EngagementMode;
use crate::server::usr::users::{
    Answer, Belief, Cue, Hypothesis, HypothesisStatus, Intention, UserState, Users,
};

/// What one refinement did.
#[derive(Debug, Default)]
pub struct Refinement {
    /// Which evidence changed what, one line each.
    pub evidence: Vec<String>,
    /// Parts of the feedback the rules could not use (they make the Outcome partial).
    pub unused: Vec<String>,
    /// Which parts of the feedback were used: "hypothesis", "conflicts", "question".
    pub used: Vec<&'static str>,
}

/// A hypothesis, as the rules read it.
#[derive(Clone, Debug, PartialEq)]
pub enum Claim {
    /// `Emotion is curious`, `Focus is not MLoc:Square.Stage`.
    Attribute {
        name: Attribute,
        value: String,
        negated: bool,
    },
    /// `wants to attend the concert`, `intends to …`.
    Wants(String),
    /// `believes the concert starts at eight`, `does not believe …`.
    Believes { statement: String, negated: bool },
    /// `is engaged`, `is not engaged`, `is disengaged`.
    Engaged(bool),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attribute {
    CognitiveState,
    Emotion,
    SocialAttitude,
    Focus,
    EngagementMode,
}

impl Attribute {
    const ALL: [(Attribute, &'static [&'static str]); 5] = [
        (
            Attribute::CognitiveState,
            &["cognitivestate", "cognitive state", "state of mind"],
        ),
        (Attribute::Emotion, &["emotion", "mood"]),
        (
            Attribute::SocialAttitude,
            &["socialattitude", "social attitude", "attitude"],
        ),
        (Attribute::Focus, &["focus", "attention"]),
        (Attribute::EngagementMode, &["engagement mode", "mode"]),
    ];

    pub fn name(self) -> &'static str {
        match self {
            Attribute::CognitiveState => "CognitiveState",
            Attribute::Emotion => "Emotion",
            Attribute::SocialAttitude => "SocialAttitude",
            Attribute::Focus => "Focus",
            Attribute::EngagementMode => "Engagement Mode",
        }
    }

    fn value(self, state: &UserState) -> String {
        match self {
            Attribute::CognitiveState => state.cognitive_state.clone(),
            Attribute::Emotion => state.emotion.clone(),
            Attribute::SocialAttitude => state.social_attitude.clone(),
            Attribute::Focus => state.focus.target_id.clone(),
            Attribute::EngagementMode => state.engagement.mode.as_str().to_owned(),
        }
    }
}

/// Reads a hypothesis; `None` when it is in none of the forms.
pub fn parse_hypothesis(text: &str, user_id: &str) -> Option<Claim> {
    let mut t = text.trim().trim_end_matches('.').to_lowercase();
    let user = user_id.to_lowercase();
    for subject in [
        "the user's ",
        "user's ",
        "the user ",
        "user ",
        "she ",
        "he ",
        "they ",
    ] {
        if let Some(rest) = t.strip_prefix(subject) {
            t = rest.to_owned();
            break;
        }
    }
    if let Some(rest) = t
        .strip_prefix(&format!("{user}'s "))
        .or_else(|| t.strip_prefix(&format!("{user} ")))
    {
        t = rest.to_owned();
    }
    let t = t.trim();
    match t {
        "is engaged" | "engaged" => return Some(Claim::Engaged(true)),
        "is not engaged" | "is disengaged" | "disengaged" => return Some(Claim::Engaged(false)),
        _ => {}
    }
    for (attribute, names) in Attribute::ALL {
        for name in names {
            if let Some(rest) = t.strip_prefix(&format!("{name} is ")) {
                let (value, negated) = match rest.strip_prefix("not ") {
                    Some(v) => (v, true),
                    None => (rest, false),
                };
                // Values keep the writer's spelling: take them from the original text.
                let start = text.to_lowercase().rfind(value).unwrap_or(0);
                let original = text.trim().trim_end_matches('.');
                let value = original
                    .get(start..start + value.len())
                    .unwrap_or(value)
                    .trim();
                return Some(Claim::Attribute {
                    name: attribute,
                    value: value.to_owned(),
                    negated,
                });
            }
        }
    }
    for prefix in [
        "wants to ",
        "wants ",
        "intends to ",
        "intends ",
        "plans to ",
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            return Some(Claim::Wants(rest.to_owned()));
        }
    }
    for (prefix, negated) in [
        ("does not believe that ", true),
        ("does not believe ", true),
        ("doesn't believe ", true),
        ("believes that ", false),
        ("believes ", false),
        ("thinks that ", false),
        ("thinks ", false),
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            return Some(Claim::Believes {
                statement: rest.to_owned(),
                negated,
            });
        }
    }
    None
}

/// Whether two phrases say the same: equal, one inside the other, or sharing at least half of
/// their words of four letters or more.
fn same_phrase(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    let (a, b) = (a.trim(), b.trim());
    if a == b || a.contains(b) || b.contains(a) {
        return true;
    }
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() >= 4)
            .map(str::to_owned)
            .collect()
    };
    let (wa, wb) = (words(a), words(b));
    let shared = wa.iter().filter(|w| wb.contains(w)).count();
    let fewest = wa.len().min(wb.len());
    fewest > 0 && shared * 2 >= fewest
}

/// What the state says of a claim: Some(true) supports it, Some(false) contradicts it.
fn judge(claim: &Claim, state: &UserState) -> Option<bool> {
    match claim {
        Claim::Attribute {
            name,
            value,
            negated,
        } => {
            let holds = name.value(state).eq_ignore_ascii_case(value);
            Some(holds != *negated)
        }
        Claim::Wants(what) => {
            let known = state
                .intentions
                .iter()
                .any(|i| same_phrase(&i.intent, what))
                || state.goals.iter().any(|g| same_phrase(g, what));
            known.then_some(true)
        }
        Claim::Believes { statement, negated } => state
            .beliefs
            .iter()
            .find(|b| same_phrase(&b.statement, statement))
            .map(|b| (b.confidence >= 0.5) != *negated),
        Claim::Engaged(engaged) => Some((state.engagement.level >= 0.5) == *engaged),
    }
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn status_of(confidence: f64) -> HypothesisStatus {
    if confidence >= 0.7 - 1e-9 {
        HypothesisStatus::Supported
    } else if confidence <= 0.3 + 1e-9 {
        HypothesisStatus::Rejected
    } else {
        HypothesisStatus::Open
    }
}

/// A hypothesis being weighed: its statement, its confidence so far and what it claims.
type Weighed = Option<(String, f64, Option<Claim>)>;

/// Refines `state` with one Request's feedback. `user_id` is the User it is about.
pub fn refine(
    users: &Users,
    state: &mut UserState,
    user_id: &str,
    hypothesis: Option<&str>,
    conflicts: &[String],
    question: Option<&str>,
) -> Refinement {
    let mut r = Refinement::default();
    let mut confidence = weigh_hypothesis(state, user_id, hypothesis, &mut r);
    let mut mode_set = false;
    for evidence in conflicts {
        let Some(cue) = users.cue(evidence) else {
            r.unused
                .push(format!("\"{evidence}\" is not a cue the rules know"));
            continue;
        };
        if !r.used.contains(&"conflicts") {
            r.used.push("conflicts");
        }
        mode_set |= apply_cue(state, evidence, cue, &mut confidence, &mut r);
    }
    if !mode_set {
        passive_when_disengaged(state, &mut r);
    }
    settle_hypothesis(state, confidence, &mut r);
    answer_question(state, question, &mut r);
    state.cycle += 1;
    r
}

/// The hypothesis judged against the state as it was: its confidence moves by 0.2 towards
/// what the state says of it (the cues then move it further). `None` when there is none,
/// or none the rules can read (said in `unused`).
fn weigh_hypothesis(
    state: &UserState,
    user_id: &str,
    hypothesis: Option<&str>,
    r: &mut Refinement,
) -> Weighed {
    let claim = hypothesis.map(|h| (h, parse_hypothesis(h, user_id)));
    match &claim {
        Some((text, Some(c))) => {
            r.used.push("hypothesis");
            let key = text.trim().to_owned();
            let before = state
                .hypotheses
                .iter()
                .find(|h| h.statement.eq_ignore_ascii_case(&key))
                .map(|h| h.confidence)
                .unwrap_or(0.5);
            let after = match judge(c, state) {
                Some(true) => {
                    r.evidence.push(format!(
                        "the state supports \"{key}\": confidence {before:.2} -> {:.2}",
                        round(before + 0.2).min(0.95)
                    ));
                    before + 0.2
                }
                Some(false) => {
                    r.evidence.push(format!(
                        "the state contradicts \"{key}\": confidence {before:.2} -> {:.2}",
                        round(before - 0.2).max(0.05)
                    ));
                    before - 0.2
                }
                None => {
                    r.evidence.push(format!(
                        "the state does not say whether \"{key}\": confidence stays {before:.2}"
                    ));
                    before
                }
            };
            Some((key, after.clamp(0.05, 0.95), Some(c.clone())))
        }
        Some((text, None)) => {
            r.unused.push(format!(
                "the hypothesis \"{}\" is in none of the forms the rules read (e.g. \"Emotion is curious\", \"wants to …\", \"believes …\", \"is engaged\")",
                text.trim()
            ));
            None
        }
        None => None,
    }
}

/// One known cue of the conflicts: its engagement, Mode and attributes go into the state,
/// and its weight against the hypothesis; what changed is said in the evidence. Whether it
/// set the Mode.
fn apply_cue(
    state: &mut UserState,
    evidence: &str,
    cue: &Cue,
    confidence: &mut Weighed,
    r: &mut Refinement,
) -> bool {
    let mut mode_set = false;
    let mut changes = Vec::new();
    if cue.engagement != 0.0 {
        let before = state.engagement.level;
        state.engagement.level = round((before + cue.engagement).clamp(0.0, 1.0));
        changes.push(format!(
            "Engagement Level {before:.2} -> {:.2}",
            state.engagement.level
        ));
    }
    if let Some(mode) = cue.mode {
        if state.engagement.mode != mode {
            changes.push(format!(
                "Mode {} -> {}",
                state.engagement.mode.as_str(),
                mode.as_str()
            ));
        }
        state.engagement.mode = mode;
        mode_set = true;
    }
    let mut sets: Vec<(&String, &String)> = cue.sets.iter().collect();
    sets.sort();
    for (attribute, value) in sets {
        let slot = match attribute.as_str() {
            "CognitiveState" => &mut state.cognitive_state,
            "Emotion" => &mut state.emotion,
            "SocialAttitude" => &mut state.social_attitude,
            _ => continue,
        };
        if slot != value {
            changes.push(format!("{attribute} {slot} -> {value}"));
            *slot = value.clone();
        }
    }
    if let Some((key, c, _)) = confidence.as_mut() {
        let before = *c;
        *c = (*c - cue.weight()).clamp(0.05, 0.95);
        changes.push(format!("\"{key}\" {before:.2} -> {:.2}", round(*c)));
    }
    r.evidence.push(format!(
        "{} ({}): {}",
        evidence.trim(),
        cue.cue,
        if changes.is_empty() {
            "no change".into()
        } else {
            changes.join(", ")
        }
    ));
    mode_set
}

/// A User whose engagement fell under 0.25, with no cue setting the Mode, turns passive.
fn passive_when_disengaged(state: &mut UserState, r: &mut Refinement) {
    if state.engagement.level < 0.25 && state.engagement.mode != EngagementMode::Passive {
        r.evidence.push(format!(
            "Engagement Level {:.2} is under 0.25: Mode {} -> passive",
            state.engagement.level,
            state.engagement.mode.as_str()
        ));
        state.engagement.mode = EngagementMode::Passive;
    }
}

/// The hypothesis's final confidence and status go into the state's hypotheses, and what
/// it is about follows them.
fn settle_hypothesis(state: &mut UserState, confidence: Weighed, r: &mut Refinement) {
    if let Some((key, c, Some(claim))) = confidence {
        let c = round(c);
        let status = status_of(c);
        follow(state, &claim, c, status, r);
        match state
            .hypotheses
            .iter_mut()
            .find(|h| h.statement.eq_ignore_ascii_case(&key))
        {
            Some(h) => {
                h.confidence = c;
                h.status = status;
            }
            None => state.hypotheses.push(Hypothesis {
                statement: key,
                confidence: c,
                status,
            }),
        }
    }
}

/// The Request's question answered from the refined state (or the previous answer cleared).
fn answer_question(state: &mut UserState, question: Option<&str>, r: &mut Refinement) {
    if let Some(q) = question {
        match answer(state, q) {
            Some(text) => {
                r.used.push("question");
                r.evidence.push(format!(
                    "the question was answered from the refined state: {text}"
                ));
                state.answer = Some(Answer {
                    question: q.to_owned(),
                    text,
                });
            }
            None => {
                r.unused.push(format!(
                    "the question \"{q}\" names nothing the User State has"
                ));
                state.answer = None;
            }
        }
    } else {
        state.answer = None;
    }
}

/// What the hypothesis is about takes its confidence.
fn follow(
    state: &mut UserState,
    claim: &Claim,
    c: f64,
    status: HypothesisStatus,
    r: &mut Refinement,
) {
    match claim {
        Claim::Wants(what) => {
            let found = state
                .intentions
                .iter()
                .position(|i| same_phrase(&i.intent, what));
            match (found, status) {
                (Some(i), HypothesisStatus::Rejected) => {
                    let gone = state.intentions.remove(i);
                    r.evidence
                        .push(format!("the intention \"{}\" was dropped", gone.intent));
                }
                (Some(i), _) => state.intentions[i].confidence = c,
                (None, HypothesisStatus::Rejected) => {}
                (None, _) => {
                    state.intentions.push(Intention {
                        intent: what.clone(),
                        confidence: c,
                    });
                    r.evidence
                        .push(format!("the intention \"{what}\" was added at {c:.2}"));
                }
            }
        }
        Claim::Believes { statement, negated } => {
            let held = if *negated { round(1.0 - c) } else { c };
            match state
                .beliefs
                .iter()
                .position(|b| same_phrase(&b.statement, statement))
            {
                Some(i) => {
                    let b = &mut state.beliefs[i];
                    b.confidence = held;
                    if status_of(held) == HypothesisStatus::Rejected {
                        let flipped = match b.statement.strip_prefix("not ") {
                            Some(positive) => positive.to_owned(),
                            None => format!("not {}", b.statement),
                        };
                        r.evidence.push(format!(
                            "the belief \"{}\" fell to {held:.2} and flipped to \"{flipped}\"",
                            b.statement
                        ));
                        b.statement = flipped;
                        b.confidence = round(1.0 - held);
                    }
                }
                None if status != HypothesisStatus::Rejected => {
                    let statement = if *negated {
                        format!("not {statement}")
                    } else {
                        statement.clone()
                    };
                    r.evidence
                        .push(format!("the belief \"{statement}\" was added at {c:.2}"));
                    state.beliefs.push(Belief {
                        statement,
                        confidence: c,
                    });
                }
                None => {}
            }
        }
        Claim::Attribute { .. } | Claim::Engaged(_) => {}
    }
}

/// The answer to a question, from the state; `None` when it names nothing the state has.
fn answer(state: &UserState, question: &str) -> Option<String> {
    let q = question.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| q.contains(w));
    let mut parts = attributes_asked(state, &has);
    parts.extend(lists_asked(state, &has));
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// What the question asks of the User's single attributes (engagement, emotion, cognitive
/// state, social attitude, focus), each said with its value; `has` tells whether the
/// question names any of some words.
fn attributes_asked(state: &UserState, has: &dyn Fn(&[&str]) -> bool) -> Vec<String> {
    let mut parts = Vec::new();
    if has(&["engag", "interest", "involved"]) {
        parts.push(format!(
            "Engagement is {:.2} ({})",
            state.engagement.level,
            state.engagement.mode.as_str()
        ));
    }
    if has(&["emotion", "feel", "mood", "happy", "upset", "annoyed"]) {
        parts.push(format!("Emotion is {}", state.emotion));
    }
    if has(&[
        "cognitive",
        "state of mind",
        "distracted",
        "attentive",
        "confused",
        "tired",
        "hurried",
    ]) {
        parts.push(format!("CognitiveState is {}", state.cognitive_state));
    }
    if has(&["attitude", "friendly", "social"]) {
        parts.push(format!("SocialAttitude is {}", state.social_attitude));
    }
    if has(&["focus", "attention", "looking at", "watching"]) {
        parts.push(format!(
            "Focus is the {} {}",
            state.focus.target_type, state.focus.target_id
        ));
    }
    parts
}

/// What the question asks of the User's lists (intentions and goals, beliefs, hypotheses),
/// each with its confidence.
fn lists_asked(state: &UserState, has: &dyn Fn(&[&str]) -> bool) -> Vec<String> {
    let mut parts = Vec::new();
    if has(&["want", "intend", "intention", "goal", "plan"]) {
        let intentions: Vec<String> = state
            .intentions
            .iter()
            .map(|i| format!("{} ({:.2})", i.intent, i.confidence))
            .collect();
        parts.push(format!(
            "Intentions: {}; Goals: {}",
            listed(&intentions),
            listed(&state.goals)
        ));
    }
    if has(&["believe", "think", "know", "belief"]) {
        let beliefs: Vec<String> = state
            .beliefs
            .iter()
            .map(|b| format!("{} ({:.2})", b.statement, b.confidence))
            .collect();
        parts.push(format!("Beliefs: {}", listed(&beliefs)));
    }
    if has(&["hypothes"]) {
        let hs: Vec<String> = state
            .hypotheses
            .iter()
            .map(|h| {
                format!("{} ({:.2}, {:?})", h.statement, h.confidence, h.status).to_lowercase()
            })
            .collect();
        parts.push(format!("Hypotheses: {}", listed(&hs)));
    }
    parts
}

/// A list for a sentence: its items joined, or "none".
fn listed(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ana() -> UserState {
        Users::default_users()
            .user("User#Ana")
            .unwrap()
            .state
            .clone()
    }

    #[test]
    fn hypothesis_forms() {
        use Claim::*;
        assert_eq!(
            parse_hypothesis("Emotion is Curious.", "User#Ana"),
            Some(Attribute {
                name: super::Attribute::Emotion,
                value: "Curious".into(),
                negated: false
            })
        );
        assert_eq!(
            parse_hypothesis("The user's mood is not calm", "User#Ana"),
            Some(Attribute {
                name: super::Attribute::Emotion,
                value: "calm".into(),
                negated: true
            })
        );
        assert_eq!(
            parse_hypothesis("User#Ana wants to buy a ticket", "User#Ana"),
            Some(Wants("buy a ticket".into()))
        );
        assert_eq!(
            parse_hypothesis(
                "she does not believe the concert starts at eight",
                "User#Ana"
            ),
            Some(Believes {
                statement: "the concert starts at eight".into(),
                negated: true
            })
        );
        assert_eq!(
            parse_hypothesis("user is disengaged", "User#Ana"),
            Some(Engaged(false))
        );
        assert_eq!(parse_hypothesis("something vague", "User#Ana"), None);
    }

    #[test]
    fn support_raises_and_cues_lower() {
        let users = Users::default_users();
        let mut s = ana();
        let r = refine(
            &users,
            &mut s,
            "User#Ana",
            Some("Emotion is curious"),
            &[],
            None,
        );
        assert!(r.unused.is_empty());
        assert_eq!(s.hypotheses[0].confidence, 0.7);
        assert_eq!(s.hypotheses[0].status, HypothesisStatus::Supported);
        // Next cycle: supported again (0.9), then a frown sets Emotion and lowers it (0.7).
        let r = refine(
            &users,
            &mut s,
            "User#Ana",
            Some("Emotion is curious"),
            &["she frowned".into()],
            None,
        );
        assert_eq!(s.emotion, "annoyed");
        assert_eq!(s.hypotheses[0].confidence, 0.7);
        assert!(
            r.evidence
                .iter()
                .any(|e| e.contains("Emotion curious -> annoyed")),
            "{:?}",
            r.evidence
        );
        // Now the state contradicts it: 0.7 - 0.2 = 0.5, open.
        refine(
            &users,
            &mut s,
            "User#Ana",
            Some("Emotion is curious"),
            &[],
            None,
        );
        assert_eq!(s.hypotheses[0].status, HypothesisStatus::Open);
    }

    #[test]
    fn engagement_moves_with_cues_and_low_level_is_passive() {
        let users = Users::default_users();
        let mut s = ana();
        refine(
            &users,
            &mut s,
            "User#Ana",
            None,
            &["looked away".into(), "walked away".into()],
            None,
        );
        assert_eq!(s.engagement.level, 0.1);
        assert_eq!(s.engagement.mode, EngagementMode::Passive);
        assert_eq!(s.cognitive_state, "disengaged");
        refine(
            &users,
            &mut s,
            "User#Ana",
            None,
            &["leaned in".into(), "asked a question".into()],
            None,
        );
        assert_eq!(s.engagement.level, 0.4);
        assert_eq!(s.engagement.mode, EngagementMode::Interactive);
    }

    #[test]
    fn beliefs_flip_and_intentions_drop() {
        let users = Users::default_users();
        let mut s = ana();
        let conflicts: Vec<String> = vec!["looked away".into(), "checked the time".into()];
        // 0.5 (new) + 0.2 (the state holds the belief) - 0.2 - 0.2 = 0.3: rejected.
        refine(
            &users,
            &mut s,
            "User#Ana",
            Some("believes the concert starts at eight"),
            &conflicts,
            None,
        );
        let b = &s.beliefs[0];
        assert_eq!(b.statement, "not the concert starts at eight");
        assert_eq!(b.confidence, 0.7);
        refine(
            &users,
            &mut s,
            "User#Ana",
            Some("wants to attend the concert"),
            &["walked away".into(), "yawned".into()],
            None,
        );
        assert!(
            !s.intentions
                .iter()
                .any(|i| i.intent == "attend the concert"),
            "{:?}",
            s.intentions
        );
        refine(
            &users,
            &mut s,
            "User#Ana",
            Some("wants to buy lemonade"),
            &[],
            None,
        );
        assert!(
            s.intentions
                .iter()
                .any(|i| i.intent == "buy lemonade" && i.confidence == 0.5)
        );
    }

    #[test]
    fn unusable_feedback_is_reported() {
        let users = Users::default_users();
        let mut s = ana();
        let r = refine(
            &users,
            &mut s,
            "User#Ana",
            Some("hmm"),
            &["danced a jig".into()],
            Some("What colour is the sky?"),
        );
        assert_eq!(r.unused.len(), 3, "{:?}", r.unused);
        let r = refine(
            &users,
            &mut s,
            "User#Ana",
            None,
            &[],
            Some("Is the user still engaged?"),
        );
        assert!(r.unused.is_empty());
        assert_eq!(
            s.answer.as_ref().unwrap().text,
            "Engagement is 0.60 (interactive)"
        );
    }
}
