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
//!    100 % (`a + 100 b`), lowered to the cap ([`PowerCap`]: the board's power limit, or
//!    the shipped TDP of a known model) when the line overshoots it; `idle_power_w` is
//!    then at most `max_power_w`.
//! 2. **No line** (utilization never varies, or power does not rise with it):
//!    `idle_power_w` is the lowest power among the samples at 0 % (none if no sample is
//!    at 0 %), and `max_power_w` the cap (none if unknown).
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

/// What the fitted maximum may not exceed: the board's power limit, or the shipped TDP
/// of the model when the log has no limit.
#[derive(Clone, Debug, PartialEq)]
pub struct PowerCap {
    /// Watts.
    pub watts: f64,
    /// What it is, for the sources (`power limit in the log`, `shipped TDP of H100`).
    pub what: String,
}

/// Idle and full-load power (and a curve when the data allow) from `(util %, watts)`
/// samples; see the module documentation.
pub fn fit_power(samples: &[(f64, f64)], cap: Option<&PowerCap>) -> PowerFit {
    let pts: Vec<(f64, f64)> = samples
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite() && p.1 >= 0.0)
        .map(|&(u, w)| (u.clamp(0.0, 100.0), w))
        .collect();
    let n = pts.len();
    let cap = cap.filter(|c| c.watts > 0.0 && c.watts.is_finite());
    if let Some((a, b)) = line_fit(&pts).filter(|&(_, b)| b > 0.0) {
        let mut max = a + 100.0 * b;
        let mut max_how = format!("least-squares line of power on utilization over {n} samples, at 100 %");
        if let Some(c) = cap.filter(|c| max > c.watts) {
            max = c.watts;
            max_how =
                format!("{} (the least-squares line over {n} samples reaches {:.2} W at 100 %)", c.what, a + 100.0 * b);
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
    let max_how = cap.map(|c| c.what.clone()).unwrap_or_default();
    PowerFit { idle_w: at_zero.map(round2), max_w: cap.map(|c| round2(c.watts)), curve: Vec::new(), idle_how, max_how }
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

/// Mean and maximum of the values; `None` for none.
pub fn mean_max(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (mut n, mut sum, mut max) = (0usize, 0.0, f64::NEG_INFINITY);
    for v in values {
        n += 1;
        sum += v;
        max = max.max(v);
    }
    (n > 0).then(|| (sum / n as f64, max))
}

/// Averages `(seconds, util %, watts)` readings of one GPU (in time order) over windows
/// of at least `min_s` seconds: each window starts at a reading and takes every reading
/// before `start + min_s`. NVML's utilization covers the last 1/6 to 1 s (by product)
/// and board power is a 1 s average on recent boards but instantaneous on GA100, so
/// readings closer than 1 s pair a utilization and a power of different periods; over
/// windows of 1 s or more they describe the same time.
pub fn windows(readings: &[(f64, f64, f64)], min_s: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < readings.len() {
        let start = readings[i].0;
        let mut j = i;
        let (mut su, mut sw) = (0.0, 0.0);
        while j < readings.len() && (j == i || readings[j].0 < start + min_s) {
            su += readings[j].1;
            sw += readings[j].2;
            j += 1;
        }
        let n = (j - i) as f64;
        out.push((su / n, sw / n));
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_by_hand() {
        let cap = |w: f64| PowerCap { watts: w, what: "power limit".into() };
        // Mean util 50, mean power 200, Sxy 29 600, Sxx 10 000: b = 2.96, a = 52.
        let f =
            fit_power(&[(0.0, 50.0), (0.0, 54.0), (50.0, 200.0), (100.0, 350.0), (100.0, 346.0)], Some(&cap(400.0)));
        assert_eq!((f.idle_w, f.max_w), (Some(52.0), Some(348.0)));
        assert!(f.curve.is_empty());
        // Capped at the limit, and the source says so.
        let f = fit_power(&[(0.0, 50.0), (100.0, 500.0)], Some(&cap(400.0)));
        assert_eq!((f.idle_w, f.max_w), (Some(50.0), Some(400.0)));
        assert!(
            f.max_how.starts_with("power limit (the least-squares line over 2 samples reaches 500.00 W"),
            "{}",
            f.max_how
        );
        // Utilization never varies: idle from the 0 % samples, max the limit.
        let f = fit_power(&[(0.0, 61.0), (0.0, 60.5)], Some(&cap(300.0)));
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
    fn windows_of_a_second() {
        // 0.2 s apart: five readings per window; 1 s apart: one each.
        let r: Vec<(f64, f64, f64)> = (0..10).map(|i| (i as f64 * 0.2, i as f64, 100.0 + i as f64)).collect();
        assert_eq!(windows(&r, 1.0), [(2.0, 102.0), (7.0, 107.0)]);
        let r = [(0.0, 0.0, 50.0), (1.0, 100.0, 300.0), (2.5, 50.0, 200.0)];
        assert_eq!(windows(&r, 1.0), [(0.0, 50.0), (100.0, 300.0), (50.0, 200.0)]);
        assert!(windows(&[], 1.0).is_empty());
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
