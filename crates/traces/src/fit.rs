//! Fitting a [`Model`] of the synthetic generator to a real trace.
//!
//! [`fit`] reads the jobs and returns a model that [`crate::generator::Generator`] turns
//! back into a workload of the same shape:
//!
//! * arrivals ([`crate::stats::arrivals`], the figures `sim trace stats` shows):
//!   `process = "modulated"`, `rate_per_hour` = (jobs − 1) / span of the submit times (at
//!   least [`MIN_RATE_PER_HOUR`]), `start` = the first submit time (at most
//!   [`MAX_START`]); the 24 hour-of-day and 7 day-of-week factors are the submit rates of
//!   each hour (day), counted over the time the span spends in it, relative to their mean.
//!   Times are seconds from the trace's time zero, whatever its format makes it (see
//!   [`crate::stats`]: the log's start for SWF, 2017-09-01 00:00 for Philly, …), and the
//!   generator takes second 0 as hour 0 of day 0: so hour 0 is the hour starting at time
//!   zero and day 0 the day containing it, not necessarily a midnight or a Monday;
//! * one class per job kind present (named after it, weighted by its job count), with
//!   gang size, cores, GPUs, GPU memory and host memory as discrete laws of the values
//!   seen (at most [`MAX_VALUES`] values: the most frequent are kept and each rarer value
//!   is counted with the nearest kept one; values never above 0 are left out);
//! * run time: an empirical table of [`RUNTIME_QUANTILES`] quantiles, refined up to
//!   [`MAX_RUNTIME_QUANTILES`] until its mean is within [`MEAN_TOLERANCE`] of the run
//!   times' mean (jobs without a run time are left out), with the lognormal maximum-likelihood fit beside it for
//!   information (`lognormal_fit`, never sampled);
//! * requested time, conditioned on the run time (`requested_by_runtime`, no
//!   `overestimate`): the jobs with both a run time and a requested time, sorted by run
//!   time, cut into [`REQUEST_BINS`] bins of about as many jobs, the last of them halved
//!   again and again while the halves keep [`MIN_TAIL_JOBS`] jobs (ties of run time
//!   kept in one bin, so there may be fewer bins), each bin with its largest run time
//!   and [`REQUEST_QUANTILES`] quantiles of its jobs' requests; and `max_requested`, the
//!   largest request of the class's jobs. A factor requested / run time fitted apart
//!   from the run time (as this module did) puts the huge factors of jobs that end in
//!   seconds on jobs of hours: fitted on the KTH log and generated back (seed 1), the
//!   requests had a mean of 7.66 M s against the log's 13,663 s, and 300 of them were
//!   over a year (issue 24);
//! * users: the number of distinct users, and a Zipf exponent from a least-squares line
//!   through log(jobs) against log(rank) of the users sorted by activity;
//! * queues: the queue numbers seen, negative ones included (none when all are -1, the
//!   importers' "unknown"); `procs`: the most processors (tasks × cores) one job asks
//!   for (a caller knowing the machine size sets it after); `gpus_per_node`: the most
//!   GPUs one task asks for.
//!
//! Factors are rounded to 4 decimals and run-time and requested-time quantiles to the
//! millisecond, so the model reads well; the rest (the bins' bounds included) is kept
//! exact.

use crate::generator::{
    Arrivals, Class, Continuous, Discrete, Law, LogNormalFit, MAX_START, MIN_RATE_PER_HOUR, Model, Process, RuntimeBin,
    Users,
};
use crate::stats;
use sim_core::Job;
use sim_core::job::JobKind;
use std::collections::BTreeMap;

/// Most distinct values a fitted discrete law keeps.
pub const MAX_VALUES: usize = 64;
/// Quantiles in a fitted run-time table (every 0.5 %).
pub const RUNTIME_QUANTILES: usize = 201;
/// Most quantiles in a fitted run-time table.
pub const MAX_RUNTIME_QUANTILES: usize = 1601;
/// How far (relative) a run-time table's mean may be from the trace's before the table is
/// refined.
pub const MEAN_TOLERANCE: f64 = 0.005;
/// Equal-count bins of run time a fitted `requested_by_runtime` starts from (the last one
/// is then cut finer: see [`MIN_TAIL_JOBS`]).
pub const REQUEST_BINS: usize = 20;
/// The top bin of run time is halved while each half keeps at least this many jobs.
pub const MIN_TAIL_JOBS: usize = 30;
/// Quantiles in each bin's requested-time table (every 1 %).
pub const REQUEST_QUANTILES: usize = 101;

const HOUR: f64 = 3600.0;
const WEEK: f64 = 7.0 * 24.0 * HOUR;

/// A model of `jobs` (any order), named `name`.
pub fn fit(jobs: &[Job], name: &str) -> Model {
    let seen = stats::arrivals(jobs);
    let (t0, t1) = (seen.first.0 as f64 / 1e6, seen.last.0 as f64 / 1e6);
    let arrivals = if jobs.len() >= 2 && seen.span_s > 0.0 {
        let (hour, day) = cycle_factors(&seen, t0, t1);
        Arrivals {
            process: Process::Modulated,
            rate_per_hour: seen.per_hour.max(MIN_RATE_PER_HOUR),
            start: t0.min(MAX_START),
            hour_factors: Some(hour),
            day_factors: Some(day),
            bursts_per_hour: None,
            burst_jobs: None,
            burst_size: None,
            burst_spread: None,
        }
    } else {
        // Nothing to measure a rate on: one job an hour, flat.
        Arrivals {
            process: Process::Poisson,
            rate_per_hour: 1.0,
            start: t0.min(MAX_START),
            hour_factors: None,
            day_factors: None,
            bursts_per_hour: None,
            burst_jobs: None,
            burst_size: None,
            burst_spread: None,
        }
    };

    let mut kinds: BTreeMap<JobKind, Vec<&Job>> = BTreeMap::new();
    for j in jobs {
        kinds.entry(j.kind).or_default().push(j);
    }
    let mut classes: Vec<Class> = kinds.iter().map(|(&kind, js)| fit_class(kind, js)).collect();
    if classes.is_empty() {
        classes.push(fit_class(JobKind::Batch, &[]));
    }

    let mut per_user: BTreeMap<u32, u64> = BTreeMap::new();
    for j in jobs {
        *per_user.entry(j.user).or_default() += 1;
    }
    let users = Users { count: per_user.len().max(1) as u32, zipf: zipf_exponent(per_user.into_values().collect()) };

    let queues = if jobs.iter().all(|j| j.queue == -1) { None } else { discrete(jobs.iter().map(|j| j.queue)) };
    let procs = jobs.iter().map(Job::units).max().filter(|&p| p > 0);
    let gpus_per_node = jobs.iter().map(|j| j.task.gpus).max().filter(|&g| g > 0);
    Model { name: name.to_string(), procs, gpus_per_node, queues, arrivals, users, classes }
}

fn fit_class(kind: JobKind, jobs: &[&Job]) -> Class {
    let positive = |v: Vec<u64>| -> Option<Discrete<u64>> {
        if v.iter().all(|&x| x == 0) { None } else { discrete(v.into_iter()) }
    };
    let gpus: Vec<u32> = jobs.iter().map(|j| j.task.gpus).collect();
    let gpus = if gpus.iter().all(|&g| g == 0) { None } else { discrete(gpus.into_iter()) };
    let gpu_memory = positive(jobs.iter().filter(|j| j.task.gpus > 0).map(|j| j.task.gpu_memory_mib).collect());
    let memory = positive(jobs.iter().map(|j| j.task.memory_mib).collect());
    let cores = discrete(jobs.iter().map(|j| j.task.cores).filter(|&c| c > 0)).filter(|d| d.values != [1]);

    let mut runtimes: Vec<f64> = jobs.iter().filter_map(|j| j.runtime).map(|r| r.as_secs_f64()).collect();
    runtimes.sort_by(f64::total_cmp);
    let runtime = if runtimes.is_empty() {
        Continuous::new(Law::Constant { value: 0.0 })
    } else {
        table(runtime_quantiles(&runtimes))
    };
    let logs: Vec<f64> = runtimes.iter().filter(|&&r| r > 0.0).map(|r| r.ln()).collect();
    let lognormal_fit = (!logs.is_empty()).then(|| {
        let n = logs.len() as f64;
        let mu = logs.iter().sum::<f64>() / n;
        let var = logs.iter().map(|l| (l - mu) * (l - mu)).sum::<f64>() / n;
        LogNormalFit { mu: round(mu, 1e4), sigma: round(var.sqrt(), 1e4) }
    });

    let mut pairs: Vec<(f64, f64)> =
        jobs.iter().filter_map(|j| Some((j.runtime?.as_secs_f64(), j.requested?.as_secs_f64()))).collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let max_requested = jobs.iter().filter_map(|j| j.requested).max().map(|r| r.as_secs_f64());

    Class {
        name: kind.name().to_string(),
        kind,
        weight: jobs.len().max(1) as f64,
        tasks: discrete(jobs.iter().map(|j| j.tasks).filter(|&t| t > 0)).unwrap_or_else(|| Discrete::constant(1)),
        cores,
        gpus,
        gpu_memory_mib: gpu_memory,
        memory_mib: memory,
        runtime,
        overestimate: None,
        requested_by_runtime: requested_bins(&pairs),
        max_requested,
        gpu_peak_mib: None,
        gpu_util_pct: None,
        job_profile: None,
        lognormal_fit,
    }
}

/// The run-time table: [`RUNTIME_QUANTILES`] quantiles, or twice as many (minus one)
/// again and again, up to [`MAX_RUNTIME_QUANTILES`], while the table's mean (the mean of
/// its linear interpolation) is more than [`MEAN_TOLERANCE`] off the mean of the run
/// times: a heavy tail is otherwise under- or over-weighted by its last segment.
fn runtime_quantiles(sorted: &[f64]) -> Vec<f64> {
    let want = sorted.iter().sum::<f64>() / sorted.len() as f64;
    let mut n = RUNTIME_QUANTILES;
    loop {
        let q = quantiles(sorted, n, 1e3);
        let mean = q.windows(2).map(|w| (w[0] + w[1]) / 2.0).sum::<f64>() / (n - 1) as f64;
        if (mean - want).abs() <= MEAN_TOLERANCE * want || n >= MAX_RUNTIME_QUANTILES {
            return q;
        }
        n = 2 * n - 1;
    }
}

/// The requested-time bins of `(run time, requested time)` pairs sorted by run time
/// (none without pairs). The run times are cut at their [`REQUEST_BINS`]-quantiles,
/// then the last bin again at the 1 − 1/(2 × [`REQUEST_BINS`]), 1 − 1/(4 ×
/// [`REQUEST_BINS`]), … quantiles while the last bin keeps at least [`MIN_TAIL_JOBS`]
/// jobs. Each cut takes in the pairs after it with the same run time, so no run time is
/// split between two bins and every bin's bound is a run time it holds.
///
/// Why so many bins, and the tail cut finer: a request is drawn independently of where
/// the run time lies in its bin and raised to the run time when below it, which adds
/// about the mean of (run time − request)⁺ over the bin's pairs taken independently:
/// seconds in bins of short runs, hours in the top decile (KTH's runs from 8 h to 63 h).
/// Fitted on the KTH log and generated back (as many jobs, seed 1), the mean request
/// was 15 % above the log's with 10 equal bins, 6 % with these 25; the rest comes
/// mostly from the run-time table, whose long runs come out a little longer.
fn requested_bins(pairs: &[(f64, f64)]) -> Option<Vec<RuntimeBin>> {
    let n = pairs.len();
    let mut ends: Vec<usize> = (1..REQUEST_BINS).map(|k| (k * n).div_ceil(REQUEST_BINS)).collect();
    let mut tail = n - ends.last().copied().unwrap_or(0);
    while tail / 2 >= MIN_TAIL_JOBS {
        tail /= 2;
        ends.push(n - tail);
    }
    ends.push(n);
    let mut bins = Vec::new();
    let mut start = 0;
    for end in ends {
        if end <= start {
            continue;
        }
        let upto = pairs[end - 1].0;
        let end = start + pairs[start..].partition_point(|p| p.0 <= upto);
        let mut requested: Vec<f64> = pairs[start..end].iter().map(|p| p.1).collect();
        requested.sort_by(f64::total_cmp);
        bins.push(RuntimeBin { runtime_upto: upto, quantiles: quantiles(&requested, REQUEST_QUANTILES, 1e3) });
        start = end;
    }
    (!bins.is_empty()).then_some(bins)
}

fn round(x: f64, scale: f64) -> f64 {
    (x * scale).round() / scale
}

/// An empirical law, or a constant when every quantile is the same.
fn table(q: Vec<f64>) -> Continuous {
    if q.first() == q.last() {
        Continuous::new(Law::Constant { value: q[0] })
    } else {
        Continuous::new(Law::Empirical { quantiles: q })
    }
}

/// `n` quantiles of sorted `x` at probabilities `k / (n - 1)`, linear between order
/// statistics (Hyndman–Fan type 7), rounded to `1 / scale`.
fn quantiles(x: &[f64], n: usize, scale: f64) -> Vec<f64> {
    (0..n)
        .map(|k| {
            let h = k as f64 / (n - 1) as f64 * (x.len() - 1) as f64;
            let lo = (h as usize).min(x.len() - 1);
            let hi = (lo + 1).min(x.len() - 1);
            round(x[lo] + (h - lo as f64) * (x[hi] - x[lo]), scale)
        })
        .collect()
}

/// The values seen with their counts as weights, at most [`MAX_VALUES`] of them.
fn discrete<T: Copy + Ord + Into<i128>>(values: impl Iterator<Item = T>) -> Option<Discrete<T>> {
    let mut counts: BTreeMap<T, u64> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    if counts.is_empty() {
        return None;
    }
    if counts.len() > MAX_VALUES {
        let mut by_count: Vec<(T, u64)> = counts.iter().map(|(&v, &c)| (v, c)).collect();
        by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut kept: BTreeMap<T, u64> = by_count[..MAX_VALUES].iter().copied().collect();
        let keys: Vec<T> = kept.keys().copied().collect();
        for &(v, c) in &by_count[MAX_VALUES..] {
            // The nearest kept value (the smaller one on a tie).
            let i = keys.partition_point(|&k| k < v);
            let below = i.checked_sub(1).map(|i| keys[i]);
            let above = keys.get(i).copied();
            let near = match (below, above) {
                (Some(b), Some(a)) => {
                    if v.into() - b.into() <= a.into() - v.into() {
                        b
                    } else {
                        a
                    }
                }
                (Some(b), None) => b,
                (None, Some(a)) => a,
                (None, None) => unreachable!("MAX_VALUES > 0"),
            };
            *kept.get_mut(&near).expect("kept value") += c;
        }
        counts = kept;
    }
    let (values, weights) = counts.into_iter().map(|(v, c)| (v, c as f64)).unzip();
    Some(Discrete { values, weights })
}

/// Hour-of-day and day-of-week factors: jobs per second of each hour (day) over the
/// seconds of `[t0, t1]` (the span of the submissions, in seconds) that fall in it,
/// relative to the mean of those rates (1 for an hour or day the span never covers).
fn cycle_factors(seen: &stats::Arrivals, t0: f64, t1: f64) -> (Vec<f64>, Vec<f64>) {
    let mut hour_time = [0.0f64; 24];
    let mut day_time = [0.0f64; 7];
    // Whole weeks cover every hour and day alike; walk only the rest, slot by slot.
    let weeks = ((t1 - t0) / WEEK).floor();
    hour_time.iter_mut().for_each(|h| *h = weeks * 7.0 * HOUR);
    day_time.iter_mut().for_each(|d| *d = weeks * 24.0 * HOUR);
    let mut at = t0 + weeks * WEEK;
    while at < t1 {
        let slot = (at / HOUR).floor();
        let end = ((slot + 1.0) * HOUR).min(t1);
        let i = (slot as u64 % 168) as usize;
        hour_time[i % 24] += end - at;
        day_time[i / 24] += end - at;
        at = end;
    }
    (relative(&seen.by_hour, &hour_time), relative(&seen.by_weekday, &day_time))
}

fn relative(jobs: &[u64], time: &[f64]) -> Vec<f64> {
    let rates: Vec<Option<f64>> = jobs.iter().zip(time).map(|(&j, &t)| (t > 0.0).then(|| j as f64 / t)).collect();
    let seen: Vec<f64> = rates.iter().flatten().copied().collect();
    let mean = seen.iter().sum::<f64>() / seen.len().max(1) as f64;
    rates.iter().map(|r| r.filter(|_| mean > 0.0).map_or(1.0, |r| round(r / mean, 1e4))).collect()
}

/// The Zipf exponent of per-user job counts: minus the least-squares slope of
/// ln(count) against ln(rank), clamped to `[0, 10]` (0 for one user).
fn zipf_exponent(mut counts: Vec<u64>) -> f64 {
    if counts.len() < 2 {
        return 0.0;
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let pts: Vec<(f64, f64)> =
        counts.iter().enumerate().map(|(i, &c)| (((i + 1) as f64).ln(), (c as f64).ln())).collect();
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    round((-sxy / sxx).clamp(0.0, 10.0), 1e4)
}
