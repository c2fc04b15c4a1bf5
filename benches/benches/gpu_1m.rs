//! A 1,000,000-job synthetic GPU workload (`benches::gpu_workload`: jobs drawn from
//! `examples/models/gpu.toml`, seed 1, arrivals 1.6 × the model's rate) on 16 nodes × 8 GPUs
//! shared by memory, at an offered load of about 0.78, replayed under `kube`. The workload is
//! generated once, outside the timing. About 26 s a replay on a busy 2-core machine, so
//! the bench takes about 5 minutes. `cargo bench -p benches --bench gpu_1m`
//!
//! The instruction-count gate (`instructions`, `scripts/bench-gate.sh`) replays the first
//! 10,000 of these jobs.

use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let (cluster, jobs) = benches::gpu_workload(1_000_000, 1);
    let mut g = c.benchmark_group("gpu_1m_jobs_16_nodes");
    g.sample_size(10).measurement_time(Duration::from_secs(240)).warm_up_time(Duration::from_secs(1));
    g.bench_function("kube", |b| {
        b.iter(|| {
            let mut p = policies::build("kube").expect("known policy");
            sim_core::simulate(&cluster, &jobs, p.as_mut(), &sim_core::SimConfig::default(), None).expect("run").passes
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
