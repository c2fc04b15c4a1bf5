//! Instruction counts (callgrind, through gungraun) of the criterion benches' scenarios at
//! sizes that take seconds under valgrind: the CI gate (`scripts/bench-gate.sh`, baseline in
//! `benches/instructions.baseline.tsv`). Loading a trace is setup, outside the count, except
//! in `parse` where it is what is measured.
//!
//! * `parse`: parse the committed KTH-SP2 slice (3,000 jobs) from its gzip bytes, read from
//!   disk in the setup. Only the benchmark's thread is counted: the gunzip runs on the
//!   reader thread of `traces::input`, which callgrind leaves out;
//! * `easy`, `conservative`: replays of that slice;
//! * `fgd`: the FGD paper's protocol (placement `fgd`, seed 42, tuned to 1.3) on the committed
//!   openb slices (400 pods, 61 nodes);
//! * `gpu`: the first 10,000 jobs of the 1,000,000-job criterion bench `gpu_1m`
//!   (`benches::gpu_workload`: `examples/models/gpu.toml`, seed 1) on 16 nodes × 8 GPUs
//!   under `kube`.
//!
//! Needs valgrind and `gungraun-runner` 0.20.0 on the PATH (or `GUNGRAUN_RUNNER`):
//! `cargo bench -p benches --bench instructions`.

use gungraun::prelude::*;
use policies::fgd_protocol::{self, Pod};
use sim_core::{Cluster, Job, SimConfig};
use std::hint::black_box;
use std::path::PathBuf;

/// A file of the workspace's `data/`.
fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data").join(name)
}

const KTH: &str = "KTH-SP2-1996-2.1-cln.first3000.swf.gz";

/// The compressed bytes of a committed SWF slice (leaked: `load_bytes` wants them static).
fn swf_bytes(name: &str) -> &'static [u8] {
    Box::leak(std::fs::read(data(name)).expect("a committed slice").into_boxed_slice())
}

/// A committed SWF slice, parsed.
fn swf_workload(name: &str) -> traces::Workload {
    traces::load(&data(name), None, None).expect("a committed slice")
}

/// The committed openb slices: the cluster (GPUs shared) and the pods.
fn openb() -> (Cluster, Vec<Pod>) {
    let nodes = std::fs::read(data("openb/openb_node_list_gpu_node.every20th.csv")).expect("openb nodes");
    let nodes = traces::openb::parse_nodes("nodes", &nodes).expect("openb nodes");
    let cluster = traces::openb::cluster(&nodes, sim_core::GpuSharing::Shared, traces::openb::UNKNOWN_GPU_MEMORY_MIB);
    let pods = std::fs::read(data("openb/openb_pod_list_default.first400.csv")).expect("openb pods");
    let pods = traces::openb::parse_pods("pods", &pods)
        .expect("openb pods")
        .iter()
        .map(|p| Pod { name: p.name.clone(), task: p.task(), models: p.gpu_spec.clone() })
        .collect();
    (cluster, pods)
}

/// Replays `jobs` on `cluster` under the policy `spec`; returns the passes run.
fn replay(cluster: &Cluster, jobs: &[Job], spec: &str, cfg: &SimConfig) -> u64 {
    let mut p = policies::build(spec).expect("a known policy");
    sim_core::simulate(cluster, jobs, p.as_mut(), cfg, None).expect("a run").passes
}

#[library_benchmark]
#[bench::kth_first3000(args = (KTH), setup = swf_bytes)]
fn parse(bytes: &'static [u8]) -> usize {
    black_box(traces::load_bytes(black_box(bytes), KTH, None, None).expect("a valid slice").jobs.len())
}

#[library_benchmark]
#[bench::kth_first3000(args = (KTH), setup = swf_workload)]
fn easy(w: traces::Workload) -> u64 {
    let cfg = SimConfig { track_units: false, ..SimConfig::default() };
    black_box(replay(&w.cluster, black_box(&w.jobs), "easy", &cfg))
}

#[library_benchmark]
#[bench::kth_first3000(args = (KTH), setup = swf_workload)]
fn conservative(w: traces::Workload) -> u64 {
    let cfg = SimConfig { track_units: false, ..SimConfig::default() };
    black_box(replay(&w.cluster, black_box(&w.jobs), "conservative", &cfg))
}

#[library_benchmark]
#[bench::openb_slice(setup = openb)]
fn fgd(input: (Cluster, Vec<Pod>)) -> usize {
    let (cluster, pods) = input;
    black_box(fgd_protocol::run(&cluster, black_box(&pods), "fgd", 42, 1.3).expect("a run").placed)
}

/// The GPU workload of the `gpu_1m` bench, 10,000 jobs.
fn gpu_10k() -> (Cluster, Vec<Job>) {
    benches::gpu_workload(10_000, 1)
}

#[library_benchmark]
#[bench::kube_10k(setup = gpu_10k)]
fn gpu(input: (Cluster, Vec<Job>)) -> u64 {
    let (cluster, jobs) = input;
    black_box(replay(&cluster, black_box(&jobs), "kube", &SimConfig::default()))
}

library_benchmark_group!(name = swf, benchmarks = [parse, easy, conservative]);
library_benchmark_group!(name = gpus, benchmarks = [fgd, gpu]);

main!(library_benchmark_groups = swf, gpus);
