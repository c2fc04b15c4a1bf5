//! The synthetic gang-and-affinity workload of `traces::synthetic`: 100,000 jobs (gangs
//! of 1 to 64 GPUs, preferred pod anti-affinity, required node affinity) on 2,000 nodes ×
//! 8 GPUs at an offered load of 0.9, replayed under `kube` with atomic gangs and with
//! pod-at-a-time gangs (`gang=none`). Target: under 10 s a replay.
//!
//! `cargo bench -p benches --bench gangs`

use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;
use traces::synthetic::GangWorkload;

fn bench(c: &mut Criterion) {
    let w = GangWorkload::default();
    let (cluster, jobs) = (w.cluster(), w.jobs());
    let mut g = c.benchmark_group("gangs_100k_jobs_2000_nodes");
    g.sample_size(10).measurement_time(Duration::from_secs(40)).warm_up_time(Duration::from_secs(1));
    for spec in ["kube", "kube[gang=none]"] {
        g.bench_function(spec, |b| {
            b.iter(|| {
                let mut p = policies::build(spec).expect("known policy");
                sim_core::simulate(&cluster, &jobs, p.as_mut(), &sim_core::SimConfig::default(), None)
                    .expect("run")
                    .passes
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
