//! Issue 19's scale check: the synthetic gang-and-affinity workload of
//! `traces::synthetic` (100,000 jobs, gangs of 1 to 64 GPUs, on 2,000 nodes × 8 GPUs at an
//! offered load of 0.9, as in `gangs`) under `kube` with random node failures at
//! InfiniteHBD's rate (`failures`, detected after 300 s, lognormal repairs), the last
//! rack's 100 nodes a spot pool reclaimed every 2 h on average with a 120 s notice
//! (`spot`), and every job checkpointing at Young's interval (60 s to write, 120 s to
//! restore). Target: under 10 s a replay.
//!
//! `cargo bench -p benches --bench failures`

use benches::FailuresScenario;
use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let sc = FailuresScenario::new();
    let mut g = c.benchmark_group("failures_spot_checkpoints_100k_jobs_2000_nodes");
    g.sample_size(10).measurement_time(Duration::from_secs(60)).warm_up_time(Duration::from_secs(1));
    g.bench_function("kube", |b| b.iter(|| sc.replay(&[&sc.failures, &sc.spot], true).1));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
