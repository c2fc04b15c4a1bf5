//! The cluster model: node pools of identical nodes, node states, topology.
//!
//! Nodes are kept in pools (`count` identical nodes), as Kubernetes node pools and Slurm
//! node lines (`NodeName=n[001-128] CPUs=...`) describe them, so a 93,312-processor SWF
//! machine costs one pool entry, not 93,312 structs. Node ids are dense: pool-major.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Dense index of a node in its cluster.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeId(pub u32);

/// One GPU of a node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuSpec {
    /// Model name, e.g. `A100-SXM4-80GB`.
    pub model: String,
    /// Device memory in MiB.
    pub memory_mib: u64,
    /// Board power against utilization (from a hardware profile); `None`: unknown, and
    /// the GPU counts for no energy.
    #[serde(default)]
    pub power: Option<crate::power::PowerCurve>,
}

/// Where a node sits in the network: zone / rack / switch (Kubernetes topology labels,
/// Slurm topology/tree switches).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyPath {
    /// Zone (`topology.kubernetes.io/zone`).
    pub zone: Option<String>,
    /// Rack.
    pub rack: Option<String>,
    /// Leaf switch.
    pub switch: Option<String>,
}

/// What every node of a pool has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSpec {
    /// CPU cores (schedulable processors).
    pub cores: u32,
    /// Host memory in MiB.
    pub memory_mib: u64,
    /// GPUs.
    pub gpus: Vec<GpuSpec>,
    /// Labels (`key=value`), as Kubernetes node labels and Slurm node features.
    pub labels: BTreeMap<String, String>,
    /// Taints (Kubernetes): pods that do not tolerate them are kept off or avoid it.
    #[serde(default)]
    pub taints: Vec<crate::constraints::Taint>,
    /// Network position.
    pub topology: TopologyPath,
}

impl NodeSpec {
    /// A node with `cores` cores and nothing else.
    pub fn cores_only(cores: u32) -> Self {
        NodeSpec {
            cores,
            memory_mib: 0,
            gpus: Vec::new(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            topology: TopologyPath::default(),
        }
    }
}

/// How the GPUs of a node pool are shared between jobs (docs/sources.md#gpu-sharing-and-gpu-memory).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GpuSharing {
    /// One job per GPU (`nvidia.com/gpu` from the NVIDIA device plugin; Slurm GRES). A
    /// job whose actual peak exceeds the GPU's memory runs out of memory.
    #[default]
    Exclusive,
    /// Several jobs per GPU with no memory isolation: NVIDIA time-slicing ("no memory or
    /// fault-isolation between replicas"), MPS without limits, Aliyun gpushare (isolation
    /// an explicit non-goal). When the actual peaks of the jobs on a GPU exceed its
    /// memory, the allocation of the job that arrived last fails.
    Shared,
    /// Several jobs per GPU, each held to its declared memory (HAMi `nvidia.com/gpumem`
    /// enforced by CUDA interception, Volcano vGPU, MIG): a job whose own actual peak
    /// exceeds its declared limit is killed, and only it.
    Isolated,
}

/// `count` identical nodes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodePool {
    /// Pool name (node names are `name-<index>`).
    pub name: String,
    /// How many nodes.
    pub count: u32,
    /// What each has.
    pub spec: NodeSpec,
    /// How its GPUs are shared.
    #[serde(default)]
    pub sharing: GpuSharing,
    /// When autoscalers may resize it: its size range and how its nodes come up
    /// (`count` is then the group's maximum size).
    #[serde(default)]
    pub group: Option<NodeGroup>,
}

/// A pool that autoscalers resize: a Cluster Autoscaler node group, a Karpenter instance
/// type. Its pool's `count` nodes are its maximum size; those past `initial` start
/// absent (not in the cluster, not billed) and an autoscaler adds and removes them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeGroup {
    /// The fewest nodes it keeps (`--nodes=min:max:group` of the Cluster Autoscaler).
    pub min: u32,
    /// Nodes present at the start.
    pub initial: u32,
    /// From the cloud's create request until the node is Ready (boot, kubelet
    /// registration).
    pub ready: Delay,
    /// From the create request until its GPUs are allocatable (driver install and the
    /// device plugin's registration), never before Ready. Until then the node takes no
    /// pods: GPU nodes carry a NoSchedule GPU taint that only GPU pods tolerate.
    pub gpus_ready: Delay,
    /// Price of one node-hour in millionths of the currency (the expanders' and the
    /// provisioners' view; the bill reads `price_per_hour` itself).
    pub price_micros: u64,
    /// Spot (preemptible) capacity.
    pub spot: bool,
    /// Its priority for the Cluster Autoscaler's `priority` expander (higher first).
    pub priority: i32,
}

/// A provisioning delay: fixed, uniform, or lognormal (median and shape σ in thousandths).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Delay {
    /// Always this long.
    Fixed(crate::time::SimDuration),
    /// Uniform between the two.
    Uniform(crate::time::SimDuration, crate::time::SimDuration),
    /// Lognormal: the median and σ (thousandths).
    LogNormal(crate::time::SimDuration, u32),
}

/// A node's administrative/health state, as Slurm's node states.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeState {
    /// Accepts new work.
    #[default]
    Up,
    /// Runs its current jobs to completion but takes no new ones (Slurm DRAIN).
    Draining,
    /// Out of service: its jobs are requeued and it takes no work (Slurm DOWN, a failure).
    Down,
    /// Not part of the cluster (removed by scaling in, or not added yet): as `Down`, but
    /// not a failure (Slurm's powered-down cloud nodes, a Kubernetes node deleted by the
    /// Cluster Autoscaler).
    Absent,
}

/// A cluster: node pools plus the size of one schedulable unit.
///
/// The engine schedules **units**: the cores of every node, numbered node by node. A
/// Parallel Workloads Archive machine of N processors is [`Cluster::processor_pool`], N
/// one-core nodes, so unit `i` is processor `i`; a Batsim platform of `nb_res` machines is
/// `nb_res` one-core nodes, so unit `i` is machine `i`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The pools, in node-id order.
    pub pools: Vec<NodePool>,
}

impl Cluster {
    /// N interchangeable processors (an SWF machine), one unit each.
    pub fn processor_pool(procs: u32) -> Self {
        Cluster {
            pools: vec![NodePool {
                name: "proc".into(),
                count: procs,
                spec: NodeSpec::cores_only(1),
                sharing: GpuSharing::Exclusive,
                group: None,
            }],
        }
    }

    /// N whole machines (a Batsim platform), one unit each.
    pub fn machines(n: u32) -> Self {
        Cluster {
            pools: vec![NodePool {
                name: "host".into(),
                count: n,
                spec: NodeSpec::cores_only(1),
                sharing: GpuSharing::Exclusive,
                group: None,
            }],
        }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> u32 {
        self.pools.iter().map(|p| p.count).sum()
    }

    /// GPUs over all nodes.
    pub fn total_gpus(&self) -> u64 {
        self.pools.iter().map(|p| p.count as u64 * p.spec.gpus.len() as u64).sum()
    }

    /// Total schedulable units (cores over all nodes).
    pub fn total_units(&self) -> u64 {
        self.pools.iter().map(|p| p.count as u64 * p.spec.cores as u64).sum()
    }

    /// The spec and the first unit of a node.
    pub fn node(&self, id: NodeId) -> Option<(&NodeSpec, u64)> {
        let mut first_node = 0u32;
        let mut first_unit = 0u64;
        for p in &self.pools {
            if id.0 < first_node + p.count {
                let k = (id.0 - first_node) as u64;
                return Some((&p.spec, first_unit + k * p.spec.cores as u64));
            }
            first_node += p.count;
            first_unit += p.count as u64 * p.spec.cores as u64;
        }
        None
    }

    /// Each pool with the ids of its nodes, in pool order.
    pub fn pool_nodes(&self) -> impl Iterator<Item = (&NodePool, std::ops::Range<u32>)> + '_ {
        self.pools.iter().scan(0u32, |first, p| {
            let nodes = *first..*first + p.count;
            *first += p.count;
            Some((p, nodes))
        })
    }

    /// The pool a node belongs to.
    pub fn pool_of(&self, id: NodeId) -> Option<&NodePool> {
        let mut first_node = 0u32;
        for p in &self.pools {
            if id.0 < first_node + p.count {
                return Some(p);
            }
            first_node += p.count;
        }
        None
    }

    /// The nodes of autoscaled pools past their group's initial size: absent at the start.
    pub fn initially_absent(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.pool_nodes().flat_map(|(p, nodes)| {
            let present = p.group.as_ref().map_or(p.count, |g| g.initial.min(p.count));
            (nodes.start + present..nodes.end).map(NodeId)
        })
    }

    /// Every node's spec and sharing mode, in node-id order.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &NodeSpec, GpuSharing)> + '_ {
        self.pools
            .iter()
            .flat_map(|p| std::iter::repeat_n((&p.spec, p.sharing), p.count as usize))
            .enumerate()
            .map(|(i, (s, g))| (NodeId(i as u32), s, g))
    }

    /// The node that owns a unit.
    pub fn node_of_unit(&self, unit: u64) -> Option<NodeId> {
        let mut first_node = 0u32;
        let mut first_unit = 0u64;
        for p in &self.pools {
            let units = p.count as u64 * p.spec.cores as u64;
            if unit < first_unit + units {
                return Some(NodeId(first_node + ((unit - first_unit) / p.spec.cores as u64) as u32));
            }
            first_node += p.count;
            first_unit += units;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_map_to_nodes() {
        let c = Cluster {
            pools: vec![
                NodePool {
                    name: "a".into(),
                    count: 2,
                    spec: NodeSpec::cores_only(4),
                    sharing: GpuSharing::Exclusive,
                    group: None,
                },
                NodePool {
                    name: "b".into(),
                    count: 3,
                    spec: NodeSpec::cores_only(2),
                    sharing: GpuSharing::Exclusive,
                    group: None,
                },
            ],
        };
        assert_eq!(c.total_units(), 14);
        assert_eq!(c.node_count(), 5);
        assert_eq!(c.node_of_unit(0), Some(NodeId(0)));
        assert_eq!(c.node_of_unit(7), Some(NodeId(1)));
        assert_eq!(c.node_of_unit(8), Some(NodeId(2)));
        assert_eq!(c.node_of_unit(13), Some(NodeId(4)));
        assert_eq!(c.node_of_unit(14), None);
        assert_eq!(c.node(NodeId(3)).map(|(s, u)| (s.cores, u)), Some((2, 10)));
    }
}
