//! What a server says about its lists changing, in both generations.
//!
//! - **2025-11-25**: the server sends `notifications/tools/list_changed` (and `resources/…`)
//!   on its session; `handler.rs` hears them.
//! - **2026-07-28**: there is no session and no standing stream: the client opts in with a
//!   `subscriptions/listen` request (SEP-2575) whose response is the stream (the server's
//!   acknowledgement first, every frame tagged with the request's id). rmcp's `Peer::listen`
//!   sends it, checks the acknowledgement and the tags, and buffers at most
//!   `DEFAULT_SUBSCRIPTION_CHANNEL_CAPACITY` notifications (a consumer that lags ends the
//!   stream rather than growing it). `open` keeps one open for as long as the connection
//!   lives, and listens again when it drops (a dropped stream is not resumable: what changed
//!   meanwhile is read again), up to `MAX_FAILURES` times in a row.
//!
//! Either way `ListChanges` tells the connection's listener (the explorer) at most once until
//! the lists are read again (`Connection::refresh`): a server that floods notifications costs
//! one pending refresh, never a queue that grows.

use crate::client::event::{ConnectionId, Event, EventSink, LogKind};
use rmcp::RoleClient;
use rmcp::model::{ServerCapabilities, ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, ServiceError, Subscription, SubscriptionEnd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How many listens in a row may fail (refused, or dropped before anything came) before the
/// client stops asking for this connection.
pub const MAX_FAILURES: u32 = 5;

/// The pause before listening again after the first failure; it doubles with each one.
const FIRST_PAUSE: Duration = Duration::from_millis(200);

/// A connection's news that its lists changed, coalesced until they are read again.
#[derive(Debug)]
pub struct ListChanges {
    connection: ConnectionId,
    events: EventSink,
    /// Told and not read again yet.
    pending: AtomicBool,
}

impl ListChanges {
    pub fn new(connection: ConnectionId, events: EventSink) -> Arc<ListChanges> {
        Arc::new(ListChanges {
            connection,
            events,
            pending: AtomicBool::new(false),
        })
    }

    /// The server said its `what` ("tools", "resources") changed: logged and told, unless a
    /// change told earlier has not been read again yet (that reading will see this one too).
    pub fn changed(&self, what: &'static str) {
        if self.pending.swap(true, Ordering::AcqRel) {
            return;
        }
        self.events.log(
            self.connection,
            LogKind::Client,
            format!("the server says its {what} changed: reading them again"),
        );
        self.events.emit(Event::ListChanged {
            connection: self.connection,
            what,
        });
    }

    /// Told, and not read again since.
    pub fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// The lists are about to be read again: a change from now on is news again.
    pub fn reading_again(&self) {
        self.pending.store(false, Ordering::Release);
    }
}

/// What to listen for on a server with these capabilities: the tools and resources list
/// changes it offers (None when it offers neither).
pub fn filter_for(capabilities: &ServerCapabilities) -> Option<SubscriptionFilter> {
    let filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .resources_list_changed()
        .build()
        .supported_by(capabilities);
    (filter.tools_list_changed.is_some() || filter.resources_list_changed.is_some())
        .then_some(filter)
}

/// Opens a `subscriptions/listen` stream on `peer` and keeps one open until `stop` (the
/// connection's end). The first is awaited (up to `timeout`) before this returns, so that the
/// lists read next cannot miss a change told before the server heard the listen.
pub async fn open(
    peer: Peer<RoleClient>,
    filter: SubscriptionFilter,
    changes: Arc<ListChanges>,
    stop: CancellationToken,
    timeout: Duration,
) {
    let first = match tokio::time::timeout(timeout, peer.listen(filter.clone())).await {
        Ok(listened) => listened,
        Err(_) => Err(ServiceError::Timeout { timeout }),
    };
    tokio::spawn(async move {
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = keep_listening(&peer, &filter, &changes, first) => {}
        }
    });
}

async fn keep_listening(
    peer: &Peer<RoleClient>,
    filter: &SubscriptionFilter,
    changes: &ListChanges,
    first: Result<Subscription, ServiceError>,
) {
    let log = |text: String| {
        changes
            .events
            .log(changes.connection, LogKind::Client, text)
    };
    let mut failures = 0u32;
    let mut dropped_before = false;
    let mut next = Some(first);
    loop {
        let listened = match next.take() {
            Some(first) => first,
            None => peer.listen(filter.clone()).await,
        };
        let mut subscription = match listened {
            Ok(subscription) => subscription,
            // The connection ended: nothing to listen on any more.
            Err(ServiceError::TransportClosed) => return,
            Err(e) => {
                failures += 1;
                log(format!(
                    "subscriptions/listen failed ({failures} of {MAX_FAILURES}): {e}"
                ));
                if failures >= MAX_FAILURES {
                    log(gave_up());
                    return;
                }
                tokio::time::sleep(FIRST_PAUSE * 2u32.pow(failures - 1)).await;
                continue;
            }
        };
        log(format!(
            "listening for {} changes (subscriptions/listen, id {})",
            describe(subscription.acknowledged()),
            subscription.id()
        ));
        // A stream is not resumable: what changed while it was down was not heard.
        if dropped_before {
            changes.changed("tools and resources");
        }
        let mut heard = false;
        let ended = loop {
            match subscription.next().await {
                Ok(Some(notification)) => {
                    heard = true;
                    match notification {
                        ServerNotification::ToolListChangedNotification(_) => {
                            changes.changed("tools")
                        }
                        ServerNotification::ResourceListChangedNotification(_) => {
                            changes.changed("resources")
                        }
                        // rmcp passes on only what the acknowledged filter names.
                        _ => {}
                    }
                }
                Ok(None) => break how_it_ended(subscription.end()),
                Err(e) => break format!("the server broke the subscription: {e}"),
            }
        };
        if peer.is_transport_closed() {
            return;
        }
        log(format!("{ended}; listening again"));
        dropped_before = true;
        failures = if heard { 0 } else { failures + 1 };
        if failures >= MAX_FAILURES {
            log(gave_up());
            return;
        }
        if failures > 0 {
            tokio::time::sleep(FIRST_PAUSE * 2u32.pow(failures - 1)).await;
        }
    }
}

fn gave_up() -> String {
    format!(
        "stopped listening for list changes after {MAX_FAILURES} failures in a row: the tools \
         and resources are read again only on reconnect (R)"
    )
}

fn how_it_ended(end: Option<&SubscriptionEnd>) -> String {
    match end {
        Some(SubscriptionEnd::Graceful(_)) => "the server ended the subscription".into(),
        Some(SubscriptionEnd::Cancelled) => "the server cancelled the subscription".into(),
        Some(SubscriptionEnd::Lagged { capacity }) => {
            format!("the subscription was ended: more than {capacity} notifications waited")
        }
        Some(SubscriptionEnd::Abrupt) | None => "the subscription's stream dropped".into(),
        Some(_) => "the subscription ended".into(),
    }
}

fn describe(filter: &SubscriptionFilter) -> &'static str {
    match (
        filter.tools_list_changed == Some(true),
        filter.resources_list_changed == Some(true),
    ) {
        (true, true) => "tools and resources list",
        (true, false) => "tools list",
        (false, true) => "resources list",
        (false, false) => "no list",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_changes_is_told_once_until_read_again() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let changes = ListChanges::new(7, EventSink::new(tx));
        for _ in 0..10_000 {
            changes.changed("tools");
        }
        let told = |rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>| {
            std::iter::from_fn(|| rx.try_recv().ok())
                .filter(|e| matches!(e, Event::ListChanged { .. }))
                .count()
        };
        assert_eq!(told(&mut rx), 1);
        changes.reading_again();
        changes.changed("resources");
        changes.changed("tools");
        assert_eq!(told(&mut rx), 1);
    }

    #[test]
    fn only_what_the_server_offers_is_listened_for() {
        use rmcp::model::ServerCapabilities;
        let none = ServerCapabilities::builder().enable_tools().build();
        assert_eq!(filter_for(&none), None);
        let tools = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .build();
        let filter = filter_for(&tools).expect("tools list changes");
        assert_eq!(filter.tools_list_changed, Some(true));
        assert_eq!(filter.resources_list_changed, None);
    }
}
