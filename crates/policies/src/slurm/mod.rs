//! `slurm`: the two schedulers of Slurm's controller, as `slurmctld` runs them, on the
//! nodes and partitions of a site's own `slurm.conf` ([`conf`]).
//!
//! Sources: `SchedMD/slurm` 24.05, `doc/html/sched_config.shtml`, `slurm.conf(5)`
//! (`SchedulerParameters`), `src/slurmctld/job_scheduler.c` (`schedule`),
//! `src/slurmctld/job_mgr.c` (`_top_priority`, `job_allocate`),
//! `src/plugins/sched/backfill/backfill.c` (`_attempt_backfill`, `_add_reservation`).
//!
//! * **At submission** a job starts at once only when no pending job of its partition
//!   has a higher priority and it fits (`job_allocate` → `_top_priority`). Otherwise it
//!   becomes visible to the schedulers at their first run after its submit time.
//! * **The main scheduler** runs when a job ends (event-driven, testing at most
//!   `default_queue_depth` jobs) and every `sched_interval` (all jobs). It walks pending
//!   jobs by partition `PriorityTier`, priority, submit time and id, starts what fits now,
//!   and once a job of a partition is left pending starts no other job of that partition.
//! * **The backfill scheduler** (`sched/backfill`) runs every `bf_interval` seconds. In
//!   the same order it tests at most `bf_max_job_test` jobs (`bf_max_job_user` per user)
//!   against a node-level map of when resources free up (running jobs end at start +
//!   time limit). A job that can start now without overlapping a reservation starts;
//!   otherwise its earliest start within `bf_window` is found and **the nodes it would
//!   get are reserved whole** for [start, start + time limit] (rounded up to
//!   `bf_resolution`): a later job may use them only if it ends before (Slurm: "the
//!   backfill scheduler reserves whole nodes for jobs"). The intervals are compared as
//!   Slurm's `node_space` map does, a job ending exactly when a reservation begins
//!   overlapping it.
//! * **Priority**: `priority/basic` orders by submit time; `priority/multifactor` is
//!   [`priority`]'s weighted sum, recalculated every `PriorityCalcPeriod`.
//!
//! A simulated scheduler cycle takes no time (`bf_max_time`, `bf_yield_interval` and
//! `sched_min_interval` are read, not modelled), and a backfill cycle runs only when a
//! job or node changed since the last one (`_more_work` in `backfill.c`).
//!
//! Speed: pending jobs are kept in scheduling order between passes and running jobs by
//! expected end, so a pass costs what it tests, not the length of the queue; a backfill
//! cycle plans the reservation of a job that cannot start now only when a later job
//! might start now (until then no reservation can change what starts), and plans of
//! packed one-CPU jobs read each node's releases where they look (`releases.rs`) rather
//! than moving node counts per release, keeping the count of CPUs free outside the
//! reservations as they move to later times so that the nodes are scanned only where
//! the job could fit (`backfill.rs`). Within a cycle the nodes only lose free CPUs and
//! the reservations only grow, so a packed plan starts where an earlier plan found the
//! start of a job asking no more CPUs for no longer, and a job that cannot start now when
//! such a job could not waits unplanned at once. A later plan's place is a set of nodes
//! (bitmap words), and the words whose nodes are all idle by its time are counted and
//! taken at once. The nodes the reservations block for a window are counted per node and
//! moved with the window (`blocked.rs`), and a cycle takes over the plans of the cycle
//! before while no job started or ended and no node changed in between (`Carry` in
//! `backfill.rs`).

pub mod conf;
pub mod fairshare;
pub mod nodes;
pub mod priority;
pub mod qos;

mod preempt;
mod releases;

use crate::options::OptionInfo;
use crate::spec::{PolicyError, PolicySpec};
use conf::{OverSubscribe, SlurmConf};
use nodes::{Held, Nodes, Request};
use sim_core::Binding;
use sim_core::NodeState;
use sim_core::job::JobId;
use sim_core::ledger::TaskBinding;
use sim_core::policy::{Decision, PassInfo, Policy, SchedView, StartReason, WaitReason};
use sim_core::time::{SimDuration, SimTime};
use std::collections::{BTreeMap, BTreeSet};

/// A job this policy started: where it runs, when it is expected to end, and what it
/// counts against its QOS's limits.
#[derive(Debug, Clone)]
struct Run {
    held: Vec<Held>,
    expected_end: SimTime,
    start: SimTime,
    qos: usize,
    part: usize,
    user: u32,
    /// Its user association in the fair-share tree (`usize::MAX`: none tracked).
    assoc: usize,
    /// CPUs, GPUs, nodes.
    tres: (u64, u64, u64),
}

/// A pending job in scheduling order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    tier: std::cmp::Reverse<u32>,
    priority: std::cmp::Reverse<u64>,
    submit: SimTime,
    job: JobId,
}

/// Which scheduler started a job (the decision log's words).
#[derive(Debug, Clone, Copy)]
enum By {
    Submit,
    Main,
    Backfill,
    /// It suspended the jobs in its way (`PreemptMode=SUSPEND,GANG`).
    Suspending,
}

/// The `slurm` policy.
#[derive(Debug, Clone)]
pub struct Slurm {
    conf: SlurmConf,
    nodes: Nodes,
    /// The nodes as a backfill cycle's plans see them at a later time (scratch).
    future: Nodes,
    /// Each node's releases as a backfill cycle's plans of packed one-CPU jobs read them
    /// (scratch).
    releases: releases::Releases,
    /// A backfill cycle's plan, kept between cycles for its buffers (scratch).
    bf_plan: backfill::Plan,
    running: BTreeMap<JobId, Run>,
    /// When each job was first seen (`SimTime::MAX`: not yet).
    seen: Vec<SimTime>,
    priority: priority::Priorities,
    /// When the backfill scheduler is next due (`None`: nothing to do).
    bf_due: Option<SimTime>,
    /// When the periodic main scheduler is next due.
    main_due: Option<SimTime>,
    /// Pending jobs the schedulers see, in scheduling order.
    queue: BTreeSet<Key>,
    /// Per partition, how many of them are its jobs.
    part_pending: Vec<u32>,
    /// Pending jobs not yet seen by a scheduler (submitted at the current pass's time).
    arriving: Vec<JobId>,
    /// Running jobs by expected end.
    ends: BTreeSet<(SimTime, JobId)>,
    /// Running jobs per (QOS, user).
    user_running: BTreeMap<(usize, u32), u32>,
    /// Per QOS, the CPUs, GPUs and nodes of its running jobs.
    qos_running: Vec<[u64; 3]>,
    /// Running jobs preempted, in their grace time.
    preempting: BTreeSet<JobId>,
    /// The `--assoc` file's limits by association: `MaxJobs`, `GrpTRES` (empty without
    /// limits).
    assoc_limits: Vec<(Option<u32>, qos::Tres)>,
    /// Each job's user association, by job index, when limits are tracked.
    job_assoc: Vec<usize>,
    /// Per association: running jobs, CPUs, GPUs, nodes of it and its children.
    assoc_used: Vec<[u64; 4]>,
    /// Pending jobs that preempted others, and whom.
    preemptors: BTreeMap<JobId, Vec<JobId>>,
    /// Jobs suspended for a preemptor (`PreemptMode=SUSPEND,GANG`).
    suspended: BTreeMap<JobId, preempt::Suspended>,
    /// Jobs of this pass's arrivals that were in the queue before (requeued, not
    /// submitted: no submit-time start).
    requeued: BTreeSet<JobId>,
    /// Whether the cluster was set up from the run's nodes (no `slurm.conf`).
    from_cluster: bool,
    started: Vec<JobId>,
}

/// `priority=conf|basic|multifactor`.
const PRIORITY: OptionInfo = OptionInfo {
    key: "priority",
    values: &["conf", "basic", "multifactor"],
    doc: "conf: PriorityType of the slurm.conf (priority/multifactor when it says nothing); basic: submit order; multifactor: the weighted factors",
};
/// `backfill=conf|on|off`.
const BACKFILL: OptionInfo = OptionInfo {
    key: "backfill",
    values: &["conf", "on", "off"],
    doc: "conf: SchedulerType of the slurm.conf (sched/backfill when it says nothing); on: sched/backfill; off: sched/builtin",
};
/// A numeric option whose default is what the `slurm.conf` says.
const fn conf_number(key: &'static str, doc: &'static str) -> OptionInfo {
    OptionInfo { key, values: &["conf", "<integer>"], doc }
}
const BF_INTERVAL: OptionInfo =
    conf_number("bf_interval", "seconds between backfill cycles (slurm.conf SchedulerParameters; default 30)");
const BF_RESOLUTION: OptionInfo = conf_number("bf_resolution", "seconds: the backfill map's time step (default 60)");
const BF_WINDOW: OptionInfo = conf_number("bf_window", "minutes backfill plans ahead (default 1440)");
const BF_MAX_JOB_TEST: OptionInfo = conf_number("bf_max_job_test", "jobs tested per backfill cycle (default 500)");
const SCHED_INTERVAL: OptionInfo =
    conf_number("sched_interval", "seconds between full main-scheduler passes (default 60)");
const QUEUE_DEPTH: OptionInfo =
    conf_number("default_queue_depth", "jobs the event-driven main scheduler tests (default 100)");

impl Slurm {
    /// The options it takes; each overrides what the `slurm.conf` says.
    pub const OPTIONS: &'static [OptionInfo] =
        &[PRIORITY, BACKFILL, BF_INTERVAL, BF_RESOLUTION, BF_WINDOW, BF_MAX_JOB_TEST, SCHED_INTERVAL, QUEUE_DEPTH];

    /// Builds it from a spec, without a `slurm.conf`: Slurm's defaults, on the run's
    /// cluster (its nodes in one default partition, taken at the first pass).
    pub fn from_spec(spec: &PolicySpec) -> Result<Self, PolicyError> {
        let mut s = Slurm::from_conf(SlurmConf::default(), spec)?;
        s.from_cluster = true;
        Ok(s)
    }

    /// Builds it from a site's `slurm.conf` (its nodes must be the run's cluster:
    /// [`SlurmConf::cluster`]) with the spec's options on top.
    pub fn from_conf(mut conf: SlurmConf, spec: &PolicySpec) -> Result<Self, PolicyError> {
        let c = crate::options::check(spec, Self::OPTIONS)?;
        match c.index(PRIORITY) {
            1 => conf.priority.multifactor = false,
            2 => conf.priority.multifactor = true,
            _ => {}
        }
        match c.index(BACKFILL) {
            1 => conf.sched.backfill = true,
            2 => conf.sched.backfill = false,
            _ => {}
        }
        let secs = SimDuration::from_secs;
        let s = &mut conf.sched;
        if let Some(v) = c.number(BF_INTERVAL) {
            s.bf_interval = secs(v.max(1));
        }
        if let Some(v) = c.number(BF_RESOLUTION) {
            s.bf_resolution = secs(v.max(1));
        }
        if let Some(v) = c.number(BF_WINDOW) {
            s.bf_window = secs(v * 60);
        }
        if let Some(v) = c.number(BF_MAX_JOB_TEST) {
            s.bf_max_job_test = v.min(u64::from(u32::MAX)) as u32;
        }
        if let Some(v) = c.number(SCHED_INTERVAL) {
            s.sched_interval = secs(v.max(1));
        }
        if let Some(v) = c.number(QUEUE_DEPTH) {
            s.default_queue_depth = v.min(u64::from(u32::MAX)) as u32;
        }
        let nodes = Nodes::new(&conf);
        let priority = priority::Priorities::new(&conf);
        let parts = conf.partitions.len();
        let qos_count = conf.qos.len();
        Self::check_preempt_modes(&conf)?;
        let assoc_limits = Self::assoc_limits(&conf);
        Ok(Slurm {
            conf,
            future: nodes.clone(),
            releases: releases::Releases::default(),
            bf_plan: backfill::Plan::default(),
            nodes,
            running: BTreeMap::new(),
            seen: Vec::new(),
            priority,
            bf_due: None,
            main_due: None,
            part_pending: vec![0; parts],
            queue: BTreeSet::new(),
            arriving: Vec::new(),
            ends: BTreeSet::new(),
            user_running: BTreeMap::new(),
            qos_running: vec![[0; 3]; qos_count],
            assoc_limits,
            job_assoc: Vec::new(),
            assoc_used: Vec::new(),
            preempting: BTreeSet::new(),
            preemptors: BTreeMap::new(),
            suspended: BTreeMap::new(),
            requeued: BTreeSet::new(),
            from_cluster: false,
            started: Vec::new(),
        })
    }

    /// Refuses a `SUSPEND` preemption that Slurm would not carry out as suspension:
    /// without `GANG` in the cluster's `PreemptMode` (slurmctld then kills the preempted
    /// job: `slurm_job_preempt` in `src/interfaces/preempt.c`, 24.05), or with
    /// `select/linear` (`preempt.shtml`: SUSPEND is only supported by `select/cons_tres`).
    fn check_preempt_modes(conf: &SlurmConf) -> Result<(), PolicyError> {
        use conf::{PreemptMode as M, PreemptType as T};
        if conf.preempt_type == T::None {
            return Ok(());
        }
        let mut modes = std::iter::once(conf.preempt_mode)
            .chain(conf.partitions.iter().filter_map(|p| p.preempt_mode))
            .chain(conf.qos.iter().filter_map(|q| q.preempt_mode));
        let bad = |expected: &str| PolicyError::BadValue {
            kind: "policy",
            plugin: "slurm".into(),
            key: format!("PreemptMode of {}", conf.file),
            value: "SUSPEND".into(),
            expected: expected.into(),
        };
        if modes.any(|m| m == M::Suspend) {
            if !conf.preempt_gang {
                return Err(bad("OFF, REQUEUE, CANCEL, or SUSPEND with GANG in the cluster's PreemptMode \
                     (PreemptMode=SUSPEND,GANG: the gang scheduler resumes suspended jobs)"));
            }
            if conf.select.linear {
                return Err(bad("OFF, REQUEUE or CANCEL with select/linear (SUSPEND needs select/cons_tres)"));
            }
        }
        Ok(())
    }

    /// The configuration it runs with.
    pub fn conf(&self) -> &SlurmConf {
        &self.conf
    }

    /// Without a `slurm.conf`: the run's cluster as the nodes of one default partition.
    /// Its memory is the cluster's own, not a consumable resource (jobs without memory
    /// take none of it).
    fn adopt_cluster(&mut self, view: &SchedView<'_>) {
        self.conf.nodes = view
            .cluster()
            .nodes()
            .map(|(id, spec, _)| conf::NodeDef {
                name: format!("n{}", id.0),
                cpus: spec.cores.max(1),
                memory_mib: spec.memory_mib,
                gpus: if spec.gpus.is_empty() { Vec::new() } else { vec![(None, spec.gpus.len() as u32)] },
                features: Vec::new(),
                weight: 1,
            })
            .collect();
        self.conf.partitions = vec![conf::PartitionDef::all_nodes("batch", self.conf.nodes.len())];
        self.conf.select.memory = false;
        self.nodes = Nodes::new(&self.conf);
        self.future = self.nodes.clone();
        self.priority = priority::Priorities::new(&self.conf);
        self.part_pending = vec![0; self.conf.partitions.len()];
        self.from_cluster = false;
    }

    fn partition(&self, view: &SchedView<'_>, j: JobId) -> usize {
        self.conf.partition_of(view.job(j).partition())
    }

    /// The job's time limit: its own, else its partition's `DefaultTime`, else `MaxTime`,
    /// else a year (`INFINITE`).
    fn limit(&self, view: &SchedView<'_>, j: JobId) -> SimDuration {
        let p = &self.conf.partitions[self.partition(view, j)];
        view.job(j).requested().or(p.default_time).or(p.max_time).unwrap_or(SimDuration::from_secs(365 * 86_400))
    }

    fn request(&self, view: &SchedView<'_>, j: JobId) -> Request {
        let job = view.job(j);
        let t = job.task();
        let cpus = if t.cpu_milli > 0 { t.cpu_milli.div_ceil(1000) } else { t.cores };
        let mem = if !self.conf.select.memory {
            Some(0)
        } else if t.memory_mib > 0 {
            Some(t.memory_mib)
        } else if let Some(d) = self.conf.def_mem_per_cpu {
            Some(d * u64::from(cpus.max(1)))
        } else {
            self.conf.def_mem_per_node
        };
        let part = &self.conf.partitions[self.partition(view, j)];
        let bridged = view.route(job.domain()).whole_node;
        Request {
            tasks: job.tasks(),
            cpus,
            mem,
            gpus: t.gpus,
            one_per_node: t.cores > 1 || t.gpus > 0 || bridged,
            // slurm-bridge: "Exclusive, whole node allocations are made for each pod" of a
            // domain routed to this scheduler whole-node (docs/hybrid.md).
            whole_nodes: self.conf.select.linear || part.oversubscribe == OverSubscribe::Exclusive || bridged,
        }
    }

    fn key(&self, view: &SchedView<'_>, j: JobId) -> Key {
        let job = view.job(j);
        Key {
            tier: std::cmp::Reverse(self.conf.partitions[self.partition(view, j)].priority_tier),
            priority: std::cmp::Reverse(self.priority.of(j)),
            submit: job.submit(),
            job: j,
        }
    }

    /// Whether node `n` takes new jobs.
    fn node_up(view: &SchedView<'_>, n: u32) -> bool {
        view.node_states().get(n as usize).is_none_or(|s| *s == NodeState::Up)
    }

    /// Applies what happened since the last pass: jobs that ended give back their nodes;
    /// jobs that entered the queue are seen now, and those seen at an earlier time join
    /// the schedulers' queue. Returns whether any job ended.
    /// The engine does not call a policy while its queue is empty, so ends are also read
    /// from the view (a job of ours it no longer runs), not only from this pass's
    /// [`PassInfo::released`].
    fn sync(&mut self, view: &SchedView<'_>, info: &PassInfo) -> bool {
        let mut ended = false;
        for j in &info.released {
            if self.suspended.contains_key(j) {
                // Released by its suspension; gone only when the engine no longer holds it
                // (its node failed and it was requeued).
                if view.running_job(*j).is_none() {
                    self.drop_suspended(*j);
                }
                continue;
            }
            ended |= self.finish(*j);
        }
        if self.running.len() != view.running_count() {
            let gone: Vec<JobId> = self.running.keys().copied().filter(|&j| view.running_job(j).is_none()).collect();
            for j in gone {
                ended |= self.finish(j);
            }
        }
        let now = view.now();
        let seen_before: Vec<JobId> = std::mem::take(&mut self.arriving);
        for j in seen_before {
            if self.seen[j.idx()] < now {
                self.enqueue(view, j);
            } else {
                self.arriving.push(j);
            }
        }
        self.requeued.clear();
        for &j in &info.queued {
            if self.seen.len() <= j.idx() {
                self.seen.resize(j.idx() + 1, SimTime::MAX);
            }
            if self.seen[j.idx()] != SimTime::MAX {
                self.requeued.insert(j);
            }
            self.seen[j.idx()] = now;
            self.priority.on_submit(view, j, &self.conf);
            if !self.assoc_limits.is_empty() {
                let a = self.priority.assoc(view, j);
                if self.job_assoc.len() <= j.idx() {
                    self.job_assoc.resize(j.idx() + 1, usize::MAX);
                }
                self.job_assoc[j.idx()] = a;
            }
            self.arriving.push(j);
        }
        if self.queue.len() + self.arriving.len() != view.queue().len() {
            self.rebuild_queue(view);
        }
        ended
    }

    /// A running job ended: its nodes come back.
    fn finish(&mut self, j: JobId) -> bool {
        let Some(r) = self.untrack(j) else { return false };
        for h in &r.held {
            self.nodes.give(h);
        }
        self.count_usage(&r, false);
        self.preempting.remove(&j);
        true
    }

    /// `j` runs `run`: listed by expected end, its releases by node (read only by the
    /// backfill scheduler's plans: `sched/builtin` keeps none).
    fn track(&mut self, j: JobId, run: Run) {
        self.ends.insert((run.expected_end, j));
        if self.conf.sched.backfill {
            self.releases.add_job(run.expected_end, j, &run.held);
        }
        self.running.insert(j, run);
    }

    /// `j` no longer runs (it ended or was suspended): what it ran.
    fn untrack(&mut self, j: JobId) -> Option<Run> {
        let run = self.running.remove(&j)?;
        self.ends.remove(&(run.expected_end, j));
        if self.conf.sched.backfill {
            self.releases.remove_job(run.expected_end, j);
        }
        Some(run)
    }

    /// `j` joins the schedulers' queue.
    fn enqueue(&mut self, view: &SchedView<'_>, j: JobId) {
        let k = self.key(view, j);
        if self.queue.insert(k) {
            let p = self.partition(view, j);
            self.part_pending[p] += 1;
        }
    }

    /// `j` leaves the schedulers' queue.
    fn dequeue(&mut self, view: &SchedView<'_>, j: JobId) {
        let k = self.key(view, j);
        if self.queue.remove(&k) {
            let p = self.partition(view, j);
            self.part_pending[p] -= 1;
        }
    }

    /// The queue again from the engine's (after a job left it other than by starting, or
    /// priorities changed).
    fn rebuild_queue(&mut self, view: &SchedView<'_>) {
        self.queue.clear();
        self.arriving.clear();
        self.part_pending.iter_mut().for_each(|c| *c = 0);
        for &j in view.queue() {
            if self.seen.len() <= j.idx() {
                self.seen.resize(j.idx() + 1, SimTime::MAX);
            }
            if self.seen[j.idx()] == SimTime::MAX {
                self.seen[j.idx()] = view.now();
            }
            if self.visible(view, j) {
                self.enqueue(view, j);
            } else {
                self.arriving.push(j);
            }
        }
    }

    fn visible(&self, view: &SchedView<'_>, j: JobId) -> bool {
        self.seen.get(j.idx()).is_some_and(|&t| t < view.now())
    }

    /// The first pending job after `after` in scheduling order.
    fn next_pending(&self, after: Option<Key>) -> Option<Key> {
        use std::ops::Bound::{Excluded, Unbounded};
        match after {
            None => self.queue.first().copied(),
            Some(k) => self.queue.range((Excluded(k), Unbounded)).next().copied(),
        }
    }

    /// Starts `j` on `held`.
    fn start(&mut self, view: &SchedView<'_>, j: JobId, r: &Request, held: Vec<Held>, by: By, out: &mut Vec<Decision>) {
        let mut binding = Binding::with_capacity(if r.gpus == 0 { held.len() } else { 0 });
        for h in &held {
            self.nodes.take(h);
            if r.gpus == 0 {
                // No GPU to name: the node's tasks as one run.
                binding.push_run(TaskBinding { node: sim_core::NodeId(h.node), gpus: Vec::new() }, h.tasks);
                continue;
            }
            let mut gpus = h.gpus;
            for _ in 0..h.tasks {
                let mut mine = Vec::with_capacity(r.gpus as usize);
                for _ in 0..r.gpus {
                    let bit = gpus.trailing_zeros();
                    gpus &= !(1u64 << bit);
                    mine.push(bit as u8);
                }
                binding.push(TaskBinding { node: sim_core::NodeId(h.node), gpus: mine });
            }
        }
        let expected_end = view.now() + self.limit(view, j);
        self.dequeue(view, j);
        self.arriving.retain(|&a| a != j);
        self.preemptors.remove(&j);
        let job = view.job(j);
        let run = Run {
            held,
            expected_end,
            start: view.now(),
            qos: self.conf.qos_of(job.queue()),
            part: self.partition(view, j),
            user: job.user(),
            assoc: self.job_assoc.get(j.idx()).copied().unwrap_or(usize::MAX),
            tres: Self::tres_of(r),
        };
        self.count_usage(&run, true);
        self.track(j, run);
        self.started.push(j);
        let why = match by {
            By::Submit => "at submission: the partition's highest priority, and it fits",
            By::Main => "main scheduler: next in priority order, and it fits",
            By::Backfill => "backfill: it ends before the reservations of the nodes it uses",
            By::Suspending => "preemption: the jobs in its way are suspended (PreemptMode=SUSPEND,GANG)",
        };
        out.push(Decision::Bind { job: j, binding, reason: StartReason::Other { why: why.into() } });
    }

    /// Submissions of this pass: each starts at once if it is its partition's highest
    /// priority pending job and fits (`_top_priority`).
    fn at_submission(&mut self, view: &SchedView<'_>, info: &PassInfo, out: &mut Vec<Decision>) {
        if info.queued.is_empty() {
            return;
        }
        let parts = self.conf.partitions.len();
        let mut top: Vec<Option<Key>> = vec![None; parts];
        // The partitions' first jobs in the queue: scanned only until each partition with
        // pending jobs has been met.
        let mut left = self.part_pending.iter().filter(|&&c| c > 0).count();
        for k in &self.queue {
            if left == 0 {
                break;
            }
            let p = self.partition(view, k.job);
            // `_top_priority` passes over jobs held by a limit.
            if top[p].is_none() && self.limit_reason(view, k.job, &self.request(view, k.job)).is_none() {
                top[p] = Some(*k);
                left -= 1;
            }
        }
        let arriving: BTreeSet<JobId> = info.queued.iter().copied().collect();
        for &j in self.arriving.iter().filter(|j| !arriving.contains(j)) {
            let (p, k) = (self.partition(view, j), self.key(view, j));
            top[p] = Some(top[p].map_or(k, |t| t.min(k)));
        }
        for &j in &info.queued {
            let (p, k) = (self.partition(view, j), self.key(view, j));
            if top[p].is_none_or(|t| k < t) && self.conf.partitions[p].up && !self.requeued.contains(&j) {
                let r = self.request(view, j);
                if self.limit_reason(view, j, &r).is_some() {
                    continue;
                }
                if let Some(held) = self.nodes.place(p, &r, |n| Self::node_up(view, n)) {
                    self.start(view, j, &r, held, By::Submit, out);
                    continue;
                }
                // `select_nodes` at submission preempts too; the job is then in the queue
                // the schedulers see when its victims are gone, or starts at once when
                // they are suspended.
                match self.preempt_for(view, j, p, &r, By::Submit, out) {
                    preempt::Preemption::Waiting => {
                        self.seen[j.idx()] = SimTime(view.now().as_micros().saturating_sub(1));
                    }
                    preempt::Preemption::Started => continue,
                    preempt::Preemption::None => {}
                }
            }
            top[p] = Some(top[p].map_or(k, |t| t.min(k)));
        }
    }

    /// The main scheduler: in order, start what fits; a partition whose job is left
    /// pending starts nothing more. `depth`: jobs tested at most.
    fn main_scheduler(&mut self, view: &SchedView<'_>, depth: usize, out: &mut Vec<Decision>) {
        let mut blocked = vec![false; self.conf.partitions.len()];
        let mut open = self.part_pending.iter().filter(|&&c| c > 0).count();
        let mut at = None;
        for _ in 0..depth {
            if open == 0 {
                break;
            }
            let Some(k) = self.next_pending(at) else { break };
            at = Some(k);
            let p = self.partition(view, k.job);
            if blocked[p] {
                continue;
            }
            let r = self.request(view, k.job);
            // A job held by a limit is passed over; it does not block its partition.
            if let Some(why) = self.limit_reason(view, k.job, &r) {
                if view.logging() {
                    out.push(Decision::Wait { job: k.job, reason: WaitReason::Other { why: why.into() } });
                }
                continue;
            }
            let placed =
                if self.conf.partitions[p].up { self.nodes.place(p, &r, |n| Self::node_up(view, n)) } else { None };
            match placed {
                Some(held) => self.start(view, k.job, &r, held, By::Main, out),
                None => {
                    let preemption = if self.conf.partitions[p].up {
                        self.preempt_for(view, k.job, p, &r, By::Main, out)
                    } else {
                        preempt::Preemption::None
                    };
                    if preemption == preempt::Preemption::Started {
                        continue;
                    }
                    blocked[p] = true;
                    open -= 1;
                    let preempting = preemption == preempt::Preemption::Waiting;
                    if view.logging() {
                        let why = if preempting { "Resources (preempting)" } else { "Resources" };
                        out.push(Decision::Wait { job: k.job, reason: WaitReason::Other { why: why.into() } });
                    }
                }
            }
        }
    }

    /// When the schedulers next need a pass: backfill at its next tick after a change;
    /// the periodic main scheduler after submissions; priorities at their next
    /// recalculation.
    fn plan_wakes(&mut self, now: SimTime, changed: bool, submitted: bool, out: &mut Vec<Decision>) {
        if self.conf.sched.backfill && changed {
            let due = Self::next_tick(now, self.conf.sched.bf_interval);
            self.bf_due = Some(self.bf_due.map_or(due, |d| d.min(due)));
        }
        if submitted || (changed && !self.conf.sched.backfill) {
            let next = Self::next_tick(now, self.conf.sched.sched_interval);
            self.main_due = Some(self.main_due.map_or(next, |d| d.min(next)));
        }
        let recalc = self.priority.next_due();
        for t in [self.bf_due, self.main_due, recalc].into_iter().flatten() {
            if t > now {
                out.push(Decision::WakeAt { at: t });
            }
        }
    }

    /// The next multiple of `every` strictly after `now`.
    fn next_tick(now: SimTime, every: SimDuration) -> SimTime {
        let e = every.as_micros().max(1);
        SimTime((now.as_micros() / e + 1) * e)
    }
}

mod backfill;
mod blocked;

impl Policy for Slurm {
    fn spec(&self) -> String {
        let s = &self.conf.sched;
        let secs = |d: SimDuration| (d.as_micros() / 1_000_000).to_string();
        crate::options::canonical_values(
            "slurm",
            &[
                ("priority", if self.conf.priority.multifactor { "multifactor" } else { "basic" }.to_string()),
                ("backfill", if s.backfill { "on" } else { "off" }.to_string()),
                ("bf_interval", secs(s.bf_interval)),
                ("bf_resolution", secs(s.bf_resolution)),
                ("bf_window", (s.bf_window.as_micros() / 60_000_000).to_string()),
                ("bf_max_job_test", s.bf_max_job_test.to_string()),
                ("sched_interval", secs(s.sched_interval)),
                ("default_queue_depth", s.default_queue_depth.to_string()),
            ],
        )
    }

    fn binds_nodes(&self) -> bool {
        true
    }

    fn schedule(&mut self, view: &SchedView<'_>, info: &PassInfo, out: &mut Vec<Decision>) {
        if self.from_cluster {
            self.adopt_cluster(view);
        }
        self.started.clear();
        let now = view.now();
        let ended = self.sync(view, info);
        if ended && !self.suspended.is_empty() {
            self.resume_suspended(view, out);
        }
        let released = ended || info.resources_released();
        let mut changed = !info.queued.is_empty() || released;
        if self.priority.recalculate_due(now) {
            self.priority.recalculate(view, &self.conf, self.running.keys().copied());
            self.rebuild_queue(view);
            changed = true;
        }
        self.at_submission(view, info, out);
        let periodic = self.main_due.is_some_and(|t| now >= t);
        if released || periodic {
            self.main_due = None;
            let depth = if periodic { usize::MAX } else { self.conf.sched.default_queue_depth as usize };
            self.main_scheduler(view, depth, out);
        }
        if changed {
            // The backfill thread runs on its own clock: a change at one of its ticks is
            // seen by that tick's cycle.
            let tick = Self::next_tick(SimTime(now.as_micros().saturating_sub(1)), self.conf.sched.bf_interval);
            self.bf_due = Some(self.bf_due.map_or(tick, |d| d.min(tick)));
        }
        if self.conf.sched.backfill && self.bf_due.is_some_and(|t| now >= t) {
            self.bf_due = None;
            self.backfill(view, out);
        }
        if view.queue().len() > self.started.len() {
            self.plan_wakes(now, changed, !info.queued.is_empty(), out);
        }
    }

    fn job_priority(&self, job: JobId) -> Option<u64> {
        // Under priority/multifactor: the last value computed (a job's is recalculated
        // while it waits, then kept, as the decay thread does).
        self.conf.priority.multifactor.then(|| self.priority.of(job))
    }

    fn explain_wait(&mut self, view: &SchedView<'_>, job: JobId) -> Option<String> {
        let r = self.request(view, job);
        let p = self.partition(view, job);
        if let Some(why) = self.limit_reason(view, job, &r) {
            return Some(why.to_string());
        }
        Some(if self.nodes.emptied().place(p, &r, |_| true).is_none() {
            format!("PartitionConfig: needs more than partition {} has", self.conf.partitions[p].name)
        } else {
            "Resources".to_string()
        })
    }
}
