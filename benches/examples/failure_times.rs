//! Times the replay of the `failures` bench once with each of its parts alone and all
//! together: `plain` (kube only), `ckpt` (checkpoints at Young's interval), `failures`,
//! `spot`, `all`; prints the seconds, the scheduling passes and the attempts.
//!
//! `cargo run --release -p benches --example failure_times [CASE ...]` (default: every case)
use benches::FailuresScenario;
use std::time::Instant;

fn main() {
    let sc = FailuresScenario::new();
    let which: Vec<String> = std::env::args().skip(1).collect();
    let cases: Vec<(&str, Vec<&String>, bool)> = vec![
        ("plain", vec![], false),
        ("ckpt", vec![], true),
        ("failures", vec![&sc.failures], false),
        ("spot", vec![&sc.spot], false),
        ("all", vec![&sc.failures, &sc.spot], true),
    ];
    for (name, specs, with_ck) in cases {
        if !which.is_empty() && !which.iter().any(|w| w == name) {
            continue;
        }
        let t = Instant::now();
        let (passes, attempts) = sc.replay(&specs, with_ck);
        println!("{name:<10} {:>6.2} s passes {passes:>8} attempts {attempts}", t.elapsed().as_secs_f64());
    }
}
