//! What changed between two states of one thing (a User State from one turn to the next),
//! member by member, for a person to read: what was added, removed and changed, each with
//! its path. An array whose elements have an identity is compared by identity, not by
//! position: an element removed before others is one removal, and an element whose
//! confidence changed is one change at its own name.

use serde_json::{Map, Value};

/// How a member changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Added,
    Removed,
    Changed,
}

impl Mark {
    /// The character that says it without colour, as in a diff.
    pub fn symbol(self) -> char {
        match self {
            Mark::Added => '+',
            Mark::Removed => '-',
            Mark::Changed => '~',
        }
    }
}

/// One change: where (`Hypotheses[wants lemonade].Confidence`), and the value before and
/// after (`None` where there was none).
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub mark: Mark,
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// The changes from `before` to `after`, in the order of `after`'s members (removed ones
/// where they stood in `before`, after the others).
pub fn changes(before: &Value, after: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    compare(before, after, String::new(), &mut out);
    out
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn compare(before: &Value, after: &Value, path: String, out: &mut Vec<Change>) {
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => objects(a, b, &path, out),
        (Value::Array(a), Value::Array(b)) => arrays(a, b, &path, out),
        _ if before == after => {}
        _ => out.push(Change {
            mark: Mark::Changed,
            path,
            before: Some(before.clone()),
            after: Some(after.clone()),
        }),
    }
}

fn objects(a: &Map<String, Value>, b: &Map<String, Value>, path: &str, out: &mut Vec<Change>) {
    for (key, after) in b {
        match a.get(key) {
            Some(before) => compare(before, after, join(path, key), out),
            None => out.push(Change {
                mark: Mark::Added,
                path: join(path, key),
                before: None,
                after: Some(after.clone()),
            }),
        }
    }
    for (key, before) in a {
        if !b.contains_key(key) {
            out.push(Change {
                mark: Mark::Removed,
                path: join(path, key),
                before: Some(before.clone()),
                after: None,
            });
        }
    }
}

/// The member that identifies the elements of both arrays: one every element has as a
/// string, no two elements of an array share; a member named `…ID` first, then the first
/// such member of the first element (a Statement, an Intent).
fn identity(a: &[Value], b: &[Value]) -> Option<String> {
    let first = a.iter().chain(b).next()?.as_object()?;
    let unique = |key: &str| {
        [a, b].iter().all(|list| {
            let mut seen = std::collections::HashSet::new();
            list.iter().all(|e| {
                e.get(key)
                    .and_then(Value::as_str)
                    .is_some_and(|id| seen.insert(id))
            })
        })
    };
    let keys = first.keys().map(String::as_str);
    let by_name = keys.clone().filter(|k| k.ends_with("ID"));
    by_name.chain(keys).find(|k| unique(k)).map(str::to_owned)
}

fn arrays(a: &[Value], b: &[Value], path: &str, out: &mut Vec<Change>) {
    if a == b {
        return;
    }
    if let Some(key) = identity(a, b) {
        let id = |e: &Value| e[key.as_str()].as_str().unwrap_or_default().to_owned();
        let named = |e: &Value| format!("{path}[{}]", id(e));
        for after in b {
            match a.iter().find(|before| id(before) == id(after)) {
                Some(before) => compare(before, after, named(after), out),
                None => out.push(Change {
                    mark: Mark::Added,
                    path: named(after),
                    before: None,
                    after: Some(after.clone()),
                }),
            }
        }
        for before in a {
            if !b.iter().any(|after| id(after) == id(before)) {
                out.push(Change {
                    mark: Mark::Removed,
                    path: named(before),
                    before: Some(before.clone()),
                    after: None,
                });
            }
        }
        return;
    }
    if a.iter().chain(b).all(|e| !e.is_object() && !e.is_array()) {
        // Plain values (Goals): each is its own identity; one removed is one removal.
        let mut left: Vec<&Value> = a.iter().collect();
        let mut added = Vec::new();
        for after in b {
            match left.iter().position(|before| *before == after) {
                Some(i) => {
                    left.remove(i);
                }
                None => added.push(after),
            }
        }
        out.extend(added.into_iter().map(|v| Change {
            mark: Mark::Added,
            path: path.to_owned(),
            before: None,
            after: Some(v.clone()),
        }));
        out.extend(left.into_iter().map(|v| Change {
            mark: Mark::Removed,
            path: path.to_owned(),
            before: Some(v.clone()),
            after: None,
        }));
        return;
    }
    // Elements with no identity: by position.
    for i in 0..a.len().max(b.len()) {
        let at = format!("{path}[{i}]");
        match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) => compare(x, y, at, out),
            (Some(x), None) => out.push(Change {
                mark: Mark::Removed,
                path: at,
                before: Some(x.clone()),
                after: None,
            }),
            (None, Some(y)) => out.push(Change {
                mark: Mark::Added,
                path: at,
                before: None,
                after: Some(y.clone()),
            }),
            (None, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn marks(changes: &[Change]) -> Vec<String> {
        changes
            .iter()
            .map(|c| format!("{} {}", c.mark.symbol(), c.path))
            .collect()
    }

    #[test]
    fn members_added_removed_and_changed() {
        let before = json!({"Emotion": "calm", "Cycle": 1, "Focus": {"TargetID": "A"}});
        let after = json!({"Emotion": "annoyed", "Cycle": 1, "Focus": {"TargetID": "A"},
            "Mood": "x"});
        assert_eq!(marks(&changes(&before, &after)), ["~ Emotion", "+ Mood"]);
        assert_eq!(marks(&changes(&after, &before)), ["~ Emotion", "- Mood"]);
        assert!(changes(&before, &before).is_empty());
    }

    #[test]
    fn arrays_of_elements_with_an_identity_are_compared_by_it() {
        let before = json!({"Hypotheses": [
            {"Statement": "a", "Confidence": 0.5, "Status": "open"},
            {"Statement": "b", "Confidence": 0.5, "Status": "open"},
            {"Statement": "c", "Confidence": 0.5, "Status": "open"}]});
        // "a" removed, "c" changed, "d" added: not three changes by position.
        let after = json!({"Hypotheses": [
            {"Statement": "b", "Confidence": 0.5, "Status": "open"},
            {"Statement": "c", "Confidence": 0.8, "Status": "supported"},
            {"Statement": "d", "Confidence": 0.5, "Status": "open"}]});
        assert_eq!(
            marks(&changes(&before, &after)),
            [
                "~ Hypotheses[c].Confidence",
                "~ Hypotheses[c].Status",
                "+ Hypotheses[d]",
                "- Hypotheses[a]"
            ]
        );
        // A member named …ID is the identity before any other.
        let before = json!([{"Label": "x", "ItemID": "1"}, {"Label": "y", "ItemID": "2"}]);
        let after = json!([{"Label": "y", "ItemID": "2"}, {"Label": "z", "ItemID": "1"}]);
        assert_eq!(marks(&changes(&before, &after)), ["~ [1].Label"]);
    }

    #[test]
    fn plain_values_are_their_own_identity() {
        let before = json!({"Goals": ["rest", "eat", "drink"]});
        let after = json!({"Goals": ["eat", "drink", "talk"]});
        let found = changes(&before, &after);
        assert_eq!(marks(&found), ["+ Goals", "- Goals"]);
        assert_eq!(found[0].after, Some(json!("talk")));
        assert_eq!(found[1].before, Some(json!("rest")));
    }
}
