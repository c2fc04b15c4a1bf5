//! The discrete-event engine.
//!
//! ## Ordering contract
//!
//! Time is an integer number of microseconds ([`SimTime`]). Everything that happens is
//! totally ordered by (time, event class, sequence number); nothing depends on hash order
//! or threads. At each instant `t` the run loop (`run_loop.rs`):
//!
//! 1. lets the observers see the state before `t`: the GPU sampler records every grid
//!    time before `t` (`sampling.rs`); the energy meter sees each attempt as it ends
//!    (`energy.rs`). Observers hold no mutable reference into the engine: they cannot
//!    change a schedule;
//! 2. applies the queued events due at `t`, by class, then in the order they were
//!    scheduled (their sequence number):
//!    * class 0, [`crate::event::EventClass::JobEnd`]: a running attempt ends — completed, failed (as
//!      the trace says), killed at its time limit (`walltime_kill`), or killed for running
//!      out of GPU memory (with restart policy OnFailure its pod keeps its binding); an
//!      eviction's grace period ends (`Evict`) or a pod's toleration of a NoExecute taint
//!      runs out (`TaintEvict`): the job is requeued; ends come first so what they free is
//!      seen by everything after;
//!    * class 1, [`crate::event::EventClass::Controller`]: a controller's timer
//!      ([`crate::controller::Action::WakeAt`]) — among them the node events given as
//!      input (the `node-events` controller: a node goes down — held tasks released, its
//!      jobs requeued, or under the Kubernetes node lifecycle stalled until evicted —
//!      drains or comes up) and the node lifecycle controller tainting a node that has
//!      been down for the grace period — and the actions it returns, applied at once (a
//!      NoExecute taint evicts the pods that do not tolerate it there and then);
//!    * class 2, [`crate::event::EventClass::JobArrival`]: a job re-enters the queue after its
//!      out-of-memory back-off (`Retry`, Kubernetes Job's 10 s doubling to 6 min); a
//!      container killed in place restarts after the kubelet's CrashLoopBackOff
//!      (`Restart`, at once, then 10 s doubling to 5 min); a partial gang reaches its
//!      permit timeout and releases its tasks (`HoldTimeout`); a pass a policy asked for
//!      ([`crate::policy::Decision::WakeAt`]) is due (`Wake`);
//! 3. submits the jobs whose submission time is `t`, in input order (a job is rejected
//!    at once when it can never run: no processors, no or zero run time, larger than the
//!    machine, GPU models no node has under a policy that binds GPUs);
//! 4. delivers to the controllers what they observed (arrivals, ends, killed attempts,
//!    node changes), in the order it happened, and applies their actions;
//! 5. runs a scheduling pass when the queue is not empty: the policy sees a read-only
//!    view and returns decisions, applied one by one in the order returned, each checked
//!    (an invalid one stops the run with [`EngineError::InvalidDecision`]); the pass is
//!    repeated at `t` while the policy preempts (at most [`MAX_PASSES_PER_INSTANT`]);
//! 6. delivers what the pass made happen (starts) to the controllers; when their
//!    actions changed anything, steps 4–6 run again at `t` (at most
//!    [`MAX_CONTROL_ROUNDS`] times).
//!
//! A policy with [`crate::policy::PassMode::PerEvent`] gets steps 2–3 one event (or
//! arrival) at a time, each followed by steps 4–6. A run ends when no event or arrival is
//! left, at the horizon, or when it would spin: nothing runs, nothing is left to arrive,
//! only the policy's timers are pending and a pass would see a state it saw before
//! (`stall.rs`, [`RunResult::stall`]); every job then has exactly one outcome
//! ([`RunResult`]).
//!
//! ## Parts
//!
//! * `run_loop.rs` — the loop above, arrivals and the pass;
//! * `capacity.rs` — processor units and node states (a node going down under the
//!   Kubernetes node lifecycle stalls its pods);
//! * `gangs.rs` — binding jobs to nodes and GPUs, gangs held in parts;
//! * `job_control.rs` — starting, ending, out-of-memory kills, checkpoints, requeues;
//! * `restarts.rs` — restarts in place (restart policy OnFailure, a node back);
//! * `taints.rs` — NoExecute taints and the evictions they schedule;
//! * `control.rs` — controllers: starting them, their timers, observations, actions;
//! * `energy.rs`, `sampling.rs` — the observers;
//! * `records.rs` — the records and figures of a finished run;
//! * `stall.rs` — the check that ends a run whose policy would retry for ever;
//! * `config.rs`, `describe.rs` — settings and errors, the decision log's words.

/// The policy's read-only view of engine `$e` (a macro, not a method, so that the
/// policy, another field, can be borrowed mutably beside it).
macro_rules! sched_view {
    ($e:ident) => {
        $crate::policy::SchedView {
            now: $e.now,
            cluster: $e.cluster,
            jobs: $e.jobs.all(),
            queue: &$e.queue,
            running: $e.running.view(),
            running_by_start: &$e.running_by_start,
            running_on_nodes: &$e.running_on_nodes,
            running_by_requested_end: &$e.running_by_requested_end,
            free: &$e.free,
            ledger: &$e.ledger,
            holds: $e.holds.view(),
            node_state: &$e.node_state,
            node_epoch: $e.node_epoch,
            node_domain: &$e.domains.owner,
            node_reclaim: &$e.domains.reclaim,
            routes: &$e.domains.routes,
            domain_names: &$e.cfg.domains,
            scope: None,
            capacity: $e.capacity,
            walltime_kill: $e.cfg.walltime_kill,
            logging: $e.log.is_some(),
            // A withdrawn or held job (unfinished for good) is not left to run.
            jobs_left: $e.state.end() + $e.unread() - $e.ended - $e.withdrawn.len(),
        }
    };
}

mod capacity;
mod config;
mod control;
mod describe;
mod energy;
mod fits;
mod gangs;
mod job_control;
mod records;
mod restarts;
mod run_loop;
mod sampling;
mod stall;
mod stream;
mod taints;

pub use config::{
    CRASH_LOOP_RESET, EngineError, MAX_LEDGER_NODES, MAX_PASSES_PER_INSTANT, NODE_MONITOR_GRACE,
    NODE_MONITOR_GRACE_V1_31, NodeLifecycle, SimConfig, crash_loop_backoff, oom_backoff,
};
pub use control::MAX_CONTROL_ROUNDS;
pub use energy::GpuEnergy;
pub use records::{Deadlock, RunResult, Stall};
pub use sampling::{Fragmentation, GpuSample, WholeGpuPod};
pub use stream::{JobSource, RecordSink};

use crate::binding::Binding;
use crate::cluster::{Cluster, NodeState};
use crate::controller::{Controller, Interests, JobRetry, NodeEvents, NodeLifecycleController, Observed};
use crate::event::EventQueue;
use crate::job::{Job, JobId, JobStore};
use crate::job_table::JobTable;
use crate::ledger::Ledger;
use crate::log::LogSink;
use crate::policy::{Decision, PassInfo, PassMode, Policy, RunningJob};
use crate::time::SimTime;
use crate::units::FreePool;
use gangs::BoundState;
use job_control::{JobState, Phase};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    End(JobId),
    Retry(JobId),
    HoldTimeout(JobId, u32),
    /// A pass the policy asked for.
    Wake,
    /// Controller `i`'s timer.
    Timer(u32),
    /// The grace period of an eviction of this attempt of the job is over.
    Evict(JobId, u32),
    /// The toleration of a NoExecute taint is over (the eviction's token).
    TaintEvict(JobId, u64),
    /// The kubelet's CrashLoopBackOff of this attempt of a job killed in place is over.
    Restart(JobId, u32),
}

/// A job whose attempt was killed, waiting for a controller's decision.
enum Killed {
    /// Its pod failed (restart policy Never): its resources are free; the units that
    /// attempt held.
    Released(crate::units::UnitSet),
    /// Its container was killed in place (OnFailure): its pod keeps its binding.
    InPlace,
    /// Killed in place, then requeued or restarted (an eviction, its node back) at the
    /// same instant, before the controller answered: the answer changes nothing.
    Moot,
}

/// A pending eviction by a tolerated NoExecute taint.
struct TaintEviction {
    /// When it was first scheduled (a later change of taints does not move it).
    since: SimTime,
    /// Its event's token.
    token: u64,
    /// Why (the decision log's words).
    reason: String,
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
    simulate_with(
        cluster,
        jobs,
        policy,
        cfg,
        Hooks { log, progress: None, controllers: Vec::new(), fragmentation: None },
    )
}

/// Observers of a run: the decision log and a progress callback.
#[derive(Default)]
pub struct Hooks<'a> {
    /// Where decision-log entries go.
    pub log: Option<&'a mut dyn LogSink>,
    /// Called now and then with the number of jobs submitted so far.
    pub progress: Option<&'a mut dyn FnMut(u64)>,
    /// Controllers to attach, in order, after the built-in ones ([`NodeEvents`] for
    /// [`SimConfig::node_events`], [`NodeLifecycleController`] under
    /// [`NodeLifecycle::Kubernetes`], then [`JobRetry`]).
    pub controllers: Vec<Box<dyn Controller + 'a>>,
    /// How the GPU samples ([`SimConfig::gpu_sample_every`]) measure fragmentation;
    /// `None`: [`WholeGpuPod`].
    pub fragmentation: Option<Box<dyn Fragmentation + 'a>>,
}

/// [`simulate`] with observers.
pub fn simulate_with<'a>(
    cluster: &'a Cluster,
    jobs: &'a [Job],
    policy: &'a mut dyn Policy,
    cfg: &'a SimConfig,
    hooks: Hooks<'a>,
) -> Result<RunResult, EngineError> {
    let mut engine = Engine::new(cluster, jobs, policy, cfg, hooks.log, hooks.controllers)?;
    engine.progress = hooks.progress;
    if let Some(measure) = hooks.fragmentation {
        engine.sampler = sampling::GpuSampler::new(cfg.gpu_sample_every, Some(measure));
    }
    engine.start_controllers()?;
    engine.run()
}

/// [`simulate_with`] on jobs read from `source` as simulated time reaches their
/// submission (in submission order: an input out of order stops the run with
/// [`EngineError::Unsorted`]), each record given to `sink` once the job is done, in input
/// order but for long runs the run kept aside (`stream.rs`). Memory follows the jobs in
/// the system, not the input. The records are those [`simulate_with`] gives on the same jobs (then
/// [`RunResult::records`] is empty); jobs controllers submit take the next ids among the
/// input's and are recorded in that order ([`RunResult::submitted`] is empty).
pub fn simulate_stream<'a>(
    cluster: &'a Cluster,
    source: &'a mut dyn JobSource,
    sink: &'a mut dyn RecordSink,
    policy: &'a mut dyn Policy,
    cfg: &'a SimConfig,
    hooks: Hooks<'a>,
) -> Result<RunResult, EngineError> {
    simulate_stream_in(cluster, (source, sink, stream::WINDOW), policy, cfg, hooks)
}

/// [`simulate_stream`] with a window of `window` ids (tests: a small window keeps jobs
/// aside all the time).
#[doc(hidden)]
pub fn simulate_stream_in<'a>(
    cluster: &'a Cluster,
    (source, sink, window): (&'a mut dyn JobSource, &'a mut dyn RecordSink, usize),
    policy: &'a mut dyn Policy,
    cfg: &'a SimConfig,
    hooks: Hooks<'a>,
) -> Result<RunResult, EngineError> {
    let mut engine = Engine::new(cluster, &[], policy, cfg, hooks.log, hooks.controllers)?;
    engine.progress = hooks.progress;
    if let Some(measure) = hooks.fragmentation {
        engine.sampler = sampling::GpuSampler::new(cfg.gpu_sample_every, Some(measure));
    }
    engine.jobs = JobStore::streamed();
    engine.stream = Some(stream::Stream { source, sink, next: None, read: 0, last_submit: SimTime::ZERO, window });
    engine.read_ahead()?;
    engine.start_controllers()?;
    engine.run()
}

struct Engine<'a> {
    cluster: &'a Cluster,
    jobs: JobStore<'a>,
    policy: &'a mut dyn Policy,
    cfg: &'a SimConfig,
    log: Option<&'a mut dyn LogSink>,
    mode: PassMode,
    now: SimTime,
    events: EventQueue<Ev>,
    arrival_order: Vec<JobId>,
    rank: JobTable<u32>,
    next_arrival: usize,
    /// When the next arrival is due (kept as arrivals are taken: the loop asks often).
    next_at: Option<SimTime>,
    state: JobTable<JobState>,
    queue: Vec<JobId>,
    running: JobTable<Option<RunningJob>>,
    running_by_start: BTreeSet<(u64, JobId)>,
    /// The same jobs by node (kept where nodes may change).
    running_on_nodes: crate::running_on_nodes::RunningOnNodes,
    running_by_requested_end: BTreeSet<(SimTime, u64, JobId, u64)>,
    free: FreePool,
    total_units: u64,
    capacity: u64,
    allocated: u64,
    node_state: Vec<NodeState>,
    /// Bumped at every change of a node's state.
    node_epoch: u64,
    ledger: Ledger,
    /// The GPU fragmentation observer.
    sampler: sampling::GpuSampler<'a>,
    holds: JobTable<Binding>,
    /// Per job, for policies that bind nodes (empty otherwise).
    bound: JobTable<BoundState>,
    /// Whether the policy binds nodes (`holds` and `bound` are kept).
    binds: bool,
    nodes_not_up: usize,
    start_seq: u64,
    info: PassInfo,
    decisions: Vec<Decision>,
    /// The jobs a pass's decisions may have taken out of the queue (kept for its buffer).
    leaving: Vec<JobId>,
    passes: u64,
    event_count: u64,
    progress: Option<&'a mut dyn FnMut(u64)>,
    max_queue: usize,
    /// Jobs a policy withdrew ([`crate::policy::Decision::Withdraw`]), with its reason.
    withdrawn: BTreeMap<JobId, Box<str>>,
    /// A streamed run's input and output (`None`: the whole input is held).
    stream: Option<stream::Stream<'a>>,
    /// A streamed run's jobs done since its records were last written, in that order.
    done: Vec<JobId>,
    /// The spin check's states seen since the run became quiet (`stall.rs`).
    quiet: stall::QuietStates,
    /// The GPU energy observer.
    energy: energy::EnergyMeter,
    /// Controllers, built-in ones first.
    controllers: Vec<Box<dyn Controller + 'a>>,
    /// What any of them wants to observe, and what was observed and not yet delivered.
    interests: Interests,
    observed: Vec<Observed>,
    /// Jobs whose attempt was killed, waiting for a controller's decision.
    killed: BTreeMap<JobId, Killed>,
    /// Pending evictions by tolerated NoExecute taints, by job, and the last token given.
    taint_evictions: BTreeMap<JobId, TaintEviction>,
    taint_tokens: u64,
    /// Whether a node that goes down keeps its pods bound until evicted (Kubernetes'
    /// node lifecycle, [`NodeLifecycle::Kubernetes`]) rather than requeuing them at once.
    kube_nodes: bool,
    /// Evictions in their grace period: why, and what kind of interruption (the policy's
    /// preemption, a controller's eviction), by job.
    evicting: BTreeMap<JobId, (String, crate::outcome::Interruption)>,
    /// Of those, the ones that end for good (`Decision::Cancel`) instead of requeueing.
    cancelling: BTreeSet<JobId>,
    /// Suspended jobs (`Decision::Suspend`) and the run time each has left.
    suspended: BTreeMap<JobId, crate::time::SimDuration>,
    /// Jobs with an outcome (when all have one, nothing is left to explain at the end).
    ended: usize,
    /// Progress saved by checkpoints, for the jobs that have any.
    saved: BTreeMap<JobId, job_control::Saved>,
    /// Under periodic checkpoints, each running attempt's interval.
    checkpoint_tau: BTreeMap<JobId, crate::time::SimDuration>,
    /// Running jobs that stopped making progress (their node failed), since when.
    stalled_at: BTreeMap<JobId, SimTime>,
    /// Time lost by the jobs that lost any, by cause.
    lost: BTreeMap<JobId, crate::outcome::LostTime>,
    /// Jobs interrupted and not started again yet, since when.
    interrupted_at: BTreeMap<JobId, SimTime>,
    /// Interruptions counted toward the restart limit ([`SimConfig::restarts`]), per job.
    restarts_counted: BTreeMap<JobId, u32>,
    /// The scheduling domains' nodes and routes.
    domains: crate::domain::DomainState,
}

impl<'a> Engine<'a> {
    fn new(
        cluster: &'a Cluster,
        jobs: &'a [Job],
        policy: &'a mut dyn Policy,
        cfg: &'a SimConfig,
        log: Option<&'a mut dyn LogSink>,
        attached: Vec<Box<dyn Controller + 'a>>,
    ) -> Result<Self, EngineError> {
        let total_units = cluster.total_units();
        let node_count = cluster.node_count();
        let binds = policy.binds_nodes();
        check_sizes(cluster, cfg, &*policy, binds)?;
        let (arrival_order, rank) = arrival_order(jobs);
        let next_at = arrival_order.first().map(|j| jobs[j.idx()].submit);
        let events = EventQueue::new();
        // Anything that may change nodes: node events given as input, or controllers.
        // Autoscaled pools' nodes past their initial size leave at once.
        let mut node_events: Vec<_> =
            cluster.initially_absent().map(|n| (SimTime::ZERO, n, NodeState::Absent)).collect();
        node_events.extend(cfg.node_events.iter().copied());
        let dynamic = !node_events.is_empty() || !attached.is_empty();
        // Domain schedulers ask for the jobs on a node of every domain.
        let index_nodes = dynamic || !cfg.domains.is_empty();
        let kube_nodes = binds && cfg.node_lifecycle != NodeLifecycle::Requeue;
        let controllers = built_in_controllers(cfg, node_events, kube_nodes && dynamic, attached);
        let interests = controllers.iter().map(|c| c.interests()).fold(Interests::default(), Interests::union);
        let mode = policy.pass_mode();
        // Node states are kept only where something reads or changes them: a counted
        // processor machine of 2^32 one-processor nodes needs no per-node record.
        let node_states = binds || dynamic;
        let track = cfg.track_units || policy.places_units() || dynamic;
        Ok(Engine {
            cluster,
            jobs: JobStore::new(jobs),
            policy,
            cfg,
            log,
            mode,
            now: SimTime::ZERO,
            events,
            arrival_order,
            rank: JobTable::from_vec(rank),
            next_arrival: 0,
            next_at,
            state: JobTable::from_vec(jobs.iter().map(|_| JobState::new()).collect()),
            bound: JobTable::from_vec(if binds {
                jobs.iter().map(|_| BoundState::default()).collect()
            } else {
                Vec::new()
            }),
            binds,
            queue: Vec::new(),
            running: JobTable::from_vec(vec![None; jobs.len()]),
            running_by_start: BTreeSet::new(),
            running_on_nodes: crate::running_on_nodes::RunningOnNodes::new(node_count as usize, index_nodes),
            running_by_requested_end: BTreeSet::new(),
            free: if track { FreePool::all_free(total_units as u32) } else { FreePool::counted(total_units as u32) },
            total_units,
            capacity: total_units,
            allocated: 0,
            node_state: if node_states { vec![NodeState::Up; node_count as usize] } else { Vec::new() },
            node_epoch: 0,
            ledger: if binds { Ledger::new(cluster) } else { Ledger::empty() },
            sampler: sampling::GpuSampler::new(cfg.gpu_sample_every, None),
            holds: JobTable::from_vec(if binds { vec![Binding::new(); jobs.len()] } else { Vec::new() }),
            nodes_not_up: 0,
            start_seq: 0,
            info: PassInfo::default(),
            decisions: Vec::new(),
            leaving: Vec::new(),
            passes: 0,
            event_count: 0,
            progress: None,
            max_queue: 0,
            withdrawn: BTreeMap::new(),
            stream: None,
            done: Vec::new(),
            quiet: stall::QuietStates::default(),
            energy: energy::EnergyMeter::new(cluster, jobs.len(), binds, cfg.gpu_util_permille),
            controllers,
            interests,
            observed: Vec::new(),
            killed: BTreeMap::new(),
            taint_evictions: BTreeMap::new(),
            taint_tokens: 0,
            kube_nodes,
            evicting: BTreeMap::new(),
            cancelling: BTreeSet::new(),
            suspended: BTreeMap::new(),
            saved: BTreeMap::new(),
            checkpoint_tau: BTreeMap::new(),
            stalled_at: BTreeMap::new(),
            lost: BTreeMap::new(),
            interrupted_at: BTreeMap::new(),
            restarts_counted: BTreeMap::new(),
            ended: 0,
            domains: crate::domain::DomainState::new(cfg.domains.len(), &cfg.node_domains, node_count),
        })
    }

    fn invalid(&self, what: String) -> EngineError {
        EngineError::InvalidDecision { policy: self.policy.spec(), time: self.now, what }
    }
}

/// The run's controllers: the built-in ones ([`NodeEvents`] for `node_events`, the
/// node lifecycle controller when `lifecycle`, [`JobRetry`]), then `attached`.
fn built_in_controllers<'a>(
    cfg: &SimConfig,
    node_events: Vec<(SimTime, crate::cluster::NodeId, NodeState)>,
    lifecycle: bool,
    attached: Vec<Box<dyn Controller + 'a>>,
) -> Vec<Box<dyn Controller + 'a>> {
    let mut controllers: Vec<Box<dyn Controller + 'a>> = Vec::new();
    if !node_events.is_empty() {
        controllers.push(Box::new(NodeEvents::new(node_events)));
    }
    if lifecycle {
        controllers.push(Box::new(NodeLifecycleController::new(cfg.node_monitor_grace)));
    }
    controllers.push(Box::new(JobRetry { retries: cfg.oom_retries }));
    controllers.extend(attached);
    controllers
}

/// Refuses a run the engine cannot hold: more units than it numbers, a node of more
/// GPUs than a binding numbers, a node event for a node that does not exist, more nodes
/// than the ledger holds for a policy that binds nodes.
fn check_sizes(cluster: &Cluster, cfg: &SimConfig, policy: &dyn Policy, binds: bool) -> Result<(), EngineError> {
    let total_units = cluster.total_units();
    if total_units > u32::MAX as u64 {
        return Err(EngineError::ClusterTooLarge(total_units));
    }
    let node_count = cluster.node_count();
    if let Some(&(_, node, _)) = cfg.node_events.iter().find(|e| e.1.0 >= node_count) {
        return Err(EngineError::UnknownNode(node.0));
    }
    if let Some((n, _, _)) = cluster.nodes().find(|(_, s, _)| s.gpus.len() > 256) {
        return Err(EngineError::TooManyGpus(n.0));
    }
    if cfg.domains.len() > crate::domain::MAX_DOMAINS {
        return Err(EngineError::TooManyDomains(cfg.domains.len()));
    }
    if let Some(&d) = cfg.node_domains.iter().find(|&&d| d as usize >= cfg.domains.len()) {
        return Err(EngineError::TooManyDomains(d as usize + 1));
    }
    if binds && node_count as u64 > MAX_LEDGER_NODES {
        return Err(EngineError::TooManyNodes { policy: policy.spec(), nodes: node_count as u64 });
    }
    Ok(())
}

/// The jobs in submission order (ties in input order) and each job's place in it.
fn arrival_order(jobs: &[Job]) -> (Vec<JobId>, Vec<u32>) {
    let mut order: Vec<JobId> = (0..jobs.len() as u32).map(JobId).collect();
    order.sort_by_key(|j| jobs[j.idx()].submit); // stable: ties keep input order
    let mut rank = vec![0u32; jobs.len()];
    for (r, j) in order.iter().enumerate() {
        rank[j.idx()] = r as u32;
    }
    (order, rank)
}
