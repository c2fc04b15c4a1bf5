//! The waiting jobs as conservative backfilling last left them, in queue order, each with
//! its length, size and reservation: revisiting them at every release reads one short
//! array instead of the engine's job table.

use super::raise_log::Seen;
use crate::options::Estimate;
use sim_core::job::JobId;
use sim_core::policy::{PassInfo, SchedView};
use sim_core::units::UnitSet;
use sim_core::{SimDuration, SimTime};
use std::collections::{BTreeMap, BTreeSet};

/// A waiting job and its reservation.
#[derive(Debug, Clone)]
pub struct Slot {
    /// The job.
    pub job: JobId,
    /// Its reservation's length (its estimate).
    pub len: SimDuration,
    /// Units it needs.
    pub units: u64,
    /// Where its reservation starts, if it holds one.
    pub start: Option<SimTime>,
    /// In node mode, the units its reservation holds.
    pub set: UnitSet,
    /// What it knew when it last looked for an earlier start.
    pub seen: Seen,
}

/// The waiting jobs in queue order.
#[derive(Debug, Clone, Default)]
pub struct Waiting {
    slots: Vec<Slot>,
}

impl Waiting {
    /// The waiting jobs.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// The waiting jobs, to change their reservations.
    pub fn slots_mut(&mut self) -> &mut [Slot] {
        &mut self.slots
    }

    /// Brings the list in line with the engine's queue: jobs that entered it are added
    /// without a reservation (a requeued job loses any it held). Returns whether every
    /// reservation it held is still held by a waiting job (false: a job left the queue
    /// or re-entered it while holding one).
    pub fn sync(&mut self, view: &SchedView<'_>, info: &PassInfo, est: Estimate) -> bool {
        let (queue, m) = (view.queue(), self.slots.len());
        let slot_of = |j: JobId| Slot {
            job: j,
            len: est.of(view, j),
            units: view.job(j).units(),
            start: None,
            set: UnitSet::new(),
            seen: Seen::default(),
        };
        // Usually the queue is the previous one (less the jobs started) and arrivals.
        let appended = queue.len() == m + info.queued.len()
            && queue[m..] == info.queued[..]
            && self.slots.iter().zip(queue).all(|(s, &j)| s.job == j);
        if appended {
            self.slots.extend(info.queued.iter().map(|&j| slot_of(j)));
            return true;
        }
        let entered: BTreeSet<JobId> = info.queued.iter().copied().collect();
        let mut held: BTreeMap<JobId, Slot> = self.slots.drain(..).map(|s| (s.job, s)).collect();
        let mut intact = true;
        for &j in queue {
            let kept = held.remove(&j);
            intact &= !(entered.contains(&j) && kept.as_ref().is_some_and(|s| s.start.is_some()));
            self.slots.push(match kept {
                Some(s) if !entered.contains(&j) => s,
                _ => slot_of(j),
            });
        }
        intact && held.values().all(|s| s.start.is_none())
    }

    /// Whether some reservation starts at `now`, and whether some started before it.
    pub fn starts_at(&self, now: SimTime) -> (bool, bool) {
        let (mut due, mut past) = (false, false);
        for s in &self.slots {
            if let Some(t) = s.start {
                due |= t == now;
                past |= t < now;
            }
        }
        (due, past)
    }

    /// Keeps the jobs `keep` says stay waiting, visited in queue order.
    pub fn retain(&mut self, keep: impl FnMut(&Slot) -> bool) {
        self.slots.retain(keep);
    }
}
