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
//! | `least-allocated` | Kubernetes' default profile: `NodeResourcesFit` `LeastAllocated` 1 + `NodeResourcesBalancedAllocation` 1 | best fit |
//! | `most-allocated` | a profile with scoring strategy `MostAllocated`: `NodeResourcesFit` `MostAllocated` 1 + `NodeResourcesBalancedAllocation` 1 | best fit |
//! | `balanced` | `NodeResourcesBalancedAllocation` 1 alone | best fit |
//! | `random` | FGD `RandomScore` | random |
//! | `dotprod` | FGD `DotProductScore` (merge, max) | best fit |
//! | `gpuclustering` | FGD `GpuClusteringScore` | best fit |
//! | `gpupacking` | FGD `GpuPackingScore` | best fit |
//! | `bestfit` | FGD `BestFitScore` | best fit |
//! | `fgd` | FGD `FGDScore` | the score's choice |
//!
//! Every placement also carries Kubernetes' `TaintToleration` and `NodeAffinity` scores
//! and the inter-pod terms (`InterPodAffinity`, `PodTopologySpread`), at the default
//! weights of its [`Release`] (the FGD paper's scores at weight 1000, as its simulator
//! runs them). `ImageLocality` (weight 1) is not modelled: there are no images, so it
//! would give every node the same score; nor is v1.20's `NodePreferAvoidPods` (weight
//! 10000; no node carries its annotation, so every node scores 100) — neither changes a
//! choice. v1.20's `SelectorSpread` is off by default there (the `DefaultPodTopologySpread`
//! gate is on), so it is not modelled either.
//!
//! [`NodesToScore`] (`percentageOfNodesToScore`) bounds how many feasible nodes are found
//! before scoring; placements by name score every node, and `kube` samples by default.
//!
//! With [`MemoryFit::Aware`] the [`filters::GpuMemoryFit`] filter is added and a shared
//! pod's GPU is the one with the least declared memory left that fits (Aliyun
//! gpushare's binpack); with [`MemoryFit::Oblivious`] only GPU counts and milli-GPU are
//! looked at, as the default Kubernetes scheduler and the FGD simulator do.

pub mod filters;
pub mod frag;
pub mod sample;
pub mod scores;
pub mod topology;

use filters::{FilterPlugin, GpuMemoryFit, GpuShareFit, NodeAffinity, NodeResourcesFit, TaintToleration};
use frag::FragMeter;
pub use sample::{MIN_FEASIBLE_NODES_TO_FIND, NodesToScore, zone_interleaved};
use sample::{SampleTree, Sampled};
pub use scores::Release;
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
    /// one id must have the same shape and GPU models (what the cached filters and scores
    /// look at; those of labels, taints and other pods are computed per pod).
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

/// Why a pod fits on no node, counted per reason over the nodes: kube-scheduler's
/// `FitError` (kubernetes v1.31 `pkg/scheduler/framework/types.go`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unschedulable {
    /// Nodes looked at.
    pub nodes: usize,
    /// Nodes that pass every filter.
    pub feasible: usize,
    /// Each reason with the number of nodes that gave it.
    pub reasons: std::collections::BTreeMap<String, u32>,
}

impl Unschedulable {
    /// kube-scheduler's `FailedScheduling` message: `0/8 nodes are available: 2
    /// Insufficient nvidia.com/gpu, 6 node(s) didn't match Pod's node affinity/selector.`
    /// — `count reason` items sorted as strings (as `FitError.Error` sorts its
    /// histogram), joined by `, `.
    pub fn message(&self) -> String {
        let mut items: Vec<String> = self.reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
        items.sort();
        let mut m = format!("{}/{} nodes are available", self.feasible, self.nodes);
        if !items.is_empty() {
            m.push_str(": ");
            m.push_str(&items.join(", "));
        }
        m.push('.');
        m
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
    /// Weights of InterPodAffinity and PodTopologySpread (the release's defaults).
    topology_weights: [i64; 2],
    /// The kube-scheduler release whose scores and default weights it has.
    release: Release,
    /// How many feasible nodes are found before scoring.
    nodes_to_score: NodesToScore,
    /// Which filters and score columns look only at the node's labels and taints.
    filter_meta: Vec<bool>,
    score_meta: Vec<bool>,
}

/// Most score plugins one placement combines.
pub const MAX_SCORES: usize = 4;

/// The `k8s=` values of [`Release`], current first.
pub const RELEASES: &[&str] = &["current", "1.23", "1.20"];

impl Release {
    /// The release named `name` in [`RELEASES`].
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "current" => Release::Current,
            "1.23" => Release::V1_23,
            "1.20" => Release::V1_20,
            _ => return None,
        })
    }
}

/// The plugin keys of a placement spec and the plugins they weigh.
const PLUGIN_KEYS: &[(&str, &str)] = &[
    ("tainttoleration", "TaintToleration"),
    ("nodeaffinity", "NodeAffinity"),
    ("interpodaffinity", "InterPodAffinity"),
    ("podtopologyspread", "PodTopologySpread"),
    ("balancedallocation", "NodeResourcesBalancedAllocation"),
];

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
    /// The placement called `name` (see the module docs), looking at GPU memory or not,
    /// with the current release's scores and weights.
    pub fn by_name(name: &str, memory: MemoryFit) -> Option<Self> {
        Self::for_release(name, memory, Release::default())
    }

    /// The placement called `name` with the scores and default weights of `release`.
    pub fn for_release(name: &str, memory: MemoryFit, release: Release) -> Option<Self> {
        let (score, select): (Box<dyn ScorePlugin>, GpuSelect) = match name {
            "least-allocated" => (Box::new(scores::LeastAllocated), GpuSelect::Best),
            "most-allocated" => (Box::new(scores::MostAllocated(release)), GpuSelect::Best),
            "balanced" => (Box::new(scores::BalancedAllocation(release)), GpuSelect::Best),
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
        let kubernetes = name.contains("allocated") || name == "balanced";
        let weight = if kubernetes { 1 } else { 1000 };
        let gpu_select = if memory == MemoryFit::Aware {
            filters.push(Box::new(GpuMemoryFit));
            if select == GpuSelect::Scored { GpuSelect::Scored } else { GpuSelect::Memory }
        } else {
            select
        };
        let [taint, affinity, inter_pod, spread] = release.default_weights();
        let mut scores: Vec<(Box<dyn ScorePlugin>, i64)> = vec![(score, weight)];
        if name.contains("allocated") {
            // A profile's NodeResourcesFit strategy comes with BalancedAllocation at 1.
            scores.push((Box::new(scores::BalancedAllocation(release)), 1));
        }
        scores.push((Box::new(scores::TaintTolerationScore), taint));
        scores.push((Box::new(scores::NodeAffinityScore), affinity));
        Some(Placement {
            name: name.to_string(),
            filter_meta: filters.iter().map(|f| f.meta_only()).collect(),
            score_meta: scores.iter().map(|(p, _)| p.meta_only()).collect(),
            filters,
            random_node: name == "random",
            scores,
            gpu_select,
            memory,
            topology_weights: [inter_pod, spread],
            release,
            nodes_to_score: NodesToScore::All,
        })
    }

    /// A placement from a spec such as `bestfit,nodeaffinity=2,interpodaffinity=2`: the
    /// main score (see [`PLACEMENTS`]), optionally `=weight`, then `k8s=current|1.23|1.20`
    /// (the [`Release`] whose scores and default weights it has), the weights of the
    /// Kubernetes plugins every placement carries — `tainttoleration` (default 3),
    /// `nodeaffinity` (2), `interpodaffinity` (2), `podtopologyspread` (2) — and of
    /// `balancedallocation` (1) where it has one, and `memory=aware|oblivious`. It scores
    /// every node.
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
        let mut release = Release::default();
        let mut weights: Vec<(&str, i64)> = Vec::new();
        for p in parts {
            let (k, v) = p.split_once('=').ok_or_else(|| format!("'{p}': expected key=value"))?;
            match k {
                "memory" => {
                    memory = match v {
                        "aware" => MemoryFit::Aware,
                        "oblivious" => MemoryFit::Oblivious,
                        _ => return Err(format!("'{p}': memory is aware or oblivious")),
                    };
                    continue;
                }
                "k8s" => {
                    release =
                        Release::parse(v).ok_or_else(|| format!("'{p}': k8s is one of {}", RELEASES.join(", ")))?;
                    continue;
                }
                _ => {}
            }
            let w: i64 = v.parse().map_err(|_| format!("'{p}': expected an integer weight"))?;
            let Some(&(_, plugin)) = PLUGIN_KEYS.iter().find(|(key, _)| *key == k) else {
                return Err(format!(
                    "unknown plugin '{k}' (expected tainttoleration, nodeaffinity, interpodaffinity, podtopologyspread, \
                     balancedallocation, k8s or memory)"
                ));
            };
            weights.push((plugin, w));
        }
        let mut pl = Placement::for_release(name, memory, release).expect("listed placement");
        pl.name = spec.to_string();
        for (plugin, w) in weights {
            match plugin {
                "InterPodAffinity" => pl.topology_weights[0] = w,
                "PodTopologySpread" => pl.topology_weights[1] = w,
                _ => {
                    let column = pl.scores.iter_mut().find(|(p, _)| p.name() == plugin);
                    *column.map(|c| &mut c.1).ok_or_else(|| format!("'{name}' has no {plugin} score"))? = w;
                }
            }
        }
        if let Some(w) = main_weight {
            pl.scores[0].1 = w;
        }
        Ok(pl)
    }

    /// The same placement finding only as many feasible nodes as `n` says before scoring.
    pub fn with_nodes_to_score(mut self, n: NodesToScore) -> Self {
        self.nodes_to_score = n;
        self
    }

    /// The release whose scores and default weights it has.
    pub fn release(&self) -> Release {
        self.release
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `node` passes the filters that look only at its labels and taints (a
    /// failure there is one removing pods cannot resolve: `UnschedulableAndUnresolvable`).
    pub fn passes_meta(&self, node: &NodeUse, pod: &PodReq<'_>) -> bool {
        self.filters.iter().zip(&self.filter_meta).filter(|(_, m)| **m).all(|(f, _)| f.pass(node, pod))
    }

    /// Whether `node` passes every filter plugin (inter-pod terms not included).
    pub fn passes_all(&self, node: &NodeUse, pod: &PodReq<'_>) -> bool {
        self.filters.iter().all(|f| f.pass(node, pod))
    }

    /// Whether `node` passes the filters of one kind — those that look only at its labels
    /// and taints (`meta`) or the others — and the raw scores of the plugins of that kind
    /// (the other columns 0).
    fn eval(&self, node: &NodeUse, pod: &PodReq<'_>, frag: &mut FragMeter, meta: bool) -> (bool, [i64; MAX_SCORES]) {
        let mut s = [0i64; MAX_SCORES];
        let pass =
            self.filters.iter().zip(&self.filter_meta).filter(|(_, m)| **m == meta).all(|(f, _)| f.pass(node, pod));
        if !pass {
            return (false, s);
        }
        if !self.random_node {
            for (k, (p, _)) in self.scores.iter().enumerate() {
                if self.score_meta[k] == meta {
                    s[k] = p.score(node, pod, frag).score;
                }
            }
        }
        (true, s)
    }

    /// Why `pod` can go on no node (or on how many it can): each node not `allowed` is
    /// unschedulable; otherwise, as kube-scheduler runs its filters and stops at the
    /// first that fails, TaintToleration, then NodeAffinity, then the resource filters
    /// (CPU, memory, GPUs: one plugin upstream, so all their reasons count), then
    /// PodTopologySpread, then InterPodAffinity.
    pub fn diagnose(&self, nodes: &[NodeUse], allowed: &[bool], pod: &PodReq<'_>, cx: &mut PlaceCx) -> Unschedulable {
        let topo = topology::PodTopology::new(nodes, pod.constraints, &mut cx.domains, cx.term_pods.take());
        let mut meta: Vec<&dyn FilterPlugin> =
            self.filters.iter().filter(|f| f.meta_only()).map(|f| f.as_ref()).collect();
        meta.sort_by_key(|f| f.name() != "TaintToleration");
        let mut out = Unschedulable { nodes: nodes.len(), ..Unschedulable::default() };
        for (i, node) in nodes.iter().enumerate() {
            let mut why: Vec<String> = Vec::new();
            if !allowed.get(i).copied().unwrap_or(false) {
                why.push("node(s) were unschedulable".into());
            }
            for f in &meta {
                if why.is_empty() {
                    why = f.why_not(node, pod);
                }
            }
            if why.is_empty() {
                why = self.filters.iter().filter(|f| !f.meta_only()).flat_map(|f| f.why_not(node, pod)).collect();
            }
            if why.is_empty()
                && let Some(w) = topo.as_ref().and_then(|t| t.why_not(i))
            {
                why.push(w.to_string());
            }
            if why.is_empty() {
                out.feasible += 1;
            }
            // One count per node and reason (both GPU filters may say the same).
            why.sort();
            why.dedup();
            for w in why {
                *out.reasons.entry(w).or_default() += 1;
            }
        }
        out
    }

    /// Whether every label-and-taint score that counts gives `pod` the same on the nodes of
    /// every label-and-taint set listed in `metas` (the first node of each).
    fn meta_scores_uniform(&self, nodes: &[NodeUse], metas: &[u32], pod: &PodReq<'_>, frag: &mut FragMeter) -> bool {
        let mut first: Option<[i64; MAX_SCORES]> = None;
        for &m in metas {
            let (_, s) = self.eval(&nodes[m as usize], pod, frag, true);
            // The other columns are 0 in a label-and-taint evaluation.
            let s = std::array::from_fn(|k| if self.scores.get(k).is_some_and(|p| p.1 != 0) { s[k] } else { 0 });
            match first {
                None => first = Some(s),
                Some(f) if f != s => return false,
                _ => {}
            }
        }
        true
    }

    /// The weighted sum of the raw scores of a node's row that do not look only at labels
    /// and taints: what decides between nodes when [`Placement::use_decides`] holds.
    fn decisive(&self, row: &[i64]) -> i64 {
        self.scores.iter().zip(&self.score_meta).zip(row).filter(|((_, m), _)| !**m).map(|((p, _), s)| p.1 * s).sum()
    }

    /// Whether node `i` passes the filters, and its raw scores (without the inter-pod
    /// terms): the part that depends on its use from the cache where it holds the node's
    /// current version, the part that depends on its labels and taints from the pass's
    /// `last_meta` when it is of the same pool as the last node asked.
    fn row_of(&self, p: &mut Pass<'_>, i: usize) -> Option<[i64; MAX_SCORES]> {
        let (node, pod, tainted) = (&p.nodes[i], p.pod, p.tainted[i]);
        let (ok, mut s) = match &mut p.cache {
            Some((c, ty)) if !c.dirty[i] => {
                let e = &mut c.entries[*ty as usize * c.nodes + i];
                let v = c.versions[i];
                if e.0 != v {
                    let r = self.eval(node, pod, p.frag, false);
                    *e = (v, r.0, r.1);
                }
                (e.1, e.2)
            }
            _ => self.eval(node, pod, p.frag, false),
        };
        if !ok {
            return None;
        }
        if pod.constraints.is_some() || tainted {
            let ptr = std::sync::Arc::as_ptr(&node.meta);
            let (ok, m) = match p.last_meta {
                Some((q, ok, m)) if q == ptr => (ok, m),
                _ => {
                    let (ok, m) = self.eval(node, pod, p.frag, true);
                    p.last_meta = Some((ptr, ok, m));
                    (ok, m)
                }
            };
            if !ok {
                return None;
            }
            for (a, b) in s.iter_mut().zip(m) {
                *a += b;
            }
        }
        Some(s)
    }

    /// Chooses a node and GPUs for `pod` among the `nodes` that are `allowed` (up, not
    /// reserved: one flag per node); `None` when no node passes the filters.
    pub fn place(
        &self,
        nodes: &[NodeUse],
        allowed: &[bool],
        pod: &PodReq<'_>,
        cx: &mut PlaceCx,
        rng: &mut SimRng,
    ) -> Option<TaskBinding> {
        cx.refresh_node_lists(nodes);
        let term_pods = cx.term_pods.take();
        let PlaceCx {
            frag,
            cache,
            domains,
            buf,
            tainted,
            again,
            metas,
            rank,
            known_nodes,
            scan_order,
            scan_pos,
            next_start,
            ..
        } = cx;
        // A pod with inter-pod terms or spreads of its own is always prepared; one without
        // only after its last placement could not be followed (running pods' terms may
        // select it: `again_step` checks that none appeared), or when sampling.
        let own = pod.constraints.is_some_and(|c| c.has_pod_topology());
        let cache = type_cache(cache, pod.type_id);
        let to_find = self.nodes_to_score.to_find(nodes.len());
        // Sampling: scan from where the last cycle stopped, in the node tree's order.
        let start = *next_start % nodes.len().max(1);
        let scan = (to_find < nodes.len()).then_some(Scan { order: scan_order, pos: scan_pos, start, to_find });
        let mut p = Pass {
            nodes,
            allowed,
            pod,
            frag,
            topo: None,
            slot: cache.as_ref().map(|c| c.1 as usize),
            cache,
            tainted,
            metas,
            last_meta: None,
            again,
            cptr: pod.constraints.map(|c| c as *const _ as usize),
            known_nodes: *known_nodes,
            scan,
            processed: nodes.len(),
        };
        // The same pod again after only some nodes changed (the next task of a gang, the
        // next pod of its type): the best nodes follow from the last ones and those nodes.
        // Nodes allowed or barred since (a node down or back, a gang's reservation) count
        // as changed ones.
        let previous = p.slot.and_then(|t| p.again.take(t, p.cptr)).filter(|a| {
            !own && a.nodes == (nodes.as_ptr() as usize, nodes.len()) && a.tree.is_some() == p.scan.is_some()
        });
        let previous = previous
            .filter(|a| a.allowed.len() == allowed.len())
            .and_then(|mut a| a.follow_allowed(allowed, nodes.len() / 8, nodes.len()).then_some(a));
        let previous = match previous {
            Some(mut a) if a.recheck => {
                a.recheck = false;
                self.decides_alone(&mut p).then_some(a)
            }
            a => a,
        };
        let chosen = if let Some(start) = p.scan.as_ref().map(|s| s.start) {
            // The sample tree holds the use scores only: it serves while no running pod's
            // term and no term of the pod's own concerns it.
            p.topo = topology::PodTopology::new(nodes, pod.constraints, domains, term_pods);
            let previous = previous.filter(|_| p.topo.is_none());
            let chosen = self.sampled_pass(&mut p, previous, buf, rank.as_deref(), rng);
            // The next cycle starts after the nodes this one looked at (`nextStartNodeIndex`).
            *next_start = (start + p.processed) % nodes.len();
            chosen?
        } else {
            match previous.and_then(|a| self.again_step(&mut p, a)) {
                Some((ties, a)) => {
                    p.again.put(p.slot.expect("cached"), p.cptr, a);
                    if ties.is_empty() {
                        return None;
                    }
                    pick(&ties, rank.as_deref(), rng)
                }
                None => {
                    p.topo = topology::PodTopology::new(nodes, pod.constraints, domains, term_pods);
                    self.full_pass(&mut p, buf, rank.as_deref(), rng)?
                }
            }
        };
        let gpus = self.select_gpus(&nodes[chosen], pod, cx, rng);
        Some(TaskBinding { node: sim_core::NodeId(chosen as u32), gpus })
    }

    /// [`Placement::place`] on a ledger's nodes, which says without looking at every node
    /// whether one holds a pod with inter-pod terms.
    pub fn place_on(
        &self,
        ledger: &sim_core::ledger::Ledger,
        allowed: &[bool],
        pod: &PodReq<'_>,
        cx: &mut PlaceCx,
        rng: &mut SimRng,
    ) -> Option<TaskBinding> {
        // A pod asking whole GPUs fits no node with fewer wholly free: when no node has
        // enough, the placement fails whatever the rest, as `place` would find (a failed
        // placement draws nothing and moves no sampling start), without bringing its
        // caches up to date.
        let t = &pod.task;
        if t.gpus > 0 && t.gpu_milli() >= sim_core::ledger::MILLI && ledger.nodes_with_free_gpus(t.gpus) == 0 {
            return None;
        }
        cx.term_pods = Some(ledger.has_term_pods());
        self.place(ledger.nodes(), allowed, pod, cx, rng)
    }

    /// A sampling placement (`nodes_to_score` below the node count; sets `p.processed`):
    /// when the use scores alone decide, from the pod type's [`SampleTree`] — built over
    /// every node the first time, then brought up to date with the nodes changed since —
    /// else by a scan that stops at the `to_find`-th feasible node. Both give the same
    /// node and draw the same random number (a property test checks it).
    fn sampled_pass(
        &self,
        p: &mut Pass<'_>,
        previous: Option<Again>,
        buf: &mut PlaceBuf,
        rank: Option<&[u32]>,
        rng: &mut SimRng,
    ) -> Option<usize> {
        let key = |pl: &Self, p: &mut Pass<'_>, i: usize| {
            if p.allowed[i] { pl.row_of(p, i).map(|r| pl.decisive(&r)) } else { None }
        };
        let mut a = match previous {
            Some(mut a) => {
                let changed = std::mem::take(&mut a.changed);
                let seen = &mut buf.seen;
                seen.resize(p.nodes.len(), false);
                let tree = a.tree.as_mut().expect("a sampling placement's");
                for &i in &changed {
                    let i = i as usize;
                    if !std::mem::replace(&mut seen[i], true) {
                        tree.set(p.scan.as_ref().expect("sampling").pos[i] as usize, key(self, p, i));
                    }
                }
                for &i in &changed {
                    seen[i as usize] = false;
                }
                a.changed = changed;
                a
            }
            None if rank.is_none() && self.decides_alone(p) => {
                // In node order (pools are adjacent: their label-and-taint part is reused).
                let mut keys = vec![None; p.nodes.len()];
                for i in 0..p.nodes.len() {
                    keys[p.scan.as_ref().expect("sampling").pos[i] as usize] = key(self, p, i);
                }
                p.new_again(Vec::new(), false, i64::MIN, Some(SampleTree::new(&keys)))
            }
            None => return self.full_pass(p, buf, rank, rng),
        };
        let scan = p.scan.as_ref().expect("sampling");
        let Sampled { position, processed } =
            a.tree.as_ref().expect("built").sample(scan.start, scan.to_find, |ties| uniform_index(rng, ties));
        let chosen = position.map(|pos| scan.order[pos] as usize);
        p.processed = processed;
        a.changed.clear();
        p.again.put(p.slot.expect("cached"), p.cptr, a);
        chosen
    }

    /// The incremental step from `a`, the pod's last placement: its changed nodes are
    /// evaluated afresh. The best nodes now (empty: none fits) and what to keep; `None`
    /// when a full pass is needed.
    fn again_step(&self, p: &mut Pass<'_>, mut a: Again) -> Option<(Vec<u32>, Again)> {
        let mut changed = std::mem::take(&mut a.changed);
        changed.sort_unstable();
        changed.dedup();
        // The last placement found no running pod's term that selects the pod; the nodes
        // not changed since hold the same pods, a changed one may hold a new term.
        if changed.iter().any(|&i| p.nodes[i as usize].term_pods > 0) {
            return None;
        }
        let allowed = p.allowed;
        let fresh: Vec<(u32, i64)> = changed
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| allowed[i])
            .filter_map(|i| self.row_of(p, i).map(|r| (i as u32, self.decisive(&r))))
            .collect();
        if a.update(&changed, fresh, p.known_nodes) { Some((a.best_nodes(), a)) } else { None }
    }

    /// The full pass over the allowed nodes: `None` when none fits, else the chosen one —
    /// a uniform draw for `random`, else one of the best (see [`pick`]). Records the pod's
    /// [`Again`] when the use scores alone decide.
    fn full_pass(&self, p: &mut Pass<'_>, buf: &mut PlaceBuf, rank: Option<&[u32]>, rng: &mut SimRng) -> Option<usize> {
        let PlaceBuf { feasible, raw, total, ties, .. } = buf;
        self.collect_feasible(p, feasible, raw);
        let first_decides = self.use_decides(p);
        if feasible.is_empty() {
            if first_decides {
                p.remember(Vec::new(), true, i64::MIN);
            }
            return None;
        }
        if self.random_node {
            return Some(feasible[uniform_index(rng, feasible.len())] as usize);
        }
        // Two more columns with inter-pod terms: InterPodAffinity and PodTopologySpread.
        let n_scores = self.scores.len() + if p.topo.is_some() { 2 } else { 0 };
        let best = self.best_ties(raw, n_scores, first_decides, total, ties);
        // From positions among the feasible nodes to node ids (same order).
        ties.iter_mut().for_each(|t| *t = feasible[*t as usize]);
        if first_decides {
            let complete = feasible.len() <= p.known_nodes;
            let known = if complete {
                feasible.iter().zip(raw.iter()).map(|(&n, r)| (n, self.decisive(r))).collect()
            } else {
                ties.iter().map(|&n| (n, best)).collect()
            };
            p.remember(known, complete, best);
        }
        Some(pick(ties, rank, rng))
    }

    /// The allowed nodes that pass every filter (the inter-pod ones too) into `feasible`,
    /// in node order, and their raw scores into `raw` (the normalised InterPodAffinity and
    /// PodTopologySpread scores, which depend on the feasible nodes, in the two columns
    /// after the plugins'). When sampling ([`Pass::scan`]), the nodes in scan order
    /// from its start until as many as it wants are found; `p.processed` tells how many
    /// nodes were looked at. kube-scheduler checks nodes in parallel and stops once enough
    /// fit (`findNodesThatPassFilters`), so which nodes it has looked at by then varies;
    /// here they are looked at one by one, and the count is exact.
    fn collect_feasible(&self, p: &mut Pass<'_>, feasible: &mut Vec<u32>, raw: &mut Vec<[i64; MAX_SCORES + 2]>) {
        let n = p.nodes.len();
        feasible.clear();
        raw.clear();
        match p.scan.as_ref().map(|s| (s.order, s.start, s.to_find)) {
            None => {
                for i in (0..n).filter(|&i| p.allowed[i]) {
                    self.push_if_feasible(p, i, feasible, raw);
                }
            }
            Some((order, start, to_find)) => {
                for j in 0..n {
                    let i = order[(start + j) % n] as usize;
                    if p.allowed[i] && self.push_if_feasible(p, i, feasible, raw) && feasible.len() == to_find {
                        p.processed = j + 1;
                        break;
                    }
                }
            }
        }
        if let Some(t) = p.topo.as_ref().filter(|_| !self.random_node) {
            let n_plugins = self.scores.len();
            let (aff, spread) = t.scores(feasible);
            for ((row, a), s) in raw.iter_mut().zip(aff).zip(spread) {
                row[n_plugins] = a;
                row[n_plugins + 1] = s;
            }
        }
    }

    /// Whether node `i` passes every filter; if it does, it goes into `feasible` and its
    /// raw scores into `raw`.
    fn push_if_feasible(
        &self,
        p: &mut Pass<'_>,
        i: usize,
        feasible: &mut Vec<u32>,
        raw: &mut Vec<[i64; MAX_SCORES + 2]>,
    ) -> bool {
        let Some(s) = self.row_of(p, i) else {
            return false;
        };
        if p.topo.as_ref().is_some_and(|t| !t.pass(i)) {
            return false;
        }
        feasible.push(i as u32);
        let mut row = [0i64; MAX_SCORES + 2];
        row[..MAX_SCORES].copy_from_slice(&s);
        raw.push(row);
        true
    }

    /// Whether the scores of the nodes' use alone decide, now and after any nodes change,
    /// by the weighted sum of their raw scores ([`Placement::decisive`]): every node looked
    /// at, those scores unnormalised (so each node's sum depends on that node alone), no
    /// inter-pod terms, and every label-and-taint score the same on every node (labels and
    /// taints give all pools the same score).
    fn use_decides(&self, p: &mut Pass<'_>) -> bool {
        p.scan.is_none() && self.decides_alone(p)
    }

    /// [`Placement::use_decides`] but for looking at every node: whether the use scores
    /// alone decide among any set of nodes (what a [`SampleTree`] needs).
    fn decides_alone(&self, p: &mut Pass<'_>) -> bool {
        p.slot.is_some()
            && p.topo.is_none()
            && !self.random_node
            && self.scores.iter().zip(&self.score_meta).all(|((s, _), meta)| *meta || s.normalize() == Normalize::None)
            && p.metas.len() < 64
            && self.meta_scores_uniform(p.nodes, p.metas, p.pod, p.frag)
    }

    /// The positions among the feasible nodes (rows of `raw`) of the best into `ties`: of
    /// the highest [`Placement::decisive`] sum when the use scores alone decide, else of the
    /// highest weighted sum of the normalised scores of the first `n_scores` columns.
    /// Returns the highest decisive sum (when they decide).
    fn best_ties(
        &self,
        raw: &[[i64; MAX_SCORES + 2]],
        n_scores: usize,
        first_decides: bool,
        total: &mut Vec<i64>,
        ties: &mut Vec<u32>,
    ) -> i64 {
        let m = raw.len();
        ties.clear();
        let mut hi = [i64::MIN; MAX_SCORES + 2];
        let mut lo = [i64::MAX; MAX_SCORES + 2];
        if first_decides {
            total.clear();
            total.extend(raw.iter().map(|r| self.decisive(r)));
            let best = *total.iter().max().expect("non-empty");
            ties.extend((0..m as u32).filter(|&i| total[i as usize] == best));
            return best;
        } else {
            for row in raw.iter() {
                for k in 0..n_scores {
                    lo[k] = lo[k].min(row[k]);
                    hi[k] = hi[k].max(row[k]);
                }
            }
            self.weighted_totals(raw, n_scores, (&lo, &hi), total);
            let best = *total.iter().max().expect("non-empty");
            ties.extend((0..m as u32).filter(|&i| total[i as usize] == best));
        }
        i64::MIN
    }

    /// Into `total`, each row's weighted sum of its normalised scores (Kubernetes'
    /// NormalizeScore then the weights), given each column's lowest and highest raw score.
    fn weighted_totals(
        &self,
        raw: &[[i64; MAX_SCORES + 2]],
        n_scores: usize,
        (lo, hi): (&[i64; MAX_SCORES + 2], &[i64; MAX_SCORES + 2]),
        total: &mut Vec<i64>,
    ) {
        // Kubernetes' default weights: InterPodAffinity 2, PodTopologySpread 2; their
        // columns come normalised (see `topology::PodTopology::scores`).
        let extra = [(Normalize::None, self.topology_weights[0]), (Normalize::None, self.topology_weights[1])];
        // A column whose raw scores are all equal, or weighs nothing, adds
        // the same to every node: the choice does not change without it.
        let columns = self.scores.iter().map(|(p, w)| (p.normalize(), *w)).chain(extra).take(n_scores);
        let active: Vec<(usize, Normalize, i64)> =
            columns.enumerate().filter(|&(k, (_, w))| w != 0 && lo[k] != hi[k]).map(|(k, (n, w))| (k, n, w)).collect();
        let max = scores::MAX_NODE_SCORE;
        let norm = |k: usize, n: Normalize, s: i64| match n {
            Normalize::None => s,
            Normalize::MinMax => (s - lo[k]) * max / (hi[k] - lo[k]),
            Normalize::Max if hi[k] <= 0 => 0,
            Normalize::Max => s * max / hi[k],
            Normalize::MaxReversed if hi[k] <= 0 => max,
            Normalize::MaxReversed => max - s * max / hi[k],
        };
        total.clear();
        total.resize(raw.len(), 0);
        for &(k, n, w) in &active {
            for (t, row) in total.iter_mut().zip(raw.iter()) {
                *t += w * norm(k, n, row[k]);
            }
        }
    }

    /// The GPU indices a pod gets on `node` (which passed the filters).
    pub fn select_gpus(&self, node: &NodeUse, pod: &PodReq<'_>, cx: &mut PlaceCx, rng: &mut SimRng) -> Vec<u8> {
        let t = &pod.task;
        if t.gpus == 0 {
            return Vec::new();
        }
        let ok = |i: usize| filters::gpu_fits(node, t, i, self.memory == MemoryFit::Aware);
        if node.milli_taken(t) >= MILLI || t.gpus > 1 {
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

/// One of the equally best nodes: the first in `rank` order when given (the FGD
/// simulator's node order), else a uniform draw (Kubernetes' `selectHost`).
fn pick(ties: &[u32], rank: Option<&[u32]>, rng: &mut SimRng) -> usize {
    match rank {
        Some(rank) => ties.iter().map(|&n| n as usize).min_by_key(|&n| rank[n]).expect("non-empty"),
        None => ties[uniform_index(rng, ties.len())] as usize,
    }
}

/// Working state of placements: the fragmentation meter and an optional score cache.
#[derive(Default)]
pub struct PlaceCx {
    /// Fragmentation of nodes against the typical pods (FGD).
    pub frag: FragMeter,
    cache: Option<ScoreCache>,
    rank: Option<Vec<u32>>,
    domains: topology::Domains,
    /// Whether each node has taints (they do not change during a run).
    tainted: Vec<bool>,
    buf: PlaceBuf,
    /// Per pod type (and constraints), what its last placement found.
    again: Agains,
    /// A node of each distinct label-and-taint set (at most 64 are listed).
    metas: Vec<u32>,
    /// Most nodes that fit an [`Again`] lists all of.
    known_nodes: usize,
    /// The ledger's label-and-taint epoch the label-and-taint results were made for.
    meta_epoch: u64,
    /// The order sampling placements scan nodes in ([`zone_interleaved`]), and each node's
    /// position in it.
    scan_order: Vec<u32>,
    scan_pos: Vec<u32>,
    /// Where the next sampling placement starts in `scan_order` (`nextStartNodeIndex`).
    next_start: usize,
    /// Whether some node holds a pod with inter-pod terms, for the next placement only
    /// (set by [`Placement::place_on`]; `None`: looked up on the nodes).
    term_pods: Option<bool>,
}

/// The [`Again`]s of pod types without constraints, by type, and of the last pods with
/// constraints (by type and constraints, the most recent [`CONSTRAINED_AGAINS`]).
#[derive(Default)]
struct Agains {
    by_type: Vec<Option<Again>>,
    constrained: Vec<(usize, usize, Again)>,
}

/// Most pods with constraints whose last placement is kept.
const CONSTRAINED_AGAINS: usize = 32;

impl Agains {
    fn take(&mut self, ty: usize, constraints: Option<usize>) -> Option<Again> {
        match constraints {
            None => self.by_type.get_mut(ty).and_then(Option::take),
            Some(c) => {
                let i = self.constrained.iter().position(|e| e.0 == ty && e.1 == c)?;
                Some(self.constrained.remove(i).2)
            }
        }
    }

    fn put(&mut self, ty: usize, constraints: Option<usize>, a: Again) {
        match constraints {
            None => {
                if self.by_type.len() <= ty {
                    self.by_type.resize_with(ty + 1, || None);
                }
                self.by_type[ty] = Some(a);
            }
            Some(c) => {
                if self.constrained.len() >= CONSTRAINED_AGAINS {
                    self.constrained.remove(0);
                }
                self.constrained.push((ty, c, a));
            }
        }
    }

    /// Notes a changed node in each; one whose list of distinct nodes grows past `limit`
    /// is dropped — but a sampling placement's, whose tree is brought up to date node by
    /// node for less than it costs to build anew (`nodes`: the node count).
    fn note_change(&mut self, node: u32, limit: usize, nodes: usize) {
        for slot in &mut self.by_type {
            if let Some(a) = slot
                && !a.note_change(node, limit, nodes)
            {
                *slot = None;
            }
        }
        self.constrained.retain_mut(|e| e.2.note_change(node, limit, nodes));
    }

    fn clear(&mut self) {
        self.by_type.clear();
        self.constrained.clear();
    }

    /// Labels or taints changed: each is checked again before its next use.
    fn recheck(&mut self) {
        self.by_type.iter_mut().flatten().for_each(|a| a.recheck = true);
        self.constrained.iter_mut().for_each(|e| e.2.recheck = true);
    }
}

/// Most nodes that fit an [`Again`] lists all of.
const KNOWN_NODES: usize = 256;

/// What the last placement of a pod type found, for its next placement when only the
/// nodes noted since have changed (the next task of a gang, the next pod of the type in
/// a later pass). Kept only when the first score alone, unnormalised, decides (every
/// other score gives all nodes the same): then the nodes that fit are known from the
/// list and the changed nodes, re-evaluated — all of them while they are few, else the
/// best ones, every other node scoring less. A full pass is needed only when every best
/// node changed and none scores as high. The result is the full pass's (a property test
/// checks it).
struct Again {
    /// The ledger's node list it was made on (address and length, compared only).
    nodes: (usize, usize),
    allowed: Vec<bool>,
    /// Nodes that fit, in node order, with their first score: all of them (`complete`),
    /// or else those of the best score `best` (every other node that fits scores less).
    known: Vec<(u32, i64)>,
    complete: bool,
    best: i64,
    /// Nodes marked dirty since.
    changed: Vec<u32>,
    /// For a sampling placement (`known` unused): every node's decisive score by scan position.
    tree: Option<SampleTree>,
    /// Labels or taints changed since it was made: it serves only if the use scores still
    /// decide alone ([`Placement::decides_alone`]).
    recheck: bool,
}

impl Again {
    /// Notes a changed node; false when the changed nodes are too many to keep it (see
    /// [`Agains::note_change`]). Repeats are dropped when the list grows long.
    fn note_change(&mut self, node: u32, limit: usize, nodes: usize) -> bool {
        self.changed.push(node);
        let long = if self.tree.is_some() { 2 * nodes.max(limit) } else { limit };
        if self.changed.len() > long {
            self.changed.sort_unstable();
            self.changed.dedup();
            return self.tree.is_some() || self.changed.len() <= limit;
        }
        true
    }

    /// Notes each node whose allowed flag differs from `allowed` (as long) as changed, and
    /// takes `allowed` in; false when that makes too many (see [`Again::note_change`]).
    fn follow_allowed(&mut self, allowed: &[bool], limit: usize, nodes: usize) -> bool {
        if self.allowed.as_slice() == allowed {
            return true;
        }
        let differ: Vec<u32> =
            (0..allowed.len()).filter(|&i| self.allowed[i] != allowed[i]).map(|i| i as u32).collect();
        if !differ.into_iter().all(|i| self.note_change(i, limit, nodes)) {
            return false;
        }
        self.allowed.copy_from_slice(allowed);
        true
    }

    /// Takes in the `changed` nodes (sorted), of which those in `fresh` fit, with their
    /// first score; a complete list longer than `limit` keeps only its best nodes. False
    /// when every best node changed and none scores as high: a full pass is needed.
    fn update(&mut self, changed: &[u32], fresh: Vec<(u32, i64)>, limit: usize) -> bool {
        self.known.retain(|e| changed.binary_search(&e.0).is_err());
        let insert = |known: &mut Vec<(u32, i64)>, e: (u32, i64)| {
            let p = known.binary_search_by_key(&e.0, |k| k.0).unwrap_err();
            known.insert(p, e);
        };
        if self.complete {
            for e in fresh {
                insert(&mut self.known, e);
            }
            if self.known.len() > limit {
                let best = self.known.iter().map(|e| e.1).max().expect("non-empty");
                self.known.retain(|e| e.1 == best);
                self.complete = false;
            }
        } else {
            match fresh.iter().map(|e| e.1).max() {
                Some(t) if t > self.best => self.known = fresh.into_iter().filter(|e| e.1 == t).collect(),
                Some(t) if t == self.best => {
                    for e in fresh.into_iter().filter(|e| e.1 == t) {
                        insert(&mut self.known, e);
                    }
                }
                _ if self.known.is_empty() => return false,
                _ => {}
            }
        }
        self.best = self.known.iter().map(|e| e.1).max().unwrap_or(i64::MIN);
        true
    }

    /// The nodes of the best score, in node order (none when nothing fits).
    fn best_nodes(&self) -> Vec<u32> {
        self.known.iter().filter(|e| e.1 == self.best).map(|e| e.0).collect()
    }
}

/// Buffers one placement fills, kept to spare allocations.
#[derive(Default)]
struct PlaceBuf {
    feasible: Vec<u32>,
    raw: Vec<[i64; MAX_SCORES + 2]>,
    total: Vec<i64>,
    ties: Vec<u32>,
    /// Nodes already taken in from a list of changed nodes (cleared after each use).
    seen: Vec<bool>,
}

/// One placement's view of its [`PlaceCx`] and of what it places, for the steps of
/// [`Placement::place`].
struct Pass<'a> {
    nodes: &'a [NodeUse],
    allowed: &'a [bool],
    pod: &'a PodReq<'a>,
    frag: &'a mut FragMeter,
    /// The pod's inter-pod terms (affinity, spread), if it has any.
    topo: Option<topology::PodTopology<'a>>,
    /// The score cache with the pod's type, when both are on (see [`type_cache`]).
    cache: Option<(&'a mut ScoreCache, u32)>,
    tainted: &'a [bool],
    metas: &'a [u32],
    /// The label-and-taint part of the last node's pool (nodes of a pool are adjacent).
    last_meta: Option<(*const sim_core::ledger::NodeMeta, bool, [i64; MAX_SCORES])>,
    again: &'a mut Agains,
    /// Where the pod's [`Again`] is kept: its type when cached, its constraints' address.
    slot: Option<usize>,
    cptr: Option<usize>,
    known_nodes: usize,
    /// Sampling (`percentageOfNodesToScore` below the node count), or `None`: every node.
    scan: Option<Scan<'a>>,
    /// Nodes looked at (all of them unless a sample was complete before the end).
    processed: usize,
}

/// Where a sampling placement looks: `order` (the node tree's; `pos`: each node's place
/// in it), from `start`, until it has found `to_find` feasible nodes.
struct Scan<'a> {
    order: &'a [u32],
    pos: &'a [u32],
    start: usize,
    to_find: usize,
}

impl Pass<'_> {
    /// Keeps what this placement found for the pod's next one (its type is cached).
    fn remember(&mut self, known: Vec<(u32, i64)>, complete: bool, best: i64) {
        let slot = self.slot.expect("cached");
        let a = self.new_again(known, complete, best, None);
        self.again.put(slot, self.cptr, a);
    }

    /// What this placement found, made on its nodes and allowed nodes.
    fn new_again(&self, known: Vec<(u32, i64)>, complete: bool, best: i64, tree: Option<SampleTree>) -> Again {
        Again {
            nodes: (self.nodes.as_ptr() as usize, self.nodes.len()),
            allowed: self.allowed.to_vec(),
            known,
            complete,
            best,
            changed: Vec::new(),
            tree,
            recheck: false,
        }
    }
}

/// The score cache with the pod's type `ty`, when both are on and not every node is
/// dirty, grown to hold the type's entries.
fn type_cache(cache: &mut Option<ScoreCache>, ty: Option<u32>) -> Option<(&mut ScoreCache, u32)> {
    let mut cache = cache.as_mut().filter(|c| !c.all_dirty).zip(ty);
    if let Some((c, ty)) = &mut cache
        && c.entries.len() < (*ty as usize + 1) * c.nodes
    {
        c.entries.resize((*ty as usize + 1) * c.nodes, (0, false, [0; MAX_SCORES]));
    }
    cache
}

struct ScoreCache {
    versions: Vec<u64>,
    dirty: Vec<bool>,
    /// The nodes marked dirty, and touched, since the last sync.
    dirty_list: Vec<u32>,
    touched: Vec<u32>,
    /// The ledger's change count at the last [`PlaceCx::sync_ledger`].
    synced: Option<u64>,
    /// Every node is dirty (placements run on ledgers the engine's versions do not
    /// describe): nothing is read from or written to the cache.
    all_dirty: bool,
    nodes: usize,
    entries: Vec<(u64, bool, [i64; MAX_SCORES])>,
}

impl PlaceCx {
    /// A context with `frag` and no cache.
    pub fn new(frag: FragMeter) -> Self {
        PlaceCx {
            frag,
            cache: None,
            rank: None,
            domains: Default::default(),
            tainted: Vec::new(),
            buf: PlaceBuf::default(),
            again: Agains::default(),
            metas: Vec::new(),
            known_nodes: KNOWN_NODES,
            meta_epoch: 0,
            scan_order: Vec::new(),
            scan_pos: Vec::new(),
            next_start: 0,
            term_pods: None,
        }
    }

    /// Where the next sampling placement starts scanning (kube-scheduler's
    /// `nextStartNodeIndex`, a position in the scan order).
    pub fn next_start(&self) -> usize {
        self.next_start
    }

    /// Sets where the next sampling placement starts (to undo what placements that only
    /// explained or planned advanced).
    pub fn set_next_start(&mut self, start: usize) {
        self.next_start = start;
    }

    /// Drops every result that depends on nodes' labels and taints when a controller
    /// changed them ([`sim_core::ledger::Ledger::meta_epoch`] moved on).
    ///
    /// The nodes whose labels or taints changed are also changed in the ledger (their
    /// versions move on), so the score cache and the last placements follow them as any
    /// other changed node; a last placement is checked again before use, since the use
    /// scores alone may no longer decide (see [`Again::recheck`]). A changed node order
    /// for sampling (zones interleaved, from the labels) drops the last placements.
    pub fn sync_meta(&mut self, epoch: u64) {
        if epoch != self.meta_epoch {
            self.meta_epoch = epoch;
            self.tainted.clear();
            self.metas.clear();
            self.domains = Default::default();
            self.again.recheck();
        }
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
            dirty_list: Vec::new(),
            touched: Vec::new(),
            synced: None,
            all_dirty: false,
            nodes,
            entries: vec![(0, false, [0; MAX_SCORES]); nodes * types],
        });
        self
    }

    /// Sets how many fitting nodes the incremental placement lists whole before it keeps
    /// only the best (256 by default; for tests of both ways).
    #[doc(hidden)]
    pub fn with_known_nodes(mut self, n: usize) -> Self {
        self.known_nodes = n;
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
            c.touched.push(node as u32);
        }
        self.changed(node);
    }

    /// [`PlaceCx::sync`] with the ledger whose versions it takes: only the nodes the ledger
    /// changed since the last call, and those touched or marked dirty, are looked at
    /// (every node when the ledger no longer knows them all).
    pub fn sync_ledger(&mut self, ledger: &sim_core::ledger::Ledger) {
        let versions = ledger.versions();
        let Some(c) = &mut self.cache else { return };
        let since = c.synced.filter(|_| !c.all_dirty && c.versions.len() == versions.len());
        let Some(list) = since.and_then(|p| ledger.changes_since(p)) else {
            self.sync(versions);
            if let Some(c) = &mut self.cache {
                c.synced = Some(ledger.change_count());
            }
            return;
        };
        let mut changed = Vec::new();
        for &i in list.iter().chain(&c.touched) {
            let i = i as usize;
            if c.versions[i] != versions[i] + 1 {
                changed.push(i);
                c.versions[i] = versions[i] + 1;
            }
        }
        for i in c.dirty_list.drain(..) {
            c.dirty[i as usize] = false;
        }
        c.touched.clear();
        c.synced = Some(ledger.change_count());
        for i in changed {
            self.changed(i);
        }
    }

    /// Takes the nodes' versions from a ledger (whose versions are bumped on every change)
    /// and forgets which nodes were marked dirty.
    pub fn sync(&mut self, versions: &[u64]) {
        let Some(c) = &mut self.cache else { return };
        let was_all_dirty = c.all_dirty;
        let mut changed = Vec::new();
        for (i, (v, &w)) in c.versions.iter_mut().zip(versions).enumerate() {
            if *v != w + 1 {
                changed.push(i);
                *v = w + 1;
            }
        }
        c.dirty.iter_mut().for_each(|d| *d = false);
        c.dirty_list.clear();
        c.touched.clear();
        c.synced = None;
        c.all_dirty = false;
        if was_all_dirty {
            self.again.clear();
        }
        for i in changed {
            self.changed(i);
        }
    }

    /// Notes a changed node for the placements to come of every pod type; a type whose
    /// list of distinct changed nodes grows past an eighth of the nodes starts afresh
    /// (but a sampling placement's: see [`Agains::note_change`]).
    fn changed(&mut self, node: usize) {
        let nodes = self.cache.as_ref().map_or(0, |c| c.nodes);
        self.again.note_change(node as u32, nodes / 8, nodes);
    }

    /// Lists afresh which nodes have taints and a node of each label-and-taint set when
    /// the node count changed (the lists are cleared when labels or taints change).
    fn refresh_node_lists(&mut self, nodes: &[NodeUse]) {
        if self.tainted.len() != nodes.len() {
            self.tainted = nodes.iter().map(|n| !n.meta.taints.is_empty()).collect();
            let order = zone_interleaved(nodes);
            if order != self.scan_order {
                // Sample trees are laid out in scan order.
                self.again.clear();
            }
            self.scan_order = order;
            self.scan_pos = vec![0; nodes.len()];
            for (pos, &i) in self.scan_order.iter().enumerate() {
                self.scan_pos[i as usize] = pos as u32;
            }
            self.metas.clear();
            for (i, n) in nodes.iter().enumerate() {
                if !self.metas.iter().any(|&m| std::sync::Arc::ptr_eq(&nodes[m as usize].meta, &n.meta))
                    && self.metas.len() < 64
                {
                    self.metas.push(i as u32);
                }
            }
        }
    }

    /// Marks a node as changed on a scratch copy: until the next [`PlaceCx::sync`] its
    /// results are computed afresh and not cached.
    pub fn mark_dirty(&mut self, node: usize) {
        if let Some(c) = &mut self.cache
            && !std::mem::replace(&mut c.dirty[node], true)
        {
            c.dirty_list.push(node as u32);
        }
        self.changed(node);
    }

    /// Marks every node as changed until the next [`PlaceCx::sync`].
    pub fn mark_all_dirty(&mut self) {
        if let Some(c) = &mut self.cache {
            c.dirty.iter_mut().for_each(|d| *d = true);
            c.all_dirty = true;
        }
        self.again.clear();
    }

    /// Forgets every cached result (the scores changed, e.g. new typical pods).
    pub fn clear_cache(&mut self) {
        if let Some(c) = &mut self.cache {
            c.entries.iter_mut().for_each(|e| e.0 = 0);
        }
        self.again.clear();
    }
}
