//! Inter-pod affinity and anti-affinity (Kubernetes `InterPodAffinity`) and topology
//! spread (`PodTopologySpread`), over the domains of a topology key (Kubernetes docs
//! "Assigning Pods to Nodes", "Pod Topology Spread Constraints"; see
//! docs/sources.md#pod-affinity-and-spread). Both need the whole cluster, so they are prepared once per pod (the
//! framework's PreFilter/PreScore), then asked per node.

use sim_core::constraints::{PodAffinityTerm, PodConstraints, SpreadConstraint, WhenUnsatisfiable, selector_matches};
use sim_core::ledger::NodeUse;
use std::collections::BTreeMap;

/// Each node's domain under each topology key asked so far, as dense ids (labels and
/// network positions do not change during a run, so this is built once per key).
#[derive(Default)]
pub struct Domains {
    nodes: usize,
    keys: BTreeMap<String, (Vec<u32>, usize)>,
}

/// The id of "no domain under this key".
const NONE: u32 = u32::MAX;

impl Domains {
    /// Makes sure the domains of `key` are known for `nodes`.
    fn learn(&mut self, nodes: &[NodeUse], key: &str) {
        if self.nodes != nodes.len() {
            self.keys.clear();
            self.nodes = nodes.len();
        }
        if self.keys.contains_key(key) {
            return;
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
        self.keys.insert(key.to_string(), (ids, names.len()));
    }

    fn get(&self, key: &str) -> (&[u32], usize) {
        let (ids, n) = &self.keys[key];
        (ids, *n)
    }
}

/// A pod's view of where the pods its terms select are.
pub struct PodTopology<'a> {
    affinity: Vec<AffinityView<'a>>,
    spread: Vec<SpreadView<'a>>,
}

/// An (anti-)affinity term over the cluster.
struct AffinityView<'a> {
    term: &'a PodAffinityTerm,
    /// Each node's domain under the term's key.
    ids: &'a [u32],
    /// Which domains hold a pod the term selects.
    held: Vec<bool>,
    /// Whether any does.
    any: bool,
    /// Whether the pod matches its own selector.
    self_match: bool,
}

/// A spread constraint over the cluster.
struct SpreadView<'a> {
    spread: &'a SpreadConstraint,
    /// Each node's domain under the constraint's key.
    ids: &'a [u32],
    /// Selected pods per domain, and their minimum.
    counts: Vec<u64>,
    min: u64,
    /// Whether the pod matches its own selector.
    self_match: bool,
}

impl<'a> PodTopology<'a> {
    /// Prepares the pod's terms over `nodes`; `None` when it has none.
    pub fn new(nodes: &[NodeUse], c: &'a PodConstraints, domains: &'a mut Domains) -> Option<Self> {
        if c.pod_affinity.is_empty() && c.spread.is_empty() {
            return None;
        }
        for key in c.pod_affinity.iter().map(|t| &t.topology_key).chain(c.spread.iter().map(|s| &s.topology_key)) {
            domains.learn(nodes, key);
        }
        let domains: &'a Domains = domains;
        let affinity = c
            .pod_affinity
            .iter()
            .map(|t| {
                let (ids, n) = domains.get(&t.topology_key);
                let mut held = vec![false; n];
                for (node, &d) in nodes.iter().zip(ids) {
                    if d != NONE && !held[d as usize] && node.pods.iter().any(|(_, l)| selector_matches(&t.selector, l))
                    {
                        held[d as usize] = true;
                    }
                }
                let any = held.contains(&true);
                AffinityView { term: t, ids, held, any, self_match: selector_matches(&t.selector, &c.labels) }
            })
            .collect();
        let spread = c
            .spread
            .iter()
            .map(|s| {
                let (ids, n) = domains.get(&s.topology_key);
                let mut counts = vec![0u64; n];
                for (node, &d) in nodes.iter().zip(ids) {
                    if d != NONE {
                        counts[d as usize] +=
                            node.pods.iter().filter(|(_, l)| selector_matches(&s.selector, l)).count() as u64;
                    }
                }
                let min = counts.iter().copied().min().unwrap_or(0);
                SpreadView { spread: s, ids, counts, min, self_match: selector_matches(&s.selector, &c.labels) }
            })
            .collect();
        Some(PodTopology { affinity, spread })
    }

    /// Whether node `i` passes the required terms and the DoNotSchedule spreads.
    pub fn pass(&self, i: usize) -> bool {
        self.why_not(i).is_none()
    }

    /// Why node `i` fails the required terms or the DoNotSchedule spreads, in kubernetes
    /// v1.31's words (`plugins/interpodaffinity/filtering.go`,
    /// `plugins/podtopologyspread/filtering.go`); `None` when it passes.
    pub fn why_not(&self, i: usize) -> Option<&'static str> {
        for AffinityView { term: t, ids, held, any, self_match } in &self.affinity {
            if t.weight != 0 {
                continue;
            }
            let d = ids[i];
            if t.anti {
                if d != NONE && held[d as usize] {
                    return Some("node(s) didn't match pod anti-affinity rules");
                }
            } else if !((d != NONE && held[d as usize]) || (!*any && *self_match)) {
                // The first pod of a group that matches its own selector may go anywhere.
                return Some("node(s) didn't match pod affinity rules");
            }
        }
        for SpreadView { spread: s, ids, counts, min, self_match } in &self.spread {
            if s.when_unsatisfiable != WhenUnsatisfiable::DoNotSchedule {
                continue;
            }
            let d = ids[i];
            if d == NONE {
                return Some("node(s) didn't match pod topology spread constraints (missing required label)");
            }
            let skew = counts[d as usize] + u64::from(*self_match) - min;
            if skew > s.max_skew as u64 {
                return Some("node(s) didn't match pod topology spread constraints");
            }
        }
        None
    }

    /// Raw scores of node `i`: preferred (anti-)affinity (Σ ± weight of the terms whose
    /// domain holds a selected pod; higher is better) and ScheduleAnyway spread (selected
    /// pods in its domain; lower is better).
    pub fn scores(&self, i: usize) -> (i64, i64) {
        let mut aff = 0i64;
        for AffinityView { term: t, ids, held, .. } in &self.affinity {
            if t.weight == 0 {
                continue;
            }
            let d = ids[i];
            if d != NONE && held[d as usize] {
                aff += if t.anti { -(t.weight as i64) } else { t.weight as i64 };
            }
        }
        let mut spread = 0i64;
        for SpreadView { spread: s, ids, counts, .. } in &self.spread {
            if s.when_unsatisfiable == WhenUnsatisfiable::ScheduleAnyway {
                let d = ids[i];
                spread += if d == NONE { 0 } else { counts[d as usize] as i64 };
            }
        }
        (aff, spread)
    }
}
