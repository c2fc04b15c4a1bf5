//! How each job ended. Every job read ends with exactly one [`Outcome`].

use crate::time::{SimDuration, SimTime};
use crate::units::UnitSet;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why the engine refused a job at submission.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// The job asks for no processors (SWF fields 5 and 8 both missing or zero).
    NoProcessors,
    /// The trace gives no run time (SWF run time -1: cancelled before it started).
    MissingRuntime,
    /// The job ran for zero seconds in the trace.
    ZeroRuntime,
    /// The job needs more units than the whole machine has.
    LargerThanMachine,
    /// The job asks for GPUs of models no node of the cluster has (after matching names
    /// case-insensitively and through the hardware profiles' aliases), under a policy that
    /// binds jobs to nodes and GPUs: no placement could ever hold it.
    NoMatchingGpuModel,
    /// Under a policy that binds nodes: no node of the cluster, empty, could hold one of
    /// its tasks (CPU, memory, GPU count or share).
    NoFittingNode,
    /// Under a policy that binds nodes: nodes could hold its tasks, but its node selector
    /// or required node affinity allows none of them (judged only when no controller
    /// could change labels).
    NoMatchingNode,
    /// Under a policy that binds nodes: all the nodes together, empty, could not hold
    /// the tasks it needs to start (a gang bigger than the cluster).
    LargerThanCluster,
}

impl RejectReason {
    /// Short stable name, as written in `jobs.csv` and the decision log.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::NoProcessors => "no_processors",
            RejectReason::MissingRuntime => "missing_runtime",
            RejectReason::ZeroRuntime => "zero_runtime",
            RejectReason::LargerThanMachine => "larger_than_machine",
            RejectReason::NoMatchingGpuModel => "no_matching_gpu_model",
            RejectReason::NoFittingNode => "no_fitting_node",
            RejectReason::NoMatchingNode => "no_matching_node",
            RejectReason::LargerThanCluster => "larger_than_cluster",
        }
    }
}

/// The one recorded outcome of a job.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Ran to its end.
    Completed,
    /// Killed when it reached its requested time limit (`--walltime-kill`, Slurm's
    /// `TIMEOUT`).
    Killed,
    /// Ran and failed (the trace says it failed, or it exhausted its retries).
    Failed,
    /// Killed for using more GPU memory than it had.
    OomKilled,
    /// Refused at submission.
    Rejected(RejectReason),
    /// Still waiting or running when the simulation stopped (horizon reached, or no
    /// further progress possible).
    Unfinished,
    /// Ended for good by a preemption that cancels its victims (Slurm's
    /// `PreemptMode=CANCEL`: job state `PREEMPTED`).
    Preempted,
}

impl Outcome {
    /// Stable name: `completed`, `killed`, `failed`, `oom_killed`, `rejected`,
    /// `unfinished`, `preempted`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Killed => "killed",
            Outcome::Failed => "failed",
            Outcome::OomKilled => "oom_killed",
            Outcome::Rejected(_) => "rejected",
            Outcome::Unfinished => "unfinished",
            Outcome::Preempted => "preempted",
        }
    }

    /// Every outcome name, in summary order.
    pub const NAMES: [&'static str; 7] =
        ["completed", "killed", "failed", "oom_killed", "rejected", "unfinished", "preempted"];

    /// Whether the job ran (has a start and an end).
    pub fn ran(self) -> bool {
        matches!(self, Outcome::Completed | Outcome::Killed | Outcome::Failed | Outcome::OomKilled | Outcome::Preempted)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Wall time a job's attempts lost, by cause, in microseconds: the work an interruption
/// threw away (from the attempt's last completed checkpoint, or its start, to when it
/// stopped making progress), the checkpoints written and read back, and the time it waited
/// to run again after an interruption. Times the GPUs it holds, GPU time lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LostTime {
    /// Its node failed (requeued when the failure was detected, evicted by the node
    /// lifecycle controller's taint, or its pod's containers died with the node).
    pub failure: u64,
    /// A controller evicted it (a spot reclaim, a drain), or its node was removed.
    pub eviction: u64,
    /// Its policy preempted it (requeued or cancelled).
    pub preemption: u64,
    /// It ran out of GPU memory.
    pub oom: u64,
    /// Writing periodic checkpoints ([`crate::SimConfig::checkpointing`]), all attempts.
    pub checkpoint_writes: u64,
    /// Reading a checkpoint back when an attempt resumed from one.
    pub restore: u64,
    /// Waiting to run again after an interruption.
    pub waiting: u64,
}

/// Why an attempt was interrupted ([`LostTime`]'s causes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interruption {
    /// A node failure.
    Failure,
    /// A controller's eviction or a node's removal.
    Eviction,
    /// The policy's preemption.
    Preemption,
    /// Out of GPU memory.
    Oom,
}

impl LostTime {
    /// The causes' names, in the order of [`LostTime::by_cause`].
    pub const CAUSES: [&'static str; 7] =
        ["failure", "eviction", "preemption", "oom", "checkpoint_writes", "restore", "waiting"];

    /// Each cause's time, in the order of [`LostTime::CAUSES`].
    pub fn by_cause(&self) -> [u64; 7] {
        [self.failure, self.eviction, self.preemption, self.oom, self.checkpoint_writes, self.restore, self.waiting]
    }

    /// The field of `cause`.
    pub fn of(&mut self, cause: Interruption) -> &mut u64 {
        match cause {
            Interruption::Failure => &mut self.failure,
            Interruption::Eviction => &mut self.eviction,
            Interruption::Preemption => &mut self.preemption,
            Interruption::Oom => &mut self.oom,
        }
    }
}

/// What happened to one job in a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// Last start (after requeues, the start of the attempt that ended it).
    pub start: Option<SimTime>,
    /// The first attempt's start (the same as `start` unless it was requeued or restarted).
    pub first_start: Option<SimTime>,
    /// End of that attempt.
    pub end: Option<SimTime>,
    /// The outcome.
    pub outcome: Outcome,
    /// Attempts started (more than one after preemption or node failure requeues).
    pub attempts: u32,
    /// Units held by that attempt (empty if it never started or was bound to nodes).
    pub units: UnitSet,
    /// Times it was killed for running out of GPU memory (each one requeued it, or with
    /// restart policy OnFailure restarted it in place, until the retry limit, after which
    /// it ended `oom_killed`).
    pub oom_kills: u32,
    /// Times its pods were restarted in place, on the same nodes and GPUs (restart policy
    /// OnFailure: after an out-of-memory kill's CrashLoopBackOff, or when the node it was
    /// stalled on came back); each restart is a new attempt.
    pub restarts: u32,
    /// GPU time its out-of-memory attempts used before they were killed, in milli-GPU
    /// microseconds (GPUs × milli-GPU each × time).
    pub wasted_gpu_milli_us: u64,
    /// Milli-GPU its last bound attempt held over all its GPUs (an exclusive pool gives
    /// whole GPUs whatever the request); 0 when it was never bound.
    pub gpu_milli_held: u64,
    /// GPU energy of all its attempts (see [`crate::engine::GpuEnergy`]), millijoules; 0
    /// when it ran on no GPU with a power curve.
    pub gpu_energy_mj: u64,
    /// GPU time its tasks held while its gang was incomplete (milli-GPU microseconds).
    pub gang_held_gpu_milli_us: u64,
    /// From its first held task to its start (a full gang), when it was held in parts.
    pub gang_wait_us: Option<u64>,
    /// Whether the run ended with some of its tasks held and the gang incomplete.
    pub stuck_holding: bool,
    /// Why an `unfinished` job did not end: still running at the horizon, not submitted by
    /// then, or why it never started (its policy's explanation, e.g. kube-scheduler's
    /// `0/8 nodes are available: ...`). `None` for every other outcome.
    pub unfinished_reason: Option<Box<str>>,
    /// Time its attempts lost, by cause.
    pub lost: LostTime,
}

impl JobRecord {
    /// The work a job of run time `runtime` did by its end: that run time, but no more
    /// than it ran from its first start (a service replica its owner stopped completes
    /// before its run time, [`crate::controller::Action::Stop`]).
    pub fn work(&self, runtime: SimDuration) -> SimDuration {
        match (self.first_start, self.end) {
            (Some(a), Some(b)) => runtime.min(SimDuration(b.0.saturating_sub(a.0))),
            _ => runtime,
        }
    }

    /// A record of `outcome` between `start` and `end`, one attempt if it started, and
    /// nothing else (no units, GPU time, kills or reason): a base for the other fields.
    pub fn of(start: Option<SimTime>, end: Option<SimTime>, outcome: Outcome) -> Self {
        JobRecord {
            start,
            first_start: start,
            end,
            outcome,
            attempts: u32::from(start.is_some()),
            units: UnitSet::new(),
            oom_kills: 0,
            restarts: 0,
            wasted_gpu_milli_us: 0,
            gpu_milli_held: 0,
            gpu_energy_mj: 0,
            gang_held_gpu_milli_us: 0,
            gang_wait_us: None,
            stuck_holding: false,
            unfinished_reason: None,
            lost: LostTime::default(),
        }
    }
}
