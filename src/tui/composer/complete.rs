//! Completions at the cursor of a composer field: from the server's resources, the
//! dialogue's CommitmentIDs, and the Process Action grammar (what it would accept next).

use super::Context;
use super::fields::Completes;
use crate::protocol::process_action::{self, ACTIONS, Expected, Preposition};
use crate::protocol::resources::{Vocabulary, Words};

/// The completions offered at the cursor of the focused field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub items: Vec<String>,
    /// The item Enter or → accepts (↑ ↓ move it).
    pub selected: usize,
    /// How many characters before the cursor the accepted item replaces.
    pub replaces: usize,
    /// The user asked for the list (Ctrl-Space) or moved in it (↑ ↓): then Enter accepts
    /// it. A list that only appeared while typing leaves Enter its newline in a multi-line
    /// field (a word is never swallowed by a guess).
    pub chosen: bool,
}

impl Completion {
    pub fn step(&mut self, down: bool) {
        self.chosen = true;
        let n = self.items.len();
        if n > 0 {
            self.selected = if down {
                (self.selected + 1) % n
            } else {
                (self.selected + n - 1) % n
            };
        }
    }
}

/// The most items a list offers.
pub const MAX_ITEMS: usize = 8;

/// The completions for the word before `column` of `line`; `always` offers them before a
/// letter is typed too.
pub fn at(
    completes: Completes,
    line: &str,
    column: usize,
    ctx: &Context,
    always: bool,
) -> Option<Completion> {
    let before: String = line.chars().take(column).collect();
    let word_start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '='))
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    let word = &before[word_start..];
    if word.is_empty() && !always {
        return None;
    }
    // In free text (commitments, conflicts' evidence) an ordinary word is not offered
    // completions unasked: only what looks like an ID (Fountain#1, MLoc:Square, c3).
    if !always
        && matches!(
            completes,
            Completes::CommitmentStatements | Completes::Words(Words::Cues)
        )
        && !id_shaped(word)
    {
        return None;
    }
    let v = ctx.vocabulary;
    let candidates: Vec<String> = match completes {
        Completes::Nothing => return None,
        Completes::Words(words) => v.list(words).to_vec(),
        Completes::CommitmentIds => ctx.commitments.to_vec(),
        Completes::TermClasses => {
            if before.contains(" : ") {
                v.list(Words::Classes).to_vec()
            } else {
                return None;
            }
        }
        Completes::CommitmentStatements => {
            let mut all = v.list(Words::Entities).to_vec();
            all.extend(v.list(Words::MLocations).iter().cloned());
            all.extend(
                ["locatedAt", "ownedBy", "isA", "not"]
                    .iter()
                    .map(|s| s.to_string()),
            );
            all.extend(v.list(Words::Classes).iter().cloned());
            all
        }
        Completes::Statements => statement_candidates(&before[..word_start], v),
    };
    let lower = word.to_lowercase();
    let candidates: Vec<String> = candidates
        .into_iter()
        .filter(|c| !c.eq_ignore_ascii_case(word))
        .collect();
    // Those that begin with the word first, then those with a part that does (`Ana` finds
    // `User#Ana`, `square` finds `Space:Square`): an ID's prefix is rarely what one
    // remembers of it.
    let mut items: Vec<String> = candidates
        .iter()
        .filter(|c| c.to_lowercase().starts_with(&lower))
        .cloned()
        .collect();
    items.extend(
        candidates
            .iter()
            .filter(|c| {
                let c = c.to_lowercase();
                !c.starts_with(&lower) && c.split(ID_PARTS).skip(1).any(|p| p.starts_with(&lower))
            })
            .cloned(),
    );
    items.dedup();
    items.truncate(MAX_ITEMS);
    (!items.is_empty()).then(|| Completion {
        items,
        selected: 0,
        replaces: word.chars().count(),
        chosen: always,
    })
}

/// What separates the parts of an ID (`User#Ana`, `Space:Square`, `MM-Move`).
const ID_PARTS: [char; 5] = ['#', ':', '.', '_', '-'];

/// Whether a word looks like an ID rather than a word of prose: a capital letter, a digit,
/// or one of `# : . _ -` in it.
pub fn id_shaped(word: &str) -> bool {
    word.chars()
        .any(|c| c.is_uppercase() || c.is_ascii_digit() || ID_PARTS.contains(&c))
}

/// What may come next in a Process Action statement, given the text before the word being
/// typed: the grammar's error at the end of that text says what it expected.
fn statement_candidates(prefix: &str, v: &Vocabulary) -> Vec<String> {
    let prefix = prefix.trim_end();
    if prefix.is_empty() {
        let mut actions: Vec<String> = v.list(Words::Actions).to_vec();
        actions.extend(
            ACTIONS
                .iter()
                .map(|a| a.to_string())
                .filter(|a| !v.list(Words::Actions).contains(a)),
        );
        return actions;
    }
    let preps = || -> Vec<String> {
        let mut p: Vec<String> = Preposition::ALL
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect();
        p.push("If".into());
        p
    };
    let targets = |after: &str| -> Vec<String> {
        let locations_first = matches!(after, "At" | "From" | "To");
        let (a, b) = if locations_first {
            (v.list(Words::MLocations), v.list(Words::Entities))
        } else {
            (v.list(Words::Entities), v.list(Words::MLocations))
        };
        a.iter().chain(b.iter()).cloned().collect()
    };
    match process_action::parse(prefix) {
        Ok(_) => preps(),
        Err(e) if e.position >= prefix.chars().count() => match e.expected {
            Expected::Action => ACTIONS.iter().map(|a| a.to_string()).collect(),
            Expected::Preposition => preps(),
            Expected::Target => targets(prefix.split_whitespace().last().unwrap_or_default()),
            _ => Vec::new(),
        },
        Err(_) => Vec::new(),
    }
}
