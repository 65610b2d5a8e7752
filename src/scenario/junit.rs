//! JUnit XML, which CI tools read: a test suite per scenario and server, a test case per
//! step. A step whose expectations failed is a `failure` (its message the first failure, its
//! text every failure and the Response); a step that could not run, or a server that could
//! not be reached, is an `error`.

use crate::client::dialogue::OpenFailure;
use crate::scenario::run::ScenarioRun;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// The report of every run, as XML.
pub fn report(runs: &[ScenarioRun]) -> String {
    let mut report = Report::new("bkn-explorer test");
    for run in runs {
        let mut suite = TestSuite::new(format!("{} on {}", run.scenario, run.server));
        suite.set_time(Duration::from_secs_f64(run.seconds));
        if let Some(protocol) = &run.protocol {
            suite.add_property(quick_junit::Property::new(
                "mcp.protocol",
                protocol.as_str(),
            ));
        }
        if let Some(error) = &run.error {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_message(error.to_string());
            status.set_type(match error {
                OpenFailure::Unreachable(_) => "connection",
                OpenFailure::NoTool(_) => "no-tool",
            });
            let mut case = TestCase::new("open the dialogue", status);
            case.set_classname(classname(run));
            suite.add_test_case(case);
        }
        for step in &run.steps {
            let status = if let Some(why) = &step.not_run {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_message(format!("not run: {why}"));
                s.set_type("not run");
                s
            } else if step.failures.is_empty() {
                TestCaseStatus::success()
            } else {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(step.failures[0].to_string());
                s.set_type("expectation");
                let mut text: Vec<String> = step.failures.iter().map(|f| f.to_string()).collect();
                if let Some(turn) = &step.turn {
                    text.push(String::new());
                    text.push(match &turn.reply {
                        crate::client::turn::Reply::Response(r) => {
                            format!("Response: {}", r.text())
                        }
                        crate::client::turn::Reply::ToolError(t) => format!("tool error: {t}"),
                        crate::client::turn::Reply::Error(e) => format!("no reply: {}", e.message),
                    });
                }
                s.set_description(text.join("\n"));
                s
            };
            let mut case = TestCase::new(format!("{} {}", step.index + 1, step.name), status);
            case.set_classname(classname(run));
            if step.not_run.is_none() {
                case.set_time(Duration::from_secs_f64(step.latency_ms / 1000.0));
            }
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- the report could not be written: {e} -->"))
}

/// The test case's class: the scenario's file, as CI tools group by it.
fn classname(run: &ScenarioRun) -> String {
    run.file.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::run::StepRun;

    fn step(index: usize, latency_ms: f64, not_run: Option<&str>) -> StepRun {
        StepRun {
            index,
            name: format!("step {index}"),
            // Dropped, as `Keep::Failing` drops a passing step's turn.
            turn: None,
            latency_ms,
            failures: Vec::new(),
            attempts: u32::from(not_run.is_none()),
            not_run: not_run.map(str::to_owned),
        }
    }

    /// A passing step whose turn was dropped keeps the time it took; a step not run has none.
    #[test]
    fn a_step_keeps_its_time_without_its_turn() {
        let run = ScenarioRun {
            scenario: "s".into(),
            file: "s.yaml".into(),
            server: "x".into(),
            protocol: None,
            steps: vec![
                step(0, 12.0, None),
                step(1, 0.0, Some("the connection is gone")),
            ],
            error: None,
            seconds: 0.5,
        };
        let xml = report(&[run]);
        assert!(
            xml.contains(r#"name="1 step 0" classname="s.yaml" time="0.012""#),
            "{xml}"
        );
        let not_run = xml
            .lines()
            .find(|l| l.contains(r#"name="2 step 1""#))
            .unwrap();
        assert!(!not_run.contains("time="), "{xml}");
    }
}
