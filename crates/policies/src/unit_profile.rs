//! Per-unit availability, for `reservation=nodes`: placements and reservations hold
//! specific units, the lowest-indexed ones free for the whole interval, as Slurm's
//! select plugins and Batsim's batsched do.

use crate::profile::StepProfile;
use sim_core::job::JobId;
use sim_core::policy::{RunningJob, SchedView};
use sim_core::units::UnitSet;
use sim_core::{SimDuration, SimTime};
use std::collections::BTreeSet;

/// When each unit becomes free of running work, plus the reservations holding it.
#[derive(Debug, Clone)]
pub struct UnitProfile {
    origin: SimTime,
    free_from: Vec<SimTime>,
    reserved: Vec<Vec<(SimTime, SimTime, JobId)>>,
    /// Times at which some unit becomes free (candidate starts), all > origin.
    releases: BTreeSet<SimTime>,
    /// The same availability counted, to skip hopeless candidate times fast.
    counts: StepProfile,
    /// Set when a reservation was put on a unit that is not free for its interval.
    conflict: bool,
}

impl UnitProfile {
    /// The running jobs' profile. `end_of` gives a running job's expected end, already
    /// clamped by the caller ([`crate::profile::overrun_clamp`]). Units that are neither free nor held (their
    /// node is down or draining) never become free.
    pub fn of_running(view: &SchedView<'_>, end_of: impl Fn(&RunningJob) -> SimTime) -> Self {
        let now = view.now();
        let n = view.cluster().total_units() as usize;
        let mut free_from = vec![SimTime::MAX; n];
        for (a, len) in view.free_pool().ranges() {
            for u in a..a + len {
                free_from[u as usize] = now;
            }
        }
        let mut releases = BTreeSet::new();
        for r in view.running() {
            let e = end_of(r).max(now);
            if e > now {
                releases.insert(e);
            }
            for u in r.units.iter() {
                free_from[u as usize] = e;
            }
        }
        let counts = StepProfile::of_running(view, end_of);
        UnitProfile { origin: now, free_from, reserved: vec![Vec::new(); n], releases, counts, conflict: false }
    }

    /// The counted view of the same availability.
    pub fn counts(&self) -> &StepProfile {
        &self.counts
    }

    /// The lowest-indexed `units` units free during all of `[t, t + len)`, if there are
    /// that many.
    pub fn place(&self, t: SimTime, units: u64, len: SimDuration) -> Option<UnitSet> {
        let end = t.saturating_add(len);
        let mut out = UnitSet::new();
        let mut got = 0u64;
        for (u, &f) in self.free_from.iter().enumerate() {
            if f > t {
                continue;
            }
            if self.reserved[u].iter().any(|&(a, b, _)| a < end && t < b) {
                continue;
            }
            out.push_unit(u as u32);
            got += 1;
            if got == units {
                return Some(out);
            }
        }
        None
    }

    /// The earliest placement: the first candidate start (the origin, or a time some unit
    /// becomes free) with a placement over `[t, t + len)`.
    pub fn earliest(&self, units: u64, len: SimDuration) -> Option<(SimTime, UnitSet)> {
        let candidates = std::iter::once(self.origin).chain(self.releases.iter().copied());
        for t in candidates {
            if !self.counts.fits(t, units, len) {
                continue;
            }
            if let Some(set) = self.place(t, units, len) {
                return Some((t, set));
            }
        }
        None
    }

    /// Holds `set` for `job` over `[from, to)`.
    pub fn reserve(&mut self, job: JobId, from: SimTime, to: SimTime, set: &UnitSet) {
        for u in set.iter() {
            let r = &mut self.reserved[u as usize];
            if self.free_from[u as usize] > from || r.iter().any(|&(a, b, _)| a < to && from < b) {
                self.conflict = true;
            }
            r.push((from, to, job));
        }
        if to != SimTime::MAX && to > self.origin {
            self.releases.insert(to);
        }
        self.counts.reserve(from, to, set.len());
    }

    /// Whether every reservation made so far is on units free for its whole interval.
    pub fn feasible(&self) -> bool {
        !self.conflict && self.counts.feasible()
    }

    /// Drops `job`'s hold on `set` over `[from, to)`.
    pub fn unreserve(&mut self, job: JobId, from: SimTime, to: SimTime, set: &UnitSet) {
        for u in set.iter() {
            self.reserved[u as usize].retain(|r| r.2 != job);
        }
        // A release time no longer used stays as a candidate: trying it is harmless.
        self.counts.unreserve(from, to, set.len());
    }
}
