//! What the explorer was started with and keeps to itself: the theme (and the others there
//! are), the keys, where files go, the user's defaults, the terminal it runs in and the
//! command line's bearer token. Plain data, read at start; only the theme changes in a run.

use crate::client::defaults::Overrides;
use crate::tui::action::Keymap;
use crate::tui::app::Paths;
use crate::tui::theme::Theme;

pub struct Config {
    pub theme: Theme,
    /// Every theme there is (built in and the user's).
    pub themes: Vec<String>,
    pub keymap: Keymap,
    pub paths: Paths,
    /// Defaults the user set on the command line.
    pub overrides: Overrides,
    /// Inside tmux, where OSC 52 reaches the clipboard only with set-clipboard on.
    pub in_tmux: bool,
    /// The command line's bearer token (`Options::token`).
    pub token: Option<String>,
    /// The last run's copy of its unsaved turns, as found at start: a quit that leaves
    /// unsaved turns of its own replaces it, and says so.
    pub last_run: Option<crate::tui::persist::LastRun>,
}
