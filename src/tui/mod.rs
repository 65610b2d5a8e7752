//! The explorer, in three parts that know nothing of each other's insides: the state and its
//! pure update (`app`, `update`: events in, effects out), the view (`view`: the state drawn,
//! where things went returned), and the runner (`run`: the engine, the tasks, the files and
//! the terminal, turning effects into events).
pub mod action;
pub mod app;
pub mod ask;
pub mod certify;
pub mod composer;
pub mod config;
pub mod dialogue;
pub mod effect;
pub mod event;
pub mod export;
pub mod hits;
pub mod ids;
pub mod keys_file;
pub mod layout;
pub mod log;
pub mod notices;
pub mod overlay;
pub mod persist;
pub mod recovery;
pub mod resources;
pub mod run;
pub mod screen;
pub mod search;
pub mod session_file;
pub mod sidebar;
#[doc(hidden)]
pub mod testing;
pub mod theme;
pub mod update;
pub mod view;
pub mod watch;
pub mod workspace;
