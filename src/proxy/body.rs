//! Bodies on their way through the HTTP proxy: passed on as they come, never held whole, with
//! the copy the recording needs kept beside them. A copy is kept up to the message limit, and
//! all the copies in flight together within one budget for the whole proxy, so that what
//! clients send costs the proxy a bounded amount of memory however many send at once. A
//! message the recording could not keep is recorded as a note that says so and why (never a
//! cut message).

use axum::body::Bytes;
use futures::{Stream, StreamExt};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// The most bytes the copies of messages in flight hold together, unless one message limit is
/// more (a message within the limit can always be kept when it is alone).
pub const BUDGET: usize = 64 << 20;

/// What all the copies in flight hold, shared by every connection.
pub struct Budget {
    held: AtomicUsize,
    max: usize,
}

impl Budget {
    pub fn new(max: usize) -> Arc<Budget> {
        Arc::new(Budget {
            held: AtomicUsize::new(0),
            max,
        })
    }

    pub fn max(&self) -> usize {
        self.max
    }

    fn take(&self, n: usize) -> bool {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                (held + n <= self.max).then_some(held + n)
            })
            .is_ok()
    }

    fn give_back(&self, n: usize) {
        self.held.fetch_sub(n, Ordering::AcqRel);
    }
}

/// Why a message was not kept for the recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lost {
    /// It is longer than the message limit.
    OverLimit,
    /// The copies in flight already held the budget.
    OverBudget,
}

/// What the recording gets of one message.
pub enum Kept {
    Whole(Vec<u8>),
    /// Not kept, and why; its length (so far, if it did not end).
    Lost(Lost, usize),
}

/// The copy of one message as it comes.
pub struct Copy {
    bytes: Vec<u8>,
    total: usize,
    lost: Option<Lost>,
    limit: usize,
    budget: Arc<Budget>,
    /// What this copy took of the budget.
    reserved: usize,
}

impl Copy {
    pub fn new(limit: usize, budget: Arc<Budget>) -> Copy {
        Copy {
            bytes: Vec::new(),
            total: 0,
            lost: None,
            limit,
            budget,
            reserved: 0,
        }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len();
        if self.lost.is_some() || chunk.is_empty() {
            return;
        }
        let needed = self.bytes.len() + chunk.len();
        // The budget counts what the copy holds (its capacity), grown by doubling as a `Vec`
        // grows, but never past the limit.
        let grown = if needed <= self.bytes.capacity() {
            self.bytes.capacity()
        } else {
            needed.max(self.bytes.capacity() * 2).min(self.limit)
        };
        let lost = if needed > self.limit {
            Lost::OverLimit
        } else if !self.budget.take(grown - self.reserved) {
            Lost::OverBudget
        } else {
            self.bytes.reserve_exact(grown - self.bytes.len());
            self.reserved = grown;
            self.bytes.extend_from_slice(chunk);
            return;
        };
        self.lost = Some(lost);
        self.release();
    }

    pub fn len(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The message, or why it was not kept; the copy starts again, empty.
    pub fn take(&mut self) -> Kept {
        let kept = match self.lost.take() {
            Some(why) => Kept::Lost(why, self.total),
            None => Kept::Whole(std::mem::take(&mut self.bytes)),
        };
        self.release();
        self.total = 0;
        kept
    }

    fn release(&mut self) {
        // The budget is given back when the copy is no longer held (the `Vec` that `take`
        // hands on is the caller's for a moment, to observe it).
        self.budget.give_back(std::mem::take(&mut self.reserved));
        self.bytes = Vec::new();
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        self.release();
    }
}

/// How a request body's passage ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Still coming (the upstream answered before it ended).
    Open,
    Whole,
    /// Longer than the body limit: cut off, the upstream never got it whole.
    TooLong,
    /// Not whole within the body deadline.
    TooSlow,
    /// The agent's connection broke.
    Broken,
}

/// A request body and its copy, shared by the stream that passes it and the handler.
pub struct Passage {
    pub copy: Copy,
    pub end: End,
}

/// The agent's body as the upstream reads it: each chunk is copied for the recording on its
/// way; past `max` bytes, or once the deadline passes, it ends with an error, so that the
/// upstream never takes a part for the whole.
pub struct Passing {
    inner: Pin<Box<dyn Stream<Item = Result<Bytes, axum::Error>> + Send>>,
    passage: Arc<Mutex<Passage>>,
    max: usize,
    /// The length the agent declared: once it has come, the body is whole (the upstream may
    /// not ask for more).
    declared: Option<u64>,
    deadline: Pin<Box<tokio::time::Sleep>>,
    done: bool,
}

impl Passing {
    pub fn new(
        body: axum::body::Body,
        max: usize,
        declared: Option<u64>,
        copy: Copy,
        deadline: std::time::Duration,
    ) -> (Passing, Arc<Mutex<Passage>>) {
        let passage = Arc::new(Mutex::new(Passage {
            copy,
            end: End::Open,
        }));
        (
            Passing {
                inner: Box::pin(body.into_data_stream()),
                passage: passage.clone(),
                max,
                declared,
                deadline: Box::pin(tokio::time::sleep(deadline)),
                done: false,
            },
            passage,
        )
    }

    fn end(&mut self, end: End) {
        self.done = true;
        self.passage.lock().unwrap_or_else(|p| p.into_inner()).end = end;
    }
}

impl Stream for Passing {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        let failed = |why: String| Poll::Ready(Some(Err(std::io::Error::other(why))));
        match self.inner.poll_next_unpin(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                let mut passage = self.passage.lock().unwrap_or_else(|p| p.into_inner());
                passage.copy.push(&chunk);
                let total = passage.copy.len();
                drop(passage);
                if total > self.max {
                    self.end(End::TooLong);
                    return failed(format!("the request body exceeds {} bytes", self.max));
                }
                if self.declared == Some(total as u64) {
                    self.end(End::Whole);
                }
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(e))) => {
                self.end(End::Broken);
                failed(format!("the agent's body broke off: {e}"))
            }
            Poll::Ready(None) => {
                self.end(End::Whole);
                Poll::Ready(None)
            }
            Poll::Pending => {
                if self.deadline.as_mut().poll(cx).is_ready() {
                    self.end(End::TooSlow);
                    return failed("the request body did not come whole in time".into());
                }
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_keeps_within_its_limit_and_the_budget_and_gives_the_budget_back() {
        let budget = Budget::new(10);
        let mut a = Copy::new(8, budget.clone());
        a.push(b"12345");
        let mut b = Copy::new(8, budget.clone());
        b.push(b"123456");
        assert!(matches!(b.take(), Kept::Lost(Lost::OverBudget, 6)));
        a.push(b"6789");
        assert!(matches!(a.take(), Kept::Lost(Lost::OverLimit, 9)));
        // Both gave back what they held: a message of the whole budget fits again.
        let mut c = Copy::new(10, budget.clone());
        c.push(b"0123456789");
        match c.take() {
            Kept::Whole(bytes) => assert_eq!(bytes, b"0123456789"),
            Kept::Lost(..) => panic!("kept within the budget"),
        }
        drop(c);
        assert_eq!(budget.held.load(Ordering::Acquire), 0);
    }
}
