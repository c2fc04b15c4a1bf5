//! Replays of a million synthetic GPU jobs under `kube` (the workloads are generated once,
//! outside the timing):
//!
//! * `gpu_1m_jobs_16_nodes`: 1,000,000 jobs of `examples/models/gpu.toml`
//!   (`benches::gpu_workload`: seed 1, arrivals 1.6 × the model's rate) on 16 nodes × 8
//!   GPUs shared by memory, at an offered load of about 0.78. About 26 s a replay on a
//!   busy 2-core machine. The instruction-count gate (`instructions`,
//!   `scripts/bench-gate.sh`) replays the first 10,000 of these jobs.
//! * `kube_1m_jobs_1250_nodes`: issue 16's scale check, 1,000,000 jobs of the same model
//!   with `rate_per_hour = 4800`, seed 3 (`benches::kube_scale_workload`), on 1,250 nodes
//!   × 8 shared GPUs in two pools under two leaf switches, under the default `kube`
//!   (kube-scheduler's scoring sampling `percentageOfNodesToScore`, its scheduling queue,
//!   DefaultPreemption). About 14 s a replay; the whole `sim run`'s time and peak memory:
//!   `scripts/kube-scale.sh`.
//!
//! `cargo bench -p benches --bench gpu_1m [-- kube_1m]`

use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

/// `jobs` on `cluster` under the default `kube`, ten samples within `secs` seconds.
fn replay(c: &mut Criterion, group: &str, (cluster, jobs): (sim_core::Cluster, Vec<sim_core::Job>), secs: u64) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10).measurement_time(Duration::from_secs(secs)).warm_up_time(Duration::from_secs(1));
    g.bench_function("kube", |b| {
        b.iter(|| {
            let mut p = policies::build("kube").expect("known policy");
            sim_core::simulate(&cluster, &jobs, p.as_mut(), &sim_core::SimConfig::default(), None).expect("run").passes
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    replay(c, "gpu_1m_jobs_16_nodes", benches::gpu_workload(1_000_000, 1), 240);
    replay(c, "kube_1m_jobs_1250_nodes", benches::kube_scale_workload(1_000_000), 200);
}

criterion_group!(benches, bench);
criterion_main!(benches);
