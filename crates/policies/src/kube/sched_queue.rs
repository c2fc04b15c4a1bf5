//! kube-scheduler's scheduling queue, for `kube[queue=skip]` (the Kubernetes queue
//! discipline): which waiting pods a pass tries, and in what order (kubernetes v1.34
//! `pkg/scheduler/backend/queue/scheduling_queue.go` and `backoff_queue.go`; v1.20.5
//! and v1.23 `pkg/scheduler/internal/queue/scheduling_queue.go`).
//!
//! A pod is in one of three places:
//! * **activeQ**: tried at the next pass, in `PrioritySort` order — higher priority first,
//!   then the pod's queue timestamp, which is its creation time until it fails and the
//!   time of its last failed attempt after (`AddUnschedulableIfNotPresent` refreshes it),
//!   so pods that keep failing go behind pods of their priority that failed before them;
//! * **unschedulable pods**: a pod that fit nowhere waits there, not tried, until a cluster
//!   event that could help it (here: resources freed — a pod ended, was evicted or gave
//!   back held tasks — or nodes changed: `MoveAllToActiveOrBackoffQueue`), or until it has
//!   been there longer than `podMaxInUnschedulablePodsDuration` (5 min; 60 s before v1.24)
//!   at one of the flush loop's 30 s ticks;
//! * **backoffQ**: a pod moved while its back-off runs — `podInitialBackoffSeconds` (1 s)
//!   doubling with each failed attempt up to `podMaxBackoffSeconds` (10 s), from its last
//!   failure — waits for it to end (flushed on 1 s ticks). From v1.33
//!   (`SchedulerPopFromBackoffQ`, on by default) the scheduler pops a backoffQ pod whenever
//!   activeQ is empty, ordered by the 1 s window its back-off ends in, then `PrioritySort`;
//!   a pass here takes no time, so at an event every moved pod is tried at that instant,
//!   the backoffQ ones after the activeQ ones.
//!
//! A pod re-created after an out-of-memory kill, an eviction, a preemption or a node
//! failure is a new pod: it enters activeQ with its new creation time and no attempts.
//!
//! Ticks (the 1 s back-off flush, the 30 s unschedulable flush) are whole multiples of
//! their period on the simulated clock. A flush of a pod that no event moved since its
//! last failure finds the cluster as that failure did, so it fails again: such flushes
//! are counted when the pod is next looked at (its timestamp and attempts are what those
//! retries left) instead of being run as passes.
//!
//! Not modelled: queueing hints (every unschedulable pod moves at every event that frees
//! resources or changes nodes, as before v1.28's hints; a pod waiting for inter-pod
//! affinity to a pod that is bound later is tried at the next such event), the error
//! back-off queue (no API errors), and pod groups' own back-off (Coscheduling and Kueue
//! have theirs, see their modules).

use super::{KubeScheduler, Order};
use sim_core::job::JobId;
use sim_core::policy::{Decision, PassInfo, SchedView};
use sim_core::{SimDuration, SimTime};

/// The flush loop's period for unschedulable pods (`flushUnschedulablePodsLeftover`,
/// every 30 s in every release modelled).
pub const UNSCHEDULABLE_FLUSH_PERIOD: SimDuration = SimDuration::from_secs(30);
/// The back-off flush's period and the backoffQ ordering window (1 s).
pub const BACKOFF_TICK: SimDuration = SimDuration::from_secs(1);

/// The queue's settings (KubeSchedulerConfiguration and feature gates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueConfig {
    /// `podInitialBackoffSeconds` (1 s).
    pub initial_backoff: SimDuration,
    /// `podMaxBackoffSeconds` (10 s); 0 turns the back-off off.
    pub max_backoff: SimDuration,
    /// `podMaxInUnschedulablePodsDuration` (5 min from v1.24, kubernetes#108761; 60 s before).
    pub max_unschedulable: SimDuration,
    /// `SchedulerPopFromBackoffQ` (beta and on from v1.33): backoffQ pods are tried when
    /// activeQ is empty, and back-off ends are truncated to their 1 s window.
    pub pop_from_backoff: bool,
}

/// Where a pod is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Place {
    /// In activeQ (a new pod, or one whose back-off ended).
    #[default]
    Active,
    /// In backoffQ.
    Backoff,
    /// Among the unschedulable pods.
    Unschedulable,
}

/// One pod's (job's) queue entry.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    place: Place,
    /// The queue timestamp.
    timestamp: SimTime,
    /// Breaks ties between equal timestamps: the order they were set in.
    seq: u64,
    /// Failed attempts since the pod was created.
    attempts: u32,
    /// Whether the entry was set (jobs never seen are new pods in activeQ).
    known: bool,
}

/// Which pods a pass tries, in order: activeQ's, then (when popped from backoffQ) those.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tried {
    /// activeQ's pods, in `PrioritySort` order.
    pub active: Vec<JobId>,
    /// backoffQ's pods popped after them.
    pub backoff: Vec<JobId>,
}

/// The scheduling queue's state for every job.
#[derive(Clone, Debug)]
pub struct SchedQueue {
    cfg: QueueConfig,
    entries: Vec<Entry>,
    seq: u64,
    /// The last pass asked for at a back-off's end (not asked for twice).
    wake: Option<SimTime>,
}

impl SchedQueue {
    /// An empty queue.
    pub fn new(cfg: QueueConfig) -> Self {
        SchedQueue { cfg, entries: Vec::new(), seq: 0, wake: None }
    }

    fn entry(&mut self, j: JobId) -> &mut Entry {
        if self.entries.len() <= j.idx() {
            self.entries.resize(j.idx() + 1, Entry::default());
        }
        &mut self.entries[j.idx()]
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// A new pod (arrived, or re-created after its job was requeued) enters activeQ now.
    pub fn arrived(&mut self, j: JobId, now: SimTime) {
        let seq = self.next_seq();
        *self.entry(j) = Entry { place: Place::Active, timestamp: now, seq, attempts: 0, known: true };
    }

    /// The pod was bound (all its tasks placed): it leaves the queue.
    pub fn placed(&mut self, j: JobId) {
        if let Some(e) = self.entries.get_mut(j.idx()) {
            *e = Entry { known: true, ..Entry::default() };
        }
    }

    /// The pod was tried now and fit nowhere: one more attempt, timestamp refreshed, and it
    /// waits among the unschedulable pods.
    pub fn failed(&mut self, j: JobId, now: SimTime) {
        let seq = self.next_seq();
        let e = self.entry(j);
        e.attempts = e.attempts.saturating_add(1);
        e.timestamp = now;
        e.seq = seq;
        e.place = Place::Unschedulable;
        e.known = true;
    }

    /// The back-off after `attempts` failed attempts (`calculateBackoffDuration`).
    pub fn backoff(&self, attempts: u32) -> SimDuration {
        if attempts == 0 || self.cfg.max_backoff == SimDuration::ZERO {
            return SimDuration::ZERO;
        }
        let (mut d, max) = (self.cfg.initial_backoff.0, self.cfg.max_backoff.0);
        for _ in 1..attempts {
            if d >= max {
                break;
            }
            d = d.saturating_mul(2);
        }
        SimDuration(d.min(max))
    }

    /// When the pod's back-off ends, as the back-off flush sees it: v1.33+ truncates it to
    /// its 1 s window (`alignToWindow`), earlier releases move it at the first 1 s tick at
    /// or after it.
    fn backoff_end(&self, e: &Entry) -> SimTime {
        let end = e.timestamp + self.backoff(e.attempts);
        if e.attempts == 0 || self.cfg.max_backoff == SimDuration::ZERO {
            return e.timestamp;
        }
        let tick = BACKOFF_TICK.0;
        if self.cfg.pop_from_backoff { SimTime(end.0 / tick * tick) } else { SimTime(end.0.div_ceil(tick) * tick) }
    }

    /// Brings an unschedulable pod's entry up to `now`: the unschedulable flushes at ticks
    /// before `now` retried it, and each retry failed at its tick (see the module docs).
    fn catch_up(&self, e: &mut Entry, now: SimTime) {
        if e.place != Place::Unschedulable {
            return;
        }
        let period = UNSCHEDULABLE_FLUSH_PERIOD.0;
        // The first tick strictly more than the limit after the timestamp
        // (`flushUnschedulablePodsLeftover`: `Since(timestamp) > max`), and the step
        // between retries once the timestamp is on a tick.
        let first = (e.timestamp.0 + self.cfg.max_unschedulable.0) / period * period + period;
        if first >= now.0 {
            return;
        }
        let step = (self.cfg.max_unschedulable.0 / period + 1) * period;
        let k = (now.0 - 1 - first) / step;
        e.timestamp = SimTime(first + k * step);
        e.attempts = e.attempts.saturating_add(k as u32 + 1);
    }

    /// A cluster event that may help unschedulable pods happened (resources freed, nodes
    /// changed): each moves to backoffQ while its back-off runs, else to activeQ.
    pub fn cluster_changed(&mut self, queue: &[JobId], now: SimTime) {
        for &j in queue {
            let Some(mut e) = self.entries.get(j.idx()).copied() else { continue };
            if e.place != Place::Unschedulable {
                continue;
            }
            self.catch_up(&mut e, now);
            e.place = if self.backoff_end(&e) > now { Place::Backoff } else { Place::Active };
            self.entries[j.idx()] = e;
        }
    }

    /// Which of the waiting jobs `queue` a pass at `now` tries: activeQ's (backoffQ pods
    /// whose back-off ended join them) sorted by `key` then timestamp, and, with
    /// `SchedulerPopFromBackoffQ`, the rest of backoffQ sorted by window, `key`, timestamp.
    /// `key` (of a pod's position in `queue` and its id) is the queue sort's part before
    /// the timestamp (`Reverse(priority)`), or the position for orders that keep the
    /// queue's own order (then `by_timestamp` is false).
    pub fn tried<K: Ord>(
        &mut self,
        queue: &[JobId],
        now: SimTime,
        by_timestamp: bool,
        key: impl Fn(usize, JobId) -> K,
    ) -> Tried {
        let mut active: Vec<(K, SimTime, u64, usize, JobId)> = Vec::new();
        let mut backoff: Vec<(SimTime, K, SimTime, u64, usize, JobId)> = Vec::new();
        for (pos, &j) in queue.iter().enumerate() {
            let mut e = *self.entry(j);
            if !e.known {
                // Never seen (a pass that missed its arrival): a new pod.
                e = Entry { place: Place::Active, timestamp: now, seq: 0, attempts: 0, known: true };
            }
            let (ts, seq) = if by_timestamp { (e.timestamp, e.seq) } else { (SimTime::ZERO, 0) };
            match e.place {
                Place::Unschedulable => {}
                Place::Backoff if self.backoff_end(&e) > now => {
                    if self.cfg.pop_from_backoff {
                        backoff.push((self.backoff_end(&e), key(pos, j), ts, seq, pos, j));
                    }
                }
                Place::Backoff | Place::Active => {
                    e.place = Place::Active;
                    active.push((key(pos, j), ts, seq, pos, j));
                }
            }
            self.entries[j.idx()] = e;
        }
        active.sort();
        backoff.sort();
        Tried { active: active.into_iter().map(|a| a.4).collect(), backoff: backoff.into_iter().map(|b| b.5).collect() }
    }

    /// When the next pod in backoffQ ends its back-off without being tried before (only
    /// without `SchedulerPopFromBackoffQ`): a pass is due then.
    pub fn next_backoff_end(&self, queue: &[JobId], now: SimTime) -> Option<SimTime> {
        if self.cfg.pop_from_backoff {
            return None;
        }
        queue
            .iter()
            .filter_map(|j| self.entries.get(j.idx()))
            .filter(|e| e.place == Place::Backoff)
            .map(|e| self.backoff_end(e))
            .filter(|&t| t > now)
            .min()
    }

    /// For the engine's spin check: each waiting pod's place, attempts (up to where the
    /// back-off stops growing) and back-off left.
    pub fn retry_state(&self, queue: &[JobId], now: SimTime, out: &mut Vec<u64>) {
        out.push(u64::MAX);
        // Attempts past the first whose back-off is the maximum change nothing.
        let cap = (1..64).find(|&a| self.backoff(a) >= self.cfg.max_backoff).unwrap_or(1);
        for j in queue {
            let Some(e) = self.entries.get(j.idx()).filter(|e| e.known) else { continue };
            let left = if e.place == Place::Backoff { self.backoff_end(e).saturating_since(now).0 } else { 0 };
            out.extend([j.0 as u64, e.place as u64, u64::from(e.attempts.min(cap)), left]);
        }
    }

    /// Pod `j`'s failed attempts and queue timestamp as of `now` (for tests and the
    /// decision log).
    pub fn attempts_and_timestamp(&self, j: JobId, now: SimTime) -> (u32, SimTime) {
        let mut e = self.entries.get(j.idx()).copied().unwrap_or_default();
        self.catch_up(&mut e, now);
        (e.attempts, e.timestamp)
    }
}

/// The scheduling queue's part of a `kube` pass.
impl KubeScheduler {
    /// What happened since the last pass, as the queue sees it: new pods (arrived or
    /// re-created) enter activeQ; resources freed or nodes changed move the unschedulable
    /// pods.
    pub(super) fn queue_events(&mut self, view: &SchedView<'_>, info: &PassInfo) {
        if let Some(p) = &mut self.preemption {
            p.observe(view);
        }
        let Some(q) = &mut self.sched_queue else { return };
        let now = view.now();
        for &j in &info.queued {
            q.arrived(j, now);
        }
        if info.resources_released() {
            q.cluster_changed(view.queue(), now);
        }
    }

    /// The pods of `queue` (in the order of `order=` and the gang mode) this pass tries,
    /// in the order it tries them; every pod without the scheduling queue.
    pub(super) fn tried(&mut self, view: &SchedView<'_>, queue: &[JobId]) -> Vec<JobId> {
        let plain_priority = self.order == Order::Priority && self.cosched.is_none() && self.kueue.is_none();
        let Some(q) = &mut self.sched_queue else { return queue.to_vec() };
        let t = if plain_priority {
            q.tried(queue, view.now(), true, |_, j| (-view.job(j).priority(), 0))
        } else {
            q.tried(queue, view.now(), false, |pos, _| (0, pos))
        };
        let mut v = t.active;
        v.extend(t.backoff);
        v
    }

    /// Asks for a pass when the next pod in backoffQ ends its back-off (releases without
    /// `SchedulerPopFromBackoffQ`).
    pub(super) fn wake_for_backoff(&mut self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let Some(q) = &mut self.sched_queue else { return };
        let now = view.now();
        if let Some(at) = q.next_backoff_end(view.queue(), now)
            && q.wake.is_none_or(|w| w <= now || w > at)
        {
            q.wake = Some(at);
            out.push(Decision::WakeAt { at });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pop: bool, max_unschedulable: u64) -> QueueConfig {
        QueueConfig {
            initial_backoff: SimDuration::from_secs(1),
            max_backoff: SimDuration::from_secs(10),
            max_unschedulable: SimDuration::from_secs(max_unschedulable),
            pop_from_backoff: pop,
        }
    }

    #[test]
    fn backoff_doubles_to_its_maximum() {
        let q = SchedQueue::new(cfg(true, 300));
        let secs: Vec<u64> = (0..7).map(|a| q.backoff(a).0 / 1_000_000).collect();
        assert_eq!(secs, [0, 1, 2, 4, 8, 10, 10]);
        let off = SchedQueue::new(QueueConfig { max_backoff: SimDuration::ZERO, ..cfg(true, 300) });
        assert_eq!(off.backoff(3), SimDuration::ZERO);
    }

    #[test]
    fn unschedulable_flushes_refresh_the_timestamp() {
        // Failed at 100 s; 5 min limit, 30 s ticks: retried at 420 (the first tick more
        // than 300 s later), then every 330 s: 750, 1080.
        let mut q = SchedQueue::new(cfg(true, 300));
        let j = JobId(0);
        q.failed(j, SimTime::from_secs(100));
        assert_eq!(q.attempts_and_timestamp(j, SimTime::from_secs(420)), (1, SimTime::from_secs(100)));
        assert_eq!(q.attempts_and_timestamp(j, SimTime::from_secs(421)), (2, SimTime::from_secs(420)));
        assert_eq!(q.attempts_and_timestamp(j, SimTime::from_secs(1100)), (4, SimTime::from_secs(1080)));
        // 60 s (v1.20): first tick after 160 is 180, then every 90 s.
        let mut old = SchedQueue::new(cfg(false, 60));
        old.failed(j, SimTime::from_secs(100));
        assert_eq!(old.attempts_and_timestamp(j, SimTime::from_secs(300)), (3, SimTime::from_secs(270)));
    }

    #[test]
    fn moved_pods_wait_out_their_backoff_unless_popped() {
        let (a, b) = (JobId(0), JobId(1));
        let at = |ms: u64| SimTime(ms * 1000);
        for pop in [false, true] {
            let mut q = SchedQueue::new(cfg(pop, 300));
            // a failed at 9.5 s (back-off 1 s: ends 10.5), b at 0 (long over); an event at 9.75 s.
            q.failed(b, at(0));
            q.failed(a, at(9_500));
            q.cluster_changed(&[a, b], at(9_750));
            let t = q.tried(&[a, b], at(9_750), true, |_, _| 0);
            if pop {
                // v1.33+: b from activeQ, then a popped from backoffQ at once (its back-off
                // end truncated to 10 s orders it in backoffQ).
                assert_eq!(t, Tried { active: vec![b], backoff: vec![a] });
                assert_eq!(q.next_backoff_end(&[a, b], at(9_750)), None);
            } else {
                // Before: a waits for the 1 s tick at or after 10.5 s.
                assert_eq!(t, Tried { active: vec![b], backoff: vec![] });
                assert_eq!(q.next_backoff_end(&[a, b], at(9_750)), Some(at(11_000)));
                let t = q.tried(&[a, b], at(11_000), true, |_, _| 0);
                assert_eq!(t.active, vec![b, a]);
            }
        }
    }
}
