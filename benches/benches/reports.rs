//! The reports of a 1,000,000-job run: per-job frame to group tables, time series,
//! comparison, plots (SVG and PNG) and report.html, all in memory (`reports::report::build`),
//! on a synthetic frame shaped like a busy batch log. Target: under 10 s.
//!
//! `cargo bench -p benches --bench reports`

use criterion::{Criterion, criterion_group, criterion_main};
use reports::frame::JobRow;
use reports::report::{RunData, build};
use std::time::Duration;

/// A deterministic 1M-job frame: arrivals every 3 s, waits and run times spread by a
/// fixed multiplicative hash, sizes 1–256 of a 4,096-unit machine.
fn frame(n: u64) -> Vec<JobRow> {
    (0..n)
        .map(|i| {
            let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let submit = i * 3_000_000;
            let wait = (h >> 40) % 7_200_000_000;
            let run = 1_000_000 + (h >> 20) % 36_000_000_000;
            JobRow {
                id: i.to_string(),
                submit_us: submit,
                start_us: Some(submit + wait),
                end_us: Some(submit + wait + run),
                requested_us: Some(run * 2),
                units: 1 << ((h >> 8) % 9),
                gpu_milli: 0,
                gpu_milli_held: 0,
                user: ((h >> 30) % 500) as u32,
                group: 0,
                queue: ((h >> 50) % 4) as i32,
                partition: -1,
                kind: "batch".into(),
                outcome: "completed".into(),
                oom_kills: 0,
                allocated: Vec::new(),
                observed_wait_us: None,
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let runs = vec![RunData {
        name: "easy__seed1".into(),
        summary: serde_json::json!({
            "policy": "easy", "seed": 1, "machine_units": 4096, "machine_gpus": 0,
            "wait_mean": 1.0, "utilization": 0.5
        }),
        rows: frame(1_000_000),
        fragmentation: Vec::new(),
    }];
    let mut g = c.benchmark_group("reports_1m_jobs");
    g.sample_size(10).measurement_time(Duration::from_secs(30)).warm_up_time(Duration::from_secs(1));
    g.bench_function("build", |b| b.iter(|| build(&runs).expect("report").len()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
