//! One cycle of Slurm's backfill scheduler (`src/plugins/sched/backfill/backfill.c`,
//! `_attempt_backfill`): pending jobs in priority order, each started now if it fits
//! without overlapping a reservation, else given a whole-node reservation at its
//! earliest start within `bf_window`.

use super::nodes::Held;
use super::{By, Slurm};
use sim_core::job::JobId;
use sim_core::policy::{Decision, SchedView, WaitReason};
use sim_core::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// The cycle's plan: resources that come back at the expected ends of running jobs, and
/// the nodes reserved for pending jobs.
struct Plan {
    /// (expected end, what comes back), in time order.
    releases: Vec<(SimTime, Held)>,
    /// Every reserved node by the reservation's begin: (begin, node), in order.
    by_begin: Vec<(SimTime, u32)>,
    /// The same by the reservation's end: (end, node), in order.
    by_end: Vec<(SimTime, u32)>,
    /// Per node, how many reservations overlap the window being tested (scratch).
    active: Vec<u32>,
}

/// Inserts `x` into the sorted `v`.
fn insert_sorted(v: &mut Vec<(SimTime, u32)>, x: (SimTime, u32)) {
    let at = v.partition_point(|y| *y <= x);
    v.insert(at, x);
}

impl Slurm {
    /// One backfill cycle.
    pub(super) fn backfill(&mut self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let now = view.now();
        let s = self.conf.sched.clone();
        // A job past its time limit (limits not enforced) is expected to end any moment:
        // just after now, never before (its resources are still held).
        let soonest = now + SimDuration(1);
        let mut plan = Plan {
            releases: Vec::new(),
            by_begin: Vec::new(),
            by_end: Vec::new(),
            active: vec![0; self.nodes.cpus.len()],
        };
        for r in self.running.values() {
            plan.releases.extend(r.held.iter().map(|h| (r.expected_end.max(soonest), h.clone())));
        }
        plan.releases.sort_by_key(|r| (r.0, r.1.node));
        self.earliest_plan = SimTime::MAX;
        let horizon = now + s.bf_window;
        let mut per_user: BTreeMap<u32, u32> = BTreeMap::new();
        let mut tested = 0u32;
        for k in self.pending(view) {
            if tested >= s.bf_max_job_test {
                break;
            }
            if s.bf_max_job_user > 0 {
                let n = per_user.entry(view.job(k.job).user()).or_default();
                if *n >= s.bf_max_job_user {
                    continue;
                }
                *n += 1;
            }
            tested += 1;
            self.backfill_job(view, k.job, &mut plan, horizon, out);
        }
    }

    /// Finds `j`'s earliest start; starts it now or reserves its nodes.
    fn backfill_job(
        &mut self,
        view: &SchedView<'_>,
        j: JobId,
        plan: &mut Plan,
        horizon: SimTime,
        out: &mut Vec<Decision>,
    ) {
        let now = view.now();
        let p = self.partition(view, j);
        if !self.conf.partitions[p].up {
            return;
        }
        let r = self.request(view, j);
        let limit = self.limit(view, j);
        let found = self.earliest(view, p, &r, limit, plan, horizon);
        match found {
            Some((t, held)) if t == now => {
                let end = now + limit;
                for h in &held {
                    let at = plan.releases.partition_point(|x| (x.0, x.1.node) <= (end, h.node));
                    plan.releases.insert(at, (end, h.clone()));
                }
                self.start(view, j, &r, held, By::Backfill, out);
            }
            Some((t, held)) => {
                let end = round_up(t + limit, self.conf.sched.bf_resolution);
                for h in &held {
                    insert_sorted(&mut plan.by_begin, (t, h.node));
                    insert_sorted(&mut plan.by_end, (end, h.node));
                }
                // A start that waits only for jobs past their limit comes with their end,
                // an event of its own: no cycle needs to be woken for it.
                if t > now + SimDuration(1) {
                    self.earliest_plan = self.earliest_plan.min(t);
                }
                if view.logging() {
                    out.push(Decision::Wait { job: j, reason: WaitReason::Reserved { at: t } });
                }
            }
            None => {}
        }
    }

    /// The earliest `t` in [now, horizon] at which `r` fits for `limit` on partition `p`
    /// clear of every reservation, and where: a sweep over the expected ends and the
    /// reservations' edges, keeping the free CPUs of the partition's unblocked nodes, so
    /// that nodes are scanned only at times where the job may fit.
    fn earliest(
        &mut self,
        view: &SchedView<'_>,
        p: usize,
        r: &super::nodes::Request,
        limit: SimDuration,
        plan: &mut Plan,
        horizon: SimTime,
    ) -> Option<(SimTime, Vec<Held>)> {
        let now = view.now();
        // A reservation blocks its node for a job of length `limit` starting at `t` when
        // `begin <= t + limit` and `t < end` (Slurm's `node_space` test: one beginning
        // exactly at the job's end overlaps it): from `t = begin − limit` until `t = end`.
        let need = r.total_cpus();
        let (mut applied, mut ia, mut ib) = (0, 0, 0);
        let mut blocked_free = 0u64;
        let mut t = now;
        let mut found = None;
        loop {
            while applied < plan.releases.len() && plan.releases[applied].0 <= t {
                let h = &plan.releases[applied].1;
                self.nodes.give(h);
                if plan.active[h.node as usize] > 0 && self.nodes.member[p][h.node as usize] {
                    blocked_free += u64::from(h.cpus);
                }
                applied += 1;
            }
            while ia < plan.by_begin.len()
                && SimTime(plan.by_begin[ia].0.as_micros().saturating_sub(limit.as_micros())) <= t
            {
                let n = plan.by_begin[ia].1 as usize;
                if self.nodes.member[p][n] {
                    plan.active[n] += 1;
                    if plan.active[n] == 1 {
                        blocked_free += u64::from(self.nodes.free_cpus[n]);
                    }
                }
                ia += 1;
            }
            while ib < plan.by_end.len() && plan.by_end[ib].0 <= t {
                let n = plan.by_end[ib].1 as usize;
                if self.nodes.member[p][n] {
                    plan.active[n] -= 1;
                    if plan.active[n] == 0 {
                        blocked_free -= u64::from(self.nodes.free_cpus[n]);
                    }
                }
                ib += 1;
            }
            // Enough CPUs on the unblocked nodes: the only place worth a node scan.
            if self.nodes.part_free[p].saturating_sub(blocked_free) >= need {
                let active = &plan.active;
                if let Some(held) = self.nodes.place(p, r, |n| Self::node_up(view, n) && active[n as usize] == 0) {
                    found = Some((t, held));
                    break;
                }
            }
            // The next time the job may fit: an expected end or a reservation's end.
            let next_release = plan.releases.get(applied).map(|x| x.0);
            let next_end = plan.by_end.get(ib).map(|x| x.0);
            match [next_release, next_end].into_iter().flatten().min() {
                Some(n) if n <= horizon => t = n,
                _ => break,
            }
        }
        // Back to what is free now; the scratch counts back to zero.
        for rel in &plan.releases[..applied] {
            self.nodes.take(&rel.1);
        }
        for &(_, n) in &plan.by_begin[..ia] {
            plan.active[n as usize] = 0;
        }
        found
    }
}

/// `t` rounded up to a multiple of `step`.
fn round_up(t: SimTime, step: SimDuration) -> SimTime {
    let s = step.as_micros().max(1);
    SimTime(t.as_micros().div_ceil(s).saturating_mul(s))
}
