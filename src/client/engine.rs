//! The engine under the explorer: every dialogue runs in a task of its own that owns its
//! connection; the explorer sends it commands through an `Engine` handle and learns what
//! happened from `EngineEvent`s on one channel. Nothing here ever makes the caller wait for
//! a server.

use crate::client::connection::{ConnectOptions, Connection, DialogIdOrigin, ServerSummary};
use crate::client::defaults::{Chosen, Overrides};
use crate::client::dialogue::{Continuation, Dialogue, Filling};
use crate::client::event::{Event, EventSink};
use crate::client::spec::ServerSpec;
use crate::client::turn::Turn;
use crate::protocol::Interface;
use serde_json::Value;
use std::collections::HashMap;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Identifies a dialogue of the explorer for the life of the program.
pub type DialogueKey = u64;

pub use crate::protocol::resources::Vocabulary;

#[derive(Clone, Debug)]
pub enum EngineEvent {
    /// A dialogue's connection is up (this also tells what the server is).
    /// What the server of a dialogue offers, read again (`Engine::refresh`).
    Refreshed {
        dialogue: DialogueKey,
        summary: Box<ServerSummary>,
        vocabulary: Box<Vocabulary>,
    },
    Opened {
        dialogue: DialogueKey,
        /// The connection it runs on (client events name connections, not dialogues).
        connection: u64,
        dialog_id: String,
        origin: DialogIdOrigin,
        tool: String,
        /// Boxed: the largest part of the event, and rare.
        summary: Box<ServerSummary>,
        vocabulary: Box<Vocabulary>,
        /// The common fields its Requests are filled with, and where each came from.
        defaults: Box<Chosen>,
        /// It went on with the dialogue of an earlier connection, whose state the server
        /// kept (a reconnect over 2026-07-28, where the dialogue is kept by DialogID).
        continued: bool,
        /// The TurnIndex its next Request gets.
        next_turn: u64,
    },
    /// A dialogue could not start: no connection, or no tool for its interface.
    Failed {
        dialogue: DialogueKey,
        error: String,
        /// What the server is, when the connection itself worked (boxed: large, and rare).
        summary: Option<Box<ServerSummary>>,
        /// The server's definition asks for `${input:ID}` and none was given.
        /// (Boxed: rare, and larger than the other variants.)
        needs_input: Option<Box<crate::client::spec::vars::InputRequest>>,
    },
    TurnStarted {
        dialogue: DialogueKey,
        request: Value,
    },
    TurnFinished {
        dialogue: DialogueKey,
        turn: Turn,
        next_turn: u64,
    },
    Closed {
        dialogue: DialogueKey,
    },
    /// The server's resources, listed (`Engine::list_resources`).
    ResourcesListed {
        dialogue: DialogueKey,
        result: Result<Vec<crate::client::resources::Listed>, String>,
    },
    /// A resource, read (`Engine::read_resource`).
    ResourceRead {
        dialogue: DialogueKey,
        uri: String,
        result: Result<crate::client::resources::Read, String>,
    },
    /// From the client layer: the protocol log, progress, ended connections.
    Client(Event),
}

enum Command {
    Send {
        request: Value,
        filling: Filling,
        cancel: CancellationToken,
    },
    Close,
    /// Fill the Requests that follow with these common fields.
    Defaults(Box<Chosen>),
    /// Read again what the server offers (it said its tools or resources changed).
    Refresh,
    /// List the server's resources.
    ListResources,
    /// Read one of them.
    ReadResource(String),
}

struct Handle {
    commands: mpsc::UnboundedSender<Command>,
    /// The cancel token of the turn in flight.
    current: Option<CancellationToken>,
}

/// The explorer's handle on its dialogues.
pub struct Engine {
    events: mpsc::UnboundedSender<EngineEvent>,
    options: ConnectOptions,
    dialogues: HashMap<DialogueKey, Handle>,
    /// Dialogues asked to close whose task has not ended yet.
    closing: usize,
}

impl Engine {
    /// An engine whose events go to `events`. `options.events` is replaced: client events
    /// arrive as `EngineEvent::Client` on the same channel.
    pub fn new(events: mpsc::UnboundedSender<EngineEvent>, mut options: ConnectOptions) -> Engine {
        let (client_tx, mut client_rx) = mpsc::unbounded_channel();
        let forward = events.clone();
        tokio::spawn(async move {
            while let Some(e) = client_rx.recv().await {
                if forward.send(EngineEvent::Client(e)).is_err() {
                    break;
                }
            }
        });
        options.events = EventSink::new(client_tx);
        options.subscribe_logs = true;
        Engine {
            events,
            options,
            dialogues: HashMap::new(),
            closing: 0,
        }
    }

    pub fn options(&self) -> &ConnectOptions {
        &self.options
    }

    /// Opens a dialogue (a new MCP session) on a server; `Opened` or `Failed` follows.
    pub fn open(
        &mut self,
        key: DialogueKey,
        spec: ServerSpec,
        interface: Interface,
        base: Chosen,
        overrides: Overrides,
        from: impl Into<Continuation>,
    ) {
        let from = from.into();
        let (commands, rx) = mpsc::unbounded_channel();
        self.dialogues.insert(
            key,
            Handle {
                commands,
                current: None,
            },
        );
        let events = self.events.clone();
        let options = self.options.clone();
        tokio::spawn(run_dialogue(
            key, spec, interface, base, overrides, from, options, rx, events,
        ));
    }

    /// Sends a Request on a dialogue; `TurnStarted` then `TurnFinished` follow. Returns false
    /// when the dialogue is not open.
    pub fn send(&mut self, key: DialogueKey, request: Value, filling: Filling) -> bool {
        let Some(handle) = self.dialogues.get_mut(&key) else {
            return false;
        };
        let cancel = CancellationToken::new();
        handle.current = Some(cancel.clone());
        handle
            .commands
            .send(Command::Send {
                request,
                filling,
                cancel,
            })
            .is_ok()
    }

    /// Changes the common fields a dialogue fills into its next Requests (the user overrode
    /// them). Returns false when the dialogue is not open.
    pub fn set_defaults(&mut self, key: DialogueKey, defaults: Chosen) -> bool {
        self.dialogues.get(&key).is_some_and(|h| {
            h.commands
                .send(Command::Defaults(Box::new(defaults)))
                .is_ok()
        })
    }

    /// Reads again what the server of a dialogue offers; `Refreshed` follows.
    pub fn refresh(&mut self, key: DialogueKey) -> bool {
        self.dialogues
            .get(&key)
            .is_some_and(|h| h.commands.send(Command::Refresh).is_ok())
    }

    /// Lists the resources of a dialogue's server (on its connection, after the turn in
    /// flight); `ResourcesListed` follows. False when the dialogue is not open.
    pub fn list_resources(&mut self, key: DialogueKey) -> bool {
        self.dialogues
            .get(&key)
            .is_some_and(|h| h.commands.send(Command::ListResources).is_ok())
    }

    /// Reads a resource of a dialogue's server; `ResourceRead` follows. False when the
    /// dialogue is not open.
    pub fn read_resource(&mut self, key: DialogueKey, uri: String) -> bool {
        self.dialogues
            .get(&key)
            .is_some_and(|h| h.commands.send(Command::ReadResource(uri)).is_ok())
    }

    /// Cancels the turn in flight on a dialogue, if any.
    pub fn cancel(&mut self, key: DialogueKey) -> bool {
        match self.dialogues.get_mut(&key).and_then(|h| h.current.take()) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Ends a dialogue's MCP session (its task reports `Closed` once it has).
    pub fn close(&mut self, key: DialogueKey) {
        if let Some(handle) = self.dialogues.remove(&key) {
            if let Some(token) = handle.current {
                token.cancel();
            }
            if handle.commands.send(Command::Close).is_ok() {
                self.closing += 1;
            }
        }
    }

    /// A dialogue's task ended (its `Closed` or `Failed` came): forgotten, and no longer
    /// waited for if it was being closed.
    pub fn closed(&mut self, key: DialogueKey) {
        if self.dialogues.remove(&key).is_none() {
            self.closing = self.closing.saturating_sub(1);
        }
    }

    /// Whether sessions are still being ended (a runner waits for them before it leaves,
    /// so that HTTP sessions get their DELETE and stdio servers their end).
    pub fn is_closing(&self) -> bool {
        self.closing > 0
    }

    pub fn is_open(&self, key: DialogueKey) -> bool {
        self.dialogues.contains_key(&key)
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_dialogue(
    key: DialogueKey,
    spec: ServerSpec,
    interface: Interface,
    base: Chosen,
    overrides: Overrides,
    from: Continuation,
    options: ConnectOptions,
    mut commands: mpsc::UnboundedReceiver<Command>,
    events: mpsc::UnboundedSender<EngineEvent>,
) {
    let connection =
        match Connection::connect_as_before(&spec, &options, from.spoke.as_deref()).await {
            Ok(c) => c,
            Err(e) => {
                let _ = events.send(EngineEvent::Failed {
                    dialogue: key,
                    error: e.message,
                    summary: None,
                    needs_input: e.needs_input.map(Box::new),
                });
                return;
            }
        };
    let vocabulary = vocabulary(&connection).await;
    let defaults = base.choose(connection.summary.published.as_ref(), &overrides);
    let Some(mut dialogue) = open_on(key, connection, interface, defaults, &events).await else {
        return;
    };
    let continued = dialogue.continue_from(&from);
    announce_opened(key, &dialogue, continued, vocabulary, &events);
    // A change the server told while the connection was being made came before anyone
    // listened for it (the explorer knew no open dialogue on that connection yet).
    if dialogue.connection.lists_changed() {
        refresh(key, &mut dialogue, &events).await;
    }
    while let Some(command) = commands.recv().await {
        match command {
            Command::Send {
                request,
                filling,
                cancel,
            } => send_turn(key, &mut dialogue, request, filling, &cancel, &events).await,
            Command::Defaults(chosen) => dialogue.defaults = *chosen,
            Command::Refresh => refresh(key, &mut dialogue, &events).await,
            Command::ListResources => list_resources(key, &dialogue, &events).await,
            Command::ReadResource(uri) => read_resource(key, &dialogue, uri, &events).await,
            Command::Close => break,
        }
    }
    dialogue.close().await;
    let _ = events.send(EngineEvent::Closed { dialogue: key });
}

/// The dialogue on the connection, or `Failed` (with what the server offers) and the
/// connection closed when the server has no tool for the interface.
async fn open_on(
    key: DialogueKey,
    connection: Connection,
    interface: Interface,
    defaults: Chosen,
    events: &mpsc::UnboundedSender<EngineEvent>,
) -> Option<Dialogue> {
    match Dialogue::open(connection, interface, defaults) {
        Ok(d) => Some(d),
        Err(no_tool) => {
            let summary = no_tool.connection.summary.clone();
            let _ = events.send(EngineEvent::Failed {
                dialogue: key,
                error: no_tool.message,
                summary: Some(Box::new(summary)),
                needs_input: None,
            });
            no_tool.connection.close().await;
            None
        }
    }
}

/// `Opened`, with what the server offers, and the log's line of it.
fn announce_opened(
    key: DialogueKey,
    dialogue: &Dialogue,
    continued: bool,
    vocabulary: Vocabulary,
    events: &mpsc::UnboundedSender<EngineEvent>,
) {
    let _ = events.send(EngineEvent::Opened {
        continued,
        next_turn: dialogue.next_turn(),
        dialogue: key,
        connection: dialogue.connection.id,
        dialog_id: dialogue.dialog_id().to_owned(),
        origin: dialogue.connection.dialog_id_origin,
        tool: dialogue.tool.clone(),
        summary: Box::new(dialogue.connection.summary.clone()),
        vocabulary: Box::new(vocabulary),
        defaults: Box::new(dialogue.defaults.clone()),
    });
    let _ = events.send(EngineEvent::Client(Event::Log(
        crate::client::event::LogEntry::new(
            dialogue.connection.id,
            crate::client::event::LogKind::Client,
            format!("dialogue {key} on connection {}", dialogue.connection.id),
        ),
    )));
}

/// One turn: `TurnStarted` with the Request as filled, `TurnFinished` with its reply.
async fn send_turn(
    key: DialogueKey,
    dialogue: &mut Dialogue,
    request: Value,
    filling: Filling,
    cancel: &CancellationToken,
    events: &mpsc::UnboundedSender<EngineEvent>,
) {
    let request = dialogue.prepare(request, filling);
    let _ = events.send(EngineEvent::TurnStarted {
        dialogue: key,
        request: request.clone(),
    });
    let turn = dialogue.send(request, cancel).await;
    let _ = events.send(EngineEvent::TurnFinished {
        dialogue: key,
        turn,
        next_turn: dialogue.next_turn(),
    });
}

async fn list_resources(
    key: DialogueKey,
    dialogue: &Dialogue,
    events: &mpsc::UnboundedSender<EngineEvent>,
) {
    let result = if dialogue.connection.summary.has_resources {
        dialogue
            .connection
            .list_resources()
            .await
            .map(|list| list.iter().map(Into::into).collect())
            .map_err(|e| format!("resources/list failed: {e}"))
    } else {
        Err("the server offers no resources (no resources capability)".into())
    };
    let _ = events.send(EngineEvent::ResourcesListed {
        dialogue: key,
        result,
    });
}

async fn read_resource(
    key: DialogueKey,
    dialogue: &Dialogue,
    uri: String,
    events: &mpsc::UnboundedSender<EngineEvent>,
) {
    let result = dialogue
        .connection
        .read_resource_contents(&uri)
        .await
        .map(|contents| crate::client::resources::Read::of(&uri, &contents))
        .map_err(|e| format!("cannot read {uri}: {e}"));
    let _ = events.send(EngineEvent::ResourceRead {
        dialogue: key,
        uri,
        result,
    });
}

/// Reads again what a dialogue's server offers, and says what it found (`Refreshed`).
async fn refresh(
    key: DialogueKey,
    dialogue: &mut Dialogue,
    events: &mpsc::UnboundedSender<EngineEvent>,
) {
    dialogue.connection.refresh().await;
    let learnt = vocabulary(&dialogue.connection).await;
    let _ = events.send(EngineEvent::Refreshed {
        dialogue: key,
        summary: Box::new(dialogue.connection.summary.clone()),
        vocabulary: Box::new(learnt),
    });
}

/// Reads what a server offers for completion (MCP-BINDING section 1, the shapes of
/// docs/resources): the domain and each Space of a Domain Access, the Users (and cues) of a
/// User State Refinement. What cannot be read is noted, so that the composer can say why a
/// list is empty.
async fn vocabulary(connection: &Connection) -> Vocabulary {
    use crate::protocol::resources::{DAC_DOMAIN, DAC_SPACES, USR_CUES, USR_USERS};
    let mut v = Vocabulary {
        has_resources: !connection.summary.resources.is_empty(),
        ..Vocabulary::default()
    };
    if let Some(p) = &connection.summary.resource_problem {
        v.problems.push(p.clone());
    }
    for uri in &connection.summary.resources {
        let wanted = uri == DAC_DOMAIN
            || uri.starts_with(DAC_SPACES)
            || uri == USR_USERS
            || uri == USR_CUES
            || (uri.starts_with("usr://users/")
                && !connection.summary.resources.iter().any(|r| r == USR_USERS));
        if !wanted {
            continue;
        }
        if uri.starts_with("usr://users/") {
            // Without the list, each User's resource names one.
            v.read(uri, &serde_json::json!({}));
            continue;
        }
        match connection.read_resource(uri).await {
            Ok(value) => v.read(uri, &value),
            Err(e) => v.problems.push(format!("reading {uri} failed: {e}")),
        }
    }
    v
}
