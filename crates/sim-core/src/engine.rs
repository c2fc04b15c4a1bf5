//! The discrete-event engine.

use crate::cluster::{Cluster, NodeId, NodeState};
use crate::event::{EventClass, EventId, EventQueue};
use crate::job::{Job, JobId, TraceStatus};
use crate::ledger::{Ledger, TaskBinding};
use crate::log::{LogEvent, LogSink};
use crate::outcome::{JobRecord, Outcome, RejectReason};
use crate::policy::{Decision, PassInfo, PassMode, Policy, RunningJob, SchedView, StartReason, WaitReason};
use crate::time::{SimDuration, SimTime, secs_string};
use crate::units::{FreePool, UnitSet};
use std::collections::BTreeSet;

/// The policy's read-only view of engine `$e` (a macro, not a method, so that the
/// policy, another field, can be borrowed mutably beside it).
macro_rules! sched_view {
    ($e:ident) => {
        SchedView {
            now: $e.now,
            cluster: $e.cluster,
            jobs: $e.jobs,
            queue: &$e.queue,
            running: &$e.running,
            running_by_start: &$e.running_by_start,
            running_by_requested_end: &$e.running_by_requested_end,
            free: &$e.free,
            ledger: &$e.ledger,
            holds: &$e.holds,
            node_state: &$e.node_state,
            capacity: $e.capacity,
            walltime_kill: $e.cfg.walltime_kill,
            logging: $e.log.is_some(),
        }
    };
}

/// Passes allowed at one instant while a policy keeps preempting.
pub const MAX_PASSES_PER_INSTANT: u32 = 1000;

/// Run settings.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Kill a job when it reaches its requested time (Slurm's behaviour). Off by default,
    /// as in Batsim and AccaSim replays.
    pub walltime_kill: bool,
    /// Stop at this time: jobs still waiting or running then end `unfinished`.
    pub horizon: Option<SimTime>,
    /// Node state changes to apply (time, node, new state).
    pub node_events: Vec<(SimTime, NodeId, NodeState)>,
    /// Track which units each job holds (reported in [`JobRecord::units`]). On by default;
    /// off, the engine only counts free units, which is faster on large machines. It is
    /// tracked anyway when the policy places units or there are node events.
    pub track_units: bool,
    /// How many times a job killed for running out of GPU memory is requeued before it
    /// ends `oom_killed`. Default 6, Kubernetes Job's `backoffLimit` (Volcano's `maxRetry`
    /// is 3).
    pub oom_retries: u32,
    /// How long after its start a job that will run out of GPU memory reaches its peak
    /// and is killed (at most its run time). A modelling choice, default 120 s: training
    /// jobs allocate the bulk of their memory in the first steps, after loading.
    pub oom_after: SimDuration,
    /// How much slower (per mille) a distributed training job (kind `dl_train`, more
    /// than one task) runs when its tasks sit under more than one leaf switch: its
    /// gradient exchange crosses the spine. 0 by default; e.g. 250 = 25 % longer.
    pub cross_switch_slowdown_permille: u32,
    /// Sample the GPUs' state at every multiple of this interval, from time 0 to the last
    /// event ([`RunResult::gpu_samples`]; the state at a time is the one after the events
    /// at that time); `None` (the default) samples nothing. Only runs of policies that bind
    /// nodes have GPU state to sample.
    pub gpu_sample_every: Option<SimDuration>,
    /// How busy a running job keeps its GPUs when the job does not say
    /// ([`crate::TaskShape::gpu_util_permille`]), per mille. Default 1000 (fully busy):
    /// the board power limit while a job runs, the conservative reading of a trace that
    /// has no utilization.
    pub gpu_util_permille: u16,
}

/// The cluster's GPUs at one moment: what is free, and how much of it is stranded on
/// partly used GPUs, where no whole-GPU task fits (the fragmentation Alibaba's FGD paper
/// measures for its typical one-GPU pod).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuSample {
    /// When.
    pub t: SimTime,
    /// Free milli-GPU over all GPUs.
    pub free_milli: u64,
    /// Of it, free milli-GPU on GPUs partly in use.
    pub stranded_milli: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            walltime_kill: false,
            horizon: None,
            node_events: Vec::new(),
            track_units: true,
            oom_retries: 6,
            oom_after: SimDuration::from_secs(120),
            cross_switch_slowdown_permille: 0,
            gpu_sample_every: None,
            gpu_util_permille: 1000,
        }
    }
}

/// Back-off before an out-of-memory job is re-created: Kubernetes Job's 10 s, 20 s,
/// 40 s, … capped at 6 min.
pub fn oom_backoff(kills: u32) -> SimDuration {
    let secs = 10u64.saturating_mul(1u64 << kills.saturating_sub(1).min(16)).min(360);
    SimDuration::from_secs(secs)
}

/// Errors of a run. All are fatal to the run.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The policy asked for something impossible. Fatal: the policy is wrong.
    #[error("policy {policy} made an invalid decision at t={time}: {what}")]
    InvalidDecision {
        /// The policy's spec.
        policy: String,
        /// When.
        time: SimTime,
        /// What was wrong.
        what: String,
    },
    /// The cluster has more units than the engine can number (2^32).
    #[error("cluster too large: {0} units (at most 4294967295)")]
    ClusterTooLarge(u64),
    /// The policy kept preempting at one instant. Fatal: the policy is wrong.
    #[error("policy {policy} preempted at every pass at t={time} ({MAX_PASSES_PER_INSTANT} passes): livelock")]
    Livelock {
        /// The policy's spec.
        policy: String,
        /// When.
        time: SimTime,
    },
    /// A node has more GPUs than a binding can number (256).
    #[error("node {0} has more than 256 GPUs")]
    TooManyGpus(u32),
    /// A node event names a node that does not exist.
    #[error("node event for node {0}, which the cluster does not have")]
    UnknownNode(u32),
    /// The policy binds jobs to nodes and the cluster has more nodes than the per-node
    /// ledger holds ([`MAX_LEDGER_NODES`]).
    #[error(
        "cluster too large for {policy}: {nodes} nodes, at most {MAX_LEDGER_NODES} when jobs are bound to nodes \
         (a processor machine is one node per processor: use a cluster file with multi-core nodes)"
    )]
    TooManyNodes {
        /// The policy's spec.
        policy: String,
        /// Nodes of the cluster.
        nodes: u64,
    },
    /// Writing the decision log failed. Fatal: the log would be incomplete.
    #[error("writing the decision log: {0}")]
    Log(#[from] std::io::Error),
}

impl EngineError {
    /// Whether the inputs (the cluster, the node events) are at fault rather than the
    /// policy or the output: the run could not start.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            EngineError::ClusterTooLarge(_)
                | EngineError::TooManyGpus(_)
                | EngineError::UnknownNode(_)
                | EngineError::TooManyNodes { .. }
        )
    }
}

/// Most nodes a run whose policy binds jobs to nodes may have: the ledger keeps a record
/// per node (CPU, memory and each GPU's use).
pub const MAX_LEDGER_NODES: u64 = 1 << 24;

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// One record per input job, in input order.
    pub records: Vec<JobRecord>,
    /// Scheduling passes run.
    pub passes: u64,
    /// Events processed (arrivals, ends, node changes).
    pub events: u64,
    /// Longest the queue ever was (at the start of a pass).
    pub max_queue: usize,
    /// Set when the run ended with partial gangs holding resources and nothing left to
    /// happen: hold-and-wait with no way out.
    pub deadlock: Option<Deadlock>,
    /// The GPUs' state over time (see [`SimConfig::gpu_sample_every`]).
    pub gpu_samples: Vec<GpuSample>,
    /// GPU energy figures (see [`GpuEnergy`]).
    pub gpu_energy: GpuEnergy,
}

/// The run's GPU energy, from the GPUs' power curves ([`crate::PowerCurve`]).
///
/// The model (as GPU simulators without a power trace do it): each GPU draws its idle
/// power all the time, and a job adds, on each of its GPUs, the difference between the
/// board power at its utilization and idle, while it runs. A job that shares a GPU
/// (milli-GPU) contributes its share of the utilization; in an exclusive pool it holds the
/// whole GPU. So the run's GPU energy is `idle_power_mw × span + dynamic_mj`, where the
/// span is the report's makespan; a job's energy ([`JobRecord::gpu_energy_mj`]) is its
/// dynamic energy plus its share of its GPUs' idle power. Exact for power linear in
/// utilization, or exclusive GPUs; with curved power and shared GPUs the shares are each
/// job's own utilization's, not the sum's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuEnergy {
    /// GPUs with a power curve (the others count for nothing).
    pub gpus_with_power: u64,
    /// Sum of their idle power, milliwatts.
    pub idle_power_mw: u64,
    /// Energy above idle of every attempt that ran on them (out-of-memory and preempted
    /// attempts included), millijoules.
    pub dynamic_mj: u64,
}

/// A hold-and-wait deadlock of partial gangs, found at the end of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    /// When the last task was placed or job started: nothing progressed after.
    pub since: SimTime,
    /// Gangs holding some of their tasks' resources.
    pub partial_gangs: u32,
    /// GPUs they hold.
    pub gpus_held: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    End(JobId),
    Node(NodeId, NodeState),
    Retry(JobId),
    HoldTimeout(JobId, u32),
    /// A pass the policy asked for.
    Wake,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    NotArrived,
    Waiting,
    Running,
    BackingOff,
    Done,
}

struct JobState {
    phase: Phase,
    start: Option<SimTime>,
    end: Option<SimTime>,
    outcome: Option<Outcome>,
    attempts: u32,
    end_event: Option<EventId>,
    start_seq: u64,
    units: UnitSet,
}

/// What a job placed on nodes and GPUs carries besides [`JobState`] (kept only for
/// policies that bind nodes, so runs on processor units stay small).
#[derive(Default)]
struct BoundState {
    /// This attempt failed its GPU memory allocation.
    oom: bool,
    oom_kills: u32,
    /// Milli-GPU × µs of the attempts killed for running out of memory.
    wasted: u64,
    /// Milli-GPU this attempt holds.
    gpu_milli_held: u64,
    /// GPU energy of its attempts so far, millijoules.
    energy_mj: u64,
    hold: HoldState,
    cross_switch: bool,
    /// Tasks it started with (fewer than its tasks for a short elastic gang).
    started_tasks: u32,
}

/// A gang being held in parts.
#[derive(Default)]
struct HoldState {
    oom: bool,
    first: Option<SimTime>,
    milli: u64,
    since: SimTime,
    acc: u64,
    epoch: u32,
    wait: Option<u64>,
}

impl HoldState {
    /// Milli-GPU × µs held up to `now`.
    fn held_at(&self, now: SimTime) -> u64 {
        self.acc.saturating_add(self.milli.saturating_mul((now - self.since.min(now)).0))
    }

    /// Ends this attempt at a gang at `now` (started or released): its held time is
    /// counted, the next attempt starts afresh. Returns whether it failed its GPU memory
    /// allocation and the milli-GPU it held.
    fn end(&mut self, now: SimTime) -> (bool, u64) {
        self.acc = self.held_at(now);
        let r = (self.oom, self.milli);
        self.oom = false;
        self.first = None;
        self.milli = 0;
        self.epoch += 1;
        r
    }
}

/// Runs `jobs` on `cluster` under `policy`.
///
/// ```
/// use sim_core::{Cluster, Job, SimConfig, SimDuration, SimTime, simulate};
/// use sim_core::policy::{Decision, PassInfo, Policy, SchedView, StartReason};
/// struct Fcfs;
/// impl Policy for Fcfs {
///     fn spec(&self) -> String { "fcfs".into() }
///     fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
///         let mut free = v.free_units();
///         for &j in v.queue() {
///             let need = v.job(j).units();
///             if need > free { break; }
///             free -= need;
///             out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
///         }
///     }
/// }
/// let s = SimDuration::from_secs;
/// let jobs = vec![
///     Job::rigid("1", SimTime::from_secs(0), 3, s(10), s(10)),
///     Job::rigid("2", SimTime::from_secs(1), 2, s(5), s(5)),
/// ];
/// let r = simulate(&Cluster::processor_pool(4), &jobs, &mut Fcfs, &SimConfig::default(), None).unwrap();
/// assert_eq!(r.records[1].start, Some(SimTime::from_secs(10)));
/// ```
pub fn simulate<'a>(
    cluster: &'a Cluster,
    jobs: &'a [Job],
    policy: &'a mut dyn Policy,
    cfg: &'a SimConfig,
    log: Option<&'a mut dyn LogSink>,
) -> Result<RunResult, EngineError> {
    simulate_with(cluster, jobs, policy, cfg, Hooks { log, progress: None })
}

/// Observers of a run: the decision log and a progress callback.
#[derive(Default)]
pub struct Hooks<'a> {
    /// Where decision-log entries go.
    pub log: Option<&'a mut dyn LogSink>,
    /// Called now and then with the number of jobs submitted so far.
    pub progress: Option<&'a mut dyn FnMut(u64)>,
}

/// [`simulate`] with observers.
pub fn simulate_with<'a>(
    cluster: &'a Cluster,
    jobs: &'a [Job],
    policy: &'a mut dyn Policy,
    cfg: &'a SimConfig,
    hooks: Hooks<'a>,
) -> Result<RunResult, EngineError> {
    let mut engine = Engine::new(cluster, jobs, policy, cfg, hooks.log)?;
    engine.progress = hooks.progress;
    engine.run()
}

struct Engine<'a> {
    cluster: &'a Cluster,
    jobs: &'a [Job],
    policy: &'a mut dyn Policy,
    cfg: &'a SimConfig,
    log: Option<&'a mut dyn LogSink>,
    mode: PassMode,
    now: SimTime,
    events: EventQueue<Ev>,
    arrival_order: Vec<JobId>,
    rank: Vec<u32>,
    next_arrival: usize,
    state: Vec<JobState>,
    queue: Vec<JobId>,
    running: Vec<Option<RunningJob>>,
    running_by_start: BTreeSet<(u64, JobId)>,
    running_by_requested_end: BTreeSet<(SimTime, u64, JobId, u64)>,
    free: FreePool,
    total_units: u64,
    capacity: u64,
    allocated: u64,
    node_state: Vec<NodeState>,
    ledger: Ledger,
    /// GPU samples taken, and when the next is due.
    gpu_samples: Vec<GpuSample>,
    next_gpu_sample: SimTime,
    holds: Vec<Vec<TaskBinding>>,
    /// Per job, for policies that bind nodes (empty otherwise).
    bound: Vec<BoundState>,
    nodes_not_up: usize,
    start_seq: u64,
    info: PassInfo,
    decisions: Vec<Decision>,
    passes: u64,
    event_count: u64,
    progress: Option<&'a mut dyn FnMut(u64)>,
    max_queue: usize,
    /// When a job last started or a task was last placed.
    last_progress: SimTime,
    /// Energy above idle of the attempts ended so far, millijoules.
    dynamic_mj: u64,
    /// Whether any GPU has a power curve (else energy accounting is skipped).
    any_power: bool,
}

impl<'a> Engine<'a> {
    fn new(
        cluster: &'a Cluster,
        jobs: &'a [Job],
        policy: &'a mut dyn Policy,
        cfg: &'a SimConfig,
        log: Option<&'a mut dyn LogSink>,
    ) -> Result<Self, EngineError> {
        let total_units = cluster.total_units();
        if total_units > u32::MAX as u64 {
            return Err(EngineError::ClusterTooLarge(total_units));
        }
        let mut arrival_order: Vec<JobId> = (0..jobs.len() as u32).map(JobId).collect();
        arrival_order.sort_by_key(|j| jobs[j.idx()].submit); // stable: ties keep input order
        let mut rank = vec![0u32; jobs.len()];
        for (r, j) in arrival_order.iter().enumerate() {
            rank[j.idx()] = r as u32;
        }
        let mut events = EventQueue::new();
        let node_count = cluster.node_count();
        for &(t, node, st) in &cfg.node_events {
            if node.0 >= node_count {
                return Err(EngineError::UnknownNode(node.0));
            }
            events.schedule(t, EventClass::NodeChange, Ev::Node(node, st));
        }
        if let Some((n, _, _)) = cluster.nodes().find(|(_, s, _)| s.gpus.len() > 256) {
            return Err(EngineError::TooManyGpus(n.0));
        }
        let mode = policy.pass_mode();
        let binds = policy.binds_nodes();
        if binds && node_count as u64 > MAX_LEDGER_NODES {
            return Err(EngineError::TooManyNodes { policy: policy.spec(), nodes: node_count as u64 });
        }
        // Node states are kept only where something reads or changes them: a counted
        // processor machine of 2^32 one-processor nodes needs no per-node record.
        let node_states = binds || !cfg.node_events.is_empty();
        let track = cfg.track_units || policy.places_units() || !cfg.node_events.is_empty();
        Ok(Engine {
            cluster,
            jobs,
            policy,
            cfg,
            log,
            mode,
            now: SimTime::ZERO,
            events,
            arrival_order,
            rank,
            next_arrival: 0,
            state: jobs
                .iter()
                .map(|_| JobState {
                    phase: Phase::NotArrived,
                    start: None,
                    end: None,
                    outcome: None,
                    attempts: 0,
                    end_event: None,
                    start_seq: 0,
                    units: UnitSet::new(),
                })
                .collect(),
            bound: if binds { jobs.iter().map(|_| BoundState::default()).collect() } else { Vec::new() },
            queue: Vec::new(),
            running: vec![None; jobs.len()],
            running_by_start: BTreeSet::new(),
            running_by_requested_end: BTreeSet::new(),
            free: if track { FreePool::all_free(total_units as u32) } else { FreePool::counted(total_units as u32) },
            total_units,
            capacity: total_units,
            allocated: 0,
            node_state: if node_states { vec![NodeState::Up; node_count as usize] } else { Vec::new() },
            ledger: if binds { Ledger::new(cluster) } else { Ledger::empty() },
            gpu_samples: Vec::new(),
            next_gpu_sample: SimTime::ZERO,
            holds: if binds { vec![Vec::new(); jobs.len()] } else { Vec::new() },
            nodes_not_up: 0,
            start_seq: 0,
            info: PassInfo::default(),
            decisions: Vec::new(),
            passes: 0,
            event_count: 0,
            progress: None,
            max_queue: 0,
            last_progress: SimTime::ZERO,
            dynamic_mj: 0,
            any_power: cluster.pools.iter().any(|p| p.spec.gpus.iter().any(|g| g.power.is_some())),
        })
    }

    /// Whether some node has GPUs of a model `job` accepts (any model when it names none,
    /// or when it asks for no GPUs). Names are compared exactly: the run's loader maps a
    /// trace's names onto the cluster's.
    fn has_gpu_model_for(&self, job: &Job) -> bool {
        job.task.gpus == 0
            || job.gpu_models.is_empty()
            || self.cluster.pools.iter().any(|p| p.spec.gpus.first().is_some_and(|g| job.gpu_models.contains(&g.model)))
    }

    fn next_arrival_time(&self) -> Option<SimTime> {
        self.arrival_order.get(self.next_arrival).map(|j| self.jobs[j.idx()].submit)
    }

    fn run(mut self) -> Result<RunResult, EngineError> {
        loop {
            let heap_t = self.events.peek_key().map(|k| k.time);
            let arr_t = self.next_arrival_time();
            let t = match (heap_t, arr_t) {
                (None, None) => break,
                (Some(a), None) | (None, Some(a)) => a,
                (Some(a), Some(b)) => a.min(b),
            };
            if self.cfg.horizon.is_some_and(|h| t > h) {
                break;
            }
            self.sample_gpus_before(t);
            self.now = t;
            match self.mode {
                PassMode::PerTime => {
                    while self.events.peek_key().is_some_and(|k| k.time == t) {
                        let (_, ev) = self.events.pop().expect("peeked");
                        self.apply_event(ev)?;
                    }
                    while self.next_arrival_time() == Some(t) {
                        self.apply_arrival()?;
                    }
                    self.pass()?;
                }
                PassMode::PerEvent => {
                    if heap_t == Some(t) {
                        let (_, ev) = self.events.pop().expect("peeked");
                        self.apply_event(ev)?;
                    } else {
                        self.apply_arrival()?;
                    }
                    self.pass()?;
                }
            }
        }
        self.finish()
    }

    /// Samples the GPUs at every sample time before `t`, the time of the next events: the
    /// state then is the current one (events change it only at their times).
    fn sample_gpus_before(&mut self, t: SimTime) {
        let Some(every) = self.cfg.gpu_sample_every else { return };
        if every.0 == 0 || self.ledger.nodes().is_empty() {
            return;
        }
        if self.event_count == 0 {
            // Sampling starts at the first grid time at or after the first event.
            self.next_gpu_sample = SimTime(t.0.div_ceil(every.0).saturating_mul(every.0));
            return;
        }
        if self.next_gpu_sample >= t {
            return;
        }
        let (mut free, mut stranded) = (0u64, 0u64);
        for n in self.ledger.nodes() {
            for g in n.gpus.iter() {
                free += g.milli_left as u64;
                if g.milli_left > 0 && g.milli_left < crate::ledger::MILLI {
                    stranded += g.milli_left as u64;
                }
            }
        }
        while self.next_gpu_sample < t {
            self.gpu_samples.push(GpuSample { t: self.next_gpu_sample, free_milli: free, stranded_milli: stranded });
            self.next_gpu_sample = SimTime(self.next_gpu_sample.0.saturating_add(every.0));
        }
    }

    fn apply_event(&mut self, ev: Ev) -> Result<(), EngineError> {
        self.event_count += 1;
        match ev {
            Ev::End(j) => self.end_job(j),
            Ev::Node(n, st) => self.node_change(n, st),
            Ev::HoldTimeout(j, epoch) => {
                if self.state[j.idx()].phase == Phase::Waiting && self.bound[j.idx()].hold.epoch == epoch {
                    self.release_holds(
                        j,
                        Some(|| "gang incomplete at its permit timeout: released its held tasks".into()),
                    )?;
                }
                Ok(())
            }
            Ev::Wake => {
                self.info.woken = true;
                Ok(())
            }
            Ev::Retry(j) => {
                let st = &mut self.state[j.idx()];
                st.phase = Phase::Waiting;
                self.enqueue(j);
                Ok(())
            }
        }
    }

    fn apply_arrival(&mut self) -> Result<(), EngineError> {
        self.event_count += 1;
        let j = self.arrival_order[self.next_arrival];
        self.next_arrival += 1;
        if self.next_arrival % 4096 == 0
            && let Some(p) = self.progress.as_deref_mut()
        {
            p(self.next_arrival as u64);
        }
        let job = &self.jobs[j.idx()];
        let reject = if job.units() == 0 {
            Some(RejectReason::NoProcessors)
        } else if job.runtime.is_none() {
            Some(RejectReason::MissingRuntime)
        } else if job.runtime == Some(SimDuration::ZERO) {
            Some(RejectReason::ZeroRuntime)
        } else if job.units() > self.total_units {
            Some(RejectReason::LargerThanMachine)
        } else if !self.bound.is_empty() && !self.has_gpu_model_for(job) {
            Some(RejectReason::NoMatchingGpuModel)
        } else {
            None
        };
        let st = &mut self.state[j.idx()];
        if let Some(reason) = reject {
            st.phase = Phase::Done;
            st.outcome = Some(Outcome::Rejected(reason));
            if let Some(log) = self.log.as_deref_mut() {
                log.record(self.now, &LogEvent::Reject { job: &job.trace_id, reason: reason.as_str() })?;
            }
            return Ok(());
        }
        st.phase = Phase::Waiting;
        self.enqueue(j);
        if let Some(log) = self.log.as_deref_mut() {
            let requested = job.requested.or(job.runtime).unwrap_or_default();
            log.record(
                self.now,
                &LogEvent::Arrival { job: &job.trace_id, units: job.units(), requested: secs_string(requested.0) },
            )?;
        }
        Ok(())
    }

    /// Puts a job in the queue at its arrival-order place.
    fn enqueue(&mut self, j: JobId) {
        let r = self.rank[j.idx()];
        if self.queue.last().is_none_or(|l| self.rank[l.idx()] < r) {
            self.queue.push(j);
        } else {
            let at = self.queue.partition_point(|q| self.rank[q.idx()] < r);
            self.queue.insert(at, j);
        }
        self.info.queued.push(j);
    }

    fn requested(&self, j: JobId) -> SimDuration {
        let job = &self.jobs[j.idx()];
        job.requested.or(job.runtime).unwrap_or_default()
    }

    fn start_job(&mut self, j: JobId, units: Option<UnitSet>, reason: StartReason) -> Result<(), EngineError> {
        let need = self.jobs[j.idx()].units();
        if self.state[j.idx()].phase != Phase::Waiting {
            return Err(self.invalid(format!("start of job {} which is not waiting", self.jobs[j.idx()].trace_id)));
        }
        let set = match units {
            None => match self.free.take_lowest(need) {
                Some(s) => s,
                None => {
                    return Err(self.invalid(format!(
                        "start of job {} needing {} units with {} free",
                        self.jobs[j.idx()].trace_id,
                        need,
                        self.free.count()
                    )));
                }
            },
            Some(s) => {
                if s.len() != need {
                    return Err(self.invalid(format!(
                        "job {} needs {} units, decision gives {}",
                        self.jobs[j.idx()].trace_id,
                        need,
                        s.len()
                    )));
                }
                if !self.free.take(&s) {
                    return Err(self.invalid(format!(
                        "job {} placed on units {} that are not all free",
                        self.jobs[j.idx()].trace_id,
                        s.to_interval_string()
                    )));
                }
                s
            }
        };
        self.allocated += need;
        self.launch(j, set, Vec::new(), need, false, reason)?;
        debug_assert!(self.allocated + self.free.count() <= self.total_units, "units over-allocated");
        Ok(())
    }

    /// Holds some tasks of a waiting job, checked against the ledger; starts it once all
    /// its tasks (an elastic job's minimum) are held, and decides then whether this
    /// attempt runs out of GPU memory. `complete`: the binding must start it (a `Bind`).
    fn hold_tasks(
        &mut self,
        j: JobId,
        new: Vec<TaskBinding>,
        timeout: Option<SimDuration>,
        complete: bool,
        reason: StartReason,
    ) -> Result<(), EngineError> {
        let job = &self.jobs[j.idx()];
        if self.holds.is_empty() {
            return Err(self.invalid(format!(
                "binding of job {}: the policy binds nodes but does not say so (Policy::binds_nodes)",
                job.trace_id
            )));
        }
        if self.state[j.idx()].phase != Phase::Waiting {
            return Err(self.invalid(format!("start of job {} which is not waiting", job.trace_id)));
        }
        let have = self.holds[j.idx()].len();
        let need = job.needed_tasks() as usize;
        if have + new.len() > job.tasks as usize || (complete && have + new.len() < need) {
            return Err(self.invalid(format!(
                "job {} has {} tasks ({} held), binding names {}",
                job.trace_id,
                job.tasks,
                have,
                new.len()
            )));
        }
        // Peaks count in the GPUs' sums unless the gang already failed its allocation.
        let was_oom = self.bound[j.idx()].hold.oom;
        let mut oom = was_oom;
        for (k, b) in new.iter().enumerate() {
            let state = self.node_state.get(b.node.0 as usize).copied();
            let err = if state != Some(NodeState::Up) {
                Some(format!("node {} is not up", b.node.0))
            } else {
                oom |= self.ledger.runs_out_of_memory(&job.task, b);
                self.ledger.take(&job.task, &job.gpu_models, b, !was_oom).err().map(|e| e.to_string())
            };
            if let Some(e) = err {
                for prev in &new[..k] {
                    self.ledger.give(&job.task, prev, !was_oom);
                }
                return Err(self.invalid(format!("binding of job {}: {e}", job.trace_id)));
            }
        }
        if let Some(c) = job.constraints.as_deref().filter(|c| !c.labels.is_empty()) {
            let labels = std::sync::Arc::new(c.labels.clone());
            for b in &new {
                self.ledger.label_pod(b.node, j.0, labels.clone());
            }
        }
        if oom && !was_oom {
            // The gang's allocation failed: none of its peaks count in the sums.
            for b in self.holds[j.idx()].iter().chain(&new) {
                self.ledger.uncount_peak(&job.task, b);
            }
        }
        let milli: u64 =
            new.iter().map(|b| b.gpus.len() as u64 * self.ledger.node(b.node).milli_taken(&job.task) as u64).sum();
        let now = self.now;
        let h = &mut self.bound[j.idx()].hold;
        h.acc = h.held_at(now);
        h.since = now;
        h.milli += milli;
        h.oom = oom;
        let first_hold = h.first.is_none();
        h.first.get_or_insert(now);
        let epoch = h.epoch;
        if let Some(log) = self.log.as_deref_mut() {
            let held = (self.holds[j.idx()].len() + new.len()) as u32;
            if (held as usize) < need {
                log.record(
                    now,
                    &LogEvent::Hold { job: &job.trace_id, units: describe_binding(&new), held, tasks: job.tasks },
                )?;
            }
        }
        self.holds[j.idx()].extend(new);
        self.last_progress = now;
        if self.holds[j.idx()].len() < need {
            if first_hold && let Some(t) = timeout {
                self.events.schedule(now + t, EventClass::JobArrival, Ev::HoldTimeout(j, epoch));
            }
            return Ok(());
        }
        let binding = std::mem::take(&mut self.holds[j.idx()]);
        let h = &mut self.bound[j.idx()].hold;
        h.wait = h.first.map(|f| (now - f).0);
        let (oom, held) = h.end(now);
        self.start_bound(j, binding, oom, held, reason)
    }

    /// Gives back the tasks a waiting job holds, if any, and logs why (`reason`) as a requeue.
    fn release_holds(&mut self, j: JobId, reason: Option<impl FnOnce() -> String>) -> Result<(), EngineError> {
        if self.holds.get(j.idx()).is_none_or(|h| h.is_empty()) {
            return Ok(());
        }
        let job = &self.jobs[j.idx()];
        let (oom, _) = self.bound[j.idx()].hold.end(self.now);
        for b in std::mem::take(&mut self.holds[j.idx()]) {
            self.ledger.give(&job.task, &b, !oom);
            self.ledger.unlabel_pod(b.node, j.0);
        }
        self.info.released.push(j);
        if let (Some(log), Some(reason)) = (self.log.as_deref_mut(), reason) {
            log.record(self.now, &LogEvent::Requeue { job: &job.trace_id, reason: reason() })?;
        }
        Ok(())
    }

    fn bind_job(&mut self, j: JobId, binding: Vec<TaskBinding>, reason: StartReason) -> Result<(), EngineError> {
        self.hold_tasks(j, binding, None, true, reason)
    }

    /// Starts a job whose tasks all hold their resources.
    fn start_bound(
        &mut self,
        j: JobId,
        binding: Vec<TaskBinding>,
        oom: bool,
        held: u64,
        reason: StartReason,
    ) -> Result<(), EngineError> {
        let job = &self.jobs[j.idx()];
        let cross = job.kind == crate::job::JobKind::DlTrain && job.tasks > 1 && {
            let switch = |b: &TaskBinding| self.ledger.node(b.node).meta.topology.switch.as_ref();
            binding.iter().any(|b| switch(b) != switch(&binding[0]))
        };
        let b = &mut self.bound[j.idx()];
        b.cross_switch = cross;
        b.started_tasks = binding.len() as u32;
        b.oom = oom;
        b.gpu_milli_held = held;
        self.launch(j, UnitSet::new(), binding, 0, oom, reason)
    }

    /// Starts a job on `set` (units) or `binding` (nodes and GPUs), the other empty.
    fn launch(
        &mut self,
        j: JobId,
        set: UnitSet,
        binding: Vec<TaskBinding>,
        need: u64,
        oom: bool,
        reason: StartReason,
    ) -> Result<(), EngineError> {
        let job = &self.jobs[j.idx()];
        let requested = self.requested(j);
        let runtime = self.effective_runtime(j);
        let mut run = if self.cfg.walltime_kill { runtime.min(requested) } else { runtime };
        if oom {
            run = run.min(self.cfg.oom_after);
        }
        let seq = self.start_seq;
        self.start_seq += 1;
        let end_event = self.events.schedule(self.now + run, EventClass::JobEnd, Ev::End(j));
        self.last_progress = self.now;
        let st = &mut self.state[j.idx()];
        st.phase = Phase::Running;
        st.start = Some(self.now);
        st.end = None;
        st.attempts += 1;
        st.end_event = Some(end_event);
        st.start_seq = seq;
        let requested_end = self.now + requested;
        self.running_by_start.insert((seq, j));
        self.running_by_requested_end.insert((requested_end, seq, j, need));
        if let Some(log) = self.log.as_deref_mut() {
            let units = if binding.is_empty() { set.to_interval_string() } else { describe_binding(&binding) };
            log.record(self.now, &LogEvent::Start { job: &job.trace_id, units, reason: describe_start(reason) })?;
        }
        self.running[j.idx()] =
            Some(RunningJob { job: j, start: self.now, requested_end, units: set, count: need, binding });
        Ok(())
    }

    /// The job's run time in this attempt: longer for distributed training spread over
    /// several leaf switches.
    fn effective_runtime(&self, j: JobId) -> SimDuration {
        let job = &self.jobs[j.idx()];
        let mut r = job.runtime.unwrap_or_default();
        let Some(b) = self.bound.get(j.idx()) else { return r };
        let started = b.started_tasks;
        if started > 0 && started < job.tasks {
            // An elastic gang started short: its work is shared by fewer workers.
            r = SimDuration((r.0 as u128 * job.tasks as u128).div_ceil(started as u128).min(u64::MAX as u128) as u64);
        }
        if b.cross_switch && self.cfg.cross_switch_slowdown_permille > 0 {
            let p = self.cfg.cross_switch_slowdown_permille as u128;
            SimDuration((r.0 as u128 * (1000 + p) / 1000).min(u64::MAX as u128) as u64)
        } else {
            r
        }
    }

    /// Adds the GPU energy of an attempt that ends now ([`GpuEnergy`]'s model).
    #[inline(never)]
    fn account_energy(&mut self, j: JobId, r: &RunningJob) {
        let task = &self.jobs[j.idx()].task;
        let util = if task.gpu_util_permille > 0 { task.gpu_util_permille } else { self.cfg.gpu_util_permille };
        let us = (self.now - r.start).0 as u128;
        let (mut total, mut dynamic) = (0u128, 0u128);
        for b in &r.binding {
            let Some(pool) = self.cluster.pool_of(b.node) else { continue };
            let share = if pool.sharing == crate::cluster::GpuSharing::Exclusive { 1000 } else { task.gpu_milli() };
            for &g in &b.gpus {
                let Some(curve) = pool.spec.gpus.get(g as usize).and_then(|g| g.power.as_ref()) else { continue };
                let load = u32::from(util).min(1000) * share / 1000;
                let above = curve.at_permille(load).saturating_sub(curve.idle_mw()) as u128;
                dynamic += above * us;
                total += (above + curve.idle_mw() as u128 * share as u128 / 1000) * us;
            }
        }
        // milliwatt × microsecond = 1e-6 millijoule.
        let mj = |x: u128| (x / 1_000_000).min(u64::MAX as u128) as u64;
        self.dynamic_mj = self.dynamic_mj.saturating_add(mj(dynamic));
        if let Some(b) = self.bound.get_mut(j.idx()) {
            b.energy_mj = b.energy_mj.saturating_add(mj(total));
        }
    }

    /// Takes a running job off its units; returns them to the pool where their node is up.
    fn release(&mut self, j: JobId) -> RunningJob {
        let r = self.running[j.idx()].take().expect("releasing a running job");
        if self.any_power && !r.binding.is_empty() {
            self.account_energy(j, &r);
        }
        let job = &self.jobs[j.idx()];
        for b in &r.binding {
            self.ledger.give(&job.task, b, !self.bound[j.idx()].oom);
            self.ledger.unlabel_pod(b.node, j.0);
        }
        let seq = self.state[j.idx()].start_seq;
        self.running_by_start.remove(&(seq, j));
        self.running_by_requested_end.remove(&(r.requested_end, seq, j, r.count));
        self.allocated -= r.count;
        if self.free.is_counted() {
            self.free.give_count(r.count);
        }
        for &(a, n) in r.units.ranges() {
            if self.nodes_not_up == 0 {
                self.free.give(a, n);
            } else {
                for u in a..a + n {
                    let node = self.cluster.node_of_unit(u as u64).expect("unit of the cluster");
                    if self.node_state[node.0 as usize] == NodeState::Up {
                        self.free.give(u, 1);
                    }
                }
            }
        }
        self.info.released.push(j);
        r
    }

    fn end_job(&mut self, j: JobId) -> Result<(), EngineError> {
        // `release` reads the flag to leave the failed allocation's peak out of the sums.
        let oom = self.bound.get(j.idx()).is_some_and(|b| b.oom);
        let r = self.release(j);
        let job = &self.jobs[j.idx()];
        if oom {
            let b = &mut self.bound[j.idx()];
            b.oom = false;
            b.oom_kills += 1;
            b.wasted = b.wasted.saturating_add(b.gpu_milli_held.saturating_mul((self.now - r.start).0));
            let kills = b.oom_kills;
            let st = &mut self.state[j.idx()];
            st.end_event = None;
            if let Some(log) = self.log.as_deref_mut() {
                log.record(self.now, &LogEvent::End { job: &job.trace_id, outcome: Outcome::OomKilled.name() })?;
            }
            if kills <= self.cfg.oom_retries {
                st.phase = Phase::BackingOff;
                st.start = None;
                let at = self.now + oom_backoff(kills);
                self.events.schedule(at, EventClass::JobArrival, Ev::Retry(j));
                if let Some(log) = self.log.as_deref_mut() {
                    log.record(
                        self.now,
                        &LogEvent::Requeue {
                            job: &job.trace_id,
                            reason: format!("out of GPU memory; retried at {}", secs_string(at.0)),
                        },
                    )?;
                }
            } else {
                st.units = r.units;
                st.phase = Phase::Done;
                st.end = Some(self.now);
                st.outcome = Some(Outcome::OomKilled);
            }
            return Ok(());
        }
        let requested = self.requested(j);
        let runtime = self.effective_runtime(j);
        let outcome = if self.cfg.walltime_kill && runtime > requested {
            Outcome::Killed
        } else if job.trace_status == TraceStatus::Failed {
            Outcome::Failed
        } else {
            Outcome::Completed
        };
        let st = &mut self.state[j.idx()];
        debug_assert_eq!(st.start, Some(r.start));
        st.units = r.units;
        st.phase = Phase::Done;
        st.end = Some(self.now);
        st.outcome = Some(outcome);
        st.end_event = None;
        if let Some(log) = self.log.as_deref_mut() {
            log.record(self.now, &LogEvent::End { job: &job.trace_id, outcome: outcome.name() })?;
        }
        Ok(())
    }

    fn requeue(&mut self, j: JobId, why: String) -> Result<(), EngineError> {
        if let Some(id) = self.state[j.idx()].end_event.take() {
            self.events.cancel(id);
        }
        self.release(j);
        let st = &mut self.state[j.idx()];
        st.phase = Phase::Waiting;
        st.start = None;
        if let Some(b) = self.bound.get_mut(j.idx()) {
            b.oom = false;
        }
        self.enqueue(j);
        if let Some(log) = self.log.as_deref_mut() {
            log.record(self.now, &LogEvent::Requeue { job: &self.jobs[j.idx()].trace_id, reason: why })?;
        }
        Ok(())
    }

    fn node_change(&mut self, node: NodeId, to: NodeState) -> Result<(), EngineError> {
        let from = self.node_state[node.0 as usize];
        if from == to {
            return Ok(());
        }
        let (spec, first) = self.cluster.node(node).expect("checked at start");
        let (first, cores) = (first as u32, spec.cores);
        if to == NodeState::Down {
            let victims: Vec<JobId> = self
                .running_by_start
                .iter()
                .map(|&(_, j)| j)
                .filter(|j| {
                    // A bound job has its tasks' nodes, a job on units its units.
                    let r = self.running[j.idx()].as_ref().expect("running");
                    r.binding.iter().any(|t| t.node == node) || (first..first + cores).any(|u| r.units.contains(u))
                })
                .collect();
            let holders: Vec<JobId> = self
                .queue
                .iter()
                .copied()
                .filter(|j| self.holds.get(j.idx()).is_some_and(|h| h.iter().any(|t| t.node == node)))
                .collect();
            for j in holders {
                self.release_holds(j, None::<fn() -> String>)?;
            }
            // Mark first so the victims' units on this node do not return to the pool.
            self.node_state[node.0 as usize] = to;
            self.nodes_not_up += usize::from(from == NodeState::Up);
            for j in victims {
                self.requeue(j, format!("node {} down", node.0))?;
            }
        } else {
            self.node_state[node.0 as usize] = to;
            if from == NodeState::Up {
                self.nodes_not_up += 1;
            }
            if to == NodeState::Up {
                self.nodes_not_up -= 1;
            }
        }
        if from == NodeState::Up {
            for u in first..first + cores {
                if self.free.contains(u) {
                    self.free.take(&UnitSet::range(u, 1));
                }
            }
            self.capacity -= cores as u64;
        } else if to == NodeState::Up {
            for u in first..first + cores {
                let held = self
                    .running_by_start
                    .iter()
                    .any(|&(_, j)| self.running[j.idx()].as_ref().is_some_and(|r| r.units.contains(u)));
                if !held {
                    self.free.give(u, 1);
                }
            }
            self.capacity += cores as u64;
        }
        self.info.capacity_changed = true;
        if let Some(log) = self.log.as_deref_mut() {
            let state = match to {
                NodeState::Up => "up",
                NodeState::Draining => "draining",
                NodeState::Down => "down",
            };
            log.record(self.now, &LogEvent::Node { node: node.0, state })?;
        }
        Ok(())
    }

    fn invalid(&self, what: String) -> EngineError {
        EngineError::InvalidDecision { policy: self.policy.spec(), time: self.now, what }
    }

    /// One scheduling pass; repeated at the same instant while the policy preempts, so the
    /// units it freed are used at once (as Slurm's preemption does).
    fn pass(&mut self) -> Result<(), EngineError> {
        for _ in 0..MAX_PASSES_PER_INSTANT {
            if !self.pass_once()? {
                return Ok(());
            }
        }
        Err(EngineError::Livelock { policy: self.policy.spec(), time: self.now })
    }

    /// Returns whether the policy preempted anything.
    fn pass_once(&mut self) -> Result<bool, EngineError> {
        if self.queue.is_empty() {
            self.info = PassInfo::default();
            return Ok(false);
        }
        self.passes += 1;
        self.max_queue = self.max_queue.max(self.queue.len());
        let mut preempted = false;
        let mut decisions = std::mem::take(&mut self.decisions);
        decisions.clear();
        {
            let view = sched_view!(self);
            self.policy.schedule(&view, &self.info, &mut decisions);
        }
        self.info = PassInfo::default();
        let mut started = false;
        for d in decisions.drain(..) {
            match d {
                Decision::Start { job, units, reason } => {
                    if job.idx() >= self.jobs.len() {
                        return Err(self.invalid(format!("unknown job index {}", job.0)));
                    }
                    self.start_job(job, units, reason)?;
                    started = true;
                }
                Decision::Bind { job, binding, reason } => {
                    if job.idx() >= self.jobs.len() {
                        return Err(self.invalid(format!("unknown job index {}", job.0)));
                    }
                    self.bind_job(job, binding, reason)?;
                    started = true;
                }
                Decision::Hold { job, binding, timeout } => {
                    if job.idx() >= self.jobs.len() {
                        return Err(self.invalid(format!("unknown job index {}", job.0)));
                    }
                    self.hold_tasks(job, binding, timeout, false, StartReason::Placed)?;
                    started = true;
                }
                Decision::Release { job } => {
                    if job.idx() >= self.jobs.len() || self.state[job.idx()].phase != Phase::Waiting {
                        return Err(self.invalid(format!("release of job index {} which is not waiting", job.0)));
                    }
                    let spec = self.policy.spec();
                    self.release_holds(job, Some(|| format!("{spec} released its held tasks")))?;
                }
                Decision::WakeAt { at } => {
                    if at > self.now {
                        self.events.schedule(at, EventClass::JobArrival, Ev::Wake);
                    }
                }
                Decision::Preempt { job } => {
                    if job.idx() >= self.jobs.len() || self.state[job.idx()].phase != Phase::Running {
                        return Err(self.invalid(format!("preemption of job index {} which is not running", job.0)));
                    }
                    self.requeue(job, format!("preempted by {}", self.policy.spec()))?;
                    preempted = true;
                }
                Decision::Wait { job, reason } => {
                    if let Some(log) = self.log.as_deref_mut()
                        && let Some(j) = self.jobs.get(job.idx())
                    {
                        let reserved_at = match reason {
                            WaitReason::HeadReserved { at, .. } | WaitReason::Reserved { at } => {
                                Some(secs_string(at.0))
                            }
                            WaitReason::DoesNotFit { .. } | WaitReason::Unschedulable { .. } => None,
                        };
                        log.record(
                            self.now,
                            &LogEvent::Wait { job: &j.trace_id, reason: describe_wait(reason), reserved_at },
                        )?;
                    }
                }
            }
        }
        self.decisions = decisions;
        if started {
            let state = &self.state;
            self.queue.retain(|j| state[j.idx()].phase == Phase::Waiting);
        }
        Ok(preempted)
    }

    /// Why each job without an outcome did not end, in job order: `(index, reason)`.
    /// Waiting jobs are explained by the policy ([`Policy::explain_wait`]) when it can.
    fn unfinished_reasons(&mut self) -> Vec<(usize, Box<str>)> {
        // Events or arrivals left: the horizon stopped the run, not a lack of anything to do.
        let at_horizon = self.events.peek_key().is_some() || self.next_arrival_time().is_some();
        let mut out = Vec::new();
        for i in 0..self.state.len() {
            if self.state[i].outcome.is_some() {
                continue;
            }
            let j = JobId(i as u32);
            let why = match self.state[i].phase {
                Phase::Running => "running at the horizon".to_string(),
                Phase::NotArrived => "not submitted by the horizon".to_string(),
                Phase::BackingOff => "backing off before a retry at the horizon".to_string(),
                Phase::Waiting | Phase::Done => {
                    let job = &self.jobs[i];
                    let held = self.holds.get(i).map_or(0, Vec::len);
                    let why = if held > 0 {
                        format!("gang incomplete: {held} of its {} tasks held", job.needed_tasks())
                    } else {
                        let view = sched_view!(self);
                        self.policy.explain_wait(&view, j).unwrap_or_else(|| {
                            format!("never started: {} units asked, {} up", job.units(), self.capacity)
                        })
                    };
                    if at_horizon { format!("waiting at the horizon: {why}") } else { why }
                }
            };
            out.push((i, why.into_boxed_str()));
        }
        out
    }

    fn finish(mut self) -> Result<RunResult, EngineError> {
        let now = self.now;
        // Jobs still running at the end (horizon) used energy up to now.
        let accounted = if self.any_power { self.running.len() } else { 0 };
        for i in 0..accounted {
            if let Some(r) = self.running[i].take() {
                self.account_energy(JobId(i as u32), &r);
                self.running[i] = Some(r);
            }
        }
        let mut gpu_energy = GpuEnergy { dynamic_mj: self.dynamic_mj, ..GpuEnergy::default() };
        for (_, spec, _) in self.cluster.nodes() {
            for g in spec.gpus.iter().filter_map(|g| g.power.as_ref()) {
                gpu_energy.gpus_with_power += 1;
                gpu_energy.idle_power_mw += g.idle_mw();
            }
        }
        let mut unfinished = self.unfinished_reasons().into_iter().peekable();
        let records = self
            .state
            .iter_mut()
            .enumerate()
            .map(|(i, st)| {
                let outcome = st.outcome.unwrap_or(Outcome::Unfinished);
                let unfinished_reason = unfinished.next_if(|(j, _)| *j == i).map(|(_, r)| r);
                let units = match self.running.get_mut(i).and_then(Option::take) {
                    Some(r) => r.units,
                    None => std::mem::take(&mut st.units),
                };
                let b = self.bound.get(i);
                JobRecord {
                    start: st.start,
                    end: st.end,
                    outcome,
                    attempts: st.attempts,
                    units,
                    oom_kills: b.map_or(0, |b| b.oom_kills),
                    wasted_gpu_milli_us: b.map_or(0, |b| b.wasted),
                    gpu_milli_held: b.map_or(0, |b| b.gpu_milli_held),
                    gpu_energy_mj: b.map_or(0, |b| b.energy_mj),
                    gang_held_gpu_milli_us: b.map_or(0, |b| b.hold.held_at(now)),
                    gang_wait_us: b.and_then(|b| b.hold.wait),
                    stuck_holding: self.holds.get(i).is_some_and(|h| !h.is_empty()),
                    unfinished_reason,
                }
            })
            .collect();
        // Nothing is left to happen (the run stops when its events run out, never spins),
        // so partial gangs still holding resources at the end can never complete.
        let partial: Vec<usize> = (0..self.holds.len()).filter(|&i| !self.holds[i].is_empty()).collect();
        let deadlock = (!partial.is_empty() && self.events.peek_key().is_none() && self.next_arrival_time().is_none())
            .then(|| Deadlock {
                since: self.last_progress,
                partial_gangs: partial.len() as u32,
                gpus_held: partial
                    .iter()
                    .map(|&i| self.holds[i].iter().map(|b| b.gpus.len() as u64).sum::<u64>())
                    .sum(),
            });
        Ok(RunResult {
            records,
            passes: self.passes,
            events: self.event_count,
            max_queue: self.max_queue,
            deadlock,
            gpu_samples: std::mem::take(&mut self.gpu_samples),
            gpu_energy,
        })
    }
}

fn describe_binding(binding: &[TaskBinding]) -> String {
    binding
        .iter()
        .map(|b| {
            let gpus: Vec<String> = b.gpus.iter().map(|g| g.to_string()).collect();
            if gpus.is_empty() {
                format!("node {}", b.node.0)
            } else {
                format!("node {} gpu {}", b.node.0, gpus.join("+"))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_start(r: StartReason) -> String {
    match r {
        StartReason::HeadFits => "head of the queue fits".into(),
        StartReason::BackfillEndsBeforeShadow { shadow } => {
            format!("backfilled: ends by its estimate before the head's reservation at {}", secs_string(shadow.0))
        }
        StartReason::BackfillExtraUnits { extra_left } => {
            format!("backfilled: uses only units the head's reservation leaves over ({extra_left} extra left)")
        }
        StartReason::BackfillPlacementNow => "backfilled: a placement now avoids the head's reserved nodes".into(),
        StartReason::ReservationNow => "its reservation starts now".into(),
        StartReason::Placed => "placed: it passed the filters and this node scored best".into(),
    }
}

fn describe_wait(r: WaitReason) -> String {
    match r {
        WaitReason::HeadReserved { at, free } => {
            format!("head of the queue does not fit ({free} units free); reserved at {}", secs_string(at.0))
        }
        WaitReason::Reserved { at } => format!("reserved at {}", secs_string(at.0)),
        WaitReason::DoesNotFit { free } => {
            format!("head of the queue does not fit ({free} units free)")
        }
        WaitReason::Unschedulable { why } => why,
    }
}
