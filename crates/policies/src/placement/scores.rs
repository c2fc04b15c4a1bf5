//! Score plugins: how good a feasible node is for a pod, 0–100, higher is better (the
//! Kubernetes scheduler framework's Score extension point). The Kubernetes defaults
//! (`NodeResourcesFit` strategies, `NodeResourcesBalancedAllocation`, in integers as
//! upstream, by [`Release`]) and the FGD paper's six placement policies, with the formulas
//! of its simulator (`hkust-adsl/kubernetes-scheduler-simulator`, `pkg/simulator/plugin/`).

use super::PodReq;
use super::frag::FragMeter;
use sim_core::ledger::{GpuAffinity, MILLI, NodeUse};

/// The largest node the FGD simulator normalises by: 128 cores.
pub const MAX_SPEC_CPU: f64 = 128_000.0;
/// ... and 8 GPUs.
pub const MAX_SPEC_GPU: f64 = 8_000.0;
/// Kubernetes' `MaxNodeScore`.
pub const MAX_NODE_SCORE: i64 = 100;

/// A plugin's opinion of one node.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Scored {
    /// Score (0–100 unless the plugin normalises).
    pub score: i64,
    /// For a shared pod, the GPU this score assumed (FGD's choice is the GPU bound).
    pub gpu: Option<u8>,
}

impl Scored {
    fn of(score: i64) -> Self {
        Scored { score, gpu: None }
    }
}

/// A score plugin.
pub trait ScorePlugin: Send + Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// Scores `node` for `pod`.
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, frag: &mut FragMeter) -> Scored;
    /// How its raw scores are normalised over the feasible nodes.
    fn normalize(&self) -> Normalize {
        Normalize::None
    }
    /// Whether its score depends only on the node's labels and taints and the pod's
    /// constraints (see [`super::filters::FilterPlugin::meta_only`]).
    fn meta_only(&self) -> bool {
        false
    }
}

/// A score plugin's `NormalizeScore`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Normalize {
    /// Raw scores are final (0–100).
    None,
    /// `(s − min) × 100 / (max − min)`, 0 when all equal (the FGD simulator's).
    MinMax,
    /// `s × 100 / max`, 0 when max is 0 (Kubernetes' `DefaultNormalizeScore`).
    Max,
    /// `100 − s × 100 / max`, 100 when max is 0 (the same, reversed: fewer is better).
    MaxReversed,
}

/// Kubernetes `NodeAffinity` score: the sum of the weights of the preferred terms the
/// node matches, normalised by the best node (default plugin weight 2).
pub struct NodeAffinityScore;

impl ScorePlugin for NodeAffinityScore {
    fn name(&self) -> &'static str {
        "NodeAffinity"
    }
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, _: &mut FragMeter) -> Scored {
        Scored::of(pod.constraints.map_or(0, |c| c.preferred_weight(&node.meta.labels)) as i64)
    }
    fn normalize(&self) -> Normalize {
        Normalize::Max
    }
    fn meta_only(&self) -> bool {
        true
    }
}

/// Kubernetes `TaintToleration` score: the fewer PreferNoSchedule taints the pod does
/// not tolerate, the better (default plugin weight 3).
pub struct TaintTolerationScore;

impl ScorePlugin for TaintTolerationScore {
    fn name(&self) -> &'static str {
        "TaintToleration"
    }
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, _: &mut FragMeter) -> Scored {
        let none = sim_core::constraints::PodConstraints::default();
        Scored::of(pod.constraints.unwrap_or(&none).untolerated_preferences(&node.meta.taints) as i64)
    }
    fn normalize(&self) -> Normalize {
        Normalize::MaxReversed
    }
    fn meta_only(&self) -> bool {
        true
    }
}

/// The kube-scheduler release whose scoring is modelled (`kube[k8s=...]`): default plugin
/// weights, the `NodeResourcesBalancedAllocation` formula and a `MostAllocated` detail
/// changed between releases.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Release {
    /// v1.20 (v1.20.5, the release the FGD paper's simulator vendors): plugin weights
    /// TaintToleration, NodeAffinity, InterPodAffinity 1, PodTopologySpread 2
    /// (`pkg/scheduler/algorithmprovider/registry.go`); BalancedAllocation
    /// `1 − |CPU fraction − memory fraction|` of the non-zero requests, 0 when a fraction
    /// reaches 1; MostAllocated scores an over-requested resource 0.
    V1_20,
    /// v1.23 (through v1.32 as modelled here): weights 3, 2, 2, 2 (v1beta3
    /// `default_plugins.go`); BalancedAllocation `1 − std` of the requested fractions
    /// (capped at 1) of the actual requests (kubernetes#101946, #105845); MostAllocated
    /// caps an over-requested resource at its capacity (#102925).
    V1_23,
    /// The current release (v1.37): as v1.23, and BalancedAllocation scores the change of
    /// balance the pod makes, `50 + (50 + s(with pod) − s(without))/2` with `s` the v1.23
    /// score (kubernetes#135573), and skips pods that request neither CPU nor memory (scores
    /// 0 everywhere; #130260, v1.33).
    #[default]
    Current,
}

impl Release {
    /// Default weights of TaintToleration, NodeAffinity, InterPodAffinity and
    /// PodTopologySpread.
    pub fn default_weights(self) -> [i64; 4] {
        match self {
            Release::V1_20 => [1, 1, 1, 2],
            Release::V1_23 | Release::Current => [3, 2, 2, 2],
        }
    }
}

/// kube-scheduler's non-zero default requests, in milli-CPU and MiB: a pod (container)
/// that requests no CPU or no memory is scored as if it requested these
/// (kubernetes `pkg/scheduler/util/non_zero.go`: `DefaultMilliCPURequest` 100,
/// `DefaultMemoryRequest` 200 × 1024 × 1024 bytes).
pub const NON_ZERO_REQUEST: [u64; 2] = [100, 200];

/// What the resource scores read of a node for a pod, per resource (CPU in milli-CPU,
/// memory in MiB; the scores are ratios, so MiB give what upstream's bytes give): the
/// node's allocatable, what its pods request and what the pod requests. `len` is 2, or 1
/// on a node that states no memory: memory is then left out (upstream skips a resource
/// whose allocatable is 0; our nodes without memory are nodes whose memory is not modelled).
struct Requests {
    alloc: [u64; 2],
    node: [u64; 2],
    pod: [u64; 2],
    len: usize,
}

impl Requests {
    /// The requests as they are (`NodeInfo.Requested`), or with the non-zero defaults for
    /// the pods that request nothing of a resource (`NonZeroRequested`).
    fn of(node: &NodeUse, pod: &PodReq<'_>, non_zero: bool) -> Self {
        let mut r = Requests {
            alloc: [node.cpu_milli, node.memory_mib],
            node: [node.cpu_milli - node.cpu_milli_left, node.memory_mib - node.memory_mib_left],
            pod: [pod.task.cpu_milli(), pod.task.memory_mib],
            len: if node.memory_mib == 0 { 1 } else { 2 },
        };
        if non_zero {
            for (k, default) in NON_ZERO_REQUEST.into_iter().enumerate() {
                r.node[k] += default * node.unrequested[k] as u64;
                if r.pod[k] == 0 {
                    r.pod[k] = default;
                }
            }
        }
        r
    }

    /// Requested after placing the pod, per resource.
    fn with_pod(&self) -> [u64; 2] {
        [self.node[0] + self.pod[0], self.node[1] + self.pod[1]]
    }
}

/// The weighted mean (weights 1, integer division) of a per-resource integer score of
/// (requested, allocatable), as `NodeResourcesFit`'s strategies average.
fn mean_score(r: &Requests, per_resource: impl Fn(u64, u64) -> i64) -> i64 {
    let requested = r.with_pod();
    (0..r.len).map(|k| per_resource(requested[k], r.alloc[k])).sum::<i64>() / r.len as i64
}

/// Kubernetes `NodeResourcesFit` with the `LeastAllocated` strategy (the default; CPU and
/// memory, weight 1 each): per resource `(allocatable − requested) × 100 / allocatable`
/// in integers, 0 when over-requested, then their mean, integer division; requests with
/// the non-zero defaults (kubernetes v1.20.5 and v1.31
/// `pkg/scheduler/framework/plugins/noderesources/least_allocated.go`,
/// `resource_allocation.go`). Spreads. The same in every release modelled.
pub struct LeastAllocated;

impl ScorePlugin for LeastAllocated {
    fn name(&self) -> &'static str {
        "NodeResourcesFit"
    }
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, _: &mut FragMeter) -> Scored {
        let r = Requests::of(node, pod, true);
        Scored::of(mean_score(
            &r,
            |req, cap| {
                if req > cap { 0 } else { ((cap - req) * MAX_NODE_SCORE as u64 / cap) as i64 }
            },
        ))
    }
}

/// Kubernetes `NodeResourcesFit` with the `MostAllocated` strategy: per resource
/// `requested × 100 / allocatable`, then the mean, as [`LeastAllocated`]; an
/// over-requested resource (the non-zero defaults can do that) scores 0 in v1.20 and 100
/// from v1.22 (kubernetes `most_allocated.go`, #102925). Packs.
pub struct MostAllocated(pub Release);

impl ScorePlugin for MostAllocated {
    fn name(&self) -> &'static str {
        "NodeResourcesFit"
    }
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, _: &mut FragMeter) -> Scored {
        let r = Requests::of(node, pod, true);
        let v1_20 = self.0 == Release::V1_20;
        Scored::of(mean_score(&r, |req, cap| match req > cap {
            true if v1_20 => 0,
            _ => (req.min(cap) * MAX_NODE_SCORE as u64 / cap) as i64,
        }))
    }
}

/// Requested over allocatable per resource, in floating point as upstream (`NaN` for a
/// resource a node does not state; callers read only the first `len`).
fn fractions(requested: [u64; 2], alloc: [u64; 2]) -> [f64; 2] {
    [requested[0] as f64 / alloc[0] as f64, requested[1] as f64 / alloc[1] as f64]
}

/// `int64((1 − std) × 100)` of the requested fractions (each capped at 1; for two the
/// standard deviation is `|f₀ − f₁| / 2`, for one 0), computed in floating point as
/// upstream does (kubernetes v1.23 and v1.31 `balanced_allocation.go`).
fn balance(requested: [u64; 2], alloc: [u64; 2], len: usize) -> i64 {
    let f = fractions(requested, alloc).map(|x| x.min(1.0));
    let std = if len == 2 { ((f[0] - f[1]) / 2.0).abs() } else { 0.0 };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// Kubernetes `NodeResourcesBalancedAllocation` (CPU and memory): favours nodes whose
/// resources are requested evenly, by release ([`Release`]): v1.20
/// `int64((1 − |f_cpu − f_mem|) × 100)` of the non-zero requested fractions after placing
/// the pod, 0 when one reaches 1 (kubernetes v1.20.5 `balanced_allocation.go`); v1.23
/// `int64((1 − std) × 100)` of the actual requested fractions, capped at 1; current
/// `50 + (50 + s_with − s_without) / 2` of that score with and without the pod, and 0 for
/// a pod that requests neither CPU nor memory (the plugin skips it).
pub struct BalancedAllocation(pub Release);

impl ScorePlugin for BalancedAllocation {
    fn name(&self) -> &'static str {
        "NodeResourcesBalancedAllocation"
    }
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, _: &mut FragMeter) -> Scored {
        let max = MAX_NODE_SCORE;
        match self.0 {
            Release::V1_20 => {
                let r = Requests::of(node, pod, true);
                let req = r.with_pod();
                let f = fractions(req, r.alloc);
                if f[..r.len].iter().any(|&x| x >= 1.0) {
                    return Scored::of(0);
                }
                let diff = if r.len == 2 { (f[0] - f[1]).abs() } else { 0.0 };
                Scored::of(((1.0 - diff) * max as f64) as i64)
            }
            Release::V1_23 => {
                let r = Requests::of(node, pod, false);
                Scored::of(balance(r.with_pod(), r.alloc, r.len))
            }
            Release::Current => {
                let r = Requests::of(node, pod, false);
                if r.pod == [0, 0] {
                    return Scored::of(0);
                }
                let (with, without) = (balance(r.with_pod(), r.alloc, r.len), balance(r.node, r.alloc, r.len));
                Scored::of(max / 2 + (max / 2 + with - without) / 2)
            }
        }
    }
}

/// FGD paper's `RandomScore`: its PreScore picks one feasible node uniformly at random.
/// The framework does the drawing; this score is only its marker.
pub struct RandomScore;

impl ScorePlugin for RandomScore {
    fn name(&self) -> &'static str {
        "RandomScore"
    }
    fn score(&self, _: &NodeUse, _: &PodReq<'_>, _: &mut FragMeter) -> Scored {
        Scored::of(0)
    }
}

/// FGD paper's `DotProductScore` with `dimext=merge, norm=max` (Tetris' alignment):
/// node vector (CPU left, GPU left in total) and pod vector (CPU, GPU requested), both
/// divided by the largest node (128 cores, 8 GPUs); `score = 100 × (1 − dot/2)` — the
/// larger the dot product, the lower the score.
pub struct DotProduct;

impl ScorePlugin for DotProduct {
    fn name(&self) -> &'static str {
        "DotProductScore"
    }
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, _: &mut FragMeter) -> Scored {
        if node.cpu_milli_left < pod.task.cpu_milli() {
            return Scored::of(0);
        }
        let n = [node.cpu_milli_left as f64 / MAX_SPEC_CPU, node.gpu_milli_left() as f64 / MAX_SPEC_GPU];
        let p = [pod.task.cpu_milli() as f64 / MAX_SPEC_CPU, pod.total_milli() as f64 / MAX_SPEC_GPU];
        let dot = n[0] * p[0] + n[1] * p[1];
        Scored::of((MAX_NODE_SCORE as f64 * (1.0 - dot / 2.0)) as i64)
    }
}

/// FGD paper's `GpuClusteringScore`: keep pods of one GPU request class ("affinity":
/// shared, 1-GPU, 2-GPU, …) together. Tiers: (75, 100] a node holding only that class,
/// (50, 75] a node holding it among others, (25, 50] an idle node, (0, 25] a node
/// holding other classes; within a tier `25 × (8000 − GPU milli left) / 8000`.
/// CPU-only pods score 0 everywhere.
pub struct GpuClustering;

impl ScorePlugin for GpuClustering {
    fn name(&self) -> &'static str {
        "GpuClusteringScore"
    }
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, _: &mut FragMeter) -> Scored {
        let Some(a) = GpuAffinity::of(&pod.task) else {
            return Scored::of(0);
        };
        let within = (MAX_NODE_SCORE / 4) * (MAX_SPEC_GPU as i64 - node.gpu_milli_left() as i64) / MAX_SPEC_GPU as i64;
        let has = node.affinity.iter().any(|e| e.0 == a);
        let tier = match (has, node.affinity.len()) {
            (true, 1) => 3,
            (true, _) => 2,
            (false, 0) => 1,
            (false, _) => 0,
        };
        Scored::of(within + MAX_NODE_SCORE * tier / 4)
    }
}

/// FGD paper's `GpuPackingScore`, from high to low: (1) only partly used GPUs are
/// needed: `100 − Σ(free % of the GPUs used)/10`, at least 50; (2) fully free GPUs of an
/// already used node are needed: `50 − their number`, at least 33; (3) the node's GPUs
/// are all free: `33 − their number`, at least that number. GPUs are taken least-left
/// first. CPU-only pods score 0.
pub struct GpuPacking;

impl ScorePlugin for GpuPacking {
    fn name(&self) -> &'static str {
        "GpuPackingScore"
    }
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, _: &mut FragMeter) -> Scored {
        let t = &pod.task;
        if t.gpus == 0 {
            return Scored::of(0);
        }
        let free = node.free_gpus();
        if free == node.gpus.len() {
            return Scored::of((MAX_NODE_SCORE / 3 - free as i64).max(free as i64));
        }
        let milli = node.milli_taken(t);
        let mut order: Vec<usize> = (0..node.gpus.len()).collect();
        order.sort_by_key(|&i| node.gpus[i].milli_left); // stable: ties by index
        let mut need = t.gpus;
        let mut used_free = 0i64;
        let mut pct = 0i64;
        for i in order {
            if need == 0 {
                break;
            }
            let left = node.gpus[i].milli_left;
            if milli <= left {
                need -= 1;
                pct += left as i64 * 100 / MILLI as i64;
                if left == MILLI {
                    used_free += 1;
                }
            }
        }
        if need != 0 {
            return Scored::of(0);
        }
        if used_free > 0 {
            return Scored::of((MAX_NODE_SCORE / 2 - used_free).max(MAX_NODE_SCORE / 3));
        }
        Scored::of((MAX_NODE_SCORE - pct / 10).max(MAX_NODE_SCORE / 2))
    }
}

/// FGD paper's `BestFitScore`: `s = Σ_{cpu,gpu} ½ (free − request)/maxSpec`, score
/// `(1 − s) × 100`, then min–max normalised over the feasible nodes. The tightest node
/// wins.
pub struct BestFit;

impl ScorePlugin for BestFit {
    fn name(&self) -> &'static str {
        "BestFitScore"
    }
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, _: &mut FragMeter) -> Scored {
        let free = [node.cpu_milli_left as f64, node.gpu_milli_left() as f64];
        let req = [pod.task.cpu_milli() as f64, pod.total_milli() as f64];
        let max = [MAX_SPEC_CPU, MAX_SPEC_GPU];
        let mut s = 0.0;
        for k in 0..2 {
            s += (free[k] - req[k]).max(0.0) / max[k] * 0.5;
        }
        Scored::of(((1.0 - s) * MAX_NODE_SCORE as f64) as i64)
    }
    fn normalize(&self) -> Normalize {
        Normalize::MinMax
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// FGD paper's `FGDScore` (fragmentation gradient descent): `Δ = F_n(before) −
/// F_n(after)` for the node's fragmentation against the typical pods ([`FragMeter`]),
/// `score = ⌊sigmoid(Δ/1000) × 100⌋`; 50 means "no change", higher means fragmentation
/// grows less. A shared pod tries every GPU with room and keeps the best (first on
/// ties): that GPU is the one bound. Whole-GPU pods take the GPUs with least left that
/// fit (the fully free ones, lowest index first).
pub struct Fgd;

impl ScorePlugin for Fgd {
    fn name(&self) -> &'static str {
        "FGDScore"
    }
    fn score(&self, node: &NodeUse, pod: &PodReq<'_>, frag: &mut FragMeter) -> Scored {
        let t = &pod.task;
        let left: Vec<u32> = node.gpus.iter().map(|g| g.milli_left).collect();
        let before = frag.node_frag(&node.gpu_model, node.cpu_milli_left, &left);
        let cpu_after = node.cpu_milli_left.saturating_sub(t.cpu_milli());
        let milli = node.milli_taken(t);
        let to_score = |after: f64| (sigmoid((before - after) / 1000.0) * MAX_NODE_SCORE as f64) as i64;
        if t.shares_gpu() && milli < MILLI {
            let mut best: Option<Scored> = None;
            let mut after_left = left.clone();
            for i in 0..left.len() {
                if left[i] >= milli {
                    after_left[i] -= milli;
                    let s = to_score(frag.node_frag(&node.gpu_model, cpu_after, &after_left));
                    after_left[i] += milli;
                    if best.is_none_or(|b| s > b.score) {
                        best = Some(Scored { score: s, gpu: Some(i as u8) });
                    }
                }
            }
            return best.unwrap_or(Scored::of(0));
        }
        let mut after_left = left.clone();
        let mut order: Vec<usize> = (0..left.len()).collect();
        order.sort_by_key(|&i| left[i]);
        let mut need = t.gpus;
        for i in order {
            if need == 0 {
                break;
            }
            if milli <= after_left[i] {
                after_left[i] -= milli;
                need -= 1;
            }
        }
        Scored::of(to_score(frag.node_frag(&node.gpu_model, cpu_after, &after_left)))
    }
}
