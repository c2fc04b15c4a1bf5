//! Workload variation per seed (`--perturb`): each seed replays a different, statistically
//! similar version of the trace, so that the spread of a policy's results over seeds is a
//! real confidence interval, and every policy of a comparison sees the same versions (the
//! comparison is paired seed by seed).
//!
//! * `resample` — user-based resampling after Zakay and Feitelson ("Workload resampling
//!   for performance evaluation of parallel job schedulers", Concurrency and Computation:
//!   Practice and Experience 26(12), 2014; ICPE 2013): the trace is split into its users'
//!   job streams; users active over more than half of the trace's weeks are long-term and
//!   kept as they are; the others are temporary, and each week of the new workload starts
//!   as many temporary users as the trace's week did, each drawn with replacement from all
//!   temporary users and shifted by whole weeks (so every job keeps its time of day and day
//!   of week, and each user its sequence of jobs and think times). The paper's submission
//!   feedback (a user's next job waiting for the previous one's end) is not modelled.
//! * `noise=SIGMA` — run-time noise: each job's run time multiplied by `exp(SIGMA × Z)`,
//!   `Z` standard normal (median factor 1), capped at its requested time (a job that would
//!   run longer is killed at its limit in the real system).
//! * `jitter=SECONDS` — submit-time jitter: each submit time moved by a uniform amount in
//!   `[−SECONDS, +SECONDS]` (not before 0), as the "input shaking" of Tsafrir, Ouaknine and
//!   Feitelson ("Reducing performance evaluation sensitivity and variability by input
//!   shaking", MASCOTS 2007).
//! * `window=LENGTH` — a sub-trace: the jobs submitted in a window of `LENGTH` seconds
//!   (`d`, `h`, `m` suffixes allowed) starting at a whole day drawn per seed, so that a
//!   conclusion is checked over several stretches of the trace rather than one (Tsafrir and
//!   Feitelson, "Instability in parallel job scheduling simulation: the role of workload
//!   flurries", IPDPS 2006).
//!
//! They apply in that order: `window`, `resample`, `noise`, `jitter`; each draws from its
//! own named stream of the seed. Jobs are then put back in submit order. The observed
//! start times of a perturbed workload are dropped (they belong to the trace as it was).

use sim_core::rng::{RngStreams, SimRng, uniform_f64};
use sim_core::{Job, SimDuration, SimTime};
use std::collections::BTreeMap;

/// One week, the unit of user resampling.
pub const WEEK: SimDuration = SimDuration::from_secs(7 * 24 * 3600);
/// One day, the step of window starts.
pub const DAY: SimDuration = SimDuration::from_secs(24 * 3600);

/// A way to vary a workload per seed.
#[derive(Clone, Debug, PartialEq)]
pub enum Perturbation {
    /// User-based resampling.
    Resample,
    /// Run-time noise: lognormal factor of this sigma.
    Noise(f64),
    /// Submit-time jitter of at most this much either way.
    Jitter(SimDuration),
    /// A sub-trace window of this length.
    Window(SimDuration),
}

/// The perturbations of a `--perturb` value: a comma-separated list of `resample`,
/// `noise=SIGMA`, `jitter=SECONDS`, `window=LENGTH`, each at most once.
pub fn parse(text: &str) -> Result<Vec<Perturbation>, String> {
    let mut out: Vec<Perturbation> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = match part.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (part, None),
        };
        let need = |what: &str| format!("'{part}': {key} needs a value, {what}");
        let p = match (key, value) {
            ("resample", None) => Perturbation::Resample,
            ("noise", Some(v)) => {
                let sigma: f64 = v.parse().map_err(|_| need("a sigma such as noise=0.3"))?;
                if !(sigma.is_finite() && sigma > 0.0 && sigma <= 5.0) {
                    return Err(format!("'{part}': noise's sigma is a number above 0 and at most 5"));
                }
                Perturbation::Noise(sigma)
            }
            ("jitter", Some(v)) => Perturbation::Jitter(duration(v).ok_or_else(|| need("seconds such as jitter=60"))?),
            ("window", Some(v)) => {
                let d = duration(v).filter(|d| d.0 > 0).ok_or_else(|| need("a length such as window=30d"))?;
                Perturbation::Window(d)
            }
            ("resample", Some(_)) => return Err(format!("'{part}': resample takes no value")),
            ("noise" | "jitter" | "window", None) => return Err(need("e.g. noise=0.3, jitter=60, window=30d")),
            _ => {
                return Err(format!(
                    "'{part}': unknown perturbation (expected resample, noise=SIGMA, jitter=SECONDS, window=LENGTH)"
                ));
            }
        };
        if out.iter().any(|q| std::mem::discriminant(q) == std::mem::discriminant(&p)) {
            return Err(format!("'{part}': {key} is given twice"));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err("expected resample, noise=SIGMA, jitter=SECONDS or window=LENGTH".into());
    }
    Ok(out)
}

/// A length: seconds, or with a unit `d`, `h`, `m` or `s` (`30d`, `1.5h`).
pub fn duration(v: &str) -> Option<SimDuration> {
    let (num, unit) = match v.chars().last()? {
        'd' => (&v[..v.len() - 1], 86_400.0),
        'h' => (&v[..v.len() - 1], 3_600.0),
        'm' => (&v[..v.len() - 1], 60.0),
        's' => (&v[..v.len() - 1], 1.0),
        _ => (v, 1.0),
    };
    let x: f64 = num.trim().parse().ok()?;
    (x.is_finite() && x >= 0.0).then(|| SimDuration((x * unit * 1e6).round() as u64))
}

/// The canonical text of `ps` (in the order they apply), for outputs.
pub fn spec_text(ps: &[Perturbation]) -> String {
    let mut v: Vec<(u8, String)> = ps
        .iter()
        .map(|p| match p {
            Perturbation::Window(d) => (0, format!("window={}", sim_core::time::secs_string(d.0))),
            Perturbation::Resample => (1, "resample".to_string()),
            Perturbation::Noise(s) => (2, format!("noise={s}")),
            Perturbation::Jitter(d) => (3, format!("jitter={}", sim_core::time::secs_string(d.0))),
        })
        .collect();
    v.sort_by_key(|e| e.0);
    v.into_iter().map(|e| e.1).collect::<Vec<_>>().join(",")
}

/// The workload `jobs` varied by `ps` for `seed` (see the module docs); the same inputs
/// give the same jobs.
pub fn apply(jobs: Vec<Job>, ps: &[Perturbation], seed: u64) -> Vec<Job> {
    if ps.is_empty() {
        return jobs;
    }
    let streams = RngStreams::new(seed);
    let has = |f: &dyn Fn(&Perturbation) -> bool| ps.iter().find(|p| f(p)).cloned();
    let mut jobs = jobs;
    if let Some(Perturbation::Window(len)) = has(&|p| matches!(p, Perturbation::Window(_))) {
        jobs = window(jobs, len, &mut streams.stream("perturb-window"));
    }
    if has(&|p| matches!(p, Perturbation::Resample)).is_some() {
        jobs = resample(&jobs, &mut streams.stream("perturb-resample"));
    }
    if let Some(Perturbation::Noise(sigma)) = has(&|p| matches!(p, Perturbation::Noise(_))) {
        noise(&mut jobs, sigma, &mut streams.stream("perturb-noise"));
    }
    if let Some(Perturbation::Jitter(d)) = has(&|p| matches!(p, Perturbation::Jitter(_))) {
        jitter(&mut jobs, d, &mut streams.stream("perturb-jitter"));
    }
    for j in &mut jobs {
        j.observed_start = None;
    }
    // Back in submit order (stable: equal times keep their order).
    jobs.sort_by_key(|j| j.submit);
    jobs
}

/// The jobs submitted in `[start, start + len)`, `start` a whole day after the first
/// submission drawn uniformly among those that leave a full window (the whole trace when
/// it is shorter than `len`).
fn window(jobs: Vec<Job>, len: SimDuration, rng: &mut SimRng) -> Vec<Job> {
    let (Some(first), Some(last)) = (jobs.iter().map(|j| j.submit).min(), jobs.iter().map(|j| j.submit).max()) else {
        return jobs;
    };
    let span = last - first;
    if span.0 <= len.0 {
        return jobs;
    }
    let days = (span.0 - len.0) / DAY.0;
    let start = first + SimDuration(pick(rng, days + 1) * DAY.0);
    let end = start + len;
    jobs.into_iter().filter(|j| j.submit >= start && j.submit < end).collect()
}

/// A uniform index below `n` (`n` > 0).
fn pick(rng: &mut SimRng, n: u64) -> u64 {
    ((uniform_f64(rng) * n as f64) as u64).min(n - 1)
}

/// User-based resampling (see the module docs).
fn resample(jobs: &[Job], rng: &mut SimRng) -> Vec<Job> {
    let Some(t0) = jobs.iter().map(|j| j.submit).min() else { return Vec::new() };
    let week_of = |t: SimTime| (t - t0).0 / WEEK.0;
    let weeks = jobs.iter().map(|j| week_of(j.submit)).max().unwrap_or(0) + 1;
    // Each user's jobs (indices, in submit order) and weeks of activity.
    let mut users: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, j) in jobs.iter().enumerate() {
        users.entry(j.user).or_default().push(i);
    }
    let span = |idx: &[usize]| {
        let first = week_of(jobs[idx[0]].submit);
        let last = idx.iter().map(|&i| week_of(jobs[i].submit)).max().unwrap_or(first);
        (first, last)
    };
    let mut long_term: Vec<&Vec<usize>> = Vec::new();
    let mut temporary: Vec<(u64, &Vec<usize>)> = Vec::new();
    for idx in users.values() {
        let (first, last) = span(idx);
        if (last - first + 1) * 2 > weeks {
            long_term.push(idx);
        } else {
            temporary.push((first, idx));
        }
    }
    let mut out: Vec<Job> = long_term.iter().flat_map(|idx| idx.iter().map(|&i| jobs[i].clone())).collect();
    if temporary.is_empty() {
        return out;
    }
    let next_user = jobs.iter().map(|j| j.user).max().unwrap_or(0) + 1;
    let end = t0 + SimDuration(weeks * WEEK.0);
    // The trace's temporary users by their first week; each starts a slot in the new one.
    let mut starts: Vec<u64> = temporary.iter().map(|t| t.0).collect();
    starts.sort_unstable();
    for (slot, &week) in starts.iter().enumerate() {
        let (first, idx) = temporary[pick(rng, temporary.len() as u64) as usize];
        let user = next_user + slot as u32;
        for &i in idx {
            let mut j = jobs[i].clone();
            // Whole weeks: the job keeps its time of day and day of week.
            j.submit = SimTime(j.submit.0 - first * WEEK.0 + week * WEEK.0);
            if j.submit >= end {
                continue;
            }
            j.trace_id = format!("{}~{slot}", j.trace_id);
            j.user = user;
            out.push(j);
        }
    }
    out
}

/// Run times times `exp(sigma × Z)`, capped at the requested time.
fn noise(jobs: &mut [Job], sigma: f64, rng: &mut SimRng) {
    use rand_distr::Distribution;
    let dist = rand_distr::LogNormal::new(0.0, sigma).expect("sigma checked positive and finite");
    for j in jobs {
        let factor: f64 = dist.sample(rng);
        if let Some(r) = j.runtime {
            let mut us = ((r.0 as f64 * factor).round() as u64).max(1);
            if let Some(req) = j.requested {
                us = us.min(req.0.max(1));
            }
            j.runtime = Some(SimDuration(us));
        }
    }
}

/// Submit times moved by a uniform amount in `[−d, +d]`, to the microsecond, not before 0.
fn jitter(jobs: &mut [Job], d: SimDuration, rng: &mut SimRng) {
    for j in jobs {
        let shift = ((uniform_f64(rng) * 2.0 - 1.0) * d.0 as f64).round() as i64;
        j.submit = SimTime(j.submit.0.saturating_add_signed(shift));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str, user: u32, submit_s: u64, run_s: u64) -> Job {
        let mut j = Job::rigid(
            id,
            SimTime::from_secs(submit_s),
            1,
            SimDuration::from_secs(run_s),
            SimDuration::from_secs(2 * run_s),
        );
        j.user = user;
        j.observed_start = Some(SimTime::from_secs(submit_s));
        j
    }

    #[test]
    fn specs_parse_and_are_written_back_in_order() {
        let ps = parse("jitter=60, resample,window=30d,noise=0.25").unwrap();
        assert_eq!(spec_text(&ps), "window=2592000,resample,noise=0.25,jitter=60");
        assert_eq!(parse("window=2h").unwrap(), vec![Perturbation::Window(SimDuration::from_secs(7200))]);
        for bad in ["", "noise", "noise=0", "noise=x", "resample=1", "shuffle", "jitter=60,jitter=30", "window=0"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resampling_keeps_long_term_users_and_time_of_week() {
        let w = WEEK.0 / 1_000_000;
        // User 1 is active in all 4 weeks (long-term); users 2 and 3 for a week each.
        let mut jobs = Vec::new();
        for k in 0..4 {
            jobs.push(job(&format!("a{k}"), 1, k * w + 100, 10));
        }
        jobs.push(job("b0", 2, 3600, 10));
        jobs.push(job("b1", 2, 7200, 10));
        jobs.push(job("c0", 3, 2 * w + 50, 10));
        let out = apply(jobs.clone(), &[Perturbation::Resample], 7);
        // The long-term user's 4 jobs, as they were (but their observed starts).
        let a: Vec<&Job> = out.iter().filter(|j| j.user == 1).collect();
        assert_eq!(a.len(), 4);
        assert!(a.iter().all(|j| j.observed_start.is_none()));
        // Two temporary slots, starting in weeks 0 and 2, each a copy of user 2 or 3
        // shifted by whole weeks under a new user id.
        let others: Vec<&Job> = out.iter().filter(|j| j.user != 1).collect();
        assert!(others.iter().all(|j| j.user >= 4));
        assert!(others.iter().all(|j| (j.submit.0 % WEEK.0) == 3_600_000_000
            || j.submit.0 % WEEK.0 == 7_200_000_000
            || j.submit.0 % WEEK.0 == 50_000_000));
        assert!(others.iter().all(|j| j.trace_id.contains('~')));
        // Deterministic per seed; another seed may draw other users.
        assert_eq!(apply(jobs.clone(), &[Perturbation::Resample], 7).len(), out.len());
        let ids = |o: &[Job]| o.iter().map(|j| j.trace_id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&apply(jobs.clone(), &[Perturbation::Resample], 7)), ids(&out));
        assert!((0..20).any(|s| ids(&apply(jobs.clone(), &[Perturbation::Resample], s)) != ids(&out)));
    }

    #[test]
    fn noise_jitter_and_windows() {
        let jobs: Vec<Job> = (0..200).map(|k| job(&format!("j{k}"), 1, k * 3600, 100)).collect();
        let noisy = apply(jobs.clone(), &[Perturbation::Noise(0.5)], 1);
        // Never above the requested 200 s; varied.
        assert!(noisy.iter().all(|j| j.runtime.unwrap().0 <= 200_000_000));
        assert!(noisy.iter().any(|j| j.runtime.unwrap().0 < 100_000_000));
        let shaken = apply(jobs.clone(), &[Perturbation::Jitter(SimDuration::from_secs(60))], 1);
        assert!(shaken.windows(2).all(|p| p[0].submit <= p[1].submit));
        assert!(shaken.iter().zip(&jobs).any(|(a, b)| a.submit != b.submit));
        // 200 hours of jobs; a 2-day window starts on a whole day: 48 jobs.
        let w = apply(jobs.clone(), &[Perturbation::Window(SimDuration::from_secs(2 * 86_400))], 3);
        assert_eq!(w.len(), 48);
        assert_eq!(w[0].submit.0 % DAY.0, 0);
    }
}
