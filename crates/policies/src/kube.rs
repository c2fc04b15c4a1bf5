//! Kubernetes-style scheduling: pods one at a time through the placement framework.

use crate::coscheduling::Coscheduling;
use crate::gang_options::GangOptions;
use crate::kueue::KueueAdmission;
use crate::options::Estimate;
use crate::options::{Chosen, OptionInfo, canonical_values};
use crate::placement::frag::{FragMeter, PodType, TypicalPods};
use crate::placement::{MemoryFit, NodesToScore, PLACEMENTS, PlaceCx, Placement, PodReq, RELEASES, Release};
use crate::profile::overrun_clamp;
use crate::sjf_aging::aged_priority;
use crate::spec::{PolicyError, PolicySpec};
use sim_core::Binding;
use sim_core::NodeState;
use sim_core::job::JobId;
use sim_core::ledger::Ledger;
use sim_core::ledger::TaskBinding;
use sim_core::policy::{Decision, JobView, PassInfo, Policy, SchedView, StartReason, WaitReason};
use sim_core::rng::{RngStreams, SimRng};
use sim_core::{SimDuration, SimTime};
use std::collections::BTreeMap;
use std::ops::ControlFlow;

mod gangs;
mod preemption;
mod queue_block;
mod sched_queue;

pub use preemption::{DEFAULT_GRACE_SECS, num_candidates};
use preemption::{Preemption, RunningByNode};
pub use sched_queue::{Outcome as QueueOutcome, PodFacts, QueueConfig, SchedQueue};

/// `score=...`: the placement (filters + score + GPU choice).
pub const SCORE: OptionInfo = OptionInfo {
    key: "score",
    values: PLACEMENTS,
    doc: "the placement's score plugins: least-allocated: kube-scheduler's default profile, NodeResourcesFit \
          LeastAllocated (CPU, memory) + NodeResourcesBalancedAllocation, weight 1 each, in integers as upstream; \
          most-allocated: the same with the MostAllocated strategy (packs); balanced: BalancedAllocation alone; \
          the FGD paper's random, dotprod, gpuclustering, gpupacking, bestfit, fgd (weight 1000). Every one adds \
          TaintToleration, NodeAffinity, InterPodAffinity and PodTopologySpread at the k8s release's weights; \
          ImageLocality is not modelled (no images: the same score on every node)",
};

/// `k8s=current|1.23|1.20`: the kube-scheduler release whose scoring is modelled.
pub const K8S: OptionInfo = OptionInfo {
    key: "k8s",
    values: RELEASES,
    doc: "the kube-scheduler release whose scoring and scheduling queue are modelled: current (v1.37): \
          TaintToleration 3, NodeAffinity 2, \
          InterPodAffinity 2, PodTopologySpread 2; BalancedAllocation scores the change of balance the pod makes, \
          50 + (50 + s_with - s_without)/2 with s = (1 - std of the CPU and memory fractions) x 100, and skips pods \
          requesting neither; 1.23: the same weights, BalancedAllocation s_with alone; 1.20 (v1.20.5, the FGD \
          simulator's): weights 1, 1, 1, 2, BalancedAllocation (1 - |CPU fraction - memory fraction|) x 100 of \
          the non-zero requests (0 once a fraction reaches 1), MostAllocated scores an over-requested resource 0. \
          Queue: current pops backoffQ pods when activeQ is empty (SchedulerPopFromBackoffQ, v1.33) and keeps \
          unschedulable pods 5 min; 1.23 and 1.20 wait out the back-off and keep them 60 s",
};

/// `nodes_to_score=adaptive|all|<percent>`: kube-scheduler's `percentageOfNodesToScore`.
pub const NODES_TO_SCORE: OptionInfo = OptionInfo {
    key: "nodes_to_score",
    values: &["adaptive", "all", "<integer>"],
    doc: "percentageOfNodesToScore: each pod's filters stop once this many feasible nodes are found, and only \
          those are scored; the scan starts where the last pod's stopped, in the node tree's order (zones \
          round-robin). adaptive (upstream's default, 0): max(5, 50 - nodes/125) % of the nodes; all (100); or a \
          percentage 1-99; never fewer than 100 nodes, so clusters under 100 nodes are always scored whole. \
          Upstream filters nodes in parallel and may look at a few more; here they are looked at one by one",
};

/// `preemption=on|off`: kube-scheduler's DefaultPreemption PostFilter.
pub const PREEMPTION: OptionInfo = OptionInfo {
    key: "preemption",
    values: &["on", "off"],
    doc: "on (kube-scheduler's default, with queue=skip and order=priority): a pod of one task that fits nowhere \
          evicts pods of lower priority from the node DefaultPreemption picks (fewest and least important victims, \
          latest started), which end after their grace period and are re-created; the pod is nominated to that \
          node, which pods of its priority or lower do not take meanwhile; off: no preemption",
};

/// `grace=<seconds>`: the victims' `terminationGracePeriodSeconds`.
pub const GRACE: OptionInfo = OptionInfo {
    key: "grace",
    values: crate::options::NUMBER,
    doc: "preemption=on: the victims' terminationGracePeriodSeconds (default 30): they keep running, and hold \
          their resources, this long after they are chosen",
};

/// `pod_initial_backoff=<seconds>`: the scheduling queue's `podInitialBackoffSeconds`.
pub const POD_INITIAL_BACKOFF: OptionInfo = OptionInfo {
    key: "pod_initial_backoff",
    values: crate::options::NUMBER,
    doc: "queue=skip: podInitialBackoffSeconds (default 1): a pod that fit nowhere and is moved back to the \
          queue by a cluster event waits out this back-off from its last attempt, doubling with each failed \
          attempt (under k8s=current only while other pods are ready: SchedulerPopFromBackoffQ)",
};

/// `pod_max_backoff=<seconds>`: the scheduling queue's `podMaxBackoffSeconds`.
pub const POD_MAX_BACKOFF: OptionInfo = OptionInfo {
    key: "pod_max_backoff",
    values: crate::options::NUMBER,
    doc: "queue=skip: podMaxBackoffSeconds (default 10; 0: no back-off)",
};

/// `max_unschedulable=<seconds>`: the scheduling queue's `podMaxInUnschedulablePodsDuration`.
pub const MAX_UNSCHEDULABLE: OptionInfo = OptionInfo {
    key: "max_unschedulable",
    values: crate::options::NUMBER,
    doc: "queue=skip: podMaxInUnschedulablePodsDuration: a pod that fit nowhere is tried again after this long \
          even if no event could help it (flushed on 30 s ticks; default 300 under k8s=current, 60 under 1.23 \
          and 1.20); the retry refreshes its place among pods of its priority",
};

/// `memory=oblivious|aware`.
pub const MEMORY: OptionInfo = OptionInfo {
    key: "memory",
    values: &["oblivious", "aware"],
    doc: "oblivious: GPU counts and milli-GPU only (default Kubernetes, Open-Gpu-Share); aware: each GPU must \
          also hold the pod's declared GPU memory, and shared pods go to the GPU with the least declared memory \
          left that fits (Aliyun gpushare, HAMi)",
};

/// `order=priority|fifo|sjf-aging`.
pub const ORDER: OptionInfo = OptionInfo {
    key: "order",
    values: &["priority", "fifo", "sjf-aging"],
    doc: "priority: Kubernetes PrioritySort (higher priority first, then the queue timestamp: creation, refreshed at \
          each failed attempt under queue=skip, else arrival); fifo: arrival order; \
          sjf-aging: lowest requested time - aging x wait first (the sjf-aging policy's order; Slurm multifactor \
          age and job size factors)",
};

/// `aging=<non-negative number>` (with `order=sjf-aging`).
pub const AGING: OptionInfo = OptionInfo {
    key: "aging",
    values: crate::sjf_aging::AGING.values,
    doc: "order=sjf-aging: seconds of requested time forgiven per second of waiting (default 1, at most 3 decimals)",
};

/// `queue=skip|fcfs|easy`.
pub const QUEUE: OptionInfo = OptionInfo {
    key: "queue",
    values: &["skip", "fcfs", "easy", "conservative"],
    doc: "skip: a pod that fits nowhere is passed over and later pods are tried (Kubernetes: no head-of-line \
          blocking, no reservation); fcfs: stop at the first pod that fits nowhere; easy: the first pod that \
          fits nowhere is reserved the nodes it gets once enough running jobs end (by their requested times), and \
          later pods start only if they end by then or keep off those nodes (EASY backfilling with placement, as \
          Slurm reserves nodes); conservative: every waiting pod in order is placed at the earliest time its \
          resources are free of running jobs and of earlier pods' reservations, and starts only if that is now",
};

/// `gang=atomic|none|permit-wait|kueue`.
pub const GANG: OptionInfo = OptionInfo {
    key: "gang",
    values: &["atomic", "none", "permit-wait", "kueue"],
    doc: "atomic: all of a job's tasks are bound in one decision or none (Slurm, Volcano minMember); none: \
          pod-at-a-time, the Kubernetes default: tasks are bound as they fit and hold their resources until \
          the whole gang runs; permit-wait: scheduler-plugins Coscheduling: as none, but when a task fits \
          nowhere and the gang lacks more than `reject` % of its tasks its waiting tasks are given back at once \
          (PostFilter), else they wait at most `timeout` (60 s) from the first; a rejected gang is tried again \
          at the next pass, or after `backoff` s; kueue: Kueue admits a job against the quota (`quota`, % of \
          the cluster's GPUs and CPUs; an elastic job with the largest count from its minimum that fits) and \
          only then are its pods placed, as with none; not all running `timeout` after admission (waitForPodsReady: \
          1800 s under kueue_api=v1beta2, 300 s under v1beta1), it is evicted and admitted again after a back-off \
          of `backoff` (60) s doubling to 3600 s, or deactivated once requeued `backoff_limit` times. A job with \
          min_tasks (elastic) starts once that many tasks are placed",
};

/// `timeout=<seconds>`.
pub const TIMEOUT: OptionInfo = OptionInfo {
    key: "timeout",
    values: crate::options::NUMBER,
    doc: "seconds a partial gang may wait: Coscheduling's PermitWaitingTimeSeconds / scheduleTimeoutSeconds \
          for gang=permit-wait (default 60; 0 means the default), Kueue's waitForPodsReady.timeout for \
          gang=kueue (default 1800 under kueue_api=v1beta2, where 0 means the default; 300 under v1beta1, \
          where 0 evicts a job not running at its admission instant)",
};

/// `quota=<percent>`.
pub const QUOTA: OptionInfo = OptionInfo {
    key: "quota",
    values: crate::options::NUMBER,
    doc: "gang=kueue: the ClusterQueue's nominal quota, in percent of the cluster's GPUs and CPUs (default 100)",
};

/// `reject=<percent>` (gang=permit-wait).
pub const REJECT: OptionInfo = OptionInfo {
    key: "reject",
    values: crate::options::NUMBER,
    doc: "gang=permit-wait: Coscheduling's PodGroupRejectPercentage, 0-100 (default 10): PostFilter gives \
          a gang's waiting tasks back when one fits nowhere unless the tasks it lacks are at most this % of \
          those it needs; 100 never rejects (only the timeout releases)",
};

/// `backoff=<seconds>` (gang=permit-wait|kueue).
pub const BACKOFF: OptionInfo = OptionInfo {
    key: "backoff",
    values: crate::options::NUMBER,
    doc: "gang=permit-wait: Coscheduling's PodGroupBackoffSeconds (default 0): a gang rejected by PostFilter \
          is not tried again for this long; gang=kueue: requeuingStrategy.backoffBaseSeconds (default 60): \
          the first back-off after an eviction, doubling each time up to 3600 s",
};

/// `backoff_limit=<count>` (gang=kueue).
pub const BACKOFF_LIMIT: OptionInfo = OptionInfo {
    key: "backoff_limit",
    values: crate::options::NUMBER,
    doc: "gang=kueue: requeuingStrategy.backoffLimitCount (default none: requeued for ever): a job evicted \
          and requeued this many times is deactivated at its next timeout and never runs (outcome unfinished, \
          reason `deactivated by Kueue: ...`)",
};

/// `kueue_api=v1beta2|v1beta1` (gang=kueue).
pub const KUEUE_API: OptionInfo = OptionInfo {
    key: "kueue_api",
    values: &["v1beta2", "v1beta1"],
    doc: "gang=kueue: the Kueue configuration API whose waitForPodsReady defaults apply: v1beta2 (current): \
          timeout 1800 s, blockAdmission false; v1beta1: timeout 300 s, blockAdmission true",
};

/// `block_admission=per-api|true|false` (gang=kueue).
pub const BLOCK_ADMISSION: OptionInfo = OptionInfo {
    key: "block_admission",
    values: &["per-api", "true", "false"],
    doc: "gang=kueue: waitForPodsReady.blockAdmission: true admits no job while an admitted one is not yet \
          running (jobs admitted one at a time); per-api: the kueue_api default (v1beta2 false, v1beta1 true)",
};

/// `requeue=eviction|creation` (gang=kueue).
pub const REQUEUE: OptionInfo = OptionInfo {
    key: "requeue",
    values: &["eviction", "creation"],
    doc: "gang=kueue: requeuingStrategy.timestamp: where an evicted job goes back in Kueue's order (higher \
          priority first, then this time): eviction (default) at its eviction time, behind jobs created \
          before it; creation at its creation time",
};

/// `topology=none|tree`.
pub const TOPOLOGY: OptionInfo = OptionInfo {
    key: "topology",
    values: &["none", "tree"],
    doc: "none: a gang's tasks go wherever the placement puts them; tree: a gang is placed under the lowest \
          common level of the topology that fits it — one leaf switch, else one rack, else one zone, else \
          anywhere — choosing the fullest domain that fits (Slurm topology/tree, --switches)",
};

/// An option of `kube` read as an enum: [`KubeChoice::ALL`] lists its values in the order
/// of the option's `values` (the first is the default), so a checked spec's index maps to
/// a value and a value back to its index for [`canonical`].
trait KubeChoice: Copy + PartialEq + 'static {
    /// The option.
    const OPTION: OptionInfo;
    /// Every value, in the order of `OPTION.values`.
    const ALL: &'static [Self];

    /// The value a checked spec chose (its default when not given).
    fn chosen(c: &Chosen<'_>) -> Self {
        Self::ALL[c.index(Self::OPTION)]
    }

    /// Its index in `OPTION.values`.
    fn index(self) -> usize {
        Self::ALL.iter().position(|v| *v == self).expect("every value is listed in ALL")
    }

    /// Its name in specs.
    fn name(self) -> &'static str {
        Self::OPTION.values[self.index()]
    }

    /// The option and the value's index, for [`canonical`].
    fn pair(self) -> (OptionInfo, usize) {
        (Self::OPTION, self.index())
    }
}

impl KubeChoice for Release {
    const OPTION: OptionInfo = K8S;
    const ALL: &'static [Self] = &[Release::Current, Release::V1_23, Release::V1_20];
}

/// `nodes_to_score=`, read: a percentage of 0 is upstream's adaptive default and 100 is
/// every node, as `percentageOfNodesToScore` reads them; above 100 is refused.
fn nodes_to_score(spec: &PolicySpec, c: &Chosen<'_>) -> Result<NodesToScore, PolicyError> {
    Ok(match c.number(NODES_TO_SCORE) {
        Some(0) => NodesToScore::Adaptive,
        Some(100) => NodesToScore::All,
        Some(p) if p < 100 => NodesToScore::Percent(p as u32),
        Some(_) => {
            return Err(PolicyError::Malformed {
                spec: crate::options::spec_text(spec),
                what: "nodes_to_score is adaptive, all or a percentage from 0 to 100".into(),
            });
        }
        None if c.index(NODES_TO_SCORE) == 1 => NodesToScore::All,
        None => NodesToScore::Adaptive,
    })
}

/// `nodes_to_score=`'s text in the canonical spec.
fn nodes_to_score_text(n: NodesToScore) -> String {
    match n {
        NodesToScore::Adaptive => "adaptive".into(),
        NodesToScore::All => "all".into(),
        NodesToScore::Percent(p) => p.to_string(),
    }
}

impl KubeChoice for MemoryFit {
    const OPTION: OptionInfo = MEMORY;
    const ALL: &'static [Self] = &[MemoryFit::Oblivious, MemoryFit::Aware];
}

/// `order=`: the order pods are tried in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// `priority`: Kubernetes PrioritySort, higher priority first, then arrival.
    Priority,
    /// `fifo`: arrival order.
    Fifo,
    /// `sjf-aging`: lowest requested time − `aging` × wait first, ties in arrival order
    /// ([`crate::sjf_aging::aged_priority`]). The order of two waiting pods never changes
    /// while they wait, so a pass that nothing reached can still be skipped.
    SjfAging,
}

impl KubeChoice for Order {
    const OPTION: OptionInfo = ORDER;
    const ALL: &'static [Self] = &[Order::Priority, Order::Fifo, Order::SjfAging];
}

/// `preemption=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreemptionMode {
    /// `on`: DefaultPreemption.
    On,
    /// `off`.
    Off,
}

impl KubeChoice for PreemptionMode {
    const OPTION: OptionInfo = PREEMPTION;
    const ALL: &'static [Self] = &[PreemptionMode::On, PreemptionMode::Off];
}

/// `queue=`: what a pod that fits nowhere does to the pods after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    /// `skip`: it is passed over (Kubernetes).
    Skip,
    /// `fcfs`: it ends the pass.
    Fcfs,
    /// `easy`: the first such pod gets a reservation later pods may not delay.
    Easy,
    /// `conservative`: every waiting pod gets a reservation.
    Conservative,
}

impl KubeChoice for Queue {
    const OPTION: OptionInfo = QUEUE;
    const ALL: &'static [Self] = &[Queue::Skip, Queue::Fcfs, Queue::Easy, Queue::Conservative];
}

/// `gang=`: how the tasks of a job of several are bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GangMode {
    /// `atomic`: all in one decision or none.
    Atomic,
    /// `none`: pod at a time, each task held as it fits until the gang is complete.
    PodAtATime,
    /// `permit-wait`: pod at a time, a partial gang released after `timeout`.
    PermitWait,
    /// `kueue`: pod at a time once Kueue admitted the job whole against the quota.
    Kueue,
}

impl KubeChoice for GangMode {
    const OPTION: OptionInfo = GANG;
    const ALL: &'static [Self] = &[GangMode::Atomic, GangMode::PodAtATime, GangMode::PermitWait, GangMode::Kueue];
}

impl GangMode {
    /// Whether a gang's tasks are bound as they fit and hold their resources until the
    /// whole gang runs (every mode but `atomic`).
    fn holds_parts(self) -> bool {
        self != GangMode::Atomic
    }
}

/// `topology=`: where a gang's tasks may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// `none`: wherever the placement puts them.
    None,
    /// `tree`: under the lowest common switch, rack or zone that fits the gang.
    Tree,
}

impl KubeChoice for Topology {
    const OPTION: OptionInfo = TOPOLOGY;
    const ALL: &'static [Self] = &[Topology::None, Topology::Tree];
}

/// What a pod's cached scores depend on besides its node: milli-CPU, memory, GPUs,
/// milli-GPU, declared GPU memory, GPU models.
type PodShape = (u64, u64, u32, u32, u64, Vec<String>);

/// Coscheduling's default `scheduleTimeoutSeconds`.
pub const PERMIT_TIMEOUT_SECS: u64 = crate::coscheduling::PERMIT_TIMEOUT_SECS;

/// Kubernetes' scheduling loop over a placement: the queue in `PrioritySort` order,
/// each pod filtered, scored and bound (ties broken by the seeded stream `kube-ties`).
/// A pod that fits nowhere is skipped (`queue=skip`: Kubernetes has no head-of-line
/// blocking and no reservations), ends the pass (`queue=fcfs`), or, the first such pod,
/// gets a reservation that later pods may not delay (`queue=easy`: EASY backfilling
/// over placements). A job of several tasks binds all of them in one pass or none.
///
/// The FGD score needs typical pods: they are taken from the pods that have arrived so
/// far, rebuilt each time that number doubles.
pub struct KubeScheduler {
    placement: Placement,
    /// `score=`: the placement's name in [`PLACEMENTS`].
    score: &'static str,
    memory: MemoryFit,
    release: Release,
    nodes_to_score: NodesToScore,
    order: Order,
    queue: Queue,
    gang: GangMode,
    topology: Topology,
    label: Option<String>,
    cx: PlaceCx,
    type_ids: std::collections::HashMap<PodShape, u32>,
    rng: SimRng,
    types: BTreeMap<PodType, u64>,
    counted: Vec<bool>,
    seen: u64,
    rebuilt_at: u64,
    /// The pass's copy of the ledger, kept between passes.
    scratch: Ledger,
    /// Each job's pod type (`u32::MAX`: not known yet).
    job_types: Vec<u32>,
    /// `aging=` in thousandths, for `order=sjf-aging`.
    aging_permille: u64,
    /// The gang options as given (`timeout=`, `quota=`, Coscheduling's and Kueue's).
    gang_opts: GangOptions,
    /// Kueue's admission (`gang=kueue`), made at the first pass.
    kueue: Option<KueueAdmission>,
    /// Coscheduling's PostFilter, back-off and QueueSort (`gang=permit-wait`).
    cosched: Option<Coscheduling>,
    /// With a decision log: the kind of reason last logged for each unplaced pod (its
    /// explanation without the counts), so a pod is logged again only when it changes.
    logged_wait: std::collections::HashMap<JobId, String>,
    /// `preemption=`, as chosen.
    preemption_mode: PreemptionMode,
    /// DefaultPreemption's state (`preemption=on` with `queue=skip`, `order=priority`).
    preemption: Option<Preemption>,
    /// kube-scheduler's scheduling queue (`queue=skip`).
    sched_queue: Option<SchedQueue>,
    /// The queue and preemption numbers as given (`grace=`, `pod_initial_backoff=`, ...).
    queue_numbers: Vec<(OptionInfo, u64)>,
    /// The scheduling queue's pod being tried.
    current: sched_queue::Current,
    /// Whether the next queue pass moves the unschedulable pods (resources were freed).
    queue_moved: bool,
    /// The nodes up, as of the view's node epoch `up_epoch` (kept between passes).
    up: Vec<bool>,
    up_epoch: Option<u64>,
}

/// What a placement pass (`queue=skip|fcfs|easy`) carries from one pod to the next.
struct Pass {
    /// The nodes up.
    up: Vec<bool>,
    /// The nodes up and not reserved (set with the reservation).
    unreserved: Vec<bool>,
    /// The pass's own copy of the ledger, kept between passes and brought in line with
    /// the engine's by copying the nodes that changed; placements of the pass see the
    /// bindings made before them there.
    scratch: Ledger,
    /// Jobs bound in this pass, for the reservation's release profile.
    bound_now: Vec<(SimTime, JobId, Binding)>,
    /// EASY's reservation: its shadow time and the nodes it holds.
    reservation: Option<(SimTime, Vec<u32>)>,
    /// Most tasks of a pod type that still fit (on the nodes allowed to fenced jobs or
    /// all), learnt from failed placements of pods without constraints. Constraints
    /// other than tolerations only take nodes away, so a job of more tasks fails too,
    /// with or without them; later bindings of the pass only lower what fits.
    fits_at_most: BTreeMap<(u32, bool), usize>,
    /// The running jobs on each node, built the first time preemption looks.
    on_node: Option<RunningByNode>,
}

impl KubeScheduler {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[
        SCORE,
        MEMORY,
        ORDER,
        QUEUE,
        GANG,
        TOPOLOGY,
        K8S,
        NODES_TO_SCORE,
        TIMEOUT,
        QUOTA,
        AGING,
        REJECT,
        BACKOFF,
        BACKOFF_LIMIT,
        KUEUE_API,
        BLOCK_ADMISSION,
        REQUEUE,
        PREEMPTION,
        GRACE,
        POD_INITIAL_BACKOFF,
        POD_MAX_BACKOFF,
        MAX_UNSCHEDULABLE,
    ];

    /// Builds it from a spec and the run's seed.
    pub fn from_spec(spec: &PolicySpec, seed: u64) -> Result<Self, PolicyError> {
        let c = crate::options::check(spec, Self::OPTIONS)?;
        let score = PLACEMENTS[c.index(SCORE)];
        let memory = MemoryFit::chosen(&c);
        let release = Release::chosen(&c);
        let nodes_to_score = nodes_to_score(spec, &c)?;
        let placement = Placement::for_release(score, memory, release)
            .expect("listed placement")
            .with_nodes_to_score(nodes_to_score);
        let order = Order::chosen(&c);
        if order != Order::SjfAging && spec.options.contains_key(AGING.key) {
            return Err(PolicyError::Malformed {
                spec: crate::options::spec_text(spec),
                what: "aging applies only with order=sjf-aging".into(),
            });
        }
        let gang = GangMode::chosen(&c);
        let gang_opts = GangOptions::read(&c, spec, gang)?;
        let queue = Queue::chosen(&c);
        let (sched_queue, preemption_mode, preemption, queue_numbers) =
            Self::queue_and_preemption(spec, &c, queue, order, release)?;
        // Blocks serve PrioritySort straight from the queue (not Coscheduling's or Kueue's
        // orders).
        let blocks = order == Order::Priority && !matches!(gang, GangMode::PermitWait | GangMode::Kueue);
        let sched_queue = sched_queue.map(|q| q.with_blocks(blocks));
        Ok(KubeScheduler {
            placement,
            score,
            memory,
            release,
            nodes_to_score,
            order,
            queue,
            gang,
            topology: Topology::chosen(&c),
            label: None,
            type_ids: std::collections::HashMap::new(),
            cx: PlaceCx::new(FragMeter::default()),
            rng: RngStreams::new(seed).stream("kube-ties"),
            types: BTreeMap::new(),
            counted: Vec::new(),
            seen: 0,
            rebuilt_at: 0,
            scratch: Ledger::empty(),
            job_types: Vec::new(),
            aging_permille: c.permille(AGING),
            cosched: (gang == GangMode::PermitWait).then(|| gang_opts.coscheduling()),
            gang_opts,
            kueue: None,
            logged_wait: std::collections::HashMap::new(),
            preemption_mode,
            preemption,
            sched_queue,
            queue_numbers,
            current: sched_queue::Current::None,
            queue_moved: false,
            up: Vec::new(),
            up_epoch: None,
        })
    }

    /// The same scheduler keeping the scheduling queue's pods one by one, never in blocks
    /// (`kube/queue_block.rs`): the schedules are the same (tests check it), only slower.
    pub fn without_queue_blocks(mut self) -> Self {
        self.sched_queue = self.sched_queue.map(|q| q.with_blocks(false));
        self
    }

    /// The scheduling queue (with `queue=skip`) and DefaultPreemption (also with
    /// `order=priority`) from a checked spec, and their numbers as given.
    #[allow(clippy::type_complexity)]
    fn queue_and_preemption(
        spec: &PolicySpec,
        c: &Chosen<'_>,
        queue: Queue,
        order: Order,
        release: Release,
    ) -> Result<(Option<SchedQueue>, PreemptionMode, Option<Preemption>, Vec<(OptionInfo, u64)>), PolicyError> {
        let numbers: Vec<(OptionInfo, u64)> = [GRACE, POD_INITIAL_BACKOFF, POD_MAX_BACKOFF, MAX_UNSCHEDULABLE]
            .into_iter()
            .filter_map(|o| c.number(o).map(|n| (o, n)))
            .collect();
        let malformed =
            |what: &str| PolicyError::Malformed { spec: crate::options::spec_text(spec), what: what.into() };
        let given = |o: OptionInfo| spec.options.contains_key(o.key);
        if queue != Queue::Skip
            && [POD_INITIAL_BACKOFF, POD_MAX_BACKOFF, MAX_UNSCHEDULABLE, PREEMPTION, GRACE].into_iter().any(given)
        {
            return Err(malformed("the scheduling queue's options and preemption apply only with queue=skip"));
        }
        let mode = PreemptionMode::chosen(c);
        if mode == PreemptionMode::On && given(PREEMPTION) && order != Order::Priority {
            return Err(malformed("preemption=on needs order=priority"));
        }
        if given(GRACE) && mode == PreemptionMode::Off {
            return Err(malformed("grace applies only with preemption=on"));
        }
        let secs = |o: OptionInfo, default: u64| SimDuration::from_secs(c.number(o).unwrap_or(default));
        let sched_queue = (queue == Queue::Skip).then(|| {
            SchedQueue::new(QueueConfig {
                initial_backoff: secs(POD_INITIAL_BACKOFF, 1),
                max_backoff: secs(POD_MAX_BACKOFF, 10),
                max_unschedulable: secs(MAX_UNSCHEDULABLE, if release == Release::Current { 300 } else { 60 }),
                pop_from_backoff: release == Release::Current,
            })
        });
        let on = mode == PreemptionMode::On && queue == Queue::Skip && order == Order::Priority;
        let preemption = on.then(|| Preemption::new(c.number(GRACE).unwrap_or(DEFAULT_GRACE_SECS)));
        Ok((sched_queue, mode, preemption, numbers))
    }

    /// A queue discipline (a registry policy's, see [`crate::PolicyEntry::over_placement`])
    /// over a placement, with a gang mode and a topology rule (`sim run --policy easy
    /// --placement bestfit,nodeaffinity=2 --gang atomic`): `options` are kube's `queue`,
    /// `order`, `aging`, `gang`, `topology`, `timeout` and `quota` (the placement replaces
    /// `score` and `memory`). The order is arrival order unless `options` say otherwise.
    pub fn composed(
        mut options: std::collections::BTreeMap<String, String>,
        placement: Placement,
        seed: u64,
    ) -> Result<Self, PolicyError> {
        let not_composed = [
            SCORE.key,
            MEMORY.key,
            K8S.key,
            NODES_TO_SCORE.key,
            PREEMPTION.key,
            GRACE.key,
            POD_INITIAL_BACKOFF.key,
            POD_MAX_BACKOFF.key,
            MAX_UNSCHEDULABLE.key,
        ];
        if let Some(k) = options.keys().find(|k| not_composed.contains(&k.as_str())) {
            // The placement sets the score, the memory fit and the release; composed
            // policies score every node, and their queue disciplines are not
            // kube-scheduler's queue.
            return Err(PolicyError::UnknownOption {
                kind: "policy",
                plugin: "kube with --placement".into(),
                key: k.clone(),
                known:
                    "queue, order, aging, gang, topology, timeout, quota, reject, backoff, backoff_limit, kueue_api, \
                        block_admission, requeue"
                        .into(),
            });
        }
        options.entry(ORDER.key.to_string()).or_insert_with(|| Order::Fifo.name().to_string());
        let mut k = KubeScheduler::from_spec(&PolicySpec { name: "kube".into(), options }, seed)?;
        let order = match k.order {
            Order::Fifo => String::new(),
            Order::Priority => "+order[priority]".to_string(),
            Order::SjfAging => {
                format!("+order[sjf-aging,aging={}]", crate::options::permille_string(k.aging_permille))
            }
        };
        let label = format!(
            "{}{order}+placement[{}]+gang[{}]+topology[{}]",
            k.queue.name(),
            placement.name(),
            k.gang.name(),
            k.topology.name()
        );
        k.placement = placement;
        k.label = Some(label);
        k.sched_queue = None;
        k.preemption = None;
        Ok(k)
    }

    /// A dense id of the job's pod shape for the score cache (which holds what depends
    /// on the shape and the node's use; constraints are looked at per pod).
    fn type_of(&mut self, j: JobId, job: JobView<'_>) -> u32 {
        if self.job_types.len() <= j.idx() {
            self.job_types.resize(j.idx() + 1, u32::MAX);
        }
        if self.job_types[j.idx()] == u32::MAX {
            self.job_types[j.idx()] = self.type_id(job);
        }
        self.job_types[j.idx()]
    }

    /// `timeout=…,quota=…` and the other gang options as given, for the spec.
    fn numbers(&self) -> String {
        let mut v = self.gang_opts.given();
        v.extend(self.queue_numbers.iter().map(|(o, n)| format!("{}={n}", o.key)));
        v.join(",")
    }

    /// A dense id of the job's pod shape, computed.
    fn type_id(&mut self, job: JobView<'_>) -> u32 {
        let t = job.task();
        let key = (t.cpu_milli(), t.memory_mib, t.gpus, t.gpu_milli(), t.gpu_memory_mib, job.gpu_models().to_vec());
        let n = self.type_ids.len() as u32;
        *self.type_ids.entry(key).or_insert(n)
    }

    fn pod_type(job: JobView<'_>) -> PodType {
        PodType {
            cpu_milli: job.task().cpu_milli(),
            gpu_milli: job.task().gpu_milli(),
            gpus: job.task().gpus,
            models: job.gpu_models().join("|"),
        }
    }
}

impl Policy for KubeScheduler {
    fn spec(&self) -> String {
        if let Some(l) = &self.label {
            let n = self.numbers();
            return if n.is_empty() { l.clone() } else { format!("{l}+[{n}]") };
        }
        let score = SCORE.values.iter().position(|v| *v == self.score).expect("a listed placement");
        let enums = [
            (SCORE, score),
            self.memory.pair(),
            self.order.pair(),
            self.queue.pair(),
            self.gang.pair(),
            self.topology.pair(),
            self.release.pair(),
        ];
        let mut values: Vec<(&str, String)> = enums.iter().map(|(o, i)| (o.key, o.values[*i].to_string())).collect();
        values.push((NODES_TO_SCORE.key, nodes_to_score_text(self.nodes_to_score)));
        if self.queue == Queue::Skip && self.order == Order::Priority {
            // Where it applies.
            let (o, i) = self.preemption_mode.pair();
            values.push((o.key, o.values[i].to_string()));
        }
        let c = canonical_values("kube", &values);
        let mut n = self.numbers();
        if self.order == Order::SjfAging {
            let aging = format!("aging={}", crate::options::permille_string(self.aging_permille));
            n = if n.is_empty() { aging } else { format!("{n},{aging}") };
        }
        if n.is_empty() { c } else { format!("{},{n}]", &c[..c.len() - 1]) }
    }

    fn binds_nodes(&self) -> bool {
        true
    }

    fn schedule(&mut self, view: &SchedView<'_>, info: &PassInfo, out: &mut Vec<Decision>) {
        if self.gang == GangMode::Kueue && self.kueue.is_none() {
            self.kueue = Some(KueueAdmission::for_cluster(view.ledger().nodes(), self.gang_opts.kueue()));
        }
        // Labels and taints a controller changed invalidate what was learnt from them.
        self.cx.sync_meta(view.ledger().meta_epoch());
        if info.queued.is_empty() && !info.resources_released() && !info.woken {
            // Nothing arrived and nothing was freed: every waiting pod still fits nowhere.
            return;
        }
        self.learn_pod_types(view, &info.queued);
        self.queue_events(view, info);
        // PrioritySort straight from the scheduling queue, or the order of `order=` and the
        // gang mode (Coscheduling's QueueSort, Kueue's admission order).
        let fast = self.sched_queue.is_some()
            && self.order == Order::Priority
            && self.cosched.is_none()
            && self.gang != GangMode::Kueue;
        let queue = if fast {
            Vec::new()
        } else {
            let queue = self.ordered_queue(view);
            self.gang_queue(view, info, queue, out)
        };
        if self.queue == Queue::Conservative {
            self.conservative(view, &queue, out);
            if view.logging() {
                self.log_unplaced(view, view.ledger(), &queue, out);
            }
            return;
        }
        if self.sched_queue.is_some() {
            self.place_from_queue(view, fast, &queue, out);
            return;
        }
        self.place_in_order(view, &queue, out);
    }

    fn explain_wait(&mut self, view: &SchedView<'_>, job: JobId) -> Option<String> {
        self.explain(view, view.ledger(), job)
    }

    fn retry_state(&self, view: &SchedView<'_>, out: &mut Vec<u64>) -> bool {
        self.gang_retry_state(view, out);
        if let Some(q) = &self.sched_queue {
            q.retry_state(view.now(), out);
        }
        if let Some(p) = &self.preemption {
            p.retry_state(out);
        }
        true
    }
}

/// The steps of a pass.
impl KubeScheduler {
    /// Counts each arrived pod once by type (requeued pods — retries, node failures —
    /// come back in `queued`) and rebuilds the FGD score's typical pods from those
    /// counts each time the number of pods seen doubles.
    fn learn_pod_types(&mut self, view: &SchedView<'_>, queued: &[JobId]) {
        for &j in queued {
            if self.counted.len() <= j.idx() {
                self.counted.resize(j.idx() + 1, false);
            }
            if !std::mem::replace(&mut self.counted[j.idx()], true) {
                *self.types.entry(Self::pod_type(view.job(j))).or_default() += 1;
                self.seen += 1;
            }
        }
        if self.seen >= 2 * self.rebuilt_at.max(1) || self.rebuilt_at == 0 && self.seen > 0 {
            let counts = self.types.iter().map(|(t, &n)| (t, n.min(1 << 20)));
            self.cx.frag = FragMeter::new(TypicalPods::from_counts(counts, 95.0));
            self.cx.clear_cache();
            self.rebuilt_at = self.seen;
        }
    }

    /// The waiting pods in the order they are tried (`order=`).
    fn ordered_queue(&self, view: &SchedView<'_>) -> Vec<JobId> {
        let mut queue: Vec<JobId> = view.queue().to_vec();
        match self.order {
            // PrioritySort: higher priority first; the queue is already in arrival order.
            Order::Priority => queue.sort_by_key(|j| std::cmp::Reverse(view.job(*j).priority())),
            Order::Fifo => {}
            Order::SjfAging => {
                let aged = |j: &JobId| aged_priority(view, *j, Estimate::Requested, self.aging_permille);
                queue.sort_by_cached_key(aged);
            }
        }
        queue
    }

    /// `queue=skip|fcfs|easy`: each pod of `queue` in turn placed on the pass's copy of
    /// the ledger ([`KubeScheduler::place_pod`]), until `queue=fcfs` meets one that fits
    /// nowhere.
    fn place_in_order(&mut self, view: &SchedView<'_>, queue: &[JobId], out: &mut Vec<Decision>) {
        let mut pass = self.begin_pass(view);
        for (k, &j) in queue.iter().enumerate() {
            let last = k + 1 == queue.len();
            if self.place_pod(view, &mut pass, j, last, out).is_break() {
                break;
            }
        }
        if view.logging() {
            self.log_unplaced(view, &pass.scratch, queue, out);
        }
        self.scratch = pass.scratch;
        self.up = pass.up;
    }

    /// A placement pass's start: the score cache in line with the engine's ledger, and
    /// the pass's copy of it.
    fn begin_pass(&mut self, view: &SchedView<'_>) -> Pass {
        let mut up = std::mem::take(&mut self.up);
        if self.up_epoch != Some(view.node_epoch()) || up.len() != view.node_states().len() {
            up.clear();
            up.extend(view.node_states().iter().map(|s| *s == NodeState::Up));
            self.up_epoch = Some(view.node_epoch());
        }
        if !self.cx.has_cache() {
            let n = view.ledger().nodes().len();
            let cx = std::mem::take(&mut self.cx);
            self.cx = cx.with_cache(n, 4);
        }
        self.cx.sync_ledger(view.ledger());
        let mut scratch = std::mem::replace(&mut self.scratch, Ledger::empty());
        scratch.sync_from(view.ledger());
        Pass {
            up,
            unreserved: Vec::new(),
            scratch,
            bound_now: Vec::new(),
            reservation: None,
            fits_at_most: BTreeMap::new(),
            on_node: None,
        }
    }

    /// Pod `j` in a placement pass: passed over when Kueue has not admitted it or a pod
    /// of its type already failed to fit, held task by task (a gang pod at a time), or
    /// bound whole; otherwise it fits nowhere ([`KubeScheduler::unplaced`]). `Break`
    /// ends the pass. `last`: no pod comes after it.
    fn place_pod(
        &mut self,
        view: &SchedView<'_>,
        pass: &mut Pass,
        j: JobId,
        last: bool,
        out: &mut Vec<Decision>,
    ) -> ControlFlow<()> {
        let job = view.job(j);
        let now = view.now();
        let ends_before = pass.reservation.as_ref().is_some_and(|(t, _)| now + view.requested(j) <= *t);
        let fenced = pass.reservation.is_some() && !ends_before;
        let ty = self.type_of(j, job);
        let key = (ty, fenced);
        let only_restricts = job.constraints().as_ref().is_none_or(|c| c.tolerations.is_empty());
        let fit = pass.fits_at_most.get(&key).copied().filter(|_| only_restricts);
        if !self.gang_admits(view, j, out) {
            return ControlFlow::Continue(());
        }
        let holds_parts = self.gang.holds_parts() && job.tasks() > 1;
        let kept = self.kept_nodes(pass, j, job.priority(), fenced);
        if fit.is_some_and(|k| k == 0 || !holds_parts && k < job.needed_tasks() as usize) {
            self.pod_failed(view, pass, j, out);
            return ControlFlow::Continue(());
        }
        if holds_parts {
            self.hold_parts(view, pass, j, ty, fenced, kept, out);
            return ControlFlow::Continue(());
        }
        let restricted = kept.is_some();
        match self.bind_pod(pass, j, job, ty, fenced, last, kept) {
            Ok(binding) => {
                let binding = Binding::from(binding);
                self.pod_placed(j, now);
                if self.queue == Queue::Easy && pass.reservation.is_none() {
                    // Only EASY's reservation, not yet made, reads them.
                    pass.bound_now.push((now + view.requested(j), j, binding.clone()));
                }
                let reason = if fenced || ends_before {
                    match &pass.reservation {
                        Some((t, _)) if ends_before => StartReason::BackfillEndsBeforeShadow { shadow: *t },
                        _ => StartReason::BackfillPlacementNow,
                    }
                } else {
                    StartReason::Placed
                };
                self.gang_started(j);
                out.push(Decision::Bind { job: j, binding, reason });
                ControlFlow::Continue(())
            }
            Err(fit) => {
                if job.constraints().is_none() && !restricted {
                    pass.fits_at_most.insert(key, fit);
                }
                self.pod_failed(view, pass, j, out);
                self.unplaced(view, pass, j, ty, out)
            }
        }
    }

    /// The nodes pod `j` (of `priority`) may use when some are nominated to preemptors of
    /// at least its priority (they are kept from it); `None`: the pass's usual nodes.
    fn kept_nodes(&self, pass: &Pass, j: JobId, priority: i64, fenced: bool) -> Option<Vec<bool>> {
        let p = self.preemption.as_ref().filter(|p| p.any_nominated())?;
        let mut kept = p.kept_from(j, priority).peekable();
        kept.peek()?;
        let mut allowed = if fenced { pass.unreserved.clone() } else { pass.up.clone() };
        for n in kept {
            allowed[n as usize] = false;
        }
        Some(allowed)
    }

    /// Pod `j` was bound: it leaves the scheduling queue, and its nomination is used up.
    fn pod_placed(&mut self, j: JobId, now: SimTime) {
        self.queue_outcome(QueueOutcome::Placed, now);
        if let Some(p) = &mut self.preemption {
            p.bound(j);
        }
    }

    /// Pod `j` was tried and fit nowhere: it waits among the unschedulable pods, and
    /// DefaultPreemption's PostFilter runs.
    fn pod_failed(&mut self, view: &SchedView<'_>, pass: &mut Pass, j: JobId, out: &mut Vec<Decision>) {
        self.queue_outcome(QueueOutcome::Failed, view.now());
        if self.preemption.is_some() {
            self.post_filter(view, pass, j, out);
        }
    }

    /// Binds every task of `job` on the pass's copy of the ledger, on the nodes not
    /// reserved if `fenced`, or nothing (`Err`: how many fitted). A single pod that is the
    /// queue's `last` is not taken on the copy: no later placement of the pass reads it.
    #[allow(clippy::too_many_arguments)]
    fn bind_pod(
        &mut self,
        pass: &mut Pass,
        j: JobId,
        job: JobView<'_>,
        ty: u32,
        fenced: bool,
        last: bool,
        kept: Option<Vec<bool>>,
    ) -> Result<Vec<TaskBinding>, usize> {
        let allowed: &[bool] = match &kept {
            Some(a) => a,
            None if fenced => &pass.unreserved,
            None => &pass.up,
        };
        if job.tasks() != 1 {
            return self.bind(&mut pass.scratch, job, ty, allowed);
        }
        // A preemptor tries its nominated node first (`evaluateNominatedNode`).
        let nominated = self.preemption.as_ref().and_then(|p| p.nominated_node(j)).filter(|&n| allowed[n as usize]);
        let first = nominated.and_then(|n| {
            let mut only = vec![false; allowed.len()];
            only[n as usize] = true;
            self.place_one(&pass.scratch, job, ty, &only)
        });
        let b = match first {
            Some(b) => b,
            None => self.place_one(&pass.scratch, job, ty, allowed).ok_or(0usize)?,
        };
        if !last {
            self.keep(&mut pass.scratch, job, &b);
        }
        Ok(vec![b])
    }

    /// Pod `j`, bound in no way: `queue=fcfs` ends the pass there (`Break`); under
    /// `queue=easy` the first such pod gets the reservation
    /// ([`KubeScheduler::reserve`]) whose nodes later pods keep off unless they end
    /// before it; `queue=skip` passes over it.
    fn unplaced(
        &mut self,
        view: &SchedView<'_>,
        pass: &mut Pass,
        j: JobId,
        ty: u32,
        out: &mut Vec<Decision>,
    ) -> ControlFlow<()> {
        match self.queue {
            Queue::Fcfs => {
                if view.logging() {
                    let free = view.free_units();
                    out.push(Decision::Wait { job: j, reason: WaitReason::DoesNotFit { free } });
                }
                ControlFlow::Break(())
            }
            Queue::Easy if pass.reservation.is_none() => {
                let job = view.job(j);
                pass.reservation = self.reserve(view, &pass.scratch, &pass.bound_now, job, ty, &pass.up);
                if let Some((_, nodes)) = &pass.reservation {
                    pass.unreserved = pass.up.clone();
                    for &n in nodes {
                        pass.unreserved[n as usize] = false;
                    }
                }
                if let (Some((at, _)), true) = (&pass.reservation, view.logging()) {
                    let free = view.free_units();
                    out.push(Decision::Wait { job: j, reason: WaitReason::HeadReserved { at: *at, free } });
                }
                ControlFlow::Continue(())
            }
            Queue::Skip | Queue::Easy | Queue::Conservative => ControlFlow::Continue(()),
        }
    }
}

/// Why pods wait, for the decision log.
impl KubeScheduler {
    /// Why waiting job `j` is not placed on `ledger`: not admitted by Kueue, the filters
    /// that reject every node for one of its pods (kube-scheduler's `FailedScheduling`
    /// message), or, for a gang, how many of its pods fit and why the next does not.
    /// `None` when it would fit now (the queue discipline holds it back). Takes nothing
    /// and draws nothing from the run's random stream: explaining never changes a schedule.
    fn explain(&mut self, view: &SchedView<'_>, ledger: &Ledger, j: JobId) -> Option<String> {
        let job = view.job(j);
        if let Some(why) = self.gang_why_not(view, j) {
            return Some(why);
        }
        let ty = self.type_of(j, job);
        let up: Vec<bool> = view.node_states().iter().map(|s| *s == NodeState::Up).collect();
        let req = PodReq { task: job.task(), models: job.gpu_models(), type_id: None, constraints: job.constraints() };
        let one = self.placement.diagnose(ledger.nodes(), &up, &req, &mut self.cx);
        if one.feasible == 0 {
            return Some(one.message());
        }
        let held = view.held(j).len();
        let needed = (job.needed_tasks() as usize).saturating_sub(held);
        if needed <= 1 {
            return None;
        }
        // Place the gang's pods on a copy, with the random stream and the sampling's start
        // restored afterwards.
        self.cx.mark_all_dirty();
        let (rng, start) = (self.rng.clone(), self.cx.next_start());
        let mut copy = ledger.clone();
        let placed = self.bind_some(&mut copy, job, ty, needed, &up);
        self.rng = rng;
        self.cx.set_next_start(start);
        self.cx.mark_all_dirty();
        if placed.len() >= needed {
            return None;
        }
        let next = self.placement.diagnose(copy.nodes(), &up, &req, &mut self.cx);
        Some(format!(
            "{} of the gang's {} pods fit; the next: {}",
            held + placed.len(),
            job.needed_tasks(),
            next.message()
        ))
    }

    /// With a decision log: a `wait` event for each pod of `queue` this pass left
    /// unplaced and gave no other reason, saying why (see [`KubeScheduler::explain`]), at
    /// most once per pod until the kind of its reason changes.
    fn log_unplaced(&mut self, view: &SchedView<'_>, ledger: &Ledger, queue: &[JobId], out: &mut Vec<Decision>) {
        let decided: std::collections::BTreeSet<JobId> = out
            .iter()
            .filter_map(|d| match d {
                Decision::Bind { job, .. } | Decision::Hold { job, .. } | Decision::Wait { job, .. } => Some(*job),
                _ => None,
            })
            .collect();
        // Pods of one type without constraints get one explanation per pass.
        let mut by_type: BTreeMap<u32, Option<String>> = BTreeMap::new();
        for &j in queue {
            if decided.contains(&j) {
                continue;
            }
            let job = view.job(j);
            let plain = job.constraints().is_none() && job.needed_tasks() <= 1 && view.held(j).is_empty();
            let ty = self.type_of(j, job);
            let why = match by_type.get(&ty) {
                Some(w) if plain => w.clone(),
                _ => {
                    let w = self.explain(view, ledger, j);
                    if plain {
                        by_type.insert(ty, w.clone());
                    }
                    w
                }
            };
            let Some(why) = why else { continue };
            let kind: String = why.chars().filter(|c| !c.is_ascii_digit()).collect();
            if self.logged_wait.get(&j) != Some(&kind) {
                self.logged_wait.insert(j, kind);
                out.push(Decision::Wait { job: j, reason: WaitReason::Other { why } });
            }
        }
    }
}

/// Most reservations `queue=conservative` makes in one pass, and most start times it
/// tries for one pod (Slurm bounds its backfill cycle the same way, `bf_max_job_test`).
pub const MAX_RESERVATIONS: usize = 64;

impl KubeScheduler {
    /// Conservative backfilling over placements: each waiting pod in queue order gets the
    /// earliest start among now and the requested ends of running jobs and of earlier
    /// reservations at which it can be placed on the ledger with the running jobs that
    /// ended by then released and every reservation overlapping its run taken; it starts
    /// if that is now, else it holds that reservation for the rest of the pass.
    fn conservative(&mut self, view: &SchedView<'_>, queue: &[JobId], out: &mut Vec<Decision>) {
        // Placements here run on copies with released and reserved resources.
        self.cx.mark_all_dirty();
        let now = view.now();
        let up: Vec<bool> = view.node_states().iter().map(|s| *s == NodeState::Up).collect();
        let base = view.ledger();
        // A job past its requested end still runs: it is expected to end at the next tick.
        let mut running: Vec<(SimTime, JobId, &Binding)> = view
            .running()
            .filter(|r| !r.binding.is_empty())
            .map(|r| (overrun_clamp(r.requested_end, now, true), r.job, &r.binding))
            .collect();
        running.sort_by_key(|e| e.0);
        // (start, end, job, binding) of the pods started or reserved in this pass.
        let mut holds: Vec<(SimTime, SimTime, JobId, Vec<TaskBinding>)> = Vec::new();
        let mut reserved = 0usize;
        for &j in queue {
            if reserved >= MAX_RESERVATIONS {
                break;
            }
            if !self.gang_admits(view, j, out) {
                continue;
            }
            let job = view.job(j);
            let ty = self.type_of(j, job);
            let d = view.requested(j);
            let cap = self.task_cap(j, job);
            let mut starts: Vec<SimTime> = vec![now];
            starts.extend(running.iter().map(|e| e.0).filter(|&t| t > now));
            starts.extend(holds.iter().map(|h| h.1).filter(|&t| t > now));
            starts.sort_unstable();
            starts.dedup();
            starts.truncate(MAX_RESERVATIONS);
            // The ledger at instant `at`: running jobs ended by then released, the pass's
            // holds active then taken (they were checked against each other).
            let at_instant = |at: SimTime, holds: &[(SimTime, SimTime, JobId, Vec<TaskBinding>)]| {
                let mut state = base.clone();
                for (e, rj, b) in &running {
                    if *e <= at {
                        for x in b.iter() {
                            state.give(&view.job(*rj).task(), x, false);
                            state.unlabel_pod(x.node, rj.0);
                        }
                    }
                }
                for (hs, he, hj, hb) in holds {
                    if *hs <= at && at < *he {
                        let hjob = view.job(*hj);
                        let pod = hjob.constraints().and_then(sim_core::constraints::PodInfo::of);
                        for x in hb {
                            let _ = state.take(&hjob.task(), hjob.gpu_models(), x, false);
                            if let Some(pod) = &pod {
                                state.label_pod(x.node, hj.0, pod.clone());
                            }
                        }
                    }
                }
                state
            };
            for t in starts {
                let mut state = at_instant(t, &holds);
                if let Ok(mut b) = self.bind(&mut state, job, ty, &up) {
                    // Kueue's partial admission: no more tasks than it admitted.
                    b.truncate(cap);
                    // Free resources only shrink when a hold starts: the binding must also
                    // fit at every hold start inside its run.
                    let later: Vec<SimTime> = holds.iter().map(|h| h.0).filter(|&s| s > t && s < t + d).collect();
                    let fits_later = later.iter().all(|&s| {
                        let mut st = at_instant(s, &holds);
                        b.iter().all(|x| st.take(&job.task(), job.gpu_models(), x, false).is_ok())
                    });
                    if !fits_later {
                        continue;
                    }
                    holds.push((t, t + d, j, b.clone()));
                    if t == now {
                        self.gang_started(j);
                        out.push(Decision::Bind { job: j, binding: b.into(), reason: StartReason::Placed });
                    } else {
                        reserved += 1;
                        if view.logging() {
                            out.push(Decision::Wait { job: j, reason: WaitReason::Reserved { at: t } });
                        }
                    }
                    break;
                }
            }
        }
    }

    /// Places every task of `job` on `ledger` (taking what it places), or nothing; with
    /// `topology=tree` a gang first tries to stay under one switch, then one rack, then
    /// one zone.
    /// `Err` tells how many of its tasks fit anywhere allowed.
    fn bind(
        &mut self,
        ledger: &mut Ledger,
        job: JobView<'_>,
        ty: u32,
        allowed: &[bool],
    ) -> Result<Vec<TaskBinding>, usize> {
        if self.topology == Topology::Tree && job.tasks() > 1 {
            for key in ["switch", "rack", "zone"] {
                // Each allowed node's domain, and the domains fullest first (least milli-GPU
                // free, then least milli-CPU free), ties by name.
                let nodes = ledger.nodes();
                let of: Vec<Option<String>> =
                    nodes.iter().enumerate().map(|(i, n)| n.domain(i, key).filter(|_| allowed[i])).collect();
                let mut free: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
                for (n, d) in nodes.iter().zip(&of) {
                    if let Some(d) = d {
                        let e = free.entry(d).or_default();
                        e.0 += n.gpu_milli_left();
                        e.1 += n.cpu_milli_left;
                    }
                }
                let mut domains: Vec<(&str, (u64, u64))> = free.into_iter().collect();
                domains.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(b.0)));
                let domains: Vec<String> = domains.into_iter().map(|(d, _)| d.to_string()).collect();
                for d in domains {
                    let inside: Vec<bool> = of.iter().map(|x| x.as_deref() == Some(d.as_str())).collect();
                    if let Ok(b) = self.bind_all(ledger, job, ty, &inside) {
                        return Ok(b);
                    }
                }
            }
        }
        self.bind_all(ledger, job, ty, allowed)
    }

    /// Places every task of `job` on `ledger` among `allowed` nodes, or nothing: `Err`
    /// tells how many fitted.
    fn bind_all(
        &mut self,
        ledger: &mut Ledger,
        job: JobView<'_>,
        ty: u32,
        allowed: &[bool],
    ) -> Result<Vec<TaskBinding>, usize> {
        let placed = self.bind_some(ledger, job, ty, job.tasks() as usize, allowed);
        if placed.len() < job.needed_tasks() as usize {
            let recorded = job.constraints().is_some_and(sim_core::constraints::PodInfo::wanted);
            for b in &placed {
                ledger.give(&job.task(), b, false);
                if recorded {
                    ledger.unlabel_pod(b.node, u32::MAX);
                }
                self.cx.mark_dirty(b.node.0 as usize);
            }
            return Err(placed.len());
        }
        Ok(placed)
    }

    /// Where one task of `job` would go on `nodes`, taking nothing.
    fn place_one(&mut self, ledger: &Ledger, job: JobView<'_>, ty: u32, allowed: &[bool]) -> Option<TaskBinding> {
        let type_id = Some(ty);
        let req = PodReq { task: job.task(), models: job.gpu_models(), type_id, constraints: job.constraints() };
        self.placement.place_on(ledger, allowed, &req, &mut self.cx, &mut self.rng)
    }

    /// Takes a placed task's resources on the pass's copy of the ledger, so the next
    /// placements of the pass see them (and the score cache recomputes that node).
    fn keep(&mut self, ledger: &mut Ledger, job: JobView<'_>, b: &TaskBinding) {
        ledger.take(&job.task(), job.gpu_models(), b, false).expect("placement passed the filters");
        self.cx.mark_dirty(b.node.0 as usize);
        if let Some(pod) = job.constraints().and_then(sim_core::constraints::PodInfo::of) {
            ledger.label_pod(b.node, u32::MAX, pod);
        }
    }

    /// Places up to `n` tasks of `job` on `ledger` one by one, as many as fit.
    fn bind_some(
        &mut self,
        ledger: &mut Ledger,
        job: JobView<'_>,
        ty: u32,
        n: usize,
        allowed: &[bool],
    ) -> Vec<TaskBinding> {
        let mut placed = Vec::new();
        while placed.len() < n {
            let Some(b) = self.place_one(ledger, job, ty, allowed) else { break };
            self.keep(ledger, job, &b);
            placed.push(b);
        }
        placed
    }

    /// EASY's reservation for a pod that fits nowhere now: release the running jobs (and
    /// those bound in this pass) in order of requested end on a copy of the ledger until
    /// it can be placed; that end is its shadow time and the nodes it would get are
    /// reserved. `None` when it fits nowhere even on an empty cluster.
    fn reserve(
        &mut self,
        view: &SchedView<'_>,
        ledger: &Ledger,
        bound_now: &[(SimTime, JobId, Binding)],
        job: JobView<'_>,
        ty: u32,
        up: &[bool],
    ) -> Option<(SimTime, Vec<u32>)> {
        // Placements here run on copies with running jobs released.
        self.cx.mark_all_dirty();
        // A job past its requested end still runs: it is expected to end at the next tick.
        let now = view.now();
        let mut ends: Vec<(SimTime, JobId, &Binding)> = view
            .running()
            .filter(|r| !r.binding.is_empty())
            .map(|r| (overrun_clamp(r.requested_end, now, true), r.job, &r.binding))
            .collect();
        ends.extend(bound_now.iter().map(|(t, j, b)| (*t, *j, b)));
        ends.sort_by_key(|e| e.0); // stable: start order among equal ends
        let mut scratch = ledger.clone();
        // What-if placements: the sampling's start is where the pass left it afterwards.
        let start = self.cx.next_start();
        let mut found = None;
        for (t, j, binding) in ends {
            for b in binding {
                scratch.give(&view.job(j).task(), b, false);
                scratch.unlabel_pod(b.node, j.0);
            }
            // `bind` takes nothing when it fails, so the released copy serves every step.
            if let Ok(b) = self.bind(&mut scratch, job, ty, up) {
                let mut nodes: Vec<u32> = b.iter().map(|x| x.node.0).collect();
                nodes.sort_unstable();
                nodes.dedup();
                found = Some((t.max(now), nodes));
                break;
            }
        }
        self.cx.set_next_start(start);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each enum lists the values of its option, in their order, once.
    fn lists_its_option<T: KubeChoice + std::fmt::Debug>() {
        assert_eq!(T::ALL.len(), T::OPTION.values.len(), "{}", T::OPTION.key);
        for (i, v) in T::ALL.iter().enumerate() {
            assert_eq!(v.index(), i, "{v:?}");
            assert_eq!(v.name(), T::OPTION.values[i]);
        }
    }

    #[test]
    fn enums_follow_the_option_tables() {
        lists_its_option::<MemoryFit>();
        lists_its_option::<Order>();
        lists_its_option::<Queue>();
        lists_its_option::<GangMode>();
        lists_its_option::<Topology>();
        assert_eq!(GangMode::PodAtATime.name(), "none");
        assert_eq!(Queue::Conservative.name(), "conservative");
    }
}
