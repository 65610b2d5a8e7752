//! `certify`: a conformance report for any Domain Access or User State Refinement server.
//!
//! The certifier learns a server as a generic client does (its tools by their Header const,
//! its resources: the domain, the Spaces, the Users), then runs a battery of dialogues built
//! from what it learnt and gives each rule a verdict: pass, fail with the exchanges that
//! show it, or skip with why. The project's judge (`protocol::conformance`, through the
//! client's `Dialogue`) finds what a message, an exchange or a dialogue breaks; each rule
//! here counts only the judge's checks that are its own, and adds what no judge of a single
//! dialogue can see (a PA Status provoked on purpose, isolation between dialogues,
//! determinism, survival).
//!
//! Layout: `rules.rs` (the table: ids, sections, families), `learn.rs` (what the server
//! publishes), `probe.rs` (one rule's dialogues and what they showed), `runner.rs` (runs the
//! rules, each with a deadline, on fresh connections, telling a progress callback), one file
//! per family (`tools`, `turns`, `feasibility`, `commitments`, `dialogues`, `determinism`,
//! `robustness`, `usr`), and `report.rs` (text, JSON, Markdown, JUnit, a session).

pub mod commitments;
pub mod determinism;
pub mod dialogues;
pub mod feasibility;
pub mod learn;
pub mod probe;
pub mod raw;
pub mod report;
pub mod robustness;
pub mod rules;
pub mod runner;
pub mod tools;
pub mod turns;
pub mod usr;

use crate::client::turn::Turn;
use serde::Serialize;

pub use rules::{Family, Rule, RuleId};
pub use runner::{Options, Progress, certify};

/// A rule's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    Skip,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Skip => "skip",
        }
    }
}

/// One exchange a rule made: a BKN turn of one of its dialogues (replayable: it is a session
/// turn), or what went over the wire outside any dialogue (junk, a raw HTTP body).
#[derive(Clone, Debug, PartialEq)]
pub enum Evidence {
    Turn {
        /// The rule's name for the dialogue ("A", "B", "second generation" ...).
        dialogue: String,
        dialog_id: String,
        /// The MCP version the dialogue spoke.
        protocol: String,
        turn: Box<Turn>,
    },
    Raw {
        /// "stdio" or "HTTP".
        transport: String,
        sent: String,
        received: String,
    },
}

/// A rule as it ran.
#[derive(Clone, Debug)]
pub struct RuleResult {
    pub rule: &'static Rule,
    pub verdict: Verdict,
    /// One line: what was checked, what failed, or why it was skipped.
    pub summary: String,
    /// Every problem found (the summary names the first).
    pub problems: Vec<String>,
    /// How many things were checked.
    pub checked: usize,
    pub evidence: Vec<Evidence>,
    pub seconds: f64,
}

/// The whole run.
#[derive(Clone, Debug)]
pub struct Report {
    /// The server as it names itself (serverInfo), with the name the command line or servers
    /// file gave it in parentheses when that differs.
    pub server: String,
    pub interface: crate::protocol::Interface,
    /// The MCP version spoken by the first connection.
    pub protocol: String,
    /// What was learnt, in sentences (the M-Instance, the tools, the resources).
    pub learnt: Vec<String>,
    pub rules: Vec<RuleResult>,
    pub seconds: f64,
    /// The server spec, for a saved session's dialogues.
    pub spec: crate::client::spec::ServerSpec,
}

impl Report {
    pub fn count(&self, verdict: Verdict) -> usize {
        self.rules.iter().filter(|r| r.verdict == verdict).count()
    }
}
