//! The placement framework: fragmentation and every score formula on hand-computed
//! examples, and its invariants on random pods.

use policies::placement::frag::{FragMeter, PodType, TypicalPods};
use policies::placement::scores::{self, ScorePlugin};
use policies::placement::{MemoryFit, PlaceCx, Placement, PodReq};
use proptest::prelude::*;
use sim_core::ledger::{Ledger, NodeUse, TaskBinding};
use sim_core::rng::RngStreams;
use sim_core::{Cluster, GpuSharing, GpuSpec, NodeId, NodePool, NodeSpec, TaskShape};

fn pod_type(cpu: u64, milli: u32, gpus: u32) -> PodType {
    PodType { cpu_milli: cpu, gpu_milli: milli, gpus, models: String::new() }
}

/// A: 1 core + half a GPU (p = 0.5); B: a 2-core CPU pod (0.25); C: 8 cores + a whole
/// GPU (0.25).
fn typical() -> TypicalPods {
    TypicalPods {
        types: vec![(pod_type(1000, 500, 1), 0.5), (pod_type(2000, 0, 0), 0.25), (pod_type(8000, 1000, 1), 0.25)],
    }
}

fn node(cores: u32, gpus: usize, sharing: GpuSharing) -> Cluster {
    let spec = NodeSpec {
        cores,
        memory_mib: 16_000,
        gpus: vec![GpuSpec { model: "T4".into(), memory_mib: 15_000, power: None }; gpus],
        labels: Default::default(),
        taints: Vec::new(),
        topology: Default::default(),
    };
    Cluster { pools: vec![NodePool { name: "n".into(), count: 1, spec, sharing, group: None }] }
}

fn shape(cpu_milli: u32, gpus: u32, milli: u32) -> TaskShape {
    TaskShape { cores: cpu_milli.div_ceil(1000).max(1), cpu_milli, gpus, gpu_milli: milli, ..TaskShape::default() }
}

/// A node with 8 cores (4 requested) and two GPUs with 1000 and 300 milli left.
fn busy_node() -> NodeUse {
    let mut l = Ledger::new(&node(8, 2, GpuSharing::Shared));
    l.take(&shape(4000, 1, 700), &[], &TaskBinding { node: NodeId(0), gpus: vec![1] }, true).unwrap();
    l.nodes()[0].clone()
}

fn req(task: TaskShape) -> PodReq<'static> {
    PodReq { task, models: &[], type_id: None, constraints: None }
}

#[test]
fn fragmentation_by_hand() {
    let mut m = FragMeter::new(typical());
    // idle 1300. A fits (GPU 0) with CPU: Q3, its fragment is the 300 of GPU 1 → 0.5 × 300.
    // B is a CPU pod: all 1300 idle is fragment for it → 0.25 × 1300.
    // C has a GPU but lacks CPU (4000 < 8000): Q4, all 1300 → 0.25 × 1300.
    assert_eq!(m.node_frag("T4", 4000, &[1000, 300]), 150.0 + 325.0 + 325.0);
    // A fully free node with enough CPU: only B counts (0.25 × 2000).
    assert_eq!(m.node_frag("T4", 8000, &[1000, 1000]), 500.0);
    // No GPU left, no fragment.
    assert_eq!(m.node_frag("T4", 8000, &[0, 0]), 0.0);
    // A model A cannot use: NoAccess, all idle counts.
    let mut only_v100 = typical();
    only_v100.types[0].0.models = "V100M32".into();
    let mut m = FragMeter::new(only_v100);
    assert_eq!(m.node_frag("T4", 4000, &[1000, 300]), 0.5 * 1300.0 + 325.0 + 325.0);
}

#[test]
fn typical_pods_take_the_most_popular_to_the_threshold() {
    let mut pods = vec![pod_type(1000, 500, 1); 50];
    pods.extend(vec![pod_type(2000, 0, 0); 30]);
    pods.extend(vec![pod_type(8000, 1000, 1); 15]);
    pods.extend(vec![pod_type(4000, 1000, 2); 5]);
    let t = TypicalPods::from_pods(&pods, 95.0);
    assert_eq!(t.types.len(), 3, "50 + 30 + 15 = 95 % of the pods");
    assert!((t.types[0].1 - 50.0 / 95.0).abs() < 1e-12);
    assert!((t.types.iter().map(|x| x.1).sum::<f64>() - 1.0).abs() < 1e-12);
}

#[test]
fn fgd_score_by_hand() {
    let mut m = FragMeter::new(typical());
    let n = busy_node();
    // A on GPU 0 (GPU 1 has only 300): after, left [500, 300], 3000 CPU left:
    // A still fits: fragment 300 → 150; B: 800 → 200; C: no whole GPU → 800 → 200.
    // F 800 → 550: Δ = 250, ⌊sigmoid(0.25) × 100⌋ = 56, on GPU 0.
    let s = scores::Fgd.score(&n, &req(shape(1000, 1, 500)), &mut m);
    assert_eq!((s.score, s.gpu), (56, Some(0)));
    // A 200-milli pod fits both GPUs; on GPU 1 (300 → 100): A fits GPU 0, fragment 100 →
    // 50; B 1100 → 275; C lacks CPU (3000) → 275: F 600, Δ 200 → 54. On GPU 0
    // (1000 → 800): A: fragment 300 → 150; B 1100 → 275; C lacks CPU → 275: F 700,
    // Δ 100 → 52. FGD binds GPU 1.
    let s = scores::Fgd.score(&n, &req(shape(1000, 1, 200)), &mut m);
    assert_eq!((s.score, s.gpu), (54, Some(1)));
}

#[test]
fn fgd_paper_baseline_scores_by_hand() {
    let mut m = FragMeter::default();
    let n = busy_node();
    let a = req(shape(1000, 1, 500));
    // BestFit: ½ (3000/128000) + ½ (800/8000) = 0.06171875 → ⌊(1 − s) × 100⌋ = 93.
    assert_eq!(scores::BestFit.score(&n, &a, &mut m).score, 93);
    // DotProd: n = (4000/128000, 1300/8000), p = (1000/128000, 500/8000),
    // dot = 0.010400390625 → ⌊100 (1 − dot/2)⌋ = 99.
    assert_eq!(scores::DotProduct.score(&n, &a, &mut m).score, 99);
    // GpuPacking: least-left first, GPU 1 (300) is too small, GPU 0 is fully free on a
    // used node: 50 − 1 = 49.
    assert_eq!(scores::GpuPacking.score(&n, &a, &mut m).score, 49);
    // ... a 200-milli pod fits the used GPU 1 (30 % free): 100 − 30/10 = 97.
    assert_eq!(scores::GpuPacking.score(&n, &req(shape(1000, 1, 200)), &mut m).score, 97);
    // ... an idle node of 2 GPUs: 33 − 2 = 31; CPU pods score 0.
    let idle = Ledger::new(&node(8, 2, GpuSharing::Shared)).nodes()[0].clone();
    assert_eq!(scores::GpuPacking.score(&idle, &a, &mut m).score, 31);
    assert_eq!(scores::GpuPacking.score(&idle, &req(shape(1000, 0, 0)), &mut m).score, 0);
    // GpuClustering: the node holds only shared pods: 25 × (8000 − 1300)/8000 + 75 = 95;
    // an idle node: 25 × 6000/8000 + 25 = 43; a whole-GPU pod on the busy node: 20 + 0.
    assert_eq!(scores::GpuClustering.score(&n, &a, &mut m).score, 95);
    assert_eq!(scores::GpuClustering.score(&idle, &a, &mut m).score, 43);
    assert_eq!(scores::GpuClustering.score(&n, &req(shape(1000, 1, 1000)), &mut m).score, 20);
}

#[test]
fn shared_pods_go_where_the_gpu_choice_says() {
    let l = {
        let mut l = Ledger::new(&node(8, 3, GpuSharing::Shared));
        l.take(&shape(1000, 1, 600), &[], &TaskBinding { node: NodeId(0), gpus: vec![1] }, true).unwrap();
        l.take(&shape(1000, 1, 300), &[], &TaskBinding { node: NodeId(0), gpus: vec![2] }, true).unwrap();
        l
    };
    let mut cx = PlaceCx::default();
    let mut rng = RngStreams::new(1).stream("t");
    let p = req(shape(1000, 1, 300));
    // Best fit: the GPU with the least milli-GPU left that fits: GPU 1 (400 left).
    let b = Placement::by_name("bestfit", MemoryFit::Oblivious).unwrap().place(
        l.nodes(),
        &vec![true; l.nodes().len()],
        &p,
        &mut cx,
        &mut rng,
    );
    assert_eq!(b.unwrap().gpus, vec![1]);
    // Memory-aware binpack: the least declared memory left that fits; GPU 1 holds
    // 600/1000 × 15000 = 9000 declared (6000 left), GPU 2 4500 (10500 left): GPU 1,
    // unless the pod declares more than 6000.
    let aware = Placement::by_name("bestfit", MemoryFit::Aware).unwrap();
    let b = aware.place(l.nodes(), &vec![true; l.nodes().len()], &p, &mut cx, &mut rng).unwrap();
    assert_eq!(b.gpus, vec![1]);
    let big = req(TaskShape { gpu_memory_mib: 7_000, ..shape(1000, 1, 300) });
    let b = aware.place(l.nodes(), &vec![true; l.nodes().len()], &big, &mut cx, &mut rng).unwrap();
    assert_eq!(b.gpus, vec![2]);
    // Nothing fits 11000 MiB but the idle GPU 0.
    let huge = req(TaskShape { gpu_memory_mib: 11_000, ..shape(1000, 1, 300) });
    assert_eq!(aware.place(l.nodes(), &vec![true; l.nodes().len()], &huge, &mut cx, &mut rng).unwrap().gpus, vec![0]);
    // A node that is not up is never chosen.
    assert!(aware.place(l.nodes(), &vec![false; l.nodes().len()], &p, &mut cx, &mut rng).is_none());
}

fn cluster(pools: &[(u32, u32, u64)]) -> Cluster {
    Cluster {
        pools: pools
            .iter()
            .enumerate()
            .map(|(i, &(count, gpus, mem))| NodePool {
                name: format!("p{i}"),
                count,
                spec: NodeSpec {
                    cores: 16,
                    memory_mib: 64_000,
                    gpus: vec![GpuSpec { model: format!("M{}", i % 2), memory_mib: mem, power: None }; gpus as usize],
                    labels: Default::default(),
                    taints: Vec::new(),
                    topology: Default::default(),
                },
                sharing: GpuSharing::Shared,
                group: None,
            })
            .collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// No GPU ever gives more than 1000 milli, and under a memory-aware fit no GPU is
    /// promised more declared memory than it has, whatever the pods and the placement.
    #[test]
    fn placements_never_overcommit(
        pools in prop::collection::vec((1u32..4, 0u32..9, 8_000u64..40_000), 1..4),
        pods in prop::collection::vec((0u32..8_000, 0u32..3, 1u32..=1000, 0u64..20_000, 0usize..2), 1..80),
        policy in 0usize..9,
        seed in 0u64..1000,
    ) {
        let c = cluster(&pools);
        let mut l = Ledger::new(&c);
        let name = policies::placement::PLACEMENTS[policy];
        let models = ["M0".to_string()];
        let all: Vec<PodType> = pods.iter().map(|p| pod_type(p.0 as u64, p.2, p.1)).collect();
        let mut cx = PlaceCx::new(FragMeter::new(TypicalPods::from_pods(&all, 95.0)));
        let mut rng = RngStreams::new(seed).stream("prop");
        for memory in [MemoryFit::Aware, MemoryFit::Oblivious] {
            let placement = Placement::by_name(name, memory).unwrap();
            for &(cpu, gpus, milli, declared, constrained) in &pods {
                let milli = if gpus > 1 { 1000 } else { milli };
                let task = TaskShape { gpu_memory_mib: declared, ..shape(cpu.max(1), gpus, milli) };
                let m: &[String] = if constrained == 1 { &models } else { &[] };
                let p = PodReq { task, models: m, type_id: None, constraints: None };
                if let Some(b) = placement.place(l.nodes(), &vec![true; l.nodes().len()], &p, &mut cx, &mut rng) {
                    prop_assert_eq!(b.gpus.len(), gpus as usize);
                    l.take(&task, m, &b, true).unwrap();
                }
                for n in l.nodes() {
                    prop_assert!(n.cpu_milli_left <= n.cpu_milli);
                    for g in n.gpus.iter() {
                        prop_assert!(g.milli_left <= 1000);
                        if memory == MemoryFit::Aware {
                            prop_assert!(g.declared_mib <= g.memory_mib, "{} > {}", g.declared_mib, g.memory_mib);
                        }
                    }
                }
            }
            l = Ledger::new(&c);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The score cache and the incremental placement of a pod type after a few nodes
    /// changed (`PlaceCx` with a cache) choose exactly what a full pass without them
    /// chooses, through placements, releases and new passes, under every Kubernetes
    /// release's scores, and when sampling (`nodes_to_score`, on 100 more nodes) from the
    /// same rotating start.
    #[test]
    fn cached_and_incremental_placement_match_a_full_pass(
        pools in prop::collection::vec((1u32..40, 0u32..9, 8_000u64..40_000), 1..4),
        ops in prop::collection::vec((0usize..4, 0usize..5, 0usize..1000), 1..120),
        policy in 0usize..9,
        known in 0usize..6,
        seed in 0u64..1000,
        release in 0usize..3,
        sample in 0usize..3,
    ) {
        use policies::placement::{NodesToScore, Release};
        use sim_core::constraints::{Operator, PodConstraints, Requirement, SelectorTerm};
        let mut pools = pools;
        if sample > 0 {
            pools.push((100, 1, 16_000));
        }
        let mut c = cluster(&pools);
        for (i, p) in c.pools.iter_mut().enumerate() {
            p.spec.labels.insert("pool".into(), format!("p{i}"));
        }
        let mut l = Ledger::new(&c);
        let n = l.nodes().len();
        let shapes = [shape(2000, 1, 1000), shape(1000, 1, 300), shape(4000, 2, 1000), shape(500, 0, 0)];
        // Two pods of the first shape must keep off pool p0.
        let avoid = |v: &str| PodConstraints {
            required: vec![SelectorTerm {
                requirements: vec![Requirement { key: "pool".into(), operator: Operator::NotIn, values: vec![v.into()] }],
            }],
            ..PodConstraints::default()
        };
        let constrained = [Box::new(avoid("p0")), Box::new(avoid("p1"))];
        let all: Vec<PodType> = shapes.iter().map(|t| pod_type(t.cpu_milli as u64, t.gpu_milli, t.gpus)).collect();
        let frag = || FragMeter::new(TypicalPods::from_pods(&all, 95.0));
        let release = [Release::Current, Release::V1_23, Release::V1_20][release];
        let nodes_to_score = [NodesToScore::All, NodesToScore::Adaptive, NodesToScore::Percent(20)][sample];
        let placement = Placement::for_release(policies::placement::PLACEMENTS[policy], MemoryFit::Oblivious, release)
            .unwrap()
            .with_nodes_to_score(nodes_to_score);
        let mut fast = PlaceCx::new(frag()).with_cache(n, 2).with_known_nodes(if known == 5 { 256 } else { known });
        let mut slow = PlaceCx::new(frag());
        let mut rng_fast = RngStreams::new(seed).stream("prop");
        let mut rng_slow = RngStreams::new(seed).stream("prop");
        let mut allowed = vec![true; n];
        let mut placed: Vec<(usize, TaskBinding)> = Vec::new();
        fast.sync(l.versions());
        for (op, kind, pick) in ops {
            match op {
                // Place a pod (twice as often as the rest).
                0 | 1 => {
                    let (shape, cons) = match kind {
                        4 => (0, Some(&*constrained[pick % 2])),
                        k => (k, None),
                    };
                    let p = PodReq { task: shapes[shape], models: &[], type_id: Some(shape as u32), constraints: cons };
                    // A gang's tasks: the same pod several times in a row.
                    for _ in 0..1 + pick % 3 {
                        let a = placement.place(l.nodes(), &allowed, &p, &mut fast, &mut rng_fast);
                        let b = placement.place(l.nodes(), &allowed, &p, &mut slow, &mut rng_slow);
                        prop_assert_eq!(&a, &b);
                        prop_assert_eq!(fast.next_start(), slow.next_start());
                        let Some(b) = a else { break };
                        l.take(&shapes[shape], &[], &b, true).unwrap();
                        fast.mark_dirty(b.node.0 as usize);
                        placed.push((shape, b));
                    }
                }
                // A pod ends.
                2 if !placed.is_empty() => {
                    let (k, b) = placed.swap_remove(pick % placed.len());
                    l.give(&shapes[k], &b, true);
                    fast.mark_dirty(b.node.0 as usize);
                }
                // A new pass; now and then a node goes down or comes back.
                _ => {
                    if pick % 4 == 0 {
                        allowed[pick % n] ^= true;
                    }
                    fast.sync(l.versions());
                }
            }
        }
    }
}

fn gpu_pod(id: &str, submit: u64, run: u64, gpus: u32) -> sim_core::Job {
    let mut j = sim_core::Job::rigid(
        id,
        sim_core::SimTime::from_secs(submit),
        1,
        sim_core::SimDuration::from_secs(run),
        sim_core::SimDuration::from_secs(run),
    );
    j.task = shape(1000, gpus, if gpus == 0 { 0 } else { 1000 });
    j
}

fn kube_starts(spec: &str, cluster: &Cluster, jobs: &[sim_core::Job]) -> Vec<Option<u64>> {
    let mut p = policies::build(spec).unwrap();
    let r = sim_core::simulate(cluster, jobs, p.as_mut(), &sim_core::SimConfig::default(), None).unwrap();
    r.records.iter().map(|x| x.start.map(|s| s.0 / 1_000_000)).collect()
}

#[test]
fn kube_queue_modes_by_hand() {
    // One node with one GPU (8 cores). A holds the GPU 0–100; B wants it (submitted at 1);
    // C is a 10 s CPU pod (at 2); D a 200 s CPU pod (at 3).
    let jobs = [gpu_pod("A", 0, 100, 1), gpu_pod("B", 1, 50, 1), gpu_pod("C", 2, 10, 0), gpu_pod("D", 3, 200, 0)];
    let one = node(8, 1, GpuSharing::Exclusive);
    // Kubernetes: B is skipped, C and D start at once.
    assert_eq!(kube_starts("kube", &one, &jobs), vec![Some(0), Some(100), Some(2), Some(3)]);
    // FCFS: nothing passes B.
    assert_eq!(kube_starts("kube[queue=fcfs]", &one, &jobs), vec![Some(0), Some(100), Some(100), Some(100)]);
    // EASY: B is reserved the node at 100; C ends by then and backfills; D would hold
    // the reserved node past 100, so it waits for B to start.
    assert_eq!(kube_starts("kube[queue=easy]", &one, &jobs), vec![Some(0), Some(100), Some(2), Some(100)]);
    // With a second (CPU-only) node, D backfills there at once.
    let mut two = node(8, 1, GpuSharing::Exclusive);
    let mut cpu_only = two.pools[0].clone();
    cpu_only.spec.gpus.clear();
    two.pools.push(cpu_only);
    assert_eq!(kube_starts("kube[queue=easy]", &two, &jobs), vec![Some(0), Some(100), Some(2), Some(3)]);
}

#[test]
fn kube_reservations_keep_later_pods_from_delaying_earlier_ones() {
    // One node with two GPUs. A holds GPU 0 for 0–100; B wants both GPUs (at 1); C one GPU
    // for 50 s (at 2); D one GPU for 200 s (at 3).
    let jobs = [gpu_pod("A", 0, 100, 1), gpu_pod("B", 1, 50, 2), gpu_pod("C", 2, 50, 1), gpu_pod("D", 3, 200, 1)];
    let c = node(8, 2, GpuSharing::Exclusive);
    // Kubernetes: D takes GPU 1 when C ends at 52, and B waits for D until 252.
    assert_eq!(kube_starts("kube", &c, &jobs), vec![Some(0), Some(252), Some(2), Some(52)]);
    // EASY and conservative: B is reserved at 100; C ends by then and backfills; D would
    // delay B, so it starts when B ends.
    for q in ["easy", "conservative"] {
        let spec = format!("kube[queue={q}]");
        assert_eq!(kube_starts(&spec, &c, &jobs), vec![Some(0), Some(100), Some(2), Some(150)], "{q}");
    }
    // Conservative reasons per resource over time: a CPU pod that outlives B's
    // reservation still starts at once when the node has the CPU for both.
    let jobs = [gpu_pod("A", 0, 100, 1), gpu_pod("B", 1, 50, 1), gpu_pod("C", 2, 10, 0), gpu_pod("D", 3, 200, 0)];
    let one = node(8, 1, GpuSharing::Exclusive);
    assert_eq!(kube_starts("kube[queue=conservative]", &one, &jobs), vec![Some(0), Some(100), Some(2), Some(3)]);
}

#[test]
fn kube_reservations_treat_overrunning_jobs_as_still_running() {
    // Job 1 asked for 50 s and runs 100 s; at 60 it is overdue but holds 3 of 4
    // processors, so job 2 (2 processors) cannot start before it really ends.
    let jobs = [crate::job("1", 0, 3, 100, 50), crate::job("2", 60, 2, 10, 10)];
    for q in ["skip", "fcfs", "easy", "conservative"] {
        let spec = format!("kube[queue={q}]");
        assert_eq!(kube_starts(&spec, &Cluster::processor_pool(4), &jobs), vec![Some(0), Some(100)], "{q}");
    }
}

#[test]
fn fgd_protocol_ends_on_a_workload_without_gpu_pods() {
    use policies::fgd_protocol::{Pod, run};
    let pods: Vec<Pod> =
        (0..3).map(|i| Pod { name: format!("p{i}"), task: shape(1000, 0, 0), models: vec![] }).collect();
    let r = run(&node(8, 2, GpuSharing::Shared), &pods, "fgd", 42, 1.3).unwrap();
    assert_eq!((r.placed, r.failed, r.samples.len()), (3, 0, 3));
}

/// The nodes a one-core pod with `c` goes to under `placement`, over 30 seeds (ties are
/// drawn): with `random`, every node that passes the filters.
fn chosen_by(l: &Ledger, c: Option<&sim_core::constraints::PodConstraints>, placement: &str) -> Vec<u32> {
    let mut v: Vec<u32> = (0..30)
        .filter_map(|seed| {
            let p = PodReq { task: shape(1000, 0, 0), models: &[], type_id: None, constraints: c };
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

mod affinity {
    use super::*;
    use sim_core::constraints::{Operator, PodConstraints, Requirement, SelectorTerm, Taint, TaintEffect, Toleration};
    use std::collections::BTreeMap;

    /// Two identical nodes; node 1 carries `labels` and `taints`.
    fn pair(labels: &[(&str, &str)], taints: Vec<Taint>) -> Ledger {
        let plain = node(8, 1, GpuSharing::Exclusive).pools.remove(0);
        let mut marked = plain.clone();
        marked.spec.labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>();
        marked.spec.taints = taints;
        Ledger::new(&Cluster { pools: vec![plain, marked] })
    }

    /// The nodes a CPU pod with `c` goes to under least-allocated, over 30 seeds.
    fn chosen(l: &Ledger, c: Option<&PodConstraints>) -> Vec<u32> {
        super::chosen_by(l, c, "least-allocated")
    }

    fn term(key: &str, operator: Operator, values: &[&str]) -> SelectorTerm {
        SelectorTerm {
            requirements: vec![Requirement {
                key: key.into(),
                operator,
                values: values.iter().map(|s| s.to_string()).collect(),
            }],
        }
    }

    fn required(t: SelectorTerm) -> PodConstraints {
        PodConstraints { required: vec![t], ..Default::default() }
    }

    #[test]
    fn unconstrained_pods_use_both_nodes() {
        assert_eq!(chosen(&pair(&[("gpu", "A100")], vec![]), None), vec![0, 1]);
    }

    #[test]
    fn required_node_affinity_with_every_operator() {
        let l = pair(&[("gpu", "A100"), ("mem", "80")], vec![]);
        let cases = [
            (term("gpu", Operator::In, &["A100"]), vec![1]),
            (term("gpu", Operator::NotIn, &["A100"]), vec![0]),
            (term("gpu", Operator::Exists, &[]), vec![1]),
            (term("gpu", Operator::DoesNotExist, &[]), vec![0]),
            (term("mem", Operator::Gt, &["40"]), vec![1]),
            (term("mem", Operator::Lt, &["40"]), vec![]),
        ];
        for (t, want) in cases {
            let c = required(t.clone());
            assert_eq!(chosen(&l, Some(&c)), want, "{t:?}");
        }
        let sel =
            PodConstraints { node_selector: [("gpu".to_string(), "A100".to_string())].into(), ..Default::default() };
        assert_eq!(chosen(&l, Some(&sel)), vec![1], "nodeSelector");
    }

    #[test]
    fn preferred_node_affinity_wins_ties() {
        let l = pair(&[("zone", "a")], vec![]);
        let c = PodConstraints { preferred: vec![(50, term("zone", Operator::In, &["a"]))], ..Default::default() };
        assert_eq!(chosen(&l, Some(&c)), vec![1]);
    }

    #[test]
    fn taint_effects() {
        let t = |effect| Taint { key: "dedicated".into(), value: "train".into(), effect };
        let tolerate = PodConstraints {
            tolerations: vec![Toleration {
                key: Some("dedicated".into()),
                exists: true,
                value: String::new(),
                effect: None,
                toleration_seconds: None,
            }],
            ..Default::default()
        };
        for effect in [TaintEffect::NoSchedule, TaintEffect::NoExecute] {
            let l = pair(&[], vec![t(effect)]);
            assert_eq!(chosen(&l, None), vec![0], "{effect:?} keeps untolerating pods off");
            assert_eq!(chosen(&l, Some(&tolerate)), vec![0, 1], "{effect:?} tolerated");
        }
        let l = pair(&[], vec![t(TaintEffect::PreferNoSchedule)]);
        assert_eq!(chosen(&l, None), vec![0], "PreferNoSchedule is avoided when possible");
        assert_eq!(chosen(&l, Some(&tolerate)), vec![0, 1]);
        // ... but it is no filter: with node 0 full, the pod goes to node 1.
        let mut full = l.clone();
        full.take(&shape(8000, 0, 0), &[], &TaskBinding { node: NodeId(0), gpus: vec![] }, true).unwrap();
        assert_eq!(chosen(&full, None), vec![1]);
    }
}

/// Two nodes × 4 GPUs (exclusive), 8 cores each.
fn two_quads() -> Cluster {
    let mut c = node(8, 4, GpuSharing::Exclusive);
    c.pools[0].count = 2;
    c
}

#[test]
fn kueue_evicts_a_gang_not_ready_in_time_and_backs_off() {
    // W takes 2 GPUs of node 0 until 1000. G, a gang of 2 tasks × 4 GPUs, is admitted at
    // 1 against a 200 % quota, places one task on node 1 and waits for the other: evicted
    // at 301 (5 min, the v1beta1 configuration's timeout), back-off 60 s, admitted again
    // at 361, evicted at 661, back-off 120 s, admitted at 781; when W ends at 1000 its
    // second task fits and it starts.
    let mut g = gpu_pod("G", 1, 50, 4);
    g.tasks = 2;
    g.task.cpu_milli = 1000;
    let jobs = [gpu_pod("W", 0, 1000, 2), g.clone()];
    let c = two_quads();
    let mut p = policies::build("kube[gang=kueue,quota=200,kueue_api=v1beta1]").unwrap();
    let r = sim_core::simulate(&c, &jobs, p.as_mut(), &sim_core::SimConfig::default(), None).unwrap();
    assert_eq!(r.records[1].start.map(|s| s.0 / 1_000_000), Some(1000));
    // Held 4 GPUs over [1, 301], [361, 661] and [781, 1000].
    assert_eq!(r.records[1].gang_held_gpu_milli_us, 4 * 1000 * (300 + 300 + 219) * 1_000_000);
    assert!(r.deadlock.is_none());
    // With the quota at the cluster's 8 GPUs G is admitted only when W has ended.
    let r =
        sim_core::simulate(&c, &jobs, policies::build("kube[gang=kueue]").unwrap().as_mut(), &Default::default(), None)
            .unwrap();
    assert_eq!(r.records[1].start.map(|s| s.0 / 1_000_000), Some(1000));
    assert_eq!(r.records[1].gang_held_gpu_milli_us, 0);
    // A gang the whole cluster cannot hold (3 tasks × 4 GPUs on 8 GPUs) is rejected at
    // submit: it neither holds GPUs nor is called a deadlock.
    let mut big = g.clone();
    big.tasks = 3;
    let r = sim_core::simulate(
        &c,
        &[gpu_pod("W", 0, 1000, 2), big],
        policies::build("kube[gang=none]").unwrap().as_mut(),
        &Default::default(),
        None,
    )
    .unwrap();
    let rejected = sim_core::Outcome::Rejected(sim_core::RejectReason::LargerThanCluster);
    assert_eq!((r.records[1].outcome, r.records[1].gang_held_gpu_milli_us), (rejected, 0));
    assert!(r.deadlock.is_none());
}

#[test]
fn elastic_gang_starts_short_and_runs_longer() {
    // E: 2 tasks × 4 GPUs, min 1, 100 s of work for two workers. Node 0 is half taken until
    // 1000, so only one task fits: E starts at once with one worker and runs 200 s.
    let mut e = gpu_pod("E", 1, 100, 4);
    e.tasks = 2;
    e.min_tasks = 1;
    e.task.cpu_milli = 1000;
    let jobs = [gpu_pod("W", 0, 1000, 2), e.clone()];
    for spec in ["kube", "kube[gang=none]", "kube[gang=permit-wait]", "kube[gang=kueue]"] {
        let r =
            sim_core::simulate(&two_quads(), &jobs, policies::build(spec).unwrap().as_mut(), &Default::default(), None)
                .unwrap();
        let rec = &r.records[1];
        assert_eq!(
            (rec.start.map(|s| s.0 / 1_000_000), rec.end.map(|s| s.0 / 1_000_000)),
            (Some(1), Some(201)),
            "{spec}"
        );
    }
    // Not elastic, it waits for W.
    e.min_tasks = 0;
    let r = sim_core::simulate(
        &two_quads(),
        &[gpu_pod("W", 0, 1000, 2), e],
        policies::build("kube").unwrap().as_mut(),
        &Default::default(),
        None,
    )
    .unwrap();
    assert_eq!(r.records[1].start.map(|s| s.0 / 1_000_000), Some(1000));
}

/// Outcome and start (s) of each of `jobs` under `spec` on `cluster`.
fn kube_outcomes(spec: &str, cluster: &Cluster, jobs: &[sim_core::Job]) -> Vec<(String, Option<u64>)> {
    let mut p = policies::build(spec).unwrap();
    let r = sim_core::simulate(cluster, jobs, p.as_mut(), &sim_core::SimConfig::default(), None).unwrap();
    let name = |o: sim_core::Outcome| match o {
        sim_core::Outcome::Rejected(why) => format!("rejected {}", why.as_str()),
        other => format!("{other:?}"),
    };
    r.records.iter().map(|x| (name(x.outcome), x.start.map(|s| s.0 / 1_000_000))).collect()
}

#[test]
fn jobs_no_node_could_ever_hold_are_rejected_at_submit() {
    // One node: 16 cores, 16,000 MiB, 8 whole T4s.
    let c = node(16, 8, GpuSharing::Exclusive);
    // Nine one-GPU tasks (a gang the whole cluster cannot hold: under permit-wait it used
    // to hold eight, time out, and hold them again for ever).
    let mut nine = gpu_pod("nine", 0, 100, 1);
    nine.tasks = 9;
    // One task asking 16 GPUs, one asking 32,000 MiB of host memory.
    let wide = gpu_pod("wide", 0, 100, 16);
    let mut fat = gpu_pod("fat", 0, 100, 0);
    fat.task.memory_mib = 32_000;
    // A node selector no node matches.
    let mut picky = gpu_pod("picky", 0, 100, 1);
    picky.constraints = Some(Box::new(sim_core::constraints::PodConstraints {
        node_selector: [("pool".to_string(), "a100".to_string())].into(),
        ..Default::default()
    }));
    // Eight one-GPU tasks fit exactly: 0–100; a one-GPU pod at 5 waits for them.
    let mut eight = gpu_pod("eight", 0, 100, 1);
    eight.tasks = 8;
    let after = gpu_pod("after", 5, 10, 1);
    let jobs = [nine, wide, fat, picky, eight, after];
    for spec in ["kube", "kube[gang=none]", "kube[gang=permit-wait]", "kube[gang=kueue]", "kube[queue=easy]"] {
        let got = kube_outcomes(spec, &c, &jobs);
        let want = [
            ("rejected larger_than_cluster", None),
            ("rejected no_fitting_node", None),
            ("rejected no_fitting_node", None),
            ("rejected no_matching_node", None),
            ("Completed", Some(0)),
            ("Completed", Some(100)),
        ];
        let want: Vec<(String, Option<u64>)> = want.iter().map(|(o, s)| (o.to_string(), *s)).collect();
        assert_eq!(got, want, "{spec}");
    }
    // On a sharing pool one GPU holds three 300-milli tasks: nine of them fit one node's
    // 8 GPUs, and start together.
    let shared = node(16, 8, GpuSharing::Shared);
    let mut slices = gpu_pod("slices", 0, 10, 1);
    slices.tasks = 9;
    slices.task = shape(500, 1, 300);
    assert_eq!(kube_outcomes("kube", &shared, &[slices]), vec![("Completed".to_string(), Some(0))]);
}

#[test]
fn a_zero_permit_timeout_is_the_default_and_the_run_ends() {
    // W takes 2 GPUs of node 0 until 1000; G (2 tasks × 4 GPUs) holds node 1 from 1 and
    // starts at 1000. A scheduleTimeoutSeconds of 0 means Coscheduling's default (60 s),
    // as upstream reads it; it used to release and hold again at one instant for ever.
    let mut g = gpu_pod("G", 1, 50, 4);
    g.tasks = 2;
    let jobs = [gpu_pod("W", 0, 1000, 2), g];
    let run = |spec: &str| {
        let mut p = policies::build(spec).unwrap();
        sim_core::simulate(&two_quads(), &jobs, p.as_mut(), &sim_core::SimConfig::default(), None).unwrap()
    };
    let (zero, sixty) = (run("kube[gang=permit-wait,timeout=0]"), run("kube[gang=permit-wait,timeout=60]"));
    assert_eq!(zero.records[1].start, Some(sim_core::SimTime::from_secs(1000)));
    assert_eq!(zero.records, sixty.records);
}

proptest! {
    // A fixed seed: the same 48 workloads in every run.
    #![proptest_config(ProptestConfig {
        cases: 48,
        rng_seed: proptest::test_runner::RngSeed::Fixed(16),
        ..ProptestConfig::default()
    })]
    /// No combination of queue discipline, gang mode and gang options makes a run spin: on
    /// random small GPU workloads (gangs bigger than the cluster included, priorities that
    /// preempt) every run
    /// returns, each job with one outcome, within a bounded number of events. Kueue
    /// without `blockAdmission` can admit, evict and admit again two partial gangs
    /// together, and a permit timeout can release and hold the same tasks again, for ever:
    /// those runs end when a pass would see what an earlier one saw with nothing running
    /// and nothing left to arrive (`RunResult::stall`).
    #[test]
    fn every_run_ends(
        jobs in proptest::collection::vec((0u64..50, 1u32..5, 0u32..5, 1u64..100, 0i64..3), 1..7),
        down in proptest::option::of(0u64..60),
    ) {
        // Priorities make pods of one task preempt under queue=skip (DefaultPreemption).
        let jobs: Vec<sim_core::Job> = jobs
            .iter()
            .enumerate()
            .map(|(i, &(submit, tasks, gpus, run, priority))| {
                let mut j = gpu_pod(&format!("j{i}"), submit, run, gpus);
                j.tasks = tasks;
                j.priority = priority;
                j
            })
            .collect();
        // Now and then node 1 goes down for good: gangs that need both nodes can then
        // never start, and the modes that retry on timers would retry for ever.
        let node_events = down.map(|t| (sim_core::SimTime::from_secs(t), sim_core::NodeId(1), sim_core::NodeState::Down));
        let cfg = sim_core::SimConfig { node_events: node_events.into_iter().collect(), ..Default::default() };
        // `skip,k8s=1.20`: the scheduling queue waits out back-offs on timers of its own.
        for queue in ["skip", "skip,k8s=1.20", "fcfs", "easy", "conservative"] {
            for gang in [
                "atomic",
                "none",
                "permit-wait,timeout=0",
                "permit-wait,timeout=5",
                "permit-wait,timeout=5,reject=100",
                "permit-wait,reject=0,backoff=7",
                "kueue,quota=200",
                "kueue,quota=200,kueue_api=v1beta1,timeout=0",
                "kueue,quota=200,timeout=5,block_admission=false",
                "kueue,quota=200,timeout=5,requeue=creation,backoff=1",
                "kueue,quota=150,kueue_api=v1beta1,timeout=5,backoff_limit=1",
            ] {
                let spec = format!("kube[queue={queue},gang={gang}]");
                let mut p = policies::build(&spec).unwrap();
                let r = sim_core::simulate(&two_quads(), &jobs, p.as_mut(), &cfg, None).unwrap();
                prop_assert_eq!(r.records.len(), jobs.len());
                prop_assert!(r.events < 100_000, "{}: {} events", spec, r.events);
                if r.stall.is_some() {
                    // A run cut short says so in every unfinished job's reason.
                    for rec in r.records.iter().filter(|x| x.outcome == sim_core::Outcome::Unfinished) {
                        let why = rec.unfinished_reason.as_deref().unwrap_or_default();
                        let deactivated = why.starts_with("deactivated by Kueue");
                        prop_assert!(why.starts_with("stalled: ") || deactivated, "{}: {}", spec, why);
                    }
                }
            }
        }
    }
}
