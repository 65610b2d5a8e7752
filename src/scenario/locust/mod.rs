//! Scenarios on Locust's distributed workers (`bkn-explorer load SCENARIO... --export locust`):
//! a ready Locust project in which each simulated user plays a scenario's dialogue as `test`
//! does, and `load --report DIR` (report.rs), which merges Locust's statistics with the
//! verdicts on the recordings the workers wrote.
//!
//! One source of truth: the scenarios are exported as data (`scenarios.json`), read and
//! checked here by the same loader as `test`'s, each expectation already described in this
//! program's words; the workers run a small generic interpreter (`bkn_runner.py`, the MCP
//! client and the recording) and judge (`bkn_judge.py`, expect.rs's rules for the data), both
//! embedded from this folder. `tests/locust.rs` runs both judges on the same cases.

pub mod report;

use crate::client::defaults::Overrides;
use crate::client::generation::ProtocolChoice;
use crate::protocol::conformance::{Check, Finding};
use crate::protocol::message::CommonDefaults;
use crate::protocol::{Interface, Requirement, resources};
use crate::scenario::expect::{Expectation, Matcher};
use crate::scenario::{Scenario, Step};
use crate::session::journal::{Conformance, JOURNAL_FORMAT, StepRef};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The Locust the exported project is made for (its `requirements.txt`).
pub const LOCUST: &str = "locust==2.47.0";

/// The format of `scenarios.json`.
pub const FORMAT: &str = "bkn-explorer-locust/1";

const RUNNER: &str = include_str!("bkn_runner.py");
const JUDGE: &str = include_str!("bkn_judge.py");

/// What the export needs besides the scenarios.
#[derive(Clone, Debug)]
pub struct Export {
    /// The MCP endpoint: Locust's `--host` by default.
    pub url: String,
    /// `--header`s for the server ("Name: value"); a token is never written (BKN_TOKEN).
    pub headers: Vec<(String, String)>,
    pub protocol: ProtocolChoice,
    pub fresh: bool,
    /// Seconds a worker waits to connect and for each answer.
    pub timeout_s: f64,
    /// The command line's --m-instance … (over each scenario's own defaults).
    pub overrides: Overrides,
}

/// A file of the project: its name in the folder and its text.
pub struct File {
    pub name: &'static str,
    pub text: String,
}

/// The project's files for `scenarios`, or every reason one cannot be exported (nothing is
/// written then).
pub fn project(scenarios: &[Scenario], export: &Export) -> Result<Vec<File>, Vec<String>> {
    let mut errors = Vec::new();
    for s in scenarios {
        for (i, step) in s.steps.iter().enumerate() {
            for e in &step.expect {
                if let Some(why) = matcher_of(e).and_then(python_cannot_read) {
                    errors.push(format!(
                        "{}: step {} ({}): {why}",
                        s.path.display(),
                        i + 1,
                        step.name
                    ));
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let classes = class_names(scenarios);
    let data = data(scenarios, &classes, export);
    Ok(vec![
        File {
            name: "locustfile.py",
            text: locustfile(scenarios, &classes, export),
        },
        File {
            name: "bkn_runner.py",
            text: RUNNER.to_owned(),
        },
        File {
            name: "bkn_judge.py",
            text: JUDGE.to_owned(),
        },
        File {
            name: "scenarios.json",
            text: serde_json::to_string_pretty(&data).unwrap_or_default() + "\n",
        },
        File {
            name: "requirements.txt",
            text: format!(
                "# The Locust this project was made for by {} (bkn-explorer load --export locust).\n{LOCUST}\n",
                made_by()
            ),
        },
    ])
}

/// Writes the project into `dir` (made if missing). Files of an earlier export are replaced
/// only with `force`; nothing is written when one would be refused.
pub fn write(dir: &Path, files: &[File], force: bool) -> Result<Vec<PathBuf>, String> {
    if !force {
        let there: Vec<String> = files
            .iter()
            .filter(|f| dir.join(f.name).exists())
            .map(|f| f.name.to_owned())
            .collect();
        if !there.is_empty() {
            return Err(format!(
                "{} already holds {}: nothing was written (--force replaces them)",
                dir.display(),
                there.join(", ")
            ));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for f in files {
        let path = dir.join(f.name);
        crate::atomic::write(&path, f.text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// "bkn-explorer 0.1.0": what the export says it was made by.
pub fn made_by() -> String {
    format!("bkn-explorer {}", env!("CARGO_PKG_VERSION"))
}

fn matcher_of(e: &Expectation) -> Option<&Matcher> {
    match e {
        Expectation::ToolError(Some(m)) | Expectation::Value { matcher: m, .. } => Some(m),
        _ => None,
    }
}

/// Why Python's `re` would read a regular expression of this program's (the `regex` crate)
/// otherwise, if it would: the constructs the two read differently, so that a worker never
/// judges by another rule than `test`.
pub fn python_cannot_read(m: &Matcher) -> Option<String> {
    let Matcher::Matches(re) = m else {
        return None;
    };
    let pattern = re.as_str();
    let says = |what: &str| {
        Some(format!(
            "the regular expression /{pattern}/ uses {what}, which Python's re (the workers') reads otherwise; write it without"
        ))
    };
    for (construct, what) in [
        ("\\p{", "a Unicode class (\\p{…})"),
        ("\\P{", "a Unicode class (\\P{…})"),
        ("\\p", "a Unicode class (\\pL)"),
        ("\\P", "a Unicode class (\\PL)"),
        ("\\z", "\\z"),
        ("[[:", "a POSIX class ([[:alpha:]])"),
        ("&&", "a class intersection (&&)"),
        ("~~", "a class difference (~~)"),
        ("\\x{", "\\x{…}"),
        ("\\u{", "\\u{…}"),
        ("\\U{", "\\U{…}"),
    ] {
        if pattern.contains(construct) {
            return says(what);
        }
    }
    // Named groups: Rust also reads (?<name>…); Python only (?P<name>…).
    if let Some(at) = pattern.find("(?<")
        && !matches!(pattern.as_bytes().get(at + 3), Some(b'=' | b'!'))
    {
        return says("a named group written (?<name>…) (write (?P<name>…))");
    }
    // Inline flags: Rust takes them anywhere, Python only at the start (scoped (?i:…) is
    // read alike by both).
    let mut rest = pattern;
    let mut offset = 0;
    while let Some(at) = rest.find("(?") {
        let after = &rest[at + 2..];
        let flags: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphabetic() || *c == '-')
            .collect();
        let closes = after[flags.len()..].starts_with(')');
        if !flags.is_empty() && closes && (offset + at != 0 || flags.contains('-')) {
            return says("inline flags after the start ((?i) in the middle)");
        }
        if !flags.is_empty() && closes && flags.chars().any(|c| !"ims".contains(c)) {
            return says("a flag other than i, m and s");
        }
        offset += at + 2;
        rest = after;
    }
    None
}

/// A Python class name for each scenario, from its file's name (`dac-kiosk.yaml`: DacKiosk),
/// made unique.
fn class_names(scenarios: &[Scenario]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in scenarios {
        let stem = s
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| s.name.clone());
        let mut name: String = stem
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect();
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            name = format!("Scenario{name}");
        }
        let base = name.clone();
        let mut n = 2;
        while out.contains(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        out.push(name);
    }
    out
}

fn locustfile(scenarios: &[Scenario], classes: &[String], export: &Export) -> String {
    let mut text = format!(
        r#""""Load on {url} from bkn-explorer scenarios, for Locust.

Made by {made_by} (`bkn-explorer load {files} --export locust`); the scenarios are in
scenarios.json, played by bkn_runner.py. Run it in this folder, on one machine:

    pip install -r requirements.txt
    locust --headless --processes 2 -u 8 -r 8 --iterations 100 --csv stats
    bkn-explorer load --report .

Locust's --host is the MCP endpoint (default {url}); each user goes through its scenario
again and again (--iterations N: N times), in one dialogue (--fresh: a new one each time),
over --mcp-protocol auto|2026-07-28|2025-11-25 (default {protocol}). Every exchange is
recorded in recordings/ beside this file (or $BKN_RECORDINGS), one file per worker process:
`bkn-explorer validate` and `bkn-explorer load --report` judge them.
"""

from bkn_runner import ScenarioUser
"#,
        url = export.url,
        made_by = made_by(),
        files = scenarios
            .iter()
            .map(|s| s.path.display().to_string())
            .collect::<Vec<_>>()
            .join(" "),
        protocol = export.protocol,
    );
    for (s, class) in scenarios.iter().zip(classes) {
        text.push_str(&format!(
            "\n\nclass {class}(ScenarioUser):\n    \"\"\"{} ({}, {} steps).\"\"\"\n\n    scenario = {}\n",
            s.name.replace('\\', "\\\\").replace('"', "\\\""),
            s.path.display(),
            s.steps.len(),
            serde_json::to_string(&s.name).unwrap_or_default(),
        ));
    }
    text
}

fn data(scenarios: &[Scenario], classes: &[String], export: &Export) -> Value {
    let built_in = CommonDefaults::default();
    let interfaces: Map<String, Value> = Interface::ALL
        .into_iter()
        .map(|i| {
            (
                i.code().to_owned(),
                json!({
                    "name": i.name(),
                    "header": i.header(),
                    "tool": i.tool_name(),
                    "resource": match i {
                        Interface::Dac => resources::DAC_DOMAIN,
                        Interface::Usr => resources::USR_USERS,
                    },
                }),
            )
        })
        .collect();
    let binding = |check: Check, message: &str| {
        let finding = Finding::new("", Requirement::Binding, check, message);
        json!({
            "record": crate::client::turn::TurnFinding {
                on: crate::client::turn::Subject::Response,
                finding: finding.clone(),
            },
            "display": finding.to_string(),
            "pointer": "",
        })
    };
    json!({
        "format": FORMAT,
        "madeBy": made_by(),
        "version": env!("CARGO_PKG_VERSION"),
        "journalFormat": JOURNAL_FORMAT,
        "host": export.url,
        "protocol": export.protocol.as_str(),
        "fresh": export.fresh,
        "timeout": export.timeout_s,
        "headers": export.headers.iter().map(|(n, v)| (n.clone(), Value::String(v.clone()))).collect::<Map<String, Value>>(),
        "builtIn": {
            "MInstance": built_in.m_instance,
            "UEnvironment": built_in.u_environment,
            "SessionID": built_in.session_id,
            "AIMID": built_in.aim_id,
        },
        "interfaces": interfaces,
        "binding": {
            "textBlock": binding(Check::TextBlock, crate::client::dialogue::TEXT_BLOCK_DIFFERS),
            "structuredContent": binding(Check::StructuredContent, crate::client::dialogue::NO_STRUCTURED_CONTENT),
        },
        "scenarios": scenarios.iter().zip(classes).map(|(s, class)| scenario(s, class, export)).collect::<Vec<_>>(),
    })
}

fn scenario(s: &Scenario, class: &str, export: &Export) -> Value {
    let overrides = s.defaults.then(&export.overrides);
    let mut set = Map::new();
    for (key, value) in [
        ("MInstance", &overrides.m_instance),
        ("UEnvironment", &overrides.u_environment),
        ("SessionID", &overrides.session_id),
    ] {
        if let Some(v) = value {
            set.insert(key.into(), Value::String(v.clone()));
        }
    }
    json!({
        "name": s.name,
        "file": s.path.display().to_string(),
        "class": class,
        "interface": s.interface.code(),
        "overrides": set,
        "steps": s.steps.iter().enumerate().map(|(i, step)| self::step(s, i, step)).collect::<Vec<_>>(),
    })
}

/// What a step expects of its turn's findings.
pub fn conformance(expect: &[Expectation]) -> Conformance {
    for e in expect {
        match e {
            Expectation::Conforms => return Conformance::Conforms,
            Expectation::NotConforming => return Conformance::NotConforming,
            Expectation::Findings(names) => return Conformance::Findings(names.clone()),
            _ => {}
        }
    }
    Conformance::NotAsked
}

fn step(s: &Scenario, index: usize, step: &Step) -> Value {
    let kind = match s.interface {
        Interface::Usr => Some("feedback".to_owned()),
        Interface::Dac => step
            .request
            .get("Kind")
            .and_then(Value::as_str)
            .filter(|k| !k.contains("{{"))
            .map(str::to_owned),
    };
    let reference = StepRef {
        scenario: s.name.clone(),
        index,
        name: step.name.clone(),
        conformance: conformance(&step.expect),
    };
    json!({
        "name": step.name,
        "ref": reference,
        "kind": kind,
        "request": step.request,
        "asIs": step.as_is,
        "newSession": step.new_session,
        "capture": step.capture,
        "retry": step.retry.map(|r| json!({"times": r.times, "delayMs": r.delay.as_millis() as u64})),
        "expect": step.expect.iter().map(expectation).collect::<Vec<_>>(),
    })
}

/// An expectation as the workers' judge reads it: what it asks, and its description.
pub fn expectation(e: &Expectation) -> Value {
    let describe = e.describe();
    let mut v = match e {
        Expectation::Conforms => json!({"type": "conforms"}),
        Expectation::NotConforming => json!({"type": "not_conforming"}),
        Expectation::Findings(names) => json!({"type": "findings", "names": names}),
        Expectation::ToolError(m) => {
            json!({"type": "tool_error", "matcher": m.as_ref().map(matcher)})
        }
        Expectation::Outcome(wanted) => json!({"type": "outcome", "wanted": wanted}),
        Expectation::Value {
            pointer,
            matcher: m,
        } => {
            json!({"type": "value", "pointer": pointer, "matcher": matcher(m)})
        }
        Expectation::Steps(wanted) => json!({"type": "steps", "wanted": wanted}),
        Expectation::Overall(o) => json!({"type": "overall", "wanted": o}),
        Expectation::Commitment { id, status } => {
            json!({"type": "commitment", "id": id, "status": status})
        }
        Expectation::Latency(max) => {
            json!({"type": "latency", "max": max, "maxText": max.to_string()})
        }
    };
    v["describe"] = Value::String(describe);
    v
}

/// A matcher as the workers' judge reads it, with its words (Display) for failures.
pub fn matcher(m: &Matcher) -> Value {
    let mut v = match m {
        Matcher::Equals(x) => json!({"equals": x}),
        Matcher::OneOf(xs) => json!({"one_of": xs}),
        Matcher::Matches(re) => json!({"matches": re.as_str()}),
        Matcher::Between(min, max) => json!({"between": [min, max]}),
        Matcher::Present(p) => json!({"present": p}),
    };
    v["text"] = Value::String(m.to_string());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn says(pattern: &str) -> Option<String> {
        python_cannot_read(&Matcher::Matches(regex::Regex::new(pattern).unwrap()))
    }

    #[test]
    fn regular_expressions_python_reads_otherwise_are_named() {
        for ok in [
            "^c[0-9] (conflicts|is kept)",
            "(?i)attend",
            "(?i:a)b",
            "(?P<x>a)",
            "a(?=b)?",
            "fountain|stage|sound",
            "\\d+\\.\\s",
        ] {
            // (?=…) is not Rust's either: only patterns the regex crate reads come here.
            if regex::Regex::new(ok).is_ok() {
                assert_eq!(says(ok), None, "{ok}");
            }
        }
        for (bad, what) in [
            ("\\p{Lu}", "Unicode class"),
            ("\\pL", "Unicode class"),
            ("a\\z", "\\z"),
            ("[[:alpha:]]", "POSIX"),
            ("[a-z&&[^aeiou]]", "intersection"),
            ("a(?i)b", "inline flags"),
            ("(?-i)b", "inline flags"),
            ("(?U)a+", "flag other"),
            ("(?<name>a)", "named group"),
            ("\\x{41}", "\\x{"),
        ] {
            let why = says(bad).unwrap_or_else(|| panic!("{bad} passed"));
            assert!(why.contains(what), "{bad}: {why}");
        }
    }

    #[test]
    fn class_names_are_python_identifiers_and_unique() {
        let scenario = |path: &str| Scenario {
            path: PathBuf::from(path),
            name: "n".into(),
            description: None,
            server: None,
            interface: Interface::Dac,
            defaults: Overrides::default(),
            steps: Vec::new(),
        };
        let names = class_names(&[
            scenario("a/dac-kiosk.yaml"),
            scenario("b/dac-kiosk.yaml"),
            scenario("3 ways.json"),
        ]);
        assert_eq!(names, ["DacKiosk", "DacKiosk2", "Scenario3Ways"]);
    }
}
