//! Run settings and errors.

use super::MAX_CONTROL_ROUNDS;
use crate::cluster::{NodeId, NodeState};
use crate::time::{SimDuration, SimTime};

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
    /// Track which units each job holds (reported in [`crate::JobRecord::units`]). On by default;
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
    /// event ([`super::RunResult::gpu_samples`]; the state at a time is the one after the events
    /// at that time); `None` (the default) samples nothing. Only runs of policies that bind
    /// nodes have GPU state to sample.
    pub gpu_sample_every: Option<SimDuration>,
    /// How busy a running job keeps its GPUs when the job does not say
    /// ([`crate::TaskShape::gpu_util_permille`]), per mille. Default 1000 (fully busy):
    /// the board power limit while a job runs, the conservative reading of a trace that
    /// has no utilization.
    pub gpu_util_permille: u16,
    /// What becomes of the jobs of a node that goes down ([`NodeLifecycle`]; default
    /// [`NodeLifecycle::Auto`]).
    pub node_lifecycle: NodeLifecycle,
    /// Under [`NodeLifecycle::Kubernetes`]: how long a node that stopped reporting is
    /// still taken for ready, before the node lifecycle controller taints it
    /// `node.kubernetes.io/unreachable:NoExecute` (kube-controller-manager
    /// `--node-monitor-grace-period`: 50 s since Kubernetes v1.32, 40 s before;
    /// [`NODE_MONITOR_GRACE_V1_31`]).
    pub node_monitor_grace: SimDuration,
    /// The `DefaultTolerationSeconds` admission plugin's toleration of the `not-ready` and
    /// `unreachable` NoExecute taints, given to every pod that declares none (kube-apiserver
    /// `--default-not-ready-toleration-seconds`, `--default-unreachable-toleration-seconds`,
    /// default 300 s). Read wherever NoExecute taints are (policies that bind nodes).
    pub default_toleration_secs: u64,
    /// Periodic checkpoints of every job ([`crate::checkpoint`]): an interrupted attempt
    /// keeps the work of its last completed checkpoint. `None` (the default): jobs
    /// checkpoint only when a controller says so ([`crate::controller::Action::Checkpoint`]).
    pub checkpointing: Option<crate::checkpoint::Checkpointing>,
    /// What becomes of a job whose attempt was interrupted (node failure, eviction,
    /// preemption with requeue): requeued every time (the default), or as Slurm,
    /// a Kubernetes Job or Volcano decide ([`crate::restart::Restarts`]).
    pub restarts: crate::restart::Restarts,
    /// The mean time between failures of one node, when the run knows it (its `failures`
    /// controllers): Young's interval of the jobs whose own checkpoints say `auto`
    /// ([`crate::checkpoint::JobCheckpoint`]).
    pub node_mtbf: Option<SimDuration>,
    /// The scheduling domains' names ([`crate::domain`]; empty: one, unnamed).
    pub domains: Vec<String>,
    /// Each node's owning domain at the start, in node order (shorter: the rest are the
    /// first domain's).
    pub node_domains: Vec<u8>,
}

/// What becomes of the jobs running on a node that goes down.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum NodeLifecycle {
    /// [`NodeLifecycle::Kubernetes`] when the policy binds jobs to nodes (`kube`),
    /// [`NodeLifecycle::Requeue`] otherwise (the batch policies, as Slurm).
    #[default]
    Auto,
    /// They are requeued at once (Slurm's `DOWN` node: its jobs requeued).
    Requeue,
    /// Kubernetes: the node is not ready; its pods stop making progress (their work
    /// since the last checkpoint is lost) but stay bound, holding what they hold, until
    /// the node lifecycle controller's `unreachable:NoExecute` taint, after
    /// [`SimConfig::node_monitor_grace`], evicts them after their toleration (300 s
    /// unless they say otherwise); evicted, they are requeued as new pods. A node back up
    /// before that keeps its pods: `restartPolicy: Never` pods fail (their containers died
    /// with the node) and are re-created at once, `OnFailure` pods restart in place.
    /// Only for policies that bind nodes (otherwise the same as `Requeue`).
    Kubernetes,
}

/// `--node-monitor-grace-period` of Kubernetes v1.32 and later.
pub const NODE_MONITOR_GRACE: SimDuration = SimDuration::from_secs(50);
/// `--node-monitor-grace-period` of Kubernetes v1.31 and earlier (kubernetes PR 126287
/// raised it to 50 s).
pub const NODE_MONITOR_GRACE_V1_31: SimDuration = SimDuration::from_secs(40);

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
            node_lifecycle: NodeLifecycle::Auto,
            node_monitor_grace: NODE_MONITOR_GRACE,
            default_toleration_secs: 300,
            checkpointing: None,
            restarts: crate::restart::Restarts::Always,
            node_mtbf: None,
            domains: Vec::new(),
            node_domains: Vec::new(),
        }
    }
}

/// Back-off before an out-of-memory job is re-created: Kubernetes Job's 10 s, 20 s,
/// 40 s, … capped at 6 min.
pub fn oom_backoff(kills: u32) -> SimDuration {
    let secs = 10u64.saturating_mul(1u64 << kills.saturating_sub(1).min(16)).min(360);
    SimDuration::from_secs(secs)
}

/// The kubelet's CrashLoopBackOff before the `n`-th restart of a container since its back-off
/// was last reset (`n` ≥ 1): the first restart is immediate (no back-off entry yet), then
/// 10 s, 20 s, 40 s, … capped at 300 s (kubernetes v1.31 `pkg/kubelet/kuberuntime`
/// `doBackOff` over client-go `flowcontrol.Backoff`, `backOffPeriod` 10 s,
/// `MaxContainerBackOff` 300 s). The back-off is reset when the container ran more than
/// twice the cap, 10 minutes, since its last restart ([`CRASH_LOOP_RESET`]).
pub fn crash_loop_backoff(n: u32) -> SimDuration {
    if n <= 1 {
        return SimDuration::ZERO;
    }
    SimDuration::from_secs(10u64.saturating_mul(1u64 << (n - 2).min(16)).min(300))
}

/// How long a container must have run since its last restart for its CrashLoopBackOff to
/// start again from an immediate restart (client-go `flowcontrol` `hasExpired`: twice the
/// 300 s cap).
pub const CRASH_LOOP_RESET: SimDuration = SimDuration::from_secs(600);

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
    /// A controller asked for something impossible. Fatal: the controller is wrong.
    #[error("controller {controller} took an invalid action at t={time}: {what}")]
    InvalidAction {
        /// The controller's spec.
        controller: String,
        /// When.
        time: SimTime,
        /// What was wrong.
        what: String,
    },
    /// The policy kept preempting at one instant. Fatal: the policy is wrong.
    #[error(
        "policy {policy} preempted or released held tasks at every pass at t={time} ({MAX_PASSES_PER_INSTANT} passes): livelock"
    )]
    Livelock {
        /// The policy's spec.
        policy: String,
        /// When.
        time: SimTime,
    },
    /// Controllers kept acting on each other's effects at one instant. Fatal: a
    /// controller is wrong.
    #[error("controllers acted on each other {MAX_CONTROL_ROUNDS} times at t={time}: livelock")]
    ControllerLivelock {
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
    /// More scheduling domains than a run holds.
    #[error("{0} scheduling domains: at most {max}", max = crate::domain::MAX_DOMAINS)]
    TooManyDomains(usize),
    /// A streamed input could not be read, or is not in submission order. Fatal: the
    /// input is at fault; the message names the file, line and field.
    #[error("{0}")]
    Source(String),
    /// A streamed input has a job submitted before the job read before it. Fatal: a
    /// streamed run needs its input in submission order (read it whole instead).
    #[error("{0}")]
    Unsorted(String),
    /// A streamed record could not be written. Fatal: the output would be incomplete.
    #[error("{0}")]
    Sink(String),
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
                | EngineError::TooManyDomains(_)
                | EngineError::Source(_)
                | EngineError::Unsorted(_)
        )
    }
}

/// Most nodes a run whose policy binds jobs to nodes may have: the ledger keeps a record
/// per node (CPU, memory and each GPU's use).
pub const MAX_LEDGER_NODES: u64 = 1 << 24;
