//! The check that ends a run which would spin: its policy retrying for ever on a cluster
//! where nothing else can change.
//!
//! The run is *quiet* when no job runs, no job is left to arrive, no job waits for a
//! controller's decision and the only pending events are the policy's own timers
//! ([`crate::policy::Decision::WakeAt`], permit timeouts of held gangs). Then only the
//! policy's passes can change anything, and they are deterministic in what they see:
//! the queue, the tasks held, the nodes, the timers still pending (relative to now),
//! what happened since the previous pass, and what the policy says of its own state
//! ([`crate::policy::Policy::retry_state`]). When a quiet pass would see a state seen at
//! an earlier quiet pass, with nothing started or ended in between, the run would repeat
//! that stretch for ever (Kueue evicting and readmitting two partial gangs together,
//! say): it ends there and reports a [`Stall`]. A policy that says nothing of its state
//! is never cut short.

use super::records::Stall;
use super::{Engine, Ev};
use crate::time::SimTime;
use std::collections::BTreeMap;

/// The states quiet passes saw since the run last became quiet, with when each was
/// first seen, and the stall once found.
#[derive(Default)]
pub(super) struct QuietStates {
    seen: BTreeMap<Vec<u64>, SimTime>,
    pub(super) stall: Option<Stall>,
}

impl Engine<'_> {
    /// Before a pass: whether the run would spin from here (then [`QuietStates::stall`] is
    /// set and the run must end). Forgets the states seen when the run is not quiet.
    pub(super) fn would_spin(&mut self) -> bool {
        if !self.is_quiet() {
            if !self.quiet.seen.is_empty() {
                self.quiet.seen.clear();
            }
            return false;
        }
        let mut state = Vec::new();
        let says = {
            let view = sched_view!(self);
            self.policy.retry_state(&view, &mut state)
        };
        if !says {
            return false;
        }
        self.engine_state(&mut state);
        match self.quiet.seen.get(&state) {
            Some(&since) => {
                self.quiet.stall = Some(Stall { since, at: self.now, waiting: self.queue.len() as u32 });
                true
            }
            None => {
                self.quiet.seen.insert(state, self.now);
                false
            }
        }
    }

    /// Nothing runs, nothing is left to arrive or to decide, only policy timers pend.
    fn is_quiet(&self) -> bool {
        self.running_by_start.is_empty()
            && self.suspended.is_empty()
            && self.next_arrival_time().is_none()
            && self.killed.is_empty()
            && self.evicting.is_empty()
            && !self.queue.is_empty()
            && self.events.pending().all(|(_, e)| matches!(e, Ev::Wake | Ev::HoldTimeout(..)))
    }

    /// What a pass now would see besides the policy's own state, appended to `out`:
    /// the queue, each job's held tasks, node states and label epoch, the pending policy
    /// timers relative to now (sorted: the heap's order is arbitrary), and what happened
    /// since the previous pass.
    fn engine_state(&self, out: &mut Vec<u64>) {
        let now = self.now;
        out.push(u64::MAX);
        out.extend(self.queue.iter().map(|j| j.0 as u64));
        out.push(u64::MAX);
        for (i, h) in self.holds.iter().filter(|(_, h)| !h.is_empty()) {
            out.push(i as u64);
            for b in h {
                out.push(b.node.0 as u64);
                out.extend(b.gpus.iter().map(|&g| g as u64));
                out.push(u64::MAX - 1);
            }
        }
        out.push(u64::MAX);
        out.extend(self.node_state.iter().map(|s| *s as u64));
        out.push(self.ledger.meta_epoch());
        let mut timers: Vec<(u64, u64)> = self
            .events
            .pending()
            .filter_map(|(k, e)| {
                let offset = (k.time - now).0;
                match *e {
                    Ev::Wake => Some((offset, u64::MAX)),
                    // A timeout of an earlier attempt at the gang does nothing.
                    Ev::HoldTimeout(j, epoch) if self.bound[j.idx()].hold.epoch == epoch => Some((offset, j.0 as u64)),
                    _ => None,
                }
            })
            .collect();
        timers.sort_unstable();
        timers.dedup();
        out.push(u64::MAX);
        out.extend(timers.into_iter().flat_map(|(t, j)| [t, j]));
        out.push(u64::MAX);
        let info = &self.info;
        out.push(info.woken as u64 | (info.capacity_changed as u64) << 1);
        out.extend(info.queued.iter().map(|j| j.0 as u64));
        out.push(u64::MAX);
        out.extend(info.released.iter().map(|j| j.0 as u64));
    }
}
