//! Times the replay of the `failures` bench once with each of its parts alone and all
//! together: `plain` (kube only), `ckpt` (checkpoints at Young's interval), `failures`,
//! `spot`, `all`; prints the seconds, the scheduling passes and the attempts.
//!
//! `cargo run --release -p benches --example failure_times [CASE ...]` (default: every case)
use sim_core::checkpoint::{CheckpointInterval, Checkpointing};
use sim_core::{Hooks, SimConfig, SimDuration};
use std::time::Instant;
use traces::synthetic::GangWorkload;

fn main() {
    let w = GangWorkload::default();
    let (cluster, jobs) = (w.cluster(), w.jobs());
    let spot_pool = cluster.pools.last().expect("pools").name.clone();
    let failures = "failures[mtbf=5714,detect=300]".to_string();
    let spot = format!("spot[pool={spot_pool},reclaim=2,back=1,notice=120]");
    let node_mtbf = controllers::failures::node_mtbf_of(&failures).expect("spec").expect("failures");
    let s = SimDuration::from_secs;
    let ck = Checkpointing { interval: CheckpointInterval::Auto { node_mtbf }, cost: s(60), restore: s(120) };
    let which: Vec<String> = std::env::args().skip(1).collect();
    let cases: Vec<(&str, Vec<&String>, bool)> = vec![
        ("plain", vec![], false),
        ("ckpt", vec![], true),
        ("failures", vec![&failures], false),
        ("spot", vec![&spot], false),
        ("all", vec![&failures, &spot], true),
    ];
    for (name, specs, with_ck) in cases {
        if !which.is_empty() && !which.iter().any(|w| w == name) {
            continue;
        }
        let cfg = SimConfig { checkpointing: with_ck.then_some(ck), ..SimConfig::default() };
        let mut p = policies::build("kube").expect("known policy");
        let controllers =
            specs.iter().enumerate().map(|(i, spec)| controllers::build(spec, 1, i).expect("c")).collect();
        let hooks = Hooks { controllers, ..Hooks::default() };
        let t = Instant::now();
        let r = sim_core::simulate_with(&cluster, &jobs, p.as_mut(), &cfg, hooks).expect("run");
        let attempts: u64 = r.records.iter().map(|r| u64::from(r.attempts)).sum();
        println!("{name:<10} {:>6.2} s passes {:>8} attempts {attempts}", t.elapsed().as_secs_f64(), r.passes);
    }
}
