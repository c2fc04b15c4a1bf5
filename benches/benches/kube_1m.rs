//! Issue 16's scale check: 1,000,000 jobs of `examples/models/gpu.toml` with
//! `rate_per_hour = 4800`, seed 3 (`benches::kube_scale_workload`), on 1,250 nodes × 8
//! shared GPUs in two pools under two leaf switches, replayed under `kube` (the default
//! spec: kube-scheduler's scoring sampling `percentageOfNodesToScore`, its scheduling
//! queue, DefaultPreemption). The workload is generated once, outside the timing. About
//! 20 s a replay on a busy 2-core machine; peak memory of the whole `sim run`:
//! `scripts/kube-scale.sh`. `cargo bench -p benches --bench kube_1m`

use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let (cluster, jobs) = benches::kube_scale_workload(1_000_000);
    let mut g = c.benchmark_group("kube_1m_jobs_1250_nodes");
    g.sample_size(10).measurement_time(Duration::from_secs(200)).warm_up_time(Duration::from_secs(1));
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
