//! The runner: everything the explorer does besides deciding. It owns the engine (the
//! dialogues' tasks), the channel every result comes back on, every task and every file; it
//! turns the terminal's input, time and signals into events, gives each to `App::handle`
//! with the time and the last frame's `Hits`, and carries out the effects that come back.
//! `Runner` works without a terminal too (the tests drive it); `run` puts it in one.

use crate::client::connection::ConnectOptions;
use crate::client::dialogue::Filling;
use crate::client::engine::{DialogueKey, Engine, EngineEvent};
use crate::client::turn::{ErrorKind, Reply, Turn, TurnError};
use crate::protocol::raw::RawJson;
use crate::session::Session;
use crate::tui::app::{App, Options};
use crate::tui::effect::Effect;
use crate::tui::event::{
    Event, FileStamp, OpenPurpose, ReplayEvent, SavePurpose, SaveWhat, Signal, WatchEvent,
};
use crate::tui::hits::Hits;
use crate::tui::persist;
use crate::tui::theme::Theme;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod certify;

/// The explorer and what carries out its effects.
pub struct Runner {
    pub app: App,
    engine: Engine,
    events: mpsc::UnboundedSender<Event>,
    /// Where the last frame drew things.
    pub hits: Hits,
    replays: HashMap<DialogueKey, CancellationToken>,
    /// The recording being followed.
    watching: Option<CancellationToken>,
    scenarios: HashMap<DialogueKey, CancellationToken>,
    /// The certify run under way, by its number.
    certifying: Option<(u64, CancellationToken)>,
    /// Where user themes are, and where the explorer's settings are remembered.
    theme_dir: Option<PathBuf>,
    config_dir: Option<PathBuf>,
    /// Text for the terminal's clipboard, written after the next frame (OSC 52).
    pub clipboard: Option<String>,
    /// Set by a Quit effect: whether the run ended cleanly.
    pub quit: Option<bool>,
    /// Set by a Quit effect: what the run leaves as the last run's copy.
    pub kept: crate::tui::persist::Kept,
    /// The signal that asked the run to end, if one did.
    pub signal: Option<Signal>,
    /// Where the answers to what servers asked go, by question.
    asks: Asks,
}

/// The answers awaited for what servers asked, by the question's id.
type Asks = std::sync::Arc<
    std::sync::Mutex<HashMap<u64, tokio::sync::oneshot::Sender<crate::client::answers::Reply>>>,
>;

impl Runner {
    /// A runner whose results come back on `events`; the first effects (opening the
    /// dialogues) are carried out at once. Must run inside a Tokio runtime.
    pub fn new(
        options: Options,
        mut connect: ConnectOptions,
        theme_dir: Option<PathBuf>,
        config_dir: Option<PathBuf>,
        events: mpsc::UnboundedSender<Event>,
    ) -> Runner {
        // What servers ask of the person: shown by the app, each answer sent back by id.
        let asks: Asks = Default::default();
        let (ask_tx, mut ask_rx) = mpsc::unbounded_channel::<crate::client::answers::Ask>();
        connect.ask = Some(crate::client::answers::AskSink(ask_tx));
        {
            let (asks, forward) = (asks.clone(), events.clone());
            tokio::spawn(async move {
                let mut next = 1u64;
                while let Some(ask) = ask_rx.recv().await {
                    let id = next;
                    next += 1;
                    let view = crate::tui::event::AskView {
                        id,
                        connection: ask.connection,
                        method: ask.method,
                        name: ask.name,
                        message: ask.message,
                        asking: ask.asking,
                    };
                    asks.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(id, ask.reply);
                    if forward.send(Event::Asked(view)).is_err() {
                        break;
                    }
                }
            });
        }
        let (engine_tx, mut engine_rx) = mpsc::unbounded_channel();
        let forward = events.clone();
        tokio::spawn(async move {
            while let Some(e) = engine_rx.recv().await {
                if forward.send(Event::Engine(Box::new(e))).is_err() {
                    break;
                }
            }
        });
        let (app, effects) = App::new(options, Instant::now());
        let mut runner = Runner {
            app,
            engine: Engine::new(engine_tx, connect),
            events,
            hits: Hits::default(),
            replays: HashMap::new(),
            watching: None,
            scenarios: HashMap::new(),
            certifying: None,
            theme_dir,
            config_dir,
            clipboard: None,
            quit: None,
            kept: Default::default(),
            signal: None,
            asks,
        };
        for effect in effects {
            runner.execute(effect);
        }
        runner
    }

    /// Handles an event now and carries out what it asks.
    pub fn handle(&mut self, event: Event) {
        if let Event::Signal(name) = &event {
            self.signal = Some(*name);
        }
        if let Event::Engine(e) = &event
            && let EngineEvent::Closed { dialogue } | EngineEvent::Failed { dialogue, .. } =
                e.as_ref()
        {
            self.engine.closed(*dialogue);
        }
        let effects = self.app.handle(event, Instant::now(), &self.hits);
        for effect in effects {
            self.execute(effect);
        }
    }

    /// Does an action as its key would (the palette's way in), and carries out what it asks.
    pub fn act(&mut self, action: crate::tui::action::Action) {
        let mut effects = Vec::new();
        self.app.act(action, &mut effects);
        for effect in effects {
            self.execute(effect);
        }
    }

    /// Draws a frame and keeps where things went.
    pub fn draw(&mut self, frame: &mut ratatui::Frame) {
        self.hits = crate::tui::view::render(frame, &self.app);
    }

    /// Whether dialogues are still being ended.
    pub fn closing(&self) -> bool {
        self.engine.is_closing()
    }

    fn send(&self, event: Event) {
        // The receiver is gone only when the explorer is leaving.
        let _ = self.events.send(event);
    }

    /// Runs blocking work (a file) off the event loop; its event comes back on the channel.
    fn blocking(&self, work: impl FnOnce() -> Event + Send + 'static) {
        let events = self.events.clone();
        tokio::task::spawn_blocking(move || {
            let _ = events.send(work());
        });
    }

    fn execute(&mut self, effect: Effect) {
        match effect {
            Effect::Open {
                key,
                spec,
                interface,
                base,
                overrides,
                first_turn,
                goes_on,
                spoke,
            } => self.engine.open(
                key,
                spec,
                interface,
                base,
                overrides,
                crate::client::dialogue::Continuation {
                    first_turn,
                    goes_on,
                    spoke,
                },
            ),
            Effect::Send {
                key,
                request,
                filling,
            } => self.send_turn(key, request, filling),
            Effect::SetDefaults { key, defaults } => {
                self.engine.set_defaults(key, defaults);
            }
            Effect::Cancel { key } => {
                self.engine.cancel(key);
            }
            Effect::Close { key } => self.engine.close(key),
            Effect::Replay { key, session } => self.replay(key, *session),
            Effect::Watch { path } => self.watch(path),
            Effect::StopReplay { key } => stop(&mut self.replays, key),
            Effect::Save {
                path,
                session,
                purpose,
                unchanged,
            } => self.save(path, session, purpose, unchanged),
            Effect::CheckSaveTarget { path, what } => {
                self.blocking(move || save_target(path, what))
            }
            Effect::WriteFile { path, text, what } => {
                self.blocking(move || write_file(path, &text, what));
            }
            Effect::RunScenario { key, path, spec } => self.run_scenario(key, path, spec),
            Effect::StopScenario { key } => stop(&mut self.scenarios, key),
            Effect::ReadSession { path, purpose } => self.read_session(path, purpose),
            Effect::WriteDrafts { path, text } => self.blocking(move || write_drafts(path, &text)),
            Effect::ReadDrafts { path } => self.blocking(move || Event::DraftsRead {
                result: persist::read_drafts(&path),
                path,
            }),
            Effect::ListSessions => self.list_sessions(),
            Effect::FindServers => self.find_servers(),
            Effect::CompletePath { typed, extensions } => self.complete_path(typed, extensions),
            Effect::LoadTheme { name } => self.load_theme(name),
            Effect::RememberTheme { name } => self.remember_theme(name),
            Effect::Clipboard { text } => self.clipboard = Some(text),
            Effect::WriteJson { path, text } => self.blocking(move || write_json(path, &text)),
            Effect::Certify(e) => self.certify(e),
            Effect::Quit { clean, kept } => {
                self.quit = Some(clean);
                self.kept = kept;
            }
            Effect::Refresh { key } => {
                self.engine.refresh(key);
            }
            Effect::ListResources { key } => self.list_resources(key),
            Effect::ReadResource { key, uri } => self.read_resource(key, uri),
            Effect::Answer { id, reply } => self.answer(id, reply),
        }
    }

    fn save(
        &self,
        path: PathBuf,
        session: Box<Session>,
        purpose: SavePurpose,
        unchanged: Option<FileStamp>,
    ) {
        let data_dir = self.app.config().paths.data_dir.clone();
        self.blocking(move || save(path, &session, purpose, unchanged, data_dir));
    }

    fn read_session(&self, path: PathBuf, purpose: OpenPurpose) {
        let data_dir = self.app.config().paths.data_dir.clone();
        self.blocking(move || read_session(path, purpose, data_dir));
    }

    /// Lists the session files to offer, off the event loop.
    fn list_sessions(&self) {
        let (dir, data) = (
            self.app.config().paths.sessions_dir.clone(),
            self.app.config().paths.data_dir.clone(),
        );
        self.blocking(move || Event::PickerItems(persist::picker_items(&dir, data.as_deref())));
    }

    /// Looks for servers files where the explorer finds them, off the event loop.
    fn find_servers(&self) {
        let cwd = self.app.config().paths.cwd.clone();
        let config = self.config_dir.clone();
        self.blocking(move || {
            let (servers, problems) =
                crate::client::spec::discover::servers(&cwd, config.as_deref());
            Event::ServersFound { servers, problems }
        });
    }

    fn complete_path(&self, typed: String, extensions: &'static [&'static str]) {
        let cwd = self.app.config().paths.cwd.clone();
        self.blocking(move || Event::PathCompletions {
            paths: persist::complete_path(&typed, &cwd, extensions),
            typed,
        });
    }

    fn load_theme(&self, name: String) {
        let dir = self.theme_dir.clone();
        self.blocking(move || Event::ThemeLoaded {
            result: Theme::find(&name, dir.as_deref(), &mut Vec::new()).map_err(|e| e.to_string()),
            name,
        });
    }

    fn remember_theme(&self, name: String) {
        if let Some(dir) = self.config_dir.clone() {
            self.blocking(move || {
                // A failure to remember is not worth a message: the theme is in use.
                let _ = crate::settings::remember(&dir, "theme", &name);
                Event::Tick
            });
        }
    }

    /// Sends a turn; one the engine cannot take (no such dialogue) comes back as not sent.
    fn send_turn(&mut self, key: DialogueKey, request: serde_json::Value, filling: Filling) {
        if !self.engine.send(key, request.clone(), filling) {
            self.send(Event::Engine(Box::new(EngineEvent::TurnFinished {
                dialogue: key,
                turn: not_sent(&request, filling),
                next_turn: 0,
            })));
        }
    }

    fn list_resources(&mut self, key: DialogueKey) {
        if !self.engine.list_resources(key) {
            self.send(Event::Engine(Box::new(EngineEvent::ResourcesListed {
                dialogue: key,
                result: Err("the dialogue is not open: R reconnects it".into()),
            })));
        }
    }

    fn read_resource(&mut self, key: DialogueKey, uri: String) {
        if !self.engine.read_resource(key, uri.clone()) {
            self.send(Event::Engine(Box::new(EngineEvent::ResourceRead {
                dialogue: key,
                uri,
                result: Err("the dialogue is not open: R reconnects it".into()),
            })));
        }
    }

    /// Hands the user's answer to the server's question that waits for it.
    fn answer(&self, id: u64, answer: crate::client::answers::Reply) {
        let reply = self
            .asks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        // A server that stopped waiting (the connection ended) takes no answer.
        if let Some(reply) = reply {
            let _ = reply.send(answer);
        }
    }

    /// Reads a scenario and plays it in a task of its own; each step comes back as an event.
    fn run_scenario(
        &mut self,
        key: DialogueKey,
        path: PathBuf,
        spec: crate::client::spec::ServerSpec,
    ) {
        use crate::scenario::run::{Keep, Progress};
        use crate::tui::event::{ScenarioEvent, ScenarioInfo};
        let options = self.engine.options().clone();
        let overrides = self.app.config.overrides.clone();
        let events = self.events.clone();
        let token = CancellationToken::new();
        let stop = token.clone();
        self.scenarios.insert(key, token);
        tokio::spawn(async move {
            let loaded = tokio::task::spawn_blocking(move || crate::scenario::load(&path))
                .await
                .unwrap_or_else(|e| {
                    Err(vec![crate::scenario::ScenarioError {
                        file: PathBuf::new(),
                        place: None,
                        message: e.to_string(),
                    }])
                });
            let scenario = match loaded {
                Ok(s) => s,
                Err(errors) => {
                    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    let _ = events.send(Event::Scenario(ScenarioEvent::Loaded {
                        dialogue: key,
                        result: Err(text.join("\n")),
                    }));
                    return;
                }
            };
            let _ = events.send(Event::Scenario(ScenarioEvent::Loaded {
                dialogue: key,
                result: Ok(ScenarioInfo {
                    name: scenario.name.clone(),
                    steps: scenario.steps.len(),
                }),
            }));
            let tx = events.clone();
            let report = |p: Progress| {
                let event = match p {
                    Progress::Opened { dialog_id } => ScenarioEvent::Opened {
                        dialogue: key,
                        dialog_id: dialog_id.to_owned(),
                    },
                    Progress::Step(step) => ScenarioEvent::Step {
                        dialogue: key,
                        expectations: scenario.steps[step.index]
                            .expect
                            .iter()
                            .map(|e| e.describe())
                            .collect(),
                        step: Box::new(step.clone()),
                    },
                };
                let _ = tx.send(Event::Scenario(event));
            };
            // Each step goes out with its event as it comes: the run need keep none of the
            // passing steps' turns.
            let run = crate::scenario::run::run(
                &scenario,
                &spec,
                &options,
                &overrides,
                &stop,
                Keep::Failing,
                report,
            )
            .await;
            let _ = events.send(Event::Scenario(ScenarioEvent::Done {
                dialogue: key,
                error: run.error.map(crate::client::dialogue::OpenFailure::message),
            }));
        });
    }

    /// Follows a recording: each whole new line becomes an event, read every 50 ms (a turn
    /// shows within 100 ms of passing the proxy). Following another stops this one.
    fn watch(&mut self, path: Option<PathBuf>) {
        if let Some(old) = self.watching.take() {
            old.cancel();
        }
        let token = CancellationToken::new();
        self.watching = Some(token.clone());
        let events = self.events.clone();
        let data = self.app.config().paths.data_dir.clone();
        tokio::spawn(async move {
            let send = |e: WatchEvent| events.send(Event::Watch(e)).is_ok();
            let Some(path) = path.or_else(|| crate::tui::watch::newest_recording(data.as_deref()))
            else {
                send(WatchEvent::Failed(
                    "no recording to watch: start `bkn-explorer proxy -- CMD ARGS` first, or name one with --watch FILE".into(),
                ));
                return;
            };
            send(WatchEvent::Started(path.clone()));
            let mut follower = crate::tui::watch::Follower::new(path);
            loop {
                match follower.read_new().await {
                    Ok(look) => {
                        for line in look.lines {
                            let end = matches!(line, crate::session::journal::Line::End(_));
                            if !send(WatchEvent::Line(Box::new(line))) || end {
                                return;
                            }
                        }
                        // Gone without its end: nothing more will come.
                        if let Some(why) = look.gone {
                            send(WatchEvent::WriterGone(why));
                            return;
                        }
                    }
                    Err(e) => {
                        send(WatchEvent::Failed(e));
                        return;
                    }
                }
                tokio::select! {
                    _ = token.cancelled() => return,
                    _ = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
                }
            }
        });
    }

    fn replay(&mut self, key: DialogueKey, session: Session) {
        let options = self.engine.options().clone();
        let events = self.events.clone();
        let token = CancellationToken::new();
        let stop = token.clone();
        self.replays.insert(key, token);
        tokio::spawn(async move {
            let tx = events.clone();
            let result =
                crate::session::replay::replay_dialogue(&session, 0, None, &options, &stop, |t| {
                    let _ = tx.send(Event::Replay(ReplayEvent::Turn {
                        dialogue: key,
                        index: t.index,
                        turn: t.replayed.clone(),
                        differences: t.differences.clone(),
                    }));
                })
                .await;
            let _ = events.send(Event::Replay(ReplayEvent::Done {
                dialogue: key,
                result,
            }));
        });
    }
}

/// A file name for set-aside turns in `folder` that no file has: the time, and a number when
/// two are set aside in the same second.
/// Saves a session (off the event loop): not over a file changed on disk since it was read,
/// into the explorer's own folders made when missing, set aside under a new name.
fn save(
    path: PathBuf,
    session: &Session,
    purpose: SavePurpose,
    unchanged: Option<FileStamp>,
    data_dir: Option<PathBuf>,
) -> Event {
    if let Some(stamp) = unchanged
        && FileStamp::of(&path).is_some_and(|now| now != stamp)
    {
        return Event::ChangedOnDisk { path };
    }
    if purpose != SavePurpose::Explicit {
        // The data directory is the explorer's own: it may be made.
        let folder = if purpose == SavePurpose::SetAside {
            Some(path.as_path())
        } else {
            path.parent()
        };
        if let Some(dir) = folder {
            let _ = std::fs::create_dir_all(dir);
        }
    }
    // Set aside: a new file in the folder given, never one that is there.
    let path = if purpose == SavePurpose::SetAside {
        set_aside_name(&path)
    } else {
        path
    };
    let result = session
        .save(&path)
        .map_err(|e| format!("cannot save {}: {e}", path.display()));
    if matches!(purpose, SavePurpose::Explicit | SavePurpose::SetAside) && result.is_ok() {
        persist::remember(data_dir.as_deref(), &path);
    }
    Event::Saved {
        stamp: FileStamp::of(&path),
        path,
        purpose,
        result,
    }
}

/// Reads a session file (off the event loop), its findings judged by today's rules.
fn read_session(path: PathBuf, purpose: OpenPurpose, data_dir: Option<PathBuf>) -> Event {
    // Before reading: a change while it is read shows as one at the next save.
    let stamp = FileStamp::of(&path);
    // Judged by today's rules, whoever wrote the file.
    let result = Session::load(&path)
        .map(|mut s| {
            s.recheck();
            s
        })
        .map_err(|e| format!("{}: {e}", persist::display_path(&path)));
    if purpose == OpenPurpose::Open && result.is_ok() {
        persist::remember(data_dir.as_deref(), &path);
    }
    Event::SessionRead {
        stamp,
        path,
        purpose,
        result,
    }
}

/// Whether a file to save to is there already, and its folder.
fn save_target(path: PathBuf, what: SaveWhat) -> Event {
    Event::SaveTarget {
        // A folder (or a FIFO) there is no file to overwrite: the write says why it cannot.
        exists: path.is_file(),
        folder_exists: path
            .parent()
            .is_none_or(|p| p.as_os_str().is_empty() || p.is_dir()),
        path,
        what,
    }
}

fn write_file(path: PathBuf, text: &str, what: &'static str) -> Event {
    Event::FileWritten {
        result: crate::session::atomic::write(&path, text.as_bytes()).map_err(|e| e.to_string()),
        path,
        what,
    }
}

fn write_json(path: PathBuf, text: &str) -> Event {
    Event::CopyWritten {
        result: crate::session::atomic::write(&path, text.as_bytes()).map_err(|e| e.to_string()),
        path,
    }
}

/// Stops a replay or a scenario run, when one runs for the dialogue.
fn stop(tasks: &mut HashMap<DialogueKey, CancellationToken>, key: DialogueKey) {
    if let Some(token) = tasks.remove(&key) {
        token.cancel();
    }
}

/// Writes the drafts' autosave: only a failure is worth an event of its own.
fn write_drafts(path: PathBuf, text: &str) -> Event {
    match crate::session::atomic::write(&path, text.as_bytes()) {
        Ok(()) => Event::Tick,
        Err(e) => Event::FileWritten {
            path,
            what: "the drafts' autosave",
            result: Err(e.to_string()),
        },
    }
}

fn set_aside_name(folder: &std::path::Path) -> PathBuf {
    let stamp = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut n = 0;
    loop {
        let name = match n {
            0 => format!("set-aside-{stamp}.json"),
            n => format!("set-aside-{stamp}-{n}.json"),
        };
        let path = folder.join(name);
        if !path.exists() {
            return path;
        }
        n += 1;
    }
}

/// The turn of a Request that could not be sent (its dialogue is not open).
fn not_sent(request: &serde_json::Value, _filling: Filling) -> Turn {
    Turn {
        request: RawJson::from_value(request),
        reply: Reply::Error(TurnError {
            kind: ErrorKind::NotSent,
            message: "the dialogue is not connected; R reconnects".into(),
        }),
        findings: Vec::new(),
        sent: crate::protocol::message::now_rfc3339(),
        received: None,
        latency_ms: 0.0,
        new_session: false,
        asked: Vec::new(),
    }
}

/// What the explorer is started with, before the runner reads its files.
pub struct Launch {
    pub servers: Vec<crate::client::spec::ServerSpec>,
    pub session: Option<PathBuf>,
    /// Follow a proxy's recording (`--watch [FILE]`).
    pub watch: Option<Option<PathBuf>>,
    /// `--token` / `BKN_TOKEN`.
    pub token: Option<String>,
    /// The theme asked for (else the remembered one, else dark).
    pub theme: Option<String>,
    pub connect: ConnectOptions,
    pub overrides: crate::client::defaults::Overrides,
    pub data_dir: Option<PathBuf>,
    pub config_dir: Option<PathBuf>,
    pub sessions_dir: PathBuf,
    /// Servers found in servers files, for "add server".
    pub found: Vec<crate::client::spec::ServerSpec>,
    /// What was wrong with the user's files before the start (settings, servers files): shown
    /// once the explorer is up.
    pub problems: Vec<String>,
}

impl Launch {
    /// Reads what the explorer needs from files before it starts (the theme, the keys, the
    /// recovery marker) into the options of `App`. Marks the run as running.
    pub fn prepare(self) -> (Options, ConnectOptions, Option<PathBuf>, Option<PathBuf>) {
        let theme_dir = self.config_dir.as_ref().map(|d| d.join("themes"));
        let settings = self
            .config_dir
            .as_deref()
            .map(crate::settings::Settings::load)
            .unwrap_or_default();
        // The command line's theme over NO_COLOR over the settings (no-color.org: a choice
        // made for this run wins over the environment).
        let asked = self.theme.clone();
        let name = self
            .theme
            .or_else(|| (!crate::settings::colour_wanted()).then(|| "no-color".to_owned()))
            .or(settings.theme.clone())
            .unwrap_or_else(|| "dark".into());
        let (theme, theme_warning) = Theme::load_or_default(&name, theme_dir.as_deref());
        // `--theme NAME` is remembered for the next run, as choosing one in the explorer is
        // (the README says so); a theme that could not be used is not.
        if let (Some(asked), None, Some(dir)) = (&asked, &theme_warning, &self.config_dir)
            && settings.theme.as_deref() != Some(asked.as_str())
        {
            let _ = crate::settings::remember(dir, "theme", asked);
        }
        let (keymap, key_problems) = match self.config_dir.as_deref() {
            Some(dir) => crate::tui::keys_file::load(dir),
            None => Default::default(),
        };
        let mut problems = self.problems;
        problems.extend(theme_warning);
        problems.extend(key_problems);
        let recover = self
            .data_dir
            .as_deref()
            .map(persist::mark_running)
            .unwrap_or_default();
        let last_run = self.data_dir.as_deref().and_then(persist::last_run);
        let cwd = std::env::current_dir().unwrap_or_default();
        let sessions_dir = if self.sessions_dir.is_relative() {
            cwd.join(&self.sessions_dir)
        } else {
            self.sessions_dir
        };
        let options = Options {
            servers: self.servers,
            session: self.session,
            theme,
            problems,
            themes: Theme::names(theme_dir.as_deref()),
            keymap,
            paths: crate::tui::app::Paths {
                drafts: self
                    .data_dir
                    .as_deref()
                    .map(|d| persist::drafts_of(d, std::process::id())),
                autosave: self
                    .data_dir
                    .as_deref()
                    .map(|d| persist::autosave_of(d, std::process::id())),
                data_dir: self.data_dir,
                sessions_dir_exists: sessions_dir.is_dir(),
                scenarios_dir_exists: cwd.join("scenarios").is_dir(),
                sessions_dir,
                cwd,
            },
            recover,
            last_run,
            watch: self.watch,
            token: self.token,
            overrides: self.overrides,
            in_tmux: std::env::var_os("TMUX").is_some(),
            found: self.found,
        };
        (options, self.connect, theme_dir, self.config_dir)
    }
}

/// The terminal: set up, and always put back (on quit, on a signal, on a panic).
mod terminal {
    use crate::tui::persist;
    use ratatui::crossterm::event::{
        DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
        KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
    };
    use ratatui::crossterm::execute;
    use ratatui::crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
    use std::io::stdout;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicBool, Ordering};

    static ENHANCED_KEYS: AtomicBool = AtomicBool::new(false);

    /// Puts the terminal back as it was. Safe to call more than once, and from a panic.
    pub fn restore() {
        let mut out = stdout();
        if ENHANCED_KEYS.swap(false, Ordering::SeqCst) {
            let _ = execute!(out, PopKeyboardEnhancementFlags);
        }
        let _ = execute!(
            out,
            DisableBracketedPaste,
            DisableMouseCapture,
            LeaveAlternateScreen,
            ratatui::crossterm::cursor::Show
        );
        let _ = terminal::disable_raw_mode();
    }

    pub fn enter() -> Result<(), String> {
        terminal::enable_raw_mode().map_err(|e| {
            format!(
                "this is not a terminal ({e}); the headless commands (send, dialogue, replay, …) work without one"
            )
        })?;
        let mut out = stdout();
        let _ = execute!(
            out,
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste
        );
        if terminal::supports_keyboard_enhancement().unwrap_or(false)
            && execute!(
                out,
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
            )
            .is_ok()
        {
            ENHANCED_KEYS.store(true, Ordering::SeqCst);
        }
        Ok(())
    }

    /// On a panic: the terminal first, then a report file with the backtrace and where the
    /// autosave is, then a short message (the backtrace is in the report, not on the screen).
    pub fn install_panic_hook(data_dir: Option<PathBuf>) {
        std::panic::set_hook(Box::new(move |info| {
            restore();
            // The terminal went away (closed, its pipe broken): nothing crashed, and nothing
            // can be shown; the autosave and the recovery marker say the rest.
            if crate::tui::run::is_failed_print(info) {
                std::process::exit(129);
            }
            let backtrace = std::backtrace::Backtrace::force_capture();
            let autosave = data_dir
                .as_ref()
                .map(|d| persist::autosave_of(d, std::process::id()));
            let report = format!(
                "bkn-explorer {} crashed.\n\n{info}\n\nThe open session was autosaved after its last turn to {}; \
                 the explorer offers to recover it at the next start.\n\nBacktrace:\n{backtrace}\n",
                env!("CARGO_PKG_VERSION"),
                autosave
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "(no data directory)".into()),
            );
            let written = data_dir.as_ref().and_then(|dir| {
                let stamp = time::OffsetDateTime::now_utc().unix_timestamp();
                let path = dir.join(format!("crash-{stamp}.txt"));
                std::fs::create_dir_all(dir).ok()?;
                std::fs::write(&path, &report).ok()?;
                Some(path)
            });
            eprintln!(
                "bkn-explorer crashed: {info}\n{}{}",
                written
                    .map(|p| format!("a report with the backtrace is in {}\n", p.display()))
                    .unwrap_or_default(),
                autosave
                    .map(|p| format!("the session's autosave is {}\n", p.display()))
                    .unwrap_or_default()
            );
        }));
    }
}

/// Whether a panic is std's "failed printing to stdout/stderr": what `println!` does when the
/// reader went away (`| head`, a closed terminal). Not a crash: the program leaves quietly.
pub fn is_failed_print(info: &std::panic::PanicHookInfo<'_>) -> bool {
    let message = info
        .payload()
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| info.payload().downcast_ref::<&str>().copied())
        .unwrap_or_default();
    message.starts_with("failed printing to stdout")
        || message.starts_with("failed printing to stderr")
}

/// What ends the run when the terminal goes away without a SIGHUP (its input ends, drawing
/// fails): treated as SIGHUP is.
const TERMINAL_CLOSED: Signal = Signal::Hup;

/// Runs the explorer in the terminal until the user quits; returns the exit code.
pub fn run(launch: Launch) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .thread_stack_size(crate::protocol::json::DEEP_STACK)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bkn-explorer: cannot start the runtime: {e}");
            return 2;
        }
    };
    let code = runtime.block_on(run_async(launch));
    // Child servers are ended with their connections; do not wait for stragglers.
    runtime.shutdown_timeout(Duration::from_secs(2));
    code
}

async fn run_async(launch: Launch) -> u8 {
    use ratatui::Terminal;
    use ratatui::backend::CrosstermBackend;
    use std::io::stdout;

    let data_dir = launch.data_dir.clone();
    terminal::install_panic_hook(data_dir.clone());
    if let Err(e) = terminal::enter() {
        eprintln!("bkn-explorer: {e}");
        return 2;
    }
    let mut term = match Terminal::new(CrosstermBackend::new(stdout())) {
        Ok(t) => t,
        Err(e) => {
            terminal::restore();
            eprintln!("bkn-explorer: cannot use the terminal: {e}");
            return 2;
        }
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    spawn_input(tx.clone());
    spawn_ticks(tx.clone());
    #[cfg(unix)]
    spawn_signals(tx.clone());
    let (options, connect, theme_dir, config_dir) = launch.prepare();
    let mut runner = Runner::new(options, connect, theme_dir, config_dir, tx);
    if let Ok(size) = term.size() {
        runner.app.screen.resize(size.width, size.height);
    }
    // A test hook (docs/reliability.md): panic after the first frame, to check that the
    // terminal is restored and a crash report written.
    let panic_for_test = std::env::var_os("BKN_EXPLORER_TEST_PANIC").is_some();
    let mut dirty = true;
    let mut terminal_gone = false;
    let mut leave_by: Option<Instant> = None;
    loop {
        if dirty {
            if !terminal_gone && term.draw(|f| runner.draw(f)).is_err() {
                // The terminal went away (EIO, closed): nothing can be shown any more, and
                // nothing crashed. Leave as a closed terminal's SIGHUP does, the unsaved
                // work in the autosave.
                terminal_gone = true;
                if runner.quit.is_none() && !runner.app.leaving() {
                    runner.handle(Event::Signal(TERMINAL_CLOSED));
                }
            }
            if let Some(text) = runner.clipboard.take() {
                copy_to_clipboard(&text);
            }
            dirty = false;
            if panic_for_test {
                panic!("BKN_EXPLORER_TEST_PANIC is set: panicking after the first frame, as asked");
            }
        }
        // Leaving: wait (a little) for the sessions to end, so that HTTP servers get their
        // DELETE and stdio servers their end of input.
        if runner.quit.is_some() {
            let deadline =
                *leave_by.get_or_insert_with(|| Instant::now() + Duration::from_millis(1500));
            if !runner.closing() || Instant::now() >= deadline {
                break;
            }
        }
        let Some(event) = rx.recv().await else { break };
        dirty |= matters(&runner.app, &event);
        runner.handle(event);
        // Draw once for everything that is already waiting.
        while let Ok(event) = rx.try_recv() {
            dirty |= matters(&runner.app, &event);
            runner.handle(event);
        }
    }
    if let Some(dir) = &data_dir {
        mark_how_it_ended(dir, &runner);
    }
    terminal::restore();
    // A signal ends the run with the shell's code for it (128 + its number).
    runner.signal.map_or(0, Signal::exit_code)
}

/// Keys, mouse, paste and resizes, as events; the end of input as a closed terminal.
fn spawn_input(input: mpsc::UnboundedSender<Event>) {
    use futures::StreamExt;
    tokio::spawn(async move {
        let mut events = ratatui::crossterm::event::EventStream::new();
        while let Some(Ok(e)) = events.next().await {
            if input.send(Event::Input(e)).is_err() {
                return;
            }
        }
        // No more input: the terminal went away (closed, EIO). Leave as on SIGHUP.
        let _ = input.send(Event::Signal(TERMINAL_CLOSED));
    });
}

/// A tick every 100 ms (spinners, notices, elapsed times).
fn spawn_ticks(ticks: mpsc::UnboundedSender<Event>) {
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(Duration::from_millis(100));
        loop {
            interval.tick().await;
            if ticks.send(Event::Tick).is_err() {
                break;
            }
        }
    });
}

/// SIGTERM, SIGHUP and SIGINT, as an event (the first one that comes).
#[cfg(unix)]
fn spawn_signals(signals: mpsc::UnboundedSender<Event>) {
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hup), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
            signal(SignalKind::interrupt()),
        ) else {
            return;
        };
        // (In raw mode Ctrl-C is a key; SIGINT comes only from `kill -INT`.)
        let name = tokio::select! {
            _ = term.recv() => Signal::Term,
            _ = hup.recv() => Signal::Hup,
            _ = int.recv() => Signal::Int,
        };
        let _ = signals.send(Event::Signal(name));
    });
}

/// OSC 52: the terminal puts the text on the system clipboard (also over SSH).
fn copy_to_clipboard(text: &str) {
    use base64::Engine as _;
    use std::io::{Write, stdout};
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let _ = write!(stdout(), "\x1b]52;c;{encoded}\x07");
    let _ = stdout().flush();
}

/// Notes in the data directory how the run ended: stopped cleanly, or by a signal (the
/// next start offers the autosave, saying why).
fn mark_how_it_ended(dir: &std::path::Path, runner: &Runner) {
    match (runner.quit, runner.signal) {
        (Some(true), _) => persist::mark_stopped(dir, runner.kept),
        // Unsaved work went to the autosave: the next start offers it, saying why.
        (_, Some(signal)) => persist::mark_ended(dir, signal),
        _ => {}
    }
}

/// Whether an event can change the screen (a tick only when something moves).
fn matters(app: &App, event: &Event) -> bool {
    use crate::tui::app::ServerStatus;
    use crate::tui::dialogue::Status;
    match event {
        Event::Tick => {
            app.notices.shown().is_some()
                || app
                    .workspace()
                    .dialogues()
                    .values()
                    .any(|d| d.link.pending().is_some() || d.status == Status::Connecting)
                || app
                    .workspace()
                    .servers()
                    .values()
                    .any(|s| s.status == ServerStatus::Connecting)
                || app.certify.as_ref().is_some_and(|c| c.running())
        }
        _ => true,
    }
}
