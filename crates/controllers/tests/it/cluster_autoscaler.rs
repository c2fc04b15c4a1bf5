//! `cluster-autoscaler` on node groups: the GPU readiness bug and upstream's fix, scale-up
//! by expander, scale-down of unneeded nodes, all with exact times.

use sim_core::cluster::{Delay, GpuSharing, GpuSpec, NodeGroup, NodePool, NodeSpec};
use sim_core::log::{LogEvent, LogSink};
use sim_core::{Cluster, Hooks, Job, JobRecord, SimConfig, SimDuration, SimTime, TaskShape};

const GPU_LABEL: &str = "cloud.google.com/gke-accelerator";

pub(crate) fn group(ready: u64, gpus_ready: u64, price: u64, priority: i32) -> NodeGroup {
    NodeGroup {
        min: 0,
        initial: 0,
        ready: Delay::Fixed(SimDuration::from_secs(ready)),
        gpus_ready: Delay::Fixed(SimDuration::from_secs(gpus_ready)),
        price_micros: price,
        spot: false,
        priority,
    }
}

/// A node group of at most `max` nodes of 16 cores, 64 GiB and `gpus` A100s.
pub(crate) fn gpu_pool(name: &str, max: u32, gpus: u32, labelled: bool, g: NodeGroup) -> NodePool {
    let mut spec = NodeSpec::cores_only(16);
    spec.memory_mib = 65_536;
    spec.gpus = vec![GpuSpec { model: "A100".into(), memory_mib: 81_920, power: None }; gpus as usize];
    if labelled {
        spec.labels.insert(GPU_LABEL.into(), "nvidia-tesla-a100".into());
    }
    NodePool { name: name.into(), count: max, spec, sharing: GpuSharing::Exclusive, group: Some(g) }
}

pub(crate) fn gpu_job(id: &str, submit: u64, gpus: u32, run: u64) -> Job {
    let mut j = Job::rigid(id, SimTime::from_secs(submit), 1, SimDuration::from_secs(run), SimDuration::from_secs(run));
    j.task = TaskShape { cores: 1, gpus, ..TaskShape::default() };
    j
}

/// The controller decisions (`what@t: reason`) and node changes (`node n state@t`).
#[derive(Default)]
pub(crate) struct Log(pub(crate) Vec<String>);

impl LogSink for Log {
    fn record(&mut self, now: SimTime, ev: &LogEvent<'_>) -> std::io::Result<()> {
        let t = now.0 / 1_000_000;
        match ev {
            LogEvent::Controller { what, reason, .. } => self.0.push(format!("{what}@{t}: {reason}")),
            LogEvent::Node { node, state } if t > 0 => self.0.push(format!("node {node} {state}@{t}")),
            _ => {}
        }
        Ok(())
    }
}

pub(crate) fn run(cluster: &Cluster, jobs: &[Job], spec: &str) -> (Vec<JobRecord>, Vec<String>) {
    let mut log = Log::default();
    let mut p = policies::build("kube").unwrap();
    let hooks =
        Hooks { controllers: vec![controllers::build(spec, 7, 0).unwrap()], log: Some(&mut log), ..Hooks::default() };
    let r = sim_core::simulate_with(cluster, jobs, p.as_mut(), &SimConfig::default(), hooks).unwrap();
    (r.records, log.0)
}

fn scale_ups(log: &[String]) -> Vec<&String> {
    log.iter().filter(|l| l.starts_with("scale-up@")).collect()
}

pub(crate) fn secs(t: Option<SimTime>) -> Option<u64> {
    t.map(|t| t.0 / 1_000_000)
}

/// One pending one-GPU pod, an empty group, nodes Ready 90 s after the request and GPUs
/// allocatable 300 s after it, a loop every 10 s. The pod is a GPU pod: no scale-up before
/// it is 30 s old. Node 0 is asked for at 30 (Ready 120, GPUs 330).
///
/// Without the GPU label each node counts as Ready with no GPU for the pod: the loops at
/// 120, 210 and 300 add nodes 1, 2 and 3 (each Ready 90 s later, again without GPUs), and
/// at 330 node 0's GPUs arrive and the pod starts there: 4 nodes for one pod. With
/// upstream's handling node 0 is not started, so upcoming, until its GPUs come: 1 node.
#[test]
fn gpu_nodes_ready_before_their_gpus_overprovision_without_the_gpu_label() {
    let spec = "cluster-autoscaler[scale_down=no]";
    let jobs = [gpu_job("pod", 0, 1, 3600)];
    let bug = Cluster { pools: vec![gpu_pool("gpu", 8, 8, false, group(90, 300, 0, 0))] };
    let (r, log) = run(&bug, &jobs, spec);
    assert_eq!((secs(r[0].start), secs(r[0].end)), (Some(330), Some(3930)), "{log:#?}");
    let ups: Vec<String> = scale_ups(&log).iter().map(|l| l.split(':').next().unwrap().to_string()).collect();
    assert_eq!(ups, ["scale-up@30", "scale-up@120", "scale-up@210", "scale-up@300"], "{log:#?}");
    assert!(scale_ups(&log)[1].contains("+1 node(s) [1]"), "{log:#?}");
    let fixed = Cluster { pools: vec![gpu_pool("gpu", 8, 8, true, group(90, 300, 0, 0))] };
    let (r, log) = run(&fixed, &jobs, spec);
    assert_eq!(secs(r[0].start), Some(330), "{log:#?}");
    assert_eq!(scale_ups(&log).len(), 1, "{log:#?}");
}

/// The extra nodes go when unneeded, 10 min after the last scale-up (300) and 10 min after
/// each is Ready with its GPUs (nodes 1, 2, 3 at 420, 510, 600): the loops at 1020, 1110
/// and 1200 remove them, empty, at once. The pod takes all 8 GPUs of node 0, which stays
/// needed until the pod ends at 3930; 10 min later, at 4530, it goes too (another job,
/// due at 6000, keeps the run and the autoscaler going).
///
/// A pod on a node that is unneeded (1 of 8 GPUs requested) is moved when it fits on
/// another Ready node: evicted with its 30 s grace, and the node leaves when it is gone.
#[test]
fn unneeded_nodes_are_removed_after_the_unneeded_time() {
    let jobs = [gpu_job("pod", 0, 8, 3600), gpu_job("later", 6000, 8, 600)];
    let bug = Cluster { pools: vec![gpu_pool("gpu", 8, 8, false, group(90, 300, 0, 0))] };
    let (_, log) = run(&bug, &jobs, "cluster-autoscaler");
    let downs: Vec<&String> = log.iter().filter(|l| l.starts_with("scale-down@")).collect();
    let at: Vec<&str> = downs.iter().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(at[..4], ["scale-down@1020", "scale-down@1110", "scale-down@1200", "scale-down@4530"], "{log:#?}");
    assert!(downs[0].contains("node 1 unneeded since 420") && downs[0].contains("empty"), "{downs:#?}");
    assert!(log.contains(&"node 0 absent@4530".to_string()), "{log:#?}");
    // One GPU of eight: node 0 is unneeded from 330 and its pod fits on node 1 (Up at 420):
    // at 930 (10 min) it is drained, the pod evicted, and node 0 leaves at 960.
    let (r, log) = run(&bug, &[gpu_job("pod", 0, 1, 3600)], "cluster-autoscaler");
    assert!(
        log.iter().any(|l| l.starts_with("scale-down@930: group gpu: node 0") && l.contains("fit on other")),
        "{log:#?}"
    );
    assert!(log.contains(&"node 0 absent@960".to_string()), "{log:#?}");
    assert_eq!((r[0].attempts, secs(r[0].start)), (2, Some(960)), "{r:?}");
}

/// Two groups that both hold a one-GPU pod: `small` (1 GPU, 1.00 an hour, priority 0) and
/// `big` (8 GPUs, 5.00 an hour, priority 10), both 16 cores. `price` takes small, `priority`
/// big. For three one-GPU pods `least-waste` compares one big node (13 of 16 cores and all
/// the memory unrequested: 0.8125 + 1) with three small ones (45 of 48: 0.9375 + 1): big.
#[test]
fn expanders_choose_the_group() {
    let small = |prio| gpu_pool("small", 4, 1, true, group(60, 60, 1_000_000, prio));
    let big = |prio| gpu_pool("big", 4, 8, true, group(60, 60, 5_000_000, prio));
    let jobs = [gpu_job("pod", 0, 1, 600)];
    let cluster = Cluster { pools: vec![small(0), big(10)] };
    let (_, log) = run(&cluster, &jobs, "cluster-autoscaler[expander=price,scale_down=no]");
    assert!(scale_ups(&log)[0].contains("group small"), "{log:#?}");
    let (_, log) = run(&cluster, &jobs, "cluster-autoscaler[expander=priority,scale_down=no]");
    assert!(scale_ups(&log)[0].contains("group big"), "{log:#?}");
    // Asked at 30 (GPU pods wait 30 s), Ready with GPUs at 90.
    let three: Vec<Job> = (0..3).map(|i| gpu_job(&format!("p{i}"), 0, 1, 600)).collect();
    let (r, log) = run(&cluster, &three, "cluster-autoscaler[scale_down=no]");
    assert!(scale_ups(&log)[0].contains("group big: +1 node(s)"), "{log:#?}");
    assert!(r.iter().all(|r| secs(r.start) == Some(90)), "{r:?}");
    // A pod no group can hold (9 GPUs) is rejected at submit, not scaled for.
    let (r, log) = run(&cluster, &[gpu_job("huge", 0, 9, 600)], "cluster-autoscaler");
    assert!(r[0].start.is_none() && scale_ups(&log).is_empty(), "{r:?} {log:#?}");
}

/// A node group without GPUs takes pods once its nodes are Ready: one pending 8-core pod
/// gets one node whatever the ready delay drawn (uniform 60–120 s), seed after seed.
#[test]
fn a_cpu_group_adds_one_node_for_one_pod() {
    let mut g = group(0, 0, 0, 0);
    g.ready = Delay::Uniform(SimDuration::from_secs(60), SimDuration::from_secs(120));
    g.gpus_ready = g.ready;
    let pool = NodePool {
        name: "cpu".into(),
        count: 4,
        spec: NodeSpec::cores_only(16),
        sharing: GpuSharing::Exclusive,
        group: Some(g),
    };
    let cluster = Cluster { pools: vec![pool] };
    let job = Job::rigid("pod", SimTime::ZERO, 8, SimDuration::from_secs(600), SimDuration::from_secs(600));
    let (jobs, cfg) = ([job], SimConfig::default());
    for seed in 1..8 {
        let mut log = Log::default();
        let mut p = policies::build("kube").unwrap();
        let c = controllers::build("cluster-autoscaler[scale_down=no]", seed, 0).unwrap();
        let hooks = Hooks { controllers: vec![c], log: Some(&mut log), ..Hooks::default() };
        let r = sim_core::simulate_with(&cluster, &jobs, p.as_mut(), &cfg, hooks).unwrap();
        assert_eq!(scale_ups(&log.0).len(), 1, "seed {seed}: {:#?}", log.0);
        // Asked for at 10 (the first loop at which the pod is 2 s old), Ready 60 to 120 s later.
        assert!(r.records[0].start.is_some_and(|t| t >= SimTime::from_secs(70) && t <= SimTime::from_secs(130)));
    }
}
