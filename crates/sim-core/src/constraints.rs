//! Placement constraints of a pod, as Kubernetes writes them: node selector, node
//! affinity (required terms ORed, expressions ANDed, preferred terms weighted 1–100),
//! tolerations of node taints (Kubernetes docs "Assigning Pods to Nodes", "Taints and
//! Tolerations"; see docs/sources.md#node-affinity-and-taints), inter-pod affinity and
//! topology spread (see docs/sources.md#pod-affinity-and-spread).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A label-selector operator.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operator {
    /// The label's value is one of `values`.
    In,
    /// The label is absent or its value is none of `values`.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label's value, an integer, is greater than the one value.
    Gt,
    /// The label's value, an integer, is less than the one value.
    Lt,
}

/// One `matchExpressions` entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Requirement {
    /// Label key.
    pub key: String,
    /// Operator.
    pub operator: Operator,
    /// Values (one integer for Gt/Lt, none for Exists/DoesNotExist).
    #[serde(default)]
    pub values: Vec<String>,
}

impl Requirement {
    /// Whether `labels` satisfy it (Kubernetes' `NodeSelectorRequirement` semantics: a
    /// non-integer value never satisfies Gt or Lt).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let v = labels.get(&self.key);
        match self.operator {
            Operator::In => v.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Operator::NotIn => v.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            Operator::Exists => v.is_some(),
            Operator::DoesNotExist => v.is_none(),
            Operator::Gt | Operator::Lt => {
                let (Some(v), Some(bound)) = (v, self.values.first()) else { return false };
                match (v.parse::<i64>(), bound.parse::<i64>()) {
                    (Ok(v), Ok(b)) => {
                        if self.operator == Operator::Gt {
                            v > b
                        } else {
                            v < b
                        }
                    }
                    _ => false,
                }
            }
        }
    }
}

/// A node selector term: its requirements all hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SelectorTerm {
    /// The requirements (ANDed).
    pub requirements: Vec<Requirement>,
}

impl SelectorTerm {
    /// Whether every requirement holds.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        selector_matches(&self.requirements, labels)
    }
}

/// A taint's effect.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaintEffect {
    /// Pods that do not tolerate it are not scheduled there (a filter).
    NoSchedule,
    /// The scheduler avoids the node for pods that do not tolerate it (a score).
    PreferNoSchedule,
    /// As NoSchedule, and running pods that do not tolerate it are evicted.
    NoExecute,
}

/// A node taint.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Taint {
    /// Key.
    pub key: String,
    /// Value ("" for none).
    #[serde(default)]
    pub value: String,
    /// Effect.
    pub effect: TaintEffect,
}

/// A pod's toleration.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Toleration {
    /// Key; `None` with `exists` tolerates every taint.
    pub key: Option<String>,
    /// `Exists` (any value) rather than `Equal`.
    #[serde(default)]
    pub exists: bool,
    /// Value for `Equal`.
    #[serde(default)]
    pub value: String,
    /// Effect it tolerates; `None` = every effect.
    pub effect: Option<TaintEffect>,
    /// For a `NoExecute` taint: how long the pod may stay bound after the taint appears,
    /// seconds (`tolerationSeconds`; 0 = evicted at once); `None` = for ever. Read only
    /// for NoExecute taints, as Kubernetes does.
    #[serde(default, alias = "tolerationSeconds", skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<u64>,
}

/// The taint the node lifecycle controller puts on a node that stopped reporting (its
/// `Ready` condition `Unknown`), kubernetes `pkg/apis/core/well_known_taints.go`.
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// The taint of a node whose `Ready` condition is `False`.
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";

/// What the `NoExecute` taints of the nodes a pod is bound to do to it (the taint
/// eviction controller's rule, kubernetes v1.31 `pkg/controller/tainteviction/taint_eviction.go`
/// `processPodOnNode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NoExecute {
    /// No NoExecute taint, or every one tolerated for ever: the pod stays.
    Stays,
    /// A NoExecute taint it does not tolerate (or tolerates for 0 s): evicted now.
    EvictNow,
    /// Every NoExecute taint tolerated, the shortest for this many seconds.
    EvictAfter(u64),
}

impl NoExecute {
    /// The verdict for a pod on several nodes: evicted at the first of its pods' times.
    pub fn min(self, o: NoExecute) -> NoExecute {
        match (self, o) {
            (NoExecute::EvictNow, _) | (_, NoExecute::EvictNow) => NoExecute::EvictNow,
            (NoExecute::EvictAfter(a), NoExecute::EvictAfter(b)) => NoExecute::EvictAfter(a.min(b)),
            (NoExecute::EvictAfter(a), NoExecute::Stays) | (NoExecute::Stays, NoExecute::EvictAfter(a)) => {
                NoExecute::EvictAfter(a)
            }
            (NoExecute::Stays, NoExecute::Stays) => NoExecute::Stays,
        }
    }
}

/// What `taints` (a node's, any effect) do to a running pod with `tolerations`.
/// `default_secs`: the `DefaultTolerationSeconds` admission plugin's toleration (kubernetes
/// `plugin/pkg/admission/defaulttolerationseconds`, 300 s by default): a pod without a
/// toleration of `not-ready` (or `unreachable`) NoExecute gets one of that many seconds,
/// after those it declares. Each NoExecute taint is matched by the first toleration that
/// tolerates it (`GetMatchingTolerations`); the pod is evicted now when one is not
/// tolerated, after the shortest `tolerationSeconds` of those matched, or never when none
/// of them has seconds (`getMinTolerationTime`).
pub fn no_execute(tolerations: &[Toleration], taints: &[Taint], default_secs: Option<u64>) -> NoExecute {
    let mut min: Option<u64> = None;
    for t in taints.iter().filter(|t| t.effect == TaintEffect::NoExecute) {
        let default = default_secs.and_then(|secs| {
            let covers = |key: &str| {
                tolerations.iter().any(|x| {
                    x.key.as_deref().is_none_or(|k| k == key) && x.effect.is_none_or(|e| e == TaintEffect::NoExecute)
                })
            };
            [TAINT_NOT_READY, TAINT_UNREACHABLE].into_iter().find(|&k| k == t.key && !covers(k)).map(|_| secs)
        });
        let secs = match tolerations.iter().find(|x| x.tolerates(t)) {
            Some(x) => x.toleration_seconds,
            None => match default {
                Some(secs) => Some(secs),
                None => return NoExecute::EvictNow,
            },
        };
        if let Some(s) = secs {
            min = Some(min.map_or(s, |m| m.min(s)));
        }
    }
    match min {
        None => NoExecute::Stays,
        Some(0) => NoExecute::EvictNow,
        Some(s) => NoExecute::EvictAfter(s),
    }
}

impl Toleration {
    /// Whether it tolerates `t` (Kubernetes' `ToleratesTaint`).
    pub fn tolerates(&self, t: &Taint) -> bool {
        if self.effect.is_some_and(|e| e != t.effect) {
            return false;
        }
        match &self.key {
            None => self.exists,
            Some(k) if *k != t.key => false,
            Some(_) => self.exists || self.value == t.value,
        }
    }
}

/// Inter-pod affinity or anti-affinity: pods matching `selector` in the same topology
/// domain (`topology_key`: `node`, `rack`, `zone`, `switch` or a node label) attract
/// (`anti = false`) or repel the pod. `weight` 0 = required (a filter), 1–100 = preferred.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PodAffinityTerm {
    /// Label requirements on the other pods (ANDed).
    pub selector: Vec<Requirement>,
    /// The domain: `node`, `rack`, `zone`, `switch`, or a node label key.
    pub topology_key: String,
    /// 0 = required; 1–100 = preferred with that weight.
    #[serde(default)]
    pub weight: u32,
    /// Anti-affinity rather than affinity.
    #[serde(default)]
    pub anti: bool,
}

/// What PodTopologySpread does when a placement would exceed `max_skew`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WhenUnsatisfiable {
    /// A filter (the default).
    #[default]
    DoNotSchedule,
    /// Only a score.
    ScheduleAnyway,
}

/// Whether a spread constraint's node inclusion policy takes a node's fit into account
/// when it counts the node's domain (Kubernetes `NodeInclusionPolicy`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NodeInclusionPolicy {
    /// Only nodes the pod could go to count (for `node_affinity_policy`: nodes its node
    /// selector and required node affinity allow; for `node_taints_policy`: nodes whose
    /// NoSchedule and NoExecute taints it tolerates).
    Honor,
    /// Every node counts.
    Ignore,
}

/// A PodTopologySpread constraint: the pods matching `selector` stay spread over the
/// domains of `topology_key` within `max_skew` (count in a domain − fewest in any
/// eligible domain). Defaults as kubernetes v1.34's `filterTopologySpreadConstraints`
/// (`plugins/podtopologyspread/common.go`): `min_domains` 1, `node_affinity_policy`
/// Honor, `node_taints_policy` Ignore.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpreadConstraint {
    /// Largest allowed skew (at least 1).
    pub max_skew: u32,
    /// The domain key.
    pub topology_key: String,
    /// Filter or score.
    #[serde(default)]
    pub when_unsatisfiable: WhenUnsatisfiable,
    /// Label requirements on the pods counted (ANDed). Empty counts no pod, as an empty
    /// `labelSelector` does upstream (`countPodsMatchSelector`), though the pod itself
    /// matches it.
    pub selector: Vec<Requirement>,
    /// With fewer eligible domains than this the global minimum is taken as 0
    /// (`DoNotSchedule` only; at least 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub min_domains: u32,
    /// Whether nodes its node selector and required node affinity reject count.
    #[serde(default = "honor", skip_serializing_if = "is_honor")]
    pub node_affinity_policy: NodeInclusionPolicy,
    /// Whether nodes with NoSchedule or NoExecute taints it does not tolerate count.
    #[serde(default = "ignore", skip_serializing_if = "is_ignore")]
    pub node_taints_policy: NodeInclusionPolicy,
}

impl Default for SpreadConstraint {
    /// Skew 1 over nodes, DoNotSchedule, no selector, the upstream defaults otherwise.
    fn default() -> Self {
        SpreadConstraint {
            max_skew: 1,
            topology_key: "node".into(),
            when_unsatisfiable: WhenUnsatisfiable::DoNotSchedule,
            selector: Vec::new(),
            min_domains: 1,
            node_affinity_policy: NodeInclusionPolicy::Honor,
            node_taints_policy: NodeInclusionPolicy::Ignore,
        }
    }
}

impl SpreadConstraint {
    /// Whether the spread counts the domain of a node with `labels` and `taints` for a
    /// pod with `c` (kubernetes v1.34 `matchNodeInclusionPolicies`).
    pub fn includes(&self, c: &PodConstraints, labels: &BTreeMap<String, String>, taints: &[Taint]) -> bool {
        (self.node_affinity_policy == NodeInclusionPolicy::Ignore || c.node_matches(labels))
            && (self.node_taints_policy == NodeInclusionPolicy::Ignore || c.tolerates_all(taints))
    }
}

fn one() -> u32 {
    1
}
fn is_one(v: &u32) -> bool {
    *v == 1
}
fn honor() -> NodeInclusionPolicy {
    NodeInclusionPolicy::Honor
}
fn ignore() -> NodeInclusionPolicy {
    NodeInclusionPolicy::Ignore
}
fn is_honor(p: &NodeInclusionPolicy) -> bool {
    *p == NodeInclusionPolicy::Honor
}
fn is_ignore(p: &NodeInclusionPolicy) -> bool {
    *p == NodeInclusionPolicy::Ignore
}

/// Whether pod labels satisfy a selector (all requirements; an empty selector matches
/// every pod).
pub fn selector_matches(selector: &[Requirement], labels: &BTreeMap<String, String>) -> bool {
    selector.iter().all(|r| r.matches(labels))
}

/// What the placements of other pods look at in a pod bound to a node (kubernetes
/// v1.34 `pkg/scheduler/framework/types.go` `PodInfo`): its labels and its inter-pod
/// terms. A pod with neither is not recorded (only counted, as a pod with no labels).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodInfo {
    /// The pod's labels.
    pub labels: BTreeMap<String, String>,
    /// Its inter-pod affinity and anti-affinity terms.
    pub terms: Vec<PodAffinityTerm>,
}

impl PodInfo {
    /// Whether a pod with `c` has anything others look at (labels or inter-pod terms).
    pub fn wanted(c: &PodConstraints) -> bool {
        !c.labels.is_empty() || !c.pod_affinity.is_empty()
    }
    /// What others see of a pod with `c`; `None` when nothing ([`PodInfo::wanted`]).
    pub fn of(c: &PodConstraints) -> Option<std::sync::Arc<PodInfo>> {
        PodInfo::wanted(c)
            .then(|| std::sync::Arc::new(PodInfo { labels: c.labels.clone(), terms: c.pod_affinity.clone() }))
    }
}

/// Everything that restricts where a pod may go.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodConstraints {
    /// `nodeSelector`: every label must be equal.
    #[serde(default)]
    pub node_selector: BTreeMap<String, String>,
    /// Required node affinity: at least one term matches (no term = no constraint).
    #[serde(default)]
    pub required: Vec<SelectorTerm>,
    /// Preferred node affinity: (weight 1–100, term).
    #[serde(default)]
    pub preferred: Vec<(u32, SelectorTerm)>,
    /// Tolerations.
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
    /// The pod's own labels (what other pods' affinity terms select).
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Inter-pod affinity and anti-affinity.
    #[serde(default)]
    pub pod_affinity: Vec<PodAffinityTerm>,
    /// Topology spread constraints.
    #[serde(default)]
    pub spread: Vec<SpreadConstraint>,
}

impl PodConstraints {
    /// Whether it has inter-pod terms or spread constraints of its own.
    pub fn has_pod_topology(&self) -> bool {
        !self.pod_affinity.is_empty() || !self.spread.is_empty()
    }
    /// Whether a node with `labels` passes the node selector and required affinity.
    pub fn node_matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.node_selector.iter().all(|(k, v)| labels.get(k) == Some(v))
            && (self.required.is_empty() || self.required.iter().any(|t| t.matches(labels)))
    }
    /// Sum of the weights of the preferred terms a node with `labels` matches.
    pub fn preferred_weight(&self, labels: &BTreeMap<String, String>) -> u64 {
        self.preferred.iter().filter(|(_, t)| t.matches(labels)).map(|(w, _)| *w as u64).sum()
    }
    /// Whether every taint with effect NoSchedule or NoExecute is tolerated.
    pub fn tolerates_all(&self, taints: &[Taint]) -> bool {
        taints
            .iter()
            .filter(|t| t.effect != TaintEffect::PreferNoSchedule)
            .all(|t| self.tolerations.iter().any(|x| x.tolerates(t)))
    }
    /// How many PreferNoSchedule taints are not tolerated.
    pub fn untolerated_preferences(&self, taints: &[Taint]) -> u64 {
        taints
            .iter()
            .filter(|t| t.effect == TaintEffect::PreferNoSchedule)
            .filter(|t| !self.tolerations.iter().any(|x| x.tolerates(t)))
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }
    fn req(key: &str, operator: Operator, values: &[&str]) -> Requirement {
        Requirement { key: key.into(), operator, values: values.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn every_operator() {
        let l = labels(&[("gpu", "A100"), ("mem", "80")]);
        assert!(req("gpu", Operator::In, &["A100", "H100"]).matches(&l));
        assert!(!req("gpu", Operator::In, &["T4"]).matches(&l));
        assert!(req("gpu", Operator::NotIn, &["T4"]).matches(&l));
        assert!(!req("gpu", Operator::NotIn, &["A100"]).matches(&l));
        assert!(req("zone", Operator::NotIn, &["a"]).matches(&l), "absent label: NotIn holds");
        assert!(req("gpu", Operator::Exists, &[]).matches(&l));
        assert!(!req("zone", Operator::Exists, &[]).matches(&l));
        assert!(req("zone", Operator::DoesNotExist, &[]).matches(&l));
        assert!(!req("gpu", Operator::DoesNotExist, &[]).matches(&l));
        assert!(req("mem", Operator::Gt, &["40"]).matches(&l));
        assert!(!req("mem", Operator::Gt, &["80"]).matches(&l));
        assert!(req("mem", Operator::Lt, &["81"]).matches(&l));
        assert!(!req("mem", Operator::Lt, &["80"]).matches(&l));
        assert!(!req("gpu", Operator::Gt, &["1"]).matches(&l), "not an integer");
    }

    #[test]
    fn taints_and_tolerations() {
        let gpu = Taint { key: "nvidia.com/gpu".into(), value: "".into(), effect: TaintEffect::NoSchedule };
        let soft = Taint { key: "spot".into(), value: "true".into(), effect: TaintEffect::PreferNoSchedule };
        let none = PodConstraints::default();
        assert!(!none.tolerates_all(std::slice::from_ref(&gpu)));
        assert!(none.tolerates_all(std::slice::from_ref(&soft)), "PreferNoSchedule never filters");
        assert_eq!(none.untolerated_preferences(&[gpu.clone(), soft.clone()]), 1);
        let tol = PodConstraints {
            tolerations: vec![Toleration {
                key: Some("nvidia.com/gpu".into()),
                exists: true,
                value: "".into(),
                effect: None,
                toleration_seconds: None,
            }],
            ..Default::default()
        };
        assert!(tol.tolerates_all(std::slice::from_ref(&gpu)));
        let wrong_effect = Toleration {
            key: Some("nvidia.com/gpu".into()),
            exists: true,
            value: "".into(),
            effect: Some(TaintEffect::NoExecute),
            toleration_seconds: None,
        };
        assert!(!wrong_effect.tolerates(&gpu));
        let equal = Toleration {
            key: Some("spot".into()),
            exists: false,
            value: "true".into(),
            effect: None,
            toleration_seconds: None,
        };
        assert!(equal.tolerates(&soft));
        let everything =
            Toleration { key: None, exists: true, value: "".into(), effect: None, toleration_seconds: None };
        assert!(everything.tolerates(&gpu) && everything.tolerates(&soft));
    }

    #[test]
    fn no_execute_taints_and_default_tolerations() {
        let ne = |key: &str| Taint { key: key.into(), value: "".into(), effect: TaintEffect::NoExecute };
        let tol = |key: Option<&str>, effect: Option<TaintEffect>, secs: Option<u64>| Toleration {
            key: key.map(Into::into),
            exists: true,
            value: "".into(),
            effect,
            toleration_seconds: secs,
        };
        let soft = Taint { key: "x".into(), value: "".into(), effect: TaintEffect::NoSchedule };
        // Only NoExecute taints count; an untolerated one evicts at once.
        assert_eq!(no_execute(&[], std::slice::from_ref(&soft), Some(300)), NoExecute::Stays);
        assert_eq!(no_execute(&[], &[ne("x")], Some(300)), NoExecute::EvictNow);
        // The admission plugin's 300 s covers `unreachable` and `not-ready` only.
        assert_eq!(no_execute(&[], &[ne(TAINT_UNREACHABLE)], Some(300)), NoExecute::EvictAfter(300));
        assert_eq!(no_execute(&[], &[ne(TAINT_NOT_READY)], None), NoExecute::EvictNow);
        // A declared toleration replaces the default: for ever, or its own seconds.
        let forever = [tol(Some(TAINT_UNREACHABLE), Some(TaintEffect::NoExecute), None)];
        assert_eq!(no_execute(&forever, &[ne(TAINT_UNREACHABLE)], Some(300)), NoExecute::Stays);
        let all = [tol(None, None, Some(30))];
        assert_eq!(no_execute(&all, &[ne(TAINT_UNREACHABLE), ne("x")], Some(300)), NoExecute::EvictAfter(30));
        // The shortest of the tolerations matched; the first match of a taint decides; 0 s
        // is at once.
        let two = [tol(Some("a"), None, Some(60)), tol(Some("b"), None, Some(30)), tol(Some("a"), None, Some(5))];
        assert_eq!(no_execute(&two, &[ne("a"), ne("b")], None), NoExecute::EvictAfter(30));
        assert_eq!(no_execute(&[tol(Some("a"), None, Some(0))], &[ne("a")], None), NoExecute::EvictNow);
        // A toleration of `not-ready` keeps the default for `unreachable`.
        let nr = [tol(Some(TAINT_NOT_READY), Some(TaintEffect::NoExecute), None)];
        assert_eq!(no_execute(&nr, &[ne(TAINT_UNREACHABLE)], Some(300)), NoExecute::EvictAfter(300));
    }

    #[test]
    fn selector_and_required_terms() {
        let c = PodConstraints {
            node_selector: labels(&[("pool", "train")]),
            required: vec![
                SelectorTerm { requirements: vec![req("gpu", Operator::In, &["A100"])] },
                SelectorTerm { requirements: vec![req("gpu", Operator::In, &["H100"])] },
            ],
            preferred: vec![(30, SelectorTerm { requirements: vec![req("zone", Operator::In, &["a"])] })],
            ..Default::default()
        };
        assert!(c.node_matches(&labels(&[("pool", "train"), ("gpu", "H100")])));
        assert!(!c.node_matches(&labels(&[("pool", "infer"), ("gpu", "H100")])), "selector");
        assert!(!c.node_matches(&labels(&[("pool", "train"), ("gpu", "T4")])), "no term matches");
        assert_eq!(c.preferred_weight(&labels(&[("zone", "a")])), 30);
        assert_eq!(c.preferred_weight(&labels(&[("zone", "b")])), 0);
    }
}
