//! The placement framework, modelled on the Kubernetes scheduler framework: Filter
//! plugins drop the nodes that cannot host a pod, Score plugins rate the others 0–100
//! (normalised where the plugin asks), the weighted sum picks the node (the argmax,
//! ties broken by a seeded random draw, as `selectHost` does), and a GPU selection binds
//! the GPU indices (Alibaba Open-Gpu-Share's Reserve).
//!
//! Placements by name ([`Placement::by_name`]):
//!
//! | name | scores | GPU choice for a shared pod |
//! |---|---|---|
//! | `least-allocated` | Kubernetes `LeastAllocated` | best fit |
//! | `most-allocated` | Kubernetes `MostAllocated` | best fit |
//! | `balanced` | Kubernetes `BalancedAllocation` | best fit |
//! | `random` | FGD `RandomScore` | random |
//! | `dotprod` | FGD `DotProductScore` (merge, max) | best fit |
//! | `gpuclustering` | FGD `GpuClusteringScore` | best fit |
//! | `gpupacking` | FGD `GpuPackingScore` | best fit |
//! | `bestfit` | FGD `BestFitScore` | best fit |
//! | `fgd` | FGD `FGDScore` | the score's choice |
//!
//! With [`MemoryFit::Aware`] the [`filters::GpuMemoryFit`] filter is added and a shared
//! pod's GPU is the one with the least declared memory left that fits (Aliyun
//! gpushare's binpack); with [`MemoryFit::Oblivious`] only GPU counts and milli-GPU are
//! looked at, as the default Kubernetes scheduler and the FGD simulator do.

pub mod filters;
pub mod frag;
pub mod scores;
pub mod topology;

use filters::{FilterPlugin, GpuMemoryFit, GpuShareFit, NodeAffinity, NodeResourcesFit, TaintToleration};
use frag::FragMeter;
use scores::{Normalize, ScorePlugin, Scored};
use sim_core::job::TaskShape;
use sim_core::ledger::{MILLI, NodeUse, TaskBinding};
use sim_core::rng::{SimRng, uniform_index};

/// What one pod (one task of a job) asks for.
#[derive(Clone, Debug)]
pub struct PodReq<'a> {
    /// Its shape (milli-CPU, memory, GPUs, milli-GPU, declared GPU memory).
    pub task: TaskShape,
    /// GPU models it accepts (empty = any).
    pub models: &'a [String],
    /// A dense id of its resource type, for the score cache (`None`: not cached). Pods of
    /// one id must have the same shape, models and constraints.
    pub type_id: Option<u32>,
    /// Node selector, node affinity, tolerations.
    pub constraints: Option<&'a sim_core::constraints::PodConstraints>,
}

impl PodReq<'_> {
    /// Whether a GPU of `model` is one it accepts.
    pub fn accepts(&self, model: &str) -> bool {
        self.models.is_empty() || self.models.iter().any(|m| m == model)
    }
    /// Milli-GPU over all its GPUs.
    pub fn total_milli(&self) -> u64 {
        self.task.gpus as u64 * self.task.gpu_milli() as u64
    }
}

/// Whether placement looks at GPU memory.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum MemoryFit {
    /// Counts and milli-GPU only (default Kubernetes, the FGD simulator).
    #[default]
    Oblivious,
    /// Declared GPU memory must fit on each chosen GPU (Aliyun gpushare, HAMi).
    Aware,
}

/// How a shared pod's GPU is chosen on the chosen node.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GpuSelect {
    /// The GPU with the least milli-GPU left that fits (Open-Gpu-Share `best`).
    Best,
    /// A uniformly random GPU among those that fit (Open-Gpu-Share `random`).
    Random,
    /// The GPU the first score plugin chose (FGD).
    Scored,
    /// The GPU with the least declared memory left that fits (gpushare's binpack).
    Memory,
}

/// A placement: filters, weighted scores, GPU selection.
pub struct Placement {
    name: String,
    filters: Vec<Box<dyn FilterPlugin>>,
    scores: Vec<(Box<dyn ScorePlugin>, i64)>,
    random_node: bool,
    gpu_select: GpuSelect,
    memory: MemoryFit,
    /// Weights of InterPodAffinity and PodTopologySpread (Kubernetes' defaults: 2, 2).
    topology_weights: [i64; 2],
}

/// Most score plugins one placement combines.
pub const MAX_SCORES: usize = 4;

/// Placement names, for help and errors.
pub const PLACEMENTS: &[&str] = &[
    "least-allocated",
    "most-allocated",
    "balanced",
    "random",
    "dotprod",
    "gpuclustering",
    "gpupacking",
    "bestfit",
    "fgd",
];

impl Placement {
    /// The placement called `name` (see the module docs), looking at GPU memory or not.
    pub fn by_name(name: &str, memory: MemoryFit) -> Option<Self> {
        let (score, select): (Box<dyn ScorePlugin>, GpuSelect) = match name {
            "least-allocated" => (Box::new(scores::LeastAllocated), GpuSelect::Best),
            "most-allocated" => (Box::new(scores::MostAllocated), GpuSelect::Best),
            "balanced" => (Box::new(scores::BalancedAllocation), GpuSelect::Best),
            "random" => (Box::new(scores::RandomScore), GpuSelect::Random),
            "dotprod" => (Box::new(scores::DotProduct), GpuSelect::Best),
            "gpuclustering" => (Box::new(scores::GpuClustering), GpuSelect::Best),
            "gpupacking" => (Box::new(scores::GpuPacking), GpuSelect::Best),
            "bestfit" => (Box::new(scores::BestFit), GpuSelect::Best),
            "fgd" => (Box::new(scores::Fgd), GpuSelect::Scored),
            _ => return None,
        };
        let mut filters: Vec<Box<dyn FilterPlugin>> =
            vec![Box::new(NodeResourcesFit), Box::new(NodeAffinity), Box::new(TaintToleration), Box::new(GpuShareFit)];
        // The FGD paper runs its scores at weight 1000; Kubernetes' own at 1.
        let weight = if name.contains("allocated") || name == "balanced" { 1 } else { 1000 };
        let gpu_select = if memory == MemoryFit::Aware {
            filters.push(Box::new(GpuMemoryFit));
            if select == GpuSelect::Scored { GpuSelect::Scored } else { GpuSelect::Memory }
        } else {
            select
        };
        Some(Placement {
            name: name.to_string(),
            filters,
            random_node: name == "random",
            // Kubernetes' default weights: TaintToleration 3, NodeAffinity 2.
            scores: vec![
                (score, weight),
                (Box::new(scores::TaintTolerationScore), 3),
                (Box::new(scores::NodeAffinityScore), 2),
            ],
            gpu_select,
            memory,
            topology_weights: [2, 2],
        })
    }

    /// A placement from a spec such as `bestfit,nodeaffinity=2,interpodaffinity=2`: the
    /// main score (see [`PLACEMENTS`]), optionally `=weight`, then the weights of the
    /// Kubernetes plugins every placement carries — `tainttoleration` (default 3),
    /// `nodeaffinity` (2), `interpodaffinity` (2), `podtopologyspread` (2) — and
    /// `memory=aware|oblivious`.
    pub fn from_spec(spec: &str) -> Result<Self, String> {
        let mut parts = spec.split(',').map(str::trim).filter(|p| !p.is_empty());
        let first = parts.next().ok_or("expected a score name")?;
        let (name, main_weight) = match first.split_once('=') {
            Some((n, w)) => (n, Some(w.parse::<i64>().map_err(|_| format!("'{first}': expected name=weight"))?)),
            None => (first, None),
        };
        if !PLACEMENTS.contains(&name) {
            return Err(format!("unknown score '{name}' (expected one of: {})", PLACEMENTS.join(", ")));
        }
        let mut memory = MemoryFit::Oblivious;
        let mut weights: Vec<(String, i64)> = Vec::new();
        for p in parts {
            let (k, v) = p.split_once('=').ok_or_else(|| format!("'{p}': expected key=value"))?;
            if k == "memory" {
                memory = match v {
                    "aware" => MemoryFit::Aware,
                    "oblivious" => MemoryFit::Oblivious,
                    _ => return Err(format!("'{p}': memory is aware or oblivious")),
                };
                continue;
            }
            let w: i64 = v.parse().map_err(|_| format!("'{p}': expected an integer weight"))?;
            if !["tainttoleration", "nodeaffinity", "interpodaffinity", "podtopologyspread"].contains(&k) {
                return Err(format!(
                    "unknown plugin '{k}' (expected tainttoleration, nodeaffinity, interpodaffinity, podtopologyspread or memory)"
                ));
            }
            weights.push((k.to_string(), w));
        }
        let mut pl = Placement::by_name(name, memory).expect("listed placement");
        pl.name = spec.to_string();
        for (k, w) in weights {
            match k.as_str() {
                "tainttoleration" => pl.scores[1].1 = w,
                "nodeaffinity" => pl.scores[2].1 = w,
                "interpodaffinity" => pl.topology_weights[0] = w,
                _ => pl.topology_weights[1] = w,
            }
        }
        if let Some(w) = main_weight {
            pl.scores[0].1 = w;
        }
        Ok(pl)
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `node` passes the filters, and its raw scores.
    fn eval(&self, node: &NodeUse, pod: &PodReq<'_>, frag: &mut FragMeter) -> (bool, [i64; MAX_SCORES]) {
        let mut s = [0i64; MAX_SCORES];
        if !self.feasible(node, pod) {
            return (false, s);
        }
        if !self.random_node {
            for (k, (p, _)) in self.scores.iter().enumerate() {
                s[k] = p.score(node, pod, frag).score;
            }
        }
        (true, s)
    }

    /// Whether `node` passes every filter.
    pub fn feasible(&self, node: &NodeUse, pod: &PodReq<'_>) -> bool {
        self.filters.iter().all(|f| f.pass(node, pod))
    }

    /// Chooses a node and GPUs for `pod` among `nodes` for which `up` holds; `None` when
    /// no node passes the filters.
    pub fn place(
        &self,
        nodes: &[NodeUse],
        up: &dyn Fn(usize) -> bool,
        pod: &PodReq<'_>,
        cx: &mut PlaceCx,
        rng: &mut SimRng,
    ) -> Option<TaskBinding> {
        let topo = pod.constraints.and_then(|c| topology::PodTopology::new(nodes, c));
        let n_plugins = self.scores.len();
        // Two more columns with inter-pod terms: InterPodAffinity and PodTopologySpread.
        let n_scores = n_plugins + if topo.is_some() { 2 } else { 0 };
        let mut feasible: Vec<usize> = Vec::new();
        let mut raw: Vec<i64> = Vec::new();
        let PlaceCx { frag, cache, .. } = cx;
        for (i, node) in nodes.iter().enumerate() {
            if !up(i) {
                continue;
            }
            let (ok, s) = match (cache.as_mut(), pod.type_id) {
                (Some(c), Some(ty)) if !c.dirty[i] => {
                    let at = ty as usize * c.nodes + i;
                    if at >= c.entries.len() {
                        c.entries.resize((ty as usize + 1) * c.nodes, (0, false, [0; MAX_SCORES]));
                    }
                    let v = c.versions[i];
                    if c.entries[at].0 == v {
                        (c.entries[at].1, c.entries[at].2)
                    } else {
                        let r = self.eval(node, pod, frag);
                        c.entries[at] = (v, r.0, r.1);
                        r
                    }
                }
                _ => self.eval(node, pod, frag),
            };
            if !ok || topo.as_ref().is_some_and(|t| !t.pass(i, node)) {
                continue;
            }
            feasible.push(i);
            raw.extend_from_slice(&s[..n_plugins]);
            if let Some(t) = &topo {
                let (aff, spread) = t.scores(i, node);
                raw.extend_from_slice(&[aff, spread]);
            }
        }
        if feasible.is_empty() {
            return None;
        }
        let chosen = if self.random_node {
            feasible[uniform_index(rng, feasible.len())]
        } else {
            let m = feasible.len();
            let mut total = vec![0i64; m];
            // Kubernetes' default weights: InterPodAffinity 2, PodTopologySpread 2.
            let extra =
                [(Normalize::MinMax, self.topology_weights[0]), (Normalize::MaxReversed, self.topology_weights[1])];
            let columns = self.scores.iter().map(|(p, w)| (p.normalize(), *w)).chain(extra).take(n_scores);
            for (k, (norm, w)) in columns.enumerate() {
                let col = |i: usize| raw[i * n_scores + k];
                let hi = (0..m).map(col).max().expect("non-empty");
                let lo = (0..m).map(col).min().expect("non-empty");
                let max = scores::MAX_NODE_SCORE;
                for (i, t) in total.iter_mut().enumerate() {
                    let s = col(i);
                    let s = match norm {
                        Normalize::None => s,
                        Normalize::MinMax if hi == lo => 0,
                        Normalize::MinMax => (s - lo) * max / (hi - lo),
                        Normalize::Max if hi <= 0 => 0,
                        Normalize::Max => s * max / hi,
                        Normalize::MaxReversed if hi <= 0 => max,
                        Normalize::MaxReversed => max - s * max / hi,
                    };
                    *t += w * s;
                }
            }
            let best = *total.iter().max().expect("non-empty");
            let ties: Vec<usize> = (0..m).filter(|&i| total[i] == best).collect();
            match &cx.rank {
                Some(rank) => ties.iter().map(|&i| feasible[i]).min_by_key(|&n| rank[n]).expect("non-empty"),
                None => feasible[ties[uniform_index(rng, ties.len())]],
            }
        };
        let gpus = self.select_gpus(&nodes[chosen], pod, cx, rng);
        Some(TaskBinding { node: sim_core::NodeId(chosen as u32), gpus })
    }

    /// The GPU indices a pod gets on `node` (which passed the filters).
    pub fn select_gpus(&self, node: &NodeUse, pod: &PodReq<'_>, cx: &mut PlaceCx, rng: &mut SimRng) -> Vec<u8> {
        let t = &pod.task;
        if t.gpus == 0 {
            return Vec::new();
        }
        let milli = node.milli_taken(t);
        let fits_mem = |i: usize| node.gpus[i].declared_left() >= node.declared_of(t, i);
        let memory = self.memory == MemoryFit::Aware;
        let ok = |i: usize| node.gpus[i].milli_left >= milli && (!memory || fits_mem(i));
        if milli >= MILLI || t.gpus > 1 {
            // AllocateExclusiveGpuId: the lowest-indexed GPUs that fit.
            return (0..node.gpus.len()).filter(|&i| ok(i)).take(t.gpus as usize).map(|i| i as u8).collect();
        }
        let cands: Vec<usize> = (0..node.gpus.len()).filter(|&i| ok(i)).collect();
        let pick = match self.gpu_select {
            GpuSelect::Best => cands.iter().copied().min_by_key(|&i| (node.gpus[i].milli_left, i)),
            GpuSelect::Random => (!cands.is_empty()).then(|| cands[uniform_index(rng, cands.len())]),
            GpuSelect::Memory => cands.iter().copied().min_by_key(|&i| (node.gpus[i].declared_left(), i)),
            GpuSelect::Scored => {
                let s: Scored = self.scores[0].0.score(node, pod, &mut cx.frag);
                s.gpu.map(|g| g as usize).filter(|g| cands.contains(g)).or_else(|| cands.first().copied())
            }
        };
        pick.map(|i| vec![i as u8]).unwrap_or_default()
    }
}

/// Working state of placements: the fragmentation meter and an optional score cache.
#[derive(Default)]
pub struct PlaceCx {
    /// Fragmentation of nodes against the typical pods (FGD).
    pub frag: FragMeter,
    cache: Option<ScoreCache>,
    rank: Option<Vec<u32>>,
}

struct ScoreCache {
    versions: Vec<u64>,
    dirty: Vec<bool>,
    nodes: usize,
    entries: Vec<(u64, bool, [i64; MAX_SCORES])>,
}

impl PlaceCx {
    /// A context with `frag` and no cache.
    pub fn new(frag: FragMeter) -> Self {
        PlaceCx { frag, cache: None, rank: None }
    }

    /// Breaks ties between equally scored nodes by `rank` (lowest first) instead of a
    /// uniform draw: the FGD simulator names its nodes `<random index>-<name>` and its
    /// scheduler takes the first best node by name, so ties go to the first best node of
    /// a per-run random node order.
    pub fn with_node_order(mut self, rank: Vec<u32>) -> Self {
        self.rank = Some(rank);
        self
    }

    /// Turns on the score cache for `nodes` nodes and `types` pod types: a node's
    /// scores for a type are reused until [`PlaceCx::touch`] says the node changed.
    pub fn with_cache(mut self, nodes: usize, types: usize) -> Self {
        self.cache = Some(ScoreCache {
            versions: vec![1; nodes],
            dirty: vec![false; nodes],
            nodes,
            entries: vec![(0, false, [0; MAX_SCORES]); nodes * types],
        });
        self
    }

    /// Whether a score cache is on.
    pub fn has_cache(&self) -> bool {
        self.cache.is_some()
    }

    /// Marks a node as changed.
    pub fn touch(&mut self, node: usize) {
        if let Some(c) = &mut self.cache {
            c.versions[node] += 1;
        }
    }

    /// Takes the nodes' versions from a ledger (whose versions are bumped on every change)
    /// and forgets which nodes were marked dirty.
    pub fn sync(&mut self, versions: &[u64]) {
        if let Some(c) = &mut self.cache {
            for (v, &w) in c.versions.iter_mut().zip(versions) {
                *v = w + 1;
            }
            c.dirty.iter_mut().for_each(|d| *d = false);
        }
    }

    /// Marks a node as changed on a scratch copy: until the next [`PlaceCx::sync`] its
    /// results are computed afresh and not cached.
    pub fn mark_dirty(&mut self, node: usize) {
        if let Some(c) = &mut self.cache {
            c.dirty[node] = true;
        }
    }

    /// Marks every node as changed until the next [`PlaceCx::sync`].
    pub fn mark_all_dirty(&mut self) {
        if let Some(c) = &mut self.cache {
            c.dirty.iter_mut().for_each(|d| *d = true);
        }
    }

    /// Forgets every cached result (the scores changed, e.g. new typical pods).
    pub fn clear_cache(&mut self) {
        if let Some(c) = &mut self.cache {
            c.entries.iter_mut().for_each(|e| e.0 = 0);
        }
    }
}
