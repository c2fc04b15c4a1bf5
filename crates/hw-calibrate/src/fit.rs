//! Power against utilization, and the summary statistics of a job profile.
//!
//! # The power fit ([`fit_power`])
//!
//! Input: `(utilization %, board watts)` samples of one GPU model, utilization clamped to
//! 0–100.
//!
//! 1. **Line.** When the samples hold at least two distinct utilizations, an ordinary
//!    least-squares line `watts = a + b × util` is fitted. If its slope is positive,
//!    `idle_power_w` is the line at 0 % (`a`, at least 0) and `max_power_w` the line at
//!    100 % (`a + 100 b`), lowered to the power limit when one is known and the line
//!    overshoots it; `idle_power_w` is then at most `max_power_w`.
//! 2. **No line** (utilization never varies, or power does not rise with it):
//!    `idle_power_w` is the lowest power among the samples at 0 % (none if no sample is
//!    at 0 %), and `max_power_w` the power limit (none if unknown).
//! 3. **Curve.** With a line, samples are also binned by utilization (0–9 %, 10–19 %, …,
//!    90–100 %). Every bin of at least [`MIN_BIN_SAMPLES`] samples gives a point (mean
//!    utilization, mean watts); with at least [`MIN_BINS`] such points, `power_curve` is
//!    those points, closed by the fitted line's ends at 0 % and 100 % where no point sits
//!    there. The simulation then follows the curve instead of the line.
//!
//! Watts are rounded to 0.01 W and curve utilizations to 0.1 % (the engine's permille).

/// Samples a utilization bin needs before it becomes a curve point.
pub const MIN_BIN_SAMPLES: usize = 3;
/// Curve points needed before a curve is written.
pub const MIN_BINS: usize = 3;

/// What [`fit_power`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PowerFit {
    /// Board power at 0 % utilization, watts.
    pub idle_w: Option<f64>,
    /// Board power at 100 % utilization, watts.
    pub max_w: Option<f64>,
    /// Measured `[util %, watts]` points from 0 to 100 %, or empty.
    pub curve: Vec<[f64; 2]>,
    /// How idle and max were found, for the profile's `sources`.
    pub idle_how: String,
    /// How max was found.
    pub max_how: String,
}

/// Rounds to 0.01.
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Rounds to 0.1.
pub fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Least-squares line `y = a + b x` through the points; `None` with fewer than two
/// distinct `x`.
pub fn line_fit(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx <= 1e-9 || !sxx.is_finite() || !sxy.is_finite() {
        return None;
    }
    let b = sxy / sxx;
    Some((my - b * mx, b))
}

/// Idle and full-load power (and a curve when the data allow) from `(util %, watts)`
/// samples; see the module documentation.
pub fn fit_power(samples: &[(f64, f64)], power_limit_w: Option<f64>) -> PowerFit {
    let pts: Vec<(f64, f64)> = samples
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite() && p.1 >= 0.0)
        .map(|&(u, w)| (u.clamp(0.0, 100.0), w))
        .collect();
    let n = pts.len();
    if let Some((a, b)) = line_fit(&pts).filter(|&(_, b)| b > 0.0) {
        let mut max = a + 100.0 * b;
        let mut max_how = format!("least-squares line of power on utilization over {n} samples, at 100 %");
        if let Some(limit) = power_limit_w.filter(|l| *l > 0.0 && max > *l) {
            max = limit;
            max_how = format!(
                "power limit (the least-squares line over {n} samples reaches {:.2} W at 100 %)",
                a + 100.0 * b
            );
        }
        let max = round2(max);
        let idle = round2(a.max(0.0)).min(max);
        let idle_how = format!("least-squares line of power on utilization over {n} samples, at 0 %");
        let curve = curve(&pts, idle, max);
        return PowerFit { idle_w: Some(idle), max_w: Some(max), curve, idle_how, max_how };
    }
    let at_zero =
        pts.iter().filter(|p| p.0 == 0.0).map(|p| p.1).fold(None, |m: Option<f64>, w| Some(m.map_or(w, |m| m.min(w))));
    let idle_how = match at_zero {
        Some(_) => "lowest power at 0 % utilization (utilization never varied enough for a line)".to_string(),
        None => String::new(),
    };
    let max_how = if power_limit_w.is_some() { "power limit".to_string() } else { String::new() };
    PowerFit { idle_w: at_zero.map(round2), max_w: power_limit_w.map(round2), curve: Vec::new(), idle_how, max_how }
}

fn curve(pts: &[(f64, f64)], idle: f64, max: f64) -> Vec<[f64; 2]> {
    let mut bins = [(0usize, 0.0f64, 0.0f64); 10];
    for &(u, w) in pts {
        let k = ((u / 10.0).floor() as usize).min(9);
        bins[k].0 += 1;
        bins[k].1 += u;
        bins[k].2 += w;
    }
    let mut out: Vec<[f64; 2]> = Vec::new();
    for &(c, su, sw) in &bins {
        if c >= MIN_BIN_SAMPLES {
            let u = round1(su / c as f64);
            if out.last().is_none_or(|l| u > l[0]) {
                out.push([u, round2(sw / c as f64)]);
            }
        }
    }
    if out.len() < MIN_BINS {
        return Vec::new();
    }
    if out[0][0] > 0.0 {
        out.insert(0, [0.0, idle]);
    }
    if out[out.len() - 1][0] < 100.0 {
        out.push([100.0, max]);
    }
    out
}

/// Quantiles 0, 10, …, 100 % of `values`: the value at rank `round(q × (n − 1))` of the
/// sorted values (0 % the least, 100 % the greatest); empty for no values.
pub fn deciles(values: &[u64]) -> Vec<u64> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    let n = v.len();
    (0..=10).map(|q| v[(q * (n - 1) + 5) / 10]).collect()
}

/// Mean and maximum of the values; `(0, 0)` for none.
pub fn mean_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut n, mut sum, mut max) = (0usize, 0.0, f64::NEG_INFINITY);
    for v in values {
        n += 1;
        sum += v;
        max = max.max(v);
    }
    if n == 0 { (0.0, 0.0) } else { (sum / n as f64, max) }
}

/// What a job profile summarises: per-GPU readings, each list possibly shorter than the
/// number of samples where a reading was missing.
pub struct JobReadings {
    /// GPU memory used, MiB.
    pub memory_mib: Vec<u64>,
    /// GPU utilization, percent.
    pub util_pct: Vec<f64>,
    /// Memory-bandwidth utilization, percent.
    pub mem_util_pct: Vec<f64>,
    /// Board power, watts.
    pub power_w: Vec<f64>,
}

/// The job profile of `samples` readings of `gpus` GPUs (of `gpu_model`) over
/// `duration_s`: peaks, means and memory deciles, rounded as profiles are written.
pub fn job_profile_of(
    origin: &str,
    gpu_model: String,
    gpus: u32,
    duration_s: f64,
    samples: u64,
    r: &JobReadings,
) -> sim_core::hardware::JobProfile {
    let (mean_mem, peak_mem) = mean_max(r.memory_mib.iter().map(|&m| m as f64));
    let (mean_util, peak_util) = mean_max(r.util_pct.iter().copied());
    let (mean_mem_util, _) = mean_max(r.mem_util_pct.iter().copied());
    let (mean_power, peak_power) = mean_max(r.power_w.iter().copied());
    sim_core::hardware::JobProfile {
        origin: origin.to_string(),
        gpu_model,
        gpus,
        duration_s: (duration_s * 1000.0).round() / 1000.0,
        samples,
        peak_memory_mib: peak_mem as u64,
        mean_memory_mib: mean_mem.round() as u64,
        memory_mib_quantiles: deciles(&r.memory_mib),
        mean_util_pct: round2(mean_util),
        peak_util_pct: round2(peak_util),
        mean_mem_util_pct: round2(mean_mem_util),
        mean_power_w: round2(mean_power),
        peak_power_w: round2(peak_power),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_by_hand() {
        // Mean util 50, mean power 200, Sxy 29 600, Sxx 10 000: b = 2.96, a = 52.
        let f = fit_power(&[(0.0, 50.0), (0.0, 54.0), (50.0, 200.0), (100.0, 350.0), (100.0, 346.0)], Some(400.0));
        assert_eq!((f.idle_w, f.max_w), (Some(52.0), Some(348.0)));
        assert!(f.curve.is_empty());
        // Capped at the limit.
        let f = fit_power(&[(0.0, 50.0), (100.0, 500.0)], Some(400.0));
        assert_eq!((f.idle_w, f.max_w), (Some(50.0), Some(400.0)));
        // Utilization never varies: idle from the 0 % samples, max the limit.
        let f = fit_power(&[(0.0, 61.0), (0.0, 60.5)], Some(300.0));
        assert_eq!((f.idle_w, f.max_w), (Some(60.5), Some(300.0)));
        let f = fit_power(&[(40.0, 61.0), (40.0, 60.5)], None);
        assert_eq!((f.idle_w, f.max_w), (None, None));
    }

    #[test]
    fn curve_from_bins() {
        let mut s = Vec::new();
        for (u, w) in [(5.0, 100.0), (55.0, 250.0), (95.0, 300.0)] {
            for d in [-1.0, 0.0, 1.0] {
                s.push((u + d, w + d));
            }
        }
        let f = fit_power(&s, None);
        let c = &f.curve;
        assert_eq!(c.len(), 5, "{c:?}");
        assert_eq!(c[0], [0.0, f.idle_w.unwrap()]);
        assert_eq!(&c[1..4], &[[5.0, 100.0], [55.0, 250.0], [95.0, 300.0]]);
        assert_eq!(c[4], [100.0, f.max_w.unwrap()]);
    }

    #[test]
    fn deciles_by_rank() {
        assert_eq!(deciles(&[]), Vec::<u64>::new());
        assert_eq!(deciles(&[7]), vec![7; 11]);
        let v: Vec<u64> = (0..=100).rev().collect();
        assert_eq!(deciles(&v), (0..=10).map(|q| q * 10).collect::<Vec<_>>());
        // n = 3: ranks round(q × 2 / 10) = 0,0,0,1,1,1,1,1,2,2,2.
        assert_eq!(deciles(&[30, 10, 20]), vec![10, 10, 10, 20, 20, 20, 20, 20, 30, 30, 30]);
    }
}
