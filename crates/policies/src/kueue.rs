//! Kueue's admission in front of a pod-at-a-time scheduler (Kueue v1beta1; docs/sources.md#kueue): a
//! job (Kueue's Workload) is admitted whole when the ClusterQueue's quota has room for
//! all of its tasks; only then are its pods placed, one at a time. If they are not all
//! running `waitForPodsReady.timeout` after the admission, the job is evicted — its
//! placed pods give back what they hold, its quota is freed — and it may be admitted
//! again only after a back-off of 60 s doubling up to 3,600 s (`requeuingStrategy`
//! `backoffBaseSeconds` and `backoffMaxSeconds`).
//!
//! The quota is GPUs and CPUs (`nominalQuota` of one ResourceFlavor, no cohort), by
//! default the cluster's own: admission then only stops more being promised than
//! exists, and a gang can still be admitted while its GPUs are spread over nodes it
//! cannot use (the deadlock Kueue's documentation warns of), which the timeout breaks.
//! An elastic job (`min_tasks`) is admitted when its minimum fits the quota (partial
//! admission) and holds that much of it. The queueing strategy is `BestEffortFIFO`: a job that does not fit the quota does
//! not stop later jobs being admitted.

use sim_core::job::JobId;
use sim_core::ledger::{MILLI, NodeUse};
use sim_core::policy::{Decision, JobView, SchedView};
use sim_core::{SimDuration, SimTime};
use std::collections::{BTreeMap, BTreeSet};

/// `waitForPodsReady.timeout` chosen here: 5 minutes, the v1beta1 configuration API's
/// default (v1beta2 makes it 30 minutes).
pub const PODS_READY_TIMEOUT_SECS: u64 = 300;
/// `backoffBaseSeconds`.
pub const BACKOFF_BASE_SECS: u64 = 60;
/// `backoffMaxSeconds`.
pub const BACKOFF_MAX_SECS: u64 = 3600;

/// The back-off after the `n`-th eviction (n ≥ 1): 60 s, 120 s, 240 s, … up to 3,600 s.
pub fn backoff(n: u32) -> SimDuration {
    let secs = BACKOFF_BASE_SECS.saturating_mul(1u64 << (n.saturating_sub(1)).min(16));
    SimDuration::from_secs(secs.min(BACKOFF_MAX_SECS))
}

/// A ClusterQueue's admission state.
pub struct KueueAdmission {
    timeout: SimDuration,
    /// Quota in milli-GPU and milli-CPU, and how much of it admitted jobs hold.
    quota: (u64, u64),
    used: (u64, u64),
    /// Admitted jobs not ended, with their admission time.
    admitted: BTreeMap<JobId, SimTime>,
    /// Evictions so far and when the back-off ends, per evicted job.
    evicted: BTreeMap<JobId, (u32, SimTime)>,
}

impl KueueAdmission {
    /// A queue whose quota is `percent` of the cluster's GPUs and CPUs, evicting jobs
    /// whose pods are not all running `timeout` after admission.
    pub fn new(timeout: SimDuration, percent: u64, total_gpu_milli: u64, total_cpu_milli: u64) -> Self {
        KueueAdmission {
            timeout,
            quota: (total_gpu_milli * percent / 100, total_cpu_milli * percent / 100),
            used: (0, 0),
            admitted: BTreeMap::new(),
            evicted: BTreeMap::new(),
        }
    }

    /// A queue for the cluster of `nodes`: its quota `percent` (default 100) of their GPUs
    /// and CPUs, its `waitForPodsReady.timeout` `timeout_secs` (default
    /// [`PODS_READY_TIMEOUT_SECS`]).
    pub fn for_cluster(nodes: &[NodeUse], timeout_secs: Option<u64>, percent: Option<u64>) -> Self {
        let (gpu, cpu) =
            nodes.iter().fold((0, 0), |(g, c), n| (g + n.gpus.len() as u64 * MILLI as u64, c + n.cpu_milli));
        let timeout = SimDuration::from_secs(timeout_secs.unwrap_or(PODS_READY_TIMEOUT_SECS));
        Self::new(timeout, percent.unwrap_or(100), gpu, cpu)
    }

    /// What a job asks of the quota: milli-GPU and milli-CPU of all its tasks, or of its
    /// minimum for an elastic job (Kueue's partial admission, `job-min-parallelism`).
    fn demand(job: JobView<'_>) -> (u64, u64) {
        let t = job.task();
        let tasks = job.needed_tasks() as u64;
        (tasks * t.gpus as u64 * t.gpu_milli() as u64, tasks * t.cpu_milli())
    }

    fn free(&mut self, job: JobView<'_>) {
        let d = Self::demand(job);
        self.used = (self.used.0.saturating_sub(d.0), self.used.1.saturating_sub(d.1));
    }

    /// Whether the job is admitted (its pods may be placed).
    pub fn admitted(&self, j: JobId) -> bool {
        self.admitted.contains_key(&j)
    }

    /// Why waiting job `j` is not admitted: its back-off after an eviction, a demand over
    /// the whole quota (it can never be admitted), or a quota in use by admitted jobs.
    pub fn why_not_admitted(&self, j: JobId, job: JobView<'_>, now: SimTime) -> String {
        let d = Self::demand(job);
        if let Some(&(n, until)) = self.evicted.get(&j).filter(|e| e.1 > now) {
            format!("evicted by Kueue {n} time(s); back-off until {}", sim_core::time::secs_string(until.0))
        } else if d.0 > self.quota.0 || d.1 > self.quota.1 {
            format!(
                "not admitted by Kueue: it asks {} milli-GPU and {} milli-CPU, more than the ClusterQueue's quota of {} and {}",
                d.0, d.1, self.quota.0, self.quota.1
            )
        } else {
            "not admitted by Kueue: the ClusterQueue's quota is in use by admitted jobs".into()
        }
    }

    /// A pass's admission step, before placement: frees the quota of ended jobs, evicts
    /// the admitted jobs not running by their deadline (`Decision::Release`), then admits
    /// waiting jobs in `queue` order while the quota has room, asking for passes at
    /// deadlines and back-off ends (`Decision::WakeAt`).
    pub fn step(&mut self, view: &SchedView<'_>, queue: &[JobId], out: &mut Vec<Decision>) {
        let now = view.now();
        let waiting: BTreeSet<JobId> = view.queue().iter().copied().collect();
        let admitted: Vec<(JobId, SimTime)> = self.admitted.iter().map(|(j, t)| (*j, *t)).collect();
        for (j, at) in admitted {
            if view.running_job(j).is_some() {
                continue;
            }
            if !waiting.contains(&j) {
                // Ended (or waiting out a retry back-off): its quota is free.
                self.admitted.remove(&j);
                self.free(view.job(j));
            } else if now >= at + self.timeout {
                self.admitted.remove(&j);
                self.free(view.job(j));
                out.push(Decision::Release { job: j });
                let e = self.evicted.entry(j).or_insert((0, now));
                e.0 += 1;
                e.1 = now + backoff(e.0);
                out.push(Decision::WakeAt { at: e.1 });
            }
        }
        for &j in queue {
            if self.admitted.contains_key(&j) || self.evicted.get(&j).is_some_and(|e| e.1 > now) {
                continue;
            }
            let d = Self::demand(view.job(j));
            if self.used.0 + d.0 <= self.quota.0 && self.used.1 + d.1 <= self.quota.1 {
                self.used = (self.used.0 + d.0, self.used.1 + d.1);
                self.admitted.insert(j, now);
                out.push(Decision::WakeAt { at: now + self.timeout });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_a_minute_to_an_hour() {
        let secs: Vec<u64> = (1..=8).map(|n| backoff(n).0 / 1_000_000).collect();
        assert_eq!(secs, [60, 120, 240, 480, 960, 1920, 3600, 3600]);
    }
}
