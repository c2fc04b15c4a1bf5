//! The event queue: a total order on (time, event class, sequence number).

use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Event classes, in the order they are processed at one instant.
///
/// Job ends (completions, time-limit kills, evictions whose grace period is over) come
/// first so that resources freed at an instant are visible to everything after, as in
/// Batsim and Slurm's main loop. Controller timers come next (node events given as
/// input, maintenance, autoscalers), then arrival-class events (see
/// [`crate::engine`] for every kind).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum EventClass {
    /// A running job ends (completed, failed or killed at its time limit).
    JobEnd = 0,
    /// A controller's timer ([`crate::controller::Action::WakeAt`]): node events given as
    /// input, a maintenance window, an autoscaler's loop.
    Controller = 1,
    /// A job is submitted.
    JobArrival = 2,
}

/// Full ordering key of one event.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventKey {
    /// When it happens.
    pub time: SimTime,
    /// Its class: lower classes first at equal time.
    pub class: EventClass,
    /// Insertion order: earlier scheduled first at equal time and class.
    pub seq: u64,
}

/// Handle to a scheduled event, for cancellation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(pub u64);

/// A priority queue of events totally ordered by [`EventKey`].
///
/// ```
/// use sim_core::event::{EventClass, EventQueue};
/// use sim_core::time::SimTime;
/// let mut q = EventQueue::new();
/// q.schedule(SimTime(5), EventClass::JobArrival, "arrive");
/// q.schedule(SimTime(5), EventClass::JobEnd, "end");
/// q.schedule(SimTime(1), EventClass::JobArrival, "early");
/// let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
/// assert_eq!(order, ["early", "end", "arrive"]);
/// ```
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<(EventKey, Slot<E>)>>,
    next_seq: u64,
    cancelled: std::collections::BTreeSet<u64>,
}

#[derive(Debug)]
struct Slot<E>(E);

impl<E> PartialEq for Slot<E> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<E> Eq for Slot<E> {}
impl<E> PartialOrd for Slot<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Slot<E> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::new(), next_seq: 0, cancelled: Default::default() }
    }

    /// Schedules `ev` at `time`; returns its id. Keys are unique (the sequence number).
    pub fn schedule(&mut self, time: SimTime, class: EventClass, ev: E) -> EventId {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse((EventKey { time, class, seq }, Slot(ev))));
        EventId(seq)
    }

    /// Cancels a scheduled event (lazily: it is skipped when it reaches the front).
    pub fn cancel(&mut self, id: EventId) {
        self.cancelled.insert(id.0);
    }

    #[inline]
    fn skip_cancelled(&mut self) {
        while let Some(Reverse((k, _))) = self.heap.peek() {
            if self.cancelled.is_empty() || !self.cancelled.remove(&k.seq) {
                break;
            }
            self.heap.pop();
        }
    }

    /// The key of the next event, if any. Inlined: the run loop asks for it at every
    /// event.
    #[inline]
    pub fn peek_key(&mut self) -> Option<EventKey> {
        self.skip_cancelled();
        self.heap.peek().map(|Reverse((k, _))| *k)
    }

    /// Removes and returns the next event.
    pub fn pop(&mut self) -> Option<(EventKey, E)> {
        self.skip_cancelled();
        self.heap.pop().map(|Reverse((k, Slot(e)))| (k, e))
    }

    /// The events still queued, cancelled ones left out, in no particular order (a caller
    /// sorts what it reads before anything depends on it).
    pub fn pending(&self) -> impl Iterator<Item = (EventKey, &E)> + '_ {
        self.heap.iter().filter(|Reverse((k, _))| !self.cancelled.contains(&k.seq)).map(|Reverse((k, Slot(e)))| (*k, e))
    }

    /// Number of events still queued (cancelled ones included until skipped).
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is queued.
    pub fn is_empty(&self) -> bool {
        self.heap.len() == self.cancelled.len()
    }
}
