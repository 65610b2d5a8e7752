//! What a dialogue runs besides the user's own turns: a scenario, a replay, a take-over.

/// A dialogue that runs a scenario.
#[derive(Clone, Debug, Default)]
pub struct ScenarioState {
    pub file: std::path::PathBuf,
    pub name: String,
    pub steps: usize,
    pub running: bool,
    pub passed: usize,
    pub failed: usize,
    pub error: Option<String>,
}

/// A replay of the dialogue, running or done.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    pub running: bool,
    pub done: usize,
    pub differing: usize,
    pub error: Option<String>,
}

/// Taking over: the recorded Requests still to send again, and what came of those sent.
#[derive(Clone, Debug)]
pub struct TakeOver {
    /// The dialogue taken over (its Replay tab shows how the answers differ).
    pub source: crate::client::engine::DialogueKey,
    pub requests: std::collections::VecDeque<serde_json::Value>,
    pub recorded: Vec<crate::client::turn::Turn>,
    /// The Request the recording went on with, for the composer once the user has it.
    pub next: Option<serde_json::Value>,
    pub sent: usize,
    pub differing: usize,
}

/// What the dialogue runs besides the user's own turns (each `None` when it runs none).
#[derive(Clone, Debug, Default)]
pub struct Runs {
    /// The scenario this dialogue runs, when it runs one.
    pub scenario: Option<ScenarioState>,
    /// Its replay, running or done.
    pub replay: Option<Replay>,
    /// A watched or recorded dialogue this one takes over, while its Requests are sent again.
    pub takeover: Option<TakeOver>,
}
