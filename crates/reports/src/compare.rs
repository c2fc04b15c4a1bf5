//! Comparing policies over seeds (`sim compare`, `comparison.csv`): for each policy and
//! metric, the mean over its runs with a 95 % confidence interval (Student's t, n − 1
//! degrees of freedom), the change of that mean against the first policy's (the
//! baseline), and the paired difference to the baseline: seed by seed, each policy minus
//! the baseline on the same seed (with `--perturb`, the same workload), its mean and its
//! own 95 % interval — significant when that interval excludes 0.
//!
//! A policy whose runs are all alike on a workload that no seed varied (a deterministic
//! policy replaying one trace) is one run, not n: its seeds would only give an interval of
//! zero width; the report says so.
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
    /// Left out of a comparison where no run has it (interruptions, the bill).
    pub optional: bool,
}

/// The compared metrics, in report order.
pub const METRICS: [Metric; 25] = [
    Metric { key: "wait_mean", label: "mean wait (s)", lower_is_better: true, optional: false },
    Metric { key: "wait_median", label: "median wait (s)", lower_is_better: true, optional: false },
    Metric { key: "wait_p95", label: "p95 wait (s)", lower_is_better: true, optional: false },
    Metric { key: "wait_max", label: "max wait (s)", lower_is_better: true, optional: false },
    Metric { key: "bounded_slowdown_mean", label: "mean bounded slowdown", lower_is_better: true, optional: false },
    Metric { key: "utilization", label: "utilization", lower_is_better: false, optional: false },
    Metric { key: "makespan", label: "makespan (s)", lower_is_better: true, optional: false },
    Metric { key: "gpu_hours", label: "GPU-hours", lower_is_better: false, optional: false },
    Metric { key: "gpu_energy_kwh", label: "GPU energy (kWh)", lower_is_better: true, optional: false },
    Metric { key: "oom_kills", label: "OOM kills", lower_is_better: true, optional: false },
    Metric {
        key: "gang_held_gpu_hours",
        label: "GPU-hours held by partial gangs",
        lower_is_better: true,
        optional: false,
    },
    Metric { key: "ettr", label: "ETTR", lower_is_better: false, optional: true },
    Metric { key: "lost_gpu_hours", label: "GPU-hours lost", lower_is_better: true, optional: true },
    Metric { key: "lost_core_hours", label: "core-hours lost", lower_is_better: true, optional: true },
    Metric { key: "cost_total", label: "bill", lower_is_better: true, optional: true },
    Metric {
        key: "cost_per_useful_gpu_hour",
        label: "cost per useful GPU-hour",
        lower_is_better: true,
        optional: true,
    },
    Metric { key: "slo_violation_minutes", label: "SLO-violation minutes", lower_is_better: true, optional: true },
    Metric { key: "p99_latency_s", label: "p99 latency (s)", lower_is_better: true, optional: true },
    // Slurm and Kubernetes on one cluster (`domains` of summary.json).
    Metric { key: "slurm_wait_mean", label: "Slurm mean wait (s)", lower_is_better: true, optional: true },
    Metric { key: "slurm_wait_p95", label: "Slurm p95 wait (s)", lower_is_better: true, optional: true },
    Metric {
        key: "slurm_gpu_utilization",
        label: "Slurm nodes' GPU utilization",
        lower_is_better: false,
        optional: true,
    },
    Metric { key: "kubernetes_wait_mean", label: "Kubernetes mean wait (s)", lower_is_better: true, optional: true },
    Metric { key: "kubernetes_wait_p95", label: "Kubernetes p95 wait (s)", lower_is_better: true, optional: true },
    Metric {
        key: "kubernetes_gpu_utilization",
        label: "Kubernetes nodes' GPU utilization",
        lower_is_better: false,
        optional: true,
    },
    Metric { key: "node_moves", label: "node moves", lower_is_better: true, optional: true },
];

/// A metric's value in a run's `summary.json`: a top-level number, or for the optional
/// ones the figure of its `interruptions` (`ettr`; `lost_gpu_hours`, `lost_core_hours`
/// summed over their causes) or `cost` (`cost_total`, `cost_per_useful_gpu_hour`) object, or
/// the inference services' `controllers` figures (`slo_violation_minutes` summed,
/// `p99_latency_s` the largest), or a scheduling domain's figure (`slurm_wait_mean`:
/// `domains.slurm.wait_mean`).
pub fn metric_value(summary: &Value, key: &str) -> Option<f64> {
    for d in ["slurm", "kubernetes"] {
        if let Some(field) = key.strip_prefix(d).and_then(|k| k.strip_prefix('_')) {
            return summary.pointer(&format!("/domains/{d}/{field}")).and_then(Value::as_f64);
        }
    }
    let sum = |path: &str| {
        summary.pointer(path).and_then(Value::as_object).map(|o| o.values().filter_map(Value::as_f64).sum())
    };
    match key {
        "ettr" => summary.pointer("/interruptions/ettr").and_then(Value::as_f64),
        "lost_gpu_hours" => sum("/interruptions/lost_gpu_hours"),
        "lost_core_hours" => sum("/interruptions/lost_core_hours"),
        "cost_total" => summary.pointer("/cost/total").and_then(Value::as_f64),
        "cost_per_useful_gpu_hour" => summary.pointer("/cost/per_useful_gpu_hour").and_then(Value::as_f64),
        // The inference services' figures (`controllers`): violation minutes summed, the
        // worst p99.
        "slo_violation_minutes" | "p99_latency_s" => {
            let figure = if key == "p99_latency_s" { "p99_s" } else { key };
            let values: Vec<f64> = summary
                .get("controllers")
                .and_then(Value::as_array)?
                .iter()
                .filter_map(|c| c.pointer(&format!("/figures/{figure}")).and_then(Value::as_f64))
                .collect();
            if values.is_empty() {
                None
            } else if key == "p99_latency_s" {
                Some(values.iter().copied().fold(0.0, f64::max))
            } else {
                Some(values.iter().sum())
            }
        }
        _ => summary.get(key).and_then(Value::as_f64),
    }
}

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

impl RunSummary {
    /// The policy as the user spelled it (`policy_given`), else its canonical spec.
    pub fn label(&self) -> String {
        label_of(&self.summary, &self.policy)
    }

    /// Whether its workload was varied per seed (`--perturb`).
    pub fn perturbed(&self) -> bool {
        self.summary.get("perturb").is_some_and(|p| !p.is_null())
    }
}

/// A run's label: the policy as the user spelled it (`policy_given`) with the settings
/// `sim compare --vary` gave it, else `policy` (the spec, those settings included).
pub fn label_of(summary: &Value, policy: &str) -> String {
    match summary.get("policy_given").and_then(Value::as_str) {
        Some(given) => given.to_string() + &variant_suffix(summary),
        None => policy.to_string(),
    }
}

/// ` key=value` for each setting `sim compare --vary` gave a run (empty when none).
pub fn variant_suffix(summary: &Value) -> String {
    let Some(v) = summary.get("variant").and_then(Value::as_object) else { return String::new() };
    v.iter().map(|(k, x)| format!(" {k}={}", x.as_str().unwrap_or("?"))).collect()
}

/// The paired difference of a policy to the baseline on one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delta {
    /// Seeds both ran.
    pub n: usize,
    /// Mean of (policy − baseline) over those seeds.
    pub mean: f64,
    /// Half-width of its 95 % confidence interval (0 for one pair).
    pub ci95: f64,
}

impl Delta {
    /// Whether the interval excludes 0 (`None` when there is no interval: one pair).
    pub fn significant(&self) -> Option<bool> {
        (self.n >= 2 && self.ci95.is_finite()).then(|| self.mean.abs() > self.ci95)
    }
}

/// One policy's figure for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// The policy.
    pub policy: String,
    /// The policy as the user spelled it.
    pub label: String,
    /// Its runs were all alike on an unvaried workload: counted as one run.
    pub deterministic: bool,
    /// The paired difference to the baseline (`None` for the baseline itself).
    pub delta: Option<Delta>,
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

/// The runs of policy `p`, in the order given; when they are all alike on a workload no
/// seed varied, only the first (and `true`).
fn runs_of<'a>(runs: &'a [RunSummary], p: &str) -> (Vec<&'a RunSummary>, bool) {
    let mine: Vec<&RunSummary> = runs.iter().filter(|r| r.policy == p).collect();
    let figures = |r: &RunSummary| METRICS.map(|m| metric_value(&r.summary, m.key));
    let alike =
        mine.len() > 1 && mine.iter().all(|r| !r.perturbed()) && mine.iter().all(|r| figures(r) == figures(mine[0]));
    if alike { (mine[..1].to_vec(), true) } else { (mine, false) }
}

/// Every policy × metric, policies in first-seen order (the first is the baseline).
pub fn compare(runs: &[RunSummary]) -> Vec<Compared> {
    let pols = policies(runs);
    let of: Vec<(Vec<&RunSummary>, bool)> = pols.iter().map(|p| runs_of(runs, p)).collect();
    let mut out = Vec::new();
    for m in METRICS {
        let value = |r: &RunSummary| metric_value(&r.summary, m.key);
        if m.optional && runs.iter().all(|r| value(r).is_none()) {
            continue;
        }
        let base_runs = &of[0].0;
        let mut base: Option<f64> = None;
        for (k, p) in pols.iter().enumerate() {
            let (mine, deterministic) = &of[k];
            let xs: Vec<f64> = mine.iter().filter_map(|r| value(r)).collect();
            let (mean, ci95) = mean_ci(&xs);
            let change_pct = match base {
                None => {
                    base = Some(mean);
                    None
                }
                Some(b) if b != 0.0 => Some((mean - b) / b * 100.0),
                Some(_) => None,
            };
            let delta = (k > 0).then(|| paired(base_runs, mine, value)).flatten();
            let label = mine.first().map_or_else(|| p.clone(), |r| r.label());
            out.push(Compared {
                policy: p.clone(),
                label,
                deterministic: *deterministic,
                delta,
                metric: m,
                n: xs.len(),
                mean,
                ci95,
                change_pct,
            });
        }
    }
    out
}

/// The paired difference `mine − base` over the seeds both have a value for, in `mine`'s
/// order; a deterministic side (one run) pairs with every seed of the other.
fn paired(base: &[&RunSummary], mine: &[&RunSummary], value: impl Fn(&RunSummary) -> Option<f64>) -> Option<Delta> {
    let base_of = |seed: u64| {
        if base.len() == 1 { base.first() } else { base.iter().find(|r| r.seed == seed) }.and_then(|r| value(r))
    };
    let ds: Vec<f64> = if mine.len() == 1 && base.len() > 1 {
        let x = value(mine[0])?;
        base.iter().filter_map(|r| value(r)).map(|b| x - b).collect()
    } else {
        mine.iter().filter_map(|r| Some(value(r)? - base_of(r.seed)?)).collect()
    };
    if ds.is_empty() {
        return None;
    }
    let (mean, ci95) = mean_ci(&ds);
    Some(Delta { n: ds.len(), mean, ci95 })
}

/// A float for a CSV cell: fixed six decimals (byte-stable), empty for NaN.
fn cell(v: f64) -> String {
    if v.is_finite() { format!("{v:.6}") } else { String::new() }
}

/// The columns of `comparison.csv`.
pub const CSV_HEADER: [&str; 13] = [
    "policy",
    "metric",
    "runs",
    "mean",
    "ci95_low",
    "ci95_high",
    "change_vs_first_pct",
    "delta_vs_first",
    "delta_ci95_low",
    "delta_ci95_high",
    "significant",
    "label",
    "deterministic",
];

/// Writes `comparison.csv` ([`CSV_HEADER`]): per policy and metric the runs, the mean and
/// its 95 % interval, the change of the mean against the first policy, the paired
/// difference to it with its interval and whether that excludes 0 (empty without an
/// interval), the policy as spelled, and whether its runs were one deterministic run.
pub fn write_csv(out: &mut dyn Write, rows: &[Compared]) -> std::io::Result<()> {
    let mut w = csv::WriterBuilder::new().from_writer(out);
    w.write_record(CSV_HEADER)?;
    for c in rows {
        let d = c.delta;
        w.write_record([
            c.policy.clone(),
            c.metric.key.to_string(),
            c.n.to_string(),
            cell(c.mean),
            cell(c.mean - c.ci95),
            cell(c.mean + c.ci95),
            c.change_pct.map(cell).unwrap_or_default(),
            d.map(|d| cell(d.mean)).unwrap_or_default(),
            d.map(|d| cell(d.mean - d.ci95)).unwrap_or_default(),
            d.map(|d| cell(d.mean + d.ci95)).unwrap_or_default(),
            d.and_then(|d| d.significant()).map(|b| b.to_string()).unwrap_or_default(),
            c.label.clone(),
            c.deterministic.to_string(),
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

    /// The interruptions' and the bill's figures are read from their objects, and left out
    /// of a comparison whose runs have none.
    #[test]
    fn optional_metrics_come_from_interruptions_and_cost() {
        let s = serde_json::json!({
            "wait_mean": 1.0,
            "interruptions": { "ettr": 0.9, "lost_gpu_hours": { "failure": 2.0, "waiting": 1.5 } },
            "cost": { "total": 10.0, "per_useful_gpu_hour": 2.5 }
        });
        assert_eq!(metric_value(&s, "ettr"), Some(0.9));
        assert_eq!(metric_value(&s, "lost_gpu_hours"), Some(3.5));
        assert_eq!(metric_value(&s, "lost_core_hours"), None);
        assert_eq!(
            (metric_value(&s, "cost_total"), metric_value(&s, "cost_per_useful_gpu_hour")),
            (Some(10.0), Some(2.5))
        );
        let keys = |runs: &[RunSummary]| {
            let mut k: Vec<&str> = compare(runs).iter().map(|c| c.metric.key).collect();
            k.dedup();
            k
        };
        assert!(!keys(&[run("a", 0, 1.0)]).contains(&"ettr"));
        let with = RunSummary { policy: "b".into(), seed: 0, summary: s };
        let k = keys(&[run("a", 0, 1.0), with]);
        assert!(k.contains(&"ettr") && k.contains(&"cost_total") && !k.contains(&"lost_core_hours"), "{k:?}");
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
        // easy's two runs are alike (one deterministic run); paired with fcfs's seeds:
        // −50 and −150: mean −100, half-width 12.706 × 70.71 / √2 = 635.3, not significant.
        assert!(
            text.contains(
                "easy,wait_mean,1,50.000000,50.000000,50.000000,-66.666667,-100.000000,-735.300000,535.300000,false,\
                 easy,true"
            ),
            "{text}"
        );
        // A metric a summary lacks has no runs.
        assert!(text.contains("fcfs,gpu_hours,0,0.000000,0.000000,0.000000,"), "{text}");
    }

    #[test]
    fn alike_runs_of_an_unvaried_workload_are_one_run() {
        let runs = [run("fcfs", 1, 100.0), run("fcfs", 2, 100.0), run("easy", 1, 40.0), run("easy", 2, 60.0)];
        let c = compare(&runs);
        let wait: Vec<&Compared> = c.iter().filter(|c| c.metric.key == "wait_mean").collect();
        assert_eq!((wait[0].n, wait[0].ci95, wait[0].deterministic), (1, 0.0, true));
        // easy pairs each seed with fcfs's one result: −60 and −40.
        let d = wait[1].delta.unwrap();
        assert_eq!((d.n, d.mean), (2, -50.0));
        assert_eq!(d.significant(), Some(false));
        // With a perturbed workload alike runs stay runs.
        let mut p = runs.clone();
        for r in &mut p {
            r.summary["perturb"] = serde_json::json!("resample");
        }
        let c = compare(&p);
        assert_eq!(c[0].n, 2);
        // A paired difference that keeps its sign significantly.
        let runs = [run("a", 1, 100.0), run("a", 2, 200.0), run("b", 1, 90.0), run("b", 2, 189.0)];
        let c = compare(&runs);
        let d = c.iter().find(|c| c.policy == "b" && c.metric.key == "wait_mean").unwrap().delta.unwrap();
        // −10, −11: mean −10.5, s = 0.707, 12.706 × 0.707 / √2 = 6.35: significant.
        assert_eq!(d.significant(), Some(true));
    }
}
