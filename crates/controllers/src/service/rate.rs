//! The request rate an inference service is offered over time: read from a CSV file of
//! `time,rps` points (a step function: each rate holds until the next point), or generated
//! with a daily and weekly shape and random bursts.
//!
//! The generated shape follows what production inference traces show (Azure LLM inference
//! traces 2023–2024, `Azure/AzurePublicDataset`; the Azure Functions trace of Shahrad et
//! al., ATC'20): a daily cycle peaking in the working day, lower weekends, and short bursts
//! of several times the rate.
//!
//! A service's load ends one interval after the series' last point (a CSV's last point
//! is a rate that holds for one interval; end a file with `T,0` to say when the load
//! stops).
//!
//! `rps = mean × (1 + amplitude × cos(2π (hour − peak_hour) / 24)) × (weekend on Saturday
//! and Sunday) × (burst_factor inside a burst)`, with day 0 a Monday; bursts start after
//! exponential gaps of mean `burst_every` hours and last `burst_minutes`.

use rand_distr::{Distribution, Exp1};
use sim_core::rng::SimRng;
use sim_core::time::{SimDuration, SimTime};

/// A request-rate series: a step function of time.
#[derive(Clone, Debug, PartialEq)]
pub struct RateSeries {
    /// (from when, requests per second), in time order; before the first point the rate
    /// is 0.
    points: Vec<(SimTime, f64)>,
}

/// The generated shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Mean requests per second over a weekday.
    pub mean: f64,
    /// Relative swing of the daily cycle (0: flat, 1: to zero at night).
    pub amplitude: f64,
    /// Hour of the daily peak.
    pub peak_hour: f64,
    /// Weekend factor.
    pub weekend: f64,
    /// Mean hours between bursts (0: none).
    pub burst_every: f64,
    /// Minutes a burst lasts.
    pub burst_minutes: f64,
    /// Rate factor during a burst.
    pub burst_factor: f64,
}

impl RateSeries {
    /// A series from points (sorted by time here).
    pub fn from_points(mut points: Vec<(SimTime, f64)>) -> Self {
        points.sort_by_key(|p| p.0);
        RateSeries { points }
    }

    /// Reads a CSV file with a header naming `time` (seconds) and `rps` columns.
    pub fn read_csv(path: &str) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        Self::parse_csv(path, &text)
    }

    /// Parses CSV text (`file` names it in errors).
    pub fn parse_csv(file: &str, text: &str) -> Result<Self, String> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
        let (_, header) = lines.next().ok_or(format!("{file}: expected a header line `time,rps`"))?;
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        let find = |name: &str| {
            cols.iter().position(|c| *c == name).ok_or(format!("{file}, line 1: expected a column `{name}`"))
        };
        let (ti, ri) = (find("time")?, find("rps")?);
        let mut points = Vec::new();
        let mut last = None;
        for (i, line) in lines {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let at = |k: usize, what: &str| -> Result<f64, String> {
                let v = fields.get(k).ok_or(format!("{file}, line {}: field {what}: missing", i + 1))?;
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or(format!("{file}, line {}: field {what}: expected a number of 0 or more, found '{v}'", i + 1))
            };
            let (t, r) = (at(ti, "time")?, at(ri, "rps")?);
            let t = SimTime((t * 1e6).round() as u64);
            if last.is_some_and(|l| t <= l) {
                return Err(format!("{file}, line {}: field time: expected times in increasing order", i + 1));
            }
            last = Some(t);
            points.push((t, r));
        }
        if points.is_empty() {
            return Err(format!("{file}: expected at least one point after the header"));
        }
        Ok(RateSeries { points })
    }

    /// Generates `shape` every `step` from 0 to `until`, bursts drawn from `rng`.
    pub fn generate(shape: &Shape, step: SimDuration, until: SimTime, rng: &mut SimRng) -> Self {
        let mut bursts: Vec<(SimTime, SimTime)> = Vec::new();
        if shape.burst_every > 0.0 {
            let mut t = 0.0;
            loop {
                let gap: f64 = Exp1.sample(rng);
                t += gap * shape.burst_every * 3600.0;
                if t >= until.0 as f64 / 1e6 {
                    break;
                }
                let from = SimTime((t * 1e6) as u64);
                bursts.push((from, from + SimDuration((shape.burst_minutes * 60e6) as u64)));
            }
        }
        let mut points = Vec::new();
        let mut t = SimTime::ZERO;
        let step = SimDuration(step.0.max(1));
        while t < until {
            let secs = t.0 as f64 / 1e6;
            let hour = (secs / 3600.0) % 24.0;
            let day = (secs / 86_400.0) as u64 % 7;
            let mut r = shape.mean
                * (1.0 + shape.amplitude * (2.0 * std::f64::consts::PI * (hour - shape.peak_hour) / 24.0).cos());
            if day >= 5 {
                r *= shape.weekend;
            }
            if bursts.iter().any(|&(a, b)| t >= a && t < b) {
                r *= shape.burst_factor;
            }
            points.push((t, r.max(0.0)));
            t = t + step;
        }
        RateSeries { points }
    }

    /// The rate at `t`.
    pub fn at(&self, t: SimTime) -> f64 {
        let i = self.points.partition_point(|p| p.0 <= t);
        if i == 0 { 0.0 } else { self.points[i - 1].1 }
    }

    /// When the last point starts.
    pub fn last_time(&self) -> SimTime {
        self.points.last().map_or(SimTime::ZERO, |p| p.0)
    }

    /// The points.
    pub fn points(&self) -> &[(SimTime, f64)] {
        &self.points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_series_is_a_step_function() {
        let s = RateSeries::parse_csv("r.csv", "time,rps\n0,10\n60,25.5\n# comment\n120,0\n").unwrap();
        let at = |t| s.at(SimTime::from_secs(t));
        assert_eq!((at(0), at(59), at(60), at(119), at(500)), (10.0, 10.0, 25.5, 25.5, 0.0));
        assert_eq!(s.last_time(), SimTime::from_secs(120));
        // Columns are found by name.
        let t = RateSeries::parse_csv("r.csv", "rps,time\n5,0\n").unwrap();
        assert_eq!(t.at(SimTime::ZERO), 5.0);
        for (bad, says) in [
            ("when,rps\n0,1\n", "line 1: expected a column `time`"),
            ("time,rps\n0,x\n", "line 2: field rps: expected a number"),
            ("time,rps\n10,1\n5,1\n", "line 3: field time: expected times in increasing order"),
            ("time,rps\n", "at least one point"),
            ("time,rps\n0,-1\n", "line 2: field rps"),
        ] {
            let e = RateSeries::parse_csv("r.csv", bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_generated_shape_peaks_daily_and_drops_at_weekends() {
        let shape = Shape {
            mean: 100.0,
            amplitude: 0.5,
            peak_hour: 14.0,
            weekend: 0.6,
            burst_every: 0.0,
            burst_minutes: 0.0,
            burst_factor: 1.0,
        };
        let mut rng = sim_core::rng::RngStreams::new(1).stream("rate");
        let s = RateSeries::generate(&shape, SimDuration::from_secs(10), SimTime::from_secs(7 * 86_400), &mut rng);
        let h = |day: u64, hour: u64| s.at(SimTime::from_secs(day * 86_400 + hour * 3600));
        assert!((h(0, 14) - 150.0).abs() < 1e-9 && (h(0, 2) - 50.0).abs() < 1e-9);
        assert!((h(5, 14) - 90.0).abs() < 1e-9, "Saturday: {}", h(5, 14));
        assert_eq!(s.points().len(), 7 * 8640);
        // Bursts multiply the rate for their length; the same seed draws the same ones.
        let bursty = Shape { burst_every: 6.0, burst_minutes: 30.0, burst_factor: 3.0, ..shape };
        let mut rng = sim_core::rng::RngStreams::new(1).stream("rate");
        let b = RateSeries::generate(&bursty, SimDuration::from_secs(10), SimTime::from_secs(7 * 86_400), &mut rng);
        let boosted = b.points().iter().zip(s.points()).filter(|(x, y)| (x.1 - 3.0 * y.1).abs() < 1e-9 && y.1 > 0.0);
        let n = boosted.count();
        // About 28 bursts of 180 points each in a week.
        assert!((2000..=8000).contains(&n), "{n} points in bursts");
        let mut again = sim_core::rng::RngStreams::new(1).stream("rate");
        assert_eq!(
            b,
            RateSeries::generate(&bursty, SimDuration::from_secs(10), SimTime::from_secs(7 * 86_400), &mut again)
        );
    }
}
