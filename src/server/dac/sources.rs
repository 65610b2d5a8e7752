//! The named knowledge sources behind an answer: which were used (`SourcesUsed`) and which
//! failed (`Failure`), with failures injected by `--fail-source NAME=transient|permanent`.

use crate::protocol::dac::{Failure, Nature};
use crate::server::dac::domain::{Domain, Role};
use std::collections::HashMap;

/// The sources made to fail, by name.
pub type FailingSources = HashMap<String, Nature>;

/// The sources consulted for one answer.
pub struct Consulted<'a> {
    domain: &'a Domain,
    failing: &'a FailingSources,
    used: Vec<String>,
    failures: Vec<Failure>,
}

impl<'a> Consulted<'a> {
    pub fn new(domain: &'a Domain, failing: &'a FailingSources) -> Self {
        Consulted {
            domain,
            failing,
            used: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Asks the source with `role` for `what` (a phrase for `Failure.Request`). Returns whether
    /// it answered. A domain without a source of that role answers from itself, unnamed.
    pub fn ask(&mut self, role: Role, what: impl FnOnce() -> String) -> bool {
        let Some(source) = self.domain.source(role) else {
            return true;
        };
        if let Some(&nature) = self.failing.get(&source.name) {
            if !self.failures.iter().any(|f| f.service == source.name) {
                self.failures.push(Failure {
                    service: source.name.clone(),
                    request: Some(what()),
                    nature,
                });
            }
            return false;
        }
        if !self.used.contains(&source.name) {
            self.used.push(source.name.clone());
        }
        true
    }

    /// Whether the source with `role` is available, without consulting it.
    pub fn available(&self, role: Role) -> bool {
        self.domain
            .source(role)
            .is_none_or(|s| !self.failing.contains_key(&s.name))
    }

    pub fn name(&self, role: Role) -> String {
        self.domain
            .source(role)
            .map(|s| s.name.clone())
            .unwrap_or_else(|| format!("{role:?}").to_lowercase())
    }

    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }

    /// `SourcesUsed`, and the first `Failure` (a Response carries one; the others are named in
    /// the answer's text).
    pub fn finish(self) -> (Vec<String>, Option<Failure>, Vec<Failure>) {
        let mut failures = self.failures.into_iter();
        let first = failures.next();
        (self.used, first, failures.collect())
    }
}
