//! The FGD paper's protocol on Alibaba's openb default workload (`../shared/traces/openb`):
//! one run per placement (seed 42), and the whole experiment — the six placements × seeds
//! 42..51, in parallel as `sim fgd` runs them. When the folder is absent the bench says so
//! and measures the committed slices instead.
//!
//! `cargo bench -p benches --bench fgd`

use criterion::{Criterion, criterion_group, criterion_main};
use policies::fgd_protocol::{self, Pod};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

use policies::fgd_protocol::PAPER_POLICIES as POLICIES;

fn inputs() -> (PathBuf, PathBuf) {
    let shared = benches::shared_openb_dir();
    let nodes = shared.join("openb_node_list_gpu_node.csv");
    let pods = shared.join("openb_pod_list_default.csv");
    if nodes.exists() && pods.exists() {
        return (nodes, pods);
    }
    eprintln!("note: {} is absent; benchmarking the committed openb slices", shared.display());
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/openb");
    (data.join("openb_node_list_gpu_node.every20th.csv"), data.join("openb_pod_list_default.first400.csv"))
}

fn bench(c: &mut Criterion) {
    let (nodes, pods) = inputs();
    let n = traces::openb::parse_nodes("nodes", &std::fs::read(&nodes).unwrap()).unwrap();
    let cluster = traces::openb::cluster(&n, sim_core::GpuSharing::Shared, traces::openb::UNKNOWN_GPU_MEMORY_MIB);
    let pods: Vec<Pod> = traces::openb::parse_pods("pods", &std::fs::read(&pods).unwrap())
        .unwrap()
        .iter()
        .map(|p| Pod { name: p.name.clone(), task: p.task(), models: p.gpu_spec.clone() })
        .collect();
    let mut g = c.benchmark_group("fgd_default");
    g.sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(1));
    for &p in POLICIES {
        g.bench_function(p, |b| b.iter(|| fgd_protocol::run(&cluster, &pods, p, 42, 1.3).unwrap()));
    }
    g.bench_function("six_policies_x_10_seeds", |b| {
        b.iter(|| {
            let runs: Vec<(&str, u64)> = POLICIES.iter().flat_map(|&p| (42..52).map(move |s| (p, s))).collect();
            runs.par_iter().map(|&(p, s)| fgd_protocol::run(&cluster, &pods, p, s, 1.3).unwrap().placed).sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
