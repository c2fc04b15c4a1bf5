//! Filter plugins: which nodes may host a pod at all (the Kubernetes scheduler
//! framework's Filter extension point).

use super::PodReq;
use sim_core::ledger::NodeUse;

/// A filter plugin.
pub trait FilterPlugin: Send + Sync {
    /// Its name, as Kubernetes names it.
    fn name(&self) -> &'static str;
    /// Whether `node` may host `pod`.
    fn pass(&self, node: &NodeUse, pod: &PodReq<'_>) -> bool;
    /// Whether its answer depends only on the node's labels and taints (its
    /// [`sim_core::ledger::NodeMeta`], shared by a pool) and the pod's constraints, not on
    /// what runs there: such answers are computed once per pool and pod.
    fn meta_only(&self) -> bool {
        false
    }
}

/// Kubernetes `NodeResourcesFit`: the pod's CPU and memory requests fit what the
/// node's other pods have not requested (requests, never actual use).
pub struct NodeResourcesFit;

impl FilterPlugin for NodeResourcesFit {
    fn name(&self) -> &'static str {
        "NodeResourcesFit"
    }
    fn pass(&self, node: &NodeUse, pod: &PodReq<'_>) -> bool {
        node.cpu_milli_left >= pod.task.cpu_milli()
            && (node.memory_mib == 0 || node.memory_mib_left >= pod.task.memory_mib)
    }
}

/// Kubernetes `NodeAffinity` filter: the pod's `nodeSelector` and required node affinity
/// (terms ORed, expressions ANDed) match the node's labels.
pub struct NodeAffinity;

impl FilterPlugin for NodeAffinity {
    fn name(&self) -> &'static str {
        "NodeAffinity"
    }
    fn meta_only(&self) -> bool {
        true
    }
    fn pass(&self, node: &NodeUse, pod: &PodReq<'_>) -> bool {
        pod.constraints.is_none_or(|c| c.node_matches(&node.meta.labels))
    }
}

/// Kubernetes `TaintToleration` filter: every NoSchedule and NoExecute taint of the node
/// is tolerated.
pub struct TaintToleration;

impl FilterPlugin for TaintToleration {
    fn name(&self) -> &'static str {
        "TaintToleration"
    }
    fn meta_only(&self) -> bool {
        true
    }
    fn pass(&self, node: &NodeUse, pod: &PodReq<'_>) -> bool {
        if node.meta.taints.is_empty() {
            return true;
        }
        let none = sim_core::constraints::PodConstraints::default();
        pod.constraints.unwrap_or(&none).tolerates_all(&node.meta.taints)
    }
}

/// GPU count and model, per GPU milli-GPU (Alibaba's Open-Gpu-Share filter, used by
/// the FGD simulator): the node has a GPU model the pod accepts, and at least as many
/// GPUs with enough milli-GPU left as the pod wants. This is the memory-oblivious
/// baseline: it counts, it does not look at GPU memory.
pub struct GpuShareFit;

impl FilterPlugin for GpuShareFit {
    fn name(&self) -> &'static str {
        "Open-Gpu-Share"
    }
    fn pass(&self, node: &NodeUse, pod: &PodReq<'_>) -> bool {
        gpus_fit(node, pod, false)
    }
}

/// GPU-memory fit (Aliyun gpushare-scheduler-extender's Filter, HAMi's `gpumem`): as
/// [`GpuShareFit`], and each chosen GPU must also have the pod's declared GPU memory
/// not yet promised to others, on one single GPU.
pub struct GpuMemoryFit;

impl FilterPlugin for GpuMemoryFit {
    fn name(&self) -> &'static str {
        "GpuMemoryFit"
    }
    fn pass(&self, node: &NodeUse, pod: &PodReq<'_>) -> bool {
        gpus_fit(node, pod, true)
    }
}

/// Whether the node has a GPU model the pod accepts and enough GPUs with the pod's
/// milli-GPU left (and, with `memory`, its declared GPU memory not yet promised).
fn gpus_fit(node: &NodeUse, pod: &PodReq<'_>, memory: bool) -> bool {
    let t = &pod.task;
    if t.gpus == 0 {
        return true;
    }
    if node.gpus.len() < t.gpus as usize || !pod.accepts(&node.gpu_model) {
        return false;
    }
    (0..node.gpus.len()).filter(|&i| gpu_fits(node, t, i, memory)).count() >= t.gpus as usize
}

/// Whether GPU `i` of `node` has the task's milli-GPU left (and, with `memory`, its
/// declared GPU memory not yet promised).
pub(crate) fn gpu_fits(node: &NodeUse, t: &sim_core::TaskShape, i: usize, memory: bool) -> bool {
    node.gpus[i].milli_left >= node.milli_taken(t)
        && (!memory || node.gpus[i].declared_left() >= node.declared_of(t, i))
}
