//! `sjf-aging`: tiny scenarios with start times computed by hand, and invariants on
//! random workloads.

use crate::{job, starts};
use proptest::prelude::*;
use sim_core::{Cluster, Job, Outcome, SimConfig, SimDuration, SimTime};

/// R holds the whole 10-processor machine until 1000. L (asks 100 s) waits from 100, S
/// (asks 10 s) from 400. At 1000 L has waited 900 s and S 600 s:
/// priority(L) = 100 − 900 a, priority(S) = 10 − 600 a, equal at a = 0.3.
fn long_then_short() -> Vec<Job> {
    vec![job("R", 0, 10, 1000, 1000), job("L", 100, 10, 100, 100), job("S", 400, 10, 10, 10)]
}

#[test]
fn without_aging_a_later_short_job_passes_a_long_one() {
    // aging=0 is plain SJF: S (10) before L (100); S runs [1000, 1010), L from 1010.
    assert_eq!(starts("sjf-aging[aging=0]", 10, &long_then_short()), [Some(0), Some(1010), Some(1000)]);
    // FCFS for contrast.
    assert_eq!(starts("fcfs", 10, &long_then_short()), [Some(0), Some(1000), Some(1100)]);
}

#[test]
fn just_below_the_break_even_aging_the_short_job_still_wins() {
    // a = 0.299: L = 100 − 269.1 = −169.1, S = 10 − 179.4 = −169.4 s: S is lower.
    assert_eq!(starts("sjf-aging[aging=0.299]", 10, &long_then_short()), [Some(0), Some(1010), Some(1000)]);
}

#[test]
fn at_the_break_even_aging_the_tie_keeps_queue_order() {
    // a = 0.3: both −170 s exactly (integer arithmetic, no float rounding); L is ahead
    // in the queue, so it goes first: L [1000, 1100), S at 1100.
    assert_eq!(starts("sjf-aging[aging=0.3]", 10, &long_then_short()), [Some(0), Some(1000), Some(1100)]);
}

#[test]
fn with_enough_aging_the_long_job_goes_first() {
    // Default a = 1: L = 100 − 900 = −800, S = 10 − 600 = −590: L first, S after it.
    let want = [Some(0), Some(1000), Some(1100)];
    assert_eq!(starts("sjf-aging", 10, &long_then_short()), want);
    assert_eq!(starts("sjf-aging[aging=1]", 10, &long_then_short()), want);
    assert_eq!(starts("sjf-aging[aging=0.5,pass=per-event]", 10, &long_then_short()), want);
}

#[test]
fn estimate_actual_orders_by_true_run_time() {
    // L asks 100 s but runs 5 s; S asks and runs 10 s. With a = 0 requested times put S
    // first (S [1000, 1010), L at 1010); the oracle puts L first (L [1000, 1005), S at 1005).
    let jobs = vec![job("R", 0, 10, 1000, 1000), job("L", 100, 10, 5, 100), job("S", 400, 10, 10, 10)];
    assert_eq!(starts("sjf-aging[aging=0]", 10, &jobs), [Some(0), Some(1010), Some(1000)]);
    assert_eq!(starts("sjf-aging[aging=0,estimate=actual]", 10, &jobs), [Some(0), Some(1000), Some(1005)]);
}

/// R takes 6 of 10 processors until 100. B (8 procs, 20 s) is the shorter job but does
/// not fit before 100; C (4 procs, 200 s) fits now.
fn wide_short_narrow_long() -> Vec<Job> {
    vec![job("R", 0, 6, 100, 100), job("B", 1, 8, 20, 20), job("C", 2, 4, 200, 200)]
}

#[test]
fn strict_stops_at_the_first_job_that_does_not_fit() {
    // B (priority ~20) is first and does not fit: C waits. At 100 B starts [100, 120);
    // C (4) does not fit in the 2 left and starts at 120.
    for spec in ["sjf-aging[aging=0]", "sjf-aging[aging=0,blocking=strict]", "sjf-aging"] {
        assert_eq!(starts(spec, 10, &wide_short_narrow_long()), [Some(0), Some(100), Some(120)], "{spec}");
    }
}

#[test]
fn skip_starts_later_jobs_that_fit_and_delays_the_wide_one() {
    // At 2 B does not fit and is skipped; C fits the 4 free processors: [2, 202). At 100
    // only 6 are free: B waits for C, until 202.
    for spec in ["sjf-aging[aging=0,blocking=skip]", "sjf-aging[blocking=skip]"] {
        assert_eq!(starts(spec, 10, &wide_short_narrow_long()), [Some(0), Some(202), Some(2)], "{spec}");
    }
}

/// On 4 processors, 2-processor 10 s jobs s0..s9 arrive every 5 s (s_i runs from 5i when
/// nothing blocks it, so two always overlap); W needs all 4 and arrives at 1.
fn stream_and_wide() -> Vec<Job> {
    let mut jobs = vec![job("s0", 0, 2, 10, 10), job("W", 1, 4, 10, 10)];
    jobs.extend((1..10).map(|i| job(&format!("s{i}"), 5 * i, 2, 10, 10)));
    jobs
}

#[test]
fn skip_starves_a_wide_job_while_narrow_ones_keep_coming() {
    // Every s_i starts on arrival at 5i into the 2 processors s_(i-2) just freed; W only
    // gets all 4 once s9 ends, at 55.
    let mut want = vec![Some(0), Some(55)];
    want.extend((1..10).map(|i| Some(5 * i)));
    assert_eq!(starts("sjf-aging[blocking=skip]", 4, &stream_and_wide()), want);
}

#[test]
fn strict_with_aging_starts_the_wide_job_first() {
    // All ask 10 s, so W, submitted first after s0, has the lowest priority from then
    // on: it waits for s0 alone and runs [10, 20); the stream then goes two at a time.
    let want = [0, 10, 20, 20, 30, 30, 40, 40, 50, 50, 60].map(Some);
    assert_eq!(starts("sjf-aging", 4, &stream_and_wide()), want);
    assert_eq!(starts("sjf-aging[pass=per-event]", 4, &stream_and_wide()), want);
}

/// Random jobs (some rejected: no processors, too wide, no run time).
fn workload() -> impl Strategy<Value = (u32, Vec<Job>)> {
    (2u32..12).prop_flat_map(|procs| {
        let job = (0u64..60, 0u32..=procs + 1, 0u64..40, 1u64..40);
        (Just(procs), prop::collection::vec(job, 1..30)).prop_map(move |(procs, raw)| {
            let mut jobs: Vec<Job> = raw
                .into_iter()
                .map(|(submit, p, run, req)| {
                    let t = |s| SimDuration::from_secs(s);
                    Job::rigid("", SimTime::from_secs(submit), p, t(run), t(req.max(run)))
                })
                .collect();
            jobs.sort_by_key(|j| j.submit);
            for (i, j) in jobs.iter_mut().enumerate() {
                j.trace_id = i.to_string();
            }
            (procs, jobs)
        })
    })
}

const SPECS: &[&str] = &[
    "sjf-aging",
    "sjf-aging[aging=0]",
    "sjf-aging[aging=0.5]",
    "sjf-aging[aging=3,estimate=actual]",
    "sjf-aging[pass=per-event,aging=0.25]",
    "sjf-aging[blocking=skip]",
    "sjf-aging[blocking=skip,aging=0,pass=per-event]",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every job that fits the machine completes, never before its submission, and the
    /// machine is never over-committed.
    #[test]
    fn every_job_completes((procs, jobs) in workload()) {
        for spec in SPECS {
            let mut p = policies::build(spec).unwrap();
            let r = sim_core::simulate(&Cluster::processor_pool(procs), &jobs, p.as_mut(), &SimConfig::default(), None)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut events: Vec<(u64, i64)> = Vec::new();
            for (j, rec) in jobs.iter().zip(&r.records) {
                let valid = (1..=procs).contains(&j.tasks) && j.runtime.is_some_and(|d| d.0 > 0);
                if !valid {
                    prop_assert!(matches!(rec.outcome, Outcome::Rejected(_)), "{spec}: {:?}", rec.outcome);
                    continue;
                }
                prop_assert_eq!(rec.outcome, Outcome::Completed, "{}", spec);
                let (s, e) = (rec.start.unwrap(), rec.end.unwrap());
                prop_assert!(s >= j.submit);
                prop_assert_eq!(e.0 - s.0, j.runtime.unwrap().0);
                events.push((s.0, j.units() as i64));
                events.push((e.0, -(j.units() as i64)));
            }
            events.sort(); // ends (negative) before starts at equal times
            let mut used = 0i64;
            for (_, d) in events {
                used += d;
                prop_assert!(used <= i64::from(procs), "{}: over-committed", spec);
            }
        }
    }

    /// Strict blocking never lets a job start while a waiting job with a lower key
    /// `estimate + aging × submit` (the priority's time-invariant part) is still waiting:
    /// the bounded-overtaking property that rules out starvation.
    #[test]
    fn strict_starts_in_priority_order((procs, jobs) in workload(), aging in 0u64..3000) {
        for pass in ["per-time", "per-event"] {
            let spec = format!("sjf-aging[aging={}.{:03},pass={pass}]", aging / 1000, aging % 1000);
            let mut p = policies::build(&spec).unwrap();
            let r = sim_core::simulate(&Cluster::processor_pool(procs), &jobs, p.as_mut(), &SimConfig::default(), None)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let key = |j: &Job| i128::from(j.requested.unwrap().0) * 1000 + i128::from(aging) * i128::from(j.submit.0);
            let started: Vec<(usize, SimTime)> =
                r.records.iter().enumerate().filter_map(|(i, rec)| rec.start.map(|s| (i, s))).collect();
            for &(k, sk) in &started {
                for &(j, sj) in &started {
                    // j was waiting when k started (submitted strictly before, so even a
                    // per-event pass had queued it) and started later.
                    if jobs[j].submit < sk && sj > sk {
                        let (kk, kj) = (key(&jobs[k]), key(&jobs[j]));
                        prop_assert!(
                            kk < kj || (kk == kj && k < j),
                            "{}: {} (key {}) started at {} before waiting {} (key {})",
                            spec, k, kk, sk.0, j, kj
                        );
                    }
                }
            }
        }
    }
}

/// Start times (s) of `jobs` on `procs` processors under `spec`'s order over a placement
/// (`sim run --policy SPEC --placement bestfit`): kube binding each task to a node.
fn starts_over_placement(spec: &str, procs: u32, jobs: &[Job]) -> Vec<Option<u64>> {
    let mut p = policies::compose(spec, Some("bestfit"), None, None, 0).unwrap();
    let r = sim_core::simulate(&Cluster::processor_pool(procs), jobs, p.as_mut(), &SimConfig::default(), None).unwrap();
    r.records.iter().map(|x| x.start.map(|s| s.0 / 1_000_000)).collect()
}

#[test]
fn over_a_placement_the_order_and_blocking_are_the_same() {
    // The hand-computed cases above, with each task bound to a node by kube.
    for (spec, want) in [
        ("sjf-aging[aging=0]", [Some(0), Some(1010), Some(1000)]),
        ("sjf-aging[aging=0.299]", [Some(0), Some(1010), Some(1000)]),
        ("sjf-aging[aging=0.3]", [Some(0), Some(1000), Some(1100)]),
        ("sjf-aging", [Some(0), Some(1000), Some(1100)]),
    ] {
        assert_eq!(starts_over_placement(spec, 10, &long_then_short()), want, "{spec}");
    }
    // blocking=strict is kube's queue=fcfs: C waits behind B; skip is queue=skip.
    assert_eq!(
        starts_over_placement("sjf-aging[aging=0]", 10, &wide_short_narrow_long()),
        [Some(0), Some(100), Some(120)]
    );
    let skip = starts_over_placement("sjf-aging[aging=0,blocking=skip]", 10, &wide_short_narrow_long());
    assert_eq!(skip, [Some(0), Some(202), Some(2)]);
    let want = [0, 10, 20, 20, 30, 30, 40, 40, 50, 50, 60].map(Some);
    assert_eq!(starts_over_placement("sjf-aging", 4, &stream_and_wide()), want);
}

#[test]
fn over_a_placement_its_spec_names_the_order() {
    let p = policies::compose("sjf-aging[aging=1.5,blocking=skip]", Some("fgd"), Some("none"), None, 0).unwrap();
    assert_eq!(p.spec(), "skip+order[sjf-aging,aging=1.5]+placement[fgd]+gang[none]+topology[none]");
    // The same order in a kube spec, with EASY reservations.
    let p = policies::compose("kube[order=sjf-aging,aging=2,queue=easy]", Some("bestfit"), None, None, 0).unwrap();
    assert_eq!(p.spec(), "easy+order[sjf-aging,aging=2]+placement[bestfit]+gang[atomic]+topology[none]");
    // What has no form over a placement is refused, saying why.
    for bad in ["sjf-aging[pass=per-event]", "sjf-aging[estimate=actual]", "kube[order=fifo,aging=1]"] {
        let e = policies::compose(bad, Some("bestfit"), None, None, 0).err().expect(bad).to_string();
        assert!(e.contains("do not apply") || e.contains("only with order=sjf-aging"), "{bad}: {e}");
    }
}
