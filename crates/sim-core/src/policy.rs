//! The policy boundary: a read-only view in, decisions out.
//!
//! The engine calls [`Policy::schedule`] at every scheduling point with a [`SchedView`]
//! of the queue and the running jobs. The policy pushes [`Decision`]s; the engine checks
//! each one in order against the state left by the ones before it and refuses an
//! invalid one with [`crate::EngineError::InvalidDecision`], which names the policy.

use crate::binding::Binding;
use crate::cluster::Cluster;
use crate::job::{Job, JobId};
pub use crate::job_view::JobView;
use crate::ledger::Ledger;
use crate::time::{SimDuration, SimTime};
use crate::units::{FreePool, UnitSet};
use std::collections::BTreeSet;

/// When the engine calls the policy.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum PassMode {
    /// At each distinct event time: apply every job end, then every node change, then
    /// every arrival, then one pass (Batsim's and most simulators' behaviour).
    #[default]
    PerTime,
    /// One pass after every single event (ends first, equal-time ends in start order).
    PerEvent,
}

/// Why a job was started; written to the decision log. The named reasons are those of the
/// shipped policies, which the log words for them; any policy may give its own words
/// with [`StartReason::Other`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartReason {
    /// It was at the head of the queue and fits now.
    HeadFits,
    /// EASY backfill: by its estimate it ends before the head's reservation (shadow time).
    BackfillEndsBeforeShadow {
        /// The head's reserved start.
        shadow: SimTime,
    },
    /// EASY backfill: it uses only processors the head's reservation leaves over.
    BackfillExtraUnits {
        /// Extra units left after this job.
        extra_left: u64,
    },
    /// EASY with node reservations: a placement exists now that avoids the head's
    /// reserved units until they are needed.
    BackfillPlacementNow,
    /// Its reservation starts now.
    ReservationNow,
    /// A placement (filters and scores) found nodes for it.
    Placed,
    /// The policy's own words.
    Other {
        /// Why, as the decision log should say it.
        why: String,
    },
}

/// Why a job keeps waiting; written to the decision log. As with [`StartReason`], any
/// policy may give its own words ([`WaitReason::Other`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitReason {
    /// The head of the queue does not fit; it is reserved at `at`.
    HeadReserved {
        /// Its reserved start.
        at: SimTime,
        /// Units free now.
        free: u64,
    },
    /// It holds a reservation at `at`.
    Reserved {
        /// Its reserved start.
        at: SimTime,
    },
    /// At the head of the queue, it needs more units than are free (strict FCFS).
    DoesNotFit {
        /// Units free now.
        free: u64,
    },
    /// The policy's own words (kube: the filters that rejected each node, as
    /// kube-scheduler's `FailedScheduling` event words them).
    Other {
        /// The policy's explanation.
        why: String,
    },
}

/// What a policy may ask the engine to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Start a waiting job now. `units: None` lets the engine take the lowest-numbered
    /// free units; `Some` names them (node reservations).
    Start {
        /// The job.
        job: JobId,
        /// Exactly which units, or `None`.
        units: Option<UnitSet>,
        /// Why.
        reason: StartReason,
    },
    /// Start a waiting job on named nodes and GPUs, one [`crate::TaskBinding`] per task
    /// (a Kubernetes Bind; `Vec<TaskBinding>::into()` makes the [`Binding`]). It is
    /// checked against the node [`Ledger`] and takes no units from the free pool.
    Bind {
        /// The job.
        job: JobId,
        /// Where each task goes.
        binding: Binding,
        /// Why.
        reason: StartReason,
    },
    /// Bind some tasks of a waiting job (pod-at-a-time gang scheduling): they take their
    /// resources now and wait; the job starts when all its tasks are held. With a
    /// `timeout` (scheduler-plugins Coscheduling's `scheduleTimeoutSeconds`), a gang not
    /// complete that long after its first hold releases everything.
    Hold {
        /// The job.
        job: JobId,
        /// Where the newly placed tasks go.
        binding: Binding,
        /// Release the partial gang after this long.
        timeout: Option<SimDuration>,
    },
    /// Give back what a waiting job's partial gang holds; it stays in the queue (Kueue's
    /// eviction when `waitForPodsReady` times out).
    Release {
        /// The job.
        job: JobId,
    },
    /// End a waiting job for good without running it (Kueue deactivates a workload that
    /// reached its `backoffLimitCount`): what its tasks hold is given back (the pass then
    /// runs again at this instant, as after a release), it leaves the queue, and its
    /// outcome is `unfinished` with `why` as its reason.
    Withdraw {
        /// The job.
        job: JobId,
        /// Why, in words (the job's `unfinished` reason).
        why: String,
    },
    /// Run a pass at `at` even if nothing else happens then (a policy's own timer).
    WakeAt {
        /// When.
        at: SimTime,
    },
    /// Stop a running job and put it back in the queue (it restarts from the beginning).
    Preempt {
        /// The job.
        job: JobId,
    },
    /// Stop a running job after `grace` and put it back in the queue (it restarts from
    /// the beginning, as a new pod), as [`crate::controller::Action::Evict`] does:
    /// Kubernetes' preemption deletes its victims with their
    /// `terminationGracePeriodSeconds`, and they hold their resources until it ends. With
    /// a grace of 0 it stops at once, as [`Decision::Preempt`] does. A job already being
    /// evicted keeps its first end.
    Evict {
        /// The job.
        job: JobId,
        /// How long it may still run.
        grace: crate::time::SimDuration,
        /// Why (the decision log's words).
        reason: String,
    },
    /// End a running job for good after `grace` (Slurm's preemption with
    /// `PreemptMode=CANCEL`: SIGTERM, then SIGKILL when its `GraceTime` is over): it holds
    /// its resources until then and ends `preempted`. With a grace of 0 it ends at once.
    /// A job already being evicted or cancelled keeps its first end.
    Cancel {
        /// The job.
        job: JobId,
        /// How long it may still run.
        grace: crate::time::SimDuration,
        /// Why (the decision log's words).
        reason: String,
    },
    /// Suspend a running job bound to nodes (Slurm's preemption with
    /// `PreemptMode=SUSPEND,GANG`: SIGTSTP, then SIGSTOP): it stops making progress at
    /// once and lends its CPUs and GPUs to the jobs the policy starts on them, keeping
    /// its memory (its processes stay resident) and its binding. Until it is resumed it
    /// is neither running nor waiting: the view's running lists leave it out,
    /// [`SchedView::running_job`] still gives its binding.
    Suspend {
        /// The job.
        job: JobId,
        /// Why (the decision log's words).
        reason: String,
    },
    /// Resume a suspended job on the CPUs and GPUs it held (they must be free again):
    /// it runs on for the time it had left (Slurm's gang scheduler resuming a job when
    /// its preemptor ends; its time limit does not count the time suspended).
    Resume {
        /// The job.
        job: JobId,
    },
    /// Explain why a job waits (only used for the decision log).
    Wait {
        /// The job.
        job: JobId,
        /// Why.
        reason: WaitReason,
    },
}

/// What happened since the previous pass.
#[derive(Debug, Default)]
pub struct PassInfo {
    /// Jobs that entered the queue (arrived or were requeued), in queue order.
    pub queued: Vec<JobId>,
    /// Jobs that ended (completed, failed, killed) or were requeued, releasing units.
    pub released: Vec<JobId>,
    /// Whether node capacity changed.
    pub capacity_changed: bool,
    /// Whether a pass asked for with [`Decision::WakeAt`] is due.
    pub woken: bool,
}

impl PassInfo {
    /// Whether units were released or capacity changed since the previous pass.
    pub fn resources_released(&self) -> bool {
        !self.released.is_empty() || self.capacity_changed
    }
}

/// A scheduling policy: queue order × backfill × placement, returning decisions.
pub trait Policy: Send {
    /// The canonical spec that rebuilds this policy, e.g. `easy[pass=per-time]`.
    fn spec(&self) -> String;
    /// When it wants to be called.
    fn pass_mode(&self) -> PassMode {
        PassMode::PerTime
    }
    /// Whether its decisions name units (`Decision::Start { units: Some(..) }`) or it reads
    /// [`SchedView::free_pool`]'s units: the engine then tracks which units are free.
    fn places_units(&self) -> bool {
        false
    }
    /// Whether it binds jobs to nodes and GPUs ([`Decision::Bind`], [`Decision::Hold`]):
    /// the engine then keeps the per-node [`Ledger`] (otherwise it is empty, which saves
    /// a record per node on processor machines of 100,000 one-core nodes).
    fn binds_nodes(&self) -> bool {
        false
    }
    /// One scheduling pass: push decisions into `out`.
    fn schedule(&mut self, view: &SchedView<'_>, info: &PassInfo, out: &mut Vec<Decision>);
    /// For the engine's check that a run does not spin: whether the policy says what of
    /// its own state can change what its later passes decide, besides what the engine sees
    /// (the queue, the tasks held, the nodes, pending timers): pushed into `out`, times
    /// relative to `view.now()` (per-job back-off and deadline offsets, counts towards a
    /// retry limit, an order among waiting jobs that is not their queue order). When it says so,
    /// a run with nothing running, nothing left to arrive and only the policy's timers
    /// pending ends as soon as a pass would see a state it saw before
    /// ([`crate::RunResult::stall`]): its retries would see the same cluster again and
    /// again. The default says nothing (`false`), and such a run is never cut short.
    fn retry_state(&self, view: &SchedView<'_>, out: &mut Vec<u64>) -> bool {
        let _ = (view, out);
        false
    }
    /// The priority the policy last gave `job`, for the accounting (Slurm's `Priority` of
    /// `sacct`); `None` when it computes none (its order is another).
    fn job_priority(&self, job: JobId) -> Option<u64> {
        let _ = job;
        None
    }
    /// Why waiting job `job` cannot start in the cluster as `view` shows it: asked once
    /// per job still waiting when a run ends, for its `unfinished` reason. `None`: the
    /// engine's generic reason.
    fn explain_wait(&mut self, view: &SchedView<'_>, job: JobId) -> Option<String> {
        let _ = (view, job);
        None
    }
}

/// A running job's facts, as the view shows them.
#[derive(Clone, Debug)]
pub struct RunningJob {
    /// The job.
    pub job: JobId,
    /// When this attempt started.
    pub start: SimTime,
    /// start + requested time: when its user said it would end at the latest.
    pub requested_end: SimTime,
    /// Its units (empty when the engine counts units without tracking them).
    pub units: UnitSet,
    /// How many units it holds.
    pub count: u64,
    /// Where its tasks are bound (empty for a job started on units).
    pub binding: Binding,
}

impl RunningJob {
    /// The nodes it runs on, in order, once each.
    pub fn nodes(&self, cluster: &Cluster) -> Vec<u32> {
        Self::nodes_of(cluster, &self.units, &self.binding)
    }

    /// Whether it runs on `node`.
    pub fn runs_on(&self, cluster: &Cluster, node: crate::cluster::NodeId) -> bool {
        if !self.binding.is_empty() {
            return self.binding.runs_on(node);
        }
        let Some((spec, first)) = cluster.node(node) else { return false };
        let end = first + u64::from(spec.cores);
        self.units.ranges().iter().any(|&(a, n)| u64::from(a) < end && u64::from(a) + u64::from(n) > first)
    }

    /// The nodes of a binding, or of the units of a job started on units (`binding`
    /// empty), in order, once each.
    pub fn nodes_of(cluster: &Cluster, units: &UnitSet, binding: &Binding) -> Vec<u32> {
        if !binding.is_empty() {
            return binding.nodes();
        }
        // Nodes number their units in order: a range covers every node between the nodes
        // of its ends.
        let node = |u: u32| cluster.node_of_unit(u64::from(u)).map_or(0, |n| n.0);
        let mut nodes: Vec<u32> = units
            .ranges()
            .iter()
            .filter(|r| r.1 > 0)
            .flat_map(|&(first, len)| node(first)..=node(first + len - 1))
            .collect();
        if !nodes.is_sorted_by(|a, b| a < b) {
            nodes.sort_unstable();
            nodes.dedup();
        }
        nodes
    }
}

/// Read-only view of the simulation for a policy.
pub struct SchedView<'a> {
    pub(crate) now: SimTime,
    pub(crate) cluster: &'a Cluster,
    pub(crate) jobs: crate::job_table::Ids<'a, Job>,
    pub(crate) queue: &'a [JobId],
    pub(crate) running: crate::job_table::Ids<'a, Option<RunningJob>>,
    pub(crate) running_by_start: &'a BTreeSet<(u64, JobId)>,
    pub(crate) running_on_nodes: &'a crate::running_on_nodes::RunningOnNodes,
    pub(crate) running_by_requested_end: &'a BTreeSet<(SimTime, u64, JobId, u64)>,
    pub(crate) free: &'a FreePool,
    pub(crate) ledger: &'a Ledger,
    pub(crate) holds: crate::job_table::Ids<'a, Binding>,
    pub(crate) node_state: &'a [crate::cluster::NodeState],
    pub(crate) node_epoch: u64,
    pub(crate) node_domain: &'a [u8],
    pub(crate) node_reclaim: &'a [Option<crate::domain::Reclaim>],
    pub(crate) routes: &'a [crate::domain::Route],
    pub(crate) domain_names: &'a [String],
    /// Set in a domain scheduler's view: the running jobs of the domains it sees.
    pub(crate) scope: Option<u32>,
    pub(crate) capacity: u64,
    pub(crate) walltime_kill: bool,
    pub(crate) logging: bool,
    pub(crate) jobs_left: usize,
}

impl<'a> SchedView<'a> {
    /// Jobs without an outcome yet (not yet submitted, waiting, running or backing off).
    /// A controller that would change the cluster forever (random failures) stops asking
    /// for timers once none is left, so that the run ends.
    pub fn jobs_left(&self) -> usize {
        self.jobs_left
    }

    /// Current time.
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// The cluster.
    pub fn cluster(&self) -> &'a Cluster {
        self.cluster
    }
    /// Units of nodes that are up (schedulable capacity).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Units free now.
    pub fn free_units(&self) -> u64 {
        self.free.count()
    }
    /// The free units themselves (only counted, with no units listed, unless the policy
    /// [`Policy::places_units`] or the run tracks units for another reason).
    pub fn free_pool(&self) -> &'a FreePool {
        self.free
    }
    /// Per-node use by bound jobs (milli-CPU, memory, per-GPU milli and declared memory),
    /// read-only: a policy tries placements on a copy ([`SchedView::scratch_ledger`]).
    pub fn ledger(&self) -> &'a Ledger {
        self.ledger
    }
    /// A copy of the ledger the policy may change while it plans (placing tasks, taking
    /// reservations): nothing it does there reaches the engine, and
    /// [`Ledger::sync_from`] brings a kept copy in line with the next pass's ledger by
    /// copying only the nodes that changed.
    pub fn scratch_ledger(&self) -> Ledger {
        self.ledger.scratch_copy()
    }
    /// The tasks of a waiting job already held (placed, waiting for the rest of the gang).
    pub fn held(&self, id: JobId) -> &'a Binding {
        static NONE: Binding = Binding::new();
        self.holds.get(id.idx()).unwrap_or(&NONE)
    }
    /// Node states, in node-id order. Empty when the policy does not bind nodes and the
    /// run has no node events: every node is up.
    pub fn node_states(&self) -> &'a [crate::cluster::NodeState] {
        self.node_state
    }
    /// A counter bumped at every change of a node's state: while it holds, so do
    /// [`SchedView::node_states`].
    pub fn node_epoch(&self) -> u64 {
        self.node_epoch
    }
    /// A job's actual peak GPU memory per GPU (MiB, 0 unknown). An **oracle**: only
    /// placements declared clairvoyant may use it; the others see the declared memory.
    pub fn gpu_peak_mib(&self, id: JobId) -> u64 {
        self.jobs[id.idx()].task.gpu_peak_mib
    }
    /// A job as a scheduler sees it: its request, without its actual run time or GPU
    /// memory peak (the oracles [`SchedView::oracle_runtime`] and
    /// [`SchedView::gpu_peak_mib`]).
    #[inline]
    pub fn job(&self, id: JobId) -> JobView<'a> {
        JobView::of(self.jobs.at(id.idx()))
    }
    /// Waiting jobs in queue order (arrival order; a requeued job returns to its place).
    pub fn queue(&self) -> &'a [JobId] {
        self.queue
    }
    /// Whether the view shows `j`'s attempt among the running jobs (in a domain
    /// scheduler's view, [`SchedView::scoped`], only its domains' jobs).
    fn shows(&self, j: JobId) -> bool {
        self.scope.is_none_or(|m| crate::domain::in_mask(m, self.jobs[j.idx()].domain))
    }
    /// Running jobs in start order.
    pub fn running(&self) -> impl Iterator<Item = &'a RunningJob> + '_ {
        self.running_by_start.iter().map(move |&(_, j)| self.running.at(j.idx()).as_ref().expect("indexed running job"))
    }
    /// The jobs running on `node`, in start order.
    pub fn jobs_on(&self, node: crate::cluster::NodeId) -> Vec<JobId> {
        match self.running_on_nodes.on(node.0) {
            Some(on) if self.scope.is_none() => on.collect(),
            Some(on) => on.filter(|&j| self.shows(j)).collect(),
            None => self.running().filter(|r| r.runs_on(self.cluster, node)).map(|r| r.job).collect(),
        }
    }
    /// The jobs of every domain running on `node`, in start order: in a domain
    /// scheduler's view, those it does not see too (another domain's pods on a node its
    /// own domain lent away).
    pub fn all_jobs_on(&self, node: crate::cluster::NodeId) -> Vec<JobId> {
        match self.running_on_nodes.on(node.0) {
            Some(on) => on.collect(),
            // Not kept only in runs without domains, where no view is scoped.
            None => self.jobs_on(node),
        }
    }
    /// Number of running jobs.
    pub fn running_count(&self) -> usize {
        self.running_by_start.len()
    }
    /// `(requested end, units)` of running jobs in requested-end order (then start order):
    /// the release profile EASY's shadow time is read from, without touching job records.
    pub fn requested_ends(&self) -> impl Iterator<Item = (SimTime, u64)> + '_ {
        self.running_by_requested_end.iter().map(|k| (k.0, k.3))
    }
    /// The domain that owns `node` (0 in a run without domains, [`crate::domain`]).
    pub fn node_domain(&self, node: crate::cluster::NodeId) -> u8 {
        self.node_domain.get(node.0 as usize).copied().unwrap_or(0)
    }
    /// Whether `node` was lent with its lender's right to take it back by eviction.
    pub fn node_reclaim(&self, node: crate::cluster::NodeId) -> Option<crate::domain::Reclaim> {
        self.node_reclaim.get(node.0 as usize).copied().flatten()
    }
    /// Which scheduler decides domain `d`'s jobs (itself unless an arrangement routed
    /// them elsewhere).
    pub fn route(&self, d: u8) -> crate::domain::Route {
        self.routes.get(d as usize).copied().unwrap_or(crate::domain::Route { scheduler: d, whole_node: false })
    }
    /// How many domains the run has (0: none named).
    pub fn domain_count(&self) -> usize {
        self.domain_names.len()
    }
    /// The index of the domain named `name`.
    pub fn domain_named(&self, name: &str) -> Option<u8> {
        self.domain_names.iter().position(|d| d == name).map(|i| i as u8)
    }
    /// Domain `d`'s name (empty when there is none).
    pub fn domain_name(&self, d: u8) -> &'a str {
        self.domain_names.get(d as usize).map_or("", String::as_str)
    }
    /// This view as one domain's scheduler sees it (`scope`): its part of the queue, the
    /// node states it is shown, the running jobs of the domains it sees (as of its last
    /// [`crate::domain::ViewScope::refresh_running`]). The cluster, ledger, free pool and
    /// time are the run's.
    pub fn scoped<'b>(&'b self, scope: &'b crate::domain::ViewScope) -> SchedView<'b>
    where
        'a: 'b,
    {
        SchedView {
            queue: &scope.queue,
            node_state: &scope.node_state,
            node_epoch: scope.node_epoch,
            scope: Some(scope.domains),
            running_by_start: &scope.by_start,
            running_by_requested_end: &scope.by_requested_end,
            ..*self
        }
    }
    /// A running job's facts (`None` for a job not running, or one a streamed run has
    /// written and forgotten).
    pub fn running_job(&self, id: JobId) -> Option<&'a RunningJob> {
        self.running.get(id.idx()).and_then(Option::as_ref)
    }
    /// The job's requested time limit (trace's request, else its run time, else 0).
    pub fn requested(&self, id: JobId) -> SimDuration {
        let j = &self.jobs[id.idx()];
        j.requested.or(j.runtime).unwrap_or(SimDuration::ZERO)
    }
    /// How long the job will really run once started: its run time, cut at its request
    /// when time limits are enforced. An **oracle**: only clairvoyant policy variants
    /// (`backfill_estimate=actual`, an ideal predictor as in CQSim) may use it.
    pub fn oracle_runtime(&self, id: JobId) -> SimDuration {
        let j = &self.jobs[id.idx()];
        let r = j.runtime.unwrap_or(SimDuration::ZERO);
        if self.walltime_kill { r.min(self.requested(id)) } else { r }
    }
    /// Whether jobs are killed at their requested time.
    pub fn walltime_kill(&self) -> bool {
        self.walltime_kill
    }
    /// Whether a decision log is being written (build [`Decision::Wait`] only then).
    pub fn logging(&self) -> bool {
        self.logging
    }
}
