//! The checkpoint-interval curve of `docs/failures.md`: the share of time lost (1 − the
//! effective training time ratio) by one long job, Monte-Carlo against Young's first-order
//! `C/τ + (τ/2 + R)/M`, over checkpoint intervals τ, with Young's interval √(2CM) marked. One job of 400 days of work on one 1-core node of four, each failing
//! with an exponential MTBF of 24 h (detected at once, repaired in 1 h); C = 60 s,
//! R = 120 s; 4 seeds per interval (the setting of the `failures` tests).
//!
//! `cargo run --release -p benches --example ettr_curve [OUT.png]` (default
//! `docs/ettr-curve.png`); prints the points as CSV.

use reports::plots::{Chart, Format, Series};
use sim_core::checkpoint::{CheckpointInterval, Checkpointing};
use sim_core::cluster::{GpuSharing, NodePool, NodeSpec};
use sim_core::{Cluster, Hooks, Job, SimConfig, SimDuration, SimTime};

const WORK: u64 = 400 * 86_400;
const M: f64 = 86_400.0;
const C: f64 = 60.0;
const R: f64 = 120.0;

/// The Monte-Carlo ETTR at `interval` over `seeds`.
fn ettr(interval: CheckpointInterval, seeds: u64) -> f64 {
    let s = SimDuration::from_secs;
    let cluster = Cluster {
        pools: vec![NodePool {
            name: "n".into(),
            count: 4,
            spec: NodeSpec::cores_only(1),
            sharing: GpuSharing::Exclusive,
            group: None,
        }],
    };
    let cfg = SimConfig {
        checkpointing: Some(Checkpointing { interval, cost: s(60), restore: s(120) }),
        ..SimConfig::default()
    };
    let (mut work, mut life) = (0.0, 0.0);
    for seed in 0..seeds {
        let jobs = [Job::rigid("J", SimTime::ZERO, 1, s(WORK), s(WORK))];
        let mut p = policies::build("fcfs").expect("known policy");
        let spec = "failures[mtbf=24,repair=1,repair_sigma=0,detect=0]";
        let hooks = Hooks { controllers: vec![controllers::build(spec, seed, 0).expect("spec")], ..Hooks::default() };
        let r = sim_core::simulate_with(&cluster, &jobs, p.as_mut(), &cfg, hooks).expect("run");
        let rec = &r.records[0];
        work += WORK as f64;
        life += (rec.end.expect("ended").0 - rec.first_start.expect("started").0) as f64 / 1e6;
    }
    work / life
}

fn main() {
    let out = std::env::args().nth(1).unwrap_or_else(|| "docs/ettr-curve.png".into());
    let young = |tau: f64| 1.0 - C / tau - (tau / 2.0 + R) / M;
    let taus: Vec<f64> = (0..=16).map(|i| 600.0 * (1.25f64).powi(i)).collect();
    println!("tau_s,ettr_monte_carlo,ettr_young");
    let mut mc = Vec::new();
    for &tau in &taus {
        let e = ettr(CheckpointInterval::Every(SimDuration((tau * 1e6) as u64)), 4);
        println!("{tau:.0},{e:.5},{:.5}", young(tau));
        mc.push((tau, e));
    }
    let auto_tau = (2.0 * C * M).sqrt();
    let auto = ettr(CheckpointInterval::Auto { node_mtbf: SimDuration::from_secs(86_400) }, 4);
    println!("auto {auto_tau:.0},{auto:.5},{:.5}", young(auto_tau));
    // Plotted as the share of time lost, 1 − ETTR: the U-shaped curve.
    let lost = |v: &[(f64, f64)]| v.iter().map(|&(t, e)| (t, 1.0 - e)).collect::<Vec<_>>();
    let series = vec![
        Series { name: "Monte-Carlo".into(), points: lost(&mc) },
        Series {
            name: "Young, 1st order".into(),
            points: taus.iter().map(|&t| (t, C / t + (t / 2.0 + R) / M)).collect(),
        },
        Series { name: format!("auto: {auto_tau:.0} s"), points: vec![(auto_tau, 0.0), (auto_tau, 1.0 - auto)] },
    ];
    let chart = Chart {
        title: "Time lost by a 400-day job: MTBF 24 h, C = 60 s, R = 120 s",
        x_label: "checkpoint interval τ (s)",
        y_label: "share of time lost, 1 − ETTR",
        log_x: true,
    };
    let png = reports::plots::lines(&chart, &series, false, Format::Png).expect("plot");
    std::fs::write(&out, png).expect("write the plot");
    eprintln!("wrote {out}");
}
