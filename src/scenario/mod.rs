//! Dialogue tests as code: a scenario is a dialogue written down once, each step a Request
//! (only what matters) and what its answer must say, run against one server or several, in CI
//! and under load (`docs/tests.md`). This module reads and checks scenario files; `run` plays
//! them, `expect` judges each answer, `compare` sets servers side by side, `junit` writes
//! reports CI tools read, `record` makes a scenario from a recorded dialogue and `load`
//! drives many dialogues at once.

pub mod compare;
pub mod expect;
mod file;
pub mod junit;
pub mod load;
pub mod locust;
pub mod record;
pub mod run;

use crate::client::defaults::Overrides;
use crate::protocol::Interface;
use crate::protocol::conformance::{Check, interface_of};
use crate::protocol::dac::{CommitmentState, Kind, Overall, PaStatus};
use crate::protocol::interface::Mode;
use crate::protocol::message::Outcome;
use crate::protocol::{schema, spelling};
use expect::{Expectation, Matcher};
use serde_json::{Map, Value};
use serde_saphyr::Spanned;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use strum::VariantArray;

/// The JSON Schema of scenario files (`docs/scenario.schema.json`, `bkn-explorer schema
/// scenario`), for editors and other tools; the loader's own checks say more, with places.
pub const SCHEMA: &str = include_str!("../../docs/scenario.schema.json");

/// A place in a scenario file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    pub line: usize,
    pub column: usize,
}

impl Place {
    fn of<T>(s: &Spanned<T>) -> Place {
        Place {
            line: s.referenced.line() as usize,
            column: s.referenced.column() as usize,
        }
    }
}

/// What is wrong with a scenario file, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub place: Option<Place>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Some(p) => write!(
                f,
                "{}:{}:{}: {}",
                self.file.display(),
                p.line,
                p.column,
                self.message
            ),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// Where a scenario runs when the command line names no server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerChoice {
    Embedded(Interface),
    Stdio(String),
    Url(String),
    /// A server by name from a servers file (relative to the scenario's folder).
    Named {
        name: String,
        servers: PathBuf,
    },
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub path: PathBuf,
    pub name: String,
    pub description: Option<String>,
    pub server: Option<ServerChoice>,
    pub interface: Interface,
    /// The common fields the scenario sets (over what the server publishes).
    pub defaults: Overrides,
    pub steps: Vec<Step>,
}

#[derive(Clone, Debug)]
pub struct Step {
    pub name: String,
    /// The Request's fields, with `{{name}}` where a capture goes.
    pub request: Map<String, Value>,
    pub as_is: bool,
    pub new_session: bool,
    pub expect: Vec<Expectation>,
    /// Values taken from the Response, by name, for later steps.
    pub capture: Vec<(String, String)>,
    pub retry: Option<Retry>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    pub times: u32,
    /// Between two sendings (100 ms unless the file says).
    pub delay: Duration,
}

/// Reads and checks a scenario file: everything that can be found wrong is found here, with
/// its line and column, before anything is sent.
pub fn load(path: &Path) -> Result<Scenario, Vec<ScenarioError>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![ScenarioError {
            file: path.to_owned(),
            place: None,
            message: format!("cannot read it: {e}"),
        }]
    })?;
    parse(&text, path)
}

/// Checks a scenario given as text (`path` names it in errors and places relative files).
pub fn parse(text: &str, path: &Path) -> Result<Scenario, Vec<ScenarioError>> {
    if let Some(scenario) = parse_json(text, path) {
        return Ok(scenario);
    }
    // YAML 1.2's booleans only: `Question: y` (or yes, on, no) is the string written, never
    // YAML 1.1's `true`, in a Request whose fields are mostly text.
    let options = serde_saphyr::options! { strict_booleans: true };
    let raw: file::File = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let place = e.location().map(|l| Place {
            line: l.line() as usize,
            column: l.column() as usize,
        });
        // The message of serde-saphyr carries a snippet after its first line; the place is
        // said once, in ours.
        let message = e.to_string();
        let first = message.lines().next().unwrap_or_default();
        let first = first
            .strip_prefix("error: ")
            .unwrap_or(first)
            .split_once(": ")
            .filter(|(head, _)| head.starts_with("line "))
            .map(|(_, rest)| rest)
            .unwrap_or(first);
        vec![ScenarioError {
            file: path.to_owned(),
            place,
            message: first.to_owned(),
        }]
    })?;
    Checker::new(path).scenario(raw)
}

/// A JSON scenario (one a program wrote) read by serde_json, when it has no mistake: about
/// ten times as fast as the YAML parser (a 2,000-step file: 4 against 45 ms, most of what
/// `test` added to a dialogue). serde_json keeps no places, so a file with any mistake in it
/// gives `None`, and `parse` reads it again with the YAML parser, which gives every mistake
/// its line and column.
fn parse_json(text: &str, path: &Path) -> Option<Scenario> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let raw = serde_json::from_str::<file::File>(text).ok()?;
    Checker::new(path).scenario(raw).ok()
}

/// Gathers every mistake of a file, so that one run shows them all.
struct Checker {
    path: PathBuf,
    errors: Vec<ScenarioError>,
    /// What `possible` said of each pointer already looked up: a scenario names the same few
    /// pointers again and again, and each look-up walks the Response schema.
    pointers: HashMap<(Interface, String), Result<(), String>>,
}

impl Checker {
    fn new(path: &Path) -> Checker {
        Checker {
            path: path.to_owned(),
            errors: Vec::new(),
            pointers: HashMap::new(),
        }
    }

    fn error(&mut self, place: Option<Place>, message: impl Into<String>) {
        self.errors.push(ScenarioError {
            file: self.path.clone(),
            place,
            message: message.into(),
        });
    }

    fn scenario(mut self, raw: file::File) -> Result<Scenario, Vec<ScenarioError>> {
        if raw.steps.is_empty() {
            self.error(None, "the scenario has no steps");
        }
        let server = raw.server.as_ref().and_then(|s| self.server(s));
        let interface = self.interface(&raw, server.as_ref());
        let mut captured: Vec<String> = Vec::new();
        let mut steps = Vec::new();
        for (i, step) in raw.steps.into_iter().enumerate() {
            if let Some(step) = self.step(i, step, interface, &mut captured) {
                steps.push(step);
            }
        }
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        let name = raw.name.unwrap_or_else(|| {
            self.path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scenario".into())
        });
        Ok(Scenario {
            path: self.path,
            name,
            description: raw.description,
            server,
            interface,
            defaults: Overrides {
                m_instance: raw.defaults.m_instance,
                u_environment: raw.defaults.u_environment,
                session_id: raw.defaults.session_id,
                how: "in the scenario".into(),
            },
            steps,
        })
    }

    fn server(&mut self, s: &Spanned<file::ServerFile>) -> Option<ServerChoice> {
        let place = Some(Place::of(s));
        let f = &s.value;
        let given = [
            f.embedded.is_some(),
            f.stdio.is_some(),
            f.url.is_some(),
            f.name.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if given != 1 {
            self.error(
                place,
                "server: give exactly one of embedded, stdio, url, or name (with servers)",
            );
            return None;
        }
        if let Some(e) = &f.embedded {
            return match Interface::from_code(e) {
                Some(i) => Some(ServerChoice::Embedded(i)),
                None => {
                    self.error(place, format!("server: embedded is dac or usr, not {e:?}"));
                    None
                }
            };
        }
        if let Some(line) = &f.stdio {
            return Some(ServerChoice::Stdio(line.clone()));
        }
        if let Some(url) = &f.url {
            return Some(ServerChoice::Url(url.clone()));
        }
        let name = f.name.clone().unwrap_or_default();
        match &f.servers {
            Some(servers) => {
                let folder = self.path.parent().unwrap_or(Path::new("."));
                Some(ServerChoice::Named {
                    name,
                    servers: folder.join(servers),
                })
            }
            None => {
                self.error(place, "server: name needs servers (a servers file)");
                None
            }
        }
    }

    /// The interface: said in the file, else the server's, else what the first Request says
    /// (its Header, else the properties only one interface has, as `send` and `dialogue`
    /// tell), else BKN-DAC.
    fn interface(&mut self, raw: &file::File, server: Option<&ServerChoice>) -> Interface {
        if let Some(i) = &raw.interface {
            return match Interface::from_code(&i.value) {
                Some(interface) => interface,
                None => {
                    self.error(
                        Some(Place::of(i)),
                        format!("interface is dac or usr, not {:?}", i.value),
                    );
                    Interface::Dac
                }
            };
        }
        if let Some(ServerChoice::Embedded(i)) = server {
            return *i;
        }
        raw.steps
            .first()
            .and_then(|s| {
                let fields: Map<String, Value> = s
                    .request
                    .0
                    .iter()
                    .map(|(k, v)| (k.value.clone(), v.value.clone()))
                    .collect();
                interface_of(&Value::Object(fields))
            })
            .unwrap_or(Interface::Dac)
    }

    fn step(
        &mut self,
        index: usize,
        step: file::StepFile,
        interface: Interface,
        captured: &mut Vec<String>,
    ) -> Option<Step> {
        let mut request = Map::new();
        let mut kind = None;
        // A Request the server is expected to reject may break the rules on purpose.
        let rejected_on_purpose = step.expect.as_ref().is_some_and(|e| {
            e.tool_error
                .as_ref()
                .is_some_and(|t| t.value != Value::Bool(false))
        });
        for (key, value) in step.request.0 {
            if key.value == "Kind" && interface == Interface::Dac && !rejected_on_purpose {
                kind = self.kind(&value).or(kind);
            }
            self.captures_made_before(&value, captured);
            request.insert(key.value, value.value);
        }
        let name = step.name.unwrap_or_else(|| {
            let what = match interface {
                Interface::Dac => kind.map(Kind::as_str).unwrap_or("request").to_owned(),
                Interface::Usr => "feedback".into(),
            };
            format!("step {} ({what})", index + 1)
        });
        let expect = match &step.expect {
            Some(e) => self.expectations(e, interface, kind),
            None => vec![Expectation::Conforms],
        };
        let mut capture = Vec::new();
        for (key, value) in step.capture.iter().flat_map(|c| c.0.iter()) {
            match value.value.as_str() {
                Some(pointer) => {
                    if self.pointer(Place::of(value), pointer, interface, "") {
                        capture.push((key.value.clone(), pointer.to_owned()));
                    }
                }
                None => self.error(
                    Some(Place::of(value)),
                    format!(
                        "capture {}: give the JSON pointer to take it from",
                        key.value
                    ),
                ),
            }
        }
        captured.extend(capture.iter().map(|(n, _)| n.clone()));
        let retry = step.retry.map(|r| {
            if r.value.delay.is_some() && r.value.delay_ms.is_some() {
                self.error(
                    Some(Place::of(&r)),
                    "retry: give delay or delay_ms, not both (delay takes e.g. 250ms, 2s)",
                );
            }
            Retry {
                times: r.value.times,
                delay: (r.value.delay)
                    .or(r.value.delay_ms.map(Duration::from_millis))
                    .unwrap_or(Duration::from_millis(100)),
            }
        });
        Some(Step {
            name,
            request,
            as_is: step.as_is,
            new_session: step.new_session,
            expect,
            capture,
            retry,
        })
    }

    /// The Kind a BKN-DAC step's Request names; a name that is no Kind is an error with its
    /// place (a placeholder is taken as it comes).
    fn kind(&mut self, value: &Spanned<Value>) -> Option<Kind> {
        match value.value.as_str() {
            Some(k) if Kind::parse(k).is_some() => Kind::parse(k),
            Some(k) if k.contains("{{") => None,
            other => {
                let shown = other
                    .map(str::to_owned)
                    .unwrap_or_else(|| value.value.to_string());
                let names: Vec<&str> = Kind::VARIANTS.iter().map(|k| k.as_str()).collect();
                let hint = spelling::closest(&shown, names.iter().copied())
                    .map(|c| format!(" (did you mean {c}?)"))
                    .unwrap_or_default();
                self.error(
                    Some(Place::of(value)),
                    format!(
                        "{shown:?} is not a Kind{hint}; the Kinds are {}",
                        names.join(", ")
                    ),
                );
                None
            }
        }
    }

    /// A capture used in the Request must have been made by an earlier step.
    fn captures_made_before(&mut self, value: &Spanned<Value>, captured: &[String]) {
        for name in placeholders(&value.value) {
            if !captured.contains(&name) {
                self.error(
                    Some(Place::of(value)),
                    format!(
                        "{{{{{name}}}}} is used before a step captures it{}",
                        if captured.is_empty() {
                            String::new()
                        } else {
                            format!(" (captured so far: {})", captured.join(", "))
                        }
                    ),
                );
            }
        }
    }

    /// What a step's `expect` asks, each part checked where it is written (a wrong name is
    /// an error with its place, and the part is left out).
    fn expectations(
        &mut self,
        e: &file::ExpectFile,
        interface: Interface,
        kind: Option<Kind>,
    ) -> Vec<Expectation> {
        let mut out = Vec::new();
        self.conformance_and_tool_error(e, &mut out);
        self.outcome_expectation(e, &mut out);
        self.value_expectations(e, interface, &mut out);
        self.feasibility_expectations(e, interface, kind, &mut out);
        self.commitment_expectations(e, &mut out);
        self.user_state_expectations(e, interface, &mut out);
        self.latency_expectation(e, &mut out);
        out
    }

    /// `findings`, `conforms` and `tool_error`: a Request rejected on purpose is asked for no
    /// conformance.
    fn conformance_and_tool_error(&mut self, e: &file::ExpectFile, out: &mut Vec<Expectation>) {
        let tool_error = e.tool_error.as_ref().and_then(|t| match &t.value {
            Value::Bool(false) => None,
            Value::Bool(true) => Some(None),
            v => self.matcher(Place::of(t), v).map(Some),
        });
        match (&e.findings, e.conforms.as_ref().map(|c| c.value)) {
            (Some(list), _) => {
                let mut names = Vec::new();
                for f in list {
                    if Check::from_name(&f.value).is_none() {
                        let all: Vec<&str> = Check::ALL.iter().map(|c| c.as_str()).collect();
                        let hint = spelling::closest(&f.value, all.iter().copied())
                            .map(|c| format!("; did you mean {c}?"))
                            .unwrap_or_default();
                        self.error(
                            Some(Place::of(f)),
                            format!("{:?} is not a check this program makes{hint} (`bkn-explorer validate` names them)", f.value),
                        );
                    }
                    names.push(f.value.clone());
                }
                out.push(Expectation::Findings(names));
            }
            (None, Some(false)) => out.push(Expectation::NotConforming),
            // A Request rejected on purpose breaks rules by design: no conformance is asked.
            (None, _) if tool_error.is_some() => {}
            (None, _) => out.push(Expectation::Conforms),
        }
        if let Some(m) = tool_error {
            out.push(Expectation::ToolError(m));
        }
    }

    /// `outcome`: one Outcome or a list of them.
    fn outcome_expectation(&mut self, e: &file::ExpectFile, out: &mut Vec<Expectation>) {
        if let Some(o) = &e.outcome {
            let wanted: Vec<String> = match &o.value {
                Value::String(s) => vec![s.clone()],
                Value::Array(a) => a
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
                _ => Vec::new(),
            };
            for w in &wanted {
                if Outcome::parse(w).is_none() {
                    self.error(
                        Some(Place::of(o)),
                        format!(
                            "{w:?} is not an Outcome (answered, partially_answered, not_answered)"
                        ),
                    );
                }
            }
            if wanted.is_empty() {
                self.error(Some(Place::of(o)), "outcome: an Outcome, or a list of them");
            }
            out.push(Expectation::Outcome(wanted));
        }
    }

    /// `values`: JSON pointers into the Response, each with a matcher.
    fn value_expectations(
        &mut self,
        e: &file::ExpectFile,
        interface: Interface,
        out: &mut Vec<Expectation>,
    ) {
        for (key, value) in e.values.iter().flat_map(|v| v.0.iter()) {
            if self.pointer(Place::of(key), &key.value, interface, "")
                && let Some(m) = self.matcher(Place::of(value), &value.value)
            {
                out.push(Expectation::Value {
                    pointer: key.value.clone(),
                    matcher: m,
                });
            }
        }
    }

    /// `feasibility`: the PA Status of each step and the Overall, only for a BKN-DAC
    /// feasibility Request.
    fn feasibility_expectations(
        &mut self,
        e: &file::ExpectFile,
        interface: Interface,
        kind: Option<Kind>,
        out: &mut Vec<Expectation>,
    ) {
        if let Some(f) = &e.feasibility {
            if interface != Interface::Dac || kind.is_some_and(|k| k != Kind::Feasibility) {
                self.error(
                    f.steps
                        .as_ref()
                        .and_then(|s| s.first().map(Place::of))
                        .or(f.overall.as_ref().map(Place::of)),
                    "feasibility: only a BKN-DAC feasibility Request has a Feasibility",
                );
            }
            if let Some(steps) = &f.steps {
                for s in steps {
                    if PaStatus::parse(&s.value).is_none() {
                        let names: Vec<&str> =
                            PaStatus::VARIANTS.iter().map(|s| s.as_str()).collect();
                        let hint = spelling::closest(&s.value, names.iter().copied())
                            .map(|c| format!(" (did you mean {c}?)"))
                            .unwrap_or_default();
                        self.error(
                            Some(Place::of(s)),
                            format!("{:?} is not a PA Status{hint}", s.value),
                        );
                    }
                }
                out.push(Expectation::Steps(
                    steps.iter().map(|s| s.value.clone()).collect(),
                ));
            }
            if let Some(o) = &f.overall {
                if Overall::parse(&o.value).is_none() {
                    self.error(
                        Some(Place::of(o)),
                        format!(
                            "{:?} is not an Overall (feasible, partially_feasible, infeasible)",
                            o.value
                        ),
                    );
                }
                out.push(Expectation::Overall(o.value.clone()));
            }
        }
    }

    /// `commitments`: the status each commitment should have.
    fn commitment_expectations(&mut self, e: &file::ExpectFile, out: &mut Vec<Expectation>) {
        for (key, value) in e.commitments.iter().flat_map(|c| c.0.iter()) {
            let status = value.value.as_str().unwrap_or_default();
            if CommitmentState::parse(status).is_none() {
                self.error(
                    Some(Place::of(value)),
                    format!(
                        "commitment {}: {:?} is not a status (retained, released, conflicting)",
                        key.value, value.value
                    ),
                );
            }
            out.push(Expectation::Commitment {
                id: key.value.clone(),
                status: status.to_owned(),
            });
        }
    }

    /// `user_state` and `engagement`: only BKN-USR Responses have them.
    fn user_state_expectations(
        &mut self,
        e: &file::ExpectFile,
        interface: Interface,
        out: &mut Vec<Expectation>,
    ) {
        if (e.user_state.is_some() || e.engagement.is_some()) && interface != Interface::Usr {
            self.error(
                None,
                "user_state and engagement: only BKN-USR Responses have them",
            );
        }
        for (key, value) in e.user_state.iter().flat_map(|v| v.0.iter()) {
            if self.pointer(Place::of(key), &key.value, interface, "/RefinedUserState")
                && let Some(m) = self.matcher(Place::of(value), &value.value)
            {
                out.push(Expectation::Value {
                    pointer: format!("/RefinedUserState{}", key.value),
                    matcher: m,
                });
            }
        }
        if let Some(en) = &e.engagement {
            for (field, value) in [("Level", &en.level), ("Mode", &en.mode)] {
                if let Some(v) = value
                    && let Some(m) = self.matcher(Place::of(v), &v.value)
                {
                    out.push(Expectation::Value {
                        pointer: format!("/Engagement/{field}"),
                        matcher: m,
                    });
                }
            }
        }
    }

    /// `latency_ms`: the longest a turn may take.
    fn latency_expectation(&mut self, e: &file::ExpectFile, out: &mut Vec<Expectation>) {
        if let Some(l) = &e.latency_ms {
            let max = match &l.value {
                Value::Number(n) => n.as_f64(),
                Value::Object(o) => o.get("max").and_then(Value::as_f64),
                _ => None,
            };
            match max {
                Some(max) => out.push(Expectation::Latency(max)),
                None => self.error(
                    Some(Place::of(l)),
                    "latency_ms: a number of milliseconds, or {max: N}",
                ),
            }
        }
    }

    fn matcher(&mut self, place: Place, value: &Value) -> Option<Matcher> {
        match Matcher::read(value) {
            Ok(m) => Some(m),
            Err(e) => {
                self.error(Some(place), e);
                None
            }
        }
    }

    /// Whether a JSON pointer can exist in a Response of the interface (`under` is where it
    /// starts); says why not, and where, when it cannot.
    fn pointer(&mut self, place: Place, pointer: &str, interface: Interface, under: &str) -> bool {
        if !(pointer.is_empty() || pointer.starts_with('/')) {
            self.error(
                Some(place),
                format!("{pointer:?} is not a JSON pointer (one starts with /, e.g. /Answer/Text)"),
            );
            return false;
        }
        let full = format!("{under}{pointer}");
        let verdict = match self.pointers.get(&(interface, full.clone())) {
            Some(known) => known.clone(),
            None => {
                let verdict = possible(schema::self_contained(interface, Mode::Response), &full);
                self.pointers
                    .insert((interface, full.clone()), verdict.clone());
                verdict
            }
        };
        match verdict {
            Ok(()) => true,
            Err(why) => {
                self.error(
                    Some(place),
                    format!(
                        "{full} cannot exist in a {} Response: {why}",
                        interface.name()
                    ),
                );
                false
            }
        }
    }
}

/// The `{{name}}` placeholders in a value.
pub fn placeholders(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match value {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(start) = rest.find("{{") {
                let after = &rest[start + 2..];
                match after.find("}}") {
                    Some(end) => {
                        out.push(after[..end].trim().to_owned());
                        rest = &after[end + 2..];
                    }
                    None => break,
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| out.extend(placeholders(v))),
        Value::Object(map) => map.values().for_each(|v| out.extend(placeholders(v))),
        _ => {}
    }
    out
}

/// Whether a pointer can lead somewhere in what `schema` describes: each segment must be a
/// property the schema allows (or an index of an array).
fn possible(schema: &Value, pointer: &str) -> Result<(), String> {
    let segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    walk(schema, &segments, "")
}

fn walk(schema: &Value, segments: &[String], at: &str) -> Result<(), String> {
    let Some((first, rest)) = segments.split_first() else {
        return Ok(());
    };
    // Any branch of a choice will do.
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let mut last = Err(format!("nothing at {at}/{first}"));
            for b in branches {
                last = walk(b, segments, at);
                if last.is_ok() {
                    return last;
                }
            }
            return last;
        }
    }
    let here = format!("{at}/{first}");
    if let Some(items) = schema.get("items") {
        if first.parse::<usize>().is_ok() || first == "-" {
            return walk(items, rest, &here);
        }
        return Err(format!(
            "{at} is a list: its members are numbered (/0, /1, …), not {first:?}"
        ));
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(p) = properties.and_then(|p| p.get(first)) {
        return walk(p, rest, &here);
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    match (properties, closed) {
        (Some(p), true) => {
            let names: Vec<&str> = p.keys().map(String::as_str).collect();
            let hint = spelling::closest(first, names.iter().copied())
                .map(|c| format!("did you mean {c}? "))
                .unwrap_or_default();
            Err(format!(
                "{} has no {first} ({hint}it has {})",
                if at.is_empty() { "the Response" } else { at },
                names.join(", ")
            ))
        }
        // An object open to anything (RefinedUserState, DataXMData) or a value of any kind.
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
