//! Comparing a recorded reply with a replayed one: the fields that must differ between two
//! runs (identifiers and times) are set aside, the rest is compared leaf by leaf.

use crate::client::turn::{Reply, Turn};
use serde_json::Value;

/// The fields a replayed Response has anew by design (MCP-BINDING section 3): they are not
/// differences.
pub const IGNORED: [&str; 6] = [
    "/QueryID",
    "/QueryTime",
    "/RequestID",
    "/DialogID",
    "/DataXMData/DataID",
    "/DataXMData/DataExchangeMetadataID",
];

/// One difference: at a JSON pointer, what was recorded and what came now (`None` when absent).
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub pointer: String,
    pub recorded: Option<Value>,
    pub replayed: Option<Value>,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |v: &Option<Value>| match v {
            None => "(absent)".to_owned(),
            Some(v) => {
                let text = v.to_string();
                if text.chars().count() > 100 {
                    format!("{}…", text.chars().take(100).collect::<String>())
                } else {
                    text
                }
            }
        };
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(
            f,
            "{at}: {} -> {}",
            show(&self.recorded),
            show(&self.replayed)
        )
    }
}

/// A Response without the fields that must differ.
pub fn normalize(response: &Value) -> Value {
    let mut v = response.clone();
    for pointer in IGNORED {
        let (parent, key) = pointer.rsplit_once('/').expect("a pointer below the root");
        if let Some(Value::Object(map)) = v.pointer_mut(parent) {
            map.remove(key);
        }
    }
    v
}

/// The identifiers a replay has anew (the `IGNORED` fields of the Requests and the
/// Responses: DialogID, QueryID, RequestID …), recorded → replayed: inside a text (a tool
/// error's "this server holds no dialogue \"b39b…\"", a Reason naming a QueryID) the
/// recorded one counts as the same as the replay's own.
fn identifiers(recorded: &Turn, replayed: &Turn) -> Vec<(String, String)> {
    let messages = |t: &Turn| {
        let response = match &t.reply {
            Reply::Response(r) => Some(r.value()),
            _ => None,
        };
        (t.request.value(), response)
    };
    let (a, b) = (messages(recorded), messages(replayed));
    let mut pairs = Vec::new();
    for (x, y) in [(Some(&a.0), Some(&b.0)), (a.1.as_ref(), b.1.as_ref())] {
        let (Some(x), Some(y)) = (x, y) else { continue };
        for pointer in IGNORED {
            if let (Some(Value::String(old)), Some(Value::String(new))) =
                (x.pointer(pointer), y.pointer(pointer))
                && old != new
                && !old.is_empty()
                && !pairs.iter().any(|(o, _)| o == old)
            {
                pairs.push((old.clone(), new.clone()));
            }
        }
    }
    pairs
}

/// Whether two texts are the same once the recorded identifiers are read as the replay's.
fn same_text(recorded: &str, replayed: &str, identifiers: &[(String, String)]) -> bool {
    recorded == replayed
        || identifiers
            .iter()
            .fold(recorded.to_owned(), |text, (old, new)| {
                text.replace(old, new)
            })
            == replayed
}

/// What differs between a recorded turn's reply and a replayed one.
pub fn compare(recorded: &Turn, replayed: &Turn) -> Vec<Difference> {
    let ids = identifiers(recorded, replayed);
    let mut out = compare_replies(recorded, replayed);
    out.retain(|d| match (&d.recorded, &d.replayed) {
        (Some(Value::String(a)), Some(Value::String(b))) => !same_text(a, b, &ids),
        _ => true,
    });
    out
}

fn compare_replies(recorded: &Turn, replayed: &Turn) -> Vec<Difference> {
    let kind = |r: &Reply| match r {
        Reply::Response(_) => "a Response",
        Reply::ToolError(_) => "a tool error",
        Reply::Error(_) => "an error",
    };
    match (&recorded.reply, &replayed.reply) {
        (Reply::Response(a), Reply::Response(b)) => {
            let mut out = Vec::new();
            diff_values(
                &normalize(&a.value()),
                &normalize(&b.value()),
                String::new(),
                &mut out,
            );
            out
        }
        (Reply::ToolError(a), Reply::ToolError(b)) if a == b => Vec::new(),
        (Reply::ToolError(a), Reply::ToolError(b)) => vec![Difference {
            pointer: "(tool error)".into(),
            recorded: Some(Value::String(a.clone())),
            replayed: Some(Value::String(b.clone())),
        }],
        (Reply::Error(a), Reply::Error(b)) if a.kind == b.kind => Vec::new(),
        (a, b) => vec![Difference {
            pointer: "(reply)".into(),
            recorded: Some(Value::String(kind(a).into())),
            replayed: Some(Value::String(match b {
                Reply::Error(e) => format!("an error: {}", e.message),
                other => kind(other).into(),
            })),
        }],
    }
}

/// Leaf-by-leaf differences; objects by key (in the recorded order, then new keys), arrays by
/// alignment (`diff_arrays`).
pub fn diff_values(a: &Value, b: &Value, pointer: String, out: &mut Vec<Difference>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let p = format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"));
                match y.get(k) {
                    Some(vb) => diff_values(va, vb, p, out),
                    None => out.push(Difference {
                        pointer: p,
                        recorded: Some(va.clone()),
                        replayed: None,
                    }),
                }
            }
            for (k, vb) in y {
                if !x.contains_key(k) {
                    let p = format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"));
                    out.push(Difference {
                        pointer: p,
                        recorded: None,
                        replayed: Some(vb.clone()),
                    });
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => diff_arrays(x, y, &pointer, out),
        _ if a == b => {}
        _ => out.push(Difference {
            pointer,
            recorded: Some(a.clone()),
            replayed: Some(b.clone()),
        }),
    }
}

/// Arrays aligned (similar's Myers diff over each element's JSON): an element removed or
/// added is one difference, not a change of every element after it. Elements replaced in
/// place are compared member by member; pointers name the recorded index, or the replayed
/// one for what was added.
fn diff_arrays(x: &[Value], y: &[Value], pointer: &str, out: &mut Vec<Difference>) {
    let keys = |v: &[Value]| v.iter().map(Value::to_string).collect::<Vec<_>>();
    let (a, b) = (keys(x), keys(y));
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b) {
        let (old, new) = (op.old_range(), op.new_range());
        if matches!(op.tag(), similar::DiffTag::Equal) {
            continue;
        }
        for k in 0..old.len().max(new.len()) {
            match (
                x.get(old.start + k).filter(|_| k < old.len()),
                y.get(new.start + k).filter(|_| k < new.len()),
            ) {
                (Some(va), Some(vb)) => {
                    diff_values(va, vb, format!("{pointer}/{}", old.start + k), out)
                }
                (Some(va), None) => out.push(Difference {
                    pointer: format!("{pointer}/{}", old.start + k),
                    recorded: Some(va.clone()),
                    replayed: None,
                }),
                (None, Some(vb)) => out.push(Difference {
                    pointer: format!("{pointer}/{}", new.start + k),
                    recorded: None,
                    replayed: Some(vb.clone()),
                }),
                (None, None) => {}
            }
        }
    }
}

/// A line of a side-by-side view: the recorded line, the replayed line, and whether they
/// differ. Built from the pretty JSON of both normalized Responses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SideBySide {
    pub recorded: Option<String>,
    pub replayed: Option<String>,
    pub differs: bool,
}

pub fn side_by_side(recorded: &Value, replayed: &Value) -> Vec<SideBySide> {
    let a = serde_json::to_string_pretty(&normalize(recorded)).unwrap_or_default();
    let b = serde_json::to_string_pretty(&normalize(replayed)).unwrap_or_default();
    let diff = similar::TextDiff::from_lines(&a, &b);
    let mut rows = Vec::new();
    for op in diff.ops() {
        let (old, new) = (op.old_range(), op.new_range());
        let lines_a: Vec<&str> = a.lines().skip(old.start).take(old.len()).collect();
        let lines_b: Vec<&str> = b.lines().skip(new.start).take(new.len()).collect();
        let equal = matches!(op.tag(), similar::DiffTag::Equal);
        for i in 0..lines_a.len().max(lines_b.len()) {
            rows.push(SideBySide {
                recorded: lines_a.get(i).map(|s| s.to_string()),
                replayed: lines_b.get(i).map(|s| s.to_string()),
                differs: !equal,
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(dialog: &str, query: &str, tool_error: &str) -> Turn {
        serde_json::from_value(json!({
            "request": {"Kind": "feasibility", "DialogID": dialog, "QueryID": query},
            "toolError": tool_error,
            "sent": "2026-12-04T00:00:00Z",
            "latencyMs": 1.0
        }))
        .unwrap()
    }

    /// A tool error that names the dialogue's DialogID (or a QueryID) is the same when it
    /// names the replay's own; any other change in it is still a difference.
    #[test]
    fn recorded_identifiers_inside_texts_count_as_the_replays_own() {
        let recorded = turn(
            "b39b",
            "q1",
            "this server holds no dialogue \"b39b\" (query q1)",
        );
        let replayed = turn(
            "77aa",
            "q2",
            "this server holds no dialogue \"77aa\" (query q2)",
        );
        assert_eq!(compare(&recorded, &replayed), Vec::new());
        let other = turn(
            "77aa",
            "q2",
            "this server holds no dialogue \"0000\" (query q2)",
        );
        assert_eq!(compare(&recorded, &other).len(), 1);
    }

    #[test]
    fn identifiers_and_times_are_not_differences() {
        let a = json!({"QueryID": "1", "QueryTime": "t1", "DataXMData": {"DataID": "x", "Source": []}, "Outcome": "answered", "Steps": [1, 2]});
        let b = json!({"QueryID": "2", "QueryTime": "t2", "DataXMData": {"DataID": "y", "Source": []}, "Outcome": "answered", "Steps": [1, 3, 4]});
        let mut out = Vec::new();
        diff_values(&normalize(&a), &normalize(&b), String::new(), &mut out);
        let shown: Vec<String> = out.iter().map(|d| d.to_string()).collect();
        assert_eq!(shown, ["/Steps/1: 2 -> 3", "/Steps/2: (absent) -> 4"]);
    }

    #[test]
    fn an_element_removed_from_an_array_is_one_difference() {
        let a = json!({"Steps": [{"Step": 0, "PAStatus": "Ack"}, {"Step": 1, "PAStatus": "Clash"},
                                 {"Step": 2, "PAStatus": "Ack"}, {"Step": 3, "PAStatus": "Ack"}]});
        let b = json!({"Steps": [{"Step": 0, "PAStatus": "Ack"}, {"Step": 2, "PAStatus": "Ack"},
                                 {"Step": 3, "PAStatus": "Ack"}]});
        let mut out = Vec::new();
        diff_values(&a, &b, String::new(), &mut out);
        let shown: Vec<String> = out.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            shown,
            [r#"/Steps/1: {"Step":1,"PAStatus":"Clash"} -> (absent)"#]
        );
        // One added: one difference, at its replayed index.
        let mut out = Vec::new();
        diff_values(&b, &a, String::new(), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].pointer, "/Steps/1");
        assert_eq!(out[0].recorded, None);
    }

    #[test]
    fn side_by_side_marks_changed_lines() {
        let rows = side_by_side(&json!({"A": 1, "B": 2}), &json!({"A": 1, "B": 3}));
        assert!(rows.iter().any(|r| r.differs
            && r.recorded.as_deref() == Some("  \"B\": 2")
            && r.replayed.as_deref() == Some("  \"B\": 3")));
        assert!(
            rows.iter()
                .any(|r| !r.differs && r.recorded.as_deref() == Some("  \"A\": 1,"))
        );
    }
}
