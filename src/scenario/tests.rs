use super::*;
use crate::scenario::expect::Expectation;
use std::path::Path;

fn errors(text: &str) -> Vec<String> {
    match parse(text, Path::new("t.yaml")) {
        Ok(_) => Vec::new(),
        Err(e) => e.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn a_scenario_reads_with_its_defaults_and_expectations() {
    let s = parse(
        r#"
name: kiosk
server: {embedded: dac}
steps:
  - request:
      Kind: semantic_grounding
      Terms: [{Text: bench}]
    expect:
      outcome: [answered, partially_answered]
      values:
        /Answer/ObjectClasses/0/Class: Bench
        /Answer/Text: {matches: bench}
    capture:
      class: /Answer/ObjectClasses/0/Class
  - request:
      Kind: affordances
      EntityIDs: ["{{class}}"]
"#,
        Path::new("kiosk.yaml"),
    )
    .unwrap();
    assert_eq!(s.interface, Interface::Dac);
    assert_eq!(s.server, Some(ServerChoice::Embedded(Interface::Dac)));
    assert_eq!(s.steps.len(), 2);
    assert_eq!(s.steps[0].name, "step 1 (semantic_grounding)");
    assert!(matches!(s.steps[0].expect[0], Expectation::Conforms));
    assert_eq!(s.steps[0].expect.len(), 4);
    assert_eq!(
        s.steps[0].capture,
        [("class".into(), "/Answer/ObjectClasses/0/Class".into())]
    );
    assert!(matches!(s.steps[1].expect[..], [Expectation::Conforms]));
}

#[test]
fn mistakes_are_found_before_anything_is_sent_with_their_place() {
    let e = errors("steps:\n  - request:\n      Kind: feasibilty\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("t.yaml:3:13: \"feasibilty\" is not a Kind (did you mean feasibility?)"),
        "{e:?}"
    );

    let e = errors(
        "steps:\n  - request: {Kind: constraints}\n    expect:\n      values:\n        /Answer/Constraint: x\n",
    );
    assert!(
        e[0].starts_with("t.yaml:5:9: /Answer/Constraint cannot exist in a BKN-DAC Response"),
        "{e:?}"
    );
    assert!(e[0].contains("did you mean Constraints?"), "{e:?}");

    let e = errors(
        "steps:\n  - request: {Kind: constraints, EntityIDs: [\"{{id}}\"]}\n  - request: {Kind: constraints}\n    capture: {id: /Answer/Text}\n",
    );
    assert!(
        e[0].contains("{{id}} is used before a step captures it"),
        "{e:?}"
    );

    let e =
        errors("steps:\n  - request: {Kind: constraints}\n    expect:\n      outcom: answered\n");
    assert!(
        e[0].starts_with("t.yaml:4:7: unknown field `outcom`"),
        "{e:?}"
    );

    let e = errors(
        "steps:\n  - request: {Kind: feasibility}\n    expect:\n      feasibility: {steps: [Ack, Clsh]}\n      findings: [feasibility.overal]\n",
    );
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e.iter()
            .any(|m| m.contains("\"Clsh\" is not a PA Status (did you mean Clash?)")),
        "{e:?}"
    );
    assert!(
        e.iter()
            .any(|m| m.contains("did you mean feasibility.overall?")),
        "{e:?}"
    );

    let e = errors(
        "{\"steps\": [{\"request\": {\"Kind\": \"constraints\"}, \"expect\": {\"values\": {\"/Answer/Text\": {\"matches\": \"(\"}}}}]}",
    );
    assert!(e[0].starts_with("t.yaml:1:"), "{e:?}");
    assert!(e[0].contains("not a regular expression"), "{e:?}");
}

#[test]
fn pointers_are_checked_against_the_response_schema() {
    let r = schema::self_contained(Interface::Dac, Mode::Response);
    assert!(possible(r, "/Answer/ObjectClasses/0/Class").is_ok());
    assert!(possible(r, "/Feasibility/Steps/2/PAStatus").is_ok());
    assert!(possible(r, "/Feasibility/Steps/x").is_err());
    assert!(possible(r, "/Nope").is_err());
    let u = schema::self_contained(Interface::Usr, Mode::Response);
    assert!(
        possible(u, "/RefinedUserState/Emotion/anything").is_ok(),
        "open objects take any key"
    );
}

/// The JSON Schema and the loader agree: the shipped scenarios and one that uses every key
/// the schema names are valid for both; a key the schema does not name is refused by both.
#[test]
fn the_schema_and_the_loader_agree() {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let every_key = r#"
name: every key
description: uses every key the schema names
server: {embedded: dac}
interface: dac
defaults: {MInstance: MI:PublicSquare, UEnvironment: UE:Square, SessionID: AUS:1}
steps:
  - name: one
    request: {Kind: commitment, Commitments: [{CommitmentID: c1, Statement: "A locatedAt B"}]}
    as_is: false
    new_session: false
    expect:
      conforms: true
      outcome: [answered, partially_answered]
      values: {/Answer/Text: {matches: "c1"}, /Outcome: {one_of: [answered]}, /TurnIndex: {min: 0, max: 10}, /SourcesUsed: {present: true}}
      commitments: {c1: retained}
      latency_ms: {max: 1000}
    capture: {text: /Answer/Text}
    retry: {times: 1, delay_ms: 5}
  - request: {Kind: feasibility, ProcessActions: [{Step: 0, Statement: "{{text}}"}]}
    expect:
      findings: [schema.type]
      tool_error: {matches: "x"}
      feasibility: {steps: [Ack], overall: feasible}
    retry: {times: 1, delay: 250ms}
"#;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts: Vec<(String, String)> = vec![("every key".into(), every_key.into())];
    for name in ["dac-kiosk.yaml", "usr-ana.yaml"] {
        texts.push((
            name.into(),
            std::fs::read_to_string(root.join("scenarios").join(name)).unwrap(),
        ));
    }
    for (name, text) in &texts {
        parse(text, Path::new(name)).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let value: Value = serde_saphyr::from_str(text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    let usr_keys = "steps:\n  - request: {UserID: User#Ana}\n    expect:\n      user_state: {/Emotion: curious}\n      engagement: {level: {between: [0, 1]}, mode: interactive}\n";
    let value: Value = serde_saphyr::from_str(usr_keys).unwrap();
    assert!(validator.is_valid(&value));
    assert!(parse(&format!("interface: usr\n{usr_keys}"), Path::new("u")).is_ok());
    for unknown in [
        "steps: [{request: {}, expects: {}}]\n",
        "steps: [{request: {}}]\nservers: x\n",
    ] {
        let value: Value = serde_saphyr::from_str(unknown).unwrap();
        assert!(!validator.is_valid(&value), "{unknown}");
        assert!(parse(unknown, Path::new("u")).is_err(), "{unknown}");
    }
}

/// The shipped scenarios and the examples above, written as JSON: serde_json's fast path
/// reads them to the same scenario as the YAML parser, and refuses what the YAML parser
/// refuses (so that `parse` reads those again, with places).
#[test]
fn json_scenarios_read_fast_to_what_the_yaml_parser_reads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let yaml = std::fs::read_to_string(&path).unwrap();
        let value: Value = serde_saphyr::from_str(&yaml).unwrap();
        let json = serde_json::to_string_pretty(&value).unwrap();
        let slow = parse(&yaml, &path).unwrap();
        let fast = parse_json(&json, &path).expect("read by the fast path");
        assert_eq!(
            format!("{fast:?}"),
            format!("{slow:?}"),
            "{}",
            path.display()
        );
        read += 1;
    }
    assert!(read >= 2, "the shipped scenarios were read");
    for mistaken in [
        // A key written twice, an unknown key, a Kind with a typo, a capture used first.
        r#"{"steps": [{"request": {"Kind": "constraints", "Kind": "affordances"}}]}"#,
        r#"{"steps": [{"request": {"Kind": "constraints"}, "expct": {}}]}"#,
        r#"{"steps": [{"request": {"Kind": "constrains"}}]}"#,
        r#"{"steps": [{"request": {"Kind": "affordances", "EntityIDs": ["{{later}}"]}}]}"#,
    ] {
        assert!(
            parse_json(mistaken, Path::new("t.json")).is_none(),
            "{mistaken}"
        );
        let errors = errors(mistaken);
        assert!(
            errors.iter().all(|e| e.starts_with("t.yaml:1:")),
            "each mistake with its place: {errors:?}"
        );
    }
}

/// A scenario that names neither its interface nor its server is of the interface its first
/// Request's own properties belong to, as `send` and `dialogue` tell.
#[test]
fn the_interface_is_told_from_the_first_requests_properties() {
    let usr = parse(
        "steps:\n  - request: {UserID: User#Ana, Feedback: {Hypothesis: wants to dance}}\n",
        Path::new("usr.yaml"),
    )
    .unwrap();
    assert_eq!(usr.interface, Interface::Usr);
    let dac = parse(
        "steps:\n  - request: {Kind: constraints, EntityIDs: [Kiosk#3]}\n",
        Path::new("dac.yaml"),
    )
    .unwrap();
    assert_eq!(dac.interface, Interface::Dac);
}

#[test]
fn yaml_1_1_booleans_stay_the_strings_written() {
    let s = parse(
        r#"
server: {embedded: usr}
steps:
  - request:
      UserID: User#1
      Feedback: {Hypothesis: "Emotion is curious", Question: y, Conflicts: [no, on, yes]}
"#,
        Path::new("t.yaml"),
    )
    .unwrap();
    let feedback = &s.steps[0].request["Feedback"];
    assert_eq!(feedback["Question"], serde_json::json!("y"));
    assert_eq!(
        feedback["Conflicts"],
        serde_json::json!(["no", "on", "yes"])
    );
    // A field that is a boolean still takes YAML 1.2's spelling, and refuses another with its
    // place.
    assert!(
        errors("steps:\n  - request: {Kind: semantic_grounding}\n    as_is: true\n").is_empty()
    );
    let e = errors("steps:\n  - request: {Kind: semantic_grounding}\n    as_is: yes\n");
    assert!(
        e.iter().any(|e| e.contains("3:") || e.contains("line 3")),
        "{e:?}"
    );
}

/// A retry's `delay` is written as `--timeout` is ("250ms", "2s", or seconds); `delay_ms`,
/// what files said before, still reads; one that is no duration is refused with its line.
#[test]
fn a_retry_delay_is_a_duration_as_on_the_command_line() {
    let delay = |retry: &str| {
        parse(
            &format!("server: {{embedded: dac}}\nsteps:\n  - request: {{Kind: semantic_grounding, Terms: [{{Text: bench}}]}}\n    retry: {retry}\n"),
            Path::new("t.yaml"),
        )
        .map(|s| s.steps[0].retry.unwrap().delay)
    };
    assert_eq!(
        delay("{times: 2, delay: 250ms}").unwrap(),
        Duration::from_millis(250)
    );
    assert_eq!(
        delay("{times: 2, delay: 2}").unwrap(),
        Duration::from_secs(2)
    );
    assert_eq!(delay("{times: 2, delay: 0}").unwrap(), Duration::ZERO);
    assert_eq!(
        delay("{times: 2, delay_ms: 5}").unwrap(),
        Duration::from_millis(5)
    );
    assert_eq!(delay("{times: 2}").unwrap(), Duration::from_millis(100));
    let e = errors(
        "steps:\n  - request: {Kind: semantic_grounding}\n    retry: {times: 1, delay: soon}\n",
    );
    assert!(
        e.iter()
            .any(|e| e.contains("3") && e.contains("'soon' is not a duration")),
        "{e:?}"
    );
    let e = errors(
        "steps:\n  - request: {Kind: semantic_grounding}\n    retry: {times: 1, delay: 1s, delay_ms: 5}\n",
    );
    assert!(e.iter().any(|e| e.contains("not both")), "{e:?}");
}
