//! One cycle of Slurm's backfill scheduler (`src/plugins/sched/backfill/backfill.c`,
//! `_attempt_backfill`): pending jobs in priority order, each started now if it fits
//! without overlapping a reservation, else given a whole-node reservation at its
//! earliest start within `bf_window`.
//!
//! What a cycle decides is which jobs start now; a reservation matters only in that it
//! keeps a later job off its nodes. So the reservation of a job that cannot start now
//! (more CPUs than its partition has free) is planned only when a later job might start
//! now, in order, before that job is tested: the same starts as planning every job.

use super::nodes::Request;
use super::{By, Slurm};
use sim_core::job::JobId;
use sim_core::policy::{Decision, SchedView, WaitReason};
use sim_core::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// The cycle's reservations of nodes for pending jobs.
struct Plan {
    /// The nodes of each reservation.
    nodes: Vec<Vec<u32>>,
    /// (begin, reservation), in order.
    by_begin: Vec<(SimTime, u32)>,
    /// (end, reservation), in order.
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
        let s = &self.conf.sched;
        let (max_test, max_user, horizon) = (s.bf_max_job_test, s.bf_max_job_user, view.now() + s.bf_window);
        let mut plan = Plan {
            nodes: Vec::new(),
            by_begin: Vec::new(),
            by_end: Vec::new(),
            active: vec![0; self.nodes.cpus.len()],
        };
        let mut per_user: BTreeMap<u32, u32> = BTreeMap::new();
        // Jobs tested that cannot start now, whose reservations are not planned yet.
        let mut unplanned: Vec<JobId> = Vec::new();
        let (mut tested, mut at) = (0u32, None);
        while tested < max_test {
            let Some(k) = self.next_pending(at) else { break };
            at = Some(k);
            if max_user > 0 {
                let n = per_user.entry(view.job(k.job).user()).or_default();
                if *n >= max_user {
                    continue;
                }
                *n += 1;
            }
            tested += 1;
            let p = self.partition(view, k.job);
            if !self.conf.partitions[p].up {
                continue;
            }
            let r = self.request(view, k.job);
            if self.limit_reason(view, k.job, &r).is_some() {
                continue;
            }
            if r.total_cpus() > self.nodes.part_free[p] {
                unplanned.push(k.job);
                continue;
            }
            for j in unplanned.drain(..) {
                self.backfill_job(view, j, &mut plan, horizon, out);
            }
            self.backfill_job(view, k.job, &mut plan, horizon, out);
        }
        if view.logging() {
            for j in unplanned {
                self.backfill_job(view, j, &mut plan, horizon, out);
            }
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
        let r = self.request(view, j);
        let limit = self.limit(view, j);
        match self.earliest(view, p, &r, limit, plan, horizon) {
            Some((t, held)) if t == now => self.start(view, j, &r, held, By::Backfill, out),
            Some((t, held)) => {
                let end = round_up(t + limit, self.conf.sched.bf_resolution);
                let id = plan.nodes.len() as u32;
                plan.nodes.push(held.iter().map(|h| h.node).collect());
                insert_sorted(&mut plan.by_begin, (t, id));
                insert_sorted(&mut plan.by_end, (end, id));
                if view.logging() {
                    out.push(Decision::Wait { job: j, reason: WaitReason::Reserved { at: t } });
                }
            }
            None => {}
        }
    }

    /// The earliest `t` in [now, horizon] at which `r` fits for `limit` on partition `p`
    /// clear of every reservation, and where: a sweep over the running jobs' expected
    /// ends and the reservations' edges, keeping the free CPUs of the partition's
    /// unblocked nodes, so that nodes are scanned only at times where the job may fit.
    fn earliest(
        &mut self,
        view: &SchedView<'_>,
        p: usize,
        r: &Request,
        limit: SimDuration,
        plan: &mut Plan,
        horizon: SimTime,
    ) -> Option<(SimTime, Vec<super::nodes::Held>)> {
        let now = view.now();
        // A job past its time limit (limits not enforced) is expected to end any moment:
        // just after now, never before (its resources are still held).
        let soonest = now + SimDuration(1);
        // A reservation blocks its node for a job of length `limit` starting at `t` when
        // `begin <= t + limit` and `t < end` (Slurm's `node_space` test: one beginning
        // exactly at the job's end overlaps it): from `t = begin − limit` until `t = end`.
        let need = r.total_cpus();
        let (nodes, running) = (&mut self.nodes, &self.running);
        let mut ends = self.ends.iter().peekable();
        let (mut applied, mut ia, mut ib) = (0usize, 0, 0);
        let mut blocked_free = 0u64;
        let mut t = now;
        let mut found = None;
        loop {
            while let Some(&&(end, j)) = ends.peek() {
                if end.max(soonest) > t {
                    break;
                }
                ends.next();
                applied += 1;
                for h in &running[&j].held {
                    nodes.give(h);
                    if plan.active[h.node as usize] > 0 && nodes.member[p][h.node as usize] {
                        blocked_free += u64::from(h.cpus);
                    }
                }
            }
            while ia < plan.by_begin.len()
                && SimTime(plan.by_begin[ia].0.as_micros().saturating_sub(limit.as_micros())) <= t
            {
                for &n in &plan.nodes[plan.by_begin[ia].1 as usize] {
                    let n = n as usize;
                    if nodes.member[p][n] {
                        plan.active[n] += 1;
                        if plan.active[n] == 1 {
                            blocked_free += u64::from(nodes.free_cpus[n]);
                        }
                    }
                }
                ia += 1;
            }
            while ib < plan.by_end.len() && plan.by_end[ib].0 <= t {
                for &n in &plan.nodes[plan.by_end[ib].1 as usize] {
                    let n = n as usize;
                    if nodes.member[p][n] {
                        plan.active[n] -= 1;
                        if plan.active[n] == 0 {
                            blocked_free -= u64::from(nodes.free_cpus[n]);
                        }
                    }
                }
                ib += 1;
            }
            // Enough CPUs on the unblocked nodes: the only place worth a node scan.
            if nodes.part_free[p].saturating_sub(blocked_free) >= need {
                let active = &plan.active;
                if let Some(held) = nodes.place(p, r, |n| Self::node_up(view, n) && active[n as usize] == 0) {
                    found = Some((t, held));
                    break;
                }
            }
            // The next time the job may fit: an expected end or a reservation's end.
            let next_release = ends.peek().map(|x| x.0.max(soonest));
            let next_end = plan.by_end.get(ib).map(|x| x.0);
            match [next_release, next_end].into_iter().flatten().min() {
                Some(n) if n <= horizon => t = n,
                _ => break,
            }
        }
        // Back to what is free now; the scratch counts back to zero.
        for &(_, j) in self.ends.iter().take(applied) {
            for h in &running[&j].held {
                nodes.take(h);
            }
        }
        for &(_, id) in &plan.by_begin[..ia] {
            for &n in &plan.nodes[id as usize] {
                plan.active[n as usize] = 0;
            }
        }
        found
    }
}

/// `t` rounded up to a multiple of `step`.
fn round_up(t: SimTime, step: SimDuration) -> SimTime {
    let s = step.as_micros().max(1);
    SimTime(t.as_micros().div_ceil(s).saturating_mul(s))
}
