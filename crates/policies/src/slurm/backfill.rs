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
    /// Per node, its reservations [begin, end].
    reserved: BTreeMap<u32, Vec<(SimTime, SimTime)>>,
}

impl Plan {
    /// Whether node `n` is reserved at some point of [s, e] (Slurm's `node_space`
    /// test: a reservation beginning exactly at `e` overlaps).
    fn blocked(&self, n: u32, s: SimTime, e: SimTime) -> bool {
        self.reserved.get(&n).is_some_and(|v| v.iter().any(|&(a, b)| a <= e && s < b))
    }

    /// The times a job's earliest start may be: now, the expected ends and the
    /// reservation ends, in order, up to `horizon`.
    fn candidates(&self, now: SimTime, horizon: SimTime) -> Vec<SimTime> {
        let mut t: Vec<SimTime> = std::iter::once(now)
            .chain(self.releases.iter().map(|r| r.0))
            .chain(self.reserved.values().flatten().map(|r| r.1))
            .filter(|&t| t >= now && t <= horizon)
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    }
}

impl Slurm {
    /// One backfill cycle.
    pub(super) fn backfill(&mut self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let now = view.now();
        let s = self.conf.sched.clone();
        let mut plan = Plan { releases: Vec::new(), reserved: BTreeMap::new() };
        // A job past its time limit (limits not enforced) is expected to end any moment:
        // just after now, never before (its resources are still held).
        let soonest = now + SimDuration(1);
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
            let user = view.job(k.job).user();
            if s.bf_max_job_user > 0 {
                let n = per_user.entry(user).or_default();
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
        let order = self.nodes.order[p].clone();
        let need = r.total_cpus();
        let member = self.nodes.member[p].clone();
        let mut free: u64 = order.iter().map(|&n| u64::from(self.nodes.free_cpus[n as usize])).sum();
        let mut applied = 0;
        let mut found = None;
        for t in plan.candidates(now, horizon) {
            // What has come back by `t`, on top of what is free now.
            while applied < plan.releases.len() && plan.releases[applied].0 <= t {
                let h = &plan.releases[applied].1;
                self.nodes.give(h);
                if member[h.node as usize] {
                    free += u64::from(h.cpus);
                }
                applied += 1;
            }
            // Not enough CPUs in the partition at `t`, wherever they are: no placement.
            if free < need {
                continue;
            }
            let end = t + limit;
            if let Some(held) = self.nodes.place(&order, &r, |n| Self::node_up(view, n) && !plan.blocked(n, t, end)) {
                found = Some((t, held));
                break;
            }
        }
        for rel in &plan.releases[..applied] {
            self.nodes.take(&rel.1);
        }
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
                    plan.reserved.entry(h.node).or_default().push((t, end));
                }
                self.earliest_plan = self.earliest_plan.min(t);
                if view.logging() {
                    out.push(Decision::Wait { job: j, reason: WaitReason::Reserved { at: t } });
                }
            }
            None => {}
        }
    }
}

/// `t` rounded up to a multiple of `step`.
fn round_up(t: SimTime, step: SimDuration) -> SimTime {
    let s = step.as_micros().max(1);
    SimTime(t.as_micros().div_ceil(s).saturating_mul(s))
}
