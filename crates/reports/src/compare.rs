//! Comparing policies over seeds (`sim compare`, `comparison.csv`): for each policy and
//! metric, the mean over its runs with a 95 % confidence interval (Student's t, n − 1
//! degrees of freedom), and the change of that mean against the first policy's.
//!
//! The metrics are read from each run's `summary.json`, so the comparison's numbers are
//! exactly those of the runs.

use serde_json::Value;
use std::io::Write;

/// A metric of `summary.json` compared across policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// Its key in `summary.json`.
    pub key: &'static str,
    /// How the report names it.
    pub label: &'static str,
    /// Whether a lower value is better (waits) or a higher one (utilization).
    pub lower_is_better: bool,
}

/// The compared metrics, in report order.
pub const METRICS: [Metric; 9] = [
    Metric { key: "wait_mean", label: "mean wait (s)", lower_is_better: true },
    Metric { key: "wait_median", label: "median wait (s)", lower_is_better: true },
    Metric { key: "wait_p95", label: "p95 wait (s)", lower_is_better: true },
    Metric { key: "wait_max", label: "max wait (s)", lower_is_better: true },
    Metric { key: "bounded_slowdown_mean", label: "mean bounded slowdown", lower_is_better: true },
    Metric { key: "utilization", label: "utilization", lower_is_better: false },
    Metric { key: "makespan", label: "makespan (s)", lower_is_better: true },
    Metric { key: "gpu_hours", label: "GPU-hours", lower_is_better: false },
    Metric { key: "gpu_energy_kwh", label: "GPU energy (kWh)", lower_is_better: true },
];

/// One run: its policy spec, seed and `summary.json`.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// The policy spec as the run's summary gives it.
    pub policy: String,
    /// Its seed.
    pub seed: u64,
    /// Its `summary.json`.
    pub summary: Value,
}

/// One policy's figure for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// The policy.
    pub policy: String,
    /// The metric.
    pub metric: Metric,
    /// Runs (seeds).
    pub n: usize,
    /// Mean over the runs.
    pub mean: f64,
    /// Half-width of the 95 % confidence interval (0 for one run).
    pub ci95: f64,
    /// (mean − the first policy's mean) / the first policy's mean, in percent; `None` for
    /// the first policy itself or when its mean is 0.
    pub change_pct: Option<f64>,
}

/// Two-sided 95 % Student's t quantile for `df` degrees of freedom.
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// Mean and 95 % confidence half-width of `xs` (summed in order).
pub fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    (mean, t95(n - 1) * (var / n as f64).sqrt())
}

/// The policies in the order they first appear in `runs`.
pub fn policies(runs: &[RunSummary]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        if !out.contains(&r.policy) {
            out.push(r.policy.clone());
        }
    }
    out
}

/// Every policy × metric, policies in first-seen order (the first is the baseline).
pub fn compare(runs: &[RunSummary]) -> Vec<Compared> {
    let pols = policies(runs);
    let mut out = Vec::new();
    for m in METRICS {
        let mut base: Option<f64> = None;
        for p in &pols {
            let xs: Vec<f64> =
                runs.iter().filter(|r| &r.policy == p).filter_map(|r| r.summary.get(m.key)?.as_f64()).collect();
            let (mean, ci95) = mean_ci(&xs);
            let change_pct = match base {
                None => {
                    base = Some(mean);
                    None
                }
                Some(b) if b != 0.0 => Some((mean - b) / b * 100.0),
                Some(_) => None,
            };
            out.push(Compared { policy: p.clone(), metric: m, n: xs.len(), mean, ci95, change_pct });
        }
    }
    out
}

/// A float for a CSV cell: fixed six decimals (byte-stable), empty for NaN.
fn cell(v: f64) -> String {
    if v.is_finite() { format!("{v:.6}") } else { String::new() }
}

/// Writes `comparison.csv`: `policy,metric,runs,mean,ci95_low,ci95_high,change_vs_first_pct`.
pub fn write_csv(out: &mut dyn Write, rows: &[Compared]) -> std::io::Result<()> {
    let mut w = csv::WriterBuilder::new().from_writer(out);
    w.write_record(["policy", "metric", "runs", "mean", "ci95_low", "ci95_high", "change_vs_first_pct"])?;
    for c in rows {
        w.write_record([
            c.policy.clone(),
            c.metric.key.to_string(),
            c.n.to_string(),
            cell(c.mean),
            cell(c.mean - c.ci95),
            cell(c.mean + c.ci95),
            c.change_pct.map(cell).unwrap_or_default(),
        ])?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(policy: &str, seed: u64, wait: f64) -> RunSummary {
        RunSummary {
            policy: policy.into(),
            seed,
            summary: serde_json::json!({ "wait_mean": wait, "utilization": 0.5 }),
        }
    }

    #[test]
    fn means_intervals_and_changes() {
        let runs = [run("fcfs", 1, 100.0), run("fcfs", 2, 200.0), run("easy", 1, 50.0), run("easy", 2, 50.0)];
        let c = compare(&runs);
        let wait: Vec<&Compared> = c.iter().filter(|c| c.metric.key == "wait_mean").collect();
        assert_eq!((wait[0].policy.as_str(), wait[0].mean, wait[0].n), ("fcfs", 150.0, 2));
        // s = 70.71, t(1) = 12.706: 12.706 × 70.71 / √2 = 635.3.
        assert!((wait[0].ci95 - 635.3).abs() < 0.1, "{}", wait[0].ci95);
        assert_eq!((wait[1].mean, wait[1].ci95, wait[1].change_pct), (50.0, 0.0, Some((50.0 - 150.0) / 150.0 * 100.0)));
        let mut out = Vec::new();
        write_csv(&mut out, &c).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("easy,wait_mean,2,50.000000,50.000000,50.000000,-66.666667"), "{text}");
        // A metric a summary lacks has no runs.
        assert!(text.contains("fcfs,gpu_hours,0,0.000000,0.000000,0.000000,"), "{text}");
    }
}
