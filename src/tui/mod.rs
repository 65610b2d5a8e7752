//! The explorer: state, update and view apart.
pub mod action;
pub mod app;
pub mod composer;
pub mod dialogue;
pub mod log;
pub mod overlay;
pub mod persist;
pub mod run;
pub mod theme;
pub mod update;
pub mod view;
