//! Kueue's admission in front of a pod-at-a-time scheduler (kubernetes-sigs/kueue
//! v0.20 development tree; docs/sources.md#kueue): a job (Kueue's Workload) is admitted
//! when the ClusterQueue's quota has room for its tasks; only then are its pods placed,
//! one at a time. With `waitForPodsReady` (always on here), a job whose pods are not all
//! running `timeout` after its admission is evicted — its placed pods give back what
//! they hold, its quota is freed — and may be admitted again only after a back-off of
//! `backoffBaseSeconds` (60 s) doubling up to `backoffMaxSeconds` (3,600 s)
//! (`pkg/workload/workload.go` `UpdateRequeueState`); once it has been requeued
//! `backoffLimitCount` times, the next timeout deactivates it for good
//! (`pkg/controller/core/workload_controller.go` `triggerDeactivation`).
//!
//! The defaults follow the configuration API (`kueue_api=`): `apis/config/v1beta2/defaults.go`
//! (the current one) sets a 30-minute timeout and `blockAdmission: false`;
//! `apis/config/v1beta1/defaults.go` a 5-minute timeout and `blockAdmission` equal to
//! `enable` (true once waitForPodsReady is on). With `blockAdmission` no job is admitted
//! while an admitted one is not yet running (`pkg/scheduler/scheduler.go`
//! `waitForPodsReadyIfNeeded`): jobs are admitted one at a time, which is what keeps two
//! partial gangs from being admitted, evicted and admitted again together.
//!
//! Jobs are admitted in Kueue's order (`pkg/cache/queue/cluster_queue.go`
//! `baseCompareFunc`): higher priority first, then the queue-order timestamp — the time of
//! its last eviction by the PodsReady timeout (`requeuingStrategy.timestamp: Eviction`,
//! the default) or its creation (`Creation`) (`pkg/workload/workload.go`
//! `GetQueueOrderTimestamp`) — then arrival. The queueing strategy is `BestEffortFIFO`: a
//! job that does not fit the quota does not stop later jobs being admitted.
//!
//! The quota is GPUs and CPUs (`nominalQuota` of one ResourceFlavor, no cohort), by
//! default the cluster's own: admission then only stops more being promised than
//! exists, and a gang can still be admitted while its GPUs are spread over nodes it
//! cannot use (the deadlock Kueue's documentation warns of), which the timeout breaks.
//! An elastic job (`min_tasks`, Kueue's `job-min-parallelism`) whose whole size does not
//! fit is admitted with the largest count from its minimum up that does (partial
//! admission, `pkg/scheduler/flavorassigner/podset_reducer.go`: a binary search over the
//! counts), and no more of its pods are placed than were admitted.
//!
//! Not modelled: cohorts, borrowing and preemption, several flavors or ClusterQueues,
//! `recoveryTimeout` apart from its default (a job back in the queue after running gets
//! `timeout` again from then), the back-off's random jitter.

use sim_core::job::JobId;
use sim_core::ledger::{MILLI, NodeUse};
use sim_core::policy::{Decision, JobView, SchedView};
use sim_core::{SimDuration, SimTime};
use std::collections::{BTreeMap, BTreeSet};

/// `waitForPodsReady.timeout` of the v1beta2 configuration API: 30 minutes.
pub const PODS_READY_TIMEOUT_V1BETA2_SECS: u64 = 1800;
/// `waitForPodsReady.timeout` of the v1beta1 configuration API: 5 minutes.
pub const PODS_READY_TIMEOUT_V1BETA1_SECS: u64 = 300;
/// `backoffBaseSeconds`.
pub const BACKOFF_BASE_SECS: u64 = 60;
/// `backoffMaxSeconds`.
pub const BACKOFF_MAX_SECS: u64 = 3600;

/// `kueue_api=`: the configuration API whose defaults apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KueueApi {
    /// `config.kueue.x-k8s.io/v1beta2`, the current one.
    V1beta2,
    /// `config.kueue.x-k8s.io/v1beta1`.
    V1beta1,
}

impl KueueApi {
    /// Its default `waitForPodsReady.timeout`.
    pub fn timeout_secs(self) -> u64 {
        match self {
            KueueApi::V1beta2 => PODS_READY_TIMEOUT_V1BETA2_SECS,
            KueueApi::V1beta1 => PODS_READY_TIMEOUT_V1BETA1_SECS,
        }
    }

    /// Its default `blockAdmission` with waitForPodsReady on.
    pub fn block_admission(self) -> bool {
        self == KueueApi::V1beta1
    }

    /// The timeout a given `timeout=` means: v1beta2 replaces a zero duration with its
    /// default, v1beta1 keeps an explicit zero.
    pub fn timeout(self, given: Option<u64>) -> SimDuration {
        let secs = match (self, given) {
            (_, None) | (KueueApi::V1beta2, Some(0)) => self.timeout_secs(),
            (_, Some(s)) => s,
        };
        SimDuration::from_secs(secs)
    }
}

/// `requeuingStrategy.timestamp`: where an evicted job goes back in Kueue's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequeueTimestamp {
    /// `Eviction` (the default): behind the jobs created before its eviction.
    Eviction,
    /// `Creation`: at its creation time, ahead of later jobs.
    Creation,
}

/// A ClusterQueue's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KueueConfig {
    /// `waitForPodsReady.timeout` (0: evicted at the next microsecond if not running).
    pub timeout: SimDuration,
    /// `waitForPodsReady.blockAdmission`.
    pub block_admission: bool,
    /// `requeuingStrategy.timestamp`.
    pub requeue: RequeueTimestamp,
    /// `requeuingStrategy.backoffBaseSeconds`.
    pub backoff_base_secs: u64,
    /// `requeuingStrategy.backoffLimitCount` (`None`: requeued for ever).
    pub backoff_limit: Option<u32>,
    /// The nominal quota, in percent of the cluster's GPUs and CPUs.
    pub quota_percent: u64,
}

impl KueueConfig {
    /// The configuration API's defaults, a quota of the whole cluster.
    pub fn defaults(api: KueueApi) -> Self {
        KueueConfig {
            timeout: api.timeout(None),
            block_admission: api.block_admission(),
            requeue: RequeueTimestamp::Eviction,
            backoff_base_secs: BACKOFF_BASE_SECS,
            backoff_limit: None,
            quota_percent: 100,
        }
    }

    /// The back-off after the `n`-th eviction (n ≥ 1): base × 2^(n−1), at most 3,600 s
    /// (`wait.Backoff` with factor 2, capped; its jitter left out).
    pub fn backoff(&self, n: u32) -> SimDuration {
        let secs = self.backoff_base_secs.saturating_mul(1u64 << (n.saturating_sub(1)).min(32));
        SimDuration::from_secs(secs.min(BACKOFF_MAX_SECS))
    }
}

/// An admitted job.
#[derive(Debug, Clone, Copy)]
struct Admitted {
    /// When it was admitted (or went back to waiting after running: `recoveryTimeout`).
    at: SimTime,
    /// Tasks admitted (fewer than its tasks under partial admission).
    count: u32,
    /// Its pods all ran: Kueue's `PodsReady`.
    ready: bool,
}

/// A job evicted by the PodsReady timeout: Kueue's `requeueState`.
#[derive(Debug, Clone, Copy)]
struct Evicted {
    /// Evictions so far (`requeueState.count`).
    count: u32,
    /// When the last one was.
    at: SimTime,
    /// When its back-off ends (`requeueState.requeueAt`).
    until: SimTime,
}

/// A ClusterQueue's admission state.
pub struct KueueAdmission {
    cfg: KueueConfig,
    /// Quota in milli-GPU and milli-CPU, and how much of it admitted jobs hold.
    quota: (u64, u64),
    used: (u64, u64),
    /// Admitted jobs not ended.
    admitted: BTreeMap<JobId, Admitted>,
    /// Per evicted job, its requeue state.
    evicted: BTreeMap<JobId, Evicted>,
    /// Jobs deactivated in this pass (withdrawn: they leave the queue after it).
    deactivated: BTreeSet<JobId>,
}

impl KueueAdmission {
    /// A queue configured by `cfg` in front of a cluster of `total_gpu_milli` and
    /// `total_cpu_milli`.
    pub fn new(cfg: KueueConfig, total_gpu_milli: u64, total_cpu_milli: u64) -> Self {
        let p = cfg.quota_percent;
        KueueAdmission {
            cfg,
            quota: (total_gpu_milli * p / 100, total_cpu_milli * p / 100),
            used: (0, 0),
            admitted: BTreeMap::new(),
            evicted: BTreeMap::new(),
            deactivated: BTreeSet::new(),
        }
    }

    /// A queue for the cluster of `nodes`.
    pub fn for_cluster(nodes: &[NodeUse], cfg: KueueConfig) -> Self {
        let (gpu, cpu) =
            nodes.iter().fold((0, 0), |(g, c), n| (g + n.gpus.len() as u64 * MILLI as u64, c + n.cpu_milli));
        Self::new(cfg, gpu, cpu)
    }

    /// What `count` tasks of a job ask of the quota: milli-GPU and milli-CPU.
    fn demand(job: JobView<'_>, count: u32) -> (u64, u64) {
        let t = job.task();
        let n = count as u64;
        (n * t.gpus as u64 * t.gpu_milli() as u64, n * t.cpu_milli())
    }

    fn fits(&self, d: (u64, u64)) -> bool {
        self.used.0 + d.0 <= self.quota.0 && self.used.1 + d.1 <= self.quota.1
    }

    /// How many tasks of `job` the quota admits now: all of them, or for an elastic job
    /// whose whole size does not fit the largest count from its minimum that does,
    /// found by binary search as Kueue's PodSetReducer does (the demand grows with the
    /// count, so it is the largest that fits); `None` when not even its minimum fits.
    fn admissible_count(&self, job: JobView<'_>) -> Option<u32> {
        let (min, full) = (job.needed_tasks(), job.tasks());
        if self.fits(Self::demand(job, full)) {
            return Some(full);
        }
        if min == full || !self.fits(Self::demand(job, min)) {
            return None;
        }
        // Invariant: `lo` fits, `hi` does not.
        let (mut lo, mut hi) = (min, full);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.fits(Self::demand(job, mid)) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(lo)
    }

    fn free(&mut self, job: JobView<'_>, count: u32) {
        let d = Self::demand(job, count);
        self.used = (self.used.0.saturating_sub(d.0), self.used.1.saturating_sub(d.1));
    }

    /// Whether the job is admitted (its pods may be placed).
    pub fn admitted(&self, j: JobId) -> bool {
        self.admitted.contains_key(&j)
    }

    /// How many of an admitted job's tasks may be placed.
    pub fn admitted_count(&self, j: JobId) -> Option<u32> {
        self.admitted.get(&j).map(|a| a.count)
    }

    /// The admitted job whose pods are not all running yet, which blocks every admission
    /// under `blockAdmission`.
    fn blocking(&self) -> Option<JobId> {
        if !self.cfg.block_admission {
            return None;
        }
        self.admitted.iter().find(|(_, a)| !a.ready).map(|(j, _)| *j)
    }

    /// Kueue's queue-order timestamp of waiting job `j`.
    fn order_time(&self, j: JobId, job: JobView<'_>) -> SimTime {
        match (self.cfg.requeue, self.evicted.get(&j)) {
            (RequeueTimestamp::Eviction, Some(e)) => e.at,
            _ => job.submit(),
        }
    }

    /// The order pods are tried in under Kueue: the admitted jobs first, in `queue` order
    /// (kube-scheduler's), then the others in Kueue's admission order (higher priority,
    /// then earlier queue-order timestamp, then `queue` order), each admitted when its
    /// turn comes ([`KueueAdmission::admit`]).
    pub fn order(&self, view: &SchedView<'_>, queue: &[JobId]) -> Vec<JobId> {
        let (mut out, mut rest): (Vec<JobId>, Vec<JobId>) = queue.iter().partition(|j| self.admitted(**j));
        let at: BTreeMap<JobId, usize> = queue.iter().enumerate().map(|(i, j)| (*j, i)).collect();
        rest.sort_by_cached_key(|j| {
            let job = view.job(*j);
            (std::cmp::Reverse(job.priority()), self.order_time(*j, job), at[j])
        });
        out.extend(rest);
        out
    }

    /// A pass's step before placement: frees the quota of jobs that ended, gives a job
    /// back in the queue after running a fresh `timeout` (Kueue's `recoveryTimeout`,
    /// which defaults to it), and evicts the admitted jobs not running by their deadline
    /// (`Decision::Release` of what they hold, a `WakeAt` at their back-off's end) — or
    /// deactivates them once requeued `backoffLimitCount` times (`Decision::Withdraw`).
    pub fn step(&mut self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let now = view.now();
        self.deactivated.clear();
        let waiting: BTreeSet<JobId> = view.queue().iter().copied().collect();
        let admitted: Vec<(JobId, Admitted)> = self.admitted.iter().map(|(j, a)| (*j, *a)).collect();
        for (j, a) in admitted {
            if view.running_job(j).is_some() {
                self.admitted.get_mut(&j).expect("listed").ready = true;
                continue;
            }
            if !waiting.contains(&j) {
                // Ended (or waiting out a retry back-off): its quota is free.
                self.admitted.remove(&j);
                self.free(view.job(j), a.count);
            } else if a.ready {
                // It ran and is back in the queue: PodsReady is false again.
                let e = self.admitted.get_mut(&j).expect("listed");
                (e.at, e.ready) = (now, false);
                out.push(Decision::WakeAt { at: now + self.deadline_after() });
            } else if now >= a.at + self.deadline_after() {
                self.admitted.remove(&j);
                self.free(view.job(j), a.count);
                self.time_out(view, j, out);
            }
        }
    }

    /// The wait from admission to eviction: the timeout, at least a microsecond (a zero
    /// timeout evicts a job not running at the instant of its admission just after it).
    fn deadline_after(&self) -> SimDuration {
        self.cfg.timeout.max(SimDuration(1))
    }

    /// Admitted job `j` is not running at its deadline: evicted and requeued after its
    /// back-off, or deactivated when it has been requeued `backoffLimitCount` times.
    fn time_out(&mut self, view: &SchedView<'_>, j: JobId, out: &mut Vec<Decision>) {
        let now = view.now();
        let count = self.evicted.get(&j).map_or(0, |e| e.count);
        if let Some(limit) = self.cfg.backoff_limit.filter(|&l| count + 1 > l) {
            self.evicted.remove(&j);
            self.deactivated.insert(j);
            let why = format!(
                "deactivated by Kueue: its pods were not ready within waitForPodsReady.timeout after {count} \
                 requeue(s), the backoffLimitCount of {limit}"
            );
            out.push(Decision::Withdraw { job: j, why });
            return;
        }
        if !view.held(j).is_empty() {
            out.push(Decision::Release { job: j });
        }
        let until = now + self.cfg.backoff(count + 1);
        self.evicted.insert(j, Evicted { count: count + 1, at: now, until });
        out.push(Decision::WakeAt { at: until });
    }

    /// Admits waiting job `j` now if it may be: not in a back-off, no admission blocked
    /// (`blockAdmission`), and room in the quota for its tasks or, elastic, for some
    /// count from its minimum; asks for a pass at its deadline. Whether it is admitted.
    pub fn admit(&mut self, view: &SchedView<'_>, j: JobId, out: &mut Vec<Decision>) -> bool {
        if self.admitted(j) {
            return true;
        }
        let now = view.now();
        let backing_off = self.evicted.get(&j).is_some_and(|e| e.until > now);
        if backing_off || self.deactivated.contains(&j) || self.blocking().is_some() {
            return false;
        }
        let job = view.job(j);
        let Some(count) = self.admissible_count(job) else { return false };
        let d = Self::demand(job, count);
        self.used = (self.used.0 + d.0, self.used.1 + d.1);
        self.admitted.insert(j, Admitted { at: now, count, ready: false });
        out.push(Decision::WakeAt { at: now + self.deadline_after() });
        true
    }

    /// Admitted job `j` started in this pass: its pods are ready.
    pub fn started(&mut self, j: JobId) {
        if let Some(a) = self.admitted.get_mut(&j) {
            a.ready = true;
        }
    }

    /// Why waiting job `j` is not admitted: its back-off after an eviction, a demand over
    /// the whole quota (it can never be admitted), an admission blocked by a job not yet
    /// ready, its evictions (a back-off over, it is due to be admitted again), or a quota
    /// in use by admitted jobs.
    pub fn why_not_admitted(&self, view: &SchedView<'_>, j: JobId) -> String {
        let job = view.job(j);
        let d = Self::demand(job, job.needed_tasks());
        if let Some(e) = self.evicted.get(&j).filter(|e| e.until > view.now()) {
            format!("evicted by Kueue {} time(s); back-off until {}", e.count, sim_core::time::secs_string(e.until.0))
        } else if d.0 > self.quota.0 || d.1 > self.quota.1 {
            format!(
                "not admitted by Kueue: it asks {} milli-GPU and {} milli-CPU, more than the ClusterQueue's quota of {} and {}",
                d.0, d.1, self.quota.0, self.quota.1
            )
        } else if let Some(b) = self.blocking() {
            format!(
                "not admitted by Kueue: blockAdmission waits for the pods of {} to be ready",
                view.job(b).trace_id()
            )
        } else if let Some(e) = self.evicted.get(&j) {
            format!(
                "evicted by Kueue {} time(s), its pods not ready within waitForPodsReady.timeout; its back-off ended at {}",
                e.count,
                sim_core::time::secs_string(e.until.0)
            )
        } else {
            "not admitted by Kueue: the ClusterQueue's quota is in use by admitted jobs".into()
        }
    }

    /// What of its state can change later passes, for the engine's spin check
    /// ([`sim_core::policy::Policy::retry_state`]): each admitted job's time since
    /// admission, count and readiness; each evicted job's back-off left, next back-off
    /// and, under a `backoffLimitCount`, its count; and the order Kueue would admit the
    /// waiting jobs in (eviction times matter only through it).
    pub fn retry_state(&self, view: &SchedView<'_>, queue: &[JobId], out: &mut Vec<u64>) {
        let now = view.now();
        for (j, a) in &self.admitted {
            out.extend([j.0 as u64, (now - a.at).0, a.count as u64, a.ready as u64]);
        }
        out.push(u64::MAX);
        for (j, e) in &self.evicted {
            let limit = self.cfg.backoff_limit.map_or(0, |_| e.count as u64);
            out.extend([j.0 as u64, (e.until - now).0, self.cfg.backoff(e.count + 1).0, limit]);
        }
        out.push(u64::MAX);
        out.extend(self.order(view, queue).iter().map(|j| j.0 as u64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_a_minute_to_an_hour() {
        let cfg = KueueConfig::defaults(KueueApi::V1beta2);
        let secs: Vec<u64> = (1..=8).map(|n| cfg.backoff(n).0 / 1_000_000).collect();
        assert_eq!(secs, [60, 120, 240, 480, 960, 1920, 3600, 3600]);
    }

    #[test]
    fn each_api_has_its_defaults() {
        let (b2, b1) = (KueueConfig::defaults(KueueApi::V1beta2), KueueConfig::defaults(KueueApi::V1beta1));
        assert_eq!((b2.timeout, b2.block_admission), (SimDuration::from_secs(1800), false));
        assert_eq!((b1.timeout, b1.block_admission), (SimDuration::from_secs(300), true));
        // v1beta2 defaults a zero timeout; v1beta1 keeps it.
        assert_eq!(KueueApi::V1beta2.timeout(Some(0)), SimDuration::from_secs(1800));
        assert_eq!(KueueApi::V1beta1.timeout(Some(0)), SimDuration::ZERO);
        assert_eq!(KueueApi::V1beta1.timeout(Some(7)), SimDuration::from_secs(7));
    }
}
