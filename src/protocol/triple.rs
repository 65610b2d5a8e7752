//! The commitment statement grammar of MCP-BINDING section 4: `Subject Predicate Object`,
//! the predicate optionally prefixed `not ` (in lower case, exactly). A statement that is not
//! a triple is opaque text: retained as it is, never in conflict with anything.
//!
//! One parser for every side: the reference server judges conflicts with it, and the
//! dialogue check uses it to tell a contradiction or an opaque statement, so the two never
//! disagree on what a triple is.

use std::fmt;

/// A statement read as a triple. Words are separated by whitespace; the Object is the rest
/// of the statement, its words joined by one space.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Triple {
    pub subject: String,
    pub negated: bool,
    pub predicate: String,
    pub object: String,
}

/// The one word that negates a predicate.
const NOT: &str = "not";

impl Triple {
    /// `S P O` or `S not P O`; `None` (opaque text) for fewer than three words, for a
    /// negation without both a predicate and an object (`S not P`), and for `not` written in
    /// another case (`S NOT P O`): the binding's words are exact, so that is not a triple.
    pub fn parse(statement: &str) -> Option<Triple> {
        let words: Vec<&str> = statement.split_whitespace().collect();
        if words.len() < 3 {
            return None;
        }
        let second = words[1];
        let negated = second == NOT;
        if !negated && second.eq_ignore_ascii_case(NOT) {
            return None;
        }
        let (p, o) = if negated { (2, 3) } else { (1, 2) };
        if words.len() <= o {
            return None;
        }
        Some(Triple {
            subject: words[0].to_owned(),
            negated,
            predicate: words[p].to_owned(),
            object: words[o..].join(" "),
        })
    }

    /// The same subject, predicate and object, whatever the polarity.
    pub fn same_fact(&self, other: &Triple) -> bool {
        self.subject == other.subject
            && self.predicate == other.predicate
            && self.object == other.object
    }

    /// `S P O` against `S not P O`: the two can never both hold.
    pub fn contradicts(&self, other: &Triple) -> bool {
        self.same_fact(other) && self.negated != other.negated
    }
}

impl fmt::Display for Triple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let not = if self.negated { "not " } else { "" };
        write!(
            f,
            "{} {not}{} {}",
            self.subject, self.predicate, self.object
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triples_and_opaque_text() {
        let t = Triple::parse("Kiosk#3 not locatedAt MLoc:Square.Stage").unwrap();
        assert!(t.negated);
        assert_eq!(t.predicate, "locatedAt");
        assert_eq!(t.to_string(), "Kiosk#3 not locatedAt MLoc:Square.Stage");
        let t = Triple::parse("Avatar#7  prefers\tquiet places").unwrap();
        assert_eq!((t.negated, t.object.as_str()), (false, "quiet places"));
        assert_eq!(Triple::parse("be nice"), None);
        // Only the lower-case `not` negates; another case makes the statement opaque.
        assert_eq!(
            Triple::parse("Kiosk#3 NOT locatedAt MLoc:Square.Stage"),
            None
        );
        assert_eq!(
            Triple::parse("Kiosk#3 Not locatedAt MLoc:Square.Stage"),
            None
        );
        // A negation needs a predicate and an object.
        assert_eq!(Triple::parse("Kiosk#3 not locatedAt"), None);
        let yes = Triple::parse("Kiosk#3 locatedAt MLoc:Square.Stage").unwrap();
        let no = Triple::parse("Kiosk#3 not locatedAt MLoc:Square.Stage").unwrap();
        assert!(yes.contradicts(&no) && no.contradicts(&yes));
        assert!(!yes.contradicts(&yes));
        let elsewhere = Triple::parse("Kiosk#3 not locatedAt MLoc:Square.Gate").unwrap();
        assert!(!yes.contradicts(&elsewhere));
    }
}
