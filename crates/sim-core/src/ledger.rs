//! Per-node resource accounting for placed jobs: milli-CPU, host memory and, per GPU,
//! milli-GPU, declared GPU memory and actual peak GPU memory.
//!
//! Jobs started with [`crate::policy::Decision::Bind`] name their node and GPUs, as a
//! Kubernetes scheduler's Bind does (and Alibaba's Open-Gpu-Share Reserve, which records
//! the GPU index of a shared pod). The ledger is what their placement is checked
//! against. The count of free units ([`crate::units::FreePool`]) is not touched by bound
//! jobs: a run mixes the two only where a policy wants it.

use crate::cluster::{Cluster, GpuSharing, NodeId};
use crate::job::TaskShape;
use serde::{Deserialize, Serialize};

/// Milli-GPU in one whole GPU.
pub const MILLI: u32 = 1000;

/// Where one task of a job runs: a node and GPU indices on it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TaskBinding {
    /// The node.
    pub node: NodeId,
    /// GPU indices on the node (as many as the task has GPUs).
    pub gpus: Vec<u8>,
}

/// One GPU's use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuUse {
    /// Milli-GPU not taken (0..=1000).
    pub milli_left: u32,
    /// Device memory in MiB.
    pub memory_mib: u64,
    /// Sum of the declared GPU memory of the jobs on it.
    pub declared_mib: u64,
    /// Sum of the actual peaks of the jobs on it that did not fail their allocation.
    pub peak_mib: u64,
}

impl GpuUse {
    /// Declared memory not yet promised to a job.
    pub fn declared_left(&self) -> u64 {
        self.memory_mib.saturating_sub(self.declared_mib)
    }
}

/// Kinds of GPU request, as the FGD paper's GpuClustering groups pods ("affinity").
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GpuAffinity {
    /// One shared GPU (less than 1000 milli).
    Shared,
    /// That many whole GPUs.
    Whole(u32),
}

impl GpuAffinity {
    /// The affinity of a task, `None` without GPUs.
    pub fn of(task: &TaskShape) -> Option<GpuAffinity> {
        match task.gpus {
            0 => None,
            1 if task.gpu_milli() < MILLI => Some(GpuAffinity::Shared),
            n => Some(GpuAffinity::Whole(n)),
        }
    }
}

/// One node's use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeUse {
    /// Milli-CPU capacity.
    pub cpu_milli: u64,
    /// Milli-CPU not requested.
    pub cpu_milli_left: u64,
    /// Host memory capacity.
    pub memory_mib: u64,
    /// Host memory not requested.
    pub memory_mib_left: u64,
    /// The GPUs.
    /// (Shared until changed: copies of a ledger share the GPU lists of the nodes they do
    /// not change.)
    pub gpus: std::sync::Arc<Vec<GpuUse>>,
    /// GPU model name of the node ("" without GPUs).
    pub gpu_model: std::sync::Arc<str>,
    /// How its GPUs are shared.
    pub sharing: GpuSharing,
    /// Tasks placed on it, by GPU affinity (sorted, no zero counts).
    pub affinity: Vec<(GpuAffinity, u32)>,
    /// Tasks placed on it.
    pub tasks: u32,
    /// Tasks placed on it that request no CPU, and that request no memory: kube-scheduler
    /// scores each of them at its non-zero default requests (kubernetes
    /// `pkg/scheduler/util/non_zero.go`: 100 milli-CPU, 200 MiB).
    pub unrequested: [u32; 2],
    /// Its labels and taints, shared by the nodes of its pool.
    pub meta: std::sync::Arc<NodeMeta>,
    /// The pods (tasks) on it with labels or inter-pod terms, with their job index
    /// ([`crate::constraints::PodInfo`]); the other `tasks` have neither.
    pub pods: Vec<(u32, std::sync::Arc<crate::constraints::PodInfo>)>,
    /// How many of `pods` have inter-pod terms (kube-scheduler's `PodsWithAffinity`).
    pub term_pods: u32,
}

/// What placement constraints look at on a node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeMeta {
    /// Labels.
    pub labels: std::collections::BTreeMap<String, String>,
    /// Taints.
    pub taints: Vec<crate::constraints::Taint>,
    /// Network position.
    pub topology: crate::cluster::TopologyPath,
}

impl NodeUse {
    /// The node's domain for a topology key: `node` (or `kubernetes.io/hostname`) is the
    /// node itself, `zone`, `rack` and `switch` (or their `topology.kubernetes.io/` names)
    /// its network position, any other key a node label. `None` when it has none.
    pub fn domain(&self, node: usize, key: &str) -> Option<String> {
        let t = &self.meta.topology;
        match key {
            "node" | "kubernetes.io/hostname" => Some(node.to_string()),
            "zone" | "topology.kubernetes.io/zone" => t.zone.clone().or_else(|| self.meta.labels.get(key).cloned()),
            "rack" => t.rack.clone().or_else(|| self.meta.labels.get(key).cloned()),
            "switch" => t.switch.clone().or_else(|| self.meta.labels.get(key).cloned()),
            _ => self.meta.labels.get(key).cloned(),
        }
    }
}

/// Milli-GPU a task takes on each of its GPUs on a node shared as `sharing`: exclusive
/// pools hand out whole GPUs whatever the request (the device plugin counts integers).
pub fn milli_taken(sharing: GpuSharing, task: &TaskShape) -> u32 {
    if sharing == GpuSharing::Exclusive && task.gpus > 0 { MILLI } else { task.gpu_milli() }
}

impl NodeUse {
    /// Sum of milli-GPU left.
    pub fn gpu_milli_left(&self) -> u64 {
        self.gpus.iter().map(|g| g.milli_left as u64).sum()
    }
    /// GPUs nobody uses.
    pub fn free_gpus(&self) -> usize {
        self.gpus.iter().filter(|g| g.milli_left == MILLI).count()
    }
    /// Milli-GPU a task takes on each of its GPUs here: exclusive pools hand out whole
    /// GPUs whatever the request (the device plugin counts integers).
    pub fn milli_taken(&self, task: &TaskShape) -> u32 {
        milli_taken(self.sharing, task)
    }
    /// Declared GPU memory of a task per GPU here: its declaration, or else, on an
    /// `isolated` pool, the whole device (HAMi's default for a vGPU with neither
    /// `nvidia.com/gpumem` nor `gpumem-percentage`: 100 % of the device memory, both the
    /// scheduler's reservation and the limit; HAMi v2.x `pkg/device/nvidia/device.go`
    /// `GenerateResourceRequests`, `defaultMemory: 0`), elsewhere a share of the device
    /// memory proportional to its milli-GPU (gpushare's "compute ∝ memory").
    pub fn declared_of(&self, task: &TaskShape, gpu: usize) -> u64 {
        if task.gpu_memory_mib > 0 {
            task.gpu_memory_mib
        } else if self.sharing == GpuSharing::Isolated {
            self.gpus.get(gpu).map_or(0, |g| g.memory_mib)
        } else {
            self.gpus.get(gpu).map_or(0, |g| g.memory_mib * self.milli_taken(task) as u64 / MILLI as u64)
        }
    }
}

/// Why a binding was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// The node does not exist.
    #[error("node {0} does not exist")]
    UnknownNode(u32),
    /// Wrong number of GPU indices.
    #[error("task needs {need} GPUs, binding gives {got}")]
    GpuCount {
        /// Needed.
        need: u32,
        /// Given.
        got: usize,
    },
    /// A GPU index is out of range or repeated.
    #[error("GPU index {0} is not a distinct GPU of node {1}")]
    BadGpu(u8, u32),
    /// Not enough CPU or memory.
    #[error("node {0} lacks CPU or memory")]
    NodeFull(u32),
    /// A GPU lacks milli-GPU.
    #[error("GPU {0} of node {1} lacks milli-GPU")]
    GpuFull(u8, u32),
    /// The GPU model is not one the job accepts.
    #[error("node {0}'s GPU model is not one the job accepts")]
    Model(u32),
}

/// All nodes' use.
#[derive(Clone, Debug)]
pub struct Ledger {
    nodes: Vec<NodeUse>,
    versions: Vec<u64>,
    /// Or-ed into the version of every node this ledger changes: 0 for an original,
    /// [`SCRATCH`] for a scratch copy.
    mark: u64,
    /// Bumped by every change of a node's labels or taints (controllers' actions).
    meta_epoch: u64,
    /// Each node's labels and taints at the start (shared by a pool's nodes).
    origin: std::sync::Arc<[std::sync::Arc<NodeMeta>]>,
    /// Nodes holding a pod with inter-pod terms ([`NodeUse::term_pods`] above 0).
    term_nodes: u32,
    /// The nodes changed (bumped), in order, from change number `log_start` on: lets a
    /// copy or a cache follow the changes without looking at every node. Only the latest
    /// are kept; a follower further behind looks at every node.
    log: Vec<u32>,
    log_start: u64,
    /// For a scratch copy: the change numbers of its base and of itself at its last
    /// [`Ledger::sync_from`].
    synced: (u64, u64),
    /// How many nodes have each number of wholly free GPUs (index: that number).
    free_hist: Vec<u32>,
}

/// The version bit of nodes changed on a scratch copy.
const SCRATCH: u64 = 1 << 63;

impl Ledger {
    /// An empty ledger of `cluster` (every node's CPU is its cores × 1000).
    pub fn new(cluster: &Cluster) -> Self {
        let metas: Vec<std::sync::Arc<NodeMeta>> = cluster
            .pools
            .iter()
            .map(|p| {
                std::sync::Arc::new(NodeMeta {
                    labels: p.spec.labels.clone(),
                    taints: p.spec.taints.clone(),
                    topology: p.spec.topology.clone(),
                })
            })
            .collect();
        let meta_of = cluster.pools.iter().enumerate().flat_map(|(i, p)| std::iter::repeat_n(i, p.count as usize));
        let nodes = cluster
            .nodes()
            .zip(meta_of)
            .map(|((_, spec, sharing), pool)| NodeUse {
                cpu_milli: spec.cores as u64 * 1000,
                cpu_milli_left: spec.cores as u64 * 1000,
                memory_mib: spec.memory_mib,
                memory_mib_left: spec.memory_mib,
                gpus: spec
                    .gpus
                    .iter()
                    .map(|g| GpuUse { milli_left: MILLI, memory_mib: g.memory_mib, declared_mib: 0, peak_mib: 0 })
                    .collect::<Vec<_>>()
                    .into(),
                gpu_model: std::sync::Arc::from(spec.gpus.first().map_or("", |g| g.model.as_str())),
                sharing,
                affinity: Vec::new(),
                tasks: 0,
                unrequested: [0, 0],
                meta: metas[pool].clone(),
                pods: Vec::new(),
                term_pods: 0,
            })
            .collect::<Vec<_>>();
        Ledger::of_nodes(nodes)
    }

    /// A ledger of `nodes`, all unused.
    fn of_nodes(nodes: Vec<NodeUse>) -> Self {
        let versions = vec![0; nodes.len()];
        let origin = nodes.iter().map(|n| n.meta.clone()).collect();
        let mut free_hist = vec![0u32; nodes.iter().map(|n| n.gpus.len()).max().unwrap_or(0) + 1];
        for n in &nodes {
            free_hist[n.gpus.len()] += 1;
        }
        Ledger {
            nodes,
            versions,
            mark: 0,
            meta_epoch: 0,
            origin,
            term_nodes: 0,
            log: Vec::new(),
            log_start: 0,
            synced: (0, 0),
            free_hist,
        }
    }

    /// A counter per node, bumped by every change to it (for caches of per-node results).
    pub fn versions(&self) -> &[u64] {
        &self.versions
    }

    /// A copy of this ledger to change and later bring back in line with it
    /// ([`Ledger::sync_from`]): every node it changes gets a version this ledger's
    /// nodes never have.
    pub fn scratch_copy(&self) -> Ledger {
        let mut copy = self.clone();
        copy.mark = SCRATCH;
        copy.log.clear();
        copy.log_start = 0;
        copy.synced = (self.change_count(), 0);
        copy
    }

    /// How many nodes have at least `k` wholly free GPUs (a pod asking `k` whole GPUs fits
    /// no other node).
    pub fn nodes_with_free_gpus(&self, k: u32) -> u32 {
        self.free_hist.iter().skip(k as usize).sum()
    }

    /// Moves node `i` in the histogram of wholly free GPUs from `before`.
    fn refree(&mut self, i: usize, before: usize) {
        let after = self.nodes[i].free_gpus();
        if after != before {
            self.free_hist[before] -= 1;
            self.free_hist[after] += 1;
        }
    }

    /// How many node changes this ledger has seen.
    pub fn change_count(&self) -> u64 {
        self.log_start + self.log.len() as u64
    }

    /// The nodes changed since change number `since` (in order, with repeats), or `None`
    /// when they are no longer all known (look at every node's version instead).
    pub fn changes_since(&self, since: u64) -> Option<&[u32]> {
        let from = since.checked_sub(self.log_start)?;
        self.log.get(from as usize..)
    }

    /// Makes this scratch copy of `base` ([`Ledger::scratch_copy`]) equal to it again,
    /// copying only the nodes whose versions differ: those `base` changed since, and those
    /// this copy changed. A copy of another size is replaced whole.
    pub fn sync_from(&mut self, base: &Ledger) {
        if self.nodes.len() != base.nodes.len() {
            *self = base.scratch_copy();
            return;
        }
        self.meta_epoch = base.meta_epoch;
        self.term_nodes = base.term_nodes;
        let ours = self.changes_since(self.synced.1).map(<[u32]>::to_vec);
        if let (Some(theirs), Some(ours)) = (base.changes_since(self.synced.0), ours) {
            // Only the nodes either changed since the last sync can differ.
            for &i in theirs.iter().chain(&ours) {
                let i = i as usize;
                if self.versions[i] != base.versions[i] {
                    let before = self.nodes[i].free_gpus();
                    self.nodes[i].clone_from(&base.nodes[i]);
                    self.versions[i] = base.versions[i];
                    self.refree(i, before);
                }
            }
        } else {
            for i in 0..self.nodes.len() {
                if self.versions[i] != base.versions[i] {
                    let before = self.nodes[i].free_gpus();
                    self.nodes[i].clone_from(&base.nodes[i]);
                    self.versions[i] = base.versions[i];
                    self.refree(i, before);
                }
            }
        }
        debug_assert_eq!(self.free_hist, base.free_hist);
        self.synced = (base.change_count(), self.change_count());
    }

    fn bump(&mut self, node: usize) {
        self.versions[node] = (self.versions[node] + 1) | self.mark;
        self.log.push(node as u32);
        let keep = 4 * self.nodes.len().max(256);
        if self.log.len() > 2 * keep {
            let drop = self.log.len() - keep;
            self.log.drain(..drop);
            self.log_start += drop as u64;
        }
    }

    /// A ledger of no node (for runs whose policy binds nothing).
    pub fn empty() -> Self {
        Ledger::of_nodes(Vec::new())
    }

    /// Changes a node's labels or taints (a controller's action). Its meta stops being
    /// shared with its pool; caches of label-and-taint results must be dropped when
    /// [`Ledger::meta_epoch`] changes. A node the ledger does not hold (a run whose
    /// policy binds nothing) is left alone.
    pub fn edit_meta(&mut self, node: NodeId, f: impl FnOnce(&mut NodeMeta)) {
        let i = node.0 as usize;
        if i >= self.nodes.len() {
            return;
        }
        let mut m = (*self.nodes[i].meta).clone();
        f(&mut m);
        // A node whose labels and taints are back to what they were at the start shares
        // its pool's meta again: caches keyed by distinct metas stay small however many
        // nodes fail and come back.
        self.nodes[i].meta = match self.origin.get(i) {
            Some(o) if **o == m => o.clone(),
            _ => std::sync::Arc::new(m),
        };
        self.bump(i);
        self.meta_epoch += 1;
    }

    /// Whether some node holds a pod with inter-pod terms (without looking at every node).
    pub fn has_term_pods(&self) -> bool {
        debug_assert_eq!(self.term_nodes as usize, self.nodes.iter().filter(|n| n.term_pods > 0).count());
        self.term_nodes > 0
    }

    /// A counter bumped by every change of labels or taints ([`Ledger::edit_meta`]).
    pub fn meta_epoch(&self) -> u64 {
        self.meta_epoch
    }

    /// Every node's use, in node-id order.
    pub fn nodes(&self) -> &[NodeUse] {
        &self.nodes
    }

    /// One node's use.
    pub fn node(&self, id: NodeId) -> &NodeUse {
        &self.nodes[id.0 as usize]
    }

    /// Records a pod (a task of job `job`, already taken at `node`) that has labels or
    /// inter-pod terms.
    pub fn label_pod(&mut self, node: NodeId, job: u32, pod: std::sync::Arc<crate::constraints::PodInfo>) {
        let n = &mut self.nodes[node.0 as usize];
        self.term_nodes += u32::from(n.term_pods == 0 && !pod.terms.is_empty());
        n.term_pods += u32::from(!pod.terms.is_empty());
        n.pods.push((job, pod));
        self.bump(node.0 as usize);
    }

    /// Forgets the pod of job `job` on `node` recorded last, if any (the last: copies
    /// whose placements all record one id forget the one they placed last).
    pub fn unlabel_pod(&mut self, node: NodeId, job: u32) {
        let n = &mut self.nodes[node.0 as usize];
        if let Some(i) = n.pods.iter().rposition(|p| p.0 == job) {
            let (_, pod) = n.pods.remove(i);
            n.term_pods -= u32::from(!pod.terms.is_empty());
            self.term_nodes -= u32::from(n.term_pods == 0 && !pod.terms.is_empty());
            self.bump(node.0 as usize);
        }
    }

    /// Checks that a task fits at `b` (memory limits are the scheduler's business, not
    /// checked here; a host memory of 0 means "not modelled").
    pub fn check(&self, task: &TaskShape, models: &[String], b: &TaskBinding) -> Result<(), BindError> {
        let n = self.nodes.get(b.node.0 as usize).ok_or(BindError::UnknownNode(b.node.0))?;
        if b.gpus.len() != task.gpus as usize {
            return Err(BindError::GpuCount { need: task.gpus, got: b.gpus.len() });
        }
        if n.cpu_milli_left < task.cpu_milli() || (n.memory_mib > 0 && n.memory_mib_left < task.memory_mib) {
            return Err(BindError::NodeFull(b.node.0));
        }
        if task.gpus > 0 && !models.is_empty() && !models.iter().any(|m| *m == *n.gpu_model) {
            return Err(BindError::Model(b.node.0));
        }
        let take = n.milli_taken(task);
        for (k, &g) in b.gpus.iter().enumerate() {
            if g as usize >= n.gpus.len() || b.gpus[..k].contains(&g) {
                return Err(BindError::BadGpu(g, b.node.0));
            }
            if n.gpus[g as usize].milli_left < take {
                return Err(BindError::GpuFull(g, b.node.0));
            }
        }
        Ok(())
    }

    /// Takes a task's resources at `b` (checked first). `peak_counts` says whether its
    /// actual peak adds to the GPUs' peak sums (false for a job that failed its
    /// allocation).
    pub fn take(
        &mut self,
        task: &TaskShape,
        models: &[String],
        b: &TaskBinding,
        peak_counts: bool,
    ) -> Result<(), BindError> {
        self.check(task, models, b)?;
        self.bump(b.node.0 as usize);
        let free_before = self.nodes[b.node.0 as usize].free_gpus();
        let n = &mut self.nodes[b.node.0 as usize];
        n.cpu_milli_left -= task.cpu_milli();
        n.memory_mib_left = n.memory_mib_left.saturating_sub(task.memory_mib);
        let take = n.milli_taken(task);
        for &g in &b.gpus {
            let declared = n.declared_of(task, g as usize);
            let gpu = &mut std::sync::Arc::make_mut(&mut n.gpus)[g as usize];
            gpu.milli_left -= take;
            gpu.declared_mib += declared;
            if peak_counts {
                gpu.peak_mib += task.gpu_peak_mib;
            }
        }
        if let Some(a) = GpuAffinity::of(task) {
            match n.affinity.binary_search_by_key(&a, |e| e.0) {
                Ok(i) => n.affinity[i].1 += 1,
                Err(i) => n.affinity.insert(i, (a, 1)),
            }
        }
        n.tasks += 1;
        n.unrequested[0] += u32::from(task.cpu_milli() == 0);
        n.unrequested[1] += u32::from(task.memory_mib == 0);
        self.refree(b.node.0 as usize, free_before);
        Ok(())
    }

    /// Takes `n` tasks without GPUs at `b` at once (a job's tasks packed on one node:
    /// the same as `n` calls of [`Ledger::take`], with one check and one version bump).
    /// A task with GPUs, or a binding that names some, is taken one at a time.
    pub fn take_gpuless(
        &mut self,
        task: &TaskShape,
        models: &[String],
        b: &TaskBinding,
        n: u32,
        peak_counts: bool,
    ) -> Result<(), BindError> {
        if task.gpus > 0 || !b.gpus.is_empty() || n <= 1 {
            for k in 0..n {
                if let Err(e) = self.take(task, models, b, peak_counts) {
                    (0..k).for_each(|_| self.give(task, b, peak_counts));
                    return Err(e);
                }
            }
            return Ok(());
        }
        let node = self.nodes.get_mut(b.node.0 as usize).ok_or(BindError::UnknownNode(b.node.0))?;
        let (cpu, mem) = (task.cpu_milli() * u64::from(n), task.memory_mib * u64::from(n));
        if node.cpu_milli_left < cpu || (node.memory_mib > 0 && node.memory_mib_left < mem) {
            return Err(BindError::NodeFull(b.node.0));
        }
        node.cpu_milli_left -= cpu;
        node.memory_mib_left = node.memory_mib_left.saturating_sub(mem);
        node.tasks += n;
        node.unrequested[0] += n * u32::from(task.cpu_milli() == 0);
        node.unrequested[1] += n * u32::from(task.memory_mib == 0);
        self.bump(b.node.0 as usize);
        Ok(())
    }

    /// Gives back what [`Ledger::take_gpuless`] took.
    pub fn give_gpuless(&mut self, task: &TaskShape, b: &TaskBinding, n: u32, peak_counted: bool) {
        if task.gpus > 0 || !b.gpus.is_empty() || n <= 1 {
            (0..n).for_each(|_| self.give(task, b, peak_counted));
            return;
        }
        let node = &mut self.nodes[b.node.0 as usize];
        node.cpu_milli_left += task.cpu_milli() * u64::from(n);
        node.memory_mib_left = (node.memory_mib_left + task.memory_mib * u64::from(n)).min(node.memory_mib);
        node.tasks -= n;
        node.unrequested[0] -= n * u32::from(task.cpu_milli() == 0);
        node.unrequested[1] -= n * u32::from(task.memory_mib == 0);
        debug_assert!(node.cpu_milli_left <= node.cpu_milli);
        self.bump(b.node.0 as usize);
    }

    /// Gives back what [`Ledger::take`] took.
    pub fn give(&mut self, task: &TaskShape, b: &TaskBinding, peak_counted: bool) {
        self.give_parts(task, b, peak_counted, true);
    }

    /// Gives back what [`Ledger::take`] took of a task whose CPUs and GPUs are lent
    /// ([`Ledger::lend`]): its memory, its place among the node's tasks.
    pub fn give_lent(&mut self, task: &TaskShape, b: &TaskBinding, peak_counted: bool) {
        self.give_parts(task, b, peak_counted, false);
    }

    /// Lends a placed task's CPUs and GPUs to other tasks (a suspended job's, Slurm's
    /// gang scheduler): they count as free while it keeps its memory, its GPU memory
    /// (the suspended processes stay resident) and its place on the node.
    pub fn lend(&mut self, task: &TaskShape, b: &TaskBinding) {
        self.bump(b.node.0 as usize);
        let free_before = self.nodes[b.node.0 as usize].free_gpus();
        let n = &mut self.nodes[b.node.0 as usize];
        n.cpu_milli_left += task.cpu_milli();
        let take = n.milli_taken(task);
        let gpus = std::sync::Arc::make_mut(&mut n.gpus);
        for &g in &b.gpus {
            gpus[g as usize].milli_left += take;
        }
        debug_assert!(n.cpu_milli_left <= n.cpu_milli);
        self.refree(b.node.0 as usize, free_before);
    }

    /// Takes back what [`Ledger::lend`] lent, if it is all free.
    pub fn reclaim(&mut self, task: &TaskShape, b: &TaskBinding) -> Result<(), BindError> {
        let n = self.nodes.get(b.node.0 as usize).ok_or(BindError::UnknownNode(b.node.0))?;
        if n.cpu_milli_left < task.cpu_milli() {
            return Err(BindError::NodeFull(b.node.0));
        }
        let take = n.milli_taken(task);
        if let Some(&g) = b.gpus.iter().find(|&&g| n.gpus.get(g as usize).is_none_or(|u| u.milli_left < take)) {
            return Err(BindError::GpuFull(g, b.node.0));
        }
        self.bump(b.node.0 as usize);
        let free_before = self.nodes[b.node.0 as usize].free_gpus();
        let n = &mut self.nodes[b.node.0 as usize];
        n.cpu_milli_left -= task.cpu_milli();
        let gpus = std::sync::Arc::make_mut(&mut n.gpus);
        for &g in &b.gpus {
            gpus[g as usize].milli_left -= take;
        }
        self.refree(b.node.0 as usize, free_before);
        Ok(())
    }

    fn give_parts(&mut self, task: &TaskShape, b: &TaskBinding, peak_counted: bool, compute: bool) {
        self.bump(b.node.0 as usize);
        let free_before = self.nodes[b.node.0 as usize].free_gpus();
        let n = &mut self.nodes[b.node.0 as usize];
        if compute {
            n.cpu_milli_left += task.cpu_milli();
        }
        n.memory_mib_left = (n.memory_mib_left + task.memory_mib).min(n.memory_mib);
        let take = if compute { n.milli_taken(task) } else { 0 };
        for &g in &b.gpus {
            let declared = n.declared_of(task, g as usize);
            let gpu = &mut std::sync::Arc::make_mut(&mut n.gpus)[g as usize];
            gpu.milli_left += take;
            gpu.declared_mib -= declared;
            if peak_counted {
                gpu.peak_mib -= task.gpu_peak_mib;
            }
        }
        if let Some(a) = GpuAffinity::of(task)
            && let Ok(i) = n.affinity.binary_search_by_key(&a, |e| e.0)
        {
            n.affinity[i].1 -= 1;
            if n.affinity[i].1 == 0 {
                n.affinity.remove(i);
            }
        }
        n.tasks -= 1;
        n.unrequested[0] -= u32::from(task.cpu_milli() == 0);
        n.unrequested[1] -= u32::from(task.memory_mib == 0);
        debug_assert!(n.cpu_milli_left <= n.cpu_milli);
        debug_assert!(n.gpus.iter().all(|g| g.milli_left <= MILLI));
        self.refree(b.node.0 as usize, free_before);
    }

    /// Takes a task's actual peak at `b` back out of its GPUs' peak sums (its gang failed
    /// its allocation, so the peak never materialises).
    pub fn uncount_peak(&mut self, task: &TaskShape, b: &TaskBinding) {
        self.bump(b.node.0 as usize);
        let n = &mut self.nodes[b.node.0 as usize];
        let gpus = std::sync::Arc::make_mut(&mut n.gpus);
        for &g in &b.gpus {
            gpus[g as usize].peak_mib -= task.gpu_peak_mib;
        }
    }

    /// Whether a task placed at `b` runs out of GPU memory, by the rules of the node's
    /// sharing mode (checked before it is taken):
    /// * exclusive: its peak exceeds the GPU's memory;
    /// * shared: the peaks already on one of its GPUs plus its own exceed the memory
    ///   (the last arrival's allocation fails);
    /// * isolated: its peak exceeds its own declared limit, or the GPU's memory is
    ///   physically exhausted as in the shared case.
    pub fn runs_out_of_memory(&self, task: &TaskShape, b: &TaskBinding) -> bool {
        if task.gpu_peak_mib == 0 {
            return false;
        }
        let n = &self.nodes[b.node.0 as usize];
        b.gpus.iter().any(|&g| {
            // A bad index is not this check's to refuse: `take` does.
            let Some(gpu) = n.gpus.get(g as usize) else { return false };
            match n.sharing {
                GpuSharing::Exclusive => task.gpu_peak_mib > gpu.memory_mib,
                GpuSharing::Shared => gpu.peak_mib + task.gpu_peak_mib > gpu.memory_mib,
                GpuSharing::Isolated => {
                    task.gpu_peak_mib > n.declared_of(task, g as usize)
                        || gpu.peak_mib + task.gpu_peak_mib > gpu.memory_mib
                }
            }
        })
    }
}
