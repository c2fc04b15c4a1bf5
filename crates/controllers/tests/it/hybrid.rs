//! Slurm and Kubernetes on one cluster: each arrangement in a scenario with exact times,
//! run by the composite policy (`policies::Domains`: `slurm` for domain 0, `kube` for
//! domain 1).

use crate::cluster_autoscaler::{Log, gpu_job, secs};
use sim_core::cluster::{GpuSharing, GpuSpec, NodePool, NodeSpec};
use sim_core::{Cluster, Hooks, Job, RunResult, SimConfig};

/// `n` nodes of 16 cores, 64 GiB and 8 A100s.
fn cluster(n: u32) -> Cluster {
    let mut spec = NodeSpec::cores_only(16);
    spec.memory_mib = 65_536;
    spec.gpus = vec![GpuSpec { model: "A100".into(), memory_mib: 81_920, power: None }; 8];
    Cluster {
        pools: vec![NodePool { name: "gpu".into(), count: n, spec, sharing: GpuSharing::Exclusive, group: None }],
    }
}

fn slurm_job(id: &str, submit: u64, gpus: u32, run: u64) -> Job {
    gpu_job(id, submit, gpus, run)
}

fn pod(id: &str, submit: u64, gpus: u32, run: u64) -> Job {
    let mut j = gpu_job(id, submit, gpus, run);
    j.domain = 1;
    j
}

fn hybrid(cluster: &Cluster, jobs: &[Job], arrangement: &str) -> (RunResult, Vec<String>) {
    let mut log = Log::default();
    let mut p = policies::Domains::new(vec![
        (0, "slurm".into(), policies::build("slurm").unwrap()),
        (1, "kubernetes".into(), policies::build("kube").unwrap()),
    ])
    .unwrap();
    let cfg = SimConfig { domains: vec!["slurm".into(), "kubernetes".into()], ..SimConfig::default() };
    let hooks = Hooks {
        controllers: vec![controllers::build(arrangement, 7, 0).unwrap()],
        log: Some(&mut log),
        ..Hooks::default()
    };
    let r = sim_core::simulate_with(cluster, jobs, &mut p, &cfg, hooks).unwrap();
    (r, log.0)
}

fn moves(r: &RunResult) -> Vec<(u64, u32, u8)> {
    r.domain_moves.iter().map(|m| (m.at.0 / 1_000_000, m.node.0, m.to)).collect()
}

/// Two Slurm jobs of a whole node each on two nodes split one and one: the second waits
/// for the first although Kubernetes' node idles; the pod runs on Kubernetes' node only.
#[test]
fn a_static_split_keeps_each_side_on_its_nodes() {
    let jobs = [slurm_job("s1", 0, 8, 100), slurm_job("s2", 0, 8, 100), pod("p", 10, 8, 50)];
    let (r, log) = hybrid(&cluster(2), &jobs, "static[slurm_nodes=1]");
    let start: Vec<_> = r.records.iter().map(|x| secs(x.start)).collect();
    assert_eq!(start, [Some(0), Some(100), Some(10)], "{log:#?}");
    assert_eq!(moves(&r), [(0, 1, 1)]);
    assert_eq!(r.records[2].units.ranges().len(), 0);
}

/// `lend-drain` (no cooldown, no move delay). The polls every 30 s from 0: at 30 the pods
/// p1 (8 GPUs, 100 s) and p2 (4 GPUs, 300 s) are pending and Slurm has nothing waiting:
/// both nodes are lent, the pods start at 30 (p1 on node 0, p2 on node 1). Slurm job s
/// (8 GPUs) arrives at 50; the poll at 60 takes back the lent node with the fewest GPUs in
/// use, node 1, by draining it: p3 (4 GPUs, at 100) fits there but may not go, and waits
/// for p1's end at 130. s starts when p2, the last pod on node 1, ends: 330.
#[test]
fn a_lent_node_comes_back_when_its_last_pod_ends() {
    let jobs = [pod("p1", 0, 8, 100), pod("p2", 0, 4, 300), slurm_job("s", 50, 8, 100), pod("p3", 100, 4, 50)];
    let (r, log) = hybrid(&cluster(2), &jobs, "lend-drain[cooldown=0,move_delay=0]");
    let start: Vec<_> = r.records.iter().map(|x| secs(x.start)).collect();
    assert_eq!(start, [Some(30), Some(30), Some(330), Some(130)], "{log:#?}");
    assert_eq!(moves(&r), [(30, 1, 1), (30, 0, 1), (330, 1, 0)], "{log:#?}");
    assert!(log.iter().any(|l| l.starts_with("reclaim@60: node 1")), "{log:#?}");
    // With the default 30 s move both nodes are usable at 60, where the arrival of the
    // moves comes before the poll: it sees s waiting and the lent nodes still empty, and
    // drains node 0 back at once (usable at 90, where s starts). The pods share node 1:
    // p1 60-160, then p2 and p3 together.
    let (r, log) = hybrid(&cluster(2), &jobs, "lend-drain[cooldown=0]");
    let start: Vec<_> = r.records.iter().map(|x| secs(x.start)).collect();
    assert_eq!(start, [Some(60), Some(160), Some(90), Some(160)], "{log:#?}");
}

/// KEDA's cooldown: s1 arrives at 20 behind s0 (0-40) and is waiting at the poll at 30;
/// nothing is lent until the first poll 300 s after the last one that saw Slurm work
/// waiting.
#[test]
fn nothing_is_lent_within_the_cooldown_of_slurm_work() {
    let jobs = [slurm_job("s0", 0, 8, 40), slurm_job("s1", 20, 8, 10), pod("p", 60, 8, 100)];
    let (r, log) = hybrid(&cluster(1), &jobs, "lend-drain[move_delay=0]");
    // The pod waits for the poll at 330.
    assert_eq!(secs(r.records[1].start), Some(40), "{log:#?}");
    assert_eq!(secs(r.records[2].start), Some(330), "{log:#?}");
}

/// `lend-evict` (SUNK): the pod (8 GPUs, 1000 s) runs on Slurm's idle node from the poll
/// at 30. Slurm job s arrives at 100 and Slurm, which owns the GPUs, takes the node: the
/// pod gets the 30 s kill wait, is evicted at 130 (100 s of work lost) and requeued; s
/// starts at 130 and the node is Slurm's. s ends at 230; the poll at 240 lends the node
/// again and the pod runs 240-1240.
#[test]
fn a_slurm_job_evicts_the_pods_after_the_kill_wait() {
    let jobs = [pod("p", 0, 8, 1000), slurm_job("s", 100, 8, 100)];
    let (r, log) = hybrid(&cluster(1), &jobs, "lend-evict");
    let (p, s) = (&r.records[0], &r.records[1]);
    assert_eq!((secs(p.first_start), secs(p.start), secs(p.end)), (Some(30), Some(240), Some(1240)), "{log:#?}");
    assert_eq!((secs(s.start), secs(s.end)), (Some(130), Some(230)), "{log:#?}");
    assert_eq!(p.attempts, 2);
    assert_eq!(p.lost.preemption, 100_000_000, "the work of 30-130 is lost");
    // The poll after the pod's end (1260) gives the idle node back.
    assert_eq!(moves(&r), [(30, 0, 1), (130, 0, 0), (240, 0, 1), (1260, 0, 0)], "{log:#?}");
    // A longer kill wait delays s by as much.
    let (r, _) = hybrid(&cluster(1), &jobs, "lend-evict[kill_wait=90]");
    assert_eq!(secs(r.records[1].start), Some(190));
}

/// `bridge`: two 2-GPU pods on one 8-GPU node. Each pod is a Slurm job that takes a whole
/// node: the second waits for the first (0-100). `bridge[shared]` places both at once.
#[test]
fn a_bridged_pod_takes_a_whole_node_unless_shared() {
    let jobs = [pod("a", 0, 2, 100), pod("b", 0, 2, 100)];
    let (r, log) = hybrid(&cluster(1), &jobs, "bridge");
    let start: Vec<_> = r.records.iter().map(|x| secs(x.start)).collect();
    assert_eq!(start, [Some(0), Some(100)], "{log:#?}");
    let (r, log) = hybrid(&cluster(1), &jobs, "bridge[shared]");
    let start: Vec<_> = r.records.iter().map(|x| secs(x.start)).collect();
    assert_eq!(start, [Some(0), Some(0)], "{log:#?}");
}

/// Checks at every start that the job's nodes belong to the domain whose scheduler
/// placed it (a node is in one domain at a time; each scheduler uses its own).
struct Owners(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl sim_core::controller::Controller for Owners {
    fn spec(&self) -> String {
        "owners".into()
    }
    fn may_relabel(&self) -> bool {
        false
    }
    fn interests(&self) -> sim_core::controller::Interests {
        sim_core::controller::Interests { starts: true, ..Default::default() }
    }
    fn on_event(
        &mut self,
        view: &sim_core::policy::SchedView<'_>,
        event: &sim_core::controller::Observed,
        _: &mut Vec<sim_core::controller::Action>,
    ) {
        let sim_core::controller::Observed::Started { job } = event else { return };
        let scheduler = view.route(view.job(*job).domain()).scheduler;
        for b in &view.running_job(*job).expect("started").binding {
            if view.node_domain(b.node) != scheduler {
                let owner = view.node_domain(b.node);
                self.0.lock().unwrap().push(format!(
                    "{} on node {} of domain {owner}",
                    view.job(*job).trace_id(),
                    b.node.0
                ));
            }
        }
    }
}

fn checked(cluster: &Cluster, jobs: &[Job], arrangement: &str, kube: &str) -> (String, Vec<String>) {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut p = policies::Domains::new(vec![
        (0, "slurm".into(), policies::build("slurm").unwrap()),
        (1, "kubernetes".into(), policies::build(kube).unwrap()),
    ])
    .unwrap();
    let cfg = SimConfig {
        domains: vec!["slurm".into(), "kubernetes".into()],
        horizon: Some(sim_core::SimTime::from_secs(10_000_000)),
        ..SimConfig::default()
    };
    let hooks = Hooks {
        controllers: vec![controllers::build(arrangement, 7, 0).unwrap(), Box::new(Owners(seen.clone()))],
        ..Hooks::default()
    };
    let r = sim_core::simulate_with(cluster, jobs, &mut p, &cfg, hooks).unwrap();
    let v = seen.lock().unwrap().clone();
    (format!("{:?}{:?}", r.records, r.domain_moves), v)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any small mixed workload under every arrangement, pods in gangs of 1 or 2 tasks placed
    /// all at once or one at a time (their partial gangs holding GPUs): every job completes
    /// (exactly one outcome each), every start is on its scheduler's own nodes, and a second
    /// run gives the same schedule.
    #[test]
    fn every_arrangement_keeps_the_invariants(
        shapes in proptest::collection::vec((0u8..2, 0u64..600, 1u32..9, 10u64..500, 1u32..3), 1..14),
        one_at_a_time in proptest::bool::ANY,
    ) {
        let jobs: Vec<Job> = shapes
            .iter()
            .enumerate()
            .map(|(i, &(d, submit, gpus, run, tasks))| {
                let mut j = gpu_job(&format!("j{i}"), submit, gpus, run);
                j.domain = d;
                if d == 1 {
                    j.tasks = tasks;
                }
                j
            })
            .collect();
        let kube = if one_at_a_time { "kube[gang=permit-wait]" } else { "kube" };
        for a in [
            "static[slurm_nodes=1]",
            "lend-drain",
            "lend-drain[cooldown=0,move_delay=0]",
            "lend-evict",
            "lend-evict[kill_wait=0]",
            "bridge",
            "bridge[shared]",
        ] {
            let (first, bad) = checked(&cluster(3), &jobs, a, kube);
            proptest::prop_assert!(bad.is_empty(), "{a}: {bad:?}");
            proptest::prop_assert!(!first.contains("Unfinished"), "{a}: {first}");
            let (again, _) = checked(&cluster(3), &jobs, a, kube);
            proptest::prop_assert_eq!(first, again, "{}", a);
        }
    }
}
