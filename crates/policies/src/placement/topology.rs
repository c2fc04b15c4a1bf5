//! Inter-pod affinity and anti-affinity (Kubernetes `InterPodAffinity`) and topology
//! spread (`PodTopologySpread`), over the domains of a topology key (real-schedulers.md
//! §B3, §B5). Both need the whole cluster, so they are prepared once per pod (the
//! framework's PreFilter/PreScore), then asked per node.

use sim_core::constraints::{PodAffinityTerm, PodConstraints, SpreadConstraint, WhenUnsatisfiable, selector_matches};
use sim_core::ledger::NodeUse;
use std::collections::{BTreeMap, BTreeSet};

/// A pod's view of where the pods its terms select are.
pub struct PodTopology<'a> {
    affinity: Vec<(&'a PodAffinityTerm, BTreeSet<String>, bool)>,
    spread: Vec<(&'a SpreadConstraint, BTreeMap<String, u64>, u64, bool)>,
}

impl<'a> PodTopology<'a> {
    /// Prepares the pod's terms over `nodes`; `None` when it has none.
    pub fn new(nodes: &[NodeUse], c: &'a PodConstraints) -> Option<Self> {
        if c.pod_affinity.is_empty() && c.spread.is_empty() {
            return None;
        }
        let affinity = c
            .pod_affinity
            .iter()
            .map(|t| {
                let mut domains = BTreeSet::new();
                for (i, n) in nodes.iter().enumerate() {
                    if n.pods.iter().any(|(_, l)| selector_matches(&t.selector, l))
                        && let Some(d) = n.domain(i, &t.topology_key)
                    {
                        domains.insert(d);
                    }
                }
                (t, domains, selector_matches(&t.selector, &c.labels))
            })
            .collect();
        let spread = c
            .spread
            .iter()
            .map(|s| {
                let mut counts: BTreeMap<String, u64> = BTreeMap::new();
                for (i, n) in nodes.iter().enumerate() {
                    if let Some(d) = n.domain(i, &s.topology_key) {
                        let k = n.pods.iter().filter(|(_, l)| selector_matches(&s.selector, l)).count() as u64;
                        *counts.entry(d).or_default() += k;
                    }
                }
                let min = counts.values().copied().min().unwrap_or(0);
                (s, counts, min, selector_matches(&s.selector, &c.labels))
            })
            .collect();
        Some(PodTopology { affinity, spread })
    }

    /// Whether node `i` passes the required terms and the DoNotSchedule spreads.
    pub fn pass(&self, i: usize, node: &NodeUse) -> bool {
        for (t, domains, self_match) in &self.affinity {
            if t.weight != 0 {
                continue;
            }
            let d = node.domain(i, &t.topology_key);
            let ok = if t.anti {
                d.is_none_or(|d| !domains.contains(&d))
            } else {
                // The first pod of a group that matches its own selector may go anywhere.
                d.is_some_and(|d| domains.contains(&d)) || (domains.is_empty() && *self_match)
            };
            if !ok {
                return false;
            }
        }
        for (s, counts, min, self_match) in &self.spread {
            if s.when_unsatisfiable != WhenUnsatisfiable::DoNotSchedule {
                continue;
            }
            let Some(d) = node.domain(i, &s.topology_key) else { return false };
            let skew = counts.get(&d).copied().unwrap_or(0) + u64::from(*self_match) - min;
            if skew > s.max_skew as u64 {
                return false;
            }
        }
        true
    }

    /// Raw scores of node `i`: preferred (anti-)affinity (Σ ± weight of the terms whose
    /// domain holds a selected pod; higher is better) and ScheduleAnyway spread (selected
    /// pods in its domain; lower is better).
    pub fn scores(&self, i: usize, node: &NodeUse) -> (i64, i64) {
        let mut aff = 0i64;
        for (t, domains, _) in &self.affinity {
            if t.weight == 0 {
                continue;
            }
            if node.domain(i, &t.topology_key).is_some_and(|d| domains.contains(&d)) {
                aff += if t.anti { -(t.weight as i64) } else { t.weight as i64 };
            }
        }
        let mut spread = 0i64;
        for (s, counts, _, _) in &self.spread {
            if s.when_unsatisfiable == WhenUnsatisfiable::ScheduleAnyway {
                spread += node.domain(i, &s.topology_key).and_then(|d| counts.get(&d).copied()).unwrap_or(0) as i64;
            }
        }
        (aff, spread)
    }
}
