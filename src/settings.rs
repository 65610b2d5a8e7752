//! The user's settings file, `$XDG_CONFIG_HOME/bkn-explorer/config.toml`: what the explorer
//! and the commands start with when the command line does not say. The explorer remembers a
//! choice there (the theme) without disturbing the rest of the file (comments, order).
//!
//! ```toml
//! theme = "light"          # the explorer's theme
//! timeout = "1m"           # how long to wait for a server (e.g. 30s, 2m, 500ms; plain
//!                          # numbers are seconds)
//! servers = "~/mcp.json"   # a servers file used when none is named
//! data-dir = "~/.bkn"      # where the autosave, recovery and copies go
//! ```

use crate::toml_places::{self, Problem};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const FILE: &str = "config.toml";

/// How long to wait for a server when neither the command line nor the file says.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Settings {
    pub theme: Option<String>,
    /// How long to wait for a server, written as on the command line (`--timeout`).
    #[serde(
        default,
        deserialize_with = "crate::duration::optional_positive_in_file"
    )]
    pub timeout: Option<Duration>,
    pub servers: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    /// The MCP generation to speak when neither the command line nor a server's entry names
    /// one: auto, 2026-07-28 or 2025-11-25.
    pub protocol: Option<crate::client::generation::ProtocolChoice>,
}

/// The configuration directory: `$BKN_EXPLORER_CONFIG_DIR`, else
/// `$XDG_CONFIG_HOME/bkn-explorer` (`~/.config/bkn-explorer`).
pub fn config_dir() -> Option<PathBuf> {
    std::env::var_os("BKN_EXPLORER_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::config_dir().map(|d| d.join("bkn-explorer")))
}

/// `~/` at the start of a path is the home directory.
pub fn expand_home(path: &Path) -> PathBuf {
    match path.strip_prefix("~") {
        Ok(rest) => dirs::home_dir()
            .map(|h| h.join(rest))
            .unwrap_or_else(|| path.to_owned()),
        Err(_) => path.to_owned(),
    }
}

/// Whether colours are wanted: not when `NO_COLOR` is set to anything but the empty string
/// (<https://no-color.org>).
pub fn colour_wanted() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

impl Settings {
    /// The user's settings, and each mistake of the file (`FILE:LINE: what`): a setting
    /// with a mistake is left out (its default stands), the others are kept.
    pub fn current() -> (Settings, Vec<String>) {
        match config_dir() {
            Some(d) => Settings::read(&d),
            None => (Settings::default(), Vec::new()),
        }
    }

    /// How long to wait for a server: the command line's, else the file's, else 30 s (both
    /// readers refuse 0).
    pub fn timeout_or(&self, given: Option<Duration>) -> Duration {
        given.or(self.timeout).unwrap_or(DEFAULT_TIMEOUT)
    }

    /// The MCP generation when nothing else names one: the file's, else auto.
    pub fn protocol(&self) -> crate::client::generation::ProtocolChoice {
        self.protocol.unwrap_or_default()
    }

    /// The servers file named in the settings, `~` expanded.
    pub fn servers_file(&self) -> Option<PathBuf> {
        self.servers.as_deref().map(expand_home)
    }

    /// Where the autosave, recovery and copies go: `$BKN_EXPLORER_DATA_DIR`, else the file's
    /// `data-dir`, else `$XDG_DATA_HOME/bkn-explorer`.
    pub fn data_dir(&self) -> Option<PathBuf> {
        std::env::var_os("BKN_EXPLORER_DATA_DIR")
            .map(PathBuf::from)
            .or_else(|| self.data_dir.as_deref().map(expand_home))
            .or_else(|| dirs::data_dir().map(|d| d.join("bkn-explorer")))
    }

    /// The settings in `dir` (none when there is no file), without the mistakes.
    pub fn load(dir: &Path) -> Settings {
        Settings::read(dir).0
    }

    /// The settings in `dir`, each entry checked on its own (as themes and keys.toml are): a
    /// bad value or an unknown name is said with its line and left out, every good setting
    /// is kept. Only a file that is no TOML at all (or cannot be read) gives the defaults.
    pub fn read(dir: &Path) -> (Settings, Vec<String>) {
        let path = dir.join(FILE);
        let origin = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return (Settings::default(), Vec::new());
            }
            Err(e) => {
                return (
                    Settings::default(),
                    vec![format!("{origin}: {e}; the defaults are used")],
                );
            }
        };
        let (good, problems) = match toml_places::parse(&text) {
            Ok(doc) => entries(&text, &doc),
            Err(p) => (
                String::new(),
                vec![Problem {
                    what: format!("{}; the defaults are used", p.what),
                    ..p
                }],
            ),
        };
        // Each entry of `good` was read alone already: together they are read the same way.
        let settings = toml::from_str(&good).unwrap_or_default();
        let said = problems.iter().map(|p| p.in_file(&origin)).collect();
        (settings, said)
    }
}

/// The names `config.toml` knows, as written there.
const NAMES: [&str; 5] = ["theme", "timeout", "servers", "data-dir", "protocol"];

/// The entries of the file that read as settings, as TOML text (`name = value` lines), and a
/// problem for each of the others, at its line.
fn entries(text: &str, doc: &toml_edit::Document<&str>) -> (String, Vec<Problem>) {
    let mut good = String::new();
    let mut problems = Vec::new();
    for (name, item) in doc.as_table().iter() {
        let key = toml_places::key_span(doc.as_table(), name);
        if !NAMES.contains(&name) {
            problems.push(Problem::at(
                text,
                key,
                format!(
                    "{name} is not a setting{}; left out (the settings are {})",
                    toml_places::did_you_mean(name, NAMES),
                    NAMES.join(", ")
                ),
            ));
            continue;
        }
        let Some(value) = item.span().filter(|_| item.is_value()).map(|s| &text[s]) else {
            problems.push(Problem::at(
                text,
                key,
                format!("{name} is a table, not a value; left out (the default stands)"),
            ));
            continue;
        };
        let entry = format!("{name} = {value}\n");
        match toml::from_str::<Settings>(&entry) {
            Ok(_) => good.push_str(&entry),
            Err(e) => problems.push(Problem::at(
                text,
                item.span(),
                format!(
                    "{name} = {value}: {}; left out (the default stands)",
                    e.message().trim().replace('\n', " ")
                ),
            )),
        }
    }
    (good, problems)
}

/// Sets one setting, keeping the rest of the file as the user wrote it.
pub fn remember(dir: &Path, key: &str, value: &str) -> std::io::Result<()> {
    let path = dir.join(FILE);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text.parse().unwrap_or_default();
    doc[key] = toml_edit::value(value);
    std::fs::create_dir_all(dir)?;
    crate::session::atomic::write(&path, doc.to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `timeout` is written as `--timeout` is ("90s", "500ms", or seconds); one that is no
    /// duration, or zero, is refused with the file and the line.
    #[test]
    fn the_timeout_is_a_duration_as_on_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let timeout = |text: &str| {
            std::fs::write(dir.path().join(FILE), text).unwrap();
            let (s, problems) = Settings::read(dir.path());
            if problems.is_empty() {
                Ok(s.timeout)
            } else {
                Err(problems.join("\n"))
            }
        };
        assert_eq!(
            timeout("timeout = \"90s\"\n"),
            Ok(Some(Duration::from_secs(90)))
        );
        assert_eq!(
            timeout("timeout = \"500ms\"\n"),
            Ok(Some(Duration::from_millis(500)))
        );
        assert_eq!(timeout("timeout = 45\n"), Ok(Some(Duration::from_secs(45))));
        let e = timeout("theme = \"light\"\ntimeout = \"soon\"\n").unwrap_err();
        assert!(
            e.contains(&format!("{FILE}:2: ")) && e.contains("'soon' is not a duration"),
            "{e}"
        );
        let e = timeout("timeout = 0\n").unwrap_err();
        assert!(e.contains(FILE) && e.contains("more than 0"), "{e}");
        let s = Settings::default();
        assert_eq!(s.timeout_or(None), DEFAULT_TIMEOUT);
        assert_eq!(
            s.timeout_or(Some(Duration::from_millis(500))),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn remembering_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE),
            "# my settings\ntimeout = 60 # slow lab\n",
        )
        .unwrap();
        remember(dir.path(), "theme", "light").unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert!(
            text.contains("# my settings") && text.contains("# slow lab"),
            "{text}"
        );
        let (s, problems) = Settings::read(dir.path());
        assert_eq!(
            (s.theme.as_deref(), s.timeout),
            (Some("light"), Some(Duration::from_secs(60)))
        );
        assert!(problems.is_empty(), "{problems:?}");
    }

    /// `NAMES` is every field `Settings` reads, no more and no fewer: serde's own list (in
    /// its error for an unknown name) is the one source, and this holds the two equal.
    #[test]
    fn the_names_said_are_the_settings_read() {
        let e = toml::from_str::<Settings>("not-a-setting = 1\n")
            .unwrap_err()
            .to_string();
        let listed = e
            .split("expected one of")
            .nth(1)
            .unwrap_or_else(|| panic!("{e}"));
        let serde_names: Vec<&str> = listed.split('`').skip(1).step_by(2).collect();
        assert_eq!(serde_names, NAMES, "{e}");
    }

    /// One bad value leaves the rest of the file in force: each mistake is one line with its
    /// place (as a theme's and keys.toml's are), never the parser's multi-line snippet, and
    /// the good settings stay.
    #[test]
    fn a_bad_setting_is_left_out_and_the_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE),
            "theme = \"mine\"\ntimeout = \"0\"\nthme = \"light\"\nprotocol = \"1999\"\n\
             data-dir = \"/tmp/bkn\"\n",
        )
        .unwrap();
        let (s, problems) = Settings::read(dir.path());
        assert_eq!(s.theme.as_deref(), Some("mine"));
        assert_eq!(s.data_dir.as_deref(), Some(Path::new("/tmp/bkn")));
        assert_eq!((s.timeout, s.protocol), (None, None));
        assert_eq!(problems.len(), 3, "{problems:#?}");
        for (p, line) in problems
            .iter()
            .zip([":2: timeout", ":3: thme", ":4: protocol"])
        {
            assert!(p.contains(&format!("{FILE}{line}")), "{p}");
            assert!(!p.contains('\n') && !p.contains("TOML parse error"), "{p}");
        }
        assert!(problems[0].contains("more than 0"), "{}", problems[0]);
        assert!(
            problems[1].contains("did you mean theme?"),
            "{}",
            problems[1]
        );
        // A file that is no TOML: its line, and the defaults.
        std::fs::write(dir.path().join(FILE), "theme = \"mine\"\ntimeout = \n").unwrap();
        let (s, problems) = Settings::read(dir.path());
        assert_eq!(s, Settings::default());
        assert!(
            problems.len() == 1 && problems[0].contains(&format!("{FILE}:2: ")),
            "{problems:?}"
        );
    }
}
