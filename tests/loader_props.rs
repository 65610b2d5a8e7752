//! Property tests for the two loaders of outside files: session files and theme files. Random
//! bytes and mutated real files never make them panic; what they refuse comes with where it
//! breaks (a line and column, or a JSON pointer) and a sentence; and what the session loader
//! accepts saves and loads back the same. 10,000 cases each (more with PROPTEST_CASES).

use bkn_explorer::session::{Session, SessionError};
use bkn_explorer::tui::theme::Theme;
use proptest::prelude::*;
use std::sync::LazyLock;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(10_000)
}

static SHIPPED: LazyLock<String> = LazyLock::new(|| {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/usr-refinement.json"),
    )
    .expect("the shipped session")
});

const DARK: &str = include_str!("../themes/dark.toml");

/// A refusal is well formed: it says where and what.
fn assert_clear(e: &SessionError, text: &str) {
    match e {
        SessionError::Syntax {
            line,
            column,
            message,
        } => {
            assert!(
                *line >= 1 && *line <= text.lines().count().max(1) + 1,
                "line {line}"
            );
            assert!(*column <= text.len() + 1, "column {column}");
            assert!(!message.is_empty());
        }
        SessionError::Format(m) => assert!(!m.is_empty()),
        SessionError::Invalid(problems) => {
            assert!(!problems.is_empty());
            for (pointer, message) in problems {
                assert!(
                    pointer.is_empty() || pointer.starts_with('/'),
                    "not a JSON pointer: {pointer}"
                );
                assert!(!message.is_empty(), "no message at {pointer}");
            }
        }
        SessionError::Io(m) => panic!("parsing text is no I/O: {m}"),
    }
    assert!(!e.to_string().is_empty());
}

fn check_session_text(text: &str) {
    match Session::parse(text) {
        Ok(session) => {
            // What loads, saves and loads back the same.
            let again = Session::parse(&session.to_text()).expect("a saved session loads");
            assert_eq!(again.to_text(), session.to_text());
        }
        Err(e) => assert_clear(&e, text),
    }
}

/// Ways to spoil a file.
#[derive(Clone, Debug)]
enum Damage {
    /// Cut it at a fraction of its length (as a write that stopped).
    Truncate(f64),
    /// Replace one byte.
    Byte(f64, u8),
    /// Remove a stretch.
    Remove(f64, usize),
    /// Put a piece of JSON syntax somewhere.
    Insert(f64, &'static str),
    /// Replace the n-th string (a key or a value, with its quotes) with something else.
    String(usize, &'static str),
}

fn arb_damage() -> impl Strategy<Value = Damage> {
    let pieces = prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"",
        "null",
        "1e999",
        "-0",
        "\"\\u0000\"",
        "true",
        "\"format\": 2,",
        "\"turns\": {},",
        "\\",
        "\u{1F600}",
        "\"RS\"",
        "\"\"",
    ]);
    prop_oneof![
        (0.0..1.0f64).prop_map(Damage::Truncate),
        (0.0..1.0f64, any::<u8>()).prop_map(|(at, b)| Damage::Byte(at, b)),
        (0.0..1.0f64, 1usize..200).prop_map(|(at, n)| Damage::Remove(at, n)),
        (0.0..1.0f64, pieces.clone()).prop_map(|(at, p)| Damage::Insert(at, p)),
        (0usize..400, pieces).prop_map(|(n, p)| Damage::String(n, p)),
    ]
}

fn damage(text: &str, damages: &[Damage]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for d in damages {
        let at = |f: f64, len: usize| ((f * len as f64) as usize).min(len);
        match d {
            Damage::Truncate(f) => bytes.truncate(at(*f, bytes.len())),
            Damage::Byte(f, b) => {
                if !bytes.is_empty() {
                    let i = at(*f, bytes.len() - 1);
                    bytes[i] = *b;
                }
            }
            Damage::Remove(f, n) => {
                let start = at(*f, bytes.len());
                let end = (start + n).min(bytes.len());
                bytes.drain(start..end);
            }
            Damage::Insert(f, piece) => {
                let i = at(*f, bytes.len());
                bytes.splice(i..i, piece.bytes());
            }
            Damage::String(n, piece) => {
                let s = String::from_utf8_lossy(&bytes).into_owned();
                let quotes: Vec<usize> = s.match_indices('"').map(|(i, _)| i).collect();
                if quotes.len() >= 2 {
                    let k = (n % (quotes.len() / 2)) * 2;
                    let (a, b) = (quotes[k], quotes[k + 1]);
                    bytes = format!("{}{piece}{}", &s[..a], &s[b + 1..]).into_bytes();
                }
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn check_theme_text(text: &str) {
    match Theme::parse(text, "probe.toml", None, &mut Vec::new()) {
        Ok(theme) => {
            // A theme that loads has every colour the explorer uses.
            assert_eq!(
                theme.colors.all().len(),
                bkn_explorer::tui::theme::Colors::KEYS.len()
            );
        }
        Err(e) => {
            let m = e.to_string();
            assert!(m.starts_with("probe.toml"), "the error names the file: {m}");
            assert!(m.len() > "probe.toml: ".len(), "and says something: {m}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_break_the_session_loader(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        check_session_text(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn damaged_sessions_are_refused_clearly(damages in prop::collection::vec(arb_damage(), 1..4)) {
        check_session_text(&damage(&SHIPPED, &damages));
    }

    #[test]
    fn random_bytes_never_break_the_theme_loader(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        check_theme_text(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn damaged_themes_are_refused_clearly_or_load_whole(damages in prop::collection::vec(arb_damage(), 1..4)) {
        check_theme_text(&damage(DARK, &damages));
    }
}

#[test]
fn the_undamaged_files_load() {
    check_session_text(&SHIPPED);
    assert!(Session::parse(&SHIPPED).is_ok());
    assert!(Theme::parse(DARK, "dark.toml", None, &mut Vec::new()).is_ok());
}
