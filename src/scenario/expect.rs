//! What a step's answer must say, and whether it does: each expectation judged against the
//! turn, a failure naming what was expected, what came, and where (a JSON pointer).

use crate::client::turn::{Reply, Turn};
use regex::Regex;
use serde::Serialize;
use serde_json::Value;
use std::fmt;

#[derive(Clone, Debug)]
pub enum Expectation {
    /// No finding at any level (the default).
    Conforms,
    /// At least one finding.
    NotConforming,
    /// These findings (by check name) and no other: a negative test of a server.
    Findings(Vec<String>),
    /// The server rejects the Request with a tool error (its text matching, if given).
    ToolError(Option<Matcher>),
    Outcome(Vec<String>),
    /// A value of the Response.
    Value {
        pointer: String,
        matcher: Matcher,
    },
    /// The PA Status of each feasibility step, in order.
    Steps(Vec<String>),
    Overall(String),
    Commitment {
        id: String,
        status: String,
    },
    /// The turn took at most this long.
    Latency(f64),
}

/// How a value is judged.
#[derive(Clone, Debug)]
pub enum Matcher {
    Equals(Value),
    OneOf(Vec<Value>),
    Matches(Regex),
    /// A number from min to max (either may be open).
    Between(Option<f64>, Option<f64>),
    Present(bool),
}

/// The keys that make a mapping a matcher rather than a value to compare with.
const MATCHER_KEYS: [&str; 7] = [
    "equals", "one_of", "matches", "between", "min", "max", "present",
];

impl Matcher {
    /// A matcher as a scenario writes it: a plain value is compared as it is; a mapping of
    /// one of `equals`, `one_of`, `matches`, `between` (or `min`/`max`), `present` says how.
    pub fn read(value: &Value) -> Result<Matcher, String> {
        let Value::Object(map) = value else {
            return Ok(Matcher::Equals(value.clone()));
        };
        if map.is_empty() || !map.keys().all(|k| MATCHER_KEYS.contains(&k.as_str())) {
            return Ok(Matcher::Equals(value.clone()));
        }
        let number = |key: &str| -> Result<Option<f64>, String> {
            match map.get(key) {
                None => Ok(None),
                Some(v) => v
                    .as_f64()
                    .map(Some)
                    .ok_or_else(|| format!("{key}: a number, not {v}")),
            }
        };
        if map.len() > 1 && !map.keys().all(|k| k == "min" || k == "max") {
            return Err(format!(
                "one of {} at a time (min and max go together)",
                MATCHER_KEYS.join(", ")
            ));
        }
        if let Some(v) = map.get("equals") {
            return Ok(Matcher::Equals(v.clone()));
        }
        if let Some(v) = map.get("one_of") {
            return match v {
                Value::Array(items) if !items.is_empty() => Ok(Matcher::OneOf(items.clone())),
                _ => Err("one_of: a list of values".into()),
            };
        }
        if let Some(v) = map.get("matches") {
            let pattern = v
                .as_str()
                .ok_or("matches: a regular expression, as a string")?;
            return Regex::new(pattern)
                .map(Matcher::Matches)
                .map_err(|e| format!("matches: not a regular expression: {e}"));
        }
        if let Some(v) = map.get("between") {
            let pair = v
                .as_array()
                .filter(|a| a.len() == 2)
                .and_then(|a| Some((a[0].as_f64()?, a[1].as_f64()?)))
                .ok_or("between: two numbers, [min, max]")?;
            return Ok(Matcher::Between(Some(pair.0), Some(pair.1)));
        }
        if let Some(v) = map.get("present") {
            return v
                .as_bool()
                .map(Matcher::Present)
                .ok_or_else(|| "present: true or false".into());
        }
        Ok(Matcher::Between(number("min")?, number("max")?))
    }

    /// Whether `actual` (absent: `None`) is what is wanted.
    pub fn holds(&self, actual: Option<&Value>) -> bool {
        match (self, actual) {
            (Matcher::Present(want), a) => *want == a.is_some(),
            (_, None) => false,
            (Matcher::Equals(v), Some(a)) => same(v, a),
            (Matcher::OneOf(vs), Some(a)) => vs.iter().any(|v| same(v, a)),
            (Matcher::Matches(re), Some(a)) => match a {
                Value::String(s) => re.is_match(s),
                other => re.is_match(&other.to_string()),
            },
            (Matcher::Between(min, max), Some(a)) => a
                .as_f64()
                .is_some_and(|n| min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m)),
        }
    }
}

/// Equal as JSON values, numbers compared as numbers (2 and 2.0 are the same).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Matcher::Equals(v) => write!(f, "{}", short(v)),
            Matcher::OneOf(vs) => write!(
                f,
                "one of {}",
                vs.iter().map(short).collect::<Vec<_>>().join(", ")
            ),
            Matcher::Matches(re) => write!(f, "matching /{}/", re.as_str()),
            Matcher::Between(Some(a), Some(b)) => write!(f, "from {a} to {b}"),
            Matcher::Between(Some(a), None) => write!(f, "at least {a}"),
            Matcher::Between(None, Some(b)) => write!(f, "at most {b}"),
            Matcher::Between(None, None) => f.write_str("a number"),
            Matcher::Present(true) => f.write_str("present"),
            Matcher::Present(false) => f.write_str("absent"),
        }
    }
}

/// A value as a report shows it: its JSON, cut after 200 characters.
pub fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 200 {
        let cut: String = text.chars().take(200).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// An expectation that did not hold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Failure {
    /// What was expected, in words.
    pub expectation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    pub expected: String,
    pub actual: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pointer {
            Some(p) => write!(f, "{p}: expected {}, got {}", self.expected, self.actual),
            None => write!(
                f,
                "{}: expected {}, got {}",
                self.expectation, self.expected, self.actual
            ),
        }
    }
}

impl Expectation {
    /// What it asks, in words.
    pub fn describe(&self) -> String {
        match self {
            Expectation::Conforms => "conforms".into(),
            Expectation::NotConforming => "does not conform".into(),
            Expectation::Findings(names) => format!("findings {}", names.join(", ")),
            Expectation::ToolError(None) => "a tool error".into(),
            Expectation::ToolError(Some(m)) => format!("a tool error {m}"),
            Expectation::Outcome(o) => format!("Outcome {}", o.join(" or ")),
            Expectation::Value { pointer, matcher } => format!("{pointer} {matcher}"),
            Expectation::Steps(s) => format!("PA Statuses {}", s.join(", ")),
            Expectation::Overall(o) => format!("Overall {o}"),
            Expectation::Commitment { id, status } => format!("commitment {id} {status}"),
            Expectation::Latency(ms) => format!("within {ms} ms"),
        }
    }

    /// Judges the turn; `None` when the expectation holds.
    pub fn judge(&self, turn: &Turn, response: Option<&Value>) -> Option<Failure> {
        let fail = |pointer: Option<&str>, expected: String, actual: String| Failure {
            expectation: self.describe(),
            pointer: pointer.map(str::to_owned),
            expected,
            actual,
        };
        let what_came = || match &turn.reply {
            Reply::Response(_) => "a Response".to_owned(),
            Reply::ToolError(t) => {
                format!("a tool error: {}", t.lines().next().unwrap_or_default())
            }
            Reply::Error(e) => format!("no reply: {}", e.message),
        };
        let findings: Vec<String> = turn
            .findings
            .iter()
            .map(|f| f.finding.check.as_str().to_owned())
            .collect();
        match self {
            Expectation::Conforms => (!turn.findings.is_empty()).then(|| {
                fail(
                    turn.findings.first().map(|f| f.finding.pointer.as_str()),
                    "no finding".into(),
                    turn.findings
                        .iter()
                        .map(|f| f.finding.to_string())
                        .collect::<Vec<_>>()
                        .join("; "),
                )
            }),
            Expectation::NotConforming => turn
                .findings
                .is_empty()
                .then(|| fail(None, "a finding".into(), "none".into())),
            Expectation::Findings(names) => findings_differ(names, &findings, &fail),
            Expectation::ToolError(matcher) => match &turn.reply {
                Reply::ToolError(text) => matcher.as_ref().and_then(|m| {
                    (!m.holds(Some(&Value::String(text.clone()))))
                        .then(|| fail(None, format!("a tool error {m}"), format!("{text:?}")))
                }),
                _ => Some(fail(None, "a tool error".into(), what_came())),
            },
            Expectation::Latency(max) => (turn.latency_ms > *max).then(|| {
                fail(
                    None,
                    format!("at most {max} ms"),
                    format!("{:.1} ms", turn.latency_ms),
                )
            }),
            // The rest read the Response.
            _ => {
                let Some(response) = response else {
                    return Some(fail(None, "a Response".into(), what_came()));
                };
                self.judge_response(response, &fail)
            }
        }
    }

    /// The expectations that read the Response, judged against it.
    fn judge_response(
        &self,
        r: &Value,
        fail: &dyn Fn(Option<&str>, String, String) -> Failure,
    ) -> Option<Failure> {
        match self {
            Expectation::Outcome(wanted) => {
                let got = r.get("Outcome").and_then(Value::as_str);
                (!got.is_some_and(|g| wanted.iter().any(|w| w == g))).then(|| {
                    fail(
                        Some("/Outcome"),
                        wanted.join(" or "),
                        shown(r.get("Outcome")),
                    )
                })
            }
            Expectation::Value { pointer, matcher } => value_differs(r, pointer, matcher, fail),
            Expectation::Steps(wanted) => steps_differ(r, wanted, fail),
            Expectation::Overall(o) => {
                let got = r.pointer("/Feasibility/Overall");
                (got.and_then(Value::as_str) != Some(o.as_str()))
                    .then(|| fail(Some("/Feasibility/Overall"), o.clone(), shown(got)))
            }
            Expectation::Commitment { id, status } => commitment_differs(r, id, status, fail),
            _ => None,
        }
    }
}

/// A value of the Response, or `(absent)`, shortened for a message.
fn shown(v: Option<&Value>) -> String {
    v.map(short).unwrap_or_else(|| "(absent)".into())
}

/// The findings named against those the turn got: any missing or extra fails.
fn findings_differ(
    names: &[String],
    findings: &[String],
    fail: &dyn Fn(Option<&str>, String, String) -> Failure,
) -> Option<Failure> {
    let mut missing: Vec<&str> = names
        .iter()
        .filter(|n| !findings.contains(n))
        .map(String::as_str)
        .collect();
    missing.dedup();
    let extra: Vec<&str> = findings
        .iter()
        .filter(|f| !names.contains(f))
        .map(String::as_str)
        .collect();
    (!missing.is_empty() || !extra.is_empty()).then(|| {
        fail(
            None,
            names.join(", "),
            if findings.is_empty() {
                "no finding".into()
            } else {
                findings.join(", ")
            },
        )
    })
}

/// The value at `pointer` against its matcher; a whole object or list compared names the
/// first place where it differs.
fn value_differs(
    r: &Value,
    pointer: &str,
    matcher: &Matcher,
    fail: &dyn Fn(Option<&str>, String, String) -> Failure,
) -> Option<Failure> {
    let got = r.pointer(pointer);
    if matcher.holds(got) {
        return None;
    }
    // A whole object or list compared: name the first place where it differs.
    if let (Matcher::Equals(want @ (Value::Object(_) | Value::Array(_))), Some(got)) =
        (matcher, got)
    {
        let mut differences = Vec::new();
        crate::session::diff::diff_values(want, got, pointer.to_owned(), &mut differences);
        if let Some(d) = differences.first() {
            let more = match differences.len() - 1 {
                0 => String::new(),
                n => format!(
                    " (and {n} more difference{})",
                    if n == 1 { "" } else { "s" }
                ),
            };
            return Some(fail(
                Some(&d.pointer),
                shown(d.recorded.as_ref()),
                format!("{}{more}", shown(d.replayed.as_ref())),
            ));
        }
    }
    Some(fail(Some(pointer), matcher.to_string(), shown(got)))
}

/// The PA Status of each step against those wanted; the pointer names the first that
/// differs.
fn steps_differ(
    r: &Value,
    wanted: &[String],
    fail: &dyn Fn(Option<&str>, String, String) -> Failure,
) -> Option<Failure> {
    let got: Vec<String> = r
        .pointer("/Feasibility/Steps")
        .and_then(Value::as_array)
        .map(|steps| {
            steps
                .iter()
                .map(|s| {
                    s.get("PAStatus")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned()
                })
                .collect()
        })
        .unwrap_or_default();
    (got != *wanted).then(|| {
        // Name the first step that differs, for the pointer.
        let at = wanted
            .iter()
            .zip(&got)
            .position(|(a, b)| a != b)
            .unwrap_or(wanted.len().min(got.len()));
        fail(
            Some(&format!("/Feasibility/Steps/{at}/PAStatus")),
            format!("[{}]", wanted.join(", ")),
            format!("[{}]", got.join(", ")),
        )
    })
}

/// A commitment's status in CommitmentStatus against the one wanted (not listed fails).
fn commitment_differs(
    r: &Value,
    id: &str,
    status: &str,
    fail: &dyn Fn(Option<&str>, String, String) -> Failure,
) -> Option<Failure> {
    let list = r.get("CommitmentStatus").and_then(Value::as_array);
    let (at, got) = list
        .and_then(|l| {
            l.iter()
                .enumerate()
                .find(|(_, c)| c.get("CommitmentID").and_then(Value::as_str) == Some(id))
        })
        .map(|(i, c)| (format!("/CommitmentStatus/{i}/Status"), c.get("Status")))
        .unwrap_or_else(|| ("/CommitmentStatus".into(), None));
    (got.and_then(Value::as_str) != Some(status)).then(|| {
        fail(
            Some(&at),
            format!("{id} {status}"),
            match got {
                Some(g) => format!("{id} {}", short(g)),
                None => format!("{id} not listed"),
            },
        )
    })
}

/// Every expectation of a step judged against its turn. Without a Response, the
/// expectations that read one fail together, once.
pub fn judge(expectations: &[Expectation], turn: &Turn, response: Option<&Value>) -> Vec<Failure> {
    let mut out: Vec<Failure> = Vec::new();
    // A step that got no reply (the server died, the turn timed out, the connection broke)
    // fails, whatever it expects: an answer nobody gave cannot pass.
    if let Reply::Error(e) = &turn.reply {
        out.push(Failure {
            expectation: "an answer".into(),
            pointer: None,
            expected: "a Response or a tool error".into(),
            actual: format!("no reply: {}", e.message),
        });
        return out;
    }
    let mut missing_response = false;
    for e in expectations {
        let Some(f) = e.judge(turn, response) else {
            continue;
        };
        let needs_response = f.expected == "a Response";
        if needs_response && missing_response {
            continue;
        }
        missing_response |= needs_response;
        out.push(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matchers_read_as_written() {
        assert!(matches!(
            Matcher::read(&json!("x")).unwrap(),
            Matcher::Equals(_)
        ));
        assert!(matches!(
            Matcher::read(&json!({"Class": "Bench"})).unwrap(),
            Matcher::Equals(_)
        ));
        let m = Matcher::read(&json!({"between": [0.2, 0.8]})).unwrap();
        assert!(m.holds(Some(&json!(0.5))) && !m.holds(Some(&json!(0.9))));
        let m = Matcher::read(&json!({"min": 1})).unwrap();
        assert!(m.holds(Some(&json!(2))) && !m.holds(None));
        let m = Matcher::read(&json!({"matches": "^Kio"})).unwrap();
        assert!(m.holds(Some(&json!("Kiosk#3"))));
        assert!(Matcher::read(&json!({"matches": "("})).is_err());
        assert!(Matcher::read(&json!({"equals": 1, "present": true})).is_err());
        assert!(
            Matcher::read(&json!({"present": false}))
                .unwrap()
                .holds(None)
        );
        assert!(Matcher::read(&json!(2)).unwrap().holds(Some(&json!(2.0))));
    }
}
