//! Suggestions for misspellings ("did you mean …?"), shared by the grammar and the checker.

/// The candidate closest to `word` (ignoring case) within an edit distance of 2, or of a third
/// of the word's length for long words.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_lowercase();
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (edit_distance(&c.to_lowercase(), &word), c))
        .filter(|(d, _)| (1..=limit).contains(d))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(current + 1);
            previous = current;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_words_only() {
        assert_eq!(closest("MM-Mve", ["MM-Move", "MM-Add"]), Some("MM-Move"));
        assert_eq!(
            closest("groundng", ["semantic_grounding", "affordances"]),
            None
        );
        assert_eq!(
            closest("afordances", ["semantic_grounding", "affordances"]),
            Some("affordances")
        );
        assert_eq!(closest("xyz", ["affordances"]), None);
        assert_eq!(
            closest("Ack", ["Ack"]),
            None,
            "an exact match is not a suggestion"
        );
    }
}
