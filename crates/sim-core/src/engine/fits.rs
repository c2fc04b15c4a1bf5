//! Whether a job submitted to a policy that binds nodes could ever run on the cluster:
//! one that could not is `rejected` at submit with the reason, as Kubernetes' scheduler
//! reports `0/N nodes are available` for ever and Slurm refuses at submit a job that no
//! partition's nodes can satisfy ("Requested node configuration is not available"),
//! instead of waiting until the run ends.
//!
//! Capacity is the nodes' own, empty, by the ledger's rules ([`crate::ledger::Ledger::check`]):
//! milli-CPU, host memory where stated, GPUs of an allowed model, each GPU handing out
//! whole GPUs on exclusive pools and milli-GPU shares on sharing pools. Node labels can
//! change during a run, so the node selector is held against them only when no attached
//! controller may relabel nodes ([`crate::controller::Controller::may_relabel`]).

use super::Engine;
use crate::TaskShape;
use crate::cluster::NodePool;
use crate::job::Job;
use crate::ledger::{MILLI, milli_taken};
use crate::outcome::RejectReason;

/// Whether the pool's GPUs are of one of `models`.
fn model_ok(pool: &NodePool, models: &[String]) -> bool {
    pool.spec.gpus.first().is_some_and(|g| models.contains(&g.model))
}

/// How many tasks of `task` one empty node of `pool` holds (0: not one).
fn tasks_per_node(pool: &NodePool, task: &TaskShape, models: &[String]) -> u64 {
    let spec = &pool.spec;
    let cpu = task.cpu_milli();
    let mut most = (spec.cores as u64 * 1000).checked_div(cpu).unwrap_or(u64::MAX);
    if spec.memory_mib > 0 && task.memory_mib > 0 {
        most = most.min(spec.memory_mib / task.memory_mib);
    }
    if task.gpus > 0 {
        if !models.is_empty() && !model_ok(pool, models) {
            return 0;
        }
        let take = milli_taken(pool.sharing, task);
        let per_gpu = (MILLI / take.max(1)) as u64;
        most = most.min(spec.gpus.len() as u64 * per_gpu / task.gpus as u64);
    }
    most
}

impl Engine<'_> {
    /// Why `job` could never run under a policy that binds nodes, if it could not: no
    /// node has GPUs of a model it accepts (`no_matching_gpu_model`; names are compared
    /// exactly, the run's loader maps a trace's names onto the cluster's), no node could
    /// hold one of its tasks (`no_fitting_node`), none that its node selector
    /// or required affinity allows could (`no_matching_node`), or all the nodes together
    /// could not hold the tasks it needs to start (`larger_than_cluster`).
    pub(super) fn never_fits(&self, job: &Job) -> Option<RejectReason> {
        let pools = &self.cluster.pools;
        if job.task.gpus > 0 && !job.gpu_models.is_empty() && !pools.iter().any(|p| model_ok(p, &job.gpu_models)) {
            return Some(RejectReason::NoMatchingGpuModel);
        }
        let selector = job.constraints.as_deref().filter(|_| !self.controllers.iter().any(|c| c.may_relabel()));
        let (mut fits_somewhere, mut fits_allowed, mut room) = (false, false, 0u64);
        for pool in pools {
            let per_node = tasks_per_node(pool, &job.task, &job.gpu_models);
            if per_node == 0 || pool.count == 0 {
                continue;
            }
            fits_somewhere = true;
            if selector.is_some_and(|c| !c.node_matches(&pool.spec.labels)) {
                continue;
            }
            fits_allowed = true;
            room = room.saturating_add(per_node.saturating_mul(pool.count as u64));
        }
        if !fits_somewhere {
            Some(RejectReason::NoFittingNode)
        } else if !fits_allowed {
            Some(RejectReason::NoMatchingNode)
        } else if room < job.needed_tasks() as u64 {
            Some(RejectReason::LargerThanCluster)
        } else {
            None
        }
    }
}
