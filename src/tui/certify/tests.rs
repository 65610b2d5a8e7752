//! The certify pane's update on its own: the palette's entry and the key start a run on the
//! server in view, progress events fill the pane, Esc stops the run (and hides the pane once
//! it is over), Enter on a failed rule opens its evidence as recorded dialogues, and the
//! report is saved asking before it writes over a file. No server, file or clock.

use super::*;
use crate::certify::rules::RULES;
use crate::client::turn::{Reply, Turn};
use crate::protocol::raw::RawJson;
use crate::tui::app::{Options, Paths};
use crate::tui::event::Event;
use crate::tui::overlay::Overlay;
use crate::tui::testing::Fixture;
use ratatui::crossterm::event::Event as Input;
use ratatui::crossterm::event::KeyCode;
use serde_json::{Value, json};

/// Both reference servers, only the dark theme, and nothing but a working folder.
fn options() -> Options {
    let mut options = crate::tui::testing::options(vec![
        ServerSpec::embedded(Interface::Dac),
        ServerSpec::embedded(Interface::Usr),
    ]);
    options.themes = vec!["dark".into()];
    options.paths = Paths {
        cwd: PathBuf::from("/work"),
        ..Paths::default()
    };
    options
}

/// The explorer driven through events (`tui::testing`), with the pane's own gestures.
type T = Fixture;

/// Both reference servers, none connected yet.
fn started() -> T {
    Fixture::start(options()).0
}

trait Certifying {
    fn certify(&mut self, event: CertifyEvent) -> Vec<Effect>;
    fn pane(&self) -> &CertifyPane;
    fn start(&mut self) -> u64;
}

impl Certifying for Fixture {
    fn certify(&mut self, event: CertifyEvent) -> Vec<Effect> {
        self.event(Event::Certify(event))
    }

    fn pane(&self) -> &CertifyPane {
        self.app().certify().expect("a certify pane")
    }

    /// Starts a run from the key table's key (out of the composer first).
    fn start(&mut self) -> u64 {
        self.key(KeyCode::Esc);
        let fx = self.key(KeyCode::Char('V'));
        match fx.as_slice() {
            [Effect::Certify(CertifyEffect::Start { run, .. })] => *run,
            other => panic!("one start: {other:?}"),
        }
    }
}

fn rule(name: &str) -> &'static Rule {
    RULES.iter().find(|r| r.name == name).expect("a rule")
}

fn turn(index: u64) -> Turn {
    let request: Value = json!({"Header": "PGM-KDA-V1.0", "Kind": "semantic_grounding",
        "TurnIndex": index, "DialogID": "d-1", "Terms": [{"Text": "bench"}]});
    Turn {
        request: RawJson::from_value(&request),
        reply: Reply::Response(RawJson::from_value(
            &json!({"Header": "PGM-KDA-V1.0", "TurnIndex": index, "Outcome": "answered"}),
        )),
        findings: Vec::new(),
        sent: "2026-11-30T00:00:00.000Z".into(),
        received: Some("2026-11-30T00:00:00.001Z".into()),
        latency_ms: 1.0,
        new_session: false,
        asked: Vec::new(),
    }
}

fn result(name: &str, verdict: Verdict, evidence: Vec<Evidence>) -> RuleResult {
    let problems = match verdict {
        Verdict::Fail => vec![format!("{name}: the server crashed mid-rule")],
        _ => Vec::new(),
    };
    RuleResult {
        rule: rule(name),
        verdict,
        summary: problems
            .first()
            .cloned()
            .unwrap_or_else(|| format!("{name} held")),
        problems,
        checked: 1,
        evidence,
        seconds: 0.1,
    }
}

fn evidence(dialogue: &str, turns: u64) -> Vec<Evidence> {
    (0..turns)
        .map(|i| Evidence::Turn {
            dialogue: dialogue.into(),
            dialog_id: "d-1".into(),
            protocol: "2026-07-28".into(),
            turn: Box::new(turn(i)),
        })
        .collect()
}

/// A run of three rules: one passes, one fails with two turns of evidence, one skips.
fn three_rules(t: &mut T, run: u64) {
    t.certify(CertifyEvent::Learnt {
        run,
        total: 3,
        learnt: vec!["tool bkn_dac".into()],
    });
    for (index, r) in [
        result("tools.found-by-header", Verdict::Pass, Vec::new()),
        result("commitments.release", Verdict::Fail, evidence("A", 2)),
        result("turns.dialog-id", Verdict::Skip, Vec::new()),
    ]
    .into_iter()
    .enumerate()
    {
        t.certify(CertifyEvent::Started {
            run,
            index,
            rule: r.rule,
        });
        t.certify(CertifyEvent::Finished {
            run,
            index,
            result: Box::new(r),
        });
    }
}

fn report(t: &T) -> Box<Report> {
    let p = t.pane();
    Box::new(Report {
        server: p.server_name.clone(),
        interface: p.interface,
        protocol: "2026-07-28".into(),
        learnt: p.learnt.clone(),
        rules: p.results.clone(),
        seconds: 1.5,
        spec: ServerSpec::embedded(Interface::Dac),
    })
}

#[test]
fn the_palette_entry_certifies_the_server_of_the_dialogue_in_view() {
    let mut t = started();
    // The second dialogue is on the User State Refinement server.
    t.app
        .show_dialogue(t.app.workspace.dialogues().id_at(1).unwrap());
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char(':'));
    assert!(matches!(t.app.overlay(), Some(Overlay::Palette(_))));
    for c in "certify this".chars() {
        t.key(KeyCode::Char(c));
    }
    let fx = t.key(KeyCode::Enter);
    match fx.as_slice() {
        [
            Effect::Certify(CertifyEffect::Start {
                run: 1,
                spec,
                interface: Interface::Usr,
                ..
            }),
        ] => assert_eq!(spec, &t.app.workspace.servers().nth(1).unwrap().spec),
        other => panic!("one start on the USR server: {other:?}"),
    }
    let p = t.pane();
    assert!(p.shown && p.running() && Some(p.server) == t.app.workspace.servers().id_at(1));
    assert_eq!(p.phase, Phase::Learning);
}

#[test]
fn progress_events_fill_the_pane_and_those_of_an_older_run_are_dropped() {
    let mut t = started();
    let run = t.start();
    t.certify(CertifyEvent::Learnt {
        run,
        total: 49,
        learnt: vec!["tool bkn_dac".into()],
    });
    t.certify(CertifyEvent::Started {
        run,
        index: 0,
        rule: rule("tools.found-by-header"),
    });
    assert_eq!(t.pane().phase, Phase::Running);
    assert_eq!(t.pane().total, Some(49));
    assert_eq!(
        t.pane().current.map(|(i, r)| (i, r.name)),
        Some((0, "tools.found-by-header"))
    );
    t.certify(CertifyEvent::Finished {
        run,
        index: 0,
        result: Box::new(result("tools.found-by-header", Verdict::Pass, Vec::new())),
    });
    assert_eq!(t.pane().results.len(), 1);
    assert!(t.pane().current.is_none());
    // An older run's events change nothing.
    t.certify(CertifyEvent::Finished {
        run: run + 7,
        index: 1,
        result: Box::new(result("turns.gaps", Verdict::Fail, Vec::new())),
    });
    assert_eq!(t.pane().results.len(), 1);
}

#[test]
fn esc_stops_the_run_then_the_pane_shows_what_ran_and_esc_hides_it() {
    let mut t = started();
    let run = t.start();
    three_rules(&mut t, run);
    let fx = t.key(KeyCode::Esc);
    assert!(
        matches!(fx.as_slice(), [Effect::Certify(CertifyEffect::Stop { run: r })] if *r == run),
        "{fx:?}"
    );
    assert_eq!(t.pane().phase, Phase::Cancelling);
    // q hides the pane; the run goes on, and V shows it again.
    assert!(t.key(KeyCode::Char('q')).is_empty());
    assert!(!t.pane().shown && t.pane().running());
    // Hidden, the run is still on screen: the status line says it, with the key that shows it.
    let status = bottom_line(&t, 120);
    assert!(status.contains("certify 3/"), "{status}");
    assert!(status.contains("(V)"), "{status}");
    assert!(t.key(KeyCode::Char('V')).is_empty());
    assert!(t.pane().shown);
    let report = report(&t);
    t.certify(CertifyEvent::Done {
        run,
        result: Ok(report),
    });
    assert_eq!(t.pane().phase, Phase::Cancelled);
    assert_eq!(t.pane().results.len(), 3);
    assert!(t.pane().shown);
    assert!(t.key(KeyCode::Esc).is_empty());
    assert!(!t.pane().shown, "Esc hides a finished run");
    // V shows it again, without running again; r in the pane runs again.
    assert!(t.key(KeyCode::Char('V')).is_empty());
    assert!(t.pane().shown);
    let fx = t.key(KeyCode::Char('r'));
    assert!(
        matches!(fx.as_slice(), [Effect::Certify(CertifyEffect::Start { run: r, .. })] if *r == run + 1),
        "{fx:?}"
    );
}

#[test]
fn a_server_that_cannot_be_reached_says_why_and_never_hangs_the_pane() {
    let mut t = started();
    let run = t.start();
    t.certify(CertifyEvent::Done {
        run,
        result: Err("domain-access cannot be reached: it exited".into()),
    });
    assert_eq!(
        t.pane().phase,
        Phase::Unreachable("domain-access cannot be reached: it exited".into())
    );
    assert!(!t.pane().running());
    t.key(KeyCode::Esc);
    assert!(!t.pane().shown);
}

#[test]
fn the_filter_shows_one_verdict_at_a_time_keeping_the_selected_rule() {
    let mut t = started();
    let run = t.start();
    three_rules(&mut t, run);
    t.key(KeyCode::Down);
    assert_eq!(
        t.pane().selected_result().unwrap().rule.name,
        "commitments.release"
    );
    t.key(KeyCode::Char('f'));
    assert_eq!(t.pane().filter, Some(Verdict::Fail));
    assert_eq!(t.pane().rows(), vec![1]);
    assert_eq!(
        t.pane().selected_result().unwrap().rule.name,
        "commitments.release"
    );
    t.key(KeyCode::Char('f'));
    assert_eq!(t.pane().filter, Some(Verdict::Pass));
    assert_eq!(t.pane().rows(), vec![0]);
    t.key(KeyCode::Char('f'));
    assert_eq!(t.pane().rows(), vec![2]);
    t.key(KeyCode::Char('f'));
    assert_eq!(t.pane().filter, None);
    assert_eq!(t.pane().rows().len(), 3);
}

#[test]
fn enter_on_a_failed_rule_opens_its_evidence_as_a_recorded_dialogue_once() {
    let mut t = started();
    let run = t.start();
    three_rules(&mut t, run);
    let before = t.app.workspace.dialogues().len();
    // On a rule without evidence, Enter says so and opens nothing.
    t.key(KeyCode::Enter);
    assert_eq!(t.app.workspace.dialogues().len(), before);
    assert!(t.pane().note.as_ref().unwrap().0.contains("no evidence"));
    t.key(KeyCode::Down);
    let fx = t.key(KeyCode::Enter);
    assert!(fx.is_empty(), "opening evidence starts nothing: {fx:?}");
    assert_eq!(t.app.workspace.dialogues().len(), before + 1);
    let d = t.app.current_dialogue().expect("the evidence in view");
    assert_eq!(d.name, "commitments.release: A");
    assert_eq!(d.status, Status::Recorded);
    assert_eq!(Some(d.server), t.app.workspace.servers().id_at(0));
    assert_eq!(d.transcript.len(), 2);
    assert_eq!(d.link.dialog_id(), Some("d-1"));
    assert!(
        !t.pane().shown,
        "the evidence is shown in place of the pane"
    );
    assert_eq!(t.app.screen.focus(), Pane::Transcript);
    // Again: the same dialogue shown, not a second one.
    t.key(KeyCode::Char('V'));
    t.key(KeyCode::Enter);
    assert_eq!(t.app.workspace.dialogues().len(), before + 1);
}

#[test]
fn the_report_is_saved_as_json_or_markdown_asking_before_writing_over_a_file() {
    let mut t = started();
    let run = t.start();
    three_rules(&mut t, run);
    let report = report(&t);
    t.certify(CertifyEvent::Done {
        run,
        result: Ok(report),
    });
    t.key(KeyCode::Char('J'));
    let fx = t.key(KeyCode::Enter);
    let path = PathBuf::from("/work/certify-domain-access.json");
    match fx.as_slice() {
        [
            Effect::Certify(CertifyEffect::Write {
                path: p,
                text,
                overwrite: false,
            }),
        ] => {
            assert_eq!(p, &path);
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(v["failed"], 1);
            assert_eq!(v["rules"][1]["verdict"], "fail");
        }
        other => panic!("one write: {other:?}"),
    }
    t.certify(CertifyEvent::Exists { path: path.clone() });
    assert_eq!(t.pane().saving.as_ref().unwrap().exists, Some(path.clone()));
    let fx = t.key(KeyCode::Enter);
    assert!(
        matches!(
            fx.as_slice(),
            [Effect::Certify(CertifyEffect::Write {
                overwrite: true,
                ..
            })]
        ),
        "{fx:?}"
    );
    t.certify(CertifyEvent::Written {
        path,
        result: Ok(()),
    });
    assert!(t.pane().saving.is_none());
    // Markdown, under a name typed (pasted) without an extension.
    t.key(KeyCode::Char('m'));
    for _ in 0..40 {
        t.key(KeyCode::Backspace);
    }
    t.event(Event::Input(Input::Paste("reports/dac\r".into())));
    let fx = t.key(KeyCode::Enter);
    match fx.as_slice() {
        [Effect::Certify(CertifyEffect::Write { path, text, .. })] => {
            assert_eq!(path, &PathBuf::from("/work/reports/dac.md"));
            assert!(text.starts_with("# BKN conformance report"), "{text}");
        }
        other => panic!("one write: {other:?}"),
    }
}

#[test]
fn the_panes_keys_come_from_the_key_table() {
    let (map, problems) = crate::tui::keys_file::apply("[certify]\ncertify-filter = \"v\"\n");
    assert!(problems.is_empty(), "{problems:?}");
    let mut t = started();
    t.app.config.keymap = map;
    let run = t.start();
    three_rules(&mut t, run);
    t.key(KeyCode::Char('f'));
    assert_eq!(t.pane().filter, None, "f is no longer the filter's key");
    t.key(KeyCode::Char('v'));
    assert_eq!(t.pane().filter, Some(Verdict::Fail));
}

#[test]
fn a_click_selects_a_rule_and_a_click_on_the_selected_one_opens_its_evidence() {
    let mut t = started();
    let run = t.start();
    three_rules(&mut t, run);
    // Where the frame drew the rows.
    t.draw();
    let (row, n) = t.hits().overlay_rows[1];
    assert_eq!(n, 1);
    let before = t.app.workspace.dialogues().len();
    t.click(row.x + 3, row.y);
    assert_eq!(t.pane().selected, 1);
    assert_eq!(
        t.app.workspace.dialogues().len(),
        before,
        "the first click selects"
    );
    t.click(row.x + 3, row.y);
    assert_eq!(
        t.app.workspace.dialogues().len(),
        before + 1,
        "the second opens"
    );
    assert!(!t.pane().shown);
}

/// The last row of the screen as drawn at `width` x 40 (the status line).
fn bottom_line(t: &T, width: u16) -> String {
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, 40)).unwrap();
    terminal
        .draw(|f| {
            crate::tui::view::render(f, t.app());
        })
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..width).map(|x| buffer[(x, 39)].symbol()).collect()
}
