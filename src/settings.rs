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
    /// The user's settings, and why the file could not be used if it could not (the defaults
    /// are used then).
    pub fn current() -> (Settings, Option<String>) {
        match config_dir().map(|d| Settings::read(&d)) {
            Some(Ok(s)) => (s, None),
            Some(Err(e)) => (
                Settings::default(),
                Some(format!("{e}; the defaults are used")),
            ),
            None => (Settings::default(), None),
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

    /// The settings in `dir` (none when there is no file).
    pub fn load(dir: &Path) -> Settings {
        Settings::read(dir).unwrap_or_default()
    }

    /// The settings in `dir`, or why the file cannot be used (with its place).
    pub fn read(dir: &Path) -> Result<Settings, String> {
        let path = dir.join(FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e.to_string().trim()))
    }
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
            Settings::read(dir.path()).map(|s| s.timeout)
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
            e.contains(FILE) && e.contains("line 2") && e.contains("'soon' is not a duration"),
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
        let s = Settings::read(dir.path()).unwrap();
        assert_eq!(
            (s.theme.as_deref(), s.timeout),
            (Some("light"), Some(Duration::from_secs(60)))
        );
        std::fs::write(dir.path().join(FILE), "thme = 1\n").unwrap();
        assert!(Settings::read(dir.path()).unwrap_err().contains("thme"));
    }
}
