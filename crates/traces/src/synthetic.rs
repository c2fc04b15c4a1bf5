//! A seeded synthetic GPU cluster and gang workload, the benchmark of gang admission and
//! affinity at scale (2,000 nodes × 8 GPUs, 100,000 jobs by default).
//!
//! The cluster is `racks` pools of identical 8-GPU nodes; each rack sits under its own
//! leaf switch and racks are grouped in zones of ten, so the node labels `rack` and
//! `zone` and the topology path (zone, rack, switch) are set as a cluster TOML would set
//! them.
//!
//! Jobs arrive as a Poisson process whose rate gives the requested offered GPU load
//! (GPU-seconds asked per second ÷ GPUs). Each job is, with these probabilities:
//!
//! | share | job | tasks × GPUs |
//! |---|---|---|
//! | 36 % | inference replica (`kind: inference`) | 1 × 1 |
//! | 9 % | training | 1 × 2 |
//! | 9 % | training | 1 × 4 |
//! | 18 % | training | 1 × 8 |
//! | 9 % | training gang | 2 × 8 |
//! | 9 % | training gang | 4 × 8 |
//! | 10 % | training gang | 8 × 8 (64 GPUs) |
//!
//! Run times are log-uniform between 1 minute and 12 hours; every task asks 8 cores and
//! 64 GiB per GPU (at least 8 cores and 64 GiB). Affinity rules: 30 % of inference
//! replicas belong to one of 50 services (`app=svcN`) and prefer (weight 50) nodes
//! without a replica of their service (Kubernetes preferred pod anti-affinity on
//! `kubernetes.io/hostname`); 15 % of training jobs must avoid one rack (required node
//! affinity `rack NotIn [rN]`, as when a rack is being drained). Training jobs are
//! `dl_train`, so `--cross-switch-slowdown` applies to gangs spread over switches.
//!
//! The draws come from the ChaCha stream `synthetic-gangs` of the seed, so a seed gives
//! the same workload on every platform and crate version.

use sim_core::constraints::{Operator, PodAffinityTerm, PodConstraints, Requirement, SelectorTerm};
use sim_core::job::JobKind;
use sim_core::rng::{RngStreams, uniform_f64, uniform_index};
use sim_core::{Cluster, GpuSharing, GpuSpec, Job, NodePool, NodeSpec, SimDuration, SimTime, TaskShape};

/// What to generate.
#[derive(Clone, Debug)]
pub struct GangWorkload {
    /// Jobs.
    pub jobs: usize,
    /// Racks (pools of `nodes_per_rack` nodes, one leaf switch each).
    pub racks: u32,
    /// Nodes per rack.
    pub nodes_per_rack: u32,
    /// Offered GPU load (1.0: jobs ask for exactly the cluster's GPU-seconds).
    pub load: f64,
    /// The seed.
    pub seed: u64,
}

impl Default for GangWorkload {
    /// 100,000 jobs on 20 racks × 100 nodes × 8 GPUs at an offered load of 0.9.
    fn default() -> Self {
        GangWorkload { jobs: 100_000, racks: 20, nodes_per_rack: 100, load: 0.9, seed: 1 }
    }
}

/// GPUs per node.
pub const GPUS_PER_NODE: u32 = 8;

/// (share in percent, tasks, GPUs per task) of each job class, inference first.
const CLASSES: [(u32, u32, u32); 7] = [(36, 1, 1), (9, 1, 2), (9, 1, 4), (18, 1, 8), (9, 2, 8), (9, 4, 8), (10, 8, 8)];

/// Shortest and longest run time, seconds.
const RUN_MIN: f64 = 60.0;
const RUN_MAX: f64 = 12.0 * 3600.0;

impl GangWorkload {
    /// The cluster.
    pub fn cluster(&self) -> Cluster {
        let pools = (0..self.racks)
            .map(|r| {
                let rack = format!("r{r}");
                let zone = format!("z{}", r / 10);
                let labels = [("rack".to_string(), rack.clone()), ("zone".to_string(), zone.clone())].into();
                NodePool {
                    name: rack.clone(),
                    count: self.nodes_per_rack,
                    spec: NodeSpec {
                        cores: 96,
                        memory_mib: 1 << 20,
                        gpus: vec![
                            GpuSpec { model: "A100".into(), memory_mib: 81_920, power: None };
                            GPUS_PER_NODE as usize
                        ],
                        labels,
                        taints: Vec::new(),
                        topology: sim_core::cluster::TopologyPath {
                            zone: Some(zone),
                            rack: Some(rack),
                            switch: Some(format!("s{r}")),
                        },
                    },
                    sharing: GpuSharing::Exclusive,
                    group: None,
                }
            })
            .collect();
        Cluster { pools }
    }

    /// The jobs, in submission order.
    pub fn jobs(&self) -> Vec<Job> {
        let mut rng = RngStreams::new(self.seed).stream("synthetic-gangs");
        // Mean GPU-seconds of a job: Σ share × GPUs × mean of the log-uniform run time.
        let mean_run = (RUN_MAX - RUN_MIN) / (RUN_MAX / RUN_MIN).ln();
        let mean_gpus: f64 = CLASSES.iter().map(|&(p, t, g)| p as f64 / 100.0 * (t * g) as f64).sum();
        let gpus = (self.racks * self.nodes_per_rack * GPUS_PER_NODE) as f64;
        let gap = mean_gpus * mean_run / (self.load.max(1e-9) * gpus);
        let mut now = 0.0f64;
        let mut out = Vec::with_capacity(self.jobs);
        for i in 0..self.jobs {
            now += -gap * (1.0 - uniform_f64(&mut rng)).ln();
            let mut pick = uniform_index(&mut rng, 100) as u32;
            let class = CLASSES
                .iter()
                .position(|&(p, _, _)| {
                    let hit = pick < p;
                    pick = pick.saturating_sub(p);
                    hit
                })
                .unwrap_or(0);
            let (_, tasks, g) = CLASSES[class];
            let run = RUN_MIN * (RUN_MAX / RUN_MIN).powf(uniform_f64(&mut rng));
            let run = SimDuration::from_secs(run.round() as u64);
            let submit = SimTime((now * 1e6).round() as u64);
            let mut job = Job::rigid(format!("j{i}"), submit, tasks, run, run);
            job.task = TaskShape { cores: 8 * g, memory_mib: 65_536 * g as u64, gpus: g, ..TaskShape::default() };
            if class == 0 {
                job.kind = JobKind::Inference;
                if uniform_index(&mut rng, 100) < 30 {
                    let app = format!("svc{}", uniform_index(&mut rng, 50));
                    job.constraints = Some(Box::new(PodConstraints {
                        labels: [("app".to_string(), app.clone())].into(),
                        pod_affinity: vec![PodAffinityTerm {
                            selector: vec![Requirement {
                                key: "app".into(),
                                operator: Operator::In,
                                values: vec![app],
                            }],
                            topology_key: "kubernetes.io/hostname".into(),
                            weight: 50,
                            anti: true,
                        }],
                        ..PodConstraints::default()
                    }));
                }
            } else {
                job.kind = JobKind::DlTrain;
                if uniform_index(&mut rng, 100) < 15 {
                    let rack = format!("r{}", uniform_index(&mut rng, self.racks.max(1) as usize));
                    job.constraints = Some(Box::new(PodConstraints {
                        required: vec![SelectorTerm {
                            requirements: vec![Requirement {
                                key: "rack".into(),
                                operator: Operator::NotIn,
                                values: vec![rack],
                            }],
                        }],
                        ..PodConstraints::default()
                    }));
                }
            }
            out.push(job);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_jobs_and_the_asked_load() {
        let w = GangWorkload { jobs: 20_000, racks: 4, nodes_per_rack: 10, load: 0.5, seed: 3 };
        let a = w.jobs();
        assert_eq!(a, w.jobs());
        assert_ne!(a, GangWorkload { seed: 4, ..w.clone() }.jobs());
        let c = w.cluster();
        assert_eq!(c.node_count(), 40);
        let span = a.last().unwrap().submit.as_micros() as f64 / 1e6;
        let asked: f64 = a.iter().map(|j| (j.tasks * j.task.gpus) as f64 * j.runtime.unwrap().as_secs_f64()).sum();
        let load = asked / (span * 320.0);
        assert!((load - 0.5).abs() < 0.05, "offered load {load}");
        let gangs = a.iter().filter(|j| j.tasks == 8 && j.task.gpus == 8).count() as f64 / a.len() as f64;
        assert!((gangs - 0.10).abs() < 0.01, "64-GPU gangs {gangs}");
        assert!(a.iter().all(|j| j.tasks * j.task.gpus <= 64));
        let anti = a.iter().filter(|j| j.constraints.as_ref().is_some_and(|c| !c.pod_affinity.is_empty())).count();
        let avoid = a.iter().filter(|j| j.constraints.as_ref().is_some_and(|c| !c.required.is_empty())).count();
        assert!(anti > 1500 && anti < 2800, "{anti}");
        assert!(avoid > 1300 && avoid < 2300, "{avoid}");
    }
}
