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
use super::queue_block::{Block, Class};
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
pub(super) enum Place {
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
    /// Whether it has constraints (node selector, affinity, tolerations, inter-pod terms).
    pub constrained: bool,
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

/// What a pass tries, in order: a pod's slot, or the block (see `queue_block.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Try {
    /// The pod of slot `i` ([`SchedQueue::job`]).
    Slot(u32),
    /// The block's pods, as [`SchedQueue::block_heads`] gives them.
    Block,
}

/// Fewest pods that start a block.
const MIN_BLOCK: usize = 16;

/// The scheduling queue: every waiting pod's slot, in (timestamp, seq) order, and at most
/// one block of pods that share their state (`queue_block.rs`).
#[derive(Clone, Debug)]
pub struct SchedQueue {
    cfg: QueueConfig,
    slots: Vec<Slot>,
    block: Option<Block>,
    /// Whether blocks are made (only for PrioritySort straight from the queue).
    blocks: bool,
    seq: u64,
    /// Slots whose timestamps a flush moved back (the order must be restored).
    unordered: bool,
    /// What the current pass tries, in order.
    tried: Vec<Try>,
    /// Whether the block was tried in the current pass.
    block_tried: bool,
    /// The last pass asked for at a back-off's end (not asked for twice).
    wake: Option<SimTime>,
}

impl SchedQueue {
    /// An empty queue.
    pub fn new(cfg: QueueConfig) -> Self {
        SchedQueue {
            cfg,
            slots: Vec::new(),
            block: None,
            blocks: false,
            seq: 0,
            unordered: false,
            tried: Vec::new(),
            block_tried: false,
            wake: None,
        }
    }

    /// The same queue making blocks of pods that share their state (when pods are tried in
    /// `PrioritySort` order straight from the queue).
    pub fn with_blocks(mut self, on: bool) -> Self {
        self.blocks = on;
        self
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// How many pods wait.
    pub fn len(&self) -> usize {
        self.slots.len() + self.block.as_ref().map_or(0, Block::len)
    }

    /// Whether no pod waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    /// Turns the block back into slots.
    pub fn dissolve(&mut self) {
        let Some(b) = self.block.take() else { return };
        let (place, timestamp, attempts, backoff_end, seq0) = (b.place, b.timestamp, b.attempts, b.backoff_end, b.seq);
        for (k, (job, facts)) in b.into_members().into_iter().enumerate() {
            let seq = seq0 + k as u64;
            self.slots.push(Slot {
                job,
                facts,
                place,
                timestamp,
                seq,
                attempts,
                backoff_end,
                outcome: Outcome::Untried,
            });
        }
        self.unordered = true;
    }

    /// Keeps only the pods of `waiting` (the engine's queue), adding those it lacks as new
    /// pods (`facts` of each): after a job left the queue by another way than a pass.
    pub fn resync(&mut self, waiting: &[JobId], now: SimTime, mut facts: impl FnMut(JobId) -> PodFacts) {
        self.dissolve();
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

    /// The fewest attempts whose back-off is the maximum (more change nothing).
    fn saturated(&self) -> u32 {
        (1..64).find(|&a| self.backoff(a) >= self.cfg.max_backoff).unwrap_or(1)
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

    /// Brings an unschedulable pod's (timestamp, attempts) up to `now`: the unschedulable
    /// flushes at ticks before `now` retried it, and each retry failed at its tick (see the
    /// module docs). Returns whether they moved.
    fn catch_up(&self, place: Place, timestamp: &mut SimTime, attempts: &mut u32, now: SimTime) -> bool {
        if place != Place::Unschedulable {
            return false;
        }
        let period = UNSCHEDULABLE_FLUSH_PERIOD.0;
        // The first tick strictly more than the limit after the timestamp
        // (`flushUnschedulablePodsLeftover`: `Since(timestamp) > max`), and the step
        // between retries once the timestamp is on a tick.
        let first = (timestamp.0 + self.cfg.max_unschedulable.0) / period * period + period;
        if first >= now.0 {
            return false;
        }
        let step = (self.cfg.max_unschedulable.0 / period + 1) * period;
        let k = (now.0 - 1 - first) / step;
        *timestamp = SimTime(first + k * step);
        *attempts = attempts.saturating_add(k as u32 + 1);
        true
    }

    /// A cluster event that may help unschedulable pods happened (resources freed, nodes
    /// changed): each moves to backoffQ while its back-off runs, else to activeQ. (A pass
    /// does it in [`SchedQueue::begin`] with `moved`.)
    pub fn cluster_changed(&mut self, now: SimTime) {
        for i in 0..self.slots.len() {
            let mut s = self.slots[i];
            if s.place != Place::Unschedulable {
                continue;
            }
            if self.catch_up(s.place, &mut s.timestamp, &mut s.attempts, now) {
                s.backoff_end = self.backoff_end(s.timestamp, s.attempts);
                self.unordered = true;
            }
            s.place = if s.backoff_end > now { Place::Backoff } else { Place::Active };
            self.slots[i] = s;
        }
        if let Some(mut b) = self.block.take() {
            if b.place == Place::Unschedulable {
                if self.catch_up(b.place, &mut b.timestamp, &mut b.attempts, now) {
                    b.backoff_end = self.backoff_end(b.timestamp, b.attempts);
                }
                b.place = if b.backoff_end > now { Place::Backoff } else { Place::Active };
            }
            self.block = Some(b);
        }
    }

    /// Restores the (timestamp, seq) order after flushes moved timestamps back.
    fn reorder(&mut self) {
        if std::mem::take(&mut self.unordered) {
            self.slots.sort_by_key(|s| (s.timestamp, s.seq));
        }
    }

    /// Whether a pod in `place` with back-off end `end` is tried at `now`: in activeQ (a
    /// backoffQ pod whose back-off ended joins it), or in backoffQ when the scheduler pops
    /// it (`SchedulerPopFromBackoffQ`). `Some(None)`: from activeQ; `Some(Some(window))`:
    /// popped from backoffQ.
    fn tried_as(&self, place: Place, end: SimTime, now: SimTime) -> Option<Option<SimTime>> {
        match place {
            Place::Unschedulable => None,
            Place::Active => Some(None),
            Place::Backoff if end <= now => Some(None),
            Place::Backoff if self.cfg.pop_from_backoff => Some(Some(end)),
            Place::Backoff => None,
        }
    }

    /// What a pass at `now` tries, in order (see [`Try`]): activeQ's pods in `PrioritySort`
    /// order (higher priority, then queue timestamp), then, with
    /// `SchedulerPopFromBackoffQ`, backoffQ's by window, then `PrioritySort`. With
    /// `by_position` (orders of their own: `fifo`, `sjf-aging`, Coscheduling's, Kueue's)
    /// the pods keep the order of `position` instead (lower first; the pods it gives no
    /// position are not tried). `moved`: a cluster event moved the unschedulable pods
    /// first ([`SchedQueue::cluster_changed`]). `dissolve`: whether pods of a priority may
    /// no longer share a block (their failures must each be seen: they may preempt).
    pub fn begin(
        &mut self,
        now: SimTime,
        moved: bool,
        by_position: Option<&dyn Fn(JobId) -> Option<usize>>,
        dissolve: impl Fn(i64) -> bool,
    ) -> &[Try] {
        if by_position.is_some() || self.block.as_ref().is_some_and(|b| dissolve(b.priority)) {
            self.dissolve();
        }
        if moved {
            self.cluster_changed(now);
        }
        self.reorder();
        self.tried.clear();
        self.block_tried = false;
        // (sort key, timestamp, seq, what): −priority or the position; and for popped
        // backoffQ pods the window first.
        let mut active: Vec<(i64, SimTime, u64, Try)> = Vec::new();
        let mut popped: Vec<(SimTime, i64, SimTime, u64, Try)> = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            let Some(how) = self.tried_as(s.place, s.backoff_end, now) else { continue };
            let key = match by_position {
                Some(f) => match f(s.job) {
                    Some(p) => p as i64,
                    None => continue,
                },
                None => -s.facts.priority,
            };
            let (ts, seq) = if by_position.is_some() { (SimTime::ZERO, 0) } else { (s.timestamp, s.seq) };
            match how {
                None => active.push((key, ts, seq, Try::Slot(i as u32))),
                Some(window) => popped.push((window, key, ts, seq, Try::Slot(i as u32))),
            }
        }
        if let Some(b) = &self.block
            && let Some(how) = self.tried_as(b.place, b.backoff_end, now)
        {
            let key = -b.priority;
            match how {
                None => {
                    let at = active.partition_point(|a| (a.1, a.2) < (b.timestamp, b.seq));
                    active.insert(at, (key, b.timestamp, b.seq, Try::Block));
                }
                Some(window) => popped.push((window, key, b.timestamp, b.seq, Try::Block)),
            }
        }
        // Slots are in timestamp order: most often there is one priority and nothing to sort.
        let by = |a: &(i64, SimTime, u64, Try)| (a.0, a.1, a.2);
        if !active.is_sorted_by_key(by) {
            active.sort_by_key(by);
        }
        let by = |p: &(SimTime, i64, SimTime, u64, Try)| (p.0, p.1, p.2, p.3);
        if !popped.is_sorted_by_key(by) {
            popped.sort_by_key(by);
        }
        self.tried.extend(active.into_iter().map(|a| a.3));
        self.tried.extend(popped.into_iter().map(|p| p.4));
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

    /// The classes of the block's pods.
    pub fn block_classes(&self) -> Vec<Class> {
        self.block.as_ref().map_or(Vec::new(), Block::classes)
    }

    /// The position of the block's `k`-th pod of `class`.
    pub fn block_class_pos(&self, class: Class, k: usize) -> Option<i64> {
        self.block.as_ref().and_then(|b| b.class_pos(class, k))
    }

    /// The position of the block's last pod.
    pub fn block_last(&self) -> Option<i64> {
        self.block.as_ref().and_then(Block::last)
    }

    /// The block's pod at `pos`.
    pub fn block_member(&self, pos: i64) -> (JobId, PodFacts) {
        self.block.as_ref().expect("a block").member(pos)
    }

    /// The block's `k`-th pod of `class` was bound.
    pub fn block_bound(&mut self, class: Class, k: usize) {
        self.block.as_mut().expect("a block").bound(class, k);
    }

    /// The pass is through the block: its pods not bound failed now, one after the other.
    pub fn block_failed(&mut self, now: SimTime) {
        let Some(mut b) = self.block.take() else { return };
        self.block_tried = true;
        b.tidy();
        if !b.is_empty() {
            b.seq = self.seq + 1;
            self.seq += b.len() as u64;
            b.attempts = b.attempts.saturating_add(1);
            b.timestamp = now;
            b.backoff_end = self.backoff_end(now, b.attempts);
            b.place = Place::Unschedulable;
            self.block = Some(b);
        }
    }

    /// The pass is over: placed pods leave; the pods that failed now have the latest
    /// timestamps, in the order they failed, after the others; pods that failed next to
    /// the block join it, or a long enough run of them makes one.
    pub fn end(&mut self, now: SimTime, may_preempt: impl Fn(i64) -> bool) {
        let tried = std::mem::take(&mut self.tried);
        let joining = if self.blocks { self.joining(&tried, now, &may_preempt) } else { Joining::default() };
        let first = tried
            .iter()
            .filter_map(|t| match t {
                Try::Slot(i) if self.slots[*i as usize].outcome != Outcome::Untried => Some(*i),
                _ => None,
            })
            .min();
        if let Some(first) = first {
            // The failed ones, in the order they failed (the order tried), but those that
            // join the block.
            let joins: std::collections::HashSet<u32> = joining.all().collect();
            let failed: Vec<Slot> = tried
                .iter()
                .filter_map(|t| match t {
                    Try::Slot(i) if !joins.contains(i) => Some(self.slots[*i as usize]),
                    _ => None,
                })
                .filter(|s| s.outcome == Outcome::Failed)
                .map(|s| Slot { outcome: Outcome::Untried, ..s })
                .collect();
            let joined: Vec<Slot> = joining.all().map(|i| self.slots[i as usize]).collect();
            // The slots before the first one tried keep their places; the others not tried
            // close up behind them.
            let start = first as usize;
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
            self.join(joining, joined, now);
        }
        self.tried = tried;
        self.tried.clear();
    }

    /// Which of the slots failed in this pass join the block: those tried right before it
    /// and right after it, or, without a block, the longest run of at least [`MIN_BLOCK`].
    fn joining(&self, tried: &[Try], now: SimTime, may_preempt: &impl Fn(i64) -> bool) -> Joining {
        let cap = self.saturated();
        let eligible = |t: &Try, priority: i64| match t {
            Try::Slot(i) => {
                let s = &self.slots[*i as usize];
                s.outcome == Outcome::Failed
                    && s.timestamp == now
                    && s.attempts >= cap
                    && !s.facts.constrained
                    && s.facts.only_restricts
                    && s.facts.priority == priority
                    && !may_preempt(priority)
            }
            Try::Block => false,
        };
        let slot = |t: &Try| match t {
            Try::Slot(i) => *i,
            Try::Block => unreachable!("checked"),
        };
        match (&self.block, tried.iter().position(|t| *t == Try::Block)) {
            (Some(b), Some(at)) if self.block_tried => {
                let before: Vec<u32> =
                    tried[..at].iter().rev().take_while(|t| eligible(t, b.priority)).map(slot).collect();
                let after: Vec<u32> =
                    tried[at + 1..].iter().take_while(|t| eligible(t, b.priority)).map(slot).collect();
                Joining { before, after, new: false }
            }
            (Some(_), _) => Joining::default(),
            (None, _) => {
                // The longest run of eligible slots of one priority.
                let mut best: (usize, usize) = (0, 0);
                let mut k = 0;
                while k < tried.len() {
                    let Try::Slot(i) = tried[k] else {
                        k += 1;
                        continue;
                    };
                    let p = self.slots[i as usize].facts.priority;
                    let run = tried[k..].iter().take_while(|t| eligible(t, p)).count();
                    if run > best.1 - best.0 {
                        best = (k, k + run);
                    }
                    k += run.max(1);
                }
                if best.1 - best.0 < MIN_BLOCK {
                    return Joining::default();
                }
                Joining { before: Vec::new(), after: tried[best.0..best.1].iter().map(slot).collect(), new: true }
            }
        }
    }

    /// Moves the `joined` slots into the block (or a new one) and out of the slots.
    fn join(&mut self, joining: Joining, joined: Vec<Slot>, now: SimTime) {
        if joined.is_empty() {
            return;
        }
        let n_before = joining.before.len();
        let (before, after) = joined.split_at(n_before);
        if joining.new {
            let s0 = after[0];
            let members = after.iter().map(|s| (s.job, s.facts)).collect();
            let shared = (Place::Unschedulable, now, s0.seq, self.saturated(), s0.backoff_end);
            self.block = Some(Block::new(s0.facts.priority, members, shared));
            return;
        }
        let b = self.block.as_mut().expect("a block to join");
        // `before` is nearest first.
        for s in before {
            b.push_front((s.job, s.facts));
        }
        for s in after {
            b.push_back((s.job, s.facts));
        }
    }

    /// When the next pod in backoffQ ends its back-off without being tried before (only
    /// without `SchedulerPopFromBackoffQ`): a pass is due then.
    pub fn next_backoff_end(&self, now: SimTime) -> Option<SimTime> {
        if self.cfg.pop_from_backoff {
            return None;
        }
        let block = self.block.as_ref().filter(|b| b.place == Place::Backoff).map(|b| b.backoff_end);
        self.slots
            .iter()
            .filter(|s| s.place == Place::Backoff)
            .map(|s| s.backoff_end)
            .chain(block)
            .filter(|&t| t > now)
            .min()
    }

    /// For the engine's spin check: each waiting pod's place, attempts (up to where the
    /// back-off stops growing) and back-off left, in job order.
    pub fn retry_state(&self, now: SimTime, out: &mut Vec<u64>) {
        out.push(u64::MAX);
        let cap = self.saturated();
        let left = |place: Place, end: SimTime| if place == Place::Backoff { end.saturating_since(now).0 } else { 0 };
        let mut v: Vec<[u64; 4]> = self
            .slots
            .iter()
            .map(|s| [s.job.0 as u64, s.place as u64, u64::from(s.attempts.min(cap)), left(s.place, s.backoff_end)])
            .collect();
        if let Some(b) = &self.block {
            let shared = [b.place as u64, u64::from(b.attempts.min(cap)), left(b.place, b.backoff_end)];
            v.extend(b.live_members().map(|(j, _)| [j.0 as u64, shared[0], shared[1], shared[2]]));
        }
        v.sort_unstable();
        out.extend(v.into_iter().flatten());
    }

    /// Pod `j`'s failed attempts and queue timestamp as of `now` (for tests and the
    /// decision log; in a block, attempts past the back-off's maximum are not counted).
    pub fn attempts_and_timestamp(&self, j: JobId, now: SimTime) -> Option<(u32, SimTime)> {
        let (place, mut ts, mut attempts) = match self.slots.iter().find(|s| s.job == j) {
            Some(s) => (s.place, s.timestamp, s.attempts),
            None => {
                let b = self.block.as_ref().filter(|b| b.live_members().any(|(m, _)| m == j))?;
                (b.place, b.timestamp, b.attempts)
            }
        };
        self.catch_up(place, &mut ts, &mut attempts, now);
        Some((attempts, ts))
    }
}

/// The slots that join the block at the end of a pass: `before` it (nearest first) and
/// `after` it, or (`new`) a new block of `after`.
#[derive(Default)]
struct Joining {
    before: Vec<u32>,
    after: Vec<u32>,
    new: bool,
}

impl Joining {
    fn all(&self) -> impl Iterator<Item = u32> + '_ {
        self.before.iter().chain(&self.after).copied()
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
            constrained: job.constraints().is_some(),
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
        let tried: Vec<Try> = {
            let pre = self.preemption.as_ref();
            let q = self.sched_queue.as_mut().expect("a scheduling queue");
            let f: Option<&dyn Fn(JobId) -> Option<usize>> = if fast { None } else { Some(&by_position) };
            let dissolve = |p: i64| pre.is_some_and(|pre| pre.may_preempt(p));
            q.begin(now, std::mem::take(&mut self.queue_moved), f, dissolve).to_vec()
        };
        let mut pass = self.begin_pass(view);
        for (k, &t) in tried.iter().enumerate() {
            match t {
                Try::Slot(slot) => {
                    let (j, f) = {
                        let q = self.sched_queue.as_ref().expect("a scheduling queue");
                        (q.job(slot), q.facts(slot))
                    };
                    if fast && fails_by_type(&pass, &f) && !self.may_preempt(&f) {
                        self.sched_queue.as_mut().expect("checked").set_outcome(slot, Outcome::Failed, now);
                        continue;
                    }
                    self.current = Current::Slot(slot);
                    let _ = self.place_pod(view, &mut pass, j, k + 1 == tried.len(), out);
                    self.current = Current::None;
                }
                Try::Block => self.place_block(view, &mut pass, k + 1 == tried.len(), out),
            }
        }
        if view.logging() {
            self.log_unplaced(view, &pass.scratch, view.queue(), out);
        }
        self.scratch = pass.scratch;
        self.up = pass.up;
        let pre = self.preemption.as_ref();
        let may_preempt = |p: i64| pre.is_some_and(|pre| pre.may_preempt(p));
        self.sched_queue.as_mut().expect("checked").end(now, may_preempt);
        self.wake_for_backoff(view, out);
    }

    /// The block's pods in a pass, as one by one: the first of each class in the block's
    /// order, then, after each, the next of its class — but those whose type already fit
    /// nowhere in the pass (which, once true, stays true for the rest of the pass), and
    /// with them the rest of their class.
    fn place_block(&mut self, view: &SchedView<'_>, pass: &mut super::Pass, last: bool, out: &mut Vec<Decision>) {
        use std::cmp::Reverse;
        let q = self.sched_queue.as_ref().expect("a scheduling queue");
        // The pass's last pod, when the block is tried last (as `place_pod` wants to know).
        let last_pos = q.block_last().filter(|_| last);
        // (position, class, its rank among the class's live pods).
        let mut heads: std::collections::BinaryHeap<Reverse<(i64, Class, usize)>> =
            q.block_classes().into_iter().filter_map(|c| q.block_class_pos(c, 0).map(|p| Reverse((p, c, 0)))).collect();
        while let Some(Reverse((pos, class, k))) = heads.pop() {
            let (j, f) = self.sched_queue.as_ref().expect("checked").block_member(pos);
            if fails_by_type(pass, &f) {
                continue;
            }
            self.current = Current::Block(Outcome::Untried);
            let _ = self.place_pod(view, pass, j, Some(pos) == last_pos, out);
            let outcome = std::mem::replace(&mut self.current, Current::None);
            debug_assert!(outcome != Current::Block(Outcome::Untried), "a block's pod is always tried");
            let q = self.sched_queue.as_mut().expect("checked");
            let next = if outcome == Current::Block(Outcome::Placed) {
                q.block_bound(class, k);
                k
            } else {
                k + 1
            };
            if let Some(p) = q.block_class_pos(class, next) {
                heads.push(Reverse((p, class, next)));
            }
        }
        self.sched_queue.as_mut().expect("checked").block_failed(view.now());
    }

    /// Records what the pass did with the pod being tried.
    pub(super) fn queue_outcome(&mut self, outcome: Outcome, now: SimTime) {
        match (&mut self.sched_queue, &mut self.current) {
            (Some(q), Current::Slot(slot)) => q.set_outcome(*slot, outcome, now),
            (Some(_), Current::Block(o)) => *o = outcome,
            _ => {}
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

/// Whether a pod of `facts` fails in `pass` because a pod of its type already fit nowhere
/// (the shortcut `place_pod` takes, without reading the job).
fn fails_by_type(pass: &super::Pass, f: &PodFacts) -> bool {
    let fit = pass.fits_at_most.get(&(f.ty, false)).copied().filter(|_| f.only_restricts);
    fit.is_some_and(|k| k == 0 || !f.holds_parts && k < f.needed as usize)
}

/// The pod a queue pass is trying, for [`KubeScheduler::queue_outcome`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum Current {
    /// None (a pass without the scheduling queue).
    #[default]
    None,
    /// A slot's.
    Slot(u32),
    /// One of the block's, and what became of it.
    Block(Outcome),
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
        PodFacts { priority, ty: 0, only_restricts: true, holds_parts: false, needed: 1, constrained: false }
    }

    fn slot(t: Try) -> u32 {
        match t {
            Try::Slot(i) => i,
            Try::Block => panic!("no blocks here"),
        }
    }

    /// The jobs a pass at `now` tries, in order; each of `fail` fails, the others are
    /// left untried.
    fn pass(q: &mut SchedQueue, now: SimTime, fail: &[JobId]) -> Vec<JobId> {
        let tried: Vec<u32> = q.begin(now, false, None, |_| false).iter().map(|t| slot(*t)).collect();
        let jobs: Vec<JobId> = tried.iter().map(|&i| q.job(i)).collect();
        for &i in &tried {
            if fail.contains(&q.job(i)) {
                q.set_outcome(i, Outcome::Failed, now);
            }
        }
        q.end(now, |_| false);
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
    fn a_re_created_pod_is_a_new_pod() {
        let t = SimTime::from_secs;
        let (a, b) = (JobId(0), JobId(1));
        let mut q = SchedQueue::new(cfg(true, 300));
        // a arrives at 0 and fails at 0, 1, 2, 3, 4, 5 (its back-off at the maximum).
        q.arrived(a, facts(0), t(0));
        for s in 0..6 {
            q.cluster_changed(t(s));
            pass(&mut q, t(s), &[a]);
        }
        assert_eq!(q.attempts_and_timestamp(a, t(6)), Some((6, t(5))));
        // It is bound at 20; b arrives at 30 and fails; a's job is requeued at 40 (an
        // out-of-memory kill, an eviction, its node lost): a new pod, no attempts, behind b.
        q.cluster_changed(t(20));
        let tried: Vec<u32> = q.begin(t(20), false, None, |_| false).iter().map(|t| slot(*t)).collect();
        q.set_outcome(tried[0], Outcome::Placed, t(20));
        q.end(t(20), |_| false);
        assert!(q.is_empty());
        q.arrived(b, facts(0), t(30));
        pass(&mut q, t(30), &[b]);
        q.arrived(a, facts(0), t(40));
        assert_eq!(q.attempts_and_timestamp(a, t(40)), Some((0, t(40))));
        q.cluster_changed(t(50));
        assert_eq!(pass(&mut q, t(50), &[]), [b, a]);
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
        let tried: Vec<u32> = q.begin(t(150), false, None, |_| false).iter().map(|t| slot(*t)).collect();
        for &i in &tried {
            let o = if q.job(i) == a { Outcome::Placed } else { Outcome::Failed };
            q.set_outcome(i, o, t(150));
        }
        q.end(t(150), |_| false);
        q.arrived(d, facts(0), t(160));
        pass(&mut q, t(160), &[d]);
        q.cluster_changed(t(200));
        assert_eq!(pass(&mut q, t(200), &[]), [c, b, d]);
    }
}
