//! The common fields a client fills into Requests the user did not write in full (MInstance,
//! UEnvironment, SessionID), and where each came from. Against a server it has never seen, a
//! client takes the M-Instance the server publishes (MCP-BINDING section 1: `dac://domain`,
//! `usr://users`), so that its first Request is answered; the user can override any of them
//! (on the command line, in the explorer, in a session).

use crate::protocol::message::CommonDefaults;
use crate::protocol::resources::Published;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a default value came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Origin {
    /// This program's own, matching its reference servers.
    BuiltIn,
    /// Published by the server in a resource (its URI).
    Server(String),
    /// Recorded in the session the dialogue came from.
    Session,
    /// Set by the user: a command-line option or the explorer.
    User(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built in"),
            Origin::Server(uri) => write!(f, "from the server's {uri}"),
            Origin::Session => f.write_str("from the session"),
            Origin::User(how) => write!(f, "set by you {how}"),
        }
    }
}

/// Values the user set, each replacing what the server publishes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub m_instance: Option<String>,
    pub u_environment: Option<String>,
    pub session_id: Option<String>,
    /// How the user set them, for `Origin::User`, as the end of "set by you …" (e.g. "on
    /// the command line").
    pub how: String,
}

impl Overrides {
    /// These overrides, with what `later` sets in their place (a server's over the command
    /// line's, a dialogue's over its server's).
    pub fn then(&self, later: &Overrides) -> Overrides {
        let sets = later.m_instance.is_some()
            || later.u_environment.is_some()
            || later.session_id.is_some();
        Overrides {
            m_instance: later.m_instance.clone().or_else(|| self.m_instance.clone()),
            u_environment: later
                .u_environment
                .clone()
                .or_else(|| self.u_environment.clone()),
            session_id: later.session_id.clone().or_else(|| self.session_id.clone()),
            how: if sets {
                later.how.clone()
            } else {
                self.how.clone()
            },
        }
    }
}

/// The defaults a dialogue uses, and where each of the three identifiers came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    pub values: CommonDefaults,
    pub m_instance: Origin,
    pub u_environment: Origin,
    pub session_id: Origin,
}

impl Chosen {
    /// The built-in defaults.
    pub fn built_in() -> Chosen {
        Chosen::from_base(CommonDefaults::default(), Origin::BuiltIn)
    }

    pub fn from_base(values: CommonDefaults, origin: Origin) -> Chosen {
        Chosen {
            values,
            m_instance: origin.clone(),
            u_environment: origin.clone(),
            session_id: origin,
        }
    }

    /// What the server publishes replaces the base; what the user set replaces both.
    pub fn choose(mut self, published: Option<&Published>, overrides: &Overrides) -> Chosen {
        if let Some(p) = published {
            let from = Origin::Server(p.source.clone());
            if let Some(m) = &p.m_instance {
                self.values.m_instance = m.clone();
                self.m_instance = from.clone();
            }
            if let Some(u) = &p.u_environment {
                self.values.u_environment = u.clone();
                self.u_environment = from;
            }
        }
        let user = Origin::User(overrides.how.clone());
        if let Some(m) = &overrides.m_instance {
            self.values.m_instance = m.clone();
            self.m_instance = user.clone();
        }
        if let Some(u) = &overrides.u_environment {
            self.values.u_environment = u.clone();
            self.u_environment = user.clone();
        }
        if let Some(s) = &overrides.session_id {
            self.values.session_id = s.clone();
            self.session_id = user;
        }
        self
    }

    /// "MInstance MI:X (from the server's dac://domain) · UEnvironment …", for people.
    pub fn describe(&self) -> String {
        format!(
            "MInstance {} ({}), UEnvironment {} ({}), SessionID {} ({})",
            self.values.m_instance,
            self.m_instance,
            self.values.u_environment,
            self.u_environment,
            self.values.session_id,
            self.session_id
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_beats_the_server_which_beats_the_base() {
        let published = Published {
            m_instance: Some("MI:Other".into()),
            u_environment: None,
            source: "dac://domain".into(),
        };
        let chosen = Chosen::built_in().choose(Some(&published), &Overrides::default());
        assert_eq!(chosen.values.m_instance, "MI:Other");
        assert_eq!(chosen.m_instance, Origin::Server("dac://domain".into()));
        assert_eq!(chosen.u_environment, Origin::BuiltIn);
        let overrides = Overrides {
            m_instance: Some("MI:Mine".into()),
            how: "with --m-instance".into(),
            ..Overrides::default()
        };
        let chosen = Chosen::built_in().choose(Some(&published), &overrides);
        assert_eq!(chosen.values.m_instance, "MI:Mine");
        assert!(chosen.describe().contains("set by you with --m-instance"));
    }
}
