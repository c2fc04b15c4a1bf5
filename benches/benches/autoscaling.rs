//! Issue 20's scale check: a month of the `autoscaling-day` example (two autoscaled A100
//! groups under the Cluster Autoscaler, a chat service under the HPA with a rate point and
//! a latency evaluation every 10 s) beside 10,000 Philly-like training jobs
//! ([`benches::AutoscalingMonth`]). Target: under 10 s a replay.
//!
//! `cargo bench -p benches --bench autoscaling`

use benches::AutoscalingMonth;
use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let sc = AutoscalingMonth::new();
    let mut g = c.benchmark_group("autoscaling_month_10k_jobs_service_hpa");
    g.sample_size(10).measurement_time(Duration::from_secs(20)).warm_up_time(Duration::from_secs(1));
    g.bench_function("kube", |b| b.iter(|| sc.replay()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
