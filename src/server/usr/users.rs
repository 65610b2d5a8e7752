//! The users file of a User State Refinement server (see `docs/users.schema.json`): the Users
//! with their baseline state, and the evidence cues the refinement rules understand.

use crate::protocol::usr::EngagementMode;
use crate::server::model_file::{self, FileError, Problem};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::LazyLock;

pub const DEFAULT_USERS: &str = include_str!("users.json");
pub const USERS_SCHEMA: &str = include_str!("../../../docs/users.schema.json");

static SCHEMA_VALIDATOR: LazyLock<jsonschema::Validator> =
    LazyLock::new(|| model_file::compile_schema(USERS_SCHEMA));

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UsersFile {
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub m_instance: Option<String>,
    #[serde(
        rename = "UEnvironment",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub u_environment: Option<String>,
    #[serde(default)]
    pub label: String,
    pub users: Vec<User>,
    pub cues: Vec<Cue>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct User {
    #[serde(rename = "UserID")]
    pub user_id: String,
    #[serde(default)]
    pub label: String,
    pub state: UserState,
}

/// A User State shaped after the MMC V2.5 Entity State (MPAI-NOTES.md section 4); the refined
/// state adds what the refinement tracks (hypotheses, the last answer, the cycle count).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UserState {
    pub cognitive_state: String,
    pub emotion: String,
    pub social_attitude: String,
    pub intentions: Vec<Intention>,
    pub beliefs: Vec<Belief>,
    pub goals: Vec<String>,
    pub focus: Focus,
    pub engagement: Engagement,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hypotheses: Vec<Hypothesis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    /// How many deliberation cycles refined this state in the dialogue.
    #[serde(default)]
    pub cycle: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Intention {
    pub intent: String,
    pub confidence: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Belief {
    pub statement: String,
    pub confidence: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Focus {
    pub target_type: String,
    #[serde(rename = "TargetID")]
    pub target_id: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Engagement {
    pub level: f64,
    pub mode: EngagementMode,
}

/// A hypothesis Basic Knowledge put forward, with how much the evidence supports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Hypothesis {
    pub statement: String,
    pub confidence: f64,
    pub status: HypothesisStatus,
}

/// Where the reference server's states are read by the explorer too (protocol::lenient).
pub use crate::protocol::usr::HypothesisStatus;

/// The answer to Basic Knowledge's Question, from the refined state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Answer {
    pub question: String,
    pub text: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Cue {
    pub cue: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    #[serde(default)]
    pub engagement: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<EngagementMode>,
    #[serde(default)]
    pub sets: HashMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
}

impl Cue {
    /// How much the cue lowers the hypothesis it conflicts with.
    pub fn weight(&self) -> f64 {
        self.weight.unwrap_or(0.2)
    }
}

/// A users file that loaded and checked out.
#[derive(Clone, Debug)]
pub struct Users {
    pub file: UsersFile,
    /// Every cue phrase in lower case, with the index of its cue, longest first: the first
    /// that a piece of evidence contains is the cue it is (so "walked away" wins over "away").
    phrases: Vec<(String, usize)>,
}

impl Users {
    /// The built-in users, read without the checks a users file gets: they pass them all
    /// (`the_built_in_users_pass_every_check` runs them), and compiling the file's schema to
    /// check them again slowed every server's start.
    pub fn default_users() -> Users {
        let file: UsersFile =
            serde_json::from_str(DEFAULT_USERS).expect("the built-in users file is valid (tested)");
        Users::index(file)
    }

    pub fn parse(text: &str, origin: &str) -> Result<Users, FileError> {
        const KIND: &str = "users file";
        let file: UsersFile = model_file::load(text, origin, KIND, &SCHEMA_VALIDATOR)?;
        let problems = cross_check(&file);
        if problems.is_empty() {
            Ok(Users::index(file))
        } else {
            Err(FileError::new(origin, KIND, problems))
        }
    }

    fn index(file: UsersFile) -> Users {
        let mut phrases: Vec<(String, usize)> = file
            .cues
            .iter()
            .enumerate()
            .flat_map(|(i, c)| {
                std::iter::once(&c.cue)
                    .chain(&c.aliases)
                    .map(move |p| (p.to_lowercase(), i))
            })
            .collect();
        phrases.sort_by_key(|(phrase, _)| std::cmp::Reverse(phrase.len()));
        Users { file, phrases }
    }

    pub fn user(&self, id: &str) -> Option<&User> {
        self.file.users.iter().find(|u| u.user_id == id)
    }

    /// The cue a piece of evidence is, if the rules know it: the cue with the longest phrase
    /// the evidence contains.
    pub fn cue(&self, evidence: &str) -> Option<&Cue> {
        let lower = evidence.to_lowercase();
        self.phrases
            .iter()
            .find(|(phrase, _)| lower.contains(phrase.as_str()))
            .map(|&(_, i)| &self.file.cues[i])
    }
}

fn cross_check(file: &UsersFile) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut ids: HashMap<&str, usize> = HashMap::new();
    for (i, u) in file.users.iter().enumerate() {
        if let Some(first) = ids.insert(&u.user_id, i) {
            problems.push(Problem::new(
                format!("/Users/{i}/UserID"),
                format!("{} is already defined at /Users/{first}", u.user_id),
            ));
        }
    }
    let mut phrases: HashMap<String, usize> = HashMap::new();
    for (i, c) in file.cues.iter().enumerate() {
        for (j, phrase) in std::iter::once(&c.cue).chain(&c.aliases).enumerate() {
            let at = if j == 0 {
                format!("/Cues/{i}/Cue")
            } else {
                format!("/Cues/{i}/Aliases/{}", j - 1)
            };
            if let Some(first) = phrases.insert(phrase.to_lowercase(), i)
                && first != i
            {
                problems.push(Problem::new(
                    at,
                    format!("\"{phrase}\" already names the cue at /Cues/{first}"),
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_users_pass_every_check() {
        let checked = Users::parse(DEFAULT_USERS, "the built-in users").unwrap();
        let unchecked = Users::default_users();
        // The same file read (the indexes are made from it alike).
        assert_eq!(
            serde_json::to_value(&checked.file).unwrap(),
            serde_json::to_value(&unchecked.file).unwrap()
        );
    }

    #[test]
    fn the_default_users_load() {
        let users = Users::default_users();
        assert_eq!(users.file.users.len(), 3);
        assert_eq!(
            users.cue("She walked away from the stage").unwrap().cue,
            "walked away"
        );
        assert_eq!(
            users.cue("the user LOOKED AWAY twice").unwrap().cue,
            "looked away"
        );
        assert!(users.cue("danced").is_none());
    }

    #[test]
    fn mistakes_have_paths() {
        let mut v: serde_json::Value = serde_json::from_str(DEFAULT_USERS).unwrap();
        v["Users"][1]["UserID"] = "User#Ana".into();
        v["Cues"][1]["Aliases"][0] = "looks away".into();
        let e = Users::parse(&v.to_string(), "u.json").unwrap_err();
        let at: Vec<&str> = e.problems.iter().map(|p| p.at.as_str()).collect();
        assert_eq!(at, ["/Users/1/UserID", "/Cues/1/Aliases/0"], "{e}");
        v["Users"][0]["State"]["Engagement"]["Level"] = 2.into();
        let e = Users::parse(&v.to_string(), "u.json").unwrap_err();
        assert_eq!(e.problems[0].at, "/Users/0/State/Engagement/Level", "{e}");
    }
}
