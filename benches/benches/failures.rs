//! Issue 19's scale check: the synthetic gang-and-affinity workload of
//! `traces::synthetic` (100,000 jobs, gangs of 1 to 64 GPUs, on 2,000 nodes × 8 GPUs at an
//! offered load of 0.9, as in `gangs`) under `kube` with random node failures at
//! InfiniteHBD's rate (`failures`, detected after 300 s, lognormal repairs), the last
//! rack's 100 nodes a spot pool reclaimed every 2 h on average with a 120 s notice
//! (`spot`), and every job checkpointing at Young's interval (60 s to write, 120 s to
//! restore). Target: under 10 s a replay.
//!
//! `cargo bench -p benches --bench failures`

use criterion::{Criterion, criterion_group, criterion_main};
use sim_core::checkpoint::{CheckpointInterval, Checkpointing};
use sim_core::{Hooks, SimConfig, SimDuration};
use std::time::Duration;
use traces::synthetic::GangWorkload;

fn bench(c: &mut Criterion) {
    let w = GangWorkload::default();
    let (cluster, jobs) = (w.cluster(), w.jobs());
    let spot_pool = cluster.pools.last().expect("pools").name.clone();
    let failures = "failures[mtbf=5714,detect=300]".to_string();
    let spot = format!("spot[pool={spot_pool},reclaim=2,back=1,notice=120]");
    let node_mtbf = controllers::failures::node_mtbf_of(&failures).expect("spec").expect("failures");
    let s = SimDuration::from_secs;
    let cfg = SimConfig {
        checkpointing: Some(Checkpointing {
            interval: CheckpointInterval::Auto { node_mtbf },
            cost: s(60),
            restore: s(120),
        }),
        ..SimConfig::default()
    };
    let mut g = c.benchmark_group("failures_spot_checkpoints_100k_jobs_2000_nodes");
    g.sample_size(10).measurement_time(Duration::from_secs(60)).warm_up_time(Duration::from_secs(1));
    g.bench_function("kube", |b| {
        b.iter(|| {
            let mut p = policies::build("kube").expect("known policy");
            let controllers = [&failures, &spot]
                .iter()
                .enumerate()
                .map(|(i, spec)| controllers::build(spec, 1, i).expect("known controller"))
                .collect();
            let hooks = Hooks { controllers, ..Hooks::default() };
            let r = sim_core::simulate_with(&cluster, &jobs, p.as_mut(), &cfg, hooks).expect("run");
            r.records.iter().map(|r| u64::from(r.attempts)).sum::<u64>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
