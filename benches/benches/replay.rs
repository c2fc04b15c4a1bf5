//! Whole-log replay benches on the Parallel Workloads Archive logs in
//! `../shared/traces/swf`: reading and parsing alone, then EASY and conservative replays.
//! When the folder is absent the bench says so and measures only the committed slice.
//!
//! `cargo bench -p benches --bench replay` (add `-- KTH` to pick logs by name).

use criterion::{Criterion, criterion_group, criterion_main};
use std::path::PathBuf;
use std::time::Duration;

fn logs() -> Vec<PathBuf> {
    let shared = benches::shared_swf_logs();
    if shared.is_empty() {
        eprintln!("note: {} is absent; benchmarking only the committed KTH slice", benches::shared_swf_dir().display());
        return vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/KTH-SP2-1996-2.1-cln.first3000.swf.gz")];
    }
    shared
}

fn bench(c: &mut Criterion) {
    for log in logs() {
        let name = log.file_name().unwrap().to_string_lossy().replace(".swf.gz", "");
        let mut g = c.benchmark_group(name);
        g.sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(1));
        g.bench_function("parse", |b| b.iter(|| traces::load(&log, None, None).unwrap()));
        let w = traces::load(&log, None, None).unwrap();
        for spec in ["easy", "conservative"] {
            g.bench_function(spec, |b| {
                b.iter(|| {
                    let mut p = policies::build(spec).unwrap();
                    let cfg = sim_core::SimConfig { track_units: false, ..sim_core::SimConfig::default() };
                    sim_core::simulate(&w.cluster, &w.jobs, p.as_mut(), &cfg, None).unwrap()
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
