//! Where a dialogue's state lives when no MCP session holds it (MCP-BINDING section 3).
//!
//! Over 2025-11-25 a dialogue is its MCP session: its state is the session's and goes with
//! it. Over 2026-07-28 there is no session (every request stands alone, and over HTTP rmcp
//! makes a fresh handler for each one), so the state is kept here, keyed by the DialogID
//! the Requests carry and by the principal that opened the dialogue (the credentials it
//! came with, where the server asks for any): nobody else can continue it.
//!
//! The store is bounded twice: a dialogue idle for longer than `idle` is forgotten, and at
//! most `max` dialogues are held. A server at its bound refuses a new dialogue with a tool
//! error that says so, and the dialogues it holds go on unaffected; a later turn of a
//! dialogue it does not hold is refused too, never answered from empty state.
//!
//! Its clock is tokio's (`tokio::time::Instant`): the wall clock in a server, and a clock a
//! test pauses and advances (`#[tokio::test(start_paused = true)]`, `tokio::time::advance`),
//! so that expiry is tested exactly, without sleeping.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// The bounds of a server's dialogue state (`serve --dialogue-idle`, `--max-dialogues`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DialogueLimits {
    /// A dialogue (or an MCP session) with no turn for this long is forgotten.
    pub idle: Duration,
    /// At most this many dialogues kept by DialogID, and as many MCP sessions.
    pub max: usize,
}

impl Default for DialogueLimits {
    /// 30 minutes (the binding's default) and 10,000 dialogues: a few hundred MiB at most
    /// for long dialogues, far more than the reference servers' users hold at once.
    fn default() -> Self {
        DialogueLimits {
            idle: Duration::from_secs(30 * 60),
            max: 10_000,
        }
    }
}

/// Who opened a dialogue: a hash of the credentials its first Request came with (none when
/// the server asks for none). Only a hash is kept, so the store holds no secret.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Principal(u64);

impl Principal {
    /// The principal of a request that came with `credentials` (an Authorization header).
    pub fn of(credentials: Option<&str>) -> Principal {
        match credentials {
            None => Principal(0),
            Some(c) => {
                // A keyed hash: the same for one process's lifetime, unguessable outside it.
                Principal(KEY.hash_one(c) | 1)
            }
        }
    }
}

static KEY: std::sync::LazyLock<std::collections::hash_map::RandomState> =
    std::sync::LazyLock::new(std::collections::hash_map::RandomState::new);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    principal: Principal,
    dialog_id: String,
}

struct Held<S> {
    state: Arc<Mutex<S>>,
    last_used: Instant,
    /// Whether a Request of the dialogue has been accepted: until then it binds nothing and
    /// is dropped again if its first Request is rejected.
    opened: bool,
}

/// The dialogues of one server kept by DialogID.
pub struct Dialogues<S> {
    limits: DialogueLimits,
    held: Mutex<Store<S>>,
}

struct Store<S> {
    map: HashMap<Key, Held<S>>,
    last_sweep: Instant,
}

/// Why a turn cannot be given a dialogue's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A later turn (TurnIndex above 0) of a dialogue the server does not hold.
    Unknown { dialog_id: String, idle: Duration },
    /// The server holds as many dialogues as it may.
    Full { max: usize },
}

impl Refusal {
    /// The sentence of the tool error (MCP-BINDING section 3).
    pub fn sentence(&self) -> String {
        match self {
            Refusal::Unknown { dialog_id, idle } => format!(
                "/DialogID: this server holds no dialogue \"{dialog_id}\": it was never opened \
                 here, or it expired after {} without a turn (or the server restarted); its \
                 state (commitments, refined User State) is not known, so this turn is not \
                 answered from empty state. Start a new dialogue at TurnIndex 0.",
                crate::duration::show(*idle)
            ),
            Refusal::Full { max } => format!(
                "/DialogID: this server holds its maximum of {max} dialogues; a new dialogue \
                 cannot be opened now (the ones it holds go on). Try again when some have \
                 ended or expired."
            ),
        }
    }
}

/// A dialogue's state lent to one turn. The turn says `opened()` when its Request was
/// accepted; a lease dropped without it, on a dialogue nobody had opened, removes it.
pub struct Lease<'a, S> {
    store: &'a Dialogues<S>,
    key: Key,
    pub state: Arc<Mutex<S>>,
    /// When the turn began: the dialogue's last use once the turn is accepted.
    at: Instant,
    new: bool,
    opened: bool,
}

impl<S> Lease<'_, S> {
    /// The turn's Request was accepted: the dialogue is bound to its DialogID from now on.
    pub fn opened(&mut self) {
        self.opened = true;
    }

    /// Whether the dialogue was made for this turn.
    pub fn is_new(&self) -> bool {
        self.new
    }
}

impl<S> Drop for Lease<'_, S> {
    fn drop(&mut self) {
        let mut store = self.store.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(held) = store.map.get_mut(&self.key)
            && Arc::ptr_eq(&held.state, &self.state)
        {
            if self.opened {
                held.opened = true;
                held.last_used = held.last_used.max(self.at);
            } else if !held.opened {
                store.map.remove(&self.key);
            }
        }
    }
}

impl<S: Default> Dialogues<S> {
    pub fn new(limits: DialogueLimits) -> Self {
        Dialogues {
            limits,
            held: Mutex::new(Store {
                map: HashMap::new(),
                last_sweep: Instant::now(),
            }),
        }
    }

    pub fn limits(&self) -> DialogueLimits {
        self.limits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Store<S>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The state of the dialogue `dialog_id` opened by `principal`, for a Request whose
    /// TurnIndex is `turn`. A dialogue the server does not hold is made for a first turn
    /// (TurnIndex 0, or none that can be read: the Request's own checks then refuse it);
    /// for a later turn it is refused.
    pub fn lease(
        &self,
        principal: Principal,
        dialog_id: &str,
        turn: Option<u64>,
    ) -> Result<Lease<'_, S>, Refusal> {
        let now = Instant::now();
        let key = Key {
            principal,
            dialog_id: dialog_id.to_owned(),
        };
        let mut store = self.lock();
        self.sweep(&mut store, now);
        if let Some(held) = store.map.get_mut(&key) {
            if now.duration_since(held.last_used) <= self.limits.idle {
                held.last_used = now;
                let state = held.state.clone();
                drop(store);
                return Ok(Lease {
                    store: self,
                    key,
                    state,
                    at: now,
                    new: false,
                    opened: false,
                });
            }
            store.map.remove(&key);
        }
        if turn.is_some_and(|t| t > 0) {
            return Err(Refusal::Unknown {
                dialog_id: dialog_id.to_owned(),
                idle: self.limits.idle,
            });
        }
        if store.map.len() >= self.limits.max {
            // The bound is on what is held now: expired dialogues make room first.
            self.sweep_all(&mut store, now);
            if store.map.len() >= self.limits.max {
                return Err(Refusal::Full {
                    max: self.limits.max,
                });
            }
        }
        let state = Arc::new(Mutex::new(S::default()));
        store.map.insert(
            key.clone(),
            Held {
                state: state.clone(),
                last_used: now,
                opened: false,
            },
        );
        drop(store);
        Ok(Lease {
            store: self,
            key,
            state,
            at: now,
            new: true,
            opened: false,
        })
    }

    /// How many dialogues are held now (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every so often (an eighth of the idle time), expired dialogues are dropped, so that
    /// the memory of a burst of dialogues comes back without waiting for the bound.
    fn sweep(&self, store: &mut Store<S>, now: Instant) {
        if now.duration_since(store.last_sweep) >= self.limits.idle / 8 {
            self.sweep_all(store, now);
        }
    }

    fn sweep_all(&self, store: &mut Store<S>, now: Instant) {
        let idle = self.limits.idle;
        store
            .map
            .retain(|_, held| now.duration_since(held.last_used) <= idle);
        store.last_sweep = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize) -> DialogueLimits {
        DialogueLimits {
            idle: Duration::from_secs(60),
            max,
        }
    }

    #[test]
    fn a_first_turn_opens_a_dialogue_and_a_later_one_finds_it() {
        let store: Dialogues<u32> = Dialogues::new(limits(10));
        let p = Principal::of(None);
        {
            let mut lease = store.lease(p, "d1", Some(0)).unwrap();
            assert!(lease.is_new());
            *lease.state.lock().unwrap() = 7;
            lease.opened();
        }
        let lease = store.lease(p, "d1", Some(1)).unwrap();
        assert!(!lease.is_new());
        assert_eq!(*lease.state.lock().unwrap(), 7);
    }

    #[test]
    fn a_rejected_first_turn_binds_nothing() {
        let store: Dialogues<u32> = Dialogues::new(limits(10));
        let p = Principal::of(None);
        drop(store.lease(p, "d1", Some(0)).unwrap());
        assert!(store.is_empty());
        assert!(matches!(
            store.lease(p, "d1", Some(1)),
            Err(Refusal::Unknown { .. })
        ));
    }

    #[test]
    fn a_later_turn_of_an_unknown_dialogue_is_refused_not_answered_from_nothing() {
        let store: Dialogues<u32> = Dialogues::new(limits(10));
        let refused = store.lease(Principal::of(None), "never", Some(3));
        let Err(refusal) = refused else {
            panic!("a later turn of an unknown dialogue was given state")
        };
        assert!(refusal.sentence().contains("\"never\""));
        assert!(refusal.sentence().contains("1 min"));
    }

    #[test]
    fn the_refusal_says_the_idle_time_as_it_was_given() {
        let said = |idle| {
            Refusal::Unknown {
                dialog_id: "d".into(),
                idle,
            }
            .sentence()
        };
        assert!(said(Duration::from_secs(1800)).contains("after 30 min without"));
        assert!(said(Duration::from_secs(90)).contains("after 90 s without"));
        assert!(said(Duration::from_millis(500)).contains("after 500 ms without"));
    }

    #[test]
    fn another_principal_cannot_continue_a_dialogue() {
        let store: Dialogues<u32> = Dialogues::new(limits(10));
        store
            .lease(Principal::of(Some("Bearer a")), "d", Some(0))
            .unwrap()
            .opened();
        assert!(
            store
                .lease(Principal::of(Some("Bearer b")), "d", Some(1))
                .is_err()
        );
        assert!(
            store
                .lease(Principal::of(Some("Bearer a")), "d", Some(1))
                .is_ok()
        );
    }

    #[test]
    fn the_bound_refuses_new_dialogues_and_keeps_the_held_ones() {
        let store: Dialogues<u32> = Dialogues::new(limits(2));
        let p = Principal::of(None);
        store.lease(p, "a", Some(0)).unwrap().opened();
        store.lease(p, "b", Some(0)).unwrap().opened();
        assert_eq!(
            store.lease(p, "c", Some(0)).err(),
            Some(Refusal::Full { max: 2 })
        );
        assert!(store.lease(p, "a", Some(1)).is_ok());
        assert_eq!(store.len(), 2);
    }

    /// Tokio's clock, paused: idle for exactly the bound keeps a dialogue, a moment more
    /// forgets it, and each turn starts the idle time again.
    #[tokio::test(start_paused = true)]
    async fn an_idle_dialogue_expires() {
        let store: Dialogues<u32> = Dialogues::new(limits(1));
        let p = Principal::of(None);
        store.lease(p, "a", Some(0)).unwrap().opened();
        tokio::time::advance(Duration::from_secs(59)).await;
        store.lease(p, "a", Some(1)).unwrap().opened();
        tokio::time::advance(Duration::from_secs(60)).await;
        store.lease(p, "a", Some(2)).unwrap().opened();
        tokio::time::advance(Duration::from_secs(60) + Duration::from_millis(1)).await;
        assert_eq!(
            store.lease(p, "a", Some(3)).err(),
            Some(Refusal::Unknown {
                dialog_id: "a".into(),
                idle: Duration::from_secs(60)
            })
        );
        // Its room is free again.
        assert!(store.lease(p, "b", Some(0)).is_ok());
    }

    /// Expired dialogues are swept without waiting for the bound: an eighth of the idle time
    /// after the last sweep, any lease drops them, and their memory comes back.
    #[tokio::test(start_paused = true)]
    async fn expired_dialogues_are_swept_by_the_next_lease() {
        let store: Dialogues<u32> = Dialogues::new(limits(100));
        let p = Principal::of(None);
        for id in ["a", "b", "c"] {
            store.lease(p, id, Some(0)).unwrap().opened();
        }
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(store.len(), 3, "expired, not yet swept");
        store.lease(p, "d", Some(0)).unwrap().opened();
        assert_eq!(store.len(), 1);
    }
}
