//! The Vertical Pod Autoscaler's recommender for one resource (here the declared GPU memory
//! of shared-GPU replicas), as `kubernetes/autoscaler` `vertical-pod-autoscaler`
//! (1.x) computes it: `pkg/recommender/util/histogram.go` and `decaying_histogram.go`,
//! `pkg/recommender/logic/recommender.go` and `estimator.go`, `pkg/recommender/model`
//! (`aggregate_container_state.go` for the OOM bump).
//!
//! * Usage samples go into a histogram of exponential buckets (the first 10^7 bytes wide,
//!   each 5 % wider than the last), each weighted `2^(t / half_life)`, so that a sample a
//!   half-life (24 h) older counts half as much.
//! * An out-of-memory kill adds a sample of `max(request × 1.2, request + 100 MiB)`
//!   (`oom-bump-up-ratio`, `oom-min-bump-up-bytes`).
//! * The target is the 90th percentile, the lower bound the 50th and the upper bound the
//!   95th, each with a 15 % safety margin; the bounds widen while the history is short:
//!   upper × (1 + 1/c), lower × (1 + 0.001/c)^−2, with `c` the smaller of the history's span
//!   and its samples, in days (at one sample a minute).
//!
//! Upstream samples memory as the peak of each 24 h aggregation window; here each running
//! replica's usage is sampled once a minute.

use sim_core::time::{SimDuration, SimTime};

/// The first bucket's width, MiB (10^7 bytes).
const FIRST_BUCKET_MIB: f64 = 1e7 / 1_048_576.0;
/// Each bucket's width over the last one's.
const RATIO: f64 = 1.05;
/// Buckets: up to about 1 TB.
const BUCKETS: usize = 176;
/// The memory histogram's half-life.
pub const HALF_LIFE: SimDuration = SimDuration::from_secs(24 * 3600);

/// Recommended request and bounds, MiB.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Below it a pod is evicted (Recreate).
    pub lower: f64,
    /// What new pods are given.
    pub target: f64,
    /// Above it a pod is evicted.
    pub upper: f64,
}

/// A decaying histogram of one resource's usage.
#[derive(Clone, Debug)]
pub struct Recommender {
    weights: Vec<f64>,
    total: f64,
    samples: u64,
    first: Option<SimTime>,
    last: SimTime,
}

impl Default for Recommender {
    fn default() -> Self {
        Recommender { weights: vec![0.0; BUCKETS], total: 0.0, samples: 0, first: None, last: SimTime::ZERO }
    }
}

/// The start of bucket `i`, MiB.
fn bucket_start(i: usize) -> f64 {
    if i == 0 { 0.0 } else { FIRST_BUCKET_MIB * (RATIO.powi(i as i32) - 1.0) / (RATIO - 1.0) }
}

/// The bucket of `mib`.
fn bucket_of(mib: f64) -> usize {
    if mib < FIRST_BUCKET_MIB {
        return 0;
    }
    let i = ((mib * (RATIO - 1.0) / FIRST_BUCKET_MIB + 1.0).ln() / RATIO.ln()).floor() as usize;
    i.min(BUCKETS - 1)
}

impl Recommender {
    /// A usage sample of `mib` at `t`.
    pub fn add(&mut self, t: SimTime, mib: f64) {
        let first = *self.first.get_or_insert(t);
        let age = (t.0.saturating_sub(first.0)) as f64 / HALF_LIFE.0 as f64;
        let w = age.exp2();
        self.weights[bucket_of(mib.max(0.0))] += w;
        self.total += w;
        self.samples += 1;
        self.last = self.last.max(t);
    }

    /// An out-of-memory kill at `t` of a pod that requested `request` MiB.
    pub fn add_oom(&mut self, t: SimTime, request: f64) {
        self.add(t, (request * 1.2).max(request + 100.0));
    }

    /// The `p` percentile: the end of the bucket where the cumulative weight reaches `p`.
    fn percentile(&self, p: f64) -> f64 {
        let mut acc = 0.0;
        for (i, w) in self.weights.iter().enumerate() {
            acc += w;
            if acc >= p * self.total && *w > 0.0 {
                return bucket_start(i + 1);
            }
        }
        bucket_start(BUCKETS)
    }

    /// The recommendation, once there are samples.
    pub fn bounds(&self) -> Option<Bounds> {
        let first = self.first?;
        let days = |x: f64| x / 86_400.0;
        let span = days((self.last.0 - first.0) as f64 / 1e6);
        let c = span.min(self.samples as f64 / (60.0 * 24.0));
        let margin = 1.15;
        let (lower, target, upper) =
            (self.percentile(0.5) * margin, self.percentile(0.9) * margin, self.percentile(0.95) * margin);
        let (upper, lower) =
            if c > 0.0 { (upper * (1.0 + 1.0 / c), lower * (1.0 + 0.001 / c).powi(-2)) } else { (f64::INFINITY, 0.0) };
        Some(Bounds { lower, target, upper })
    }

    /// Samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_grow_by_five_percent() {
        assert_eq!(bucket_of(0.0), 0);
        for i in [1, 10, 100] {
            let mid = 0.5 * (bucket_start(i) + bucket_start(i + 1));
            assert_eq!(bucket_of(mid), i);
            let w = |k: usize| bucket_start(k + 1) - bucket_start(k);
            assert!((w(i) / w(i - 1) - RATIO).abs() < 1e-9);
        }
    }

    /// A day of samples at 4,000 MiB: the target is the end of that bucket with the 15 %
    /// margin; with a day of history the upper bound is twice the margin'd 95th percentile.
    #[test]
    fn a_steady_usage_is_recommended_with_its_margin() {
        let mut r = Recommender::default();
        for m in 0..=1440u64 {
            r.add(SimTime::from_secs(m * 60), 4000.0);
        }
        let b = r.bounds().unwrap();
        let end = bucket_start(bucket_of(4000.0) + 1);
        assert!((b.target - end * 1.15).abs() < 1e-6, "{b:?}");
        assert!((4000.0..4000.0 * 1.06).contains(&end));
        assert!((b.upper - end * 1.15 * 2.0).abs() < 1e-3, "{b:?}");
        assert!(b.lower < b.target && b.lower > end * 1.15 * 0.99, "{b:?}");
    }

    /// Out-of-memory kills at 2,000 MiB bump the recommendation above the request, and newer
    /// samples outweigh older ones.
    #[test]
    fn oom_kills_bump_and_old_samples_fade() {
        let mut r = Recommender::default();
        r.add(SimTime::ZERO, 2000.0);
        for k in 0..5 {
            r.add_oom(SimTime::from_secs(60 * k), 2000.0);
        }
        assert!(r.bounds().unwrap().target >= 2400.0 * 1.15, "{:?}", r.bounds());
        // Three days of 1,000 MiB after a day of 3,000 (weighed 2 to 16 against 1 to 2): the
        // 90th percentile follows the new.
        let mut d = Recommender::default();
        for m in 0..1440u64 {
            d.add(SimTime::from_secs(m * 60), 3000.0);
        }
        for m in 1440..5760u64 {
            d.add(SimTime::from_secs(m * 60), 1000.0);
        }
        let b = d.bounds().unwrap();
        assert!(b.target < 1000.0 * 1.06 * 1.15, "{b:?}");
    }
}
