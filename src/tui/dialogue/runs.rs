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
/// Changed through what happens to a run (started, a step or turn in, ended, stopped), read
/// through its accessors.
#[derive(Clone, Debug, Default)]
pub struct Runs {
    /// The scenario this dialogue runs, when it runs one.
    scenario: Option<ScenarioState>,
    /// Its replay, running or done.
    replay: Option<Replay>,
    /// A watched or recorded dialogue this one takes over, while its Requests are sent again.
    takeover: Option<TakeOver>,
}

impl Runs {
    pub fn scenario(&self) -> Option<&ScenarioState> {
        self.scenario.as_ref()
    }

    pub fn replay(&self) -> Option<&Replay> {
        self.replay.as_ref()
    }

    pub fn takeover(&self) -> Option<&TakeOver> {
        self.takeover.as_ref()
    }

    /// Whether a replay of it is under way.
    pub fn replaying(&self) -> bool {
        self.replay.as_ref().is_some_and(|r| r.running)
    }

    /// Whether a scenario is under way in it.
    pub fn testing(&self) -> bool {
        self.scenario.as_ref().is_some_and(|s| s.running)
    }

    // ---- a scenario ----

    /// It runs the scenario of `file` (named after the file until it is read).
    pub fn run_scenario(&mut self, file: std::path::PathBuf, name: String) {
        self.scenario = Some(ScenarioState {
            file,
            name,
            running: true,
            ..Default::default()
        });
    }

    /// The scenario's file was read: its name and how many steps it has.
    pub fn scenario_read(&mut self, name: String, steps: usize) {
        if let Some(s) = &mut self.scenario {
            s.name = name;
            s.steps = steps;
        }
    }

    /// A step of the scenario ran, and passed or not.
    pub fn scenario_step(&mut self, passed: bool) {
        if let Some(s) = &mut self.scenario {
            if passed {
                s.passed += 1;
            } else {
                s.failed += 1;
            }
        }
    }

    /// The scenario ended (with why, when it could not be read or go on): how it went.
    pub fn scenario_ended(&mut self, error: Option<String>) -> Option<&ScenarioState> {
        let s = self.scenario.as_mut()?;
        s.running = false;
        if error.is_some() {
            s.error = error;
        }
        Some(s)
    }

    // ---- a replay ----

    /// A replay of the dialogue begins.
    pub fn start_replay(&mut self) {
        self.replay = Some(Replay {
            running: true,
            ..Default::default()
        });
    }

    /// A turn of the replay came in, answered as recorded or not.
    pub fn replayed_turn(&mut self, differs: bool) {
        if let Some(r) = &mut self.replay {
            r.done += 1;
            r.differing += usize::from(differs);
        }
    }

    /// The replay ended (with why, when it failed).
    pub fn replay_ended(&mut self, error: Option<String>) {
        if let Some(r) = &mut self.replay {
            r.running = false;
            r.error = error;
        }
    }

    /// Stops the replay under way: whether there was one.
    pub fn stop_replay(&mut self) -> bool {
        match &mut self.replay {
            Some(r) if r.running => {
                r.running = false;
                true
            }
            _ => false,
        }
    }

    // ---- a take-over ----

    /// It takes over a recorded dialogue: its Requests are to be sent again.
    pub fn take_over(&mut self, takeover: TakeOver) {
        self.takeover = Some(takeover);
    }

    /// The next recorded Request of the take-over to send again (counted as sent); None when
    /// all went (or it takes nothing over).
    pub fn next_recorded(&mut self) -> Option<serde_json::Value> {
        let t = self.takeover.as_mut()?;
        let request = t.requests.pop_front()?;
        t.sent += 1;
        Some(request)
    }

    /// A turn of the take-over came back: compared with the recorded one it stands for.
    /// That one's index among the recorded turns, how they differ, and the dialogue taken
    /// over.
    pub fn taken_over_turn(
        &mut self,
        turn: &crate::client::turn::Turn,
    ) -> Option<(
        usize,
        Vec<crate::session::diff::Difference>,
        crate::client::engine::DialogueKey,
    )> {
        let t = self.takeover.as_mut()?;
        let at = t.sent.saturating_sub(1);
        let recorded = t.recorded.get(at)?;
        let differences = crate::session::diff::compare(recorded, turn);
        t.differing += usize::from(!differences.is_empty());
        Some((at, differences, t.source))
    }

    /// The take-over ends: what it was.
    pub fn end_takeover(&mut self) -> Option<TakeOver> {
        self.takeover.take()
    }
}
