//! Times replays of the synthetic gang-and-affinity workload (`traces::synthetic`: by
//! default 100,000 jobs on 2,000 nodes × 8 GPUs) under each policy given, and prints
//! the outcomes and the GPU-hours held by incomplete gangs.
//!
//! `cargo run --release -p benches --example gang_times [JOBS] [LOAD] [POLICY ...]`
//! (default: 100000 jobs, offered load 0.9, `kube` and `kube[gang=none]`)

use std::time::Instant;
use traces::synthetic::GangWorkload;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let jobs = args.first().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let load = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0.9);
    let mut specs: Vec<String> = args.iter().skip(2).cloned().collect();
    if specs.is_empty() {
        specs = vec!["kube".into(), "kube[gang=none]".into()];
    }
    let w = GangWorkload { jobs, load, ..GangWorkload::default() };
    let t = Instant::now();
    let (cluster, work) = (w.cluster(), w.jobs());
    println!(
        "{} jobs, {} nodes, offered load {load}: generated in {:.2} s",
        work.len(),
        cluster.node_count(),
        t.elapsed().as_secs_f64()
    );
    for spec in specs {
        let mut p = policies::build(&spec).expect("known policy");
        let t = Instant::now();
        let r = sim_core::simulate(&cluster, &work, p.as_mut(), &sim_core::SimConfig::default(), None).expect("run");
        let secs = t.elapsed().as_secs_f64();
        let mut outcomes = std::collections::BTreeMap::new();
        for rec in &r.records {
            *outcomes.entry(format!("{:?}", rec.outcome)).or_insert(0u64) += 1;
        }
        let held: u64 = r.records.iter().map(|x| x.gang_held_gpu_milli_us).sum();
        let wait: f64 = r
            .records
            .iter()
            .zip(&work)
            .filter_map(|(x, j)| x.start.map(|s| (s.as_micros() - j.submit.as_micros()) as f64 / 1e6))
            .sum::<f64>()
            / r.records.len() as f64;
        println!(
            "{spec:<40} {secs:>7.2} s  passes {:>7}  max queue {:>6}  mean wait {wait:>9.0} s  gang-held GPU-h {:>9.1}  {outcomes:?}",
            r.passes,
            r.max_queue,
            held as f64 / 1000.0 / 3.6e9
        );
    }
}
