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
    /// Why `node` may not host `pod`, as kube-scheduler's `FailedScheduling` event words
    /// it (one reason per failing resource); empty when it passes.
    fn why_not(&self, node: &NodeUse, pod: &PodReq<'_>) -> Vec<String> {
        if self.pass(node, pod) { Vec::new() } else { vec![format!("node(s) didn't pass {}", self.name())] }
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
        cpu_fits(node, pod) && memory_fits(node, pod)
    }
    /// `Insufficient cpu`, `Insufficient memory` (kubernetes v1.31
    /// `pkg/scheduler/framework/plugins/noderesources/fit.go`: "Insufficient %v").
    fn why_not(&self, node: &NodeUse, pod: &PodReq<'_>) -> Vec<String> {
        let mut v = Vec::new();
        if !cpu_fits(node, pod) {
            v.push("Insufficient cpu".into());
        }
        if !memory_fits(node, pod) {
            v.push("Insufficient memory".into());
        }
        v
    }
}

fn cpu_fits(node: &NodeUse, pod: &PodReq<'_>) -> bool {
    node.cpu_milli_left >= pod.task.cpu_milli()
}

fn memory_fits(node: &NodeUse, pod: &PodReq<'_>) -> bool {
    node.memory_mib == 0 || node.memory_mib_left >= pod.task.memory_mib
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
    /// kubernetes v1.31 `plugins/nodeaffinity/node_affinity.go`, `ErrReasonPod`.
    fn why_not(&self, node: &NodeUse, pod: &PodReq<'_>) -> Vec<String> {
        if self.pass(node, pod) { Vec::new() } else { vec!["node(s) didn't match Pod's node affinity/selector".into()] }
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
    /// The first taint not tolerated, as kubernetes v1.31
    /// `plugins/tainttoleration/taint_toleration.go` words it: `node(s) had untolerated
    /// taint {key: value}`.
    fn why_not(&self, node: &NodeUse, pod: &PodReq<'_>) -> Vec<String> {
        let none = sim_core::constraints::PodConstraints::default();
        let c = pod.constraints.unwrap_or(&none);
        node.meta
            .taints
            .iter()
            .filter(|t| t.effect != sim_core::constraints::TaintEffect::PreferNoSchedule)
            .find(|t| !c.tolerates_all(std::slice::from_ref(*t)))
            .map(|t| format!("node(s) had untolerated taint {{{}: {}}}", t.key, t.value))
            .into_iter()
            .collect()
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
    /// `Insufficient nvidia.com/gpu` (the extended resource's NodeResourcesFit reason), or
    /// that the node's GPU model is not one the pod asks for.
    fn why_not(&self, node: &NodeUse, pod: &PodReq<'_>) -> Vec<String> {
        gpu_reasons(node, pod, false)
    }
}

/// Why the GPU filters refuse `node` for `pod` (empty when they pass).
fn gpu_reasons(node: &NodeUse, pod: &PodReq<'_>, memory: bool) -> Vec<String> {
    if gpus_fit(node, pod, memory) {
        Vec::new()
    } else if pod.task.gpus as usize <= node.gpus.len() && !pod.accepts(&node.gpu_model) {
        vec![format!("node(s) didn't have the requested GPU model ({})", pod.models.join(" or "))]
    } else if memory && gpus_fit(node, pod, false) {
        vec!["Insufficient GPU memory".into()]
    } else {
        vec!["Insufficient nvidia.com/gpu".into()]
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
    fn why_not(&self, node: &NodeUse, pod: &PodReq<'_>) -> Vec<String> {
        gpu_reasons(node, pod, true)
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
    if !memory {
        // Without memory only milli-GPU counts: the same share on every GPU.
        let take = node.milli_taken(t);
        return node.gpus.iter().filter(|g| g.milli_left >= take).count() >= t.gpus as usize;
    }
    (0..node.gpus.len()).filter(|&i| gpu_fits(node, t, i, memory)).count() >= t.gpus as usize
}

/// Whether GPU `i` of `node` has the task's milli-GPU left (and, with `memory`, its
/// declared GPU memory not yet promised).
pub(crate) fn gpu_fits(node: &NodeUse, t: &sim_core::TaskShape, i: usize, memory: bool) -> bool {
    node.gpus[i].milli_left >= node.milli_taken(t)
        && (!memory || node.gpus[i].declared_left() >= node.declared_of(t, i))
}
