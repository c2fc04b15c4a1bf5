//! Simulated against observed: when the trace carries the waits the real system gave its
//! jobs (SWF's wait field, sacct's `Start`, Helios, openb's `scheduled_time`, PAI), each
//! policy's simulated waits set beside them, job by job: both distributions' means and
//! 95th percentiles, their two-sample Kolmogorov–Smirnov distance (the largest gap between
//! the two CDFs), and the distribution of the per-job error (simulated − observed). The
//! first thing to check before trusting a what-if: how close the baseline comes to what
//! really happened.

use super::policies::PolicyRuns;
use super::{esc, fmt};
use crate::tables::Dist;
use rayon::prelude::*;
use std::fmt::Write as _;

/// One policy against the observed waits.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The policy's label.
    pub label: String,
    /// Jobs with both a simulated and an observed wait.
    pub jobs: u64,
    /// Their simulated waits, seconds.
    pub simulated: Dist,
    /// Their observed waits, seconds.
    pub observed: Dist,
    /// The Kolmogorov–Smirnov distance between the two (0–1).
    pub ks: f64,
    /// Simulated − observed, seconds.
    pub error: Dist,
    /// 5th percentile of the error (the `Dist` gives the others).
    pub error_p5: f64,
}

/// The paired waits of a policy's first run: (simulated, observed) seconds of every job
/// that has both.
pub fn pairs(p: &PolicyRuns<'_>) -> Vec<(f64, f64)> {
    p.first().rows.iter().filter_map(|r| Some((r.wait_s()?, r.observed_wait_us? as f64 / 1e6))).collect()
}

/// The two-sample Kolmogorov–Smirnov statistic: `max |F_a(x) − F_b(x)|` over x.
pub fn ks_distance(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return f64::NAN;
    }
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable_by(f64::total_cmp);
    b.sort_unstable_by(f64::total_cmp);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0.0f64);
    while i < a.len() && j < b.len() {
        // Step past every value equal to the smaller one, in both samples.
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / na - j as f64 / nb).abs());
    }
    d
}

/// Every policy's fit (those whose first run has observed waits); `None` when no run has.
pub fn fits(pols: &[PolicyRuns<'_>]) -> Option<Vec<Fit>> {
    let out: Vec<Fit> = pols.par_iter().filter_map(fit).collect();
    (!out.is_empty()).then_some(out)
}

/// One policy against the observed waits (none when no job has both).
fn fit(p: &PolicyRuns<'_>) -> Option<Fit> {
    let pairs = pairs(p);
    if pairs.is_empty() {
        return None;
    }
    let sim: Vec<f64> = pairs.iter().map(|x| x.0).collect();
    let obs: Vec<f64> = pairs.iter().map(|x| x.1).collect();
    let mut err: Vec<f64> = pairs.iter().map(|x| x.0 - x.1).collect();
    err.sort_unstable_by(f64::total_cmp);
    Some(Fit {
        label: p.label.clone(),
        jobs: pairs.len() as u64,
        ks: ks_distance(&sim, &obs),
        error_p5: crate::tables::percentile(&err, 5.0),
        simulated: Dist::of(sim),
        observed: Dist::of(obs),
        error: Dist::of(err),
    })
}

/// The section's table.
pub fn html(h: &mut String, fits: &[Fit]) {
    h.push_str(
        "<div class=\"wide\"><table><tr><th>policy</th><th>jobs</th><th>KS distance</th><th>mean wait simulated (s)</th>\
         <th>observed (s)</th><th>p95 simulated (s)</th><th>observed (s)</th><th>error p5 (s)</th><th>error median \
         (s)</th><th>error p95 (s)</th><th>error mean (s)</th></tr>\n",
    );
    for f in fits {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            esc(&f.label),
            f.jobs,
            f.ks,
            fmt(f.simulated.mean),
            fmt(f.observed.mean),
            fmt(f.simulated.p95),
            fmt(f.observed.p95),
            fmt(f.error_p5),
            fmt(f.error.p50),
            fmt(f.error.p95),
            fmt(f.error.mean)
        );
    }
    h.push_str("</table></div>\n");
}

/// The section as CSV.
pub fn csv(fits: &[Fit]) -> std::io::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    w.write_record([
        "label",
        "jobs",
        "ks_distance",
        "simulated_wait_mean",
        "observed_wait_mean",
        "simulated_wait_p95",
        "observed_wait_p95",
        "error_p5",
        "error_p50",
        "error_p95",
        "error_mean",
    ])?;
    let f3 = |v: f64| format!("{v:.3}");
    for f in fits {
        w.write_record([
            f.label.clone(),
            f.jobs.to_string(),
            format!("{:.6}", f.ks),
            f3(f.simulated.mean),
            f3(f.observed.mean),
            f3(f.simulated.p95),
            f3(f.observed.p95),
            f3(f.error_p5),
            f3(f.error.p50),
            f3(f.error.p95),
            f3(f.error.mean),
        ])?;
    }
    w.into_inner().map_err(|e| std::io::Error::other(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ks_is_the_largest_gap_between_the_cdfs() {
        // a: 1,2,3,4; b: 3,4,5,6. At x = 2 F_a = 0.5, F_b = 0; at 4: 1 and 0.5.
        assert_eq!(ks_distance(&[1.0, 2.0, 3.0, 4.0], &[3.0, 4.0, 5.0, 6.0]), 0.5);
        assert_eq!(ks_distance(&[1.0, 2.0], &[1.0, 2.0]), 0.0);
        assert_eq!(ks_distance(&[0.0, 0.0], &[10.0]), 1.0);
        // Ties across samples are stepped together.
        assert_eq!(ks_distance(&[0.0, 5.0], &[0.0, 0.0, 5.0, 5.0]), 0.0);
        assert!(ks_distance(&[], &[1.0]).is_nan());
    }
}
