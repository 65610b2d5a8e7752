//! Playing a scenario against a server: one dialogue, each step's Request filled as `send`
//! fills it (captures put in first), sent, and its answer judged; a step may be sent again
//! until its expectations hold (`retry`), or start a new MCP session (`new_session`). A lost
//! connection fails the step with its reason and the steps after it as not run.

use crate::client::connection::ConnectOptions;
use crate::client::defaults::{Chosen, Overrides};
use crate::client::dialogue::{Dialogue, Filling, OpenFailure};
use crate::client::spec::ServerSpec;
use crate::client::turn::{ErrorKind, Reply, Turn};
use crate::scenario::expect::{self, Failure};
use crate::scenario::{Scenario, Step};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// One step as it ran.
#[derive(Clone, Debug)]
pub struct StepRun {
    pub index: usize,
    pub name: String,
    /// The last turn sent for it: none when it was not run, or when it passed and the run
    /// was told to keep only the turns of failing steps (`Keep::Failing`).
    pub turn: Option<Turn>,
    /// How long the last try took, in milliseconds (zero when it was not run).
    pub latency_ms: f64,
    pub failures: Vec<Failure>,
    /// How many times it was sent.
    pub attempts: u32,
    /// Why it did not run, when it did not.
    pub not_run: Option<String>,
}

impl StepRun {
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.not_run.is_none()
    }
}

/// A scenario as it ran on one server.
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    pub scenario: String,
    pub file: String,
    pub server: String,
    /// The MCP version the server and the client agreed on (its generation), once connected.
    pub protocol: Option<String>,
    pub steps: Vec<StepRun>,
    /// The dialogue could not be opened: why (the server unreachable, or reached without a
    /// tool for the scenario's interface).
    pub error: Option<OpenFailure>,
    pub seconds: f64,
}

impl ScenarioRun {
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.steps.iter().all(StepRun::passed)
    }

    pub fn failed_steps(&self) -> usize {
        self.steps.iter().filter(|s| !s.passed()).count()
    }
}

/// Which turns a run keeps in its `ScenarioRun` once each step has been reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Every step's (for a report that shows every Response, or a comparison of servers).
    Every,
    /// Only failing steps' (what a report of failures shows): a long scenario's memory does
    /// not grow with its passing turns.
    Failing,
}

/// What the runner reports as it goes (a progress line, the explorer's panes).
pub enum Progress<'a> {
    Opened { dialog_id: &'a str },
    Step(&'a StepRun),
}

impl ScenarioRun {
    /// A run of `scenario` on `spec` that has played nothing yet.
    fn starting(scenario: &Scenario, spec: &ServerSpec) -> ScenarioRun {
        ScenarioRun {
            scenario: scenario.name.clone(),
            file: scenario.path.display().to_string(),
            server: spec.name.clone(),
            protocol: None,
            steps: Vec::new(),
            error: None,
            seconds: 0.0,
        }
    }
}

/// Why the steps after this turn cannot be played: its connection is gone (the steps left
/// are then said not run, with this reason).
fn connection_gone(turn: &Turn) -> Option<String> {
    match &turn.reply {
        Reply::Error(e) if matches!(e.kind, ErrorKind::Gone | ErrorKind::Transport) => {
            Some(format!("the connection is gone: {}", e.message))
        }
        _ => None,
    }
}

/// Plays `scenario` on the server `spec`. `overrides` are the command line's (over the
/// scenario's own defaults).
pub async fn run(
    scenario: &Scenario,
    spec: &ServerSpec,
    options: &ConnectOptions,
    overrides: &Overrides,
    cancel: &CancellationToken,
    keep: Keep,
    mut progress: impl FnMut(Progress),
) -> ScenarioRun {
    let started = std::time::Instant::now();
    let mut out = ScenarioRun::starting(scenario, spec);
    let overrides = scenario.defaults.then(overrides);
    let connect = || {
        Dialogue::connect(
            spec,
            options,
            scenario.interface,
            Chosen::built_in(),
            &overrides,
        )
    };
    let first = Dialogue::reach(
        spec,
        options,
        scenario.interface,
        Chosen::built_in(),
        &overrides,
        None,
    );
    let mut dialogue = match first.await {
        Ok(d) => d,
        Err(e) => {
            out.error = Some(e);
            out.seconds = started.elapsed().as_secs_f64();
            return out;
        }
    };
    out.protocol = Some(dialogue.connection.summary.protocol_version.clone());
    progress(Progress::Opened {
        dialog_id: dialogue.dialog_id(),
    });
    let mut captured: HashMap<String, Value> = HashMap::new();
    let mut gone: Option<String> = None;
    for (index, step) in scenario.steps.iter().enumerate() {
        if gone.is_none() && cancel.is_cancelled() {
            gone = Some("cancelled".into());
        }
        if gone.is_none()
            && step.new_session
            && index > 0
            && let Err(e) = renew_session(&mut dialogue, connect().await).await
        {
            gone = Some(format!("the new session could not be opened: {e}"));
        }
        if let Some(why) = &gone {
            let run = not_run(index, step, why.clone());
            progress(Progress::Step(&run));
            out.steps.push(run);
            continue;
        }
        let mut run = play(&mut dialogue, index, step, &captured, cancel).await;
        if let Some(turn) = &run.turn {
            capture(&step.capture, dialogue.last_response(), &mut captured);
            gone = connection_gone(turn);
        }
        progress(Progress::Step(&run));
        if keep == Keep::Failing && run.passed() {
            run.turn = None;
        }
        out.steps.push(run);
    }
    dialogue.close().await;
    out.seconds = started.elapsed().as_secs_f64();
    out
}

/// A step's `new_session`: the dialogue goes on in `new` (the old one closed). A new MCP
/// session goes on at the next TurnIndex; over 2026-07-28 there is no session, and what a
/// new one does to the server's state is a new dialogue (a new DialogID), which starts at
/// TurnIndex 0: a later turn of a DialogID the server does not hold is refused
/// (MCP-BINDING 3).
async fn renew_session(
    dialogue: &mut Dialogue,
    new: Result<Dialogue, String>,
) -> Result<(), String> {
    let next = dialogue.next_turn();
    std::mem::replace(dialogue, new?).close().await;
    let stateless =
        dialogue.connection.state_home() == crate::client::generation::StateHome::DialogId;
    if !stateless {
        dialogue.start_at(next);
    }
    Ok(())
}

fn not_run(index: usize, step: &Step, why: String) -> StepRun {
    StepRun {
        index,
        name: step.name.clone(),
        turn: None,
        latency_ms: 0.0,
        failures: Vec::new(),
        attempts: 0,
        not_run: Some(why),
    }
}

/// Sends a step (again, while it fails and its retries last) and judges the answer.
async fn play(
    dialogue: &mut Dialogue,
    index: usize,
    step: &Step,
    captured: &HashMap<String, Value>,
    cancel: &CancellationToken,
) -> StepRun {
    let mut fields = fill_captures(&step.request, captured);
    let filling = if step.as_is {
        Filling::AsIs
    } else {
        Filling::Missing
    };
    let tries = 1 + step.retry.map_or(0, |r| r.times);
    let mut attempts = 0;
    loop {
        attempts += 1;
        // Copied only for a try that may be followed by another.
        let this_try = if attempts >= tries {
            std::mem::take(&mut fields)
        } else {
            fields.clone()
        };
        let request = dialogue.prepare(Value::Object(this_try), filling);
        let turn = dialogue.send(request, cancel).await;
        let failures = expect::judge(&step.expect, &turn, dialogue.last_response());
        let lost = matches!(&turn.reply, Reply::Error(e) if matches!(e.kind, ErrorKind::Gone | ErrorKind::Transport | ErrorKind::Cancelled));
        if failures.is_empty() || attempts >= tries || lost {
            return StepRun {
                index,
                name: step.name.clone(),
                latency_ms: turn.latency_ms,
                turn: Some(turn),
                failures,
                attempts,
                not_run: None,
            };
        }
        let delay = step.retry.map_or(Duration::ZERO, |r| r.delay);
        tokio::time::sleep(delay).await;
    }
}

/// Takes a step's captures from its Response (the one parsed for the turn's checks).
pub fn capture(
    captures: &[(String, String)],
    response: Option<&Value>,
    captured: &mut HashMap<String, Value>,
) {
    let Some(response) = response else {
        return;
    };
    for (name, pointer) in captures {
        if let Some(v) = response.pointer(pointer) {
            captured.insert(name.clone(), v.clone());
        }
    }
}

/// The Request with each `{{name}}` replaced: a string that is only a placeholder takes the
/// captured value as it is (a number stays a number); in longer text it is written in.
pub fn fill_captures(
    request: &Map<String, Value>,
    captured: &HashMap<String, Value>,
) -> Map<String, Value> {
    if captured.is_empty() {
        return request.clone();
    }
    request
        .iter()
        .map(|(k, v)| (k.clone(), fill(v, captured)))
        .collect()
}

fn fill(value: &Value, captured: &HashMap<String, Value>) -> Value {
    match value {
        Value::String(s) if s.contains("{{") => {
            let trimmed = s.trim();
            if let Some(name) = trimmed
                .strip_prefix("{{")
                .and_then(|r| r.strip_suffix("}}"))
                .map(str::trim)
                .filter(|n| !n.contains("{{"))
                && let Some(v) = captured.get(name)
            {
                return v.clone();
            }
            let mut out = s.clone();
            for (name, v) in captured {
                let text = match v {
                    Value::String(t) => t.clone(),
                    other => other.to_string(),
                };
                out = out.replace(&format!("{{{{{name}}}}}"), &text);
            }
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| fill(v, captured)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill(v, captured)))
                .collect(),
        ),
        other => other.clone(),
    }
}
