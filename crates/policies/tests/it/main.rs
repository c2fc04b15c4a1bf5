//! Integration tests of the policies, run through the engine.

mod fixture;
mod gangs;
mod kube_queue;
mod kube_scores;
mod kube_spec;
mod placement;
mod properties;
mod scenarios;
mod sjf_aging;
mod topology;

use sim_core::log::{LogEvent, LogSink};
use sim_core::{Cluster, Job, JobRecord, SimConfig, SimDuration, SimTime};

/// A job: (submit, procs, runtime, requested), whole seconds.
pub fn job(id: &str, submit: u64, procs: u32, run: u64, req: u64) -> Job {
    Job::rigid(id, SimTime::from_secs(submit), procs, SimDuration::from_secs(run), SimDuration::from_secs(req))
}

/// Runs `jobs` on `procs` processors under `spec`.
pub fn run(spec: &str, procs: u32, jobs: &[Job], walltime_kill: bool) -> Vec<JobRecord> {
    let mut p = policies::build(spec).unwrap();
    let cfg = SimConfig { walltime_kill, ..SimConfig::default() };
    sim_core::simulate(&Cluster::processor_pool(procs), jobs, p.as_mut(), &cfg, None).unwrap().records
}

/// Start times in whole seconds (`None` for jobs that never started).
pub fn starts(spec: &str, procs: u32, jobs: &[Job]) -> Vec<Option<u64>> {
    run(spec, procs, jobs, false).iter().map(|r| r.start.map(|s| s.0 / 1_000_000)).collect()
}

/// Every reservation a policy announced in the decision log: (job id, reserved start µs).
#[derive(Default)]
pub struct Reservations(pub Vec<(String, u64)>);

impl LogSink for Reservations {
    fn record(&mut self, _: SimTime, ev: &LogEvent<'_>) -> std::io::Result<()> {
        if let LogEvent::Wait { job, reserved_at: Some(at), .. } = ev {
            self.0.push((job.to_string(), at.0));
        }
        Ok(())
    }
}

/// `count` nodes of `gpus` whole A100 GPUs each (exclusive), 64 cores and 512,000 MiB.
pub fn gpu_nodes(count: u32, gpus: usize) -> Cluster {
    let spec = sim_core::NodeSpec {
        cores: 64,
        memory_mib: 512_000,
        gpus: vec![sim_core::GpuSpec { model: "A100".into(), memory_mib: 80_000, power: None }; gpus],
        labels: Default::default(),
        taints: Vec::new(),
        topology: Default::default(),
    };
    let pool =
        sim_core::NodePool { name: "gpu".into(), count, spec, sharing: sim_core::GpuSharing::Exclusive, group: None };
    Cluster { pools: vec![pool] }
}
