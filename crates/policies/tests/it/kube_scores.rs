//! kube-scheduler's default scoring as modelled: `NodeResourcesFit` (LeastAllocated,
//! MostAllocated) and `NodeResourcesBalancedAllocation` in upstream's integer (and, for
//! BalancedAllocation, floating-point) arithmetic, the release option (`k8s=`), and
//! `percentageOfNodesToScore` (`nodes_to_score=`), each on hand-computed nodes.

use policies::placement::frag::FragMeter;
use policies::placement::scores::{self, Release, ScorePlugin};
use policies::placement::{MemoryFit, NodesToScore, PlaceCx, Placement, PodReq, zone_interleaved};
use sim_core::constraints::{Taint, TaintEffect};
use sim_core::ledger::{Ledger, NodeUse, TaskBinding};
use sim_core::rng::RngStreams;
use sim_core::{Cluster, GpuSharing, NodeId, NodePool, NodeSpec, TaskShape};

/// `count` CPU-only nodes of `cores` cores and `memory_mib` MiB, with `taints`.
fn pool(name: &str, count: u32, cores: u32, memory_mib: u64, taints: Vec<Taint>) -> NodePool {
    let spec = NodeSpec {
        cores,
        memory_mib,
        gpus: Vec::new(),
        labels: Default::default(),
        taints,
        topology: Default::default(),
    };
    NodePool { name: name.into(), count, spec, sharing: GpuSharing::Exclusive, group: None }
}

/// A pod of `cpu_milli` milli-CPU (0: none requested) and `memory_mib` MiB (0: none).
fn pod(cpu_milli: u32, memory_mib: u64) -> TaskShape {
    TaskShape { cores: u32::from(cpu_milli > 0), cpu_milli, memory_mib, ..TaskShape::default() }
}

fn req(task: TaskShape) -> PodReq<'static> {
    PodReq { task, models: &[], type_id: None, constraints: None }
}

/// One node of 4 cores and 8000 MiB with the pods `on` placed.
fn node_with(on: &[TaskShape]) -> NodeUse {
    let mut l = Ledger::new(&Cluster { pools: vec![pool("n", 1, 4, 8_000, Vec::new())] });
    for t in on {
        l.take(t, &[], &TaskBinding { node: NodeId(0), gpus: vec![] }, true).unwrap();
    }
    l.nodes()[0].clone()
}

fn score(plugin: &dyn ScorePlugin, node: &NodeUse, task: TaskShape) -> i64 {
    plugin.score(node, &req(task), &mut FragMeter::default()).score
}

#[test]
fn least_allocated_is_integer_arithmetic() {
    // 1000 milli-CPU and 4000 MiB on the node; the pod asks 1200 and 2000: CPU 2200 of
    // 4000 → (4000 − 2200) × 100 / 4000 = 45 (in floating point (1 − 0.55) × 100 =
    // 44.999… truncates to 44); memory 6000 of 8000 → 25; mean (45 + 25) / 2 = 35.
    let n = node_with(&[pod(1000, 4000)]);
    assert_eq!(score(&scores::LeastAllocated, &n, pod(1200, 2000)), 35);
    // MostAllocated: 2200 × 100 / 4000 = 55, 6000 × 100 / 8000 = 75, mean 65.
    assert_eq!(score(&scores::MostAllocated(Release::Current), &n, pod(1200, 2000)), 65);
}

#[test]
fn pods_without_requests_count_the_non_zero_defaults() {
    // Two pods of 1000 milli-CPU and no memory on the node, and the pod asks 200 milli-CPU
    // and no memory: CPU 2200 → 45; memory counts 200 MiB for each of the three pods,
    // 600 of 8000 → 7400 × 100 / 8000 = 92 (92.5); mean (45 + 92) / 2 = 68.
    let n = node_with(&[pod(1000, 0), pod(1000, 0)]);
    assert_eq!(n.unrequested, [0, 2]);
    assert_eq!(score(&scores::LeastAllocated, &n, pod(200, 0)), 68);
    // On a node of 300 MiB the non-zero memory of two pods (400 MiB) is more than it
    // has: LeastAllocated scores memory 0 ((50 + 0) / 2 = 25 with 2000 of 4000 milli-CPU);
    // MostAllocated 0 in v1.20, capped at 100 from v1.22: (50 + 0) / 2 = 25, (50 + 100) / 2 = 75.
    let mut l = Ledger::new(&Cluster { pools: vec![pool("n", 1, 4, 300, Vec::new())] });
    l.take(&pod(1000, 0), &[], &TaskBinding { node: NodeId(0), gpus: vec![] }, true).unwrap();
    let small = &l.nodes()[0];
    assert_eq!(score(&scores::LeastAllocated, small, pod(1000, 0)), 25);
    assert_eq!(score(&scores::MostAllocated(Release::V1_20), small, pod(1000, 0)), 25);
    assert_eq!(score(&scores::MostAllocated(Release::V1_23), small, pod(1000, 0)), 75);
}

#[test]
fn balanced_allocation_by_release() {
    // 1000 milli-CPU and 4000 MiB on the node; the pod asks 1200 and 2000: after it the
    // fractions are CPU 2200/4000 = 0.55, memory 6000/8000 = 0.75; before it 0.25, 0.5.
    let n = node_with(&[pod(1000, 4000)]);
    let ba = |r: Release, t: TaskShape| score(&scores::BalancedAllocation(r), &n, t);
    // v1.20: (1 − |0.55 − 0.75|) × 100 = 80.
    assert_eq!(ba(Release::V1_20, pod(1200, 2000)), 80);
    // v1.23: the standard deviation |0.55 − 0.75| / 2 = 0.1 → 90.
    assert_eq!(ba(Release::V1_23, pod(1200, 2000)), 90);
    // Current: 90 with the pod, (1 − |0.25 − 0.5| / 2) × 100 = 87 (87.5) without:
    // 50 + (50 + 90 − 87) / 2 = 50 + 26 = 76.
    assert_eq!(ba(Release::Current, pod(1200, 2000)), 76);
    // A pod that requests no memory: v1.20 counts 200 MiB, 0.55 against 4200/8000 =
    // 0.525 → (1 − 0.025) × 100 = 97 (97.5); v1.23 its actual request, 0.55 against
    // 0.5 → (1 − 0.025) × 100 = 97; current 50 + (50 + 97 − 87) / 2 = 80.
    assert_eq!(ba(Release::V1_20, pod(1200, 0)), 97);
    assert_eq!(ba(Release::V1_23, pod(1200, 0)), 97);
    assert_eq!(ba(Release::Current, pod(1200, 0)), 80);
    // A pod that requests neither: current skips it (0 everywhere); v1.23 scores the
    // node as it is, 87.
    assert_eq!(ba(Release::Current, pod(0, 0)), 0);
    assert_eq!(ba(Release::V1_23, pod(0, 0)), 87);
    // v1.20 scores 0 once a fraction reaches 1: 4000 milli-CPU of 4000.
    assert_eq!(ba(Release::V1_20, pod(3000, 0)), 0);
}

/// Node 0: 8 cores, 8000 MiB, empty, with a PreferNoSchedule taint the pod does not
/// tolerate. Node 1: the same untainted, with 6000 milli-CPU and 1000 MiB requested.
fn tainted_and_busy() -> Ledger {
    let taint = Taint { key: "spot".into(), value: String::new(), effect: TaintEffect::PreferNoSchedule };
    let c = Cluster { pools: vec![pool("a", 1, 8, 8_000, vec![taint]), pool("b", 1, 8, 8_000, Vec::new())] };
    let mut l = Ledger::new(&c);
    l.take(&pod(6000, 1000), &[], &TaskBinding { node: NodeId(1), gpus: vec![] }, true).unwrap();
    l
}

fn placed_on(l: &Ledger, placement: &Placement, task: TaskShape) -> u32 {
    let mut rng = RngStreams::new(0).stream("t");
    let mut cx = PlaceCx::default();
    let b = placement.place(l.nodes(), &vec![true; l.nodes().len()], &req(task), &mut cx, &mut rng).unwrap();
    b.node.0
}

#[test]
fn the_release_weights_decide_between_a_tainted_empty_node_and_a_busy_one() {
    // The pod asks 1000 milli-CPU and 1000 MiB. Node 0: LeastAllocated (7000 × 100 /
    // 8000 = 87, 87) → 87; BalancedAllocation v1.20 (1 − 0) × 100 = 100, current
    // 50 + (50 + 100 − 100) / 2 = 75; TaintToleration (one untolerated taint, the most)
    // 0. Node 1: LeastAllocated (1000 × 100 / 8000 = 12, 6000 × 100 / 8000 = 75) → 43;
    // BalancedAllocation v1.20 (1 − |0.875 − 0.25|) × 100 = 37, current with and
    // without the pod 68 (|0.875 − 0.25| / 2 and |0.75 − 0.125| / 2 = 0.3125):
    // 50 + 50 / 2 = 75; TaintToleration 100.
    let l = tainted_and_busy();
    let task = pod(1000, 1000);
    // v1.20, TaintToleration weight 1: node 0 87 + 100 + 0 = 187, node 1 43 + 37 + 100 = 180.
    let v1_20 = Placement::for_release("least-allocated", MemoryFit::Oblivious, Release::V1_20).unwrap();
    assert_eq!(placed_on(&l, &v1_20, task), 0);
    // Current, weight 3: node 0 87 + 75 + 0 = 162, node 1 43 + 75 + 300 = 418.
    let current = Placement::by_name("least-allocated", MemoryFit::Oblivious).unwrap();
    assert_eq!(placed_on(&l, &current, task), 1);
    // The same weights from a spec: v1.20's with TaintToleration at 3 go to node 1
    // (87 + 100 + 0 = 187 against 43 + 37 + 300 = 380).
    let spec = Placement::from_spec("least-allocated,k8s=1.20,tainttoleration=3").unwrap();
    assert_eq!(placed_on(&l, &spec, task), 1);
    // Without BalancedAllocation, v1.20: 87 + 0 against 43 + 100: node 1.
    let fit_only = Placement::from_spec("least-allocated,k8s=1.20,balancedallocation=0").unwrap();
    assert_eq!(placed_on(&l, &fit_only, task), 1);
    assert!(Placement::from_spec("fgd,balancedallocation=1").is_err(), "fgd has no BalancedAllocation");
    assert!(Placement::from_spec("least-allocated,k8s=1.19").is_err());
}

#[test]
fn nodes_to_find_follow_the_adaptive_percentage() {
    let adaptive = NodesToScore::Adaptive;
    // Below 100 nodes every node; 200 nodes: 50 − 1 = 49 % = 98, at least 100; 1250:
    // 50 − 10 = 40 % = 500; 5000: 10 % = 500; 10,000: 50 − 80 < 5, so 5 % = 500.
    let got: Vec<usize> = [99, 200, 1250, 5000, 10_000].iter().map(|&n| adaptive.to_find(n)).collect();
    assert_eq!(got, vec![99, 100, 500, 500, 500]);
    assert_eq!(NodesToScore::All.to_find(1250), 1250);
    assert_eq!(NodesToScore::Percent(60).to_find(1000), 600);
    assert_eq!(NodesToScore::Percent(1).to_find(1000), 100);
}

/// 200 nodes of 8 cores and 8000 MiB, each with 4000 milli-CPU and 4000 MiB requested,
/// but node 42 (2000 and 2000) and node 150 (empty).
fn two_hundred() -> Ledger {
    let mut l = Ledger::new(&Cluster { pools: vec![pool("n", 200, 8, 8_000, Vec::new())] });
    for i in 0..200u32 {
        let load = match i {
            42 => 2000,
            150 => continue,
            _ => 4000,
        };
        l.take(&pod(load, load as u64), &[], &TaskBinding { node: NodeId(i), gpus: vec![] }, true).unwrap();
    }
    l
}

#[test]
fn nodes_to_score_samples_from_a_rotating_start() {
    // A pod of 1000 milli-CPU and 1000 MiB. LeastAllocated: a 4000-node (5000 after)
    // 3000 × 100 / 8000 = 37, node 42 (3000 after) 62, node 150 87; BalancedAllocation
    // (current) 75 on each (every fraction pair is even): totals 112, 137, 162.
    let mut l = two_hundred();
    let task = pod(1000, 1000);
    let pl = Placement::by_name("least-allocated", MemoryFit::Oblivious).unwrap();
    let sampled = Placement::by_name("least-allocated", MemoryFit::Oblivious)
        .unwrap()
        .with_nodes_to_score(NodesToScore::Adaptive);
    let all = vec![true; 200];
    let mut rng = RngStreams::new(0).stream("t");
    // Every node: node 150.
    let mut cx = PlaceCx::default();
    assert_eq!(pl.place(l.nodes(), &all, &req(task), &mut cx, &mut rng).unwrap().node.0, 150);
    assert_eq!(cx.next_start(), 0);
    // Adaptive on 200 nodes: the first 100 feasible nodes, 0–99, from start 0: node 42;
    // the next pod starts at 100 and sees 100–199: node 150; the next at 0 again: node 42
    // (now 3000 requested: 4000 after, 50 + 75 = 125 against 112).
    let mut cx = PlaceCx::default();
    let mut got = Vec::new();
    for _ in 0..3 {
        let b = sampled.place(l.nodes(), &all, &req(task), &mut cx, &mut rng).unwrap();
        l.take(&task, &[], &b, true).unwrap();
        got.push((b.node.0, cx.next_start()));
    }
    assert_eq!(got, vec![(42, 100), (150, 0), (42, 100)]);
    // The same with the score cache and the pod's type: answered from the type's index of
    // feasible nodes, kept up to date with the node each placement changed.
    let mut l = two_hundred();
    let mut cx = PlaceCx::default().with_cache(200, 1);
    let typed = PodReq { type_id: Some(0), ..req(task) };
    let mut got = Vec::new();
    for _ in 0..3 {
        cx.sync(l.versions());
        let b = sampled.place(l.nodes(), &all, &typed, &mut cx, &mut rng).unwrap();
        l.take(&task, &[], &b, true).unwrap();
        got.push((b.node.0, cx.next_start()));
    }
    assert_eq!(got, vec![(42, 100), (150, 0), (42, 100)]);
    // Nodes not allowed (down) are looked at and counted: with 0–9 down, a scan from 0
    // looks at 0–109 before it has 100 feasible nodes, so the next starts at 110.
    let mut down = all.clone();
    down[..10].fill(false);
    cx.set_next_start(0);
    sampled.place(l.nodes(), &down, &req(task), &mut cx, &mut rng).unwrap();
    assert_eq!(cx.next_start(), 110);
}

#[test]
fn the_scan_order_takes_the_zones_in_turn() {
    // Zone a: nodes 0–2, zone b: nodes 3–4 (kube-scheduler's node tree lists a0 b0 a1 b1 a2).
    let mut a = pool("a", 3, 1, 0, Vec::new());
    a.spec.topology.zone = Some("a".into());
    let mut b = pool("b", 2, 1, 0, Vec::new());
    b.spec.topology.zone = Some("b".into());
    let l = Ledger::new(&Cluster { pools: vec![a, b] });
    assert_eq!(zone_interleaved(l.nodes()), vec![0, 3, 1, 4, 2]);
}

#[test]
fn kube_reads_the_release_and_nodes_to_score() {
    let spec = |s: &str| policies::build(s).map(|p| p.spec());
    let tail = |k8s: &str, n: &str| {
        format!(
            "kube[score=least-allocated,memory=oblivious,order=priority,queue=skip,gang=atomic,topology=none,\
             k8s={k8s},nodes_to_score={n},preemption=on]"
        )
    };
    assert_eq!(spec("kube[k8s=1.20]").unwrap(), tail("1.20", "adaptive"));
    assert_eq!(spec("kube[nodes_to_score=30]").unwrap(), tail("current", "30"));
    // 0 is upstream's adaptive default and 100 every node.
    assert_eq!(spec("kube[nodes_to_score=0]").unwrap(), tail("current", "adaptive"));
    assert_eq!(spec("kube[nodes_to_score=100,k8s=1.23]").unwrap(), tail("1.23", "all"));
    assert!(spec("kube[nodes_to_score=101]").is_err());
    assert!(spec("kube[nodes_to_score=most]").is_err());
    assert!(spec("kube[k8s=1.22]").is_err());
    // Composed policies take the release from the placement and score every node.
    assert!(policies::compose("kube[k8s=1.20]", Some("fgd"), None, None, 0).is_err());
    assert!(policies::compose("kube[nodes_to_score=all]", Some("fgd"), None, None, 0).is_err());
    let p = policies::compose("easy", Some("least-allocated,k8s=1.20"), None, None, 0).unwrap();
    assert_eq!(p.spec(), "easy+placement[least-allocated,k8s=1.20]+gang[atomic]+topology[none]");
}
