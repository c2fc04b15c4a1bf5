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
//! The queue keeps each waiting pod's state in a compact slot, in queue-timestamp order,
//! so a pass reads the pods it tries in order without touching the jobs, and skips those
//! whose pod type already fit nowhere in the pass.
//!
//! Not modelled: queueing hints (every unschedulable pod moves at every event that frees
//! resources or changes nodes, as before v1.28's hints; a pod waiting for inter-pod
//! affinity to a pod that is bound later is tried at the next such event), the error
//! back-off queue (no API errors), and pod groups' own back-off (Coscheduling and Kueue
//! have theirs, see their modules).

use super::KubeScheduler;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// In activeQ (a new pod, or one whose back-off ended).
    Active,
    /// In backoffQ.
    Backoff,
    /// Among the unschedulable pods.
    Unschedulable,
}

/// What a pass did with a pod it tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not tried, or tried with no result (not admitted by Kueue, in its group's back-off).
    Untried,
    /// Fit nowhere: one more failed attempt.
    Failed,
    /// Bound: it leaves the queue.
    Placed,
}

/// What a pass needs to know of a pod without reading its job.
#[derive(Clone, Copy, Debug)]
pub struct PodFacts {
    /// Its priority.
    pub priority: i64,
    /// Its pod type (the score cache's).
    pub ty: u32,
    /// Whether a failed placement of its type in the pass means it fails too (no
    /// tolerations: other constraints only take nodes away).
    pub only_restricts: bool,
    /// Whether its tasks are held a pod at a time (a gang under `gang=none|permit-wait|kueue`).
    pub holds_parts: bool,
    /// Tasks it needs to start.
    pub needed: u32,
}

/// One waiting pod (job).
#[derive(Clone, Copy, Debug)]
struct Slot {
    job: JobId,
    facts: PodFacts,
    place: Place,
    /// The queue timestamp.
    timestamp: SimTime,
    /// Breaks ties between equal timestamps: the order they were set in.
    seq: u64,
    /// Failed attempts since the pod was created.
    attempts: u32,
    /// When its back-off ends, as the back-off flush sees it (its timestamp while it has
    /// no attempts).
    backoff_end: SimTime,
    /// What the current pass did with it.
    outcome: Outcome,
}

/// The scheduling queue: every waiting pod's slot, in (timestamp, seq) order.
#[derive(Clone, Debug)]
pub struct SchedQueue {
    cfg: QueueConfig,
    slots: Vec<Slot>,
    seq: u64,
    /// Slots whose timestamps a flush moved back (the order must be restored).
    unordered: bool,
    /// The slots tried in the current pass, in the order tried.
    tried: Vec<u32>,
    /// The last pass asked for at a back-off's end (not asked for twice).
    wake: Option<SimTime>,
}

impl SchedQueue {
    /// An empty queue.
    pub fn new(cfg: QueueConfig) -> Self {
        SchedQueue { cfg, slots: Vec::new(), seq: 0, unordered: false, tried: Vec::new(), wake: None }
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// How many pods wait.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no pod waits.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// A new pod (arrived, or re-created after its job was requeued) enters activeQ now.
    pub fn arrived(&mut self, j: JobId, facts: PodFacts, now: SimTime) {
        let seq = self.next_seq();
        let slot = Slot {
            job: j,
            facts,
            place: Place::Active,
            timestamp: now,
            seq,
            attempts: 0,
            backoff_end: now,
            outcome: Outcome::Untried,
        };
        self.slots.push(slot);
    }

    /// Keeps only the pods of `waiting` (the engine's queue), adding those it lacks as new
    /// pods (`facts` of each): after a job left the queue by another way than a pass.
    pub fn resync(&mut self, waiting: &[JobId], now: SimTime, mut facts: impl FnMut(JobId) -> PodFacts) {
        let present: std::collections::HashSet<JobId> = waiting.iter().copied().collect();
        self.slots.retain(|s| present.contains(&s.job));
        let have: std::collections::HashSet<JobId> = self.slots.iter().map(|s| s.job).collect();
        for &j in waiting {
            if !have.contains(&j) {
                let f = facts(j);
                self.arrived(j, f, now);
            }
        }
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
    fn backoff_end(&self, timestamp: SimTime, attempts: u32) -> SimTime {
        if attempts == 0 || self.cfg.max_backoff == SimDuration::ZERO {
            return timestamp;
        }
        let end = timestamp + self.backoff(attempts);
        let tick = BACKOFF_TICK.0;
        if self.cfg.pop_from_backoff { SimTime(end.0 / tick * tick) } else { SimTime(end.0.div_ceil(tick) * tick) }
    }

    /// Brings an unschedulable pod up to `now`: the unschedulable flushes at ticks before
    /// `now` retried it, and each retry failed at its tick (see the module docs). Returns
    /// whether its timestamp moved.
    fn catch_up(&self, s: &mut Slot, now: SimTime) -> bool {
        if s.place != Place::Unschedulable {
            return false;
        }
        let period = UNSCHEDULABLE_FLUSH_PERIOD.0;
        // The first tick strictly more than the limit after the timestamp
        // (`flushUnschedulablePodsLeftover`: `Since(timestamp) > max`), and the step
        // between retries once the timestamp is on a tick.
        let first = (s.timestamp.0 + self.cfg.max_unschedulable.0) / period * period + period;
        if first >= now.0 {
            return false;
        }
        let step = (self.cfg.max_unschedulable.0 / period + 1) * period;
        let k = (now.0 - 1 - first) / step;
        s.timestamp = SimTime(first + k * step);
        s.attempts = s.attempts.saturating_add(k as u32 + 1);
        s.backoff_end = self.backoff_end(s.timestamp, s.attempts);
        true
    }

    /// A cluster event that may help unschedulable pods happened (resources freed, nodes
    /// changed): each moves to backoffQ while its back-off runs, else to activeQ. (A pass
    /// does it in [`SchedQueue::begin`] with `moved`.)
    pub fn cluster_changed(&mut self, now: SimTime) {
        for i in 0..self.slots.len() {
            self.move_slot(i, now);
        }
    }

    /// Moves slot `i` if it is among the unschedulable pods.
    fn move_slot(&mut self, i: usize, now: SimTime) {
        let mut s = self.slots[i];
        if s.place != Place::Unschedulable {
            return;
        }
        self.unordered |= self.catch_up(&mut s, now);
        s.place = if s.backoff_end > now { Place::Backoff } else { Place::Active };
        self.slots[i] = s;
    }

    /// Restores the (timestamp, seq) order after flushes moved timestamps back.
    fn reorder(&mut self) {
        if std::mem::take(&mut self.unordered) {
            self.slots.sort_by_key(|s| (s.timestamp, s.seq));
        }
    }

    /// Whether slot `s` is tried at `now`: in activeQ (a backoffQ pod whose back-off ended
    /// joins it), or in backoffQ when the scheduler pops it (`SchedulerPopFromBackoffQ`).
    /// `Some(None)`: from activeQ; `Some(Some(window))`: popped from backoffQ.
    fn tried_as(&self, s: &Slot, now: SimTime) -> Option<Option<SimTime>> {
        match s.place {
            Place::Unschedulable => None,
            Place::Active => Some(None),
            Place::Backoff => {
                let end = s.backoff_end;
                if end <= now {
                    Some(None)
                } else if self.cfg.pop_from_backoff {
                    Some(Some(end))
                } else {
                    None
                }
            }
        }
    }

    /// The pods a pass at `now` tries, in order, as slot indices (see
    /// [`SchedQueue::job`]): activeQ's in `PrioritySort` order (higher priority, then
    /// queue timestamp), then, with `SchedulerPopFromBackoffQ`, backoffQ's by window, then
    /// `PrioritySort`. With `by_position` (orders of their own: `fifo`, `sjf-aging`,
    /// Coscheduling's, Kueue's) the pods keep the order of `position` instead (lower
    /// first; the pods it gives no position are not tried). `moved`: a cluster event
    /// moved the unschedulable pods first ([`SchedQueue::cluster_changed`]).
    pub fn begin(&mut self, now: SimTime, moved: bool, by_position: Option<&dyn Fn(JobId) -> Option<usize>>) -> &[u32] {
        if moved {
            self.cluster_changed(now);
        }
        self.reorder();
        self.tried.clear();
        // (sort key, slot): −priority, or the position; and for popped backoffQ pods the
        // window first.
        let mut active: Vec<(i64, u32)> = Vec::new();
        let mut popped: Vec<(SimTime, i64, u32)> = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            let Some(how) = self.tried_as(s, now) else { continue };
            let key = match by_position {
                Some(f) => match f(s.job) {
                    Some(p) => p as i64,
                    None => continue,
                },
                None => -s.facts.priority,
            };
            match how {
                None => active.push((key, i as u32)),
                Some(window) => popped.push((window, key, i as u32)),
            }
        }
        // Slots are in timestamp order: a stable sort by the key is PrioritySort (most
        // often there is one priority and nothing to sort).
        if !active.is_sorted_by_key(|a| a.0) {
            active.sort_by_key(|a| a.0);
        }
        if !popped.is_sorted() {
            popped.sort();
        }
        self.tried.extend(active.into_iter().map(|a| a.1));
        self.tried.extend(popped.into_iter().map(|p| p.2));
        &self.tried
    }

    /// The job of slot `i`.
    pub fn job(&self, i: u32) -> JobId {
        self.slots[i as usize].job
    }

    /// The facts of slot `i`.
    pub fn facts(&self, i: u32) -> PodFacts {
        self.slots[i as usize].facts
    }

    /// What the pass did with slot `i` (tried now; each slot at most once).
    pub fn set_outcome(&mut self, i: u32, outcome: Outcome, now: SimTime) {
        let mut s = self.slots[i as usize];
        s.outcome = outcome;
        if outcome == Outcome::Failed {
            s.attempts = s.attempts.saturating_add(1);
            s.timestamp = now;
            s.seq = self.next_seq();
            s.backoff_end = self.backoff_end(now, s.attempts);
            s.place = Place::Unschedulable;
        }
        self.slots[i as usize] = s;
    }

    /// The pass is over: placed pods leave; the pods that failed now have the latest
    /// timestamps, in the order they failed, after the others.
    pub fn end(&mut self) {
        let tried = std::mem::take(&mut self.tried);
        let Some(first) = tried.iter().filter(|&&i| self.slots[i as usize].outcome != Outcome::Untried).min() else {
            self.tried = tried;
            return;
        };
        // The failed ones, in the order they failed (the order tried).
        let failed: Vec<Slot> = tried
            .iter()
            .map(|&i| self.slots[i as usize])
            .filter(|s| s.outcome == Outcome::Failed)
            .map(|s| Slot { outcome: Outcome::Untried, ..s })
            .collect();
        // The slots before the first one tried keep their places; the others not tried
        // close up behind them.
        let start = *first as usize;
        let mut w = start;
        for r in start..self.slots.len() {
            let s = self.slots[r];
            if s.outcome == Outcome::Untried {
                self.slots[w] = s;
                w += 1;
            }
        }
        self.slots.truncate(w);
        self.slots.extend(failed);
        self.tried = tried;
        self.tried.clear();
    }

    /// When the next pod in backoffQ ends its back-off without being tried before (only
    /// without `SchedulerPopFromBackoffQ`): a pass is due then.
    pub fn next_backoff_end(&self, now: SimTime) -> Option<SimTime> {
        if self.cfg.pop_from_backoff {
            return None;
        }
        self.slots.iter().filter(|s| s.place == Place::Backoff).map(|s| s.backoff_end).filter(|&t| t > now).min()
    }

    /// For the engine's spin check: each waiting pod's place, attempts (up to where the
    /// back-off stops growing) and back-off left, in job order.
    pub fn retry_state(&self, now: SimTime, out: &mut Vec<u64>) {
        out.push(u64::MAX);
        // Attempts past the first whose back-off is the maximum change nothing.
        let cap = (1..64).find(|&a| self.backoff(a) >= self.cfg.max_backoff).unwrap_or(1);
        let mut v: Vec<[u64; 4]> = self
            .slots
            .iter()
            .map(|s| {
                let left = if s.place == Place::Backoff { s.backoff_end.saturating_since(now).0 } else { 0 };
                [s.job.0 as u64, s.place as u64, u64::from(s.attempts.min(cap)), left]
            })
            .collect();
        v.sort_unstable();
        out.extend(v.into_iter().flatten());
    }

    /// Pod `j`'s failed attempts and queue timestamp as of `now` (for tests and the
    /// decision log).
    pub fn attempts_and_timestamp(&self, j: JobId, now: SimTime) -> Option<(u32, SimTime)> {
        let mut s = *self.slots.iter().find(|s| s.job == j)?;
        self.catch_up(&mut s, now);
        Some((s.attempts, s.timestamp))
    }
}

/// The scheduling queue's part of a `kube` pass.
impl KubeScheduler {
    /// What a pass needs to know of pod `j` without reading its job again.
    pub(super) fn pod_facts(&mut self, view: &SchedView<'_>, j: JobId) -> PodFacts {
        let job = view.job(j);
        PodFacts {
            priority: job.priority(),
            ty: self.type_of(j, job),
            only_restricts: job.constraints().is_none_or(|c| c.tolerations.is_empty()),
            holds_parts: self.gang.holds_parts() && job.tasks() > 1,
            needed: job.needed_tasks(),
        }
    }

    /// What happened since the last pass, as the queue sees it: new pods (arrived or
    /// re-created) enter activeQ; resources freed or nodes changed move the unschedulable
    /// pods.
    pub(super) fn queue_events(&mut self, view: &SchedView<'_>, info: &PassInfo) {
        if let Some(p) = &mut self.preemption {
            p.observe(view, &info.queued);
        }
        if self.sched_queue.is_none() {
            return;
        }
        let now = view.now();
        let facts: Vec<(JobId, PodFacts)> = info.queued.iter().map(|&j| (j, self.pod_facts(view, j))).collect();
        let q = self.sched_queue.as_mut().expect("checked");
        for (j, f) in facts {
            q.arrived(j, f, now);
        }
        if q.len() != view.queue().len() {
            // A job left the queue by another way than a pass (Kueue withdrew it).
            let mut q = self.sched_queue.take().expect("checked");
            q.resync(view.queue(), now, |j| self.pod_facts(view, j));
            self.sched_queue = Some(q);
        }
        self.queue_moved = info.resources_released();
    }

    /// Whether a pod of `facts` that fits nowhere may preempt (so its failure is not
    /// recorded by the type's shortcut, which would skip PostFilter).
    fn may_preempt(&self, facts: &PodFacts) -> bool {
        self.preemption.as_ref().is_some_and(|p| p.may_preempt(facts.priority))
    }

    /// A pass over the scheduling queue (`queue=skip`): the pods it tries, in its order
    /// (`queue`, the order of `order=` and the gang mode, gives their order when `fast` is
    /// false: PrioritySort otherwise), each placed ([`KubeScheduler::place_pod`]) unless a
    /// pod of its type already fit nowhere in the pass; then asks for a pass at the next
    /// back-off's end where one is due.
    pub(super) fn place_from_queue(
        &mut self,
        view: &SchedView<'_>,
        fast: bool,
        queue: &[JobId],
        out: &mut Vec<Decision>,
    ) {
        let now = view.now();
        let position: std::collections::HashMap<JobId, usize> =
            if fast { Default::default() } else { queue.iter().enumerate().map(|(k, &j)| (j, k)).collect() };
        let by_position = |j: JobId| position.get(&j).copied();
        let tried: Vec<u32> = {
            let q = self.sched_queue.as_mut().expect("a scheduling queue");
            let f: Option<&dyn Fn(JobId) -> Option<usize>> = if fast { None } else { Some(&by_position) };
            q.begin(now, std::mem::take(&mut self.queue_moved), f).to_vec()
        };
        let mut pass = self.begin_pass(view);
        for (k, &slot) in tried.iter().enumerate() {
            let (j, f) = {
                let q = self.sched_queue.as_ref().expect("a scheduling queue");
                (q.job(slot), q.facts(slot))
            };
            // The type's shortcut, without reading the job (as `place_pod` does it).
            let fit = pass.fits_at_most.get(&(f.ty, false)).copied().filter(|_| f.only_restricts);
            let fails = fit.is_some_and(|k| k == 0 || !f.holds_parts && k < f.needed as usize);
            if fast && fails && !self.may_preempt(&f) {
                self.sched_queue.as_mut().expect("checked").set_outcome(slot, Outcome::Failed, now);
                continue;
            }
            self.current_slot = Some(slot);
            let _ = self.place_pod(view, &mut pass, j, k + 1 == tried.len(), out);
            self.current_slot = None;
        }
        if view.logging() {
            self.log_unplaced(view, &pass.scratch, view.queue(), out);
        }
        self.scratch = pass.scratch;
        self.sched_queue.as_mut().expect("checked").end();
        self.wake_for_backoff(view, out);
    }

    /// Records what the pass did with the pod being tried.
    pub(super) fn queue_outcome(&mut self, outcome: Outcome, now: SimTime) {
        if let (Some(q), Some(slot)) = (&mut self.sched_queue, self.current_slot) {
            q.set_outcome(slot, outcome, now);
        }
    }

    /// Asks for a pass when the next pod in backoffQ ends its back-off (releases without
    /// `SchedulerPopFromBackoffQ`).
    fn wake_for_backoff(&mut self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let Some(q) = &mut self.sched_queue else { return };
        let now = view.now();
        if let Some(at) = q.next_backoff_end(now)
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

    fn facts(priority: i64) -> PodFacts {
        PodFacts { priority, ty: 0, only_restricts: true, holds_parts: false, needed: 1 }
    }

    /// The jobs a pass at `now` tries, in order; each of `fail` fails, the others are
    /// left untried.
    fn pass(q: &mut SchedQueue, now: SimTime, fail: &[JobId]) -> Vec<JobId> {
        let tried: Vec<u32> = q.begin(now, false, None).to_vec();
        let jobs: Vec<JobId> = tried.iter().map(|&i| q.job(i)).collect();
        for &i in &tried {
            if fail.contains(&q.job(i)) {
                q.set_outcome(i, Outcome::Failed, now);
            }
        }
        q.end();
        jobs
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
        let t = SimTime::from_secs;
        q.arrived(j, facts(0), t(100));
        assert_eq!(pass(&mut q, t(100), &[j]), [j]);
        assert_eq!(q.attempts_and_timestamp(j, t(420)), Some((1, t(100))));
        assert_eq!(q.attempts_and_timestamp(j, t(421)), Some((2, t(420))));
        assert_eq!(q.attempts_and_timestamp(j, t(1100)), Some((4, t(1080))));
        // 60 s (v1.20): first tick after 160 is 180, then every 90 s.
        let mut old = SchedQueue::new(cfg(false, 60));
        old.arrived(j, facts(0), t(100));
        pass(&mut old, t(100), &[j]);
        assert_eq!(old.attempts_and_timestamp(j, t(300)), Some((3, t(270))));
        // Not tried again until an event moves it.
        assert_eq!(pass(&mut old, t(300), &[]), []);
    }

    #[test]
    fn moved_pods_wait_out_their_backoff_unless_popped() {
        let (a, b) = (JobId(0), JobId(1));
        let at = |ms: u64| SimTime(ms * 1000);
        for pop in [false, true] {
            let mut q = SchedQueue::new(cfg(pop, 300));
            // b failed at 0, a at 9.5 s (back-off 1 s: ends 10.5); an event at 9.75 s.
            q.arrived(b, facts(0), at(0));
            pass(&mut q, at(0), &[b]);
            q.arrived(a, facts(0), at(9_500));
            pass(&mut q, at(9_500), &[a]);
            q.cluster_changed(at(9_750));
            if pop {
                // v1.33+: b from activeQ, then a popped from backoffQ at once.
                assert_eq!(pass(&mut q, at(9_750), &[a, b]), [b, a]);
                assert_eq!(q.next_backoff_end(at(9_750)), None);
            } else {
                // Before: a waits for the 1 s tick at or after 10.5 s.
                assert_eq!(pass(&mut q, at(9_750), &[b]), [b]);
                assert_eq!(q.next_backoff_end(at(9_750)), Some(at(11_000)));
                // At 11 a is tried; b (failed again at 9.75) is unschedulable.
                assert_eq!(pass(&mut q, at(11_000), &[a]), [a]);
            }
        }
    }

    #[test]
    fn priority_then_last_failure_orders_the_pods() {
        let t = SimTime::from_secs;
        let (a, b, c) = (JobId(0), JobId(1), JobId(2));
        let mut q = SchedQueue::new(cfg(true, 300));
        // a and b (priority 0) fail at 0 and 1; c (priority 1) arrives at 2 and fails.
        q.arrived(a, facts(0), t(0));
        pass(&mut q, t(0), &[a]);
        q.arrived(b, facts(0), t(1));
        pass(&mut q, t(1), &[b]);
        q.arrived(c, facts(1), t(2));
        pass(&mut q, t(2), &[c]);
        // At 100 all move (back-offs over): c first, then a, b by their failures.
        q.cluster_changed(t(100));
        assert_eq!(pass(&mut q, t(100), &[a, b, c]), [c, a, b]);
        // At 150 a is placed, c and b fail again; d (priority 0) arrives at 160 and fails:
        // at 200 c, then b (last failed at 150), then d (at 160).
        let d = JobId(3);
        q.cluster_changed(t(150));
        let tried: Vec<u32> = q.begin(t(150), false, None).to_vec();
        for &i in &tried {
            let o = if q.job(i) == a { Outcome::Placed } else { Outcome::Failed };
            q.set_outcome(i, o, t(150));
        }
        q.end();
        q.arrived(d, facts(0), t(160));
        pass(&mut q, t(160), &[d]);
        q.cluster_changed(t(200));
        assert_eq!(pass(&mut q, t(200), &[]), [c, b, d]);
    }
}
