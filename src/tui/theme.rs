//! Themes: every colour the explorer uses, by name. The built-in themes are `themes/*.toml`
//! (embedded); a user theme in `<config dir>/bkn-explorer/themes/NAME.toml` may set only some
//! colours and take the rest from the theme it `extends` (dark by default):
//!
//! ```toml
//! name = "mine"
//! extends = "light"
//! [colors]
//! pa_clash = "#ff00ff"
//! ```
//!
//! Colours are ratatui colour names (`red`, `lightblue`), `#rrggbb`, or an ANSI index (`208`).

use crate::protocol::dac::{CommitmentState, Overall, PaStatus};
use crate::protocol::message::Outcome;
use crate::toml_places::{self, Problem};
use crate::tui::notices::Severity;
use ratatui::style::{Color, Modifier, Style};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Declares the colour keys once: the struct, the list of names, and setting one by name.
macro_rules! colors {
    ($($(#[doc = $doc:literal])* $key:ident),* $(,)?) => {
        /// Every colour the explorer uses.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct Colors {
            $($(#[doc = $doc])* pub $key: Color,)*
        }

        impl Colors {
            /// The names of every key, as theme files write them.
            pub const KEYS: &'static [&'static str] = &[$(stringify!($key)),*];

            fn set(&mut self, key: &str, color: Color) -> bool {
                match key {
                    $(stringify!($key) => self.$key = color,)*
                    _ => return false,
                }
                true
            }

            /// Every colour, by name.
            pub fn all(&self) -> Vec<(&'static str, Color)> {
                vec![$((stringify!($key), self.$key)),*]
            }

            fn blank() -> Colors {
                Colors { $($key: Color::Reset,)* }
            }
        }
    };
}

colors! {
    /// The screen.
    background, foreground,
    /// Secondary text: hints, labels, timestamps.
    muted,
    /// What draws the eye: the selected tab, the spinner, key names.
    accent,
    border, border_focused, title, title_focused,
    selection_bg, selection_fg,
    tab_active_fg, tab_active_bg, tab_inactive,
    status_bg, status_fg, key_hint,
    error, warning, success, info,
    /// A server's or dialogue's state.
    connected, connecting, failed, recorded,
    outcome_answered, outcome_partial, outcome_not_answered, tool_error,
    pa_ack, pa_clash, pa_faulty_req, pa_inc_id, pa_inc_dq, pa_ins_rights, pa_ins_value, pa_loc_oor, pa_post_ref, pa_qual_ns,
    overall_feasible, overall_partial, overall_infeasible,
    commitment_retained, commitment_released, commitment_conflicting,
    finding, conforms,
    gauge, gauge_bg,
    json_key, json_string, json_number, json_bool, json_null, json_punct,
    log_sent, log_received, log_server, log_progress, log_stderr, log_client,
    /// Background of lines that differ between a recorded and a replayed reply.
    diff_bg,
    diff_recorded, diff_replayed,
    /// The composer's fields.
    input_bg, completion,
}

pub const BUILT_IN: [(&str, &str); 3] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Theme {
    pub name: String,
    pub colors: Colors,
    /// No colours at all (`NO_COLOR`): the terminal's own, with the selection in reverse video.
    pub monochrome: bool,
}

/// Why a theme could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThemeError(pub String);

impl fmt::Display for ThemeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ThemeError {}

/// The top level of a theme file: its name, the theme it extends (and where that is said)
/// and its `[colors]` table; anything else is a problem said with its line.
struct Settings<'a> {
    name: Option<String>,
    extends: Option<(String, Option<std::ops::Range<usize>>)>,
    colors: Option<&'a dyn toml_edit::TableLike>,
}

impl<'a> Settings<'a> {
    fn read(root: &'a toml_edit::Table, text: &str, problems: &mut Vec<Problem>) -> Settings<'a> {
        let mut settings = Settings {
            name: None,
            extends: None,
            colors: None,
        };
        for (key, item) in root.iter() {
            let at = toml_places::key_span(root, key);
            match (key, item.as_str(), item.as_table_like()) {
                ("name", Some(v), _) => settings.name = Some(v.to_owned()),
                ("extends", Some(v), _) => {
                    settings.extends = Some((v.to_owned(), item.span().or(at)))
                }
                ("colors", _, Some(t)) => settings.colors = Some(t),
                ("name" | "extends", ..) => problems.push(Problem::at(
                    text,
                    at,
                    format!("{key} should be a name in quotes"),
                )),
                ("colors", ..) => problems.push(Problem::at(
                    text,
                    at,
                    "colors should be a table ([colors], then key = \"colour\")",
                )),
                _ => problems.push(Problem::at(
                    text,
                    at,
                    format!(
                        "{key} is not a theme setting{} (a theme has name, extends and [colors])",
                        toml_places::did_you_mean(key, ["name", "extends", "colors"])
                    ),
                )),
            }
        }
        settings
    }
}

impl Colors {
    /// Sets the colours a `[colors]` table gives; every unknown key and every value that is
    /// no colour is a problem said with its line (both, when both are wrong). Returns the keys
    /// set.
    fn set_from(
        &mut self,
        table: Option<&dyn toml_edit::TableLike>,
        text: &str,
        problems: &mut Vec<Problem>,
    ) -> Vec<&'static str> {
        let mut set = Vec::new();
        for (key, item) in table.iter().flat_map(|t| t.iter()) {
            let at = table.and_then(|t| toml_places::key_span(t, key));
            let known = Colors::KEYS.iter().copied().find(|k| *k == key);
            if known.is_none() {
                problems.push(Problem::at(
                    text,
                    at.clone(),
                    format!(
                        "colors.{key} is not a colour this explorer uses{}",
                        toml_places::did_you_mean(key, Colors::KEYS.iter().copied())
                    ),
                ));
            }
            let value = item.as_str();
            match (value.map(Color::from_str), known) {
                (Some(Ok(color)), Some(key)) => {
                    self.set(key, color);
                    set.push(key);
                }
                (Some(Ok(_)), None) => {}
                _ => problems.push(Problem::at(
                    text,
                    item.span().or(at),
                    format!(
                        "colors.{key} = {} is not a colour (a name like red, #rrggbb, or 0-255)",
                        value.map_or_else(
                            || item.to_string().trim().to_owned(),
                            |v| format!("\"{v}\"")
                        )
                    ),
                )),
            }
        }
        set
    }

    /// A theme that extends none sets every colour: the ones it left out, if any.
    fn missing(set: &[&str]) -> Option<Problem> {
        let missing: Vec<&str> = Colors::KEYS
            .iter()
            .copied()
            .filter(|k| !set.contains(k))
            .collect();
        (!missing.is_empty()).then(|| {
            Problem::whole(format!(
                "a theme that extends none must set every colour; missing: {} (or add extends = \"dark\")",
                missing.join(", ")
            ))
        })
    }
}

impl Theme {
    /// The theme of `NO_COLOR`: every colour is the terminal's own; what colour would say
    /// (the selection, the focus) is said by reverse video and bold.
    pub fn no_color() -> Theme {
        Theme {
            name: "no-color".into(),
            colors: Colors::blank(),
            monochrome: true,
        }
    }

    /// The default theme.
    pub fn dark() -> Theme {
        Theme::built_in("dark").expect("the dark theme is built in (tested)")
    }

    pub fn built_in(name: &str) -> Result<Theme, ThemeError> {
        let text = BUILT_IN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| ThemeError(format!("no built-in theme {name}")))?;
        Theme::parse(text, name, None, &mut Vec::new())
    }

    /// Parses a theme file's text. `origin` names it in errors; `user_dir` is where themes it
    /// extends are looked for besides the built-in ones. Every mistake of the file is said at
    /// once, each with its line (`toml_places`, as keys.toml's are): a setting or a colour key
    /// not known (with the closest known one), a theme to extend that is not there, a value
    /// that is not a colour.
    pub fn parse(
        text: &str,
        origin: &str,
        user_dir: Option<&Path>,
        seen: &mut Vec<String>,
    ) -> Result<Theme, ThemeError> {
        let doc = toml_places::parse(text).map_err(|p| ThemeError(p.in_file(origin)))?;
        let mut problems = Vec::new();
        let settings = Settings::read(doc.as_table(), text, &mut problems);
        let name = settings.name.unwrap_or_else(|| origin.to_owned());
        let mut colors = match &settings.extends {
            Some((base, at)) => {
                Theme::base_colors(base, at, &name, user_dir, seen, text, &mut problems)
            }
            None => Colors::blank(),
        };
        let set = colors.set_from(settings.colors, text, &mut problems);
        if settings.extends.is_none() {
            problems.extend(Colors::missing(&set));
        }
        if !problems.is_empty() {
            // In the file's order (the whole file's last).
            problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
            let said: Vec<String> = problems.iter().map(|p| p.in_file(origin)).collect();
            return Err(ThemeError(said.join("; ")));
        }
        Ok(Theme {
            name,
            colors,
            monochrome: false,
        })
    }

    /// The colours of the theme `base` that a theme extends (blank, with the problem said,
    /// when it names no theme or extends the one that extends it).
    fn base_colors(
        base: &str,
        at: &Option<std::ops::Range<usize>>,
        name: &str,
        user_dir: Option<&Path>,
        seen: &mut Vec<String>,
        text: &str,
        problems: &mut Vec<Problem>,
    ) -> Colors {
        if seen.iter().any(|s| s == base) {
            problems.push(Problem::at(
                text,
                at.clone(),
                format!("extends {base}, which extends it in turn"),
            ));
            return Colors::blank();
        }
        seen.push(name.to_owned());
        match Theme::find(base, user_dir, seen) {
            Ok(t) => t.colors,
            Err(e) => {
                problems.push(Problem::at(
                    text,
                    at.clone(),
                    format!("extends = \"{base}\": {e}"),
                ));
                Colors::blank()
            }
        }
    }

    /// A theme by name: the user's directory first, then the built-in ones.
    pub fn find(
        name: &str,
        user_dir: Option<&Path>,
        seen: &mut Vec<String>,
    ) -> Result<Theme, ThemeError> {
        if let Some(dir) = user_dir {
            let path = dir.join(format!("{name}.toml"));
            if path.exists() {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| ThemeError(format!("{}: {e}", path.display())))?;
                return Theme::parse(&text, &path.display().to_string(), Some(dir), seen);
            }
        }
        if name == "no-color" {
            return Ok(Theme::no_color());
        }
        match BUILT_IN.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => Theme::parse(text, name, user_dir, seen),
            None => Err(ThemeError(format!(
                "no theme {name}{}: the built-in ones are {}{}",
                // Not the theme that asks for it (the user's file of that name).
                toml_places::did_you_mean(
                    name,
                    Theme::names(user_dir)
                        .iter()
                        .map(String::as_str)
                        .filter(|n| !seen.iter().any(|s| s == n))
                ),
                BUILT_IN
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", "),
                user_dir
                    .map(|d| format!(", and user themes go in {}", d.display()))
                    .unwrap_or_default()
            ))),
        }
    }

    /// A theme by name, or the default with the reason it could not be used.
    pub fn load_or_default(name: &str, user_dir: Option<&Path>) -> (Theme, Option<String>) {
        match Theme::find(name, user_dir, &mut Vec::new()) {
            Ok(t) => (t, None),
            Err(e) => (Theme::dark(), Some(format!("{e}; using the dark theme"))),
        }
    }

    /// The names of every theme: the built-in ones and the user's.
    pub fn names(user_dir: Option<&Path>) -> Vec<String> {
        let mut names: Vec<String> = BUILT_IN.iter().map(|(n, _)| n.to_string()).collect();
        names.push("no-color".into());
        if let Some(dir) = user_dir
            && let Ok(entries) = std::fs::read_dir(dir)
        {
            let mut user: Vec<String> = entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_suffix(".toml"))
                        .map(str::to_owned)
                })
                .filter(|n| !names.contains(n))
                .collect();
            user.sort();
            names.extend(user);
        }
        names
    }

    /// Where user themes live.
    pub fn user_dir() -> Option<PathBuf> {
        crate::settings::config_dir().map(|d| d.join("themes"))
    }

    // Styles the views use, so that every colour comes from the theme.

    pub fn base(&self) -> Style {
        Style::default()
            .fg(self.colors.foreground)
            .bg(self.colors.background)
    }

    pub fn fg(&self, color: Color) -> Style {
        Style::default().fg(color)
    }

    pub fn muted(&self) -> Style {
        self.fg(self.colors.muted)
    }

    pub fn bold(&self, color: Color) -> Style {
        self.fg(color).add_modifier(Modifier::BOLD)
    }

    pub fn selected(&self) -> Style {
        if self.monochrome {
            return Style::default().add_modifier(Modifier::REVERSED);
        }
        Style::default()
            .fg(self.colors.selection_fg)
            .bg(self.colors.selection_bg)
    }

    pub fn border(&self, focused: bool) -> Style {
        self.fg(if focused {
            self.colors.border_focused
        } else {
            self.colors.border
        })
    }

    pub fn title(&self, focused: bool) -> Style {
        if focused {
            self.bold(self.colors.title_focused)
        } else {
            self.fg(self.colors.title)
        }
    }

    /// A notice's or message's colour.
    pub fn severity(&self, severity: Severity) -> Color {
        let c = &self.colors;
        match severity {
            Severity::Info => c.info,
            Severity::Success => c.success,
            Severity::Warning => c.warning,
            Severity::Error => c.error,
        }
    }

    pub fn pa_status(&self, status: PaStatus) -> Color {
        let c = &self.colors;
        match status {
            PaStatus::Ack => c.pa_ack,
            PaStatus::Clash => c.pa_clash,
            PaStatus::FaultyReq => c.pa_faulty_req,
            PaStatus::IncID => c.pa_inc_id,
            PaStatus::IncDQ => c.pa_inc_dq,
            PaStatus::InsRights => c.pa_ins_rights,
            PaStatus::InsValue => c.pa_ins_value,
            PaStatus::LocOOR => c.pa_loc_oor,
            PaStatus::PostRef => c.pa_post_ref,
            PaStatus::QualNS => c.pa_qual_ns,
        }
    }

    pub fn overall(&self, overall: Overall) -> Color {
        match overall {
            Overall::Feasible => self.colors.overall_feasible,
            Overall::PartiallyFeasible => self.colors.overall_partial,
            Overall::Infeasible => self.colors.overall_infeasible,
        }
    }

    pub fn outcome(&self, outcome: Outcome) -> Color {
        match outcome {
            Outcome::Answered => self.colors.outcome_answered,
            Outcome::PartiallyAnswered => self.colors.outcome_partial,
            Outcome::NotAnswered => self.colors.outcome_not_answered,
        }
    }

    /// The colour of an Outcome as a message wrote it (a value no Outcome has: the error
    /// colour, the text shown as it came).
    pub fn outcome_text(&self, outcome: &str) -> Color {
        Outcome::parse(outcome)
            .map(|o| self.outcome(o))
            .unwrap_or(self.colors.error)
    }

    pub fn commitment(&self, state: CommitmentState) -> Color {
        match state {
            CommitmentState::Retained => self.colors.commitment_retained,
            CommitmentState::Released => self.colors.commitment_released,
            CommitmentState::Conflicting => self.colors.commitment_conflicting,
        }
    }
}

/// WCAG 2 contrast ratio of two colours given as `#rrggbb` (named and indexed colours look
/// different in each terminal: no ratio can be computed for them).
pub fn contrast_ratio(a: Color, b: Color) -> Option<f64> {
    fn luminance(c: Color) -> Option<f64> {
        let Color::Rgb(r, g, b) = c else { return None };
        let channel = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.040_45 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        Some(0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b))
    }
    let (la, lb) = (luminance(a)?, luminance(b)?);
    Some((la.max(lb) + 0.05) / (la.min(lb) + 0.05))
}

impl Theme {
    /// The contrast a shipped theme promises for text: AA, or AAA for high-contrast.
    pub fn promised_contrast(&self) -> f64 {
        if self.name == "high-contrast" {
            7.0
        } else {
            4.5
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NO_COLOR's theme draws no colour at all; the selection is still seen (reverse video),
    /// and it is chosen by name like any other.
    #[test]
    fn no_color_has_no_colour_and_still_shows_the_selection() {
        let t = Theme::load_or_default("no-color", None).0;
        assert!(t.monochrome);
        assert!(t.colors.all().iter().all(|(_, c)| *c == Color::Reset));
        assert!(t.selected().add_modifier.contains(Modifier::REVERSED));
        assert!(Theme::names(None).contains(&"no-color".to_owned()));
    }

    /// Every colour a theme defines, on every background the views draw it on, reaches the
    /// contrast the theme promises (3:1 for borders and the gauge's empty part, which are not
    /// text). The snapshot tests check every cell of every drawn state as well.
    #[test]
    fn every_text_colour_is_readable_on_its_backgrounds() {
        let backgrounds = ["background", "selection_bg", "input_bg", "status_bg"];
        let own_background = [
            ("selection_fg", "selection_bg"),
            ("tab_active_fg", "tab_active_bg"),
            ("status_fg", "status_bg"),
            ("diff_recorded", "diff_bg"),
            ("diff_replayed", "diff_bg"),
        ];
        let mut failures = Vec::new();
        for (name, _) in BUILT_IN {
            let theme = Theme::built_in(name).unwrap();
            let all: std::collections::BTreeMap<&str, Color> =
                theme.colors.all().into_iter().collect();
            for (key, color) in &all {
                if backgrounds.contains(key) || key.ends_with("_bg") && *key != "gauge_bg" {
                    continue;
                }
                let need = if matches!(*key, "border" | "gauge_bg") {
                    3.0
                } else {
                    theme.promised_contrast()
                };
                let on: Vec<&str> = match own_background.iter().find(|(k, _)| k == key) {
                    Some((_, bg)) => vec![*bg],
                    None if *key == "gauge_bg" => vec!["background"],
                    None => backgrounds.to_vec(),
                };
                for bg in on {
                    let ratio = contrast_ratio(*color, all[bg])
                        .unwrap_or_else(|| panic!("{name}: {key} or {bg} is not #rrggbb"));
                    if ratio < need {
                        failures.push(format!(
                            "{name}: {key} on {bg} is {ratio:.2}:1, below {need}"
                        ));
                    }
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn built_in_themes_set_every_colour() {
        for (name, _) in BUILT_IN {
            let theme = Theme::built_in(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(theme.colors.all().len(), Colors::KEYS.len(), "{name}");
        }
    }

    #[test]
    fn user_themes_override_some_keys_and_errors_are_clear() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("mine.toml"),
            "extends = \"high-contrast\"\n[colors]\npa_clash = \"#ff00ff\"\n",
        )
        .unwrap();
        let (theme, warning) = Theme::load_or_default("mine", Some(dir.path()));
        assert_eq!(warning, None);
        assert_eq!(theme.colors.pa_clash, Color::Rgb(255, 0, 255));
        assert_eq!(
            theme.colors.pa_ack,
            Theme::built_in("high-contrast").unwrap().colors.pa_ack
        );
        assert!(Theme::names(Some(dir.path())).contains(&"mine".to_owned()));

        std::fs::write(dir.path().join("bad.toml"), "[colors]\npa_clsh = \"red\"\n").unwrap();
        let (theme, warning) = Theme::load_or_default("bad", Some(dir.path()));
        assert_eq!(theme.name, "dark");
        let warning = warning.unwrap();
        assert!(
            warning.contains("pa_clsh") && warning.contains("did you mean pa_clash?"),
            "{warning}"
        );

        std::fs::write(
            dir.path().join("ugly.toml"),
            "extends = \"dark\"\n[colors]\naccent = \"reddish\"\n",
        )
        .unwrap();
        let (_, warning) = Theme::load_or_default("ugly", Some(dir.path()));
        assert!(warning.unwrap().contains("\"reddish\" is not a colour"));

        std::fs::write(dir.path().join("broken.toml"), "[colors\n").unwrap();
        let (_, warning) = Theme::load_or_default("broken", Some(dir.path()));
        assert!(warning.unwrap().contains("broken.toml"));

        // Two errors: both said, each with its line, in the order of the file's keys.
        std::fs::write(
            dir.path().join("two.toml"),
            "extends = \"dark\"\n[colors]\npa_clash = \"#ff00zz\"\nnot_a_color = \"red\"\n",
        )
        .unwrap();
        let (_, warning) = Theme::load_or_default("two", Some(dir.path()));
        let warning = warning.unwrap();
        assert!(
            warning.contains("two.toml:4: colors.not_a_color is not a colour this explorer uses"),
            "{warning}"
        );
        assert!(
            warning.contains("two.toml:3: colors.pa_clash = \"#ff00zz\" is not a colour"),
            "{warning}"
        );

        let (_, warning) = Theme::load_or_default("nope", Some(dir.path()));
        assert!(warning.unwrap().contains("no theme nope"));
    }

    /// "Every error, with its line": a theme to extend that is not there does not hide the
    /// rest, and a key not known is said as such even when its value is no colour either.
    #[test]
    fn every_mistake_of_a_theme_is_said_at_once_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(
            &path,
            "name = \"mine\"\nextends = \"lite\"\ncolour = 3\n[colors]\naccent = \"reddish\"\nnope = \"#fff\"\nbordr = \"red\"\n",
        )
        .unwrap();
        let (theme, warning) = Theme::load_or_default("mine", Some(dir.path()));
        assert_eq!(theme.name, "dark");
        let warning = warning.unwrap();
        let file = path.display().to_string();
        let said: Vec<&str> = warning
            .trim_end_matches("; using the dark theme")
            .split("; ")
            .collect();
        let expected = [
            format!(
                "{file}:2: extends = \"lite\": no theme lite: the built-in ones are dark, light"
            ),
            format!("{file}:3: colour is not a theme setting (did you mean colors?)"),
            format!("{file}:5: colors.accent = \"reddish\" is not a colour"),
            format!("{file}:6: colors.nope is not a colour this explorer uses"),
            format!("{file}:6: colors.nope = \"#fff\" is not a colour"),
            format!(
                "{file}:7: colors.bordr is not a colour this explorer uses (did you mean border?)"
            ),
        ];
        assert_eq!(said.len(), expected.len(), "{warning}");
        for (said, expected) in said.iter().zip(&expected) {
            assert!(
                said.starts_with(expected.as_str()),
                "{said}\n  expected: {expected}"
            );
        }
    }
}
