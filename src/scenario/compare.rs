//! Servers side by side: the same scenario's answers from each server compared, step by
//! step, with the first server's, leaving out what always differs between runs (QueryID,
//! QueryTime, RequestID, DialogID, the DataXMData identifiers), as `replay` compares a
//! recording with a new run.

use crate::scenario::run::ScenarioRun;
use crate::session::diff::{self, Difference};
use serde::Serialize;

/// Where one server's answer to a step differs from the first server's.
#[derive(Clone, Debug, Serialize)]
pub struct StepDifference {
    pub step: usize,
    pub name: String,
    /// The server compared with the first one.
    pub server: String,
    pub differences: Vec<String>,
}

/// Compares each run with the first (all runs of one scenario).
pub fn compare(runs: &[&ScenarioRun]) -> Vec<StepDifference> {
    let Some((first, others)) = runs.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for other in others {
        for (a, b) in first.steps.iter().zip(&other.steps) {
            let differences: Vec<Difference> = match (&a.turn, &b.turn) {
                (Some(x), Some(y)) => diff::compare(x, y),
                (None, None) => Vec::new(),
                _ => vec![Difference {
                    pointer: String::new(),
                    recorded: a.turn.as_ref().map(|_| "a turn".into()),
                    replayed: b.turn.as_ref().map(|_| "a turn".into()),
                }],
            };
            if !differences.is_empty() {
                out.push(StepDifference {
                    step: a.index,
                    name: a.name.clone(),
                    server: other.server.clone(),
                    differences: differences.iter().map(|d| d.to_string()).collect(),
                });
            }
        }
    }
    out
}
