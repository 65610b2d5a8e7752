//! What the explorer tells the person: the notice on the status line, which fades, and the
//! run's messages (every notice, the last `MESSAGES`), which the Messages overlay lists. A
//! sub-state of `App` with its own fields and update: a notice is added with the time of the
//! event that caused it, and a tick takes away the one whose time is up.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Info,
    Success,
    Warning,
    Error,
}

/// A message on the status line that fades; every one is kept in the run's messages.
#[derive(Clone, Debug)]
pub struct Notice {
    pub text: String,
    pub severity: Severity,
    pub at: Instant,
    pub until: Instant,
    /// What the notice is about, when that can go away before the notice does: it is
    /// cleared then (a stale "not sent: ..." after the Request was fixed misleads).
    pub cause: Option<Cause>,
}

/// A condition a notice reports that the explorer can see end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The composer of this dialogue (its engine key) held a Request that could not be sent.
    UnsendableRequest(u64),
}

/// How long a notice stays.
pub const NOTICE_TIME: Duration = Duration::from_secs(6);
/// How many messages the run keeps.
pub const MESSAGES: usize = 500;

#[derive(Debug, Default)]
pub struct Notices {
    shown: Option<Notice>,
    /// Oldest first.
    messages: VecDeque<Notice>,
}

impl Notices {
    /// Tells something at `now`: shown until `NOTICE_TIME` later, kept in the messages.
    pub fn push(&mut self, text: String, severity: Severity, now: Instant) {
        let notice = Notice {
            text,
            severity,
            at: now,
            until: now + NOTICE_TIME,
            cause: None,
        };
        self.messages.push_back(notice.clone());
        if self.messages.len() > MESSAGES {
            self.messages.pop_front();
        }
        self.shown = Some(notice);
    }

    /// The notice shown gets its cause (see `Notice::cause`).
    pub fn set_cause(&mut self, cause: Cause) {
        if let Some(n) = &mut self.shown {
            n.cause = Some(cause);
        }
    }

    /// The cause of the notice shown, if it has one.
    pub fn shown_cause(&self) -> Option<Cause> {
        self.shown.as_ref().and_then(|n| n.cause)
    }

    /// Clears the notice shown (its cause is gone; it stays in the messages).
    pub fn clear_shown(&mut self) {
        self.shown = None;
    }

    /// A tick at `now`: the notice whose time is up goes (it stays in the messages).
    pub fn expire(&mut self, now: Instant) {
        if self.shown.as_ref().is_some_and(|n| n.until <= now) {
            self.shown = None;
        }
    }

    /// The notice on the status line, if one is.
    pub fn shown(&self) -> Option<&Notice> {
        self.shown.as_ref()
    }

    /// Every notice of the run still kept, oldest first.
    pub fn messages(&self) -> impl ExactSizeIterator<Item = &Notice> + DoubleEndedIterator {
        self.messages.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_fades_and_stays_in_the_messages_which_keep_the_last_ones() {
        let start = Instant::now();
        let mut n = Notices::default();
        n.push("hello".into(), Severity::Info, start);
        n.expire(start + NOTICE_TIME - Duration::from_millis(1));
        assert_eq!(n.shown().map(|n| n.text.as_str()), Some("hello"));
        n.expire(start + NOTICE_TIME);
        assert!(n.shown().is_none());
        for i in 0..MESSAGES {
            n.push(format!("{i}"), Severity::Info, start);
        }
        assert_eq!(n.messages().len(), MESSAGES);
        assert_eq!(
            n.messages().next().unwrap().text,
            "0",
            "the oldest went first"
        );
    }
}
