//! GPU fragmentation as the FGD paper defines it (Weng et al., "Beware of
//! Fragmentation", USENIX ATC'23; `pkg/utils/frag.go` of its simulator).
//!
//! The target workload is a set of *typical pods* with popularities `p_m`. For a node
//! `n` with idle milli-GPU `idle_n`, a pod type `m` sees as fragment
//! * the milli-GPU of the GPUs too small for it, `Σ_{i: left_i < milli_m} left_i`, when
//!   the node can host it (class Q3: enough GPUs with `left ≥ milli_m` and enough CPU);
//! * all of `idle_n` otherwise (Q1 lack both, Q2 lack GPU, Q4 lack CPU, NoAccess wrong
//!   model, and XL/XR for CPU-only pods, which cannot use any GPU).
//!
//! The node's fragmentation is `F_n = Σ_m p_m · frag_n(m)` (milli-GPU). It depends only
//! on the node's GPU model, CPU left and the multiset of its GPUs' milli left, so it is
//! memoised on that state (the Go code's `fragMemo`).

use std::collections::HashMap;

/// A pod's resource type, as the FGD simulator's `PodResource`: milli-CPU, milli-GPU per
/// GPU, GPU count, allowed GPU models (`|`-separated, "" = any).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodType {
    /// Milli-CPU.
    pub cpu_milli: u64,
    /// Milli-GPU per GPU (0 for CPU-only pods).
    pub gpu_milli: u32,
    /// GPUs.
    pub gpus: u32,
    /// Allowed GPU models joined by `|` ("" = any).
    pub models: String,
}

impl PodType {
    /// Whether a node of GPU model `node_model` ("" = no GPUs) may host it.
    pub fn accessible(&self, node_model: &str) -> bool {
        let mut any = false;
        for m in self.models.split('|').filter(|m| !m.is_empty()) {
            any = true;
            if m == node_model {
                return true;
            }
        }
        !any
    }
}

/// The typical pods of a workload and their popularities (summing to 1).
#[derive(Clone, Debug, Default)]
pub struct TypicalPods {
    /// Types, most popular first, with their probability.
    pub types: Vec<(PodType, f64)>,
}

impl TypicalPods {
    /// The FGD experiments' rule (`GetTypicalPods` with `isInvolvedCpuPods=true`,
    /// `podPopularityThreshold=95`, `podIncreaseStep=1`): count pods per type, sort by
    /// count (ties: the larger type first), keep the most popular types until their
    /// cumulative share reaches `threshold_pct`, renormalise.
    pub fn from_pods<'a>(pods: impl IntoIterator<Item = &'a PodType>, threshold_pct: f64) -> Self {
        Self::from_counts_as(count(pods), threshold_pct, false)
    }

    /// As [`TypicalPods::from_pods`], from each type's count (each type once).
    pub fn from_counts<'a>(counts: impl IntoIterator<Item = (&'a PodType, u64)>, threshold_pct: f64) -> Self {
        Self::from_counts_as(counts, threshold_pct, false)
    }

    /// As [`TypicalPods::from_pods`], each popularity computed as the Go simulator's
    /// floating point does (count over all pods, then over the share kept).
    pub fn from_pods_go<'a>(pods: impl IntoIterator<Item = &'a PodType>, threshold_pct: f64) -> Self {
        Self::from_counts_as(count(pods), threshold_pct, true)
    }

    fn from_counts_as<'a>(counts: impl IntoIterator<Item = (&'a PodType, u64)>, threshold_pct: f64, go: bool) -> Self {
        let mut list: Vec<(&PodType, u64)> = counts.into_iter().filter(|e| e.1 > 0).collect();
        let total: u64 = list.iter().map(|e| e.1).sum();
        if total == 0 {
            return TypicalPods::default();
        }
        // Go: sort.Reverse(TargetPodList) with Less = (count, cpu, milli, gpus, models).
        list.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then(b.0.cpu_milli.cmp(&a.0.cpu_milli))
                .then(b.0.gpu_milli.cmp(&a.0.gpu_milli))
                .then(b.0.gpus.cmp(&a.0.gpus))
                .then(b.0.models.cmp(&a.0.models))
        });
        let expected = threshold_pct * total as f64 / 100.0;
        let mut cum = 0.0f64;
        let mut kept = Vec::new();
        let all = list.len();
        for (t, c) in list {
            if cum >= expected {
                break;
            }
            cum += c as f64;
            kept.push((t.clone(), c as f64));
        }
        let chopped = kept.len() < all;
        let total = total as f64;
        let types = kept
            .into_iter()
            .map(|(t, c)| match go {
                // GetTypicalPods: count / total, then over the share kept when chopped.
                true if chopped => (t, c / total / (cum / total)),
                true => (t, c / total),
                false => (t, c / cum),
            })
            .collect();
        TypicalPods { types }
    }
}

/// How many pods of each type `pods` has.
fn count<'a>(pods: impl IntoIterator<Item = &'a PodType>) -> HashMap<&'a PodType, u64> {
    let mut counts: HashMap<&PodType, u64> = HashMap::new();
    for p in pods {
        *counts.entry(p).or_default() += 1;
    }
    counts
}

/// Fragmentation of nodes for one set of typical pods, memoised on node state.
#[derive(Clone, Debug, Default)]
pub struct FragMeter {
    typical: TypicalPods,
    models: Vec<String>,
    access: Vec<Vec<bool>>,
    /// Looked up only, never iterated (FxHash: cheaper than SipHash on these short keys).
    memo: rustc_hash::FxHashMap<(u16, u64, [u16; 8]), f64>,
    /// Whether to sum as the Go simulator does.
    go: bool,
}

impl FragMeter {
    /// A meter for `typical`.
    pub fn new(typical: TypicalPods) -> Self {
        FragMeter { typical, models: Vec::new(), access: Vec::new(), memo: Default::default(), go: false }
    }

    /// Sums as the Go simulator does (`NodeGpuShareFragAmount`, see `compute`).
    pub fn summed_as_go(mut self) -> Self {
        self.go = true;
        self
    }

    fn model_index(&mut self, model: &str) -> u16 {
        if let Some(i) = self.models.iter().position(|m| m == model) {
            return i as u16;
        }
        self.models.push(model.to_string());
        self.access.push(self.typical.types.iter().map(|(t, _)| t.accessible(model)).collect());
        (self.models.len() - 1) as u16
    }

    /// `F_n` in milli-GPU for a node of GPU model `model` with `cpu_left` milli-CPU and
    /// GPUs with `gpu_left` milli-GPU each.
    pub fn node_frag(&mut self, model: &str, cpu_left: u64, gpu_left: &[u32]) -> f64 {
        if gpu_left.iter().all(|&g| g == 0) {
            return 0.0;
        }
        let mi = self.model_index(model);
        if gpu_left.len() > 8 {
            return self.compute(mi, cpu_left, gpu_left);
        }
        let mut key = [0u16; 8];
        for (k, &g) in key.iter_mut().zip(gpu_left) {
            *k = g as u16;
        }
        key.sort_unstable_by(|a, b| b.cmp(a));
        if let Some(&v) = self.memo.get(&(mi, cpu_left, key)) {
            return v;
        }
        let v = self.compute(mi, cpu_left, gpu_left);
        self.memo.insert((mi, cpu_left, key), v);
        v
    }

    /// `F_n`, each typical pod's share `p · frag` added in their order: into one sum,
    /// or, [`FragMeter::summed_as_go`], as `NodeGpuShareFragAmount` does: one sum per
    /// class (Q1, Q2, Q4, XL, XR, NoAccess; a Q3 pod's too-small GPUs counted in Q2,
    /// the rest of Q3 not counted), then the classes added in that order
    /// (`FragAmountSumExceptQ3`). The same value up to the last bits of the floating
    /// point, which decide ties of the truncated FGD score.
    fn compute(&self, mi: u16, cpu_left: u64, gpu_left: &[u32]) -> f64 {
        let idle: u64 = gpu_left.iter().map(|&g| g as u64).sum();
        let access = &self.access[mi as usize];
        let (mut one, mut per_class) = (0.0, [0.0f64; 7]);
        for (k, (t, p)) in self.typical.types.iter().enumerate() {
            // The class (`FragRatioDataMap`'s index) and the milli-GPU it sees as fragment.
            let cpu_ok = cpu_left >= t.cpu_milli;
            let (class, frag) = if t.gpu_milli == 0 {
                (if cpu_ok { 4 } else { 5 }, idle)
            } else if !access[k] {
                (6, idle)
            } else if gpu_left.iter().filter(|&&g| g >= t.gpu_milli).count() >= t.gpus as usize {
                if cpu_ok {
                    (1, gpu_left.iter().filter(|&&g| g < t.gpu_milli).map(|&g| g as u64).sum())
                } else {
                    (3, idle)
                }
            } else {
                (if cpu_ok { 1 } else { 0 }, idle)
            };
            if self.go {
                per_class[class] += p * frag as f64;
            } else {
                one += p * frag as f64;
            }
        }
        if self.go { per_class.iter().fold(0.0, |a, c| a + c) } else { one }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(cpu: u64, milli: u32, gpus: u32) -> PodType {
        PodType { cpu_milli: cpu, gpu_milli: milli, gpus, models: String::new() }
    }

    #[test]
    fn typical_pods_keep_the_popular_ones() {
        let pods: Vec<PodType> = [vec![t(1000, 500, 1); 6], vec![t(2000, 1000, 1); 3], vec![t(1000, 0, 0); 1]].concat();
        let tp = TypicalPods::from_pods(&pods, 90.0);
        assert_eq!(tp.types.len(), 2);
        assert!((tp.types[0].1 - 6.0 / 9.0).abs() < 1e-12);
        assert!((tp.types[1].1 - 3.0 / 9.0).abs() < 1e-12);
    }
}
