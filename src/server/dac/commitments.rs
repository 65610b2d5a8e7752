//! The semantic commitments of one dialogue (MCP-BINDING section 4): retained, released or
//! conflicting, with the reason of each conflict.
//!
//! A statement in the triple form `Subject [not] Predicate Object` conflicts with a retained
//! commitment of the opposite polarity, with a retained one that gives a functional predicate
//! another Object, and with the domain's facts in the same two ways (and `isA` with the class
//! hierarchy). A statement that is not a triple is retained as opaque text and never conflicts.

use crate::protocol::dac::{CommitmentState, CommitmentStatusEntry};
use crate::protocol::triple::Triple;
use crate::server::dac::domain::{Domain, Fact};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commitment {
    pub id: String,
    pub statement: String,
    pub triple: Option<Triple>,
    pub state: CommitmentState,
    /// Why it conflicts, or what released it.
    pub reason: Option<String>,
}

/// The commitments a dialogue has seen, in the order it first saw them.
#[derive(Clone, Debug, Default)]
pub struct Commitments {
    entries: Vec<Commitment>,
}

impl Commitments {
    /// Stops retaining the given commitments; returns the IDs the dialogue never saw.
    pub fn release(&mut self, ids: &[String]) -> Vec<String> {
        let mut unknown = Vec::new();
        for id in ids {
            match self.entries.iter_mut().find(|c| &c.id == id) {
                Some(c) => {
                    c.state = CommitmentState::Released;
                    c.reason = None;
                }
                None => unknown.push(id.clone()),
            }
        }
        unknown
    }

    /// Asks to retain a statement under an ID (a known ID is restated). `domain` is `None` when
    /// the domain's facts cannot be consulted. Returns the state it ends in.
    pub fn retain(
        &mut self,
        id: &str,
        statement: &str,
        domain: Option<&Domain>,
    ) -> CommitmentState {
        let triple = Triple::parse(statement);
        let conflict = triple.as_ref().and_then(|t| {
            self.conflict_with_retained(id, t, domain)
                .or_else(|| domain.and_then(|d| conflict_with_domain(d, t)))
        });
        let (state, reason) = match conflict {
            Some(reason) => (CommitmentState::Conflicting, Some(reason)),
            None => (CommitmentState::Retained, None),
        };
        let entry = Commitment {
            id: id.to_owned(),
            statement: statement.to_owned(),
            triple,
            state,
            reason,
        };
        match self.entries.iter_mut().find(|c| c.id == id) {
            Some(existing) => *existing = entry,
            None => self.entries.push(entry),
        }
        state
    }

    fn conflict_with_retained(
        &self,
        id: &str,
        new: &Triple,
        domain: Option<&Domain>,
    ) -> Option<String> {
        self.retained().filter(|c| c.id != id).find_map(|c| {
            let old = c.triple.as_ref()?;
            if old.contradicts(new) {
                return Some(format!("contradicts {} ({})", c.id, c.statement));
            }
            let functional =
                domain.is_some_and(|d| d.file.functional_predicates.contains(&new.predicate));
            (functional
                && !old.negated
                && !new.negated
                && old.subject == new.subject
                && old.predicate == new.predicate
                && old.object != new.object)
                .then(|| {
                    format!(
                        "{} already commits {} {} {}, and {} has one value",
                        c.id, old.subject, old.predicate, old.object, new.predicate
                    )
                })
        })
    }

    pub fn retained(&self) -> impl Iterator<Item = &Commitment> {
        self.entries
            .iter()
            .filter(|c| c.state == CommitmentState::Retained)
    }

    pub fn get(&self, id: &str) -> Option<&Commitment> {
        self.entries.iter().find(|c| c.id == id)
    }

    pub fn all(&self) -> &[Commitment] {
        &self.entries
    }

    /// `CommitmentStatus`: one entry for every commitment the dialogue has seen.
    pub fn statuses(&self) -> Vec<CommitmentStatusEntry> {
        self.entries
            .iter()
            .map(|c| CommitmentStatusEntry {
                commitment_id: c.id.clone(),
                status: c.state,
            })
            .collect()
    }
}

/// Whether a statement contradicts what the domain knows.
fn conflict_with_domain(domain: &Domain, t: &Triple) -> Option<String> {
    if t.predicate == "isA" {
        let class = domain.class_of(&t.subject)?;
        domain.class(&t.object)?;
        let holds = domain.is_a(class, &t.object);
        return (holds == t.negated).then(|| {
            if t.negated {
                format!(
                    "the domain has {} as a {class}, which is a {}",
                    t.subject, t.object
                )
            } else {
                format!(
                    "the domain has {} as a {class}, not a {}",
                    t.subject, t.object
                )
            }
        });
    }
    let facts = domain.facts();
    let same = |f: &Fact| f.subject == t.subject && f.predicate == t.predicate;
    if t.negated {
        facts
            .iter()
            .find(|f| same(f) && f.object == t.object)
            .map(|f| format!("the domain has {} {} {}", f.subject, f.predicate, f.object))
    } else if domain.file.functional_predicates.contains(&t.predicate) {
        facts
            .iter()
            .find(|f| same(f) && f.object != t.object)
            .map(|f| {
                format!(
                    "the domain has {} {} {}, and {} has one value",
                    f.subject, f.predicate, f.object, f.predicate
                )
            })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts() {
        let d = Domain::default_domain();
        let mut c = Commitments::default();
        use CommitmentState::*;
        assert_eq!(
            c.retain("c1", "Kiosk#3 locatedAt MLoc:Square.Stage", Some(&d)),
            Retained
        );
        assert_eq!(
            c.retain("c2", "Kiosk#3 not locatedAt MLoc:Square.Stage", Some(&d)),
            Conflicting
        );
        assert_eq!(
            c.retain("c3", "Kiosk#3 locatedAt MLoc:Square.Gate", Some(&d)),
            Conflicting
        );
        assert_eq!(
            c.retain("c4", "Fountain#1 locatedAt MLoc:Square.Stage", Some(&d)),
            Conflicting
        );
        assert_eq!(
            c.retain(
                "c5",
                "Fountain#1 not locatedAt MLoc:Square.Fountain",
                Some(&d)
            ),
            Conflicting
        );
        assert_eq!(
            c.retain("c6", "Fountain#1 isA Landmark", Some(&d)),
            Retained
        );
        assert_eq!(
            c.retain("c7", "Fountain#1 isA Kiosk", Some(&d)),
            Conflicting
        );
        assert_eq!(c.retain("c8", "be nice to everyone", Some(&d)), Retained);
        assert_eq!(c.retain("c9", "be", Some(&d)), Retained);
        // `NOT` is not the negation: opaque text, which conflicts with nothing.
        assert_eq!(
            c.retain(
                "c10",
                "Fountain#1 NOT locatedAt MLoc:Square.Fountain",
                Some(&d)
            ),
            Retained
        );
        // Releasing c1 lets a contrary statement be retained.
        assert!(c.release(&["c1".into(), "cX".into()]) == ["cX"]);
        assert_eq!(
            c.retain("c2", "Kiosk#3 not locatedAt MLoc:Square.Stage", Some(&d)),
            Retained
        );
        assert_eq!(c.statuses().len(), 10);
        assert!(
            c.get("c3")
                .unwrap()
                .reason
                .as_deref()
                .unwrap()
                .contains("c1")
        );
    }
}
