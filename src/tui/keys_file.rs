//! `keys.toml`: the user's changes to the key table. A section per place (`anywhere`, `global`,
//! `servers`, `transcript`, `detail`, `composer`, `log`, `certify`, `overlay`, `question`,
//! `edit`, `search`), an action's name and its keys:
//!
//! ```toml
//! [anywhere]
//! send = ["F5", "Ctrl-S"]   # replaces the keys of `send` there
//! [global]
//! quit = "x"
//! ```
//!
//! The help overlay, the palette and the hints show the result. Every mistake (an unknown
//! action, section or key) is reported with its line (`toml_places`, as a theme's are), and
//! keys now bound twice in one place with both bindings.

use super::action::{Action, Binding, Context, Key, Keymap, Pane};
use crate::toml_places::{self, Problem};
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use std::path::Path;

pub const FILE: &str = "keys.toml";

/// The key map of `dir/keys.toml` (the defaults when there is none), and what was wrong with
/// it, each mistake with its line (`FILE:LINE: what`).
pub fn load(dir: &Path) -> (Keymap, Vec<String>) {
    let path = dir.join(FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let (map, problems) = apply(&text);
            let origin = path.display().to_string();
            let problems = problems.iter().map(|p| p.in_file(&origin)).collect();
            (map, problems)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Keymap::default(), Vec::new()),
        Err(e) => (Keymap::default(), vec![format!("{}: {e}", path.display())]),
    }
}

/// The explorer's own keys, written as a keys.toml.
pub const DEFAULTS: &str = include_str!("default-keys.toml");

/// The default bindings, read from [`DEFAULTS`] once (a test checks that it reads without a
/// problem).
pub fn defaults() -> Vec<Binding> {
    static DEFAULT_BINDINGS: std::sync::LazyLock<Vec<Binding>> =
        std::sync::LazyLock::new(|| read(DEFAULTS).0);
    DEFAULT_BINDINGS.clone()
}

/// The default map changed by a keys.toml's text, and every mistake of it.
pub fn apply(text: &str) -> (Keymap, Vec<Problem>) {
    let mut map = Keymap::default();
    let (entries, mut problems) = read(text);
    let mut changed: Vec<(Context, Action, Option<usize>)> = Vec::new();
    for entry in entries {
        let line = line_of(text, entry.context, &entry.action);
        changed.push((entry.context, entry.action.clone(), line));
        match map
            .bindings
            .iter_mut()
            .find(|b| b.context == entry.context && b.action == entry.action)
        {
            Some(b) => b.keys = entry.keys,
            // A binding in a new place goes first: the user's choice wins over a default.
            None => map.bindings.insert(0, entry),
        }
    }
    map.bindings.retain(|b| !b.keys.is_empty());
    problems.extend(conflicts(&map, &changed));
    (map, problems)
}

/// The bindings a keys file's text names, in its order, and what is wrong in it (an unknown
/// place, action or key; a value that is not keys), each at its line.
fn read(text: &str) -> (Vec<Binding>, Vec<Problem>) {
    let doc = match toml_places::parse(text) {
        Ok(d) => d,
        Err(p) => return (Vec::new(), vec![p]),
    };
    let mut problems = Vec::new();
    let mut out = Vec::new();
    let places = || Context::ALL.into_iter().map(|c| c.name());
    for (section, entries) in doc.iter() {
        let at = toml_places::key_span(doc.as_table(), section);
        let Some(context) = Context::ALL.into_iter().find(|c| c.name() == section) else {
            problems.push(Problem::at(
                text,
                at,
                format!(
                    "[{section}] is not a place{} (use {})",
                    toml_places::did_you_mean(section, places()),
                    places().collect::<Vec<_>>().join(", ")
                ),
            ));
            continue;
        };
        let Some(entries) = entries.as_table_like() else {
            problems.push(Problem::at(
                text,
                at,
                format!("[{section}] should be a table of action = keys"),
            ));
            continue;
        };
        for (name, keys) in entries.iter() {
            let at = toml_places::key_span(entries, name);
            let Some(action) = Action::from_name(name) else {
                let known = Action::NAMED
                    .iter()
                    .map(|(n, _)| *n)
                    .chain(Pane::ALL.map(Pane::focus_name));
                problems.push(Problem::at(
                    text,
                    at,
                    format!(
                        "[{section}] {name}: no such action{}",
                        toml_places::did_you_mean(name, known)
                    ),
                ));
                continue;
            };
            let words: Vec<&str> = match keys.as_value() {
                Some(toml_edit::Value::String(s)) => vec![s.value().as_str()],
                Some(toml_edit::Value::Array(a)) => a.iter().filter_map(|v| v.as_str()).collect(),
                _ => {
                    problems.push(Problem::at(
                        text,
                        at,
                        format!("[{section}] {name}: expected a key or a list of keys"),
                    ));
                    continue;
                }
            };
            let mut parsed = Vec::new();
            for w in words {
                match parse_key(w) {
                    Ok(k) => parsed.push(k),
                    Err(e) => problems.push(Problem::at(
                        text,
                        at.clone(),
                        format!("[{section}] {name}: {e}"),
                    )),
                }
            }
            out.push(Binding {
                keys: parsed,
                context,
                action,
            });
        }
    }
    (out, problems)
}

/// The line (from 1) of keys.toml where `[context]` names `action`.
fn line_of(text: &str, context: Context, action: &Action) -> Option<usize> {
    let name = action.name()?;
    let mut section = "";
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            section = rest.split(']').next().unwrap_or("").trim();
        } else if section == context.name()
            && let Some((key, _)) = line.split_once('=')
            && key.trim().trim_matches('"') == name
        {
            return Some(n + 1);
        }
    }
    None
}

/// Keys bound to two actions in places that overlap, where one of them is the user's: which
/// one is used (the first the key table finds) and where each comes from (the line of
/// keys.toml, or the defaults).
fn conflicts(map: &Keymap, changed: &[(Context, Action, Option<usize>)]) -> Vec<Problem> {
    let mut out = Vec::new();
    let users = |b: &Binding| {
        changed
            .iter()
            .find(|(c, a, _)| *c == b.context && *a == b.action)
    };
    let from = |b: &Binding| match users(b) {
        Some((_, _, Some(line))) => format!("[{}], line {line}", b.context.name()),
        Some(_) => format!("[{}] of this file", b.context.name()),
        None => format!("[{}], a default", b.context.name()),
    };
    for (i, a) in map.bindings.iter().enumerate() {
        for b in &map.bindings[i + 1..] {
            if a.action == b.action
                || (users(a).is_none() && users(b).is_none())
                || !overlap(a.context, b.context)
            {
                continue;
            }
            for k in &a.keys {
                if b.keys.contains(k) {
                    out.push(Problem::whole(format!(
                        "{} is bound twice: to {} ({}) and to {} ({}); {} is used where both apply",
                        k.label(),
                        a.action.name().unwrap_or("?"),
                        from(a),
                        b.action.name().unwrap_or("?"),
                        from(b),
                        a.action.name().unwrap_or("?"),
                    )));
                }
            }
        }
    }
    out
}

/// Whether one key press can reach bindings of both places.
fn overlap(a: Context, b: Context) -> bool {
    match (a, b) {
        (x, y) if x == y => true,
        (Context::Anywhere, _) | (_, Context::Anywhere) => true,
        (Context::Global, Context::Pane(p)) | (Context::Pane(p), Context::Global) => {
            p != Pane::Composer
        }
        _ => false,
    }
}

/// "Ctrl-S", "ctrl+s", "F5", "Shift-Tab", "Alt-x", "Enter", "PgDn", "q".
pub fn parse_key(text: &str) -> Result<Key, String> {
    let mut modifiers = KeyModifiers::NONE;
    let mut rest = text.trim();
    loop {
        let lower = rest.to_ascii_lowercase();
        let cut = |p: &str| lower.strip_prefix(p).map(|r| rest.len() - r.len());
        if let Some(n) = cut("ctrl-").or_else(|| cut("ctrl+")) {
            modifiers |= KeyModifiers::CONTROL;
            rest = &rest[n..];
        } else if let Some(n) = cut("alt-").or_else(|| cut("alt+")) {
            modifiers |= KeyModifiers::ALT;
            rest = &rest[n..];
        } else if let Some(n) = cut("shift-").or_else(|| cut("shift+")) {
            modifiers |= KeyModifiers::SHIFT;
            rest = &rest[n..];
        } else {
            break;
        }
    }
    let mut chars = rest.chars();
    let code = match (chars.next(), chars.next()) {
        (Some(c), None) => KeyCode::Char(if modifiers.contains(KeyModifiers::CONTROL) {
            c.to_ascii_lowercase()
        } else {
            c
        }),
        _ => match rest.to_ascii_lowercase().as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            // Shift-Tab is its own key (its Shift is in the name, as a capital's is).
            "tab" if modifiers.contains(KeyModifiers::SHIFT) => {
                modifiers -= KeyModifiers::SHIFT;
                KeyCode::BackTab
            }
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "space" => KeyCode::Char(' '),
            "up" | "↑" => KeyCode::Up,
            "down" | "↓" => KeyCode::Down,
            "left" | "←" => KeyCode::Left,
            "right" | "→" => KeyCode::Right,
            "pgup" | "pageup" => KeyCode::PageUp,
            "pgdn" | "pagedown" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "delete" | "del" => KeyCode::Delete,
            "backspace" => KeyCode::Backspace,
            f if f.len() > 1 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                let n: u8 = f[1..].parse().unwrap_or(0);
                if !(1..=24).contains(&n) {
                    return Err(format!("\"{text}\": F1 to F24"));
                }
                KeyCode::F(n)
            }
            _ => {
                return Err(format!(
                    "\"{text}\" is not a key (e.g. q, Ctrl-S, F5, Shift-Tab, Enter, PgDn)"
                ));
            }
        },
    };
    Ok(Key { code, modifiers })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyEvent;

    #[test]
    fn a_change_is_used_and_shown() {
        let (map, problems) =
            apply("[anywhere]\nsend = [\"F9\", \"ctrl+s\"]\n[global]\nquit = \"x\"\n");
        let problems: Vec<String> = problems.iter().map(Problem::to_string).collect();
        assert_eq!(
            problems,
            [
                "Ctrl-s is bound twice: to send ([anywhere], line 2) and to save ([anywhere], a default); send is used where both apply",
                "x is bound twice: to quit ([global], line 4) and to close-dialogue ([global], a default); quit is used where both apply"
            ]
        );
        assert_eq!(map.keys_of(&Action::Send), "F9 / Ctrl-s");
        let x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
        assert_eq!(
            map.action_for(&x, Pane::Transcript, false),
            Some(Action::Quit)
        );
        let q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(map.action_for(&q, Pane::Transcript, false), None);
        // Help shows the user's keys.
        let global = map
            .groups()
            .into_iter()
            .find(|(s, _)| *s == "Outside the composer")
            .unwrap();
        assert!(global.1.iter().any(|(k, w)| k == "x" && w == "Quit"));
    }

    #[test]
    fn mistakes_are_named_each_with_its_line() {
        let (_, problems) =
            apply("[glbal]\nquit = \"x\"\n[global]\nqiut = \"x\"\nhelp = \"Ctrl-Hyper-x\"\n");
        let problems: Vec<String> = problems.iter().map(|p| p.in_file("keys.toml")).collect();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(
            problems[0].starts_with("keys.toml:1: [glbal] is not a place (did you mean global?)"),
            "{problems:?}"
        );
        assert!(problems.contains(
            &"keys.toml:4: [global] qiut: no such action (did you mean quit?)".to_owned()
        ));
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("keys.toml:5: ") && p.contains("is not a key")),
            "{problems:?}"
        );
        let (_, problems) = apply("[global\n");
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].line, Some(1), "{problems:?}");
    }

    #[test]
    fn the_default_keys_read_without_a_problem() {
        let (bindings, problems) = read(DEFAULTS);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(bindings.iter().all(|b| !b.keys.is_empty()));
        assert_eq!(bindings, defaults());
    }

    #[test]
    fn keys_read_as_they_are_written() {
        for (text, label) in [
            ("F5", "F5"),
            ("Ctrl-S", "Ctrl-s"),
            ("shift-tab", "Shift-Tab"),
            ("PgDn", "PgDn"),
            ("alt+x", "Alt-x"),
            ("space", "Space"),
            ("Q", "Q"),
        ] {
            assert_eq!(parse_key(text).unwrap().label(), label, "{text}");
        }
    }
}
