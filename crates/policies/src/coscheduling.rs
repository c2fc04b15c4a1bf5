//! scheduler-plugins' Coscheduling plugin (kubernetes-sigs/scheduler-plugins v0.35
//! development tree, `pkg/coscheduling/coscheduling.go`, `pkg/coscheduling/core/core.go`,
//! `apis/config/v1/defaults.go`), for `kube[gang=permit-wait]`: a job of several tasks is
//! a PodGroup whose `minMember` is the tasks it needs to start.
//!
//! * **Permit**: a placed pod waits (holding what it was given) until `minMember` pods of
//!   its group are placed, then all start; a group not complete `PermitWaitingTimeSeconds`
//!   (60 s; a PodGroup's `scheduleTimeoutSeconds` of 0 means that default) after its first
//!   waiting pod is unreserved whole (the engine's permit timeout, `Decision::Hold`).
//! * **PostFilter** (optimistic rejection): when a pod of the group fits no node and the
//!   group's placed pods are fewer than `minMember`, the group's waiting pods are rejected
//!   at once — they give back what they hold and wait to be tried again — unless the gap
//!   `(minMember − placed) / minMember` is within `PodGroupRejectPercentage` (10 %): then
//!   they keep waiting and only the permit timeout releases them. With
//!   `PodGroupBackoffSeconds` > 0 (default 0) a rejected group is not tried again (its
//!   PreFilter fails) until that back-off ends.
//! * **QueueSort**: higher priority first, then the group's creation time — or the time
//!   of its last failure (a PostFilter rejection or a permit timeout), so a group that
//!   keeps failing does not block those behind it — then arrival.
//!
//! Not modelled: `minResources` (PreFilter's quick resource check), the wait for enough
//! sibling pods to exist (every job's pods exist from its submission). A gang is one
//! entry of kube-scheduler's scheduling queue (`kube/sched_queue.rs`): a rejected group
//! waits among the unschedulable pods until an event moves it.

use sim_core::job::JobId;
use sim_core::policy::{Decision, SchedView};
use sim_core::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// `PermitWaitingTimeSeconds`' default.
pub const PERMIT_TIMEOUT_SECS: u64 = 60;
/// `PodGroupRejectPercentage`'s default.
pub const REJECT_PERCENT: u64 = 10;

/// Coscheduling's state: failures and back-offs per group.
pub struct Coscheduling {
    /// `PermitWaitingTimeSeconds`.
    pub timeout: SimDuration,
    /// `PodGroupRejectPercentage`, 0–100.
    reject_percent: u64,
    /// `PodGroupBackoffSeconds`.
    backoff: SimDuration,
    /// When each group last failed (its QueueSort timestamp while set).
    failed_at: BTreeMap<JobId, SimTime>,
    /// When each backed-off group may be tried again.
    backoff_until: BTreeMap<JobId, SimTime>,
}

impl Coscheduling {
    /// The plugin with a permit timeout (`None` or 0: the default 60 s), a reject
    /// percentage (default 10) and a group back-off (default 0) in seconds.
    pub fn new(timeout: Option<u64>, reject_percent: Option<u64>, backoff: Option<u64>) -> Self {
        let timeout = timeout.filter(|&t| t > 0).unwrap_or(PERMIT_TIMEOUT_SECS);
        Coscheduling {
            timeout: SimDuration::from_secs(timeout),
            reject_percent: reject_percent.unwrap_or(REJECT_PERCENT).min(100),
            backoff: SimDuration::from_secs(backoff.unwrap_or(0)),
            failed_at: BTreeMap::new(),
            backoff_until: BTreeMap::new(),
        }
    }

    /// Whether PostFilter rejects a group of `min` (`minMember`) with `placed` pods placed
    /// (waiting or running) when one more fits nowhere: not when the group is complete,
    /// nor when the gap is at most `PodGroupRejectPercentage` of `min`.
    pub fn rejects(&self, placed: usize, min: usize) -> bool {
        placed < min && ((min - placed) as u64) * 100 > self.reject_percent * min as u64
    }

    /// Whether group `j` is in its back-off (PreFilter fails: "podGroup failed recently").
    pub fn backing_off(&self, j: JobId, now: SimTime) -> Option<SimTime> {
        self.backoff_until.get(&j).copied().filter(|&u| u > now)
    }

    /// PostFilter rejected group `j` now: its waiting pods are given back (`held`: it has
    /// some from earlier passes), its failure time is noted and, with a back-off, it is
    /// not tried again before the back-off's end (a pass is asked for then).
    pub fn reject(&mut self, j: JobId, held: bool, now: SimTime, out: &mut Vec<Decision>) {
        if held {
            out.push(Decision::Release { job: j });
        }
        self.failed_at.insert(j, now);
        if self.backoff > SimDuration::ZERO {
            self.backoff_until.insert(j, now + self.backoff);
            out.push(Decision::WakeAt { at: now + self.backoff });
        }
    }

    /// At a pass: groups whose held pods were given back since the previous one (their
    /// permit timeout, or a node lost) failed then (Unreserve marks the failure); groups
    /// that started or ended are forgotten.
    pub fn observe(&mut self, view: &SchedView<'_>, released: &[JobId]) {
        let now = view.now();
        if released.is_empty() && self.failed_at.is_empty() && self.backoff_until.is_empty() {
            return;
        }
        let waiting: std::collections::BTreeSet<JobId> = view.queue().iter().copied().collect();
        for &j in released {
            if waiting.contains(&j) {
                self.failed_at.insert(j, now);
            }
        }
        self.failed_at.retain(|j, _| waiting.contains(j));
        self.backoff_until.retain(|_, u| *u > now);
    }

    /// Group `j` started: Permit's success clears its failure.
    pub fn started(&mut self, j: JobId) {
        self.failed_at.remove(&j);
    }

    /// Coscheduling's QueueSort on a queue already in priority order (ties in arrival
    /// order): within one priority, by the group's creation or last failure time.
    pub fn sort(&self, view: &SchedView<'_>, queue: &mut [JobId]) {
        if self.failed_at.is_empty() {
            return;
        }
        queue.sort_by_key(|j| {
            let job = view.job(*j);
            (std::cmp::Reverse(job.priority()), self.failed_at.get(j).copied().unwrap_or(job.submit()))
        });
    }

    /// What of its state can change later passes, for the engine's spin check: each
    /// group's back-off left, and the order its failure times put the queue in.
    pub fn retry_state(&self, view: &SchedView<'_>, queue: &[JobId], out: &mut Vec<u64>) {
        let now = view.now();
        for (j, u) in &self.backoff_until {
            out.extend([j.0 as u64, (*u - now).0]);
        }
        out.push(u64::MAX);
        if !self.failed_at.is_empty() {
            let mut q = queue.to_vec();
            self.sort(view, &mut q);
            out.extend(q.iter().map(|j| j.0 as u64));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reject_percentage_spares_small_gaps() {
        let c = Coscheduling::new(None, None, None);
        // 10 %: 9 of 10 placed (gap 10 %) waits; 8 of 10 (20 %) is rejected.
        assert!(!c.rejects(9, 10) && c.rejects(8, 10));
        // 4 of 6 (33 %) is rejected; a complete group never is.
        assert!(c.rejects(4, 6) && !c.rejects(6, 6) && !c.rejects(7, 6));
        // 0 %: any gap rejects; 100 %: none does.
        assert!(Coscheduling::new(None, Some(0), None).rejects(9, 10));
        assert!(!Coscheduling::new(None, Some(100), None).rejects(0, 10));
        // A zero timeout is the default 60 s.
        assert_eq!(Coscheduling::new(Some(0), None, None).timeout, SimDuration::from_secs(60));
    }
}
