//! Inter-pod affinity and anti-affinity (Kubernetes `InterPodAffinity`) and topology
//! spread (`PodTopologySpread`) over the domains of a topology key, as kubernetes v1.34
//! computes them (`pkg/scheduler/framework/plugins/interpodaffinity/{filtering,scoring}.go`,
//! `pkg/scheduler/framework/plugins/podtopologyspread/{common,filtering,scoring}.go`; see
//! docs/sources.md#pod-affinity-and-spread). Both need the whole cluster, so they are
//! prepared once per pod (the framework's PreFilter/PreScore), then asked per node.
//!
//! What a node knows of its pods is [`NodeUse::pods`]: each pod with labels or inter-pod
//! terms; its other pods (`tasks` minus those) have no labels and no terms. Namespaces
//! are not modelled (every pod is in one), nor are `matchLabelKeys`, `namespaceSelector`
//! or the plugin's default constraints (`defaultingType: System` applies them only to
//! pods owned by a Service or ReplicaSet; pods here have no owners).

use sim_core::constraints::{
    PodAffinityTerm, PodConstraints, Requirement, SpreadConstraint, WhenUnsatisfiable, selector_matches,
};
use sim_core::ledger::NodeUse;
use std::collections::BTreeMap;

/// The InterPodAffinity score a running pod's required affinity term that selects the
/// incoming pod adds to its domain (kube-scheduler's `hardPodAffinityWeight`, default 1).
pub const HARD_POD_AFFINITY_WEIGHT: i64 = 1;

/// Kubernetes' `MaxNodeScore`.
const MAX_NODE_SCORE: i64 = 100;

/// The id of "no domain under this key".
const NONE: u32 = u32::MAX;

/// The labels of a pod that has none.
static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

/// No domains (what a [`PodTopology`] points to while it is built).
static NO_DOMAINS: Domains = Domains { nodes: 0, keys: Vec::new() };

/// Each node's domain under each topology key asked so far, as dense ids (labels and
/// network positions change only by controllers' actions, after which the placement
/// context starts a new one).
#[derive(Default)]
pub struct Domains {
    nodes: usize,
    keys: Vec<KeyDomains>,
}

/// The domains of one key.
struct KeyDomains {
    key: String,
    /// Each node's domain id, [`NONE`] without one.
    ids: Vec<u32>,
    /// How many domains.
    count: usize,
}

impl Domains {
    /// Forgets everything when the node count changed.
    fn fit(&mut self, nodes: usize) {
        if self.nodes != nodes {
            self.keys.clear();
            self.nodes = nodes;
        }
    }

    /// The index of `key`'s domains over `nodes`, learnt if new.
    fn learn(&mut self, nodes: &[NodeUse], key: &str) -> usize {
        if let Some(k) = self.keys.iter().position(|k| k.key == key) {
            return k;
        }
        let mut names: BTreeMap<String, u32> = BTreeMap::new();
        let ids = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                n.domain(i, key).map_or(NONE, |d| {
                    let next = names.len() as u32;
                    *names.entry(d).or_insert(next)
                })
            })
            .collect();
        self.keys.push(KeyDomains { key: key.to_string(), ids, count: names.len() });
        self.keys.len() - 1
    }

    /// Node `i`'s domain under key `k`.
    fn id(&self, k: usize, i: usize) -> u32 {
        self.keys[k].ids[i]
    }

    fn count(&self, k: usize) -> usize {
        self.keys[k].count
    }
}

/// Calls `f` with the labels of each pod on `n` and how many pods have them: each
/// recorded pod once, then the pods with no labels together.
fn each_pod(n: &NodeUse, mut f: impl FnMut(&BTreeMap<String, String>, i64)) {
    for (_, p) in &n.pods {
        f(&p.labels, 1);
    }
    let unlabelled = (n.tasks as usize).saturating_sub(n.pods.len());
    if unlabelled > 0 {
        f(&NO_LABELS, unlabelled as i64);
    }
}

/// Pods on `n` a spread's selector counts: none for an empty selector (kubernetes
/// `countPodsMatchSelector` skips `selector.Empty()`).
fn spread_count(n: &NodeUse, selector: &[Requirement]) -> i64 {
    if selector.is_empty() {
        return 0;
    }
    let mut count = 0;
    each_pod(n, |l, m| {
        if selector_matches(selector, l) {
            count += m;
        }
    });
    count
}

/// The per-domain values of key `k` in `v`, added (with `n` domains, zeroed) if new.
fn slot<T: Clone + Default>(v: &mut Vec<(usize, Vec<T>)>, k: usize, n: usize) -> &mut Vec<T> {
    let p = v.iter().position(|e| e.0 == k).unwrap_or_else(|| {
        v.push((k, vec![T::default(); n]));
        v.len() - 1
    });
    &mut v[p].1
}

/// A pod's view of the cluster's inter-pod terms and spreads that concern it.
pub struct PodTopology<'a> {
    domains: &'a Domains,
    /// Its DoNotSchedule spreads.
    filters: Vec<SpreadFilter<'a>>,
    /// Its ScheduleAnyway spreads.
    soft: Vec<SoftSpread<'a>>,
    /// Its required affinity terms (key, domains holding a pod that matches all of them).
    affinity: Vec<(usize, Vec<bool>)>,
    /// Whether any domain does (upstream: `affinityCounts` not empty).
    affinity_anywhere: bool,
    /// Whether the pod matches all its own required affinity terms.
    affinity_self: bool,
    /// Its required anti-affinity terms (key, domains holding a pod the term selects).
    anti: Vec<(usize, Vec<bool>)>,
    /// Per key, the domains of running pods whose required anti-affinity selects the pod.
    existing_anti: Vec<(usize, Vec<bool>)>,
    /// Per key, each domain's InterPodAffinity score (weights of matching pods and terms).
    scores: Vec<(usize, Vec<i64>)>,
}

/// A DoNotSchedule spread over the cluster.
struct SpreadFilter<'a> {
    spread: &'a SpreadConstraint,
    key: usize,
    /// Selected pods per domain, on the nodes that have every DoNotSchedule key and pass
    /// the spread's inclusion policies.
    counts: Vec<i64>,
    /// The global minimum over the eligible domains (0 with fewer than `min_domains`).
    min: i64,
    /// Whether the pod matches the selector.
    self_match: bool,
}

/// A ScheduleAnyway spread over the cluster.
struct SoftSpread<'a> {
    spread: &'a SpreadConstraint,
    key: usize,
    /// Selected pods per domain, on the nodes that have every ScheduleAnyway key and pass
    /// the spread's inclusion policies.
    counts: Vec<i64>,
}

impl<'a> PodTopology<'a> {
    /// Prepares what concerns a pod with constraints `c` (`None`: none) on `nodes`: its
    /// own terms and spreads, and the running pods' terms that select it. `None` when
    /// nothing does (no term or spread of its own, no running pod's term selects it).
    /// `others`: whether some node holds a pod with terms, when the caller knows
    /// ([`sim_core::ledger::Ledger::has_term_pods`]); `None`: every node is looked at.
    pub fn new(
        nodes: &[NodeUse],
        c: Option<&'a PodConstraints>,
        domains: &'a mut Domains,
        others: Option<bool>,
    ) -> Option<Self> {
        let own = c.filter(|c| c.has_pod_topology());
        let others = others.unwrap_or_else(|| nodes.iter().any(|n| n.term_pods > 0));
        if own.is_none() && !others {
            return None;
        }
        domains.fit(nodes.len());
        let mut t = PodTopology {
            domains: &NO_DOMAINS,
            filters: Vec::new(),
            soft: Vec::new(),
            affinity: Vec::new(),
            affinity_anywhere: false,
            affinity_self: false,
            anti: Vec::new(),
            existing_anti: Vec::new(),
            scores: Vec::new(),
        };
        if others {
            t.existing_terms(nodes, c.map_or(&NO_LABELS, |c| &c.labels), domains);
        }
        if let Some(c) = own {
            t.own_terms(nodes, c, domains);
            t.spreads(nodes, c, domains);
        } else if t.existing_anti.is_empty() && t.scores.is_empty() {
            return None;
        }
        t.domains = domains;
        Some(t)
    }

    /// The running pods' terms that select a pod with `labels`: required anti-affinity
    /// (a filter: `satisfyExistingPodsAntiAffinity`), and in the score their required
    /// affinity at [`HARD_POD_AFFINITY_WEIGHT`] and their preferred terms at ± weight
    /// (`processExistingPod`).
    fn existing_terms(&mut self, nodes: &[NodeUse], labels: &BTreeMap<String, String>, domains: &mut Domains) {
        for (i, n) in nodes.iter().enumerate().filter(|(_, n)| n.term_pods > 0) {
            for t in n.pods.iter().flat_map(|(_, p)| &p.terms) {
                if !selector_matches(&t.selector, labels) {
                    continue;
                }
                let k = domains.learn(nodes, &t.topology_key);
                let (d, count) = (domains.id(k, i), domains.count(k));
                if d == NONE {
                    continue;
                }
                match (t.weight, t.anti) {
                    (0, true) => slot(&mut self.existing_anti, k, count)[d as usize] = true,
                    (0, false) => slot(&mut self.scores, k, count)[d as usize] += HARD_POD_AFFINITY_WEIGHT,
                    (w, anti) => {
                        slot(&mut self.scores, k, count)[d as usize] += if anti { -(w as i64) } else { w as i64 }
                    }
                }
            }
        }
    }

    /// The pod's own terms over every pod: its required affinity (the domains holding a
    /// pod that matches all its terms), required anti-affinity (those holding a pod a
    /// term selects), and preferred terms (± weight for each pod a term selects).
    fn own_terms(&mut self, nodes: &[NodeUse], c: &PodConstraints, domains: &mut Domains) {
        let of = |w: fn(&PodAffinityTerm) -> bool| -> Vec<&PodAffinityTerm> {
            c.pod_affinity.iter().filter(|t| w(t)).collect()
        };
        let required = of(|t| t.weight == 0 && !t.anti);
        let anti = of(|t| t.weight == 0 && t.anti);
        let preferred = of(|t| t.weight > 0);
        let mut keys = |ts: &[&PodAffinityTerm]| -> Vec<usize> {
            ts.iter().map(|t| domains.learn(nodes, &t.topology_key)).collect()
        };
        let (rk, ak, pk) = (keys(&required), keys(&anti), keys(&preferred));
        let domains: &Domains = domains;
        self.affinity = rk.iter().map(|&k| (k, vec![false; domains.count(k)])).collect();
        self.anti = ak.iter().map(|&k| (k, vec![false; domains.count(k)])).collect();
        self.affinity_self = !required.is_empty() && required.iter().all(|t| selector_matches(&t.selector, &c.labels));
        if c.pod_affinity.is_empty() {
            return;
        }
        let PodTopology { affinity, affinity_anywhere, anti: held, scores, .. } = self;
        for (i, n) in nodes.iter().enumerate() {
            each_pod(n, |l, m| {
                if !required.is_empty() && required.iter().all(|t| selector_matches(&t.selector, l)) {
                    for (k, on) in affinity.iter_mut() {
                        let d = domains.id(*k, i);
                        if d != NONE {
                            on[d as usize] = true;
                            *affinity_anywhere = true;
                        }
                    }
                }
                for (t, (k, on)) in anti.iter().zip(held.iter_mut()) {
                    let d = domains.id(*k, i);
                    if d != NONE && selector_matches(&t.selector, l) {
                        on[d as usize] = true;
                    }
                }
                for (t, &k) in preferred.iter().zip(&pk) {
                    let d = domains.id(k, i);
                    if d != NONE && selector_matches(&t.selector, l) {
                        let w = if t.anti { -(t.weight as i64) } else { t.weight as i64 };
                        slot(scores, k, domains.count(k))[d as usize] += w * m;
                    }
                }
            });
        }
    }

    /// The pod's spreads: selected pods per domain over the nodes that have every key of
    /// the spreads of their kind and pass the spread's inclusion policies
    /// (`calPreFilterState`, `PreScore`), and for DoNotSchedule the global minimum over
    /// those domains, 0 when fewer than `min_domains` (`minMatchNum`).
    fn spreads(&mut self, nodes: &[NodeUse], c: &'a PodConstraints, domains: &mut Domains) {
        for when in [WhenUnsatisfiable::DoNotSchedule, WhenUnsatisfiable::ScheduleAnyway] {
            let list: Vec<&'a SpreadConstraint> = c.spread.iter().filter(|s| s.when_unsatisfiable == when).collect();
            let keys: Vec<usize> = list.iter().map(|s| domains.learn(nodes, &s.topology_key)).collect();
            let mut counts: Vec<Vec<i64>> = keys.iter().map(|&k| vec![0; domains.count(k)]).collect();
            let mut eligible: Vec<Vec<bool>> = keys.iter().map(|&k| vec![false; domains.count(k)]).collect();
            for (i, n) in nodes.iter().enumerate() {
                if keys.iter().any(|&k| domains.id(k, i) == NONE) {
                    continue;
                }
                for (j, s) in list.iter().enumerate() {
                    if s.includes(c, &n.meta.labels, &n.meta.taints) {
                        let d = domains.id(keys[j], i) as usize;
                        eligible[j][d] = true;
                        counts[j][d] += spread_count(n, &s.selector);
                    }
                }
            }
            for (j, (spread, counts)) in list.into_iter().zip(counts).enumerate() {
                let key = keys[j];
                if when == WhenUnsatisfiable::ScheduleAnyway {
                    self.soft.push(SoftSpread { spread, key, counts });
                    continue;
                }
                let domains_in = eligible[j].iter().filter(|e| **e).count();
                let min = if domains_in < spread.min_domains as usize {
                    0
                } else {
                    counts
                        .iter()
                        .zip(&eligible[j])
                        .filter(|(_, e)| **e)
                        .map(|(n, _)| *n)
                        .min()
                        .unwrap_or(i32::MAX as i64)
                };
                let self_match = selector_matches(&spread.selector, &c.labels);
                self.filters.push(SpreadFilter { spread, key, counts, min, self_match });
            }
        }
    }

    /// Whether node `i` passes the DoNotSchedule spreads and the required terms.
    pub fn pass(&self, i: usize) -> bool {
        self.why_not(i).is_none()
    }

    /// Why node `i` fails, in kubernetes v1.34's words and in its default plugin order
    /// (PodTopologySpread, then InterPodAffinity: the pod's affinity, its anti-affinity,
    /// the running pods' anti-affinity); `None` when it passes.
    pub fn why_not(&self, i: usize) -> Option<&'static str> {
        for f in &self.filters {
            let d = self.domains.id(f.key, i);
            if d == NONE {
                return Some("node(s) didn't match pod topology spread constraints (missing required label)");
            }
            let skew = f.counts[d as usize] + i64::from(f.self_match) - f.min;
            if skew > f.spread.max_skew as i64 {
                return Some("node(s) didn't match pod topology spread constraints");
            }
        }
        if !self.affinity.is_empty() {
            let mut all_held = true;
            for (k, on) in &self.affinity {
                let d = self.domains.id(*k, i);
                if d == NONE {
                    return Some("node(s) didn't match pod affinity rules");
                }
                all_held &= on[d as usize];
            }
            // The first pod of a group that matches its own terms may go to any node with
            // every key, while no pod matches them anywhere.
            if !all_held && (self.affinity_anywhere || !self.affinity_self) {
                return Some("node(s) didn't match pod affinity rules");
            }
        }
        let held = |v: &[(usize, Vec<bool>)]| {
            v.iter().any(|(k, on)| {
                let d = self.domains.id(*k, i);
                d != NONE && on[d as usize]
            })
        };
        if held(&self.anti) {
            return Some("node(s) didn't match pod anti-affinity rules");
        }
        if held(&self.existing_anti) {
            return Some("node(s) didn't satisfy existing pods anti-affinity rules");
        }
        None
    }

    /// The normalised (0–100) InterPodAffinity and PodTopologySpread scores of the
    /// `feasible` nodes (those that passed every filter), in their order.
    pub fn scores(&self, feasible: &[u32]) -> (Vec<i64>, Vec<i64>) {
        (self.affinity_scores(feasible), self.spread_scores(feasible))
    }

    /// InterPodAffinity: each node's raw score is the sum over keys of its domain's score;
    /// NormalizeScore maps [min, max] onto [0, 100] in floating point, truncated (all 0
    /// when they are equal).
    fn affinity_scores(&self, feasible: &[u32]) -> Vec<i64> {
        let raw: Vec<i64> = feasible
            .iter()
            .map(|&i| {
                self.scores
                    .iter()
                    .map(|(k, v)| {
                        let d = self.domains.id(*k, i as usize);
                        if d == NONE { 0 } else { v[d as usize] }
                    })
                    .sum()
            })
            .collect();
        let lo = raw.iter().copied().min().unwrap_or(0);
        let hi = raw.iter().copied().max().unwrap_or(0);
        raw.iter()
            .map(|&s| if hi > lo { (MAX_NODE_SCORE as f64 * ((s - lo) as f64 / (hi - lo) as f64)) as i64 } else { 0 })
            .collect()
    }

    /// PodTopologySpread: nodes missing a ScheduleAnyway key are ignored (score 0); the
    /// others score Σ count × ln(domains + 2) + (maxSkew − 1), rounded, where `domains`
    /// counts the domains of the other feasible nodes (`topologyNormalizingWeight`,
    /// `scoreForCount`); NormalizeScore gives `100 × (max + min − s) / max` (100 for all
    /// when max is 0).
    fn spread_scores(&self, feasible: &[u32]) -> Vec<i64> {
        if self.soft.is_empty() {
            return vec![0; feasible.len()];
        }
        let ignored: Vec<bool> =
            feasible.iter().map(|&i| self.soft.iter().any(|s| self.domains.id(s.key, i as usize) == NONE)).collect();
        let weights: Vec<f64> = self
            .soft
            .iter()
            .map(|s| {
                let mut seen = vec![false; s.counts.len()];
                for (&i, _) in feasible.iter().zip(&ignored).filter(|(_, ig)| !**ig) {
                    seen[self.domains.id(s.key, i as usize) as usize] = true;
                }
                ((seen.iter().filter(|x| **x).count() + 2) as f64).ln()
            })
            .collect();
        let raw: Vec<Option<i64>> = feasible
            .iter()
            .zip(&ignored)
            .map(|(&i, &ig)| {
                (!ig).then(|| {
                    let s: f64 = self
                        .soft
                        .iter()
                        .zip(&weights)
                        .map(|(s, w)| {
                            let d = self.domains.id(s.key, i as usize) as usize;
                            s.counts[d] as f64 * w + (s.spread.max_skew as f64 - 1.0)
                        })
                        .sum();
                    s.round() as i64
                })
            })
            .collect();
        let max = raw.iter().flatten().copied().max().unwrap_or(0).max(0);
        let min = raw.iter().flatten().copied().min().unwrap_or(0);
        raw.iter()
            .map(|s| match *s {
                None => 0,
                Some(_) if max == 0 => MAX_NODE_SCORE,
                Some(s) => MAX_NODE_SCORE * (max + min - s) / max,
            })
            .collect()
    }
}
