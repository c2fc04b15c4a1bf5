//! Invariants on random workloads.

use crate::Reservations;
use proptest::prelude::*;
use sim_core::{Cluster, Job, SimConfig, SimDuration, SimTime};

const SPECS: &[&str] = &[
    "fcfs",
    "fcfs[pass=per-event]",
    "easy",
    "easy[pass=per-event]",
    "easy[backfill_estimate=actual]",
    "easy[reservation=nodes]",
    "easy[reservation=nodes,pass=per-event,backfill_estimate=actual]",
    "conservative",
    "conservative[pass=per-event]",
    "conservative[replan=rebuild]",
    "conservative[reservation=nodes]",
    "conservative[backfill_estimate=actual]",
    "conservative[reservation=nodes,replan=rebuild,pass=per-event]",
];

/// Random jobs on a machine of `procs`; `overrun` allows run > requested.
fn workload(overrun: bool) -> impl Strategy<Value = (u32, Vec<Job>)> {
    (2u32..12).prop_flat_map(move |procs| {
        let job = (0u64..60, 0u32..=procs + 1, 0u64..40, 1u64..40);
        (Just(procs), prop::collection::vec(job, 1..25)).prop_map(move |(procs, raw)| {
            let mut jobs: Vec<Job> = raw
                .into_iter()
                .enumerate()
                .map(|(i, (submit, p, run, req))| {
                    let req = if overrun { req } else { req.max(run) };
                    Job::rigid(
                        i.to_string(),
                        SimTime::from_secs(submit),
                        p,
                        SimDuration::from_secs(run),
                        SimDuration::from_secs(req),
                    )
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

fn check_run(spec: &str, procs: u32, jobs: &[Job], kill: bool) -> Result<(), TestCaseError> {
    let mut p = policies::build(spec).unwrap();
    let cfg = SimConfig { walltime_kill: kill, ..SimConfig::default() };
    let r = sim_core::simulate(&Cluster::processor_pool(procs), jobs, p.as_mut(), &cfg, None)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(r.records.len(), jobs.len());
    // One outcome each; started jobs ran exactly their (possibly cut) length.
    let mut events: Vec<(u64, i64)> = Vec::new();
    for (j, rec) in jobs.iter().zip(&r.records) {
        if rec.outcome.ran() {
            let (s, e) = (rec.start.unwrap(), rec.end.unwrap());
            prop_assert!(s >= j.submit);
            let run = j.runtime.unwrap();
            let want = if kill { run.min(j.requested.unwrap()) } else { run };
            prop_assert_eq!(e - s, want);
            prop_assert_eq!(rec.units.len(), j.units());
            events.push((e.0, -(j.units() as i64)));
            events.push((s.0, j.units() as i64));
        } else {
            // With no horizon every job that can run does.
            prop_assert!(
                matches!(rec.outcome, sim_core::Outcome::Rejected(_)),
                "{} kill={}: job {} {:?} in {:?}",
                spec,
                kill,
                j.trace_id,
                rec.outcome,
                brief(jobs)
            );
            prop_assert!(rec.start.is_none());
        }
    }
    // No over-allocation: sweep, ends before starts at equal times.
    events.sort();
    let mut used = 0i64;
    for (_, d) in events {
        used += d;
        prop_assert!(used <= procs as i64, "{} units in use on {}", used, procs);
    }
    // No unit held by two jobs at once.
    for (a, ra) in r.records.iter().enumerate() {
        for rb in &r.records[a + 1..] {
            if let (Some(s1), Some(e1), Some(s2), Some(e2)) = (ra.start, ra.end, rb.start, rb.end)
                && s1 < e2
                && s2 < e1
            {
                prop_assert!(ra.units.iter().all(|u| !rb.units.contains(u)));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_over_allocation_and_one_outcome_per_job((procs, jobs) in workload(true), kill in any::<bool>()) {
        for spec in SPECS {
            check_run(spec, procs, &jobs, kill)?;
        }
    }

    #[test]
    fn easy_never_delays_the_heads_reservation((procs, jobs) in workload(false)) {
        // Not with backfill_estimate=actual: the shadow comes from running jobs' requested
        // ends, and a candidate passed on its true length can make a later pass's shadow
        // later than the one it was given.
        for spec in ["easy", "easy[pass=per-event]", "easy[reservation=nodes]", "easy[reservation=nodes,pass=per-event]"] {
            reservations_hold(spec, procs, &jobs)?;
        }
    }

    #[test]
    fn conservative_never_delays_any_reservation((procs, jobs) in workload(false)) {
        // Not with replan=rebuild: rebuilding in queue order lets an earlier job take a
        // later job's slot, as in Slurm's backfill cycle; only the revisit rule promises it.
        for spec in ["conservative", "conservative[pass=per-event]", "conservative[reservation=nodes]", "conservative[backfill_estimate=actual]", "conservative[reservation=nodes,pass=per-event]"] {
            reservations_hold(spec, procs, &jobs)?;
        }
    }

    #[test]
    fn runs_are_deterministic((procs, jobs) in workload(true)) {
        for spec in SPECS {
            let a = crate::run(spec, procs, &jobs, false);
            let b = crate::run(spec, procs, &jobs, false);
            prop_assert_eq!(a, b);
        }
    }
}

/// A workload in a short form for failure messages: (submit, procs, run, requested) in s.
fn brief(jobs: &[Job]) -> Vec<(u64, u32, u64, u64)> {
    let s = |d: SimDuration| d.0 / 1_000_000;
    jobs.iter().map(|j| (j.submit.0 / 1_000_000, j.tasks, s(j.runtime.unwrap()), s(j.requested.unwrap()))).collect()
}

/// With estimates never below run times, every job starts no later than any reservation
/// it was ever given.
fn reservations_hold(spec: &str, procs: u32, jobs: &[Job]) -> Result<(), TestCaseError> {
    let mut p = policies::build(spec).unwrap();
    let mut log = Reservations::default();
    let r =
        sim_core::simulate(&Cluster::processor_pool(procs), jobs, p.as_mut(), &SimConfig::default(), Some(&mut log))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
    for (id, at) in log.0 {
        let i: usize = id.parse().unwrap();
        let start = r.records[i].start.expect("reserved jobs start").0;
        prop_assert!(
            start <= at,
            "{} on {}: job {} reserved at {} but started at {} in {:?}",
            spec,
            procs,
            id,
            at,
            start,
            brief(jobs)
        );
    }
    Ok(())
}
