//! What a `tools/call` may answer besides its result, and how the client follows it to one:
//! - 2026-07-28 `input_required` (SEP-2322): the server asks for input and the client sends
//!   the call again with the answers (`rounds`);
//! - a Task (SEP-2663, the extension `io.modelcontextprotocol/tasks`, declared by this client
//!   whenever it may speak 2026-07-28): `resultType: "task"` and a task id, then `tasks/get`
//!   polled at the server's `pollIntervalMs` until the task is completed (its result is the
//!   call's, as if it had come at once), failed (its JSON-RPC error) or cancelled; an
//!   `input_required` task's `inputRequests` are answered as the MRTR ones are (`--answers`,
//!   or the person at the explorer) and given back with `tasks/update`; the user's cancel
//!   sends `tasks/cancel`.
//!
//! Waiting is bounded: each `tasks/get` must be answered within the connection's timeout,
//! and a task whose state (status, statusMessage) does not change for that long is given up
//! (cancelled), as a call without progress is. Every state seen is told: in the log, as an
//! `Event::Task` (the explorer's pending turn), and to `TaskNotes` (a headless command's
//! stderr).

use crate::client::connection::CallError;
use crate::client::event::{ConnectionId, Event, EventSink, LogKind};
use crate::client::handler::Handler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientResult,
    CreateTaskResult, DetailedTask, GetTaskParams, InputRequest, InputRequests, InputResponses,
    RequestId, ServerRequest, Task, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{Peer, RequestContext, ServiceError};
use rmcp::{RoleClient, Service};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The poll interval when the server suggests none.
pub const POLL_DEFAULT: Duration = Duration::from_millis(500);
/// The shortest wait between polls, whatever the server suggests (a server asking for 0 ms
/// would have the client spin).
pub const POLL_FLOOR: Duration = Duration::from_millis(20);
/// The longest: a server suggesting an hour would otherwise hold the turn past its timeout
/// without a word.
pub const POLL_CEILING: Duration = Duration::from_secs(5);
/// The most `input_required` rounds a task may ask for: a server that keeps asking gets an
/// error, not an answering loop.
pub const INPUT_ROUNDS: usize = 32;

/// How long to wait before the next `tasks/get`: the server's `pollIntervalMs`, kept between
/// the floor and the ceiling.
pub fn poll_interval(suggested_ms: Option<u64>) -> Duration {
    suggested_ms
        .map(Duration::from_millis)
        .unwrap_or(POLL_DEFAULT)
        .clamp(POLL_FLOOR, POLL_CEILING)
}

/// A task's state as the client saw it, for whoever shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskNote {
    pub task_id: String,
    /// As the wire says it: working, input_required, completed, failed, cancelled.
    pub status: String,
    pub message: Option<String>,
}

impl TaskNote {
    fn of(task: &Task) -> TaskNote {
        TaskNote {
            task_id: task.task_id.clone(),
            status: status_text(task.status),
            message: task.status_message.clone(),
        }
    }
}

impl std::fmt::Display for TaskNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "task {} {}", self.task_id, self.status)?;
        if let Some(m) = &self.message {
            write!(f, ": {m}")?;
        }
        Ok(())
    }
}

fn status_text(status: TaskStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{status:?}"))
}

/// Where a headless command hears of its tasks (it prints them on stderr).
#[derive(Clone)]
pub struct TaskNotes(pub Arc<dyn Fn(&TaskNote) + Send + Sync>);

impl std::fmt::Debug for TaskNotes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskNotes")
    }
}

/// Why following stopped: an error of rmcp's (the connection turns it into words), or one
/// of the task's own.
pub enum Stopped {
    Service(ServiceError),
    Call(CallError),
}

impl From<ServiceError> for Stopped {
    fn from(e: ServiceError) -> Stopped {
        Stopped::Service(e)
    }
}

/// What a `tools/call` came to through rmcp, before any task is followed.
pub enum Called {
    Result(CallToolResult),
    Task(CreateTaskResult),
}

/// The answers to what the server asks in `requests` (keyed as it keyed them), given by the
/// client handler as rmcp gives them to a server's own requests: each with its key as the
/// request id, which the handler reads as the input request's name.
pub async fn fulfil(
    peer: &Peer<RoleClient>,
    handler: &Handler,
    requests: InputRequests,
) -> Result<InputResponses, ServiceError> {
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let context = RequestContext::new(RequestId::String(Arc::from(key.as_str())), peer.clone());
        let request = match request {
            InputRequest::CreateMessage(r) => ServerRequest::CreateMessageRequest(r),
            InputRequest::Elicitation(r) => ServerRequest::ElicitRequest(r),
            InputRequest::ListRoots(r) => ServerRequest::ListRootsRequest(r),
            _ => return Err(ServiceError::UnexpectedResponse),
        };
        let answer = match handler
            .handle_request(request, context)
            .await
            .map_err(ServiceError::McpError)?
        {
            ClientResult::CreateMessageResult(r) => serde_json::to_value(r),
            ClientResult::ElicitResult(r) => serde_json::to_value(r),
            ClientResult::ListRootsResult(r) => serde_json::to_value(r),
            _ => return Err(ServiceError::UnexpectedResponse),
        }
        .map_err(|e| {
            ServiceError::McpError(rmcp::ErrorData::internal_error(
                format!("the answer to input request {key} cannot be written: {e}"),
                None,
            ))
        })?;
        responses.insert(key, answer);
    }
    Ok(responses)
}

/// A `tools/call` through rmcp, its 2026-07-28 `input_required` rounds answered (as rmcp's
/// own `call_tool` does, which gives up on a task), up to where it gives a result or a task.
pub async fn rounds(
    peer: &Peer<RoleClient>,
    handler: &Handler,
    mut params: CallToolRequestParams,
) -> Result<Called, ServiceError> {
    let mut state_only = 0u32;
    for _ in 0..rmcp::model::DEFAULT_MRTR_MAX_ROUNDS {
        match peer.call_tool_once(params.clone()).await? {
            CallToolResponse::Complete(result) => return Ok(Called::Result(result)),
            CallToolResponse::Task(task) => return Ok(Called::Task(task)),
            CallToolResponse::InputRequired(asked) => {
                let requests = asked.input_requests.unwrap_or_default();
                if requests.is_empty() && asked.request_state.is_none() {
                    return Err(ServiceError::UnexpectedResponse);
                }
                if requests.is_empty() {
                    // Only state to carry: a short pause that grows, as rmcp makes it.
                    let ms = (50u64 << state_only.min(3)).min(250);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    state_only += 1;
                } else {
                    state_only = 0;
                }
                let responses = fulfil(peer, handler, requests).await?;
                params.input_responses = (!responses.is_empty()).then_some(responses);
                params.request_state = asked.request_state;
            }
            _ => return Err(ServiceError::UnexpectedResponse),
        }
    }
    Err(ServiceError::InputRequiredRoundsExceeded {
        max_rounds: rmcp::model::DEFAULT_MRTR_MAX_ROUNDS,
    })
}

/// What following a task needs of its connection.
pub struct Follower<'a> {
    pub peer: &'a Peer<RoleClient>,
    pub handler: &'a Handler,
    pub connection: ConnectionId,
    pub events: &'a EventSink,
    pub notes: Option<&'a TaskNotes>,
    /// Each `tasks/get` is answered within it, and the task changes within it.
    pub timeout: Duration,
}

impl Follower<'_> {
    fn tell(&self, note: &TaskNote) {
        self.events
            .log(self.connection, LogKind::Client, note.to_string());
        self.events.emit(Event::Task {
            connection: self.connection,
            note: note.clone(),
        });
        if let Some(notes) = self.notes {
            (notes.0)(note);
        }
    }

    /// Follows the task `created` answered a `tools/call` with, to the call's result.
    pub async fn follow(
        &self,
        created: CreateTaskResult,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, Stopped> {
        let mut task = created.task;
        let id = task.task_id.clone();
        let ttl = task.ttl_ms.map(Duration::from_millis);
        let began = tokio::time::Instant::now();
        let mut seen = TaskNote::of(&task);
        self.tell(&seen);
        let mut deadline = began + self.timeout;
        let mut input = InputRounds::default();
        loop {
            let wait = poll_interval(task.poll_interval_ms);
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = cancel.cancelled() => return Err(self.cancelled_by_user(&id).await),
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(self.unchanged_too_long(&id, &seen).await);
            }
            let detailed = self.get(&id, ttl, began, cancel).await?;
            task = detailed.task;
            let note = TaskNote::of(&task);
            if note != seen {
                self.tell(&note);
                seen = note;
                deadline = tokio::time::Instant::now() + self.timeout;
            }
            match detailed.payload {
                TaskPayload::InputRequired { input_requests } => {
                    if self
                        .give_input(&id, input_requests, &mut input, cancel)
                        .await?
                    {
                        // The person's time to answer is theirs, not the task's.
                        deadline = tokio::time::Instant::now() + self.timeout;
                    }
                }
                payload => {
                    if let Some(end) = task_end(&id, &task, payload) {
                        return end;
                    }
                }
            }
        }
    }

    /// The user's cancel: the server is sent `tasks/cancel`.
    async fn cancelled_by_user(&self, id: &str) -> Stopped {
        Stopped::Call(self.cancel(id, "cancelled by the user").await)
    }

    /// A task whose state did not change within the timeout is given up (cancelled), as a
    /// call without progress is.
    async fn unchanged_too_long(&self, id: &str, seen: &TaskNote) -> Stopped {
        let why = format!(
            "task {id} stayed {} for {} without a change",
            seen.status,
            crate::duration::show(self.timeout)
        );
        self.cancel(id, &why).await;
        Stopped::Call(CallError::Timeout {
            after: self.timeout,
            note: Some(format!("{why}; the server was sent tasks/cancel")),
        })
    }

    /// The task's state by `tasks/get`, answered within the timeout, of the task asked for;
    /// a server that no longer knows it says whether its ttl (from `began`) has passed.
    async fn get(
        &self,
        id: &str,
        ttl: Option<Duration>,
        began: tokio::time::Instant,
        cancel: &CancellationToken,
    ) -> Result<DetailedTask, Stopped> {
        let got = tokio::select! {
            got = tokio::time::timeout(self.timeout, self.peer.get_task(GetTaskParams::new(id.to_owned()))) => got,
            () = cancel.cancelled() => return Err(self.cancelled_by_user(id).await),
        };
        let detailed = match got {
            Err(_) => {
                return Err(Stopped::Call(CallError::Timeout {
                    after: self.timeout,
                    note: Some(format!("the server did not answer tasks/get for task {id}")),
                }));
            }
            Ok(Err(ServiceError::McpError(e))) => {
                let expired = ttl.is_some_and(|ttl| began.elapsed() >= ttl);
                return Err(Stopped::Call(CallError::Protocol(format!(
                    "the server no longer knows task {id}{}: {} ({})",
                    if expired {
                        format!(
                            " (its ttl of {} ms has passed: it expired)",
                            ttl.unwrap_or_default().as_millis()
                        )
                    } else {
                        String::new()
                    },
                    e.message,
                    e.code.0
                ))));
            }
            Ok(Err(ServiceError::UnexpectedResponse)) => {
                return Err(Stopped::Call(CallError::Protocol(format!(
                    "the answer to tasks/get for task {id} is not a task's state"
                ))));
            }
            Ok(Err(other)) => return Err(Stopped::Service(other)),
            Ok(Ok(got)) => got.task,
        };
        if detailed.task.task_id != id {
            return Err(Stopped::Call(CallError::Protocol(format!(
                "tasks/get for task {id} answered with task {}",
                detailed.task.task_id
            ))));
        }
        Ok(detailed)
    }

    /// An `input_required` task's new requests answered (as the MRTR ones are) and given back
    /// with `tasks/update`; false when it asked nothing new.
    async fn give_input(
        &self,
        id: &str,
        input_requests: InputRequests,
        input: &mut InputRounds,
        cancel: &CancellationToken,
    ) -> Result<bool, Stopped> {
        // Keys are unique over the task's life: one already answered is waiting for the
        // server to take the answer, not asking again.
        let new: InputRequests = input_requests
            .into_iter()
            .filter(|(k, _)| !input.answered.contains(k))
            .collect();
        if new.is_empty() {
            return Ok(false);
        }
        input.rounds += 1;
        if input.rounds > INPUT_ROUNDS {
            let why = format!("task {id} asked for input more than {INPUT_ROUNDS} times");
            self.cancel(id, &why).await;
            return Err(Stopped::Call(CallError::Protocol(why)));
        }
        input.answered.extend(new.keys().cloned());
        let responses = tokio::select! {
            r = fulfil(self.peer, self.handler, new) => r,
            () = cancel.cancelled() => return Err(self.cancelled_by_user(id).await),
        };
        let responses = match responses {
            Ok(r) => r,
            Err(e) => {
                // Nobody can answer: the task cannot go on.
                self.cancel(id, "what it asked went unanswered").await;
                return Err(Stopped::Service(e));
            }
        };
        match tokio::time::timeout(
            self.timeout,
            self.peer
                .update_task(UpdateTaskParams::new(id.to_owned(), responses)),
        )
        .await
        {
            Ok(Ok(())) => Ok(true),
            Ok(Err(e)) => Err(Stopped::Service(e)),
            Err(_) => Err(Stopped::Call(CallError::Timeout {
                after: self.timeout,
                note: Some(format!(
                    "the server did not acknowledge tasks/update for task {id}"
                )),
            })),
        }
    }

    /// Sends `tasks/cancel` for `id` (waiting at most the timeout for its acknowledgement)
    /// and gives the turn's error.
    async fn cancel(&self, id: &str, why: &str) -> CallError {
        let acked = tokio::time::timeout(
            self.timeout,
            self.peer.cancel_task(CancelTaskParams::new(id.to_owned())),
        )
        .await;
        let how = match acked {
            Ok(Ok(())) => "acknowledged".to_owned(),
            Ok(Err(e)) => format!("not acknowledged: {e}"),
            Err(_) => format!(
                "not acknowledged within {}",
                crate::duration::show(self.timeout)
            ),
        };
        self.events.log(
            self.connection,
            LogKind::Client,
            format!("task {id}: {why}; tasks/cancel sent ({how})"),
        );
        CallError::TaskCancelled(format!("task {id} {why}; tasks/cancel sent ({how})"))
    }
}

/// The input a task asked for so far: the keys answered, and how many rounds.
#[derive(Default)]
struct InputRounds {
    answered: BTreeSet<String>,
    rounds: usize,
}

/// A task's end, when its payload is one: completed (its result is the call's), failed (its
/// JSON-RPC error) or cancelled by the server; None while it works.
fn task_end(
    id: &str,
    task: &Task,
    payload: TaskPayload,
) -> Option<Result<CallToolResult, Stopped>> {
    Some(match payload {
        TaskPayload::Completed { result } => {
            serde_json::from_value(serde_json::Value::Object(result)).map_err(|e| {
                Stopped::Call(CallError::Protocol(format!(
                    "task {id} completed with a result that is not a tool's: {e}"
                )))
            })
        }
        TaskPayload::Failed { error } => {
            let message = error
                .get("message")
                .and_then(|m| m.as_str())
                .map(str::to_owned)
                .unwrap_or_else(|| serde_json::Value::Object(error.clone()).to_string());
            let code = error
                .get("code")
                .and_then(serde_json::Value::as_i64)
                .map(|c| format!(" ({c})"))
                .unwrap_or_default();
            Err(Stopped::Call(CallError::Protocol(format!(
                "task {id} failed: {message}{code}"
            ))))
        }
        TaskPayload::Cancelled => Err(Stopped::Call(CallError::Protocol(format!(
            "task {id} was cancelled by the server{}",
            task.status_message
                .as_ref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        )))),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poll_interval_is_the_servers_within_bounds() {
        assert_eq!(poll_interval(None), POLL_DEFAULT);
        assert_eq!(poll_interval(Some(0)), POLL_FLOOR);
        assert_eq!(poll_interval(Some(300)), Duration::from_millis(300));
        assert_eq!(poll_interval(Some(3_600_000)), POLL_CEILING);
    }

    #[test]
    fn a_note_says_the_task_its_status_and_message() {
        let task = Task::new("t-1", TaskStatus::InputRequired, "a", "b")
            .with_status_message("waiting for you");
        assert_eq!(
            TaskNote::of(&task).to_string(),
            "task t-1 input_required: waiting for you"
        );
    }
}
