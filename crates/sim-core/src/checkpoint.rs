//! Periodic checkpoints: what an interruption costs a job that saves its state every
//! interval, and the interval that minimises it.
//!
//! A job with checkpointing ([`crate::SimConfig::checkpointing`]) runs in segments: it
//! computes for `interval`, pauses for `cost` to write a checkpoint, computes again, and so
//! on; no checkpoint is written once its work is done. An attempt that resumes from a
//! checkpoint first spends `restore` reading it. When an attempt is interrupted (its node
//! fails, it is evicted, preempted or requeued), the work of the last completed checkpoint
//! is kept and everything after it is lost — the compute since, a write under way, the
//! restore. This is the model of Young (1974) and Daly (2006) that LANL's Batsim fork
//! (`dump-time`, `read-time`, `checkpoint-interval`) and AIReSim simulate, and whose
//! effective training time ratio is, to first order,
//! `ETTR ≈ 1 − C/τ − (τ/2 + R)/M` (C the cost, τ the interval, R the restore, M the mean
//! time between failures the job sees).
//!
//! ```
//! use sim_core::checkpoint::{CheckpointInterval, Checkpointing};
//! use sim_core::time::SimDuration;
//! let s = SimDuration::from_secs;
//! let c = Checkpointing { interval: CheckpointInterval::Every(s(600)), cost: s(60), restore: s(120) };
//! let tau = c.interval_for(1);
//! // 2,000 s of work: checkpoints after 600, 1,200 and 1,800 s of it, 180 s of writes.
//! assert_eq!(c.wall(tau, s(2000), false), s(2180));
//! // Resuming from a checkpoint adds the restore.
//! assert_eq!(c.wall(tau, s(2000), true), s(2300));
//! // Stopped 1,300 s in: the second write (1,260–1,320 s) is under way, the first kept.
//! assert_eq!(c.saved(tau, s(2000), false, s(1300)), s(600));
//! assert_eq!(c.saved(tau, s(2000), false, s(1320)), s(1200));
//! assert_eq!(c.saved(tau, s(2000), false, s(659)), s(0));
//! assert_eq!(c.saved(tau, s(2000), false, s(660)), s(600));
//! // Young's interval for a 60 s checkpoint and a 24 h MTBF on one node: sqrt(2·60·86400).
//! let auto = Checkpointing { interval: CheckpointInterval::Auto { node_mtbf: s(86_400) }, ..c };
//! assert_eq!(auto.interval_for(1).as_micros() / 1_000_000, 3219);
//! // A job on 4 nodes sees failures 4 times as often: half the interval.
//! assert_eq!(auto.interval_for(4).as_micros() / 1_000_000, 1609);
//! ```

use crate::time::SimDuration;

/// How often a job checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckpointInterval {
    /// Every this much compute.
    Every(SimDuration),
    /// Young's optimum `sqrt(2 C M)` (Young 1974, "A first order approximation to the
    /// optimum checkpoint interval", CACM 17(9); Daly 2006's higher-order estimate differs
    /// by less than `C`), where `M` is the mean time between failures the job sees: a node's
    /// `node_mtbf` over the nodes it runs on (failures of independent nodes add up).
    Auto {
        /// Mean time between failures of one node.
        node_mtbf: SimDuration,
    },
}

/// A job's own checkpoints, in place of the run's (`--checkpoint`): the native format's
/// `checkpoint` field, for workloads whose jobs or job classes checkpoint differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobCheckpoint {
    /// It writes none: an interrupted attempt starts over, whatever the run says.
    Never,
    /// A checkpoint after each `interval` of compute (`None`: Young's interval for the
    /// node failure rate the run knows, [`crate::SimConfig::node_mtbf`]), written in
    /// `cost`, read back in `restore`.
    Every {
        /// Compute between checkpoints; `None` for Young's interval.
        interval: Option<SimDuration>,
        /// Writing one.
        cost: SimDuration,
        /// Reading one back.
        restore: SimDuration,
    },
}

impl JobCheckpoint {
    /// Its checkpointing, given the run's node MTBF (`None` when unknown: an `auto`
    /// interval then writes none).
    pub fn checkpointing(self, node_mtbf: Option<SimDuration>) -> Option<Checkpointing> {
        match self {
            JobCheckpoint::Never => None,
            JobCheckpoint::Every { interval, cost, restore } => {
                let interval = match interval {
                    Some(d) => CheckpointInterval::Every(d),
                    None => CheckpointInterval::Auto { node_mtbf: node_mtbf? },
                };
                Some(Checkpointing { interval, cost, restore })
            }
        }
    }
}

/// Periodic checkpoints (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpointing {
    /// Compute between checkpoints.
    pub interval: CheckpointInterval,
    /// Writing one (the job pauses).
    pub cost: SimDuration,
    /// Reading one back when an attempt resumes from it.
    pub restore: SimDuration,
}

impl Checkpointing {
    /// The interval of a job running on `nodes` nodes (at least 1 µs).
    pub fn interval_for(&self, nodes: u32) -> SimDuration {
        match self.interval {
            CheckpointInterval::Every(d) => SimDuration(d.0.max(1)),
            CheckpointInterval::Auto { node_mtbf } => {
                let m = u128::from(node_mtbf.0) / u128::from(nodes.max(1));
                let t = (2 * u128::from(self.cost.0) * m).isqrt();
                SimDuration((t as u64).max(1))
            }
        }
    }

    /// Checkpoints written while doing `work`: one after each `tau` of it, none at its end.
    fn writes(tau: SimDuration, work: SimDuration) -> u64 {
        work.0.saturating_sub(1) / tau.0.max(1)
    }

    /// How long an attempt with `work` to do takes: the work, its checkpoints' writes, and
    /// the restore when it resumes from a checkpoint (`restoring`).
    pub fn wall(&self, tau: SimDuration, work: SimDuration, restoring: bool) -> SimDuration {
        let restore = if restoring { self.restore.0 } else { 0 };
        let writes = Self::writes(tau, work).saturating_mul(self.cost.0);
        SimDuration(restore.saturating_add(work.0).saturating_add(writes))
    }

    /// The work an attempt with `work` to do has saved when stopped `elapsed` after it
    /// started: that of its last completed checkpoint.
    pub fn saved(&self, tau: SimDuration, work: SimDuration, restoring: bool, elapsed: SimDuration) -> SimDuration {
        self.spent(tau, work, restoring, elapsed).kept
    }

    /// How the first `elapsed` of an attempt with `work` to do were spent: reading a
    /// checkpoint back, writing checkpoints (a write under way counts), and the work its
    /// last completed checkpoint keeps; the rest is compute since then.
    pub fn spent(&self, tau: SimDuration, work: SimDuration, restoring: bool, elapsed: SimDuration) -> Spent {
        let restore = if restoring { self.restore.0.min(elapsed.0) } else { 0 };
        let computing = elapsed.0 - restore;
        let tau = tau.0.max(1);
        let segment = tau.saturating_add(self.cost.0);
        let (full, rest) = (computing / segment, computing % segment);
        let max_writes = Self::writes(SimDuration(tau), work);
        let done = full.min(max_writes);
        let partial = if full < max_writes && rest > tau { rest - tau } else { 0 };
        Spent {
            restore: SimDuration(restore),
            writes: SimDuration(done.saturating_mul(self.cost.0).saturating_add(partial)),
            kept: SimDuration(done.saturating_mul(tau).min(work.0)),
        }
    }
}

/// How part of an attempt was spent ([`Checkpointing::spent`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spent {
    /// Reading a checkpoint back.
    pub restore: SimDuration,
    /// Writing checkpoints.
    pub writes: SimDuration,
    /// The work the last completed checkpoint keeps.
    pub kept: SimDuration,
}
