//! What a node has left, as the Cluster Autoscaler's scheduling simulation sees it (its
//! `ClusterSnapshot`), and whether a pod passes the filters `kube` applies there: node
//! selector and required node affinity, NoSchedule and NoExecute taints, CPU, memory and
//! GPUs (count, model, shares).

use sim_core::cluster::{GpuSharing, NodePool};
use sim_core::constraints::{PodConstraints, TaintEffect};
use sim_core::job::TaskShape;
use sim_core::ledger::{NodeMeta, NodeUse, milli_taken};
use std::sync::Arc;

/// One node's room (a real node's, or an empty template's).
#[derive(Clone, Debug)]
pub(crate) struct Room {
    /// Milli-CPU left and capacity.
    pub cpu: u64,
    pub cpu_capacity: u64,
    /// Memory left and capacity, MiB (capacity 0: not modelled).
    pub mem: u64,
    pub mem_capacity: u64,
    /// Milli-GPU left on each GPU.
    pub gpus: Vec<u32>,
    sharing: GpuSharing,
    model: Arc<str>,
    meta: Arc<NodeMeta>,
}

impl Room {
    /// A real node, with what its pods left.
    pub fn of(n: &NodeUse) -> Room {
        Room {
            cpu: n.cpu_milli_left,
            cpu_capacity: n.cpu_milli,
            mem: n.memory_mib_left,
            mem_capacity: n.memory_mib,
            gpus: n.gpus.iter().map(|g| g.milli_left).collect(),
            sharing: n.sharing,
            model: n.gpu_model.clone(),
            meta: n.meta.clone(),
        }
    }

    /// An empty node of `pool` (a node group's template).
    pub fn template(pool: &NodePool) -> Room {
        let s = &pool.spec;
        Room {
            cpu: u64::from(s.cores) * 1000,
            cpu_capacity: u64::from(s.cores) * 1000,
            mem: s.memory_mib,
            mem_capacity: s.memory_mib,
            gpus: vec![1000; s.gpus.len()],
            sharing: pool.sharing,
            model: s.gpus.first().map_or_else(|| Arc::from(""), |g| Arc::from(g.model.as_str())),
            meta: Arc::new(NodeMeta {
                labels: s.labels.clone(),
                taints: s.taints.clone(),
                topology: s.topology.clone(),
            }),
        }
    }

    /// Whether one task of a job (`models`: the GPU models it accepts, empty for any;
    /// `c`: its placement constraints) fits here now.
    pub fn fits(&self, task: &TaskShape, models: &[String], c: Option<&PodConstraints>) -> bool {
        let placeable = match c {
            Some(c) => c.node_matches(&self.meta.labels) && c.tolerates_all(&self.meta.taints),
            None => self.meta.taints.iter().all(|t| t.effect == TaintEffect::PreferNoSchedule),
        };
        if !placeable || self.cpu < task.cpu_milli() || (self.mem_capacity > 0 && self.mem < task.memory_mib) {
            return false;
        }
        if task.gpus == 0 {
            return true;
        }
        if !models.is_empty() && !models.iter().any(|m| **m == *self.model) {
            return false;
        }
        let take = milli_taken(self.sharing, task);
        self.gpus.iter().filter(|&&g| g >= take).count() >= task.gpus as usize
    }

    /// Takes one task (that fits) here: its CPU and memory, and the first GPUs with room.
    pub fn take(&mut self, task: &TaskShape) {
        self.cpu -= task.cpu_milli();
        if self.mem_capacity > 0 {
            self.mem -= task.memory_mib;
        }
        let take = milli_taken(self.sharing, task);
        let mut want = task.gpus;
        for g in self.gpus.iter_mut() {
            if want == 0 {
                break;
            }
            if *g >= take {
                *g -= take;
                want -= 1;
            }
        }
    }

    /// Its GPUs requested, in thousandths of its GPUs (0 without GPUs).
    pub fn gpu_use_permille(&self) -> u64 {
        if self.gpus.is_empty() {
            return 0;
        }
        let taken: u64 = self.gpus.iter().map(|&g| 1000 - u64::from(g.min(1000))).sum();
        taken / self.gpus.len() as u64
    }

    /// Its CPU or memory requested, whichever is the larger share, in thousandths.
    pub fn cpu_mem_use_permille(&self) -> u64 {
        let share = |cap: u64, left: u64| ((cap - left.min(cap)) * 1000).checked_div(cap).unwrap_or(0);
        share(self.cpu_capacity, self.cpu).max(share(self.mem_capacity, self.mem))
    }
}
