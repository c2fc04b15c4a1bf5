//! Prints, for each log in ../shared/traces/swf (or the files given), the time to only
//! read and parse it, and the time to simulate it under each policy (parse excluded).
//!
//! `cargo run --release -p benches --example phase_times [FILES...]`
//! (`POLICIES=easy,conservative` picks the policies; default fcfs,easy,conservative)

use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let mut files: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if files.is_empty() {
        files = benches::shared_swf_logs();
        if files.is_empty() {
            eprintln!("../shared/traces/swf is absent: nothing to time (give files as arguments)");
            return;
        }
    }
    for f in files {
        let t = Instant::now();
        let w = match traces::load(&f, None, None) {
            Ok(w) => w,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let parse = t.elapsed();
        print!(
            "{:<40} jobs {:>7}  parse {:>7.3} s",
            f.file_name().unwrap().to_string_lossy(),
            w.jobs.len(),
            parse.as_secs_f64()
        );
        let specs = std::env::var("POLICIES").unwrap_or_else(|_| "fcfs,easy,conservative".into());
        for spec in specs.split(',') {
            let mut p = policies::build(spec).expect("known policy");
            let t = Instant::now();
            // As `sim run` does by default: units counted, not tracked.
            let cfg = sim_core::SimConfig { track_units: false, ..sim_core::SimConfig::default() };
            let r = sim_core::simulate(&w.cluster, &w.jobs, p.as_mut(), &cfg, None).expect("run");
            print!("  {spec} {:>7.3} s (passes {}, max queue {})", t.elapsed().as_secs_f64(), r.passes, r.max_queue);
        }
        println!();
    }
}
