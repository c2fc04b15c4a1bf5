//! InterPodAffinity and PodTopologySpread as kubernetes v1.34 computes them
//! (`plugins/interpodaffinity`, `plugins/podtopologyspread`): filters and normalised
//! scores on hand-built ledgers, whole runs with exact start times and nodes, and the
//! placement shortcuts against full passes with running pods' terms.

use policies::placement::frag::{FragMeter, PodType, TypicalPods};
use policies::placement::topology::{Domains, PodTopology};
use policies::placement::{MemoryFit, PlaceCx, Placement, PodReq};
use proptest::prelude::*;
use sim_core::constraints::{
    NodeInclusionPolicy, Operator, PodAffinityTerm, PodConstraints, PodInfo, Requirement, SelectorTerm,
    SpreadConstraint, Taint, TaintEffect, WhenUnsatisfiable,
};
use sim_core::ledger::{Ledger, TaskBinding};
use sim_core::log::{LogEvent, LogSink};
use sim_core::rng::RngStreams;
use sim_core::{Cluster, GpuSharing, NodeId, NodePool, NodeSpec, SimDuration, SimTime, TaskShape};
use std::collections::BTreeMap;

const SPREAD: &str = "node(s) didn't match pod topology spread constraints";
const SPREAD_LABEL: &str = "node(s) didn't match pod topology spread constraints (missing required label)";
const AFFINITY: &str = "node(s) didn't match pod affinity rules";
const ANTI: &str = "node(s) didn't match pod anti-affinity rules";
const EXISTING_ANTI: &str = "node(s) didn't satisfy existing pods anti-affinity rules";

fn labels(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
    kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// `count` CPU nodes of `cores` cores in `zone` and `rack` (if any) with node `labels`.
fn pool(count: u32, cores: u32, zone: Option<&str>, rack: Option<&str>, node_labels: &[(&str, &str)]) -> NodePool {
    let mut spec = NodeSpec {
        cores,
        memory_mib: 16_000,
        gpus: Vec::new(),
        labels: labels(node_labels),
        taints: Vec::new(),
        topology: Default::default(),
    };
    spec.topology.zone = zone.map(String::from);
    spec.topology.rack = rack.map(String::from);
    NodePool { name: format!("{zone:?}{rack:?}"), count, spec, sharing: GpuSharing::Exclusive, group: None }
}

fn cpu(milli: u32) -> TaskShape {
    TaskShape { cores: 1, cpu_milli: milli, ..TaskShape::default() }
}

/// Runs a one-core pod with `c` on node `n` of `l` (as the engine binds one).
fn run_on(l: &mut Ledger, n: u32, c: &PodConstraints) {
    l.take(&cpu(1000), &[], &TaskBinding { node: NodeId(n), gpus: vec![] }, true).unwrap();
    if let Some(pod) = PodInfo::of(c) {
        l.label_pod(NodeId(n), 0, pod);
    }
}

fn sel(key: &str, operator: Operator, values: &[&str]) -> Vec<Requirement> {
    vec![Requirement { key: key.into(), operator, values: values.iter().map(|v| v.to_string()).collect() }]
}

fn app(v: &str) -> Vec<Requirement> {
    sel("app", Operator::In, &[v])
}

fn term(selector: Vec<Requirement>, key: &str, weight: u32, anti: bool) -> PodAffinityTerm {
    PodAffinityTerm { selector, topology_key: key.into(), weight, anti }
}

/// A pod labelled `app=<name>` with these terms and spreads.
fn pod(name: &str, pod_affinity: Vec<PodAffinityTerm>, spread: Vec<SpreadConstraint>) -> PodConstraints {
    PodConstraints { labels: labels(&[("app", name)]), pod_affinity, spread, ..Default::default() }
}

/// Four one-rack-per-two CPU nodes (r1: 0 and 1, r2: 2 and 3), 8 cores each.
fn racks() -> Ledger {
    Ledger::new(&Cluster { pools: vec![pool(2, 8, None, Some("r1"), &[]), pool(2, 8, None, Some("r2"), &[])] })
}

/// Each node's topology reason for a pod with `c` (`None`: it passes).
fn reasons(l: &Ledger, c: Option<&PodConstraints>) -> Vec<Option<&'static str>> {
    let mut d = Domains::default();
    let t = PodTopology::new(l.nodes(), c, &mut d, None);
    (0..l.nodes().len()).map(|i| t.as_ref().and_then(|t| t.why_not(i))).collect()
}

/// The normalised (InterPodAffinity, PodTopologySpread) scores of the `feasible` nodes.
fn scores(l: &Ledger, c: Option<&PodConstraints>, feasible: &[u32]) -> (Vec<i64>, Vec<i64>) {
    let mut d = Domains::default();
    PodTopology::new(l.nodes(), c, &mut d, None).expect("terms that concern the pod").scores(feasible)
}

/// The nodes a one-core pod with `c` goes to under `placement`, over 30 seeds.
fn chosen_by(l: &Ledger, c: &PodConstraints, placement: &str) -> Vec<u32> {
    let mut v: Vec<u32> = (0..30)
        .filter_map(|seed| {
            let p = PodReq { task: cpu(1000), models: &[], type_id: None, constraints: Some(c) };
            let mut rng = RngStreams::new(seed).stream("t");
            Placement::by_name(placement, MemoryFit::Oblivious)
                .unwrap()
                .place(l.nodes(), &vec![true; l.nodes().len()], &p, &mut PlaceCx::default(), &mut rng)
                .map(|b| b.node.0)
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The nodes that pass every filter (the `random` placement draws among them).
fn feasible(l: &Ledger, c: &PodConstraints) -> Vec<u32> {
    chosen_by(l, c, "random")
}

fn with_pods(pods: &[(u32, &str)]) -> Ledger {
    let mut l = racks();
    for &(n, name) in pods {
        run_on(&mut l, n, &pod(name, vec![], vec![]));
    }
    l
}

#[test]
fn required_anti_affinity_keeps_replicas_apart() {
    let l = with_pods(&[(0, "web")]);
    assert_eq!(feasible(&l, &pod("web", vec![term(app("web"), "node", 0, true)], vec![])), vec![1, 2, 3]);
    assert_eq!(feasible(&l, &pod("web", vec![term(app("web"), "rack", 0, true)], vec![])), vec![2, 3]);
    assert_eq!(feasible(&l, &pod("web", vec![], vec![])), vec![0, 1, 2, 3]);
}

#[test]
fn required_affinity_follows_the_selected_pods() {
    let l = with_pods(&[(2, "db")]);
    assert_eq!(feasible(&l, &pod("web", vec![term(app("db"), "rack", 0, false)], vec![])), vec![2, 3]);
    assert_eq!(feasible(&l, &pod("web", vec![term(app("db"), "node", 0, false)], vec![])), vec![2]);
    // No pod selected anywhere: a pod that matches its own term may go anywhere (the
    // first replica of a group), one that does not may go nowhere.
    let empty = racks();
    assert_eq!(feasible(&empty, &pod("web", vec![term(app("web"), "rack", 0, false)], vec![])), vec![0, 1, 2, 3]);
    assert_eq!(feasible(&empty, &pod("web", vec![term(app("db"), "rack", 0, false)], vec![])), Vec::<u32>::new());
}

/// `satisfyExistingPodsAntiAffinity`: a running pod's required anti-affinity keeps out
/// the pods it selects, whether they have terms or not.
#[test]
fn running_pods_required_anti_affinity_filters_pods_without_terms() {
    let mut l = racks();
    run_on(&mut l, 0, &pod("db", vec![term(app("web"), "node", 0, true)], vec![]));
    run_on(&mut l, 2, &pod("cache", vec![term(app("web"), "rack", 0, true)], vec![]));
    let web = pod("web", vec![], vec![]);
    // db repels web from node 0, cache from rack r2 (nodes 2 and 3).
    assert_eq!(reasons(&l, Some(&web)), [Some(EXISTING_ANTI), None, Some(EXISTING_ANTI), Some(EXISTING_ANTI)]);
    assert_eq!(feasible(&l, &web), vec![1]);
    // Terms that select nothing of the pod leave it alone (no topology to prepare at all).
    let mut d = Domains::default();
    assert!(PodTopology::new(l.nodes(), Some(&pod("batch", vec![], vec![])), &mut d, None).is_none());
    assert!(PodTopology::new(l.nodes(), None, &mut d, None).is_none());
    // A selector that matches pods without labels (NotIn) keeps out a pod with no
    // constraints at all.
    let mut l = racks();
    run_on(&mut l, 1, &pod("db", vec![term(sel("app", Operator::NotIn, &["db"]), "node", 0, true)], vec![]));
    assert_eq!(reasons(&l, None), [None, Some(EXISTING_ANTI), None, None]);
    // The pod's own anti-affinity is checked before the running pods': web pods on
    // nodes 0 and 1, db pods repelling db on nodes 1 and 2; a db pod repelling web fails
    // its own term on nodes 0 and 1 (node 1 fails both), the running db's on node 2.
    let mut l = with_pods(&[(0, "web"), (1, "web")]);
    for n in [1, 2] {
        run_on(&mut l, n, &pod("db", vec![term(app("db"), "node", 0, true)], vec![]));
    }
    let db = pod("db", vec![term(app("web"), "node", 0, true)], vec![]);
    assert_eq!(reasons(&l, Some(&db)), [Some(ANTI), Some(ANTI), Some(EXISTING_ANTI), None]);
}

/// `satisfyPodAffinity`: one pod must match every required term; the first-pod exception
/// holds only while no pod anywhere matches them, the pod matches them itself, and the
/// node has every key.
#[test]
fn required_affinity_terms_and_the_first_pod() {
    // db (app=db) on node 0 and cache (tier=cache) on node 1, both in r1: no single pod
    // is both, so no node passes (the pod, app=web, does not match its own terms).
    let both = vec![term(app("db"), "rack", 0, false), term(sel("tier", Operator::In, &["cache"]), "rack", 0, false)];
    let web = pod("web", both.clone(), vec![]);
    let mut l = with_pods(&[(0, "db")]);
    run_on(&mut l, 1, &PodConstraints { labels: labels(&[("tier", "cache")]), ..Default::default() });
    assert_eq!(feasible(&l, &web), Vec::<u32>::new());
    // A pod that is both, in r2: r2 passes, r1 does not.
    run_on(&mut l, 2, &PodConstraints { labels: labels(&[("app", "db"), ("tier", "cache")]), ..Default::default() });
    assert_eq!(reasons(&l, Some(&web)), [Some(AFFINITY), Some(AFFINITY), None, None]);
    // Zones: 0 and 1 in z1, 2 in z2, node 3 has no zone. A group's first pod (it matches
    // its own term) may go to any node with a zone, not to node 3.
    let zoned = || {
        Ledger::new(&Cluster {
            pools: vec![
                pool(2, 8, Some("z1"), None, &[]),
                pool(1, 8, Some("z2"), None, &[]),
                pool(1, 8, None, None, &[]),
            ],
        })
    };
    let group = pod("web", vec![term(app("web"), "zone", 0, false)], vec![]);
    assert_eq!(reasons(&zoned(), Some(&group)), [None, None, None, Some(AFFINITY)]);
    // A web pod on node 3 is in no zone: it counts nowhere, the exception still holds.
    let mut l = zoned();
    run_on(&mut l, 3, &pod("web", vec![], vec![]));
    assert_eq!(reasons(&l, Some(&group)), [None, None, None, Some(AFFINITY)]);
    // One in z1: only z1.
    run_on(&mut l, 0, &pod("web", vec![], vec![]));
    assert_eq!(reasons(&l, Some(&group)), [None, None, Some(AFFINITY), Some(AFFINITY)]);
}

/// `PreScore`/`Score`: each pod a preferred term selects adds the term's weight to its
/// domain; NormalizeScore maps [min, max] to [0, 100] in floating point, truncated.
#[test]
fn affinity_score_counts_every_matching_pod() {
    // db pods: two on node 0, one on node 1. Preferred affinity to db per node, weight
    // 10: raw 20, 10, 0, 0; preferred anti-affinity to db per rack, weight 3: r1 holds
    // three, −9 on nodes 0 and 1. Raw 11, 1, 0, 0: 100 × 11/11, 100 × 1/11 = 9.09, 0, 0.
    let l = with_pods(&[(0, "db"), (0, "db"), (1, "db")]);
    let c = pod("web", vec![term(app("db"), "node", 10, false), term(app("db"), "rack", 3, true)], vec![]);
    assert_eq!(scores(&l, Some(&c), &[0, 1, 2, 3]).0, [100, 9, 0, 0]);
    // Normalised over the nodes that passed the filters only: without node 0, raw 1, 0, 0.
    assert_eq!(scores(&l, Some(&c), &[1, 2, 3]).0, [100, 0, 0]);
    // Raw 100, 29, 0, 0: 100 × (29 / 100) is 28.999… in floating point, so 28.
    let l = with_pods(&[(0, "cache"), (1, "db")]);
    let c = pod("web", vec![term(app("cache"), "node", 100, false), term(app("db"), "node", 29, false)], vec![]);
    assert_eq!(scores(&l, Some(&c), &[0, 1, 2, 3]).0, [100, 28, 0, 0]);
    // Per pod, not once per domain: two db pods on node 0 outweigh one on node 2 (each
    // held a db pod, which alone would tie them).
    let l = with_pods(&[(0, "db"), (0, "db"), (2, "db")]);
    let c = pod("web", vec![term(app("db"), "node", 50, false)], vec![]);
    assert_eq!(chosen_by(&l, &c, "least-allocated"), vec![0]);
}

/// `processExistingPod`: running pods' required affinity (at hardPodAffinityWeight 1)
/// and preferred terms that select the incoming pod score it, though it has no terms.
#[test]
fn running_pods_terms_score_the_incoming_pod() {
    let mut l = racks();
    // node 0: requires web on its node (+1); node 1: prefers web on its node, weight 5
    // (+5); node 2: prefers no web in its rack, weight 7 (−7 on nodes 2 and 3); node 3:
    // requires no `other` on its node (a filter, no score).
    run_on(&mut l, 0, &pod("a", vec![term(app("web"), "node", 0, false)], vec![]));
    run_on(&mut l, 1, &pod("b", vec![term(app("web"), "node", 5, false)], vec![]));
    run_on(&mut l, 2, &pod("c", vec![term(app("web"), "rack", 7, true)], vec![]));
    run_on(&mut l, 3, &pod("d", vec![term(app("other"), "node", 0, true)], vec![]));
    // Raw 1, 5, −7, −7: min −7, max 5, so 100 × 8/12 = 66.7, 100, 0, 0.
    let web = pod("web", vec![], vec![]);
    assert_eq!(scores(&l, Some(&web), &[0, 1, 2, 3]).0, [66, 100, 0, 0]);
    assert_eq!(reasons(&l, Some(&web)), [None; 4]);
    // The score (× 2) outweighs least-allocated, which cannot tell the nodes apart.
    assert_eq!(chosen_by(&l, &web, "least-allocated"), vec![1]);
}

fn spread(key: &str, max_skew: u32, when: WhenUnsatisfiable, selector: Vec<Requirement>) -> SpreadConstraint {
    SpreadConstraint { max_skew, topology_key: key.into(), when_unsatisfiable: when, selector, ..Default::default() }
}

#[test]
fn topology_spread_filters_by_skew() {
    let skew = |n| spread("rack", n, WhenUnsatisfiable::DoNotSchedule, app("web"));
    // Two web pods in r1, none in r2: one more in r1 would make the skew 3.
    let l = with_pods(&[(0, "web"), (1, "web")]);
    assert_eq!(feasible(&l, &pod("web", vec![], vec![skew(1)])), vec![2, 3]);
    assert_eq!(feasible(&l, &pod("web", vec![], vec![skew(3)])), vec![0, 1, 2, 3]);
    // Balanced racks: both allowed.
    let l = with_pods(&[(0, "web"), (2, "web")]);
    assert_eq!(feasible(&l, &pod("web", vec![], vec![skew(1)])), vec![0, 1, 2, 3]);
    // ScheduleAnyway only scores: r2's nodes are busier (least-allocated would pick
    // r1) but hold no web pod.
    let l = with_pods(&[(0, "web"), (1, "web"), (2, "db"), (2, "db"), (3, "db"), (3, "db")]);
    assert_eq!(chosen_by(&l, &pod("web", vec![], vec![]), "least-allocated"), vec![0, 1]);
    let c = pod("web", vec![], vec![spread("rack", 1, WhenUnsatisfiable::ScheduleAnyway, app("web"))]);
    assert_eq!(chosen_by(&l, &c, "least-allocated"), vec![2, 3]);
    assert_eq!(feasible(&l, &c), vec![0, 1, 2, 3], "no filter");
}

/// Zone z1: node 0, z2: node 1 (pool a), z3: node 2 (pool b), node 3 (pool a) has no
/// zone; a web pod runs on nodes 0 and 1.
fn zones() -> Ledger {
    let mut l = Ledger::new(&Cluster {
        pools: vec![
            pool(1, 8, Some("z1"), None, &[("pool", "a")]),
            pool(1, 8, Some("z2"), None, &[("pool", "a")]),
            pool(1, 8, Some("z3"), None, &[("pool", "b")]),
            pool(1, 8, None, None, &[("pool", "a")]),
        ],
    });
    run_on(&mut l, 0, &pod("web", vec![], vec![]));
    run_on(&mut l, 1, &pod("web", vec![], vec![]));
    l
}

/// A web pod for pool a spread over zones with skew 1, changed by `f`.
fn pool_a_spread(f: impl FnOnce(&mut SpreadConstraint)) -> PodConstraints {
    let mut s = spread("zone", 1, WhenUnsatisfiable::DoNotSchedule, app("web"));
    f(&mut s);
    PodConstraints { node_selector: labels(&[("pool", "a")]), ..pod("web", vec![], vec![s]) }
}

/// `calPreFilterState`, `Filter`: nodes without the key are neither counted nor allowed;
/// `nodeAffinityPolicy: Honor` leaves out domains only other pools fill; `minDomains`.
#[test]
fn spread_counts_eligible_domains_only() {
    let l = zones();
    // Honor (default): z3 has only pool-b nodes, so the minimum is over z1 and z2 (1 each):
    // 1 + 1 − 1 = 1 on nodes 0 and 1; node 2 (z3, 0) passes the spread (NodeAffinity
    // rejects it); node 3 lacks the key.
    assert_eq!(reasons(&l, Some(&pool_a_spread(|_| {}))), [None, None, None, Some(SPREAD_LABEL)]);
    assert_eq!(feasible(&l, &pool_a_spread(|_| {})), vec![0, 1]);
    // Ignore: z3 counts, the minimum is 0, z1 and z2 would reach skew 2.
    let ignore = pool_a_spread(|s| s.node_affinity_policy = NodeInclusionPolicy::Ignore);
    assert_eq!(reasons(&l, Some(&ignore)), [Some(SPREAD), Some(SPREAD), None, Some(SPREAD_LABEL)]);
    assert_eq!(feasible(&l, &ignore), Vec::<u32>::new());
    // minDomains 3 with two eligible domains: the minimum is taken as 0.
    let three = pool_a_spread(|s| s.min_domains = 3);
    assert_eq!(reasons(&l, Some(&three)), [Some(SPREAD), Some(SPREAD), None, Some(SPREAD_LABEL)]);
    assert_eq!(reasons(&l, Some(&pool_a_spread(|s| s.min_domains = 2))), [None, None, None, Some(SPREAD_LABEL)]);
}

/// `nodeTaintsPolicy`: Ignore (default) counts tainted nodes' domains, Honor leaves out
/// those whose NoSchedule taints the pod does not tolerate.
#[test]
fn spread_node_taints_policy() {
    // Zone z1: node 0 with two web pods; z2: node 1, tainted, empty.
    let mut tainted = pool(1, 8, Some("z2"), None, &[]);
    tainted.spec.taints = vec![Taint { key: "gpu".into(), value: String::new(), effect: TaintEffect::NoSchedule }];
    let mut l = Ledger::new(&Cluster { pools: vec![pool(1, 8, Some("z1"), None, &[]), tainted] });
    run_on(&mut l, 0, &pod("web", vec![], vec![]));
    run_on(&mut l, 0, &pod("web", vec![], vec![]));
    let c = |node_taints_policy| {
        let s = spread("zone", 1, WhenUnsatisfiable::DoNotSchedule, app("web"));
        pod("web", vec![], vec![SpreadConstraint { node_taints_policy, ..s }])
    };
    // Ignore: min 0 (z2), node 0: 2 + 1 − 0 = 3 > 1; node 1: 0 + 1 − 0 = 1.
    assert_eq!(reasons(&l, Some(&c(NodeInclusionPolicy::Ignore))), [Some(SPREAD), None]);
    // Honor: z2 is left out, min 2 (z1), node 0: 2 + 1 − 2 = 1 (node 1, whose taint
    // TaintToleration rejects, 0 + 1 − 2).
    assert_eq!(reasons(&l, Some(&c(NodeInclusionPolicy::Honor))), [None, None]);
}

/// An empty spread selector counts no pod (`countPodsMatchSelector`) though the pod
/// matches it: skew 0 + 1 − 0 everywhere.
#[test]
fn empty_spread_selector_counts_nothing() {
    let l = with_pods(&[(0, "web"), (0, "web"), (0, "web")]);
    let c = pod("web", vec![], vec![spread("node", 1, WhenUnsatisfiable::DoNotSchedule, vec![])]);
    assert_eq!(reasons(&l, Some(&c)), [None; 4]);
}

/// `PreScore`, `Score`, `NormalizeScore` of a ScheduleAnyway spread.
#[test]
fn spread_score_as_upstream() {
    // z1: nodes 0 and 1, z2: node 2, node 3 in no zone; web pods: three on node 0, one
    // on node 2. Spread over zones with maxSkew 2.
    let mut l = Ledger::new(&Cluster {
        pools: vec![pool(2, 8, Some("z1"), None, &[]), pool(1, 8, Some("z2"), None, &[]), pool(1, 8, None, None, &[])],
    });
    for n in [0, 0, 0, 2] {
        run_on(&mut l, n, &pod("web", vec![], vec![]));
    }
    let c = pod("web", vec![], vec![spread("zone", 2, WhenUnsatisfiable::ScheduleAnyway, app("web"))]);
    // Node 3 is ignored (0). Two zones among the others: weight ln(2 + 2) = 1.386.
    // z1: round(3 × 1.386 + 1) = 5, z2: round(1 × 1.386 + 1) = 2; max 5, min 2:
    // 100 × (5 + 2 − 5) / 5 = 40, 100 × (5 + 2 − 2) / 5 = 100.
    assert_eq!(scores(&l, Some(&c), &[0, 1, 2, 3]).1, [40, 40, 100, 0]);
    // Without node 2 one zone is left: ln 3, round(3 × 1.099 + 1) = 4 on both; max = min.
    assert_eq!(scores(&l, Some(&c), &[0, 1, 3]).1, [100, 100, 0]);
    // Per node: four nodes, ln 6 = 1.792; raw round(3 × 1.792) = 5, 0, round(1.792) = 2,
    // 0 (maxSkew 1); max 5, min 0: 0, 100, 60, 100.
    let per_node = pod("web", vec![], vec![spread("node", 1, WhenUnsatisfiable::ScheduleAnyway, app("web"))]);
    assert_eq!(scores(&l, Some(&per_node), &[0, 1, 2, 3]).1, [0, 100, 60, 100]);
    // No selected pod anywhere: max 0, every node that has the key scores 100.
    let none = pod("web", vec![], vec![spread("zone", 1, WhenUnsatisfiable::ScheduleAnyway, app("db"))]);
    assert_eq!(scores(&l, Some(&none), &[0, 1, 2, 3]).1, [100, 100, 100, 0]);
}

/// (job, node) of each start, in order.
#[derive(Default)]
struct Starts(Vec<(String, String, u64)>);

impl LogSink for Starts {
    fn record(&mut self, now: SimTime, ev: &LogEvent<'_>) -> std::io::Result<()> {
        if let LogEvent::Start { job, units, .. } = ev {
            self.0.push((job.to_string(), units.clone(), now.0 / 1_000_000));
        }
        Ok(())
    }
}

fn cpu_pod(id: &str, submit: u64, run: u64, c: PodConstraints) -> sim_core::Job {
    let mut j = sim_core::Job::rigid(
        id,
        SimTime::from_secs(submit),
        1,
        SimDuration::from_secs(run),
        SimDuration::from_secs(run),
    );
    j.task = cpu(1000);
    j.constraints = Some(Box::new(c));
    j
}

/// (job, node, start s) of every start of a run under `spec`.
fn kube_starts(spec: &str, cluster: &Cluster, jobs: &[sim_core::Job]) -> Vec<(String, String, u64)> {
    let mut p = policies::build(spec).unwrap();
    let mut log = Starts::default();
    sim_core::simulate(cluster, jobs, p.as_mut(), &sim_core::SimConfig::default(), Some(&mut log)).unwrap();
    log.0
}

fn start(job: &str, node: u32, at: u64) -> (String, String, u64) {
    (job.to_string(), format!("node {node}"), at)
}

/// Issue 16's InterPodAffinity scenario, run through the engine.
#[test]
fn web_pods_keep_off_a_db_pods_node() {
    // Node 0 (pool a) and node 1 (pool b), 8 cores each. db (app=db, required
    // anti-affinity to app=web per node, pool a) runs 0–1000 on node 0. web-0 and web-1
    // (no terms, preferring pool a at weight 100: NodeAffinity 100 × 2 against at most
    // 100 of least-allocated) are kept off node 0 by db's term and start at once on
    // node 1; web-2, submitted after db ended, goes to node 0.
    let cluster =
        Cluster { pools: vec![pool(1, 8, None, None, &[("pool", "a")]), pool(1, 8, None, None, &[("pool", "b")])] };
    let db = PodConstraints {
        node_selector: labels(&[("pool", "a")]),
        ..pod("db", vec![term(app("web"), "node", 0, true)], vec![])
    };
    let web = PodConstraints {
        preferred: vec![(100, SelectorTerm { requirements: sel("pool", Operator::In, &["a"]) })],
        ..pod("web", vec![], vec![])
    };
    let jobs = [
        cpu_pod("db", 0, 1000, db),
        cpu_pod("web-0", 1, 100, web.clone()),
        cpu_pod("web-1", 2, 100, web.clone()),
        cpu_pod("web-2", 1001, 100, web),
    ];
    let got = kube_starts("kube[score=least-allocated]", &cluster, &jobs);
    assert_eq!(got, [start("db", 0, 0), start("web-0", 1, 1), start("web-1", 1, 2), start("web-2", 0, 1001)]);
}

/// Issue 16's PodTopologySpread scenario, run through the engine.
#[test]
fn pool_a_pods_spread_over_the_zones_pool_a_has() {
    // z1: node 0 (16 cores), z2: node 1 (8 cores), both pool a; z3: node 2, pool b. Five
    // web pods (pool a, zone spread maxSkew 1), one a second from 0, each running 1000 s.
    // z3 is no eligible domain (Honor), so the minimum is over z1 and z2:
    //   web-0: 0/0, both pass; least-allocated prefers node 0 (15/16 free vs 7/8);
    //   web-1: z1 1, z2 0: node 0 would make 2 − 0 = 2, node 1;
    //   web-2: 1/1, both pass, node 0 (14/16 vs 6/8); web-3: 2/1, node 1; web-4: node 0.
    // Counting z3 (0) would have kept web-2 and later waiting until pods ended at 1000.
    let cluster = Cluster {
        pools: vec![
            pool(1, 16, Some("z1"), None, &[("pool", "a")]),
            pool(1, 8, Some("z2"), None, &[("pool", "a")]),
            pool(1, 8, Some("z3"), None, &[("pool", "b")]),
        ],
    };
    let jobs: Vec<sim_core::Job> =
        (0..5).map(|i| cpu_pod(&format!("web-{i}"), i, 1000, pool_a_spread(|_| {}))).collect();
    let got = kube_starts("kube[score=least-allocated]", &cluster, &jobs);
    let want =
        [start("web-0", 0, 0), start("web-1", 1, 1), start("web-2", 0, 2), start("web-3", 1, 3), start("web-4", 0, 4)];
    assert_eq!(got, want);
    // nodeAffinityPolicy Ignore counts z3 (0): web-2 finds z1 1, z2 1, skew 2 on both.
    let ignore: Vec<sim_core::Job> = (0..3)
        .map(|i| {
            cpu_pod(
                &format!("web-{i}"),
                i,
                1000,
                pool_a_spread(|s| s.node_affinity_policy = NodeInclusionPolicy::Ignore),
            )
        })
        .collect();
    let got = kube_starts("kube[score=least-allocated]", &cluster, &ignore);
    // web-2 at 1000: web-0 ended, z1 0, z2 1, z3 0, min 0: node 0 (0 + 1) passes,
    // node 1 (1 + 1 = 2) does not.
    assert_eq!(got, [start("web-0", 0, 0), start("web-1", 1, 1), start("web-2", 0, 1000)]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// With running pods whose terms select others (or not), the score cache and the
    /// incremental placement choose exactly what full passes without them choose.
    #[test]
    fn shortcuts_match_full_passes_with_running_terms(
        pools in prop::collection::vec((8u32..30, 0usize..3), 1..4),
        ops in prop::collection::vec((0usize..4, 0usize..6, 0usize..1000), 1..120),
        policy in 0usize..9,
        seed in 0u64..1000,
    ) {
        let racks = ["r1", "r2", "r3"];
        let cluster = Cluster {
            pools: pools.iter().enumerate().map(|(i, &(count, r))| {
                let mut p = pool(count, 8, None, Some(racks[r]), &[]);
                p.name = format!("p{i}");
                p
            }).collect(),
        };
        let mut l = Ledger::new(&cluster);
        let n = l.nodes().len();
        // Kinds: plain; labelled web, no terms; db repelling web per node; cache
        // preferring web per rack; odd repelling every pod but odd ones per node (NotIn);
        // web spread per rack, ScheduleAnyway.
        let kinds: Vec<Option<PodConstraints>> = vec![
            None,
            Some(pod("web", vec![], vec![])),
            Some(pod("db", vec![term(app("web"), "node", 0, true)], vec![])),
            Some(pod("cache", vec![term(app("web"), "rack", 20, false)], vec![])),
            Some(pod("odd", vec![term(sel("app", Operator::NotIn, &["odd"]), "node", 0, true)], vec![])),
            Some(pod("web", vec![], vec![spread("rack", 1, WhenUnsatisfiable::ScheduleAnyway, app("web"))])),
        ];
        // Each kind its own size (and pod type), so that packing scores tell nodes apart.
        let shapes: Vec<TaskShape> = (0..kinds.len() as u32).map(|k| cpu(500 + 700 * k)).collect();
        let all: Vec<PodType> =
            shapes.iter().map(|t| PodType { cpu_milli: t.cpu_milli as u64, gpu_milli: 0, gpus: 0, models: String::new() }).collect();
        let frag = || FragMeter::new(TypicalPods::from_pods(&all, 95.0));
        let placement = Placement::by_name(policies::placement::PLACEMENTS[policy], MemoryFit::Oblivious).unwrap();
        let mut fast = PlaceCx::new(frag()).with_cache(n, kinds.len());
        let mut slow = PlaceCx::new(frag());
        let mut rng_fast = RngStreams::new(seed).stream("prop");
        let mut rng_slow = RngStreams::new(seed).stream("prop");
        let allowed = vec![true; n];
        let mut placed: Vec<(u32, usize, TaskBinding)> = Vec::new();
        fast.sync(l.versions());
        for (i, (op, kind, pick)) in ops.into_iter().enumerate() {
            match op {
                0 | 1 => {
                    let (c, shape) = (kinds[kind].as_ref(), shapes[kind]);
                    let p = PodReq { task: shape, models: &[], type_id: Some(kind as u32), constraints: c };
                    for _ in 0..1 + pick % 3 {
                        let a = placement.place(l.nodes(), &allowed, &p, &mut fast, &mut rng_fast);
                        let b = placement.place(l.nodes(), &allowed, &p, &mut slow, &mut rng_slow);
                        prop_assert_eq!(&a, &b);
                        let Some(b) = a else { break };
                        l.take(&shape, &[], &b, true).unwrap();
                        if let Some(pod) = c.and_then(PodInfo::of) {
                            l.label_pod(b.node, i as u32, pod);
                        }
                        fast.mark_dirty(b.node.0 as usize);
                        placed.push((i as u32, kind, b));
                    }
                }
                2 if !placed.is_empty() => {
                    let (job, kind, b) = placed.swap_remove(pick % placed.len());
                    l.give(&shapes[kind], &b, true);
                    l.unlabel_pod(b.node, job);
                    fast.mark_dirty(b.node.0 as usize);
                }
                _ => fast.sync(l.versions()),
            }
        }
    }
}
