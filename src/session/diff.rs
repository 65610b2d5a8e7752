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

/// What differs between a recorded turn's reply and a replayed one.
pub fn compare(recorded: &Turn, replayed: &Turn) -> Vec<Difference> {
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
/// position.
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
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let p = format!("{pointer}/{i}");
                match (x.get(i), y.get(i)) {
                    (Some(va), Some(vb)) => diff_values(va, vb, p, out),
                    (va, vb) => out.push(Difference {
                        pointer: p,
                        recorded: va.cloned(),
                        replayed: vb.cloned(),
                    }),
                }
            }
        }
        _ if a == b => {}
        _ => out.push(Difference {
            pointer,
            recorded: Some(a.clone()),
            replayed: Some(b.clone()),
        }),
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
