//! `karpenter`: batches, the cheapest instance type, in-flight nodes as capacity, and
//! consolidation, with exact times.

use crate::cluster_autoscaler::{gpu_job, gpu_pool, group, run, secs};
use sim_core::Cluster;

fn notes<'a>(log: &'a [String], what: &str) -> Vec<&'a String> {
    log.iter().filter(|l| l.starts_with(&format!("{what}@"))).collect()
}

/// The GPU readiness case of the Cluster Autoscaler's test: the batch opened by the pod
/// at 0 closes at 1 (1 s idle); node 0 is launched then (Ready 91, GPUs 301). The
/// provisioner's looks every 10 s find the pod fitting the node still starting: one node
/// for one pod, label or not; the pod starts at 301.
#[test]
fn a_starting_node_is_capacity_so_one_pod_gets_one_node() {
    let cluster = Cluster { pools: vec![gpu_pool("gpu", 8, 8, false, group(90, 300, 0, 0))] };
    let (r, log) = run(&cluster, &[gpu_job("pod", 0, 1, 3600)], "karpenter");
    assert_eq!(secs(r[0].start), Some(301), "{log:#?}");
    let p = notes(&log, "provision");
    assert_eq!(p.len(), 1, "{log:#?}");
    assert!(p[0].starts_with("provision@1: nodeclaim for 1 pending pod(s): group gpu node [0]"), "{log:#?}");
}

/// `small` (1 GPU, 1.00 an hour) and `big` (8 GPUs, 5.00). One one-GPU pod: the cheapest
/// type that holds it, small. Three in one batch share one NodeClaim, which only big can
/// hold: one big node (Karpenter packs a batch before it picks types).
#[test]
fn a_batch_gets_the_cheapest_type_that_holds_its_pods() {
    let cluster = Cluster {
        pools: vec![
            gpu_pool("small", 4, 1, true, group(60, 60, 1_000_000, 0)),
            gpu_pool("big", 4, 8, true, group(60, 60, 5_000_000, 0)),
        ],
    };
    let (r, log) = run(&cluster, &[gpu_job("pod", 0, 1, 600)], "karpenter");
    assert!(notes(&log, "provision")[0].contains("group small node [0]"), "{log:#?}");
    assert_eq!(secs(r[0].start), Some(61));
    let three: Vec<_> = (0..3).map(|i| gpu_job(&format!("p{i}"), 0, 1, 600)).collect();
    let (r, log) = run(&cluster, &three, "karpenter");
    let p = notes(&log, "provision");
    assert_eq!(p.len(), 1, "{log:#?}");
    assert!(p[0].contains("nodeclaim for 3 pending pod(s): group big node [4]"), "{log:#?}");
    assert!(r.iter().all(|r| secs(r.start) == Some(61)), "{r:?}");
    // Pods arriving 0.5 s apart keep the window open (1 s idle) until 10 s after it
    // opened: 25 pods from 0 to 12 s: the first batch closes at 10 with 21 pods.
    let many: Vec<_> = (0..25)
        .map(|i| {
            let mut j = gpu_job(&format!("q{i}"), 0, 1, 600);
            j.submit = sim_core::SimTime(i * 500_000);
            j
        })
        .collect();
    let (_, log) = run(&cluster, &many, "karpenter");
    let p = notes(&log, "provision");
    assert!(p[0].starts_with("provision@10:") && p[0].contains("for 8 pending"), "{log:#?}");
}

/// An empty node goes at the first disruption poll (every 10 s from 0) once no pod has
/// started or ended on it for `consolidate_after`: the pod runs 61–661; with 0 s the
/// node goes at 670, with 300 s at 970.
#[test]
fn an_empty_node_is_deleted_after_consolidate_after() {
    let cluster = Cluster { pools: vec![gpu_pool("small", 4, 1, true, group(60, 60, 1_000_000, 0))] };
    let jobs = [gpu_job("pod", 0, 1, 600), gpu_job("later", 5000, 1, 60)];
    let (_, log) = run(&cluster, &jobs, "karpenter");
    assert!(log.contains(&"node 0 absent@670".to_string()), "{log:#?}");
    let (_, log) = run(&cluster, &jobs, "karpenter[consolidate_after=300]");
    assert!(log.contains(&"node 0 absent@970".to_string()), "{log:#?}");
    let (_, log) = run(&cluster, &jobs, "karpenter[consolidation=never]");
    assert!(notes(&log, "disrupt").is_empty(), "{log:#?}");
}

/// A big node (present from the start) runs one one-GPU pod; a small type is cheaper and
/// holds it. At the first poll (10) the big node is underutilized: a small node is
/// launched (Ready 70); then the big node is drained, its pod evicted with 30 s grace,
/// and it restarts on the small node at 100, when the big node leaves.
#[test]
fn an_underutilized_node_is_replaced_by_a_cheaper_one() {
    let mut big = group(60, 60, 5_000_000, 0);
    big.initial = 1;
    let cluster = Cluster {
        pools: vec![gpu_pool("small", 4, 1, true, group(60, 60, 1_000_000, 0)), gpu_pool("big", 2, 8, true, big)],
    };
    let (r, log) = run(&cluster, &[gpu_job("pod", 0, 1, 3600)], "karpenter");
    let d = notes(&log, "disrupt");
    assert!(d[0].starts_with("disrupt@10: group big: node 4 underutilized: replaced by node 0"), "{log:#?}");
    assert_eq!((r[0].attempts, secs(r[0].start)), (2, Some(100)), "{log:#?}");
    assert!(log.contains(&"node 4 absent@100".to_string()), "{log:#?}");
    // Under WhenEmpty it stays.
    let (r, _) = run(&cluster, &[gpu_job("pod", 0, 1, 3600)], "karpenter[consolidation=when-empty]");
    assert_eq!((r[0].attempts, secs(r[0].start)), (1, Some(0)));
}
