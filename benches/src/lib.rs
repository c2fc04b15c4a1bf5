//! # benches: schedlab's benchmarks
//!
//! Criterion benches (`cargo bench -p benches`) replay whole Parallel Workloads Archive
//! logs from `../shared/traces/swf` (`replay`) and run the FGD paper's protocol on the
//! openb traces in `../shared/traces/openb` (`fgd`); when those folders are absent they
//! say so and use the committed slices. `gpu_1m` replays a 1,000,000-job synthetic GPU
//! workload ([`gpu_workload`]) under `kube`, and `instructions` counts the instructions of
//! the same scenarios at small sizes under callgrind (gungraun), the CI gate of
//! `scripts/bench-gate.sh`.

use std::path::PathBuf;

/// Folder of the shared SWF logs, relative to the workspace root.
pub fn shared_swf_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/traces/swf")
}

/// Folder of the shared openb traces, relative to the workspace root.
pub fn shared_openb_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/traces/openb")
}

/// The shared SWF logs (sorted by name), or nothing when the folder is absent.
pub fn shared_swf_logs() -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(shared_swf_dir()) else { return Vec::new() };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".swf.gz") || p.to_string_lossy().ends_with(".swf"))
        .collect();
    v.sort();
    v
}

/// The commented example GPU model `examples/models/gpu.toml` (Philly-like training,
/// openb-like inference).
pub fn gpu_model() -> traces::generator::Model {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/models/gpu.toml");
    let text = std::fs::read_to_string(&path).expect("examples/models/gpu.toml");
    traces::generator::Model::from_toml(&text, &path.display().to_string()).expect("a valid model")
}

/// Nodes of [`gpu_workload`]'s cluster: 16 × 8 GPUs, the fewest that fit the model's largest
/// gangs (16 tasks × 8 GPUs).
pub const GPU_NODES: u32 = 16;

/// A Philly-like GPU cluster for [`gpu_model`]'s jobs: `nodes` nodes of 96 cores, 1 TiB and
/// 8 GPUs of 24 GiB (as Philly's larger ones), shared by declared memory as the model's inference
/// replicas ask (training jobs state no GPU memory and take whole GPUs).
pub fn gpu_cluster(nodes: u32) -> sim_core::Cluster {
    use sim_core::{Cluster, GpuSharing, GpuSpec, NodePool, NodeSpec};
    let gpu = GpuSpec { model: "P40".into(), memory_mib: 24_576, power: None };
    Cluster {
        pools: vec![NodePool {
            name: "gpu".into(),
            count: nodes,
            spec: NodeSpec { memory_mib: 1 << 20, gpus: vec![gpu; 8], ..NodeSpec::cores_only(96) },
            sharing: GpuSharing::Shared,
            group: None,
        }],
    }
}

/// Arrival rate of [`gpu_workload`] over the model's own (31.4 jobs an hour, which offers
/// about half of [`GPU_NODES`]' 128 GPUs): 50.2 jobs an hour, bursts scaled alike, offer
/// about 0.78 of them.
pub const GPU_RATE_FACTOR: f64 = 1.6;

/// A synthetic GPU workload: the first `jobs` jobs of [`gpu_model`] with `seed`, arrivals
/// [`GPU_RATE_FACTOR`] times as frequent, on [`gpu_cluster`]`(`[`GPU_NODES`]`)`.
pub fn gpu_workload(jobs: usize, seed: u64) -> (sim_core::Cluster, Vec<sim_core::Job>) {
    let mut model = gpu_model();
    model.arrivals.rate_per_hour *= GPU_RATE_FACTOR;
    model.arrivals.bursts_per_hour = model.arrivals.bursts_per_hour.map(|b| b * GPU_RATE_FACTOR);
    let jobs = traces::generator::Generator::new(&model, seed).take(jobs).collect();
    (gpu_cluster(GPU_NODES), jobs)
}

/// Nodes of [`kube_scale_cluster`]: 1,250 × 8 GPUs, two pools of 625 under two leaf switches.
pub const KUBE_SCALE_NODES: u32 = 1_250;

/// Issue 16's large GPU cluster: 1,250 nodes of 96 cores, 1 TiB and 8 GPUs of 24 GiB
/// shared by memory ([`gpu_cluster`]'s node), in two pools of 625 under two leaf switches
/// (racks `r1`, `r2` of zone `z1`).
pub fn kube_scale_cluster() -> sim_core::Cluster {
    let mut c = gpu_cluster(KUBE_SCALE_NODES / 2);
    let mut b = c.pools[0].clone();
    for (pool, (name, rack, switch)) in c.pools.iter_mut().zip([("a", "r1", "leaf1")]) {
        pool.name = name.into();
        pool.spec.topology = sim_core::cluster::TopologyPath {
            zone: Some("z1".into()),
            rack: Some(rack.into()),
            switch: Some(switch.into()),
        };
    }
    b.name = "b".into();
    b.spec.topology = sim_core::cluster::TopologyPath {
        zone: Some("z1".into()),
        rack: Some("r2".into()),
        switch: Some("leaf2".into()),
    };
    c.pools.push(b);
    c
}

/// Arrivals an hour of [`kube_scale_workload`] (issue 16: `rate_per_hour = 4800`).
pub const KUBE_SCALE_RATE_PER_HOUR: f64 = 4800.0;

/// Issue 16's scale workload: the first `jobs` jobs of [`gpu_model`] with `rate_per_hour`
/// set to [`KUBE_SCALE_RATE_PER_HOUR`] (bursts as the model has them), seed 3, on
/// [`kube_scale_cluster`]. `sim gen --model` of the model with that rate and `--seed 3`
/// writes the same jobs.
pub fn kube_scale_workload(jobs: usize) -> (sim_core::Cluster, Vec<sim_core::Job>) {
    let mut model = gpu_model();
    model.arrivals.rate_per_hour = KUBE_SCALE_RATE_PER_HOUR;
    let jobs = traces::generator::Generator::new(&model, 3).take(jobs).collect();
    (kube_scale_cluster(), jobs)
}

/// Issue 19's scale check (the `failures` bench, the `failure_times` example): the
/// synthetic gang-and-affinity workload ([`traces::synthetic::GangWorkload`]: 100,000 jobs
/// on 2,000 nodes × 8 GPUs), the controller specs of random node failures at InfiniteHBD's
/// rate (detected after 300 s) and of the last rack's pool as spot capacity (reclaimed
/// every 2 h on average, 120 s notice), and checkpoints at Young's interval (60 s to
/// write, 120 s to restore).
pub struct FailuresScenario {
    /// The cluster.
    pub cluster: sim_core::Cluster,
    /// The jobs.
    pub jobs: Vec<sim_core::Job>,
    /// The `failures` controller spec.
    pub failures: String,
    /// The `spot` controller spec.
    pub spot: String,
    /// The checkpoints.
    pub checkpoints: sim_core::checkpoint::Checkpointing,
}

impl FailuresScenario {
    /// Builds it.
    pub fn new() -> Self {
        use sim_core::checkpoint::{CheckpointInterval, Checkpointing};
        let w = traces::synthetic::GangWorkload::default();
        let (cluster, jobs) = (w.cluster(), w.jobs());
        let spot_pool = cluster.pools.last().expect("pools").name.clone();
        let failures = "failures[mtbf=5714,detect=300]".to_string();
        let spot = format!("spot[pool={spot_pool},reclaim=2,back=1,notice=120]");
        let node_mtbf = controllers::failures::node_mtbf_of(&failures).expect("spec").expect("failures");
        let s = sim_core::SimDuration::from_secs;
        let checkpoints =
            Checkpointing { interval: CheckpointInterval::Auto { node_mtbf }, cost: s(60), restore: s(120) };
        FailuresScenario { cluster, jobs, failures, spot, checkpoints }
    }

    /// One replay under `kube` with the controllers `specs` and, with `checkpoints`, the
    /// checkpoints: its scheduling passes and the attempts of all jobs.
    pub fn replay(&self, specs: &[&String], checkpoints: bool) -> (u64, u64) {
        let cfg = sim_core::SimConfig { checkpointing: checkpoints.then_some(self.checkpoints), ..Default::default() };
        let mut p = policies::build("kube").expect("known policy");
        let controllers = specs
            .iter()
            .enumerate()
            .map(|(i, spec)| controllers::build(spec, 1, i).expect("known controller"))
            .collect();
        let hooks = sim_core::Hooks { controllers, ..sim_core::Hooks::default() };
        let r = sim_core::simulate_with(&self.cluster, &self.jobs, p.as_mut(), &cfg, hooks).expect("run");
        (r.passes, r.records.iter().map(|r| u64::from(r.attempts)).sum())
    }
}

impl Default for FailuresScenario {
    fn default() -> Self {
        Self::new()
    }
}

/// Issue 20's scale check: a month of `examples/autoscaling-day` — its two autoscaled A100
/// groups (on-demand and spot, the Cluster Autoscaler with the price expander) and its
/// chat service for 30 days (a rate point and a latency evaluation every 10 s, 259,200 of
/// each) under the HPA — beside 10,000 jobs of [`gpu_model`] (seed 1, about 13 days).
pub struct AutoscalingMonth {
    /// The cluster of the example's configuration.
    pub cluster: sim_core::Cluster,
    /// Its controllers, the service lengthened to 30 days.
    pub controllers: Vec<String>,
    /// The training jobs.
    pub jobs: Vec<sim_core::Job>,
}

impl AutoscalingMonth {
    /// Reads the example's configuration and generates the jobs.
    pub fn new() -> Self {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/autoscaling-day/cluster.toml");
        let config = traces::cluster_toml::load(&path).expect("examples/autoscaling-day/cluster.toml");
        let controllers = config.controllers.iter().map(|s| s.replace("days=1,", "days=30,")).collect();
        let jobs = traces::generator::Generator::new(&gpu_model(), 1).take(10_000).collect();
        AutoscalingMonth { cluster: config.cluster, controllers, jobs }
    }

    /// One replay under `kube`: (jobs completed, the service's SLO-violation minutes).
    pub fn replay(&self) -> (usize, f64) {
        let mut policy = policies::build("kube").expect("kube");
        let controllers = self.controllers.iter().enumerate().map(|(i, s)| controllers::build(s, 1, i).expect("spec"));
        let hooks = sim_core::Hooks { controllers: controllers.collect(), ..sim_core::Hooks::default() };
        let r =
            sim_core::simulate_with(&self.cluster, &self.jobs, policy.as_mut(), &sim_core::SimConfig::default(), hooks)
                .expect("the run");
        let done = r.records.iter().filter(|r| r.outcome == sim_core::Outcome::Completed).count();
        let slo = r
            .controller_reports
            .iter()
            .flat_map(|c| &c.1.figures)
            .find(|f| f.0 == "slo_violation_minutes")
            .map_or(0.0, |f| f.1);
        (done, slo)
    }
}

impl Default for AutoscalingMonth {
    fn default() -> Self {
        Self::new()
    }
}
